/* journal.c - the session journal: JSON Lines, one fsynced line per record. Opening
 * repairs a torn last line (the tuner was killed mid-write) so later appends stay
 * well-formed; replay skips a torn last line and refuses a malformed earlier one. A
 * journal is created whole with its header (so it has one or does not exist) and is
 * only ever opened as a regular file, never through a symbolic link. */
#include "run/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"

#define JOURNAL_MAX_BYTES ((size_t)1 << 30)

struct journal {
	int fd;
	char *path;
	off_t size;        /* bytes of well-formed records: where the next one goes */
};

/* Is [line, line+len) one JSON object and nothing else? */
static bool line_is_object(const char *line, size_t len)
{
	const char *end = NULL;
	cJSON *o = cJSON_ParseWithLengthOpts(line, len, &end, false);
	bool ok = cJSON_IsObject(o);

	for (; ok && end && end < line + len; end++)
		if (*end != ' ' && *end != '\t' && *end != '\r')
			ok = false;
	cJSON_Delete(o);
	return ok;
}

/* Where the well-formed part of `text` ends: after the last newline, minus a last
 * complete line that does not parse. */
static size_t well_formed_end(const char *text, size_t len)
{
	size_t end = len, start;

	while (end > 0 && text[end - 1] != '\n')
		end--;   /* drop a last line without its newline */
	if (end == 0)
		return 0;
	start = end - 1;
	while (start > 0 && text[start - 1] != '\n')
		start--;
	if (!line_is_object(text + start, end - 1 - start))
		return start;
	return end;
}

journal *journal_open(const char *path, char *err, size_t errlen)
{
	journal *j = calloc(1, sizeof *j);
	char *text = NULL;
	size_t len = 0;
	struct stat st;

	if (j) {
		j->fd = -1;
		j->path = strdup(path);
	}
	if (!j || !j->path) {
		free(j);
		fs_errf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	/* never through a symbolic link, never a FIFO or a device, never huge */
	j->fd = fs_open_regular(path, O_RDWR, JOURNAL_MAX_BYTES, err, errlen);
	if (j->fd < 0)
		goto fail;
	if (fstat(j->fd, &st) != 0) {
		fs_errf(err, errlen, "%s: stat failed: %s", path, strerror(errno));
		goto fail;
	}
	if (st.st_size > 0) {
		size_t keep;

		text = fs_read_fd(j->fd, path, JOURNAL_MAX_BYTES, &len, err, errlen);
		if (!text)
			goto fail;
		keep = well_formed_end(text, len);
		if (keep != len) {
			if (ftruncate(j->fd, (off_t)keep) != 0 || fsync(j->fd) != 0) {
				fs_errf(err, errlen, "%s: cannot cut the torn last line: %s", path,
				        strerror(errno));
				goto fail;
			}
		}
		j->size = (off_t)keep;
	}
	if (lseek(j->fd, j->size, SEEK_SET) < 0) {
		fs_errf(err, errlen, "%s: seek failed: %s", path, strerror(errno));
		goto fail;
	}
	free(text);
	return j;
fail:
	free(text);
	journal_close(j);
	return NULL;
}

journal *journal_create(const char *path, const cJSON *header, char *err, size_t errlen)
{
	char *text = cJSON_PrintUnformatted(header);
	size_t len;
	int rc;

	if (!text) {
		fs_errf(err, errlen, "%s: out of memory formatting the header", path);
		return NULL;
	}
	len = strlen(text);
	text[len] = '\n';   /* over the NUL: the text is written by length */
	rc = fs_create_atomic(path, text, len + 1, 0644, err, errlen);
	free(text);
	return rc == 0 ? journal_open(path, err, errlen) : NULL;
}

int journal_close(journal *j)
{
	int rc = 0;

	if (!j)
		return 0;
	if (j->fd >= 0 && close(j->fd) != 0)
		rc = -1;
	free(j->path);
	free(j);
	return rc;
}

int journal_append(journal *j, const cJSON *record, char *err, size_t errlen)
{
	char *text = cJSON_PrintUnformatted(record);
	size_t len, done = 0;
	int rc = -1;

	if (!text)
		return fs_errf(err, errlen, "%s: out of memory formatting a record", j->path);
	len = strlen(text);
	/* cJSON escapes control characters in strings, so a record is one line. */
	text[len] = '\n';
	while (done < len + 1) {
		ssize_t w = pwrite(j->fd, text + done, len + 1 - done, j->size + (off_t)done);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			fs_errf(err, errlen, "%s: write failed: %s", j->path, strerror(errno));
			goto undo;
		}
		done += (size_t)w;
	}
	if (fsync(j->fd) != 0) {
		fs_errf(err, errlen, "%s: fsync failed: %s", j->path, strerror(errno));
		goto undo;
	}
	j->size += (off_t)(len + 1);
	rc = 0;
	goto out;
undo:
	/* Leave no half record behind for the next append to glue onto. */
	if (ftruncate(j->fd, j->size) != 0) {
		/* the torn line is repaired by the next journal_open */
	}
out:
	free(text);
	return rc;
}

int journal_replay(const char *path, journal_visit_fn visit, void *ctx, int *torn,
                   char *warn, size_t warnlen, char *err, size_t errlen)
{
	size_t len = 0, pos = 0, line = 0;
	char *text = fs_read_regular(path, JOURNAL_MAX_BYTES, &len, err, errlen);
	int rc = 0;

	if (torn)
		*torn = 0;
	if (warn && warnlen)
		warn[0] = '\0';
	if (!text)
		return -1;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		bool last = !nl || end + 1 >= len;
		cJSON *rec = NULL;

		line++;
		if (nl && line_is_object(text + pos, end - pos))
			rec = cJSON_ParseWithLength(text + pos, end - pos);
		if (!rec) {
			if (!last) {
				rc = fs_errf(err, errlen, "%s:%zu: not a JSON object (a damaged journal; "
				             "records after it cannot be trusted)", path, line);
				break;
			}
			if (torn)
				(*torn)++;
			if (warn && warnlen)
				snprintf(warn, warnlen, "%s:%zu: skipped a torn last line (the tuner "
				         "was stopped while writing it)", path, line);
			break;
		}
		rc = visit(ctx, rec, line);
		cJSON_Delete(rec);
		if (rc != 0)
			break;
		pos = end + 1;
	}
	free(text);
	return rc;
}

int journal_check_trusted(const char *dir, char *why, size_t whylen)
{
	char path[4096];

	if (snprintf(path, sizeof path, "%s/journal.jsonl", dir) >= (int)sizeof path)
		return fs_errf(why, whylen, "%s: path too long", dir);
	if (fs_check_owned(dir, true, why, whylen) != 0 ||
	    fs_check_owned(path, false, why, whylen) != 0)
		return -1;
	return 0;
}
