/* jsonread.h - the one strict JSON reader, over cJSON, in the spirit of systemd's
 * sd_json_dispatch: each object is read through a table of fields ({key, types, flags,
 * range, words, store or handler}), and everything a hostile or corrupt file can get
 * wrong is refused here, in one place, with one message format:
 *
 *     ORIGIN: a.b[2].c: why            (ORIGIN: why, at the top level)
 *
 * where the path names the offending element. Refused: text that is not exactly one
 * JSON value (NUL bytes, trailing data, over max_bytes), unknown keys (unless the
 * object is open), duplicate keys, missing required keys, wrong types, numbers that are
 * not finite, not integral where asked, or out of range, strings over their length or
 * with control characters (unless allowed), strings outside a field's word list,
 * arrays and objects over their size, nesting over max_depth.
 *
 * Nested objects and arrays are read by handlers that call jr_dispatch / jr_each /
 * jr_map again; the path follows. A `struct jr` lives on the caller's stack; nothing is
 * allocated except by jr_parse (the document, which the caller deletes). */
#ifndef NCCLTUNE_JSONREAD_H
#define NCCLTUNE_JSONREAD_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JR_PATH_MAX 512
#define JR_DEPTH_LIMIT 64          /* max_depth can be at most this */

/* JSON types, as a mask. */
enum jr_type {
	JR_NULL = 1, JR_BOOL = 2, JR_NUMBER = 4, JR_STRING = 8, JR_ARRAY = 16, JR_OBJECT = 32,
	JR_ANY = 63,
};

enum jr_flag {
	JR_REQUIRED = 1,     /* the key must be present (null too, if `types` has JR_NULL) */
	JR_INTEGER = 2,      /* a number must be integral */
	JR_CONTROL = 4,      /* a string may hold control characters */
};

/* Where a field's value goes (at `offset` in the destination struct). JSON null, when
 * `types` allows it, stores nothing. */
enum jr_store {
	JR_KEEP,             /* nothing (checks only, or a handler) */
	JR_STR,              /* const char *, borrowed from the document */
	JR_STRBUF,           /* char[size], copied (a longer string is refused) */
	JR_DOUBLE,           /* double */
	JR_INT,              /* int (give a range that fits) */
	JR_LONG,             /* long */
	JR_SIZE,             /* size_t */
	JR_U64,              /* uint64_t */
	JR_BOOLEAN,          /* bool */
	JR_ITEM,             /* const cJSON *, the value itself */
};

struct jr;

/* Called with the value (after the field's checks and store) and the destination
 * struct given to jr_dispatch; the path names the value. Returns 0 or -1 after jr_fail. */
typedef int (*jr_handler)(struct jr *r, const cJSON *v, void *dst);

struct jr_field {
	const char *key;             /* NULL ends a table */
	unsigned types;              /* JR_* types accepted */
	unsigned flags;              /* JR_REQUIRED, JR_INTEGER, JR_CONTROL */
	double lo, hi;               /* numbers: the range (both 0: any finite number);
	                              * strings: hi is the longest length
	                              * (0: the reader's max_string); arrays and objects: hi
	                              * is the most entries (0: max_entries) */
	const char *const *words;    /* strings: the only values accepted, NULL-terminated */
	enum jr_store store;
	size_t offset, size;         /* where; size for JR_STRBUF */
	jr_handler handler;
};

/* The entry that ends a table. */
#define JR_END {NULL, 0, 0, 0, 0, NULL, JR_KEEP, 0, 0, NULL}

struct jr {
	const char *origin;          /* starts every message: a file name, "report" */
	char *err;
	size_t errlen;
	size_t max_bytes;            /* jr_parse: longest text (0: no limit) */
	size_t max_string;           /* longest string without a field's own limit */
	size_t max_entries;          /* most array entries / object keys without a limit */
	int max_depth;               /* deepest path (keys and indexes), <= JR_DEPTH_LIMIT */
	int depth;
	size_t mark[JR_DEPTH_LIMIT]; /* path length before each push */
	char path[JR_PATH_MAX];
};

/* A reader for `origin` writing messages to err: no size limit, strings up to 4096
 * bytes, 1024 entries, depth 32 (change the fields after this call). Can't fail. */
void jr_init(struct jr *r, const char *origin, char *err, size_t errlen);

/* Parse `len` bytes (not necessarily NUL-terminated) as exactly one JSON value, with
 * JSON whitespace around it. Returns the document (the caller deletes it with
 * cJSON_Delete), or NULL with "ORIGIN: line L: not valid JSON (truncated or corrupt
 * near byte B)", "... text after the JSON value", "ORIGIN: NUL byte in the text: not
 * JSON", "ORIGIN: larger than N bytes" or "ORIGIN: nested deeper than N levels" (set
 * r->max_depth first; anywhere in the document, keys no table reads included). */
cJSON *jr_parse(struct jr *r, const char *text, size_t len);

/* Read object `obj` through `fields` (at most 64) into `dst`. `open`: keys not in the table are
 * skipped (still counted and checked for duplicates); otherwise they are refused. Sets
 * bit i of *seen (may be NULL) for each field i present and not null. Members are read
 * in the document's order; missing required keys are reported after them. Returns 0,
 * or -1 with the message in r->err. */
int jr_dispatch(struct jr *r, const cJSON *obj, const struct jr_field *fields, bool open,
                void *dst, uint64_t *seen);

/* Check one value against a field's types, flags, range and words (the key is not
 * looked at), and store it into dst (the field's offset applies). A null within
 * `types` passes and stores nothing. Returns 1 stored, 0 null, or -1 after jr_fail. */
int jr_check(struct jr *r, const cJSON *v, const struct jr_field *f, void *dst);

/* Every element of array `v` (at most `max` of them; 0: max_entries), each with the
 * path "...[i]". Returns 0, or -1 after the first failing `each` or when `v` is not an
 * array or is too long. */
int jr_each(struct jr *r, const cJSON *v, size_t max,
            int (*each)(struct jr *r, const cJSON *elem, size_t i, void *ctx), void *ctx);

/* Every member of object `v` (at most `max` keys; 0: max_entries; duplicates refused),
 * each with the path "...KEY". Returns 0, or -1 as jr_each. */
int jr_map(struct jr *r, const cJSON *v, size_t max,
           int (*each)(struct jr *r, const char *key, const cJSON *val, void *ctx), void *ctx);

/* Append ".key" (a key sanitised and cut for messages) or "[i]" to the path, or drop
 * the last part. Push returns -1 after jr_fail when nesting exceeds max_depth; a pop
 * follows every successful push. */
int jr_push_key(struct jr *r, const char *key);
int jr_push_index(struct jr *r, size_t i);
void jr_pop(struct jr *r);

/* Write "ORIGIN: PATH: message" (or "ORIGIN: message" at the top) into r->err. Returns
 * -1, for `return jr_fail(r, ...)`. */
int jr_fail(struct jr *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "a string", "a number", ... for messages. */
const char *jr_type_name(const cJSON *v);

/* A number for messages: integers below 1e9 in full ("1000000"), others as short as
 * they stay exact ("1e+12", "17179869184", "1.5"). Returns buf. */
char *jr_number(double v, char *buf, size_t len);

/* s quoted for messages, 'like this', with anything not printable ASCII replaced by
 * '?' and cut after 60 bytes ("..."). Returns buf. */
char *jr_quote(const char *s, char *buf, size_t len);

#endif
