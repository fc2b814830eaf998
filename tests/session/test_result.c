/* test_result.c - the intervals of the final phase, and results.json's one type, one
 * writer and one reader: a summary filled in every part (per-size, guards, ablation,
 * attribution, tries, rules, server, step) is written, loaded and written again to the
 * same bytes; the fixtures round-trip too; and the loader refuses damage to each typed
 * part with the one message format "ORIGIN: a.b[2].c: why". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "fsutil.h"
#include "result/result.h"

static void test_intervals(void)
{
	double x[] = {1, 2, 3}, m, lo, hi, r;
	double base[] = {200, 210, 190, 205}, cand[] = {100, 105, 95, 102.5};

	/* t(0.975, 2) = 4.302653; sd 1; half-width 4.302653 / sqrt(3). */
	result_mean_ci(x, 3, &m, &lo, &hi);
	CHECK_NEAR(m, 2, 1e-12);
	CHECK_NEAR(hi - m, 4.302653 / sqrt(3.0), 1e-5);
	CHECK_NEAR(m - lo, 4.302653 / sqrt(3.0), 1e-5);
	result_mean_ci(x, 1, &m, &lo, &hi);
	CHECK(isnan(lo) && isnan(hi));

	/* Every round exactly 2x: ratio 2, a zero-width interval. */
	result_paired_gain(base, cand, 4, &r, &lo, &hi);
	CHECK_NEAR(r, 2.0, 1e-12);
	CHECK_NEAR(lo, 2.0, 1e-9);
	CHECK_NEAR(hi, 2.0, 1e-9);
	cand[0] = 120;
	result_paired_gain(base, cand, 4, &r, &lo, &hi);
	CHECK(r < 2.0 && lo < r && hi > r);
}

/* env of s from JSON text. */
static void env(struct summary *s, const char *json, struct summary_env *e)
{
	CHECK(result_keep_env(s, cJSON_Parse(json), e));
}

static void measure(struct summary *s, struct summary_measure *m, const char *json, double us,
                    int repeats)
{
	m->present = true;
	env(s, json, &m->env);
	m->objective_us = us;
	m->has_ci = repeats > 1;
	m->ci_lo = us * 0.99;
	m->ci_hi = us * 1.01;
	m->repeats = repeats;
}

/* The head and the measures: workload (guard, compute, window), fingerprint, server,
 * baseline, best (per_size, rules, step, server), top, gain, noise. */
static void fill_head(struct summary *s)
{
	static const char fp[] = "{\"schema\": \"nccltune-fingerprint/1\", \"source\": \"model\", "
	                         "\"gpu_count\": 8, \"extra\": {\"a probe's\": [1, 2]}}";
	struct summary_workload *w = &s->workload;

	s->tool_name = "nccltune";
	s->tool_version = "0.1.0";
	s->created = "2026-11-29T12:00:00Z";
	s->fp.doc = result_keep(s, cJSON_Parse(fp));
	s->source = "model";
	s->model = "pcie-gen5-8gpu";
	w->present = true;
	w->schema = "nccltune-workload/1";
	w->dtype = "bf16";
	w->c = calloc(1, sizeof *w->c);
	w->guard = calloc(1, sizeof *w->guard);
	CHECK(w->c && w->guard);
	w->c[0] = (struct summary_collective){"allreduce", 43008, 122};
	w->n = 1;
	w->guard[0] = 117440512;
	w->nguard = 1;
	w->has_compute = true;
	w->compute_kernel_us = 40.5;
	w->compute_ctas = 8;
	w->window_symmetric = true;
	s->strategy = "bo";
	s->has_seed = true;
	s->seed = 7;
	s->budget = 60;
	env(s, "{\"NCCL_IB_DISABLE\": \"1\"}", &s->pinned);
	s->server_like = "sglang";
	env(s, "{\"CUDA_DEVICE_MAX_CONNECTIONS\": \"1\"}", &s->server_env);
	measure(s, &s->baseline, "{}", 5000.123456, 4);
	s->baseline.has_step = true;
	s->baseline.step_allreduce_us = 2400.5;
	s->baseline.step_kernel_us = 40.25;
	measure(s, &s->best, "{\"NCCL_PROTO\": \"LL\", \"NCCL_ALGO\": \"Ring\"}", 2850.123456, 4);
	s->best.symmetric = true;
	s->best.kernel = "not symmetric";
	s->sizes = calloc(1, sizeof *s->sizes);
	s->rules = calloc(2, sizeof *s->rules);
	CHECK(s->sizes && s->rules);
	s->sizes[0] = (struct summary_size){43008, 23.45678};
	s->nsizes = 1;
	s->has_rules = true;
	s->rules[0] = (struct summary_rule){43008, 0, 0, 16, "Ring", "LL", true, 0, 0, 11, "Ring",
	                                    "LL"};   /* NCCL ran 11 of the 16 CTAs asked */
	s->rules[1] = (struct summary_rule){1048576, -1, 2, 0, NULL, "Simple", false, -1, -1, 0,
	                                    NULL, NULL};
	s->nrules = 2;
	s->top = calloc(2, sizeof *s->top);
	CHECK(s->top != NULL);
	s->ntop = 2;
	measure(s, &s->top[0], "{\"NCCL_PROTO\": \"LL\"}", 2850.1, 4);
	measure(s, &s->top[1], "{\"NCCL_PROTO\": \"Simple\"}", 2900.2, 1);
	s->top[1].symmetric = true;
	s->has_gain = true;
	s->gain = 1.75432;
	s->gain_lo = 1.7;
	s->gain_hi = 1.8;
	s->has_noise = true;
	s->noise_sd = 0.012345;
	s->noise_configs = 3;
	s->noise_dof = 9;
	s->evaluations = 57;
}

/* failures, pruned (an unset level), verdict, ablation, per_size, guards, tries. */
static void fill_tail(struct summary *s)
{
	s->failures = calloc(1, sizeof *s->failures);
	s->pruned = calloc(1, sizeof *s->pruned);
	s->ablation = calloc(2, sizeof *s->ablation);
	s->per_size = calloc(2, sizeof *s->per_size);
	s->guard_sizes = calloc(1, sizeof *s->guard_sizes);
	s->attribution = calloc(1, sizeof *s->attribution);
	s->tries = calloc(2, sizeof *s->tries);
	CHECK(s->failures && s->pruned && s->ablation && s->per_size && s->guard_sizes &&
	      s->attribution && s->tries);
	s->nfailures = s->npruned = s->nattribution = s->nguard_sizes = 1;
	env(s, "{\"NCCL_ALGO\": \"Tree\"}", &s->failures[0].env);
	s->failures[0].stage = "capture";
	s->failures[0].count = 2;
	s->failures[0].choice = "rule.43008.algo=Tree rule.43008.ctas=1";
	s->failures[0].error = "capture of sweep choice 24: unhandled cuda error";
	env(s, "{\"NCCL_ALGO\": \"Tree\", \"NCCL_PROTO\": null}", &s->pruned[0].when);
	s->pruned[0].reason = "Tree crashed in capture";
	s->verdict = SUMMARY_VERDICT_OK;
	s->nablation = 2;
	s->ablation[0] = (struct summary_ablation){"NCCL_ALGO", "Ring", "decision", true,
	                                            "NCCL ran Ring anyway", 35, {NAN, false, NAN, NAN}};
	s->ablation[1] = (struct summary_ablation){"NCCL_PROTO", "LL", "process", false, "kept",
	                                            0, {1.234567, true, 1.1, 1.3}};
	s->nper_size = 2;
	s->per_size[0] = (struct summary_size_cmp){43008, false, 200.5, 40.25, 0.2, true, 0.1, 0.3};
	s->per_size[1] = (struct summary_size_cmp){117440512, true, 34888.2, NAN, NAN, false, NAN,
	                                            NAN};
	s->guards_verdict = "measured_once";
	s->guard_sizes[0] = 117440512;
	env(s, "{\"NCCL_PROTO\": \"LL\"}", &s->attribution[0].env);
	s->attribution[0].var = "NCCL_PROTO";
	s->attribution[0].value = "LL";
	s->attribution[0].bytes = 117440512;
	s->attribution[0].rounds = 2;
	s->attribution[0].cost = (struct summary_ratio){1.97, false, NAN, NAN};
	s->ntries = 2;
	measure(s, &s->tries[0].m, "{\"NCCL_NTHREADS\": \"256\"}", 3000.5, 3);
	s->tries[0].outcome = "ok";
	s->tries[0].in_space = false;
	s->tries[0].has_ratio = true;
	s->tries[0] = (struct summary_try){s->tries[0].m, false, "ok", true, 1.6, 1.5, 1.7, true,
	                                   1.05, 1.01, 1.09};
	env(s, "{\"NCCL_ALGO\": \"Tree\"}", &s->tries[1].m.env);
	s->tries[1].in_space = true;
	s->tries[1].outcome = "capture";
	s->tries[1].ratio = s->tries[1].ratio_lo = s->tries[1].ratio_hi = NAN;
}

/* What the loader read back from the rich summary's bytes is that summary. */
static void check_rich(const struct summary *r)
{
	CHECK_STR(r->model, "pcie-gen5-8gpu");
	CHECK(r->fp.present && r->fp.gpu_count == 8);
	CHECK_INT(r->workload.nguard, 1);
	CHECK(r->workload.has_compute && r->workload.compute_ctas == 8);
	CHECK(r->workload.window_symmetric);
	CHECK_STR(r->server_like, "sglang");
	CHECK_NEAR(r->best.objective_us, 2850.1235, 1e-9);   /* 4 decimals */
	CHECK(r->best.has_step == false && r->baseline.has_step);
	CHECK(r->best.symmetric && r->best.kernel && strcmp(r->best.kernel, "not symmetric") == 0);
	CHECK_INT(r->nrules, 2);
	CHECK(r->nrules == 2 && r->rules[1].algo == -1 && r->rules[1].ctas == 0);
	CHECK(r->nrules == 2 && r->rules[0].has_ran && r->rules[0].ran_ctas == 11 &&
	      r->rules[0].ctas == 16 && !r->rules[1].has_ran);
	CHECK_NEAR(r->sizes[0].us, 23.4568, 1e-9);
	CHECK(r->ntop == 2 && r->top[1].symmetric && !r->top[1].has_ci);
	CHECK_NEAR(r->gain, 1.7543, 1e-9);
	CHECK_NEAR(r->noise_sd, 0.0123, 1e-9);
	CHECK(r->npruned == 1 && r->pruned[0].when.v[1].value == NULL);
	CHECK(r->nablation == 2 && isnan(r->ablation[0].removed.ratio));
	CHECK(r->nablation == 2 && r->ablation[0].run == 35);
	CHECK_NEAR(r->ablation[1].removed.ratio, 1.2346, 1e-12);
	CHECK(r->nper_size == 2 && isnan(r->per_size[1].best_us) && !r->per_size[1].has_ci);
	CHECK(r->nattribution == 1 && !r->attribution[0].cost.has_ci);
	CHECK_STR(r->guards_verdict, "measured_once");
	/* a guard paired once is never called ok, in words either (show, report) */
	CHECK_STR(summary_guards_text(r->guards_verdict), "not judged (measured once)");
	CHECK(r->ntries == 2 && r->tries[0].has_tuned && !r->tries[1].m.present);
	CHECK_NEAR(r->tries[0].tuned_hi, 1.09, 1e-12);
}

/* Write s, load it, write again: the same bytes, and the loaded summary holds the same
 * values (check, when given). Returns the first text (caller frees). */
static char *round_trip(const struct summary *s, const char *origin,
                        void (*check)(const struct summary *))
{
	char *t1 = result_text(s), *t2 = NULL, err[1024];
	struct summary *r = NULL;

	CHECK(t1 != NULL);
	if (!t1)
		return NULL;
	if (summary_parse(t1, strlen(t1), origin, &r, err, sizeof err) != 0) {
		fprintf(stderr, "%s\n", err);
		CHECK(!"the writer's bytes load");
		return t1;
	}
	if (check)
		check(r);
	t2 = result_text(r);
	CHECK(t2 != NULL);
	if (t2)
		CHECK_STR(t2, t1);
	free(t2);
	summary_destroy(r);
	return t1;
}

/* Each kind of damage to the written bytes (cJSON_Print: a tab after each key),
 * refused with the one message format. */
static void test_damage(const char *text)
{
	static const struct { const char *from, *to, *msg; } bad[] = {
		{"\"kernel_us\":\t40.5", "\"kernel_us\": \"40\"",
		 "t.json: workload.compute.kernel_us: expected a number"},
		{"\"guard\":\t[117440512]", "\"guard\": [1.5]", "t.json: workload.guard[0]:"},
		{"\"kernel\":\t\"not symmetric\"", "\"kernel\": \"maybe\"", "t.json: best.server.kernel:"},
		{"\"allreduce_us\":\t2400.5", "\"allreduce_us\": -1", "t.json: baseline.step.allreduce_us:"},
		{"\"proto\":\t\"Simple\"", "\"proto\": \"Fast\"", "t.json: best.rules[1].proto:"},
		{"\"ctas\":\t11", "\"ctas\": 0", "t.json: best.rules[0].nccl.ctas:"},
		{"\"role\":\t\"guard\"", "\"role\": \"other\"", "t.json: per_size[1].role:"},
		{"\"rounds\":\t2", "\"rounds\": 2, \"extra\": 1", "t.json: guards.attribution[0].extra:"},
		{"\"dropped\":\ttrue", "\"dropped\": 1", "t.json: ablation[0].dropped:"},
		{"\"tuned_vs_try\":\t{", "\"tuned_vs_try\": {\"ratio\": 1, ", "t.json: tries[0].tuned_vs_try.ratio:"},
		{"\"stage\":\t\"capture\"", "\"stage\": \"Capture\"", "t.json: failures[0].stage:"},
		{"\"run_sd\":\t0.0123", "\"run_sd\": 11", "t.json: noise.run_sd:"},
		{"\"evaluations\":\t57", "\"evaluations\": 57.5", "t.json: evaluations:"},
		{"\"NCCL_PROTO\":\t\"LL\",", "\"nccl_proto\": \"LL\",", "t.json: best.env.nccl_proto:"},
	};

	for (size_t i = 0; text && i < sizeof bad / sizeof bad[0]; i++) {
		const char *at = strstr(text, bad[i].from);
		char *edited, err[1024] = "";
		struct summary *s = NULL;
		size_t n;

		CHECK(at != NULL);
		if (!at) {
			fprintf(stderr, "no '%s' in the written text\n", bad[i].from);
			continue;
		}
		n = strlen(text) + strlen(bad[i].to) + 1;
		edited = malloc(n);
		CHECK(edited != NULL);
		if (!edited)
			return;
		snprintf(edited, n, "%.*s%s%s", (int)(at - text), text, bad[i].to,
		         at + strlen(bad[i].from));
		CHECK_INT(summary_parse(edited, strlen(edited), "t.json", &s, err, sizeof err), -1);
		CHECK_CONTAINS(err, bad[i].msg);
		summary_destroy(s);
		free(edited);
	}
}

/* The fixtures (written by make_fixtures.py, some by hand): what the loader reads from
 * them, written and loaded again, gives the same bytes. */
static void test_fixtures(const char *root)
{
	static const char *const dirs[] = {"measured", "model", "noconfig", "defaults-best",
	                                   "rules", NULL};

	for (size_t i = 0; dirs[i]; i++) {
		char path[4096], err[1024];
		struct summary *s = NULL;

		snprintf(path, sizeof path, "%s/tests/workflows/data/%s/results.json", root, dirs[i]);
		if (summary_load(path, 0, &s, err, sizeof err) != 0) {
			fprintf(stderr, "%s\n", err);
			CHECK(!"fixture loads");
			continue;
		}
		free(round_trip(s, path, NULL));
		summary_destroy(s);
	}
}

int main(void)
{
	const char *root = getenv("NCCLTUNE_SOURCE_ROOT");
	struct summary *s = result_new();
	char *text;

	test_intervals();
	CHECK(s != NULL);
	if (!s)
		return check_status();
	fill_head(s);
	fill_tail(s);
	text = round_trip(s, "t.json", check_rich);
	test_damage(text);
	free(text);
	summary_destroy(s);
	if (root)
		test_fixtures(root);
	else
		CHECK(!"NCCLTUNE_SOURCE_ROOT is set (run through meson test)");
	return check_status();
}
