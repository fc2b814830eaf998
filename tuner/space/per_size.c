/* per_size.c - expanding a space's per_size block (docs/formats.md, "per_size") into one
 * set of dimensions per tuned size, "rule.<bytes>.algo|proto|ctas", through the space's
 * own JSON form: the expanded space is a plain space (its journal header and
 * results.json name the rule dimensions in params), parsed and checked like any other. */
#include "space/space.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"

/* Add the rule dimensions of `bytes` to params from the block. Returns 0, -1 (memory). */
static int add_size(cJSON *params, const cJSON *block, uint64_t bytes)
{
	char name[64];

	for (int k = SPACE_RULE_ALGO; k <= SPACE_RULE_CTAS; k++) {
		const char *kind = space_rule_kind_word((enum space_rule_kind)k);
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(block, kind);
		cJSON *copy;

		if (!t)
			continue;
		snprintf(name, sizeof name, "rule.%llu.%s", (unsigned long long)bytes, kind);
		copy = cJSON_Duplicate(t, 1);
		if (!copy || !cJSON_AddItemToObject(params, name, copy)) {
			cJSON_Delete(copy);
			return -1;
		}
	}
	return 0;
}

int space_expand_per_size(const space *sp, const uint64_t *bytes, size_t n, space **out,
                          char *err, size_t errlen)
{
	char *text = space_to_json(sp), *newtext = NULL, perr[512];
	cJSON *root = text ? cJSON_Parse(text) : NULL, *params, *block;
	int rc = -1;

	*out = NULL;
	params = root ? cJSON_GetObjectItemCaseSensitive(root, "params") : NULL;
	if (!params) {
		fs_errf(err, errlen, "out of memory expanding the per_size block");
		goto out;
	}
	block = cJSON_DetachItemFromObjectCaseSensitive(root, "per_size");
	for (size_t i = 0; block && i < n; i++) {
		if (add_size(params, block, bytes[i]) < 0) {
			cJSON_Delete(block);
			fs_errf(err, errlen, "out of memory expanding the per_size block");
			goto out;
		}
	}
	if (block && (size_t)cJSON_GetArraySize(params) > SPACE_MAX_DIMS) {
		fs_errf(err, errlen, "per_size: %zu tuned size(s) x %d choice(s) plus %zu variable(s) "
		        "make %d dimensions, at most %d: tune fewer sizes or name fewer choices",
		        n, cJSON_GetArraySize(block), space_dims(sp), cJSON_GetArraySize(params),
		        SPACE_MAX_DIMS);
		cJSON_Delete(block);
		goto out;
	}
	cJSON_Delete(block);
	newtext = cJSON_PrintUnformatted(root);
	if (!newtext) {
		fs_errf(err, errlen, "out of memory expanding the per_size block");
		goto out;
	}
	if (space_parse(newtext, strlen(newtext), "space with per-size dimensions", out, perr,
	                sizeof perr) < 0) {
		fs_errf(err, errlen, "%s", perr);
		goto out;
	}
	rc = 0;
out:
	free(newtext);
	cJSON_Delete(root);
	free(text);
	return rc;
}
