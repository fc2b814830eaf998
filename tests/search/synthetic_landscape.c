/* synthetic_landscape.c - the synthetic PCIe-box landscape and a session loop (tests only).
 *
 * Latency of one 43,008-byte all-reduce, microseconds, on the default space:
 *   base by protocol (LL 22, LL128 30, Simple 34, unset 26), +3 when NCCL_ALGO is
 *   unset; NCCL_ALGO=Tree fails at graph capture everywhere;
 *   channels: c = (MIN + 3 MAX) / 4, + 0.9 (c - 1) + 2.5 when c < 2 (best: 2);
 *   buffer: + 0.35 |log2(BUFFSIZE) - 18| (LL, LL128) or - 20 (Simple, unset);
 *   threads (unset = 512): + 0.004 |NTHREADS - 128| (LL) or - 256 (others);
 *   LL128 gives wrong sums unless BUFFSIZE is 128 or 256 KiB;
 *   Simple with more than 24 channels and a 16 MiB buffer hangs;
 *   times a deterministic +-1% "noise" hashed from the point.
 * Objective = 122 x latency (the seed's verify step). */
#include "synthetic_landscape.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/prune.h"
#include "search/strategy.h"

/* The default space's dimensions, in order (checked by landscape_optimum). */
enum { D_PROTO, D_ALGO, D_MIN, D_MAX, D_BUFF, D_NT };
static const char *const dim_names[] = {"NCCL_PROTO", "NCCL_ALGO", "NCCL_MIN_NCHANNELS",
	"NCCL_MAX_NCHANNELS", "NCCL_BUFFSIZE", "NCCL_NTHREADS"};

static double num(const space *sp, const struct point *p, size_t d, double unset)
{
	const char *t = space_level_text(sp, d, p->lv[d]);

	return t ? atof(t) : unset;
}

static const char *text(const space *sp, const struct point *p, size_t d)
{
	const char *t = space_level_text(sp, d, p->lv[d]);

	return t ? t : "";
}

void landscape_eval(const space *sp, const struct point *p, struct outcome *o)
{
	const char *proto = text(sp, p, D_PROTO), *algo = text(sp, p, D_ALGO);
	double mn = num(sp, p, D_MIN, 1), mx = num(sp, p, D_MAX, 16);
	double buf = log2(num(sp, p, D_BUFF, 4194304));
	double nt = num(sp, p, D_NT, 512), c = (mn + 3 * mx) / 4, lat;
	unsigned long long h = 1469598103934665603ULL;
	bool ll = strcmp(proto, "LL") == 0, ll128 = strcmp(proto, "LL128") == 0;

	memset(o, 0, sizeof *o);
	o->objective_us = NAN;
	if (strcmp(algo, "Tree") == 0) {
		o->cls = OUTCOME_CAPTURE;
		return;
	}
	if (ll128 && buf != 17 && buf != 18) {
		o->cls = OUTCOME_VERIFY;
		return;
	}
	if (strcmp(proto, "Simple") == 0 && mx > 24 && buf == 24) {
		o->cls = OUTCOME_TIMEOUT;
		return;
	}
	lat = ll ? 22 : ll128 ? 30 : strcmp(proto, "Simple") == 0 ? 34 : 26;
	lat += algo[0] ? 0 : 3;
	lat += 0.9 * (c - 1) + (c < 2 ? 2.5 : 0);
	lat += 0.35 * fabs(buf - (ll || ll128 ? 18 : 20));
	lat += 0.004 * fabs(nt - (ll ? 128 : 256));
	for (size_t d = 0; d < space_dims(sp); d++)
		h = (h ^ p->lv[d]) * 1099511628211ULL;
	lat *= 1.0 + 0.01 * ((double)(h >> 11) / 9007199254740992.0 * 2 - 1);
	o->cls = OUTCOME_OK;
	o->objective_us = 122 * lat;
}

double landscape_optimum(const space *sp)
{
	double best = INFINITY;
	struct outcome o;
	struct point p;

	if (space_dims(sp) != 6)
		abort();
	for (size_t d = 0; d < 6; d++) {
		if (strcmp(space_name(sp, d), dim_names[d]) != 0)
			abort();   /* the landscape is defined on the default space only */
	}
	for (uint64_t i = 0; i < space_cardinality(sp); i++) {
		space_point_at(sp, i, &p);
		if (!space_allows(sp, &p))
			continue;
		landscape_eval(sp, &p, &o);
		if (o.cls == OUTCOME_OK && o.objective_us < best)
			best = o.objective_us;
	}
	return best;
}

void landscape_session(const char *name, unsigned long seed, int budget,
                       struct session_stats *st)
{
	space *sp = space_default();
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	prune *pr = sp ? prune_create(sp, 3) : NULL;
	strategy *s = NULL;
	struct point *seen = calloc((size_t)budget + 1, sizeof *seen);
	char err[256];

	memset(st, 0, sizeof *st);
	st->best = INFINITY;
	st->hash = 14695981039346656037ULL;
	if (!sp || !rng || !pr || !seen || budget > LANDSCAPE_MAX_BUDGET)
		abort();
	gsl_rng_set(rng, seed);
	s = strategy_create(name, sp, rng, pr, err, sizeof err);
	if (!s)
		abort();
	for (int i = 0; i < budget; i++) {
		struct point p;
		struct outcome o;
		int rc = strategy_suggest(s, &p, err, sizeof err);

		if (rc == 1) {
			st->exhausted++;
			break;
		}
		if (rc < 0) {
			fprintf(stderr, "%s: suggest failed: %s\n", name, err);
			st->errors++;
			break;
		}
		st->runs++;
		for (int k = 0; k < i; k++)
			st->repeats += point_equal(&seen[k], &p, space_dims(sp));
		seen[i] = p;
		st->rejected += !space_allows(sp, &p) || prune_rejects(pr, &p);
		for (size_t d = 0; d < space_dims(sp); d++)
			st->hash = (st->hash ^ p.lv[d]) * 1099511628211ULL;
		landscape_eval(sp, &p, &o);
		if (o.cls == OUTCOME_OK && o.objective_us < st->best)
			st->best = o.objective_us;
		st->trace[i] = st->best;
		prune_observe(pr, &p, &o);
		strategy_observe(s, &p, &o);
	}
	strategy_destroy(s);
	prune_destroy(pr);
	gsl_rng_free(rng);
	space_destroy(sp);
	free(seen);
}
