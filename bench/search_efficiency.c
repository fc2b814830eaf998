/* search_efficiency.c - how fast each strategy gets close to the best configuration, on
 * the built-in machine MODELS (issue #7). Every number this program prints comes from a
 * model, not a machine.
 *
 * For each model: the exhaustive optimum of the default space with noise 0. Then for
 * each (model, strategy, seed): a session loop in-process - the baseline (every searched
 * variable unset) as run 1, then suggest -> one noisy model run (a crash, hang or garbage
 * is run once more, as the session does) -> prune_observe -> strategy_observe, up to the
 * budget. After every run, the configuration the session would recommend is the
 * strategy's own recommendation (strategy_recommend: bo's lowest GP posterior mean among
 * the points it ran, the others' best measurement), or the baseline while the strategy
 * has none; its regret is (its noise-free value / optimum) - 1. For comparison the old
 * rule is kept as a column: the best *measured* (noisy) run among those that worked and
 * never computed a wrong sum, the baseline included.
 *
 * Output: Markdown tables on stdout (medians over seeds per model and strategy, ratios
 * against random at the same budget); progress on stderr. --jobs N runs seeds on N
 * threads (the strategies, prune and models keep no global state). */
#include <errno.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_stats.h"
#include "fsutil.h"
#include "landscape.h"
#include "model.h"
#include "search/prune.h"
#include "search/strategy.h"

#define MAX_MODELS 16
#define MAX_STRATEGIES 8
#define NCHECK 4
#define MAX_BUDGET 1000

static const int checkpoints[NCHECK] = {20, 40, 60, 100};

struct options {
	const char *models[MAX_MODELS];
	size_t nmodels;
	const char *strategies[MAX_STRATEGIES];
	size_t nstrategies;
	long seeds, first_seed, budget, jobs;
	const char *space_file;          /* NULL: the default space */
	double noise;                    /* scale of the models' noise (1: their default) */
	bool per_seed;                   /* also print every seed's final recommendation */
};

/* One model's landscape, shared read-only by every run on it. */
struct target {
	struct landscape *ls;
	struct landscape_optimum opt;
	double baseline_us;              /* noise-free; NAN when the default fails */
	enum outcome_class baseline_cls;
	double optimum_cpu_s;
};

struct run_result {
	double regret[NCHECK];           /* +inf: nothing working recommended yet */
	double raw[NCHECK];              /* the same for the best single measurement */
	double oracle[NCHECK];           /* regret of the best point run so far, noise-free:
	                                    what a perfect final re-measurement would keep */
	double optimism60;               /* the recommendation at 60 runs: estimated / true - 1
	                                    (negative: it looked better than it is) */
	double to5, to2;                 /* runs until within 5% / 2%; +inf: never */
	int evals, failures, retries;
	double suggest_cpu_s, recommend_cpu_s;
	int suggestions, recommendations;
	double final_regret;             /* the recommendation's regret after the last run */
	char final_rec[256];             /* that recommendation, as NAME=value words */
};

struct job {
	const space *sp;
	struct target *tg;
	const char *strategy;
	unsigned long seed;
	int budget;
	struct run_result res;
	int rc;
	char err[512];
};

struct pool {
	struct job *jobs;
	size_t njobs, next, done;
	pthread_mutex_t lock;
};

/* One observation kept for choosing the recommendation. */
struct seen {
	struct point p;
	bool baseline;
	double measured_us;              /* NAN unless ok */
	bool wrong_sum;                  /* this configuration ever computed a wrong sum */
};

/* Index of the best single measurement after `n` observations (the old "would choose"):
 * the lowest measured objective among those that worked and whose configuration never
 * gave a wrong sum; -1 when none did. */
static long recommend(const struct seen *obs, size_t n, size_t dims)
{
	long best = -1;

	for (size_t i = 0; i < n; i++) {
		bool banned = false;

		if (isnan(obs[i].measured_us))
			continue;
		for (size_t j = 0; j < n && !banned; j++)
			banned = obs[j].wrong_sum && obs[j].baseline == obs[i].baseline &&
			         (obs[i].baseline || point_equal(&obs[j].p, &obs[i].p, dims));
		if (banned)
			continue;
		if (best < 0 || obs[i].measured_us < obs[best].measured_us)
			best = (long)i;
	}
	return best;
}

/* Run one session loop; fills job->res. Returns 0, or -1 with job->err. */
static int run_one(struct job *job)
{
	const space *sp = job->sp;
	size_t dims = space_dims(sp);
	struct seen *obs = calloc((size_t)job->budget, sizeof *obs);
	double *trace = calloc((size_t)job->budget, sizeof *trace);
	double *otrace = calloc((size_t)job->budget, sizeof *otrace);
	double *mtrace = calloc((size_t)job->budget, sizeof *mtrace);
	double *rtrace = calloc((size_t)job->budget, sizeof *rtrace);
	struct outcome *o = malloc(sizeof *o);
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	prune *pr = prune_create(sp, 0);
	strategy *st = NULL;
	struct run_result *r = &job->res;
	size_t nobs = 0;
	double cur = INFINITY;   /* regret of the current recommendation */
	double raw = INFINITY;   /* regret of the best single measurement */
	double best_run = INFINITY;   /* regret of the best point run so far (noise-free) */
	double optimism = NAN;        /* measured / true - 1 of the current recommendation */
	struct point rec;             /* the current recommendation (rec_kind 1) */
	int rec_kind = 0;             /* 0 none yet, 1 rec, 2 the baseline */
	int evals = 0, rc = -1;

	memset(r, 0, sizeof *r);
	if (!obs || !trace || !otrace || !mtrace || !rtrace || !o || !rng || !pr) {
		snprintf(job->err, sizeof job->err, "out of memory");
		goto out;
	}
	gsl_rng_set(rng, job->seed);
	st = strategy_create(job->strategy, sp, rng, pr, job->err, sizeof job->err);
	if (!st)
		goto out;

	while (evals < job->budget) {
		struct point p;
		bool baseline = evals == 0;
		long best;

		memset(&p, 0, sizeof p);
		if (!baseline) {
			double t0 = bench_thread_cpu_s();
			int s = strategy_suggest(st, &p, job->err, sizeof job->err);

			r->suggest_cpu_s += bench_thread_cpu_s() - t0;
			if (s == 1)
				break;          /* space exhausted: the recommendation stands */
			if (s != 0)
				goto out;
			r->suggestions++;
		}
		/* noise stream: per (seed, run index); the model mixes in the configuration */
		if (landscape_measure(job->tg->ls, baseline ? NULL : &p,
		                      job->seed * 100003UL + (unsigned long)evals, o,
		                      job->err, sizeof job->err) != 0)
			goto out;
		otrace[evals] = best_run;
		mtrace[evals] = optimism;
		rtrace[evals] = raw;
		trace[evals++] = cur;   /* replaced below once this run is taken in */
		if (outcome_class_flaky(o->cls) && evals < job->budget) {
			/* the session runs a crash/hang/garbage once more before believing it */
			r->retries++;
			if (landscape_measure(job->tg->ls, baseline ? NULL : &p,
			                      job->seed * 100003UL + (unsigned long)evals, o,
			                      job->err, sizeof job->err) != 0)
				goto out;
			evals++;
		}
		if (o->cls != OUTCOME_OK)
			r->failures++;
		if (!baseline) {
			prune_observe(pr, &p, o);
			strategy_observe(st, &p, o);
		}
		obs[nobs].p = p;
		obs[nobs].baseline = baseline;
		obs[nobs].measured_us = o->cls == OUTCOME_OK ? o->objective_us : NAN;
		obs[nobs].wrong_sum = o->cls == OUTCOME_VERIFY;
		nobs++;

		if (o->cls == OUTCOME_OK) {
			enum outcome_class cls;
			double y;
			int ok = landscape_exact(job->tg->ls, baseline ? NULL : &p, &y, &cls,
			                         job->err, sizeof job->err);

			if (ok < 0)
				goto out;
			if (ok && y / job->tg->opt.best_us - 1.0 < best_run)
				best_run = y / job->tg->opt.best_us - 1.0;
		}
		otrace[evals - 1] = best_run;
		best = recommend(obs, nobs, dims);
		if (best >= 0) {
			enum outcome_class cls;
			double y;
			int ok = landscape_exact(job->tg->ls, obs[best].baseline ? NULL : &obs[best].p,
			                         &y, &cls, job->err, sizeof job->err);

			if (ok < 0)
				goto out;
			/* a recommended point that fails without noise never happens with the
			 * models' transient failures only; count it as "no working config" */
			raw = ok ? y / job->tg->opt.best_us - 1.0 : INFINITY;
		}
		rtrace[evals - 1] = raw;
		{
			struct point rp;
			double est = NAN, y, t0 = bench_thread_cpu_s();
			enum outcome_class cls;
			int s = strategy_recommend(st, &rp, &est), ok;
			bool base = false;

			r->recommend_cpu_s += bench_thread_cpu_s() - t0;
			r->recommendations++;
			if (s < 0) {
				snprintf(job->err, sizeof job->err, "strategy_recommend: out of memory");
				goto out;
			}
			if (s == 1) {
				/* nothing of the strategy's worked yet: the baseline, if it did */
				base = !isnan(obs[0].measured_us) && !obs[0].wrong_sum;
				est = obs[0].measured_us;
			}
			if (s == 0 || base) {
				ok = landscape_exact(job->tg->ls, base ? NULL : &rp, &y, &cls, job->err,
				                     sizeof job->err);
				if (ok < 0)
					goto out;
				cur = ok ? y / job->tg->opt.best_us - 1.0 : INFINITY;
				optimism = ok ? est / y - 1.0 : NAN;
				rec = rp;
				rec_kind = base ? 2 : 1;
			}
		}
		trace[evals - 1] = cur;
		mtrace[evals - 1] = optimism;
	}

	r->evals = evals;
	r->final_regret = cur;
	if (rec_kind == 2)
		snprintf(r->final_rec, sizeof r->final_rec, "(baseline)");
	else if (rec_kind == 1)
		space_point_describe(sp, &rec, r->final_rec, sizeof r->final_rec);
	r->optimism60 = evals ? mtrace[(60 <= evals ? 60 : evals) - 1] : NAN;
	r->to5 = r->to2 = INFINITY;
	for (int i = 0; i < evals; i++) {
		/* a hair of tolerance: the optimum itself is regret 0 up to rounding */
		if (isinf(r->to5) && trace[i] <= 0.05 + 1e-12)
			r->to5 = i + 1;
		if (isinf(r->to2) && trace[i] <= 0.02 + 1e-12)
			r->to2 = i + 1;
	}
	for (int c = 0; c < NCHECK; c++) {
		int n = checkpoints[c];

		if (evals == 0) {
			r->regret[c] = r->oracle[c] = r->raw[c] = INFINITY;
		} else {
			r->regret[c] = trace[(n <= evals ? n : evals) - 1];
			r->oracle[c] = otrace[(n <= evals ? n : evals) - 1];
			r->raw[c] = rtrace[(n <= evals ? n : evals) - 1];
		}
	}
	rc = 0;
out:
	strategy_destroy(st);
	prune_destroy(pr);
	gsl_rng_free(rng);
	free(o);
	free(rtrace);
	free(mtrace);
	free(otrace);
	free(trace);
	free(obs);
	return rc;
}

/* Thread body: take the next job until none is left. */
static void *worker(void *arg)
{
	struct pool *pool = arg;

	for (;;) {
		struct job *job;
		size_t i;

		pthread_mutex_lock(&pool->lock);
		i = pool->next++;
		pthread_mutex_unlock(&pool->lock);
		if (i >= pool->njobs)
			break;
		job = &pool->jobs[i];
		job->rc = run_one(job);
		pthread_mutex_lock(&pool->lock);
		pool->done++;
		if (pool->done % 10 == 0 || pool->done == pool->njobs)
			fprintf(stderr, "search_efficiency: %zu/%zu runs\n", pool->done, pool->njobs);
		pthread_mutex_unlock(&pool->lock);
	}
	return NULL;
}

/* Run every job on `nthreads` threads. Returns 0, or -1 with a message on stderr. */
static int pool_run(struct job *jobs, size_t njobs, long nthreads)
{
	pthread_t tid[64];
	struct pool pool = {.jobs = jobs, .njobs = njobs};
	long started = 0;
	int rc = 0;

	if (pthread_mutex_init(&pool.lock, NULL) != 0) {
		fprintf(stderr, "search_efficiency: pthread_mutex_init failed\n");
		return -1;
	}
	for (long t = 0; t < nthreads && t < 64; t++) {
		int e = pthread_create(&tid[t], NULL, worker, &pool);

		if (e != 0) {
			fprintf(stderr, "search_efficiency: pthread_create: %s\n", strerror(e));
			break;
		}
		started++;
	}
	if (started == 0)
		worker(&pool);   /* no thread could start: do the work here */
	for (long t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	pthread_mutex_destroy(&pool.lock);
	for (size_t i = 0; i < njobs; i++) {
		if (jobs[i].rc != 0) {
			fprintf(stderr, "search_efficiency: %s, %s, seed %lu: %s\n",
			        landscape_name(jobs[i].tg->ls), jobs[i].strategy, jobs[i].seed,
			        jobs[i].err);
			rc = -1;
		}
	}
	return rc;
}

/* The space of `path` (NULL: the default space). Returns 0, or -1 with a message. */
static int load_space(const char *path, space **out, char *err, size_t errlen)
{
	size_t len;
	char *text;
	int rc;

	if (!path) {
		*out = space_default();
		if (!*out)
			snprintf(err, errlen, "out of memory");
		return *out ? 0 : -1;
	}
	text = fs_read_file(path, 1 << 20, &len, err, errlen);
	if (!text)
		return -1;
	rc = space_parse(text, len, path, out, err, errlen);
	free(text);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: bench-search-efficiency [--model NAME]... [--strategy NAME]... [--seeds N]\n"
	        "                               [--first-seed N] [--budget N] [--jobs N]\n"
	        "                               [--space FILE] [--noise S] [--per-seed]\n"
	        "Search efficiency of the strategies on the built-in machine MODELS (all numbers\n"
	        "are model numbers). Defaults: every built-in model, every strategy, 10 seeds\n"
	        "from 1 (--first-seed: another set, to check a change on seeds it was not tuned on),\n"
	        "budget 100 (runs, the baseline included), 1 job, the default space (the optimum\n"
	        "is found by scoring every point of the space), the models' own noise (--noise 1;\n"
	        "0: exact values, a diagnostic). Markdown on stdout; --per-seed adds a table of\n"
	        "every seed's final recommendation and its regret.\n");
}

static int parse_options(int argc, char **argv, struct options *opt)
{
	char err[256];

	memset(opt, 0, sizeof *opt);
	opt->seeds = 10;
	opt->first_seed = 1;
	opt->budget = 100;
	opt->jobs = 1;
	opt->noise = 1.0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int rc = 0;

		if (strcmp(a, "--help") == 0) {
			usage(stdout);
			return 1;
		} else if (strcmp(a, "--model") == 0 && v && opt->nmodels < MAX_MODELS) {
			opt->models[opt->nmodels++] = v;
			i++;
		} else if (strcmp(a, "--strategy") == 0 && v && opt->nstrategies < MAX_STRATEGIES) {
			opt->strategies[opt->nstrategies++] = v;
			i++;
		} else if (strcmp(a, "--per-seed") == 0) {
			opt->per_seed = true;
		} else if (strcmp(a, "--space") == 0 && v) {
			opt->space_file = v;
			i++;
		} else if (strcmp(a, "--noise") == 0) {
			char *end = NULL;

			opt->noise = v ? strtod(v, &end) : NAN;
			if (!v || end == v || *end != '\0' || !(opt->noise >= 0 && opt->noise <= 10)) {
				snprintf(err, sizeof err, "--noise: '%s' is not a number in 0..10",
				         v ? v : "");
				rc = -1;
			}
			i++;
		} else if (strcmp(a, "--seeds") == 0) {
			rc = bench_parse_count(a, v, 1, 1000, &opt->seeds, err, sizeof err);
			i++;
		} else if (strcmp(a, "--first-seed") == 0) {
			rc = bench_parse_count(a, v, 1, 1000000, &opt->first_seed, err, sizeof err);
			i++;
		} else if (strcmp(a, "--budget") == 0) {
			rc = bench_parse_count(a, v, 2, MAX_BUDGET, &opt->budget, err, sizeof err);
			i++;
		} else if (strcmp(a, "--jobs") == 0) {
			rc = bench_parse_count(a, v, 1, 64, &opt->jobs, err, sizeof err);
			i++;
		} else {
			fprintf(stderr, "bench-search-efficiency: unknown or incomplete option '%s'\n", a);
			usage(stderr);
			return -1;
		}
		if (rc != 0) {
			fprintf(stderr, "bench-search-efficiency: %s\n", err);
			return -1;
		}
	}
	for (size_t s = 0; s < opt->nstrategies; s++) {
		size_t i = 0;

		while (strategy_names[i] && strcmp(strategy_names[i], opt->strategies[s]) != 0)
			i++;
		if (!strategy_names[i]) {
			fprintf(stderr, "bench-search-efficiency: --strategy: unknown strategy '%s'\n",
			        opt->strategies[s]);
			return -1;
		}
	}
	if (opt->nmodels == 0)
		for (size_t i = 0; i < model_builtin_count() && i < MAX_MODELS; i++)
			opt->models[opt->nmodels++] = model_builtin_name(i);
	if (opt->nstrategies == 0)
		for (size_t i = 0; strategy_names[i] && i < MAX_STRATEGIES; i++)
			opt->strategies[opt->nstrategies++] = strategy_names[i];
	return 0;
}

/* "12.3%", "0.0%" or "none" (nothing working recommended). */
static const char *fmt_pct(double v, char *buf, size_t len)
{
	if (isinf(v))
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "%.1f%%", 100.0 * v);
	return buf;
}

/* Runs: "23" / "23.5", or ">B" when the median seed never got there. */
static const char *fmt_runs(double v, long budget, char *buf, size_t len)
{
	if (isinf(v))
		snprintf(buf, len, ">%ld", budget);
	else if (v == floor(v))
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.1f", v);
	return buf;
}

/* random's median regret over the strategy's: how many times lower the strategy's is. */
static const char *fmt_ratio(double random, double mine, char *buf, size_t len)
{
	if (isinf(random) && isinf(mine))
		snprintf(buf, len, "n/a");
	else if (mine <= 1e-12 && random <= 1e-12)
		snprintf(buf, len, "both 0");
	else if (mine <= 1e-12)
		snprintf(buf, len, "inf (0 vs %.1f%%)", 100.0 * random);
	else if (random <= 1e-12)
		snprintf(buf, len, "0 (%.1f%% vs 0)", 100.0 * mine);
	else if (isinf(mine))
		snprintf(buf, len, "0");
	else if (isinf(random))
		snprintf(buf, len, "inf");
	else
		snprintf(buf, len, "%.2fx", random / mine);
	return buf;
}

/* Medians over seeds of one (model, strategy). */
struct summary {
	double regret[NCHECK], oracle[NCHECK], raw[NCHECK], to5, to2, suggest_ms, recommend_ms;
	double worst60, mean60;          /* over seeds, regret at 60 runs */
	double optimism60;               /* median; NAN when no seed had a recommendation */
	int within5_at60, seeds, checkpoint60;
	double failures, retries, evals;
};

static void summarise(const struct job *jobs, size_t seeds, struct summary *s)
{
	double v[1000];

	memset(s, 0, sizeof *s);
	s->seeds = (int)seeds;
	for (int c = 0; c < NCHECK; c++) {
		for (size_t k = 0; k < seeds; k++)
			v[k] = jobs[k].res.regret[c];
		s->regret[c] = bench_median(v, seeds);
		for (size_t k = 0; k < seeds; k++)
			v[k] = jobs[k].res.oracle[c];
		s->oracle[c] = bench_median(v, seeds);
		for (size_t k = 0; k < seeds; k++)
			v[k] = jobs[k].res.raw[c];
		s->raw[c] = bench_median(v, seeds);
	}
	for (size_t k = 0; k < seeds; k++) {
		double x = jobs[k].res.regret[2];

		if (k == 0 || x > s->worst60)
			s->worst60 = x;
		s->mean60 += x / (double)seeds;
	}
	for (size_t k = 0; k < seeds; k++) {
		v[k] = jobs[k].res.to5;
		if (jobs[k].res.regret[2] <= 0.05 + 1e-12)
			s->within5_at60++;
	}
	s->to5 = bench_median(v, seeds);
	{
		size_t n = 0;

		for (size_t k = 0; k < seeds; k++)
			if (!isnan(jobs[k].res.optimism60))
				v[n++] = jobs[k].res.optimism60;
		s->optimism60 = bench_median(v, n);
	}
	for (size_t k = 0; k < seeds; k++)
		v[k] = jobs[k].res.to2;
	s->to2 = bench_median(v, seeds);
	for (size_t k = 0; k < seeds; k++)
		v[k] = jobs[k].res.suggestions
		       ? 1e3 * jobs[k].res.suggest_cpu_s / jobs[k].res.suggestions : 0;
	s->suggest_ms = bench_median(v, seeds);
	for (size_t k = 0; k < seeds; k++)
		v[k] = jobs[k].res.recommendations
		       ? 1e3 * jobs[k].res.recommend_cpu_s / jobs[k].res.recommendations : 0;
	s->recommend_ms = bench_median(v, seeds);
	for (size_t k = 0; k < seeds; k++)
		v[k] = jobs[k].res.failures;
	s->failures = bench_median(v, seeds);
	for (size_t k = 0; k < seeds; k++)
		v[k] = jobs[k].res.retries;
	s->retries = bench_median(v, seeds);
	for (size_t k = 0; k < seeds; k++)
		v[k] = jobs[k].res.evals;
	s->evals = bench_median(v, seeds);
}

static void print_report(const struct options *opt, struct target *tg, struct job *jobs,
                         const space *sp, double wall_s)
{
	size_t seeds = (size_t)opt->seeds, per_model = opt->nstrategies * seeds;
	struct summary *sum = calloc(opt->nmodels * opt->nstrategies, sizeof *sum);
	char a[64], b[64], c[64], d[64], e[64], f[64], g[64], h[64], k[64], l[64], m2[64], r60[64];
	char desc[512];
	long random_idx = -1, bo_idx = -1;

	if (!sum) {
		fprintf(stderr, "bench-search-efficiency: out of memory\n");
		return;
	}
	for (size_t s = 0; s < opt->nstrategies; s++) {
		if (strcmp(opt->strategies[s], "random") == 0)
			random_idx = (long)s;
		if (strcmp(opt->strategies[s], "bo") == 0)
			bo_idx = (long)s;
	}
	for (size_t m = 0; m < opt->nmodels; m++)
		for (size_t s = 0; s < opt->nstrategies; s++)
			summarise(&jobs[m * per_model + s * seeds], seeds, &sum[m * opt->nstrategies + s]);

	printf("### Landscapes (MODEL numbers, noise 0; space: %s, %llu points before "
	       "constraints)\n\n", opt->space_file ? opt->space_file : "the default",
	       (unsigned long long)space_cardinality(sp));
	printf("| model | allowed points | failing | within 1%% | within 2%% | within 5%% "
	       "| optimum (us/step) | optimum configuration | default (us/step) | default's regret "
	       "| exhaustive scan (s CPU) |\n");
	printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |\n");
	for (size_t m = 0; m < opt->nmodels; m++) {
		const struct target *t = &tg[m];

		printf("| %s | %llu | %llu | %llu | %llu | %llu | %.1f | `%s` | ", landscape_name(t->ls),
		       (unsigned long long)t->opt.allowed, (unsigned long long)t->opt.failing,
		       (unsigned long long)t->opt.within1, (unsigned long long)t->opt.within2,
		       (unsigned long long)t->opt.within5,
		       t->opt.best_us, space_point_describe(sp, &t->opt.best, desc, sizeof desc));
		if (isnan(t->baseline_us))
			printf("fails (%s) | - |", outcome_class_name(t->baseline_cls));
		else
			printf("%.1f | %.1f%% |", t->baseline_us,
			       100.0 * (t->baseline_us / t->opt.best_us - 1.0));
		printf(" %.2f |\n", t->optimum_cpu_s);
	}

	printf("\n### Regret of the recommended configuration (MODEL numbers; %s; median of "
	       "%zu seeds, %ld..%ld; budget counts the baseline as run 1)\n\n",
	       opt->noise == 1.0 ? "the models' default noise" :
	       opt->noise == 0.0 ? "NOISE OFF (diagnostic)" : "noise scaled by --noise", seeds,
	       opt->first_seed, opt->first_seed + opt->seeds - 1);
	printf("| model | strategy | regret@20 | regret@40 | regret@60 | regret@100 "
	       "| runs to <=5%% | runs to <=2%% | seeds <=5%% at 60 | worst seed@60 | best run@60 "
	       "| best run@100 | best measured@60 | estimated vs true@60 | failed runs "
	       "| ms CPU/suggestion | ms CPU/recommendation |\n");
	printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
	       "| ---: | ---: | ---: | ---: | ---: |\n");
	for (size_t m = 0; m < opt->nmodels; m++) {
		for (size_t s = 0; s < opt->nstrategies; s++) {
			const struct summary *x = &sum[m * opt->nstrategies + s];

			if (opt->budget >= 60)
				snprintf(g, sizeof g, "%d/%d", x->within5_at60, x->seeds);
			else
				snprintf(g, sizeof g, "-");
			if (opt->budget >= 60 && !isnan(x->optimism60))
				snprintf(m2, sizeof m2, "%+.1f%%", 100.0 * x->optimism60);
			else
				snprintf(m2, sizeof m2, "-");
			printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s "
			       "| %.0f | %.2f | %.2f |\n",
			       landscape_name(tg[m].ls), opt->strategies[s],
			       opt->budget >= 20 ? fmt_pct(x->regret[0], a, sizeof a) : "-",
			       opt->budget >= 40 ? fmt_pct(x->regret[1], b, sizeof b) : "-",
			       opt->budget >= 60 ? fmt_pct(x->regret[2], c, sizeof c) : "-",
			       opt->budget >= 100 ? fmt_pct(x->regret[3], d, sizeof d) : "-",
			       fmt_runs(x->to5, opt->budget, e, sizeof e),
			       fmt_runs(x->to2, opt->budget, f, sizeof f),
			       g, opt->budget >= 60 ? fmt_pct(x->worst60, l, sizeof l) : "-",
			       opt->budget >= 60 ? fmt_pct(x->oracle[2], h, sizeof h) : "-",
			       opt->budget >= 100 ? fmt_pct(x->oracle[3], k, sizeof k) : "-",
			       opt->budget >= 60 ? fmt_pct(x->raw[2], r60, sizeof r60) : "-", m2,
			       x->failures, x->suggest_ms, x->recommend_ms);
		}
	}

	if (random_idx >= 0) {
		printf("\n### Regret ratio against random at the same budget (MODEL numbers; "
		       "random's median regret / the strategy's; > 1: better than random)\n\n");
		printf("| model | strategy | @20 | @40 | @60 | @100 | @60, ratio of means "
		       "| @60, both by best measurement |\n");
		printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
		for (size_t m = 0; m < opt->nmodels; m++) {
			const struct summary *rnd = &sum[m * opt->nstrategies + (size_t)random_idx];

			for (size_t s = 0; s < opt->nstrategies; s++) {
				const struct summary *x = &sum[m * opt->nstrategies + s];

				if ((long)s == random_idx)
					continue;
				printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", landscape_name(tg[m].ls),
				       opt->strategies[s],
				       fmt_ratio(rnd->regret[0], x->regret[0], a, sizeof a),
				       fmt_ratio(rnd->regret[1], x->regret[1], b, sizeof b),
				       fmt_ratio(rnd->regret[2], x->regret[2], c, sizeof c),
				       fmt_ratio(rnd->regret[3], x->regret[3], d, sizeof d),
				       opt->budget >= 60 ? fmt_ratio(rnd->mean60, x->mean60, e, sizeof e)
				                         : "-",
				       opt->budget >= 60 ? fmt_ratio(rnd->raw[2], x->raw[2], f, sizeof f)
				                         : "-");
			}
		}
	}

	if (bo_idx >= 0 && opt->budget >= 60) {
		printf("\n### Targets (MODEL numbers)\n\n");
		printf("| model | bo median regret@60 <= 5%% | bo >= 2x lower regret than random "
		       "@60 |\n| --- | --- | --- |\n");
		for (size_t m = 0; m < opt->nmodels; m++) {
			const struct summary *x = &sum[m * opt->nstrategies + (size_t)bo_idx];
			const char *ratio_verdict = "(random not run)";

			if (random_idx >= 0) {
				const struct summary *rnd = &sum[m * opt->nstrategies + (size_t)random_idx];
				bool met = x->regret[2] <= 1e-12 ? rnd->regret[2] > 1e-12
				           : rnd->regret[2] >= 2.0 * x->regret[2];

				if (x->regret[2] <= 1e-12 && rnd->regret[2] <= 1e-12)
					ratio_verdict = "n/a: both at the optimum";
				else
					ratio_verdict = met ? "met" : "MISSED";
				snprintf(a, sizeof a, "%s (%s)", ratio_verdict,
				         fmt_ratio(rnd->regret[2], x->regret[2], b, sizeof b));
				ratio_verdict = a;
			}
			printf("| %s | %s (%s) | %s |\n", landscape_name(tg[m].ls),
			       x->regret[2] <= 0.05 + 1e-12 ? "met" : "MISSED",
			       fmt_pct(x->regret[2], c, sizeof c), ratio_verdict);
		}
	}
	if (opt->per_seed) {
		char ra[32], rb[32];

		printf("\n### Every seed's final recommendation (MODEL numbers; after %ld runs)\n\n",
		       opt->budget);
		printf("| model | strategy | seed | regret | best run | recommended |\n");
		printf("| --- | --- | ---: | ---: | ---: | --- |\n");
		for (size_t i = 0; i < opt->nmodels * opt->nstrategies * seeds; i++) {
			const struct job *j = &jobs[i];

			printf("| %s | %s | %lu | %s | %s | `%s` |\n", landscape_name(j->tg->ls),
			       j->strategy, j->seed, fmt_pct(j->res.final_regret, ra, sizeof ra),
			       fmt_pct(j->res.oracle[NCHECK - 1], rb, sizeof rb),
			       j->res.final_rec[0] ? j->res.final_rec : "(none)");
		}
	}
	printf("\nsearch_efficiency: %zu models x %zu strategies x %zu seeds, budget %ld, "
	       "%.1f s wall on %ld thread(s)\n", opt->nmodels, opt->nstrategies, seeds, opt->budget,
	       wall_s, opt->jobs);
	free(sum);
}

int main(int argc, char **argv)
{
	struct options opt;
	struct workload w;
	space *sp = NULL;
	struct target tg[MAX_MODELS];
	struct job *jobs = NULL;
	size_t njobs, seeds;
	double t0 = bench_wall_s();
	char err[1024];
	int rc = 1, po;

	memset(tg, 0, sizeof tg);
	gsl_set_error_handler_off();
	po = parse_options(argc, argv, &opt);
	if (po != 0)
		return po > 0 ? 0 : 2;
	if (load_space(opt.space_file, &sp, err, sizeof err) != 0) {
		fprintf(stderr, "bench-search-efficiency: %s\n", err);
		goto out;
	}
	workload_default(&w);
	for (size_t m = 0; m < opt.nmodels; m++) {
		struct target *t = &tg[m];
		double c0 = bench_thread_cpu_s();

		t->ls = landscape_open(opt.models[m], sp, &w, err, sizeof err);
		if (!t->ls || landscape_optimum(t->ls, &t->opt, err, sizeof err) != 0 ||
		    landscape_exact(t->ls, NULL, &t->baseline_us, &t->baseline_cls, err,
		                    sizeof err) < 0) {
			fprintf(stderr, "bench-search-efficiency: %s\n", err);
			goto out;
		}
		t->optimum_cpu_s = bench_thread_cpu_s() - c0;
		landscape_set_noise(t->ls, opt.noise);
		fprintf(stderr, "search_efficiency: %s: optimum %.1f us/step over %llu points "
		        "(%.1f s)\n", opt.models[m], t->opt.best_us,
		        (unsigned long long)t->opt.allowed, t->optimum_cpu_s);
	}
	seeds = (size_t)opt.seeds;
	njobs = opt.nmodels * opt.nstrategies * seeds;
	jobs = calloc(njobs, sizeof *jobs);
	if (!jobs) {
		fprintf(stderr, "bench-search-efficiency: out of memory\n");
		goto out;
	}
	for (size_t m = 0; m < opt.nmodels; m++)
		for (size_t s = 0; s < opt.nstrategies; s++)
			for (size_t k = 0; k < seeds; k++) {
				struct job *j = &jobs[(m * opt.nstrategies + s) * seeds + k];

				j->sp = sp;
				j->tg = &tg[m];
				j->strategy = opt.strategies[s];
				j->seed = (unsigned long)opt.first_seed + (unsigned long)k;
				j->budget = (int)opt.budget;
			}
	if (pool_run(jobs, njobs, opt.jobs) != 0)
		goto out;
	print_report(&opt, tg, jobs, sp, bench_wall_s() - t0);
	rc = fflush(stdout) == 0 ? 0 : 1;
out:
	free(jobs);
	for (size_t m = 0; m < MAX_MODELS; m++)
		landscape_close(tg[m].ls);
	space_destroy(sp);
	return rc;
}
