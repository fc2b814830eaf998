/* summary.h - a session's outcome as one validated struct: the one type of results.json.
 * The session fills it and result/write.c writes it (result_doc, the one writer); the
 * loader reads it back into the same struct, strictly (load.c, and final_read.c,
 * rules.c, read.c for its parts), and, when the folder has one, adds journal.jsonl's
 * runs (runs.c). export, install, check, report, show, the session's summary and its
 * --json output render from it (text.c: the summary in words), never from raw JSON.
 * Over common/jsonread (the reader) and common/ncclvars (NCCL names and values).
 *
 * Nothing read from a results file reaches an export unless it passed these checks: the
 * loader refuses a wrong type, an unknown key, a non-finite or out-of-range number, an
 * environment name that is not NCCL_[A-Z0-9_]+ and a tuned value outside NCCL's syntax
 * for its variable, with a message "FILE: key.path[i].key: reason". */
#ifndef NCCLTUNE_SUMMARY_H
#define NCCLTUNE_SUMMARY_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SUMMARY_RESULTS_MAX (16u << 20)   /* results.json larger than this is refused */
/* results.json "verdict" of a best not re-measured twice against the baseline */
/* results.json's verdicts (docs/formats.md) */
#define SUMMARY_VERDICT_OK "recommended"
#define SUMMARY_UNMEASURED "not measured enough to recommend"
/* measured enough, and the best sets something, but its gain's 95% interval reaches down
 * to 1.00x or below: NCCL's defaults are as good as far as the session can tell */
#define SUMMARY_VERDICT_UNPROVEN "not shown faster"
#define SUMMARY_VERDICT_NONE "nothing worked"

/* An environment: names and values borrowed from the loaded document (or, for journal
 * runs, owned by the summary). Order is the file's order; names are unique. */
/* value NULL only in a pruned rule's "when": the variable unset */
struct summary_var { const char *name, *value; };
struct summary_env { size_t n; struct summary_var *v; };

struct summary_gpu { int index; const char *name, *bus_id, *uuid; };  /* strings may be NULL */

/* The machine as a probe described it (docs/formats.md). Absent strings are NULL. */
struct summary_fingerprint {
	bool present;
	const char *source, *model, *host, *kernel;
	const char *driver, *cuda_runtime, *cuda_driver, *nccl_version;
	const char *nccl_path;            /* the libnccl.so.2 loaded (--nccl); NULL: absent */
	int gpu_count;                    /* -1 when absent */
	size_t ngpus;
	struct summary_gpu *gpus;
	size_t topo_n;                    /* topology is topo_n x topo_n (0: absent) */
	const char **topology;            /* row-major cells */
	const cJSON *doc;                 /* the object as the probe wrote it, written back
	                                   * verbatim (open: a probe may add keys); NULL: null */
};

struct summary_collective { const char *op; uint64_t bytes; long count; };

struct summary_workload {
	bool present;
	const char *schema;               /* NULL when absent */
	const char *dtype;
	const char *description;          /* NULL when absent */
	size_t n;
	struct summary_collective *c;
	size_t nguard;                    /* "guard": sizes measured only to be kept from harm */
	uint64_t *guard;
	/* "compute" (--compute-us): the busy kernel between the all-reduces, as asked */
	bool has_compute;
	double compute_kernel_us;
	long compute_ctas;                /* 0: absent */
	bool window_symmetric;            /* "window": "symmetric" */
};

/* A measured configuration: baseline, best or one of the top ones. */
struct summary_measure {
	bool present;
	struct summary_env env;
	double objective_us;              /* time per workload step */
	bool has_ci;
	double ci_lo, ci_hi;
	int repeats;                      /* 0 when absent */
	/* "step" (with compute between the all-reduces; baseline and best): the step's
	 * all-reduce part and the kernel alone, as the probe measured them */
	bool has_step;
	double step_allreduce_us, step_kernel_us;
	/* "server" (baseline, best, top): symmetric memory on in the server (a server option,
	 * never exported); kernel (best): "symmetric", "not symmetric" or "unknown" (NCCL
	 * logged no TUNING line: one rank), NULL when absent */
	bool symmetric;
	const char *kernel;
};

/* One of the user's own configurations (results.json "tries", from --try). */
struct summary_try {
	struct summary_measure m;         /* m.present false: it never measured ok */
	bool in_space;                    /* a point of the space searched */
	const char *outcome;              /* "ok", a failure class, "not_run" */
	bool has_ratio;                   /* ratio_vs_baseline: baseline / this */
	double ratio, ratio_lo, ratio_hi; /* lo/hi NAN without an interval */
	bool has_tuned;                   /* tuned_vs_try: this / the tuned best */
	double tuned, tuned_lo, tuned_hi;
};

struct summary_size { uint64_t bytes; double us; };

/* One per-size rule of best.rules: what nccltune's tuner plugin makes NCCL run for a
 * collective of exactly `bytes` (common/ncclvars indexes; -1 or 0: NCCL's choice). */
struct summary_rule {
	uint64_t bytes;
	int algo;                         /* enum ncclvars_algo, or -1 */
	int proto;                        /* enum ncclvars_proto, or -1 */
	int ctas;                         /* 1..64, or 0 */
	const char *algo_word, *proto_word;   /* as the file spells them; NULL: null */
	/* "nccl" (optional): what NCCL ran at that size in the recommended configuration's
	 * measured runs - NCCL clamps CTAs to the channels its communicator has (16 asked,
	 * 11 run on the rig), and a plugin rule it did not take shows here */
	bool has_ran;
	int ran_algo, ran_proto, ran_ctas;
	const char *ran_algo_word, *ran_proto_word;
};
/* results.json failures[i]: runs that failed alike, grouped. choice: the per-size choice
 * ("rule.43008.algo=Tree ..."), error: the first line of the error; NULL when absent. */
struct summary_failure {
	struct summary_env env;
	const char *stage;
	long count;
	const char *choice, *error;
};

/* results.json "per_size" (sessions with guard sizes): one tuned or guard size, the
 * baseline against the best in the final rounds (docs/formats.md). */
struct summary_size_cmp {
	uint64_t bytes;
	bool guard;                       /* role "guard" (else "tuned") */
	double baseline_us, best_us;      /* means over the final rounds; NAN: null */
	double ratio;                     /* paired best / baseline; NAN: null */
	bool has_ci;                      /* ratio_ci95 has two numbers */
	double ci_lo, ci_hi;
};
/* {"ratio", "ci95"} of the ablation and the attribution: ratio NAN when absent. */
struct summary_ratio { double ratio; bool has_ci; double lo, hi; };
/* guards.attribution[i]: what a variable of the finalist a guard size disqualified
 * costs there (with it / without it). */
struct summary_attribution {
	struct summary_env env;           /* the finalist */
	const char *var, *value;
	uint64_t bytes;                   /* the guard size */
	long rounds;
	struct summary_ratio cost;
};
/* ablation[i]: one variable of the winner, kept or dropped, and why. */
struct summary_ablation {
	const char *var, *value;
	const char *kind;                 /* "decision" or "process" */
	bool dropped;
	const char *why;
	long run;                         /* the journal's run of the winner less it; 0: none */
	struct summary_ratio removed;     /* removed_vs_kept */
};
struct summary_pruned { struct summary_env when; const char *reason; };

/* One probe run from the journal. Strings are owned by the summary. */
struct summary_run {
	long run;
	char phase[16];                   /* baseline, search, retry, warm, final */
	char outcome[16];                 /* ok, capture, crash, ... */
	double objective_us;              /* NAN unless outcome is ok */
	struct summary_env env;
	char nccl[200];                   /* what NCCL ran per size, "43008 B Ring/LL 1 CTA; ..."
	                                   * from the report's known words only; "" none */
};

struct summary {
	char origin[4096];                /* the results.json path, starts every message */
	char dir[4096];                   /* the session folder ("" when given a results.json) */
	cJSON *doc;                       /* the parsed results.json; strings point into it */
	cJSON *kept;                      /* parts a writer made that the summary borrows
	                                   * from (result_keep); NULL: none */
	const char *tool_name, *tool_version, *created;   /* NULL when absent */
	const char *source;               /* "measured" or "model" */
	const char *model;                /* NULL unless source is "model" */
	struct summary_fingerprint fp;
	struct summary_workload workload;
	const char *strategy;             /* NULL when absent */
	bool has_seed;
	double seed;
	long budget;                      /* -1 when absent */
	struct summary_env pinned;
	const char *server_like;          /* --like's profile name; NULL: none */
	struct summary_env server_env;    /* what that server sets before NCCL starts */
	struct summary_measure baseline, best;   /* best.present false: no config worked */
	size_t nsizes;
	struct summary_size *sizes;       /* best.per_size */
	bool has_rules;                   /* best.rules present (even empty): deployed through
	                                   * nccltune's tuner plugin */
	size_t nrules;
	struct summary_rule *rules;       /* best.rules */
	bool has_gain;
	double gain, gain_lo, gain_hi;    /* gain_lo/hi NAN without an interval */
	bool has_noise;                   /* "noise": how much one run varies (optional) */
	double noise_sd;                  /* pooled sd of log(time) over the final repeats */
	long noise_configs, noise_dof;
	long evaluations;
	const char *verdict;              /* "recommended", SUMMARY_UNMEASURED, "nothing worked";
	                                   * NULL when absent (older files) */
	long budget_needed;               /* with SUMMARY_UNMEASURED: the budget that would do;
	                                   * -1 when absent */
	/* "per_size", "guards" and "ablation" (final.c of decide/ decided them): nper_size 0,
	 * guards_verdict NULL, nablation 0 when absent */
	size_t nper_size;
	struct summary_size_cmp *per_size;
	const char *guards_verdict;       /* "ok", "slower", "not_shown_safe", "measured_once",
	                                     "unmeasured" */
	size_t nguard_sizes;
	uint64_t *guard_sizes;
	size_t nattribution;
	struct summary_attribution *attribution;
	size_t nablation;
	struct summary_ablation *ablation;
	size_t ntop, nfailures, npruned, ntries;
	struct summary_measure *top;
	struct summary_try *tries;
	struct summary_failure *failures;
	struct summary_pruned *pruned;
	/* From journal.jsonl, when the folder has one. */
	bool partial;                     /* no results.json: loaded from the journal alone
	                                   * (SUMMARY_PARTIAL); the session has not finished */
	bool has_journal;
	size_t nruns;
	struct summary_run *runs;
	char **probe_argv;                /* the header's "probe", NULL-terminated, or NULL */
	int journal_torn;                 /* torn last lines skipped */
	char journal_error[512];          /* SUMMARY_JOURNAL_SOFT: why the runs are missing */
	cJSON *jdoc;                      /* copies of journal parts the structs point into */
};

/* What summary_load reads besides results.json. */
enum summary_flags {
	SUMMARY_JOURNAL = 1,       /* journal.jsonl of a folder, when present; damaged: error */
	SUMMARY_JOURNAL_SOFT = 2,  /* the same, but a damaged journal only drops the runs and
	                            * leaves its message in journal_error (report, show) */
	SUMMARY_PARTIAL = 4,       /* a folder without results.json (still running, or
	                            * interrupted) loads from its journal alone: fingerprint,
	                            * probe and runs, source "measured", no workload, no best */
};

/* Load `path`: a session folder (its results.json, and journal.jsonl as `flags` say) or
 * a results.json file (never a journal). Exports pass 0: a damaged journal must not stop
 * them. Returns 0 and a summary the caller frees with summary_destroy, or -1 with a
 * message naming the file, the key and the reason in err. A folder without results.json
 * is an error ("... no results.json: the session has not finished") unless
 * SUMMARY_PARTIAL. */
int summary_load(const char *path, unsigned flags, struct summary **out, char *err,
                 size_t errlen);

/* Load results from JSON text (len bytes); `origin` names it in messages. The summary
 * has no journal. Same contract as summary_load. */
int summary_parse(const char *text, size_t len, const char *origin, struct summary **out,
                  char *err, size_t errlen);

/* Read journal.jsonl at `path` into s: the runs, the probe argv of the header, and the
 * header's fingerprint when results.json had none. Returns 0 or -1 with a message
 * naming the file and line. */
int summary_read_journal(struct summary *s, const char *path, char *err, size_t errlen);

void summary_destroy(struct summary *s);   /* accepts NULL */
/* An empty summary: no key present, numbers absent (-1, NAN) as the loader leaves them.
 * NULL when out of memory. */
struct summary *summary_create(void);

/* Parse and validate a fingerprint object (known keys type-checked; other keys, which a
 * probe may add, ignored). `where` prefixes messages ("results.json: fingerprint").
 * Pointers borrow from `o`; free fp->gpus and fp->topology with
 * summary_fingerprint_clear. Returns 0 or -1 with a message. */
int summary_fingerprint_parse(const cJSON *o, const char *where, struct summary_fingerprint *fp,
                              char *err, size_t errlen);
void summary_fingerprint_clear(struct summary_fingerprint *fp);   /* accepts a zeroed one */

/* Would the readers of results.json accept fingerprint `o` (summary_fingerprint_parse,
 * nothing kept)? For writers: what they would refuse is never written. Returns 0, or -1
 * with the reason. */
int summary_fingerprint_check(const cJSON *o, const char *where, char *err, size_t errlen);

/* The value of `name` in env, or NULL. */
const char *summary_env_get(const struct summary_env *env, const char *name);

/* Human forms shared by exports, report and show. Each writes into buf and returns it;
 * can't fail (output is truncated to len). Strings from the file are passed through
 * unchanged: callers escape or sanitise for their format. */
char *summary_format_us(double us, char *buf, size_t len);            /* "2.85 ms", "412.0 us" */
char *summary_describe_machine(const struct summary_fingerprint *fp, char *buf, size_t len);
char *summary_describe_workload(const struct summary_workload *w, char *buf, size_t len);
char *summary_describe_gain(const struct summary *s, char *buf, size_t len);
/* What a guards verdict ("ok", "slower", ...) means, in words ("not judged (measured
 * once)"); an unknown word is returned as it is. Can't fail. */
const char *summary_guards_text(const char *verdict);

/* What to turn on in the server for a configuration with symmetric memory (the space's
 * server.symmetric; never an NCCL variable): one line per server, from the built-in
 * profiles' "symmetric" blocks (profiles/NAME.json): only the one `like` names when it is a
 * built-in profile's name (results.json server.like), else every built-in's. Fixed text,
 * nothing from a results file, so an export may print it. Writes at most `max` lines
 * ("SGLang: --enable-symm-mem; needs NCCL_CUMEM_ENABLE=1"; static storage, overwritten
 * by the next call) and returns how many. */
#define SUMMARY_SYMMETRIC_LINES_MAX 4
size_t summary_symmetric_lines(const char *like, const char **lines, size_t max);
/* The step of m and its all-reduce part, in words, when the session measured with
 * compute between the all-reduces (results.json workload.compute): "step 7.25 ms,
 * all-reduces 2.37 ms (the step less 122 x 40.2 us, the kernel as measured alone)" from
 * m's "step", else from the kernel as asked, labelled so. Returns buf, or NULL when the
 * workload has no compute or m was not measured. */
char *summary_describe_step(const struct summary *s, const struct summary_measure *m,
                            char *buf, size_t len);
/* Whether NCCL ran a symmetric kernel, in words, for m.kernel (NULL: "unknown"). */
const char *summary_kernel_words(const char *kernel);

/* Is a gain faster on its point estimate (>= 1.005) but not shown to be: its 95%
 * interval reaches down to 1.00x or below? A session whose recommended settings have
 * such a gain may be no faster than NCCL's defaults; every view says so. The first
 * form takes the numbers, the second a result that recommends settings (a non-empty
 * best.env or best.rules against a measured baseline). Can't fail. */
bool summary_gain_is_unproven(double gain, double gain_lo);
/* Does the result say its best was not measured enough to recommend (verdict
 * SUMMARY_UNMEASURED)? Its exports then hold comments only, and no gain is stated.
 * Can't fail. */
bool summary_unmeasured(const struct summary *s);
/* "not measured enough to recommend; run with --budget N or more" (or why no budget
 * would do) into buf; returns buf. Can't fail. */
char *summary_describe_unmeasured(const struct summary *s, char *buf, size_t len);
/* The same sentence from the budget that would do (budget_needed <= 0: none would, the
 * final rounds did not run twice or could not show a guard safe). Returns buf. Can't
 * fail. */
char *summary_unmeasured_text(long budget_needed, char *buf, size_t len);
bool summary_gain_unproven(const struct summary *s);
/* Is the result's best shown to be faster than NCCL's defaults: it sets something (a
 * variable or a per-size rule), was measured against a measured baseline, and its gain's
 * 95% interval lies above 1.00x? What "recommended" means, and what install needs (else
 * --allow-unproven). Can't fail. */
bool summary_shown_faster(const struct summary *s);
char *summary_describe_env(const struct summary_env *env, char *buf, size_t len); /* "A=1 B unset" */

/* Commands for a user to copy (command.c). summary_command: "SELF WORDS DIR" into buf,
 * SELF nccltune as it can be run (locate_self_command), WORDS the caller's fixed text,
 * DIR (NULL: none) quoted for a POSIX shell when it needs it (escaped, so not runnable,
 * when it holds a control byte). Returns buf; can't fail (truncated at len). */
char *summary_command(char *buf, size_t len, const char *words, const char *dir);
/* The interpreter a pth install of s needs: when the session tuned a PyTorch wheel's
 * NCCL (fingerprint nccl_path PREFIX/lib/pythonX.Y/site-packages/nvidia/nccl/lib/...,
 * from --python), PREFIX/bin/pythonX.Y when it is executable. Returns true with it in
 * buf, else false with buf "" (the install then goes to python3 in PATH). */
bool summary_install_python(const struct summary *s, char *buf, size_t len);
/* "SELF export --install [--python PY] DIR": the install command of s as it can be run
 * (summary_command, summary_install_python). Returns buf; can't fail. */
char *summary_install_command(const struct summary *s, const char *dir, char *buf, size_t len);

/* Runs of the journal grouped by protocol / algorithm ("LL / Ring"; an unset variable
 * reads "default"), for report and show. */
struct summary_family {
	char label[80];
	size_t runs, ok;                  /* all runs of the family, and those that measured */
	double best, median;              /* over ok runs; NAN when none */
};

/* The family label of one environment. Returns buf; can't fail. */
char *summary_family_label(const struct summary_env *env, char *buf, size_t len);

/* Group s->runs (baseline-phase runs excluded) into families, best first, families
 * without an ok run last. Returns 0 with a malloc'd array (NULL when there are no runs)
 * the caller frees, or -1 when out of memory. */
int summary_families(const struct summary *s, struct summary_family **out, size_t *n);

/* Copy `in` into buf keeping printable ASCII and replacing anything else (control
 * characters, bytes >= 0x7f) with '?', for comments and terminals. Returns buf. */
char *summary_sanitize(const char *in, char *buf, size_t len);

#endif
