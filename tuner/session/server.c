/* server.c - what the server runs that the probe must run too: its NCCL library
 * (--nccl PATH, or --python PY: the NCCL of PY's PyTorch wheel). The library travels as
 * the probe's own `--nccl PATH` option, appended to the probe's command line, so every
 * run, the fingerprint, a resume (the journal records the command) and `nccltune check`
 * (it re-runs the recorded command) load the same copy; the probe re-executes itself on
 * it (probe/ncclpath.h) and its fingerprint's nccl_path must then name that very file.
 * And its profile (--like sglang|vllm, tuner/run/profile.h): the variables the server
 * sets before NCCL starts reach every run (after the candidate's, so they win, as in the
 * server), are recorded in the journal and results.json ("server"), are dropped from the
 * search, and the custom all-reduce window is warned about. And the rig's sharing
 * (--ranks-per-gpu K), appended to the probe's command line like --nccl. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session/session_priv.h"
#include "run/profile.h"
#include "workflows/python.h"

/* Where a PyTorch wheel keeps its NCCL, under the interpreter's site-packages. */
#define SERVER_WHEEL_NCCL "nvidia/nccl/lib/libnccl.so.2"

int nccltune_session_set_nccl(nccltune_session *s, const char *path)
{
	char real[PATH_MAX];
	struct stat st;

	if (s->resumed || s->started)
		return session_fail(s, NCCLTUNE_USAGE, "--nccl: %s", s->resumed
		                    ? "a resumed session keeps the settings of its journal"
		                    : "the session has already run");
	if (!path || !*path || !realpath(path, real))
		return session_fail(s, NCCLTUNE_USAGE, "--nccl %s: %s", path ? path : "",
		                    path && *path ? strerror(errno) : "not a file name");
	if (stat(real, &st) != 0 || !S_ISREG(st.st_mode))
		return session_fail(s, NCCLTUNE_USAGE, "--nccl %s: not a regular file", path);
	free(s->cfg.nccl);
	s->cfg.nccl = strdup(real);
	if (!s->cfg.nccl)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	return NCCLTUNE_OK;
}

int nccltune_session_set_python(nccltune_session *s, const char *python)
{
	struct python_info info;
	char e[1024], path[PATH_MAX + sizeof SERVER_WHEEL_NCCL + 1];
	int rc;

	if (!python || !*python)
		return session_fail(s, NCCLTUNE_USAGE, "--python: not an interpreter");
	rc = python_info(python, &info, e, sizeof e);
	if (rc != NCCLTUNE_OK)
		return session_fail(s, rc, "--python %s: %s", python, e);
	snprintf(path, sizeof path, "%s/%s", info.purelib, SERVER_WHEEL_NCCL);
	if (access(path, R_OK) != 0)
		return session_fail(s, NCCLTUNE_USAGE, "--python %s: no PyTorch wheel NCCL at %s "
		                    "(%s); pass the library itself with --nccl PATH", python, path,
		                    strerror(errno));
	return nccltune_session_set_nccl(s, path);
}

int nccltune_session_set_ranks_per_gpu(nccltune_session *s, const char *k)
{
	char *end;
	long v;

	if (s->resumed || s->started)
		return session_fail(s, NCCLTUNE_USAGE, "--ranks-per-gpu: %s", s->resumed
		                    ? "a resumed session keeps the settings of its journal"
		                    : "the session has already run");
	errno = 0;
	v = k ? strtol(k, &end, 10) : 0;
	if (!k || !*k || *end || errno || v < 1 || v > 64)
		return session_fail(s, NCCLTUNE_USAGE, "--ranks-per-gpu: '%s' is not an integer in "
		                    "1..64", k ? k : "");
	s->cfg.ranks_per_gpu = (int)v;
	return NCCLTUNE_OK;
}

/* Append `name` and `value` to the probe's command line. */
static int argv_append(nccltune_session *s, const char *name, const char *value)
{
	size_t n = 0;
	char **argv;

	while (s->run.probe_argv[n])
		n++;
	argv = realloc(s->run.probe_argv, (n + 3) * sizeof *argv);
	if (!argv)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	s->run.probe_argv = argv;
	argv[n] = strdup(name);
	argv[n + 1] = argv[n] ? strdup(value) : NULL;
	argv[n + 2] = NULL;
	if (!argv[n + 1]) {
		free(argv[n]);
		argv[n] = NULL;
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	}
	return NCCLTUNE_OK;
}

int session_server_argv(nccltune_session *s)
{
	char k[16];
	int rc = NCCLTUNE_OK;

	if (s->cfg.nccl)
		rc = argv_append(s, "--nccl", s->cfg.nccl);
	if (rc == NCCLTUNE_OK && s->cfg.ranks_per_gpu > 1) {
		/* a model probe has no GPU to share and does not know the option */
		if (s->cfg.model)
			return session_fail(s, NCCLTUNE_USAGE, "--ranks-per-gpu %d: a machine model "
			                    "(--model %s) has no GPU to share; it is for nccltune-probe "
			                    "on NCCL 2.30 (--probe, --nccl)", s->cfg.ranks_per_gpu,
			                    s->cfg.model);
		snprintf(k, sizeof k, "%d", s->cfg.ranks_per_gpu);
		rc = argv_append(s, "--ranks-per-gpu", k);
	}
	return rc;
}

int session_server_check_fingerprint(nccltune_session *s, const cJSON *fp)
{
	const cJSON *path = cJSON_GetObjectItemCaseSensitive(fp, "nccl_path");
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(fp, "nccl_version");
	const cJSON *shared = cJSON_GetObjectItemCaseSensitive(fp, "ranks_per_gpu");

	if (cJSON_IsNumber(shared) && shared->valuedouble > 1)
		session_note(&s->out, "the rig: %d ranks share each GPU (--ranks-per-gpu): every "
		             "figure is of ranks sharing one GPU's SMs and memory - real NCCL, not a "
		             "multi-GPU machine's landscape", (int)shared->valuedouble);
	if (!s->cfg.nccl)
		return NCCLTUNE_OK;
	if (!fp)
		return session_fail(s, NCCLTUNE_ERROR, "--nccl %s: the probe gave no fingerprint, "
		                    "so nothing says it loaded that library", s->cfg.nccl);
	if (!cJSON_IsString(path))
		return session_fail(s, NCCLTUNE_ERROR, "--nccl %s: the probe's fingerprint has no "
		                    "nccl_path: it cannot say which NCCL it loaded", s->cfg.nccl);
	if (strcmp(path->valuestring, s->cfg.nccl) != 0)
		return session_fail(s, NCCLTUNE_ERROR, "--nccl %s: the probe loaded %s instead",
		                    s->cfg.nccl, path->valuestring);
	session_note(&s->out, "NCCL: every run loads %s (version %s): the result holds for "
	             "this library", s->cfg.nccl, cJSON_IsString(ver) ? ver->valuestring : "?");
	return NCCLTUNE_OK;
}

int nccltune_session_set_like(nccltune_session *s, const char *like)
{
	char e[1024];
	struct profile *p;

	if (s->resumed || s->started)
		return session_fail(s, NCCLTUNE_USAGE, "--like: %s", s->resumed
		                    ? "a resumed session keeps the settings of its journal"
		                    : "the session has already run");
	p = calloc(1, sizeof *p);
	if (!p)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	if (profile_load(like ? like : "", p, e, sizeof e) != 0) {
		free(p);
		return session_fail(s, NCCLTUNE_USAGE, "%s", e);
	}
	free(s->cfg.profile);
	s->cfg.profile = p;
	snprintf(s->run.like, sizeof s->run.like, "%s", p->name);
	return NCCLTUNE_OK;
}

static const char *user_value(const nccltune_session *s, const char *name)
{
	size_t len = strlen(name);

	for (char *const *e = s->run.user_env; e && *e; e++)
		if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

/* Drop the searched dimensions the server sets (as pins drop them). */
static int drop_server_dims(nccltune_session *s)
{
	struct env_pins tmp;
	char **strs = calloc(s->run.server.n + 1, sizeof *strs), e[1024];
	space *sp = NULL;
	int rc = NCCLTUNE_OK;

	memset(&tmp, 0, sizeof tmp);
	if (!strs)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	for (size_t i = 0; i < s->run.server.n && rc == NCCLTUNE_OK; i++) {
		const struct env_pin *v = &s->run.server.v[i];

		size_t len = strlen(v->name) + strlen(v->value) + 2;

		/* as NAME=VALUE strings: env_pins_collect marks which the space searched */
		strs[i] = malloc(len);
		if (!strs[i])
			rc = session_fail(s, NCCLTUNE_ERROR, "out of memory");
		else
			snprintf(strs[i], len, "%s=%s", v->name, v->value);
	}
	if (rc == NCCLTUNE_OK &&
	    env_pins_collect(strs, s->run.sp, &tmp, e, sizeof e) != 0)
		rc = session_fail(s, NCCLTUNE_ERROR, "%s", e);
	if (rc == NCCLTUNE_OK && tmp.n > 0) {
		if (env_space_unpin(s->run.sp, &tmp, &sp, e, sizeof e) != 0) {
			rc = session_fail(s, NCCLTUNE_USAGE, "--like %s: %s", s->run.like, e);
		} else {
			space_destroy(s->run.sp);
			s->run.sp = sp;
			for (size_t i = 0; i < tmp.n; i++)
				session_note(&s->out, "%s: dropped from the search (%s sets it)",
				             tmp.v[i].name, s->run.like);
		}
	}
	env_pins_free(&tmp);
	for (size_t i = 0; i < s->run.server.n; i++)
		free(strs[i]);
	free(strs);
	return rc;
}

int session_server_profile(nccltune_session *s)
{
	const struct profile *p = s->cfg.profile;

	if (!p)
		return NCCLTUNE_OK;
	session_note(&s->out, "--like %s: settings as read from %s; a server of another version "
	             "may set others", p->name, p->checked_against);
	for (size_t i = 0; i < p->n; i++) {
		const struct profile_var *v = &p->env[i];
		const char *mine = user_value(s, v->name);

		if (mine) {
			session_note(&s->out, "%s would set %s=%s; your environment's %s=%s is used",
			             p->name, v->name, v->value, v->name, mine);
			continue;
		}
		if (v->unless_symmetric && s->cfg.wl.window_symmetric) {
			session_note(&s->out, "not set: %s=%s (%s leaves it unset when symmetric memory "
			             "is on, as --window symmetric measures)", v->name, v->value, p->name);
			continue;
		}
		if (env_pins_add(&s->run.server, v->name, v->value) != 0)
			return session_fail(s, NCCLTUNE_ERROR, "out of memory");
		session_note(&s->out, "set by the server (%s) for every run: %s=%s (%s)", p->name,
		             v->name, v->value, v->source);
	}
	for (size_t i = 0; i < s->cfg.ntries; i++) {
		const struct tryconf *t = &s->cfg.tries[i];

		for (size_t k = 0; k < t->n; k++) {
			const char *srv = env_pins_get(&s->run.server, t->name[k]);

			if (srv && strcmp(srv, t->value[k]) != 0)
				session_warn(&s->out, "try %zu sets %s=%s, but %s sets %s=%s before NCCL "
				             "starts: measured with the server's value", i + 1,
				             t->name[k], t->value[k], p->name, t->name[k], srv);
		}
	}
	return drop_server_dims(s);
}

static bool nvlink_topology(const cJSON *fp)
{
	const cJSON *rows = cJSON_GetObjectItemCaseSensitive(fp, "topology"), *row, *cell;

	cJSON_ArrayForEach(row, rows)
		cJSON_ArrayForEach(cell, row)
			if (cJSON_IsString(cell) && strncmp(cell->valuestring, "NV", 2) == 0)
				return true;
	return false;
}

void session_server_window(nccltune_session *s)
{
	const struct profile *p = s->cfg.profile;
	char list[256] = "";
	size_t off = 0, hits = 0;

	if (!p || !p->has_window)
		return;
	if (strcmp(p->window_links, "nvlink") == 0 && !nvlink_topology(s->run.fingerprint))
		return;
	for (size_t i = 0; i < s->cfg.wl.n; i++) {
		size_t b = s->cfg.wl.e[i].bytes;

		if (b < p->window_min || b > p->window_max)
			continue;
		hits++;
		if (off < sizeof list)
			off += (size_t)snprintf(list + off, sizeof list - off, "%s%zu", off ? ", " : "", b);
	}
	if (hits)
		session_warn(&s->out, "%s sends all-reduces of %llu-%llu bytes%s to its own custom "
		             "all-reduce, not to NCCL: tuned size%s %s would not use what is tuned "
		             "here (%s)", p->name, (unsigned long long)p->window_min,
		             (unsigned long long)p->window_max,
		             strcmp(p->window_links, "nvlink") == 0 ? " on NVLink" : "",
		             hits == 1 ? "" : "s", list, p->window_source);
}

/* Does the built environment env set `name`? */
static bool env_has(char *const *env, const char *name)
{
	size_t len = strlen(name);

	for (; env && *env; env++)
		if (strncmp(*env, name, len) == 0 && (*env)[len] == '=')
			return true;
	return false;
}

int session_server_env(const nccltune_session *s, char ***env, bool symmetric)
{
	for (size_t i = 0; i < s->run.server.n; i++) {
		/* a symmetric candidate runs with cuMem on and NVLS at NCCL's default whatever
		 * the profile sets (profile_symmetric_var: a profile marks them "unless":
		 * "symmetric", the frameworks' own rule; a journal's record is read by name) */
		if (symmetric && profile_symmetric_var(s->run.server.v[i].name))
			continue;
		if (env_set(env, s->run.server.v[i].name, s->run.server.v[i].value) != 0)
			return -1;
	}
	if (symmetric && !env_has(*env, PROFILE_SYMM_CUMEM) &&
	    env_set(env, PROFILE_SYMM_CUMEM, "1") != 0)
		return -1;
	return 0;
}

cJSON *session_server_json(const nccltune_session *s, bool *ok)
{
	cJSON *o, *env;

	*ok = true;
	if (!s->run.like[0])
		return NULL;
	o = cJSON_CreateObject();
	if (o && cJSON_AddStringToObject(o, "like", s->run.like) &&
	    (env = env_pins_to_json(&s->run.server)) != NULL) {
		if (cJSON_AddItemToObject(o, "env", env))
			return o;
		cJSON_Delete(env);
	}
	cJSON_Delete(o);
	*ok = false;
	return NULL;
}

int session_server_from_json(nccltune_session *s, const cJSON *obj, char *err, size_t errlen)
{
	const cJSON *like = cJSON_GetObjectItemCaseSensitive(obj, "like");
	const cJSON *env = cJSON_GetObjectItemCaseSensitive(obj, "env"), *v;

	if (!obj)
		return 0;
	if (!cJSON_IsObject(obj) || !cJSON_IsString(like) || !cJSON_IsObject(env) ||
	    strlen(like->valuestring) >= sizeof s->run.like) {
		snprintf(err, errlen, "server: must be {\"like\": NAME, \"env\": {...}}");
		return -1;
	}
	snprintf(s->run.like, sizeof s->run.like, "%s", like->valuestring);
	cJSON_ArrayForEach(v, env) {
		char why[256];

		if (!cJSON_IsString(v)) {
			snprintf(err, errlen, "server.env.%.64s: not a string", v->string);
			return -1;
		}
		if (profile_var_check(v->string, v->valuestring, why, sizeof why) != 0) {
			snprintf(err, errlen, "server.env.%.64s: %s", v->string, why);
			return -1;
		}
		if (env_pins_add(&s->run.server, v->string, v->valuestring) != 0) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	}
	return 0;
}

/* ---- what results.json says of the server's side of a configuration ---- */

/* Over the ok runs of configuration p (NULL: the baseline) in the final phase, or in any
 * phase when it had none there: their number, and the means of the all-reduces' part of
 * the step (count x allreduce_us: each op less the kernel alone, as measured) and of the
 * kernel alone (compute.us.median), where the reports give them. */
struct server_figures { size_t n, nk; double allreduce_us, kernel_us; };

static bool figures_run(const nccltune_session *s, size_t i, const struct point *p, bool final)
{
	const struct session_run *r = &s->run.runs[i];

	/* a final run before final_from is an ended final phase's: history (runlog.h) */
	return r->o.cls == OUTCOME_OK && !r->try_no &&
	       (!final || (r->phase == PHASE_FINAL && i >= s->run.final_from)) &&
	       r->phase != PHASE_SWEEP && !r->unset &&
	       runlog_same_config(r, p, 0, space_dims(s->run.sp));
}

static void config_figures(const nccltune_session *s, const struct point *p,
                           struct server_figures *f)
{
	bool final = false;

	memset(f, 0, sizeof *f);
	for (size_t i = 0; i < s->run.nruns && !final; i++)
		final = figures_run(s, i, p, true);
	for (size_t i = 0; i < s->run.nruns; i++) {
		const struct session_run *r = &s->run.runs[i];
		double ar;

		if (!figures_run(s, i, p, final) || !r->o.report.compute.known ||
		    workload_allreduce_time(&s->cfg.wl, &r->o.report, &ar) != 0)
			continue;
		f->allreduce_us += ar;
		f->kernel_us += r->o.report.compute.us.median;
		f->n++;
	}
	if (f->n) {
		f->allreduce_us /= (double)f->n;
		f->kernel_us /= (double)f->n;
	}
}

/* Did NCCL run a symmetric kernel for p's tuned sizes (the decisions its runs report,
 * from the TUNING line "AllReduce [Symmetric]")? "symmetric" when one did, "not
 * symmetric" when every decision is known and none was, "unknown" otherwise (no TUNING
 * line: one rank, or a probe without decisions). */
static const char *kernel_word(const nccltune_session *s, const struct point *p)
{
	bool known = false, unknown = false;

	for (size_t i = 0; i < s->run.nruns; i++) {
		const struct session_run *r = &s->run.runs[i];

		if (!figures_run(s, i, p, false))
			continue;
		for (size_t j = 0; j < r->o.report.nresults; j++) {
			const struct proto_decision *d = &r->o.report.results[j].nccl;
			bool tuned = false;

			for (size_t w = 0; w < s->cfg.wl.n; w++)
				tuned = tuned || s->cfg.wl.e[w].bytes == r->o.report.results[j].bytes;
			if (!tuned)
				continue;
			if (d->known && d->symmetric)
				return SERVER_KERNEL_SYMMETRIC;
			known = known || d->known;
			unknown = unknown || !d->known;
		}
	}
	return known && !unknown ? SERVER_KERNEL_OTHER : SERVER_KERNEL_UNKNOWN;
}

/* "step": the all-reduces' part and the kernel alone, measured, into m (a measure of
 * configuration p, NULL: the baseline). Can't fail. */
static void step_fill(const nccltune_session *s, struct summary_measure *m,
                      const struct point *p)
{
	struct server_figures f;

	if (!m->present || !(s->cfg.wl.compute_us > 0))
		return;
	config_figures(s, p, &f);
	if (!f.n)
		return;
	m->has_step = true;
	m->step_allreduce_us = f.allreduce_us;
	m->step_kernel_us = f.kernel_us;
}

bool session_server_results_fill(const nccltune_session *s, struct summary *r,
                                 bool best_baseline, const struct point *win,
                                 const struct point *rec, uint32_t rec_unset)
{
	step_fill(s, &r->baseline, NULL);
	if (best_baseline || win)
		step_fill(s, &r->best, win);
	if (!r->best.present || !win || !space_point_symmetric(s->run.sp, rec ? rec : win,
	                                                      rec ? rec_unset : 0))
		return true;
	r->best.symmetric = true;
	r->best.kernel = kernel_word(s, win);
	return true;
}
