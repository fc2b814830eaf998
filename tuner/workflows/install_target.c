/* install_target.c - the bottom the installers share (install.c: the blocks merged into
 * a sitecustomize.py or an nccl.conf; pth.c: the .pth file and its module; install_copy.c:
 * the plugin's copy): the file an install changes, read with its mode and owner and
 * written back atomically with them after a backup; the result's table written for
 * nccltune's plugin; the record of an install; the notes. It calls none of its siblings. */
#include "workflows/install.h"

#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "workflows/export.h"
#include "workflows/installed.h"

void install_note(const struct nccltune_install_options *o, const char *fmt, ...)
{
	va_list ap;

	if (!o->notes)
		return;
	va_start(ap, fmt);
	vfprintf(o->notes, fmt, ap);
	va_end(ap);
	fputc('\n', o->notes);
}

int install_table(const struct summary *s, const char *table,
                  const struct nccltune_install_options *o, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (!export_uses_plugin(s))
		return NCCLTUNE_OK;
	rc = export_render_string(s, "nccl-tuner", NULL, &text, &len, err, errlen);
	if (rc == NCCLTUNE_OK && fs_write_atomic(table, text, len, 0644, err, errlen) < 0)
		rc = NCCLTUNE_ERROR;
	if (rc == NCCLTUNE_OK)
		install_note(o, "the per-size rules for nccltune's tuner plugin: %s", table);
	free(text);
	return rc;
}

void install_record(const struct summary *s, const char *format, const char *file,
                    const char *plugin, const char *table,
                    const struct nccltune_install_options *o)
{
	installed_add(s, format, file, plugin, table, o->target, o->python, o->notes);
}

/* ---- the target file ---- */

int target_read(const char *path, const char *what, struct target *t, char *err,
                size_t errlen)
{
	struct stat st;

	memset(t, 0, sizeof(*t));
	t->mode = 0644;
	t->uid = t->gid = -1;
	if (lstat(path, &st) == 0) {
		/* Write through a symlink (Ubuntu links /usr/lib/python3.X/sitecustomize.py to
		 * /etc): renaming over the link would replace it with a copy. */
		if (!realpath(path, t->real)) {
			fs_errf(err, errlen, "%s: cannot resolve it: %s", path, strerror(errno));
			return NCCLTUNE_ERROR;
		}
		if (stat(t->real, &st) != 0 || !S_ISREG(st.st_mode)) {
			fs_errf(err, errlen, "%s: not a regular file", path);
			return NCCLTUNE_ERROR;
		}
		if (st.st_nlink > 1) {
			fs_errf(err, errlen, "%s: has %lu hard links, and replacing it would leave the "
			        "other names with the old text, so nccltune does not change it: break the "
			        "link first (cp FILE FILE.new && mv FILE.new FILE) or install elsewhere",
			        t->real, (unsigned long)st.st_nlink);
			return NCCLTUNE_USAGE;
		}
		t->existed = true;
		t->mode = (int)(st.st_mode & 07777);
		t->uid = (long)st.st_uid;
		t->gid = (long)st.st_gid;
		t->old = fs_read_file(t->real, INSTALL_FILE_MAX, &t->olen, err, errlen);
		if (!t->old)
			return NCCLTUNE_ERROR;
		if (memchr(t->old, '\0', t->olen)) {
			fs_errf(err, errlen, "%s: contains NUL bytes: not a %s", t->real, what);
			return NCCLTUNE_USAGE;
		}
	} else if (errno == ENOENT) {
		char dir[PATH_MAX];
		struct stat dst;

		if (strlen(path) >= PATH_MAX) {
			fs_errf(err, errlen, "%s: path too long", path);
			return NCCLTUNE_ERROR;
		}
		snprintf(t->real, PATH_MAX, "%s", path);
		snprintf(dir, sizeof(dir), "%s", path);
		if (stat(dirname(dir), &dst) != 0 || !S_ISDIR(dst.st_mode)) {
			fs_errf(err, errlen, "%s: its folder does not exist", path);
			return NCCLTUNE_ERROR;
		}
	} else {
		fs_errf(err, errlen, "%s: %s", path, strerror(errno));
		return NCCLTUNE_ERROR;
	}
	return NCCLTUNE_OK;
}

int target_write(const struct target *t, const char *text, size_t len, char *err,
                 size_t errlen)
{
	char bak[PATH_MAX + 32];

	if (t->existed) {
		snprintf(bak, sizeof(bak), "%s" INSTALL_BACKUP, t->real);
		if (fs_write_atomic_owned(bak, t->old, t->olen, t->mode, t->uid, t->gid, err,
		                          errlen) < 0)
			return NCCLTUNE_ERROR;
	}
	if (fs_write_atomic_owned(t->real, text, len, t->mode, t->uid, t->gid, err, errlen) < 0)
		return NCCLTUNE_ERROR;
	return NCCLTUNE_OK;
}

void target_free(struct target *t)
{
	if (!t)
		return;
	free(t->old);
	t->old = NULL;
}
