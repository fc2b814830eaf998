/* test_twolevel.c - the two-level split (search/twolevel.h) on the per-size default
 * space expanded for two sizes: the outer space, the plan of an outer point (counts,
 * order, pruned and skipped choices, the all-NCCL combination left out), a sweep report
 * turned into inner results (ok, a per-choice failure, a choice in flight) and the best
 * combination; and the pruner's neighbourhood of a wrong sum on rule dimensions. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "search/twolevel.h"

static const uint64_t sizes[2] = {43008, 1048576};

/* A per-size space with a channel pool (not the default's variables, which may change),
 * expanded for both sizes: dims 0..3 the variables (MIN/MAX_NCHANNELS, BUFFSIZE,
 * NTHREADS), then per size algo {Ring, Tree, null}, proto {LL, LL128, Simple, null}, ctas
 * {1, 2, 4, 8, 16, null}. */
static const char pool_space[] =
	"{\"schema\": \"nccltune-space/1\", \"per_size\": {"
	"\"algo\": {\"values\": [\"Ring\", \"Tree\", null]},"
	"\"proto\": {\"values\": [\"LL\", \"LL128\", \"Simple\", null]},"
	"\"ctas\": {\"values\": [1, 2, 4, 8, 16, null]}}, \"params\": {"
	"\"NCCL_MIN_NCHANNELS\": {\"int\": [1, 32]},"
	"\"NCCL_MAX_NCHANNELS\": {\"int\": [1, 32]},"
	"\"NCCL_BUFFSIZE\": {\"pow2\": [65536, 16777216]},"
	"\"NCCL_NTHREADS\": {\"values\": [64, 128, 256, 512, null]}},"
	"\"constraints\": [\"NCCL_MIN_NCHANNELS <= NCCL_MAX_NCHANNELS\"]}";

static space *expanded(void)
{
	space *base = NULL, *sp = NULL;
	char err[512];

	if (space_parse(pool_space, sizeof pool_space - 1, "test space", &base, err,
	                sizeof err) < 0 ||
	    space_expand_per_size(base, sizes, 2, &sp, err, sizeof err) != 0)
		sp = NULL;
	space_destroy(base);
	return sp;
}

static void test_split(void)
{
	space *sp = expanded();
	char err[256];
	twolevel *t = sp ? twolevel_create(sp, err, sizeof err) : NULL;
	struct point outer, full, back;

	CHECK(t != NULL);
	if (!t)
		goto out;
	CHECK_INT(space_dims(sp), 10);
	CHECK_INT(space_dims(twolevel_outer_space(t)), 4);
	CHECK_INT(twolevel_sizes(t), 2);
	CHECK_STR(space_name(twolevel_outer_space(t), 3), "NCCL_NTHREADS");
	CHECK_INT(space_constraint_count(twolevel_outer_space(t)), 1);
	memset(&outer, 0, sizeof outer);
	outer.lv[0] = 3;
	outer.lv[1] = 7;
	outer.lv[2] = 2;
	outer.lv[3] = 1;
	twolevel_full_of(t, &outer, &full);
	/* the rules at NCCL's choice: the null levels 2, 3, 5 */
	CHECK_INT(full.lv[1], 7);
	CHECK_INT(full.lv[4], 2);
	CHECK_INT(full.lv[5], 3);
	CHECK_INT(full.lv[6], 5);
	CHECK_INT(full.lv[9], 5);
	CHECK(twolevel_rules_null(t, &full));
	twolevel_outer_of(t, &full, &back);
	CHECK(point_equal(&back, &outer, 4));
	twolevel_full_of(t, &back, &back);   /* aliasing is allowed */
	CHECK(point_equal(&back, &full, space_dims(sp)));
	back.lv[8] = 0;                      /* another rule: the same outer point */
	CHECK(twolevel_same_outer(t, &full, &back));
	back.lv[2] = 5;                      /* another buffer size: another one */
	CHECK(!twolevel_same_outer(t, &full, &back));
	/* a space without rules has no split */
	CHECK(twolevel_create(twolevel_outer_space(t), err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "no per-size rule dimensions");
out:
	twolevel_destroy(t);
	space_destroy(sp);
}

/* Skip every choice of the second size with algo Tree. */
static bool skip_tree(void *ctx, const struct twolevel_choice *c)
{
	(void)ctx;
	return c->bytes == 1048576 && c->algo && strcmp(c->algo, "Tree") == 0;
}

static void test_plan(void)
{
	space *sp = expanded();
	char err[256];
	twolevel *t = sp ? twolevel_create(sp, err, sizeof err) : NULL;
	prune *pr = sp ? prune_create(sp, 0) : NULL;
	struct twolevel_choice *c = calloc(TWOLEVEL_MAX_CHOICES, sizeof *c);
	struct point outer, full;
	struct outcome o;
	size_t n, dropped;

	CHECK(t && pr && c);
	if (!t || !pr || !c)
		goto out;
	memset(&outer, 0, sizeof outer);
	twolevel_full_of(t, &outer, &full);
	/* 3 x 4 x 6 = 72 combinations per size, less the all-NCCL one */
	n = twolevel_plan(t, NULL, &full, NULL, NULL, TWOLEVEL_MAX_CHOICES, c, &dropped);
	CHECK_INT(n, 142);
	CHECK_INT(dropped, 0);
	CHECK_INT(c[0].bytes, 43008);
	CHECK_STR(c[0].algo, "Ring");
	CHECK_STR(c[0].proto, "LL");
	CHECK_INT(c[0].ctas, 1);
	CHECK_INT(c[1].ctas, 2);
	CHECK(c[5].ctas == 0 && c[5].algo && !strcmp(c[5].proto, "LL"));
	CHECK_INT(c[71].bytes, 1048576);
	/* every other size's rules stay at NCCL's */
	CHECK_INT(c[0].p.lv[7], 2);
	CHECK_INT(c[71].p.lv[4], 2);
	n = twolevel_plan(t, NULL, &full, skip_tree, NULL, 10, c, &dropped);
	CHECK_INT(n, 10);
	CHECK_INT(dropped, 142 - 24 - 10);
	/* a wrong sum bans its exact point: it is not planned again */
	memset(&o, 0, sizeof o);
	o.cls = OUTCOME_VERIFY;
	o.objective_us = NAN;
	twolevel_plan(t, NULL, &full, NULL, NULL, TWOLEVEL_MAX_CHOICES, c, &dropped);
	prune_observe(pr, &c[3].p, &o);
	n = twolevel_plan(t, pr, &full, NULL, NULL, TWOLEVEL_MAX_CHOICES, c, &dropped);
	CHECK_INT(n, 141);
out:
	free(c);
	prune_destroy(pr);
	twolevel_destroy(t);
	space_destroy(sp);
}

/* A report of a sweep over the first three planned choices. */
static void report_of(struct proto_report *r, bool ok)
{
	static struct proto_sweep_entry e[3];

	memset(r, 0, sizeof *r);
	memset(e, 0, sizeof e);
	r->ok = ok;
	r->nresults = 2;
	r->results[0].bytes = 43008;
	r->results[0].us.median = 20;
	r->results[1].bytes = 1048576;
	r->results[1].us.median = 100;
	for (int i = 0; i < 3; i++) {
		e[i].index = (size_t)i;
		e[i].bytes = 43008;
		e[i].ok = i != 1;
		e[i].us.median = 10.0 + i;
		e[i].stage = PROTO_STAGE_VERIFY;
	}
	r->sweep = e;
	r->nsweep = 3;
	if (!ok) {
		r->nsweep = 1;          /* only the final failure is listed */
		r->sweep = &e[1];
		r->has_in_flight = true;
		r->sweep_in_flight = 2;
		snprintf(r->error, sizeof r->error, "timed out");
	}
}

static void test_learn(void)
{
	space *sp = expanded();
	char err[256];
	twolevel *t = sp ? twolevel_create(sp, err, sizeof err) : NULL;
	struct twolevel_choice *c = calloc(TWOLEVEL_MAX_CHOICES, sizeof *c);
	struct twolevel_inner in[8];
	struct workload wl;
	struct proto_report r;
	struct point outer, full, best;
	size_t n, flight, dropped;
	double obj;

	CHECK(t && c);
	if (!t || !c)
		goto out;
	memset(&wl, 0, sizeof wl);
	wl.n = 2;
	wl.e[0].bytes = 43008;
	wl.e[0].count = 10;
	wl.e[1].bytes = 1048576;
	wl.e[1].count = 1;
	memset(&outer, 0, sizeof outer);
	twolevel_full_of(t, &outer, &full);
	twolevel_plan(t, NULL, &full, NULL, NULL, TWOLEVEL_MAX_CHOICES, c, &dropped);
	report_of(&r, true);
	n = twolevel_learn(t, &wl, c, 3, &r, OUTCOME_OK, in, &flight);
	CHECK_INT(n, 5);   /* three choices, two own cases */
	CHECK_INT(flight, TWOLEVEL_OWN);
	CHECK_INT(in[0].cls, OUTCOME_OK);
	CHECK_NEAR(in[0].objective_us, 10 * 10.0 + 100, 1e-9);
	CHECK_INT(in[1].cls, OUTCOME_VERIFY);
	CHECK(isnan(in[1].us));
	CHECK_INT(in[3].index, TWOLEVEL_OWN);
	CHECK_NEAR(in[3].objective_us, 10 * 20.0 + 100, 1e-9);
	/* the best: choice 0 for 43008 (10 us), the own case for 1 MiB */
	CHECK_INT(twolevel_best(t, &wl, in, n, NULL, NULL, &best, &obj), 0);
	CHECK_NEAR(obj, 10 * 10.0 + 100, 1e-9);
	CHECK(point_equal(&best, &c[0].p, space_dims(sp)));
	/* a failed run: the final entry and the choice in flight, with the run's class */
	report_of(&r, false);
	n = twolevel_learn(t, &wl, c, 3, &r, OUTCOME_REPLAY, in, &flight);
	CHECK_INT(n, 2);
	CHECK_INT(flight, 2);
	CHECK_INT(in[0].cls, OUTCOME_VERIFY);
	CHECK_INT(in[1].cls, OUTCOME_REPLAY);
	CHECK(point_equal(&in[1].p, &c[2].p, space_dims(sp)));
	CHECK_STR(in[1].error, "timed out");
	CHECK_INT(twolevel_best(t, &wl, in, n, NULL, NULL, &best, &obj), -1);
out:
	free(c);
	twolevel_destroy(t);
	space_destroy(sp);
}

/* A wrong sum at one size's Ring/LL128/4 CTAs: the same point with another protocol
 * is another kernel (not suspect); one CTA step away is. */
static void test_neighbours(void)
{
	space *sp = expanded();
	prune *pr = sp ? prune_create(sp, 0) : NULL;
	struct outcome o;
	struct point p, q;

	CHECK(pr != NULL);
	if (!pr)
		goto out;
	memset(&p, 0, sizeof p);
	p.lv[4] = 0;   /* Ring */
	p.lv[5] = 1;   /* LL128 */
	p.lv[6] = 2;   /* 4 CTAs */
	p.lv[7] = 2;
	p.lv[8] = 3;
	p.lv[9] = 5;
	memset(&o, 0, sizeof o);
	o.cls = OUTCOME_VERIFY;
	o.objective_us = NAN;
	prune_observe(pr, &p, &o);
	CHECK(prune_rejects(pr, &p));
	q = p;
	q.lv[5] = 0;   /* LL */
	CHECK(!prune_suspect(pr, &q));
	q.lv[5] = 3;   /* NCCL's protocol */
	CHECK(!prune_suspect(pr, &q));
	q = p;
	q.lv[4] = 1;   /* Tree */
	CHECK(!prune_suspect(pr, &q));
	q = p;
	q.lv[6] = 3;   /* 8 CTAs: one ordinal step */
	CHECK(prune_suspect(pr, &q));
	q = p;
	q.lv[3] = 1;   /* another thread count */
	CHECK(prune_suspect(pr, &q));
out:
	prune_destroy(pr);
	space_destroy(sp);
}

int main(void)
{
	test_split();
	test_plan();
	test_learn();
	test_neighbours();
	return check_status();
}
