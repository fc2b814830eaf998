/* proto.c - probe protocol v1: the vocabulary (dtypes, stages, NCCL's names,
 * capabilities), workload options, statistics and report rendering, with the extensions
 * every probe shares: per-size --ops, capabilities, NCCL's decisions ("nccl") and sweep
 * entries. The strict parser of reports is proto_parse.c. */
#include "proto.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "ncclvars.h"

static const char *const stage_names[] = {
	[PROTO_STAGE_ARGS] = "args", [PROTO_STAGE_ENV] = "env", [PROTO_STAGE_INIT] = "init",
	[PROTO_STAGE_CAPTURE] = "capture", [PROTO_STAGE_REPLAY] = "replay",
	[PROTO_STAGE_VERIFY] = "verify",
};

static const struct { const char *name; enum proto_dtype dtype; size_t size; } dtypes[] = {
	{"bf16", PROTO_DTYPE_BF16, 2}, {"f16", PROTO_DTYPE_F16, 2}, {"f32", PROTO_DTYPE_F32, 4},
};

/* NCCL's names in index order are common/ncclvars' word lists (one vocabulary). */
_Static_assert(PROTO_NCCL_NALGOS == NCCLVARS_NALGOS, "algorithms: proto.h and ncclvars.h");
_Static_assert(PROTO_NCCL_NPROTOS == NCCLVARS_NPROTOS, "protocols: proto.h and ncclvars.h");

/* In the order of enum proto_capability's bits. */
static const char *const capability_words[PROTO_CAP_COUNT] = {
	"ops-list", "decisions", "sweep", "window", "compute",
};

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
	return algo >= 0 ? ncclvars_word_name(NCCLVARS_ALGOS, (size_t)algo) : NULL;
}

const char *proto_nccl_proto_name(int proto)
{
	return proto >= 0 ? ncclvars_word_name(NCCLVARS_PROTOS, (size_t)proto) : NULL;
}

int proto_nccl_algo_parse(const char *s)
{
	return s ? ncclvars_word_find(NCCLVARS_ALGOS, s, strlen(s)) : -1;
}

int proto_nccl_proto_parse(const char *s)
{
	return s ? ncclvars_word_find(NCCLVARS_PROTOS, s, strlen(s)) : -1;
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
	const char *end = NULL, *first;
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
	/* A launcher that starts the probe once per rank (mpirun, srun) may print one line
	 * per rank: copies of the first value, byte for byte, count as that one value. */
	first = text;
	while (first < end && isspace((unsigned char)*first))
		first++;
	for (size_t vlen = (size_t)(end - first); end < text + len;) {
		if (isspace((unsigned char)*end)) {
			end++;
		} else if ((size_t)(text + len - end) >= vlen && memcmp(end, first, vlen) == 0) {
			end += vlen;
		} else {
			fs_errf(err, errlen, "capabilities: more than one JSON value, and not copies "
			        "of the first (one line per rank of a launcher must be the same)");
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

/* One byte count: digits, an optional decimal fraction, an optional suffix K, M or G
 * (KiB, MiB, GiB; either case). Returns 0 with *out, -1 when it is not of that form,
 * -2 when it is not a whole number of bytes (1.3K), -3 when it is out of range. */
static int byte_count(const char *item, unsigned long long *out)
{
	const char *p = item;
	unsigned long long whole = 0, frac = 0, scale = 1, mult = 1;
	int digits = 0;

	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		if (whole > PROTO_MAX_BYTES)
			return -3;
		whole = whole * 10 + (unsigned)(*p - '0');
	}
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++, digits++) {
			if (digits == 9)
				return -2;   /* finer than any suffix makes whole */
			frac = frac * 10 + (unsigned)(*p - '0');
			scale *= 10;
		}
		if (digits == 0)
			return -1;
	}
	if (*p == 'K' || *p == 'k')
		mult = 1ull << 10;
	else if (*p == 'M' || *p == 'm')
		mult = 1ull << 20;
	else if (*p == 'G' || *p == 'g')
		mult = 1ull << 30;
	if (mult > 1)
		p++;
	if (*p)
		return -1;
	if (whole > PROTO_MAX_BYTES / mult)
		return -3;
	if ((frac * mult) % scale != 0)
		return -2;
	*out = whole * mult + frac * mult / scale;
	return 0;
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
		unsigned long long v = 0;
		int rc;

		if (len == 0 || len >= sizeof item)
			return fs_errf(err, errlen, "--bytes: bad item '%.*s' in '%s'", (int)len, p, list);
		memcpy(item, p, len);
		item[len] = '\0';
		rc = byte_count(item, &v);
		if (rc == -1)
			return fs_errf(err, errlen, "--bytes: '%s' is not a byte count", item);
		if (rc == -2)
			return fs_errf(err, errlen, "--bytes: '%s' is not a whole number of bytes", item);
		if (rc == -3 || v == 0 || v > PROTO_MAX_BYTES)
			return fs_errf(err, errlen, "--bytes: '%s' is out of range (1 .. %zu)", item,
			               PROTO_MAX_BYTES);
		if (n == PROTO_MAX_SIZES)
			return fs_errf(err, errlen, "--bytes: more than %d sizes", PROTO_MAX_SIZES);
		w->bytes[n++] = (size_t)v;
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

/* --compute-us US[,CTAS]: US a plain decimal number (digits, an optional fraction; no
 * sign, exponent, hex, inf or nan) in (0, PROTO_MAX_COMPUTE_US], CTAS an integer in
 * 1..PROTO_MAX_COMPUTE_CTAS (absent: 0, one CTA per SM). */
static int compute_parse(const char *arg, struct proto_workload *w, char *err, size_t errlen)
{
	const char *p = arg ? arg : "", *comma = strchr(p, ',');
	size_t len = comma ? (size_t)(comma - p) : strlen(p), digits = 0;
	char num[32], *end;
	double us;
	long ctas = 0;

	if (len == 0 || len >= sizeof num)
		return fs_errf(err, errlen, "--compute-us: '%.64s' is not US[,CTAS] (a number of "
		               "microseconds, then optionally a CTA count)", p);
	memcpy(num, p, len);
	num[len] = '\0';
	/* digits and at most one point, with a digit somewhere: what strtod alone would
	 * also take (" 1", "+1", "1e3", "0x1p4", "inf") is refused */
	digits = strspn(num, "0123456789");
	if (num[digits] == '.')
		digits += 1 + strspn(num + digits + 1, "0123456789");
	if (digits != len || strcspn(num, "0123456789") == len)
		return fs_errf(err, errlen, "--compute-us: '%s' is not a number of microseconds in "
		               "(0, %g]", num, PROTO_MAX_COMPUTE_US);
	us = strtod(num, &end);
	if (*end || !(us > 0 && us <= PROTO_MAX_COMPUTE_US))
		return fs_errf(err, errlen, "--compute-us: '%s' is not a number of microseconds in "
		               "(0, %g]", num, PROTO_MAX_COMPUTE_US);
	if (comma && fs_parse_long(comma + 1, 1, PROTO_MAX_COMPUTE_CTAS, &ctas) != 0)
		return fs_errf(err, errlen, "--compute-us: CTAs '%.64s' is not an integer in 1..%d",
		               comma + 1, PROTO_MAX_COMPUTE_CTAS);
	w->compute_us = us;
	w->compute_ctas = (int)ctas;
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
	if (strcmp(name, "compute-us") == 0)
		return compute_parse(arg, w, err, errlen);
	if (strcmp(name, "window") == 0) {
		if (!arg || strcmp(arg, "symmetric") != 0)
			return fs_errf(err, errlen, "--window: '%.64s' is not 'symmetric' (the one kind "
			               "of window)", arg ? arg : "");
		w->window_symmetric = true;
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

int proto_report_warn(struct proto_report *r, const char *fmt, ...)
{
	va_list ap;

	if (r->nwarnings >= PROTO_MAX_WARNINGS)
		return -1;
	va_start(ap, fmt);
	vsnprintf(r->warnings[r->nwarnings], sizeof r->warnings[0], fmt, ap);
	va_end(ap);
	r->nwarnings++;
	return 0;
}

/* ---- rendering the extensions ---- */

/* A list of strings under `key`, when there is any. */
static bool add_strings(cJSON *root, const char *key, const char (*list)[PROTO_WARNING_MAX],
                        size_t n)
{
	cJSON *arr;

	if (n == 0)
		return true;
	arr = cJSON_AddArrayToObject(root, key);
	if (!arr)
		return false;
	for (size_t i = 0; i < n; i++) {
		cJSON *str = cJSON_CreateString(list[i]);

		if (!str || !cJSON_AddItemToArray(arr, str)) {
			cJSON_Delete(str);
			return false;
		}
	}
	return true;
}

/* The rig extension: "ranks_per_gpu", "mps", "teardown_hung", "probe_env", "warnings"
 * (each when known). */
static bool add_rig(cJSON *root, const struct proto_report *r)
{
	if (r->ranks_per_gpu > 0 && !cJSON_AddNumberToObject(root, "ranks_per_gpu", r->ranks_per_gpu))
		return false;
	if (r->has_mps && !cJSON_AddBoolToObject(root, "mps", r->mps))
		return false;
	if (r->teardown_hung && !cJSON_AddTrueToObject(root, "teardown_hung"))
		return false;
	return add_strings(root, "probe_env", r->probe_env, r->nprobe_env) &&
	       add_strings(root, "warnings", r->warnings, r->nwarnings);
}

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

/* "compute": {"kernel_us", "ctas", "us"} and "window": "symmetric", when the run had them. */
static bool add_server(cJSON *root, const struct proto_report *r)
{
	if (r->compute.known) {
		cJSON *c = cJSON_AddObjectToObject(root, "compute");

		if (!c || !cJSON_AddNumberToObject(c, "kernel_us", r->compute.kernel_us) ||
		    !cJSON_AddNumberToObject(c, "ctas", r->compute.ctas) ||
		    !add_stats(c, "us", &r->compute.us))
			return false;
	}
	return !r->window_symmetric || cJSON_AddStringToObject(root, "window", "symmetric");
}

const struct proto_size_result *proto_report_size(const struct proto_report *r,
                                                  size_t bytes)
{
	for (size_t i = 0; i < r->nresults; i++)
		if (r->results[i].bytes == bytes)
			return &r->results[i];
	return NULL;
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
		    !cJSON_AddStringToObject(root, "error", r->error) || !add_sweep(root, r) ||
		    !add_rig(root, r))
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
			if (s->has_step && (!cJSON_AddNumberToObject(o, "step_us", s->step_us) ||
			                    !cJSON_AddNumberToObject(o, "allreduce_us", s->allreduce_us)))
				goto fail;
		}
		if (!add_sweep(root, r) || !add_server(root, r) || !add_rig(root, r))
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
