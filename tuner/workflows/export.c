/* export.c - the export formats and their dispatch, on top of the formats (export_env.c,
 * export_table.c) and the bottom they share (export_plan.c: the comment writer, the
 * header, the plan of what to set). One table of formats, EXPORT_FORMATS, gives the list
 * nccltune_export_formats, the file names, the dispatch and the error text of an unknown
 * name. The text is built in memory and handed over whole, so an error half-way never
 * leaves half an export behind. */
#include "workflows/export.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "nccltune.h"
#include "table.h"

/* ---- the formats ---- */

/* One row per format: ROW(name, file in a session's exports/, renderer). nccl-tuner
 * first: a session writes its exports in this order, and the env-style exports of a
 * result with rules name the table it wrote. A new format is one row here and its
 * renderer declared in export.h. */
#define EXPORT_FORMATS(ROW) \
	ROW("nccl-tuner",     EXPORT_TABLE_FILE,  export_tuner_table) \
	ROW("sitecustomize",  "sitecustomize.py", export_sitecustomize) \
	ROW("shell",          "env.sh",           export_shell) \
	ROW("dotenv",         "nccl.env",         export_dotenv) \
	ROW("nccl-conf",      "nccl.conf",        export_nccl_conf) \
	ROW("json",           "env.json",         export_json) \
	ROW("nccl-tuner-csv", "tuner.csv",        export_tuner_csv)

struct export_format {
	const char *name, *file;
	export_render_fn render;
};

#define FORMAT_ROW(name, file, render) { name, file, render },
#define FORMAT_NAME(name, file, render) name,

static const struct export_format formats[] = { EXPORT_FORMATS(FORMAT_ROW) };
#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

const char *const nccltune_export_formats[] = { EXPORT_FORMATS(FORMAT_NAME) NULL };

/* The row of format, or NULL for an unknown (or NULL) name. */
static const struct export_format *format_find(const char *format)
{
	for (size_t i = 0; format && i < NFORMATS; i++)
		if (strcmp(formats[i].name, format) == 0)
			return &formats[i];
	return NULL;
}

const char *nccltune_export_filename(const char *format)
{
	const struct export_format *f = format_find(format);

	return f ? f->file : NULL;
}

/* "unknown export format 'x' (nccl-tuner, sitecustomize, ...)" into err. */
static void format_unknown(const char *format, char *err, size_t errlen)
{
	char list[512];
	size_t used = 0;

	list[0] = '\0';
	for (size_t i = 0; i < NFORMATS && used < sizeof(list); i++) {
		int k = snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
		                 formats[i].name);

		used += k > 0 ? (size_t)k : 0;
	}
	fs_errf(err, errlen, "unknown export format '%s' (%s)", format, list);
}

/* ---- a best not measured enough ---- */

/* The export of a session whose best was not measured enough to recommend: comments
 * saying so and nothing to set (json: an empty env; nccl-tuner: a table without rules),
 * in the format's own frame, so an install of it sets nothing. */
static int export_unmeasured(const struct summary *s, const char *format, FILE *out,
                             char *err, size_t errlen)
{
	bool marked = strcmp(format, "sitecustomize") == 0 || strcmp(format, "nccl-conf") == 0;
	const char *first = strcmp(format, "nccl-tuner") == 0 ? TUNER_TABLE_HEADER : NULL;
	struct export_writer w;
	char why[256];
	cJSON *doc;
	char *text;

	summary_describe_unmeasured(s, why, sizeof(why));
	if (strcmp(format, "json") == 0) {
		doc = cJSON_CreateObject();
		text = NULL;
		if (doc && cJSON_AddStringToObject(doc, "schema", EXPORT_ENV_SCHEMA) &&
		    cJSON_AddStringToObject(doc, "source", s->model ? "model" : "measured") &&
		    cJSON_AddObjectToObject(doc, "env") && cJSON_AddObjectToObject(doc, "pinned") &&
		    cJSON_AddStringToObject(doc, "verdict", why))
			text = cJSON_Print(doc);
		cJSON_Delete(doc);
		if (!text) {
			fs_errf(err, errlen, "%s: out of memory writing the json export", s->origin);
			return NCCLTUNE_ERROR;
		}
		fprintf(out, "%s\n", text);
		cJSON_free(text);
		return NCCLTUNE_OK;
	}
	w = export_writer_start(s, out, first, marked, err, errlen);
	export_commentf(&w, "Nothing to set: %s.", why);
	export_comment(&w, "The best was not re-measured against NCCL's defaults in two interleaved");
	export_comment(&w, "rounds, so no gain is shown and nothing is recommended.");
	if (marked)
		fprintf(out, "%s\n", EXPORT_MARK_END);
	return w.rc;
}

/* ---- dispatch ---- */

int export_render(const struct summary *s, const char *format, const struct export_where *w,
                  FILE *out, char *err, size_t errlen)
{
	const struct export_format *f = format_find(format);

	if (!f) {
		format_unknown(format ? format : "", err, errlen);
		return NCCLTUNE_USAGE;
	}
	if (summary_unmeasured(s))
		return export_unmeasured(s, f->name, out, err, errlen);
	return f->render(s, w, out, err, errlen);
}

/* What render_one renders: export_render's arguments. */
struct render_args {
	const struct summary *s;
	const char *format;
	const struct export_where *w;
};

static int render_one(const void *ctx, FILE *out, char *err, size_t errlen)
{
	const struct render_args *a = ctx;

	return export_render(a->s, a->format, a->w, out, err, errlen);
}

int export_render_string(const struct summary *s, const char *format,
                         const struct export_where *w, char **text, size_t *len, char *err,
                         size_t errlen)
{
	struct render_args a = {s, format, w};

	return export_capture(render_one, &a, format ? format : "?", text, len, err, errlen);
}

int nccltune_export(const char *path, const char *format, FILE *out, char *err, size_t errlen)
{
	struct summary *s = NULL;
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (summary_load(path, 0, &s, err, errlen) < 0)
		return NCCLTUNE_USAGE;
	rc = export_render_string(s, format, NULL, &text, &len, err, errlen);
	if (rc != NCCLTUNE_OK)
		goto out;
	if (fwrite(text, 1, len, out) != len || fflush(out) != 0) {
		fs_errf(err, errlen, "writing the %s export failed", format);
		rc = NCCLTUNE_ERROR;
	}
out:
	free(text);
	summary_destroy(s);
	return rc;
}
