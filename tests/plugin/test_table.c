/* test_table.c - the table code on its own (plugin/table.c through plugin_table_dep, as
 * the tuner will use it): the documented example, the canonical text and its round trip,
 * first-match lookup with inclusive bounds and '*', every error message, the limits
 * (line length, rule count, file size, 2^63-1) on both sides, and the loader's refusal of
 * files that are not small regular files. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"
#include "table.h"

static char dir[] = "/tmp/nccltune-plugin-table-XXXXXX";

/* Parse `text`, expecting the error `want` (NULL: success). Frees the result. */
static void expect(const char *text, size_t len, const char *want)
{
	struct tuner_table t = { (struct tuner_rule *)&t, 99 };
	char err[512] = "";
	int rc = tuner_table_parse(text, len, &t, err, sizeof err);

	if (want) {
		CHECK_INT(rc, -1);
		CHECK_STR(err, want);
		CHECK(t.rules == NULL);
		CHECK_INT(t.nrules, 0);
	} else {
		CHECK_INT(rc, 0);
		if (rc != 0)
			fprintf(stderr, "  unexpected error: %s\n", err);
	}
	tuner_table_free(&t);
}

/* Field by field: the struct has padding, which memcmp would compare too. */
static int rules_equal(const struct tuner_rule *a, const struct tuner_rule *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].coll != b[i].coll || a[i].nranks != b[i].nranks || a[i].nnodes != b[i].nnodes ||
		    a[i].min_bytes != b[i].min_bytes || a[i].max_bytes != b[i].max_bytes ||
		    a[i].algo != b[i].algo || a[i].proto != b[i].proto || a[i].ctas != b[i].ctas ||
		    a[i].chunk != b[i].chunk)
			return 0;
	return 1;
}

static void expect_str(const char *text, const char *want)
{
	expect(text, strlen(text), want);
}

#define H "nccltune-tuner/1\n"

static void example(void)
{
	static const char doc[] = "nccltune-tuner/1\n"
		"# comment lines start with '#'; blank lines allowed\n"
		"# coll      nranks nnodes min_bytes max_bytes algo proto ctas chunk\n"
		"allreduce   8      1      40960     45055     ring ll    4    0\n"
		"\n"
		"   \t \n"
		"   # an indented comment\n"
		"allreduce   *      *      0         1048575   *    ll    0    0";   /* no final newline */
	static const char canonical[] = "nccltune-tuner/1\n"
		"# coll          nranks nnodes min_bytes  max_bytes  algo           proto  ctas chunk\n"
		"allreduce     8      1      40960      45055      ring           ll     4    0\n"
		"allreduce     *      *      0          1048575    *              ll     0    0\n";
	struct tuner_table t, back;
	char err[256], *text, *again;

	CHECK_INT(tuner_table_parse(doc, strlen(doc), &t, err, sizeof err), 0);
	CHECK_INT(t.nrules, 2);
	CHECK_INT(t.rules[0].coll, TUNER_COLL_ALLREDUCE);
	CHECK_INT(t.rules[0].nranks, 8);
	CHECK_INT(t.rules[0].nnodes, 1);
	CHECK_INT(t.rules[0].min_bytes, 40960);
	CHECK_INT(t.rules[0].max_bytes, 45055);
	CHECK_INT(t.rules[0].algo, TUNER_ALGO_RING);
	CHECK_INT(t.rules[0].proto, TUNER_PROTO_LL);
	CHECK_INT(t.rules[0].ctas, 4);
	CHECK_INT(t.rules[0].chunk, 0);
	CHECK_INT(t.rules[1].nranks, TUNER_ANY);
	CHECK_INT(t.rules[1].nnodes, TUNER_ANY);
	CHECK_INT(t.rules[1].algo, TUNER_ANY);
	text = tuner_table_format(&t, err, sizeof err);
	CHECK_STR(text, canonical);
	CHECK_INT(tuner_table_parse(text, strlen(text), &back, err, sizeof err), 0);
	CHECK_INT(back.nrules, t.nrules);
	CHECK(rules_equal(back.rules, t.rules, t.nrules));
	again = tuner_table_format(&back, err, sizeof err);
	CHECK_STR(again, text);
	free(text);
	free(again);
	tuner_table_free(&back);

	/* first match wins; bounds are inclusive; '*' matches anything; coll must agree */
	CHECK_INT(tuner_table_match(&t, 4, 8, 1, 40960), 0);
	CHECK_INT(tuner_table_match(&t, 4, 8, 1, 45055), 0);
	CHECK_INT(tuner_table_match(&t, 4, 8, 1, 40959), 1);
	CHECK_INT(tuner_table_match(&t, 4, 8, 1, 45056), 1);
	CHECK_INT(tuner_table_match(&t, 4, 8, 2, 43008), 1);
	CHECK_INT(tuner_table_match(&t, 4, 4, 1, 43008), 1);
	CHECK_INT(tuner_table_match(&t, 4, 8, 1, 1048576), -1);
	CHECK_INT(tuner_table_match(&t, 2, 8, 1, 43008), -1);
	CHECK_INT(tuner_table_match(&t, 14, 8, 1, 43008), -1);
	CHECK_INT(tuner_table_match(&t, -1, 8, 1, 43008), -1);
	CHECK_INT(tuner_table_match(NULL, 4, 8, 1, 43008), -1);
	tuner_table_free(&t);
	CHECK_INT(tuner_table_match(&t, 4, 8, 1, 43008), -1);
	tuner_table_free(&t);
	tuner_table_free(NULL);
}

/* Every word, both extremes of every number, through format and back. */
static void round_trip(void)
{
	struct tuner_rule r[TUNER_NCOLLS * TUNER_NALGOS * TUNER_NPROTOS + 2];
	struct tuner_table t = { r, 0 }, back, empty = { NULL, 0 };
	char err[256], *text;

	for (int c = 0; c < TUNER_NCOLLS; c++)
		for (int a = 0; a < TUNER_NALGOS; a++)
			for (int p = 0; p < TUNER_NPROTOS; p++)
				r[t.nrules++] = (struct tuner_rule){ c, a + 1, p + 1, (uint64_t)a, (uint64_t)a * 1000,
				                                     a, p, a * 9, (uint64_t)p * 4096 };
	r[t.nrules++] = (struct tuner_rule){ 0, INT_MAX, INT_MAX, TUNER_TABLE_MAX_BYTES_FIELD,
	                                     TUNER_TABLE_MAX_BYTES_FIELD, TUNER_ANY, TUNER_ANY,
	                                     TUNER_TABLE_MAX_CTAS, TUNER_TABLE_MAX_CHUNK };
	r[t.nrules++] = (struct tuner_rule){ 3, TUNER_ANY, TUNER_ANY, 0, 0, 6, TUNER_ANY, 0, 1 };
	text = tuner_table_format(&t, err, sizeof err);
	CHECK(text != NULL);
	CHECK_INT(tuner_table_parse(text, strlen(text), &back, err, sizeof err), 0);
	CHECK_INT(back.nrules, t.nrules);
	CHECK(back.rules && rules_equal(back.rules, r, t.nrules));
	CHECK_CONTAINS(text, "broadcast     2147483647 2147483647 9223372036854775807 "
	               "9223372036854775807 *              *      64   2147483647\n");
	free(text);
	tuner_table_free(&back);
	text = tuner_table_format(&empty, err, sizeof err);
	CHECK_STR(text, "nccltune-tuner/1\n# coll          nranks nnodes min_bytes  max_bytes  "
	          "algo           proto  ctas chunk\n");
	CHECK_INT(tuner_table_parse(text, strlen(text), &back, err, sizeof err), 0);
	CHECK_INT(back.nrules, 0);
	free(text);

	/* format refuses what parse would refuse */
	{
		static struct { struct tuner_rule r; const char *why; } bad[] = {
			{ { 5, 1, 1, 0, 0, 0, 0, 0, 0 }, "rule 1: collective 5 is not one the table can name" },
			{ { 4, 0, 1, 0, 0, 0, 0, 0, 0 }, "rule 1: nranks 0 is out of range" },
			{ { 4, 1, -2, 0, 0, 0, 0, 0, 0 }, "rule 1: nnodes -2 is out of range" },
			{ { 4, 1, 1, 2, 1, 0, 0, 0, 0 }, "rule 1: min_bytes 2 > max_bytes 1" },
			{ { 4, 1, 1, 0, 1ull << 63, 0, 0, 0, 0 }, "rule 1: max_bytes 9223372036854775808 is out of range" },
			{ { 4, 1, 1, 0, 0, 7, 0, 0, 0 }, "rule 1: algorithm 7 is out of range" },
			{ { 4, 1, 1, 0, 0, 0, -2, 0, 0 }, "rule 1: protocol -2 is out of range" },
			{ { 4, 1, 1, 0, 0, 0, 0, 65, 0 }, "rule 1: ctas 65 is out of range" },
			{ { 4, 1, 1, 0, 0, 0, 0, 0, 1ull << 31 }, "rule 1: chunk 2147483648 is out of range" },
		};

		for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
			struct tuner_table one = { &bad[i].r, 1 };

			CHECK(tuner_table_format(&one, err, sizeof err) == NULL);
			CHECK_STR(err, bad[i].why);
		}
		t.nrules = TUNER_TABLE_MAX_RULES + 1;
		CHECK(tuner_table_format(&t, err, sizeof err) == NULL);
		CHECK_STR(err, "4097 rules, more than 4096");
	}
	CHECK_STR(tuner_coll_name(3), "reducescatter");
	CHECK_STR(tuner_algo_name(5), "nvls_tree");
	CHECK_STR(tuner_proto_name(1), "ll128");
	CHECK(tuner_coll_name(5) == NULL && tuner_algo_name(-1) == NULL && tuner_proto_name(3) == NULL);
}

static void errors(void)
{
	char line[600];

	expect_str("", "line 1: empty file, expected the header 'nccltune-tuner/1'");
	expect_str("nccltune-tuner/1", NULL);
	expect_str(H, NULL);
	expect_str(H "\n\n# only comments\n", NULL);
	expect_str("nccltune-tuner/1 \n", "line 1: expected the header 'nccltune-tuner/1', got 'nccltune-tuner/1 '");
	expect_str("# nccltune-tuner/1\n", "line 1: expected the header 'nccltune-tuner/1', got '# nccltune-tuner/1'");
	expect_str("\x01\x7f" "abc\n", "line 1: expected the header 'nccltune-tuner/1', got '??abc'");
	expect_str("NCCLTUNE-TUNER/1\n", "line 1: expected the header 'nccltune-tuner/1', got 'NCCLTUNE-TUNER/1'");
	expect_str(H "allreduce 8 1 0 1 ring ll 4\n", "line 2: 8 fields, expected 9 (coll nranks nnodes "
	           "min_bytes max_bytes algo proto ctas chunk)");
	expect_str(H "allreduce 8 1 0 1 ring ll 4 0 # no trailing comments\n", "line 2: 13 fields, "
	           "expected 9 (coll nranks nnodes min_bytes max_bytes algo proto ctas chunk)");
	expect_str(H "allreduce\t8\t1\t0\t1\tring\tll\t4\t0\t\n", NULL);
	expect_str(H "sendrecv 8 1 0 1 ring ll 4 0\n", "line 2: unknown collective 'sendrecv'");
	expect_str(H "allreduce 8 1 0 1 Ring ll 4 0\n", "line 2: unknown algorithm 'Ring' (the table's "
	           "words are lowercase)");
	expect_str(H "allreduce 8 1 0 1 nvlstree ll 4 0\n", "line 2: unknown algorithm 'nvlstree'");
	expect_str(H "allreduce 8 1 0 1 ring ll128x 4 0\n", "line 2: unknown protocol 'll128x'");
	expect_str(H "allreduce * * 0 1 ring * 4 0\n", NULL);
	expect_str(H "* * * 0 1 ring ll 4 0\n", "line 2: unknown collective '*'");
	expect_str(H "allreduce 0 1 0 1 ring ll 4 0\n", "line 2: nranks 0 is out of range (1..2147483647 or '*')");
	expect_str(H "allreduce 8 -1 0 1 ring ll 4 0\n", "line 2: nnodes '-1' is not a positive decimal integer or '*'");
	expect_str(H "allreduce +8 1 0 1 ring ll 4 0\n", "line 2: nranks '+8' is not a positive decimal integer or '*'");
	expect_str(H "allreduce 8 1 * 1 ring ll 4 0\n", "line 2: min_bytes '*' is not a decimal integer");
	expect_str(H "allreduce 8 1 0x10 1 ring ll 4 0\n", "line 2: min_bytes '0x10' is not a decimal integer");
	expect_str(H "allreduce 8 1 040960 45055 ring ll 4 0\n", "line 2: min_bytes '040960' has a leading zero");
	expect_str(H "allreduce 8 1 0 9223372036854775807 ring ll 4 0\n", NULL);
	expect_str(H "allreduce 8 1 0 9223372036854775808 ring ll 4 0\n", "line 2: max_bytes 9223372036854775808 "
	           "is out of range (0..9223372036854775807)");
	expect_str(H "allreduce 8 1 0 99999999999999999999999999 ring ll 4 0\n", "line 2: max_bytes "
	           "99999999999999999999999999 is out of range (0..9223372036854775807)");
	expect_str(H "allreduce 8 1 2 1 ring ll 4 0\n", "line 2: min_bytes 2 > max_bytes 1");
	expect_str(H "allreduce 8 1 0 1 ring ll 64 0\n", NULL);
	expect_str(H "allreduce 8 1 0 1 ring ll 65 0\n", "line 2: ctas 65 is out of range (0..64)");
	expect_str(H "allreduce 8 1 0 1 ring ll 4 2147483647\n", NULL);
	expect_str(H "allreduce 8 1 0 1 ring ll 4 2147483648\n", "line 2: chunk 2147483648 is out of range "
	           "(0..2147483647)");
	expect_str(H "allreduce 8 1 0 1 ring ll 4 0\r\n", "line 2: carriage return (lines end with \\n only)");
	expect(H "allreduce 8 1 0 1 ring ll 4 0\n#\0\n", 17 + 30 + 3, "line 3: NUL byte");
	expect(H "allreduce 8 1 0 1 ring ll 4 0", 17 + 30 - 3, "line 2: 8 fields, expected 9 (coll "
	       "nranks nnodes min_bytes max_bytes algo proto ctas chunk)");
	/* the word in a message is cut and made printable */
	expect_str(H "allreduce 8 1 0 1 abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz ll 4 0\n",
	           "line 2: unknown algorithm 'abcdefghijklmnopqrstuvwxyzabcdefghijklmn...'");
	expect_str(H "allreduce 8 1 0 1 ring \x1b[31mll 4 0\n", "line 2: unknown protocol '?[31mll'");
	/* a line of exactly 512 bytes is fine, 513 is not */
	memset(line, ' ', sizeof line);
	memcpy(line, H "#", 18);
	line[17 + 512] = '\n';
	expect(line, 17 + 513, NULL);
	line[17 + 512] = ' ';
	line[17 + 513] = '\n';
	expect(line, 17 + 514, "line 2: longer than 512 bytes");
	/* an error buffer may be absent */
	{
		struct tuner_table t;

		CHECK_INT(tuner_table_parse("x", 1, &t, NULL, 0), -1);
		CHECK_INT(tuner_table_parse("x", 1, &t, line, 1), -1);
		CHECK_STR(line, "");
	}
}

/* `n` copies of one rule under the header. Caller frees. */
static char *many(size_t n, size_t *len)
{
	static const char rule[] = "reduce 1 1 0 1 pat simple 1 512\n";
	char *text = malloc(17 + n * (sizeof rule - 1) + 1);

	if (!text)
		abort();
	memcpy(text, H, 17);
	for (size_t i = 0; i < n; i++)
		memcpy(text + 17 + i * (sizeof rule - 1), rule, sizeof rule - 1);
	*len = 17 + n * (sizeof rule - 1);
	text[*len] = '\0';
	return text;
}

static void limits(void)
{
	struct tuner_table t;
	char err[256], *text;
	size_t len;

	text = many(TUNER_TABLE_MAX_RULES, &len);
	CHECK_INT(tuner_table_parse(text, len, &t, err, sizeof err), 0);
	CHECK_INT(t.nrules, TUNER_TABLE_MAX_RULES);
	CHECK_INT(t.rules[4095].chunk, 512);
	tuner_table_free(&t);
	free(text);
	text = many(TUNER_TABLE_MAX_RULES + 1, &len);
	expect(text, len, "line 4098: more than 4096 rules");
	free(text);
	text = malloc(TUNER_TABLE_MAX_BYTES + 1);
	CHECK(text != NULL);
	memset(text, '\n', TUNER_TABLE_MAX_BYTES + 1);
	memcpy(text, H, 17);
	expect(text, TUNER_TABLE_MAX_BYTES, NULL);
	expect(text, TUNER_TABLE_MAX_BYTES + 1, "larger than 1048576 bytes");
	free(text);
}

/* The loader: a regular file (or a symlink to one) and nothing else. */
static void loader(void)
{
	struct tuner_table t;
	char path[256], other[256], err[512], want[600];
	int fd;

	snprintf(path, sizeof path, "%s/good", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(write(fd, H "allgather * * 0 1 * * 0 0\n", 17 + 26) == 17 + 26);
	close(fd);
	CHECK_INT(tuner_table_load(path, &t, err, sizeof err), 0);
	CHECK_INT(t.nrules, 1);
	tuner_table_free(&t);
	snprintf(other, sizeof other, "%s/link", dir);
	CHECK_INT(symlink(path, other), 0);
	CHECK_INT(tuner_table_load(other, &t, err, sizeof err), 0);
	tuner_table_free(&t);
	/* a parse error is prefixed with the path */
	fd = open(path, O_WRONLY | O_APPEND);
	CHECK(write(fd, "bogus\n", 6) == 6);
	close(fd);
	CHECK_INT(tuner_table_load(path, &t, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s: line 3: 1 fields, expected 9 (coll nranks nnodes min_bytes "
	         "max_bytes algo proto ctas chunk)", path);
	CHECK_STR(err, want);
	CHECK(t.rules == NULL);
	/* too big, by size */
	CHECK_INT(truncate(path, TUNER_TABLE_MAX_BYTES + 1), 0);
	CHECK_INT(tuner_table_load(path, &t, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s: larger than 1048576 bytes", path);
	CHECK_STR(err, want);
	/* not regular files: a folder, a FIFO (no writer: must not block), /dev/null */
	CHECK_INT(tuner_table_load(dir, &t, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s: not a regular file (a directory)", dir);
	CHECK_STR(err, want);
	snprintf(path, sizeof path, "%s/fifo", dir);
	CHECK_INT(mkfifo(path, 0600), 0);
	alarm(30);
	CHECK_INT(tuner_table_load(path, &t, err, sizeof err), -1);
	alarm(0);
	snprintf(want, sizeof want, "%s: not a regular file (a FIFO)", path);
	CHECK_STR(err, want);
	CHECK_INT(tuner_table_load("/dev/null", &t, err, sizeof err), -1);
	CHECK_STR(err, "/dev/null: not a regular file (a character device)");
	/* a symlink loop and a missing file: open's reason */
	snprintf(path, sizeof path, "%s/loop1", dir);
	snprintf(other, sizeof other, "%s/loop2", dir);
	CHECK_INT(symlink(other, path), 0);
	CHECK_INT(symlink(path, other), 0);
	CHECK_INT(tuner_table_load(path, &t, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s: cannot open: %s", path, strerror(ELOOP));
	CHECK_STR(err, want);
	CHECK_INT(tuner_table_load("/nonexistent/table", &t, err, sizeof err), -1);
	CHECK_STR(err, "/nonexistent/table: cannot open: No such file or directory");
}

int main(void)
{
	char cmd[300];

	CHECK(mkdtemp(dir) != NULL);
	example();
	round_trip();
	errors();
	limits();
	loader();
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
	return check_status();
}
