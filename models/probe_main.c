/* probe_main.c - nccltune-model-probe: a probe (protocol v1, docs/probe-protocol.md, with
 * its extensions: capabilities, per-size --ops, decisions, --sweep) that answers from a
 * machine model instead of GPUs. It reads the NCCL_* variables of its own environment
 * once, as NCCL would, loads NCCL_TUNER_PLUGIN as NCCL would, evaluates the workload on
 * the model (run.c, run_sweep.c) and prints one JSON report with "source": "model". Its
 * numbers are never measurements. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

#include "fsutil.h"
#include "model.h"
#include "nccltune_config.h"
#include "proto.h"
#include "run.h"
#include "sweep.h"
#include "tuner.h"

/* The protocol extensions this probe speaks (docs/probe-protocol.md). */
#define MODEL_PROBE_CAPABILITIES (PROTO_CAP_OPS_LIST | PROTO_CAP_DECISIONS | PROTO_CAP_SWEEP | \
	PROTO_CAP_WINDOW | PROTO_CAP_COMPUTE)

/* Everything the command line says. */
struct args {
	const char *model;
	bool have_seed;
	unsigned long seed;
	double noise;
	bool fingerprint, explain, help, version, list, capabilities;
	int corrupt_rank, corrupt_choice, stall_choice;
	const char *sweep_file;
	char nccl_path[PATH_MAX];   /* --nccl, resolved; "" none */
	struct sweep_plan sweep;
	struct proto_workload w;
};

/* One row per long option: whether it takes a value, and whether it is a workload option
 * for proto_workload_option. The table also drives --help. */
static const struct option_row {
	const char *name;
	const char *value;      /* NULL: a flag */
	bool workload;
	const char *help;
} options[] = {
	{ "model", "NAME|FILE", false, "built-in model name or model file (required)" },
	{ "bytes", "B[,B2,...]", true, "message sizes per rank (K, M, G suffixes; default 43008)" },
	{ "ops", "N[,N2,...]", true, "all-reduces per graph: one count, or one per --bytes entry "
	  "(default 122)" },
	{ "dtype", "bf16|f16|f32", true, "element type (default bf16)" },
	{ "iters", "N", true, "timed graph replays = samples per size (default 200)" },
	{ "warmup", "N", true, "untimed replays (accepted; the model needs none)" },
	{ "out-of-place", NULL, true, "out-of-place all-reduce (default in place)" },
	{ "compute-us", "US[,CTAS]", true, "a kernel of US microseconds on CTAS CTAs (default one "
	  "per SM) before every all-reduce, competing with NCCL's CTAs for SMs (MODEL)" },
	{ "window", "symmetric", true, "symmetric windows: a symmetric kernel at <= 64 KiB on "
	  "NVLink models (MODEL); needs cuMem (NCCL_CUMEM_ENABLE not 0)" },
	{ "seed", "N", false, "noise seed; the same seed and configuration repeat exactly" },
	{ "noise", "X", false, "scale of the model's noise: 0 exact, 1 the model's (default)" },
	{ "nccl", "PATH", false, "the libnccl.so.2 the server runs on: must exist; recorded as "
	  "the fingerprint's nccl_path (the model's figures do not change)" },
	{ "explain", NULL, false, "print NCCL's choices per size to stderr" },
	{ "sweep", "FILE", false, "measure the choices of FILE (nccltune-sweep/1) in this one "
	  "process, each forced through nccltune's plugin (NCCL_TUNER_PLUGIN, a path)" },
	{ "test-corrupt-rank", "R", false, "testing aid: rank R's check finds a wrong sum (stage "
	  "verify; a rank that does not exist fails at init)" },
	{ "test-corrupt-choice", "I", false, "testing aid: only sweep choice I's check finds it "
	  "(on --test-corrupt-rank, default 0): that choice ends ok false, stage verify" },
	{ "test-stall-choice", "I", false, "testing aid: sweep choice I hangs at its first timed "
	  "replay, as a hung graph would: the run fails with sweep_in_flight I" },
	{ "fingerprint", NULL, false, "print the modelled machine's fingerprint and exit" },
	{ "capabilities", NULL, false, "print the protocol extensions this probe speaks and exit "
	  "(ops-list, decisions, sweep, window, compute)" },
	{ "list-models", NULL, false, "print the built-in model names and exit" },
	{ "help", NULL, false, "this text" },
	{ "version", NULL, false, "print the version" },
};

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: nccltune-model-probe --model NAME|FILE [options]\n"
	        "A probe (protocol v1 and its extensions: per-size --ops, decisions, --sweep)\n"
	        "answering from a machine model: it reads NCCL_* from its environment as NCCL\n"
	        "would and prints one JSON report with \"source\": \"model\".\n"
	        "Model numbers are never measurements.\n\noptions:\n");
	for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
		char left[64];

		snprintf(left, sizeof left, "--%s%s%s", options[i].name, options[i].value ? " " : "",
		         options[i].value ? options[i].value : "");
		fprintf(f, "  %-28s %s\n", left, options[i].help);
	}
	fprintf(f, "\nbuilt-in models:");
	for (size_t i = 0; i < model_builtin_count(); i++)
		fprintf(f, " %s", model_builtin_name(i));
	fprintf(f,
	        "\n\nWithout --seed the noise is seeded from the clock and the process id (each run\n"
	        "differs, as on a real machine); with --seed N it is seeded from N, the model, the\n"
	        "NCCL_* variables and the workload, so a run repeats exactly and two configurations\n"
	        "never share a noise stream. NCCLTUNE_RUN (the tuner's 0-based run index, set by nccltune)\n"
	        "is mixed into --seed, so repeats within a session differ but replay exactly.\n"
	        "NCCL_TUNER_PLUGIN is loaded as the model's NCCL version loads it and asked for\n"
	        "every size (a plugin that does not load: a warning, NCCL's own choices); with it\n"
	        "set, the plugin and NCCLTUNE_TUNER_TABLE's content are mixed into the noise seed. In a\n"
	        "--sweep, one per-run noise offset is shared by every size and choice of the run,\n"
	        "and each replay draws its own jitter, in the file's seeded interleaved order.\n"
	        "exit status: 0 report ok, 1 failure report (stage says where), 2 bad arguments\n");
}

static int args_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print an args failure report (stdout) and the message (stderr); returns exit status 2. */
static int args_error(const char *fmt, ...)
{
	struct proto_report r;
	va_list ap;

	memset(&r, 0, sizeof r);
	r.ok = false;
	r.stage = PROTO_STAGE_ARGS;
	va_start(ap, fmt);
	vsnprintf(r.error, sizeof r.error, fmt, ap);
	va_end(ap);
	fprintf(stderr, "nccltune-model-probe: %s\n", r.error);
	if (proto_report_write(&r, stdout) != 0)
		fprintf(stderr, "nccltune-model-probe: cannot write the report to stdout\n");
	return PROTO_EXIT_USAGE;
}

static int parse_ulong(const char *s, unsigned long *out)
{
	char *end;

	if (!s || !*s || *s == '-')
		return -1;
	*out = strtoul(s, &end, 10);
	return *end ? -1 : 0;
}

/* Returns 0, or an exit status after printing the args failure report. */
static int parse_args(int argc, char **argv, struct args *a)
{
	memset(a, 0, sizeof *a);
	a->noise = 1.0;
	a->corrupt_rank = -1;
	a->corrupt_choice = -1;
	a->stall_choice = -1;
	proto_workload_defaults(&a->w);
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *eq, *value = NULL;
		char name[32], err[256];
		const struct option_row *row = NULL;
		size_t len;

		if (strncmp(arg, "--", 2) != 0)
			return args_error("unexpected argument '%s' (options start with --)", arg);
		eq = strchr(arg, '=');
		len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
		if (len == 0 || len >= sizeof name)
			return args_error("unknown option '%s'", arg);
		memcpy(name, arg + 2, len);
		name[len] = '\0';
		for (size_t k = 0; k < sizeof options / sizeof options[0]; k++)
			if (strcmp(options[k].name, name) == 0)
				row = &options[k];
		if (!row)
			return args_error("unknown option '--%s' (see --help)", name);
		if (row->value) {
			if (eq)
				value = eq + 1;
			else if (i + 1 < argc)
				value = argv[++i];
			else
				return args_error("--%s needs a value (%s)", name, row->value);
		} else if (eq) {
			return args_error("--%s takes no value", name);
		}

		if (row->workload) {
			if (proto_workload_option(&a->w, name, value, err, sizeof err) != 0)
				return args_error("%s", err);
		} else if (strcmp(name, "model") == 0) {
			a->model = value;
		} else if (strcmp(name, "seed") == 0) {
			if (parse_ulong(value, &a->seed) != 0)
				return args_error("--seed: '%s' is not a non-negative integer", value);
			a->have_seed = true;
		} else if (strcmp(name, "noise") == 0) {
			char *end;

			a->noise = strtod(value, &end);
			if (!*value || *end || !(a->noise >= 0 && a->noise <= 100))
				return args_error("--noise: '%s' is not a number in 0..100", value);
		} else if (strcmp(name, "test-corrupt-rank") == 0) {
			unsigned long v;

			if (parse_ulong(value, &v) != 0 || v > 1023)
				return args_error("--test-corrupt-rank: '%s' is not a rank in 0..1023", value);
			a->corrupt_rank = (int)v;
		} else if (strcmp(name, "test-corrupt-choice") == 0 ||
		           strcmp(name, "test-stall-choice") == 0) {
			unsigned long v;

			if (parse_ulong(value, &v) != 0 || v >= PROTO_MAX_CHOICES)
				return args_error("--%s: '%s' is not a choice in 0..%d", name, value,
				                  PROTO_MAX_CHOICES - 1);
			*(name[5] == 'c' ? &a->corrupt_choice : &a->stall_choice) = (int)v;
		} else if (strcmp(name, "sweep") == 0) {
			if (!*value)
				return args_error("--sweep: '' is not a file name");
			a->sweep_file = value;
		} else if (strcmp(name, "nccl") == 0) {
			if (!*value || !realpath(value, a->nccl_path))
				return args_error("--nccl %s: %s", value, *value ? strerror(errno)
				                                                 : "not a file name");
		} else if (strcmp(name, "explain") == 0) {
			a->explain = true;
		} else if (strcmp(name, "capabilities") == 0) {
			a->capabilities = true;
		} else if (strcmp(name, "fingerprint") == 0) {
			a->fingerprint = true;
		} else if (strcmp(name, "list-models") == 0) {
			a->list = true;
		} else if (strcmp(name, "help") == 0) {
			a->help = true;
		} else if (strcmp(name, "version") == 0) {
			a->version = true;
		}
	}
	if (!a->help && !a->version && !a->list && !a->capabilities && !a->model)
		return args_error("--model NAME|FILE is required");
	if (!a->help && !a->version && !a->list && !a->capabilities) {
		char err[256];

		if (proto_workload_validate(&a->w, err, sizeof err) != 0)
			return args_error("%s", err);
		if (a->sweep_file &&
		    sweep_load(a->sweep_file, &a->w, &a->sweep, err, sizeof err) != 0)
			return args_error("%s", err);
		if (a->corrupt_choice >= 0 && (size_t)a->corrupt_choice >= a->sweep.nchoices)
			return args_error("--test-corrupt-choice %d: %s", a->corrupt_choice,
			                  a->sweep.nchoices ? "there is no such choice in the sweep file"
			                                    : "needs --sweep");
		if (a->stall_choice >= 0 && (size_t)a->stall_choice >= a->sweep.nchoices)
			return args_error("--test-stall-choice %d: %s", a->stall_choice,
			                  a->sweep.nchoices ? "there is no such choice in the sweep file"
			                                    : "needs --sweep");
	}
	return 0;
}

/* With --seed, a tuner's run number (NCCLTUNE_RUN, set by nccltune for every probe
 * run) is mixed in, so repeated runs of one configuration in a session differ the way
 * real repeats do, and the whole session still replays exactly for the same seed. */
static unsigned long run_seed(unsigned long seed)
{
	const char *run = getenv("NCCLTUNE_RUN");
	unsigned long n;

	if (!run || parse_ulong(run, &n) != 0)
		return seed;
	return seed ^ (n * 0x9E3779B97F4A7C15ul + 0x7f4a7c15ul);
}

/* A sweep's choices, rounds and seed are part of what a run measures: its own stream. */
static unsigned long sweep_seed(unsigned long seed, const struct sweep_plan *p)
{
	char text[96];

	snprintf(text, sizeof text, "sweep %d %llu", p->rounds, (unsigned long long)p->seed);
	seed = model_noise_seed_mix(seed, text);
	for (size_t i = 0; i < p->nchoices; i++) {
		snprintf(text, sizeof text, "%zu %d %d %d", p->choices[i].bytes, p->choices[i].algo,
		         p->choices[i].proto, p->choices[i].ctas);
		seed = model_noise_seed_mix(seed, text);
	}
	return seed;
}

/* NCCLTUNE_TUNER_TABLE into the seed: the table's bytes (what the plugin applies), so
 * the same table in two session folders gives the same stream; its name when it cannot
 * be read (the plugin then warns and has no opinion). */
static unsigned long table_seed(unsigned long seed, const char *path)
{
	char e[256];
	size_t len = 0;
	char *text = path ? fs_read_file(path, (size_t)1 << 20, &len, e, sizeof e) : NULL;
	unsigned long out;

	if (!text || memchr(text, '\0', len))
		out = model_noise_seed_mix(seed, path);
	else
		out = model_noise_seed_mix(seed, text);
	free(text);
	return out;
}

/* Without --seed, runs differ as on a real machine: seed from the clock and the pid. */
static unsigned long clock_seed(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0) {
		ts.tv_sec = time(NULL);
		ts.tv_nsec = 0;
	}
	return (unsigned long)ts.tv_sec * 1000003ul ^ (unsigned long)ts.tv_nsec ^
	       ((unsigned long)getpid() << 16);
}

/* NCCL_CUMEM_ENABLE as NCCL reads it (an integer, strtoll base 0): set and 0. */
static bool cumem_off(void)
{
	const char *v = getenv("NCCL_CUMEM_ENABLE");
	char *end;

	return v && *v && strtoll(v, &end, 0) == 0;
}

/* Everything of a run after the model is loaded: the sweep's plugin handle, the
 * variables, the seeded noise, the run itself into *report. Returns 0, or an exit status
 * when the run could not start (its report already printed). */
static int measure(const struct args *a, const struct model *m, struct sweep_plugin *control,
                   struct model_tuner_cache *tuners, struct proto_report *report)
{
	const char *plugin = getenv("NCCL_TUNER_PLUGIN");
	struct model_env env;
	struct model_run run;
	gsl_rng *rng = NULL;
	char err[PROTO_ERROR_MAX];

	memset(&run, 0, sizeof run);
	/* the probe's own handle on nccltune's plugin, for the whole run (as nccltune-probe) */
	if (a->sweep.nchoices > 0 && sweep_plugin_open(plugin, control, err, sizeof err) != 0)
		return args_error("%s", err);
	model_env_read(model_getenv_process, NULL, &env);
	if (a->noise > 0) {
		unsigned long seed;

		gsl_set_error_handler_off();
		rng = gsl_rng_alloc(gsl_rng_mt19937);
		if (!rng) {
			fprintf(stderr, "nccltune-model-probe: out of memory (gsl_rng_alloc)\n");
			return PROTO_EXIT_FAILED;
		}
		seed = model_noise_seed(m, &env, &a->w, a->have_seed ? run_seed(a->seed) : clock_seed());
		if (plugin) {   /* the plugin and its table are part of the configuration */
			/* its file name, not its path: the same session from two checkouts (CI's
			 * clone, an installed tree) must see the same noise */
			const char *slash = strrchr(plugin, '/');

			seed = model_noise_seed_mix(seed, slash ? slash + 1 : plugin);
			seed = table_seed(seed, getenv("NCCLTUNE_TUNER_TABLE"));
		}
		if (a->sweep.nchoices > 0)
			seed = sweep_seed(seed, &a->sweep);
		gsl_rng_set(rng, seed);
	}
	run.m = m;
	run.env = &env;
	run.w = &a->w;
	run.tuner_plugin = plugin;
	run.tuners = tuners;
	run.noise = a->noise;
	run.rng = rng;
	run.explain = a->explain;
	run.corrupt_rank = a->corrupt_rank;
	run.cumem_off = cumem_off();
	run.sweep = &a->sweep;
	run.control = control;
	run.corrupt_choice = a->corrupt_choice;
	run.stall_choice = a->stall_choice;
	if (a->sweep.nchoices > 0)
		model_run_sweep(&run, report);
	else
		model_run_plain(&run, report);
	gsl_rng_free(rng);
	return 0;
}

int main(int argc, char **argv)
{
	struct args a;
	struct model *m = NULL;
	struct proto_report report;
	struct model_tuner_cache tuners;
	struct sweep_plugin control;
	char err[PROTO_ERROR_MAX];
	int rc;

	memset(&tuners, 0, sizeof tuners);
	memset(&report, 0, sizeof report);
	memset(&control, 0, sizeof control);
	rc = parse_args(argc, argv, &a);
	if (rc != 0)
		return rc;
	if (a.help) {
		usage(stdout);
		return 0;
	}
	if (a.version) {
		printf("nccltune-model-probe %s\n", NCCLTUNE_VERSION);
		return 0;
	}
	if (a.capabilities) {
		char *caps = proto_capabilities_format(MODEL_PROBE_CAPABILITIES);

		rc = 0;
		if (!caps || fputs(caps, stdout) < 0 || fflush(stdout) != 0) {
			fprintf(stderr, "nccltune-model-probe: cannot print the capabilities\n");
			rc = PROTO_EXIT_FAILED;
		}
		free(caps);
		return rc;
	}
	if (a.list) {
		for (size_t i = 0; i < model_builtin_count(); i++)
			printf("%s\n", model_builtin_name(i));
		return 0;
	}
	m = model_load(a.model, err, sizeof err);
	if (!m)
		return args_error("%s", err);

	if (a.fingerprint) {
		char *fp = model_fingerprint_json_nccl(m, a.nccl_path[0] ? a.nccl_path : NULL);

		rc = 0;
		if (!fp || printf("%s\n", fp) < 0 || fflush(stdout) != 0) {
			fprintf(stderr, "nccltune-model-probe: cannot print the fingerprint\n");
			rc = PROTO_EXIT_FAILED;
		}
		free(fp);
		goto out;
	}

	rc = measure(&a, m, &control, &tuners, &report);
	if (rc != 0)
		goto out;
	if (!report.ok)
		fprintf(stderr, "nccltune-model-probe: %s: %s\n", proto_stage_name(report.stage),
		        report.error);
	if (proto_report_write(&report, stdout) != 0) {
		fprintf(stderr, "nccltune-model-probe: cannot write the report to stdout\n");
		rc = PROTO_EXIT_FAILED;
		goto out;
	}
	rc = report.ok ? PROTO_EXIT_OK
	   : report.stage == PROTO_STAGE_ARGS ? PROTO_EXIT_USAGE : PROTO_EXIT_FAILED;
out:
	proto_report_clear(&report);
	model_tuner_cache_clear(&tuners);
	sweep_plugin_close(&control);
	model_destroy(m);
	return rc;
}
