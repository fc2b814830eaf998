/* jsonread.c - the one strict JSON reader (see jsonread.h): parsing with bounds, the
 * field-table dispatcher, arrays and maps, the path of every message. */
#include "jsonread.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"

void jr_init(struct jr *r, const char *origin, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	r->origin = origin ? origin : "JSON";
	r->err = err;
	r->errlen = errlen;
	r->max_string = 4096;
	r->max_entries = 1024;
	r->max_depth = 32;
	if (err && errlen)
		err[0] = '\0';
}

int jr_fail(struct jr *r, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (r->path[0])
		return fs_errf(r->err, r->errlen, "%s: %s: %s", r->origin, r->path, msg);
	return fs_errf(r->err, r->errlen, "%s: %s", r->origin, msg);
}

/* ---- the path ---- */

static int push(struct jr *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int push(struct jr *r, const char *fmt, ...)
{
	size_t len = strlen(r->path);
	va_list ap;

	if (r->depth >= r->max_depth || r->depth >= JR_DEPTH_LIMIT)
		return jr_fail(r, "nested deeper than %d levels", r->max_depth);
	r->mark[r->depth++] = len;
	va_start(ap, fmt);
	if (len < sizeof r->path)
		vsnprintf(r->path + len, sizeof r->path - len, fmt, ap);
	va_end(ap);
	return 0;
}

/* The depth of v's deepest value (a scalar: 0), stopping once past max. */
static int depth_of(const cJSON *v, int max)
{
	int deepest = 0;

	if (!cJSON_IsArray(v) && !cJSON_IsObject(v))
		return 0;
	for (const cJSON *c = v->child; c && deepest <= max; c = c->next) {
		int d = depth_of(c, max - 1) + 1;

		if (d > deepest)
			deepest = d;
	}
	return deepest;
}

int jr_push_key(struct jr *r, const char *key)
{
	char clean[80];
	size_t o = 0, n = key ? strlen(key) : 0;

	for (size_t i = 0; i < n && o < 60; i++) {
		unsigned char ch = (unsigned char)key[i];

		clean[o++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
	}
	clean[o] = '\0';
	return push(r, "%s%s%s", r->path[0] ? "." : "", clean, n > 60 ? "..." : "");
}

int jr_push_index(struct jr *r, size_t i)
{
	return push(r, "[%zu]", i);
}

void jr_pop(struct jr *r)
{
	if (r->depth > 0)
		r->path[r->mark[--r->depth]] = '\0';
}

/* ---- words for messages ---- */

const char *jr_type_name(const cJSON *v)
{
	if (cJSON_IsString(v)) return "a string";
	if (cJSON_IsNumber(v)) return "a number";
	if (cJSON_IsBool(v)) return "a boolean";
	if (cJSON_IsNull(v)) return "null";
	if (cJSON_IsArray(v)) return "an array";
	if (cJSON_IsObject(v)) return "an object";
	return "invalid";
}

char *jr_number(double v, char *buf, size_t len)
{
	if (v == floor(v) && fabs(v) < 1e9) {
		snprintf(buf, len, "%.0f", v);
		return buf;
	}
	snprintf(buf, len, "%g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, len, "%.17g", v);
	return buf;
}

char *jr_quote(const char *s, char *buf, size_t len)
{
	char tmp[64];
	size_t o = 0, n = s ? strlen(s) : 0;

	for (size_t i = 0; i < n && o < 60; i++) {
		unsigned char ch = (unsigned char)s[i];

		tmp[o++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
	}
	tmp[o] = '\0';
	snprintf(buf, len, "'%s%s'", tmp, n > 60 ? "..." : "");
	return buf;
}

/* "a string or null" from a mask. */
static void types_text(unsigned types, char *buf, size_t len)
{
	static const struct { unsigned bit; const char *name; } names[] = {
		{JR_OBJECT, "an object"}, {JR_ARRAY, "an array"}, {JR_STRING, "a string"},
		{JR_NUMBER, "a number"}, {JR_BOOL, "a boolean"}, {JR_NULL, "null"},
	};
	size_t n = 0, k = 0, used = 0;

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		n += (types & names[i].bit) != 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof names / sizeof names[0] && used < len; i++) {
		int w;

		if (!(types & names[i].bit))
			continue;
		k++;
		w = snprintf(buf + used, len - used, "%s%s", k == 1 ? "" : k == n ? " or " : ", ",
		             names[i].name);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

static unsigned type_of(const cJSON *v)
{
	if (cJSON_IsNull(v)) return JR_NULL;
	if (cJSON_IsBool(v)) return JR_BOOL;
	if (cJSON_IsNumber(v)) return JR_NUMBER;
	if (cJSON_IsString(v) && v->valuestring) return JR_STRING;
	if (cJSON_IsArray(v)) return JR_ARRAY;
	if (cJSON_IsObject(v)) return JR_OBJECT;
	return 0;
}

/* ---- parsing ---- */

static size_t line_at(const char *text, size_t len, size_t off)
{
	size_t line = 1;

	for (size_t i = 0; i < off && i < len; i++)
		line += text[i] == '\n';
	return line;
}

cJSON *jr_parse(struct jr *r, const char *text, size_t len)
{
	const char *end = NULL;
	cJSON *doc;

	if (r->max_bytes && len > r->max_bytes) {
		jr_fail(r, "larger than %zu bytes", r->max_bytes);
		return NULL;
	}
	if (memchr(text, '\0', len)) {
		jr_fail(r, "NUL byte in the text: not JSON");
		return NULL;
	}
	doc = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (!doc) {
		const char *at = cJSON_GetErrorPtr();
		size_t off = at && at >= text && at <= text + len ? (size_t)(at - text) : len;

		jr_fail(r, "line %zu: not valid JSON (truncated or corrupt near byte %zu)",
		        line_at(text, len, off), off);
		return NULL;
	}
	for (const char *c = end; c && c < text + len; c++) {
		if (*c != ' ' && *c != '\t' && *c != '\n' && *c != '\r') {
			size_t off = (size_t)(c - text);

			jr_fail(r, "line %zu: text after the JSON value (byte %zu)",
			        line_at(text, len, off), off);
			cJSON_Delete(doc);
			return NULL;
		}
	}
	/* every reader, open tables too: what a table skips is bounded as what it reads */
	if (depth_of(doc, r->max_depth) > r->max_depth) {
		jr_fail(r, "nested deeper than %d levels", r->max_depth);
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
}

/* ---- values ---- */

static int check_number(struct jr *r, const cJSON *v, const struct jr_field *f)
{
	double x = v->valuedouble;
	char a[32], b[32], c[32];

	if (!isfinite(x))
		return jr_fail(r, "not a finite number");
	if ((f->flags & JR_INTEGER) && floor(x) != x)
		return jr_fail(r, "expected an integer, got %s", jr_number(x, a, sizeof a));
	if ((f->lo != 0 || f->hi != 0) && (x < f->lo || x > f->hi))
		return jr_fail(r, "%s is out of range [%s, %s]", jr_number(x, a, sizeof a),
		               jr_number(f->lo, b, sizeof b), jr_number(f->hi, c, sizeof c));
	return 0;
}

static int check_string(struct jr *r, const cJSON *v, const struct jr_field *f)
{
	const char *s = v->valuestring;
	size_t max = f->hi > 0 ? (size_t)f->hi : r->max_string;
	size_t n = strlen(s);

	if (f->store == JR_STRBUF && f->size && max > f->size - 1)
		max = f->size - 1;
	if (n > max)
		return jr_fail(r, "string longer than %zu bytes", max);
	if (!(f->flags & JR_CONTROL))
		for (const char *c = s; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				return jr_fail(r, "control character in the string");
	if (f->words) {
		size_t nw = 0, used = 0;
		char list[512];

		for (size_t i = 0; f->words[i]; i++)
			if (strcmp(s, f->words[i]) == 0)
				return 0;
		while (f->words[nw])
			nw++;
		list[0] = '\0';
		for (size_t i = 0; i < nw && used < sizeof list; i++) {
			int w = snprintf(list + used, sizeof list - used, "%s\"%s\"",
			                 i == 0 ? "" : i + 1 == nw ? " or " : ", ", f->words[i]);

			if (w < 0)
				break;
			used += (size_t)w;
		}
		return jr_fail(r, "expected %s%s", nw > 2 ? "one of " : "", list);
	}
	return 0;
}

static int check_size(struct jr *r, const cJSON *v, const struct jr_field *f)
{
	size_t max = f->hi > 0 ? (size_t)f->hi : r->max_entries, n = 0;

	for (const cJSON *c = v->child; c; c = c->next)
		if (++n > max)
			return jr_fail(r, "more than %zu %s", max, cJSON_IsArray(v) ? "entries" : "keys");
	return 0;
}

static void store(const struct jr_field *f, const cJSON *v, void *dst)
{
	char *at = (char *)dst + f->offset;
	double x = v->valuedouble;

	switch (f->store) {
	case JR_KEEP:
		break;
	case JR_STR:
		*(const char **)(void *)at = v->valuestring;
		break;
	case JR_STRBUF:
		snprintf(at, f->size, "%s", v->valuestring);
		break;
	case JR_DOUBLE:
		*(double *)(void *)at = x;
		break;
	case JR_INT:
		*(int *)(void *)at = (int)x;
		break;
	case JR_LONG:
		*(long *)(void *)at = (long)x;
		break;
	case JR_SIZE:
		*(size_t *)(void *)at = (size_t)x;
		break;
	case JR_U64:
		*(uint64_t *)(void *)at = (uint64_t)x;
		break;
	case JR_BOOLEAN:
		*(bool *)(void *)at = cJSON_IsTrue(v);
		break;
	case JR_ITEM:
		*(const cJSON **)(void *)at = v;
		break;
	}
}

int jr_check(struct jr *r, const cJSON *v, const struct jr_field *f, void *dst)
{
	unsigned t = type_of(v);
	char want[96];
	int rc = 0;

	if (!(t & f->types)) {
		types_text(f->types, want, sizeof want);
		return jr_fail(r, "expected %s, got %s", want, jr_type_name(v));
	}
	if (t == JR_NULL)
		return 0;
	if (t == JR_NUMBER)
		rc = check_number(r, v, f);
	else if (t == JR_STRING)
		rc = check_string(r, v, f);
	else if (t == JR_ARRAY || t == JR_OBJECT)
		rc = check_size(r, v, f);
	if (rc < 0)
		return -1;
	if (dst)
		store(f, v, dst);
	return 1;
}

/* ---- objects and arrays ---- */

/* The keys of a table, listed when there are few enough to help. */
static void keys_text(const struct jr_field *fields, char *buf, size_t len)
{
	size_t n = 0, used = 0;

	buf[0] = '\0';
	while (fields[n].key)
		n++;
	if (n == 0 || n > 10)   /* a longer list says less than the key's name */
		return;
	for (size_t i = 0; i < n && used < len; i++) {
		int w = snprintf(buf + used, len - used, "%s%s%s", i == 0 ? " (expected " : ", ",
		                 fields[i].key, i + 1 == n ? ")" : "");

		if (w < 0)
			break;
		used += (size_t)w;
	}
}

/* Refuse a key met before `it` in obj (cJSON keeps both; a reader that took the first and
 * a writer that took the last would disagree). The caller has pushed it's key. */
static int duplicate(struct jr *r, const cJSON *obj, const cJSON *it)
{
	for (const cJSON *p = obj->child; p != it; p = p->next)
		if (strcmp(p->string, it->string) == 0)
			return jr_fail(r, "duplicate key");
	return 0;
}

/* Objects and their keys, common to jr_dispatch and jr_map. */
static int object_ok(struct jr *r, const cJSON *obj, size_t max)
{
	size_t n = 0;

	if (!cJSON_IsObject(obj))
		return jr_fail(r, "expected an object, got %s", jr_type_name(obj));
	if (max == 0)
		max = r->max_entries;
	/* bound the quadratic duplicate check before a hostile file makes it hang */
	for (const cJSON *it = obj->child; it; it = it->next) {
		if (!it->string)
			return jr_fail(r, "member without a key");
		if (++n > max)
			return jr_fail(r, "more than %zu keys", max);
	}
	return 0;
}

int jr_dispatch(struct jr *r, const cJSON *obj, const struct jr_field *fields, bool open,
                void *dst, uint64_t *seen)
{
	uint64_t got = 0;
	char expected[256];

	if (seen)
		*seen = 0;
	if (object_ok(r, obj, 0) < 0)
		return -1;
	for (const cJSON *it = obj->child; it; it = it->next) {
		const struct jr_field *f = NULL;
		size_t i;
		int rc;

		for (i = 0; fields[i].key && i < 64; i++) {
			if (strcmp(fields[i].key, it->string) == 0) {
				f = &fields[i];
				break;
			}
		}
		if (jr_push_key(r, it->string) < 0)
			return -1;
		rc = duplicate(r, obj, it);
		if (rc == 0 && !f && !open) {
			keys_text(fields, expected, sizeof expected);
			rc = jr_fail(r, "unknown key%s", expected);
		}
		if (rc == 0 && f) {
			rc = jr_check(r, it, f, dst);
			if (rc == 1) {
				got |= (uint64_t)1 << i;
				rc = f->handler ? f->handler(r, it, dst) : 0;
			}
		}
		jr_pop(r);
		if (rc < 0)
			return -1;
	}
	for (size_t i = 0; fields[i].key && i < 64; i++) {
		int rc = 0;

		if (!(fields[i].flags & JR_REQUIRED) ||
		    cJSON_GetObjectItemCaseSensitive(obj, fields[i].key))
			continue;
		if (jr_push_key(r, fields[i].key) < 0)
			return -1;
		rc = jr_fail(r, "missing");
		jr_pop(r);
		return rc;
	}
	if (seen)
		*seen = got;
	return 0;
}

int jr_each(struct jr *r, const cJSON *v, size_t max,
            int (*each)(struct jr *r, const cJSON *elem, size_t i, void *ctx), void *ctx)
{
	size_t i = 0;

	if (!cJSON_IsArray(v))
		return jr_fail(r, "expected an array, got %s", jr_type_name(v));
	if (max == 0)
		max = r->max_entries;
	if ((size_t)cJSON_GetArraySize(v) > max)
		return jr_fail(r, "more than %zu entries", max);
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		int rc;

		if (jr_push_index(r, i) < 0)
			return -1;
		rc = each(r, e, i, ctx);
		jr_pop(r);
		if (rc < 0)
			return -1;
	}
	return 0;
}

int jr_map(struct jr *r, const cJSON *v, size_t max,
           int (*each)(struct jr *r, const char *key, const cJSON *val, void *ctx), void *ctx)
{
	if (object_ok(r, v, max) < 0)
		return -1;
	for (const cJSON *it = v->child; it; it = it->next) {
		int rc;

		if (jr_push_key(r, it->string) < 0)
			return -1;
		rc = duplicate(r, v, it);
		if (rc == 0)
			rc = each(r, it->string, it, ctx);
		jr_pop(r);
		if (rc < 0)
			return -1;
	}
	return 0;
}
