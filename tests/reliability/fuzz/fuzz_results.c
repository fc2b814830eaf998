/* fuzz_results.c - fuzz target for results loading (summary_parse): results.json is
 * what exports read, and a results file may come from anywhere. Property: nothing
 * that loads carries an environment variable an export would refuse. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ncclvars.h"
#include "result/summary.h"

static void check_env(const struct summary_env *env)
{
	char why[256];

	for (size_t i = 0; i < env->n; i++) {
		if (ncclvars_name_check(env->v[i].name, why, sizeof why) != 0)
			abort();
		if (ncclvars_check(env->v[i].name, env->v[i].value, why, sizeof why) != 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct summary *s = NULL;
	char err[1024], buf[2048];

	if (summary_parse((const char *)data, size, "fuzz.json", &s, err, sizeof err) != 0) {
		if (strncmp(err, "fuzz.json", 9) != 0)
			abort();
		return 0;
	}
	if (s->best.present)
		check_env(&s->best.env);
	summary_describe_machine(&s->fp, buf, sizeof buf);
	summary_describe_workload(&s->workload, buf, sizeof buf);
	summary_describe_gain(s, buf, sizeof buf);
	summary_describe_env(&s->best.env, buf, sizeof buf);
	summary_destroy(s);
	return 0;
}
