/* test_model_guards.c - the guard sizes on every built-in model: large messages (1 MiB to
 * 128 MiB, and a prefill chunk of 117,440,512 B) are bandwidth-bound (twice the bytes,
 * about twice the time) with NCCL's own choice Simple at the top, and the process-level
 * variables that can help at 43 KB make them slower as NCCL's model says: a forced LL
 * (at most half of Simple's bandwidth), two channels, a small NCCL_BUFFSIZE, 64 threads
 * where CTAs are the limit, and each model's own 43 KB optimum by more than the guard
 * verdict's 10%. The documented exceptions (models/README.md) are checked as such. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>

#include "../check.h"
#include "model.h"

#define MAXV 12

/* Exact latency of one all-reduce of `bytes` under vars (NULL-ended); -1 on failure. */
static double us_at(const struct model *m, const char *const *vars, size_t bytes,
                    struct model_choice *choice)
{
	struct proto_workload w;
	struct model_env env;
	struct model_eval_result r;

	proto_workload_defaults(&w);
	w.bytes[0] = bytes;
	model_env_read(model_getenv_envp, (void *)(uintptr_t)vars, &env);
	model_eval(m, &env, &w, &r);
	if (choice)
		*choice = r.choice[0];
	return r.ok ? r.us[0] : -1;
}

/* vars of the model file's landscape.best_env, in buf. */
static size_t best_env(const cJSON *root, char buf[MAXV][160], const char *vars[MAXV + 1])
{
	const cJSON *v;
	size_t n = 0;

	cJSON_ArrayForEach(v, cJSON_GetObjectItem(cJSON_GetObjectItem(root, "landscape"), "best_env")) {
		if (n == MAXV)
			break;
		snprintf(buf[n], sizeof buf[n], "%s=%s", v->string, v->valuestring);
		vars[n] = buf[n];
		n++;
	}
	vars[n] = NULL;
	return n;
}

static void check_model(size_t i)
{
	static const size_t sizes[] = { 1048576, 16777216, 117440512, 134217728 };
	static const char *const none[] = { NULL };
	char err[256], buf[MAXV][160];
	const char *best[MAXV + 1];
	size_t len;
	const char *text = model_builtin_text(i, &len);
	cJSON *root = cJSON_ParseWithLength(text, len);
	struct model *m = model_load_builtin(model_builtin_name(i), err, sizeof err);
	const char *name = model_builtin_name(i);
	bool shm = strcmp(name, "pcie-gen5-8gpu") == 0 || strcmp(name, "pcie-2x4-islands") == 0;
	bool two_channel_graph = strcmp(name, "pcie-4gpu-switch") == 0;
	double prev = 0, base, r;
	struct model_choice ch;

	CHECK(root && m);
	if (!root || !m)
		goto out;
	fprintf(stderr, "%s:", name);
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		double t = us_at(m, none, sizes[k], &ch);

		fprintf(stderr, " %zu B %.1f us;", sizes[k], t);
		CHECK(t > 0 && isfinite(t));
		CHECK(t > prev);
		prev = t;
	}
	fprintf(stderr, "\n");
	/* bandwidth-bound: 128 MiB costs about twice 64 MiB, on NCCL's own Simple */
	base = us_at(m, none, 134217728, &ch);
	r = base / us_at(m, none, 67108864, NULL);
	CHECK(r > 1.8 && r < 2.05);
	CHECK_INT(ch.proto, MODEL_PROTO_SIMPLE);
	CHECK_INT(ch.algo, MODEL_ALGO_RING);
	CHECK_INT(ch.channels, ch.comm_channels);

	/* a forced LL: at most half of Simple's bandwidth (NCCL's model: min(llMaxBw, bw/2)) */
	r = us_at(m, (const char *[]){ "NCCL_PROTO=LL", NULL }, 134217728, &ch) / base;
	CHECK(r >= 1.9);
	CHECK_INT(ch.proto, MODEL_PROTO_LL);
	/* two channels; on the 4-GPU switch box NCCL's own graph has two and they fill the
	 * link, so only one channel costs there (models/README.md) */
	r = us_at(m, (const char *[]){ "NCCL_MAX_NCHANNELS=2", NULL }, 134217728, NULL) / base;
	if (two_channel_graph) {
		CHECK_NEAR(r, 1.0, 0.01);
		r = us_at(m, (const char *[]){ "NCCL_MAX_NCHANNELS=1", NULL }, 134217728, NULL) / base;
	}
	CHECK(r >= 1.5);
	/* a small Simple buffer: more steps per slice */
	r = us_at(m, (const char *[]){ "NCCL_BUFFSIZE=65536", NULL }, 134217728, NULL) / base;
	CHECK(r >= 1.03);
	/* 64 threads: slower where a CTA's bandwidth is the limit; free where the host-memory
	 * link is, even with 64 threads per CTA (models/README.md) */
	r = us_at(m, (const char *[]){ "NCCL_NTHREADS=64", NULL }, 134217728, NULL) / base;
	if (shm)
		CHECK_NEAR(r, 1.0, 0.01);
	else
		CHECK(r >= 1.5);
	/* the model's own landscape optimum (43 KB; 192 KB on the 4-GPU box) fails the guard
	 * verdict (> 1.10) at a prefill chunk and at 128 MiB, while it wins where it was found */
	best_env(root, buf, best);
	{
		size_t at = (size_t)cJSON_GetNumberValue(
			cJSON_GetObjectItem(cJSON_GetObjectItem(root, "landscape"), "bytes"));

		CHECK(us_at(m, best, at, NULL) < us_at(m, none, at, NULL));
	}
	CHECK(us_at(m, best, 117440512, NULL) / us_at(m, none, 117440512, NULL) > 1.10);
	CHECK(us_at(m, best, 134217728, NULL) / base > 1.10);
out:
	cJSON_Delete(root);
	model_destroy(m);
}

int main(void)
{
	for (size_t i = 0; i < model_builtin_count(); i++)
		check_model(i);
	return check_status();
}
