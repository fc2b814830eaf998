/* rules.c - best.rules of results.json (docs/formats.md, design section 3): the per-size
 * choices nccltune's tuner plugin applies, [{"bytes", "algo", "proto", "ctas"}], null
 * meaning NCCL's choice, each with what NCCL ran there ("nccl", optional). Words are NCCL's algorithm and protocol names (common/ncclvars,
 * compared as NCCL compares them); a size appears once. Whether each size is one the
 * workload tuned is the export's judgement, not the loader's. */
#include "result/read.h"

#include <stdlib.h>
#include <string.h>

#include "ncclvars.h"
#include "proto.h"
#include "table.h"   /* plugin/: TUNER_TABLE_MAX_CTAS */

#define RULE_BYTES_MAX 9223372036854775807.0

struct rule_doc { uint64_t bytes; const char *algo, *proto; long ctas; const cJSON *nccl; };
struct ran_doc { const char *algo, *proto; long ctas; };

#define R(f) offsetof(struct rule_doc, f)
#define N(f) offsetof(struct ran_doc, f)

/* "nccl": what NCCL ran there (words NCCL's, CTAs the channels one op ran on) */
static const struct jr_field ran_fields[] = {
	{"algo", JR_STRING, JR_REQUIRED, 0, 32, NULL, JR_STR, N(algo), 0, NULL},
	{"proto", JR_STRING, JR_REQUIRED, 0, 32, NULL, JR_STR, N(proto), 0, NULL},
	{"ctas", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, PROTO_MAX_CTAS, NULL, JR_LONG, N(ctas), 0,
	 NULL},
	JR_END,
};

static const struct jr_field rule_fields[] = {
	{"bytes", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, RULE_BYTES_MAX, NULL, JR_U64, R(bytes),
	 0, NULL},
	{"algo", JR_STRING | JR_NULL, JR_REQUIRED, 0, 32, NULL, JR_STR, R(algo), 0, NULL},
	{"proto", JR_STRING | JR_NULL, JR_REQUIRED, 0, 32, NULL, JR_STR, R(proto), 0, NULL},
	{"ctas", JR_NUMBER | JR_NULL, JR_REQUIRED | JR_INTEGER, 1, TUNER_TABLE_MAX_CTAS, NULL, JR_LONG,
	 R(ctas), 0, NULL},
	{"nccl", JR_OBJECT, 0, 0, 0, NULL, JR_ITEM, R(nccl), 0, NULL},
	JR_END,
};

/* The index of word `w` of list `list`, or -1 (null); fails naming key for another word. */
static int word(struct jr *r, const char *key, const char *w, enum ncclvars_wordlist list,
                int *out)
{
	char known[128];
	int rc = 0;

	*out = -1;
	if (!w)
		return 0;
	*out = ncclvars_word_find(list, w, strlen(w));
	if (*out >= 0)
		return 0;
	if (jr_push_key(r, key) < 0)
		return -1;
	rc = jr_fail(r, "unknown %s '%s' (%s, or null for NCCL's)", ncclvars_word_what(list), w,
	             ncclvars_word_join(list, known, sizeof(known)));
	jr_pop(r);
	return rc;
}

static int take_rule(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct summary *s = ctx;
	struct summary_rule *out = &s->rules[i];
	struct rule_doc d = {0, NULL, NULL, 0, NULL};

	if (jr_dispatch(r, v, rule_fields, false, &d, NULL) < 0 ||
	    word(r, "algo", d.algo, NCCLVARS_ALGOS, &out->algo) < 0 ||
	    word(r, "proto", d.proto, NCCLVARS_PROTOS, &out->proto) < 0)
		return -1;
	out->bytes = d.bytes;
	out->ctas = (int)d.ctas;
	out->algo_word = d.algo;
	out->proto_word = d.proto;
	if (d.nccl) {
		struct ran_doc n = {NULL, NULL, 0};

		if (jr_push_key(r, "nccl") < 0 || jr_dispatch(r, d.nccl, ran_fields, false, &n, NULL) < 0 ||
		    word(r, "algo", n.algo, NCCLVARS_ALGOS, &out->ran_algo) < 0 ||
		    word(r, "proto", n.proto, NCCLVARS_PROTOS, &out->ran_proto) < 0)
			return -1;
		jr_pop(r);
		out->has_ran = true;
		out->ran_ctas = (int)n.ctas;
		out->ran_algo_word = n.algo;
		out->ran_proto_word = n.proto;
	}
	for (size_t j = 0; j < i; j++)
		if (s->rules[j].bytes == d.bytes) {
			jr_push_key(r, "bytes");
			return jr_fail(r, "a second rule for %llu bytes (rules[%zu])",
			               (unsigned long long)d.bytes, j);
		}
	s->nrules = i + 1;
	return 0;
}

int summary_read_rules(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;
	static const struct jr_field f = {"", JR_ARRAY | JR_NULL, 0, 0, PROTO_MAX_SIZES, NULL,
	                                  JR_KEEP, 0, 0, NULL};
	int rc = jr_check(r, v, &f, NULL);

	if (rc <= 0)   /* null: no rules, as when absent */
		return rc;
	s->has_rules = true;
	if (!v->child)
		return 0;
	s->rules = calloc((size_t)cJSON_GetArraySize(v), sizeof(s->rules[0]));
	if (!s->rules)
		return jr_fail(r, "out of memory");
	return jr_each(r, v, PROTO_MAX_SIZES, take_rule, s);
}
