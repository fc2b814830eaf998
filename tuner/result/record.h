/* record.h - the one reader of journal.jsonl (docs/formats.md, "Journal"): the session
 * header, the run records (configuration, outcome, env, unset, report) and a sweep
 * run's "sweep" and "inner" results, each read through one common/jsonread table into
 * the plain structs below. What a valid record is lives here and only here; resume
 * (tuner/session) and show / report / check (tuner/result/runs.c, for tuner/workflows)
 * both read a journal through record_journal_read and keep only their own policy in
 * their visitor (resume rebuilds points in its space; show describes).
 *
 * Every message has one format, the line reader's: "FILE:LINE: a.b[2].c: why". Adding
 * a key to a record is one row of its table in record.c. */
#ifndef NCCLTUNE_RESULT_RECORD_H
#define NCCLTUNE_RESULT_RECORD_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jsonread.h"
#include "proto.h"
#include "run/outcome.h"

#define RECORD_SCHEMA "nccltune-journal/1"
#define RECORD_SCHEMA_2 "nccltune-journal/2"   /* a two-level session: sweep runs */
#define RECORD_CREATED_MAX 32                  /* bytes of "created", NUL included */
#define RECORD_STRATEGY_MAX 32                 /* bytes of "strategy", NUL included */
#define RECORD_PROBE_MAX 256                   /* words of the probe command */

/* A run's phase: one vocabulary for the journal, its reader, the session and the final
 * phase (decide/runlog.h). PHASE_TRY: a --try configuration, measured right after the
 * baseline. PHASE_SWEEP: one probe process of the two-level search that swept an outer
 * point's inner choices (journal /2). PHASE_ABLATE: after the final rounds, the winner
 * and the winner less one variable (decide/ablate.c). */
enum session_phase { PHASE_BASELINE, PHASE_SEARCH, PHASE_RETRY, PHASE_WARM, PHASE_FINAL,
                     PHASE_TRY, PHASE_SWEEP, PHASE_ABLATE };

/* "baseline", "search", ...; "?" for a value out of range. Can't fail. */
const char *record_phase_name(int phase);
/* The phase named s, or -1. */
int record_phase_parse(const char *s);

/* The header (the first record). Items borrow from the record, alive during the visit
 * only: a visitor that keeps one copies it. */
struct record_header {
	const cJSON *doc;                  /* the whole record */
	bool two_level;                    /* schema nccltune-journal/2 (they go together) */
	char created[RECORD_CREATED_MAX], strategy[RECORD_STRATEGY_MAX];
	double seed, time_limit_s, timeout_s;
	int budget;
	int iters, warmup;                 /* the probe's timing options; -1: not recorded */
	bool auto_model;
	unsigned caps;                     /* PROTO_CAP_* of the words this version knows */
	const cJSON *probe;                /* 1..RECORD_PROBE_MAX strings, no control characters */
	const cJSON *space;                /* an object; NULL when null (not recorded) */
	const cJSON *workload, *pinned;    /* objects, read by their own readers (run/) */
	const cJSON *fingerprint;          /* one results.json's readers accept; NULL: none */
	const cJSON *warm_start;           /* NULL: none */
	const cJSON *tries;                /* array of at most TRYCONF_MAX; NULL: none */
	size_t ntries;
	const cJSON *server;               /* the --like server profile; NULL: none */
};

/* One inner result of a sweep run ("inner"). */
struct record_inner {
	size_t choice;                     /* TWOLEVEL_OWN: the size's own case (null) */
	uint64_t bytes;
	const cJSON *point;                /* the full point's levels (an array) */
	enum outcome_class cls;
	double us, objective_us;           /* NAN unless cls is ok */
	char error[256];
};

/* One run record. */
struct record_run {
	const cJSON *doc;                  /* the whole record */
	long run;                          /* its number, from 1 */
	enum session_phase phase;
	size_t try_no;                     /* the header's try it ran (from 1); 0: none */
	bool has_point;                    /* "point" is an array (not null, not absent) */
	const cJSON *point;                /* has_point: its levels (at most SPACE_MAX_DIMS;
	                                    * the space maps them); else NULL */
	const cJSON *env;                  /* what it set: names NCCL_*, printable values */
	const cJSON *unset;                /* an ablate run of a point: names of the dimensions
	                                    * it left unset (strings, at least one); or NULL */
	enum outcome_class cls;
	double objective_us;               /* a number >= 0 when ok; NAN otherwise */
	double wall_s, t_s;                /* 0 when absent */
	int exit_status, signal;
	const char *error, *stderr_tail;   /* "" when absent */
	const cJSON *report;               /* the probe's report object (its reader is
	                                    * proto_report_parse: resume's), or NULL */
	size_t nchoices;                   /* PHASE_SWEEP: the inner choices swept */
	bool in_flight;                    /* PHASE_SWEEP: failed with a choice in flight */
	size_t ninner;                     /* PHASE_SWEEP: its inner results, as learned */
	struct record_inner *inner;
};

/* A budget record ("budget"): `nccltune run --resume DIR --budget N` raised the session's
 * budget to `budget` when `runs` run records were in the journal. The reader holds it to
 * the journal: larger than the budget in effect (the header's or the last budget
 * record's) and than the runs recorded, and `runs` the run records before it. */
struct record_budget {
	int budget;
	long runs;
	double t_s;                        /* 0 when absent */
};

/* What a user of the reader does with each valid record, in the journal's order. Each
 * is called with the reader `r` (origin "FILE:LINE") for its own policy's messages
 * (jr_fail), and returns 0 or -1 after writing one. */
struct record_visitor {
	int (*header)(void *ctx, struct jr *r, const struct record_header *h);
	int (*run)(void *ctx, struct jr *r, const struct record_run *run);
	int (*budget)(void *ctx, struct jr *r, const struct record_budget *b);   /* or NULL */
};

/* Read journal `path` (journal_replay: a regular file, a torn last line skipped and
 * counted in *torn (may be NULL) with a warning in warn (may be NULL)): the first record
 * must be the header and the only one, run records are read strictly, a record of a
 * type added later is skipped. Returns 0, or -1 with "FILE:LINE: path: why" (or "FILE:
 * empty journal (no session header)") in err, a visitor's message included. */
int record_journal_read(const char *path, const struct record_visitor *v, void *ctx,
                        int *torn, char *warn, size_t warnlen, char *err, size_t errlen);

/* The journal's first line (`line`, len bytes with its newline, read by the caller from a
 * descriptor it trusts; `path` names it in messages) read as record_journal_read reads
 * the header: it must be the session header, read strictly, then handed to v->header.
 * Returns 0, or -1 with "PATH:1: ..." in err (a line without its newline is torn: no
 * header). */
int record_header_parse(const char *path, const char *line, size_t len,
                        const struct record_visitor *v, void *ctx, char *err, size_t errlen);

#endif
