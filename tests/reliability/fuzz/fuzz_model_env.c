/* fuzz_model_env.c - fuzz target for the model's reading of NCCL variables
 * (model_env_read, which emulates how NCCL parses them): the input is a list of
 * NAME=VALUE lines, evaluated on the built-in model pcie-gen5-8gpu. Property: whatever
 * the variables say, the evaluation finishes and the report passes the protocol parser
 * (a failure report for what NCCL would reject). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "model.h"
#include "proto.h"

#define MAX_VARS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *line;
	char *envp[MAX_VARS + 1];
	size_t n = 0;
	char err[1024];
	struct model *m = model_load_builtin("pcie-gen5-8gpu", err, sizeof err);
	struct model_env env;
	struct model_eval_result res;
	struct proto_workload w;
	struct proto_report rep, back;
	char *report;

	if (!m) {
		fprintf(stderr, "fuzz_model_env: %s\n", err);
		abort();
	}
	if (!text)
		goto out;
	memcpy(text, data, size);
	text[size] = '\0';
	for (line = text; *line && n < MAX_VARS;) {
		char *nl = strchr(line, '\n');

		if (nl)
			*nl = '\0';
		if (*line)
			envp[n++] = line;
		if (!nl)
			break;
		line = nl + 1;
	}
	envp[n] = NULL;
	proto_workload_defaults(&w);
	w.nsizes = 2;
	w.bytes[1] = 1 << 20;
	w.iters = 10;
	model_env_read(model_getenv_envp, envp, &env);
	model_eval(m, &env, &w, &res);
	if (model_report(m, &res, &w, 0.0, NULL, &rep, err, sizeof err) != 0)
		goto out;
	report = proto_report_format(&rep);
	if (report && proto_report_parse(report, strlen(report), &back, err, sizeof err) != 0) {
		fprintf(stderr, "fuzz_model_env: report breaks the protocol: %s\n%s", err, report);
		abort();
	}
	free(report);
out:
	free(text);
	model_destroy(m);
	return 0;
}
