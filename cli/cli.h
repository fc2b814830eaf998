/* cli.h - what the files of the `nccltune` command share: the option ids, the option and
 * command tables' rows (the tables themselves are in main.c), a parsed command line, and
 * the calls of options.c (parsing, usage errors) and help.c (--help, the man page). */
#ifndef NCCLTUNE_CLI_H
#define NCCLTUNE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum opt_id {
	O_HELP = 1000, O_PROBE, O_MODEL, O_SPACE, O_WORKLOAD, O_BYTES, O_OPS, O_DTYPE, O_GUARD,
	O_BUDGET, O_TIME_LIMIT, O_SEED, O_STRATEGY, O_TIMEOUT, O_OUT, O_WARM, O_RESUME,
	O_QUIET, O_FORMAT, O_INSTALL, O_PYTHON, O_TRY, O_TRY_FILE, O_SYSTEM, O_ALLOW_MODEL,
	O_INIT, O_FROM, O_TARGET, O_JSON, O_NCCL, O_LIKE, O_COMPUTE, O_WINDOW, O_RANKS_PER_GPU,
	O_ALLOW_UNPROVEN, O_ALLOW_OLD_NCCL, O_ENV_FILE, O_RANKS, O_NO_START, O_BUNDLE,
	O_END   /* one past the last: sizes the tables below */
};

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

#define GIVEN(p, id) ((p)->given[(id) - O_HELP] > 0)
#define VAL(p, id) ((p)->val[(id) - O_HELP])

/* ---- options.c ---- */

/* A usage error: "nccltune CMD: MESSAGE" (cmd NULL: "nccltune: MESSAGE") and the help
 * hint on stderr. Returns NCCLTUNE_USAGE. */
int usage_error(const struct command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The same, the message also kept in p->err (for --json). Returns NCCLTUNE_USAGE. */
int parsed_error(const struct command *cmd, struct parsed *p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* How far word is from name for "did you mean" (offered up to 2). Can't fail. */
size_t name_distance(const char *word, const char *name);

/* The name of option id in opts, "?" when it has none. */
const char *opt_name(const struct opt *opts, int id);

/* Parse the options of cmd into p (they may come before or after the operands; every
 * --NAME must be an option's whole name). Returns -1 after printing a usage error (kept
 * in p->err), 1 after printing --help, else 0. */
int parse_options(const struct command *cmd, int argc, char **argv, struct parsed *p);

/* ---- help.c ---- */

/* The export formats, comma-separated, on f. */
void print_formats(FILE *f);

/* `nccltune CMD --help`: the command's options, notes and the exit codes it returns. */
void command_help(const struct command *cmd, FILE *f);

/* `nccltune --help`: the commands of the table (ended by a NULL name), examples and
 * every exit code once. */
void main_help(const struct command *commands, FILE *f);

/* nccltune(1) in troff, from the same tables: every command with its options, the exit
 * codes with the commands that return each. */
void man_page(const struct command *commands, FILE *f);

#endif
