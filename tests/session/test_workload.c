/* test_workload.c - workload files and options, probe arguments, the objective. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "run/workload.h"

static int parse(const char *text, struct workload *w, char *err, size_t len)
{
	return workload_parse(text, strlen(text), "w.json", w, err, len);
}

static void test_parse_ok(void)
{
	struct workload w;
	char err[512] = "";

	CHECK_INT(parse("{\"schema\": \"nccltune-workload/1\", \"dtype\": \"f16\", \"collectives\": ["
	                "{\"op\": \"allreduce\", \"bytes\": 43008, \"count\": 122},"
	                "{\"op\": \"allreduce\", \"bytes\": 1024, \"count\": 2},"
	                "{\"op\": \"allreduce\", \"bytes\": 43008, \"count\": 8}], \"iters\": 50}",
	                &w, err, sizeof err), 0);
	CHECK_STR(err, "");
	CHECK_INT(w.dtype, PROTO_DTYPE_F16);
	CHECK_INT(w.n, 2);                  /* equal sizes merged */
	CHECK_INT(w.e[0].bytes, 43008);
	CHECK_INT(w.e[0].count, 130);
	CHECK_INT(w.e[1].bytes, 1024);
	CHECK_INT(w.e[1].count, 2);
	CHECK_INT(w.iters, 50);
	CHECK_INT(w.warmup, 20);
}

static void expect_error(const char *text, const char *needle)
{
	struct workload w;
	char err[512] = "";

	CHECK_INT(parse(text, &w, err, sizeof err), -1);
	CHECK_STR(err, needle);
}

static void test_parse_errors(void)
{
	expect_error("{\"schema\": \"nccltune-workload/1\", \"dtype\": \"bf16\", \"collectives\": "
	             "[{\"op\": \"allreduce\", \"bytes\": 43008, \"count\": 1}], \"colour\": 1}",
	             "w.json: colour: unknown key (expected schema, dtype, iters, warmup, description, "
	             "collectives, guard, compute, window)");
	/* guard sizes: never a tuned size, never twice */
	expect_error("{\"schema\": \"nccltune-workload/1\", \"dtype\": \"bf16\", \"collectives\": "
	             "[{\"op\": \"allreduce\", \"bytes\": 43008, \"count\": 1}], \"guard\": [43008]}",
	             "w.json: guard: 43008 bytes is a tuned size (collectives), not a guard");
	expect_error("{\"schema\": \"nccltune-workload/1\", \"dtype\": \"bf16\", \"collectives\": "
	             "[{\"op\": \"allreduce\", \"bytes\": 43008, \"count\": 1}], \"guard\": [64, 64]}",
	             "w.json: guard[1]: repeats guard[0]");
	expect_error("{\"dtype\": \"bf16\", \"collectives\": [{\"op\": \"allreduce\", \"bytes\": 8, "
	             "\"count\": 1}]}", "w.json: schema: missing");
	expect_error("{\"schema\": \"nccltune-workload/1\", \"dtype\": \"int8\", \"collectives\": "
	             "[{\"op\": \"allreduce\", \"bytes\": 8, \"count\": 1}]}",
	             "w.json: dtype: expected one of \"bf16\", \"f16\" or \"f32\"");
	expect_error("{\"schema\": \"nccltune-workload/1\", \"dtype\": \"bf16\", \"collectives\": "
	             "[{\"op\": \"allreduce\", \"bytes\": 8, \"count\": 0}]}",
	             "w.json: collectives[0].count: 0 is out of range [1, 1000000]");
	expect_error("{\"schema\": \"nccltune-workload/1\", \"dtype\": \"bf16\", \"collectives\": "
	             "[{\"op\": \"allreduce\", \"bytes\": 8, \"count\": 1}, {\"op\": \"allreduce\", "
	             "\"bytes\": 1.5, \"count\": 1}]}",
	             "w.json: collectives[1].bytes: expected an integer, got 1.5");
	expect_error("{\"schema\": \"nccltune-workload/1\", \"dtype\": \"bf16\", \"collectives\": "
	             "[{\"op\": \"broadcast\", \"bytes\": 8, \"count\": 1}]}",
	             "w.json: collectives[0].op: expected \"allreduce\"");
	expect_error("{\"schema\": \"nccltune-workload/1\", \"dtype\": \"bf16\", \"collectives\": []}",
	             "w.json: collectives: empty");
	expect_error("{\"schema\": \"nccltune-workload/1\", \"dtype\": \"f32\", \"collectives\": "
	             "[{\"op\": \"allreduce\", \"bytes\": 6, \"count\": 1}]}",
	             "w.json: collectives: 6 bytes is not a whole number of f32 elements");
	/* a key twice in an entry: the old reader took the last "count" silently */
	expect_error("{\"schema\": \"nccltune-workload/1\", \"dtype\": \"bf16\", \"collectives\": "
	             "[{\"op\": \"allreduce\", \"bytes\": 8, \"count\": 1, \"count\": 9}]}",
	             "w.json: collectives[0].count: duplicate key");
	expect_error("{\"schema\": \"nccltune-workload/1\"",
	             "w.json: line 1: not valid JSON (truncated or corrupt near byte 31)");
	expect_error("{\"schema\": \"nccltune-workload/2\", \"dtype\": \"bf16\", \"collectives\": "
	             "[{\"op\": \"allreduce\", \"bytes\": 8, \"count\": 1}]}",
	             "w.json: schema: expected \"nccltune-workload/1\"");
}

static void test_options(void)
{
	struct workload w;
	char err[512] = "";

	CHECK_INT(workload_from_options("43008,64K", 10, "f32", &w, err, sizeof err), 0);
	CHECK_INT(w.n, 2);
	CHECK_INT(w.e[1].bytes, 65536);
	CHECK_INT(w.e[1].count, 10);
	CHECK_INT(w.dtype, PROTO_DTYPE_F32);
	CHECK_INT(workload_from_options(NULL, 7, NULL, &w, err, sizeof err), 0);
	CHECK_INT(w.n, 1);
	CHECK_INT(w.e[0].bytes, 43008);
	CHECK_INT(w.e[0].count, 7);
	CHECK_INT(workload_from_options("43008,x", 1, NULL, &w, err, sizeof err), -1);
	CHECK_CONTAINS(err, "--bytes");
	CHECK_INT(workload_from_options("1024,1024", 1, NULL, &w, err, sizeof err), -1);
	CHECK_CONTAINS(err, "twice");
	CHECK_INT(workload_from_options("1024", 0, NULL, &w, err, sizeof err), -1);
	CHECK_CONTAINS(err, "--ops");
	CHECK_INT(workload_from_options("1024", 1, "fp8", &w, err, sizeof err), -1);
	CHECK_CONTAINS(err, "--dtype");
}

static void test_args_and_objective(void)
{
	struct workload w;
	struct proto_report r;
	char *args[16], err[256];
	double obj = 0;
	int n;

	CHECK_INT(workload_from_options("43008,1024", 2000, NULL, &w, err, sizeof err), 0);
	n = workload_probe_args(&w, false, args, 16);
	CHECK_INT(n, 10);
	if (n == 10) {
		CHECK_STR(args[0], "--bytes");
		CHECK_STR(args[1], "43008,1024");
		CHECK_STR(args[2], "--ops");
		CHECK_STR(args[3], "1024");   /* capped */
		CHECK_STR(args[5], "bf16");
		CHECK_STR(args[7], "200");
		CHECK_STR(args[9], "20");
		for (int i = 0; i < n; i++)
			free(args[i]);
	}
	memset(&r, 0, sizeof r);
	r.ok = true;
	r.nresults = 2;
	r.results[0].bytes = 1024;
	r.results[0].us.median = 5.0;
	r.results[1].bytes = 43008;
	r.results[1].us.median = 20.0;
	CHECK_INT(workload_objective(&w, &r, &obj, err, sizeof err), 0);
	CHECK_NEAR(obj, 2000 * 20.0 + 2000 * 5.0, 1e-9);
	r.nresults = 1;
	CHECK_INT(workload_objective(&w, &r, &obj, err, sizeof err), -1);
	CHECK_CONTAINS(err, "43008");
}

static void test_json_round_trip(void)
{
	struct workload w, back;
	char err[256];
	cJSON *j;

	CHECK_INT(workload_from_options("4096,8192", 3, "f16", &w, err, sizeof err), 0);
	j = workload_to_json(&w);
	CHECK(j != NULL);
	CHECK_INT(workload_from_json(j, "json", &back, err, sizeof err), 0);
	CHECK_INT(back.n, 2);
	CHECK_INT(back.e[1].bytes, 8192);
	CHECK_INT(back.e[1].count, 3);
	CHECK_INT(back.dtype, PROTO_DTYPE_F16);
	cJSON_Delete(j);
}

/* Guards: the default ladder less the tuned sizes; the guarded probe arguments append
 * them with one op each (ops-list); the plain ones never name them. */
static void test_guards(void)
{
	struct workload w;
	char err[256], *args[16];
	int n;

	CHECK_INT(workload_from_options("43008,1M", 122, NULL, &w, err, sizeof err), 0);
	workload_default_guards(&w);
	CHECK_INT(w.nguard, 2);
	CHECK_INT(w.guard[0], 16777216);
	CHECK_INT(w.guard[1], 134217728);
	n = workload_probe_args(&w, true, args, 16);
	CHECK_INT(n, 10);
	CHECK_STR(n > 3 ? args[1] : "", "43008,1048576,16777216,134217728");
	CHECK_STR(n > 3 ? args[3] : "", "122,122,1,1");
	for (int i = 0; i < n; i++)
		free(args[i]);
	n = workload_probe_args(&w, false, args, 16);
	CHECK_STR(n > 3 ? args[1] : "", "43008,1048576");
	CHECK_STR(n > 3 ? args[3] : "", "122");
	for (int i = 0; i < n; i++)
		free(args[i]);
	CHECK_INT(workload_set_guards(&w, "117440512", err, sizeof err), 0);
	CHECK_INT(w.nguard, 1);
	workload_default_guards(&w);   /* given guards stay */
	CHECK_INT(w.nguard, 1);
	CHECK_INT(workload_set_guards(&w, "1M", err, sizeof err), -1);
	CHECK_STR(err, "--guard: 1048576 is a tuned size, not a guard");
}

/* The server's step: options and keys as the probe takes them, the probe arguments, the
 * journal's round trip, and a report that ignored them refused. */
static void test_server_step(void)
{
	struct workload w, back;
	struct proto_report r;
	char err[256], *args[16];
	double obj = 0, ar = 0;
	cJSON *j;
	int n;

	workload_default(&w);
	CHECK_INT(workload_set_server(&w, "40", "symmetric", err, sizeof err), 0);
	CHECK_NEAR(w.compute_us, 40, 0);
	CHECK_INT(w.compute_ctas, 0);
	CHECK(w.window_symmetric);
	n = workload_probe_args(&w, false, args, 16);
	CHECK_INT(n, 14);
	if (n == 14) {
		CHECK_STR(args[10], "--compute-us");
		CHECK_STR(args[11], "40.000");
		CHECK_STR(args[12], "--window");
		CHECK_STR(args[13], "symmetric");
	}
	for (int i = 0; i < n; i++)
		free(args[i]);
	CHECK_INT(workload_probe_args(&w, false, args, 13), -1);   /* max too small */
	CHECK_INT(workload_set_server(&w, "2.5,16", NULL, err, sizeof err), 0);
	n = workload_probe_args(&w, false, args, 16);
	CHECK_STR(n > 11 ? args[11] : "", "2.500,16");
	for (int i = 0; i < n; i++)
		free(args[i]);
	/* refused: as the probe refuses, and finer than a nanosecond; w unchanged */
	back = w;
	CHECK_INT(workload_set_server(&w, "1e3", NULL, err, sizeof err), -1);
	CHECK_CONTAINS(err, "--compute-us: '1e3'");
	CHECK_INT(workload_set_server(&w, "40.0001", NULL, err, sizeof err), -1);
	CHECK_CONTAINS(err, "not a whole number of nanoseconds");
	CHECK_INT(workload_set_server(&w, NULL, "none", err, sizeof err), -1);
	CHECK_CONTAINS(err, "--window: 'none'");
	CHECK(memcmp(&w, &back, sizeof w) == 0);
	/* the journal's workload carries it back */
	j = workload_to_json(&w);
	CHECK_INT(workload_from_json(j, "json", &back, err, sizeof err), 0);
	CHECK_NEAR(back.compute_us, 2.5, 0);
	CHECK_INT(back.compute_ctas, 16);
	CHECK(back.window_symmetric);
	cJSON_Delete(j);
	/* a report must show what was asked */
	memset(&r, 0, sizeof r);
	r.ok = true;
	r.nresults = 1;
	r.results[0].bytes = 43008;
	r.results[0].us.median = 3.0;
	CHECK_INT(workload_objective(&w, &r, &obj, err, sizeof err), -1);
	CHECK_CONTAINS(err, "no \"compute\" in the report");
	r.compute = (struct proto_compute){true, 2.5, 16, {2.5, 2.5, 2.5, 2.5, 2.5}};
	CHECK_INT(workload_objective(&w, &r, &obj, err, sizeof err), -1);
	CHECK_CONTAINS(err, "no \"window\": \"symmetric\" in the report");
	r.window_symmetric = true;
	r.compute.kernel_us = 3;
	CHECK_INT(workload_objective(&w, &r, &obj, err, sizeof err), -1);
	CHECK_CONTAINS(err, "compute.kernel_us 3 is not the workload's 2.5");
	r.compute.kernel_us = 2.5;
	CHECK_INT(workload_objective(&w, &r, &obj, err, sizeof err), 0);
	CHECK_NEAR(obj, 122 * 3.0, 1e-9);
	CHECK_INT(workload_allreduce_time(&w, &r, &ar), -1);   /* no step figures */
	r.results[0].has_step = true;
	r.results[0].allreduce_us = 0.5;
	CHECK_INT(workload_allreduce_time(&w, &r, &ar), 0);
	CHECK_NEAR(ar, 122 * 0.5, 1e-9);
}

int main(void)
{
	test_server_step();
	test_guards();
	test_parse_ok();
	test_parse_errors();
	test_options();
	test_args_and_objective();
	test_json_round_trip();
	return check_status();
}
