/* landscape.c - a built-in machine model as an objective over the search space, for the
 * benchmarks: exact values for scoring, seeded noisy "runs" for the strategies, and the
 * exhaustive optimum. All MODEL numbers. */
#include "landscape.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/env.h"
#include "model.h"

struct landscape {
	struct model *m;
	const space *sp;
	struct workload w;
	struct proto_workload pw;   /* what the session would pass the probe */
	double noise;               /* model_report's noise_scale */
};

/* The probe's workload for w: every size, --ops = the largest count (capped), as
 * workload_probe_args builds it. */
static void probe_workload(const struct workload *w, struct proto_workload *pw)
{
	long ops = 1;

	proto_workload_defaults(pw);
	pw->nsizes = w->n;
	for (size_t i = 0; i < w->n; i++) {
		pw->bytes[i] = w->e[i].bytes;
		if (w->e[i].count > ops)
			ops = w->e[i].count;
	}
	pw->ops = (int)(ops > WORKLOAD_OPS_CAP ? WORKLOAD_OPS_CAP : ops);
	pw->dtype = w->dtype;
	pw->iters = w->iters;
	pw->warmup = w->warmup;
}

struct landscape *landscape_open(const char *name, const space *sp,
                                 const struct workload *w, char *err, size_t errlen)
{
	struct landscape *ls = calloc(1, sizeof *ls);

	if (!ls) {
		snprintf(err, errlen, "model %s: out of memory", name);
		return NULL;
	}
	ls->m = model_load_builtin(name, err, errlen);
	if (!ls->m) {
		free(ls);
		return NULL;
	}
	ls->sp = sp;
	ls->w = *w;
	ls->noise = 1.0;
	probe_workload(w, &ls->pw);
	return ls;
}

void landscape_close(struct landscape *ls)
{
	if (!ls)
		return;
	model_destroy(ls->m);
	free(ls);
}

const char *landscape_name(const struct landscape *ls)
{
	return model_name(ls->m);
}

void landscape_set_noise(struct landscape *ls, double scale)
{
	ls->noise = scale;
}

/* Read p's environment (as the session would build it for the probe, with an empty
 * user environment) into *env. Returns 0 or -1 (out of memory). */
static int read_env(const struct landscape *ls, const struct point *p, struct model_env *env,
                    char *err, size_t errlen)
{
	char *const empty[] = {NULL};
	char **envp = env_build(empty, ls->sp, &(struct env_pins){0}, p, err, errlen);

	if (!envp)
		return -1;
	model_env_read(model_getenv_envp, envp, env);
	env_free(envp);
	return 0;
}

int landscape_exact(const struct landscape *ls, const struct point *p, double *objective_us,
                    enum outcome_class *cls, char *err, size_t errlen)
{
	struct model_env env;
	struct model_eval_result res;
	double sum = 0;

	if (read_env(ls, p, &env, err, errlen) != 0)
		return -1;
	model_eval(ls->m, &env, &ls->pw, &res);
	if (!res.ok) {
		*cls = outcome_class_of_stage(res.stage);
		*objective_us = NAN;
		return 0;
	}
	/* The objective as workload_objective computes it, from exact latencies. */
	for (size_t i = 0; i < ls->w.n; i++) {
		size_t j = 0;

		while (j < res.nsizes && ls->pw.bytes[j] != ls->w.e[i].bytes)
			j++;
		if (j == res.nsizes) {
			snprintf(err, errlen, "model %s: no latency for %zu bytes", model_name(ls->m),
			         ls->w.e[i].bytes);
			return -1;
		}
		sum += (double)ls->w.e[i].count * res.us[j];
	}
	*cls = OUTCOME_OK;
	*objective_us = sum;
	return 1;
}

int landscape_measure(const struct landscape *ls, const struct point *p, unsigned long seed,
                      struct outcome *o, char *err, size_t errlen)
{
	struct model_env env;
	struct model_eval_result res;
	gsl_rng *rng = NULL;
	int rc = -1;

	memset(o, 0, sizeof *o);
	o->objective_us = NAN;
	if (read_env(ls, p, &env, err, errlen) != 0)
		goto out;
	rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (!rng) {
		snprintf(err, errlen, "model %s: out of memory", model_name(ls->m));
		goto out;
	}
	gsl_rng_set(rng, model_noise_seed(ls->m, &env, &ls->pw, seed));
	model_eval(ls->m, &env, &ls->pw, &res);
	if (model_report(ls->m, &res, &ls->pw, ls->noise, rng, &o->report, err, errlen) != 0)
		goto out;
	if (!o->report.ok) {
		o->cls = outcome_class_of_stage(o->report.stage);
		o->exit_status = 1;
		snprintf(o->error, sizeof o->error, "%s", o->report.error);
		rc = 0;
		goto out;
	}
	o->cls = OUTCOME_OK;
	if (workload_objective(&ls->w, &o->report, &o->objective_us, err, errlen) != 0)
		goto out;
	rc = 0;
out:
	gsl_rng_free(rng);
	return rc;
}

int landscape_optimum(const struct landscape *ls, struct landscape_optimum *out,
                      char *err, size_t errlen)
{
	uint64_t n = space_cardinality(ls->sp);
	double *value = NULL;
	struct point p;
	int rc = -1;

	memset(out, 0, sizeof *out);
	out->best_us = INFINITY;
	/* one pass for the values, one for the counts near the optimum */
	value = n < (UINT64_C(1) << 26) ? malloc((size_t)n * sizeof *value) : NULL;
	if (!value) {
		snprintf(err, errlen, "model %s: space of %llu points too large to score",
		         model_name(ls->m), (unsigned long long)n);
		return -1;
	}
	for (uint64_t i = 0; i < n; i++) {
		enum outcome_class cls;
		double y;
		int ok;

		value[i] = NAN;
		space_point_at(ls->sp, i, &p);
		if (!space_allows(ls->sp, &p))
			continue;
		out->allowed++;
		ok = landscape_exact(ls, &p, &y, &cls, err, errlen);
		if (ok < 0)
			goto out;
		if (ok == 0) {
			out->failing++;
			continue;
		}
		value[i] = y;
		if (y < out->best_us) {
			out->best_us = y;
			out->best = p;
		}
	}
	if (!isfinite(out->best_us)) {
		snprintf(err, errlen, "model %s: no configuration of the space works",
		         model_name(ls->m));
		goto out;
	}
	for (uint64_t i = 0; i < n; i++) {
		/* NAN (not allowed, failing) compares false */
		if (value[i] <= 1.01 * out->best_us)
			out->within1++;
		if (value[i] <= 1.02 * out->best_us)
			out->within2++;
		if (value[i] <= 1.05 * out->best_us)
			out->within5++;
	}
	rc = 0;
out:
	free(value);
	return rc;
}

int landscape_random_point(const space *sp, const prune *pr, gsl_rng *rng, struct point *p)
{
	for (int tries = 0; tries < 100000; tries++) {
		memset(p, 0, sizeof *p);
		for (size_t d = 0; d < space_dims(sp); d++)
			p->lv[d] = (uint32_t)gsl_rng_uniform_int(rng, space_levels(sp, d));
		if (space_allows(sp, p) && !prune_rejects(pr, p))
			return 0;
	}
	return -1;
}
