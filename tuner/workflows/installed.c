/* installed.c - SESSION/installed.json, the record of what was installed from a session
 * (see installed.h): appended to by install, checked by check. The plugin a record names
 * is checked as a file (plugin_file.h), never loaded: check and retune run as root too,
 * and the record is only as trusted as the folder. */
#include "workflows/installed.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsutil.h"
#include "nccltune.h"
#include "run/locate.h"
#include "table.h"
#include "workflows/export.h"
#include "workflows/plugin_file.h"

#define RECORD_MAX (1u << 20)

/* The record of dir, parsed, or a new empty one; NULL when out of memory or unreadable
 * (a corrupt record is started afresh: it only ever describes installs). */
static cJSON *record_load(const char *path)
{
	char e[256], *text = fs_read_file(path, RECORD_MAX, NULL, e, sizeof e);
	cJSON *doc = text ? cJSON_Parse(text) : NULL;
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(doc, "schema");

	free(text);
	if (!cJSON_IsObject(doc) || !cJSON_IsString(schema) ||
	    strcmp(schema->valuestring, INSTALLED_SCHEMA) != 0 ||
	    !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "installs"))) {
		cJSON_Delete(doc);
		doc = cJSON_CreateObject();
		if (!doc || !cJSON_AddStringToObject(doc, "schema", INSTALLED_SCHEMA) ||
		    !cJSON_AddArrayToObject(doc, "installs")) {
			cJSON_Delete(doc);
			return NULL;
		}
	}
	return doc;
}

static bool add_path(cJSON *o, const char *key, const char *value)
{
	return value ? cJSON_AddStringToObject(o, key, value) != NULL
	             : cJSON_AddNullToObject(o, key) != NULL;
}

void installed_add(const struct summary *s, const char *format, const char *file,
                   const char *plugin, const char *table, const char *target,
                   const char *python, FILE *notes)
{
	char path[PATH_MAX + 32], e[1024] = "out of memory";
	cJSON *doc, *list, *entry = NULL, *it;
	char *text = NULL;
	int i = 0;

	if (!s->dir[0])
		return;
	snprintf(path, sizeof path, "%s/" INSTALLED_FILE, s->dir);
	doc = record_load(path);
	list = cJSON_GetObjectItemCaseSensitive(doc, "installs");
	cJSON_ArrayForEach(it, list) {
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(it, "file");

		if (cJSON_IsString(f) && strcmp(f->valuestring, file) == 0) {
			cJSON_DeleteItemFromArray(list, i);
			break;
		}
		i++;
	}
	entry = cJSON_CreateObject();
	if (!doc || !entry || !cJSON_AddStringToObject(entry, "format", format) ||
	    !cJSON_AddStringToObject(entry, "file", file) || !add_path(entry, "plugin", plugin) ||
	    !add_path(entry, "table", table) || !add_path(entry, "target", target) ||
	    !add_path(entry, "python", python) || !cJSON_AddItemToArray(list, entry))
		goto fail;
	entry = NULL;
	text = cJSON_Print(doc);
	if (!text || fs_write_atomic(path, text, strlen(text), 0644, e, sizeof e) != 0)
		goto fail;
	goto out;
fail:
	if (notes) {
		char cmd[PATH_MAX + 16];

		fprintf(notes, "warning: the install is not recorded in %s (%s): %s will not see "
		        "it\n", path, e, summary_command(cmd, sizeof cmd, "check", NULL));
	}
out:
	cJSON_Delete(entry);
	cJSON_free(text);
	cJSON_Delete(doc);
}

/* Does `file` still hold an install of `format`: the .pth file, or a block? */
static bool still_installed(const char *format, const char *file)
{
	char e[256], *text;
	bool found = false;
	struct stat st;

	if (stat(file, &st) != 0)
		return false;
	if (strcmp(format, "pth") == 0)
		return true;
	text = fs_read_file(file, 4u << 20, NULL, e, sizeof e);
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		found |= n == strlen(EXPORT_MARK_BEGIN) && memcmp(p, EXPORT_MARK_BEGIN, n) == 0;
		p = nl ? nl + 1 : p + n;
	}
	free(text);
	return found;
}

/* The command that installs `entry` again as it was installed: "CMD export --format F
 * --install[=PATH] [--python PY] SESSION", each word quoted for a shell. Into buf. */
static char *reinstall_command(const cJSON *entry, const char *session_dir, char *buf,
                               size_t len)
{
	const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(entry, "format");
	const cJSON *target = cJSON_GetObjectItemCaseSensitive(entry, "target");
	const cJSON *python = cJSON_GetObjectItemCaseSensitive(entry, "python");
	char self[PATH_MAX + 8], opt[PATH_MAX + 16];
	size_t used;

	snprintf(buf, len, "%s export --format", locate_self_command(self, sizeof self));
	used = strlen(buf);
	if (locate_quote_word(buf, len, &used, fmt->valuestring) != 0)
		return buf;
	snprintf(opt, sizeof opt, "--install%s%s", cJSON_IsString(target) ? "=" : "",
	         cJSON_IsString(target) ? target->valuestring : "");
	if (locate_quote_word(buf, len, &used, opt) != 0)
		return buf;
	if (cJSON_IsString(python) && (locate_quote_word(buf, len, &used, "--python") != 0 ||
	                               locate_quote_word(buf, len, &used, python->valuestring) != 0))
		return buf;
	(void)locate_quote_word(buf, len, &used, session_dir);
	return buf;
}

int installed_verify(const char *session_dir, char *err, size_t errlen)
{
	char path[PATH_MAX + 32], why[2048], cmd[3 * PATH_MAX];
	struct stat st;
	cJSON *doc, *it;
	size_t off = 0;
	int rc = NCCLTUNE_OK;

	snprintf(path, sizeof path, "%s/" INSTALLED_FILE, session_dir);
	if (stat(path, &st) != 0)
		return NCCLTUNE_OK;
	doc = record_load(path);
	if (errlen)
		err[0] = '\0';
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "installs")) {
		const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(it, "format");
		const cJSON *file = cJSON_GetObjectItemCaseSensitive(it, "file");
		const cJSON *plugin = cJSON_GetObjectItemCaseSensitive(it, "plugin");
		const cJSON *table = cJSON_GetObjectItemCaseSensitive(it, "table");
		struct tuner_table t;
		bool broken = false;

		if (!cJSON_IsString(fmt) || !cJSON_IsString(file) ||
		    !still_installed(fmt->valuestring, file->valuestring))
			continue;
		if (cJSON_IsString(plugin) &&
		    plugin_file_check(plugin->valuestring, why, sizeof why) != 0)
			broken = true;
		else if (cJSON_IsString(table) &&
		         tuner_table_load(table->valuestring, &t, why, sizeof why) != 0)
			broken = true;
		else if (cJSON_IsString(table))
			tuner_table_free(&t);
		if (!broken)
			continue;
		/* every broken install, each with its own command */
		if (off < errlen)
			off += (size_t)snprintf(err + off, errlen - off, "%sthe environment installed "
			                        "into %s no longer works: %s; NCCL would run without "
			                        "the tuned rules: install it again with: %s",
			                        rc == NCCLTUNE_OK ? "" : "\n", file->valuestring, why,
			                        reinstall_command(it, session_dir, cmd, sizeof cmd));
		rc = NCCLTUNE_ERROR;
	}
	cJSON_Delete(doc);
	return rc;
}
