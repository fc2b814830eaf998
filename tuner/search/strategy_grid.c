/* strategy_grid.c - exhaustive search in coarse-to-fine order.
 *
 * Each ordinal dimension's levels get a refinement depth: its two ends are depth 0,
 * the middle depth 1, the quarters depth 2, and so on (the level nearest to
 * j * (M - 1) / 2^k for some j, with the smallest such k; categorical levels and
 * "unset" are depth 0). A point's depth is the largest over its dimensions, and the
 * grid visits every point of depth 0 (all categories x the ends of every range),
 * then depth 1, and so on, in mixed-radix order within one depth. A budget that ends
 * early has thus seen the corners and the middle of every range rather than one
 * corner in detail. Spaces too large to order in memory are visited in plain
 * mixed-radix order. Points disallowed, pruned or seen are skipped. */
#include "search/strategy_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Largest space ordered coarse-to-fine (4 bytes per point). */
#define GRID_ORDER_MAX (UINT64_C(1) << 22)
#define GRID_MAX_DEPTH 16

struct grid {
	uint64_t card;
	uint32_t *order;     /* NULL: plain mixed-radix order */
	bool built;
	uint64_t cursor;     /* next position to look at */
};

static int grid_create(strategy *s, char *err, size_t errlen)
{
	struct grid *g = calloc(1, sizeof *g);

	if (!g) {
		snprintf(err, errlen, "out of memory creating strategy grid");
		return -1;
	}
	g->card = space_cardinality(s->sp);
	s->impl = g;
	return 0;
}

static void grid_destroy(strategy *s)
{
	struct grid *g = s->impl;

	if (g)
		free(g->order);
	free(g);
}

/* Depth of the i-th of m ordered levels (see the header comment). */
static unsigned level_depth(size_t i, size_t m)
{
	if (m <= 2 || i == 0 || i == m - 1)
		return 0;
	for (unsigned k = 1; k < GRID_MAX_DEPTH; k++) {
		double spacing = (double)(m - 1) / (double)(1u << k);
		double j = floor((double)i / spacing + 0.5);

		if ((size_t)floor(j * spacing + 0.5) == i)
			return k;
	}
	return GRID_MAX_DEPTH - 1;
}

static int grid_build(strategy *s, struct grid *g, char *err, size_t errlen)
{
	unsigned char *depth[SPACE_MAX_DIMS] = {0};
	unsigned char *pd = NULL;
	uint64_t count[GRID_MAX_DEPTH + 1] = {0};
	struct point p;
	int rc = -1;

	g->built = true;
	if (g->card > GRID_ORDER_MAX)
		return 0;
	g->order = malloc(g->card * sizeof *g->order);
	pd = malloc(g->card);
	if (!g->order || !pd)
		goto oom;
	for (size_t d = 0; d < s->dims; d++) {
		size_t n = space_levels(s->sp, d), m = 0, k = 0;

		depth[d] = calloc(n, 1);
		if (!depth[d])
			goto oom;
		if (space_is_categorical(s->sp, d))
			continue;
		for (size_t l = 0; l < n; l++)
			m += space_level_text(s->sp, d, l) != NULL;
		for (size_t l = 0; l < n; l++) {
			if (space_level_text(s->sp, d, l))
				depth[d][l] = (unsigned char)level_depth(k++, m);
		}
	}
	for (uint64_t i = 0; i < g->card; i++) {
		unsigned char dp = 0;

		space_point_at(s->sp, i, &p);
		for (size_t d = 0; d < s->dims; d++)
			dp = depth[d][p.lv[d]] > dp ? depth[d][p.lv[d]] : dp;
		pd[i] = dp;
		count[dp + 1]++;
	}
	for (int k = 1; k <= GRID_MAX_DEPTH; k++)
		count[k] += count[k - 1];
	for (uint64_t i = 0; i < g->card; i++)
		g->order[count[pd[i]]++] = (uint32_t)i;
	rc = 0;
	goto out;
oom:
	free(g->order);
	g->order = NULL;
	g->built = false;
	snprintf(err, errlen, "out of memory ordering the grid (%llu points)",
	         (unsigned long long)g->card);
out:
	for (size_t d = 0; d < SPACE_MAX_DIMS; d++)
		free(depth[d]);
	free(pd);
	return rc;
}

static bool grid_try(const strategy *s, const struct grid *g, uint64_t pos, struct point *out)
{
	space_point_at(s->sp, g->order ? g->order[pos] : pos, out);
	return strategy_eligible(s, out);
}

static int grid_suggest(strategy *s, struct point *out, char *err, size_t errlen)
{
	struct grid *g = s->impl;

	if (!g->built && grid_build(s, g, err, errlen) < 0)
		return -1;
	/* Points before the cursor were ineligible when passed; a pruning rule removed
	 * by a later success can make one eligible again, hence the second pass. */
	for (uint64_t pos = g->cursor; pos < g->card; pos++) {
		if (grid_try(s, g, pos, out)) {
			g->cursor = pos;   /* asked again before an observation: same point */
			return 0;
		}
	}
	for (uint64_t pos = 0; pos < g->cursor && pos < g->card; pos++) {
		if (grid_try(s, g, pos, out))
			return 0;
	}
	g->cursor = g->card;
	return 1;
}

const struct strategy_ops strategy_grid_ops = {
	.name = "grid",
	.create = grid_create,
	.destroy = grid_destroy,
	.suggest = grid_suggest,
	.observe = NULL,
};
