/* overhead.c - what the tuner itself costs (issue #7): CPU time per suggestion of each
 * strategy after 50, 100, 200 and 400 observations on the default space, the CPU time a
 * whole session spends suggesting, and the model's own per-run cost in-process.
 *
 * The CPU times are MEASUREMENTS on the CPU this runs on (process CPU time, so any
 * thread a strategy might start is counted). The observations fed to the strategies come
 * from a machine MODEL; only their number and shape matter here. The share of a session's
 * wall time is computed from these measurements and the session wall time given with
 * --session-wall (measured by bench/run.sh) or an assumed probe run time (--probe-s). */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_stats.h"
#include "landscape.h"
#include "model.h"
#include "search/prune.h"
#include "search/strategy.h"

#define MAX_STRATEGIES 8
#define MAX_LEVELS_OBS 8
#define MAX_REPS 101

struct options {
	const char *strategies[MAX_STRATEGIES];
	size_t nstrategies;
	long obs[MAX_LEVELS_OBS];
	size_t nobs;
	long reps, session_budget, session_runs, eval_reps;
	const char *model;
	double session_wall_s, probe_s;
};

static double process_cpu_s(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
		return NAN;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A uniformly random point that sp allows and pr does not reject (rejection sampling:
 * about half the default space is allowed). Returns 0, or -1 after many misses. */
static int random_point(const space *sp, const prune *pr, gsl_rng *rng, struct point *p)
{
	for (int tries = 0; tries < 100000; tries++) {
		memset(p, 0, sizeof *p);
		for (size_t d = 0; d < space_dims(sp); d++)
			p->lv[d] = (uint32_t)gsl_rng_uniform_int(rng, space_levels(sp, d));
		if (space_allows(sp, p) && !prune_rejects(pr, p))
			return 0;
	}
	return -1;
}

/* Median CPU ms of `reps` suggestions by `name` after `nobs` model observations of
 * random points; each timed suggestion is then run on the model and observed, as in a
 * session. Returns the median, or NAN with a message on stderr. */
static double time_suggestions(const char *name, struct landscape *ls, const space *sp,
                               long nobs, long reps)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng *pick = gsl_rng_alloc(gsl_rng_mt19937);
	prune *pr = prune_create(sp, 0);
	struct outcome *o = malloc(sizeof *o);
	strategy *st = NULL;
	double ms[MAX_REPS], result = NAN;
	long n = 0;
	char err[1024];

	if (!rng || !pick || !pr || !o) {
		fprintf(stderr, "bench-overhead: out of memory\n");
		goto out;
	}
	gsl_rng_set(rng, 1);
	gsl_rng_set(pick, 2);
	st = strategy_create(name, sp, rng, pr, err, sizeof err);
	if (!st) {
		fprintf(stderr, "bench-overhead: %s\n", err);
		goto out;
	}
	for (long i = 0; i < nobs; i++) {
		struct point p;

		if (random_point(sp, pr, pick, &p) != 0) {
			fprintf(stderr, "bench-overhead: no eligible point left to observe\n");
			goto out;
		}
		if (landscape_measure(ls, &p, (unsigned long)i + 1, o, err, sizeof err) != 0) {
			fprintf(stderr, "bench-overhead: %s\n", err);
			goto out;
		}
		prune_observe(pr, &p, o);
		strategy_observe(st, &p, o);
	}
	for (long r = 0; r < reps; r++) {
		struct point p;
		double t0 = process_cpu_s();
		int s = strategy_suggest(st, &p, err, sizeof err);

		ms[n] = 1e3 * (process_cpu_s() - t0);
		if (s != 0) {
			fprintf(stderr, "bench-overhead: %s after %ld observations: %s\n", name,
			        nobs + r, s > 0 ? "space exhausted" : err);
			goto out;
		}
		n++;
		if (landscape_measure(ls, &p, (unsigned long)(nobs + r) + 1, o, err, sizeof err) != 0) {
			fprintf(stderr, "bench-overhead: %s\n", err);
			goto out;
		}
		prune_observe(pr, &p, o);
		strategy_observe(st, &p, o);
	}
	result = bench_median(ms, (size_t)n);
out:
	strategy_destroy(st);
	prune_destroy(pr);
	free(o);
	gsl_rng_free(pick);
	gsl_rng_free(rng);
	return result;
}

/* A session loop of `budget` runs (baseline first) of `name` on the model, seed 1:
 * total CPU seconds spent in strategy_suggest (*suggest_s) and in the model's
 * in-process evaluation (*eval_s). Returns 0, or -1 with a message on stderr. */
static int time_session(const char *name, struct landscape *ls, const space *sp, long budget,
                        double *suggest_s, double *eval_s, long *suggestions)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	prune *pr = prune_create(sp, 0);
	struct outcome *o = malloc(sizeof *o);
	strategy *st = NULL;
	char err[1024];
	int rc = -1;

	*suggest_s = *eval_s = 0;
	*suggestions = 0;
	if (!rng || !pr || !o) {
		fprintf(stderr, "bench-overhead: out of memory\n");
		goto out;
	}
	gsl_rng_set(rng, 1);
	st = strategy_create(name, sp, rng, pr, err, sizeof err);
	if (!st) {
		fprintf(stderr, "bench-overhead: %s\n", err);
		goto out;
	}
	for (long run = 0; run < budget; run++) {
		struct point p;
		double t0;

		if (run > 0) {
			int s;

			t0 = process_cpu_s();
			s = strategy_suggest(st, &p, err, sizeof err);
			*suggest_s += process_cpu_s() - t0;
			if (s == 1)
				break;
			if (s != 0) {
				fprintf(stderr, "bench-overhead: %s: %s\n", name, err);
				goto out;
			}
			(*suggestions)++;
		}
		t0 = process_cpu_s();
		if (landscape_measure(ls, run > 0 ? &p : NULL, (unsigned long)run + 1, o, err,
		                      sizeof err) != 0) {
			fprintf(stderr, "bench-overhead: %s\n", err);
			goto out;
		}
		*eval_s += process_cpu_s() - t0;
		if (run > 0) {
			prune_observe(pr, &p, o);
			strategy_observe(st, &p, o);
		}
	}
	rc = 0;
out:
	strategy_destroy(st);
	prune_destroy(pr);
	free(o);
	gsl_rng_free(rng);
	return rc;
}

/* Median CPU microseconds of one in-process model run (environment, evaluation, noisy
 * report of --iters samples, objective) over `reps` random points. NAN on error. */
static double time_model_eval(struct landscape *ls, const space *sp, long reps)
{
	gsl_rng *pick = gsl_rng_alloc(gsl_rng_mt19937);
	prune *pr = prune_create(sp, 0);
	struct outcome *o = malloc(sizeof *o);
	double *us = calloc((size_t)reps, sizeof *us), result = NAN;
	char err[1024];

	if (!pick || !pr || !o || !us) {
		fprintf(stderr, "bench-overhead: out of memory\n");
		goto out;
	}
	gsl_rng_set(pick, 3);
	for (long i = 0; i < reps; i++) {
		struct point p;
		double t0;

		if (random_point(sp, pr, pick, &p) != 0) {
			fprintf(stderr, "bench-overhead: no eligible point to evaluate\n");
			goto out;
		}
		t0 = process_cpu_s();
		if (landscape_measure(ls, &p, (unsigned long)i + 1, o, err, sizeof err) != 0) {
			fprintf(stderr, "bench-overhead: %s\n", err);
			goto out;
		}
		us[i] = 1e6 * (process_cpu_s() - t0);
	}
	result = bench_median(us, (size_t)reps);
out:
	free(us);
	free(o);
	prune_destroy(pr);
	gsl_rng_free(pick);
	return result;
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: bench-overhead [--strategy NAME]... [--obs N]... [--reps K] [--model NAME]\n"
	        "                      [--session-budget N] [--session-wall SECONDS]\n"
	        "                      [--session-runs N] [--probe-s SECONDS] [--eval-reps N]\n"
	        "CPU time per suggestion (MEASURED on this CPU) after N observations of a MODEL\n"
	        "(default 50 100 200 400; median of K=5 suggestions), the suggestion CPU of a\n"
	        "whole session of --session-budget runs (60), and its share of a session's wall\n"
	        "time: measured (--session-wall, --session-runs: a real `nccltune run` of the\n"
	        "same budget) and computed for --probe-s seconds per probe run (3).\n");
}

static int parse_double(const char *opt, const char *arg, double *out)
{
	char *end = NULL;
	double v = arg ? strtod(arg, &end) : NAN;

	if (!arg || end == arg || *end != '\0' || !(v >= 0) || !isfinite(v)) {
		fprintf(stderr, "bench-overhead: %s: '%s' is not a number >= 0\n", opt,
		        arg ? arg : "");
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_options(int argc, char **argv, struct options *opt)
{
	char err[256];

	memset(opt, 0, sizeof *opt);
	opt->reps = 5;
	opt->session_budget = 60;
	opt->eval_reps = 2000;
	opt->model = "pcie-gen5-8gpu";
	opt->session_wall_s = NAN;
	opt->probe_s = 3.0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int rc = 0;

		if (strcmp(a, "--help") == 0) {
			usage(stdout);
			return 1;
		} else if (strcmp(a, "--strategy") == 0 && v && opt->nstrategies < MAX_STRATEGIES) {
			opt->strategies[opt->nstrategies++] = v;
			i++;
		} else if (strcmp(a, "--obs") == 0 && opt->nobs < MAX_LEVELS_OBS) {
			rc = bench_parse_count(a, v, 1, 5000, &opt->obs[opt->nobs++], err, sizeof err);
			i++;
		} else if (strcmp(a, "--reps") == 0) {
			rc = bench_parse_count(a, v, 1, MAX_REPS, &opt->reps, err, sizeof err);
			i++;
		} else if (strcmp(a, "--eval-reps") == 0) {
			rc = bench_parse_count(a, v, 1, 1000000, &opt->eval_reps, err, sizeof err);
			i++;
		} else if (strcmp(a, "--session-budget") == 0) {
			rc = bench_parse_count(a, v, 2, 10000, &opt->session_budget, err, sizeof err);
			i++;
		} else if (strcmp(a, "--session-runs") == 0) {
			rc = bench_parse_count(a, v, 1, 100000, &opt->session_runs, err, sizeof err);
			i++;
		} else if (strcmp(a, "--model") == 0 && v) {
			opt->model = v;
			i++;
		} else if (strcmp(a, "--session-wall") == 0) {
			if (parse_double(a, v, &opt->session_wall_s) != 0)
				return -1;
			i++;
		} else if (strcmp(a, "--probe-s") == 0) {
			if (parse_double(a, v, &opt->probe_s) != 0)
				return -1;
			i++;
		} else {
			fprintf(stderr, "bench-overhead: unknown or incomplete option '%s'\n", a);
			usage(stderr);
			return -1;
		}
		if (rc != 0) {
			fprintf(stderr, "bench-overhead: %s\n", err);
			return -1;
		}
	}
	if (opt->nstrategies == 0)
		for (size_t i = 0; strategy_names[i] && i < MAX_STRATEGIES; i++)
			opt->strategies[opt->nstrategies++] = strategy_names[i];
	if (opt->nobs == 0) {
		static const long def[] = {50, 100, 200, 400};

		for (size_t i = 0; i < 4; i++)
			opt->obs[opt->nobs++] = def[i];
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options opt;
	struct workload w;
	space *sp = NULL;
	struct landscape *ls = NULL;
	double bo_ms200 = NAN, bo_suggest_s = NAN, eval_us;
	char err[1024];
	int rc = 1, po;

	gsl_set_error_handler_off();
	po = parse_options(argc, argv, &opt);
	if (po != 0)
		return po > 0 ? 0 : 2;
	sp = space_default();
	if (!sp) {
		fprintf(stderr, "bench-overhead: out of memory\n");
		goto out;
	}
	workload_default(&w);
	ls = landscape_open(opt.model, sp, &w, err, sizeof err);
	if (!ls) {
		fprintf(stderr, "bench-overhead: %s\n", err);
		goto out;
	}

	printf("### CPU time per suggestion (MEASURED on this CPU; ms, median of %ld "
	       "suggestions; default space; observations from the MODEL %s)\n\n", opt.reps,
	       opt.model);
	printf("| strategy |");
	for (size_t k = 0; k < opt.nobs; k++)
		printf(" %ld obs |", opt.obs[k]);
	printf("\n| --- |");
	for (size_t k = 0; k < opt.nobs; k++)
		printf(" ---: |");
	printf("\n");
	for (size_t s = 0; s < opt.nstrategies; s++) {
		printf("| %s |", opt.strategies[s]);
		fflush(stdout);
		for (size_t k = 0; k < opt.nobs; k++) {
			double ms = time_suggestions(opt.strategies[s], ls, sp, opt.obs[k], opt.reps);

			if (isnan(ms))
				goto out;
			if (strcmp(opt.strategies[s], "bo") == 0 && opt.obs[k] == 200)
				bo_ms200 = ms;
			printf(" %.3f |", ms);
			fflush(stdout);
		}
		printf("\n");
	}
	if (!isnan(bo_ms200))
		printf("\nTarget: <= 50 ms per bo suggestion at 200 observations: %s (%.1f ms).\n",
		       bo_ms200 <= 50.0 ? "met" : "MISSED", bo_ms200);

	printf("\n### A whole session's suggestions (MEASURED CPU; %ld runs, baseline first, on "
	       "the MODEL %s, seed 1; in-process)\n\n", opt.session_budget, opt.model);
	printf("| strategy | suggestions | suggestion CPU total (s) | per suggestion (ms) "
	       "| in-process model runs CPU (s) | share of a session of %ld probe runs of %.1f s "
	       "(COMPUTED) |\n", opt.session_budget, opt.probe_s);
	printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
	for (size_t s = 0; s < opt.nstrategies; s++) {
		double sug, ev, share;
		long n;

		if (time_session(opt.strategies[s], ls, sp, opt.session_budget, &sug, &ev, &n) != 0)
			goto out;
		if (strcmp(opt.strategies[s], "bo") == 0)
			bo_suggest_s = sug;
		share = sug / (sug + (double)opt.session_budget * opt.probe_s);
		printf("| %s | %ld | %.3f | %.2f | %.3f | %.2g%% |\n", opt.strategies[s], n, sug,
		       n ? 1e3 * sug / (double)n : 0.0, ev, 100.0 * share);
	}
	if (!isnan(opt.session_wall_s) && !isnan(bo_suggest_s) && opt.session_wall_s > 0) {
		printf("\nA real `nccltune run --model %s --budget %ld` session took %.2f s wall "
		       "(MEASURED by bench/run.sh", opt.model, opt.session_budget,
		       opt.session_wall_s);
		if (opt.session_runs > 0)
			printf(", %ld probe runs in its journal", opt.session_runs);
		printf("); bo's suggestions in the equivalent in-process loop above took %.3f s "
		       "CPU: %.1f%% of that wall time (model probe runs are very fast, so this "
		       "share is far larger than on real GPUs).\n", bo_suggest_s,
		       100.0 * bo_suggest_s / opt.session_wall_s);
		if (opt.session_runs > 0)
			printf("With %ld real probe runs of %.1f s each (COMPUTED, not measured) the share "
			       "would be %.3f%%.\n", opt.session_runs, opt.probe_s,
			       100.0 * bo_suggest_s /
			       (bo_suggest_s + (double)opt.session_runs * opt.probe_s));
	}

	eval_us = time_model_eval(ls, sp, opt.eval_reps);
	if (isnan(eval_us))
		goto out;
	printf("\n### The model's own cost in-process (MEASURED CPU)\n\n"
	       "One model run of %s (environment, evaluation, %d noisy replay samples, "
	       "objective): %.1f us CPU, median of %ld random configurations.\n", opt.model,
	       w.iters, eval_us, opt.eval_reps);
	rc = fflush(stdout) == 0 ? 0 : 1;
out:
	landscape_close(ls);
	space_destroy(sp);
	return rc;
}
