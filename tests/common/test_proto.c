/* test_proto.c - protocol v1: workload options, statistics, report round trip, and the
 * strict parser's verdict on malformed probe output. */
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
	r.results[0] = (struct proto_size_result){43008, 122, 200, {23.4, 22.9, 24.8, 22.5, 31.0}, true};
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
		 "report: results[0].us.median: -1 is out of range [0, 1e+12]"},
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
	/* extensions (unknown keys) are allowed */
	CHECK_INT(parse("  {\"schema\":\"nccltune-probe/1\",\"ok\":false,\"stage\":\"env\",\"error\":\"e\","
	                "\"phases_s\":{}}\n", &r, err, sizeof err), 0);
}

int main(void)
{
	test_options();
	test_stats();
	test_round_trip();
	test_strictness();
	return check_status();
}
