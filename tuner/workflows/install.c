/* install.c - install and uninstall the tuned environment: the pth format (pth.c), or
 * nccltune's block (the sitecustomize or the nccl-conf export) merged into a
 * sitecustomize.py or an NCCL configuration file between marker lines, keeping the rest
 * of the file byte for byte (Ubuntu ships a sitecustomize.py with the apport hook; an
 * nccl.conf often holds NCCL_SOCKET_IFNAME), replacing an earlier nccltune block,
 * keeping a backup, atomically, with the file's mode, owner and group.
 *
 * Markers count only as whole top-level comment lines: in Python the interpreter's own
 * tokenizer says which lines are comments (a marker inside a string literal is text),
 * an indented block is refused rather than skipped, and the merged file must pass the
 * interpreter's parser before it replaces the old one. A file with other hard links is
 * refused: an atomic replace would leave the other names with the old text.
 *
 * Without a target: for sitecustomize, the interpreter is asked which sitecustomize it
 * imports (Python imports only the first `sitecustomize` on sys.path, so writing a second
 * one into site-packages next to the distribution's would silently do nothing), and one
 * that is not a virtual environment's own is system-wide: changed only with `system`;
 * for nccl-conf, the file NCCL reads for this user: $NCCL_CONF_FILE, else ~/.nccl.conf.
 * NCCL keeps the first line it reads for a variable, so a line of the file outside the
 * block that sets one of the block's variables before it is refused rather than silently
 * winning. */
#include "workflows/install.h"

#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "run/locate.h"
#include "workflows/export.h"
#include "workflows/python.h"

/* ---- finding nccltune's block ----
 *
 * A marker is a whole line that is exactly a marker, trailing blanks aside. In an NCCL
 * configuration file only a '#' in the first column starts a comment, so a marker must
 * start there. In Python a marker must be a comment token of the interpreter's own
 * tokenizer (python_markers): a marker line inside a string literal is text, not a
 * marker, so it can never make nccltune replace (swallow) the user's code. Either way a
 * marker that is indented (inside a Python block, say) is refused, never silently
 * skipped: a second block appended after it would leave two. */

/* Is the line [line, line+n) a marker after *indent blanks (trailing blanks aside)? */
static bool marker_line(const char *line, size_t n, const char *marker, size_t *indent)
{
	size_t m = strlen(marker), i = 0;

	while (i < n && (line[i] == ' ' || line[i] == '\t'))
		i++;
	while (n > i && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
		n--;
	*indent = i;
	return n - i == m && memcmp(line + i, marker, m) == 0;
}

/* The markers of an NCCL configuration file, by lines. */
static int text_markers(const char *target, const char *old, size_t len,
                        struct python_marker *m, size_t *n, char *err, size_t errlen)
{
	size_t pos = 0, line = 0;

	*n = 0;
	while (pos < len) {
		const char *nl = memchr(old + pos, '\n', len - pos);
		size_t k = nl ? (size_t)(nl - (old + pos)) : len - pos, indent;
		bool b;

		line++;
		if ((b = marker_line(old + pos, k, EXPORT_MARK_BEGIN, &indent)) ||
		    marker_line(old + pos, k, EXPORT_MARK_END, &indent)) {
			if (*n == PYTHON_MARKERS_MAX)
				return fs_errf(err, errlen, "%s: more than %d nccltune marker lines; fix the "
				               "file by hand", target, PYTHON_MARKERS_MAX);
			m[*n].line = line;
			m[*n].col = indent;
			m[(*n)++].begin = b;
		}
		pos = nl ? pos + k + 1 : len;
	}
	return 0;
}

/* Byte offset of the start of line `line` (1-based) in old; len when past the end. */
static size_t line_start(const char *old, size_t len, size_t line)
{
	size_t pos = 0;

	for (size_t l = 1; l < line && pos < len; l++) {
		const char *nl = memchr(old + pos, '\n', len - pos);

		pos = nl ? (size_t)(nl - old) + 1 : len;
	}
	return pos;
}

/* nccltune's block among the markers: [*begin, *end) spans its lines, newline included.
 * Returns 1 when found, 0 when there is none, -1 (message) for an indented marker, a
 * broken marker pair or a second block - each means someone edited the file, and
 * guessing could eat their code. */
static int find_block(const char *target, const char *old, size_t len,
                      const struct python_marker *m, size_t n, size_t *begin, size_t *end,
                      char *err, size_t errlen)
{
	size_t open_line = 0, found = 0, first_line = 0;
	bool inside = false;

	for (size_t i = 0; i < n; i++) {
		if (m[i].col > 0)
			return fs_errf(err, errlen, "%s:%zu: an nccltune marker indented by %zu "
			               "column(s), not at the top level (inside other code?): nccltune "
			               "changes only a block whose marker lines start in the first column; "
			               "move the block there or remove it, then run again", target,
			               m[i].line, m[i].col);
		if (m[i].begin) {
			if (inside)
				return fs_errf(err, errlen, "%s:%zu: nccltune start marker inside the block "
				               "opened at line %zu, which has no end marker; fix the file by "
				               "hand", target, m[i].line, open_line);
			if (found)
				return fs_errf(err, errlen, "%s:%zu: a second nccltune block (the first is at "
				               "line %zu); keep one and run again", target, m[i].line,
				               first_line);
			inside = true;
			open_line = m[i].line;
			*begin = line_start(old, len, m[i].line);
		} else {
			if (!inside)
				return fs_errf(err, errlen, "%s:%zu: nccltune end marker without a start "
				               "marker; fix the file by hand", target, m[i].line);
			inside = false;
			found++;
			first_line = open_line;
			*end = line_start(old, len, m[i].line + 1);
		}
	}
	if (inside)
		return fs_errf(err, errlen, "%s:%zu: nccltune start marker without an end marker "
		               "(\"%s\"); fix the file by hand", target, open_line, EXPORT_MARK_END);
	return found ? 1 : 0;
}

/* old with [begin, end) replaced by the block (blen 0: removed, with the blank line
 * that an append put before it), or the block appended after a blank line when !replace.
 * Returns a malloc'd buffer or NULL (out of memory). */
static char *merge(const char *old, size_t olen, size_t begin, size_t end, bool replace,
                   const char *block, size_t blen, size_t *nlen)
{
	size_t cap = olen + blen + 3, n = 0;
	char *buf = malloc(cap);

	if (!buf)
		return NULL;
	if (replace) {
		if (blen == 0 && begin >= 2 && old[begin - 1] == '\n' && old[begin - 2] == '\n')
			begin--;
		memcpy(buf, old, begin);
		n = begin;
		memcpy(buf + n, block, blen);
		n += blen;
		memcpy(buf + n, old + end, olen - end);
		n += olen - end;
	} else {
		memcpy(buf, old, olen);
		n = olen;
		if (n > 0 && buf[n - 1] != '\n')
			buf[n++] = '\n';
		if (n > 0 && !(n >= 2 && buf[n - 2] == '\n'))
			buf[n++] = '\n';
		memcpy(buf + n, block, blen);
		n += blen;
	}
	*nlen = n;
	return buf;
}

/* ---- nccl-conf ---- */

/* The configuration file NCCL reads for this user: $NCCL_CONF_FILE when set (NCCL >=
 * 2.23), else ~/.nccl.conf with the home folder as NCCL finds it: the password
 * database's (getpwuid), never $HOME, so the file written is the one NCCL reads. */
static int find_nccl_conf(char *buf, size_t len, char *err, size_t errlen)
{
	const char *f = getenv("NCCL_CONF_FILE"), *home;
	struct passwd *pw;

	if (f && *f) {
		if (strlen(f) >= len) {
			fs_errf(err, errlen, "NCCL_CONF_FILE: path too long");
			return NCCLTUNE_USAGE;
		}
		snprintf(buf, len, "%s", f);
		return NCCLTUNE_OK;
	}
	pw = getpwuid(getuid());
	home = pw ? pw->pw_dir : NULL;
	if (!home || !*home) {
		fs_errf(err, errlen, "no home folder to put .nccl.conf in (the password database "
		        "has none for uid %u, and NCCL looks nowhere else): give the file, e.g. "
		        "--install=/etc/nccl.conf", (unsigned)getuid());
		return NCCLTUNE_USAGE;
	}
	if (strlen(home) + sizeof("/.nccl.conf") > len) {
		fs_errf(err, errlen, "%s/.nccl.conf: path too long", home);
		return NCCLTUNE_USAGE;
	}
	snprintf(buf, len, "%s/.nccl.conf", home);
	return NCCLTUNE_OK;
}

/* Does the NAME=... assignment line [line, line+n) of an NCCL configuration file set a
 * variable that one of the block's own assignment lines sets? */
static bool block_sets(const char *block, size_t blen, const char *line, size_t n)
{
	const char *eq = memchr(line, '=', n);
	size_t pos = 0, k = eq ? (size_t)(eq - line) : 0;

	if (!eq || line[0] == '#')
		return false;
	while (pos < blen) {
		const char *nl = memchr(block + pos, '\n', blen - pos);
		size_t m = nl ? (size_t)(nl - (block + pos)) : blen - pos;

		if (block[pos] != '#' && m > k && block[pos + k] == '=' &&
		    memcmp(block + pos, line, k) == 0)
			return true;
		pos = nl ? pos + m + 1 : blen;
	}
	return false;
}

/* An NCCL configuration file keeps the first line for a variable: refuse one outside
 * nccltune's block that sets a variable of the block (tuned, pinned or the plugin's) and
 * comes before it (before its place at the end when there is none). 0, or
 * NCCLTUNE_USAGE with a message. */
static int conf_conflicts(const char *target, const char *old, size_t len, size_t block_at,
                          const char *block, size_t blen, char *err, size_t errlen)
{
	size_t pos = 0, line = 0;

	while (pos < len && pos < block_at) {
		const char *nl = memchr(old + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (old + pos)) : len - pos;

		line++;
		if (block_sets(block, blen, old + pos, n)) {
			const char *eq = memchr(old + pos, '=', n);

			fs_errf(err, errlen, "%s:%zu: sets %.*s outside nccltune's block, and NCCL "
			        "keeps the first line for a variable, so the tuned value would not "
			        "apply; remove or comment out that line and run again", target, line,
			        (int)(eq - (old + pos)), old + pos);
			return NCCLTUNE_USAGE;
		}
		pos = nl ? pos + n + 1 : len;
	}
	return 0;
}

/* ---- the sitecustomize target ---- */

/* Is `path` under folder `dir` (both absolute, symlinks resolved where they exist)? */
static bool under(const char *path, const char *dir)
{
	char d[PATH_MAX], p[PATH_MAX];
	size_t n;

	if (!realpath(dir, d))
		snprintf(d, sizeof(d), "%s", dir);
	if (!realpath(path, p))
		snprintf(p, sizeof(p), "%s", path);
	n = strlen(d);
	return strncmp(p, d, n) == 0 && (p[n] == '/' || (n > 0 && d[n - 1] == '/'));
}

/* A file of the distribution (a package's file, a dpkg conffile): /etc or /usr, but not
 * /usr/local. */
static bool distribution_file(const char *real)
{
	return (strncmp(real, "/etc/", 5) == 0 || strncmp(real, "/usr/", 5) == 0) &&
	       strncmp(real, "/usr/local/", 11) != 0;
}

/* The sitecustomize.py to change into buf: o->target, or the one o->python imports. A
 * system-wide one - not inside the interpreter's own virtual environment, or a file of
 * the distribution - only with o->system; says on o->notes what it affects. */
static int sitecustomize_target(const struct nccltune_install_options *o, const char *python,
                                char *buf, size_t len, char *err, size_t errlen)
{
	struct python_info pi;
	char real[PATH_MAX];
	bool system;
	int rc;

	if (o->target) {
		snprintf(buf, len, "%s", o->target);
		if (!realpath(o->target, real))
			snprintf(real, sizeof(real), "%s", o->target);
		system = distribution_file(real);
		if (!system) {
			install_note(o, "affects every interpreter that imports %s", buf);
			return NCCLTUNE_OK;
		}
	} else {
		rc = python_info(python, &pi, err, errlen);
		if (rc != NCCLTUNE_OK)
			return rc;
		if (!pi.sitecustomize[0]) {
			fs_errf(err, errlen, "%s has no site-packages folder on sys.path; give the "
			        "sitecustomize.py path explicitly", python);
			return NCCLTUNE_ERROR;
		}
		snprintf(buf, len, "%s", pi.sitecustomize);
		if (!realpath(buf, real))
			snprintf(real, sizeof(real), "%s", buf);
		system = !(pi.venv && under(real, pi.prefix)) || distribution_file(real);
		if (!system) {
			install_note(o, "affects only the virtual environment %s (its interpreter %s)",
			             pi.prefix, pi.executable);
			return NCCLTUNE_OK;
		}
	}
	if (!o->system) {
		fs_errf(err, errlen, "%s is a system-wide sitecustomize (%s): it runs in every "
		        "program of its interpreter and of every virtual environment made from it, "
		        "and a distribution's copy belongs to its package; nccltune changes it only "
		        "with --system. For one interpreter use the default format, pth (a .pth file "
		        "in that interpreter's own site-packages)", buf,
		        distribution_file(real) ? "a file of the distribution"
		                                : "not inside the interpreter's virtual environment");
		return NCCLTUNE_USAGE;
	}
	install_note(o, "warning: %s is system-wide: this affects every program of its "
	             "interpreter and every virtual environment made from it that has no "
	             "sitecustomize of its own", buf);
	return NCCLTUNE_OK;
}

/* ---- blocks ---- */

/* The target of a block install or uninstall into buf, as `conf` and `o` say. */
static int block_target(const struct nccltune_install_options *o, bool conf,
                        const char *python, char *buf, size_t len, char *err, size_t errlen)
{
	int rc;

	if (!conf)
		return sitecustomize_target(o, python, buf, len, err, errlen);
	if (o->target) {
		snprintf(buf, len, "%s", o->target);
		rc = NCCLTUNE_OK;
	} else {
		rc = find_nccl_conf(buf, len, err, errlen);
	}
	if (rc == NCCLTUNE_OK)
		install_note(o, "affects every NCCL program that reads %s (NCCL reads "
		             "$NCCL_CONF_FILE, else ~/.nccl.conf, then /etc/nccl.conf)", buf);
	return rc;
}

/* Put the `format` export of s into the target (s NULL: take nccltune's block out, and
 * the table next to it). A result with rules gets its table written next to the file,
 * FILE.nccltune-tuner.table, which the block names. `written` gets the file changed (""
 * when an uninstall found nothing). */
static int block_change(const struct nccltune_install_options *o, bool conf,
                        const struct summary *s, const char *format, char *written,
                        size_t written_len, char *err, size_t errlen)
{
	const char *python = o->python ? o->python : "python3";
	struct nccltune_install_options quiet = *o;
	struct python_marker marks[PYTHON_MARKERS_MAX];
	struct export_where where = {NULL, NULL};
	struct target t;
	char *merged = NULL, *block = NULL, path[PATH_MAX], table[PATH_MAX + 32];
	char plugin[PATH_MAX + 32];
	size_t mlen = 0, blen = 0, begin = 0, end = 0, nmarks = 0;
	int rc, found;

	memset(&t, 0, sizeof(t));
	quiet.notes = NULL;   /* what an install affects is no news to an uninstall */
	rc = block_target(s ? o : &quiet, conf, python, path, sizeof(path), err, errlen);
	if (rc != NCCLTUNE_OK)
		return rc;
	rc = target_read(path, conf ? "configuration file" : "Python source file", &t, err, errlen);
	if (rc != NCCLTUNE_OK)
		goto out;
	snprintf(table, sizeof(table), "%s" INSTALL_TABLE_SUFFIX, t.real);
	snprintf(plugin, sizeof(plugin), "%s" INSTALL_PLUGIN_SUFFIX, t.real);
	if (s && export_uses_plugin(s)) {
		where.table = table;
		where.plugin = plugin;
		/* the block names its own copy of the plugin, written first: the render
		 * checks that what it names loads */
		rc = install_plugin(s, plugin, o, err, errlen);
	}
	if (s && rc == NCCLTUNE_OK)
		rc = export_render_string(s, format, &where, &block, &blen, err, errlen);
	if (rc == NCCLTUNE_OK && t.existed)
		rc = conf ? (text_markers(t.real, t.old, t.olen, marks, &nmarks, err, errlen) < 0
		             ? NCCLTUNE_USAGE : NCCLTUNE_OK)
		          : python_markers(python, t.real, marks, &nmarks, err, errlen);
	if (rc != NCCLTUNE_OK)
		goto out;
	rc = NCCLTUNE_USAGE;
	found = find_block(t.real, t.old ? t.old : "", t.olen, marks, nmarks, &begin, &end, err,
	                   errlen);
	if (found < 0 || (conf && s && conf_conflicts(t.real, t.old ? t.old : "", t.olen,
	                                              found ? begin : t.olen, block, blen, err,
	                                              errlen) != 0))
		goto out;
	rc = NCCLTUNE_OK;
	if (!s && found == 0) {
		install_note(o, "nothing to uninstall: %s has no nccltune block", t.real);
		goto out;
	}
	rc = NCCLTUNE_ERROR;
	merged = merge(t.old ? t.old : "", t.olen, begin, end, found == 1, block ? block : "",
	               blen, &mlen);
	if (!merged) {
		fs_errf(err, errlen, "out of memory");
		goto out;
	}
	/* the file as it will be must still be Python, by the interpreter's own parser */
	if (!conf && (rc = python_parses(python, merged, mlen, t.real, err, errlen)) != NCCLTUNE_OK)
		goto out;
	if (s && (rc = install_table(s, table, o, err, errlen)) != NCCLTUNE_OK)
		goto out;
	if (!s && ((rc = install_remove(table, err, errlen)) != NCCLTUNE_OK ||
	           (rc = install_remove(plugin, err, errlen)) != NCCLTUNE_OK))
		goto out;
	if (t.existed && mlen == t.olen && memcmp(merged, t.old, t.olen) == 0)
		goto done;   /* nothing changes: keep the backup of the last real change */
	if (!s && mlen == 0) {
		/* nothing but nccltune's block was in it (a file the install created): removed,
		 * not left empty; its text is kept as the backup */
		rc = target_write(&t, merged, mlen, err, errlen);
		if (rc == NCCLTUNE_OK)
			rc = install_remove(t.real, err, errlen);
		if (rc == NCCLTUNE_OK)
			install_note(o, "removed %s: it held nothing but nccltune's block", t.real);
		goto out;
	}
	rc = target_write(&t, merged, mlen, err, errlen);
	if (rc != NCCLTUNE_OK)
		goto out;
	if (t.existed)
		install_note(o, s ? "the file as it was before: %s" INSTALL_BACKUP
		                  : "the file as it was before this uninstall (with nccltune's "
		                    "block): %s" INSTALL_BACKUP, t.real);
done:
	rc = NCCLTUNE_OK;
	if (s)
		install_record(s, format, t.real, export_uses_plugin(s) ? plugin : NULL,
		               export_uses_plugin(s) ? table : NULL, o);
	if (written && written_len)
		snprintf(written, written_len, "%s", t.real);
out:
	free(merged);
	free(block);
	target_free(&t);
	return rc;
}

/* ---- the public entry points ---- */

/* "pth" (NULL), "sitecustomize" or "nccl-conf" in *format; NCCLTUNE_USAGE otherwise. */
static int check_format(const struct nccltune_install_options *o, const char **format,
                        char *err, size_t errlen)
{
	*format = o->format ? o->format : "pth";
	if (strcmp(*format, "pth") != 0 && strcmp(*format, "sitecustomize") != 0 &&
	    strcmp(*format, "nccl-conf") != 0) {
		fs_errf(err, errlen, "format %s cannot be installed (pth, sitecustomize, nccl-conf)",
		        *format);
		return NCCLTUNE_USAGE;
	}
	if (strcmp(*format, "nccl-conf") == 0 && o->python) {
		fs_errf(err, errlen, "a Python interpreter only matters to a pth or sitecustomize "
		        "install");
		return NCCLTUNE_USAGE;
	}
	return NCCLTUNE_OK;
}

/* Does the result's best set something (variables, per-size rules) it is not shown to
 * need? A result not measured enough sets nothing (its exports hold comments only). */
static bool install_unproven(const struct summary *s)
{
	return s->best.present && (s->best.env.n > 0 || s->nrules > 0) &&
	       !summary_unmeasured(s) && !summary_shown_faster(s);
}

/* "gain 1.03x, 95% interval 0.97x .. 1.09x, which includes 1.00x" (or why there is no
 * interval) into buf. Returns buf. */
static char *install_gain_text(const struct summary *s, char *buf, size_t len)
{
	if (!s->baseline.present)
		snprintf(buf, len, "NCCL's defaults did not run, so no gain was measured");
	else if (!s->has_gain || !isfinite(s->gain_lo))
		snprintf(buf, len, "no gain interval in the result");
	else
		snprintf(buf, len, "gain %.2fx, 95%% interval %.2fx .. %.2fx, which reaches 1.00x",
		         s->gain, s->gain_lo, s->gain_hi);
	return buf;
}

/* The NCCL floor of per-size rules (tuner ABI v4, NCCL 2.24): a result with rules is
 * refused for an interpreter whose path holds an older NCCL (python_info reads it
 * without importing anything) unless o->allow_old_nccl; when the NCCL cannot be told
 * (none found, several, an nccl-conf install, a sitecustomize target given without
 * --python) a warning says so on o->notes. 0, or NCCLTUNE_USAGE / NCCLTUNE_ERROR with a
 * message. */
static int install_nccl_floor(const struct summary *s, const struct nccltune_install_options *o,
                              const char *format, char *err, size_t errlen)
{
	const char *python = o->python ? o->python : "python3";
	struct python_info pi;
	int rc;

	if (!export_uses_plugin(s))
		return NCCLTUNE_OK;
	if (strcmp(format, "nccl-conf") == 0 || (o->target && !o->python &&
	                                         strcmp(format, "sitecustomize") == 0)) {
		install_note(o, "warning: per-size rules need NCCL %d.%d or newer in the server "
		             "(tuner ABI v4); this %s install cannot tell which NCCL the server loads: "
		             "check it with nccltune verify", INSTALL_NCCL_FLOOR_MAJOR,
		             INSTALL_NCCL_FLOOR_MINOR, format);
		return NCCLTUNE_OK;
	}
	rc = python_info(python, &pi, err, errlen);
	if (rc != NCCLTUNE_OK)
		return rc;
	if (pi.nccl_major < 0) {
		install_note(o, "warning: per-size rules need NCCL %d.%d or newer in the server "
		             "(tuner ABI v4), and nccltune cannot tell which NCCL %s loads (%s%s): check "
		             "it with nccltune verify --python %s", INSTALL_NCCL_FLOOR_MAJOR,
		             INSTALL_NCCL_FLOOR_MINOR, python,
		             pi.nccl_from[0] ? "several or unreadable versions at " :
		             "no nvidia-nccl-cu* distribution on its path", pi.nccl_from, python);
		return NCCLTUNE_OK;
	}
	if (pi.nccl_major > INSTALL_NCCL_FLOOR_MAJOR || (pi.nccl_major == INSTALL_NCCL_FLOOR_MAJOR &&
	                                                 pi.nccl_minor >= INSTALL_NCCL_FLOOR_MINOR)) {
		install_note(o, "NCCL %s for %s (%s): new enough for per-size rules", pi.nccl, python,
		             pi.nccl_from);
		return NCCLTUNE_OK;
	}
	if (o->allow_old_nccl) {
		install_note(o, "warning: NCCL %s for %s (%s) is older than %d.%d: installed anyway "
		             "(--allow-old-nccl), but that NCCL ignores per-size rules",
		             pi.nccl, python, pi.nccl_from, INSTALL_NCCL_FLOOR_MAJOR,
		             INSTALL_NCCL_FLOOR_MINOR);
		return NCCLTUNE_OK;
	}
	fs_errf(err, errlen, "%s: NCCL %s (%s) is older than %d.%d: it has no tuner ABI v4, so "
	        "it would ignore this result's per-size rules and run the tuned variables with its "
	        "own algorithm and CTAs, a combination never measured; nothing installed. Upgrade "
	        "it (pip install -U the nvidia-nccl-cu* distribution) or, when the server loads "
	        "another NCCL (LD_LIBRARY_PATH, a framework's NCCL path), --allow-old-nccl installs "
	        "it anyway (then check with nccltune verify)", python, pi.nccl, pi.nccl_from,
	        INSTALL_NCCL_FLOOR_MAJOR, INSTALL_NCCL_FLOOR_MINOR);
	return NCCLTUNE_USAGE;
}

int nccltune_install(const char *path, const struct nccltune_install_options *o,
                     char *written, size_t written_len, char *err, size_t errlen)
{
	struct summary *s = NULL;
	const char *format;
	int rc;

	if (written && written_len)
		written[0] = '\0';
	rc = check_format(o, &format, err, errlen);
	if (rc != NCCLTUNE_OK)
		return rc;
	if (summary_load(path, 0, &s, err, errlen) < 0)
		return NCCLTUNE_USAGE;
	if (s->model && !o->allow_model) {
		char cmd[PATH_MAX + 16];

		fs_errf(err, errlen, "%s: a result of the machine model %s, not a measurement: its "
		        "numbers say nothing about this machine, so it is not installed (--allow-model "
		        "installs it anyway, e.g. for a test); tune the real machine with %s (no "
		        "--model) and install that session", s->origin, s->model,
		        summary_command(cmd, sizeof cmd, "run", NULL));
		rc = NCCLTUNE_USAGE;
	} else if (!s->best.present) {
		fs_errf(err, errlen, "%s: no configuration worked in this session (best is null): "
		        "nothing to install", s->origin);
		rc = NCCLTUNE_NO_CONFIG;
	} else if (install_unproven(s) && !o->allow_unproven) {
		char gain[128], cmd[PATH_MAX + 16];

		fs_errf(err, errlen, "%s: not shown to be faster than NCCL's defaults (%s): the "
		        "server may run no faster, or slower, with it, so it is not installed; a "
		        "longer session (%s with a larger --budget) measures it more, and "
		        "--allow-unproven installs it anyway", s->origin,
		        install_gain_text(s, gain, sizeof gain),
		        summary_command(cmd, sizeof cmd, "run", NULL));
		rc = NCCLTUNE_USAGE;
	} else if ((rc = install_nccl_floor(s, o, format, err, errlen)) != NCCLTUNE_OK) {
		/* refused: the message says why */
	} else if (strcmp(format, "pth") == 0) {
		rc = pth_install(s, o, written, written_len, err, errlen);
	} else {
		rc = block_change(o, strcmp(format, "nccl-conf") == 0, s, format, written,
		                  written_len, err, errlen);
	}
	summary_destroy(s);
	return rc;
}

int nccltune_uninstall(const struct nccltune_install_options *o, char *written,
                       size_t written_len, char *err, size_t errlen)
{
	const char *format;
	int rc;

	if (written && written_len)
		written[0] = '\0';
	rc = check_format(o, &format, err, errlen);
	if (rc != NCCLTUNE_OK)
		return rc;
	if (strcmp(format, "pth") == 0)
		return pth_uninstall(o, written, written_len, err, errlen);
	return block_change(o, strcmp(format, "nccl-conf") == 0, NULL, format, written,
	                    written_len, err, errlen);
}
