/* strategy_random.c - uniform random search: every allowed, unpruned, unseen point
 * equally likely. Rejection sampling first (cheap while most of the space is
 * eligible), then an enumeration of what is left (see strategy_random_eligible). */
#include "search/strategy_impl.h"

#include <stdlib.h>

#define RANDOM_TRIES 2000
#define SALT_RANDOM 0x72616e646f6dULL

static int random_create(strategy *s, char *err, size_t errlen)
{
	s->impl = gsl_rng_alloc(gsl_rng_mt19937);
	if (!s->impl) {
		snprintf(err, errlen, "out of memory creating strategy random");
		return -1;
	}
	return 0;
}

static void random_destroy(strategy *s)
{
	if (s->impl)
		gsl_rng_free(s->impl);
}

static int random_suggest(strategy *s, struct point *out, char *err, size_t errlen)
{
	strategy_reseed(s, s->impl, SALT_RANDOM);
	return strategy_random_eligible(s, s->impl, RANDOM_TRIES, out, err, errlen);
}

const struct strategy_ops strategy_random_ops = {
	.name = "random",
	.create = random_create,
	.destroy = random_destroy,
	.suggest = random_suggest,
	.observe = NULL,
};
