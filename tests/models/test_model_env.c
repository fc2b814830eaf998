/* test_model_env.c - the NCCL_* variables read as NCCL 2.28 reads them (models/env.c):
 * integer parsing, channel limits, P2P levels, the NCCL_ALGO/NCCL_PROTO list syntax and
 * the init failures it produces. */
#include <stdint.h>
#include <stdlib.h>

#include "../check.h"
#include "model.h"

static void read_env(struct model_env *e, const char *a, const char *b, const char *c)
{
	char *envp[4] = { (char *)(uintptr_t)a, (char *)(uintptr_t)b, (char *)(uintptr_t)c, NULL };

	model_env_read(model_getenv_envp, envp, e);
}

static void test_defaults(void)
{
	struct model_env e;

	read_env(&e, NULL, NULL, NULL);
	CHECK(!e.init_failed);
	CHECK(!e.algo_set && !e.proto_set);
	CHECK_INT(e.nthreads, -2);
	CHECK_INT(e.min_channels, 0);
	CHECK_INT(e.max_channels, 64);
	CHECK_INT(e.p2p_level, -2);
	CHECK_INT(e.buffsize[MODEL_PROTO_SIMPLE], -2);
	CHECK_INT(e.nvls_enable, -2);
	CHECK_INT(e.proto_enable[MODEL_PROTO_LL], 1);
	CHECK_INT(e.proto_enable[MODEL_PROTO_LL128], 2);   /* "auto" */
	for (int a = 0; a < MODEL_NALGOS; a++)
		CHECK_INT(e.algo_enable[a], 1);
	CHECK(!e.is_set[0]);
}

static void test_lookup(void)
{
	char *envp[] = { "NCCL_ALGO_X=1", "NCCL_ALGOX=2", "NCCL_ALGO=Ring", NULL };

	CHECK_STR(model_getenv_envp(envp, "NCCL_ALGO"), "Ring");
	CHECK(model_getenv_envp(envp, "NCCL_PROTO") == NULL);
	CHECK(model_getenv_envp(NULL, "NCCL_ALGO") == NULL);
	CHECK_STR(model_env_var_name(0), "NCCL_ALGO");
	CHECK(model_env_var_name(MODEL_ENV_NVARS) == NULL);
}

static void test_integers(void)
{
	struct model_env e;

	/* strtoll(base 0): "abc" is 0, hex and octal are read as such, trailing junk ignored */
	read_env(&e, "NCCL_MIN_NCHANNELS=abc", "NCCL_MAX_NCHANNELS=0x10", "NCCL_NTHREADS=010");
	CHECK_INT(e.min_channels, 0);
	CHECK_INT(e.max_channels, 16);
	CHECK_INT(e.nthreads, 8);
	read_env(&e, "NCCL_MAX_NCHANNELS=0", "NCCL_MIN_NCHANNELS=-5", "NCCL_BUFFSIZE=12abc");
	CHECK_INT(e.max_channels, 1);     /* ncclMaxNchannels: below 1 means 1 */
	CHECK_INT(e.min_channels, 0);
	CHECK_INT(e.buffsize[MODEL_PROTO_SIMPLE], 12);
	read_env(&e, "NCCL_MAX_NCHANNELS=100", "NCCL_MIN_NCHANNELS=99", NULL);
	CHECK_INT(e.max_channels, 64);
	CHECK_INT(e.min_channels, 64);
	/* the NCHANNELS spelling wins over the legacy NRINGS one */
	read_env(&e, "NCCL_MAX_NRINGS=3", "NCCL_MAX_NCHANNELS=5", "NCCL_MIN_NRINGS=2");
	CHECK_INT(e.max_channels, 5);
	CHECK_INT(e.min_channels, 2);
	/* empty means unset; an overflow falls back to the default */
	read_env(&e, "NCCL_NTHREADS=", "NCCL_BUFFSIZE=99999999999999999999999", NULL);
	CHECK_INT(e.nthreads, -2);
	CHECK_INT(e.buffsize[MODEL_PROTO_SIMPLE], -2);
	read_env(&e, "NCCL_LL128_BUFFSIZE=122880", "NCCL_LL_BUFFSIZE=65536", "NCCL_SHM_DISABLE=1");
	CHECK_INT(e.buffsize[MODEL_PROTO_LL128], 122880);
	CHECK_INT(e.buffsize[MODEL_PROTO_LL], 65536);
	CHECK(e.shm_disable);
	read_env(&e, "NCCL_THREAD_THRESHOLDS=1 2 3 4 x 6", NULL, NULL);
	CHECK_INT(e.thread_thresholds[0][0], 1);
	CHECK_INT(e.thread_thresholds[1][0], 4);
	CHECK_INT(e.thread_thresholds[1][1], -2);   /* parsing stops at "x" */
	CHECK_INT(e.thread_thresholds[1][2], -2);
}

static void test_p2p_level(void)
{
	struct model_env e;

	read_env(&e, "NCCL_P2P_LEVEL=SYS", NULL, NULL);
	CHECK_INT(e.p2p_level, 9);
	read_env(&e, "NCCL_P2P_LEVEL=PXB", NULL, NULL);
	CHECK_INT(e.p2p_level, 5);
	read_env(&e, "NCCL_P2P_LEVEL=sys", NULL, NULL);   /* case-sensitive: ignored */
	CHECK_INT(e.p2p_level, -2);
	read_env(&e, "NCCL_P2P_LEVEL=3", NULL, NULL);     /* legacy 3 is PHB */
	CHECK_INT(e.p2p_level, 8);
	read_env(&e, "NCCL_P2P_LEVEL=9", NULL, NULL);     /* legacy values cap at 5 = SYS */
	CHECK_INT(e.p2p_level, 9);
	read_env(&e, "NCCL_P2P_LEVEL=SYS", "NCCL_P2P_DISABLE=1", NULL);
	CHECK_INT(e.p2p_level, 0);                        /* DISABLE wins: LOC */
	read_env(&e, "NCCL_P2P_LEVEL=NVL", "NCCL_P2P_DISABLE=0", NULL);
	CHECK_INT(e.p2p_level, 1);
}

static void test_lists(void)
{
	struct model_env e;

	read_env(&e, "NCCL_ALGO=ring", "NCCL_PROTO=LL", NULL);     /* case-insensitive */
	CHECK(!e.init_failed);
	CHECK(e.algo_set && e.proto_set);
	CHECK_INT(e.algo_enable[MODEL_ALGO_RING], 1);
	CHECK_INT(e.algo_enable[MODEL_ALGO_TREE], 0);
	CHECK_INT(e.proto_enable[MODEL_PROTO_LL], 1);
	CHECK_INT(e.proto_enable[MODEL_PROTO_LL128], 0);
	CHECK_INT(e.proto_enable[MODEL_PROTO_SIMPLE], 0);

	read_env(&e, "NCCL_ALGO=^Tree", "NCCL_PROTO=^LL", NULL);
	CHECK(!e.init_failed);
	CHECK_INT(e.algo_enable[MODEL_ALGO_TREE], 0);
	CHECK_INT(e.algo_enable[MODEL_ALGO_RING], 1);
	CHECK_INT(e.proto_enable[MODEL_PROTO_LL], 0);
	CHECK_INT(e.proto_enable[MODEL_PROTO_LL128], 1);   /* named by "^": explicit, no checks */

	read_env(&e, "NCCL_ALGO=ring;allreduce:tree", NULL, NULL);
	CHECK(!e.init_failed);
	CHECK_INT(e.algo_enable[MODEL_ALGO_TREE], 1);
	CHECK_INT(e.algo_enable[MODEL_ALGO_RING], 0);

	read_env(&e, "NCCL_ALGO=broadcast:ring", NULL, NULL);   /* AllReduce keeps the default */
	CHECK(!e.init_failed);
	CHECK_INT(e.algo_enable[MODEL_ALGO_TREE], 1);

	read_env(&e, "NCCL_ALGO=Foo", NULL, NULL);
	CHECK(e.init_failed);
	CHECK_CONTAINS(e.init_error, "ncclCommInitRank");
	CHECK_CONTAINS(e.init_error, "invalid usage");
	CHECK_CONTAINS(e.init_error, "Unrecognized element token \"Foo\"");

	read_env(&e, "NCCL_PROTO=LL,Fast", NULL, NULL);
	CHECK(e.init_failed);
	CHECK_CONTAINS(e.init_error, "NCCL_PROTO=LL,Fast");

	read_env(&e, "NCCL_ALGO=foo:ring", NULL, NULL);
	CHECK(e.init_failed);
	CHECK_CONTAINS(e.init_error, "Unrecognized prefix token \"foo\"");

	read_env(&e, "NCCL_ALGO=allreduce:tree;ring", NULL, NULL);
	CHECK(e.init_failed);
	CHECK_CONTAINS(e.init_error, "All entries except the first must have a prefix");
}

int main(void)
{
	test_defaults();
	test_lookup();
	test_integers();
	test_p2p_level();
	test_lists();
	return check_status();
}
