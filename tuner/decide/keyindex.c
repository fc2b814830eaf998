/* keyindex.c - fixed-length keys to dense ids (keyindex.h): the keys in one array in id
 * order, a power-of-two table of ids probed linearly, grown at half full. */
#include <stdlib.h>
#include <string.h>

#include "decide/keyindex.h"

struct keyindex {
	size_t words;
	uint32_t *keys;          /* n keys of `words` words, in id order */
	size_t n, keys_cap;
	long *slot;              /* ids; -1: empty */
	size_t nslot;            /* a power of two */
};

/* FNV-1a over the key's words. */
static size_t key_hash(const uint32_t *key, size_t words)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < words; i++) {
		h ^= key[i];
		h *= 1099511628211ull;
	}
	return (size_t)(h ^ (h >> 32));
}

/* The slot of key: where its id is, or the empty slot where it would go. */
static size_t key_slot(const keyindex *ix, const uint32_t *key)
{
	size_t at = key_hash(key, ix->words) & (ix->nslot - 1);

	while (ix->slot[at] >= 0 &&
	       memcmp(&ix->keys[(size_t)ix->slot[at] * ix->words], key,
	              ix->words * sizeof *key) != 0)
		at = (at + 1) & (ix->nslot - 1);
	return at;
}

/* A table of nslot empty slots with every key so far placed in it. False when out of
 * memory (ix unchanged). */
static bool rehash(keyindex *ix, size_t nslot)
{
	long *old = ix->slot;

	ix->slot = malloc(nslot * sizeof *ix->slot);
	if (!ix->slot) {
		ix->slot = old;
		return false;
	}
	ix->nslot = nslot;
	for (size_t i = 0; i < nslot; i++)
		ix->slot[i] = -1;
	for (size_t id = 0; id < ix->n; id++)
		ix->slot[key_slot(ix, &ix->keys[id * ix->words])] = (long)id;
	free(old);
	return true;
}

keyindex *keyindex_create(size_t words, size_t expect)
{
	keyindex *ix = calloc(1, sizeof *ix);
	size_t nslot = 16;

	if (!ix || words == 0)
		goto fail;
	while (nslot < 2 * expect)
		nslot *= 2;
	ix->words = words;
	if (!rehash(ix, nslot))
		goto fail;
	return ix;
fail:
	keyindex_destroy(ix);
	return NULL;
}

long keyindex_put(keyindex *ix, const uint32_t *key, bool *added)
{
	size_t at = key_slot(ix, key);

	*added = false;
	if (ix->slot[at] >= 0)
		return ix->slot[at];
	if (ix->n == ix->keys_cap) {
		size_t cap = ix->keys_cap ? 2 * ix->keys_cap : 16;
		uint32_t *moved = realloc(ix->keys, cap * ix->words * sizeof *moved);

		if (!moved)
			return -1;
		ix->keys = moved;
		ix->keys_cap = cap;
	}
	if (2 * (ix->n + 1) > ix->nslot) {
		if (!rehash(ix, 2 * ix->nslot))
			return -1;
		at = key_slot(ix, key);
	}
	memcpy(&ix->keys[ix->n * ix->words], key, ix->words * sizeof *key);
	ix->slot[at] = (long)ix->n;
	*added = true;
	return (long)ix->n++;
}

void keyindex_destroy(keyindex *ix)
{
	if (!ix)
		return;
	free(ix->keys);
	free(ix->slot);
	free(ix);
}
