/* fsutil.h - small helpers every component needs: read a whole file, write one
 * atomically, format error messages, parse a strict integer. No hidden state. */
#ifndef NCCLTUNE_FSUTIL_H
#define NCCLTUNE_FSUTIL_H

#include <stddef.h>

/* Read all of `path` into a malloc'd, NUL-terminated buffer (*len excludes the NUL).
 * Files over max_bytes are refused. Returns the buffer, or NULL with a message naming
 * the path and the reason (strerror, or "larger than N bytes") in err. */
char *fs_read_file(const char *path, size_t max_bytes, size_t *len, char *err, size_t errlen);

/* Replace `path` atomically with `len` bytes of `data`: write a temporary file in the
 * same folder, fsync it, rename it over `path`, fsync the folder. On any failure the
 * old file is untouched and the temporary removed. `mode` is the new file's mode
 * (e.g. 0644). Returns 0, or -1 with a message naming the path in err. */
int fs_write_atomic(const char *path, const void *data, size_t len, int mode,
                    char *err, size_t errlen);

/* fs_write_atomic, and the new file gets owner uid and group gid (-1: the writer's) before
 * it replaces `path`, so that rewriting someone's file keeps its owner; when the system
 * refuses that (only root may give a file away), nothing is replaced. Same returns. */
int fs_write_atomic_owned(const char *path, const void *data, size_t len, int mode, long uid,
                          long gid, char *err, size_t errlen);

/* Create `path` and any missing parents (like mkdir -p) with mode 0755. Returns 0 or
 * -1 with a message naming the component that failed. */
int fs_mkdirs(const char *path, char *err, size_t errlen);

/* A decimal integer in [lo, hi] that is all of s (no sign-only, no leading space, no
 * trailing characters, no overflow) into *out. Returns 0, or -1 with *out unchanged. */
int fs_parse_long(const char *s, long lo, long hi, long *out);

/* printf into err (if err is non-NULL and errlen > 0), truncating safely. Returns -1
 * so callers can write `return fs_errf(err, errlen, "...")`. */
int fs_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
