/* main.c - the `nccltune` command: parse options and call libnccltune's public API.
 *
 * Table-driven: one table of subcommands, one option table per subcommand; the same
 * tables drive getopt_long and generate --help, so the help can't miss an option.
 * Exit codes are enum nccltune_status (listed by --help). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nccltune.h"
#include "nccltune_config.h"

enum opt_id {
	O_HELP = 1000, O_PROBE, O_MODEL, O_SPACE, O_WORKLOAD, O_BYTES, O_OPS, O_DTYPE, O_GUARD,
	O_BUDGET, O_TIME_LIMIT, O_SEED, O_STRATEGY, O_TIMEOUT, O_OUT, O_WARM, O_RESUME,
	O_QUIET, O_FORMAT, O_INSTALL, O_PYTHON, O_TRY, O_TRY_FILE, O_SYSTEM, O_ALLOW_MODEL,
	O_INIT, O_FROM, O_TARGET, O_JSON, O_NCCL, O_LIKE, O_COMPUTE, O_WINDOW,
	O_END   /* one past the last: sizes the tables below */
};

/* Options that may be given more than once; every occurrence is kept, in order. */
static const int repeatable[] = {O_TRY, O_TRY_FILE};

struct opt {
	const char *name;
	int has_arg;            /* no_argument, required_argument, optional_argument */
	const char *metavar;
	int id;
	const char *help;
};

struct command {
	const char *name;
	const char *operands;   /* synopsis after the options */
	const char *summary;
	const struct opt *opts;
	int (*fn)(const struct command *cmd, int argc, char **argv);
};

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
	 "final re-measurement included (default 60)"},
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
	{"resume", required_argument, "DIR", O_RESUME, "continue an interrupted session; nothing "
	 "measured is run again (takes no other option but --quiet and --json)"},
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
	{"python", required_argument, "PY", O_PYTHON, "the interpreter to install for "
	 "(default python3)"},
	{"system", no_argument, NULL, O_SYSTEM, "allow --install to change a system-wide "
	 "sitecustomize.py (not a virtual environment's own, or the distribution's) or the "
	 "site-packages of an interpreter that is not a virtual environment (pth)"},
	{"allow-model", no_argument, NULL, O_ALLOW_MODEL, "allow --install of a machine "
	 "model's result (its numbers are not measurements: never for production)"},
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

static const struct opt plain_opts[] = {
	{"help", no_argument, NULL, O_HELP, "this help"},
	{NULL, 0, NULL, 0, NULL},
};

static int cmd_run(const struct command *cmd, int argc, char **argv);
static int cmd_export(const struct command *cmd, int argc, char **argv);
static int cmd_uninstall(const struct command *cmd, int argc, char **argv);
static int cmd_check(const struct command *cmd, int argc, char **argv);
static int cmd_retune(const struct command *cmd, int argc, char **argv);
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
	{"show", "SESSION_DIR", "print a session's summary", plain_opts, cmd_show},
	{"report", "SESSION_DIR", "write SESSION_DIR/report.html", plain_opts, cmd_report},
	{NULL, NULL, NULL, NULL, NULL},
};

/* The exit codes, and the commands that return each ("" for every command). */
static const struct { int code; const char *meaning; const char *commands; } exit_codes[] = {
	{NCCLTUNE_OK, "success", ""},
	{NCCLTUNE_OK, "the machine is unchanged", " check "},
	{NCCLTUNE_OK, "nothing to do, or re-tuned", " retune "},
	{NCCLTUNE_ERROR, "runtime failure: I/O, a probe that cannot be started or finds no "
	 "usable GPU, a folder in use by another nccltune", ""},
	{NCCLTUNE_ERROR, "cannot measure: the probe fails, or sees no GPU where the session "
	 "had some", " check retune "},
	{NCCLTUNE_USAGE, "bad input: options, space, workload, results or journal files; a "
	 "probe that refuses its command line; a folder that is not yours alone", ""},
	{NCCLTUNE_CHANGED, "the machine's fingerprint changed (driver, CUDA, NCCL, GPUs or "
	 "links)", " check "},
	{NCCLTUNE_NO_CONFIG, "the session ended without a single working configuration",
	 " run "},
	{NCCLTUNE_INTERRUPTED, "interrupted (SIGINT/SIGTERM); resume with nccltune run "
	 "--resume DIR", " run retune "},
};

/* Does exit code row i apply to command name (NULL: to any)? */
static bool exit_code_of(size_t i, const char *name)
{
	char word[32];

	if (!name || !exit_codes[i].commands[0])
		return true;
	snprintf(word, sizeof word, " %s ", name);
	return strstr(exit_codes[i].commands, word) != NULL;
}

static void print_wrapped_at(FILE *f, const char *text, size_t indent);

/* The exit codes command name returns (NULL: all of them). */
static void print_exit_codes(FILE *f, const char *name)
{
	int last = -1;

	fputs("\nExit codes:\n", f);
	for (size_t i = 0; i < sizeof exit_codes / sizeof exit_codes[0]; i++) {
		char text[512];

		if (!exit_code_of(i, name))
			continue;
		/* a row for some commands only says which, in the list of all */
		if (!name && exit_codes[i].commands[0]) {
			size_t k = 0;

			for (const char *c = exit_codes[i].commands + 1; c[1] && k + 3 < sizeof text; c++)
				if (*c != ' ')
					text[k++] = *c;
				else if (k + 3 < sizeof text) {
					text[k++] = ',';
					text[k++] = ' ';
				}
			snprintf(text + k, sizeof text - k, ": %s", exit_codes[i].meaning);
		} else
			snprintf(text, sizeof text, "%s", exit_codes[i].meaning);
		if (exit_codes[i].code == last)
			fputs("       ", f);
		else
			fprintf(f, "  %3d  ", exit_codes[i].code);
		last = exit_codes[i].code;
		print_wrapped_at(f, text, 7);
	}
}

static void print_formats(FILE *f)
{
	for (size_t i = 0; nccltune_export_formats[i]; i++)
		fprintf(f, "%s%s", i ? ", " : "", nccltune_export_formats[i]);
}

/* Print text from column indent (the cursor is there), wrapped at 79 columns. */
static void print_wrapped_at(FILE *f, const char *text, size_t indent)
{
	const size_t width = 79;
	size_t col = indent;
	bool line_start = true;
	const char *p = text;

	while (*p) {
		const char *sp = strchr(p, ' ');
		size_t wl = sp ? (size_t)(sp - p) : strlen(p);

		if (!line_start && col + 1 + wl > width) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
			line_start = true;
		}
		if (!line_start) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", (int)wl, p);
		col += wl;
		line_start = false;
		p += wl;
		while (*p == ' ')
			p++;
	}
	fputc('\n', f);
}

/* The help text of option o of command cmd, into buf: its row's, or for those built
 * from a list (export's formats, the built-in models) the list. */
static const char *option_text(const struct command *cmd, const struct opt *o, char *buf,
                               size_t len)
{
	size_t used = 0;

	if (o->id == O_FORMAT && !o->help) {
		int k = snprintf(buf, len, "what to print: ");

		used = k > 0 ? (size_t)k : 0;
		for (size_t i = 0; nccltune_export_formats[i] && used < len; i++) {
			k = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
			             nccltune_export_formats[i]);
			used += k > 0 ? (size_t)k : 0;
		}
		if (used < len)
			snprintf(buf + used, len - used, "; with --install: pth (the default), "
			         "sitecustomize or nccl-conf");
		return buf;
	}
	if (o->id == O_MODEL) {
		snprintf(buf, len, "%s; built in: %s, or a model FILE", o->help, NCCLTUNE_MODELS);
		return buf;
	}
	(void)cmd;
	return o->help;
}

static void print_option(FILE *f, const struct command *cmd, const struct opt *o)
{
	char left[64], text[1024];

	if (o->has_arg == required_argument)
		snprintf(left, sizeof left, "--%s %s", o->name, o->metavar);
	else if (o->has_arg == optional_argument)
		snprintf(left, sizeof left, "--%s [%s]", o->name, o->metavar);
	else
		snprintf(left, sizeof left, "--%s", o->name);
	fprintf(f, "  %-24s ", left);
	print_wrapped_at(f, option_text(cmd, o, text, sizeof text), 27);
}

static void command_help(const struct command *cmd, FILE *f)
{
	char summary[512];

	snprintf(summary, sizeof summary, "%s.", cmd->summary);
	fprintf(f, "Usage: nccltune %s [OPTIONS] %s\n", cmd->name, cmd->operands);
	print_wrapped_at(f, summary, 0);
	fputs("\nOptions:\n", f);
	for (const struct opt *o = cmd->opts; o->name; o++)
		print_option(f, cmd, o);
	if (cmd->fn == cmd_run)
		fputs("\nWith neither --probe nor --model, nccltune tunes the real GPUs with\n"
		      "nccltune-probe when a GPU is visible (a /dev/nvidia* node or nvidia-smi -L);\n"
		      "otherwise it says so loudly and tunes the built-in MODEL pcie-gen5-8gpu, a\n"
		      "stand-in labelled MODEL in every output, never a measurement.\n"
		      "--workload and --bytes/--ops/--dtype are exclusive; so are --probe and --model.\n"
		      "Variables already set in your environment that the space searches or fixes\n"
		      "are pinned: passed through, never overridden, dropped from the search.\n"
		      "A --try outside the space (a variable it does not search, a value that is\n"
		      "not one of its levels) runs with exactly its variables; it may win.\n",
		      f);
	print_exit_codes(f, cmd->name);
}

static void main_help(FILE *f)
{
	fprintf(f, "Usage: nccltune COMMAND [OPTIONS] ...\n"
	        "Tune NCCL's small all-reduce latency: run a probe per configuration, prune what\n"
	        "crashes, hangs or computes wrong sums, and export the fastest environment.\n\n"
	        "Commands (nccltune COMMAND --help: the command's options):\n");
	for (const struct command *c = commands; c->name; c++) {
		fprintf(f, "  %-9s ", c->name);
		print_wrapped_at(f, c->summary, 12);
	}
	fputs("\nGlobal options:\n  --help, -h               this help\n"
	      "  --version                the version\n", f);
	fputs("\nExamples:\n  nccltune run --budget 60\n"
	      "  nccltune run --model pcie-gen5-8gpu --budget 40 --out model-demo\n"
	      "  nccltune run --resume model-demo\n"
	      "  nccltune show model-demo\n"
	      "  nccltune export --install --python /opt/venv/bin/python SESSION_DIR\n"
	      "  nccltune retune --init /var/lib/nccltune --from SESSION_DIR\n", f);
	print_exit_codes(f, NULL);
}

/* A usage error: "nccltune CMD: MESSAGE" and the help hint on stderr; the message is
 * also kept in keep (when not NULL) for --json. Returns NCCLTUNE_USAGE. */
static int usage_verror(const struct command *cmd, char *keep, size_t keeplen, const char *fmt,
                        va_list ap)
{
	va_list again;

	va_copy(again, ap);
	fprintf(stderr, "nccltune%s%s: ", cmd ? " " : "", cmd ? cmd->name : "");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nTry 'nccltune %s%s--help'.\n", cmd ? cmd->name : "", cmd ? " " : "");
	if (keep && keeplen)
		vsnprintf(keep, keeplen, fmt, again);
	va_end(again);
	return NCCLTUNE_USAGE;
}

static int usage_error(const struct command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int usage_error(const struct command *cmd, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = usage_verror(cmd, NULL, 0, fmt, ap);
	va_end(ap);
	return rc;
}

/* Edit distance of a and b (at most 63 characters each; longer ones are far). */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[64], prev, cur;

	if (la > 63 || lb > 63)
		return 64;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev + (a[i - 1] != b[j - 1]);

			cur = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;
			prev = row[j];
			row[j] = sub < cur ? sub : cur;
		}
	}
	return row[lb];
}

/* How far word is from name for "did you mean": the edit distance, or 1 when one is a
 * prefix of the other (at least 2 characters); "did you mean" is offered up to 2. */
static size_t name_distance(const char *word, const char *name)
{
	size_t d = edit_distance(word, name), wl = strlen(word), nl = strlen(name);

	if (d > 1 && ((wl >= 2 && strncmp(name, word, wl) == 0) ||
	              (nl >= 2 && strncmp(word, name, nl) == 0)))
		d = 1;
	return d;
}

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

/* getopt_long's table from ours. */
static void long_options(const struct opt *opts, struct option *lo, size_t max)
{
	size_t n = 0;

	for (const struct opt *o = opts; o->name && n + 1 < max; o++, n++) {
		lo[n].name = o->name;
		lo[n].has_arg = o->has_arg;
		lo[n].flag = NULL;
		lo[n].val = o->id;
	}
	memset(&lo[n], 0, sizeof lo[n]);
}

static const char *opt_name(const struct opt *opts, int id)
{
	for (const struct opt *o = opts; o->name; o++)
		if (o->id == id)
			return o->name;
	return "?";
}

/* The options of one command line: values by id (the last occurrence wins) and how
 * often each was given. */
struct parsed {
	const char *val[O_END - O_HELP];
	int given[O_END - O_HELP];
	int first_operand;
	struct { int id; const char *val; } seq[64];   /* repeatable options, in order */
	int nseq;
	char err[1024];         /* the last usage error's message, for --json */
};

static int parsed_error(const struct command *cmd, struct parsed *p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A usage error of the command line p (its message kept in p->err). */
static int parsed_error(const struct command *cmd, struct parsed *p, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = usage_verror(cmd, p->err, sizeof p->err, fmt, ap);
	va_end(ap);
	return rc;
}

/* An option given by another name than its own: getopt_long takes any unambiguous
 * prefix ("--bud" for --budget) and says nothing, so a typo can silently set the wrong
 * option. Every "--NAME" (up to '=') must be an option's whole name; a required value
 * given as the next word is skipped, and "--" ends the options. Returns 0, or -1 after
 * a usage error naming the word and the option it is nearest to. */
static int exact_names(const struct command *cmd, int argc, char **argv, struct parsed *p)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const struct opt *hit = NULL, *near;
		size_t len;

		if (strcmp(a, "--") == 0)
			break;
		if (strncmp(a, "--", 2) != 0 || !a[2])
			continue;
		len = strcspn(a + 2, "=");
		for (const struct opt *o = cmd->opts; o->name && !hit; o++)
			if (strlen(o->name) == len && strncmp(o->name, a + 2, len) == 0)
				hit = o;
		if (hit) {
			if (hit->has_arg == required_argument && !a[2 + len])
				i++;
			continue;
		}
		{
			char word[64];
			size_t best = 3;

			snprintf(word, sizeof word, "%.*s", (int)(len < 63 ? len : 63), a + 2);
			near = NULL;
			for (const struct opt *o = cmd->opts; o->name; o++) {
				size_t d = name_distance(word, o->name);

				if (d < best) {
					best = d;
					near = o;
				}
			}
			if (near)
				parsed_error(cmd, p, "unknown option '--%s'; did you mean --%s?", word,
				             near->name);
			else
				parsed_error(cmd, p, "unknown option '--%s'", word);
		}
		return -1;
	}
	return 0;
}

/* Parse the options of cmd (they may come before or after the operands). Returns -1
 * after printing a usage error (kept in p->err), 1 after printing --help, else 0. */
static int parse_options(const struct command *cmd, int argc, char **argv, struct parsed *p)
{
	struct option lo[32];
	char optstr[] = ":h";
	int c;

	memset(p, 0, sizeof *p);
	if (exact_names(cmd, argc, argv, p) != 0)
		return -1;
	long_options(cmd->opts, lo, sizeof lo / sizeof lo[0]);
	opterr = 0;
	optind = 1;
	for (;;) {
		c = getopt_long(argc, argv, optstr, lo, NULL);
		if (c == -1)
			break;
		if (c == 'h' || c == O_HELP) {
			command_help(cmd, stdout);
			return 1;
		}
		if (c == '?' || c == ':') {
			const char *bad = argv[optind - 1];

			if (optopt && optopt >= O_HELP)
				parsed_error(cmd, p, "option --%s needs a value",
				             opt_name(cmd->opts, optopt));
			else if (optopt)
				parsed_error(cmd, p, "unknown option '-%c'", optopt);
			else
				parsed_error(cmd, p, "unknown option '%s'", bad);
			return -1;
		}
		p->val[c - O_HELP] = optarg;
		p->given[c - O_HELP]++;
		for (size_t i = 0; i < sizeof repeatable / sizeof repeatable[0]; i++) {
			if (c != repeatable[i])
				continue;
			if (p->nseq == (int)(sizeof p->seq / sizeof p->seq[0])) {
				parsed_error(cmd, p, "--%s: given too many times", opt_name(cmd->opts, c));
				return -1;
			}
			p->seq[p->nseq].id = c;
			p->seq[p->nseq++].val = optarg;
		}
	}
	p->first_operand = optind;
	return 0;
}

#define GIVEN(p, id) ((p)->given[(id) - O_HELP] > 0)
#define VAL(p, id) ((p)->val[(id) - O_HELP])

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
	                               O_PYTHON, O_LIKE, O_COMPUTE, O_WINDOW};

	if (p->first_operand < argc)
		return parsed_error(cmd, p, "unexpected argument '%s'", argv[p->first_operand]);
	if (GIVEN(p, O_PROBE) && GIVEN(p, O_MODEL))
		return parsed_error(cmd, p, "--probe and --model are exclusive");
	if (GIVEN(p, O_NCCL) && GIVEN(p, O_PYTHON))
		return parsed_error(cmd, p, "--nccl and --python are exclusive (--python finds --nccl)");
	if (GIVEN(p, O_WORKLOAD) && (GIVEN(p, O_BYTES) || GIVEN(p, O_OPS) || GIVEN(p, O_DTYPE)))
		return parsed_error(cmd, p, "--workload and --bytes/--ops/--dtype are exclusive");
	for (size_t i = 0; GIVEN(p, O_RESUME) && i < sizeof settings / sizeof settings[0]; i++)
		if (GIVEN(p, settings[i]))
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
	if (GIVEN(p, O_RESUME))
		return nccltune_session_resume(s, VAL(p, O_RESUME));
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
	} else if (GIVEN(&p, O_PYTHON) || GIVEN(&p, O_SYSTEM) || GIVEN(&p, O_ALLOW_MODEL)) {
		return usage_error(cmd, "--python, --system and --allow-model only go with --install");
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

/* text for troff: a backslash as \e, a hyphen as \-, and (lead) "\&" first so that a
 * leading '.' or '\'' at the start of a line is not a request. */
static void man_escaped(FILE *f, const char *text, bool lead)
{
	if (lead)
		fputs("\\&", f);
	for (const char *p = text; *p; p++) {
		if (*p == '\\')
			fputs("\\e", f);
		else if (*p == '-')
			fputs("\\-", f);
		else
			fputc(*p, f);
	}
}

static void man_text(FILE *f, const char *text)
{
	man_escaped(f, text, true);
}

/* nccltune(1), from the same tables as --help: every command with its options, the
 * exit codes with the commands that return each. */
static void man_page(FILE *f)
{
	char text[1024];

	fprintf(f, ".TH NCCLTUNE 1 \"\" \"nccltune %s\" \"User Commands\"\n.SH NAME\n"
	        "nccltune \\- tune NCCL's small all\\-reduce latency\n.SH SYNOPSIS\n",
	        NCCLTUNE_VERSION);
	for (const struct command *c = commands; c->name; c++) {
		fprintf(f, ".B nccltune %s\n[\\fIOPTIONS\\fR] ", c->name);
		man_text(f, c->operands);
		fputs("\n.br\n", f);
	}
	fputs(".SH DESCRIPTION\nnccltune runs a probe per candidate configuration of NCCL's "
	      "variables, prunes what crashes, hangs or computes wrong sums, re\\-measures the "
	      "best against NCCL's defaults and exports the fastest environment.\n"
	      ".SH COMMANDS\n", f);
	for (const struct command *c = commands; c->name; c++) {
		fprintf(f, ".SS \"nccltune %s\"\n", c->name);
		man_text(f, c->summary);
		fputs(".\n", f);
		for (const struct opt *o = c->opts; o->name; o++) {
			fprintf(f, ".TP\n.B \\-\\-");
			man_escaped(f, o->name, false);
			if (o->metavar)
				fprintf(f, "%s\\fI%s\\fR", o->has_arg == optional_argument ? "[=" : " ",
				        o->metavar);
			if (o->has_arg == optional_argument)
				fputc(']', f);
			fputc('\n', f);
			man_text(f, option_text(c, o, text, sizeof text));
			fputc('\n', f);
		}
	}
	fputs(".SH \"EXIT STATUS\"\n", f);
	for (size_t i = 0; i < sizeof exit_codes / sizeof exit_codes[0]; i++) {
		fprintf(f, ".TP\n.B %d\n", exit_codes[i].code);
		man_text(f, exit_codes[i].meaning);
		if (exit_codes[i].commands[0]) {
			fputs(" (", f);
			man_text(f, exit_codes[i].commands + 1);
			fputs(")", f);
		}
		fputc('\n', f);
	}
	fputs(".SH \"SEE ALSO\"\nThe README.md and docs/ of the nccltune sources.\n", f);
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
			man_page(stdout);
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
		main_help(stdout);
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
