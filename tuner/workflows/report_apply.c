/* report_apply.c - report.html's "How to apply" box: the commands that deploy the
 * result as the user can run them (result/command.c: nccltune's path when it is not in
 * PATH, the folder quoted, the install's --python), only when the result is recommended;
 * otherwise why there is nothing to install. Every string goes through report_esc. */
#include <limits.h>
#include <stdio.h>

#include "workflows/report_html.h"

/* One command in a code block. */
static void command(FILE *o, const char *cmd, const char *note)
{
	fputs("<p><code class=\"cmd\">", o);
	report_esc(o, cmd);
	fputs("</code>", o);
	if (note) {
		fputs("<br><span class=\"dim\">", o);
		report_esc(o, note);
		fputs("</span>", o);
	}
	fputs("</p>", o);
}

void report_section_apply(FILE *o, const struct summary *s)
{
	char cmd[4 * PATH_MAX], py[PATH_MAX], why[256];

	fputs("<section class=\"apply\"><h2>How to apply</h2>", o);
	if (!s->best.present) {
		fputs("<p>No configuration worked: nothing to install.</p></section>\n", o);
		return;
	}
	if (s->model) {
		fputs("<p>A MODEL result, not a measurement: nothing to install. On the real "
		      "machine run</p>", o);
		command(o, summary_command(cmd, sizeof cmd, "run", NULL),
		        "without --model, with the same workload; then install that session");
		fputs("</section>\n", o);
		return;
	}
	if (summary_unmeasured(s)) {
		fputs("<p>Nothing to install: ", o);
		report_esc(o, summary_describe_unmeasured(s, why, sizeof why));
		fputs(".</p></section>\n", o);
		return;
	}
	if (s->best.env.n == 0 && s->nrules == 0) {
		fputs(s->best.symmetric ? "<p>No NCCL variable to install: turn symmetric memory on "
		      "in the server (above).</p></section>\n"
		      : "<p>NCCL's defaults were best: nothing to install.</p></section>\n", o);
		return;
	}
	if (!summary_shown_faster(s)) {
		fputs("<p>Nothing to install: not shown to be faster than NCCL's defaults (NCCL's "
		      "defaults are as good as far as this session can tell). A new session with a "
		      "larger --budget measures it more; export --install refuses it without "
		      "--allow-unproven.</p></section>\n", o);
		return;
	}
	fputs("<p>Recommended. Install it for the server's Python (a .pth file: the tuned "
	      "environment is set whenever that interpreter starts):</p>", o);
	command(o, summary_install_command(s, s->dir, cmd, sizeof cmd),
	        summary_install_python(s, py, sizeof py)
	        ? "for the interpreter whose NCCL the session tuned"
	        : "for python3 in PATH; add --python PY for the server's own interpreter");
	fputs("<p>or into NCCL's own configuration file, or as shell lines:</p>", o);
	command(o, summary_command(cmd, sizeof cmd, "export --format nccl-conf --install", s->dir),
	        NULL);
	command(o, summary_command(cmd, sizeof cmd, "export --format shell", s->dir), NULL);
	fputs("</section>\n", o);
}
