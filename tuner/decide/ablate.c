/* ablate.c - after the final rounds: the winner picked (decide.h), and each of its
 * variables kept only when it does something. A decision-only variable (NCCL_ALGO,
 * NCCL_PROTO, channel and CTA bounds) is judged by what NCCL ran: when
 * the winner's decisions equal the baseline's where it acts, or one run without it shows
 * the same decisions at every size, it is dropped. A process-level variable (threads,
 * buffer sizes, P2P level, ...) is judged by measurement: the winner and the winner less
 * that variable, interleaved over rounds; not slower beyond the measured noise (tuned
 * and guard sizes), it is dropped. The runs are phase "ablate", counted and journalled
 * like the final rounds (docs/formats.md). Per-size rules are not ablated: best.rules
 * keeps each rule whole, or drops it whole where it equals the baseline's decision.
 * Without a winner to ablate, the same rounds measure what each variable of the best
 * finalist a guard size disqualified costs there (the attribution). Each run is asked
 * for (decide_ablate_next) and its outcome told (decide_ablate_tell). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncclvars.h"
#include "decide/decide.h"
#include "decide/decide_impl.h"


/* a->why, printf-style (cut to its size). */
static void set_why(struct ablation *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_why(struct ablation *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->why, sizeof a->why, fmt, ap);
	va_end(ap);
}

/* ---- the winner ---- */

/* The baseline's figures: from its final rounds, else its own run. Returns how many
 * runs they come from (0: no baseline ran ok). */
static size_t baseline_figures(const struct decide_view *v, const struct final_state *f,
                               double *mean, double *lo, double *hi)
{
	const struct outcome *b = runlog_baseline_outcome(&v->log);
	size_t nb = 0;

	if (f->rounds && f->base_ok)
		nb = decide_finite_stats(f->base_us, f->rounds, mean, lo, hi);
	if (nb == 0 && b && b->cls == OUTCOME_OK) {
		*mean = b->objective_us;
		nb = 1;
	}
	return nb;
}

/* Is x shown faster than the baseline (its gain's interval above 1)? */
static bool shown_faster(const struct finalist *x)
{
	return !isnan(x->gain_lo) && x->gain_lo > 1.0;
}

/* The winner: a clean finalist or try shown faster than the baseline before one that is
 * not (issue 30: a 1.13x whose interval reaches 1.00x does not push out a 1.10x shown
 * faster), then the best paired gain (or mean without a baseline); without a final
 * phase, the best candidate of the search or a try, its figures from its single run. An
 * off-space try that wins is the best like any other: its variables are best.env.
 * NULL: none. */
static struct finalist *pick_winner(struct final_state *f, size_t nb, double bmean)
{
	struct finalist *win = NULL;

	for (size_t j = 0; j < f->k + f->nt && f->rounds; j++) {
		struct finalist *x = decide_entry(f, j);

		if (!x->qualified)
			continue;
		if (!win || (shown_faster(x) != shown_faster(win) ? shown_faster(x)
		             : !isnan(x->gain) && !isnan(win->gain) ? x->gain > win->gain
		             : x->mean < win->mean))
			win = x;
	}
	if (!f->rounds && f->k + f->nt > 0) {
		for (size_t j = 0; j < f->k + f->nt; j++) {
			/* f->k is 0 or more; without a final, c[0] is the search's best */
			struct finalist *x = decide_entry(f, j);

			if (!win || x->search_us < win->search_us)
				win = x;
		}
		win->mean = win->search_us;
		win->lo = win->hi = NAN;
		win->ok = 1;
		win->gain = nb ? bmean / win->mean : NAN;
		win->gain_lo = win->gain_hi = NAN;
	}
	return win;
}

/* Score the final rounds, take out the finalists that slow a guard size, and pick the
 * winner: f->win, f->nb (how many runs the baseline's figures f->bmean, blo, bhi come
 * from). */
static void pick_once(const struct decide_view *v, struct final_state *f)
{
	if (f->picked)
		return;
	f->picked = true;
	f->bmean = f->blo = f->bhi = NAN;
	decide_score(v, f);
	f->nb = baseline_figures(v, f, &f->bmean, &f->blo, &f->bhi);
	decide_guards_disqualify(v, f);
	f->win = pick_winner(f, f->nb, f->bmean);
}

bool decide_enough(const struct final_state *f, const struct finalist *w)
{
	size_t pairs = 0;

	if (!w || !f->rounds || !w->us)
		return false;
	if (!f->base_ok)
		return w->ok >= 2;
	for (size_t r = 0; r < f->rounds; r++)
		pairs += !isnan(f->base_us[r]) && !isnan(w->us[r]);
	return pairs >= 2;
}

/* ---- what NCCL ran ---- */

/* The workload's sizes, tuned then guard, into out (WORKLOAD_MAX_ENTRIES * 2). */
static size_t all_sizes(const struct decide_view *v, size_t *out)
{
	const struct workload *w = v->wl;
	size_t n = 0;

	for (size_t i = 0; i < w->n; i++)
		out[n++] = w->e[i].bytes;
	for (size_t i = 0; i < w->nguard; i++)
		out[n++] = w->guard[i];
	return n;
}

/* What run r's NCCL ran at `bytes`: true with *d when its report says, for every op of
 * the size alike and not a symmetric kernel (then it can be compared). */
static bool run_decision(const struct session_run *r, size_t bytes, struct proto_decision *d)
{
	for (size_t k = 0; r->o.cls == OUTCOME_OK && k < r->o.report.nresults; k++) {
		if (r->o.report.results[k].bytes != bytes)
			continue;
		*d = r->o.report.results[k].nccl;
		return d->known && !d->mixed && !d->symmetric;
	}
	return false;
}

/* The first ok final-round run of x (NULL: the baseline), or NULL. */
static const struct session_run *final_ok_run(const struct decide_view *v, const struct finalist *x)
{
	for (size_t i = v->log.final_from; i < v->log.nruns; i++) {
		const struct session_run *r = &v->log.runs[i];

		if (r->phase != PHASE_FINAL || r->o.cls != OUTCOME_OK)
			continue;
		if (x ? runlog_same_config(r, x->has_point ? &x->p : NULL, x->try_no,
		                            space_dims(v->log.sp))
		      : !r->has_point && !r->try_no)
			return r;
	}
	return NULL;
}

/* Do a and b agree in the components `bits` (NCCLVARS_DECIDES_*) name? Algorithm and
 * protocol always count: a forced protocol may be what keeps NCCL on an algorithm, and
 * the reverse. */
static bool same_choice(const struct proto_decision *a, const struct proto_decision *b,
                        unsigned bits)
{
	return a->algo == b->algo && a->proto == b->proto &&
	       (!(bits & NCCLVARS_DECIDES_CTAS) || a->ctas == b->ctas);
}

/* "Ring/LL on 1 CTA" into buf. */
static const char *decision_text(const struct proto_decision *d, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s on %d CTA%s", proto_nccl_algo_name(d->algo),
	         proto_nccl_proto_name(d->proto), d->ctas, d->ctas == 1 ? "" : "s");
	return buf;
}

/* Do runs a and b show the same decisions (bits) at every size in sizes[0..n) where
 * `only` is 0 or that size? False when either does not say at one of them; *at is the
 * first size that differs (0: none). */
static bool same_decisions(const struct session_run *a, const struct session_run *b,
                           const size_t *sizes, size_t n, size_t only, unsigned bits,
                           size_t *at)
{
	bool any = false;

	*at = 0;
	for (size_t i = 0; i < n; i++) {
		struct proto_decision x, y;

		if (only && sizes[i] != only)
			continue;
		if (!run_decision(a, sizes[i], &x) || !run_decision(b, sizes[i], &y))
			return false;
		if (!same_choice(&x, &y, bits)) {
			*at = sizes[i];
			return false;
		}
		any = true;
	}
	return any;
}

/* ---- the winner's variables ---- */

/* Take dimension d out of the configuration (p, unset): its unset level, else a bit of
 * the mask (environment variables only). False when it cannot be left unset (a rule
 * dimension without an unset level). */
static bool leave_out(const space *sp, size_t d, struct point *p, uint32_t *unset)
{
	long l = space_null_level(sp, d);

	if (l >= 0) {
		p->lv[d] = (uint32_t)l;
		return true;
	}
	if (space_rule_of(sp, d, NULL) != SPACE_RULE_NONE)
		return false;
	*unset |= 1u << d;
	return true;
}

/* What the variable of dimension d may change: NCCLVARS_DECIDES_* bits (a rule: its
 * kind), 0 for a process-level variable; *only: a rule's size (0: every size). */
static unsigned dim_decides(const space *sp, size_t d, size_t *only)
{
	uint64_t bytes = 0;
	enum space_rule_kind k = space_rule_of(sp, d, &bytes);

	*only = (size_t)bytes;
	if (k == SPACE_RULE_ALGO)
		return NCCLVARS_DECIDES_ALGO;
	if (k == SPACE_RULE_PROTO)
		return NCCLVARS_DECIDES_PROTO;
	if (k == SPACE_RULE_CTAS)
		return NCCLVARS_DECIDES_CTAS;
	*only = 0;
	return ncclvars_decides(space_name(sp, d));
}

/* "NAME=value" of dimension d at the winner. */
static const char *var_text(const struct decide_view *v, const struct finalist *w, size_t d,
                            char *buf, size_t len)
{
	snprintf(buf, len, "%s=%s", space_name(v->log.sp, d),
	         space_level_text(v->log.sp, d, w->p.lv[d]));
	return buf;
}

/* The winner's set variables into f->ab; those whose decisions the winner shares with
 * the baseline where they act are dropped at once (by_baseline). */
static void list_vars(const struct decide_view *v, struct final_state *f)
{
	const struct finalist *w = f->win;
	const struct session_run *wr = final_ok_run(v, w), *br = final_ok_run(v, NULL);
	size_t sizes[2 * WORKLOAD_MAX_ENTRIES], n = all_sizes(v, sizes), at;
	char vt[256], d1[64];

	f->nab = 0;
	f->rec = w->p;
	f->rec_unset = 0;
	f->has_rec = true;
	for (size_t d = 0; d < space_dims(v->log.sp); d++) {
		struct ablation *a;
		size_t only;
		unsigned bits;
		struct proto_decision bd;

		/* A rule's choices act together (Simple with the algorithm left to NCCL can
		 * make NCCL pick Tree): a rule is kept or dropped whole by best.rules against
		 * the baseline's decision, never one choice at a time here. */
		if (!space_level_text(v->log.sp, d, w->p.lv[d]) ||
		    space_rule_of(v->log.sp, d, NULL) != SPACE_RULE_NONE)
			continue;
		a = &f->ab[f->nab++];
		memset(a, 0, sizeof *a);
		a->dim = d;
		a->ratio = a->lo = a->hi = NAN;
		bits = dim_decides(v->log.sp, d, &only);
		a->decision = bits != 0;
		if (!a->decision || !wr || !br ||
		    !same_decisions(wr, br, sizes, n, only, bits, &at))
			continue;
		if (!leave_out(v->log.sp, d, &f->rec, &f->rec_unset))
			continue;
		a->dropped = a->by_baseline = true;
		run_decision(br, only ? only : sizes[0], &bd);
		set_why(a, "%s: no effect, NCCL already ran %s at %zu B%s "
		         "without it (the baseline): dropped", var_text(v, w, d, vt, sizeof vt),
		         decision_text(&bd, d1, sizeof d1), only ? only : sizes[0],
		         only || n == 1 ? "" : " and the same at every other size");
	}
}

/* ---- the ablation runs ---- */

/* The configuration (p, unset) asked for in phase ablate. */
static void ask_ablate(struct decide_request *req, const struct point *p, uint32_t unset)
{
	memset(req, 0, sizeof *req);
	req->phase = PHASE_ABLATE;
	req->has_point = true;
	req->p = *p;
	req->unset = unset;
}

/* The next run of the recommendation so far less a decision-only variable not dropped
 * yet (f->i): 1 with *req; 0 when every one is judged. A variable that cannot be left
 * out, or with no run left, stays. */
static int decisions_next(const struct decide_view *v, struct final_state *f,
                          struct decide_request *req)
{
	const struct session_run *wr = final_ok_run(v, f->win);
	char vt[256];

	for (; f->i < f->nab && wr; f->i++) {
		struct ablation *a = &f->ab[f->i];
		struct point q = f->rec;
		uint32_t qu = f->rec_unset;

		if (!a->decision || a->dropped)
			continue;
		var_text(v, f->win, a->dim, vt, sizeof vt);
		if (!leave_out(v->log.sp, a->dim, &q, &qu)) {
			set_why(a, "%s: kept (its dimension has no unset level)", vt);
			continue;
		}
		if (decide_out_of_runs(v)) {
			f->out_of_time = true;
			set_why(a, "%s: kept (not ablated: no run left)", vt);
			continue;
		}
		ask_ablate(req, &q, qu);
		return 1;
	}
	return 0;
}

/* The run without variable f->i ended in o (the log's last run): the same decisions as
 * the winner's at every size, and it goes (the next one is judged without it too); else
 * it stays. */
static void decisions_tell(const struct decide_view *v, struct final_state *f,
                           const struct outcome *o)
{
	const struct session_run *wr = final_ok_run(v, f->win);
	size_t sizes[2 * WORKLOAD_MAX_ENTRIES], n = all_sizes(v, sizes);
	unsigned all = NCCLVARS_DECIDES_ALGO | NCCLVARS_DECIDES_PROTO | NCCLVARS_DECIDES_CTAS;
	struct ablation *a = &f->ab[f->i++];
	struct point q = f->rec;
	uint32_t qu = f->rec_unset;
	size_t at = v->log.nruns - 1, diff;
	struct proto_decision x, y;
	char vt[256], d1[64], d2[64];

	var_text(v, f->win, a->dim, vt, sizeof vt);
	leave_out(v->log.sp, a->dim, &q, &qu);
	a->measured = true;
	a->run = at + 1;
	if (o->cls != OUTCOME_OK) {
		set_why(a, "%s: kept (without it run %zu failed: %s)", vt,
		        a->run, outcome_class_name(o->cls));
	} else if (same_decisions(&v->log.runs[at], wr, sizes, n, 0, all, &diff)) {
		a->dropped = true;
		f->rec = q;
		f->rec_unset = qu;
		set_why(a, "%s: no effect, without it NCCL ran the same "
		        "at every size (run %zu): dropped", vt, a->run);
	} else if (diff && run_decision(&v->log.runs[at], diff, &x) &&
	           run_decision(wr, diff, &y)) {
		set_why(a, "%s: kept (without it NCCL ran %s at %zu B "
		        "instead of %s, run %zu)", vt, decision_text(&x, d1, sizeof d1), diff,
		        decision_text(&y, d2, sizeof d2), a->run);
	} else {
		set_why(a, "%s: kept (run %zu does not say what NCCL ran "
		        "at every size)", vt, a->run);
	}
}

/* The median latency at `bytes` of run i, NAN when it failed or does not say. */
static double run_size_us(const struct decide_view *v, size_t i, size_t bytes)
{
	const struct session_run *r = i == SIZE_MAX ? NULL : &v->log.runs[i];
	const struct proto_size_result *x = r && r->o.cls == OUTCOME_OK
	                                  ? proto_report_size(&r->o.report, bytes) : NULL;

	return x ? x->us.median : NAN;
}

/* Entries per round: the reference, each variable left out, and all of them left out. */
static size_t round_entries(const struct decide_rounds *R)
{
	return R->ne + 1 + (R->all ? 1 : 0);
}

/* The process-level variables that fit into the runs left, in two or more rounds of
 * the reference, the reference less each of them and, with two or more, the reference
 * less all of them when `joint` (what dropping several deploys: removals that are
 * harmless one at a time can be harmful together, when the variables stand in for each
 * other; the guard attribution only asks what each one costs). That last
 * entry goes first when runs are short; without it at most one variable is dropped.
 * Can't fail. */
static void plan_rounds(const struct decide_view *v, struct final_state *f, struct decide_rounds *R,
                        bool joint)
{
	size_t left = v->log.nruns < (size_t)v->budget ? (size_t)v->budget - v->log.nruns : 0;
	char vt[256];

	memset(R, 0, sizeof *R);
	for (size_t i = 0; i < f->nab; i++)
		if (!f->ab[i].decision)
			R->e[R->ne++] = i;
	R->all = joint && R->ne >= 2;
	while (R->ne > 0 && left / round_entries(R) < 2) {
		struct ablation *a;

		if (R->all) {
			R->all = false;
			continue;
		}
		a = &f->ab[R->e[--R->ne]];
		set_why(a, "%s: kept (not ablated: no runs left for two "
		         "rounds)", var_text(v, f->win, a->dim, vt, sizeof vt));
	}
	R->n = R->ne ? left / round_entries(R) : 0;
	if (R->n > DECIDE_ABLATE_ROUNDS_MAX)
		R->n = DECIDE_ABLATE_ROUNDS_MAX;
	for (size_t j = 0; j < SPACE_MAX_DIMS + 2; j++)
		for (size_t r = 0; r < DECIDE_ABLATE_ROUNDS_MAX; r++)
			R->run[j][r] = SIZE_MAX;
}

/* Round entry e's configuration into (q, qu): the reference (0), less variable e - 1
 * (1..ne), less all of them (ne + 1). False when it leaves nothing out. */
static bool round_point(const space *sp, const struct final_state *f, const struct decide_rounds *R,
                        size_t e, struct point *q, uint32_t *qu)
{
	bool any = false;

	*q = f->rec;
	*qu = f->rec_unset;
	if (e == 0)
		return true;
	if (e <= R->ne)
		return leave_out(sp, f->ab[R->e[e - 1]].dim, q, qu);
	for (size_t j = 0; j < R->ne; j++)
		any |= leave_out(sp, f->ab[R->e[j]].dim, q, qu);
	return any;
}

/* The next run of the rounds of the reference (the recommendation so far), the
 * reference less each process-level variable and less all of them, rotating the order
 * (f->r, f->j): 1 with *req (the entry in f->i); 0 when the rounds are done or no run or
 * time is left. */
static int rounds_next(const struct decide_view *v, struct final_state *f,
                       struct decide_request *req)
{
	const struct decide_rounds *R = &f->R;

	for (; f->r < R->n; f->r++, f->j = 0) {
		for (; f->j < round_entries(R); f->j++) {
			size_t e = (f->j + f->r) % round_entries(R);
			struct point q;
			uint32_t qu;

			if (!round_point(v->log.sp, f, R, e, &q, &qu))
				continue;
			if (decide_out_of_runs(v)) {
				f->out_of_time = true;
				return 0;
			}
			f->i = e;
			ask_ablate(req, &q, qu);
			return 1;
		}
	}
	return 0;
}

/* (reference less variable j) over the reference at `bytes` (0: the objective), paired
 * by round; *fails counts its runs that failed. Returns the pairs. */
static size_t pair_ratio(const struct decide_view *v, const struct decide_rounds *R, size_t j,
                         size_t bytes, double *ratio, double *lo, double *hi, size_t *fails)
{
	double a[DECIDE_ABLATE_ROUNDS_MAX], b[DECIDE_ABLATE_ROUNDS_MAX];

	*fails = 0;
	for (size_t r = 0; r < R->n; r++) {
		size_t ia = R->run[j + 1][r], ib = R->run[0][r];

		*fails += ia != SIZE_MAX && v->log.runs[ia].o.cls != OUTCOME_OK;
		a[r] = ia == SIZE_MAX || v->log.runs[ia].o.cls != OUTCOME_OK ? NAN
		     : bytes ? run_size_us(v, ia, bytes) : v->log.runs[ia].o.objective_us;
		b[r] = ib == SIZE_MAX || v->log.runs[ib].o.cls != OUTCOME_OK ? NAN
		     : bytes ? run_size_us(v, ib, bytes) : v->log.runs[ib].o.objective_us;
	}
	return decide_paired_ratio(a, b, R->n, ratio, lo, hi);
}

/* Judge removal j of the rounds (j < ne: one variable; j == ne: all of them) against
 * the reference (decide_removal_harmless). */
static bool removal_harmless(const struct decide_view *v, const struct final_state *f,
                             const struct decide_rounds *R, size_t j,
                             struct decide_removal *out)
{
	struct point q;
	uint32_t qu;

	round_point(v->log.sp, f, R, j + 1, &q, &qu);
	return decide_removal_harmless(v, &q, qu, R->run[j + 1], R->run[0], R->n, out);
}

/* Two or more variables dropped one at a time: dropping them together is what deploys.
 * Measured (the rounds' last entry, when all of them were dropped) and harmless, they
 * all go; otherwise only the one whose own removal measured fastest goes, and the others
 * stay with the reason. Can't fail. */
static void judge_together(const struct decide_view *v, struct final_state *f,
                           const struct decide_rounds *R)
{
	size_t nd = 0, keep = SIZE_MAX;
	struct decide_removal m;
	bool measured = false;
	char vt[256], k[256], why[256];

	for (size_t j = 0; j < R->ne; j++) {
		const struct ablation *a = &f->ab[R->e[j]];

		if (!a->dropped)
			continue;
		nd++;
		if (keep == SIZE_MAX || a->ratio < f->ab[R->e[keep]].ratio)
			keep = j;
	}
	if (nd < 2)
		return;
	memset(&m, 0, sizeof m);
	if (R->all && nd == R->ne) {
		measured = true;
		if (removal_harmless(v, f, R, R->ne, &m)) {
			decide_note(v, "ablation: all %zu dropped together is harmless too "
			            "(%.3fx [95%% %.3fx .. %.3fx] over %d rounds)", nd, m.obj.ratio,
			            m.obj.lo, m.obj.hi, m.obj.rounds);
			return;
		}
	}
	var_text(v, f->win, f->ab[R->e[keep]].dim, k, sizeof k);
	for (size_t j = 0; j < R->ne; j++) {
		struct ablation *a = &f->ab[R->e[j]];

		if (!a->dropped || j == keep)
			continue;
		a->dropped = false;
		var_text(v, f->win, a->dim, vt, sizeof vt);
		if (!measured || !m.judged)
			set_why(a, "%s: kept (harmless removed alone, %.3fx; removed together with "
			         "the others not measured in two rounds; %s goes)", vt, a->ratio, k);
		else
			set_why(a, "%s: kept (harmless removed alone, %.3fx; removed together with "
			         "the others: %s; %s goes)", vt, a->ratio,
			         decide_removal_why(&m, why, sizeof why), k);
	}
}

/* Judge each process-level variable of the rounds with the pooled noise model: dropped
 * when removing it is shown to cost at most DECIDE_ABLATE_ALLOWED in the objective and
 * leaves every guard size shown within DECIDE_GUARD_ALLOWED of the baseline, and when
 * dropping it with the others is harmless too (judge_together); kept when its removal is
 * shown slower, or not shown harmless. */
static void judge_rounds(const struct decide_view *v, struct final_state *f, const struct decide_rounds *R)
{
	char vt[256], why[256];

	for (size_t j = 0; j < R->ne; j++) {
		struct ablation *a = &f->ab[R->e[j]];
		size_t fails;
		struct decide_removal m;

		var_text(v, f->win, a->dim, vt, sizeof vt);
		a->measured = true;
		a->pairs = pair_ratio(v, R, j, 0, &a->ratio, &a->lo, &a->hi, &fails);
		if (fails || a->pairs < 2) {
			set_why(a, "%s: kept (%s)", vt, fails ? "without it a run failed"
			         : "its removal was not measured in two rounds");
			continue;
		}
		if (removal_harmless(v, f, R, j, &m)) {
			a->dropped = true;
			set_why(a, "%s: dropped, removing it is shown harmless (%.3fx [95%% %.3fx .. "
			         "%.3fx] over %zu rounds, allowed %.2fx)", vt, m.obj.ratio, m.obj.lo,
			         m.obj.hi, a->pairs, DECIDE_ABLATE_ALLOWED);
		} else if (!m.judged) {
			set_why(a, "%s: kept (no noise estimate to judge its removal by)", vt);
		} else {
			set_why(a, "%s: kept (%s)", vt, decide_removal_why(&m, why, sizeof why));
		}
	}
	judge_together(v, f, R);
	for (size_t j = 0; j < R->ne; j++)
		if (f->ab[R->e[j]].dropped)
			leave_out(v->log.sp, f->ab[R->e[j]].dim, &f->rec, &f->rec_unset);
}

/* The finalist with the best gain that a guard size disqualified (a point), or NULL. */
static struct finalist *guarded_finalist(struct final_state *f)
{
	struct finalist *g = NULL;

	for (size_t j = 0; j < f->k + f->nt && f->rounds; j++) {
		struct finalist *x = decide_entry(f, j);

		if (x->guard_bytes && x->has_point && !isnan(x->gain) && (!g || x->gain > g->gain))
			g = x;
	}
	return g;
}

/* Without a winner to ablate, the runs kept for it measure what each variable of the
 * best finalist a guard disqualified costs at that guard size: rounds of it and of it
 * less each variable, interleaved (f->step DECIDE_ROUNDS; DECIDE_DONE without such a
 * finalist). The recommendation is not changed (f->has_rec false). */
static void attribute_start(const struct decide_view *v, struct final_state *f)
{
	struct finalist *x = guarded_finalist(f);

	f->step = DECIDE_DONE;
	if (!x)
		return;
	f->guarded = x;
	f->kept_win = f->win;
	f->win = x;   /* the rounds and their texts read f->win */
	f->rec = x->p;
	f->rec_unset = 0;
	f->nab = 0;
	for (size_t d = 0; d < space_dims(v->log.sp); d++) {
		if (!space_level_text(v->log.sp, d, x->p.lv[d]) ||
		    space_rule_of(v->log.sp, d, NULL) != SPACE_RULE_NONE)
			continue;   /* a rule acts at its tuned size only, never at a guard */
		memset(&f->ab[f->nab], 0, sizeof f->ab[0]);
		f->ab[f->nab++].dim = d;
	}
	plan_rounds(v, f, &f->R, false);   /* each variable's own cost only */
	if (f->R.n)
		decide_note_live(v, "guard %zu B: measuring what each of %zu variable(s) of the "
		                 "best finalist costs there, %zu round(s)", x->guard_bytes,
		                 f->R.ne, f->R.n);
	f->r = f->j = 0;
	f->step = DECIDE_ROUNDS;
}

/* What each variable of the guarded finalist costs at its guard size, from the rounds;
 * the winner restored. */
static void attribute_finish(const struct decide_view *v, struct final_state *f)
{
	const struct finalist *x = f->guarded;
	const struct decide_rounds *R = &f->R;
	char vt[256];

	for (size_t j = 0; j < R->ne; j++) {
		struct attribution *a = &f->attr[f->nattr++];
		size_t fails;
		double r, lo, hi;

		a->dim = f->ab[R->e[j]].dim;
		a->pairs = pair_ratio(v, R, j, x->guard_bytes, &r, &lo, &hi, &fails);
		a->cost = a->pairs ? 1.0 / r : NAN;
		a->lo = a->pairs > 1 ? 1.0 / hi : NAN;
		a->hi = a->pairs > 1 ? 1.0 / lo : NAN;
		if (a->pairs)
			decide_note(v, "%s: %zu B %.2fx slower with it than without it%s (the "
			            "finalist: %.2fx the baseline there)", var_text(v, x, a->dim, vt,
			            sizeof vt), x->guard_bytes, a->cost, a->pairs > 1 ? "" :
			            " (one round)", x->guard_ratio);
	}
	f->win = f->kept_win;
	f->nab = 0;
	f->has_rec = false;
}

/* After the decision-only variables: the rounds of the process-level ones. */
static void ablate_rounds_start(const struct decide_view *v, struct final_state *f)
{
	plan_rounds(v, f, &f->R, true);
	if (f->R.n)
		decide_note_live(v, "ablation: the best and the best less each of %zu "
		                 "process-level variable(s)%s, %zu round(s), interleaved", f->R.ne,
		                 f->R.all ? " and less all of them" : "", f->R.n);
	f->r = f->j = 0;
	f->step = DECIDE_ROUNDS;
}

void decide_pick(struct final_state *f, const struct decide_view *v)
{
	const struct finalist *w;

	pick_once(v, f);
	w = f->win;
	if (!w || !w->has_point || !decide_enough(f, w) ||
	    (f->nb && !isnan(w->gain) && w->gain <= 1.0)) {
		/* nothing to recommend, the baseline, or a try off the space */
		attribute_start(v, f);
		return;
	}
	list_vars(v, f);
	f->i = 0;
	f->step = DECIDE_DECISIONS;
}

int decide_ablate_next(struct final_state *f, const struct decide_view *v,
                       struct decide_request *req)
{
	if (f->step == DECIDE_DECISIONS) {
		if (decisions_next(v, f, req))
			return 1;
		ablate_rounds_start(v, f);
	}
	if (rounds_next(v, f, req))
		return 1;
	f->step = DECIDE_DONE;
	if (f->guarded) {
		attribute_finish(v, f);
		return 0;
	}
	judge_rounds(v, f, &f->R);
	for (size_t i = 0; i < f->nab; i++)
		if (f->ab[i].why[0])
			decide_note(v, "%s", f->ab[i].why);
	return 0;
}

void decide_ablate_tell(struct final_state *f, const struct decide_view *v,
                        const struct outcome *o)
{
	if (f->step == DECIDE_DECISIONS) {
		decisions_tell(v, f, o);
		return;
	}
	f->R.run[f->i][f->r] = v->log.nruns - 1;
	f->j++;
}
