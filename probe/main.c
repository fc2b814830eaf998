/* main.c - nccltune-probe: options -> launch mode -> one JSON object on stdout.
 * Everything else lives in the modules: options (command line), launch (how ranks
 * start), measure (what they do), report (stdout), fingerprint (--fingerprint). */
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envcheck.h"
#include "fingerprint.h"
#include "launch.h"
#include "measure.h"
#include "ncclpath.h"
#include "nccltune_config.h"
#include "options.h"
#include "report.h"
#include "rig.h"
#include "sweep.h"

static void print_version(FILE *f)
{
	fprintf(f, "nccltune-probe %s\nprotocol %s, fingerprint %s\n"
	        "built against NCCL %d.%d.%d and CUDA runtime %d.%d headers%s\n",
	        NCCLTUNE_VERSION, PROTO_SCHEMA, PROTO_FINGERPRINT_SCHEMA, NCCL_MAJOR, NCCL_MINOR,
	        NCCL_PATCH, CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10,
#ifdef PROBE_HAVE_MPI
	        ", with MPI launch"
#else
	        ", without MPI launch"
#endif
	       );
}

/* This process's rank under a launcher that starts one probe per rank (mpirun, srun):
 * the first of OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID that is set, 0
 * when none is (or it is not a number). Only rank 0 answers --capabilities and
 * --fingerprint, so a wrapped probe prints one line as the tuner expects. */
static long launcher_rank(void)
{
	static const char *const vars[] = {
		"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID",
	};

	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		const char *v = getenv(vars[i]);
		char *end;
		long r;

		if (!v || !*v)
			continue;
		r = strtol(v, &end, 10);
		return *end == '\0' && r > 0 ? r : 0;
	}
	return 0;
}

/* --ranks-per-gpu in the process and all modes: what every report says (the sharing,
 * in the process mode whether MPS serves it), the version check, the variable.
 * Returns 0, or -1 with a message for stage env. */
static int rig_setup(const struct probe_config *cfg, enum probe_launch mode,
                     struct reporter *rep, char *err, size_t errlen)
{
	int version = 0;
	char where[256];

	rep->ranks_per_gpu = cfg->ranks_per_gpu;
	if (cfg->ranks_per_gpu <= 1)
		return 0;
	if (ncclGetVersion(&version) != ncclSuccess)
		version = 0;
	if (rig_check(cfg->ranks_per_gpu, version, getenv(RIG_ENV), err, errlen) != 0 ||
	    rig_enable(cfg->ranks_per_gpu, rep, err, errlen) != 0)
		return -1;
	if (mode != PROBE_LAUNCH_ALL) {
		rep->has_mps = true;
		rep->mps = rig_mps_running(where, sizeof where);
		if (!rep->mps)
			rig_no_mps_warning(cfg->ranks_per_gpu, where, rep->warning, sizeof rep->warning);
	}
	return 0;
}

/* The launch mode, refusing combinations that cannot work. Returns the exit status
 * after reporting. */
static int run(const struct probe_config *asked, struct reporter *rep)
{
	char why[160], err[PROTO_ERROR_MAX];
	enum probe_launch mode = launch_resolve(asked, why, sizeof why);
	struct probe_config resolved = *asked;
	const struct probe_config *cfg = &resolved;
	struct proto_report r;
	struct sweep_plugin plugin;
	int status;

	memset(&r, 0, sizeof r);
	memset(&plugin, 0, sizeof plugin);
	/* Only now is the launch mode known, and with it the teardown's default. Under MPI
	 * only rank 0 may report: launch_mpi resolves it after MPI_Init. */
	if (mode != PROBE_LAUNCH_MPI &&
	    options_teardown(asked->teardown, mode, &resolved.teardown, err, sizeof err) != 0) {
		proto_report_fail(&r, PROTO_STAGE_ARGS, "%s", err);
		reporter_emit(rep, &r, NULL);
		fprintf(stderr, "nccltune-probe: %s\n", err);
		return PROTO_EXIT_USAGE;
	}
	/* Under MPI only rank 0 may report: launch_mpi checks after MPI_Init. */
	if (mode != PROBE_LAUNCH_MPI && !cfg->no_env_check &&
	    envcheck_run(envcheck_getenv, NULL, err, sizeof err) != 0) {
		proto_report_fail(&r, PROTO_STAGE_ENV, "%s", err);
		reporter_emit(rep, &r, NULL);
		fprintf(stderr, "nccltune-probe: %s\n", err);
		return PROTO_EXIT_FAILED;
	}
	/* The probe's own handle on the plugin, for the whole run: NCCL dlcloses its handle
	 * with the last communicator, ours keeps the control state alive. Opened before any
	 * fork, so the per-process mode's children share the object NCCL will load. */
	if (mode != PROBE_LAUNCH_MPI && cfg->sweep.nchoices > 0 &&
	    sweep_plugin_open(getenv("NCCL_TUNER_PLUGIN"), &plugin, err, sizeof err) != 0) {
		proto_report_fail(&r, PROTO_STAGE_ARGS, "%s", err);
		reporter_emit(rep, &r, NULL);
		fprintf(stderr, "nccltune-probe: %s\n", err);
		return PROTO_EXIT_USAGE;
	}
	/* Several ranks per GPU: refused on an NCCL before 2.30 (ncclGetVersion needs no
	 * GPU), then NCCL_MULTI_RANK_GPU_ENABLE=1 before any NCCL thread exists. Under MPI
	 * launch_mpi does the same after MPI_Init, where rank 0 reports. */
	if (mode != PROBE_LAUNCH_MPI && rig_setup(cfg, mode, rep, err, sizeof err) != 0) {
		proto_report_fail(&r, PROTO_STAGE_ENV, "%s", err);
		reporter_emit(rep, &r, NULL);
		fprintf(stderr, "nccltune-probe: %s\n", err);
		sweep_plugin_close(&plugin);
		return PROTO_EXIT_FAILED;
	}
	switch (mode) {
	case PROBE_LAUNCH_ALL:
		status = launch_all(cfg, plugin.handle ? &plugin : NULL, rep);
		sweep_plugin_close(&plugin);
		return status;
	case PROBE_LAUNCH_MPI:
#ifdef PROBE_HAVE_MPI
		return launch_mpi(cfg, rep);
#else
		/* Under mpirun without MPI support every rank would fork a child per GPU:
		 * refuse plainly instead. */
		proto_report_fail(&r, PROTO_STAGE_INIT, "MPI launch %s%s%s, but this nccltune-probe "
		                  "was built without MPI; rebuild with MPI or use --launch process "
		                  "or --launch all", cfg->launch == PROBE_LAUNCH_MPI ? "asked for" :
		                  "detected", why[0] ? " from " : "", why);
		reporter_emit(rep, &r, NULL);
		return PROTO_EXIT_FAILED;
#endif
	case PROBE_LAUNCH_PROCESS:
	case PROBE_LAUNCH_AUTO:
		break;
	}
	status = launch_process(cfg, plugin.handle ? &plugin : NULL, rep);
	sweep_plugin_close(&plugin);
	return status;
}

int main(int argc, char **argv)
{
	struct probe_config cfg;
	struct reporter rep;
	struct proto_report r;
	char err[PROTO_ERROR_MAX];
	char *fp;
	int status = PROTO_EXIT_FAILED;
	char nccl_err[PROTO_ERROR_MAX] = "";
	int nccl_bad = 0;
	enum options_action action;

	options_defaults(&cfg);
	memset(&r, 0, sizeof r);
	action = options_parse(argc, argv, &cfg, err, sizeof err);
	/* Before anything writes, redirects or forks, and only for what touches NCCL: unless
	 * the wanted library is already the one loaded, this re-executes the probe on it and
	 * does not return. */
	if (cfg.nccl_path[0] && (action == OPTIONS_RUN || action == OPTIONS_FINGERPRINT))
		nccl_bad = ncclpath_ensure(cfg.nccl_path, "ncclGetVersion", argv, nccl_err,
		                           sizeof nccl_err);
	if (reporter_init(&rep) != 0)
		perror("nccltune-probe: cannot separate the report from library output");

	/* Before a launch mode runs, every rank of a launcher sees the same refusal: rank 0
	 * alone reports it (one object on the launcher's stdout), all exit with its status. */
	if (nccl_bad && (action == OPTIONS_RUN || action == OPTIONS_FINGERPRINT)) {
		proto_report_fail(&r, PROTO_STAGE_ENV, "%s", nccl_err);
		if (launcher_rank() == 0)
			reporter_emit(&rep, &r, NULL);
		fprintf(stderr, "nccltune-probe: %s\n", nccl_err);
	} else switch (action) {
	case OPTIONS_ERROR:
		proto_report_fail(&r, PROTO_STAGE_ARGS, "%s", err);
		if (launcher_rank() == 0)
			reporter_emit(&rep, &r, NULL);
		fprintf(stderr, "nccltune-probe: %s\n", err);
		status = PROTO_EXIT_USAGE;
		break;
	case OPTIONS_HELP:
		options_help(rep.out);
		status = fflush(rep.out) == 0 ? PROTO_EXIT_OK : PROTO_EXIT_FAILED;
		break;
	case OPTIONS_CAPABILITIES:
		if (launcher_rank() != 0) {   /* rank 0 speaks for all */
			status = PROTO_EXIT_OK;
			break;
		}
		fp = proto_capabilities_format(MEASURE_CAPABILITIES);
		if (fp && reporter_emit_text(&rep, fp) == 0)
			status = PROTO_EXIT_OK;
		else if (!fp)
			fprintf(stderr, "nccltune-probe: out of memory\n");
		free(fp);
		break;
	case OPTIONS_VERSION:
		print_version(rep.out);
		status = fflush(rep.out) == 0 ? PROTO_EXIT_OK : PROTO_EXIT_FAILED;
		break;
	case OPTIONS_FINGERPRINT:
		if (launcher_rank() != 0) {
			status = PROTO_EXIT_OK;
			break;
		}
		fp = fingerprint_format(cfg.ranks_per_gpu);
		if (fp && reporter_emit_text(&rep, fp) == 0)
			status = PROTO_EXIT_OK;
		else if (!fp)
			fprintf(stderr, "nccltune-probe: out of memory building the fingerprint\n");
		free(fp);
		break;
	case OPTIONS_RUN:
		status = run(&cfg, &rep);
		break;
	}
	if (rep.out != stdout)
		fclose(rep.out);
	return status;
}
