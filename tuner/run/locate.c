/* locate.c - where nccltune's own probes are: whether a GPU is visible, the probe for
 * the GPUs or for a machine model (runner_find_tool), and nccltune_probe_command, the
 * probe's command line quoted for a shell-like split (runner_split_command). */
#include "run/locate.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "nccltune.h"
#include "run/runner.h"

extern char **environ;

bool locate_gpu_visible(void)
{
	char path[32], *argv[] = {"nvidia-smi", "-L", NULL}, e[256];
	struct runner_request req;
	struct runner_result res;
	bool seen = false;

	for (int i = 0; i < 16; i++) {
		snprintf(path, sizeof path, "/dev/nvidia%d", i);
		if (access(path, F_OK) == 0)
			return true;
	}
	memset(&req, 0, sizeof req);
	req.argv = argv;
	req.envp = environ;
	req.timeout_s = 20;
	if (runner_run(&req, &res, e, sizeof e) == 0) {
		seen = res.spawned && res.exit_status == 0 && strstr(res.out, "GPU ");
		runner_result_free(&res);
	}
	return seen;
}

int locate_probe(const char *model, char *buf, size_t len, char *err, size_t errlen)
{
	return runner_find_tool(model ? "nccltune-model-probe" : "nccltune-probe", buf, len, err,
	                        errlen);
}

/* Append `word` to buf single-quoted, as a POSIX shell (and runner_split_command) reads
 * it back. Returns 0, or -1 when buf is too small. */
static int quote_word(char *buf, size_t len, size_t *used, const char *word)
{
	size_t u = *used;

	if (u && u + 1 < len)
		buf[u++] = ' ';
	if (u + 1 >= len)
		return -1;
	buf[u++] = '\'';
	for (const char *c = word; *c; c++) {
		if (*c == '\'') {
			if (u + 4 >= len)
				return -1;
			memcpy(buf + u, "'\\''", 4);
			u += 4;
		} else {
			if (u + 1 >= len)
				return -1;
			buf[u++] = *c;
		}
	}
	if (u + 2 > len)
		return -1;
	buf[u++] = '\'';
	buf[u] = '\0';
	*used = u;
	return 0;
}

int nccltune_probe_command(const char *model, char *buf, size_t len, char *err, size_t errlen)
{
	char path[PATH_MAX];
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	if (locate_probe(model, path, sizeof path, err, errlen) != 0)
		return NCCLTUNE_ERROR;
	if (quote_word(buf, len, &used, path) != 0 ||
	    (model && (quote_word(buf, len, &used, "--model") != 0 ||
	               quote_word(buf, len, &used, model) != 0))) {
		fs_errf(err, errlen, "%s: command too long", path);
		return NCCLTUNE_ERROR;
	}
	return NCCLTUNE_OK;
}
