/* plugin_file.h - is a file nccltune's tuner plugin, judged without loading it
 * (plugin_file.c)? check and retune verify the plugin an install names (installed.json)
 * this way: a dlopen would run the library's constructors inside nccltune, as root for
 * an unattended re-tune. */
#ifndef NCCLTUNE_WORKFLOWS_PLUGIN_FILE_H
#define NCCLTUNE_WORKFLOWS_PLUGIN_FILE_H

#include <stddef.h>

/* `path` (absolute) is a regular file, an ELF shared library for this machine's
 * architecture and byte order, whose dynamic symbol table defines nccltune's control
 * entry point (a function) and one of NCCL's tuner entry points (ncclTunerPlugin_v*).
 * Read with bounds on every offset, never mapped for execution; the control version
 * itself is not asked (that would run it). 0, or -1 with a message naming path. */
int plugin_file_check(const char *path, char *err, size_t errlen);

#endif
