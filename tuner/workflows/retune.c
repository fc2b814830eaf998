/* retune.c - re-tune unattended when the machine changed (nccltune.h, nccltune_retune),
 * in a state folder:
 *
 *   STATE/current     -> the session in use (a symlink; `--init STATE --from SESSION`)
 *   STATE/previous    -> the one before it
 *   STATE/sessions/   the re-tuning sessions, one folder per UTC time
 *   STATE/lock        held (flock) while a re-tune runs
 *
 * Under the lock: `nccltune check` of current with its recorded probe. Unchanged:
 * nothing. Cannot measure (no GPU, a driver error, a probe that fails): nothing changes,
 * exit 1 - re-tuning then would measure nothing, or a stand-in. Changed: a new session
 * with current's recorded probe, space and workload (and strategy, budget, seed, limits),
 * warm-started from current; its result installed only when it is measured and shown to
 * be faster than NCCL's defaults (a measured result that is not: the old install is
 * removed, the defaults are as good; a model's: nothing is installed, ever); then
 * `current` relinked to it atomically and `previous` to the old session. The variables
 * the old session had pinned from its environment must be set the same way here (the
 * unit's Environment=), or the re-tune is refused: it would measure another machine.
 * The session itself is run by the session stage, through `tune`. */
#include "workflows/retune.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "result/summary.h"
#include "workflows/check.h"
#include "workflows/export.h"

#define HEADER_MAX (16u << 20)   /* the journal's first line */

/* Point `link` at `target` atomically: a new symlink renamed over the old one, then the
 * folder synced. */
static int link_atomic(const char *target, const char *link, char *err, size_t errlen)
{
	char tmp[PATH_MAX + 16], dir[PATH_MAX];
	char *slash;
	int fd;

	snprintf(tmp, sizeof tmp, "%s.new", link);
	if (unlink(tmp) != 0 && errno != ENOENT)
		return fs_errf(err, errlen, "%s: cannot remove it: %s", tmp, strerror(errno));
	if (symlink(target, tmp) != 0)
		return fs_errf(err, errlen, "%s: cannot create a link to %s: %s", tmp, target,
		               strerror(errno));
	if (rename(tmp, link) != 0) {
		fs_errf(err, errlen, "%s: cannot replace it: %s", link, strerror(errno));
		unlink(tmp);
		return -1;
	}
	snprintf(dir, sizeof dir, "%s", link);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	return 0;
}

/* Take STATE/lock (never waiting): *fd holds it until closed. */
static int lock_state(const char *state, int *fd, char *err, size_t errlen)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof path, "%s/lock", state);
	*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (*fd < 0)
		return fs_errf(err, errlen, "%s: cannot open it: %s", path, strerror(errno));
	if (flock(*fd, LOCK_EX | LOCK_NB) != 0) {
		fs_errf(err, errlen, "%s: %s", path, errno == EWOULDBLOCK
		        ? "held by another nccltune retune of this state folder; nothing done"
		        : strerror(errno));
		close(*fd);
		*fd = -1;
		return -1;
	}
	return 0;
}

static int init_state(const char *state, const char *from, FILE *out, char *err,
                      size_t errlen)
{
	char real[PATH_MAX], dir[PATH_MAX + 16], cur[PATH_MAX + 16];
	struct summary *s = NULL;
	struct stat st;
	int rc = NCCLTUNE_USAGE;

	if (!realpath(from, real)) {
		fs_errf(err, errlen, "--from %s: %s", from, strerror(errno));
		return NCCLTUNE_USAGE;
	}
	if (summary_load(real, SUMMARY_JOURNAL, &s, err, errlen) < 0)
		return NCCLTUNE_USAGE;
	if (!s->fp.present || !s->probe_argv) {
		fs_errf(err, errlen, "--from %s: the session records no %s, so a re-tune could not "
		        "compare or repeat it", real, s->fp.present ? "probe" : "fingerprint");
		goto out;
	}
	snprintf(dir, sizeof dir, "%s/sessions", state);
	snprintf(cur, sizeof cur, "%s/current", state);
	rc = NCCLTUNE_ERROR;
	if (fs_mkdirs(dir, err, errlen) != 0)
		goto out;
	if (lstat(cur, &st) == 0) {
		fs_errf(err, errlen, "%s exists already; a state folder is initialised once (remove "
		        "the link to start over)", cur);
		rc = NCCLTUNE_USAGE;
		goto out;
	}
	if (link_atomic(real, cur, err, errlen) != 0)
		goto out;
	fprintf(out, "retune: %s -> %s%s\n", cur, real,
	        s->model ? " (a MODEL session: its re-tunes are never installed)" : "");
	rc = NCCLTUNE_OK;
out:
	summary_destroy(s);
	return rc;
}

/* The first line of SESSION/journal.jsonl, parsed: the session's recorded settings. */
static cJSON *read_header(const char *session, char *err, size_t errlen)
{
	char path[PATH_MAX + 32], *line = NULL;
	size_t cap = 0;
	ssize_t n;
	cJSON *h = NULL;
	FILE *f;

	snprintf(path, sizeof path, "%s/journal.jsonl", session);
	f = fopen(path, "r");
	if (!f) {
		fs_errf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	n = getline(&line, &cap, f);
	if (n > 0 && (size_t)n < HEADER_MAX)
		h = cJSON_ParseWithLength(line, (size_t)n);
	if (!cJSON_IsObject(h) ||
	    !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(h, "probe")) ||
	    !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(h, "space")) ||
	    !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(h, "workload"))) {
		fs_errf(err, errlen, "%s:1: no session header with its probe, space and workload",
		        path);
		cJSON_Delete(h);
		h = NULL;
	}
	free(line);
	fclose(f);
	return h;
}

/* The recorded probe as one command line, each word single-quoted; nccltune's own probe
 * found here when its recorded path is gone. NULL with a message. */
static char *probe_command(const cJSON *h, char *err, size_t errlen)
{
	const cJSON *argv = cJSON_GetObjectItemCaseSensitive(h, "probe"), *w;
	char *buf = NULL, *moved = NULL;
	size_t n = 0;
	FILE *mem = open_memstream(&buf, &n);
	bool first = true;

	if (!mem) {
		fs_errf(err, errlen, "out of memory");
		return NULL;
	}
	cJSON_ArrayForEach(w, argv) {
		const char *word = cJSON_IsString(w) ? w->valuestring : NULL;

		if (!word) {
			fclose(mem);
			free(buf);
			fs_errf(err, errlen, "the recorded probe is not a list of words");
			return NULL;
		}
		if (first && (moved = check_relocate_tool(word)))
			word = moved;
		fputs(first ? "'" : " '", mem);
		for (const char *c = word; *c; c++) {
			if (*c == '\'')
				fputs("'\\''", mem);
			else
				fputc(*c, mem);
		}
		fputc('\'', mem);
		first = false;
		free(moved);
		moved = NULL;
	}
	if (fclose(mem) != 0 || first) {
		free(buf);
		fs_errf(err, errlen, "the recorded probe is empty");
		return NULL;
	}
	return buf;
}

/* Each variable the session had pinned from its environment must be set to the same
 * value here: a re-tune under another environment would measure another machine. */
static int check_pins(const cJSON *h, const char *session, char *err, size_t errlen)
{
	const cJSON *p;

	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(h, "pinned")) {
		const char *now = getenv(p->string);

		if (!cJSON_IsString(p) || !now || strcmp(now, p->valuestring) != 0)
			return fs_errf(err, errlen, "%s ran with %s=%s set in its environment (pinned); "
			               "this re-tune has %s%s: set it the same way (Environment= of the "
			               "unit), or tune afresh and --init again", session, p->string,
			               cJSON_IsString(p) ? p->valuestring : "?", now ? "it set to " : "it unset",
			               now ? now : "");
	}
	return 0;
}

/* Write o as JSON to path. */
static int write_json(const cJSON *o, const char *path, char *err, size_t errlen)
{
	char *text = cJSON_Print(o);
	int rc = text ? fs_write_atomic(path, text, strlen(text), 0644, err, errlen)
	              : fs_errf(err, errlen, "out of memory");

	cJSON_free(text);
	return rc;
}

/* The recorded space and workload (with the probe's iters and warmup) as files in dir. */
static int write_inputs(const cJSON *h, const char *dir, char *space, char *workload,
                        char *err, size_t errlen)
{
	cJSON *wl = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(h, "workload"), true);
	static const char *const timing[] = {"iters", "warmup"};
	int rc = -1;

	if (snprintf(space, PATH_MAX, "%s/space.json", dir) >= PATH_MAX ||
	    snprintf(workload, PATH_MAX, "%s/workload.json", dir) >= PATH_MAX) {
		fs_errf(err, errlen, "%s: path too long", dir);
		cJSON_Delete(wl);
		return -1;
	}
	for (size_t i = 0; wl && i < sizeof timing / sizeof timing[0]; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(h, timing[i]);

		if (cJSON_IsNumber(v) && !cJSON_GetObjectItemCaseSensitive(wl, timing[i]))
			cJSON_AddNumberToObject(wl, timing[i], v->valuedouble);
	}
	if (!wl)
		fs_errf(err, errlen, "out of memory");
	else if (write_json(cJSON_GetObjectItemCaseSensitive(h, "space"), space, err, errlen) == 0 &&
	         write_json(wl, workload, err, errlen) == 0)
		rc = 0;
	cJSON_Delete(wl);
	return rc;
}

/* A new folder STATE/sessions/<UTC time>[-N] into dir (created), its name relative to
 * STATE into rel. */
static int new_session_dir(const char *state, char *dir, size_t len, char *rel, size_t rlen,
                           char *err, size_t errlen)
{
	char stamp[32];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
	for (int i = 1; i < 1000; i++) {
		if (i == 1)
			snprintf(rel, rlen, "sessions/%s", stamp);
		else
			snprintf(rel, rlen, "sessions/%s-%d", stamp, i);
		snprintf(dir, len, "%s/%s", state, rel);
		if (mkdir(dir, 0755) == 0)
			return 0;
		if (errno != EEXIST)
			return fs_errf(err, errlen, "%s: cannot create it: %s", dir, strerror(errno));
	}
	return fs_errf(err, errlen, "%s/sessions: no free folder name for %s", state, stamp);
}

/* The job of re-tuning `current` (its header h) into dir, then run it. */
static int run_job(const cJSON *h, const char *current, const char *dir,
                   const struct nccltune_retune_options *o, retune_tune_fn tune, char *err,
                   size_t errlen)
{
	char space[PATH_MAX], workload[PATH_MAX];
	const cJSON *v;
	struct retune_job job;
	char *probe = probe_command(h, err, errlen);
	int rc = NCCLTUNE_ERROR;

	if (!probe)
		return NCCLTUNE_USAGE;
	if (write_inputs(h, dir, space, workload, err, errlen) != 0)
		goto out;
	memset(&job, 0, sizeof job);
	job.probe = probe;
	job.space_file = space;
	job.workload_file = workload;
	job.warm_from = current;
	job.out_dir = dir;
	job.progress = o->progress;
	v = cJSON_GetObjectItemCaseSensitive(h, "strategy");
	job.strategy = cJSON_IsString(v) ? v->valuestring : NULL;
	v = cJSON_GetObjectItemCaseSensitive(h, "budget");
	job.budget = cJSON_IsNumber(v) ? (long)v->valuedouble : 0;
	v = cJSON_GetObjectItemCaseSensitive(h, "seed");
	job.has_seed = cJSON_IsNumber(v) && v->valuedouble >= 0;
	job.seed = job.has_seed ? (unsigned long)v->valuedouble : 0;
	v = cJSON_GetObjectItemCaseSensitive(h, "time_limit_s");
	job.time_limit_s = cJSON_IsNumber(v) ? v->valuedouble : 0;
	v = cJSON_GetObjectItemCaseSensitive(h, "timeout_s");
	job.timeout_s = cJSON_IsNumber(v) ? v->valuedouble : 0;
	rc = tune(&job, err, errlen);
out:
	free(probe);
	return rc;
}

/* Install the result in dir when it is measured and shown to be faster; remove what was
 * installed when it is measured and is not; nothing for a model. */
static int deploy(const char *dir, const struct nccltune_retune_options *o, FILE *out,
                  char *err, size_t errlen)
{
	struct nccltune_install_options io = o->install;
	struct summary *s = NULL;
	char written[PATH_MAX + 64];
	bool sets, faster;
	int rc;

	if (summary_load(dir, 0, &s, err, errlen) < 0)
		return NCCLTUNE_USAGE;
	io.allow_model = 0;
	io.notes = out;
	sets = s->best.present && (s->best.env.n > 0 || export_uses_plugin(s));
	faster = sets && s->baseline.present && s->has_gain && s->gain >= 1.005 &&
	         !summary_gain_unproven(s);
	if (s->model) {
		fprintf(out, "retune: %s is a MODEL result (%s), not a measurement: nothing "
		        "installed, ever\n", dir, s->model);
		rc = NCCLTUNE_OK;
	} else if (faster) {
		rc = nccltune_install(dir, &io, written, sizeof written, err, errlen);
		if (rc == NCCLTUNE_OK)
			fprintf(out, "retune: installed %s's environment into %s\n", dir, written);
	} else {
		rc = nccltune_uninstall(&io, written, sizeof written, err, errlen);
		if (rc == NCCLTUNE_OK)
			fprintf(out, "retune: %s is not shown to be faster than NCCL's defaults: nothing "
			        "installed%s%s\n", dir, written[0] ? "; removed the environment "
			        "installed for the machine before, from " : "", written);
	}
	summary_destroy(s);
	return rc;
}

int retune_run(const char *state, const struct nccltune_retune_options *o,
               retune_tune_fn tune, FILE *out, char *err, size_t errlen)
{
	char cur[PATH_MAX + 16], prev[PATH_MAX + 16], old[PATH_MAX], real[PATH_MAX];
	char dir[PATH_MAX], rel[128];
	cJSON *h = NULL;
	struct stat st;
	ssize_t n;
	int fd = -1, rc;

	if (o->init_from)
		return init_state(state, o->init_from, out, err, errlen);
	snprintf(cur, sizeof cur, "%s/current", state);
	snprintf(prev, sizeof prev, "%s/previous", state);
	if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) {
		fs_errf(err, errlen, "%s: %s; create it with nccltune retune --init %s --from SESSION "
		        "(the session whose result is in use)", cur,
		        lstat(cur, &st) != 0 ? "missing" : "not a symlink", state);
		return NCCLTUNE_USAGE;
	}
	if (lock_state(state, &fd, err, errlen) != 0)
		return NCCLTUNE_ERROR;
	n = readlink(cur, old, sizeof old - 1);
	if (n <= 0 || !realpath(cur, real)) {
		fs_errf(err, errlen, "%s: a link to nothing (%s)", cur, strerror(errno));
		rc = NCCLTUNE_USAGE;
		goto out;
	}
	old[n] = '\0';
	rc = nccltune_check(real, NULL, out, err, errlen);
	if (rc == NCCLTUNE_OK) {
		fprintf(out, "retune: %s is still the machine %s tuned: nothing to do\n", state, real);
		goto out;
	}
	if (rc != NCCLTUNE_CHANGED)
		goto out;   /* cannot measure (1) or a bad session (2): nothing changes */
	h = read_header(real, err, errlen);
	rc = NCCLTUNE_USAGE;
	if (!h || check_pins(h, real, err, errlen) != 0)
		goto out;
	rc = NCCLTUNE_ERROR;
	if (new_session_dir(state, dir, sizeof dir, rel, sizeof rel, err, errlen) != 0)
		goto out;
	fprintf(out, "retune: the machine changed: re-tuning into %s with the probe, space and "
	        "workload of %s, warm-started from it\n", dir, real);
	fflush(out);
	rc = run_job(h, real, dir, o, tune, err, errlen);
	if (rc != NCCLTUNE_OK)
		goto out;   /* current stays; the folder is left to look at (or resume) */
	rc = deploy(dir, o, out, err, errlen);
	if (rc != NCCLTUNE_OK)
		goto out;
	rc = NCCLTUNE_ERROR;
	if (link_atomic(old, prev, err, errlen) != 0 || link_atomic(rel, cur, err, errlen) != 0)
		goto out;
	fprintf(out, "retune: %s -> %s, previous -> %s; restart the server to use it (NCCL reads "
	        "its variables once per process)\n", cur, rel, old);
	rc = NCCLTUNE_OK;
out:
	cJSON_Delete(h);
	if (fd >= 0)
		close(fd);
	return rc;
}
