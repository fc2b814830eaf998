/* report_server.c - the server's side of report.html: the step and the all-reduces' part
 * of it (with compute between the all-reduces) and, for a best with symmetric memory,
 * what to turn on in the server and whether NCCL ran a symmetric kernel (a server option:
 * never exported). Every string goes through report_esc. */
#include <stdio.h>

#include "workflows/report_html.h"

void report_server(FILE *o, const struct summary *s)
{
	const char *lines[SUMMARY_SYMMETRIC_LINES_MAX];
	char buf[512];
	size_t n;

	if (summary_describe_step(s, &s->baseline, buf, sizeof buf)) {
		fputs("<p>Step (compute between the all-reduces), baseline: ", o);
		report_esc(o, buf);
		if (summary_describe_step(s, &s->best, buf, sizeof buf)) {
			fputs("; tuned: ", o);
			report_esc(o, buf);
		}
		fputs(".</p>", o);
	}
	if (!s->best.present || !s->best.symmetric)
		return;
	n = summary_symmetric_lines(s->server_like, lines, SUMMARY_SYMMETRIC_LINES_MAX);
	fputs("<p><b>Server option</b> (not an NCCL variable, not exported): measured with "
	      "symmetric memory; turn it on in the server:</p><ul>", o);
	for (size_t i = 0; i < n; i++) {
		fputs("<li><code>", o);
		report_esc(o, lines[i]);
		fputs("</code></li>", o);
	}
	fputs("</ul><p>", o);
	report_esc(o, summary_kernel_words(s->best.kernel));
	fputs(".</p>", o);
}
