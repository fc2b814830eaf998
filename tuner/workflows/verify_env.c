/* verify_env.c - the server's environment for `nccltune verify` (see verify.h): this
 * process's variables, an env file as docker reads it, what the server's interpreter sets
 * at start-up and the NCCL it starts, NCCL's configuration files. The interpreter runs
 * as the server runs it (site on: that is where a .pth install acts), from the folder
 * "/" so that no file of the caller's current folder is imported. */
#include "workflows/verify.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "result/summary.h"
#include "run/runner.h"

extern char **environ;

#define ENV_FILE_MAX (1u << 20)
#define PY_START_TIMEOUT_S 240.0
#define PY_MARK "nccltune-verify: "
#define PY_START_MARK "nccltune-verify-start: "

/* The interpreter's side. argv: SCRIPT MODE NCCL RANKS SIZES STORE RANK. Prints one
 * PY_MARK line of JSON (its environment after start-up, its NCCL, torch, a GPU), then,
 * with MODE "start" and a GPU, starts NCCL (NCCL_DEBUG=INFO, INIT,ENV,TUNING: its lines on
 * stdout), runs one all-reduce per size and prints one PY_START_MARK line per rank; rank 0
 * starts the other ranks as copies of itself. It leaves with os._exit: NCCL 2.30's
 * teardown with several ranks on one GPU hangs (docs/nccl-facts.md). */
static const char verify_py[] =
	"import json, os, sys, subprocess\n"
	"S, mode, nccl, ranks, sizes, store, rank = sys.argv[1:8]\n"
	"ranks, rank = int(ranks), int(rank)\n"
	"sizes = [int(x) for x in sizes.split(',')]\n"
	"P = ('NCCL_', 'NCCLTUNE_', 'CUDA_')\n"
	"R = {'python': sys.executable,\n"
	"     'env': {k: v for k, v in os.environ.items() if k.startswith(P)}}\n"
	"if not nccl:\n"
	"    try:\n"
	"        import importlib.util\n"
	"        sp = importlib.util.find_spec('nvidia.nccl')\n"
	"        for d in (sp.submodule_search_locations or []) if sp else []:\n"
	"            f = os.path.join(d, 'lib', 'libnccl.so.2')\n"
	"            if os.path.exists(f):\n"
	"                nccl = f\n"
	"                break\n"
	"    except Exception:\n"
	"        pass\n"
	"R['nccl_lib'] = nccl\n"
	"if nccl and rank == 0:\n"
	"    try:\n"
	"        import ctypes\n"
	"        v = ctypes.c_int(0)\n"
	"        ctypes.CDLL(nccl).ncclGetVersion(ctypes.byref(v))\n"
	"        x = v.value\n"
	"        R['nccl_version'] = '%d.%d.%d' % ((x // 10000, x // 100 % 100, x % 100)\n"
	"            if x >= 10000 else (x // 1000, x // 100 % 10, x % 100))\n"
	"    except Exception as e:\n"
	"        R['nccl_error'] = str(e)[:300]\n"
	"try:\n"
	"    import torch\n"
	"    R['torch'] = torch.__version__\n"
	"    R['gpu'] = bool(torch.cuda.is_available())\n"
	"except Exception as e:\n"
	"    R['torch_error'] = str(e)[:300]\n"
	"if rank == 0:\n"
	"    print(" "'" PY_MARK "'" " + json.dumps(R), flush=True)\n"
	"if mode != 'start' or not R.get('gpu'):\n"
	"    sys.exit(0)\n"
	"os.environ['NCCL_DEBUG'] = 'INFO'\n"
	"os.environ['NCCL_DEBUG_SUBSYS'] = 'INIT,ENV,TUNING'\n"
	"os.environ.pop('NCCL_DEBUG_FILE', None)\n"
	"kids = [subprocess.Popen([sys.executable, '-c', S, S, mode, nccl, str(ranks),\n"
	"        ','.join(map(str, sizes)), store, str(r)]) for r in range(1, ranks)] if rank == 0 else []\n"
	"T = {'rank': rank}\n"
	"try:\n"
	"    import torch.distributed as dist\n"
	"    torch.cuda.set_device(rank % max(1, torch.cuda.device_count()))\n"
	"    dist.init_process_group('nccl', store=dist.FileStore(store, ranks), rank=rank,\n"
	"                            world_size=ranks)\n"
	"    for b in sizes:\n"
	"        t = torch.ones(max(1, b // 2), dtype=torch.bfloat16, device='cuda')\n"
	"        dist.all_reduce(t)\n"
	"        torch.cuda.synchronize()\n"
	"        T.setdefault('sums', []).append(float(t[0].item()))\n"
	"    T['started'] = True\n"
	"except Exception as e:\n"
	"    T['error'] = str(e)[:400]\n"
	"print(" "'" PY_START_MARK "'" " + json.dumps(T), flush=True)\n"
	"for k in kids:\n"
	"    try:\n"
	"        k.wait(timeout=120)\n"
	"    except Exception:\n"
	"        k.kill()\n"
	"os._exit(0 if T.get('started') else 4)\n";

static bool wanted(const char *name)
{
	return strncmp(name, "NCCL_", 5) == 0 || strncmp(name, "NCCLTUNE_", 9) == 0 ||
	       strncmp(name, "CUDA_", 5) == 0;
}

static bool valid_name(const char *s, size_t n)
{
	if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return false;
	return true;
}

const struct verify_var *verify_env_get(const struct verify_env *e, const char *name)
{
	for (size_t i = 0; i < e->n; i++)
		if (strcmp(e->v[i].name, name) == 0)
			return &e->v[i];
	return NULL;
}

/* Set (replace) a kept variable; `keep` leaves one already there alone. -1 when full. */
static int var_set(struct verify_env *e, const char *name, size_t nlen, const char *value,
                   const char *origin, bool keep)
{
	struct verify_var *v = NULL;

	for (size_t i = 0; i < e->n && !v; i++)
		if (strlen(e->v[i].name) == nlen && memcmp(e->v[i].name, name, nlen) == 0)
			v = &e->v[i];
	if (v && keep)
		return 0;
	if (!v) {
		if (e->n == VERIFY_VARS_MAX)
			return -1;
		v = &e->v[e->n++];
	}
	snprintf(v->name, sizeof v->name, "%.*s", (int)nlen, name);
	snprintf(v->value, sizeof v->value, "%s", value);
	snprintf(v->origin, sizeof v->origin, "%s", origin);
	return 0;
}

/* Put NAME=VALUE into the children's environment, replacing NAME. */
static int envp_put(struct verify_env *e, const char *name, size_t nlen, const char *value)
{
	char *kv = malloc(nlen + strlen(value) + 2), **grown;
	size_t i;

	if (!kv)
		return -1;
	sprintf(kv, "%.*s=%s", (int)nlen, name, value);
	for (i = 0; i < e->nenvp; i++)
		if (strncmp(e->envp[i], name, nlen) == 0 && e->envp[i][nlen] == '=') {
			free(e->envp[i]);
			e->envp[i] = kv;
			return 0;
		}
	grown = realloc(e->envp, (e->nenvp + 2) * sizeof *grown);
	if (!grown) {
		free(kv);
		return -1;
	}
	e->envp = grown;
	e->envp[e->nenvp++] = kv;
	e->envp[e->nenvp] = NULL;
	return 0;
}

static int env_from_process(struct verify_env *e)
{
	for (char **p = environ; *p; p++) {
		const char *eq = strchr(*p, '=');

		if (!eq)
			continue;
		if (envp_put(e, *p, (size_t)(eq - *p), eq + 1) != 0)
			return -1;
		if (wanted(*p) && var_set(e, *p, (size_t)(eq - *p), eq + 1, "the environment",
		                          false) != 0)
			return -1;
	}
	if (!e->envp && envp_put(e, "NCCLTUNE_VERIFY", 15, "1") != 0)   /* never NULL */
		return -1;
	return 0;
}

/* docker --env-file: NAME=VALUE, the value literal to the end of the line; NAME alone:
 * this environment's value (nothing when unset); '#' lines and blank lines skipped. */
static int env_from_file(struct verify_env *e, const char *path, char *err, size_t errlen)
{
	char origin[PATH_MAX + 16], *text;
	size_t len = 0, pos = 0, line = 0;
	int rc = NCCLTUNE_USAGE;

	text = fs_read_regular(path, ENV_FILE_MAX, &len, err, errlen);
	if (!text)
		return NCCLTUNE_USAGE;
	if (memchr(text, '\0', len)) {
		fs_errf(err, errlen, "%s: contains NUL bytes: not an env file", path);
		goto out;
	}
	snprintf(origin, sizeof origin, "env file %s", path);
	while (pos < len) {
		char *nl = memchr(text + pos, '\n', len - pos), *l = text + pos, *eq;
		size_t n = nl ? (size_t)(nl - l) : len - pos, k;

		line++;
		pos += n + 1;
		l[n] = '\0';
		while (*l == ' ' || *l == '\t')
			l++;
		if (!*l || *l == '#')
			continue;
		eq = strchr(l, '=');
		k = eq ? (size_t)(eq - l) : strlen(l);
		if (!valid_name(l, k)) {
			fs_errf(err, errlen, "%s:%zu: not NAME=VALUE (docker --env-file's syntax)", path,
			        line);
			goto out;
		}
		if (!eq) {   /* NAME alone: this environment's value, when it has one */
			const char *host = getenv(l);

			if (host && (envp_put(e, l, k, host) != 0 ||
			             (wanted(l) && var_set(e, l, k, host, origin, false) != 0)))
				goto oom;
			continue;
		}
		if (envp_put(e, l, k, eq + 1) != 0 ||
		    (wanted(l) && var_set(e, l, k, eq + 1, origin, false) != 0))
			goto oom;
	}
	rc = NCCLTUNE_OK;
	goto out;
oom:
	fs_errf(err, errlen, "%s: out of memory or more than %d NCCL variables", path,
	        VERIFY_VARS_MAX);
	rc = NCCLTUNE_ERROR;
out:
	free(text);
	return rc;
}

/* NCCL's configuration file: NAME=VALUE lines, '#' comments; NCCL sets a variable from
 * it only when the environment has none (src/misc/param.cc, setEnvFile). Missing: fine. */
static int env_from_conf(struct verify_env *e, const char *path)
{
	char origin[PATH_MAX + 64], e2[256], *text;
	size_t len = 0, pos = 0;

	if (access(path, F_OK) != 0)
		return 0;
	text = fs_read_regular(path, ENV_FILE_MAX, &len, e2, sizeof e2);
	if (!text)
		return 0;
	snprintf(origin, sizeof origin, "%s (NCCL's configuration file)", path);
	while (pos < len) {
		char *nl = memchr(text + pos, '\n', len - pos), *l = text + pos, *eq;
		size_t n = nl ? (size_t)(nl - l) : len - pos;

		pos += n + 1;
		l[n] = '\0';
		if (l[0] == '#' || !(eq = strchr(l, '=')) || !valid_name(l, (size_t)(eq - l)))
			continue;
		if (wanted(l) && var_set(e, l, (size_t)(eq - l), eq + 1, origin, true) != 0)
			break;
		{   /* NCCL sets it before it loads the plugin, which then reads it */
			bool have = false;

			for (size_t i = 0; i < e->nenvp && !have; i++)
				have = strncmp(e->envp[i], l, (size_t)(eq - l)) == 0 &&
				       e->envp[i][eq - l] == '=';
			if (!have && envp_put(e, l, (size_t)(eq - l), eq + 1) != 0)
				break;
		}
	}
	free(text);
	return 0;
}

static void env_from_confs(struct verify_env *e)
{
	const char *f = getenv("NCCL_CONF_FILE"), *home = getenv("HOME");
	struct passwd *pw;
	char path[PATH_MAX];

	if (f && *f) {
		env_from_conf(e, f);
	} else {
		if (!home || !*home) {
			pw = getpwuid(getuid());
			home = pw ? pw->pw_dir : NULL;
		}
		if (home && *home && snprintf(path, sizeof path, "%s/.nccl.conf", home) <
		                             (int)sizeof path)
			env_from_conf(e, path);
	}
	env_from_conf(e, "/etc/nccl.conf");
}

static void take_string(const cJSON *o, const char *key, char *buf, size_t len)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (cJSON_IsString(v))
		snprintf(buf, len, "%s", v->valuestring);
}

/* What the interpreter's PY_MARK line says: its environment after start-up (a variable
 * that is new or changed comes from the start-up), its NCCL, torch, a GPU. */
static int python_answer(struct verify_env *e, const char *line, char *err, size_t errlen)
{
	cJSON *doc = cJSON_Parse(line), *it;
	const cJSON *env = cJSON_GetObjectItemCaseSensitive(doc, "env");

	if (!cJSON_IsObject(doc) || !cJSON_IsObject(env)) {
		cJSON_Delete(doc);
		return fs_errf(err, errlen, "the interpreter's answer is not the JSON verify asked for");
	}
	e->python_ran = true;
	take_string(doc, "python", e->python, sizeof e->python);
	take_string(doc, "nccl_lib", e->nccl_lib, sizeof e->nccl_lib);
	take_string(doc, "nccl_version", e->nccl_version, sizeof e->nccl_version);
	take_string(doc, "torch", e->torch, sizeof e->torch);
	e->gpu = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "gpu"));
	cJSON_ArrayForEach(it, env) {
		const struct verify_var *v = verify_env_get(e, it->string);

		if (!cJSON_IsString(it) || !wanted(it->string) ||
		    (v && strcmp(v->value, it->valuestring) == 0))
			continue;
		var_set(e, it->string, strlen(it->string), it->valuestring,
		        "the interpreter's start-up (a .pth file or sitecustomize)", false);
		envp_put(e, it->string, strlen(it->string), it->valuestring);
	}
	cJSON_Delete(doc);
	return 0;
}

/* The PY_START_MARK lines: started when every rank says so. */
static void python_started(struct verify_env *e, const char *out, int ranks)
{
	int ok = 0;

	for (const char *p = strstr(out, PY_START_MARK); p; p = strstr(p + 1, PY_START_MARK)) {
		cJSON *doc = cJSON_Parse(p + strlen(PY_START_MARK));

		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "started")))
			ok++;
		else if (!e->start_error[0])
			take_string(doc, "error", e->start_error, sizeof e->start_error);
		cJSON_Delete(doc);
	}
	e->started = ok == ranks;
	if (!e->started && !e->start_error[0])
		snprintf(e->start_error, sizeof e->start_error, "%d of %d ranks finished", ok, ranks);
}

/* path made absolute against the current folder (the interpreter runs from "/"), its
 * symlinks kept (a venv's python is one); a bare name stays for the PATH lookup.
 * malloc'd; NULL when out of memory or the current folder is unknown. */
static char *absolute(const char *path)
{
	char cwd[PATH_MAX], *out;

	if (path[0] == '/' || !strchr(path, '/'))
		return strdup(path);
	if (!getcwd(cwd, sizeof cwd))
		return NULL;
	out = malloc(strlen(cwd) + strlen(path) + 2);
	if (out)
		sprintf(out, "%s/%s", cwd, path);
	return out;
}

static int run_python(const struct nccltune_verify_options *o, const unsigned long long *sizes,
                      size_t nsizes, struct verify_env *e, char *err, size_t errlen)
{
	char sz[1024] = "", ranks[16], store[] = "/tmp/nccltune-verify.XXXXXX", rerr[512];
	char storefile[sizeof store + 8], *argv[11], *line, *nl, cwd[PATH_MAX];
	char *python = absolute(o->python), *script = strdup(verify_py);
	char *nccl = o->nccl ? absolute(o->nccl) : strdup("");
	struct runner_request req;
	struct runner_result res;
	int nr = o->ranks > 0 ? o->ranks : 1, rc = NCCLTUNE_ERROR;
	bool start = !o->no_start;

	memset(&req, 0, sizeof req);
	memset(&res, 0, sizeof res);
	storefile[0] = '\0';
	if (!python || !script || !nccl) {
		fs_errf(err, errlen, "out of memory");
		store[0] = '\0';
		goto out;
	}
	for (size_t i = 0; i < nsizes; i++)
		snprintf(sz + strlen(sz), sizeof sz - strlen(sz), "%s%llu", i ? "," : "", sizes[i]);
	snprintf(ranks, sizeof ranks, "%d", nr);
	if (!mkdtemp(store)) {
		fs_errf(err, errlen, "cannot make a folder in /tmp for NCCL's store");
		store[0] = '\0';
		goto out;
	}
	snprintf(storefile, sizeof storefile, "%s/store", store);
	argv[0] = python;
	argv[1] = "-c";
	argv[2] = script;
	argv[3] = script;
	argv[4] = start ? "start" : "env";
	argv[5] = nccl;
	argv[6] = ranks;
	argv[7] = sz;
	argv[8] = storefile;
	argv[9] = "0";
	argv[10] = NULL;
	if (o->nccl && envp_put(e, "LD_PRELOAD", 10, o->nccl) != 0)
		goto out;
	req.argv = argv;
	req.envp = e->envp;
	req.timeout_s = PY_START_TIMEOUT_S;
	/* from "/": a json.py in the caller's folder must not be imported */
	if (!getcwd(cwd, sizeof cwd) || chdir("/") != 0) {
		fs_errf(err, errlen, "cannot change to the folder /");
		goto out;
	}
	if (runner_run(&req, &res, rerr, sizeof rerr) < 0)
		fs_errf(err, errlen, "cannot run %s: %s", o->python, rerr);
	if (chdir(cwd) != 0) {
		fs_errf(err, errlen, "cannot change back to %s", cwd);
		goto out;
	}
	if (err[0])
		goto out;
	if (!res.spawned) {
		fs_errf(err, errlen, "%s: cannot run it: %s (the server's interpreter: --python PY)",
		        o->python, res.spawn_error);
		goto out;
	}
	line = res.out ? strstr(res.out, PY_MARK) : NULL;
	if (!line) {
		const char *t = res.err ? res.err : "";
		size_t tl = strlen(t);
		char tail[300];

		summary_sanitize(tl > 280 ? t + tl - 280 : t, tail, sizeof tail);
		fs_errf(err, errlen, "%s: %s without answering (is it a Python 3 interpreter?): %s",
		        o->python, res.timed_out ? "timed out" : "exited", tail);
		goto out;
	}
	line += strlen(PY_MARK);
	if ((nl = strchr(line, '\n')))
		*nl = '\0';
	if (python_answer(e, line, err, errlen) != 0)
		goto out;
	if (nl)
		*nl = '\n';
	if (start && e->gpu)
		python_started(e, res.out, nr);
	if (res.timed_out && !e->start_error[0])
		snprintf(e->start_error, sizeof e->start_error, "timed out after %.0f s",
		         PY_START_TIMEOUT_S);
	e->log = malloc(res.out_len + res.err_len + 2);
	if (e->log)
		sprintf(e->log, "%s\n%s", res.out ? res.out : "", res.err ? res.err : "");
	rc = NCCLTUNE_OK;
out:
	runner_result_free(&res);
	if (store[0]) {
		unlink(storefile);
		rmdir(store);
	}
	free(python);
	free(script);
	free(nccl);
	return rc;
}

int verify_env_collect(const struct nccltune_verify_options *o, const unsigned long long *sizes,
                       size_t nsizes, struct verify_env *e, char *err, size_t errlen)
{
	int rc;

	memset(e, 0, sizeof *e);
	if (env_from_process(e) != 0)
		return fs_errf(err, errlen, "out of memory"), NCCLTUNE_ERROR;
	if (o->env_file && (rc = env_from_file(e, o->env_file, err, errlen)) != NCCLTUNE_OK)
		return rc;
	if (o->python && (rc = run_python(o, sizes, nsizes, e, err, errlen)) != NCCLTUNE_OK)
		return rc;
	env_from_confs(e);
	return NCCLTUNE_OK;
}

void verify_env_free(struct verify_env *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nenvp; i++)
		free(e->envp[i]);
	free(e->envp);
	free(e->log);
	memset(e, 0, sizeof *e);
}
