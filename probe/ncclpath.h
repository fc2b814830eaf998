/* ncclpath.h - which libnccl.so.2 the probe runs on, and `--nccl PATH`: the probe links
 * libnccl.so.2, so to run on another copy (a PyTorch wheel's, as the servers load) it
 * re-executes itself once with PATH's folder first on LD_LIBRARY_PATH, then checks that
 * the library the loader picked is PATH (realpath against realpath). No CUDA here. */
#ifndef NCCLTUNE_PROBE_NCCLPATH_H
#define NCCLTUNE_PROBE_NCCLPATH_H

#include <stddef.h>

/* The environment variable that marks the one re-execution; its value is the wanted
 * library's real path, so a stale marker for another library does not count. */
#define NCCLPATH_REEXEC_VAR "NCCLTUNE_NCCL_REEXEC"

/* The real path of the shared object that defines `symbol` in this process (dlsym over
 * the global scope, then dladdr). Returns 0 with it in buf, or -1 with a message. */
int ncclpath_loaded(const char *symbol, char *buf, size_t len, char *err, size_t errlen);

/* Make this process run on the library `want` (defining `symbol`): returns 0 when it
 * already does; otherwise, the first time, re-executes /proc/self/exe with argv and
 * LD_LIBRARY_PATH=<want's folder>[:old] (and NCCLPATH_REEXEC_VAR), not returning when
 * that works. Returns -1 with a message naming want (and what was loaded instead) when
 * want cannot be resolved or is not a regular file, when its folder's name holds ':' or
 * ';' (LD_LIBRARY_PATH's separators), when the re-executed process still loaded another
 * copy (a file not named libnccl.so.2, or an RPATH before LD_LIBRARY_PATH), or exec
 * failed. Once the library matches, the marker is removed from the environment. */
int ncclpath_ensure(const char *want, const char *symbol, char **argv, char *err,
                    size_t errlen);

#endif
