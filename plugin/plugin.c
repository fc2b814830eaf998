/* plugin.c - libnccl-tuner-nccltune.so: NCCL's tuner-plugin entry points (ABI v4, v5 and
 * v6 from one library, so NCCL 2.24 - 2.30 all find one) answering from the table named by
 * NCCLTUNE_TUNER_TABLE, or from the forced answer of the control interface (control.c).
 *
 * The rules NCCL imposes (docs/formats.md, "Tuner table"; reference/tuner-plugin.md):
 *  - the cost table arrives as float** but is a flat float[numAlgo][3]: index it only
 *    through the float (*)[3] cast;
 *  - NCCL picks the first strict minimum among entries >= 0 after the plugin returns, so a
 *    pair is forced by making it that unique minimum, and an entry that is not >= 0
 *    (IGNORE: ruled out by topology, safety or NCCL_ALGO/NCCL_PROTO) is never written;
 *  - *nChannels arrives as 0 ("NCCL's") and stays 0 unless a rule sets CTAs;
 *  - a non-success return fails the collective or the communicator: every entry point
 *    returns success, and a missing or bad table means one warning, then no opinion.
 * All state is in the per-communicator context, except the control interface's. */
#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "control.h"
#include "nccl_abi.h"
#include "notice.h"
#include "table_index.h"
#include "table.h"

#define TABLE_ENV "NCCLTUNE_TUNER_TABLE"
#define MSG_MAX 1024

/* Once-flags per rule and communicator. */
enum {
	ONCE_APPLIED = 1,       /* the INFO line saying the rule was applied */
	ONCE_IGNORED = 2,       /* the warning saying its pair is IGNORE or out of range */
	ONCE_CHUNK = 4,         /* the warning saying its chunk is below the protocol's grain */
	ONCE_CTAS = 8,          /* the INFO line saying its CTAs were withheld (CollNet) */
};

/* What one getCollInfo decided, kept for the v6 getChunkSize calls of its task. NCCL
 * 2.30 calls getCollInfo for every (aggregated) task of a group first (ncclPrepareTasks)
 * and asks the chunks afterwards, task by task (scheduleCollTasksToPlan ->
 * calcCollChunking), passing the collective, the algorithm and protocol it runs, and the
 * bytes of one channel's share (nChannels 1) or, for CollNet, the task's bytes; nothing
 * names the task. A query therefore matches the group's decisions of that collective and
 * pair whose size is at least its bytes, and the chunk is applied only when all of them
 * agree (enqueue.cc at v2.30.7; docs/formats.md, "Tuner table"). */
struct chunk_memo {
	uint64_t chunk;         /* 0: NCCL's */
	uint64_t bytes;         /* the (aggregated) collective's size; a share is never larger */
	int coll;
	int algo, proto;        /* the pair NCCL takes from the table as the plugin left it */
	int rule;               /* 1-based, -1 forced, 0 none */
};

/* The decisions of one group: getCollInfo appends; the first getCollInfo after a
 * getChunkSize starts the next group. More than GROUP_MAX decisions in a group (or
 * getCollInfo calls without chunk queries, as symmetric kernels make) make every chunk
 * query of that group ambiguous: NCCL's chunk stands. */
#define GROUP_MAX 64
struct chunk_group {
	struct chunk_memo memo[GROUP_MAX];
	size_t n;
	int overflow;           /* a decision did not fit */
	int asked;              /* the last call was getChunkSize */
};

struct plugin_ctx {
	uint64_t comm_id;
	size_t nranks, nnodes;
	nt_nccl_logger log;
	int has_table;
	struct tuner_table table;
	struct tuner_index index;   /* the rules that can match this communicator */
	unsigned char *once;    /* ONCE_* per rule */
	int shape_warned;       /* a cost table of unknown shape was reported */
	int ambiguity_said;     /* a chunk query was ambiguous (logged once) */
	struct chunk_group group;
};

/* An answer to give NCCL: the rule's (or forced) fields. */
struct answer {
	int algo, proto;        /* or TUNER_ANY */
	int ctas;
	uint64_t chunk;
	int rule;               /* 1-based; -1 forced */
};

static const char *const algo_shown[TUNER_NALGOS] = {
	"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT",
};
static const char *const proto_shown[TUNER_NPROTOS] = { "LL", "LL128", "Simple" };

/* Log one formatted line through NCCL's logger; nothing when there is none. */
static void plugin_logf(nt_nccl_logger log, int level, unsigned long flags, int line,
                        const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void plugin_logf(nt_nccl_logger log, int level, unsigned long flags, int line,
                        const char *fmt, ...)
{
	char msg[MSG_MAX];
	va_list ap;

	if (!log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	log(level, flags, __FILE__, line, "%s", msg);
}

#define LOG_WARN(log, flags, ...) plugin_logf(log, NT_NCCL_LOG_WARN, flags, __LINE__, __VA_ARGS__)
#define LOG_INFO(log, flags, ...) plugin_logf(log, NT_NCCL_LOG_INFO, flags, __LINE__, __VA_ARGS__)

/* "Ring/LL", "*" for TUNER_ANY, "?" for anything NCCL has no name for. */
static void pair_text(int algo, int proto, char *buf, size_t len)
{
	const char *a = algo == TUNER_ANY ? "*" : (algo >= 0 && algo < TUNER_NALGOS) ?
	                algo_shown[algo] : "?";
	const char *p = proto == TUNER_ANY ? "*" : (proto >= 0 && proto < TUNER_NPROTOS) ?
	                proto_shown[proto] : "?";

	snprintf(buf, len, "%s/%s", a, p);
}

/* A table was named but cannot be used: `why` says why (naming the variable or the path
 * first). The NCCL warning of this communicator, and once per process the stderr line
 * that shows even with NCCL_DEBUG unset, since the server then runs its tuned variables
 * with NCCL's own choices: "nccltune: NCCLTUNE_TUNER_TABLE=PATH: REASON; ...". */
static void table_unusable(nt_nccl_logger log, const char *prefix, const char *why)
{
	char line[MSG_MAX];

	LOG_WARN(log, NT_NCCL_INIT | NT_NCCL_TUNING, "nccltune: %s; table ignored, NCCL decides",
	         why);
	snprintf(line, sizeof line, "%s%s; the tuner plugin has no table, NCCL decides every "
	         "collective", prefix, why);
	notice_once(line);
}

/* Create a communicator's context and read its table. Never fails: on any problem the
 * context has no table (one warning says why, and a table named but unusable one stderr
 * line per process), and out of memory leaves *context NULL. */
static int plugin_init(void **context, uint64_t comm_id, size_t nranks, size_t nnodes,
                       nt_nccl_logger log)
{
	const char *path = getenv(TABLE_ENV);
	struct plugin_ctx *c;
	char err[MSG_MAX / 2];

	if (!context)
		return NT_NCCL_SUCCESS;
	*context = NULL;
	if (path && !path[0])
		path = NULL;
	c = calloc(1, sizeof *c);
	if (!c) {
		LOG_WARN(log, NT_NCCL_INIT | NT_NCCL_TUNING, "nccltune: out of memory creating the "
		         "tuner context; NCCL decides");
		if (path)
			notice_once(TABLE_ENV " is set, but the tuner plugin ran out of memory creating "
			            "a communicator's context; NCCL decides");
		return NT_NCCL_SUCCESS;
	}
	c->comm_id = comm_id;
	c->nranks = nranks;
	c->nnodes = nnodes;
	c->log = log;
	if (!path) {
		LOG_INFO(log, NT_NCCL_INIT | NT_NCCL_TUNING, "nccltune: %s is not set; no table, "
		         "NCCL decides", TABLE_ENV);
		goto out;
	}
	if (path[0] != '/') {
		snprintf(err, sizeof err, "%s=%s is not an absolute path", TABLE_ENV, path);
		table_unusable(log, "", err);
		goto out;
	}
	if (tuner_table_load(path, &c->table, err, sizeof err) != 0) {
		table_unusable(log, TABLE_ENV "=", err);
		goto out;
	}
	c->once = calloc(c->table.nrules ? c->table.nrules : 1, 1);
	if (!c->once || tuner_index_build(&c->table, nranks, nnodes, &c->index) != 0) {
		snprintf(err, sizeof err, "%s: out of memory", path);
		table_unusable(log, TABLE_ENV "=", err);
		tuner_table_free(&c->table);
		goto out;
	}
	c->has_table = 1;
	LOG_INFO(log, NT_NCCL_INIT | NT_NCCL_TUNING, "nccltune: table %s, %zu rules (nranks %zu, "
	         "nnodes %zu)", path, c->table.nrules, nranks, nnodes);
out:
	*context = c;
	return NT_NCCL_SUCCESS;
}

/* Free a context. Accepts NULL. */
static int plugin_finalize(void *context)
{
	struct plugin_ctx *c = context;

	if (c) {
		tuner_table_free(&c->table);
		tuner_index_free(&c->index);
		free(c->once);
		free(c);
	}
	return NT_NCCL_SUCCESS;
}

/* Whether NCCL could pick this entry: it skips every value that is not >= 0. */
static int usable(float v)
{
	return v >= 0.0f;
}

/* The pair NCCL takes from the table (topoGetAlgoInfo): the first strict minimum below
 * FLT_MAX among usable entries, rows first; -1/-1 when there is none. */
static void nccl_pick(float (*t)[NT_NCCL_NPROTOS], int na, int np, int *algo, int *proto)
{
	float min = FLT_MAX;

	*algo = -1;
	*proto = -1;
	for (int a = 0; a < na; a++)
		for (int p = 0; p < np; p++)
			if (usable(t[a][p]) && t[a][p] < min) {
				min = t[a][p];
				*algo = a;
				*proto = p;
			}
}

/* The concrete pair an answer asks for: both given, or '*' resolved to the cheapest
 * usable entry of the named row or column (first wins on ties, as in NCCL). Returns 0
 * with *algo and *proto set (TUNER_ANY for both when the answer names neither), -1 when the
 * pair is outside the table's numAlgo x numProto, -2 when it is not usable (IGNORE). */
static int resolve_pair(float (*t)[NT_NCCL_NPROTOS], int na, int np, const struct answer *ans,
                        int *algo, int *proto)
{
	float min = FLT_MAX;

	*algo = ans->algo;
	*proto = ans->proto;
	if (ans->algo == TUNER_ANY && ans->proto == TUNER_ANY)
		return 0;
	if ((ans->algo != TUNER_ANY && ans->algo >= na) ||
	    (ans->proto != TUNER_ANY && ans->proto >= np))
		return -1;
	if (ans->algo != TUNER_ANY && ans->proto != TUNER_ANY)
		return usable(t[ans->algo][ans->proto]) ? 0 : -2;
	*algo = -1;
	*proto = -1;
	for (int a = 0; a < na; a++)
		for (int p = 0; p < np; p++) {
			if ((ans->algo != TUNER_ANY && a != ans->algo) ||
			    (ans->proto != TUNER_ANY && p != ans->proto))
				continue;
			if (usable(t[a][p]) && (*algo < 0 || t[a][p] < min)) {
				min = t[a][p];
				*algo = a;
				*proto = p;
			}
		}
	return *algo >= 0 ? 0 : -2;
}

/* Make (a, p), a usable entry, the unique minimum NCCL will take, writing as little as
 * possible and never into an unusable entry: nothing when it already is; else half the
 * cheapest other usable entry; else (another entry costs 0) 0 for it and the smallest
 * positive float for the other zeros. */
static void force_pair(float (*t)[NT_NCCL_NPROTOS], int na, int np, int a, int p)
{
	float others = FLT_MAX;   /* NCCL's starting minimum: an entry must be below it */

	for (int i = 0; i < na; i++)
		for (int j = 0; j < np; j++)
			if ((i != a || j != p) && usable(t[i][j]) && t[i][j] < others)
				others = t[i][j];
	if (t[a][p] < others)
		return;
	if (others > 0.0f) {
		t[a][p] = others * 0.5f;
		return;
	}
	t[a][p] = 0.0f;
	for (int i = 0; i < na; i++)
		for (int j = 0; j < np; j++)
			if ((i != a || j != p) && usable(t[i][j]) && t[i][j] <= 0.0f)
				t[i][j] = FLT_MIN;
}

/* The once-flag `bit` of rule `rule` (1-based): returns 1 the first time, then 0. */
static int once(struct plugin_ctx *c, int rule, int bit)
{
	if (rule < 1 || (c->once[rule - 1] & bit))
		return 0;
	c->once[rule - 1] |= (unsigned char)bit;
	return 1;
}

/* The INFO line of an applied rule: "allreduce 43008 B -> Ring/LL, 4 CTAs (rule 1)". */
static void log_applied(struct plugin_ctx *c, int coll, size_t nbytes, const struct answer *ans,
                        int algo, int proto)
{
	char pair[48], ctas[24] = "NCCL's CTAs", chunk[40] = "";

	if (algo >= 0)
		pair_text(algo, proto, pair, sizeof pair);
	else
		snprintf(pair, sizeof pair, "no usable algorithm");
	if (ans->ctas > 0)
		snprintf(ctas, sizeof ctas, "%d CTA%s", ans->ctas, ans->ctas == 1 ? "" : "s");
	if (ans->chunk > 0)
		snprintf(chunk, sizeof chunk, ", chunk %llu B", (unsigned long long)ans->chunk);
	LOG_INFO(c->log, NT_NCCL_TUNING, "nccltune: %s %zu B -> %s, %s%s (rule %d)",
	         tuner_coll_name(coll), nbytes, pair, ctas, chunk, ans->rule);
}

/* The warning of a rule whose pair cannot be forced (resolve_pair's -1 or -2). */
static void log_ignored(struct plugin_ctx *c, int coll, size_t nbytes, const struct answer *ans,
                        int why, int na, int np)
{
	char pair[48], reason[96];

	pair_text(ans->algo, ans->proto, pair, sizeof pair);
	if (why == -1)
		snprintf(reason, sizeof reason, "which is outside NCCL's %dx%d cost table", na, np);
	else
		snprintf(reason, sizeof reason, "which NCCL has ruled out (IGNORE)");
	LOG_WARN(c->log, NT_NCCL_TUNING, "nccltune: %s %zu B: rule %d asks for %s, %s; NCCL's "
	         "choice stands", tuner_coll_name(coll), nbytes, ans->rule, pair, reason);
}

/* Whether NCCL uses a plugin's nChannels unclamped for algorithm `algo`: CollNet (Direct
 * and Chain) and NVLS across nodes are scheduled on task->nMaxChannels channels as the
 * plugin answered (scheduleCollTasksToPlan's isCollnet branch, enqueue.cc at v2.30.7),
 * not on the communicator's pool: channels never connected, and past NCCL's arrays for
 * counts above its MAXCHANNELS. Unknown node counts count as several. */
static int ctas_unclamped(const struct plugin_ctx *c, int algo)
{
	if (algo == TUNER_ALGO_COLLNET_DIRECT || algo == TUNER_ALGO_COLLNET_CHAIN)
		return 1;
	return algo == TUNER_ALGO_NVLS && (!c || c->nnodes != 1);
}

/* Keep one getCollInfo decision for the chunk queries of its group; the first call after
 * a chunk query starts a new group. Collectives a table cannot name are not kept. */
static void group_add(struct chunk_group *g, int coll, const struct chunk_memo *m)
{
	if (g->asked) {
		g->n = 0;
		g->overflow = 0;
		g->asked = 0;
	}
	if (!tuner_coll_name(coll))
		return;
	if (g->n == GROUP_MAX)
		g->overflow = 1;
	else
		g->memo[g->n++] = *m;
}

/* getCollInfo (the same for v4, v5 and v6). Always returns success. */
static int plugin_get_coll_info(void *context, int coll, size_t nbytes, int num_pipe_ops,
                                float **cost_table, int num_algo, int num_proto, int reg_buff,
                                int *nchannels)
{
	struct plugin_ctx *c = context;
	struct nccltune_tuner_decision d = { 0 };
	struct nccltune_tuner_force f;
	struct answer ans = { TUNER_ANY, TUNER_ANY, 0, 0, 0 };
	float (*t)[NT_NCCL_NPROTOS];
	int na = num_algo, np = num_proto, have = 0, why = 0, algo = TUNER_ANY, proto = TUNER_ANY;
	int shape_ok = 1, withheld = 0;
	long idx;

	(void)num_pipe_ops;
	(void)reg_buff;     /* 1 whenever a CUDA graph is captured: match on size, not this */
	if (!cost_table || !nchannels)
		return NT_NCCL_SUCCESS;
	t = (float (*)[NT_NCCL_NPROTOS])(void *)cost_table;
	if (na < 0 || na > NT_NCCL_NALGOS || np < 0 || np > NT_NCCL_NPROTOS) {
		/* a layout this plugin does not know: read and write none of it */
		if (c && !c->shape_warned) {
			c->shape_warned = 1;
			LOG_WARN(c->log, NT_NCCL_TUNING, "nccltune: NCCL passed a %dx%d cost table, not "
			         "at most %dx%d; no algorithm or protocol is forced", num_algo, num_proto,
			         NT_NCCL_NALGOS, NT_NCCL_NPROTOS);
		}
		na = 0;
		np = 0;
		shape_ok = 0;
	}
	d.coll = coll;
	d.bytes = nbytes;
	nccl_pick(t, na, np, &d.nccl_algo, &d.nccl_proto);
	d.status = NCCLTUNE_TUNER_NO_TABLE;
	if (control_forced(coll, &f)) {
		ans = (struct answer){ f.algo, f.proto, f.nchannels, f.chunk, -1 };
		have = 1;
	} else if (c && c->has_table) {
		d.status = NCCLTUNE_TUNER_NO_RULE;
		idx = tuner_index_match(&c->index, coll, nbytes);
		if (idx >= 0) {
			const struct tuner_rule *r = &c->table.rules[idx];

			ans = (struct answer){ r->algo, r->proto, r->ctas, r->chunk, (int)idx + 1 };
			have = 1;
		}
	}
	if (have) {
		why = resolve_pair(t, na, np, &ans, &algo, &proto);
		if (why == 0) {
			if (algo != TUNER_ANY)
				force_pair(t, na, np, algo, proto);
			d.status = NCCLTUNE_TUNER_APPLIED;
		} else {
			d.status = NCCLTUNE_TUNER_IGNORED;
		}
	}
	nccl_pick(t, na, np, &d.algo, &d.proto);
	if (d.status == NCCLTUNE_TUNER_APPLIED && ans.ctas > 0) {
		if (ctas_unclamped(c, d.algo))
			withheld = ans.ctas;
		else
			*nchannels = ans.ctas;
	}
	if (c) {
		group_add(&c->group, coll, &(struct chunk_memo){
			.chunk = d.status == NCCLTUNE_TUNER_APPLIED ? ans.chunk : 0, .bytes = nbytes,
			.coll = coll, .algo = d.algo, .proto = d.proto, .rule = ans.rule });
	}
	if (c && ans.rule > 0 && d.status == NCCLTUNE_TUNER_APPLIED) {
		struct answer shown = ans;

		shown.ctas = withheld ? 0 : ans.ctas;
		if (once(c, ans.rule, ONCE_APPLIED))
			log_applied(c, coll, nbytes, &shown, d.algo, d.proto);
		if (withheld && once(c, ans.rule, ONCE_CTAS))
			LOG_WARN(c->log, NT_NCCL_TUNING, "nccltune: %s %zu B: rule %d's %d CTAs are not "
			         "given: NCCL runs %s there, which takes a plugin's count unclamped; NCCL's "
			         "CTAs", tuner_coll_name(coll), nbytes, ans.rule, withheld,
			         algo_shown[d.algo]);
	}
	if (c && ans.rule > 0 && d.status == NCCLTUNE_TUNER_IGNORED && shape_ok &&
	    once(c, ans.rule, ONCE_IGNORED))
		log_ignored(c, coll, nbytes, &ans, why, na, np);
	if (control_recording()) {
		d.comm_id = c ? c->comm_id : 0;
		d.nranks = c ? c->nranks : 0;
		d.nnodes = c ? c->nnodes : 0;
		d.nchannels = *nchannels;
		d.rule = ans.rule;
		control_record(&d);
	}
	return NT_NCCL_SUCCESS;
}

/* Bytes NCCL rounds a chunk down to (ncclProtoGrainSize, device.h:328 at v2.30.7): a
 * smaller chunk would become 0. */
static uint64_t proto_grain(int proto)
{
	static const uint64_t grain[TUNER_NPROTOS] = { 16, 1920, 512 };

	return proto >= 0 && proto < TUNER_NPROTOS ? grain[proto] : 0;
}

/* The chunk for a query of group g: 0 with *rule 0 when no decision of this collective
 * and pair is at least `nbytes` large, the decisions that are disagree on the chunk, or
 * the group overflowed (*ambiguous 1 for the last two); else the decisions' chunk (0:
 * NCCL's) and the first one's rule. */
static uint64_t group_chunk(const struct chunk_group *g, int coll, size_t nbytes, int algo,
                            int proto, int *rule, int *ambiguous)
{
	uint64_t chunk = 0;
	int found = 0;

	*rule = 0;
	*ambiguous = g->overflow;
	for (size_t i = 0; i < g->n && !*ambiguous; i++) {
		const struct chunk_memo *m = &g->memo[i];

		if (m->coll != coll || m->algo != algo || m->proto != proto || nbytes > m->bytes)
			continue;
		if (!found) {
			chunk = m->chunk;
			*rule = m->rule;
			found = 1;
		} else if (m->chunk != chunk) {
			*ambiguous = 1;
		}
	}
	if (*ambiguous) {
		*rule = 0;
		return 0;
	}
	return chunk;
}

/* getChunkSize (v6): *chunk_size arrives as NCCL's chunk and is left alone unless the
 * group's decisions that can be this task's (group_chunk) all applied the same chunk. */
static int plugin_get_chunk_size(void *context, int coll, size_t nbytes, int algo, int proto,
                                 int nchannels, size_t *chunk_size)
{
	struct plugin_ctx *c = context;
	uint64_t chunk;
	int rule, ambiguous;

	(void)nchannels;    /* 1 for a channel's share; CollNet's count: names no task */
	if (!c)
		return NT_NCCL_SUCCESS;
	c->group.asked = 1;
	if (!chunk_size || !tuner_coll_name(coll))
		return NT_NCCL_SUCCESS;
	chunk = group_chunk(&c->group, coll, nbytes, algo, proto, &rule, &ambiguous);
	if (ambiguous && !c->ambiguity_said) {
		c->ambiguity_said = 1;
		LOG_INFO(c->log, NT_NCCL_TUNING, "nccltune: %s: a chunk query of %zu B could be "
		         "several collectives of one group with different chunks; NCCL's chunk "
		         "stands for it (logged once)", tuner_coll_name(coll), nbytes);
	}
	if (chunk == 0)
		return NT_NCCL_SUCCESS;
	if (chunk < proto_grain(proto)) {
		if (rule > 0 && once(c, rule, ONCE_CHUNK))
			LOG_WARN(c->log, NT_NCCL_TUNING, "nccltune: %s: rule %d's chunk %llu B is below "
			         "%s's grain of %llu B; NCCL's chunk stands", tuner_coll_name(coll), rule,
			         (unsigned long long)chunk, proto_shown[proto],
			         (unsigned long long)proto_grain(proto));
		return NT_NCCL_SUCCESS;
	}
	*chunk_size = (size_t)chunk;
	return NT_NCCL_SUCCESS;
}

static int plugin_init_v4(size_t nranks, size_t nnodes, nt_nccl_logger log, void **context)
{
	return plugin_init(context, 0, nranks, nnodes, log);
}

static int plugin_init_v5(void **context, uint64_t comm_id, size_t nranks, size_t nnodes,
                          nt_nccl_logger log, struct nt_nccl_nvl_domain_info *nvl,
                          struct nt_nccl_tuner_constants *constants)
{
	(void)nvl;
	(void)constants;    /* NCCL's cost model stays NCCL's */
	return plugin_init(context, comm_id, nranks, nnodes, log);
}

/* The plugin as NCCL 2.30 loads it: ncclTuner_v6_t. */
NT_EXPORT const struct nt_nccl_tuner_v6 ncclTunerPlugin_v6 = {
	.name = "nccltune",
	.init = plugin_init_v5,
	.getCollInfo = plugin_get_coll_info,
	.finalize = plugin_finalize,
	.getChunkSize = plugin_get_chunk_size,
};

/* NCCL 2.28 - 2.29: ncclTuner_v5_t (no chunk sizes). */
NT_EXPORT const struct nt_nccl_tuner_v5 ncclTunerPlugin_v5 = {
	.name = "nccltune",
	.init = plugin_init_v5,
	.getCollInfo = plugin_get_coll_info,
	.finalize = plugin_finalize,
};

/* NCCL 2.24 - 2.27: ncclTuner_v4_t (no commId, destroy instead of finalize). */
NT_EXPORT const struct nt_nccl_tuner_v4 ncclTunerPlugin_v4 = {
	.name = "nccltune",
	.init = plugin_init_v4,
	.getCollInfo = plugin_get_coll_info,
	.destroy = plugin_finalize,
};
