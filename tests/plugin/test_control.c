/* test_control.c - the control interface (plugin/nccltune_tuner.h) as the probe's
 * in-process sweep will use it: the plugin file dlopen'd by path (a second dlopen gives
 * the same object, as NCCL's would), a forced answer that overrides the table, the
 * IGNORE rules for a forced pair, clearing it, recording off by default, the bounded ring
 * (oldest dropped, counted), draining, and concurrent callers.
 * Usage: test_plugin_control PATH-TO-libnccl-tuner-nccltune.so */
#include <pthread.h>
#include <unistd.h>

#include "../check.h"
#include "harness.h"
#include "nccltune_tuner.h"

static char dir[] = "/tmp/nccltune-plugin-control-XXXXXX";
static struct h_plugin pl;

static int (*ctl_version)(void);
static int (*ctl_force)(const struct nccltune_tuner_force *);
static void (*ctl_record)(int);
static size_t (*ctl_decisions)(struct nccltune_tuner_decision *, size_t);
static uint64_t (*ctl_dropped)(void);

/* One call on a fresh table of `kind`; the table and *nch are returned. */
static void call(const struct h_comm *c, int coll, size_t bytes, enum h_kind kind,
                 float t[H_NA][H_NP], int *nch)
{
	h_table(kind, t);
	*nch = 0;
	CHECK_INT(h_coll(c, coll, bytes, t, H_NA, H_NP, 0, nch), 0);
}

static void check_decision(const struct nccltune_tuner_decision *d, int coll, uint64_t bytes,
                           int nccl_algo, int nccl_proto, int algo, int proto, int nch,
                           int rule, int status)
{
	CHECK_INT(d->coll, coll);
	CHECK_INT(d->bytes, bytes);
	CHECK_INT(d->nccl_algo, nccl_algo);
	CHECK_INT(d->nccl_proto, nccl_proto);
	CHECK_INT(d->algo, algo);
	CHECK_INT(d->proto, proto);
	CHECK_INT(d->nchannels, nch);
	CHECK_INT(d->rule, rule);
	CHECK_INT(d->status, status);
}

static void force_and_record(void)
{
	struct nccltune_tuner_force f;
	struct nccltune_tuner_decision d[16];
	struct h_comm c, v4;
	float t[H_NA][H_NP];
	int nch, a, p;
	size_t cs;

	h_log_reset();
	CHECK_INT(h_init(&c, &pl, H_V6, 0xabcdef, 8, 1, h_capture), 0);
	CHECK_INT(h_init(&v4, &pl, H_V4, 0, 2, 2, h_capture), 0);
	/* off by default: nothing recorded, the table answers */
	call(&c, 4, 43008, H_PCIE, t, &nch);
	CHECK_INT(nch, 2);
	CHECK_INT(ctl_decisions(NULL, 0), 0);
	CHECK_INT(ctl_decisions(d, 16), 0);

	/* out-of-range fields are refused and leave no force behind */
	f = (struct nccltune_tuner_force){ 5, 1, 0, 0, 0 };
	CHECK_INT(ctl_force(&f), -1);
	f = (struct nccltune_tuner_force){ 4, 7, 0, 0, 0 };
	CHECK_INT(ctl_force(&f), -1);
	f = (struct nccltune_tuner_force){ 4, 1, 3, 0, 0 };
	CHECK_INT(ctl_force(&f), -1);
	f = (struct nccltune_tuner_force){ 4, 1, 0, 65, 0 };
	CHECK_INT(ctl_force(&f), -1);
	f = (struct nccltune_tuner_force){ 4, 1, 0, -1, 0 };
	CHECK_INT(ctl_force(&f), -1);
	f = (struct nccltune_tuner_force){ 4, 1, 0, 0, 1ull << 31 };
	CHECK_INT(ctl_force(&f), -1);
	call(&c, 4, 43008, H_PCIE, t, &nch);
	CHECK_INT(nch, 2);

	ctl_record(1);
	/* force Tree/LL with 8 CTAs on all-reduce: it beats the table's Tree/Simple, 2 CTAs */
	f = (struct nccltune_tuner_force){ NCCLTUNE_TUNER_COLL_ALLREDUCE, NCCLTUNE_TUNER_ALGO_TREE,
	                                   NCCLTUNE_TUNER_PROTO_LL, 8, 65536 };
	CHECK_INT(ctl_force(&f), 0);
	call(&c, 4, 43008, H_PCIE, t, &nch);
	CHECK_INT(nch, 8);
	CHECK(h_unique_min(t, H_NA, H_NP, 0, 0));
	cs = 4096;   /* the forced chunk reaches getChunkSize for the pair NCCL runs */
	CHECK_INT(pl.v6->getChunkSize(c.ctx, 4, 10752, 0, 0, 8, &cs), 0);
	CHECK_INT(cs, 65536);
	/* another collective is not forced: broadcast has no rule either */
	call(&c, 0, 100, H_PCIE, t, &nch);
	CHECK_INT(nch, 0);
	/* a forced pair that is IGNORE: not applied, recorded as such, no warning */
	f = (struct nccltune_tuner_force){ 4, NCCLTUNE_TUNER_ALGO_RING, NCCLTUNE_TUNER_PROTO_LL128, 4, 0 };
	CHECK_INT(ctl_force(&f), 0);
	{
		float in[H_NA][H_NP];

		call(&c, 4, 43008, H_PCIE, t, &nch);
		h_table(H_PCIE, in);
		CHECK(memcmp(t, in, sizeof t) == 0);
		CHECK_INT(nch, 0);
	}
	/* every collective (coll ANY), cheapest Simple: Ring/Simple on PCIe; unknown coll 9 untouched */
	f = (struct nccltune_tuner_force){ NCCLTUNE_TUNER_ANY, NCCLTUNE_TUNER_ANY,
	                                   NCCLTUNE_TUNER_PROTO_SIMPLE, 0, 0 };
	CHECK_INT(ctl_force(&f), 0);
	call(&v4, 0, 100, H_PCIE, t, &nch);
	CHECK(h_unique_min(t, H_NA, H_NP, 1, 2));
	call(&v4, 9, 100, H_PCIE, t, &nch);
	CHECK_INT(h_pick(t, H_NA, H_NP, &a, &p), 0);
	CHECK_INT(a * 10 + p, 10);
	/* cleared: the table again */
	CHECK_INT(ctl_force(NULL), 0);
	call(&c, 4, 43008, H_PCIE, t, &nch);
	CHECK_INT(nch, 2);
	CHECK(h_unique_min(t, H_NA, H_NP, 0, 2));

	CHECK_INT(ctl_decisions(NULL, 0), 6);
	CHECK_INT(ctl_decisions(d, 16), 6);
	CHECK_INT(ctl_decisions(NULL, 0), 0);
	/* NCCL's own pick on PCIe is Ring/LL (15.4) */
	check_decision(&d[0], 4, 43008, 1, 0, 0, 0, 8, -1, NCCLTUNE_TUNER_APPLIED);
	check_decision(&d[1], 0, 100, 1, 0, 1, 0, 0, 0, NCCLTUNE_TUNER_NO_RULE);
	check_decision(&d[2], 4, 43008, 1, 0, 1, 0, 0, -1, NCCLTUNE_TUNER_IGNORED);
	check_decision(&d[3], 0, 100, 1, 0, 1, 2, 0, -1, NCCLTUNE_TUNER_APPLIED);
	check_decision(&d[4], 9, 100, 1, 0, 1, 0, 0, 0, NCCLTUNE_TUNER_NO_RULE);
	check_decision(&d[5], 4, 43008, 1, 0, 0, 2, 2, 1, NCCLTUNE_TUNER_APPLIED);
	CHECK_INT(d[0].comm_id, 0xabcdef);
	CHECK_INT(d[0].nranks, 8);
	CHECK_INT(d[0].nnodes, 1);
	CHECK_INT(d[3].comm_id, 0);        /* v4 has no commId */
	CHECK_INT(d[3].nranks, 2);
	CHECK_INT(d[3].nnodes, 2);
	CHECK_INT(h_log_count(H_WARN), 0);
	CHECK_INT(ctl_dropped(), 0);

	/* the ring keeps the newest NCCLTUNE_TUNER_RECORD_MAX, counting the rest */
	for (size_t i = 0; i < NCCLTUNE_TUNER_RECORD_MAX + 6; i++)
		call(&c, 2, i, H_NVLINK, t, &nch);
	CHECK_INT(ctl_decisions(NULL, 0), NCCLTUNE_TUNER_RECORD_MAX);
	CHECK_INT(ctl_dropped(), 6);
	CHECK_INT(ctl_decisions(d, 10), 10);
	CHECK_INT(d[0].bytes, 6);
	CHECK_INT(d[9].bytes, 15);
	CHECK_INT(ctl_decisions(NULL, 0), NCCLTUNE_TUNER_RECORD_MAX - 10);
	/* stopping keeps what is there; nothing new comes in */
	ctl_record(0);
	call(&c, 2, 999999, H_NVLINK, t, &nch);
	CHECK_INT(ctl_decisions(NULL, 0), NCCLTUNE_TUNER_RECORD_MAX - 10);
	while (ctl_decisions(d, 16) > 0)
		CHECK(d[0].bytes != 999999);
	CHECK_INT(ctl_dropped(), 6);
	/* starting again empties the ring and the count */
	call(&c, 2, 1, H_NVLINK, t, &nch);
	ctl_record(1);
	CHECK_INT(ctl_dropped(), 0);
	CHECK_INT(ctl_decisions(NULL, 0), 0);
	call(&c, 2, 1, H_NVLINK, t, &nch);
	CHECK_INT(ctl_decisions(d, 16), 1);
	check_decision(&d[0], 2, 1, 4, 2, 4, 2, 0, 0, NCCLTUNE_TUNER_NO_RULE);
	ctl_record(0);
	CHECK_INT(h_fini(&c), 0);
	CHECK_INT(h_fini(&v4), 0);
}

/* Without a table: NO_TABLE, unless forced. */
static void no_table(void)
{
	struct nccltune_tuner_force f = { 4, 1, 0, 0, 0 };
	struct nccltune_tuner_decision d[4];
	struct h_comm c;
	float t[H_NA][H_NP];
	int nch;

	CHECK_INT(unsetenv("NCCLTUNE_TUNER_TABLE"), 0);
	CHECK_INT(h_init(&c, &pl, H_V5, 3, 8, 1, NULL), 0);
	ctl_record(1);
	call(&c, 4, 43008, H_NVLINK, t, &nch);
	CHECK_INT(ctl_force(&f), 0);
	call(&c, 4, 43008, H_NVLINK, t, &nch);
	CHECK(h_unique_min(t, H_NA, H_NP, 1, 0));
	CHECK_INT(ctl_force(NULL), 0);
	CHECK_INT(ctl_decisions(d, 4), 2);
	check_decision(&d[0], 4, 43008, 4, 2, 4, 2, 0, 0, NCCLTUNE_TUNER_NO_TABLE);
	check_decision(&d[1], 4, 43008, 4, 2, 1, 0, 0, -1, NCCLTUNE_TUNER_APPLIED);
	ctl_record(0);
	CHECK_INT(h_fini(&c), 0);
}

#define THREADS 4
#define CALLS 300

static void *worker(void *arg)
{
	struct h_comm c;
	float t[H_NA][H_NP];
	int nch, bad = 0;

	(void)arg;
	if (h_init(&c, &pl, H_V6, 42, 8, 1, NULL) != 0)
		return (void *)1;
	for (int i = 0; i < CALLS; i++) {
		h_table(H_NVLINK, t);
		nch = 0;
		bad |= h_coll(&c, 4, 43008, t, H_NA, H_NP, 0, &nch) != 0;
		bad |= nch != 0 && nch != 8 && nch != 2;
	}
	h_fini(&c);
	return bad ? (void *)1 : NULL;
}

/* Several threads calling while another forces and clears: every call is counted. */
static void threads(void)
{
	struct nccltune_tuner_force f = { 4, 1, 0, 8, 0 };
	struct nccltune_tuner_decision d[64];
	pthread_t th[THREADS];
	size_t total = 0, n;

	ctl_record(1);
	for (int i = 0; i < THREADS; i++)
		CHECK_INT(pthread_create(&th[i], NULL, worker, NULL), 0);
	for (int i = 0; i < 200; i++) {
		CHECK_INT(ctl_force(i % 2 ? NULL : &f), 0);
		n = ctl_decisions(d, 64);
		for (size_t k = 0; k < n; k++)
			CHECK(d[k].status == NCCLTUNE_TUNER_APPLIED);
		total += n;
	}
	for (int i = 0; i < THREADS; i++) {
		void *ret;

		CHECK_INT(pthread_join(th[i], &ret), 0);
		CHECK(ret == NULL);
	}
	while ((n = ctl_decisions(d, 64)) > 0)
		total += n;
	CHECK_INT(total + ctl_dropped(), THREADS * CALLS);
	CHECK_INT(ctl_force(NULL), 0);
	ctl_record(0);
}

int main(int argc, char **argv)
{
	char path[300], cmd[300];
	void *again;

	if (argc != 2) {
		fprintf(stderr, "usage: %s PLUGIN.so\n", argv[0]);
		return 2;
	}
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof path, "%s/table.txt", dir);
	CHECK_INT(h_write_str(path, "nccltune-tuner/1\nallreduce * * 0 1000000 tree simple 2 0\n"), 0);
	CHECK_INT(setenv("NCCLTUNE_TUNER_TABLE", path, 1), 0);
	if (h_open(&pl, argv[1]) != 0)
		return 1;
	/* the probe's dlopen of the same path gets NCCL's object, so they share the globals */
	again = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	CHECK(again == pl.handle);
	/* POSIX's way to store a dlsym result in a function pointer */
	*(void **)&ctl_version = h_sym(&pl, "nccltune_tuner_control_version");
	*(void **)&ctl_force = h_sym(&pl, "nccltune_tuner_force");
	*(void **)&ctl_record = h_sym(&pl, "nccltune_tuner_record");
	*(void **)&ctl_decisions = h_sym(&pl, "nccltune_tuner_decisions");
	*(void **)&ctl_dropped = h_sym(&pl, "nccltune_tuner_dropped");
	if (!ctl_version || !ctl_force || !ctl_record || !ctl_decisions || !ctl_dropped)
		return 1;
	CHECK_INT(ctl_version(), NCCLTUNE_TUNER_CONTROL_VERSION);
	CHECK_INT(ctl_version(), 1);
	force_and_record();
	threads();
	no_table();
	dlclose(again);
	dlclose(pl.handle);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
	return check_status();
}
