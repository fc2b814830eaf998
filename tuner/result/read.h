/* read.h - what the readers of a session folder share, inside tuner/result/ only:
 * environments (three strictness levels) and the fingerprint as jsonread handlers, and
 * the bounds every reader applies. results.json (load.c) and journal.jsonl (runs.c) use
 * them; nothing outside result/ includes this header. */
#ifndef NCCLTUNE_RESULT_READ_H
#define NCCLTUNE_RESULT_READ_H

#include <cjson/cJSON.h>

#include "jsonread.h"
#include "result/summary.h"

#define SUMMARY_ENV_MAX 256              /* variables in one environment */
#define SUMMARY_OBJECTIVE_MAX 1e12       /* microseconds per step: 11 days; more is corrupt */

/* How an environment's values are checked: SUMMARY_ENV_STRICT (anything that can be
 * exported) with ncclvars_check; SUMMARY_ENV_LENIENT (values only shown) for length and
 * control characters; SUMMARY_ENV_WHEN (a pruned rule's levels) like lenient, and null
 * is the variable unset (a NULL value). Names are always NCCL_[A-Z0-9_]+. */
/* SUMMARY_ENV_SERVER (results.json "server".env): like lenient, and the name may also be
 * CUDA_DEVICE_MAX_CONNECTIONS. */
enum summary_env_check { SUMMARY_ENV_STRICT, SUMMARY_ENV_LENIENT, SUMMARY_ENV_WHEN,
                         SUMMARY_ENV_SERVER };

/* jsonread handlers reading the object v into the struct summary_env at dst (env->v is
 * malloc'd, names and values borrow from v; free env->v even on failure). Return 0 or
 * -1 after jr_fail. */
int summary_read_env_strict(struct jr *r, const cJSON *v, void *dst);
int summary_read_env_lenient(struct jr *r, const cJSON *v, void *dst);
int summary_read_env_when(struct jr *r, const cJSON *v, void *dst);
/* results.json "server" into the struct summary dst (server_like, server_env). Returns 0
 * or -1 after jr_fail. */
int summary_read_server(struct jr *r, const cJSON *v, void *dst);
/* A measure's "step" ({"allreduce_us", "kernel_us", "kernel": "measured"}) and "server"
 * ({"symmetric": true, "kernel" (optional): "symmetric"|"not symmetric"|"unknown"}),
 * each NULL when absent, into m. Returns 0, or -1 after jr_fail. */
int summary_read_extras(struct jr *r, const cJSON *step, const cJSON *server,
                        struct summary_measure *m);

/* The fingerprint object o (its path already on r) into fp, strings borrowed from o;
 * on failure fp is cleared. Returns 0 or -1 after jr_fail. */
int summary_read_fingerprint(struct jr *r, const cJSON *o, struct summary_fingerprint *fp);

/* results.json "workload" (workload_read.c) into the struct summary dst (workload,
 * present set). Returns 0 or -1 after jr_fail. */
int summary_read_workload(struct jr *r, const cJSON *v, void *dst);

/* best.rules (rules.c): the array v into s->rules / nrules, has_rules set (dst is the
 * struct summary). Returns 0 or -1 after jr_fail. */
int summary_read_rules(struct jr *r, const cJSON *v, void *dst);

/* results.json "per_size", "guards" and "ablation" (final_read.c): each array or object v
 * into the struct summary dst. Return 0 or -1 after jr_fail. summary_final_free frees
 * what they allocated (accepts a summary they never saw). */
int summary_read_per_size(struct jr *r, const cJSON *v, void *dst);
int summary_read_guards(struct jr *r, const cJSON *v, void *dst);
int summary_read_ablation(struct jr *r, const cJSON *v, void *dst);
void summary_final_free(struct summary *s);

/* Run fn on v (a member of the current object) with `key` on the path. Returns fn's
 * result, or -1 when the path is too deep. */
int summary_read_under(struct jr *r, const char *key, jr_handler fn, const cJSON *v,
                       void *dst);

#endif
