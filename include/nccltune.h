/* nccltune.h - the public API of libnccltune. The `nccltune` CLI uses nothing else.
 *
 * A session is an opaque handle: create it, set what to tune, run it, destroy it.
 * Every function returns an nccltune_status; on failure the handle (or the err buffer
 * of the free functions) holds a message that names the file, key or value at fault. */
#ifndef NCCLTUNE_H
#define NCCLTUNE_H

#include <stddef.h>
#include <stdio.h>

/* Also the CLI's exit codes (README, "Exit codes"). */
enum nccltune_status {
	NCCLTUNE_OK = 0,
	NCCLTUNE_ERROR = 1,        /* runtime failure: I/O, a probe that cannot be started, a
	                            * session folder locked by another nccltune */
	NCCLTUNE_USAGE = 2,        /* bad input: options, space/workload/results files */
	NCCLTUNE_CHANGED = 3,      /* check: the machine's fingerprint changed */
	NCCLTUNE_NO_CONFIG = 4,    /* the session ended without a single working config */
	NCCLTUNE_NOT_DEPLOYED = 5, /* verify: the server would not run what was tuned */
	NCCLTUNE_INTERRUPTED = 130 /* stopped by SIGINT/SIGTERM; the folder is resumable */
};

typedef struct nccltune_session nccltune_session;

/* ---- tuning sessions (tuner/session/) ---- */

/* A session with defaults: default space, the seed's workload (122 x 43008 B bf16),
 * strategy bo, budget 60, seed 1. NULL only when out of memory. */
nccltune_session *nccltune_session_create(void);
void nccltune_session_destroy(nccltune_session *s);    /* accepts NULL */
const char *nccltune_session_error(const nccltune_session *s);

/* Setters; each validates its input and returns NCCLTUNE_USAGE with a message. */
int nccltune_session_set_probe(nccltune_session *s, const char *command); /* split like a shell */
int nccltune_session_set_model(nccltune_session *s, const char *model);   /* name or file */
int nccltune_session_set_space_file(nccltune_session *s, const char *path);
int nccltune_session_set_workload_file(nccltune_session *s, const char *path);
int nccltune_session_set_workload(nccltune_session *s, const char *bytes_list, int ops,
                                  const char *dtype);
/* Guard sizes ("1M,117440512"): not tuned, measured in the baseline and final rounds; a
 * finalist that makes one slower than the baseline beyond noise is not recommended. Set
 * after the workload (a tuned size is refused; a workload set after the guards is
 * refused, as it would replace them). Returns NCCLTUNE_OK or NCCLTUNE_USAGE. */
int nccltune_session_set_guards(nccltune_session *s, const char *list);
int nccltune_session_set_budget(nccltune_session *s, int runs);
int nccltune_session_set_time_limit(nccltune_session *s, double seconds);
int nccltune_session_set_seed(nccltune_session *s, unsigned long seed);
int nccltune_session_set_strategy(nccltune_session *s, const char *name);
int nccltune_session_set_timeout(nccltune_session *s, double seconds);    /* per probe run */
int nccltune_session_set_out_dir(nccltune_session *s, const char *dir);
/* The server's NCCL: every probe run loads this libnccl.so.2 (the probe's --nccl option,
 * appended to its command line); the fingerprint must then name it as nccl_path, or the
 * session stops (NCCLTUNE_ERROR). set_python finds the NCCL of the interpreter's PyTorch
 * wheel (SITE-PACKAGES/nvidia/nccl/lib/libnccl.so.2, asking the interpreter, run without
 * a shell, for its site-packages). (In tuner/session/server.c.) */
int nccltune_session_set_nccl(nccltune_session *s, const char *path);
int nccltune_session_set_python(nccltune_session *s, const char *python);
/* The rig of docs/probe-protocol.md ("Several ranks on one GPU"): K ranks share each GPU
 * (an integer in 1..64, as text), passed as the probe's --ranks-per-gpu K to every run
 * and the fingerprint, so the journal's probe command keeps it for resume, check and
 * retune. Needs NCCL 2.30 in the probe (--nccl). Not for a machine model. */
int nccltune_session_set_ranks_per_gpu(nccltune_session *s, const char *k);
/* The server's profile: "sglang", "vllm" (built in, from profiles/) or a profile file. What
 * it sets before NCCL starts (and the user's environment does not) is set for every run
 * after the candidate's variables, dropped from the search, recorded (journal and
 * results.json "server") and written as "set by the server" comments by the exports;
 * tries that set it otherwise and tuned sizes in its custom all-reduce window are warned
 * about. NCCLTUNE_USAGE for an unknown name or a bad file. (tuner/session/server.c) */
int nccltune_session_set_like(nccltune_session *s, const char *like);
/* The server's step, after the workload (a workload set later is refused): `spec` "US[,CTAS]"
 * puts a busy kernel of US microseconds (whole nanoseconds, at most 10000 us) on CTAS CTAs
 * (default one per SM) before every all-reduce (the probe's --compute-us): every figure is
 * then the whole step, kernels included. `kind` "symmetric" registers the probe's buffers
 * as symmetric windows (--window symmetric; a profile's "unless": "symmetric" variables
 * are then not set). NCCLTUNE_USAGE with a message naming the option on a bad value. */
int nccltune_session_set_compute(nccltune_session *s, const char *spec);
int nccltune_session_set_window(nccltune_session *s, const char *kind);
int nccltune_session_set_warm_start(nccltune_session *s, const char *session_dir);
/* A configuration of your own ("NCCL_PROTO=LL NCCL_ALGO=Ring ...") to measure in the
 * session: right after the baseline, and again in the final rounds next to the tuned
 * finalists, so results.json's "tries" gives its ratio to the baseline and to the tuned
 * best. Each item is validated (NCCLTUNE_USAGE names the bad one); at most 16 in all.
 * add_try_file reads one configuration per line ('#' comments). */
int nccltune_session_add_try(nccltune_session *s, const char *config);
int nccltune_session_add_try_file(nccltune_session *s, const char *path);
/* Where progress goes (default stderr; NULL for none). Warnings go to stderr as well
 * whatever the progress stream is, so turning progress off never hides one. */
void nccltune_session_set_progress(nccltune_session *s, FILE *f);

/* Run (or, after nccltune_session_resume, continue) the session to the end: budget,
 * time limit or a signal. Writes journal.jsonl as runs complete, results.json, the
 * exports and report.html at the end. A new session locks its folder (DIR/.lock;
 * NCCLTUNE_ERROR naming the holder's pid when another process has it). While it runs,
 * the process is a child subreaper, and after every probe run it SIGKILLs and reaps
 * every child it did not have when this call started: an embedding program must not start
 * children of its own from other threads meanwhile. Stops with NCCLTUNE_USAGE or
 * NCCLTUNE_ERROR after the baseline when the probe refuses its command line or finds
 * no usable GPU. */
int nccltune_session_run(nccltune_session *s);

/* Load the session in `dir` from its journal so that nccltune_session_run continues
 * it. Setters other than progress are refused afterwards. Takes the folder's lock
 * (DIR/.lock) until the session is destroyed: NCCLTUNE_ERROR, naming the holder's pid,
 * when another process holds it. A new session takes the lock of its --out folder when
 * it runs. */
int nccltune_session_resume(nccltune_session *s, const char *dir);

/* After nccltune_session_resume, before nccltune_session_run: raise the session's
 * budget to `budget` runs (`nccltune run --resume DIR --budget N`). The journal
 * records it at once (a "budget" record, docs/formats.md), so a later plain resume
 * continues with it; the recorded runs are replayed under the budget they were made
 * with, then the search goes on and the final phase runs anew (a concluded session's
 * too: its results.json is rewritten). NCCLTUNE_USAGE unless `budget` is larger than
 * the budget in effect and than the runs recorded (at most 100000); NCCLTUNE_ERROR when
 * the journal cannot be written. */
int nccltune_session_extend(nccltune_session *s, int budget);

/* After nccltune_session_run returned `status`: one line of JSON on `out` with what a
 * script needs (docs/formats.md, "Run summary"): {"schema": "nccltune-run/1", "status",
 * "error" (null or the message), "session" (the folder or null), "results" (its
 * results.json or null), and from results.json "verdict", "source", "model",
 * "baseline", "best" (env, objective_us, ci95_us, repeats, per_size), "gain" (ratio and
 * ci95, or null), "budget_needed", "noise"; null when the session wrote none}.
 * Returns NCCLTUNE_OK, or NCCLTUNE_ERROR when out of memory or writing failed. */
int nccltune_session_summary_json(const nccltune_session *s, int status, FILE *out);

/* The same object for a command line refused before any session existed (a usage
 * error, `status` NCCLTUNE_USAGE): `error` the message, every other key null, so that
 * --json yields one object whatever happens. Returns as nccltune_session_summary_json. */
int nccltune_summary_json_error(int status, const char *error, FILE *out);

/* The session folder (valid after run or resume started). */
const char *nccltune_session_out_dir(const nccltune_session *s);

/* The command line of nccltune's own probe, for nccltune_check or
 * nccltune_session_set_probe: `model` NULL gives nccltune-probe, otherwise
 * nccltune-model-probe --model MODEL; each found as a session finds it
 * ($NCCLTUNE_PROBE / $NCCLTUNE_MODEL_PROBE, next to the running program, PATH) and
 * quoted for a shell-like split. NCCLTUNE_OK, or NCCLTUNE_ERROR with a message saying
 * where it looked. (In tuner/run/locate.c, below the session, with finding the probes.) */
int nccltune_probe_command(const char *model, char *buf, size_t len, char *err, size_t errlen);

/* `text` (NULL reads as "") for a terminal, into buf: control characters (C0, newline
 * included, DEL, C1) and invalid UTF-8 written as \xHH, cut to fit len - 1 bytes. For
 * every message that may hold what a probe or a file said (the error strings of this
 * API). Returns buf. Can't fail. (In tuner/session/notes.c.) */
char *nccltune_printable(const char *text, char *buf, size_t len);

/* ---- what users do with a result (tuner/workflows/) ---- */

/* Formats of nccltune_export, NULL-terminated. */
extern const char *const nccltune_export_formats[];

/* The file name a session gives format's export in its exports/ folder
 * ("sitecustomize.py", "nccl.conf", ...), or NULL for an unknown format. Can't fail. */
const char *nccltune_export_filename(const char *format);

/* Write the tuned environment of `path` (a session folder or a results.json) in
 * `format` to `out`. Values are validated against NCCL's syntax; a hostile file gives
 * an error, never code. */
int nccltune_export(const char *path, const char *format, FILE *out, char *err, size_t errlen);

/* Write the env-style exports of `path` (a session folder or a results.json) into the
 * folder `dir` as one self-contained bundle: DIR/nccl.env (dotenv), DIR/env.sh (shell),
 * DIR/nccl.conf (nccl-conf) and DIR/sitecustomize.py, and for a result with per-size rules
 * a copy of nccltune's tuner plugin (DIR/libnccl-tuner-nccltune.so) and its table
 * (DIR/nccl-tuner.table), which the env files name by `dir` (a result without rules: an
 * earlier bundle's plugin and table are removed). `dir` must be absolute and plain (no
 * ".", "..", "//" or trailing '/'), as the server or a container mounting it at the same
 * path sees it; it is created when missing (its parent must exist) and must be trusted:
 * owned by root or the caller, not writable by others, nor any folder above it. Each
 * file is written atomically, the env files last; one line per file on `notes` (NULL:
 * none). NCCLTUNE_OK, NCCLTUNE_USAGE (a refused folder or result, with the reason) or
 * NCCLTUNE_ERROR (a write failed; files already written stay). */
int nccltune_export_bundle(const char *path, const char *dir, FILE *notes, char *err,
                           size_t errlen);

/* How nccltune_install and nccltune_uninstall work; zero it, then set what you need. */
struct nccltune_install_options {
	/* "pth" (NULL means it): a .pth file and a module in the interpreter's own
	 * site-packages, read at start-up by that interpreter alone (a venv's: that venv).
	 * "sitecustomize": the block merged into the sitecustomize.py the interpreter imports.
	 * "nccl-conf": the block merged into NCCL's configuration file. */
	const char *format;
	/* The file (sitecustomize, nccl-conf) or the site-packages folder (pth); NULL: found
	 * as the format says - pth: `python`'s purelib; sitecustomize: the file `python`
	 * imports; nccl-conf: $NCCL_CONF_FILE, else ~/.nccl.conf. */
	const char *target;
	const char *python;      /* the interpreter (pth, sitecustomize); NULL: python3 */
	int system;              /* allow a system-wide sitecustomize (not a venv's own, or a
	                          * file under /etc or /usr: a distribution's) */
	int allow_model;         /* install a result of source "model" (never for production) */
	int allow_unproven;      /* install a result whose best is not shown to be faster than
	                          * NCCL's defaults (summary_shown_faster) */
	int allow_old_nccl;      /* install per-size rules for an interpreter whose path holds
	                          * an NCCL older than 2.24 (the server may load another) */
	FILE *notes;             /* which interpreters or programs it affects; NULL: none */
};

/* Install the tuned environment of `path` (a session folder or a results.json) as
 * `o` says: merge nccltune's block between marker lines (replacing an older block,
 * keeping the rest, the mode, owner and group) or write the pth files; a changed file's
 * previous text is kept as FILE.nccltune-bak; every file is replaced atomically. Refused
 * (NCCLTUNE_USAGE, with the reason): a model's result without allow_model, a result whose
 * best sets something it is not shown to need (its gain's interval reaches 1.00x)
 * without allow_unproven, per-size rules for an interpreter whose site-packages hold an
 * NCCL older than 2.24 without allow_old_nccl (unknown: a warning on notes), a system-wide
 * sitecustomize without `system`, an nccl-conf file in which a line outside the block
 * sets one of its variables before it (NCCL keeps the first line for a variable), a
 * target with other hard links, an indented or broken block, a Python file its
 * interpreter cannot parse. The main path written is reported in `written`. */
int nccltune_install(const char *path, const struct nccltune_install_options *o,
                     char *written, size_t written_len, char *err, size_t errlen);

/* Remove what nccltune_install put there with the same options (path-less): the block,
 * or the .pth file and its module. The file before the change is kept as
 * FILE.nccltune-bak (for pth: the module itself). NCCLTUNE_OK also when nothing was
 * installed (`written` is then ""); refusals as for install. */
int nccltune_uninstall(const struct nccltune_install_options *o, char *written,
                       size_t written_len, char *err, size_t errlen);

/* Compare the fingerprint saved in `session_dir` with the current one, taken by
 * running `probe_command --fingerprint` (NULL: the probe the session used). Prints a
 * one-line verdict and the differences to `out`. NCCLTUNE_OK when unchanged,
 * NCCLTUNE_CHANGED when changed; NCCLTUNE_ERROR, with a message that starts "cannot
 * measure:", when the probe cannot run, prints no fingerprint or sees no GPU where the
 * session had some; NCCLTUNE_USAGE for a folder without a saved fingerprint. */
int nccltune_check(const char *session_dir, const char *probe_command, FILE *out,
                   char *err, size_t errlen);

/* How nccltune_verify looks at the server; zero it, then set what you need. */
struct nccltune_verify_options {
	const char *python;     /* the server's interpreter: run as the server runs it (its
	                         * .pth files and sitecustomize), its PyTorch's NCCL started */
	const char *env_file;   /* docker --env-file / systemd EnvironmentFile= file the server
	                         * gets, added to this environment */
	const char *session;    /* the session whose result should be in use: compared */
	const char *nccl;       /* a libnccl.so.2 to start instead of PyTorch's (LD_PRELOAD) */
	int ranks;              /* ranks NCCL is started with, 1..8 (0: 1; all on the visible
	                         * GPUs in turn; 2 on one GPU needs NCCL >= 2.30 and
	                         * NCCL_MULTI_RANK_GPU_ENABLE=1) */
	int no_start;           /* do not start NCCL, even with a GPU */
};

/* Look at the environment the server will run in and say, on `out`, from NCCL's and the
 * plugin's own log lines: the NCCL_* (and NCCLTUNE_*, CUDA_*) variables NCCL will see and
 * where each comes from; NCCL's version; whether nccltune's tuner plugin loads (its ABI)
 * and reads its table (the rule count, the rules' answers); with a session, whether that
 * is what the session measured; and what could not be checked (no GPU: NCCL is not
 * started, the plugin is loaded through its own entry points in a child process, never
 * into this one). Returns NCCLTUNE_OK when every check that ran passed;
 * NCCLTUNE_NOT_DEPLOYED when one failed (plugin not found or not loaded, table
 * unreadable or not the session's, a variable that differs, NCCL older than 2.24 with
 * per-size rules); NCCLTUNE_ERROR when the interpreter or a helper cannot run;
 * NCCLTUNE_USAGE for bad options or files. (In tuner/workflows/verify.c.) */
int nccltune_verify(const struct nccltune_verify_options *o, FILE *out, char *err,
                    size_t errlen);

/* ---- re-tuning unattended (tuner/workflows/retune.c; the session it runs: session/) ---- */

struct nccltune_retune_options {
	/* --init: make STATE_DIR/current point at this session folder (the one whose result
	 * is in use), creating STATE_DIR; nothing is checked against the machine. */
	const char *init_from;
	/* How a re-tuned result is installed (and a result that is no better uninstalled):
	 * as nccltune_install takes it; allow_model is ignored (a model's numbers are never
	 * installed by a re-tune). */
	struct nccltune_install_options install;
	FILE *progress;          /* the re-tuning session's progress lines; NULL: none */
};

/* Re-tune the machine if it changed since STATE_DIR/current was tuned, as a unit run
 * before the server takes the GPUs (examples/retune.service). Under a lock on
 * STATE_DIR/lock: `nccltune check` of current (its recorded probe); unchanged: nothing;
 * changed: a new session STATE_DIR/sessions/<UTC time> with current's probe, space and
 * workload (warm-started from current), whose result is installed when it is measured
 * and shown to be faster than NCCL's defaults (a measured result that is not: what was
 * installed is removed; a model's: nothing installed); then `current` is relinked to it
 * atomically and `previous` to the old one. Returns NCCLTUNE_OK (unchanged, or
 * re-tuned); NCCLTUNE_ERROR when check cannot measure (nothing changed), the lock is
 * held or a step fails; NCCLTUNE_USAGE without STATE_DIR/current (the message says how
 * to create it) or for bad options; the session's own status otherwise (4, 130). What
 * happens is said on `out`. */
int nccltune_retune(const char *state_dir, const struct nccltune_retune_options *o, FILE *out,
                    char *err, size_t errlen);

/* Write session_dir/report.html (self-contained). */
int nccltune_report_write(const char *session_dir, char *err, size_t errlen);

/* Print the session's summary (the same content as the report) on `out`; of a session
 * that has not finished (no results.json: running or interrupted), the best so far from
 * its journal and how to resume it. */
int nccltune_show(const char *session_dir, FILE *out, char *err, size_t errlen);

#endif
