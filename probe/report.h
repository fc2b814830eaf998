/* report.h - the probe's one JSON object on stdout. The reporter owns the real stdout:
 * file descriptor 1 is pointed at stderr for the rest of the run, so whatever NCCL or
 * any library prints (NCCL_DEBUG writes to stdout by default) ends up among the
 * diagnostics and can never break the protocol's "exactly one object" rule. */
#ifndef NCCLTUNE_PROBE_REPORT_H
#define NCCLTUNE_PROBE_REPORT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "probe.h"

struct reporter {
	FILE *out;              /* the original stdout */
	pthread_mutex_t lock;   /* the watchdog thread may report too */
	bool done;              /* one object per run, whoever comes first */
	/* What every report of a run says about the rig, whoever writes it (the launch
	 * mode, a watchdog, a refusal): ranks sharing each GPU (0: not a run), the MPS
	 * verdict for processes sharing one (has_mps), the variables the probe set. Set
	 * before the run starts; reporter_emit adds what a report does not say itself. */
	int ranks_per_gpu;
	bool has_mps, mps;
	size_t nprobe_env;
	char probe_env[PROTO_MAX_PROBE_ENV][PROTO_WARNING_MAX];
	char warning[PROTO_WARNING_MAX];   /* a warning every report carries ("": none) */
};

/* Take over stdout as described above. Returns 0, or -1 when the descriptors cannot
 * be duplicated (then rep->out is plain stdout and nothing was redirected). */
int reporter_init(struct reporter *rep);

/* Close the report descriptor without writing: for forked children, which must never
 * hold the report stream open. Can't fail. */
void reporter_forget(struct reporter *rep);

/* Record that the probe set NAME=VALUE in its own environment for NCCL (reported as
 * "probe_env"). Dropped past PROTO_MAX_PROBE_ENV. Can't fail. */
void reporter_note_env(struct reporter *rep, const char *name, const char *value);

/* Write `r` (protocol v1), with the reporter's rig fields where r has none, plus, when phase_s is not NULL and not all zero, the
 * "phases_s" extension (wall seconds per step). Only the first call of a run writes; later ones return 0
 * without writing. Returns 0, or -1 on an I/O or memory error (message on stderr). */
int reporter_emit(struct reporter *rep, const struct proto_report *r, const double *phase_s);

/* Write an already formatted JSON text (the fingerprint) under the same rule. */
int reporter_emit_text(struct reporter *rep, const char *text);

/* The report as one line of JSON with the extension, malloc'd; NULL when out of memory.
 * Exposed for the golden-file tests. */
char *report_format(const struct proto_report *r, const double *phase_s);

#endif
