/* decide_view.c - what the final phase (decide/decide.h) is shown of a session: a
 * read-only view of its runs, its workload, tries, budget and time, whether the journal
 * is still being replayed, the strategy's ranking and a way to say notes - never the
 * handle itself. */
#include <stdio.h>

#include "session/session_priv.h"

/* The strategy's ranking, for decide_view.rank. */
static int rank_points(void *ctx, struct point *pts, double *est, size_t max, size_t *count)
{
	const nccltune_session *s = ctx;

	return strategy_rank(s->run.st, pts, est, max, count) != 0 ? -1 : 0;
}

/* A note of the final phase, for decide_view.note. */
static void note_text(void *ctx, const char *text)
{
	nccltune_session *s = ctx;

	session_note(&s->out, "%s", text);
}

void session_decide_view(nccltune_session *s, struct decide_view *v)
{
	v->log = session_runlog(s);
	v->wl = &s->cfg.wl;
	v->tries = s->cfg.tries;
	v->ntries = s->cfg.ntries;
	v->budget = s->cfg.budget;
	v->time_limit_s = s->cfg.time_limit_s;
	v->elapsed_s = session_elapsed(s);
	v->replaying = session_replaying(s);
	v->rank = rank_points;
	v->rank_ctx = s;
	v->note = note_text;
	v->note_ctx = s;
}
