/* test_bo.c - the bo strategy on the synthetic PCIe landscape: it must beat random
 * search clearly at a small budget, get near the exhaustive optimum, never rerun or
 * run a pruned point, and be reproducible for a seed. Seeds are fixed: no flakes. */
#include <stdlib.h>

#include "../check.h"
#include "synthetic_landscape.h"
#include "space/space.h"

#define NSEEDS 5

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(void)
{
	space *sp = space_default();
	double opt, rb[NSEEDS], rr[NSEEDS], r60[NSEEDS];
	struct session_stats st, again;

	CHECK(sp != NULL);
	opt = landscape_optimum(sp);
	CHECK(isfinite(opt));
	for (int i = 0; i < NSEEDS; i++) {
		unsigned long seed = 1 + (unsigned long)i;

		landscape_session("bo", seed, 60, &st);
		CHECK_INT(st.runs, 60);
		CHECK_INT(st.repeats, 0);
		CHECK_INT(st.rejected, 0);
		CHECK_INT(st.errors, 0);
		rb[i] = st.trace[39] / opt - 1;
		r60[i] = st.trace[59] / opt - 1;
		landscape_session("random", seed, 40, &st);
		CHECK_INT(st.repeats, 0);
		CHECK_INT(st.rejected, 0);
		rr[i] = st.best / opt - 1;
		fprintf(stderr, "seed %lu: regret bo@40 %.4f random@40 %.4f bo@60 %.4f\n", seed,
		        rb[i], rr[i], r60[i]);
	}
	/* the brief's targets: >= 2x lower regret than random; within 5% at 60 runs */
	{
		double mb = median(rb, NSEEDS), mr = median(rr, NSEEDS), m60 = median(r60, NSEEDS);

		fprintf(stderr, "median regret: bo@40 %.4f random@40 %.4f bo@60 %.4f\n", mb, mr, m60);
		CHECK(mr >= 2 * mb);
		CHECK(m60 <= 0.05);
	}
	/* same seed, same sequence */
	landscape_session("bo", 7, 25, &st);
	landscape_session("bo", 7, 25, &again);
	CHECK(st.hash == again.hash);
	CHECK(st.best == again.best);
	space_destroy(sp);
	return check_status();
}
