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

/* "compute": {"kernel_us": US, "ctas": N}: the probe's --compute-us limits. */
static const struct jr_field compute_fields[] = {
	{"kernel_us", JR_NUMBER, JR_REQUIRED, 0, PROTO_MAX_COMPUTE_US, NULL, JR_DOUBLE,
	 offsetof(struct workload, compute_us), 0, NULL},
	{"ctas", JR_NUMBER, JR_INTEGER, 1, PROTO_MAX_COMPUTE_CTAS, NULL, JR_INT,
	 offsetof(struct workload, compute_ctas), 0, NULL},
	JR_END,
};

/* A kernel duration the probe is told exactly: above 0 and whole nanoseconds (the probe's
 * kernel counts nanoseconds; the tuner writes it with 3 decimals). */
static bool whole_ns(double us)
{
	double ns = us * 1000.0;

	return us > 0 && fabs(ns - nearbyint(ns)) <= 1e-6 * (ns > 1 ? ns : 1);
}

static int take_compute(struct jr *r, const cJSON *v, void *dst)
{
	struct workload *w = dst;

	if (jr_dispatch(r, v, compute_fields, false, w, NULL) < 0)
		return -1;
	if (!whole_ns(w->compute_us)) {
		jr_push_key(r, "kernel_us");
		return jr_fail(r, "%g is not a whole number of nanoseconds above 0 (leave "
		               "\"compute\" out for none)", w->compute_us);
	}
	return 0;
}

static const char *const window_words[] = {"symmetric", NULL};

static int take_window(struct jr *r, const cJSON *v, void *dst)
{
	(void)r;
	(void)v;
	((struct workload *)dst)->window_symmetric = true;
	return 0;
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
	{"compute", JR_OBJECT, 0, 0, 0, NULL, JR_KEEP, 0, 0, take_compute},
	{"window", JR_STRING, 0, 0, 0, window_words, JR_KEEP, 0, 0, take_window},
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
	if (w->compute_us > 0) {
		cJSON *c = cJSON_AddObjectToObject(root, "compute");

		if (!c || !cJSON_AddNumberToObject(c, "kernel_us", w->compute_us) ||
		    (w->compute_ctas > 0 && !cJSON_AddNumberToObject(c, "ctas", w->compute_ctas)))
			goto fail;
	}
	if (w->window_symmetric && !cJSON_AddStringToObject(root, "window", "symmetric"))
		goto fail;
	return root;
fail:
	cJSON_Delete(root);
	return NULL;
}

int workload_set_server(struct workload *w, const char *compute, const char *window,
                        char *err, size_t errlen)
{
	struct proto_workload pw;

	proto_workload_defaults(&pw);
	if ((compute && proto_workload_option(&pw, "compute-us", compute, err, errlen) != 0) ||
	    (window && proto_workload_option(&pw, "window", window, err, errlen) != 0))
		return -1;
	if (compute && !whole_ns(pw.compute_us))
		return fs_errf(err, errlen, "--compute-us: '%s' is not a whole number of nanoseconds "
		               "(at most 3 decimals)", compute);
	if (compute) {
		w->compute_us = pw.compute_us;
		w->compute_ctas = pw.compute_ctas;
	}
	if (window)
		w->window_symmetric = true;
	return 0;
}

int workload_probe_args(const struct workload *w, bool guards, char **args, size_t max)
{
	char bytes[PROTO_MAX_SIZES * 24] = "", ops_s[PROTO_MAX_SIZES * 12], iters_s[32];
	char warmup_s[32], compute_s[48];
	const char *vals[WORKLOAD_PROBE_ARGS];
	size_t used = 0, oused = 0, nsizes = w->n + (guards ? w->nguard : 0);
	long ops = 1;
	int n, nvals = 10;

	if (max < WORKLOAD_PROBE_ARGS)
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
	if (w->compute_us > 0) {
		/* whole nanoseconds (whole_ns), so 3 decimals say it exactly, in the plain
		 * decimal form the protocol's parser takes */
		if (w->compute_ctas > 0)
			snprintf(compute_s, sizeof compute_s, "%.3f,%d", w->compute_us, w->compute_ctas);
		else
			snprintf(compute_s, sizeof compute_s, "%.3f", w->compute_us);
		vals[nvals++] = "--compute-us";
		vals[nvals++] = compute_s;
	}
	if (w->window_symmetric) {
		vals[nvals++] = "--window";
		vals[nvals++] = "symmetric";
	}
	for (n = 0; n < nvals; n++) {
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

	/* a probe that ignored the server's step measured something else */
	if (w->compute_us > 0 && !r->compute.known)
		return fs_errf(err, errlen, "no \"compute\" in the report: the probe ran no kernel "
		               "between the all-reduces (does it speak --compute-us?)");
	if (w->compute_us > 0 && fabs(r->compute.kernel_us - w->compute_us) > 1e-9 * w->compute_us)
		return fs_errf(err, errlen, "compute.kernel_us %g is not the workload's %g",
		               r->compute.kernel_us, w->compute_us);
	if (w->window_symmetric && !r->window_symmetric)
		return fs_errf(err, errlen, "no \"window\": \"symmetric\" in the report: the probe "
		               "did not register symmetric windows (does it speak --window?)");
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

int workload_allreduce_time(const struct workload *w, const struct proto_report *r,
                            double *allreduce_us)
{
	double sum = 0;

	if (w->compute_us <= 0 || !r->compute.known)
		return -1;
	for (size_t i = 0; i < w->n; i++) {
		const struct proto_size_result *found = NULL;

		for (size_t j = 0; j < r->nresults && !found; j++)
			if (r->results[j].bytes == w->e[i].bytes && r->results[j].has_step)
				found = &r->results[j];
		if (!found)
			return -1;
		sum += (double)w->e[i].count * found->allreduce_us;
	}
	*allreduce_us = sum;
	return isfinite(sum) ? 0 : -1;
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
	if (strcmp(list, "none") == 0) {
		/* no guards at all, the default ladder included */
		w->nguard = 0;
		w->guard_given = true;
		return 0;
	}
	if (proto_bytes_parse(list, &pw, e, sizeof e) != 0) {
		/* the parser is --bytes's: its errors name --bytes, this is --guard */
		const char *why = strncmp(e, "--bytes: ", 9) == 0 ? e + 9 : e;

		return fs_errf(err, errlen, "--guard: %s (a list of byte counts such as "
		               "1M,16M,128M, or 'none' for no guard sizes)", why);
	}
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

