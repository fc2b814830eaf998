/* locate.c - where nccltune's own probes and plugin are: whether a GPU is visible, the
 * probe for the GPUs or for a machine model (runner_find_tool), nccltune_probe_command,
 * the probe's command line quoted for a shell-like split (runner_split_command),
 * locate_plugin, the tuner plugin checked by dlopen and its control version, and how to
 * run this nccltune again (locate_self_command). */
#include "run/locate.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "nccltune.h"
#include "nccltune_config.h"
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

int locate_quote_word(char *buf, size_t len, size_t *used, const char *word)
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

/* Is some "nccltune" in PATH the file with exe's device and inode? */
static bool self_in_path(const struct stat *exe)
{
	const char *p = getenv("PATH");

	while (p && *p) {
		const char *colon = strchr(p, ':');
		size_t dlen = colon ? (size_t)(colon - p) : strlen(p);
		char cand[PATH_MAX];
		struct stat st;
		int k = snprintf(cand, sizeof cand, "%.*s/nccltune", (int)dlen, dlen ? p : ".");

		if (k > 0 && (size_t)k < sizeof cand && stat(cand, &st) == 0 &&
		    st.st_dev == exe->st_dev && st.st_ino == exe->st_ino)
			return true;
		if (k > 0 && (size_t)k < sizeof cand && access(cand, X_OK) == 0)
			return false;   /* the first nccltune in PATH is another one */
		p = colon ? colon + 1 : NULL;
	}
	return false;
}

char *locate_self_command(char *buf, size_t len)
{
	char exe[PATH_MAX];
	const char *base;
	struct stat st;
	size_t used = 0;
	bool plain = true;

	snprintf(buf, len, "nccltune");
	if (fs_program_path(exe, sizeof exe) != 0)
		return buf;
	base = strrchr(exe, '/');
	if (!base || strcmp(base + 1, "nccltune") != 0 || stat(exe, &st) != 0)
		return buf;   /* embedded in another program, or cannot tell */
	if (self_in_path(&st))
		return buf;
	for (const char *c = exe; *c; c++)
		plain = plain && (isalnum((unsigned char)*c) || strchr("/._-+,:@", *c));
	if (plain)
		snprintf(buf, len, "%s", exe);
	else if (locate_quote_word(buf, len, &used, exe) != 0)
		snprintf(buf, len, "nccltune");
	return buf;
}

int nccltune_probe_command(const char *model, char *buf, size_t len, char *err, size_t errlen)
{
	char path[PATH_MAX];
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	if (locate_probe(model, path, sizeof path, err, errlen) != 0)
		return NCCLTUNE_ERROR;
	if (locate_quote_word(buf, len, &used, path) != 0 ||
	    (model && (locate_quote_word(buf, len, &used, "--model") != 0 ||
	               locate_quote_word(buf, len, &used, model) != 0))) {
		fs_errf(err, errlen, "%s: command too long", path);
		return NCCLTUNE_ERROR;
	}
	return NCCLTUNE_OK;
}

#define PLUGIN_FILE "libnccl-tuner-nccltune.so"

int locate_plugin_check(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int (*version)(void);
	void *h;
	int v, rc = -1;

	if (path[0] != '/')
		return fs_errf(err, errlen, "%s: not an absolute path", path);
	if (stat(path, &st) != 0)
		return fs_errf(err, errlen, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return fs_errf(err, errlen, "%s: not a regular file", path);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return fs_errf(err, errlen, "%s: does not load: %s", path, dlerror());
	*(void **)&version = dlsym(h, "nccltune_tuner_control_version");
	if (!version) {
		fs_errf(err, errlen, "%s: not nccltune's tuner plugin (no "
		        "nccltune_tuner_control_version)", path);
		goto out;
	}
	v = version();
	if (v != 1) {
		fs_errf(err, errlen, "%s: control version %d, not 1: another nccltune's plugin", path,
		        v);
		goto out;
	}
	rc = 0;
out:
	dlclose(h);
	return rc;
}

int locate_plugin(char *buf, size_t len, bool *build_tree, char *err, size_t errlen)
{
	static const char *const rel[] = {"/../plugin/", "/../../plugin/"};
	const char *over = getenv("NCCLTUNE_PLUGIN");
	char dir[PATH_MAX], cand[PATH_MAX + 64], why[PATH_MAX + 400], looked[2048];
	size_t used = 0;

	*build_tree = false;
	if (over && *over) {
		if (locate_plugin_check(over, why, sizeof why) != 0)
			return fs_errf(err, errlen, "$NCCLTUNE_PLUGIN: %s", why);
		if (!realpath(over, buf) || strlen(buf) >= len)
			return fs_errf(err, errlen, "$NCCLTUNE_PLUGIN=%s: cannot resolve it", over);
		return 0;
	}
	looked[0] = '\0';
	for (size_t i = 0; i <= sizeof rel / sizeof rel[0]; i++) {
		char real[PATH_MAX];
		int k;

		if (i < sizeof rel / sizeof rel[0]) {
			if (fs_program_dir(dir, sizeof dir) != 0)
				continue;
			snprintf(cand, sizeof cand, "%s%s%s", dir, rel[i], PLUGIN_FILE);
		} else {
			snprintf(cand, sizeof cand, "%s/%s", NCCLTUNE_LIBDIR, PLUGIN_FILE);
		}
		if (realpath(cand, real) && locate_plugin_check(real, why, sizeof why) == 0) {
			if (strlen(real) >= len)
				return fs_errf(err, errlen, "%s: path too long", real);
			snprintf(buf, len, "%s", real);
			*build_tree = i < sizeof rel / sizeof rel[0];
			return 0;
		}
		if (!realpath(cand, real))
			fs_errf(why, sizeof why, "%s: %s", cand, strerror(errno));
		k = snprintf(looked + used, sizeof looked - used, "%s%s", used ? "; " : "", why);
		if (k > 0 && (size_t)k < sizeof looked - used)
			used += (size_t)k;
	}
	return fs_errf(err, errlen, "nccltune's tuner plugin (%s) not found: $NCCLTUNE_PLUGIN "
	               "unset; %s (build it with meson compile, install it with meson install, "
	               "or point NCCLTUNE_PLUGIN at it)", PLUGIN_FILE, looked);
}
