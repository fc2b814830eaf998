/* notes.c - what the final phase says (decide_impl.h): notes for the user through the
 * view, and its error message. The bottom of decide/: every other file may call it. */
#include <stdarg.h>
#include <stdio.h>

#include "decide/decide.h"
#include "decide/decide_impl.h"

/* A note for the user, printf-style, through v->note. */
void decide_note(const struct decide_view *v, const char *fmt, ...)
{
	char text[2048];
	va_list ap;

	if (!v->note)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	v->note(v->note_ctx, text);
}

void decide_note_live(const struct decide_view *v, const char *fmt, ...)
{
	char text[2048];
	va_list ap;

	if (!v->note || v->replaying)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	v->note(v->note_ctx, text);
}

/* f->err, printf-style; returns -1. */
int decide_fail(struct final_state *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->err, sizeof f->err, fmt, ap);
	va_end(ap);
	return -1;
}

