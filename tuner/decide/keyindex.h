/* keyindex.h - an index of fixed-length keys (arrays of uint32_t): each distinct key
 * gets an id, 0, 1, 2, ... in the order first put, found again in constant expected
 * time (open addressing). What makes the final ranking n log n rather than cubic in the
 * runs: points and their decisions are looked up, not scanned for (issue 31 M9). Not
 * part of the public API. */
#ifndef NCCLTUNE_DECIDE_KEYINDEX_H
#define NCCLTUNE_DECIDE_KEYINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct keyindex keyindex;

/* An empty index of keys of `words` words (1 or more), room for about `expect` keys
 * before it grows. NULL when out of memory. */
keyindex *keyindex_create(size_t words, size_t expect);
/* The id of key (words long): its own when put before, else a new one (*added true).
 * -1 when out of memory (nothing added). */
long keyindex_put(keyindex *ix, const uint32_t *key, bool *added);
/* Free ix; accepts NULL. */
void keyindex_destroy(keyindex *ix);

#endif
