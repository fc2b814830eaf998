/* test_recommend.c - strategy_recommend and strategy_rank: which observed points may be
 * recommended (only ok, allowed, never rejected or suspect), the measured estimate of
 * nm/random/grid (geometric mean of repeats), bo's posterior-mean estimate (a lucky
 * noisy measurement among consistently worse neighbours loses to a consistently good
 * region), and that asking never changes what a strategy suggests next. Fixed seeds. */
#include <gsl/gsl_rng.h>
#include <stdlib.h>

#include "../check.h"
#include "search/prune.h"
#include "search/strategy.h"

/* one ordinal parameter of 21 levels (x = 0..20) and a binary category */
static const char line_json[] =
	"{\"schema\": \"nccltune-space/1\", \"params\": {"
	"\"NCCL_MIN_NCHANNELS\": {\"int\": [1, 21]},"
	"\"NCCL_PROTO\": {\"values\": [\"LL\", \"Simple\"]}}}";

struct fixture {
	space *sp;
	gsl_rng *rng;
	prune *pr;
	strategy *s;
};

static void setup(struct fixture *f, const char *name)
{
	char err[256];

	memset(f, 0, sizeof *f);
	if (space_parse(line_json, sizeof line_json - 1, "line", &f->sp, err, sizeof err) < 0) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
	f->rng = gsl_rng_alloc(gsl_rng_mt19937);
	f->pr = prune_create(f->sp, 3);
	if (!f->rng || !f->pr)
		abort();
	gsl_rng_set(f->rng, 11);
	f->s = strategy_create(name, f->sp, f->rng, f->pr, err, sizeof err);
	if (!f->s) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
}

static void teardown(struct fixture *f)
{
	strategy_destroy(f->s);
	prune_destroy(f->pr);
	gsl_rng_free(f->rng);
	space_destroy(f->sp);
}

static struct point pt(uint32_t x, uint32_t proto)
{
	struct point p;

	memset(&p, 0, sizeof p);
	p.lv[0] = x;
	p.lv[1] = proto;
	return p;
}

static void see(struct fixture *f, struct point p, enum outcome_class cls, double us)
{
	struct outcome o;

	memset(&o, 0, sizeof o);
	o.cls = cls;
	o.objective_us = cls == OUTCOME_OK ? us : NAN;
	prune_observe(f->pr, &p, &o);
	strategy_observe(f->s, &p, &o);
}

/* Every strategy: nothing before an ok run; failures, wrong sums and their suspect
 * neighbours never recommended; repeats averaged (geometric mean). */
static void test_measured(const char *name)
{
	struct fixture f;
	struct point out = pt(99, 99), r[8];
	double est = 0, e[8];
	size_t n = 99;

	setup(&f, name);
	CHECK_INT(strategy_recommend(f.s, &out, &est), 1);
	CHECK_INT(out.lv[0], 99);   /* untouched */
	CHECK_INT(strategy_rank(f.s, r, e, 8, &n), 0);
	CHECK_INT(n, 0);
	see(&f, pt(3, 0), OUTCOME_CAPTURE, 0);
	CHECK_INT(strategy_recommend(f.s, &out, &est), 1);
	see(&f, pt(10, 0), OUTCOME_OK, 200);
	see(&f, pt(15, 1), OUTCOME_OK, 150);
	see(&f, pt(15, 1), OUTCOME_OK, 300);   /* repeat: geometric mean sqrt(150*300) */
	see(&f, pt(5, 0), OUTCOME_VERIFY, 0);  /* wrong sum: banned, 4 and 6 suspect */
	see(&f, pt(6, 0), OUTCOME_OK, 50);     /* fast, but next to a wrong sum */
	see(&f, pt(12, 1), OUTCOME_OK, 100);
	see(&f, pt(12, 1), OUTCOME_TIMEOUT, 0);   /* failed once: never recommended */
	if (strcmp(name, "bo") != 0) {
		CHECK_INT(strategy_recommend(f.s, &out, &est), 0);
		CHECK_INT(out.lv[0], 10);
		CHECK_INT(out.lv[1], 0);
		CHECK_NEAR(est, 200, 1e-9);
		CHECK_INT(strategy_rank(f.s, r, e, 8, &n), 0);
		CHECK_INT(n, 2);
		CHECK_INT(r[0].lv[0], 10);
		CHECK_INT(r[1].lv[0], 15);
		CHECK_NEAR(e[1], sqrt(150.0 * 300.0), 1e-9);
		CHECK_INT(strategy_rank(f.s, r, NULL, 1, &n), 0);
		CHECK_INT(n, 1);
		CHECK_INT(r[0].lv[0], 10);
	} else {
		/* bo's estimate is a posterior mean; which points qualify is the same */
		CHECK_INT(strategy_rank(f.s, r, e, 8, &n), 0);
		CHECK_INT(n, 2);
		for (size_t i = 0; i < n; i++)
			CHECK(r[i].lv[0] == 10 || r[i].lv[0] == 15);
		CHECK(n < 2 || e[0] <= e[1]);
		CHECK_INT(strategy_recommend(f.s, &out, &est), 0);
		CHECK(point_equal(&out, &r[0], 2));
		CHECK_NEAR(est, e[0], 1e-9 * e[0]);
	}
	teardown(&f);
}

/* bo: two regions of the same protocol. Around x = 4 the runs measured 140 us give or
 * take 2% - except one lucky run at x = 4 itself, 8% low (129 us); around x = 15 every
 * run measured about 131 us, x = 15 itself twice. The best single measurement is the
 * lucky one; bo's posterior mean pools the neighbours, so it must recommend from the
 * consistent region and estimate x = 4 above what it measured. */
static void test_bo_lucky(void)
{
	struct fixture f;
	struct point out, r[32];
	double est, e[32];
	size_t n;
	static const struct { uint32_t x; double us; } runs[] = {
		{0, 160}, {2, 141}, {3, 138}, {4, 129}, {5, 142}, {6, 139}, {7, 141}, {9, 137},
		{11, 134}, {13, 131}, {14, 132}, {15, 130}, {15, 131.5}, {16, 130.5}, {17, 132},
		{19, 135}, {20, 138},
	};

	setup(&f, "bo");
	for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++)
		see(&f, pt(runs[i].x, 0), OUTCOME_OK, runs[i].us);
	/* the other protocol: consistently slow */
	see(&f, pt(4, 1), OUTCOME_OK, 300);
	see(&f, pt(14, 1), OUTCOME_OK, 290);
	see(&f, pt(18, 1), OUTCOME_OK, 310);
	CHECK_INT(strategy_recommend(f.s, &out, &est), 0);
	fprintf(stderr, "bo recommends x=%u proto=%u, estimate %.1f us\n", out.lv[0], out.lv[1],
	        est);
	CHECK(out.lv[0] >= 13 && out.lv[0] <= 17);
	CHECK_INT(out.lv[1], 0);
	CHECK(est > 128 && est < 134);
	CHECK_INT(strategy_rank(f.s, r, e, 32, &n), 0);
	CHECK_INT(n, 19);   /* 20 runs, x = 15 twice */
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			CHECK(e[i - 1] <= e[i]);
		if (r[i].lv[0] == 4 && r[i].lv[1] == 0) {
			fprintf(stderr, "bo: x=4 measured 129 us, estimate %.1f us, rank %zu\n", e[i], i);
			CHECK(e[i] > 131);   /* pulled toward its neighbours */
			CHECK(i >= 1);
		}
	}
	teardown(&f);
}

/* Asking for a recommendation between suggestions changes nothing that follows. */
static void test_no_side_effect(const char *name)
{
	struct fixture a, b;
	char err[256];

	setup(&a, name);
	setup(&b, name);
	for (int i = 0; i < 30; i++) {
		struct point pa, pb, rec;
		double est;
		int ra = strategy_suggest(a.s, &pa, err, sizeof err);
		int rb;

		/* b is asked for its recommendation (and ranking) before every suggestion */
		if (i > 0) {
			size_t n;
			struct point r[4];

			CHECK(strategy_recommend(b.s, &rec, &est) >= 0);
			CHECK_INT(strategy_rank(b.s, r, NULL, 4, &n), 0);
		}
		rb = strategy_suggest(b.s, &pb, err, sizeof err);
		CHECK_INT(ra, rb);
		if (ra != 0 || rb != 0)
			break;
		CHECK(point_equal(&pa, &pb, 2));
		/* a bumpy function with a noise-like term, the same for both */
		see(&a, pa, OUTCOME_OK, 100 + 3.0 * fabs((double)pa.lv[0] - 13) + 40 * pa.lv[1] +
		    5 * ((pa.lv[0] * 7 + pa.lv[1] * 3) % 5));
		see(&b, pb, OUTCOME_OK, 100 + 3.0 * fabs((double)pb.lv[0] - 13) + 40 * pb.lv[1] +
		    5 * ((pb.lv[0] * 7 + pb.lv[1] * 3) % 5));
	}
	teardown(&a);
	teardown(&b);
}

int main(void)
{
	for (size_t i = 0; strategy_names[i]; i++) {
		test_measured(strategy_names[i]);
		test_no_side_effect(strategy_names[i]);
	}
	test_bo_lucky();
	return check_status();
}
