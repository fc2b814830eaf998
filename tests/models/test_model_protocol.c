/* test_model_protocol.c - nccltune-model-probe speaks the protocol's extensions as
 * nccltune-probe does (docs/probe-protocol.md): --capabilities, per-size --ops lists,
 * decisions ("nccl") in every result, and --sweep: the plugin check, every choice forced
 * through nccltune's plugin, IGNORE as "not available", a wrong sum as the choice's
 * verify failure, a capture failure and a hang failing the run with sweep_in_flight and
 * the entries final so far, the seeded interleaving of common/sweep.c (the real probe's
 * order), the sizes' own cases under the table, and the noise decomposition (one offset
 * per process shared by its choices). Every report goes through proto_report_parse.
 *
 * usage: test_model_protocol PLUGIN NOT_A_TUNER CONTROL_ONLY (paths of built libraries) */
#include <cjson/cJSON.h>
#include <math.h>

#include "probe_run.h"
#include "sweep.h"

static const char *plugin, *not_tuner, *control_only;
static char env_plugin[1200];
static struct pr_result A, B;

static const char *const no_env[] = { NULL };

static void test_capabilities(void)
{
	unsigned caps = 0;
	char err[256];

	/* no --model needed, other options ignored */
	pr_run((const char *[]){ "--capabilities", NULL }, no_env, false, &A);
	CHECK_INT(A.rc, 0);
	CHECK_STR(A.out, "{\"schema\":\"nccltune-probe/1\",\"capabilities\":[\"ops-list\","
	          "\"decisions\",\"sweep\",\"window\",\"compute\"]}\n");
	CHECK_INT(proto_capabilities_parse(A.out, strlen(A.out), &caps, err, sizeof err), 0);
	CHECK_INT(caps, PROTO_CAP_OPS_LIST | PROTO_CAP_DECISIONS | PROTO_CAP_SWEEP |
	          PROTO_CAP_WINDOW | PROTO_CAP_COMPUTE);
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--bytes", "4096", "--capabilities",
	                         NULL }, no_env, false, &B);
	CHECK_STR(B.out, A.out);
	/* a bad option is still a bad option */
	pr_run((const char *[]){ "--capabilities", "--bogus", NULL }, no_env, true, &B);
	CHECK_INT(B.rc, 2);
}

static void test_ops_list(void)
{
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--noise", "0", "--bytes",
	                         "43008,1048576,117440512", "--ops", "122,4,1", NULL }, no_env,
	       true, &A);
	CHECK_INT(A.rc, 0);
	CHECK_INT(A.r.nresults, 3);
	CHECK_INT(A.r.results[0].ops, 122);
	CHECK_INT(A.r.results[1].ops, 4);
	CHECK_INT(A.r.results[2].ops, 1);
	/* the latency is per op: a count changes no exact value */
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--noise", "0", "--bytes",
	                         "43008,1048576,117440512", NULL }, no_env, true, &B);
	for (size_t i = 0; i < 3; i++)
		CHECK(A.r.results[i].us.median == B.r.results[i].us.median);
	CHECK_INT(B.r.results[2].ops, 122);
	/* one value for all sizes still works; a list of the wrong length is refused */
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--bytes", "4096,8192", "--ops", "7",
	                         NULL }, no_env, true, &A);
	CHECK(A.r.ok && A.r.results[0].ops == 7 && A.r.results[1].ops == 7);
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--bytes", "4096,8192", "--ops",
	                         "1,2,3", NULL }, no_env, true, &A);
	CHECK_INT(A.rc, 2);
	CHECK_STR(proto_stage_name(A.r.stage), "args");
	CHECK_CONTAINS(A.r.error, "--ops: 3 values for 2 --bytes sizes");
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--ops", "1,2", "--bytes", "4096",
	                         NULL }, no_env, true, &A);
	CHECK_INT(A.rc, 2);
	/* with noise, another list is another configuration's stream */
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--seed", "1", "--bytes",
	                         "4096,8192", "--ops", "1,2", NULL }, no_env, true, &A);
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--seed", "1", "--bytes",
	                         "4096,8192", "--ops", "2,1", NULL }, no_env, true, &B);
	CHECK(A.r.results[0].us.median != B.r.results[0].us.median);
}

static void test_decisions(void)
{
	cJSON *root, *res;

	/* what the model's NCCL ran, per size: small LL on few CTAs, large Simple on all */
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--noise", "0", "--bytes",
	                         "1024,43008,134217728", NULL }, no_env, true, &A);
	CHECK_INT(A.rc, 0);
	for (size_t i = 0; i < 3; i++) {
		CHECK(A.r.results[i].nccl.known);
		CHECK(!A.r.results[i].nccl.symmetric && !A.r.results[i].nccl.mixed);
		CHECK(A.r.results[i].nccl.ctas >= 1);
	}
	CHECK_INT(A.r.results[1].nccl.algo, 1);
	CHECK_INT(A.r.results[1].nccl.proto, 0);
	CHECK_INT(A.r.results[1].nccl.ctas, 1);
	CHECK_INT(A.r.results[2].nccl.proto, 2);
	CHECK_INT(A.r.results[2].nccl.ctas, 32);
	/* the key order and names as the real probe writes them */
	root = cJSON_Parse(A.out);
	res = root ? cJSON_GetArrayItem(cJSON_GetObjectItem(root, "results"), 1) : NULL;
	CHECK(res != NULL);
	if (res) {
		char *text = cJSON_PrintUnformatted(cJSON_GetObjectItem(res, "nccl"));

		CHECK_STR(text, "{\"algo\":\"Ring\",\"proto\":\"LL\",\"ctas\":1,\"symmetric\":false}");
		free(text);
	}
	cJSON_Delete(root);
	/* the variables show in the decisions: NCCL_PROTO=Simple, NCCL_MAX_NCHANNELS=2 */
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--noise", "0", "--bytes",
	                         "134217728", NULL },
	       (const char *[]){ "NCCL_PROTO=LL", "NCCL_MAX_NCHANNELS=2", NULL }, true, &A);
	CHECK_INT(A.r.results[0].nccl.proto, 0);
	CHECK_INT(A.r.results[0].nccl.ctas, 2);
}

/* ---- the sweep ---- */

static char sweep_path[512];

static void sweep_file(const char *name, const char *text)
{
	pr_write(name, text, sweep_path, sizeof sweep_path);
}

#define SW(rounds, seed, choices) "{\"schema\":\"nccltune-sweep/1\",\"rounds\":" #rounds \
	",\"seed\":" #seed ",\"choices\":[" choices "]}"

static void check_entry_choice(const struct proto_sweep_entry *e, size_t index, size_t bytes,
                               int algo, int proto, int ctas)
{
	CHECK_INT(e->index, index);
	CHECK_INT(e->bytes, bytes);
	CHECK_INT(e->algo, algo);
	CHECK_INT(e->proto, proto);
	CHECK_INT(e->ctas, ctas);
}

static void test_sweep_refusals(void)
{
	char e[1200];

	sweep_file("ok.json", SW(2, 1, "{\"bytes\":43008}"));
	/* nccltune's plugin is required, as a path, answering control version 1 */
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--sweep", sweep_path, NULL }, no_env,
	       true, &A);
	CHECK_INT(A.rc, 2);
	CHECK_STR(proto_stage_name(A.r.stage), "args");
	CHECK_CONTAINS(A.r.error, "--sweep needs nccltune's tuner plugin in NCCL_TUNER_PLUGIN: "
	               "NCCL_TUNER_PLUGIN is not set");
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--sweep", sweep_path, NULL },
	       (const char *[]){ "NCCL_TUNER_PLUGIN=nccltune", NULL }, true, &A);
	CHECK_INT(A.rc, 2);
	CHECK_CONTAINS(A.r.error, "'nccltune' is a name, not a path");
	snprintf(e, sizeof e, "NCCL_TUNER_PLUGIN=%s", not_tuner);
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--sweep", sweep_path, NULL },
	       (const char *[]){ e, NULL }, true, &A);
	CHECK_INT(A.rc, 2);
	CHECK_CONTAINS(A.r.error, "has no nccltune_tuner_control_version (not nccltune's plugin)");
	/* the file is read strictly, against --bytes and --iters */
	sweep_file("bad.json", SW(2, 1, "{\"bytes\":43008,\"algo\":\"Rnig\"}"));
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--sweep", sweep_path, NULL },
	       (const char *[]){ env_plugin, NULL }, true, &A);
	CHECK_INT(A.rc, 2);
	CHECK_CONTAINS(A.r.error, "bad.json: choices[0].algo: 'Rnig' is not one of Tree, Ring");
	sweep_file("rounds.json", SW(6, 1, "{\"bytes\":43008}"));
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--iters", "5", "--sweep", sweep_path,
	                         NULL }, (const char *[]){ env_plugin, NULL }, true, &A);
	CHECK_CONTAINS(A.r.error, "rounds: 6 is more than --iters 5");
	sweep_file("size.json", SW(2, 1, "{\"bytes\":4096}"));
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--sweep", sweep_path, NULL },
	       (const char *[]){ env_plugin, NULL }, true, &A);
	CHECK_CONTAINS(A.r.error, "choices[0].bytes: 4096 is not one of --bytes");
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--sweep", "/nonexistent.json", NULL },
	       (const char *[]){ env_plugin, NULL }, true, &A);
	CHECK_CONTAINS(A.r.error, "--sweep: /nonexistent.json: No such file or directory");
	/* the testing aids need a sweep and a choice it has */
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--test-stall-choice", "0", NULL },
	       (const char *[]){ env_plugin, NULL }, true, &A);
	CHECK_INT(A.rc, 2);
	CHECK_CONTAINS(A.r.error, "--test-stall-choice 0: needs --sweep");
	sweep_file("ok.json", SW(2, 1, "{\"bytes\":43008}"));
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--sweep", sweep_path,
	                         "--test-corrupt-choice", "1", NULL },
	       (const char *[]){ env_plugin, NULL }, true, &A);
	CHECK_CONTAINS(A.r.error, "--test-corrupt-choice 1: there is no such choice");
}

static void test_sweep_choices(void)
{
	char table_env[700], tpath[512];

	sweep_file("all.json", SW(5, 3,
		"{\"bytes\":43008,\"algo\":\"Ring\",\"proto\":\"LL\",\"ctas\":2},"
		"{\"bytes\":43008,\"algo\":\"ring\",\"proto\":\"ll128\"},"
		"{\"bytes\":43008,\"algo\":\"Ring\",\"proto\":\"Simple\",\"ctas\":4},"
		"{\"bytes\":1048576},"
		"{\"bytes\":1048576,\"algo\":\"NVLS\"},"
		"{\"bytes\":43008,\"ctas\":64}"));
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--bytes", "43008,1048576", "--ops",
	                         "122,1", "--sweep", sweep_path, "--noise", "0", NULL },
	       (const char *[]){ env_plugin, NULL }, true, &A);
	CHECK_INT(A.rc, 0);
	CHECK(A.r.ok);
	CHECK_INT(A.r.nresults, 2);
	CHECK_INT(A.r.results[1].ops, 1);
	CHECK_INT(A.r.nsweep, 6);
	if (A.r.nsweep != 6)
		return;
	/* a forced choice: what ran is what was forced */
	check_entry_choice(&A.r.sweep[0], 0, 43008, 1, 0, 2);
	CHECK(A.r.sweep[0].ok);
	CHECK_INT(A.r.sweep[0].samples, 200);
	CHECK(A.r.sweep[0].nccl.known && A.r.sweep[0].nccl.algo == 1 && A.r.sweep[0].nccl.proto == 0
	      && A.r.sweep[0].nccl.ctas == 2);
	/* IGNORE (LL128 on PCIe): not available, stage env, no decision */
	check_entry_choice(&A.r.sweep[1], 1, 43008, 1, 1, 0);
	CHECK(!A.r.sweep[1].ok);
	CHECK_STR(proto_stage_name(A.r.sweep[1].stage), "env");
	CHECK_STR(A.r.sweep[1].error, "not available: Ring/LL128 is not usable here (NCCL's cost "
	          "table has it IGNORE)");
	CHECK(!A.r.sweep[1].nccl.known);
	/* Ring/Simple on 4 CTAs */
	CHECK(A.r.sweep[2].ok);
	CHECK_INT(A.r.sweep[2].nccl.proto, 2);
	CHECK_INT(A.r.sweep[2].nccl.algo, 1);
	CHECK_INT(A.r.sweep[2].nccl.ctas, 3);   /* 4 asked; 43008 B is 3 cells of Simple */
	/* nothing forced: NCCL's own, exactly the size's own result at noise 0 */
	CHECK(A.r.sweep[3].ok);
	CHECK(A.r.sweep[3].us.median == A.r.results[1].us.median);
	CHECK(memcmp(&A.r.sweep[3].nccl, &A.r.results[1].nccl, sizeof A.r.sweep[3].nccl) == 0);
	/* NVLS without NVSwitch: not available, "*" for the protocol */
	CHECK_STR(A.r.sweep[4].error, "not available: NVLS/* is not usable here (NCCL's cost "
	          "table has it IGNORE)");
	/* CTAs above the pool: NCCL clamps (16 channels; 11 cells of LL traffic) */
	CHECK(A.r.sweep[5].ok);
	CHECK_INT(A.r.sweep[5].nccl.ctas, 11);
	/* a choice costs what the same rule in a plain run's table costs */
	snprintf(tpath, sizeof tpath, "%s/r.table", pr_tmpdir);
	{
		char p[512];

		pr_write("r.table", "nccltune-tuner/1\nallreduce * * 43008 43008 ring ll 2 0\n", p,
		         sizeof p);
	}
	snprintf(table_env, sizeof table_env, "NCCLTUNE_TUNER_TABLE=%s", tpath);
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--noise", "0", NULL },
	       (const char *[]){ env_plugin, table_env, NULL }, true, &B);
	CHECK(B.r.results[0].us.median == A.r.sweep[0].us.median);
	/* the sizes' own cases follow the table; the forced choices override it */
	sweep_file("t.json", SW(2, 1, "{\"bytes\":43008,\"algo\":\"Ring\",\"proto\":\"LL\",\"ctas\":1}"));
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--sweep", sweep_path, "--noise", "0",
	                         NULL }, (const char *[]){ env_plugin, table_env, NULL }, true, &A);
	CHECK(A.r.ok);
	CHECK_INT(A.r.results[0].nccl.ctas, 2);
	CHECK_INT(A.r.sweep[0].nccl.ctas, 1);
	/* the same seed repeats a sweep exactly */
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--sweep", sweep_path, "--seed", "9",
	                         NULL }, (const char *[]){ env_plugin, NULL }, true, &A);
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--sweep", sweep_path, "--seed", "9",
	                         NULL }, (const char *[]){ env_plugin, NULL }, true, &B);
	CHECK_STR(A.out, B.out);
}

/* A model file: the built-in `name` with `rule` added to its failures. */
static void model_with_rule(const char *name, const char *rule, char *path, size_t len)
{
	char src[1200], err[256], *text, *at, *out;
	size_t n;

	snprintf(src, sizeof src, "%s/models/%s.json", getenv("NCCLTUNE_SOURCE_ROOT"), name);
	text = fs_read_file(src, 1 << 20, &n, err, sizeof err);
	CHECK(text != NULL);
	if (!text)
		return;
	at = strstr(text, "\"failures\": [");
	out = malloc(n + strlen(rule) + 8);
	CHECK(at != NULL && out != NULL);
	if (at && out) {
		bool empty = at[13] == ']';

		at += 13;
		snprintf(out, n + strlen(rule) + 8, "%.*s%s%s%s", (int)(at - text), text, rule,
		         empty ? "" : ",", at);
		pr_write("rule-model.json", out, path, len);
	}
	free(out);
	free(text);
}

static void test_sweep_failures(void)
{
	char hang_model[600];

	/* a wrong sum is that choice's failure; the run goes on (LL128 with a bad buffer) */
	sweep_file("v.json", SW(2, 1,
		"{\"bytes\":43008,\"algo\":\"Ring\",\"proto\":\"LL128\"},"
		"{\"bytes\":43008,\"algo\":\"Ring\",\"proto\":\"LL\"}"));
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--sweep", sweep_path, NULL },
	       (const char *[]){ env_plugin, "NCCL_LL128_BUFFSIZE=131072", NULL }, true, &A);
	CHECK_INT(A.rc, 0);
	CHECK(!A.r.sweep[0].ok && A.r.sweep[1].ok);
	CHECK_STR(proto_stage_name(A.r.sweep[0].stage), "verify");
	CHECK_CONTAINS(A.r.sweep[0].error, "rank 0: wrong sums: all-reduce of 43008 bytes");
	CHECK(A.r.sweep[0].nccl.known && A.r.sweep[0].nccl.proto == 1);
	/* --test-corrupt-choice spoils just that choice's check */
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--sweep", sweep_path,
	                         "--test-corrupt-choice", "1", "--test-corrupt-rank", "3", NULL },
	       (const char *[]){ env_plugin, NULL }, true, &A);
	CHECK_INT(A.rc, 0);
	CHECK(A.r.sweep[0].ok && !A.r.sweep[1].ok);
	CHECK_CONTAINS(A.r.sweep[1].error, "rank 3: wrong sum on rank 3: all-reduce 1 of 122");
	/* a capture failure fails the run with the choice in flight and the entries final so
	 * far (the seed box's Tree, after an IGNORE choice) */
	sweep_file("c.json", SW(2, 1,
		"{\"bytes\":43008,\"algo\":\"Ring\",\"proto\":\"LL128\"},"
		"{\"bytes\":43008,\"algo\":\"Ring\",\"proto\":\"LL\"},"
		"{\"bytes\":43008,\"algo\":\"Tree\"},"
		"{\"bytes\":43008,\"algo\":\"NVLS\"}"));
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--sweep", sweep_path, NULL },
	       (const char *[]){ env_plugin, NULL }, true, &A);
	CHECK_INT(A.rc, 1);
	CHECK_STR(proto_stage_name(A.r.stage), "capture");
	CHECK_CONTAINS(A.r.error, "capture of sweep choice 2 (43008 bytes, Tree/*, NCCL's CTAs): ");
	CHECK(A.r.has_in_flight);
	CHECK_INT(A.r.sweep_in_flight, 2);
	CHECK_INT(A.r.nsweep, 1);
	CHECK_INT(A.r.sweep[0].index, 0);
	/* a choice the model says hangs: the run fails at its first timed replay; every other
	 * choice was prepared, so the final entries are all the rejected ones but it */
	model_with_rule("pcie-gen5-8gpu", "{\"when\": {\"algo\": \"Ring\", \"proto\": \"Simple\"}, "
	                "\"stage\": \"replay\", \"error\": \"Ring/Simple graphs hang (test rule)\", "
	                "\"source\": \"test\"}", hang_model, sizeof hang_model);
	sweep_file("h.json", SW(3, 5,
		"{\"bytes\":43008,\"algo\":\"Ring\",\"proto\":\"LL\"},"
		"{\"bytes\":43008,\"algo\":\"Ring\",\"proto\":\"Simple\"},"
		"{\"bytes\":43008,\"algo\":\"Ring\",\"proto\":\"LL128\"}"));
	pr_run((const char *[]){ "--model", hang_model, "--sweep", sweep_path, NULL },
	       (const char *[]){ env_plugin, NULL }, true, &A);
	CHECK_INT(A.rc, 1);
	CHECK_STR(proto_stage_name(A.r.stage), "replay");
	CHECK_CONTAINS(A.r.error, "timed replays of sweep choice 1 (43008 bytes, Ring/Simple, "
	               "NCCL's CTAs): timed out: no progress for 60 s");
	CHECK_CONTAINS(A.r.error, "Ring/Simple graphs hang (test rule)");
	CHECK(A.r.has_in_flight);
	CHECK_INT(A.r.sweep_in_flight, 1);
	CHECK_INT(A.r.nsweep, 1);
	CHECK_INT(A.r.sweep[0].index, 2);
	CHECK_STR(proto_stage_name(A.r.sweep[0].stage), "env");
	/* the same model in a plain run: the rule is a replay failure of the run */
	pr_run((const char *[]){ "--model", hang_model, NULL },
	       (const char *[]){ "NCCL_PROTO=Simple", "NCCL_ALGO=Ring", NULL }, true, &B);
	CHECK_STR(proto_stage_name(B.r.stage), "replay");
	/* --test-stall-choice: the same, for any choice */
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--sweep", sweep_path,
	                         "--test-stall-choice", "0", NULL }, (const char *[]){ env_plugin, NULL },
	       true, &A);
	CHECK_INT(A.rc, 1);
	CHECK_INT(A.r.sweep_in_flight, 0);
	CHECK_CONTAINS(A.r.error, "--test-stall-choice");
	/* a library with the control interface that NCCL does not take as a tuner: nothing
	 * can be forced, the run fails at env with the first choice in flight */
	{
		char e[1200];

		snprintf(e, sizeof e, "NCCL_TUNER_PLUGIN=%s", control_only);
		pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--sweep", sweep_path, NULL },
		       (const char *[]){ e, NULL }, true, &A);
		CHECK_INT(A.rc, 1);
		CHECK_STR(proto_stage_name(A.r.stage), "env");
		CHECK_CONTAINS(A.r.error, "NCCL did not ask nccltune's tuner plugin about the "
		               "all-reduces of 43008 bytes");
		CHECK(A.r.has_in_flight && A.r.sweep_in_flight == 0);
		CHECK_CONTAINS(A.err, "has none of the tuner symbols");
	}
	/* a size's own failure fails the run with no choice in flight */
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--sweep", sweep_path, NULL },
	       (const char *[]){ env_plugin, "NCCL_ALGO=Tree", NULL }, true, &A);
	CHECK_STR(proto_stage_name(A.r.stage), "capture");
	CHECK(!A.r.has_in_flight);
}

/* The kept cases of each round in the order --explain says they were replayed equal the
 * real probe's order for that file and seed (sweep_round_order of common/sweep.c). */
static void test_sweep_order(void)
{
	static const unsigned seeds[] = { 1, 42, 123456789 };

	for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
		char text[1024], want[2048] = "", *at;
		size_t order[8], used = 0;

		snprintf(text, sizeof text, "{\"schema\":\"nccltune-sweep/1\",\"rounds\":4,\"seed\":%u,"
		         "\"choices\":[{\"bytes\":43008,\"ctas\":2},{\"bytes\":4096,\"proto\":\"LL128\"},"
		         "{\"bytes\":4096,\"ctas\":3},{\"bytes\":43008},{\"bytes\":43008,\"ctas\":5}]}",
		         seeds[k]);
		sweep_file("o.json", text);
		pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--bytes", "4096,43008", "--sweep",
		                         sweep_path, "--explain", NULL }, (const char *[]){ env_plugin, NULL },
		       true, &A);
		CHECK_INT(A.rc, 0);
		for (int r = 0; r < 4; r++) {
			sweep_round_order(seeds[k], r, 7, order);
			used += (size_t)snprintf(want + used, sizeof want - used, "  round %d order:", r);
			for (size_t i = 0; i < 7; i++)
				if (order[i] != 3)   /* case 3 = choice 1, Ring/LL128: not available */
					used += (size_t)snprintf(want + used, sizeof want - used, " %zu", order[i]);
			used += (size_t)snprintf(want + used, sizeof want - used, "\n");
		}
		at = strstr(A.err, "  round 0 order:");
		CHECK(at != NULL);
		if (at)
			CHECK_STR(at, want);
	}
}

/* Choices of one sweep share the process's offset: their differences are far tighter
 * than those between processes. */
static void test_sweep_noise(void)
{
	double within = 0, between = 0, first[12];
	int n = 12;

	sweep_file("n.json", SW(5, 1,
		"{\"bytes\":43008,\"algo\":\"Ring\",\"proto\":\"LL\",\"ctas\":2},"
		"{\"bytes\":43008,\"algo\":\"Ring\",\"proto\":\"LL\",\"ctas\":2}"));
	for (int k = 0; k < n; k++) {
		char seed[16];

		snprintf(seed, sizeof seed, "%d", k + 1);
		pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--sweep", sweep_path, "--seed",
		                         seed, NULL }, (const char *[]){ env_plugin, NULL }, true, &A);
		CHECK(A.r.ok && A.r.nsweep == 2);
		if (!A.r.ok || A.r.nsweep != 2)
			return;
		first[k] = log(A.r.sweep[0].us.median);
		within += pow(first[k] - log(A.r.sweep[1].us.median), 2);
	}
	for (int k = 1; k < n; k++)
		between += pow(first[k] - first[k - 1], 2);
	within = sqrt(within / n);
	between = sqrt(between / (n - 1));
	/* per-run 4% on this model, per-sample 5% over 200 samples: ~0.6% within */
	CHECK(between > 0.02);
	CHECK(within < 0.015);
	CHECK(within * 3 < between);
	/* and a plain run keeps its documented per-run noise: medians of runs spread ~4% */
	between = 0;
	for (int k = 0; k < n; k++) {
		char seed[16];

		snprintf(seed, sizeof seed, "%d", k + 1);
		pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--seed", seed, NULL }, no_env, true,
		       &A);
		first[k] = log(A.r.results[0].us.median);
		if (k > 0)
			between += pow(first[k] - first[k - 1], 2);
	}
	CHECK(sqrt(between / (n - 1)) > 0.02);
}

/* The largest --noise draws factors far below 1: every report still holds latencies
 * the strict reader accepts (at least PROTO_US_FLOOR), the writer never writes what its
 * own reader refuses. */
static void test_noise_floor(void)
{
	for (int k = 0; k < 20; k++) {
		char seed[16];

		snprintf(seed, sizeof seed, "%d", k + 1);
		pr_run((const char *[]){ "--model", "h200-nvlink-2gpu", "--bytes", "8", "--ops", "1",
		                         "--noise", "100", "--seed", seed, NULL },
		       (const char *[]){ NULL }, true, &A);
		CHECK(A.r.ok && A.r.results[0].us.min >= PROTO_US_FLOOR);
	}
}

/* ---- the server's step: --compute-us and --window symmetric (MODEL) ---- */

/* One op of the step is the all-reduce plus the kernel; the kernel lasts kernel_us unless
 * NCCL's CTAs and its own exceed the 132 SMs of an H200, then kernel_us x (1 + excess /
 * its CTAs); the report says so in compute, step_us and allreduce_us. */
static void test_compute(void)
{
	const char *base_args[] = { "--model", "nvlink-h200-8gpu", "--noise", "0", "--bytes",
	                            "43008,1M", "--ops", "10", NULL };
	double ar[2];

	pr_run(base_args, no_env, true, &A);
	CHECK_INT(A.rc, 0);
	CHECK(!A.r.compute.known && !A.r.results[0].has_step && !strstr(A.out, "step_us"));
	ar[0] = A.r.results[0].us.median;   /* Ring/LL on 1 CTA */
	ar[1] = A.r.results[1].us.median;   /* Ring/LL on 32 CTAs */
	CHECK_INT(A.r.results[1].nccl.ctas, 32);
	/* 100 CTAs: 1 + 100 and 32 + 100 fit in 132 SMs: the kernel lasts 40 us */
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--noise", "0", "--bytes",
	                         "43008,1M", "--ops", "10", "--compute-us", "40,100", NULL },
	       no_env, true, &B);
	CHECK_INT(B.rc, 0);
	CHECK(B.r.compute.known);
	CHECK_NEAR(B.r.compute.kernel_us, 40, 0);
	CHECK_INT(B.r.compute.ctas, 100);
	CHECK_NEAR(B.r.compute.us.median, 40, 0);
	for (size_t i = 0; i < 2; i++) {
		CHECK_NEAR(B.r.results[i].us.median, ar[i] + 40, 1e-9);
		CHECK(B.r.results[i].has_step);
		CHECK_NEAR(B.r.results[i].step_us, 10 * (ar[i] + 40), 1e-6);
		CHECK_NEAR(B.r.results[i].allreduce_us, ar[i], 1e-9);
	}
	/* one CTA per SM (the default): 1 + 132 is 1 over, 32 + 132 is 32 over */
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--noise", "0", "--bytes",
	                         "43008,1M", "--ops", "10", "--compute-us", "40", NULL },
	       no_env, true, &B);
	CHECK_INT(B.r.compute.ctas, 132);
	CHECK_NEAR(B.r.results[0].us.median, ar[0] + 40 * (1 + 1.0 / 132), 1e-9);
	CHECK_NEAR(B.r.results[1].us.median, ar[1] + 40 * (1 + 32.0 / 132), 1e-9);
	/* the all-reduce's share carries the CTAs it took from the kernel */
	CHECK_NEAR(B.r.results[1].allreduce_us, ar[1] + 40 * 32.0 / 132, 1e-9);
	/* fewer NCCL CTAs pay less: NCCL_MAX_NCHANNELS=2 */
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--noise", "0", "--bytes", "1M",
	                         "--compute-us", "40", NULL },
	       (const char *[]){ "NCCL_MAX_NCHANNELS=2", NULL }, true, &B);
	CHECK_INT(B.r.results[0].nccl.ctas, 2);
	CHECK(B.r.results[0].us.median - B.r.results[0].allreduce_us < 40 * (1 + 3.0 / 132));
	/* hostile values are refused at stage args, exit 2 */
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--compute-us", "nan", NULL },
	       no_env, true, &B);
	CHECK_INT(B.rc, 2);
	CHECK_INT(B.r.stage, PROTO_STAGE_ARGS);
	CHECK_CONTAINS(B.r.error, "--compute-us: 'nan' is not a number of microseconds");
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--compute-us", "40,0", NULL },
	       no_env, true, &B);
	CHECK_INT(B.rc, 2);
	CHECK_CONTAINS(B.r.error, "--compute-us: CTAs '0' is not an integer in 1..65535");
}

/* A symmetric kernel at <= 64 KiB on NVLink models, 1.4 x faster; nothing on PCIe; no
 * run with cuMem off. */
static void test_window(void)
{
	double nvl, pcie;

	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--noise", "0", "--bytes",
	                         "43008,1M", NULL }, no_env, true, &A);
	nvl = A.r.results[0].us.median;
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--noise", "0", "--bytes",
	                         "43008,1M", "--window", "symmetric", NULL }, no_env, true, &B);
	CHECK_INT(B.rc, 0);
	CHECK(B.r.window_symmetric);
	CHECK_NEAR(B.r.results[0].us.median, nvl / 1.4, 1e-9);
	CHECK(B.r.results[0].nccl.symmetric);
	CHECK_INT(B.r.results[0].nccl.algo, PROTO_NCCL_ANY);
	CHECK_STR(B.r.results[0].nccl.kernel, "AllReduce_AGxLL_R");
	CHECK_NEAR(B.r.results[1].us.median, A.r.results[1].us.median, 0);   /* 1 MiB: as before */
	CHECK(!B.r.results[1].nccl.symmetric);
	/* cuMem on by value (NCCL reads an integer): 1 runs, 0 and 0x0 do not */
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--noise", "0", "--window",
	                         "symmetric", NULL }, (const char *[]){ "NCCL_CUMEM_ENABLE=1", NULL },
	       true, &B);
	CHECK_INT(B.rc, 0);
	for (size_t i = 0; i < 2; i++) {
		pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--window", "symmetric", NULL },
		       (const char *[]){ i ? "NCCL_CUMEM_ENABLE=0x0" : "NCCL_CUMEM_ENABLE=0", NULL },
		       true, &B);
		CHECK_INT(B.rc, 1);
		CHECK_INT(B.r.stage, PROTO_STAGE_ENV);
		CHECK_CONTAINS(B.r.error, "--window symmetric needs cuMem");
	}
	/* PCIe: windows change nothing */
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--noise", "0", NULL }, no_env, true,
	       &A);
	pcie = A.r.results[0].us.median;
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--noise", "0", "--window", "symmetric",
	                         NULL }, no_env, true, &B);
	CHECK_NEAR(B.r.results[0].us.median, pcie, 0);
	CHECK(!B.r.results[0].nccl.symmetric && B.r.window_symmetric);
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--window", "asymmetric", NULL },
	       no_env, true, &B);
	CHECK_INT(B.rc, 2);
	CHECK_CONTAINS(B.r.error, "--window: 'asymmetric' is not 'symmetric'");
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s PLUGIN NOT_A_TUNER CONTROL_ONLY\n", argv[0]);
		return 2;
	}
	plugin = argv[1];
	not_tuner = argv[2];
	control_only = argv[3];
	if (pr_setup() != 0)
		return 1;
	snprintf(env_plugin, sizeof env_plugin, "NCCL_TUNER_PLUGIN=%s", plugin);
	test_capabilities();
	test_ops_list();
	test_decisions();
	test_sweep_refusals();
	test_sweep_choices();
	test_sweep_failures();
	test_sweep_order();
	test_sweep_noise();
	test_noise_floor();
	test_compute();
	test_window();
	proto_report_clear(&A.r);
	proto_report_clear(&B.r);
	pr_cleanup();
	return check_status();
}
