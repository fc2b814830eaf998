/* launch_mpi.c - the MPI launch mode (see launch.h): one rank per process, started by
 * mpirun or srun. Rank 0 makes the NCCL id and broadcasts it; every rank measures on
 * the GPU given by its rank among the processes of its host; rank 0 gathers all
 * timings and failures, merges them exactly as the other modes do, and reports. The
 * gather happens when the teardown starts (every result checked and timed by then), the
 * report after it: a teardown that hangs ends in the watchdog, which reports the
 * gathered results with a warning naming the hung step, ok as they were (issue 26). */
#include "launch.h"

#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "envcheck.h"
#include "measure.h"
#include "options.h"
#include "rig.h"
#include "watchdog.h"

/* What every rank sends to rank 0 (timings and case verdicts follow separately). */
struct mpi_summary {
	int32_t ok, stage, nccl_version, in_flight_known, in_flight_case;
	double phase_s[PROBE_STEP_COUNT];
	struct probe_compute_samples compute;
	char error[PROTO_ERROR_MAX];
	char warning[PROTO_WARNING_MAX];
};

struct mpi_ctx {
	const struct probe_config *cfg;
	struct reporter *rep;
	struct watchdog *wd;
	int rank, size;
	const struct probe_outcome *out;   /* this rank's outcome while measuring */
	struct nccllog *log;
	atomic_int in_flight;              /* the case being worked on, -1 none */
	/* The one gather (mpi_gather): when the teardown starts, or after measure_run when
	 * none started. Written by the measuring thread before `gathered` is set; read by
	 * the watchdog's thread only after it is. */
	struct proto_report merged;        /* rank 0: every rank's outcome, merged */
	double phase_s[PROBE_STEP_COUNT];  /* rank 0: the merged phase times */
	int ok_all;                        /* every rank: the run went through */
	atomic_bool gathered;
	atomic_bool emitted;               /* rank 0 wrote its report */
};

static int mpi_gather(struct mpi_ctx *c, const struct probe_outcome *o);

static void mpi_on_step(void *arg, enum probe_step step, int case_idx)
{
	struct mpi_ctx *c = arg;

	if (step != PROBE_STEP_TEARDOWN)   /* a failed run's case in flight stays named */
		atomic_store(&c->in_flight, case_idx);
	watchdog_kick(c->wd, step);
	/* every rank reaches its teardown once (measure_run), so the gather is collective */
	if (step == PROBE_STEP_TEARDOWN && c->out && !atomic_load(&c->gathered))
		mpi_gather(c, c->out);
}

static void mpi_fire(void *arg, enum probe_step step, double silent_s)
{
	struct mpi_ctx *c = arg;
	struct proto_report r;
	char msg[PROTO_ERROR_MAX];
	enum proto_stage stage = probe_watchdog_failure(c->cfg, c->out, c->rank, step, silent_s,
	                                                 msg, sizeof msg);
	char warning[PROTO_WARNING_MAX];

	if (atomic_load(&c->emitted)) {
		/* the report is out (rank 0) and the teardown done: only MPI_Finalize is left,
		 * held up by a rank whose teardown hangs */
		nccllog_cleanup(c->log);
		_exit(c->ok_all ? PROTO_EXIT_OK : PROTO_EXIT_FAILED);
	}
	if (atomic_load(&c->gathered) && c->ok_all && step == PROBE_STEP_TEARDOWN &&
	    probe_watchdog_keeps(c->out, step, silent_s, warning, sizeof warning)) {
		/* every rank's results were gathered before the teardown that hangs: kept */
		if (c->rank == 0) {
			proto_report_warn(&c->merged, "rank %d: %.200s", c->rank, warning);
			c->merged.teardown_hung = true;   /* mpirun may call this exit a failure */
			reporter_emit(c->rep, &c->merged, c->phase_s);
		} else {
			fprintf(stderr, "nccltune-probe: rank %d: %s\n", c->rank, warning);
		}
		nccllog_cleanup(c->log);
		_exit(PROTO_EXIT_OK);
	}
	if (c->rank == 0) {
		struct probe_outcome fail;

		memset(&fail, 0, sizeof fail);
		probe_outcome_fail(&fail, stage, "%s", msg);
		fail.in_flight_case = atomic_load(&c->in_flight);
		fail.in_flight_known = fail.in_flight_case >= 0;
		/* rank 0's verdicts so far, read while its measuring thread is stuck */
		probe_report_failure(c->cfg, &fail, c->out, c->out ? 1 : 0, &r);
		reporter_emit(c->rep, &r, NULL);
		nccllog_cleanup(c->log);
	} else {
		memset(&r, 0, sizeof r);
		proto_report_fail(&r, stage, "%s", msg);
		nccllog_cleanup(c->log);
		fprintf(stderr, "nccltune-probe: %s\n", r.error);
		/* Give rank 0, stuck in the same step, time to report before the launcher
		 * tears the job down because this rank left. */
		sleep(5);
	}
	_exit(PROTO_EXIT_FAILED);
}

/* Say an MPI call failed, on stderr; MPI's default handler usually aborts first. */
static int mpi_ok(int err, const char *call)
{
	char text[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (err == MPI_SUCCESS)
		return 1;
	MPI_Error_string(err, text, &len);
	fprintf(stderr, "nccltune-probe: %s: %.*s\n", call, len, text);
	return 0;
}

/* --ranks-per-gpu under MPI: this rank's device, what every report says about the
 * sharing (rank 0 reports), the version check and NCCL_MULTI_RANK_GPU_ENABLE, before
 * ncclGetUniqueId starts NCCL's threads. Returns 0, or -1 with the failure in o. */
static int mpi_rig(const struct probe_config *cfg, struct reporter *rep, int local, int nlocal,
                   int count, int *device, struct probe_outcome *o)
{
	int k = cfg->ranks_per_gpu, version = 0;
	char err[PROTO_ERROR_MAX], where[256];

	if (k > 1 && rig_device(local, k) >= count) {
		probe_outcome_fail(o, PROTO_STAGE_INIT, "--ranks-per-gpu %d: local rank %d of %d "
		                   "would use GPU %d, and %d are visible", k, local, nlocal,
		                   rig_device(local, k), count);
		return -1;
	}
	*device = k > 1 ? rig_device(local, k) : local % count;
	if (k == 1 && nlocal > count)
		k = (nlocal + count - 1) / count;   /* the launcher put more ranks than GPUs */
	rep->ranks_per_gpu = k;
	if (k <= 1)
		return 0;
	if (ncclGetVersion(&version) != ncclSuccess)
		version = 0;
	if (rig_check(k, version, getenv(RIG_ENV), err, sizeof err) != 0 ||
	    rig_enable(k, rep, err, sizeof err) != 0) {
		probe_outcome_fail(o, PROTO_STAGE_ENV, "%s", err);
		return -1;
	}
	rep->has_mps = true;
	rep->mps = rig_mps_running(where, sizeof where);
	if (!rep->mps)
		rig_no_mps_warning(k, where, rep->warning, sizeof rep->warning);
	return 0;
}

/* Stop before measuring when the command line, the environment or the sweep's plugin
 * is wrong: every rank has the same, so all stop and rank 0 says why. 0, or -1 with
 * o->stage and o->error set. */
static int mpi_precheck(const struct probe_config *asked, struct probe_config *resolved,
                        struct sweep_plugin *plugin, struct probe_outcome *o)
{
	if (options_teardown(asked->teardown, PROBE_LAUNCH_MPI, &resolved->teardown, o->error,
	                     sizeof o->error) != 0) {
		o->stage = PROTO_STAGE_ARGS;
		return -1;
	}
	if (!resolved->no_env_check &&
	    envcheck_run(envcheck_getenv, NULL, o->error, sizeof o->error) != 0) {
		o->stage = PROTO_STAGE_ENV;
		return -1;
	}
	if (resolved->sweep.nchoices > 0 &&
	    sweep_plugin_open(getenv("NCCL_TUNER_PLUGIN"), plugin, o->error, sizeof o->error) != 0) {
		o->stage = PROTO_STAGE_ARGS;
		return -1;
	}
	return 0;
}

/* This rank's measurement: its GPU, the NCCL id from rank 0 (whose verdict travels with
 * it: if rank 0 cannot go on, nobody can), then measure_run. The outcome, failure
 * included, is in *o. */
static void mpi_measure(struct mpi_ctx *c, int size, int local, int nlocal, double t0,
                        struct sweep_plugin *plugin, struct probe_outcome *o)
{
	const struct probe_config *cfg = c->cfg;
	struct { int32_t ok; ncclUniqueId id; } hello;
	struct measure_setup s;
	struct nccllog_reader reader;
	char path[PATH_MAX];
	int count = 0, device = 0, rank = c->rank;

	memset(&hello, 0, sizeof hello);
	memset(&s, 0, sizeof s);
	/* The GPU of this rank: with --ranks-per-gpu K the K local ranks in a row share one;
	 * without it local ranks wrap around the GPUs, and those beyond share them too. */
	if (measure_device_count(&count, o) == 0 &&
	    mpi_rig(cfg, c->rep, local, nlocal, count, &device, o) == 0) {
		hello.ok = 1;
		if (c->rank == 0 && measure_unique_id(&hello.id, o) != 0)
			hello.ok = 0;
	}
	MPI_Bcast(&hello, (int)sizeof hello, MPI_BYTE, 0, MPI_COMM_WORLD);
	if (!hello.ok || o->error[0] != '\0') {
		if (o->error[0] == '\0')
			probe_outcome_fail(o, PROTO_STAGE_INIT, "rank 0 could not start (see its report)");
		return;
	}
	s.cfg = cfg;
	s.nranks = size;
	s.nlocal = 1;
	s.ranks = &rank;
	s.devices = &device;
	s.id = hello.id;
	s.on_step = mpi_on_step;
	s.arg = c;
	s.plugin = plugin->handle ? plugin : NULL;
	if (nccllog_path(c->log, getpid(), path, sizeof path) == 0) {
		nccllog_reader_init(&reader, path, stderr);
		s.log = &reader;
	}
	o->phase_s[PROBE_STEP_CUDA_INIT] = probe_now() - t0;
	c->out = o;
	measure_run(&s, o);
	if (s.log)
		nccllog_reader_close(s.log);
}

/* What rank k sent (its summary, timings and case verdicts) as an outcome to merge. */
static void mpi_outcome_of(const struct mpi_summary *all, int k, int size, size_t ncases,
                           int iters, double *ms, struct probe_case_result *cases,
                           struct probe_outcome *out)
{
	const struct mpi_summary *a = &all[k];

	out->ok = a->ok;
	out->stage = (enum proto_stage)a->stage;
	out->nccl_version = a->nccl_version;
	out->ncases = (int)ncases;
	out->iters = iters;
	out->ms = ms;
	out->cases = cases;
	out->in_flight_known = a->in_flight_known;
	out->in_flight_case = a->in_flight_case;
	memcpy(out->phase_s, a->phase_s, sizeof out->phase_s);
	out->compute = a->compute;
	memcpy(out->warning, a->warning, sizeof out->warning);
	if (!a->ok && size > 1)
		snprintf(out->error, sizeof out->error, "rank %d: %.*s", k,
		         (int)sizeof a->error - 32, a->error);
	else if (!a->ok)
		memcpy(out->error, a->error, sizeof out->error);
}

/* Gather every rank's outcome on rank 0 and merge them there as the other modes do
 * (into c->merged, c->phase_s), and tell every rank whether the run went through
 * (c->ok_all, returned). Called once per rank: when its teardown starts (o measured or
 * failed, its flags not final yet) or after measure_run. */
static int mpi_gather(struct mpi_ctx *c, const struct probe_outcome *o)
{
	int size = c->size;
	const struct probe_config *cfg = c->cfg;
	size_t ncases = probe_case_count(cfg), nms = ncases * (size_t)cfg->w.iters;
	size_t crbytes = ncases * sizeof(struct probe_case_result);
	struct probe_case_result *cases_all = NULL, *cr;
	struct probe_outcome *outs = NULL;
	struct mpi_summary mine, *all = NULL;
	struct proto_report *r = &c->merged;
	double *ms_all = NULL, *ms;
	int in_flight = atomic_load(&c->in_flight);

	memset(r, 0, sizeof *r);
	memset(&mine, 0, sizeof mine);
	/* at the teardown's start a measured run's ok is not set yet; a failed one's case
	 * in flight is the last one kicked */
	mine.ok = o->ok || o->measured;
	mine.stage = (int32_t)o->stage;
	mine.nccl_version = o->nccl_version;
	mine.in_flight_known = o->in_flight_known || (!mine.ok && in_flight >= 0);
	mine.in_flight_case = o->in_flight_known ? o->in_flight_case : in_flight;
	memcpy(mine.phase_s, o->phase_s, sizeof mine.phase_s);
	mine.compute = o->compute;
	snprintf(mine.error, sizeof mine.error, "%s", o->error);
	snprintf(mine.warning, sizeof mine.warning, "%s", o->warning);
	if (c->rank == 0) {
		all = calloc((size_t)size, sizeof *all);
		ms_all = calloc((size_t)size * nms, sizeof *ms_all);
		cases_all = calloc((size_t)size * ncases + 1, sizeof *cases_all);
		outs = calloc((size_t)size, sizeof *outs);
	}
	/* Failed ranks send zeros (undecided cases): the gather must happen on every rank
	 * alike. */
	ms = o->ms ? o->ms : calloc(nms ? nms : 1, sizeof *ms);
	cr = o->cases ? o->cases : calloc(ncases + 1, sizeof *cr);
	MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0,
	           MPI_COMM_WORLD);
	MPI_Gather(ms, (int)nms, MPI_DOUBLE, ms_all, (int)nms, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	MPI_Gather(cr, (int)crbytes, MPI_BYTE, cases_all, (int)crbytes, MPI_BYTE, 0,
	           MPI_COMM_WORLD);
	if (ms != o->ms)
		free(ms);
	if (cr != o->cases)
		free(cr);
	if (c->rank == 0 && (!all || !ms_all || !cases_all || !outs)) {
		proto_report_fail(r, PROTO_STAGE_INIT, "out of memory gathering %d ranks", size);
	} else if (c->rank == 0) {
		for (int k = 0; k < size; k++)
			mpi_outcome_of(all, k, size, ncases, cfg->w.iters, ms_all + (size_t)k * nms,
			               cases_all + (size_t)k * ncases, &outs[k]);
		probe_merge(cfg, outs, size, r, c->phase_s);
	}
	c->ok_all = c->rank == 0 ? r->ok : 0;
	MPI_Bcast(&c->ok_all, 1, MPI_INT, 0, MPI_COMM_WORLD);
	atomic_store(&c->gathered, true);
	free(all);
	free(ms_all);
	free(cases_all);
	free(outs);
	return c->ok_all;
}

int launch_mpi(const struct probe_config *asked, struct reporter *rep)
{
	struct probe_config resolved = *asked;
	struct mpi_ctx c;
	struct probe_outcome o;
	struct proto_report r;
	struct nccllog log;
	struct sweep_plugin plugin;
	double t0;
	int size = 1, local = 0, nlocal = 1, status = PROTO_EXIT_FAILED, ok_all;
	MPI_Comm node = MPI_COMM_NULL;

	memset(&c, 0, sizeof c);
	c.cfg = &resolved;
	c.rep = rep;
	c.log = &log;
	atomic_init(&c.in_flight, -1);
	atomic_init(&c.gathered, false);
	atomic_init(&c.emitted, false);
	memset(&o, 0, sizeof o);
	memset(&r, 0, sizeof r);
	memset(&plugin, 0, sizeof plugin);
	/* per rank, before MPI_Init: an MPI library may itself start NCCL */
	launch_log_start(&log);
	if (!mpi_ok(MPI_Init(NULL, NULL), "MPI_Init")) {
		proto_report_fail(&r, PROTO_STAGE_INIT, "MPI_Init failed (see stderr)");
		reporter_emit(rep, &r, NULL);
		nccllog_cleanup(&log);
		return PROTO_EXIT_FAILED;
	}
	t0 = probe_now();
	MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	c.size = size;
	if (mpi_ok(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c.rank,
	                               MPI_INFO_NULL, &node), "MPI_Comm_split_type")) {
		MPI_Comm_rank(node, &local);
		MPI_Comm_size(node, &nlocal);
	}
	c.wd = watchdog_start(resolved.step_timeout_s, launch_grace_s(&resolved), mpi_fire, &c);
	if (mpi_precheck(asked, &resolved, &plugin, &o) == 0)
		mpi_measure(&c, size, local, nlocal, t0, &plugin, &o);
	watchdog_kick(c.wd, PROBE_STEP_TEARDOWN);
	if (atomic_load(&c.gathered)) {
		/* gathered as the teardown started: what the teardown itself said since */
		ok_all = c.ok_all;
		if (o.warning[0] && c.rank == 0 && c.merged.ok)
			proto_report_warn(&c.merged, "rank 0: %.200s", o.warning);
		else if (o.warning[0] && c.rank != 0)
			fprintf(stderr, "nccltune-probe: rank %d: %s\n", c.rank, o.warning);
	} else {
		ok_all = mpi_gather(&c, &o);
	}
	if (c.rank == 0) {
		c.phase_s[PROBE_STEP_TEARDOWN] = o.phase_s[PROBE_STEP_TEARDOWN];
		reporter_emit(rep, &c.merged, c.phase_s);
	}
	atomic_store(&c.emitted, true);
	/* the watchdog stays on through MPI_Finalize (a rank whose teardown hangs may hold
	 * it up); with the report out it only ends the process */
	nccllog_cleanup(&log);
	if (ok_all)
		status = PROTO_EXIT_OK;
	else if (o.stage == PROTO_STAGE_ARGS && o.error[0])
		status = PROTO_EXIT_USAGE;
	sweep_plugin_close(&plugin);
	probe_outcome_clear(&o);
	if (node != MPI_COMM_NULL)
		MPI_Comm_free(&node);
	MPI_Finalize();
	watchdog_stop(c.wd);
	proto_report_clear(&c.merged);
	return status;
}
