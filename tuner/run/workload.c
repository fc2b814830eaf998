/* workload.c - workload files and options, the probe arguments they imply, and the
 * objective (time per step) computed from a probe report. */
#include "run/workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"

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

/* An integral JSON number in [lo, hi]. */
static int json_integer(const cJSON *it, double lo, double hi, double *out)
{
	double v;

	if (!cJSON_IsNumber(it))
		return -1;
	v = it->valuedouble;
	if (!isfinite(v) || v != floor(v) || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int parse_entry(const cJSON *o, size_t idx, const char *origin, struct workload *w,
                       char *err, size_t errlen)
{
	const cJSON *it;
	double bytes = 0, count = 0;
	bool have_bytes = false, have_count = false, have_op = false;

	if (!cJSON_IsObject(o))
		return fs_errf(err, errlen, "%s: collectives[%zu]: must be an object", origin, idx);
	cJSON_ArrayForEach(it, o) {
		if (strcmp(it->string, "op") == 0) {
			if (!cJSON_IsString(it) || strcmp(it->valuestring, "allreduce") != 0)
				return fs_errf(err, errlen,
				               "%s: collectives[%zu].op: only \"allreduce\" is supported",
				               origin, idx);
			have_op = true;
		} else if (strcmp(it->string, "bytes") == 0) {
			if (json_integer(it, 1, (double)WORKLOAD_MAX_BYTES, &bytes) != 0)
				return fs_errf(err, errlen,
				               "%s: collectives[%zu].bytes: must be an integer in 1..%zu",
				               origin, idx, WORKLOAD_MAX_BYTES);
			have_bytes = true;
		} else if (strcmp(it->string, "count") == 0) {
			if (json_integer(it, 1, (double)WORKLOAD_MAX_COUNT, &count) != 0)
				return fs_errf(err, errlen,
				               "%s: collectives[%zu].count: must be an integer in 1..%ld",
				               origin, idx, WORKLOAD_MAX_COUNT);
			have_count = true;
		} else {
			return fs_errf(err, errlen, "%s: collectives[%zu].%s: unknown key", origin, idx,
			               it->string);
		}
	}
	if (!have_op)
		return fs_errf(err, errlen, "%s: collectives[%zu]: missing \"op\"", origin, idx);
	if (!have_bytes)
		return fs_errf(err, errlen, "%s: collectives[%zu]: missing \"bytes\"", origin, idx);
	if (!have_count)
		return fs_errf(err, errlen, "%s: collectives[%zu]: missing \"count\"", origin, idx);
	if (add_entry(w, (size_t)bytes, (long)count) != 0)
		return fs_errf(err, errlen, "%s: collectives: more than %d distinct sizes", origin,
		               WORKLOAD_MAX_ENTRIES);
	for (size_t i = 0; i < w->n; i++)
		if (w->e[i].count > WORKLOAD_MAX_COUNT)
			return fs_errf(err, errlen, "%s: collectives: more than %ld all-reduces of %zu bytes",
			               origin, WORKLOAD_MAX_COUNT, w->e[i].bytes);
	return 0;
}

int workload_from_json(const cJSON *root, const char *origin, struct workload *w, char *err,
                       size_t errlen)
{
	const cJSON *it;
	bool have_schema = false, have_dtype = false, have_coll = false;
	double v;

	workload_default(w);
	w->n = 0;
	if (!cJSON_IsObject(root))
		return fs_errf(err, errlen, "%s: not a JSON object", origin);
	for (it = root->child; it; it = it->next)
		for (const cJSON *b = it->next; b; b = b->next)
			if (strcmp(it->string, b->string) == 0)
				return fs_errf(err, errlen, "%s: %s: key appears twice", origin, it->string);
	cJSON_ArrayForEach(it, root) {
		const char *k = it->string;

		if (strcmp(k, "schema") == 0) {
			if (!cJSON_IsString(it) || strcmp(it->valuestring, WORKLOAD_SCHEMA) != 0)
				return fs_errf(err, errlen, "%s: schema: must be \"%s\"", origin,
				               WORKLOAD_SCHEMA);
			have_schema = true;
		} else if (strcmp(k, "dtype") == 0) {
			if (!cJSON_IsString(it) || proto_dtype_parse(it->valuestring, &w->dtype) != 0)
				return fs_errf(err, errlen, "%s: dtype: must be one of \"bf16\", \"f16\", \"f32\"",
				               origin);
			have_dtype = true;
		} else if (strcmp(k, "iters") == 0) {
			if (json_integer(it, 1, WORKLOAD_MAX_ITERS, &v) != 0)
				return fs_errf(err, errlen, "%s: iters: must be an integer in 1..%d", origin,
				               WORKLOAD_MAX_ITERS);
			w->iters = (int)v;
		} else if (strcmp(k, "warmup") == 0) {
			if (json_integer(it, 0, WORKLOAD_MAX_ITERS, &v) != 0)
				return fs_errf(err, errlen, "%s: warmup: must be an integer in 0..%d", origin,
				               WORKLOAD_MAX_ITERS);
			w->warmup = (int)v;
		} else if (strcmp(k, "description") == 0) {
			if (!cJSON_IsString(it))
				return fs_errf(err, errlen, "%s: description: must be a string", origin);
		} else if (strcmp(k, "collectives") == 0) {
			const cJSON *e;
			size_t i = 0;

			if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) == 0)
				return fs_errf(err, errlen, "%s: collectives: must be a non-empty array", origin);
			cJSON_ArrayForEach(e, it) {
				if (parse_entry(e, i, origin, w, err, errlen) != 0)
					return -1;
				i++;
			}
			have_coll = true;
		} else {
			return fs_errf(err, errlen, "%s: %s: unknown key", origin, k);
		}
	}
	if (!have_schema)
		return fs_errf(err, errlen, "%s: missing \"schema\" (\"%s\")", origin, WORKLOAD_SCHEMA);
	if (!have_dtype)
		return fs_errf(err, errlen, "%s: missing \"dtype\"", origin);
	if (!have_coll)
		return fs_errf(err, errlen, "%s: missing \"collectives\"", origin);
	for (size_t i = 0; i < w->n; i++)
		if (w->e[i].bytes % proto_dtype_size(w->dtype) != 0)
			return fs_errf(err, errlen, "%s: collectives: %zu bytes is not a whole number of %s elements",
			               origin, w->e[i].bytes, proto_dtype_name(w->dtype));
	return 0;
}

int workload_parse(const char *text, size_t len, const char *origin, struct workload *w,
                   char *err, size_t errlen)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
	int rc;

	if (!root) {
		const char *at = cJSON_GetErrorPtr();
		size_t off = (at && at >= text && at <= text + len) ? (size_t)(at - text) : 0;

		return fs_errf(err, errlen, "%s: not valid JSON (error near byte %zu)", origin, off);
	}
	for (; end && end < text + len; end++) {
		if (*end != ' ' && *end != '\n' && *end != '\t' && *end != '\r') {
			cJSON_Delete(root);
			return fs_errf(err, errlen, "%s: text after the JSON object (byte %zu)", origin,
			               (size_t)(end - text));
		}
	}
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
	if (!cJSON_AddNumberToObject(root, "iters", w->iters) ||
	    !cJSON_AddNumberToObject(root, "warmup", w->warmup))
		goto fail;
	return root;
fail:
	cJSON_Delete(root);
	return NULL;
}

int workload_probe_args(const struct workload *w, char **args, size_t max)
{
	char bytes[PROTO_MAX_SIZES * 24] = "", ops_s[32], iters_s[32], warmup_s[32];
	const char *vals[10];
	size_t used = 0;
	long ops = 1;
	int n;

	if (max < 10)
		return -1;
	for (size_t i = 0; i < w->n; i++) {
		int k = snprintf(bytes + used, sizeof bytes - used, "%s%zu", i ? "," : "",
		                 w->e[i].bytes);

		if (k < 0 || (size_t)k >= sizeof bytes - used)
			return -1;
		used += (size_t)k;
		if (w->e[i].count > ops)
			ops = w->e[i].count;
	}
	if (ops > WORKLOAD_OPS_CAP)
		ops = WORKLOAD_OPS_CAP;
	snprintf(ops_s, sizeof ops_s, "%ld", ops);
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
