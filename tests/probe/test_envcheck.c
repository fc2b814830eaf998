/* test_envcheck.c - NCCL variables judged before NCCL starts: what NCCL's own parser
 * accepts must pass, what it would reject (or silently replace) must fail with a
 * message naming the variable and the value. */
#include "../check.h"
#include "envcheck.h"

/* A one-variable environment. */
struct one { const char *name, *value; };

static const char *get_one(const char *name, void *arg)
{
	const struct one *e = arg;

	return strcmp(name, e->name) == 0 ? e->value : NULL;
}

static int check(const char *name, const char *value, char *err, size_t errlen)
{
	struct one e = {name, value};

	err[0] = '\0';
	return envcheck_run(get_one, &e, err, errlen);
}

int main(void)
{
	char err[512];
	static const char *const good_algo[] = {
		"Ring", "ring", "Tree", "Ring,Tree", "^NVLS", "^NVLS,NVLSTree", "CollNetDirect",
		"collnetchain", "PAT", "ring;allreduce:tree", "allreduce:tree", "Ring,;", "",
		"ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring",
	};
	static const char *const good_proto[] = {
		"LL", "ll128", "Simple", "LL,Simple", "^LL128", "LL,Simple;allreduce:^LL",
		"^LL128;allreduce:LL128",
	};

	for (size_t i = 0; i < sizeof good_algo / sizeof good_algo[0]; i++) {
		CHECK_INT(check("NCCL_ALGO", good_algo[i], err, sizeof err), 0);
		CHECK_STR(err, "");
	}
	for (size_t i = 0; i < sizeof good_proto / sizeof good_proto[0]; i++)
		CHECK_INT(check("NCCL_PROTO", good_proto[i], err, sizeof err), 0);

	CHECK_INT(check("NCCL_PROTO", "Bogus", err, sizeof err), -1);
	CHECK_STR(err, "NCCL_PROTO=Bogus: unknown protocol 'Bogus' (LL, LL128, Simple) "
	          "(--no-env-check skips this check)");
	CHECK_INT(check("NCCL_ALGO", "Bogus", err, sizeof err), -1);
	CHECK_CONTAINS(err, "NCCL_ALGO=Bogus: unknown algorithm 'Bogus'");
	CHECK_INT(check("NCCL_ALGO", "Ring,Trees", err, sizeof err), -1);
	CHECK_CONTAINS(err, "'Trees'");
	CHECK_INT(check("NCCL_ALGO", "ring;tree", err, sizeof err), -1);
	CHECK_CONTAINS(err, "needs a collective prefix");
	CHECK_INT(check("NCCL_ALGO", "allgatherv:ring", err, sizeof err), -1);
	CHECK_CONTAINS(err, "unknown collective 'allgatherv'");
	CHECK_INT(check("NCCL_PROTO", "^LL256", err, sizeof err), -1);
	/* NCCL refuses these two; the probe used to let them through */
	CHECK_INT(check("NCCL_ALGO", ";Ring", err, sizeof err), -1);
	CHECK_CONTAINS(err, "NCCL_ALGO=;Ring: entry 'Ring' after ';' needs a collective prefix");
	CHECK_INT(check("NCCL_ALGO", "allreduce:", err, sizeof err), -1);
	CHECK_CONTAINS(err, "'allreduce:' names no algorithm");
	/* NCCL would ignore ":tree": refused, so that what runs is what was written */
	CHECK_INT(check("NCCL_ALGO", "allreduce:ring:tree", err, sizeof err), -1);
	CHECK_CONTAINS(err, "stray ':tree'");
	CHECK_INT(check("NCCL_PROTO", ":", err, sizeof err), -1);
	CHECK_CONTAINS(err, "NCCL 2.28 crashes on it");

	CHECK_INT(check("NCCL_MAX_NCHANNELS", "2", err, sizeof err), 0);
	CHECK_INT(check("NCCL_BUFFSIZE", "0x20000", err, sizeof err), 0);
	CHECK_INT(check("NCCL_NTHREADS", "64", err, sizeof err), 0);
	CHECK_INT(check("NCCL_NTHREADS", "sixty-four", err, sizeof err), -1);
	CHECK_STR(err, "NCCL_NTHREADS=sixty-four: not an integer (NCCL would silently use its "
	          "default)");
	CHECK_INT(check("NCCL_BUFFSIZE", "128K", err, sizeof err), -1);
	CHECK_INT(check("NCCL_MIN_NCHANNELS", "", err, sizeof err), -1);
	CHECK_INT(check("NCCL_NVLS_ENABLE", " 0", err, sizeof err), -1);

	CHECK_INT(check("NCCL_P2P_LEVEL", "SYS", err, sizeof err), 0);
	CHECK_INT(check("NCCL_P2P_LEVEL", "PXB", err, sizeof err), 0);
	CHECK_INT(check("NCCL_P2P_LEVEL", "3", err, sizeof err), 0);
	CHECK_INT(check("NCCL_P2P_LEVEL", "sys", err, sizeof err), -1);
	CHECK_CONTAINS(err, "NCCL_P2P_LEVEL=sys: not one of LOC, NVL");
	CHECK_INT(check("NCCL_P2P_LEVEL", "9", err, sizeof err), -1);

	CHECK_INT(check("NCCL_NET_GDR_LEVEL", "PHB", err, sizeof err), 0);
	CHECK_INT(check("NCCL_NET_GDR_LEVEL", "phb", err, sizeof err), -1);
	CHECK_CONTAINS(err, "NCCL_NET_GDR_LEVEL=phb: not one of LOC");

	/* every tuning variable of the table is judged by its rule */
	CHECK_INT(check("NCCL_P2P_READ_ENABLE", "yes", err, sizeof err), -1);
	CHECK_STR(err, "NCCL_P2P_READ_ENABLE=yes: not an integer (NCCL would silently use its "
	          "default)");
	CHECK_INT(check("NCCL_WORK_FIFO_BYTES", "0x100000", err, sizeof err), 0);
	CHECK_INT(check("NCCL_LAUNCH_MODE", "group", err, sizeof err), 0);
	CHECK_INT(check("NCCL_LAUNCH_MODE", "SERIAL", err, sizeof err), -1);
	CHECK_STR(err, "NCCL_LAUNCH_MODE=SERIAL: not one of PARALLEL, GROUP (NCCL would silently "
	          "use PARALLEL)");
	/* site settings, files and logging are left to NCCL */
	CHECK_INT(check("NCCL_IB_DISABLE", "yes", err, sizeof err), 0);
	CHECK_INT(check("NCCL_SOCKET_IFNAME", "eth 0", err, sizeof err), 0);
	CHECK_INT(check("NCCL_DEBUG", "LOUD", err, sizeof err), 0);
	CHECK_INT(check("NCCL_THREAD_THRESHOLDS", "x", err, sizeof err), 0);

	/* variables nobody set are fine */
	CHECK_INT(check("UNRELATED", "x", err, sizeof err), 0);
	return check_status();
}
