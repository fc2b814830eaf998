/* proto.c - probe protocol v1: workload options, report rendering and strict parsing
 * (through common/jsonread). */
#include "proto.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "jsonread.h"

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

/* Through common/jsonread: every object is open (a probe may add extension keys), with
 * duplicate keys refused; the branch read depends on "ok". */

static const char *const schema_words[] = {PROTO_SCHEMA, NULL};
static const char *const source_words[] = {"measured", "model", NULL};

static int take_stage(struct jr *r, const cJSON *v, void *dst)
{
	struct proto_report *out = dst;
	char q[80];

	if (proto_stage_parse(v->valuestring, &out->stage) != 0)
		return jr_fail(r, "unknown stage %s", jr_quote(v->valuestring, q, sizeof q));
	return 0;
}

#define Q(f) offsetof(struct proto_stats, f)

static const struct jr_field us_fields[] = {
	{"median", JR_NUMBER, JR_REQUIRED, 0, 1e12, NULL, JR_DOUBLE, Q(median), 0, NULL},
	{"p10", JR_NUMBER, JR_REQUIRED, 0, 1e12, NULL, JR_DOUBLE, Q(p10), 0, NULL},
	{"p90", JR_NUMBER, JR_REQUIRED, 0, 1e12, NULL, JR_DOUBLE, Q(p90), 0, NULL},
	{"min", JR_NUMBER, JR_REQUIRED, 0, 1e12, NULL, JR_DOUBLE, Q(min), 0, NULL},
	{"max", JR_NUMBER, JR_REQUIRED, 0, 1e12, NULL, JR_DOUBLE, Q(max), 0, NULL},
	JR_END,
};

static int take_us(struct jr *r, const cJSON *v, void *dst)
{
	struct proto_size_result *s = dst;

	if (jr_dispatch(r, v, us_fields, true, &s->us, NULL) < 0)
		return -1;
	if (!(s->us.min <= s->us.p10 && s->us.p10 <= s->us.median && s->us.median <= s->us.p90 &&
	      s->us.p90 <= s->us.max))
		return jr_fail(r, "quantiles out of order (min <= p10 <= median <= p90 <= max)");
	return 0;
}

#define S(f) offsetof(struct proto_size_result, f)

static const struct jr_field result_fields[] = {
	{"bytes", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, (double)PROTO_MAX_BYTES, NULL, JR_SIZE,
	 S(bytes), 0, NULL},
	{"ops", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, PROTO_MAX_OPS, NULL, JR_INT, S(ops), 0,
	 NULL},
	{"samples", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, INT_MAX, NULL, JR_INT, S(samples), 0,
	 NULL},
	{"correct", JR_BOOL, JR_REQUIRED, 0, 0, NULL, JR_BOOLEAN, S(correct), 0, NULL},
	{"us", JR_OBJECT, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, take_us},
	JR_END,
};

static int take_result(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct proto_report *out = ctx;

	out->nresults = i + 1;
	return jr_dispatch(r, v, result_fields, true, &out->results[i], NULL);
}

static int take_results(struct jr *r, const cJSON *v, void *dst)
{
	if (jr_each(r, v, PROTO_MAX_SIZES, take_result, dst) < 0)
		return -1;
	if (cJSON_GetArraySize(v) == 0)
		return jr_fail(r, "empty");
	return 0;
}

#define R(f) offsetof(struct proto_report, f)

static const struct jr_field head_fields[] = {
	{"schema", JR_STRING, JR_REQUIRED, 0, 0, schema_words, JR_KEEP, 0, 0, NULL},
	{"ok", JR_BOOL, JR_REQUIRED, 0, 0, NULL, JR_BOOLEAN, R(ok), 0, NULL},
	JR_END,
};

/* The message comes from the probe: control characters are kept (escaped on output). */
static const struct jr_field fail_fields[] = {
	{"error", JR_STRING, JR_REQUIRED | JR_CONTROL, 0, 0, NULL, JR_STRBUF, R(error),
	 PROTO_ERROR_MAX, NULL},
	{"stage", JR_STRING, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, take_stage},
	JR_END,
};

static const struct jr_field ok_fields[] = {
	{"nranks", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, 1 << 20, NULL, JR_INT, R(nranks), 0,
	 NULL},
	{"nccl_version", JR_STRING, JR_REQUIRED | JR_CONTROL, 0, 0, NULL, JR_STRBUF,
	 R(nccl_version), sizeof ((struct proto_report *)0)->nccl_version, NULL},
	{"source", JR_STRING, JR_REQUIRED, 0, 0, source_words, JR_STRBUF, R(source),
	 sizeof ((struct proto_report *)0)->source, NULL},
	{"results", JR_ARRAY, JR_REQUIRED, 0, PROTO_MAX_SIZES, NULL, JR_KEEP, 0, 0, take_results},
	JR_END,
};

/* Read only when source is "model". */
static const struct jr_field model_fields[] = {
	{"model", JR_STRING, JR_REQUIRED | JR_CONTROL, 0, 0, NULL, JR_STRBUF, R(model),
	 sizeof ((struct proto_report *)0)->model, NULL},
	JR_END,
};

int proto_report_parse(const char *text, size_t len, struct proto_report *out, char *err,
                       size_t errlen)
{
	struct jr r;
	cJSON *root = NULL;
	int rc = -1;

	memset(out, 0, sizeof *out);
	jr_init(&r, "report", err, errlen);
	root = jr_parse(&r, text, len);
	if (!root || jr_dispatch(&r, root, head_fields, true, out, NULL) < 0)
		goto out;
	if (!out->ok) {
		rc = jr_dispatch(&r, root, fail_fields, true, out, NULL);
		goto out;
	}
	if (jr_dispatch(&r, root, ok_fields, true, out, NULL) < 0)
		goto out;
	if (strcmp(out->source, "model") == 0) {
		if (jr_dispatch(&r, root, model_fields, true, out, NULL) < 0)
			goto out;
		/* a model probe names its model; an empty name would not survive formatting */
		if (!out->model[0]) {
			jr_push_key(&r, "model");
			jr_fail(&r, "empty");
			goto out;
		}
	}
	/* ok with a wrong sum breaks the protocol's promise; never let it pass as a
	 * measurement: turn it into the verify failure it really is. */
	for (size_t i = 0; i < out->nresults; i++) {
		if (!out->results[i].correct) {
			out->ok = false;
			out->stage = PROTO_STAGE_VERIFY;
			snprintf(out->error, sizeof out->error,
			         "probe reported ok with correct: false for %zu bytes",
			         out->results[i].bytes);
			break;
		}
	}
	rc = 0;
out:
	cJSON_Delete(root);
	return rc;
}
