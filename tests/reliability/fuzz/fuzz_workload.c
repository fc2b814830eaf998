/* fuzz_workload.c - fuzz target for the workload parser (workload_parse). Properties:
 * a workload that parses renders back (workload_to_json) to an equal workload, and the
 * probe options it produces (workload_probe_args) are accepted by the protocol's own
 * option parser, so the tuner never sends a probe something it must refuse. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "proto.h"
#include "run/workload.h"

static void check_probe_args(const struct workload *w)
{
	char *args[16];
	int n = workload_probe_args(w, false, args, 16);
	struct proto_workload pw;
	char err[256];

	if (n < 0)
		return;   /* out of memory */
	proto_workload_defaults(&pw);
	for (int i = 0; i < n; i++) {
		const char *name = args[i];

		if (strncmp(name, "--", 2) != 0)
			abort();
		if (i + 1 < n && strncmp(args[i + 1], "--", 2) != 0) {
			if (proto_workload_option(&pw, name + 2, args[i + 1], err, sizeof err) != 0)
				abort();
			i++;
		} else if (proto_workload_option(&pw, name + 2, NULL, err, sizeof err) != 0) {
			abort();
		}
	}
	if (pw.nsizes != w->n)
		abort();
	for (size_t i = 0; i < w->n; i++)
		if (pw.bytes[i] != w->e[i].bytes)
			abort();
	for (int i = 0; i < n; i++)
		free(args[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct workload w, back;
	char err[1024];
	cJSON *j;

	if (workload_parse((const char *)data, size, "fuzz.json", &w, err, sizeof err) != 0) {
		if (strncmp(err, "fuzz.json", 9) != 0)
			abort();
		return 0;
	}
	if (w.n == 0 || w.n > WORKLOAD_MAX_ENTRIES)
		abort();
	check_probe_args(&w);
	j = workload_to_json(&w);
	if (!j)
		return 0;
	if (workload_from_json(j, "rendered", &back, err, sizeof err) != 0)
		abort();
	if (back.n != w.n || back.dtype != w.dtype || back.iters != w.iters ||
	    back.warmup != w.warmup)
		abort();
	for (size_t i = 0; i < w.n; i++)
		if (back.e[i].bytes != w.e[i].bytes || back.e[i].count != w.e[i].count)
			abort();
	cJSON_Delete(j);
	return 0;
}
