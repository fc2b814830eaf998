/* export_bundle.c - a self-contained export: the env-style exports of a result written
 * into one folder the user names (nccltune export --bundle DIR), together with what they
 * name - a copy of nccltune's tuner plugin and the result's table - so that the env files
 * name that folder and nothing else: a moved or rebuilt build tree, or a container that
 * mounts the folder at the same path (docker run -v DIR:DIR:ro --env-file DIR/nccl.env),
 * breaks nothing.
 *
 * The folder's path is written into the files as given: it must be absolute and plain
 * (no "." or ".." component, no doubled or trailing '/'), as the server or the container
 * will see it. The folder must be trusted (trust.h): whoever can change the plugin in it
 * chooses code that runs in every server that reads the env files. The plugin and the
 * table are written first, the env files last, each atomically, so an env file never
 * names a file that is not there yet. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsutil.h"
#include "nccltune.h"
#include "workflows/export.h"
#include "workflows/install.h"
#include "workflows/trust.h"

#define BUNDLE_PLUGIN "libnccl-tuner-nccltune.so"

/* The env-style formats a bundle holds (their file names from nccltune_export_filename). */
static const char *const bundle_formats[] = {"dotenv", "shell", "nccl-conf", "sitecustomize"};

/* Is dir absolute and plain: no empty, "." or ".." component, no trailing '/'? */
static bool plain_absolute(const char *dir)
{
	const char *p = dir;

	if (dir[0] != '/' || dir[1] == '\0')
		return false;
	while (*p == '/') {
		const char *c = ++p;
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		p = c + n;
	}
	return true;
}

/* The folder dir, made when missing (its parents must exist), checked as a folder
 * nobody else can change. NCCLTUNE_OK, NCCLTUNE_USAGE or NCCLTUNE_ERROR with a message. */
static int bundle_dir(const char *dir, char *err, size_t errlen)
{
	char why[1024];
	struct stat st;

	if (!plain_absolute(dir) || strlen(dir) > PATH_MAX - 64) {
		fs_errf(err, errlen, "--bundle %s: give the folder as an absolute path without '.', "
		        "'..', '//' or a trailing '/', as the server (or the container, mounting it "
		        "at the same path) will see it: the env files name it as given", dir);
		return NCCLTUNE_USAGE;
	}
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fs_errf(err, errlen, "--bundle %s: cannot create the folder: %s", dir, strerror(errno));
		return NCCLTUNE_ERROR;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fs_errf(err, errlen, "--bundle %s: not a folder", dir);
		return NCCLTUNE_USAGE;
	}
	if (trust_check_path(dir, why, sizeof why) != 0) {
		fs_errf(err, errlen, "--bundle %s: refused: %s (whoever can change this folder "
		        "chooses the plugin every server that reads its env files loads)", dir, why);
		return NCCLTUNE_USAGE;
	}
	return NCCLTUNE_OK;
}

/* Write one env-style format of s into dir, naming the bundle's plugin and table. */
static int bundle_env(const struct summary *s, const char *dir, const char *format,
                      const struct export_where *where, FILE *notes, char *err, size_t errlen)
{
	char path[PATH_MAX], *text = NULL;
	size_t len = 0;
	int rc;

	snprintf(path, sizeof path, "%s/%s", dir, nccltune_export_filename(format));
	rc = export_render_string(s, format, where, &text, &len, err, errlen);
	if (rc != NCCLTUNE_OK)
		goto out;
	if (fs_write_atomic(path, text, len, 0644, err, errlen) < 0) {
		rc = NCCLTUNE_ERROR;
		goto out;
	}
	if (notes)
		fprintf(notes, "bundle: %s (%s)\n", path, format);
out:
	free(text);
	return rc;
}

int nccltune_export_bundle(const char *path, const char *dir, FILE *notes, char *err,
                           size_t errlen)
{
	struct nccltune_install_options o;
	struct summary *s = NULL;
	struct export_where where = {NULL, NULL};
	char plugin[PATH_MAX], table[PATH_MAX];
	bool rules;
	int rc;

	if (summary_load(path, 0, &s, err, errlen) < 0)
		return NCCLTUNE_USAGE;
	rc = bundle_dir(dir, err, errlen);
	if (rc != NCCLTUNE_OK)
		goto out;
	memset(&o, 0, sizeof o);
	o.notes = notes;
	snprintf(plugin, sizeof plugin, "%s/" BUNDLE_PLUGIN, dir);
	snprintf(table, sizeof table, "%s/" EXPORT_TABLE_FILE, dir);
	rules = export_uses_plugin(s) && !summary_unmeasured(s);
	if (rules) {
		rc = install_plugin(s, plugin, &o, err, errlen);
		if (rc == NCCLTUNE_OK)
			rc = install_table(s, table, &o, err, errlen);
		where.plugin = plugin;
		where.table = table;
	} else {
		/* an earlier bundle's plugin and table, which these env files no longer name */
		rc = install_remove(plugin, err, errlen);
		if (rc == NCCLTUNE_OK)
			rc = install_remove(table, err, errlen);
	}
	for (size_t i = 0; rc == NCCLTUNE_OK && i < sizeof bundle_formats / sizeof *bundle_formats;
	     i++)
		rc = bundle_env(s, dir, bundle_formats[i], &where, notes, err, errlen);
out:
	summary_destroy(s);
	return rc;
}
