/* installed.h - the record of what was installed from a session folder,
 * SESSION/installed.json ({"schema": "nccltune-installed/1", "installs": [{"format",
 * "file", "plugin", "table"}]}), written by install (installed.c) and read by check, so
 * that `nccltune check SESSION` can tell whether the plugin and the table an installed
 * environment names still exist and load. */
#ifndef NCCLTUNE_WORKFLOWS_INSTALLED_H
#define NCCLTUNE_WORKFLOWS_INSTALLED_H

#include <stddef.h>
#include <stdio.h>

#include "result/summary.h"

#define INSTALLED_FILE "installed.json"
#define INSTALLED_SCHEMA "nccltune-installed/1"

/* Record that s (loaded from a session folder; nothing for a bare results.json) was
 * installed in `format` into `file`, naming `plugin` and `table` (NULL: none), replacing
 * an earlier record of the same file. Best effort: a folder that cannot be written gets
 * a warning on `notes` (check then knows nothing of this install). Can't fail. */
void installed_add(const struct summary *s, const char *format, const char *file,
                   const char *plugin, const char *table, FILE *notes);

/* For every recorded install that is still in place (its file exists and still holds
 * nccltune's block or .pth), check that its plugin is nccltune's plugin by its file
 * (plugin_file.h: never loaded into nccltune) and its table parses as the plugin parses it. Returns NCCLTUNE_OK (also without a record), or
 * NCCLTUNE_ERROR with a message naming the file, what is broken and how to repair it. */
int installed_verify(const char *session_dir, char *err, size_t errlen);

#endif
