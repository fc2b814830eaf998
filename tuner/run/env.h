/* env.h - the environment a probe runs in: the user's own, with the variables the user
 * pinned, the space's fixed variables and one candidate's values.
 *
 * Pinning: a variable the user already set when the session started, that the space
 * searches or fixes, is *pinned*. It is passed through with the user's value, reported
 * once, and never overridden: a pinned fixed variable keeps the user's value, and a
 * pinned searched variable is dropped from the search (env_space_unpin), so no
 * candidate ever sets it and the baseline runs with it too. The pins are recorded in
 * the journal header; a resumed session uses the recorded values. */
#ifndef NCCLTUNE_ENV_H
#define NCCLTUNE_ENV_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include "space/space.h"

struct env_pin {
	char *name;
	char *value;
	bool searched;     /* the space searched it (dropped from the search) */
};

struct env_pins {
	size_t n;
	struct env_pin *v;
};

/* Collect the variables of `user_env` (NAME=VALUE strings, NULL-terminated) that `sp`
 * searches or fixes. Returns 0 with *out filled (free with env_pins_free), or -1 with
 * a message when out of memory. */
int env_pins_collect(char *const *user_env, const space *sp, struct env_pins *out,
                     char *err, size_t errlen);
void env_pins_free(struct env_pins *pins);   /* accepts a zeroed struct */

/* What env_inherited_check did with an inherited variable. */
enum env_inherited {
	ENV_INHERITED_PINNED,    /* pinned: passed to every run, recorded, exported */
	ENV_INHERITED_DECIDES,   /* pinned, and it narrows NCCL's algorithm or protocol
	                          * (NCCL_ALGO, NCCL_PROTO): per-size rules choosing others
	                          * are refused by NCCL */
	ENV_INHERITED_LOGGING,   /* a logging variable (NCCL_DEBUG*, NCCL_DEBUG_FILE): passed
	                          * on, never recorded nor exported */
	ENV_INHERITED_LABEL,     /* a name NCCL never reads (NCCL_VERSION, a container
	                          * label; ncclvars_label): passed on, never recorded nor
	                          * exported */
};
typedef void env_inherited_fn(void *ctx, enum env_inherited what, const char *name,
                              const char *value);

/* Every variable of `user_env` that reaches NCCL in a probe run and is neither mentioned
 * by `sp` nor already in `pins` (a resumed session's recorded pins): an NCCL_* tuning
 * variable or site setting nccltune knows, with a value it accepts, is pinned (added to
 * `pins`, so the journal, results, exports and summary carry it) unless `resumed` (the
 * journal did not record it: refused); a logging variable and a label NCCL does not
 * read (NCCL_VERSION of NVIDIA's container images) are passed on and reported;
 * everything else is refused with a message saying what to unset: a loader variable
 * (NCCL_TUNER_PLUGIN and NCCLTUNE_TUNER_TABLE of an earlier env.sh, NCCL_NET_PLUGIN,
 * ...), an unknown NCCL_ name, a value nccltune refuses, CUDA_LAUNCH_BLOCKING (the one
 * CUDA_* variable NCCL reads). `report` (may be NULL) is called once per variable kept.
 * Returns 0, or -1 with the message in err (pins may hold some of the new pins). */
int env_inherited_check(char *const *user_env, const space *sp, bool resumed,
                        struct env_pins *pins, env_inherited_fn *report, void *ctx,
                        char *err, size_t errlen);

/* Pin `name` to `value` (not searched) unless it is pinned already: a variable a --try
 * sets that the user's environment already sets (the user's value wins). Returns 0, or
 * -1 when out of memory. */
int env_pins_add(struct env_pins *pins, const char *name, const char *value);

/* The value pinned for `name`, or NULL. */
const char *env_pins_get(const struct env_pins *pins, const char *name);

/* {"NAME": "value", ...}; NULL when out of memory. */
cJSON *env_pins_to_json(const struct env_pins *pins);
/* Read pins back from a journal header's "pinned" object (`origin` names it in
 * messages: "ORIGIN.NAME: why"). Every name must be NCCL_[A-Z0-9_]+: a pin reaches
 * every probe run, so a journal pinning LD_PRELOAD is refused. Returns 0, or -1 with a
 * message. */
int env_pins_from_json(const cJSON *obj, const char *origin, struct env_pins *out,
                       char *err, size_t errlen);

/* A copy of `sp` without the searched dimensions that are pinned. Constraints naming a
 * dropped dimension get the pinned value substituted when it is a number, and are
 * dropped otherwise. Returns 0 with a new space in *out (the caller destroys it), or -1
 * with a message (e.g. every searched variable is pinned: nothing left to tune). */
int env_space_unpin(const space *sp, const struct env_pins *pins, space **out,
                    char *err, size_t errlen);

/* The complete environment of one probe run: `user_env` minus every variable the space
 * mentions and every pinned one, plus the pins, the space's fixed variables (pinned
 * ones excepted) and the set levels of `p` (NULL: the baseline, every searched variable
 * unset). Nothing else is added, so NCCL_NVLS_ENABLE is set only when the space or
 * the user names it. Returns a malloc'd NULL-terminated array (free with env_free),
 * or NULL with a message when out of memory. */
char **env_build(char *const *user_env, const space *sp, const struct env_pins *pins,
                 const struct point *p, char *err, size_t errlen);
void env_free(char **env);   /* accepts NULL */

/* Set NAME=VALUE in a built environment (malloc'd, NULL-terminated, as env_build makes),
 * replacing every inherited NAME. Returns 0, or -1 when out of memory (env keeps its
 * variables; an inherited NAME may be gone). */
int env_set(char ***env, const char *name, const char *value);

/* Remove every NAME=... from a built environment (a candidate less one of its
 * variables). Can't fail. */
void env_unset(char **env, const char *name);

/* Append NCCLTUNE_RUN=<run> (the runs recorded before this one: 0-based, the journal's
 * "run" minus one) to a built environment,
 * replacing any inherited value. Probes may ignore it; the model probe mixes it into
 * its --seed so that repeated runs of one configuration differ, reproducibly. Returns
 * 0, or -1 when out of memory (env is then unchanged). */
int env_add_run(char ***env, size_t run);

/* The variables a candidate sets, as {"NCCL_PROTO": "LL", ...} (unset levels left
 * out; NULL p: the baseline, {}). NULL when out of memory. */
cJSON *env_point_to_json(const space *sp, const struct point *p);

/* The point of `sp` whose set variables are exactly those of `env` (an object of
 * strings): absent variables must have a null level. Returns 0, or -1 when `env` names
 * a variable `sp` does not search or a value it has no level for. */
int env_point_from_json(const space *sp, const cJSON *env, struct point *p);

/* A point as a JSON array of level indices, and back (-1 unless every index is in
 * range for sp). */
cJSON *env_point_levels_to_json(const space *sp, const struct point *p);
int env_point_levels_from_json(const space *sp, const cJSON *arr, struct point *p);

#endif
