/* ablate.c - after the final rounds: the winner picked (final.h), and each of its
 * variables kept only when it does something. A decision-only variable (NCCL_ALGO,
 * NCCL_PROTO, channel and CTA bounds) is judged by what NCCL ran: when
 * the winner's decisions equal the baseline's where it acts, or one run without it shows
 * the same decisions at every size, it is dropped. A process-level variable (threads,
 * buffer sizes, P2P level, ...) is judged by measurement: the winner and the winner less
 * that variable, interleaved over rounds; not slower beyond the measured noise (tuned
 * and guard sizes), it is dropped. The runs are phase "ablate", counted and journalled
 * like the final rounds (docs/formats.md). Per-size rules are not ablated: best.rules
 * keeps each rule whole, or drops it whole where it equals the baseline's decision. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncclvars.h"
#include "fsutil.h"
#include "session/final.h"
#include "session/session_priv.h"

#define ABLATE_ROUNDS_MAX 3
#define ABLATE_Z 2.0            /* a removal is slower beyond noise past z paired sds */

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
static size_t baseline_figures(const nccltune_session *s, const struct final_state *f,
                               double *mean, double *lo, double *hi)
{
	const struct outcome *b = session_baseline_outcome(s);
	size_t nb = 0;

	if (f->rounds && f->base_ok)
		nb = session_finite_stats(f->base_us, f->rounds, mean, lo, hi);
	if (nb == 0 && b && b->cls == OUTCOME_OK) {
		*mean = b->objective_us;
		nb = 1;
	}
	return nb;
}

/* The winner: a clean finalist or try with the best paired gain (or mean without a
 * baseline); without a final phase, the best candidate of the search or a try, its
 * figures from its single run. An off-space try that wins is the best like any other:
 * its variables are best.env. NULL: none. */
static struct finalist *pick_winner(struct final_state *f, size_t nb, double bmean)
{
	struct finalist *win = NULL;

	for (size_t j = 0; j < f->k + f->nt && f->rounds; j++) {
		struct finalist *x = session_final_entry(f, j);

		if (!x->qualified)
			continue;
		if (!win || (!isnan(x->gain) && !isnan(win->gain) ? x->gain > win->gain
		                                                   : x->mean < win->mean))
			win = x;
	}
	if (!f->rounds && f->k + f->nt > 0) {
		for (size_t j = 0; j < f->k + f->nt; j++) {
			/* f->k is 0 or more; without a final, c[0] is the search's best */
			struct finalist *x = session_final_entry(f, j);

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

void session_final_pick(nccltune_session *s, struct final_state *f)
{
	if (f->picked)
		return;
	f->picked = true;
	f->bmean = f->blo = f->bhi = NAN;
	session_final_score(s, f);
	f->nb = baseline_figures(s, f, &f->bmean, &f->blo, &f->bhi);
	session_guards_disqualify(s, f);
	f->win = pick_winner(f, f->nb, f->bmean);
}

bool session_final_enough(const struct final_state *f, const struct finalist *w)
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
static size_t all_sizes(const nccltune_session *s, size_t *out)
{
	const struct workload *w = &s->cfg.wl;
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
static const struct session_run *final_ok_run(const nccltune_session *s, const struct finalist *x)
{
	for (size_t i = 0; i < s->run.nruns; i++) {
		const struct session_run *r = &s->run.runs[i];

		if (r->phase != PHASE_FINAL || r->o.cls != OUTCOME_OK)
			continue;
		if (x ? session_same_config(r, x->has_point ? &x->p : NULL, x->try_no,
		                            space_dims(s->run.sp))
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

/* The unset level of dimension d, or -1 when it has none. */
static long null_level(const space *sp, size_t d)
{
	for (size_t l = 0; l < space_levels(sp, d); l++)
		if (!space_level_text(sp, d, l))
			return (long)l;
	return -1;
}

/* Take dimension d out of the configuration (p, unset): its unset level, else a bit of
 * the mask (environment variables only). False when it cannot be left unset (a rule
 * dimension without an unset level). */
static bool leave_out(const space *sp, size_t d, struct point *p, uint32_t *unset)
{
	long l = null_level(sp, d);

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
static const char *var_text(const nccltune_session *s, const struct finalist *w, size_t d,
                            char *buf, size_t len)
{
	snprintf(buf, len, "%s=%s", space_name(s->run.sp, d),
	         space_level_text(s->run.sp, d, w->p.lv[d]));
	return buf;
}

/* The winner's set variables into f->ab; those whose decisions the winner shares with
 * the baseline where they act are dropped at once (by_baseline). */
static void list_vars(nccltune_session *s, struct final_state *f)
{
	const struct finalist *w = f->win;
	const struct session_run *wr = final_ok_run(s, w), *br = final_ok_run(s, NULL);
	size_t sizes[2 * WORKLOAD_MAX_ENTRIES], n = all_sizes(s, sizes), at;
	char v[256], d1[64];

	f->nab = 0;
	f->rec = w->p;
	f->rec_unset = 0;
	f->has_rec = true;
	for (size_t d = 0; d < space_dims(s->run.sp); d++) {
		struct ablation *a;
		size_t only;
		unsigned bits;
		struct proto_decision bd;

		/* A rule's choices act together (Simple with the algorithm left to NCCL can
		 * make NCCL pick Tree): a rule is kept or dropped whole by best.rules against
		 * the baseline's decision, never one choice at a time here. */
		if (!space_level_text(s->run.sp, d, w->p.lv[d]) ||
		    space_rule_of(s->run.sp, d, NULL) != SPACE_RULE_NONE)
			continue;
		a = &f->ab[f->nab++];
		memset(a, 0, sizeof *a);
		a->dim = d;
		a->ratio = a->lo = a->hi = NAN;
		bits = dim_decides(s->run.sp, d, &only);
		a->decision = bits != 0;
		if (!a->decision || !wr || !br ||
		    !same_decisions(wr, br, sizes, n, only, bits, &at))
			continue;
		if (!leave_out(s->run.sp, d, &f->rec, &f->rec_unset))
			continue;
		a->dropped = a->by_baseline = true;
		run_decision(br, only ? only : sizes[0], &bd);
		set_why(a, "%s: no effect, NCCL already ran %s at %zu B%s "
		         "without it (the baseline): dropped", var_text(s, w, d, v, sizeof v),
		         decision_text(&bd, d1, sizeof d1), only ? only : sizes[0],
		         only || n == 1 ? "" : " and the same at every other size");
	}
}

/* ---- the ablation runs ---- */

/* Live, has the session no run or no time left for another run? */
static bool out_of_runs(const nccltune_session *s)
{
	return !session_replaying(s) && (s->run.nruns >= (size_t)s->cfg.budget ||
	       (s->cfg.time_limit_s > 0 && session_elapsed(s) >= s->cfg.time_limit_s));
}

/* Run the configuration (p, unset) once in phase ablate: 0 with *o and the run's index
 * in *at (SIZE_MAX: no run left), or the status of session_execute_unset. */
static int ablate_run(nccltune_session *s, const struct point *p, uint32_t unset,
                      struct outcome *o, size_t *at)
{
	int rc;

	*at = SIZE_MAX;
	if (out_of_runs(s)) {
		if (s->run.stop == STOP_NONE)
			s->run.stop = STOP_TIME;
		return 0;
	}
	rc = session_execute_unset(s, PHASE_ABLATE, p, unset, o);
	if (rc == 0)
		*at = s->run.nruns - 1;
	return rc;
}

/* One run of the recommendation so far less each decision-only variable not dropped
 * yet: the same decisions as the winner's at every size, and it goes (the next one is
 * judged without it too); else it stays. Returns a session_execute status. */
static int run_decisions(nccltune_session *s, struct final_state *f, struct outcome *o)
{
	const struct session_run *wr = final_ok_run(s, f->win);
	size_t sizes[2 * WORKLOAD_MAX_ENTRIES], n = all_sizes(s, sizes);
	unsigned all = NCCLVARS_DECIDES_ALGO | NCCLVARS_DECIDES_PROTO | NCCLVARS_DECIDES_CTAS;
	char v[256], d1[64], d2[64];

	for (size_t i = 0; i < f->nab && wr; i++) {
		struct ablation *a = &f->ab[i];
		struct point q = f->rec;
		uint32_t qu = f->rec_unset;
		size_t at, diff;
		struct proto_decision x, y;
		int rc;

		if (!a->decision || a->dropped)
			continue;
		var_text(s, f->win, a->dim, v, sizeof v);
		if (!leave_out(s->run.sp, a->dim, &q, &qu)) {
			set_why(a, "%s: kept (its dimension has no unset level)", v);
			continue;
		}
		rc = ablate_run(s, &q, qu, o, &at);
		if (rc)
			return rc;
		if (at == SIZE_MAX) {
			set_why(a, "%s: kept (not ablated: no run left)", v);
			continue;
		}
		a->measured = true;
		a->run = at + 1;
		wr = final_ok_run(s, f->win);   /* the runs array may have moved */
		if (o->cls != OUTCOME_OK) {
			set_why(a, "%s: kept (without it run %zu failed: %s)", v,
			         a->run, outcome_class_name(o->cls));
		} else if (same_decisions(&s->run.runs[at], wr, sizes, n, 0, all, &diff)) {
			a->dropped = true;
			f->rec = q;
			f->rec_unset = qu;
			set_why(a, "%s: no effect, without it NCCL ran the same "
			         "at every size (run %zu): dropped", v, a->run);
		} else if (diff && run_decision(&s->run.runs[at], diff, &x) &&
		           run_decision(wr, diff, &y)) {
			set_why(a, "%s: kept (without it NCCL ran %s at %zu B "
			         "instead of %s, run %zu)", v, decision_text(&x, d1, sizeof d1), diff,
			         decision_text(&y, d2, sizeof d2), a->run);
		} else {
			set_why(a, "%s: kept (run %zu does not say what NCCL ran "
			         "at every size)", v, a->run);
		}
	}
	return 0;
}

/* The median latency at `bytes` of run i, NAN when it failed or does not say. */
static double run_size_us(const nccltune_session *s, size_t i, size_t bytes)
{
	const struct session_run *r = i == SIZE_MAX ? NULL : &s->run.runs[i];
	const struct proto_size_result *x = r && r->o.cls == OUTCOME_OK
	                                  ? proto_report_size(&r->o.report, bytes) : NULL;

	return x ? x->us.median : NAN;
}

struct rounds {
	size_t e[SPACE_MAX_DIMS];     /* entry j + 1: f->ab[e[j]] left out */
	size_t ne;                    /* entries after the reference (entry 0) */
	bool all;                     /* entry ne + 1: the reference less all of them */
	size_t n;                     /* rounds */
	size_t run[SPACE_MAX_DIMS + 2][ABLATE_ROUNDS_MAX];   /* SIZE_MAX: none */
};

/* Entries per round: the reference, each variable left out, and all of them left out. */
static size_t round_entries(const struct rounds *R)
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
static void plan_rounds(const nccltune_session *s, struct final_state *f, struct rounds *R,
                        bool joint)
{
	size_t left = s->run.nruns < (size_t)s->cfg.budget ? (size_t)s->cfg.budget - s->run.nruns : 0;
	char v[256];

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
		         "rounds)", var_text(s, f->win, a->dim, v, sizeof v));
	}
	R->n = R->ne ? left / round_entries(R) : 0;
	if (R->n > ABLATE_ROUNDS_MAX)
		R->n = ABLATE_ROUNDS_MAX;
	for (size_t j = 0; j < SPACE_MAX_DIMS + 2; j++)
		for (size_t r = 0; r < ABLATE_ROUNDS_MAX; r++)
			R->run[j][r] = SIZE_MAX;
}

/* Round entry e's configuration into (q, qu): the reference (0), less variable e - 1
 * (1..ne), less all of them (ne + 1). False when it leaves nothing out. */
static bool round_point(const space *sp, const struct final_state *f, const struct rounds *R,
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

/* Rounds of the reference (the recommendation so far), the reference less each
 * process-level variable and less all of them, rotating the order. Returns a
 * session_execute status. */
static int run_rounds(nccltune_session *s, struct final_state *f, struct rounds *R,
                      struct outcome *o)
{
	for (size_t r = 0; r < R->n; r++) {
		for (size_t j = 0; j < round_entries(R); j++) {
			size_t e = (j + r) % round_entries(R);
			struct point q;
			uint32_t qu;
			int rc;

			if (!round_point(s->run.sp, f, R, e, &q, &qu))
				continue;
			rc = ablate_run(s, &q, qu, o, &R->run[e][r]);
			if (rc)
				return rc;
			if (R->run[e][r] == SIZE_MAX)
				return 0;
		}
	}
	return 0;
}

/* (reference less variable j) over the reference at `bytes` (0: the objective), paired
 * by round; *fails counts its runs that failed. Returns the pairs. */
static size_t pair_ratio(const nccltune_session *s, const struct rounds *R, size_t j,
                         size_t bytes, double *ratio, double *lo, double *hi, size_t *fails)
{
	double a[ABLATE_ROUNDS_MAX], b[ABLATE_ROUNDS_MAX];

	*fails = 0;
	for (size_t r = 0; r < R->n; r++) {
		size_t ia = R->run[j + 1][r], ib = R->run[0][r];

		*fails += ia != SIZE_MAX && s->run.runs[ia].o.cls != OUTCOME_OK;
		a[r] = ia == SIZE_MAX || s->run.runs[ia].o.cls != OUTCOME_OK ? NAN
		     : bytes ? run_size_us(s, ia, bytes) : s->run.runs[ia].o.objective_us;
		b[r] = ib == SIZE_MAX || s->run.runs[ib].o.cls != OUTCOME_OK ? NAN
		     : bytes ? run_size_us(s, ib, bytes) : s->run.runs[ib].o.objective_us;
	}
	return session_paired_ratio(a, b, R->n, ratio, lo, hi);
}

/* Is removal j of the rounds (j < ne: one variable; j == ne: all of them) slower than
 * the reference beyond the threshold, in the objective or at a guard size? *slow_at
 * gets the guard size (0: the objective) and *gr its ratio there. */
static bool removal_slower(const nccltune_session *s, const struct rounds *R, size_t j,
                           double ratio, double thr, size_t *slow_at, double *gr)
{
	double glo, ghi;
	size_t fails;

	*slow_at = 0;
	if (ratio > thr)
		return true;
	for (size_t g = 0; g < s->cfg.wl.nguard; g++)
		if (pair_ratio(s, R, j, s->cfg.wl.guard[g], gr, &glo, &ghi, &fails) >= 2 &&
		    *gr > thr) {
			*slow_at = s->cfg.wl.guard[g];
			return true;
		}
	return false;
}

/* Two or more variables dropped one at a time: dropping them together is what deploys.
 * Measured (the rounds' last entry, when all of them were dropped) and not slower, they
 * all go; otherwise only the one whose own removal measured fastest goes, and the others
 * stay with the reason. Can't fail. */
static void judge_together(nccltune_session *s, struct final_state *f, const struct rounds *R,
                           double sd)
{
	size_t nd = 0, keep = SIZE_MAX, fails, slow_at = 0, pairs = 0;
	double ratio = NAN, lo, hi, gr = NAN;
	char v[256], k[256];

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
	if (R->all && nd == R->ne) {
		pairs = pair_ratio(s, R, R->ne, 0, &ratio, &lo, &hi, &fails);
		if (!fails && pairs >= 2 &&
		    !removal_slower(s, R, R->ne, ratio,
		                    exp(ABLATE_Z * sqrt(2.0) * sd / sqrt((double)pairs)), &slow_at,
		                    &gr)) {
			session_note(&s->out, "ablation: all %zu dropped together is not slower "
			             "either (%.3fx [95%% %.3fx .. %.3fx] over %zu rounds)", nd, ratio,
			             lo, hi, pairs);
			return;
		}
	}
	var_text(s, f->win, f->ab[R->e[keep]].dim, k, sizeof k);
	for (size_t j = 0; j < R->ne; j++) {
		struct ablation *a = &f->ab[R->e[j]];

		if (!a->dropped || j == keep)
			continue;
		a->dropped = false;
		var_text(s, f->win, a->dim, v, sizeof v);
		if (pairs < 2 || fails)
			set_why(a, "%s: kept (harmless removed alone, %.3fx; removed together with "
			         "the others not measured in two rounds; %s goes)", v, a->ratio, k);
		else if (slow_at)
			set_why(a, "%s: kept (harmless removed alone, %.3fx; removed together with "
			         "the others, the guard size %zu B is %.2fx slower; %s goes)", v,
			         a->ratio, slow_at, gr, k);
		else
			set_why(a, "%s: kept (harmless removed alone, %.3fx; removed together with "
			         "the others %.2fx slower [95%% %.2fx .. %.2fx] over %zu rounds; %s "
			         "goes)", v, a->ratio, ratio, lo, hi, pairs, k);
	}
}

/* Judge each process-level variable of the rounds: dropped when removing it is slower
 * neither in the objective nor at a guard size beyond z paired standard deviations of
 * one run's noise, and when dropping it with the others is not either (judge_together). */
static void judge_rounds(nccltune_session *s, struct final_state *f, const struct rounds *R)
{
	double sd = NAN, thr = NAN, gr = NAN;
	int cfg, dof;
	char v[256];
	bool noise = session_final_noise(s, &sd, &cfg, &dof);

	for (size_t j = 0; j < R->ne; j++) {
		struct ablation *a = &f->ab[R->e[j]];
		size_t fails, slow_at = 0;

		var_text(s, f->win, a->dim, v, sizeof v);
		a->measured = true;
		a->pairs = pair_ratio(s, R, j, 0, &a->ratio, &a->lo, &a->hi, &fails);
		if (fails || a->pairs < 2 || !noise) {
			set_why(a, "%s: kept (%s)", v, fails ? "without it a run "
			         "failed" : !noise ? "no noise estimate to judge its removal by"
			         : "its removal was not measured in two rounds");
			continue;
		}
		thr = exp(ABLATE_Z * sqrt(2.0) * sd / sqrt((double)a->pairs));
		if (!removal_slower(s, R, j, a->ratio, thr, &slow_at, &gr)) {
			a->dropped = true;
			set_why(a, "%s: dropped, removing it is not slower beyond "
			         "the noise (%.3fx [95%% %.3fx .. %.3fx] over %zu rounds, noise %.3fx)",
			         v, a->ratio, a->lo, a->hi, a->pairs, thr);
		} else if (slow_at) {
			set_why(a, "%s: kept (without it the guard size %zu B is "
			         "%.2fx slower)", v, slow_at, gr);
		} else {
			set_why(a, "%s: kept (without it %.2fx slower [95%% "
			         "%.2fx .. %.2fx] over %zu rounds, beyond the noise's %.2fx)", v,
			         a->ratio, a->lo, a->hi, a->pairs, thr);
		}
	}
	if (noise)
		judge_together(s, f, R, sd);
	for (size_t j = 0; j < R->ne; j++)
		if (f->ab[R->e[j]].dropped)
			leave_out(s->run.sp, f->ab[R->e[j]].dim, &f->rec, &f->rec_unset);
}

/* The finalist with the best gain that a guard size disqualified (a point), or NULL. */
static struct finalist *guarded_finalist(struct final_state *f)
{
	struct finalist *g = NULL;

	for (size_t j = 0; j < f->k + f->nt && f->rounds; j++) {
		struct finalist *x = session_final_entry(f, j);

		if (x->guard_bytes && x->has_point && !isnan(x->gain) && (!g || x->gain > g->gain))
			g = x;
	}
	return g;
}

/* Without a winner to ablate, the runs kept for it measure what each variable of the
 * best finalist a guard disqualified costs at that guard size: rounds of it and of it
 * less each variable, interleaved. The recommendation is not changed (f->has_rec false).
 * Returns a session_execute status. */
static int attribute_guard(nccltune_session *s, struct final_state *f, struct outcome *o)
{
	struct finalist *x = guarded_finalist(f), *keep = f->win;
	struct rounds R;
	char v[256];
	int rc;

	if (!x)
		return 0;
	f->guarded = x;
	f->win = x;   /* the rounds and their texts read f->win */
	f->rec = x->p;
	f->rec_unset = 0;
	f->nab = 0;
	for (size_t d = 0; d < space_dims(s->run.sp); d++) {
		if (!space_level_text(s->run.sp, d, x->p.lv[d]) ||
		    space_rule_of(s->run.sp, d, NULL) != SPACE_RULE_NONE)
			continue;   /* a rule acts at its tuned size only, never at a guard */
		memset(&f->ab[f->nab], 0, sizeof f->ab[0]);
		f->ab[f->nab++].dim = d;
	}
	plan_rounds(s, f, &R, false);   /* each variable's own cost only */
	if (R.n && !session_replaying(s))
		session_note(&s->out, "guard %zu B: measuring what each of %zu variable(s) of the "
		             "best finalist costs there, %zu round(s)", x->guard_bytes, R.ne, R.n);
	rc = run_rounds(s, f, &R, o);
	for (size_t j = 0; rc == 0 && j < R.ne; j++) {
		struct attribution *a = &f->attr[f->nattr++];
		size_t fails;
		double r, lo, hi;

		a->dim = f->ab[R.e[j]].dim;
		a->pairs = pair_ratio(s, &R, j, x->guard_bytes, &r, &lo, &hi, &fails);
		a->cost = a->pairs ? 1.0 / r : NAN;
		a->lo = a->pairs > 1 ? 1.0 / hi : NAN;
		a->hi = a->pairs > 1 ? 1.0 / lo : NAN;
		if (a->pairs)
			session_note(&s->out, "%s: %zu B %.2fx slower with it than without it%s (the "
			             "finalist: %.2fx the baseline there)", var_text(s, x, a->dim, v,
			             sizeof v), x->guard_bytes, a->cost, a->pairs > 1 ? "" :
			             " (one round)", x->guard_ratio);
	}
	f->win = keep;
	f->nab = 0;
	f->has_rec = false;
	return rc;
}

int session_final_ablate(nccltune_session *s, struct final_state *f)
{
	const struct finalist *w;
	struct outcome *o;
	struct rounds R;
	int rc = 0;

	session_final_pick(s, f);
	w = f->win;
	if (!w || !w->has_point || !session_final_enough(f, w) ||
	    (f->nb && !isnan(w->gain) && w->gain <= 1.0)) {
		/* nothing to recommend, the baseline, or a try off the space */
		o = malloc(sizeof *o);
		rc = o ? attribute_guard(s, f, o)
		       : session_fail(s, NCCLTUNE_ERROR, "out of memory");
		free(o);
		return rc;
	}
	o = malloc(sizeof *o);
	if (!o)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	list_vars(s, f);
	rc = run_decisions(s, f, o);
	plan_rounds(s, f, &R, true);
	if (rc == 0 && R.n && !session_replaying(s))
		session_note(&s->out, "ablation: the best and the best less each of %zu "
		             "process-level variable(s)%s, %zu round(s), interleaved", R.ne,
		             R.all ? " and less all of them" : "", R.n);
	if (rc == 0)
		rc = run_rounds(s, f, &R, o);
	if (rc == 0)
		judge_rounds(s, f, &R);
	for (size_t i = 0; rc == 0 && i < f->nab; i++)
		if (f->ab[i].why[0])
			session_note(&s->out, "%s", f->ab[i].why);
	free(o);
	return rc;
}

cJSON *session_final_rec_env(const nccltune_session *s, const struct final_state *f)
{
	cJSON *env = env_point_to_json(s->run.sp, &f->rec);

	for (size_t d = 0; env && d < space_dims(s->run.sp); d++)
		if (f->rec_unset >> d & 1u)
			cJSON_DeleteItemFromObjectCaseSensitive(env, space_name(s->run.sp, d));
	return env;
}
