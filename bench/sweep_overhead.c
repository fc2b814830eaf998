/* sweep_overhead.c - the tuner's CPU per suggestion at the observation counts a sweep
 * session produces (issue 17): each outer run (one probe process) yields one outer
 * observation for the strategy and INNER inner results that the pruner learns as full
 * points. Per strategy and (outer, inner) pair it MEASURES on this CPU: the CPU per
 * suggestion with the strategy holding the outer observations and the pruner all of them
 * (outer x (1 + inner)), the pruner's CPU per learned inner result, and, side by side, the
 * CPU per suggestion if every inner result were fed to the strategy too (up to --flat-max
 * observations; beyond: "-"). Observations are random points of the default space measured
 * on a machine MODEL; only their number and shape matter.
 * usage: bench-sweep-overhead [--strategy S]... [--outer N]... [--inner K]... [--reps R]
 *        [--model NAME] [--flat-max N] */
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

#define MAX_LIST 8
#define MAX_REPS 101

struct sweep_opts {
	const char *strategies[MAX_LIST];
	size_t nstrategies;
	long outer[MAX_LIST], inner[MAX_LIST];
	size_t nouter, ninner;
	long reps, flat_max;
	const char *model;
};

/* What one (strategy, outer, inner) cell measured; NAN where not measured. */
struct sweep_cell {
	double suggest_ms, prune_us, flat_ms;
};

/* Feed `outer` outer observations to a fresh `name` strategy (and `inner` more points per
 * outer one to its pruner only, timing prune_observe for those: *prune_us per point; with
 * feed_all the inner points go to the strategy too), then time `reps` suggestions, each
 * then measured and observed as in a session. Returns the median ms, or NAN with a message
 * on stderr. */
static double time_cell(const char *name, struct landscape *ls, const space *sp, long outer,
                        long inner, long reps, int feed_all, double *prune_us)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937), *pick = gsl_rng_alloc(gsl_rng_mt19937);
	prune *pr = prune_create(sp, 0);
	struct outcome *o = malloc(sizeof *o);
	strategy *st = NULL;
	double ms[MAX_REPS], result = NAN, prune_s = 0;
	unsigned long seed = 1;
	long n = 0;
	char err[1024];

	if (!rng || !pick || !pr || !o) {
		fprintf(stderr, "bench-sweep-overhead: out of memory\n");
		goto out;
	}
	gsl_rng_set(rng, 1);
	gsl_rng_set(pick, 2);
	st = strategy_create(name, sp, rng, pr, err, sizeof err);
	if (!st) {
		fprintf(stderr, "bench-sweep-overhead: %s\n", err);
		goto out;
	}
	for (long i = 0; i < outer * (1 + inner); i++) {
		struct point p;
		int is_outer = i % (1 + inner) == 0;
		double t0;

		if (landscape_random_point(sp, pr, pick, &p) != 0 ||
		    landscape_measure(ls, &p, seed++, o, err, sizeof err) != 0) {
			fprintf(stderr, "bench-sweep-overhead: observation %ld: %s\n", i, err);
			goto out;
		}
		t0 = bench_process_cpu_s();
		prune_observe(pr, &p, o);
		if (!is_outer)
			prune_s += bench_process_cpu_s() - t0;
		if (is_outer || feed_all)
			strategy_observe(st, &p, o);
	}
	for (long r = 0; r < reps; r++) {
		struct point p;
		double t0 = bench_process_cpu_s();
		int s = strategy_suggest(st, &p, err, sizeof err);

		ms[n] = 1e3 * (bench_process_cpu_s() - t0);
		if (s != 0) {
			fprintf(stderr, "bench-sweep-overhead: %s: %s\n", name,
			        s > 0 ? "space exhausted" : err);
			goto out;
		}
		n++;
		if (landscape_measure(ls, &p, seed++, o, err, sizeof err) != 0) {
			fprintf(stderr, "bench-sweep-overhead: %s\n", err);
			goto out;
		}
		prune_observe(pr, &p, o);
		strategy_observe(st, &p, o);
	}
	result = bench_median(ms, (size_t)n);
	if (prune_us)
		*prune_us = inner > 0 ? 1e6 * prune_s / (double)(outer * inner) : NAN;
out:
	strategy_destroy(st);
	prune_destroy(pr);
	free(o);
	gsl_rng_free(pick);
	gsl_rng_free(rng);
	return result;
}

/* Append a positive integer option value to list (at most MAX_LIST); 0 or -1. */
static int list_add(long *list, size_t *n, const char *opt, const char *v)
{
	char *end;
	long x = v ? strtol(v, &end, 10) : 0;

	if (!v || *end || x < 0 || *n >= MAX_LIST) {
		fprintf(stderr, "bench-sweep-overhead: %s needs a whole number (at most %d of them)\n",
		        opt, MAX_LIST);
		return -1;
	}
	list[(*n)++] = x;
	return 0;
}

/* Parse argv into o (defaults: bo and random, outer 30 60, inner 24 96, 5 reps,
 * h200-nvlink-2gpu, flat-max 3000). Returns 0, 1 after --help, -1 on a bad option. */
static int parse(int argc, char **argv, struct sweep_opts *o)
{
	long one = 0;
	size_t none = 0;

	memset(o, 0, sizeof *o);
	o->reps = 5;
	o->flat_max = 3000;
	o->model = "h200-nvlink-2gpu";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int rc = 0;

		if (strcmp(a, "--help") == 0) {
			printf("usage: bench-sweep-overhead [--strategy S]... [--outer N]... "
			       "[--inner K]... [--reps R] [--model NAME] [--flat-max N]\n");
			return 1;
		} else if (strcmp(a, "--strategy") == 0 && v && o->nstrategies < MAX_LIST) {
			o->strategies[o->nstrategies++] = v;
		} else if (strcmp(a, "--outer") == 0) {
			rc = list_add(o->outer, &o->nouter, a, v);
		} else if (strcmp(a, "--inner") == 0) {
			rc = list_add(o->inner, &o->ninner, a, v);
		} else if (strcmp(a, "--reps") == 0 || strcmp(a, "--flat-max") == 0) {
			none = 0;
			rc = list_add(&one, &none, a, v);
			if (strcmp(a, "--reps") == 0)
				o->reps = one;
			else
				o->flat_max = one;
		} else if (strcmp(a, "--model") == 0 && v) {
			o->model = v;
		} else {
			fprintf(stderr, "bench-sweep-overhead: unknown or incomplete option '%s'\n", a);
			return -1;
		}
		if (rc != 0)
			return -1;
		i++;
	}
	if (o->reps < 1 || o->reps > MAX_REPS) {
		fprintf(stderr, "bench-sweep-overhead: --reps must be 1..%d\n", MAX_REPS);
		return -1;
	}
	if (o->nstrategies == 0) {
		o->strategies[o->nstrategies++] = "bo";
		o->strategies[o->nstrategies++] = "random";
	}
	if (o->nouter == 0) {
		o->outer[o->nouter++] = 30;
		o->outer[o->nouter++] = 60;
	}
	if (o->ninner == 0) {
		o->inner[o->ninner++] = 24;
		o->inner[o->ninner++] = 96;
	}
	return 0;
}

static void print_cell(const char *strat, long outer, long inner, const struct sweep_cell *c)
{
	char flat[32];

	if (isnan(c->flat_ms))
		snprintf(flat, sizeof flat, "-");
	else
		snprintf(flat, sizeof flat, "%.3f", c->flat_ms);
	printf("| %s | %ld | %ld | %ld | %.3f | %.2f | %s |\n", strat, outer, inner,
	       outer * (1 + inner), c->suggest_ms, c->prune_us, flat);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct sweep_opts o;
	struct workload w;
	space *sp = NULL;
	struct landscape *ls = NULL;
	char err[1024];
	int rc = 1, po;

	gsl_set_error_handler_off();
	po = parse(argc, argv, &o);
	if (po != 0)
		return po > 0 ? 0 : 2;
	sp = space_default();
	workload_default(&w);
	ls = sp ? landscape_open(o.model, sp, &w, err, sizeof err) : NULL;
	if (!ls) {
		fprintf(stderr, "bench-sweep-overhead: %s\n", sp ? err : "out of memory");
		goto out;
	}
	printf("### Tuner CPU per suggestion at sweep observation counts (MEASURED on this CPU; "
	       "ms, median of %ld suggestions; default space; observations from the MODEL %s)\n\n"
	       "| strategy | outer obs | inner per outer | pruner obs | ms per suggestion "
	       "(strategy sees outer) | pruner us per inner result | ms per suggestion "
	       "(strategy sees all) |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n",
	       o.reps, o.model);
	for (size_t s = 0; s < o.nstrategies; s++)
		for (size_t a = 0; a < o.nouter; a++)
			for (size_t b = 0; b < o.ninner; b++) {
				struct sweep_cell c = { NAN, NAN, NAN };
				long total = o.outer[a] * (1 + o.inner[b]);

				c.suggest_ms = time_cell(o.strategies[s], ls, sp, o.outer[a], o.inner[b],
				                         o.reps, 0, &c.prune_us);
				if (isnan(c.suggest_ms))
					goto out;
				if (total <= o.flat_max) {
					c.flat_ms = time_cell(o.strategies[s], ls, sp, o.outer[a], o.inner[b],
					                      o.reps, 1, NULL);
					if (isnan(c.flat_ms))
						goto out;
				}
				print_cell(o.strategies[s], o.outer[a], o.inner[b], &c);
			}
	rc = fflush(stdout) == 0 ? 0 : 1;
out:
	landscape_close(ls);
	space_destroy(sp);
	return rc;
}
