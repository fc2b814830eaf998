/* fake_tuner.c - a foreign NCCL tuner plugin for the model probe's tests, built three
 * times: with every ABI struct (v4, v5, v6), with -DFAKE_ONLY_V4 and with -DFAKE_ONLY_V6.
 * What it does comes from FAKE_TUNER in the environment:
 *   (unset)       no opinion (the table untouched, nChannels 0)
 *   revive:A,P    write 0.0 into entry [A][P], IGNORE or not (what nccltune never does)
 *   ignore-all    set every entry to IGNORE (-1.0)
 *   ctas:N        only *nChannels = N
 *   init-fail     init returns 3 (ncclSystemError)
 *   coll-fail     getCollInfo returns 3
 * Every call is written to stderr ("fake tuner: init v5 nranks 8 nnodes 1", "fake tuner:
 * getCollInfo 43008 regBuff 1", "fake tuner: finalize"), and init logs one INFO line
 * through NCCL's logger. The ABI is declared here from NCCL's documented interface. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*fake_logger)(int level, unsigned long flags, const char *file, int line,
                            const char *fmt, ...);

struct fake_v4 {
	const char *name;
	int (*init)(size_t nRanks, size_t nNodes, fake_logger log, void **ctx);
	int (*getCollInfo)(void *ctx, int coll, size_t nBytes, int numPipeOps, float **table,
	                   int numAlgo, int numProto, int regBuff, int *nChannels);
	int (*destroy)(void *ctx);
};

struct fake_v5 {
	const char *name;
	int (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes, fake_logger log,
	            void *nvl, void *constants);
	int (*getCollInfo)(void *ctx, int coll, size_t nBytes, int numPipeOps, float **table,
	                   int numAlgo, int numProto, int regBuff, int *nChannels);
	int (*finalize)(void *ctx);
	int (*getChunkSize)(void *ctx, int coll, size_t nBytes, int algo, int proto,
	                    int nChannels, size_t *chunkSize);   /* v6 only */
};

static const char *mode(void)
{
	const char *m = getenv("FAKE_TUNER");

	return m ? m : "";
}

static int fake_init_common(const char *abi, size_t nranks, size_t nnodes, fake_logger log,
                            void **ctx)
{
	static int token;

	fprintf(stderr, "fake tuner: init %s nranks %zu nnodes %zu\n", abi, nranks, nnodes);
	if (log)
		log(3, 0x40, __FILE__, __LINE__, "fake tuner: hello from %s", abi);
	*ctx = &token;
	return strcmp(mode(), "init-fail") == 0 ? 3 : 0;
}

static int fake_get(void *ctx, int coll, size_t nbytes, int npipe, float **table, int na,
                    int np, int reg, int *nch)
{
	float (*t)[3] = (float (*)[3])(void *)table;
	const char *m = mode();
	int a, p, n;

	(void)ctx;
	(void)npipe;
	fprintf(stderr, "fake tuner: getCollInfo coll %d %zu regBuff %d nChannels %d\n", coll,
	        nbytes, reg, *nch);
	if (strcmp(m, "coll-fail") == 0)
		return 3;
	if (sscanf(m, "revive:%d,%d", &a, &p) == 2 && a >= 0 && a < na && p >= 0 && p < np)
		t[a][p] = 0.0f;
	if (strcmp(m, "ignore-all") == 0)
		for (a = 0; a < na; a++)
			for (p = 0; p < np; p++)
				t[a][p] = -1.0f;
	if (sscanf(m, "ctas:%d", &n) == 1)
		*nch = n;
	return 0;
}

static int fake_finalize(void *ctx)
{
	(void)ctx;
	fprintf(stderr, "fake tuner: finalize\n");
	return 0;
}

__attribute__((unused)) static int fake_init_v4(size_t nranks, size_t nnodes, fake_logger log, void **ctx)
{
	return fake_init_common("v4", nranks, nnodes, log, ctx);
}

__attribute__((unused)) static int fake_init_v5(void **ctx, uint64_t id, size_t nranks, size_t nnodes, fake_logger log,
                        void *nvl, void *constants)
{
	(void)id;
	(void)nvl;
	(void)constants;
	return fake_init_common("v5", nranks, nnodes, log, ctx);
}

__attribute__((unused)) static int fake_init_v6(void **ctx, uint64_t id, size_t nranks, size_t nnodes, fake_logger log,
                        void *nvl, void *constants)
{
	(void)id;
	(void)nvl;
	(void)constants;
	return fake_init_common("v6", nranks, nnodes, log, ctx);
}

#ifndef FAKE_ONLY_V6
extern const struct fake_v4 ncclTunerPlugin_v4;
const struct fake_v4 ncclTunerPlugin_v4 = { "fake", fake_init_v4, fake_get, fake_finalize };
#endif
#if !defined(FAKE_ONLY_V4) && !defined(FAKE_ONLY_V6)
extern const struct fake_v5 ncclTunerPlugin_v5;
const struct fake_v5 ncclTunerPlugin_v5 = { "fake", fake_init_v5, fake_get, fake_finalize,
                                            NULL };
#endif
#ifndef FAKE_ONLY_V4
extern const struct fake_v5 ncclTunerPlugin_v6;
const struct fake_v5 ncclTunerPlugin_v6 = { "fake", fake_init_v6, fake_get, fake_finalize,
                                            NULL };
#endif
