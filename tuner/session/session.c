/* session.c - a tuning session through the session API of nccltune.h: the handle,
 * its setters (each validates its input), and nccltune_session_run, which installs the
 * signal handlers and runs prepare.c's preparation and loop.c's loop.
 *
 * Order of a session: fingerprint, baseline (every searched variable unset), the user's
 * own configurations (--try), warm-start candidates, the strategy's suggestions, then
 * the final phase that re-measures the finalists and the tries interleaved with the
 * baseline and picks the winner on those repeats. Every probe run counts against the
 * budget. A run that crashed, hung or printed garbage is run once more to tell a flake
 * from a rule; only the last outcome is learned from.
 *
 * Resuming replays the journal through the same loop: whenever the loop asks for a run
 * that the journal holds (same phase, same point), the recorded outcome is used instead
 * of running the probe, so the strategy sees the same observations in the same order
 * and nothing measured is run again. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "fsutil.h"
#include "result/result.h"
#include "result/summary.h"
#include "run/runner.h"
#include "session/session_priv.h"

/* The one mutable file-scope variable, here beside the handler that sets it: a signal
 * handler is called with nothing but the signal number, so what it sets must be reachable
 * without a pointer, and only a volatile sig_atomic_t may be written from it. Set by
 * SIGINT/SIGTERM while a session runs; nccltune_session_run hands the session a pointer
 * to it (s->run.cancel), through which execute.c and the runner read it. */
static volatile sig_atomic_t session_signal;

static void on_signal(int sig)
{
	session_signal = sig;
}

/* May progress on f rewrite its line in place: a terminal that is not TERM=dumb (or
 * unset), which takes "\r\033[K"? Anything else gets one plain line per run. */
static bool output_tty(FILE *f)
{
	const char *term = getenv("TERM");

	return f && isatty(fileno(f)) == 1 && term && term[0] && strcmp(term, "dumb") != 0;
}

/* The columns output to f wraps at: a terminal's width (TIOCGWINSZ), else $COLUMNS,
 * else 80; 100 for a file or a pipe. At least 40. */
static int output_width(FILE *f)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS");
	char *end;
	long n;

	if (!f || isatty(fileno(f)) != 1)
		return 100;
	if (ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col >= 40 ? ws.ws_col : 40;
	errno = 0;
	n = cols ? strtol(cols, &end, 10) : 0;
	if (cols && !errno && end != cols && !*end && n > 0 && n <= 1000)
		return n >= 40 ? (int)n : 40;
	return 80;
}

/* ---- handle, setters ---- */

nccltune_session *nccltune_session_create(void)
{
	nccltune_session *s = calloc(1, sizeof *s);

	if (!s)
		return NULL;
	workload_default(&s->cfg.wl);
	s->cfg.budget = 60;
	s->cfg.seed = 1;
	snprintf(s->cfg.strategy_name, sizeof s->cfg.strategy_name, "bo");
	s->out.progress = stderr;
	s->out.warnings = stderr;
	s->out.tty = output_tty(stderr);
	s->out.width = output_width(stderr);
	snprintf(s->run.source, sizeof s->run.source, "measured");
	s->run.lock_fd = -1;
	return s;
}

void nccltune_session_destroy(nccltune_session *s)
{
	if (!s)
		return;
	strategy_destroy(s->run.st);
	prune_destroy(s->run.pr);
	prune_destroy(s->run.pr_outer);
	twolevel_destroy(s->run.tl);
	free(s->run.inner);
	if (s->run.rng)
		gsl_rng_free(s->run.rng);
	journal_close(s->run.jr);
	if (s->run.lock_fd >= 0)
		close(s->run.lock_fd);   /* releases the folder's lock */
	space_destroy(s->run.sp);
	space_destroy(s->cfg.space_full);
	env_pins_free(&s->run.pins);
	runner_free_argv(s->run.probe_argv);
	cJSON_Delete(s->run.fingerprint);
	cJSON_Delete(s->run.warm);
	summary_destroy(s->run.result);
	for (size_t i = 0; i < s->cfg.ntries; i++)
		tryconf_clear(&s->cfg.tries[i]);
	free(s->cfg.tries);
	free(s->run.runs);
	free(s->run.queue);
	free(s->run.ext);
	free(s->cfg.probe_cmd);
	free(s->cfg.nccl);
	free(s->cfg.profile);
	env_pins_free(&s->run.server);
	free(s->cfg.model);
	free(s->cfg.space_file);
	free(s->cfg.out_dir_opt);
	free(s->cfg.warm_dir);
	free(s);
}

const char *nccltune_session_error(const nccltune_session *s)
{
	return s ? s->err : "out of memory";
}

const char *nccltune_session_out_dir(const nccltune_session *s)
{
	return s->run.dir[0] ? s->run.dir : NULL;
}

static int refuse(nccltune_session *s, const char *what)
{
	if (s->resumed)
		return session_fail(s, NCCLTUNE_USAGE, "%s: a resumed session keeps the settings "
		                    "of its journal", what);
	if (s->started)
		return session_fail(s, NCCLTUNE_USAGE, "%s: the session has already run", what);
	return NCCLTUNE_OK;
}

static int set_string(nccltune_session *s, char **dst, const char *v)
{
	char *c = strdup(v);

	if (!c)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	free(*dst);
	*dst = c;
	return NCCLTUNE_OK;
}

int nccltune_session_set_probe(nccltune_session *s, const char *command)
{
	char **argv = NULL;
	char e[512];
	int rc = refuse(s, "--probe");

	if (rc)
		return rc;
	if (s->cfg.model)
		return session_fail(s, NCCLTUNE_USAGE, "--probe and --model are exclusive");
	if (runner_split_command(command, &argv, e, sizeof e) != 0)
		return session_fail(s, NCCLTUNE_USAGE, "--probe: %s", e);
	runner_free_argv(argv);
	return set_string(s, &s->cfg.probe_cmd, command);
}

int nccltune_session_set_model(nccltune_session *s, const char *model)
{
	int rc = refuse(s, "--model");

	if (rc)
		return rc;
	if (s->cfg.probe_cmd)
		return session_fail(s, NCCLTUNE_USAGE, "--probe and --model are exclusive");
	if (!model || !*model)
		return session_fail(s, NCCLTUNE_USAGE, "--model: empty name");
	return set_string(s, &s->cfg.model, model);
}

/* Read the file an option names (at most 1 MiB). Returns the malloc'd text, or NULL
 * with NCCLTUNE_USAGE set and a message naming the option and the file. */
static char *read_option_file(nccltune_session *s, const char *option, const char *path,
                              size_t *len)
{
	char e[1024];
	char *text = fs_read_file(path, 1 << 20, len, e, sizeof e);

	if (!text)
		session_fail(s, NCCLTUNE_USAGE, "%s: %s", option, e);
	return text;
}

int nccltune_session_set_space_file(nccltune_session *s, const char *path)
{
	char e[1024];
	size_t len;
	char *text;
	space *sp = NULL;
	int rc = refuse(s, "--space");

	if (rc)
		return rc;
	text = read_option_file(s, "--space", path, &len);
	if (!text)
		return NCCLTUNE_USAGE;
	rc = space_parse(text, len, path, &sp, e, sizeof e);
	free(text);
	if (rc != 0)
		return session_fail(s, NCCLTUNE_USAGE, "%s", e);
	space_destroy(s->cfg.space_full);
	s->cfg.space_full = sp;
	return set_string(s, &s->cfg.space_file, path);
}

/* A workload set after --guard would silently drop the guards: refused instead. */
static int refuse_after_guards(nccltune_session *s, const char *what)
{
	if (s->cfg.wl.compute_us > 0 || s->cfg.wl.window_symmetric)
		return session_fail(s, NCCLTUNE_USAGE, "%s: set the workload before --compute-us "
		                    "and --window, which it would replace", what);
	if (!s->cfg.wl.guard_given)
		return NCCLTUNE_OK;
	return session_fail(s, NCCLTUNE_USAGE, "%s: set the workload before the guard sizes "
	                    "(--guard), which it would replace", what);
}

int nccltune_session_set_workload_file(nccltune_session *s, const char *path)
{
	char e[1024];
	size_t len;
	char *text;
	struct workload w;
	int rc = refuse(s, "--workload");

	if (!rc)
		rc = refuse_after_guards(s, "--workload");
	if (rc)
		return rc;
	text = read_option_file(s, "--workload", path, &len);
	if (!text)
		return NCCLTUNE_USAGE;
	rc = workload_parse(text, len, path, &w, e, sizeof e);
	free(text);
	if (rc != 0)
		return session_fail(s, NCCLTUNE_USAGE, "%s", e);
	s->cfg.wl = w;
	s->cfg.workload_set = true;
	return NCCLTUNE_OK;
}

int nccltune_session_set_workload(nccltune_session *s, const char *bytes_list, int ops,
                                  const char *dtype)
{
	char e[512];
	struct workload w;
	int rc = refuse(s, "--bytes");

	if (!rc)
		rc = refuse_after_guards(s, "--bytes");
	if (rc)
		return rc;
	if (workload_from_options(bytes_list, ops, dtype, &w, e, sizeof e) != 0)
		return session_fail(s, NCCLTUNE_USAGE, "%s", e);
	s->cfg.wl = w;
	s->cfg.workload_set = true;
	return NCCLTUNE_OK;
}

/* --compute-us and --window: the workload's server step (tuner/run/workload.h). */
static int set_server_step(nccltune_session *s, const char *what, const char *compute,
                           const char *window)
{
	char e[512];
	int rc = refuse(s, what);

	if (rc)
		return rc;
	if (!(compute || window) ||
	    workload_set_server(&s->cfg.wl, compute, window, e, sizeof e) != 0)
		return session_fail(s, NCCLTUNE_USAGE, "%s", compute || window ? e : "missing value");
	return NCCLTUNE_OK;
}

int nccltune_session_set_compute(nccltune_session *s, const char *spec)
{
	return set_server_step(s, "--compute-us", spec ? spec : "", NULL);
}

int nccltune_session_set_window(nccltune_session *s, const char *kind)
{
	return set_server_step(s, "--window", NULL, kind ? kind : "");
}

int nccltune_session_set_guards(nccltune_session *s, const char *list)
{
	char e[512];
	int rc = refuse(s, "--guard");

	if (rc)
		return rc;
	if (!list || workload_set_guards(&s->cfg.wl, list, e, sizeof e) != 0)
		return session_fail(s, NCCLTUNE_USAGE, "%s", list ? e : "--guard: missing list");
	return NCCLTUNE_OK;
}

int nccltune_session_set_budget(nccltune_session *s, int runs)
{
	int rc = refuse(s, "--budget");

	if (rc)
		return rc;
	if (runs < 2 || runs > 100000)
		return session_fail(s, NCCLTUNE_USAGE, "--budget: %d is not in 2..100000 (the "
		                    "baseline takes one run)", runs);
	s->cfg.budget = runs;
	return NCCLTUNE_OK;
}

int nccltune_session_set_time_limit(nccltune_session *s, double seconds)
{
	int rc = refuse(s, "--time-limit");

	if (rc)
		return rc;
	if (!isfinite(seconds) || seconds < 0)
		return session_fail(s, NCCLTUNE_USAGE, "--time-limit: %g is not a duration",
		                    seconds);
	s->cfg.time_limit_s = seconds;
	return NCCLTUNE_OK;
}

int nccltune_session_set_seed(nccltune_session *s, unsigned long seed)
{
	int rc = refuse(s, "--seed");

	if (rc)
		return rc;
	s->cfg.seed = seed;
	return NCCLTUNE_OK;
}

int nccltune_session_set_strategy(nccltune_session *s, const char *name)
{
	char known[256] = "";
	size_t used = 0;
	int rc = refuse(s, "--strategy");

	if (rc)
		return rc;
	for (size_t i = 0; strategy_names[i]; i++) {
		int k;

		if (name && strcmp(name, strategy_names[i]) == 0) {
			snprintf(s->cfg.strategy_name, sizeof s->cfg.strategy_name, "%s", name);
			return NCCLTUNE_OK;
		}
		k = snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "",
		             strategy_names[i]);
		if (k > 0 && (size_t)k < sizeof known - used)
			used += (size_t)k;
	}
	return session_fail(s, NCCLTUNE_USAGE, "--strategy: unknown strategy '%s' (known: %s)",
	                    name ? name : "", known);
}

int nccltune_session_set_timeout(nccltune_session *s, double seconds)
{
	int rc = refuse(s, "--timeout");

	if (rc)
		return rc;
	if (!isfinite(seconds) || seconds <= 0 || seconds > 86400)
		return session_fail(s, NCCLTUNE_USAGE, "--timeout: %g is not in (0, 86400] seconds",
		                    seconds);
	s->cfg.timeout_opt_s = seconds;
	return NCCLTUNE_OK;
}

int nccltune_session_set_out_dir(nccltune_session *s, const char *dir)
{
	int rc = refuse(s, "--out");

	if (rc)
		return rc;
	if (!dir || !*dir)
		return session_fail(s, NCCLTUNE_USAGE, "--out: empty folder name");
	if (strlen(dir) > PATH_MAX - 64)
		return session_fail(s, NCCLTUNE_USAGE, "--out: folder name too long");
	return set_string(s, &s->cfg.out_dir_opt, dir);
}

int nccltune_session_set_warm_start(nccltune_session *s, const char *session_dir)
{
	char path[PATH_MAX];
	int rc = refuse(s, "--warm-start");

	if (rc)
		return rc;
	if (!session_dir || !*session_dir ||
	    snprintf(path, sizeof path, "%s/journal.jsonl", session_dir) >= (int)sizeof path)
		return session_fail(s, NCCLTUNE_USAGE, "--warm-start: bad folder name");
	if (access(path, R_OK) != 0)
		return session_fail(s, NCCLTUNE_USAGE, "--warm-start: %s: %s (not a session "
		                    "folder?)", path, strerror(errno));
	return set_string(s, &s->cfg.warm_dir, session_dir);
}

/* Room for one more try, or NCCLTUNE_USAGE naming `what`. */
static int tries_room(nccltune_session *s, const char *what)
{
	struct tryconf *nv;

	if (s->cfg.ntries >= TRYCONF_MAX)
		return session_fail(s, NCCLTUNE_USAGE, "%s: more than %d configurations to try",
		                    what, TRYCONF_MAX);
	nv = realloc(s->cfg.tries, (s->cfg.ntries + 1) * sizeof *nv);
	if (!nv)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	s->cfg.tries = nv;
	return NCCLTUNE_OK;
}

int nccltune_session_add_try(nccltune_session *s, const char *config)
{
	char origin[128], e[1024];
	int rc = refuse(s, "--try");

	if (rc)
		return rc;
	rc = tries_room(s, "--try");
	if (rc)
		return rc;
	snprintf(origin, sizeof origin, "--try '%.60s%s'", config ? config : "",
	         config && strlen(config) > 60 ? "..." : "");
	if (tryconf_parse(config, origin, &s->cfg.tries[s->cfg.ntries], e, sizeof e) != 0)
		return session_fail(s, NCCLTUNE_USAGE, "%s", e);
	s->cfg.ntries++;
	return NCCLTUNE_OK;
}

int nccltune_session_add_try_file(nccltune_session *s, const char *path)
{
	char e[1024];
	size_t len, before = s->cfg.ntries;
	char *text;
	int rc = refuse(s, "--try-file");

	if (rc)
		return rc;
	text = fs_read_file(path, 1 << 20, &len, e, sizeof e);
	if (!text)
		return session_fail(s, NCCLTUNE_USAGE, "--try-file: %s", e);
	rc = tryconf_parse_file(text, len, path, &s->cfg.tries, &s->cfg.ntries, TRYCONF_MAX, e,
	                        sizeof e);
	free(text);
	if (rc != 0) {
		/* all or nothing: drop what this file added */
		while (s->cfg.ntries > before)
			tryconf_clear(&s->cfg.tries[--s->cfg.ntries]);
		return session_fail(s, NCCLTUNE_USAGE, "--try-file: %s", e);
	}
	return NCCLTUNE_OK;
}

void nccltune_session_set_progress(nccltune_session *s, FILE *f)
{
	s->out.progress = f;
	s->out.tty = output_tty(f);
	s->out.width = output_width(f);
}

/* Copy key of the results document (result_doc of the summary the session read back)
 * into o (null when absent). */
static bool copy_key(cJSON *o, const cJSON *doc, const char *key)
{
	const cJSON *it = doc ? cJSON_GetObjectItemCaseSensitive(doc, key) : NULL;
	cJSON *c = it ? cJSON_Duplicate(it, true) : cJSON_CreateNull();

	if (!c || !cJSON_AddItemToObject(o, key, c)) {
		cJSON_Delete(c);
		return false;
	}
	return true;
}

/* The keys a script acts on: "shown_faster" (the verdict is "recommended" and the
 * gain's 95% interval lies above 1.00x: the one thing worth installing) and
 * "gain_ci95" (that interval, or null). False when out of memory. */
static bool add_shown_faster(cJSON *o, const cJSON *doc)
{
	const cJSON *v = doc ? cJSON_GetObjectItemCaseSensitive(doc, "verdict") : NULL;
	const cJSON *g = doc ? cJSON_GetObjectItemCaseSensitive(doc, "gain") : NULL;
	const cJSON *ci = g ? cJSON_GetObjectItemCaseSensitive(g, "ci95") : NULL;
	const cJSON *lo = cJSON_GetArraySize(ci) == 2 ? cJSON_GetArrayItem(ci, 0) : NULL;
	bool shown = cJSON_IsString(v) && strcmp(v->valuestring, SUMMARY_VERDICT_OK) == 0 &&
	             cJSON_IsNumber(lo) && lo->valuedouble > 1.0;
	cJSON *c = lo ? cJSON_Duplicate(ci, true) : cJSON_CreateNull();

	if (!c || !cJSON_AddItemToObject(o, "gain_ci95", c)) {
		cJSON_Delete(c);
		return false;
	}
	return cJSON_AddBoolToObject(o, "shown_faster", shown) != NULL;
}

/* The run summary's object: status, error (NULL for null), the folder ("" for null)
 * and the keys of the results document doc (NULL: all null), on one line of out.
 * Returns NCCLTUNE_OK, or NCCLTUNE_ERROR when out of memory or writing failed. */
static int summary_json(int status, const char *error, const char *dir, const cJSON *doc,
                        FILE *out)
{
	static const char *const keys[] = {"verdict", "source", "model", "baseline", "best",
	                                   "gain", "budget_needed", "noise", NULL};
	cJSON *o = cJSON_CreateObject();
	char path[PATH_MAX + 16], *text = NULL;
	int rc = NCCLTUNE_ERROR;

	snprintf(path, sizeof path, "%s/results.json", dir);
	if (!o || !cJSON_AddStringToObject(o, "schema", "nccltune-run/1") ||
	    !cJSON_AddNumberToObject(o, "status", status) ||
	    !(error ? cJSON_AddStringToObject(o, "error", error) : cJSON_AddNullToObject(o, "error")) ||
	    !(dir[0] ? cJSON_AddStringToObject(o, "session", dir)
	             : cJSON_AddNullToObject(o, "session")) ||
	    !(doc ? cJSON_AddStringToObject(o, "results", path) : cJSON_AddNullToObject(o, "results")))
		goto out;
	for (size_t i = 0; keys[i]; i++)
		if (!copy_key(o, doc, keys[i]))
			goto out;
	if (!add_shown_faster(o, doc))
		goto out;
	text = cJSON_PrintUnformatted(o);
	if (text && fprintf(out, "%s\n", text) > 0 && fflush(out) == 0)
		rc = NCCLTUNE_OK;
out:
	free(text);
	cJSON_Delete(o);
	return rc;
}

int nccltune_session_summary_json(const nccltune_session *s, int status, FILE *out)
{
	bool no_error = status == NCCLTUNE_OK || status == NCCLTUNE_NO_CONFIG;
	cJSON *doc = s->run.result ? result_doc(s->run.result) : NULL;
	int rc = NCCLTUNE_ERROR;

	if (!s->run.result || doc)
		rc = summary_json(status, no_error ? NULL : s->err, s->run.dir, doc, out);
	cJSON_Delete(doc);
	return rc;
}

int nccltune_summary_json_error(int status, const char *error, FILE *out)
{
	return summary_json(status, error ? error : "", "", NULL, out);
}

int nccltune_session_run(nccltune_session *s)
{
	struct sigaction sa, old_int, old_term;
	char e[512];
	int rc;

	if (s->started)
		return session_fail(s, NCCLTUNE_USAGE, "the session has already run");
	s->started = true;
	session_signal = 0;
	s->run.cancel = &session_signal;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a blocking call returns EINTR and the loop sees the flag. */
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	s->run.t_start = session_clock();
	/* A probe's descendant that left its process group (setsid, setpgid) is ended
	 * after its run too: the session is a child subreaper while it runs. */
	if (reaper_start(&s->run.reaper, e, sizeof e) != 0)
		session_warn(&s->out, "%s: a probe's process that leaves its process group may "
		             "outlive its run", e);
	rc = s->resumed ? NCCLTUNE_OK : session_prepare_new(s);
	if (rc == NCCLTUNE_OK && s->run.interrupted)
		rc = session_fail(s, NCCLTUNE_INTERRUPTED, "interrupted before the session's "
		                  "journal was written: nothing to resume");
	if (rc == NCCLTUNE_OK)
		rc = session_prepare_common(s);
	if (rc == NCCLTUNE_OK)
		rc = session_loop(s);
	reaper_stop(&s->run.reaper);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return rc;
}
