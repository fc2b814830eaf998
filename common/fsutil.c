/* fsutil.c - file reads, atomic writes, mkdir -p, error messages, strict integers. */
#include "fsutil.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fs_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

char *fs_read_file(const char *path, size_t max_bytes, size_t *len, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t cap = 0, used = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fs_errf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		ssize_t n;

		if (used + 1 >= cap) {
			size_t ncap = cap ? cap * 2 : 4096;
			char *nb;

			if (cap > max_bytes + 1) {
				fs_errf(err, errlen, "%s: larger than %zu bytes", path, max_bytes);
				goto fail;
			}
			nb = realloc(buf, ncap);
			if (!nb) {
				fs_errf(err, errlen, "%s: out of memory reading it", path);
				goto fail;
			}
			buf = nb;
			cap = ncap;
		}
		n = read(fd, buf + used, cap - used - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fs_errf(err, errlen, "%s: read failed: %s", path, strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		used += (size_t)n;
		if (used > max_bytes) {
			fs_errf(err, errlen, "%s: larger than %zu bytes", path, max_bytes);
			goto fail;
		}
	}
	close(fd);
	buf[used] = '\0';
	if (len)
		*len = used;
	return buf;
fail:
	close(fd);
	free(buf);
	return NULL;
}

/* fsync the folder holding `path` so a rename survives a crash. */
static int sync_parent(const char *path, char *err, size_t errlen)
{
	char *copy = strdup(path);
	int fd = -1, rc = -1;

	if (!copy)
		return fs_errf(err, errlen, "%s: out of memory", path);
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		fs_errf(err, errlen, "%s: cannot open its folder: %s", path, strerror(errno));
		goto out;
	}
	if (fsync(fd) != 0 && errno != EINVAL) {
		fs_errf(err, errlen, "%s: fsync of its folder failed: %s", path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(copy);
	return rc;
}

int fs_write_atomic(const char *path, const void *data, size_t len, int mode,
                    char *err, size_t errlen)
{
	return fs_write_atomic_owned(path, data, len, mode, -1, -1, err, errlen);
}

int fs_write_atomic_owned(const char *path, const void *data, size_t len, int mode, long uid,
                          long gid, char *err, size_t errlen)
{
	char tmp[4096];
	const char *p = data;
	size_t done = 0;
	int fd = -1, rc = -1, n;

	n = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof tmp)
		return fs_errf(err, errlen, "%s: path too long", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return fs_errf(err, errlen, "%s: cannot create temporary file %s: %s", path, tmp,
		               strerror(errno));
	while (done < len) {
		ssize_t w = write(fd, p + done, len - done);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			fs_errf(err, errlen, "%s: write failed: %s", path, strerror(errno));
			goto out;
		}
		done += (size_t)w;
	}
	/* the owner first: a chown may clear set-id bits that the mode then sets */
	if ((uid >= 0 || gid >= 0) &&
	    fchown(fd, uid >= 0 ? (uid_t)uid : (uid_t)-1, gid >= 0 ? (gid_t)gid : (gid_t)-1) != 0) {
		fs_errf(err, errlen, "%s: cannot give the new file the owner %ld:%ld of the old one: "
		        "%s (that takes root, or being that owner)", path, uid, gid, strerror(errno));
		goto out;
	}
	if (fchmod(fd, (mode_t)mode) != 0) {
		fs_errf(err, errlen, "%s: chmod failed: %s", path, strerror(errno));
		goto out;
	}
	if (fsync(fd) != 0) {
		fs_errf(err, errlen, "%s: fsync failed: %s", path, strerror(errno));
		goto out;
	}
	if (close(fd) != 0) {
		fd = -1;
		fs_errf(err, errlen, "%s: close failed: %s", path, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		fs_errf(err, errlen, "%s: rename from %s failed: %s", path, tmp, strerror(errno));
		goto out;
	}
	rc = sync_parent(path, err, errlen);
	return rc;
out:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return rc;
}

int fs_mkdirs(const char *path, char *err, size_t errlen)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n == 0)
		return fs_errf(err, errlen, "empty folder name");
	if (n >= sizeof buf)
		return fs_errf(err, errlen, "%s: path too long", path);
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return fs_errf(err, errlen, "%s: cannot create folder %s: %s", path, buf,
			               strerror(errno));
		if (i < n)
			buf[i] = '/';
	}
	{
		struct stat st;

		if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
			return fs_errf(err, errlen, "%s: exists and is not a folder", path);
	}
	return 0;
}

int fs_parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}
