/* test_abi.c - libnccl-tuner-nccltune.so as NCCL drives it, through each of its three
 * ABIs: a table of eight rules against every collective value 0..15, sizes 0, 1, 43008
 * and 2^40, regBuff 0/1, nRanks 1/2/8, nNodes 1/2 and five cost tables like NCCL's
 * (PCIe without LL128, NVSwitch with NVLS, NCCL_ALGO=^tree, one rank, ties and zeros).
 * An oracle written here from the table's rules says what each call must do; the calls
 * check that a matched pair is the unique minimum NCCL will take, that IGNORE entries and
 * everything no rule covers stay bit-for-bit as NCCL passed them, and that each applied
 * or ignored rule is logged exactly once per communicator. Then: the cost-table stride
 * with numAlgo/numProto below 7/3, a cost table of unknown shape, two communicators,
 * the table re-read at each init, and v6's getChunkSize.
 * Usage: test_plugin_abi PATH-TO-libnccl-tuner-nccltune.so */
#include <float.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"
#include "harness.h"

#define ANY (-1)
#define TB40 1099511627776ull
#define MAXB 9223372036854775807ull

struct trule {
	int coll, nranks, nnodes;
	uint64_t lo, hi;
	int algo, proto, ctas;
	uint64_t chunk;
};

/* The test table; rule N of the file is rules[N - 1]. */
static const struct trule rules[] = {
	{ 4, 8, 1, 40960, 45055, 1, 0, 4, 0 },          /* allreduce 8x1 ~43 KB: Ring/LL, 4 CTAs */
	{ 4, ANY, ANY, 0, 1048575, ANY, 1, 0, 0 },      /* allreduce <= 1 MiB: cheapest LL128 */
	{ 4, ANY, 2, TB40, TB40, 4, 2, 0, 0 },          /* allreduce 2^40 on 2 nodes: NVLS/Simple */
	{ 2, ANY, ANY, 0, 1, 0, ANY, 2, 0 },            /* allgather <= 1 B: Tree, cheapest proto */
	{ 0, 2, ANY, 0, MAXB, ANY, ANY, 3, 0 },         /* broadcast, 2 ranks: 3 CTAs only */
	{ 1, ANY, 1, 43008, 43008, 6, 2, 0, 0 },        /* reduce 43008 B: PAT/Simple */
	{ 3, 8, 2, 0, MAXB, 1, ANY, 0, 0 },             /* reducescatter 8x2: Ring, cheapest */
	{ 4, ANY, ANY, 0, MAXB, ANY, 2, 64, 0 },        /* allreduce otherwise: cheapest Simple */
};
#define NRULES (sizeof rules / sizeof rules[0])

static const char *const coll_word[] = { "broadcast", "reduce", "allgather", "reducescatter",
                                         "allreduce" };
static const char *const algo_word[] = { "tree", "ring", "collnet_direct", "collnet_chain",
                                         "nvls", "nvls_tree", "pat" };
static const char *const proto_word[] = { "ll", "ll128", "simple" };
static const char *const algo_shown[] = { "Tree", "Ring", "CollNetDirect", "CollNetChain",
                                          "NVLS", "NVLSTree", "PAT" };
static const char *const proto_shown[] = { "LL", "LL128", "Simple" };

static char dir[] = "/tmp/nccltune-plugin-abi-XXXXXX";
static char table_path[256];

/* The file for `rules`, written by this test (not by the table code under test). */
static void write_table(const char *path)
{
	char text[4096], num[4][24];
	size_t used = 0;

	used += (size_t)snprintf(text + used, sizeof text - used, "nccltune-tuner/1\n"
	                         "# the test table of test_abi.c\n\n");
	for (size_t i = 0; i < NRULES; i++) {
		const struct trule *r = &rules[i];

		snprintf(num[0], sizeof num[0], "%d", r->nranks);
		snprintf(num[1], sizeof num[1], "%d", r->nnodes);
		snprintf(num[2], sizeof num[2], "%llu", (unsigned long long)r->lo);
		snprintf(num[3], sizeof num[3], "%llu", (unsigned long long)r->hi);
		used += (size_t)snprintf(text + used, sizeof text - used, "%s\t%s %s  %s %s %s %s %d %llu\n",
		                         coll_word[r->coll], r->nranks == ANY ? "*" : num[0],
		                         r->nnodes == ANY ? "*" : num[1], num[2], num[3],
		                         r->algo == ANY ? "*" : algo_word[r->algo],
		                         r->proto == ANY ? "*" : proto_word[r->proto], r->ctas,
		                         (unsigned long long)r->chunk);
	}
	CHECK_INT(h_write(path, text, used), 0);
}

/* The oracle: the first rule for the call (0-based) or -1. */
static int oracle_rule(int coll, size_t nranks, size_t nnodes, uint64_t bytes)
{
	for (size_t i = 0; i < NRULES; i++) {
		const struct trule *r = &rules[i];

		if (r->coll == coll && bytes >= r->lo && bytes <= r->hi &&
		    (r->nranks == ANY || (size_t)r->nranks == nranks) &&
		    (r->nnodes == ANY || (size_t)r->nnodes == nnodes))
			return (int)i;
	}
	return -1;
}

/* The oracle: the pair a rule must force in table t (na x np corner). Returns 1 with
 * *a and *p (-1/-1: the rule names no pair), 0 when it must be ignored, and says why. */
static int oracle_pair(const struct trule *r, float t[H_NA][H_NP], int na, int np, int *a,
                       int *p, int *outside)
{
	float best = 0;

	*a = -1;
	*p = -1;
	*outside = 0;
	if (r->algo == ANY && r->proto == ANY)
		return 1;
	if ((r->algo != ANY && r->algo >= na) || (r->proto != ANY && r->proto >= np)) {
		*outside = 1;
		return 0;
	}
	for (int i = 0; i < na; i++)
		for (int j = 0; j < np; j++) {
			if ((r->algo != ANY && i != r->algo) || (r->proto != ANY && j != r->proto))
				continue;
			if (t[i][j] >= 0.0f && (*a < 0 || t[i][j] < best)) {
				best = t[i][j];
				*a = i;
				*p = j;
			}
		}
	return *a >= 0;
}

static const int sizes_n = 4;
static const uint64_t sizes[] = { 0, 1, 43008, TB40 };

/* What one communicator saw, for its log checks. */
struct seen {
	int applied[NRULES], ignored[NRULES], withheld[NRULES];
	char applied_text[NRULES][256], ignored_text[NRULES][256], withheld_text[NRULES][256];
};

/* One call against the oracle. */
static void check_call(const struct h_comm *c, struct seen *s, enum h_kind kind, int coll,
                       uint64_t bytes, int reg, size_t nranks, size_t nnodes, int na, int np)
{
	float in[H_NA][H_NP], out[H_NA][H_NP];
	/* NCCL passes 0; the regBuff=1 calls pass 77 to see it is left alone, not rewritten */
	const int nch_in = reg ? 77 : 0;
	int nch = nch_in, ri, a, p, outside, ok = 1, unclamped;
	const struct trule *r;

	h_table(kind, in);
	memcpy(out, in, sizeof in);
	CHECK_INT(h_coll(c, coll, (size_t)bytes, out, na, np, reg, &nch), 0);
	ri = coll >= 0 && coll < 5 ? oracle_rule(coll, nranks, nnodes, bytes) : -1;
	if (ri < 0) {
		/* no rule: the table and nChannels exactly as NCCL passed them */
		if (memcmp(in, out, sizeof in) != 0 || nch != nch_in) {
			ok = 0;
			CHECK(!"untouched without a rule");
		}
		goto out;
	}
	r = &rules[ri];
	if (!oracle_pair(r, in, na, np, &a, &p, &outside)) {
		if (memcmp(in, out, sizeof in) != 0 || nch != nch_in) {
			ok = 0;
			CHECK(!"an ignored rule leaves everything untouched");
		}
		if (!s->ignored[ri]++)
		{
			char why[64] = "which NCCL has ruled out (IGNORE)";

			if (outside)
				snprintf(why, sizeof why, "which is outside NCCL's %dx%d cost table", na, np);
			snprintf(s->ignored_text[ri], sizeof s->ignored_text[ri],
			         "nccltune: %s %llu B: rule %d asks for %s/%s, %s; NCCL's choice stands",
			         coll_word[coll], (unsigned long long)bytes, ri + 1,
			         r->algo == ANY ? "*" : algo_shown[r->algo],
			         r->proto == ANY ? "*" : proto_shown[r->proto], why);
		}
		goto out;
	}
	if (!h_ignored_kept(in, out, na, np)) {
		ok = 0;
		CHECK(!"IGNORE entries and entries outside numAlgo x numProto kept");
	}
	if (a < 0) {
		if (memcmp(in, out, sizeof in) != 0) {
			ok = 0;
			CHECK(!"a rule naming no pair leaves the table alone");
		}
		h_pick(in, na, np, &a, &p);
	} else {
		int pa, pp;

		if (!h_unique_min(out, na, np, a, p) || h_pick(out, na, np, &pa, &pp) != 0 ||
		    pa != a || pp != p) {
			ok = 0;
			CHECK(!"the rule's pair is the unique minimum NCCL takes");
		}
		for (int i = 0; i < na; i++)   /* entries already dearer are not rewritten */
			for (int j = 0; j < np; j++)
				if ((i != a || j != p) && in[i][j] > 0.0f &&
				    memcmp(&in[i][j], &out[i][j], sizeof(float)) != 0) {
					ok = 0;
					CHECK(!"a dearer entry was rewritten");
				}
	}
	/* CollNet, and NVLS across nodes, take a count unclamped: the rule's CTAs are withheld */
	unclamped = r->ctas && (a == 2 || a == 3 || (a == 4 && nnodes != 1));
	if (nch != (r->ctas && !unclamped ? r->ctas : nch_in)) {
		ok = 0;
		CHECK_INT(nch, r->ctas && !unclamped ? r->ctas : nch_in);
	}
	if (unclamped && !s->withheld[ri]++)
		snprintf(s->withheld_text[ri], sizeof s->withheld_text[ri], "nccltune: %s %llu B: "
		         "rule %d's %d CTAs are not given: NCCL runs %s there, which takes a plugin's "
		         "count unclamped; NCCL's CTAs", coll_word[coll], (unsigned long long)bytes,
		         ri + 1, r->ctas, algo_shown[a]);
	if (!s->applied[ri]++) {
		char ctas[24] = "NCCL's CTAs";

		if (r->ctas && !unclamped)
			snprintf(ctas, sizeof ctas, "%d CTAs", r->ctas);
		if (a >= 0)
			snprintf(s->applied_text[ri], sizeof s->applied_text[ri],
			         "nccltune: %s %llu B -> %s/%s, %s (rule %d)", coll_word[coll],
			         (unsigned long long)bytes, algo_shown[a], proto_shown[p], ctas, ri + 1);
		else
			snprintf(s->applied_text[ri], sizeof s->applied_text[ri],
			         "nccltune: %s %llu B -> no usable algorithm, %s (rule %d)",
			         coll_word[coll], (unsigned long long)bytes, ctas, ri + 1);
	}
out:
	if (!ok)
		fprintf(stderr, "  ^ %s table, coll %d, %llu B, regBuff %d, %zu ranks, %zu nodes, "
		        "%dx%d\n", h_kind_name(kind), coll, (unsigned long long)bytes, reg, nranks,
		        nnodes, na, np);
}

/* The whole matrix through one ABI, with the capturing logger or none. */
static void matrix(const struct h_plugin *pl, enum h_abi abi, int with_log)
{
	static const size_t nranks_v[] = { 1, 2, 8 }, nnodes_v[] = { 1, 2 };
	char want[512];

	for (int kind = 0; kind < H_NKINDS; kind++)
		for (size_t ir = 0; ir < 3; ir++)
			for (size_t in = 0; in < 2; in++) {
				size_t nranks = nranks_v[ir], nnodes = nnodes_v[in];
				struct seen s;
				struct h_comm c;
				int expect = 1;

				memset(&s, 0, sizeof s);
				h_log_reset();
				CHECK_INT(h_init(&c, pl, abi, 77, nranks, nnodes, with_log ? h_capture : NULL), 0);
				CHECK(c.ctx != NULL && c.ctx != (void *)0x1);
				for (int coll = 0; coll <= 15; coll++)
					for (int k = 0; k < sizes_n; k++)
						for (int reg = 0; reg < 2; reg++)
							check_call(&c, &s, (enum h_kind)kind, coll, sizes[k], reg, nranks,
							           nnodes, H_NA, H_NP);
				CHECK_INT(h_fini(&c), 0);
				if (!with_log) {
					CHECK_INT(h_nlog, 0);
					continue;
				}
				snprintf(want, sizeof want, "nccltune: table %s, %zu rules (nranks %zu, nnodes %zu)",
				         table_path, (size_t)NRULES, nranks, nnodes);
				CHECK_INT(h_log_exact(H_INFO, want), 1);
				for (size_t i = 0; i < NRULES; i++) {
					if (s.applied[i]) {
						CHECK_INT(h_log_exact(H_INFO, s.applied_text[i]), 1);
						expect++;
					}
					if (s.ignored[i]) {
						CHECK_INT(h_log_exact(H_WARN, s.ignored_text[i]), 1);
						expect++;
					}
					if (s.withheld[i]) {
						CHECK_INT(h_log_exact(H_WARN, s.withheld_text[i]), 1);
						expect++;
					}
				}
				CHECK_INT(h_nlog, expect);
				CHECK(h_log_all_tuning());
				if (h_nlog != expect) {
					fprintf(stderr, "  ^ %s, %s table, %zu ranks, %zu nodes\n", h_abi_name(abi),
					        h_kind_name((enum h_kind)kind), nranks, nnodes);
					h_log_dump();
				}
			}
}

/* The example in docs/formats.md, spelled out. */
static void golden(const struct h_plugin *pl)
{
	struct h_comm c;
	float t[H_NA][H_NP], in[H_NA][H_NP];
	int nch = 0, a, p;

	h_log_reset();
	CHECK_INT(h_init(&c, pl, H_V6, 1, 8, 1, h_capture), 0);
	h_table(H_NVLINK, t);
	memcpy(in, t, sizeof t);
	CHECK_INT(h_coll(&c, 4, 43008, t, H_NA, H_NP, 0, &nch), 0);
	CHECK_INT(nch, 4);
	CHECK_INT(h_pick(t, H_NA, H_NP, &a, &p), 0);
	CHECK_INT(a, 1);
	CHECK_INT(p, 0);
	/* NVLS/Simple (8.7) was cheapest: Ring/LL becomes half of it, nothing else moves */
	CHECK(t[1][0] == 8.7f * 0.5f);
	t[1][0] = in[1][0];
	CHECK(memcmp(t, in, sizeof t) == 0);
	CHECK_INT(h_log_exact(H_INFO, "nccltune: allreduce 43008 B -> Ring/LL, 4 CTAs (rule 1)"), 1);
	/* the same call again: the same answer, no second line */
	h_table(H_NVLINK, t);
	nch = 0;
	CHECK_INT(h_coll(&c, 4, 43008, t, H_NA, H_NP, 1, &nch), 0);
	CHECK_INT(nch, 4);
	CHECK_INT(h_log_count(H_INFO), 2);
	/* 45056 B is outside rule 1: rule 2, cheapest LL128 = Ring/LL128, NCCL's CTAs */
	h_table(H_NVLINK, t);
	nch = 0;
	CHECK_INT(h_coll(&c, 4, 45056, t, H_NA, H_NP, 0, &nch), 0);
	CHECK_INT(nch, 0);
	CHECK_INT(h_pick(t, H_NA, H_NP, &a, &p), 0);
	CHECK_INT(a * 10 + p, 11);
	CHECK_INT(h_log_exact(H_INFO, "nccltune: allreduce 45056 B -> Ring/LL128, NCCL's CTAs (rule 2)"), 1);
	CHECK_INT(h_log_count(H_WARN), 0);
	CHECK_INT(h_fini(&c), 0);
}

/* numAlgo/numProto below 7/3: the table is still rows of 3 floats; only the corner is
 * NCCL's, the rest is never read or written. Pairs outside it are ignored, with one
 * warning that names the corner. */
static void small_corner(const struct h_plugin *pl)
{
	struct h_comm c;
	float t[H_NA][H_NP], in[H_NA][H_NP];
	int nch = 0, a, p;

	h_log_reset();
	CHECK_INT(h_init(&c, pl, H_V5, 2, 8, 1, h_capture), 0);
	/* 7 x 2: Ring/LL is row 1, column 0 of rows that are 3 floats apart */
	h_table(H_NVLINK, t);
	t[4][1] = 1.0f;   /* inside the 7x3 memory, outside a 7x2 corner: cheapest, not NCCL's */
	t[6][2] = 0.5f;
	memcpy(in, t, sizeof t);
	CHECK_INT(h_coll(&c, 4, 43008, t, 7, 2, 0, &nch), 0);
	CHECK_INT(nch, 4);
	CHECK(h_unique_min(t, 7, 2, 1, 0));
	CHECK(t[1][0] < in[1][0]);
	CHECK(memcmp(&t[6][2], &in[6][2], sizeof(float)) == 0);
	CHECK(memcmp(&t[0][2], &in[0][2], sizeof(float)) == 0);
	CHECK(h_ignored_kept(in, t, 7, 2));
	/* 2 x 3 (Tree, Ring): rule 3 wants NVLS, row 4, outside the corner */
	h_table(H_NVLINK, t);
	memcpy(in, t, sizeof t);
	nch = 0;
	CHECK_INT(h_coll(&c, 4, TB40, t, 2, 3, 0, &nch), 0);
	CHECK_INT(nch, 64);   /* rule 8: 8x1 is not 2 nodes, so rule 3 does not match */
	CHECK(h_unique_min(t, 2, 3, 1, 2));   /* cheapest Simple of Tree and Ring */
	CHECK(memcmp(t[2], in[2], 5 * sizeof t[2]) == 0);
	CHECK(h_ignored_kept(in, t, 2, 3));
	h_fini(&c);
	CHECK_INT(h_init(&c, pl, H_V5, 3, 8, 2, h_capture), 0);
	h_table(H_NVLINK, t);
	memcpy(in, t, sizeof t);
	nch = 0;
	CHECK_INT(h_coll(&c, 4, TB40, t, 2, 3, 0, &nch), 0);
	CHECK(memcmp(t, in, sizeof t) == 0);
	CHECK_INT(nch, 0);
	CHECK_INT(h_log_exact(H_WARN, "nccltune: allreduce 1099511627776 B: rule 3 asks for NVLS/Simple, "
	                      "which is outside NCCL's 2x3 cost table; NCCL's choice stands"), 1);
	/* a wider table than 7x3 has an unknown layout: no pair is forced, once warned */
	for (int i = 0; i < 3; i++) {
		h_table(H_NVLINK, t);
		memcpy(in, t, sizeof t);
		nch = 0;
		CHECK_INT(h_coll(&c, 4, 43008, t, 8, 3, 0, &nch), 0);
		CHECK(memcmp(t, in, sizeof t) == 0);
		CHECK_INT(h_pick(t, 7, 3, &a, &p), 0);
	}
	CHECK_INT(h_log_exact(H_WARN, "nccltune: NCCL passed a 8x3 cost table, not at most 7x3; "
	                      "no algorithm or protocol is forced"), 1);
	CHECK_INT(h_fini(&c), 0);
}

/* Two communicators: each its own context, its own nRanks and its own once-flags. The
 * table is read at each init: a change shows in the next communicator only. */
static void two_comms(const struct h_plugin *pl)
{
	struct h_comm big, small, late;
	float t[H_NA][H_NP];
	int nch;

	h_log_reset();
	CHECK_INT(h_init(&big, pl, H_V6, 10, 8, 1, h_capture), 0);
	CHECK_INT(h_init(&small, pl, H_V6, 11, 2, 2, h_capture), 0);
	CHECK(big.ctx != small.ctx);
	for (int i = 0; i < 3; i++) {
		h_table(H_PCIE, t);
		nch = 0;
		CHECK_INT(h_coll(&big, 4, 43008, t, H_NA, H_NP, 0, &nch), 0);
		CHECK_INT(nch, 4);                   /* rule 1: 8 ranks on 1 node */
		h_table(H_PCIE, t);
		nch = 0;
		CHECK_INT(h_coll(&small, 4, 43008, t, H_NA, H_NP, 0, &nch), 0);
		CHECK_INT(nch, 0);                   /* rule 2 (LL128, IGNORE on PCIe) */
	}
	/* one warning per communicator, not per call and not per process */
	CHECK_INT(h_log_count(H_WARN), 1);
	CHECK_INT(h_log_exact(H_WARN, "nccltune: allreduce 43008 B: rule 2 asks for */LL128, which "
	                      "NCCL has ruled out (IGNORE); NCCL's choice stands"), 1);
	/* a third communicator meets rule 2 too: its own warning */
	CHECK_INT(h_init(&late, pl, H_V4, 0, 2, 2, h_capture), 0);
	h_table(H_PCIE, t);
	nch = 0;
	CHECK_INT(h_coll(&late, 4, 43008, t, H_NA, H_NP, 0, &nch), 0);
	CHECK_INT(h_log_count(H_WARN), 2);
	CHECK_INT(h_fini(&late), 0);
	/* rewrite the table: only a communicator made after this sees it */
	CHECK_INT(h_write_str(table_path, "nccltune-tuner/1\nallreduce * * 0 100000 tree simple 7 0\n"), 0);
	CHECK_INT(h_init(&late, pl, H_V4, 0, 8, 1, h_capture), 0);
	h_table(H_PCIE, t);
	nch = 0;
	CHECK_INT(h_coll(&late, 4, 43008, t, H_NA, H_NP, 0, &nch), 0);
	CHECK_INT(nch, 7);
	h_table(H_PCIE, t);
	nch = 0;
	CHECK_INT(h_coll(&big, 4, 43008, t, H_NA, H_NP, 0, &nch), 0);
	CHECK_INT(nch, 4);
	CHECK_INT(h_fini(&late), 0);
	CHECK_INT(h_fini(&big), 0);
	CHECK_INT(h_fini(&small), 0);
	write_table(table_path);
}

/* v6 getChunkSize: the chunk of the rule getCollInfo applied, for the pair NCCL runs and
 * per-channel shares of that collective's bytes; otherwise NCCL's value untouched. */
static void chunk_size(const struct h_plugin *pl)
{
	char path[300];
	struct h_comm c;
	float t[H_NA][H_NP];
	int nch = 0;
	size_t cs;

	snprintf(path, sizeof path, "%s/chunk.txt", dir);
	CHECK_INT(h_write_str(path, "nccltune-tuner/1\n"
	                      "allreduce * * 40960 45055 ring ll 0 131072\n"
	                      "allreduce * * 65536 65536 ring ll128 2 1024\n"
	                      "allgather * * 0 1000 * * 0 262144\n"
	                      "allreduce * * 0 9223372036854775807 * * 0 0\n"), 0);
	CHECK_INT(setenv("NCCLTUNE_TUNER_TABLE", path, 1), 0);
	h_log_reset();
	CHECK_INT(h_init(&c, pl, H_V6, 5, 8, 1, h_capture), 0);
	CHECK(pl->v6->getChunkSize != NULL);
	h_table(H_NVLINK, t);
	CHECK_INT(h_coll(&c, 4, 43008, t, H_NA, H_NP, 0, &nch), 0);
	CHECK_INT(nch, 0);
	CHECK_INT(h_log_exact(H_INFO, "nccltune: allreduce 43008 B -> Ring/LL, NCCL's CTAs, "
	                      "chunk 131072 B (rule 1)"), 1);
	cs = 8192;
	CHECK_INT(pl->v6->getChunkSize(c.ctx, 4, 43008, 1, 0, 4, &cs), 0);
	CHECK_INT(cs, 131072);
	cs = 8192;   /* a per-channel share */
	CHECK_INT(pl->v6->getChunkSize(c.ctx, 4, 10752, 1, 0, 1, &cs), 0);
	CHECK_INT(cs, 131072);
	cs = 8192;   /* another pair than the one left to NCCL */
	CHECK_INT(pl->v6->getChunkSize(c.ctx, 4, 10752, 0, 0, 1, &cs), 0);
	CHECK_INT(cs, 8192);
	cs = 8192;   /* more bytes than the collective decided */
	CHECK_INT(pl->v6->getChunkSize(c.ctx, 4, 43009, 1, 0, 1, &cs), 0);
	CHECK_INT(cs, 8192);
	cs = 8192;   /* another collective */
	CHECK_INT(pl->v6->getChunkSize(c.ctx, 2, 100, 1, 0, 1, &cs), 0);
	CHECK_INT(cs, 8192);
	/* a rule without a chunk clears it */
	h_table(H_NVLINK, t);
	CHECK_INT(h_coll(&c, 4, 50000, t, H_NA, H_NP, 0, &nch), 0);
	cs = 8192;
	CHECK_INT(pl->v6->getChunkSize(c.ctx, 4, 50000, 4, 2, 1, &cs), 0);
	CHECK_INT(cs, 8192);
	/* both '*': the chunk follows NCCL's own pick (NVLS/Simple here) */
	h_table(H_NVLINK, t);
	CHECK_INT(h_coll(&c, 2, 1000, t, H_NA, H_NP, 0, &nch), 0);
	cs = 4096;
	CHECK_INT(pl->v6->getChunkSize(c.ctx, 2, 500, 4, 2, 1, &cs), 0);
	CHECK_INT(cs, 262144);
	/* 1024 B is below LL128's grain (1920 B): NCCL would round it to 0; not applied, once warned */
	for (int i = 0; i < 2; i++) {
		h_table(H_NVLINK, t);
		nch = 0;
		CHECK_INT(h_coll(&c, 4, 65536, t, H_NA, H_NP, 0, &nch), 0);
		CHECK_INT(nch, 2);
		cs = 65536;
		CHECK_INT(pl->v6->getChunkSize(c.ctx, 4, 65536, 1, 1, 2, &cs), 0);
		CHECK_INT(cs, 65536);
	}
	CHECK_INT(h_log_count(H_WARN), 1);
	CHECK_INT(h_log_exact(H_WARN, "nccltune: allreduce: rule 2's chunk 1024 B is below LL128's "
	                      "grain of 1920 B; NCCL's chunk stands"), 1);
	/* a NULL context (init out of memory) and a NULL pointer: nothing, success */
	CHECK_INT(pl->v6->getChunkSize(NULL, 4, 43008, 1, 0, 1, &cs), 0);
	CHECK_INT(pl->v6->getChunkSize(c.ctx, 4, 43008, 1, 0, 1, NULL), 0);
	CHECK_INT(h_fini(&c), 0);
	CHECK_INT(setenv("NCCLTUNE_TUNER_TABLE", table_path, 1), 0);
}

int main(int argc, char **argv)
{
	struct h_plugin pl;
	char cmd[300];

	if (argc != 2) {
		fprintf(stderr, "usage: %s PLUGIN.so\n", argv[0]);
		return 2;
	}
	CHECK(mkdtemp(dir) != NULL);
	snprintf(table_path, sizeof table_path, "%s/table.txt", dir);
	write_table(table_path);
	CHECK_INT(setenv("NCCLTUNE_TUNER_TABLE", table_path, 1), 0);
	if (h_open(&pl, argv[1]) != 0)
		return 1;
	CHECK_STR(pl.v4->name, "nccltune");
	CHECK_STR(pl.v5->name, "nccltune");
	CHECK_STR(pl.v6->name, "nccltune");
	for (int abi = H_V4; abi <= H_V6; abi++) {
		matrix(&pl, (enum h_abi)abi, 1);
		matrix(&pl, (enum h_abi)abi, 0);
	}
	golden(&pl);
	small_corner(&pl);
	two_comms(&pl);
	chunk_size(&pl);
	/* finalize and destroy accept NULL */
	CHECK_INT(pl.v4->destroy(NULL), 0);
	CHECK_INT(pl.v5->finalize(NULL), 0);
	CHECK_INT(pl.v6->finalize(NULL), 0);
	dlclose(pl.handle);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
	return check_status();
}
