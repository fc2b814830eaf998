/* test_replay.c - libnccl-tuner-nccltune.so called in the order NCCL calls a tuner plugin,
 * for each ABI generation: NCCL 2.24 (v4: init, getCollInfo per task, destroy), 2.28 (v5:
 * init with commId, the NVL domain and the cost-model constants NCCL owns, getCollInfo,
 * finalize) and 2.30 (v6: init, then per group every getCollInfo first and the chunk
 * queries afterwards, finalize).
 *
 * The group order is NCCL 2.30.7's (src/enqueue.cc): ncclPrepareTasks sorts a group's
 * collectives by traffic, bins them by (function, op, type) in ascending size, merges
 * neighbours within 4x of a bin's first into one getCollInfo of their summed bytes, and
 * queues the tasks CollNet last; scheduleCollTasksToPlan then walks the queue and, per
 * task, asks getChunkSize for each channel share it cuts (Lo, Hi, Mid: nChannels 1, the
 * share's bytes) or, for CollNet, once for the task. The split below is that function's
 * arithmetic, written here; NCCL's own channel heuristic is replaced by a fixed count.
 * 2.24 and 2.28 have no chunk queries; their group walk is taken to be the same (the
 * ABI facts: docs/nccl-facts.md, reference tuner-plugin.md).
 *
 * The promises: a chunk rule reaches exactly its own task's queries when another
 * collective of the group runs another pair; where a query could be two tasks with
 * different chunks, NCCL's chunk stands (never another rule's); each group starts afresh;
 * v5's constants are not written. Usage: test_plugin_replay PATH-TO-libnccl-tuner-nccltune.so */
#include <stdint.h>
#include <unistd.h>

#include "../check.h"
#include "harness.h"

#define NRANKS 8
#define NCHANNELS 16            /* the communicator's channel pool */
#define NCCL_CHUNK 4096         /* what NCCL proposes: a rule's chunk is anything else */
#define MAX_TASKS 8
#define ALLREDUCE 4
#define ESIZE 2                 /* bf16 */
#define MIN_TRAFFIC (32u << 10) /* MinTrafficPerChannel */

static char dir[] = "/tmp/nccltune-plugin-replay-XXXXXX";

/* One collective of a group, and what NCCL made of it. */
struct task {
	size_t count;           /* elements */
	uint64_t traffic;       /* bytes * ncclFuncTrafficPerByte (2 for all-reduce) */
	int algo, proto, nmax;  /* after getCollInfo + topoGetAlgoInfo */
	size_t chunk[3];        /* what getChunkSize left for its Lo, Hi, Mid shares */
	uint64_t share[3];      /* their bytes; 0: no such share */
};

static uint64_t divup(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

/* ncclPrepareTasks for one bin of all-reduces (bf16, sum): ascending, merged within 4x,
 * one getCollInfo per merge. Returns the number of getCollInfo calls. */
static int prepare(const struct h_comm *c, struct task *t, size_t n)
{
	int calls = 0;

	for (size_t i = 1; i < n; i++)   /* the sorter's descending walk, LIFO-binned: ascending */
		for (size_t k = i; k > 0 && t[k - 1].traffic > t[k].traffic; k--) {
			struct task x = t[k];

			t[k] = t[k - 1];
			t[k - 1] = x;
		}
	for (size_t beg = 0; beg < n;) {
		size_t end = beg + 1, count = t[beg].count;
		float cost[H_NA][H_NP];
		int nch = 0, a, p;

		while (end < n && t[end].traffic < 4 * t[beg].traffic)
			count += t[end++].count;
		h_table(H_PCIE, cost);
		CHECK_INT(h_coll(c, ALLREDUCE, count * ESIZE, cost, H_NA, H_NP, 0, &nch), 0);
		CHECK_INT(h_pick(cost, H_NA, H_NP, &a, &p), 0);
		calls++;
		for (size_t k = beg; k < end; k++) {
			t[k].algo = a;
			t[k].proto = p;
			t[k].nmax = nch ? nch : NCHANNELS;
			if (p == 0)
				t[k].traffic *= 4;   /* LL moves four times the bytes */
		}
		beg = end;
	}
	return calls;
}

/* One chunk query as calcCollChunking makes it; NCCL_CHUNK in, the answer out. */
static size_t ask(const struct h_comm *c, const struct task *t, uint64_t bytes)
{
	size_t chunk = NCCL_CHUNK;

	CHECK_INT(c->p->v6->getChunkSize(c->ctx, ALLREDUCE, (size_t)bytes, t->algo, t->proto, 1,
	                                 &chunk), 0);
	return chunk;
}

/* scheduleCollTasksToPlan for tasks of the standard kind (no CollNet, no NVLS): each
 * task's cells spread over the channels at trafficPerChannel, its Lo, Hi and Mid shares
 * asked in that order. */
static void schedule(const struct h_comm *c, struct task *t, size_t n)
{
	uint64_t traffic = 0, per_channel, current = 0;
	int nchannels = 0, channel = 0;

	for (size_t i = 0; i < n; i++) {
		traffic += t[i].traffic > MIN_TRAFFIC ? t[i].traffic : MIN_TRAFFIC;
		nchannels += t[i].nmax;
		nchannels = nchannels < NCHANNELS ? nchannels : NCHANNELS;
	}
	per_channel = divup(traffic / (uint64_t)nchannels, 16) * 16;
	for (size_t i = 0; i < n; i++) {
		uint64_t per_byte = t[i].proto == 0 ? 8 : 2;
		uint64_t cell = divup(divup(MIN_TRAFFIC, per_byte), 16) * 16;
		uint64_t per_cell_elems = cell / ESIZE, cells = divup(t[i].count * ESIZE, cell);
		uint64_t cell_traffic = cell * per_byte;
		uint64_t per_ch = divup(per_channel, cell_traffic), lo, hi, lo_n, hi_n, mid_n;
		long mid;

		per_ch = per_ch < cells ? per_ch : cells;
		lo = channel + 1 == NCHANNELS ? cells : divup(per_channel - current, cell_traffic);
		lo = lo < cells ? lo : cells;
		mid = (long)((cells - lo) / per_ch);
		hi = (cells - lo) % per_ch;
		if (NCHANNELS < channel + (lo != 0) + mid + (hi != 0)) {
			mid = NCHANNELS - channel - 2;
			per_ch = (cells - lo) / (uint64_t)(mid + 1);
			hi = per_ch + (cells - lo) % (uint64_t)(mid + 1);
		}
		if (hi == 0 && mid != 0) {
			hi = per_ch;
			mid--;
		}
		if (lo == 0) {
			channel++;
			if (mid == 0) {
				lo = hi;
				hi = 0;
			} else {
				lo = per_ch;
				mid--;
			}
		}
		lo_n = lo * per_cell_elems;
		hi_n = hi * per_cell_elems;
		mid_n = mid ? per_ch * per_cell_elems : 0;
		if (hi_n)
			hi_n -= cells * per_cell_elems - t[i].count;
		else
			lo_n -= cells * per_cell_elems - t[i].count;
		t[i].share[0] = lo_n * ESIZE;
		t[i].share[1] = hi_n * ESIZE;
		t[i].share[2] = mid_n * ESIZE;
		for (int k = 0; k < 3; k++) {
			CHECK(t[i].share[k] <= t[i].count * ESIZE);
			t[i].chunk[k] = t[i].share[k] ? ask(c, &t[i], t[i].share[k]) : 0;
		}
		if (hi_n) {
			channel += (lo_n != 0) + (int)mid;   /* its channels less the Hi one */
			current = hi * per_cell_elems * ESIZE * per_byte;
		} else if (mid) {
			channel += (lo_n != 0) + (int)mid;
			current = 0;
		} else {
			current += lo * per_cell_elems * ESIZE * per_byte;
		}
		if (current >= per_channel && channel + 1 != NCHANNELS) {
			channel++;
			current = 0;
		}
	}
}

/* A group of all-reduces of these byte sizes through `abi`. */
static void group(const struct h_comm *c, const uint64_t *bytes, size_t n, struct task *t)
{
	memset(t, 0, n * sizeof *t);
	for (size_t i = 0; i < n; i++) {
		t[i].count = bytes[i] / ESIZE;
		t[i].traffic = bytes[i] * 2;
	}
	CHECK_INT(prepare(c, t, n), (int)n);   /* the sizes here are 4x apart: no merging */
	if (c->abi == H_V6)
		schedule(c, t, n);
}

static const struct task *find(const struct task *t, size_t n, uint64_t bytes)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].count * ESIZE == bytes)
			return &t[i];
	CHECK(!"the task is in the group");
	return &t[0];
}

/* Every query of the task got `want` (NCCL_CHUNK: NCCL's), and it had one at least. */
static void expect_chunks(const struct task *t, size_t want, const char *what)
{
	int asked = 0;

	for (int k = 0; k < 3; k++)
		if (t->share[k]) {
			asked++;
			if (t->chunk[k] != want) {
				CHECK_INT(t->chunk[k], want);
				fprintf(stderr, "  ^ %s: share %d of %llu B\n", what, k,
				        (unsigned long long)t->share[k]);
			}
		}
	CHECK(asked > 0);
}

static const char table_text[] =
	"nccltune-tuner/1\n"
	"allreduce * * 43008 43008 ring simple 0 65536\n"       /* 1: a chunk */
	"allreduce * * 1048576 1048576 ring ll 0 0\n"           /* 2: another pair */
	"allreduce * * 16777216 16777216 ring simple 0 131072\n"/* 3: a chunk */
	"allreduce * * 8192 8192 ring simple 0 0\n"             /* 4: NCCL's chunk */
	"allreduce * * 4194304 4194304 ring simple 0 0\n";      /* 5: NCCL's chunk */

/* NCCL 2.30: the chunk of each task of a group. */
static void replay_230(const struct h_plugin *pl)
{
	static const uint64_t a[] = { 1048576, 43008 }, b[] = { 16777216, 8192 }, d[] = { 43008 };
	static const uint64_t e[] = { 4194304, 43008 };
	struct task t[MAX_TASKS];
	struct h_comm c;

	CHECK_INT(h_init(&c, pl, H_V6, 0x2307, NRANKS, 1, h_capture), 0);
	/* 43008 B's rule has a chunk, 1 MiB runs Ring/LL: only 43008 B's shares get it */
	group(&c, a, 2, t);
	CHECK_INT(find(t, 2, 43008)->algo, 1);
	CHECK_INT(find(t, 2, 43008)->proto, 2);
	CHECK_INT(find(t, 2, 1048576)->proto, 0);
	expect_chunks(find(t, 2, 43008), 65536, "43008 B of {1 MiB, 43008 B}");
	expect_chunks(find(t, 2, 1048576), NCCL_CHUNK, "1 MiB of {1 MiB, 43008 B}");
	/* both Ring/Simple: 8192 B's shares could be 16 MiB's too, whose chunk is not 8192
	 * B's: NCCL's chunk; 16 MiB's shares are larger than 8192 B: its own chunk */
	group(&c, b, 2, t);
	expect_chunks(find(t, 2, 8192), NCCL_CHUNK, "8192 B of {16 MiB, 8192 B}");
	expect_chunks(find(t, 2, 16777216), 131072, "16 MiB of {16 MiB, 8192 B}");
	/* both Ring/Simple, the chunk on the smaller: 43008 B's shares could be 4 MiB's, which
	 * has none: NCCL's chunk for both */
	group(&c, e, 2, t);
	expect_chunks(find(t, 2, 43008), NCCL_CHUNK, "43008 B of {4 MiB, 43008 B}");
	expect_chunks(find(t, 2, 4194304), NCCL_CHUNK, "4 MiB of {4 MiB, 43008 B}");
	/* the next group starts afresh */
	group(&c, d, 1, t);
	expect_chunks(&t[0], 65536, "43008 B alone");
	/* more decisions than the plugin keeps for a group (64; merging is off, or symmetric
	 * kernels asked no chunks): every query of that group keeps NCCL's chunk */
	for (int i = 0; i < 65; i++) {
		float cost[H_NA][H_NP];
		int nch = 0;

		h_table(H_PCIE, cost);
		CHECK_INT(h_coll(&c, ALLREDUCE, i < 64 ? 43008 : 4194304, cost, H_NA, H_NP, 0, &nch), 0);
	}
	t[0] = (struct task){ .count = 43008 / ESIZE, .algo = 1, .proto = 2 };
	CHECK_INT(ask(&c, &t[0], 43008), NCCL_CHUNK);
	CHECK_INT(h_log_count(H_WARN), 0);
	CHECK_INT(h_fini(&c), 0);
}

/* NCCL 2.24 (v4) and 2.28 (v5): the same groups, no chunk queries; the pairs apply. */
static void replay_old(const struct h_plugin *pl, enum h_abi abi)
{
	static const uint64_t a[] = { 1048576, 43008, 16777216, 8192 };
	static unsigned char constants[4096], nvl[256];   /* NCCL's, as v5 passes them */
	struct task t[MAX_TASKS];
	struct h_comm c;
	unsigned char zero[sizeof constants] = { 0 };

	c.p = pl;
	c.abi = abi;
	if (abi == H_V4)
		CHECK_INT(pl->v4->init(NRANKS, 1, h_capture, &c.ctx), 0);
	else
		CHECK_INT(pl->v5->init(&c.ctx, 0x2289, NRANKS, 1, h_capture, nvl, constants), 0);
	CHECK(c.ctx != NULL);
	CHECK(memcmp(constants, zero, sizeof constants) == 0);
	group(&c, a, 4, t);
	CHECK_INT(find(t, 4, 43008)->proto, 2);
	CHECK_INT(find(t, 4, 1048576)->proto, 0);
	CHECK_INT(find(t, 4, 16777216)->proto, 2);
	CHECK_INT(find(t, 4, 8192)->proto, 2);
	CHECK_INT(h_fini(&c), 0);
}

int main(int argc, char **argv)
{
	struct h_plugin pl;
	char path[300], cmd[300];

	if (argc != 2) {
		fprintf(stderr, "usage: %s PLUGIN.so\n", argv[0]);
		return 2;
	}
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof path, "%s/table", dir);
	CHECK_INT(h_write_str(path, table_text), 0);
	CHECK_INT(setenv("NCCLTUNE_TUNER_TABLE", path, 1), 0);
	if (h_open(&pl, argv[1]) != 0)
		return 1;
	replay_old(&pl, H_V4);
	replay_old(&pl, H_V5);
	replay_230(&pl);
	dlclose(pl.handle);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
	return check_status();
}
