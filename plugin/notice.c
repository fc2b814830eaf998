/* notice.c - the plugin's one stderr line (notice.h). Its once-flag is the only state:
 * process-wide because the line is about the process (every communicator reads the same
 * NCCLTUNE_TUNER_TABLE), and reset only when NCCL unloads and reloads the plugin. */
#include "notice.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

_Static_assert(NOTICE_MAX <= PIPE_BUF, "a line must fit a pipe's atomic write");

static atomic_flag notice_said = ATOMIC_FLAG_INIT;

/* Whether fd 2 takes a line now without blocking: poll says writable, which for a pipe
 * means PIPE_BUF bytes of room (a line is at most NOTICE_MAX < PIPE_BUF), and a file or
 * terminal always is. */
static int stderr_ready(void)
{
	struct pollfd p = { .fd = 2, .events = POLLOUT, .revents = 0 };
	int n;

	do
		n = poll(&p, 1, 0);
	while (n < 0 && errno == EINTR);
	return n == 1 && (p.revents & POLLOUT) && !(p.revents & (POLLERR | POLLNVAL));
}

/* One write of `len` bytes to fd 2 with SIGPIPE blocked in this thread; a SIGPIPE the
 * write raised is taken back (unless one was pending already), so a closed reader
 * neither kills the process nor leaves it a signal. */
static void write_quietly(const char *buf, size_t len)
{
	const struct timespec now = { 0, 0 };
	sigset_t pipe_set, old, pending;
	int was_pending = 0;
	ssize_t n;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	if (pthread_sigmask(SIG_BLOCK, &pipe_set, &old) != 0)
		return;
	if (sigpending(&pending) == 0)
		was_pending = sigismember(&pending, SIGPIPE) == 1;
	do
		n = write(2, buf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EPIPE && !was_pending)
		while (sigtimedwait(&pipe_set, NULL, &now) < 0 && errno == EINTR)
			;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void notice_once(const char *text)
{
	char line[NOTICE_MAX];
	int n;

	if (atomic_flag_test_and_set(&notice_said))
		return;
	n = snprintf(line, sizeof line, "nccltune: %s\n", text);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof line) {     /* cut: keep the newline */
		n = (int)sizeof line - 1;
		line[n - 1] = '\n';
	}
	for (int i = 0; i < n - 1; i++)     /* a path's control bytes cannot forge lines */
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			line[i] = '?';
	if (stderr_ready())
		write_quietly(line, (size_t)n);
}
