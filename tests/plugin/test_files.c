/* test_files.c - hostile and missing tables, as the plugin meets them at a communicator's
 * init: each is rejected whole, with exactly one warning per communicator that names the
 * file, the line and the reason, init and every getCollInfo return success, and NCCL's
 * cost table and nChannels come back untouched (even for a size an earlier, valid line
 * of the rejected file covers). A FIFO, a directory and a symlink loop must not hang or
 * crash the loader (alarm() turns a hang into a failure).
 * Usage: test_plugin_files PATH-TO-libnccl-tuner-nccltune.so */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"
#include "harness.h"

#define GOOD_RULE "allreduce 8 1 40960 45055 ring ll 4 0\n"
#define HEAD_GOOD_LEN (sizeof("nccltune-tuner/1\n" GOOD_RULE) - 1)
#define TAIL "; table ignored, NCCL decides"

static char dir[] = "/tmp/nccltune-plugin-files-XXXXXX";
static struct h_plugin pl;

/* Init a communicator through each ABI with the table at `env` (NULL: unset); expect
 * `warn` as the one warning (NULL: none) and no opinion on any call. */
static void expect_no_opinion(const char *name, const char *env, const char *warn)
{
	for (int abi = H_V4; abi <= H_V6; abi++) {
		struct h_comm c[2];

		if (env)
			CHECK_INT(setenv("NCCLTUNE_TUNER_TABLE", env, 1), 0);
		else
			CHECK_INT(unsetenv("NCCLTUNE_TUNER_TABLE"), 0);
		h_log_reset();
		/* two communicators: one warning each */
		for (int k = 0; k < 2; k++) {
			CHECK_INT(h_init(&c[k], &pl, (enum h_abi)abi, (uint64_t)k, 8, 1, h_capture), 0);
			CHECK(c[k].ctx != NULL && c[k].ctx != (void *)0x1);
		}
		for (int k = 0; k < 2; k++)
			for (int kind = 0; kind < H_NKINDS; kind++)
				for (int coll = 0; coll <= 15; coll++) {
					float in[H_NA][H_NP], out[H_NA][H_NP];
					int nch = 0;

					h_table((enum h_kind)kind, in);
					memcpy(out, in, sizeof in);
					CHECK_INT(h_coll(&c[k], coll, 43008, out, H_NA, H_NP, 0, &nch), 0);
					CHECK(memcmp(in, out, sizeof in) == 0);
					CHECK_INT(nch, 0);
				}
		if (warn) {
			CHECK_INT(h_log_count(H_WARN), 2);
			CHECK_INT(h_log_exact(H_WARN, warn), 2);
			CHECK_INT(h_log_count(H_INFO), 0);
		} else {
			CHECK_INT(h_log_count(H_WARN), 0);
		}
		CHECK(h_log_all_tuning());
		if ((warn && h_log_exact(H_WARN, warn) != 2) || (!warn && h_log_count(H_WARN))) {
			fprintf(stderr, "  ^ case %s, %s\n", name, h_abi_name((enum h_abi)abi));
			h_log_dump();
		}
		for (int k = 0; k < 2; k++)
			CHECK_INT(h_fini(&c[k]), 0);
	}
}

/* A file with `len` bytes of `data`, rejected for `reason`. */
static void hostile(const char *name, const char *data, size_t len, const char *reason)
{
	char path[256], warn[1024];

	snprintf(path, sizeof path, "%s/%s", dir, name);
	CHECK_INT(h_write(path, data, len), 0);
	snprintf(warn, sizeof warn, "nccltune: %s: %s" TAIL, path, reason);
	expect_no_opinion(name, path, warn);
}

static void hostile_str(const char *name, const char *text, const char *reason)
{
	hostile(name, text, strlen(text), reason);
}

/* `n` rules: the header, then n copies of one rule line. Caller frees. */
static char *many_rules(size_t n, size_t *len)
{
	static const char rule[] = "allgather * * 0 1 * * 0 0\n";
	char *text = malloc(32 + n * (sizeof rule - 1));
	size_t used;

	if (!text)
		abort();
	used = (size_t)snprintf(text, 32, "nccltune-tuner/1\n");
	for (size_t i = 0; i < n; i++) {
		memcpy(text + used, rule, sizeof rule - 1);
		used += sizeof rule - 1;
	}
	*len = used;
	return text;
}

/* A table that must be accepted: one INFO naming it, no warning, rule 1 applied. */
static void accepted(const char *name, const char *path, size_t nrules)
{
	char want[512];
	struct h_comm c;
	float t[H_NA][H_NP];
	int nch = 0;

	CHECK_INT(setenv("NCCLTUNE_TUNER_TABLE", path, 1), 0);
	h_log_reset();
	CHECK_INT(h_init(&c, &pl, H_V6, 9, 8, 1, h_capture), 0);
	snprintf(want, sizeof want, "nccltune: table %s, %zu rules (nranks 8, nnodes 1)", path, nrules);
	CHECK_INT(h_log_exact(H_INFO, want), 1);
	CHECK_INT(h_log_count(H_WARN), 0);
	if (h_log_exact(H_INFO, want) != 1 || h_log_count(H_WARN)) {
		fprintf(stderr, "  ^ case %s\n", name);
		h_log_dump();
	}
	h_table(H_PCIE, t);
	CHECK_INT(h_coll(&c, nrules == 1 ? 4 : 2, nrules == 1 ? 43008 : 0, t, H_NA, H_NP, 0, &nch), 0);
	CHECK_INT(nch, nrules == 1 ? 4 : 0);
	CHECK_INT(h_fini(&c), 0);
}

int main(int argc, char **argv)
{
	char path[256], target[256], warn[1024], cmd[300], *text;
	static char big[(1u << 20) + 2];
	size_t len;

	if (argc != 2) {
		fprintf(stderr, "usage: %s PLUGIN.so\n", argv[0]);
		return 2;
	}
	alarm(60);   /* a FIFO read that blocks would hang here: fail instead */
	CHECK(mkdtemp(dir) != NULL);
	if (h_open(&pl, argv[1]) != 0)
		return 1;

	hostile_str("truncated", "nccltune-tuner/1\n" GOOD_RULE "allreduce 8 1 4096",
	            "line 3: 4 fields, expected 9 (coll nranks nnodes min_bytes max_bytes algo "
	            "proto ctas chunk)");
	memset(big, 'x', 600);
	memcpy(big, "nccltune-tuner/1\n" GOOD_RULE "# ", HEAD_GOOD_LEN + 2);
	big[600] = '\n';
	hostile("huge-line", big, 601, "line 3: longer than 512 bytes");
	hostile("nul-byte", "nccltune-tuner/1\n" GOOD_RULE "allreduce 8 1 0 10 ring ll\0 4 0\n",
	        HEAD_GOOD_LEN + 32, "line 3: NUL byte");
	hostile_str("overflow-63", "nccltune-tuner/1\nallreduce 8 1 9223372036854775808 "
	            "9223372036854775808 ring ll 4 0\n", "line 2: min_bytes 9223372036854775808 is out "
	            "of range (0..9223372036854775807)");
	hostile_str("overflow-64", "nccltune-tuner/1\nallreduce 8 1 0 184467440737095516160 ring ll 4 0\n",
	            "line 2: max_bytes 184467440737095516160 is out of range (0..9223372036854775807)");
	hostile_str("overflow-ranks", "nccltune-tuner/1\nallreduce 2147483648 1 0 1 ring ll 4 0\n",
	            "line 2: nranks 2147483648 is out of range (1..2147483647 or '*')");
	hostile_str("min-gt-max", "nccltune-tuner/1\n" GOOD_RULE "allreduce 8 1 45056 45055 ring ll 4 0\n",
	            "line 3: min_bytes 45056 > max_bytes 45055");
	hostile_str("unknown-coll", "nccltune-tuner/1\nAllReduce 8 1 0 1 ring ll 4 0\n",
	            "line 2: unknown collective 'AllReduce' (the table's words are lowercase)");
	hostile_str("unknown-algo", "nccltune-tuner/1\nallreduce 8 1 0 1 rng ll 4 0\n",
	            "line 2: unknown algorithm 'rng'");
	hostile_str("unknown-proto", "nccltune-tuner/1\nallreduce 8 1 0 1 ring LL 4 0\n",
	            "line 2: unknown protocol 'LL' (the table's words are lowercase)");
	hostile_str("ctas-65", "nccltune-tuner/1\nallreduce 8 1 0 1 ring ll 65 0\n",
	            "line 2: ctas 65 is out of range (0..64)");
	hostile_str("wrong-header", "nccltune-tuner/2\n" GOOD_RULE,
	            "line 1: expected the header 'nccltune-tuner/1', got 'nccltune-tuner/2'");
	hostile_str("no-header", GOOD_RULE,
	            "line 1: expected the header 'nccltune-tuner/1', got 'allreduce 8 1 40960 45055 ring "
	            "ll 4 0'");
	hostile_str("empty", "", "line 1: empty file, expected the header 'nccltune-tuner/1'");
	hostile_str("crlf", "nccltune-tuner/1\r\n" GOOD_RULE,
	            "line 1: carriage return (lines end with \\n only)");
	text = many_rules(5000, &len);
	hostile("5000-rules", text, len, "line 4098: more than 4096 rules");
	free(text);
	memset(big, '\n', sizeof big);
	memcpy(big, "nccltune-tuner/1\n", 17);
	hostile("too-big", big, (1u << 20) + 1, "larger than 1048576 bytes");

	/* not regular files */
	snprintf(path, sizeof path, "%s/a-directory", dir);
	CHECK_INT(mkdir(path, 0755), 0);
	snprintf(warn, sizeof warn, "nccltune: %s: not a regular file (a directory)" TAIL, path);
	expect_no_opinion("directory", path, warn);
	snprintf(path, sizeof path, "%s/a-fifo", dir);
	CHECK_INT(mkfifo(path, 0600), 0);
	snprintf(warn, sizeof warn, "nccltune: %s: not a regular file (a FIFO)" TAIL, path);
	expect_no_opinion("fifo", path, warn);
	snprintf(path, sizeof path, "%s/loop-a", dir);
	snprintf(target, sizeof target, "%s/loop-b", dir);
	CHECK_INT(symlink(target, path), 0);
	CHECK_INT(symlink(path, target), 0);
	snprintf(warn, sizeof warn, "nccltune: %s: cannot open: %s" TAIL, path, strerror(ELOOP));
	expect_no_opinion("symlink-loop", path, warn);
	snprintf(path, sizeof path, "%s/missing", dir);
	snprintf(warn, sizeof warn, "nccltune: %s: cannot open: %s" TAIL, path, strerror(ENOENT));
	expect_no_opinion("missing", path, warn);
	expect_no_opinion("relative", "tables/t.txt", "nccltune: NCCLTUNE_TUNER_TABLE=tables/t.txt "
	                  "is not an absolute path" TAIL);
	/* unset (or empty): no table and nothing to warn about, one INFO line */
	expect_no_opinion("unset", NULL, NULL);
	CHECK_INT(h_log_exact(H_INFO, "nccltune: NCCLTUNE_TUNER_TABLE is not set; no table, NCCL "
	                      "decides"), 2);
	expect_no_opinion("empty-env", "", NULL);

	/* the limits themselves are accepted: 4096 rules, exactly 1 MiB, a symlink to a file */
	text = many_rules(4096, &len);
	snprintf(path, sizeof path, "%s/4096-rules", dir);
	CHECK_INT(h_write(path, text, len), 0);
	free(text);
	accepted("4096-rules", path, 4096);
	memset(big, '\n', sizeof big);
	memcpy(big, "nccltune-tuner/1\n" GOOD_RULE, HEAD_GOOD_LEN);
	snprintf(path, sizeof path, "%s/one-mib", dir);
	CHECK_INT(h_write(path, big, 1u << 20), 0);
	accepted("one-mib", path, 1);
	snprintf(target, sizeof target, "%s/link-to-one-mib", dir);
	CHECK_INT(symlink(path, target), 0);
	accepted("symlink", target, 1);

	dlclose(pl.handle);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
	return check_status();
}
