/* verify.c - `nccltune verify`: does the server run what was tuned? (include/nccltune.h)
 *
 * The server's environment comes from verify_env.c (this environment, an env file, the
 * interpreter's start-up, NCCL's configuration files; with a GPU, NCCL started inside
 * the interpreter). Then the tuner plugin that environment names is loaded and asked
 * through its own entry points by nccltune-plugin-load (models/plugin_load.c) in a child
 * process - never dlopen'ed here - as the server's NCCL version would load it. What is
 * reported comes from the lines NCCL and the plugin log ("Successfully loaded external
 * tuner plugin", "TUNER/Plugin: Using nccltune (vN)", "nccltune: table PATH, N rules",
 * "nccltune: allreduce N B -> ...", "NCCL version V", "X set by environment to Y"),
 * never from what the files should make them say. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "ncclvars.h"
#include "result/summary.h"
#include "run/runner.h"
#include "workflows/export.h"
#include "workflows/verify.h"

#define SIZES_MAX 16
#define TEXT_MAX 4096
#define HELPER_TIMEOUT_S 30.0
#define NCCL_FLOOR_MINOR 24   /* tuner ABI v4: NCCL 2.24, the oldest the plugin serves */

/* What the log lines say, of the plugin loaded by the helper (`h_`) or by NCCL. */
struct facts {
	/* nccltune-plugin-load */
	bool h_ran, h_loaded, h_init_ok;
	char h_file[1024], h_symbol[40], h_name[64], h_why[512];
	char answers[TEXT_MAX];
	/* the plugin's own lines (either) */
	bool table_read;
	char table[1024], table_why[512];
	long rules;
	char applied[TEXT_MAX];
	/* NCCL's */
	char nccl_version[64];
	bool nccl_loaded;
	char nccl_tuner[96], nccl_why[512], nccl_ran[TEXT_MAX], nccl_env[TEXT_MAX];
	char nccl_applied[TEXT_MAX];   /* the plugin's applied lines inside NCCL */
	char warns[TEXT_MAX];
};

struct check {
	FILE *out;
	int failed;
	char not_checked[TEXT_MAX];
};

static void add(char *buf, const char *sep, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Append "SEP text" (no SEP on an empty buf), cut at TEXT_MAX. */
static void add(char *buf, const char *sep, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n + 8 >= TEXT_MAX)
		return;
	if (n)
		n += (size_t)snprintf(buf + n, TEXT_MAX - n, "%s", sep);
	va_start(ap, fmt);
	vsnprintf(buf + n, TEXT_MAX - n, fmt, ap);
	va_end(ap);
}

static void fail(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(struct check *c, const char *fmt, ...)
{
	va_list ap;

	c->failed++;
	fputs("FAIL: ", c->out);
	va_start(ap, fmt);
	vfprintf(c->out, fmt, ap);
	va_end(ap);
	fputc('\n', c->out);
}

/* Copy src into dst (size n), cut to fit. */
static void cp(char *dst, size_t n, const char *src)
{
	size_t k = strlen(src);

	if (k >= n)
		k = n - 1;
	memcpy(dst, src, k);
	dst[k] = '\0';
}

/* The text after `key` in line, to its end, sanitised into buf. */
static bool after(const char *line, const char *key, char *buf, size_t len)
{
	const char *p = strstr(line, key);

	if (!p)
		return false;
	summary_sanitize(p + strlen(key), buf, len);
	return true;
}

/* One log line of NCCL's or the plugin's. */
static void parse_line(struct facts *f, const char *line)
{
	char t[1024], *q;

	if (after(line, "nccltune: table ", t, sizeof t) && (q = strstr(t, " rules"))) {
		char *comma = NULL;

		*q = '\0';
		for (char *p = t; (p = strstr(p, ", ")); p++)
			comma = p;
		if (comma) {
			*comma = '\0';
			f->table_read = true;
			cp(f->table, sizeof f->table, t);
			f->rules = strtol(comma + 2, NULL, 10);
		}
	} else if (strstr(line, "NCCL WARN") && after(line, "nccltune: ", t, sizeof t) &&
	           strstr(t, "table ignored")) {
		cp(f->table_why, sizeof f->table_why, t);
	} else if (after(line, "nccltune: allreduce ", t, sizeof t)) {
		if (!strstr(f->applied, t))
			add(f->applied, "; ", "%s", t);
	} else if (after(line, "NCCL version ", t, sizeof t) && !f->nccl_version[0]) {
		cp(f->nccl_version, sizeof f->nccl_version, t);
	} else if (after(line, "TUNER/Plugin: Using ", t, sizeof t)) {
		f->nccl_loaded = true;
		cp(f->nccl_tuner, sizeof f->nccl_tuner, t);
	} else if (after(line, "TUNER/Plugin: ", t, sizeof t) ||
	           after(line, "External tuner plugin ", t, sizeof t)) {
		if (!f->nccl_why[0])
			cp(f->nccl_why, sizeof f->nccl_why, t);
	} else if (strstr(line, "AllReduce: ") && after(line, "AllReduce: ", t, sizeof t)) {
		if (!strstr(f->nccl_ran, t))
			add(f->nccl_ran, "; ", "%s", t);
	} else if ((q = strstr(line, " set by environment to "))) {
		const char *n = q;

		while (n > line && n[-1] != ' ')
			n--;
		summary_sanitize(n, t, sizeof t);
		if (!strstr(f->nccl_env, t))
			add(f->nccl_env, "\n  ", "%s", t);
	} else if (strstr(line, "NCCL WARN") && after(line, "NCCL WARN ", t, sizeof t)) {
		add(f->warns, "\n  ", "%s", t);
	}
}

static void parse_log(struct facts *f, char *text)
{
	for (char *l = text, *nl; l && *l; l = nl ? nl + 1 : NULL) {
		if ((nl = strchr(l, '\n')))
			*nl = '\0';
		parse_line(f, l);
		if (nl)
			*nl = '\n';
	}
}

/* The helper's stdout: "loaded FILE SYMBOL NAME" | "not-loaded WHY", "init RC",
 * "ask BYTES RC ALGO PROTO NCH". */
static void parse_helper(struct facts *f, char *text)
{
	for (char *l = text, *nl; l && *l; l = nl ? nl + 1 : NULL) {
		char w[4][1024];
		unsigned long long b;
		int rc, nch;

		if ((nl = strchr(l, '\n')))
			*nl = '\0';
		if (strncmp(l, "loaded ", 7) == 0 && sscanf(l + 7, "%1023s %39s %63s", w[0], w[1], w[2]) == 3) {
			f->h_loaded = true;
			cp(f->h_file, sizeof f->h_file, w[0]);
			cp(f->h_symbol, sizeof f->h_symbol, w[1]);
			cp(f->h_name, sizeof f->h_name, w[2]);
		} else if (strncmp(l, "not-loaded ", 11) == 0) {
			summary_sanitize(l + 11, f->h_why, sizeof f->h_why);
		} else if (sscanf(l, "init %d", &rc) == 1) {
			f->h_init_ok = rc == 0;
		} else if (sscanf(l, "ask %llu %d %63s %63s %d", &b, &rc, w[0], w[1], &nch) == 5) {
			add(f->answers, "; ", "%llu B -> %s/%s, %d CTAs%s", b, w[0], w[1], nch,
			    nch ? "" : " (NCCL's count)");
		}
		if (nl)
			*nl = '\n';
	}
}

/* Run nccltune-plugin-load in the server's environment, with NCCL's INFO lines on. */
static int run_helper(struct verify_env *e, const char *version, long nranks,
                      const unsigned long long *sizes, size_t n, struct facts *f, char *err,
                      size_t errlen)
{
	char tool[4096], ver[64], nr[32], sz[SIZES_MAX][24], *argv[8 + SIZES_MAX], rerr[512];
	char **envp = NULL;
	struct runner_request req;
	struct runner_result res;
	size_t k = 0, ne = 0;
	int rc = NCCLTUNE_ERROR;

	memset(&req, 0, sizeof req);
	memset(&res, 0, sizeof res);
	if (runner_find_tool("nccltune-plugin-load", tool, sizeof tool, err, errlen) != 0)
		return NCCLTUNE_ERROR;
	envp = calloc(e->nenvp + 3, sizeof *envp);
	if (!envp)
		return fs_errf(err, errlen, "out of memory"), NCCLTUNE_ERROR;
	for (size_t i = 0; i < e->nenvp; i++)
		if (strncmp(e->envp[i], "NCCL_DEBUG", 10) != 0)
			envp[ne++] = e->envp[i];
	envp[ne++] = "NCCL_DEBUG=INFO";
	envp[ne++] = "NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING";
	snprintf(ver, sizeof ver, "%s", version);
	snprintf(nr, sizeof nr, "%ld", nranks);
	argv[k++] = tool;
	argv[k++] = "--nccl-version";
	argv[k++] = ver;
	argv[k++] = "--nranks";
	argv[k++] = nr;
	for (size_t i = 0; i < n && i < SIZES_MAX; i++) {
		snprintf(sz[i], sizeof sz[i], "%llu", sizes[i]);
		argv[k++] = sz[i];
	}
	argv[k] = NULL;
	req.argv = argv;
	req.envp = envp;
	req.timeout_s = HELPER_TIMEOUT_S;
	if (runner_run(&req, &res, rerr, sizeof rerr) < 0 || !res.spawned) {
		fs_errf(err, errlen, "cannot run %s: %s", tool, res.spawned ? rerr : res.spawn_error);
		goto out;
	}
	f->h_ran = true;
	if (res.signal || res.timed_out)
		fs_errf(f->h_why, sizeof f->h_why, "loading it %s", res.timed_out ? "hung" :
		        "crashed the process (NCCL would crash at init)");
	parse_helper(f, res.out ? res.out : "");
	parse_log(f, res.err ? res.err : "");
	rc = NCCLTUNE_OK;
out:
	runner_result_free(&res);
	free(envp);
	return rc;
}

/* Version "2.28.9+cuda13.0" -> minor 28; -1 unknown. */
static int version_minor(const char *v)
{
	int major, minor;

	return v && sscanf(v, "%d.%d", &major, &minor) == 2 && major == 2 ? minor : -1;
}

/* The rule lines of a table file (its non-comment lines), malloc'd; NULL unreadable. */
static char *rule_lines(const char *text)
{
	char *out = malloc(strlen(text) + 1), *o = out;

	for (const char *l = text; out && *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) + 1 : strlen(l);

		if (*l != '#') {
			memcpy(o, l, n);
			o += n;
		}
		l += n;
	}
	if (out)
		*o = '\0';
	return out;
}

/* Is the table the environment names the session's (the same rules)? */
static void compare_table(struct check *c, const struct summary *s, const char *path)
{
	char e[512], *have = NULL, *want = NULL, *a = NULL, *b = NULL;
	size_t len = 0;

	have = fs_read_regular(path, 1u << 20, NULL, e, sizeof e);
	if (export_render_string(s, "nccl-tuner", NULL, &want, &len, e, sizeof e) != NCCLTUNE_OK) {
		add(c->not_checked, "\n  ", "the table against the session's rules: %s", e);
		goto out;
	}
	a = have ? rule_lines(have) : NULL;
	b = rule_lines(want);
	if (a && b && strcmp(a, b) != 0)
		fail(c, "the table %s holds other rules than the session %s measured", path, s->origin);
	else if (a && b)
		fprintf(c->out, "matches the session: the table holds its %zu per-size rule(s)\n",
		        s->nrules);
out:
	free(have);
	free(want);
	free(a);
	free(b);
}

/* The session's variables (best.env, pinned) against what the server gets. */
static void compare_session(struct check *c, const struct summary *s, const struct verify_env *e)
{
	const struct summary_env *envs[2] = {&s->best.env, &s->pinned};
	size_t same = 0;

	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < envs[k]->n; i++) {
			const struct summary_var *sv = &envs[k]->v[i];
			const struct verify_var *v = verify_env_get(e, sv->name);

			if (!sv->value || strncmp(sv->name, "NCCL_", 5) != 0)
				continue;
			if (!v)
				fail(c, "%s is not set in the server's environment; the session measured "
				     "%s=%s", sv->name, sv->name, sv->value);
			else if (strcmp(v->value, sv->value) != 0)
				fail(c, "%s=%s in the server's environment (%s); the session measured %s=%s",
				     v->name, v->value, v->origin, sv->name, sv->value);
			else
				same++;
		}
	if (s->has_rules && s->nrules > 0) {
		for (int i = 0; i < 2; i++) {
			const char *n = i ? "NCCL_ALGO" : "NCCL_PROTO";
			const struct verify_var *v = verify_env_get(e, n);

			if (v)
				fail(c, "%s=%s in the server's environment (%s): it overrides the per-size "
				     "rules for every size; unset it", n, v->value, v->origin);
		}
	}
	fprintf(c->out, "the session %s: %zu variable(s) as measured\n", s->origin, same);
}

/* What the plugin check found. `rules` says a plugin is expected. */
static void report_plugin(struct check *c, const struct facts *f, const struct verify_env *e,
                          bool rules)
{
	const struct verify_var *p = verify_env_get(e, EXPORT_PLUGIN_VAR);
	const struct verify_var *t = verify_env_get(e, EXPORT_TABLE_VAR);

	if (!p && !t && !rules) {
		fprintf(c->out, "tuner plugin: none named (NCCL_TUNER_PLUGIN unset): NCCL decides "
		        "algorithms and protocols itself\n");
		return;
	}
	if (!p) {
		fail(c, "plugin not found: NCCL_TUNER_PLUGIN is not set, so NCCL loads no tuner%s",
		     t ? " and the table NCCLTUNE_TUNER_TABLE names is never read" : "");
		return;
	}
	if (!f->h_loaded) {
		fail(c, "plugin not found: NCCL_TUNER_PLUGIN=%s (%s): %s", p->value, p->origin,
		     f->h_why[0] ? f->h_why : "not loaded");
		return;
	}
	fprintf(c->out, "tuner plugin: %s loaded through %s (ABI v%c), named \"%s\"\n", f->h_file,
	        f->h_symbol, f->h_symbol[strlen(f->h_symbol) - 1], f->h_name);
	if (strcmp(f->h_name, "nccltune") != 0) {
		fail(c, "%s is not nccltune's plugin (it calls itself \"%s\")", f->h_file, f->h_name);
		return;
	}
	if (!f->h_init_ok)
		fail(c, "the plugin's init failed: NCCL would fail the communicator");
	if (f->table_read) {
		fprintf(c->out, "table: %s, %ld rule(s) (the plugin's own line)\n", f->table, f->rules);
		if (f->answers[0])
			fprintf(c->out, "its answers (all-reduce, asked by nccltune-plugin-load with a "
			        "made-up cost table, not NCCL's: where no rule applies, not what NCCL "
			        "would run): %s\n", f->answers);
		if (f->applied[0])
			fprintf(c->out, "rules applied: %s\n", f->applied);
		else if (rules)
			fail(c, "no rule of the table applies to this communicator (rule nranks, sizes)");
	} else {
		fail(c, "table unreadable: %s", f->table_why[0] ? f->table_why
		     : t ? "the plugin logged no table line" : "NCCLTUNE_TUNER_TABLE is not set");
	}
}

/* NCCL as started in the interpreter. */
static void report_nccl(struct check *c, const struct facts *f, const struct verify_env *e,
                        const struct nccltune_verify_options *o, bool rules)
{
	if (!e->python_ran) {
		add(c->not_checked, "\n  ", "NCCL was not started (give --python PY, the server's "
		    "interpreter with PyTorch)");
		return;
	}
	fprintf(c->out, "interpreter: %s; torch %s; NCCL %s (%s)\n", e->python,
	        e->torch[0] ? e->torch : "not importable",
	        e->nccl_version[0] ? e->nccl_version : "unknown",
	        e->nccl_lib[0] ? e->nccl_lib : "no libnccl.so.2 found in its site-packages");
	if (o->no_start || !e->gpu) {
		add(c->not_checked, "\n  ", "NCCL was not started (%s): whether NCCL itself loads "
		    "the plugin and applies the rules", o->no_start ? "--no-start"
		    : e->torch[0] ? "no GPU visible to torch" : "torch is not importable");
		return;
	}
	if (!e->started)
		fail(c, "NCCL did not start in %s: %s", e->python, e->start_error);
	if (f->nccl_version[0])
		fprintf(c->out, "NCCL started: version %s\n", f->nccl_version);
	if (f->nccl_env[0])
		fprintf(c->out, "NCCL read from its environment:\n  %s\n", f->nccl_env);
	if (f->nccl_loaded)
		fprintf(c->out, "NCCL: TUNER/Plugin: Using %s\n", f->nccl_tuner);
	else if (verify_env_get(e, EXPORT_PLUGIN_VAR) || rules)
		fail(c, "NCCL did not load the tuner plugin%s%s", f->nccl_why[0] ? ": " : "",
		     f->nccl_why);
	if (f->nccl_applied[0])
		fprintf(c->out, "the plugin inside NCCL: %s\n", f->nccl_applied);
	else if (rules && o->ranks > 1 && f->nccl_loaded)
		fail(c, "NCCL asked the plugin, but no rule applied to this communicator of %d "
		     "ranks (the rules' nranks or sizes are another communicator's)", o->ranks);
	if (f->nccl_ran[0])
		fprintf(c->out, "NCCL ran: %s\n", f->nccl_ran);
	else if ((o->ranks > 1))
		add(c->not_checked, "\n  ", "what NCCL ran (it logged no TUNING line)");
	if (o->ranks <= 1)
		add(c->not_checked, "\n  ", "NCCL's own use of the rules: at one rank NCCL asks no "
		    "tuner (--ranks 2 needs 2 GPUs, or NCCL >= 2.30 with NCCL_MULTI_RANK_GPU_ENABLE=1)");
	if (f->warns[0])
		fprintf(c->out, "NCCL warned:\n  %s\n", f->warns);
}

static void print_env(FILE *out, const struct verify_env *e)
{
	fprintf(out, "variables the server's NCCL sees (NCCL_*, NCCLTUNE_*, CUDA_*):\n");
	if (e->n == 0)
		fprintf(out, "  none\n");
	for (size_t i = 0; i < e->n; i++) {
		char v[VERIFY_VALUE_MAX];

		fprintf(out, "  %s=%s  (%s)\n", e->v[i].name,
		        summary_sanitize(e->v[i].value, v, sizeof v), e->v[i].origin);
	}
	if (verify_env_get(e, "NCCL_DEBUG"))
		fprintf(out, "note: NCCL_DEBUG is set for the server: NCCL's log is its; verify sets "
		        "its own in its children\n");
}

int nccltune_verify(const struct nccltune_verify_options *o, FILE *out, char *err,
                    size_t errlen)
{
	unsigned long long sizes[SIZES_MAX] = {43008};
	size_t nsizes = 1;
	struct summary *s = NULL;
	struct verify_env *e = calloc(1, sizeof *e);
	struct facts *f = calloc(1, sizeof *f);
	struct check c = {out, 0, ""};
	const char *version;
	bool rules = false;
	long nranks = o->ranks > 0 ? o->ranks : 2;
	int rc = NCCLTUNE_ERROR, minor;

	if (!e || !f) {
		fs_errf(err, errlen, "out of memory");
		goto out;
	}
	if (o->ranks < 0 || o->ranks > 8) {
		rc = NCCLTUNE_USAGE;
		fs_errf(err, errlen, "--ranks %d: 1 to 8", o->ranks);
		goto out;
	}
	if (o->session && summary_load(o->session, 0, &s, err, errlen) < 0) {
		rc = NCCLTUNE_USAGE;
		goto out;
	}
	if (s && s->has_rules && s->nrules > 0) {
		rules = true;
		nsizes = 0;
		for (size_t i = 0; i < s->nrules && nsizes < SIZES_MAX; i++)
			sizes[nsizes++] = s->rules[i].bytes;
		if (o->ranks == 0 && s->fp.gpu_count > 0)
			nranks = s->fp.gpu_count;
	}
	rc = verify_env_collect(o, sizes, nsizes, e, err, errlen);
	if (rc != NCCLTUNE_OK)
		goto out;
	if (e->log) {
		parse_log(f, e->log);
		cp(f->nccl_applied, sizeof f->nccl_applied, f->applied);
		f->applied[0] = '\0';
	}
	version = e->nccl_version[0] ? e->nccl_version : "2.30.7";
	rc = run_helper(e, version, nranks, sizes, nsizes, f, err, errlen);
	if (rc != NCCLTUNE_OK)
		goto out;
	print_env(out, e);
	report_plugin(&c, f, e, rules);
	report_nccl(&c, f, e, o, rules);
	if (!e->nccl_version[0])
		add(c.not_checked, "\n  ", "the server's NCCL version (the plugin was loaded as NCCL "
		    "%s loads it)", version);
	minor = version_minor(f->nccl_version[0] ? f->nccl_version : e->nccl_version);
	if ((rules || verify_env_get(e, EXPORT_PLUGIN_VAR)) && minor >= 0 && minor < NCCL_FLOOR_MINOR)
		fail(&c, "NCCL %s is older than 2.24: it has no tuner ABI v4, so per-size rules "
		     "cannot apply; use NCCL 2.24 or newer in the server",
		     f->nccl_version[0] ? f->nccl_version : e->nccl_version);
	if (s) {
		compare_session(&c, s, e);
		if (rules && verify_env_get(e, EXPORT_TABLE_VAR))
			compare_table(&c, s, verify_env_get(e, EXPORT_TABLE_VAR)->value);
	} else {
		add(c.not_checked, "\n  ", "whether this is what a session measured (give the "
		    "session folder)");
	}
	if (c.not_checked[0])
		fprintf(out, "not checked:\n  %s\n", c.not_checked);
	fprintf(out, "verdict: %s\n", c.failed ? "NOT DEPLOYED: the server would not run what "
	        "was tuned (see FAIL above)" : "ok: every check that ran passed");
	rc = c.failed ? NCCLTUNE_NOT_DEPLOYED : NCCLTUNE_OK;
out:
	summary_destroy(s);
	if (e)
		verify_env_free(e);
	free(e);
	free(f);
	return rc;
}
