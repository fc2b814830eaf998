/* proto.c - probe protocol v1: workload options, report rendering and strict parsing,
 * and the extensions every probe shares: per-size --ops, capabilities, NCCL's decisions
 * ("nccl") and sweep entries. */
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
#include <strings.h>

#include "fsutil.h"

static const char *const stage_names[] = {
	[PROTO_STAGE_ARGS] = "args", [PROTO_STAGE_ENV] = "env", [PROTO_STAGE_INIT] = "init",
	[PROTO_STAGE_CAPTURE] = "capture", [PROTO_STAGE_REPLAY] = "replay",
	[PROTO_STAGE_VERIFY] = "verify",
};

static const struct { const char *name; enum proto_dtype dtype; size_t size; } dtypes[] = {
	{"bf16", PROTO_DTYPE_BF16, 2}, {"f16", PROTO_DTYPE_F16, 2}, {"f32", PROTO_DTYPE_F32, 4},
};

/* NCCL's names in index order (src/include/device.h NCCL_ALGO_*, NCCL_PROTO_*). */
static const char *const algo_names[PROTO_NCCL_NALGOS] = {
	"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT",
};
static const char *const proto_names[PROTO_NCCL_NPROTOS] = {"LL", "LL128", "Simple"};

/* In the order of enum proto_capability's bits. */
static const char *const capability_words[PROTO_CAP_COUNT] = {
	"ops-list", "decisions", "sweep", "window", "compute",
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

const char *proto_nccl_algo_name(int algo)
{
	return algo >= 0 && algo < PROTO_NCCL_NALGOS ? algo_names[algo] : NULL;
}

const char *proto_nccl_proto_name(int proto)
{
	return proto >= 0 && proto < PROTO_NCCL_NPROTOS ? proto_names[proto] : NULL;
}

int proto_nccl_algo_parse(const char *s)
{
	for (int i = 0; s && i < PROTO_NCCL_NALGOS; i++)
		if (strcasecmp(s, algo_names[i]) == 0)
			return i;
	return -1;
}

int proto_nccl_proto_parse(const char *s)
{
	for (int i = 0; s && i < PROTO_NCCL_NPROTOS; i++)
		if (strcasecmp(s, proto_names[i]) == 0)
			return i;
	return -1;
}

const char *proto_capability_name(unsigned cap)
{
	for (int i = 0; i < PROTO_CAP_COUNT; i++)
		if (cap == 1u << i)
			return capability_words[i];
	return NULL;
}

char *proto_capabilities_format(unsigned caps)
{
	cJSON *root = cJSON_CreateObject(), *words;
	char *line = NULL;

	if (!root || !cJSON_AddStringToObject(root, "schema", PROTO_SCHEMA))
		goto out;
	words = cJSON_AddArrayToObject(root, "capabilities");
	if (!words)
		goto out;
	for (int i = 0; i < PROTO_CAP_COUNT; i++) {
		cJSON *w;

		if (!(caps & (1u << i)))
			continue;
		w = cJSON_CreateString(capability_words[i]);
		if (!w || !cJSON_AddItemToArray(words, w)) {
			cJSON_Delete(w);
			goto out;
		}
	}
	line = proto_json_line(root);
out:
	cJSON_Delete(root);
	return line;
}

int proto_capabilities_parse(const char *text, size_t len, unsigned *caps, char *err,
                             size_t errlen)
{
	cJSON *root = NULL;
	const cJSON *schema, *words, *w;
	const char *end = NULL;
	unsigned got = 0;
	int rc = -1;

	*caps = 0;
	if (memchr(text, '\0', len)) {
		fs_errf(err, errlen, "capabilities: output contains a NUL byte");
		goto out;
	}
	root = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (!root || !cJSON_IsObject(root)) {
		fs_errf(err, errlen, "capabilities: not a JSON object");
		goto out;
	}
	for (; end && end < text + len; end++) {
		if (!isspace((unsigned char)*end)) {
			fs_errf(err, errlen, "capabilities: more than one JSON value");
			goto out;
		}
	}
	schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
	if (!cJSON_IsString(schema) || strcmp(schema->valuestring, PROTO_SCHEMA) != 0) {
		fs_errf(err, errlen, "capabilities: 'schema' is not '%s'", PROTO_SCHEMA);
		goto out;
	}
	words = cJSON_GetObjectItemCaseSensitive(root, "capabilities");
	if (!cJSON_IsArray(words)) {
		fs_errf(err, errlen, "capabilities: 'capabilities' is not an array");
		goto out;
	}
	cJSON_ArrayForEach(w, words) {
		if (!cJSON_IsString(w)) {
			fs_errf(err, errlen, "capabilities: an entry of 'capabilities' is not a string");
			goto out;
		}
		for (int i = 0; i < PROTO_CAP_COUNT; i++)
			if (strcmp(w->valuestring, capability_words[i]) == 0)
				got |= 1u << i;
	}
	*caps = got;
	rc = 0;
out:
	cJSON_Delete(root);
	return rc;
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

/* --ops N or --ops N1,N2,...: one value sets ops for every size (nops 0); a list of two
 * or more sets ops_list, nops and ops (their largest). */
static int ops_parse(const char *arg, struct proto_workload *w, char *err, size_t errlen)
{
	int vals[PROTO_MAX_SIZES], maxv = 0;
	size_t n = 0;
	const char *p = arg;
	long v;

	if (!arg || !strchr(arg, ',')) {
		if (fs_parse_long(arg, 1, PROTO_MAX_OPS, &v) != 0)
			return fs_errf(err, errlen, "--ops: '%s' is not an integer in 1..%d",
			               arg ? arg : "", PROTO_MAX_OPS);
		w->ops = (int)v;
		w->nops = 0;
		return 0;
	}
	for (;;) {
		size_t len = strcspn(p, ",");
		char item[32];

		if (n == PROTO_MAX_SIZES)
			return fs_errf(err, errlen, "--ops: more than %d values in '%s'", PROTO_MAX_SIZES,
			               arg);
		if (len == 0 || len >= sizeof item)
			return fs_errf(err, errlen, "--ops: bad item '%.*s' in '%s'", (int)len, p, arg);
		memcpy(item, p, len);
		item[len] = '\0';
		if (fs_parse_long(item, 1, PROTO_MAX_OPS, &v) != 0)
			return fs_errf(err, errlen, "--ops: '%s' in '%s' is not an integer in 1..%d", item,
			               arg, PROTO_MAX_OPS);
		vals[n++] = (int)v;
		if (v > maxv)
			maxv = (int)v;
		p += len;
		if (*p == '\0')
			break;
		p++;
		if (*p == '\0')
			return fs_errf(err, errlen, "--ops: trailing comma in '%s'", arg);
	}
	memcpy(w->ops_list, vals, n * sizeof vals[0]);
	w->nops = n;
	w->ops = maxv;
	return 0;
}

int proto_workload_ops(const struct proto_workload *w, size_t i)
{
	if (w->nops > 0 && i < w->nops)
		return w->ops_list[i];
	return w->ops;
}

int proto_workload_validate(const struct proto_workload *w, char *err, size_t errlen)
{
	if (w->nops > 0 && w->nops != w->nsizes)
		return fs_errf(err, errlen, "--ops: %zu values for %zu --bytes size%s (give one value "
		               "for all sizes, or one per --bytes entry)", w->nops, w->nsizes,
		               w->nsizes == 1 ? "" : "s");
	return 0;
}

int proto_workload_option(struct proto_workload *w, const char *name, const char *arg,
                          char *err, size_t errlen)
{
	long v;

	if (strcmp(name, "bytes") == 0)
		return proto_bytes_parse(arg, w, err, errlen);
	if (strcmp(name, "ops") == 0)
		return ops_parse(arg, w, err, errlen);
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

/* ---- rendering the extensions ---- */

/* `name`: NCCL's name for index i, or null (PROTO_NCCL_ANY / unknown). */
static bool add_name_or_null(cJSON *o, const char *key, const char *name)
{
	return name ? cJSON_AddStringToObject(o, key, name) != NULL
	            : cJSON_AddNullToObject(o, key) != NULL;
}

static bool add_stats(cJSON *o, const char *key, const struct proto_stats *st)
{
	cJSON *us = cJSON_AddObjectToObject(o, key);

	return us && cJSON_AddNumberToObject(us, "median", st->median) &&
	       cJSON_AddNumberToObject(us, "p10", st->p10) &&
	       cJSON_AddNumberToObject(us, "p90", st->p90) &&
	       cJSON_AddNumberToObject(us, "min", st->min) &&
	       cJSON_AddNumberToObject(us, "max", st->max);
}

/* "nccl": {"algo", "proto", "ctas", "symmetric"[, "kernel"][, "mixed": true]}. */
static bool add_decision(cJSON *o, const struct proto_decision *d)
{
	cJSON *n = cJSON_AddObjectToObject(o, "nccl");

	if (!n || !add_name_or_null(n, "algo", proto_nccl_algo_name(d->algo)) ||
	    !add_name_or_null(n, "proto", proto_nccl_proto_name(d->proto)) ||
	    !cJSON_AddNumberToObject(n, "ctas", d->ctas) ||
	    !cJSON_AddBoolToObject(n, "symmetric", d->symmetric))
		return false;
	if (d->kernel[0] && !cJSON_AddStringToObject(n, "kernel", d->kernel))
		return false;
	return !d->mixed || cJSON_AddBoolToObject(n, "mixed", true);
}

static bool add_sweep_entry(cJSON *arr, const struct proto_sweep_entry *e)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddItemToArray(arr, o)) {
		cJSON_Delete(o);
		return false;
	}
	if (!cJSON_AddNumberToObject(o, "index", (double)e->index) ||
	    !cJSON_AddNumberToObject(o, "bytes", (double)e->bytes) ||
	    !add_name_or_null(o, "algo", proto_nccl_algo_name(e->algo)) ||
	    !add_name_or_null(o, "proto", proto_nccl_proto_name(e->proto)) ||
	    !cJSON_AddNumberToObject(o, "ctas", e->ctas) ||
	    !cJSON_AddBoolToObject(o, "ok", e->ok))
		return false;
	if (e->ok) {
		if (!cJSON_AddNumberToObject(o, "samples", e->samples) || !add_stats(o, "us", &e->us))
			return false;
	} else if (!cJSON_AddStringToObject(o, "stage", proto_stage_name(e->stage)) ||
	           !cJSON_AddStringToObject(o, "error", e->error)) {
		return false;
	}
	return !e->nccl.known || add_decision(o, &e->nccl);
}

/* "sweep_in_flight" (failure reports) and "sweep", when the report has either. */
static bool add_sweep(cJSON *root, const struct proto_report *r)
{
	cJSON *arr;

	if (!r->sweep && r->nsweep == 0 && !r->has_in_flight)
		return true;
	if (!r->ok && r->has_in_flight &&
	    !cJSON_AddNumberToObject(root, "sweep_in_flight", (double)r->sweep_in_flight))
		return false;
	arr = cJSON_AddArrayToObject(root, "sweep");
	if (!arr)
		return false;
	for (size_t i = 0; i < r->nsweep; i++)
		if (!add_sweep_entry(arr, &r->sweep[i]))
			return false;
	return true;
}

void proto_report_clear(struct proto_report *r)
{
	if (!r)
		return;
	free(r->sweep);
	r->sweep = NULL;
	r->nsweep = 0;
	r->has_in_flight = false;
	r->sweep_in_flight = 0;
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
		    !cJSON_AddStringToObject(root, "error", r->error) || !add_sweep(root, r))
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
			if (s->nccl.known && !add_decision(o, &s->nccl))
				goto fail;
		}
		if (!add_sweep(root, r))
			goto fail;
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

/* ---- parsing the extensions: decisions ("nccl") and sweep entries ----
 * Self-contained (only cJSON and fs_errf), called from parse_result and
 * proto_report_parse by one line each. */

static int ext_no_duplicates(const cJSON *obj, const char *where, char *err, size_t errlen)
{
	for (const cJSON *a = obj->child; a; a = a->next)
		for (const cJSON *b = a->next; b; b = b->next)
			if (a->string && b->string && strcmp(a->string, b->string) == 0)
				return fs_errf(err, errlen, "%s: key '%s' appears twice", where, a->string);
	return 0;
}

/* A required number, finite, in [lo, hi], integral when asked. */
static int ext_number(const cJSON *o, const char *key, const char *where, double lo, double hi,
                      bool integral, double *out, char *err, size_t errlen)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!it)
		return fs_errf(err, errlen, "%s: missing '%s'", where, key);
	if (!cJSON_IsNumber(it))
		return fs_errf(err, errlen, "%s: '%s' is not a number", where, key);
	if (!isfinite(it->valuedouble))
		return fs_errf(err, errlen, "%s: '%s' is not finite", where, key);
	if (it->valuedouble < lo || it->valuedouble > hi)
		return fs_errf(err, errlen, "%s: '%s' = %g is out of range [%g, %g]", where, key,
		               it->valuedouble, lo, hi);
	if (integral && it->valuedouble != floor(it->valuedouble))
		return fs_errf(err, errlen, "%s: '%s' = %g is not an integer", where, key,
		               it->valuedouble);
	*out = it->valuedouble;
	return 0;
}

/* A required boolean. */
static int ext_bool(const cJSON *o, const char *key, const char *where, bool *out, char *err,
                    size_t errlen)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!it)
		return fs_errf(err, errlen, "%s: missing '%s'", where, key);
	if (!cJSON_IsBool(it))
		return fs_errf(err, errlen, "%s: '%s' is not a boolean", where, key);
	*out = cJSON_IsTrue(it);
	return 0;
}

/* A required algorithm (is_algo) or protocol name, any case, or null (PROTO_NCCL_ANY). */
static int ext_nccl_name(const cJSON *o, const char *key, const char *where, bool is_algo,
                         int *out, char *err, size_t errlen)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!it)
		return fs_errf(err, errlen, "%s: missing '%s'", where, key);
	if (cJSON_IsNull(it)) {
		*out = PROTO_NCCL_ANY;
		return 0;
	}
	if (!cJSON_IsString(it))
		return fs_errf(err, errlen, "%s: '%s' is neither a string nor null", where, key);
	*out = is_algo ? proto_nccl_algo_parse(it->valuestring)
	               : proto_nccl_proto_parse(it->valuestring);
	if (*out < 0)
		return fs_errf(err, errlen, "%s: '%s' = '%.32s' is not one of %s", where, key,
		               it->valuestring, is_algo ? "Tree, Ring, CollNetDirect, CollNetChain, "
		               "NVLS, NVLSTree, PAT" : "LL, LL128, Simple");
	return 0;
}

int proto_decision_parse(const cJSON *obj, const char *where, struct proto_decision *out,
                         char *err, size_t errlen)
{
	const cJSON *it;
	double v;

	memset(out, 0, sizeof *out);
	if (!cJSON_IsObject(obj))
		return fs_errf(err, errlen, "%s: not an object", where);
	if (ext_no_duplicates(obj, where, err, errlen) ||
	    ext_nccl_name(obj, "algo", where, true, &out->algo, err, errlen) ||
	    ext_nccl_name(obj, "proto", where, false, &out->proto, err, errlen) ||
	    ext_number(obj, "ctas", where, 1, PROTO_MAX_CTAS, true, &v, err, errlen) ||
	    ext_bool(obj, "symmetric", where, &out->symmetric, err, errlen))
		return -1;
	out->ctas = (int)v;
	if (!out->symmetric && (out->algo < 0 || out->proto < 0))
		return fs_errf(err, errlen, "%s: 'algo' and 'proto' may be null only with "
		               "'symmetric': true", where);
	it = cJSON_GetObjectItemCaseSensitive(obj, "mixed");
	if (it && ext_bool(obj, "mixed", where, &out->mixed, err, errlen))
		return -1;
	it = cJSON_GetObjectItemCaseSensitive(obj, "kernel");
	if (it) {
		if (!cJSON_IsString(it))
			return fs_errf(err, errlen, "%s: 'kernel' is not a string", where);
		if (strlen(it->valuestring) >= sizeof out->kernel)
			return fs_errf(err, errlen, "%s: 'kernel' is longer than %zu characters", where,
			               sizeof out->kernel - 1);
		memcpy(out->kernel, it->valuestring, strlen(it->valuestring) + 1);
	}
	out->known = true;
	return 0;
}

/* The optional "nccl" of a results[] entry named `where`. */
static int parse_result_decision(const cJSON *o, const char *where, struct proto_decision *d,
                                 char *err, size_t errlen)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, "nccl");
	char at[80];

	memset(d, 0, sizeof *d);
	if (!it)
		return 0;
	snprintf(at, sizeof at, "%s.nccl", where);
	return proto_decision_parse(it, at, d, err, errlen);
}

static int parse_sweep_entry(const cJSON *o, size_t pos, struct proto_sweep_entry *e, char *err,
                             size_t errlen)
{
	char where[64];
	const cJSON *it, *us;
	double v;

	memset(e, 0, sizeof *e);
	snprintf(where, sizeof where, "sweep[%zu]", pos);
	if (!cJSON_IsObject(o))
		return fs_errf(err, errlen, "%s: not an object", where);
	if (ext_no_duplicates(o, where, err, errlen) ||
	    ext_number(o, "index", where, 0, PROTO_MAX_CHOICES - 1, true, &v, err, errlen))
		return -1;
	e->index = (size_t)v;
	if (ext_number(o, "bytes", where, 1, (double)PROTO_MAX_BYTES, true, &v, err, errlen))
		return -1;
	e->bytes = (size_t)v;
	if (ext_nccl_name(o, "algo", where, true, &e->algo, err, errlen) ||
	    ext_nccl_name(o, "proto", where, false, &e->proto, err, errlen) ||
	    ext_number(o, "ctas", where, 0, PROTO_MAX_CTAS, true, &v, err, errlen))
		return -1;
	e->ctas = (int)v;
	if (ext_bool(o, "ok", where, &e->ok, err, errlen))
		return -1;
	it = cJSON_GetObjectItemCaseSensitive(o, "nccl");
	if (it) {
		char at[80];

		snprintf(at, sizeof at, "%s.nccl", where);
		if (proto_decision_parse(it, at, &e->nccl, err, errlen) != 0)
			return -1;
	}
	if (!e->ok) {
		it = cJSON_GetObjectItemCaseSensitive(o, "stage");
		if (!cJSON_IsString(it) || proto_stage_parse(it->valuestring, &e->stage) != 0)
			return fs_errf(err, errlen, "%s: 'stage' is missing or not a known stage", where);
		it = cJSON_GetObjectItemCaseSensitive(o, "error");
		if (!cJSON_IsString(it))
			return fs_errf(err, errlen, "%s: 'error' is missing or not a string", where);
		if (strlen(it->valuestring) >= sizeof e->error)
			return fs_errf(err, errlen, "%s: 'error' is longer than %zu characters", where,
			               sizeof e->error - 1);
		memcpy(e->error, it->valuestring, strlen(it->valuestring) + 1);
		return 0;
	}
	if (ext_number(o, "samples", where, 1, INT_MAX, true, &v, err, errlen))
		return -1;
	e->samples = (int)v;
	us = cJSON_GetObjectItemCaseSensitive(o, "us");
	if (!cJSON_IsObject(us))
		return fs_errf(err, errlen, "%s: 'us' is missing or not an object", where);
	snprintf(where, sizeof where, "sweep[%zu].us", pos);
	if (ext_no_duplicates(us, where, err, errlen) ||
	    ext_number(us, "median", where, 0, 1e12, false, &e->us.median, err, errlen) ||
	    ext_number(us, "p10", where, 0, 1e12, false, &e->us.p10, err, errlen) ||
	    ext_number(us, "p90", where, 0, 1e12, false, &e->us.p90, err, errlen) ||
	    ext_number(us, "min", where, 0, 1e12, false, &e->us.min, err, errlen) ||
	    ext_number(us, "max", where, 0, 1e12, false, &e->us.max, err, errlen))
		return -1;
	if (!(e->us.min <= e->us.p10 && e->us.p10 <= e->us.median && e->us.median <= e->us.p90 &&
	      e->us.p90 <= e->us.max))
		return fs_errf(err, errlen, "%s: quantiles out of order (min <= p10 <= median <= p90 "
		               "<= max)", where);
	return 0;
}

/* "sweep_in_flight" and "sweep" of a report whose ok (and, when ok, results) are parsed.
 * An ok report's entries are the choices in order (index = position), non-empty, of
 * sizes among the results, and it has no choice in flight; a failure's entries have
 * ascending indices, none the one in flight. Sets out->sweep only on success. */
static int parse_sweep_keys(const cJSON *root, struct proto_report *out, char *err,
                            size_t errlen)
{
	const cJSON *fl = cJSON_GetObjectItemCaseSensitive(root, "sweep_in_flight");
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "sweep"), *it;
	struct proto_sweep_entry *entries = NULL;
	size_t n = 0, in_flight = 0;
	double v;
	int rc = -1;

	if (fl) {
		if (out->ok)
			return fs_errf(err, errlen, "report: 'sweep_in_flight' in a successful report");
		if (ext_number(root, "sweep_in_flight", "report", 0, PROTO_MAX_CHOICES - 1, true, &v,
		               err, errlen))
			return -1;
		in_flight = (size_t)v;
	}
	if (!arr) {
		if (fl)
			return fs_errf(err, errlen, "report: 'sweep_in_flight' without 'sweep'");
		return 0;
	}
	if (!cJSON_IsArray(arr))
		return fs_errf(err, errlen, "report: 'sweep' is not an array");
	if (cJSON_GetArraySize(arr) > PROTO_MAX_CHOICES)
		return fs_errf(err, errlen, "report: more than %d sweep entries", PROTO_MAX_CHOICES);
	if (out->ok && cJSON_GetArraySize(arr) == 0)
		return fs_errf(err, errlen, "report: 'sweep' is empty");
	entries = calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof *entries);
	if (!entries)
		return fs_errf(err, errlen, "report: out of memory for the sweep entries");
	cJSON_ArrayForEach(it, arr) {
		struct proto_sweep_entry *e = &entries[n];
		bool size_known = false;

		if (parse_sweep_entry(it, n, e, err, errlen) != 0)
			goto out;
		if (out->ok && e->index != n) {
			fs_errf(err, errlen, "sweep[%zu]: 'index' is %zu, not its position", n, e->index);
			goto out;
		}
		if (!out->ok && n > 0 && e->index <= entries[n - 1].index) {
			fs_errf(err, errlen, "sweep[%zu]: 'index' %zu is not above the one before", n,
			        e->index);
			goto out;
		}
		if (fl && e->index == in_flight) {
			fs_errf(err, errlen, "sweep[%zu]: choice %zu is both final and in flight", n,
			        e->index);
			goto out;
		}
		for (size_t r = 0; r < out->nresults; r++)
			size_known = size_known || out->results[r].bytes == e->bytes;
		if (out->ok && !size_known) {
			fs_errf(err, errlen, "sweep[%zu]: %zu bytes is not one of the results' sizes", n,
			        e->bytes);
			goto out;
		}
		n++;
	}
	out->sweep = entries;
	out->nsweep = n;
	out->has_in_flight = fl != NULL;
	out->sweep_in_flight = in_flight;
	entries = NULL;
	rc = 0;
out:
	free(entries);
	return rc;
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
	if (parse_result_decision(o, where, &s->nccl, err, errlen) != 0)
		return -1;
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
		if (parse_sweep_keys(root, out, err, errlen) != 0)
			goto out;
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
		if (parse_sweep_keys(root, out, err, errlen) != 0)
			goto out;
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
