/* python.c - asking a Python interpreter about itself and about a file (see python.h):
 * three small scripts run with `python -c`, each answering on stdout. The file checks
 * run isolated (-I -S: no site, no user site, no PYTHON* variables), so the file being
 * changed is never imported while it is checked. */
#include "workflows/python.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "nccltune.h"
#include "run/runner.h"
#include "result/summary.h"
#include "workflows/export.h"

extern char **environ;

#define PY_TIMEOUT_S 30.0

/* What an interpreter says about itself, as one JSON object. The sitecustomize it
 * imports: the one already imported at start-up; else the first on sys.path (without
 * the current folder, which is not on the path when site runs); else a new one in
 * purelib (or the first site-packages folder) that is on sys.path. */
static const char info_py[] =
	"import json, os, sys, site, sysconfig, importlib.util\n"
	"purelib = sysconfig.get_paths()['purelib']\n"
	"on_path = purelib in sys.path\n"
	"m = sys.modules.get('sitecustomize')\n"
	"f = getattr(m, '__file__', None) if m else None\n"
	"if not f:\n"
	"    cwd = os.getcwd()\n"
	"    sys.path[:] = [p for p in sys.path if p not in ('', '.', cwd)]\n"
	"    s = importlib.util.find_spec('sitecustomize')\n"
	"    f = s.origin if s is not None and s.has_location else None\n"
	"if not f:\n"
	"    dirs = [purelib] + list(getattr(site, 'getsitepackages', lambda: [])())\n"
	"    for d in dirs:\n"
	"        if d in sys.path and os.path.isdir(d):\n"
	"            f = os.path.join(d, 'sitecustomize.py')\n"
	"            break\n"
	"print(json.dumps({'executable': sys.executable, 'prefix': sys.prefix,\n"
	"                  'venv': sys.prefix != sys.base_prefix, 'purelib': purelib,\n"
	"                  'purelib_on_path': on_path, 'sitecustomize': f or ''}))\n";

/* Tokenize or parse argv[2] with the interpreter that will run it. "markers": print
 * "LINE COL b|e" for each marker comment token; "parse": compile only. Exit 3 with
 * "LINE:reason" on stderr for a file that is not valid Python. */
static const char check_py[] =
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

/* Run `python [-I -S] -c script [a1 a2]`. On exit 0, *out is its stdout (malloc'd) and
 * NCCLTUNE_OK is returned; exit 3 is NCCLTUNE_USAGE with its stderr (one line,
 * sanitised) in `why`; anything else NCCLTUNE_ERROR with a message naming `what`. */
static int run_python(const char *python, bool isolated, const char *script, const char *a1,
                      const char *a2, const char *what, char **out, char *why, size_t whylen,
                      char *err, size_t errlen)
{
	char *argv[8] = {NULL}, rerr[512];
	struct runner_request req;
	struct runner_result res;
	size_t n = 0;
	int rc = NCCLTUNE_ERROR;

	memset(&req, 0, sizeof(req));
	memset(&res, 0, sizeof(res));
	argv[n++] = strdup(python);
	if (isolated) {
		argv[n++] = strdup("-I");
		argv[n++] = strdup("-S");
	}
	argv[n++] = strdup("-c");
	argv[n++] = strdup(script);
	if (a1)
		argv[n++] = strdup(a1);
	if (a2)
		argv[n++] = strdup(a2);
	for (size_t i = 0; i < n; i++)
		if (!argv[i]) {
			fs_errf(err, errlen, "out of memory");
			goto out;
		}
	req.argv = argv;
	req.envp = environ;
	req.timeout_s = PY_TIMEOUT_S;
	if (runner_run(&req, &res, rerr, sizeof(rerr)) < 0) {
		fs_errf(err, errlen, "cannot run %s to %s: %s", python, what, rerr);
		goto out;
	}
	if (!res.spawned) {
		fs_errf(err, errlen, "cannot run %s to %s: %s (use --python PY)", python, what,
		        res.spawn_error);
		goto out;
	}
	while (res.err && res.err_len > 0 && (res.err[res.err_len - 1] == '\n' ||
	                                      res.err[res.err_len - 1] == '\r'))
		res.err[--res.err_len] = '\0';
	summary_sanitize(res.err ? res.err : "", why, whylen);
	if (!res.timed_out && res.exit_status == 3) {
		rc = NCCLTUNE_USAGE;
		goto out;
	}
	if (res.timed_out || res.exit_status != 0) {
		fs_errf(err, errlen, "%s failed to %s (%s): %s", python, what,
		        res.timed_out ? "timed out" : "non-zero exit", why);
		goto out;
	}
	*out = res.out;
	res.out = NULL;
	rc = NCCLTUNE_OK;
out:
	runner_result_free(&res);
	for (size_t i = 0; i < n; i++)
		free(argv[i]);
	return rc;
}

/* Copy the absolute path o[key] into buf; false when missing, not a string, relative or
 * too long. An empty string is allowed when `empty_ok`. */
static bool take_path(const cJSON *o, const char *key, bool empty_ok, char *buf, size_t len)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsString(v) || strlen(v->valuestring) >= len ||
	    memchr(v->valuestring, '\n', strlen(v->valuestring)))
		return false;
	if (v->valuestring[0] != '/' && !(empty_ok && v->valuestring[0] == '\0'))
		return false;
	snprintf(buf, len, "%s", v->valuestring);
	return true;
}

int python_info(const char *python, struct python_info *info, char *err, size_t errlen)
{
	char *out = NULL, why[400];
	cJSON *doc = NULL;
	int rc;

	memset(info, 0, sizeof(*info));
	rc = run_python(python, false, info_py, NULL, NULL, "find its site-packages", &out, why,
	                sizeof(why), err, errlen);
	if (rc == NCCLTUNE_USAGE) {
		fs_errf(err, errlen, "%s failed to find its site-packages: %s", python, why);
		rc = NCCLTUNE_ERROR;
	}
	if (rc != NCCLTUNE_OK)
		goto out;
	rc = NCCLTUNE_ERROR;
	doc = cJSON_Parse(out);
	if (!cJSON_IsObject(doc) || !take_path(doc, "executable", false, info->executable,
	                                       sizeof(info->executable)) ||
	    !take_path(doc, "prefix", false, info->prefix, sizeof(info->prefix)) ||
	    !take_path(doc, "purelib", false, info->purelib, sizeof(info->purelib)) ||
	    !take_path(doc, "sitecustomize", true, info->sitecustomize,
	               sizeof(info->sitecustomize)) ||
	    !cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(doc, "venv")) ||
	    !cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(doc, "purelib_on_path"))) {
		fs_errf(err, errlen, "%s gave an unusable description of itself: %.200s", python,
		        out ? out : "");
		goto out;
	}
	info->venv = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "venv"));
	info->purelib_on_path = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc,
	                                                                     "purelib_on_path"));
	rc = NCCLTUNE_OK;
out:
	cJSON_Delete(doc);
	free(out);
	return rc;
}

int python_markers(const char *python, const char *path, struct python_marker *m, size_t *n,
                   char *err, size_t errlen)
{
	char *text = NULL, why[400];
	int rc = run_python(python, true, check_py, "markers", path, "read it as Python", &text,
	                    why, sizeof(why), err, errlen);

	*n = 0;
	if (rc == NCCLTUNE_USAGE)
		fs_errf(err, errlen, "%s:%s%s not valid Python for %s, so nccltune does not edit it; "
		        "fix it first", path, why, *why ? ";" : "", python);
	if (rc != NCCLTUNE_OK)
		return rc;
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		unsigned long l, c;
		char kind;

		if (*n == PYTHON_MARKERS_MAX || sscanf(line, "%lu %lu %c", &l, &c, &kind) != 3) {
			if (*n == PYTHON_MARKERS_MAX)
				fs_errf(err, errlen, "%s: more than %d nccltune marker lines; fix the file "
				        "by hand", path, PYTHON_MARKERS_MAX);
			else
				fs_errf(err, errlen, "%s: unexpected answer from %s: %.80s", path, python,
				        line);
			rc = *n == PYTHON_MARKERS_MAX ? NCCLTUNE_USAGE : NCCLTUNE_ERROR;
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

int python_parses(const char *python, const char *text, size_t len, const char *shown,
                  char *err, size_t errlen)
{
	const char *tmpdir = getenv("TMPDIR");
	char path[PATH_MAX], *out = NULL, why[400];
	size_t done = 0;
	int fd, rc = NCCLTUNE_ERROR;

	if (!tmpdir || !*tmpdir || strlen(tmpdir) > PATH_MAX - 32)
		tmpdir = "/tmp";
	snprintf(path, sizeof(path), "%s/nccltune-check-XXXXXX", tmpdir);
	fd = mkstemp(path);
	if (fd < 0) {
		fs_errf(err, errlen, "%s: cannot create a temporary file to check %s: %s", path, shown,
		        strerror(errno));
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
	rc = run_python(python, true, check_py, "parse", path, "parse the new text", &out, why,
	                sizeof(why), err, errlen);
	if (rc == NCCLTUNE_USAGE)
		fs_errf(err, errlen, "%s: with nccltune's block in place the file would not be valid "
		        "Python for %s (line %s); are its marker lines inside brackets or a "
		        "statement? nothing changed", shown, python, why);
out:
	close(fd);
	unlink(path);
	free(out);
	return rc;
}
