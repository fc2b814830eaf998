/* journal.h - the session's JSON-Lines journal (docs/formats.md): append a record and
 * fsync it before the next run starts; replay it to rebuild a session. The journal is
 * the single source of truth of what happened. */
#ifndef NCCLTUNE_JOURNAL_H
#define NCCLTUNE_JOURNAL_H

#include <cjson/cJSON.h>
#include <stddef.h>

typedef struct journal journal;

/* Open the existing journal `path` for appending, cutting a torn last line. It must be
 * a regular file of at most 1 GiB, not a symbolic link (fs_open_regular). Returns NULL
 * with a message naming the path in err. */
journal *journal_open(const char *path, char *err, size_t errlen);

/* Create the journal `path` holding only `header` (one line), atomically: it did not
 * exist (not even as a symbolic link) and afterwards holds the whole header, or it
 * still does not exist (fs_create_atomic). Then open it as journal_open does. Returns
 * NULL with a message naming the path in err ("PATH: already exists", ...). */
journal *journal_create(const char *path, const cJSON *header, char *err, size_t errlen);

/* Close; accepts NULL. Returns 0 or -1 (a failed close is a lost record). */
int journal_close(journal *j);

/* Append one record as a single line and fsync. A record is never split across lines.
 * Returns 0, or -1 with a message (disk full, I/O error) in err. */
int journal_append(journal *j, const cJSON *record, char *err, size_t errlen);

/* Called once per well-formed record, in order; `line` is 1-based. Return non-zero to
 * stop the replay (that value is returned by journal_replay). */
typedef int (*journal_visit_fn)(void *ctx, const cJSON *record, size_t line);

/* Read `path` (a regular file, not a symbolic link: refused at once otherwise) and
 * call visit for each record. A last line without a newline or that does not parse (a torn write) is skipped and counted in *torn (may be NULL), with a
 * warning in warn (may be NULL). A malformed line before the last is an error: -1
 * with a message naming the file and line. Returns 0, -1, or visit's non-zero value. */
int journal_replay(const char *path, journal_visit_fn visit, void *ctx, int *torn,
                   char *warn, size_t warnlen, char *err, size_t errlen);

/* May the probe command the journal of session folder `dir` records be run (check,
 * --resume)? The folder and its journal.jsonl (when present) must be the user's own and
 * writable by nobody else, links followed (fs_check_owned): a session folder is trusted
 * like a script. Returns 0, or -1 with the reason in why. */
int journal_check_trusted(const char *dir, char *why, size_t whylen);

#endif
