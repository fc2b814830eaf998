/* options.h - the probe's command line: one table of options drives both parsing
 * (getopt_long) and --help. The protocol's workload options are handed to
 * proto_workload_option so every probe parses them alike. No CUDA here. */
#ifndef NCCLTUNE_PROBE_OPTIONS_H
#define NCCLTUNE_PROBE_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#include "probe.h"

enum options_action {
	OPTIONS_RUN,          /* measure */
	OPTIONS_FINGERPRINT,  /* --fingerprint */
	OPTIONS_CAPABILITIES, /* --capabilities */
	OPTIONS_HELP,         /* --help */
	OPTIONS_VERSION,      /* --version */
	OPTIONS_ERROR,        /* bad command line: message in err, report stage "args" */
};

/* Largest buffer one rank may ask for (all slices): beyond it the request is a typo. */
#define OPTIONS_MAX_BUFFER_BYTES ((size_t)64 << 30)

/* Defaults: protocol workload defaults, launch auto, all GPUs, 60 s step timeout. */
void options_defaults(struct probe_config *cfg);

/* What --capabilities reports: the PROTO_CAP_* bits this probe implements. */
#define OPTIONS_CAPABILITIES_MASK (PROTO_CAP_OPS_LIST | PROTO_CAP_DECISIONS | PROTO_CAP_SWEEP)

/* Parse argv into cfg (which holds defaults). Also checks what only makes sense once
 * every option is known (a message size that is not a whole number of elements, an
 * --ops list that does not match --bytes, a buffer over OPTIONS_MAX_BUFFER_BYTES), and
 * reads the --sweep file into cfg->sweep. Returns the action; on OPTIONS_ERROR err
 * names the option (or the sweep file and key) and the value at fault. Uses
 * getopt_long, so it resets optind itself and is not thread-safe. */
enum options_action options_parse(int argc, char **argv, struct probe_config *cfg, char *err,
                                   size_t errlen);

/* The teardown a run in launch mode `mode` (resolved: not AUTO) uses: --teardown as
 * given, or for AUTO, CLEAN under MPI and FAST otherwise. Returns 0 with *out set to
 * CLEAN or FAST, or -1 with err naming the option when FAST was asked for under MPI
 * (every rank must reach MPI_Finalize; see docs/probe-protocol.md). Can't fail
 * otherwise. */
int options_teardown(enum probe_teardown asked, enum probe_launch mode, enum probe_teardown *out,
                     char *err, size_t errlen);

/* Print usage, generated from the option table, to f. Can't fail. */
void options_help(FILE *f);

#endif
