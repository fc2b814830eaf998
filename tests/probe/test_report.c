/* test_report.c - the report as the probe prints it: golden files for a success with
 * the phases_s extension and for a failure, a sweep report's key order, the
 * one-object-per-run rule, and a round trip through the tuner's strict parser. */
#include <stdlib.h>

#include "../check.h"
#include "fsutil.h"
#include "report.h"

static char *golden(const char *name)
{
	const char *root = getenv("NCCLTUNE_SOURCE_ROOT");
	char path[1024], err[256];
	char *text;

	snprintf(path, sizeof path, "%s/tests/probe/golden/%s", root ? root : ".", name);
	text = fs_read_file(path, 1 << 20, NULL, err, sizeof err);
	if (!text)
		fprintf(stderr, "%s\n", err);
	return text;
}

static void test_success(void)
{
	struct proto_report r, back;
	double phases[PROBE_STEP_COUNT];
	char *line, *want = golden("report-ok.json"), err[256];

	memset(&r, 0, sizeof r);
	r.ok = true;
	r.nranks = 2;
	snprintf(r.nccl_version, sizeof r.nccl_version, "2.28.3");
	snprintf(r.source, sizeof r.source, "measured");
	r.nresults = 1;
	r.results[0].bytes = 43008;
	r.results[0].ops = 122;
	r.results[0].samples = 200;
	r.results[0].us = (struct proto_stats){23.5, 22.75, 24.5, 22.5, 31};
	r.results[0].correct = true;
	for (int s = 0; s < PROBE_STEP_COUNT; s++)
		phases[s] = 0.125 * s + 1e-9;   /* rounded to microseconds in the output */
	line = report_format(&r, phases);
	CHECK_STR(line, want);
	if (line) {
		CHECK_INT(proto_report_parse(line, strlen(line), &back, err, sizeof err), 0);
		CHECK(back.ok);
		CHECK_NEAR(back.results[0].us.median, 23.5, 0);
	}
	free(line);
	free(want);
	/* all-zero phases (a run that never reached a GPU) are left out */
	memset(phases, 0, sizeof phases);
	line = report_format(&r, phases);
	want = proto_report_format(&r);
	CHECK_STR(line, want);
	free(line);
	free(want);
	/* without phases the line is exactly the shared writer's */
	line = report_format(&r, NULL);
	want = proto_report_format(&r);
	CHECK_STR(line, want);
	free(line);
	free(want);
}

static void test_failure(void)
{
	struct proto_report r, back;
	char *line, *want = golden("report-fail.json"), err[256];

	memset(&r, 0, sizeof r);
	proto_report_fail(&r, PROTO_STAGE_CAPTURE, "capture of 122 all-reduces of 43008 bytes: "
	                  "ncclAllReduce: invalid usage \"quoted\"");
	line = report_format(&r, NULL);
	CHECK_STR(line, want);
	if (line) {
		CHECK_INT(proto_report_parse(line, strlen(line), &back, err, sizeof err), 0);
		CHECK(!back.ok);
		CHECK_INT(back.stage, PROTO_STAGE_CAPTURE);
	}
	free(line);
	free(want);
}

/* A sweep report keeps its extensions together: results, sweep, then phases_s. */
static void test_sweep(void)
{
	struct proto_report r, back;
	struct proto_sweep_entry e = {0, 43008, 1, 0, 4, true, 200, {2, 1, 3, 1, 4},
	                              PROTO_STAGE_ARGS, "", {true, 1, 0, 4, false, false, ""}};
	double phases[PROBE_STEP_COUNT] = {0};
	char *line, err[256];

	memset(&r, 0, sizeof r);
	r.ok = true;
	r.nranks = 2;
	snprintf(r.nccl_version, sizeof r.nccl_version, "2.28.9");
	snprintf(r.source, sizeof r.source, "measured");
	r.nresults = 1;
	r.results[0] = (struct proto_size_result){43008, 122, 200, {2, 1, 3, 1, 4}, true,
	                                          {true, 1, 0, 1, false, false, ""}, false, 0, 0};
	r.sweep = &e;
	r.nsweep = 1;
	phases[PROBE_STEP_TIMING] = 0.5;
	line = report_format(&r, phases);
	CHECK(line != NULL);
	CHECK_CONTAINS(line, "\"correct\":true,\"nccl\":{\"algo\":\"Ring\",\"proto\":\"LL\","
	               "\"ctas\":1,\"symmetric\":false}}],\"sweep\":[{\"index\":0,");
	CHECK_CONTAINS(line, "}}],\"phases_s\":{");
	if (line) {
		CHECK_INT(proto_report_parse(line, strlen(line), &back, err, sizeof err), 0);
		CHECK_INT(back.nsweep, 1);
		proto_report_clear(&back);
	}
	free(line);
}

static void test_once(void)
{
	struct reporter rep;
	struct proto_report r;
	char buf[4096];
	size_t n;

	memset(&r, 0, sizeof r);
	rep.out = tmpfile();
	rep.done = false;
	pthread_mutex_init(&rep.lock, NULL);
	if (!rep.out) {
		CHECK(!"tmpfile");
		return;
	}
	proto_report_fail(&r, PROTO_STAGE_INIT, "first");
	CHECK_INT(reporter_emit(&rep, &r, NULL), 0);
	proto_report_fail(&r, PROTO_STAGE_INIT, "second");
	CHECK_INT(reporter_emit(&rep, &r, NULL), 0);
	CHECK_INT(reporter_emit_text(&rep, "{}\n"), 0);
	rewind(rep.out);
	n = fread(buf, 1, sizeof buf - 1, rep.out);
	buf[n] = '\0';
	CHECK_STR(buf, "{\"schema\":\"nccltune-probe/1\",\"ok\":false,\"stage\":\"init\","
	          "\"error\":\"first\"}\n");
	fclose(rep.out);
	pthread_mutex_destroy(&rep.lock);
}

int main(void)
{
	test_success();
	test_failure();
	test_sweep();
	test_once();
	return check_status();
}
