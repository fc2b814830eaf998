/* command.c - the commands nccltune prints for a user to copy (show, report, the
 * session's summary, the exports' headers, load's hints): nccltune named as it can be
 * run (locate_self_command: a path when nccltune is not in PATH), a folder quoted for a
 * POSIX shell when it needs it, and the install command carrying the --python the
 * result needs (the interpreter whose PyTorch wheel NCCL the session tuned). Nothing
 * here reads a file; the interpreter is only checked to exist. */
#include "result/summary.h"
#include "run/locate.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"

/* Where a PyTorch wheel's NCCL lies under its site-packages (what --python looks for). */
#define WHEEL_NCCL "/site-packages/nvidia/nccl/lib/libnccl.so.2"

/* Append one word to buf at *used (a space first unless *used is 0): as is when every
 * byte is plain, single-quoted when it holds a shell's special characters, escaped
 * (fs_escape_text: then not runnable, but harmless on a terminal) when it holds a
 * control byte. Truncates at len. */
static void add_word(char *buf, size_t len, size_t *used, const char *word)
{
	char esc[4 * PATH_MAX];
	bool plain = *word != '\0', control = false;
	int k;

	for (const char *c = word; *c; c++) {
		unsigned char ch = (unsigned char)*c;

		plain = plain && (isalnum(ch) || strchr("/._-+,:@=", ch));
		control = control || ch < 0x20 || ch == 0x7f;
	}
	if (!plain && !control && locate_quote_word(buf, len, used, word) == 0) {
		*used = strlen(buf);
		return;
	}
	k = snprintf(buf + *used, len - *used, "%s%s", *used ? " " : "",
	             control ? fs_escape_text(word, esc, sizeof esc) : word);
	*used = k < 0 ? *used : *used + (size_t)k >= len ? len - 1 : *used + (size_t)k;
}

char *summary_command(char *buf, size_t len, const char *words, const char *dir)
{
	char self[PATH_MAX + 8];
	size_t used;

	if (len == 0)
		return buf;
	/* locate_self_command quotes the path it gives when it needs it */
	snprintf(buf, len, "%s %s", locate_self_command(self, sizeof self), words);
	used = strlen(buf);
	if (dir)
		add_word(buf, len, &used, dir);
	return buf;
}

bool summary_install_python(const struct summary *s, char *buf, size_t len)
{
	const char *p = s->fp.nccl_path, *lib, *ver;
	size_t n, vlen;

	if (len)
		buf[0] = '\0';
	if (!p || (n = strlen(p)) <= strlen(WHEEL_NCCL) ||
	    strcmp(p + n - strlen(WHEEL_NCCL), WHEEL_NCCL) != 0)
		return false;
	/* PREFIX/lib/pythonX.Y/site-packages/...: the interpreter is PREFIX/bin/pythonX.Y */
	ver = p + n - strlen(WHEEL_NCCL);
	while (ver > p && ver[-1] != '/')
		ver--;
	vlen = (size_t)(p + n - strlen(WHEEL_NCCL) - ver);
	lib = ver - 1;
	if (lib - p < 4 || strncmp(lib - 4, "/lib", 4) != 0 || vlen < 7 || vlen > 32 ||
	    strncmp(ver, "python", 6) != 0)
		return false;
	if ((size_t)snprintf(buf, len, "%.*s/bin/%.*s", (int)(lib - 4 - p), p, (int)vlen, ver) >= len
	    || access(buf, X_OK) != 0) {
		if (len)
			buf[0] = '\0';
		return false;
	}
	return true;
}

char *summary_install_command(const struct summary *s, const char *dir, char *buf, size_t len)
{
	char py[PATH_MAX];
	size_t used;

	if (!summary_install_python(s, py, sizeof py))
		return summary_command(buf, len, "export --install", dir);
	summary_command(buf, len, "export --install --python", NULL);
	used = strlen(buf);
	add_word(buf, len, &used, py);
	add_word(buf, len, &used, dir);
	return buf;
}
