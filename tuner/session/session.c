/* session.c - a tuning session (the session API of nccltune.h): the loop that ties the
 * space, the strategy, the pruner, the runner and the journal together.
 *
 * Order of a session: fingerprint, baseline (every searched variable unset), the user's
 * own configurations (--try), warm-start candidates, the strategy's suggestions, then
 * the final phase that re-measures the finalists and the tries interleaved with the
 * baseline and picks the winner on those repeats. Every
 * probe run counts against the budget. A run that crashed, hung or printed garbage is
 * run once more to tell a flake from a rule; only the last outcome is learned from.
 *
 * Resuming replays the journal through the same loop: whenever the loop asks for a run
 * that the journal holds (same phase, same point), the recorded outcome is used instead
 * of running the probe, so the strategy sees the same observations in the same order
 * and nothing measured is run again. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "result/result.h"
#include "run/locate.h"
#include "run/runner.h"
#include "session/session_priv.h"

extern char **environ;

/* The one mutable file-scope variable: a signal handler can reach nothing else. Set by
 * SIGINT/SIGTERM while a session runs; the runner polls it to kill the probe in flight. */
static volatile sig_atomic_t session_signal;

static void on_signal(int sig)
{
	session_signal = sig;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int setf(nccltune_session *s, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int setf(nccltune_session *s, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof s->err, fmt, ap);
	va_end(ap);
	return status;
}

double session_elapsed(const nccltune_session *s)
{
	return s->run.t_offset + (s->run.t_start > 0 ? now_s() - s->run.t_start : 0);
}

bool session_is_model(const nccltune_session *s)
{
	return strcmp(s->run.source, "model") == 0;
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
	s->out.tty = isatty(STDERR_FILENO) == 1;
	snprintf(s->run.source, sizeof s->run.source, "measured");
	return s;
}

void nccltune_session_destroy(nccltune_session *s)
{
	if (!s)
		return;
	strategy_destroy(s->run.st);
	prune_destroy(s->run.pr);
	if (s->run.rng)
		gsl_rng_free(s->run.rng);
	journal_close(s->run.jr);
	space_destroy(s->run.sp);
	space_destroy(s->cfg.space_full);
	env_pins_free(&s->run.pins);
	runner_free_argv(s->run.probe_argv);
	cJSON_Delete(s->run.fingerprint);
	cJSON_Delete(s->run.warm);
	for (size_t i = 0; i < s->cfg.ntries; i++)
		tryconf_clear(&s->cfg.tries[i]);
	free(s->cfg.tries);
	free(s->run.runs);
	free(s->run.queue);
	free(s->cfg.probe_cmd);
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
		return setf(s, NCCLTUNE_USAGE, "%s: a resumed session keeps the settings of its journal",
		            what);
	if (s->started)
		return setf(s, NCCLTUNE_USAGE, "%s: the session has already run", what);
	return NCCLTUNE_OK;
}

static int set_string(nccltune_session *s, char **dst, const char *v)
{
	char *c = strdup(v);

	if (!c)
		return setf(s, NCCLTUNE_ERROR, "out of memory");
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
		return setf(s, NCCLTUNE_USAGE, "--probe and --model are exclusive");
	if (runner_split_command(command, &argv, e, sizeof e) != 0)
		return setf(s, NCCLTUNE_USAGE, "--probe: %s", e);
	runner_free_argv(argv);
	return set_string(s, &s->cfg.probe_cmd, command);
}

int nccltune_session_set_model(nccltune_session *s, const char *model)
{
	int rc = refuse(s, "--model");

	if (rc)
		return rc;
	if (s->cfg.probe_cmd)
		return setf(s, NCCLTUNE_USAGE, "--probe and --model are exclusive");
	if (!model || !*model)
		return setf(s, NCCLTUNE_USAGE, "--model: empty name");
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
		setf(s, NCCLTUNE_USAGE, "%s: %s", option, e);
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
		return setf(s, NCCLTUNE_USAGE, "%s", e);
	space_destroy(s->cfg.space_full);
	s->cfg.space_full = sp;
	return set_string(s, &s->cfg.space_file, path);
}

int nccltune_session_set_workload_file(nccltune_session *s, const char *path)
{
	char e[1024];
	size_t len;
	char *text;
	struct workload w;
	int rc = refuse(s, "--workload");

	if (rc)
		return rc;
	text = read_option_file(s, "--workload", path, &len);
	if (!text)
		return NCCLTUNE_USAGE;
	rc = workload_parse(text, len, path, &w, e, sizeof e);
	free(text);
	if (rc != 0)
		return setf(s, NCCLTUNE_USAGE, "%s", e);
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

	if (rc)
		return rc;
	if (workload_from_options(bytes_list, ops, dtype, &w, e, sizeof e) != 0)
		return setf(s, NCCLTUNE_USAGE, "%s", e);
	s->cfg.wl = w;
	s->cfg.workload_set = true;
	return NCCLTUNE_OK;
}

int nccltune_session_set_budget(nccltune_session *s, int runs)
{
	int rc = refuse(s, "--budget");

	if (rc)
		return rc;
	if (runs < 2 || runs > 100000)
		return setf(s, NCCLTUNE_USAGE, "--budget: %d is not in 2..100000 (the baseline "
		            "takes one run)", runs);
	s->cfg.budget = runs;
	return NCCLTUNE_OK;
}

int nccltune_session_set_time_limit(nccltune_session *s, double seconds)
{
	int rc = refuse(s, "--time-limit");

	if (rc)
		return rc;
	if (!isfinite(seconds) || seconds < 0)
		return setf(s, NCCLTUNE_USAGE, "--time-limit: %g is not a duration", seconds);
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
	return setf(s, NCCLTUNE_USAGE, "--strategy: unknown strategy '%s' (known: %s)",
	            name ? name : "", known);
}

int nccltune_session_set_timeout(nccltune_session *s, double seconds)
{
	int rc = refuse(s, "--timeout");

	if (rc)
		return rc;
	if (!isfinite(seconds) || seconds <= 0 || seconds > 86400)
		return setf(s, NCCLTUNE_USAGE, "--timeout: %g is not in (0, 86400] seconds", seconds);
	s->cfg.timeout_opt_s = seconds;
	return NCCLTUNE_OK;
}

int nccltune_session_set_out_dir(nccltune_session *s, const char *dir)
{
	int rc = refuse(s, "--out");

	if (rc)
		return rc;
	if (!dir || !*dir)
		return setf(s, NCCLTUNE_USAGE, "--out: empty folder name");
	if (strlen(dir) > PATH_MAX - 64)
		return setf(s, NCCLTUNE_USAGE, "--out: folder name too long");
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
		return setf(s, NCCLTUNE_USAGE, "--warm-start: bad folder name");
	if (access(path, R_OK) != 0)
		return setf(s, NCCLTUNE_USAGE, "--warm-start: %s: %s (not a session folder?)", path,
		            strerror(errno));
	return set_string(s, &s->cfg.warm_dir, session_dir);
}

/* Room for one more try, or NCCLTUNE_USAGE naming `what`. */
static int tries_room(nccltune_session *s, const char *what)
{
	struct tryconf *nv;

	if (s->cfg.ntries >= TRYCONF_MAX)
		return setf(s, NCCLTUNE_USAGE, "%s: more than %d configurations to try", what,
		            TRYCONF_MAX);
	nv = realloc(s->cfg.tries, (s->cfg.ntries + 1) * sizeof *nv);
	if (!nv)
		return setf(s, NCCLTUNE_ERROR, "out of memory");
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
		return setf(s, NCCLTUNE_USAGE, "%s", e);
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
		return setf(s, NCCLTUNE_USAGE, "--try-file: %s", e);
	rc = tryconf_parse_file(text, len, path, &s->cfg.tries, &s->cfg.ntries, TRYCONF_MAX, e, sizeof e);
	free(text);
	if (rc != 0) {
		/* all or nothing: drop what this file added */
		while (s->cfg.ntries > before)
			tryconf_clear(&s->cfg.tries[--s->cfg.ntries]);
		return setf(s, NCCLTUNE_USAGE, "--try-file: %s", e);
	}
	return NCCLTUNE_OK;
}

void nccltune_session_set_progress(nccltune_session *s, FILE *f)
{
	s->out.progress = f;
	s->out.tty = f && isatty(fileno(f)) == 1;
}

/* ---- preparing a new session ---- */

/* Set the probe's argv to the given words (a NULL ends the list early). */
static int set_argv(nccltune_session *s, const char *a, const char *b, const char *c,
                    const char *d, const char *e)
{
	const char *words[] = {a, b, c, d, e};
	size_t n = sizeof words / sizeof words[0];

	s->run.probe_argv = calloc(n + 1, sizeof *s->run.probe_argv);
	if (!s->run.probe_argv)
		return setf(s, NCCLTUNE_ERROR, "out of memory");
	for (size_t i = 0; i < n && words[i]; i++) {
		s->run.probe_argv[i] = strdup(words[i]);
		if (!s->run.probe_argv[i])
			return setf(s, NCCLTUNE_ERROR, "out of memory");
	}
	return NCCLTUNE_OK;
}

static int resolve_probe(nccltune_session *s)
{
	char path[PATH_MAX], e[2048], seed[32];
	const char *model = s->cfg.model;

	if (s->cfg.probe_cmd) {
		if (runner_split_command(s->cfg.probe_cmd, &s->run.probe_argv, e, sizeof e) != 0)
			return setf(s, NCCLTUNE_USAGE, "--probe: %s", e);
		return NCCLTUNE_OK;
	}
	if (!model) {
		if (locate_gpu_visible()) {
			if (locate_probe(NULL, path, sizeof path, e, sizeof e) != 0)
				return setf(s, NCCLTUNE_ERROR, "a GPU is visible but %s; build the probe "
				            "(meson setup -Dprobe=enabled) or pass --probe CMD or --model NAME",
				            e);
			return set_argv(s, path, NULL, NULL, NULL, NULL);
		}
		model = "pcie-gen5-8gpu";
		s->run.auto_model = true;
		session_progress_note(s, "no GPU visible: tuning the MODEL %s (a stand-in, not a "
		                      "measurement); pass --probe or --model to choose", model);
		if (set_string(s, &s->cfg.model, model) != NCCLTUNE_OK)
			return NCCLTUNE_ERROR;
		model = s->cfg.model;
	}
	if (locate_probe(model, path, sizeof path, e, sizeof e) != 0)
		return setf(s, NCCLTUNE_ERROR, "--model %s: %s", model, e);
	/* The session's seed makes a model session reproducible run for run: the model
	 * probe mixes it with NCCLTUNE_RUN (env_add_run) and the configuration. */
	snprintf(seed, sizeof seed, "%lu", s->cfg.seed);
	if (set_argv(s, path, "--model", model, "--seed", seed) != NCCLTUNE_OK)
		return NCCLTUNE_ERROR;
	snprintf(s->run.source, sizeof s->run.source, "model");
	snprintf(s->run.model_name, sizeof s->run.model_name, "%s", model);
	return NCCLTUNE_OK;
}

static void describe_pins(nccltune_session *s)
{
	for (size_t i = 0; i < s->run.pins.n; i++) {
		const struct env_pin *p = &s->run.pins.v[i];

		session_progress_note(s, "pinned by your environment: %s=%s (%s; never overridden)",
		                      p->name, p->value,
		                      p->searched ? "dropped from the search, kept for every run"
		                                  : "fixed by the space; your value is used");
	}
}

/* Place every try in the space searched (after pins), refusing what cannot be tried
 * and duplicates. Used by new and resumed sessions alike. */
static int resolve_tries(nccltune_session *s)
{
	char e[1024], desc[512];

	for (size_t i = 0; i < s->cfg.ntries; i++) {
		struct tryconf *t = &s->cfg.tries[i];

		if (tryconf_resolve(t, s->run.sp, &s->run.pins, t->origin, e, sizeof e) != 0)
			return setf(s, NCCLTUNE_USAGE, "%s", e);
		for (size_t j = 0; j < i; j++)
			if (tryconf_same(&s->cfg.tries[j], t, space_dims(s->run.sp)))
				return setf(s, NCCLTUNE_USAGE, "%s: the same configuration as %s", t->origin,
				            s->cfg.tries[j].origin);
	}
	for (size_t i = 0; i < s->cfg.ntries && !s->resumed; i++) {
		const struct tryconf *t = &s->cfg.tries[i];

		for (size_t k = 0; k < t->n; k++)
			if (t->pinned[k] && strcmp(env_pins_get(&s->run.pins, t->name[k]), t->value[k]) != 0)
				session_progress_note(s, "try %zu: %s=%s is overridden by your environment's "
				                      "%s=%s (pinned: your values win; unset it to try %s)",
				                      i + 1, t->name[k], t->value[k], t->name[k],
				                      env_pins_get(&s->run.pins, t->name[k]), t->value[k]);
		session_progress_note(s, "try %zu: %s (%s%s%s)", i + 1,
		                      tryconf_describe(t, s->run.sp, desc, sizeof desc),
		                      t->in_space ? "a point of the space: the search learns from it"
		                                  : "outside the space: ",
		                      t->in_space ? "" : t->why,
		                      t->in_space ? "" : "; run with exactly these variables");
	}
	return NCCLTUNE_OK;
}

/* A variable a try sets that the user's environment already sets is pinned like the
 * space's: the user's value wins, and the journal records it. */
static int pin_try_vars(nccltune_session *s)
{
	for (size_t i = 0; i < s->cfg.ntries; i++) {
		for (size_t k = 0; k < s->cfg.tries[i].n; k++) {
			const char *now = getenv(s->cfg.tries[i].name[k]);

			if (now && env_pins_add(&s->run.pins, s->cfg.tries[i].name[k], now) != 0)
				return setf(s, NCCLTUNE_ERROR, "out of memory");
		}
	}
	return NCCLTUNE_OK;
}

static int make_out_dir(nccltune_session *s)
{
	char e[1024], path[PATH_MAX + 32];
	struct stat st;

	if (s->cfg.out_dir_opt) {
		snprintf(s->run.dir, sizeof s->run.dir, "%s", s->cfg.out_dir_opt);
	} else {
		char host[64] = "host", stamp[32];
		time_t t = time(NULL);
		struct tm tm;

		if (gethostname(host, sizeof host) != 0)
			snprintf(host, sizeof host, "host");
		host[sizeof host - 1] = '\0';
		for (char *c = host; *c; c++)
			if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			      (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.'))
				*c = '_';
		gmtime_r(&t, &tm);
		strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
		snprintf(s->run.dir, sizeof s->run.dir, "results/%s-%s", host, stamp);
		for (int i = 2; stat(s->run.dir, &st) == 0 && i < 1000; i++)
			snprintf(s->run.dir, sizeof s->run.dir, "results/%s-%s-%d", host, stamp, i);
	}
	snprintf(path, sizeof path, "%s/journal.jsonl", s->run.dir);
	if (stat(path, &st) == 0)
		return setf(s, NCCLTUNE_USAGE, "%s already holds a session (journal.jsonl): resume "
		            "it with 'nccltune run --resume %s' or choose another --out", s->run.dir,
		            s->run.dir);
	if (fs_mkdirs(s->run.dir, e, sizeof e) != 0)
		return setf(s, NCCLTUNE_ERROR, "--out: %s", e);
	return NCCLTUNE_OK;
}

/* The probe's command line for one run: its argv, then the workload's options. */
static char **probe_command(const nccltune_session *s, const char *extra)
{
	size_t n = 0;
	char **argv;
	int k;

	while (s->run.probe_argv[n])
		n++;
	argv = calloc(n + 12, sizeof *argv);
	if (!argv)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		argv[i] = strdup(s->run.probe_argv[i]);
		if (!argv[i])
			goto fail;
	}
	if (extra) {
		argv[n] = strdup(extra);
		if (!argv[n])
			goto fail;
		return argv;
	}
	k = workload_probe_args(&s->cfg.wl, argv + n, 11);
	if (k < 0)
		goto fail;
	return argv;
fail:
	runner_free_argv(argv);
	return NULL;
}

/* Ask the probe to describe the machine. A probe that cannot be started at all stops
 * the session here, before a single run of the budget is spent on it. */
static int take_fingerprint(nccltune_session *s)
{
	struct runner_request req;
	struct runner_result res;
	char **argv = probe_command(s, "--fingerprint"), **env = NULL, e[512];
	cJSON *fp = NULL;
	int status = NCCLTUNE_OK;

	memset(&res, 0, sizeof res);
	env = env_build(s->run.user_env, s->run.sp, &s->run.pins, NULL, e, sizeof e);
	if (!argv || !env) {
		status = setf(s, NCCLTUNE_ERROR, "out of memory");
		goto out;
	}
	memset(&req, 0, sizeof req);
	req.argv = argv;
	req.envp = env;
	req.timeout_s = s->cfg.timeout_opt_s > 0 ? s->cfg.timeout_opt_s : 120;
	req.cancel = s->run.cancel;
	if (runner_run(&req, &res, e, sizeof e) != 0) {
		status = setf(s, NCCLTUNE_ERROR, "%s", e);
		goto out;
	}
	if (!res.spawned) {
		status = setf(s, NCCLTUNE_ERROR, "cannot start the probe: %s", res.spawn_error);
		goto out;
	}
	if (res.cancelled) {
		s->run.interrupted = true;
		goto out;
	}
	if (!res.timed_out && res.exit_status == 0)
		fp = cJSON_ParseWithLength(res.out, res.out_len);
	if (!cJSON_IsObject(fp)) {
		session_warn(s, "%s --fingerprint gave no fingerprint (%s); "
		                      "continuing without one", s->run.probe_argv[0],
		                      res.timed_out ? "timed out"
		                      : res.exit_status != 0 ? "non-zero exit status" : "not a JSON object");
		cJSON_Delete(fp);
		fp = NULL;
	} else {
		const cJSON *src = cJSON_GetObjectItemCaseSensitive(fp, "source");
		const cJSON *model = cJSON_GetObjectItemCaseSensitive(fp, "model");

		if (cJSON_IsString(src) && strcmp(src->valuestring, "model") == 0) {
			snprintf(s->run.source, sizeof s->run.source, "model");
			if (cJSON_IsString(model))
				snprintf(s->run.model_name, sizeof s->run.model_name, "%s", model->valuestring);
		}
	}
	s->run.fingerprint = fp;
out:
	runner_result_free(&res);
	runner_free_argv(argv);
	env_free(env);
	return status;
}

static int prepare_new(nccltune_session *s)
{
	char e[2048], path[PATH_MAX + 32];
	time_t t = time(NULL);
	struct tm tm;
	cJSON *h;
	int rc;

	s->run.user_env = environ;
	rc = resolve_probe(s);
	if (rc)
		return rc;
	if (!s->cfg.space_full)
		s->cfg.space_full = space_default();
	if (!s->cfg.space_full)
		return setf(s, NCCLTUNE_ERROR, "out of memory");
	if (env_pins_collect(s->run.user_env, s->cfg.space_full, &s->run.pins, e, sizeof e) != 0)
		return setf(s, NCCLTUNE_ERROR, "%s", e);
	if (s->run.pins.n > 0) {
		if (env_space_unpin(s->cfg.space_full, &s->run.pins, &s->run.sp, e, sizeof e) != 0)
			return setf(s, NCCLTUNE_USAGE, "%s", e);
		describe_pins(s);
	} else {
		s->run.sp = s->cfg.space_full;
		s->cfg.space_full = NULL;
	}
	rc = pin_try_vars(s);
	if (rc == NCCLTUNE_OK)
		rc = resolve_tries(s);
	if (rc)
		return rc;
	rc = make_out_dir(s);
	if (rc)
		return rc;
	gmtime_r(&t, &tm);
	strftime(s->run.created, sizeof s->run.created, "%Y-%m-%dT%H:%M:%SZ", &tm);
	rc = take_fingerprint(s);
	if (rc || s->run.interrupted)
		return rc;
	if (s->cfg.warm_dir) {
		rc = session_warm_prepare(s);
		if (rc)
			return rc;
	}
	snprintf(path, sizeof path, "%s/journal.jsonl", s->run.dir);
	s->run.jr = journal_open(path, e, sizeof e);
	if (!s->run.jr)
		return setf(s, NCCLTUNE_ERROR, "%s", e);
	h = session_header_json(s);
	if (!h)
		return setf(s, NCCLTUNE_ERROR, "out of memory");
	rc = journal_append(s->run.jr, h, e, sizeof e);
	cJSON_Delete(h);
	if (rc != 0)
		return setf(s, NCCLTUNE_ERROR, "%s", e);
	return NCCLTUNE_OK;
}

int nccltune_session_resume(nccltune_session *s, const char *dir)
{
	char e[2048], path[PATH_MAX + 32];
	int rc;

	if (s->resumed || s->started)
		return setf(s, NCCLTUNE_USAGE, "--resume: the session is already set up");
	if (!dir || !*dir || strlen(dir) > PATH_MAX - 64)
		return setf(s, NCCLTUNE_USAGE, "--resume: bad folder name");
	rc = session_load_journal(s, dir);
	if (rc)
		return rc;
	s->resumed = true;
	rc = resolve_tries(s);
	if (rc) {
		char e2[sizeof s->err];

		snprintf(e2, sizeof e2, "%s", s->err);
		return setf(s, NCCLTUNE_USAGE, "%s/journal.jsonl: header: %s", dir, e2);
	}
	snprintf(s->run.dir, sizeof s->run.dir, "%s", dir);
	s->run.user_env = environ;
	for (size_t i = 0; i < s->run.pins.n; i++) {
		const char *now = getenv(s->run.pins.v[i].name);

		if (!now || strcmp(now, s->run.pins.v[i].value) != 0)
			session_progress_note(s, "note: %s is %s%s%s in your environment now; the "
			                      "session's recorded value %s is used", s->run.pins.v[i].name,
			                      now ? "'" : "unset", now ? now : "", now ? "'" : "",
			                      s->run.pins.v[i].value);
	}
	for (size_t d = 0; d < space_dims(s->run.sp); d++)
		if (getenv(space_name(s->run.sp, d)))
			session_progress_note(s, "note: %s is set in your environment now, but this "
			                      "session searches it; ignored", space_name(s->run.sp, d));
	if (s->run.nqueue > 0)
		s->run.t_offset = s->run.queue[s->run.nqueue - 1].t_s;
	if (s->run.fingerprint) {
		const cJSON *src = cJSON_GetObjectItemCaseSensitive(s->run.fingerprint, "source");
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(s->run.fingerprint, "model");

		if (cJSON_IsString(src) && strcmp(src->valuestring, "model") == 0) {
			snprintf(s->run.source, sizeof s->run.source, "model");
			if (cJSON_IsString(m))
				snprintf(s->run.model_name, sizeof s->run.model_name, "%s", m->valuestring);
		}
	}
	for (size_t i = 0; i < s->run.nqueue; i++) {
		const struct proto_report *r = &s->run.queue[i].o.report;

		if (s->run.queue[i].o.cls == OUTCOME_OK && r->source[0]) {
			snprintf(s->run.source, sizeof s->run.source, "%s", r->source);
			snprintf(s->run.model_name, sizeof s->run.model_name, "%s", r->model);
			break;
		}
	}
	snprintf(path, sizeof path, "%s/journal.jsonl", dir);
	s->run.jr = journal_open(path, e, sizeof e);
	if (!s->run.jr)
		return setf(s, NCCLTUNE_ERROR, "%s", e);
	session_progress_note(s, "resuming %s: %zu run(s) of %d recorded; they are not run again",
	                      dir, s->run.nqueue, s->cfg.budget);
	return NCCLTUNE_OK;
}

static int prepare_common(nccltune_session *s)
{
	char e[1024];

	gsl_set_error_handler_off();
	s->run.rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (!s->run.rng)
		return setf(s, NCCLTUNE_ERROR, "out of memory");
	gsl_rng_set(s->run.rng, s->cfg.seed);
	s->run.pr = prune_create(s->run.sp, 0);
	if (!s->run.pr)
		return setf(s, NCCLTUNE_ERROR, "out of memory");
	s->run.st = strategy_create(s->cfg.strategy_name, s->run.sp, s->run.rng, s->run.pr, e, sizeof e);
	if (!s->run.st)
		return setf(s, NCCLTUNE_USAGE, "--strategy: %s", e);
	return NCCLTUNE_OK;
}

/* ---- running and replaying ---- */

static int push_run(nccltune_session *s, const struct session_run *r)
{
	if (s->run.nruns == s->run.runs_cap) {
		size_t ncap = s->run.runs_cap ? s->run.runs_cap * 2 : 64;
		struct session_run *nr = realloc(s->run.runs, ncap * sizeof *nr);

		if (!nr)
			return setf(s, NCCLTUNE_ERROR, "out of memory");
		s->run.runs = nr;
		s->run.runs_cap = ncap;
	}
	s->run.runs[s->run.nruns++] = *r;
	return NCCLTUNE_OK;
}

/* Is r a run of the configuration (p, try_no)? A point is a point whoever asked for it
 * (search or try); without a point, try_no tells an off-space try from the baseline. */
bool session_same_config(const struct session_run *r, const struct point *p, size_t try_no,
                         size_t dims)
{
	if (!p)
		return !r->has_point && r->try_no == try_no;
	return r->has_point && point_equal(&r->p, p, dims);
}

static void observe(nccltune_session *s, const struct point *p, const struct outcome *o)
{
	prune_observe(s->run.pr, p, o);
	strategy_observe(s->run.st, p, o);
}

/* The recorded runs no longer match what the loop asks for (a changed strategy, or a
 * journal edited by hand): take the rest as they are, learning from each final
 * outcome, and run live from here on. */
static int diverge(nccltune_session *s)
{
	size_t left = s->run.nqueue - s->run.qpos;

	session_warn(s, "the journal's run %zu is not what this session "
	                      "would run next; the %zu remaining recorded run(s) are taken as "
	                      "they are", s->run.nruns + 1, left);
	for (size_t i = s->run.qpos; i < s->run.nqueue; i++) {
		const struct session_run *r = &s->run.queue[i];
		bool superseded = i + 1 < s->run.nqueue && s->run.queue[i + 1].phase == PHASE_RETRY &&
		                  s->run.queue[i + 1].has_point == r->has_point &&
		                  (!r->has_point || point_equal(&s->run.queue[i + 1].p, &r->p,
		                                                space_dims(s->run.sp)));

		if (push_run(s, r) != NCCLTUNE_OK)
			return NCCLTUNE_ERROR;
		if (r->has_point && !superseded &&
		    (r->phase == PHASE_SEARCH || r->phase == PHASE_WARM || r->phase == PHASE_RETRY ||
		     r->phase == PHASE_TRY))
			observe(s, &r->p, &r->o);
	}
	s->run.qpos = s->run.nqueue;
	return NCCLTUNE_OK;
}

static bool replaying(const nccltune_session *s)
{
	return s->run.qpos < s->run.nqueue;
}

/* Run p (NULL: the baseline, or the off-space try try_no) once in `phase`, or take the
 * journal's record of it when resuming; try_no (1-based, 0: none) marks a try's runs.
 * Returns 0 with *o, NCCLTUNE_INTERRUPTED when interrupted (nothing recorded), or
 * NCCLTUNE_ERROR on a failure of the tuner itself, message in s->err. */
static int execute(nccltune_session *s, enum session_phase phase, const struct point *p,
                   size_t try_no, struct outcome *o)
{
	struct runner_request req;
	struct runner_result res;
	struct session_run run;
	char **argv = NULL, **env = NULL, e[1024];
	cJSON *rec = NULL;
	int status = 0;

	if (replaying(s)) {
		const struct session_run *r = &s->run.queue[s->run.qpos];

		if (r->phase == phase && r->try_no == try_no &&
		    session_same_config(r, p, try_no, space_dims(s->run.sp))) {
			*o = r->o;
			s->run.qpos++;
			return push_run(s, r) == NCCLTUNE_OK ? 0 : NCCLTUNE_ERROR;
		}
		if (diverge(s) != NCCLTUNE_OK)
			return NCCLTUNE_ERROR;
	}
	if (session_signal) {
		s->run.interrupted = true;
		return NCCLTUNE_INTERRUPTED;
	}
	memset(&res, 0, sizeof res);
	memset(&run, 0, sizeof run);
	argv = probe_command(s, NULL);
	env = try_no ? tryconf_env_build(&s->cfg.tries[try_no - 1], s->run.user_env, s->run.sp, &s->run.pins, e,
	                                 sizeof e)
	             : env_build(s->run.user_env, s->run.sp, &s->run.pins, p, e, sizeof e);
	if (!argv || !env || env_add_run(&env, s->run.nruns) != 0) {
		status = setf(s, NCCLTUNE_ERROR, "out of memory building a probe run");
		goto out;
	}
	memset(&req, 0, sizeof req);
	req.argv = argv;
	req.envp = env;
	req.timeout_s = s->run.timeout_s > 0 ? s->run.timeout_s
	              : s->cfg.timeout_opt_s > 0 ? s->cfg.timeout_opt_s : SESSION_BASELINE_TIMEOUT_S;
	req.cancel = s->run.cancel;
	if (runner_run(&req, &res, e, sizeof e) != 0) {
		status = setf(s, NCCLTUNE_ERROR, "%s", e);
		goto out;
	}
	if (res.cancelled) {
		/* Killed by us, not a property of the configuration: never recorded, so a
		 * resumed session simply runs it again. */
		s->run.interrupted = true;
		status = NCCLTUNE_INTERRUPTED;
		goto out;
	}
	runner_classify(&res, o);
	if (o->cls == OUTCOME_OK) {
		double obj;

		if (workload_objective(&s->cfg.wl, &o->report, &obj, e, sizeof e) != 0) {
			o->cls = OUTCOME_GARBAGE;
			fs_errf(o->error, sizeof o->error, "report: %s", e);
		} else {
			o->objective_us = obj;
			snprintf(s->run.source, sizeof s->run.source, "%s", o->report.source);
			if (o->report.model[0])
				snprintf(s->run.model_name, sizeof s->run.model_name, "%s", o->report.model);
		}
	}
	run.phase = phase;
	run.try_no = try_no;
	run.has_point = p != NULL;
	if (p)
		run.p = *p;
	run.o = *o;
	run.t_s = session_elapsed(s);
	rec = session_run_json(s, &run, s->run.nruns, res.out, res.out_len);
	if (!rec) {
		status = setf(s, NCCLTUNE_ERROR, "out of memory recording a run");
		goto out;
	}
	if (journal_append(s->run.jr, rec, e, sizeof e) != 0) {
		status = setf(s, NCCLTUNE_ERROR, "%s", e);
		goto out;
	}
	if (push_run(s, &run) != NCCLTUNE_OK) {
		status = NCCLTUNE_ERROR;
		goto out;
	}
	session_progress_run(s, &s->run.runs[s->run.nruns - 1]);
out:
	cJSON_Delete(rec);
	runner_result_free(&res);
	runner_free_argv(argv);
	env_free(env);
	return status;
}

/* Runs reserved for the final re-measurement: min(12, budget / 5), plus three rounds'
 * worth for each try, but never so many that the baseline and the tries cannot run. */
static int final_reserve(const nccltune_session *s)
{
	int r = s->cfg.budget / SESSION_FINAL_RESERVE_DIV;
	int cap = s->cfg.budget - 1 - (int)s->cfg.ntries;

	if (r > SESSION_FINAL_RESERVE_MAX)
		r = SESSION_FINAL_RESERVE_MAX;
	r += SESSION_TRY_ROUNDS * (int)s->cfg.ntries;
	if (r > cap)
		r = cap;
	return r > 0 ? r : 0;
}

/* Runs the baseline, warm start and search may use. */
static size_t search_limit(const nccltune_session *s)
{
	return (size_t)(s->cfg.budget - final_reserve(s));
}

/* Run once, and once more if the outcome may be a flake; *o is the last outcome. */
static int measure(nccltune_session *s, enum session_phase phase, const struct point *p,
                   size_t try_no, struct outcome *o)
{
	size_t limit = phase == PHASE_BASELINE || phase == PHASE_TRY ? (size_t)s->cfg.budget
	                                                             : search_limit(s);
	int rc = execute(s, phase, p, try_no, o);

	if (rc)
		return rc;
	if (outcome_class_flaky(o->cls) && s->run.nruns < limit) {
		struct outcome *again = malloc(sizeof *again);

		if (!again)
			return setf(s, NCCLTUNE_ERROR, "out of memory");
		rc = execute(s, PHASE_RETRY, p, try_no, again);
		if (rc == 0)
			*o = *again;
		free(again);
	}
	return rc;
}

/* The last outcome learned for p (search, warm or retry), or NULL. */
static const struct outcome *known_outcome(const nccltune_session *s, const struct point *p)
{
	for (size_t i = s->run.nruns; i-- > 0;) {
		const struct session_run *r = &s->run.runs[i];

		if (r->has_point && r->phase != PHASE_FINAL &&
		    point_equal(&r->p, p, space_dims(s->run.sp)))
			return &r->o;
	}
	return NULL;
}

/* Did p ever compute a wrong sum? Such a point is never recommended. */
static bool ever_wrong(const nccltune_session *s, const struct point *p)
{
	for (size_t i = 0; i < s->run.nruns; i++)
		if (s->run.runs[i].has_point && s->run.runs[i].o.cls == OUTCOME_VERIFY &&
		    point_equal(&s->run.runs[i].p, p, space_dims(s->run.sp)))
			return true;
	return false;
}

/* The last outcome of try try_no's own runs (try, retry), or NULL when it never ran. */
static const struct outcome *try_outcome(const nccltune_session *s, size_t try_no)
{
	for (size_t i = s->run.nruns; i-- > 0;) {
		const struct session_run *r = &s->run.runs[i];

		if (r->try_no == try_no && (r->phase == PHASE_TRY || r->phase == PHASE_RETRY))
			return &r->o;
	}
	return NULL;
}

/* Did the configuration (p, try_no) ever compute a wrong sum? */
static bool config_ever_wrong(const nccltune_session *s, const struct point *p, size_t try_no)
{
	for (size_t i = 0; i < s->run.nruns; i++)
		if (s->run.runs[i].o.cls == OUTCOME_VERIFY &&
		    session_same_config(&s->run.runs[i], p, try_no, space_dims(s->run.sp)))
			return true;
	return false;
}

/* The baseline as a point of the space, when every dimension can be left unset. */
static bool baseline_point(const nccltune_session *s, struct point *p)
{
	memset(p, 0, sizeof *p);
	for (size_t d = 0; d < space_dims(s->run.sp); d++) {
		bool found = false;

		for (size_t l = 0; l < space_levels(s->run.sp, d) && !found; l++) {
			if (!space_level_text(s->run.sp, d, l)) {
				p->lv[d] = (uint32_t)l;
				found = true;
			}
		}
		if (!found)
			return false;
	}
	return true;
}

static double mean_wall(const nccltune_session *s)
{
	double sum = 0;
	size_t n = 0;

	for (size_t i = 0; i < s->run.nruns; i++) {
		if (s->run.runs[i].o.cls == OUTCOME_OK) {
			sum += s->run.runs[i].o.wall_s;
			n++;
		}
	}
	return n ? sum / (double)n : 0;
}

/* Should the search stop before the next suggestion? While replaying, the journal
 * says what happened next; live, the budget and the time limit decide. */
static bool search_done(nccltune_session *s)
{
	if (replaying(s)) {
		if (s->run.queue[s->run.qpos].phase != PHASE_FINAL)
			return false;
		/* Why the recorded search ended is not recorded; the likely reason. */
		s->run.stop = s->run.nruns >= search_limit(s) ? STOP_BUDGET
		        : s->cfg.time_limit_s > 0 ? STOP_TIME : STOP_EXHAUSTED;
		return true;
	}
	if (s->run.nruns >= search_limit(s)) {
		s->run.stop = STOP_BUDGET;
		return true;
	}
	if (s->cfg.time_limit_s > 0 &&
	    session_elapsed(s) + mean_wall(s) * (1 + final_reserve(s)) >= s->cfg.time_limit_s) {
		s->run.stop = STOP_TIME;
		return true;
	}
	return false;
}

static int observe_warm_failures(nccltune_session *s)
{
	const cJSON *fails = s->run.warm ? cJSON_GetObjectItemCaseSensitive(s->run.warm, "failures") : NULL;
	const cJSON *f;
	struct outcome *o;

	if (!cJSON_IsArray(fails))
		return NCCLTUNE_OK;
	o = calloc(1, sizeof *o);
	if (!o)
		return setf(s, NCCLTUNE_ERROR, "out of memory");
	cJSON_ArrayForEach(f, fails) {
		const cJSON *pt = cJSON_GetObjectItemCaseSensitive(f, "point");
		const cJSON *cls = cJSON_GetObjectItemCaseSensitive(f, "outcome");
		struct point p;

		if (env_point_levels_from_json(s->run.sp, pt, &p) != 0 || !cJSON_IsString(cls) ||
		    outcome_class_parse(cls->valuestring, &o->cls) != 0 || o->cls == OUTCOME_OK)
			continue;
		o->objective_us = NAN;
		snprintf(o->error, sizeof o->error, "failed in the warm-start session");
		observe(s, &p, o);
	}
	free(o);
	return NCCLTUNE_OK;
}

static int run_warm(nccltune_session *s, struct outcome *o)
{
	const cJSON *cfg = s->run.warm ? cJSON_GetObjectItemCaseSensitive(s->run.warm, "configs") : NULL;
	const cJSON *c;

	if (!cJSON_IsArray(cfg))
		return 0;
	cJSON_ArrayForEach(c, cfg) {
		struct point p;
		int rc;

		if (search_done(s))
			break;
		if (env_point_levels_from_json(s->run.sp, c, &p) != 0 || !space_allows(s->run.sp, &p) ||
		    prune_rejects(s->run.pr, &p) || known_outcome(s, &p))
			continue;
		rc = measure(s, PHASE_WARM, &p, 0, o);
		if (rc)
			return rc;
		observe(s, &p, o);
	}
	return 0;
}

/* The user's own configurations, right after the baseline: each counts against the
 * budget, is retried once on a flake like any run, and teaches the strategy when it is
 * a point of the space. */
static int run_tries(nccltune_session *s, struct outcome *o)
{
	for (size_t i = 0; i < s->cfg.ntries; i++) {
		const struct tryconf *t = &s->cfg.tries[i];
		int rc;

		if (s->run.nruns >= (size_t)s->cfg.budget) {
			session_warn(s, "the budget is spent: %zu configuration(s) "
			                      "of --try not run", s->cfg.ntries - i);
			break;
		}
		rc = measure(s, PHASE_TRY, t->in_space ? &t->p : NULL, i + 1, o);
		if (rc)
			return rc;
		if (t->in_space)
			observe(s, &t->p, o);
	}
	return 0;
}

static int run_search(nccltune_session *s, struct outcome *o)
{
	char e[1024];

	while (!search_done(s)) {
		struct point p;
		const struct outcome *k;
		int rc = strategy_suggest(s->run.st, &p, e, sizeof e);

		if (rc == 1) {
			s->run.stop = STOP_EXHAUSTED;
			break;
		}
		if (rc != 0)
			return setf(s, NCCLTUNE_ERROR, "strategy %s: %s", s->cfg.strategy_name, e);
		k = known_outcome(s, &p);
		if (k) {
			/* Nothing is measured twice in the search: tell the strategy again. */
			struct outcome copy = *k;

			observe(s, &p, &copy);
			if (++s->run.duplicates >= SESSION_MAX_DUPLICATES) {
				s->run.stop = STOP_STUCK;
				break;
			}
			continue;
		}
		s->run.duplicates = 0;
		rc = measure(s, PHASE_SEARCH, &p, 0, o);
		if (rc)
			return rc;
		observe(s, &p, o);
	}
	return 0;
}

/* ---- the final phase and the result ---- */

struct finalist {
	struct point p;
	bool has_point;          /* false: an off-space try */
	size_t try_no;           /* a --try (1-based) in its own slot; 0: a search candidate */
	double search_us;        /* what the search (or the try's own run) measured */
	double *us;              /* per round; NAN where the run failed or did not happen */
	int ok, failed;
	enum outcome_class fail_cls;   /* of the first failed repeat */
	double mean, lo, hi, gain, gain_lo, gain_hi;
	bool qualified;
};

struct final_state {
	struct finalist *c;
	size_t nc;               /* candidates (ranked), of which k are finalists */
	size_t k, rounds;
	struct finalist *t;      /* tries re-measured in a slot of their own */
	size_t nt;
	struct finalist **of_try;  /* per --try: its slot, or the finalist it is; NULL: none */
	double *base_us;         /* per round */
	int base_ok;
};

static void final_free(struct final_state *f)
{
	for (size_t i = 0; i < f->nc; i++)
		free(f->c[i].us);
	for (size_t i = 0; i < f->nt; i++)
		free(f->t[i].us);
	free(f->c);
	free(f->t);
	free(f->of_try);
	free(f->base_us);
	memset(f, 0, sizeof *f);
}

static int cmp_search(const void *a, const void *b)
{
	const struct finalist *x = a, *y = b;

	return (x->search_us > y->search_us) - (x->search_us < y->search_us);
}

/* The configurations that may be recommended, best measured first. */
/* Put the candidates the strategy ranks first, in its order, the rest after them in
 * measured order. bo ranks by the GP's posterior mean, which weighs one lucky
 * measurement against its neighbours and repeats: finalists chosen that way suffer less
 * from the winner's curse than the best single runs (results/bench-2026-11-29.md). */
static int order_by_strategy(nccltune_session *s, struct final_state *f)
{
	size_t dims = space_dims(s->run.sp), count = 0, n = 0;
	struct point *pts = NULL;
	double *est = NULL;
	struct finalist *sorted = NULL;
	bool *moved = NULL;
	int rc = NCCLTUNE_OK;

	if (f->nc < 2)
		return NCCLTUNE_OK;
	pts = calloc(f->nc, sizeof *pts);
	est = calloc(f->nc, sizeof *est);
	sorted = calloc(f->nc, sizeof *sorted);
	moved = calloc(f->nc, sizeof *moved);
	if (!pts || !est || !sorted || !moved ||
	    strategy_rank(s->run.st, pts, est, f->nc, &count) != 0) {
		rc = setf(s, NCCLTUNE_ERROR, "out of memory ranking the finalists");
		goto out;
	}
	for (size_t i = 0; i < count; i++) {
		for (size_t j = 0; j < f->nc; j++) {
			if (!moved[j] && point_equal(&f->c[j].p, &pts[i], dims)) {
				sorted[n++] = f->c[j];
				moved[j] = true;
				break;
			}
		}
	}
	for (size_t j = 0; j < f->nc; j++)
		if (!moved[j])
			sorted[n++] = f->c[j];
	memcpy(f->c, sorted, f->nc * sizeof *f->c);
out:
	free(pts);
	free(est);
	free(sorted);
	free(moved);
	return rc;
}

static int rank_candidates(nccltune_session *s, struct final_state *f)
{
	struct point base;
	bool has_base = baseline_point(s, &base);
	size_t dims = space_dims(s->run.sp);

	f->c = calloc(s->run.nruns + 1, sizeof *f->c);
	if (!f->c)
		return setf(s, NCCLTUNE_ERROR, "out of memory");
	for (size_t i = 0; i < s->run.nruns; i++) {
		const struct session_run *r = &s->run.runs[i];
		const struct outcome *last;
		bool seen = false;

		if (!r->has_point || r->phase == PHASE_FINAL)
			continue;
		for (size_t j = 0; j < f->nc && !seen; j++)
			seen = point_equal(&f->c[j].p, &r->p, dims);
		if (seen || (has_base && point_equal(&base, &r->p, dims)))
			continue;
		last = known_outcome(s, &r->p);
		if (!last || last->cls != OUTCOME_OK || ever_wrong(s, &r->p) ||
		    prune_suspect(s->run.pr, &r->p) || prune_rejects(s->run.pr, &r->p))
			continue;
		f->c[f->nc].p = r->p;
		f->c[f->nc].has_point = true;
		f->c[f->nc].search_us = last->objective_us;
		f->nc++;
	}
	/* qsort is not stable; candidates enter in run order and equal objectives are
	 * rare, but make the order total anyway by comparing run order last. */
	qsort(f->c, f->nc, sizeof *f->c, cmp_search);
	return order_by_strategy(s, f);
}

static const struct outcome *baseline_outcome(const nccltune_session *s)
{
	const struct outcome *o = NULL;

	for (size_t i = 0; i < s->run.nruns; i++)
		if (!s->run.runs[i].has_point && s->run.runs[i].try_no == 0 &&
		    (s->run.runs[i].phase == PHASE_BASELINE || s->run.runs[i].phase == PHASE_RETRY))
			o = &s->run.runs[i].o;
	return o;
}

/* Did try try_no run ok (its last own outcome), without ever giving a wrong sum? */
static const struct outcome *try_ok(const nccltune_session *s, size_t try_no)
{
	const struct tryconf *t = &s->cfg.tries[try_no - 1];
	const struct outcome *o = try_outcome(s, try_no);

	if (!o || o->cls != OUTCOME_OK ||
	    config_ever_wrong(s, t->in_space ? &t->p : NULL, try_no))
		return NULL;
	return o;
}

/* Give every try that ran ok a place in the final rounds: the finalist it is, when it
 * is one of the first k candidates, else a slot of its own. */
static int place_tries(nccltune_session *s, struct final_state *f)
{
	f->of_try = calloc(s->cfg.ntries + 1, sizeof *f->of_try);
	f->t = calloc(s->cfg.ntries + 1, sizeof *f->t);
	if (!f->of_try || !f->t)
		return setf(s, NCCLTUNE_ERROR, "out of memory");
	for (size_t i = 0; i < s->cfg.ntries; i++) {
		const struct tryconf *t = &s->cfg.tries[i];
		const struct outcome *o = try_ok(s, i + 1);
		struct finalist *x;

		if (!o)
			continue;
		for (size_t j = 0; j < f->k && t->in_space && !f->of_try[i]; j++)
			if (point_equal(&f->c[j].p, &t->p, space_dims(s->run.sp)))
				f->of_try[i] = &f->c[j];
		if (f->of_try[i])
			continue;
		x = &f->t[f->nt++];
		x->has_point = t->in_space;
		x->p = t->p;
		x->try_no = i + 1;
		x->search_us = o->objective_us;
		f->of_try[i] = x;
	}
	return NCCLTUNE_OK;
}

/* The finalist or try slot at rotation position j. */
static struct finalist *final_entry(struct final_state *f, size_t j)
{
	return j < f->k ? &f->c[j] : &f->t[j - f->k];
}

static int run_final(nccltune_session *s, struct final_state *f)
{
	size_t remaining = s->run.nruns < (size_t)s->cfg.budget ? (size_t)s->cfg.budget - s->run.nruns : 0;
	size_t R = (size_t)final_reserve(s), per, ne, tries_ok = 0;
	const struct outcome *b = baseline_outcome(s);
	struct outcome *o;
	bool out_of_time = false;
	int rc = 0;

	if (R > remaining)
		R = remaining;
	f->base_ok = b && b->cls == OUTCOME_OK;
	f->k = f->nc < SESSION_FINALISTS ? f->nc : SESSION_FINALISTS;
	for (size_t i = 0; i < s->cfg.ntries; i++)
		tries_ok += try_ok(s, i + 1) != NULL;
	per = f->k + tries_ok + (size_t)f->base_ok;
	f->rounds = per ? R / per : 0;
	if (f->rounds < 2 && f->k > 1) {
		/* Two rounds of fewer finalists beat one round of more: an interval needs two.
		 * The user's tries always stay. */
		size_t fixed = (size_t)f->base_ok + tries_ok;
		size_t k = R / 2 > fixed ? R / 2 - fixed : 1;

		f->k = k < f->k ? k : f->k;
	}
	rc = place_tries(s, f);
	if (rc)
		return rc;
	ne = f->k + f->nt;
	if (ne == 0) {
		/* nothing to re-measure: no rounds, so nothing reads the per-round arrays */
		f->rounds = 0;
		return 0;
	}
	per = ne + (size_t)f->base_ok;
	f->rounds = R / per;
	if (f->rounds == 0)
		return 0;
	f->base_us = malloc(f->rounds * sizeof *f->base_us);
	o = malloc(sizeof *o);
	if (!f->base_us || !o) {
		free(o);
		return setf(s, NCCLTUNE_ERROR, "out of memory");
	}
	for (size_t r = 0; r < f->rounds; r++)
		f->base_us[r] = NAN;
	for (size_t j = 0; j < ne; j++) {
		struct finalist *x = final_entry(f, j);

		x->us = malloc(f->rounds * sizeof *x->us);
		if (!x->us) {
			free(o);
			return setf(s, NCCLTUNE_ERROR, "out of memory");
		}
		for (size_t r = 0; r < f->rounds; r++)
			x->us[r] = NAN;
	}
	if (!replaying(s))
		session_progress_note(s, "final: re-measuring %zu finalist(s) and %zu more of your "
		                      "--try %zu time(s) each, interleaved with the baseline", f->k,
		                      f->nt, f->rounds);
	for (size_t r = 0; r < f->rounds && rc == 0 && !out_of_time; r++) {
		for (size_t j = 0; j < per; j++) {
			/* Rotating the entries' order spreads drift over all of them. */
			bool is_base = f->base_ok && j == 0;
			struct finalist *c = is_base ? NULL
			                   : final_entry(f, (j - (size_t)f->base_ok + r) % ne);

			if (!replaying(s) && (s->run.nruns >= (size_t)s->cfg.budget ||
			    (s->cfg.time_limit_s > 0 && session_elapsed(s) >= s->cfg.time_limit_s))) {
				if (s->run.stop == STOP_NONE)
					s->run.stop = STOP_TIME;
				out_of_time = true;
				break;
			}
			rc = execute(s, PHASE_FINAL, c && c->has_point ? &c->p : NULL, c ? c->try_no : 0,
			             o);
			if (rc)
				break;
			if (is_base) {
				f->base_us[r] = o->cls == OUTCOME_OK ? o->objective_us : NAN;
			} else if (o->cls == OUTCOME_OK) {
				c->us[r] = o->objective_us;
				c->ok++;
			} else {
				if (c->failed == 0)
					c->fail_cls = o->cls;
				c->failed++;
				if (o->cls == OUTCOME_VERIFY && c->has_point)
					prune_observe(s->run.pr, &c->p, o);
			}
		}
	}
	free(o);
	return rc;
}

/* Mean and interval of the non-NAN entries of x. Returns how many there were. */
static size_t finite_stats(const double *x, size_t n, double *mean, double *lo, double *hi)
{
	double *v = malloc((n ? n : 1) * sizeof *v);
	size_t m = 0;

	*mean = *lo = *hi = NAN;
	if (!v)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isnan(x[i]))
			v[m++] = x[i];
	if (m)
		result_mean_ci(v, m, mean, lo, hi);
	free(v);
	return m;
}

/* Paired ratio of a over b, exp(mean log(a_r / b_r)), over the rounds where both ran.
 * Returns how many rounds that was (0: ratio NAN). */
static size_t paired_ratio(const double *a, const double *b, size_t rounds, double *ratio,
                           double *lo, double *hi)
{
	double *x = malloc((rounds ? rounds : 1) * sizeof *x);
	double *y = malloc((rounds ? rounds : 1) * sizeof *y);
	size_t n = 0;

	*ratio = *lo = *hi = NAN;
	for (size_t r = 0; x && y && a && b && r < rounds; r++) {
		if (!isnan(a[r]) && !isnan(b[r]) && a[r] > 0 && b[r] > 0) {
			x[n] = a[r];
			y[n++] = b[r];
		}
	}
	if (n > 0)
		result_paired_gain(x, y, n, ratio, lo, hi);
	free(x);
	free(y);
	return n;
}

static void score_one(nccltune_session *s, struct final_state *f, struct finalist *x)
{
	x->gain = x->gain_lo = x->gain_hi = NAN;
	finite_stats(x->us, f->rounds, &x->mean, &x->lo, &x->hi);
	x->qualified = x->ok > 0 && x->failed == 0 &&
	               !config_ever_wrong(s, x->has_point ? &x->p : NULL, x->try_no) &&
	               !(x->has_point && prune_suspect(s->run.pr, &x->p));
	paired_ratio(f->base_us, x->us, f->rounds, &x->gain, &x->gain_lo, &x->gain_hi);
}

static void score_finalists(nccltune_session *s, struct final_state *f)
{
	for (size_t j = 0; j < f->k + f->nt && f->rounds; j++)
		score_one(s, f, final_entry(f, j));
}

/* Is q a final-phase run that worked, of the same configuration as r? */
static bool same_final_ok(const nccltune_session *s, const struct session_run *q,
                          const struct session_run *r)
{
	return q->phase == PHASE_FINAL && q->o.cls == OUTCOME_OK &&
	       session_same_config(q, r->has_point ? &r->p : NULL, r->try_no, space_dims(s->run.sp));
}

/* How much one run varies: the pooled standard deviation of log(objective) over the
 * configurations the final phase re-measured (baseline, finalists, tries), each about
 * its own mean. Returns false when the repeats give fewer than 2 degrees of freedom. */
static bool final_noise(const nccltune_session *s, double *sd, int *configs, int *dof)
{
	size_t groups = 0, df = 0;
	double ss = 0;

	for (size_t i = 0; i < s->run.nruns; i++) {
		const struct session_run *r = &s->run.runs[i];
		double sum = 0, mean;
		size_t n = 0;
		bool seen = false;

		if (r->phase != PHASE_FINAL || r->o.cls != OUTCOME_OK)
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = same_final_ok(s, &s->run.runs[j], r);
		if (seen)
			continue;   /* counted with the first run of its configuration */
		for (size_t j = i; j < s->run.nruns; j++)
			if (same_final_ok(s, &s->run.runs[j], r)) {
				sum += log(s->run.runs[j].o.objective_us);
				n++;
			}
		mean = sum / (double)n;
		for (size_t j = i; j < s->run.nruns; j++)
			if (same_final_ok(s, &s->run.runs[j], r))
				ss += pow(log(s->run.runs[j].o.objective_us) - mean, 2);
		groups += n > 1;
		df += n - 1;
	}
	if (df < 2)
		return false;
	*sd = sqrt(ss / (double)df);
	*configs = (int)groups;
	*dof = (int)df;
	return true;
}

/* Median over the runs of the configuration (p, try_no) in the final phase, or else in
 * any phase, of each workload size's median latency. */
static size_t per_size(const nccltune_session *s, const struct point *p, size_t try_no,
                       struct result_size *out)
{
	bool use_final = false;
	size_t n = 0;

	for (size_t i = 0; i < s->run.nruns && !use_final; i++)
		use_final = s->run.runs[i].phase == PHASE_FINAL && s->run.runs[i].o.cls == OUTCOME_OK &&
		            session_same_config(&s->run.runs[i], p, try_no, space_dims(s->run.sp));
	for (size_t w = 0; w < s->cfg.wl.n; w++) {
		double v[256];
		size_t m = 0;

		for (size_t i = 0; i < s->run.nruns && m < 256; i++) {
			const struct session_run *r = &s->run.runs[i];

			if (r->o.cls != OUTCOME_OK ||
			    !session_same_config(r, p, try_no, space_dims(s->run.sp)) ||
			    (use_final && r->phase != PHASE_FINAL))
				continue;
			for (size_t j = 0; j < r->o.report.nresults; j++)
				if (r->o.report.results[j].bytes == s->cfg.wl.e[w].bytes)
					v[m++] = r->o.report.results[j].us.median;
		}
		if (m == 0)
			continue;
		for (size_t a = 1; a < m; a++)
			for (size_t b2 = a; b2 > 0 && v[b2 - 1] > v[b2]; b2--) {
				double t = v[b2];

				v[b2] = v[b2 - 1];
				v[b2 - 1] = t;
			}
		out[n].bytes = s->cfg.wl.e[w].bytes;
		out[n].us = m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
		n++;
	}
	return n;
}

/* What run r sets, as an env object; NULL when out of memory. */
static cJSON *session_env_json(const nccltune_session *s, const struct session_run *r)
{
	if (r->try_no && !r->has_point)
		return tryconf_env_json(&s->cfg.tries[r->try_no - 1], s->run.sp);
	return env_point_to_json(s->run.sp, r->has_point ? &r->p : NULL);
}

char *session_run_describe(const nccltune_session *s, const struct session_run *r, char *buf,
                           size_t len)
{
	if (r->try_no && !r->has_point)
		return tryconf_describe(&s->cfg.tries[r->try_no - 1], s->run.sp, buf, len);
	if (r->has_point)
		return space_point_describe(s->run.sp, &r->p, buf, len);
	if (len)
		buf[0] = '\0';
	return buf;
}

/* Failures grouped by configuration and class, as results.json lists them. */
static cJSON *failures_json(const nccltune_session *s)
{
	cJSON *arr = cJSON_CreateArray();
	bool *done = calloc(s->run.nruns + 1, sizeof *done);

	if (!arr || !done)
		goto fail;
	for (size_t i = 0; i < s->run.nruns; i++) {
		const struct session_run *r = &s->run.runs[i];
		cJSON *f;
		int count = 0;

		if (done[i] || r->o.cls == OUTCOME_OK)
			continue;
		for (size_t j = i; j < s->run.nruns; j++) {
			const struct session_run *q = &s->run.runs[j];

			if (!done[j] && q->o.cls == r->o.cls &&
			    session_same_config(q, r->has_point ? &r->p : NULL, r->try_no,
			                        space_dims(s->run.sp))) {
				done[j] = true;
				count++;
			}
		}
		f = cJSON_CreateObject();
		if (!f || !cJSON_AddItemToArray(arr, f)) {
			cJSON_Delete(f);
			goto fail;
		}
		if (!cJSON_AddItemToObject(f, "env", session_env_json(s, r)) ||
		    !cJSON_AddStringToObject(f, "stage", outcome_class_name(r->o.cls)) ||
		    !cJSON_AddNumberToObject(f, "count", count))
			goto fail;
	}
	free(done);
	return arr;
fail:
	free(done);
	cJSON_Delete(arr);
	return NULL;
}

/* NAME: "level", or NAME: null for an unset level, into `when`. */
static bool add_level(cJSON *when, const space *sp, size_t dim, size_t level)
{
	const char *v = space_level_text(sp, dim, level);

	return v ? cJSON_AddStringToObject(when, space_name(sp, dim), v) != NULL
	         : cJSON_AddNullToObject(when, space_name(sp, dim)) != NULL;
}

static cJSON *pruned_json(const nccltune_session *s)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; arr && i < prune_rule_count(s->run.pr); i++) {
		const struct prune_rule *rule = prune_rule_at(s->run.pr, i);
		cJSON *o = cJSON_CreateObject(), *when;

		if (!o || !cJSON_AddItemToArray(arr, o)) {
			cJSON_Delete(o);
			goto fail;
		}
		when = cJSON_AddObjectToObject(o, "when");
		if (!when || !add_level(when, s->run.sp, rule->dim, rule->level) ||
		    (rule->pair && !add_level(when, s->run.sp, rule->dim2, rule->level2)) ||
		    !cJSON_AddStringToObject(o, "reason", rule->text))
			goto fail;
	}
	return arr;
fail:
	cJSON_Delete(arr);
	return NULL;
}

/* {"ratio": r, "ci95": [lo, hi]} (no interval when lo/hi are NAN) under key. */
static bool add_ratio(cJSON *o, const char *key, double r, double lo, double hi)
{
	cJSON *g = cJSON_AddObjectToObject(o, key);

	if (!g || !cJSON_AddNumberToObject(g, "ratio", round(r * 1e4) / 1e4))
		return false;
	if (!isnan(lo) && !isnan(hi)) {
		double v[2] = {round(lo * 1e4) / 1e4, round(hi * 1e4) / 1e4};
		cJSON *ci = cJSON_CreateDoubleArray(v, 2);

		if (!ci || !cJSON_AddItemToObject(g, "ci95", ci)) {
			cJSON_Delete(ci);
			return false;
		}
	}
	return true;
}

/* One --try in results.json: what it sets, how it ended, and its speed against the
 * baseline and the tuned best from the same final rounds (or, without them, from its
 * single run). `win` is the best's entry (NULL: the baseline is the best, or none). */
static cJSON *try_json(const nccltune_session *s, const struct final_state *f, size_t i,
                       const struct finalist *win, double best_us, double base_us)
{
	const struct tryconf *t = &s->cfg.tries[i];
	const struct outcome *own = try_outcome(s, i + 1);
	const struct finalist *x = f->of_try ? f->of_try[i] : NULL;
	const char *outcome = "ok";
	double mean = NAN, lo = NAN, hi = NAN, r = NAN, rlo = NAN, rhi = NAN;
	double tr = NAN, tlo = NAN, thi = NAN;
	int repeats = 0;
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	if (!own)
		outcome = "not_run";
	else if (own->cls != OUTCOME_OK)
		outcome = outcome_class_name(own->cls);
	else if (x && x->failed)
		outcome = outcome_class_name(x->fail_cls);
	else if (config_ever_wrong(s, t->in_space ? &t->p : NULL, i + 1))
		outcome = outcome_class_name(OUTCOME_VERIFY);
	if (x && f->rounds && x->ok > 0) {
		mean = x->mean;
		lo = x->lo;
		hi = x->hi;
		repeats = x->ok;
		r = x->gain;
		rlo = x->gain_lo;
		rhi = x->gain_hi;
		if (x == win)
			tr = 1.0;
		else
			paired_ratio(x->us, win ? win->us : f->base_us, f->rounds, &tr, &tlo, &thi);
	} else if (own && own->cls == OUTCOME_OK) {
		mean = own->objective_us;
		repeats = 1;
		r = base_us / mean;
		tr = x && x == win ? 1.0 : mean / best_us;
	}
	if (!cJSON_AddItemToObject(o, "env", tryconf_env_json(t, s->run.sp)) ||
	    !cJSON_AddBoolToObject(o, "in_space", t->in_space) ||
	    !cJSON_AddStringToObject(o, "outcome", outcome))
		goto fail;
	if (repeats > 0) {
		if (!cJSON_AddNumberToObject(o, "objective_us", round(mean * 1e4) / 1e4))
			goto fail;
		if (!isnan(lo) && !isnan(hi)) {
			double v[2] = {round(fmax(0.0, lo) * 1e4) / 1e4, round(hi * 1e4) / 1e4};
			cJSON *ci = cJSON_CreateDoubleArray(v, 2);

			if (!ci || !cJSON_AddItemToObject(o, "ci95_us", ci)) {
				cJSON_Delete(ci);
				goto fail;
			}
		}
		if (!cJSON_AddNumberToObject(o, "repeats", repeats))
			goto fail;
		if (isfinite(r) && !add_ratio(o, "ratio_vs_baseline", r, rlo, rhi))
			goto fail;
		if (isfinite(tr) && !add_ratio(o, "tuned_vs_try", tr, tlo, thi))
			goto fail;
	}
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

static cJSON *tries_json(const nccltune_session *s, const struct final_state *f,
                         const struct finalist *win, double best_us, double base_us)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; arr && i < s->cfg.ntries; i++) {
		cJSON *t = try_json(s, f, i, win, best_us, base_us);

		if (!t || !cJSON_AddItemToArray(arr, t)) {
			cJSON_Delete(t);
			cJSON_Delete(arr);
			return NULL;
		}
	}
	return arr;
}

/* Build and write results.json; *best_found tells whether a configuration worked. */
static int write_results(nccltune_session *s, struct final_state *f, cJSON **doc_out)
{
	struct result_input in;
	struct result_config *top = NULL;
	struct result_size sizes[WORKLOAD_MAX_ENTRIES];
	const struct outcome *b = baseline_outcome(s);
	struct finalist *win = NULL;
	cJSON *wl = NULL, *pins = NULL, *fails = NULL, *pruned = NULL, *best_env = NULL, *doc = NULL;
	cJSON *empty = NULL, **top_env = NULL;
	double bmean = NAN, blo = NAN, bhi = NAN;
	size_t nb = 0, ntop = 0;
	char e[1024];
	int status = NCCLTUNE_ERROR;

	memset(&in, 0, sizeof in);
	score_finalists(s, f);
	if (f->rounds && f->base_ok)
		nb = finite_stats(f->base_us, f->rounds, &bmean, &blo, &bhi);
	if (nb == 0 && b && b->cls == OUTCOME_OK) {
		bmean = b->objective_us;
		nb = 1;
	}
	/* The winner: a clean finalist or try with the best paired gain (or mean without a
	 * baseline); without a final phase, the best candidate of the search or a try. An
	 * off-space try that wins is the best like any other: its variables are best.env. */
	for (size_t j = 0; j < f->k + f->nt && f->rounds; j++) {
		struct finalist *x = final_entry(f, j);

		if (!x->qualified)
			continue;
		if (!win || (!isnan(x->gain) && !isnan(win->gain) ? x->gain > win->gain
		                                                   : x->mean < win->mean))
			win = x;
	}
	if (!f->rounds && f->k + f->nt > 0) {
		for (size_t j = 0; j < f->k + f->nt; j++) {
			/* f->k is 0 or more; without a final, c[0] is the search's best */
			struct finalist *x = final_entry(f, j);

			if (!win || x->search_us < win->search_us)
				win = x;
		}
		win->mean = win->search_us;
		win->lo = win->hi = NAN;
		win->ok = 1;
		win->gain = nb ? bmean / win->mean : NAN;
		win->gain_lo = win->gain_hi = NAN;
	}
	wl = workload_to_json(&s->cfg.wl);
	pins = env_pins_to_json(&s->run.pins);
	fails = failures_json(s);
	pruned = pruned_json(s);
	empty = cJSON_CreateObject();
	top = calloc(f->nc + 1, sizeof *top);
	top_env = calloc(f->nc + 1, sizeof *top_env);
	if (!wl || !pins || !fails || !pruned || !empty || !top || !top_env) {
		setf(s, NCCLTUNE_ERROR, "out of memory");
		goto out;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(wl, "iters");
	cJSON_DeleteItemFromObjectCaseSensitive(wl, "warmup");
	in.created = s->run.created;
	in.fingerprint = s->run.fingerprint;
	in.source = s->run.source;
	in.model = s->run.model_name[0] ? s->run.model_name : s->cfg.model;
	in.workload = wl;
	in.strategy = s->cfg.strategy_name;
	in.seed = s->cfg.seed;
	in.budget = s->cfg.budget;
	in.pinned = pins;
	in.evaluations = (int)s->run.nruns;
	in.failures = fails;
	in.pruned = pruned;
	in.gain_lo = in.gain_hi = NAN;
	in.has_noise = final_noise(s, &in.noise_sd, &in.noise_configs, &in.noise_dof);
	if (nb) {
		in.has_baseline = true;
		in.baseline.env = empty;
		in.baseline.objective_us = bmean;
		in.baseline.ci_lo = blo;
		in.baseline.ci_hi = bhi;
		in.baseline.repeats = (int)nb;
	}
	if (win && (!nb || isnan(win->gain) || win->gain > 1.0)) {
		best_env = win->has_point ? env_point_to_json(s->run.sp, &win->p)
		                          : tryconf_env_json(&s->cfg.tries[win->try_no - 1], s->run.sp);
		if (!best_env) {
			setf(s, NCCLTUNE_ERROR, "out of memory");
			goto out;
		}
		in.has_best = true;
		in.best.env = best_env;
		in.best.objective_us = win->mean;
		in.best.ci_lo = win->lo;
		in.best.ci_hi = win->hi;
		in.best.repeats = win->ok;
		in.nsizes = per_size(s, win->has_point ? &win->p : NULL, win->try_no, sizes);
		in.sizes = sizes;
		if (!isnan(win->gain)) {
			in.has_gain = true;
			in.gain = win->gain;
			in.gain_lo = win->gain_lo;
			in.gain_hi = win->gain_hi;
		}
	} else if (nb) {
		/* Nothing beat NCCL's defaults: recommend setting nothing. */
		in.has_best = true;
		in.best = in.baseline;
		in.nsizes = per_size(s, NULL, 0, sizes);
		win = NULL;   /* the baseline is the best */
		in.sizes = sizes;
		in.has_gain = true;
		in.gain = 1.0;
	}
	/* Finalists first (ranked on their repeats), then the rest of the search's best. */
	for (size_t j = 0; j < f->k && f->rounds; j++) {
		struct finalist *x = &f->c[j];

		if (!x->qualified)
			continue;
		top_env[ntop] = env_point_to_json(s->run.sp, &x->p);
		top[ntop].env = top_env[ntop];
		top[ntop].objective_us = x->mean;
		top[ntop].ci_lo = x->lo;
		top[ntop].ci_hi = x->hi;
		top[ntop].repeats = x->ok;
		ntop++;
	}
	for (size_t a = 1; a < ntop; a++)
		for (size_t c = a; c > 0 && top[c - 1].objective_us > top[c].objective_us; c--) {
			struct result_config t = top[c];

			top[c] = top[c - 1];
			top[c - 1] = t;
		}
	for (size_t j = f->rounds ? f->k : 0; j < f->nc && ntop < SESSION_TOP_MAX; j++) {
		top_env[ntop] = env_point_to_json(s->run.sp, &f->c[j].p);
		top[ntop].env = top_env[ntop];
		top[ntop].objective_us = f->c[j].search_us;
		top[ntop].ci_lo = top[ntop].ci_hi = NAN;
		top[ntop].repeats = 1;
		ntop++;
	}
	in.ntop = ntop;
	in.top = top;
	doc = result_build(&in);
	if (!doc || (s->cfg.ntries > 0 &&
	             !cJSON_AddItemToObject(doc, "tries", tries_json(s, f, in.has_best ? win : NULL,
	                                                             in.has_best ? in.best.objective_us
	                                                                         : NAN,
	                                                             nb ? bmean : NAN)))) {
		setf(s, NCCLTUNE_ERROR, "out of memory");
		goto out;
	}
	if (result_write(s->run.dir, doc, e, sizeof e) != 0) {
		setf(s, NCCLTUNE_ERROR, "%s", e);
		goto out;
	}
	*doc_out = doc;
	doc = NULL;
	status = in.has_best ? NCCLTUNE_OK : NCCLTUNE_NO_CONFIG;
out:
	for (size_t i = 0; top_env && i < ntop; i++)
		cJSON_Delete(top_env[i]);
	free(top_env);
	free(top);
	cJSON_Delete(doc);
	cJSON_Delete(best_env);
	cJSON_Delete(empty);
	cJSON_Delete(wl);
	cJSON_Delete(pins);
	cJSON_Delete(fails);
	cJSON_Delete(pruned);
	return status;
}

/* The exports and the report, through the public API the CLI also uses. */
static void write_exports(nccltune_session *s)
{
	char dir[PATH_MAX + 16], path[PATH_MAX + 64], e[1024];

	snprintf(dir, sizeof dir, "%s/exports", s->run.dir);
	if (fs_mkdirs(dir, e, sizeof e) != 0) {
		session_warn(s, "no exports: %s", e);
		return;
	}
	for (size_t i = 0; nccltune_export_formats[i]; i++) {
		const char *fmt = nccltune_export_formats[i], *file = nccltune_export_filename(fmt);
		char *buf = NULL, fallback[128];
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		int rc;

		if (!file) {
			snprintf(fallback, sizeof fallback, "%s.txt", fmt);
			file = fallback;
		}
		if (!f) {
			session_warn(s, "export %s: out of memory", fmt);
			continue;
		}
		rc = nccltune_export(s->run.dir, fmt, f, e, sizeof e);
		if (fclose(f) != 0 && rc == NCCLTUNE_OK) {
			rc = NCCLTUNE_ERROR;
			snprintf(e, sizeof e, "out of memory");
		}
		fs_errf(path, sizeof path, "%s/%s", dir, file);
		if (rc == NCCLTUNE_OK && fs_write_atomic(path, buf, len, 0644, e, sizeof e) != 0)
			rc = NCCLTUNE_ERROR;
		if (rc != NCCLTUNE_OK)
			session_warn(s, "export %s: %s", fmt, e);
		free(buf);
	}
	if (nccltune_report_write(s->run.dir, e, sizeof e) != NCCLTUNE_OK)
		session_warn(s, "report.html: %s", e);
}

static int session_loop(nccltune_session *s)
{
	struct outcome *o = malloc(sizeof *o);
	struct final_state f;
	struct point base;
	cJSON *doc = NULL;
	int rc;

	memset(&f, 0, sizeof f);
	if (!o)
		return setf(s, NCCLTUNE_ERROR, "out of memory");
	rc = observe_warm_failures(s);
	if (rc)
		goto out;
	rc = measure(s, PHASE_BASELINE, NULL, 0, o);
	if (rc)
		goto out;
	if (baseline_point(s, &base))
		observe(s, &base, o);
	if (s->cfg.timeout_opt_s > 0)
		s->run.timeout_s = s->cfg.timeout_opt_s;
	else if (o->cls == OUTCOME_OK)
		s->run.timeout_s = fmax(SESSION_MIN_TIMEOUT_S, SESSION_TIMEOUT_FACTOR * o->wall_s);
	else
		s->run.timeout_s = SESSION_BASELINE_TIMEOUT_S;
	rc = run_tries(s, o);
	if (rc)
		goto out;
	rc = run_warm(s, o);
	if (rc)
		goto out;
	rc = run_search(s, o);
	if (rc)
		goto out;
	rc = rank_candidates(s, &f);
	if (rc)
		goto out;
	rc = run_final(s, &f);
	if (rc)
		goto out;
	if (replaying(s) && diverge(s) != NCCLTUNE_OK) {
		rc = NCCLTUNE_ERROR;
		goto out;
	}
	session_progress_end(s);
	rc = write_results(s, &f, &doc);
	if (rc != NCCLTUNE_OK && rc != NCCLTUNE_NO_CONFIG)
		goto out;
	if (rc == NCCLTUNE_OK)
		write_exports(s);
	session_print_summary(s, doc);
	if (rc == NCCLTUNE_NO_CONFIG)
		setf(s, NCCLTUNE_NO_CONFIG, "no configuration worked, not even NCCL's defaults: see "
		     "%s/journal.jsonl for each run's error", s->run.dir);
out:
	if (rc == NCCLTUNE_INTERRUPTED) {
		session_progress_end(s);
		setf(s, NCCLTUNE_INTERRUPTED, "interrupted; resume with: nccltune run --resume %s",
		     s->run.dir);
	}
	cJSON_Delete(doc);
	final_free(&f);
	free(o);
	return rc;
}

int nccltune_session_run(nccltune_session *s)
{
	struct sigaction sa, old_int, old_term;
	int rc;

	if (s->started)
		return setf(s, NCCLTUNE_USAGE, "the session has already run");
	s->started = true;
	session_signal = 0;
	s->run.cancel = &session_signal;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a blocking call returns EINTR and the loop sees the flag. */
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	s->run.t_start = now_s();
	rc = s->resumed ? NCCLTUNE_OK : prepare_new(s);
	if (rc == NCCLTUNE_OK && s->run.interrupted)
		rc = setf(s, NCCLTUNE_INTERRUPTED, "interrupted before the session's journal was "
		          "written: nothing to resume");
	if (rc == NCCLTUNE_OK)
		rc = prepare_common(s);
	if (rc == NCCLTUNE_OK)
		rc = session_loop(s);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return rc;
}

int session_point_best(const nccltune_session *s, double *best_us, struct point *p)
{
	int found = 0;

	for (size_t i = 0; i < s->run.nruns; i++) {
		const struct session_run *r = &s->run.runs[i];

		if (!r->has_point || r->o.cls != OUTCOME_OK || r->phase == PHASE_FINAL)
			continue;
		if (!found || r->o.objective_us < *best_us) {
			*best_us = r->o.objective_us;
			if (p)
				*p = r->p;
			found = 1;
		}
	}
	return found;
}
