/* sweepfile.c - one sweep run's file (nccltune-sweep/1) and the probe's capabilities
 * (sweepfile.h). The file is built with cJSON and read back by common/sweep.c's strict
 * reader in the probe, which checks every value again. */
#include "run/sweepfile.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "proto.h"
#include "run/runner.h"
#include "sweep.h"

/* A word or null into o under key. Returns false when out of memory. */
static bool add_word(cJSON *o, const char *key, const char *v)
{
	return v ? cJSON_AddStringToObject(o, key, v) != NULL : cJSON_AddNullToObject(o, key) != NULL;
}

int sweepfile_text(const struct sweepfile_choice *c, size_t n, int rounds, uint64_t seed,
                   char **text, char *err, size_t errlen)
{
	cJSON *root = cJSON_CreateObject(), *arr;
	int rc = -1;

	*text = NULL;
	if (n < 1 || n > PROTO_MAX_CHOICES || rounds < 1 || rounds > SWEEP_MAX_ROUNDS ||
	    seed > (1ull << 53) - 1) {
		fs_errf(err, errlen, "sweep file: %zu choice(s), %d round(s), seed %llu out of "
		        "range", n, rounds, (unsigned long long)seed);
		goto out;
	}
	if (!root || !cJSON_AddStringToObject(root, "schema", SWEEP_SCHEMA) ||
	    !cJSON_AddNumberToObject(root, "rounds", rounds) ||
	    !cJSON_AddNumberToObject(root, "seed", (double)seed))
		goto oom;
	arr = cJSON_AddArrayToObject(root, "choices");
	if (!arr)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		if (!o || !cJSON_AddItemToArray(arr, o)) {
			cJSON_Delete(o);
			goto oom;
		}
		if (c[i].ctas < 0 || c[i].ctas > SWEEP_MAX_CTAS) {
			fs_errf(err, errlen, "sweep file: choice %zu: %d CTAs out of 0..%d", i,
			        c[i].ctas, SWEEP_MAX_CTAS);
			goto out;
		}
		if (!cJSON_AddNumberToObject(o, "bytes", (double)c[i].bytes) ||
		    !add_word(o, "algo", c[i].algo) || !add_word(o, "proto", c[i].proto) ||
		    !cJSON_AddNumberToObject(o, "ctas", c[i].ctas))
			goto oom;
	}
	*text = cJSON_PrintUnformatted(root);
	if (!*text)
		goto oom;
	rc = 0;
	goto out;
oom:
	fs_errf(err, errlen, "out of memory building a sweep file");
out:
	cJSON_Delete(root);
	return rc;
}

int sweepfile_capabilities(char *const *argv, char *const *envp, double timeout_s,
                           const volatile sig_atomic_t *cancel, struct reaper *reaper,
                           unsigned *caps, bool *cancelled, char *err, size_t errlen)
{
	struct runner_request req;
	struct runner_result res;
	char why[256];
	int rc = 0;

	*caps = 0;
	*cancelled = false;
	memset(&req, 0, sizeof req);
	memset(&res, 0, sizeof res);
	req.argv = argv;
	req.envp = envp;
	req.timeout_s = timeout_s;
	req.stdout_cap = 64 * 1024;
	req.cancel = cancel;
	req.reaper = reaper;
	if (runner_run(&req, &res, err, errlen) != 0)
		return -1;
	*cancelled = res.cancelled;
	/* A probe that does not know the option has none of the extensions. */
	if (res.spawned && !res.cancelled && !res.timed_out && !res.signal &&
	    res.exit_status == 0 && !res.out_truncated &&
	    proto_capabilities_parse(res.out ? res.out : "", res.out_len, caps, why,
	                             sizeof why) != 0)
		*caps = 0;
	runner_result_free(&res);
	return rc;
}
