/* notes.h - what a session says besides its progress lines, at the bottom of session/:
 * where its output goes, notes and warnings, ending the updating line of a terminal, and
 * the session's error message. Not part of the public API. */
#ifndef NCCLTUNE_SESSION_NOTES_H
#define NCCLTUNE_SESSION_NOTES_H

#include <stdbool.h>
#include <stdio.h>

#include "nccltune.h"

/* Where what the user sees goes. */
struct session_output {
	FILE *progress;              /* NULL: no progress */
	FILE *warnings;              /* warnings, also with progress off (default stderr) */
	bool tty;                    /* progress is a terminal: one updating line */
	int width;                   /* columns the summary wraps at: the terminal's, else 100 */
	bool line_active;            /* a TTY progress line is on screen without its newline */
};

/* A note on its own line ("nccltune: ..."); nothing when out->progress is NULL. */
void session_note(struct session_output *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A warning ("nccltune: warning: ..."): to the progress stream, and to the warnings
 * stream when that is another one, so turning progress off never hides a warning. */
void session_warn(struct session_output *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Erase the updating line, if one is on screen. Can't fail. */
void session_line_clear(struct session_output *out);
/* End the updating line with a newline, if one is on screen. Can't fail. */
void session_line_end(struct session_output *out);

/* Set the session's error message (nccltune_session_error); returns status. */
int session_fail(nccltune_session *s, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
