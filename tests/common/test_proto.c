/* test_proto.c - protocol v1: workload options, statistics, report round trip, and the
 * strict parser's verdict on malformed probe output; the extensions: per-size --ops,
 * NCCL's names, capabilities, decisions and sweep entries. */
#include <stdlib.h>

#include "../check.h"
#include "proto.h"

static int parse(const char *text, struct proto_report *r, char *err, size_t errlen)
{
	return proto_report_parse(text, strlen(text), r, err, errlen);
}

static void test_options(void)
{
	struct proto_workload w;
	char err[256];

	proto_workload_defaults(&w);
	CHECK_INT(w.nsizes, 1);
	CHECK_INT(w.bytes[0], 43008);
	CHECK_INT(w.ops, 122);
	CHECK_INT(proto_workload_option(&w, "bytes", "4096,64K,1M", err, sizeof err), 0);
	CHECK_INT(w.nsizes, 3);
	CHECK_INT(w.bytes[1], 65536);
	CHECK_INT(w.bytes[2], 1048576);
	CHECK_INT(proto_workload_option(&w, "bytes", "12,,4", err, sizeof err), -1);
	CHECK_CONTAINS(err, "--bytes");
	CHECK_INT(proto_workload_option(&w, "bytes", "0", err, sizeof err), -1);
	CHECK_INT(proto_workload_option(&w, "bytes", "12x", err, sizeof err), -1);
	CHECK_CONTAINS(err, "'12x'");
	CHECK_INT(proto_workload_option(&w, "bytes", "4096,", err, sizeof err), -1);
	/* G, and decimal fractions that give whole bytes */
	CHECK_INT(proto_workload_option(&w, "bytes", "1G,1.5M,0.5k,2.25K,12.0", err, sizeof err), 0);
	CHECK_INT(w.nsizes, 5);
	CHECK_INT(w.bytes[0], 1073741824);
	CHECK_INT(w.bytes[1], 1572864);
	CHECK_INT(w.bytes[2], 512);
	CHECK_INT(w.bytes[3], 2304);
	CHECK_INT(w.bytes[4], 12);
	CHECK_INT(proto_workload_option(&w, "bytes", "1.3K", err, sizeof err), -1);
	CHECK_CONTAINS(err, "'1.3K' is not a whole number of bytes");
	CHECK_INT(proto_workload_option(&w, "bytes", "1.5", err, sizeof err), -1);
	CHECK_CONTAINS(err, "not a whole number");
	CHECK_INT(proto_workload_option(&w, "bytes", "1.K", err, sizeof err), -1);
	CHECK_INT(proto_workload_option(&w, "bytes", "17G", err, sizeof err), -1);
	CHECK_CONTAINS(err, "out of range");
	CHECK_INT(proto_workload_option(&w, "bytes", "99999999999999999999999", err, sizeof err), -1);
	CHECK_CONTAINS(err, "out of range");
	CHECK_INT(proto_workload_option(&w, "ops", "0", err, sizeof err), -1);
	CHECK_CONTAINS(err, "--ops: '0'");
	CHECK_INT(proto_workload_option(&w, "ops", "16", err, sizeof err), 0);
	CHECK_INT(w.ops, 16);
	CHECK_INT(proto_workload_option(&w, "dtype", "fp8", err, sizeof err), -1);
	CHECK_CONTAINS(err, "'fp8'");
	CHECK_INT(proto_workload_option(&w, "dtype", "f32", err, sizeof err), 0);
	CHECK_INT(proto_dtype_size(w.dtype), 4);
	CHECK_INT(proto_workload_option(&w, "out-of-place", NULL, err, sizeof err), 0);
	CHECK(w.out_of_place);
	CHECK_INT(proto_workload_option(&w, "frobnicate", "1", err, sizeof err), 1);
}

static void test_stats(void)
{
	double s[] = {5, 1, 4, 2, 3};
	struct proto_stats st;

	proto_stats_compute(s, 5, &st);
	CHECK_NEAR(st.median, 3, 1e-12);
	CHECK_NEAR(st.min, 1, 1e-12);
	CHECK_NEAR(st.max, 5, 1e-12);
	CHECK_NEAR(st.p10, 1.4, 1e-12);
	CHECK_NEAR(st.p90, 4.6, 1e-12);
}

static void test_round_trip(void)
{
	struct proto_report r = {0}, back;
	char err[256], *text;

	r.ok = true;
	r.nranks = 8;
	snprintf(r.nccl_version, sizeof r.nccl_version, "2.28.3");
	snprintf(r.source, sizeof r.source, "model");
	snprintf(r.model, sizeof r.model, "pcie-gen5-8gpu");
	r.nresults = 1;
	r.results[0] = (struct proto_size_result){43008, 122, 200, {23.4, 22.9, 24.8, 22.5, 31.0}, true, {0}, false, 0, 0};
	text = proto_report_format(&r);
	CHECK(text != NULL);
	CHECK(text && text[strlen(text) - 1] == '\n');
	CHECK_INT(parse(text, &back, err, sizeof err), 0);
	CHECK(back.ok);
	CHECK_INT(back.nranks, 8);
	CHECK_STR(back.model, "pcie-gen5-8gpu");
	CHECK_INT(back.results[0].bytes, 43008);
	CHECK_NEAR(back.results[0].us.median, 23.4, 1e-12);
	free(text);

	memset(&r, 0, sizeof r);
	proto_report_fail(&r, PROTO_STAGE_CAPTURE, "ncclAllReduce: %s", "invalid usage");
	text = proto_report_format(&r);
	CHECK_STR(text, "{\"schema\":\"nccltune-probe/1\",\"ok\":false,\"stage\":\"capture\","
	                "\"error\":\"ncclAllReduce: invalid usage\"}\n");
	CHECK_INT(parse(text, &back, err, sizeof err), 0);
	CHECK(!back.ok);
	CHECK_INT(back.stage, PROTO_STAGE_CAPTURE);
	free(text);
}

static void test_strictness(void)
{
	static const struct { const char *text, *why; } bad[] = {
		{"", "report: line 1: not valid JSON (truncated or corrupt near byte 0)"},
		{"garbage", "report: line 1: not valid JSON (truncated or corrupt near byte 0)"},
		{"{\"schema\":\"nccltune-probe/1\",\"ok\":false,\"stage\":\"init\",\"error\":\"x\"} {}",
		 "report: line 1: text after the JSON value (byte 68)"},
		{"{\"schema\":\"nccltune-probe/2\",\"ok\":false,\"stage\":\"init\",\"error\":\"x\"}",
		 "report: schema: expected \"nccltune-probe/1\""},
		{"{\"schema\":\"nccltune-probe/1\",\"ok\":false,\"stage\":\"boom\",\"error\":\"x\"}",
		 "report: stage: unknown stage 'boom'"},
		{"{\"schema\":\"nccltune-probe/1\",\"ok\":\"yes\"}", "report: ok: expected a boolean, got a string"},
		{"{\"schema\":\"nccltune-probe/1\",\"ok\":true,\"nranks\":8,\"nccl_version\":\"2\","
		 "\"source\":\"measured\",\"results\":[]}", "report: results: empty"},
		{"{\"schema\":\"nccltune-probe/1\",\"ok\":true,\"nranks\":8,\"nccl_version\":\"2\","
		 "\"source\":\"guessed\",\"results\":[]}",
		 "report: source: expected \"measured\" or \"model\""},
		{"{\"schema\":\"nccltune-probe/1\",\"ok\":true,\"nranks\":8,\"nccl_version\":\"2\","
		 "\"source\":\"measured\",\"results\":[{\"bytes\":1,\"ops\":1,\"samples\":1,"
		 "\"us\":{\"median\":-1,\"p10\":1,\"p90\":1,\"min\":1,\"max\":1},\"correct\":true}]}",
		 "report: results[0].us.median: -1 is out of range [1e-06, 1e+12]"},
		/* below the floor of 1e-6 us: garbage, not the fastest configuration */
		{"{\"schema\":\"nccltune-probe/1\",\"ok\":true,\"nranks\":8,\"nccl_version\":\"2\","
		 "\"source\":\"measured\",\"results\":[{\"bytes\":1,\"ops\":1,\"samples\":1,"
		 "\"us\":{\"median\":0,\"p10\":0,\"p90\":0,\"min\":0,\"max\":0},\"correct\":true}]}",
		 "report: results[0].us.median: 0 is out of range [1e-06, 1e+12]"},
		{"{\"schema\":\"nccltune-probe/1\",\"ok\":true,\"nranks\":8,\"nccl_version\":\"2\","
		 "\"source\":\"measured\",\"results\":[{\"bytes\":1,\"ops\":1,\"samples\":1,"
		 "\"us\":{\"median\":1,\"p10\":1,\"p90\":1,\"min\":1e-300,\"max\":1},\"correct\":true}]}",
		 "report: results[0].us.min: 1e-300 is out of range [1e-06, 1e+12]"},
		/* an unknown key nested past the bound: the journal keeps reports as they came */
		{"{\"schema\":\"nccltune-probe/1\",\"ok\":false,\"stage\":\"init\",\"error\":\"x\","
		 "\"ext\":[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]}",
		 "report: nested deeper than 16 levels"},
		{"{\"schema\":\"nccltune-probe/1\",\"ok\":true,\"nranks\":8,\"nccl_version\":\"2\","
		 "\"source\":\"measured\",\"results\":[{\"bytes\":1,\"ops\":1,\"samples\":1,"
		 "\"us\":{\"median\":1e999,\"p10\":1,\"p90\":1,\"min\":1,\"max\":1},\"correct\":true}]}",
		 "report: results[0].us.median: not a finite number"},
		{"{\"schema\":\"nccltune-probe/1\",\"ok\":true,\"nranks\":8,\"nccl_version\":\"2\","
		 "\"source\":\"measured\",\"results\":[{\"bytes\":1,\"ops\":1,\"samples\":1,"
		 "\"us\":{\"median\":1,\"p10\":1,\"p90\":1,\"min\":1},\"correct\":true}]}", "report: results[0].us.max: missing"},
		{"{\"schema\":\"nccltune-probe/1\",\"ok\":false,\"ok\":true,\"stage\":\"init\",\"error\":\"x\"}",
		 "report: ok: duplicate key"},
	};
	struct proto_report r;
	char err[256];

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		CHECK_INT(parse(bad[i].text, &r, err, sizeof err), -1);
		CHECK_STR(err, bad[i].why);
	}
	/* NaN is not JSON; cJSON refuses it, so a probe printing it is garbage. */
	CHECK_INT(parse("{\"schema\":\"nccltune-probe/1\",\"ok\":true,\"nranks\":NaN}", &r, err,
	                sizeof err), -1);
	/* ok with a wrong sum is a verify failure, never a measurement */
	CHECK_INT(parse("{\"schema\":\"nccltune-probe/1\",\"ok\":true,\"nranks\":2,\"nccl_version\":\"2\","
	                "\"source\":\"measured\",\"results\":[{\"bytes\":8,\"ops\":1,\"samples\":1,"
	                "\"us\":{\"median\":1,\"p10\":1,\"p90\":1,\"min\":1,\"max\":1},\"correct\":false}]}",
	                &r, err, sizeof err), 0);
	CHECK(!r.ok);
	CHECK_INT(r.stage, PROTO_STAGE_VERIFY);
	/* 16 levels (ext and 15 arrays) are allowed; the smallest latency is the floor itself */
	CHECK_INT(parse("{\"schema\":\"nccltune-probe/1\",\"ok\":false,\"stage\":\"init\","
	                "\"error\":\"x\",\"ext\":[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]}", &r, err,
	                sizeof err), 0);
	CHECK_INT(parse("{\"schema\":\"nccltune-probe/1\",\"ok\":true,\"nranks\":2,\"nccl_version\":\"2\","
	                "\"source\":\"measured\",\"results\":[{\"bytes\":8,\"ops\":1,\"samples\":1,"
	                "\"us\":{\"median\":1e-6,\"p10\":1e-6,\"p90\":1e-6,\"min\":1e-6,\"max\":1e-6},"
	                "\"correct\":true}]}", &r, err, sizeof err), 0);
	/* what one H200 measured with one rank (a no-op all-reduce): a measurement, not garbage */
	CHECK_INT(parse("{\"schema\":\"nccltune-probe/1\",\"ok\":true,\"nranks\":1,\"nccl_version\":\"2\","
	                "\"source\":\"measured\",\"results\":[{\"bytes\":43008,\"ops\":122,\"samples\":200,"
	                "\"us\":{\"median\":0.01049180301364328,\"p10\":0.01049180301364328,"
	                "\"p90\":0.010754098184406757,\"min\":0.010229507842879803,"
	                "\"max\":0.060065573111909333},\"correct\":true}]}", &r, err, sizeof err), 0);
	/* extensions (unknown keys) are allowed */
	CHECK_INT(parse("  {\"schema\":\"nccltune-probe/1\",\"ok\":false,\"stage\":\"env\",\"error\":\"e\","
	                "\"phases_s\":{}}\n", &r, err, sizeof err), 0);
}

static void test_ops_lists(void)
{
	struct proto_workload w;
	char err[256], many[256] = "";

	proto_workload_defaults(&w);
	CHECK_INT(w.nops, 0);
	CHECK_INT(proto_workload_ops(&w, 0), 122);
	CHECK_INT(proto_workload_option(&w, "ops", "8", err, sizeof err), 0);
	CHECK_INT(w.nops, 0);
	CHECK_INT(proto_workload_ops(&w, 0), 8);
	CHECK_INT(proto_workload_ops(&w, 5), 8);
	CHECK_INT(proto_workload_option(&w, "ops", "8,122,1", err, sizeof err), 0);
	CHECK_INT(w.nops, 3);
	CHECK_INT(w.ops, 122);                 /* the largest: a safe bound */
	CHECK_INT(proto_workload_ops(&w, 0), 8);
	CHECK_INT(proto_workload_ops(&w, 1), 122);
	CHECK_INT(proto_workload_ops(&w, 2), 1);
	/* one per --bytes entry, in whatever order the options came */
	CHECK_INT(proto_workload_validate(&w, err, sizeof err), -1);
	CHECK_STR(err, "--ops: 3 values for 1 --bytes size (give one value for all sizes, or one "
	          "per --bytes entry)");
	CHECK_INT(proto_workload_option(&w, "bytes", "1K,2K", err, sizeof err), 0);
	CHECK_INT(proto_workload_validate(&w, err, sizeof err), -1);
	CHECK_CONTAINS(err, "--ops: 3 values for 2 --bytes sizes");
	CHECK_INT(proto_workload_option(&w, "bytes", "1K,2K,4K", err, sizeof err), 0);
	CHECK_INT(proto_workload_validate(&w, err, sizeof err), 0);
	/* a single value afterwards means one value for all sizes again */
	CHECK_INT(proto_workload_option(&w, "ops", "4", err, sizeof err), 0);
	CHECK_INT(w.nops, 0);
	CHECK_INT(proto_workload_ops(&w, 2), 4);
	CHECK_INT(proto_workload_validate(&w, err, sizeof err), 0);
	/* bad lists leave a message naming the item */
	CHECK_INT(proto_workload_option(&w, "ops", "8,0", err, sizeof err), -1);
	CHECK_STR(err, "--ops: '0' in '8,0' is not an integer in 1..100000");
	CHECK_INT(proto_workload_option(&w, "ops", "8,,4", err, sizeof err), -1);
	CHECK_STR(err, "--ops: bad item '' in '8,,4'");
	CHECK_INT(proto_workload_option(&w, "ops", ",8", err, sizeof err), -1);
	CHECK_CONTAINS(err, "bad item");
	CHECK_INT(proto_workload_option(&w, "ops", "8,", err, sizeof err), -1);
	CHECK_STR(err, "--ops: trailing comma in '8,'");
	CHECK_INT(proto_workload_option(&w, "ops", "8,x", err, sizeof err), -1);
	CHECK_CONTAINS(err, "'x' in '8,x'");
	CHECK_INT(proto_workload_option(&w, "ops", "8,100001", err, sizeof err), -1);
	for (size_t i = 0, at = 0; i < 33; i++)
		at += (size_t)snprintf(many + at, sizeof many - at, i ? ",1" : "1");
	CHECK_INT(proto_workload_option(&w, "ops", many, err, sizeof err), -1);
	CHECK_CONTAINS(err, "more than 32 values");
	CHECK_INT(w.nops, 0);                  /* failures leave the last good value */
	CHECK_INT(w.ops, 4);
}

static void test_nccl_names(void)
{
	static const char *const algos[] = {"Tree", "Ring", "CollNetDirect", "CollNetChain",
	                                    "NVLS", "NVLSTree", "PAT"};
	static const char *const protos[] = {"LL", "LL128", "Simple"};

	for (int i = 0; i < 7; i++) {
		CHECK_STR(proto_nccl_algo_name(i), algos[i]);
		CHECK_INT(proto_nccl_algo_parse(algos[i]), i);
	}
	for (int i = 0; i < 3; i++) {
		CHECK_STR(proto_nccl_proto_name(i), protos[i]);
		CHECK_INT(proto_nccl_proto_parse(protos[i]), i);
	}
	CHECK_INT(proto_nccl_algo_parse("ring"), 1);
	CHECK_INT(proto_nccl_algo_parse("NVLSTREE"), 5);
	CHECK_INT(proto_nccl_algo_parse("nvls_tree"), -1);
	CHECK_INT(proto_nccl_algo_parse("Rnig"), -1);
	CHECK_INT(proto_nccl_algo_parse(NULL), -1);
	CHECK_INT(proto_nccl_proto_parse("simple"), 2);
	CHECK_INT(proto_nccl_proto_parse("ll128"), 1);
	CHECK_INT(proto_nccl_proto_parse("LL64"), -1);
	CHECK(proto_nccl_algo_name(PROTO_NCCL_ANY) == NULL);
	CHECK(proto_nccl_algo_name(7) == NULL);
	CHECK(proto_nccl_proto_name(3) == NULL);
}

static void test_capabilities(void)
{
	char *text = proto_capabilities_format(PROTO_CAP_OPS_LIST | PROTO_CAP_DECISIONS |
	                                       PROTO_CAP_SWEEP);
	unsigned caps = 99;
	char err[256];
	static const char *const bad[][2] = {
		{"{\"schema\":\"nccltune-probe/2\",\"capabilities\":[]}", "'schema'"},
		{"{\"schema\":\"nccltune-probe/1\",\"capabilities\":\"sweep\"}", "not an array"},
		{"{\"schema\":\"nccltune-probe/1\",\"capabilities\":[1]}", "not a string"},
		{"{\"schema\":\"nccltune-probe/1\"}", "not an array"},
		{"{\"schema\":\"nccltune-probe/1\",\"capabilities\":[]} x", "more than one"},
		/* one line per rank must be the same line */
		{"{\"schema\":\"nccltune-probe/1\",\"capabilities\":[\"sweep\"]}\n"
		 "{\"schema\":\"nccltune-probe/1\",\"capabilities\":[]}\n", "not copies"},
		{"{\"schema\":\"nccltune-probe/1\",\"capabilities\":[\"sweep\"]}\n"
		 "{\"schema\":\"nccltune-probe/1\",\"capabilities\":[\"zzzzz\"]}\n", "not copies"},
		{"{\"schema\":\"nccltune-probe/1\",\"capabilities\":[]}\n"
		 "{\"schema\":\"nccltune-probe/1\",\"capabilities\":[]", "not copies"},
		{"usage: probe [options]", "not a JSON object"},
		{"[]", "not a JSON object"},
	};

	CHECK_STR(text, "{\"schema\":\"nccltune-probe/1\",\"capabilities\":[\"ops-list\","
	          "\"decisions\",\"sweep\"]}\n");
	CHECK_INT(proto_capabilities_parse(text, strlen(text), &caps, err, sizeof err), 0);
	CHECK_INT(caps, PROTO_CAP_OPS_LIST | PROTO_CAP_DECISIONS | PROTO_CAP_SWEEP);
	free(text);
	text = proto_capabilities_format(0);
	CHECK_STR(text, "{\"schema\":\"nccltune-probe/1\",\"capabilities\":[]}\n");
	free(text);
	CHECK_STR(proto_capability_name(PROTO_CAP_WINDOW), "window");
	CHECK_STR(proto_capability_name(PROTO_CAP_COMPUTE), "compute");
	CHECK(proto_capability_name(3) == NULL);
	/* words of a newer probe are skipped, other keys ignored */
	text = "{\"schema\":\"nccltune-probe/1\",\"capabilities\":[\"teleport\",\"window\"],"
	       "\"x\":1}";
	CHECK_INT(proto_capabilities_parse(text, strlen(text), &caps, err, sizeof err), 0);
	CHECK_INT(caps, PROTO_CAP_WINDOW);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		caps = 99;
		CHECK_INT(proto_capabilities_parse(bad[i][0], strlen(bad[i][0]), &caps, err,
		                                   sizeof err), -1);
		CHECK_CONTAINS(err, bad[i][1]);
		CHECK_INT(caps, 0);
	}
	CHECK_INT(proto_capabilities_parse("{}\0", 3, &caps, err, sizeof err), -1);
	CHECK_CONTAINS(err, "NUL");
	/* `mpirun -np 3 nccltune-probe --capabilities`: three identical lines are one */
	text = "{\"schema\":\"nccltune-probe/1\",\"capabilities\":[\"sweep\"]}\n"
	       "{\"schema\":\"nccltune-probe/1\",\"capabilities\":[\"sweep\"]}\n"
	       "  {\"schema\":\"nccltune-probe/1\",\"capabilities\":[\"sweep\"]}\n";
	CHECK_INT(proto_capabilities_parse(text, strlen(text), &caps, err, sizeof err), 0);
	CHECK_INT(caps, PROTO_CAP_SWEEP);
}

#define HEAD "{\"schema\":\"nccltune-probe/1\",\"ok\":true,\"nranks\":2,\"nccl_version\":\"2\"," \
	"\"source\":\"measured\",\"results\":[{\"bytes\":43008,\"ops\":1,\"samples\":1," \
	"\"us\":{\"median\":1,\"p10\":1,\"p90\":1,\"min\":1,\"max\":1},\"correct\":true"

static void test_decisions(void)
{
	struct proto_report r = {0}, back;
	char err[256], *text;
	static const char *const bad[][2] = {
		{HEAD ",\"nccl\":[]}]}", "results[0].nccl: expected an object, got an array"},
		{HEAD ",\"nccl\":{\"algo\":\"Rnig\",\"proto\":\"LL\",\"ctas\":1,\"symmetric\":false}}]}",
		 "results[0].nccl.algo: 'Rnig' is not one of Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT"},
		{HEAD ",\"nccl\":{\"algo\":\"Ring\",\"proto\":\"LL64\",\"ctas\":1,\"symmetric\":false}}]}",
		 "results[0].nccl.proto: 'LL64' is not one of LL, LL128, Simple"},
		{HEAD ",\"nccl\":{\"algo\":1,\"proto\":\"LL\",\"ctas\":1,\"symmetric\":false}}]}",
		 "results[0].nccl.algo: expected a string or null, got a number"},
		{HEAD ",\"nccl\":{\"algo\":\"Ring\",\"proto\":\"LL\",\"ctas\":0,\"symmetric\":false}}]}",
		 "results[0].nccl.ctas: 0 is out of range [1, 1024]"},
		{HEAD ",\"nccl\":{\"algo\":\"Ring\",\"proto\":\"LL\",\"ctas\":-2,\"symmetric\":false}}]}",
		 "results[0].nccl.ctas: -2 is out of range [1, 1024]"},
		{HEAD ",\"nccl\":{\"algo\":\"Ring\",\"proto\":\"LL\",\"ctas\":1.5,\"symmetric\":false}}]}",
		 "results[0].nccl.ctas: expected an integer, got 1.5"},
		{HEAD ",\"nccl\":{\"algo\":\"Ring\",\"proto\":\"LL\",\"ctas\":\"4\",\"symmetric\":false}}]}",
		 "results[0].nccl.ctas: expected a number, got a string"},
		{HEAD ",\"nccl\":{\"algo\":\"Ring\",\"proto\":\"LL\",\"symmetric\":false}}]}",
		 "results[0].nccl.ctas: missing"},
		{HEAD ",\"nccl\":{\"algo\":\"Ring\",\"proto\":\"LL\",\"ctas\":1}}]}", "results[0].nccl.symmetric: missing"},
		{HEAD ",\"nccl\":{\"algo\":\"Ring\",\"proto\":\"LL\",\"ctas\":1,\"symmetric\":0}}]}",
		 "results[0].nccl.symmetric: expected a boolean, got a number"},
		{HEAD ",\"nccl\":{\"algo\":null,\"proto\":\"LL\",\"ctas\":1,\"symmetric\":false}}]}",
		 "results[0].nccl: algo and proto may be null only with symmetric: true"},
		{HEAD ",\"nccl\":{\"algo\":\"Ring\",\"proto\":\"LL\",\"ctas\":1,\"symmetric\":false,"
		 "\"mixed\":\"yes\"}}]}", "results[0].nccl.mixed: expected a boolean, got a string"},
		{HEAD ",\"nccl\":{\"algo\":null,\"proto\":null,\"ctas\":1,\"symmetric\":true,"
		 "\"kernel\":7}}]}", "results[0].nccl.kernel: expected a string, got a number"},
		{HEAD ",\"nccl\":{\"algo\":\"Ring\",\"algo\":\"Tree\",\"proto\":\"LL\",\"ctas\":1,"
		 "\"symmetric\":false}}]}", "results[0].nccl.algo: duplicate key"},
		{HEAD ",\"nccl\":{\"proto\":\"LL\",\"ctas\":1,\"symmetric\":false}}]}", "results[0].nccl.algo: missing"},
	};

	r.ok = true;
	r.nranks = 2;
	snprintf(r.nccl_version, sizeof r.nccl_version, "2.28.9");
	snprintf(r.source, sizeof r.source, "measured");
	r.nresults = 2;
	r.results[0] = (struct proto_size_result){43008, 122, 200, {2, 1, 3, 1, 4}, true,
	                                          {true, 1, 0, 1, false, false, ""}, false, 0, 0};
	r.results[1] = (struct proto_size_result){1024, 8, 200, {2, 1, 3, 1, 4}, true,
	                                          {true, PROTO_NCCL_ANY, PROTO_NCCL_ANY, 2, true,
	                                           true, "AllReduce_AGxLL_R"}, false, 0, 0};
	text = proto_report_format(&r);
	CHECK_STR(text, "{\"schema\":\"nccltune-probe/1\",\"ok\":true,\"nranks\":2,"
	          "\"nccl_version\":\"2.28.9\",\"source\":\"measured\",\"results\":["
	          "{\"bytes\":43008,\"ops\":122,\"samples\":200,\"us\":{\"median\":2,\"p10\":1,"
	          "\"p90\":3,\"min\":1,\"max\":4},\"correct\":true,\"nccl\":{\"algo\":\"Ring\","
	          "\"proto\":\"LL\",\"ctas\":1,\"symmetric\":false}},"
	          "{\"bytes\":1024,\"ops\":8,\"samples\":200,\"us\":{\"median\":2,\"p10\":1,"
	          "\"p90\":3,\"min\":1,\"max\":4},\"correct\":true,\"nccl\":{\"algo\":null,"
	          "\"proto\":null,\"ctas\":2,\"symmetric\":true,\"kernel\":\"AllReduce_AGxLL_R\","
	          "\"mixed\":true}}]}\n");
	CHECK_INT(parse(text, &back, err, sizeof err), 0);
	CHECK(back.results[0].nccl.known);
	CHECK_INT(back.results[0].nccl.algo, 1);
	CHECK_INT(back.results[0].nccl.proto, 0);
	CHECK_INT(back.results[0].nccl.ctas, 1);
	CHECK(!back.results[0].nccl.symmetric && !back.results[0].nccl.mixed);
	CHECK(back.results[1].nccl.symmetric && back.results[1].nccl.mixed);
	CHECK_INT(back.results[1].nccl.algo, PROTO_NCCL_ANY);
	CHECK_STR(back.results[1].nccl.kernel, "AllReduce_AGxLL_R");
	CHECK(back.sweep == NULL && back.nsweep == 0);
	free(text);
	/* absent stays absent; names in any case, other keys ignored */
	CHECK_INT(parse(HEAD "}]}", &back, err, sizeof err), 0);
	CHECK(!back.results[0].nccl.known);
	CHECK_INT(parse(HEAD ",\"nccl\":{\"algo\":\"NVLSTREE\",\"proto\":\"simple\",\"ctas\":64,"
	                "\"symmetric\":false,\"future\":1}}]}", &back, err, sizeof err), 0);
	CHECK_INT(back.results[0].nccl.algo, 5);
	CHECK_INT(back.results[0].nccl.proto, 2);
	CHECK_INT(back.results[0].nccl.ctas, 64);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		CHECK_INT(parse(bad[i][0], &back, err, sizeof err), -1);
		CHECK_CONTAINS(err, bad[i][1]);
	}
}

#define OKSW HEAD "}],\"sweep\":"
#define FAILSW "{\"schema\":\"nccltune-probe/1\",\"ok\":false,\"stage\":\"replay\",\"error\":\"e\","
#define ENTRY(i) "{\"index\":" #i ",\"bytes\":43008,\"algo\":\"Ring\",\"proto\":\"LL\",\"ctas\":4," \
	"\"ok\":false,\"stage\":\"env\",\"error\":\"not available\"}"

static void test_sweep_entries(void)
{
	struct proto_report r = {0}, back;
	struct proto_sweep_entry e[2];
	char err[512], *text, longerr[400];
	static const char *const bad[][2] = {
		{OKSW "[" ENTRY(1) "]}", "sweep[0]: index is 1, not its position"},
		{OKSW "[]}", "sweep: empty"},
		{OKSW "{}}", "sweep: expected an array, got an object"},
		{OKSW "[{\"index\":0,\"bytes\":1024,\"algo\":null,\"proto\":null,\"ctas\":0,\"ok\":false,"
		 "\"stage\":\"env\",\"error\":\"x\"}]}", "1024 bytes is not one of the results' sizes"},
		{OKSW "[" ENTRY(0) "],\"sweep_in_flight\":0}", "sweep_in_flight: in a successful report"},
		{OKSW "[{\"index\":0,\"bytes\":43008,\"algo\":\"Rnig\",\"proto\":null,\"ctas\":0,"
		 "\"ok\":false,\"stage\":\"env\",\"error\":\"x\"}]}", "sweep[0].algo: 'Rnig' is not one of Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT"},
		{OKSW "[{\"index\":0,\"bytes\":43008,\"algo\":null,\"proto\":null,\"ctas\":65536,"
		 "\"ok\":false,\"stage\":\"env\",\"error\":\"x\"}]}", "sweep[0].ctas: 65536 is out of range [0, 1024]"},
		{OKSW "[{\"index\":0,\"bytes\":43008,\"algo\":null,\"proto\":null,\"ctas\":0,"
		 "\"ok\":true,\"samples\":5}]}", "sweep[0].us: missing"},
		{OKSW "[{\"index\":0,\"bytes\":43008,\"algo\":null,\"proto\":null,\"ctas\":0,"
		 "\"ok\":true,\"us\":{\"median\":1,\"p10\":1,\"p90\":1,\"min\":1,\"max\":1}}]}",
		 "sweep[0].samples: missing"},
		{OKSW "[{\"index\":0,\"bytes\":43008,\"algo\":null,\"proto\":null,\"ctas\":0,"
		 "\"ok\":true,\"samples\":5,\"us\":{\"median\":1,\"p10\":2,\"p90\":1,\"min\":1,"
		 "\"max\":1}}]}", "quantiles out of order"},
		{OKSW "[{\"index\":0,\"bytes\":43008,\"algo\":null,\"proto\":null,\"ctas\":0,"
		 "\"ok\":false,\"stage\":\"boom\",\"error\":\"x\"}]}", "sweep[0].stage: unknown stage 'boom'"},
		{OKSW "[{\"index\":0,\"bytes\":43008,\"algo\":null,\"proto\":null,\"ctas\":0,"
		 "\"ok\":false,\"stage\":\"env\"}]}", "sweep[0].error: missing"},
		{OKSW "[{\"index\":0,\"bytes\":43008,\"algo\":null,\"proto\":null,\"ctas\":0,"
		 "\"ok\":\"no\",\"stage\":\"env\",\"error\":\"x\"}]}", "sweep[0].ok: expected a boolean, got a string"},
		{OKSW "[{\"index\":0,\"bytes\":43008,\"algo\":null,\"proto\":null,\"ctas\":0,"
		 "\"ok\":false,\"stage\":\"env\",\"error\":\"x\",\"nccl\":{\"algo\":\"Ring\","
		 "\"proto\":\"LL\",\"ctas\":0,\"symmetric\":false}}]}", "sweep[0].nccl.ctas: 0 is out of range [1, 1024]"},
		{OKSW "[{\"bytes\":43008,\"algo\":null,\"proto\":null,\"ctas\":0,"
		 "\"ok\":false,\"stage\":\"env\",\"error\":\"x\"}]}", "sweep[0].index: missing"},
		{OKSW "[7]}", "sweep[0]: expected an object, got a number"},
		{FAILSW "\"sweep_in_flight\":2}", "sweep_in_flight without sweep"},
		{FAILSW "\"sweep_in_flight\":-1,\"sweep\":[]}", "out of range"},
		{FAILSW "\"sweep_in_flight\":\"2\",\"sweep\":[]}", "sweep_in_flight: expected a number, got a string"},
		{FAILSW "\"sweep\":[" ENTRY(3) "," ENTRY(3) "]}", "sweep[1]: index 3 is not above the one before"},
		{FAILSW "\"sweep_in_flight\":3,\"sweep\":[" ENTRY(3) "]}", "both final and in flight"},
	};

	/* an ok report: one entry per choice, in order */
	r.ok = true;
	r.nranks = 2;
	snprintf(r.nccl_version, sizeof r.nccl_version, "2.28.9");
	snprintf(r.source, sizeof r.source, "measured");
	r.nresults = 1;
	r.results[0] = (struct proto_size_result){43008, 122, 200, {2, 1, 3, 1, 4}, true, {0}, false, 0, 0};
	memset(e, 0, sizeof e);
	e[0] = (struct proto_sweep_entry){0, 43008, 1, 0, 4, true, 200, {2.5, 2, 3, 1.5, 4},
	                                  PROTO_STAGE_ARGS, "", {true, 1, 0, 2, false, false, ""}};
	e[1] = (struct proto_sweep_entry){1, 43008, PROTO_NCCL_ANY, 1, 0, false, 0, {0, 0, 0, 0, 0},
	                                  PROTO_STAGE_ENV, "not available: */LL128 is not usable "
	                                  "here (NCCL's cost table has it IGNORE)", {0}};
	r.sweep = e;
	r.nsweep = 2;
	text = proto_report_format(&r);
	CHECK_STR(text, "{\"schema\":\"nccltune-probe/1\",\"ok\":true,\"nranks\":2,"
	          "\"nccl_version\":\"2.28.9\",\"source\":\"measured\",\"results\":["
	          "{\"bytes\":43008,\"ops\":122,\"samples\":200,\"us\":{\"median\":2,\"p10\":1,"
	          "\"p90\":3,\"min\":1,\"max\":4},\"correct\":true}],\"sweep\":["
	          "{\"index\":0,\"bytes\":43008,\"algo\":\"Ring\",\"proto\":\"LL\",\"ctas\":4,"
	          "\"ok\":true,\"samples\":200,\"us\":{\"median\":2.5,\"p10\":2,\"p90\":3,"
	          "\"min\":1.5,\"max\":4},\"nccl\":{\"algo\":\"Ring\",\"proto\":\"LL\",\"ctas\":2,"
	          "\"symmetric\":false}},"
	          "{\"index\":1,\"bytes\":43008,\"algo\":null,\"proto\":\"LL128\",\"ctas\":0,"
	          "\"ok\":false,\"stage\":\"env\",\"error\":\"not available: */LL128 is not usable "
	          "here (NCCL's cost table has it IGNORE)\"}]}\n");
	CHECK_INT(parse(text, &back, err, sizeof err), 0);
	CHECK(back.ok);
	CHECK_INT(back.nsweep, 2);
	if (back.nsweep == 2) {
		CHECK(back.sweep[0].ok);
		CHECK_INT(back.sweep[0].algo, 1);
		CHECK_INT(back.sweep[0].ctas, 4);
		CHECK_INT(back.sweep[0].samples, 200);
		CHECK_NEAR(back.sweep[0].us.median, 2.5, 0);
		CHECK_INT(back.sweep[0].nccl.ctas, 2);
		CHECK(!back.sweep[1].ok);
		CHECK_INT(back.sweep[1].algo, PROTO_NCCL_ANY);
		CHECK_INT(back.sweep[1].proto, 1);
		CHECK_INT(back.sweep[1].stage, PROTO_STAGE_ENV);
		CHECK_CONTAINS(back.sweep[1].error, "IGNORE");
		CHECK(!back.sweep[1].nccl.known);
	}
	CHECK(!back.has_in_flight);
	proto_report_clear(&back);
	CHECK(back.sweep == NULL && back.nsweep == 0);
	proto_report_clear(&back);   /* twice is fine */
	proto_report_clear(NULL);
	free(text);

	/* a failure with a choice in flight and the entries that were final */
	memset(&r, 0, sizeof r);
	proto_report_fail(&r, PROTO_STAGE_REPLAY, "timed out");
	r.sweep = &e[1];
	r.nsweep = 1;
	r.has_in_flight = true;
	r.sweep_in_flight = 3;
	text = proto_report_format(&r);
	CHECK_STR(text, "{\"schema\":\"nccltune-probe/1\",\"ok\":false,\"stage\":\"replay\","
	          "\"error\":\"timed out\",\"sweep_in_flight\":3,\"sweep\":[{\"index\":1,"
	          "\"bytes\":43008,\"algo\":null,\"proto\":\"LL128\",\"ctas\":0,\"ok\":false,"
	          "\"stage\":\"env\",\"error\":\"not available: */LL128 is not usable here "
	          "(NCCL's cost table has it IGNORE)\"}]}\n");
	CHECK_INT(parse(text, &back, err, sizeof err), 0);
	CHECK(!back.ok);
	CHECK(back.has_in_flight);
	CHECK_INT(back.sweep_in_flight, 3);
	CHECK_INT(back.nsweep, 1);
	CHECK_INT(back.nsweep ? back.sweep[0].index : 0, 1);
	proto_report_clear(&back);
	free(text);
	/* in flight with nothing final yet: an empty list */
	r.nsweep = 0;
	r.sweep = NULL;
	text = proto_report_format(&r);
	CHECK_CONTAINS(text, "\"sweep_in_flight\":3,\"sweep\":[]}");
	CHECK_INT(parse(text, &back, err, sizeof err), 0);
	CHECK(back.has_in_flight && back.nsweep == 0);
	proto_report_clear(&back);
	free(text);
	/* a plain failure says nothing of a sweep */
	r.has_in_flight = false;
	text = proto_report_format(&r);
	CHECK_STR(text, "{\"schema\":\"nccltune-probe/1\",\"ok\":false,\"stage\":\"replay\","
	          "\"error\":\"timed out\"}\n");
	free(text);
	/* an error longer than an entry keeps */
	memset(longerr, 'x', sizeof longerr - 1);
	longerr[sizeof longerr - 1] = '\0';
	{
		char doc[1024];

		snprintf(doc, sizeof doc, OKSW "[{\"index\":0,\"bytes\":43008,\"algo\":null,"
		         "\"proto\":null,\"ctas\":0,\"ok\":false,\"stage\":\"env\",\"error\":\"%s\"}]}",
		         longerr);
		CHECK_INT(parse(doc, &back, err, sizeof err), -1);
		CHECK_CONTAINS(err, "sweep[0].error: string longer than 255 bytes");
	}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		CHECK_INT(parse(bad[i][0], &back, err, sizeof err), -1);
		CHECK_CONTAINS(err, bad[i][1]);
		CHECK(back.sweep == NULL);   /* nothing to free after a failed parse */
	}
}

/* The server extensions: --compute-us and --window (options), "compute", "step_us",
 * "allreduce_us" and "window" (reports), written and read back, and refused when wrong. */
#define SRV_HEAD "{\"schema\":\"nccltune-probe/1\",\"ok\":true,\"nranks\":1,\"nccl_version\":\"2\"," \
	"\"source\":\"measured\",\"results\":[{\"bytes\":1024,\"ops\":2,\"samples\":1," \
	"\"us\":{\"median\":41,\"p10\":41,\"p90\":41,\"min\":41,\"max\":41},\"correct\":true"
#define SRV_COMPUTE ",\"compute\":{\"kernel_us\":40,\"ctas\":132," \
	"\"us\":{\"median\":40,\"p10\":40,\"p90\":40,\"min\":40,\"max\":40}}"

static void test_server_extensions(void)
{
	static const char *const bad_opts[][2] = {
		{"compute-us", NULL}, {"compute-us", ""}, {"compute-us", "0"}, {"compute-us", "-1"},
		{"compute-us", "+5"}, {"compute-us", " 5"}, {"compute-us", "1e3"}, {"compute-us", "inf"},
		{"compute-us", "nan"}, {"compute-us", "0x10"}, {"compute-us", "1.2.3"},
		{"compute-us", "."}, {"compute-us", "10001"}, {"compute-us", "40,"},
		{"compute-us", "40,0"}, {"compute-us", "40,65536"}, {"compute-us", "40,-3"},
		{"compute-us", "40,1,2"}, {"compute-us", ",132"}, {"window", NULL},
		{"window", "Symmetric"}, {"window", "none"}, {"window", ""},
	};
	static const char *const bad[][2] = {
		{SRV_HEAD ",\"step_us\":82,\"allreduce_us\":1}]" SRV_COMPUTE
		 ",\"window\":\"asymmetric\"}", "report: window: expected \"symmetric\""},
		{SRV_HEAD "}]" SRV_COMPUTE "}", "report: results[0]: no step_us/allreduce_us in a "
		 "report with compute"},
		{SRV_HEAD ",\"step_us\":82,\"allreduce_us\":1}]}", "report: results[0]: "
		 "step_us/allreduce_us without compute in the report"},
		{SRV_HEAD ",\"step_us\":82}]" SRV_COMPUTE "}", "report: results[0]: step_us and "
		 "allreduce_us come together"},
		{SRV_HEAD ",\"step_us\":82,\"allreduce_us\":-1}]" SRV_COMPUTE "}",
		 "report: results[0].allreduce_us: -1 is out of range"},
		{SRV_HEAD ",\"step_us\":0,\"allreduce_us\":1}]" SRV_COMPUTE "}",
		 "report: results[0].step_us: 0 is out of range"},
		{SRV_HEAD ",\"step_us\":82,\"allreduce_us\":42}]" SRV_COMPUTE "}",
		 "report: results[0]: allreduce_us 42 is above the median of us 41"},
		{SRV_HEAD ",\"step_us\":82,\"allreduce_us\":1}],\"compute\":{\"kernel_us\":40,"
		 "\"ctas\":0,\"us\":{\"median\":40,\"p10\":40,\"p90\":40,\"min\":40,\"max\":40}}}",
		 "report: compute.ctas: 0 is out of range"},
		{SRV_HEAD ",\"step_us\":82,\"allreduce_us\":1}],\"compute\":{\"kernel_us\":40,"
		 "\"ctas\":1.5,\"us\":{\"median\":40,\"p10\":40,\"p90\":40,\"min\":40,\"max\":40}}}",
		 "report: compute.ctas:"},
		{SRV_HEAD ",\"step_us\":82,\"allreduce_us\":1}],\"compute\":{\"kernel_us\":20000,"
		 "\"ctas\":1,\"us\":{\"median\":40,\"p10\":40,\"p90\":40,\"min\":40,\"max\":40}}}",
		 "report: compute.kernel_us: 20000 is out of range"},
		{SRV_HEAD ",\"step_us\":82,\"allreduce_us\":1}],\"compute\":{\"kernel_us\":40,"
		 "\"ctas\":1,\"us\":{\"median\":40,\"p10\":41,\"p90\":40,\"min\":40,\"max\":40}}}",
		 "report: compute.us: quantiles out of order"},
		{SRV_HEAD ",\"step_us\":82,\"allreduce_us\":1}],\"compute\":{\"kernel_us\":40,"
		 "\"us\":{\"median\":40,\"p10\":40,\"p90\":40,\"min\":40,\"max\":40}}}",
		 "report: compute.ctas: missing"},
		{SRV_HEAD ",\"step_us\":82,\"allreduce_us\":1}],\"compute\":[]}",
		 "report: compute: expected an object"},
	};
	struct proto_workload w;
	struct proto_report r, back;
	char err[512], *line;

	proto_workload_defaults(&w);
	CHECK(w.compute_us == 0 && w.compute_ctas == 0 && !w.window_symmetric);
	CHECK_INT(proto_workload_option(&w, "compute-us", "40", err, sizeof err), 0);
	CHECK_NEAR(w.compute_us, 40, 0);
	CHECK_INT(w.compute_ctas, 0);   /* one per SM, resolved by the probe */
	CHECK_INT(proto_workload_option(&w, "compute-us", "2.5,132", err, sizeof err), 0);
	CHECK_NEAR(w.compute_us, 2.5, 0);
	CHECK_INT(w.compute_ctas, 132);
	CHECK_INT(proto_workload_option(&w, "compute-us", "10000,65535", err, sizeof err), 0);
	CHECK_INT(proto_workload_option(&w, "window", "symmetric", err, sizeof err), 0);
	CHECK(w.window_symmetric);
	for (size_t i = 0; i < sizeof bad_opts / sizeof bad_opts[0]; i++) {
		struct proto_workload before;

		proto_workload_defaults(&w);
		before = w;
		err[0] = '\0';
		CHECK_INT(proto_workload_option(&w, bad_opts[i][0], bad_opts[i][1], err, sizeof err), -1);
		CHECK_CONTAINS(err, bad_opts[i][0]);   /* the message names the option */
		CHECK(memcmp(&w, &before, sizeof w) == 0);
	}

	/* what the writer writes the reader reads back */
	memset(&r, 0, sizeof r);
	r.ok = true;
	r.nranks = 1;
	snprintf(r.nccl_version, sizeof r.nccl_version, "2.28.9");
	snprintf(r.source, sizeof r.source, "measured");
	r.nresults = 1;
	r.results[0] = (struct proto_size_result){1024, 122, 200, {41, 40.5, 42, 40.2, 50}, true,
	                                          {0}, true, 5002.0, 1.0};
	r.compute = (struct proto_compute){true, 40, 132, {40, 39.9, 40.1, 39.8, 40.3}};
	r.window_symmetric = true;
	line = proto_report_format(&r);
	CHECK(line != NULL);
	CHECK_CONTAINS(line, "\"step_us\":5002,\"allreduce_us\":1");
	CHECK_CONTAINS(line, "\"compute\":{\"kernel_us\":40,\"ctas\":132,\"us\":{\"median\":40,");
	CHECK_CONTAINS(line, "\"window\":\"symmetric\"");
	CHECK_INT(parse(line ? line : "", &back, err, sizeof err), 0);
	CHECK(back.results[0].has_step);
	CHECK_NEAR(back.results[0].step_us, 5002.0, 0);
	CHECK_NEAR(back.results[0].allreduce_us, 1.0, 0);
	CHECK(back.compute.known);
	CHECK_NEAR(back.compute.kernel_us, 40, 0);
	CHECK_INT(back.compute.ctas, 132);
	CHECK_NEAR(back.compute.us.p90, 40.1, 0);
	CHECK(back.window_symmetric);
	free(line);
	proto_report_clear(&back);
	/* without the extensions, none of the keys */
	r.results[0].has_step = false;
	r.compute.known = false;
	r.window_symmetric = false;
	line = proto_report_format(&r);
	CHECK(line && !strstr(line, "step_us") && !strstr(line, "compute") && !strstr(line, "window"));
	CHECK_INT(parse(line ? line : "", &back, err, sizeof err), 0);
	CHECK(!back.compute.known && !back.window_symmetric && !back.results[0].has_step);
	free(line);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		CHECK_INT(parse(bad[i][0], &back, err, sizeof err), -1);
		CHECK_CONTAINS(err, bad[i][1]);
	}
}

/* The rig extension (ranks_per_gpu, mps, teardown_hung, probe_env, warnings): written by the writer on
 * success and failure alike, read back, optional for older probes, typed strictly. */
static void test_rig_extension(void)
{
	struct proto_report r, back;
	char err[512], *text;

	memset(&r, 0, sizeof r);
	r.ok = true;
	r.nranks = 2;
	snprintf(r.nccl_version, sizeof r.nccl_version, "2.30.7");
	snprintf(r.source, sizeof r.source, "measured");
	r.nresults = 1;
	r.results[0].bytes = 43008;
	r.results[0].ops = 122;
	r.results[0].samples = 5;
	r.results[0].correct = true;
	r.results[0].us = (struct proto_stats){7.5, 7.4, 7.6, 7.3, 8.0};
	r.ranks_per_gpu = 2;
	r.has_mps = true;
	r.mps = false;
	snprintf(r.probe_env[0], sizeof r.probe_env[0], "NCCL_MULTI_RANK_GPU_ENABLE=1");
	r.nprobe_env = 1;
	CHECK_INT(proto_report_warn(&r, "rank %d: teardown hung", 1), 0);
	text = proto_report_format(&r);
	CHECK(text != NULL);
	CHECK(strstr(text, "teardown_hung") == NULL);   /* written only when true */
	CHECK_INT(parse(text, &back, err, sizeof err), 0);
	CHECK(!back.teardown_hung);
	free(text);
	r.teardown_hung = true;
	text = proto_report_format(&r);
	CHECK(text != NULL);
	CHECK_CONTAINS(text, "\"teardown_hung\":true");
	CHECK_CONTAINS(text, "\"ranks_per_gpu\":2");
	CHECK_CONTAINS(text, "\"mps\":false");
	CHECK_CONTAINS(text, "\"probe_env\":[\"NCCL_MULTI_RANK_GPU_ENABLE=1\"]");
	CHECK_CONTAINS(text, "\"warnings\":[\"rank 1: teardown hung\"]");
	CHECK_INT(parse(text, &back, err, sizeof err), 0);
	CHECK(back.ok);
	CHECK_INT(back.ranks_per_gpu, 2);
	CHECK(back.has_mps && !back.mps);
	CHECK(back.teardown_hung);
	CHECK_INT(back.nwarnings, 1);
	CHECK_STR(back.warnings[0], "rank 1: teardown hung");
	CHECK_INT(back.nprobe_env, 1);
	CHECK_STR(back.probe_env[0], "NCCL_MULTI_RANK_GPU_ENABLE=1");
	free(text);
	/* a failure says it too */
	proto_report_fail(&r, PROTO_STAGE_ENV, "--ranks-per-gpu 2: needs NCCL 2.30");
	text = proto_report_format(&r);
	CHECK_CONTAINS(text, "\"ranks_per_gpu\":2");
	CHECK_INT(parse(text, &back, err, sizeof err), 0);
	CHECK(!back.ok);
	CHECK_INT(back.ranks_per_gpu, 2);
	free(text);
	/* absent: an older probe's report, read as before */
	CHECK_INT(parse("{\"schema\":\"nccltune-probe/1\",\"ok\":false,\"stage\":\"init\","
	                "\"error\":\"x\"}", &back, err, sizeof err), 0);
	CHECK_INT(back.ranks_per_gpu, 0);
	CHECK(!back.has_mps);
	CHECK_INT(back.nwarnings, 0);
	/* strict types and bounds */
	CHECK_INT(parse("{\"schema\":\"nccltune-probe/1\",\"ok\":false,\"stage\":\"init\","
	                "\"error\":\"x\",\"ranks_per_gpu\":0}", &back, err, sizeof err), -1);
	CHECK_CONTAINS(err, "ranks_per_gpu");
	CHECK_INT(parse("{\"schema\":\"nccltune-probe/1\",\"ok\":false,\"stage\":\"init\","
	                "\"error\":\"x\",\"ranks_per_gpu\":1.5}", &back, err, sizeof err), -1);
	CHECK_INT(parse("{\"schema\":\"nccltune-probe/1\",\"ok\":false,\"stage\":\"init\","
	                "\"error\":\"x\",\"warnings\":[3]}", &back, err, sizeof err), -1);
	CHECK_CONTAINS(err, "warnings[0]");
	CHECK_INT(parse("{\"schema\":\"nccltune-probe/1\",\"ok\":false,\"stage\":\"init\","
	                "\"error\":\"x\",\"mps\":\"yes\"}", &back, err, sizeof err), -1);
	/* at most PROTO_MAX_WARNINGS are kept by the writer */
	for (int i = 0; i < PROTO_MAX_WARNINGS; i++)
		proto_report_warn(&r, "w%d", i);
	CHECK_INT(r.nwarnings, PROTO_MAX_WARNINGS);
	CHECK_INT(proto_report_warn(&r, "one too many"), -1);
}

int main(void)
{
	test_options();
	test_stats();
	test_round_trip();
	test_strictness();
	test_ops_lists();
	test_nccl_names();
	test_capabilities();
	test_decisions();
	test_sweep_entries();
	test_server_extensions();
	test_rig_extension();
	return check_status();
}
