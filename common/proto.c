/* proto.c - probe protocol v1: workload options, report rendering and strict parsing. */
#include "proto.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"

static const char *const stage_names[] = {
	[PROTO_STAGE_ARGS] = "args", [PROTO_STAGE_ENV] = "env", [PROTO_STAGE_INIT] = "init",
	[PROTO_STAGE_CAPTURE] = "capture", [PROTO_STAGE_REPLAY] = "replay",
	[PROTO_STAGE_VERIFY] = "verify",
};

static const struct { const char *name; enum proto_dtype dtype; size_t size; } dtypes[] = {
	{"bf16", PROTO_DTYPE_BF16, 2}, {"f16", PROTO_DTYPE_F16, 2}, {"f32", PROTO_DTYPE_F32, 4},
};

#define PROTO_MAX_BYTES ((size_t)1 << 34)   /* 16 GiB per rank: beyond any small-message tuning */
#define PROTO_MAX_OPS 100000
#define PROTO_MAX_ITERS 10000000

void proto_workload_defaults(struct proto_workload *w)
{
	memset(w, 0, sizeof *w);
	w->nsizes = 1;
	w->bytes[0] = 43008;
	w->ops = 122;
	w->dtype = PROTO_DTYPE_BF16;
	w->iters = 200;
	w->warmup = 20;
	w->out_of_place = false;
}

const char *proto_dtype_name(enum proto_dtype d)
{
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (dtypes[i].dtype == d)
			return dtypes[i].name;
	return "?";
}

int proto_dtype_parse(const char *s, enum proto_dtype *out)
{
	for (size_t i = 0; s && i < sizeof dtypes / sizeof dtypes[0]; i++) {
		if (strcmp(s, dtypes[i].name) == 0) {
			*out = dtypes[i].dtype;
			return 0;
		}
	}
	return -1;
}

size_t proto_dtype_size(enum proto_dtype d)
{
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (dtypes[i].dtype == d)
			return dtypes[i].size;
	return 0;
}

const char *proto_stage_name(enum proto_stage s)
{
	if ((size_t)s < sizeof stage_names / sizeof stage_names[0])
		return stage_names[s];
	return "?";
}

int proto_stage_parse(const char *s, enum proto_stage *out)
{
	for (size_t i = 0; s && i < sizeof stage_names / sizeof stage_names[0]; i++) {
		if (strcmp(s, stage_names[i]) == 0) {
			*out = (enum proto_stage)i;
			return 0;
		}
	}
	return -1;
}

int proto_bytes_parse(const char *list, struct proto_workload *w, char *err, size_t errlen)
{
	size_t n = 0;
	const char *p = list;

	if (!list || !*list)
		return fs_errf(err, errlen, "--bytes: empty list");
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char item[64];
		char *end;
		unsigned long long v;
		size_t mult = 1;

		if (len == 0 || len >= sizeof item)
			return fs_errf(err, errlen, "--bytes: bad item '%.*s' in '%s'", (int)len, p, list);
		memcpy(item, p, len);
		item[len] = '\0';
		if (!isdigit((unsigned char)item[0]))
			return fs_errf(err, errlen, "--bytes: '%s' is not a byte count", item);
		errno = 0;
		v = strtoull(item, &end, 10);
		if (*end == 'K' || *end == 'k') {
			mult = 1024;
			end++;
		} else if (*end == 'M' || *end == 'm') {
			mult = 1024 * 1024;
			end++;
		}
		if (errno != 0 || *end != '\0')
			return fs_errf(err, errlen, "--bytes: '%s' is not a byte count", item);
		if (v == 0 || v > PROTO_MAX_BYTES / mult)
			return fs_errf(err, errlen, "--bytes: '%s' is out of range (1 .. %zu)", item,
			               PROTO_MAX_BYTES);
		if (n == PROTO_MAX_SIZES)
			return fs_errf(err, errlen, "--bytes: more than %d sizes", PROTO_MAX_SIZES);
		w->bytes[n++] = (size_t)v * mult;
		p += len;
		if (*p == ',') {
			p++;
			if (!*p)
				return fs_errf(err, errlen, "--bytes: trailing comma in '%s'", list);
		}
	}
	w->nsizes = n;
	return 0;
}

int proto_workload_option(struct proto_workload *w, const char *name, const char *arg,
                          char *err, size_t errlen)
{
	long v;

	if (strcmp(name, "bytes") == 0)
		return proto_bytes_parse(arg, w, err, errlen);
	if (strcmp(name, "ops") == 0) {
		if (fs_parse_long(arg, 1, PROTO_MAX_OPS, &v) != 0)
			return fs_errf(err, errlen, "--ops: '%s' is not an integer in 1..%d",
			               arg ? arg : "", PROTO_MAX_OPS);
		w->ops = (int)v;
		return 0;
	}
	if (strcmp(name, "iters") == 0) {
		if (fs_parse_long(arg, 1, PROTO_MAX_ITERS, &v) != 0)
			return fs_errf(err, errlen, "--iters: '%s' is not an integer in 1..%d",
			               arg ? arg : "", PROTO_MAX_ITERS);
		w->iters = (int)v;
		return 0;
	}
	if (strcmp(name, "warmup") == 0) {
		if (fs_parse_long(arg, 0, PROTO_MAX_ITERS, &v) != 0)
			return fs_errf(err, errlen, "--warmup: '%s' is not an integer in 0..%d",
			               arg ? arg : "", PROTO_MAX_ITERS);
		w->warmup = (int)v;
		return 0;
	}
	if (strcmp(name, "dtype") == 0) {
		if (proto_dtype_parse(arg, &w->dtype) != 0)
			return fs_errf(err, errlen, "--dtype: '%s' is not one of bf16, f16, f32",
			               arg ? arg : "");
		return 0;
	}
	if (strcmp(name, "out-of-place") == 0) {
		w->out_of_place = true;
		return 0;
	}
	return 1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The q-quantile of sorted s[0..n-1], interpolating linearly between order statistics. */
static double quantile(const double *s, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t i = (size_t)pos;
	double frac = pos - (double)i;

	if (i + 1 >= n)
		return s[n - 1];
	return s[i] + frac * (s[i + 1] - s[i]);
}

void proto_stats_compute(double *samples, size_t n, struct proto_stats *out)
{
	qsort(samples, n, sizeof *samples, cmp_double);
	out->min = samples[0];
	out->max = samples[n - 1];
	out->median = quantile(samples, n, 0.5);
	out->p10 = quantile(samples, n, 0.1);
	out->p90 = quantile(samples, n, 0.9);
}

void proto_report_fail(struct proto_report *r, enum proto_stage stage, const char *fmt, ...)
{
	va_list ap;

	r->ok = false;
	r->stage = stage;
	va_start(ap, fmt);
	vsnprintf(r->error, sizeof r->error, fmt, ap);
	va_end(ap);
}

cJSON *proto_report_json(const struct proto_report *r)
{
	cJSON *root = cJSON_CreateObject();

	if (!root)
		return NULL;
	if (!cJSON_AddStringToObject(root, "schema", PROTO_SCHEMA) ||
	    !cJSON_AddBoolToObject(root, "ok", r->ok))
		goto fail;
	if (!r->ok) {
		if (!cJSON_AddStringToObject(root, "stage", proto_stage_name(r->stage)) ||
		    !cJSON_AddStringToObject(root, "error", r->error))
			goto fail;
	} else {
		cJSON *results;

		if (!cJSON_AddNumberToObject(root, "nranks", r->nranks) ||
		    !cJSON_AddStringToObject(root, "nccl_version", r->nccl_version) ||
		    !cJSON_AddStringToObject(root, "source", r->source))
			goto fail;
		if (r->model[0] && !cJSON_AddStringToObject(root, "model", r->model))
			goto fail;
		results = cJSON_AddArrayToObject(root, "results");
		if (!results)
			goto fail;
		for (size_t i = 0; i < r->nresults; i++) {
			const struct proto_size_result *s = &r->results[i];
			cJSON *o = cJSON_CreateObject(), *us;

			if (!o || !cJSON_AddItemToArray(results, o)) {
				cJSON_Delete(o);
				goto fail;
			}
			if (!cJSON_AddNumberToObject(o, "bytes", (double)s->bytes) ||
			    !cJSON_AddNumberToObject(o, "ops", s->ops) ||
			    !cJSON_AddNumberToObject(o, "samples", s->samples))
				goto fail;
			us = cJSON_AddObjectToObject(o, "us");
			if (!us || !cJSON_AddNumberToObject(us, "median", s->us.median) ||
			    !cJSON_AddNumberToObject(us, "p10", s->us.p10) ||
			    !cJSON_AddNumberToObject(us, "p90", s->us.p90) ||
			    !cJSON_AddNumberToObject(us, "min", s->us.min) ||
			    !cJSON_AddNumberToObject(us, "max", s->us.max) ||
			    !cJSON_AddBoolToObject(o, "correct", s->correct))
				goto fail;
		}
	}
	return root;
fail:
	cJSON_Delete(root);
	return NULL;
}

char *proto_json_line(const cJSON *obj)
{
	char *text = cJSON_PrintUnformatted(obj), *line = NULL;
	size_t len;

	if (!text)
		return NULL;
	len = strlen(text);
	line = malloc(len + 2);
	if (line) {
		memcpy(line, text, len);
		line[len] = '\n';
		line[len + 1] = '\0';
	}
	free(text);
	return line;
}

char *proto_report_format(const struct proto_report *r)
{
	cJSON *root = proto_report_json(r);
	char *line = root ? proto_json_line(root) : NULL;

	cJSON_Delete(root);
	return line;
}

int proto_report_write(const struct proto_report *r, FILE *f)
{
	char *line = proto_report_format(r);
	int rc = -1;

	if (!line)
		return -1;
	if (fputs(line, f) >= 0 && fflush(f) == 0)
		rc = 0;
	free(line);
	return rc;
}

/* ---- strict parsing ---- */

static int no_duplicate_keys(const cJSON *obj, const char *where, char *err, size_t errlen)
{
	for (const cJSON *a = obj->child; a; a = a->next)
		for (const cJSON *b = a->next; b; b = b->next)
			if (a->string && b->string && strcmp(a->string, b->string) == 0)
				return fs_errf(err, errlen, "%s: key '%s' appears twice", where, a->string);
	return 0;
}

static const cJSON *get(const cJSON *obj, const char *key, const char *where, int type_mask,
                        const char *type_name, char *err, size_t errlen)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!it) {
		fs_errf(err, errlen, "%s: missing '%s'", where, key);
		return NULL;
	}
	if (!(it->type & type_mask)) {
		fs_errf(err, errlen, "%s: '%s' is not %s", where, key, type_name);
		return NULL;
	}
	return it;
}

static int get_string(const cJSON *obj, const char *key, const char *where, char *dst,
                      size_t dstlen, char *err, size_t errlen)
{
	const cJSON *it = get(obj, key, where, cJSON_String, "a string", err, errlen);

	if (!it)
		return -1;
	if (strlen(it->valuestring) >= dstlen)
		return fs_errf(err, errlen, "%s: '%s' is longer than %zu characters", where, key,
		               dstlen - 1);
	memcpy(dst, it->valuestring, strlen(it->valuestring) + 1);
	return 0;
}

/* A number that is finite, within [lo, hi], and integral when `integral`. */
static int get_number(const cJSON *obj, const char *key, const char *where, double lo,
                      double hi, bool integral, double *out, char *err, size_t errlen)
{
	const cJSON *it = get(obj, key, where, cJSON_Number, "a number", err, errlen);
	double v;

	if (!it)
		return -1;
	v = it->valuedouble;
	if (!isfinite(v))
		return fs_errf(err, errlen, "%s: '%s' is not finite", where, key);
	if (v < lo || v > hi)
		return fs_errf(err, errlen, "%s: '%s' = %g is out of range [%g, %g]", where, key, v,
		               lo, hi);
	if (integral && v != floor(v))
		return fs_errf(err, errlen, "%s: '%s' = %g is not an integer", where, key, v);
	*out = v;
	return 0;
}

static int parse_result(const cJSON *o, size_t idx, struct proto_size_result *s, char *err,
                        size_t errlen)
{
	char where[64];
	const cJSON *us, *correct;
	double v;
	static const char *const qs[] = {"median", "p10", "p90", "min", "max"};
	double *dst[5];

	snprintf(where, sizeof where, "results[%zu]", idx);
	if (!cJSON_IsObject(o))
		return fs_errf(err, errlen, "%s: not an object", where);
	if (no_duplicate_keys(o, where, err, errlen) != 0)
		return -1;
	if (get_number(o, "bytes", where, 1, (double)PROTO_MAX_BYTES, true, &v, err, errlen))
		return -1;
	s->bytes = (size_t)v;
	if (get_number(o, "ops", where, 1, PROTO_MAX_OPS, true, &v, err, errlen))
		return -1;
	s->ops = (int)v;
	if (get_number(o, "samples", where, 1, INT_MAX, true, &v, err, errlen))
		return -1;
	s->samples = (int)v;
	correct = get(o, "correct", where, cJSON_True | cJSON_False, "a boolean", err, errlen);
	if (!correct)
		return -1;
	s->correct = cJSON_IsTrue(correct);
	us = get(o, "us", where, cJSON_Object, "an object", err, errlen);
	if (!us)
		return -1;
	snprintf(where, sizeof where, "results[%zu].us", idx);
	if (no_duplicate_keys(us, where, err, errlen) != 0)
		return -1;
	dst[0] = &s->us.median;
	dst[1] = &s->us.p10;
	dst[2] = &s->us.p90;
	dst[3] = &s->us.min;
	dst[4] = &s->us.max;
	for (size_t i = 0; i < 5; i++)
		if (get_number(us, qs[i], where, 0, 1e12, false, dst[i], err, errlen))
			return -1;
	if (!(s->us.min <= s->us.p10 && s->us.p10 <= s->us.median && s->us.median <= s->us.p90 &&
	      s->us.p90 <= s->us.max))
		return fs_errf(err, errlen, "%s: quantiles out of order (min <= p10 <= median <= p90 <= max)",
		               where);
	return 0;
}

int proto_report_parse(const char *text, size_t len, struct proto_report *out, char *err,
                       size_t errlen)
{
	cJSON *root = NULL;
	const char *end = NULL;
	const cJSON *it;
	int rc = -1;

	memset(out, 0, sizeof *out);
	if (memchr(text, '\0', len))
		return fs_errf(err, errlen, "output contains a NUL byte");
	root = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (!root) {
		const char *at = cJSON_GetErrorPtr();
		size_t off = (at && at >= text && at <= text + len) ? (size_t)(at - text) : 0;

		fs_errf(err, errlen, "not a JSON object (parse error at byte %zu of %zu)", off, len);
		goto out;
	}
	for (; end && end < text + len; end++) {
		if (!isspace((unsigned char)*end)) {
			fs_errf(err, errlen, "more than one JSON value (extra text at byte %zu)",
			        (size_t)(end - text));
			goto out;
		}
	}
	if (!cJSON_IsObject(root)) {
		fs_errf(err, errlen, "not a JSON object");
		goto out;
	}
	if (no_duplicate_keys(root, "report", err, errlen) != 0)
		goto out;
	it = get(root, "schema", "report", cJSON_String, "a string", err, errlen);
	if (!it)
		goto out;
	if (strcmp(it->valuestring, PROTO_SCHEMA) != 0) {
		fs_errf(err, errlen, "report: schema '%.64s' is not '%s'", it->valuestring, PROTO_SCHEMA);
		goto out;
	}
	it = get(root, "ok", "report", cJSON_True | cJSON_False, "a boolean", err, errlen);
	if (!it)
		goto out;
	out->ok = cJSON_IsTrue(it);
	if (!out->ok) {
		if (get_string(root, "error", "report", out->error, sizeof out->error, err, errlen))
			goto out;
		it = get(root, "stage", "report", cJSON_String, "a string", err, errlen);
		if (!it)
			goto out;
		if (proto_stage_parse(it->valuestring, &out->stage) != 0) {
			fs_errf(err, errlen, "report: unknown stage '%.32s'", it->valuestring);
			goto out;
		}
		rc = 0;
		goto out;
	} else {
		double v;
		const cJSON *results, *r;
		size_t i = 0;

		if (get_number(root, "nranks", "report", 1, 1 << 20, true, &v, err, errlen))
			goto out;
		out->nranks = (int)v;
		if (get_string(root, "nccl_version", "report", out->nccl_version,
		               sizeof out->nccl_version, err, errlen))
			goto out;
		if (get_string(root, "source", "report", out->source, sizeof out->source, err, errlen))
			goto out;
		if (strcmp(out->source, "measured") != 0 && strcmp(out->source, "model") != 0) {
			fs_errf(err, errlen, "report: source '%s' is neither 'measured' nor 'model'",
			        out->source);
			goto out;
		}
		if (strcmp(out->source, "model") == 0 &&
		    get_string(root, "model", "report", out->model, sizeof out->model, err, errlen))
			goto out;
		/* a model probe names its model; an empty name would not survive formatting */
		if (strcmp(out->source, "model") == 0 && !out->model[0]) {
			fs_errf(err, errlen, "report: 'model' is empty");
			goto out;
		}
		results = get(root, "results", "report", cJSON_Array, "an array", err, errlen);
		if (!results)
			goto out;
		cJSON_ArrayForEach(r, results) {
			if (i == PROTO_MAX_SIZES) {
				fs_errf(err, errlen, "report: more than %d results", PROTO_MAX_SIZES);
				goto out;
			}
			if (parse_result(r, i, &out->results[i], err, errlen) != 0)
				goto out;
			i++;
		}
		if (i == 0) {
			fs_errf(err, errlen, "report: 'results' is empty");
			goto out;
		}
		out->nresults = i;
		/* ok with a wrong sum breaks the protocol's promise; never let it pass as a
		 * measurement: turn it into the verify failure it really is. */
		for (i = 0; i < out->nresults; i++) {
			if (!out->results[i].correct) {
				out->ok = false;
				out->stage = PROTO_STAGE_VERIFY;
				snprintf(out->error, sizeof out->error,
				         "probe reported ok with correct: false for %zu bytes",
				         out->results[i].bytes);
				break;
			}
		}
	}
	rc = 0;
out:
	cJSON_Delete(root);
	return rc;
}
