/* test_model_eval.c - the evaluator (models/eval.c): every built-in model reproduces every
 * figure it claims within the tolerance written next to it (and the numbers the file
 * records about itself are current), NCCL's rules give the right failure stages, and the
 * variables act as NCCL applies them. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "model.h"

#define MAXV 10

/* Evaluate `m` for one size with the variables in `vars` ("NAME=value", NULL-ended). */
static void eval_vars(const struct model *m, const char *const *vars, size_t bytes,
                      enum proto_dtype dtype, struct model_eval_result *res)
{
	char *envp[MAXV + 1];
	struct model_env env;
	struct proto_workload w;
	size_t n = 0;

	for (; vars && vars[n] && n < MAXV; n++)
		envp[n] = (char *)(uintptr_t)vars[n];
	envp[n] = NULL;
	proto_workload_defaults(&w);
	w.bytes[0] = bytes;
	w.dtype = dtype;
	model_env_read(model_getenv_envp, envp, &env);
	model_eval(m, &env, &w, res);
}

static struct model *load(const char *name)
{
	char err[512];
	struct model *m = model_load_builtin(name, err, sizeof err);

	if (!m)
		fprintf(stderr, "cannot load %s: %s\n", name, err);
	return m;
}

/* Every calibration figure of every built-in model. */
static void test_calibration(void)
{
	char err[512];

	for (size_t i = 0; i < model_builtin_count(); i++) {
		size_t len;
		const char *text = model_builtin_text(i, &len);
		cJSON *root = cJSON_ParseWithLength(text, len);
		struct model *m = model_load_builtin(model_builtin_name(i), err, sizeof err);
		const cJSON *cal = cJSON_GetObjectItem(root, "calibration"), *f;
		int nfig = 0;

		CHECK(root && m);
		if (!root || !m)
			goto next;
		cJSON_ArrayForEach(f, cal) {
			const char *vars[MAXV + 1];
			char buf[MAXV][160];
			const cJSON *v, *us = cJSON_GetObjectItem(f, "us");
			const cJSON *stage = cJSON_GetObjectItem(f, "stage");
			const cJSON *dt = cJSON_GetObjectItem(f, "dtype");
			enum proto_dtype dtype = PROTO_DTYPE_BF16;
			struct model_eval_result res;
			size_t n = 0;

			cJSON_ArrayForEach(v, cJSON_GetObjectItem(f, "env")) {
				snprintf(buf[n], sizeof buf[n], "%s=%s", v->string, v->valuestring);
				vars[n] = buf[n];
				n++;
			}
			vars[n] = NULL;
			if (dt)
				proto_dtype_parse(dt->valuestring, &dtype);
			eval_vars(m, vars, (size_t)cJSON_GetNumberValue(cJSON_GetObjectItem(f, "bytes")),
			          dtype, &res);
			nfig++;
			if (us) {
				double tol = cJSON_GetNumberValue(cJSON_GetObjectItem(f, "tolerance"));
				const cJSON *rec = cJSON_GetObjectItem(f, "model_us");

				CHECK(res.ok);
				if (!res.ok)
					continue;
				if (fabs(res.us[0] / us->valuedouble - 1) > tol)
					fprintf(stderr, "  %s: %s\n", model_name(m),
					        cJSON_GetStringValue(cJSON_GetObjectItem(f, "figure")));
				CHECK_NEAR(res.us[0] / us->valuedouble, 1.0, tol);
				/* the file's own record of the fit is current */
				CHECK(rec != NULL);
				if (rec)
					CHECK_NEAR(res.us[0], rec->valuedouble, 0.01 + 0.001 * rec->valuedouble);
			} else if (stage) {
				CHECK(!res.ok);
				CHECK_STR(res.ok ? "ok" : proto_stage_name(res.stage), stage->valuestring);
			} else {
				CHECK(res.ok);   /* "runs": true */
			}
		}
		CHECK(nfig >= 2);
next:
		cJSON_Delete(root);
		model_destroy(m);
	}
}

static void test_failures(void)
{
	struct model *seed = load("pcie-gen5-8gpu"), *h200 = load("nvlink-h200-8gpu");
	struct model_eval_result res;

	CHECK(seed && h200);
	if (!seed || !h200)
		goto out;

	eval_vars(seed, (const char *[]){ "NCCL_ALGO=Foo", NULL }, 43008, PROTO_DTYPE_BF16, &res);
	CHECK(!res.ok);
	CHECK_STR(proto_stage_name(res.stage), "init");
	CHECK_CONTAINS(res.error, "invalid usage");

	eval_vars(seed, (const char *[]){ "NCCL_ALGO=Tree", NULL }, 43008, PROTO_DTYPE_BF16, &res);
	CHECK(!res.ok);
	CHECK_STR(proto_stage_name(res.stage), "capture");

	/* valid names, no usable pair: no fallback, the enqueue (capture) fails */
	for (int k = 0; k < 3; k++) {
		static const char *const algo[] = { "NCCL_ALGO=NVLS", "NCCL_ALGO=PAT", "NCCL_ALGO=CollNetDirect" };

		eval_vars(seed, (const char *[]){ algo[k], NULL }, 43008, PROTO_DTYPE_BF16, &res);
		CHECK(!res.ok);
		CHECK_STR(proto_stage_name(res.stage), "capture");
		CHECK_CONTAINS(res.error, "no algorithm/protocol available for function AllReduce with "
		                          "datatype ncclBfloat16");
	}
	eval_vars(h200, (const char *[]){ "NCCL_NVLS_ENABLE=1", "NCCL_ALGO=NVLS", "NCCL_PROTO=LL", NULL },
	          43008, PROTO_DTYPE_BF16, &res);
	CHECK(!res.ok);
	CHECK_STR(proto_stage_name(res.stage), "capture");
	eval_vars(h200, (const char *[]){ "NCCL_NVLS_ENABLE=1", "NCCL_ALGO=NVLS", NULL }, 43008,
	          PROTO_DTYPE_BF16, &res);
	CHECK(res.ok);
	CHECK_INT(res.choice[0].algo, MODEL_ALGO_NVLS);
	CHECK_INT(res.choice[0].proto, MODEL_PROTO_SIMPLE);
	eval_vars(h200, (const char *[]){ "NCCL_ALGO=NVLS", NULL }, 43008, PROTO_DTYPE_BF16, &res);
	CHECK(!res.ok);   /* the machine leaves NVLS off */

	/* LL128 with a buffer that is not 120 x 2^k: wrong sums (NVLink, where LL128 is legal) */
	eval_vars(h200, (const char *[]){ "NCCL_PROTO=LL128", "NCCL_LL128_BUFFSIZE=131072", NULL },
	          43008, PROTO_DTYPE_BF16, &res);
	CHECK(!res.ok);
	CHECK_STR(proto_stage_name(res.stage), "verify");
	CHECK_CONTAINS(res.error, "wrong sums");
	eval_vars(h200, (const char *[]){ "NCCL_PROTO=LL128", "NCCL_LL128_BUFFSIZE=122880", NULL },
	          43008, PROTO_DTYPE_BF16, &res);
	CHECK(res.ok);
	/* NCCL_BUFFSIZE does not size LL128's buffers */
	eval_vars(h200, (const char *[]){ "NCCL_PROTO=LL128", "NCCL_BUFFSIZE=131072", NULL },
	          43008, PROTO_DTYPE_BF16, &res);
	CHECK(res.ok);
	/* on PCIe, forced LL128 is wrong whatever the buffer (the models' rule) */
	eval_vars(seed, (const char *[]){ "NCCL_PROTO=LL128", "NCCL_ALGO=Ring", NULL }, 43008,
	          PROTO_DTYPE_BF16, &res);
	CHECK(!res.ok);
	CHECK_STR(proto_stage_name(res.stage), "verify");

	/* Simple with NCCL_NTHREADS not dividing NCCL_BUFFSIZE, large enough to loop (#698) */
	eval_vars(h200, (const char *[]){ "NCCL_PROTO=Simple", "NCCL_ALGO=Ring", "NCCL_NTHREADS=480",
	                                  "NCCL_BUFFSIZE=1000000", NULL }, 512u << 20,
	          PROTO_DTYPE_BF16, &res);
	CHECK(!res.ok);
	CHECK_STR(proto_stage_name(res.stage), "verify");
	eval_vars(h200, (const char *[]){ "NCCL_PROTO=Simple", "NCCL_ALGO=Ring", "NCCL_NTHREADS=480",
	                                  "NCCL_BUFFSIZE=1000000", NULL }, 43008,
	          PROTO_DTYPE_BF16, &res);
	CHECK(res.ok);

	eval_vars(seed, (const char *[]){ "NCCL_BUFFSIZE=0", NULL }, 43008, PROTO_DTYPE_BF16, &res);
	CHECK(!res.ok);
	CHECK_STR(proto_stage_name(res.stage), "init");
	eval_vars(seed, NULL, 43007, PROTO_DTYPE_BF16, &res);
	CHECK(!res.ok);
	CHECK_STR(proto_stage_name(res.stage), "args");
	/* the earliest stage wins: a bad token fails init before Tree could fail capture */
	eval_vars(seed, (const char *[]){ "NCCL_ALGO=Tree", "NCCL_PROTO=Fast", NULL }, 43008,
	          PROTO_DTYPE_BF16, &res);
	CHECK_STR(proto_stage_name(res.stage), "init");
out:
	model_destroy(seed);
	model_destroy(h200);
}

static double us_of(const struct model *m, const char *const *vars, size_t bytes,
                    struct model_choice *choice)
{
	struct model_eval_result res;

	eval_vars(m, vars, bytes, PROTO_DTYPE_BF16, &res);
	if (choice)
		*choice = res.choice[0];
	return res.ok ? res.us[0] : -1;
}

static void test_variables(void)
{
	struct model *seed = load("pcie-gen5-8gpu");
	struct model_choice c;
	double def, v;

	CHECK(seed != NULL);
	if (!seed)
		return;
	def = us_of(seed, NULL, 43008, &c);
	CHECK(def > 0);
	/* the seed's defaults: Ring/LL, 16 communicator channels, one CTA, host memory path */
	CHECK_INT(c.algo, MODEL_ALGO_RING);
	CHECK_INT(c.proto, MODEL_PROTO_LL);
	CHECK_INT(c.comm_channels, 16);
	CHECK_INT(c.channels, 1);
	CHECK_INT(c.threads, 512);
	CHECK(c.host_path);
	CHECK(c.nccl_us < def / 4);     /* NCCL's model is far too optimistic on this box */

	/* a bad NCCL_NTHREADS is silently the maximum (512) */
	CHECK_NEAR(us_of(seed, (const char *[]){ "NCCL_NTHREADS=100", NULL }, 43008, NULL), def, 1e-9);
	CHECK_NEAR(us_of(seed, (const char *[]){ "NCCL_NTHREADS=512", NULL }, 43008, NULL), def, 1e-9);
	CHECK_NEAR(us_of(seed, (const char *[]){ "NCCL_NTHREADS=1024", NULL }, 43008, NULL), def, 1e-9);
	/* ... below the minimum it is the minimum (64) */
	CHECK_NEAR(us_of(seed, (const char *[]){ "NCCL_NTHREADS=32", NULL }, 43008, NULL),
	           us_of(seed, (const char *[]){ "NCCL_NTHREADS=64", NULL }, 43008, NULL), 1e-9);
	/* fewer threads: NCCL spreads 43 KB over more CTAs (10 of 16 with 64 threads) */
	us_of(seed, (const char *[]){ "NCCL_NTHREADS=64", NULL }, 43008, &c);
	CHECK_INT(c.channels, 10);
	CHECK_INT(c.threads, 96);   /* NCCL's minimum of three warps */

	/* MIN_NCHANNELS > MAX_NCHANNELS: max first, then duplicated up to min (MIN wins) */
	us_of(seed, (const char *[]){ "NCCL_MIN_NCHANNELS=8", "NCCL_MAX_NCHANNELS=2", NULL }, 43008, &c);
	CHECK_INT(c.comm_channels, 8);
	us_of(seed, (const char *[]){ "NCCL_MAX_NCHANNELS=4", NULL }, 43008, &c);
	CHECK_INT(c.comm_channels, 4);
	/* ... and a 43 KB message still uses one CTA whatever MIN says */
	us_of(seed, (const char *[]){ "NCCL_MIN_NCHANNELS=32", NULL }, 43008, &c);
	CHECK_INT(c.channels, 1);
	CHECK_INT(c.comm_channels, 32);

	/* P2P over PCIe: no host memory, no proxy, far faster; lower-case is ignored */
	v = us_of(seed, (const char *[]){ "NCCL_P2P_LEVEL=SYS", NULL }, 43008, &c);
	CHECK(!c.host_path);
	CHECK(v > 0 && v < def / 3);
	CHECK_NEAR(us_of(seed, (const char *[]){ "NCCL_P2P_LEVEL=sys", NULL }, 43008, NULL), def, 1e-9);
	CHECK(us_of(seed, (const char *[]){ "NCCL_P2P_LEVEL=SYS", "NCCL_P2P_DISABLE=1", NULL }, 43008,
	            NULL) > def * 0.9);
	/* no SHM either: the network transport, slower still */
	CHECK(us_of(seed, (const char *[]){ "NCCL_SHM_DISABLE=1", NULL }, 43008, NULL) > def);
	/* NVLS forced on a box without NVSwitch: NCCL finds no NVLS channel, nothing changes */
	CHECK_NEAR(us_of(seed, (const char *[]){ "NCCL_NVLS_ENABLE=1", NULL }, 43008, NULL), def, 1e-9);
	/* NCCL_BUFFSIZE sizes Simple's buffers only: LL does not notice */
	CHECK_NEAR(us_of(seed, (const char *[]){ "NCCL_BUFFSIZE=65536", NULL }, 43008, NULL), def, 1e-9);
	/* Simple without NCCL_ALGO: NCCL's model picks Tree on one node, which fails here */
	CHECK(us_of(seed, (const char *[]){ "NCCL_PROTO=Simple", NULL }, 43008, NULL) < 0);
	CHECK(us_of(seed, (const char *[]){ "NCCL_PROTO=Simple", "NCCL_ALGO=Ring", NULL }, 43008,
	            NULL) > 0);
	/* the seed's hand config runs, and beats the defaults */
	v = us_of(seed, (const char *[]){ "NCCL_PROTO=LL", "NCCL_ALGO=Ring", "NCCL_P2P_LEVEL=SYS",
	                                  "NCCL_MIN_NCHANNELS=1", "NCCL_MAX_NCHANNELS=2",
	                                  "NCCL_BUFFSIZE=131072", "NCCL_NTHREADS=64", NULL }, 43008, &c);
	CHECK(v > 0 && v < def);
	CHECK_INT(c.channels, 2);

	/* deterministic */
	CHECK(us_of(seed, NULL, 43008, NULL) == def);
	/* the multi-size workload evaluates each size as a single one would */
	{
		struct proto_workload w;
		struct model_env env;
		struct model_eval_result res;

		proto_workload_defaults(&w);
		w.nsizes = 3;
		w.bytes[0] = 4096;
		w.bytes[1] = 43008;
		w.bytes[2] = 65536;
		model_env_read(model_getenv_envp, NULL, &env);
		model_eval(seed, &env, &w, &res);
		CHECK(res.ok);
		CHECK_INT(res.nsizes, 3);
		CHECK_NEAR(res.us[1], def, 1e-9);
		CHECK_NEAR(res.us[0], us_of(seed, NULL, 4096, NULL), 1e-9);
	}
	model_destroy(seed);
}

/* h200-nvlink-2gpu: the measured headline figures (results/nvidia-h200-x2-2026-11-29,
 * per-op = per-step / 122), each with the tolerance the model file states for it. The
 * model's numbers are model figures; these check only that the fit still holds. */
static void test_h200_2gpu(void)
{
	static const char *const nvls0[] = { "NCCL_NVLS_ENABLE=0", NULL };
	static const char *const best[] = { "NCCL_NVLS_ENABLE=0", "NCCL_MIN_NCHANNELS=32",
		"NCCL_MAX_NCHANNELS=32", "NCCL_BUFFSIZE=65536", "NCCL_NTHREADS=128", NULL };
	static const char *const nop2p[] = { "NCCL_NVLS_ENABLE=0", "NCCL_P2P_DISABLE=1", NULL };
	struct model *m = load("h200-nvlink-2gpu");
	struct model_eval_result res, best_res, p2p;

	CHECK(m != NULL);
	if (!m)
		return;
	/* defaults: 887 us per step / 122 = 7.3 us/op, +-10% */
	eval_vars(m, nvls0, 43008, PROTO_DTYPE_BF16, &res);
	CHECK(res.ok);
	CHECK_NEAR(res.us[0], 7.29, 0.10 * 7.29);
	/* tuned best: 775 us per step / 122 = 6.4 us/op, +-10% */
	eval_vars(m, best, 43008, PROTO_DTYPE_BF16, &best_res);
	CHECK(best_res.ok);
	CHECK_NEAR(best_res.us[0], 6.40, 0.10 * 6.40);
	/* P2P disabled (host memory): 1.69 ms per step / 122 = 13.9 us/op, +-10% */
	eval_vars(m, nop2p, 43008, PROTO_DTYPE_BF16, &p2p);
	CHECK(p2p.ok);
	CHECK_NEAR(p2p.us[0], 13.83, 0.10 * 13.83);
	/* the ordering seen on the real box: host memory is much slower than NVLink */
	CHECK(p2p.us[0] > 1.5 * res.us[0]);
	model_destroy(m);
}

int main(void)
{
	test_calibration();
	test_failures();
	test_variables();
	test_h200_2gpu();
	return check_status();
}
