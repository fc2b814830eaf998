/* test_summary.c - the strict loader of results.json / journal.jsonl and the NCCL value
 * checker: fixture sessions load with the right values, every hostile file is refused
 * with a message naming the file and the key. */
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "fsutil.h"
#include "ncclvars.h"
#include "nccltune.h"
#include "result/result.h"
#include "result/summary.h"

static char data_dir[PATH_MAX];

static const char *fixture(const char *name)
{
	static char buf[PATH_MAX + 64];

	snprintf(buf, sizeof(buf), "%s/%s", data_dir, name);
	return buf;
}

/* The names and values an export accepts: common/ncclvars' strict check, which the
 * loader applies to best.env and tries (tests/common/test_ncclvars.c has the rest). */
static void test_names(void)
{
	char why[256];

	CHECK(ncclvars_name_check("NCCL_PROTO", why, sizeof(why)) == 0);
	CHECK(ncclvars_name_check("NCCL_P2P_LEVEL", why, sizeof(why)) == 0);
	CHECK(ncclvars_name_check("NCCL_", why, sizeof(why)) != 0);
	CHECK(ncclvars_name_check("NCCL_proto", why, sizeof(why)) != 0);
	CHECK(ncclvars_name_check("LD_PRELOAD", why, sizeof(why)) != 0);
	CHECK(ncclvars_name_check("NCCL_X=1", why, sizeof(why)) != 0);
	CHECK(ncclvars_name_check("NCCL_X Y", why, sizeof(why)) != 0);
	CHECK(ncclvars_name_check(NULL, why, sizeof(why)) != 0);
	CHECK(ncclvars_name_check("NCCL_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
	                          why, sizeof(why)) != 0);
}

struct vcase { const char *name, *value; bool ok; const char *why; };

static void test_values(void)
{
	static const struct vcase cases[] = {
		{ "NCCL_PROTO", "LL", true, NULL },
		{ "NCCL_PROTO", "ll128", true, NULL },          /* NCCL compares case-insensitively */
		{ "NCCL_PROTO", "LL,Simple", true, NULL },
		{ "NCCL_PROTO", "^LL128", true, NULL },
		{ "NCCL_PROTO", "LL,Simple;allreduce:^LL", true, NULL },
		{ "NCCL_PROTO", "LL256", false, "unknown protocol 'LL256'" },
		{ "NCCL_PROTO", "LL,", false, "empty item" },
		{ "NCCL_PROTO", "LL;Simple", false, "needs a collective prefix" },
		{ "NCCL_PROTO", "bogus:LL", false, "unknown collective 'bogus'" },
		{ "NCCL_PROTO", "allreduce:LL:Simple", false, "stray ':Simple'" },
		{ "NCCL_ALGO", "Ring", true, NULL },
		{ "NCCL_ALGO", "nvlstree", true, NULL },
		{ "NCCL_ALGO", "ring;allreduce:tree,collnetdirect;broadcast:ring", true, NULL },
		{ "NCCL_ALGO", "Warp", false, "unknown algorithm 'Warp' (Tree, Ring" },
		{ "NCCL_MAX_NCHANNELS", "2", true, NULL },
		{ "NCCL_MAX_NCHANNELS", "64", true, NULL },
		{ "NCCL_MAX_NCHANNELS", "0", false, "is not an integer in [1, 64]" },
		{ "NCCL_MAX_NCHANNELS", "65", false, "is not an integer in [1, 64]" },
		{ "NCCL_MAX_NCHANNELS", "+2", false, "is not an integer in" },
		{ "NCCL_MAX_NCHANNELS", "0x2", false, "is not an integer in" },
		{ "NCCL_MAX_NCHANNELS", "02", false, "is not an integer in" },
		{ "NCCL_MAX_NCHANNELS", " 2", false, "is not an integer in" },
		{ "NCCL_NTHREADS", "64", true, NULL },
		{ "NCCL_NTHREADS", "512", true, NULL },
		{ "NCCL_NTHREADS", "100", false, "is not a multiple of 32 in [64, 512]" },
		{ "NCCL_NTHREADS", "1024", false, "is not a multiple of 32 in [64, 512]" },
		{ "NCCL_BUFFSIZE", "131072", true, NULL },
		{ "NCCL_BUFFSIZE", "99999999999999999999", false, "is not an integer in" },
		{ "NCCL_BUFFSIZE", "4194304k", false, "is not an integer in" },
		{ "NCCL_P2P_LEVEL", "SYS", true, NULL },
		{ "NCCL_P2P_LEVEL", "PIX", true, NULL },
		{ "NCCL_P2P_LEVEL", "3", true, NULL },
		{ "NCCL_P2P_LEVEL", "sys", false, "case-sensitive" },
		{ "NCCL_P2P_LEVEL", "9", false, "is not a path level" },
		{ "NCCL_NVLS_ENABLE", "0", true, NULL },
		{ "NCCL_NVLS_ENABLE", "3", false, "is not an integer in [0, 2]" },
		{ "NCCL_LAUNCH_MODE", "group", true, NULL },
		{ "NCCL_LAUNCH_MODE", "SERIAL", false, "is not one of PARALLEL, GROUP" },
		{ "NCCL_SOCKET_IFNAME", "=eth0,^docker", true, NULL },
		{ "NCCL_SOCKET_IFNAME", "eth0 eth1", false, "character ' '" },
		{ "NCCL_SOCKET_IFNAME", "$(id)", false, "character '$'" },
		{ "NCCL_SOCKET_IFNAME", "`id`", false, "character '`'" },
		{ "NCCL_SOCKET_IFNAME", "a'b", false, "character '''" },
		{ "NCCL_SOCKET_IFNAME", "a\"b", false, "character '\"'" },
		{ "NCCL_SOCKET_IFNAME", "a\\b", false, "character '\\'" },
		{ "NCCL_SOCKET_IFNAME", "a#b", false, "character '#'" },
		{ "NCCL_PROTO", "LL\nx", false, "control" },
		{ "NCCL_PROTO", "LL\x7f", false, "control" },
		{ "NCCL_PROTO", "LL\xc3\xa9", false, "non-ASCII" },
		{ "NCCL_PROTO", "", false, "empty value" },
	};
	char why[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool ok;

		why[0] = '\0';
		ok = ncclvars_check(cases[i].name, cases[i].value, why, sizeof(why)) == 0;
		if (ok != cases[i].ok)
			fprintf(stderr, "case %zu: %s=%s: got %d (%s)\n", i, cases[i].name, cases[i].value,
			        ok, why);
		CHECK(ok == cases[i].ok);
		if (!cases[i].ok)
			CHECK_CONTAINS(why, cases[i].why);
	}
	{
		char big[400];

		memset(big, 'a', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		CHECK(ncclvars_check("NCCL_SOCKET_IFNAME", big, why, sizeof(why)) != 0);
		CHECK_CONTAINS(why, "longer than");
	}
}

static void test_measured(void)
{
	struct summary *s = NULL;
	struct summary_family *f = NULL;
	size_t nf = 0;
	char err[1024] = "", buf[1024];

	CHECK_INT(summary_load(fixture("measured"), SUMMARY_JOURNAL, &s, err, sizeof(err)), 0);
	if (!s) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	CHECK_STR(s->source, "measured");
	CHECK(s->model == NULL);
	CHECK_STR(s->tool_version, "0.1.0");
	CHECK(s->best.present);
	CHECK_INT(s->best.env.n, 5);
	CHECK_STR(summary_env_get(&s->best.env, "NCCL_PROTO"), "LL");
	CHECK_STR(summary_env_get(&s->best.env, "NCCL_NTHREADS"), "64");
	CHECK(summary_env_get(&s->best.env, "NCCL_P2P_LEVEL") == NULL);
	CHECK_STR(summary_env_get(&s->pinned, "NCCL_P2P_LEVEL"), "SYS");
	CHECK_NEAR(s->best.objective_us, 2850.0, 1e-9);
	CHECK(s->best.has_ci);
	CHECK_NEAR(s->best.ci_lo, 2820.0, 1e-9);
	CHECK_NEAR(s->baseline.objective_us, 24400.0, 1e-9);
	CHECK(s->has_gain);
	CHECK_NEAR(s->gain, 8.56, 1e-9);
	CHECK_NEAR(s->gain_hi, 8.8, 1e-9);
	CHECK_INT(s->nsizes, 1);
	CHECK_INT(s->sizes[0].bytes, 43008);
	CHECK_INT(s->ntop, 3);
	CHECK_INT(s->top[2].repeats, 1);
	CHECK_INT(s->nfailures, 1);
	CHECK_STR(s->failures[0].stage, "capture");
	CHECK_INT(s->failures[0].count, 11);
	CHECK_INT(s->npruned, 1);
	CHECK_INT(s->evaluations, 48);
	CHECK_INT(s->budget, 40);
	CHECK(s->workload.present);
	CHECK_INT(s->workload.n, 1);
	CHECK_INT(s->workload.c[0].bytes, 43008);
	CHECK_INT(s->workload.c[0].count, 122);
	CHECK(s->fp.present);
	CHECK_INT(s->fp.gpu_count, 8);
	CHECK_INT(s->fp.ngpus, 8);
	CHECK_STR(s->fp.gpus[1].bus_id, "00000000:28:00.0");
	CHECK_INT(s->fp.topo_n, 8);
	CHECK_STR(s->fp.topology[0 * 8 + 7], "SYS");
	CHECK_STR(s->fp.topology[1 * 8 + 2], "NODE");
	/* the journal */
	CHECK(s->has_journal);
	CHECK_INT(s->nruns, 48);
	CHECK_STR(s->runs[0].phase, "baseline");
	CHECK_NEAR(s->runs[0].objective_us, 24400.0, 1e-9);
	CHECK(s->probe_argv != NULL);
	if (s->probe_argv) {
		CHECK_STR(s->probe_argv[0], "nccltune-probe");
		CHECK_STR(s->probe_argv[2], "threads");
		CHECK(s->probe_argv[3] == NULL);
	}
	for (size_t i = 0; i < s->nruns; i++)
		if (strcmp(s->runs[i].outcome, "ok") != 0)
			CHECK(isnan(s->runs[i].objective_us));
	/* human forms */
	CHECK_STR(summary_describe_machine(&s->fp, buf, sizeof(buf)),
	          "8 x NVIDIA RTX PRO 6000 Blackwell Server Edition, driver 580.159.04, CUDA 13.0, "
	          "NCCL 2.28.9, host fixture-box");
	CHECK_STR(summary_describe_workload(&s->workload, buf, sizeof(buf)),
	          "122 x 43008 B all-reduce bf16 per step");
	CHECK_STR(summary_describe_gain(s, buf, sizeof(buf)),
	          "baseline 24.40 ms/step, tuned 2.85 ms/step: 8.56x faster (95% CI 8.30-8.80x)");
	CHECK(!summary_gain_unproven(s));
	CHECK(summary_shown_faster(s));
	/* an interval down to 1.00x or below: faster on the point estimate, not shown to be */
	s->gain_lo = 1.0;
	CHECK(summary_gain_unproven(s));
	CHECK(!summary_shown_faster(s));
	CHECK_STR(summary_describe_gain(s, buf, sizeof(buf)),
	          "baseline 24.40 ms/step, tuned 2.85 ms/step: 8.56x faster (95% CI 1.00-8.80x); "
	          "not shown to be faster than NCCL's defaults");
	s->gain_lo = 8.30;
	CHECK(!summary_gain_is_unproven(1.02, 1.001));
	CHECK(summary_gain_is_unproven(1.02, 0.96));
	CHECK(!summary_gain_is_unproven(1.004, 0.9));    /* no gain claimed: nothing to caution */
	CHECK(!summary_gain_is_unproven(1.02, NAN));     /* no interval: nothing to judge */
	CHECK(!summary_gain_is_unproven(NAN, 0.9));
	CHECK_STR(summary_describe_env(&s->top[1].env, buf, sizeof(buf)),
	          "NCCL_PROTO=LL NCCL_ALGO=Ring NCCL_MAX_NCHANNELS=1");
	CHECK_STR(summary_format_us(412.04, buf, sizeof(buf)), "412.0 us");
	/* families: best first; the LL / Ring family holds the best run */
	CHECK_INT(summary_families(s, &f, &nf), 0);
	CHECK(nf >= 4);
	if (nf >= 1) {
		CHECK_STR(f[0].label, "LL / Ring");
		CHECK_NEAR(f[0].best, 2793.0, 1e-9);   /* the last final repeat: 2850 x 0.98 */
	}
	for (size_t k = 0; k < nf; k++) {
		if (strstr(f[k].label, "Tree")) {
			CHECK_INT(f[k].ok, 0);          /* Tree always failed at capture */
			CHECK(isnan(f[k].best));
			CHECK(k + 1 == nf || isnan(f[k + 1].best));   /* sorted last */
		}
	}
	free(f);
	summary_destroy(s);
}

static void test_model_and_noconfig(void)
{
	struct summary *s = NULL;
	char err[1024] = "";

	CHECK_INT(summary_load(fixture("model"), SUMMARY_JOURNAL, &s, err, sizeof(err)), 0);
	if (s) {
		CHECK_STR(s->source, "model");
		CHECK_STR(s->model, "pcie-gen5-8gpu");
		CHECK_STR(s->fp.model, "pcie-gen5-8gpu");
		CHECK_INT(s->best.env.n, 2);
		summary_destroy(s);
	}
	s = NULL;
	CHECK_INT(summary_load(fixture("noconfig"), SUMMARY_JOURNAL, &s, err, sizeof(err)), 0);
	if (s) {
		CHECK(!s->best.present);
		CHECK(!s->has_gain);
		CHECK_INT(s->nfailures, 2);
		summary_destroy(s);
	}
	s = NULL;
	/* a results.json given directly has no journal */
	CHECK_INT(summary_load(fixture("model/results.json"), SUMMARY_JOURNAL, &s, err,
	                       sizeof(err)), 0);
	if (s) {
		CHECK(!s->has_journal);
		CHECK_INT(s->nruns, 0);
		CHECK_STR(s->dir, "");
		summary_destroy(s);
	}
}

static void test_partial(void)
{
	char dir[] = "/tmp/nccltune-wf-partial-XXXXXX", cmd[PATH_MAX * 2 + 64], err[1024] = "";
	struct summary *s = NULL;

	CHECK(mkdtemp(dir) != NULL);
	/* no results.json: summary_load refuses, SUMMARY_PARTIAL reads the journal */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/'", fixture("measured/journal.jsonl"), dir);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(summary_load(dir, SUMMARY_JOURNAL, &s, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "no results.json");
	CHECK_INT(summary_load(dir, SUMMARY_PARTIAL, &s, err, sizeof(err)), 0);
	if (s) {
		CHECK(s->fp.present);
		CHECK_STR(s->fp.driver, "580.159.04");
		CHECK(!s->best.present);
		CHECK_INT(s->nruns, 48);
		summary_destroy(s);
	}
	/* a damaged line before the last is an error naming the file and line */
	snprintf(cmd, sizeof(cmd), "sed -i '3s/.*/{broken/' '%s/journal.jsonl'", dir);
	CHECK_INT(system(cmd), 0);
	s = NULL;
	CHECK_INT(summary_load(dir, SUMMARY_PARTIAL, &s, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "journal.jsonl:3");
	/* with results.json next to a damaged journal: exports (flags 0) never read it,
	 * report and show (SOFT) drop the runs and say why, SUMMARY_JOURNAL refuses */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/'", fixture("measured/results.json"), dir);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(summary_load(dir, 0, &s, err, sizeof(err)), 0);
	if (s) {
		CHECK(!s->has_journal);
		CHECK(s->best.present);
		summary_destroy(s);
	}
	s = NULL;
	CHECK_INT(summary_load(dir, SUMMARY_JOURNAL, &s, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "journal.jsonl:3");
	CHECK_INT(summary_load(dir, SUMMARY_JOURNAL_SOFT, &s, err, sizeof(err)), 0);
	if (s) {
		CHECK(!s->has_journal);
		CHECK_INT(s->nruns, 0);
		CHECK_CONTAINS(s->journal_error, "journal.jsonl:3");
		summary_destroy(s);
	}
	s = NULL;
	snprintf(cmd, sizeof(cmd), "rm '%s/results.json'", dir);
	CHECK_INT(system(cmd), 0);
	/* a run record with a wrong type */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/' && sed -i '5s/\"run\": 4,/\"run\": \"four\",/' "
	         "'%s/journal.jsonl'", fixture("measured/journal.jsonl"), dir, dir);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(summary_load(dir, SUMMARY_PARTIAL, &s, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "journal.jsonl:5: run: expected a number");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK_INT(system(cmd), 0);
}

/* A pruned rule's "when" may name a variable unset (null): a pair rule such as
 * NCCL_PROTO=Simple with NCCL_ALGO unset. Anywhere else null is still refused. */
static void test_pruned_unset(void)
{
	FILE *f = fopen(fixture("measured/results.json"), "rb");
	char *text = calloc(1, 1 << 20), *edited = calloc(1, (1 << 20) + 512), *at, buf[256];
	static const char tree[] = "\"when\": {\n        \"NCCL_ALGO\": \"Tree\"\n      },";
	static const char pair[] = "\"when\": {\"NCCL_PROTO\": \"Simple\", \"NCCL_ALGO\": null},";
	static const char ll[] = "\"NCCL_PROTO\": \"LL\"";
	struct summary *s = NULL;
	char err[512];

	CHECK(f != NULL && text != NULL && edited != NULL);
	if (!f || !text || !edited)
		goto out;
	if (fread(text, 1, (1 << 20) - 1, f) == 0 || ferror(f)) {
		fprintf(stderr, "%s: could not be read\n", fixture("measured/results.json"));
		CHECK(false);
		goto out;
	}
	at = strstr(text, tree);
	CHECK(at != NULL);
	if (!at)
		goto out;
	snprintf(edited, (1 << 20) + 512, "%.*s%s%s", (int)(at - text), text, pair, at + strlen(tree));
	CHECK_INT(summary_parse(edited, strlen(edited), "edited.json", &s, err, sizeof(err)), 0);
	if (s) {
		CHECK_INT(s->npruned, 1);
		CHECK_INT(s->pruned[0].when.n, 2);
		CHECK(s->pruned[0].when.v[1].value == NULL);
		CHECK_STR(summary_describe_env(&s->pruned[0].when, buf, sizeof(buf)),
		          "NCCL_PROTO=Simple NCCL_ALGO unset");
		summary_destroy(s);
		s = NULL;
	}
	/* null in the recommended environment: refused, naming the key */
	at = strstr(edited, "\"best\"");
	at = at ? strstr(at, ll) : NULL;
	CHECK(at != NULL);
	if (at) {
		snprintf(text, 1 << 20, "%.*s\"NCCL_PROTO\": null%s", (int)(at - edited), edited,
		         at + strlen(ll));
		CHECK_INT(summary_parse(text, strlen(text), "edited.json", &s, err, sizeof(err)), -1);
		CHECK_CONTAINS(err, "best.env.NCCL_PROTO: expected a string, got null");
		summary_destroy(s);
	}
out:
	if (f)
		fclose(f);
	free(text);
	free(edited);
}

/* A fingerprint read on its own (as check does): open to keys a probe may add, strict on
 * the ones it reads, messages naming the element. */
static void test_fingerprint(void)
{
	static const struct { const char *json, *err; } cases[] = {
		{"{\"gpu_count\": 2, \"gpus\": [{\"name\": \"A\"}, {\"index\": 5}], \"topology\": "
		 "[[\"X\", \"NV4\"], [\"NV4\", \"X\"]], \"future\": {\"any\": [1]}}", NULL},
		{"{\"topology\": [[\"X\", \"NV4\"], [\"NV4\"]]}",
		 "w: topology[1]: row has 1 cells; the matrix is 2 x 2"},
		{"{\"topology\": [[\"X\", \"NV4\"], [\"NV4\", \"X\", \"X\"]]}",
		 "w: topology[1]: more than 2 entries"},
		{"{\"topology\": [[\"X\", \"a-link-word-far-too-long\"], [\"X\", \"X\"]]}",
		 "w: topology[0][1]: expected a short link word (X, NV#, PIX, PXB, PHB, NODE, SYS)"},
		{"{\"topology\": [[\"X\", 4], [\"X\", \"X\"]]}",
		 "w: topology[0][1]: expected a short link word (X, NV#, PIX, PXB, PHB, NODE, SYS)"},
		{"{\"gpus\": [{\"name\": \"A\", \"serial\": 1}]}",
		 "w: gpus[0].serial: unknown key (expected index, name, bus_id, uuid)"},
		{"{\"gpu_count\": 2, \"gpu_count\": 3}", "w: gpu_count: duplicate key"},
		{"{\"schema\": \"nccltune-fingerprint/2\"}",
		 "w: schema: expected \"nccltune-fingerprint/1\""},
		{"{\"source\": \"guessed\"}", "w: source: expected \"measured\" or \"model\""},
		{"{\"gpu_count\": 1025}", "w: gpu_count: 1025 is out of range [0, 1024]"},
		{"[]", "w: expected an object, got an array"},
	};
	struct summary_fingerprint fp;
	char err[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *o = cJSON_Parse(cases[i].json);
		int rc = summary_fingerprint_parse(o, "w", &fp, err, sizeof(err));

		CHECK_INT(rc, cases[i].err ? -1 : 0);
		if (cases[i].err)
			CHECK_STR(err, cases[i].err);
		else {
			CHECK(fp.present);
			CHECK_INT(fp.gpu_count, 2);
			CHECK_INT(fp.ngpus, 2);
			CHECK_INT(fp.gpus[0].index, 0);
			CHECK_INT(fp.gpus[1].index, 5);
			CHECK_INT(fp.topo_n, 2);
			CHECK_STR(fp.topology[1], "NV4");
		}
		CHECK(rc == 0 || (!fp.present && fp.gpus == NULL && fp.topology == NULL));
		summary_fingerprint_clear(&fp);
		cJSON_Delete(o);
	}
}

struct hcase { const char *file, *want; };

/* Every hostile file is refused, and the message names the file and the key. */
static void test_hostile(void)
{
	static const struct hcase cases[] = {
		{ "value-quote.json", "best.env.NCCL_PROTO: value" },
		{ "value-newline.json", "best.env.NCCL_PROTO: value 'LL?import os' refused: control" },
		{ "value-subshell.json", "best.env.NCCL_SOCKET_IFNAME: value '$(touch" },
		{ "value-backtick.json", "best.env.NCCL_SOCKET_IFNAME: value '`id`' refused: '`id`': character '`'" },
		{ "value-single-quote.json", "best.env.NCCL_DEBUG_SUBSYS" },
		{ "value-space.json", "character ' ' is not allowed" },
		{ "value-empty.json", "best.env.NCCL_PROTO: value '' refused: empty value" },
		{ "value-long.json", "longer than 255 bytes" },
		{ "value-unknown-algo.json", "unknown algorithm 'Warp'" },
		{ "value-octal.json", "best.env.NCCL_NTHREADS: value '0100' refused: '0100' is not a multiple of 32" },
		{ "value-threads-range.json", "multiple of 32 in [64, 512]" },
		{ "value-channels-range.json", "'65' is not an integer in [1, 64]" },
		{ "value-p2p-lowercase.json", "case-sensitive" },
		{ "value-number.json", "best.env.NCCL_NTHREADS: expected a string, got a number" },
		{ "name-not-nccl.json", "best.env.LD_PRELOAD: not an NCCL variable (names start with NCCL_)" },
		{ "name-lowercase.json", "best.env.NCCL_proto: not an NCCL variable name (A-Z, 0-9 and _ only)" },
		{ "name-injection.json", "best.env.NCCL_X=1 PATH: not an NCCL variable name" },
		{ "dup-key.json", "best.env.NCCL_PROTO: duplicate key" },
		{ "wrong-type-objective.json", "best.objective_us: expected a number, got a string" },
		{ "wrong-type-env.json", "best.env: expected an object, got an array" },
		{ "wrong-type-evaluations.json", "evaluations: expected an integer, got 1.5" },
		{ "huge-number.json", "best.objective_us: not a finite number" },
		{ "nan.json", "not valid JSON" },
		{ "negative.json", "best.objective_us: -5 is out of range" },
		{ "truncated.json", "not valid JSON (truncated or corrupt" },
		{ "empty.json", "not valid JSON" },
		{ "trailing.json", "line 2: text after the JSON value (byte 424)" },
		{ "not-object.json", "not-object.json: expected an object, got an array" },
		{ "deep.json", "not valid JSON" },
		{ "unknown-key.json", "unknown-key.json: exec: unknown key" },
		{ "wrong-schema.json", "schema: expected \"nccltune-result/1\"" },
		{ "model-without-name.json", "model: missing" },
		{ "fp-control-char.json", "fingerprint.gpus[0].name: control character in the string" },
		{ "workload-negative.json", "workload.collectives[0].bytes: -1 is out of range" },
		{ "ci-inverted.json", "best.ci95_us: low 3000 is above high 2000" },
		{ "many-keys.json", "best.env: more than 256 keys" },
		/* what goes into every export's header (PEP 263: a coding comment on line 1 or 2
		 * of a Python file sets its encoding; in UTF-7 "+AAo-" is a newline) */
		{ "tool-coding.json", "tool.name: expected \"nccltune\"" },
		{ "tool-version-bad.json", "tool.version: not a version string" },
		{ "created-utf7.json", "created: not an RFC 3339 time" },
		{ "created-not-a-date.json", "created: not an RFC 3339 time" },
		/* best.rules, the per-size rules of nccltune's tuner plugin */
		{ "rules-unknown-algo.json", "best.rules[0].algo: unknown algorithm 'Warp'" },
		{ "rules-twice.json", "best.rules[2].bytes: a second rule for 43008 bytes (rules[0])" },
		{ "rules-ctas-range.json", "best.rules[0].ctas: 65 is out of range" },
		{ "rules-missing-key.json", "best.rules[0].ctas: missing" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[PATH_MAX + 64], err[2048] = "";
		struct summary *s = NULL;
		int rc;

		snprintf(path, sizeof(path), "%s/hostile/%s", data_dir, cases[i].file);
		rc = summary_load(path, 0, &s, err, sizeof(err));
		if (rc != -1)
			fprintf(stderr, "hostile %s was accepted\n", cases[i].file);
		CHECK_INT(rc, -1);
		CHECK(s == NULL);
		CHECK_CONTAINS(err, cases[i].file);      /* the file is named */
		CHECK_CONTAINS(err, cases[i].want);
		/* messages never carry raw control characters from the file */
		for (const char *p = err; *p; p++)
			CHECK((unsigned char)*p >= 0x20);
		summary_destroy(s);
	}
	{
		/* accepted: hostile text where it is only shown */
		struct summary *s = NULL;
		char err[1024] = "";

		CHECK_INT(summary_load(fixture("hostile/accepted.json"), 0, &s, err, sizeof(err)),
		          0);
		if (!s)
			fprintf(stderr, "%s\n", err);
		summary_destroy(s);
	}
}

/* best.rules: words as NCCL's indexes, null as NCCL's choice. */
static void test_rules(void)
{
	struct summary *s = NULL;
	char err[1024] = "";

	CHECK_INT(summary_load(fixture("rules"), 0, &s, err, sizeof(err)), 0);
	if (!s) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	CHECK(s->has_rules);
	CHECK_INT(s->nrules, 2);
	CHECK_INT(s->rules[0].bytes, 43008);
	CHECK_INT(s->rules[0].algo, NCCLVARS_ALGO_TREE);
	CHECK_INT(s->rules[0].proto, NCCLVARS_PROTO_SIMPLE);
	CHECK_INT(s->rules[0].ctas, 2);
	CHECK_INT(s->rules[1].bytes, 1048576);
	CHECK_INT(s->rules[1].algo, -1);
	CHECK_INT(s->rules[1].proto, NCCLVARS_PROTO_SIMPLE);
	CHECK_INT(s->rules[1].ctas, 0);
	summary_destroy(s);
	s = NULL;
	CHECK_INT(summary_load(fixture("measured"), 0, &s, err, sizeof(err)), 0);
	CHECK(s && !s->has_rules && s->nrules == 0);
	summary_destroy(s);
}

/* created, tool.name and tool.version: exactly the shapes nccltune writes. */
static void test_header_fields(void)
{
	static const struct { const char *created, *version; bool ok; } cases[] = {
		{ "2026-11-29T12:10:00Z", "0.1.0", true },
		{ "2026-11-29t12:10:00.123456z", "10.20.30.40", true },
		{ "2024-02-29T23:59:60+05:30", "1.2.3-rc1+git.abc", true },
		{ "2026-11-29T12:10:00-00:00", "0", true },
		{ "2025-02-29T12:00:00Z", "0.1.0", false },        /* not a leap year */
		{ "2026-13-01T12:00:00Z", "0.1.0", false },
		{ "2026-11-29 12:10:00Z", "0.1.0", false },
		{ "2026-11-29T12:10:00", "0.1.0", false },         /* no offset */
		{ "2026-11-29T24:00:00Z", "0.1.0", false },
		{ "2026-11-29T12:10:00.Z", "0.1.0", false },
		{ "2026-11-29T12:10:00Z ", "0.1.0", false },
		{ "+AAo-import os#", "0.1.0", false },
		{ "2026-11-29T12:10:00Z", "v0.1", false },
		{ "2026-11-29T12:10:00Z", "0.1 x", false },
		{ "2026-11-29T12:10:00Z", "0.1.0-", true },
		{ "2026-11-29T12:10:00Z", "0.1.0;id", false },
	};
	char path[PATH_MAX + 64], err[1024];
	size_t len = 0;
	char *base;

	snprintf(path, sizeof(path), "%s/measured/results.json", data_dir);
	base = fs_read_file(path, 1 << 20, &len, err, sizeof(err));
	CHECK(base != NULL);
	for (size_t i = 0; base && i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *c = strstr(base, "\"created\": \""), *v = strstr(base, "\"version\": \"");
		char text[1 << 17];
		struct summary *s = NULL;
		int rc, n;

		CHECK(c && v && v < c && len < sizeof(text) - 256);
		if (!c || !v || v >= c || len >= sizeof(text) - 256)
			break;
		/* base up to the version's value, the new version, up to created's value, the
		 * new time, the rest from the closing quote of created */
		n = snprintf(text, sizeof(text), "%.*s%s%.*s%s%s", (int)(v + 12 - base), base,
		             cases[i].version, (int)(c - strchr(v + 12, '"')), strchr(v + 12, '"'),
		             "\"created\": \"", cases[i].created);
		snprintf(text + n, sizeof(text) - (size_t)n, "%s", strchr(c + 12, '"'));
		rc = summary_parse(text, strlen(text), "t.json", &s, err, sizeof(err));
		if ((rc == 0) != cases[i].ok)
			fprintf(stderr, "created '%s', version '%s': %s\n", cases[i].created,
			        cases[i].version, rc == 0 ? "accepted" : err);
		CHECK_INT(rc == 0, cases[i].ok);
		if (rc == 0) {
			CHECK_STR(s->created, cases[i].created);
			CHECK_STR(s->tool_version, cases[i].version);
		}
		summary_destroy(s);
	}
	free(base);
}

/* The final phase's part of results.json (per_size, guards with attribution, ablation)
 * into typed fields, and each malformed variant refused naming its path. */
static void test_final_fields(void)
{
	static const char *good =
		", \"per_size\": [{\"bytes\": 43008, \"role\": \"tuned\", \"baseline_us\": 200.5, "
		"\"best_us\": 40.25, \"ratio\": 0.2, \"ratio_ci95\": [0.1, 0.3]}, {\"bytes\": "
		"117440512, \"role\": \"guard\", \"baseline_us\": 34888.2, \"best_us\": null, "
		"\"ratio\": null, \"ratio_ci95\": []}], \"guards\": {\"sizes\": [117440512], "
		"\"verdict\": \"slower\", \"attribution\": [{\"env\": {\"NCCL_PROTO\": \"LL\"}, "
		"\"var\": \"NCCL_PROTO\", \"value\": \"LL\", \"bytes\": 117440512, \"rounds\": 2, "
		"\"cost\": {\"ratio\": 1.97, \"ci95\": [1.5, 2.5]}}]}, \"ablation\": [{\"var\": "
		"\"NCCL_MIN_NCHANNELS\", \"value\": \"13\", \"kind\": \"decision\", \"dropped\": "
		"true, \"why\": \"no effect\", \"run\": 35}, {\"var\": \"NCCL_BUFFSIZE\", \"value\": "
		"\"131072\", \"kind\": \"process\", \"dropped\": false, \"why\": \"kept\", "
		"\"removed_vs_kept\": {\"ratio\": 1.2, \"ci95\": [1.1, 1.3]}}]";
	static const struct { const char *from, *to, *msg; } bad[] = {
		{ "\"role\": \"guard\"", "\"role\": \"middle\"", "per_size[1].role" },
		{ "\"ratio_ci95\": [0.1, 0.3]", "\"ratio_ci95\": [0.1]", "per_size[0].ratio_ci95" },
		{ "\"verdict\": \"slower\"", "\"verdict\": \"fine\"", "guards.verdict" },
		{ "\"rounds\": 2", "\"rounds\": 2.5", "guards.attribution[0].rounds" },
		{ "\"dropped\": true", "\"dropped\": 1", "ablation[0].dropped" },
		{ "\"run\": 35", "\"run\": 35, \"extra\": 1", "ablation[0].extra" },
		{ "\"kind\": \"process\"", "\"kind\": \"other\"", "ablation[1].kind" },
	};
	char path[PATH_MAX + 64], err[1024];
	size_t len = 0;
	char *base, *end;
	static char text[1 << 17], edited[1 << 17];
	struct summary *s = NULL;

	snprintf(path, sizeof(path), "%s/measured/results.json", data_dir);
	base = fs_read_file(path, 1 << 20, &len, err, sizeof(err));
	end = base ? strrchr(base, '}') : NULL;
	CHECK(end != NULL && len < sizeof(text) - 4096);
	if (!end || len >= sizeof(text) - 4096) {
		free(base);
		return;
	}
	snprintf(text, sizeof(text), "%.*s%s}\n", (int)(end - base), base, good);
	CHECK_INT(summary_parse(text, strlen(text), "t.json", &s, err, sizeof(err)), 0);
	if (s) {
		CHECK_INT(s->nper_size, 2);
		CHECK_INT(s->per_size[0].bytes, 43008);
		CHECK(!s->per_size[0].guard && s->per_size[1].guard);
		CHECK_NEAR(s->per_size[0].best_us, 40.25, 1e-12);
		CHECK(s->per_size[0].has_ci && !s->per_size[1].has_ci);
		CHECK_NEAR(s->per_size[0].ci_hi, 0.3, 1e-12);
		CHECK(isnan(s->per_size[1].best_us) && isnan(s->per_size[1].ratio));
		CHECK_STR(s->guards_verdict, "slower");
		CHECK_INT(s->nguard_sizes, 1);
		CHECK_INT(s->guard_sizes[0], 117440512);
		CHECK_INT(s->nattribution, 1);
		CHECK_STR(s->attribution[0].var, "NCCL_PROTO");
		CHECK_STR(summary_env_get(&s->attribution[0].env, "NCCL_PROTO"), "LL");
		CHECK_INT(s->attribution[0].rounds, 2);
		CHECK_NEAR(s->attribution[0].cost.ratio, 1.97, 1e-12);
		CHECK(s->attribution[0].cost.has_ci);
		CHECK_INT(s->nablation, 2);
		CHECK(s->ablation[0].dropped && !s->ablation[1].dropped);
		CHECK_STR(s->ablation[0].kind, "decision");
		CHECK_INT(s->ablation[0].run, 35);
		CHECK(isnan(s->ablation[0].removed.ratio));
		CHECK_NEAR(s->ablation[1].removed.ratio, 1.2, 1e-12);
		CHECK_INT(s->ablation[1].run, 0);
	}
	summary_destroy(s);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *at = strstr(text, bad[i].from);

		s = NULL;
		CHECK(at != NULL);
		if (!at)
			continue;
		snprintf(edited, sizeof(edited), "%.*s%s%s", (int)(at - text), text, bad[i].to,
		         at + strlen(bad[i].from));
		CHECK_INT(summary_parse(edited, strlen(edited), "t.json", &s, err, sizeof(err)), -1);
		CHECK_CONTAINS(err, bad[i].msg);
		summary_destroy(s);
	}
	free(base);
}

/* One type, one writer, one reader: the final phase's part written by result_doc from
 * the loader's own types reads back equal (NAN numbers as null, intervals only where
 * there are two ends, ratios of the ablation and the attribution at 4 decimals), and
 * written again gives the same bytes. */
static void test_final_round_trip(void)
{
	struct summary_ablation ab[2] = {
		{"NCCL_MIN_NCHANNELS", "13", "decision", true, "no effect", 35, {NAN, false, NAN, NAN}},
		{"NCCL_BUFFSIZE", "131072", "process", false, "kept <b>", 0, {1.23456, true, 1.1, 1.3}},
	};
	struct summary_size_cmp sz[2] = {
		{43008, false, 200.5, 40.25, 0.2, true, 0.1, 0.3},
		{117440512, true, 34888.2, NAN, NAN, false, NAN, NAN},
	};
	char path[PATH_MAX + 64], err[1024];
	char *text = NULL, *again = NULL;
	struct summary *base = NULL, *s = NULL;

	snprintf(path, sizeof(path), "%s/measured/results.json", data_dir);
	CHECK_INT(summary_load(path, 0, &base, err, sizeof(err)), 0);
	if (!base)
		return;
	base->ablation = calloc(2, sizeof *base->ablation);
	base->per_size = calloc(2, sizeof *base->per_size);
	base->guard_sizes = calloc(1, sizeof *base->guard_sizes);
	base->attribution = calloc(1, sizeof *base->attribution);
	CHECK(base->ablation && base->per_size && base->guard_sizes && base->attribution);
	if (base->ablation && base->per_size && base->guard_sizes && base->attribution) {
		memcpy(base->ablation, ab, sizeof ab);
		memcpy(base->per_size, sz, sizeof sz);
		base->nablation = base->nper_size = 2;
		base->guards_verdict = "slower";
		base->guard_sizes[0] = 117440512;
		base->nguard_sizes = 1;
		base->attribution[0] = (struct summary_attribution){
			{0, NULL}, "NCCL_PROTO", "LL", 117440512, 2, {1.97, false, NAN, NAN}};
		CHECK(result_keep_env(base, cJSON_Parse("{\"NCCL_PROTO\": \"LL\"}"),
		                      &base->attribution[0].env));
		base->nattribution = 1;
		text = result_text(base);
	}
	CHECK(text != NULL);
	if (text)
		CHECK_INT(summary_parse(text, strlen(text), "t.json", &s, err, sizeof(err)), 0);
	if (s) {
		CHECK_INT(s->nablation, 2);
		for (size_t i = 0; i < 2 && s->nablation == 2; i++) {
			CHECK_STR(s->ablation[i].var, ab[i].var);
			CHECK_STR(s->ablation[i].value, ab[i].value);
			CHECK_STR(s->ablation[i].kind, ab[i].kind);
			CHECK_STR(s->ablation[i].why, ab[i].why);
			CHECK_INT(s->ablation[i].dropped, ab[i].dropped);
			CHECK_INT(s->ablation[i].run, ab[i].run);
			CHECK_INT(s->ablation[i].removed.has_ci, ab[i].removed.has_ci);
		}
		CHECK(isnan(s->ablation[0].removed.ratio));
		CHECK_NEAR(s->ablation[1].removed.ratio, 1.2346, 1e-12);
		CHECK_NEAR(s->ablation[1].removed.hi, 1.3, 1e-12);
		CHECK_INT(s->nper_size, 2);
		for (size_t i = 0; i < 2 && s->nper_size == 2; i++) {
			CHECK_INT(s->per_size[i].bytes, sz[i].bytes);
			CHECK_INT(s->per_size[i].guard, sz[i].guard);
			CHECK_INT(s->per_size[i].has_ci, sz[i].has_ci);
			CHECK(isnan(s->per_size[i].best_us) == isnan(sz[i].best_us));
		}
		CHECK_NEAR(s->per_size[0].best_us, 40.25, 1e-12);
		CHECK_NEAR(s->per_size[0].ci_lo, 0.1, 1e-12);
		CHECK_STR(s->guards_verdict, "slower");
		CHECK_INT(s->nguard_sizes, 1);
		CHECK_INT(s->nattribution, 1);
		CHECK_STR(summary_env_get(&s->attribution[0].env, "NCCL_PROTO"), "LL");
		CHECK_INT(s->attribution[0].rounds, 2);
		CHECK(!s->attribution[0].cost.has_ci);
		CHECK_NEAR(s->attribution[0].cost.ratio, 1.97, 1e-12);
		again = result_text(s);
		CHECK(again && strcmp(again, text) == 0);
	} else {
		fprintf(stderr, "%s\n", err);
	}
	summary_destroy(s);
	summary_destroy(base);
	free(again);
	free(text);
}

/* The commands printed for a user to copy (command.c, issue 28): the folder quoted for a
 * shell when it needs it, escaped when it holds a control byte, and the install command
 * carrying --python when the session tuned a wheel's NCCL whose interpreter exists. This
 * program is not called nccltune, so nccltune is named plainly. */
static void test_commands(void)
{
	char tmp[] = "/tmp/nccltune-cmd-XXXXXX", lib[PATH_MAX], py[PATH_MAX], buf[4 * PATH_MAX],
	     want[4 * PATH_MAX];
	struct summary *s = summary_create();
	CHECK(s != NULL && mkdtemp(tmp) != NULL);
	if (!s)
		return;
	CHECK_STR(summary_command(buf, sizeof buf, "export --format shell", "/a/b"),
	          "nccltune export --format shell /a/b");
	CHECK_STR(summary_command(buf, sizeof buf, "run --resume", "/a/my session"),
	          "nccltune run --resume '/a/my session'");
	CHECK_STR(summary_command(buf, sizeof buf, "check", "it's"), "nccltune check 'it'\\''s'");
	CHECK(strchr(summary_command(buf, sizeof buf, "check", "a\033[2Jb"), '\033') == NULL);
	CHECK_STR(summary_command(buf, sizeof buf, "run", NULL), "nccltune run");
	/* no nccl_path, or a library that is not a wheel's: no --python */
	CHECK(!summary_install_python(s, py, sizeof py));
	CHECK_STR(summary_install_command(s, "/a/s", buf, sizeof buf), "nccltune export --install /a/s");
	s->fp.nccl_path = "/usr/lib/x86_64-linux-gnu/libnccl.so.2";
	CHECK(!summary_install_python(s, py, sizeof py));
	/* a wheel's NCCL in a venv: its interpreter, once it exists */
	snprintf(lib, sizeof lib, "%s/venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2",
	         tmp);
	s->fp.nccl_path = lib;
	CHECK(!summary_install_python(s, py, sizeof py));
	CHECK_STR(py, "");
	snprintf(buf, sizeof buf, "mkdir -p %s/venv/bin && touch %s/venv/bin/python3.11 && "
	         "chmod +x %s/venv/bin/python3.11", tmp, tmp, tmp);
	CHECK(system(buf) == 0);
	CHECK(summary_install_python(s, py, sizeof py));
	snprintf(want, sizeof want, "%s/venv/bin/python3.11", tmp);
	CHECK_STR(py, want);
	snprintf(want, sizeof want, "nccltune export --install --python %s/venv/bin/python3.11 /a/s",
	         tmp);
	CHECK_STR(summary_install_command(s, "/a/s", buf, sizeof buf), want);
	s->fp.nccl_path = NULL;
	summary_destroy(s);
	snprintf(buf, sizeof buf, "rm -rf %s", tmp);
	CHECK(system(buf) == 0);
}

int main(void)
{
	const char *root = getenv("NCCLTUNE_SOURCE_ROOT");

	if (!root) {
		fprintf(stderr, "NCCLTUNE_SOURCE_ROOT is not set (run through meson test)\n");
		return 1;
	}
	snprintf(data_dir, sizeof(data_dir), "%s/tests/workflows/data", root);
	test_names();
	test_values();
	test_measured();
	test_model_and_noconfig();
	test_partial();
	test_pruned_unset();
	test_hostile();
	test_fingerprint();
	test_header_fields();
	test_final_fields();
	test_final_round_trip();
	test_rules();
	test_commands();
	return check_status();
}
