/* decide.h - the final phase of a session as a stage of its own, shaped like a search
 * strategy: it is ASKED for the next run (decide_next: a configuration and its phase)
 * and TOLD its outcome (decide_tell), until it says done; then its state is the typed
 * result the session writes (results.json). It sees a read-only view (struct
 * decide_view: the run log, the space, the workload, the tries, the budget and time
 * left) - never a process, a file or the session handle.
 *
 * What it decides, in order: the candidates ranked (the strategy's ranking first, one
 * per point, guard-aware, ties within DECIDE_TIE_MARGIN closest to NCCL's defaults
 * first: final.c); the finalists and tries re-measured in rounds interleaved with the
 * baseline; the scores, the guard sizes' verdict (sizes.c) and the winner; then the
 * ablation of the winner's variables, or without a winner the guard attribution
 * (ablate.c). Not part of the public API. */
#ifndef NCCLTUNE_DECIDE_DECIDE_H
#define NCCLTUNE_DECIDE_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "decide/runlog.h"
#include "result/guardstat.h"
#include "run/outcome.h"
#include "run/tryconf.h"
#include "run/workload.h"
#include "space/space.h"

#define DECIDE_FINALISTS 3
/* A candidate whose sweeps measured a guard size more than this much slower than the
 * baseline (one run against one run, in different processes) ranks after the others
 * for the final rounds: the final rounds refuse a finalist slower there beyond the
 * noise; 5% is about 3 sd of the ratio of two runs where one run varies by 1.5% */
#define DECIDE_GUARD_SWEEP_MARGIN 0.05
/* The outer search's penalty for such a region (decide_outer_guard_penalty): its
 * objective told to the strategy times (ratio / (1 + margin)) ^ 4 - a 1.45x guard makes
 * an outer point look 3.6x slower, a 1.07x one 1.08x */
#define DECIDE_GUARD_PENALTY_POWER 4.0
/* Candidates within 1% of the fastest at the tuned sizes (one measurement each) count as
 * tied: among them the closest to NCCL's defaults is finalist first */
#define DECIDE_TIE_MARGIN 0.01
/* A candidate that runs NCCL's defaults at every guard size (no process-level variable,
 * no rule of a guard size: safe there by identity) within 5% of the fastest that passes
 * the guards in its sweeps is the first finalist (rankguard.c) */
#define DECIDE_IDENTITY_MARGIN 0.05
#define DECIDE_FINAL_RESERVE_MAX 12       /* runs kept for the final re-measurement */
#define DECIDE_FINAL_RESERVE_DIV 5        /* ... at most budget / 5 */
#define DECIDE_ABLATE_RESERVE_MAX 10      /* runs kept for the ablation (ablate.c) */
#define DECIDE_ABLATE_RESERVE_DIV 6       /* ... at most budget / 6 */
#define DECIDE_TRY_ROUNDS 3               /* final runs reserved per --try */
#define DECIDE_TOP_MAX 5                  /* results.json's top list */
#define DECIDE_ABLATE_ROUNDS_MAX 3
/* inner results read per guard size of a candidate: the session's sweep processes per
 * outer point (8) times 4 */
#define DECIDE_SWEEP_GUARD_MAX 32
/* A guard size may be at most this much slower than NCCL's defaults (true time), shown
 * with the session's pooled noise model (result/guardstat.h) at DECIDE_GUARD_LEVEL */
#define DECIDE_GUARD_ALLOWED 1.02
#define DECIDE_GUARD_LEVEL 0.95
/* The ablation drops a variable only when removing it is shown to cost at most 1% */
#define DECIDE_ABLATE_ALLOWED 1.01

/* What the stage sees, refreshed by the session before each call. */
struct decide_view {
	struct runlog log;                /* the runs so far, inner results, space, pruner */
	const struct workload *wl;
	const struct tryconf *tries;      /* the user's --try configurations */
	size_t ntries;
	int budget;                       /* runs in all */
	double time_limit_s;              /* 0: none */
	double elapsed_s;                 /* session time now */
	bool replaying;                   /* the journal answers the next run (resume) */
	/* The strategy's ranking: up to max points, best first, into pts (est: its
	 * estimates), their count in *count; returns 0, or -1 when out of memory. NULL: no
	 * ranking (the measured order stands). */
	int (*rank)(void *ctx, struct point *pts, double *est, size_t max, size_t *count);
	void *rank_ctx;
	/* A note for the user (one line, no "nccltune: "); NULL: none. */
	void (*note)(void *ctx, const char *text);
	void *note_ctx;
};

/* One run the stage asks for. */
struct decide_request {
	enum session_phase phase;   /* PHASE_FINAL or PHASE_ABLATE */
	bool has_point;             /* false: the baseline, or the off-space try try_no */
	struct point p;
	size_t try_no;              /* a --try's run (1-based); 0: none */
	uint32_t unset;             /* PHASE_ABLATE: bit d: dimension d left unset */
};

struct finalist {
	struct point p;
	bool has_point;          /* false: an off-space try */
	size_t try_no;           /* a --try (1-based) in its own slot; 0: a search candidate */
	double search_us;        /* what the search (or the try's own run) measured */
	size_t first_run;        /* a candidate's first run in the log (orders ties) */
	double *us;              /* per round; NAN where the run failed or did not happen */
	int ok, failed;
	enum outcome_class fail_cls;   /* of the first failed repeat */
	double mean, lo, hi, gain, gain_lo, gain_hi;
	bool qualified;
	size_t guard_bytes;      /* the guard size that disqualified it (0: none) */
	double guard_ratio;      /* its latency there over the baseline's */
	enum guardstat_call guard_call;   /* why: UNSAFE (shown slower than allowed) or
	                                     UNDECIDED (not shown safe) */
	/* its worst guard size in its outer point's sweeps (two-level sessions): the sweeps'
	 * median latency there over the baseline's; NAN (bytes 0) when none was measured */
	double sweep_guard_ratio;
	size_t sweep_guard_bytes;
};

/* A variable of a finalist a guard size disqualified, and what it costs there. */
struct attribution {
	size_t dim;
	double cost, lo, hi;     /* finalist / (finalist less it) at the guard size; NAN: none */
	size_t pairs;
};

/* One variable of the winner, and whether it stays in the recommendation (ablate.c). */
struct ablation {
	size_t dim;              /* its dimension in the space */
	bool decision;           /* it only changes NCCL's decision (ncclvars_decides, rules) */
	bool dropped;            /* left out of the recommendation */
	bool by_baseline;        /* dropped: the winner ran what NCCL ran in the baseline */
	bool measured;           /* the winner less it was run (ablation rounds) */
	size_t run;              /* decision: the journal's run (1-based) of winner less it */
	double ratio, lo, hi;    /* process: (winner less it) / winner, paired; NAN: none */
	size_t pairs;
	char why[384];           /* what the notes and results.json say of it */
};

/* Interleaved ablation (or attribution) rounds: the reference, the reference less each
 * of its process-level variables and, with `all`, less all of them. */
struct decide_rounds {
	size_t e[SPACE_MAX_DIMS];     /* entry j + 1: ab[e[j]] left out */
	size_t ne;                    /* entries after the reference (entry 0) */
	bool all;                     /* entry ne + 1: the reference less all of them */
	size_t n;                     /* rounds */
	size_t run[SPACE_MAX_DIMS + 2][DECIDE_ABLATE_ROUNDS_MAX];   /* log index; SIZE_MAX: none */
};

/* Where the stage is (decide_next / decide_tell). */
enum decide_step { DECIDE_RANK, DECIDE_FINAL, DECIDE_MORE, DECIDE_PICK, DECIDE_DECISIONS,
                   DECIDE_ROUNDS, DECIDE_DONE };

/* The stage's state, and once done its typed result. Zero it before the first call. */
struct final_state {
	struct finalist *c;
	size_t nc;               /* candidates (ranked), of which k are finalists */
	size_t k, rounds;
	struct finalist *t;      /* tries re-measured in a slot of their own */
	size_t nt;
	struct finalist **of_try;  /* per --try: its slot, or the finalist it is; NULL: none */
	double *base_us;         /* per round */
	int base_ok;
	bool out_of_time;        /* a final or ablation run was not made: no run or time left */

	/* after the final rounds: the winner (NULL: none), the baseline's figures */
	bool picked;
	struct finalist *win;
	size_t nb;
	double bmean, blo, bhi;
	/* after the ablation: the winner's variables and the recommendation, the winner
	 * less what was dropped (rec_unset: dimensions without an unset level) */
	struct ablation ab[SPACE_MAX_DIMS];
	size_t nab;
	bool has_rec;
	struct point rec;
	uint32_t rec_unset;
	/* without a winner to ablate: the best finalist a guard size disqualified, and each
	 * of its variables' cost at that size, measured */
	const struct finalist *guarded;
	struct attribution attr[SPACE_MAX_DIMS];
	size_t nattr;

	/* the machine: the step, the cursor in it, the run asked for */
	enum decide_step step;
	size_t per, ne;          /* final rounds: runs per round, entries re-measured */
	size_t r, j;             /* the round and the position in it */
	size_t i;                /* decisions: the variable */
	struct decide_rounds R;  /* the ablation's or attribution's rounds */
	struct finalist *asked_entry;   /* the final-round entry asked for (NULL: baseline) */
	struct finalist *kept_win;      /* the winner, while the attribution's rounds run */
	/* more rounds (more.c): the entry paired with the baseline in extra rounds, the
	 * position in the pair, the extra rounds run, the candidates promoted */
	struct finalist *more_x;
	size_t more_j, extra, promoted;
	char err[256];           /* why decide_next failed */
};

/* The next run the final phase wants: 1 with *req, 0 when it is done (f is then the
 * result), -1 when out of memory (message in f->err). Call decide_tell with the outcome
 * of each run asked for, after the run is in v->log. Notes go to v->note. */
int decide_next(struct final_state *f, const struct decide_view *v, struct decide_request *req);
/* The outcome o of the run decide_next asked for; v->log's last run is that run.
 * Can't fail. */
void decide_tell(struct final_state *f, const struct decide_view *v, const struct outcome *o);

/* Runs reserved for the final re-measurement: min(12, budget / 5), plus three rounds'
 * worth for each try, but never so many that the baseline and the tries cannot run.
 * Can't fail. */
int decide_final_reserve(int budget, size_t ntries);
/* Runs kept after the final rounds for the ablation of the winner's variables:
 * min(10, budget / 6) from a budget of 20. Can't fail. */
int decide_ablate_reserve(int budget, size_t ntries);
/* Runs the baseline, warm start and search may use. Can't fail. */
size_t decide_search_limit(int budget, size_t ntries);
/* The runs a time limit keeps time for after the search: two interleaved rounds of the
 * finalists, the tries and the baseline (at most the final reserve). The ablation gets
 * what time is left (its runs stop at the limit; a variable not ablated stays). Can't
 * fail. */
int decide_final_time_runs(int budget, size_t ntries);
/* The smallest budget whose final reserve holds two interleaved rounds of one finalist
 * with the baseline and the tries that ran ok: what a session too small to measure its
 * best twice should be run with. Can't fail. */
int decide_budget_needed(const struct decide_view *v);

/* The guards in the outer search (issue 30): what the two-level search's strategy is
 * told of the outer point of `full` beyond its objective. *ratio gets the worst guard
 * size's latency in that point's sweeps (NCCL's own choice there) over the baseline's
 * (the median of the baseline's runs and the sweeps of the point that sets nothing; 1
 * for a point that runs NCCL's defaults at every guard size; NAN: none measured, or no
 * guard), *bytes that size. Returns the factor to multiply the objective by: 1 up to
 * 1 + DECIDE_GUARD_SWEEP_MARGIN, then (ratio / (1 + margin)) ^ DECIDE_GUARD_PENALTY_POWER,
 * so that bo spends its budget where a deployable answer can be, not in a region the
 * final rounds would refuse. Can't fail. */
double decide_outer_guard_penalty(const struct decide_view *v, const struct point *full,
                                  double *ratio, size_t *bytes);

/* Was the winner w measured well enough to recommend: in at least two final rounds
 * interleaved with an ok baseline, or re-measured ok twice without one? */
bool decide_enough(const struct final_state *f, const struct finalist *w);
/* How much one run varies: the pooled standard deviation of log(objective) over the
 * configurations the final rounds re-measured, with how many and the degrees of
 * freedom. False when there are fewer than 2 degrees of freedom. */
bool decide_noise(const struct runlog *l, double *sd, int *configs, int *dof);
/* Does every choice the best.rules entry r (docs/formats.md: bytes, algo, proto, ctas;
 * null: left to NCCL) sets equal what NCCL ran in the baseline at its size (so that
 * forcing it changes nothing there)? Can't fail. */
bool decide_rule_is_baseline(const struct runlog *l, const cJSON *r);
/* Does deploying point p (less the dimensions set in `unset`) set nothing: no
 * process-level variable, and every per-size rule forcing only what NCCL ran in the
 * baseline at its size? Out of memory says false. */
bool decide_point_sets_nothing(const struct runlog *l, const struct point *p, uint32_t unset);

/* x (NULL: the baseline) against the baseline at `bytes`, paired by final run order
 * (ratio, lo, hi: the pair's own t-interval). With two or more pairs the size is judged
 * with the session's pooled noise model at that size (decide_size_pool): call SAFE,
 * UNSAFE or UNDECIDED against DECIDE_GUARD_ALLOWED, (glo, ghi) its interval, more the
 * further rounds guardstat estimates would decide it (0: decided; -1: none would).
 * Slower: UNSAFE; with one round (not judged) a ratio above 1 + 3 run sd. When no
 * variable of x acts at `bytes` (runlog_defaults_at) the size is SAFE by
 * identity (identical, judged), however few rounds ran. */
struct decide_size {
	double base, best, ratio, lo, hi;
	size_t pairs;
	bool slower;
	bool identical;              /* x deploys NCCL's defaults at this size */
	bool judged;                 /* pairs >= 2 and a noise model: call is the verdict */
	enum guardstat_call call;
	double glo, ghi;
	int more;
};
void decide_size_compare(const struct runlog *l, const struct finalist *x, size_t bytes,
                         struct decide_size *c);
/* The pooled noise model (result/guardstat.h) at `bytes` (0: the objective, per step):
 * every configuration run more than once in the final and ablation rounds (the
 * baseline, finalists, tries, the winner less a variable), and at a size other than the
 * objective every outer point whose sweeps measured NCCL's own choice there more than
 * once. Can't fail (a latency that is not a positive number is left out). */
void decide_size_pool(const struct runlog *l, size_t bytes, struct guardstat_pool *pool);
/* Judge cand[i] against base[i] (paired, i < n; pairs with a NAN left out) at `bytes`
 * (0: the objective) with decide_size_pool's model against the allowed ratio. Returns 0
 * with *gv, or -1 when fewer than two pairs are left or there is no noise model. */
int decide_pair_judge(const struct runlog *l, size_t bytes, const double *base,
                      const double *cand, size_t n, double allowed,
                      struct guardstat_verdict *gv);
/* The medians at `bytes` of x's final runs (NULL: the baseline's), in run order, NAN
 * where a run failed. Returns how many runs (at most max). */
size_t decide_final_size_us(const struct runlog *l, const struct finalist *x,
                            size_t bytes, double *out, size_t max);
/* results.json's top list into out (room for DECIDE_TOP_MAX + DECIDE_FINALISTS): the
 * clean finalists first, fastest mean first (ties keep their rank), *nfinal of them,
 * then the rest of the search's best candidates (measured once) in ranked order, up to
 * DECIDE_TOP_MAX in all unless more finalists are clean. Returns how many. */
size_t decide_top(const struct final_state *f, const struct finalist **out, size_t *nfinal);

/* The finalist or try slot at rotation position j (j < f->k + f->nt). */
struct finalist *decide_entry(struct final_state *f, size_t j);
/* Free what f holds and zero it; accepts a zeroed f. */
void decide_free(struct final_state *f);

/* Mean and interval of the non-NAN entries of x. Returns how many there were. */
size_t decide_finite_stats(const double *x, size_t n, double *mean, double *lo, double *hi);
/* Paired ratio of a over b, exp(mean log(a_r / b_r)), over the rounds where both ran.
 * Returns how many rounds that was (0: ratio NAN). */
size_t decide_paired_ratio(const double *a, const double *b, size_t rounds, double *ratio,
                           double *lo, double *hi);

#endif
