/* options.c - the option table, its parser and the --help it generates (options.h). */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"

enum opt_kind {
	OPT_WORKLOAD, OPT_LAUNCH, OPT_TEARDOWN, OPT_GPUS, OPT_RANKS_PER_GPU, OPT_STEP_TIMEOUT, OPT_NO_ENV_CHECK, OPT_VERBOSE,
	OPT_FINGERPRINT, OPT_TEST_CORRUPT, OPT_TEST_CORRUPT_CHOICE, OPT_TEST_STALL_CHOICE, OPT_TEST_STALL_TEARDOWN,
	OPT_SWEEP, OPT_NCCL, OPT_CAPABILITIES, OPT_HELP, OPT_VERSION,
};

struct opt_row {
	const char *name;
	const char *metavar;     /* NULL: a flag */
	enum opt_kind kind;
	const char *help;
};

/* One row per option, in --help order. */
static const struct opt_row table[] = {
	{"bytes", "B[,B2...]", OPT_WORKLOAD,
	 "message sizes in bytes per rank (K, M, G = KiB, MiB, GiB; 1.5M) [43008]"},
	{"ops", "N[,N2...]", OPT_WORKLOAD,
	 "all-reduces captured back to back in one CUDA graph: one count for every size, or "
	 "one per --bytes entry [122]"},
	{"dtype", "T", OPT_WORKLOAD, "bf16, f16 or f32 [bf16]"},
	{"iters", "N", OPT_WORKLOAD, "timed graph replays [200]"},
	{"warmup", "N", OPT_WORKLOAD, "untimed graph replays first [20]"},
	{"out-of-place", NULL, OPT_WORKLOAD, "separate output buffers (default: in place)"},
	{"compute-us", "US[,CTAS]", OPT_WORKLOAD,
	 "a busy kernel of US microseconds on CTAS CTAs (default one per SM) before every "
	 "captured all-reduce, as a server's step has its GEMMs; the report adds the kernel "
	 "alone (compute), each size's step_us and allreduce_us"},
	{"window", "symmetric", OPT_WORKLOAD,
	 "buffers from ncclMemAlloc registered as symmetric windows (NCCL_WIN_COLL_SYMMETRIC); "
	 "needs cuMem (NCCL_CUMEM_ENABLE not 0)"},
	{"sweep", "FILE", OPT_SWEEP,
	 "measure the choices of FILE (nccltune-sweep/1: per size an algorithm, protocol and "
	 "CTA count, forced through nccltune's tuner plugin, which NCCL_TUNER_PLUGIN must name) "
	 "next to the sizes, in interleaved rounds"},
	{"nccl", "PATH", OPT_NCCL,
	 "run on this libnccl.so.2 (e.g. a PyTorch wheel's): the probe re-executes itself once "
	 "with PATH's folder first on LD_LIBRARY_PATH and fails (stage env) unless the library "
	 "then loaded is PATH; --fingerprint reports it as nccl_path"},
	{"launch", "MODE", OPT_LAUNCH,
	 "process (a child per GPU), all (one process), mpi, or auto (mpi under "
	 "mpirun/srun, else process) [auto]"},
	{"teardown", "HOW", OPT_TEARDOWN,
	 "after a verified run: clean (destroy the NCCL communicators) or fast (leave them "
	 "to the process exit, which frees all GPU memory) [fast; clean under mpi]"},
	{"gpus", "N", OPT_GPUS, "use the first N visible GPUs (process, all) [all]"},
	{"ranks-per-gpu", "K", OPT_RANKS_PER_GPU,
	 "K ranks of the communicator share each GPU (ranks g*K .. g*K+K-1 on GPU g; under "
	 "mpi the K local ranks in a row): needs NCCL 2.30+ (stage env otherwise); the probe "
	 "sets NCCL_MULTI_RANK_GPU_ENABLE=1 itself. A test rig, not a multi-GPU machine [1]"},
	{"step-timeout", "SEC", OPT_STEP_TIMEOUT,
	 "longest any step may make no progress before the probe aborts it [60]"},
	{"no-env-check", NULL, OPT_NO_ENV_CHECK,
	 "do not reject unknown NCCL_ALGO/NCCL_PROTO names or non-numeric knobs (stage env)"},
	{"verbose", NULL, OPT_VERBOSE, "progress on stderr"},
	{"test-corrupt-rank", "R", OPT_TEST_CORRUPT,
	 "testing aid: overwrite one element of rank R's result after the verification "
	 "replay, so the exact check must fail (stage verify)"},
	{"test-corrupt-choice", "I", OPT_TEST_CORRUPT_CHOICE,
	 "testing aid: spoil only sweep choice I's check (on --test-corrupt-rank, default 0): "
	 "that choice must end ok false at stage verify while the run goes on"},
	{"test-stall-choice", "I", OPT_TEST_STALL_CHOICE,
	 "testing aid: rank 0 stops before the first timed replay of sweep choice I, as a hung "
	 "choice would; the failure report must name it (sweep_in_flight)"},
	{"test-stall-teardown", NULL, OPT_TEST_STALL_TEARDOWN,
	 "testing aid: rank 0 stops for good when its teardown starts, as a finalize or destroy "
	 "that hangs; a measured run must still report every result, with a warning"},
	{"fingerprint", NULL, OPT_FINGERPRINT, "describe this machine as JSON and exit"},
	{"capabilities", NULL, OPT_CAPABILITIES,
	 "print the protocol extensions this probe implements as JSON and exit"},
	{"help", NULL, OPT_HELP, "this text"},
	{"version", NULL, OPT_VERSION, "version and protocol"},
};

#define NOPTS (sizeof table / sizeof table[0])

void options_defaults(struct probe_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	proto_workload_defaults(&cfg->w);
	cfg->launch = PROBE_LAUNCH_AUTO;
	cfg->teardown = PROBE_TEARDOWN_AUTO;
	cfg->gpus = 0;
	cfg->ranks_per_gpu = 1;
	cfg->step_timeout_s = 60;
	cfg->verbose = false;
	cfg->corrupt_rank = -1;
	cfg->corrupt_choice = -1;
	cfg->stall_choice = -1;
}

void options_help(FILE *f)
{
	fprintf(f,
	        "usage: nccltune-probe [options]\n"
	        "Measures the latency of NCCL all-reduces captured in CUDA graphs and prints one\n"
	        "JSON object (protocol %s) on stdout; diagnostics go to stderr.\n"
	        "NCCL reads its configuration (NCCL_PROTO, NCCL_ALGO, ...) from the environment.\n"
	        "Unless NCCL_DEBUG is set, the probe points NCCL's TUNING log at a private file to\n"
	        "report what NCCL ran (\"nccl\"), and copies NCCL's warnings to stderr.\n\n"
	        "options:\n", PROTO_SCHEMA);
	for (size_t i = 0; i < NOPTS; i++) {
		char left[40];

		snprintf(left, sizeof left, "--%s%s%s", table[i].name, table[i].metavar ? " " : "",
		         table[i].metavar ? table[i].metavar : "");
		fprintf(f, "  %-24s %s\n", left, table[i].help);
	}
	fprintf(f, "\nexit status: %d measured (ok: true); %d failed (ok: false, \"stage\" says "
	        "where);\n             %d bad command line (stage \"args\")\n",
	        PROTO_EXIT_OK, PROTO_EXIT_FAILED, PROTO_EXIT_USAGE);
}

int options_teardown(enum probe_teardown asked, enum probe_launch mode, enum probe_teardown *out,
                     char *err, size_t errlen)
{
	if (mode == PROBE_LAUNCH_MPI && asked == PROBE_TEARDOWN_FAST) {
		snprintf(err, errlen, "--teardown fast: not available with the MPI launch mode "
		         "(every rank must finish MPI cleanly); use --teardown clean or leave it out");
		return -1;
	}
	if (asked != PROBE_TEARDOWN_AUTO)
		*out = asked;
	else
		*out = mode == PROBE_LAUNCH_MPI ? PROBE_TEARDOWN_CLEAN : PROBE_TEARDOWN_FAST;
	return 0;
}

/* An integer option in lo..hi into *out; else -1 with "--NAME: 'ARG' is not NOUN in
 * lo..hi". */
static int int_option(const struct opt_row *row, const char *arg, long lo, long hi,
                      const char *noun, int *out, char *err, size_t errlen)
{
	long v;

	if (fs_parse_long(arg, lo, hi, &v) != 0) {
		snprintf(err, errlen, "--%s: '%s' is not %s in %ld..%ld", row->name, arg, noun, lo, hi);
		return -1;
	}
	*out = (int)v;
	return 0;
}

static int apply(struct probe_config *cfg, const struct opt_row *row, const char *arg,
                 enum options_action *action, char *err, size_t errlen)
{
	switch (row->kind) {
	case OPT_WORKLOAD:
		return proto_workload_option(&cfg->w, row->name, arg, err, errlen) == 0 ? 0 : -1;
	case OPT_LAUNCH:
		if (strcmp(arg, "process") == 0)
			cfg->launch = PROBE_LAUNCH_PROCESS;
		else if (strcmp(arg, "all") == 0)
			cfg->launch = PROBE_LAUNCH_ALL;
		else if (strcmp(arg, "mpi") == 0)
			cfg->launch = PROBE_LAUNCH_MPI;
		else if (strcmp(arg, "auto") == 0)
			cfg->launch = PROBE_LAUNCH_AUTO;
		else {
			snprintf(err, errlen, "--launch: '%s' is not one of process, all, mpi, auto", arg);
			return -1;
		}
		return 0;
	case OPT_TEARDOWN:
		if (strcmp(arg, "clean") == 0)
			cfg->teardown = PROBE_TEARDOWN_CLEAN;
		else if (strcmp(arg, "fast") == 0)
			cfg->teardown = PROBE_TEARDOWN_FAST;
		else {
			snprintf(err, errlen, "--teardown: '%s' is not one of clean, fast", arg);
			return -1;
		}
		return 0;
	case OPT_GPUS:
		return int_option(row, arg, 1, 1024, "an integer", &cfg->gpus, err, errlen);
	case OPT_RANKS_PER_GPU:
		return int_option(row, arg, 1, PROTO_MAX_RANKS_PER_GPU, "an integer",
		                  &cfg->ranks_per_gpu, err, errlen);
	case OPT_STEP_TIMEOUT: {
		char *end;
		double d;

		errno = 0;
		d = strtod(arg, &end);
		if (errno || end == arg || *end || !isfinite(d) || d <= 0 || d > 86400) {
			snprintf(err, errlen, "--step-timeout: '%s' is not a number of seconds in "
			         "(0, 86400]", arg);
			return -1;
		}
		cfg->step_timeout_s = d;
		return 0;
	}
	case OPT_NO_ENV_CHECK:
		cfg->no_env_check = true;
		return 0;
	case OPT_TEST_CORRUPT:
		return int_option(row, arg, 0, 1023, "a rank", &cfg->corrupt_rank, err, errlen);
	case OPT_TEST_CORRUPT_CHOICE:
		return int_option(row, arg, 0, PROTO_MAX_CHOICES - 1, "a choice", &cfg->corrupt_choice,
		                  err, errlen);
	case OPT_TEST_STALL_CHOICE:
		return int_option(row, arg, 0, PROTO_MAX_CHOICES - 1, "a choice", &cfg->stall_choice,
		                  err, errlen);
	case OPT_TEST_STALL_TEARDOWN:
		cfg->stall_teardown = true;
		return 0;
	case OPT_SWEEP:
		if (!*arg || strlen(arg) >= sizeof cfg->sweep_file) {
			snprintf(err, errlen, "--sweep: '%.64s' is not a file name", arg);
			return -1;
		}
		snprintf(cfg->sweep_file, sizeof cfg->sweep_file, "%s", arg);
		return 0;
	case OPT_NCCL:
		if (cfg->nccl_path[0]) {
			snprintf(err, errlen, "--nccl: given twice (one library per run)");
			return -1;
		}
		if (!*arg || strlen(arg) >= sizeof cfg->nccl_path) {
			snprintf(err, errlen, "--nccl: '%.64s' is not a file name", arg);
			return -1;
		}
		snprintf(cfg->nccl_path, sizeof cfg->nccl_path, "%s", arg);
		return 0;
	case OPT_CAPABILITIES:
		*action = OPTIONS_CAPABILITIES;
		return 0;
	case OPT_VERBOSE:
		cfg->verbose = true;
		return 0;
	case OPT_FINGERPRINT:
		*action = OPTIONS_FINGERPRINT;
		return 0;
	case OPT_HELP:
		*action = OPTIONS_HELP;
		return 0;
	case OPT_VERSION:
		*action = OPTIONS_VERSION;
		return 0;
	}
	return -1;
}

/* Checks that need every option: sizes against the dtype, --ops against --bytes, the
 * total buffer, the sweep file against --bytes and --iters, the testing aids. */
static int validate(struct probe_config *cfg, char *err, size_t errlen)
{
	size_t esize = proto_dtype_size(cfg->w.dtype), big;

	for (size_t i = 0; i < cfg->w.nsizes; i++) {
		if (cfg->w.bytes[i] % esize != 0) {
			snprintf(err, errlen, "--bytes: %zu is not a whole number of %s elements "
			         "(%zu bytes each)", cfg->w.bytes[i], proto_dtype_name(cfg->w.dtype),
			         esize);
			return -1;
		}
	}
	if (proto_workload_validate(&cfg->w, err, errlen) != 0)
		return -1;
	if (probe_buffer_bytes(&cfg->w) > OPTIONS_MAX_BUFFER_BYTES) {
		big = probe_buffer_size_index(&cfg->w);
		snprintf(err, errlen, "--ops %d x --bytes %zu: each rank would need %zu bytes of "
		         "buffers (each all-reduce has its own slice%s); the limit is %zu",
		         proto_workload_ops(&cfg->w, big), cfg->w.bytes[big], probe_buffer_bytes(&cfg->w),
		         cfg->w.out_of_place ? ", twice out of place" : "", OPTIONS_MAX_BUFFER_BYTES);
		return -1;
	}
	if (cfg->sweep_file[0] && sweep_load(cfg->sweep_file, &cfg->w, &cfg->sweep, err,
	                                     errlen) != 0)
		return -1;
	if (cfg->corrupt_choice >= 0 && (size_t)cfg->corrupt_choice >= cfg->sweep.nchoices) {
		snprintf(err, errlen, "--test-corrupt-choice %d: %s", cfg->corrupt_choice,
		         cfg->sweep.nchoices ? "there is no such choice in the sweep file"
		                             : "needs --sweep");
		return -1;
	}
	if (cfg->stall_choice >= 0 && (size_t)cfg->stall_choice >= cfg->sweep.nchoices) {
		snprintf(err, errlen, "--test-stall-choice %d: %s", cfg->stall_choice,
		         cfg->sweep.nchoices ? "there is no such choice in the sweep file"
		                             : "needs --sweep");
		return -1;
	}
	return 0;
}

/* The command-line token that named the option getopt_long just returned: for
 * "--bytes 43008" the value is the last token consumed, the name the one before. */
static const char *option_token(int argc, char **argv, const struct opt_row *row)
{
	int at = optind - 1;

	if (row->metavar && at > 0 && optarg == argv[at])
		at--;
	return at >= 0 && at < argc ? argv[at] : "";
}

/* getopt_long accepts unambiguous prefixes (--by for --bytes); the protocol wants
 * unknown options refused, so insist on the full name. */
static bool exact_name(const char *tok, const struct opt_row *row)
{
	size_t len = strlen(row->name);

	return strncmp(tok, "--", 2) == 0 && strncmp(tok + 2, row->name, len) == 0 &&
	       (tok[2 + len] == '\0' || tok[2 + len] == '=');
}

enum options_action options_parse(int argc, char **argv, struct probe_config *cfg, char *err,
                                   size_t errlen)
{
	struct option longs[NOPTS + 1];
	enum options_action action = OPTIONS_RUN;

	memset(longs, 0, sizeof longs);
	for (size_t i = 0; i < NOPTS; i++) {
		longs[i].name = table[i].name;
		longs[i].has_arg = table[i].metavar ? required_argument : no_argument;
		longs[i].val = 1000 + (int)i;
	}
	optind = 0;      /* glibc: start afresh (tests parse several command lines) */
	opterr = 0;      /* our messages, in the report, not getopt's on stderr */
	for (;;) {
		int c = getopt_long(argc, argv, ":", longs, NULL);
		const char *tok;

		if (c == -1)
			break;
		if (c == ':') {
			snprintf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
			return OPTIONS_ERROR;
		}
		if (c < 1000 || c >= 1000 + (int)NOPTS) {
			snprintf(err, errlen, "unknown option '%s' (see --help)", argv[optind - 1]);
			return OPTIONS_ERROR;
		}
		tok = option_token(argc, argv, &table[c - 1000]);
		if (!exact_name(tok, &table[c - 1000])) {
			snprintf(err, errlen, "option '%s' is not spelled out: write --%s", tok,
			         table[c - 1000].name);
			return OPTIONS_ERROR;
		}
		if (apply(cfg, &table[c - 1000], optarg, &action, err, errlen) != 0)
			return OPTIONS_ERROR;
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s' (see --help)", argv[optind]);
		return OPTIONS_ERROR;
	}
	if (action == OPTIONS_RUN && validate(cfg, err, errlen) != 0)
		return OPTIONS_ERROR;
	return action;
}
