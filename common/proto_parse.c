/* proto_parse.c - the strict parser of probe reports (protocol v1 and its extensions:
 * per-size results, NCCL's decisions, sweep entries), through common/jsonread. The
 * writer is proto.c; what one writes the other accepts (tests/common/test_proto.c). */
#include "proto.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jsonread.h"

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

/* Latencies: at least PROTO_US_FLOOR (0, 1e-300 or 5e-324 us would win every search and
 * give a results.json with a zero baseline). */
static const struct jr_field us_fields[] = {
	{"median", JR_NUMBER, JR_REQUIRED, PROTO_US_FLOOR, 1e12, NULL, JR_DOUBLE, Q(median), 0, NULL},
	{"p10", JR_NUMBER, JR_REQUIRED, PROTO_US_FLOOR, 1e12, NULL, JR_DOUBLE, Q(p10), 0, NULL},
	{"p90", JR_NUMBER, JR_REQUIRED, PROTO_US_FLOOR, 1e12, NULL, JR_DOUBLE, Q(p90), 0, NULL},
	{"min", JR_NUMBER, JR_REQUIRED, PROTO_US_FLOOR, 1e12, NULL, JR_DOUBLE, Q(min), 0, NULL},
	{"max", JR_NUMBER, JR_REQUIRED, PROTO_US_FLOOR, 1e12, NULL, JR_DOUBLE, Q(max), 0, NULL},
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


/* ---- the extensions: decisions ("nccl") and sweep entries ---- */

/* An algorithm or protocol name (any case) into the int at dst; null stores nothing
 * (the caller preset PROTO_NCCL_ANY). */
static int take_nccl_name(struct jr *r, const cJSON *v, int *dst, bool is_algo)
{
	char q[80];
	int i;

	if (cJSON_IsNull(v))
		return 0;
	i = is_algo ? proto_nccl_algo_parse(v->valuestring) : proto_nccl_proto_parse(v->valuestring);
	if (i < 0)
		return jr_fail(r, "%s is not one of %s", jr_quote(v->valuestring, q, sizeof q),
		               is_algo ? "Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT"
		                       : "LL, LL128, Simple");
	*dst = i;
	return 0;
}

static int take_dec_algo(struct jr *r, const cJSON *v, void *dst)
{
	return take_nccl_name(r, v, &((struct proto_decision *)dst)->algo, true);
}

static int take_dec_proto(struct jr *r, const cJSON *v, void *dst)
{
	return take_nccl_name(r, v, &((struct proto_decision *)dst)->proto, false);
}

#define D(f) offsetof(struct proto_decision, f)

static const struct jr_field decision_fields[] = {
	{"algo", JR_STRING | JR_NULL, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, take_dec_algo},
	{"proto", JR_STRING | JR_NULL, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, take_dec_proto},
	{"ctas", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, PROTO_MAX_CTAS, NULL, JR_INT, D(ctas), 0,
	 NULL},
	{"symmetric", JR_BOOL, JR_REQUIRED, 0, 0, NULL, JR_BOOLEAN, D(symmetric), 0, NULL},
	{"mixed", JR_BOOL, 0, 0, 0, NULL, JR_BOOLEAN, D(mixed), 0, NULL},
	{"kernel", JR_STRING, 0, 0, 0, NULL, JR_STRBUF, D(kernel), PROTO_KERNEL_MAX, NULL},
	JR_END,
};

/* One decision object read at r's current path. */
static int read_decision(struct jr *r, const cJSON *v, struct proto_decision *d)
{
	memset(d, 0, sizeof *d);
	d->algo = d->proto = PROTO_NCCL_ANY;
	if (jr_dispatch(r, v, decision_fields, true, d, NULL) < 0)
		return -1;
	if (!d->symmetric && (d->algo < 0 || d->proto < 0))
		return jr_fail(r, "algo and proto may be null only with symmetric: true");
	d->known = true;
	return 0;
}

/* A results[] entry's "nccl". */
static int take_decision_at(struct jr *r, const cJSON *v, void *dst)
{
	return read_decision(r, v, &((struct proto_size_result *)dst)->nccl);
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
	{"nccl", JR_OBJECT, 0, 0, 0, NULL, JR_KEEP, 0, 0, take_decision_at},
	{"step_us", JR_NUMBER, 0, PROTO_US_FLOOR, 1e12, NULL, JR_DOUBLE, S(step_us), 0, NULL},
	{"allreduce_us", JR_NUMBER, 0, 0, 1e12, NULL, JR_DOUBLE, S(allreduce_us), 0, NULL},
	JR_END,
};

/* Bits of result_fields' `seen` (their positions in the table). */
#define RESULT_SEEN_STEP (UINT64_C(1) << 6)
#define RESULT_SEEN_ALLREDUCE (UINT64_C(1) << 7)

static int take_result(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct proto_report *out = ctx;

	struct proto_size_result *res = &out->results[i];
	uint64_t seen = 0;
	bool step = false;

	out->nresults = i + 1;
	if (jr_dispatch(r, v, result_fields, true, res, &seen) < 0)
		return -1;
	step = (seen & RESULT_SEEN_STEP) != 0;
	if (step != ((seen & RESULT_SEEN_ALLREDUCE) != 0))
		return jr_fail(r, "step_us and allreduce_us come together (the compute extension)");
	if (step && res->allreduce_us > res->us.median)
		return jr_fail(r, "allreduce_us %g is above the median of us %g (one op: its kernel "
		               "and its all-reduce)", res->allreduce_us, res->us.median);
	res->has_step = step;
	return 0;
}

static int take_results(struct jr *r, const cJSON *v, void *dst)
{
	if (jr_each(r, v, PROTO_MAX_SIZES, take_result, dst) < 0)
		return -1;
	if (cJSON_GetArraySize(v) == 0)
		return jr_fail(r, "empty");
	return 0;
}


/* ---- sweep entries: "sweep" and "sweep_in_flight" ---- */

#define W(f) offsetof(struct proto_sweep_entry, f)

static int take_sw_algo(struct jr *r, const cJSON *v, void *dst)
{
	return take_nccl_name(r, v, &((struct proto_sweep_entry *)dst)->algo, true);
}

static int take_sw_proto(struct jr *r, const cJSON *v, void *dst)
{
	return take_nccl_name(r, v, &((struct proto_sweep_entry *)dst)->proto, false);
}

static int take_sw_decision(struct jr *r, const cJSON *v, void *dst)
{
	return read_decision(r, v, &((struct proto_sweep_entry *)dst)->nccl);
}

static int take_sw_stage(struct jr *r, const cJSON *v, void *dst)
{
	char q[80];

	if (proto_stage_parse(v->valuestring, &((struct proto_sweep_entry *)dst)->stage) != 0)
		return jr_fail(r, "unknown stage %s", jr_quote(v->valuestring, q, sizeof q));
	return 0;
}

static int take_sw_us(struct jr *r, const cJSON *v, void *dst)
{
	struct proto_sweep_entry *e = dst;

	if (jr_dispatch(r, v, us_fields, false, &e->us, NULL) < 0)
		return -1;
	if (!(e->us.min <= e->us.p10 && e->us.p10 <= e->us.median && e->us.median <= e->us.p90 &&
	      e->us.p90 <= e->us.max))
		return jr_fail(r, "quantiles out of order (min <= p10 <= median <= p90 <= max)");
	return 0;
}

/* What every entry has; then the ok or the failed branch (objects are closed). */
static const struct jr_field sweep_fields[] = {
	{"index", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 0, PROTO_MAX_CHOICES - 1, NULL, JR_SIZE,
	 W(index), 0, NULL},
	{"bytes", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, (double)PROTO_MAX_BYTES, NULL, JR_SIZE,
	 W(bytes), 0, NULL},
	{"algo", JR_STRING | JR_NULL, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, take_sw_algo},
	{"proto", JR_STRING | JR_NULL, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, take_sw_proto},
	{"ctas", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 0, PROTO_MAX_CTAS, NULL, JR_INT, W(ctas), 0,
	 NULL},
	{"ok", JR_BOOL, JR_REQUIRED, 0, 0, NULL, JR_BOOLEAN, W(ok), 0, NULL},
	{"nccl", JR_OBJECT, 0, 0, 0, NULL, JR_KEEP, 0, 0, take_sw_decision},
	{"samples", JR_ANY, 0, 0, 0, NULL, JR_KEEP, 0, 0, NULL},
	{"us", JR_ANY, 0, 0, 0, NULL, JR_KEEP, 0, 0, NULL},
	{"stage", JR_ANY, 0, 0, 0, NULL, JR_KEEP, 0, 0, NULL},
	{"error", JR_ANY, 0, 0, 0, NULL, JR_KEEP, 0, 0, NULL},
	JR_END,
};

static const struct jr_field sweep_ok_fields[] = {
	{"samples", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, INT_MAX, NULL, JR_INT, W(samples), 0,
	 NULL},
	{"us", JR_OBJECT, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, take_sw_us},
	JR_END,
};

/* The message comes from the probe: control characters are kept (escaped on output). */
static const struct jr_field sweep_fail_fields[] = {
	{"stage", JR_STRING, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, take_sw_stage},
	{"error", JR_STRING, JR_REQUIRED | JR_CONTROL, 0, 0, NULL, JR_STRBUF, W(error),
	 PROTO_SWEEP_ERROR_MAX, NULL},
	JR_END,
};

struct sweep_read {
	struct proto_report *out;
	struct proto_sweep_entry *entries;
	bool has_in_flight;
	size_t in_flight;
};

/* One entry, and how it sits among the others: an ok report's entries are the choices in
 * order (index = position), of sizes among the results; a failure's have ascending
 * indices, none the one in flight. */
static int take_sweep_entry(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct sweep_read *sr = ctx;
	struct proto_sweep_entry *e = &sr->entries[i];
	bool size_known = false;

	e->algo = e->proto = PROTO_NCCL_ANY;
	if (jr_dispatch(r, v, sweep_fields, true, e, NULL) < 0 ||
	    jr_dispatch(r, v, e->ok ? sweep_ok_fields : sweep_fail_fields, true, e, NULL) < 0)
		return -1;
	if (sr->out->ok && e->index != i)
		return jr_fail(r, "index is %zu, not its position", e->index);
	if (!sr->out->ok && i > 0 && e->index <= sr->entries[i - 1].index)
		return jr_fail(r, "index %zu is not above the one before", e->index);
	if (sr->has_in_flight && e->index == sr->in_flight)
		return jr_fail(r, "choice %zu is both final and in flight", e->index);
	for (size_t k = 0; k < sr->out->nresults; k++)
		size_known = size_known || sr->out->results[k].bytes == e->bytes;
	if (sr->out->ok && !size_known)
		return jr_fail(r, "%zu bytes is not one of the results' sizes", e->bytes);
	return 0;
}

static const struct jr_field in_flight_fields[] = {
	{"sweep_in_flight", JR_NUMBER, JR_INTEGER, 0, PROTO_MAX_CHOICES - 1, NULL, JR_SIZE,
	 offsetof(struct sweep_read, in_flight), 0, NULL},
	JR_END,
};

/* "sweep_in_flight" and "sweep" of a report whose ok (and, when ok, results) are read.
 * Sets out->sweep only on success. */
static int read_sweep(struct jr *r, const cJSON *root, struct proto_report *out)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "sweep");
	struct sweep_read sr = {out, NULL, false, 0};
	uint64_t seen = 0;
	int n, rc = -1;

	if (jr_dispatch(r, root, in_flight_fields, true, &sr, &seen) < 0)
		return -1;
	sr.has_in_flight = seen & 1;
	if (sr.has_in_flight && out->ok) {
		jr_push_key(r, "sweep_in_flight");
		return jr_fail(r, "in a successful report");
	}
	if (!arr) {
		if (sr.has_in_flight)
			return jr_fail(r, "sweep_in_flight without sweep");
		return 0;
	}
	if (jr_push_key(r, "sweep") < 0)
		return -1;
	n = cJSON_GetArraySize(arr);
	if (cJSON_IsArray(arr) && out->ok && n == 0) {
		jr_fail(r, "empty");
		goto out;
	}
	sr.entries = calloc((size_t)(n > 0 ? n : 0) + 1, sizeof *sr.entries);
	if (!sr.entries) {
		jr_fail(r, "out of memory for the sweep entries");
		goto out;
	}
	if (jr_each(r, arr, PROTO_MAX_CHOICES, take_sweep_entry, &sr) < 0)
		goto out;
	out->sweep = sr.entries;
	out->nsweep = (size_t)n;
	out->has_in_flight = sr.has_in_flight;
	out->sweep_in_flight = sr.in_flight;
	sr.entries = NULL;
	rc = 0;
out:
	jr_pop(r);
	free(sr.entries);
	return rc;
}

/* ---- the server extensions: "compute" and "window" ---- */

#define C(f) offsetof(struct proto_compute, f)

static int take_compute_us(struct jr *r, const cJSON *v, void *dst)
{
	struct proto_compute *c = dst;

	if (jr_dispatch(r, v, us_fields, true, &c->us, NULL) < 0)
		return -1;
	if (!(c->us.min <= c->us.p10 && c->us.p10 <= c->us.median && c->us.median <= c->us.p90 &&
	      c->us.p90 <= c->us.max))
		return jr_fail(r, "quantiles out of order (min <= p10 <= median <= p90 <= max)");
	return 0;
}

static const struct jr_field compute_fields[] = {
	{"kernel_us", JR_NUMBER, JR_REQUIRED, PROTO_US_FLOOR, PROTO_MAX_COMPUTE_US, NULL, JR_DOUBLE,
	 C(kernel_us), 0, NULL},
	{"ctas", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, PROTO_MAX_COMPUTE_CTAS, NULL, JR_INT,
	 C(ctas), 0, NULL},
	{"us", JR_OBJECT, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, take_compute_us},
	JR_END,
};

static int take_compute(struct jr *r, const cJSON *v, void *dst)
{
	struct proto_report *out = dst;

	if (jr_dispatch(r, v, compute_fields, true, &out->compute, NULL) < 0)
		return -1;
	out->compute.known = true;
	return 0;
}

static const char *const window_words[] = {"symmetric", NULL};

static const struct jr_field server_fields[] = {
	{"compute", JR_OBJECT, 0, 0, 0, NULL, JR_KEEP, 0, 0, take_compute},
	{"window", JR_STRING, 0, 0, 0, window_words, JR_KEEP, 0, 0, NULL},
	JR_END,
};

/* "compute" and "window" of a successful report whose results are read: the results
 * carry step_us and allreduce_us exactly when the report has "compute". */
static int read_server(struct jr *r, const cJSON *root, struct proto_report *out)
{
	uint64_t seen = 0;

	if (jr_dispatch(r, root, server_fields, true, out, &seen) < 0)
		return -1;
	out->window_symmetric = (seen & 2) != 0;
	for (size_t i = 0; i < out->nresults; i++) {
		if (out->results[i].has_step != out->compute.known) {
			jr_push_key(r, "results");
			jr_push_index(r, i);
			return jr_fail(r, out->compute.known ? "no step_us/allreduce_us in a report "
			               "with compute" : "step_us/allreduce_us without compute in the report");
		}
	}
	return 0;
}

#define R(f) offsetof(struct proto_report, f)

/* ---- the rig extension: "ranks_per_gpu", "mps", "teardown_hung", "probe_env",
 * "warnings" ---- */

struct string_list { char (*list)[PROTO_WARNING_MAX]; size_t *n; };

static int take_string(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	const struct string_list *l = ctx;

	if (!cJSON_IsString(v))
		return jr_fail(r, "not a string");
	if (strlen(v->valuestring) >= PROTO_WARNING_MAX)
		return jr_fail(r, "longer than %d bytes", PROTO_WARNING_MAX - 1);
	snprintf(l->list[i], PROTO_WARNING_MAX, "%s", v->valuestring);
	*l->n = i + 1;
	return 0;
}

static int take_warnings(struct jr *r, const cJSON *v, void *dst)
{
	struct proto_report *out = dst;
	struct string_list l = {out->warnings, &out->nwarnings};

	return jr_each(r, v, PROTO_MAX_WARNINGS, take_string, &l);
}

static int take_probe_env(struct jr *r, const cJSON *v, void *dst)
{
	struct proto_report *out = dst;
	struct string_list l = {out->probe_env, &out->nprobe_env};

	return jr_each(r, v, PROTO_MAX_PROBE_ENV, take_string, &l);
}

static const struct jr_field rig_fields[] = {
	{"ranks_per_gpu", JR_NUMBER, JR_INTEGER, 1, PROTO_MAX_RANKS_PER_GPU, NULL, JR_INT,
	 R(ranks_per_gpu), 0, NULL},
	{"mps", JR_BOOL, 0, 0, 0, NULL, JR_BOOLEAN, R(mps), 0, NULL},
	{"teardown_hung", JR_BOOL, 0, 0, 0, NULL, JR_BOOLEAN, R(teardown_hung), 0, NULL},
	{"probe_env", JR_ARRAY, 0, 0, PROTO_MAX_PROBE_ENV, NULL, JR_KEEP, 0, 0, take_probe_env},
	{"warnings", JR_ARRAY, 0, 0, PROTO_MAX_WARNINGS, NULL, JR_KEEP, 0, 0, take_warnings},
	JR_END,
};

/* The rig extension, of any report (all optional: older probes have none of it). */
static int read_rig(struct jr *r, const cJSON *root, struct proto_report *out)
{
	uint64_t seen = 0;

	if (jr_dispatch(r, root, rig_fields, true, out, &seen) < 0)
		return -1;
	out->has_mps = (seen & 2) != 0;
	return 0;
}

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
	r.max_depth = PROTO_REPORT_DEPTH;
	/* the report is journalled as it came (unknown keys too): jr_parse bounds it all */
	root = jr_parse(&r, text, len);
	if (!root || jr_dispatch(&r, root, head_fields, true, out, NULL) < 0)
		goto out;
	if (!out->ok) {
		if (jr_dispatch(&r, root, fail_fields, true, out, NULL) < 0 ||
		    read_sweep(&r, root, out) < 0 || read_rig(&r, root, out) < 0)
			goto out;
		rc = 0;
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
	if (read_sweep(&r, root, out) < 0 || read_server(&r, root, out) < 0 ||
	    read_rig(&r, root, out) < 0)
		goto out;
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
	if (rc != 0)
		proto_report_clear(out);   /* read_sweep's entries when what follows failed */
	cJSON_Delete(root);
	return rc;
}
