/* trust.c - the trusted-path walk of trust.h: from / down to a path, one openat with
 * O_NOFOLLOW per component, each checked with fstat on the descriptor that the next step
 * opens from (so what is checked is what is used). */
#include "workflows/trust.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"

/* May nobody but root and the caller change what st describes (the component `shown`)?
 * A sticky folder on the way may be writable by others; the last component may not. */
static int step_ok(const struct stat *st, const char *shown, bool last, char *why,
                   size_t whylen)
{
	uid_t me = geteuid();
	bool sticky = S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX) && !last;

	if (st->st_uid != 0 && st->st_uid != me)
		return fs_errf(why, whylen, "%s: owned by uid %ld, neither root nor you (uid %ld)",
		               shown, (long)st->st_uid, (long)me);
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !sticky)
		return fs_errf(why, whylen, "%s: writable by %s (mode %04o)", shown,
		               (st->st_mode & S_IWOTH) ? "others" : "its group",
		               (unsigned)(st->st_mode & 07777));
	return 0;
}

/* Walk the resolved `path` from /, checking every step; the last opened with `last_flags`
 * (O_DIRECTORY for a folder, O_PATH for a file). A descriptor, or -1 with a message. */
static int walk(const char *path, int last_flags, char *why, size_t whylen)
{
	char real[PATH_MAX];
	struct stat st;
	char *p, *slash;
	int fd, nfd;

	if (!realpath(path, real)) {
		fs_errf(why, whylen, "%s: %s", path, strerror(errno));
		return -1;
	}
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		fs_errf(why, whylen, "/: %s", strerror(errno));
		goto fail;
	}
	if (step_ok(&st, "/", real[1] == '\0', why, whylen) != 0)
		goto fail;
	for (p = real + 1; *p; p = slash + 1) {
		bool last;

		slash = strchr(p, '/');
		last = !slash;
		if (slash)
			*slash = '\0';
		nfd = openat(fd, p, (last ? last_flags : O_RDONLY | O_DIRECTORY) | O_NOFOLLOW |
		             O_CLOEXEC);
		if (nfd < 0 || fstat(nfd, &st) != 0) {
			fs_errf(why, whylen, "%s: %s", real, errno == ELOOP || errno == ENOTDIR
			        ? "changed into a symbolic link while it was checked" : strerror(errno));
			if (nfd >= 0)
				close(nfd);
			goto fail;
		}
		close(fd);
		fd = nfd;
		if (S_ISLNK(st.st_mode)) {   /* O_PATH | O_NOFOLLOW opens a link itself */
			fs_errf(why, whylen, "%s: changed into a symbolic link while it was checked",
			        real);
			goto fail;
		}
		if (step_ok(&st, real, last, why, whylen) != 0)
			goto fail;
		if (last)
			return fd;
		*slash = '/';
	}
	return fd;   /* path was "/" */
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

int trust_open_dir(const char *path, char *why, size_t whylen)
{
	return walk(path, O_RDONLY | O_DIRECTORY, why, whylen);
}

int trust_check_path(const char *path, char *why, size_t whylen)
{
	int fd = walk(path, O_PATH, why, whylen);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

int trust_open_file(int dirfd, const char *shown, const char *name, char *why, size_t whylen)
{
	char where[PATH_MAX + 64];
	struct stat st;
	int fd;

	snprintf(where, sizeof where, "%s/%s", shown, name);
	/* O_NONBLOCK: a FIFO put there must not hang the open; nothing else notices it */
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return fs_errf(why, whylen, "%s: %s", where, errno == ELOOP
		               ? "a symbolic link (refused: it must be the file itself)"
		               : strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		fs_errf(why, whylen, "%s: not a regular file", where);
		goto fail;
	}
	if (step_ok(&st, where, true, why, whylen) != 0)
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}

int trust_which(const char *cmd, char *buf, size_t len, char *why, size_t whylen)
{
	const char *path = getenv("PATH");
	char cand[PATH_MAX], real[PATH_MAX];
	struct stat st;

	if (strchr(cmd, '/')) {
		if (!realpath(cmd, real))
			return fs_errf(why, whylen, "%s: %s", cmd, strerror(errno));
		snprintf(cand, sizeof cand, "%s", cmd);
	} else {
		bool found = false;

		/* execvp's search: PATH, or its default when unset; an empty entry is "." */
		for (const char *d = path ? path : "/bin:/usr/bin"; !found;) {
			const char *end = strchr(d, ':');
			size_t n = end ? (size_t)(end - d) : strlen(d);

			if (snprintf(cand, sizeof cand, "%.*s%s%s", (int)n, n ? d : ".", "/", cmd) <
			    (int)sizeof cand && access(cand, X_OK) == 0 && stat(cand, &st) == 0 &&
			    S_ISREG(st.st_mode) && realpath(cand, real))
				found = true;
			if (!end)
				break;
			d = end + 1;
		}
		if (!found)
			return fs_errf(why, whylen, "%s: not found in PATH", cmd);
	}
	if (strlen(cand) >= len)
		return fs_errf(why, whylen, "%s: path too long", cand);
	snprintf(buf, len, "%s", cand);
	return 0;
}
