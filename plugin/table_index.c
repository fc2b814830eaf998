/* table_index.c - the per-communicator index of a tuner table (table_index.h). A sweep
 * along the byte axis: the boundaries are every rule's min_bytes and max_bytes + 1; at
 * each, the rules starting there join a min-heap of rule indices, expired ones leave it
 * lazily, and the heap's top (the first rule in file order still covering the boundary)
 * names the segment that starts there. */
#include "table_index.h"

#include <stdlib.h>
#include <string.h>

/* A min-heap of rule indices (file order is priority). */
struct heap {
	long *v;
	size_t n;
};

static void heap_push(struct heap *h, long x)
{
	size_t i = h->n++;

	while (i > 0 && h->v[(i - 1) / 2] > x) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = x;
}

static void heap_pop(struct heap *h)
{
	long x = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t k = 2 * i + 1;

		if (k >= h->n)
			break;
		if (k + 1 < h->n && h->v[k + 1] < h->v[k])
			k++;
		if (h->v[k] >= x)
			break;
		h->v[i] = h->v[k];
		i = k;
	}
	if (h->n > 0)
		h->v[i] = x;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A rule where it starts: sorted by min_bytes (ties in any order: the heap orders them). */
struct start {
	uint64_t lo;
	long rule;
};

static int cmp_start(const void *a, const void *b)
{
	return cmp_u64(&((const struct start *)a)->lo, &((const struct start *)b)->lo);
}

/* Whether rule r can match a collective of a communicator of nranks x nnodes. */
static int rule_fits(const struct tuner_rule *r, int coll, size_t nranks, size_t nnodes)
{
	return r->coll == coll && (r->nranks == TUNER_ANY || (size_t)r->nranks == nranks) &&
	       (r->nnodes == TUNER_ANY || (size_t)r->nnodes == nnodes);
}

/* The segments of one collective from its `n` rules `idx` (file order). Returns 0 with
 * *seg (malloc'd, or NULL when n is 0) and *nseg, or -1 out of memory. */
static int build_coll(const struct tuner_table *t, const long *idx, size_t n,
                      struct tuner_segment **seg, size_t *nseg)
{
	uint64_t *cut = NULL;
	struct start *st = NULL;
	struct heap h = { NULL, 0 };
	struct tuner_segment *out = NULL;
	size_t ncut = 0, nout = 0, next = 0;
	int rc = -1;

	*seg = NULL;
	*nseg = 0;
	if (n == 0)
		return 0;
	cut = malloc((2 * n + 1) * sizeof *cut);
	h.v = malloc(n * sizeof *h.v);
	out = malloc((2 * n + 1) * sizeof *out);
	st = malloc(n * sizeof *st);
	if (!cut || !h.v || !out || !st)
		goto out;
	cut[ncut++] = 0;
	for (size_t i = 0; i < n; i++) {
		const struct tuner_rule *r = &t->rules[idx[i]];

		st[i] = (struct start){ r->min_bytes, idx[i] };
		cut[ncut++] = r->min_bytes;
		if (r->max_bytes < UINT64_MAX)   /* max_bytes <= 2^63 - 1: always */
			cut[ncut++] = r->max_bytes + 1;
	}
	qsort(cut, ncut, sizeof *cut, cmp_u64);
	qsort(st, n, sizeof *st, cmp_start);
	for (size_t i = 0; i < ncut; i++) {
		long win;

		if (i > 0 && cut[i] == cut[i - 1])
			continue;
		while (next < n && st[next].lo <= cut[i])
			heap_push(&h, st[next++].rule);
		while (h.n > 0 && t->rules[h.v[0]].max_bytes < cut[i])
			heap_pop(&h);
		win = h.n > 0 ? h.v[0] : -1;
		if (nout == 0 || out[nout - 1].rule != win)
			out[nout++] = (struct tuner_segment){ cut[i], win };
	}
	*seg = out;
	*nseg = nout;
	out = NULL;
	rc = 0;
out:
	free(cut);
	free(st);
	free(h.v);
	free(out);
	return rc;
}

int tuner_index_build(const struct tuner_table *t, size_t nranks, size_t nnodes,
                      struct tuner_index *out)
{
	long *idx = NULL;
	int rc = -1;

	memset(out, 0, sizeof *out);
	if (!t || t->nrules == 0)
		return 0;
	idx = malloc(t->nrules * sizeof *idx);
	if (!idx)
		return -1;
	for (int coll = 0; coll < TUNER_NCOLLS; coll++) {
		size_t n = 0;

		for (size_t i = 0; i < t->nrules; i++)
			if (rule_fits(&t->rules[i], coll, nranks, nnodes))
				idx[n++] = (long)i;
		if (build_coll(t, idx, n, &out->seg[coll], &out->nseg[coll]) != 0)
			goto out;
	}
	rc = 0;
out:
	free(idx);
	if (rc != 0)
		tuner_index_free(out);
	return rc;
}

long tuner_index_match(const struct tuner_index *ix, int coll, uint64_t bytes)
{
	const struct tuner_segment *s;
	size_t lo = 0, hi;

	if (!ix || coll < 0 || coll >= TUNER_NCOLLS || ix->nseg[coll] == 0)
		return -1;
	s = ix->seg[coll];
	hi = ix->nseg[coll];
	/* the last segment whose lo <= bytes; s[0].lo is 0 */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (s[mid].lo <= bytes)
			lo = mid;
		else
			hi = mid;
	}
	return s[lo].rule;
}

void tuner_index_free(struct tuner_index *ix)
{
	if (!ix)
		return;
	for (int coll = 0; coll < TUNER_NCOLLS; coll++) {
		free(ix->seg[coll]);
		ix->seg[coll] = NULL;
		ix->nseg[coll] = 0;
	}
}
