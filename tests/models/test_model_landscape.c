/* test_model_landscape.c - every built-in model's landscape over the whole default search
 * space (docs/formats.md; ~285k configurations, evaluated exhaustively): the default, the
 * optimum and the gain the model file states are what the evaluator gives, the landscape
 * is not flat, and the optimum is not a region that random search hits at once. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "model.h"

struct cfg {
	char buf[6][48];
	char *envp[7];
	int n;
};

static void cfg_add(struct cfg *c, const char *name, const char *value)
{
	if (snprintf(c->buf[c->n], sizeof c->buf[c->n], "%s=%s", name, value) >=
	    (int)sizeof c->buf[c->n])
		return;
	c->envp[c->n] = c->buf[c->n];
	c->envp[++c->n] = NULL;
}

#define NMODELS 5
#define MAXCONF 300000

/* What the walk learns about one model. */
struct walk {
	const struct model *m;
	const cJSON *land;
	struct proto_workload w;
	double best;
	double *all;      /* latency of every configuration that runs */
	long ok;
};

static double eval(const struct walk *k, const struct model_env *env)
{
	struct model_eval_result res;

	model_eval(k->m, env, &k->w, &res);
	return res.ok ? res.us[0] : -1;
}

static double eval_envp(const struct walk *k, char **envp)
{
	struct model_env env;

	model_env_read(model_getenv_envp, envp, &env);
	return eval(k, &env);
}

/* One pass over the default space; each configuration's variables are read once and
 * evaluated on every model. */
static long walk_space(struct walk *k, int nk)
{
	static const char *const protos[] = { "LL", "LL128", "Simple", NULL };
	static const char *const algos[] = { "Ring", "Tree", NULL };
	static const int threads[] = { 64, 128, 256, 512, 0 };
	long n = 0;

	for (int pi = 0; pi < 4; pi++)
	for (int ai = 0; ai < 3; ai++)
	for (int mn = 1; mn <= 32; mn++)
	for (int mx = mn; mx <= 32; mx++)
	for (long bs = 65536; bs <= 16777216; bs *= 2)
	for (int ti = 0; ti < 5; ti++) {
		struct cfg c = { .n = 0 };
		struct model_env env;
		char s[32];

		c.envp[0] = NULL;
		if (protos[pi])
			cfg_add(&c, "NCCL_PROTO", protos[pi]);
		if (ai < 2)
			cfg_add(&c, "NCCL_ALGO", algos[ai]);
		snprintf(s, sizeof s, "%d", mn);
		cfg_add(&c, "NCCL_MIN_NCHANNELS", s);
		snprintf(s, sizeof s, "%d", mx);
		cfg_add(&c, "NCCL_MAX_NCHANNELS", s);
		snprintf(s, sizeof s, "%ld", bs);
		cfg_add(&c, "NCCL_BUFFSIZE", s);
		if (threads[ti]) {
			snprintf(s, sizeof s, "%d", threads[ti]);
			cfg_add(&c, "NCCL_NTHREADS", s);
		}
		model_env_read(model_getenv_envp, c.envp, &env);
		for (int i = 0; i < nk; i++) {
			double us = eval(&k[i], &env);

			if (us <= 0)
				continue;
			if (k[i].ok < MAXCONF)
				k[i].all[k[i].ok++] = us;
			if (us < k[i].best)
				k[i].best = us;
		}
		n++;
	}
	return n;
}

static void check_model(const struct walk *k, long n)
{
	const cJSON *land = k->land, *v;
	double tol = cJSON_GetNumberValue(cJSON_GetObjectItem(land, "tolerance"));
	char *empty[1] = { NULL }, *benv[8], bbuf[8][160];
	double def = eval_envp(k, empty), best = k->best;
	long near = 0;
	size_t nb = 0;

	for (long i = 0; i < k->ok; i++)
		if (k->all[i] <= best * 1.02)
			near++;
	cJSON_ArrayForEach(v, cJSON_GetObjectItem(land, "best_env")) {
		if (nb == 7)
			break;
		snprintf(bbuf[nb], sizeof bbuf[nb], "%s=%s", v->string, v->valuestring);
		benv[nb] = bbuf[nb];
		nb++;
	}
	benv[nb] = NULL;

	fprintf(stderr, "%s at %zu B: %ld configurations, %ld run; default %.2f us, best %.2f us "
	        "(%.2fx); %.1f%% of those that run are within 2%% of the best\n", model_name(k->m),
	        k->w.bytes[0], n, k->ok, def, best, def / best, 100.0 * near / (double)k->ok);
	CHECK_INT(n, 285120);
	CHECK(def > 0);
	CHECK_NEAR(def / cJSON_GetNumberValue(cJSON_GetObjectItem(land, "default_us")), 1, tol);
	CHECK_NEAR(best / cJSON_GetNumberValue(cJSON_GetObjectItem(land, "best_us")), 1, tol);
	CHECK_NEAR(def / best / cJSON_GetNumberValue(cJSON_GetObjectItem(land, "gain")), 1, 2 * tol);
	CHECK_NEAR(eval_envp(k, benv), best, best * 1e-9);
	/* not flat: the best beats NCCL's defaults by a margin */
	CHECK(def / best >= 1.1);
	/* not trivial: only a small part of the space is near the optimum */
	CHECK((double)near / (double)k->ok < 0.2);
}

int main(void)
{
	struct walk k[NMODELS];
	cJSON *roots[NMODELS] = { NULL };
	struct model *models[NMODELS] = { NULL };
	char err[512];
	int nk = 0;
	long n;

	CHECK_INT(model_builtin_count(), NMODELS);
	for (size_t i = 0; i < model_builtin_count() && i < NMODELS; i++) {
		size_t len;
		const char *text = model_builtin_text(i, &len);
		const cJSON *land;

		roots[i] = cJSON_ParseWithLength(text, len);
		models[i] = model_load_builtin(model_builtin_name(i), err, sizeof err);
		land = cJSON_GetObjectItem(roots[i], "landscape");
		CHECK(roots[i] && models[i] && land);
		if (!roots[i] || !models[i] || !land)
			continue;
		memset(&k[nk], 0, sizeof k[nk]);
		k[nk].m = models[i];
		k[nk].land = land;
		k[nk].best = INFINITY;
		proto_workload_defaults(&k[nk].w);
		k[nk].w.bytes[0] = (size_t)cJSON_GetNumberValue(cJSON_GetObjectItem(land, "bytes"));
		proto_dtype_parse(cJSON_GetStringValue(cJSON_GetObjectItem(land, "dtype")), &k[nk].w.dtype);
		k[nk].all = malloc(MAXCONF * sizeof *k[nk].all);
		CHECK(k[nk].all != NULL);
		if (k[nk].all)
			nk++;
	}
	n = walk_space(k, nk);
	for (int i = 0; i < nk; i++) {
		check_model(&k[i], n);
		free(k[i].all);
	}
	CHECK_INT(nk, NMODELS);
	for (int i = 0; i < NMODELS; i++) {
		cJSON_Delete(roots[i]);
		model_destroy(models[i]);
	}
	return check_status();
}
