/* runner.c - the only place nccltune forks: start a probe in its own process group,
 * read its stdout and stderr concurrently under size caps, enforce its deadline
 * (SIGTERM to the group, a grace period, SIGKILL), always reap it, and classify what
 * it came to. Also shell-like command splitting and finding nccltune's own tools. */
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

int runner_run(const struct runner_request *req, struct runner_result *res,
               char *err, size_t errlen)
{
	char path[PATH_MAX];
	int outp[2] = {-1, -1}, errp[2] = {-1, -1}, statp[2] = {-1, -1};
	size_t out_cap = req->stdout_cap ? req->stdout_cap : RUNNER_STDOUT_CAP;
	size_t err_cap = req->stderr_cap ? req->stderr_cap : RUNNER_STDERR_CAP;
	size_t out_alloc = 0;
	double start, deadline, term_at = -1, exit_at = -1;
	bool exited = false, killed = false;
	pid_t pid = -1, parent;
	int rc = -1, status = 0, child_errno = 0;
	ssize_t n;
	char *chunk = NULL;

	memset(res, 0, sizeof *res);
	res->exit_status = -1;
	if (!req->argv || !req->argv[0] || !req->argv[0][0])
		return fs_errf(err, errlen, "runner: empty command");
	if (strchr(req->argv[0], '/')) {
		if (snprintf(path, sizeof path, "%s", req->argv[0]) >= (int)sizeof path)
			return fs_errf(err, errlen, "runner: command path too long");
	} else if (search_path(req->argv[0], path_of(req->envp), path, sizeof path) != 0) {
		snprintf(res->spawn_error, sizeof res->spawn_error, "%s: command not found in PATH",
		         req->argv[0]);
		return 0;
	}
	chunk = malloc(65536);
	if (!chunk)
		return fs_errf(err, errlen, "runner: out of memory");
	if (pipe2(outp, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0 ||
	    pipe2(statp, O_CLOEXEC) != 0) {
		fs_errf(err, errlen, "runner: pipe failed: %s", strerror(errno));
		goto out;
	}
	start = now_s();
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		fs_errf(err, errlen, "runner: fork failed: %s", strerror(errno));
		goto out;
	}
	if (pid == 0)
		child_exec(path, req->argv, req->envp ? req->envp : (char *const[]){NULL}, outp[1],
		           errp[1], statp[1], parent);
	/* Also here, so the group exists before any killpg whatever the scheduling. */
	if (setpgid(pid, pid) != 0 && errno != EACCES && errno != ESRCH) {
		/* EACCES: the child already exec'd, having made the group itself */
	}
	close(outp[1]);
	close(errp[1]);
	close(statp[1]);
	outp[1] = errp[1] = statp[1] = -1;
	do {
		n = read(statp[0], &child_errno, sizeof child_errno);
	} while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof child_errno) {
		res->spawned = false;
		fs_errf(res->spawn_error, sizeof res->spawn_error, "%s: cannot execute: %s", path,
		        strerror(child_errno));
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		pid = -1;
		rc = 0;
		goto out;
	}
	res->spawned = true;
	deadline = req->timeout_s > 0 ? start + req->timeout_s : INFINITY;
	for (;;) {
		struct pollfd fds[2];
		nfds_t nfds = 0;
		double t = now_s();
		int wait_ms;

		if (!exited) {
			siginfo_t si;

			memset(&si, 0, sizeof si);
			/* WNOWAIT keeps the child a zombie, so its pid (the group id) can't be
			 * reused before the group is killed below. */
			if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
			    si.si_pid == pid) {
				exited = true;
				exit_at = t;
			}
		}
		if (exited && outp[0] < 0 && errp[0] < 0)
			break;
		if (exited && t - exit_at >= RUNNER_LINGER_S)
			break;   /* a grandchild holds the pipes: the group is killed below */
		if (!exited) {
			if (req->cancel && *req->cancel && term_at < 0) {
				res->cancelled = true;
				killpg(pid, SIGTERM);
				term_at = t;
			}
			if (t >= deadline && term_at < 0) {
				res->timed_out = true;
				killpg(pid, SIGTERM);
				term_at = t;
			}
			if (term_at >= 0 && !killed && t - term_at >= RUNNER_GRACE_S) {
				killpg(pid, SIGKILL);
				killed = true;
			}
		}
		if (outp[0] >= 0) {
			fds[nfds].fd = outp[0];
			fds[nfds++].events = POLLIN;
		}
		if (errp[0] >= 0) {
			fds[nfds].fd = errp[0];
			fds[nfds++].events = POLLIN;
		}
		wait_ms = nfds ? 50 : 2;
		if (deadline - t < wait_ms / 1000.0 && deadline > t)
			wait_ms = (int)ceil((deadline - t) * 1000.0);
		if (poll(nfds ? fds : NULL, nfds, wait_ms) < 0) {
			if (errno == EINTR)
				continue;
			fs_errf(err, errlen, "runner: poll failed: %s", strerror(errno));
			goto out;
		}
		for (nfds_t i = 0; i < nfds; i++) {
			bool is_out = fds[i].fd == outp[0];

			if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(fds[i].fd, chunk, 65536);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				close(fds[i].fd);
				if (is_out)
					outp[0] = -1;
				else
					errp[0] = -1;
				continue;
			}
			if ((is_out ? keep_head(&res->out, &res->out_len, &out_alloc, out_cap,
			                        &res->out_truncated, chunk, (size_t)n)
			            : keep_tail(&res->err, &res->err_len, err_cap, chunk, (size_t)n)) != 0) {
				fs_errf(err, errlen, "runner: out of memory reading the probe's output");
				goto out;
			}
		}
	}
	rc = 0;
out:
	if (pid > 0) {
		/* Whatever is left of the group (grandchildren, or everything on an error
		 * path) goes now; then the child is reaped, so nothing outlives this call. */
		killpg(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0) {
			if (errno != EINTR) {
				status = -1;
				break;
			}
		}
		res->wall_s = now_s() - start;
		if (status != -1 && WIFEXITED(status)) {
			res->exit_status = WEXITSTATUS(status);
		} else if (status != -1 && WIFSIGNALED(status)) {
			res->signal = WTERMSIG(status);
			res->exit_status = -1;
		}
	}
	for (int i = 0; i < 2; i++) {
		int fd = i == 0 ? outp[0] : errp[0];

		/* Output written just before the end is still in the pipe: keep it. */
		if (fd >= 0 && rc == 0) {
			int fl = fcntl(fd, F_GETFL);

			if (fl >= 0 && fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0) {
				for (;;) {
					n = read(fd, chunk, 65536);
					if (n <= 0)
						break;
					if (i == 0)
						keep_head(&res->out, &res->out_len, &out_alloc, out_cap,
						          &res->out_truncated, chunk, (size_t)n);
					else
						keep_tail(&res->err, &res->err_len, err_cap, chunk, (size_t)n);
				}
			}
		}
	}
	for (int i = 0; i < 2; i++) {
		if (outp[i] >= 0)
			close(outp[i]);
		if (errp[i] >= 0)
			close(errp[i]);
		if (statp[i] >= 0)
			close(statp[i]);
	}
	free(chunk);
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
 * within reach), with trailing newlines removed. */
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
	}
	snprintf(dst, dstlen, "%.*s", (int)(s + len - start), start);
}

void runner_classify(const struct runner_result *res, struct outcome *out)
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
		if (res->exit_status != 0) {
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

/* The folder of the running executable, from /proc/self/exe. */
static int exe_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *slash;

	if (n <= 0 || (size_t)n >= len - 1)
		return -1;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
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
	if (exe_dir(dir, sizeof dir) == 0) {
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
