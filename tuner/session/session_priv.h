/* session_priv.h - the inside of a tuning session: the handle (what the setters set,
 * the session as it runs, where its output goes) and what the files of session/ call of
 * each other, from the bottom up: runs.h and notes.h (the vocabulary, notes), progress.h
 * (the printer, which sees none of this), server.c (the server's NCCL and profile), then
 * session_record.c (journal records,
 * resume, warm start), execute.c (one probe run), prepare.c (a new or resumed session),
 * twolevel.c (the two-level search), sizes.c and results.c (results.json from the
 * final phase's result, decide/decide.h), exports.c, loop.c (ask the search or the
 * final phase, run, tell) and session.c (the API).
 * A file calls only files before it (tests/layout/test_layers.py). Not public. */
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
#include "run/runner.h"
#include "nccltune.h"
#include "run/outcome.h"
#include "run/profile.h"
#include "search/prune.h"
#include "result/record.h"
#include "result/summary.h"
#include "space/space.h"
#include "search/strategy.h"
#include "search/twolevel.h"
#include "run/tryconf.h"
#include "run/workload.h"
#include "session/notes.h"
#include "session/runs.h"
#include "decide/decide.h"

#define SESSION_JOURNAL_SCHEMA RECORD_SCHEMA
/* A two-level session's journal (it holds sweep runs, phase "sweep"): readers of /1
 * would not know them. */
#define SESSION_JOURNAL_SCHEMA_2 RECORD_SCHEMA_2
#define SESSION_SWEEP_ATTEMPTS 8           /* sweep processes per outer point at most */
#define SESSION_SWEEP_ROUNDS 5             /* interleaved rounds of one sweep */
#define SESSION_SWEEP_MIN_TIMEOUT_S 90.0   /* past the probe's own watchdog (60 s + grace) */
#define SESSION_CAPS_TIMEOUT_S 30.0        /* --capabilities touches no GPU */
#define SESSION_BASELINE_TIMEOUT_S 300.0   /* before anything is known about the probe */
#define SESSION_MIN_TIMEOUT_S 30.0
#define SESSION_TIMEOUT_FACTOR 5.0         /* x the baseline's wall time */
#define SESSION_WARM_MAX 5                 /* old configurations re-run by --warm-start */
#define SESSION_MAX_DUPLICATES 50          /* repeated suggestions before giving up */
/* Not an nccltune_status: a run the --time-limit ended (or left no time to start),
 * never recorded (the configuration did not hang: the session's clock ran out); the
 * loop ends the search and the final phase there. Never returned by session_loop. */
#define SESSION_OUT_OF_TIME 1000
/* Not an nccltune_status: the final phase gave way to an extension of the budget
 * (session_budget_step); the loop searches on and starts the final phase anew. */
#define SESSION_EXTENDED 1001
/* A probe that no longer starts (probe_lost.c): NCCL's defaults and this many other
 * configurations in a row fail word for word alike, silently (no start, no report) or
 * in the probe's own words (the same init error, its command line refused); a check of
 * NCCL's defaults after SESSION_LOST_SAID others (doubled after each check it passes). */
#define SESSION_LOST_SILENT 1
#define SESSION_LOST_SAID 3

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
	char *nccl;                  /* --nccl / --python: the library's real path, or NULL */
	int ranks_per_gpu;           /* --ranks-per-gpu: ranks sharing each GPU (0, 1: one) */
	struct profile *profile;     /* --like: the server's profile, or NULL (new sessions) */
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
	char like[32];               /* --like's profile name ("" none), kept on resume */
	struct env_pins server;      /* what the server sets before NCCL starts, for every run */
	char *const *user_env;
	gsl_rng *rng;
	prune *pr;
	strategy *st;
	journal *jr;
	int lock_fd;                 /* the session folder's lock (fs_lock_dir); -1: none */
	cJSON *fingerprint;          /* NULL: the probe gave none */
	cJSON *warm;                 /* the header's warm_start object, or NULL */
	char created[32];

	struct session_run *runs;
	size_t nruns, runs_cap;

	/* Resume: records read back, consumed in order as the loop asks for the same runs. */
	struct session_run *queue;
	size_t nqueue, qpos;
	/* The budget's extensions (journal "budget" records, nccltune_session_extend): from
	 * run `at` on, the budget is `budget`; applied in order by session_budget_step. */
	struct session_extension { size_t at; int budget; } *ext;
	size_t nexts, exts_cap, ext_pos;   /* ext_pos: the next one to apply */
	/* The first run the final phase reads as its own rounds: the runs of a final phase
	 * an extension ended (before it) are the search's history (runlog.h). */
	size_t final_from;

	double t_offset;             /* session time spent before this process */
	double t_start;              /* monotonic clock when this process started running */
	double timeout_s;            /* per run, after the baseline */
	char source[16];             /* "measured" or "model" */
	char model_name[64];
	enum session_stop stop;
	size_t search_limit;         /* session_search_limit, set by the loop (progress ETA) */
	int duplicates;
	bool unset_swept;            /* two-level: the outer point that sets nothing was asked for */
	bool interrupted;
	bool probe_checked;          /* a resume checked its probe can start (execute.c) */
	const volatile sig_atomic_t *cancel;   /* set by nccltune_session_run */
	struct reaper reaper; /* ends what a probe's run leaves behind (runner.h) */
	struct summary *result;      /* results.json as written at the end and read back, or
	                              * NULL */
	char plugin[PATH_MAX];       /* nccltune's tuner plugin when the space has rules */

	/* The two-level search (issue 17), when the probe sweeps and the space has rules. */
	unsigned caps;               /* the probe's PROTO_CAP_* (journal header) */
	bool two_level;              /* the journal header's "two_level" */
	twolevel *tl;                /* the split of sp; NULL: one level */
	prune *pr_outer;             /* the outer strategy's pruner (process-level failures) */
	/* Every inner result, in run order: those of the runs so far (run < nruns), then
	 * while resuming those the journal holds for the runs still to replay. */
	struct twolevel_inner *inner;
	size_t ninner, inner_cap;
};

struct nccltune_session {
	char err[2048];
	bool resumed;
	bool started;
	struct session_config cfg;
	struct session_state run;
	struct session_output out;
};

/* ---- server.c ---- */
/* Append "--nccl PATH" to s->run.probe_argv when --nccl (or --python) was given.
 * Returns an nccltune_status. */
int session_server_argv(nccltune_session *s);
/* With --nccl: the fingerprint fp (NULL: none) must name that library as its nccl_path;
 * NCCLTUNE_ERROR otherwise (message in s->err); notes which library the result holds
 * for. NCCLTUNE_OK without --nccl. */
int session_server_check_fingerprint(nccltune_session *s, const cJSON *fp);
/* --like, for a new session: the profile's variables the user's environment does not set
 * become s->run.server (each noted, with its source), the searched dimensions they name
 * are dropped from s->run.sp, and tries that set one otherwise are warned about.
 * Returns an nccltune_status. */
int session_server_profile(nccltune_session *s);
/* Warn when tuned sizes fall in the profile's custom all-reduce window (on NVLink when the
 * profile says so: a topology cell NV#). Can't fail. */
void session_server_window(nccltune_session *s);
/* Set s->run.server's variables in a built environment. With `symmetric` (a candidate
 * with SPACE_SYMMETRIC on) the server's NCCL_CUMEM_ENABLE is left out whatever the
 * profile marks (a profile may mark only it "unless": "symmetric": SGLang keeps cuMem on
 * under --enable-symm-mem, vLLM keeps a non-zero value the user sets) and, when nothing else
 * (the user, the space) set it, NCCL_CUMEM_ENABLE=1 is added: symmetric windows are cuMem
 * mappings. Returns 0, or -1 when out of memory. */
int session_server_env(const nccltune_session *s, char ***env, bool symmetric);
/* results.json's server side of the baseline and the best, into r: with compute between
 * the all-reduces, "step": {"allreduce_us": the step's all-reduce part, "kernel_us": the
 * kernel alone, both as the probe measured them (means over the final repeats), "kernel":
 * "measured"} in both (in best when it is the baseline, `best_baseline`, or a point of
 * the space, `win`; not an off-space try); and when the recommendation `rec` (NULL: the
 * winner `win` itself), less the dimensions the ablation dropped (`rec_unset`), has
 * SPACE_SYMMETRIC on, best.server =
 * {"symmetric": true, "kernel": SERVER_KERNEL_*} (whether NCCL ran a symmetric kernel
 * for the winner's tuned sizes). Can't fail (true). */
#define SERVER_KERNEL_SYMMETRIC "symmetric"
#define SERVER_KERNEL_OTHER "not symmetric"
#define SERVER_KERNEL_UNKNOWN "unknown"
bool session_server_results_fill(const nccltune_session *s, struct summary *r,
                                 bool best_baseline, const struct point *win,
                                 const struct point *rec, uint32_t rec_unset);
/* The journal header's and results.json's "server": {"like", "env"}, or NULL when no
 * --like (*ok false: out of memory). */
cJSON *session_server_json(const nccltune_session *s, bool *ok);
/* Read a journal header's "server" back (absent: nothing). Returns 0, or -1 with a
 * message (a variable outside NCCL_* / CUDA_DEVICE_MAX_CONNECTIONS). */
int session_server_from_json(nccltune_session *s, const cJSON *obj, char *err, size_t errlen);

/* ---- sweep_record.c ---- */
/* Add an inner result to s->run.inner. Returns an nccltune_status. */
int session_inner_push(nccltune_session *s, const struct twolevel_inner *in);
/* Add sweep run r's "sweep" and "inner" (the inner results of run `index`) to its
 * journal record j. False when out of memory. */
bool session_sweep_json(const nccltune_session *s, const struct session_run *r, size_t index,
                        cJSON *j);
/* Resume's part of a sweep run: rec's inner results (as the one reader, result/record.c,
 * read them) into s->run.inner as run `run` (0-based), each point mapped into the
 * session's space, and rec's choices into r. Returns 0, or -1 after jr_fail on `jr`. */
int session_sweep_apply(nccltune_session *s, struct jr *jr, const struct record_run *rec,
                        struct session_run *r, size_t run);

/* ---- session_record.c ---- */
/* Make every string and key of the JSON value `item` and its siblings (and their
 * children) valid UTF-8, in place (fs_utf8_sanitize): what a probe printed goes into
 * the journal. Returns false when out of memory. */
bool session_json_utf8(cJSON *item);
/* The journal header of s (docs/formats.md); NULL when out of memory. Caller deletes. */
cJSON *session_header_json(const nccltune_session *s);
/* The journal record of run r, the index-th of the session, with the probe's raw stdout
 * (for its report object); NULL when out of memory. Caller deletes. */
cJSON *session_run_json(const nccltune_session *s, const struct session_run *r, size_t index,
                        const char *raw_stdout, size_t raw_len);
/* ---- header_read.c, session_record.c: reading the journal back ---- */
/* Rebuild s from the journal's header h as the one reader (result/record.c) read it:
 * the settings, the probe, and the space, workload, pins, tries and server each through
 * its own reader (a null space refused: resume needs it). Returns 0, or -1 after a
 * message "FILE:LINE: key: why" on r; what was set up is freed with s. */
int session_header_apply(nccltune_session *s, struct jr *r, const struct record_header *h);

/* Load dir/journal.jsonl into s: the settings from the header, the runs into
 * s->run.queue. Returns an nccltune_status with a message naming file:line in s->err. */
int session_load_journal(nccltune_session *s, const char *dir);
/* Read s->cfg.warm_dir's journal for --warm-start and build s->run.warm (the header's
 * warm_start object). Needs s->run.sp and s->run.fingerprint. Returns an
 * nccltune_status. */
int session_warm_prepare(nccltune_session *s);

/* ---- probe_lost.c ---- */
enum session_lost {
	SESSION_LOST_NO,      /* the last run says nothing of the probe */
	SESSION_LOST_CHECK,   /* run NCCL's defaults now: they tell the probe from the space */
	SESSION_LOST_YES      /* the probe no longer starts: stop the session */
};
/* Over the runs this process ran (not a resume's replayed ones): does the streak of
 * failures word for word like the last run's say the probe itself no longer starts?
 * *configs and *runs: the distinct configurations and the runs of that streak. Can't
 * fail. */
enum session_lost session_probe_lost(const nccltune_session *s, size_t *configs, size_t *runs);

/* ---- execute.c ---- */
/* The probe's command line for one run: its argv, then the workload's options, or
 * `extra` instead of them ("--fingerprint"). NULL when out of memory; free with
 * runner_free_argv. */
char **session_probe_argv(const nccltune_session *s, const char *extra);
/* The probe's command line for a sweep run: its argv and the workload's options with
 * the guard sizes (each guard measured once per sweep under NCCL's own choice, for the
 * guard-aware finalist choice), --window symmetric among them when `symmetric` (an outer
 * point with SPACE_SYMMETRIC on). NULL when out of memory; free with runner_free_argv. */
char **session_sweep_argv(const nccltune_session *s, bool symmetric);
/* Is `bytes` one of the workload's guard sizes? Can't fail. */
bool session_is_guard(const nccltune_session *s, uint64_t bytes);
/* Is the loop still replaying the journal of a resumed session? */
bool session_replaying(const nccltune_session *s);
/* Run p (NULL: the baseline, or the off-space try try_no) once in `phase`, or take the
 * journal's record of it when resuming; try_no (1-based, 0: none) marks a try's runs.
 * Returns 0 with *o, NCCLTUNE_INTERRUPTED when interrupted (nothing recorded), or
 * NCCLTUNE_ERROR on a failure of the tuner itself, message in s->err. */
int session_execute(nccltune_session *s, enum session_phase phase, const struct point *p,
                    size_t try_no, struct outcome *o);
/* session_execute of p with the dimensions in `unset` (bit d: dimension d) left unset,
 * a configuration the space may have no point for (an ablation: p less a variable whose
 * dimension has no unset level); journalled with "unset", never learned from. */
int session_execute_unset(nccltune_session *s, enum session_phase phase, const struct point *p,
                          uint32_t unset, struct outcome *o);
/* Tell the pruner and the strategy what p gave (two-level: the pruner only; the outer
 * strategy learns from sweep runs). Can't fail. */
void session_observe(nccltune_session *s, const struct point *p, const struct outcome *o);
/* Learn what sweep run `run` (0-based) gave: every inner result as a full point (the
 * pruner) and, when its outer point is done with (an ok sweep or a failure of the
 * process itself), the outer observation (the outer strategy and pruner). Can't fail. */
void session_sweep_observe(nccltune_session *s, size_t run);
/* Tell the outer strategy and its pruner what the outer point of `full` came to (with no
 * outer space: the strategy, of the full point). Can't fail. */
void session_outer_observe(nccltune_session *s, const struct point *full,
                           const struct outcome *o);
/* Tell the outer strategy alone (an outer point told again): an ok outcome's objective
 * times decide_outer_guard_penalty, the guards its sweeps measured; `say`: note what it
 * was told (live, the first time). Can't fail. */
void session_outer_tell(nccltune_session *s, const struct point *full, const struct outcome *o,
                        bool say);
/* While replaying, the journal's next run when it is a sweep of the outer point of
 * `outer_full`: 1 (taken, with *o), 0 (not: the journal and the loop parted ways), -1
 * (an error of the tuner, message in s->err). */
int session_replay_sweep(nccltune_session *s, const struct point *outer_full,
                         struct outcome *o);
/* What a finished run came to (runner_classify, then the objective of a good report;
 * with `symmetric`, a report without "window": "symmetric" is garbage). Can't fail. */
void session_take_outcome(nccltune_session *s, const struct runner_result *res,
                          bool symmetric, struct outcome *o);
/* Journal run r with the probe's output, add it to the runs and show it. Returns 0, or
 * NCCLTUNE_ERROR with a message in s->err. */
int session_record_run(nccltune_session *s, const struct session_run *r,
                       const struct runner_result *res);
/* Seconds one inner choice is expected to take (from the sweeps so far, else a guess
 * from the plain runs), with the plain runs' mean wall time in *plain_s (0: none).
 * Can't fail. */
double session_sweep_choice_s(const nccltune_session *s, double *plain_s);
/* After a live run: when the failures in a row say the probe no longer starts
 * (session_probe_lost), run NCCL's defaults once to tell (a PHASE_BASELINE run, which a
 * resume replays wherever it stands), and stop the session when they fail alike too:
 * NCCLTUNE_ERROR with a message naming the probe and the failure. 0 otherwise, or
 * NCCLTUNE_INTERRUPTED. */
int session_probe_watch(nccltune_session *s);
/* Before the first live run of a resumed session, check its probe can start. Returns 0
 * or NCCLTUNE_ERROR. */
int session_check_probe(nccltune_session *s);

/* ---- sweep_run.c ---- */
/* One sweep run of the outer point of `outer_full`: its n planned choices c in one probe
 * process (or, while replaying, the journal's record of it); the inner results are
 * journalled with the run and added to s->run.inner, and learned. Returns 0 with *o
 * (the run's outcome: ok with the best combination's objective, or the failure),
 * NCCLTUNE_INTERRUPTED, or NCCLTUNE_ERROR (message in s->err). */
int session_sweep_execute(nccltune_session *s, const struct point *outer_full,
                          const struct twolevel_choice *c, size_t n, struct outcome *o);
/* The journal's runs no longer match what the loop asks for: take the rest as they
 * are, learning from each, and run live from here on. Returns an nccltune_status. */
int session_diverge(nccltune_session *s);

/* ---- prepare.c ---- */
/* A new session: its probe, space, pins, tries, folder, fingerprint, warm start and
 * journal header. Returns an nccltune_status (NCCLTUNE_OK with s->run.interrupted set
 * when a signal came first). */
int session_prepare_new(nccltune_session *s);
/* What new and resumed sessions both need: the rng, the pruner, the strategy. Returns
 * an nccltune_status. */
int session_prepare_common(nccltune_session *s);

/* ---- decide_view.c ---- */
/* The final phase's view of s, as of now (decide/decide.h): its runs, workload, tries,
 * budget and time, replaying or not, the strategy's ranking and s's notes. Can't fail. */
void session_decide_view(nccltune_session *s, struct decide_view *v);

/* ---- twolevel.c ---- */
/* Should the search stop before the next suggestion? While replaying, the journal says
 * what happened next; live, the budget and the time limit decide (setting
 * s->run.stop). */
bool session_search_done(nccltune_session *s);
/* The two-level search (issue 17): the outer strategy's suggestions, each swept in
 * probe processes (session_sweep_execute) until a stop rule says enough. Returns an
 * nccltune_status (NCCLTUNE_INTERRUPTED when interrupted). */
int session_twolevel_search(nccltune_session *s, struct outcome *o);

/* ---- sizes.c ---- */
struct finalist;
struct final_state;
/* best.rules of the recommended point p (NULL: none) into r, less each rule whose
 * every choice equals what NCCL ran in the baseline at its size (dropped whole, with a
 * note). False when out of memory. */
bool session_rules_fill(nccltune_session *s, struct summary *r, const struct point *p);
/* The per_size table of results.json (tuned then guard sizes, baseline against `win`;
 * NULL: the baseline is the best) into out (room for 2 * WORKLOAD_MAX_ENTRIES), *n of
 * them. Returns the guards' verdict: "ok" (each guard shown safe), "slower", "not_shown_safe",
 * "measured_once" (a guard paired in one round only: not judged) or "unmeasured". Can't
 * fail. */
const char *session_per_size_fill(const nccltune_session *s, const struct finalist *win,
                                  struct summary_size_cmp *out, size_t *n);

/* ---- results.c, exports.c, loop.c ---- */
struct final_state;
/* Fill results.json's one type from the final phase's result, write it into the session
 * folder (result/'s one writer) and read it back: *out is what the loader read (caller
 * destroys; NULL on error). Returns NCCLTUNE_OK, NCCLTUNE_NO_CONFIG
 * when nothing worked (written too), or NCCLTUNE_ERROR with a message in s->err. */
int session_results_write(nccltune_session *s, struct final_state *f, struct summary **out);
/* Write the session's exports/ and report.html through the workflows' API; what fails
 * is a warning. Can't fail. */
void session_exports_write(nccltune_session *s);
/* The loop of a prepared session: baseline, tries, warm start, search, final rounds,
 * results, exports and the summary. Returns an nccltune_status. */
int session_loop(nccltune_session *s);

#endif
