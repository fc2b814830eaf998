/* results.c - a session's results.json (result/result.h builds the document): the
 * winner of the final rounds (or, without them, of the search), the baseline, the top
 * list, each workload size's latency, the failures and the rules learned, how much one
 * run varies, and each --try against the baseline and the tuned best. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncclvars.h"
#include "result/result.h"
#include "result/summary.h"
#include "run/ruletable.h"
#include "session/session_priv.h"

/* Median over the runs of the configuration (p, try_no) in the final phase, or else in
 * any phase, of each workload size's median latency. */
static size_t per_size(const nccltune_session *s, const struct point *p, size_t try_no,
                       struct result_size *out)
{
	bool use_final = false;
	size_t n = 0;

	for (size_t i = 0; i < s->run.nruns && !use_final; i++) {
		const struct session_run *r = &s->run.runs[i];

		use_final = r->phase == PHASE_FINAL && r->o.cls == OUTCOME_OK &&
		            runlog_same_config(r, p, try_no, space_dims(s->run.sp));
	}
	for (size_t w = 0; w < s->cfg.wl.n; w++) {
		double v[256];
		size_t m = 0;

		for (size_t i = 0; i < s->run.nruns && m < 256; i++) {
			const struct session_run *r = &s->run.runs[i];

			if (r->o.cls != OUTCOME_OK ||
			    !runlog_same_config(r, p, try_no, space_dims(s->run.sp)) ||
			    (use_final && r->phase != PHASE_FINAL))
				continue;
			for (size_t j = 0; j < r->o.report.nresults; j++)
				if (r->o.report.results[j].bytes == s->cfg.wl.e[w].bytes)
					v[m++] = r->o.report.results[j].us.median;
		}
		if (m == 0)
			continue;
		for (size_t a = 1; a < m; a++)
			for (size_t b2 = a; b2 > 0 && v[b2 - 1] > v[b2]; b2--) {
				double t = v[b2];

				v[b2] = v[b2 - 1];
				v[b2 - 1] = t;
			}
		out[n].bytes = s->cfg.wl.e[w].bytes;
		out[n].us = m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
		n++;
	}
	return n;
}

/* What run r sets, as an env object; NULL when out of memory. */
static cJSON *session_env_json(const nccltune_session *s, const struct session_run *r)
{
	cJSON *env;

	if (r->try_no && !r->has_point)
		return tryconf_env_json(&s->cfg.tries[r->try_no - 1], s->run.sp);
	env = env_point_to_json(s->run.sp, r->has_point ? &r->p : NULL);
	for (size_t d = 0; env && d < space_dims(s->run.sp); d++)
		if (r->unset >> d & 1u)   /* an ablation run leaves it unset */
			cJSON_DeleteItemFromObjectCaseSensitive(env, space_name(s->run.sp, d));
	return env;
}

/* Are runs q and r of one configuration (ablation runs: the same point less the same
 * dimensions)? */
static bool same_run_config(const nccltune_session *s, const struct session_run *q,
                            const struct session_run *r)
{
	if (q->unset || r->unset)
		return q->unset == r->unset && q->has_point && r->has_point &&
		       point_equal(&q->p, &r->p, space_dims(s->run.sp));
	return runlog_same_config(q, r->has_point ? &r->p : NULL, r->try_no,
	                           space_dims(s->run.sp));
}

/* Failures grouped by configuration and class, as results.json lists them. */
static cJSON *failures_json(const nccltune_session *s)
{
	cJSON *arr = cJSON_CreateArray();
	bool *done = calloc(s->run.nruns + 1, sizeof *done);

	if (!arr || !done)
		goto fail;
	for (size_t i = 0; i < s->run.nruns; i++) {
		const struct session_run *r = &s->run.runs[i];
		cJSON *f;
		int count = 0;

		if (done[i] || r->o.cls == OUTCOME_OK)
			continue;
		for (size_t j = i; j < s->run.nruns; j++) {
			const struct session_run *q = &s->run.runs[j];

			if (!done[j] && q->o.cls == r->o.cls && same_run_config(s, q, r)) {
				done[j] = true;
				count++;
			}
		}
		f = cJSON_CreateObject();
		if (!f || !cJSON_AddItemToArray(arr, f)) {
			cJSON_Delete(f);
			goto fail;
		}
		if (!cJSON_AddItemToObject(f, "env", session_env_json(s, r)) ||
		    !cJSON_AddStringToObject(f, "stage", outcome_class_name(r->o.cls)) ||
		    !cJSON_AddNumberToObject(f, "count", count))
			goto fail;
	}
	free(done);
	return arr;
fail:
	free(done);
	cJSON_Delete(arr);
	return NULL;
}

/* NAME: "level", or NAME: null for an unset level, into `when`. */
static bool add_level(cJSON *when, const space *sp, size_t dim, size_t level)
{
	const char *v = space_level_text(sp, dim, level);

	return v ? cJSON_AddStringToObject(when, space_name(sp, dim), v) != NULL
	         : cJSON_AddNullToObject(when, space_name(sp, dim)) != NULL;
}

static cJSON *pruned_json(const nccltune_session *s)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; arr && i < prune_rule_count(s->run.pr); i++) {
		const struct prune_rule *rule = prune_rule_at(s->run.pr, i);
		cJSON *o = cJSON_CreateObject(), *when;

		if (!o || !cJSON_AddItemToArray(arr, o)) {
			cJSON_Delete(o);
			goto fail;
		}
		when = cJSON_AddObjectToObject(o, "when");
		if (!when || !add_level(when, s->run.sp, rule->dim, rule->level) ||
		    (rule->pair && !add_level(when, s->run.sp, rule->dim2, rule->level2)) ||
		    !cJSON_AddStringToObject(o, "reason", rule->text))
			goto fail;
	}
	return arr;
fail:
	cJSON_Delete(arr);
	return NULL;
}

/* {"ratio": r, "ci95": [lo, hi]} (no interval when lo/hi are NAN) under key. */
static bool add_ratio(cJSON *o, const char *key, double r, double lo, double hi)
{
	cJSON *g = cJSON_AddObjectToObject(o, key);

	if (!g || !cJSON_AddNumberToObject(g, "ratio", round(r * 1e4) / 1e4))
		return false;
	if (!isnan(lo) && !isnan(hi)) {
		double v[2] = {round(lo * 1e4) / 1e4, round(hi * 1e4) / 1e4};
		cJSON *ci = cJSON_CreateDoubleArray(v, 2);

		if (!ci || !cJSON_AddItemToObject(g, "ci95", ci)) {
			cJSON_Delete(ci);
			return false;
		}
	}
	return true;
}

/* One --try in results.json: what it sets, how it ended, and its speed against the
 * baseline and the tuned best from the same final rounds (or, without them, from its
 * single run). `win` is the best's entry (NULL: the baseline is the best, or none). */
static cJSON *try_json(const nccltune_session *s, const struct final_state *f, size_t i,
                       const struct finalist *win, double best_us, double base_us)
{
	const struct tryconf *t = &s->cfg.tries[i];
	const struct outcome *own = session_try_outcome(s, i + 1);
	const struct finalist *x = f->of_try ? f->of_try[i] : NULL;
	const char *outcome = "ok";
	double mean = NAN, lo = NAN, hi = NAN, r = NAN, rlo = NAN, rhi = NAN;
	double tr = NAN, tlo = NAN, thi = NAN;
	int repeats = 0;
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	if (!own)
		outcome = "not_run";
	else if (own->cls != OUTCOME_OK)
		outcome = outcome_class_name(own->cls);
	else if (x && x->failed)
		outcome = outcome_class_name(x->fail_cls);
	else if (session_config_ever_wrong(s, t->in_space ? &t->p : NULL, i + 1))
		outcome = outcome_class_name(OUTCOME_VERIFY);
	if (x && f->rounds && x->ok > 0) {
		mean = x->mean;
		lo = x->lo;
		hi = x->hi;
		repeats = x->ok;
		r = x->gain;
		rlo = x->gain_lo;
		rhi = x->gain_hi;
		if (x == win)
			tr = 1.0;
		else
			decide_paired_ratio(x->us, win ? win->us : f->base_us, f->rounds, &tr,
			                     &tlo, &thi);
	} else if (own && own->cls == OUTCOME_OK) {
		mean = own->objective_us;
		repeats = 1;
		r = base_us / mean;
		tr = x && x == win ? 1.0 : mean / best_us;
	}
	if (!cJSON_AddItemToObject(o, "env", tryconf_env_json(t, s->run.sp)) ||
	    !cJSON_AddBoolToObject(o, "in_space", t->in_space) ||
	    !cJSON_AddStringToObject(o, "outcome", outcome))
		goto fail;
	if (repeats > 0) {
		if (!cJSON_AddNumberToObject(o, "objective_us", round(mean * 1e4) / 1e4))
			goto fail;
		if (!isnan(lo) && !isnan(hi)) {
			double v[2] = {round(fmax(0.0, lo) * 1e4) / 1e4, round(hi * 1e4) / 1e4};
			cJSON *ci = cJSON_CreateDoubleArray(v, 2);

			if (!ci || !cJSON_AddItemToObject(o, "ci95_us", ci)) {
				cJSON_Delete(ci);
				goto fail;
			}
		}
		if (!cJSON_AddNumberToObject(o, "repeats", repeats))
			goto fail;
		if (isfinite(r) && !add_ratio(o, "ratio_vs_baseline", r, rlo, rhi))
			goto fail;
		if (isfinite(tr) && !add_ratio(o, "tuned_vs_try", tr, tlo, thi))
			goto fail;
	}
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

static cJSON *tries_json(const nccltune_session *s, const struct final_state *f,
                         const struct finalist *win, double best_us, double base_us)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; arr && i < s->cfg.ntries; i++) {
		cJSON *t = try_json(s, f, i, win, best_us, base_us);

		if (!t || !cJSON_AddItemToArray(arr, t)) {
			cJSON_Delete(t);
			cJSON_Delete(arr);
			return NULL;
		}
	}
	return arr;
}

/* results.json's "verdict" (docs/formats.md) and, for a session too small to measure
 * its best twice, "budget_needed". `unproven`: the best sets something and its gain's
 * interval reaches down to 1.00x ("recommended" means shown faster, nothing else).
 * Returns false when out of memory. */
static bool add_verdict(nccltune_session *s, cJSON *doc, bool has_best, bool enough,
                        bool unproven)
{
	struct decide_view v;
	int need;

	session_decide_view(s, &v);
	need = decide_budget_needed(&v);

	if (!cJSON_AddStringToObject(doc, "verdict", !has_best ? SUMMARY_VERDICT_NONE
	                                             : !enough ? SUMMARY_UNMEASURED
	                                             : unproven ? SUMMARY_VERDICT_UNPROVEN
	                                             : SUMMARY_VERDICT_OK))
		return false;
	return !has_best || enough || need <= s->cfg.budget ||
	       cJSON_AddNumberToObject(doc, "budget_needed", need) != NULL;
}

/* results.json "ablation": what became of each of the winner's variables, into out
 * (room for SPACE_MAX_DIMS). Returns how many. */
static size_t ablation_fill(const nccltune_session *s, const struct final_state *f,
                            struct summary_ablation *out)
{
	for (size_t i = 0; i < f->nab; i++) {
		const struct ablation *a = &f->ab[i];
		struct summary_ablation *o = &out[i];

		o->var = space_name(s->run.sp, a->dim);
		o->value = space_level_text(s->run.sp, a->dim, f->win->p.lv[a->dim]);
		o->kind = a->decision ? "decision" : "process";
		o->dropped = a->dropped;
		o->why = a->why;
		o->run = (long)a->run;
		o->removed.ratio = a->ratio;
		o->removed.has_ci = !isnan(a->lo) && !isnan(a->hi);
		o->removed.lo = a->lo;
		o->removed.hi = a->hi;
	}
	return f->nab;
}

/* Did the guard sizes disqualify every finalist that would have won, leaving NCCL's
 * defaults, themselves re-measured in two or more final rounds? Then the defaults are a
 * measured recommendation, not a session too small to tell. */
static bool guards_left_baseline(const struct final_state *f)
{
	double m, lo, hi;
	bool guarded = false;

	for (size_t j = 0; j < f->k + f->nt && f->rounds; j++)
		guarded |= f->c && j < f->k ? f->c[j].guard_bytes != 0 : f->t[j - f->k].guard_bytes != 0;
	return !f->win && guarded && f->base_ok &&
	       decide_finite_stats(f->base_us, f->rounds, &m, &lo, &hi) >= 2;
}

/* results.json guards.attribution: what each variable of the finalist a guard size
 * disqualified costs there, measured, into out (room for SPACE_MAX_DIMS), each with the
 * finalist's variables (env, borrowing from *env_doc, which the caller deletes).
 * Returns how many; 0 without one, or when out of memory (*oom). */
static size_t attribution_fill(const nccltune_session *s, const struct final_state *f,
                               struct summary_attribution *out, struct summary_env *env,
                               cJSON **env_doc, bool *oom)
{
	const cJSON *it;

	*oom = false;
	if (!f->guarded || !f->nattr)
		return 0;
	*env_doc = env_point_to_json(s->run.sp, &f->guarded->p);
	env->v = calloc((size_t)cJSON_GetArraySize(*env_doc) + 1, sizeof *env->v);
	if (!*env_doc || !env->v) {
		*oom = true;
		return 0;
	}
	env->n = 0;
	cJSON_ArrayForEach(it, *env_doc) {
		env->v[env->n].name = it->string;
		env->v[env->n++].value = it->valuestring;
	}
	for (size_t i = 0; i < f->nattr; i++) {
		const struct attribution *a = &f->attr[i];
		struct summary_attribution *o = &out[i];

		o->env = *env;
		o->var = space_name(s->run.sp, a->dim);
		o->value = space_level_text(s->run.sp, a->dim, f->guarded->p.lv[a->dim]);
		o->bytes = f->guarded->guard_bytes;
		o->rounds = (long)a->pairs;
		o->cost.ratio = a->cost;
		o->cost.has_ci = !isnan(a->lo) && !isnan(a->hi);
		o->cost.lo = a->lo;
		o->cost.hi = a->hi;
	}
	return f->nattr;
}

/* The final phase's part of results.json (ablation, per_size, guards), in the types the
 * loader reads it back into, added to doc (result_final_add). `win` is the best's entry
 * (NULL: the baseline is the best), has_best whether there is a best. False when out of
 * memory. */
static bool final_add(nccltune_session *s, const struct final_state *f, cJSON *doc,
                      const struct finalist *win, bool has_best)
{
	struct summary_ablation ab[SPACE_MAX_DIMS];
	struct summary_attribution at[SPACE_MAX_DIMS];
	struct summary_size_cmp sizes[2 * WORKLOAD_MAX_ENTRIES];
	uint64_t guard[WORKLOAD_MAX_ENTRIES];
	struct summary_env env = {0, NULL};
	cJSON *env_doc = NULL;
	struct result_final fin;
	bool oom = false, ok;

	memset(&fin, 0, sizeof fin);
	if (has_best && f->win && f->nab) {
		fin.nablation = ablation_fill(s, f, ab);
		fin.ablation = ab;
	}
	if (f->rounds && s->cfg.wl.nguard) {
		fin.guards_verdict = session_per_size_fill(s, win, sizes, &fin.nper_size);
		fin.per_size = sizes;
		for (size_t i = 0; i < s->cfg.wl.nguard; i++)
			guard[i] = s->cfg.wl.guard[i];
		fin.nguard_sizes = s->cfg.wl.nguard;
		fin.guard_sizes = guard;
		fin.nattribution = attribution_fill(s, f, at, &env, &env_doc, &oom);
		fin.attribution = at;
	}
	ok = !oom && result_final_add(doc, &fin);
	free(env.v);
	cJSON_Delete(env_doc);
	return ok;
}

/* The env object of the recommendation (the winner less what the ablation dropped);
 * NULL when out of memory. */
static cJSON *rec_env(const nccltune_session *s, const struct final_state *f)
{
	cJSON *env = env_point_to_json(s->run.sp, &f->rec);

	for (size_t d = 0; env && d < space_dims(s->run.sp); d++)
		if (f->rec_unset >> d & 1u)
			cJSON_DeleteItemFromObjectCaseSensitive(env, space_name(s->run.sp, d));
	return env;
}

/* What results.json is built from that session_results_write owns until it is written. */
struct parts {
	cJSON *wl, *pins, *fails, *pruned, *empty, *best_env, *server;
	struct result_config *top;   /* ntop of them, each env in top_env */
	cJSON **top_env;
	size_t ntop;
};

static void parts_free(struct parts *pt)
{
	for (size_t i = 0; pt->top_env && i < pt->ntop; i++)
		cJSON_Delete(pt->top_env[i]);
	free(pt->top_env);
	free(pt->top);
	cJSON_Delete(pt->best_env);
	cJSON_Delete(pt->empty);
	cJSON_Delete(pt->wl);
	cJSON_Delete(pt->pins);
	cJSON_Delete(pt->server);
	cJSON_Delete(pt->fails);
	cJSON_Delete(pt->pruned);
}

/* The session's settings and record into *in (the parts it points to in *pt). Returns
 * an nccltune_status. */
static int input_basics(nccltune_session *s, const struct final_state *f,
                        struct result_input *in, struct parts *pt)
{
	struct runlog l = session_runlog(s);
	bool server_ok;

	pt->wl = workload_to_json(&s->cfg.wl);
	pt->pins = env_pins_to_json(&s->run.pins);
	pt->server = session_server_json(s, &server_ok);
	pt->fails = failures_json(s);
	pt->pruned = pruned_json(s);
	pt->empty = cJSON_CreateObject();
	pt->top = calloc(f->nc + 1, sizeof *pt->top);
	pt->top_env = calloc(f->nc + 1, sizeof *pt->top_env);
	if (!server_ok || !pt->wl || !pt->pins || !pt->fails || !pt->pruned || !pt->empty || !pt->top ||
	    !pt->top_env)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	cJSON_DeleteItemFromObjectCaseSensitive(pt->wl, "iters");
	cJSON_DeleteItemFromObjectCaseSensitive(pt->wl, "warmup");
	in->created = s->run.created;
	in->fingerprint = s->run.fingerprint;
	in->source = s->run.source;
	in->model = s->run.model_name[0] ? s->run.model_name : s->cfg.model;
	in->workload = pt->wl;
	in->strategy = s->cfg.strategy_name;
	in->seed = s->cfg.seed;
	in->budget = s->cfg.budget;
	in->pinned = pt->pins;
	in->server = pt->server;
	in->evaluations = (int)s->run.nruns;
	in->failures = pt->fails;
	in->pruned = pt->pruned;
	in->gain_lo = in->gain_hi = NAN;
	in->has_noise = decide_noise(&l, &in->noise_sd, &in->noise_configs, &in->noise_dof);
	return NCCLTUNE_OK;
}

/* The best into *in: the winner when it beat the baseline (or there is none to beat),
 * else the baseline, NCCL's defaults, with *win set to NULL; none when neither ran.
 * sizes (WORKLOAD_MAX_ENTRIES) receives the best's latency per workload size. Returns
 * an nccltune_status. */
static int input_best(nccltune_session *s, const struct final_state *f,
                      struct result_input *in, struct finalist **win, size_t nb,
                      struct result_size *sizes, struct parts *pt)
{
	struct finalist *w = *win;
	struct runlog l = session_runlog(s);
	bool all_dropped = w && w->has_point && nb &&
	                   decide_point_sets_nothing(&l, f->has_rec ? &f->rec : &w->p,
	                                             f->has_rec ? f->rec_unset : 0);

	if (all_dropped)
		session_note(&s->out, "the best sets nothing NCCL does not already do (its "
		             "variables dropped, its rules what NCCL ran in the baseline): NCCL's "
		             "defaults are the recommendation");
	if (w && !all_dropped && (!nb || isnan(w->gain) || w->gain > 1.0)) {
		pt->best_env = f->has_rec ? rec_env(s, f)
		             : w->has_point ? env_point_to_json(s->run.sp, &w->p)
		                            : tryconf_env_json(&s->cfg.tries[w->try_no - 1],
		                                               s->run.sp);
		if (!pt->best_env)
			return session_fail(s, NCCLTUNE_ERROR, "out of memory");
		in->has_best = true;
		in->best.env = pt->best_env;
		in->best.objective_us = w->mean;
		in->best.ci_lo = w->lo;
		in->best.ci_hi = w->hi;
		in->best.repeats = w->ok;
		in->nsizes = per_size(s, w->has_point ? &w->p : NULL, w->try_no, sizes);
		in->sizes = sizes;
		if (!isnan(w->gain)) {
			in->has_gain = true;
			in->gain = w->gain;
			in->gain_lo = w->gain_lo;
			in->gain_hi = w->gain_hi;
		}
	} else if (nb) {
		/* Nothing beat NCCL's defaults (or all the best set was dropped): recommend
		 * setting nothing. */
		in->has_best = true;
		in->best = in->baseline;
		in->nsizes = per_size(s, NULL, 0, sizes);
		*win = NULL;   /* the baseline is the best */
		in->sizes = sizes;
		in->has_gain = true;
		in->gain = 1.0;
	}
	return NCCLTUNE_OK;
}

/* The top list into pt->top, in the final phase's order (decide_top): the finalists
 * with their repeats, the others with their single search run. */
static void input_top(const nccltune_session *s, const struct final_state *f,
                      struct parts *pt)
{
	const struct finalist *x[DECIDE_TOP_MAX + DECIDE_FINALISTS];
	size_t nfinal, n = decide_top(f, x, &nfinal);

	for (size_t i = 0; i < n; i++) {
		struct result_config *t = &pt->top[i];

		pt->top_env[i] = env_point_to_json(s->run.sp, &x[i]->p);
		t->env = pt->top_env[i];
		t->objective_us = i < nfinal ? x[i]->mean : x[i]->search_us;
		t->ci_lo = i < nfinal ? x[i]->lo : NAN;
		t->ci_hi = i < nfinal ? x[i]->hi : NAN;
		t->repeats = i < nfinal ? x[i]->ok : 1;
		t->symmetric = space_point_symmetric(s->run.sp, &x[i]->p, 0);
	}
	pt->ntop = n;
}

int session_results_write(nccltune_session *s, struct final_state *f, cJSON **doc_out)
{
	struct result_input in;
	struct result_size sizes[WORKLOAD_MAX_ENTRIES];
	struct parts pt;
	struct finalist *win;
	double bmean = NAN, blo = NAN, bhi = NAN;
	size_t nb;
	bool enough;
	cJSON *doc = NULL;
	char e[1024];
	int status = NCCLTUNE_ERROR;

	memset(&in, 0, sizeof in);
	memset(&pt, 0, sizeof pt);
	win = f->win;
	nb = f->nb;
	bmean = f->bmean;
	blo = f->blo;
	bhi = f->bhi;
	enough = decide_enough(f, win) || guards_left_baseline(f);
	if (input_basics(s, f, &in, &pt) != NCCLTUNE_OK)
		goto out;
	if (nb) {
		in.has_baseline = true;
		in.baseline.env = pt.empty;
		in.baseline.objective_us = bmean;
		in.baseline.ci_lo = blo;
		in.baseline.ci_hi = bhi;
		in.baseline.repeats = (int)nb;
	}
	if (input_best(s, f, &in, &win, nb, sizes, &pt) != NCCLTUNE_OK)
		goto out;
	/* never a gain without an interval: a best measured once states none */
	if (!enough)
		in.has_gain = false;
	input_top(s, f, &pt);
	in.ntop = pt.ntop;
	in.top = pt.top;
	doc = result_build(&in);
	/* a best that is not NCCL's defaults (win) with no interval above 1.00x */
	if (!doc || !add_verdict(s, doc, in.has_best, enough,
	                         win && (!in.has_gain || !(in.gain_lo > 1.0))) ||
	    !session_rules_add(s, doc, in.has_best && win && win->has_point
	                                 ? (f->has_rec ? &f->rec : &win->p) : NULL) ||
	    !session_server_results_add(s, doc, in.has_best && !win,
	                                in.has_best && win && win->has_point ? &win->p : NULL,
	                                f->has_rec ? &f->rec : NULL, f->rec_unset) ||
	    !final_add(s, f, doc, win, in.has_best) || (s->cfg.ntries > 0 &&
	             !cJSON_AddItemToObject(doc, "tries",
	                                    tries_json(s, f, in.has_best ? win : NULL,
	                                               in.has_best ? in.best.objective_us : NAN,
	                                               nb ? bmean : NAN)))) {
		session_fail(s, NCCLTUNE_ERROR, "out of memory");
		goto out;
	}
	if (result_write(s->run.dir, doc, e, sizeof e) != 0) {
		session_fail(s, NCCLTUNE_ERROR, "%s", e);
		goto out;
	}
	*doc_out = doc;
	doc = NULL;
	status = in.has_best ? NCCLTUNE_OK : NCCLTUNE_NO_CONFIG;
out:
	parts_free(&pt);
	cJSON_Delete(doc);
	return status;
}
