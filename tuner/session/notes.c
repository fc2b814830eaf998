/* notes.c - what a session says besides its progress lines (notes.h): notes and
 * warnings on its output streams (control characters escaped), ending the updating
 * line of a terminal, and its error message. At the bottom of session/: it calls no other file of it. */
#include <stdarg.h>
#include <stdio.h>

#include "fsutil.h"
#include "session/session_priv.h"

char *nccltune_printable(const char *text, char *buf, size_t len)
{
	return fs_escape_text(text, buf, len);
}

int session_fail(nccltune_session *s, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof s->err, fmt, ap);
	va_end(ap);
	return status;
}

void session_line_clear(struct session_output *out)
{
	if (out->line_active) {
		fputs("\r\033[K", out->progress);
		out->line_active = false;
	}
}

void session_line_end(struct session_output *out)
{
	if (out->progress && out->line_active) {
		fputc('\n', out->progress);
		fflush(out->progress);
		out->line_active = false;
	}
}

/* Print "nccltune: " prefix, the message and a newline on f. The message holds paths,
 * journal text and what a probe said: its control characters are escaped
 * (fs_escape_text), so nothing in it can drive the terminal or fake a line. */
static void say(FILE *f, const char *prefix, const char *msg)
{
	char clean[4 * 4096 + 1];

	fprintf(f, "nccltune: %s%s\n", prefix, fs_escape_text(msg, clean, sizeof clean));
	fflush(f);
}

void session_note(struct session_output *out, const char *fmt, ...)
{
	char msg[4096];
	va_list ap;

	if (!out->progress)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	session_line_clear(out);
	say(out->progress, "", msg);
}

void session_warn(struct session_output *out, const char *fmt, ...)
{
	char msg[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (out->progress) {
		session_line_clear(out);
		say(out->progress, "warning: ", msg);
	}
	if (out->warnings && out->warnings != out->progress)
		say(out->warnings, "warning: ", msg);
}
