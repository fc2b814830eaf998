/* final.c - the final phase of a session (decide.h): the candidates ranked (the
 * strategy's ranking first), the finalists and the tries re-measured in rounds
 * interleaved with the baseline, and each one's mean, interval and paired gain. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result/result.h"
#include "decide/decide.h"
#include "decide/decide_impl.h"
#include "decide/keyindex.h"

/* Runs reserved for the final re-measurement: min(12, budget / 5), plus three rounds'
 * worth for each try, but never so many that the baseline and the tries cannot run. */
int decide_final_reserve(int budget, size_t ntries)
{
	int r = budget / DECIDE_FINAL_RESERVE_DIV;
	int cap = budget - 1 - (int)ntries;

	if (r > DECIDE_FINAL_RESERVE_MAX)
		r = DECIDE_FINAL_RESERVE_MAX;
	r += DECIDE_TRY_ROUNDS * (int)ntries;
	if (r > cap)
		r = cap;
	return r > 0 ? r : 0;
}

/* Runs kept after the final rounds for the ablation of the winner's variables
 * (ablate.c): min(10, budget / 6) from a budget of 20 (below it nothing is recommended),
 * never so many that the baseline, the tries and one search run cannot run. */
int decide_ablate_reserve(int budget, size_t ntries)
{
	int r = budget >= 20 ? budget / DECIDE_ABLATE_RESERVE_DIV : 0;
	int cap = budget - decide_final_reserve(budget, ntries) - 2 - (int)ntries;

	if (r > DECIDE_ABLATE_RESERVE_MAX)
		r = DECIDE_ABLATE_RESERVE_MAX;
	if (r > cap)
		r = cap;
	return r > 0 ? r : 0;
}

int decide_final_time_runs(int budget, size_t ntries)
{
	int two = 2 * (DECIDE_FINALISTS + 1 + (int)ntries);
	int r = decide_final_reserve(budget, ntries);

	return r < two ? r : two;
}

size_t decide_search_limit(int budget, size_t ntries)
{
	return (size_t)(budget - decide_final_reserve(budget, ntries) -
	                decide_ablate_reserve(budget, ntries));
}

void decide_free(struct final_state *f)
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

/* By what the search measured, then by run order: a total order, so the ranking does
 * not depend on qsort's handling of equal keys. */
static int cmp_search(const void *a, const void *b)
{
	const struct finalist *x = a, *y = b;

	if (x->search_us != y->search_us)
		return (x->search_us > y->search_us) - (x->search_us < y->search_us);
	return (x->first_run > y->first_run) - (x->first_run < y->first_run);
}

/* Put the candidates the strategy ranks first, in its order, the rest after them in
 * measured order. bo ranks by the GP's posterior mean, which weighs one lucky
 * measurement against its neighbours and repeats: finalists chosen that way suffer less
 * from the winner's curse than the best single runs (results/bench-2026-11-29.md). */
static int order_by_strategy(const struct decide_view *v, struct final_state *f)
{
	size_t count = 0, n = 0;
	struct point *pts = NULL;
	double *est = NULL;
	struct finalist *sorted = NULL;
	bool *moved = NULL;
	int rc = 0;

	if (f->nc < 2)
		return 0;
	pts = calloc(f->nc, sizeof *pts);
	est = calloc(f->nc, sizeof *est);
	sorted = calloc(f->nc, sizeof *sorted);
	moved = calloc(f->nc, sizeof *moved);
	if (!pts || !est || !sorted || !moved ||
	    (v->rank && v->rank(v->rank_ctx, pts, est, f->nc, &count) != 0)) {
		rc = decide_fail(f, "out of memory ranking the finalists");
		goto out;
	}
	for (size_t i = 0; i < count; i++) {
		for (size_t j = 0; j < f->nc; j++) {
			if (!moved[j] && runlog_rank_match(&v->log, &f->c[j].p, &pts[i])) {
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

/* What the log says of each of its points (a keyindex id of the point's levels): the
 * last outcome learned for it (search, warm or retry; runlog_known_outcome) and whether
 * it ever computed a wrong sum (runlog_ever_wrong), found once for all the runs. */
struct point_facts {
	const struct outcome *known;
	bool wrong;
	bool taken;              /* a candidate already */
};

struct log_points {
	keyindex *ix;            /* a point's levels -> its facts' index */
	struct point_facts *pf;  /* one per point of the log */
	size_t words;
};

static void log_points_free(struct log_points *lp)
{
	keyindex_destroy(lp->ix);
	free(lp->pf);
}

/* The facts of every point of the log into lp. Returns 0, or -1 when out of memory. */
static int log_points_read(const struct decide_view *v, struct log_points *lp)
{
	size_t dims = space_dims(v->log.sp);

	lp->words = dims ? dims : 1;
	lp->ix = keyindex_create(lp->words, v->log.nruns);
	lp->pf = calloc(v->log.nruns + 1, sizeof *lp->pf);
	if (!lp->ix || !lp->pf)
		return -1;
	for (size_t i = 0; i < v->log.nruns; i++) {
		const struct session_run *r = &v->log.runs[i];
		bool added;
		long id;

		if (!r->has_point)
			continue;
		id = keyindex_put(lp->ix, r->p.lv, &added);
		if (id < 0)
			return -1;
		if (r->phase != PHASE_FINAL && r->phase != PHASE_ABLATE)
			lp->pf[id].known = &r->o;
		if (r->unset == 0 && r->o.cls == OUTCOME_VERIFY)
			lp->pf[id].wrong = true;
	}
	return 0;
}

/* The facts of p, a point of the log. */
static struct point_facts *log_point(const struct log_points *lp, const struct point *p)
{
	bool added;
	long id = keyindex_put(lp->ix, p->lv, &added);

	return id >= 0 && !added ? &lp->pf[id] : NULL;
}

/* The key under which candidates are the same point (same_point in docs: identical
 * decisions of NCCL at every tuned size in their search runs, identical variables for
 * the process; what differs is only how a per-size decision was asked for, a rule of
 * LL128 where NCCL has it IGNORE and runs LL, a rule of 8 CTAs clamped to a pool of 2):
 * the levels of every dimension that is not a rule (a process variable, a decision-only
 * one too, acts at every size the server runs, not only at the tuned ones), then
 * algorithm, protocol and CTAs at each tuned size. False when o does not say what NCCL
 * ran at every tuned size (each known, of every op alike, no symmetric kernel): then
 * the candidate is the same as no other. */
static bool same_point_key(const struct decide_view *v, const struct point *p,
                           const struct outcome *o, uint32_t *key)
{
	size_t dims = space_dims(v->log.sp), k = 0;

	if (!o || o->cls != OUTCOME_OK || v->wl->n == 0)
		return false;
	for (size_t d = 0; d < dims; d++)
		key[k++] = space_rule_of(v->log.sp, d, NULL) == SPACE_RULE_NONE ? p->lv[d] : 0;
	for (size_t w = 0; w < v->wl->n; w++) {
		const struct proto_size_result *x = proto_report_size(&o->report, v->wl->e[w].bytes);

		if (!x || !x->nccl.known || x->nccl.mixed || x->nccl.symmetric)
			return false;
		key[k++] = (uint32_t)x->nccl.algo;
		key[k++] = (uint32_t)x->nccl.proto;
		key[k++] = (uint32_t)x->nccl.ctas;
	}
	return true;
}

/* Take out of f->c every candidate that is the same point as one ranked before it (it
 * would be a second finalist measuring the same thing), with a note. One pass over the
 * candidates, each key looked up once. Returns 0, or -1 when out of memory. */
static int drop_same_points(const struct decide_view *v, struct final_state *f,
                            const struct log_points *lp)
{
	size_t words = space_dims(v->log.sp) + 3 * v->wl->n, n = 0;
	keyindex *ix = keyindex_create(words ? words : 1, f->nc);
	size_t *kept = calloc(f->nc + 1, sizeof *kept);   /* key id -> its candidate */
	uint32_t *key = calloc(words + 1, sizeof *key);
	char a[512], b[512];
	int rc = -1;

	if (!ix || !kept || !key)
		goto out;
	for (size_t j = 0; j < f->nc; j++) {
		const struct point_facts *pf = log_point(lp, &f->c[j].p);
		bool added;
		long id;

		if (!same_point_key(v, &f->c[j].p, pf ? pf->known : NULL, key)) {
			f->c[n++] = f->c[j];
			continue;
		}
		id = keyindex_put(ix, key, &added);
		if (id < 0)
			goto out;
		if (!added) {
			size_t i = kept[id];

			if (!v->replaying && i < DECIDE_FINALISTS)
				decide_note(v, "final: %s is the same point as %s (the same "
				            "variables for the process, and NCCL ran the same at every "
				            "tuned size): not a finalist of its own",
				            space_point_describe(v->log.sp, &f->c[j].p, a, sizeof a),
				            space_point_describe(v->log.sp, &f->c[i].p, b, sizeof b));
			continue;
		}
		kept[id] = n;
		f->c[n++] = f->c[j];
	}
	f->nc = n;
	rc = 0;
out:
	keyindex_destroy(ix);
	free(kept);
	free(key);
	return rc;
}

/* The configurations that may be recommended, best measured first, then in the
 * strategy's order (order_by_strategy), one per point (drop_same_points). */
static int final_rank(const struct decide_view *v, struct final_state *f)
{
	struct point base;
	bool has_base = runlog_baseline_point(v->log.sp, &base);
	size_t dims = space_dims(v->log.sp);
	struct log_points lp;
	int rc = -1;

	memset(&lp, 0, sizeof lp);
	f->c = calloc(v->log.nruns + 1, sizeof *f->c);
	if (!f->c || log_points_read(v, &lp) != 0)
		goto out;
	for (size_t i = 0; i < v->log.nruns; i++) {
		const struct session_run *r = &v->log.runs[i];
		struct point_facts *pf;

		if (!r->has_point || r->phase == PHASE_FINAL)
			continue;
		pf = log_point(&lp, &r->p);
		/* a point is a candidate once; what excludes it holds for all its runs */
		if (!pf || pf->taken || (has_base && point_equal(&base, &r->p, dims)))
			continue;
		if (!pf->known || pf->known->cls != OUTCOME_OK || pf->wrong ||
		    (v->log.pr && (prune_suspect(v->log.pr, &r->p) ||
		                   prune_rejects(v->log.pr, &r->p))))
			continue;
		pf->taken = true;
		f->c[f->nc].p = r->p;
		f->c[f->nc].has_point = true;
		f->c[f->nc].search_us = pf->known->objective_us;
		f->c[f->nc].first_run = i;
		f->nc++;
	}
	/* qsort is not stable: cmp_search compares run order last */
	qsort(f->c, f->nc, sizeof *f->c, cmp_search);
	rc = order_by_strategy(v, f);
	if (rc == 0 && drop_same_points(v, f, &lp) != 0)
		rc = -1;
	if (rc == 0)
		rc = decide_rank_by_guards(v, f);
	else if (!f->err[0])
		decide_fail(f, "out of memory ranking the finalists");
out:
	if (rc != 0 && !f->err[0])
		decide_fail(f, "out of memory");
	log_points_free(&lp);
	return rc;
}

/* Did try try_no run ok (its last own outcome), without ever giving a wrong sum? */
static const struct outcome *try_ok(const struct decide_view *v, size_t try_no)
{
	const struct tryconf *t = &v->tries[try_no - 1];
	const struct outcome *o = runlog_try_outcome(&v->log, try_no);

	if (!o || o->cls != OUTCOME_OK ||
	    runlog_config_ever_wrong(&v->log, t->in_space ? &t->p : NULL, try_no))
		return NULL;
	return o;
}

int decide_budget_needed(const struct decide_view *v)
{
	const struct outcome *b = runlog_baseline_outcome(&v->log);
	size_t fixed = b && b->cls == OUTCOME_OK ? 1 : 0;

	for (size_t i = 0; i < v->ntries; i++)
		fixed += try_ok(v, i + 1) != NULL;
	/* two rounds of one finalist, the baseline and the tries, and before them room for
	 * the baseline, the tries and at least one search run */
	for (int budget = 2; budget <= 100000; budget++) {
		int r = decide_final_reserve(budget, v->ntries);

		if ((size_t)r >= 2 * (1 + fixed) &&
		    budget - r - decide_ablate_reserve(budget, v->ntries) >= 2 + (int)v->ntries)
			return budget;
	}
	return 100000;
}

/* Give every try that ran ok a place in the final rounds: the finalist it is, when it
 * is one of the first k candidates, else a slot of its own. */
static int place_tries(const struct decide_view *v, struct final_state *f)
{
	f->of_try = calloc(v->ntries + 1, sizeof *f->of_try);
	f->t = calloc(v->ntries + 1, sizeof *f->t);
	if (!f->of_try || !f->t)
		return decide_fail(f, "out of memory");
	for (size_t i = 0; i < v->ntries; i++) {
		const struct tryconf *t = &v->tries[i];
		const struct outcome *o = try_ok(v, i + 1);
		struct finalist *x;

		if (!o)
			continue;
		for (size_t j = 0; j < f->k && t->in_space && !f->of_try[i]; j++)
			if (point_equal(&f->c[j].p, &t->p, space_dims(v->log.sp)))
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
	return 0;
}

/* The finalist or try slot at rotation position j. */
struct finalist *decide_entry(struct final_state *f, size_t j)
{
	return j < f->k ? &f->c[j] : &f->t[j - f->k];
}

/* How many finalists and rounds the final reserve allows (f->k, f->rounds; 0 rounds:
 * nothing to re-measure), with the tries placed: *per runs make a round, *ne entries
 * (finalists and try slots) are re-measured. Returns an nccltune_status. */
static int plan_rounds(const struct decide_view *v, struct final_state *f, size_t *per, size_t *ne)
{
	size_t budget = (size_t)v->budget;
	size_t remaining = v->log.nruns < budget ? budget - v->log.nruns : 0;
	size_t R = (size_t)decide_final_reserve(v->budget, v->ntries), tries_ok = 0;
	const struct outcome *b = runlog_baseline_outcome(&v->log);
	int rc;

	if (v->log.nruns < decide_search_limit(v->budget, v->ntries)) {
		/* The search ended before its share was spent (out of points, stuck, or the
		 * time limit): the final rounds may take what it left, up to a full reserve, the
		 * ablation's kept (a small budget on a small space then still gets two rounds).
		 * Decided on the run count alone, not on why the search stopped (a resumed
		 * session only guesses that), so a replay plans the same rounds; under a time
		 * limit the final runs still stop at the limit. */
		size_t abl = (size_t)decide_ablate_reserve(v->budget, v->ntries);
		size_t full = DECIDE_FINAL_RESERVE_MAX + DECIDE_TRY_ROUNDS * v->ntries;
		size_t more = remaining > abl ? remaining - abl : 0;

		if (more > full)
			more = full;
		if (more > R)
			R = more;
	}
	if (R > remaining)
		R = remaining;
	f->base_ok = b && b->cls == OUTCOME_OK;
	f->k = f->nc < DECIDE_FINALISTS ? f->nc : DECIDE_FINALISTS;
	for (size_t i = 0; i < v->ntries; i++)
		tries_ok += try_ok(v, i + 1) != NULL;
	*per = f->k + tries_ok + (size_t)f->base_ok;
	f->rounds = *per ? R / *per : 0;
	if (f->rounds < 2 && f->k > 1) {
		/* Two rounds of fewer finalists beat one round of more: an interval needs two.
		 * The user's tries always stay. */
		size_t fixed = (size_t)f->base_ok + tries_ok;
		size_t k = R / 2 > fixed ? R / 2 - fixed : 1;

		f->k = k < f->k ? k : f->k;
	}
	rc = place_tries(v, f);
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
static int alloc_rounds(const struct decide_view *v, struct final_state *f, size_t ne)
{
	f->base_us = malloc(f->rounds * sizeof *f->base_us);
	if (!f->base_us)
		return decide_fail(f, "out of memory");
	for (size_t r = 0; r < f->rounds; r++)
		f->base_us[r] = NAN;
	for (size_t j = 0; j < ne; j++) {
		struct finalist *x = decide_entry(f, j);

		x->us = malloc(f->rounds * sizeof *x->us);
		if (!x->us)
			return decide_fail(f, "out of memory");
		for (size_t r = 0; r < f->rounds; r++)
			x->us[r] = NAN;
	}
	return 0;
}

/* Live, has the session no run or no time left for another run? */
bool decide_out_of_runs(const struct decide_view *v)
{
	return !v->replaying && (v->log.nruns >= (size_t)v->budget ||
	       (v->time_limit_s > 0 && v->elapsed_s >= v->time_limit_s));
}

void decide_final_take(struct final_state *f, struct finalist *c, size_t r,
                       const struct outcome *o)
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
	}
}

/* The ranking, the plan of the final rounds and their arrays: the step after it is
 * DECIDE_FINAL, or DECIDE_PICK when nothing is re-measured. Returns 0 or -1. */
int decide_final_start(struct final_state *f, const struct decide_view *v)
{
	int rc = final_rank(v, f);

	if (rc == 0)
		rc = plan_rounds(v, f, &f->per, &f->ne);
	if (rc || f->rounds == 0) {
		f->step = DECIDE_PICK;
		return rc;
	}
	rc = alloc_rounds(v, f, f->ne);
	if (rc)
		return rc;
	if (f->nt)
		decide_note_live(v, "final: re-measuring %zu finalist(s) and %zu of your --try "
		                 "%zu time(s) each, interleaved with the baseline", f->k, f->nt,
		                 f->rounds);
	else
		decide_note_live(v, "final: re-measuring %zu finalist(s) %zu time(s) each, "
		                 "interleaved with the baseline", f->k, f->rounds);
	f->r = f->j = 0;
	f->step = DECIDE_FINAL;
	return 0;
}

int decide_final_next(struct final_state *f, const struct decide_view *v,
                      struct decide_request *req)
{
	/* Rotating the entries' order spreads drift over all of them. */
	bool is_base = f->base_ok && f->j == 0;
	size_t at = (f->j - (size_t)f->base_ok + f->r) % f->ne;
	struct finalist *c = is_base ? NULL : decide_entry(f, at);

	if (f->r >= f->rounds)
		return 0;
	if (decide_out_of_runs(v)) {
		f->out_of_time = true;
		return 0;
	}
	memset(req, 0, sizeof *req);
	req->phase = PHASE_FINAL;
	req->has_point = c && c->has_point;
	if (req->has_point)
		req->p = c->p;
	req->try_no = c ? c->try_no : 0;
	f->asked_entry = c;
	return 1;
}

void decide_final_tell(struct final_state *f, const struct outcome *o)
{
	decide_final_take(f, f->asked_entry, f->r, o);
	if (++f->j == f->per) {
		f->j = 0;
		f->r++;
	}
}

/* Mean and interval of the non-NAN entries of x. Returns how many there were. */
size_t decide_finite_stats(const double *x, size_t n, double *mean, double *lo, double *hi)
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
size_t decide_paired_ratio(const double *a, const double *b, size_t rounds, double *ratio,
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
