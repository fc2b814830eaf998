/* parse_report.c - test helper: run the tuner's strict protocol parser over stdin (a
 * probe's stdout). Exit 0 and print "ok"/"fail <stage>" when it parses, exit 1 with the
 * parser's message when it does not. */
#include <stdio.h>
#include <stdlib.h>

#include "proto.h"

int main(void)
{
	static char buf[1 << 20];
	struct proto_report r;
	char err[512];
	size_t len = fread(buf, 1, sizeof buf, stdin);

	if (ferror(stdin)) {
		fprintf(stderr, "parse_report: cannot read stdin\n");
		return 1;
	}
	if (proto_report_parse(buf, len, &r, err, sizeof err) != 0) {
		fprintf(stderr, "parse_report: %s\n", err);
		return 1;
	}
	if (r.ok)
		printf("ok %d %zu\n", r.nranks, r.nresults);
	else
		printf("fail %s\n", proto_stage_name(r.stage));
	return 0;
}
