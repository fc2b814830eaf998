/* test_notice.c - the plugin's one stderr line (plugin/notice.c) when NCCLTUNE_TUNER_TABLE
 * names a table it cannot use, as a server sees it: NCCL_DEBUG unset (NCCL's logger then
 * prints nothing, so the logger here drops every message, counting the warnings), each
 * case in a fresh child process whose stderr is a file, the plugin loaded by path, two
 * communicators under ABI v6 and one under v4, a collective, finalize. Missing, a folder,
 * unreadable, invalid, relative, a path with a newline: exactly one line, the same
 * words as the warning, every communicator still warned. A good table, or none named:
 * nothing on stderr. A stderr (pipe or socket) whose reader is gone: no SIGPIPE death and no SIGPIPE
 * left pending; a stderr pipe that is full: init returns at once and writes nothing.
 * Usage: test_plugin_notice PATH-TO-libnccl-tuner-nccltune.so */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"
#include "harness.h"

#define TAIL "; the tuner plugin has no table, NCCL decides every collective\n"

static const char *plugin;
static char dir[] = "/tmp/nccltune-plugin-notice-XXXXXX";
static int warned;   /* warnings NCCL's logger was given (in the child) */

static void silent(int level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
	(void)flags;
	(void)file;
	(void)line;
	(void)fmt;
	warned += level == H_WARN;
}

/* In the child: what NCCL does at init, at a collective and at destroy. Exits with the
 * number of warnings, 100 + n on a harness failure, 99 with a SIGPIPE left pending. */
static void child_run(const char *table)
{
	struct h_plugin p;
	struct h_comm c[3];
	float t[H_NA][H_NP];
	sigset_t pending;
	int nch = 0;

	signal(SIGPIPE, SIG_DFL);   /* as a server has it, whatever the test runner set */
	unsetenv("NCCL_DEBUG");
	unsetenv("NCCL_DEBUG_SUBSYS");
	if (table)
		setenv("NCCLTUNE_TUNER_TABLE", table, 1);
	else
		unsetenv("NCCLTUNE_TUNER_TABLE");
	alarm(30);   /* a blocked write is a failure, not a hung test */
	if (h_open(&p, plugin) != 0)
		_exit(101);
	if (h_init(&c[0], &p, H_V6, 1, 8, 1, silent) != 0 ||
	    h_init(&c[1], &p, H_V6, 2, 8, 1, silent) != 0 ||
	    h_init(&c[2], &p, H_V4, 0, 8, 1, silent) != 0)
		_exit(102);
	h_table(H_PCIE, t);
	if (h_coll(&c[0], 4, 43008, t, H_NA, H_NP, 0, &nch) != 0 || nch != 0)
		_exit(103);
	for (int i = 0; i < 3; i++)
		if (h_fini(&c[i]) != 0)
			_exit(104);
	if (sigpending(&pending) != 0 || sigismember(&pending, SIGPIPE))
		_exit(99);
	_exit(warned);
}

/* Run one case with stderr on `fd` (-1: a file, read back into out). Returns the exit
 * status, or -1 when the child died of a signal (printed). */
static int run_case(const char *table, int fd, char *out, size_t outlen)
{
	char path[300];
	int ofd = -1, status;
	pid_t pid;
	ssize_t n;

	snprintf(path, sizeof path, "%s/stderr", dir);
	if (fd < 0) {
		ofd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		CHECK(ofd >= 0);
		fd = ofd;
	}
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		if (dup2(fd, 2) < 0)
			_exit(105);
		child_run(table);
	}
	if (ofd >= 0)
		close(ofd);
	CHECK(waitpid(pid, &status, 0) == pid);
	if (out) {
		int rfd = open(path, O_RDONLY);

		CHECK(rfd >= 0);
		n = rfd >= 0 ? read(rfd, out, outlen - 1) : -1;
		out[n > 0 ? n : 0] = '\0';
		if (rfd >= 0)
			close(rfd);
	}
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "  the child died of signal %d (table %s)\n", WTERMSIG(status),
		        table ? table : "unset");
		return -1;
	}
	return WEXITSTATUS(status);
}

/* A table the plugin cannot use: one line `want` on stderr, three warnings. */
static void expect_line(const char *table, const char *want)
{
	char out[4096];

	CHECK_INT(run_case(table, -1, out, sizeof out), 3);
	CHECK_STR(out, want);
}

static void bad_tables(void)
{
	char path[300], want[1024];

	snprintf(path, sizeof path, "%s/missing", dir);
	snprintf(want, sizeof want, "nccltune: NCCLTUNE_TUNER_TABLE=%s: cannot open: %s" TAIL, path,
	         strerror(ENOENT));
	expect_line(path, want);
	snprintf(want, sizeof want, "nccltune: NCCLTUNE_TUNER_TABLE=%s: not a regular file "
	         "(a directory)" TAIL, dir);
	expect_line(dir, want);
	snprintf(path, sizeof path, "%s/invalid", dir);
	CHECK_INT(h_write_str(path, "nccltune-tuner/1\nallreduce * * 0 10 rng ll 0 0\n"), 0);
	snprintf(want, sizeof want, "nccltune: NCCLTUNE_TUNER_TABLE=%s: line 2: unknown "
	         "algorithm 'rng'" TAIL, path);
	expect_line(path, want);
	expect_line("tables/t.txt", "nccltune: NCCLTUNE_TUNER_TABLE=tables/t.txt is not an "
	            "absolute path" TAIL);
	/* a newline in the path cannot start a forged line */
	snprintf(path, sizeof path, "%s/x\nnccltune: table ok", dir);
	snprintf(want, sizeof want, "nccltune: NCCLTUNE_TUNER_TABLE=%s/x?nccltune: table ok: "
	         "cannot open: %s" TAIL, dir, strerror(ENOENT));
	expect_line(path, want);
	if (geteuid() != 0) {   /* root reads a mode-000 file */
		snprintf(path, sizeof path, "%s/unreadable", dir);
		CHECK_INT(h_write_str(path, "nccltune-tuner/1\n"), 0);
		CHECK_INT(chmod(path, 0), 0);
		snprintf(want, sizeof want, "nccltune: NCCLTUNE_TUNER_TABLE=%s: cannot open: %s" TAIL,
		         path, strerror(EACCES));
		expect_line(path, want);
	}
}

static void quiet_when_fine(void)
{
	char path[300], out[4096];

	snprintf(path, sizeof path, "%s/good", dir);
	CHECK_INT(h_write_str(path, "nccltune-tuner/1\nallreduce * * 0 10 ring ll 0 0\n"), 0);
	CHECK_INT(run_case(path, -1, out, sizeof out), 0);
	CHECK_STR(out, "");
	CHECK_INT(run_case(NULL, -1, out, sizeof out), 0);
	CHECK_STR(out, "");
	CHECK_INT(run_case("", -1, out, sizeof out), 0);   /* empty: as unset */
	CHECK_STR(out, "");
}

/* stderr a pipe and a socket whose reader is gone, then a pipe that is full. */
static void hostile_stderr(void)
{
	char path[300];
	int fds[2], fl;

	snprintf(path, sizeof path, "%s/missing", dir);
	CHECK_INT(pipe(fds), 0);
	close(fds[0]);
	CHECK_INT(run_case(path, fds[1], NULL, 0), 3);
	close(fds[1]);
	/* a socket's closed peer passes poll (POLLOUT | POLLHUP): the write itself gets EPIPE */
	CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
	close(fds[0]);
	CHECK_INT(run_case(path, fds[1], NULL, 0), 3);
	close(fds[1]);
	CHECK_INT(pipe(fds), 0);
	fl = fcntl(fds[1], F_GETFL);
	CHECK_INT(fcntl(fds[1], F_SETFL, fl | O_NONBLOCK), 0);
	while (write(fds[1], path, sizeof path) > 0)
		;
	while (write(fds[1], path, 1) > 0)   /* not a byte of room left */
		;
	CHECK_INT(fcntl(fds[1], F_SETFL, fl), 0);   /* blocking again, as a server's stderr */
	CHECK_INT(run_case(path, fds[1], NULL, 0), 3);
	close(fds[0]);
	close(fds[1]);
}

int main(int argc, char **argv)
{
	char cmd[300];

	if (argc != 2) {
		fprintf(stderr, "usage: %s PLUGIN.so\n", argv[0]);
		return 2;
	}
	plugin = argv[1];
	CHECK(mkdtemp(dir) != NULL);
	bad_tables();
	quiet_when_fine();
	hostile_stderr();
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
	return check_status();
}
