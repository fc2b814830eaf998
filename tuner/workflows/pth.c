/* pth.c - the pth install: the tuned environment for one interpreter, in its own
 * site-packages (sysconfig's purelib), as two files nccltune owns:
 *
 *   nccltune.pth       one line, "import _nccltune_env": site.py runs a .pth line that
 *                      starts with "import" at every start-up of that interpreter, and
 *                      nothing shadows it (unlike sitecustomize, of which Python imports
 *                      only the first on sys.path: Debian's /etc/python3.X one shadows a
 *                      venv's)
 *   _nccltune_env.py   the sitecustomize export: sets each variable that is not already
 *                      set, nothing with NCCLTUNE_OFF=1, no data on its first two lines
 *
 * A venv's site-packages is read by that venv's interpreter alone; an interpreter that is
 * not a venv reads its own, and so does every venv made from it with
 * --system-site-packages: installed there only with `system`, and the notes say which. Files that nccltune did not write are
 * never overwritten or removed. A result with per-size rules also gets its table there,
 * nccltune-tuner.table, which the module names. Uninstall removes the .pth and the table
 * and keeps the module as _nccltune_env.py.nccltune-bak. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "workflows/export.h"
#include "workflows/install.h"
#include "workflows/python.h"

#define PTH_FILE "nccltune.pth"
#define PTH_MODULE "_nccltune_env.py"
#define PTH_LINE "import _nccltune_env\n"
#define PTH_TABLE "nccltune-tuner.table"   /* a result with per-size rules: its table */

/* The site-packages folder into dir: o->target, or o->python's purelib, which must be on
 * its sys.path; when installing, says on o->notes which interpreters read it. */
static int pth_dir(const struct nccltune_install_options *o, bool installing, char *dir,
                   size_t len, char *err, size_t errlen)
{
	struct nccltune_install_options quiet = *o;
	const char *python = o->python ? o->python : "python3";
	struct python_info pi;
	struct stat st;
	int rc;

	if (o->target) {
		if (stat(o->target, &st) != 0 || !S_ISDIR(st.st_mode)) {
			fs_errf(err, errlen, "%s: not a folder (a pth install takes the site-packages "
			        "folder)", o->target);
			return NCCLTUNE_USAGE;
		}
		if (!realpath(o->target, dir)) {
			fs_errf(err, errlen, "%s: %s", o->target, strerror(errno));
			return NCCLTUNE_ERROR;
		}
		if (installing)
			install_note(o, "affects every interpreter that reads the .pth files of %s", dir);
		return NCCLTUNE_OK;
	}
	rc = python_info(python, &pi, err, errlen);
	if (rc != NCCLTUNE_OK)
		return rc;
	if (!installing) {
		quiet.notes = NULL;
		o = &quiet;
	}
	if (!pi.purelib_on_path || stat(pi.purelib, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fs_errf(err, errlen, "%s: its site-packages %s is %s, so a .pth file there would not "
		        "be read; give the folder explicitly", python, pi.purelib,
		        pi.purelib_on_path ? "missing" : "not on its sys.path");
		return NCCLTUNE_ERROR;
	}
	snprintf(dir, len, "%s", pi.purelib);
	if (pi.venv) {
		install_note(o, "affects only the virtual environment %s: programs run by %s",
		             pi.prefix, pi.executable);
	} else if (installing && !o->system) {
		/* a system interpreter's site-packages: every program it runs (an unattended
		 * re-tune with python3 would change them all) - asked for, never defaulted */
		fs_errf(err, errlen, "%s is not a virtual environment: %s is its own site-packages, "
		        "so a .pth there runs in every program it runs and every virtual environment "
		        "made from it with --system-site-packages; nccltune installs there only with "
		        "--system (or give the server's venv interpreter: --python VENV/bin/python)",
		        pi.executable, pi.purelib);
		return NCCLTUNE_USAGE;
	} else {
		install_note(o, "warning: %s is not a virtual environment: %s is its own "
		             "site-packages, so this affects every program it runs and every virtual "
		             "environment made from it with --system-site-packages", pi.executable,
		             pi.purelib);
	}
	return NCCLTUNE_OK;
}

/* Is t (read, existing) a file nccltune wrote: the exact .pth line, or a module whose
 * first line is the start marker? */
static bool ours(const struct target *t, bool module)
{
	size_t m = strlen(EXPORT_MARK_BEGIN);

	if (!module)
		return t->olen == strlen(PTH_LINE) && memcmp(t->old, PTH_LINE, t->olen) == 0;
	return t->olen > m && memcmp(t->old, EXPORT_MARK_BEGIN, m) == 0 && t->old[m] == '\n';
}

/* Read dir/name into t and refuse it when it exists and nccltune did not write it. */
static int read_owned(const char *dir, const char *name, bool module, struct target *t,
                      char *err, size_t errlen)
{
	char path[PATH_MAX + 64];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	rc = target_read(path, module ? "Python source file" : ".pth file", t, err, errlen);
	if (rc == NCCLTUNE_OK && t->existed && !ours(t, module)) {
		fs_errf(err, errlen, "%s: exists and was not written by nccltune; nccltune leaves "
		        "it alone (move it away to install)", t->real);
		rc = NCCLTUNE_USAGE;
	}
	return rc;
}

int pth_install(const struct summary *s, const struct nccltune_install_options *o,
                char *written, size_t written_len, char *err, size_t errlen)
{
	const char *python = o->python ? o->python : "python3";
	struct target mod, pth;
	struct export_where where = {NULL, NULL};
	char dir[PATH_MAX], table[PATH_MAX + 32], *block = NULL;
	size_t blen = 0;
	int rc;

	memset(&mod, 0, sizeof(mod));
	memset(&pth, 0, sizeof(pth));
	rc = pth_dir(o, true, dir, sizeof(dir), err, errlen);
	if (rc != NCCLTUNE_OK)
		return rc;
	snprintf(table, sizeof(table), "%s/" PTH_TABLE, dir);
	if (export_uses_plugin(s))
		where.table = table;
	rc = export_render_string(s, "sitecustomize", &where, &block, &blen, err, errlen);
	if (rc == NCCLTUNE_OK)
		rc = read_owned(dir, PTH_MODULE, true, &mod, err, errlen);
	if (rc == NCCLTUNE_OK)
		rc = read_owned(dir, PTH_FILE, false, &pth, err, errlen);
	if (rc == NCCLTUNE_OK)
		rc = python_parses(python, block, blen, mod.real, err, errlen);
	if (rc != NCCLTUNE_OK)
		goto out;
	/* the table, then the module: a .pth line naming a missing module prints an error at
	 * every start-up */
	rc = install_table(s, table, o, err, errlen);
	if (rc == NCCLTUNE_OK && !(mod.existed && mod.olen == blen && memcmp(mod.old, block, blen) == 0))
		rc = target_write(&mod, block, blen, err, errlen);
	if (rc == NCCLTUNE_OK && !pth.existed)
		rc = target_write(&pth, PTH_LINE, strlen(PTH_LINE), err, errlen);
	if (rc == NCCLTUNE_OK)
		install_record(s, "pth", pth.real, export_uses_plugin(s) ? table : NULL, o);
	if (rc == NCCLTUNE_OK && written && written_len)
		snprintf(written, written_len, "%s", pth.real);
out:
	target_free(&mod);
	target_free(&pth);
	free(block);
	return rc;
}

int pth_uninstall(const struct nccltune_install_options *o, char *written, size_t written_len,
                  char *err, size_t errlen)
{
	struct target mod, pth;
	char dir[PATH_MAX], bak[PATH_MAX + 32], table[PATH_MAX + 32];
	int rc;

	memset(&mod, 0, sizeof(mod));
	memset(&pth, 0, sizeof(pth));
	rc = pth_dir(o, false, dir, sizeof(dir), err, errlen);
	if (rc == NCCLTUNE_OK)
		rc = read_owned(dir, PTH_MODULE, true, &mod, err, errlen);
	if (rc == NCCLTUNE_OK)
		rc = read_owned(dir, PTH_FILE, false, &pth, err, errlen);
	if (rc != NCCLTUNE_OK)
		goto out;
	if (!mod.existed && !pth.existed) {
		install_note(o, "nothing to uninstall: %s holds no %s", dir, PTH_FILE);
		goto out;
	}
	rc = NCCLTUNE_ERROR;
	/* the .pth first, so that no start-up ever names a missing module */
	if (pth.existed && unlink(pth.real) != 0) {
		fs_errf(err, errlen, "%s: cannot remove it: %s", pth.real, strerror(errno));
		goto out;
	}
	snprintf(bak, sizeof(bak), "%s" INSTALL_BACKUP, mod.real);
	if (mod.existed && rename(mod.real, bak) != 0) {
		fs_errf(err, errlen, "%s: cannot move it to %s: %s", mod.real, bak, strerror(errno));
		goto out;
	}
	snprintf(table, sizeof(table), "%s/" PTH_TABLE, dir);
	if (unlink(table) != 0 && errno != ENOENT) {
		fs_errf(err, errlen, "%s: cannot remove it: %s", table, strerror(errno));
		goto out;
	}
	rc = NCCLTUNE_OK;
	if (mod.existed)
		install_note(o, "the module is kept as %s", bak);
	if (written && written_len)
		snprintf(written, written_len, "%s", pth.existed ? pth.real : mod.real);
out:
	target_free(&mod);
	target_free(&pth);
	return rc;
}
