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
 * The session itself is run by the session stage, through `tune`.
 *
 * Trust: a re-tune runs (often as root) the probe a journal records and installs what a
 * session folder holds, so STATE and every folder on the way to it, STATE/sessions and
 * the session in use (and the folders on the way to it) must be changeable by nobody but
 * root and the caller (workflows/trust.h), the lock and the links are opened from
 * STATE's descriptor without following links, and the session's journal is opened once,
 * checked and read from that descriptor. --init validates a session exactly as every
 * later re-tune does (session_open). The new session and the links change as one step:
 * the links first, then the install; when the install fails the links go back. */
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
#include "jsonread.h"
#include "result/record.h"
#include "result/summary.h"
#include "workflows/check.h"
#include "workflows/export.h"
#include "workflows/trust.h"

#define HEADER_MAX (16u << 20)   /* the journal's first line */

/* Point STATE/name (dirfd: STATE, `state` its path for messages) at `target`
 * atomically: a new symlink renamed over the old one, then the folder synced. */
static int link_atomic(int dirfd, const char *state, const char *target, const char *name,
                       char *err, size_t errlen)
{
	char tmp[64];

	snprintf(tmp, sizeof tmp, "%s.new", name);
	if (unlinkat(dirfd, tmp, 0) != 0 && errno != ENOENT)
		return fs_errf(err, errlen, "%s/%s: cannot remove it: %s", state, tmp,
		               strerror(errno));
	if (symlinkat(target, dirfd, tmp) != 0)
		return fs_errf(err, errlen, "%s/%s: cannot create a link to %s: %s", state, tmp,
		               target, strerror(errno));
	if (renameat(dirfd, tmp, dirfd, name) != 0) {
		fs_errf(err, errlen, "%s/%s: cannot replace it: %s", state, name, strerror(errno));
		(void)unlinkat(dirfd, tmp, 0);
		return -1;
	}
	(void)fsync(dirfd);
	return 0;
}

/* STATE/name's target into buf; 1 when it is a link, 0 when there is none, -1 with a
 * message for anything else there. */
static int link_read(int dirfd, const char *state, const char *name, char *buf, size_t len,
                     char *err, size_t errlen)
{
	struct stat st;
	ssize_t n;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : fs_errf(err, errlen, "%s/%s: %s", state, name,
		                                     strerror(errno));
	if (!S_ISLNK(st.st_mode))
		return fs_errf(err, errlen, "%s/%s: not a symlink", state, name);
	n = readlinkat(dirfd, name, buf, len - 1);
	if (n <= 0 || (size_t)n >= len - 1)
		return fs_errf(err, errlen, "%s/%s: unreadable link", state, name);
	buf[n] = '\0';
	return 1;
}

/* Take STATE/lock (never waiting), opened from STATE's descriptor without following a
 * link and created only as a new file: *fd holds it until closed. */
static int lock_state(int dirfd, const char *state, int *fd, char *err, size_t errlen)
{
	char path[PATH_MAX + 16], why[PATH_MAX + 256];
	struct stat st;

	snprintf(path, sizeof path, "%s/lock", state);
	*fd = openat(dirfd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
	             0600);
	if (*fd < 0)
		return fs_errf(err, errlen, "%s: cannot open it: %s", path, errno == ELOOP
		               ? "a symbolic link (refused: the lock must be a file of the state "
		               "folder)" : strerror(errno));
	if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    (st.st_uid != 0 && st.st_uid != geteuid())) {
		fs_errf(why, sizeof why, "%s: not a plain file of root's or yours with one name "
		        "(refused)", path);
		fs_errf(err, errlen, "%s", why);
		goto fail;
	}
	if (flock(*fd, LOCK_EX | LOCK_NB) != 0) {
		fs_errf(err, errlen, "%s: %s", path, errno == EWOULDBLOCK
		        ? "held by another nccltune retune of this state folder; nothing done"
		        : strerror(errno));
		goto fail;
	}
	return 0;
fail:
	close(*fd);
	*fd = -1;
	return -1;
}

/* STATE opened as a trusted folder (trust.h), with STATE/sessions in it trusted too.
 * A descriptor, or -1 with a message. */
static int state_open(const char *state, char *err, size_t errlen)
{
	char why[PATH_MAX + 256], sessions[PATH_MAX + 16];
	int fd = trust_open_dir(state, why, sizeof why), sfd = -1;

	snprintf(sessions, sizeof sessions, "%s/sessions", state);
	if (fd >= 0 && faccessat(fd, "sessions", F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (sfd = trust_open_dir(sessions, why, sizeof why)) < 0) {
		close(fd);
		fd = -1;
	}
	if (sfd >= 0)
		close(sfd);
	if (fd < 0)
		fs_errf(err, errlen, "%s: refused: %s; a re-tune runs the probe a session records "
		        "and installs its result, so the state folder, its sessions and every folder "
		        "on the way must be changeable by nobody but root and you (chown root, chmod "
		        "go-w)", state, why);
	return fd;
}

static char *probe_command(const cJSON *h, char *err, size_t errlen);

/* The header record_header_parse read, kept (a copy of the record), with the space the
 * re-tune needs; -1 with a message otherwise. */
static int keep_header(void *ctx, struct jr *r, const struct record_header *h)
{
	cJSON **out = ctx;

	if (!h->space)
		return jr_fail(r, "the session records no space (a re-tune searches it again)");
	*out = cJSON_Duplicate(h->doc, true);
	if (!*out)
		return jr_fail(r, "out of memory");
	return 0;
}

/* The first line of the journal (fd, read here and closed), read by the journal's own
 * reader (result/record.h); NULL with a message unless it is a session header with its
 * probe, space and workload. */
static cJSON *read_header(int fd, const char *path, char *err, size_t errlen)
{
	static const struct record_visitor keep = {keep_header, NULL, NULL};
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	cJSON *h = NULL;
	FILE *f = fdopen(fd, "r");

	if (!f) {
		fs_errf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	n = getline(&line, &cap, f);
	if (n <= 0 || (size_t)n >= HEADER_MAX) {
		fs_errf(err, errlen, "%s:1: no session header with its probe, space and workload",
		        path);
	} else if (record_header_parse(path, line, (size_t)n, &keep, &h, err, errlen) != 0) {
		cJSON_Delete(h);
		h = NULL;
	}
	free(line);
	fclose(f);
	return h;
}

/* The program a recorded probe command starts must be trusted like the session: a
 * probe that another user can replace runs their code. 0, or -1 with a message. */
static int probe_trusted(const cJSON *h, char *err, size_t errlen)
{
	const cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(h, "probe"), 0);
	char prog[PATH_MAX], why[PATH_MAX + 256], *moved;
	int rc;

	if (!cJSON_IsString(w))
		return fs_errf(err, errlen, "the recorded probe is empty");
	moved = check_relocate_tool(w->valuestring);
	rc = trust_which(moved ? moved : w->valuestring, prog, sizeof prog, why, sizeof why);
	if (rc == 0)
		rc = trust_check_path(prog, why, sizeof why);
	free(moved);
	if (rc != 0)
		return fs_errf(err, errlen, "the recorded probe: %s; a re-tune runs it, so it must "
		               "be changeable by nobody but root and you", why);
	return 0;
}

/* The one validation of a session for --init and for every re-tune: the folder (real
 * path) and the folders on the way trusted, its journal opened once from that folder
 * without following a link, the header read from that descriptor with a probe that can
 * be run and is trusted, and the session as check reads it with a saved fingerprint.
 * Returns the header (caller deletes; *model: a model's session, when model is not
 * NULL), or NULL with a message (NCCLTUNE_USAGE). */
static cJSON *session_open(const char *real, bool *model, char *err, size_t errlen)
{
	char why[PATH_MAX + 512], path[PATH_MAX + 32];
	struct summary *s = NULL;
	cJSON *h = NULL;
	char *probe = NULL;
	int dfd, fd = -1;

	snprintf(path, sizeof path, "%s/journal.jsonl", real);
	dfd = trust_open_dir(real, why, sizeof why);
	if (dfd >= 0)
		fd = trust_open_file(dfd, real, "journal.jsonl", why, sizeof why);
	if (dfd >= 0)
		close(dfd);
	if (fd < 0) {
		fs_errf(err, errlen, "%s: refused: %s; a re-tune runs the probe command the "
		        "session's journal records, so the session folder and every folder on the way "
		        "must be changeable by nobody but root and you (copy the session into a folder "
		        "of yours, e.g. STATE/sessions, and --init from there)", real, why);
		return NULL;
	}
	h = read_header(fd, path, err, errlen);
	if (!h || !(probe = probe_command(h, err, errlen)) || probe_trusted(h, err, errlen) != 0)
		goto fail;
	if (summary_load(real, SUMMARY_JOURNAL | SUMMARY_PARTIAL, &s, err, errlen) < 0)
		goto fail;
	if (!s->fp.present || !s->probe_argv) {
		fs_errf(err, errlen, "%s: the session records no %s, so a re-tune could not compare "
		        "or repeat it", real, s->fp.present ? "probe" : "fingerprint");
		goto fail;
	}
	if (model)
		*model = s->model != NULL;
	summary_destroy(s);
	free(probe);
	return h;
fail:
	summary_destroy(s);
	free(probe);
	cJSON_Delete(h);
	return NULL;
}

static int init_state(const char *state, const char *from, FILE *out, char *err,
                      size_t errlen)
{
	char real[PATH_MAX], dir[PATH_MAX + 16];
	struct stat st;
	bool model = false;
	cJSON *h = NULL;
	int sfd = -1, rc = NCCLTUNE_USAGE;

	if (!realpath(from, real)) {
		fs_errf(err, errlen, "--from %s: %s", from, strerror(errno));
		return NCCLTUNE_USAGE;
	}
	h = session_open(real, &model, err, errlen);
	if (!h)
		goto out;
	snprintf(dir, sizeof dir, "%s/sessions", state);
	rc = NCCLTUNE_ERROR;
	if (fs_mkdirs(dir, err, errlen) != 0)
		goto out;
	rc = NCCLTUNE_USAGE;
	sfd = state_open(state, err, errlen);
	if (sfd < 0)
		goto out;
	if (fstatat(sfd, "current", &st, AT_SYMLINK_NOFOLLOW) == 0) {
		fs_errf(err, errlen, "%s/current exists already; a state folder is initialised once "
		        "(remove the link to start over)", state);
		goto out;
	}
	rc = NCCLTUNE_ERROR;
	if (link_atomic(sfd, state, real, "current", err, errlen) != 0)
		goto out;
	fprintf(out, "retune: %s/current -> %s%s\n", state, real,
	        model ? " (a MODEL session: its re-tunes are never installed)" : "");
	rc = NCCLTUNE_OK;
out:
	cJSON_Delete(h);
	if (sfd >= 0)
		close(sfd);
	return rc;
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

/* A new folder STATE/sessions/<UTC time>[-N] (created from STATE's descriptor) into
 * dir, its name relative to STATE into rel. */
static int new_session_dir(int sfd, const char *state, char *dir, size_t len, char *rel,
                           size_t rlen, char *err, size_t errlen)
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
		if (mkdirat(sfd, rel, 0755) == 0)
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

/* Point current at rel and previous at old (current's target) before the install, so
 * that a link that cannot be replaced fails before anything is installed; *prev_had
 * and prev (previous's old target) let relink_undo put both back. */
static int relink(int sfd, const char *state, const char *old, const char *rel, char *prev,
                  size_t plen, int *prev_had, char *err, size_t errlen)
{
	char e[256];

	*prev_had = link_read(sfd, state, "previous", prev, plen, err, errlen);
	if (*prev_had < 0 || link_atomic(sfd, state, old, "previous", err, errlen) != 0)
		return -1;
	if (link_atomic(sfd, state, rel, "current", err, errlen) == 0)
		return 0;
	if (*prev_had ? link_atomic(sfd, state, prev, "previous", e, sizeof e) != 0
	              : unlinkat(sfd, "previous", 0) != 0) {
		size_t n = strlen(err);

		snprintf(err + n, errlen - n, "; and %s/previous could not be put back", state);
	}
	return -1;
}

/* Undo relink after a failed install: current back to old, previous as it was. Says on
 * err (after its message) what could not be put back. */
static void relink_undo(int sfd, const char *state, const char *old, const char *prev,
                        int prev_had, char *err, size_t errlen)
{
	char e[512];
	size_t n = strlen(err);

	if (link_atomic(sfd, state, old, "current", e, sizeof e) != 0)
		snprintf(err + n, errlen - n, "; and %s/current could not be put back to %s: %s",
		         state, old, e);
	else if (prev_had ? link_atomic(sfd, state, prev, "previous", e, sizeof e) != 0
	                  : unlinkat(sfd, "previous", 0) != 0)
		snprintf(err + n, errlen - n, "; and %s/previous could not be put back", state);
	else
		snprintf(err + n, errlen - n, "; %s/current still points at %s", state, old);
}

int retune_run(const char *state, const struct nccltune_retune_options *o,
               retune_tune_fn tune, FILE *out, char *err, size_t errlen)
{
	char old[PATH_MAX], prev[PATH_MAX], real[PATH_MAX], target[2 * PATH_MAX + 2];
	char dir[PATH_MAX], rel[128];
	cJSON *h = NULL;
	int fd = -1, sfd, rc = NCCLTUNE_USAGE, prev_had = 0, has;

	if (o->init_from)
		return init_state(state, o->init_from, out, err, errlen);
	if (access(state, F_OK) != 0 && errno == ENOENT) {
		sfd = -1;
		has = 0;
	} else if ((sfd = state_open(state, err, errlen)) < 0) {
		return NCCLTUNE_USAGE;
	} else {
		has = link_read(sfd, state, "current", old, sizeof old, err, errlen);
	}
	if (has <= 0) {
		char e[PATH_MAX + 64];

		snprintf(e, sizeof e, "%s", has == 0 ? "missing" : "not a symlink");
		char cmd[2 * PATH_MAX];

		fs_errf(err, errlen, "%s/current: %s; create it with %s --from SESSION (the "
		        "session whose result is in use)", state, e,
		        summary_command(cmd, sizeof cmd, "retune --init", state));
		goto out;
	}
	rc = NCCLTUNE_ERROR;
	if (lock_state(sfd, state, &fd, err, errlen) != 0)
		goto out;
	snprintf(target, sizeof target, "%s%s%s", old[0] == '/' ? "" : state,
	         old[0] == '/' ? "" : "/", old);
	if (!realpath(target, real)) {
		fs_errf(err, errlen, "%s/current: a link to nothing (%s)", state, strerror(errno));
		rc = NCCLTUNE_USAGE;
		goto out;
	}
	/* the session in use, validated as --init did, before its probe runs */
	rc = NCCLTUNE_USAGE;
	h = session_open(real, NULL, err, errlen);
	if (!h)
		goto out;
	rc = nccltune_check(real, NULL, out, err, errlen);
	if (rc == NCCLTUNE_OK) {
		fprintf(out, "retune: the machine still matches the session in use (%s, from "
		        "%s/current): nothing to do\n", real, state);
		goto out;
	}
	if (rc != NCCLTUNE_CHANGED)
		goto out;   /* cannot measure (1) or a bad session (2): nothing changes */
	rc = NCCLTUNE_USAGE;
	if (check_pins(h, real, err, errlen) != 0)
		goto out;
	rc = NCCLTUNE_ERROR;
	if (new_session_dir(sfd, state, dir, sizeof dir, rel, sizeof rel, err, errlen) != 0)
		goto out;
	fprintf(out, "retune: the machine changed: re-tuning into %s with the probe, space and "
	        "workload of %s, warm-started from it\n", dir, real);
	fflush(out);
	rc = run_job(h, real, dir, o, tune, err, errlen);
	if (rc != NCCLTUNE_OK)
		goto out;   /* current stays; the folder is left to look at (or resume) */
	/* one step: the links first (a link that cannot be replaced stops it before anything
	 * is installed), then the install; a failed install puts the links back */
	rc = NCCLTUNE_ERROR;
	if (relink(sfd, state, old, rel, prev, sizeof prev, &prev_had, err, errlen) != 0)
		goto out;
	rc = deploy(dir, o, out, err, errlen);
	if (rc != NCCLTUNE_OK) {
		relink_undo(sfd, state, old, prev, prev_had, err, errlen);
		goto out;
	}
	fprintf(out, "retune: %s/current -> %s, previous -> %s; restart the server to use it "
	        "(NCCL reads its variables once per process)\n", state, rel, old);
	rc = NCCLTUNE_OK;
out:
	cJSON_Delete(h);
	if (fd >= 0)
		close(fd);
	if (sfd >= 0)
		close(sfd);
	return rc;
}
