/* envcheck.h - the NCCL variables the probe can judge before NCCL starts: every variable
 * a tuner sets (role "tune" in common/ncclvars.h): algorithm and protocol lists,
 * integer-valued knobs, path levels, launch modes. NCCL rejects a bad NCCL_ALGO or
 * NCCL_PROTO only when it builds its tuning tables, which it skips for a single rank
 * (seen on one H200 with NCCL 2.28.3: NCCL_PROTO=Bogus measured "fine"), and it
 * silently replaces a malformed number with its default. Checking here makes every
 * such value fail the same way, at stage "env", on any machine. --no-env-check turns
 * this off for an NCCL newer than the names below. */
#ifndef NCCLTUNE_PROBE_ENVCHECK_H
#define NCCLTUNE_PROBE_ENVCHECK_H

#include <stddef.h>

/* Look up a variable: getenv in the probe, a table in the tests. */
typedef const char *(*envcheck_get_fn)(const char *name, void *arg);

/* Check every variable the probe knows. Returns 0, or -1 with a message naming the
 * variable, the value and what is accepted ("NCCL_PROTO=Bogus: unknown protocol
 * 'Bogus' (LL, LL128, Simple) (--no-env-check skips this check)"). */
int envcheck_run(envcheck_get_fn get, void *arg, char *err, size_t errlen);

/* getenv as an envcheck_get_fn. */
const char *envcheck_getenv(const char *name, void *arg);

#endif
