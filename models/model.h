/* model.h - machine models: load a model file (schema "nccltune-model/1"), read the NCCL_*
 * variables the way NCCL reads them, and evaluate the latency of a small all-reduce the way
 * the modelled machine would run it, failures included.
 *
 * A model's numbers are never measurements: every result made from one says
 * "source": "model". The model probe (nccltune-model-probe) and the benchmarks use this
 * library; it is pure arithmetic, so the whole default search space (~300k configurations)
 * evaluates in seconds on one core.
 *
 * Evaluation has two layers (eval.c): first NCCL's own decisions, emulated from NCCL 2.28's
 * source (which algorithm and protocol its cost model picks, how many channels and threads
 * it gives the kernel, which transport each ring hop gets), then what that choice costs on
 * the modelled machine (per-hop latency by transport and path, per-CTA bandwidth, CTA
 * synchronisation, host callbacks). NCCL's belief and the machine's reality differ on PCIe
 * boxes; that gap is what a tuner finds. */
#ifndef NCCLTUNE_MODEL_H
#define NCCLTUNE_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include <gsl/gsl_rng.h>

#include "proto.h"

#define MODEL_SCHEMA "nccltune-model/1"
#define MODEL_ENV_VALUE_MAX 128     /* bytes of a variable's value kept for messages/rules */
#define MODEL_ENV_NVARS 16          /* variables model_env_read looks at */

struct model;   /* opaque: a loaded, validated model */

/* NCCL's algorithm and protocol indices (NCCL 2.28 order). */
enum model_algo {
	MODEL_ALGO_TREE, MODEL_ALGO_RING, MODEL_ALGO_COLLNET_DIRECT, MODEL_ALGO_COLLNET_CHAIN,
	MODEL_ALGO_NVLS, MODEL_ALGO_NVLS_TREE, MODEL_ALGO_PAT, MODEL_NALGOS
};
enum model_proto { MODEL_PROTO_LL, MODEL_PROTO_LL128, MODEL_PROTO_SIMPLE, MODEL_NPROTOS };

/* Transports a ring hop can get. */
enum model_transport {
	MODEL_TRANSPORT_NVLINK, MODEL_TRANSPORT_P2P, MODEL_TRANSPORT_SHM, MODEL_TRANSPORT_NET,
	MODEL_NTRANSPORTS
};

const char *model_algo_name(enum model_algo a);          /* "Tree", "Ring", ... */
const char *model_proto_name(enum model_proto p);        /* "LL", "LL128", "Simple" */
const char *model_transport_name(enum model_transport t); /* "nvlink", "p2p", "shm", "net" */

/* The built-in models (the .json files of models/, compiled into the library). Can't fail;
 * model_builtin_name returns NULL for i >= model_builtin_count(). */
size_t model_builtin_count(void);
const char *model_builtin_name(size_t i);

/* The JSON text of built-in model i (not NUL-terminated; *len bytes), or NULL for
 * i >= model_builtin_count(). Owned by the library. */
const char *model_builtin_text(size_t i, size_t *len);

/* Parse and validate a model from JSON text (`len` bytes, not necessarily NUL-terminated).
 * `where` names the source in messages (a path, or "built-in model NAME"). Returns a new
 * model the caller frees with model_destroy, or NULL with a message naming `where`, the
 * key and the reason in err. */
struct model *model_parse(const char *json, size_t len, const char *where, char *err,
                          size_t errlen);

/* Load a model file. NULL with a message (file, key, reason) on any error. */
struct model *model_load_file(const char *path, char *err, size_t errlen);

/* Load a built-in model by name. NULL with a message listing the built-in names. */
struct model *model_load_builtin(const char *name, char *err, size_t errlen);

/* `spec` is a built-in name, or else a path to a model file. NULL with a message. */
struct model *model_load(const char *spec, char *err, size_t errlen);

void model_destroy(struct model *m);   /* accepts NULL */

/* Accessors; can't fail. Strings are owned by the model. */
const char *model_name(const struct model *m);
const char *model_nccl_version(const struct model *m);
int model_nranks(const struct model *m);

/* The synthetic fingerprint of the modelled machine (docs/formats.md shape, "source":
 * "model", with "model": name), stable for a given model file. Returns a malloc'd
 * one-line JSON text, or NULL when out of memory. */
char *model_fingerprint_json(const struct model *m);
/* The same with "nccl_path": nccl_path after nccl_version (the probe's --nccl, resolved:
 * a model loads no library, it records the one it was told the server runs); NULL: no
 * such key, as model_fingerprint_json. */
char *model_fingerprint_json_nccl(const struct model *m, const char *nccl_path);

/* How the evaluator reads variables: return the value of `name`, or NULL when unset. */
typedef const char *(*model_getenv_fn)(void *ctx, const char *name);

/* Lookups for model_env_read: from this process's environment (ctx ignored), or from a
 * NULL-terminated "NAME=value" array (ctx is `char *const *`, e.g. environ). */
const char *model_getenv_process(void *ctx, const char *name);
const char *model_getenv_envp(void *ctx, const char *name);

/* The NCCL variables of one configuration, read once as NCCL reads them (integers with
 * strtoll base 0, "abc" is 0; NCCL_P2P_LEVEL case-sensitive; NCCL_ALGO/NCCL_PROTO lists
 * with "^" and "func:" prefixes). A value NCCL rejects at communicator init sets
 * init_failed with NCCL's kind of message. Fields hold NCCL's raw parameters; -2 means
 * unset (NCCL's own sentinel). */
struct model_env {
	bool init_failed;
	char init_error[PROTO_ERROR_MAX];
	int algo_enable[MODEL_NALGOS];      /* AllReduce row after NCCL_ALGO: 0 or 1 */
	int proto_enable[MODEL_NPROTOS];    /* AllReduce row after NCCL_PROTO: 0, 1, 2 = auto */
	bool algo_set, proto_set;
	long long nthreads, ll128_nthreads; /* NCCL_NTHREADS, NCCL_LL128_NTHREADS */
	int min_channels, max_channels;     /* after ncclMinNchannels()/ncclMaxNchannels() */
	long long buffsize[MODEL_NPROTOS];  /* NCCL_LL_BUFFSIZE, NCCL_LL128_BUFFSIZE, NCCL_BUFFSIZE */
	int p2p_level;                      /* NCCL path type index (LOC=0 .. SYS=9), -2 unset */
	bool shm_disable;
	long long nvls_enable;
	long long thread_thresholds[2][MODEL_NPROTOS]; /* NCCL_THREAD_THRESHOLDS (Tree, Ring); -2 unset */
	/* Raw values (truncated to MODEL_ENV_VALUE_MAX-1 bytes; "" when unset), in the order
	 * of model_env_var_name(), for messages and the model file's failure rules. */
	bool is_set[MODEL_ENV_NVARS];
	char raw[MODEL_ENV_NVARS][MODEL_ENV_VALUE_MAX];
};

/* The variables model_env_read looks at, in model_env.raw order; NULL past the end. */
const char *model_env_var_name(size_t i);

/* Read the variables through `get`. Can't fail: what NCCL would reject is recorded in
 * out->init_failed / out->init_error. */
void model_env_read(model_getenv_fn get, void *ctx, struct model_env *out);

/* What NCCL chose for one message size, and what it cost. */
struct model_choice {
	enum model_algo algo;
	enum model_proto proto;
	int comm_channels;     /* the communicator's channels (after MIN/MAX_NCHANNELS) */
	int channels;          /* CTAs the all-reduce ran on */
	int threads;           /* threads per CTA */
	bool host_path;        /* some hop went through host memory or the network: a proxy */
	double nccl_us;        /* what NCCL's own cost model predicted (-1: it had the pair
	                          IGNORE, and a tuner revived it) */
	bool tuned;            /* a tuner's answer changed the pair or the CTAs NCCL ran */
	bool revived;          /* the pair was IGNORE in NCCL's cost table (a tuner wrote it) */
	bool symmetric;        /* a symmetric kernel ran (--window symmetric, server.c) */
};

/* The exact (noise-free) result of one configuration on one workload. */
struct model_eval_result {
	bool ok;
	enum proto_stage stage;              /* when !ok */
	char error[PROTO_ERROR_MAX];         /* when !ok */
	size_t nsizes;
	double us[PROTO_MAX_SIZES];          /* latency of one all-reduce, per size */
	struct model_choice choice[PROTO_MAX_SIZES];
};

/* Evaluate `env` on `w`. Pure arithmetic, no allocation; can't fail (a configuration
 * that fails on the machine comes back with ok false, its stage and NCCL's message). */
void model_eval(const struct model *m, const struct model_env *env,
                const struct proto_workload *w, struct model_eval_result *out);

/* ---- tuners (NCCL's tuner-plugin interface, reference/tuner-plugin.md) ----
 *
 * With a tuner, NCCL fills its cost table for the collective (float[7][3], microseconds,
 * -1.0 = IGNORE), hands it to the tuner's getCollInfo with *nChannels 0, then takes the
 * first strict minimum among the entries >= 0 and, when nChannels came back nonzero, runs
 * that many CTAs (at most the communicator's channels) instead of its own count; threads
 * stay what NCCL computes for the pair (enqueue.cc, getAlgoInfo, v2.28.9). The model
 * splits that in two pure steps: model_cost_tables gives NCCL's tables, and a
 * struct model_force per size says what the tuner made NCCL run; model_eval_forced then
 * evaluates it. The plugin itself (a shared library) is loaded by models/tuner.c. */

#define MODEL_COST_IGNORE (-1.0f)      /* NCCL_ALGO_PROTO_IGNORE */

/* NCCL's cost table for one size, as a tuner receives it (t[algo][proto], the flat
 * float[7][3] NCCL passes as float**). */
struct model_costs {
	float t[MODEL_NALGOS][MODEL_NPROTOS];
};

/* What a tuner's answer makes NCCL run for one size. */
struct model_force {
	int algo;     /* enum model_algo NCCL runs, or -1: NCCL's own pick (then proto -1) */
	int proto;    /* enum model_proto, or -1 */
	int ctas;     /* nChannels as the tuner answered: 0 NCCL's own count; > 0 that many
	                 CTAs, clamped to the communicator's channels */
};

/* NCCL's cost table for every size of `w` under `env` (tables[i] for w->bytes[i]): the
 * time NCCL's model predicts for each usable pair, MODEL_COST_IGNORE for the pairs NCCL
 * rules out (NCCL_ALGO/NCCL_PROTO, LL128 where its safety checks forbid it, NVLS without
 * NVSwitch multicast, CollNet, NVLSTree and PAT for a one-node all-reduce). Pure
 * arithmetic; can't fail (a configuration that fails init still has tables: ask
 * model_eval first). */
void model_cost_tables(const struct model *m, const struct model_env *env,
                       const struct proto_workload *w, struct model_costs *tables);

/* What NCCL does with a tuner's answer: `after` is the table as the tuner left it, `before`
 * as NCCL filled it, nchannels the tuner's *nChannels. The first strict minimum among the
 * entries >= 0 (and below NCCL's start of 3.6e9 us) of `after` is the pair NCCL runs;
 * when the tuner changed no entry, NCCL's own pick is kept as the model makes it (force
 * algo -1), so a tuner without an opinion changes nothing. Returns 0, or -1 when no entry
 * is usable (NCCL then fails the collective: "no algorithm/protocol available"). */
int model_force_from_table(const struct model_costs *before, const struct model_costs *after,
                           int nchannels, struct model_force *out);

/* A rule as nccltune's plugin applies it (a table rule or a forced sweep choice), for
 * callers that evaluate rules in-process without the plugin (bench/): algo and proto an
 * index or -1 (NCCL's), ctas 0 (NCCL's) or 1..64. Both given: the pair when it is usable;
 * one given: the cheapest usable entry of that row or column (the first on ties); none:
 * only the CTAs. Returns 0 with *out set, or 1 when the pair is IGNORE (or out of range):
 * then nothing is applied, CTAs included, as the plugin does (*out is NCCL's own). */
int model_force_rule(const struct model_costs *table, int algo, int proto, int ctas,
                     struct model_force *out);

/* model_eval with a tuner's answer per size: force[i] for w->bytes[i] (force NULL: none,
 * exactly model_eval). A forced pair NCCL had ruled out (a tuner that revives IGNORE
 * entries) runs as NCCL would run it when the model knows its cost (Ring, Tree), and
 * fails at capture otherwise; model failure rules match what ran. Pure arithmetic. */
void model_eval_forced(const struct model *m, const struct model_env *env,
                       const struct proto_workload *w, const struct model_force *force,
                       struct model_eval_result *out);

/* Per-size rules evaluated in-process as nccltune's plugin would apply them, without the
 * plugin (bench/, the tuner's own models): rules[i] for w->bytes[i], each with
 * model_force_rule's semantics (algo/proto -1 = NCCL's, ctas 0 = NCCL's; all three so:
 * no rule); rules NULL: none. unavailable (nsizes entries, may be NULL) says which
 * rules named a pair NCCL has IGNORE (those sizes run NCCL's own choice, as under the
 * plugin, and a sweep reports them "not available"). The result equals what the model
 * probe reports under the plugin with the same rules in a table. Pure arithmetic. */
void model_eval_rules(const struct model *m, const struct model_env *env,
                      const struct proto_workload *w, const struct model_force *rules,
                      bool *unavailable, struct model_eval_result *out);

/* ---- noise ---- */

/* The noise of one probe process: a per-run offset drawn once (shared by everything the
 * process measures: every size and every sweep choice) and per-sample jitter and
 * outliers. model_report draws through it, so a plain run's statistics are those of
 * model_noise_begin + one model_noise_sample per replay, sizes in order. */
struct model_noise {
	const struct model *m;
	double scale;     /* noise_scale; 0: every sample exact */
	gsl_rng *rng;     /* NULL: exact */
	double run;       /* the per-run offset (a factor) */
};

/* Start a process's noise: when the model has a transient failure probability, draw
 * whether this run fails at init (returns 1 then), else draw the per-run offset and
 * return 0. rng may be NULL (exact, never fails). */
int model_noise_begin(struct model_noise *n, const struct model *m, double noise_scale,
                      gsl_rng *rng);

/* One replay's latency around the exact `us`: us x run offset x jitter (x an outlier
 * factor, rarely). Can't fail. */
double model_noise_sample(struct model_noise *n, double us);

/* The most samples a size (or a sweep choice) gets: min(iters, 100000), at least 1. */
size_t model_noise_samples(const struct proto_workload *w);

/* Turn an evaluation into a probe report: `samples` = min(w->iters, 100000) replay
 * timings per size drawn around the exact latency with the model's noise scaled by
 * `noise_scale` (0: every sample exact; rng unused and may be NULL), summarised with
 * proto_stats_compute. A failed evaluation becomes a failure report. Returns 0, or -1
 * with a message in err when out of memory (out is then a failure report too). */
int model_report(const struct model *m, const struct model_eval_result *res,
                 const struct proto_workload *w, double noise_scale, gsl_rng *rng,
                 struct proto_report *out, char *err, size_t errlen);

/* A seed for gsl_rng that depends on `seed`, the model, the configuration and the
 * workload, so that runs of different configurations never share a noise stream while a
 * repeated (seed, configuration) run is reproduced exactly. Can't fail. */
unsigned long model_noise_seed(const struct model *m, const struct model_env *env,
                               const struct proto_workload *w, unsigned long seed);

/* Mix a string (e.g. the tuner plugin and table a run names) into a noise seed, so that
 * runs that differ only in it get their own noise stream. Can't fail. */
unsigned long model_noise_seed_mix(unsigned long seed, const char *s);

/* The decision (protocol "nccl") of choice c: algo, proto, ctas = its CTAs; a symmetric
 * choice has algo and proto null and its kernel's name. Can't fail. */
struct proto_decision model_choice_decision(const struct model_choice *c);

/* ---- the server's step (server.c; MODEL, docs/probe-protocol.md) ----
 *
 * --compute-us US[,CTAS]: a kernel of US before every all-reduce. Alone it lasts US
 * (whatever its CTAs, as nccltune-probe's spin kernel). Next to NCCL the kernel's CTAs
 * compete with the all-reduce's: when NCCL's CTAs n plus the kernel's c exceed the
 * GPU's SMs S, the excess waits, and the kernel lasts US x (1 + (n + c - S) / c). One op
 * of the step is that plus the all-reduce.
 * --window symmetric: on a machine with NVLink (an NVSwitch) and more than one rank, a
 * symmetric kernel runs all-reduces of at most MODEL_SYMMETRIC_MAX_BYTES, 1.4 x faster
 * than what NCCL would run (the 1.35-1.48x reported at 2-16 KB on 8 GPUs); elsewhere the
 * windows change nothing. It needs cuMem: with NCCL_CUMEM_ENABLE=0 the run fails at
 * stage env, as nccltune-probe's does. */
#define MODEL_SYMMETRIC_MAX_BYTES 65536
#define MODEL_SYMMETRIC_GAIN 1.4

/* The modelled GPU's SMs, from its compute capability (70: 80, 80: 108, 90: 132,
 * 100: 148, 120: 188; anything else 100). Can't fail. */
int model_sms(const struct model *m);

/* The CTAs of w's compute kernel on m: w->compute_ctas, or one per SM. Can't fail. */
int model_compute_ctas(const struct model *m, const struct proto_workload *w);

/* Apply --window symmetric and --compute-us to an evaluation of w (res->us[i] become one
 * op of the step; symmetric choices marked). cumem_off: NCCL_CUMEM_ENABLE is 0 (a
 * window then fails the run at stage env). A failed evaluation is left alone. Pure
 * arithmetic; can't fail. */
void model_server_eval(const struct model *m, const struct proto_workload *w, bool cumem_off,
                       struct model_eval_result *res);

/* Complete a successful report of w with the compute extension (the kernel alone, every
 * result's step_us and allreduce_us) and "window". Nothing without them, or on a failure
 * report. Can't fail. */
void model_server_report(const struct model *m, const struct proto_workload *w,
                         struct proto_report *out);

#endif
