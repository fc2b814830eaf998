/* launch_all.c - the single-process launch mode (see launch.h): one process drives
 * every GPU (its communicators created in one NCCL group), under the same watchdog and
 * NCCL log as the per-process mode (launch.c). */
#include "launch.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure.h"
#include "nccllog.h"
#include "rig.h"
#include "watchdog.h"

struct solo_ctx {
	const struct probe_config *cfg;
	struct reporter *rep;
	struct watchdog *wd;
	const struct probe_outcome *outs;  /* per GPU; outs[0] carries failures */
	int n;
	struct nccllog *log;
	atomic_int in_flight;              /* the case being worked on, -1 none */
};

static void solo_on_step(void *arg, enum probe_step step, int case_idx)
{
	struct solo_ctx *c = arg;

	atomic_store(&c->in_flight, case_idx);
	watchdog_kick(c->wd, step);
}

/* A watchdog in the teardown of a measured run: report the results with a warning
 * and end. Returns only when the run was not measured. */
static void solo_keep(struct solo_ctx *c, enum probe_step step, double silent_s)
{
	struct probe_outcome *copy;
	struct proto_report r;
	double phase_s[PROBE_STEP_COUNT] = {0};
	int k;

	for (k = 0; k < c->n; k++)
		if (!c->outs[k].measured)
			return;
	copy = calloc((size_t)c->n, sizeof *copy);
	if (!copy)
		return;
	memcpy(copy, c->outs, (size_t)c->n * sizeof *copy);   /* shallow: we _exit */
	for (k = 0; k < c->n; k++)
		copy[k].ok = true;
	probe_watchdog_keeps(&copy[0], step, silent_s, copy[0].warning, sizeof copy[0].warning);
	memset(&r, 0, sizeof r);
	probe_merge(c->cfg, copy, c->n, &r, phase_s);
	r.teardown_hung = r.ok;
	reporter_emit(c->rep, &r, phase_s);
	nccllog_cleanup(c->log);
	_exit(r.ok ? PROTO_EXIT_OK : PROTO_EXIT_FAILED);
}

static void solo_fire(void *arg, enum probe_step step, double silent_s)
{
	struct solo_ctx *c = arg;
	struct proto_report r;
	struct probe_outcome fail;
	char msg[PROTO_ERROR_MAX];
	enum proto_stage stage = probe_watchdog_failure(c->cfg, c->outs, -1, step, silent_s, msg,
	                                                 sizeof msg);

	if (c->outs && step == PROBE_STEP_TEARDOWN)
		solo_keep(c, step, silent_s);
	memset(&fail, 0, sizeof fail);
	probe_outcome_fail(&fail, stage, "%s", msg);
	fail.in_flight_case = atomic_load(&c->in_flight);
	fail.in_flight_known = fail.in_flight_case >= 0;
	/* the verdicts so far, read while the measuring thread is stuck in a call */
	probe_report_failure(c->cfg, &fail, c->outs, c->outs ? c->n : 0, &r);
	reporter_emit(c->rep, &r, NULL);
	nccllog_cleanup(c->log);
	_exit(PROTO_EXIT_FAILED);
}

int launch_all(const struct probe_config *cfg, const struct sweep_plugin *plugin,
               struct reporter *rep)
{
	struct solo_ctx c;
	struct measure_setup s;
	struct probe_outcome *outs = NULL;
	struct proto_report r;
	struct nccllog log;
	struct nccllog_reader reader;
	char path[PATH_MAX];
	double phase_s[PROBE_STEP_COUNT] = {0};
	int *ids = NULL, *devs = NULL, count = 0, n = 0, status = PROTO_EXIT_FAILED;
	bool comms_left = false;
	struct probe_outcome first;
	double t0 = probe_now(), pre_s;

	memset(&r, 0, sizeof r);
	memset(&s, 0, sizeof s);
	memset(&first, 0, sizeof first);
	memset(&c, 0, sizeof c);
	c.cfg = cfg;
	c.rep = rep;
	c.log = &log;
	atomic_init(&c.in_flight, -1);
	launch_log_start(&log);   /* before the first NCCL call */
	c.wd = watchdog_start(cfg->step_timeout_s, launch_grace_s(cfg), solo_fire, &c);
	if (measure_device_count(&count, &first) != 0 || measure_unique_id(&s.id, &first) != 0) {
		proto_report_fail(&r, first.stage, "%s", first.error);
		goto out;
	}
	pre_s = probe_now() - t0;
	if (cfg->gpus > count) {
		proto_report_fail(&r, PROTO_STAGE_INIT, "--gpus %d: only %d CUDA device(s) visible",
		                  cfg->gpus, count);
		goto out;
	}
	/* --ranks-per-gpu K: K ranks (one stream and communicator each) on every GPU */
	n = (cfg->gpus > 0 ? cfg->gpus : count) * cfg->ranks_per_gpu;
	ids = calloc((size_t)n, sizeof *ids);
	devs = calloc((size_t)n, sizeof *devs);
	outs = calloc((size_t)n, sizeof *outs);
	if (!ids || !devs || !outs) {
		proto_report_fail(&r, PROTO_STAGE_INIT, "out of memory for %d ranks", n);
		n = 0;
		goto out;
	}
	for (int k = 0; k < n; k++) {
		ids[k] = k;
		devs[k] = rig_device(k, cfg->ranks_per_gpu);
		outs[k].phase_s[PROBE_STEP_CUDA_INIT] = pre_s;
	}
	s.cfg = cfg;
	s.nranks = n;
	s.nlocal = n;
	s.ranks = ids;
	s.devices = devs;
	s.on_step = solo_on_step;
	s.arg = &c;
	s.plugin = plugin;
	if (nccllog_path(&log, getpid(), path, sizeof path) == 0) {
		nccllog_reader_init(&reader, path, stderr);
		s.log = &reader;
	}
	c.outs = outs;
	c.n = n;
	comms_left = measure_run(&s, outs) == 0 && cfg->teardown == PROBE_TEARDOWN_FAST;
	if (s.log)
		nccllog_reader_close(s.log);
	probe_merge(cfg, outs, n, &r, phase_s);
	if (r.ok)
		status = PROTO_EXIT_OK;
out:
	watchdog_stop(c.wd);
	reporter_emit(rep, &r, phase_s);
	proto_report_clear(&r);
	nccllog_cleanup(&log);
	for (int k = 0; outs && k < n; k++)
		probe_outcome_clear(&outs[k]);
	free(outs);
	free(ids);
	free(devs);
	if (comms_left) {
		/* --teardown fast: the report is out (reporter_emit flushed it); end here,
		 * before NCCL's static destructors could run under its live threads. The
		 * driver releases the context and all GPU memory as the process exits. */
		fflush(NULL);
		_exit(status);
	}
	return status;
}
