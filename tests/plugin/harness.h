/* harness.h - drive libnccl-tuner-nccltune.so the way NCCL does: dlopen the built file by
 * path (RTLD_NOW | RTLD_LOCAL, as src/plugin/plugin_open.cc), dlsym ncclTunerPlugin_v6,
 * _v5 and _v4, init one context per communicator, pass cost tables shaped like NCCL's
 * (float[7][3] cast to float**, IGNORE = -1.0) and a logger that captures what it is told.
 *
 * The ABI structs are declared here again, from NCCL's documented interface, instead of
 * including plugin/nccl_abi.h: a layout mistake there must not be shared by the test.
 * Header-only (static inline) so each test program includes what it uses. */
#ifndef NCCLTUNE_TEST_PLUGIN_HARNESS_H
#define NCCLTUNE_TEST_PLUGIN_HARNESS_H

#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define H_IGN (-1.0f)      /* NCCL_ALGO_PROTO_IGNORE */
#define H_WARN 2           /* NCCL_LOG_WARN */
#define H_INFO 3           /* NCCL_LOG_INFO */
#define H_TUNING 0x40ul    /* NCCL_TUNING */
#define H_NA 7
#define H_NP 3

typedef void (*h_logger)(int level, unsigned long flags, const char *file, int line,
                         const char *fmt, ...);

struct h_v4 {
	const char *name;
	int (*init)(size_t nRanks, size_t nNodes, h_logger log, void **ctx);
	int (*getCollInfo)(void *ctx, int coll, size_t nBytes, int numPipeOps, float **table,
	                   int numAlgo, int numProto, int regBuff, int *nChannels);
	int (*destroy)(void *ctx);
};

struct h_v5 {
	const char *name;
	int (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes, h_logger log,
	            void *nvlDomainInfo, void *constants);
	int (*getCollInfo)(void *ctx, int coll, size_t nBytes, int numPipeOps, float **table,
	                   int numAlgo, int numProto, int regBuff, int *nChannels);
	int (*finalize)(void *ctx);
};

struct h_v6 {
	const char *name;
	int (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes, h_logger log,
	            void *nvlDomainInfo, void *constants);
	int (*getCollInfo)(void *ctx, int coll, size_t nBytes, int numPipeOps, float **table,
	                   int numAlgo, int numProto, int regBuff, int *nChannels);
	int (*finalize)(void *ctx);
	int (*getChunkSize)(void *ctx, int coll, size_t nBytes, int algo, int proto,
	                    int nChannels, size_t *chunkSize);
};

struct h_plugin {
	void *handle;
	const struct h_v4 *v4;
	const struct h_v5 *v5;
	const struct h_v6 *v6;
};

enum h_abi { H_V4, H_V5, H_V6 };

static inline const char *h_abi_name(enum h_abi abi)
{
	return abi == H_V4 ? "v4" : abi == H_V5 ? "v5" : "v6";
}

/* A communicator: its plugin, the ABI NCCL would use, the context init gave. */
struct h_comm {
	const struct h_plugin *p;
	enum h_abi abi;
	void *ctx;
};

/* Open the plugin at `path` and look up the three structs. Returns 0, or -1 (printed). */
static inline int h_open(struct h_plugin *p, const char *path)
{
	memset(p, 0, sizeof *p);
	p->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!p->handle) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		return -1;
	}
	p->v4 = (const struct h_v4 *)dlsym(p->handle, "ncclTunerPlugin_v4");
	p->v5 = (const struct h_v5 *)dlsym(p->handle, "ncclTunerPlugin_v5");
	p->v6 = (const struct h_v6 *)dlsym(p->handle, "ncclTunerPlugin_v6");
	if (!p->v4 || !p->v5 || !p->v6) {
		fprintf(stderr, "%s: a ncclTunerPlugin_v4/_v5/_v6 symbol is missing\n", path);
		return -1;
	}
	return 0;
}

/* Look up a control function (nccltune_tuner.h) in the same object. */
static inline void *h_sym(const struct h_plugin *p, const char *name)
{
	void *s = dlsym(p->handle, name);

	if (!s)
		fprintf(stderr, "dlsym %s: %s\n", name, dlerror());
	return s;
}

static inline int h_init(struct h_comm *c, const struct h_plugin *p, enum h_abi abi,
                         uint64_t comm_id, size_t nranks, size_t nnodes, h_logger log)
{
	c->p = p;
	c->abi = abi;
	c->ctx = (void *)0x1;   /* init must overwrite it */
	switch (abi) {
	case H_V4:
		return p->v4->init(nranks, nnodes, log, &c->ctx);
	case H_V5:
		return p->v5->init(&c->ctx, comm_id, nranks, nnodes, log, NULL, NULL);
	default:
		return p->v6->init(&c->ctx, comm_id, nranks, nnodes, log, NULL, NULL);
	}
}

/* One getCollInfo, with the table passed exactly as NCCL passes its float[7][3]. */
static inline int h_coll(const struct h_comm *c, int coll, size_t bytes, float t[H_NA][H_NP],
                         int num_algo, int num_proto, int reg_buff, int *nch)
{
	float **table = (float **)(void *)t;

	switch (c->abi) {
	case H_V4:
		return c->p->v4->getCollInfo(c->ctx, coll, bytes, 1, table, num_algo, num_proto,
		                             reg_buff, nch);
	case H_V5:
		return c->p->v5->getCollInfo(c->ctx, coll, bytes, 1, table, num_algo, num_proto,
		                             reg_buff, nch);
	default:
		return c->p->v6->getCollInfo(c->ctx, coll, bytes, 1, table, num_algo, num_proto,
		                             reg_buff, nch);
	}
}

static inline int h_fini(const struct h_comm *c)
{
	switch (c->abi) {
	case H_V4:
		return c->p->v4->destroy(c->ctx);
	case H_V5:
		return c->p->v5->finalize(c->ctx);
	default:
		return c->p->v6->finalize(c->ctx);
	}
}

/* ---- the capturing logger ---- */

#define H_LOG_MAX 4096
struct h_msg {
	int level;
	unsigned long flags;
	char text[1024];
};
static struct h_msg h_log[H_LOG_MAX];
static int h_nlog;

static inline void h_capture(int level, unsigned long flags, const char *file, int line,
                             const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static inline void h_capture(int level, unsigned long flags, const char *file, int line,
                             const char *fmt, ...)
{
	va_list ap;

	(void)file;
	(void)line;
	if (h_nlog == H_LOG_MAX)
		return;
	h_log[h_nlog].level = level;
	h_log[h_nlog].flags = flags;
	va_start(ap, fmt);
	vsnprintf(h_log[h_nlog].text, sizeof h_log[h_nlog].text, fmt, ap);
	va_end(ap);
	h_nlog++;
}

static inline void h_log_reset(void)
{
	h_nlog = 0;
}

/* Messages at `level` (0: any). */
static inline int h_log_count(int level)
{
	int n = 0;

	for (int i = 0; i < h_nlog; i++)
		n += level == 0 || h_log[i].level == level;
	return n;
}

/* Messages at `level` whose text is exactly `text`. */
static inline int h_log_exact(int level, const char *text)
{
	int n = 0;

	for (int i = 0; i < h_nlog; i++)
		n += h_log[i].level == level && strcmp(h_log[i].text, text) == 0;
	return n;
}

/* The text of the first message at `level`, or "" when there is none. */
static inline const char *h_log_first(int level)
{
	for (int i = 0; i < h_nlog; i++)
		if (h_log[i].level == level)
			return h_log[i].text;
	return "";
}

/* Whether every message carried the TUNING flag. */
static inline int h_log_all_tuning(void)
{
	for (int i = 0; i < h_nlog; i++)
		if (!(h_log[i].flags & H_TUNING))
			return 0;
	return 1;
}

static inline void h_log_dump(void)
{
	for (int i = 0; i < h_nlog; i++)
		fprintf(stderr, "  log[%d] level %d flags %#lx: %s\n", i, h_log[i].level,
		        h_log[i].flags, h_log[i].text);
}

/* ---- cost tables like NCCL's (microseconds; rows Tree Ring CollNetDirect CollNetChain
 * NVLS NVLSTree PAT, columns LL LL128 Simple) ---- */

enum h_kind { H_PCIE, H_NVLINK, H_NOTREE, H_ONERANK, H_TIES, H_COLLNET, H_NKINDS };

static inline const char *h_kind_name(enum h_kind kind)
{
	static const char *const names[] = { "pcie", "nvlink", "notree", "onerank", "ties",
	                                     "collnet" };

	return kind < H_NKINDS ? names[kind] : "?";
}

static inline void h_table(enum h_kind kind, float t[H_NA][H_NP])
{
	static const float pcie[H_NA][H_NP] = {   /* 8 GPUs on PCIe: LL128 ruled out */
		{ 22.1f, H_IGN, 58.3f }, { 15.4f, H_IGN, 40.2f }, { H_IGN, H_IGN, H_IGN },
		{ H_IGN, H_IGN, H_IGN }, { H_IGN, H_IGN, H_IGN }, { H_IGN, H_IGN, H_IGN },
		{ H_IGN, H_IGN, H_IGN },
	};
	static const float nvlink[H_NA][H_NP] = { /* NVSwitch: NVLS, no CollNet, no PAT */
		{ 12.5f, 10.9f, 30.0f }, { 11.0f, 9.1f, 25.2f }, { H_IGN, H_IGN, H_IGN },
		{ H_IGN, H_IGN, H_IGN }, { H_IGN, H_IGN, 8.7f }, { H_IGN, H_IGN, 14.2f },
		{ H_IGN, H_IGN, H_IGN },
	};
	static const float onerank[H_NA][H_NP] = { /* updateCollCostTable with nRanks 1 */
		{ H_IGN, H_IGN, H_IGN }, { H_IGN, H_IGN, 0.0f }, { H_IGN, H_IGN, H_IGN },
		{ H_IGN, H_IGN, H_IGN }, { H_IGN, H_IGN, H_IGN }, { H_IGN, H_IGN, H_IGN },
		{ H_IGN, H_IGN, H_IGN },
	};
	static const float collnet[H_NA][H_NP] = { /* nodes on a SHARP network: CollNet wins */
		{ 30.0f, 28.0f, 60.0f }, { 25.0f, 20.0f, 50.0f }, { H_IGN, H_IGN, 7.5f },
		{ H_IGN, H_IGN, 11.0f }, { H_IGN, H_IGN, 8.0f }, { H_IGN, H_IGN, 12.0f },
		{ H_IGN, H_IGN, H_IGN },
	};
	static const float ties[H_NA][H_NP] = {   /* zero costs, -0.0, equal minima, a NaN */
		{ 0.0f, H_IGN, 3.0f }, { 0.0f, 4.0f, -0.0f }, { H_IGN, -2.0f, H_IGN },
		{ H_IGN, H_IGN, H_IGN }, { 3.0f, 3.0f, H_IGN }, { H_IGN, H_IGN, H_IGN },
		{ H_IGN, H_IGN, H_IGN },
	};

	switch (kind) {
	case H_PCIE:
		memcpy(t, pcie, sizeof pcie);
		break;
	case H_NOTREE:   /* NCCL_ALGO=^tree: the Tree row is IGNORE */
		memcpy(t, pcie, sizeof pcie);
		t[0][0] = t[0][1] = t[0][2] = H_IGN;
		break;
	case H_NVLINK:
		memcpy(t, nvlink, sizeof nvlink);
		break;
	case H_ONERANK:
		memcpy(t, onerank, sizeof onerank);
		break;
	case H_COLLNET:
		memcpy(t, collnet, sizeof collnet);
		break;
	default:
		memcpy(t, ties, sizeof ties);
		t[3][0] = __builtin_nanf("");
		break;
	}
}

/* NCCL's pick (topoGetAlgoInfo): the first strict minimum below FLT_MAX among entries
 * >= 0 of the numAlgo x numProto corner. Returns 0 with *a and *p set, or -1 when none. */
static inline int h_pick(float t[H_NA][H_NP], int na, int np, int *a, int *p)
{
	float min = 3.40282347e38f;

	*a = *p = -1;
	for (int i = 0; i < na; i++)
		for (int j = 0; j < np; j++)
			if (t[i][j] >= 0.0f && t[i][j] < min) {
				min = t[i][j];
				*a = i;
				*p = j;
			}
	return *a >= 0 ? 0 : -1;
}

/* Whether (a, p) is strictly cheaper than every other entry >= 0 of the corner. */
static inline int h_unique_min(float t[H_NA][H_NP], int na, int np, int a, int p)
{
	if (!(t[a][p] >= 0.0f))
		return 0;
	for (int i = 0; i < na; i++)
		for (int j = 0; j < np; j++)
			if ((i != a || j != p) && t[i][j] >= 0.0f && !(t[i][j] > t[a][p]))
				return 0;
	return 1;
}

/* Whether every entry of `before` that is not >= 0 (IGNORE, other negatives, NaN), and
 * every entry outside the na x np corner, is bit-for-bit the same in `after`. */
static inline int h_ignored_kept(float before[H_NA][H_NP], float after[H_NA][H_NP], int na,
                                 int np)
{
	for (int i = 0; i < H_NA; i++)
		for (int j = 0; j < H_NP; j++)
			if ((!(before[i][j] >= 0.0f) || i >= na || j >= np) &&
			    memcmp(&before[i][j], &after[i][j], sizeof(float)) != 0)
				return 0;
	return 1;
}

/* ---- files ---- */

/* Write `len` bytes to `path`. Returns 0 or -1. */
static inline int h_write(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	size_t n;

	if (!f)
		return -1;
	n = fwrite(data, 1, len, f);
	return fclose(f) == 0 && n == len ? 0 : -1;
}

static inline int h_write_str(const char *path, const char *text)
{
	return h_write(path, text, strlen(text));
}

#endif
