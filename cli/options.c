/* options.c - the `nccltune` command line: getopt_long from an option table, every
 * --NAME taken by its whole name only (getopt_long would silently take a prefix), "did
 * you mean" for a near miss, and the usage errors (kept for --json). */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "nccltune.h"

/* Options that may be given more than once; every occurrence is kept, in order. */
static const int repeatable[] = {O_TRY, O_TRY_FILE};

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

int usage_error(const struct command *cmd, const char *fmt, ...)
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
size_t name_distance(const char *word, const char *name)
{
	size_t d = edit_distance(word, name), wl = strlen(word), nl = strlen(name);

	if (d > 1 && ((wl >= 2 && strncmp(name, word, wl) == 0) ||
	              (nl >= 2 && strncmp(word, name, nl) == 0)))
		d = 1;
	return d;
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

const char *opt_name(const struct opt *opts, int id)
{
	for (const struct opt *o = opts; o->name; o++)
		if (o->id == id)
			return o->name;
	return "?";
}

/* A usage error of the command line p (its message kept in p->err). */
int parsed_error(const struct command *cmd, struct parsed *p, const char *fmt, ...)
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
int parse_options(const struct command *cmd, int argc, char **argv, struct parsed *p)
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

