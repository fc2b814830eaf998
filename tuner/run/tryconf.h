/* tryconf.h - configurations of the user's own (`nccltune run --try`, `--try-file`):
 * parsed, validated with NCCL's value syntax, and placed in the space searched.
 *
 * A try is a set of NCCL_* assignments ("NCCL_PROTO=LL NCCL_ALGO=Ring ..."). It is
 * measured right after the baseline and re-measured in the final phase next to the
 * tuned finalists, so the user gets its speed against NCCL's defaults and against the
 * tuned best from one session. When every variable it sets is searched (with a value
 * that is one of the levels) or fixed (with the fixed value) and the point satisfies
 * the constraints, the try *maps onto the space*: it is that point, and the strategy
 * learns from it. Otherwise it is *off-space* and runs with exactly its variables. */
#ifndef NCCLTUNE_TRYCONF_H
#define NCCLTUNE_TRYCONF_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "run/env.h"
#include "space/space.h"

#define TRYCONF_MAX 16         /* --try and --try-file configurations per session */
#define TRYCONF_VARS 32        /* variables per configuration */

struct tryconf {
	char origin[256];             /* "--try 'NCCL_PROTO=LL ...'" or "FILE:LINE", for messages */
	size_t n;
	char *name[TRYCONF_VARS];     /* as given, in order; unique */
	char *value[TRYCONF_VARS];
	/* Set by tryconf_resolve: */
	bool pinned[TRYCONF_VARS];    /* the user's environment wins over this variable */
	bool in_space;                /* maps onto the space: p is the point */
	char why[160];                /* why not, e.g. "NCCL_P2P_LEVEL is not searched" */
	struct point p;
};

/* Parse one configuration: whitespace-separated NAME=VALUE items, each name NCCL_...,
 * each checked with ncclvars_check (common/ncclvars.h), no name twice. `origin` ("--try",
 * "FILE:3") starts every message, which names the bad item and why. Returns 0 with *t
 * filled (free with tryconf_clear), or -1 with a message in err. */
int tryconf_parse(const char *text, const char *origin, struct tryconf *t, char *err,
                  size_t errlen);

/* Parse a --try-file's text: one configuration per line, '#' starts a comment, blank
 * lines are skipped. Appends to *v (grown with realloc; *n counts them) up to `max` in
 * all. Returns 0, or -1 with a message "PATH:LINE: ..." (entries added so far stay in
 * *v for the caller to clear). */
int tryconf_parse_file(const char *text, size_t len, const char *path, struct tryconf **v,
                       size_t *n, size_t max, char *err, size_t errlen);

/* Free a configuration's strings; accepts a zeroed struct. */
void tryconf_clear(struct tryconf *t);

/* Place t in `sp` (the space searched, pinned variables already dropped) given the
 * user's pins: marks pinned variables, and sets in_space/p. Refuses (-1 with a message
 * starting with `origin`) NCCL_NVLS_ENABLE unless the space names it, a configuration
 * whose every variable is pinned, and one that is the baseline itself. Can be called
 * again (resume); can't fail otherwise. */
int tryconf_resolve(struct tryconf *t, const space *sp, const struct env_pins *pins,
                    const char *origin, char *err, size_t errlen);

/* Do two resolved configurations name the same run? */
bool tryconf_same(const struct tryconf *a, const struct tryconf *b, size_t dims);

/* The configuration as given, {"NCCL_PROTO": "LL", ...}, for the journal header. NULL
 * when out of memory. */
cJSON *tryconf_to_json(const struct tryconf *t);

/* Read back tryconf_to_json's object (validated like tryconf_parse). Returns 0 or -1
 * with a message starting with `origin`. */
int tryconf_from_json(const cJSON *o, const char *origin, struct tryconf *t, char *err,
                      size_t errlen);

/* What the try sets once resolved: its point's variables when it maps onto the space,
 * else its own variables minus the pinned ones. NULL when out of memory. */
cJSON *tryconf_env_json(const struct tryconf *t, const space *sp);

/* The same as "NCCL_A=1 NCCL_B=2" in buf; returns buf, can't fail (truncates). */
char *tryconf_describe(const struct tryconf *t, const space *sp, char *buf, size_t len);

/* The environment of one run of t: env_build's rules (the user's environment, pins,
 * fixed variables), with t's unpinned variables set on top; a variable t sets
 * replaces the space's fixed value. Returns a NULL-terminated array (env_free) or NULL
 * with a message when out of memory. */
char **tryconf_env_build(const struct tryconf *t, char *const *user_env, const space *sp,
                         const struct env_pins *pins, char *err, size_t errlen);

#endif
