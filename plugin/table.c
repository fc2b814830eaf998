/* table.c - the tuner table's strict parser, canonical writer, loader and lookup (see
 * table.h and docs/formats.md). libc only: this file is linked into the NCCL plugin. */
#include "table.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TABLE_FIELDS 9
#define WORD_SHOWN 40       /* bytes of an offending word quoted in a message */

static const char *const coll_names[TUNER_NCOLLS] = {
	"broadcast", "reduce", "allgather", "reducescatter", "allreduce",
};
static const char *const algo_names[TUNER_NALGOS] = {
	"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat",
};
static const char *const proto_names[TUNER_NPROTOS] = { "ll", "ll128", "simple" };

const char *tuner_coll_name(int coll)
{
	return coll >= 0 && coll < TUNER_NCOLLS ? coll_names[coll] : NULL;
}

const char *tuner_algo_name(int algo)
{
	return algo >= 0 && algo < TUNER_NALGOS ? algo_names[algo] : NULL;
}

const char *tuner_proto_name(int proto)
{
	return proto >= 0 && proto < TUNER_NPROTOS ? proto_names[proto] : NULL;
}

/* printf into err, truncating safely. Returns -1 for `return table_errf(...)`. */
static int table_errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int table_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* A word of the input as it may be printed: at most WORD_SHOWN bytes, anything outside
 * printable ASCII as '?', "..." when cut. */
static void show_word(const char *w, size_t n, char out[WORD_SHOWN + 4])
{
	size_t i, k = n < WORD_SHOWN ? n : WORD_SHOWN;

	for (i = 0; i < k; i++) {
		unsigned char c = (unsigned char)w[i];

		out[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	if (k < n) {
		memcpy(out + k, "...", 3);
		k += 3;
	}
	out[k] = '\0';
}

/* A token of a line: start and length (not NUL-terminated). */
struct token {
	const char *s;
	size_t n;
};

static int token_is(const struct token *t, const char *word)
{
	size_t n = strlen(word);

	return t->n == n && memcmp(t->s, word, n) == 0;
}

/* Index of the token among `names`, or -1. */
static int token_lookup(const struct token *t, const char *const *names, int count)
{
	for (int i = 0; i < count; i++)
		if (token_is(t, names[i]))
			return i;
	return -1;
}

static int token_has_upper(const struct token *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->s[i] >= 'A' && t->s[i] <= 'Z')
			return 1;
	return 0;
}

/* A decimal number in [0, max]: digits only, no sign, no leading zero (the canonical
 * text has none, so a table reads back as it was written). Returns 0, -1 when it is not
 * a decimal number, -2 when it exceeds max, -4 for a leading zero. */
static int token_uint(const struct token *t, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (t->n == 0)
		return -1;
	for (size_t i = 0; i < t->n; i++) {
		unsigned d;

		if (t->s[i] < '0' || t->s[i] > '9')
			return -1;
		d = (unsigned)(t->s[i] - '0');
		if (v > (max - d) / 10)
			return -2;
		v = v * 10 + d;
	}
	if (t->n > 1 && t->s[0] == '0')
		return -4;
	*out = v;
	return 0;
}

/* The message of one bad number field. Returns -1. */
static int bad_number(char *err, size_t errlen, size_t line, const char *field,
                      const struct token *t, int why, uint64_t lo, uint64_t hi, int star)
{
	char w[WORD_SHOWN + 4];

	show_word(t->s, t->n, w);
	if (why == -4)
		return table_errf(err, errlen, "line %zu: %s '%s' has a leading zero", line, field, w);
	if (why == -2 || why == -3)
		return table_errf(err, errlen, "line %zu: %s %s is out of range (%llu..%llu%s)",
		                  line, field, w, (unsigned long long)lo, (unsigned long long)hi,
		                  star ? " or '*'" : "");
	return table_errf(err, errlen, "line %zu: %s '%s' is not %s%s", line, field, w,
	                  lo > 0 ? "a positive decimal integer" : "a decimal integer",
	                  star ? " or '*'" : "");
}

/* nranks / nnodes: '*' or 1..INT_MAX. */
static int field_count(const struct token *t, size_t line, const char *field, int *out,
                       char *err, size_t errlen)
{
	uint64_t v;
	int why;

	if (token_is(t, "*")) {
		*out = TUNER_ANY;
		return 0;
	}
	why = token_uint(t, INT_MAX, &v);
	if (why == 0 && v == 0)
		why = -3;
	if (why != 0)
		return bad_number(err, errlen, line, field, t, why, 1, INT_MAX, 1);
	*out = (int)v;
	return 0;
}

/* A number field in [lo, hi]. */
static int field_uint(const struct token *t, size_t line, const char *field, uint64_t lo,
                      uint64_t hi, uint64_t *out, char *err, size_t errlen)
{
	int why = token_uint(t, hi, out);

	if (why == 0 && *out < lo)
		why = -3;
	if (why != 0)
		return bad_number(err, errlen, line, field, t, why, lo, hi, 0);
	return 0;
}

/* A word field: one of `names`, or '*' when star is set. */
static int field_word(const struct token *t, size_t line, const char *what,
                      const char *const *names, int count, int star, int *out, char *err,
                      size_t errlen)
{
	char w[WORD_SHOWN + 4];

	if (star && token_is(t, "*")) {
		*out = TUNER_ANY;
		return 0;
	}
	*out = token_lookup(t, names, count);
	if (*out >= 0)
		return 0;
	show_word(t->s, t->n, w);
	return table_errf(err, errlen, "line %zu: unknown %s '%s'%s", line, what, w,
	                  token_has_upper(t) ? " (the table's words are lowercase)" : "");
}

/* Split one line (no newline) at spaces and tabs into at most `max` tokens. Returns the
 * number of tokens found (which may exceed max; only max are stored). */
static size_t split_line(const char *s, size_t n, struct token *tok, size_t max)
{
	size_t count = 0, i = 0;

	while (i < n) {
		size_t start;

		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i == n)
			break;
		start = i;
		while (i < n && s[i] != ' ' && s[i] != '\t')
			i++;
		if (count < max) {
			tok[count].s = s + start;
			tok[count].n = i - start;
		}
		count++;
	}
	return count;
}

/* Parse the nine fields of one rule line. */
static int parse_rule(const struct token *tok, size_t line, struct tuner_rule *r, char *err,
                      size_t errlen)
{
	uint64_t v;

	if (field_word(&tok[0], line, "collective", coll_names, TUNER_NCOLLS, 0, &r->coll, err,
	               errlen) != 0)
		return -1;
	if (field_count(&tok[1], line, "nranks", &r->nranks, err, errlen) != 0)
		return -1;
	if (field_count(&tok[2], line, "nnodes", &r->nnodes, err, errlen) != 0)
		return -1;
	if (field_uint(&tok[3], line, "min_bytes", 0, TUNER_TABLE_MAX_BYTES_FIELD, &r->min_bytes,
	               err, errlen) != 0)
		return -1;
	if (field_uint(&tok[4], line, "max_bytes", 0, TUNER_TABLE_MAX_BYTES_FIELD, &r->max_bytes,
	               err, errlen) != 0)
		return -1;
	if (r->min_bytes > r->max_bytes)
		return table_errf(err, errlen, "line %zu: min_bytes %llu > max_bytes %llu", line,
		                  (unsigned long long)r->min_bytes, (unsigned long long)r->max_bytes);
	if (field_word(&tok[5], line, "algorithm", algo_names, TUNER_NALGOS, 1, &r->algo, err,
	               errlen) != 0)
		return -1;
	if (field_word(&tok[6], line, "protocol", proto_names, TUNER_NPROTOS, 1, &r->proto, err,
	               errlen) != 0)
		return -1;
	if (field_uint(&tok[7], line, "ctas", 0, TUNER_TABLE_MAX_CTAS, &v, err, errlen) != 0)
		return -1;
	r->ctas = (int)v;
	return field_uint(&tok[8], line, "chunk", 0, TUNER_TABLE_MAX_CHUNK, &r->chunk, err,
	                  errlen);
}

/* Append a rule, growing the array by doubling (never beyond TUNER_TABLE_MAX_RULES). */
static int push_rule(struct tuner_table *t, size_t *cap, const struct tuner_rule *r)
{
	if (t->nrules == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct tuner_rule *nr;

		if (ncap > TUNER_TABLE_MAX_RULES)
			ncap = TUNER_TABLE_MAX_RULES;
		nr = realloc(t->rules, ncap * sizeof *nr);
		if (!nr)
			return -1;
		t->rules = nr;
		*cap = ncap;
	}
	t->rules[t->nrules++] = *r;
	return 0;
}

int tuner_table_parse(const char *text, size_t len, struct tuner_table *out, char *err,
                      size_t errlen)
{
	struct tuner_table t = { NULL, 0 };
	size_t cap = 0, pos = 0, line = 0;
	int rc = -1;

	out->rules = NULL;
	out->nrules = 0;
	if (len > TUNER_TABLE_MAX_BYTES)
		return table_errf(err, errlen, "larger than %u bytes", TUNER_TABLE_MAX_BYTES);
	if (len == 0)
		return table_errf(err, errlen, "line 1: empty file, expected the header '%s'",
		                  TUNER_TABLE_HEADER);
	while (pos < len) {
		const char *s = text + pos, *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos, i = 0;
		struct token tok[TABLE_FIELDS];
		struct tuner_rule r;
		size_t ntok;

		pos += n + (nl ? 1 : 0);
		line++;
		if (n > TUNER_TABLE_MAX_LINE) {
			table_errf(err, errlen, "line %zu: longer than %d bytes", line,
			           TUNER_TABLE_MAX_LINE);
			goto out;
		}
		if (memchr(s, '\0', n)) {
			table_errf(err, errlen, "line %zu: NUL byte", line);
			goto out;
		}
		if (memchr(s, '\r', n)) {
			table_errf(err, errlen, "line %zu: carriage return (lines end with \\n only)",
			           line);
			goto out;
		}
		if (line == 1) {
			char w[WORD_SHOWN + 4];

			if (n == strlen(TUNER_TABLE_HEADER) && memcmp(s, TUNER_TABLE_HEADER, n) == 0)
				continue;
			show_word(s, n, w);
			table_errf(err, errlen, "line 1: expected the header '%s', got '%s'",
			           TUNER_TABLE_HEADER, w);
			goto out;
		}
		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i == n || s[i] == '#')
			continue;   /* blank line or comment */
		ntok = split_line(s, n, tok, TABLE_FIELDS);
		if (ntok != TABLE_FIELDS) {
			table_errf(err, errlen, "line %zu: %zu fields, expected %d (coll nranks nnodes "
			           "min_bytes max_bytes algo proto ctas chunk)", line, ntok, TABLE_FIELDS);
			goto out;
		}
		if (t.nrules == TUNER_TABLE_MAX_RULES) {
			table_errf(err, errlen, "line %zu: more than %d rules", line,
			           TUNER_TABLE_MAX_RULES);
			goto out;
		}
		if (parse_rule(tok, line, &r, err, errlen) != 0)
			goto out;
		if (push_rule(&t, &cap, &r) != 0) {
			table_errf(err, errlen, "line %zu: out of memory", line);
			goto out;
		}
	}
	*out = t;
	t.rules = NULL;
	rc = 0;
out:
	free(t.rules);
	return rc;
}

/* The kind of a non-regular file, for the message. */
static const char *file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	return "not a plain file";
}

int tuner_table_load(const char *path, struct tuner_table *out, char *err, size_t errlen)
{
	char perr[256];
	char *buf = NULL;
	size_t cap, used = 0;
	struct stat st;
	int fd, rc = -1;

	out->rules = NULL;
	out->nrules = 0;
	/* O_NONBLOCK: opening a FIFO without a writer must not wait for one */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return table_errf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0) {
		table_errf(err, errlen, "%s: cannot stat: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		table_errf(err, errlen, "%s: not a regular file (%s)", path, file_kind(st.st_mode));
		goto out;
	}
	if (st.st_size > (off_t)TUNER_TABLE_MAX_BYTES) {
		table_errf(err, errlen, "%s: larger than %u bytes", path, TUNER_TABLE_MAX_BYTES);
		goto out;
	}
	/* one byte more than the limit, so a file that grew since fstat is caught */
	cap = (size_t)st.st_size + 1;
	buf = malloc(cap);
	if (!buf) {
		table_errf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	for (;;) {
		ssize_t n;

		if (used == cap) {
			size_t ncap = cap * 2 > TUNER_TABLE_MAX_BYTES + 1 ? TUNER_TABLE_MAX_BYTES + 1
			                                                  : cap * 2;
			char *nb;

			if (cap == TUNER_TABLE_MAX_BYTES + 1) {
				table_errf(err, errlen, "%s: larger than %u bytes", path,
				           TUNER_TABLE_MAX_BYTES);
				goto out;
			}
			nb = realloc(buf, ncap);
			if (!nb) {
				table_errf(err, errlen, "%s: out of memory", path);
				goto out;
			}
			buf = nb;
			cap = ncap;
		}
		n = read(fd, buf + used, cap - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			table_errf(err, errlen, "%s: read failed: %s", path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	if (tuner_table_parse(buf, used, out, perr, sizeof perr) != 0) {
		table_errf(err, errlen, "%s: %s", path, perr);
		goto out;
	}
	rc = 0;
out:
	free(buf);
	close(fd);
	return rc;
}

int tuner_rule_check(const struct tuner_rule *r, char *err, size_t errlen)
{
	if (!tuner_coll_name(r->coll))
		return table_errf(err, errlen, "collective %d is not one the table can name", r->coll);
	if (r->nranks != TUNER_ANY && r->nranks < 1)
		return table_errf(err, errlen, "nranks %d is out of range", r->nranks);
	if (r->nnodes != TUNER_ANY && r->nnodes < 1)
		return table_errf(err, errlen, "nnodes %d is out of range", r->nnodes);
	if (r->max_bytes > TUNER_TABLE_MAX_BYTES_FIELD)
		return table_errf(err, errlen, "max_bytes %llu is out of range",
		                  (unsigned long long)r->max_bytes);
	if (r->min_bytes > r->max_bytes)
		return table_errf(err, errlen, "min_bytes %llu > max_bytes %llu",
		                  (unsigned long long)r->min_bytes, (unsigned long long)r->max_bytes);
	if (r->algo != TUNER_ANY && !tuner_algo_name(r->algo))
		return table_errf(err, errlen, "algorithm %d is out of range", r->algo);
	if (r->proto != TUNER_ANY && !tuner_proto_name(r->proto))
		return table_errf(err, errlen, "protocol %d is out of range", r->proto);
	if (r->ctas < 0 || r->ctas > TUNER_TABLE_MAX_CTAS)
		return table_errf(err, errlen, "ctas %d is out of range", r->ctas);
	if (r->chunk > TUNER_TABLE_MAX_CHUNK)
		return table_errf(err, errlen, "chunk %llu is out of range",
		                  (unsigned long long)r->chunk);
	return 0;
}

/* '*' or the decimal count into buf. */
static const char *count_text(int v, char *buf, size_t len)
{
	if (v == TUNER_ANY)
		return "*";
	snprintf(buf, len, "%d", v);
	return buf;
}

#define FORMAT_LINE "%-13s %-6s %-6s %-10s %-10s %-14s %-6s %-4s %s\n"
#define FORMAT_LINE_MAX 160   /* longest formatted rule: the widest value of every field */

char *tuner_table_format(const struct tuner_table *t, char *err, size_t errlen)
{
	size_t cap, used = 0;
	char *out;
	int n;

	if (t->nrules > TUNER_TABLE_MAX_RULES) {
		table_errf(err, errlen, "%zu rules, more than %d", t->nrules, TUNER_TABLE_MAX_RULES);
		return NULL;
	}
	for (size_t i = 0; i < t->nrules; i++) {
		char why[128];

		if (tuner_rule_check(&t->rules[i], why, sizeof why) != 0) {
			table_errf(err, errlen, "rule %zu: %s", i + 1, why);
			return NULL;
		}
	}
	cap = 2 * FORMAT_LINE_MAX + t->nrules * FORMAT_LINE_MAX;
	out = malloc(cap);
	if (!out) {
		table_errf(err, errlen, "out of memory");
		return NULL;
	}
	n = snprintf(out, cap, "%s\n# " FORMAT_LINE, TUNER_TABLE_HEADER, "coll", "nranks",
	             "nnodes", "min_bytes", "max_bytes", "algo", "proto", "ctas", "chunk");
	used = (size_t)n;
	for (size_t i = 0; i < t->nrules; i++) {
		const struct tuner_rule *r = &t->rules[i];
		char nranks[16], nnodes[16], lo[24], hi[24], ctas[8], chunk[24];

		snprintf(lo, sizeof lo, "%llu", (unsigned long long)r->min_bytes);
		snprintf(hi, sizeof hi, "%llu", (unsigned long long)r->max_bytes);
		snprintf(ctas, sizeof ctas, "%d", r->ctas);
		snprintf(chunk, sizeof chunk, "%llu", (unsigned long long)r->chunk);
		n = snprintf(out + used, cap - used, FORMAT_LINE, coll_names[r->coll],
		             count_text(r->nranks, nranks, sizeof nranks),
		             count_text(r->nnodes, nnodes, sizeof nnodes), lo, hi,
		             r->algo == TUNER_ANY ? "*" : algo_names[r->algo],
		             r->proto == TUNER_ANY ? "*" : proto_names[r->proto], ctas, chunk);
		used += (size_t)n;   /* n < FORMAT_LINE_MAX: every field is bounded above */
	}
	return out;
}

long tuner_table_match(const struct tuner_table *t, int coll, size_t nranks, size_t nnodes,
                       uint64_t bytes)
{
	if (!t)
		return -1;
	for (size_t i = 0; i < t->nrules; i++) {
		const struct tuner_rule *r = &t->rules[i];

		if (r->coll != coll || bytes < r->min_bytes || bytes > r->max_bytes)
			continue;
		if (r->nranks != TUNER_ANY && (size_t)r->nranks != nranks)
			continue;
		if (r->nnodes != TUNER_ANY && (size_t)r->nnodes != nnodes)
			continue;
		return (long)i;
	}
	return -1;
}

void tuner_table_free(struct tuner_table *t)
{
	if (!t)
		return;
	free(t->rules);
	t->rules = NULL;
	t->nrules = 0;
}
