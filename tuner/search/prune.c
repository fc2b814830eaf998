/* prune.c - failure rules learned from outcomes, asked by every strategy.
 *
 * Rules. A level (NCCL_ALGO=Tree; of an ordinal variable too, where every point is a
 * whole process: NCCL_NTHREADS=512 where every process hangs, in the two-level session's
 * outer pruner) becomes a rule when it never succeeded
 * and failed with the same class at `min_failures` distinct points that it alone
 * explains: every other categorical level of such a point has succeeded somewhere, so
 * NCCL_ALGO=Ring is not blamed for the wrong sums of NCCL_PROTO=LL128 with Ring (an
 * earlier rule that blamed every level of a failing point could prune every algorithm
 * and end a search after ten runs). A failure that only a pair of levels causes
 * (NCCL_PROTO=Simple with NCCL_ALGO unset makes NCCL pick Tree) is blamed on the level
 * of the pair that has not worked elsewhere, if one has not; requiring the failures to
 * span other levels too avoided that but cost bo measurably in bench/ (a later success
 * at the level removes such a rule). A later success at that level disproves the rule.
 * Pair rules. When both levels have worked elsewhere, the pair itself becomes a rule
 * under the same conditions: never succeeded together, failed the same way at
 * `min_failures` distinct points that the pair alone explains (every other categorical
 * level of the point has worked somewhere). On the pcie-gen5-8gpu model a bo session
 * spent 10 of 60 runs on Simple with ALGO unset before this rule existed. A success of
 * the pair disproves it; a rule of either level makes it redundant.
 *
 * Scopes. A rule over per-size choices only (rule.<bytes>.algo=Ring with
 * rule.<bytes>.proto=LL) is scoped by the process-level settings it failed under: a
 * per-size kernel's wrong sums at one thread count say nothing about another thread
 * count, where the same pair may be the optimum. The rule keeps fixed every
 * process-level variable on which all its explained failures agree and is free in the
 * others (failing under NCCL_NTHREADS=256 at two buffer sizes: every buffer size, at 256
 * threads only) - as long as the region never passed within that scope. When it did
 * pass there, the rule falls back to each exact failing setting (min_failures explained
 * failures there, never a pass there). So a rule generalises over a process-level
 * variable only once it failed under two of its levels and never passed. Rules over
 * process-level variables are not scoped.
 *
 * A wrong sum (OUTCOME_VERIFY) bans that exact
 * point for good; its neighbours (one ordinal step, or one categorical swap, or
 * set/unset of one variable) are suspect: runnable, never recommended unchecked. A swap
 * of a per-size algorithm or protocol (rule.<bytes>.algo|proto) is not a neighbour: it
 * is another kernel for that size, checked on its own (a two-level session sweeps every
 * protocol of a size side by side, and one protocol's wrong sums, LL128 over PCIe, would
 * otherwise make every other choice of the size suspect).
 *
 * Which outcomes teach anything: every failure except "spawn" and "args", which say
 * the probe command is broken, not the configuration.
 *
 * Feasibility (the probability that a point runs) is the product of two terms:
 *  - per categorical level, the posterior mean of a Beta(1, 0)-like success rate:
 *    (successes + 1) / (runs + 1), so 1.0 with no evidence, 0.5 after one failure,
 *    0.25 after three;
 *  - a kernel-weighted nearest-failure term over points with the same categorical
 *    levels and the same unset variables: (S + 1) / (S + F + 1), where S and F sum
 *    exp(-d^2 / (2 h^2)) over distinct successful and failed points, d the Euclidean
 *    distance of their ordinal coordinates (each in [0, 1]) and h = 0.15. A point one
 *    buffer-size step (of 9) from a lone failure scores about 0.59; half the range
 *    away, over 0.99. Points across categorical levels are left to the first term. */
#include "search/prune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PRUNE_DEFAULT_MIN_FAILURES 3
#define FEAS_BANDWIDTH 0.15

struct level_stats {
	int runs, ok;
	int fail_runs[OUTCOME_COUNT_];
	int fail_points[OUTCOME_COUNT_];
	bool pruned;
};

struct failed_point {
	struct point p;
	enum outcome_class cls;
};

/* Rules of one region a scoped update may want at once: the generalised one, or one per
 * distinct failing process-level setting (at most the distinct failing points). */
#define PRUNE_MAX_WANT 64

struct prune {
	const space *sp;
	size_t dims;
	int min_failures;
	bool cat[SPACE_MAX_DIMS];                  /* categorical dims */
	bool per_size[SPACE_MAX_DIMS];             /* rule.<bytes>.* dims */
	bool has_process;                          /* some dim is process-level */
	bool has_per_size;                         /* some dim is per-size */
	struct level_stats *lvl[SPACE_MAX_DIMS];   /* every dim */
	/* pairs of categorical dims d < e: levels(d) x levels(e), [l * levels(e) + m] */
	struct level_stats *pairs[SPACE_MAX_DIMS][SPACE_MAX_DIMS];
	struct prune_rule *rules;
	size_t nrules, caprules;
	struct failed_point *fails;                /* distinct (point, class) */
	size_t nfails, capfails;
	struct point *oks;                         /* distinct successful points */
	size_t noks, capoks;
	struct point *banned;                      /* wrong sums */
	size_t nbanned, capbanned;
};

static bool is_null(const space *sp, size_t d, uint32_t l)
{
	return space_level_text(sp, d, l) == NULL;
}

prune *prune_create(const space *sp, int min_failures)
{
	prune *pr = calloc(1, sizeof *pr);

	if (!pr)
		return NULL;
	pr->sp = sp;
	pr->dims = space_dims(sp);
	pr->min_failures = min_failures > 0 ? min_failures : PRUNE_DEFAULT_MIN_FAILURES;
	for (size_t d = 0; d < pr->dims; d++) {
		pr->per_size[d] = space_rule_of(sp, d, NULL) != SPACE_RULE_NONE;
		pr->has_process = pr->has_process || !pr->per_size[d];
		pr->has_per_size = pr->has_per_size || pr->per_size[d];
		pr->lvl[d] = calloc(space_levels(sp, d), sizeof *pr->lvl[d]);
		if (!pr->lvl[d])
			goto oom;
		pr->cat[d] = space_is_categorical(sp, d);
		if (!pr->cat[d])
			continue;
		for (size_t e = d + 1; e < pr->dims; e++) {
			if (!space_is_categorical(sp, e))
				continue;
			pr->pairs[d][e] = calloc(space_levels(sp, d) * space_levels(sp, e),
			                         sizeof *pr->pairs[d][e]);
			if (!pr->pairs[d][e])
				goto oom;
		}
	}
	return pr;
oom:
	prune_destroy(pr);
	return NULL;
}

void prune_destroy(prune *pr)
{
	if (!pr)
		return;
	for (size_t d = 0; d < SPACE_MAX_DIMS; d++) {
		free(pr->lvl[d]);
		for (size_t e = 0; e < SPACE_MAX_DIMS; e++)
			free(pr->pairs[d][e]);
	}
	free(pr->rules);
	free(pr->fails);
	free(pr->oks);
	free(pr->banned);
	free(pr);
}

/* Grow an array to hold one more element; false when out of memory. */
static bool grow(void **arr, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *na;

	if (n < *cap)
		return true;
	ncap = *cap ? *cap * 2 : 16;
	na = realloc(*arr, ncap * size);
	if (!na)
		return false;
	*arr = na;
	*cap = ncap;
	return true;
}

static bool learns_from(enum outcome_class c)
{
	return c != OUTCOME_SPAWN && c != OUTCOME_ARGS && (unsigned)c < OUTCOME_COUNT_;
}

/* The counts of pair (d, l) x (e, m), d < e both categorical. */
static struct level_stats *pair_stats(const prune *pr, size_t d, size_t l, size_t e, size_t m)
{
	return &pr->pairs[d][e][l * space_levels(pr->sp, e) + m];
}

static struct level_stats *rule_stats(const prune *pr, const struct prune_rule *r)
{
	return r->pair ? pair_stats(pr, r->dim, r->level, r->dim2, r->level2)
	               : &pr->lvl[r->dim][r->level];
}

bool prune_rule_matches(const struct prune_rule *r, const struct point *p)
{
	if (p->lv[r->dim] != r->level || (r->pair && p->lv[r->dim2] != r->level2))
		return false;
	for (size_t d = 0; r->scoped && d < SPACE_MAX_DIMS; d++)
		if (r->in_scope[d] && p->lv[d] != r->scope.lv[d])
			return false;
	return true;
}

/* "NCCL_ALGO=Tree: failed at graph capture in 3 of 3 runs; pruned": the rule's class
 * first, then every other way the level failed, most frequent first ("..., computed
 * wrong sums in 2; pruned"), so a level that failed in mixed ways is not described by
 * one of them alone. */
static void rule_text(const prune *pr, struct prune_rule *r)
{
	const struct level_stats *st = rule_stats(pr, r);
	const char *t = space_level_text(pr->sp, r->dim, r->level);
	const char *t2 = r->pair ? space_level_text(pr->sp, r->dim2, r->level2) : NULL;
	char with[128] = "";
	bool done[OUTCOME_COUNT_] = {false};
	size_t off;
	int n;

	if (r->pair && t2)
		snprintf(with, sizeof with, " with %s=%s", space_name(pr->sp, r->dim2), t2);
	else if (r->pair)
		snprintf(with, sizeof with, " with %s unset", space_name(pr->sp, r->dim2));
	n = snprintf(r->text, sizeof r->text, "%s=%s%s: %s in %d of %d runs",
	             space_name(pr->sp, r->dim), t ? t : "(unset)", with,
	             outcome_class_phrase(r->cls), r->failures, r->runs);
	off = n > 0 ? (size_t)n : 0;
	done[r->cls] = true;
	for (;;) {
		int next = -1;

		for (int c = 0; c < OUTCOME_COUNT_; c++) {
			if (!done[c] && st->fail_runs[c] > 0 &&
			    (next < 0 || st->fail_runs[c] > st->fail_runs[next]))
				next = c;
		}
		if (next < 0 || off >= sizeof r->text)
			break;
		done[next] = true;
		n = snprintf(r->text + off, sizeof r->text - off, ", %s in %d",
		             outcome_class_phrase((enum outcome_class)next), st->fail_runs[next]);
		off += n > 0 ? (size_t)n : 0;
	}
	if (off < sizeof r->text)
		snprintf(r->text + off, sizeof r->text - off, "; pruned");
}

/* "rule.43008.algo=Ring with rule.43008.proto=LL under NCCL_NTHREADS=256: computed wrong
 * sums at 6 of 6 points; pruned there": a scoped rule counts the distinct points of its
 * scope (the level counts are over every scope). */
static void scoped_rule_text(const prune *pr, struct prune_rule *r, int failures, int points)
{
	const char *t = space_level_text(pr->sp, r->dim, r->level);
	const char *t2 = r->pair ? space_level_text(pr->sp, r->dim2, r->level2) : NULL;
	char with[128] = "", under[192] = "";
	size_t off = 0;

	if (r->pair)
		snprintf(with, sizeof with, " with %s%s%s", space_name(pr->sp, r->dim2),
		         t2 ? "=" : " unset", t2 ? t2 : "");
	for (size_t d = 0; d < pr->dims && off < sizeof under; d++) {
		const char *v = space_level_text(pr->sp, d, r->scope.lv[d]);
		int n;

		if (!r->in_scope[d])
			continue;
		n = snprintf(under + off, sizeof under - off, "%s%s%s%s", off ? ", " : "",
		             space_name(pr->sp, d), v ? "=" : " unset", v ? v : "");
		off += n > 0 ? (size_t)n : 0;
	}
	r->failures = failures;
	r->runs = points;
	snprintf(r->text, sizeof r->text, "%s=%s%s under %s: %s at %d of %d points; pruned there",
	         space_name(pr->sp, r->dim), t ? t : "(unset)", with, under,
	         outcome_class_phrase(r->cls), failures, points);
}

/* A rule's region: its level, or its pair of levels (dim, level, pair, dim2, level2 of
 * `key`; the other fields are ignored). */
static bool same_region(const struct prune_rule *a, const struct prune_rule *key)
{
	return a->dim == key->dim && a->level == key->level && a->pair == key->pair &&
	       (!key->pair || (a->dim2 == key->dim2 && a->level2 == key->level2));
}

/* The same region and the same scope (an unscoped key finds the unscoped rule). */
static bool same_rule(const struct prune_rule *a, const struct prune_rule *key)
{
	if (!same_region(a, key) || a->scoped != key->scoped)
		return false;
	for (size_t d = 0; key->scoped && d < SPACE_MAX_DIMS; d++)
		if (a->in_scope[d] != key->in_scope[d] ||
		    (key->in_scope[d] && a->scope.lv[d] != key->scope.lv[d]))
			return false;
	return true;
}

static struct prune_rule *rule_find(prune *pr, const struct prune_rule *key)
{
	for (size_t i = 0; i < pr->nrules; i++) {
		if (same_rule(&pr->rules[i], key))
			return &pr->rules[i];
	}
	return NULL;
}

static void rule_remove_at(prune *pr, size_t i)
{
	if (!pr->rules[i].scoped)
		rule_stats(pr, &pr->rules[i])->pruned = false;
	memmove(&pr->rules[i], &pr->rules[i + 1], (pr->nrules - i - 1) * sizeof *pr->rules);
	pr->nrules--;
}

static void rule_remove(prune *pr, const struct prune_rule *key)
{
	struct prune_rule *r = rule_find(pr, key);

	if (r)
		rule_remove_at(pr, (size_t)(r - pr->rules));
}

/* Is f's failure, of class cls in the region of key (within its scope), explained by
 * the region alone: has every other categorical level of the point succeeded somewhere? */
static bool explained(const prune *pr, const struct prune_rule *key, const struct failed_point *f,
                      enum outcome_class cls)
{
	bool alone = f->cls == cls && prune_rule_matches(key, &f->p);

	for (size_t d = 0; d < pr->dims && alone; d++)
		alone = d == key->dim || (key->pair && d == key->dim2) || !pr->cat[d] ||
		        pr->lvl[d][f->p.lv[d]].ok > 0;
	return alone;
}

/* Distinct failing points of class `cls` in the region of `key` (within its scope) that
 * the region alone explains. */
static int explained_failures(const prune *pr, const struct prune_rule *key,
                              enum outcome_class cls)
{
	int n = 0;

	for (size_t i = 0; i < pr->nfails; i++)
		n += explained(pr, key, &pr->fails[i], cls);
	return n;
}

/* Drop the rule of the region of `key` (drop), or create or refresh it: a new rule takes
 * the class with the most distinct explained failures, at least min_failures. */
static void region_update(prune *pr, const struct prune_rule *key, bool drop)
{
	struct level_stats *st = rule_stats(pr, key);
	struct prune_rule *r;

	if (drop) {
		rule_remove(pr, key);
		return;
	}
	r = rule_find(pr, key);
	if (!r) {
		int cls = -1, best = 0;

		for (int c = 0; c < OUTCOME_COUNT_; c++) {
			int n = st->fail_points[c] >= pr->min_failures
			        ? explained_failures(pr, key, (enum outcome_class)c) : 0;

			if (n >= pr->min_failures && n > best) {
				best = n;
				cls = c;
			}
		}
		if (cls < 0 || !grow((void **)&pr->rules, &pr->caprules, pr->nrules, sizeof *r))
			return;
		r = &pr->rules[pr->nrules++];
		*r = *key;
		r->cls = (enum outcome_class)cls;
		st->pruned = true;
	}
	r->failures = st->fail_runs[r->cls];
	r->runs = st->runs;
	rule_text(pr, r);
}

/* Did any point of r's region pass within r's scope? */
static bool passed_within(const prune *pr, const struct prune_rule *r)
{
	for (size_t i = 0; i < pr->noks; i++)
		if (prune_rule_matches(r, &pr->oks[i]))
			return true;
	return false;
}

/* Distinct points of r's region seen within its scope, failed or passed. */
static int points_within(const prune *pr, const struct prune_rule *r)
{
	int n = 0;

	for (size_t i = 0; i < pr->nfails; i++) {
		bool dup = false;

		if (!prune_rule_matches(r, &pr->fails[i].p))
			continue;
		for (size_t j = 0; j < i && !dup; j++)   /* one point that failed two ways */
			dup = prune_rule_matches(r, &pr->fails[j].p) &&
			      point_equal(&pr->fails[j].p, &pr->fails[i].p, pr->dims);
		n += !dup;
	}
	for (size_t i = 0; i < pr->noks; i++)
		n += prune_rule_matches(r, &pr->oks[i]);
	return n;
}

/* The rules a region over per-size dims wants now (see "Scopes" above): the class with
 * the most explained failures (at least min_failures); the process-level variables on
 * which they all agree fixed, unless the region passed there; else one rule per exact
 * failing setting that never passed. Returns how many it wrote to want. */
static size_t scoped_rules(const prune *pr, const struct prune_rule *key,
                           struct prune_rule *want, size_t cap)
{
	const struct level_stats *st = rule_stats(pr, key);
	struct prune_rule g = *key;
	int cls = -1, best = 0;
	bool first = true;
	size_t n = 0;

	for (int c = 0; c < OUTCOME_COUNT_; c++) {
		int k = st->fail_points[c] >= pr->min_failures
		        ? explained_failures(pr, key, (enum outcome_class)c) : 0;

		if (k >= pr->min_failures && k > best) {
			best = k;
			cls = c;
		}
	}
	if (cls < 0)
		return 0;
	g.cls = (enum outcome_class)cls;
	for (size_t i = 0; i < pr->nfails; i++) {
		if (!explained(pr, key, &pr->fails[i], g.cls))
			continue;
		for (size_t d = 0; d < pr->dims; d++) {
			if (pr->per_size[d])
				continue;
			if (first)
				g.scope.lv[d] = pr->fails[i].p.lv[d];
			g.in_scope[d] = first || (g.in_scope[d] && g.scope.lv[d] == pr->fails[i].p.lv[d]);
		}
		first = false;
	}
	for (size_t d = 0; d < pr->dims; d++)
		g.scoped = g.scoped || g.in_scope[d];
	if (!passed_within(pr, &g)) {
		want[0] = g;
		return 1;
	}
	for (size_t i = 0; i < pr->nfails && n < cap; i++) {
		struct prune_rule r = *key;
		bool dup = false;

		if (!explained(pr, key, &pr->fails[i], g.cls))
			continue;
		r.cls = g.cls;
		r.scoped = true;
		for (size_t d = 0; d < pr->dims; d++) {
			r.in_scope[d] = !pr->per_size[d];
			r.scope.lv[d] = r.in_scope[d] ? pr->fails[i].p.lv[d] : 0;
		}
		for (size_t j = 0; j < n && !dup; j++)
			dup = same_rule(&want[j], &r);
		if (!dup && explained_failures(pr, &r, r.cls) >= pr->min_failures &&
		    !passed_within(pr, &r))
			want[n++] = r;
	}
	return n;
}

/* A region over per-size dims: keep exactly the rules scoped_rules wants (none when
 * drop), in the order they were learned, their texts refreshed. */
static void scoped_update(prune *pr, const struct prune_rule *key, bool drop)
{
	struct prune_rule want[PRUNE_MAX_WANT];
	size_t nwant = drop ? 0 : scoped_rules(pr, key, want, PRUNE_MAX_WANT);

	for (size_t i = pr->nrules; i-- > 0;) {
		bool keep = false;

		if (!same_region(&pr->rules[i], key))
			continue;
		for (size_t j = 0; j < nwant && !keep; j++)
			keep = same_rule(&pr->rules[i], &want[j]);
		if (!keep)
			rule_remove_at(pr, i);
	}
	for (size_t j = 0; j < nwant; j++) {
		struct prune_rule *r = rule_find(pr, &want[j]);

		if (!r) {
			if (!grow((void **)&pr->rules, &pr->caprules, pr->nrules, sizeof *r))
				return;
			r = &pr->rules[pr->nrules++];
			*r = want[j];
		}
		if (r->scoped) {
			scoped_rule_text(pr, r, explained_failures(pr, r, r->cls), points_within(pr, r));
		} else {
			rule_stats(pr, r)->pruned = true;
			r->failures = rule_stats(pr, r)->fail_runs[r->cls];
			r->runs = rule_stats(pr, r)->runs;
			rule_text(pr, r);
		}
	}
}

/* Is key's region over per-size dims only, in a space with process-level dims? */
static bool scopable(const prune *pr, const struct prune_rule *key)
{
	return pr->has_process && pr->per_size[key->dim] && (!key->pair || pr->per_size[key->dim2]);
}

/* Level (d, l): a rule while it never succeeded (within its scope, when scoped). An
 * ordinal level only where every point is a whole process (no per-size dims: the
 * two-level session's outer pruner, a global space): there a sweep's many choices of one
 * process would count as many failing points, and a CTA count is one more kernel choice
 * of a size, swept beside the others. */
static void level_update(prune *pr, size_t d, size_t l)
{
	struct prune_rule key = {.dim = d, .level = l};

	if (!pr->cat[d] && pr->has_per_size)
		region_update(pr, &key, true);
	else if (scopable(pr, &key))
		scoped_update(pr, &key, false);
	else
		region_update(pr, &key, pr->lvl[d][l].ok > 0);
}

/* Pair (d, l) x (e, m): a rule while the pair never succeeded but each level did, and
 * neither level has a rule of its own (which covers the pair). */
static void pair_update(prune *pr, size_t d, size_t l, size_t e, size_t m)
{
	struct prune_rule key = {.dim = d, .level = l, .pair = true, .dim2 = e, .level2 = m};
	const struct level_stats *a = &pr->lvl[d][l], *b = &pr->lvl[e][m];
	bool defer = a->ok == 0 || b->ok == 0 || a->pruned || b->pruned;

	if (scopable(pr, &key))
		scoped_update(pr, &key, defer);
	else
		region_update(pr, &key, pair_stats(pr, d, l, e, m)->ok > 0 || defer);
}

static bool has_point(const struct point *arr, size_t n, const struct point *p, size_t dims)
{
	for (size_t i = 0; i < n; i++) {
		if (point_equal(&arr[i], p, dims))
			return true;
	}
	return false;
}

/* Count one run of class c at a level or pair (new_fail: a new distinct failing point). */
static void stats_count(struct level_stats *st, enum outcome_class c, bool new_fail)
{
	st->runs++;
	if (c == OUTCOME_OK) {
		st->ok++;
	} else {
		st->fail_runs[c]++;
		st->fail_points[c] += new_fail;
	}
}

void prune_observe(prune *pr, const struct point *p, const struct outcome *o)
{
	enum outcome_class c = o->cls;
	bool new_fail = false;

	if (!learns_from(c) || !space_allows(pr->sp, p))
		return;
	if (c == OUTCOME_OK) {
		if (!has_point(pr->oks, pr->noks, p, pr->dims) &&
		    grow((void **)&pr->oks, &pr->capoks, pr->noks, sizeof *pr->oks))
			pr->oks[pr->noks++] = *p;
	} else {
		new_fail = true;
		for (size_t i = 0; i < pr->nfails && new_fail; i++)
			new_fail = !(pr->fails[i].cls == c && point_equal(&pr->fails[i].p, p, pr->dims));
		if (new_fail && grow((void **)&pr->fails, &pr->capfails, pr->nfails, sizeof *pr->fails))
			pr->fails[pr->nfails++] = (struct failed_point){*p, c};
		if (c == OUTCOME_VERIFY && !has_point(pr->banned, pr->nbanned, p, pr->dims) &&
		    grow((void **)&pr->banned, &pr->capbanned, pr->nbanned, sizeof *pr->banned))
			pr->banned[pr->nbanned++] = *p;
	}
	for (size_t d = 0; d < pr->dims; d++) {
		if (!pr->lvl[d])
			continue;
		stats_count(&pr->lvl[d][p->lv[d]], c, new_fail);
		for (size_t e = d + 1; e < pr->dims; e++) {
			if (pr->pairs[d][e])
				stats_count(pair_stats(pr, d, p->lv[d], e, p->lv[e]), c, new_fail);
		}
	}
	/* A success anywhere can make earlier failures of another level explicable by
	 * that level alone, so every categorical level is looked at again. */
	for (size_t d = 0; d < pr->dims; d++) {
		if (!pr->lvl[d])
			continue;
		for (size_t l = 0; l < space_levels(pr->sp, d); l++)
			if (pr->lvl[d][l].runs > 0)
				level_update(pr, d, l);
	}
	/* then the pairs, which defer to the levels' rules */
	for (size_t d = 0; d < pr->dims; d++) {
		for (size_t e = d + 1; e < pr->dims; e++) {
			if (!pr->pairs[d][e])
				continue;
			for (size_t l = 0; l < space_levels(pr->sp, d); l++)
				for (size_t m = 0; m < space_levels(pr->sp, e); m++)
					if (pair_stats(pr, d, l, e, m)->runs > 0)
						pair_update(pr, d, l, e, m);
		}
	}
}

bool prune_rejects(const prune *pr, const struct point *p)
{
	for (size_t d = 0; d < pr->dims; d++) {
		if (pr->lvl[d] && p->lv[d] < space_levels(pr->sp, d) && pr->lvl[d][p->lv[d]].pruned)
			return true;
	}
	for (size_t i = 0; i < pr->nrules; i++) {
		if ((pr->rules[i].pair || pr->rules[i].scoped) && prune_rule_matches(&pr->rules[i], p))
			return true;
	}
	return has_point(pr->banned, pr->nbanned, p, pr->dims);
}

/* Are a and b the same or one step apart (see the header comment)? */
static bool near_point(const space *sp, const struct point *a, const struct point *b,
                       size_t dims)
{
	size_t diff = 0;

	for (size_t d = 0; d < dims; d++) {
		uint32_t x = a->lv[d], y = b->lv[d];

		if (x == y)
			continue;
		if (++diff > 1)
			return false;
		/* another algorithm or protocol for one size is another kernel, whose sums
		 * its own check verified (a sweep checks every choice): not a neighbour */
		if (space_is_categorical(sp, d) && space_rule_of(sp, d, NULL) != SPACE_RULE_NONE)
			return false;
		if (space_is_categorical(sp, d) || is_null(sp, d, x) || is_null(sp, d, y))
			continue;
		if ((x > y ? x - y : y - x) != 1)
			return false;
	}
	return true;
}

bool prune_suspect(const prune *pr, const struct point *p)
{
	for (size_t i = 0; i < pr->nbanned; i++) {
		if (near_point(pr->sp, p, &pr->banned[i], pr->dims))
			return true;
	}
	return false;
}

/* exp(-d^2 / 2h^2) between points with the same categorical levels and unset
 * variables; 0 across them. */
static double local_kernel(const space *sp, const struct point *a, const struct point *b,
                           size_t dims)
{
	double d2 = 0;

	for (size_t d = 0; d < dims; d++) {
		double x, y;

		if (space_is_categorical(sp, d)) {
			if (a->lv[d] != b->lv[d])
				return 0;
			continue;
		}
		x = space_coord(sp, d, a->lv[d]);
		y = space_coord(sp, d, b->lv[d]);
		if ((x < 0) != (y < 0))
			return 0;
		if (x >= 0)
			d2 += (x - y) * (x - y);
	}
	return exp(-d2 / (2 * FEAS_BANDWIDTH * FEAS_BANDWIDTH));
}

double prune_feasibility(const prune *pr, const struct point *p)
{
	double f = 1.0, s = 0, fl = 0;

	if (pr->nfails == 0)
		return 1.0;
	if (prune_rejects(pr, p))
		return 0.0;
	for (size_t d = 0; d < pr->dims; d++) {
		const struct level_stats *st;

		if (!pr->cat[d])   /* ordinal levels: the local term below */
			continue;
		st = &pr->lvl[d][p->lv[d]];
		f *= (st->ok + 1.0) / (st->runs + 1.0);
	}
	for (size_t i = 0; i < pr->nfails; i++)
		fl += local_kernel(pr->sp, p, &pr->fails[i].p, pr->dims);
	if (fl > 0) {
		for (size_t i = 0; i < pr->noks; i++)
			s += local_kernel(pr->sp, p, &pr->oks[i], pr->dims);
	}
	return f * (s + 1.0) / (s + fl + 1.0);
}

size_t prune_rule_count(const prune *pr)
{
	return pr->nrules;
}

const struct prune_rule *prune_rule_at(const prune *pr, size_t i)
{
	return i < pr->nrules ? &pr->rules[i] : NULL;
}
