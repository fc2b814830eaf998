/* rule_lookup.c - the plugin's rule lookup per eager collective (issue 31 m6): the
 * table's first-match scan (tuner_table_match) against the per-communicator index
 * (tuner_index_match) that the plugin now uses, MEASURED side by side in one run on this
 * CPU, on tables of 1 and 4096 rules (and any counts given), each rule one exact size as
 * an export writes them, looked up at sizes that match late, early and never. Also the
 * index's build time (once per communicator init). Prints a table; the ratio is
 * scan / index. No timing is asserted anywhere: tests/plugin/test_table_index.c holds
 * the two to the same answers.
 * usage: bench-rule-lookup [--rules N]... [--lookups N] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "table.h"
#include "table_index.h"

#define MAX_LIST 8

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* n all-reduce rules of one size each (8 ranks, any node count), sizes 1024 apart. */
static int make_table(struct tuner_table *t, size_t n)
{
	t->rules = calloc(n, sizeof *t->rules);
	t->nrules = n;
	if (!t->rules)
		return -1;
	for (size_t i = 0; i < n; i++)
		t->rules[i] = (struct tuner_rule){ TUNER_COLL_ALLREDUCE, 8, TUNER_ANY,
		                                   1024 * (i + 1), 1024 * (i + 1), TUNER_ALGO_RING,
		                                   TUNER_PROTO_LL, 0, 0 };
	return 0;
}

int main(int argc, char **argv)
{
	size_t counts[MAX_LIST] = { 1, 4096 }, ncounts = 0;
	long lookups = 2000000;
	volatile long sink = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--rules") == 0 && i + 1 < argc && ncounts < MAX_LIST) {
			long v = atol(argv[++i]);

			if (v < 1 || v > TUNER_TABLE_MAX_RULES) {
				fprintf(stderr, "bench-rule-lookup: --rules %s: 1..%d\n", argv[i],
				        TUNER_TABLE_MAX_RULES);
				return 2;
			}
			counts[ncounts++] = (size_t)v;
		} else if (strcmp(argv[i], "--lookups") == 0 && i + 1 < argc) {
			lookups = atol(argv[++i]);
			if (lookups < 1) {
				fprintf(stderr, "bench-rule-lookup: --lookups %s: at least 1\n", argv[i]);
				return 2;
			}
		} else {
			fprintf(stderr, "usage: bench-rule-lookup [--rules N]... [--lookups N]\n");
			return 2;
		}
	}
	if (ncounts == 0)
		ncounts = 2;
	printf("| rules | lookup at | scan ns/lookup | index ns/lookup | scan / index | index build us |\n");
	printf("| ---: | --- | ---: | ---: | ---: | ---: |\n");
	for (size_t k = 0; k < ncounts; k++) {
		const char *where[3] = { "last rule", "first rule", "no rule" };
		struct tuner_table t;
		struct tuner_index ix;
		double t0, build_us;

		if (make_table(&t, counts[k]) != 0) {
			fprintf(stderr, "bench-rule-lookup: out of memory\n");
			return 1;
		}
		t0 = now_s();
		if (tuner_index_build(&t, 8, 1, &ix) != 0) {
			fprintf(stderr, "bench-rule-lookup: out of memory\n");
			return 1;
		}
		build_us = (now_s() - t0) * 1e6;
		for (int w = 0; w < 3; w++) {
			uint64_t bytes = w == 0 ? 1024 * counts[k] : w == 1 ? 1024 : 1000;
			double scan, index;

			t0 = now_s();
			for (long i = 0; i < lookups; i++)
				sink += tuner_table_match(&t, TUNER_COLL_ALLREDUCE, 8, 1, bytes);
			scan = (now_s() - t0) * 1e9 / (double)lookups;
			t0 = now_s();
			for (long i = 0; i < lookups; i++)
				sink += tuner_index_match(&ix, TUNER_COLL_ALLREDUCE, bytes);
			index = (now_s() - t0) * 1e9 / (double)lookups;
			printf("| %zu | %s | %.1f | %.1f | %.1f | %.1f |\n", counts[k], where[w], scan, index,
			       index > 0 ? scan / index : 0.0, build_us);
		}
		tuner_index_free(&ix);
		tuner_table_free(&t);
	}
	return sink == 42 ? 3 : 0;
}
