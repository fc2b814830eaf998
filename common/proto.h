/* proto.h - probe protocol v1 (docs/probe-protocol.md): the workload options every probe
 * accepts, the report a probe prints, and a strict parser for that report.
 *
 * Shared by nccltune-probe, nccltune-model-probe and the tuner's runner, so the three
 * can never disagree on the wire format. Depends on cJSON only; knows nothing of CUDA. */
#ifndef NCCLTUNE_PROTO_H
#define NCCLTUNE_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define PROTO_SCHEMA "nccltune-probe/1"
#define PROTO_FINGERPRINT_SCHEMA "nccltune-fingerprint/1"
#define PROTO_MAX_SIZES 32          /* message sizes in one --bytes list */
#define PROTO_ERROR_MAX 1024        /* bytes kept of an error message */

/* Exit statuses of a probe (documented in --help of both probes). */
enum proto_exit {
	PROTO_EXIT_OK = 0,        /* report printed, ok: true */
	PROTO_EXIT_FAILED = 1,    /* report printed, ok: false (stage says where) */
	PROTO_EXIT_USAGE = 2,     /* bad option: report printed with stage "args" */
};

enum proto_dtype { PROTO_DTYPE_BF16, PROTO_DTYPE_F16, PROTO_DTYPE_F32 };

/* Where a failing probe stopped; the names are the protocol's "stage" strings. */
enum proto_stage {
	PROTO_STAGE_ARGS, PROTO_STAGE_ENV, PROTO_STAGE_INIT,
	PROTO_STAGE_CAPTURE, PROTO_STAGE_REPLAY, PROTO_STAGE_VERIFY,
};

/* What to measure, as given by the protocol's options. */
struct proto_workload {
	size_t nsizes;
	size_t bytes[PROTO_MAX_SIZES];  /* per rank, all-reduce, in the order given */
	int ops;                        /* all-reduces captured back to back in one graph */
	enum proto_dtype dtype;
	int iters;                      /* timed graph replays */
	int warmup;                     /* untimed graph replays */
	bool out_of_place;              /* default in place, as inference servers run */
};

struct proto_stats { double median, p10, p90, min, max; };

struct proto_size_result {
	size_t bytes;
	int ops;
	int samples;
	struct proto_stats us;          /* latency of one all-reduce, microseconds */
	bool correct;
};

/* One probe run's report. `source` is "measured" or "model"; `model` is empty unless
 * source is "model". On failure (ok false) only stage and error are meaningful. */
struct proto_report {
	bool ok;
	int nranks;
	char nccl_version[32];
	char source[16];
	char model[64];
	size_t nresults;
	struct proto_size_result results[PROTO_MAX_SIZES];
	enum proto_stage stage;
	char error[PROTO_ERROR_MAX];
};

/* Fill `w` with the protocol's defaults: --bytes 43008 --ops 122 --dtype bf16
 * --iters 200 --warmup 20, in place. Can't fail. */
void proto_workload_defaults(struct proto_workload *w);

/* Apply one workload option (long name without dashes: "bytes", "ops", "dtype",
 * "iters", "warmup", "out-of-place") with its argument (NULL for flags) to `w`.
 * Returns 0 on success, 1 when `name` is not a workload option (w untouched), -1 on a
 * bad value, with a message naming the option and the value in err. */
int proto_workload_option(struct proto_workload *w, const char *name, const char *arg,
                          char *err, size_t errlen);

/* Parse a comma-separated list of byte counts ("43008,65536"; suffixes K, M = KiB, MiB)
 * into w->bytes. Returns 0, or -1 with a message naming the offending item. */
int proto_bytes_parse(const char *list, struct proto_workload *w, char *err, size_t errlen);

const char *proto_dtype_name(enum proto_dtype d);        /* "bf16", "f16", "f32" */
int proto_dtype_parse(const char *s, enum proto_dtype *out); /* 0 or -1 */
size_t proto_dtype_size(enum proto_dtype d);             /* bytes per element */
const char *proto_stage_name(enum proto_stage s);
int proto_stage_parse(const char *s, enum proto_stage *out); /* 0 or -1 */

/* Summarise n samples (n >= 1; sorted in place): median, p10, p90, min, max with
 * linear interpolation between order statistics. Can't fail for n >= 1. */
void proto_stats_compute(double *samples, size_t n, struct proto_stats *out);

/* Start a failure report at `stage` with a printf-style message. Can't fail. */
void proto_report_fail(struct proto_report *r, enum proto_stage stage, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* `r` as a cJSON object (protocol v1), for a probe that adds extension keys before
 * printing it with proto_json_line. The caller owns the object (cJSON_Delete). NULL when
 * out of memory. */
struct cJSON *proto_report_json(const struct proto_report *r);

/* Any JSON value as one unformatted line followed by a newline; malloc'd, the caller
 * frees. NULL when out of memory. */
char *proto_json_line(const struct cJSON *obj);

/* Render `r` as one line of JSON (protocol v1) followed by a newline. Returns a
 * malloc'd string the caller frees, or NULL when out of memory. */
char *proto_report_format(const struct proto_report *r);

/* Write `r` to `f` as proto_report_format does and flush. Returns 0 or -1 (I/O). */
int proto_report_write(const struct proto_report *r, FILE *f);

/* Strictly parse a probe's stdout (len bytes, not necessarily NUL-terminated):
 * exactly one JSON object, optionally surrounded by whitespace; right schema; every
 * required field present with the right type; latencies finite and >= 0; stage a
 * known name. Returns 0, or -1 with the first violation in err (the caller classifies
 * that as "garbage"). */
int proto_report_parse(const char *text, size_t len, struct proto_report *out,
                       char *err, size_t errlen);

#endif
