/* ncclpath.c - the NCCL library the probe runs on (ncclpath.h). */
#include "ncclpath.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ncclpath_loaded(const char *symbol, char *buf, size_t len, char *err, size_t errlen)
{
	void *addr = dlsym(RTLD_DEFAULT, symbol);
	char real[PATH_MAX];
	Dl_info info;

	if (!addr) {
		snprintf(err, errlen, "%s is not defined in this process: no NCCL loaded", symbol);
		return -1;
	}
	if (dladdr(addr, &info) == 0 || !info.dli_fname || !info.dli_fname[0]) {
		snprintf(err, errlen, "dladdr(%s): cannot tell which file defines it", symbol);
		return -1;
	}
	if (!realpath(info.dli_fname, real)) {
		snprintf(err, errlen, "%s: %s", info.dli_fname, strerror(errno));
		return -1;
	}
	if (strlen(real) >= len) {
		snprintf(err, errlen, "%s: path too long", real);
		return -1;
	}
	snprintf(buf, len, "%s", real);
	return 0;
}

int ncclpath_ensure(const char *want, const char *symbol, char **argv, char *err,
                    size_t errlen)
{
	char real[PATH_MAX], loaded[PATH_MAX], dir[PATH_MAX], e[PATH_MAX + 64], *slash, *path;
	const char *old = getenv("LD_LIBRARY_PATH"), *mark = getenv(NCCLPATH_REEXEC_VAR);
	struct stat st;
	size_t len;

	if (!realpath(want, real) || stat(real, &st) != 0) {
		snprintf(err, errlen, "--nccl %s: %s", want, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "--nccl %s: not a regular file (a libnccl.so.2)", want);
		return -1;
	}
	if (ncclpath_loaded(symbol, loaded, sizeof loaded, e, sizeof e) != 0) {
		snprintf(err, errlen, "--nccl %s: %s", want, e);
		return -1;
	}
	if (strcmp(loaded, real) == 0) {
		unsetenv(NCCLPATH_REEXEC_VAR);   /* done: children do not inherit the marker */
		return 0;
	}
	if (mark && strcmp(mark, real) == 0) {
		snprintf(err, errlen, "--nccl %s: asked for %s, but the loader took %s even with "
		         "its folder first on LD_LIBRARY_PATH (name the file libnccl.so.2, or its "
		         "folder's libnccl.so.2 is another copy)", want, real, loaded);
		return -1;
	}
	/* The folder as named, not the link target's: the loader looks for libnccl.so.2 by
	 * that name there. */
	if (want[0] == '/')
		snprintf(dir, sizeof dir, "%s", want);
	else if (!getcwd(dir, sizeof dir) || strlen(dir) + strlen(want) + 2 > sizeof dir) {
		snprintf(err, errlen, "--nccl %s: cannot make the path absolute", want);
		return -1;
	} else
		snprintf(dir + strlen(dir), sizeof dir - strlen(dir), "/%s", want);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	/* A library this system cannot load (built for a newer glibc, a dependency missing)
	 * would kill the re-executed probe inside the loader, before it could report: try
	 * it here first, where the failure is still a report. */
	{
		void *h = dlopen(real, RTLD_LAZY | RTLD_LOCAL);

		if (!h) {
			const char *why = dlerror();

			snprintf(err, errlen, "--nccl %s: cannot be loaded here: %.400s", want,
			         why ? why : "dlopen failed");
			return -1;
		}
		dlclose(h);
	}
	/* the loader splits LD_LIBRARY_PATH at ':' and ';' (glibc's elf/dl-load.c): such a
	 * folder would put other folders first */
	if (strpbrk(dir, ":;")) {
		snprintf(err, errlen, "--nccl %s: its folder's name holds ':' or ';', which "
		         "LD_LIBRARY_PATH cannot carry; copy or link the library elsewhere", want);
		return -1;
	}
	len = strlen(dir) + (old ? strlen(old) : 0) + 2;
	path = malloc(len);
	if (!path) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(path, len, "%s%s%s", dir, old && *old ? ":" : "", old && *old ? old : "");
	if (setenv("LD_LIBRARY_PATH", path, 1) != 0 || setenv(NCCLPATH_REEXEC_VAR, real, 1) != 0)
		snprintf(err, errlen, "--nccl %s: setenv: %s", want, strerror(errno));
	else {
		fflush(NULL);
		execv("/proc/self/exe", argv);
		snprintf(err, errlen, "--nccl %s: re-executing the probe failed: %s", want,
		         strerror(errno));
	}
	free(path);
	return -1;
}
