/* prepare.c - getting a session ready to run: for a new one its probe (the GPUs, a
 * model, or --probe; with no GPU visible the default model stands in, loudly), its
 * space less the variables the user's environment pins, its tries, its folder, its
 * fingerprint, the warm start and the journal's header; for a resumed one what its
 * journal says (nccltune_session_resume); and for both the rng, pruner and strategy. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "ncclvars.h"
#include "result/record.h"
#include "result/summary.h"
#include "run/locate.h"
#include "run/runner.h"
#include "run/sweepfile.h"
#include "session/session_priv.h"
#include "workflows/trust.h"

extern char **environ;

/* Set the probe's argv to the given words (a NULL ends the list early). */
static int set_argv(nccltune_session *s, const char *a, const char *b, const char *c,
                    const char *d, const char *e)
{
	const char *words[] = {a, b, c, d, e};
	size_t n = sizeof words / sizeof words[0];

	s->run.probe_argv = calloc(n + 1, sizeof *s->run.probe_argv);
	if (!s->run.probe_argv)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	for (size_t i = 0; i < n && words[i]; i++) {
		s->run.probe_argv[i] = strdup(words[i]);
		if (!s->run.probe_argv[i])
			return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	}
	return NCCLTUNE_OK;
}

/* The probe of a new session: --probe as given, else the model's probe for --model,
 * else nccltune-probe when a GPU is visible; with none visible the default model
 * stands in, and the user is told so. */
static int resolve_probe(nccltune_session *s)
{
	char path[PATH_MAX], e[2048], seed[32];
	const char *model = s->cfg.model;

	if (s->cfg.probe_cmd) {
		if (runner_split_command(s->cfg.probe_cmd, &s->run.probe_argv, e, sizeof e) != 0)
			return session_fail(s, NCCLTUNE_USAGE, "--probe: %s", e);
		return NCCLTUNE_OK;
	}
	if (!model) {
		if (locate_gpu_visible()) {
			if (locate_probe(NULL, path, sizeof path, e, sizeof e) != 0)
				return session_fail(s, NCCLTUNE_ERROR, "a GPU is visible but %s; "
				                    "build the probe (meson setup -Dprobe=enabled) "
				                    "or pass --probe CMD or --model NAME", e);
			return set_argv(s, path, NULL, NULL, NULL, NULL);
		}
		/* The stand-in model is for the demo command only (nccltune run without --probe,
		 * --model or --warm-start): a warm-started session re-tunes a real machine (the
		 * re-tune flow, examples/retune.*), and model numbers must never stand in for its
		 * measurement. */
		if (s->cfg.warm_dir)
			return session_fail(s, NCCLTUNE_ERROR, "no GPU visible, and --warm-start %s "
			                    "re-tunes a real machine: model numbers never stand in for "
			                    "it; fix the GPUs or the driver, or pass --probe CMD (or "
			                    "--model NAME for a model session)", s->cfg.warm_dir);
		model = "pcie-gen5-8gpu";
		s->run.auto_model = true;
		session_note(&s->out, "no GPU visible: tuning the MODEL %s (a stand-in, not a "
		             "measurement); pass --probe or --model to choose", model);
		s->cfg.model = strdup(model);
		if (!s->cfg.model)
			return session_fail(s, NCCLTUNE_ERROR, "out of memory");
		model = s->cfg.model;
	}
	if (locate_probe(model, path, sizeof path, e, sizeof e) != 0)
		return session_fail(s, NCCLTUNE_ERROR, "--model %s: %s", model, e);
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

		session_note(&s->out, "pinned by your environment: %s=%s (%s; never overridden)",
		             p->name, p->value,
		             p->searched ? "dropped from the search, kept for every run"
		                         : "fixed by the space; your value is used");
	}
}

/* What the session says about an inherited variable env_inherited_check kept. */
static void report_inherited(void *ctx, enum env_inherited what, const char *name,
                             const char *value)
{
	nccltune_session *s = ctx;

	if (what == ENV_INHERITED_DECIDES && space_has_rules(s->run.sp))
		session_warn(&s->out, "%s=%s is set in your environment: pinned for every run, the "
		             "baseline included, and recorded; NCCL then refuses every per-size rule "
		             "choosing another %s (pruned as rejected): unset %s to let the rules "
		             "choose", name, value,
		             strcmp(name, "NCCL_ALGO") == 0 ? "algorithm" : "protocol", name);
	else if (what == ENV_INHERITED_LABEL)
		session_note(&s->out, "%s=%s is set in your environment: %s; ignored (not "
		             "recorded nor exported)", name, value, ncclvars_label(name));
	else if (what == ENV_INHERITED_LOGGING)
		session_note(&s->out, "%s=%s is set in your environment: passed to every run, not "
		             "recorded (logging)%s", name, value,
		             strcmp(name, "NCCL_DEBUG") == 0
		             ? "; while it is set the probe keeps no record of what NCCL ran (NCCL's "
		               "TUNING log goes where you point it): unset NCCL_DEBUG for that record"
		             : "");
	else
		session_note(&s->out, "pinned by your environment: %s=%s (not in the space: passed "
		             "to every run and recorded; the exports set it too)", name, value);
}

/* Every inherited variable that reaches NCCL: pinned, reported or refused
 * (env_inherited_check). */
static int check_inherited(nccltune_session *s)
{
	char e[1024];

	if (env_inherited_check(s->run.user_env, s->run.sp, s->resumed, &s->run.pins,
	                        report_inherited, s, e, sizeof e) != 0)
		return session_fail(s, NCCLTUNE_USAGE, "%s", e);
	return NCCLTUNE_OK;
}

/* Place every try in the space searched (after pins), refusing what cannot be tried
 * and duplicates. Used by new and resumed sessions alike. */
static int resolve_tries(nccltune_session *s)
{
	char e[1024], desc[512];

	for (size_t i = 0; i < s->cfg.ntries; i++) {
		struct tryconf *t = &s->cfg.tries[i];

		if (tryconf_resolve(t, s->run.sp, &s->run.pins, t->origin, e, sizeof e) != 0)
			return session_fail(s, NCCLTUNE_USAGE, "%s", e);
		for (size_t j = 0; j < i; j++)
			if (tryconf_same(&s->cfg.tries[j], t, space_dims(s->run.sp)))
				return session_fail(s, NCCLTUNE_USAGE,
				                    "%s: the same configuration as %s", t->origin,
				                    s->cfg.tries[j].origin);
	}
	for (size_t i = 0; i < s->cfg.ntries && !s->resumed; i++) {
		const struct tryconf *t = &s->cfg.tries[i];

		for (size_t k = 0; k < t->n; k++) {
			const char *pin = env_pins_get(&s->run.pins, t->name[k]);

			if (t->pinned[k] && strcmp(pin, t->value[k]) != 0)
				session_note(&s->out, "try %zu: %s=%s is overridden by your "
				             "environment's %s=%s (pinned: your values win; "
				             "unset it to try %s)", i + 1, t->name[k], t->value[k],
				             t->name[k], pin, t->value[k]);
		}
		session_note(&s->out, "try %zu: %s (%s%s%s)", i + 1,
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
				return session_fail(s, NCCLTUNE_ERROR, "out of memory");
		}
	}
	return NCCLTUNE_OK;
}

/* Take the lock of session folder dir for the rest of the session (s->run.lock_fd):
 * a second nccltune on the same folder stops at once, naming the holder's pid.
 * Returns an nccltune_status. */
static int session_lock(nccltune_session *s, const char *dir)
{
	char e[1024];

	if (s->run.lock_fd >= 0)
		return NCCLTUNE_OK;
	if (fs_lock_dir(dir, &s->run.lock_fd, e, sizeof e) != 0)
		return session_fail(s, NCCLTUNE_ERROR, "%s", e);
	return NCCLTUNE_OK;
}

/* The folder that holds default session folders: $XDG_STATE_HOME/nccltune when that is
 * an absolute path, else HOME/.local/state/nccltune with HOME from $HOME (absolute) or the
 * password database. Outside any source tree, so a session never lands in a clone's
 * committed results/. Returns 0, or -1 with err set. */
static int state_base(char *buf, size_t len, char *err, size_t errlen)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	int k;

	if (xdg && xdg[0] == '/') {
		k = snprintf(buf, len, "%s/nccltune", xdg);
	} else {
		if (!home || home[0] != '/') {
			const struct passwd *pw = getpwuid(getuid());

			home = pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
		}
		if (!home) {
			snprintf(err, errlen, "no default session folder: neither XDG_STATE_HOME nor "
			         "HOME is an absolute path and the password database has no home for "
			         "uid %u; give --out DIR", (unsigned)getuid());
			return -1;
		}
		k = snprintf(buf, len, "%s/.local/state/nccltune", home);
	}
	if (k < 0 || (size_t)k >= len) {
		snprintf(err, errlen, "no default session folder: the state folder's path is too "
		         "long; give --out DIR");
		return -1;
	}
	return 0;
}

/* The default session folder, BASE/HOST-UTCSTAMP (with -2, -3 ... when taken), into
 * s->run.dir. Returns an nccltune_status. */
static int default_out_dir(nccltune_session *s)
{
	char host[64] = "host", stamp[32], base[PATH_MAX], e[512];
	time_t t = time(NULL);
	struct tm tm;
	struct stat st;
	int k;

	if (state_base(base, sizeof base, e, sizeof e) != 0)
		return session_fail(s, NCCLTUNE_USAGE, "%s", e);
	if (gethostname(host, sizeof host) != 0)
		snprintf(host, sizeof host, "host");
	host[sizeof host - 1] = '\0';
	for (char *c = host; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.'))
			*c = '_';
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
	k = snprintf(s->run.dir, sizeof s->run.dir, "%s/%s-%s", base, host, stamp);
	for (int i = 2; k >= 0 && (size_t)k < sizeof s->run.dir && lstat(s->run.dir, &st) == 0 &&
	                i < 1000; i++)
		k = snprintf(s->run.dir, sizeof s->run.dir, "%s/%s-%s-%d", base, host, stamp, i);
	if (k < 0 || (size_t)k >= sizeof s->run.dir)
		return session_fail(s, NCCLTUNE_USAGE, "no default session folder: %s is too long; "
		                    "give --out DIR", base);
	return NCCLTUNE_OK;
}

/* An existing --out folder is used only when it is empty or holds a session: anything
 * but the lock file, a journal and the inputs retune writes for its session (space.json,
 * workload.json) means it is someone else's folder (a source tree, a home), where the
 * session's files would mix with theirs. Returns an nccltune_status. */
static int out_dir_usable(nccltune_session *s)
{
	DIR *d = opendir(s->run.dir);
	const struct dirent *de;
	char other[256] = "";
	bool has_journal = false;

	if (!d)
		return NCCLTUNE_OK;   /* new, or not a folder: creating it says what is wrong */
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    strcmp(de->d_name, ".lock") == 0 || strcmp(de->d_name, "space.json") == 0 ||
		    strcmp(de->d_name, "workload.json") == 0)
			continue;
		if (strcmp(de->d_name, "journal.jsonl") == 0)
			has_journal = true;
		else if (!other[0])
			snprintf(other, sizeof other, "%s", de->d_name);
	}
	closedir(d);
	if (other[0] && !has_journal)
		return session_fail(s, NCCLTUNE_USAGE, "--out %s: the folder is not empty (it holds "
		                    "'%s') and holds no session (no journal.jsonl): refused, so that "
		                    "no file of yours is mixed with or replaced by a session's; choose "
		                    "a new or empty folder", s->run.dir, other);
	return NCCLTUNE_OK;
}

/* Counts a journal's run records and whether its first one is a failed baseline. */
struct dead_count {
	size_t runs;
	bool failed_baseline;
};

static int dead_run(void *ctx, struct jr *r, const struct record_run *run)
{
	struct dead_count *c = ctx;

	(void)r;
	if (c->runs++ == 0)
		c->failed_baseline = run->phase == PHASE_BASELINE && run->cls != OUTCOME_OK;
	return 0;
}

/* Is the journal at path a session that never measured anything: a valid journal whose
 * only run is NCCL's defaults, failed (a broken driver, an unknown --model)? Such a
 * folder is not a session to resume. False when it cannot be read (the caller's
 * message then stands). */
static bool journal_dead(const char *path)
{
	const struct record_visitor v = {NULL, dead_run, NULL};
	struct dead_count c = {0, false};
	char e[512];

	if (record_journal_read(path, &v, &c, NULL, NULL, 0, e, sizeof e) != 0)
		return false;
	return c.runs == 1 && c.failed_baseline;
}

/* The session folder: --out or a new one under the user's state folder, created,
 * locked, and without a journal. Returns an nccltune_status. */
static int make_out_dir(nccltune_session *s)
{
	char e[1024], path[PATH_MAX + 32];
	struct stat st;
	int rc;

	if (s->cfg.out_dir_opt) {
		snprintf(s->run.dir, sizeof s->run.dir, "%s", s->cfg.out_dir_opt);
		rc = out_dir_usable(s);
	} else {
		rc = default_out_dir(s);
	}
	if (rc)
		return rc;
	if (fs_mkdirs(s->run.dir, e, sizeof e) != 0)
		return session_fail(s, NCCLTUNE_ERROR, "--out: %s", e);
	rc = session_lock(s, s->run.dir);
	if (rc)
		return rc;
	snprintf(path, sizeof path, "%s/journal.jsonl", s->run.dir);
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode))
			return session_fail(s, NCCLTUNE_USAGE, "%s: is a symbolic link: refused (a "
			                    "session's journal is never followed); choose another --out",
			                    path);
		/* Only an older nccltune killed before it wrote the header leaves an empty
		 * journal: it holds nothing, so it is replaced; so is one whose only run is a
		 * failed baseline (nothing measured: a resume would only replay the failure). */
		if (!S_ISREG(st.st_mode) || (st.st_size > 0 && !journal_dead(path))) {
			char self[PATH_MAX + 8];

			return session_fail(s, NCCLTUNE_USAGE, "%s already holds a session "
			                    "(journal.jsonl): resume it with '%s run --resume %s' or "
			                    "choose another --out", s->run.dir,
			                    locate_self_command(self, sizeof self), s->run.dir);
		}
		if (st.st_size > 0)
			session_note(&s->out, "%s: its only run was NCCL's defaults, which failed: "
			             "nothing measured to resume; starting the session anew", s->run.dir);
		if (unlink(path) != 0)
			return session_fail(s, NCCLTUNE_ERROR, "%s: cannot remove the %s journal: %s",
			                    path, st.st_size > 0 ? "failed" : "empty", strerror(errno));
	}
	return NCCLTUNE_OK;
}

/* A fingerprint of source "model" says the figures come from a machine model: which. */
static void source_from_fingerprint(nccltune_session *s, const cJSON *fp)
{
	const cJSON *src = cJSON_GetObjectItemCaseSensitive(fp, "source");
	const cJSON *model = cJSON_GetObjectItemCaseSensitive(fp, "model");

	if (cJSON_IsString(src) && strcmp(src->valuestring, "model") == 0) {
		snprintf(s->run.source, sizeof s->run.source, "model");
		if (cJSON_IsString(model))
			snprintf(s->run.model_name, sizeof s->run.model_name, "%s",
			         model->valuestring);
	}
}

/* Would show, export, report and check read fp back from results.json (the strict
 * reader of tuner/result)? A fingerprint they would refuse (control characters, strings
 * over 256 bytes, a negative gpu_count) is not written at all: said so, and dropped. */
static bool fingerprint_readable(nccltune_session *s, const cJSON *fp)
{
	char why[1024];

	if (summary_fingerprint_check(fp, "fingerprint", why, sizeof why) != 0) {
		session_warn(&s->out, "%s --fingerprint: %s: not kept, continuing without one",
		             s->run.probe_argv[0], why);
		return false;
	}
	return true;
}

/* Ask the probe to describe the machine. A probe that cannot be started at all stops
 * the session here, before a single run of the budget is spent on it. */
static int take_fingerprint(nccltune_session *s)
{
	struct runner_request req;
	struct runner_result res;
	char **argv = session_probe_argv(s, "--fingerprint"), **env = NULL, e[512];
	bool capped;
	cJSON *fp = NULL;
	int status = NCCLTUNE_OK;

	memset(&res, 0, sizeof res);
	env = env_build(s->run.user_env, s->run.sp, &s->run.pins, NULL, e, sizeof e);
	if (!argv || !env || session_server_env(s, &env, false) != 0) {
		status = session_fail(s, NCCLTUNE_ERROR, "out of memory");
		goto out;
	}
	memset(&req, 0, sizeof req);
	req.argv = argv;
	req.envp = env;
	/* within the --time-limit too (a fingerprint that hangs then gives none) */
	req.timeout_s = fmax(0.1, session_deadline(s, s->cfg.timeout_opt_s > 0
	                                                 ? s->cfg.timeout_opt_s : 120, &capped));
	req.cancel = s->run.cancel;
	req.reaper = &s->run.reaper;
	if (runner_run(&req, &res, e, sizeof e) != 0) {
		status = session_fail(s, NCCLTUNE_ERROR, "%s", e);
		goto out;
	}
	if (!res.spawned) {
		status = session_fail(s, NCCLTUNE_ERROR, "cannot start the probe: %s",
		                      res.spawn_error);
		goto out;
	}
	if (res.cancelled) {
		s->run.interrupted = true;
		goto out;
	}
	if (!res.timed_out && res.exit_status == 0)
		fp = cJSON_ParseWithLength(res.out, res.out_len);
	if (fp && !session_json_utf8(fp)) {
		cJSON_Delete(fp);
		status = session_fail(s, NCCLTUNE_ERROR, "out of memory");
		goto out;
	}
	if (!cJSON_IsObject(fp)) {
		session_warn(&s->out, "%s --fingerprint gave no fingerprint (%s); continuing "
		             "without one", s->run.probe_argv[0],
		             res.timed_out ? "timed out"
		             : res.exit_status != 0 ? "non-zero exit status" : "not a JSON object");
		cJSON_Delete(fp);
		fp = NULL;
	} else if (!fingerprint_readable(s, fp)) {
		cJSON_Delete(fp);
		fp = NULL;
	} else {
		source_from_fingerprint(s, fp);
	}
	s->run.fingerprint = fp;
	if (!s->run.interrupted)
		status = session_server_check_fingerprint(s, fp);
out:
	runner_result_free(&res);
	runner_free_argv(argv);
	env_free(env);
	return status;
}

/* What the probe can do (--capabilities), asked with the variables of space sp; a probe
 * that does not answer has none of the extensions and is run as before them. Returns an
 * nccltune_status (NCCLTUNE_OK with s->run.interrupted set when a signal came). */
static int take_capabilities(nccltune_session *s, const space *sp)
{
	char **argv = session_probe_argv(s, "--capabilities"), **env = NULL, e[512];
	int status = NCCLTUNE_OK;
	bool cancelled = false, capped;

	env = env_build(environ, sp, &s->run.pins, NULL, e, sizeof e);
	if (!argv || !env) {
		status = session_fail(s, NCCLTUNE_ERROR, "out of memory");
		goto out;
	}
	if (sweepfile_capabilities(argv, env, fmax(0.1, session_deadline(s, SESSION_CAPS_TIMEOUT_S,
	                                                                 &capped)), s->run.cancel,
	                           &s->run.reaper, &s->run.caps, &cancelled, e, sizeof e) != 0)
		status = session_fail(s, NCCLTUNE_ERROR, "%s", e);
	else if (cancelled)
		s->run.interrupted = true;
out:
	runner_free_argv(argv);
	env_free(env);
	return status;
}

/* The space of a new session: --space, else the default: per-size when the probe sweeps
 * (--capabilities), the global one otherwise; the session is two-level when the probe
 * sweeps and the space has per-size rules; a per_size
 * block expanded into one set of rule dimensions per tuned size. Returns an
 * nccltune_status. */
static int choose_space(nccltune_session *s)
{
	char e[2048];
	uint64_t sizes[WORKLOAD_MAX_ENTRIES];
	space *x = NULL;

	int rc = NCCLTUNE_OK;

	/* a probe that sweeps gets the per-size default; any other the global one, as
	 * before sweeps existed */
	if (!s->cfg.space_full) {
		space *global = space_default();

		rc = global ? take_capabilities(s, global) : NCCLTUNE_ERROR;
		space_destroy(global);
		if (rc == NCCLTUNE_OK && !s->run.interrupted)
			s->cfg.space_full = s->run.caps & PROTO_CAP_SWEEP ? space_default_per_size()
			                                                 : space_default();
		if (rc == NCCLTUNE_OK && !s->run.interrupted && !s->cfg.space_full)
			rc = NCCLTUNE_ERROR;
	} else if (space_has_rules(s->cfg.space_full)) {
		rc = take_capabilities(s, s->cfg.space_full);
	}
	if (rc == NCCLTUNE_ERROR && !s->err[0])
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	if (rc || s->run.interrupted)
		return rc;
	s->run.two_level = (s->run.caps & PROTO_CAP_SWEEP) && space_has_rules(s->cfg.space_full);
	if (space_has_rules(s->cfg.space_full))
		session_note(&s->out, "%s", s->run.two_level
		             ? "the probe sweeps (capability sweep): two-level search, one probe "
		               "process per setting of the process-level variables, the per-size "
		               "choices swept inside it"
		             : "the probe does not sweep: one configuration per probe process");
	if (!space_has_per_size(s->cfg.space_full))
		return NCCLTUNE_OK;
	for (size_t i = 0; i < s->cfg.wl.n; i++)
		sizes[i] = s->cfg.wl.e[i].bytes;
	if (space_expand_per_size(s->cfg.space_full, sizes, s->cfg.wl.n, &x, e, sizeof e) != 0)
		return session_fail(s, NCCLTUNE_USAGE, "%s: %s", s->cfg.space_file ? s->cfg.space_file
		                    : "space", e);
	space_destroy(s->cfg.space_full);
	s->cfg.space_full = x;
	return NCCLTUNE_OK;
}

int session_prepare_new(nccltune_session *s)
{
	char e[2048], path[PATH_MAX + 32];
	time_t t = time(NULL);
	struct tm tm;
	cJSON *h;
	int rc;

	s->run.user_env = environ;
	rc = resolve_probe(s);
	if (rc == NCCLTUNE_OK)
		rc = session_server_argv(s);
	if (rc)
		return rc;
	rc = choose_space(s);
	if (rc || s->run.interrupted)
		return rc;
	/* per-size deployment leaves every other size to NCCL but not the process-level
	 * variables: the default guard ladder checks them (explicit guards always apply) */
	if (space_has_rules(s->cfg.space_full))
		workload_default_guards(&s->cfg.wl);
	if (env_pins_collect(s->run.user_env, s->cfg.space_full, &s->run.pins, e, sizeof e) != 0)
		return session_fail(s, NCCLTUNE_ERROR, "%s", e);
	if (s->run.pins.n > 0) {
		if (env_space_unpin(s->cfg.space_full, &s->run.pins, &s->run.sp, e, sizeof e) != 0)
			return session_fail(s, NCCLTUNE_USAGE, "%s", e);
		describe_pins(s);
	} else {
		s->run.sp = s->cfg.space_full;
		s->cfg.space_full = NULL;
	}
	rc = check_inherited(s);
	if (rc == NCCLTUNE_OK)
		rc = session_server_profile(s);
	if (rc == NCCLTUNE_OK)
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
	session_server_window(s);
	if (s->cfg.warm_dir) {
		rc = session_warm_prepare(s);
		if (rc)
			return rc;
	}
	snprintf(path, sizeof path, "%s/journal.jsonl", s->run.dir);
	h = session_header_json(s);
	if (!h)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	/* the header and the file appear together: a journal always has its header */
	s->run.jr = journal_create(path, h, e, sizeof e);
	cJSON_Delete(h);
	if (!s->run.jr)
		return session_fail(s, NCCLTUNE_ERROR, "%s", e);
	return NCCLTUNE_OK;
}

/* On resume, what of the user's environment differs from the session's: a pinned
 * variable changed or unset (the recorded value is used), a searched one now set
 * (ignored). */
static void note_environment(nccltune_session *s)
{
	for (size_t i = 0; i < s->run.pins.n; i++) {
		const char *now = getenv(s->run.pins.v[i].name);

		if (!now || strcmp(now, s->run.pins.v[i].value) != 0)
			session_note(&s->out, "note: %s is %s%s%s in your environment now; the "
			             "session's recorded value %s is used", s->run.pins.v[i].name,
			             now ? "'" : "unset", now ? now : "", now ? "'" : "",
			             s->run.pins.v[i].value);
	}
	for (size_t d = 0; d < space_dims(s->run.sp); d++)
		if (getenv(space_name(s->run.sp, d)))
			session_note(&s->out, "note: %s is set in your environment now, but this "
			             "session searches it; ignored", space_name(s->run.sp, d));
}

/* As root, a resume trusts the session folder as retune does (workflows/trust.h): every
 * folder from / down to it and its journal changeable by nobody but root and the caller
 * (a folder on the way that another user can write could swap the journal, whose probe
 * root runs). 0, or -1 with a message naming the component at fault. */
static int resume_folder_trusted(const char *dir, char *e, size_t len)
{
	int dfd, fd = -1;

	if (geteuid() != 0)
		return 0;
	dfd = trust_open_dir(dir, e, len);
	if (dfd >= 0) {
		fd = trust_open_file(dfd, dir, "journal.jsonl", e, len);
		close(dfd);
	}
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

int nccltune_session_resume(nccltune_session *s, const char *dir)
{
	char e[2048], path[PATH_MAX + 32];
	struct stat st;
	int rc;

	if (s->resumed || s->started)
		return session_fail(s, NCCLTUNE_USAGE, "--resume: the session is already set up");
	if (!dir || !*dir || strlen(dir) > PATH_MAX - 64)
		return session_fail(s, NCCLTUNE_USAGE, "--resume: bad folder name");
	snprintf(path, sizeof path, "%s/journal.jsonl", dir);
	if (lstat(path, &st) != 0)
		return session_fail(s, NCCLTUNE_USAGE, "%s: no journal.jsonl: nothing to resume "
		                    "(not a session folder, or a session stopped before it wrote "
		                    "its journal: start it again with --out)", dir);
	/* a resume runs the probe command the journal records, as check does: the folder
	 * and its journal must be the user's alone (a session folder is trusted like a
	 * script) */
	if (journal_check_trusted(dir, e, sizeof e) != 0)
		return session_fail(s, NCCLTUNE_USAGE, "%s: refused: %s; --resume runs the probe "
		                    "command the session's journal records, so a session folder is "
		                    "trusted like a script (chown it or chmod go-w it)", dir, e);
	if (resume_folder_trusted(dir, e, sizeof e) != 0)
		return session_fail(s, NCCLTUNE_USAGE, "%s: refused: %s; --resume as root runs the "
		                    "probe command the session's journal records, so every folder on "
		                    "the way must be changeable by nobody but root and you", dir, e);
	rc = session_lock(s, dir);
	if (rc)
		return rc;
	rc = session_load_journal(s, dir);
	if (rc)
		return rc;
	if (s->run.nqueue == 1 && s->run.queue[0].phase == PHASE_BASELINE &&
	    s->run.queue[0].o.cls != OUTCOME_OK) {
		char self[PATH_MAX + 8], why[512];

		fs_escape_text(s->run.queue[0].o.error, why, sizeof why);
		return session_fail(s, NCCLTUNE_USAGE, "%s: nothing to resume: its only run, NCCL's "
		                    "defaults, failed (%s: %s), so nothing was measured; start it "
		                    "again (the failed journal is replaced) with '%s run ... --out %s'",
		                    dir, outcome_class_name(s->run.queue[0].o.cls), why,
		                    locate_self_command(self, sizeof self), dir);
	}
	s->resumed = true;
	rc = resolve_tries(s);
	if (rc) {
		char e2[sizeof s->err];

		snprintf(e2, sizeof e2, "%s", s->err);
		return session_fail(s, NCCLTUNE_USAGE, "%s/journal.jsonl: header: %s", dir, e2);
	}
	snprintf(s->run.dir, sizeof s->run.dir, "%s", dir);
	s->run.user_env = environ;
	note_environment(s);
	rc = check_inherited(s);
	if (rc)
		return rc;
	if (s->run.nqueue > 0)
		s->run.t_offset = s->run.queue[s->run.nqueue - 1].t_s;
	if (s->run.fingerprint)
		source_from_fingerprint(s, s->run.fingerprint);

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
		return session_fail(s, NCCLTUNE_ERROR, "%s", e);
	session_note(&s->out, "resuming %s: %zu run(s) of %d recorded; they are not run again",
	             dir, s->run.nqueue, s->run.nexts ? s->run.ext[s->run.nexts - 1].budget
	                                              : s->cfg.budget);
	return NCCLTUNE_OK;
}

int session_prepare_common(nccltune_session *s)
{
	char e[1024];

	if (space_has_rules(s->run.sp) && !s->run.plugin[0]) {
		bool build_tree;

		if (locate_plugin(s->run.plugin, sizeof s->run.plugin, &build_tree, e, sizeof e) != 0) {
			s->run.plugin[0] = '\0';
			return session_fail(s, NCCLTUNE_ERROR, "the space has per-size choices, which "
			                    "run through nccltune's tuner plugin: %s", e);
		}
	}
	gsl_set_error_handler_off();
	s->run.rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (!s->run.rng)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	gsl_rng_set(s->run.rng, s->cfg.seed);
	s->run.pr = prune_create(s->run.sp, 0);
	if (!s->run.pr)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	if (s->run.two_level) {
		s->run.tl = twolevel_create(s->run.sp, e, sizeof e);
		if (!s->run.tl)
			return session_fail(s, NCCLTUNE_ERROR, "the two-level search: %s", e);
	}
	if (s->run.tl && twolevel_outer_space(s->run.tl)) {
		/* the strategy searches the process-level variables; the pruner of the full
		 * space learns every inner result, this one what a whole process did */
		s->run.pr_outer = prune_create(twolevel_outer_space(s->run.tl), 0);
		if (!s->run.pr_outer)
			return session_fail(s, NCCLTUNE_ERROR, "out of memory");
		s->run.st = strategy_create(s->cfg.strategy_name, twolevel_outer_space(s->run.tl),
		                            s->run.rng, s->run.pr_outer, e, sizeof e);
	} else {
		s->run.st = strategy_create(s->cfg.strategy_name, s->run.sp, s->run.rng, s->run.pr,
		                            e, sizeof e);
	}
	if (!s->run.st)
		return session_fail(s, NCCLTUNE_USAGE, "--strategy: %s", e);
	return NCCLTUNE_OK;
}
