/* export_plugin.c - the plan of an env-style export (export_env.c's formats): for a
 * result with per-size rules (best.rules), nccltune's tuner plugin (NCCL_TUNER_PLUGIN,
 * the plugin locate_plugin finds and checks by loading it, or the one an install names)
 * and its table (NCCLTUNE_TUNER_TABLE: the session's exports/ table, which must be this
 * result's nccl-tuner export - rendered here through export_table.c - or the one an
 * install wrote), then what export_plan.c adds for every format. Calls go down:
 * export_env.c -> here -> export_table.c -> export_plan.c. */
#include "workflows/export.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "nccltune.h"
#include "run/locate.h"

/* The nccl-tuner export of the summary ctx, for export_capture. */
static int render_table(const void *ctx, FILE *out, char *err, size_t errlen)
{
	return export_tuner_table(ctx, NULL, out, err, errlen);
}

/* The session's own table, SESSION/exports/nccl-tuner.table (absolute), into p->table;
 * it must exist and be exactly the nccl-tuner export of s. NCCLTUNE_OK or
 * NCCLTUNE_USAGE. */
static int session_table(const struct summary *s, struct export_plan *p, char *err,
                         size_t errlen)
{
	char dir[PATH_MAX], real[PATH_MAX], e[512];
	char *want = NULL, *have = NULL;
	size_t wlen = 0, hlen = 0;
	int rc;

	snprintf(dir, sizeof(dir), "%s", s->dir[0] ? s->dir : s->origin);
	if (!realpath(s->dir[0] ? dir : dirname(dir), real)) {
		fs_errf(err, errlen, "%s: cannot resolve its folder: %s", s->origin, strerror(errno));
		return NCCLTUNE_USAGE;
	}
	if (snprintf(p->table, sizeof(p->table), "%s/exports/" EXPORT_TABLE_FILE, real) >=
	    (int)sizeof(p->table)) {
		fs_errf(err, errlen, "%s: path too long", real);
		return NCCLTUNE_USAGE;
	}
	rc = export_capture(render_table, s, "nccl-tuner", &want, &wlen, err, errlen);
	if (rc != NCCLTUNE_OK)
		return rc;
	have = fs_read_file(p->table, 1u << 20, &hlen, e, sizeof(e));
	if (!have || hlen != wlen || memcmp(have, want, wlen) != 0) {
		char cmd[PATH_MAX + 64];

		fs_errf(err, errlen, "%s: best.rules: the table %s would name, %s, is %s; write it "
		        "with %s (the session does), or install with export --install, which writes "
		        "its own", s->origin, EXPORT_TABLE_VAR, p->table,
		        have ? "not this result's" : "missing",
		        summary_command(cmd, sizeof cmd, "export --format nccl-tuner", NULL));
		rc = NCCLTUNE_USAGE;
	}
	free(want);
	free(have);
	return rc;
}

/* For a result with rules: nccltune's plugin and its table first. NCCL_ALGO or
 * NCCL_PROTO in best.env would make NCCL rule out (IGNORE) every other pair at every
 * size, so the plugin could not apply a rule: refused. */
static int plan_plugin(const struct summary *s, const char *format, const struct export_where *w,
                       bool (*safe)(const char *value, char *why, size_t whylen),
                       struct export_plan *p, char *err, size_t errlen)
{
	static const char *const excluded[] = {"NCCL_ALGO", "NCCL_PROTO"};
	char why[2048];
	int rc;

	for (size_t i = 0; i < sizeof(excluded) / sizeof(excluded[0]); i++)
		if (summary_env_get(&s->best.env, excluded[i])) {
			fs_errf(err, errlen, "%s: best.env.%s: with best.rules nccltune's plugin makes the "
			        "choice, and %s in the environment would rule out every other pair at "
			        "every size; refused", s->origin, excluded[i], excluded[i]);
			return NCCLTUNE_USAGE;
		}
	if (w && w->plugin) {
		if (locate_plugin_check(w->plugin, why, sizeof(why)) != 0) {
			fs_errf(err, errlen, "%s: best.rules: %s", s->origin, why);
			return NCCLTUNE_ERROR;
		}
		snprintf(p->plugin, sizeof(p->plugin), "%s", w->plugin);
	} else if (locate_plugin(p->plugin, sizeof(p->plugin), &p->plugin_from_build, why,
	                         sizeof(why)) != 0) {
		fs_errf(err, errlen, "%s: best.rules needs nccltune's tuner plugin: %s", s->origin, why);
		return NCCLTUNE_ERROR;
	}
	if (w && w->table) {
		if (w->table[0] != '/' || strlen(w->table) >= sizeof(p->table)) {
			fs_errf(err, errlen, "%s: the table path must be absolute", w->table);
			return NCCLTUNE_USAGE;
		}
		snprintf(p->table, sizeof(p->table), "%s", w->table);
	} else if ((rc = session_table(s, p, err, errlen)) != NCCLTUNE_OK) {
		return rc;
	}
	if (export_plan_add_plugin(s, EXPORT_PLUGIN_VAR, p->plugin, format, safe, p, err, errlen) < 0 ||
	    export_plan_add_plugin(s, EXPORT_TABLE_VAR, p->table, format, safe, p, err, errlen) < 0)
		return NCCLTUNE_USAGE;
	return NCCLTUNE_OK;
}

int export_plan_env_make(const struct summary *s, const char *format,
                         const struct export_where *w,
                         bool (*safe)(const char *value, char *why, size_t whylen),
                         struct export_plan *p, char *err, size_t errlen)
{
	int rc = export_plan_begin(s, p, err, errlen);

	if (rc != NCCLTUNE_OK)
		return rc;
	if (export_uses_plugin(s) && (rc = plan_plugin(s, format, w, safe, p, err, errlen)) !=
	    NCCLTUNE_OK)
		return rc;
	return export_plan_finish(s, format, safe, p, err, errlen);
}
