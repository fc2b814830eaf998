/* test_table_index.c - the per-communicator index (plugin/table_index.c) against the
 * table's first-match scan (tuner_table_match), which defines what a rule lookup answers:
 * random tables of 0 to 4096 rules with overlapping, nested and touching byte ranges,
 * '*' and exact rank and node counts, asked at every boundary (and one byte either side)
 * for every communicator shape and collective, including values a table cannot name.
 * Then the hand-made cases whose answer is known: a later, wider rule under an earlier,
 * narrower one; the full byte range; an empty table. */
#include <stdlib.h>

#include "../check.h"
#include "table.h"
#include "table_index.h"

#define MAXB 9223372036854775807ull

/* A seeded generator (xorshift64*): the same tables on every run. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static const uint64_t edges[] = { 0, 1, 2, 100, 4096, 43007, 43008, 43009, 65536, 1048576,
                                  1ull << 40, MAXB - 1, MAXB };
#define NEDGES (sizeof edges / sizeof edges[0])

/* A byte count near the edges (often one of them), or anywhere. */
static uint64_t some_bytes(void)
{
	uint64_t r = rng() % 4;

	if (r == 0)
		return rng() % (MAXB + 1);
	return edges[rng() % NEDGES];
}

static void random_table(struct tuner_table *t, size_t n)
{
	static const int ranks[] = { TUNER_ANY, 2, 4, 8 }, nodes[] = { TUNER_ANY, 1, 2 };

	t->rules = calloc(n ? n : 1, sizeof *t->rules);
	t->nrules = n;
	CHECK(t->rules != NULL);
	for (size_t i = 0; i < n; i++) {
		struct tuner_rule *r = &t->rules[i];
		uint64_t a = some_bytes(), b = some_bytes();

		r->coll = (int)(rng() % TUNER_NCOLLS);
		r->nranks = ranks[rng() % 4];
		r->nnodes = nodes[rng() % 3];
		r->min_bytes = a < b ? a : b;
		r->max_bytes = a < b ? b : a;
		r->algo = TUNER_ANY;
		r->proto = TUNER_ANY;
	}
}

/* Every query of interest: the index answers as the scan does. Returns the mismatches. */
static long compare(const struct tuner_table *t)
{
	static const size_t nranks_v[] = { 1, 2, 4, 8 }, nnodes_v[] = { 1, 2, 3 };
	long bad = 0;

	for (size_t ir = 0; ir < 4; ir++)
		for (size_t in = 0; in < 3; in++) {
			struct tuner_index ix;

			CHECK_INT(tuner_index_build(t, nranks_v[ir], nnodes_v[in], &ix), 0);
			for (int coll = -1; coll <= TUNER_NCOLLS; coll++) {
				for (size_t i = 0; i < t->nrules + NEDGES; i++) {
					uint64_t at[3];

					if (i < t->nrules) {   /* around each rule's bounds */
						at[0] = t->rules[i].min_bytes;
						at[1] = t->rules[i].max_bytes;
						at[2] = t->rules[i].max_bytes + 1;
					} else {
						at[0] = edges[i - t->nrules];
						at[1] = at[0] - 1;   /* 0 - 1: 2^64 - 1, beyond every rule */
						at[2] = some_bytes();
					}
					for (int k = 0; k < 3; k++) {
						long want = tuner_table_match(t, coll, nranks_v[ir], nnodes_v[in], at[k]);
						long got = tuner_index_match(&ix, coll, at[k]);

						if (got != want && bad++ < 5)
							fprintf(stderr, "  %zu rules, %zu ranks, %zu nodes, coll %d, %llu B: "
							        "index %ld, scan %ld\n", t->nrules, nranks_v[ir],
							        nnodes_v[in], coll, (unsigned long long)at[k], got, want);
					}
				}
			}
			tuner_index_free(&ix);
		}
	return bad;
}

static void random_tables(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 5, 8, 20, 64, 300, 4096 };

	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
		for (int round = 0; round < (sizes[s] > 300 ? 1 : 20); round++) {
			struct tuner_table t;

			random_table(&t, sizes[s]);
			CHECK_INT(compare(&t), 0);
			tuner_table_free(&t);
		}
}

static void known(void)
{
	struct tuner_rule rules[] = {
		{ 4, TUNER_ANY, TUNER_ANY, 1000, 2000, 1, 0, 0, 0 },   /* 0: narrow, first */
		{ 4, 8, TUNER_ANY, 0, MAXB, 0, 2, 0, 0 },              /* 1: everything at 8 ranks */
		{ 4, TUNER_ANY, 1, 1500, 5000, 1, 2, 0, 0 },           /* 2: shadowed up to 2000 */
		{ 2, TUNER_ANY, TUNER_ANY, 7, 7, 1, 2, 0, 0 },         /* 3: one size */
	};
	struct tuner_table t = { rules, sizeof rules / sizeof rules[0] };
	struct tuner_index ix;

	CHECK_INT(tuner_index_build(&t, 4, 1, &ix), 0);
	CHECK_INT(tuner_index_match(&ix, 4, 999), -1);
	CHECK_INT(tuner_index_match(&ix, 4, 1000), 0);
	CHECK_INT(tuner_index_match(&ix, 4, 2000), 0);
	CHECK_INT(tuner_index_match(&ix, 4, 2001), 2);
	CHECK_INT(tuner_index_match(&ix, 4, 5000), 2);
	CHECK_INT(tuner_index_match(&ix, 4, 5001), -1);
	CHECK_INT(tuner_index_match(&ix, 2, 7), 3);
	CHECK_INT(tuner_index_match(&ix, 2, 8), -1);
	CHECK_INT(tuner_index_match(&ix, 3, 7), -1);
	CHECK_INT(tuner_index_match(&ix, 5, 7), -1);
	CHECK_INT(tuner_index_match(&ix, -1, 7), -1);
	tuner_index_free(&ix);
	CHECK_INT(tuner_index_build(&t, 8, 2, &ix), 0);   /* rule 2 needs one node */
	CHECK_INT(tuner_index_match(&ix, 4, 999), 1);
	CHECK_INT(tuner_index_match(&ix, 4, 1500), 0);
	CHECK_INT(tuner_index_match(&ix, 4, 3000), 1);
	CHECK_INT(tuner_index_match(&ix, 4, UINT64_MAX), -1);   /* above 2^63 - 1: no rule */
	tuner_index_free(&ix);
	tuner_index_free(&ix);   /* twice, and NULL: nothing */
	tuner_index_free(NULL);
	CHECK_INT(tuner_index_match(NULL, 4, 1), -1);
	t.nrules = 0;
	CHECK_INT(tuner_index_build(&t, 8, 1, &ix), 0);
	CHECK_INT(tuner_index_match(&ix, 4, 1500), -1);
	tuner_index_free(&ix);
}

int main(void)
{
	known();
	random_tables();
	return check_status();
}
