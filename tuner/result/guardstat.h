/* guardstat.h - judging a candidate against the baseline with the session's pooled noise
 * model: the guard sizes of the final phase ("does this finalist slow the prefill
 * guard?") and the ablation ("is the finalist without this variable slower?"). Pure
 * arithmetic over latencies the caller measured; no state, no I/O, no randomness.
 *
 * The noise model. A latency of configuration k at one size, measured in a fresh process
 * r, is t_kr = T_k x exp(e_kr): the true latency times a log-normal run-to-run factor,
 * e_kr ~ N(0, s^2) independent across processes, with ONE s for every configuration at
 * that size (the spread comes from the process - clocks, placement, the rings it got -
 * not from which NCCL variables are set; a model's run_sigma, a GPU's process-to-process
 * spread). s^2 is estimated by pooling: every configuration measured n_k >= 2 times at
 * the size adds the squared deviations of its log latencies from their own mean and
 * n_k - 1 degrees of freedom, so s^2 = sum_k sum_r (log t_kr - mean_k)^2 / sum_k (n_k - 1).
 * A 2-round finalist thus borrows the baseline's, the other finalists' and every
 * repeated run's evidence instead of trusting its own one degree of freedom (which is
 * sometimes far too narrow, sometimes far too wide). One pool per size (and one for the
 * step objective, for the ablation); feed it every repeat of every configuration at that
 * size, the baseline and the candidate under test included.
 *
 * The comparison. Rounds interleave the baseline and the candidate (B C, B C, ...) in
 * fresh processes; round i gives d_i = log(cand_i / base_i), whose variance under the
 * model is 2 s^2 (two independent processes). The ratio cand/base is exp(mean d) with
 * the interval exp(mean d -+ t_q(dof) x sqrt(2 s^2 / n)), q = (1 + level) / 2, dof the
 * pool's. Against an allowed ratio A (1.02 for a guard: at most 2% slower than NCCL's
 * defaults):
 *   SAFE       hi <= A: shown not slower than allowed (a true ratio of exactly A is
 *              called SAFE in at most (1 - level) / 2 of sessions);
 *   UNSAFE     lo >  A: shown slower than allowed;
 *   UNDECIDED  otherwise: measure more rounds, or report "not shown safe" - never ship.
 * For the ablation, base = the finalist, cand = the finalist less one variable, A =
 * 1 + the tolerance (e.g. 1.01): SAFE -> drop the variable (removing it is shown to cost
 * at most the tolerance), UNSAFE -> keep it (it buys a real gain), UNDECIDED -> measure
 * more or keep it. No fixed threshold such as 1.04: a real 4.4% gain is UNSAFE to drop
 * once the noise model can show it. */
#ifndef NCCLTUNE_GUARDSTAT_H
#define NCCLTUNE_GUARDSTAT_H

#include <stddef.h>

/* No comparison asks for more rounds than this (more_rounds is -1 beyond it). */
#define GUARDSTAT_MAX_ROUNDS 1000

/* The pooled noise model of one size: sums of squared log deviations and their degrees
 * of freedom. Zero-initialise it (or guardstat_pool_init). Plain data, nothing to free. */
struct guardstat_pool {
	double ss;       /* sum over configurations of squared deviations of log latency */
	int dof;         /* sum over configurations of (repeats - 1) */
	int configs;     /* configurations that added >= 1 degree of freedom */
};

enum guardstat_call { GUARDSTAT_SAFE, GUARDSTAT_UNSAFE, GUARDSTAT_UNDECIDED };

struct guardstat_verdict {
	enum guardstat_call call;
	double ratio;        /* cand / base: exp(mean log ratio over the rounds) */
	double lo, hi;       /* its interval at the requested level */
	double sd;           /* the pool's s (log scale) */
	int dof;             /* the pool's degrees of freedom */
	int rounds;          /* paired rounds used */
	int more_rounds;     /* UNDECIDED: further rounds after which the interval would
	                        exclude the allowed ratio if the mean stayed where it is
	                        (each new round adds 2 degrees of freedom to the pool);
	                        0 when decided; -1 when no number up to GUARDSTAT_MAX_ROUNDS
	                        would (the mean sits on the allowed ratio) */
};

/* Empty pool. Can't fail. */
void guardstat_pool_init(struct guardstat_pool *p);

/* Add one configuration's n repeated latencies us[0..n-1] at the pool's size (fresh
 * processes; n == 1 adds nothing). Returns 0, or -1 with a message in err naming the
 * repeat at fault (a latency not finite or <= 0) and leaves the pool unchanged. */
int guardstat_pool_add(struct guardstat_pool *p, const double *us, size_t n, char *err,
                       size_t errlen);

/* s, the pooled standard deviation of log latency; NAN when the pool has no degree of
 * freedom. Can't fail. */
double guardstat_pool_sd(const struct guardstat_pool *p);

/* Judge cand against base over n interleaved rounds (base[i] and cand[i] from round i)
 * with the pool's noise model, at confidence `level` (e.g. 0.95) against the allowed
 * ratio cand/base `allowed`. Returns 0 with *out filled, or -1 with a message in err
 * naming the input at fault: n < 1, a latency not finite or <= 0, allowed not finite or
 * <= 0, level outside (0, 1), or a pool without a degree of freedom (no noise model:
 * nothing can be judged; measure some configuration twice). */
int guardstat_compare(const struct guardstat_pool *p, const double *base, const double *cand,
                      size_t n, double allowed, double level, struct guardstat_verdict *out,
                      char *err, size_t errlen);

/* "safe", "unsafe" or "undecided". Can't fail. */
const char *guardstat_call_name(enum guardstat_call c);

#endif
