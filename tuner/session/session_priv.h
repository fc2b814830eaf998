/* session_priv.h - the inside of a tuning session, shared by session.c (the loop),
 * session_record.c (journal records and resume) and session_progress.c (what the user
 * sees while it runs and at the end). Not part of the public API. */
#ifndef NCCLTUNE_SESSION_PRIV_H
#define NCCLTUNE_SESSION_PRIV_H

#include <cjson/cJSON.h>
#include <gsl/gsl_rng.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "run/env.h"
#include "run/journal.h"
#include "nccltune.h"
#include "run/outcome.h"
#include "search/prune.h"
#include "space/space.h"
#include "search/strategy.h"
#include "run/tryconf.h"
#include "run/workload.h"

#define SESSION_JOURNAL_SCHEMA "nccltune-journal/1"
#define SESSION_BASELINE_TIMEOUT_S 300.0   /* before anything is known about the probe */
#define SESSION_MIN_TIMEOUT_S 30.0
#define SESSION_TIMEOUT_FACTOR 5.0         /* x the baseline's wall time */
#define SESSION_FINALISTS 3
#define SESSION_FINAL_RESERVE_MAX 12       /* runs kept for the final re-measurement */
#define SESSION_FINAL_RESERVE_DIV 5        /* ... at most budget / 5 */
#define SESSION_WARM_MAX 5                 /* old configurations re-run by --warm-start */
#define SESSION_MAX_DUPLICATES 50          /* repeated suggestions before giving up */
#define SESSION_TOP_MAX 5
#define SESSION_TRY_ROUNDS 3               /* final runs reserved per --try */

/* PHASE_TRY: a --try configuration, measured right after the baseline. */
enum session_phase { PHASE_BASELINE, PHASE_SEARCH, PHASE_RETRY, PHASE_WARM, PHASE_FINAL,
                     PHASE_TRY };

/* One probe run. */
struct session_run {
	enum session_phase phase;
	bool has_point;          /* false for the baseline and off-space tries */
	struct point p;
	size_t try_no;           /* a run of s->tries[try_no - 1] (any phase); 0: not a try */
	struct outcome o;
	double t_s;              /* session time when it ended (summed over resumes) */
};

/* Why the search ended. */
enum session_stop { STOP_NONE, STOP_BUDGET, STOP_TIME, STOP_EXHAUSTED, STOP_STUCK };

/* What to tune: what the setters set (on resume, the journal's header). */
struct session_config {
	char *probe_cmd;             /* --probe */
	char *model;                 /* --model (or the model standing in for GPUs) */
	char *space_file;
	space *space_full;           /* as given (before pinned variables were dropped) */
	bool workload_set;
	struct workload wl;
	int budget;
	double time_limit_s;         /* 0: none */
	unsigned long seed;
	char strategy_name[32];
	double timeout_opt_s;        /* --timeout; 0: derived from the baseline */
	char *out_dir_opt;
	char *warm_dir;
	struct tryconf *tries;       /* --try / --try-file, in command-line order */
	size_t ntries;
};

/* The session as it runs: what it searches with, the runs so far, the journal. */
struct session_state {
	char dir[PATH_MAX];
	char **probe_argv;
	bool auto_model;             /* no GPU visible: the default model stands in */
	space *sp;                   /* what is searched */
	struct env_pins pins;
	char *const *user_env;
	gsl_rng *rng;
	prune *pr;
	strategy *st;
	journal *jr;
	cJSON *fingerprint;          /* NULL: the probe gave none */
	cJSON *warm;                 /* the header's warm_start object, or NULL */
	char created[32];

	struct session_run *runs;
	size_t nruns, runs_cap;

	/* Resume: records read back, consumed in order as the loop asks for the same runs. */
	struct session_run *queue;
	size_t nqueue, qpos;

	double t_offset;             /* session time spent before this process */
	double t_start;              /* monotonic clock when this process started running */
	double timeout_s;            /* per run, after the baseline */
	char source[16];             /* "measured" or "model" */
	char model_name[64];
	enum session_stop stop;
	int duplicates;
	bool interrupted;
	const volatile sig_atomic_t *cancel;   /* set by nccltune_session_run */
};

/* Where what the user sees goes. */
struct session_output {
	FILE *progress;              /* NULL: no progress */
	FILE *warnings;              /* warnings, also with progress off (default stderr) */
	bool tty;                    /* progress is a terminal: one updating line */
	bool line_active;            /* a TTY progress line is on screen without its newline */
};

struct nccltune_session {
	char err[2048];
	bool resumed;
	bool started;
	struct session_config cfg;
	struct session_state run;
	struct session_output out;
};

/* ---- session_record.c ---- */
/* "baseline", "search", "retry", "warm", "final", "try"; can't fail. */
const char *session_phase_name(enum session_phase ph);
/* Returns 0 with *out, or -1 for an unknown name. */
int session_phase_parse(const char *s, enum session_phase *out);
/* The journal header of s (docs/formats.md); NULL when out of memory. Caller deletes. */
cJSON *session_header_json(const nccltune_session *s);
/* The journal record of run r, the index-th of the session, with the probe's raw stdout
 * (for its report object); NULL when out of memory. Caller deletes. */
cJSON *session_run_json(const nccltune_session *s, const struct session_run *r, size_t index,
                        const char *raw_stdout, size_t raw_len);
/* Load dir/journal.jsonl into s: the settings from the header, the runs into s->queue.
 * Returns an nccltune_status with a message naming file:line in s->err. */
int session_load_journal(nccltune_session *s, const char *dir);
/* Read s->warm_dir's journal for --warm-start and build s->warm (the header's
 * warm_start object). Needs s->sp and s->fingerprint. Returns an nccltune_status. */
int session_warm_prepare(nccltune_session *s);

/* ---- session_progress.c (all silent when s->progress is NULL; can't fail) ---- */
/* One line per run, or the updating line on a terminal. */
void session_progress_run(nccltune_session *s, const struct session_run *r);
/* A note on its own line ("nccltune: ..."). */
void session_progress_note(nccltune_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A warning ("nccltune: warning: ..."): to the progress stream, and to the warnings
 * stream when that is another one, so turning progress off never hides a warning. */
void session_warn(nccltune_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* End the updating line, if one is on screen. */
void session_progress_end(nccltune_session *s);
/* The end-of-session summary from the results document. */
void session_print_summary(nccltune_session *s, const cJSON *results);

/* ---- session.c, for the others ---- */
/* Session time in seconds, summed over resumes; can't fail. */
double session_elapsed(const nccltune_session *s);
/* What run r sets, as "NCCL_A=1 NCCL_B=2" ("" for the baseline); returns buf. */
char *session_run_describe(const nccltune_session *s, const struct session_run *r, char *buf,
                           size_t len);
/* Did the probe say its figures come from a model? */
bool session_is_model(const nccltune_session *s);
/* Is run r of the configuration (p, try_no)? p NULL: the baseline (try_no 0) or the
 * off-space try try_no. Can't fail. */
bool session_same_config(const struct session_run *r, const struct point *p, size_t try_no,
                         size_t dims);
/* The best objective measured so far in the search (not the final phase), with its
 * point when p is non-NULL. Returns 1 when there is one, else 0. */
int session_point_best(const nccltune_session *s, double *best_us, struct point *p);

#endif
