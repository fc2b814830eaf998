/* test_runner.c - spawning, deadlines, process groups, output caps, classification,
 * shell-like splitting and tool lookup. argv[1] is the fake probe. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "run/runner.h"

static char *env_path[] = {"PATH=/usr/bin:/bin", NULL};

static int run_sh(const char *script, double timeout, size_t out_cap, size_t err_cap,
                  struct runner_result *res)
{
	char copy[4096], *argv[] = {"/bin/sh", "-c", copy, NULL};
	struct runner_request req;
	char err[256];

	snprintf(copy, sizeof copy, "%s", script);

	memset(&req, 0, sizeof req);
	req.argv = argv;
	req.envp = env_path;
	req.timeout_s = timeout;
	req.stdout_cap = out_cap;
	req.stderr_cap = err_cap;
	return runner_run(&req, res, err, sizeof err);
}

/* Is pid gone (or a zombie that nothing will wake)? */
static int process_dead(long pid)
{
	char path[64], buf[512];
	FILE *f;
	char *paren;

	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 1;
	if (!fgets(buf, sizeof buf, f)) {
		fclose(f);
		return 1;
	}
	fclose(f);
	paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

static void test_split(void)
{
	char **argv = NULL, err[256];

	CHECK_INT(runner_split_command("mpirun -np 16  nccltune-probe", &argv, err, sizeof err), 0);
	if (argv) {
		CHECK_STR(argv[0], "mpirun");
		CHECK_STR(argv[1], "-np");
		CHECK_STR(argv[2], "16");
		CHECK_STR(argv[3], "nccltune-probe");
		CHECK(argv[4] == NULL);
	}
	runner_free_argv(argv);
	CHECK_INT(runner_split_command("  'x y' \"q\\\"z $HOME\" back\\ slash '' a\\\nb", &argv, err,
	                               sizeof err), 0);
	if (argv) {
		CHECK_STR(argv[0], "x y");
		CHECK_STR(argv[1], "q\"z $HOME");
		CHECK_STR(argv[2], "back slash");
		CHECK_STR(argv[3], "");
		CHECK_STR(argv[4], "ab");
		CHECK(argv[5] == NULL);
	}
	runner_free_argv(argv);
	argv = NULL;
	CHECK_INT(runner_split_command("probe 'open", &argv, err, sizeof err), -1);
	CHECK_CONTAINS(err, "unterminated single quote");
	CHECK(argv == NULL);
	CHECK_INT(runner_split_command("probe \"open", &argv, err, sizeof err), -1);
	CHECK_CONTAINS(err, "unterminated double quote");
	CHECK_INT(runner_split_command("   ", &argv, err, sizeof err), -1);
	CHECK_CONTAINS(err, "empty command");
}

static void test_exit_and_signal(void)
{
	struct runner_result res;
	struct outcome o;

	CHECK_INT(run_sh("echo out; echo err >&2; exit 3", 10, 0, 0, &res), 0);
	CHECK(res.spawned);
	CHECK_INT(res.exit_status, 3);
	CHECK_INT(res.signal, 0);
	CHECK(!res.timed_out);
	CHECK_STR(res.out, "out\n");
	CHECK_STR(res.err, "err\n");
	runner_classify(&res, &o);
	CHECK_INT(o.cls, OUTCOME_GARBAGE);
	CHECK_CONTAINS(o.error, "status 3");
	CHECK_STR(o.stderr_tail, "err");
	runner_result_free(&res);

	CHECK_INT(run_sh("kill -SEGV $$", 10, 0, 0, &res), 0);
	CHECK_INT(res.signal, SIGSEGV);
	CHECK_INT(res.exit_status, -1);
	runner_classify(&res, &o);
	CHECK_INT(o.cls, OUTCOME_CRASH);
	CHECK_CONTAINS(o.error, "signal 11");
	runner_result_free(&res);
}

static void test_timeout_kills_group(void)
{
	struct runner_result res;
	struct outcome o;
	long gpid = 0;

	/* The grandchild ignores SIGTERM and keeps stdout open: only SIGKILL to the whole
	 * group ends it. */
	CHECK_INT(run_sh("(trap '' TERM; exec sleep 30) & echo $!; sleep 30", 0.5, 0, 0, &res), 0);
	CHECK(res.timed_out);
	CHECK(res.wall_s < 5.0);
	gpid = atol(res.out);
	CHECK(gpid > 0);
	if (gpid > 0) {
		int dead = 0;

		for (int i = 0; i < 100 && !dead; i++) {
			dead = process_dead(gpid);
			if (!dead)
				usleep(10000);
		}
		CHECK(dead);
	}
	runner_classify(&res, &o);
	CHECK_INT(o.cls, OUTCOME_TIMEOUT);
	runner_result_free(&res);

	/* A direct child that ignores SIGTERM gets SIGKILL after the grace period. */
	CHECK_INT(run_sh("trap '' TERM; sleep 30", 0.3, 0, 0, &res), 0);
	CHECK(res.timed_out);
	CHECK(res.wall_s < 6.0);
	CHECK_INT(res.signal, SIGKILL);
	runner_result_free(&res);
}

static void test_caps(void)
{
	struct runner_result res;
	struct outcome o;

	CHECK_INT(run_sh("head -c 300000 /dev/zero | tr '\\0' x", 10, 1000, 0, &res), 0);
	CHECK(res.out_truncated);
	CHECK_INT(res.out_len, 1000);
	CHECK_INT(strlen(res.out), 1000);
	CHECK_INT(res.exit_status, 0);
	runner_classify(&res, &o);
	CHECK_INT(o.cls, OUTCOME_GARBAGE);
	runner_result_free(&res);

	CHECK_INT(run_sh("i=0; while [ $i -lt 3000 ]; do i=$((i+1)); echo line$i >&2; done", 20, 0,
	                 100, &res), 0);
	CHECK(res.err_len <= 100);
	CHECK(res.err_len > 0 && strstr(res.err, "line3000\n") != NULL);
	CHECK(strstr(res.err, "line1\n") == NULL);
	runner_result_free(&res);
}

static void test_classify(const char *fake)
{
	char path[4096], *argv[] = {path, "--bytes", "43008", "--ops", "4", NULL};
	char *tree_env[] = {"NCCL_ALGO=Tree", NULL};
	char *nan_env[] = {"FAKEPROBE_MODE=nan", NULL};
	char *garbage_env[] = {"FAKEPROBE_MODE=garbage", NULL};
	char *ok_env[] = {"NCCL_PROTO=LL", "NCCL_ALGO=Ring", NULL};
	char *okexit_env[] = {"FAKEPROBE_MODE=okexit1", NULL};
	char *hungexit_env[] = {"FAKEPROBE_MODE=hungexit1", NULL};
	struct runner_request req;
	struct runner_result res;
	struct outcome o;
	char err[256];

	snprintf(path, sizeof path, "%s", fake);
	memset(&req, 0, sizeof req);
	req.argv = argv;
	req.timeout_s = 10;
	req.envp = ok_env;
	CHECK_INT(runner_run(&req, &res, err, sizeof err), 0);
	runner_classify(&res, &o);
	CHECK_INT(o.cls, OUTCOME_OK);
	CHECK(o.report.ok);
	CHECK_INT(o.report.nresults, 1);
	/* LL 10 + Ring 0 + 0.7*14 + 0.2*15 + 0.3*5 + 1.5 + 43008/8000 */
	CHECK_NEAR(o.report.results[0].us.median, 10 + 9.8 + 3 + 1.5 + 1.5 + 5.376, 1e-6);
	CHECK(isnan(o.objective_us));
	runner_result_free(&res);

	req.envp = tree_env;
	CHECK_INT(runner_run(&req, &res, err, sizeof err), 0);
	runner_classify(&res, &o);
	CHECK_INT(o.cls, OUTCOME_CAPTURE);
	CHECK_CONTAINS(o.error, "Tree");
	CHECK_CONTAINS(o.stderr_tail, "fakeprobe: measuring");
	runner_result_free(&res);

	req.envp = nan_env;
	CHECK_INT(runner_run(&req, &res, err, sizeof err), 0);
	runner_classify(&res, &o);
	CHECK_INT(o.cls, OUTCOME_GARBAGE);
	runner_result_free(&res);

	req.envp = garbage_env;
	CHECK_INT(runner_run(&req, &res, err, sizeof err), 0);
	runner_classify(&res, &o);
	CHECK_INT(o.cls, OUTCOME_GARBAGE);
	CHECK_CONTAINS(o.error, "invalid report");
	runner_result_free(&res);

	req.envp = okexit_env;
	CHECK_INT(runner_run(&req, &res, err, sizeof err), 0);
	runner_classify(&res, &o);
	CHECK_INT(o.cls, OUTCOME_GARBAGE);
	CHECK_CONTAINS(o.error, "exited with status 1");
	runner_result_free(&res);

	/* the same exit after a report that says a watchdog ended its hung teardown (mpirun
	 * fails the job for the rank that left): the results stand */
	req.envp = hungexit_env;
	CHECK_INT(runner_run(&req, &res, err, sizeof err), 0);
	CHECK_INT(res.exit_status, 1);
	runner_classify(&res, &o);
	CHECK_INT(o.cls, OUTCOME_OK);
	CHECK(o.report.teardown_hung);
	CHECK_INT(o.report.nwarnings, 1);
	runner_result_free(&res);
}

static void test_spawn(void)
{
	char *missing[] = {"nccltune-no-such-command", NULL};
	char *notexec[] = {"/etc/hostname", NULL};
	struct runner_request req;
	struct runner_result res;
	struct outcome o;
	char err[256];

	memset(&req, 0, sizeof req);
	req.argv = missing;
	req.envp = env_path;
	CHECK_INT(runner_run(&req, &res, err, sizeof err), 0);
	CHECK(!res.spawned);
	runner_classify(&res, &o);
	CHECK_INT(o.cls, OUTCOME_SPAWN);
	CHECK_CONTAINS(o.error, "nccltune-no-such-command");
	runner_result_free(&res);

	req.argv = notexec;
	CHECK_INT(runner_run(&req, &res, err, sizeof err), 0);
	CHECK(!res.spawned);
	CHECK_CONTAINS(res.spawn_error, "cannot execute");
	runner_result_free(&res);
}

static void test_env_and_cancel(void)
{
	char *argv[] = {"/bin/sh", "-c", "echo \"$FOO|$HOME\"; sleep 30", NULL};
	char *envp[] = {"FOO=bar baz", "PATH=/usr/bin:/bin", NULL};
	struct runner_request req;
	struct runner_result res;
	volatile sig_atomic_t flag = 0;
	char err[256];

	memset(&req, 0, sizeof req);
	req.argv = argv;
	req.envp = envp;
	req.timeout_s = 0.3;
	CHECK_INT(runner_run(&req, &res, err, sizeof err), 0);
	CHECK_STR(res.out, "bar baz|\n");   /* exactly the given environment */
	runner_result_free(&res);

	flag = 1;
	req.timeout_s = 30;
	req.cancel = &flag;
	CHECK_INT(runner_run(&req, &res, err, sizeof err), 0);
	CHECK(res.cancelled);
	CHECK(!res.timed_out);
	CHECK(res.wall_s < 5);
	runner_result_free(&res);
}

static void test_find_tool(const char *fake)
{
	char buf[4096], err[1024];

	setenv("NCCLTUNE_MODEL_PROBE", fake, 1);
	CHECK_INT(runner_find_tool("nccltune-model-probe", buf, sizeof buf, err, sizeof err), 0);
	CHECK_STR(buf, fake);
	setenv("NCCLTUNE_MODEL_PROBE", "/nonexistent/probe", 1);
	CHECK_INT(runner_find_tool("nccltune-model-probe", buf, sizeof buf, err, sizeof err), -1);
	CHECK_CONTAINS(err, "NCCLTUNE_MODEL_PROBE");
	unsetenv("NCCLTUNE_MODEL_PROBE");
	CHECK_INT(runner_find_tool("nccltune-nothing", buf, sizeof buf, err, sizeof err), -1);
	CHECK_CONTAINS(err, "nccltune-nothing not found");
	CHECK_CONTAINS(err, "NCCLTUNE_NOTHING");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_runner FAKEPROBE\n");
		return 2;
	}
	test_split();
	test_exit_and_signal();
	test_timeout_kills_group();
	test_caps();
	test_classify(argv[1]);
	test_spawn();
	test_env_and_cancel();
	test_find_tool(argv[1]);
	return check_status();
}
