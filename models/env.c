/* env.c - read the NCCL_* variables of one configuration exactly as NCCL 2.28 reads them:
 * integer parameters through strtoll(base 0) with NCCL's -2 "unset" sentinel
 * (misc/param.cc), channel limits through ncclMinNchannels/ncclMaxNchannels
 * (graph/connect.cc), NCCL_P2P_LEVEL through ncclGetLevel (graph/paths.cc) and the
 * NCCL_ALGO/NCCL_PROTO lists through parseList (graph/tuning.cc), whose tokenizer and
 * word lists are common/ncclvars'. Re-implemented from reading NCCL's source; no NCCL
 * code is used. */
#include "model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fsutil.h"
#include "ncclvars.h"

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

_Static_assert((int)MODEL_NALGOS == (int)NCCLVARS_NALGOS, "model.h's algorithms are NCCL's");
_Static_assert((int)MODEL_NPROTOS == (int)NCCLVARS_NPROTOS, "model.h's protocols are NCCL's");
_Static_assert((int)MODEL_ALGO_PAT == (int)NCCLVARS_ALGO_PAT, "NCCL's algorithm order");
_Static_assert((int)MODEL_PROTO_SIMPLE == (int)NCCLVARS_PROTO_SIMPLE, "NCCL's protocol order");

static const char *const transport_names[MODEL_NTRANSPORTS] = { "nvlink", "p2p", "shm", "net" };

const char *model_algo_name(enum model_algo a)
{
	const char *n = ncclvars_word_name(NCCLVARS_ALGOS, (size_t)a);

	return n ? n : "?";
}

const char *model_proto_name(enum model_proto p)
{
	const char *n = ncclvars_word_name(NCCLVARS_PROTOS, (size_t)p);

	return n ? n : "?";
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

/* parseList from graph/tuning.cc onto the (function x element) table `list` (NCCL's
 * defaults on entry), through the shared tokenizer. Returns 0, or -1 with NCCL's warning
 * text in err (NCCL then fails with ncclInvalidUsage). */
static int parse_list(const char *str, enum ncclvars_wordlist words, int *list, char *err,
                      size_t errlen)
{
	struct ncclvars_list l;
	int nelems = (int)ncclvars_word_count(words);
	const char *at;
	int n;

	if (ncclvars_list_parse(str, words, &l) == 0) {
		for (int f = 0; f < NCCLVARS_NFUNCS; f++) {
			if (!l.row[f].set)
				continue;
			for (int e = 0; e < nelems; e++) {
				bool named = (l.row[f].mask >> e) & 1u;

				list[f * nelems + e] = named != l.row[f].exclude;
			}
		}
		return 0;
	}
	at = str + l.where.at;
	n = (int)l.where.len;
	switch (l.error) {
	case NCCLVARS_LIST_NEEDS_FUNCTION:
		return fs_errf(err, errlen, "All entries except the first must have a prefix: \"%s\"",
		               str);
	case NCCLVARS_LIST_UNKNOWN_FUNCTION:
		return fs_errf(err, errlen, "Unrecognized prefix token \"%.*s\" when parsing \"%s\"",
		               n, at, str);
	case NCCLVARS_LIST_ONLY_COLONS:
		/* NCCL 2.28.9 reads through a NULL pointer here (tuning.cc:80): a real process
		 * dies; the model fails the init instead */
		return fs_errf(err, errlen, "NCCL 2.28 would crash parsing \"%s\" (an entry of "
		               "only ':')", str);
	default:
		return fs_errf(err, errlen, "Unrecognized element token \"%.*s\" when parsing "
		               "\"%s\"", n, at, str);
	}
}

/* ncclGetLevel: NCCL_P2P_DISABLE=1 means LOC; else an exact path word, else a legacy
 * digit; anything else is ignored (-2: NCCL's default applies). */
static int p2p_level(const char *disable, const char *level)
{
	int i;

	if (disable && strtol(disable, NULL, 0) == 1)
		return 0;
	if (!level)
		return -2;
	i = ncclvars_word_find(NCCLVARS_PATHS, level, strlen(level));
	if (i >= 0)
		return i;
	if (level[0] >= '0' && level[0] <= '9')
		return ncclvars_path_legacy(strtol(level, NULL, 0));
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
	int proto_table[NCCLVARS_NFUNCS * MODEL_NPROTOS], algo_table[NCCLVARS_NFUNCS * MODEL_NALGOS];
	char why[PROTO_ERROR_MAX - 128];
	long long v;

	memset(out, 0, sizeof *out);
	for (int i = 0; i < NVARS; i++) {
		val[i] = get(ctx, var_names[i]);
		out->is_set[i] = val[i] != NULL;
		snprintf(out->raw[i], sizeof out->raw[i], "%s", val[i] ? val[i] : "");
	}

	for (int f = 0; f < NCCLVARS_NFUNCS; f++) {
		for (int p = 0; p < MODEL_NPROTOS; p++)
			proto_table[f * MODEL_NPROTOS + p] = p == MODEL_PROTO_LL128 ? 2 : 1;
		for (int a = 0; a < MODEL_NALGOS; a++)
			algo_table[f * MODEL_NALGOS + a] = 1;
	}
	/* ncclTopoTuneModel runs inside communicator init: a bad list fails init */
	out->proto_set = val[VAR_PROTO] != NULL;
	out->algo_set = val[VAR_ALGO] != NULL;
	if (out->proto_set &&
	    parse_list(val[VAR_PROTO], NCCLVARS_PROTOS, proto_table, why, sizeof why)) {
		out->init_failed = true;
		fs_errf(out->init_error, sizeof out->init_error,
		        "ncclCommInitRank failed: invalid usage (NCCL_PROTO=%s: %s)",
		        out->raw[VAR_PROTO], why);
	} else if (out->algo_set &&
	           parse_list(val[VAR_ALGO], NCCLVARS_ALGOS, algo_table, why, sizeof why)) {
		out->init_failed = true;
		fs_errf(out->init_error, sizeof out->init_error,
		        "ncclCommInitRank failed: invalid usage (NCCL_ALGO=%s: %s)",
		        out->raw[VAR_ALGO], why);
	}
	memcpy(out->proto_enable, proto_table + NCCLVARS_FUNC_ALLREDUCE * MODEL_NPROTOS,
	       sizeof out->proto_enable);
	memcpy(out->algo_enable, algo_table + NCCLVARS_FUNC_ALLREDUCE * MODEL_NALGOS,
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
