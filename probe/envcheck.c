/* envcheck.c - early checks of NCCL variables (see envcheck.h), over common/ncclvars'
 * table: every variable of role "tune" is judged by its rule the way NCCL reads it.
 * NCCL_ALGO / NCCL_PROTO go through the one tokenizer of NCCL's list syntax
 * (ncclvars_list_parse, graph/tuning.cc parseList), so what NCCL refuses is refused
 * here; text after a second ':' or a ':' next to nothing, which NCCL drops without a
 * word, is refused too. Empty entries and items, which NCCL skips, pass. */
#include "envcheck.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "ncclvars.h"

#define SKIP_HINT "--no-env-check skips this check"

/* What NCCL reads through strtoll(str, NULL, 0) as the whole text (misc/param.cc:82). */
static bool is_integer(const char *s)
{
	char *end;

	if (!*s || isspace((unsigned char)*s))
		return false;
	errno = 0;
	(void)strtoll(s, &end, 0);
	return errno == 0 && *end == '\0';
}

static int check_list(const struct ncclvar *v, const char *value, char *err, size_t errlen)
{
	struct ncclvars_list l;
	char why[320];

	if (ncclvars_list_parse(value, v->words, &l) == 0 &&
	    !(l.lint & NCCLVARS_LINT_STRAY_COLON))
		return 0;
	ncclvars_list_explain(&l, value, v->words, NCCLVARS_LINT_STRAY_COLON, why, sizeof why);
	return fs_errf(err, errlen, "%s=%s: %s (%s)", v->name, value, why, SKIP_HINT);
}

/* ncclGetLevel (graph/paths.cc:229-246) takes an exact word or any leading digit,
 * clipping numbers above 5: only the words and 0..5 read as written. */
static int check_word(const struct ncclvar *v, const char *value, char *err, size_t errlen)
{
	char accepted[160];

	if (ncclvars_word_find(v->words, value, strlen(value)) >= 0)
		return 0;
	if (v->legacy_numbers && strlen(value) == 1 && value[0] >= '0' &&
	    value[0] <= '0' + NCCLVARS_PATH_LEGACY_MAX)
		return 0;
	ncclvars_word_join(v->words, accepted, sizeof accepted);
	if (v->legacy_numbers)
		return fs_errf(err, errlen, "%s=%s: not one of %s (case-sensitive) or 0..%d", v->name,
		               value, accepted, NCCLVARS_PATH_LEGACY_MAX);
	return fs_errf(err, errlen, "%s=%s: not one of %s (NCCL would silently use %s)", v->name,
	               value, accepted, ncclvars_word_name(v->words, 0));
}

const char *envcheck_getenv(const char *name, void *arg)
{
	(void)arg;
	return getenv(name);
}

int envcheck_run(envcheck_get_fn get, void *arg, char *err, size_t errlen)
{
	for (size_t i = 0; i < ncclvars_count(); i++) {
		const struct ncclvar *v = ncclvars_at(i);
		const char *value;

		if (v->role != NCCLVARS_TUNE)
			continue;
		value = get(v->name, arg);
		if (!value)
			continue;
		switch (v->rule) {
		case NCCLVARS_RULE_LIST:
			if (check_list(v, value, err, errlen) != 0)
				return -1;
			break;
		case NCCLVARS_RULE_INT:
		case NCCLVARS_RULE_POW2:
		case NCCLVARS_RULE_BOOL:
			if (!is_integer(value))
				return fs_errf(err, errlen, "%s=%s: not an integer (NCCL would silently use "
				               "its default)", v->name, value);
			break;
		case NCCLVARS_RULE_WORD:
			if (check_word(v, value, err, errlen) != 0)
				return -1;
			break;
		case NCCLVARS_RULE_STRING:
			break;
		}
	}
	return 0;
}
