/* trust.h - may nccltune take a command, a library or an interpreter from this path?
 * (trust.c). A path is trusted when nobody but root and the caller can change what it
 * names: every folder from / down to it and the thing itself are owned by root or by the
 * caller (euid), and none is writable by its group or by others - except a folder with
 * the sticky bit (/tmp), in which others cannot rename or remove what is not theirs. A
 * walk from / with O_NOFOLLOW at every step, so that a name swapped for a symlink on the
 * way is refused, never followed. Used by check, retune and the interpreter runs of
 * install, which run what a file names (a journal's probe, an interpreter). */
#ifndef NCCLTUNE_WORKFLOWS_TRUST_H
#define NCCLTUNE_WORKFLOWS_TRUST_H

#include <stdbool.h>
#include <stddef.h>

/* Open the folder `path` (symlinks resolved first, then walked from / without following
 * any) and check every step as above. Returns a descriptor (O_DIRECTORY, close-on-exec)
 * or -1 with a message in why naming the first component at fault, its owner or mode. */
int trust_open_dir(const char *path, char *why, size_t whylen);

/* Open `name` (one component) in the trusted folder dirfd without following a symlink:
 * a regular file owned by root or the caller and writable by nobody else. `shown` names
 * the folder in messages. Returns a read-only descriptor or -1 with a message. */
int trust_open_file(int dirfd, const char *shown, const char *name, char *why,
                    size_t whylen);

/* Is the file (or folder) `path` trusted, its folders and itself? 0, or -1 with a
 * message. A missing path is refused. */
int trust_check_path(const char *path, char *why, size_t whylen);

/* The program `cmd` would run into buf: cmd itself when it has a slash, else the first
 * executable file of that name in PATH as execvp finds it; symlinks are not resolved (an
 * interpreter tells a venv by the name it is started as). 0, or -1 with a message when
 * it is not found. */
int trust_which(const char *cmd, char *buf, size_t len, char *why, size_t whylen);

#endif
