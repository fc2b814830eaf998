/* plugin_load.c - nccltune-plugin-load: the tuner plugin of this process's environment
 * (NCCL_TUNER_PLUGIN), loaded and asked through its own entry points as the modelled
 * NCCL does (tuner.h), without NCCL and without a GPU. `nccltune verify` runs it in a
 * child process with the server's environment, so that no user's library is ever loaded
 * into nccltune itself, and reads what it says:
 *
 *   stderr: the lines NCCL would log (NCCL-style, "NCCL INFO ..." with NCCL_DEBUG=INFO),
 *           the plugin's own among them ("nccltune: table PATH, N rules ...");
 *   stdout: one line per step, words separated by one blank:
 *             loaded FILE SYMBOL NAME      (or: not-loaded WHY...)
 *             init RC
 *             ask BYTES RC ALGO PROTO NCHANNELS   (the pair NCCL then picks from the
 *                                                   table; "-": none usable)
 *
 * usage: nccltune-plugin-load [--nccl-version V] [--nranks N] [--nnodes N] [BYTES...]
 * Exit 0 when the plugin loaded and its init succeeded, 3 when NCCL would run without it
 * (not loaded, or init failed), 2 for a bad command line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "tuner.h"

#define ASKS_MAX 64
#define COMM_ID 0x6e63636c74756e65ull   /* any fixed id: one communicator */

/* A cost table as NCCL fills it for a small communicator of one node: Tree and Ring with
 * every protocol usable, the others ruled out (-1, NCCL's IGNORE); Tree/Simple is the
 * cheapest, so that a rule's answer shows as a change. */
static void costs_fill(struct model_costs *c, uint64_t bytes)
{
	for (int a = 0; a < MODEL_NALGOS; a++)
		for (int p = 0; p < MODEL_NPROTOS; p++)
			c->t[a][p] = -1.0f;
	for (int p = 0; p < MODEL_NPROTOS; p++) {
		c->t[MODEL_ALGO_RING][p] = 20.0f - (float)p + (float)bytes * 1e-5f;
		c->t[MODEL_ALGO_TREE][p] = 10.0f - (float)p + (float)bytes * 1e-5f;
	}
}

/* The pair NCCL picks from a table: the first strict minimum among the usable entries. */
static void costs_pick(const struct model_costs *c, int *algo, int *proto)
{
	float min = 3.6e9f;   /* NCCL's starting minimum (topoGetAlgoInfo) */

	*algo = *proto = -1;
	for (int a = 0; a < MODEL_NALGOS; a++)
		for (int p = 0; p < MODEL_NPROTOS; p++)
			if (c->t[a][p] >= 0.0f && c->t[a][p] < min) {
				min = c->t[a][p];
				*algo = a;
				*proto = p;
			}
}

static int parse_int(const char *s, long lo, long hi, long *v)
{
	char *end;

	*v = strtol(s, &end, 10);
	return *s && !*end && *v >= lo && *v <= hi ? 0 : -1;
}

static int usage(const char *why)
{
	fprintf(stderr, "nccltune-plugin-load: %s\nusage: nccltune-plugin-load [--nccl-version V] "
	        "[--nranks N] [--nnodes N] [BYTES...]\n", why);
	return 2;
}

int main(int argc, char **argv)
{
	const char *version = "2.30.7";
	long nranks = 2, nnodes = 1, v;
	unsigned long long asks[ASKS_MAX];
	size_t nasks = 0;
	char why[1024];
	struct model_tuner *t;
	void *ctx = NULL;
	int rc = 3;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--nccl-version") == 0 && i + 1 < argc) {
			version = argv[++i];
		} else if (strcmp(argv[i], "--nranks") == 0 && i + 1 < argc) {
			if (parse_int(argv[++i], 1, 1 << 20, &nranks) != 0)
				return usage("--nranks: not a count of ranks");
		} else if (strcmp(argv[i], "--nnodes") == 0 && i + 1 < argc) {
			if (parse_int(argv[++i], 1, 1 << 20, &nnodes) != 0)
				return usage("--nnodes: not a count of nodes");
		} else if (argv[i][0] != '-' && nasks < ASKS_MAX) {
			if (parse_int(argv[i], 1, 1L << 40, &v) != 0)
				return usage("a message size is not a byte count");
			asks[nasks++] = (unsigned long long)v;
		} else {
			return usage(argv[i]);
		}
	}
	t = model_tuner_open(getenv("NCCL_TUNER_PLUGIN"), version, why, sizeof why);
	if (!t) {
		printf("not-loaded %s\n", why[0] ? why : "NCCL_TUNER_PLUGIN is unset or none");
		goto out;
	}
	printf("loaded %s %s %s\n", model_tuner_file(t), model_tuner_symbol(t), model_tuner_name(t));
	fflush(stdout);
	rc = model_tuner_init(t, (int)nranks, (int)nnodes, COMM_ID, &ctx);
	printf("init %d\n", rc);
	fflush(stdout);
	if (rc != 0) {
		rc = 3;
		goto out;
	}
	for (size_t i = 0; i < nasks; i++) {
		struct model_costs costs;
		int nch = 0, r, algo, proto;

		costs_fill(&costs, asks[i]);
		r = model_tuner_ask(t, ctx, (size_t)asks[i], 0, &costs, &nch);
		costs_pick(&costs, &algo, &proto);
		printf("ask %llu %d %s %s %d\n", asks[i], r,
		       algo >= 0 ? model_algo_name((enum model_algo)algo) : "-",
		       proto >= 0 ? model_proto_name((enum model_proto)proto) : "-", nch);
	}
	model_tuner_finalize(t, ctx);
	rc = 0;
out:
	model_tuner_close(t);
	return rc;
}
