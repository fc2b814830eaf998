/* export_env.c - the env-style exports of a plan (export.c): a sitecustomize.py block, shell
 * exports, an env file for docker and systemd, NCCL's own configuration file, JSON. Each
 * format quotes values by its own consumer's rules and refuses what that consumer would
 * read differently (docs/formats.md, "Export formats"). */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "fsutil.h"
#include "nccltune.h"
#include "workflows/export.h"

/* The comments that start a group of variables, then each variable by `line`. */
static void plan_lines(const struct export_plan *p, struct export_writer *w,
                       void (*line)(FILE *out, const struct export_var *v), FILE *out)
{
	const char *a, *b;

	for (size_t i = 0; i < p->n; i++) {
		if (export_plan_notes(p, i, &a, &b)) {
			export_comment(w, a);
			if (b)
				export_comment(w, b);
		}
		line(out, &p->v[i]);
	}
}

static void nothing_to_set(struct export_writer *w)
{
	export_comment(w, "NCCL's defaults were the best configuration found: nothing to set.");
}

/* ---- sitecustomize ---- */

/* A Python string literal for any byte string: printable ASCII as is except quote and
 * backslash, everything else as \xNN. */
static void py_literal(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch >= 0x20 && ch < 0x7f)
			fputc(ch, out);
		else
			fprintf(out, "\\x%02x", ch);
	}
	fputc('"', out);
}

/* The pairs of the tuple, each group's notes as comments indented like its items (a
 * comment there is still a comment, and keeps the block one statement). The notes are
 * fixed text. */
static void py_lines(const struct export_plan *p, FILE *out)
{
	const char *a, *b;

	for (size_t i = 0; i < p->n; i++) {
		if (export_plan_notes(p, i, &a, &b)) {
			fprintf(out, "        # %s\n", a);
			if (b)
				fprintf(out, "        # %s\n", b);
		}
		fputs("        (", out);
		py_literal(out, p->v[i].name);
		fputs(", ", out);
		py_literal(out, p->v[i].value);
		fputs("),\n", out);
	}
}

int export_sitecustomize(const struct summary *s, const struct export_where *where, FILE *out,
                         char *err, size_t errlen)
{
	struct export_plan p;
	struct export_writer w;
	int rc = export_plan_env_make(s, "sitecustomize", where, NULL, &p, err, errlen);

	if (rc != NCCLTUNE_OK)
		return rc;
	w = export_writer_start(s, out, NULL, true, err, errlen);
	if (p.n == 0) {
		nothing_to_set(&w);
	} else {
		export_comment(&w, "Sets each variable unless the environment already has it (yours "
		               "wins);");
		export_comment(&w, "with NCCLTUNE_OFF=1 in the environment it sets nothing.");
		fputs("import os as _os\n"
		      "if _os.environ.get(\"NCCLTUNE_OFF\") != \"1\":\n"
		      "    for _k, _v in (\n", out);
		py_lines(&p, out);
		fputs("    ):\n"
		      "        if _k not in _os.environ:\n"
		      "            _os.environ[_k] = _v\n", out);
	}
	fprintf(out, "%s\n", EXPORT_MARK_END);
	return w.rc;
}

/* ---- shell ---- */

/* Single quotes make everything literal to sh; a single quote itself becomes '\''. */
static void sh_quote(FILE *out, const char *s)
{
	fputc('\'', out);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", out);
		else
			fputc(*s, out);
	}
	fputc('\'', out);
}

/* No control character: sh_quote keeps quotes literal, but no quoting survives a
 * newline pasted into an interactive shell, or a control character in a terminal; and
 * an nccl.conf line ends at a newline. */
static bool no_control(const char *v, char *why, size_t whylen)
{
	for (const char *p = v; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			fs_errf(why, whylen, "control character 0x%02x", (unsigned char)*p);
			return false;
		}
	}
	return true;
}

static void sh_line(FILE *out, const struct export_var *v)
{
	fprintf(out, "export %s=", v->name);
	sh_quote(out, v->value);
	fputc('\n', out);
}

int export_shell(const struct summary *s, const struct export_where *where, FILE *out,
                 char *err, size_t errlen)
{
	struct export_plan p;
	struct export_writer w;
	int rc = export_plan_env_make(s, "shell", where, no_control, &p, err, errlen);

	if (rc != NCCLTUNE_OK)
		return rc;
	w = export_writer_start(s, out, NULL, false, err, errlen);
	if (p.n == 0) {
		nothing_to_set(&w);
		return w.rc;
	}
	export_comment(&w, "Source it before starting the program: . ./env.sh (sh, bash, dash, zsh)");
	plan_lines(&p, &w, sh_line, out);
	return w.rc;
}

/* ---- dotenv ---- */

/* docker --env-file takes a value literally to the end of the line; systemd's
 * EnvironmentFile= strips whitespace and interprets quotes and backslashes; env(1) given
 * $(grep -v '^#' FILE) splits words and expands globs. Only a value that means the same
 * to all three can be written, unquoted: no blank, quote, backslash, '$', '#', glob
 * character or control character. */
static bool dotenv_safe(const char *v, char *why, size_t whylen)
{
	for (const char *p = v; *p; p++) {
		if (!(isalnum((unsigned char)*p) || strchr("_.,:;^+=/@%-", *p))) {
			fs_errf(why, whylen, "character 0x%02x would be read differently by docker "
			        "--env-file and systemd EnvironmentFile=", (unsigned char)*p);
			return false;
		}
	}
	return *v != '\0';
}

static void kv_line(FILE *out, const struct export_var *v)
{
	fprintf(out, "%s=%s\n", v->name, v->value);
}

int export_dotenv(const struct summary *s, const struct export_where *where, FILE *out,
                  char *err, size_t errlen)
{
	struct export_plan p;
	struct export_writer w;
	int rc = export_plan_env_make(s, "dotenv", where, dotenv_safe, &p, err, errlen);

	if (rc != NCCLTUNE_OK)
		return rc;
	w = export_writer_start(s, out, NULL, false, err, errlen);
	export_comment(&w, "For docker run --env-file FILE, systemd EnvironmentFile=FILE and");
	export_comment(&w, "env $(grep -v '^#' FILE) PROGRAM; not for a shell's '.' (';' ends a "
	               "command).");
	if (p.n == 0)
		nothing_to_set(&w);
	plan_lines(&p, &w, kv_line, out);
	return w.rc;
}

/* ---- nccl-conf ---- */

/* NCCL's own configuration file (src/misc/param.cc, setEnvFile, at v2.28.9-1): a line
 * whose first byte is '#' is a comment (an indented '#' is not); a line without '=' is
 * skipped; any other splits at its first '=' into a name and a value taken literally to
 * the end of the line (no quotes, no escapes, no trimming: only the final '\n' is
 * removed, so a '\r' stays in the value), each part cut at 1023 bytes. Each pair is set
 * with setenv(..., 0): the process environment wins over the file, and within a file
 * the first line for a variable wins. */
#define NCCL_CONF_PART_MAX 1023

static bool nccl_conf_safe(const char *v, char *why, size_t whylen)
{
	if (strlen(v) > NCCL_CONF_PART_MAX) {
		fs_errf(why, whylen, "longer than the %d bytes NCCL reads from a line",
		        NCCL_CONF_PART_MAX);
		return false;
	}
	return no_control(v, why, whylen);
}

int export_nccl_conf(const struct summary *s, const struct export_where *where, FILE *out,
                     char *err, size_t errlen)
{
	struct export_plan p;
	struct export_writer w;
	char cmd[PATH_MAX + 32];
	int rc = export_plan_env_make(s, "nccl-conf", where, nccl_conf_safe, &p, err, errlen);

	if (rc != NCCLTUNE_OK)
		return rc;
	w = export_writer_start(s, out, NULL, true, err, errlen);
	export_comment(&w, "NCCL reads $NCCL_CONF_FILE (NCCL >= 2.23) or else ~/.nccl.conf, then");
	export_comment(&w, "/etc/nccl.conf. The environment wins over these files, and in a file "
	               "the");
	export_commentf(&w, "first line for a variable wins: %s checks that.",
	                summary_command(cmd, sizeof cmd, "export --install", NULL));
	if (p.n == 0)
		nothing_to_set(&w);
	plan_lines(&p, &w, kv_line, out);
	fprintf(out, "%s\n", EXPORT_MARK_END);
	return w.rc;
}

/* ---- json ---- */

/* "server": {"symmetric": true, "turn_on": [fixed lines], "kernel": words} for a best
 * measured with symmetric memory: a server option in words, never in "env". */
static bool server_json(const struct summary *s, cJSON *doc)
{
	const char *lines[SUMMARY_SYMMETRIC_LINES_MAX];
	size_t n;
	cJSON *o, *a;

	if (!s->best.present || !s->best.symmetric)
		return true;
	n = summary_symmetric_lines(s->server_like, lines, SUMMARY_SYMMETRIC_LINES_MAX);
	if (!(o = cJSON_AddObjectToObject(doc, "server")) ||
	    !cJSON_AddBoolToObject(o, "symmetric", true) ||
	    !(a = cJSON_AddArrayToObject(o, "turn_on")))
		return false;
	for (size_t i = 0; i < n; i++) {
		cJSON *t = cJSON_CreateString(lines[i]);

		if (!t || !cJSON_AddItemToArray(a, t)) {
			cJSON_Delete(t);
			return false;
		}
	}
	return cJSON_AddStringToObject(o, "kernel", summary_kernel_words(s->best.kernel)) != NULL;
}

/* {"schema": "nccltune-env/1", "source": "measured"|"model", "env": {what to set: the
 * plugin's two variables, best.env}, "pinned": {set when the session ran}}, by cJSON. */
int export_json(const struct summary *s, const struct export_where *where, FILE *out,
                char *err, size_t errlen)
{
	struct export_plan p;
	cJSON *doc = NULL, *env, *pinned;
	char *text = NULL;
	int rc = export_plan_env_make(s, "json", where, NULL, &p, err, errlen);

	if (rc != NCCLTUNE_OK)
		return rc;
	rc = NCCLTUNE_ERROR;
	doc = cJSON_CreateObject();
	if (!doc || !cJSON_AddStringToObject(doc, "schema", EXPORT_ENV_SCHEMA) ||
	    !cJSON_AddStringToObject(doc, "source", s->model ? "model" : "measured") ||
	    !(env = cJSON_AddObjectToObject(doc, "env")) ||
	    !(pinned = cJSON_AddObjectToObject(doc, "pinned")) || !server_json(s, doc))
		goto out;
	for (size_t i = 0; i < p.n; i++)
		if (!cJSON_AddStringToObject(p.v[i].kind == EXPORT_PINNED ? pinned : env, p.v[i].name,
		                             p.v[i].value))
			goto out;
	text = cJSON_Print(doc);
	if (!text || fprintf(out, "%s\n", text) < 0)
		goto out;
	rc = NCCLTUNE_OK;
out:
	if (rc != NCCLTUNE_OK)
		fs_errf(err, errlen, "%s: out of memory writing the json export", s->origin);
	cJSON_free(text);
	cJSON_Delete(doc);
	return rc;
}
