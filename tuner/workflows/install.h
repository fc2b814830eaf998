/* install.h - what the installers share inside tuner/workflows/ (install.c: the entry
 * points and the blocks merged into a sitecustomize.py or an nccl.conf; pth.c: the .pth
 * file and its module): the file an install changes, read with its mode and owner and
 * written back atomically with them after a backup, the table, the record and the notes
 * (install_target.c), the plugin's copy (install_copy.c), and the pth installer's entry
 * points. Calls go one way: install.c -> pth.c -> install_copy.c -> install_target.c. */
#ifndef NCCLTUNE_WORKFLOWS_INSTALL_H
#define NCCLTUNE_WORKFLOWS_INSTALL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "nccltune.h"
#include "result/summary.h"

#define INSTALL_FILE_MAX (4u << 20)   /* a sitecustomize.py or nccl.conf larger is not one */
#define INSTALL_BACKUP ".nccltune-bak"
/* The oldest NCCL that applies per-size rules: 2.24, tuner ABI v4 (install_nccl_floor) */
#define INSTALL_NCCL_FLOOR_MAJOR 2
#define INSTALL_NCCL_FLOOR_MINOR 24

/* The file an install changes. */
struct target {
	char real[PATH_MAX];    /* the target, symlinks resolved */
	bool existed;
	char *old;              /* its text (malloc'd), when it existed */
	size_t olen;
	int mode;               /* kept, like the owner */
	long uid, gid;          /* -1: a new file, the writer's */
};

/* Read `path` (through a symlink) into t: its real path and, when it exists, its text,
 * mode and owner; a missing file is fine when its folder exists. Refused: not a regular
 * file, NUL bytes (`what` says what it should be), other hard links (an atomic replace
 * would leave the other names with the old text). Returns NCCLTUNE_OK, NCCLTUNE_USAGE or
 * NCCLTUNE_ERROR with a message naming path; free t with target_free either way. */
int target_read(const char *path, const char *what, struct target *t, char *err,
                size_t errlen);

/* Keep t's old text as REAL.nccltune-bak (its mode and owner) when it existed, then
 * replace t->real with text, atomically, with the same mode and owner (a new file: mode
 * 0644). Returns NCCLTUNE_OK or NCCLTUNE_ERROR with a message. */
int target_write(const struct target *t, const char *text, size_t len, char *err,
                 size_t errlen);

void target_free(struct target *t);   /* accepts a zeroed target */

#define INSTALL_TABLE_SUFFIX ".nccltune-tuner.table"   /* next to a block's file */

/* For a result with per-size rules, write its table (the nccl-tuner export) to the
 * absolute path `table`, atomically, mode 0644; nothing for another result. Returns
 * NCCLTUNE_OK or a status with a message. */
int install_table(const struct summary *s, const char *table,
                  const struct nccltune_install_options *o, char *err, size_t errlen);

#define INSTALL_PLUGIN_SUFFIX ".nccltune-tuner.so"      /* next to a block's file */
#define INSTALL_PLUGIN_MAX (256u << 20)                  /* a plugin larger is refused */

/* For a result with per-size rules, copy nccltune's tuner plugin (the one locate_plugin
 * finds, as an export would name it) to the absolute path `dest`, atomically, mode 0755,
 * so that the install names its own copy and outlives the build tree; nothing for
 * another result, or when `dest` is that plugin already (install_copy.c). Returns
 * NCCLTUNE_OK or a status with a message. */
int install_plugin(const struct summary *s, const char *dest,
                   const struct nccltune_install_options *o, char *err, size_t errlen);

/* Remove `path` (a file an install made); a missing one is fine. Returns NCCLTUNE_OK or
 * NCCLTUNE_ERROR with a message. */
int install_remove(const char *path, char *err, size_t errlen);

/* Record a successful install of s in `format` into `file` (and its plugin and table,
 * NULL for none) in the session folder (workflows/installed.h). Best effort, as
 * installed_add. */
void install_record(const struct summary *s, const char *format, const char *file,
                    const char *plugin, const char *table,
                    const struct nccltune_install_options *o);

/* Print a note on o->notes (when set). */
void install_note(const struct nccltune_install_options *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The pth installer (pth.c), with the contracts of nccltune_install / _uninstall; s is
 * the loaded result, already judged installable. */
int pth_install(const struct summary *s, const struct nccltune_install_options *o,
                char *written, size_t written_len, char *err, size_t errlen);
int pth_uninstall(const struct nccltune_install_options *o, char *written, size_t written_len,
                  char *err, size_t errlen);

#endif
