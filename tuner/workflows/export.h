/* export.h - the tuned environment of a loaded result in each export format, inside
 * tuner/workflows/: the table of formats and the dispatch (export.c), one function per
 * format (export_env.c: sitecustomize, shell, dotenv, nccl-conf, json; export_table.c:
 * nccltune's tuner table and NVIDIA's example plugin CSV), over what export_plan.c
 * shares - the list of what to set (struct export_plan, with every role and value
 * check), the comment writer with its header, and the marker lines that delimit
 * nccltune's block in a sitecustomize.py or an nccl.conf (install.c). Calls go one way:
 * export.c -> the formats -> export_plan.c. */
#ifndef NCCLTUNE_EXPORT_H
#define NCCLTUNE_EXPORT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "result/summary.h"

#define EXPORT_MARK_BEGIN "# >>> nccltune >>>"
#define EXPORT_MARK_END "# <<< nccltune <<<"

#define EXPORT_ENV_SCHEMA "nccltune-env/1"   /* exports/env.json */
#define EXPORT_VARS_MAX 512                   /* variables one export sets, pinned included */
#define EXPORT_TABLE_FILE "nccl-tuner.table"  /* the nccl-tuner export in exports/ */
#define EXPORT_PLUGIN_VAR "NCCL_TUNER_PLUGIN"
#define EXPORT_TABLE_VAR "NCCLTUNE_TUNER_TABLE"

/* Where the plugin and the table of a result with per-size rules are, for the env-style
 * exports that name them. NULL fields (or a NULL pointer): the plugin locate_plugin
 * finds, and the session's own table, SESSION/exports/nccl-tuner.table, which must exist
 * and be this result's (install writes a table of its own and names that one). */
struct export_where {
	const char *plugin;
	const char *table;
};

/* A format's renderer (a row of export.c's EXPORT_FORMATS). Each writes the whole
 * export to `out` and returns an nccltune_status:
 * NCCLTUNE_OK; NCCLTUNE_NO_CONFIG when the result has no working configuration;
 * NCCLTUNE_USAGE when a variable may not be exported (only role `tune` from best.env,
 * role tune or setting from pinned), a value cannot be written safely in the format, or
 * the plugin or table of a result with rules is missing (message names the origin file,
 * the key and the reason); NCCLTUNE_ERROR when writing fails. On an error `out` may hold
 * part of the text: use export_render_string. */
typedef int (*export_render_fn)(const struct summary *s, const struct export_where *w,
                                FILE *out, char *err, size_t errlen);
int export_sitecustomize(const struct summary *s, const struct export_where *w, FILE *out,
                         char *err, size_t errlen);
int export_shell(const struct summary *s, const struct export_where *w, FILE *out, char *err,
                 size_t errlen);
int export_dotenv(const struct summary *s, const struct export_where *w, FILE *out, char *err,
                  size_t errlen);
int export_nccl_conf(const struct summary *s, const struct export_where *w, FILE *out,
                     char *err, size_t errlen);
int export_json(const struct summary *s, const struct export_where *w, FILE *out, char *err,
                size_t errlen);
int export_tuner_table(const struct summary *s, const struct export_where *w, FILE *out,
                       char *err, size_t errlen);
int export_tuner_csv(const struct summary *s, const struct export_where *w, FILE *out,
                     char *err, size_t errlen);

/* Dispatch on a name of nccltune_export_formats (a result not measured enough gets the
 * format's "nothing to set" frame); NCCLTUNE_USAGE, naming every format, for an unknown
 * one. */
int export_render(const struct summary *s, const char *format, const struct export_where *w,
                  FILE *out, char *err, size_t errlen);

/* Render into a malloc'd NUL-terminated string (*len excludes the NUL), so that nothing
 * partial is ever written. Returns a status as above; *text is NULL unless NCCLTUNE_OK. */
int export_render_string(const struct summary *s, const char *format,
                         const struct export_where *w, char **text, size_t *len, char *err,
                         size_t errlen);

/* Does s deploy through nccltune's tuner plugin (best.rules with at least one rule)? */
bool export_uses_plugin(const struct summary *s);

/* ---- shared by the formats (export_plan.c) ---- */

/* A comment writer: remembers the first refusal (a header line that would declare a
 * Python source encoding), which then fails the whole export. */
struct export_writer {
	FILE *out;
	const char *origin;
	char *err;
	size_t errlen;
	int rc;
};

/* Write "# text" (sanitised, at most 200 bytes, no backslash). */
void export_comment(struct export_writer *w, const char *text);
void export_commentf(struct export_writer *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A writer on out for s with its first lines written: `first` (NULL: nothing) as is,
 * the start marker when `marker`, the fixed comment line, then the header (who tuned
 * what, where, how well, the source). No data from the results file reaches the first
 * two lines. */
struct export_writer export_writer_start(const struct summary *s, FILE *out, const char *first,
                                         bool marker, char *err, size_t errlen);

enum export_kind { EXPORT_PLUGIN, EXPORT_TUNED, EXPORT_PINNED };

struct export_var {
	const char *name, *value;
	enum export_kind kind;
};

/* What an export sets, in the order written: nccltune's plugin and table (a result with
 * rules), best.env, the pinned variables. */
struct export_plan {
	size_t n;
	struct export_var v[EXPORT_VARS_MAX];
	bool plugin_from_build;            /* the plugin is the build tree's, not installed */
	char plugin[PATH_MAX], table[PATH_MAX];
};

/* The plan of s for an env-style `format` (export_plugin.c): nccltune's plugin and its
 * table first for a result with rules (where `w` says, else the plugin locate_plugin
 * finds and the session's own table, which must be this result's), then what
 * export_plan_make adds. Every value also passed through `safe` (the format's own limits;
 * NULL: none). Returns NCCLTUNE_OK, NCCLTUNE_NO_CONFIG, NCCLTUNE_USAGE with a message
 * naming the key, or NCCLTUNE_ERROR when the plugin cannot be found or loaded. */
int export_plan_env_make(const struct summary *s, const char *format,
                         const struct export_where *w,
                         bool (*safe)(const char *value, char *why, size_t whylen),
                         struct export_plan *p, char *err, size_t errlen);

/* ---- the plan's parts (export_plan.c) ---- */

/* The plan of s for `format` without nccltune's plugin (the table formats, which are the
 * plugin's input): export_plan_begin, then export_plan_finish. Returns NCCLTUNE_OK,
 * NCCLTUNE_NO_CONFIG or NCCLTUNE_USAGE with a message naming the key. */
int export_plan_make(const struct summary *s, const char *format,
                     bool (*safe)(const char *value, char *why, size_t whylen),
                     struct export_plan *p, char *err, size_t errlen);

/* Empty p; NCCLTUNE_NO_CONFIG (message naming s) when s has no working configuration,
 * else NCCLTUNE_OK. */
int export_plan_begin(const struct summary *s, struct export_plan *p, char *err, size_t errlen);

/* Add nccltune's plugin variable `name` = value (a path; p->v keeps the pointer), the
 * value through `safe` (may be NULL). 0, or -1 with a message naming the variable. */
int export_plan_add_plugin(const struct summary *s, const char *name, const char *value,
                           const char *format,
                           bool (*safe)(const char *value, char *why, size_t whylen),
                           struct export_plan *p, char *err, size_t errlen);

/* Add best.env (role `tune` only) and the pinned variables (role tune or setting), each
 * checked again (name, value, role, `safe`, not twice). NCCLTUNE_OK, or NCCLTUNE_USAGE
 * with a message naming the key. */
int export_plan_finish(const struct summary *s, const char *format,
                       bool (*safe)(const char *value, char *why, size_t whylen),
                       struct export_plan *p, char *err, size_t errlen);

/* The comment lines that go before variable i of the plan (the start of a group), or
 * NULL; at most two lines, in *a and *b (b may be NULL). */
bool export_plan_notes(const struct export_plan *p, size_t i, const char **a, const char **b);

/* Run render(ctx, out, ...) on an in-memory stream and hand over the whole text as a
 * malloc'd NUL-terminated string (*len excludes the NUL); `what` names the export in a
 * message. Returns render's status, or NCCLTUNE_ERROR out of memory; *text is NULL
 * unless NCCLTUNE_OK. */
int export_capture(int (*render)(const void *ctx, FILE *out, char *err, size_t errlen),
                   const void *ctx, const char *what, char **text, size_t *len, char *err,
                   size_t errlen);

#endif
