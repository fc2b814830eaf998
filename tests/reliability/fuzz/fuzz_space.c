/* fuzz_space.c - fuzz target for the search-space parser (space_parse): space files are
 * user input. Properties beyond "never crash": a space that parses renders
 * (space_to_json) to text that parses to the same shape, and every point it can
 * enumerate describes itself within bounds. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "space/space.h"

/* Walk a few points of sp: enumeration, constraints, coordinates, descriptions. */
static void exercise(const space *sp)
{
	uint64_t card = space_cardinality(sp);
	uint64_t step = card > 64 ? card / 64 : 1;
	char buf[512];
	double x[SPACE_MAX_DIMS];

	for (uint64_t i = 0; i < card && i < 64 * step; i += step) {
		struct point p, r;

		space_point_at(sp, i, &p);
		(void)space_allows(sp, &p);
		space_point_describe(sp, &p, buf, sizeof buf);
		if (memchr(buf, '\0', sizeof buf) == NULL)
			abort();
		for (size_t d = 0; d < space_dims(sp); d++) {
			if (p.lv[d] >= space_levels(sp, d))
				abort();
			x[d] = space_is_categorical(sp, d) ? 0 : 0.5;
			(void)space_coord(sp, d, p.lv[d]);
			(void)space_level_text(sp, d, p.lv[d]);
		}
		space_point_round(sp, x, &p, &r);
		for (size_t d = 0; d < space_dims(sp); d++)
			if (r.lv[d] >= space_levels(sp, d))
				abort();
	}
	for (size_t i = 0; i < space_fixed_count(sp); i++)
		if (!space_fixed_name(sp, i) || !space_fixed_value(sp, i))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	space *sp = NULL, *back = NULL;
	char err[1024];
	char *text = NULL;

	if (space_parse((const char *)data, size, "fuzz.json", &sp, err, sizeof err) != 0) {
		/* every message starts with the origin, so users know which file is at fault */
		if (strncmp(err, "fuzz.json", 9) != 0)
			abort();
		return 0;
	}
	exercise(sp);
	text = space_to_json(sp);
	if (text) {
		if (space_parse(text, strlen(text), "rendered", &back, err, sizeof err) != 0)
			abort();
		if (space_dims(back) != space_dims(sp) ||
		    space_cardinality(back) != space_cardinality(sp) ||
		    space_fixed_count(back) != space_fixed_count(sp))
			abort();
		for (size_t d = 0; d < space_dims(sp); d++)
			if (strcmp(space_name(sp, d), space_name(back, d)) != 0 ||
			    space_levels(sp, d) != space_levels(back, d))
				abort();
	}
	free(text);
	space_destroy(back);
	space_destroy(sp);
	return 0;
}
