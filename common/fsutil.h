/* fsutil.h - small helpers every component needs: read a whole file (or only a regular
 * file, never through a symbolic link), write or create one atomically, lock a session
 * folder, format error messages, parse a strict integer. No hidden state. */
#ifndef NCCLTUNE_FSUTIL_H
#define NCCLTUNE_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>

/* Read all of the regular file `path` (a symbolic link to one is followed) into a
 * malloc'd, NUL-terminated buffer (*len excludes the NUL). Files over max_bytes, and
 * anything not a regular file (a FIFO, a device: refused at once, never read), are
 * refused. Returns the buffer, or NULL with a message naming the path and the reason
 * (strerror, "not a regular file: refused" or "larger than N bytes") in err. */
char *fs_read_file(const char *path, size_t max_bytes, size_t *len, char *err, size_t errlen);

/* fs_read_file on an open descriptor; `path` only names it in messages. */
char *fs_read_fd(int fd, const char *path, size_t max_bytes, size_t *len, char *err,
                 size_t errlen);

/* Open `path` (flags: O_RDONLY or O_RDWR, no O_CREAT) only when it is a regular file
 * of at most max_bytes, never through a symbolic link: opened O_NOFOLLOW | O_NONBLOCK
 * (so a FIFO cannot block) | O_CLOEXEC, then checked with fstat, so a FIFO, a device
 * or a link to /dev/zero is refused at once. Returns the descriptor, or -1 with a
 * message naming the path ("is a symbolic link", "not a regular file", "larger than N
 * bytes", or the system's reason). */
int fs_open_regular(const char *path, int flags, size_t max_bytes, char *err, size_t errlen);

/* fs_read_file of a file fs_open_regular accepts. Same contract as fs_read_file. */
char *fs_read_regular(const char *path, size_t max_bytes, size_t *len, char *err,
                      size_t errlen);

/* Replace `path` atomically with `len` bytes of `data`: write a temporary file
 * PATH.tmp.XXXXXX in the same folder (mkostemp: a new name, created O_EXCL, so a
 * symbolic link planted there is never followed), fsync it, rename it over `path`
 * (a symbolic link at `path` is replaced, not followed), fsync the folder. On any
 * failure the old file is untouched and the temporary removed. `mode` is the new
 * file's mode (e.g. 0644). Returns 0, or -1 with a message naming the path in err. */
int fs_write_atomic(const char *path, const void *data, size_t len, int mode,
                    char *err, size_t errlen);

/* fs_write_atomic, and the new file gets owner uid and group gid (-1: the writer's) before
 * it replaces `path`, so that rewriting someone's file keeps its owner; when the system
 * refuses that (only root may give a file away), nothing is replaced. Same returns. */
int fs_write_atomic_owned(const char *path, const void *data, size_t len, int mode, long uid,
                          long gid, char *err, size_t errlen);

/* Create `path`, which must not exist (not even as a dangling symbolic link), holding
 * exactly `len` bytes of `data`: written to a temporary as fs_write_atomic does, then
 * linked into place, so `path` either does not exist or holds all of data. Returns 0,
 * or -1 with a message ("PATH: already exists", or the system's reason). */
int fs_create_atomic(const char *path, const void *data, size_t len, int mode,
                     char *err, size_t errlen);

/* Take the exclusive lock of session folder `dir`: flock(LOCK_EX | LOCK_NB) on
 * DIR/.lock (created 0644, opened O_NOFOLLOW | O_CLOEXEC), which then holds the
 * caller's pid as text. The lock lasts while *fd_out stays open (the caller closes it)
 * and dies with its process, so a killed holder never blocks the folder; the pid in
 * the file is only informative. A .lock that is not a regular file of the user's own
 * with one link (a planted hard link) is refused before anything is written. Returns 0
 * with *fd_out, -2 when another process holds it (the message names its pid), or -1
 * with a message for any other failure. */
int fs_lock_dir(const char *dir, int *fd_out, char *err, size_t errlen);

/* Create `path` and any missing parents (like mkdir -p) with mode 0755. Returns 0 or
 * -1 with a message naming the component that failed. */
int fs_mkdirs(const char *path, char *err, size_t errlen);

/* Is `path` owned by the effective user and not writable by its group or others - and,
 * when it is a symbolic link, the link itself owned by the user and its target passing
 * the same checks? For files whose content nccltune runs (a session's journal records
 * the probe command) and the folders that hold them. Returns 0 (also when it, or a
 * link's target, does not exist and must_exist is false), or -1 with the reason
 * ("PATH: owned by uid N, not by you", "PATH: writable by others (mode 0777)", "PATH (the
 * target of this symbolic link): ...", or the system's). */
int fs_check_owned(const char *path, bool must_exist, char *err, size_t errlen);

/* Copy `in` (inlen bytes) into out as valid UTF-8: each byte that does not start a
 * valid character (a stray continuation, an overlong form, a surrogate, a sequence cut
 * short) becomes U+FFFD; the copy is cut on a character boundary to fit outlen - 1
 * bytes and NUL-terminated. For text from a probe that goes into a JSON file. Returns
 * the bytes written (without the NUL). Can't fail. */
size_t fs_utf8_sanitize(const char *in, size_t inlen, char *out, size_t outlen);

/* Copy `in` (NULL reads as "") into out for a terminal: valid UTF-8 characters as they
 * are, and every C0 control character (newline and tab included), DEL, C1 control
 * (U+0080..U+009F) and byte of invalid UTF-8 as the four characters \xHH, so text from
 * a probe or a file cannot move the cursor, set the title (OSC 0), the clipboard (OSC
 * 52), clear the screen or fake a line. Cut on a character (or escape) boundary to fit
 * outlen - 1 bytes; NUL-terminated. Returns out. Can't fail. */
char *fs_escape_text(const char *in, char *out, size_t outlen);

/* A decimal integer in [lo, hi] that is all of s (no sign-only, no leading space, no
 * trailing characters, no overflow) into *out. Returns 0, or -1 with *out unchanged. */
int fs_parse_long(const char *s, long lo, long hi, long *out);

/* The path of the running program (/proc/self/exe) into buf. Returns 0, or -1 when it
 * cannot be read or does not fit. */
int fs_program_path(char *buf, size_t len);

/* The folder of the running program (fs_program_path without its last component and
 * slash) into buf. Returns 0, or -1 when it cannot be read or does not fit. */
int fs_program_dir(char *buf, size_t len);

/* printf into err (if err is non-NULL and errlen > 0), truncating safely. Returns -1
 * so callers can write `return fs_errf(err, errlen, "...")`. */
int fs_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
