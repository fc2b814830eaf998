/* wf_tool.c - a minimal front end over the workflow half of nccltune.h, so the shell
 * tests exercise the library exactly as the CLI calls it, independent of the CLI:
 *   wf_tool export FORMAT PATH
 *   wf_tool install PATH TARGET|- [PYTHON]        (sitecustomize)
 *   wf_tool install-conf PATH TARGET|-            (nccl-conf)
 *   wf_tool inst FORMAT PATH TARGET|- PYTHON|- [system] [allow-model]
 *   wf_tool uninst FORMAT TARGET|- PYTHON|- [system]
 *       (install prints the path written on stdout, the notes on stderr)
 *   wf_tool check SESSION_DIR [PROBE_COMMAND]
 *   wf_tool report SESSION_DIR
 *   wf_tool show SESSION_DIR
 *   wf_tool craft FORMAT TOOL_NAME CREATED GPU_NAME
 *       the export of a summary built by hand, bypassing the loader (one GPU so named,
 *       NCCL_PROTO=LL), as a caller that skips summary_load would: what the formats alone
 *       guarantee
 * Exit status: the nccltune_status returned; messages on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccltune.h"
#include "result/summary.h"
#include "workflows/export.h"

static int craft(char **argv, char *err, size_t errlen)
{
	struct summary s;
	struct summary_gpu gpu = {0, argv[5], "00000000:18:00.0", NULL};
	struct summary_var v = {"NCCL_PROTO", "LL"};
	char *text = NULL;
	size_t len = 0;
	int rc;

	memset(&s, 0, sizeof(s));
	snprintf(s.origin, sizeof(s.origin), "crafted");
	s.tool_name = argv[3];
	s.tool_version = "0.1.0";
	s.created = argv[4];
	s.source = "measured";
	s.fp.present = true;
	s.fp.gpu_count = 1;
	s.fp.ngpus = 1;
	s.fp.gpus = &gpu;
	s.best.present = true;
	s.best.env.n = 1;
	s.best.env.v = &v;
	rc = export_render_string(&s, argv[2], NULL, &text, &len, err, errlen);
	if (rc == NCCLTUNE_OK && fwrite(text, 1, len, stdout) != len)
		rc = NCCLTUNE_ERROR;
	free(text);
	return rc;
}

/* "-" reads as NULL: found as the library finds it. */
static const char *dash(const char *a)
{
	return strcmp(a, "-") == 0 ? NULL : a;
}

int main(int argc, char **argv)
{
	char err[2048] = "", written[4096] = "";
	struct nccltune_install_options o;
	int rc = NCCLTUNE_USAGE;

	memset(&o, 0, sizeof(o));
	o.notes = stderr;

	if (argc >= 4 && strcmp(argv[1], "export") == 0) {
		rc = nccltune_export(argv[3], argv[2], stdout, err, sizeof(err));
	} else if (argc >= 4 && (strcmp(argv[1], "install") == 0 ||
	                         strcmp(argv[1], "install-conf") == 0)) {
		o.format = strcmp(argv[1], "install") == 0 ? "sitecustomize" : "nccl-conf";
		o.target = dash(argv[3]);
		o.python = argc >= 5 ? argv[4] : NULL;
		rc = nccltune_install(argv[2], &o, written, sizeof(written), err, sizeof(err));
		if (rc == NCCLTUNE_OK)
			printf("%s\n", written);
	} else if (argc >= 6 && strcmp(argv[1], "inst") == 0) {
		o.format = argv[2];
		o.target = dash(argv[4]);
		o.python = dash(argv[5]);
		for (int i = 6; i < argc; i++) {
			o.system |= strcmp(argv[i], "system") == 0;
			o.allow_model |= strcmp(argv[i], "allow-model") == 0;
		}
		rc = nccltune_install(argv[3], &o, written, sizeof(written), err, sizeof(err));
		if (rc == NCCLTUNE_OK)
			printf("%s\n", written);
	} else if (argc >= 5 && strcmp(argv[1], "uninst") == 0) {
		o.format = argv[2];
		o.target = dash(argv[3]);
		o.python = dash(argv[4]);
		o.system = argc >= 6 && strcmp(argv[5], "system") == 0;
		rc = nccltune_uninstall(&o, written, sizeof(written), err, sizeof(err));
		if (rc == NCCLTUNE_OK && written[0])
			printf("%s\n", written);
	} else if (argc >= 6 && strcmp(argv[1], "craft") == 0)
		rc = craft(argv, err, sizeof(err));
	else if (argc >= 3 && strcmp(argv[1], "check") == 0)
		rc = nccltune_check(argv[2], argc >= 4 ? argv[3] : NULL, stdout, err, sizeof(err));
	else if (argc >= 3 && strcmp(argv[1], "report") == 0)
		rc = nccltune_report_write(argv[2], err, sizeof(err));
	else if (argc >= 3 && strcmp(argv[1], "show") == 0)
		rc = nccltune_show(argv[2], stdout, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "usage: wf_tool export|install|install-conf|inst|uninst|check|"
		         "report|show|craft ...");
	if (rc != NCCLTUNE_OK && rc != NCCLTUNE_CHANGED)
		fprintf(stderr, "wf_tool: %s\n", err);
	return rc;
}
