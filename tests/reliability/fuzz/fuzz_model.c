/* fuzz_model.c - fuzz target for machine-model files (model_parse): `--model FILE`
 * loads any file a user names. Property: a model that loads evaluates a few
 * configurations without crashing, and the report the model probe would print for each
 * passes the tuner's strict protocol parser. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "model.h"
#include "proto.h"

static void evaluate(const struct model *m, char **envp)
{
	struct model_env env;
	struct model_eval_result res;
	struct proto_workload w;
	struct proto_report rep, back;
	char err[512], *text;

	proto_workload_defaults(&w);
	w.nsizes = 3;
	w.bytes[1] = 4096;
	w.bytes[2] = 1 << 20;
	w.iters = 20;
	model_env_read(model_getenv_envp, envp, &env);
	model_eval(m, &env, &w, &res);
	if (model_report(m, &res, &w, 0.0, NULL, &rep, err, sizeof err) != 0)
		return;
	text = proto_report_format(&rep);
	if (!text)
		return;
	if (proto_report_parse(text, strlen(text), &back, err, sizeof err) != 0) {
		fprintf(stderr, "fuzz_model: the model's report breaks the protocol: %s\n%s", err, text);
		abort();
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *none[] = {NULL};
	char *tuned[] = {"NCCL_PROTO=LL", "NCCL_ALGO=Ring", "NCCL_MAX_NCHANNELS=2",
	                              "NCCL_BUFFSIZE=131072", "NCCL_NTHREADS=64", NULL};
	char *tree[] = {"NCCL_ALGO=Tree", "NCCL_PROTO=LL128", "NCCL_P2P_LEVEL=SYS", NULL};
	char err[1024];
	struct model *m = model_parse((const char *)data, size, "fuzz.json", err, sizeof err);

	if (!m) {
		if (strstr(err, "fuzz.json") == NULL)
			abort();   /* every message names the file */
		return 0;
	}
	evaluate(m, none);
	evaluate(m, tuned);
	evaluate(m, tree);
	free(model_fingerprint_json(m));
	model_destroy(m);
	return 0;
}
