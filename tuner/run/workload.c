/* workload.c - workload files and options, the probe arguments they imply, and the
 * objective (time per step) computed from a probe report. */
#include "run/workload.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "jsonread.h"

#define WORKLOAD_MAX_BYTES ((size_t)1 << 34)   /* as the protocol's --bytes accepts */
#define WORKLOAD_MAX_ITERS 10000000

void workload_default(struct workload *w)
{
	memset(w, 0, sizeof *w);
	w->dtype = PROTO_DTYPE_BF16;
	w->n = 1;
	w->e[0].bytes = 43008;
	w->e[0].count = 122;
	w->iters = 200;
	w->warmup = 20;
}

/* Add `count` all-reduces of `bytes` to w, merging equal sizes. Returns 0 or -1 when
 * there are too many distinct sizes. */
static int add_entry(struct workload *w, size_t bytes, long count)
{
	for (size_t i = 0; i < w->n; i++) {
		if (w->e[i].bytes == bytes) {
			w->e[i].count += count;
			return 0;
		}
	}
	if (w->n == WORKLOAD_MAX_ENTRIES)
		return -1;
	w->e[w->n].bytes = bytes;
	w->e[w->n].count = count;
	w->n++;
	return 0;
}

/* ---- the workload file, through common/jsonread ---- */

static const char *const schema_words[] = {WORKLOAD_SCHEMA, NULL};
static const char *const dtype_words[] = {"bf16", "f16", "f32", NULL};
static const char *const op_words[] = {"allreduce", NULL};

struct entry { size_t bytes; long count; };

static const struct jr_field entry_fields[] = {
	{"op", JR_STRING, JR_REQUIRED, 0, 0, op_words, JR_KEEP, 0, 0, NULL},
	{"bytes", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, (double)WORKLOAD_MAX_BYTES, NULL,
	 JR_SIZE, offsetof(struct entry, bytes), 0, NULL},
	{"count", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, (double)WORKLOAD_MAX_COUNT, NULL,
	 JR_LONG, offsetof(struct entry, count), 0, NULL},
	JR_END,
};

/* One entry, merged into w; the limits are of the whole list, named at the entry that
 * crosses them. */
static int take_entry(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct workload *w = ctx;
	struct entry e = {0, 0};

	(void)i;
	if (jr_dispatch(r, v, entry_fields, false, &e, NULL) < 0)
		return -1;
	if (add_entry(w, e.bytes, e.count) != 0)
		return jr_fail(r, "more than %d distinct sizes", WORKLOAD_MAX_ENTRIES);
	for (size_t k = 0; k < w->n; k++)
		if (w->e[k].count > WORKLOAD_MAX_COUNT)
			return jr_fail(r, "more than %ld all-reduces of %zu bytes", WORKLOAD_MAX_COUNT,
			               w->e[k].bytes);
	return 0;
}

static int take_collectives(struct jr *r, const cJSON *v, void *dst)
{
	/* entries of one size merge, so only the totals bound the list */
	if (!v->child)
		return jr_fail(r, "empty");
	return jr_each(r, v, (size_t)WORKLOAD_MAX_ENTRIES * WORKLOAD_MAX_COUNT, take_entry, dst);
}

static int take_dtype(struct jr *r, const cJSON *v, void *dst)
{
	struct workload *w = dst;

	(void)r;
	return proto_dtype_parse(v->valuestring, &w->dtype);
}

/* One guard size: a whole number of elements checked with the dtype after parsing. */
static int take_guard(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct workload *w = ctx;
	static const struct jr_field f = {"", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1,
	                                  (double)WORKLOAD_MAX_BYTES, NULL, JR_KEEP, 0, 0, NULL};

	if (jr_check(r, v, &f, NULL) < 0)
		return -1;
	if (i >= WORKLOAD_MAX_ENTRIES)
		return jr_fail(r, "more than %d guard sizes", WORKLOAD_MAX_ENTRIES);
	for (size_t k = 0; k < w->nguard; k++)
		if (w->guard[k] == (size_t)v->valuedouble)
			return jr_fail(r, "repeats guard[%zu]", k);
	w->guard[w->nguard++] = (size_t)v->valuedouble;
	w->guard_given = true;
	return 0;
}

static int take_guards(struct jr *r, const cJSON *v, void *dst)
{
	return jr_each(r, v, WORKLOAD_MAX_ENTRIES, take_guard, dst);
}

static const struct jr_field workload_fields[] = {
	{"schema", JR_STRING, JR_REQUIRED, 0, 0, schema_words, JR_KEEP, 0, 0, NULL},
	{"dtype", JR_STRING, JR_REQUIRED, 0, 0, dtype_words, JR_KEEP, 0, 0, take_dtype},
	{"iters", JR_NUMBER, JR_INTEGER, 1, WORKLOAD_MAX_ITERS, NULL, JR_INT,
	 offsetof(struct workload, iters), 0, NULL},
	{"warmup", JR_NUMBER, JR_INTEGER, 0, WORKLOAD_MAX_ITERS, NULL, JR_INT,
	 offsetof(struct workload, warmup), 0, NULL},
	/* free text for people, never used: control characters pass */
	{"description", JR_STRING, JR_CONTROL, 0, 0, NULL, JR_KEEP, 0, 0, NULL},
	{"collectives", JR_ARRAY, JR_REQUIRED, 0, (double)WORKLOAD_MAX_ENTRIES * WORKLOAD_MAX_COUNT,
	 NULL, JR_KEEP, 0, 0, take_collectives},
	{"guard", JR_ARRAY, 0, 0, WORKLOAD_MAX_ENTRIES, NULL, JR_KEEP, 0, 0, take_guards},
	JR_END,
};

int workload_from_json(const cJSON *root, const char *origin, struct workload *w, char *err,
                       size_t errlen)
{
	struct jr r;

	workload_default(w);
	w->n = 0;
	jr_init(&r, origin, err, errlen);
	if (jr_dispatch(&r, root, workload_fields, false, w, NULL) < 0)
		return -1;
	for (size_t i = 0; i < w->n; i++) {
		if (w->e[i].bytes % proto_dtype_size(w->dtype) != 0) {
			jr_push_key(&r, "collectives");
			return jr_fail(&r, "%zu bytes is not a whole number of %s elements",
			               w->e[i].bytes, proto_dtype_name(w->dtype));
		}
	}
	jr_push_key(&r, "guard");
	for (size_t g = 0; g < w->nguard; g++) {
		if (w->guard[g] % proto_dtype_size(w->dtype) != 0)
			return jr_fail(&r, "%zu bytes is not a whole number of %s elements",
			               w->guard[g], proto_dtype_name(w->dtype));
		for (size_t i = 0; i < w->n; i++)
			if (w->e[i].bytes == w->guard[g])
				return jr_fail(&r, "%zu bytes is a tuned size (collectives), not a guard",
				               w->guard[g]);
	}
	if (w->n + w->nguard > PROTO_MAX_SIZES)
		return jr_fail(&r, "%zu tuned and guard sizes, a probe run takes at most %d",
		               w->n + w->nguard, PROTO_MAX_SIZES);
	jr_pop(&r);
	return 0;
}

int workload_parse(const char *text, size_t len, const char *origin, struct workload *w,
                   char *err, size_t errlen)
{
	struct jr r;
	cJSON *root;
	int rc;

	jr_init(&r, origin, err, errlen);
	root = jr_parse(&r, text, len);
	if (!root)
		return -1;
	rc = workload_from_json(root, origin, w, err, errlen);
	cJSON_Delete(root);
	return rc;
}

int workload_from_options(const char *bytes_list, int ops, const char *dtype,
                          struct workload *w, char *err, size_t errlen)
{
	struct proto_workload pw;

	workload_default(w);
	if (dtype && proto_dtype_parse(dtype, &w->dtype) != 0)
		return fs_errf(err, errlen, "--dtype: '%s' is not one of bf16, f16, f32", dtype);
	if (ops < 1 || ops > WORKLOAD_MAX_COUNT)
		return fs_errf(err, errlen, "--ops: %d is not an integer in 1..%ld", ops,
		               WORKLOAD_MAX_COUNT);
	if (!bytes_list) {
		w->e[0].count = ops;
		return 0;
	}
	proto_workload_defaults(&pw);
	if (proto_bytes_parse(bytes_list, &pw, err, errlen) != 0)
		return -1;
	w->n = 0;
	for (size_t i = 0; i < pw.nsizes; i++) {
		if (pw.bytes[i] % proto_dtype_size(w->dtype) != 0)
			return fs_errf(err, errlen, "--bytes: %zu is not a whole number of %s elements",
			               pw.bytes[i], proto_dtype_name(w->dtype));
		/* A size listed twice is a mistake worth naming, not a silent doubling. */
		for (size_t j = 0; j < w->n; j++)
			if (w->e[j].bytes == pw.bytes[i])
				return fs_errf(err, errlen, "--bytes: %zu is listed twice", pw.bytes[i]);
		add_entry(w, pw.bytes[i], ops);
	}
	return 0;
}

cJSON *workload_to_json(const struct workload *w)
{
	cJSON *root = cJSON_CreateObject(), *arr;

	if (!root)
		return NULL;
	if (!cJSON_AddStringToObject(root, "schema", WORKLOAD_SCHEMA) ||
	    !cJSON_AddStringToObject(root, "dtype", proto_dtype_name(w->dtype)))
		goto fail;
	arr = cJSON_AddArrayToObject(root, "collectives");
	if (!arr)
		goto fail;
	for (size_t i = 0; i < w->n; i++) {
		cJSON *o = cJSON_CreateObject();

		if (!o)
			goto fail;
		if (!cJSON_AddItemToArray(arr, o)) {
			cJSON_Delete(o);
			goto fail;
		}
		if (!cJSON_AddStringToObject(o, "op", "allreduce") ||
		    !cJSON_AddNumberToObject(o, "bytes", (double)w->e[i].bytes) ||
		    !cJSON_AddNumberToObject(o, "count", (double)w->e[i].count))
			goto fail;
	}
	if (w->nguard) {
		cJSON *g = cJSON_AddArrayToObject(root, "guard");

		for (size_t i = 0; g && i < w->nguard; i++) {
			cJSON *n = cJSON_CreateNumber((double)w->guard[i]);

			if (!n || !cJSON_AddItemToArray(g, n)) {
				cJSON_Delete(n);
				g = NULL;
			}
		}
		if (!g)
			goto fail;
	}
	if (!cJSON_AddNumberToObject(root, "iters", w->iters) ||
	    !cJSON_AddNumberToObject(root, "warmup", w->warmup))
		goto fail;
	return root;
fail:
	cJSON_Delete(root);
	return NULL;
}

int workload_probe_args(const struct workload *w, bool guards, char **args, size_t max)
{
	char bytes[PROTO_MAX_SIZES * 24] = "", ops_s[PROTO_MAX_SIZES * 12], iters_s[32];
	char warmup_s[32];
	const char *vals[10];
	size_t used = 0, oused = 0, nsizes = w->n + (guards ? w->nguard : 0);
	long ops = 1;
	int n;

	if (max < 10)
		return -1;
	for (size_t i = 0; i < w->n; i++)
		if (w->e[i].count > ops)
			ops = w->e[i].count;
	if (ops > WORKLOAD_OPS_CAP)
		ops = WORKLOAD_OPS_CAP;
	snprintf(ops_s, sizeof ops_s, "%ld", ops);
	/* with guards, --ops is a list: the tuned sizes' count each, 1 for every guard */
	for (size_t i = 0; i < nsizes; i++) {
		int k = snprintf(bytes + used, sizeof bytes - used, "%s%zu", i ? "," : "",
		                 i < w->n ? w->e[i].bytes : w->guard[i - w->n]);
		int o = nsizes == w->n ? 0
		        : snprintf(ops_s + oused, sizeof ops_s - oused, "%s%ld", i ? "," : "",
		                   i < w->n ? ops : 1L);

		if (k < 0 || (size_t)k >= sizeof bytes - used || o < 0 ||
		    (size_t)o >= sizeof ops_s - oused)
			return -1;
		used += (size_t)k;
		oused += (size_t)o;
	}
	snprintf(iters_s, sizeof iters_s, "%d", w->iters);
	snprintf(warmup_s, sizeof warmup_s, "%d", w->warmup);
	vals[0] = "--bytes";
	vals[1] = bytes;
	vals[2] = "--ops";
	vals[3] = ops_s;
	vals[4] = "--dtype";
	vals[5] = proto_dtype_name(w->dtype);
	vals[6] = "--iters";
	vals[7] = iters_s;
	vals[8] = "--warmup";
	vals[9] = warmup_s;
	for (n = 0; n < 10; n++) {
		args[n] = strdup(vals[n]);
		if (!args[n]) {
			while (n > 0)
				free(args[--n]);
			return -1;
		}
	}
	return n;
}

int workload_objective(const struct workload *w, const struct proto_report *r,
                       double *objective_us, char *err, size_t errlen)
{
	double sum = 0;

	for (size_t i = 0; i < w->n; i++) {
		const struct proto_size_result *found = NULL;

		for (size_t j = 0; j < r->nresults && !found; j++)
			if (r->results[j].bytes == w->e[i].bytes)
				found = &r->results[j];
		if (!found)
			return fs_errf(err, errlen, "report has no result for %zu bytes", w->e[i].bytes);
		sum += (double)w->e[i].count * found->us.median;
	}
	if (!isfinite(sum))
		return fs_errf(err, errlen, "objective is not finite");
	*objective_us = sum;
	return 0;
}

char *workload_describe(const struct workload *w, char *buf, size_t len)
{
	size_t used = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < w->n; i++) {
		int k = snprintf(buf + used, len - used, "%s%ld x %zu B", i ? " + " : "",
		                 w->e[i].count, w->e[i].bytes);

		if (k < 0 || (size_t)k >= len - used)
			return buf;
		used += (size_t)k;
	}
	snprintf(buf + used, len - used, " %s", proto_dtype_name(w->dtype));
	return buf;
}

void workload_default_guards(struct workload *w)
{
	static const size_t ladder[] = {1048576, 16777216, 134217728};

	if (w->guard_given)
		return;
	w->nguard = 0;
	for (size_t i = 0; i < sizeof ladder / sizeof ladder[0]; i++) {
		bool tuned = false;

		for (size_t k = 0; k < w->n; k++)
			tuned |= w->e[k].bytes == ladder[i];
		if (!tuned && w->n + w->nguard < PROTO_MAX_SIZES)
			w->guard[w->nguard++] = ladder[i];
	}
}

int workload_set_guards(struct workload *w, const char *list, char *err, size_t errlen)
{
	struct proto_workload pw;
	char e[512];

	proto_workload_defaults(&pw);
	if (proto_bytes_parse(list, &pw, e, sizeof e) != 0)
		return fs_errf(err, errlen, "--guard: %s", e);
	w->nguard = 0;
	for (size_t i = 0; i < pw.nsizes; i++) {
		if (pw.bytes[i] % proto_dtype_size(w->dtype) != 0)
			return fs_errf(err, errlen, "--guard: %zu is not a whole number of %s elements",
			               pw.bytes[i], proto_dtype_name(w->dtype));
		for (size_t k = 0; k < w->n; k++)
			if (w->e[k].bytes == pw.bytes[i])
				return fs_errf(err, errlen, "--guard: %zu is a tuned size, not a guard",
				               pw.bytes[i]);
		for (size_t k = 0; k < w->nguard; k++)
			if (w->guard[k] == pw.bytes[i])
				return fs_errf(err, errlen, "--guard: %zu is listed twice", pw.bytes[i]);
		if (w->n + w->nguard >= PROTO_MAX_SIZES)
			return fs_errf(err, errlen, "--guard: more sizes than a probe run takes (%d "
			               "with the tuned ones)", PROTO_MAX_SIZES);
		w->guard[w->nguard++] = pw.bytes[i];
	}
	w->guard_given = true;
	return 0;
}

