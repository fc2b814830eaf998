/* wf_tool.c - a minimal front end over the workflow half of nccltune.h, so the shell
 * tests exercise the library exactly as the CLI calls it, independent of the CLI:
 *   wf_tool export FORMAT PATH
 *   wf_tool install PATH TARGET|- [PYTHON]        (sitecustomize)
 *   wf_tool install-conf PATH TARGET|-            (nccl-conf)
 *   wf_tool check SESSION_DIR [PROBE_COMMAND]
 *   wf_tool report SESSION_DIR
 *   wf_tool show SESSION_DIR
 * Exit status: the nccltune_status returned; messages on stderr. */
#include <stdio.h>
#include <string.h>

#include "nccltune.h"

int main(int argc, char **argv)
{
	char err[2048] = "", written[4096] = "";
	int rc = NCCLTUNE_USAGE;

	if (argc >= 4 && strcmp(argv[1], "export") == 0)
		rc = nccltune_export(argv[3], argv[2], stdout, err, sizeof(err));
	else if (argc >= 4 && strcmp(argv[1], "install") == 0) {
		rc = nccltune_install(argv[2], NULL, strcmp(argv[3], "-") == 0 ? NULL : argv[3],
		                      argc >= 5 ? argv[4] : NULL, written, sizeof(written), err,
		                      sizeof(err));
		if (rc == NCCLTUNE_OK)
			printf("%s\n", written);
	} else if (argc >= 4 && strcmp(argv[1], "install-conf") == 0) {
		rc = nccltune_install(argv[2], "nccl-conf", strcmp(argv[3], "-") == 0 ? NULL : argv[3],
		                      NULL, written, sizeof(written), err, sizeof(err));
		if (rc == NCCLTUNE_OK)
			printf("%s\n", written);
	} else if (argc >= 3 && strcmp(argv[1], "check") == 0)
		rc = nccltune_check(argv[2], argc >= 4 ? argv[3] : NULL, stdout, err, sizeof(err));
	else if (argc >= 3 && strcmp(argv[1], "report") == 0)
		rc = nccltune_report_write(argv[2], err, sizeof(err));
	else if (argc >= 3 && strcmp(argv[1], "show") == 0)
		rc = nccltune_show(argv[2], stdout, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "usage: wf_tool export|install|install-conf|check|report|"
		         "show ...");
	if (rc != NCCLTUNE_OK && rc != NCCLTUNE_CHANGED)
		fprintf(stderr, "wf_tool: %s\n", err);
	return rc;
}
