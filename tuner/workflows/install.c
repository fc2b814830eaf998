/* install.c - merge nccltune's block (the sitecustomize or the nccl-conf export) into a
 * sitecustomize.py or an NCCL configuration file: between marker lines, keeping the rest
 * of the file byte for byte (Ubuntu ships a sitecustomize.py with the apport hook; an
 * nccl.conf often holds NCCL_SOCKET_IFNAME), replacing an earlier nccltune block,
 * keeping a backup, atomically, with the file's mode, owner and group.
 *
 * Markers count only as whole top-level comment lines: in Python the interpreter's own
 * tokenizer says which lines are comments (a marker inside a string literal is text),
 * an indented block is refused rather than skipped, and the merged file must pass the
 * interpreter's parser before it replaces the old one. A file with other hard links is
 * refused: an atomic replace would leave the other names with the old text.
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

/* ---- finding nccltune's block ----
 *
 * A marker is a whole line that is exactly a marker, trailing blanks aside. In an NCCL
 * configuration file only a '#' in the first column starts a comment, so a marker must
 * start there. In Python a marker must be a comment token of the interpreter's own
 * tokenizer: a marker line inside a string literal is text, not a marker, so it can never
 * make nccltune replace (swallow) the user's code. Either way a marker that is indented
 * (inside a Python block, say) is refused, never silently skipped: a second block
 * appended after it would leave two. */

struct marker { size_t line, col; bool begin; };

#define MARKERS_MAX 64

/* The Python side: tokenize or parse argv[2] with the interpreter that will run it.
 * "markers": print "LINE COL b|e" for each marker comment token; "parse": compile only.
 * Exit 3 with the reason on stderr for a file that is not valid Python. */
static const char python_check_py[] =
	"import ast, io, sys, tokenize\n"
	"B, E = '" EXPORT_MARK_BEGIN "', '" EXPORT_MARK_END "'\n"
	"mode, path = sys.argv[1], sys.argv[2]\n"
	"data = open(path, 'rb').read()\n"
	"try:\n"
	"    if mode == 'parse':\n"
	"        ast.parse(data, path)\n"
	"    else:\n"
	"        for t in tokenize.tokenize(io.BytesIO(data).readline):\n"
	"            c = t.string.rstrip(' \\t\\r')\n"
	"            if t.type == tokenize.COMMENT and c in (B, E):\n"
	"                print(t.start[0], t.start[1], 'b' if c == B else 'e')\n"
	"except Exception as e:\n"
	"    line = getattr(e, 'lineno', None) or (e.args[1][0] if len(e.args) > 1 and\n"
	"        isinstance(e.args[1], tuple) else 0)\n"
	"    print('%s:%s' % (line, str(e.args[0] if e.args else e).replace('\\n', ' ')),\n"
	"          file=sys.stderr)\n"
	"    sys.exit(3)\n";

/* Run the check in `mode` on `path` with `python` (isolated: no site, no user site, no
 * PYTHON* variables, so the file being changed is not imported). On success *out holds
 * what it printed (malloc'd). `shown` names the file in messages. Returns NCCLTUNE_OK,
 * NCCLTUNE_USAGE (not valid Python: "shown:LINE: reason") or NCCLTUNE_ERROR. */
static int python_check(const char *python, const char *mode, const char *path,
                        const char *shown, char **out, char *err, size_t errlen)
{
	char *argv[] = { NULL, "-I", "-S", "-c", NULL, NULL, NULL, NULL };
	struct runner_request req;
	struct runner_result res;
	char rerr[512], clean[400];
	int rc = NCCLTUNE_ERROR;

	memset(&req, 0, sizeof(req));
	memset(&res, 0, sizeof(res));
	argv[0] = strdup(python);
	argv[4] = strdup(python_check_py);
	argv[5] = strdup(mode);
	argv[6] = strdup(path);
	if (!argv[0] || !argv[4] || !argv[5] || !argv[6]) {
		fs_errf(err, errlen, "out of memory");
		goto out;
	}
	req.argv = argv;
	req.envp = environ;
	req.timeout_s = PY_TIMEOUT_S;
	if (runner_run(&req, &res, rerr, sizeof(rerr)) < 0) {
		fs_errf(err, errlen, "cannot run %s to read %s: %s", python, shown, rerr);
		goto out;
	}
	if (!res.spawned) {
		fs_errf(err, errlen, "cannot run %s to read %s as Python: %s (use --python PY)",
		        python, shown, res.spawn_error);
		goto out;
	}
	while (res.err && res.err_len > 0 && (res.err[res.err_len - 1] == '\n' ||
	                                      res.err[res.err_len - 1] == '\r'))
		res.err[--res.err_len] = '\0';
	summary_sanitize(res.err ? res.err : "", clean, sizeof(clean));
	if (!res.timed_out && res.exit_status == 3) {
		if (strcmp(mode, "parse") == 0)
			fs_errf(err, errlen, "%s: with nccltune's block in place the file would not be "
			        "valid Python for %s (line %s); are its marker lines inside brackets or a "
			        "statement? nothing changed", shown, python, clean);
		else
			fs_errf(err, errlen, "%s:%s%s not valid Python for %s, so nccltune does not edit "
			        "it; fix it first", shown, clean, *clean ? ";" : "", python);
		rc = NCCLTUNE_USAGE;
		goto out;
	}
	if (res.timed_out || res.exit_status != 0) {
		fs_errf(err, errlen, "%s failed while reading %s (%s): %s", python, shown,
		        res.timed_out ? "timed out" : "non-zero exit", clean);
		goto out;
	}
	*out = res.out;
	res.out = NULL;
	rc = NCCLTUNE_OK;
out:
	runner_result_free(&res);
	for (size_t i = 0; i < sizeof(argv) / sizeof(argv[0]); i++)
		if (i != 1 && i != 2 && i != 3)
			free(argv[i]);
	return rc;
}

/* The markers of a Python file at `path`, in order, from the interpreter's tokenizer. */
static int python_markers(const char *python, const char *path, struct marker *m, size_t *n,
                          char *err, size_t errlen)
{
	char *text = NULL;
	int rc = python_check(python, "markers", path, path, &text, err, errlen);

	*n = 0;
	if (rc != NCCLTUNE_OK)
		return rc;
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		unsigned long l, c;
		char kind;

		if (*n == MARKERS_MAX || sscanf(line, "%lu %lu %c", &l, &c, &kind) != 3) {
			if (*n == MARKERS_MAX)
				fs_errf(err, errlen, "%s: more than %d nccltune marker lines; fix the file "
				        "by hand", path, MARKERS_MAX);
			else
				fs_errf(err, errlen, "%s: unexpected answer from %s: %.80s", path, python,
				        line);
			rc = *n == MARKERS_MAX ? NCCLTUNE_USAGE : NCCLTUNE_ERROR;
			break;
		}
		m[*n].line = l;
		m[*n].col = c;
		m[(*n)++].begin = kind == 'b';
		line = nl ? nl + 1 : line + strlen(line);
	}
	free(text);
	return rc;
}

/* Is the line [line, line+n) a marker after `indent` blanks (trailing blanks aside)? */
static bool marker_line(const char *line, size_t n, const char *marker, size_t *indent)
{
	size_t m = strlen(marker), i = 0;

	while (i < n && (line[i] == ' ' || line[i] == '\t'))
		i++;
	while (n > i && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
		n--;
	*indent = i;
	return n - i == m && memcmp(line + i, marker, m) == 0;
}

/* The markers of an NCCL configuration file (or any text), by lines. */
static int text_markers(const char *target, const char *old, size_t len, struct marker *m,
                        size_t *n, char *err, size_t errlen)
{
	size_t pos = 0, line = 0;

	*n = 0;
	while (pos < len) {
		const char *nl = memchr(old + pos, '\n', len - pos);
		size_t k = nl ? (size_t)(nl - (old + pos)) : len - pos, indent;
		bool b;

		line++;
		if ((b = marker_line(old + pos, k, EXPORT_MARK_BEGIN, &indent)) ||
		    marker_line(old + pos, k, EXPORT_MARK_END, &indent)) {
			if (*n == MARKERS_MAX)
				return fs_errf(err, errlen, "%s: more than %d nccltune marker lines; fix the "
				               "file by hand", target, MARKERS_MAX);
			m[*n].line = line;
			m[*n].col = indent;
			m[(*n)++].begin = b;
		}
		pos = nl ? pos + k + 1 : len;
	}
	return 0;
}

/* Byte offset of the start of line `line` (1-based) in old; len when past the end. */
static size_t line_start(const char *old, size_t len, size_t line)
{
	size_t pos = 0;

	for (size_t l = 1; l < line && pos < len; l++) {
		const char *nl = memchr(old + pos, '\n', len - pos);

		pos = nl ? (size_t)(nl - old) + 1 : len;
	}
	return pos;
}

/* nccltune's block among the markers: [*begin, *end) spans its lines, newline included.
 * Returns 1 when found, 0 when there is none, -1 (message) for an indented marker, a
 * broken marker pair or a second block - each means someone edited the file, and
 * guessing could eat their code. */
static int find_block(const char *target, const char *old, size_t len, const struct marker *m,
                      size_t n, size_t *begin, size_t *end, char *err, size_t errlen)
{
	size_t open_line = 0, found = 0, first_line = 0;
	bool inside = false;

	for (size_t i = 0; i < n; i++) {
		if (m[i].col > 0)
			return fs_errf(err, errlen, "%s:%zu: an nccltune marker indented by %zu "
			               "column(s), not at the top level (inside other code?): nccltune "
			               "changes only a block whose marker lines start in the first column; "
			               "move the block there or remove it, then run again", target,
			               m[i].line, m[i].col);
		if (m[i].begin) {
			if (inside)
				return fs_errf(err, errlen, "%s:%zu: nccltune start marker inside the block "
				               "opened at line %zu, which has no end marker; fix the file by "
				               "hand", target, m[i].line, open_line);
			if (found)
				return fs_errf(err, errlen, "%s:%zu: a second nccltune block (the first is at "
				               "line %zu); keep one and run again", target, m[i].line,
				               first_line);
			inside = true;
			open_line = m[i].line;
			*begin = line_start(old, len, m[i].line);
		} else {
			if (!inside)
				return fs_errf(err, errlen, "%s:%zu: nccltune end marker without a start "
				               "marker; fix the file by hand", target, m[i].line);
			inside = false;
			found++;
			first_line = open_line;
			*end = line_start(old, len, m[i].line + 1);
		}
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
 * nccltune's block that sets a variable of the block (tuned or pinned) and comes before
 * it (before its place at the end when there is none). 0, or NCCLTUNE_USAGE with a
 * message. */
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

			for (size_t i = 0; i < s->best.env.n + s->pinned.n; i++) {
				const char *name = i < s->best.env.n ? s->best.env.v[i].name
				                                     : s->pinned.v[i - s->best.env.n].name;

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

/* The file an install changes. */
struct target {
	char real[PATH_MAX];    /* the target, symlinks resolved */
	bool existed;
	char *old;              /* its text (malloc'd), when it existed */
	size_t olen;
	int mode;               /* kept, like the owner */
	long uid, gid;          /* -1: a new file, the writer's */
};

/* Read the install target, through a symlink: its real path, and when it exists its
 * text, mode and owner; a missing target is fine when its folder exists. A file with
 * more than one hard link is refused: an atomic replace (a new file renamed over the
 * name) would leave its other names with the old text, and writing in place would not be
 * atomic. Returns NCCLTUNE_OK, NCCLTUNE_USAGE for a file that is not text or has other
 * links, or NCCLTUNE_ERROR, with a message naming target. */
static int read_target(const char *target, bool conf, struct target *t, char *err,
                       size_t errlen)
{
	struct stat st;

	t->mode = 0644;
	t->uid = t->gid = -1;
	if (lstat(target, &st) == 0) {
		/* Write through a symlink (Ubuntu links /usr/lib/python3.X/sitecustomize.py to
		 * /etc): renaming over the link would replace it with a copy. */
		if (!realpath(target, t->real)) {
			fs_errf(err, errlen, "%s: cannot resolve it: %s", target, strerror(errno));
			return NCCLTUNE_ERROR;
		}
		if (stat(t->real, &st) != 0 || !S_ISREG(st.st_mode)) {
			fs_errf(err, errlen, "%s: not a regular file", target);
			return NCCLTUNE_ERROR;
		}
		if (st.st_nlink > 1) {
			fs_errf(err, errlen, "%s: has %lu hard links, and replacing it would leave the "
			        "other names with the old text, so nccltune does not change it: break the "
			        "link first (cp FILE FILE.new && mv FILE.new FILE) or install elsewhere",
			        t->real, (unsigned long)st.st_nlink);
			return NCCLTUNE_USAGE;
		}
		t->existed = true;
		t->mode = (int)(st.st_mode & 07777);
		t->uid = (long)st.st_uid;
		t->gid = (long)st.st_gid;
		t->old = fs_read_file(t->real, SITE_MAX, &t->olen, err, errlen);
		if (!t->old)
			return NCCLTUNE_ERROR;
		if (memchr(t->old, '\0', t->olen)) {
			fs_errf(err, errlen, "%s: contains NUL bytes: not a %s", t->real,
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
		snprintf(t->real, PATH_MAX, "%s", target);
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

/* Is `text` valid Python for `python`? It is written to a private temporary file for the
 * interpreter's parser. Returns NCCLTUNE_OK, NCCLTUNE_USAGE naming `shown` or
 * NCCLTUNE_ERROR. */
static int python_parses(const char *python, const char *text, size_t len, const char *shown,
                         char *err, size_t errlen)
{
	const char *tmpdir = getenv("TMPDIR");
	char path[PATH_MAX], *out = NULL;
	size_t done = 0;
	int fd, rc = NCCLTUNE_ERROR;

	if (!tmpdir || !*tmpdir || strlen(tmpdir) > PATH_MAX - 32)
		tmpdir = "/tmp";
	snprintf(path, sizeof(path), "%s/nccltune-check-XXXXXX", tmpdir);
	fd = mkstemp(path);
	if (fd < 0) {
		fs_errf(err, errlen, "%s: cannot create a temporary file to check the result: %s",
		        path, strerror(errno));
		return NCCLTUNE_ERROR;
	}
	while (done < len) {
		ssize_t w = write(fd, text + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			fs_errf(err, errlen, "%s: write failed: %s", path, strerror(errno));
			goto out;
		}
		done += (size_t)w;
	}
	rc = python_check(python, "parse", path, shown, &out, err, errlen);
out:
	close(fd);
	unlink(path);
	free(out);
	return rc;
}

/* Write t->real's backup (the old text, its mode and owner) and then the new text. */
static int write_target(const struct target *t, const char *text, size_t len, char *err,
                        size_t errlen)
{
	char bak[PATH_MAX + 32];

	if (t->existed) {
		snprintf(bak, sizeof(bak), "%s.nccltune-bak", t->real);
		if (fs_write_atomic_owned(bak, t->old, t->olen, t->mode, t->uid, t->gid, err,
		                          errlen) < 0)
			return NCCLTUNE_ERROR;
	}
	if (fs_write_atomic_owned(t->real, text, len, t->mode, t->uid, t->gid, err, errlen) < 0)
		return NCCLTUNE_ERROR;
	return NCCLTUNE_OK;
}

int nccltune_install(const char *path, const char *format, const char *target,
                     const char *python, char *written, size_t written_len, char *err,
                     size_t errlen)
{
	struct summary *s = NULL;
	struct target t;
	struct marker marks[MARKERS_MAX];
	char *block = NULL, *merged = NULL, found_path[PATH_MAX];
	size_t blen = 0, mlen = 0, begin = 0, end = 0, nmarks = 0;
	bool conf;
	int rc, found;

	memset(&t, 0, sizeof(t));
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
	if (!python)
		python = "python3";
	if (summary_load(path, 0, &s, err, errlen) < 0)
		return NCCLTUNE_USAGE;
	rc = export_render_string(s, format, &block, &blen, err, errlen);
	if (rc != NCCLTUNE_OK)
		goto out;
	if (!target) {
		rc = conf ? find_nccl_conf(found_path, sizeof(found_path), err, errlen)
		          : find_site(python, found_path, sizeof(found_path), err, errlen);
		if (rc != NCCLTUNE_OK)
			goto out;
		target = found_path;
	}
	rc = read_target(target, conf, &t, err, errlen);
	if (rc != NCCLTUNE_OK)
		goto out;
	if (!t.existed)
		rc = NCCLTUNE_OK;
	else if (conf)
		rc = text_markers(t.real, t.old, t.olen, marks, &nmarks, err, errlen) < 0
		     ? NCCLTUNE_USAGE : NCCLTUNE_OK;
	else
		rc = python_markers(python, t.real, marks, &nmarks, err, errlen);
	if (rc != NCCLTUNE_OK)
		goto out;
	found = find_block(t.real, t.old ? t.old : "", t.olen, marks, nmarks, &begin, &end, err,
	                   errlen);
	if (found < 0 || (conf && conf_conflicts(t.real, t.old ? t.old : "", t.olen,
	                                         found ? begin : t.olen, s, err, errlen) != 0)) {
		rc = NCCLTUNE_USAGE;
		goto out;
	}
	rc = NCCLTUNE_ERROR;
	merged = merge(t.old ? t.old : "", t.olen, begin, end, found == 1, block, blen, &mlen);
	if (!merged) {
		fs_errf(err, errlen, "out of memory");
		goto out;
	}
	if (t.existed && mlen == t.olen && memcmp(merged, t.old, t.olen) == 0) {
		/* Nothing changes: keep the backup of the last real change. */
		rc = NCCLTUNE_OK;
		goto done;
	}
	/* the file as it will be must still be Python, by the interpreter's own parser */
	if (!conf && (rc = python_parses(python, merged, mlen, t.real, err, errlen)) != NCCLTUNE_OK)
		goto out;
	rc = write_target(&t, merged, mlen, err, errlen);
	if (rc != NCCLTUNE_OK)
		goto out;
done:
	if (written && written_len)
		snprintf(written, written_len, "%s", t.real);
out:
	free(merged);
	free(t.old);
	free(block);
	summary_destroy(s);
	return rc;
}
