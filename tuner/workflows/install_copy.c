/* install_copy.c - the copy of nccltune's tuner plugin an install names: written next to
 * the installed file, so that a moved or rebuilt build tree, a meson install elsewhere or
 * a venv baked into an image does not leave the install naming nothing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "nccltune.h"
#include "run/locate.h"
#include "workflows/export.h"
#include "workflows/install.h"

int install_plugin(const struct summary *s, const char *dest,
                   const struct nccltune_install_options *o, char *err, size_t errlen)
{
	char from[PATH_MAX], why[2048], *data = NULL;
	size_t len = 0;
	bool build;
	int rc = NCCLTUNE_ERROR;

	if (!export_uses_plugin(s))
		return NCCLTUNE_OK;
	if (locate_plugin(from, sizeof from, &build, why, sizeof why) != 0) {
		fs_errf(err, errlen, "%s: the result has per-size rules, which run through "
		        "nccltune's tuner plugin: %s", s->origin, why);
		goto out;
	}
	if (strcmp(from, dest) == 0) {
		rc = NCCLTUNE_OK;   /* installed again from its own copy */
		goto out;
	}
	data = fs_read_file(from, INSTALL_PLUGIN_MAX, &len, why, sizeof why);
	if (!data) {
		fs_errf(err, errlen, "nccltune's tuner plugin: %s", why);
		goto out;
	}
	if (fs_write_atomic(dest, data, len, 0755, err, errlen) < 0)
		goto out;
	install_note(o, "nccltune's tuner plugin, copied from %s: %s", from, dest);
	rc = NCCLTUNE_OK;
out:
	free(data);
	return rc;
}

int install_remove(const char *path, char *err, size_t errlen)
{
	if (unlink(path) != 0 && errno != ENOENT) {
		fs_errf(err, errlen, "%s: cannot remove it: %s", path, strerror(errno));
		return NCCLTUNE_ERROR;
	}
	return NCCLTUNE_OK;
}
