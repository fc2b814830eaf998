/* write.c - the one writer of results.json: a struct summary (summary.h, the one type
 * of the file) to its document, key by key in the order docs/formats.md gives. What the
 * loader (load.c) reads back from these bytes is the same struct, and writing that again
 * gives the same bytes (tests/session/test_result.c holds the round trip).
 *
 * Numbers the session computes are rounded here (objectives and ratios to four
 * decimals), so a value read back rounds to itself; a field the struct says is absent
 * (NAN, has_* false, NULL, 0 entries) is left out or written null as the format says. */
#include "result/result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Round to four decimals (of a microsecond, or of a ratio): results stay readable and
 * byte-stable across platforms, and a rounded value rounds to itself. */
static double tidy(double v)
{
	return round(v * 1e4) / 1e4;
}

/* A new object appended to array arr; NULL when out of memory. */
static cJSON *append_object(cJSON *arr)
{
	cJSON *o = cJSON_CreateObject();

	if (o && cJSON_AddItemToArray(arr, o))
		return o;
	cJSON_Delete(o);
	return NULL;
}

static bool add_number_item(cJSON *arr, double v)
{
	cJSON *n = cJSON_CreateNumber(v);

	if (n && cJSON_AddItemToArray(arr, n))
		return true;
	cJSON_Delete(n);
	return false;
}

/* [lo, hi] under key. */
static bool add_pair(cJSON *o, const char *key, double lo, double hi)
{
	cJSON *a = cJSON_AddArrayToObject(o, key);

	return a && add_number_item(a, lo) && add_number_item(a, hi);
}

/* A number, or null for NAN. */
static bool add_num(cJSON *o, const char *key, double v)
{
	return isnan(v) ? cJSON_AddNullToObject(o, key) != NULL
	                : cJSON_AddNumberToObject(o, key, v) != NULL;
}

/* A string, or null for NULL. */
static bool add_str(cJSON *o, const char *key, const char *v)
{
	return v ? cJSON_AddStringToObject(o, key, v) != NULL
	         : cJSON_AddNullToObject(o, key) != NULL;
}

/* An environment object; a NULL value (a pruned rule's unset level) is null. */
static bool add_env(cJSON *o, const char *key, const struct summary_env *env)
{
	cJSON *e = cJSON_AddObjectToObject(o, key);

	for (size_t i = 0; e && i < env->n; i++)
		if (!add_str(e, env->v[i].name, env->v[i].value))
			return false;
	return e != NULL;
}

/* {"ratio": r, "ci95": [lo, hi]} (no interval without one) under key. */
static bool add_ratio(cJSON *o, const char *key, double r, bool has_ci, double lo, double hi)
{
	cJSON *g = cJSON_AddObjectToObject(o, key);

	return g && cJSON_AddNumberToObject(g, "ratio", tidy(r)) &&
	       (!has_ci || add_pair(g, "ci95", tidy(lo), tidy(hi)));
}

/* objective_us, ci95_us and repeats of a measure. */
static bool add_objective(cJSON *o, const struct summary_measure *m)
{
	return cJSON_AddNumberToObject(o, "objective_us", tidy(m->objective_us)) &&
	       (!m->has_ci || add_pair(o, "ci95_us", tidy(fmax(0.0, m->ci_lo)), tidy(m->ci_hi))) &&
	       (m->repeats <= 0 || cJSON_AddNumberToObject(o, "repeats", m->repeats));
}

/* best.per_size and best.rules. */
static bool add_best_parts(cJSON *o, const struct summary *s)
{
	cJSON *arr;

	if (s->nsizes) {
		arr = cJSON_AddArrayToObject(o, "per_size");
		for (size_t i = 0; arr && i < s->nsizes; i++) {
			cJSON *x = append_object(arr);

			if (!x || !cJSON_AddNumberToObject(x, "bytes", (double)s->sizes[i].bytes) ||
			    !cJSON_AddNumberToObject(x, "us", tidy(s->sizes[i].us)))
				return false;
		}
		if (!arr)
			return false;
	}
	if (!s->has_rules)
		return true;
	arr = cJSON_AddArrayToObject(o, "rules");
	for (size_t i = 0; arr && i < s->nrules; i++) {
		const struct summary_rule *r = &s->rules[i];
		cJSON *x = append_object(arr);

		cJSON *ran;

		if (!x || !cJSON_AddNumberToObject(x, "bytes", (double)r->bytes) ||
		    !add_str(x, "algo", r->algo_word) || !add_str(x, "proto", r->proto_word) ||
		    !(r->ctas > 0 ? cJSON_AddNumberToObject(x, "ctas", r->ctas) != NULL
		                  : cJSON_AddNullToObject(x, "ctas") != NULL))
			return false;
		if (!r->has_ran)
			continue;
		ran = cJSON_AddObjectToObject(x, "nccl");
		if (!ran || !add_str(ran, "algo", r->ran_algo_word) ||
		    !add_str(ran, "proto", r->ran_proto_word) ||
		    !cJSON_AddNumberToObject(ran, "ctas", r->ran_ctas))
			return false;
	}
	return arr != NULL;
}

/* baseline, best or top[i] (best with its per-size parts); null when absent. */
static cJSON *measure_json(const struct summary_measure *m, const struct summary *best_of)
{
	cJSON *o = m->present ? cJSON_CreateObject() : cJSON_CreateNull();

	if (!o || !m->present)
		return o;
	if (!add_env(o, "env", &m->env) || !add_objective(o, m) ||
	    (best_of && !add_best_parts(o, best_of)))
		goto fail;
	if (m->has_step) {
		cJSON *st = cJSON_AddObjectToObject(o, "step");

		if (!st || !cJSON_AddNumberToObject(st, "allreduce_us", m->step_allreduce_us) ||
		    !cJSON_AddNumberToObject(st, "kernel_us", m->step_kernel_us) ||
		    !cJSON_AddStringToObject(st, "kernel", "measured"))
			goto fail;
	}
	if (m->symmetric) {
		cJSON *srv = cJSON_AddObjectToObject(o, "server");

		if (!srv || !cJSON_AddBoolToObject(srv, "symmetric", true) ||
		    (m->kernel && !cJSON_AddStringToObject(srv, "kernel", m->kernel)))
			goto fail;
	}
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

static bool add_item(cJSON *o, const char *key, cJSON *item)
{
	if (item && cJSON_AddItemToObject(o, key, item))
		return true;
	cJSON_Delete(item);
	return false;
}

static bool add_workload(cJSON *root, const struct summary_workload *w)
{
	cJSON *o, *arr;

	if (!w->present)
		return cJSON_AddNullToObject(root, "workload") != NULL;
	o = cJSON_AddObjectToObject(root, "workload");
	if (!o || (w->schema && !cJSON_AddStringToObject(o, "schema", w->schema)) ||
	    !cJSON_AddStringToObject(o, "dtype", w->dtype))
		return false;
	arr = cJSON_AddArrayToObject(o, "collectives");
	for (size_t i = 0; arr && i < w->n; i++) {
		cJSON *c = append_object(arr);

		if (!c || !cJSON_AddStringToObject(c, "op", w->c[i].op) ||
		    !cJSON_AddNumberToObject(c, "bytes", (double)w->c[i].bytes) ||
		    !cJSON_AddNumberToObject(c, "count", (double)w->c[i].count))
			return false;
	}
	if (!arr)
		return false;
	if (w->nguard) {
		arr = cJSON_AddArrayToObject(o, "guard");
		for (size_t i = 0; arr && i < w->nguard; i++)
			if (!add_number_item(arr, (double)w->guard[i]))
				return false;
		if (!arr)
			return false;
	}
	if (w->description && !cJSON_AddStringToObject(o, "description", w->description))
		return false;
	if (w->has_compute) {
		cJSON *c = cJSON_AddObjectToObject(o, "compute");

		if (!c || !cJSON_AddNumberToObject(c, "kernel_us", w->compute_kernel_us) ||
		    (w->compute_ctas > 0 && !cJSON_AddNumberToObject(c, "ctas", (double)w->compute_ctas)))
			return false;
	}
	return !w->window_symmetric || cJSON_AddStringToObject(o, "window", "symmetric");
}

/* schema, tool, created, fingerprint, source, model, workload, strategy, seed, budget,
 * pinned, server. */
static bool add_head(cJSON *root, const struct summary *s)
{
	cJSON *tool, *fp;

	if (!cJSON_AddStringToObject(root, "schema", RESULT_SCHEMA))
		return false;
	if (s->tool_name || s->tool_version) {
		tool = cJSON_AddObjectToObject(root, "tool");
		if (!tool || (s->tool_name && !cJSON_AddStringToObject(tool, "name", s->tool_name)) ||
		    (s->tool_version && !cJSON_AddStringToObject(tool, "version", s->tool_version)))
			return false;
	}
	fp = s->fp.doc ? cJSON_Duplicate(s->fp.doc, true) : cJSON_CreateNull();
	if ((s->created && !cJSON_AddStringToObject(root, "created", s->created)) ||
	    !add_item(root, "fingerprint", fp) || !cJSON_AddStringToObject(root, "source", s->source) ||
	    (s->model && !cJSON_AddStringToObject(root, "model", s->model)) ||
	    !add_workload(root, &s->workload) ||
	    (s->strategy && !cJSON_AddStringToObject(root, "strategy", s->strategy)) ||
	    (s->has_seed && !cJSON_AddNumberToObject(root, "seed", s->seed)) ||
	    (s->budget >= 0 && !cJSON_AddNumberToObject(root, "budget", (double)s->budget)) ||
	    !add_env(root, "pinned", &s->pinned))
		return false;
	if (!s->server_like)
		return true;
	tool = cJSON_AddObjectToObject(root, "server");
	return tool && cJSON_AddStringToObject(tool, "like", s->server_like) &&
	       add_env(tool, "env", &s->server_env);
}

/* gain, noise, top, evaluations, failures, pruned. */
static bool add_outcome(cJSON *root, const struct summary *s)
{
	cJSON *arr, *nz;

	if (s->has_gain ? !add_ratio(root, "gain", s->gain, !isnan(s->gain_lo) && !isnan(s->gain_hi),
	                             s->gain_lo, s->gain_hi)
	                : !cJSON_AddNullToObject(root, "gain"))
		return false;
	if (s->has_noise) {
		nz = cJSON_AddObjectToObject(root, "noise");
		if (!nz || !cJSON_AddNumberToObject(nz, "run_sd", tidy(s->noise_sd)) ||
		    !cJSON_AddNumberToObject(nz, "configs", (double)s->noise_configs) ||
		    !cJSON_AddNumberToObject(nz, "dof", (double)s->noise_dof))
			return false;
	} else if (!cJSON_AddNullToObject(root, "noise")) {
		return false;
	}
	arr = cJSON_AddArrayToObject(root, "top");
	for (size_t i = 0; arr && i < s->ntop; i++) {
		cJSON *o = measure_json(&s->top[i], NULL);

		if (!o || !cJSON_AddItemToArray(arr, o)) {
			cJSON_Delete(o);
			return false;
		}
	}
	if (!arr || !cJSON_AddNumberToObject(root, "evaluations", (double)s->evaluations))
		return false;
	arr = cJSON_AddArrayToObject(root, "failures");
	for (size_t i = 0; arr && i < s->nfailures; i++) {
		cJSON *o = append_object(arr);

		if (!o || !add_env(o, "env", &s->failures[i].env) ||
		    !cJSON_AddStringToObject(o, "stage", s->failures[i].stage) ||
		    !cJSON_AddNumberToObject(o, "count", (double)s->failures[i].count) ||
		    (s->failures[i].choice &&
		     !cJSON_AddStringToObject(o, "choice", s->failures[i].choice)) ||
		    (s->failures[i].error &&
		     !cJSON_AddStringToObject(o, "error", s->failures[i].error)))
			return false;
	}
	arr = arr ? cJSON_AddArrayToObject(root, "pruned") : NULL;
	for (size_t i = 0; arr && i < s->npruned; i++) {
		cJSON *o = append_object(arr);

		if (!o || !add_env(o, "when", &s->pruned[i].when) ||
		    !cJSON_AddStringToObject(o, "reason", s->pruned[i].reason))
			return false;
	}
	return arr != NULL;
}

static bool add_ablation(cJSON *root, const struct summary *s)
{
	cJSON *arr = cJSON_AddArrayToObject(root, "ablation");

	for (size_t i = 0; arr && i < s->nablation; i++) {
		const struct summary_ablation *a = &s->ablation[i];
		cJSON *o = append_object(arr);

		if (!o || !cJSON_AddStringToObject(o, "var", a->var) ||
		    !cJSON_AddStringToObject(o, "value", a->value) ||
		    !cJSON_AddStringToObject(o, "kind", a->kind) ||
		    !cJSON_AddBoolToObject(o, "dropped", a->dropped) ||
		    !cJSON_AddStringToObject(o, "why", a->why) ||
		    (a->run && !cJSON_AddNumberToObject(o, "run", (double)a->run)) ||
		    (!isnan(a->removed.ratio) &&
		     !add_ratio(o, "removed_vs_kept", a->removed.ratio, a->removed.has_ci,
		                a->removed.lo, a->removed.hi)))
			return false;
	}
	return arr != NULL;
}

static bool add_per_size(cJSON *root, const struct summary *s)
{
	cJSON *arr = cJSON_AddArrayToObject(root, "per_size");

	for (size_t i = 0; arr && i < s->nper_size; i++) {
		const struct summary_size_cmp *c = &s->per_size[i];
		cJSON *o = append_object(arr), *ci;

		if (!o || !cJSON_AddNumberToObject(o, "bytes", (double)c->bytes) ||
		    !cJSON_AddStringToObject(o, "role", c->guard ? "guard" : "tuned") ||
		    !add_num(o, "baseline_us", c->baseline_us) || !add_num(o, "best_us", c->best_us) ||
		    !add_num(o, "ratio", c->ratio))
			return false;
		ci = cJSON_AddArrayToObject(o, "ratio_ci95");
		if (!ci || (c->has_ci && (!add_number_item(ci, c->ci_lo) || !add_number_item(ci, c->ci_hi))))
			return false;
	}
	return arr != NULL;
}

static bool add_guards(cJSON *root, const struct summary *s)
{
	cJSON *g = cJSON_AddObjectToObject(root, "guards"), *gs, *arr;

	gs = g ? cJSON_AddArrayToObject(g, "sizes") : NULL;
	for (size_t i = 0; gs && i < s->nguard_sizes; i++)
		if (!add_number_item(gs, (double)s->guard_sizes[i]))
			return false;
	if (!gs || !cJSON_AddStringToObject(g, "verdict", s->guards_verdict))
		return false;
	if (s->nattribution == 0)
		return true;
	arr = cJSON_AddArrayToObject(g, "attribution");
	for (size_t i = 0; arr && i < s->nattribution; i++) {
		const struct summary_attribution *a = &s->attribution[i];
		cJSON *o = append_object(arr);

		if (!o || !add_env(o, "env", &a->env) || !cJSON_AddStringToObject(o, "var", a->var) ||
		    !cJSON_AddStringToObject(o, "value", a->value) ||
		    !cJSON_AddNumberToObject(o, "bytes", (double)a->bytes) ||
		    !cJSON_AddNumberToObject(o, "rounds", (double)a->rounds) ||
		    (!isnan(a->cost.ratio) &&
		     !add_ratio(o, "cost", a->cost.ratio, a->cost.has_ci, a->cost.lo, a->cost.hi)))
			return false;
	}
	return arr != NULL;
}

static cJSON *try_json(const struct summary_try *t)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !add_env(o, "env", &t->m.env) || !cJSON_AddBoolToObject(o, "in_space", t->in_space) ||
	    !cJSON_AddStringToObject(o, "outcome", t->outcome))
		goto fail;
	if (t->m.present &&
	    (!add_objective(o, &t->m) ||
	     (t->has_ratio && !add_ratio(o, "ratio_vs_baseline", t->ratio,
	                                 !isnan(t->ratio_lo) && !isnan(t->ratio_hi), t->ratio_lo,
	                                 t->ratio_hi)) ||
	     (t->has_tuned && !add_ratio(o, "tuned_vs_try", t->tuned,
	                                 !isnan(t->tuned_lo) && !isnan(t->tuned_hi), t->tuned_lo,
	                                 t->tuned_hi))))
		goto fail;
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

/* verdict, budget_needed, ablation, per_size, guards, tries. */
static bool add_final(cJSON *root, const struct summary *s)
{
	cJSON *arr;

	if ((s->verdict && !cJSON_AddStringToObject(root, "verdict", s->verdict)) ||
	    (s->budget_needed >= 0 && !cJSON_AddNumberToObject(root, "budget_needed",
	                                                        (double)s->budget_needed)) ||
	    (s->nablation && !add_ablation(root, s)) || (s->nper_size && !add_per_size(root, s)) ||
	    (s->guards_verdict && !add_guards(root, s)))
		return false;
	if (!s->ntries)
		return true;
	arr = cJSON_AddArrayToObject(root, "tries");
	for (size_t i = 0; arr && i < s->ntries; i++) {
		cJSON *o = try_json(&s->tries[i]);

		if (!o || !cJSON_AddItemToArray(arr, o)) {
			cJSON_Delete(o);
			return false;
		}
	}
	return arr != NULL;
}

cJSON *result_doc(const struct summary *s)
{
	cJSON *root = cJSON_CreateObject();

	if (!root || !add_head(root, s) || !add_item(root, "baseline", measure_json(&s->baseline, NULL)) ||
	    !add_item(root, "best", measure_json(&s->best, s)) || !add_outcome(root, s) ||
	    !add_final(root, s)) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

char *result_text(const struct summary *s)
{
	cJSON *doc = result_doc(s);
	char *text = doc ? cJSON_Print(doc) : NULL;
	char *out = NULL;
	size_t len;

	if (text) {
		len = strlen(text);
		out = malloc(len + 2);
		if (out) {
			memcpy(out, text, len);
			out[len] = '\n';
			out[len + 1] = '\0';
		}
	}
	free(text);
	cJSON_Delete(doc);
	return out;
}

/* ---- building a summary to write ---- */

struct summary *result_new(void)
{
	return summary_create();
}

cJSON *result_keep(struct summary *s, cJSON *part)
{
	if (!s->kept)
		s->kept = cJSON_CreateArray();
	if (part && s->kept && cJSON_AddItemToArray(s->kept, part))
		return part;
	cJSON_Delete(part);
	return NULL;
}

const char *result_keep_string(struct summary *s, const char *str)
{
	cJSON *c = str ? result_keep(s, cJSON_CreateString(str)) : NULL;

	return c ? c->valuestring : NULL;
}

bool result_keep_env(struct summary *s, cJSON *obj, struct summary_env *env)
{
	const cJSON *it;

	if (!result_keep(s, obj))
		return false;
	free(env->v);
	env->n = 0;
	env->v = calloc((size_t)cJSON_GetArraySize(obj) + 1, sizeof *env->v);
	if (!env->v)
		return false;
	cJSON_ArrayForEach(it, obj) {
		env->v[env->n].name = it->string;
		env->v[env->n++].value = cJSON_IsString(it) ? it->valuestring : NULL;
	}
	return true;
}
