/* test_sweep.c - the sweep file's strict reader (every error path names the file and the
 * key), the choice text, the seeded interleaving (deterministic for a seed, the same for
 * every rank, every kept case once per round, every sample once), and the plugin's
 * control interface through dlopen: refusals, forcing, and the IGNORE verdict drained
 * from the plugin's record after a getCollInfo driven the way NCCL drives it.
 *
 * usage: test_probe_sweep PLUGIN FAKE_V2 NOT_A_TUNER (paths of built shared libraries) */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"
#include "plugin/harness.h"
#include "sweep.h"

static struct proto_workload w;
static char tmpdir[256];

static int parse(const char *text, struct sweep_plan *p, char *err, size_t errlen)
{
	err[0] = '\0';
	return sweep_parse(text, strlen(text), "s.json", &w, p, err, errlen);
}

static void test_parse_ok(void)
{
	static struct sweep_plan p;
	char err[512];
	const char *text =
		"{\"schema\":\"nccltune-sweep/1\",\"rounds\":3,\"seed\":42,\"choices\":["
		"{\"bytes\":43008,\"algo\":\"ring\",\"proto\":\"ll128\",\"ctas\":4},"
		"{\"bytes\":1024,\"algo\":null,\"proto\":\"SIMPLE\",\"ctas\":0},"
		"{\"bytes\":43008},"
		"{\"bytes\":43008,\"algo\":\"NVLSTree\",\"ctas\":null}]}";

	CHECK_INT(parse(text, &p, err, sizeof err), 0);
	CHECK_STR(err, "");
	CHECK_INT(p.nchoices, 4);
	CHECK_INT(p.rounds, 3);
	CHECK_INT(p.seed, 42);
	CHECK_STR(p.file, "s.json");
	CHECK_INT(p.choices[0].bytes, 43008);
	CHECK_INT(p.choices[0].size, 0);
	CHECK_INT(p.choices[0].algo, 1);
	CHECK_INT(p.choices[0].proto, 1);
	CHECK_INT(p.choices[0].ctas, 4);
	CHECK_INT(p.choices[1].size, 1);
	CHECK_INT(p.choices[1].algo, PROTO_NCCL_ANY);
	CHECK_INT(p.choices[1].proto, 2);
	CHECK_INT(p.choices[1].ctas, 0);
	CHECK_INT(p.choices[2].algo, PROTO_NCCL_ANY);
	CHECK_INT(p.choices[2].proto, PROTO_NCCL_ANY);
	CHECK_INT(p.choices[3].algo, 5);
	CHECK_INT(p.choices[3].ctas, 0);
	/* defaults: 5 rounds, seed 1; surrounding whitespace is fine */
	CHECK_INT(parse(" {\"schema\":\"nccltune-sweep/1\",\"choices\":[{\"bytes\":4096}]}\n",
	                &p, err, sizeof err), 0);
	CHECK_INT(p.rounds, 5);
	CHECK_INT(p.seed, 1);
	CHECK_INT(p.choices[0].size, 2);
	/* a size listed twice in --bytes: the first */
	w.bytes[3] = 1024;
	w.nsizes = 4;
	CHECK_INT(parse("{\"schema\":\"nccltune-sweep/1\",\"choices\":[{\"bytes\":1024}]}", &p,
	                err, sizeof err), 0);
	CHECK_INT(p.choices[0].size, 1);
	w.nsizes = 3;
}

static void test_parse_errors(void)
{
#define S "{\"schema\":\"nccltune-sweep/1\","
#define C(x) S "\"choices\":[" x "]}"
	static const char *const bad[][2] = {
		{"", "s.json: line 1: not valid JSON (truncated or corrupt near byte 0)"},
		{"{\"schema\":", "s.json: line 1: not valid JSON"},
		{"[]", "s.json: expected an object, got an array"},
		{C("{\"bytes\":43008}") " {}", "s.json: line 1: text after the JSON value"},
		{S "\"choices\":[{\"bytes\":43008}],\"round\":3}",
		 "s.json: round: unknown key (expected schema, rounds, seed, choices)"},
		{S "\"schema\":\"nccltune-sweep/1\",\"choices\":[{\"bytes\":43008}]}",
		 "s.json: schema: duplicate key"},
		{"{\"choices\":[{\"bytes\":43008}]}", "s.json: schema: missing"},
		{"{\"schema\":\"nccltune-sweep/2\",\"choices\":[]}",
		 "s.json: schema: expected \"nccltune-sweep/1\""},
		{"{\"schema\":1,\"choices\":[]}",
		 "s.json: schema: expected a string, got a number"},
		{S "\"rounds\":0,\"choices\":[{\"bytes\":43008}]}",
		 "s.json: rounds: 0 is out of range [1, 1000]"},
		{S "\"rounds\":1001,\"choices\":[{\"bytes\":43008}]}",
		 "s.json: rounds: 1001 is out of range [1, 1000]"},
		{S "\"rounds\":2.5,\"choices\":[{\"bytes\":43008}]}",
		 "s.json: rounds: expected an integer, got 2.5"},
		{S "\"rounds\":\"5\",\"choices\":[{\"bytes\":43008}]}",
		 "s.json: rounds: expected a number, got a string"},
		{S "\"rounds\":21,\"choices\":[{\"bytes\":43008}]}",
		 "s.json: rounds: 21 is more than --iters 20"},
		{S "\"seed\":-1,\"choices\":[{\"bytes\":43008}]}",
		 "s.json: seed: -1 is out of range [0, 9007199254740991]"},
		{S "\"seed\":0.5,\"choices\":[{\"bytes\":43008}]}",
		 "s.json: seed: expected an integer, got 0.5"},
		{S "\"seed\":9007199254740992,\"choices\":[{\"bytes\":43008}]}",
		 "s.json: seed: 9007199254740992 is out of range [0, 9007199254740991]"},
		{S "\"seed\":\"1\",\"choices\":[{\"bytes\":43008}]}",
		 "s.json: seed: expected a number, got a string"},
		{"{\"schema\":\"nccltune-sweep/1\"}", "s.json: choices: missing"},
		{S "\"choices\":{}}", "s.json: choices: expected an array, got an object"},
		{S "\"choices\":[]}", "s.json: choices: empty"},
		{C("7"), "s.json: choices[0]: expected an object, got a number"},
		{C("{\"bytes\":43008},{\"bytes\":43008,\"chunk\":4}"),
		 "s.json: choices[1].chunk: unknown key (expected bytes, algo, proto, ctas)"},
		{C("{\"bytes\":43008,\"bytes\":1024}"), "s.json: choices[0].bytes: duplicate key"},
		{C("{\"algo\":\"Ring\"}"), "s.json: choices[0].bytes: missing"},
		{C("{\"bytes\":\"43008\"}"),
		 "s.json: choices[0].bytes: expected a number, got a string"},
		{C("{\"bytes\":43010}"), "s.json: choices[0].bytes: 43010 is not one of --bytes"},
		{C("{\"bytes\":0}"),
		 "s.json: choices[0].bytes: 0 is out of range [1, 9007199254740991]"},
		{C("{\"bytes\":43008.5}"),
		 "s.json: choices[0].bytes: expected an integer, got 43008.5"},
		{C("{\"bytes\":43008,\"algo\":\"Rnig\"}"),
		 "s.json: choices[0].algo: 'Rnig' is not one of Tree, Ring, CollNetDirect, CollNetChain, "
		 "NVLS, NVLSTree, PAT"},
		{C("{\"bytes\":43008,\"algo\":\"nvls_tree\"}"),
		 "s.json: choices[0].algo: 'nvls_tree' is not one of Tree, Ring"},
		{C("{\"bytes\":43008,\"algo\":1}"),
		 "s.json: choices[0].algo: expected a string or null, got a number"},
		{C("{\"bytes\":43008,\"proto\":\"LL64\"}"),
		 "s.json: choices[0].proto: 'LL64' is not one of LL, LL128, Simple"},
		{C("{\"bytes\":43008,\"proto\":true}"),
		 "s.json: choices[0].proto: expected a string or null, got a boolean"},
		{C("{\"bytes\":43008,\"ctas\":-1}"),
		 "s.json: choices[0].ctas: -1 is out of range [0, 64]"},
		{C("{\"bytes\":43008,\"ctas\":65}"),
		 "s.json: choices[0].ctas: 65 is out of range [0, 64]"},
		{C("{\"bytes\":43008,\"ctas\":1.5}"),
		 "s.json: choices[0].ctas: expected an integer, got 1.5"},
		{C("{\"bytes\":43008,\"ctas\":\"4\"}"),
		 "s.json: choices[0].ctas: expected a number or null, got a string"},
	};
	static struct sweep_plan p;
	char err[512], *many;
	size_t at = 0, cap = 64 + 20 * (PROTO_MAX_CHOICES + 1);

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK_INT(parse(bad[i][0], &p, err, sizeof err), -1);
		CHECK_CONTAINS(err, bad[i][1]);
		CHECK_INT(p.nchoices, 0);
	}
	CHECK_INT(sweep_parse("{}\0", 3, "s.json", &w, &p, err, sizeof err), -1);
	CHECK_STR(err, "s.json: NUL byte in the text: not JSON");
	/* more choices than a sweep holds */
	many = malloc(cap);
	if (!many)
		return;
	at += (size_t)snprintf(many + at, cap - at, S "\"choices\":[");
	for (int i = 0; i <= PROTO_MAX_CHOICES; i++)
		at += (size_t)snprintf(many + at, cap - at, "%s{\"bytes\":1024}", i ? "," : "");
	snprintf(many + at, cap - at, "]}");
	CHECK_INT(parse(many, &p, err, sizeof err), -1);
	CHECK_STR(err, "s.json: choices: more than 1024 entries");
	/* exactly the limit is fine */
	many[strlen(many) - 17] = '\0';
	snprintf(many + strlen(many), cap - strlen(many), "]}");
	CHECK_INT(parse(many, &p, err, sizeof err), 0);
	CHECK_INT(p.nchoices, PROTO_MAX_CHOICES);
	free(many);
	/* the default 5 rounds are held to --iters too */
	w.iters = 4;
	CHECK_INT(parse(C("{\"bytes\":43008}"), &p, err, sizeof err), -1);
	CHECK_STR(err, "s.json: rounds: 5 is more than --iters 4 (every round needs a timed "
	          "replay of each choice)");
	w.iters = 20;
	/* any C whitespace after the object, as the reader always took */
	CHECK_INT(parse(C("{\"bytes\":43008}") " \f\v\r\n", &p, err, sizeof err), 0);
	CHECK_INT(p.nchoices, 1);
	CHECK_INT(parse(C("{\"bytes\":43008}") " \f x", &p, err, sizeof err), -1);
	CHECK_CONTAINS(err, "s.json: line 1: text after the JSON value");
#undef C
#undef S
}

static void test_load(void)
{
	static struct sweep_plan p;
	char err[512], path[512];
	FILE *f;

	CHECK_INT(sweep_load("/nonexistent/s.json", &w, &p, err, sizeof err), -1);
	CHECK_STR(err, "--sweep: /nonexistent/s.json: No such file or directory");
	CHECK_INT(sweep_load(tmpdir, &w, &p, err, sizeof err), -1);
	CHECK_CONTAINS(err, ": not a regular file");
	snprintf(path, sizeof path, "%s/fifo", tmpdir);
	if (mkfifo(path, 0600) == 0) {
		/* must not block waiting for a writer */
		CHECK_INT(sweep_load(path, &w, &p, err, sizeof err), -1);
		CHECK_CONTAINS(err, "fifo: not a regular file");
		unlink(path);
	}
	snprintf(path, sizeof path, "%s/s.json", tmpdir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs("{\"schema\":\"nccltune-sweep/1\",\"choices\":[{\"bytes\":1024,\"algo\":\"Tree\"},"
	      "{\"bytes\":1024,\"algo\":\"tree\",\"proto\":\"LL\"}]}\n", f);
	fclose(f);
	CHECK_INT(sweep_load(path, &w, &p, err, sizeof err), 0);
	CHECK_INT(p.nchoices, 2);
	CHECK_STR(p.file, path);
	f = fopen(path, "w");
	if (f) {
		fputs("{\"schema\":\"nccltune-sweep/1\",\"choices\":[{\"bytes\":3}]}", f);
		fclose(f);
	}
	CHECK_INT(sweep_load(path, &w, &p, err, sizeof err), -1);
	CHECK_CONTAINS(err, "s.json: choices[0].bytes: 3 is not one of --bytes");
	unlink(path);
}

static void test_choice_text(void)
{
	struct sweep_choice c = {43008, 0, 1, 0, 4};
	char buf[64];

	sweep_choice_text(&c, buf, sizeof buf);
	CHECK_STR(buf, "Ring/LL, 4 CTAs");
	c.ctas = 1;
	c.algo = PROTO_NCCL_ANY;
	sweep_choice_text(&c, buf, sizeof buf);
	CHECK_STR(buf, "*/LL, 1 CTA");
	c.ctas = 0;
	c.proto = PROTO_NCCL_ANY;
	c.algo = 5;
	sweep_choice_text(&c, buf, sizeof buf);
	CHECK_STR(buf, "NVLSTree/*, NCCL's CTAs");
}

static bool is_permutation(const size_t *o, size_t n)
{
	bool seen[64] = {false};

	for (size_t i = 0; i < n; i++) {
		if (o[i] >= n || seen[o[i]])
			return false;
		seen[o[i]] = true;
	}
	return true;
}

static void test_order(void)
{
	size_t a[16], b[16], pinned[5];
	static const size_t want[5] = {0, 1, 3, 2, 4};
	int differs = 0, counts[6] = {0};

	/* the algorithm is documented (docs/probe-protocol.md) so another probe can draw the
	 * same orders: pin one */
	sweep_round_order(1, 0, 5, pinned);
	for (int i = 0; i < 5; i++)
		CHECK_INT(pinned[i], want[i]);
	for (int round = 0; round < 50; round++) {
		/* every rank computes it alone: two calls with the same inputs agree */
		sweep_round_order(7, round, 16, a);
		sweep_round_order(7, round, 16, b);
		CHECK(memcmp(a, b, sizeof a) == 0);
		CHECK(is_permutation(a, 16));
		sweep_round_order(8, round, 16, b);
		differs += memcmp(a, b, sizeof a) != 0;
	}
	CHECK(differs >= 49);   /* another seed, other orders */
	sweep_round_order(7, 0, 16, a);
	sweep_round_order(7, 1, 16, b);
	CHECK(memcmp(a, b, sizeof a) != 0);   /* rounds differ */
	sweep_round_order(7, 0, 1, a);
	CHECK_INT(a[0], 0);
	sweep_round_order(7, 0, 0, a);   /* nothing to order: no harm */
	/* unbiased enough: all 6 orders of 3 cases about equally often */
	for (int round = 0; round < 6000; round++) {
		sweep_round_order(3, round, 3, a);
		counts[a[0] * 2 + (a[1] > a[2])]++;
	}
	for (int i = 0; i < 6; i++)
		CHECK(counts[i] > 850 && counts[i] < 1150);
}

static void test_schedule(void)
{
	bool keep[4] = {true, false, true, true};
	int samples[4][7], last_case = -1, blocks = 0, total = 0;
	struct sweep_schedule s;
	struct sweep_replay it;
	size_t order[4];
	int round_of_block[16], case_of_block[16];

	CHECK_INT(sweep_round_replays(7, 3, 0), 3);
	CHECK_INT(sweep_round_replays(7, 3, 1), 2);
	CHECK_INT(sweep_round_replays(7, 3, 2), 2);
	CHECK_INT(sweep_round_replays(7, 3, 3), 0);
	CHECK_INT(sweep_round_replays(5, 5, 4), 1);
	CHECK_INT(sweep_round_replays(5, 0, 0), 0);

	memset(samples, 0, sizeof samples);
	CHECK_INT(sweep_schedule_init(&s, 4, keep, 7, 3, 11, true), 0);
	while (sweep_schedule_next(&s, &it)) {
		CHECK(it.case_idx >= 0 && it.case_idx < 4);
		CHECK(keep[it.case_idx]);
		CHECK(it.sample >= 0 && it.sample < 7);
		if (it.case_idx >= 0 && it.case_idx < 4 && it.sample >= 0 && it.sample < 7)
			samples[it.case_idx][it.sample]++;
		if (it.case_idx != last_case && blocks < 16) {
			round_of_block[blocks] = s.round;
			case_of_block[blocks++] = it.case_idx;
		}
		last_case = it.case_idx;
		total++;
	}
	sweep_schedule_free(&s);
	sweep_schedule_free(&s);
	CHECK_INT(total, 3 * 7);
	/* every kept case: samples 0..6 once each; the dropped one never */
	for (int c = 0; c < 4; c++)
		for (int i = 0; i < 7; i++)
			CHECK_INT(samples[c][i], keep[c] ? 1 : 0);
	/* one block per kept case and round, in that round's seeded order */
	CHECK_INT(blocks, 9);
	for (int r = 0; r < 3; r++) {
		int pos = 0;

		sweep_round_order(11, r, 4, order);
		for (size_t i = 0; i < 4; i++) {
			if (!keep[order[i]])
				continue;
			CHECK_INT(round_of_block[r * 3 + pos], r);
			CHECK_INT(case_of_block[r * 3 + pos], order[i]);
			pos++;
		}
	}
	/* without shuffling (a plain run: one round): case order, samples in order */
	keep[1] = true;
	CHECK_INT(sweep_schedule_init(&s, 4, keep, 3, 1, 11, false), 0);
	for (int c = 0; c < 4; c++)
		for (int i = 0; i < 3; i++) {
			CHECK(sweep_schedule_next(&s, &it));
			CHECK_INT(it.case_idx, c);
			CHECK_INT(it.sample, i);
		}
	CHECK(!sweep_schedule_next(&s, &it));
	CHECK(!sweep_schedule_next(&s, &it));
	sweep_schedule_free(&s);
	/* nothing kept: nothing to replay */
	memset(keep, 0, sizeof keep);
	CHECK_INT(sweep_schedule_init(&s, 4, keep, 3, 2, 1, true), 0);
	CHECK(!sweep_schedule_next(&s, &it));
	sweep_schedule_free(&s);
}

static void test_plugin(const char *plugin, const char *fake_v2, const char *not_tuner)
{
	struct sweep_plugin p;
	struct sweep_verdict v = {0, 0, 0};
	struct sweep_choice ring_ll = {43008, 0, 1, 0, 4}, ring_ll128 = {43008, 0, 1, 1, 0};
	struct sweep_choice bad = {43008, 0, 1, 0, 65};
	struct h_plugin h;
	struct h_comm comm;
	float t[H_NA][H_NP];
	char err[512];
	int nch = 0;

	CHECK_INT(sweep_plugin_open(NULL, &p, err, sizeof err), -1);
	CHECK_STR(err, "--sweep needs nccltune's tuner plugin in NCCL_TUNER_PLUGIN: NCCL_TUNER_PLUGIN "
	          "is not set (set it to the absolute path of libnccl-tuner-nccltune.so)");
	CHECK(p.handle == NULL);
	CHECK_INT(sweep_plugin_open("", &p, err, sizeof err), -1);
	CHECK_CONTAINS(err, "is not set");
	CHECK_INT(sweep_plugin_open("nccltune", &p, err, sizeof err), -1);
	CHECK_CONTAINS(err, "NCCL_TUNER_PLUGIN: 'nccltune' is a name, not a path");
	CHECK_INT(sweep_plugin_open("/nonexistent/libnccl-tuner-x.so", &p, err, sizeof err), -1);
	CHECK_CONTAINS(err, "NCCL_TUNER_PLUGIN: cannot load '/nonexistent/libnccl-tuner-x.so': ");
	CHECK_INT(sweep_plugin_open(not_tuner, &p, err, sizeof err), -1);
	CHECK_CONTAINS(err, "has no nccltune_tuner_control_version (not nccltune's plugin)");
	CHECK_INT(sweep_plugin_open(fake_v2, &p, err, sizeof err), -1);
	CHECK_CONTAINS(err, "answers control version 2, this probe speaks 1");
	CHECK(p.handle == NULL);
	sweep_plugin_close(&p);
	sweep_plugin_close(NULL);

	CHECK_INT(sweep_plugin_open(plugin, &p, err, sizeof err), 0);
	if (!p.handle || h_open(&h, plugin) != 0)
		return;
	CHECK_INT(h_init(&comm, &h, H_V5, 7, 8, 1, NULL), 0);
	/* PCIe: LL128 is IGNORE. Forced Ring/LL: applied; forced Ring/LL128: ignored. */
	p.record(1);
	CHECK_INT(sweep_plugin_force(&p, &ring_ll), 0);
	h_table(H_PCIE, t);
	nch = 0;
	CHECK_INT(h_coll(&comm, NCCLTUNE_TUNER_COLL_ALLREDUCE, 43008, t, H_NA, H_NP, 0, &nch), 0);
	CHECK_INT(nch, 4);
	h_table(H_PCIE, t);
	CHECK_INT(h_coll(&comm, NCCLTUNE_TUNER_COLL_ALLREDUCE, 4, t, H_NA, H_NP, 0, &nch), 0);
	sweep_plugin_drain(&p, 43008, &v);
	CHECK_INT(v.forced, 1);
	CHECK_INT(v.ignored, 0);
	CHECK_INT(v.other, 1);            /* the 4-byte one is another size */
	CHECK_INT(p.decisions(NULL, 0), 0);   /* drained */
	memset(&v, 0, sizeof v);
	CHECK_INT(sweep_plugin_force(&p, &ring_ll128), 0);
	h_table(H_PCIE, t);
	nch = 0;
	CHECK_INT(h_coll(&comm, NCCLTUNE_TUNER_COLL_ALLREDUCE, 43008, t, H_NA, H_NP, 1, &nch), 0);
	CHECK_INT(h_coll(&comm, NCCLTUNE_TUNER_COLL_ALLREDUCE, 43008, t, H_NA, H_NP, 1, &nch), 0);
	sweep_plugin_drain(&p, 43008, &v);
	CHECK_INT(v.forced, 2);
	CHECK_INT(v.ignored, 2);
	/* cleared: nothing forced (no table either), so nothing counts as forced */
	memset(&v, 0, sizeof v);
	CHECK_INT(sweep_plugin_force(&p, NULL), 0);
	h_table(H_PCIE, t);
	CHECK_INT(h_coll(&comm, NCCLTUNE_TUNER_COLL_ALLREDUCE, 43008, t, H_NA, H_NP, 1, &nch), 0);
	sweep_plugin_drain(&p, 43008, &v);
	CHECK_INT(v.forced, 0);
	CHECK_INT(v.other, 1);
	/* values the plugin refuses */
	CHECK_INT(sweep_plugin_force(&p, &bad), -1);
	p.record(0);
	h_fini(&comm);
	dlclose(h.handle);
	sweep_plugin_close(&p);
	CHECK(p.handle == NULL);
}

int main(int argc, char **argv)
{
	const char *base = getenv("TMPDIR");

	if (argc != 4) {
		fprintf(stderr, "usage: %s PLUGIN FAKE_V2 NOT_A_TUNER\n", argv[0]);
		return 2;
	}
	snprintf(tmpdir, sizeof tmpdir, "%s/test-sweep-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	proto_workload_defaults(&w);
	w.nsizes = 3;
	w.bytes[1] = 1024;
	w.bytes[2] = 4096;
	w.iters = 20;
	test_parse_ok();
	test_parse_errors();
	test_load();
	test_choice_text();
	test_order();
	test_schedule();
	test_plugin(argv[1], argv[2], argv[3]);
	rmdir(tmpdir);
	return check_status();
}
