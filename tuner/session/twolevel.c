/* twolevel.c - when the search stops (the budget, which counts probe processes, the
 * time limit), and the two-level search of a session whose probe sweeps (issue 17): the
 * outer strategy picks the process-level variables, each outer point's inner choices
 * (what the space allows and the failure rules do not reject) are swept in one probe
 * process, and the best per-size combination is the outer observation. A sweep that a
 * choice ends (a hang, a capture NCCL fails at: the choice in flight) is run again
 * without that choice's algorithm and protocol for its size, at most
 * SESSION_SWEEP_ATTEMPTS processes per outer point. The outer point that sets nothing
 * is swept first, before the strategy's first point (issue 30): its per-size rules are
 * the one kind of candidate that runs NCCL's defaults at every guard size, safe there by
 * identity, and the best of them is the fall-back when no process-level variable can
 * be shown safe at the guards. With --time-limit the sweep is sized to the time left,
 * from the seconds per choice the earlier sweeps took. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/session_priv.h"

bool session_search_done(nccltune_session *s)
{
	session_budget_step(s);
	if (session_replaying(s)) {
		if (s->run.queue[s->run.qpos].phase != PHASE_FINAL &&
		    s->run.queue[s->run.qpos].phase != PHASE_ABLATE)
			return false;
		/* Why the recorded search ended is not recorded; the likely reason. */
		s->run.stop = s->run.nruns >= session_search_limit(s) ? STOP_BUDGET
		        : s->cfg.time_limit_s > 0 ? STOP_TIME : STOP_EXHAUSTED;
		return true;
	}
	if (s->run.nruns >= session_search_limit(s)) {
		s->run.stop = STOP_BUDGET;
		return true;
	}
	if (s->cfg.time_limit_s > 0 && session_elapsed(s) + session_plain_wall(s) *
	    (1 + session_final_time_runs(s)) >= s->cfg.time_limit_s) {
		s->run.stop = STOP_TIME;
		return true;
	}
	return false;
}

/* How many inner choices the time left allows in the next sweep (after the final
 * rounds' time, session_final_time_runs, and the sweep's own process start); TWOLEVEL_MAX_CHOICES without a time
 * limit, while replaying, or before a sweep has measured its cost per choice. */
static size_t choices_fit(const nccltune_session *s)
{
	double plain, per = session_sweep_choice_s(s, &plain), left;
	bool measured = false;

	for (size_t i = 0; i < s->run.nruns && !measured; i++)
		measured = s->run.runs[i].phase == PHASE_SWEEP && s->run.runs[i].o.cls == OUTCOME_OK;
	if (s->cfg.time_limit_s <= 0 || session_replaying(s) || !measured)
		return TWOLEVEL_MAX_CHOICES;
	left = s->cfg.time_limit_s - session_elapsed(s) -
	       plain * (2 + session_final_time_runs(s));
	if (left <= 0)
		return 0;
	return left / per >= TWOLEVEL_MAX_CHOICES ? TWOLEVEL_MAX_CHOICES : (size_t)(left / per);
}

/* The outcome of an outer point swept to its end (an ok sweep, a failure of the process
 * itself, or the plain run of a point with nothing to sweep), or NULL. */
static const struct outcome *outer_known(const nccltune_session *s, const struct point *full)
{
	for (size_t i = s->run.nruns; i-- > 0;) {
		const struct session_run *r = &s->run.runs[i];

		if (!r->has_point || !twolevel_same_outer(s->run.tl, &r->p, full))
			continue;
		if ((r->phase == PHASE_SWEEP && !r->in_flight) ||
		    (r->phase == PHASE_SEARCH && twolevel_rules_null(s->run.tl, &r->p)))
			return &r->o;
	}
	return NULL;
}

/* The (size, algorithm, protocol) of choices that ended a sweep of this outer point. */
struct deferred {
	const twolevel *tl;
	size_t n;
	struct point p[SESSION_SWEEP_ATTEMPTS];
	uint64_t bytes[SESSION_SWEEP_ATTEMPTS];
};

static bool skip_deferred(void *ctx, const struct twolevel_choice *c)
{
	const struct deferred *d = ctx;

	for (size_t i = 0; i < d->n; i++)
		if (d->bytes[i] == c->bytes && twolevel_same_pair(d->tl, &c->p, &d->p[i], c->bytes))
			return true;
	return false;
}

/* Defer what ended the last run: its choice in flight (its point and size, from the
 * run's inner results). */
static void defer_last(const nccltune_session *s, struct deferred *d)
{
	const struct session_run *r = &s->run.runs[s->run.nruns - 1];

	for (size_t i = s->run.ninner; i-- > 0 && d->n < SESSION_SWEEP_ATTEMPTS;) {
		const struct twolevel_inner *in = &s->run.inner[i];

		if (in->run == s->run.nruns - 1 && in->index != TWOLEVEL_OWN &&
		    point_equal(&in->p, &r->p, space_dims(s->run.sp))) {
			d->p[d->n] = in->p;
			d->bytes[d->n++] = in->bytes;
			return;
		}
	}
}

/* A point with nothing left to sweep: one plain run under NCCL's choices. */
static int run_plain(nccltune_session *s, const struct point *full, struct outcome *o)
{
	int rc = session_execute(s, PHASE_SEARCH, full, 0, o);

	if (rc == 0) {
		session_observe(s, full, o);
		session_outer_observe(s, full, o);
	}
	return rc;
}

/* Sweep the outer point of `full` in as many processes as it takes (a choice in flight
 * deferred each time; a flake retried once), and tell the outer strategy. */
static int sweep_outer(nccltune_session *s, const struct point *full,
                       struct twolevel_choice *choices, struct outcome *o)
{
	struct deferred d;
	bool noted = false;

	memset(&d, 0, sizeof d);
	d.tl = s->run.tl;
	for (int attempt = 0; attempt < SESSION_SWEEP_ATTEMPTS; attempt++) {
		size_t fit = choices_fit(s), dropped = 0, n;
		const struct session_run *r;
		int rc;

		if (attempt > 0 && !session_replaying(s) && s->run.nruns >= session_search_limit(s))
			return 0;   /* the budget is spent; the outer point stays unobserved */
		if (fit == 0) {
			s->run.stop = STOP_TIME;
			return 0;
		}
		n = twolevel_plan(s->run.tl, s->run.pr, full, skip_deferred, &d, fit, choices,
		                  &dropped);
		if (dropped && !noted && !session_replaying(s)) {
			session_note(&s->out, "sweep: %zu of %zu inner choices fit %s", n, n + dropped,
			             fit < TWOLEVEL_MAX_CHOICES ? "the time left" : "one sweep file");
			noted = true;
		}
		if (n == 0)
			return run_plain(s, full, o);
		rc = session_sweep_execute(s, full, choices, n, o);
		if (rc)
			return rc;
		r = &s->run.runs[s->run.nruns - 1];
		if (o->cls != OUTCOME_OK && r->in_flight) {
			defer_last(s, &d);
			continue;
		}
		if (o->cls != OUTCOME_OK && outcome_class_flaky(o->cls) && attempt == 0)
			continue;
		session_outer_observe(s, &r->p, o);
		return 0;
	}
	session_outer_observe(s, full, o);   /* every attempt ended with a choice in flight */
	return 0;
}

/* The outer point that sets nothing (every outer variable at its unset level) into *q:
 * false when some outer variable has no unset level, when the space's constraints or
 * the failure rules rule it out, or when it was swept already. */
static bool outer_unset_due(const nccltune_session *s, const space *osp, struct point *q)
{
	struct point full;

	if (!runlog_baseline_point(osp, q) || !space_allows(osp, q) ||
	    prune_rejects(s->run.pr_outer, q))
		return false;
	twolevel_full_of(s->run.tl, q, &full);
	return outer_known(s, &full) == NULL;
}

int session_twolevel_search(nccltune_session *s, struct outcome *o)
{
	const space *osp = twolevel_outer_space(s->run.tl);
	struct twolevel_choice *choices = malloc(TWOLEVEL_MAX_CHOICES * sizeof *choices);
	char e[1024];
	int rc = 0;

	if (!choices)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	while (rc == 0 && !session_search_done(s)) {
		struct point q, full;
		const struct outcome *k;

		memset(&q, 0, sizeof q);
		if (osp && !s->run.unset_swept) {
			s->run.unset_swept = true;   /* asked once: a failed sweep is not retried */
			if (outer_unset_due(s, osp, &q)) {
				twolevel_full_of(s->run.tl, &q, &full);
				rc = sweep_outer(s, &full, choices, o);
				continue;
			}
		}
		if (osp) {
			rc = strategy_suggest(s->run.st, &q, e, sizeof e);
			if (rc == 1) {
				s->run.stop = STOP_EXHAUSTED;
				rc = 0;
				break;
			}
			if (rc != 0) {
				rc = session_fail(s, NCCLTUNE_ERROR, "strategy %s: %s",
				                  s->cfg.strategy_name, e);
				break;
			}
		}
		twolevel_full_of(s->run.tl, &q, &full);
		k = outer_known(s, &full);
		if (k && !osp) {
			s->run.stop = STOP_EXHAUSTED;   /* the one outer point is swept */
			break;
		}
		if (k) {
			/* Nothing is swept twice: tell the strategy again. */
			struct outcome copy = *k;

			session_outer_tell(s, &full, &copy, false);
			if (++s->run.duplicates >= SESSION_MAX_DUPLICATES) {
				s->run.stop = STOP_STUCK;
				break;
			}
			continue;
		}
		s->run.duplicates = 0;
		rc = sweep_outer(s, &full, choices, o);
	}
	free(choices);
	return rc;
}
