/* notes.c - what a session says besides its progress lines (notes.h): notes and
 * warnings on its output streams, ending the updating line of a terminal, and its error
 * message. At the bottom of session/: it calls no other file of it. */
#include <stdarg.h>
#include <stdio.h>

#include "session/session_priv.h"

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

void session_note(struct session_output *out, const char *fmt, ...)
{
	va_list ap;

	if (!out->progress)
		return;
	session_line_clear(out);
	fputs("nccltune: ", out->progress);
	va_start(ap, fmt);
	vfprintf(out->progress, fmt, ap);
	va_end(ap);
	fputc('\n', out->progress);
	fflush(out->progress);
}

void session_warn(struct session_output *out, const char *fmt, ...)
{
	va_list ap;

	if (out->progress) {
		session_line_clear(out);
		fputs("nccltune: warning: ", out->progress);
		va_start(ap, fmt);
		vfprintf(out->progress, fmt, ap);
		va_end(ap);
		fputc('\n', out->progress);
		fflush(out->progress);
	}
	if (out->warnings && out->warnings != out->progress) {
		fputs("nccltune: warning: ", out->warnings);
		va_start(ap, fmt);
		vfprintf(out->warnings, fmt, ap);
		va_end(ap);
		fputc('\n', out->warnings);
		fflush(out->warnings);
	}
}
