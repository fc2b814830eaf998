/* nccltune_tuner.h - the control interface of libnccl-tuner-nccltune.so, for a process
 * that measures NCCL choices in place (the probe's in-process sweep).
 *
 * Use: dlopen() the very file NCCL loads (NCCL_TUNER_PLUGIN set to its absolute path);
 * the loader then hands NCCL and the caller the same object, so both see the globals
 * behind these functions. dlsym() "nccltune_tuner_control_version" first: a file that
 * lacks it, or answers another version, is not this plugin. Then force an answer, turn
 * recording on, run (or capture) the collectives, and drain what NCCL was told. Keep
 * the handle open while the state matters: NCCL dlcloses the plugin when its last
 * communicator is destroyed and loads it afresh for the next one (src/plugin/tuner.cc,
 * ncclTunerPluginUnload), so without a second handle the object, and this state, go.
 *
 * This state is process-wide, the one exception to the plugin's rule that everything
 * lives in a communicator's context. Forcing and recording are off until asked for: a
 * server that only loads the plugin pays one relaxed atomic load per collective for each.
 * All functions are thread-safe. No dependencies beyond the C library. */
#ifndef NCCLTUNE_TUNER_H
#define NCCLTUNE_TUNER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NCCLTUNE_TUNER_CONTROL_VERSION 1
#define NCCLTUNE_TUNER_RECORD_MAX 1024   /* decisions kept while recording */

/* NCCL's codes (ncclFunc_t, NCCL_ALGO_*, NCCL_PROTO_*), the same in NCCL 2.24 - 2.30. */
#define NCCLTUNE_TUNER_ANY (-1)           /* coll: every one of the five; algo/proto: NCCL's */
#define NCCLTUNE_TUNER_COLL_BROADCAST 0
#define NCCLTUNE_TUNER_COLL_REDUCE 1
#define NCCLTUNE_TUNER_COLL_ALLGATHER 2
#define NCCLTUNE_TUNER_COLL_REDUCESCATTER 3
#define NCCLTUNE_TUNER_COLL_ALLREDUCE 4
#define NCCLTUNE_TUNER_ALGO_TREE 0
#define NCCLTUNE_TUNER_ALGO_RING 1
#define NCCLTUNE_TUNER_ALGO_COLLNET_DIRECT 2
#define NCCLTUNE_TUNER_ALGO_COLLNET_CHAIN 3
#define NCCLTUNE_TUNER_ALGO_NVLS 4
#define NCCLTUNE_TUNER_ALGO_NVLS_TREE 5
#define NCCLTUNE_TUNER_ALGO_PAT 6
#define NCCLTUNE_TUNER_PROTO_LL 0
#define NCCLTUNE_TUNER_PROTO_LL128 1
#define NCCLTUNE_TUNER_PROTO_SIMPLE 2

/* A forced answer; it replaces the table for the collectives it names. The same rules
 * as a table rule apply: a pair NCCL has ruled out (IGNORE) is never forced, algo ANY
 * with a protocol means the cheapest available algorithm with that protocol (and
 * likewise proto ANY), both ANY change only nchannels and chunk. */
struct nccltune_tuner_force {
	int coll;         /* NCCLTUNE_TUNER_COLL_BROADCAST..ALLREDUCE, or ANY: all five */
	int algo;         /* 0..6, or ANY */
	int proto;        /* 0..2, or ANY */
	int nchannels;    /* 0: NCCL's; 1..64: the CTAs NCCL is told (it clamps to its pool) */
	uint64_t chunk;   /* 0: NCCL's; 1..2^31-1 bytes, through getChunkSize (NCCL 2.30+) */
};

/* What happened to one getCollInfo call. */
enum nccltune_tuner_status {
	NCCLTUNE_TUNER_APPLIED = 1,    /* a rule or the forced answer was given to NCCL */
	NCCLTUNE_TUNER_NO_RULE = 2,    /* a table, but no rule for this collective */
	NCCLTUNE_TUNER_IGNORED = 3,    /* the rule's pair is IGNORE or outside NCCL's table */
	NCCLTUNE_TUNER_NO_TABLE = 4,   /* no usable table (unset, missing, rejected) */
};

/* One getCollInfo call as recorded. */
struct nccltune_tuner_decision {
	uint64_t comm_id;     /* the commId NCCL gave init (v5/v6); 0 under the v4 ABI */
	uint64_t bytes;       /* nBytes NCCL asked about */
	uint64_t nranks;      /* of the communicator (0 when its context could not be made) */
	uint64_t nnodes;
	int32_t coll;         /* ncclFunc_t, as NCCL passed it (unknown ones too) */
	int32_t nccl_algo;    /* NCCL's own pick from the cost table as it arrived, or -1 */
	int32_t nccl_proto;
	int32_t algo;         /* the pick NCCL makes from the table as the plugin left it */
	int32_t proto;
	int32_t nchannels;    /* *nChannels as answered: 0 = NCCL's choice */
	int32_t rule;         /* 1-based rule of the table; 0: none; -1: the forced answer */
	int32_t status;       /* enum nccltune_tuner_status */
};

/* The control interface's version: NCCLTUNE_TUNER_CONTROL_VERSION. Can't fail. */
int nccltune_tuner_control_version(void);

/* Force `f` for every later getCollInfo (and getChunkSize) of any communicator in the
 * process, or clear the forced answer with NULL. The struct is copied. Returns 0, or -1
 * (the previous state unchanged) when a field is out of range. */
int nccltune_tuner_force(const struct nccltune_tuner_force *f);

/* Start (on != 0) or stop recording decisions. Starting empties the ring and zeroes the
 * dropped count; stopping keeps what is recorded for draining. Can't fail. */
void nccltune_tuner_record(int on);

/* Move up to `max` recorded decisions, oldest first, into out; returns how many. With
 * out NULL, returns how many are waiting and moves none. Can't fail. */
size_t nccltune_tuner_decisions(struct nccltune_tuner_decision *out, size_t max);

/* Decisions lost because the ring was full (the oldest go first) since recording last
 * started. Can't fail. */
uint64_t nccltune_tuner_dropped(void);

#ifdef __cplusplus
}
#endif

#endif
