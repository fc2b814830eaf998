/* fuzz_tuner_table.c - fuzz target for the tuner table parser (tuner_table_parse), which
 * the NCCL plugin runs inside the application on a file named by the environment.
 * Besides "never crash", it checks properties: a rejected input gets a terminated message
 * that names a line (or the size); an accepted table obeys every limit, formats to
 * canonical text that parses back to the same rules and formats identically again, and
 * each rule is found by a lookup at its own lower bound (or an earlier rule is). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "table.h"

static int same_rule(const struct tuner_rule *a, const struct tuner_rule *b)
{
	return a->coll == b->coll && a->nranks == b->nranks && a->nnodes == b->nnodes &&
	       a->min_bytes == b->min_bytes && a->max_bytes == b->max_bytes &&
	       a->algo == b->algo && a->proto == b->proto && a->ctas == b->ctas &&
	       a->chunk == b->chunk;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tuner_table t, back = { NULL, 0 };
	char err[512], *text = NULL, *again = NULL;

	if (tuner_table_parse((const char *)data, size, &t, err, sizeof err) != 0) {
		if (memchr(err, '\0', sizeof err) == NULL || t.rules || t.nrules)
			abort();
		if (strncmp(err, "line ", 5) != 0 && strncmp(err, "larger than ", 12) != 0)
			abort();
		return 0;
	}
	if (t.nrules > TUNER_TABLE_MAX_RULES)
		abort();
	for (size_t i = 0; i < t.nrules; i++) {
		const struct tuner_rule *r = &t.rules[i];
		long hit;

		if (tuner_rule_check(r, err, sizeof err) != 0)
			abort();
		hit = tuner_table_match(&t, r->coll, r->nranks == TUNER_ANY ? 1 : (size_t)r->nranks,
		                        r->nnodes == TUNER_ANY ? 1 : (size_t)r->nnodes, r->min_bytes);
		if (hit < 0 || (size_t)hit > i)
			abort();
	}
	text = tuner_table_format(&t, err, sizeof err);
	if (!text)
		goto out;   /* out of memory */
	if (tuner_table_parse(text, strlen(text), &back, err, sizeof err) != 0 ||
	    back.nrules != t.nrules)
		abort();
	for (size_t i = 0; i < t.nrules; i++)
		if (!same_rule(&t.rules[i], &back.rules[i]))
			abort();
	again = tuner_table_format(&back, err, sizeof err);
	if (again && strcmp(again, text) != 0)
		abort();
out:
	free(again);
	free(text);
	tuner_table_free(&back);
	tuner_table_free(&t);
	return 0;
}
