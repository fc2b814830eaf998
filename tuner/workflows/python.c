/* python.c - asking a Python interpreter about itself and about a file (see python.h):
 * three small scripts run with `python -I -S -c`, each answering on stdout. Isolated and
 * without site (no current folder or user site on the path, no PYTHON* variables, no
 * .pth line or sitecustomize run): a json.py in the current folder, a .pth in the
 * site-packages or the file being changed never runs with nccltune's privileges. As root
 * an interpreter that another user can change is not run at all (python_trusted). */
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
#include "workflows/trust.h"

extern char **environ;

#define PY_TIMEOUT_S 30.0

/* What an interpreter says about itself, as one JSON object, asked isolated and without
 * site (-I -S): nothing of its site-packages runs (a .pth line, a sitecustomize), so
 * site's start-up is redone here by reading, not running: the virtual environment from
 * pyvenv.cfg beside the executable or one folder up (as site.venv), the site folders in
 * site's order (the venv's, the user's where site would add it, the prefixes'), and the
 * sitecustomize `import sitecustomize` would find on that path (PYTHONPATH first, as the
 * interpreter would put it when started without -I; never the current folder) - else a new one in purelib (or the first site folder) that is on the path. */
static const char info_py[] =
	"import json, os, sys, site, sysconfig, importlib.machinery\n"
	"exe_dir = os.path.dirname(os.path.abspath(sys.executable))\n"
	"prefix = os.path.dirname(exe_dir)\n"
	"cfg = [c for c in (os.path.join(exe_dir, 'pyvenv.cfg'), os.path.join(prefix, 'pyvenv.cfg'))\n"
	"       if os.path.isfile(c)]\n"
	"venv, system_site = bool(cfg), True\n"
	"if venv:\n"
	"    for line in open(cfg[0], encoding='utf-8'):\n"
	"        k, eq, v = line.partition('=')\n"
	"        if eq and k.strip().lower() == 'include-system-site-packages':\n"
	"            system_site = v.strip().lower() == 'true'\n"
	"    names = sysconfig.get_scheme_names()\n"
	"    scheme = 'venv' if 'venv' in names else 'posix_prefix'\n"
	"    purelib = sysconfig.get_paths(scheme, vars={'base': prefix, 'platbase': prefix})['purelib']\n"
	"    prefixes = [prefix] + (list(site.PREFIXES) if system_site else [])\n"
	"    sys.prefix = sys.exec_prefix = prefix  # as site.venv: Debian's site asks it\n"
	"    dirs = site.getsitepackages([prefix])\n"
	"else:\n"
	"    prefix = sys.prefix\n"
	"    purelib = sysconfig.get_paths()['purelib']\n"
	"    prefixes, dirs = list(site.PREFIXES), []\n"
	"if system_site:\n"
	"    dirs.append(site.getusersitepackages())\n"
	"dirs += site.getsitepackages(prefixes)\n"
	"seen = []\n"
	"for d in dirs:\n"
	"    if os.path.isdir(d) and d not in seen:\n"
	"        seen.append(d)\n"
	"on_path = purelib in seen\n"
	"cwd = os.getcwd()\n"
	"pp = [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]\n"
	"path = [p for p in pp + sys.path if p not in ('', '.', cwd)] + [d for d in seen if d not in sys.path]\n"
	"s = importlib.machinery.PathFinder.find_spec('sitecustomize', path)\n"
	"f = s.origin if s is not None and s.has_location else None\n"
	"if not f:\n"
	"    for d in [purelib] + site.getsitepackages(prefixes):\n"
	"        if d in seen:\n"
	"            f = os.path.join(d, 'sitecustomize.py')\n"
	"            break\n"
	"def nccl_in(d):\n"
	"    lib = os.path.join(d, 'nvidia', 'nccl', 'lib')\n"
	"    so = os.path.join(lib, 'libnccl.so.2')\n"
	"    found, metas = set(), []\n"
	"    if os.path.lexists(so):\n"
	"        for n in [os.path.basename(os.path.realpath(so))] + os.listdir(lib):\n"
	"            if n.startswith('libnccl.so.2.'):\n"
	"                found.add(n[len('libnccl.so.'):])\n"
	"        if found:\n"
	"            return found, so\n"
	"    try:\n"
	"        metas = [n for n in os.listdir(d) if n.startswith('nvidia_nccl_cu') and\n"
	"                 n.endswith('.dist-info')]\n"
	"    except OSError:\n"
	"        pass\n"
	"    for n in metas:\n"
	"        try:\n"
	"            for line in open(os.path.join(d, n, 'METADATA'), encoding='utf-8', errors='replace'):\n"
	"                if line.startswith('Version:'):\n"
	"                    found.add(line[len('Version:'):].strip())\n"
	"                    break\n"
	"                if not line.strip():\n"
	"                    break\n"
	"        except OSError:\n"
	"            pass\n"
	"    if found or os.path.lexists(so):\n"
	"        return found, (os.path.join(d, metas[0], 'METADATA') if len(metas) == 1 and found\n"
	"                       else so if os.path.lexists(so) else d)\n"
	"    return None\n"
	"nccl, nccl_from = '', ''\n"
	"for d in path:\n"
	"    r = nccl_in(d) if os.path.isdir(d) else None\n"
	"    if r is not None:\n"
	"        nccl, nccl_from = (r[0].pop() if len(r[0]) == 1 else ''), os.path.abspath(r[1])\n"
	"        break\n"
	"print(json.dumps({'executable': sys.executable, 'prefix': prefix,\n"
	"                  'venv': venv, 'purelib': purelib,\n"
	"                  'purelib_on_path': on_path, 'sitecustomize': f or '',\n"
	"                  'nccl': nccl, 'nccl_from': nccl_from}))\n";

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

/* As root, an interpreter runs only when nobody else can change what it runs: the
 * program (symlinks resolved), the folder it is named in, and a venv's pyvenv.cfg beside
 * it or one folder up (its `home` chooses the standard library the interpreter imports,
 * whatever -I says) must be trusted (trust.h). The program to run into exe. 0, or
 * NCCLTUNE_USAGE with a message. */
static int python_trusted(const char *python, char *exe, size_t len, char *err,
                          size_t errlen)
{
	char dir[PATH_MAX], cfg[PATH_MAX + 16], why[PATH_MAX + 256];
	char *slash;

	if (trust_which(python, exe, len, why, sizeof(why)) != 0) {
		fs_errf(err, errlen, "cannot run %s: %s (use --python PY)", python, why);
		return NCCLTUNE_ERROR;
	}
	if (geteuid() != 0)
		return NCCLTUNE_OK;
	snprintf(dir, sizeof(dir), "%s", exe);
	for (int up = 0; up < 2; up++) {
		slash = strrchr(dir, '/');
		if (!slash)
			break;
		*slash = '\0';
		snprintf(cfg, sizeof(cfg), "%s/pyvenv.cfg", dir[0] ? dir : "");
		if (access(cfg, F_OK) == 0 && trust_check_path(cfg, why, sizeof(why)) != 0)
			goto refused;
		/* the folder the name is in: whoever may write it may swap the name */
		if (up == 0 && trust_check_path(dir[0] ? dir : "/", why, sizeof(why)) != 0)
			goto refused;
	}
	if (trust_check_path(exe, why, sizeof(why)) == 0)
		return NCCLTUNE_OK;
refused:
	fs_errf(err, errlen, "%s: refused to run it as root: %s; an interpreter that another "
	        "user can change runs their code as root: run nccltune as the interpreter's owner "
	        "(sudo -u OWNER), or make it root's", python, why);
	return NCCLTUNE_USAGE;
}

/* Run `python -I -S -c script [a1 a2]` (isolated: no PYTHON* variables, no current
 * folder or user site on the path; no site: no .pth line or sitecustomize runs). On exit
 * 0, *out is its stdout (malloc'd) and NCCLTUNE_OK is returned; exit 3 is
 * NCCLTUNE_USAGE with *bad set and its stderr (one line, sanitised) in `why`; an
 * interpreter root must not run is NCCLTUNE_USAGE with the message in err
 * (python_trusted); anything else NCCLTUNE_ERROR with a message naming `what`. */
static int run_python(const char *python, const char *script, const char *a1,
                      const char *a2, const char *what, char **out, bool *bad, char *why,
                      size_t whylen, char *err, size_t errlen)
{
	char *argv[8] = {NULL}, rerr[512], exe[PATH_MAX];
	struct runner_request req;
	struct runner_result res;
	size_t n = 0;
	int rc;

	memset(&req, 0, sizeof(req));
	memset(&res, 0, sizeof(res));
	*why = '\0';
	*bad = false;
	rc = python_trusted(python, exe, sizeof(exe), err, errlen);
	if (rc != NCCLTUNE_OK)
		return rc;
	rc = NCCLTUNE_ERROR;
	argv[n++] = strdup(exe);
	argv[n++] = strdup("-I");
	argv[n++] = strdup("-S");
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
		*bad = true;
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

/* The NCCL the interpreter's path holds, from o: "nccl" is a version (digits and dots,
 * at least MAJOR.MINOR; anything else is taken as unknown) or "", "nccl_from" the file
 * or folder it was read from (absolute) or "". Both absent: unknown. NCCLTUNE_OK, or
 * NCCLTUNE_ERROR for one missing or a malformed key. */
static int take_nccl(const cJSON *o, struct python_info *info)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "nccl");
	unsigned major, minor;

	info->nccl_major = info->nccl_minor = -1;
	if (!v && !cJSON_GetObjectItemCaseSensitive(o, "nccl_from"))
		return NCCLTUNE_OK;   /* an interpreter stand-in that does not say: unknown */
	if (!cJSON_IsString(v) ||
	    !take_path(o, "nccl_from", true, info->nccl_from, sizeof(info->nccl_from)))
		return NCCLTUNE_ERROR;
	if (strlen(v->valuestring) >= sizeof(info->nccl) ||
	    strspn(v->valuestring, "0123456789.") != strlen(v->valuestring) ||
	    sscanf(v->valuestring, "%3u.%3u", &major, &minor) != 2)
		return NCCLTUNE_OK;
	snprintf(info->nccl, sizeof(info->nccl), "%s", v->valuestring);
	info->nccl_major = (int)major;
	info->nccl_minor = (int)minor;
	return NCCLTUNE_OK;
}

int python_info(const char *python, struct python_info *info, char *err, size_t errlen)
{
	char *out = NULL, why[400];
	cJSON *doc = NULL;
	bool bad;
	int rc;

	memset(info, 0, sizeof(*info));
	rc = run_python(python, info_py, NULL, NULL, "find its site-packages", &out, &bad, why,
	                sizeof(why), err, errlen);
	if (bad) {
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
	rc = take_nccl(doc, info);
	if (rc != NCCLTUNE_OK) {
		fs_errf(err, errlen, "%s gave an unusable description of its NCCL: %.200s", python,
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
	bool bad;
	int rc = run_python(python, check_py, "markers", path, "read it as Python", &text, &bad,
	                    why, sizeof(why), err, errlen);

	*n = 0;
	if (bad)
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
	bool bad;
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
	rc = run_python(python, check_py, "parse", path, "parse the new text", &out, &bad, why,
	                sizeof(why), err, errlen);
	if (bad)
		fs_errf(err, errlen, "%s: with nccltune's block in place the file would not be valid "
		        "Python for %s (line %s); are its marker lines inside brackets or a "
		        "statement? nothing changed", shown, python, why);
out:
	close(fd);
	unlink(path);
	free(out);
	return rc;
}
