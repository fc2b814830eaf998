/* export_table.c - the per-size exports for NCCL tuner plugins: nccltune's own table
 * (nccl-tuner, docs/formats.md "Tuner table, nccltune-tuner/1"), written with the plugin's
 * own formatter (plugin/table.h), and rows for NVIDIA's example plugin (nccl-tuner-csv).
 *
 * A result with per-size rules (best.rules) gives one table rule per rule: exactly its
 * size, the rank count the session's runs measured on (any when its journal does not
 * say), any node count. For a result tuned through the
 * environment (no rules), the table is derived like the CSV: one rule per tuned size
 * from a one-word NCCL_ALGO and NCCL_PROTO (unset: '*') and NCCL_MAX_NCHANNELS as the CTAs;
 * the session measured those variables, not the table, and the comments say so. */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "ncclvars.h"
#include "nccltune.h"
#include "result/record.h"
#include "table.h"
#include "workflows/export.h"

/* The tuned sizes of the workload, distinct and sorted, at most max. */
static size_t tuned_sizes(const struct summary *s, uint64_t *sizes, size_t max);

/* The ranks the session measured on: the first ok run of NCCL's defaults (no point, no
 * try), which every later run had to match (tuner/session/execute.c, expected_ranks). */
static int ranks_visit(void *ctx, struct jr *r, const struct record_run *run)
{
	int *nranks = ctx;
	const cJSON *n;

	(void)r;
	if (*nranks > 0 || run->has_point || run->try_no || run->cls != OUTCOME_OK || !run->report)
		return 0;
	n = cJSON_GetObjectItemCaseSensitive(run->report, "nranks");
	if (cJSON_IsNumber(n) && n->valuedouble >= 1 && n->valuedouble <= INT_MAX &&
	    n->valuedouble == (double)(int)n->valuedouble)
		*nranks = (int)n->valuedouble;
	return 0;
}

/* The rank count a rule names: the ranks the session's runs measured on (its journal's
 * reports), else any ('*'). Never the fingerprint's GPU count: a session with --gpus 4
 * on an 8-GPU machine, or across nodes, measured another communicator. A journal that
 * is damaged after that run still names it; one that cannot be read names none. */
static int rule_nranks(const struct summary *s)
{
	const struct record_visitor v = { NULL, ranks_visit, NULL };
	char path[sizeof s->dir + 16], err[512];
	int nranks = 0;

	if (!s->dir[0])
		return TUNER_ANY;
	snprintf(path, sizeof path, "%s/journal.jsonl", s->dir);
	(void)record_journal_read(path, &v, &nranks, NULL, NULL, 0, err, sizeof err);
	return nranks > 0 ? nranks : TUNER_ANY;
}

/* best.rules as table rules into t (malloc'd), each for a tuned size. */
static int rules_from_result(const struct summary *s, int nranks, struct tuner_table *t,
                             char *err, size_t errlen)
{
	uint64_t sizes[64];
	size_t nsizes = tuned_sizes(s, sizes, sizeof(sizes) / sizeof(sizes[0]));
	char why[256];

	t->rules = calloc(s->nrules, sizeof(t->rules[0]));
	if (!t->rules && s->nrules)
		return fs_errf(err, errlen, "out of memory");
	for (size_t i = 0; i < s->nrules; i++) {
		const struct summary_rule *r = &s->rules[i];
		struct tuner_rule *o = &t->rules[i];
		bool tuned = false;

		for (size_t k = 0; k < nsizes; k++)
			tuned |= sizes[k] == r->bytes;
		if (!tuned)
			return fs_errf(err, errlen, "%s: best.rules[%zu].bytes: %llu is not a size of the "
			               "workload: rules cover exactly the tuned sizes", s->origin, i,
			               (unsigned long long)r->bytes);
		o->coll = TUNER_COLL_ALLREDUCE;
		o->nranks = nranks;
		o->nnodes = TUNER_ANY;
		o->min_bytes = o->max_bytes = r->bytes;
		o->algo = r->algo < 0 ? TUNER_ANY : r->algo;      /* the same numbering: NCCL's */
		o->proto = r->proto < 0 ? TUNER_ANY : r->proto;
		o->ctas = r->ctas;
		o->chunk = 0;
		t->nrules = i + 1;
		if (tuner_rule_check(o, why, sizeof(why)) != 0)
			return fs_errf(err, errlen, "%s: best.rules[%zu]: %s", s->origin, i, why);
	}
	return 0;
}

/* The index of a one-word value of list w, TUNER_ANY for unset, or -2 for a list. */
static int one_word(const char *value, enum ncclvars_wordlist w)
{
	if (!value)
		return TUNER_ANY;
	return ncclvars_word_find(w, value, strlen(value)) < 0
	       ? -2 : ncclvars_word_find(w, value, strlen(value));
}

/* Rules derived from best.env for every tuned size; none (with *why set) when the
 * algorithm or protocol is a list, or nothing would be ruled. */
static int rules_from_env(const struct summary *s, int nranks, struct tuner_table *t,
                          const char **why, char *err, size_t errlen)
{
	const char *chan = summary_env_get(&s->best.env, "NCCL_MAX_NCHANNELS");
	int algo = one_word(summary_env_get(&s->best.env, "NCCL_ALGO"), NCCLVARS_ALGOS);
	int proto = one_word(summary_env_get(&s->best.env, "NCCL_PROTO"), NCCLVARS_PROTOS);
	uint64_t sizes[64];
	size_t nsizes = tuned_sizes(s, sizes, sizeof(sizes) / sizeof(sizes[0]));
	long long ctas = 0;

	*why = NULL;
	if (algo == -2 || proto == -2) {
		*why = "No rules: NCCL_ALGO or NCCL_PROTO is a list, and a rule names one algorithm "
		       "and one protocol (or '*').";
		return 0;
	}
	if (chan && (!ncclvars_parse_decimal(chan, &ctas) || ctas < 1 || ctas > 64))
		ctas = 0;
	if (algo == TUNER_ANY && proto == TUNER_ANY && ctas == 0) {
		*why = "No rules: the tuned environment sets no algorithm, protocol or channel count.";
		return 0;
	}
	t->rules = calloc(nsizes ? nsizes : 1, sizeof(t->rules[0]));
	if (!t->rules)
		return fs_errf(err, errlen, "out of memory");
	for (size_t i = 0; i < nsizes; i++) {
		struct tuner_rule *o = &t->rules[t->nrules++];

		o->coll = TUNER_COLL_ALLREDUCE;
		o->nranks = nranks;
		o->nnodes = TUNER_ANY;
		o->min_bytes = o->max_bytes = sizes[i];
		o->algo = algo;
		o->proto = proto;
		o->ctas = (int)ctas;
		o->chunk = 0;
	}
	return 0;
}

int export_tuner_table(const struct summary *s, const struct export_where *where, FILE *out,
                       char *err, size_t errlen)
{
	struct tuner_table t = {NULL, 0};
	struct export_plan p;
	struct export_writer w;
	const char *why = NULL, *body;
	char *text = NULL, cmd[PATH_MAX + 32];
	bool rest = false;
	int nranks, rc = export_plan_make(s, "nccl-tuner", NULL, &p, err, errlen);

	if (rc != NCCLTUNE_OK)
		return rc;
	rc = NCCLTUNE_USAGE;
	nranks = rule_nranks(s);
	if (export_uses_plugin(s) ? rules_from_result(s, nranks, &t, err, errlen) < 0
	                          : rules_from_env(s, nranks, &t, &why, err, errlen) < 0)
		goto out;
	text = tuner_table_format(&t, err, errlen);
	if (!text)
		goto out;
	/* the schema line must come first; the header after it */
	body = strchr(text, '\n');
	body = body ? body + 1 : "";
	w = export_writer_start(s, out, TUNER_TABLE_HEADER, false, err, errlen);
	export_comment(&w, "The table of nccltune's NCCL tuner plugin: set NCCL_TUNER_PLUGIN to the");
	export_comment(&w, "absolute path of libnccl-tuner-nccltune.so and NCCLTUNE_TUNER_TABLE to "
	               "this");
	export_commentf(&w, "file's (%s does both).",
	                summary_command(cmd, sizeof cmd, "export --install", NULL));
	if (!export_uses_plugin(s)) {
		export_comment(&w, "Derived from the tuned environment: the session measured those "
		               "variables, not");
		export_comment(&w, "this table. A rule's ctas is one operation's CTAs, while "
		               "NCCL_MAX_NCHANNELS caps a");
		export_comment(&w, "communicator's channels: prefer the env-style exports for this "
		               "result.");
	}
	if (why)
		export_comment(&w, why);
	for (size_t i = 0; i < p.n; i++) {
		const char *n = p.v[i].name;

		if (p.v[i].kind == EXPORT_TUNED && !export_uses_plugin(s) &&
		    (strcmp(n, "NCCL_ALGO") == 0 || strcmp(n, "NCCL_PROTO") == 0 ||
		     strcmp(n, "NCCL_MAX_NCHANNELS") == 0))
			continue;
		if (!rest)
			export_comment(&w, "A tuner plugin cannot set these; put them in the environment "
			               "as well:");
		rest = true;
		export_commentf(&w, "  %s=%s%s", n, p.v[i].value,
		                p.v[i].kind == EXPORT_PINNED ? "  (pinned: set when the session ran)"
		                                             : "");
	}
	fputs(body, out);
	rc = w.rc;
out:
	free(text);
	tuner_table_free(&t);
	return rc;
}

/* ---- NVIDIA example tuner plugin CSV ---- */

/* The example plugin's lower-case names, by NCCL's index (common/ncclvars.h); the
 * plugin silently maps an unknown name to ring/simple. */
static const char *const csv_algos[NCCLVARS_NALGOS] = {
	[NCCLVARS_ALGO_TREE] = "tree", [NCCLVARS_ALGO_RING] = "ring",
	[NCCLVARS_ALGO_COLLNET_DIRECT] = "collnet_direct",
	[NCCLVARS_ALGO_COLLNET_CHAIN] = "collnet_chain", [NCCLVARS_ALGO_NVLS] = "nvls",
	[NCCLVARS_ALGO_NVLS_TREE] = "nvls_tree", [NCCLVARS_ALGO_PAT] = "pat",
};
static const char *const csv_protos[NCCLVARS_NPROTOS] = {
	[NCCLVARS_PROTO_LL] = "ll", [NCCLVARS_PROTO_LL128] = "ll128",
	[NCCLVARS_PROTO_SIMPLE] = "simple",
};

/* The plugin's name of `value` when it is one word of list w (compared as NCCL
 * compares it), else NULL: a list or an exclusion cannot be a row. */
static const char *csv_name(const char *value, enum ncclvars_wordlist w,
                            const char *const *names)
{
	int i = value ? ncclvars_word_find(w, value, strlen(value)) : -1;

	return i < 0 ? NULL : names[i];
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Which variables a row expresses; the rest are listed for the environment. */
static bool csv_expresses(const char *name)
{
	return strcmp(name, "NCCL_ALGO") == 0 || strcmp(name, "NCCL_PROTO") == 0 ||
	       strcmp(name, "NCCL_MAX_NCHANNELS") == 0;
}

int export_tuner_csv(const struct summary *s, const struct export_where *where, FILE *out,
                     char *err, size_t errlen)
{
	const char *algo_v, *proto_v, *chan_v, *algo, *proto;
	uint64_t sizes[64];
	size_t nsizes = 0;
	int nranks;
	bool rest = false;
	struct export_plan p;
	struct export_writer w;
	int rc = export_plan_make(s, "nccl-tuner-csv", NULL, &p, err, errlen);

	if (rc != NCCLTUNE_OK)
		return rc;
	algo_v = summary_env_get(&s->best.env, "NCCL_ALGO");
	proto_v = summary_env_get(&s->best.env, "NCCL_PROTO");
	chan_v = summary_env_get(&s->best.env, "NCCL_MAX_NCHANNELS");
	algo = csv_name(algo_v, NCCLVARS_ALGOS, csv_algos);
	proto = csv_name(proto_v, NCCLVARS_PROTOS, csv_protos);
	w = export_writer_start(s, out, NULL, false, err, errlen);
	export_comment(&w, "Rows for NVIDIA's example tuner plugin (NCCL ext-tuner/example):");
	export_comment(&w, "  NCCL_TUNER_PLUGIN=/path/libnccl-tuner-example.so NCCL_TUNER_CONFIG_FILE=this-file");
	export_comment(&w, "Columns: collective_type,min_bytes,max_bytes,algorithm,protocol,channels,"
	        "nNodes,nRanks,numPipeOps,regBuff");
	export_comment(&w, "The plugin sets nChannels=1 before matching, so -1 (\"keep\") means ONE channel;");
	export_comment(&w, "channels=0 is what leaves NCCL its own channel count. Unmatched calls also get 1.");
	if (s->best.env.n == 0) {
		export_comment(&w, "NCCL's defaults were the best configuration found: no rows. Do not load");
		export_comment(&w, "the example plugin for this result: it would cap every collective at 1 channel.");
		return w.rc;
	}
	if (!algo || !proto) {
		/* A row names exactly one algorithm and one protocol; "NCCL decides", a list or
		 * an exclusion cannot be written, and a guessed row would be a config that was
		 * never measured. */
		export_commentf(&w, "No rows: the tuned configuration has %s=%s and %s=%s,",
		         "NCCL_ALGO", algo_v ? algo_v : "(NCCL's choice)",
		         "NCCL_PROTO", proto_v ? proto_v : "(NCCL's choice)");
		export_comment(&w, "and a row must name one algorithm and one protocol. Use env.sh or");
		export_comment(&w, "sitecustomize.py instead, without the example plugin.");
		return w.rc;
	}
	nranks = rule_nranks(s);
	nsizes = tuned_sizes(s, sizes, sizeof(sizes) / sizeof(sizes[0]));
	export_commentf(&w, "One row per tuned message size (only measured sizes); nRanks %s.",
	         nranks > 0 ? "= the ranks the session measured on"
	                    : "-1 (any: the session's journal does not say how many ranks it measured)");
	if (!chan_v)
		export_comment(&w, "NCCL_MAX_NCHANNELS was not tuned: channels=0 (NCCL's choice).");
	for (size_t i = 0; i < nsizes; i++)
		fprintf(out, "allreduce,%llu,%llu,%s,%s,%s,1,%d,-1,-1\n", (unsigned long long)sizes[i],
		        (unsigned long long)sizes[i], algo, proto, chan_v ? chan_v : "0", nranks);
	for (size_t i = 0; i < p.n; i++) {
		if (p.v[i].kind == EXPORT_TUNED && csv_expresses(p.v[i].name))
			continue;
		if (!rest)
			export_comment(&w, "A tuner plugin cannot set these; put them in the environment as well:");
		rest = true;
		export_commentf(&w, "  %s=%s%s", p.v[i].name, p.v[i].value,
		         p.v[i].kind == EXPORT_PINNED ? "  (pinned: set when the session ran)" : "");
	}
	return w.rc;
}


static size_t tuned_sizes(const struct summary *s, uint64_t *sizes, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < s->workload.n && n < max; i++) {
		bool dup = false;

		for (size_t j = 0; j < n; j++)
			dup |= sizes[j] == s->workload.c[i].bytes;
		if (!dup)
			sizes[n++] = s->workload.c[i].bytes;
	}
	qsort(sizes, n, sizeof(sizes[0]), cmp_u64);
	return n;
}
