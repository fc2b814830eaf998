/* runs.c - journal.jsonl as report and show read it (summary_read_journal): the probe
 * command and fingerprint of the header, and every run with its outcome and environment,
 * through common/jsonread. The tuner's own journal reader is tuner/session's; this one
 * only describes. */
#include "result/read.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "proto.h"
#include "run/journal.h"

struct jvisit {
	struct summary *s;
	struct jr r;
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

static int take_arg(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	char **argv = ctx;
	const char *a = cJSON_IsString(v) ? v->valuestring : NULL;

	for (const char *c = a; c && *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			a = NULL;
	if (!a)
		return jr_fail(r, "not a plain string");
	argv[i] = strdup(a);
	return argv[i] ? 0 : jr_fail(r, "out of memory");
}

/* The header's probe command, unless an earlier header gave one. */
static int take_probe(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;
	size_t n = (size_t)cJSON_GetArraySize(v);

	if (s->probe_argv || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsArray(v))
		return jr_fail(r, "expected an array, got %s", jr_type_name(v));
	if (n == 0)
		return jr_fail(r, "empty command");
	if (n > 256)
		return jr_fail(r, "more than 256 entries");
	s->probe_argv = calloc(n + 1, sizeof(s->probe_argv[0]));
	if (!s->probe_argv)
		return jr_fail(r, "out of memory");
	return jr_each(r, v, 256, take_arg, s->probe_argv);
}

/* The header's fingerprint, when results.json had none. */
static int take_header_fp(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;
	cJSON *dup;

	if (s->fp.present || cJSON_IsNull(v))
		return 0;
	dup = keep(s, v);
	if (!dup)
		return jr_fail(r, "out of memory");
	return summary_read_fingerprint(r, dup, &s->fp);
}

/* Records are open: the journal holds much a report does not need. */
static const struct jr_field header_fields[] = {
	{"probe", JR_ANY, JR_CONTROL, 0, 1e9, NULL, JR_KEEP, 0, 0, take_probe},
	{"fingerprint", JR_ANY, JR_CONTROL, 0, 1e9, NULL, JR_KEEP, 0, 0, take_header_fp},
	JR_END,
};

struct rundoc {
	double run;
	char phase[16], outcome[16];
	double objective;
	const cJSON *env, *report;
};

#define RD(f) offsetof(struct rundoc, f)

static const struct jr_field run_fields[] = {
	{"run", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 0, 1e9, NULL, JR_DOUBLE, RD(run), 0, NULL},
	{"phase", JR_STRING, JR_REQUIRED, 0, 0, NULL, JR_STRBUF, RD(phase), 16, NULL},
	{"outcome", JR_STRING, JR_REQUIRED, 0, 0, NULL, JR_STRBUF, RD(outcome), 16, NULL},
	{"objective_us", JR_NUMBER | JR_NULL, 0, 0, SUMMARY_OBJECTIVE_MAX, NULL, JR_DOUBLE, RD(objective),
	 0, NULL},
	{"env", JR_OBJECT, JR_REQUIRED, 0, SUMMARY_ENV_MAX, NULL, JR_ITEM, RD(env), 0, NULL},
	{"report", JR_ANY, JR_CONTROL, 0, 1e9, NULL, JR_ITEM, RD(report), 0, NULL},
	JR_END,
};

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

static int visit_run(struct jvisit *v, const cJSON *rec)
{
	struct summary *s = v->s;
	struct summary_run *r;
	struct rundoc d = {0, "", "", NAN, NULL, NULL};
	cJSON *env;

	if (s->nruns == v->cap) {
		size_t ncap = v->cap ? v->cap * 2 : 64;
		struct summary_run *nr = realloc(s->runs, ncap * sizeof(nr[0]));

		if (!nr)
			return jr_fail(&v->r, "out of memory");
		s->runs = nr;
		v->cap = ncap;
	}
	if (jr_dispatch(&v->r, rec, run_fields, true, &d, NULL) < 0)
		return -1;
	r = &s->runs[s->nruns];
	memset(r, 0, sizeof(*r));
	r->run = (long)d.run;
	memcpy(r->phase, d.phase, sizeof(r->phase));
	memcpy(r->outcome, d.outcome, sizeof(r->outcome));
	r->objective_us = strcmp(r->outcome, "ok") == 0 ? d.objective : NAN;
	take_decisions(r, d.report);
	s->nruns++;   /* counted before the env so that destroy frees what was parsed */
	env = keep(s, d.env);
	if (!env)
		return jr_fail(&v->r, "out of memory");
	return summary_read_under(&v->r, "env", summary_read_env_lenient, env, &r->env);
}

static const struct jr_field record_fields[] = {
	{"type", JR_STRING, JR_REQUIRED, 0, 32, NULL, JR_KEEP, 0, 0, NULL},
	JR_END,
};

static int journal_visit(void *ctx, const cJSON *rec, size_t line)
{
	struct jvisit *v = ctx;
	const char *type;
	char lp[64];
	int rc;

	snprintf(lp, sizeof(lp), "line %zu", line);
	if (jr_push_key(&v->r, lp) < 0)
		return -1;
	rc = jr_dispatch(&v->r, rec, record_fields, true, NULL, NULL);
	type = rc == 0 ? cJSON_GetObjectItemCaseSensitive(rec, "type")->valuestring : "";
	if (rc == 0 && strcmp(type, "session") == 0)
		rc = jr_dispatch(&v->r, rec, header_fields, true, v->s, NULL);
	else if (rc == 0 && strcmp(type, "run") == 0)
		rc = visit_run(v, rec);
	/* record types added later: nothing for a report here */
	jr_pop(&v->r);
	return rc;
}

int summary_read_journal(struct summary *s, const char *path, char *err, size_t errlen)
{
	struct jvisit v;
	char jerr[1024] = "";
	int rc;

	memset(&v, 0, sizeof(v));
	v.s = s;
	jr_init(&v.r, path, err, errlen);
	rc = journal_replay(path, journal_visit, &v, &s->journal_torn, NULL, 0, jerr, sizeof(jerr));
	if (rc != 0) {
		/* A visitor error already wrote err; journal_replay's own goes to jerr. */
		if (jerr[0])
			fs_errf(err, errlen, "%s", jerr);
		else if (!err || !err[0])
			fs_errf(err, errlen, "%s: unreadable journal", path);
		return -1;
	}
	s->has_journal = true;
	return 0;
}
