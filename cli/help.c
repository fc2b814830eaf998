/* help.c - what `nccltune --help`, `nccltune COMMAND --help` and `nccltune help --man`
 * print, generated from the option and command tables (so no help can miss an option):
 * one help per command with its own options, formats and exit codes; the man page. */
#include <getopt.h>
#include <string.h>

#include "cli.h"
#include "nccltune.h"
#include "nccltune_config.h"

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
	{NCCLTUNE_NOT_DEPLOYED, "the server would not run what was tuned (plugin not found, "
	 "table unreadable, a variable not as measured, NCCL too old)", " verify "},
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

void print_formats(FILE *f)
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

void command_help(const struct command *cmd, FILE *f)
{
	char summary[512];

	snprintf(summary, sizeof summary, "%s.", cmd->summary);
	fprintf(f, "Usage: nccltune %s [OPTIONS] %s\n", cmd->name, cmd->operands);
	print_wrapped_at(f, summary, 0);
	fputs("\nOptions:\n", f);
	for (const struct opt *o = cmd->opts; o->name; o++)
		print_option(f, cmd, o);
	if (strcmp(cmd->name, "run") == 0)
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

void main_help(const struct command *commands, FILE *f)
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
void man_page(const struct command *commands, FILE *f)
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

