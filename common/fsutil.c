/* fsutil.c - file reads (any file, or regular files only, never through a symbolic
 * link), atomic writes and creations, the session folder's lock, mkdir -p, error
 * messages, strict integers. */
#include "fsutil.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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

char *fs_read_fd(int fd, const char *path, size_t max_bytes, size_t *len, char *err,
                 size_t errlen)
{
	char *buf = NULL;
	size_t cap = 0, used = 0;

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
	buf[used] = '\0';
	if (len)
		*len = used;
	return buf;
fail:
	free(buf);
	return NULL;
}

/* fd, opened non-blocking from `path`, is a regular file of at most max_bytes: make it
 * blocking again (a regular file never blocks; later writes are plain). Returns fd, or
 * -1 (fd closed) with the reason. */
static int regular_fd(int fd, const char *path, size_t max_bytes, char *err, size_t errlen)
{
	struct stat st;
	int flags;

	if (fstat(fd, &st) != 0) {
		fs_errf(err, errlen, "%s: stat failed: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		fs_errf(err, errlen, "%s: not a regular file: refused", path);
		goto fail;
	}
	if ((unsigned long long)st.st_size > (unsigned long long)max_bytes) {
		fs_errf(err, errlen, "%s: larger than %zu bytes", path, max_bytes);
		goto fail;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
		fs_errf(err, errlen, "%s: fcntl failed: %s", path, strerror(errno));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

char *fs_read_file(const char *path, size_t max_bytes, size_t *len, char *err, size_t errlen)
{
	char *buf;
	/* non-blocking: a FIFO or a device is refused at once instead of blocking the read */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		fs_errf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	fd = regular_fd(fd, path, max_bytes, err, errlen);
	if (fd < 0)
		return NULL;
	buf = fs_read_fd(fd, path, max_bytes, len, err, errlen);
	close(fd);
	return buf;
}

int fs_open_regular(const char *path, int flags, size_t max_bytes, char *err, size_t errlen)
{
	int fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		if (errno == ELOOP)
			return fs_errf(err, errlen, "%s: is a symbolic link: refused (it is never "
			               "followed)", path);
		return fs_errf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
	}
	return regular_fd(fd, path, max_bytes, err, errlen);
}

char *fs_read_regular(const char *path, size_t max_bytes, size_t *len, char *err,
                      size_t errlen)
{
	char *buf;
	int fd = fs_open_regular(path, O_RDONLY, max_bytes, err, errlen);

	if (fd < 0)
		return NULL;
	buf = fs_read_fd(fd, path, max_bytes, len, err, errlen);
	close(fd);
	return buf;
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

/* Write len bytes of data into a new temporary file beside `path` (mkostemp: a fresh
 * name opened O_CREAT|O_EXCL, so nothing planted there is followed or overwritten),
 * give it owner uid, group gid (-1: the writer's) and `mode`, fsync and close it. Returns 0 with its name in tmp, or -1 with a
 * message and nothing left behind. */
static int write_temp(const char *path, const void *data, size_t len, int mode, long uid,
                      long gid, char *tmp, size_t tmplen, char *err, size_t errlen)
{
	const char *p = data;
	size_t done = 0;
	int fd, n;

	n = snprintf(tmp, tmplen, "%s.tmp.XXXXXX", path);
	if (n < 0 || (size_t)n >= tmplen)
		return fs_errf(err, errlen, "%s: path too long", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return fs_errf(err, errlen, "%s: cannot create a temporary file beside it: %s",
		               path, strerror(errno));
	while (done < len) {
		ssize_t w = write(fd, p + done, len - done);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			fs_errf(err, errlen, "%s: write failed: %s", path, strerror(errno));
			goto fail;
		}
		done += (size_t)w;
	}
	/* the owner first: a chown may clear set-id bits that the mode then sets */
	if ((uid >= 0 || gid >= 0) &&
	    fchown(fd, uid >= 0 ? (uid_t)uid : (uid_t)-1, gid >= 0 ? (gid_t)gid : (gid_t)-1) != 0) {
		fs_errf(err, errlen, "%s: cannot give the new file the owner %ld:%ld of the old one: "
		        "%s (that takes root, or being that owner)", path, uid, gid, strerror(errno));
		goto fail;
	}
	if (fchmod(fd, (mode_t)mode) != 0) {
		fs_errf(err, errlen, "%s: chmod failed: %s", path, strerror(errno));
		goto fail;
	}
	if (fsync(fd) != 0) {
		fs_errf(err, errlen, "%s: fsync failed: %s", path, strerror(errno));
		goto fail;
	}
	if (close(fd) != 0) {
		fd = -1;
		fs_errf(err, errlen, "%s: close failed: %s", path, strerror(errno));
		goto fail;
	}
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return -1;
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

	if (write_temp(path, data, len, mode, uid, gid, tmp, sizeof tmp, err, errlen) != 0)
		return -1;
	if (rename(tmp, path) != 0) {
		fs_errf(err, errlen, "%s: rename from %s failed: %s", path, tmp, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return sync_parent(path, err, errlen);
}

int fs_create_atomic(const char *path, const void *data, size_t len, int mode,
                     char *err, size_t errlen)
{
	char tmp[4096];
	int rc = -1;

	if (write_temp(path, data, len, mode, -1, -1, tmp, sizeof tmp, err, errlen) != 0)
		return -1;
	/* link() never replaces anything, a symbolic link (even a dangling one) included */
	if (link(tmp, path) != 0) {
		if (errno == EEXIST)
			fs_errf(err, errlen, "%s: already exists", path);
		else
			fs_errf(err, errlen, "%s: cannot create it: %s", path, strerror(errno));
		goto out;
	}
	rc = sync_parent(path, err, errlen);
out:
	unlink(tmp);
	return rc;
}

int fs_lock_dir(const char *dir, int *fd_out, char *err, size_t errlen)
{
	char path[4096], text[32];
	struct stat st;
	ssize_t n;
	int fd, k;

	*fd_out = -1;
	if (snprintf(path, sizeof path, "%s/.lock", dir) >= (int)sizeof path)
		return fs_errf(err, errlen, "%s: path too long", dir);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0644);
	if (fd < 0)
		return fs_errf(err, errlen, "%s: cannot open the session's lock file: %s", path,
		               errno == ELOOP ? "it is a symbolic link" : strerror(errno));
	/* it gets truncated and written: only a plain file of the user's own, one link */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    st.st_uid != geteuid()) {
		fs_errf(err, errlen, "%s: not a lock file of yours (a regular file with one link, "
		        "owned by you): refused, nothing written", path);
		close(fd);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		long pid = 0;

		if (errno != EWOULDBLOCK) {
			fs_errf(err, errlen, "%s: cannot lock it: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		/* the holder's pid, as text, is only informative: flock is the lock */
		n = pread(fd, text, sizeof text - 1, 0);
		text[n > 0 ? n : 0] = '\0';
		text[strcspn(text, "\n")] = '\0';
		close(fd);
		if (fs_parse_long(text, 1, 0x7fffffff, &pid) == 0)
			fs_errf(err, errlen, "%s is in use by another nccltune (pid %ld, %s): one "
			        "session folder takes one nccltune at a time", dir, pid, path);
		else
			fs_errf(err, errlen, "%s is in use by another nccltune (%s): one session "
			        "folder takes one nccltune at a time", dir, path);
		return -2;
	}
	k = snprintf(text, sizeof text, "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)k, 0) != k) {
		fs_errf(err, errlen, "%s: cannot write the lock file: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	*fd_out = fd;
	return 0;
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

/* The owner and mode checks of fs_check_owned on one stat result. */
static int owned_stat(const char *path, const char *what, const struct stat *st, char *err,
                      size_t errlen)
{
	if (st->st_uid != geteuid())
		return fs_errf(err, errlen, "%s%s: owned by uid %ld, not by you (uid %ld)", path, what,
		               (long)st->st_uid, (long)geteuid());
	if (!S_ISLNK(st->st_mode) && (st->st_mode & (S_IWGRP | S_IWOTH)))
		return fs_errf(err, errlen, "%s%s: writable by %s (mode %04o)", path, what,
		               (st->st_mode & S_IWOTH) ? "others" : "its group",
		               (unsigned)(st->st_mode & 07777));
	return 0;
}

int fs_check_owned(const char *path, bool must_exist, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(path, &st) != 0) {
		if (errno == ENOENT && !must_exist)
			return 0;
		return fs_errf(err, errlen, "%s: %s", path, strerror(errno));
	}
	if (owned_stat(path, "", &st, err, errlen) != 0)
		return -1;
	if (!S_ISLNK(st.st_mode))
		return 0;
	/* a link of yours into a folder others may write is as good as that folder */
	if (stat(path, &st) != 0) {
		if (errno == ENOENT && !must_exist)
			return 0;
		return fs_errf(err, errlen, "%s: a symbolic link whose target cannot be read: %s",
		               path, strerror(errno));
	}
	return owned_stat(path, " (the target of this symbolic link)", &st, err, errlen);
}

/* The length (1..4) of the valid UTF-8 character at s (n bytes left), or 0 when the
 * bytes there are not one: a stray continuation byte, an overlong form, a surrogate,
 * a code point past U+10FFFF or a sequence cut short. */
static size_t utf8_char(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	unsigned long cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, cp = c & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

size_t fs_utf8_sanitize(const char *in, size_t inlen, char *out, size_t outlen)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t i = 0, o = 0;

	if (outlen == 0)
		return 0;
	while (i < inlen) {
		size_t k = utf8_char(s + i, inlen - i);
		const char *src = k ? in + i : "\xef\xbf\xbd";   /* U+FFFD */
		size_t n = k ? k : 3;

		if (o + n + 1 > outlen)
			break;   /* never half a character */
		memcpy(out + o, src, n);
		o += n;
		i += k ? k : 1;
	}
	out[o] = '\0';
	return o;
}

char *fs_escape_text(const char *in, char *out, size_t outlen)
{
	const unsigned char *s = (const unsigned char *)(in ? in : "");
	size_t n = strlen((const char *)s), i = 0, o = 0;

	if (outlen == 0)
		return out;
	while (i < n) {
		size_t k = utf8_char(s + i, n - i);
		bool control = k == 1 && (s[i] < 0x20 || s[i] == 0x7f);
		bool c1 = k == 2 && s[i] == 0xc2 && s[i + 1] < 0xa0;   /* U+0080..U+009F */

		if (k && !control && !c1) {
			if (o + k + 1 > outlen)
				break;
			memcpy(out + o, s + i, k);
			o += k;
			i += k;
			continue;
		}
		/* a control character, or each byte that is not valid UTF-8, as \xHH */
		for (size_t b = 0; b < (k ? k : 1); b++) {
			if (o + 4 + 1 > outlen)
				goto done;
			snprintf(out + o, 5, "\\x%02x", s[i + b]);
			o += 4;
		}
		i += k ? k : 1;
	}
done:
	out[o] = '\0';
	return out;
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

int fs_program_path(char *buf, size_t len)
{
	ssize_t n = len > 1 ? readlink("/proc/self/exe", buf, len - 1) : -1;

	if (n <= 0 || (size_t)n >= len - 1)
		return -1;
	buf[n] = '\0';
	return 0;
}

int fs_program_dir(char *buf, size_t len)
{
	char *slash;

	if (fs_program_path(buf, len) != 0)
		return -1;
	slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}
