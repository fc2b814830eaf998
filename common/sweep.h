/* sweep.h - the in-process sweep (--sweep FILE, docs/probe-protocol.md "Sweep"), shared
 * by both probes (nccltune-probe and nccltune-model-probe) so that they read the same
 * files and replay in the same order: the strict reader of the sweep file (schema
 * nccltune-sweep/1), a probe's handle on nccltune's tuner plugin (the control interface of
 * plugin/nccltune_tuner.h, found by dlopen of NCCL_TUNER_PLUGIN), and the replay
 * schedule: R interleaved rounds, each in an order drawn from a seeded generator that
 * every rank computes alike. No CUDA, no NCCL. */
#ifndef NCCLTUNE_SWEEP_H
#define NCCLTUNE_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nccltune_tuner.h"
#include "proto.h"

#define SWEEP_SCHEMA "nccltune-sweep/1"
#define SWEEP_FILE_MAX ((size_t)4 << 20)   /* bytes of a sweep file */
#define SWEEP_MAX_ROUNDS 1000
#define SWEEP_MAX_CTAS 64                 /* what the plugin may tell NCCL */
#define SWEEP_DEFAULT_ROUNDS 5
#define SWEEP_DEFAULT_SEED 1

/* One choice of the file: a size of --bytes under a forced answer. */
struct sweep_choice {
	size_t bytes;
	size_t size;      /* its index in --bytes (the first equal entry) */
	int algo;         /* PROTO_NCCL_* index, or PROTO_NCCL_ANY: NCCL's */
	int proto;        /* likewise */
	int ctas;         /* 0: NCCL's; 1..SWEEP_MAX_CTAS */
};

struct sweep_plan {
	size_t nchoices;  /* 0: no sweep */
	int rounds;
	uint64_t seed;
	char file[256];   /* as given, for messages */
	struct sweep_choice choices[PROTO_MAX_CHOICES];
};

/* Parse a sweep file's text (len bytes; `file` names it in messages) against the
 * workload w (--bytes, --iters). Strict: an object with "schema" (SWEEP_SCHEMA),
 * "choices" (1..PROTO_MAX_CHOICES objects with "bytes" (one of --bytes), optional
 * "algo"/"proto" (NCCL's names, any case, or null) and "ctas" (0..64)), optional
 * "rounds" (1..1000 and at most --iters; default 5) and "seed" (0..2^53-1; default 1); no
 * other keys, no key twice, no trailing text but whitespace. Read through common/jsonread's
 * tables: returns 0 with *out filled, or -1 with its message, "FILE: choices[2].ctas: why",
 * in err (and out->nchoices 0). */
int sweep_parse(const char *text, size_t len, const char *file, const struct proto_workload *w,
                struct sweep_plan *out, char *err, size_t errlen);

/* Read `file` (a regular file up to SWEEP_FILE_MAX) and sweep_parse it. Returns 0, or -1
 * with a message naming the file in err. */
int sweep_load(const char *file, const struct proto_workload *w, struct sweep_plan *out,
               char *err, size_t errlen);

/* "Ring/LL, 4 CTAs", "*" for NCCL's algorithm or protocol, "NCCL's CTAs". Can't fail. */
void sweep_choice_text(const struct sweep_choice *c, char *buf, size_t len);

/* The plugin's control interface, as the probe holds it for the whole run. */
struct sweep_plugin {
	void *handle;
	int (*force)(const struct nccltune_tuner_force *);
	void (*record)(int);
	size_t (*decisions)(struct nccltune_tuner_decision *, size_t);
};

/* dlopen `path` (NCCL_TUNER_PLUGIN's value; NULL when unset) as NCCL does and resolve
 * the control interface. Refuses an unset value, a bare name (no '/': NCCL would search
 * for libnccl-tuner-NAME.so, and the probe must hold the very file NCCL loads), a file
 * that does not load, lacks nccltune_tuner_control_version or answers another version.
 * Returns 0, or -1 with "--sweep needs nccltune's tuner plugin in NCCL_TUNER_PLUGIN: why"
 * in err and *p empty. */
int sweep_plugin_open(const char *path, struct sweep_plugin *p, char *err, size_t errlen);

/* dlclose; accepts NULL and an empty handle. */
void sweep_plugin_close(struct sweep_plugin *p);

/* Force choice c for every later all-reduce (coll allreduce, chunk NCCL's), or clear the
 * forced answer with c NULL. Returns 0, or -1 when the plugin refuses the values. */
int sweep_plugin_force(const struct sweep_plugin *p, const struct sweep_choice *c);

/* What the plugin recorded for forced all-reduces of `bytes`. */
struct sweep_verdict {
	size_t forced;    /* forced decisions of that size (rule -1) */
	size_t ignored;   /* ... whose pair NCCL has ruled out (status IGNORED) */
	size_t other;     /* decisions of anything else (the barrier, other sizes) */
};

/* Drain every recorded decision and add those of forced all-reduces of `bytes` to *v.
 * Can't fail. */
void sweep_plugin_drain(const struct sweep_plugin *p, uint64_t bytes, struct sweep_verdict *v);

/* The order of round `round` over n cases: a permutation of 0..n-1 by Fisher-Yates,
 * swapping i with j = next() mod (i + 1) (rejection-sampled, no bias) for i = n-1 .. 1,
 * where next() is SplitMix64 seeded with seed + (round + 1) * 0x9E3779B97F4A7C15. The
 * same on every rank and every machine for the same arguments. Can't fail. */
void sweep_round_order(uint64_t seed, int round, size_t n, size_t *order);

/* Timed replays of each case in round `round` of `rounds`: iters split evenly, the first
 * iters % rounds rounds one more. Can't fail. */
int sweep_round_replays(int iters, int rounds, int round);

/* One replay: graph `case_idx`; `sample` its timed replay's index (0..iters-1), or -1
 * for an untimed one. */
struct sweep_replay {
	int case_idx;
	int sample;
};

/* The timed replays of a run, generated one at a time: round by round; within a round
 * the kept cases in the round's order (shuffle) or in case order, each for its round's
 * share of replays back to back. Every kept case gets samples 0..iters-1 once each. */
struct sweep_schedule {
	size_t ncases;
	const bool *keep;
	int iters, rounds;
	uint64_t seed;
	bool shuffle;
	size_t *order;    /* ncases, the current round's */
	int round;
	size_t pos;       /* into order */
	int k;            /* replays of order[pos] done this round */
	int base;         /* samples of each case in earlier rounds */
};

/* Set up a schedule (keep[c]: case c has a graph; the array must outlive the schedule).
 * Returns 0, or -1 when out of memory. */
int sweep_schedule_init(struct sweep_schedule *s, size_t ncases, const bool *keep, int iters,
                        int rounds, uint64_t seed, bool shuffle);

/* The next replay into *out; false when the schedule is done. */
bool sweep_schedule_next(struct sweep_schedule *s, struct sweep_replay *out);

/* Free the schedule's order. Accepts one that failed to init. */
void sweep_schedule_free(struct sweep_schedule *s);

#endif
