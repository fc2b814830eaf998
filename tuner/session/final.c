/* final.c - the final phase of a session (final.h): the candidates ranked (the
 * strategy's ranking first), the finalists and the tries re-measured in rounds
 * interleaved with the baseline, and each one's mean, interval and paired gain. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result/result.h"
#include "session/final.h"
#include "session/session_priv.h"

/* Runs reserved for the final re-measurement: min(12, budget / 5), plus three rounds'
 * worth for each try, but never so many that the baseline and the tries cannot run. */
/* session_final_reserve for a budget and a number of tries. */
static int reserve_for(int budget, size_t ntries)
{
	int r = budget / SESSION_FINAL_RESERVE_DIV;
	int cap = budget - 1 - (int)ntries;

	if (r > SESSION_FINAL_RESERVE_MAX)
		r = SESSION_FINAL_RESERVE_MAX;
	r += SESSION_TRY_ROUNDS * (int)ntries;
	if (r > cap)
		r = cap;
	return r > 0 ? r : 0;
}

int session_final_reserve(const nccltune_session *s)
{
	return reserve_for(s->cfg.budget, s->cfg.ntries);
}

/* Runs kept after the final rounds for the ablation of the winner's variables
 * (ablate.c): min(10, budget / 6) from a budget of 20 (below it nothing is recommended),
 * never so many that the baseline, the tries and one search run cannot run. */
static int ablate_reserve_for(int budget, size_t ntries)
{
	int r = budget >= 20 ? budget / SESSION_ABLATE_RESERVE_DIV : 0;
	int cap = budget - reserve_for(budget, ntries) - 2 - (int)ntries;

	if (r > SESSION_ABLATE_RESERVE_MAX)
		r = SESSION_ABLATE_RESERVE_MAX;
	if (r > cap)
		r = cap;
	return r > 0 ? r : 0;
}

int session_ablate_reserve(const nccltune_session *s)
{
	return ablate_reserve_for(s->cfg.budget, s->cfg.ntries);
}

int session_final_time_runs(const nccltune_session *s)
{
	int two = 2 * (SESSION_FINALISTS + 1 + (int)s->cfg.ntries);
	int r = session_final_reserve(s);

	return r < two ? r : two;
}

double session_plain_wall(const nccltune_session *s)
{
	double sum = 0;
	size_t n = 0;

	for (size_t i = 0; i < s->run.nruns; i++) {
		if (s->run.runs[i].o.cls == OUTCOME_OK && s->run.runs[i].phase != PHASE_SWEEP) {
			sum += s->run.runs[i].o.wall_s;
			n++;
		}
	}
	return n ? sum / (double)n : 0;
}

/* Runs the baseline, warm start and search may use. */
size_t session_search_limit(const nccltune_session *s)
{
	return (size_t)(s->cfg.budget - session_final_reserve(s) - session_ablate_reserve(s));
}

void session_final_free(struct final_state *f)
{
	for (size_t i = 0; i < f->nc; i++)
		free(f->c[i].us);
	for (size_t i = 0; i < f->nt; i++)
		free(f->t[i].us);
	free(f->c);
	free(f->t);
	free(f->of_try);
	free(f->base_us);
	memset(f, 0, sizeof *f);
}

static int cmp_search(const void *a, const void *b)
{
	const struct finalist *x = a, *y = b;

	return (x->search_us > y->search_us) - (x->search_us < y->search_us);
}

/* Put the candidates the strategy ranks first, in its order, the rest after them in
 * measured order. bo ranks by the GP's posterior mean, which weighs one lucky
 * measurement against its neighbours and repeats: finalists chosen that way suffer less
 * from the winner's curse than the best single runs (results/bench-2026-11-29.md). */
static int order_by_strategy(nccltune_session *s, struct final_state *f)
{
	size_t count = 0, n = 0;
	struct point *pts = NULL;
	double *est = NULL;
	struct finalist *sorted = NULL;
	bool *moved = NULL;
	int rc = NCCLTUNE_OK;

	if (f->nc < 2)
		return NCCLTUNE_OK;
	pts = calloc(f->nc, sizeof *pts);
	est = calloc(f->nc, sizeof *est);
	sorted = calloc(f->nc, sizeof *sorted);
	moved = calloc(f->nc, sizeof *moved);
	if (!pts || !est || !sorted || !moved ||
	    strategy_rank(s->run.st, pts, est, f->nc, &count) != 0) {
		rc = session_fail(s, NCCLTUNE_ERROR, "out of memory ranking the finalists");
		goto out;
	}
	for (size_t i = 0; i < count; i++) {
		for (size_t j = 0; j < f->nc; j++) {
			if (!moved[j] && session_rank_match(s, &f->c[j].p, &pts[i])) {
				sorted[n++] = f->c[j];
				moved[j] = true;
				break;
			}
		}
	}
	for (size_t j = 0; j < f->nc; j++)
		if (!moved[j])
			sorted[n++] = f->c[j];
	memcpy(f->c, sorted, f->nc * sizeof *f->c);
out:
	free(pts);
	free(est);
	free(sorted);
	free(moved);
	return rc;
}

/* Do the runs' outcomes a and b show the same decisions at every tuned size (each known,
 * of every op alike, no symmetric kernel)? */
static bool same_decisions(const nccltune_session *s, const struct outcome *a,
                           const struct outcome *b)
{
	for (size_t w = 0; w < s->cfg.wl.n; w++) {
		const struct proto_size_result *ra = proto_report_size(&a->report, s->cfg.wl.e[w].bytes);
		const struct proto_size_result *rb = proto_report_size(&b->report, s->cfg.wl.e[w].bytes);
		const struct proto_decision *x = ra ? &ra->nccl : NULL, *y = rb ? &rb->nccl : NULL;

		if (!x || !y || !x->known || !y->known || x->mixed || y->mixed || x->symmetric ||
		    y->symmetric || x->algo != y->algo || x->proto != y->proto || x->ctas != y->ctas)
			return false;
	}
	return s->cfg.wl.n > 0;
}

/* Are p and q the same point: identical decisions of NCCL at every tuned size (their
 * search runs) and identical variables for the process? What differs between them then
 * is only how a per-size decision was asked for (a rule of LL128 where NCCL has it
 * IGNORE and runs LL, a rule of 8 CTAs clamped to a pool of 2). A process variable, a
 * decision-only one too (NCCL_PROTO, the channel bounds), acts at every size the server
 * runs, not only at the tuned ones the search measured: it has to be equal. */
static bool same_point(const nccltune_session *s, const struct point *p, const struct point *q)
{
	const struct outcome *a = session_known_outcome(s, p), *b = session_known_outcome(s, q);

	for (size_t d = 0; d < space_dims(s->run.sp); d++)
		if (space_rule_of(s->run.sp, d, NULL) == SPACE_RULE_NONE && p->lv[d] != q->lv[d])
			return false;
	return a && b && a->cls == OUTCOME_OK && b->cls == OUTCOME_OK && same_decisions(s, a, b);
}

/* Take out of f->c every candidate that is the same point as one ranked before it (it
 * would be a second finalist measuring the same thing), with a note. Can't fail. */
static void drop_same_points(nccltune_session *s, struct final_state *f)
{
	size_t n = 0;
	char a[512], b[512];

	for (size_t j = 0; j < f->nc; j++) {
		size_t i = 0;

		while (i < n && !same_point(s, &f->c[i].p, &f->c[j].p))
			i++;
		if (i < n) {
			if (!session_replaying(s) && i < SESSION_FINALISTS)
				session_note(&s->out, "final: %s is the same point as %s (the same "
				             "variables for the process, and NCCL ran the same at every "
				             "tuned size): not a finalist of its own",
				             space_point_describe(s->run.sp, &f->c[j].p, a, sizeof a),
				             space_point_describe(s->run.sp, &f->c[i].p, b, sizeof b));
			continue;
		}
		f->c[n++] = f->c[j];
	}
	f->nc = n;
}

/* ---- the guard-aware finalist choice (issue 17) ---- */

/* The baseline's median at `bytes` in its first ok run; NAN when none says. */
static double baseline_size_us(const nccltune_session *s, uint64_t bytes)
{
	const struct session_run *b = session_baseline_ok_run(s);
	const struct proto_size_result *x = b ? proto_report_size(&b->o.report, bytes) : NULL;

	return x ? x->us.median : NAN;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median over the sweeps of p's outer point of the guard size `bytes` under NCCL's
 * own choice (their inner results: own cases at a guard size); NAN when none. */
static double sweep_guard_us(const nccltune_session *s, const struct point *p, uint64_t bytes)
{
	double v[SESSION_SWEEP_ATTEMPTS * 4];
	size_t n = 0;

	for (size_t i = 0; i < s->run.ninner && n < sizeof v / sizeof v[0]; i++) {
		const struct twolevel_inner *in = &s->run.inner[i];

		if (in->index == TWOLEVEL_OWN && in->bytes == bytes && in->cls == OUTCOME_OK &&
		    in->run < s->run.nruns && twolevel_same_outer(s->run.tl, &in->p, p))
			v[n++] = in->us;
	}
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof v[0], cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* x's worst guard size in its sweeps against the baseline, into x->sweep_guard_ratio
 * and x->sweep_guard_bytes (NAN and 0: no sweep measured one). Can't fail. */
static void sweep_guard_of(const nccltune_session *s, struct finalist *x)
{
	x->sweep_guard_ratio = NAN;
	x->sweep_guard_bytes = 0;
	for (size_t g = 0; s->run.tl && x->has_point && g < s->cfg.wl.nguard; g++) {
		double b = baseline_size_us(s, s->cfg.wl.guard[g]);
		double r = sweep_guard_us(s, &x->p, s->cfg.wl.guard[g]) / b;

		if (b > 0 && isfinite(r) && !(r <= x->sweep_guard_ratio)) {
			x->sweep_guard_ratio = r;
			x->sweep_guard_bytes = s->cfg.wl.guard[g];
		}
	}
}

/* Did x's sweeps measure a guard size beyond what the final rounds let pass? */
static bool guard_risky(const struct finalist *x)
{
	return isfinite(x->sweep_guard_ratio) && x->sweep_guard_ratio > 1 + SESSION_GUARD_SWEEP_MARGIN;
}

/* How many process-level variables p sets (a level other than unset). */
static size_t vars_set(const nccltune_session *s, const struct point *p)
{
	size_t n = 0;

	for (size_t d = 0; d < space_dims(s->run.sp); d++)
		n += space_rule_of(s->run.sp, d, NULL) == SPACE_RULE_NONE &&
		     space_level_text(s->run.sp, d, p->lv[d]) != NULL;
	return n;
}

/* Is a closer to NCCL's defaults than b: a lower guard ratio in the sweeps when both
 * were measured there, else fewer process-level variables set? */
static bool closer_to_defaults(const nccltune_session *s, const struct finalist *a,
                               const struct finalist *b)
{
	if (isfinite(a->sweep_guard_ratio) && isfinite(b->sweep_guard_ratio))
		return a->sweep_guard_ratio < b->sweep_guard_ratio;
	return a->has_point && b->has_point && vars_set(s, &a->p) < vars_set(s, &b->p);
}

/* Note a candidate the guards moved out of the finalists' places. */
static void note_risky(nccltune_session *s, const struct finalist *x)
{
	char d[512];

	if (!session_replaying(s))
		session_note(&s->out, "final: %s measured the guard size %zu B at %.2fx the "
		             "baseline in its sweep (limit %.2fx): ranked after the candidates "
		             "that pass the guards", space_point_describe(s->run.sp, &x->p, d,
		             sizeof d), x->sweep_guard_bytes, x->sweep_guard_ratio,
		             1 + SESSION_GUARD_SWEEP_MARGIN);
}

/* Reorder f->c for the guards: first the candidates within SESSION_TIE_MARGIN of the
 * fastest that passes the guards in its sweeps (closest to NCCL's defaults first), then
 * the other passing ones, then those a guard size would refuse (each in the order it
 * had). A session without sweep guard figures (one level) keeps its order but for the
 * ties. Returns an nccltune_status. */
static int rank_by_guards(nccltune_session *s, struct final_state *f)
{
	struct finalist *sorted = calloc(f->nc ? f->nc : 1, sizeof *sorted);
	double best = INFINITY;
	size_t n = 0;

	if (!sorted)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory ranking the finalists");
	for (size_t j = 0; j < f->nc; j++) {
		sweep_guard_of(s, &f->c[j]);
		if (!guard_risky(&f->c[j]) && f->c[j].search_us < best)
			best = f->c[j].search_us;
	}
	for (size_t j = 0; j < f->nc; j++) {
		size_t at = n;

		if (guard_risky(&f->c[j]) || !(f->c[j].search_us <= best * (1 + SESSION_TIE_MARGIN)))
			continue;
		while (at > 0 && closer_to_defaults(s, &f->c[j], &sorted[at - 1]))
			at--;   /* stable insertion: ties keep their order */
		memmove(&sorted[at + 1], &sorted[at], (n - at) * sizeof *sorted);
		sorted[at] = f->c[j];
		n++;
	}
	for (size_t j = 0; j < f->nc; j++)
		if (!guard_risky(&f->c[j]) && !(f->c[j].search_us <= best * (1 + SESSION_TIE_MARGIN)))
			sorted[n++] = f->c[j];
	for (size_t j = 0; j < f->nc; j++) {
		if (!guard_risky(&f->c[j]))
			continue;
		if (j < SESSION_FINALISTS)
			note_risky(s, &f->c[j]);
		sorted[n++] = f->c[j];
	}
	memcpy(f->c, sorted, f->nc * sizeof *f->c);
	free(sorted);
	return NCCLTUNE_OK;
}

/* The configurations that may be recommended, best measured first, then in the
 * strategy's order (order_by_strategy), one per point (drop_same_points). */
int session_final_rank(nccltune_session *s, struct final_state *f)
{
	struct point base;
	bool has_base = session_baseline_point(s, &base);
	size_t dims = space_dims(s->run.sp);
	int rc;

	f->c = calloc(s->run.nruns + 1, sizeof *f->c);
	if (!f->c)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	for (size_t i = 0; i < s->run.nruns; i++) {
		const struct session_run *r = &s->run.runs[i];
		const struct outcome *last;
		bool seen = false;

		if (!r->has_point || r->phase == PHASE_FINAL)
			continue;
		for (size_t j = 0; j < f->nc && !seen; j++)
			seen = point_equal(&f->c[j].p, &r->p, dims);
		if (seen || (has_base && point_equal(&base, &r->p, dims)))
			continue;
		last = session_known_outcome(s, &r->p);
		if (!last || last->cls != OUTCOME_OK || session_ever_wrong(s, &r->p) ||
		    prune_suspect(s->run.pr, &r->p) || prune_rejects(s->run.pr, &r->p))
			continue;
		f->c[f->nc].p = r->p;
		f->c[f->nc].has_point = true;
		f->c[f->nc].search_us = last->objective_us;
		f->nc++;
	}
	/* qsort is not stable; candidates enter in run order and equal objectives are
	 * rare, but make the order total anyway by comparing run order last. */
	qsort(f->c, f->nc, sizeof *f->c, cmp_search);
	rc = order_by_strategy(s, f);
	if (rc == NCCLTUNE_OK)
		drop_same_points(s, f);
	if (rc == NCCLTUNE_OK)
		rc = rank_by_guards(s, f);
	return rc;
}

/* Did try try_no run ok (its last own outcome), without ever giving a wrong sum? */
static const struct outcome *try_ok(const nccltune_session *s, size_t try_no)
{
	const struct tryconf *t = &s->cfg.tries[try_no - 1];
	const struct outcome *o = session_try_outcome(s, try_no);

	if (!o || o->cls != OUTCOME_OK ||
	    session_config_ever_wrong(s, t->in_space ? &t->p : NULL, try_no))
		return NULL;
	return o;
}

int session_final_budget_needed(const nccltune_session *s)
{
	const struct outcome *b = session_baseline_outcome(s);
	size_t fixed = b && b->cls == OUTCOME_OK ? 1 : 0;

	for (size_t i = 0; i < s->cfg.ntries; i++)
		fixed += try_ok(s, i + 1) != NULL;
	/* two rounds of one finalist, the baseline and the tries, and before them room for
	 * the baseline, the tries and at least one search run */
	for (int budget = 2; budget <= 100000; budget++) {
		int r = reserve_for(budget, s->cfg.ntries);

		if ((size_t)r >= 2 * (1 + fixed) &&
		    budget - r - ablate_reserve_for(budget, s->cfg.ntries) >= 2 + (int)s->cfg.ntries)
			return budget;
	}
	return 100000;
}

/* Give every try that ran ok a place in the final rounds: the finalist it is, when it
 * is one of the first k candidates, else a slot of its own. */
static int place_tries(nccltune_session *s, struct final_state *f)
{
	f->of_try = calloc(s->cfg.ntries + 1, sizeof *f->of_try);
	f->t = calloc(s->cfg.ntries + 1, sizeof *f->t);
	if (!f->of_try || !f->t)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	for (size_t i = 0; i < s->cfg.ntries; i++) {
		const struct tryconf *t = &s->cfg.tries[i];
		const struct outcome *o = try_ok(s, i + 1);
		struct finalist *x;

		if (!o)
			continue;
		for (size_t j = 0; j < f->k && t->in_space && !f->of_try[i]; j++)
			if (point_equal(&f->c[j].p, &t->p, space_dims(s->run.sp)))
				f->of_try[i] = &f->c[j];
		if (f->of_try[i])
			continue;
		x = &f->t[f->nt++];
		x->has_point = t->in_space;
		x->p = t->p;
		x->try_no = i + 1;
		x->search_us = o->objective_us;
		f->of_try[i] = x;
	}
	return NCCLTUNE_OK;
}

/* The finalist or try slot at rotation position j. */
struct finalist *session_final_entry(struct final_state *f, size_t j)
{
	return j < f->k ? &f->c[j] : &f->t[j - f->k];
}

/* How many finalists and rounds the final reserve allows (f->k, f->rounds; 0 rounds:
 * nothing to re-measure), with the tries placed: *per runs make a round, *ne entries
 * (finalists and try slots) are re-measured. Returns an nccltune_status. */
static int plan_rounds(nccltune_session *s, struct final_state *f, size_t *per, size_t *ne)
{
	size_t budget = (size_t)s->cfg.budget;
	size_t remaining = s->run.nruns < budget ? budget - s->run.nruns : 0;
	size_t R = (size_t)session_final_reserve(s), tries_ok = 0;
	const struct outcome *b = session_baseline_outcome(s);
	int rc;

	if (s->run.nruns < session_search_limit(s)) {
		/* The search ended before its share was spent (out of points, stuck, or the
		 * time limit): the final rounds may take what it left, up to a full reserve, the
		 * ablation's kept (a small budget on a small space then still gets two rounds).
		 * Decided on the run count alone, not on why the search stopped (a resumed
		 * session only guesses that), so a replay plans the same rounds; under a time
		 * limit the final runs still stop at the limit. */
		size_t abl = (size_t)session_ablate_reserve(s);
		size_t full = SESSION_FINAL_RESERVE_MAX + SESSION_TRY_ROUNDS * s->cfg.ntries;
		size_t more = remaining > abl ? remaining - abl : 0;

		if (more > full)
			more = full;
		if (more > R)
			R = more;
	}
	if (R > remaining)
		R = remaining;
	f->base_ok = b && b->cls == OUTCOME_OK;
	f->k = f->nc < SESSION_FINALISTS ? f->nc : SESSION_FINALISTS;
	for (size_t i = 0; i < s->cfg.ntries; i++)
		tries_ok += try_ok(s, i + 1) != NULL;
	*per = f->k + tries_ok + (size_t)f->base_ok;
	f->rounds = *per ? R / *per : 0;
	if (f->rounds < 2 && f->k > 1) {
		/* Two rounds of fewer finalists beat one round of more: an interval needs two.
		 * The user's tries always stay. */
		size_t fixed = (size_t)f->base_ok + tries_ok;
		size_t k = R / 2 > fixed ? R / 2 - fixed : 1;

		f->k = k < f->k ? k : f->k;
	}
	rc = place_tries(s, f);
	if (rc)
		return rc;
	*ne = f->k + f->nt;
	if (*ne == 0) {
		/* nothing to re-measure: no rounds, so nothing reads the per-round arrays */
		f->rounds = 0;
		return 0;
	}
	*per = *ne + (size_t)f->base_ok;
	f->rounds = R / *per;
	return 0;
}

/* The per-round figures of the baseline and of the ne entries, NAN until a round ran.
 * Returns an nccltune_status. */
static int alloc_rounds(nccltune_session *s, struct final_state *f, size_t ne)
{
	f->base_us = malloc(f->rounds * sizeof *f->base_us);
	if (!f->base_us)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	for (size_t r = 0; r < f->rounds; r++)
		f->base_us[r] = NAN;
	for (size_t j = 0; j < ne; j++) {
		struct finalist *x = session_final_entry(f, j);

		x->us = malloc(f->rounds * sizeof *x->us);
		if (!x->us)
			return session_fail(s, NCCLTUNE_ERROR, "out of memory");
		for (size_t r = 0; r < f->rounds; r++)
			x->us[r] = NAN;
	}
	return NCCLTUNE_OK;
}

/* Live, has the session no run or no time left for another final run? */
static bool final_out_of_time(const nccltune_session *s)
{
	return !session_replaying(s) && (s->run.nruns >= (size_t)s->cfg.budget ||
	       (s->cfg.time_limit_s > 0 && session_elapsed(s) >= s->cfg.time_limit_s));
}

/* Note what round r's run of entry c (NULL: the baseline) gave; a wrong sum also
 * teaches the pruner. */
static void take_final(nccltune_session *s, struct final_state *f, struct finalist *c,
                       size_t r, const struct outcome *o)
{
	if (!c) {
		f->base_us[r] = o->cls == OUTCOME_OK ? o->objective_us : NAN;
	} else if (o->cls == OUTCOME_OK) {
		c->us[r] = o->objective_us;
		c->ok++;
	} else {
		if (c->failed == 0)
			c->fail_cls = o->cls;
		c->failed++;
		if (o->cls == OUTCOME_VERIFY && c->has_point)
			prune_observe(s->run.pr, &c->p, o);
	}
}

int session_final_run(nccltune_session *s, struct final_state *f)
{
	size_t per = 0, ne = 0;
	struct outcome *o;
	bool out_of_time = false;
	int rc = plan_rounds(s, f, &per, &ne);

	if (rc || f->rounds == 0)
		return rc;
	rc = alloc_rounds(s, f, ne);
	if (rc)
		return rc;
	o = malloc(sizeof *o);
	if (!o)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	if (!session_replaying(s))
		session_note(&s->out, "final: re-measuring %zu finalist(s) and %zu more of your "
		             "--try %zu time(s) each, interleaved with the baseline", f->k,
		             f->nt, f->rounds);
	for (size_t r = 0; r < f->rounds && rc == 0 && !out_of_time; r++) {
		for (size_t j = 0; j < per; j++) {
			/* Rotating the entries' order spreads drift over all of them. */
			bool is_base = f->base_ok && j == 0;
			size_t at = (j - (size_t)f->base_ok + r) % ne;
			struct finalist *c = is_base ? NULL : session_final_entry(f, at);

			if (final_out_of_time(s)) {
				if (s->run.stop == STOP_NONE)
					s->run.stop = STOP_TIME;
				out_of_time = true;
				break;
			}
			rc = session_execute(s, PHASE_FINAL, c && c->has_point ? &c->p : NULL,
			                     c ? c->try_no : 0, o);
			if (rc)
				break;
			take_final(s, f, c, r, o);
		}
	}
	free(o);
	return rc;
}

/* Mean and interval of the non-NAN entries of x. Returns how many there were. */
size_t session_finite_stats(const double *x, size_t n, double *mean, double *lo, double *hi)
{
	double *v = malloc((n ? n : 1) * sizeof *v);
	size_t m = 0;

	*mean = *lo = *hi = NAN;
	if (!v)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isnan(x[i]))
			v[m++] = x[i];
	if (m)
		result_mean_ci(v, m, mean, lo, hi);
	free(v);
	return m;
}

/* Paired ratio of a over b, exp(mean log(a_r / b_r)), over the rounds where both ran.
 * Returns how many rounds that was (0: ratio NAN). */
size_t session_paired_ratio(const double *a, const double *b, size_t rounds, double *ratio,
                            double *lo, double *hi)
{
	double *x = malloc((rounds ? rounds : 1) * sizeof *x);
	double *y = malloc((rounds ? rounds : 1) * sizeof *y);
	size_t n = 0;

	*ratio = *lo = *hi = NAN;
	for (size_t r = 0; x && y && a && b && r < rounds; r++) {
		if (!isnan(a[r]) && !isnan(b[r]) && a[r] > 0 && b[r] > 0) {
			x[n] = a[r];
			y[n++] = b[r];
		}
	}
	if (n > 0)
		result_paired_gain(x, y, n, ratio, lo, hi);
	free(x);
	free(y);
	return n;
}

static void score_one(nccltune_session *s, struct final_state *f, struct finalist *x)
{
	x->gain = x->gain_lo = x->gain_hi = NAN;
	session_finite_stats(x->us, f->rounds, &x->mean, &x->lo, &x->hi);
	x->qualified = x->ok > 0 && x->failed == 0 &&
	               !session_config_ever_wrong(s, x->has_point ? &x->p : NULL, x->try_no) &&
	               !(x->has_point && prune_suspect(s->run.pr, &x->p));
	session_paired_ratio(f->base_us, x->us, f->rounds, &x->gain, &x->gain_lo, &x->gain_hi);
}

void session_final_score(nccltune_session *s, struct final_state *f)
{
	for (size_t j = 0; j < f->k + f->nt && f->rounds; j++)
		score_one(s, f, session_final_entry(f, j));
}
