/* main.c - the `nccltune` command: its tables and commands, over libnccltune's public API.
 *
 * Table-driven: one table of subcommands, one option table per subcommand (cli.h has
 * their rows); the same tables drive getopt_long (options.c) and generate --help and the
 * man page (help.c), so no help can miss an option. Exit codes are enum
 * nccltune_status. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "nccltune.h"
#include "nccltune_config.h"

static const struct opt run_opts[] = {
	{"probe", required_argument, "CMD", O_PROBE,
	 "probe command, split like a shell (no shell runs); e.g. 'mpirun -np 16 nccltune-probe'"},
	{"model", required_argument, "NAME", O_MODEL,
	 "tune a machine MODEL instead (nccltune-model-probe --model NAME); every figure is "
	 "labelled MODEL"},
	{"space", required_argument, "FILE", O_SPACE, "search space (nccltune-space/1); default: "
	 "protocol, algorithm, channels, buffer size, threads"},
	{"workload", required_argument, "FILE", O_WORKLOAD, "workload file (nccltune-workload/1)"},
	{"bytes", required_argument, "LIST", O_BYTES, "message sizes per rank, e.g. "
	 "43008,64K,1.5M,1G (default 43008)"},
	{"ops", required_argument, "K", O_OPS, "all-reduces of each size per step (default 122)"},
	{"dtype", required_argument, "T", O_DTYPE, "bf16, f16 or f32 (default bf16)"},
	{"guard", required_argument, "LIST", O_GUARD, "sizes that must not get slower, measured "
	 "in the baseline and final rounds only (default with per-size rules: 1M,16M,128M; "
	 "'none': no guard sizes)"},
	{"budget", required_argument, "N", O_BUDGET, "probe runs in all, baseline, retries and "
	 "final re-measurement included (default 60); with --resume, a larger N extends the "
	 "session"},
	{"time-limit", required_argument, "DURATION", O_TIME_LIMIT, "stop searching in time to "
	 "finish within DURATION (90s, 30m, 2h, 1h30m)"},
	{"seed", required_argument, "N", O_SEED, "random seed (default 1); same seed, same session"},
	{"strategy", required_argument, "S", O_STRATEGY, "bo (default), nm, random or grid"},
	{"timeout", required_argument, "SEC", O_TIMEOUT, "per probe run (default: 5 x the "
	 "baseline's time, at least 30 s; the baseline itself gets 300 s)"},
	{"out", required_argument, "DIR", O_OUT, "session folder: new, empty, or a session's "
	 "(default $XDG_STATE_HOME/nccltune/HOST-UTCSTAMP, else "
	 "~/.local/state/nccltune/HOST-UTCSTAMP)"},
	{"nccl", required_argument, "PATH", O_NCCL, "the libnccl.so.2 the server loads: every "
	 "probe run loads it (the probe's --nccl) and its fingerprint must say so; the result "
	 "holds for that library"},
	{"python", required_argument, "PY", O_PYTHON, "the server's interpreter: --nccl the NCCL "
	 "of its PyTorch wheel (site-packages/nvidia/nccl/lib/libnccl.so.2)"},
	{"ranks-per-gpu", required_argument, "K", O_RANKS_PER_GPU, "the rig: K ranks of one "
	 "communicator share each GPU (the probe's --ranks-per-gpu; NCCL 2.30, so with --nccl); "
	 "every figure is then of ranks sharing one GPU's SMs, not of a multi-GPU machine"},
	{"like", required_argument, "SERVER", O_LIKE, "measure as the server runs: sglang, vllm "
	 "(profiles/*.json) or a profile FILE; what it sets before NCCL starts is fixed for "
	 "every run, recorded, and repeated in the exports as 'set by the server'"},
	{"compute-us", required_argument, "US[,CTAS]", O_COMPUTE, "the server's step: a busy "
	 "kernel of US microseconds on CTAS CTAs (default one per SM) before every all-reduce "
	 "(the probe's --compute-us); every time is then the whole step, kernels included"},
	{"window", required_argument, "symmetric", O_WINDOW, "measure with symmetric windows "
	 "(the probe's --window symmetric; the server must turn on symmetric memory to match)"},
	{"warm-start", required_argument, "DIR", O_WARM, "re-measure an old session's best "
	 "configurations first (and, on the same GPUs, skip what failed there)"},
	{"try", required_argument, "CONFIG", O_TRY, "also measure your own configuration, e.g. "
	 "'NCCL_PROTO=LL NCCL_ALGO=Ring NCCL_MAX_NCHANNELS=2': right after the baseline and "
	 "again in the final rounds, so results.json gives its ratio to the baseline and to the "
	 "tuned best (repeatable; counts against the budget)"},
	{"try-file", required_argument, "FILE", O_TRY_FILE, "configurations to --try, one per "
	 "line ('#' starts a comment)"},
	{"resume", required_argument, "DIR", O_RESUME, "continue an interrupted session, or with "
	 "a larger --budget extend one (a finished one too); nothing measured is run again "
	 "(takes no other option but --budget, --quiet and --json)"},
	{"quiet", no_argument, NULL, O_QUIET, "no progress lines"},
	{"json", no_argument, NULL, O_JSON, "at the end, print one JSON object on stdout: status, "
	 "verdict, source, baseline, best env, gain with its interval, session folder (progress "
	 "stays on stderr)"},
	{"help", no_argument, NULL, O_HELP, "this help"},
	{NULL, 0, NULL, 0, NULL},
};

static const struct opt export_opts[] = {
	{"format", required_argument, "F", O_FORMAT, NULL},   /* help built from the formats */
	{"install", optional_argument, "PATH", O_INSTALL, "install it instead of printing it: "
	 "--format pth (the default) writes nccltune.pth and _nccltune_env.py into PY's own "
	 "site-packages (or the folder PATH), read by that interpreter alone; --format "
	 "sitecustomize merges the block into the sitecustomize.py PY imports (or PATH); "
	 "--format nccl-conf into $NCCL_CONF_FILE, else ~/.nccl.conf (or PATH). A changed "
	 "file's old text is kept as FILE.nccltune-bak"},
	{"bundle", required_argument, "DIR", O_BUNDLE, "write a self-contained bundle into the "
	 "folder DIR (absolute, as the server or a container sees it; created when missing): "
	 "nccl.env, env.sh, nccl.conf, sitecustomize.py and, for per-size rules, a copy of the "
	 "plugin and the table, named by DIR (docker run -v DIR:DIR:ro --env-file "
	 "DIR/nccl.env)"},
	{"python", required_argument, "PY", O_PYTHON, "the interpreter to install for "
	 "(default python3)"},
	{"system", no_argument, NULL, O_SYSTEM, "allow --install to change a system-wide "
	 "sitecustomize.py (not a virtual environment's own, or the distribution's) or the "
	 "site-packages of an interpreter that is not a virtual environment (pth)"},
	{"allow-model", no_argument, NULL, O_ALLOW_MODEL, "allow --install of a machine "
	 "model's result (its numbers are not measurements: never for production)"},
	{"allow-unproven", no_argument, NULL, O_ALLOW_UNPROVEN, "allow --install of a result not "
	 "shown to be faster than NCCL's defaults (verdict 'not shown faster': its gain's 95% "
	 "interval includes 1.00x)"},
	{"allow-old-nccl", no_argument, NULL, O_ALLOW_OLD_NCCL, "allow --install of per-size "
	 "rules for an interpreter whose site-packages hold an NCCL older than 2.24 (it ignores "
	 "them; for a server that loads another NCCL)"},
	{"help", no_argument, NULL, O_HELP, "this help"},
	{NULL, 0, NULL, 0, NULL},
};

static const struct opt uninstall_opts[] = {
	{"format", required_argument, "F", O_FORMAT, "what to remove: pth (the default), "
	 "sitecustomize or nccl-conf, found as export --install finds it"},
	{"python", required_argument, "PY", O_PYTHON, "the interpreter (default python3)"},
	{"system", no_argument, NULL, O_SYSTEM, "allow changing a system-wide sitecustomize.py"},
	{"help", no_argument, NULL, O_HELP, "this help"},
	{NULL, 0, NULL, 0, NULL},
};

static const struct opt retune_opts[] = {
	{"init", no_argument, NULL, O_INIT, "create STATE_DIR with current -> the --from session "
	 "(the one whose result is in use), then stop"},
	{"from", required_argument, "SESSION", O_FROM, "with --init: the session in use"},
	{"format", required_argument, "F", O_FORMAT, "how a re-tuned result is installed: pth (the "
	 "default), sitecustomize or nccl-conf, as export --install"},
	{"target", required_argument, "PATH", O_TARGET, "the file (or pth's folder) to install "
	 "into, as export --install=PATH"},
	{"python", required_argument, "PY", O_PYTHON, "the interpreter the server runs (default "
	 "python3)"},
	{"system", no_argument, NULL, O_SYSTEM, "allow a system-wide sitecustomize.py, or a pth "
	 "install for an interpreter that is not a virtual environment"},
	{"quiet", no_argument, NULL, O_QUIET, "no progress lines of the re-tuning session"},
	{"help", no_argument, NULL, O_HELP, "this help"},
	{NULL, 0, NULL, 0, NULL},
};

static const struct opt check_opts[] = {
	{"probe", required_argument, "CMD", O_PROBE, "probe to ask (default: the session's)"},
	{"model", required_argument, "NAME", O_MODEL, "ask nccltune-model-probe --model NAME"},
	{"help", no_argument, NULL, O_HELP, "this help"},
	{NULL, 0, NULL, 0, NULL},
};

static const struct opt verify_opts[] = {
	{"python", required_argument, "PY", O_PYTHON, "the server's interpreter: run as the server "
	 "runs it (its .pth files, its sitecustomize), NCCL started in it through PyTorch when a "
	 "GPU is visible"},
	{"env-file", required_argument, "FILE", O_ENV_FILE, "the env file the server gets (docker "
	 "--env-file, systemd EnvironmentFile=), added to this environment"},
	{"nccl", required_argument, "PATH", O_NCCL, "start this libnccl.so.2 instead of PyTorch's "
	 "(LD_PRELOAD)"},
	{"ranks", required_argument, "N", O_RANKS, "start NCCL with N ranks, 1 to 8 (default 1; "
	 "two ranks on one GPU need NCCL >= 2.30 and NCCL_MULTI_RANK_GPU_ENABLE=1)"},
	{"no-start", no_argument, NULL, O_NO_START, "never start NCCL, even with a GPU"},
	{"help", no_argument, NULL, O_HELP, "this help"},
	{NULL, 0, NULL, 0, NULL},
};

static const struct opt plain_opts[] = {
	{"help", no_argument, NULL, O_HELP, "this help"},
	{NULL, 0, NULL, 0, NULL},
};

static int cmd_run(const struct command *cmd, int argc, char **argv);
static int cmd_export(const struct command *cmd, int argc, char **argv);
static int cmd_uninstall(const struct command *cmd, int argc, char **argv);
static int cmd_check(const struct command *cmd, int argc, char **argv);
static int cmd_retune(const struct command *cmd, int argc, char **argv);
static int cmd_verify(const struct command *cmd, int argc, char **argv);
static int cmd_show(const struct command *cmd, int argc, char **argv);
static int cmd_report(const struct command *cmd, int argc, char **argv);

static const struct command commands[] = {
	{"run", "", "tune: run the probe per configuration, write the session folder", run_opts,
	 cmd_run},
	{"export", "SESSION_DIR|results.json", "print the tuned environment in a format, or "
	 "install it", export_opts, cmd_export},
	{"uninstall", "[PATH]", "remove what export --install put there (the .pth files, or "
	 "the block)", uninstall_opts, cmd_uninstall},
	{"check", "SESSION_DIR", "is this still the machine the session tuned? (exit 3 if not, "
	 "1 if it cannot measure)",
	 check_opts, cmd_check},
	{"retune", "STATE_DIR", "re-tune if the machine changed since STATE_DIR/current, install "
	 "a measured gain, relink (run it before the server takes the GPUs)", retune_opts,
	 cmd_retune},
	{"verify", "[SESSION_DIR]", "does the server run what was tuned? its environment, NCCL, "
	 "the plugin and its table, from their own log lines (exit 5 if not)", verify_opts,
	 cmd_verify},
	{"show", "SESSION_DIR", "print a session's summary", plain_opts, cmd_show},
	{"report", "SESSION_DIR", "write SESSION_DIR/report.html", plain_opts, cmd_report},
	{NULL, NULL, NULL, NULL, NULL},
};

/* Strict integer parsing: the whole string, within [lo, hi]. */
static int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* "90", "90s", "30m", "2h", "1h30m", "1.5h", "1d" -> seconds. */
static int parse_duration(const char *s, double *out)
{
	double total = 0;
	const char *p = s;

	if (!s || !*s)
		return -1;
	while (*p) {
		char *end;
		double v, mult = 1;

		if (*p == '-' || *p == '+' || *p == ' ')
			return -1;
		errno = 0;
		v = strtod(p, &end);
		if (end == p || errno || !isfinite(v) || v < 0)
			return -1;
		switch (*end) {
		case 's': mult = 1; end++; break;
		case 'm': mult = 60; end++; break;
		case 'h': mult = 3600; end++; break;
		case 'd': mult = 86400; end++; break;
		case '\0': if (p != s) return -1; break;   /* "1h30" is ambiguous */
		default: return -1;
		}
		total += v * mult;
		p = end;
	}
	if (total <= 0 || total > 365 * 86400.0)
		return -1;
	*out = total;
	return 0;
}

/* An error message of the library on stderr; it may hold what a probe or a file said,
 * so its control characters are escaped. */
static void print_error(const char *prefix, const char *msg)
{
	char clean[4 * 2048 + 1];

	fprintf(stderr, "%s%s\n", prefix, nccltune_printable(msg, clean, sizeof clean));
}

static int finish(nccltune_session *s, int rc)
{
	if (rc == NCCLTUNE_INTERRUPTED)
		print_error("", nccltune_session_error(s));
	else if (rc != NCCLTUNE_OK)
		print_error("nccltune: ", nccltune_session_error(s));
	nccltune_session_destroy(s);
	return rc;
}

/* The options of `run` that pass a string straight to a setter, in the order applied. */
static const struct {
	int id;
	int (*set)(nccltune_session *s, const char *value);
} run_string_setters[] = {
	{O_PROBE, nccltune_session_set_probe},
	{O_MODEL, nccltune_session_set_model},
	{O_SPACE, nccltune_session_set_space_file},
	{O_WORKLOAD, nccltune_session_set_workload_file},
	{O_STRATEGY, nccltune_session_set_strategy},
	{O_OUT, nccltune_session_set_out_dir},
	{O_WARM, nccltune_session_set_warm_start},
	{O_NCCL, nccltune_session_set_nccl},
	{O_RANKS_PER_GPU, nccltune_session_set_ranks_per_gpu},
	{O_PYTHON, nccltune_session_set_python},
	{O_LIKE, nccltune_session_set_like},
};

/* The numeric options of `run`: parsed here (a usage error names the option and the
 * value, kept in p->err), range-checked by the library's setters (their error is the
 * session's). */
static int apply_numbers(const struct command *cmd, struct parsed *p, nccltune_session *s)
{
	long n, ops = 122;
	double d;
	int rc = NCCLTUNE_OK;

	if (GIVEN(p, O_BYTES) || GIVEN(p, O_OPS) || GIVEN(p, O_DTYPE)) {
		if (GIVEN(p, O_OPS) && parse_long(VAL(p, O_OPS), 1, 1000000, &ops) != 0)
			return parsed_error(cmd, p, "--ops: '%s' is not an integer in 1..1000000",
			                    VAL(p, O_OPS));
		rc = nccltune_session_set_workload(s, VAL(p, O_BYTES), (int)ops, VAL(p, O_DTYPE));
	}
	if (rc == NCCLTUNE_OK && GIVEN(p, O_GUARD))
		rc = nccltune_session_set_guards(s, VAL(p, O_GUARD));
	if (rc == NCCLTUNE_OK && GIVEN(p, O_COMPUTE))
		rc = nccltune_session_set_compute(s, VAL(p, O_COMPUTE));
	if (rc == NCCLTUNE_OK && GIVEN(p, O_WINDOW))
		rc = nccltune_session_set_window(s, VAL(p, O_WINDOW));
	if (rc == NCCLTUNE_OK && GIVEN(p, O_BUDGET)) {
		if (parse_long(VAL(p, O_BUDGET), INT_MIN, INT_MAX, &n) != 0)
			return parsed_error(cmd, p, "--budget: '%s' is not an integer", VAL(p, O_BUDGET));
		rc = nccltune_session_set_budget(s, (int)n);
	}
	if (rc == NCCLTUNE_OK && GIVEN(p, O_TIME_LIMIT)) {
		if (parse_duration(VAL(p, O_TIME_LIMIT), &d) != 0)
			return parsed_error(cmd, p, "--time-limit: '%s' is not a duration (e.g. 90s, 30m, 2h, "
			                   "1h30m)", VAL(p, O_TIME_LIMIT));
		rc = nccltune_session_set_time_limit(s, d);
	}
	if (rc == NCCLTUNE_OK && GIVEN(p, O_SEED)) {
		const char *v = VAL(p, O_SEED);
		char *end;
		unsigned long long u;

		errno = 0;
		u = strtoull(v, &end, 10);
		if (!*v || *end || errno || v[0] == '-' || u > ULONG_MAX)
			return parsed_error(cmd, p, "--seed: '%s' is not a non-negative integer", v);
		rc = nccltune_session_set_seed(s, (unsigned long)u);
	}
	if (rc == NCCLTUNE_OK && GIVEN(p, O_TIMEOUT)) {
		if (parse_duration(VAL(p, O_TIMEOUT), &d) != 0)
			return parsed_error(cmd, p, "--timeout: '%s' is not a number of seconds",
			                   VAL(p, O_TIMEOUT));
		rc = nccltune_session_set_timeout(s, d);
	}
	return rc;
}

/* Does the command line ask for --json? Looked up word by word (before "--"), so that a
 * command line refused before it is parsed still answers in JSON. */
static bool wants_json(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--json") == 0)
			return true;
	return false;
}

/* `run`'s checks of the command line p as a whole. Returns NCCLTUNE_OK, or
 * NCCLTUNE_USAGE after a usage error (kept in p->err). */
static int run_combination(const struct command *cmd, int argc, char **argv, struct parsed *p)
{
	static const int settings[] = {O_PROBE, O_MODEL, O_SPACE, O_WORKLOAD, O_BYTES, O_OPS, O_GUARD,
	                               O_DTYPE, O_BUDGET, O_TIME_LIMIT, O_SEED, O_STRATEGY,
	                               O_TIMEOUT, O_OUT, O_WARM, O_TRY, O_TRY_FILE, O_NCCL,
	                               O_PYTHON, O_LIKE, O_COMPUTE, O_WINDOW, O_RANKS_PER_GPU};

	if (p->first_operand < argc)
		return parsed_error(cmd, p, "unexpected argument '%s'", argv[p->first_operand]);
	if (GIVEN(p, O_PROBE) && GIVEN(p, O_MODEL))
		return parsed_error(cmd, p, "--probe and --model are exclusive");
	if (GIVEN(p, O_NCCL) && GIVEN(p, O_PYTHON))
		return parsed_error(cmd, p, "--nccl and --python are exclusive (--python finds --nccl)");
	if (GIVEN(p, O_WORKLOAD) && (GIVEN(p, O_BYTES) || GIVEN(p, O_OPS) || GIVEN(p, O_DTYPE)))
		return parsed_error(cmd, p, "--workload and --bytes/--ops/--dtype are exclusive");
	/* --resume DIR --budget N extends the session (nccltune_session_extend) */
	for (size_t i = 0; GIVEN(p, O_RESUME) && i < sizeof settings / sizeof settings[0]; i++)
		if (GIVEN(p, settings[i]) && settings[i] != O_BUDGET)
			return parsed_error(cmd, p, "--resume takes no --%s: the journal holds the "
			                    "session's settings", opt_name(cmd->opts, settings[i]));
	return NCCLTUNE_OK;
}

/* Set up session s from the command line p (a new session's settings, or --resume).
 * Returns an nccltune_status; a usage error of the CLI is kept in p->err, one of the
 * library is the session's error. */
static int run_setup(const struct command *cmd, struct parsed *p, nccltune_session *s)
{
	int rc = NCCLTUNE_OK;

	if (GIVEN(p, O_QUIET))
		nccltune_session_set_progress(s, NULL);
	if (GIVEN(p, O_RESUME)) {
		long n = 0;

		if (GIVEN(p, O_BUDGET) && parse_long(VAL(p, O_BUDGET), INT_MIN, INT_MAX, &n) != 0)
			return parsed_error(cmd, p, "--budget: '%s' is not an integer", VAL(p, O_BUDGET));
		rc = nccltune_session_resume(s, VAL(p, O_RESUME));
		if (rc == NCCLTUNE_OK && GIVEN(p, O_BUDGET))
			rc = nccltune_session_extend(s, (int)n);
		return rc;
	}
	for (size_t i = 0; i < sizeof run_string_setters / sizeof run_string_setters[0]; i++)
		if (rc == NCCLTUNE_OK && GIVEN(p, run_string_setters[i].id))
			rc = run_string_setters[i].set(s, VAL(p, run_string_setters[i].id));
	/* --try and --try-file in command-line order */
	for (int i = 0; rc == NCCLTUNE_OK && i < p->nseq; i++)
		rc = p->seq[i].id == O_TRY ? nccltune_session_add_try(s, p->seq[i].val)
		                           : nccltune_session_add_try_file(s, p->seq[i].val);
	if (rc == NCCLTUNE_OK)
		rc = apply_numbers(cmd, p, s);
	return rc;
}

/* `run`: with --json, one object on stdout whatever the outcome (docs/formats.md, "Run
 * summary"): the session's, or for a command line refused before the session was set
 * up, status 2 and the message. */
static int cmd_run(const struct command *cmd, int argc, char **argv)
{
	struct parsed p;
	nccltune_session *s = NULL;
	bool json = wants_json(argc, argv);
	int rc = parse_options(cmd, argc, argv, &p);

	if (rc > 0)
		return NCCLTUNE_OK;
	rc = rc < 0 ? NCCLTUNE_USAGE : run_combination(cmd, argc, argv, &p);
	if (rc == NCCLTUNE_OK) {
		s = nccltune_session_create();
		if (!s) {
			snprintf(p.err, sizeof p.err, "out of memory");
			fputs("nccltune: out of memory\n", stderr);
			rc = NCCLTUNE_ERROR;
		}
	}
	if (s) {
		p.err[0] = '\0';
		rc = run_setup(cmd, &p, s);
		if (rc == NCCLTUNE_OK)
			rc = nccltune_session_run(s);
	}
	if (json && (s && !p.err[0] ? nccltune_session_summary_json(s, rc, stdout)
	                            : nccltune_summary_json_error(rc, p.err, stdout)) != NCCLTUNE_OK) {
		fputs("nccltune: --json: writing the summary to stdout failed\n", stderr);
		if (rc == NCCLTUNE_OK)
			rc = NCCLTUNE_ERROR;
	}
	if (!s)
		return rc;
	if (p.err[0]) {
		/* the CLI has said why */
		nccltune_session_destroy(s);
		return rc;
	}
	return finish(s, rc);
}

/* The single SESSION_DIR operand of a command. */
static int one_operand(const struct command *cmd, int argc, char **argv, int first,
                       const char **out)
{
	if (first >= argc)
		return usage_error(cmd, "missing %s", cmd->operands);
	if (first + 1 < argc)
		return usage_error(cmd, "unexpected argument '%s'", argv[first + 1]);
	*out = argv[first];
	return NCCLTUNE_OK;
}

static int report_error(int rc, const char *err)
{
	if (rc != NCCLTUNE_OK && rc != NCCLTUNE_CHANGED)
		print_error("nccltune: ", err[0] ? err : "failed");
	return rc;
}

/* The install options of a parsed command line (export --install, uninstall). */
static struct nccltune_install_options install_options(const struct parsed *p,
                                                       const char *target)
{
	struct nccltune_install_options o;

	memset(&o, 0, sizeof o);
	o.format = VAL(p, O_FORMAT);
	o.target = target;
	o.python = VAL(p, O_PYTHON);
	o.system = GIVEN(p, O_SYSTEM);
	o.allow_model = GIVEN(p, O_ALLOW_MODEL);
	o.allow_unproven = GIVEN(p, O_ALLOW_UNPROVEN);
	o.allow_old_nccl = GIVEN(p, O_ALLOW_OLD_NCCL);
	o.notes = stdout;
	return o;
}

static bool installable(const char *fmt)
{
	return !fmt || strcmp(fmt, "pth") == 0 || strcmp(fmt, "sitecustomize") == 0 ||
	       strcmp(fmt, "nccl-conf") == 0;
}

/* Is path a session's result: a folder that holds results.json, or a results.json? */
static bool is_result(const char *path)
{
	char p[PATH_MAX + 16];
	struct stat st;
	size_t n = strlen(path);

	if (n >= 12 && strcmp(path + n - 12, "results.json") == 0)
		return stat(path, &st) == 0 && S_ISREG(st.st_mode);
	snprintf(p, sizeof p, "%s/results.json", path);
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* export --install's two operands a b (the session and where to install, in either
 * order): *session the one that holds a results.json, *target the other. Returns
 * NCCLTUNE_OK, or a usage error when neither or both hold a results.json. */
static int install_operands(const struct command *cmd, const char *a, const char *b,
                            const char **target, const char **session)
{
	bool ra = is_result(a), rb = is_result(b);

	if (ra == rb)
		return usage_error(cmd, ra ? "--install: '%s' and '%s' are both sessions: give the "
		                   "place to install into as --install=PATH"
		                   : "--install: neither '%s' nor '%s' holds a results.json: give "
		                   "--install=PATH SESSION_DIR", a, b);
	*session = ra ? a : b;
	*target = ra ? b : a;
	return NCCLTUNE_OK;
}

/* export --bundle DIR SESSION: every env-style format into DIR (nccltune_export_bundle). */
static int cmd_export_bundle(const struct command *cmd, const struct parsed *p, int argc,
                             char **argv)
{
	const char *path = NULL;
	char err[2048] = "";
	int rc;

	if (GIVEN(p, O_FORMAT) || GIVEN(p, O_INSTALL) || GIVEN(p, O_PYTHON) || GIVEN(p, O_SYSTEM) ||
	    GIVEN(p, O_ALLOW_MODEL) || GIVEN(p, O_ALLOW_UNPROVEN) ||
	    GIVEN(p, O_ALLOW_OLD_NCCL))
		return usage_error(cmd, "--bundle writes every env-style format (nccl.env, env.sh, "
		                   "nccl.conf, sitecustomize.py) into its folder: no --format, "
		                   "--install or install option goes with it");
	rc = one_operand(cmd, argc, argv, p->first_operand, &path);
	if (rc)
		return rc;
	rc = nccltune_export_bundle(path, VAL(p, O_BUNDLE), stdout, err, sizeof err);
	fflush(stdout);
	return report_error(rc, err);
}

static int cmd_export(const struct command *cmd, int argc, char **argv)
{
	struct parsed p;
	struct nccltune_install_options o;
	const char *fmt, *path = NULL, *target = NULL;
	char err[2048] = "", written[4096] = "";
	bool known = false;
	int rc = parse_options(cmd, argc, argv, &p), first;

	if (rc)
		return rc < 0 ? NCCLTUNE_USAGE : NCCLTUNE_OK;
	fmt = VAL(&p, O_FORMAT);
	first = p.first_operand;
	if (GIVEN(&p, O_BUNDLE))
		return cmd_export_bundle(cmd, &p, argc, argv);
	if (GIVEN(&p, O_INSTALL)) {
		if (!installable(fmt))
			return usage_error(cmd, "--install writes the pth files, or the sitecustomize or "
			                   "the nccl-conf block; --format %s cannot be installed", fmt);
		if (fmt && strcmp(fmt, "nccl-conf") == 0 && GIVEN(&p, O_PYTHON))
			return usage_error(cmd, "--python only goes with a pth or sitecustomize install");
		target = VAL(&p, O_INSTALL);
		/* "--install PATH SESSION" or "--install SESSION PATH": getopt only attaches an
		 * optional value given as --install=PATH, so with two operands the session is
		 * the one that holds a results.json, and PATH the other. */
		if (!target && argc - first == 2) {
			rc = install_operands(cmd, argv[first], argv[first + 1], &target, &path);
			if (rc)
				return rc;
		}
	} else if (GIVEN(&p, O_PYTHON) || GIVEN(&p, O_SYSTEM) || GIVEN(&p, O_ALLOW_MODEL) ||
	           GIVEN(&p, O_ALLOW_UNPROVEN) || GIVEN(&p, O_ALLOW_OLD_NCCL)) {
		return usage_error(cmd, "--python, --system, --allow-model, --allow-unproven and "
		                   "--allow-old-nccl only go with --install");
	} else if (!fmt) {
		fprintf(stderr, "nccltune export: missing --format (one of ");
		print_formats(stderr);
		fprintf(stderr, ")\nTry 'nccltune export --help'.\n");
		return NCCLTUNE_USAGE;
	} else if (strcmp(fmt, "pth") == 0) {
		return usage_error(cmd, "--format pth is installed, not printed: use --install (its "
		                   "module is the sitecustomize export)");
	}
	if (fmt && strcmp(fmt, "pth") != 0) {
		for (size_t i = 0; nccltune_export_formats[i] && !known; i++)
			known = strcmp(fmt, nccltune_export_formats[i]) == 0;
		if (!known) {
			fprintf(stderr, "nccltune export: unknown format '%s' (one of ", fmt);
			print_formats(stderr);
			fprintf(stderr, ")\n");
			return NCCLTUNE_USAGE;
		}
	}
	if (!path) {
		rc = one_operand(cmd, argc, argv, first, &path);
		if (rc)
			return rc;
	}
	if (GIVEN(&p, O_INSTALL)) {
		o = install_options(&p, target);
		rc = nccltune_install(path, &o, written, sizeof written, err, sizeof err);
		if (rc == NCCLTUNE_OK)
			printf("installed the tuned environment into %s\n", written);
		fflush(stdout);
		return report_error(rc, err);
	}
	rc = nccltune_export(path, fmt, stdout, err, sizeof err);
	if (fflush(stdout) != 0 && rc == NCCLTUNE_OK) {
		snprintf(err, sizeof err, "writing to stdout failed: %s", strerror(errno));
		rc = NCCLTUNE_ERROR;
	}
	return report_error(rc, err);
}

static int cmd_uninstall(const struct command *cmd, int argc, char **argv)
{
	struct parsed p;
	struct nccltune_install_options o;
	char err[2048] = "", written[4096] = "";
	const char *fmt;
	int rc = parse_options(cmd, argc, argv, &p);

	if (rc)
		return rc < 0 ? NCCLTUNE_USAGE : NCCLTUNE_OK;
	fmt = VAL(&p, O_FORMAT);
	if (!installable(fmt))
		return usage_error(cmd, "--format %s is never installed (pth, sitecustomize, "
		                   "nccl-conf)", fmt);
	if (argc - p.first_operand > 1)
		return usage_error(cmd, "unexpected argument '%s'", argv[p.first_operand + 1]);
	o = install_options(&p, p.first_operand < argc ? argv[p.first_operand] : NULL);
	rc = nccltune_uninstall(&o, written, sizeof written, err, sizeof err);
	if (rc == NCCLTUNE_OK && written[0])
		printf("removed nccltune's environment from %s\n", written);
	fflush(stdout);
	return report_error(rc, err);
}

static int cmd_check(const struct command *cmd, int argc, char **argv)
{
	struct parsed p;
	const char *dir, *probe = NULL;
	char err[2048] = "", model_cmd[PATH_MAX + 256];
	int rc = parse_options(cmd, argc, argv, &p);

	if (rc)
		return rc < 0 ? NCCLTUNE_USAGE : NCCLTUNE_OK;
	if (GIVEN(&p, O_PROBE) && GIVEN(&p, O_MODEL))
		return usage_error(cmd, "--probe and --model are exclusive");
	rc = one_operand(cmd, argc, argv, p.first_operand, &dir);
	if (rc)
		return rc;
	if (GIVEN(&p, O_PROBE))
		probe = VAL(&p, O_PROBE);
	if (GIVEN(&p, O_MODEL)) {
		rc = nccltune_probe_command(VAL(&p, O_MODEL), model_cmd, sizeof model_cmd, err,
		                            sizeof err);
		if (rc)
			return report_error(rc, err);
		probe = model_cmd;
	}
	rc = nccltune_check(dir, probe, stdout, err, sizeof err);
	fflush(stdout);
	return report_error(rc, err);
}

static int cmd_verify(const struct command *cmd, int argc, char **argv)
{
	struct parsed p;
	struct nccltune_verify_options o;
	char err[2048] = "";
	long ranks = 0;
	int rc = parse_options(cmd, argc, argv, &p);

	if (rc)
		return rc < 0 ? NCCLTUNE_USAGE : NCCLTUNE_OK;
	memset(&o, 0, sizeof o);
	if (p.first_operand < argc)
		rc = one_operand(cmd, argc, argv, p.first_operand, &o.session);
	if (rc)
		return rc;
	if (GIVEN(&p, O_RANKS) && parse_long(VAL(&p, O_RANKS), 1, 8, &ranks) != 0)
		return usage_error(cmd, "--ranks: a whole number from 1 to 8");
	o.python = GIVEN(&p, O_PYTHON) ? VAL(&p, O_PYTHON) : NULL;
	o.env_file = GIVEN(&p, O_ENV_FILE) ? VAL(&p, O_ENV_FILE) : NULL;
	o.nccl = GIVEN(&p, O_NCCL) ? VAL(&p, O_NCCL) : NULL;
	o.ranks = (int)ranks;
	o.no_start = GIVEN(&p, O_NO_START);
	if (o.nccl && !o.python)
		return usage_error(cmd, "--nccl needs --python (NCCL is started in the interpreter)");
	rc = nccltune_verify(&o, stdout, err, sizeof err);
	fflush(stdout);
	return rc == NCCLTUNE_NOT_DEPLOYED ? rc : report_error(rc, err);
}

static int cmd_retune(const struct command *cmd, int argc, char **argv)
{
	struct parsed p;
	struct nccltune_retune_options o;
	const char *state;
	char err[2048] = "";
	int rc = parse_options(cmd, argc, argv, &p);

	if (rc)
		return rc < 0 ? NCCLTUNE_USAGE : NCCLTUNE_OK;
	rc = one_operand(cmd, argc, argv, p.first_operand, &state);
	if (rc)
		return rc;
	if (GIVEN(&p, O_INIT) != GIVEN(&p, O_FROM))
		return usage_error(cmd, "--init and --from SESSION go together");
	if (!installable(VAL(&p, O_FORMAT)))
		return usage_error(cmd, "--format %s cannot be installed (pth, sitecustomize, "
		                   "nccl-conf)", VAL(&p, O_FORMAT));
	memset(&o, 0, sizeof o);
	o.init_from = VAL(&p, O_FROM);
	o.install = install_options(&p, VAL(&p, O_TARGET));
	o.progress = GIVEN(&p, O_QUIET) ? NULL : stderr;
	rc = nccltune_retune(state, &o, stdout, err, sizeof err);
	fflush(stdout);
	return report_error(rc, err);
}

/* Parse a command that takes no options but --help, and one session folder. Returns
 * -1 with *dir set to go on, else the exit status to return at once. */
static int session_dir_operand(const struct command *cmd, int argc, char **argv,
                               const char **dir)
{
	struct parsed p;
	int rc = parse_options(cmd, argc, argv, &p);

	if (rc)
		return rc < 0 ? NCCLTUNE_USAGE : NCCLTUNE_OK;
	rc = one_operand(cmd, argc, argv, p.first_operand, dir);
	return rc ? rc : -1;
}

static int cmd_show(const struct command *cmd, int argc, char **argv)
{
	const char *dir;
	char err[2048] = "";
	int rc = session_dir_operand(cmd, argc, argv, &dir);

	if (rc >= 0)
		return rc;
	rc = nccltune_show(dir, stdout, err, sizeof err);
	fflush(stdout);
	return report_error(rc, err);
}

static int cmd_report(const struct command *cmd, int argc, char **argv)
{
	const char *dir;
	char err[2048] = "";
	int rc = session_dir_operand(cmd, argc, argv, &dir);

	if (rc >= 0)
		return rc;
	rc = nccltune_report_write(dir, err, sizeof err);
	if (rc == NCCLTUNE_OK)
		printf("wrote %s/report.html\n", dir);
	return report_error(rc, err);
}

/* A usage error for a word that is no command: the nearest command when one is near
 * (a command is never taken by a prefix), else the list. */
static int unknown_command(const char *word)
{
	const struct command *near = NULL;
	size_t best = 3;

	for (const struct command *c = commands; c->name; c++) {
		size_t d = name_distance(word, c->name);

		if (d < best) {
			best = d;
			near = c;
		}
	}
	if (near)
		return usage_error(NULL, "unknown command '%s'; did you mean '%s'?", word, near->name);
	return usage_error(NULL, "unknown command '%s' (run, export, uninstall, check, retune, "
	                   "show, report)", word);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage_error(NULL, "missing command (run, export, uninstall, check, retune, "
		                   "show, report)");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		if (argc == 3 && strcmp(argv[1], "help") == 0 && strcmp(argv[2], "--man") == 0) {
			man_page(commands, stdout);
			return fflush(stdout) == 0 ? NCCLTUNE_OK : NCCLTUNE_ERROR;
		}
		if (argc > 2 && strcmp(argv[1], "help") == 0) {
			for (const struct command *c = commands; c->name; c++) {
				if (strcmp(c->name, argv[2]) == 0) {
					command_help(c, stdout);
					return NCCLTUNE_OK;
				}
			}
			return unknown_command(argv[2]);
		}
		main_help(commands, stdout);
		return NCCLTUNE_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("nccltune %s\n", NCCLTUNE_VERSION);
		return NCCLTUNE_OK;
	}
	for (const struct command *c = commands; c->name; c++)
		if (strcmp(c->name, argv[1]) == 0)
			return c->fn(c, argc - 1, argv + 1);
	return unknown_command(argv[1]);
}
