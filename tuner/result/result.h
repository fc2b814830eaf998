/* result.h - the statistics of the end-of-session re-measurement and the results.json
 * document (docs/formats.md, "nccltune-result/1").
 *
 * Intervals: the final phase measures the baseline and each finalist in rounds
 * (B c1 c2 c3, B c1 c2 c3, ...), so drift of the machine hits both sides of a round
 * alike. The gain of a finalist is exp(mean of log(baseline_r / candidate_r)) over the
 * rounds r, with a 95% Student-t interval on that mean of log ratios; an objective's
 * interval is the t-interval of the mean of its repeats. No interval with one repeat. */
#ifndef NCCLTUNE_RESULT_H
#define NCCLTUNE_RESULT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "result/summary.h"

#define RESULT_SCHEMA "nccltune-result/1"

/* Mean of x[0..n-1] and, for n >= 2, its 95% t-interval (lo, hi are NAN for n < 2).
 * n must be >= 1. Can't fail. */
void result_mean_ci(const double *x, size_t n, double *mean, double *lo, double *hi);

/* Paired gain of a candidate over the baseline from n rounds (base[i], cand[i] > 0):
 * ratio = exp(mean log(base/cand)); lo, hi its 95% interval (NAN for n < 2).
 * n must be >= 1. Can't fail. */
void result_paired_gain(const double *base, const double *cand, size_t n, double *ratio,
                        double *lo, double *hi);

/* A measured configuration of the result. */
struct result_config {
	cJSON *env;             /* the variables to set (borrowed) */
	double objective_us;
	double ci_lo, ci_hi;    /* NAN: no interval */
	int repeats;            /* 0: leave out */
	bool symmetric;         /* "server": {"symmetric": true}: a server option, not env */
};

struct result_size { size_t bytes; double us; };

/* Everything results.json holds; cJSON members are borrowed (copied into the document). */
struct result_input {
	const char *created;            /* ISO 8601 UTC */
	const cJSON *fingerprint;       /* NULL: null */
	const char *source;             /* "measured" or "model" */
	const char *model;              /* required when source is "model" */
	const cJSON *workload;
	const char *strategy;
	unsigned long seed;
	int budget;
	const cJSON *pinned;
	const cJSON *server;            /* --like: {"like", "env"}; NULL: no key */
	bool has_baseline;
	struct result_config baseline;
	bool has_best;                  /* false: "best": null */
	struct result_config best;
	size_t nsizes;
	const struct result_size *sizes; /* best.per_size */
	bool has_gain;
	double gain, gain_lo, gain_hi;  /* gain_lo/hi NAN: no interval */
	bool has_noise;                 /* false: "noise": null */
	double noise_sd;                /* pooled sd of log(time) over the final repeats */
	int noise_configs, noise_dof;   /* configurations re-measured; degrees of freedom */
	size_t ntop;
	const struct result_config *top;
	int evaluations;
	const cJSON *failures;          /* array, as in the format */
	const cJSON *pruned;            /* array, as in the format */
};

/* Build the results.json document. NULL when out of memory. */
cJSON *result_build(const struct result_input *in);

/* What the final phase decided, in the types the loader reads it back into (summary.h):
 * "ablation" (nablation 0: none), the top-level "per_size" of the tuned and guard sizes
 * (nper_size 0: none) and "guards" (guards_verdict NULL: none) with its "attribution"
 * (nattribution 0: none). Everything is borrowed. */
struct result_final {
	size_t nablation;
	const struct summary_ablation *ablation;
	size_t nper_size;
	const struct summary_size_cmp *per_size;
	const char *guards_verdict;
	size_t nguard_sizes;
	const uint64_t *guard_sizes;
	size_t nattribution;
	const struct summary_attribution *attribution;
};

/* Add f to the document, in this order: "ablation", "per_size", "guards" (docs/formats.md;
 * ratios of the ablation and attribution rounded to 4 decimals, NAN numbers as null or
 * left out as the format says). False when out of memory. */
bool result_final_add(cJSON *doc, const struct result_final *f);

/* Write the document to dir/results.json atomically (pretty-printed, newline at the
 * end). Returns 0, or -1 with a message naming the file. */
int result_write(const char *dir, const cJSON *doc, char *err, size_t errlen);

#endif
