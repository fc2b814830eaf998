/* test_jsonread.c - the one strict JSON reader (common/jsonread): every rule it enforces,
 * every error path, and the message format "ORIGIN: a.b[2].c: why". */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "../check.h"
#include "jsonread.h"

struct dst {
	const char *name;
	char buf[8];
	double x;
	int i;
	long l;
	size_t z;
	uint64_t u;
	bool b;
	const cJSON *item;
	int handled;
	size_t nitems;
	double items[4];
};

#define D(f) offsetof(struct dst, f)

static const char *const colours[] = {"red", "green", "blue", NULL};
static const char *const one_word[] = {"only", NULL};
static const char *const two_words[] = {"yes", "no", NULL};

static int count_handled(struct jr *r, const cJSON *v, void *dst)
{
	struct dst *d = dst;

	(void)r;
	(void)v;
	d->handled++;
	return 0;
}

static int refuse_seven(struct jr *r, const cJSON *v, void *dst)
{
	(void)dst;
	if (v->valuedouble == 7)
		return jr_fail(r, "seven is not allowed here");
	return 0;
}

static const struct jr_field item_field = {
	"", JR_NUMBER, JR_INTEGER, 0, 100, NULL, JR_KEEP, 0, 0, NULL,
};

static int take_item(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct dst *d = ctx;

	if (jr_check(r, v, &item_field, NULL) < 0)
		return -1;
	d->items[i] = v->valuedouble;
	d->nitems = i + 1;
	return 0;
}

static int take_items(struct jr *r, const cJSON *v, void *dst)
{
	return jr_each(r, v, 4, take_item, dst);
}

static const struct jr_field inner_fields[] = {
	{"deep", JR_NUMBER, JR_REQUIRED, 0, 10, NULL, JR_KEEP, 0, 0, refuse_seven},
	JR_END,
};

static int take_inner(struct jr *r, const cJSON *v, void *dst)
{
	(void)dst;
	return jr_dispatch(r, v, inner_fields, false, NULL, NULL);
}

static const struct jr_field fields[] = {
	{"name", JR_STRING, JR_REQUIRED, 0, 10, NULL, JR_STR, D(name), 0, NULL},
	{"buf", JR_STRING, 0, 0, 0, NULL, JR_STRBUF, D(buf), sizeof ((struct dst *)0)->buf, NULL},
	{"x", JR_NUMBER | JR_NULL, 0, -1, 1, NULL, JR_DOUBLE, D(x), 0, NULL},
	{"i", JR_NUMBER, JR_INTEGER, 0, 1e6, NULL, JR_INT, D(i), 0, NULL},
	{"l", JR_NUMBER, JR_INTEGER, 0, 0, NULL, JR_LONG, D(l), 0, NULL},
	{"z", JR_NUMBER, JR_INTEGER, 0, 1e12, NULL, JR_SIZE, D(z), 0, NULL},
	{"u", JR_NUMBER, JR_INTEGER, 0, 1e15, NULL, JR_U64, D(u), 0, NULL},
	{"b", JR_BOOL, 0, 0, 0, NULL, JR_BOOLEAN, D(b), 0, count_handled},
	{"colour", JR_STRING, 0, 0, 0, colours, JR_KEEP, 0, 0, NULL},
	{"one", JR_STRING, 0, 0, 0, one_word, JR_KEEP, 0, 0, NULL},
	{"two", JR_STRING, 0, 0, 0, two_words, JR_KEEP, 0, 0, NULL},
	{"text", JR_STRING, JR_CONTROL, 0, 0, NULL, JR_KEEP, 0, 0, NULL},
	{"items", JR_ARRAY, 0, 0, 4, NULL, JR_KEEP, 0, 0, take_items},
	{"inner", JR_OBJECT | JR_NULL, 0, 0, 2, NULL, JR_ITEM, D(item), 0, take_inner},
	{"any", JR_ANY, 0, 0, 0, NULL, JR_KEEP, 0, 0, NULL},
	JR_END,
};

/* Parse and dispatch `text` with the table above; the message, or "" when it reads.
 * The document lives until the next call (d's strings point into it). */
static const char *run(const char *text, struct dst *d, uint64_t *seen)
{
	static char err[1024];
	static cJSON *doc;
	struct jr r;

	cJSON_Delete(doc);
	memset(d, 0, sizeof *d);
	jr_init(&r, "f.json", err, sizeof err);
	doc = text ? jr_parse(&r, text, strlen(text)) : NULL;
	if (doc && jr_dispatch(&r, doc, fields, false, d, seen) == 0)
		err[0] = '\0';
	CHECK_INT(r.depth, 0);                  /* every push was popped */
	return err;
}

static const char *msg(const char *text)
{
	struct dst d;

	return run(text, &d, NULL);
}

static void test_stores(void)
{
	struct dst d;
	uint64_t seen = 0;

	CHECK_STR(run("{\"name\": \"n\", \"buf\": \"1234567\", \"x\": 0.5, \"i\": 42, \"l\": -3, "
	              "\"z\": 4294967296, \"u\": 123456789012345, \"b\": true, \"colour\": "
	              "\"green\", \"text\": \"a\\nb\", \"items\": [1, 2, 3], \"inner\": {\"deep\": 1},"
	              " \"any\": [null]}", &d, &seen), "");
	CHECK_STR(d.name, "n");
	CHECK_STR(d.buf, "1234567");
	CHECK_NEAR(d.x, 0.5, 0);
	CHECK_INT(d.i, 42);
	CHECK_INT(d.l, -3);
	CHECK_INT(d.z, 4294967296ULL);
	CHECK_INT(d.u, 123456789012345ULL);
	CHECK(d.b);
	CHECK_INT(d.handled, 1);
	CHECK_INT(d.nitems, 3);
	CHECK_NEAR(d.items[2], 3, 0);
	CHECK(d.item && cJSON_IsObject(d.item));
	CHECK_INT(seen, 0x79ff);                /* every field but "one" and "two" */
	/* null within the mask is "absent": nothing stored, no bit, no handler */
	CHECK_STR(run("{\"name\": \"n\", \"x\": null, \"inner\": null}", &d, &seen), "");
	CHECK_INT(seen, 1);
	CHECK(d.item == NULL);
	/* false is stored too */
	CHECK_STR(run("{\"name\": \"n\", \"b\": false}", &d, &seen), "");
	CHECK(!d.b);
	CHECK_INT(d.handled, 1);
}

static void test_document(void)
{
	static char err[256];
	struct jr r;
	cJSON *doc;

	CHECK_STR(msg(""), "f.json: line 1: not valid JSON (truncated or corrupt near byte 0)");
	CHECK_STR(msg("{\n\"name\": \"a\",\n}"),
	          "f.json: line 3: not valid JSON (truncated or corrupt near byte 15)");
	CHECK_STR(msg("{\"name\": \"a\"} {}"), "f.json: line 1: text after the JSON value (byte 14)");
	CHECK_STR(msg("{\"name\": \"a\"}\n\t\r "), "");         /* JSON whitespace may follow */
	CHECK_STR(msg("{\"name\": \"a\"}\v"), "f.json: line 1: text after the JSON value (byte 13)");
	CHECK_STR(msg("[1]"), "f.json: expected an object, got an array");
	CHECK_STR(msg("{\"name\": NaN}"),
	          "f.json: line 1: not valid JSON (truncated or corrupt near byte 9)");
	/* NUL anywhere, and the size bound */
	jr_init(&r, "f.json", err, sizeof err);
	CHECK(jr_parse(&r, "{}\0", 3) == NULL);
	CHECK_STR(err, "f.json: NUL byte in the text: not JSON");
	r.max_bytes = 4;
	CHECK(jr_parse(&r, "{ }  ", 5) == NULL);
	CHECK_STR(err, "f.json: larger than 4 bytes");
	doc = jr_parse(&r, "{ } ", 4);
	CHECK(doc != NULL);
	cJSON_Delete(doc);
	/* an origin is always named */
	jr_init(&r, NULL, err, sizeof err);
	CHECK(jr_parse(&r, "x", 1) == NULL);
	CHECK_CONTAINS(err, "JSON: line 1");
}

static void test_keys(void)
{
	CHECK_STR(msg("{}"), "f.json: name: missing");
	CHECK_STR(msg("{\"name\": \"a\", \"nmae\": 1}"), "f.json: nmae: unknown key");
	CHECK_STR(msg("{\"name\": \"a\", \"name\": \"b\"}"), "f.json: name: duplicate key");
	CHECK_STR(msg("{\"name\": \"a\", \"inner\": {\"deep\": 1, \"deep\": 2}}"),
	          "f.json: inner.deep: duplicate key");
	CHECK_STR(msg("{\"name\": \"a\", \"inner\": {\"deep\": 1, \"x\": 2}}"),
	          "f.json: inner.x: unknown key (expected deep)");
	CHECK_STR(msg("{\"name\": \"a\", \"inner\": {}}"), "f.json: inner.deep: missing");
	CHECK_STR(msg("{\"name\": \"a\", \"inner\": {\"deep\": 7}}"),
	          "f.json: inner.deep: seven is not allowed here");
	CHECK_STR(msg("{\"name\": \"a\", \"inner\": {\"a\": 1, \"b\": 2, \"c\": 3}}"),
	          "f.json: inner: more than 2 keys");
	/* hostile keys are cleaned for the message */
	CHECK_STR(msg("{\"name\": \"a\", \"x\\u0001y\": 1}"), "f.json: x?y: unknown key");
	CHECK_STR(msg("{\"name\": \"a\", \"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\": 1}"),
	          "f.json: kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk...: unknown key");
}

static void test_types(void)
{
	CHECK_STR(msg("{\"name\": 3}"), "f.json: name: expected a string, got a number");
	CHECK_STR(msg("{\"name\": null}"), "f.json: name: expected a string, got null");
	CHECK_STR(msg("{\"name\": \"a\", \"x\": \"1\"}"),
	          "f.json: x: expected a number or null, got a string");
	CHECK_STR(msg("{\"name\": \"a\", \"b\": 1}"), "f.json: b: expected a boolean, got a number");
	CHECK_STR(msg("{\"name\": \"a\", \"items\": {}}"),
	          "f.json: items: expected an array, got an object");
	CHECK_STR(msg("{\"name\": \"a\", \"inner\": []}"),
	          "f.json: inner: expected an object or null, got an array");
	CHECK_STR(msg("{\"name\": \"a\", \"any\": {\"q\": [1]}}"), "");
}

static void test_numbers(void)
{
	CHECK_STR(msg("{\"name\": \"a\", \"x\": 1e999}"), "f.json: x: not a finite number");
	CHECK_STR(msg("{\"name\": \"a\", \"x\": 2}"), "f.json: x: 2 is out of range [-1, 1]");
	CHECK_STR(msg("{\"name\": \"a\", \"x\": -1.5}"), "f.json: x: -1.5 is out of range [-1, 1]");
	CHECK_STR(msg("{\"name\": \"a\", \"i\": 1.5}"), "f.json: i: expected an integer, got 1.5");
	CHECK_STR(msg("{\"name\": \"a\", \"i\": 1000001}"),
	          "f.json: i: 1000001 is out of range [0, 1000000]");
	CHECK_STR(msg("{\"name\": \"a\", \"z\": 1e13}"),
	          "f.json: z: 1e+13 is out of range [0, 1e+12]");
	CHECK_STR(msg("{\"name\": \"a\", \"l\": -99999999}"), "");   /* no range: any finite */
	CHECK_STR(msg("{\"name\": \"a\", \"l\": -1e999}"), "f.json: l: not a finite number");
}

static void test_strings(void)
{
	CHECK_STR(msg("{\"name\": \"0123456789\"}"), "");
	CHECK_STR(msg("{\"name\": \"0123456789x\"}"), "f.json: name: string longer than 10 bytes");
	CHECK_STR(msg("{\"name\": \"a\", \"buf\": \"12345678\"}"),
	          "f.json: buf: string longer than 7 bytes");
	CHECK_STR(msg("{\"name\": \"a\\tb\"}"), "f.json: name: control character in the string");
	CHECK_STR(msg("{\"name\": \"a\\u007fb\"}"), "f.json: name: control character in the string");
	CHECK_STR(msg("{\"name\": \"a\", \"text\": \"\\u0001\"}"), "");   /* JR_CONTROL */
	CHECK_STR(msg("{\"name\": \"a\", \"colour\": \"pink\"}"),
	          "f.json: colour: expected one of \"red\", \"green\" or \"blue\"");
	CHECK_STR(msg("{\"name\": \"a\", \"one\": \"other\"}"), "f.json: one: expected \"only\"");
	CHECK_STR(msg("{\"name\": \"a\", \"two\": \"maybe\"}"),
	          "f.json: two: expected \"yes\" or \"no\"");
	CHECK_STR(msg("{\"name\": \"a\", \"colour\": \"Red\"}"),
	          "f.json: colour: expected one of \"red\", \"green\" or \"blue\"");
}

static void test_arrays(void)
{
	CHECK_STR(msg("{\"name\": \"a\", \"items\": [1, 2, 3, 4, 5]}"),
	          "f.json: items: more than 4 entries");
	CHECK_STR(msg("{\"name\": \"a\", \"items\": [1, 2.5]}"),
	          "f.json: items[1]: expected an integer, got 2.5");
	CHECK_STR(msg("{\"name\": \"a\", \"items\": [1, \"2\"]}"),
	          "f.json: items[1]: expected a number, got a string");
	CHECK_STR(msg("{\"name\": \"a\", \"items\": [101]}"),
	          "f.json: items[0]: 101 is out of range [0, 100]");
	CHECK_STR(msg("{\"name\": \"a\", \"items\": []}"), "");
}

static int map_each(struct jr *r, const char *key, const cJSON *v, void *ctx)
{
	int *n = ctx;

	if (strcmp(key, "bad") == 0)
		return jr_fail(r, "refused (%s)", jr_type_name(v));
	(*n)++;
	return 0;
}

static const char *map_msg(const char *text, size_t max, int *n)
{
	static char err[512];
	struct jr r;
	cJSON *doc;

	*n = 0;
	jr_init(&r, "m.json", err, sizeof err);
	doc = jr_parse(&r, text, strlen(text));
	if (doc && jr_push_key(&r, "env") == 0) {
		if (jr_map(&r, doc, max, map_each, n) == 0)
			err[0] = '\0';
		jr_pop(&r);
	}
	cJSON_Delete(doc);
	return err;
}

static void test_map(void)
{
	int n;

	CHECK_STR(map_msg("{\"A\": 1, \"B\": 2}", 0, &n), "");
	CHECK_INT(n, 2);
	CHECK_STR(map_msg("{\"A\": 1, \"A\": 2}", 0, &n), "m.json: env.A: duplicate key");
	CHECK_STR(map_msg("{\"A\": 1, \"B\": 2, \"C\": 3}", 2, &n), "m.json: env: more than 2 keys");
	CHECK_STR(map_msg("{\"A\": 1, \"bad\": []}", 0, &n), "m.json: env.bad: refused (an array)");
	CHECK_STR(map_msg("[]", 0, &n), "m.json: env: expected an object, got an array");
}

static int nest(struct jr *r, int levels)
{
	int rc;

	if (levels == 0)
		return 0;
	if (jr_push_index(r, (size_t)levels) < 0)
		return -1;
	rc = nest(r, levels - 1);
	jr_pop(r);
	return rc;
}

static void test_path_and_depth(void)
{
	char err[256], big[600];
	struct jr r;

	jr_init(&r, "p.json", err, sizeof err);
	CHECK_INT(jr_fail(&r, "top %d", 1), -1);
	CHECK_STR(err, "p.json: top 1");
	CHECK_INT(jr_push_key(&r, "a"), 0);
	CHECK_INT(jr_push_key(&r, "b"), 0);
	CHECK_INT(jr_push_index(&r, 2), 0);
	CHECK_INT(jr_push_key(&r, "c"), 0);
	jr_fail(&r, "why");
	CHECK_STR(err, "p.json: a.b[2].c: why");
	jr_pop(&r);
	jr_pop(&r);
	jr_fail(&r, "why");
	CHECK_STR(err, "p.json: a.b: why");
	jr_pop(&r);
	jr_pop(&r);
	jr_pop(&r);                         /* one too many: harmless */
	CHECK_INT(r.depth, 0);
	CHECK_STR(r.path, "");
	/* depth */
	r.max_depth = 3;
	CHECK_INT(nest(&r, 3), 0);
	CHECK_INT(nest(&r, 4), -1);
	CHECK_STR(err, "p.json: [4][3][2]: nested deeper than 3 levels");
	CHECK_INT(r.depth, 0);
	/* jr_parse bounds the whole document, keys no table reads included */
	{
		static const char ok[] = "{\"a\": {\"b\": [1]}}";
		static const char deep[] = "{\"known\": 1, \"unknown\": {\"x\": [[{\"y\": 1}]]}}";
		cJSON *doc;

		jr_init(&r, "p.json", err, sizeof err);
		r.max_depth = 3;
		doc = jr_parse(&r, ok, sizeof ok - 1);
		CHECK(doc != NULL);
		cJSON_Delete(doc);
		CHECK(jr_parse(&r, deep, sizeof deep - 1) == NULL);
		CHECK_STR(err, "p.json: nested deeper than 3 levels");
	}
	/* a path longer than the buffer is cut, never overrun, and pops back */
	jr_init(&r, "p.json", err, sizeof err);
	memset(big, 'k', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	for (int i = 0; i < 20; i++)
		CHECK_INT(jr_push_key(&r, big), 0);
	CHECK(strlen(r.path) < JR_PATH_MAX);
	for (int i = 0; i < 20; i++)
		jr_pop(&r);
	CHECK_STR(r.path, "");
	/* a message cut to a small buffer stays terminated */
	jr_init(&r, "p.json", err, 8);
	jr_fail(&r, "a long message");
	CHECK_STR(err, "p.json:");
}

static void test_words(void)
{
	char buf[64];
	cJSON *s = cJSON_CreateString("x"), *n = cJSON_CreateNull();

	CHECK_STR(jr_number(1e12, buf, sizeof buf), "1e+12");
	CHECK_STR(jr_number(17179869184.0, buf, sizeof buf), "17179869184");
	CHECK_STR(jr_number(1000000, buf, sizeof buf), "1000000");
	CHECK_STR(jr_number(-5, buf, sizeof buf), "-5");
	CHECK_STR(jr_number(1.5, buf, sizeof buf), "1.5");
	CHECK_STR(jr_number(0.1, buf, sizeof buf), "0.1");
	CHECK_STR(jr_number(18446744073709551615.0, buf, sizeof buf), "1.8446744073709552e+19");
	CHECK_STR(jr_quote("a\nb", buf, sizeof buf), "'a?b'");
	CHECK_STR(jr_quote(NULL, buf, sizeof buf), "''");
	CHECK_STR(jr_type_name(s), "a string");
	CHECK_STR(jr_type_name(n), "null");
	cJSON_Delete(s);
	cJSON_Delete(n);
}

static void test_open(void)
{
	static const struct jr_field few[] = {
		{"a", JR_NUMBER, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, NULL},
		JR_END,
	};
	char err[256];
	struct jr r;
	cJSON *doc;

	jr_init(&r, "o.json", err, sizeof err);
	doc = cJSON_Parse("{\"a\": 1, \"extra\": {\"anything\": [1]}}");
	CHECK_INT(jr_dispatch(&r, doc, few, true, NULL, NULL), 0);
	CHECK_INT(jr_dispatch(&r, doc, few, false, NULL, NULL), -1);
	CHECK_STR(err, "o.json: extra: unknown key (expected a)");
	cJSON_Delete(doc);
	/* open objects still refuse duplicate keys and bound their size */
	doc = cJSON_Parse("{\"a\": 1, \"x\": 1, \"x\": 2}");
	CHECK_INT(jr_dispatch(&r, doc, few, true, NULL, NULL), -1);
	CHECK_STR(err, "o.json: x: duplicate key");
	cJSON_Delete(doc);
	r.max_entries = 2;
	doc = cJSON_Parse("{\"a\": 1, \"x\": 1, \"y\": 2}");
	CHECK_INT(jr_dispatch(&r, doc, few, true, NULL, NULL), -1);
	CHECK_STR(err, "o.json: more than 2 keys");
	cJSON_Delete(doc);
	/* a string without its own limit gets max_string */
	r.max_string = 3;
	doc = cJSON_Parse("\"abcd\"");
	CHECK_INT(jr_check(&r, doc, &(struct jr_field){"", JR_STRING, 0, 0, 0, NULL, JR_KEEP, 0, 0,
	                                                NULL}, NULL), -1);
	CHECK_STR(err, "o.json: string longer than 3 bytes");
	cJSON_Delete(doc);
}

int main(void)
{
	test_stores();
	test_document();
	test_keys();
	test_types();
	test_numbers();
	test_strings();
	test_arrays();
	test_map();
	test_path_and_depth();
	test_words();
	test_open();
	run(NULL, &(struct dst){0}, NULL);      /* frees the last document */
	return check_status();
}
