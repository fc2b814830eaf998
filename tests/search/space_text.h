/* space_text.h - parsing a space from JSON text in the search tests (test_space.c,
 * test_per_size.c): HEAD opens a nccltune-space/1 document, parse gives the space or
 * NULL with the message, parse_error gives the message or "(parsed)". */
#ifndef NCCLTUNE_TESTS_SPACE_TEXT_H
#define NCCLTUNE_TESTS_SPACE_TEXT_H

#include <string.h>

#include "space/space.h"

#define HEAD "{\"schema\": \"nccltune-space/1\", "

/* The space of json ("t.json" in messages), or NULL with the message in err. */
static inline space *parse(const char *json, char *err, size_t errlen)
{
	space *sp = NULL;

	err[0] = '\0';
	if (space_parse(json, strlen(json), "t.json", &sp, err, errlen) < 0)
		return NULL;
	return sp;
}

/* The message space_parse gives for json, or "(parsed)". */
static inline const char *parse_error(const char *json)
{
	static char err[1024];
	space *sp = parse(json, err, sizeof err);

	if (sp) {
		space_destroy(sp);
		return "(parsed)";
	}
	return err;
}

#endif
