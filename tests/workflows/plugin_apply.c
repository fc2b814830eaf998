/* plugin_apply.c - feed an exported table to the exported plugin the way NCCL does
 * (tests/plugin/harness.h: the file dlopen'd by path, ABI v5, NCCL-shaped cost tables)
 * and print what NCCL would then run, one line per size:
 *
 *   plugin_apply PLUGIN TABLE NRANKS BYTES...
 *   -> "BYTES ALGO PROTO NCHANNELS" (NCCL's pick after getCollInfo: tree, ring, ...;
 *      NCHANNELS as the plugin answered, 0 = NCCL's own)
 *
 * The cost table is an 8-GPU PCIe box's (LL128 ruled out), where NCCL's own pick is
 * Ring/LL, so a rule that applies is visible as another pair. The table is passed as
 * NCCLTUNE_TUNER_TABLE, exactly as the exports set it. Exit 0, 1 on a harness failure. */
#include <stdlib.h>

#include "../plugin/harness.h"

static const char *const algos[] = {"tree", "ring", "collnet_direct", "collnet_chain",
                                    "nvls", "nvls_tree", "pat"};
static const char *const protos[] = {"ll", "ll128", "simple"};

int main(int argc, char **argv)
{
	struct h_plugin p;
	struct h_comm c;
	int rc = 0;

	if (argc < 5) {
		fprintf(stderr, "usage: plugin_apply PLUGIN TABLE NRANKS BYTES...\n");
		return 1;
	}
	if (setenv("NCCLTUNE_TUNER_TABLE", argv[2], 1) != 0 || h_open(&p, argv[1]) != 0)
		return 1;
	if (h_init(&c, &p, H_V5, 1, (size_t)atol(argv[3]), 1, h_capture) != 0) {
		fprintf(stderr, "plugin_apply: init failed\n");
		return 1;
	}
	for (int i = 4; i < argc; i++) {
		float t[H_NA][H_NP];
		int nch = 0, a, pr;

		h_table(H_PCIE, t);
		if (h_coll(&c, 4 /* allreduce */, (size_t)atoll(argv[i]), t, H_NA, H_NP, 0, &nch) != 0 ||
		    h_pick(t, H_NA, H_NP, &a, &pr) != 0) {
			fprintf(stderr, "plugin_apply: getCollInfo failed for %s bytes\n", argv[i]);
			rc = 1;
			continue;
		}
		printf("%s %s %s %d\n", argv[i], algos[a], protos[pr], nch);
	}
	if (h_log_count(H_WARN))
		h_log_dump();
	h_fini(&c);
	return rc;
}
