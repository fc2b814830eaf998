/* explore.c - nccltune-model-explore, a development tool for writing model files: it
 * evaluates every calibration figure of a model (target, model value, relative error) and
 * walks the whole default search space (docs/formats.md) exhaustively to report the
 * default configuration, the best one, the failures and the top configurations. Used by
 * models/fit.py (--json) and to write a model's "landscape" block. Not installed. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "model.h"
#include "proto.h"

#define MAXVARS 8

/* A configuration as NAME=value strings, the shape model_getenv_envp reads. */
struct config {
	char buf[MAXVARS][64];
	char *envp[MAXVARS + 1];
	int n;
};

static void config_clear(struct config *c)
{
	c->n = 0;
	c->envp[0] = NULL;
}

static void config_set(struct config *c, const char *name, const char *value)
{
	if (c->n == MAXVARS)
		return;
	if (snprintf(c->buf[c->n], sizeof c->buf[c->n], "%s=%s", name, value) >=
	    (int)sizeof c->buf[c->n])
		fprintf(stderr, "nccltune-model-explore: %s=%s truncated\n", name, value);
	c->envp[c->n] = c->buf[c->n];
	c->envp[++c->n] = NULL;
}

/* Point envp at this copy's own strings (after a struct copy). */
static void config_fix(struct config *c)
{
	for (int i = 0; i < c->n; i++)
		c->envp[i] = c->buf[i];
	c->envp[c->n] = NULL;
}

static int eval_config(const struct model *m, struct config *c, size_t bytes,
                       enum proto_dtype dtype, struct model_eval_result *res)
{
	struct proto_workload w;
	struct model_env env;

	proto_workload_defaults(&w);
	w.bytes[0] = bytes;
	w.dtype = dtype;
	model_env_read(model_getenv_envp, c->envp, &env);
	model_eval(m, &env, &w, res);
	return res->ok ? 0 : -1;
}

static char *model_text(const char *spec, size_t *len, char *err, size_t errlen)
{
	for (size_t i = 0; i < model_builtin_count(); i++) {
		if (strcmp(spec, model_builtin_name(i)) == 0) {
			const char *t = model_builtin_text(i, len);
			char *copy = malloc(*len + 1);

			if (copy) {
				memcpy(copy, t, *len);
				copy[*len] = '\0';
			}
			return copy;
		}
	}
	return fs_read_file(spec, 1u << 20, len, err, errlen);
}

static void calibration(const struct model *m, const cJSON *root, cJSON *out, bool json)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "calibration");
	size_t i = 0;

	if (!json)
		printf("calibration of %s:\n", model_name(m));
	for (const cJSON *f = arr ? arr->child : NULL; f; f = f->next, i++) {
		const cJSON *env = cJSON_GetObjectItemCaseSensitive(f, "env");
		const cJSON *us = cJSON_GetObjectItemCaseSensitive(f, "us");
		const cJSON *stage = cJSON_GetObjectItemCaseSensitive(f, "stage");
		const cJSON *tol = cJSON_GetObjectItemCaseSensitive(f, "tolerance");
		const cJSON *dt = cJSON_GetObjectItemCaseSensitive(f, "dtype");
		const cJSON *fig = cJSON_GetObjectItemCaseSensitive(f, "figure");
		size_t bytes = (size_t)cJSON_GetObjectItemCaseSensitive(f, "bytes")->valuedouble;
		enum proto_dtype dtype = PROTO_DTYPE_BF16;
		struct model_eval_result res;
		struct config c;
		cJSON *row;

		config_clear(&c);
		for (const cJSON *v = env ? env->child : NULL; v; v = v->next)
			config_set(&c, v->string, v->valuestring);
		if (dt)
			proto_dtype_parse(dt->valuestring, &dtype);
		eval_config(m, &c, bytes, dtype, &res);
		if (json) {
			row = cJSON_CreateObject();
			cJSON_AddItemToArray(out, row);
			cJSON_AddNumberToObject(row, "index", (double)i);
			cJSON_AddBoolToObject(row, "ok", res.ok);
			if (res.ok)
				cJSON_AddNumberToObject(row, "us", res.us[0]);
			else
				cJSON_AddStringToObject(row, "stage", proto_stage_name(res.stage));
			if (us) {
				cJSON_AddNumberToObject(row, "target", us->valuedouble);
				cJSON_AddNumberToObject(row, "rel", res.ok ? res.us[0] / us->valuedouble - 1 : 1e9);
			}
			continue;
		}
		if (us && res.ok) {
			double rel = res.us[0] / us->valuedouble - 1;

			printf("  [%zu] %s\n       target %.1f us +-%.0f%%, model %.2f us (%+.1f%%) %s  "
			       "[%s/%s %dch %dthr]\n", i, fig->valuestring, us->valuedouble,
			       tol->valuedouble * 100, res.us[0], rel * 100,
			       fabs(rel) <= tol->valuedouble ? "ok" : "OUT",
			       model_algo_name(res.choice[0].algo), model_proto_name(res.choice[0].proto),
			       res.choice[0].channels, res.choice[0].threads);
		} else if (us) {
			printf("  [%zu] %s\n       target %.1f us, model fails at %s: %s  OUT\n", i,
			       fig->valuestring, us->valuedouble, proto_stage_name(res.stage), res.error);
		} else if (!stage) {
			printf("  [%zu] %s\n       must run: model %s %s\n", i, fig->valuestring,
			       res.ok ? "runs" : proto_stage_name(res.stage), res.ok ? "ok" : "OUT");
			if (res.ok)
				printf("       (model %.2f us [%s/%s %dch %dthr])\n", res.us[0],
				       model_algo_name(res.choice[0].algo), model_proto_name(res.choice[0].proto),
				       res.choice[0].channels, res.choice[0].threads);
		} else {
			printf("  [%zu] %s\n       expected stage %s, model: %s %s\n", i, fig->valuestring,
			       stage->valuestring, res.ok ? "ok" : proto_stage_name(res.stage),
			       !res.ok && strcmp(proto_stage_name(res.stage), stage->valuestring) == 0
			       ? "ok" : "OUT");
		}
	}
}

/* One entry of the top list. */
struct top {
	double us;
	char desc[160];
	struct config c;
};

/* The default space's algorithms, in its order; protocols are all of NCCL's. */
static const enum model_algo algos[] = { MODEL_ALGO_RING, MODEL_ALGO_TREE };
static const int threads[] = { 64, 128, 256, 512, 0 };

static void describe(const struct config *c, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < c->n && used < len; i++) {
		int k = snprintf(buf + used, len - used, "%s%s", i ? " " : "", c->buf[i] + 5);

		if (k < 0)
			break;
		used += (size_t)k;
	}
}

/* Keep c (of latency us) among the ntop best distinct latencies in top[0..*ntops), in
 * order (equal ones are configurations that differ only in variables that do not matter
 * there). top has room for ntop + 1. */
static void top_keep(struct top *top, int *ntops, int ntop, const struct config *c, double us)
{
	int k;

	for (k = 0; k < *ntops; k++)
		if (fabs(top[k].us - us) < 1e-9)
			return;
	for (k = *ntops; k > 0 && top[k - 1].us > us; k--)
		top[k] = top[k - 1];
	top[k].us = us;
	top[k].c = *c;
	describe(c, top[k].desc, sizeof top[k].desc);
	if (*ntops < ntop)
		(*ntops)++;
}

static void landscape(const struct model *m, size_t bytes, enum proto_dtype dtype, int ntop,
                      const struct config *fixed, cJSON *out, bool json)
{
	struct top *top = calloc((size_t)ntop + 1, sizeof *top);
	struct model_eval_result res;
	struct config c, best_c;
	double def_us, best = INFINITY;
	long count = 0, failed[PROTO_STAGE_VERIFY + 1] = { 0 };
	int ntops = 0;

	if (!top)
		return;
	c = *fixed;
	config_fix(&c);
	eval_config(m, &c, bytes, dtype, &res);
	def_us = res.ok ? res.us[0] : NAN;
	config_clear(&best_c);

	for (int pi = 0; pi < 4; pi++)
	for (int ai = 0; ai < 3; ai++)
	for (int mn = 1; mn <= 32; mn++)
	for (int mx = mn; mx <= 32; mx++)
	for (long bs = 65536; bs <= 16777216; bs *= 2)
	for (int ti = 0; ti < 5; ti++) {
		char v[32];

		c = *fixed;
		config_fix(&c);
		if (pi < MODEL_NPROTOS)
			config_set(&c, "NCCL_PROTO", model_proto_name((enum model_proto)pi));
		if (ai < 2)
			config_set(&c, "NCCL_ALGO", model_algo_name(algos[ai]));
		snprintf(v, sizeof v, "%d", mn);
		config_set(&c, "NCCL_MIN_NCHANNELS", v);
		snprintf(v, sizeof v, "%d", mx);
		config_set(&c, "NCCL_MAX_NCHANNELS", v);
		snprintf(v, sizeof v, "%ld", bs);
		config_set(&c, "NCCL_BUFFSIZE", v);
		if (threads[ti]) {
			snprintf(v, sizeof v, "%d", threads[ti]);
			config_set(&c, "NCCL_NTHREADS", v);
		}
		count++;
		if (eval_config(m, &c, bytes, dtype, &res) != 0) {
			failed[res.stage]++;
			continue;
		}
		if (res.us[0] < best) {
			best = res.us[0];
			best_c = c;
		}
		top_keep(top, &ntops, ntop, &c, res.us[0]);
	}
	config_fix(&best_c);
	for (int k = 0; k < ntops; k++)
		config_fix(&top[k].c);

	if (json) {
		cJSON *env = cJSON_AddObjectToObject(out, "best_env"), *fails, *arr;

		cJSON_AddNumberToObject(out, "count", (double)count);
		cJSON_AddNumberToObject(out, "default_us", def_us);
		cJSON_AddNumberToObject(out, "best_us", best);
		cJSON_AddNumberToObject(out, "gain", def_us / best);
		for (int i = 0; i < best_c.n; i++) {
			char name[64], *eq;

			snprintf(name, sizeof name, "%s", best_c.buf[i]);
			eq = strchr(name, '=');
			if (eq) {
				*eq = '\0';
				cJSON_AddStringToObject(env, name, eq + 1);
			}
		}
		fails = cJSON_AddObjectToObject(out, "failures");
		for (int s = 0; s <= PROTO_STAGE_VERIFY; s++)
			if (failed[s])
				cJSON_AddNumberToObject(fails, proto_stage_name((enum proto_stage)s),
				                        (double)failed[s]);
		arr = cJSON_AddArrayToObject(out, "top");
		for (int k = 0; k < ntops; k++) {
			cJSON *row = cJSON_CreateObject();

			cJSON_AddItemToArray(arr, row);
			cJSON_AddNumberToObject(row, "us", top[k].us);
			cJSON_AddStringToObject(row, "config", top[k].desc);
		}
	} else {
		char desc[160];

		describe(&best_c, desc, sizeof desc);
		printf("landscape of %s at %zu B %s over the default space (%ld configurations):\n",
		       model_name(m), bytes, proto_dtype_name(dtype), count);
		printf("  default (all unset): %.2f us\n  best: %.2f us (gain %.2fx): %s\n", def_us, best,
		       def_us / best, desc);
		for (int s = 0; s <= PROTO_STAGE_VERIFY; s++)
			if (failed[s])
				printf("  failing at %s: %ld\n", proto_stage_name((enum proto_stage)s), failed[s]);
		printf("  top distinct latencies:\n");
		for (int k = 0; k < ntops; k++) {
			eval_config(m, &top[k].c, bytes, dtype, &res);
			printf("    %8.2f us  %-60s [%s/%s %dch %dthr]\n", top[k].us, top[k].desc,
			       model_algo_name(res.choice[0].algo), model_proto_name(res.choice[0].proto),
			       res.choice[0].channels, res.choice[0].threads);
		}
	}
	free(top);
}

int main(int argc, char **argv)
{
	const char *spec = NULL;
	size_t bytes = 43008, len;
	enum proto_dtype dtype = PROTO_DTYPE_BF16;
	int ntop = 12, rc = 1;
	bool json = false, cal_only = false;
	struct config fixed;
	struct model *m = NULL;
	cJSON *root = NULL, *out = NULL;
	char err[512], *text = NULL, *printed;

	config_clear(&fixed);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--fixed") == 0 && i + 1 < argc && strchr(argv[i + 1], '=')) {
			char name[64], *eq;

			snprintf(name, sizeof name, "%s", argv[++i]);
			eq = strchr(name, '=');
			*eq = '\0';
			config_set(&fixed, name, eq + 1);
		} else if (strcmp(argv[i], "--bytes") == 0 && i + 1 < argc)
			bytes = (size_t)strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--dtype") == 0 && i + 1 < argc)
			proto_dtype_parse(argv[++i], &dtype);
		else if (strcmp(argv[i], "--top") == 0 && i + 1 < argc)
			ntop = atoi(argv[++i]);
		else if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (strcmp(argv[i], "--calibration") == 0)
			cal_only = true;
		else if (argv[i][0] != '-' && !spec)
			spec = argv[i];
		else {
			fprintf(stderr, "usage: nccltune-model-explore MODEL [--bytes B] [--dtype D] "
			        "[--top N] [--fixed VAR=VALUE]... [--calibration] [--json]\n");
			return 2;
		}
	}
	if (!spec || ntop < 1 || bytes == 0) {
		fprintf(stderr, "usage: nccltune-model-explore MODEL [--bytes B] [--dtype D] "
		        "[--top N] [--fixed VAR=VALUE]... [--calibration] [--json]\n");
		return 2;
	}
	m = model_load(spec, err, sizeof err);
	text = m ? model_text(spec, &len, err, sizeof err) : NULL;
	root = text ? cJSON_ParseWithLength(text, len) : NULL;
	out = cJSON_CreateObject();
	if (!m || !root || !out) {
		fprintf(stderr, "nccltune-model-explore: %s\n", m ? "cannot read the model text" : err);
		goto done;
	}
	calibration(m, root, cJSON_AddArrayToObject(out, "calibration"), json);
	if (!cal_only)
		landscape(m, bytes, dtype, ntop, &fixed, cJSON_AddObjectToObject(out, "landscape"), json);
	if (json) {
		printed = cJSON_PrintUnformatted(out);
		if (printed)
			printf("%s\n", printed);
		free(printed);
	}
	rc = 0;
done:
	cJSON_Delete(out);
	cJSON_Delete(root);
	free(text);
	model_destroy(m);
	return rc;
}
