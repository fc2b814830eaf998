/* nccl_conf_env.c - NCCL's own reader of its configuration file, as a test helper. It
 * loads libnccl.so.2 and calls ncclGetUniqueId, whose first step (ncclInitEnv ->
 * ncclEnvPluginInit -> initEnv, src/init.cc and src/plugin/env.cc at v2.28.9-1) reads
 * $NCCL_CONF_FILE (else ~/.nccl.conf) and then /etc/nccl.conf with NCCL's rules
 * (src/misc/param.cc, setEnvFile) and setenv()s what they hold; then it prints every
 * NCCL_* variable of the process but NCCL_CONF_FILE, and NCCLTUNE_TUNER_TABLE (which the
 * tuner plugin reads), sorted, one NAME=VALUE per line.
 * No GPU is needed: the files are read before anything touches CUDA, and whether the
 * unique id itself can be made (a network interface) does not matter.
 *
 *   nccl_conf_env [LIBNCCL]     (default: $NCCLTUNE_TEST_LIBNCCL, then
 *                                /usr/local/cuda/lib64/libnccl.so.2, then libnccl.so.2)
 * Exit 0; 77 when no libnccl can be loaded (the caller skips); 1 on a usage error. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	const char *tries[] = {argc > 1 ? argv[1] : NULL, getenv("NCCLTUNE_TEST_LIBNCCL"),
	                       "/usr/local/cuda/lib64/libnccl.so.2", "libnccl.so.2"};
	int (*get_unique_id)(void *id);
	unsigned char id[128];
	char **vars;
	size_t n = 0, cap = 0;
	void *h = NULL;

	for (size_t i = 0; !h && i < sizeof tries / sizeof tries[0]; i++)
		if (tries[i] && *tries[i])
			h = dlopen(tries[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "nccl_conf_env: no libnccl.so.2 to load: %s\n", dlerror());
		return 77;
	}
	*(void **)&get_unique_id = dlsym(h, "ncclGetUniqueId");
	if (!get_unique_id) {
		fprintf(stderr, "nccl_conf_env: no ncclGetUniqueId: %s\n", dlerror());
		return 77;
	}
	(void)get_unique_id(id);   /* its result does not matter: the env is read first */
	while (environ[cap])
		cap++;
	vars = calloc(cap + 1, sizeof *vars);
	if (!vars)
		return 1;
	for (size_t i = 0; i < cap; i++)
		if ((strncmp(environ[i], "NCCL_", 5) == 0 &&
		     strncmp(environ[i], "NCCL_CONF_FILE=", 15) != 0) ||
		    strncmp(environ[i], "NCCLTUNE_TUNER_TABLE=", 21) == 0)
			vars[n++] = environ[i];
	qsort(vars, n, sizeof *vars, by_name);
	for (size_t i = 0; i < n; i++)
		printf("%s\n", vars[i]);
	free(vars);
	return fflush(stdout) == 0 ? 0 : 1;
}
