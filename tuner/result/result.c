/* result.c - intervals for the final re-measurement and the results.json document. */
#include "result/result.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "nccltune_config.h"

void result_mean_ci(const double *x, size_t n, double *mean, double *lo, double *hi)
{
	double m = 0, ss = 0, half;

	for (size_t i = 0; i < n; i++)
		m += x[i];
	m /= (double)n;
	*mean = m;
	*lo = *hi = NAN;
	if (n < 2)
		return;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - m) * (x[i] - m);
	half = gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * sqrt(ss / (double)(n - 1) / (double)n);
	*lo = m - half;
	*hi = m + half;
}

void result_paired_gain(const double *base, const double *cand, size_t n, double *ratio,
                        double *lo, double *hi)
{
	double *lr = malloc(n * sizeof *lr), m, l, h;

	if (!lr) {
		/* Without scratch space fall back to the ratio of the first round. */
		*ratio = base[0] / cand[0];
		*lo = *hi = NAN;
		return;
	}
	for (size_t i = 0; i < n; i++)
		lr[i] = log(base[i] / cand[i]);
	result_mean_ci(lr, n, &m, &l, &h);
	*ratio = exp(m);
	*lo = isnan(l) ? NAN : exp(l);
	*hi = isnan(h) ? NAN : exp(h);
	free(lr);
}

/* Round to four decimals (of a microsecond, or of a ratio): results stay readable and
 * byte-stable across platforms. */
static double tidy(double v)
{
	return round(v * 1e4) / 1e4;
}

static cJSON *config_json(const struct result_config *c)
{
	cJSON *o = cJSON_CreateObject(), *env;

	if (!o)
		return NULL;
	env = c->env ? cJSON_Duplicate(c->env, true) : cJSON_CreateObject();
	if (!env || !cJSON_AddItemToObject(o, "env", env)) {
		cJSON_Delete(env);
		goto fail;
	}
	if (!cJSON_AddNumberToObject(o, "objective_us", tidy(c->objective_us)))
		goto fail;
	if (!isnan(c->ci_lo) && !isnan(c->ci_hi)) {
		double v[2] = {tidy(fmax(0.0, c->ci_lo)), tidy(c->ci_hi)};
		cJSON *ci = cJSON_CreateDoubleArray(v, 2);

		if (!ci || !cJSON_AddItemToObject(o, "ci95_us", ci)) {
			cJSON_Delete(ci);
			goto fail;
		}
	}
	if (c->repeats > 0 && !cJSON_AddNumberToObject(o, "repeats", c->repeats))
		goto fail;
	if (c->symmetric) {
		cJSON *srv = cJSON_AddObjectToObject(o, "server");

		if (!srv || !cJSON_AddBoolToObject(srv, "symmetric", true))
			goto fail;
	}
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

/* Add a copy of `v` (NULL: JSON null) under key. */
static bool add_copy(cJSON *o, const char *key, const cJSON *v)
{
	cJSON *c = v ? cJSON_Duplicate(v, true) : cJSON_CreateNull();

	if (!c || !cJSON_AddItemToObject(o, key, c)) {
		cJSON_Delete(c);
		return false;
	}
	return true;
}

cJSON *result_build(const struct result_input *in)
{
	cJSON *root = cJSON_CreateObject(), *tool, *item, *arr;

	if (!root)
		return NULL;
	if (!cJSON_AddStringToObject(root, "schema", RESULT_SCHEMA))
		goto fail;
	tool = cJSON_AddObjectToObject(root, "tool");
	if (!tool || !cJSON_AddStringToObject(tool, "name", "nccltune") ||
	    !cJSON_AddStringToObject(tool, "version", NCCLTUNE_VERSION))
		goto fail;
	if (!cJSON_AddStringToObject(root, "created", in->created) ||
	    !add_copy(root, "fingerprint", in->fingerprint) ||
	    !cJSON_AddStringToObject(root, "source", in->source))
		goto fail;
	if (strcmp(in->source, "model") == 0 &&
	    !cJSON_AddStringToObject(root, "model", in->model ? in->model : "unknown"))
		goto fail;
	if (!add_copy(root, "workload", in->workload) ||
	    !cJSON_AddStringToObject(root, "strategy", in->strategy) ||
	    !cJSON_AddNumberToObject(root, "seed", (double)in->seed) ||
	    !cJSON_AddNumberToObject(root, "budget", in->budget) ||
	    !add_copy(root, "pinned", in->pinned) ||
	    (in->server && !add_copy(root, "server", in->server)))
		goto fail;
	item = in->has_baseline ? config_json(&in->baseline) : cJSON_CreateNull();
	if (!item || !cJSON_AddItemToObject(root, "baseline", item)) {
		cJSON_Delete(item);
		goto fail;
	}
	item = in->has_best ? config_json(&in->best) : cJSON_CreateNull();
	if (!item || !cJSON_AddItemToObject(root, "best", item)) {
		cJSON_Delete(item);
		goto fail;
	}
	if (in->has_best && in->nsizes > 0) {
		arr = cJSON_AddArrayToObject(item, "per_size");
		for (size_t i = 0; arr && i < in->nsizes; i++) {
			cJSON *o = cJSON_CreateObject();

			if (!o || !cJSON_AddItemToArray(arr, o)) {
				cJSON_Delete(o);
				goto fail;
			}
			if (!cJSON_AddNumberToObject(o, "bytes", (double)in->sizes[i].bytes) ||
			    !cJSON_AddNumberToObject(o, "us", tidy(in->sizes[i].us)))
				goto fail;
		}
		if (!arr)
			goto fail;
	}
	if (in->has_gain) {
		cJSON *g = cJSON_AddObjectToObject(root, "gain");

		if (!g || !cJSON_AddNumberToObject(g, "ratio", round(in->gain * 1e4) / 1e4))
			goto fail;
		if (!isnan(in->gain_lo) && !isnan(in->gain_hi)) {
			double v[2] = {round(in->gain_lo * 1e4) / 1e4, round(in->gain_hi * 1e4) / 1e4};
			cJSON *ci = cJSON_CreateDoubleArray(v, 2);

			if (!ci || !cJSON_AddItemToObject(g, "ci95", ci)) {
				cJSON_Delete(ci);
				goto fail;
			}
		}
	} else if (!cJSON_AddNullToObject(root, "gain")) {
		goto fail;
	}
	if (in->has_noise) {
		cJSON *nz = cJSON_AddObjectToObject(root, "noise");

		if (!nz || !cJSON_AddNumberToObject(nz, "run_sd", round(in->noise_sd * 1e4) / 1e4) ||
		    !cJSON_AddNumberToObject(nz, "configs", in->noise_configs) ||
		    !cJSON_AddNumberToObject(nz, "dof", in->noise_dof))
			goto fail;
	} else if (!cJSON_AddNullToObject(root, "noise")) {
		goto fail;
	}
	arr = cJSON_AddArrayToObject(root, "top");
	if (!arr)
		goto fail;
	for (size_t i = 0; i < in->ntop; i++) {
		cJSON *o = config_json(&in->top[i]);

		if (!o || !cJSON_AddItemToArray(arr, o)) {
			cJSON_Delete(o);
			goto fail;
		}
	}
	if (!cJSON_AddNumberToObject(root, "evaluations", in->evaluations))
		goto fail;
	if (in->failures ? !add_copy(root, "failures", in->failures)
	                 : !cJSON_AddArrayToObject(root, "failures"))
		goto fail;
	if (in->pruned ? !add_copy(root, "pruned", in->pruned)
	               : !cJSON_AddArrayToObject(root, "pruned"))
		goto fail;
	return root;
fail:
	cJSON_Delete(root);
	return NULL;
}

int result_write(const char *dir, const cJSON *doc, char *err, size_t errlen)
{
	char path[4096];
	char *text;
	size_t len;
	int rc;

	if (snprintf(path, sizeof path, "%s/results.json", dir) >= (int)sizeof path)
		return fs_errf(err, errlen, "%s: path too long", dir);
	text = cJSON_Print(doc);
	if (!text)
		return fs_errf(err, errlen, "%s: out of memory formatting the results", path);
	len = strlen(text);
	/* cJSON_Print's buffer has exactly one spare byte, for the NUL we replace. */
	text[len] = '\n';
	rc = fs_write_atomic(path, text, len + 1, 0644, err, errlen);
	free(text);
	return rc;
}

/* {"ratio": r, "ci95": [lo, hi]} (no interval without one) under key, rounded to 4
 * decimals. */
static bool add_ratio(cJSON *o, const char *key, const struct summary_ratio *x)
{
	cJSON *g = cJSON_AddObjectToObject(o, key);

	if (!g || !cJSON_AddNumberToObject(g, "ratio", round(x->ratio * 1e4) / 1e4))
		return false;
	if (x->has_ci) {
		double v[2] = {round(x->lo * 1e4) / 1e4, round(x->hi * 1e4) / 1e4};
		cJSON *ci = cJSON_CreateDoubleArray(v, 2);

		if (!ci || !cJSON_AddItemToObject(g, "ci95", ci)) {
			cJSON_Delete(ci);
			return false;
		}
	}
	return true;
}

/* A number, or null for NAN. */
static bool add_num(cJSON *o, const char *key, double v)
{
	return isnan(v) ? cJSON_AddNullToObject(o, key) != NULL
	                : cJSON_AddNumberToObject(o, key, v) != NULL;
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

static bool add_env(cJSON *o, const char *key, const struct summary_env *env)
{
	cJSON *e = cJSON_AddObjectToObject(o, key);

	for (size_t i = 0; e && i < env->n; i++)
		if (!cJSON_AddStringToObject(e, env->v[i].name, env->v[i].value))
			return false;
	return e != NULL;
}

static bool add_ablation(cJSON *doc, const struct result_final *f)
{
	cJSON *arr = cJSON_AddArrayToObject(doc, "ablation");

	for (size_t i = 0; arr && i < f->nablation; i++) {
		const struct summary_ablation *a = &f->ablation[i];
		cJSON *o = append_object(arr);

		if (!o || !cJSON_AddStringToObject(o, "var", a->var) ||
		    !cJSON_AddStringToObject(o, "value", a->value) ||
		    !cJSON_AddStringToObject(o, "kind", a->kind) ||
		    !cJSON_AddBoolToObject(o, "dropped", a->dropped) ||
		    !cJSON_AddStringToObject(o, "why", a->why) ||
		    (a->run && !cJSON_AddNumberToObject(o, "run", (double)a->run)) ||
		    (!isnan(a->removed.ratio) && !add_ratio(o, "removed_vs_kept", &a->removed)))
			return false;
	}
	return arr != NULL;
}

static bool add_per_size(cJSON *doc, const struct result_final *f)
{
	cJSON *arr = cJSON_AddArrayToObject(doc, "per_size");

	for (size_t i = 0; arr && i < f->nper_size; i++) {
		const struct summary_size_cmp *c = &f->per_size[i];
		cJSON *o = append_object(arr), *ci;

		if (!o || !cJSON_AddNumberToObject(o, "bytes", (double)c->bytes) ||
		    !cJSON_AddStringToObject(o, "role", c->guard ? "guard" : "tuned") ||
		    !add_num(o, "baseline_us", c->baseline_us) || !add_num(o, "best_us", c->best_us) ||
		    !add_num(o, "ratio", c->ratio))
			return false;
		ci = cJSON_AddArrayToObject(o, "ratio_ci95");
		if (!ci || (c->has_ci && (!cJSON_AddItemToArray(ci, cJSON_CreateNumber(c->ci_lo)) ||
		                          !cJSON_AddItemToArray(ci, cJSON_CreateNumber(c->ci_hi)))))
			return false;
	}
	return arr != NULL;
}

static bool add_guards(cJSON *doc, const struct result_final *f)
{
	cJSON *g = cJSON_AddObjectToObject(doc, "guards"), *gs, *arr;

	gs = g ? cJSON_AddArrayToObject(g, "sizes") : NULL;
	for (size_t i = 0; gs && i < f->nguard_sizes; i++)
		if (!cJSON_AddItemToArray(gs, cJSON_CreateNumber((double)f->guard_sizes[i])))
			return false;
	if (!gs || !cJSON_AddStringToObject(g, "verdict", f->guards_verdict))
		return false;
	if (f->nattribution == 0)
		return true;
	arr = cJSON_AddArrayToObject(g, "attribution");
	for (size_t i = 0; arr && i < f->nattribution; i++) {
		const struct summary_attribution *a = &f->attribution[i];
		cJSON *o = append_object(arr);

		if (!o || !add_env(o, "env", &a->env) || !cJSON_AddStringToObject(o, "var", a->var) ||
		    !cJSON_AddStringToObject(o, "value", a->value) ||
		    !cJSON_AddNumberToObject(o, "bytes", (double)a->bytes) ||
		    !cJSON_AddNumberToObject(o, "rounds", (double)a->rounds) ||
		    (!isnan(a->cost.ratio) && !add_ratio(o, "cost", &a->cost)))
			return false;
	}
	return arr != NULL;
}

bool result_final_add(cJSON *doc, const struct result_final *f)
{
	return (!f->nablation || add_ablation(doc, f)) && (!f->nper_size || add_per_size(doc, f)) &&
	       (!f->guards_verdict || add_guards(doc, f));
}
