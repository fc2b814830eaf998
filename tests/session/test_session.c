/* test_session.c - whole sessions through the public API against the fake probe (its
 * latency is an analytic function of the NCCL_* variables, see fakeprobe.c): results,
 * pruning, pinned variables, NVLS, retries, timeouts, resume, interrupts, warm start,
 * time limit, --try configurations, and results.json read back by the strict loader of
 * the exports.
 * argv[1] is the fake probe. */
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"
#include "fsutil.h"
#include "nccltune.h"
#include "result/summary.h"

static const char *fake;
static char root[] = "/tmp/nccltune-session-XXXXXX";

/* A space where half the points fail (Tree) and the optimum is known:
 * Ring with NCCL_MAX_NCHANNELS=2. 16 points. */
static const char *small_space =
	"{\"schema\": \"nccltune-space/1\", \"params\": {"
	"\"NCCL_ALGO\": {\"values\": [\"Ring\", \"Tree\"]},"
	"\"NCCL_MAX_NCHANNELS\": {\"int\": [1, 8]}}}";

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", root, name);
}

static cJSON *read_json(const char *dir, const char *file)
{
	char path[512], err[512];
	size_t len;
	char *text;
	cJSON *j;

	snprintf(path, sizeof path, "%s/%s", dir, file);
	text = fs_read_file(path, 1 << 24, &len, err, sizeof err);
	if (!text) {
		fprintf(stderr, "%s\n", err);
		return NULL;
	}
	j = cJSON_Parse(text);
	free(text);
	return j;
}

/* Run records of dir's journal (phase NULL: all), checking every line parses. */
static int journal_runs(const char *dir, const char *phase)
{
	char path[512], line[1 << 16];
	FILE *f;
	int n = 0, lineno = 0;

	snprintf(path, sizeof path, "%s/journal.jsonl", dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		cJSON *r = cJSON_Parse(line);
		const cJSON *t = cJSON_GetObjectItem(r, "type"), *ph = cJSON_GetObjectItem(r, "phase");

		lineno++;
		CHECK(r != NULL);
		if (cJSON_IsString(t) && strcmp(t->valuestring, "run") == 0 &&
		    (!phase || (cJSON_IsString(ph) && strcmp(ph->valuestring, phase) == 0)))
			n++;
		cJSON_Delete(r);
	}
	fclose(f);
	return n;
}

/* The idx-th run record (0-based) of dir's journal, or NULL. */
static cJSON *journal_run(const char *dir, int idx)
{
	char path[512], line[1 << 16];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof path, "%s/journal.jsonl", dir);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	while (fgets(line, sizeof line, f)) {
		cJSON *r = cJSON_Parse(line);
		const cJSON *t = cJSON_GetObjectItem(r, "type");

		if (cJSON_IsString(t) && strcmp(t->valuestring, "run") == 0 && n++ == idx) {
			fclose(f);
			return r;
		}
		cJSON_Delete(r);
	}
	fclose(f);
	return NULL;
}

static int count_lines(const char *path, const char *needle)
{
	char line[8192];
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (!needle || strstr(line, needle))
			n++;
	fclose(f);
	return n;
}

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
	const cJSON *x = cJSON_GetObjectItem(o, a);

	if (b)
		x = cJSON_GetObjectItem(x, b);
	return cJSON_IsString(x) ? x->valuestring : NULL;
}

static double num_at(const cJSON *o, const char *a, const char *b)
{
	const cJSON *x = cJSON_GetObjectItem(o, a);

	if (b)
		x = cJSON_GetObjectItem(x, b);
	return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

static void write_file(const char *path, const char *text)
{
	char err[256];

	CHECK_INT(fs_write_atomic(path, text, strlen(text), 0644, err, sizeof err), 0);
}

/* A session on the fake probe with the common settings. */
static nccltune_session *new_session(const char *out, int budget, const char *strategy,
                                     const char *space_file, FILE *progress)
{
	nccltune_session *s = nccltune_session_create();

	CHECK(s != NULL);
	CHECK_INT(nccltune_session_set_probe(s, fake), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_set_budget(s, budget), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_set_strategy(s, strategy), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_set_seed(s, 3), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_set_out_dir(s, out), NCCLTUNE_OK);
	if (space_file)
		CHECK_INT(nccltune_session_set_space_file(s, space_file), NCCLTUNE_OK);
	nccltune_session_set_progress(s, progress);
	return s;
}

/* The fake probe's objective for 122 x 43008 B with Ring and `maxch` channels. */
static double ring_objective(int maxch)
{
	return 122 * (18 + 0.7 * fabs(maxch - 2.0) + 0.2 * 15 + 0.3 * 5 + 1.5 + 43008 / 8000.0);
}

static void test_small_space(void)
{
	char out[256], space[256], log[256], err[1024], prog_path[256];
	FILE *prog;
	nccltune_session *s;
	cJSON *res, *best, *it;
	struct summary *sum = NULL;
	bool tree_pruned = false;
	char *text;
	size_t len;

	path_in(out, sizeof out, "small");
	path_in(space, sizeof space, "small-space.json");
	path_in(log, sizeof log, "small.log");
	path_in(prog_path, sizeof prog_path, "small.progress");
	write_file(space, small_space);
	setenv("FAKEPROBE_LOG", log, 1);
	prog = fopen(prog_path, "w+");
	s = new_session(out, 30, "random", space, prog);
	CHECK_INT(nccltune_session_run(s), NCCLTUNE_OK);
	CHECK_STR(nccltune_session_out_dir(s), out);
	nccltune_session_destroy(s);
	fclose(prog);
	unsetenv("FAKEPROBE_LOG");

	res = read_json(out, "results.json");
	CHECK(res != NULL);
	/* Every run counted: baseline, search (until the space was exhausted), finals. */
	CHECK_INT(num_at(res, "evaluations", NULL), journal_runs(out, NULL));
	CHECK_INT(count_lines(log, NULL), journal_runs(out, NULL));
	CHECK(journal_runs(out, NULL) <= 30);
	CHECK_INT(journal_runs(out, "baseline"), 1);
	CHECK(journal_runs(out, "final") >= 4);
	best = cJSON_GetObjectItem(res, "best");
	CHECK_STR(str_at(best, "env", "NCCL_ALGO"), "Ring");
	CHECK_STR(str_at(best, "env", "NCCL_MAX_NCHANNELS"), "2");
	CHECK_NEAR(num_at(best, "objective_us", NULL), ring_objective(2), 1e-3);
	/* The baseline sets nothing: 16 channels, no algorithm. */
	CHECK_NEAR(num_at(res, "baseline", "objective_us"),
	           122 * (18 + 3 + 0.7 * 14 + 0.2 * 15 + 0.3 * 5 + 1.5 + 43008 / 8000.0), 1e-3);
	CHECK(num_at(res, "gain", "ratio") > 1.0);
	CHECK_NEAR(num_at(res, "gain", "ratio"),
	           num_at(res, "baseline", "objective_us") / num_at(best, "objective_us", NULL), 1e-3);
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(res, "pruned"))
		if (str_at(it, "when", "NCCL_ALGO") && strcmp(str_at(it, "when", "NCCL_ALGO"), "Tree") == 0)
			tree_pruned = true;
	CHECK(tree_pruned);
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(res, "failures")) {
		CHECK_STR(str_at(it, "stage", NULL), "capture");
		CHECK_STR(str_at(it, "env", "NCCL_ALGO"), "Tree");
	}
	/* Tree was never run again once pruned: at most min_failures distinct Tree points. */
	CHECK(count_lines(log, "NCCL_ALGO=Tree") <= 3);
	CHECK_INT(count_lines(log, "NCCL_NVLS_ENABLE"), 0);
	CHECK_INT(count_lines(log, "--bytes 43008 --ops 122 --dtype bf16 --iters 200 --warmup 20"),
	          count_lines(log, NULL));
	cJSON_Delete(res);

	/* results.json passes the exports' strict loader (docs/formats.md). */
	CHECK_INT(summary_load(out, SUMMARY_JOURNAL, &sum, err, sizeof err), 0);
	if (sum) {
		CHECK_STR(sum->source, "measured");
		CHECK(sum->best.present);
		CHECK_INT(sum->nruns, journal_runs(out, NULL));
		summary_destroy(sum);
	} else {
		fprintf(stderr, "summary_load: %s\n", err);
	}
	/* Exports and report were written through the public API. */
	{
		static const char *const files[] = {"exports/sitecustomize.py", "exports/env.sh",
		                                    "exports/nccl.env", "exports/nccl.conf",
		                                    "exports/env.json", "exports/tuner.csv",
		                                    "report.html"};
		char envsh[512];

		for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
			char p[512];

			snprintf(p, sizeof p, "%s/%s", out, files[i]);
			CHECK(access(p, R_OK) == 0);
		}
		snprintf(envsh, sizeof envsh, "%s/exports/env.sh", out);
		text = fs_read_file(envsh, 1 << 20, &len, err, sizeof err);
		CHECK_CONTAINS(text, "NCCL_MAX_NCHANNELS");
		free(text);
	}
	path_in(prog_path, sizeof prog_path, "small.progress");
	text = fs_read_file(prog_path, 1 << 20, &len, err, sizeof err);
	CHECK_CONTAINS(text, "NCCL_ALGO=Tree: ");
	CHECK_CONTAINS(text, "baseline:");
	CHECK_CONTAINS(text, "nccltune export --format shell");
	CHECK(text && !strstr(text, "MODEL"));
	free(text);

	/* The same folder cannot be tuned twice by accident. */
	s = new_session(out, 10, "random", space, NULL);
	CHECK_INT(nccltune_session_run(s), NCCLTUNE_USAGE);
	CHECK_CONTAINS(nccltune_session_error(s), "--resume");
	nccltune_session_destroy(s);
}

static void test_pinned_and_model(void)
{
	char out[256], space[256], log[256], err[512];
	nccltune_session *s;
	cJSON *res, *hdr = NULL;
	int runs;

	path_in(out, sizeof out, "pinned");
	path_in(space, sizeof space, "pinned-space.json");
	path_in(log, sizeof log, "pinned.log");
	write_file(space, "{\"schema\": \"nccltune-space/1\", \"params\": {"
	           "\"NCCL_PROTO\": {\"values\": [\"LL\", \"Simple\", null]},"
	           "\"NCCL_MAX_NCHANNELS\": {\"int\": [1, 4]}},"
	           "\"fixed\": {\"NCCL_P2P_LEVEL\": \"SYS\", \"NCCL_BUFFSIZE\": \"131072\"}}");
	setenv("FAKEPROBE_LOG", log, 1);
	setenv("FAKEPROBE_SOURCE", "model", 1);
	setenv("NCCL_PROTO", "Simple", 1);
	setenv("NCCL_P2P_LEVEL", "PHB", 1);
	s = new_session(out, 12, "random", space, NULL);
	CHECK_INT(nccltune_session_run(s), NCCLTUNE_OK);
	nccltune_session_destroy(s);
	unsetenv("NCCL_PROTO");
	unsetenv("NCCL_P2P_LEVEL");
	unsetenv("FAKEPROBE_SOURCE");
	unsetenv("FAKEPROBE_LOG");

	runs = journal_runs(out, NULL);
	CHECK(runs > 0);
	/* Every run saw the user's values, never the space's, and the fixed buffer size. */
	CHECK_INT(count_lines(log, "NCCL_PROTO=Simple"), runs);
	CHECK_INT(count_lines(log, "NCCL_P2P_LEVEL=PHB"), runs);
	CHECK_INT(count_lines(log, "NCCL_P2P_LEVEL=SYS"), 0);
	CHECK_INT(count_lines(log, "NCCL_BUFFSIZE=131072"), runs);
	CHECK_INT(count_lines(log, "NCCL_NVLS_ENABLE"), 0);
	res = read_json(out, "results.json");
	CHECK_STR(str_at(res, "pinned", "NCCL_PROTO"), "Simple");
	CHECK_STR(str_at(res, "pinned", "NCCL_P2P_LEVEL"), "PHB");
	CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(res, "best"), "env"),
	                          "NCCL_PROTO") == NULL);
	CHECK_STR(str_at(res, "source", NULL), "model");
	CHECK_STR(str_at(res, "model", NULL), "fake");
	cJSON_Delete(res);
	/* The journal header's space no longer searches the pinned variable. */
	{
		char path[512];
		FILE *f;
		char line[1 << 16];

		snprintf(path, sizeof path, "%s/journal.jsonl", out);
		f = fopen(path, "r");
		if (f && fgets(line, sizeof line, f))
			hdr = cJSON_Parse(line);
		if (f)
			fclose(f);
	}
	CHECK(hdr != NULL);
	CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(hdr, "space"), "params"),
	                          "NCCL_PROTO") == NULL);
	CHECK_STR(str_at(hdr, "pinned", "NCCL_P2P_LEVEL"), "PHB");
	cJSON_Delete(hdr);
	(void)err;
}

/* Cut dir's journal after the header and `keep` runs (plus a torn line), drop results. */
static void cut_journal(const char *dir, int keep)
{
	char path[512], err[512], *text, *p;
	size_t len;
	int lines = 0;

	snprintf(path, sizeof path, "%s/journal.jsonl", dir);
	text = fs_read_file(path, 1 << 24, &len, err, sizeof err);
	CHECK(text != NULL);
	if (!text)
		return;
	for (p = text; *p && lines < keep + 1; p++)
		if (*p == '\n')
			lines++;
	CHECK_INT(lines, keep + 1);
	/* a torn record, as if the tuner was killed while writing */
	memcpy(p, "{\"type\": \"run\", \"ru", 19);
	CHECK_INT(fs_write_atomic(path, text, (size_t)(p - text) + 19, 0644, err, sizeof err), 0);
	free(text);
	snprintf(path, sizeof path, "%s/results.json", dir);
	unlink(path);
}

static void test_resume(const char *strategy, int budget, int keep)
{
	char a[256], b[256], log[256], name[64];
	nccltune_session *s;
	cJSON *ra, *rb;

	snprintf(name, sizeof name, "resume-%s-a", strategy);
	path_in(a, sizeof a, name);
	snprintf(name, sizeof name, "resume-%s-b", strategy);
	path_in(b, sizeof b, name);
	snprintf(name, sizeof name, "resume-%s.log", strategy);
	path_in(log, sizeof log, name);
	s = new_session(a, budget, strategy, NULL, NULL);
	CHECK_INT(nccltune_session_run(s), NCCLTUNE_OK);
	nccltune_session_destroy(s);
	s = new_session(b, budget, strategy, NULL, NULL);
	CHECK_INT(nccltune_session_run(s), NCCLTUNE_OK);
	nccltune_session_destroy(s);
	cut_journal(b, keep);

	setenv("FAKEPROBE_LOG", log, 1);
	s = nccltune_session_create();
	nccltune_session_set_progress(s, NULL);
	CHECK_INT(nccltune_session_resume(s, b), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_set_budget(s, 99), NCCLTUNE_USAGE);   /* settings are the journal's */
	CHECK_INT(nccltune_session_run(s), NCCLTUNE_OK);
	nccltune_session_destroy(s);
	unsetenv("FAKEPROBE_LOG");

	/* Nothing measured ran again; the budget counts what was spent before. */
	CHECK_INT(journal_runs(b, NULL), journal_runs(a, NULL));
	CHECK_INT(count_lines(log, NULL), journal_runs(a, NULL) - keep);
	CHECK(journal_runs(a, NULL) <= budget);
	/* The resumed session made the same choices as the uninterrupted one. */
	ra = read_json(a, "results.json");
	rb = read_json(b, "results.json");
	CHECK(ra && rb);
	if (ra && rb) {
		char *ea = cJSON_PrintUnformatted(cJSON_GetObjectItem(cJSON_GetObjectItem(ra, "best"), "env"));
		char *eb = cJSON_PrintUnformatted(cJSON_GetObjectItem(cJSON_GetObjectItem(rb, "best"), "env"));

		CHECK_STR(ea, eb);
		CHECK_NEAR(num_at(ra, "best", "objective_us"), num_at(rb, "best", "objective_us"), 1e-6);
		CHECK_INT(num_at(ra, "evaluations", NULL), num_at(rb, "evaluations", NULL));
		free(ea);
		free(eb);
	}
	for (int i = 0; i < journal_runs(a, NULL); i++) {
		cJSON *x = journal_run(a, i), *y = journal_run(b, i);
		char *px = cJSON_PrintUnformatted(cJSON_GetObjectItem(x, "point"));
		char *py = cJSON_PrintUnformatted(cJSON_GetObjectItem(y, "point"));

		CHECK_STR(px, py);
		CHECK_STR(str_at(x, "phase", NULL), str_at(y, "phase", NULL));
		free(px);
		free(py);
		cJSON_Delete(x);
		cJSON_Delete(y);
	}
	cJSON_Delete(ra);
	cJSON_Delete(rb);
}

static void test_interrupt(void)
{
	char out[256], log[256];
	nccltune_session *s;
	pid_t child;
	int status, runs;

	path_in(out, sizeof out, "interrupt");
	path_in(log, sizeof log, "interrupt.log");
	setenv("FAKEPROBE_LOG", log, 1);
	setenv("FAKEPROBE_SLEEP_MS", "60", 1);
	child = fork();
	if (child == 0) {
		/* Interrupt once two runs are recorded, whatever the machine's speed. */
		for (int i = 0; i < 6000 && journal_runs(out, NULL) < 2; i++)
			usleep(10 * 1000);
		kill(getppid(), SIGINT);
		_exit(0);
	}
	s = new_session(out, 25, "random", NULL, NULL);
	CHECK_INT(nccltune_session_run(s), NCCLTUNE_INTERRUPTED);
	CHECK_CONTAINS(nccltune_session_error(s), "nccltune run --resume");
	nccltune_session_destroy(s);
	waitpid(child, &status, 0);
	unsetenv("FAKEPROBE_SLEEP_MS");
	runs = journal_runs(out, NULL);
	CHECK(runs >= 2 && runs < 25);
	s = nccltune_session_create();
	nccltune_session_set_progress(s, NULL);
	CHECK_INT(nccltune_session_resume(s, out), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_run(s), NCCLTUNE_OK);
	nccltune_session_destroy(s);
	unsetenv("FAKEPROBE_LOG");
	CHECK(journal_runs(out, NULL) <= 25);
	/* The run killed in flight was not recorded, and was run again: one extra start. */
	CHECK(count_lines(log, NULL) >= journal_runs(out, NULL));
	CHECK(count_lines(log, NULL) <= journal_runs(out, NULL) + 1);
	CHECK(access(out, F_OK) == 0);
}

static void test_retry_and_timeout(void)
{
	char out[256], space[256], state[256];
	nccltune_session *s;
	cJSON *res, *it;
	int crashes = 0, timeouts = 0;

	path_in(space, sizeof space, "ring-space.json");
	write_file(space, "{\"schema\": \"nccltune-space/1\", \"params\": {"
	           "\"NCCL_ALGO\": {\"values\": [\"Ring\"]}, \"NCCL_MAX_NCHANNELS\": {\"int\": [1, 4]}}}");
	/* Every configuration crashes once: each crash is retried, and learned from as ok. */
	path_in(out, sizeof out, "retry");
	path_in(state, sizeof state, "crash-once.state");
	setenv("FAKEPROBE_CRASH_ONCE", state, 1);
	s = new_session(out, 16, "random", space, NULL);
	CHECK_INT(nccltune_session_run(s), NCCLTUNE_OK);
	nccltune_session_destroy(s);
	unsetenv("FAKEPROBE_CRASH_ONCE");
	CHECK(journal_runs(out, "retry") >= 2);
	for (int i = 0; i < journal_runs(out, NULL); i++) {
		cJSON *r = journal_run(out, i), *next;

		if (strcmp(str_at(r, "outcome", NULL), "crash") == 0) {
			next = journal_run(out, i + 1);
			CHECK_STR(str_at(next, "phase", NULL), "retry");
			CHECK_STR(str_at(next, "outcome", NULL), "ok");
			cJSON_Delete(next);
		}
		cJSON_Delete(r);
	}
	res = read_json(out, "results.json");
	CHECK_STR(str_at(cJSON_GetObjectItem(res, "best"), "env", "NCCL_MAX_NCHANNELS"), "2");
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(res, "failures"))
		crashes += strcmp(str_at(it, "stage", NULL), "crash") == 0;
	CHECK(crashes >= 2);
	CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(res, "pruned")), 0);
	cJSON_Delete(res);

	/* One configuration hangs: killed at the deadline, retried, never chosen. */
	path_in(out, sizeof out, "timeout");
	setenv("FAKEPROBE_HANG_WHEN", "NCCL_MAX_NCHANNELS=3", 1);
	s = new_session(out, 14, "grid", space, NULL);
	CHECK_INT(nccltune_session_set_timeout(s, 1.0), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_run(s), NCCLTUNE_OK);
	nccltune_session_destroy(s);
	unsetenv("FAKEPROBE_HANG_WHEN");
	res = read_json(out, "results.json");
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(res, "failures")) {
		if (strcmp(str_at(it, "stage", NULL), "timeout") == 0) {
			timeouts += (int)num_at(it, "count", NULL);
			CHECK_STR(str_at(it, "env", "NCCL_MAX_NCHANNELS"), "3");
		}
	}
	CHECK_INT(timeouts, 2);
	CHECK_STR(str_at(cJSON_GetObjectItem(res, "best"), "env", "NCCL_MAX_NCHANNELS"), "2");
	cJSON_Delete(res);
}

static void test_failures(void)
{
	char out[256];
	nccltune_session *s;
	cJSON *res;

	/* Nothing works: exit status 4, best null, results still written. */
	path_in(out, sizeof out, "noconfig");
	setenv("FAKEPROBE_MODE", "init", 1);
	s = new_session(out, 6, "random", NULL, NULL);
	CHECK_INT(nccltune_session_run(s), NCCLTUNE_NO_CONFIG);
	nccltune_session_destroy(s);
	unsetenv("FAKEPROBE_MODE");
	res = read_json(out, "results.json");
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(res, "best")));
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(res, "baseline")));
	CHECK_INT(num_at(res, "evaluations", NULL), journal_runs(out, NULL));
	cJSON_Delete(res);

	/* A probe that cannot be started stops the session before any run. */
	path_in(out, sizeof out, "spawn");
	s = nccltune_session_create();
	nccltune_session_set_progress(s, NULL);
	CHECK_INT(nccltune_session_set_probe(s, "/nonexistent/nccltune-probe --x"), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_set_out_dir(s, out), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_run(s), NCCLTUNE_ERROR);
	CHECK_CONTAINS(nccltune_session_error(s), "/nonexistent/nccltune-probe");
	nccltune_session_destroy(s);

	/* No fingerprint is a warning, not an error. */
	path_in(out, sizeof out, "nofp");
	setenv("FAKEPROBE_FP_FAIL", "1", 1);
	s = new_session(out, 6, "random", NULL, NULL);
	CHECK_INT(nccltune_session_run(s), NCCLTUNE_OK);
	nccltune_session_destroy(s);
	unsetenv("FAKEPROBE_FP_FAIL");
	res = read_json(out, "results.json");
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(res, "fingerprint")));
	cJSON_Delete(res);
}

static void test_warm_start(void)
{
	char a[256], b[256], space[256], log[256];
	nccltune_session *s;
	cJSON *r, *ra;
	char *best_a = NULL, *first_warm = NULL;

	path_in(a, sizeof a, "small");   /* from test_small_space */
	path_in(b, sizeof b, "warm");
	path_in(space, sizeof space, "small-space.json");
	path_in(log, sizeof log, "warm.log");
	setenv("FAKEPROBE_LOG", log, 1);
	s = new_session(b, 12, "random", space, NULL);
	CHECK_INT(nccltune_session_set_warm_start(s, a), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_run(s), NCCLTUNE_OK);
	nccltune_session_destroy(s);
	unsetenv("FAKEPROBE_LOG");
	/* After the baseline, the old session's best configurations run first. */
	r = journal_run(b, 1);
	CHECK_STR(str_at(r, "phase", NULL), "warm");
	first_warm = cJSON_PrintUnformatted(cJSON_GetObjectItem(r, "env"));
	cJSON_Delete(r);
	ra = read_json(a, "results.json");
	best_a = cJSON_PrintUnformatted(cJSON_GetObjectItem(cJSON_GetObjectItem(ra, "best"), "env"));
	CHECK_STR(first_warm, best_a);
	cJSON_Delete(ra);
	free(first_warm);
	free(best_a);
	CHECK(journal_runs(b, "warm") >= 2);
	/* Same GPUs: the old session's Tree failures are known, so Tree never runs. */
	CHECK_INT(count_lines(log, "NCCL_ALGO=Tree"), 0);

	s = nccltune_session_create();
	CHECK_INT(nccltune_session_set_warm_start(s, "/nonexistent"), NCCLTUNE_USAGE);
	CHECK_CONTAINS(nccltune_session_error(s), "/nonexistent/journal.jsonl");
	nccltune_session_destroy(s);
}

static void test_time_limit(void)
{
	char out[256];
	nccltune_session *s;
	struct timespec t0, t1;
	cJSON *res;

	path_in(out, sizeof out, "timelimit");
	setenv("FAKEPROBE_SLEEP_MS", "40", 1);
	s = new_session(out, 1000, "random", NULL, NULL);
	CHECK_INT(nccltune_session_set_time_limit(s, 1.5), NCCLTUNE_OK);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_INT(nccltune_session_run(s), NCCLTUNE_OK);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	nccltune_session_destroy(s);
	unsetenv("FAKEPROBE_SLEEP_MS");
	CHECK((double)(t1.tv_sec - t0.tv_sec) < 6.0);
	res = read_json(out, "results.json");
	CHECK(res != NULL);
	CHECK(num_at(res, "evaluations", NULL) < 200);
	CHECK(cJSON_IsObject(cJSON_GetObjectItem(res, "best")));
	cJSON_Delete(res);
}

static void test_setters(void)
{
	char path[256];
	nccltune_session *s = nccltune_session_create();

	CHECK_INT(nccltune_session_set_budget(s, 1), NCCLTUNE_USAGE);
	CHECK_CONTAINS(nccltune_session_error(s), "--budget");
	CHECK_INT(nccltune_session_set_strategy(s, "annealing"), NCCLTUNE_USAGE);
	CHECK_CONTAINS(nccltune_session_error(s), "known: bo");
	CHECK_INT(nccltune_session_set_timeout(s, -1), NCCLTUNE_USAGE);
	CHECK_INT(nccltune_session_set_time_limit(s, NAN), NCCLTUNE_USAGE);
	CHECK_INT(nccltune_session_set_probe(s, "probe 'unterminated"), NCCLTUNE_USAGE);
	CHECK_CONTAINS(nccltune_session_error(s), "unterminated");
	CHECK_INT(nccltune_session_set_model(s, "pcie-gen5-8gpu"), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_set_probe(s, "x"), NCCLTUNE_USAGE);
	CHECK_CONTAINS(nccltune_session_error(s), "exclusive");
	CHECK_INT(nccltune_session_set_workload(s, "43008,zz", 1, NULL), NCCLTUNE_USAGE);
	CHECK_INT(nccltune_session_set_workload_file(s, "/nonexistent/w.json"), NCCLTUNE_USAGE);
	CHECK_CONTAINS(nccltune_session_error(s), "/nonexistent/w.json");
	path_in(path, sizeof path, "bad-workload.json");
	write_file(path, "{\"schema\": \"nccltune-workload/1\", \"dtype\": \"bf16\", \"collectives\": "
	           "[{\"op\": \"allreduce\", \"bytes\": 43008, \"count\": 122, \"extra\": 1}]}");
	CHECK_INT(nccltune_session_set_workload_file(s, path), NCCLTUNE_USAGE);
	CHECK_CONTAINS(nccltune_session_error(s), "collectives[0].extra");
	path_in(path, sizeof path, "bad-space.json");
	write_file(path, "{\"schema\": \"nccltune-space/1\", \"params\": {\"NCCL_ALGO\": "
	           "{\"values\": []}}}");
	CHECK_INT(nccltune_session_set_space_file(s, path), NCCLTUNE_USAGE);
	CHECK_CONTAINS(nccltune_session_error(s), "bad-space.json");
	CHECK_INT(nccltune_session_resume(s, "/nonexistent"), NCCLTUNE_USAGE);
	CHECK_CONTAINS(nccltune_session_error(s), "journal.jsonl");
	nccltune_session_destroy(s);
	nccltune_session_destroy(NULL);
	/* guards first, then a workload: refused, not silently dropped */
	s = nccltune_session_create();
	CHECK_INT(nccltune_session_set_guards(s, "1M"), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_set_workload(s, "43008", 122, NULL), NCCLTUNE_USAGE);
	CHECK_CONTAINS(nccltune_session_error(s), "--bytes: set the workload before the guard sizes");
	CHECK_INT(nccltune_session_set_workload_file(s, path), NCCLTUNE_USAGE);
	CHECK_CONTAINS(nccltune_session_error(s), "--workload: set the workload before");
	nccltune_session_destroy(s);
}

/* Without --probe/--model on a machine without GPUs: the default model, said loudly. */
static void test_default_model(void)
{
	char out[256], prog_path[256], jpath[512], err[256], *text, *hdr;
	nccltune_session *s;
	FILE *prog;
	size_t len;

	if (access("/dev/nvidia0", F_OK) == 0 || system("nvidia-smi -L >/dev/null 2>&1") == 0) {
		printf("a GPU is visible: the default-model test does not apply here\n");
		return;
	}
	path_in(out, sizeof out, "default");
	path_in(prog_path, sizeof prog_path, "default.progress");
	setenv("NCCLTUNE_MODEL_PROBE", fake, 1);
	prog = fopen(prog_path, "w+");
	s = nccltune_session_create();
	nccltune_session_set_progress(s, prog);
	CHECK_INT(nccltune_session_set_budget(s, 6), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_set_strategy(s, "random"), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_set_out_dir(s, out), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_run(s), NCCLTUNE_OK);
	nccltune_session_destroy(s);
	fclose(prog);
	unsetenv("NCCLTUNE_MODEL_PROBE");
	text = fs_read_file(prog_path, 1 << 20, &len, err, sizeof err);
	CHECK_CONTAINS(text, "no GPU visible: tuning the MODEL pcie-gen5-8gpu");
	CHECK_CONTAINS(text, "[MODEL ");
	CHECK_CONTAINS(text, "not a measurement");
	free(text);
	snprintf(jpath, sizeof jpath, "%s/journal.jsonl", out);
	hdr = fs_read_file(jpath, 1 << 24, &len, err, sizeof err);
	CHECK_CONTAINS(hdr, "\"--model\",\"pcie-gen5-8gpu\",\"--seed\",\"1\"");
	free(hdr);
}

/* The fake probe's objective for 122 x 43008 B with Ring, `maxch` channels and LL. */
static double ring_ll_objective(int maxch)
{
	return 122 * (10 + 0.7 * fabs(maxch - 2.0) + 0.2 * 15 + 0.3 * 5 + 1.5 + 43008 / 8000.0);
}

/* The idx-th entry of results.json's tries. */
static const cJSON *try_at(const cJSON *res, int idx)
{
	return cJSON_GetArrayItem(cJSON_GetObjectItem(res, "tries"), idx);
}

/* Journal runs of try `no` in `phase`. */
static int try_runs(const char *dir, int no, const char *phase)
{
	int n = 0;

	for (int i = 0; i < journal_runs(dir, NULL); i++) {
		cJSON *r = journal_run(dir, i);

		if (num_at(r, "try", NULL) == no && strcmp(str_at(r, "phase", NULL), phase) == 0)
			n++;
		cJSON_Delete(r);
	}
	return n;
}

/* --try: an in-space and an off-space configuration, run after the baseline, in the
 * final rounds, in results.json with ratios; the off-space one (LL is not searched by
 * the small space) is faster than anything in the space and wins. */
static void test_tries(void)
{
	char out[256], space[256], log[256], err[1024];
	nccltune_session *s;
	cJSON *res, *r;
	const cJSON *t0, *t1;
	struct summary *sum = NULL;
	double base;

	path_in(out, sizeof out, "tries");
	path_in(space, sizeof space, "small-space.json");
	path_in(log, sizeof log, "tries.log");
	setenv("FAKEPROBE_LOG", log, 1);
	s = new_session(out, 30, "random", space, NULL);
	CHECK_INT(nccltune_session_add_try(s, "NCCL_ALGO=Ring NCCL_MAX_NCHANNELS=4"), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_add_try(s, "NCCL_ALGO=Ring NCCL_MAX_NCHANNELS=2 NCCL_PROTO=LL"),
	          NCCLTUNE_OK);
	CHECK_INT(nccltune_session_run(s), NCCLTUNE_OK);
	nccltune_session_destroy(s);
	unsetenv("FAKEPROBE_LOG");

	/* right after the baseline, in order */
	r = journal_run(out, 1);
	CHECK_STR(str_at(r, "phase", NULL), "try");
	CHECK_INT(num_at(r, "try", NULL), 1);
	CHECK(cJSON_IsArray(cJSON_GetObjectItem(r, "point")));
	cJSON_Delete(r);
	r = journal_run(out, 2);
	CHECK_STR(str_at(r, "phase", NULL), "try");
	CHECK_INT(num_at(r, "try", NULL), 2);
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(r, "point")));
	CHECK_STR(str_at(r, "env", "NCCL_PROTO"), "LL");
	cJSON_Delete(r);
	/* in the final rounds, interleaved with the baseline; the budget holds */
	CHECK(try_runs(out, 2, "final") >= 2);
	CHECK(journal_runs(out, NULL) <= 30);
	/* the off-space try ran with exactly its variables, nothing else did */
	CHECK_INT(count_lines(log, "NCCL_PROTO=LL"), 1 + try_runs(out, 2, "final"));
	res = read_json(out, "results.json");
	CHECK(res != NULL);
	base = num_at(res, "baseline", "objective_us");
	CHECK_STR(str_at(cJSON_GetObjectItem(res, "best"), "env", "NCCL_PROTO"), "LL");
	CHECK_NEAR(num_at(cJSON_GetObjectItem(res, "best"), "objective_us", NULL),
	           ring_ll_objective(2), 1e-3);
	CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(res, "tries")), 2);
	t0 = try_at(res, 0);
	t1 = try_at(res, 1);
	CHECK_STR(str_at(t0, "outcome", NULL), "ok");
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(t0, "in_space")));
	CHECK(cJSON_IsFalse(cJSON_GetObjectItem(t1, "in_space")));
	CHECK_NEAR(num_at(t0, "objective_us", NULL), ring_objective(4), 1e-3);
	CHECK(num_at(t0, "repeats", NULL) >= 2);
	CHECK_NEAR(num_at(t0, "ratio_vs_baseline", "ratio"), base / ring_objective(4), 1e-3);
	CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(t0, "ratio_vs_baseline"),
	                                                 "ci95")), 2);
	CHECK_NEAR(num_at(t0, "tuned_vs_try", "ratio"), ring_objective(4) / ring_ll_objective(2),
	           1e-3);
	CHECK_NEAR(num_at(t1, "tuned_vs_try", "ratio"), 1.0, 1e-9);
	CHECK_NEAR(num_at(t1, "ratio_vs_baseline", "ratio"), num_at(res, "gain", "ratio"), 1e-9);
	cJSON_Delete(res);
	/* the strict loader takes it, and the exports carry the off-space winner */
	CHECK_INT(summary_load(out, SUMMARY_JOURNAL, &sum, err, sizeof err), 0);
	if (sum) {
		CHECK_INT(sum->ntries, 2);
		CHECK(sum->ntries == 2 && sum->tries[1].has_tuned && !sum->tries[1].in_space);
		CHECK_STR(summary_env_get(&sum->best.env, "NCCL_PROTO"), "LL");
		summary_destroy(sum);
	} else {
		fprintf(stderr, "summary_load: %s\n", err);
	}
}

/* A try whose variable the user's environment sets: the environment wins, is recorded
 * as pinned, and the rest of the try still runs (here it becomes a point of the space). */
static void test_try_pinned(void)
{
	char out[256], space[256], log[256];
	nccltune_session *s;
	cJSON *res;

	path_in(out, sizeof out, "try-pinned");
	path_in(space, sizeof space, "small-space.json");
	path_in(log, sizeof log, "try-pinned.log");
	setenv("FAKEPROBE_LOG", log, 1);
	setenv("NCCL_PROTO", "Simple", 1);
	s = new_session(out, 12, "random", space, NULL);
	CHECK_INT(nccltune_session_add_try(s, "NCCL_ALGO=Ring NCCL_MAX_NCHANNELS=3 NCCL_PROTO=LL"),
	          NCCLTUNE_OK);
	CHECK_INT(nccltune_session_run(s), NCCLTUNE_OK);
	nccltune_session_destroy(s);
	unsetenv("NCCL_PROTO");
	unsetenv("FAKEPROBE_LOG");
	CHECK_INT(count_lines(log, "NCCL_PROTO=LL"), 0);
	CHECK_INT(count_lines(log, "NCCL_PROTO=Simple"), journal_runs(out, NULL));
	res = read_json(out, "results.json");
	CHECK_STR(str_at(res, "pinned", "NCCL_PROTO"), "Simple");
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(try_at(res, 0), "in_space")));
	CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(try_at(res, 0), "env"), "NCCL_PROTO") == NULL);
	cJSON_Delete(res);
}

/* Refusals before anything runs; a budget too small for every try. */
static void test_try_refused(void)
{
	char out[256], path[256];
	nccltune_session *s;
	cJSON *res;

	s = nccltune_session_create();
	CHECK_INT(nccltune_session_add_try(s, "NCCL_PROTO=Fast"), NCCLTUNE_USAGE);
	CHECK_CONTAINS(nccltune_session_error(s), "--try 'NCCL_PROTO=Fast': 'NCCL_PROTO=Fast'");
	CHECK_INT(nccltune_session_add_try_file(s, "/nonexistent/tries"), NCCLTUNE_USAGE);
	CHECK_CONTAINS(nccltune_session_error(s), "--try-file: ");
	path_in(path, sizeof path, "bad-tries.txt");
	write_file(path, "NCCL_PROTO=LL\nNCCL_BUFFSIZE=lots # big\n");
	CHECK_INT(nccltune_session_add_try_file(s, path), NCCLTUNE_USAGE);
	CHECK_CONTAINS(nccltune_session_error(s), "bad-tries.txt:2: 'NCCL_BUFFSIZE=lots'");
	for (int i = 0; i < 16; i++) {
		char cfg[64];

		snprintf(cfg, sizeof cfg, "NCCL_MAX_NCHANNELS=%d", i + 1);
		CHECK_INT(nccltune_session_add_try(s, cfg), NCCLTUNE_OK);
	}
	CHECK_INT(nccltune_session_add_try(s, "NCCL_PROTO=LL"), NCCLTUNE_USAGE);
	CHECK_CONTAINS(nccltune_session_error(s), "more than 16");
	nccltune_session_destroy(s);

	/* NVLS: never set unless the space names it, --try included */
	path_in(out, sizeof out, "try-nvls");
	s = new_session(out, 10, "random", NULL, NULL);
	CHECK_INT(nccltune_session_add_try(s, "NCCL_NVLS_ENABLE=1 NCCL_PROTO=LL"), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_run(s), NCCLTUNE_USAGE);
	CHECK_CONTAINS(nccltune_session_error(s), "NCCL_NVLS_ENABLE=1 refused");
	nccltune_session_destroy(s);
	CHECK_INT(journal_runs(out, NULL), -1);   /* no journal: nothing ran */
	/* the same configuration twice */
	path_in(out, sizeof out, "try-twice");
	s = new_session(out, 10, "random", NULL, NULL);
	CHECK_INT(nccltune_session_add_try(s, "NCCL_PROTO=LL NCCL_P2P_LEVEL=SYS"), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_add_try(s, "NCCL_P2P_LEVEL=SYS NCCL_PROTO=LL"), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_run(s), NCCLTUNE_USAGE);
	CHECK_CONTAINS(nccltune_session_error(s), "the same configuration as");
	nccltune_session_destroy(s);

	/* budget 3: the baseline and two tries; the third is reported as not run */
	path_in(out, sizeof out, "try-budget");
	s = new_session(out, 3, "random", NULL, NULL);
	CHECK_INT(nccltune_session_add_try(s, "NCCL_PROTO=LL NCCL_P2P_LEVEL=SYS"), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_add_try(s, "NCCL_PROTO=Simple NCCL_P2P_LEVEL=SYS"), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_add_try(s, "NCCL_PROTO=LL128 NCCL_P2P_LEVEL=SYS"), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_run(s), NCCLTUNE_OK);
	nccltune_session_destroy(s);
	CHECK_INT(journal_runs(out, NULL), 3);
	res = read_json(out, "results.json");
	CHECK_STR(str_at(try_at(res, 0), "outcome", NULL), "ok");
	CHECK_INT(num_at(try_at(res, 0), "repeats", NULL), 1);
	CHECK(num_at(try_at(res, 0), "ratio_vs_baseline", "ratio") > 1.0);
	CHECK_STR(str_at(try_at(res, 2), "outcome", NULL), "not_run");
	CHECK(isnan(num_at(try_at(res, 2), "objective_us", NULL)));
	/* without a final phase the fastest single run wins: the LL try */
	CHECK_STR(str_at(cJSON_GetObjectItem(res, "best"), "env", "NCCL_PROTO"), "LL");
	cJSON_Delete(res);
}

/* A session with tries cut short and resumed replays them from the journal. */
static void test_try_resume(void)
{
	char a[256], b[256], log[256];
	nccltune_session *s;
	cJSON *ra, *rb;

	path_in(a, sizeof a, "try-resume-a");
	path_in(b, sizeof b, "try-resume-b");
	path_in(log, sizeof log, "try-resume.log");
	for (int k = 0; k < 2; k++) {
		s = new_session(k ? b : a, 20, "bo", NULL, NULL);
		CHECK_INT(nccltune_session_add_try(s, "NCCL_PROTO=LL NCCL_P2P_LEVEL=SYS"), NCCLTUNE_OK);
		CHECK_INT(nccltune_session_add_try(s, "NCCL_PROTO=LL NCCL_ALGO=Ring NCCL_MIN_NCHANNELS=1 "
		                                      "NCCL_MAX_NCHANNELS=2 NCCL_BUFFSIZE=131072 "
		                                      "NCCL_NTHREADS=64"), NCCLTUNE_OK);
		CHECK_INT(nccltune_session_run(s), NCCLTUNE_OK);
		nccltune_session_destroy(s);
	}
	cut_journal(b, 2);   /* the baseline and the first try */
	setenv("FAKEPROBE_LOG", log, 1);
	s = nccltune_session_create();
	nccltune_session_set_progress(s, NULL);
	CHECK_INT(nccltune_session_resume(s, b), NCCLTUNE_OK);
	CHECK_INT(nccltune_session_add_try(s, "NCCL_PROTO=LL"), NCCLTUNE_USAGE);
	CHECK_INT(nccltune_session_run(s), NCCLTUNE_OK);
	nccltune_session_destroy(s);
	unsetenv("FAKEPROBE_LOG");
	CHECK_INT(journal_runs(b, NULL), journal_runs(a, NULL));
	CHECK_INT(count_lines(log, NULL), journal_runs(a, NULL) - 2);
	CHECK_INT(try_runs(b, 2, "try"), 1);
	ra = read_json(a, "results.json");
	rb = read_json(b, "results.json");
	if (ra && rb) {
		char *ta = cJSON_PrintUnformatted(cJSON_GetObjectItem(ra, "tries"));
		char *tb = cJSON_PrintUnformatted(cJSON_GetObjectItem(rb, "tries"));

		CHECK_STR(ta, tb);
		CHECK(cJSON_IsTrue(cJSON_GetObjectItem(try_at(rb, 1), "in_space")));
		free(ta);
		free(tb);
	} else {
		CHECK(ra && rb);
	}
	cJSON_Delete(ra);
	cJSON_Delete(rb);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_session FAKEPROBE\n");
		return 2;
	}
	fake = argv[1];
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	unsetenv("NCCL_PROTO");
	unsetenv("NCCL_ALGO");
	unsetenv("NCCL_P2P_LEVEL");
	test_setters();
	test_small_space();
	test_pinned_and_model();
	test_resume("random", 24, 9);
	test_resume("bo", 16, 7);
	test_interrupt();
	test_retry_and_timeout();
	test_failures();
	test_warm_start();
	test_time_limit();
	test_default_model();
	test_tries();
	test_try_pinned();
	test_try_refused();
	test_try_resume();
	if (check_failures == 0)
		nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	else
		fprintf(stderr, "session folders kept in %s\n", root);
	return check_status();
}
