/* export.h - the tuned environment of a loaded result in each export format: one
 * function per format, plus the marker lines that delimit nccltune's block inside a
 * sitecustomize.py or an nccl.conf (shared with install.c). Used by nccltune_export (export.c). */
#ifndef NCCLTUNE_EXPORT_H
#define NCCLTUNE_EXPORT_H

#include <stddef.h>
#include <stdio.h>
#include "result/summary.h"

#define EXPORT_MARK_BEGIN "# >>> nccltune >>>"
#define EXPORT_MARK_END "# <<< nccltune <<<"

#define EXPORT_ENV_SCHEMA "nccltune-env/1"   /* exports/env.json */
#define EXPORT_VARS_MAX 512                   /* variables one export sets, pinned included */

/* Each writes the whole export to `out` and returns an nccltune_status:
 * NCCLTUNE_OK; NCCLTUNE_NO_CONFIG when the result has no working configuration;
 * NCCLTUNE_USAGE when a variable may not be exported (only role `tune` from best.env,
 * role tune or setting from pinned) or a value cannot be written safely in the format
 * (message names the origin file, the key and the reason); NCCLTUNE_ERROR when writing
 * fails. On an error `out` may hold part of the text: use export_render_string.
 * Values were checked by the loader; every format escapes them again by construction,
 * so a value that slipped through still cannot become code. */
int export_sitecustomize(const struct summary *s, FILE *out, char *err, size_t errlen);
int export_shell(const struct summary *s, FILE *out, char *err, size_t errlen);
int export_dotenv(const struct summary *s, FILE *out, char *err, size_t errlen);
int export_nccl_conf(const struct summary *s, FILE *out, char *err, size_t errlen);
int export_json(const struct summary *s, FILE *out, char *err, size_t errlen);
int export_tuner_csv(const struct summary *s, FILE *out, char *err, size_t errlen);

/* Dispatch on a name of nccltune_export_formats; NCCLTUNE_USAGE for an unknown one. */
int export_render(const struct summary *s, const char *format, FILE *out, char *err,
                  size_t errlen);

/* Render into a malloc'd NUL-terminated string (*len excludes the NUL), so that nothing
 * partial is ever written. Returns a status as above; *text is NULL unless NCCLTUNE_OK. */
int export_render_string(const struct summary *s, const char *format, char **text, size_t *len,
                         char *err, size_t errlen);

#endif
