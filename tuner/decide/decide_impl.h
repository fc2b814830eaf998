/* decide_impl.h - what the files of decide/ call of each other, bottom up: notes.c (the
 * notes), rankguard.c (the guard-aware order), final.c (the reserves, the ranking and
 * the final rounds), sizes.c (the noise, the scores, the rules, the guard sizes), more.c (more
 * rounds for an undecided guard or gain, the fall-back to the next candidate), removal.c (the
 * verdict on a removal), ablate.c (the winner and its variables), decide.c (the stage's
 * ask and tell over them). Not part of the public API. */
#ifndef NCCLTUNE_DECIDE_IMPL_H
#define NCCLTUNE_DECIDE_IMPL_H

#include "decide/decide.h"

/* ---- notes.c ---- */
/* A note for the user through v->note, printf-style; _live: not while replaying. */
void decide_note(const struct decide_view *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void decide_note_live(const struct decide_view *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* f->err, printf-style; returns -1. */
int decide_fail(struct final_state *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- rankguard.c ---- */
/* Does p run NCCL's defaults at every guard size (no process-level variable, no rule of
 * a guard size: safe there by identity)? False without guard sizes. Can't fail. */
bool decide_defaults_at_guards(const struct decide_view *v, const struct point *p);
/* Reorder the candidates f->c for the guards (rankguard.c says how); each one's
 * sweep_guard_ratio and sweep_guard_bytes set. Returns 0, or -1 when out of memory
 * (f->err). */
int decide_rank_by_guards(const struct decide_view *v, struct final_state *f);

/* ---- final.c ---- *//* Live, has the session no run or no time left for another run? */
bool decide_out_of_runs(const struct decide_view *v);
/* Note what round r's run of entry c (NULL: the baseline) gave: the final rounds' and the
 * extra rounds' (more.c) one record of an outcome. (A wrong sum also teaches the pruner:
 * the session tells it, as it does of every run.) Can't fail. */
void decide_final_take(struct final_state *f, struct finalist *c, size_t r,
                       const struct outcome *o);
/* The candidates ranked, the final rounds planned (f->step: DECIDE_FINAL, or
 * DECIDE_PICK when nothing is re-measured). Returns 0 or -1 (f->err). */
int decide_final_start(struct final_state *f, const struct decide_view *v);
/* The next final-round run: 1 with *req, 0 when the rounds are done (or no run or time
 * is left: f->out_of_time). */
int decide_final_next(struct final_state *f, const struct decide_view *v,
                      struct decide_request *req);
/* The outcome of the final-round run asked for. */
void decide_final_tell(struct final_state *f, const struct outcome *o);

/* ---- sizes.c ---- */
/* The worst of x's guard sizes (bytes, ratio, hi: the first such, hi its upper bound):
 * call UNSAFE when one is slower; else UNDECIDED when one is not shown safe (judged) or
 * measured in fewer than two rounds (judged false); else SAFE (no guard: SAFE). more:
 * the most further rounds a judged undecided one needs, -1 when no number would. */
struct decide_guard_worst {
	enum guardstat_call call;
	bool judged;
	size_t bytes;
	double ratio, hi;
	int more;
};
void decide_guards_of(const struct decide_view *v, const struct finalist *x,
                      struct decide_guard_worst *g);
/* Take out of f every finalist that a guard size is shown to slow beyond
 * DECIDE_GUARD_ALLOWED or is not shown safe at, with a note naming the size and the
 * ratio. */
void decide_guards_disqualify(const struct decide_view *v, struct final_state *f);

/* Each re-measured entry's mean, interval, gain over the baseline (its interval from the
 * pooled noise model of the step, decide_pair_judge), and whether it may be
 * recommended. Can't fail. */
void decide_score(const struct decide_view *v, struct final_state *f);

/* ---- more.c ---- */
/* The next extra round's run (an undecided guard measured more, or a candidate promoted
 * when every finalist was refused): 1 with *req, 0 when none is needed or fits, -1 when
 * out of memory (f->err). */
int decide_more_next(struct final_state *f, const struct decide_view *v,
                     struct decide_request *req);
/* The outcome of the extra round's run asked for. Can't fail. */
void decide_more_tell(struct final_state *f, const struct outcome *o);

/* ---- removal.c ---- */
/* What the ablation's rounds show of removing variables from the reference, with the
 * session's pooled noise model (result/guardstat.h): its objective against the
 * reference's (paired by round) against DECIDE_ABLATE_ALLOWED, and at each guard size
 * against the baseline's final rounds against DECIDE_GUARD_ALLOWED (a configuration
 * that sets nothing acting there is NCCL's defaults: safe by identity). */
struct decide_removal {
	bool judged;                 /* two pairs or more and a noise model */
	struct guardstat_verdict obj;
	size_t guard_at;             /* the first guard size not shown safe (0: none) */
	struct guardstat_verdict guard;
	bool guard_judged;
};
/* Removal (q less `qu`), run in runs[r] (log index, SIZE_MAX: none) paired with the
 * reference's ref[r] over n rounds: harmless (true) when its objective is SAFE and
 * every guard size SAFE; *out says why not. Can't fail. */
bool decide_removal_harmless(const struct decide_view *v, const struct point *q, uint32_t qu,
                             const size_t *runs, const size_t *ref, size_t n,
                             struct decide_removal *out);
/* Why removal m keeps a variable ("without it 1.300x slower ..."), into buf (returned). */
const char *decide_removal_why(const struct decide_removal *m, char *buf, size_t len);

/* ---- ablate.c ---- */
/* Score the final rounds, take out the finalists that slow a guard size, pick the
 * winner, and set up the ablation of its variables (f->step DECIDE_DECISIONS) or,
 * without a winner to ablate, the guard attribution's rounds (DECIDE_ROUNDS), or
 * nothing (DECIDE_DONE). Can't fail. */
void decide_pick(struct final_state *f, const struct decide_view *v);
/* The next ablation run (the step's): 1 with *req, 0 when the step is done (f->step
 * moved on). */
int decide_ablate_next(struct final_state *f, const struct decide_view *v,
                       struct decide_request *req);
/* The outcome of the ablation run asked for (the log's last run). */
void decide_ablate_tell(struct final_state *f, const struct decide_view *v,
                        const struct outcome *o);

#endif
