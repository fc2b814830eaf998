/* export_plan.c - the bottom every export format shares (export.c dispatches on top of
 * it; the formats, export_env.c and export_table.c, call it): the comment writer and the
 * header, and the plan - what an export sets:
 *
 *   - for a result with per-size rules (best.rules), nccltune's tuner plugin
 *     (NCCL_TUNER_PLUGIN: the absolute path of the plugin locate_plugin finds and checks
 *     by loading it) and its table (NCCLTUNE_TUNER_TABLE: the session's exports/ table,
 *     or the one an install wrote);
 *   - best.env: only variables of role `tune` in common/ncclvars;
 *   - the variables pinned from the environment the session ran in (role tune or
 *     setting), which every format marks "pinned: set when the session ran".
 *
 * Anything else - a loader variable, a logging one, a name nccltune does not know - is
 * refused, naming the key. Every value is written through a quoting function of its
 * format even though the loader already refused anything outside NCCL's syntax: the two
 * checks are independent, and either alone keeps a hostile results.json from becoming
 * code. It calls none of its siblings. */
#include "workflows/export.h"

#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fsutil.h"
#include "ncclvars.h"
#include "nccltune.h"
#include "run/locate.h"
#include "table.h"


/* ---- comments ---- */

/* Longest comment line we write. NVIDIA's example tuner plugin reads its file with a
 * 256-byte fgets: the rest of a longer '#' line would be parsed as a config row. */
#define COMMENT_MAX 200

/* The first comment line of every export, and the line after the start marker of the
 * blocks: fixed text. Python reads a `coding[:=]` comment on line 1 or 2 of a source file
 * as its encoding (PEP 263); in UTF-7 "+AAo-" is a newline, so data there could become
 * code. Nothing from a results file is ever printed on those two lines. */
#define HEADER_FIRST "NCCL settings from an nccltune session (nccltune export); details below"



/* Does text declare a source encoding the way PEP 263 reads it ("coding" then ':' or
 * '=', as in "coding: utf-7", "-*- coding=latin-1 -*-", "vim: fileencoding=utf-7")?
 * Compared without case, which refuses more than Python reads. */
static bool declares_coding(const char *text)
{
	for (const char *p = text; *p; p++)
		if (strncasecmp(p, "coding", 6) == 0 && (p[6] == ':' || p[6] == '='))
			return true;
	return false;
}

void export_comment(struct export_writer *w, const char *text)
{
	char clean[COMMENT_MAX + 1];
	size_t n;

	summary_sanitize(text, clean, sizeof(clean));
	/* systemd's EnvironmentFile= parser lets a backslash escape the newline that ends a
	 * comment, which would swallow the next line (a variable) into the comment. */
	for (char *p = clean; *p; p++)
		if (*p == '\\')
			*p = '/';
	n = strlen(clean);
	if (n == COMMENT_MAX && strlen(text) > COMMENT_MAX)
		memcpy(clean + COMMENT_MAX - 3, "...", 3);
	if (w->rc == NCCLTUNE_OK && (declares_coding(clean) || declares_coding(text))) {
		fs_errf(w->err, w->errlen, "%s: the header line '%.60s' declares a source encoding "
		        "('coding:' or 'coding='), which Python obeys in a comment (PEP 263); refused",
		        w->origin, clean);
		w->rc = NCCLTUNE_USAGE;
	}
	fprintf(w->out, "#%s%s\n", *clean ? " " : "", clean);
}

void export_commentf(struct export_writer *w, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	export_comment(w, line);
}

/* The best measured with symmetric memory (the space's server.symmetric): what to turn on
 * in the server, in words (fixed text from the built-in profiles); never a variable. */
static void export_symmetric_comments(struct export_writer *w, const struct summary *s)
{
	const char *lines[SUMMARY_SYMMETRIC_LINES_MAX];
	size_t n;

	if (!s->best.present || !s->best.symmetric)
		return;
	n = summary_symmetric_lines(s->server_like, lines, SUMMARY_SYMMETRIC_LINES_MAX);
	export_comment(w, "server option, not an NCCL variable (nothing here sets it): measured "
	               "with symmetric memory; turn it on in the server:");
	for (size_t i = 0; i < n; i++)
		export_commentf(w, "  %s", lines[i]);
	export_comment(w, summary_kernel_words(s->best.kernel));
}

/* What every export starts with, after the fixed first line: who tuned what, where, and
 * how well; a model's figures are marked as such, with what to do instead. */
static void header(struct export_writer *w, const struct summary *s)
{
	char buf[1024];

	export_commentf(w, "tuned by %s %s on %s", s->tool_name ? s->tool_name : "nccltune",
	         s->tool_version ? s->tool_version : "(version unknown)",
	         s->created ? s->created : "(date unknown)");
	export_commentf(w, "machine: %s", summary_describe_machine(&s->fp, buf, sizeof(buf)));
	export_commentf(w, "workload: %s", summary_describe_workload(&s->workload, buf, sizeof(buf)));
	export_commentf(w, "result: %s", summary_describe_gain(s, buf, sizeof(buf)));
	if (s->model) {
		export_commentf(w, "source: model (%s) - not a measurement", s->model);
		export_comment(w, "A machine model's numbers are no reason to set anything in production:");
		export_commentf(w, "on the real machine run %s (no --model) with the same workload,",
		                summary_command(buf, sizeof(buf), "run", NULL));
		export_comment(w, "then export or install that session (export --install refuses a model).");
	} else {
		export_comment(w, "source: measured");
	}
	if (export_uses_plugin(s))   /* NCCL's plugin loader wants ncclTunerPlugin_v4 or later */
		export_comment(w, "per-size rules: the server's NCCL must be 2.24 or newer (tuner "
		               "plugin ABI v4); an older NCCL runs without the plugin, and says so "
		               "only at NCCL_DEBUG=INFO");
	/* --like: the server sets these itself before NCCL starts; the session measured with
	 * them, and this export leaves them to the server. */
	for (size_t i = 0; s->server_like && i < s->server_env.n; i++)
		export_commentf(w, "set by the server (%s): %s=%s%s", s->server_like,
		                s->server_env.v[i].name, s->server_env.v[i].value,
		                s->best.present && s->best.symmetric &&
		                strcmp(s->server_env.v[i].name, "NCCL_CUMEM_ENABLE") == 0
		                ? " (not with symmetric memory: the best ran with cuMem on)" : "");
	export_symmetric_comments(w, s);
}

struct export_writer export_writer_start(const struct summary *s, FILE *out, const char *first,
                                         bool marker, char *err, size_t errlen)
{
	struct export_writer w = {out, s->origin, err, errlen, NCCLTUNE_OK};

	if (first)
		fprintf(out, "%s\n", first);
	if (marker)
		fprintf(out, "%s\n", EXPORT_MARK_BEGIN);
	export_comment(&w, HEADER_FIRST);
	header(&w, s);
	return w;
}

/* ---- what to set ---- */

/* The comment above pinned variables, in every format. */
#define PINNED_NOTE "pinned: set when the session ran (it measured with them)"

bool export_uses_plugin(const struct summary *s)
{
	return s->has_rules && s->nrules > 0;
}

/* Why an export may not set `name` (from best.env when !pinned), or NULL when it may:
 * only variables of role `tune` in common/ncclvars, and site settings that were pinned.
 * A loader variable (a plugin, a file NCCL opens or writes) from a results file would
 * let whoever wrote that file choose code or files for every NCCL program; nccltune's
 * own plugin is set by the export itself, never taken from best.env; a variable nccltune
 * does not know may be a loader of an NCCL version newer than its table. */
static const char *role_refusal(const char *name, bool pinned)
{
	const struct ncclvar *var = ncclvars_find(name);
	const char *never = ncclvars_loader_refusal(name);

	if (!var)
		return "not a tuning variable nccltune knows (common/ncclvars.c); an export sets "
		       "only those, since an unknown name may be a loader of a newer NCCL";
	if (never)
		return never;
	if (var->role == NCCLVARS_SETTING && !pinned)
		return "a site setting, not a tuning variable: exported only as pinned (set in the "
		       "environment the session ran in)";
	return NULL;
}

/* Add env's variables to the plan as `kind`: the loader's name and value checks again (an
 * export never depends on its caller having used summary_load), the role, and the
 * format's own limits (`safe`, may be NULL). */
static int plan_add(const struct summary *s, const struct summary_env *env, enum export_kind kind,
                    const char *format, bool (*safe)(const char *value, char *why, size_t whylen),
                    struct export_plan *p, char *err, size_t errlen)
{
	const char *key = kind == EXPORT_PINNED ? "pinned" : "best.env";
	char why[256], q[80];

	for (size_t i = 0; i < env->n; i++) {
		const struct summary_var *v = &env->v[i];
		const char *role;

		if (ncclvars_name_check(v->name, why, sizeof(why)) != 0)
			return fs_errf(err, errlen, "%s: %s: '%s': %s", s->origin, key,
			               summary_sanitize(v->name, q, sizeof(q)), why);
		if (!v->value || ncclvars_check(v->name, v->value, why, sizeof(why)) != 0 ||
		    (safe && !safe(v->value, why, sizeof(why))))
			return fs_errf(err, errlen, "%s: %s.%s: value '%s' cannot be written safely as "
			               "%s: %s", s->origin, key, v->name,
			               summary_sanitize(v->value ? v->value : "(unset)", q, sizeof(q)),
			               format, v->value ? why : "no value");
		role = role_refusal(v->name, kind == EXPORT_PINNED);
		if (role)
			return fs_errf(err, errlen, "%s: %s.%s: %s; refused%s", s->origin, key, v->name,
			               role, kind == EXPORT_PINNED ? " (the session ran with it set: "
			               "unset it and tune again, or set it yourself where the program "
			               "runs)" : "");
		for (size_t j = 0; j < p->n; j++)
			if (strcmp(p->v[j].name, v->name) == 0)
				return fs_errf(err, errlen, "%s: %s.%s: set twice (best.env and pinned)",
				               s->origin, key, v->name);
		if (p->n == sizeof(p->v) / sizeof(p->v[0]))
			return fs_errf(err, errlen, "%s: %s: too many variables", s->origin, key);
		p->v[p->n].name = v->name;
		p->v[p->n].value = v->value;
		p->v[p->n++].kind = kind;
	}
	return 0;
}

int export_plan_begin(const struct summary *s, struct export_plan *p, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	if (!s->best.present) {
		fs_errf(err, errlen, "%s: no configuration worked in this session (best is null): "
		        "nothing to export", s->origin);
		return NCCLTUNE_NO_CONFIG;
	}
	return NCCLTUNE_OK;
}

int export_plan_add_plugin(const struct summary *s, const char *name, const char *value,
                           const char *format,
                           bool (*safe)(const char *value, char *why, size_t whylen),
                           struct export_plan *p, char *err, size_t errlen)
{
	char why[256], q[120];

	if (safe && !safe(value, why, sizeof(why)))
		return fs_errf(err, errlen, "%s: %s: the path '%s' cannot be written safely as %s: %s",
		               s->origin, name, summary_sanitize(value, q, sizeof(q)), format, why);
	p->v[p->n].name = name;
	p->v[p->n].value = value;
	p->v[p->n++].kind = EXPORT_PLUGIN;
	return 0;
}

int export_plan_finish(const struct summary *s, const char *format,
                       bool (*safe)(const char *value, char *why, size_t whylen),
                       struct export_plan *p, char *err, size_t errlen)
{
	if (plan_add(s, &s->best.env, EXPORT_TUNED, format, safe, p, err, errlen) < 0 ||
	    plan_add(s, &s->pinned, EXPORT_PINNED, format, safe, p, err, errlen) < 0)
		return NCCLTUNE_USAGE;
	return NCCLTUNE_OK;
}

int export_plan_make(const struct summary *s, const char *format,
                     bool (*safe)(const char *value, char *why, size_t whylen),
                     struct export_plan *p, char *err, size_t errlen)
{
	int rc = export_plan_begin(s, p, err, errlen);

	if (rc != NCCLTUNE_OK)
		return rc;
	return export_plan_finish(s, format, safe, p, err, errlen);
}

bool export_plan_notes(const struct export_plan *p, size_t i, const char **a, const char **b)
{
	enum export_kind k = p->v[i].kind, prev = i ? p->v[i - 1].kind : k;

	*a = *b = NULL;
	if (i == 0 && k == EXPORT_PLUGIN) {
		*a = "nccltune's tuner plugin and its table of per-size rules (NCCL_ALGO and "
		     "NCCL_PROTO stay unset)";
		if (p->plugin_from_build)
			*b = "the plugin is the build tree's, not installed (meson install puts it in "
			     "the libdir)";
	} else if (k == EXPORT_TUNED && i > 0 && prev == EXPORT_PLUGIN) {
		*a = "the process-level variables the session measured with those rules";
	} else if (k == EXPORT_PINNED && (i == 0 || prev != EXPORT_PINNED)) {
		*a = PINNED_NOTE;
	}
	return *a != NULL;
}

/* ---- rendering into memory ---- */

int export_capture(int (*render)(const void *ctx, FILE *out, char *err, size_t errlen),
                   const void *ctx, const char *what, char **text, size_t *len, char *err,
                   size_t errlen)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *mem;
	int rc;

	*text = NULL;
	*len = 0;
	mem = open_memstream(&buf, &n);
	if (!mem) {
		fs_errf(err, errlen, "out of memory rendering the %s export", what);
		return NCCLTUNE_ERROR;
	}
	rc = render(ctx, mem, err, errlen);
	if (ferror(mem) && rc == NCCLTUNE_OK) {
		fs_errf(err, errlen, "out of memory rendering the %s export", what);
		rc = NCCLTUNE_ERROR;
	}
	if (fclose(mem) != 0 && rc == NCCLTUNE_OK) {
		fs_errf(err, errlen, "out of memory rendering the %s export", what);
		rc = NCCLTUNE_ERROR;
	}
	if (rc != NCCLTUNE_OK) {
		free(buf);
		return rc;
	}
	*text = buf;
	*len = n;
	return NCCLTUNE_OK;
}
