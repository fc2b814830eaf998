/* test_nm.c - Nelder-Mead over rounded ordinal parameters: on a quadratic it finds
 * the integer optimum and never runs a point twice; with a categorical parameter it
 * settles in the better combination; failures are finite penalties, not a stop. */
#include <gsl/gsl_rng.h>
#include <stdlib.h>

#include "../check.h"
#include "search/prune.h"
#include "search/strategy.h"

typedef void (*objective_fn)(const struct point *p, struct outcome *o);

/* A and B in 0..40: 100 + (a - 17.3)^2 + 2 (b - 26.6)^2; integer optimum (17, 27) */
static void quadratic(const struct point *p, struct outcome *o)
{
	double a = p->lv[0], b = p->lv[1];

	memset(o, 0, sizeof *o);
	o->cls = OUTCOME_OK;
	o->objective_us = 100 + (a - 17.3) * (a - 17.3) + 2 * (b - 26.6) * (b - 26.6);
}

/* C in {x, y} and A in 0..40: x: 300 + (a - 5)^2, y: 200 + (a - 31)^2; a > 36 hangs */
static void two_valleys(const struct point *p, struct outcome *o)
{
	double a = p->lv[1];

	memset(o, 0, sizeof *o);
	if (a > 36) {
		o->cls = OUTCOME_TIMEOUT;
		o->objective_us = NAN;
		return;
	}
	o->cls = OUTCOME_OK;
	o->objective_us = p->lv[0] == 0 ? 300 + (a - 5) * (a - 5) : 200 + (a - 31) * (a - 31);
}

struct result {
	int runs, repeats, found_at;
	struct point best;
	double best_value;
};

static void drive(const char *json, objective_fn f, int budget, struct result *r)
{
	space *sp = NULL;
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	prune *pr;
	strategy *s;
	char err[256];
	struct point seen[256];

	memset(r, 0, sizeof *r);
	r->best_value = INFINITY;
	r->found_at = -1;
	if (space_parse(json, strlen(json), "nm", &sp, err, sizeof err) < 0) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
	pr = prune_create(sp, 3);
	s = strategy_create("nm", sp, rng, pr, err, sizeof err);
	if (!s)
		abort();
	for (int i = 0; i < budget && i < 256; i++) {
		struct point p;
		struct outcome o;
		int rc = strategy_suggest(s, &p, err, sizeof err);

		CHECK_INT(rc, 0);
		if (rc != 0)
			break;
		for (int k = 0; k < r->runs; k++)
			r->repeats += point_equal(&seen[k], &p, space_dims(sp));
		seen[r->runs++] = p;
		f(&p, &o);
		if (o.cls == OUTCOME_OK && o.objective_us < r->best_value) {
			r->best_value = o.objective_us;
			r->best = p;
			r->found_at = i;
		}
		prune_observe(pr, &p, &o);
		strategy_observe(s, &p, &o);
	}
	strategy_destroy(s);
	prune_destroy(pr);
	gsl_rng_free(rng);
	space_destroy(sp);
}

int main(void)
{
	struct result r;

	drive("{\"schema\": \"nccltune-space/1\", \"params\": {"
	      "\"NCCL_KNOB_A\": {\"int\": [0, 40]}, \"NCCL_KNOB_B\": {\"int\": [0, 40]}}}",
	      quadratic, 60, &r);
	fprintf(stderr, "quadratic: best (%u, %u) = %.2f at run %d\n", r.best.lv[0], r.best.lv[1],
	        r.best_value, r.found_at);
	CHECK_INT(r.repeats, 0);
	CHECK_INT(r.best.lv[0], 17);
	CHECK_INT(r.best.lv[1], 27);
	CHECK(r.found_at < 40);

	drive("{\"schema\": \"nccltune-space/1\", \"params\": {"
	      "\"NCCL_PROTO\": {\"values\": [\"LL\", \"Simple\"]},"
	      "\"NCCL_KNOB_A\": {\"int\": [0, 40]}}}",
	      two_valleys, 40, &r);
	fprintf(stderr, "two valleys: best (%u, %u) = %.2f at run %d\n", r.best.lv[0], r.best.lv[1],
	        r.best_value, r.found_at);
	CHECK_INT(r.repeats, 0);
	CHECK_INT(r.best.lv[0], 1);
	CHECK_INT(r.best.lv[1], 31);
	return check_status();
}
