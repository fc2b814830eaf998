/* workload.h - what one step of the user's program does (docs/formats.md,
 * "nccltune-workload/1"): message sizes, how often each runs, the data type; the probe
 * arguments that measure it and the objective (time per step) computed from a report. */
#ifndef NCCLTUNE_WORKLOAD_H
#define NCCLTUNE_WORKLOAD_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include "proto.h"

#define WORKLOAD_SCHEMA "nccltune-workload/1"
#define WORKLOAD_MAX_ENTRIES PROTO_MAX_SIZES
#define WORKLOAD_MAX_COUNT 1000000L   /* all-reduces of one size per step */
#define WORKLOAD_OPS_CAP 1024         /* --ops passed to the probe at most */
#define WORKLOAD_PROBE_ARGS 14        /* strings workload_probe_args writes at most */

struct workload_entry {
	size_t bytes;     /* per rank, all-reduce */
	long count;       /* all-reduces of this size per step */
};

struct workload {
	enum proto_dtype dtype;
	size_t n;
	struct workload_entry e[WORKLOAD_MAX_ENTRIES];
	size_t nguard;    /* guard sizes: measured in the baseline and final runs, never tuned */
	size_t guard[WORKLOAD_MAX_ENTRIES];
	bool guard_given; /* "guard" / --guard named them (else the default ladder may apply) */
	int iters;        /* --iters for the probe (graph replays timed) */
	int warmup;       /* --warmup for the probe */
	/* The server's step (probe capabilities "compute" and "window"): */
	double compute_us;    /* a kernel of this many us before every all-reduce; 0 none */
	int compute_ctas;     /* its CTAs; 0: one per SM (the probe's default) */
	bool window_symmetric;/* buffers registered as symmetric windows (--window symmetric) */
};

/* The seed story's step: 122 all-reduces of 43008 bytes bf16, 200 iterations, 20
 * warm-up replays. Can't fail. */
void workload_default(struct workload *w);

/* Parse the JSON text of a workload file. `origin` (a file name) starts every message,
 * which names the key at fault ("w.json: collectives[1].bytes: must be an integer in
 * 1..17179869184"). Unknown keys are errors. Entries of equal size are merged (counts
 * added). Returns 0, or -1 with the message in err (w is then unspecified). */
int workload_parse(const char *text, size_t len, const char *origin, struct workload *w,
                   char *err, size_t errlen);

/* Build a workload from command-line options: every size of `bytes_list` (as --bytes:
 * "43008,64K") runs `ops` times per step, in `dtype` (NULL: bf16). Returns 0, or -1 with
 * a message naming the option at fault. */
int workload_from_options(const char *bytes_list, int ops, const char *dtype,
                          struct workload *w, char *err, size_t errlen);

/* The workload as a JSON object in the workload file format (with iters and warmup).
 * NULL when out of memory; the caller deletes it. */
cJSON *workload_to_json(const struct workload *w);

/* Parse a workload JSON object already in memory (e.g. a journal header), as
 * workload_parse does. */
int workload_from_json(const cJSON *obj, const char *origin, struct workload *w,
                       char *err, size_t errlen);

/* The server's step of w from options: `compute` as the probe's --compute-us (US[,CTAS])
 * and `window` as its --window ("symmetric"); NULL leaves that part as it is. Returns 0,
 * or -1 with a message naming the option in err (w unchanged). */
int workload_set_server(struct workload *w, const char *compute, const char *window,
                        char *err, size_t errlen);

/* The probe's workload options: "--bytes" "B1,B2" "--ops" "K" "--dtype" "T" "--iters" "N"
 * "--warmup" "M", then "--compute-us" "US[,CTAS]" and "--window" "symmetric" when w has
 * them (ops = the largest count, capped at WORKLOAD_OPS_CAP: the probe reports
 * the latency of one all-reduce, so the count only scales the objective). With `guards`
 * (and guard sizes), they follow the tuned sizes in --bytes and --ops is a list: K for
 * each tuned size, 1 for each guard (probe extension ops-list). Writes at most `max`
 * malloc'd strings to args and returns how many, or -1 when out of memory or `max` is
 * too small (nothing left allocated). The caller frees each string. */
int workload_probe_args(const struct workload *w, bool guards, char **args, size_t max);

/* The default guard ladder (1 MiB, 16 MiB, 128 MiB) less the tuned sizes, into w's
 * guards, unless guards were given. Can't fail. */
void workload_default_guards(struct workload *w);

/* Parse a --guard list ("1M,117440512", or "none" for no guards, the default ladder
 * included) into w's guards (guard_given set). A tuned size
 * or a size listed twice is refused, as are more sizes than a probe run takes. Returns 0,
 * or -1 with a message naming --guard. */
int workload_set_guards(struct workload *w, const char *list, char *err, size_t errlen);

/* Time per step in microseconds: the sum over entries of count x median latency of
 * that size in `r` (a successful report; with compute, one op is a kernel and its
 * all-reduce, so this is the whole step). Returns 0 with *objective_us set, or -1 with
 * a message naming the size missing from the report, or saying that the report lacks
 * the compute or window the workload asked for (a probe that ignored them). */
int workload_objective(const struct workload *w, const struct proto_report *r,
                       double *objective_us, char *err, size_t errlen);

/* With compute between the all-reduces (w->compute_us > 0), the objective is the step:
 * kernels and all-reduces. This is the all-reduces' part of it: the sum over entries of
 * count x allreduce_us (one op less its kernel alone) in `r`. Returns 0, or -1 when w
 * has no compute or r lacks the figures. */
int workload_allreduce_time(const struct workload *w, const struct proto_report *r,
                            double *allreduce_us);

/* "122 x 43008 B bf16" (sizes joined with " + "), for progress lines. Returns buf. */
char *workload_describe(const struct workload *w, char *buf, size_t len);

#endif
