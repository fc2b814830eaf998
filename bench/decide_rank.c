/* decide_rank.c - the final phase's ranking (tuner/decide/final.c) on synthetic run logs
 * of 1,000 to 10,000 search runs (issue 31 M9: it was cubic in the runs, 164 s at 4,000).
 * Each run is a distinct point of a 4-dimension space with an ok outcome and NCCL's
 * decisions known; the time is that of the stage's first answer (decide_next: the
 * candidates ranked, the final rounds planned), measured wall time on this machine.
 * Usage: bench-decide-rank [MAX_RUNS] (default 10000). Prints a Markdown table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decide/decide.h"

static const char *space_text =
	"{\"schema\": \"nccltune-space/1\", \"params\": {"
	"\"NCCL_MIN_NCHANNELS\": {\"int\": [1, 32]},"
	"\"NCCL_MAX_NCHANNELS\": {\"int\": [1, 32]},"
	"\"NCCL_NTHREADS\": {\"values\": [64, 128, 256, 512, null]},"
	"\"NCCL_BUFFSIZE\": {\"values\": [1048576, 2097152, 4194304, 8388608, null]}}}";

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* n search runs after a baseline, point i the i-th of the space in mixed-radix order. */
static void fill(struct session_run *runs, size_t n, const space *sp, const struct workload *wl)
{
	memset(runs, 0, (n + 1) * sizeof *runs);
	for (size_t i = 0; i <= n; i++) {
		struct session_run *r = &runs[i];
		size_t x = i - 1;

		r->phase = i ? PHASE_SEARCH : PHASE_BASELINE;
		r->has_point = i > 0;
		for (size_t d = 0; i && d < space_dims(sp); d++) {
			r->p.lv[d] = (uint32_t)(x % space_levels(sp, d));
			x /= space_levels(sp, d);
		}
		r->o.cls = OUTCOME_OK;
		r->o.objective_us = 1000.0 + (double)((i * 7919) % 10007);
		r->o.report.ok = true;
		r->o.report.nresults = 1;
		r->o.report.results[0].bytes = wl->e[0].bytes;
		r->o.report.results[0].us.median = r->o.objective_us / 122;
		r->o.report.results[0].nccl.known = true;
		r->o.report.results[0].nccl.algo = (int)(i % 2);
		r->o.report.results[0].nccl.proto = (int)(i % 3);
		r->o.report.results[0].nccl.ctas = 1 + (int)(i % 4);
	}
}

int main(int argc, char **argv)
{
	size_t max = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
	size_t sizes[] = {1000, 2000, 4000, 10000};
	struct workload wl;
	struct session_run *runs = NULL;
	space *sp = NULL;
	char err[512];
	int rc = 1;

	workload_default(&wl);
	if (space_parse(space_text, strlen(space_text), "bench", &sp, err, sizeof err) != 0) {
		fprintf(stderr, "bench-decide-rank: %s\n", err);
		goto out;
	}
	runs = malloc((max + 1) * sizeof *runs);
	if (!runs) {
		fprintf(stderr, "bench-decide-rank: out of memory\n");
		goto out;
	}
	printf("| search runs | candidates | ranking s (measured) |\n| --- | --- | --- |\n");
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0] && sizes[k] <= max; k++) {
		struct decide_view v;
		struct decide_request q;
		struct final_state f;
		double t0;

		fill(runs, sizes[k], sp, &wl);
		memset(&v, 0, sizeof v);
		memset(&f, 0, sizeof f);
		v.log.sp = sp;
		v.log.runs = runs;
		v.log.nruns = sizes[k] + 1;
		v.wl = &wl;
		v.budget = (int)sizes[k] + 40;
		t0 = now_s();
		if (decide_next(&f, &v, &q) < 0) {
			fprintf(stderr, "bench-decide-rank: %s\n", f.err);
			goto out;
		}
		printf("| %zu | %zu | %.3f |\n", sizes[k], f.nc, now_s() - t0);
		decide_free(&f);
	}
	rc = 0;
out:
	free(runs);
	space_destroy(sp);
	return rc;
}
