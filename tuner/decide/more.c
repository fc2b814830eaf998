/* more.c - after the final rounds, before the winner is picked: the guards and the gain
 * decided with more measurement (issue 30). The best finalist whose guard sizes the pooled noise
 * model (result/guardstat.h) cannot yet show within DECIDE_GUARD_ALLOWED of the baseline
 * gets more rounds paired with the baseline, as many as guardstat estimates would decide
 * it, when the runs left hold them; when every finalist is refused (shown slower, or not
 * shown safe with no runs to show it), the next candidate that differs from the refused
 * ones in a process-level variable (what acts at a guard size: a per-size rule acts at
 * its own size only) is promoted and measured in rounds of its own: the fall-back. The
 * best finalist safe at the guards whose gain the pooled model of the step cannot yet
 * show gets more rounds too, when they fit.
 * Each extra round is the baseline and the entry, in alternating order, appended to the
 * final rounds' arrays (the other entries NAN there). Decided from the log alone, so a
 * resumed session asks for the same runs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decide/decide.h"
#include "decide/decide_impl.h"

#define MORE_PROMOTED_MAX DECIDE_FINALISTS   /* fall-back candidates per session */

/* Runs the budget has left (live; a replay is answered by the journal). */
static size_t runs_left(const struct decide_view *v)
{
	return v->log.nruns < (size_t)v->budget ? (size_t)v->budget - v->log.nruns : 0;
}

/* Rounds in which both x and the baseline ran ok. */
static size_t pairs_of(const struct final_state *f, const struct finalist *x)
{
	size_t n = 0;

	for (size_t r = 0; x->us && r < f->rounds; r++)
		n += !isnan(x->us[r]) && !isnan(f->base_us[r]);
	return n;
}

/* One more round in every array (NAN). Returns 0, or -1 when out of memory. */
static int grow_round(struct final_state *f)
{
	size_t n = f->rounds + 1;
	double *b = realloc(f->base_us, n * sizeof *b);

	if (!b)
		return decide_fail(f, "out of memory");
	f->base_us = b;
	b[n - 1] = NAN;
	for (size_t j = 0; j < f->k + f->nt; j++) {
		struct finalist *x = decide_entry(f, j);
		double *u = realloc(x->us, n * sizeof *u);

		if (!u)
			return decide_fail(f, "out of memory");
		x->us = u;
		u[n - 1] = NAN;
	}
	f->rounds = n;
	return 0;
}

/* Do a and b set the same process-level variables (the dimensions that are not rules)? */
static bool same_process(const struct decide_view *v, const struct point *a, const struct point *b)
{
	for (size_t d = 0; d < space_dims(v->log.sp); d++)
		if (space_rule_of(v->log.sp, d, NULL) == SPACE_RULE_NONE && a->lv[d] != b->lv[d])
			return false;
	return true;
}

/* Does x differ from the finalists in what acts at a guard size: another process-level
 * setting than each of them, and, on every process-level variable that all of them set
 * to one level (the flaw they may share: the same thread count), another level? */
static bool diverse(const struct decide_view *v, const struct final_state *f,
                    const struct finalist *x)
{
	for (size_t j = 0; j < f->k; j++)
		if (same_process(v, &f->c[j].p, &x->p))
			return false;
	for (size_t d = 0; f->k && d < space_dims(v->log.sp); d++) {
		uint32_t l = f->c[0].p.lv[d];
		bool shared = space_rule_of(v->log.sp, d, NULL) == SPACE_RULE_NONE &&
		              space_level_text(v->log.sp, d, l) != NULL;

		for (size_t j = 1; shared && j < f->k; j++)
			shared = f->c[j].p.lv[d] == l;
		if (shared && x->p.lv[d] == l)
			return false;
	}
	return true;
}

/* The candidate after the finalists to promote: the first, in rank order, that is
 * diverse from them, its sweeps not showing it slow at a guard, and that runs NCCL's
 * defaults at every guard size (safe there by identity); else the first of the others
 * that are diverse and not shown slow. Moved to place f->k (a finalist now, its rounds
 * NAN so far). NULL: none (or out of memory: f->err). */
static struct finalist *promote(const struct decide_view *v, struct final_state *f)
{
	size_t at = f->nc;

	for (int pass = 0; pass < 2 && at == f->nc; pass++)
		for (size_t m = f->k; m < f->nc && at == f->nc; m++) {
			const struct finalist *x = &f->c[m];

			if (x->has_point && !(isfinite(x->sweep_guard_ratio) &&
			                      x->sweep_guard_ratio > 1 + DECIDE_GUARD_SWEEP_MARGIN) &&
			    (pass || decide_defaults_at_guards(v, &x->p)) && diverse(v, f, x))
				at = m;
		}
	if (at == f->nc)
		return NULL;
	{
		struct finalist tmp = f->c[f->k], *x;

		f->c[f->k] = f->c[at];
		f->c[at] = tmp;
		x = &f->c[f->k];
		x->us = malloc((f->rounds ? f->rounds : 1) * sizeof *x->us);
		if (!x->us) {
			decide_fail(f, "out of memory");
			return NULL;
		}
		for (size_t r = 0; r < f->rounds; r++)
			x->us[r] = NAN;
		f->k++;
		f->promoted++;
		return x;
	}
}

/* Is x, safe at the guards, not yet shown faster than the baseline (its gain's interval
 * under the pooled noise model of the step reaches 1.00x) with a gain that the rounds
 * that fit in `left` runs could show? Then it gets them (a note says so once): a 1.10x
 * on a machine whose runs vary by 5% is not shown in three rounds, and ending at NCCL's
 * defaults with runs left over leaves a real gain untaken (issue 30). */
static bool gain_needs_more(const struct decide_view *v, struct final_state *f,
                            const struct finalist *x, size_t left, char *desc, size_t len)
{
	struct guardstat_verdict gv;

	if (decide_pair_judge(&v->log, 0, f->base_us, x->us, f->rounds, 1.0, &gv) != 0 ||
	    gv.call != GUARDSTAT_UNDECIDED || !(gv.ratio < 1.0) || gv.more_rounds <= 0 ||
	    2 * (size_t)gv.more_rounds > left)
		return false;
	if (x != f->more_x)
		decide_note_live(v, "final: %s not shown faster yet (%.3fx the baseline's step, "
		                 "up to %.3fx within the noise): %d more round(s) with the baseline",
		                 x->has_point ? space_point_describe(v->log.sp, &x->p, desc, len)
		                              : "a try", gv.ratio, gv.hi, gv.more_rounds);
	return true;
}

/* The entry that needs more rounds, or NULL: the finalists (and tries) faster than the
 * baseline, best gain first; the first whose guards are safe ends the search (NULL, or
 * that one when its gain is not shown yet and the rounds to show it fit), one
 * not yet paired twice or undecided with rounds that fit is the one; shown slower, or
 * undecided with its ratio at or above the allowed (more rounds could only show it
 * slower) or beyond the runs left, it is passed over. */
static struct finalist *needs_more(const struct decide_view *v, struct final_state *f,
                                   bool *refused_all)
{
	size_t ne = f->k + f->nt, left = runs_left(v);
	bool *done = calloc(ne ? ne : 1, sizeof *done);
	struct finalist *pick = NULL;
	size_t refused = 0;
	char desc[512];

	*refused_all = false;
	if (!done) {
		decide_fail(f, "out of memory");
		return NULL;
	}
	decide_score(v, f);
	for (size_t j = f->k - f->promoted; j < f->k; j++)
		if (f->c[j].qualified && pairs_of(f, &f->c[j]) < 2) {
			pick = &f->c[j];   /* a promoted candidate: two rounds first */
			goto out;
		}
	for (size_t pass = 0; pass < ne; pass++) {
		struct finalist *best = NULL;
		struct decide_guard_worst g;
		size_t bj = 0;

		for (size_t j = 0; j < ne; j++) {
			struct finalist *x = decide_entry(f, j);

			if (done[j] || !x->qualified || !(x->gain > 1.0) || pairs_of(f, x) < 2 ||
			    (best && !(x->gain > best->gain)))
				continue;
			best = x;
			bj = j;
		}
		if (!best)
			break;
		done[bj] = true;
		decide_guards_of(v, best, &g);
		if (g.call == GUARDSTAT_SAFE) {
			refused = 0;   /* a winner: nothing to fall back from */
			if (gain_needs_more(v, f, best, left, desc, sizeof desc))
				pick = best;
			break;
		}
		/* more rounds only where they could show it safe: its ratio below the allowed */
		if (g.call == GUARDSTAT_UNDECIDED && g.judged && g.more > 0 &&
		    g.ratio < DECIDE_GUARD_ALLOWED && 2 * (size_t)g.more <= left) {
			if (best != f->more_x)
				decide_note_live(v, "guard %zu B: %s not shown safe yet (%.3fx the "
				                 "baseline, up to %.3fx within the noise; allowed %.2fx): "
				                 "%d more round(s) with the baseline", g.bytes,
				                 best->has_point ? space_point_describe(v->log.sp,
				                 &best->p, desc, sizeof desc) : "a try", g.ratio, g.hi,
				                 DECIDE_GUARD_ALLOWED, g.more);
			pick = best;
			break;
		}
		refused++;
	}
	*refused_all = !pick && refused > 0;
out:
	free(done);
	return pick;
}

/* The entry of the next extra round: one that needs more, else a candidate promoted
 * when every finalist was refused at a guard and two rounds fit. NULL: none. */
static struct finalist *choose(const struct decide_view *v, struct final_state *f)
{
	bool refused_all;
	struct finalist *x = needs_more(v, f, &refused_all);
	char desc[512];

	if (x || f->err[0] || !refused_all || f->promoted >= MORE_PROMOTED_MAX ||
	    runs_left(v) < 4)
		return x;
	x = promote(v, f);
	if (x)
		decide_note_live(v, "final: every finalist refused at a guard size; measuring the "
		                 "next candidate, %s, with the baseline",
		                 space_point_describe(v->log.sp, &x->p, desc, sizeof desc));
	return x;
}

/* Ask for the run at position f->more_j of the current extra round: the baseline
 * first in even rounds, the entry first in odd ones. */
static void ask(struct final_state *f, struct decide_request *req)
{
	bool base = (f->more_j == 0) == (f->extra % 2 == 0);

	memset(req, 0, sizeof *req);
	req->phase = PHASE_FINAL;
	f->asked_entry = base ? NULL : f->more_x;
	req->has_point = !base && f->more_x->has_point;
	if (req->has_point)
		req->p = f->more_x->p;
	req->try_no = base ? 0 : f->more_x->try_no;
}

int decide_more_next(struct final_state *f, const struct decide_view *v,
                     struct decide_request *req)
{
	if (f->more_x && f->more_j == 1) {
		if (decide_out_of_runs(v)) {
			f->out_of_time = true;
			return 0;
		}
		ask(f, req);
		return 1;
	}
	if (!f->rounds || !f->base_ok || decide_out_of_runs(v) ||
	    (!v->replaying && runs_left(v) < 2)) {
		f->more_x = NULL;
		return 0;
	}
	f->more_x = choose(v, f);
	if (!f->more_x)
		return f->err[0] ? -1 : 0;
	if (grow_round(f) != 0)
		return -1;
	f->more_j = 0;
	ask(f, req);
	return 1;
}

void decide_more_tell(struct final_state *f, const struct outcome *o)
{
	decide_final_take(f, f->asked_entry, f->rounds - 1, o);
	if (++f->more_j == 2) {
		f->more_j = 0;
		f->extra++;
	}
}
