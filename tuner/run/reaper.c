/* reaper.c - ending what a probe leaves behind outside its process group (reaper.h):
 * the tuner as a child subreaper, its children listed from /proc, and the sweep that
 * SIGKILLs and reaps every one it did not have when the reaper started. Linux only. */
#include "run/reaper.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Parent and process group of /proc entry `name` (a pid), from its stat line; false
 * when it is gone or unreadable. */
static bool proc_parent(const char *name, pid_t *ppid, pid_t *pgrp)
{
	char path[300], buf[512], *rp;
	long pp, pg;
	char state;
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "/proc/%s/stat", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "pid (comm) state ppid pgrp ...": comm may hold anything, so from the last ')' */
	rp = strrchr(buf, ')');
	if (!rp || sscanf(rp + 1, " %c %ld %ld", &state, &pp, &pg) != 3)
		return false;
	*ppid = (pid_t)pp;
	*pgrp = (pid_t)pg;
	return true;
}

/* The children of this process now (at most max into out), and whether a member of
 * group `group` still lives (*in_group). Returns how many children. */
static size_t list_children(pid_t *out, size_t max, pid_t group, bool *in_group)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t self = getpid();
	size_t n = 0;

	*in_group = false;
	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		pid_t ppid, pgrp;

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || !proc_parent(e->d_name, &ppid, &pgrp))
			continue;
		if (group > 0 && pgrp == group)
			*in_group = true;
		if (ppid == self && n < max)
			out[n++] = (pid_t)atol(e->d_name);
	}
	closedir(d);
	return n;
}

int reaper_start(struct reaper *r, char *err, size_t errlen)
{
	pid_t kids[1024];
	bool unused;
	size_t n;

	memset(r, 0, sizeof *r);
	if (prctl(PR_GET_CHILD_SUBREAPER, &r->was_subreaper) != 0)
		r->was_subreaper = 0;
	n = list_children(kids, sizeof kids / sizeof kids[0], 0, &unused);
	r->keep = malloc((n ? n : 1) * sizeof *r->keep);
	if (!r->keep)
		return fs_errf(err, errlen, "out of memory");
	memcpy(r->keep, kids, n * sizeof *kids);
	r->nkeep = n;
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
		free(r->keep);
		r->keep = NULL;
		r->nkeep = 0;
		return fs_errf(err, errlen, "prctl(PR_SET_CHILD_SUBREAPER): %s", strerror(errno));
	}
	r->on = true;
	return 0;
}

size_t reaper_sweep(struct reaper *r, pid_t group)
{
	double deadline = now_s() + 2.0;
	size_t ended = 0;

	if (!r || !r->on)
		return 0;
	for (;;) {
		pid_t kids[1024], mine[1024];
		size_t n, m = 0;
		bool in_group;

		n = list_children(kids, sizeof kids / sizeof kids[0], group, &in_group);
		for (size_t i = 0; i < n; i++) {
			bool kept = false;

			for (size_t k = 0; k < r->nkeep && !kept; k++)
				kept = r->keep[k] == kids[i];
			if (!kept)
				mine[m++] = kids[i];
		}
		for (size_t i = 0; i < m; i++)
			kill(mine[i], SIGKILL);
		for (size_t i = 0; i < m; i++) {
			/* a SIGKILLed process dies at once unless stuck in the kernel: wait for
			 * it a while, then leave it to the next sweep */
			while (waitpid(mine[i], NULL, WNOHANG) == 0 && now_s() < deadline)
				usleep(1000);
		}
		ended += m;
		if (m == 0 && !in_group)
			break;
		if (now_s() >= deadline)
			break;
		if (m == 0)
			usleep(1000);   /* the group's members are still dying */
	}
	return ended;
}

void reaper_stop(struct reaper *r)
{
	if (!r || !r->on)
		return;
	reaper_sweep(r, 0);
	/* back to what the process was: cannot fail for 0 or 1, and nothing could be done */
	(void)prctl(PR_SET_CHILD_SUBREAPER, (unsigned long)r->was_subreaper);
	free(r->keep);
	memset(r, 0, sizeof *r);
}
