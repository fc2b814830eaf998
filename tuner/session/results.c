/* results.c - a session's results.json, filled into the file's one type (struct summary,
 * result/summary.h) from what the final phase decided and written by result/'s one
 * writer (result_text): the winner of the final rounds (or, without them, of the
 * search), the baseline, the top list, each workload size's latency, the failures and
 * the rules learned, how much one run varies, and each --try against the baseline and
 * the tuned best. The session keeps what the loader reads back from those bytes, for
 * its summary and --json. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "nccltune_config.h"
#include "ncclvars.h"
#include "proto.h"
#include "result/result.h"
#include "result/summary.h"
#include "run/ruletable.h"
#include "session/session_priv.h"

/* m measured: `us` per step, its 95% interval [lo, hi] (none where either is NAN), over
 * `repeats` runs. Can't fail. */
static void measure_set(struct summary_measure *m, double us, double lo, double hi, int repeats)
{
	m->present = true;
	m->objective_us = us;
	m->has_ci = !isnan(lo) && !isnan(hi);
	m->ci_lo = lo;
	m->ci_hi = hi;
	m->repeats = repeats;
}

/* Median over the runs of the configuration (p, try_no) in the final phase (from
 * final_from: an ended final phase's runs are history, runlog.h), or else in any phase,
 * of each workload size's median latency. */
static size_t per_size(const nccltune_session *s, const struct point *p, size_t try_no,
                       struct summary_size *out)
{
	bool use_final = false;
	size_t n = 0;

	for (size_t i = 0; i < s->run.nruns && !use_final; i++) {
		const struct session_run *r = &s->run.runs[i];

		use_final = r->phase == PHASE_FINAL && i >= s->run.final_from &&
		            r->o.cls == OUTCOME_OK &&
		            runlog_same_config(r, p, try_no, space_dims(s->run.sp));
	}
	for (size_t w = 0; w < s->cfg.wl.n; w++) {
		double v[256];
		size_t m = 0;

		for (size_t i = 0; i < s->run.nruns && m < 256; i++) {
			const struct session_run *r = &s->run.runs[i];

			if (r->o.cls != OUTCOME_OK ||
			    !runlog_same_config(r, p, try_no, space_dims(s->run.sp)) ||
			    (use_final && (r->phase != PHASE_FINAL || i < s->run.final_from)))
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

/* A failed run's per-size choice, "rule.43008.algo=Tree rule.43008.proto=LL" (the levels
 * of its point's per-size dimensions that are set; a failed sweep choice's point is the
 * choice's), into buf; "" when it has none. */
static void failure_choice(const nccltune_session *s, const struct session_run *run, char *buf,
                           size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t d = 0; run->has_point && d < space_dims(s->run.sp); d++) {
		const char *t = space_level_text(s->run.sp, d, run->p.lv[d]);
		int k;

		if (space_rule_of(s->run.sp, d, NULL) == SPACE_RULE_NONE || !t)
			continue;
		k = snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "",
		             space_name(s->run.sp, d), t);
		if (k < 0 || (size_t)k >= len - used)
			break;
		used += (size_t)k;
	}
}

/* What identifies a row of results.json's failures: the class, the environment as
 * written, the per-size choice and the error's first line (at most FAILURE_ERROR_MAX
 * bytes), each kept for the row. */
#define FAILURE_ERROR_MAX 200
struct failure_key { char *env; char choice[512]; char error[FAILURE_ERROR_MAX + 1]; };

static bool failure_key_make(const nccltune_session *s, const struct session_run *run,
                             struct failure_key *k)
{
	cJSON *env = session_env_json(s, run);
	size_t n = strcspn(run->o.error, "\r\n");
	char line[FAILURE_ERROR_MAX + 1];

	k->env = env ? cJSON_PrintUnformatted(env) : NULL;
	cJSON_Delete(env);
	failure_choice(s, run, k->choice, sizeof k->choice);
	if (n <= FAILURE_ERROR_MAX)
		snprintf(line, sizeof line, "%.*s", (int)n, run->o.error);
	else   /* cut, and said so */
		snprintf(line, sizeof line, "%.*s...", FAILURE_ERROR_MAX - 3, run->o.error);
	/* the probe's words, printable ASCII only: the loader refuses a control character,
	 * and what the writer writes its reader accepts */
	summary_sanitize(line, k->error, sizeof k->error);
	return k->env != NULL;
}

/* Failures grouped, as results.json lists them, into r: one row per class, environment,
 * per-size choice and first line of the error, with the count of its runs (identical
 * rows are one row). False when out of memory. */
static bool failures_fill(const nccltune_session *s, struct summary *r)
{
	struct failure_key *k = calloc(s->run.nruns + 1, sizeof *k);
	bool *done = calloc(s->run.nruns + 1, sizeof *done), ok = done && k;

	r->failures = calloc(s->run.nruns + 1, sizeof *r->failures);
	for (size_t i = 0; ok && i < s->run.nruns; i++)
		if (s->run.runs[i].o.cls != OUTCOME_OK)
			ok = failure_key_make(s, &s->run.runs[i], &k[i]);
	for (size_t i = 0; ok && r->failures && i < s->run.nruns; i++) {
		const struct session_run *run = &s->run.runs[i];
		struct summary_failure *f = &r->failures[r->nfailures];

		if (done[i] || run->o.cls == OUTCOME_OK)
			continue;
		for (size_t j = i; j < s->run.nruns; j++) {
			const struct session_run *q = &s->run.runs[j];

			if (!done[j] && q->o.cls == run->o.cls && strcmp(k[j].env, k[i].env) == 0 &&
			    strcmp(k[j].choice, k[i].choice) == 0 &&
			    strcmp(k[j].error, k[i].error) == 0) {
				done[j] = true;
				f->count++;
			}
		}
		r->nfailures++;
		f->stage = outcome_class_name(run->o.cls);
		f->choice = k[i].choice[0] ? result_keep_string(r, k[i].choice) : NULL;
		f->error = k[i].error[0] ? result_keep_string(r, k[i].error) : NULL;
		ok = result_keep_env(r, session_env_json(s, run), &f->env) &&
		     (!k[i].choice[0] || f->choice) && (!k[i].error[0] || f->error);
	}
	for (size_t i = 0; k && i < s->run.nruns; i++)
		cJSON_free(k[i].env);
	free(k);
	free(done);
	return ok && r->failures;
}

/* NAME: "level", or NAME: null for an unset level, into `when`. */
static bool add_level(cJSON *when, const space *sp, size_t dim, size_t level)
{
	const char *v = space_level_text(sp, dim, level);

	return v ? cJSON_AddStringToObject(when, space_name(sp, dim), v) != NULL
	         : cJSON_AddNullToObject(when, space_name(sp, dim)) != NULL;
}

/* The pruner's rules into r ("when": the levels, null for unset; "reason"). False when
 * out of memory. */
static bool pruned_fill(const nccltune_session *s, struct summary *r)
{
	size_t n = prune_rule_count(s->run.pr);

	r->pruned = calloc(n + 1, sizeof *r->pruned);
	for (size_t i = 0; r->pruned && i < n; i++) {
		const struct prune_rule *rule = prune_rule_at(s->run.pr, i);
		cJSON *when = cJSON_CreateObject();

		r->npruned++;
		r->pruned[i].reason = rule->text;
		if (!when || !add_level(when, s->run.sp, rule->dim, rule->level) ||
		    (rule->pair && !add_level(when, s->run.sp, rule->dim2, rule->level2))) {
			cJSON_Delete(when);
			return false;
		}
		if (!result_keep_env(r, when, &r->pruned[i].when))
			return false;
	}
	return r->pruned != NULL;
}

/* One --try in results.json, into t: what it sets, how it ended, and its speed against
 * the baseline and the tuned best from the same final rounds (or, without them, from its
 * single run). `win` is the best's entry (NULL: the baseline is the best, or none).
 * False when out of memory. */
static bool try_fill(const nccltune_session *s, const struct final_state *f, size_t i,
                     const struct finalist *win, double best_us, double base_us,
                     struct summary *res, struct summary_try *t)
{
	const struct tryconf *tc = &s->cfg.tries[i];
	const struct outcome *own = session_try_outcome(s, i + 1);
	const struct finalist *x = f->of_try ? f->of_try[i] : NULL;
	double tr = NAN, tlo = NAN, thi = NAN;

	t->outcome = "ok";
	t->in_space = tc->in_space;
	t->ratio = t->ratio_lo = t->ratio_hi = NAN;
	if (!own)
		t->outcome = "not_run";
	else if (own->cls != OUTCOME_OK)
		t->outcome = outcome_class_name(own->cls);
	else if (x && x->failed)
		t->outcome = outcome_class_name(x->fail_cls);
	else if (session_config_ever_wrong(s, tc->in_space ? &tc->p : NULL, i + 1))
		t->outcome = outcome_class_name(OUTCOME_VERIFY);
	if (x && f->rounds && x->ok > 0) {
		measure_set(&t->m, x->mean, x->lo, x->hi, x->ok);
		t->ratio = x->gain;
		t->ratio_lo = x->gain_lo;
		t->ratio_hi = x->gain_hi;
		if (x == win)
			tr = 1.0;
		else
			decide_paired_ratio(x->us, win ? win->us : f->base_us, f->rounds, &tr,
			                     &tlo, &thi);
	} else if (own && own->cls == OUTCOME_OK) {
		t->m.present = true;
		t->m.objective_us = own->objective_us;
		t->m.repeats = 1;
		t->ratio = base_us / own->objective_us;
		tr = x && x == win ? 1.0 : own->objective_us / best_us;
	}
	t->has_ratio = t->m.present && isfinite(t->ratio);
	t->has_tuned = t->m.present && isfinite(tr);
	t->tuned = tr;
	t->tuned_lo = tlo;
	t->tuned_hi = thi;
	return result_keep_env(res, tryconf_env_json(tc, s->run.sp), &t->m.env);
}

static bool tries_fill(const nccltune_session *s, const struct final_state *f,
                       const struct finalist *win, double best_us, double base_us,
                       struct summary *r)
{
	if (!s->cfg.ntries)
		return true;
	r->tries = calloc(s->cfg.ntries, sizeof *r->tries);
	for (size_t i = 0; r->tries && i < s->cfg.ntries; i++) {
		r->ntries++;
		if (!try_fill(s, f, i, win, best_us, base_us, r, &r->tries[i]))
			return false;
	}
	return r->tries != NULL;
}

/* results.json's "verdict" (docs/formats.md) and, for a session too small to measure
 * its best twice, "budget_needed". `unproven`: the best sets something and its gain's
 * interval reaches down to 1.00x ("recommended" means shown faster, nothing else).
 * Can't fail. */
static void verdict_fill(nccltune_session *s, struct summary *r, bool enough, bool unproven)
{
	struct decide_view v;
	int need;

	session_decide_view(s, &v);
	need = decide_budget_needed(&v);
	r->verdict = !r->best.present ? SUMMARY_VERDICT_NONE
	           : !enough ? SUMMARY_UNMEASURED
	           : unproven ? SUMMARY_VERDICT_UNPROVEN : SUMMARY_VERDICT_OK;
	if (r->best.present && !enough && need > s->cfg.budget)
		r->budget_needed = need;
}

/* results.json "ablation": what became of each of the winner's variables. False when
 * out of memory. */
static bool ablation_fill(const nccltune_session *s, const struct final_state *f,
                          struct summary *r)
{
	r->ablation = calloc(f->nab, sizeof *r->ablation);
	if (!r->ablation)
		return false;
	for (size_t i = 0; i < f->nab; i++) {
		const struct ablation *a = &f->ab[i];
		struct summary_ablation *o = &r->ablation[i];

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
	r->nablation = f->nab;
	return true;
}

/* Did the guard sizes disqualify every finalist that would have won, each shown slower
 * there, leaving NCCL's defaults, themselves re-measured in two or more final rounds?
 * Then the defaults are a measured recommendation, not a session too small to tell. A
 * finalist refused as not shown safe at a guard (the rounds could not tell) makes it
 * one too small to tell: "not measured enough". */
static bool guards_left_baseline(const struct final_state *f)
{
	double m, lo, hi;
	bool guarded = false, untold = false;

	for (size_t j = 0; j < f->k + f->nt && f->rounds; j++) {
		const struct finalist *x = f->c && j < f->k ? &f->c[j] : &f->t[j - f->k];

		guarded |= x->guard_bytes != 0;
		untold |= x->guard_bytes != 0 && x->guard_call != GUARDSTAT_UNSAFE;
	}
	return !f->win && guarded && !untold && f->base_ok &&
	       decide_finite_stats(f->base_us, f->rounds, &m, &lo, &hi) >= 2;
}

/* results.json guards.attribution: what each variable of the finalist a guard size
 * disqualified costs there, measured, each with the finalist's variables. False when
 * out of memory. */
static bool attribution_fill(const nccltune_session *s, const struct final_state *f,
                             struct summary *r)
{
	if (!f->guarded || !f->nattr)
		return true;
	r->attribution = calloc(f->nattr, sizeof *r->attribution);
	for (size_t i = 0; r->attribution && i < f->nattr; i++) {
		const struct attribution *a = &f->attr[i];
		struct summary_attribution *o = &r->attribution[i];

		r->nattribution++;
		if (!result_keep_env(r, env_point_to_json(s->run.sp, &f->guarded->p), &o->env))
			return false;
		o->var = space_name(s->run.sp, a->dim);
		o->value = space_level_text(s->run.sp, a->dim, f->guarded->p.lv[a->dim]);
		o->bytes = f->guarded->guard_bytes;
		o->rounds = (long)a->pairs;
		o->cost.ratio = a->cost;
		o->cost.has_ci = !isnan(a->lo) && !isnan(a->hi);
		o->cost.lo = a->lo;
		o->cost.hi = a->hi;
	}
	return r->attribution != NULL;
}

/* The final phase's part of results.json (ablation, per_size, guards) into r. `win` is
 * the best's entry (NULL: the baseline is the best). False when out of memory. */
static bool final_fill(nccltune_session *s, const struct final_state *f, struct summary *r,
                       const struct finalist *win)
{
	const struct workload *w = &s->cfg.wl;

	if (r->best.present && f->win && f->nab && !ablation_fill(s, f, r))
		return false;
	if (!f->rounds || !w->nguard)
		return true;
	r->per_size = calloc(w->n + w->nguard, sizeof *r->per_size);
	r->guard_sizes = calloc(w->nguard, sizeof *r->guard_sizes);
	if (!r->per_size || !r->guard_sizes)
		return false;
	r->guards_verdict = session_per_size_fill(s, win, r->per_size, &r->nper_size);
	for (size_t i = 0; i < w->nguard; i++)
		r->guard_sizes[i] = w->guard[i];
	r->nguard_sizes = w->nguard;
	return attribution_fill(s, f, r);
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

/* The workload as the session measured it (its repeats, iters and warmup, left out). */
static bool workload_fill(const struct workload *w, struct summary_workload *o)
{
	o->present = true;
	o->schema = WORKLOAD_SCHEMA;
	o->dtype = proto_dtype_name(w->dtype);
	o->c = calloc(w->n + 1, sizeof *o->c);
	o->guard = calloc(w->nguard + 1, sizeof *o->guard);
	if (!o->c || !o->guard)
		return false;
	for (size_t i = 0; i < w->n; i++) {
		o->c[i].op = "allreduce";
		o->c[i].bytes = w->e[i].bytes;
		o->c[i].count = (long)w->e[i].count;
	}
	o->n = w->n;
	for (size_t i = 0; i < w->nguard; i++)
		o->guard[i] = w->guard[i];
	o->nguard = w->nguard;
	o->has_compute = w->compute_us > 0;
	o->compute_kernel_us = w->compute_us;
	o->compute_ctas = w->compute_ctas;
	o->window_symmetric = w->window_symmetric;
	return true;
}

/* The session's settings and record into r. Returns an nccltune_status. */
static int fill_basics(nccltune_session *s, struct summary *r)
{
	struct runlog l = session_runlog(s);
	int configs = 0, dof = 0;
	char e[512];

	r->tool_name = "nccltune";
	r->tool_version = NCCLTUNE_VERSION;
	r->created = s->run.created;
	if (s->run.fingerprint &&
	    summary_fingerprint_parse(s->run.fingerprint, "fingerprint", &r->fp, e, sizeof e) != 0)
		summary_fingerprint_clear(&r->fp);
	r->fp.doc = s->run.fingerprint;
	r->source = s->run.source;
	if (strcmp(s->run.source, "model") == 0)
		r->model = s->run.model_name[0] ? s->run.model_name
		         : s->cfg.model ? s->cfg.model : "unknown";
	r->strategy = s->cfg.strategy_name;
	r->has_seed = true;
	r->seed = (double)s->cfg.seed;
	r->budget = s->cfg.budget;
	r->evaluations = (long)s->run.nruns;
	r->has_noise = decide_noise(&l, &r->noise_sd, &configs, &dof);
	r->noise_configs = configs;
	r->noise_dof = dof;
	if (s->run.like[0]) {
		r->server_like = s->run.like;
		if (!result_keep_env(r, env_pins_to_json(&s->run.server), &r->server_env))
			return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	}
	if (!workload_fill(&s->cfg.wl, &r->workload) ||
	    !result_keep_env(r, env_pins_to_json(&s->run.pins), &r->pinned) ||
	    !failures_fill(s, r) || !pruned_fill(s, r))
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	return NCCLTUNE_OK;
}

/* NCCL's defaults as measured in the final rounds (nb of them) into m. False when out of
 * memory. */
static bool baseline_fill(struct summary *r, const struct final_state *f,
                          struct summary_measure *m)
{
	measure_set(m, f->bmean, f->blo, f->bhi, (int)f->nb);
	return result_keep_env(r, cJSON_CreateObject(), &m->env);
}

/* The best into r: the winner when it beat the baseline (or there is none to beat),
 * else the baseline, NCCL's defaults, with *win set to NULL; none when neither ran.
 * Returns an nccltune_status. */
static int fill_best(nccltune_session *s, const struct final_state *f, struct summary *r,
                     struct finalist **win)
{
	struct finalist *w = *win;
	struct runlog l = session_runlog(s);
	size_t nb = f->nb;
	bool all_dropped = w && w->has_point && nb &&
	                   decide_point_sets_nothing(&l, f->has_rec ? &f->rec : &w->p,
	                                             f->has_rec ? f->rec_unset : 0);
	bool ok = true;

	if (all_dropped)
		session_note(&s->out, "the best sets nothing NCCL does not already do (its "
		             "variables dropped, its rules what NCCL ran in the baseline): NCCL's "
		             "defaults are the recommendation");
	r->sizes = calloc(WORKLOAD_MAX_ENTRIES, sizeof *r->sizes);
	if (!r->sizes)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	if (w && !all_dropped && (!nb || isnan(w->gain) || w->gain > 1.0)) {
		ok = result_keep_env(r, f->has_rec ? rec_env(s, f)
		                        : w->has_point ? env_point_to_json(s->run.sp, &w->p)
		                                       : tryconf_env_json(&s->cfg.tries[w->try_no - 1],
		                                                          s->run.sp),
		                     &r->best.env);
		measure_set(&r->best, w->mean, w->lo, w->hi, w->ok);
		r->nsizes = per_size(s, w->has_point ? &w->p : NULL, w->try_no, r->sizes);
		if (!isnan(w->gain)) {
			r->has_gain = true;
			r->gain = w->gain;
			r->gain_lo = w->gain_lo;
			r->gain_hi = w->gain_hi;
		}
	} else if (nb) {
		/* Nothing beat NCCL's defaults (or all the best set was dropped): recommend
		 * setting nothing. */
		ok = baseline_fill(r, f, &r->best);
		r->nsizes = per_size(s, NULL, 0, r->sizes);
		*win = NULL;   /* the baseline is the best */
		r->has_gain = true;
		r->gain = 1.0;
	}
	return ok ? NCCLTUNE_OK : session_fail(s, NCCLTUNE_ERROR, "out of memory");
}

/* The top list into r, in the final phase's order (decide_top): the finalists with their
 * repeats, the others with their single search run. False when out of memory. */
static bool fill_top(const nccltune_session *s, const struct final_state *f, struct summary *r)
{
	const struct finalist *x[DECIDE_TOP_MAX + DECIDE_FINALISTS];
	size_t nfinal, n = decide_top(f, x, &nfinal);

	r->top = calloc(n + 1, sizeof *r->top);
	for (size_t i = 0; r->top && i < n; i++) {
		struct summary_measure *t = &r->top[i];

		r->ntop++;
		t->present = true;
		t->objective_us = i < nfinal ? x[i]->mean : x[i]->search_us;
		t->has_ci = i < nfinal && !isnan(x[i]->lo) && !isnan(x[i]->hi);
		t->ci_lo = x[i]->lo;
		t->ci_hi = x[i]->hi;
		t->repeats = i < nfinal ? x[i]->ok : 1;
		t->symmetric = space_point_symmetric(s->run.sp, &x[i]->p, 0);
		if (!result_keep_env(r, env_point_to_json(s->run.sp, &x[i]->p), &t->env))
			return false;
	}
	return r->top != NULL;
}

/* Everything results.json holds, into r. Returns an nccltune_status. */
static int fill(nccltune_session *s, struct final_state *f, struct summary *r)
{
	struct finalist *win = f->win;
	bool enough = decide_enough(f, win) || guards_left_baseline(f);
	const struct point *best_p;
	int rc = fill_basics(s, r);

	if (rc == NCCLTUNE_OK && f->nb && !baseline_fill(r, f, &r->baseline))
		rc = session_fail(s, NCCLTUNE_ERROR, "out of memory");
	if (rc == NCCLTUNE_OK)
		rc = fill_best(s, f, r, &win);
	if (rc != NCCLTUNE_OK)
		return rc;
	/* never a gain without an interval: a best measured once states none */
	if (!enough)
		r->has_gain = false;
	best_p = r->best.present && win && win->has_point ? &win->p : NULL;
	/* a best that is not NCCL's defaults (win) with no interval above 1.00x */
	verdict_fill(s, r, enough, win && (!r->has_gain || !(r->gain_lo > 1.0)));
	if (!fill_top(s, f, r) ||
	    !session_rules_fill(s, r, best_p && f->has_rec ? &f->rec : best_p) ||
	    !session_server_results_fill(s, r, r->best.present && !win, best_p,
	                                 f->has_rec ? &f->rec : NULL, f->rec_unset) ||
	    !final_fill(s, f, r, win) ||
	    !tries_fill(s, f, r->best.present ? win : NULL,
	                r->best.present ? r->best.objective_us : NAN, f->nb ? f->bmean : NAN, r))
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	return NCCLTUNE_OK;
}

int session_results_write(nccltune_session *s, struct final_state *f, struct summary **out)
{
	struct summary *r = result_new();
	char path[PATH_MAX + 16], e[1024], *text = NULL;
	int status = NCCLTUNE_ERROR;

	*out = NULL;
	if (!r) {
		session_fail(s, NCCLTUNE_ERROR, "out of memory");
		goto out;
	}
	status = fill(s, f, r);
	if (status != NCCLTUNE_OK)
		goto out;
	status = NCCLTUNE_ERROR;
	text = result_text(r);
	if (!text) {
		session_fail(s, NCCLTUNE_ERROR, "out of memory");
		goto out;
	}
	snprintf(path, sizeof path, "%s/results.json", s->run.dir);
	if (fs_write_atomic(path, text, strlen(text), 0644, e, sizeof e) != 0) {
		session_fail(s, NCCLTUNE_ERROR, "%s", e);
		goto out;
	}
	/* what the session shows is what a reader of the file reads */
	if (summary_parse(text, strlen(text), path, out, e, sizeof e) != 0) {
		session_fail(s, NCCLTUNE_ERROR, "%s", e);
		goto out;
	}
	status = r->best.present ? NCCLTUNE_OK : NCCLTUNE_NO_CONFIG;
out:
	free(text);
	summary_destroy(r);
	return status;
}
