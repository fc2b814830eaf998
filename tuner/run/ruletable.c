/* ruletable.c - a candidate's per-size rules as the plugin's table (plugin/table.h
 * formats it, so the tuner writes exactly what the plugin parses), written
 * content-addressed under the session folder, and as best.rules. */
#include "run/ruletable.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "ncclvars.h"
#include "table.h"

/* One size's choices, gathered from the rule dimensions. */
struct size_rule { uint64_t bytes; const char *v[SPACE_RULE_CTAS + 1]; };

/* The sizes of sp's rule dimensions, in dimension order, with p's levels (p NULL: all
 * unset). Returns how many (at most max). */
static size_t gather(const space *sp, const struct point *p, struct size_rule *out,
                     size_t max)
{
	size_t n = 0;

	for (size_t d = 0; d < space_dims(sp); d++) {
		uint64_t b;
		enum space_rule_kind k = space_rule_of(sp, d, &b);
		size_t i = 0;

		if (k == SPACE_RULE_NONE)
			continue;
		while (i < n && out[i].bytes != b)
			i++;
		if (i == n) {
			if (n == max)
				continue;
			memset(&out[n], 0, sizeof out[n]);
			out[n++].bytes = b;
		}
		out[i].v[k] = p ? space_level_text(sp, d, p->lv[d]) : NULL;
	}
	return n;
}

static bool any_set(const struct size_rule *r)
{
	return r->v[SPACE_RULE_ALGO] || r->v[SPACE_RULE_PROTO] || r->v[SPACE_RULE_CTAS];
}

int ruletable_text(const space *sp, const struct point *p, char **text, char *err,
                   size_t errlen)
{
	struct size_rule sizes[SPACE_MAX_DIMS];
	struct tuner_rule rules[SPACE_MAX_DIMS];
	struct tuner_table t = {rules, 0};
	size_t n = gather(sp, p, sizes, SPACE_MAX_DIMS);
	char why[256];

	*text = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct size_rule *s = &sizes[i];
		struct tuner_rule *r = &rules[t.nrules];
		const char *a = s->v[SPACE_RULE_ALGO], *pr = s->v[SPACE_RULE_PROTO];
		long long ctas = 0;

		if (!any_set(s))
			continue;
		memset(r, 0, sizeof *r);
		r->coll = TUNER_COLL_ALLREDUCE;
		r->nranks = TUNER_ANY;
		r->nnodes = TUNER_ANY;
		r->min_bytes = r->max_bytes = s->bytes;
		/* ncclvars' word order is NCCL's own numbering (NCCL_ALGO_*, NCCL_PROTO_*) */
		r->algo = a ? ncclvars_word_find(NCCLVARS_ALGOS, a, strlen(a)) : TUNER_ANY;
		r->proto = pr ? ncclvars_word_find(NCCLVARS_PROTOS, pr, strlen(pr)) : TUNER_ANY;
		if (s->v[SPACE_RULE_CTAS] && !ncclvars_parse_decimal(s->v[SPACE_RULE_CTAS], &ctas))
			ctas = -1;
		r->ctas = (int)ctas;
		if (r->algo == -1 && a)
			r->algo = -2;   /* refused by the check below */
		t.nrules++;
	}
	if (t.nrules == 0)
		return 0;
	*text = tuner_table_format(&t, why, sizeof why);
	if (!*text)
		return fs_errf(err, errlen, "the per-size rules: %s", why);
	return 0;
}

/* FNV-1a, 64 bits: a name for the table's content (not a security measure: the file is
 * the session's own and is re-read by the plugin, which checks everything). */
static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

int ruletable_write_in(const char *dir, const char *sub, const char *ext, const char *text,
                       char *path, size_t pathlen, char *err, size_t errlen)
{
	char folder[PATH_MAX], abs[PATH_MAX], e[512], *old;
	size_t len = strlen(text), oldlen = 0;
	int n;

	n = snprintf(folder, sizeof folder, "%s/%s", dir, sub);
	if (n < 0 || (size_t)n >= sizeof folder)
		return fs_errf(err, errlen, "%s: folder name too long", dir);
	if (fs_mkdirs(folder, e, sizeof e) != 0)
		return fs_errf(err, errlen, "%s", e);
	if (!realpath(folder, abs))
		return fs_errf(err, errlen, "%s: %s", folder, strerror(errno));
	n = snprintf(path, pathlen, "%s/%016llx%s", abs, (unsigned long long)fnv1a(text), ext);
	if (n < 0 || (size_t)n >= pathlen)
		return fs_errf(err, errlen, "%s: path too long", abs);
	old = fs_read_regular(path, len + 1, &oldlen, e, sizeof e);
	if (old && oldlen == len && memcmp(old, text, len) == 0) {
		free(old);
		return 0;
	}
	free(old);
	if (fs_write_atomic(path, text, len, 0644, e, sizeof e) != 0)
		return fs_errf(err, errlen, "%s", e);
	return 0;
}

int ruletable_write(const char *dir, const char *text, char *path, size_t pathlen,
                    char *err, size_t errlen)
{
	return ruletable_write_in(dir, "tables", ".table", text, path, pathlen, err, errlen);
}

/* A word or null into o under key. */
static bool add_word(cJSON *o, const char *key, const char *v)
{
	return v ? cJSON_AddStringToObject(o, key, v) != NULL : cJSON_AddNullToObject(o, key) != NULL;
}

cJSON *ruletable_rules_json(const space *sp, const struct point *p)
{
	struct size_rule sizes[SPACE_MAX_DIMS];
	size_t n = gather(sp, p, sizes, SPACE_MAX_DIMS);
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < n; i++) {
		cJSON *o;
		const char *c = sizes[i].v[SPACE_RULE_CTAS];
		long long ctas = 0;
		bool ok;

		if (!any_set(&sizes[i]))
			continue;
		o = cJSON_CreateObject();
		ok = o && cJSON_AddItemToArray(a, o);
		if (!ok)
			cJSON_Delete(o);
		ok = ok && cJSON_AddNumberToObject(o, "bytes", (double)sizes[i].bytes) &&
		     add_word(o, "algo", sizes[i].v[SPACE_RULE_ALGO]) &&
		     add_word(o, "proto", sizes[i].v[SPACE_RULE_PROTO]);
		if (ok && c && ncclvars_parse_decimal(c, &ctas))
			ok = cJSON_AddNumberToObject(o, "ctas", (double)ctas) != NULL;
		else if (ok)
			ok = cJSON_AddNullToObject(o, "ctas") != NULL;
		if (!ok) {
			cJSON_Delete(a);
			a = NULL;
		}
	}
	return a;
}
