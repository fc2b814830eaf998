/* install.c - merge nccltune's block (the sitecustomize or the nccl-conf export) into a
 * sitecustomize.py or an NCCL configuration file: between marker lines, keeping the rest
 * of the file byte for byte (Ubuntu ships a sitecustomize.py with the apport hook; an
 * nccl.conf often holds NCCL_SOCKET_IFNAME), replacing an earlier nccltune block,
 * keeping a backup, atomically.
 *
 * Without a target: for sitecustomize, the interpreter is asked which sitecustomize it
 * imports (Python imports only the first `sitecustomize` on sys.path, so writing a second
 * one into site-packages next to the distribution's would silently do nothing); for
 * nccl-conf, the file NCCL reads for this user: $NCCL_CONF_FILE, else ~/.nccl.conf.
 * NCCL keeps the first line it reads for a variable, so a line of the file outside the
 * block that sets a tuned variable before it is refused rather than silently winning. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "workflows/export.h"
#include "fsutil.h"
#include "nccltune.h"
#include "run/runner.h"
#include "result/summary.h"

extern char **environ;

#define SITE_MAX (4u << 20)      /* a sitecustomize.py or nccl.conf larger is not one */
#define PY_TIMEOUT_S 30.0

/* Which file is (or would be) `import sitecustomize`: the one already imported at
 * start-up; else the first on sys.path (without the current folder, which is not on the
 * path when site runs); else a new one in purelib (or the first site-packages folder)
 * that is on sys.path. Prints the path, or nothing. */
static const char find_site_py[] =
	"import os, sys, site, sysconfig, importlib.util\n"
	"m = sys.modules.get('sitecustomize')\n"
	"f = getattr(m, '__file__', None) if m else None\n"
	"if not f:\n"
	"    cwd = os.getcwd()\n"
	"    sys.path[:] = [p for p in sys.path if p not in ('', '.', cwd)]\n"
	"    s = importlib.util.find_spec('sitecustomize')\n"
	"    f = s.origin if s is not None and s.has_location else None\n"
	"if not f:\n"
	"    dirs = [sysconfig.get_paths()['purelib']]\n"
	"    dirs += list(getattr(site, 'getsitepackages', lambda: [])())\n"
	"    for d in dirs:\n"
	"        if d in sys.path and os.path.isdir(d):\n"
	"            f = os.path.join(d, 'sitecustomize.py')\n"
	"            break\n"
	"print(f or '')\n";

static int find_site(const char *python, char *buf, size_t len, char *err, size_t errlen)
{
	char *argv[] = { NULL, "-c", NULL, NULL };
	struct runner_request req;
	struct runner_result res;
	char rerr[512];
	int rc = NCCLTUNE_ERROR;
	size_t n;

	memset(&req, 0, sizeof(req));
	memset(&res, 0, sizeof(res));
	argv[0] = strdup(python);
	argv[2] = strdup(find_site_py);
	if (!argv[0] || !argv[2]) {
		fs_errf(err, errlen, "out of memory");
		goto out;
	}
	req.argv = argv;
	req.envp = environ;
	req.timeout_s = PY_TIMEOUT_S;
	if (runner_run(&req, &res, rerr, sizeof(rerr)) < 0) {
		fs_errf(err, errlen, "cannot run %s to find its site-packages: %s", python, rerr);
		goto out;
	}
	if (!res.spawned) {
		fs_errf(err, errlen, "cannot run %s to find its site-packages: %s (use --python PY "
		        "or give the sitecustomize.py path)", python, res.spawn_error);
		goto out;
	}
	if (res.timed_out || res.exit_status != 0) {
		fs_errf(err, errlen, "%s failed while looking for its site-packages (%s): %.300s",
		        python, res.timed_out ? "timed out" : "non-zero exit", res.err ? res.err : "");
		goto out;
	}
	n = res.out_len;
	while (n > 0 && (res.out[n - 1] == '\n' || res.out[n - 1] == '\r'))
		n--;
	if (n == 0) {
		fs_errf(err, errlen, "%s has no site-packages folder on sys.path; give the "
		        "sitecustomize.py path explicitly", python);
		goto out;
	}
	if (n >= len || memchr(res.out, '\n', n) || res.out[0] != '/' ||
	    n < 3 || strncmp(res.out + n - 3, ".py", 3) != 0) {
		fs_errf(err, errlen, "%s named an unusable sitecustomize location '%.200s' (not an "
		        "absolute .py path); give the path explicitly", python, res.out);
		goto out;
	}
	memcpy(buf, res.out, n);
	buf[n] = '\0';
	rc = NCCLTUNE_OK;
out:
	runner_result_free(&res);
	free(argv[0]);
	free(argv[2]);
	return rc;
}

static bool is_marker(const char *line, size_t n, const char *marker)
{
	size_t m = strlen(marker);

	while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
		n--;
	return n == m && memcmp(line, marker, m) == 0;
}

/* Locate nccltune's block in `old`: [*begin, *end) spans its lines, newline included.
 * Returns 1 when found, 0 when there is none, -1 (message) for a broken marker pair or a
 * second block - both mean someone edited the file, and guessing could eat their code. */
static int find_block(const char *target, const char *old, size_t len, size_t *begin,
                      size_t *end, char *err, size_t errlen)
{
	size_t pos = 0, line = 0, open_line = 0, found = 0, first_line = 0;
	bool inside = false;

	while (pos < len) {
		const char *nl = memchr(old + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (old + pos)) : len - pos;
		size_t next = nl ? pos + n + 1 : len;

		line++;
		if (is_marker(old + pos, n, EXPORT_MARK_BEGIN)) {
			if (inside)
				return fs_errf(err, errlen, "%s:%zu: nccltune start marker inside the block "
				               "opened at line %zu, which has no end marker; fix the file by hand",
				               target, line, open_line);
			if (found)
				return fs_errf(err, errlen, "%s:%zu: a second nccltune block (the first is at "
				               "line %zu); keep one and run again", target, line, first_line);
			inside = true;
			open_line = line;
			*begin = pos;
		} else if (is_marker(old + pos, n, EXPORT_MARK_END)) {
			if (!inside)
				return fs_errf(err, errlen, "%s:%zu: nccltune end marker without a start "
				               "marker; fix the file by hand", target, line);
			inside = false;
			found++;
			first_line = open_line;
			*end = next;
		}
		pos = next;
	}
	if (inside)
		return fs_errf(err, errlen, "%s:%zu: nccltune start marker without an end marker "
		               "(\"%s\"); fix the file by hand", target, open_line, EXPORT_MARK_END);
	return found ? 1 : 0;
}

/* old with the block put in: in place of the earlier block, or appended after a blank
 * line. Returns a malloc'd buffer or NULL (out of memory). */
static char *merge(const char *old, size_t olen, size_t begin, size_t end, bool replace,
                   const char *block, size_t blen, size_t *nlen)
{
	size_t cap = olen + blen + 3, n = 0;
	char *buf = malloc(cap);

	if (!buf)
		return NULL;
	if (replace) {
		memcpy(buf, old, begin);
		n = begin;
		memcpy(buf + n, block, blen);
		n += blen;
		memcpy(buf + n, old + end, olen - end);
		n += olen - end;
	} else {
		memcpy(buf, old, olen);
		n = olen;
		if (n > 0 && buf[n - 1] != '\n')
			buf[n++] = '\n';
		if (n > 0 && !(n >= 2 && buf[n - 2] == '\n'))
			buf[n++] = '\n';
		memcpy(buf + n, block, blen);
		n += blen;
	}
	*nlen = n;
	return buf;
}

/* The configuration file NCCL reads for this user: $NCCL_CONF_FILE when set (NCCL >=
 * 2.23), else ~/.nccl.conf ($HOME, else the password database). */
static int find_nccl_conf(char *buf, size_t len, char *err, size_t errlen)
{
	const char *f = getenv("NCCL_CONF_FILE"), *home = getenv("HOME");
	struct passwd *pw;

	if (f && *f) {
		if (strlen(f) >= len) {
			fs_errf(err, errlen, "NCCL_CONF_FILE: path too long");
			return NCCLTUNE_USAGE;
		}
		snprintf(buf, len, "%s", f);
		return NCCLTUNE_OK;
	}
	if (!home || !*home) {
		pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : NULL;
	}
	if (!home || !*home) {
		fs_errf(err, errlen, "no home folder to put .nccl.conf in (HOME is unset and the "
		        "password database has none): give the file, e.g. --install=/etc/nccl.conf");
		return NCCLTUNE_USAGE;
	}
	if (strlen(home) + sizeof("/.nccl.conf") > len) {
		fs_errf(err, errlen, "%s/.nccl.conf: path too long", home);
		return NCCLTUNE_USAGE;
	}
	snprintf(buf, len, "%s/.nccl.conf", home);
	return NCCLTUNE_OK;
}

/* An NCCL configuration file keeps the first line for a variable: refuse one outside
 * nccltune's block that sets a tuned variable and comes before the block (before its
 * place at the end when there is none). 0, or NCCLTUNE_USAGE with a message. */
static int conf_conflicts(const char *target, const char *old, size_t len, size_t block_at,
                          const struct summary *s, char *err, size_t errlen)
{
	size_t pos = 0, line = 0;

	while (pos < len && pos < block_at) {
		const char *nl = memchr(old + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (old + pos)) : len - pos;
		const char *eq = memchr(old + pos, '=', n);

		line++;
		if (old[pos] != '#' && eq) {
			size_t nlen = (size_t)(eq - (old + pos));

			for (size_t i = 0; i < s->best.env.n; i++) {
				const char *name = s->best.env.v[i].name;

				if (strlen(name) == nlen && memcmp(name, old + pos, nlen) == 0) {
					fs_errf(err, errlen, "%s:%zu: sets %s outside nccltune's block, and NCCL "
					        "keeps the first line for a variable, so the tuned value would not "
					        "apply; remove or comment out that line and run again", target, line,
					        name);
					return NCCLTUNE_USAGE;
				}
			}
		}
		pos = nl ? pos + n + 1 : len;
	}
	return 0;
}

/* Read the install target, through a symlink: its real path into real (PATH_MAX), and
 * when it exists its text (*old, malloc'd), its mode and *existed; a missing target is
 * fine when its folder exists. Returns NCCLTUNE_OK, NCCLTUNE_USAGE for a file that is
 * not text, or NCCLTUNE_ERROR, with a message naming target. */
static int read_target(const char *target, bool conf, char *real, char **old, size_t *olen,
                       int *mode, bool *existed, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(target, &st) == 0) {
		/* Write through a symlink (Ubuntu links /usr/lib/python3.X/sitecustomize.py to
		 * /etc): renaming over the link would replace it with a copy. */
		if (!realpath(target, real)) {
			fs_errf(err, errlen, "%s: cannot resolve it: %s", target, strerror(errno));
			return NCCLTUNE_ERROR;
		}
		if (stat(real, &st) != 0 || !S_ISREG(st.st_mode)) {
			fs_errf(err, errlen, "%s: not a regular file", target);
			return NCCLTUNE_ERROR;
		}
		*existed = true;
		*mode = (int)(st.st_mode & 07777);
		*old = fs_read_file(real, SITE_MAX, olen, err, errlen);
		if (!*old)
			return NCCLTUNE_ERROR;
		if (memchr(*old, '\0', *olen)) {
			fs_errf(err, errlen, "%s: contains NUL bytes: not a %s", real,
			        conf ? "configuration file" : "Python source file");
			return NCCLTUNE_USAGE;
		}
	} else if (errno == ENOENT) {
		char dir[PATH_MAX];
		struct stat dst;

		if (strlen(target) >= PATH_MAX) {
			fs_errf(err, errlen, "%s: path too long", target);
			return NCCLTUNE_ERROR;
		}
		snprintf(real, PATH_MAX, "%s", target);
		snprintf(dir, sizeof(dir), "%s", target);
		if (stat(dirname(dir), &dst) != 0 || !S_ISDIR(dst.st_mode)) {
			fs_errf(err, errlen, "%s: its folder does not exist", target);
			return NCCLTUNE_ERROR;
		}
	} else {
		fs_errf(err, errlen, "%s: %s", target, strerror(errno));
		return NCCLTUNE_ERROR;
	}
	return NCCLTUNE_OK;
}

int nccltune_install(const char *path, const char *format, const char *target,
                     const char *python, char *written, size_t written_len, char *err,
                     size_t errlen)
{
	struct summary *s = NULL;
	char *block = NULL, *old = NULL, *merged = NULL;
	size_t blen = 0, olen = 0, mlen = 0, begin = 0, end = 0;
	char found_path[PATH_MAX], real[PATH_MAX], bak[PATH_MAX + 32];
	bool existed = false, conf;
	int mode = 0644, rc, found;

	if (written && written_len)
		written[0] = '\0';
	if (!format)
		format = "sitecustomize";
	conf = strcmp(format, "nccl-conf") == 0;
	if (!conf && strcmp(format, "sitecustomize") != 0) {
		fs_errf(err, errlen, "format %s cannot be installed (sitecustomize, nccl-conf)", format);
		return NCCLTUNE_USAGE;
	}
	if (conf && python) {
		fs_errf(err, errlen, "a Python interpreter only matters to a sitecustomize install");
		return NCCLTUNE_USAGE;
	}
	if (summary_load(path, 0, &s, err, errlen) < 0)
		return NCCLTUNE_USAGE;
	rc = export_render_string(s, format, &block, &blen, err, errlen);
	if (rc != NCCLTUNE_OK)
		goto out;
	if (!target) {
		rc = conf ? find_nccl_conf(found_path, sizeof(found_path), err, errlen)
		          : find_site(python ? python : "python3", found_path, sizeof(found_path), err,
		                      errlen);
		if (rc != NCCLTUNE_OK)
			goto out;
		target = found_path;
	}
	rc = read_target(target, conf, real, &old, &olen, &mode, &existed, err, errlen);
	if (rc != NCCLTUNE_OK)
		goto out;
	rc = NCCLTUNE_ERROR;
	found = find_block(real, old ? old : "", olen, &begin, &end, err, errlen);
	if (found < 0 || (conf && conf_conflicts(real, old ? old : "", olen, found ? begin : olen, s,
	                                         err, errlen) != 0)) {
		rc = NCCLTUNE_USAGE;
		goto out;
	}
	merged = merge(old ? old : "", olen, begin, end, found == 1, block, blen, &mlen);
	if (!merged) {
		fs_errf(err, errlen, "out of memory");
		goto out;
	}
	if (existed && mlen == olen && memcmp(merged, old, olen) == 0) {
		/* Nothing changes: keep the backup of the last real change. */
		rc = NCCLTUNE_OK;
		goto done;
	}
	if (existed) {
		snprintf(bak, sizeof(bak), "%s.nccltune-bak", real);
		if (fs_write_atomic(bak, old, olen, mode, err, errlen) < 0)
			goto out;
	}
	if (fs_write_atomic(real, merged, mlen, mode, err, errlen) < 0)
		goto out;
	rc = NCCLTUNE_OK;
done:
	if (written && written_len)
		snprintf(written, written_len, "%s", real);
out:
	free(merged);
	free(old);
	free(block);
	summary_destroy(s);
	return rc;
}
