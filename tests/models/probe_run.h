/* probe_run.h - run nccltune-model-probe from a test: argv and exactly the given
 * environment, stdout and stderr captured, every report parsed with the tuner's strict
 * parser (proto_report_parse). Header-only for the model tests. */
#ifndef NCCLTUNE_TEST_MODELS_PROBE_RUN_H
#define NCCLTUNE_TEST_MODELS_PROBE_RUN_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"
#include "fsutil.h"
#include "proto.h"

#define PR_OUTMAX (1 << 20)

struct pr_result {
	int rc;                      /* exit status, -1 when it did not exit */
	char out[PR_OUTMAX];         /* stdout */
	char err[PR_OUTMAX];         /* stderr */
	bool parsed;                 /* out parsed as a report into r */
	struct proto_report r;
};

static char pr_probe[1024], pr_tmpdir[256];

/* Read fd until EOF into buf (NUL-terminated). */
static inline void pr_slurp(int fd, char *buf, size_t len)
{
	size_t used = 0;

	for (;;) {
		ssize_t n = read(fd, buf + used, len - 1 - used);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (used += (size_t)n) == len - 1)
			break;
	}
	buf[used] = '\0';
}

/* Run the probe with args (NULL-ended, without argv[0]) and env (NULL-ended). With
 * parse, stdout must be a report the strict parser accepts (checked). */
static inline void pr_run(const char *const *args, const char *const *env, bool parse,
                          struct pr_result *res)
{
	char *argv[48], errfile[300], perr[512];
	int fd[2], status = 0, efd;
	size_t n = 0;
	pid_t pid;

	proto_report_clear(&res->r);
	memset(res, 0, sizeof *res);
	res->rc = -1;
	argv[n++] = pr_probe;
	for (; args[n - 1] && n < 47; n++)
		argv[n] = (char *)(uintptr_t)args[n - 1];
	argv[n] = NULL;
	snprintf(errfile, sizeof errfile, "%s/stderr.txt", pr_tmpdir);
	efd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (efd < 0 || pipe(fd) != 0) {
		CHECK(!"pipe/open");
		return;
	}
	pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		dup2(efd, 2);
		close(fd[0]);
		execve(pr_probe, argv, (char *const *)(uintptr_t)env);
		_exit(127);
	}
	close(fd[1]);
	close(efd);
	pr_slurp(fd[0], res->out, sizeof res->out);
	close(fd[0]);
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status))
		res->rc = WEXITSTATUS(status);
	efd = open(errfile, O_RDONLY);
	if (efd >= 0) {
		pr_slurp(efd, res->err, sizeof res->err);
		close(efd);
	}
	unlink(errfile);
	if (!parse)
		return;
	if (proto_report_parse(res->out, strlen(res->out), &res->r, perr, sizeof perr) == 0) {
		res->parsed = true;
	} else {
		CHECK(!"the report parses (proto_report_parse)");
		fprintf(stderr, "  %s\n  in: %.2000s\n  stderr: %.2000s\n", perr, res->out, res->err);
	}
}

/* Write text to DIR/name; the path into path. */
static inline void pr_write(const char *name, const char *text, char *path, size_t len)
{
	char err[256];

	snprintf(path, len, "%s/%s", pr_tmpdir, name);
	CHECK_INT(fs_write_atomic(path, text, strlen(text), 0644, err, sizeof err), 0);
}

/* Set pr_probe from NCCLTUNE_BUILD_ROOT and make the temporary folder. Returns 0 or -1. */
static inline int pr_setup(void)
{
	const char *build = getenv("NCCLTUNE_BUILD_ROOT");
	char templ[] = "/tmp/nccltune-model-test-XXXXXX";

	snprintf(pr_probe, sizeof pr_probe, "%s/models/nccltune-model-probe", build ? build : "../..");
	if (access(pr_probe, X_OK) != 0) {
		fprintf(stderr, "no probe at %s (set NCCLTUNE_BUILD_ROOT)\n", pr_probe);
		return -1;
	}
	if (!mkdtemp(templ)) {
		fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
		return -1;
	}
	snprintf(pr_tmpdir, sizeof pr_tmpdir, "%s", templ);
	return 0;
}

/* Remove the temporary folder and the files in it. */
static inline void pr_cleanup(void)
{
	DIR *d = opendir(pr_tmpdir);
	struct dirent *e;
	char path[600];

	while (d && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", pr_tmpdir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(pr_tmpdir);
}

#endif
