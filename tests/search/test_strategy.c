/* test_strategy.c - what every strategy promises: never a seen, pruned or disallowed
 * point; the same sequence for the same seed; the same point when asked twice without
 * news; every eligible point of a tiny space exactly once, then 1. Also the name
 * table, the grid's coarse-to-fine order, and a longer run of each strategy on the
 * synthetic landscape. */
#include <gsl/gsl_rng.h>
#include <stdlib.h>

#include "../check.h"
#include "synthetic_landscape.h"
#include "search/prune.h"
#include "search/strategy.h"

/* 2 protocols x 3 thread counts x MIN <= MAX over 1..3: 2 x 3 x 6 = 36 allowed points */
static const char tiny_json[] =
	"{\"schema\": \"nccltune-space/1\", \"params\": {"
	"\"NCCL_PROTO\": {\"values\": [\"LL\", \"Simple\"]},"
	"\"NCCL_NTHREADS\": {\"values\": [64, 128, null]},"
	"\"NCCL_MIN_NCHANNELS\": {\"int\": [1, 3]},"
	"\"NCCL_MAX_NCHANNELS\": {\"int\": [1, 3]}},"
	"\"constraints\": [\"NCCL_MIN_NCHANNELS <= NCCL_MAX_NCHANNELS\"]}";

static space *tiny_space(void)
{
	space *sp = NULL;
	char err[256];

	if (space_parse(tiny_json, sizeof tiny_json - 1, "tiny", &sp, err, sizeof err) < 0)
		fprintf(stderr, "%s\n", err);
	return sp;
}

/* A smooth objective on the tiny space; Simple fails at graph capture when
 * `simple_fails`. */
static void tiny_eval(const struct point *p, bool simple_fails, struct outcome *o)
{
	memset(o, 0, sizeof *o);
	if (simple_fails && p->lv[0] == 1) {
		o->cls = OUTCOME_CAPTURE;
		o->objective_us = NAN;
		return;
	}
	o->cls = OUTCOME_OK;
	o->objective_us = 100 + 10 * p->lv[0] + 3.0 * p->lv[1] + (p->lv[2] - 1.0) * (p->lv[2] - 1.0) +
	                  2.0 * p->lv[3];
}

struct run {
	int n;                  /* suggestions */
	int rc;                 /* last suggest's return */
	int repeats, disallowed, pruned, simple;
	unsigned long long hash;
};

static void run_tiny(const char *name, unsigned long seed, bool simple_fails, struct run *r)
{
	space *sp = tiny_space();
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	prune *pr = sp ? prune_create(sp, 3) : NULL;
	strategy *s = NULL;
	struct point seen[64];
	char err[256];

	memset(r, 0, sizeof *r);
	r->hash = 1469598103934665603ULL;
	if (!sp || !rng || !pr)
		abort();
	gsl_rng_set(rng, seed);
	s = strategy_create(name, sp, rng, pr, err, sizeof err);
	CHECK(s != NULL);
	if (!s)
		abort();
	CHECK_STR(strategy_name(s), name);
	for (;;) {
		struct point p, again;
		struct outcome o;

		r->rc = strategy_suggest(s, &p, err, sizeof err);
		if (r->rc != 0)
			break;
		/* asked again before an observation: the same point */
		CHECK_INT(strategy_suggest(s, &again, err, sizeof err), 0);
		CHECK(point_equal(&p, &again, space_dims(sp)));
		for (int k = 0; k < r->n; k++)
			r->repeats += point_equal(&seen[k], &p, space_dims(sp));
		r->disallowed += !space_allows(sp, &p);
		r->pruned += prune_rejects(pr, &p);
		r->simple += p.lv[0] == 1;
		for (size_t d = 0; d < space_dims(sp); d++)
			r->hash = (r->hash ^ p.lv[d]) * 1099511628211ULL;
		if (r->n < 64)
			seen[r->n] = p;
		r->n++;
		tiny_eval(&p, simple_fails, &o);
		prune_observe(pr, &p, &o);
		strategy_observe(s, &p, &o);
		if (r->n > 60)
			break;
	}
	if (r->rc == 1) {
		struct point p;

		/* exhausted stays exhausted */
		CHECK_INT(strategy_suggest(s, &p, err, sizeof err), 1);
	} else if (r->rc < 0) {
		fprintf(stderr, "%s: %s\n", name, err);
	}
	strategy_destroy(s);
	prune_destroy(pr);
	gsl_rng_free(rng);
	space_destroy(sp);
}

static void test_contract(void)
{
	for (size_t i = 0; strategy_names[i]; i++) {
		const char *name = strategy_names[i];
		struct run a, b;

		fprintf(stderr, "strategy %s\n", name);
		/* exhausts the tiny space: each of the 36 allowed points once, then 1 */
		run_tiny(name, 1, false, &a);
		CHECK_INT(a.rc, 1);
		CHECK_INT(a.n, 36);
		CHECK_INT(a.repeats, 0);
		CHECK_INT(a.disallowed, 0);
		CHECK_INT(a.pruned, 0);
		/* with Simple failing: exactly 3 Simple runs make the rule, then never again */
		run_tiny(name, 1, true, &a);
		CHECK_INT(a.rc, 1);
		CHECK_INT(a.simple, 3);
		CHECK_INT(a.n, 18 + 3);
		CHECK_INT(a.repeats, 0);
		CHECK_INT(a.pruned, 0);
		CHECK_INT(a.disallowed, 0);
		/* deterministic for a seed */
		run_tiny(name, 1, true, &b);
		CHECK(a.hash == b.hash);
		run_tiny(name, 2, false, &a);
		run_tiny(name, 2, false, &b);
		CHECK(a.hash == b.hash);
	}
	/* a different seed changes the sequence of the randomised ones */
	{
		struct run a, b;

		run_tiny("random", 1, false, &a);
		run_tiny("random", 2, false, &b);
		CHECK(a.hash != b.hash);
		run_tiny("bo", 1, false, &a);
		run_tiny("bo", 2, false, &b);
		CHECK(a.hash != b.hash);
	}
}

static void test_names(void)
{
	space *sp = tiny_space();
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	prune *pr = sp ? prune_create(sp, 3) : NULL;
	char err[256] = "";
	size_t n = 0;

	while (strategy_names[n])
		n++;
	CHECK_INT(n, 4);
	CHECK_STR(strategy_names[0], "bo");
	CHECK(strategy_create("annealing", sp, rng, pr, err, sizeof err) == NULL);
	CHECK_STR(err, "unknown strategy 'annealing' (bo, nm, random or grid)");
	CHECK(strategy_create(NULL, sp, rng, pr, err, sizeof err) == NULL);
	strategy_destroy(NULL);
	prune_destroy(pr);
	gsl_rng_free(rng);
	space_destroy(sp);
}

/* Points observed from elsewhere (warm start, replayed journal) are never proposed,
 * and rules learned from them hold. */
static void test_foreign_observations(void)
{
	space *sp = space_default();
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	prune *pr = prune_create(sp, 3);
	char err[256];

	for (size_t i = 0; strategy_names[i]; i++) {
		strategy *s = strategy_create(strategy_names[i], sp, rng, pr, err, sizeof err);
		struct point p;
		struct outcome o;

		CHECK(s != NULL);
		if (!s)
			continue;
		memset(&o, 0, sizeof o);
		if (i == 0) {
			/* three Tree failures with three protocols that work with Ring: a rule
			 * for everyone */
			o.cls = OUTCOME_OK;
			o.objective_us = 5000;
			for (uint32_t k = 0; k < 3; k++) {
				p = (struct point){{k, 0, 5, 6, k, 0}};
				prune_observe(pr, &p, &o);
			}
			o.cls = OUTCOME_CAPTURE;
			for (uint32_t k = 0; k < 3; k++) {
				p = (struct point){{k, 1, k, k + 1, k, k}};
				prune_observe(pr, &p, &o);
			}
			CHECK_INT(prune_rule_count(pr), 1);
		}
		/* the grid's first point and a few neighbours observed before any suggestion */
		o.cls = OUTCOME_OK;
		o.objective_us = 5000;
		for (uint32_t k = 0; k < 4; k++) {
			p = (struct point){{0, 0, 0, k, 0, 0}};
			strategy_observe(s, &p, &o);
		}
		for (int k = 0; k < 30; k++) {
			CHECK_INT(strategy_suggest(s, &p, err, sizeof err), 0);
			CHECK(p.lv[1] != 1);
			CHECK(!(p.lv[0] == 0 && p.lv[1] == 0 && p.lv[2] == 0 && p.lv[3] < 4 &&
			        p.lv[4] == 0 && p.lv[5] == 0));
			o.objective_us = 4000 + 10 * k;
			strategy_observe(s, &p, &o);
		}
		strategy_destroy(s);
	}
	prune_destroy(pr);
	gsl_rng_free(rng);
	space_destroy(sp);
}

static void test_grid_order(void)
{
	const char *json = "{\"schema\": \"nccltune-space/1\", \"params\": {"
		"\"NCCL_MAX_NCHANNELS\": {\"int\": [1, 9]}}}";
	const uint32_t want[9] = {0, 8, 4, 2, 6, 1, 3, 5, 7};
	space *sp = NULL;
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	prune *pr;
	strategy *s;
	char err[256];
	struct point p;
	struct outcome o;

	CHECK_INT(space_parse(json, strlen(json), "g", &sp, err, sizeof err), 0);
	pr = prune_create(sp, 3);
	s = strategy_create("grid", sp, rng, pr, err, sizeof err);
	memset(&o, 0, sizeof o);
	o.objective_us = 1;
	for (int i = 0; i < 9; i++) {
		CHECK_INT(strategy_suggest(s, &p, err, sizeof err), 0);
		CHECK_INT(p.lv[0], want[i]);
		strategy_observe(s, &p, &o);
	}
	CHECK_INT(strategy_suggest(s, &p, err, sizeof err), 1);
	strategy_destroy(s);
	prune_destroy(pr);
	gsl_rng_free(rng);
	space_destroy(sp);
}

/* Corner cases: one point; one allowed point among many; categorical only; a
 * 16-parameter space too large to enumerate. Each strategy exhausts the small ones
 * exactly and keeps proposing distinct points in the large one. */
static void test_corners(void)
{
	static const struct {
		const char *json;
		int allowed;     /* -1: too many to exhaust */
	} cases[] = {
		{"{\"schema\": \"nccltune-space/1\", \"params\": {\"NCCL_ALGO\": {\"values\": [\"Ring\"]}}}", 1},
		{"{\"schema\": \"nccltune-space/1\", \"params\": {\"NCCL_MIN_NCHANNELS\": {\"int\": [1, 30]},"
		 "\"NCCL_MAX_NCHANNELS\": {\"int\": [1, 30]}}, \"constraints\": [\"NCCL_MIN_NCHANNELS >= 30\","
		 "\"NCCL_MAX_NCHANNELS <= NCCL_MIN_NCHANNELS\", \"NCCL_MAX_NCHANNELS > 29\"]}", 1},
		{"{\"schema\": \"nccltune-space/1\", \"params\": {\"NCCL_ALGO\": {\"values\": [\"Ring\", \"Tree\"]},"
		 "\"NCCL_PROTO\": {\"values\": [\"LL\", \"LL128\", \"Simple\", null]}}}", 8},
		{"{\"schema\": \"nccltune-space/1\", \"params\": {"
		 "\"NCCL_KNOB_A\": {\"int\": [1, 4000]}, \"NCCL_KNOB_B\": {\"int\": [1, 4000]},"
		 "\"NCCL_KNOB_C\": {\"int\": [1, 4000]}, \"NCCL_KNOB_D\": {\"int\": [1, 4000]},"
		 "\"NCCL_KNOB_E\": {\"int\": [1, 4000]}, \"NCCL_KNOB_F\": {\"int\": [1, 4000]},"
		 "\"NCCL_KNOB_G\": {\"values\": [\"a\", \"b\", null]}, \"NCCL_KNOB_H\": {\"values\": [1, 2, null]},"
		 "\"NCCL_KNOB_I\": {\"pow2\": [1, 1024]}, \"NCCL_KNOB_J\": {\"int\": [1, 4000]},"
		 "\"NCCL_KNOB_K\": {\"int\": [1, 4000]}, \"NCCL_KNOB_L\": {\"int\": [1, 4000]},"
		 "\"NCCL_KNOB_M\": {\"int\": [1, 4000]}, \"NCCL_KNOB_N\": {\"int\": [1, 4000]},"
		 "\"NCCL_KNOB_O\": {\"int\": [1, 4000]}, \"NCCL_KNOB_P\": {\"int\": [1, 4000]}},"
		 "\"constraints\": [\"NCCL_KNOB_A <= NCCL_KNOB_B\"]}", -1},
	};

	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		for (size_t i = 0; strategy_names[i]; i++) {
			space *sp = NULL;
			gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
			prune *pr;
			strategy *s;
			char err[256];
			int n = 0, rc = 0, limit = cases[c].allowed < 0 ? 16 : cases[c].allowed + 5;

			CHECK_INT(space_parse(cases[c].json, strlen(cases[c].json), "corner", &sp, err,
			                      sizeof err), 0);
			if (!sp)
				continue;
			pr = prune_create(sp, 3);
			s = strategy_create(strategy_names[i], sp, rng, pr, err, sizeof err);
			CHECK(s != NULL);
			while (s && n < limit) {
				struct point p;
				struct outcome o;

				rc = strategy_suggest(s, &p, err, sizeof err);
				if (rc != 0)
					break;
				CHECK(space_allows(sp, &p));
				memset(&o, 0, sizeof o);
				o.objective_us = 100 + p.lv[0] + 0.5 * p.lv[1];
				strategy_observe(s, &p, &o);
				n++;
			}
			if (cases[c].allowed >= 0) {
				CHECK_INT(rc, 1);
				CHECK_INT(n, cases[c].allowed);
			} else {
				CHECK_INT(rc, 0);
				CHECK_INT(n, limit);
			}
			if (rc < 0)
				fprintf(stderr, "corner %zu, %s: %s\n", c, strategy_names[i], err);
			strategy_destroy(s);
			prune_destroy(pr);
			gsl_rng_free(rng);
			space_destroy(sp);
		}
	}
}

/* 60 runs of each strategy on the synthetic landscape (big space): no repeats, no
 * pruned or disallowed point, no error; random and bo reproducible. */
static void test_landscape(void)
{
	for (size_t i = 0; strategy_names[i]; i++) {
		struct session_stats st, again;

		landscape_session(strategy_names[i], 3, 60, &st);
		CHECK_INT(st.runs, 60);
		CHECK_INT(st.repeats, 0);
		CHECK_INT(st.rejected, 0);
		CHECK_INT(st.errors, 0);
		CHECK(isfinite(st.best));
		landscape_session(strategy_names[i], 3, 60, &again);
		CHECK(st.hash == again.hash);
	}
}

int main(void)
{
	test_names();
	test_contract();
	test_foreign_observations();
	test_grid_order();
	test_corners();
	test_landscape();
	return check_status();
}
