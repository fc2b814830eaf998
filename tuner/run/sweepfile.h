/* sweepfile.h - building one sweep run (issue 17): the sweep file of an outer point's
 * inner choices (nccltune-sweep/1, docs/probe-protocol.md "Sweep"), written
 * content-addressed into the session folder, and what a probe says it can do
 * (--capabilities), asked once per session. */
#ifndef NCCLTUNE_SWEEPFILE_H
#define NCCLTUNE_SWEEPFILE_H

#include <stddef.h>
#include <stdint.h>

#include <signal.h>
#include <stdbool.h>

#include "run/reaper.h"

/* One choice as the file names it: NULL algo/proto and ctas 0 are NCCL's. */
struct sweepfile_choice {
	uint64_t bytes;
	const char *algo, *proto;
	int ctas;
};

/* The file's text for n (1..1024) choices, `rounds` (1..1000) and `seed` (0..2^53-1).
 * Returns 0 with *text malloc'd (caller frees), or -1 with a message. */
int sweepfile_text(const struct sweepfile_choice *c, size_t n, int rounds, uint64_t seed,
                   char **text, char *err, size_t errlen);

/* The file is written with ruletable_write_in(dir, "sweeps", ".json", ...). */

/* Run `argv --capabilities` (argv NULL-terminated, in environment envp, at most
 * timeout_s) and return its PROTO_CAP_* bits: 0 for a probe that fails, times out or
 * prints anything but a capabilities object (a plain probe: run as before the
 * extensions). *cancelled is set when *cancel stopped it. Returns 0, or -1 for a
 * failure of the tuner itself (message in err). */
int sweepfile_capabilities(char *const *argv, char *const *envp, double timeout_s,
                           const volatile sig_atomic_t *cancel, struct reaper *reaper,
                           unsigned *caps, bool *cancelled, char *err, size_t errlen);

#endif
