/* runs.c - journal.jsonl as report, show and check read it (summary_read_journal):
 * the one reader (record.c) validates each record; this is only show's policy: the
 * probe command and fingerprint of the header, every run with its outcome, its
 * environment read leniently (values are only shown) and NCCL's decisions as far as
 * they are in NCCL's own words. */
#include "result/read.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "proto.h"
#include "result/record.h"

struct jvisit {
	struct summary *s;
	size_t cap;
};

/* Keep a copy of `item` alive as long as the summary (strings of the parsed structs
 * point into it). */
static cJSON *keep(struct summary *s, const cJSON *item)
{
	cJSON *dup;

	if (!s->jdoc) {
		s->jdoc = cJSON_CreateArray();
		if (!s->jdoc)
			return NULL;
	}
	dup = cJSON_Duplicate(item, true);
	if (!dup)
		return NULL;
	if (!cJSON_AddItemToArray(s->jdoc, dup)) {
		cJSON_Delete(dup);
		return NULL;
	}
	return dup;
}

/* What NCCL ran per size in a run's report, into r->nccl: only NCCL's own words and
 * counts in range pass (anything else in a hand-edited journal is left out). */
static void take_decisions(struct summary_run *r, const cJSON *report)
{
	const cJSON *res = cJSON_IsObject(report) ? cJSON_GetObjectItemCaseSensitive(report, "results")
	                                         : NULL, *e;
	size_t used = 0;

	if (!cJSON_IsArray(res))
		return;
	for (e = res->child; e; e = e->next) {
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(e, "bytes");
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "nccl");
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(n, "algo");
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(n, "proto");
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(n, "ctas");
		int ai = cJSON_IsString(a) ? proto_nccl_algo_parse(a->valuestring) : -1;
		int pi = cJSON_IsString(p) ? proto_nccl_proto_parse(p->valuestring) : -1;
		int k;

		if (!cJSON_IsNumber(b) || b->valuedouble < 0 || b->valuedouble > 1e15 || ai < 0 ||
		    pi < 0 || !cJSON_IsNumber(c) || c->valuedouble < 1 ||
		    c->valuedouble > PROTO_MAX_CTAS)
			continue;
		k = snprintf(r->nccl + used, sizeof r->nccl - used, "%s%.0f B %s/%s %d CTA%s",
		             used ? "; " : "", b->valuedouble, proto_nccl_algo_name(ai),
		             proto_nccl_proto_name(pi), (int)c->valuedouble,
		             c->valuedouble == 1 ? "" : "s");
		if (k < 0 || (size_t)k >= sizeof r->nccl - used) {
			r->nccl[used] = '\0';   /* what fits */
			break;
		}
		used += (size_t)k;
	}
}

/* Room for one more run in s->runs; NULL when out of memory. */
static struct summary_run *realloc_runs(struct jvisit *v)
{
	struct summary *s = v->s;
	size_t ncap;
	struct summary_run *nr;

	if (s->nruns < v->cap)
		return s->runs;
	ncap = v->cap ? v->cap * 2 : 64;
	nr = realloc(s->runs, ncap * sizeof(nr[0]));
	if (!nr)
		return NULL;
	s->runs = nr;
	v->cap = ncap;
	return nr;
}

/* summary_read_fingerprint as a jsonread handler. */
static int read_fp(struct jr *r, const cJSON *v, void *dst)
{
	return summary_read_fingerprint(r, v, dst);
}

/* The header's probe command and, when results.json had none, its fingerprint. */
static int show_header(void *ctx, struct jr *r, const struct record_header *h)
{
	struct summary *s = ((struct jvisit *)ctx)->s;
	size_t n = (size_t)cJSON_GetArraySize(h->probe), i = 0;
	cJSON *dup;

	s->probe_argv = calloc(n + 1, sizeof(s->probe_argv[0]));
	if (!s->probe_argv)
		return jr_fail(r, "out of memory");
	for (const cJSON *a = h->probe->child; a; a = a->next) {
		s->probe_argv[i] = strdup(a->valuestring);
		if (!s->probe_argv[i++])
			return jr_fail(r, "out of memory");
	}
	if (s->fp.present || !h->fingerprint)
		return 0;
	dup = keep(s, h->fingerprint);
	if (!dup)
		return jr_fail(r, "out of memory");
	return summary_read_under(r, "fingerprint", read_fp, dup, &s->fp);
}

static int show_run(void *ctx, struct jr *jr, const struct record_run *rec)
{
	struct jvisit *v = ctx;
	struct summary *s = v->s;
	struct summary_run *r = realloc_runs(v);
	cJSON *env;

	if (!r)
		return jr_fail(jr, "out of memory");
	r = &s->runs[s->nruns];
	memset(r, 0, sizeof(*r));
	r->run = rec->run;
	snprintf(r->phase, sizeof(r->phase), "%s", record_phase_name((int)rec->phase));
	snprintf(r->outcome, sizeof(r->outcome), "%s", outcome_class_name(rec->cls));
	r->objective_us = rec->cls == OUTCOME_OK ? rec->objective_us : NAN;
	take_decisions(r, rec->report);
	s->nruns++;   /* counted before the env so that destroy frees what was parsed */
	env = keep(s, rec->env);
	if (!env)
		return jr_fail(jr, "out of memory");
	return summary_read_under(jr, "env", summary_read_env_lenient, env, &r->env);
}

int summary_read_journal(struct summary *s, const char *path, char *err, size_t errlen)
{
	static const struct record_visitor show = {show_header, show_run, NULL};
	struct jvisit v;

	memset(&v, 0, sizeof(v));
	v.s = s;
	if (record_journal_read(path, &show, &v, &s->journal_torn, NULL, 0, err, errlen) != 0)
		return -1;
	s->has_journal = true;
	return 0;
}
