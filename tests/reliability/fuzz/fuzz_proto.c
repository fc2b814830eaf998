/* fuzz_proto.c - fuzz target for the strict probe-report parser (proto_report_parse):
 * probe stdout is outside data (any program can be a probe). Besides "never crash", it
 * checks a property: a report that parses formats back to text that parses to the
 * same verdict. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_report r, back;
	char err[512];
	char *text;

	if (proto_report_parse((const char *)data, size, &r, err, sizeof err) != 0) {
		/* the message must be a terminated string: callers print it */
		if (memchr(err, '\0', sizeof err) == NULL)
			abort();
		return 0;
	}
	text = proto_report_format(&r);
	if (!text) {
		proto_report_clear(&r);
		return 0;
	}
	/* a parsed report re-renders to something the parser accepts again */
	if (proto_report_parse(text, strlen(text), &back, err, sizeof err) != 0)
		abort();
	if (back.ok != r.ok)
		abort();
	if (r.ok ? back.nresults != r.nresults : back.stage != r.stage)
		abort();
	if (back.nsweep != r.nsweep || back.has_in_flight != r.has_in_flight)
		abort();
	proto_report_clear(&back);
	proto_report_clear(&r);
	free(text);
	return 0;
}
