/* overhead.c - what the tuner itself costs (issue #7): CPU time per suggestion of each
 * strategy after 50 to 2000 observations on the default space, the CPU time a whole
 * session spends suggesting, the model's own per-run cost in-process, and (with
 * --long-budget) long sessions: suggestion CPU and the recommendation's regret after
 * hundreds or thousands of runs (issue #12: the bo surrogate must scale).
 *
 * The CPU times are MEASUREMENTS on the CPU this runs on (process CPU time, so any
 * thread a strategy might start is counted). The observations fed to the strategies come
 * from a machine MODEL; only their number and shape matter here. The share of a session's
 * wall time is computed from these measurements and the session wall time given with
 * --session-wall (measured by bench/run.sh) or an assumed probe run time (--probe-s). */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <pthread.h>
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
#define MAX_LEVELS_OBS 12
#define MAX_REPS 101
#define MAX_MODELS 8
#define MAX_CHECKS 8
#define MAX_LONG_BUDGET 10000
#define LONG_TAIL 50             /* suggestions before a checkpoint timed as "late" */

struct options {
	const char *strategies[MAX_STRATEGIES];
	size_t nstrategies;
	long obs[MAX_LEVELS_OBS];
	size_t nobs;
	long reps, session_budget, session_runs, eval_reps;
	const char *model;
	double session_wall_s, probe_s;
	/* long sessions (--long-budget) */
	long checks[MAX_CHECKS];
	size_t nchecks;
	const char *long_models[MAX_MODELS];
	size_t nlong_models;
	long long_seeds, long_first_seed, jobs;
	bool long_only;
};

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

		if (landscape_random_point(sp, pr, pick, &p) != 0) {
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
		double t0 = bench_process_cpu_s();
		int s = strategy_suggest(st, &p, err, sizeof err);

		ms[n] = 1e3 * (bench_process_cpu_s() - t0);
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

			t0 = bench_process_cpu_s();
			s = strategy_suggest(st, &p, err, sizeof err);
			*suggest_s += bench_process_cpu_s() - t0;
			if (s == 1)
				break;
			if (s != 0) {
				fprintf(stderr, "bench-overhead: %s: %s\n", name, err);
				goto out;
			}
			(*suggestions)++;
		}
		t0 = bench_process_cpu_s();
		if (landscape_measure(ls, run > 0 ? &p : NULL, (unsigned long)run + 1, o, err,
		                      sizeof err) != 0) {
			fprintf(stderr, "bench-overhead: %s\n", err);
			goto out;
		}
		*eval_s += bench_process_cpu_s() - t0;
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

		if (landscape_random_point(sp, pr, pick, &p) != 0) {
			fprintf(stderr, "bench-overhead: no eligible point to evaluate\n");
			goto out;
		}
		t0 = bench_process_cpu_s();
		if (landscape_measure(ls, &p, (unsigned long)i + 1, o, err, sizeof err) != 0) {
			fprintf(stderr, "bench-overhead: %s\n", err);
			goto out;
		}
		us[i] = 1e6 * (bench_process_cpu_s() - t0);
	}
	result = bench_median(us, (size_t)reps);
out:
	free(us);
	free(o);
	prune_destroy(pr);
	gsl_rng_free(pick);
	return result;
}

/* ---- long sessions ---- */

/* One long session of `strategy` on one model and seed: the recommendation's regret at
 * each checkpoint (MODEL numbers) and the suggestion CPU (MEASURED, this thread). */
struct long_job {
	const space *sp;
	struct landscape *ls;
	double opt_us;                   /* the model's exhaustive optimum, noise 0 */
	const char *model, *strategy;
	unsigned long seed;
	const long *checks;
	size_t nchecks;
	/* results per checkpoint */
	double regret[MAX_CHECKS];       /* +inf: nothing working recommended */
	double best_run[MAX_CHECKS];     /* regret of the best point run so far */
	double suggest_s[MAX_CHECKS];    /* suggestion CPU up to the checkpoint */
	double late_ms[MAX_CHECKS];      /* mean CPU ms of the LONG_TAIL suggestions before it */
	double recommend_ms[MAX_CHECKS]; /* CPU of the recommendation at the checkpoint */
	long runs;                       /* runs made (fewer than the budget: exhausted) */
	int rc;
	char err[512];
};

struct long_pool {
	struct long_job *jobs;
	size_t njobs, next;
	pthread_mutex_t lock;
};

static double long_regret(const struct long_job *j, const struct point *p)
{
	enum outcome_class cls;
	double y;
	char err[256];
	int ok = landscape_exact(j->ls, p, &y, &cls, err, sizeof err);

	return ok == 1 ? y / j->opt_us - 1.0 : INFINITY;
}

/* The session loop of search_efficiency.c: the baseline as run 1, then suggest -> one
 * noisy model run (a crash, hang or garbage is run once more) -> prune and strategy
 * observe, up to the last checkpoint. Returns 0, or -1 with j->err. */
static int long_run(struct long_job *j)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	prune *pr = prune_create(j->sp, 0);
	struct outcome *o = malloc(sizeof *o);
	double *ms = NULL, suggest_s = 0, best_run = INFINITY;
	strategy *st = NULL;
	long budget = j->checks[j->nchecks - 1], evals = 0, nsug = 0;
	size_t next_check = 0;
	int rc = -1;

	for (size_t k = 0; k < j->nchecks; k++)
		j->regret[k] = j->best_run[k] = j->suggest_s[k] = j->late_ms[k] =
			j->recommend_ms[k] = NAN;
	ms = calloc((size_t)budget, sizeof *ms);
	if (!rng || !pr || !o || !ms) {
		snprintf(j->err, sizeof j->err, "out of memory");
		goto out;
	}
	gsl_rng_set(rng, j->seed);
	st = strategy_create(j->strategy, j->sp, rng, pr, j->err, sizeof j->err);
	if (!st)
		goto out;
	while (evals < budget) {
		struct point p;
		bool baseline = evals == 0;
		bool exhausted = false;

		memset(&p, 0, sizeof p);
		if (!baseline) {
			double t0 = bench_thread_cpu_s();
			int s = strategy_suggest(st, &p, j->err, sizeof j->err);
			double dt = bench_thread_cpu_s() - t0;

			if (s < 0)
				goto out;
			exhausted = s == 1;
			if (!exhausted) {
				suggest_s += dt;
				ms[nsug++] = 1e3 * dt;
			}
		}
		if (!exhausted) {
			unsigned long nseed = j->seed * 100003UL + (unsigned long)evals;

			if (landscape_measure(j->ls, baseline ? NULL : &p, nseed, o, j->err,
			                      sizeof j->err) != 0)
				goto out;
			evals++;
			if (outcome_class_flaky(o->cls) && evals < budget) {
				if (landscape_measure(j->ls, baseline ? NULL : &p,
				                      j->seed * 100003UL + (unsigned long)evals, o, j->err,
				                      sizeof j->err) != 0)
					goto out;
				evals++;
			}
			if (!baseline) {
				prune_observe(pr, &p, o);
				strategy_observe(st, &p, o);
				if (o->cls == OUTCOME_OK) {
					double r = long_regret(j, &p);

					best_run = r < best_run ? r : best_run;
				}
			}
		}
		/* every checkpoint this run reached (all of them once the space is exhausted) */
		while (next_check < j->nchecks && (exhausted || evals >= j->checks[next_check])) {
			struct point rp;
			double est, t0 = bench_thread_cpu_s(), late = 0;
			int s = strategy_recommend(st, &rp, &est);
			long tail = nsug < LONG_TAIL ? nsug : LONG_TAIL;

			j->recommend_ms[next_check] = 1e3 * (bench_thread_cpu_s() - t0);
			if (s < 0) {
				snprintf(j->err, sizeof j->err, "strategy_recommend: out of memory");
				goto out;
			}
			j->regret[next_check] = s == 0 ? long_regret(j, &rp) : INFINITY;
			j->best_run[next_check] = best_run;
			j->suggest_s[next_check] = suggest_s;
			for (long i = nsug - tail; i < nsug; i++)
				late += ms[i] / (double)tail;
			j->late_ms[next_check] = tail ? late : NAN;
			next_check++;
		}
		if (exhausted)
			break;
	}
	j->runs = evals;
	rc = 0;
out:
	strategy_destroy(st);
	prune_destroy(pr);
	free(o);
	free(ms);
	if (rng)
		gsl_rng_free(rng);
	return rc;
}

static void *long_worker(void *arg)
{
	struct long_pool *pool = arg;

	for (;;) {
		struct long_job *j;

		pthread_mutex_lock(&pool->lock);
		j = pool->next < pool->njobs ? &pool->jobs[pool->next++] : NULL;
		pthread_mutex_unlock(&pool->lock);
		if (!j)
			return NULL;
		j->rc = long_run(j);
		fprintf(stderr, "bench-overhead: long session %s %s seed %lu: %ld runs%s\n",
		        j->model, j->strategy, j->seed, j->runs, j->rc ? " FAILED" : "");
	}
}

static const char *fmt_regret(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (isinf(v))
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "%.1f%%", 100.0 * v);
	return buf;
}

/* The long-session section: every (model, strategy, seed) on `jobs` threads, one row
 * per session and a median row per (model, strategy). Returns 0, or -1 with a message
 * on stderr. */
static int long_sessions(const struct options *opt, const space *sp,
                         const struct workload *w)
{
	struct landscape *ls[MAX_MODELS] = {NULL};
	double opt_us[MAX_MODELS];
	size_t nm = opt->nlong_models, ns = opt->nstrategies, nseeds = (size_t)opt->long_seeds;
	size_t nj = nm * ns * nseeds, nthreads = (size_t)opt->jobs;
	struct long_pool pool = {.jobs = calloc(nj, sizeof *pool.jobs), .njobs = nj};
	pthread_t th[64];
	size_t started = 0;
	char err[1024];
	int rc = -1;

	if (!pool.jobs) {
		fprintf(stderr, "bench-overhead: out of memory\n");
		return -1;
	}
	pthread_mutex_init(&pool.lock, NULL);
	for (size_t m = 0; m < nm; m++) {
		struct landscape_optimum lo;

		ls[m] = landscape_open(opt->long_models[m], sp, w, err, sizeof err);
		if (!ls[m] || landscape_optimum(ls[m], &lo, err, sizeof err) != 0) {
			fprintf(stderr, "bench-overhead: %s\n", err);
			goto out;
		}
		opt_us[m] = lo.best_us;
	}
	for (size_t m = 0, k = 0; m < nm; m++) {
		for (size_t s = 0; s < ns; s++) {
			for (size_t i = 0; i < nseeds; i++, k++) {
				struct long_job *j = &pool.jobs[k];

				j->sp = sp;
				j->ls = ls[m];
				j->opt_us = opt_us[m];
				j->model = opt->long_models[m];
				j->strategy = opt->strategies[s];
				j->seed = (unsigned long)(opt->long_first_seed + (long)i);
				j->checks = opt->checks;
				j->nchecks = opt->nchecks;
			}
		}
	}
	if (nthreads > nj)
		nthreads = nj;
	if (nthreads > sizeof th / sizeof th[0])
		nthreads = sizeof th / sizeof th[0];
	for (; started < nthreads; started++) {
		if (pthread_create(&th[started], NULL, long_worker, &pool) != 0) {
			fprintf(stderr, "bench-overhead: pthread_create failed\n");
			break;
		}
	}
	if (started == 0)
		goto out;
	for (size_t t = 0; t < started; t++)
		pthread_join(th[t], NULL);
	for (size_t k = 0; k < nj; k++) {
		if (pool.jobs[k].rc != 0) {
			fprintf(stderr, "bench-overhead: long session %s %s seed %lu: %s\n",
			        pool.jobs[k].model, pool.jobs[k].strategy, pool.jobs[k].seed,
			        pool.jobs[k].err);
			goto out;
		}
	}

	printf("\n### Long sessions (regret: MODEL numbers; CPU: MEASURED on this CPU, per "
	       "thread; %zu seed(s) from %ld)\n\n", nseeds, opt->long_first_seed);
	printf("Each row is one session loop in-process, as in bench-search-efficiency (the "
	       "baseline as run 1, a crash, hang or garbage run once more). Regret@N: the "
	       "strategy's recommendation after N runs, noise-free, against the exhaustive "
	       "optimum; best run@N: the best point it ran; late ms: mean CPU per suggestion "
	       "over the %d suggestions before N; rec ms: CPU of the recommendation at N.\n\n",
	       LONG_TAIL);
	printf("| model | strategy | seed |");
	for (size_t c = 0; c < opt->nchecks; c++)
		printf(" regret@%ld | best run@%ld | late ms@%ld | rec ms@%ld |", opt->checks[c],
		       opt->checks[c], opt->checks[c], opt->checks[c]);
	printf(" suggestion CPU (s) |\n| --- | --- | --- |");
	for (size_t c = 0; c < opt->nchecks; c++)
		printf(" ---: | ---: | ---: | ---: |");
	printf(" ---: |\n");
	for (size_t m = 0, k = 0; m < nm; m++) {
		for (size_t s = 0; s < ns; s++, k += nseeds) {
			double v[4][MAX_CHECKS][64], tot[64];
			char a[32], b[32];

			for (size_t i = 0; i < nseeds; i++) {
				const struct long_job *j = &pool.jobs[k + i];

				printf("| %s | %s | %lu |", j->model, j->strategy, j->seed);
				for (size_t c = 0; c < opt->nchecks; c++) {
					printf(" %s | %s | %.2f | %.2f |",
					       fmt_regret(j->regret[c], a, sizeof a),
					       fmt_regret(j->best_run[c], b, sizeof b), j->late_ms[c],
					       j->recommend_ms[c]);
					if (i < 64) {
						v[0][c][i] = j->regret[c];
						v[1][c][i] = j->best_run[c];
						v[2][c][i] = j->late_ms[c];
						v[3][c][i] = j->recommend_ms[c];
					}
				}
				printf(" %.1f |\n", j->suggest_s[opt->nchecks - 1]);
				if (i < 64)
					tot[i] = j->suggest_s[opt->nchecks - 1];
			}
			if (nseeds > 1) {
				size_t n = nseeds < 64 ? nseeds : 64;

				printf("| %s | %s | **median** |", opt->long_models[m], opt->strategies[s]);
				for (size_t c = 0; c < opt->nchecks; c++)
					printf(" **%s** | %s | %.2f | %.2f |",
					       fmt_regret(bench_median(v[0][c], n), a, sizeof a),
					       fmt_regret(bench_median(v[1][c], n), b, sizeof b),
					       bench_median(v[2][c], n), bench_median(v[3][c], n));
				printf(" %.1f |\n", bench_median(tot, n));
			}
		}
	}
	rc = 0;
out:
	for (size_t m = 0; m < nm; m++)
		landscape_close(ls[m]);
	pthread_mutex_destroy(&pool.lock);
	free(pool.jobs);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: bench-overhead [--strategy NAME]... [--obs N]... [--reps K] [--model NAME]\n"
	        "                      [--session-budget N] [--session-wall SECONDS]\n"
	        "                      [--session-runs N] [--probe-s SECONDS] [--eval-reps N]\n"
	        "                      [--long-budget N]... [--long-model NAME]...\n"
	        "                      [--long-seeds K] [--long-first-seed S] [--jobs J]\n"
	        "                      [--long-only]\n"
	        "CPU time per suggestion (MEASURED on this CPU) after N observations of a MODEL\n"
	        "(default 50 100 200 400 700 1000 2000; median of K=5 suggestions), the\n"
	        "suggestion CPU of a whole session of --session-budget runs (60), and its share\n"
	        "of a session's wall time: measured (--session-wall, --session-runs: a real\n"
	        "`nccltune run` of the same budget) and computed for --probe-s seconds per probe\n"
	        "run (3).\n"
	        "--long-budget N (repeatable, increasing): long sessions of the largest N runs on\n"
	        "each --long-model (default: --model), K seeds from S (3 from 1), J at a time\n"
	        "(1): the recommendation's regret (MODEL numbers) and the suggestion CPU\n"
	        "(MEASURED, per thread) at every N. --long-only: that section alone.\n");
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
	opt->long_seeds = 3;
	opt->long_first_seed = 1;
	opt->jobs = 1;
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
		} else if (strcmp(a, "--long-budget") == 0 && opt->nchecks < MAX_CHECKS) {
			rc = bench_parse_count(a, v, 2, MAX_LONG_BUDGET, &opt->checks[opt->nchecks],
			                       err, sizeof err);
			if (rc == 0 && opt->nchecks > 0 &&
			    opt->checks[opt->nchecks] <= opt->checks[opt->nchecks - 1]) {
				fprintf(stderr, "bench-overhead: --long-budget: %s is not above %ld (give "
				        "them in increasing order)\n", v, opt->checks[opt->nchecks - 1]);
				return -1;
			}
			opt->nchecks++;
			i++;
		} else if (strcmp(a, "--long-model") == 0 && v && opt->nlong_models < MAX_MODELS) {
			opt->long_models[opt->nlong_models++] = v;
			i++;
		} else if (strcmp(a, "--long-seeds") == 0) {
			rc = bench_parse_count(a, v, 1, 64, &opt->long_seeds, err, sizeof err);
			i++;
		} else if (strcmp(a, "--long-first-seed") == 0) {
			rc = bench_parse_count(a, v, 1, 1000000, &opt->long_first_seed, err, sizeof err);
			i++;
		} else if (strcmp(a, "--jobs") == 0) {
			rc = bench_parse_count(a, v, 1, 64, &opt->jobs, err, sizeof err);
			i++;
		} else if (strcmp(a, "--long-only") == 0) {
			opt->long_only = true;
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
		static const long def[] = {50, 100, 200, 400, 700, 1000, 2000};

		for (size_t i = 0; i < sizeof def / sizeof def[0]; i++)
			opt->obs[opt->nobs++] = def[i];
	}
	if (opt->nlong_models == 0)
		opt->long_models[opt->nlong_models++] = opt->model;
	if (opt->long_only && opt->nchecks == 0) {
		fprintf(stderr, "bench-overhead: --long-only needs --long-budget\n");
		return -1;
	}
	return 0;
}

/* The per-suggestion, whole-session and model-cost sections on landscape ls. Returns 0,
 * or -1 with a message on stderr. */
static int short_sections(const struct options *opt, struct landscape *ls, const space *sp,
                          const struct workload *w)
{
	double bo_ms200 = NAN, bo_ms2000 = NAN, bo_suggest_s = NAN, eval_us;

	printf("### CPU time per suggestion (MEASURED on this CPU; ms, median of %ld "
	       "suggestions; default space; observations from the MODEL %s)\n\n", opt->reps,
	       opt->model);
	printf("| strategy |");
	for (size_t k = 0; k < opt->nobs; k++)
		printf(" %ld obs |", opt->obs[k]);
	printf("\n| --- |");
	for (size_t k = 0; k < opt->nobs; k++)
		printf(" ---: |");
	printf("\n");
	for (size_t s = 0; s < opt->nstrategies; s++) {
		printf("| %s |", opt->strategies[s]);
		fflush(stdout);
		for (size_t k = 0; k < opt->nobs; k++) {
			double ms = time_suggestions(opt->strategies[s], ls, sp, opt->obs[k], opt->reps);

			if (isnan(ms))
				return -1;
			if (strcmp(opt->strategies[s], "bo") == 0 && opt->obs[k] == 200)
				bo_ms200 = ms;
			if (strcmp(opt->strategies[s], "bo") == 0 && opt->obs[k] == 2000)
				bo_ms2000 = ms;
			printf(" %.3f |", ms);
			fflush(stdout);
		}
		printf("\n");
	}
	if (!isnan(bo_ms200))
		printf("\nTarget: <= 50 ms per bo suggestion at 200 observations: %s (%.1f ms).\n",
		       bo_ms200 <= 50.0 ? "met" : "MISSED", bo_ms200);
	if (!isnan(bo_ms2000))
		printf("%sTarget: <= 50 ms per bo suggestion at 2000 observations: %s (%.1f ms).\n",
		       isnan(bo_ms200) ? "\n" : "", bo_ms2000 <= 50.0 ? "met" : "MISSED", bo_ms2000);

	printf("\n### A whole session's suggestions (MEASURED CPU; %ld runs, baseline first, on "
	       "the MODEL %s, seed 1; in-process)\n\n", opt->session_budget, opt->model);
	printf("| strategy | suggestions | suggestion CPU total (s) | per suggestion (ms) "
	       "| in-process model runs CPU (s) | share of a session of %ld probe runs of %.1f s "
	       "(COMPUTED) |\n", opt->session_budget, opt->probe_s);
	printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
	for (size_t s = 0; s < opt->nstrategies; s++) {
		double sug, ev, share;
		long n;

		if (time_session(opt->strategies[s], ls, sp, opt->session_budget, &sug, &ev, &n) != 0)
			return -1;
		if (strcmp(opt->strategies[s], "bo") == 0)
			bo_suggest_s = sug;
		share = sug / (sug + (double)opt->session_budget * opt->probe_s);
		printf("| %s | %ld | %.3f | %.2f | %.3f | %.2g%% |\n", opt->strategies[s], n, sug,
		       n ? 1e3 * sug / (double)n : 0.0, ev, 100.0 * share);
	}
	if (!isnan(opt->session_wall_s) && !isnan(bo_suggest_s) && opt->session_wall_s > 0) {
		printf("\nA real `nccltune run --model %s --budget %ld` session took %.2f s wall "
		       "(MEASURED by bench/run.sh", opt->model, opt->session_budget,
		       opt->session_wall_s);
		if (opt->session_runs > 0)
			printf(", %ld probe runs in its journal", opt->session_runs);
		printf("); bo's suggestions in the equivalent in-process loop above took %.3f s "
		       "CPU: %.1f%% of that wall time (model probe runs are very fast, so this "
		       "share is far larger than on real GPUs).\n", bo_suggest_s,
		       100.0 * bo_suggest_s / opt->session_wall_s);
		if (opt->session_runs > 0)
			printf("With %ld real probe runs of %.1f s each (COMPUTED, not measured) the share "
			       "would be %.3f%%.\n", opt->session_runs, opt->probe_s,
			       100.0 * bo_suggest_s /
			       (bo_suggest_s + (double)opt->session_runs * opt->probe_s));
	}

	eval_us = time_model_eval(ls, sp, opt->eval_reps);
	if (isnan(eval_us))
		return -1;
	printf("\n### The model's own cost in-process (MEASURED CPU)\n\n"
	       "One model run of %s (environment, evaluation, %d noisy replay samples, "
	       "objective): %.1f us CPU, median of %ld random configurations.\n", opt->model,
	       w->iters, eval_us, opt->eval_reps);
	return 0;
}

int main(int argc, char **argv)
{
	struct options opt;
	struct workload w;
	space *sp = NULL;
	struct landscape *ls = NULL;
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
	if (!opt.long_only && short_sections(&opt, ls, sp, &w) != 0)
		goto out;
	if (opt.nchecks > 0 && long_sessions(&opt, sp, &w) != 0)
		goto out;
	rc = fflush(stdout) == 0 ? 0 : 1;
out:
	landscape_close(ls);
	space_destroy(sp);
	return rc;
}
