/* space.h - the search space (docs/formats.md, "nccltune-space/1"): which NCCL variables
 * are searched, their levels, what is fixed, and the constraints between them.
 *
 * A candidate is a `struct point`: one level index per searched parameter. The space
 * turns points into numbers for the surrogate (space_coord) and into environment
 * variables for the probe (space_level_text); nothing else in the tuner knows what a
 * parameter means. */
#ifndef NCCLTUNE_SPACE_H
#define NCCLTUNE_SPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPACE_MAX_DIMS 32
#define SPACE_MAX_LEVELS 4096

struct point { uint32_t lv[SPACE_MAX_DIMS]; };  /* unused dims are 0 */

typedef struct space space;

/* Parse the JSON text of a space file. `origin` (a file name) starts every message.
 * Validates everything before returning: unknown keys, empty or inverted ranges, values
 * NCCL cannot accept, constraints naming unknown parameters, NCCL_NVLS_ENABLE only when
 * named explicitly. Returns 0 and a space the caller destroys, or -1 with a message of
 * the form "FILE: params.NCCL_X: reason" in err. */
int space_parse(const char *text, size_t len, const char *origin, space **out,
                char *err, size_t errlen);

/* The global default space of docs/formats.md (NCCL_PROTO, NCCL_ALGO, channels, buffer
 * size, threads; no fixed variables): a session's default when its probe cannot sweep.
 * Returns NULL only when out of memory. */
space *space_default(void);
/* The per-size default space (docs/formats.md): algorithm, protocol and CTAs as per_size
 * rules (Ring/Tree/NCCL's, LL/LL128/Simple/NCCL's, 1..16 CTAs/NCCL's), channels, buffer
 * size and threads as variables: a session's default when its probe sweeps. Returns
 * NULL only when out of memory. */
space *space_default_per_size(void);

/* Free a space; accepts NULL. */
void space_destroy(space *sp);

/* The space as JSON text (malloc'd; caller frees), parseable by space_parse, for the
 * journal header and results.json. NULL when out of memory. */
char *space_to_json(const space *sp);

size_t space_dims(const space *sp);
const char *space_name(const space *sp, size_t d);          /* "NCCL_PROTO" */
size_t space_levels(const space *sp, size_t d);             /* number of levels, >= 1 */
bool space_is_categorical(const space *sp, size_t d);       /* strings: no order */
/* The environment value of level `l` of dimension d, or NULL for "leave unset". */
const char *space_level_text(const space *sp, size_t d, size_t l);
/* The first level of dimension d that leaves it unset (NCCL's choice), or -1 when it has
 * none. */
long space_null_level(const space *sp, size_t d);

/* Fixed variables: set for every candidate, never searched. */
size_t space_fixed_count(const space *sp);
const char *space_fixed_name(const space *sp, size_t i);
const char *space_fixed_value(const space *sp, size_t i);
/* Whether `name` is searched or fixed by this space. */
bool space_mentions(const space *sp, const char *name);

/* Constraints as normalised text ("NCCL_MIN_NCHANNELS <= NCCL_MAX_NCHANNELS"). */
size_t space_constraint_count(const space *sp);
const char *space_constraint_text(const space *sp, size_t i);

/* Coordinate of level l on dimension d for the surrogate: for ordinal dimensions a
 * value in [0, 1] (log-scaled where the set levels are positive and span a factor of
 * 4 or more: buffer sizes, channel and thread counts), with an unset
 * level (null) mapped to -1 so a kernel can tell it apart; for categorical ones the
 * level index. Can't fail for valid d and l. */
double space_coord(const space *sp, size_t d, size_t l);

/* Does `p` satisfy every constraint (and is every level in range)? */
bool space_allows(const space *sp, const struct point *p);

/* Number of points before constraints (product of levels), saturating at UINT64_MAX. */
uint64_t space_cardinality(const space *sp);

/* The index-th point in mixed-radix order (dimension 0 varies slowest), for grid search
 * and exhaustive scoring. index must be < space_cardinality. */
void space_point_at(const space *sp, uint64_t index, struct point *p);

/* The point whose ordinal coordinates are nearest to `x` (x[d] in [0, 1] for ordinal
 * dimensions, ignored for categorical ones, whose levels are taken from `base`).
 * Null levels are never chosen by rounding. Can't fail. */
void space_point_round(const space *sp, const double *x, const struct point *base,
                       struct point *out);

/* ---- per-size dimensions (docs/formats.md, "per_size") ----
 * A space may carry a `per_size` block: the algorithm, protocol and CTA count that
 * nccltune's tuner plugin applies to each tuned size. space_expand_per_size turns it into
 * dimensions "rule.<bytes>.algo", "rule.<bytes>.proto", "rule.<bytes>.ctas" per size
 * (categorical, categorical, ordinal; null = NCCL's choice); those never reach the
 * environment (env_build skips them): a candidate's table of plugin rules carries them. */
enum space_rule_kind { SPACE_RULE_NONE = 0, SPACE_RULE_ALGO, SPACE_RULE_PROTO, SPACE_RULE_CTAS };

/* Does `name` start with "rule." (a per-size dimension's name)? */
bool space_rule_named(const char *name);
/* Parse "rule.<bytes>.<kind>". Returns 0 with *bytes and *kind, or -1 with the reason. */
int space_rule_name_parse(const char *name, uint64_t *bytes, enum space_rule_kind *kind,
                          char *why, size_t whylen);
/* Check one value of a per-size dimension: an algorithm or protocol word of NCCL's
 * (*canon: its canonical spelling, static), or a CTA count 1..64 (*canon = text).
 * Returns 0, or -1 with the reason. */
int space_rule_value_check(enum space_rule_kind kind, const char *text, const char **canon,
                           char *why, size_t whylen);
/* "algo", "proto", "ctas"; NULL for SPACE_RULE_NONE. */
const char *space_rule_kind_word(enum space_rule_kind k);
enum space_rule_kind space_rule_kind_find(const char *word);

/* The per-size kind of dimension d (SPACE_RULE_NONE for an environment variable), with
 * its size in *bytes when not NONE (bytes may be NULL). Can't fail for a valid d. */
enum space_rule_kind space_rule_of(const space *sp, size_t d, uint64_t *bytes);
/* Does the space have per-size dimensions, or a per_size block still to expand? */
bool space_has_rules(const space *sp);
/* Does the space carry an unexpanded per_size block? */
bool space_has_per_size(const space *sp);

/* A copy of `sp` with its per_size block expanded for the tuned sizes `bytes[0..n)`
 * (each size's algo, proto and ctas dimensions, in that order, after the space's own
 * params). Returns 0 with a new space in *out (the caller destroys it; sp has no block:
 * a plain copy), or -1 with a message (too many dimensions for SPACE_MAX_DIMS). */
int space_expand_per_size(const space *sp, const uint64_t *bytes, size_t n, space **out,
                          char *err, size_t errlen);

/* ---- server options (docs/formats.md, "server") ----
 * `"server": {"symmetric": [false, true]}` is the dimension SPACE_SYMMETRIC, categorical,
 * its levels null (off: the server's own buffers) and "on" (buffers from ncclMemAlloc
 * registered as symmetric windows: the probe's --window symmetric, with cuMem on). It is
 * a property of the server process, so two-level sessions search it in the outer space;
 * it never reaches the environment (env_build skips it) nor an export as a variable: the
 * session runs the probe with --window symmetric and NCCL_CUMEM_ENABLE=1 for it, and
 * results.json says what to turn on in the server (best.server). The journal header and
 * results.json record it as that dimension in params: {"values": [null, "on"]}. */
#define SPACE_SYMMETRIC "server.symmetric"
#define SPACE_SYMMETRIC_ON "on"

/* Is `name` a server option's dimension (SPACE_SYMMETRIC)? */
bool space_server_named(const char *name);
/* Is dimension d a server option? Can't fail for a valid d. */
bool space_is_server(const space *sp, size_t d);
/* Does p turn symmetric memory on (its SPACE_SYMMETRIC level is "on" and that dimension
 * is not among the bits of `unset`)? false for a NULL p or a space without it. */
bool space_point_symmetric(const space *sp, const struct point *p, uint32_t unset);

/* Do two points name the same configuration? */
bool point_equal(const struct point *a, const struct point *b, size_t dims);

/* Render p as "NCCL_PROTO=LL NCCL_ALGO=Ring ..." (unset levels omitted) into buf.
 * Returns buf. */
char *space_point_describe(const space *sp, const struct point *p, char *buf, size_t len);

#endif
