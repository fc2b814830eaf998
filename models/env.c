/* env.c - read the NCCL_* variables of one configuration exactly as NCCL 2.28 reads them:
 * integer parameters through strtoll(base 0) with NCCL's -2 "unset" sentinel
 * (misc/param.cc), channel limits through ncclMinNchannels/ncclMaxNchannels
 * (graph/connect.cc), NCCL_P2P_LEVEL through ncclGetLevel (graph/paths.cc) and the
 * NCCL_ALGO/NCCL_PROTO lists through parseList (graph/tuning.cc). Re-implemented from
 * reading NCCL's source; no NCCL code is used. */
#include "model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fsutil.h"

enum {
	VAR_ALGO, VAR_PROTO, VAR_NTHREADS, VAR_LL128_NTHREADS, VAR_MIN_NCHANNELS,
	VAR_MAX_NCHANNELS, VAR_MIN_NRINGS, VAR_MAX_NRINGS, VAR_BUFFSIZE, VAR_LL_BUFFSIZE,
	VAR_LL128_BUFFSIZE, VAR_P2P_LEVEL, VAR_P2P_DISABLE, VAR_SHM_DISABLE, VAR_NVLS_ENABLE,
	VAR_THREAD_THRESHOLDS, NVARS
};

static const char *const var_names[NVARS] = {
	"NCCL_ALGO", "NCCL_PROTO", "NCCL_NTHREADS", "NCCL_LL128_NTHREADS", "NCCL_MIN_NCHANNELS",
	"NCCL_MAX_NCHANNELS", "NCCL_MIN_NRINGS", "NCCL_MAX_NRINGS", "NCCL_BUFFSIZE",
	"NCCL_LL_BUFFSIZE", "NCCL_LL128_BUFFSIZE", "NCCL_P2P_LEVEL", "NCCL_P2P_DISABLE",
	"NCCL_SHM_DISABLE", "NCCL_NVLS_ENABLE", "NCCL_THREAD_THRESHOLDS",
};

_Static_assert(NVARS == MODEL_ENV_NVARS, "model.h's MODEL_ENV_NVARS is out of date");

#define MAXCHANNELS 64   /* NCCL's MAXCHANNELS */

static const char *const func_names[] = {
	"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce",
};
#define NFUNCS 5
#define FUNC_ALLREDUCE 4

static const char *const algo_names[MODEL_NALGOS] = {
	"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT",
};
static const char *const proto_names[MODEL_NPROTOS] = { "LL", "LL128", "Simple" };
static const char *const transport_names[MODEL_NTRANSPORTS] = { "nvlink", "p2p", "shm", "net" };

/* topoPathTypeStr, up to SYS: the only words NCCL_P2P_LEVEL accepts (case-sensitive). */
static const char *const path_names[] = {
	"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS",
};
/* Legacy integer levels 0..5 (levelsOldToNew): LOC, PIX, PXB, PHB, SYS, SYS. */
static const int legacy_levels[] = { 0, 4, 5, 8, 9, 9 };

const char *model_algo_name(enum model_algo a)
{
	return (unsigned)a < MODEL_NALGOS ? algo_names[a] : "?";
}

const char *model_proto_name(enum model_proto p)
{
	return (unsigned)p < MODEL_NPROTOS ? proto_names[p] : "?";
}

const char *model_transport_name(enum model_transport t)
{
	return (unsigned)t < MODEL_NTRANSPORTS ? transport_names[t] : "?";
}

const char *model_env_var_name(size_t i)
{
	return i < NVARS ? var_names[i] : NULL;
}

const char *model_getenv_process(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

const char *model_getenv_envp(void *ctx, const char *name)
{
	char *const *envp = ctx;
	size_t n = strlen(name);

	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
			return envp[i] + n + 1;
	return NULL;
}

/* ncclLoadParam: empty or unset -> deflt; otherwise strtoll(str, NULL, 0), which reads
 * "abc" as 0 and "12abc" as 12; only an overflow (errno) falls back to the default. */
static long long param_value(const char *s, long long deflt)
{
	long long v;

	if (!s || !*s)
		return deflt;
	errno = 0;
	v = strtoll(s, NULL, 0);
	return errno ? deflt : v;
}

/* A strtok-alike without strtok's hidden state: skip leading delimiters, return the next
 * token (copied into tok, truncated to toklen-1) and advance *pos; NULL when none left. */
static const char *next_token(const char **pos, const char *delims, char *tok, size_t toklen)
{
	const char *p = *pos;
	size_t n;

	p += strspn(p, delims);
	if (!*p) {
		*pos = p;
		return NULL;
	}
	n = strcspn(p, delims);
	snprintf(tok, toklen, "%.*s", (int)n, p);
	*pos = p + n;
	return tok;
}

/* parseList from graph/tuning.cc on the (function x element) table `list`. Returns 0, or
 * -1 with NCCL's warning text in err (NCCL then fails with ncclInvalidUsage). */
static int parse_list(const char *str, const char *const elems[], int nelems, int *list,
                      char *err, size_t errlen)
{
	const char *full = str;
	char entry[512], prefix_buf[512], elem_buf[512];
	bool first = true;

	while (next_token(&full, ";", entry, sizeof entry)) {
		const char *sub = entry, *prefix, *elem_list, *ep;
		char *pfx;
		int unset = 0, set = 1;
		bool found = false;

		prefix = next_token(&sub, ":", prefix_buf, sizeof prefix_buf);
		pfx = prefix_buf;
		elem_list = next_token(&sub, ":", elem_buf, sizeof elem_buf);
		if (!elem_list) {
			/* strtok_r on ";" skips leading separators, so "first" means the first
			 * token NCCL sees, which is where the unprefixed list is allowed */
			if (!first)
				return fs_errf(err, errlen,
				               "All entries except the first must have a prefix: \"%s\"", str);
			elem_list = pfx;
			prefix = NULL;
		}
		if (elem_list[0] == '^') {
			unset = 1;
			set = 0;
			elem_list++;
		}
		for (int f = 0; f < NFUNCS; f++) {
			char tok[512];

			if (prefix && strcasecmp(prefix, func_names[f]) != 0)
				continue;
			found = true;
			for (int e = 0; e < nelems; e++)
				list[f * nelems + e] = unset;
			ep = elem_list;
			while (next_token(&ep, ",", tok, sizeof tok)) {
				int e;

				for (e = 0; e < nelems; e++) {
					if (strcasecmp(tok, elems[e]) == 0) {
						list[f * nelems + e] = set;
						break;
					}
				}
				if (e == nelems)
					return fs_errf(err, errlen,
					               "Unrecognized element token \"%s\" when parsing \"%s\"",
					               tok, str);
			}
		}
		if (!found)
			return fs_errf(err, errlen, "Unrecognized prefix token \"%s\" when parsing \"%s\"",
			               prefix, str);
		first = false;
	}
	return 0;
}

/* ncclGetLevel: NCCL_P2P_DISABLE=1 means LOC; else an exact path word, else a legacy
 * digit; anything else is ignored (-2: NCCL's default applies). */
static int p2p_level(const char *disable, const char *level)
{
	if (disable && strtol(disable, NULL, 0) == 1)
		return 0;
	if (!level)
		return -2;
	for (size_t i = 0; i < sizeof path_names / sizeof path_names[0]; i++)
		if (strcmp(level, path_names[i]) == 0)
			return (int)i;
	if (level[0] >= '0' && level[0] <= '9') {
		long old = strtol(level, NULL, 0);
		long max_old = (long)(sizeof legacy_levels / sizeof legacy_levels[0]) - 1;

		if (old > max_old)
			old = max_old;
		return legacy_levels[old];
	}
	return -2;
}

/* NCCL_THREAD_THRESHOLDS: sscanf("%ld %ld %ld %ld %ld %ld") into Tree{LL,LL128,Simple},
 * Ring{...}; parsing stops at the first item that is not a number. */
static void thread_thresholds(const char *s, long long out[2][MODEL_NPROTOS])
{
	for (int a = 0; a < 2; a++)
		for (int p = 0; p < MODEL_NPROTOS; p++)
			out[a][p] = -2;
	for (int i = 0; s && i < 2 * MODEL_NPROTOS; i++) {
		char *end;
		long long v;

		errno = 0;
		v = strtoll(s, &end, 10);
		if (end == s)
			break;
		out[i / MODEL_NPROTOS][i % MODEL_NPROTOS] = errno ? -2 : v;
		s = end;
	}
}

void model_env_read(model_getenv_fn get, void *ctx, struct model_env *out)
{
	const char *val[NVARS];
	int proto_table[NFUNCS * MODEL_NPROTOS], algo_table[NFUNCS * MODEL_NALGOS];
	char why[PROTO_ERROR_MAX - 128];
	long long v;

	memset(out, 0, sizeof *out);
	for (int i = 0; i < NVARS; i++) {
		val[i] = get(ctx, var_names[i]);
		out->is_set[i] = val[i] != NULL;
		snprintf(out->raw[i], sizeof out->raw[i], "%s", val[i] ? val[i] : "");
	}

	for (int f = 0; f < NFUNCS; f++) {
		for (int p = 0; p < MODEL_NPROTOS; p++)
			proto_table[f * MODEL_NPROTOS + p] = p == MODEL_PROTO_LL128 ? 2 : 1;
		for (int a = 0; a < MODEL_NALGOS; a++)
			algo_table[f * MODEL_NALGOS + a] = 1;
	}
	/* ncclTopoTuneModel runs inside communicator init: a bad list fails init */
	out->proto_set = val[VAR_PROTO] != NULL;
	out->algo_set = val[VAR_ALGO] != NULL;
	if (out->proto_set &&
	    parse_list(val[VAR_PROTO], proto_names, MODEL_NPROTOS, proto_table, why, sizeof why)) {
		out->init_failed = true;
		fs_errf(out->init_error, sizeof out->init_error,
		        "ncclCommInitRank failed: invalid usage (NCCL_PROTO=%s: %s)",
		        out->raw[VAR_PROTO], why);
	} else if (out->algo_set &&
	           parse_list(val[VAR_ALGO], algo_names, MODEL_NALGOS, algo_table, why, sizeof why)) {
		out->init_failed = true;
		fs_errf(out->init_error, sizeof out->init_error,
		        "ncclCommInitRank failed: invalid usage (NCCL_ALGO=%s: %s)",
		        out->raw[VAR_ALGO], why);
	}
	memcpy(out->proto_enable, proto_table + FUNC_ALLREDUCE * MODEL_NPROTOS,
	       sizeof out->proto_enable);
	memcpy(out->algo_enable, algo_table + FUNC_ALLREDUCE * MODEL_NALGOS,
	       sizeof out->algo_enable);

	out->nthreads = param_value(val[VAR_NTHREADS], -2);
	out->ll128_nthreads = param_value(val[VAR_LL128_NTHREADS], -2);

	/* ncclMinNchannels / ncclMaxNchannels; the NRINGS names are the legacy spelling and
	 * the NCHANNELS ones win. NCCL keeps these in an int. */
	out->min_channels = 0;
	v = param_value(val[VAR_MIN_NRINGS], -2);
	if (v != -2)
		out->min_channels = (int)v;
	v = param_value(val[VAR_MIN_NCHANNELS], -2);
	if (v != -2)
		out->min_channels = (int)v;
	if (out->min_channels > MAXCHANNELS)
		out->min_channels = MAXCHANNELS;
	if (out->min_channels < 0)
		out->min_channels = 0;
	out->max_channels = MAXCHANNELS;
	v = param_value(val[VAR_MAX_NRINGS], -2);
	if (v != -2)
		out->max_channels = (int)v;
	v = param_value(val[VAR_MAX_NCHANNELS], -2);
	if (v != -2)
		out->max_channels = (int)v;
	if (out->max_channels > MAXCHANNELS)
		out->max_channels = MAXCHANNELS;
	if (out->max_channels < 1)
		out->max_channels = 1;

	out->buffsize[MODEL_PROTO_LL] = param_value(val[VAR_LL_BUFFSIZE], -2);
	out->buffsize[MODEL_PROTO_LL128] = param_value(val[VAR_LL128_BUFFSIZE], -2);
	out->buffsize[MODEL_PROTO_SIMPLE] = param_value(val[VAR_BUFFSIZE], -2);
	out->p2p_level = p2p_level(val[VAR_P2P_DISABLE], val[VAR_P2P_LEVEL]);
	out->shm_disable = param_value(val[VAR_SHM_DISABLE], 0) == 1;
	out->nvls_enable = param_value(val[VAR_NVLS_ENABLE], -2);
	thread_thresholds(val[VAR_THREAD_THRESHOLDS], out->thread_thresholds);
}
