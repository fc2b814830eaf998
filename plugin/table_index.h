/* table_index.h - the rules of a tuner table that can match one communicator, indexed for
 * the plugin's eager path: for each collective, the byte axis cut into disjoint segments,
 * each naming the first rule (in file order) that covers it, so a lookup is one binary
 * search instead of a scan of every rule. Same answer as tuner_table_match for that
 * communicator's nranks and nnodes (tests/plugin/test_table.c holds them equal on random
 * tables). libc only: linked into the plugin and into plugin_table_dep. */
#ifndef NCCLTUNE_PLUGIN_TABLE_INDEX_H
#define NCCLTUNE_PLUGIN_TABLE_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "table.h"

/* One segment: bytes from lo up to the next segment's lo - 1 (the last: to 2^64 - 1). */
struct tuner_segment {
	uint64_t lo;
	long rule;              /* 0-based index into the table's rules, or -1: none */
};

/* Per collective, the segments in ascending lo, the first at 0; NULL/0 when no rule of
 * that collective can match. Borrows nothing from the table. */
struct tuner_index {
	struct tuner_segment *seg[TUNER_NCOLLS];
	size_t nseg[TUNER_NCOLLS];
};

/* Build the index of `t` for a communicator of nranks ranks on nnodes nodes. Returns 0,
 * or -1 (out of memory) with *out empty. O(n log n) in the rules. */
int tuner_index_build(const struct tuner_table *t, size_t nranks, size_t nnodes,
                      struct tuner_index *out);

/* The first rule (0-based) matching collective `coll` of `bytes`, or -1 when none does,
 * coll is out of range or ix is NULL: tuner_table_match(t, coll, nranks, nnodes, bytes)
 * for the table and communicator the index was built from. Can't fail. */
long tuner_index_match(const struct tuner_index *ix, int coll, uint64_t bytes);

/* Free the segments and leave *ix empty. Accepts NULL and an empty index. */
void tuner_index_free(struct tuner_index *ix);

#endif
