/* final.h - the final phase of a session: the candidates ranked, the finalists and the
 * tries re-measured interleaved with the baseline, and their scores (final.c), which
 * results.c turns into results.json. Not part of the public API. */
#ifndef NCCLTUNE_SESSION_FINAL_H
#define NCCLTUNE_SESSION_FINAL_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>
#include <stdint.h>

#include "nccltune.h"
#include "run/outcome.h"
#include "space/space.h"

struct finalist {
	struct point p;
	bool has_point;          /* false: an off-space try */
	size_t try_no;           /* a --try (1-based) in its own slot; 0: a search candidate */
	double search_us;        /* what the search (or the try's own run) measured */
	double *us;              /* per round; NAN where the run failed or did not happen */
	int ok, failed;
	enum outcome_class fail_cls;   /* of the first failed repeat */
	double mean, lo, hi, gain, gain_lo, gain_hi;
	bool qualified;
	size_t guard_bytes;      /* the guard size that disqualified it (0: none) */
	double guard_ratio;      /* its latency there over the baseline's */
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

struct final_state {
	struct finalist *c;
	size_t nc;               /* candidates (ranked), of which k are finalists */
	size_t k, rounds;
	struct finalist *t;      /* tries re-measured in a slot of their own */
	size_t nt;
	struct finalist **of_try;  /* per --try: its slot, or the finalist it is; NULL: none */
	double *base_us;         /* per round */
	int base_ok;

	/* after session_final_pick: the winner (NULL: none), the baseline's figures */
	bool picked;
	struct finalist *win;
	size_t nb;
	double bmean, blo, bhi;
	/* after session_final_ablate: the winner's variables and the recommendation, the
	 * winner less what was dropped (rec_unset: dimensions without an unset level) */
	struct ablation ab[SPACE_MAX_DIMS];
	size_t nab;
	bool has_rec;
	struct point rec;
	uint32_t rec_unset;
	/* without a winner to ablate: the best finalist a guard size disqualified, and each
	 * of its variables' cost at that size, measured (session_final_ablate) */
	const struct finalist *guarded;
	struct attribution attr[SPACE_MAX_DIMS];
	size_t nattr;
};

/* Runs reserved for the final re-measurement: min(12, budget / 5), plus three rounds'
 * worth for each try, but never so many that the baseline and the tries cannot run.
 * Can't fail. */
int session_final_reserve(const nccltune_session *s);
/* The smallest budget whose final reserve holds two interleaved rounds of one finalist
 * with the baseline and the tries that ran ok: what a session too small to measure its
 * best twice should be run with. Can't fail. */
int session_final_budget_needed(const nccltune_session *s);
/* Runs kept after the final rounds for the ablation of the winner's variables:
 * min(10, budget / 6) from a budget of 20. Can't fail. */
int session_ablate_reserve(const nccltune_session *s);
/* The runs a time limit keeps time for after the search: two interleaved rounds of the
 * finalists, the tries and the baseline (at most the final reserve). The ablation gets
 * what time is left (its runs stop at the limit; a variable not ablated stays). Can't
 * fail. */
int session_final_time_runs(const nccltune_session *s);
/* The mean wall time of the plain (not sweep) runs that worked, 0 when none: what one
 * final round's run takes. Can't fail. */
double session_plain_wall(const nccltune_session *s);
/* Runs the baseline, warm start and search may use. Can't fail. */
size_t session_search_limit(const nccltune_session *s);

/* The configurations that may be recommended into f->c, best first (the strategy's
 * ranking first), then guard-aware: a candidate whose sweeps measured a guard size
 * beyond the final rounds' limit plus a noise margin ranks after every other, and among
 * the candidates tied at the tuned sizes the one closest to NCCL's defaults comes first.
 * Returns an nccltune_status, message in s->err. */
int session_final_rank(nccltune_session *s, struct final_state *f);
/* Re-measure the finalists and the tries that ran ok, interleaved with the baseline,
 * in as many rounds as the reserve allows. Returns 0, NCCLTUNE_INTERRUPTED, or
 * NCCLTUNE_ERROR with a message in s->err. */
int session_final_run(nccltune_session *s, struct final_state *f);
/* Each re-measured entry's mean, interval, gain over the baseline, and whether it may
 * be recommended. Can't fail. */
void session_final_score(nccltune_session *s, struct final_state *f);
/* Score the final rounds, take out the finalists that slow a guard size, and pick the
 * winner: f->win, f->nb (how many runs the baseline's figures f->bmean, blo, bhi come
 * from). Once per f (f->picked). Can't fail. */
void session_final_pick(nccltune_session *s, struct final_state *f);
/* Was the winner w measured well enough to recommend: in at least two final rounds
 * interleaved with an ok baseline, or re-measured ok twice without one? */
bool session_final_enough(const struct final_state *f, const struct finalist *w);
/* Drop from the winner's recommendation the variables that change nothing
 * (docs/formats.md, "ablation"): a decision-only variable when the winner ran NCCL's
 * baseline decisions, or when one run without it shows the same decisions at every
 * size; a process-level variable when removing it is not slower beyond the measured
 * noise in rounds interleaved with the winner. Its runs (phase ablate) count against
 * the budget and are replayed on resume. Returns 0, NCCLTUNE_INTERRUPTED, or
 * NCCLTUNE_ERROR with a message in s->err. */
int session_final_ablate(nccltune_session *s, struct final_state *f);
/* The env object of the recommendation (the winner less what was dropped); NULL when
 * out of memory. */
cJSON *session_final_rec_env(const nccltune_session *s, const struct final_state *f);

/* The finalist or try slot at rotation position j (j < f->k + f->nt). */
struct finalist *session_final_entry(struct final_state *f, size_t j);
/* Free what f holds and zero it; accepts a zeroed f. */
void session_final_free(struct final_state *f);

/* Mean and interval of the non-NAN entries of x. Returns how many there were. */
size_t session_finite_stats(const double *x, size_t n, double *mean, double *lo, double *hi);
/* Paired ratio of a over b, exp(mean log(a_r / b_r)), over the rounds where both ran.
 * Returns how many rounds that was (0: ratio NAN). */
size_t session_paired_ratio(const double *a, const double *b, size_t rounds, double *ratio,
                            double *lo, double *hi);

#endif
