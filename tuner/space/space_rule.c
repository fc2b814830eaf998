/* space_rule.c - the per-size dimensions of a space (docs/formats.md, "per_size"):
 * names "rule.<bytes>.algo|proto|ctas" and their values, which the plugin table carries
 * rather than the environment. Words are NCCL's (common/ncclvars), written the canonical
 * way; a CTA count is 1..64 (the plugin table's limit). */
#include "space/space.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "ncclvars.h"
#include "table.h"   /* plugin/: TUNER_TABLE_MAX_CTAS, what a rule may ask */

#define RULE_PREFIX "rule."
#define RULE_MAX_BYTES 9223372036854775807ull

static const char *const kind_words[] = {NULL, "algo", "proto", "ctas"};

const char *space_rule_kind_word(enum space_rule_kind k)
{
	return k > SPACE_RULE_NONE && k <= SPACE_RULE_CTAS ? kind_words[k] : NULL;
}

enum space_rule_kind space_rule_kind_find(const char *word)
{
	for (int k = SPACE_RULE_ALGO; k <= SPACE_RULE_CTAS; k++)
		if (strcmp(word, kind_words[k]) == 0)
			return (enum space_rule_kind)k;
	return SPACE_RULE_NONE;
}

bool space_rule_named(const char *name)
{
	return strncmp(name, RULE_PREFIX, sizeof RULE_PREFIX - 1) == 0;
}

int space_rule_name_parse(const char *name, uint64_t *bytes, enum space_rule_kind *kind,
                          char *why, size_t whylen)
{
	const char *p = name + sizeof RULE_PREFIX - 1, *dot;
	uint64_t b = 0;

	if (!space_rule_named(name))
		return fs_errf(why, whylen, "not a per-size dimension (rule.<bytes>.<kind>)");
	dot = strchr(p, '.');
	if (!dot || dot == p || (*p == '0'))
		return fs_errf(why, whylen, "expected rule.<bytes>.algo|proto|ctas, bytes a "
		               "decimal integer >= 1");
	for (const char *c = p; c < dot; c++) {
		if (*c < '0' || *c > '9' || b > (RULE_MAX_BYTES - (uint64_t)(*c - '0')) / 10)
			return fs_errf(why, whylen, "expected rule.<bytes>.algo|proto|ctas, bytes a "
			               "decimal integer in 1..2^63-1");
		b = b * 10 + (uint64_t)(*c - '0');
	}
	*kind = space_rule_kind_find(dot + 1);
	if (*kind == SPACE_RULE_NONE)
		return fs_errf(why, whylen, "unknown per-size choice '%s' (algo, proto or ctas)",
		               dot + 1);
	*bytes = b;
	return 0;
}

int space_rule_value_check(enum space_rule_kind kind, const char *text, const char **canon,
                           char *why, size_t whylen)
{
	enum ncclvars_wordlist w = kind == SPACE_RULE_ALGO ? NCCLVARS_ALGOS : NCCLVARS_PROTOS;
	long long n;
	char known[160];
	int i;

	*canon = text;
	if (kind == SPACE_RULE_CTAS) {
		if (!ncclvars_parse_decimal(text, &n) || n < 1 || n > TUNER_TABLE_MAX_CTAS)
			return fs_errf(why, whylen, "'%s' is not a CTA count in 1..%d (or null for "
			               "NCCL's)", text, TUNER_TABLE_MAX_CTAS);
		return 0;
	}
	i = ncclvars_word_find(w, text, strlen(text));
	if (i < 0)
		return fs_errf(why, whylen, "unknown %s '%s' (%s, or null for NCCL's)",
		               ncclvars_word_what(w), text, ncclvars_word_join(w, known, sizeof known));
	*canon = ncclvars_word_name(w, (size_t)i);
	return 0;
}
