/* exports.c - what a finished session leaves for its user besides results.json: the
 * exports/ folder (one file per export format) and report.html, written through the
 * public workflows API the CLI also uses. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "fsutil.h"
#include "session/session_priv.h"

/* The exports and the report, through the public API the CLI also uses. */
void session_exports_write(nccltune_session *s)
{
	char dir[PATH_MAX + 16], path[PATH_MAX + 64], e[1024];

	snprintf(dir, sizeof dir, "%s/exports", s->run.dir);
	if (fs_mkdirs(dir, e, sizeof e) != 0) {
		session_warn(&s->out, "no exports: %s", e);
		return;
	}
	for (size_t i = 0; nccltune_export_formats[i]; i++) {
		const char *fmt = nccltune_export_formats[i], *file = nccltune_export_filename(fmt);
		char *buf = NULL, fallback[128];
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		int rc;

		if (!file) {
			snprintf(fallback, sizeof fallback, "%s.txt", fmt);
			file = fallback;
		}
		if (!f) {
			session_warn(&s->out, "export %s: out of memory", fmt);
			continue;
		}
		rc = nccltune_export(s->run.dir, fmt, f, e, sizeof e);
		if (fclose(f) != 0 && rc == NCCLTUNE_OK) {
			rc = NCCLTUNE_ERROR;
			snprintf(e, sizeof e, "out of memory");
		}
		fs_errf(path, sizeof path, "%s/%s", dir, file);
		if (rc == NCCLTUNE_OK && fs_write_atomic(path, buf, len, 0644, e, sizeof e) != 0)
			rc = NCCLTUNE_ERROR;
		if (rc != NCCLTUNE_OK)
			session_warn(&s->out, "export %s: %s", fmt, e);
		free(buf);
	}
	if (nccltune_report_write(s->run.dir, e, sizeof e) != NCCLTUNE_OK)
		session_warn(&s->out, "report.html: %s", e);
}
