/* test_outcome.c - merging ranks into one report: the slowest rank per replay, the
 * per-op division (per size with --ops lists), failures, sweep entries (a choice's
 * verdict from the first rank that found it, its decision from rank 0, the ranks'
 * agreement), failure reports with the choice in flight, the case table, and the buffer
 * layout helpers. */
#include <stdlib.h>

#include "../check.h"
#include "probe.h"

static void test_merge_slowest(void)
{
	struct probe_config cfg;
	struct probe_outcome o[2];
	struct proto_report r;
	struct probe_case_result cr[2][2];
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
	memset(cr, 0, sizeof cr);
	for (int k = 0; k < 2; k++) {
		o[k].ok = true;
		o[k].ncases = 2;
		o[k].cases = cr[k];
		cr[k][0].status = cr[k][1].status = PROBE_CASE_KEPT;
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
	CHECK(r.sweep == NULL && r.nsweep == 0);   /* a plain run has no sweep */
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
	CHECK_CONTAINS(r.error, "rank 1 returned 2 cases x 2 replays");
	o[1].iters = 3;
	o[1].cases = NULL;   /* no verdicts is no result either */
	CHECK_INT(probe_merge(&cfg, o, 2, &r, phases), 0);
	CHECK(!r.ok);
	o[1].cases = cr[1];
	CHECK_INT(probe_merge(&cfg, o, 0, &r, phases), 0);
	CHECK(!r.ok);

	/* one ops count per size: each size's replays are divided by its own count */
	cfg.w.nops = 2;
	cfg.w.ops_list[0] = 10;
	cfg.w.ops_list[1] = 4;
	CHECK_INT(probe_merge(&cfg, o, 2, &r, phases), 0);
	CHECK(r.ok);
	CHECK_INT(r.results[0].ops, 10);
	CHECK_INT(r.results[1].ops, 4);
	CHECK_NEAR(r.results[0].us.median, 200, 1e-9);
	CHECK_NEAR(r.results[1].us.median, 1000, 1e-9);   /* 4 ms / 4 ops */
	/* rank 0's decisions become the results' "nccl" */
	cr[0][1].nccl = (struct proto_decision){true, 1, 0, 2, false, false, ""};
	cr[1][1].nccl = (struct proto_decision){true, 0, 2, 9, false, false, ""};
	CHECK_INT(probe_merge(&cfg, o, 2, &r, phases), 0);
	CHECK(!r.results[0].nccl.known);
	CHECK(r.results[1].nccl.known);
	CHECK_INT(r.results[1].nccl.ctas, 2);
	/* a plain size not kept on every rank is no measurement */
	cr[1][0].status = PROBE_CASE_DROPPED;
	CHECK_INT(probe_merge(&cfg, o, 2, &r, phases), 0);
	CHECK(!r.ok);
	CHECK_CONTAINS(r.error, "the ranks disagree");
}

/* One size of 43008 bytes (8 ops) and three sweep choices of it. */
static void sweep_config(struct probe_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	proto_workload_defaults(&cfg->w);
	cfg->w.ops = 8;
	cfg->w.iters = 2;
	cfg->sweep.nchoices = 3;
	cfg->sweep.rounds = 2;
	cfg->sweep.seed = 1;
	cfg->sweep.choices[0] = (struct sweep_choice){43008, 0, 1, 0, 4};
	cfg->sweep.choices[1] = (struct sweep_choice){43008, 0, 0, 2, 0};
	cfg->sweep.choices[2] = (struct sweep_choice){43008, 0, PROTO_NCCL_ANY, 1, 0};
	cfg->corrupt_rank = cfg->corrupt_choice = cfg->stall_choice = -1;
}

static void test_cases(void)
{
	struct probe_config cfg;

	sweep_config(&cfg);
	CHECK_INT(probe_case_count(&cfg), 4);
	CHECK_INT(probe_case_size(&cfg, 0), 0);
	CHECK(probe_case_choice(&cfg, 0) == NULL);
	CHECK(probe_case_choice(&cfg, 1) == &cfg.sweep.choices[0]);
	CHECK(probe_case_choice(&cfg, 3) == &cfg.sweep.choices[2]);
	CHECK(probe_case_choice(&cfg, 4) == NULL);
	cfg.sweep.nchoices = 0;
	CHECK_INT(probe_case_count(&cfg), 1);
}

static void test_merge_sweep(void)
{
	struct probe_config cfg;
	struct probe_outcome o[2];
	struct probe_case_result cr[2][4];
	struct proto_report r;
	double phases[PROBE_STEP_COUNT];
	/* 4 cases x 2 replays; per replay the slowest rank, over 8 ops */
	double ms0[] = {0.8, 1.6, 0.4, 0.4, 0, 0, 0, 0};
	double ms1[] = {1.6, 0.8, 0.8, 0.4, 0, 0, 0, 0};

	sweep_config(&cfg);
	memset(o, 0, sizeof o);
	memset(cr, 0, sizeof cr);
	for (int k = 0; k < 2; k++) {
		o[k].ok = true;
		o[k].ncases = 4;
		o[k].iters = 2;
		o[k].cases = cr[k];
		cr[k][0].status = cr[k][1].status = PROBE_CASE_KEPT;
	}
	o[0].ms = ms0;
	o[1].ms = ms1;
	/* choice 1: a wrong sum on rank 1, which rank 0 followed by vote */
	cr[0][2].status = PROBE_CASE_DROPPED;
	cr[1][2].status = PROBE_CASE_FAILED;
	cr[1][2].stage = PROTO_STAGE_VERIFY;
	snprintf(cr[1][2].error, sizeof cr[1][2].error, "wrong sum on rank 1: all-reduce 1 of 8");
	cr[0][2].nccl = (struct proto_decision){true, 0, 2, 2, false, false, ""};
	/* choice 2: not available on both */
	for (int k = 0; k < 2; k++) {
		cr[k][3].status = PROBE_CASE_FAILED;
		cr[k][3].stage = PROTO_STAGE_ENV;
		snprintf(cr[k][3].error, sizeof cr[k][3].error, "not available: */LL128 is not "
		         "usable here (NCCL's cost table has it IGNORE)");
	}
	cr[0][0].nccl = (struct proto_decision){true, 1, 0, 1, false, false, ""};
	cr[0][1].nccl = (struct proto_decision){true, 1, 0, 4, false, true, ""};
	CHECK_INT(probe_merge(&cfg, o, 2, &r, phases), 0);
	CHECK(r.ok);
	CHECK_INT(r.nresults, 1);
	CHECK_NEAR(r.results[0].us.median, 200, 1e-9);   /* {1.6, 1.6} ms / 8 ops */
	CHECK_INT(r.results[0].nccl.ctas, 1);
	CHECK_INT(r.nsweep, 3);
	if (r.nsweep == 3) {
		CHECK(r.sweep[0].ok);
		CHECK_INT(r.sweep[0].index, 0);
		CHECK_INT(r.sweep[0].bytes, 43008);
		CHECK_INT(r.sweep[0].algo, 1);
		CHECK_INT(r.sweep[0].ctas, 4);
		CHECK_INT(r.sweep[0].samples, 2);
		CHECK_NEAR(r.sweep[0].us.min, 50, 1e-9);     /* {0.8, 0.4} ms / 8 -> 100, 50 us */
		CHECK_NEAR(r.sweep[0].us.median, 75, 1e-9);
		CHECK_NEAR(r.sweep[0].us.max, 100, 1e-9);
		CHECK(r.sweep[0].nccl.known && r.sweep[0].nccl.mixed);
		CHECK(!r.sweep[1].ok);
		CHECK_INT(r.sweep[1].index, 1);
		CHECK_INT(r.sweep[1].stage, PROTO_STAGE_VERIFY);
		CHECK_STR(r.sweep[1].error, "rank 1: wrong sum on rank 1: all-reduce 1 of 8");
		CHECK_INT(r.sweep[1].nccl.ctas, 2);          /* what ran, even when it was wrong */
		CHECK(!r.sweep[2].ok);
		CHECK_INT(r.sweep[2].stage, PROTO_STAGE_ENV);
		CHECK_STR(r.sweep[2].error, "not available: */LL128 is not usable here (NCCL's "
		          "cost table has it IGNORE)");
		CHECK_INT(r.sweep[2].algo, PROTO_NCCL_ANY);
		CHECK_INT(r.sweep[2].proto, 1);
	}
	proto_report_clear(&r);
	/* kept on one rank, dropped on the other: a broken vote, not a measurement */
	cr[1][1].status = PROBE_CASE_DROPPED;
	CHECK_INT(probe_merge(&cfg, o, 2, &r, phases), 0);
	CHECK(!r.ok);
	CHECK_CONTAINS(r.error, "rank 1: case 1 ended not kept, rank 0's kept: the ranks disagree");
	cr[1][1].status = PROBE_CASE_UNDECIDED;
	CHECK_INT(probe_merge(&cfg, o, 2, &r, phases), 0);
	CHECK(!r.ok);
	cr[1][1].status = PROBE_CASE_KEPT;

	/* a failure while choice 2 was in flight: the entries final by then come along */
	cr[0][3].status = cr[1][3].status = PROBE_CASE_UNDECIDED;
	o[0].ok = false;
	o[0].stage = PROTO_STAGE_REPLAY;
	o[0].in_flight_known = true;
	o[0].in_flight_case = 3;
	snprintf(o[0].error, sizeof o[0].error, "timed out");
	CHECK_INT(probe_merge(&cfg, o, 2, &r, phases), 0);
	CHECK(!r.ok);
	CHECK_INT(r.stage, PROTO_STAGE_REPLAY);
	CHECK_STR(r.error, "timed out");
	CHECK(r.has_in_flight);
	CHECK_INT(r.sweep_in_flight, 2);
	CHECK_INT(r.nsweep, 1);
	if (r.nsweep == 1) {
		CHECK_INT(r.sweep[0].index, 1);
		CHECK(!r.sweep[0].ok);
		CHECK_CONTAINS(r.sweep[0].error, "wrong sum on rank 1");
	}
	proto_report_clear(&r);
	/* in flight: a plain size; no choice is named */
	o[0].in_flight_case = 0;
	CHECK_INT(probe_merge(&cfg, o, 2, &r, phases), 0);
	CHECK(!r.has_in_flight);
	CHECK_INT(r.nsweep, 1);
	proto_report_clear(&r);
	/* nothing known beyond the failure (a parent's own failure, no verdicts) */
	o[0].in_flight_known = false;
	probe_report_failure(&cfg, &o[0], NULL, 0, &r);
	CHECK(!r.ok && !r.has_in_flight && r.nsweep == 0 && r.sweep == NULL);
	/* a choice in flight that a rank had already judged is named once, as in flight */
	o[0].in_flight_known = true;
	o[0].in_flight_case = 2;
	probe_report_failure(&cfg, &o[0], o, 2, &r);
	CHECK(r.has_in_flight);
	CHECK_INT(r.sweep_in_flight, 1);
	CHECK_INT(r.nsweep, 0);
	proto_report_clear(&r);
	/* ... also next to another final entry */
	cr[0][3].status = PROBE_CASE_FAILED;
	cr[0][3].stage = PROTO_STAGE_ENV;
	snprintf(cr[0][3].error, sizeof cr[0][3].error, "not available: */LL128 is not usable");
	o[0].in_flight_case = 3;
	probe_report_failure(&cfg, &o[0], o, 2, &r);
	CHECK(r.has_in_flight);
	CHECK_INT(r.sweep_in_flight, 2);
	CHECK_INT(r.nsweep, 1);
	CHECK_INT(r.nsweep ? r.sweep[0].index : 99, 1);
	proto_report_clear(&r);
	/* a plain run's failure has no sweep fields, whatever the outcome says */
	cfg.sweep.nchoices = 0;
	probe_report_failure(&cfg, &o[0], o, 2, &r);
	CHECK(!r.has_in_flight && r.nsweep == 0);
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
	CHECK_INT(probe_buffer_size_index(&w), 0);
	/* --ops lists: the size whose slices span the most decides */
	w.out_of_place = false;
	w.nops = 2;
	w.ops_list[0] = 1;
	w.ops_list[1] = 100;   /* 100 slices of 1024 bytes beat 1 of 43008 */
	CHECK_INT(probe_buffer_bytes(&w), 1024u * 100u);
	CHECK_INT(probe_buffer_size_index(&w), 1);
	w.ops_list[1] = 42;    /* 43008 >= 42 * 1024 */
	CHECK_INT(probe_buffer_bytes(&w), 43008u);
	CHECK_INT(probe_buffer_size_index(&w), 0);
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
	/* a measured run whose teardown hangs keeps its results, with a warning; any other
	 * step, or a run not measured, does not */
	memset(&o, 0, sizeof o);
	CHECK(!probe_watchdog_keeps(&o, PROBE_STEP_TEARDOWN, 7, msg, sizeof msg));
	CHECK(!probe_watchdog_keeps(NULL, PROBE_STEP_TEARDOWN, 7, msg, sizeof msg));
	o.measured = true;
	CHECK(!probe_watchdog_keeps(&o, PROBE_STEP_TIMING, 7, msg, sizeof msg));
	CHECK(probe_watchdog_keeps(&o, PROBE_STEP_TEARDOWN, 7.4, msg, sizeof msg));
	CHECK_CONTAINS(msg, "teardown hung for 7 s");
	CHECK_CONTAINS(msg, "every result was checked and timed before it");
}

/* A rank's teardown warning (an aborted finalize) reaches the ok report, named by rank. */
static void test_merge_warnings(void)
{
	struct probe_config cfg;
	struct probe_outcome o[2];
	struct proto_report r;
	struct probe_case_result cr[2][1];
	double phases[PROBE_STEP_COUNT], ms0[] = {1.0, 1.0}, ms1[] = {1.0, 2.0};

	memset(&cfg, 0, sizeof cfg);
	proto_workload_defaults(&cfg.w);
	cfg.w.iters = 2;
	memset(o, 0, sizeof o);
	memset(cr, 0, sizeof cr);
	for (int k = 0; k < 2; k++) {
		o[k].ok = true;
		o[k].ncases = 1;
		o[k].cases = cr[k];
		cr[k][0].status = PROBE_CASE_KEPT;
		o[k].iters = 2;
		o[k].nccl_version = 23007;
	}
	o[0].ms = ms0;
	o[1].ms = ms1;
	snprintf(o[1].warning, sizeof o[1].warning, "teardown: timed out; communicators aborted");
	CHECK_INT(probe_merge(&cfg, o, 2, &r, phases), 0);
	CHECK(r.ok);
	CHECK_INT(r.nwarnings, 1);
	CHECK_STR(r.warnings[0], "rank 1: teardown: timed out; communicators aborted");
	proto_report_clear(&r);
}

/* --compute-us and --window in the merge: the kernel alone per sample the slowest rank's,
 * each result's step (us x ops) and all-reduce share (us less the kernel alone, >= 0),
 * the window echoed; ranks that timed the kernel differently are a replay failure. */
static void test_merge_server(void)
{
	struct probe_config cfg;
	struct probe_outcome o[2];
	struct proto_report r;
	struct probe_case_result cr[2][1];
	double phases[PROBE_STEP_COUNT];
	double ms0[] = {0.41, 0.42, 0.43}, ms1[] = {0.42, 0.41, 0.44};   /* 10 ops: 41-44 us */

	memset(&cfg, 0, sizeof cfg);
	proto_workload_defaults(&cfg.w);
	cfg.w.ops = 10;
	cfg.w.iters = 3;
	cfg.w.compute_us = 40;
	cfg.w.window_symmetric = true;
	memset(o, 0, sizeof o);
	memset(cr, 0, sizeof cr);
	for (int k = 0; k < 2; k++) {
		o[k].ok = true;
		o[k].ncases = 1;
		o[k].cases = cr[k];
		cr[k][0].status = PROBE_CASE_KEPT;
		o[k].iters = 3;
		o[k].compute.n = 2;
		o[k].compute.ctas = 132;
	}
	o[0].ms = ms0;
	o[1].ms = ms1;
	o[0].compute.us[0] = 40.5;
	o[0].compute.us[1] = 41.0;
	o[1].compute.us[0] = 40.7;
	o[1].compute.us[1] = 40.9;
	CHECK_INT(probe_merge(&cfg, o, 2, &r, phases), 0);
	CHECK(r.ok && r.window_symmetric && r.compute.known);
	CHECK_NEAR(r.compute.kernel_us, 40, 0);
	CHECK_INT(r.compute.ctas, 132);
	CHECK_NEAR(r.compute.us.min, 40.7, 1e-9);      /* slowest of {40.5, 40.7} */
	CHECK_NEAR(r.compute.us.max, 41.0, 1e-9);      /* slowest of {41.0, 40.9} */
	CHECK_NEAR(r.compute.us.median, 40.85, 1e-9);
	CHECK_NEAR(r.results[0].us.median, 42, 1e-9);  /* replays {42, 42, 44} us per op */
	CHECK(r.results[0].has_step);
	CHECK_NEAR(r.results[0].step_us, 420, 1e-9);
	CHECK_NEAR(r.results[0].allreduce_us, 42 - 40.85, 1e-9);
	/* the kernel alone slower than an op of the step: the share is 0, never negative */
	o[0].compute.us[0] = o[1].compute.us[0] = 50;
	o[0].compute.us[1] = o[1].compute.us[1] = 50;
	CHECK_INT(probe_merge(&cfg, o, 2, &r, phases), 0);
	CHECK_NEAR(r.results[0].allreduce_us, 0, 0);
	/* a rank with fewer samples: not a measurement */
	o[1].compute.n = 1;
	CHECK_INT(probe_merge(&cfg, o, 2, &r, phases), 0);
	CHECK(!r.ok);
	CHECK_INT(r.stage, PROTO_STAGE_REPLAY);
	CHECK_CONTAINS(r.error, "rank 1 timed the compute kernel alone 1 times");
	/* without --compute-us and --window: none of it */
	cfg.w.compute_us = 0;
	cfg.w.window_symmetric = false;
	CHECK_INT(probe_merge(&cfg, o, 2, &r, phases), 0);
	CHECK(r.ok && !r.compute.known && !r.window_symmetric && !r.results[0].has_step);
}

int main(void)
{
	test_merge_warnings();
	test_merge_server();
	test_watchdog_message();
	test_merge_slowest();
	test_cases();
	test_merge_sweep();
	test_helpers();
	return check_status();
}
