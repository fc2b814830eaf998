/* runner.c - the only place nccltune forks: start a probe in its own process group,
 * read its stdout and stderr concurrently under size caps, enforce its deadline
 * (SIGTERM to the group, a grace period, SIGKILL), always reap it, have the reaper end
 * what escaped its group (run/reaper.c), and classify what it came to. Also shell-like
 * command splitting and finding nccltune's own tools. */
#include "run/runner.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"

#define RUNNER_STDOUT_CAP (1u << 20)
#define RUNNER_STDERR_CAP (64u << 10)
#define RUNNER_GRACE_S 2.0          /* SIGTERM -> SIGKILL: time for a probe to free its GPUs */
#define RUNNER_LINGER_S 0.2         /* after the child exits, for its pipes to close */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void runner_result_free(struct runner_result *res)
{
	if (!res)
		return;
	free(res->out);
	free(res->err);
	res->out = NULL;
	res->err = NULL;
	res->out_len = 0;
	res->err_len = 0;
}

/* The value of PATH in envp, else the tuner's own, else a default. */
static const char *path_of(char *const *envp)
{
	const char *p;

	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], "PATH=", 5) == 0)
			return envp[i] + 5;
	p = getenv("PATH");
	return p ? p : "/usr/local/bin:/usr/bin:/bin";
}

static bool is_executable_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Look `name` up in the colon-separated `path`. Returns 0 with the result in buf. */
static int search_path(const char *name, const char *path, char *buf, size_t len)
{
	const char *p = path;

	while (p) {
		const char *colon = strchr(p, ':');
		size_t dlen = colon ? (size_t)(colon - p) : strlen(p);
		int n;

		if (dlen == 0)
			n = snprintf(buf, len, "./%s", name);
		else
			n = snprintf(buf, len, "%.*s/%s", (int)dlen, p, name);
		if (n > 0 && (size_t)n < len && is_executable_file(buf))
			return 0;
		p = colon ? colon + 1 : NULL;
	}
	return -1;
}

int runner_check_command(char *const *argv, char *const *envp, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct stat st;

	if (!argv || !argv[0] || !argv[0][0])
		return fs_errf(err, errlen, "empty command");
	if (!strchr(argv[0], '/')) {
		if (search_path(argv[0], path_of(envp), path, sizeof path) != 0)
			return fs_errf(err, errlen, "%s: command not found in PATH", argv[0]);
		return 0;
	}
	if (stat(argv[0], &st) != 0)
		return fs_errf(err, errlen, "%s: %s", argv[0], strerror(errno));
	if (!S_ISREG(st.st_mode) || access(argv[0], X_OK) != 0)
		return fs_errf(err, errlen, "%s: not an executable file", argv[0]);
	return 0;
}

/* Append up to n bytes of data to a buffer that keeps the FIRST cap bytes. */
static int keep_head(char **buf, size_t *len, size_t *alloc, size_t cap, bool *trunc,
                     const char *data, size_t n)
{
	size_t take = n;

	if (*len + take > cap) {
		take = cap - *len;
		*trunc = true;
	}
	if (take == 0)
		return 0;
	if (*len + take + 1 > *alloc) {
		size_t na = *alloc ? *alloc : 4096;
		char *nb;

		while (na < *len + take + 1)
			na *= 2;
		if (na > cap + 1)
			na = cap + 1;
		nb = realloc(*buf, na);
		if (!nb)
			return -1;
		*buf = nb;
		*alloc = na;
	}
	memcpy(*buf + *len, data, take);
	*len += take;
	(*buf)[*len] = '\0';
	return 0;
}

/* Append to a buffer that keeps the LAST cap bytes. */
static int keep_tail(char **buf, size_t *len, size_t cap, const char *data, size_t n)
{
	if (!*buf) {
		*buf = malloc(cap + 1);
		if (!*buf)
			return -1;
		*len = 0;
		(*buf)[0] = '\0';
	}
	if (n >= cap) {
		memcpy(*buf, data + (n - cap), cap);
		*len = cap;
	} else {
		if (*len + n > cap) {
			size_t drop = *len + n - cap;

			memmove(*buf, *buf + drop, *len - drop);
			*len -= drop;
		}
		memcpy(*buf + *len, data, n);
		*len += n;
	}
	(*buf)[*len] = '\0';
	return 0;
}

/* The child side between fork and exec: only async-signal-safe calls. */
static void child_exec(const char *path, char *const *argv, char *const *envp, int out_fd,
                       int err_fd, int status_fd, pid_t parent)
{
	static const int reset[] = {SIGINT, SIGTERM, SIGQUIT, SIGPIPE, SIGCHLD, SIGHUP};
	struct sigaction sa;
	sigset_t none;
	int devnull, e;

	setpgid(0, 0);
	/* A tuner killed outright (SIGKILL, OOM) must not leave its probe holding GPUs:
	 * the probe dies with it. Checked again after the call, in case the tuner died
	 * between fork and here. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(127);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	for (size_t i = 0; i < sizeof reset / sizeof reset[0]; i++)
		sigaction(reset[i], &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	devnull = open("/dev/null", O_RDONLY);
	if (devnull >= 0 && devnull != STDIN_FILENO) {
		dup2(devnull, STDIN_FILENO);
		close(devnull);
	}
	if (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(err_fd, STDERR_FILENO) < 0)
		goto fail;
	execve(path, argv, envp);
fail:
	e = errno;
	if (write(status_fd, &e, sizeof e) < 0) {
		/* nothing more can be reported from here */
	}
	_exit(127);
}

/* A child being run: its process (the group leader), the read ends of its pipes and
 * what runner_run's steps share. */
struct child {
	pid_t pid;              /* > 0 until reaped */
	int outp[2], errp[2], statp[2];   /* stdout, stderr, exec status; -1: closed */
	char *chunk;            /* read buffer */
	size_t out_cap, err_cap, out_alloc;
	double start;           /* monotonic clock at the fork */
	bool exited, killed;    /* exited: a zombie (waitid WNOWAIT) not yet reaped */
	double exit_at, term_at;   /* when it exited / was sent SIGTERM; -1: not yet */
};

/* The path to execute for req->argv[0]: as given when it has a '/', else from PATH.
 * Returns 1 with the path, 0 with res->spawn_error when it is not in PATH, or -1 with
 * a message in err. */
static int command_path(const struct runner_request *req, struct runner_result *res,
                        char *path, size_t len, char *err, size_t errlen)
{
	if (!req->argv || !req->argv[0] || !req->argv[0][0])
		return fs_errf(err, errlen, "runner: empty command");
	if (strchr(req->argv[0], '/')) {
		if (snprintf(path, len, "%s", req->argv[0]) >= (int)len)
			return fs_errf(err, errlen, "runner: command path too long");
	} else if (search_path(req->argv[0], path_of(req->envp), path, len) != 0) {
		snprintf(res->spawn_error, sizeof res->spawn_error, "%s: command not found in PATH",
		         req->argv[0]);
		return 0;
	}
	return 1;
}

/* Fork and exec path. Returns 0 with the child running (res->spawned), 1 when it could
 * not be executed (res->spawn_error; already reaped), or -1 with a message in err. */
static int child_spawn(struct child *c, const char *path, const struct runner_request *req,
                       struct runner_result *res, char *err, size_t errlen)
{
	int status = 0, child_errno = 0;
	pid_t parent;
	ssize_t n;

	if (pipe2(c->outp, O_CLOEXEC) != 0 || pipe2(c->errp, O_CLOEXEC) != 0 ||
	    pipe2(c->statp, O_CLOEXEC) != 0)
		return fs_errf(err, errlen, "runner: pipe failed: %s", strerror(errno));
	c->start = now_s();
	parent = getpid();
	c->pid = fork();
	if (c->pid < 0)
		return fs_errf(err, errlen, "runner: fork failed: %s", strerror(errno));
	if (c->pid == 0)
		child_exec(path, req->argv, req->envp ? req->envp : (char *const[]){NULL}, c->outp[1],
		           c->errp[1], c->statp[1], parent);
	/* Also here, so the group exists before any killpg whatever the scheduling. */
	if (setpgid(c->pid, c->pid) != 0 && errno != EACCES && errno != ESRCH) {
		/* EACCES: the child already exec'd, having made the group itself */
	}
	close(c->outp[1]);
	close(c->errp[1]);
	close(c->statp[1]);
	c->outp[1] = c->errp[1] = c->statp[1] = -1;
	do {
		n = read(c->statp[0], &child_errno, sizeof child_errno);
	} while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof child_errno) {
		res->spawned = false;
		fs_errf(res->spawn_error, sizeof res->spawn_error, "%s: cannot execute: %s", path,
		        strerror(child_errno));
		while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
			;
		c->pid = -1;
		return 1;
	}
	res->spawned = true;
	return 0;
}

/* Keep n bytes just read from stdout (the head) or stderr (the tail). Returns -1 when
 * out of memory. */
static int child_keep(struct child *c, struct runner_result *res, bool is_out, size_t n)
{
	return is_out ? keep_head(&res->out, &res->out_len, &c->out_alloc, c->out_cap,
	                          &res->out_truncated, c->chunk, n)
	              : keep_tail(&res->err, &res->err_len, c->err_cap, c->chunk, n);
}

/* Note the child's exit (leaving it a zombie), and while it runs, kill its group on a
 * cancel or at the deadline: SIGTERM, then SIGKILL after the grace period. */
static void child_watch(struct child *c, const struct runner_request *req,
                        struct runner_result *res, double t, double deadline)
{
	if (!c->exited) {
		siginfo_t si;

		memset(&si, 0, sizeof si);
		/* WNOWAIT keeps the child a zombie, so its pid (the group id) can't be
		 * reused before the group is killed below. */
		if (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == c->pid) {
			c->exited = true;
			c->exit_at = t;
		}
	}
	if (c->exited)
		return;
	if (req->cancel && *req->cancel && c->term_at < 0) {
		res->cancelled = true;
		killpg(c->pid, SIGTERM);
		c->term_at = t;
	}
	if (t >= deadline && c->term_at < 0) {
		res->timed_out = true;
		killpg(c->pid, SIGTERM);
		c->term_at = t;
	}
	if (c->term_at >= 0 && !c->killed && t - c->term_at >= RUNNER_GRACE_S) {
		killpg(c->pid, SIGKILL);
		c->killed = true;
	}
}

/* Read one ready pipe into res; a pipe at its end is closed. Returns -1 when out of
 * memory. */
static int child_read(struct child *c, const struct pollfd *fd, struct runner_result *res)
{
	bool is_out = fd->fd == c->outp[0];
	ssize_t n;

	if (!(fd->revents & (POLLIN | POLLHUP | POLLERR)))
		return 0;
	n = read(fd->fd, c->chunk, 65536);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0) {
		close(fd->fd);
		if (is_out)
			c->outp[0] = -1;
		else
			c->errp[0] = -1;
		return 0;
	}
	return child_keep(c, res, is_out, (size_t)n);
}

/* Read stdout and stderr while the child runs, enforcing the deadline and the cancel
 * flag, until it has exited and its pipes are closed (or RUNNER_LINGER_S after its exit,
 * when a grandchild holds them). Returns 0, or -1 with a message in err. */
static int child_pump(struct child *c, const struct runner_request *req,
                      struct runner_result *res, char *err, size_t errlen)
{
	double deadline = req->timeout_s > 0 ? c->start + req->timeout_s : INFINITY;

	for (;;) {
		struct pollfd fds[2];
		nfds_t nfds = 0;
		double t = now_s();
		int wait_ms;

		child_watch(c, req, res, t, deadline);
		if (c->exited && c->outp[0] < 0 && c->errp[0] < 0)
			return 0;
		if (c->exited && t - c->exit_at >= RUNNER_LINGER_S)
			return 0;   /* a grandchild holds the pipes: the group is killed after */
		if (c->outp[0] >= 0) {
			fds[nfds].fd = c->outp[0];
			fds[nfds++].events = POLLIN;
		}
		if (c->errp[0] >= 0) {
			fds[nfds].fd = c->errp[0];
			fds[nfds++].events = POLLIN;
		}
		wait_ms = nfds ? 50 : 2;
		if (deadline - t < wait_ms / 1000.0 && deadline > t)
			wait_ms = (int)ceil((deadline - t) * 1000.0);
		if (poll(nfds ? fds : NULL, nfds, wait_ms) < 0) {
			if (errno == EINTR)
				continue;
			return fs_errf(err, errlen, "runner: poll failed: %s", strerror(errno));
		}
		for (nfds_t i = 0; i < nfds; i++)
			if (child_read(c, &fds[i], res) != 0)
				return fs_errf(err, errlen,
				               "runner: out of memory reading the probe's output");
	}
}

/* Kill whatever is left of the group (grandchildren, or everything on an error path)
 * and reap the child, so nothing outlives runner_run; record its wall time and how it
 * ended. Nothing to do when there is no child. */
static void child_reap(struct child *c, struct runner_result *res)
{
	int status = 0;

	if (c->pid <= 0)
		return;
	killpg(c->pid, SIGKILL);
	while (waitpid(c->pid, &status, 0) < 0) {
		if (errno != EINTR) {
			status = -1;
			break;
		}
	}
	res->wall_s = now_s() - c->start;
	if (status != -1 && WIFEXITED(status)) {
		res->exit_status = WEXITSTATUS(status);
	} else if (status != -1 && WIFSIGNALED(status)) {
		res->signal = WTERMSIG(status);
		res->exit_status = -1;
	}
}

/* Output written just before the end is still in the pipes: keep it (what does not fit
 * in memory is dropped). */
static void child_drain(struct child *c, struct runner_result *res)
{
	for (int i = 0; i < 2; i++) {
		int fd = i == 0 ? c->outp[0] : c->errp[0], fl;

		if (fd < 0)
			continue;
		fl = fcntl(fd, F_GETFL);
		if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0)
			continue;
		for (;;) {
			ssize_t n = read(fd, c->chunk, 65536);

			if (n <= 0)
				break;
			child_keep(c, res, i == 0, (size_t)n);
		}
	}
}

static void child_close(struct child *c)
{
	for (int i = 0; i < 2; i++) {
		if (c->outp[i] >= 0)
			close(c->outp[i]);
		if (c->errp[i] >= 0)
			close(c->errp[i]);
		if (c->statp[i] >= 0)
			close(c->statp[i]);
	}
}

int runner_run(const struct runner_request *req, struct runner_result *res,
               char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct child c = {
		.pid = -1, .outp = {-1, -1}, .errp = {-1, -1}, .statp = {-1, -1},
		.out_cap = req->stdout_cap ? req->stdout_cap : RUNNER_STDOUT_CAP,
		.err_cap = req->stderr_cap ? req->stderr_cap : RUNNER_STDERR_CAP,
		.exit_at = -1, .term_at = -1,
	};
	pid_t group;
	int rc;

	memset(res, 0, sizeof *res);
	res->exit_status = -1;
	rc = command_path(req, res, path, sizeof path, err, errlen);
	if (rc <= 0)
		return rc;
	c.chunk = malloc(65536);
	if (!c.chunk)
		return fs_errf(err, errlen, "runner: out of memory");
	rc = child_spawn(&c, path, req, res, err, errlen);
	if (rc == 0)
		rc = child_pump(&c, req, res, err, errlen);
	else if (rc == 1)
		rc = 0;   /* not executable: res->spawned is false, not a failure of the tuner */
	group = c.pid;
	child_reap(&c, res);
	if (group > 0)
		reaper_sweep(req->reaper, group);
	if (rc == 0)
		child_drain(&c, res);
	child_close(&c);
	free(c.chunk);
	if (rc == 0) {
		/* Callers may rely on both buffers existing. */
		if (!res->out)
			res->out = calloc(1, 1);
		if (!res->err)
			res->err = calloc(1, 1);
		if (!res->out || !res->err) {
			runner_result_free(res);
			return fs_errf(err, errlen, "runner: out of memory");
		}
	} else {
		runner_result_free(res);
	}
	return rc;
}

/* The last lines of stderr that fit in dst (starting at a line boundary when one is
 * within reach, else at a character boundary), with trailing newlines removed, as valid
 * UTF-8 (what is not becomes U+FFFD): it goes into the journal, a JSON file. */
static void stderr_tail(const char *s, size_t len, char *dst, size_t dstlen)
{
	const char *start = s;

	while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r'))
		len--;
	if (len >= dstlen) {
		const char *nl;

		start = s + (len - (dstlen - 1));
		nl = memchr(start, '\n', (size_t)(s + len - start));
		if (nl && nl + 1 < s + len)
			start = nl + 1;
		for (int i = 0; i < 3 && start < s + len && ((unsigned char)*start & 0xc0) == 0x80; i++)
			start++;   /* not in the middle of a character */
	}
	fs_utf8_sanitize(start, (size_t)(s + len - start), dst, dstlen);
}

static void classify(const struct runner_result *res, struct outcome *out);

void runner_classify(const struct runner_result *res, struct outcome *out)
{
	char raw[sizeof out->error];

	classify(res, out);
	/* the probe's words go into the journal: valid UTF-8, cut on a character */
	memcpy(raw, out->error, sizeof raw);
	fs_utf8_sanitize(raw, strnlen(raw, sizeof raw), out->error, sizeof out->error);
	memcpy(raw, out->report.error, sizeof raw);
	fs_utf8_sanitize(raw, strnlen(raw, sizeof raw), out->report.error, sizeof out->report.error);
}

/* runner_classify before the text is made valid UTF-8. */
static void classify(const struct runner_result *res, struct outcome *out)
{
	char perr[256];

	memset(out, 0, sizeof *out);
	out->objective_us = NAN;
	out->exit_status = res->exit_status;
	out->signal = res->signal;
	out->wall_s = res->wall_s;
	if (res->err)
		stderr_tail(res->err, res->err_len, out->stderr_tail, sizeof out->stderr_tail);
	if (!res->spawned) {
		out->cls = OUTCOME_SPAWN;
		snprintf(out->error, sizeof out->error, "%s", res->spawn_error);
		return;
	}
	if (res->cancelled) {
		out->cls = OUTCOME_CRASH;
		snprintf(out->error, sizeof out->error, "stopped: the tuner was interrupted");
		return;
	}
	if (res->timed_out) {
		out->cls = OUTCOME_TIMEOUT;
		snprintf(out->error, sizeof out->error,
		         "no result before its deadline; process group killed after %.1f s",
		         res->wall_s);
		return;
	}
	if (res->signal) {
		out->cls = OUTCOME_CRASH;
		snprintf(out->error, sizeof out->error, "killed by signal %d (%s)", res->signal,
		         strsignal(res->signal));
		return;
	}
	if (res->out_truncated) {
		out->cls = OUTCOME_GARBAGE;
		snprintf(out->error, sizeof out->error, "stdout larger than %zu bytes: not a report",
		         res->out_len);
		return;
	}
	if (proto_report_parse(res->out ? res->out : "", res->out_len, &out->report, perr,
	                       sizeof perr) != 0) {
		out->cls = OUTCOME_GARBAGE;
		if (res->exit_status != 0)
			snprintf(out->error, sizeof out->error,
			         "exited with status %d without a valid report (%s)", res->exit_status,
			         perr);
		else
			snprintf(out->error, sizeof out->error, "invalid report: %s", perr);
		memset(&out->report, 0, sizeof out->report);
		return;
	}
	if (out->report.ok) {
		/* a report that says a watchdog ended its hung teardown after every result:
		 * whole, though a launcher may fail the job for the rank that left */
		if (res->exit_status != 0 && !out->report.teardown_hung) {
			out->cls = OUTCOME_GARBAGE;
			snprintf(out->error, sizeof out->error,
			         "report says ok but the probe exited with status %d", res->exit_status);
			return;
		}
		out->cls = OUTCOME_OK;
		return;
	}
	out->cls = outcome_class_of_stage(out->report.stage);
	snprintf(out->error, sizeof out->error, "%s", out->report.error);
}

void runner_free_argv(char **argv)
{
	if (!argv)
		return;
	for (size_t i = 0; argv[i]; i++)
		free(argv[i]);
	free(argv);
}

int runner_split_command(const char *cmd, char ***argv_out, char *err, size_t errlen)
{
	size_t len = cmd ? strlen(cmd) : 0, argc = 0, cap = 8;
	char **argv = NULL, *word = NULL;
	size_t wl = 0;
	bool in_word = false;
	const char *p = cmd;
	int rc = -1;

	*argv_out = NULL;
	argv = calloc(cap, sizeof *argv);
	word = malloc(len + 1);
	if (!argv || !word) {
		fs_errf(err, errlen, "out of memory splitting the command");
		goto out;
	}
	for (;;) {
		char c = p ? *p : '\0';

		if (c == '\0' || c == ' ' || c == '\t' || c == '\n') {
			if (in_word) {
				if (argc + 2 > cap) {
					char **na = realloc(argv, cap * 2 * sizeof *na);

					if (!na) {
						fs_errf(err, errlen, "out of memory splitting the command");
						goto out;
					}
					argv = na;
					cap *= 2;
				}
				argv[argc] = strndup(word, wl);
				if (!argv[argc]) {
					fs_errf(err, errlen, "out of memory splitting the command");
					goto out;
				}
				argv[++argc] = NULL;
				wl = 0;
				in_word = false;
			}
			if (c == '\0')
				break;
			p++;
			continue;
		}
		if (c == '\\' && p[1] == '\n') {
			p += 2;   /* a line continuation joins, as in sh */
			continue;
		}
		in_word = true;
		if (c == '\'') {
			const char *q = strchr(p + 1, '\'');

			if (!q) {
				fs_errf(err, errlen, "unterminated single quote in command: %s", cmd);
				goto out;
			}
			memcpy(word + wl, p + 1, (size_t)(q - p - 1));
			wl += (size_t)(q - p - 1);
			p = q + 1;
		} else if (c == '"') {
			p++;
			while (*p && *p != '"') {
				/* Inside double quotes a backslash only escapes these, as in sh. */
				if (*p == '\\' && p[1] && strchr("\"\\$`\n", p[1])) {
					if (p[1] != '\n')
						word[wl++] = p[1];
					p += 2;
				} else {
					word[wl++] = *p++;
				}
			}
			if (*p != '"') {
				fs_errf(err, errlen, "unterminated double quote in command: %s", cmd);
				goto out;
			}
			p++;
		} else if (c == '\\') {
			if (!p[1]) {
				fs_errf(err, errlen, "command ends with a lone backslash: %s", cmd);
				goto out;
			}
			word[wl++] = p[1];
			p += 2;
		} else {
			word[wl++] = c;
			p++;
		}
	}
	if (argc == 0) {
		fs_errf(err, errlen, "empty command");
		goto out;
	}
	*argv_out = argv;
	argv = NULL;
	rc = 0;
out:
	runner_free_argv(argv);
	free(word);
	return rc;
}

int runner_find_tool(const char *name, char *buf, size_t len, char *err, size_t errlen)
{
	static const char *const rel[] = {"", "/../probe", "/../models", "/../../probe",
	                                  "/../../models"};
	char var[128], dir[PATH_MAX], looked[1536];
	const char *short_name = name, *over;
	size_t vl, ll = 0;

	if (strncmp(short_name, "nccltune-", 9) == 0)
		short_name += 9;
	vl = (size_t)snprintf(var, sizeof var, "NCCLTUNE_");
	for (const char *c = short_name; *c && vl + 1 < sizeof var; c++)
		var[vl++] = *c == '-' ? '_' : (char)toupper((unsigned char)*c);
	var[vl] = '\0';
	over = getenv(var);
	if (over && *over) {
		if (!is_executable_file(over))
			return fs_errf(err, errlen, "$%s=%s: not an executable file", var, over);
		if (snprintf(buf, len, "%s", over) >= (int)len)
			return fs_errf(err, errlen, "$%s: path too long", var);
		return 0;
	}
	looked[0] = '\0';
	ll = (size_t)snprintf(looked, sizeof looked, "$%s (unset)", var);
	if (fs_program_dir(dir, sizeof dir) == 0) {
		for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
			char cand[PATH_MAX + 64];
			int k = snprintf(cand, sizeof cand, "%s%s/%s", dir, rel[i], name);

			if (k <= 0 || (size_t)k >= sizeof cand)
				continue;
			if (is_executable_file(cand)) {
				char *real = realpath(cand, NULL);
				int w = snprintf(buf, len, "%s", real ? real : cand);

				free(real);
				if (w < 0 || (size_t)w >= len)
					return fs_errf(err, errlen, "%s: path too long", cand);
				return 0;
			}
			if (ll < sizeof looked) {
				k = snprintf(looked + ll, sizeof looked - ll, ", %s%s", dir, rel[i]);
				if (k > 0)
					ll += (size_t)k;
			}
		}
	}
	if (search_path(name, getenv("PATH") ? getenv("PATH") : "", buf, len) == 0)
		return 0;
	return fs_errf(err, errlen, "%s not found: looked in %s%s and PATH", name, looked,
	               ll >= sizeof looked ? "..." : "");
}
