/* test_outcome.c - merging ranks into one report: the slowest rank per replay, the
 * per-op division, failures, and the buffer layout helpers. */
#include <stdlib.h>

#include "../check.h"
#include "probe.h"

static void test_merge_slowest(void)
{
	struct probe_config cfg;
	struct probe_outcome o[2];
	struct proto_report r;
	double phases[PROBE_STEP_COUNT];
	double ms0[] = {1.0, 2.0, 3.0, 4.0, 1.0, 1.0};   /* size 0: 3 replays, size 1: 3 */
	double ms1[] = {2.0, 1.0, 3.5, 1.0, 5.0, 1.0};

	memset(&cfg, 0, sizeof cfg);
	proto_workload_defaults(&cfg.w);
	cfg.w.nsizes = 2;
	cfg.w.bytes[1] = 1024;
	cfg.w.ops = 10;
	cfg.w.iters = 3;
	memset(o, 0, sizeof o);
	for (int k = 0; k < 2; k++) {
		o[k].ok = true;
		o[k].nsizes = 2;
		o[k].iters = 3;
		o[k].nccl_version = 22803;
		o[k].phase_s[PROBE_STEP_TIMING] = k ? 0.5 : 0.25;
		o[k].phase_s[PROBE_STEP_NCCL_INIT] = k ? 0.1 : 0.3;
	}
	o[0].ms = ms0;
	o[1].ms = ms1;
	CHECK_INT(probe_merge(&cfg, o, 2, &r, phases), 0);
	CHECK(r.ok);
	CHECK_INT(r.nranks, 2);
	CHECK_STR(r.nccl_version, "2.28.3");
	CHECK_STR(r.source, "measured");
	CHECK_INT(r.nresults, 2);
	/* per replay max over ranks: {2, 2, 3.5} ms over 10 ops = {200, 200, 350} us */
	CHECK_INT(r.results[0].bytes, 43008);
	CHECK_INT(r.results[0].ops, 10);
	CHECK_INT(r.results[0].samples, 3);
	CHECK(r.results[0].correct);
	CHECK_NEAR(r.results[0].us.min, 200, 1e-9);
	CHECK_NEAR(r.results[0].us.median, 200, 1e-9);
	CHECK_NEAR(r.results[0].us.max, 350, 1e-9);
	/* size 1: {4, 5, 1} -> {400, 500, 100} */
	CHECK_INT(r.results[1].bytes, 1024);
	CHECK_NEAR(r.results[1].us.min, 100, 1e-9);
	CHECK_NEAR(r.results[1].us.median, 400, 1e-9);
	CHECK_NEAR(r.results[1].us.max, 500, 1e-9);
	CHECK_NEAR(phases[PROBE_STEP_TIMING], 0.5, 0);
	CHECK_NEAR(phases[PROBE_STEP_NCCL_INIT], 0.3, 0);

	/* the first failing rank decides the report */
	o[1].ok = false;
	o[1].stage = PROTO_STAGE_VERIFY;
	snprintf(o[1].error, sizeof o[1].error, "wrong sum on rank 1");
	CHECK_INT(probe_merge(&cfg, o, 2, &r, phases), 0);
	CHECK(!r.ok);
	CHECK_INT(r.stage, PROTO_STAGE_VERIFY);
	CHECK_STR(r.error, "wrong sum on rank 1");

	/* a rank with the wrong amount of data is a failure, not a crash */
	o[1].ok = true;
	o[1].iters = 2;
	CHECK_INT(probe_merge(&cfg, o, 2, &r, phases), 0);
	CHECK(!r.ok);
	CHECK_CONTAINS(r.error, "rank 1 returned 2 sizes x 2 replays");
	CHECK_INT(probe_merge(&cfg, o, 0, &r, phases), 0);
	CHECK(!r.ok);
}

static void test_helpers(void)
{
	char v[32];
	struct proto_workload w;

	probe_nccl_version_string(22803, v, sizeof v);
	CHECK_STR(v, "2.28.3");
	probe_nccl_version_string(21903, v, sizeof v);
	CHECK_STR(v, "2.19.3");
	probe_nccl_version_string(2708, v, sizeof v);
	CHECK_STR(v, "2.7.8");
	probe_nccl_version_string(0, v, sizeof v);
	CHECK_STR(v, "unknown");
	CHECK_STR(probe_step_name(PROBE_STEP_CAPTURE), "capture");
	CHECK_STR(probe_step_name(PROBE_STEP_COUNT), "?");
	CHECK_INT(probe_step_stage(PROBE_STEP_EAGER), PROTO_STAGE_INIT);
	CHECK_INT(probe_step_stage(PROBE_STEP_INSTANTIATE), PROTO_STAGE_CAPTURE);
	CHECK_INT(probe_step_stage(PROBE_STEP_TIMING), PROTO_STAGE_REPLAY);
	CHECK_INT(probe_step_stage(PROBE_STEP_VERIFY), PROTO_STAGE_VERIFY);
	CHECK_INT(probe_slice_stride(43008), 43008);
	CHECK_INT(probe_slice_stride(1000), 1024);
	CHECK_INT(probe_slice_stride(2), 512);
	proto_workload_defaults(&w);
	CHECK_INT(probe_buffer_bytes(&w), 43008u * 122u);
	w.out_of_place = true;
	w.nsizes = 2;
	w.bytes[1] = 1000;
	CHECK_INT(probe_buffer_bytes(&w), 2u * 43008u * 122u);
}

static void test_watchdog_message(void)
{
	struct probe_config cfg;
	struct probe_outcome o;
	char msg[PROTO_ERROR_MAX];

	memset(&cfg, 0, sizeof cfg);
	cfg.step_timeout_s = 2;
	memset(&o, 0, sizeof o);
	/* nothing failed before: the silent step is the failure */
	CHECK_INT(probe_watchdog_failure(&cfg, &o, -1, PROBE_STEP_CAPTURE, 7.2, msg, sizeof msg),
	          PROTO_STAGE_CAPTURE);
	CHECK_STR(msg, "watchdog: step capture made no progress for 7 s (--step-timeout 2); "
	          "process ended");
	CHECK_INT(probe_watchdog_failure(&cfg, NULL, 3, PROBE_STEP_TIMING, 9, msg, sizeof msg),
	          PROTO_STAGE_REPLAY);
	CHECK_STR(msg, "rank 3: watchdog: step timing made no progress for 9 s (--step-timeout 2); "
	          "process ended");
	/* a failure already recorded is the cause; the hang in teardown is only a note */
	probe_outcome_fail(&o, PROTO_STAGE_INIT, "NCCL communicator init (2 ranks): timed out");
	CHECK_INT(probe_watchdog_failure(&cfg, &o, -1, PROBE_STEP_TEARDOWN, 7, msg, sizeof msg),
	          PROTO_STAGE_INIT);
	CHECK_STR(msg, "NCCL communicator init (2 ranks): timed out (then step teardown hung for "
	          "7 s; the watchdog ended the process)");
}

int main(void)
{
	test_watchdog_message();
	test_merge_slowest();
	test_helpers();
	return check_status();
}
