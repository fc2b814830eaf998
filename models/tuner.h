/* tuner.h - a tuner plugin (NCCL_TUNER_PLUGIN) as the modelled NCCL loads and asks it:
 * the file found the way NCCL finds it, the ABI symbol the modelled NCCL version would
 * take, init per communicator with NCCL's logger, getCollInfo per collective, finalize.
 * What NCCL then does with the answer is model.h's (model_force_from_table,
 * model_eval_forced). Read from NCCL 2.28.9's src/plugin/tuner.cc and plugin_open.cc and
 * reference/tuner-plugin.md; no NCCL code is used. The ABI is plugin/nccl_abi.h's.
 *
 * Loading a plugin costs a dlopen: a process loads it once (struct model_tuner_cache)
 * and evaluations pass its answers as struct model_force, never the library. */
#ifndef NCCLTUNE_MODEL_TUNER_H
#define NCCLTUNE_MODEL_TUNER_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

#define MODEL_TUNER_PATH_MAX 1024
#define MODEL_TUNER_CACHE_MAX 8

struct model_tuner;   /* a loaded plugin library and the ABI struct NCCL took from it */

/* Load the plugin `value` names (NCCL_TUNER_PLUGIN; NULL: unset) as NCCL `nccl_version`
 * ("2.28.3") does: "none" (any case): no plugin; unset: "libnccl-tuner.so"; a value that
 * is a prefix of "STATIC_PLUGIN" (any case): the program itself; otherwise the value as
 * dlopen takes it (RTLD_NOW | RTLD_LOCAL), then, for a bare name NAME (no '/', not
 * lib*.so), "libnccl-tuner-NAME.so". The ABI symbol, newest first: NCCL 2.30+
 * ncclTunerPlugin_v6, v5, v4; 2.28 - 2.29 v5, v4; older v4 (v3 and v2, which NCCL also
 * takes, are not modelled). Returns the tuner, or NULL when NCCL would run without one:
 * then why says why ("" when none was asked for: "none", or unset and not found). */
struct model_tuner *model_tuner_open(const char *value, const char *nccl_version, char *why,
                                     size_t whylen);

/* Finalize nothing, dlclose the library. Accepts NULL. */
void model_tuner_close(struct model_tuner *t);

/* The ABI symbol taken ("ncclTunerPlugin_v5") and the file as loaded. Owned by t. */
const char *model_tuner_symbol(const struct model_tuner *t);
const char *model_tuner_file(const struct model_tuner *t);

/* A communicator's init: v5/v6 init(&ctx, comm_id, nranks, nnodes, logger, NULL, NULL)
 * (the model has no NVL-domain info or cost-model constants to hand over), v4
 * init(nranks, nnodes, logger, &ctx). The logger writes NCCL-style lines to stderr
 * ("HOST:PID:TID [0] NCCL WARN ..." always, as nccltune-probe copies NCCL's warnings;
 * "NCCL INFO ..." when NCCL_DEBUG is INFO or TRACE). Returns the plugin's result (0:
 * success; anything else fails the communicator in NCCL) with the context in *ctx. */
int model_tuner_init(struct model_tuner *t, int nranks, int nnodes, uint64_t comm_id,
                     void **ctx);

/* getCollInfo for one all-reduce of `bytes` as NCCL 2.28 calls it: collType AllReduce,
 * numPipeOps 1, the flat 7 x 3 table (edited in place), regBuff (1 while a CUDA graph is
 * captured), *nchannels 0 in. Returns the plugin's result (nonzero fails the collective
 * in NCCL). */
int model_tuner_ask(struct model_tuner *t, void *ctx, size_t bytes, int reg_buff,
                    struct model_costs *table, int *nchannels);

/* finalize (v5/v6) or destroy (v4) of a context. Returns the plugin's result. */
int model_tuner_finalize(struct model_tuner *t, void *ctx);

/* Loaded plugins by NCCL_TUNER_PLUGIN value, failures included (NCCL never retries a
 * failed load in a process). Zero-initialise; model_tuner_cache_clear closes them. */
struct model_tuner_cache {
	size_t n;
	struct model_tuner_cache_entry {
		char value[MODEL_TUNER_PATH_MAX];
		bool unset;
		struct model_tuner *tuner;   /* NULL: the load failed or none was asked for */
		char why[512];
	} entry[MODEL_TUNER_CACHE_MAX];
};

/* The tuner for `value` (NULL: unset), loaded at the first call for it. Returns it, or
 * NULL with why as model_tuner_open gives it (or "too many plugins" when the cache is
 * full). The cache owns the tuner. */
struct model_tuner *model_tuner_cache_get(struct model_tuner_cache *c, const char *value,
                                          const char *nccl_version, char *why, size_t whylen);

/* Close every cached tuner. Accepts NULL. */
void model_tuner_cache_clear(struct model_tuner_cache *c);

#endif
