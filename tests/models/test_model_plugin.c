/* test_model_plugin.c - the model probe loads a tuner plugin as NCCL does and applies its
 * answers as NCCL does: nccltune's plugin with a table (a rule forces Ring/LL with 2 CTAs
 * at 43008 B; sizes without a rule are byte-for-byte NCCL's own; an IGNORE pair named by a
 * rule is not revived, CTAs included), a missing file or a bare name that does not
 * resolve (a warning, NCCL's choice), "none", bare names through libnccl-tuner-NAME.so,
 * the ABI symbol per modelled NCCL version, a foreign plugin that revives IGNORE entries,
 * fails init or getCollInfo, clears the table, or sets only CTAs; finalize at the end;
 * the logger's lines. In-process: model_force_rule (what bench/ uses without the .so)
 * decides exactly as the built plugin does, and the forced evaluation's invariants.
 *
 * usage: test_model_plugin PLUGIN FAKE FAKE_V4 FAKE_V6 (paths of built libraries) */
#include <dlfcn.h>

#include "probe_run.h"
#include "model.h"
#include "nccltune_tuner.h"
#include "tuner.h"

static const char *plugin, *fake, *fake4, *fake6;
static char env_plugin[1200], env_table[1200];
static struct pr_result A, B;

static const char *const no_env[] = { NULL };

/* A table file with `rules` after the schema line; sets env_table. */
static void table(const char *name, const char *rules)
{
	char text[2048], path[512];

	snprintf(text, sizeof text, "nccltune-tuner/1\n%s", rules);
	pr_write(name, text, path, sizeof path);
	snprintf(env_table, sizeof env_table, "NCCLTUNE_TUNER_TABLE=%s", path);
}

static void check_decision(const struct proto_size_result *s, int algo, int proto, int ctas)
{
	CHECK(s->nccl.known);
	CHECK_INT(s->nccl.algo, algo);
	CHECK_INT(s->nccl.proto, proto);
	CHECK_INT(s->nccl.ctas, ctas);
	CHECK(!s->nccl.symmetric);
}

static void test_rule_forces(void)
{
	const char *args[] = { "--model", "pcie-gen5-8gpu", "--noise", "0", "--bytes",
	                       "4096,43008,1048576", NULL };

	table("rule.table", "allreduce 8 * 43008 43008 ring ll 2 0\n");
	pr_run(args, no_env, true, &B);
	pr_run(args, (const char *[]){ env_plugin, env_table, NULL }, true, &A);
	CHECK_INT(A.rc, 0);
	CHECK(A.r.ok && B.r.ok);
	/* NCCL's own choice at 43008 B is Ring/LL on one CTA; the rule gives it two */
	check_decision(&B.r.results[1], 1, 0, 1);
	check_decision(&A.r.results[1], 1, 0, 2);
	CHECK(A.r.results[1].us.median != B.r.results[1].us.median);
	/* the sizes without a rule: exactly what NCCL does without the plugin */
	CHECK(memcmp(&A.r.results[0], &B.r.results[0], sizeof A.r.results[0]) == 0);
	CHECK(memcmp(&A.r.results[2], &B.r.results[2], sizeof A.r.results[2]) == 0);
	/* a table whose rules match nothing: the whole report is byte-for-byte the plain one */
	table("other.table", "allreduce 4 * 0 1073741824 tree simple 7 0\n"
	                     "allgather * * 0 1073741824 ring ll 1 0\n");
	pr_run(args, (const char *[]){ env_plugin, env_table, NULL }, true, &A);
	CHECK_STR(A.out, B.out);
	/* with noise the plugin is part of the configuration: its own noise stream */
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--seed", "3", NULL },
	       (const char *[]){ env_plugin, env_table, NULL }, true, &A);
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--seed", "3", NULL }, no_env, true,
	       &B);
	CHECK(strcmp(A.out, B.out) != 0);
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--seed", "3", NULL },
	       (const char *[]){ env_plugin, env_table, NULL }, true, &B);
	CHECK_STR(A.out, B.out);
}

static void test_ignore_not_revived(void)
{
	const char *args[] = { "--model", "pcie-gen5-8gpu", "--noise", "0", "--bytes", "43008",
	                       NULL };

	/* LL128 is IGNORE on this PCIe box (its safety checks): the rule changes nothing,
	 * not even the CTAs, and the plugin says so through NCCL's logger */
	table("ll128.table", "allreduce * * 43008 43008 ring ll128 4 0\n");
	pr_run(args, no_env, true, &B);
	pr_run(args, (const char *[]){ env_plugin, env_table, NULL }, true, &A);
	CHECK_STR(A.out, B.out);
	CHECK_CONTAINS(A.err, "NCCL WARN nccltune: allreduce 43008 B: rule 1 asks for Ring/LL128, "
	               "which NCCL has ruled out (IGNORE)");
	/* NCCL_ALGO makes Tree IGNORE; a Tree rule is not revived either */
	table("tree.table", "allreduce * * 43008 43008 tree * 0 0\n");
	pr_run(args, (const char *[]){ "NCCL_ALGO=Ring", NULL }, true, &B);
	pr_run(args, (const char *[]){ "NCCL_ALGO=Ring", env_plugin, env_table, NULL }, true, &A);
	CHECK_STR(A.out, B.out);
	/* without NCCL_ALGO the same rule makes NCCL run Tree, which fails on this box */
	pr_run(args, (const char *[]){ env_plugin, env_table, NULL }, true, &A);
	CHECK_INT(A.rc, 1);
	CHECK_STR(proto_stage_name(A.r.stage), "capture");
	CHECK_CONTAINS(A.r.error, "Tree kernels on this box");
}

static void test_missing_and_names(void)
{
	const char *args[] = { "--model", "nvlink-h200-8gpu", "--noise", "0", "--explain", NULL };
	char ld[1200], dir[1024];

	pr_run(args, no_env, true, &B);
	pr_run(args, (const char *[]){ "NCCL_TUNER_PLUGIN=/nonexistent/libnccl-tuner-x.so", NULL },
	       true, &A);
	CHECK_INT(A.rc, 0);
	CHECK_STR(A.out, B.out);
	CHECK_CONTAINS(A.err, "warning: NCCL_TUNER_PLUGIN=/nonexistent/libnccl-tuner-x.so: cannot "
	               "load");
	CHECK_CONTAINS(A.err, "runs without a tuner plugin");
	/* a bare name is tried as given, then as libnccl-tuner-NAME.so */
	pr_run(args, (const char *[]){ "NCCL_TUNER_PLUGIN=nccltune", NULL }, true, &A);
	CHECK_STR(A.out, B.out);
	CHECK_CONTAINS(A.err, "libnccl-tuner-nccltune.so");
	snprintf(dir, sizeof dir, "%s", plugin);
	*strrchr(dir, '/') = '\0';
	snprintf(ld, sizeof ld, "LD_LIBRARY_PATH=%s", dir);
	table("h200.table", "allreduce * * 43008 43008 ring simple 0 0\n");
	pr_run(args, (const char *[]){ "NCCL_TUNER_PLUGIN=nccltune", ld, env_table, NULL }, true, &A);
	CHECK_INT(A.rc, 0);
	CHECK_CONTAINS(A.err, "tuner plugin: libnccl-tuner-nccltune.so (ncclTunerPlugin_v5)");
	check_decision(&A.r.results[0], 1, 2, A.r.results[0].nccl.ctas);
	/* none (any case): no plugin and no word about it */
	pr_run(args, (const char *[]){ "NCCL_TUNER_PLUGIN=NoNe", env_table, NULL }, true, &A);
	CHECK_STR(A.out, B.out);
	CHECK(!strstr(A.err, "warning"));
	CHECK_CONTAINS(A.err, "tuner plugin: none");
	/* a library without any tuner symbol: unsupported, NCCL's choice */
	{
		char e[1200];

		snprintf(e, sizeof e, "NCCL_TUNER_PLUGIN=%s", fake6);
		pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--noise", "0", NULL },
		       (const char *[]){ e, NULL }, true, &A);
		CHECK_INT(A.rc, 0);
		CHECK_CONTAINS(A.err, "has none of the tuner symbols NCCL 2.28.9 takes "
		               "(ncclTunerPlugin_v5, then ncclTunerPlugin_v4)");
		CHECK(!strstr(A.err, "fake tuner: init"));
	}
}

/* A model file: the built-in `name` with its nccl_version replaced. */
static void model_with_version(const char *name, const char *version, char *path, size_t len)
{
	char src[1200], err[256], file[64], *text, *at, *out;
	size_t n;

	snprintf(src, sizeof src, "%s/models/%s.json", getenv("NCCLTUNE_SOURCE_ROOT"), name);
	text = fs_read_file(src, 1 << 20, &n, err, sizeof err);
	CHECK(text != NULL);
	if (!text)
		return;
	at = strstr(text, "\"nccl_version\": \"");
	CHECK(at != NULL);
	out = malloc(n + 64);
	if (at && out) {
		char *end = strchr(at + 17, '"');

		snprintf(out, n + 64, "%.*s\"nccl_version\": \"%s%s", (int)(at - text), text, version,
		         end);
		snprintf(file, sizeof file, "%s-%s.json", name, version);
		pr_write(file, out, path, len);
	}
	free(out);
	free(text);
}

static void test_versions(void)
{
	char m27[600], m30[600], e[1200], e4[1200];

	snprintf(e, sizeof e, "NCCL_TUNER_PLUGIN=%s", fake);
	snprintf(e4, sizeof e4, "NCCL_TUNER_PLUGIN=%s", fake4);
	model_with_version("pcie-4gpu-switch", "2.27.7", m27, sizeof m27);
	model_with_version("pcie-4gpu-switch", "2.30.7", m30, sizeof m30);
	pr_run((const char *[]){ "--model", "pcie-4gpu-switch", "--noise", "0", NULL },
	       (const char *[]){ e, NULL }, true, &A);
	CHECK_CONTAINS(A.err, "fake tuner: init v5 nranks 4 nnodes 1");
	pr_run((const char *[]){ "--model", m30, "--noise", "0", NULL },
	       (const char *[]){ e, NULL }, true, &A);
	CHECK_CONTAINS(A.err, "fake tuner: init v6 nranks 4 nnodes 1");
	pr_run((const char *[]){ "--model", m27, "--noise", "0", NULL },
	       (const char *[]){ e, NULL }, true, &A);
	CHECK_CONTAINS(A.err, "fake tuner: init v4 nranks 4 nnodes 1");
	/* 2.28 takes v4 when there is no v5 */
	pr_run((const char *[]){ "--model", "pcie-4gpu-switch", "--noise", "0", NULL },
	       (const char *[]){ e4, NULL }, true, &A);
	CHECK_CONTAINS(A.err, "fake tuner: init v4 nranks 4 nnodes 1");
	/* NCCL's calls: one getCollInfo per size, AllReduce (4), regBuff 1 (graph capture),
	 * nChannels 0 in; finalize at the end */
	pr_run((const char *[]){ "--model", "pcie-4gpu-switch", "--noise", "0", "--bytes",
	                         "4096,43008", NULL }, (const char *[]){ e, NULL }, true, &A);
	CHECK_CONTAINS(A.err, "fake tuner: getCollInfo coll 4 4096 regBuff 1 nChannels 0\n"
	               "fake tuner: getCollInfo coll 4 43008 regBuff 1 nChannels 0\n"
	               "fake tuner: finalize\n");
	/* the plugin file is part of a configuration's noise stream: two plugins without an
	 * opinion and without a table differ in noise only */
	pr_run((const char *[]){ "--model", "pcie-4gpu-switch", "--seed", "5", NULL },
	       (const char *[]){ e, NULL }, true, &A);
	pr_run((const char *[]){ "--model", "pcie-4gpu-switch", "--seed", "5", NULL },
	       (const char *[]){ e4, NULL }, true, &B);
	CHECK(A.r.ok && B.r.ok);
	CHECK(A.r.results[0].us.median != B.r.results[0].us.median);
	/* the logger: INFO lines only with NCCL_DEBUG=INFO */
	CHECK(!strstr(A.err, "NCCL INFO"));
	pr_run((const char *[]){ "--model", "pcie-4gpu-switch", "--noise", "0", NULL },
	       (const char *[]){ e, "NCCL_DEBUG=INFO", NULL }, true, &A);
	CHECK_CONTAINS(A.err, "NCCL INFO fake tuner: hello from v5");
}

static void test_foreign(void)
{
	const char *args[] = { "--model", "pcie-gen5-8gpu", "--noise", "0", "--bytes", "43008",
	                       NULL };
	char e[1200];

	snprintf(e, sizeof e, "NCCL_TUNER_PLUGIN=%s", fake);
	/* no opinion: exactly NCCL's own */
	pr_run(args, no_env, true, &B);
	pr_run(args, (const char *[]){ e, NULL }, true, &A);
	CHECK_STR(A.out, B.out);
	/* a plugin that revives Ring/LL128 (IGNORE on PCIe) makes NCCL run it, and the box's
	 * failure rule for LL128 applies */
	pr_run(args, (const char *[]){ e, "FAKE_TUNER=revive:1,1", NULL }, true, &A);
	CHECK_INT(A.rc, 1);
	CHECK_STR(proto_stage_name(A.r.stage), "verify");
	CHECK_CONTAINS(A.r.error, "LL128 forced over PCIe");
	/* a revived pair the machine has no channels for: NVLS without NVSwitch */
	pr_run(args, (const char *[]){ e, "FAKE_TUNER=revive:4,2", NULL }, true, &A);
	CHECK_INT(A.rc, 1);
	CHECK_STR(proto_stage_name(A.r.stage), "capture");
	CHECK_CONTAINS(A.r.error, "NVLS/Simple for 43008 bytes, which its cost table had ruled out");
	/* no usable entry left: NCCL's error */
	pr_run(args, (const char *[]){ e, "FAKE_TUNER=ignore-all", NULL }, true, &A);
	CHECK_STR(proto_stage_name(A.r.stage), "capture");
	CHECK_CONTAINS(A.r.error, "no algorithm/protocol available");
	/* init and getCollInfo errors fail the communicator / the collective */
	pr_run(args, (const char *[]){ e, "FAKE_TUNER=init-fail", NULL }, true, &A);
	CHECK_STR(proto_stage_name(A.r.stage), "init");
	CHECK_CONTAINS(A.r.error, "returned 3 from init");
	pr_run(args, (const char *[]){ e, "FAKE_TUNER=coll-fail", NULL }, true, &A);
	CHECK_STR(proto_stage_name(A.r.stage), "init");
	CHECK_CONTAINS(A.r.error, "returned 3 from getCollInfo for 43008 bytes");
	/* CTAs only: NCCL's pair on that many CTAs, capped by the communicator's 16 */
	pr_run(args, (const char *[]){ e, "FAKE_TUNER=ctas:3", NULL }, true, &A);
	check_decision(&A.r.results[0], 1, 0, 3);
	pr_run(args, (const char *[]){ e, "FAKE_TUNER=ctas:64", NULL }, true, &A);
	check_decision(&A.r.results[0], 1, 0, 11);   /* 43008 B of LL: 11 cells of traffic */
	pr_run(args, (const char *[]){ e, "FAKE_TUNER=ctas:64", "NCCL_MAX_NCHANNELS=4", NULL }, true,
	       &A);
	check_decision(&A.r.results[0], 1, 0, 4);
}

/* ---- in-process: model_force_rule decides as the built plugin does ---- */

static void test_rule_equals_plugin(void)
{
	static const char *const envs[][3] = {
		{ NULL }, { "NCCL_PROTO=^LL128", NULL }, { "NCCL_ALGO=Ring", NULL },
		{ "NCCL_NVLS_ENABLE=1", NULL }, { "NCCL_PROTO=LL128", "NCCL_ALGO=Tree", NULL },
	};
	static const size_t sizes[] = { 1024, 43008, 1048576, 117440512 };
	struct model_tuner *t;
	int (*force)(const struct nccltune_tuner_force *);
	void *h, *ctx = NULL;
	char why[512], err[256];
	int compared = 0;

	t = model_tuner_open(plugin, "2.28.9", why, sizeof why);
	h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
	CHECK(t != NULL && h != NULL);
	if (!t || !h)
		return;
	*(void **)&force = dlsym(h, "nccltune_tuner_force");
	CHECK(force != NULL);
	unsetenv("NCCLTUNE_TUNER_TABLE");
	CHECK_INT(model_tuner_init(t, 8, 1, 1, &ctx), 0);
	for (size_t mi = 0; mi < model_builtin_count() && force; mi++) {
		struct model *m = model_load_builtin(model_builtin_name(mi), err, sizeof err);

		for (size_t ei = 0; m && ei < sizeof envs / sizeof envs[0]; ei++) {
			struct proto_workload w;
			struct model_env env;
			struct model_costs tables[4];

			model_env_read(model_getenv_envp, (void *)(uintptr_t)envs[ei], &env);
			proto_workload_defaults(&w);
			w.nsizes = 4;
			memcpy(w.bytes, sizes, sizeof sizes);
			model_cost_tables(m, &env, &w, tables);
			for (int a = -1; a < MODEL_NALGOS; a++)
				for (int p = -1; p < MODEL_NPROTOS; p++)
					for (int ctas = 0; ctas <= 5; ctas += 5)
						for (size_t i = 0; i < 4; i++) {
							struct nccltune_tuner_force f = { NCCLTUNE_TUNER_COLL_ALLREDUCE, a, p,
							                                  ctas, 0 };
							struct model_costs after = tables[i];
							struct model_force by_plugin[4], by_rule[4];
							struct model_eval_result r1, r2;
							int nch = 0;

							for (size_t k = 0; k < 4; k++)
								by_plugin[k] = by_rule[k] = (struct model_force){ -1, -1, 0 };
							CHECK_INT(force(&f), 0);
							CHECK_INT(model_tuner_ask(t, ctx, sizes[i], 1, &after, &nch), 0);
							force(NULL);
							CHECK_INT(model_force_from_table(&tables[i], &after, nch,
							                                 &by_plugin[i]), 0);
							model_force_rule(&tables[i], a, p, ctas, &by_rule[i]);
							model_eval_forced(m, &env, &w, by_plugin, &r1);
							model_eval_forced(m, &env, &w, by_rule, &r2);
							CHECK_INT(r1.ok, r2.ok);
							CHECK_INT(r1.choice[i].algo, r2.choice[i].algo);
							CHECK_INT(r1.choice[i].proto, r2.choice[i].proto);
							CHECK_INT(r1.choice[i].channels, r2.choice[i].channels);
							CHECK(r1.us[i] == r2.us[i]);
							compared++;
						}
		}
		model_destroy(m);
	}
	CHECK(compared > 2000);
	model_tuner_finalize(t, ctx);
	model_tuner_close(t);
	dlclose(h);
}

/* bench/'s way (model_eval_rules, no library) gives what the probe gives under the
 * plugin with the same rules in a table. */
static void test_rules_equal_probe(void)
{
	static const char *const models[] = { "pcie-gen5-8gpu", "nvlink-h200-8gpu",
	                                      "h200-nvlink-2gpu" };
	static const char *const tables[] = {
		"allreduce * * 43008 43008 ring ll 2 0\nallreduce * * 1048576 1048576 * simple 0 0\n",
		"allreduce * * 43008 43008 tree * 3 0\nallreduce * * 1048576 1048576 ring ll128 0 0\n",
	};
	static const struct model_force rules[2][3] = {
		{ { 1, 0, 2 }, { -1, 2, 0 }, { -1, -1, 0 } },
		{ { 0, -1, 3 }, { 1, 1, 0 }, { -1, -1, 0 } },
	};
	const char *args[] = { "", "", "--noise", "0", "--bytes", "43008,1048576,16777216", NULL };
	char err[256];

	for (size_t mi = 0; mi < 3; mi++)
		for (size_t ti = 0; ti < 2; ti++) {
			struct model *m = model_load_builtin(models[mi], err, sizeof err);
			struct proto_workload w;
			struct model_env env;
			struct model_eval_result res;
			bool unavailable[3];

			CHECK(m != NULL);
			if (!m)
				continue;
			args[0] = "--model";
			args[1] = models[mi];
			table("eq.table", tables[ti]);
			pr_run(args, (const char *[]){ env_plugin, env_table, NULL }, true, &A);
			proto_workload_defaults(&w);
			w.nsizes = 3;
			w.bytes[1] = 1048576;
			w.bytes[2] = 16777216;
			model_env_read(model_getenv_envp, (void *)(uintptr_t)no_env, &env);
			model_eval_rules(m, &env, &w, rules[ti], unavailable, &res);
			CHECK_INT(A.r.ok, res.ok);
			for (size_t i = 0; A.r.ok && res.ok && i < 3; i++) {
				struct proto_decision d = model_choice_decision(&res.choice[i]);

				CHECK_NEAR(A.r.results[i].us.median, res.us[i], 1e-9 * res.us[i]);
				CHECK(memcmp(&A.r.results[i].nccl, &d, sizeof d) == 0);
			}
			if (!A.r.ok && !res.ok)
				CHECK_STR(A.r.error, res.error);
			/* LL128 is IGNORE on the PCIe box and usable on NVLink */
			CHECK_INT(unavailable[1], ti == 1 && mi == 0);
			CHECK(!unavailable[0] && !unavailable[2]);
			model_destroy(m);
		}
}

static void test_forced_eval(void)
{
	char err[256];
	struct model *m = model_load_builtin("nvlink-h200-8gpu", err, sizeof err);
	struct model_eval_result plain, forced;
	struct model_force f[2] = { { -1, -1, 0 }, { -1, -1, 0 } };
	struct model_costs tables[2];
	struct proto_workload w;
	struct model_env env;

	CHECK(m != NULL);
	if (!m)
		return;
	model_env_read(model_getenv_envp, (void *)(uintptr_t)no_env, &env);
	proto_workload_defaults(&w);
	w.nsizes = 2;
	w.bytes[1] = 134217728;
	model_eval(m, &env, &w, &plain);
	model_eval_forced(m, &env, &w, f, &forced);
	CHECK(memcmp(&plain, &forced, sizeof plain) == 0);
	/* the tables are NCCL's belief: its own pick is their first minimum */
	model_cost_tables(m, &env, &w, tables);
	for (size_t i = 0; i < 2; i++) {
		struct model_force own;

		CHECK_INT(model_force_rule(&tables[i], plain.choice[i].algo, plain.choice[i].proto, 0,
		                           &own), 0);
		f[i] = own;
		CHECK(tables[i].t[MODEL_ALGO_PAT][MODEL_PROTO_SIMPLE] == MODEL_COST_IGNORE);
		CHECK(tables[i].t[MODEL_ALGO_COLLNET_DIRECT][MODEL_PROTO_LL] == MODEL_COST_IGNORE);
		CHECK(tables[i].t[MODEL_ALGO_NVLS][MODEL_PROTO_SIMPLE] == MODEL_COST_IGNORE); /* NVLS off */
		CHECK_NEAR(tables[i].t[plain.choice[i].algo][plain.choice[i].proto],
		           plain.choice[i].nccl_us, 1e-3 * plain.choice[i].nccl_us);
	}
	model_eval_forced(m, &env, &w, f, &forced);
	CHECK(memcmp(plain.us, forced.us, sizeof plain.us) == 0);
	CHECK(!forced.choice[0].tuned && !forced.choice[1].tuned);
	/* NCCL's use of an answer: an untouched table keeps NCCL's own pick (no force), an
	 * edited one is its first strict minimum >= 0, nChannels passes through */
	{
		struct model_costs edited = tables[0];
		struct model_force got;

		CHECK_INT(model_force_from_table(&tables[0], &tables[0], 0, &got), 0);
		CHECK(got.algo == -1 && got.proto == -1 && got.ctas == 0);
		CHECK_INT(model_force_from_table(&tables[0], &tables[0], 5, &got), 0);
		CHECK(got.algo == -1 && got.ctas == 5);
		edited.t[MODEL_ALGO_TREE][MODEL_PROTO_SIMPLE] = 0.5f;
		edited.t[MODEL_ALGO_TREE][MODEL_PROTO_LL] = 0.5f;      /* a tie: the first wins */
		CHECK_INT(model_force_from_table(&tables[0], &edited, 0, &got), 0);
		CHECK(got.algo == MODEL_ALGO_TREE && got.proto == MODEL_PROTO_LL);
		for (int a = 0; a < MODEL_NALGOS; a++)
			for (int p = 0; p < MODEL_NPROTOS; p++)
				edited.t[a][p] = MODEL_COST_IGNORE;
		edited.t[MODEL_ALGO_PAT][MODEL_PROTO_LL] = 4e9f;        /* above NCCL's start */
		CHECK_INT(model_force_from_table(&tables[0], &edited, 0, &got), -1);
	}
	/* CTAs are clamped to the communicator's channels */
	f[1].ctas = 64;
	model_eval_forced(m, &env, &w, f, &forced);
	CHECK_INT(forced.choice[1].channels, forced.choice[1].comm_channels);
	CHECK(forced.choice[1].tuned);
	/* a rule's IGNORE pair is refused; one given half is the cheapest of its row */
	CHECK_INT(model_force_rule(&tables[0], MODEL_ALGO_NVLS, MODEL_PROTO_SIMPLE, 4, &f[0]), 1);
	CHECK_INT(f[0].algo, -1);
	CHECK_INT(f[0].ctas, 0);
	CHECK_INT(model_force_rule(&tables[0], -1, MODEL_PROTO_SIMPLE, 0, &f[0]), 0);
	CHECK(f[0].proto == MODEL_PROTO_SIMPLE && (f[0].algo == MODEL_ALGO_RING ||
	                                           f[0].algo == MODEL_ALGO_TREE));
	CHECK_INT(model_force_rule(&tables[0], 9, 0, 0, &f[0]), 1);
	model_destroy(m);
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: %s PLUGIN FAKE FAKE_V4 FAKE_V6\n", argv[0]);
		return 2;
	}
	plugin = argv[1];
	fake = argv[2];
	fake4 = argv[3];
	fake6 = argv[4];
	if (pr_setup() != 0)
		return 1;
	snprintf(env_plugin, sizeof env_plugin, "NCCL_TUNER_PLUGIN=%s", plugin);
	test_rule_forces();
	test_ignore_not_revived();
	test_missing_and_names();
	test_versions();
	test_foreign();
	test_rule_equals_plugin();
	test_rules_equal_probe();
	test_forced_eval();
	proto_report_clear(&A.r);
	proto_report_clear(&B.r);
	pr_cleanup();
	return check_status();
}
