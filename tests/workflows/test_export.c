/* test_export.c - golden files for every export format, for `show` and for the error
 * messages of hostile results files; the code lines of a hostile-but-accepted result;
 * the refusals that do not depend on the loader.
 *
 * Regenerate the goldens after an intended change (then review the diff):
 *   NCCLTUNE_UPDATE_GOLDEN=1 meson test -C BUILD workflows-export */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "workflows/export.h"
#include "fsutil.h"
#include "nccltune.h"
#include "result/summary.h"
#include "table.h"

static char golden_dir[PATH_MAX];
static bool update;

struct fmt { const char *name, *ext; };
static const struct fmt fmts[] = {
	{ "nccl-tuner", "nccl-tuner.table" }, { "sitecustomize", "sitecustomize.py" }, { "shell", "env.sh" }, { "dotenv", "nccl.env" },
	{ "nccl-conf", "nccl.conf" }, { "json", "env.json" }, { "nccl-tuner-csv", "tuner.csv" },
};

/* Compare `got` with golden/NAME, or rewrite it when updating. */
static void golden(const char *name, const char *got, size_t len)
{
	char path[PATH_MAX + 64], err[1024];
	char *want;
	size_t wlen = 0;

	snprintf(path, sizeof(path), "%s/%s", golden_dir, name);
	if (update) {
		CHECK_INT(fs_write_atomic(path, got, len, 0644, err, sizeof(err)), 0);
		return;
	}
	want = fs_read_file(path, 1 << 20, &wlen, err, sizeof(err));
	if (!want) {
		fprintf(stderr, "%s (regenerate with NCCLTUNE_UPDATE_GOLDEN=1)\n", err);
		CHECK(want != NULL);
		return;
	}
	if (wlen != len || memcmp(want, got, len) != 0) {
		fprintf(stderr, "golden %s differs; got:\n%.*s\n", name, (int)len, got);
		CHECK(!"output matches golden");
	}
	free(want);
}

/* Run one export through the public function into memory. */
static int export_mem(const char *path, const char *format, char **text, size_t *len,
                      char *err, size_t errlen)
{
	FILE *mem = open_memstream(text, len);
	int rc;

	if (!mem)
		return -1;
	rc = nccltune_export(path, format, mem, err, errlen);
	fclose(mem);
	return rc;
}

/* Every line is a comment, empty, or one of `allowed` code lines' shapes. */
static void lines_safe(const char *text, const char *format)
{
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		CHECK(nl != NULL);                 /* every line ends with a newline */
		CHECK(n <= 202);                    /* the tuner plugin reads 256-byte lines */
		for (size_t i = 0; i < n; i++)   /* cJSON indents with tabs */
			CHECK(((unsigned char)p[i] >= 0x20 && (unsigned char)p[i] < 0x7f) ||
			      (p[i] == '\t' && strcmp(format, "json") == 0));
		if (n > 0 && p[0] != '#') {
			char line[1024];

			snprintf(line, sizeof(line), "%.*s", (int)(n < 1000 ? n : 1000), p);
			if (strcmp(format, "shell") == 0) {
				CHECK(strncmp(line, "export NCCL_", 12) == 0);
				CHECK(strchr(line, '\'') != NULL);
				/* exactly two single quotes: no quote inside the value */
				CHECK(strchr(strchr(line, '\'') + 1, '\'') == strrchr(line, '\''));
				CHECK(line[strlen(line) - 1] == '\'');
				CHECK(!strchr(line, '`') && !strchr(line, '$') && !strchr(line, '"'));
			} else if (strcmp(format, "sitecustomize") == 0) {
				CHECK(!strchr(line, '`') && !strchr(line, '$') && !strchr(line, '\''));
				/* the fixed lines of the block, and one pair per line */
				CHECK(strcmp(line, "import os as _os") == 0 ||
				      strcmp(line, "if _os.environ.get(\"NCCLTUNE_OFF\") != \"1\":") == 0 ||
				      strcmp(line, "    for _k, _v in (") == 0 ||
				      (strncmp(line, "        (\"NCCL_", 15) == 0 &&
				       strcmp(line + strlen(line) - 3, "\"),") == 0) ||
				      strcmp(line, "        # pinned: set when the session ran (it measured "
				             "with them)") == 0 ||
				      strcmp(line, "    ):") == 0 ||
				      strcmp(line, "        if _k not in _os.environ:") == 0 ||
				      strcmp(line, "            _os.environ[_k] = _v") == 0);
			} else if (strcmp(format, "dotenv") == 0) {
				CHECK(strncmp(line, "NCCL_", 5) == 0);
				CHECK(!strpbrk(line, "`$'\"\\ #"));
			} else if (strcmp(format, "nccl-conf") == 0) {
				/* NAME=value, the name NCCL's: the value is taken literally by NCCL */
				CHECK(strncmp(line, "NCCL_", 5) == 0 && strchr(line, '=') != NULL);
			}
		}
		p += n + (nl ? 1 : 0);
	}
}

static void test_goldens(void)
{
	static const char *const fixtures[][2] = {
		{ "measured", "measured" }, { "model", "model" }, { "defaults-best", "defaults-best" },
		{ "hostile/accepted.json", "accepted" },
	};

	for (size_t f = 0; f < sizeof(fixtures) / sizeof(fixtures[0]); f++) {
		for (size_t k = 0; k < sizeof(fmts) / sizeof(fmts[0]); k++) {
			char *text = NULL, name[256], err[1024] = "";
			size_t len = 0;
			int rc = export_mem(fixtures[f][0], fmts[k].name, &text, &len, err, sizeof(err));

			if (rc != NCCLTUNE_OK)
				fprintf(stderr, "%s %s: %s\n", fixtures[f][0], fmts[k].name, err);
			CHECK_INT(rc, NCCLTUNE_OK);
			if (rc == NCCLTUNE_OK) {
				snprintf(name, sizeof(name), "%s.%s", fixtures[f][1], fmts[k].ext);
				golden(name, text, len);
				lines_safe(text, fmts[k].name);
				if (strcmp(fmts[k].name, "nccl-tuner") == 0) {
					/* what the plugin reads: the table parses as a whole */
					struct tuner_table t;

					CHECK_INT(tuner_table_parse(text, len, &t, err, sizeof(err)), 0);
					tuner_table_free(&t);
				}
			}
			free(text);
		}
	}
	for (size_t f = 0; f < 3; f++) {
		char *text = NULL, name[256], err[1024] = "";
		size_t len = 0;
		FILE *mem = open_memstream(&text, &len);
		static const char *const shows[] = { "measured", "model", "noconfig" };

		CHECK_INT(nccltune_show(shows[f], mem, err, sizeof(err)), NCCLTUNE_OK);
		fclose(mem);
		snprintf(name, sizeof(name), "%s.show.txt", shows[f]);
		golden(name, text, len);
		free(text);
	}
}

/* The accepted hostile file's code is exactly what its validated values give. */
static void test_accepted_code(void)
{
	char *text = NULL, err[1024];
	size_t len = 0;

	CHECK_INT(export_mem("hostile/accepted.json", "sitecustomize", &text, &len, err,
	                     sizeof(err)), NCCLTUNE_OK);
	CHECK_CONTAINS(text, "    for _k, _v in (\n"
	               "        (\"NCCL_ALGO\", \"ring;allreduce:^tree\"),\n"
	               "        (\"NCCL_PROTO\", \"LL\"),\n"
	               "        # pinned: set when the session ran (it measured with them)\n"
	               "        (\"NCCL_SOCKET_IFNAME\", \"=eth0,^docker\"),\n"
	               "    ):\n"
	               "        if _k not in _os.environ:\n"
	               "            _os.environ[_k] = _v\n"
	               EXPORT_MARK_END "\n");
	/* the hostile GPU name arrives as an inert comment */
	CHECK_CONTAINS(text, "\n# machine: 1 x <script>alert(1)</script> \"GPU\" `id` $(id) + 1 x ");
	free(text);
	text = NULL;
	CHECK_INT(export_mem("hostile/accepted.json", "nccl-tuner-csv", &text, &len, err,
	                     sizeof(err)), NCCLTUNE_OK);
	/* a list for NCCL_ALGO cannot be a row */
	CHECK_CONTAINS(text, "# No rows: the tuned configuration has NCCL_ALGO=ring;allreduce:^tree");
	CHECK(strstr(text, "\nallreduce,") == NULL);
	free(text);
}

static void test_errors(void)
{
	struct dirent **list = NULL;
	char *all = NULL;
	size_t alen = 0;
	FILE *mem = open_memstream(&all, &alen);
	int n = scandir("hostile", &list, NULL, alphasort);

	CHECK(n > 30);
	for (int i = 0; i < n; i++) {
		const char *f = list[i]->d_name;
		char path[512], err[2048] = "", *text = NULL;
		size_t len = 0;
		int rc;

		if (f[0] == '.' || strcmp(f, "accepted.json") == 0) {
			free(list[i]);
			continue;
		}
		snprintf(path, sizeof(path), "hostile/%s", f);
		rc = export_mem(path, "shell", &text, &len, err, sizeof(err));
		CHECK_INT(rc, NCCLTUNE_USAGE);
		CHECK_INT(len, 0);                  /* nothing at all is written */
		fprintf(mem, "%s: %d: %s\n", f, rc, err);
		free(text);
		free(list[i]);
	}
	free(list);
	fclose(mem);
	golden("errors.txt", all, alen);
	free(all);
}

static void test_statuses(void)
{
	char *text = NULL, err[1024] = "";
	size_t len = 0;

	for (size_t k = 0; k < sizeof(fmts) / sizeof(fmts[0]); k++) {
		CHECK_INT(export_mem("noconfig", fmts[k].name, &text, &len, err, sizeof(err)),
		          NCCLTUNE_NO_CONFIG);
		CHECK_CONTAINS(err, "noconfig/results.json: no configuration worked");
		CHECK_INT(len, 0);
		free(text);
		text = NULL;
	}
	CHECK_INT(export_mem("measured", "yaml", &text, &len, err, sizeof(err)), NCCLTUNE_USAGE);
	CHECK_CONTAINS(err, "unknown export format 'yaml'");
	free(text);
	text = NULL;
	CHECK_INT(export_mem("no-such-session", "shell", &text, &len, err, sizeof(err)),
	          NCCLTUNE_USAGE);
	CHECK_CONTAINS(err, "no-such-session");
	free(text);
	/* the list of formats is what export_render accepts, with the session's file names */
	for (size_t k = 0; nccltune_export_formats[k]; k++) {
		CHECK(k < sizeof(fmts) / sizeof(fmts[0]));
		if (k >= sizeof(fmts) / sizeof(fmts[0]))
			break;
		CHECK_STR(nccltune_export_formats[k], fmts[k].name);
		CHECK_STR(nccltune_export_filename(fmts[k].name), fmts[k].ext);
	}
	CHECK(nccltune_export_filename("yaml") == NULL);
	CHECK(nccltune_export_filename(NULL) == NULL);
}

/* A summary built by hand, as a caller that bypasses the loader might: origin "crafted",
 * one variable NCCL_THREAD_THRESHOLDS=value (v must outlive s; a tuning variable
 * whose values are free text). */
static void crafted(struct summary *s, struct summary_var *v, const char *value)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->origin, sizeof(s->origin), "crafted");
	s->source = "measured";
	s->fp.gpu_count = -1;
	s->best.present = true;
	v->name = "NCCL_THREAD_THRESHOLDS";
	v->value = value;
	s->best.env.n = 1;
	s->best.env.v = v;
}

/* nccl-conf: NCCL reads a line to its end and keeps 1023 bytes of a value, so a value it
 * would cut or a line it would split is refused, whoever built the summary. */
static void test_nccl_conf_limits(void)
{
	static char longv[1100];
	struct summary s;
	struct summary_var v;
	char *text = NULL, err[1024] = "";
	size_t len = 0;

	memset(longv, 'a', sizeof(longv) - 1);
	crafted(&s, &v, longv);
	CHECK_INT(export_nccl_conf(&s, NULL, stdout, err, sizeof(err)), NCCLTUNE_USAGE);
	CHECK_CONTAINS(err, "crafted: best.env.NCCL_THREAD_THRESHOLDS");
	CHECK_CONTAINS(err, "as nccl-conf");
	v.value = "eth0";
	CHECK_INT(export_render_string(&s, "nccl-conf", NULL, &text, &len, err, sizeof(err)), NCCLTUNE_OK);
	CHECK_CONTAINS(text, "\nNCCL_THREAD_THRESHOLDS=eth0\n" EXPORT_MARK_END "\n");
	CHECK(strncmp(text, EXPORT_MARK_BEGIN "\n", strlen(EXPORT_MARK_BEGIN) + 1) == 0);
	free(text);
}

/* A summary built by hand (as a future caller might) with a value the loader would have
 * refused: every format refuses it on its own. */
static void test_defence_in_depth(void)
{
	static const char *const bad[] = { "LL'; id; '", "LL\nimport os", "$(id)", "a b", "`id`" };
	struct summary s;
	struct summary_var v;

	for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
		crafted(&s, &v, bad[b]);
		for (size_t k = 0; k < sizeof(fmts) / sizeof(fmts[0]); k++) {
			char *text = NULL, err[1024] = "";
			size_t len = 0;

			CHECK_INT(export_render_string(&s, fmts[k].name, NULL, &text, &len, err, sizeof(err)),
			          NCCLTUNE_USAGE);
			CHECK(text == NULL);
			CHECK_CONTAINS(err, "crafted: best.env.NCCL_THREAD_THRESHOLDS");
		}
		v.name = "PATH";
		v.value = "LL";
		CHECK_INT(export_sitecustomize(&s, NULL, stdout, NULL, 0), NCCLTUNE_USAGE);
	}
}

/* A results file whose best.env holds a variable an export may not set (a loader, a site
 * setting, a logging variable, a name nccltune does not know) loads - the loader checks
 * syntax - and every format refuses it, naming the key, writing nothing. */
static void test_roles(void)
{
	static const struct { const char *file, *name, *why; } cases[] = {
		{ "roles/net-plugin.json", "best.env.NCCL_NET_PLUGIN", "a loader variable" },
		{ "roles/tuner-plugin.json", "best.env.NCCL_TUNER_PLUGIN", "only to nccltune's own plugin" },
		{ "roles/profiler-plugin.json", "best.env.NCCL_PROFILER_PLUGIN", "a loader variable" },
		{ "roles/env-plugin.json", "best.env.NCCL_ENV_PLUGIN", "a loader variable" },
		{ "roles/debug-file.json", "best.env.NCCL_DEBUG_FILE", "a loader variable" },
		{ "roles/conf-file.json", "best.env.NCCL_CONF_FILE", "a loader variable" },
		{ "roles/setting.json", "best.env.NCCL_SOCKET_IFNAME", "exported only as pinned" },
		{ "roles/debug.json", "best.env.NCCL_DEBUG", "a logging variable" },
		{ "roles/unknown.json", "best.env.NCCL_FUTURE_KNOB", "not a tuning variable nccltune knows" },
		/* pinned: a site setting is exported (marked), a loader or logging one refused */
		{ "roles/pinned-loader.json", "pinned.NCCL_DEBUG_FILE", "the session ran with it set" },
		{ "roles/pinned-debug.json", "pinned.NCCL_DEBUG", "a logging variable" },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (size_t k = 0; k < sizeof(fmts) / sizeof(fmts[0]); k++) {
			char *text = NULL, err[1024] = "", want[128];
			size_t len = 0;

			CHECK_INT(export_mem(cases[c].file, fmts[k].name, &text, &len, err, sizeof(err)),
			          NCCLTUNE_USAGE);
			CHECK_INT(len, 0);
			snprintf(want, sizeof(want), "%s: %s: ", cases[c].file, cases[c].name);
			CHECK_CONTAINS(err, want);
			CHECK_CONTAINS(err, cases[c].why);
			free(text);
		}
	}
}

/* A result with per-size rules: its table has exactly its rules; the env-style exports
 * need the session's own table (exports/nccl-tuner.table), which the fixture lacks, so
 * they refuse saying how to get it; NCCL_ALGO next to rules, and a rule for a size the
 * workload did not tune, are refused by every format. */
static void test_rules_exports(void)
{
	char *text = NULL, err[2048] = "";
	size_t len = 0;
	struct tuner_table t;

	CHECK_INT(export_mem("rules", "nccl-tuner", &text, &len, err, sizeof(err)), NCCLTUNE_OK);
	CHECK_INT(tuner_table_parse(text, len, &t, err, sizeof(err)), 0);
	CHECK_INT(t.nrules, 2);
	if (t.nrules == 2) {
		CHECK_INT(t.rules[0].min_bytes, 43008);
		CHECK_INT(t.rules[0].max_bytes, 43008);
		CHECK_INT(t.rules[0].nranks, TUNER_ANY);   /* no journal: the measured ranks unknown */
		CHECK_INT(t.rules[0].nnodes, TUNER_ANY);
		CHECK_INT(t.rules[0].algo, TUNER_ALGO_TREE);
		CHECK_INT(t.rules[0].proto, TUNER_PROTO_SIMPLE);
		CHECK_INT(t.rules[0].ctas, 2);
		CHECK_INT(t.rules[1].min_bytes, 1048576);
		CHECK_INT(t.rules[1].algo, TUNER_ANY);
		CHECK_INT(t.rules[1].proto, TUNER_PROTO_SIMPLE);
		CHECK_INT(t.rules[1].ctas, 0);
	}
	tuner_table_free(&t);
	CHECK(strstr(text, "Derived from the tuned environment") == NULL);
	free(text);
	for (size_t k = 1; k < sizeof(fmts) / sizeof(fmts[0]) - 1; k++) {
		text = NULL;
		CHECK_INT(export_mem("rules", fmts[k].name, &text, &len, err, sizeof(err)),
		          NCCLTUNE_USAGE);
		CHECK_CONTAINS(err, "rules/results.json: best.rules: the table NCCLTUNE_TUNER_TABLE "
		               "would name, ");
		CHECK_CONTAINS(err, "/rules/exports/nccl-tuner.table, is missing");
		CHECK_INT(len, 0);
		free(text);
	}
	for (size_t k = 0; k < sizeof(fmts) / sizeof(fmts[0]); k++) {
		bool table = strncmp(fmts[k].name, "nccl-tuner", 10) == 0;

		text = NULL;
		CHECK_INT(export_mem("rules-bad/untuned-size.json", fmts[k].name, &text, &len, err,
		                     sizeof(err)), strcmp(fmts[k].name, "nccl-tuner") == 0 ||
		                                   !table ? NCCLTUNE_USAGE : NCCLTUNE_OK);
		if (!table || strcmp(fmts[k].name, "nccl-tuner") == 0)
			CHECK_CONTAINS(err, "best.rules[2].bytes: 4096 is not a size of the workload");
		free(text);
		text = NULL;
		if (table)
			continue;
		CHECK_INT(export_mem("rules-bad/algo-env.json", fmts[k].name, &text, &len, err,
		                     sizeof(err)), NCCLTUNE_USAGE);
		CHECK_CONTAINS(err, "best.env.NCCL_ALGO: with best.rules nccltune's plugin makes the "
		               "choice");
		free(text);
	}
}

int main(void)
{
	const char *root = getenv("NCCLTUNE_SOURCE_ROOT");
	char data[PATH_MAX];

	if (!root) {
		fprintf(stderr, "NCCLTUNE_SOURCE_ROOT is not set (run through meson test)\n");
		return 1;
	}
	update = getenv("NCCLTUNE_UPDATE_GOLDEN") != NULL;
	snprintf(golden_dir, sizeof(golden_dir), "%s/tests/workflows/golden", root);
	snprintf(data, sizeof(data), "%s/tests/workflows/data", root);
	/* relative paths keep the messages and headers in the goldens machine-independent */
	if (chdir(data) != 0) {
		perror(data);
		return 1;
	}
	test_goldens();
	test_accepted_code();
	test_errors();
	test_statuses();
	test_defence_in_depth();
	test_nccl_conf_limits();
	test_roles();
	test_rules_exports();
	if (update)
		fprintf(stderr, "goldens rewritten in %s: review the diff\n", golden_dir);
	return check_status();
}
