/* ncclvars.c - NCCL's vocabulary (see ncclvars.h): the word lists, the table of variables
 * nccltune knows, the tokenizer of NCCL's ALGO/PROTO list syntax and the tuner's strict
 * value check. Written from reading NCCL 2.28.9 (tag v2.28.9-1; file:line below are
 * of src/ at that tag); no NCCL code is used. The user guide's env.rst, first tagged in
 * v2.30.7-1 (docs/userguide/source/env.rst), documents the same variables. */
#include "ncclvars.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "fsutil.h"

/* ---- word lists ---- */

/* init.cc:49-51 ncclFuncStr, ncclAlgoStr, ncclProtoStr (the index is NCCL's). */
static const char *const algo_words[] = {"Tree", "Ring", "CollNetDirect", "CollNetChain",
	"NVLS", "NVLSTree", "PAT"};
static const char *const proto_words[] = {"LL", "LL128", "Simple"};
static const char *const func_words[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter",
	"AllReduce"};
/* graph/topo.cc:26 topoPathTypeStr up to SYS, the words ncclGetLevel compares with
 * strcmp (graph/paths.cc:231-232). */
static const char *const path_words[] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C",
	"PXN", "PHB", "SYS"};
/* init.cc:1361-1366: "GROUP" (strcasecmp), anything else is PARALLEL. */
static const char *const launch_words[] = {"PARALLEL", "GROUP"};
/* debug.cc:55-66 (strcasecmp), in the order of ncclDebugLogLevel (nccl_common.h:19-23). */
static const char *const debug_words[] = {"VERSION", "WARN", "INFO", "ABORT", "TRACE"};

struct wordlist {
	const char *what;
	const char *const *w;
	size_t n;
	bool nocase;
};

#define WL(what, a, nocase) {what, a, sizeof a / sizeof a[0], nocase}

static const struct wordlist wordlists[NCCLVARS_NWORDLISTS] = {
	[NCCLVARS_ALGOS] = WL("algorithm", algo_words, true),
	[NCCLVARS_PROTOS] = WL("protocol", proto_words, true),
	[NCCLVARS_FUNCS] = WL("collective", func_words, true),
	[NCCLVARS_PATHS] = WL("path level", path_words, false),
	[NCCLVARS_LAUNCH_MODES] = WL("launch mode", launch_words, true),
	[NCCLVARS_DEBUG_LEVELS] = WL("debug level", debug_words, true),
};

_Static_assert(sizeof algo_words / sizeof algo_words[0] == NCCLVARS_NALGOS, "algorithms");
_Static_assert(sizeof proto_words / sizeof proto_words[0] == NCCLVARS_NPROTOS, "protocols");
_Static_assert(sizeof func_words / sizeof func_words[0] == NCCLVARS_NFUNCS, "functions");
_Static_assert(sizeof path_words / sizeof path_words[0] == NCCLVARS_NPATHS, "path levels");

/* graph/paths.cc:216 levelsOldToNew: LOC, PIX, PXB, PHB, SYS, SYS. */
static const int path_legacy[NCCLVARS_PATH_LEGACY_MAX + 1] = {0, 4, 5, 8, 9, 9};

static const struct wordlist *wordlist(enum ncclvars_wordlist w)
{
	return (unsigned)w < NCCLVARS_NWORDLISTS ? &wordlists[w] : NULL;
}

size_t ncclvars_word_count(enum ncclvars_wordlist w)
{
	const struct wordlist *l = wordlist(w);

	return l ? l->n : 0;
}

const char *ncclvars_word_name(enum ncclvars_wordlist w, size_t i)
{
	const struct wordlist *l = wordlist(w);

	return l && i < l->n ? l->w[i] : NULL;
}

const char *ncclvars_word_what(enum ncclvars_wordlist w)
{
	const struct wordlist *l = wordlist(w);

	return l ? l->what : "word";
}

int ncclvars_word_find(enum ncclvars_wordlist w, const char *s, size_t len)
{
	const struct wordlist *l = wordlist(w);

	for (size_t i = 0; l && s && i < l->n; i++) {
		if (strlen(l->w[i]) != len)
			continue;
		if ((l->nocase ? strncasecmp(l->w[i], s, len) : strncmp(l->w[i], s, len)) == 0)
			return (int)i;
	}
	return -1;
}

char *ncclvars_word_join(enum ncclvars_wordlist w, char *buf, size_t len)
{
	const struct wordlist *l = wordlist(w);
	size_t used = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; l && i < l->n && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", l->w[i]);

		if (n < 0)
			break;
		used += (size_t)n;
	}
	return buf;
}

int ncclvars_path_legacy(long old)
{
	if (old < 0)
		old = 0;
	return path_legacy[old > NCCLVARS_PATH_LEGACY_MAX ? NCCLVARS_PATH_LEGACY_MAX : old];
}

/* ---- the table ---- */

#define P NCCLVARS_PER_PROCESS
#define C NCCLVARS_PER_COMM_INIT
#define INT(n, lo, hi, step, when, role) \
	{n, NCCLVARS_RULE_INT, lo, hi, step, NCCLVARS_ALGOS, false, when, role}
#define POS(n, role) INT(n, 1, 1LL << 40, 1, P, role)
#define POW2(n, lo, hi) {n, NCCLVARS_RULE_POW2, lo, hi, 1, NCCLVARS_ALGOS, false, P, NCCLVARS_TUNE}
#define BOOL(n, when, role) {n, NCCLVARS_RULE_BOOL, 0, 1, 1, NCCLVARS_ALGOS, false, when, role}
#define WORD(n, w, legacy, when, role) \
	{n, NCCLVARS_RULE_WORD, 0, NCCLVARS_PATH_LEGACY_MAX, 1, w, legacy, when, role}
#define LIST(n, w) {n, NCCLVARS_RULE_LIST, 0, 0, 0, w, false, C, NCCLVARS_TUNE}
#define STR(n, when, role) {n, NCCLVARS_RULE_STRING, 0, 0, 0, NCCLVARS_ALGOS, false, when, role}
#define TUNE NCCLVARS_TUNE
#define SET NCCLVARS_SETTING
#define LOAD NCCLVARS_LOADER
#define DBG NCCLVARS_DEBUG

/* Where NCCL 2.28.9 reads each variable. NCCL_PARAM caches the first read for the
 * process (include/param.h:19-28, misc/param.cc:75-91); the ranges are NCCL's own
 * checks: getNthreads (graph/tuning.cc:16-33, 233-243: NTHREADS a multiple of
 * WARP_SIZE 32 in [64, 512], LL128_NTHREADS in [640/4, 640]), MAXCHANNELS 64
 * (include/device.h:86) for channels and CTAs. */
static const struct ncclvar vars[] = {
	LIST("NCCL_ALGO", NCCLVARS_ALGOS),                        /* graph/tuning.cc:424 */
	LIST("NCCL_PROTO", NCCLVARS_PROTOS),                      /* graph/tuning.cc:419 */
	/* a static cache, set at the first ncclGetLevel (graph/paths.cc:217-252, 257, 454) */
	WORD("NCCL_P2P_LEVEL", NCCLVARS_PATHS, true, P, TUNE),
	WORD("NCCL_NET_GDR_LEVEL", NCCLVARS_PATHS, true, P, TUNE),
	INT("NCCL_NTHREADS", 64, 512, 32, P, TUNE),               /* graph/tuning.cc:13 */
	INT("NCCL_LL128_NTHREADS", 160, 640, 32, P, TUNE),        /* graph/tuning.cc:14 */
	INT("NCCL_MIN_NCHANNELS", 1, 64, 1, P, TUNE),             /* graph/connect.cc:325 */
	INT("NCCL_MAX_NCHANNELS", 1, 64, 1, P, TUNE),             /* graph/connect.cc:326 */
	INT("NCCL_MIN_NRINGS", 1, 64, 1, P, TUNE),                /* graph/connect.cc:322 */
	INT("NCCL_MAX_NRINGS", 1, 64, 1, P, TUNE),                /* graph/connect.cc:323 */
	INT("NCCL_MIN_CTAS", 1, 64, 1, P, TUNE),                  /* init.cc:1416 */
	INT("NCCL_MAX_CTAS", 1, 64, 1, P, TUNE),                  /* init.cc:1415 */
	INT("NCCL_NVLS_NCHANNELS", 1, 64, 1, P, TUNE),            /* init.cc:61 */
	INT("NCCL_NCHANNELS_PER_NET_PEER", 1, 64, 1, P, TUNE),    /* init.cc:1419 */
	INT("NCCL_NVLS_ENABLE", 0, 2, 1, P, TUNE),                /* transport/nvls.cc:152 */
	INT("NCCL_CROSS_NIC", 0, 2, 1, P, SET),                   /* graph/search.cc:15 */
	POS("NCCL_BUFFSIZE", TUNE),                               /* init.cc:700 */
	POS("NCCL_LL_BUFFSIZE", TUNE),                            /* init.cc:701 */
	POS("NCCL_LL128_BUFFSIZE", TUNE),                         /* init.cc:702 */
	POS("NCCL_P2P_NVL_CHUNKSIZE", TUNE),                      /* init.cc:706 */
	POS("NCCL_P2P_PCI_CHUNKSIZE", TUNE),                      /* init.cc:705 */
	POS("NCCL_P2P_NET_CHUNKSIZE", TUNE),                      /* init.cc:704 */
	POS("NCCL_NVLS_CHUNKSIZE", TUNE),                         /* transport/nvls.cc:153 */
	/* init.cc:537-542: not a power of two is ignored (default used), capped at 1 GiB */
	POW2("NCCL_WORK_FIFO_BYTES", 1, 1LL << 30),               /* init.cc:348 */
	POS("NCCL_PROXY_APPEND_BATCH_SIZE", TUNE),                /* proxy.cc:778 */
	/* strtol(str, NULL, 0) == 1 means LOC, in ncclGetLevel (graph/paths.cc:221-224) */
	BOOL("NCCL_P2P_DISABLE", P, TUNE),
	BOOL("NCCL_SHM_DISABLE", P, TUNE),                        /* transport/shm.cc:65 */
	BOOL("NCCL_NET_DISABLE_INTRA", P, TUNE),                  /* graph/paths.cc:533 */
	BOOL("NCCL_P2P_USE_CUDA_MEMCPY", P, TUNE),                /* transport/p2p.cc:115 */
	BOOL("NCCL_SHM_USE_CUDA_MEMCPY", P, TUNE),                /* transport/shm.cc:66 */
	BOOL("NCCL_P2P_READ_ENABLE", P, TUNE),                    /* transport/p2p.cc:308 */
	BOOL("NCCL_P2P_DIRECT_DISABLE", P, TUNE),                 /* transport/p2p.cc:309 */
	BOOL("NCCL_CUMEM_ENABLE", P, TUNE),                       /* misc/cudawrap.cc:15 */
	BOOL("NCCL_CUMEM_HOST_ENABLE", P, TUNE),                  /* misc/cudawrap.cc:16 */
	BOOL("NCCL_GRAPH_MIXING_SUPPORT", P, TUNE),               /* misc/strongstream.cc:157 */
	BOOL("NCCL_GRAPH_REGISTER", P, TUNE),                     /* enqueue.cc:258 */
	BOOL("NCCL_LOCAL_REGISTER", P, TUNE),                     /* register/register.cc:15 */
	BOOL("NCCL_NVB_DISABLE", P, TUNE),                        /* graph/paths.cc:34 */
	BOOL("NCCL_PXN_DISABLE", P, TUNE),                        /* graph/paths.cc:592 */
	BOOL("NCCL_IB_DISABLE", P, SET),                          /* transport/net_ib.cc:507 */
	BOOL("NCCL_NET_GDR_READ", P, TUNE),                       /* graph/paths.cc:411 */
	/* re-read at every init "since users might change the env on the fly" (init.cc:1732) */
	BOOL("NCCL_COLLNET_ENABLE", C, SET),                      /* init.cc:1734 */
	BOOL("NCCL_DMABUF_ENABLE", P, SET),                       /* init.cc:352 */
	BOOL("NCCL_RUNTIME_CONNECT", P, TUNE),                    /* init.cc:57 */
	BOOL("NCCL_NET_SHARED_BUFFERS", P, TUNE),                 /* transport/net.cc:163 */
	BOOL("NCCL_NET_SHARED_COMMS", P, TUNE),                   /* transport/net.cc:164 */
	BOOL("NCCL_ALLOC_P2P_NET_LL_BUFFERS", P, TUNE),           /* init.cc:737 */
	BOOL("NCCL_IGNORE_CPU_AFFINITY", P, SET),                 /* graph/topo.cc:1726 */
	BOOL("NCCL_CHECK_POINTERS", P, SET),                      /* init.cc:55 */
	BOOL("NCCL_SET_THREAD_NAME", P, SET),                     /* debug.cc:417 */
	/* read by the first rank of a node at every init (init.cc:1360-1371) */
	WORD("NCCL_LAUNCH_MODE", NCCLVARS_LAUNCH_MODES, false, C, TUNE),
	/* "%ld %ld %ld %ld %ld %ld", read in ncclTopoTuneModel (graph/tuning.cc:552-555) */
	STR("NCCL_THREAD_THRESHOLDS", C, TUNE),
	/* ncclDebugInit, once per process unless reset (debug.cc:44-66, 73) */
	WORD("NCCL_DEBUG", NCCLVARS_DEBUG_LEVELS, false, P, DBG),
	STR("NCCL_DEBUG_SUBSYS", P, DBG),
	BOOL("NCCL_NVTX_DISABLE", P, DBG),                        /* init_nvtx.cc */
	STR("NCCL_SOCKET_IFNAME", P, SET),                        /* misc/socket.cc:361 */
	STR("NCCL_IB_HCA", P, SET),                               /* transport/net_ib.cc:701 */
	STR("NCCL_IB_TC", P, SET),                                /* transport/net_ib.cc:129 */
	STR("NCCL_IB_SL", P, SET),                                /* transport/net_ib.cc:128 */
	STR("NCCL_IB_GID_INDEX", P, SET),                         /* transport/net_ib.cc:121 */
	STR("NCCL_IB_TIMEOUT", P, SET),                           /* transport/net_ib.cc:124 */
	STR("NCCL_IB_RETRY_CNT", P, SET),                         /* transport/net_ib.cc:125 */
	STR("NCCL_IB_QPS_PER_CONNECTION", P, SET),                /* transport/net_ib.cc:1215 */
	STR("NCCL_SOCKET_NTHREADS", P, SET),                      /* transport/net_socket.cc:141 */
	STR("NCCL_NSOCKS_PERTHREAD", P, SET),                     /* transport/net_socket.cc:140 */
	STR("NCCL_NET", C, SET),                                  /* init.cc:1706 */
	/* files and libraries */
	STR("NCCL_DEBUG_FILE", P, LOAD),                          /* debug.cc:224 */
	STR("NCCL_TOPO_FILE", C, LOAD),                           /* graph/topo.cc:1421 */
	STR("NCCL_TOPO_DUMP_FILE", C, LOAD),                      /* init.cc:976 */
	STR("NCCL_GRAPH_FILE", C, LOAD),                          /* graph/search.cc:1021 */
	STR("NCCL_GRAPH_DUMP_FILE", C, LOAD),                     /* graph/search.cc:1231 */
	STR("NCCL_CONF_FILE", P, LOAD),                           /* misc/param.cc:56 */
	STR("NCCL_NET_PLUGIN", P, LOAD),                          /* plugin/net.cc:289 */
	STR("NCCL_ENV_PLUGIN", P, LOAD),                          /* plugin/env.cc:40 */
	/* looked up while no plugin is loaded; a load, failed or not, is kept
	 * (plugin/tuner.cc:45-56, plugin/profiler.cc:48-54) */
	STR("NCCL_TUNER_PLUGIN", C, LOAD),
	STR("NCCL_PROFILER_PLUGIN", C, LOAD),
	/* read by NCCL's example tuner plugin at its init, not by NCCL (ext-tuner/example) */
	STR("NCCL_TUNER_CONFIG_FILE", C, LOAD),
};

#undef P
#undef C

#define NVARS (sizeof vars / sizeof vars[0])

size_t ncclvars_count(void)
{
	return NVARS;
}

const struct ncclvar *ncclvars_at(size_t i)
{
	return i < NVARS ? &vars[i] : NULL;
}

const struct ncclvar *ncclvars_find(const char *name)
{
	for (size_t i = 0; name && i < NVARS; i++)
		if (strcmp(name, vars[i].name) == 0)
			return &vars[i];
	return NULL;
}

unsigned ncclvars_decides(const char *name)
{
	static const struct { const char *name; unsigned bits; } decides[] = {
		{"NCCL_ALGO", NCCLVARS_DECIDES_ALGO},
		{"NCCL_PROTO", NCCLVARS_DECIDES_PROTO},
		{"NCCL_MIN_NCHANNELS", NCCLVARS_DECIDES_CTAS},
		{"NCCL_MAX_NCHANNELS", NCCLVARS_DECIDES_CTAS},
		{"NCCL_MIN_NRINGS", NCCLVARS_DECIDES_CTAS},
		{"NCCL_MAX_NRINGS", NCCLVARS_DECIDES_CTAS},
		{"NCCL_MIN_CTAS", NCCLVARS_DECIDES_CTAS},
		{"NCCL_MAX_CTAS", NCCLVARS_DECIDES_CTAS},
	};

	for (size_t i = 0; name && i < sizeof decides / sizeof decides[0]; i++)
		if (strcmp(name, decides[i].name) == 0)
			return decides[i].bits;
	return 0;
}

/* Optimal string alignment distance, capped: returns cap+1 as soon as it is exceeded. */
static size_t edit_distance(const char *a, const char *b, size_t cap)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t d[NCCLVARS_NAME_MAX + 1][NCCLVARS_NAME_MAX + 1];

	if (la > NCCLVARS_NAME_MAX || lb > NCCLVARS_NAME_MAX)
		return cap + 1;
	if ((la > lb ? la - lb : lb - la) > cap)
		return cap + 1;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t best = d[i - 1][j] + 1;

			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < best)
				best = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[la][lb];
}

const struct ncclvar *ncclvars_nearest(const char *name, size_t max_edits)
{
	const struct ncclvar *best = NULL;
	size_t bestd = max_edits + 1;

	if (!name || ncclvars_find(name))
		return NULL;
	for (size_t i = 0; i < NVARS; i++) {
		size_t d = edit_distance(name, vars[i].name, max_edits);

		if (d < bestd) {
			bestd = d;
			best = &vars[i];
		}
	}
	return best;
}

int ncclvars_name_check(const char *name, char *why, size_t whylen)
{
	size_t len = name ? strlen(name) : 0;

	if (len <= 5 || strncmp(name, "NCCL_", 5) != 0)
		return fs_errf(why, whylen, "not an NCCL variable (names start with NCCL_)");
	if (len >= NCCLVARS_NAME_MAX)
		return fs_errf(why, whylen, "name longer than %d characters", NCCLVARS_NAME_MAX - 1);
	for (const char *c = name; *c; c++)
		if (!((*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
			return fs_errf(why, whylen, "not an NCCL variable name (A-Z, 0-9 and _ only)");
	return 0;
}

/* A known variable that `name` extends by a short word-like suffix of 1 to 4 characters
 * (NCCL_PROTOCOL, NCCL_ALGOS, NCCL_NTHREADS_MAX: a typo of the known name, which NCCL
 * would ignore), or NULL. The longest such stem wins. */
static const struct ncclvar *known_stem(const char *name)
{
	const struct ncclvar *best = NULL;
	size_t n = strlen(name), bestlen = 0;

	for (size_t i = 0; i < NVARS; i++) {
		size_t k = strlen(vars[i].name);

		if (k < n && n - k <= 4 && k > bestlen && strncmp(name, vars[i].name, k) == 0) {
			best = &vars[i];
			bestlen = k;
		}
	}
	return best;
}

int ncclvars_name_lookup(const char *name, const struct ncclvar **var, char *why,
                         size_t whylen)
{
	const struct ncclvar *near;

	*var = NULL;
	if (ncclvars_name_check(name, why, whylen) < 0)
		return -1;
	*var = ncclvars_find(name);
	if (*var)
		return 0;
	near = ncclvars_nearest(name, 2);
	if (!near)
		near = known_stem(name);
	if (near)
		return fs_errf(why, whylen, "unknown NCCL variable (did you mean %s?)", near->name);
	return 0;
}

/* ---- the list tokenizer ---- */

static int bit_index(unsigned bit)
{
	int i = 0;

	while (bit > 1) {
		bit >>= 1;
		i++;
	}
	return i;
}

/* Record a lint at [at, at+len); the first of each kind is the one explained. */
static void lint(struct ncclvars_list *l, unsigned bit, size_t at, size_t len)
{
	if (!(l->lint & bit)) {
		l->lint_where[bit_index(bit)].at = at;
		l->lint_where[bit_index(bit)].len = len;
	}
	l->lint |= bit;
}

static int list_error(struct ncclvars_list *l, enum ncclvars_list_error e, size_t at,
                      size_t len)
{
	l->error = e;
	l->where.at = at;
	l->where.len = len;
	return -1;
}

/* The names of one list [s, e) (after any '^'), split at ',' as strtok would
 * (graph/tuning.cc:94, 108). Returns the number of names, or -1 on an unknown one. */
static int parse_names(const char *v, size_t s, size_t e, enum ncclvars_wordlist words,
                       struct ncclvars_list *l, uint32_t *mask)
{
	int names = 0;

	*mask = 0;
	for (size_t p = s; p <= e;) {
		size_t q = p;
		int w;

		while (q < e && v[q] != ',')
			q++;
		if (q == p) {
			if (e > s)                       /* a ',' next to nothing */
				lint(l, NCCLVARS_LINT_EMPTY_ITEM, p, 0);
		} else {
			w = ncclvars_word_find(words, v + p, q - p);
			if (w < 0)                       /* graph/tuning.cc:96-105 */
				return list_error(l, NCCLVARS_LIST_UNKNOWN_NAME, p, q - p);
			if (*mask & (1u << w))
				lint(l, NCCLVARS_LINT_REPEAT, p, q - p);
			*mask |= 1u << w;
			names++;
		}
		p = q + 1;
	}
	return names;
}

/* One ';'-separated entry [s, e), non-empty. strtok on ':' (graph/tuning.cc:64-65) takes
 * the first two non-empty ':' pieces as function and names, and drops the rest. */
static int parse_entry(const char *v, size_t s, size_t e, enum ncclvars_wordlist words,
                       struct ncclvars_list *l)
{
	size_t piece[2][2] = {{0, 0}, {0, 0}}, npieces = 0, ls, le;
	bool exclude = false;
	int func = -1, names;
	uint32_t mask;

	for (size_t p = s; p < e;) {
		size_t q = p;

		while (q < e && v[q] != ':')
			q++;
		if (q == p) {
			lint(l, NCCLVARS_LINT_STRAY_COLON, p, 1);
			p++;
			continue;
		}
		if (npieces == 2) {                      /* strtok is never asked again */
			lint(l, NCCLVARS_LINT_STRAY_COLON, p - 1, e - p + 1);
			break;
		}
		piece[npieces][0] = p;
		piece[npieces][1] = q;
		npieces++;
		if (q < e && q + 1 == e)                 /* a trailing ':' */
			lint(l, NCCLVARS_LINT_STRAY_COLON, q, 1);
		p = q + 1;
	}
	if (npieces == 0)                            /* prefix and list both NULL */
		return s == 0 ? list_error(l, NCCLVARS_LIST_ONLY_COLONS, s, e - s)
		              : list_error(l, NCCLVARS_LIST_NEEDS_FUNCTION, s, e - s);
	if (npieces == 1 && s != 0)                  /* graph/tuning.cc:66-74 */
		return list_error(l, NCCLVARS_LIST_NEEDS_FUNCTION, s, e - s);
	if (npieces == 2) {
		func = ncclvars_word_find(NCCLVARS_FUNCS, v + piece[0][0], piece[0][1] - piece[0][0]);
		if (func < 0)                            /* graph/tuning.cc:87-89, 112-116 */
			return list_error(l, NCCLVARS_LIST_UNKNOWN_FUNCTION, piece[0][0],
			                  piece[0][1] - piece[0][0]);
	}
	ls = piece[npieces - 1][0];
	le = piece[npieces - 1][1];
	if (npieces == 1 && le < e && ncclvars_word_find(NCCLVARS_FUNCS, v + ls, le - ls) >= 0 &&
	    ncclvars_word_find(words, v + ls, le - ls) < 0)
		return list_error(l, NCCLVARS_LIST_NO_NAMES, ls, le - ls);
	if (v[ls] == '^') {                          /* graph/tuning.cc:80-84 */
		exclude = true;
		ls++;
	}
	names = parse_names(v, ls, le, words, l, &mask);
	if (names < 0)
		return -1;
	if (names == 0)
		lint(l, NCCLVARS_LINT_NO_NAME, piece[npieces - 1][0], le - piece[npieces - 1][0]);
	for (int f = 0; f < NCCLVARS_NFUNCS; f++) {
		if (func >= 0 && f != func)
			continue;
		l->row[f].set = true;
		l->row[f].exclude = exclude;
		l->row[f].mask = mask;
	}
	l->nentries++;
	return 0;
}

int ncclvars_list_parse(const char *value, enum ncclvars_wordlist words,
                        struct ncclvars_list *out)
{
	size_t n;

	memset(out, 0, sizeof *out);
	if (!value)
		value = "";
	n = strlen(value);
	/* strtok on ';' (graph/tuning.cc:58, 121): empty pieces are skipped, and "first"
	 * means the piece that starts the string (fullToken == fullStr, :67) */
	for (size_t p = 0; p <= n;) {
		size_t q = p;

		while (q < n && value[q] != ';')
			q++;
		if (q == p) {
			if (n > 0 && strspn(value, ";") != n)
				lint(out, NCCLVARS_LINT_EMPTY_ENTRY, p, 0);
		} else if (parse_entry(value, p, q, words, out) < 0) {
			return -1;
		}
		p = q + 1;
	}
	if (out->nentries == 0)
		lint(out, NCCLVARS_LINT_EMPTY, 0, n);
	return 0;
}

/* The earliest lint of l among `lints`, lower bits first on a tie; 0 when none. */
static unsigned earliest_lint(const struct ncclvars_list *l, unsigned lints)
{
	unsigned best = 0;

	for (int i = 0; i < NCCLVARS_NLINTS; i++) {
		unsigned bit = 1u << i;

		if (!(l->lint & lints & bit))
			continue;
		if (!best || l->lint_where[i].at < l->lint_where[bit_index(best)].at)
			best = bit;
	}
	return best;
}

char *ncclvars_list_explain(const struct ncclvars_list *l, const char *value,
                            enum ncclvars_wordlist words, unsigned lints, char *buf,
                            size_t len)
{
	char allowed[160];
	const char *what = ncclvars_word_what(words), *at;
	unsigned bit = l->error == NCCLVARS_LIST_OK ? earliest_lint(l, lints) : 0;
	const struct ncclvars_span *w = bit ? &l->lint_where[bit_index(bit)] : &l->where;
	int n = (int)w->len;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	at = value ? value + w->at : "";
	switch (l->error) {
	case NCCLVARS_LIST_OK:
		break;
	case NCCLVARS_LIST_NEEDS_FUNCTION:
		snprintf(buf, len, "entry '%.*s' after ';' needs a collective prefix (e.g. "
		         "allreduce:)", n, at);
		return buf;
	case NCCLVARS_LIST_UNKNOWN_FUNCTION:
		snprintf(buf, len, "unknown collective '%.*s' (%s)", n, at,
		         ncclvars_word_join(NCCLVARS_FUNCS, allowed, sizeof allowed));
		return buf;
	case NCCLVARS_LIST_UNKNOWN_NAME:
		snprintf(buf, len, "unknown %s '%.*s' (%s)", what, n, at,
		         ncclvars_word_join(words, allowed, sizeof allowed));
		return buf;
	case NCCLVARS_LIST_NO_NAMES:
		snprintf(buf, len, "'%.*s:' names no %s (NCCL would read '%.*s' as one)", n, at,
		         what, n, at);
		return buf;
	case NCCLVARS_LIST_ONLY_COLONS:
		snprintf(buf, len, "entry '%.*s' names neither a collective nor %s %s (NCCL 2.28 "
		         "crashes on it)", n, at, what[0] == 'a' ? "an" : "a", what);
		return buf;
	}
	switch (bit) {
	case NCCLVARS_LINT_EMPTY:
		snprintf(buf, len, "no entry at all");
		break;
	case NCCLVARS_LINT_EMPTY_ENTRY:
		snprintf(buf, len, "empty entry");
		break;
	case NCCLVARS_LINT_EMPTY_ITEM:
		snprintf(buf, len, "empty item in list");
		break;
	case NCCLVARS_LINT_NO_NAME:
		snprintf(buf, len, "'%.*s' names no %s", n, at, what);
		break;
	case NCCLVARS_LINT_STRAY_COLON:
		snprintf(buf, len, "stray '%.*s' (NCCL skips a ':' next to nothing and ignores "
		         "what follows a second ':')", n, at);
		break;
	case NCCLVARS_LINT_REPEAT:
		snprintf(buf, len, "%s '%.*s' named twice", what, n, at);
		break;
	default:
		break;
	}
	return buf;
}

/* ---- the strict value check ---- */

bool ncclvars_parse_decimal(const char *s, long long *out)
{
	const char *p = s;
	long long v = 0;
	bool neg = false;

	if (*p == '-') {
		neg = true;
		p++;
	}
	if (!isdigit((unsigned char)*p) || (p[0] == '0' && p[1] != '\0'))
		return false;
	for (; *p; p++) {
		if (!isdigit((unsigned char)*p) || v > (9007199254740992LL - 9) / 10)
			return false;
		v = v * 10 + (*p - '0');
	}
	*out = neg ? -v : v;
	return !(neg && v == 0);
}

/* NCCL's verdict, and nothing it would skip or ignore: a repeated name is the only
 * thing it tolerates that still reads as written. */
#define STRICT_LINTS (~(unsigned)NCCLVARS_LINT_REPEAT)

static int check_list(const struct ncclvar *v, const char *value, char *why, size_t whylen)
{
	struct ncclvars_list l;
	char msg[256];

	if (ncclvars_list_parse(value, v->words, &l) == 0 && !(l.lint & STRICT_LINTS))
		return 0;
	return fs_errf(why, whylen, "'%s': %s", value,
	               ncclvars_list_explain(&l, value, v->words, STRICT_LINTS, msg, sizeof msg));
}

static int check_word(const struct ncclvar *v, const char *value, char *why, size_t whylen)
{
	char allowed[160];
	long long n;

	if (ncclvars_word_find(v->words, value, strlen(value)) >= 0)
		return 0;
	if (v->legacy_numbers && ncclvars_parse_decimal(value, &n) && n >= v->lo && n <= v->hi)
		return 0;
	ncclvars_word_join(v->words, allowed, sizeof allowed);
	if (v->legacy_numbers)
		return fs_errf(why, whylen, "'%s' is not a %s (%s, or legacy %lld..%lld; "
		               "case-sensitive)", value, ncclvars_word_what(v->words), allowed, v->lo,
		               v->hi);
	return fs_errf(why, whylen, "'%s' is not one of %s", value, allowed);
}

int ncclvars_value_check(const struct ncclvar *v, const char *value, char *why,
                         size_t whylen)
{
	long long n;

	if (!value || !*value)
		return fs_errf(why, whylen, "empty value");
	if (strlen(value) > NCCLVARS_VALUE_MAX)
		return fs_errf(why, whylen, "value longer than %d bytes", NCCLVARS_VALUE_MAX);
	for (const char *c = value; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
			return fs_errf(why, whylen, "control or non-ASCII character (byte 0x%02x) in the "
			               "value", (unsigned char)*c);
	switch (v ? v->rule : NCCLVARS_RULE_STRING) {
	case NCCLVARS_RULE_INT:
	case NCCLVARS_RULE_BOOL:
		if (!ncclvars_parse_decimal(value, &n) || n < v->lo || n > v->hi || (n - v->lo) % v->step)
			return v->step > 1
			       ? fs_errf(why, whylen, "'%s' is not a multiple of %lld in [%lld, %lld]",
			                 value, v->step, v->lo, v->hi)
			       : fs_errf(why, whylen, "'%s' is not an integer in [%lld, %lld]", value,
			                 v->lo, v->hi);
		return 0;
	case NCCLVARS_RULE_POW2:
		if (!ncclvars_parse_decimal(value, &n) || n < v->lo || n > v->hi || (n & (n - 1)) != 0)
			return fs_errf(why, whylen, "'%s' is not a power of two in [%lld, %lld]", value,
			               v->lo, v->hi);
		return 0;
	case NCCLVARS_RULE_WORD:
		return check_word(v, value, why, whylen);
	case NCCLVARS_RULE_LIST:
		return check_list(v, value, why, whylen);
	case NCCLVARS_RULE_STRING:
		for (const char *c = value; *c; c++)
			if (!isalnum((unsigned char)*c) && !strchr("_.,:;^=+/@%-", *c))
				return fs_errf(why, whylen, "'%s': character '%c' is not allowed "
				               "(letters, digits and _.,:;^=+/@%%- only)", value, *c);
		return 0;
	}
	return fs_errf(why, whylen, "internal: unknown rule");
}

const char *ncclvars_loader_refusal(const char *name)
{
	const struct ncclvar *var = ncclvars_find(name);

	if (!var)
		return NULL;
	if (var->role == NCCLVARS_LOADER)
		return strcmp(name, "NCCL_TUNER_PLUGIN") == 0
		       ? "a loader variable: NCCL_TUNER_PLUGIN is set only to nccltune's own "
		         "plugin, by nccltune itself (per-size rules and exports), never from a "
		         "space, a --try or a results file"
		       : "a loader variable (it names a library or a file NCCL opens or writes): "
		         "never searched, tried or exported";
	if (var->role == NCCLVARS_DEBUG)
		return "a logging variable, not a tuning variable: never searched, tried or "
		       "exported";
	return NULL;
}

const char *ncclvars_label(const char *name)
{
	/* NCCL 2.30's source reads no NCCL_VERSION (its version is compiled in) */
	static const char *const labels[] = {"NCCL_VERSION"};

	for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++)
		if (strcmp(name, labels[i]) == 0)
			return "a container label NCCL does not read";
	return NULL;
}

int ncclvars_check(const char *name, const char *value, char *why, size_t whylen)
{
	const struct ncclvar *v;

	if (ncclvars_name_lookup(name, &v, why, whylen) < 0)
		return -1;
	return ncclvars_value_check(v, value, why, whylen);
}

bool ncclvars_same_value(const struct ncclvar *v, const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	if (v && (v->rule == NCCLVARS_RULE_LIST ||
	          (v->rule == NCCLVARS_RULE_WORD && wordlists[v->words].nocase)))
		return strcasecmp(a, b) == 0;
	return strcmp(a, b) == 0;
}
