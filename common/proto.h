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

struct cJSON;

#define PROTO_SCHEMA "nccltune-probe/1"
#define PROTO_FINGERPRINT_SCHEMA "nccltune-fingerprint/1"
#define PROTO_MAX_SIZES 32          /* message sizes in one --bytes list */
#define PROTO_MAX_BYTES ((size_t)1 << 34)   /* 16 GiB per rank: beyond small-message tuning */
#define PROTO_MAX_OPS 100000        /* all-reduces of one size per step */
#define PROTO_ERROR_MAX 1024        /* bytes kept of an error message */
#define PROTO_MAX_CHOICES 1024      /* choices in one sweep file (nccltune-sweep/1) */
#define PROTO_SWEEP_ERROR_MAX 256   /* bytes kept of a sweep entry's error message */
#define PROTO_MAX_CTAS 1024         /* largest CTA count a decision may report */
#define PROTO_KERNEL_MAX 64         /* bytes kept of a symmetric kernel's name */
#define PROTO_US_FLOOR 1e-6         /* microseconds (1 ps): nothing completes faster, and
                                     * a latency below it (0, 1e-300, 5e-324) is garbage,
                                     * never a measurement. Not higher: with one rank an
                                     * all-reduce is a no-op, and one graph replay of the
                                     * 122 ops measured 0.0105 us per op on an H200 */
#define PROTO_MAX_COMPUTE_US 10000.0   /* --compute-us: longest kernel between two
                                        * all-reduces (10 ms) */
#define PROTO_MAX_COMPUTE_CTAS 65535    /* --compute-us US,CTAS: largest grid */
#define PROTO_MAX_WARNINGS 8        /* "warnings" kept of one report */
#define PROTO_WARNING_MAX 256       /* bytes kept of one warning */
#define PROTO_MAX_PROBE_ENV 4       /* "probe_env" entries kept of one report */
#define PROTO_MAX_RANKS_PER_GPU 64  /* --ranks-per-gpu: largest sharing of one GPU */
#define PROTO_REPORT_DEPTH 16       /* deepest nesting of a report (unknown keys too):
                                     * a journalled report stays readable by its replay */

/* What a probe can do beyond protocol v1 (--capabilities, docs/probe-protocol.md). The
 * words are the protocol's: "ops-list", "decisions", "sweep", "window", "compute". */
enum proto_capability {
	PROTO_CAP_OPS_LIST = 1u << 0,    /* --ops N1,N2,...: one count per --bytes entry */
	PROTO_CAP_DECISIONS = 1u << 1,   /* "nccl": what NCCL ran, per result / sweep entry */
	PROTO_CAP_SWEEP = 1u << 2,       /* --sweep FILE (nccltune-sweep/1) */
	PROTO_CAP_WINDOW = 1u << 3,      /* --window symmetric */
	PROTO_CAP_COMPUTE = 1u << 4,     /* --compute-us US[,CTAS] */
};
#define PROTO_CAP_COUNT 5

/* NCCL's algorithm and protocol indices (NCCL_ALGO_*, NCCL_PROTO_*; the same in NCCL
 * 2.24 - 2.30): Tree 0, Ring 1, CollNetDirect 2, CollNetChain 3, NVLS 4, NVLSTree 5,
 * PAT 6; LL 0, LL128 1, Simple 2. PROTO_NCCL_ANY (-1): NCCL's own choice / unknown. */
#define PROTO_NCCL_ANY (-1)
#define PROTO_NCCL_NALGOS 7
#define PROTO_NCCL_NPROTOS 3

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
	int ops;                        /* all-reduces captured back to back in one graph; with
	                                   a per-size list, the largest of it (a safe bound) */
	size_t nops;                    /* 0: `ops` for every size; else entries of ops_list
	                                   (one per --bytes entry once validated) */
	int ops_list[PROTO_MAX_SIZES];  /* per-size counts of --ops N1,N2,... */
	enum proto_dtype dtype;
	int iters;                      /* timed graph replays */
	int warmup;                     /* untimed graph replays */
	bool out_of_place;              /* default in place, as inference servers run */
	/* Extensions (capabilities "compute", "window"; docs/probe-protocol.md). */
	double compute_us;              /* --compute-us: a busy kernel of this many us before
	                                   every captured all-reduce; 0: none */
	int compute_ctas;               /* its CTAs; 0: one per SM of the GPU */
	bool window_symmetric;          /* --window symmetric: buffers from ncclMemAlloc,
	                                   registered as symmetric windows */
};

struct proto_stats { double median, p10, p90, min, max; };

/* What NCCL ran for the ops of one size ("nccl" in a result or sweep entry). */
struct proto_decision {
	bool known;                     /* false: the report has no "nccl" here */
	int algo;                       /* PROTO_NCCL_* index; PROTO_NCCL_ANY only when symmetric */
	int proto;                      /* likewise */
	int ctas;                       /* CTAs (channels) one op ran on, 1..PROTO_MAX_CTAS */
	bool symmetric;                 /* a symmetric kernel (registered window) ran */
	bool mixed;                     /* the size's ops did not all run the same */
	char kernel[PROTO_KERNEL_MAX];  /* the symmetric kernel's name; "" otherwise */
};

struct proto_size_result {
	size_t bytes;
	int ops;
	int samples;
	struct proto_stats us;          /* latency of one all-reduce, microseconds */
	bool correct;
	struct proto_decision nccl;     /* extension; known false when absent */
	/* With "compute" in the report (the compute extension), both are present: */
	bool has_step;
	double step_us;                 /* median of whole graph replays: the step, all ops
	                                   and their kernels, microseconds */
	double allreduce_us;            /* the all-reduce's share of one op: the median of `us`
	                                   less the kernel alone (compute.us.median), >= 0 */
};

/* The compute between the all-reduces, as the probe ran it ("compute" in a report). */
struct proto_compute {
	bool known;                     /* false: the report has no "compute" */
	double kernel_us;               /* the kernel's duration as asked (--compute-us) */
	int ctas;                       /* the CTAs it ran on (resolved: never 0) */
	struct proto_stats us;          /* one kernel measured alone (no all-reduce), us */
};

/* One choice of a sweep (--sweep FILE) as reported. The choice: bytes, algo and proto
 * (PROTO_NCCL_ANY = NCCL's), ctas (0 = NCCL's). ok: samples and us (as in results) are
 * meaningful; else stage and error. nccl: what NCCL ran, when known (ok or not). */
struct proto_sweep_entry {
	size_t index;                   /* position of the choice in the sweep file */
	size_t bytes;
	int algo, proto, ctas;
	bool ok;
	int samples;
	struct proto_stats us;
	enum proto_stage stage;
	char error[PROTO_SWEEP_ERROR_MAX];
	struct proto_decision nccl;
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
	/* Sweep extension. ok: one entry per choice, in the file's order. Failure: the
	 * entries that were final when the run failed (index ascending), and, when a choice
	 * was being prepared or replayed, its index. `sweep` is malloc'd and owned by the
	 * report: proto_report_clear frees it (a struct copy shares it). */
	struct proto_sweep_entry *sweep;
	size_t nsweep;
	bool has_in_flight;
	size_t sweep_in_flight;
	/* Extensions of a successful report: the compute run between the all-reduces, and
	 * "window": "symmetric" when the buffers were registered symmetric windows. */
	struct proto_compute compute;
	bool window_symmetric;
	/* The rig extension (success and failure; docs/probe-protocol.md, "Several ranks on
	 * one GPU"): ranks_per_gpu is how many ranks share each GPU (0: the report does not
	 * say, which reads as 1); mps says whether the MPS daemon served processes sharing a
	 * GPU (meaningful only when has_mps); warnings are what went wrong without costing
	 * the measurement (a teardown that hung); probe_env the variables the probe set
	 * for NCCL itself, "NAME=VALUE". */
	int ranks_per_gpu;
	bool has_mps, mps;
	/* "teardown_hung": true - a watchdog ended a teardown that hung after every result
	 * was checked and timed: the report is whole, but a launcher (mpirun, srun) may
	 * call the job failed because a rank left without finalizing MPI, so the exit
	 * status does not count against an ok report (docs/probe-protocol.md). */
	bool teardown_hung;
	size_t nwarnings;
	char warnings[PROTO_MAX_WARNINGS][PROTO_WARNING_MAX];
	size_t nprobe_env;
	char probe_env[PROTO_MAX_PROBE_ENV][PROTO_WARNING_MAX];
};

/* Fill `w` with the protocol's defaults: --bytes 43008 --ops 122 --dtype bf16
 * --iters 200 --warmup 20, in place. Can't fail. */
void proto_workload_defaults(struct proto_workload *w);

/* Apply one workload option (long name without dashes: "bytes", "ops", "dtype",
 * "iters", "warmup", "out-of-place", and the extensions "compute-us" (US[,CTAS]: US a
 * decimal number in (0, PROTO_MAX_COMPUTE_US], CTAS an integer in
 * 1..PROTO_MAX_COMPUTE_CTAS) and "window" (only "symmetric")) with its argument (NULL for flags) to `w`.
 * Returns 0 on success, 1 when `name` is not a workload option (w untouched), -1 on a
 * bad value, with a message naming the option and the value in err. */
int proto_workload_option(struct proto_workload *w, const char *name, const char *arg,
                          char *err, size_t errlen);

/* The ops count of size i: ops_list[i] when a per-size list was given, else ops.
 * Can't fail. */
int proto_workload_ops(const struct proto_workload *w, size_t i);

/* Checks that need every workload option: a per-size --ops list has one value per
 * --bytes entry. Call once all options are applied. Returns 0, or -1 with a message
 * naming both options in err. */
int proto_workload_validate(const struct proto_workload *w, char *err, size_t errlen);

/* Parse a comma-separated list of byte counts ("43008,64K,1.5M,1G": suffixes K, M, G =
 * KiB, MiB, GiB; a decimal fraction when it gives whole bytes) into w->bytes. Returns 0,
 * or -1 with a message naming the offending item. */
int proto_bytes_parse(const char *list, struct proto_workload *w, char *err, size_t errlen);

const char *proto_dtype_name(enum proto_dtype d);        /* "bf16", "f16", "f32" */
int proto_dtype_parse(const char *s, enum proto_dtype *out); /* 0 or -1 */
size_t proto_dtype_size(enum proto_dtype d);             /* bytes per element */
const char *proto_stage_name(enum proto_stage s);

/* NCCL's canonical names (common/ncclvars' word lists): "Tree", "Ring", "CollNetDirect",
 * "CollNetChain", "NVLS", "NVLSTree", "PAT"; "LL", "LL128", "Simple". NULL for an index
 * out of range (including PROTO_NCCL_ANY). */
const char *proto_nccl_algo_name(int algo);
const char *proto_nccl_proto_name(int proto);
/* Case-insensitive: the index of `s` among those names, or -1 when it is none of them. */
int proto_nccl_algo_parse(const char *s);
int proto_nccl_proto_parse(const char *s);

/* The capability word of one PROTO_CAP_* bit ("ops-list", ...); NULL for anything else. */
const char *proto_capability_name(unsigned cap);

/* What --capabilities prints: {"schema":"nccltune-probe/1","capabilities":[...]} and a
 * newline, the words in the order of enum proto_capability. malloc'd, the caller frees;
 * NULL when out of memory. */
char *proto_capabilities_format(unsigned caps);

/* Read what a probe printed for --capabilities (len bytes): exactly one JSON object with
 * the protocol's schema and an array of strings. Words this version does not know are
 * skipped (a newer probe); keys other than these two are ignored. Returns 0 with the
 * PROTO_CAP_* bits in *caps, or -1 with the reason in err (the caller then assumes no
 * capabilities). */
int proto_capabilities_parse(const char *text, size_t len, unsigned *caps, char *err,
                             size_t errlen);
int proto_stage_parse(const char *s, enum proto_stage *out); /* 0 or -1 */

/* Summarise n samples (n >= 1; sorted in place): median, p10, p90, min, max with
 * linear interpolation between order statistics. Can't fail for n >= 1. */
void proto_stats_compute(double *samples, size_t n, struct proto_stats *out);

/* r's result for size `bytes`, or NULL when r has none. Can't fail. */
const struct proto_size_result *proto_report_size(const struct proto_report *r,
                                                  size_t bytes);

/* Free what `r` owns (the sweep entries) and leave it with none; the rest is untouched.
 * Accepts NULL. Call it before a report goes out of scope or is parsed into again. */
void proto_report_clear(struct proto_report *r);

/* Append a printf-style warning to r->warnings (dropped, returning -1, when
 * PROTO_MAX_WARNINGS are there; truncated at PROTO_WARNING_MAX). 0 otherwise. */
int proto_report_warn(struct proto_report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

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
 * known name; decisions and sweep entries, when present, well formed (sweep entries of
 * an ok report one per choice in order, of sizes among the results). Starts by zeroing
 * *out (clear a report that holds sweep entries first). Returns 0 (free the sweep
 * entries with proto_report_clear), or -1 with *out holding nothing to free and the
 * first violation in err (the caller classifies that as "garbage"). */
int proto_report_parse(const char *text, size_t len, struct proto_report *out,
                       char *err, size_t errlen);

#endif
