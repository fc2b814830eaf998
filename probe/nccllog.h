/* nccllog.h - what NCCL ran, read from NCCL's own debug log (docs/probe-protocol.md,
 * "Decisions"). When the user has not set NCCL_DEBUG, the probe sets NCCL_DEBUG=INFO,
 * NCCL_DEBUG_SUBSYS=TUNING and NCCL_DEBUG_FILE=<private folder>/nccl.%p.log before any
 * NCCL call (NCCL replaces %p by the process id, src/debug.cc, and writes the file line
 * buffered), then reads each process's own file as the run goes:
 *   - rank 0's TUNING lines "AllReduce: N Bytes -> Algo A proto P channel{Lo..Hi}={l..h}"
 *     (src/enqueue.cc) and "AllReduce [Symmetric]: N Bytes -> Kernel K nchannels C ..."
 *     (src/scheduler/symmetric_sched.cc), the same text in NCCL 2.27 to 2.30, become the
 *     decision of the ops captured in the capture window they appear in (the eager ops,
 *     the barrier and the votes run outside any window);
 *   - every WARN line is copied to stderr, so NCCL's warnings still reach the user.
 * Each reader unlinks its file as soon as it has it open, so a killed probe leaves at
 * most an empty folder. No CUDA here. */
#ifndef NCCLTUNE_PROBE_NCCLLOG_H
#define NCCLTUNE_PROBE_NCCLLOG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "proto.h"

#define NCCLLOG_LINE_MAX 2048     /* NCCL formats a line into 1024 bytes (src/debug.cc) */
#define NCCLLOG_KINDS 8           /* distinct decisions tallied in one window */

/* What one line of NCCL's log says. */
enum nccllog_kind {
	NCCLLOG_OTHER = 0,   /* anything else (other INFO lines, other collectives, blanks) */
	NCCLLOG_WARN,        /* "... NCCL WARN ..." */
	NCCLLOG_ALLREDUCE,   /* a TUNING line of one all-reduce: bytes and decision */
};

struct nccllog_line {
	enum nccllog_kind kind;
	uint64_t bytes;              /* NCCLLOG_ALLREDUCE */
	struct proto_decision d;     /* NCCLLOG_ALLREDUCE; known true */
};

/* The private log folder of a process (or, per process launch, of the parent). */
struct nccllog {
	bool active;                 /* NCCL_DEBUG* were set by us: decisions can be read */
	bool owner;                  /* this process made `dir` and must remove it */
	char dir[PATH_MAX - 32];
};

/* Classify one line (without its newline). Unknown algorithm or protocol words, a
 * channel range that is empty, and collectives other than AllReduce are OTHER. Can't
 * fail. */
enum nccllog_kind nccllog_parse_line(const char *line, struct nccllog_line *out);

/* Prepare decisions for this process and every process it forks: unless NCCL_DEBUG is
 * set, make a private folder (mkdtemp under $TMPDIR or /tmp) and set NCCL_DEBUG=INFO,
 * NCCL_DEBUG_SUBSYS=TUNING and NCCL_DEBUG_FILE=DIR/nccl.%p.log. Must run before any NCCL
 * call. Returns 0 with log->active telling whether decisions will be read (false when
 * the user set NCCL_DEBUG: NCCL's output is then theirs), or -1 with the reason in err
 * and log inactive (the run goes on without decisions; nothing is left behind). */
int nccllog_setup(struct nccllog *log, char *err, size_t errlen);

/* Remove the folder and whatever files are left in it, when this process made it; then
 * the log is inactive. Safe to call again, from a watchdog thread too. Accepts NULL. */
void nccllog_cleanup(struct nccllog *log);

/* The file NCCL writes in process `pid`: DIR/nccl.<pid>.log. Returns 0, or -1 when the
 * log is inactive or the path does not fit. */
int nccllog_path(const struct nccllog *log, pid_t pid, char *buf, size_t len);

/* Reads one process's file incrementally. */
struct nccllog_reader {
	char path[PATH_MAX];
	int fd;                      /* -1 until the file exists (NCCL creates it lazily) */
	bool dead;                   /* a read error: the reader says nothing more */
	char buf[NCCLLOG_LINE_MAX];  /* the start of a line not yet complete */
	size_t len;
	bool skipping;               /* inside a line longer than buf */
	FILE *warn_out;              /* where WARN lines are copied (stderr), or NULL */
	/* the capture window */
	bool window;
	uint64_t bytes;              /* the size whose ops are being captured */
	size_t nlines;               /* its AllReduce lines seen in the window */
	size_t nkinds;
	struct { struct proto_decision d; size_t n; } kinds[NCCLLOG_KINDS];
	bool overflow;               /* more distinct decisions than kinds[] holds */
};

/* Start reading `path`; WARN lines go to warn_out (may be NULL). Can't fail. */
void nccllog_reader_init(struct nccllog_reader *r, const char *path, FILE *warn_out);

/* Read every complete line NCCL has written since the last call: copy WARN lines, tally
 * all-reduce lines when a window is open. Opens (and unlinks) the file once it exists.
 * Returns the number of lines read. A read error makes the reader inert. Can't fail. */
size_t nccllog_reader_poll(struct nccllog_reader *r);

/* Read what came before, then open a window for the ops of `bytes` about to be
 * captured. Can't fail. */
void nccllog_window_begin(struct nccllog_reader *r, uint64_t bytes);

/* Read what the capture wrote, close the window and judge it: when exactly `ops`
 * all-reduce lines of that size appeared, *out is the most frequent decision (the first
 * seen among equals) with mixed set when they were not all the same; otherwise (no line:
 * one rank, not rank 0's process, NCCL_DEBUG the user's; or a count that does not match)
 * out->known is false. Returns out->known. */
bool nccllog_window_end(struct nccllog_reader *r, int ops, struct proto_decision *out);

/* Close the file. Accepts a reader that never opened one. */
void nccllog_reader_close(struct nccllog_reader *r);

#endif
