/* test_runner_faults.c - the runner against every misbehaviour faultprobe can produce:
 * each run is classified as the probe's own log says it must be, stderr floods and
 * stdout floods neither deadlock nor grow without bound, a command that does not exist
 * is "spawn", and no process of the probe (child or grandchild) outlives runner_run,
 * not even one that left its process group when a reaper is given.
 *
 * Usage: test_runner_faults FAULTPROBE */
#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"
#include "fsutil.h"
#include "run/outcome.h"
#include "run/runner.h"
#include <cjson/cJSON.h>

extern char **environ;

/* Count live processes whose command line contains `tag` (zombies excluded: they hold
 * nothing). */
static int count_tagged(const char *tag)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	for (e = readdir(d); e; e = readdir(d)) {
		char path[300], buf[4096], stat[512];
		FILE *f;
		size_t len;
		char *rp;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		len = fread(stat, 1, sizeof stat - 1, f);
		fclose(f);
		stat[len] = '\0';
		rp = strrchr(stat, ')');
		if (rp && rp[1] == ' ' && rp[2] == 'Z')
			continue;
		snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		len = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		for (size_t i = 0; i < len; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
		buf[len] = '\0';
		if (strstr(buf, tag))
			n++;
	}
	closedir(d);
	return n;
}

/* The "expect" of the last line of the faultprobe log, or "" when there is none. */
static void last_expect(const char *log, char *out, size_t len)
{
	char err[256];
	size_t n;
	char *text = fs_read_file(log, 1 << 20, &n, err, sizeof err);
	char *last, *nl;
	cJSON *o;

	snprintf(out, len, "%s", "");
	if (!text)
		return;
	while (n > 0 && text[n - 1] == '\n')
		text[--n] = '\0';
	nl = strrchr(text, '\n');
	last = nl ? nl + 1 : text;
	o = cJSON_Parse(last);
	if (o && cJSON_IsString(cJSON_GetObjectItem(o, "expect")))
		snprintf(out, len, "%s", cJSON_GetObjectItem(o, "expect")->valuestring);
	cJSON_Delete(o);
	free(text);
}

struct fault_case {
	const char *mode;
	const char *env;        /* an extra NCCL_ variable for the run, or NULL */
};

static void run_case(const char *probe, const char *dir, const struct fault_case *fc,
                     int index)
{
	char log[PATH_MAX], tag[64], err[256], expect[32], mode_arg[64], probe_arg[PATH_MAX];
	char env_arg[128];
	char *argv[] = {probe_arg, "--mode", mode_arg, "--log", log, "--tag", tag,
	                "--bytes", "43008,65536", "--iters", "5", NULL};
	char **envp = NULL;
	size_t n = 0;
	struct runner_request req;
	struct runner_result res;
	struct outcome o;

	snprintf(probe_arg, sizeof probe_arg, "%s", probe);
	snprintf(mode_arg, sizeof mode_arg, "%s", fc->mode);
	snprintf(env_arg, sizeof env_arg, "%s", fc->env ? fc->env : "");
	snprintf(log, sizeof log, "%s/log-%d.jsonl", dir, index);
	snprintf(tag, sizeof tag, "rfault-%ld-%d", (long)getpid(), index);
	while (environ[n])
		n++;
	envp = calloc(n + 2, sizeof *envp);
	if (!envp) {
		CHECK(envp != NULL);
		return;
	}
	memcpy(envp, environ, n * sizeof *envp);
	envp[n] = fc->env ? env_arg : NULL;   /* NULL-terminated either way */
	memset(&req, 0, sizeof req);
	memset(&res, 0, sizeof res);
	req.argv = argv;
	req.envp = envp;
	/* short for the modes that hang, generous for the others: a loaded machine running
	 * sanitized binaries must not turn a slow answer into a timeout */
	req.timeout_s = strstr(fc->mode, "hang") ? 1.0 : 10.0;
	CHECK_INT(runner_run(&req, &res, err, sizeof err), 0);
	runner_classify(&res, &o);
	last_expect(log, expect, sizeof expect);
	fprintf(stderr, "mode %-22s -> %-8s (expected %s) exit %d signal %d %.2fs: %s\n", fc->mode,
	        outcome_class_name(o.cls), expect, res.exit_status, res.signal, res.wall_s, o.error);
	CHECK_STR(outcome_class_name(o.cls), expect);
	/* the group is killed before runner_run returns; a grandchild, which only init can
	 * reap, may take a moment to die of its SIGKILL: allow it half a second */
	for (int i = 0; i < 50 && count_tagged(tag) != 0; i++)
		usleep(10000);
	if (count_tagged(tag) != 0)
		fprintf(stderr, "mode %s: a process of the probe outlived runner_run\n", fc->mode);
	CHECK_INT(count_tagged(tag), 0);
	if (strcmp(fc->mode, "stderr-flood") == 0) {
		CHECK(res.err_len <= 64u << 10);
		CHECK_CONTAINS(o.stderr_tail, "diagnostic line 4999");
	}
	if (strcmp(fc->mode, "stdout-flood") == 0)
		CHECK(res.out_truncated);
	if (strcmp(expect, "ok") == 0)
		CHECK_INT(o.report.nresults, 2);
	runner_result_free(&res);
	free(envp);
}

/* The reaper: a probe's child that left its group (setsid, setpgid, a daemon's double
 * fork) is ended by the sweep after the run, and a child the process had before the
 * reaper started (the embedding program's) is left alone. */
static void reaper_case(const char *probe, const char *dir)
{
	static const char *const modes[] = {"escape-setsid", "escape-setpgid", "escape-daemon"};
	struct reaper rp;
	char err[256];
	pid_t mine = fork();

	if (mine == 0) {
		pause();
		_exit(0);
	}
	CHECK(mine > 0);
	CHECK_INT(reaper_start(&rp, err, sizeof err), 0);
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		char tag[64], log[PATH_MAX], probe_arg[PATH_MAX], mode_arg[32];
		char *argv[] = {probe_arg, "--mode", mode_arg, "--log", log, "--tag", tag, NULL};
		struct runner_request req;
		struct runner_result res;

		snprintf(probe_arg, sizeof probe_arg, "%s", probe);
		snprintf(mode_arg, sizeof mode_arg, "%s", modes[i]);
		snprintf(log, sizeof log, "%s/reaper-%zu.jsonl", dir, i);
		snprintf(tag, sizeof tag, "rreap-%ld-%zu", (long)getpid(), i);
		memset(&req, 0, sizeof req);
		req.argv = argv;
		req.envp = environ;
		req.timeout_s = 10.0;
		req.reaper = &rp;
		CHECK_INT(runner_run(&req, &res, err, sizeof err), 0);
		CHECK(res.spawned && res.exit_status == 0);
		if (count_tagged(tag) != 0)
			fprintf(stderr, "mode %s: an escaped process outlived runner_run\n", modes[i]);
		CHECK_INT(count_tagged(tag), 0);
		runner_result_free(&res);
		unlink(log);
	}
	reaper_stop(&rp);
	/* the embedding program's own child is alive and still ours to reap */
	CHECK_INT(waitpid(mine, NULL, WNOHANG), 0);
	kill(mine, SIGKILL);
	CHECK_INT(waitpid(mine, NULL, 0), mine);
}

int main(int argc, char **argv)
{
	static const struct fault_case cases[] = {
		{"ok", NULL}, {"slow", NULL}, {"stderr-flood", NULL}, {"orphan", NULL},
		{"segv", NULL}, {"abort", NULL}, {"hang", NULL}, {"hang-noterm", NULL},
		{"fork-grandchild-hang", NULL}, {"garbage", NULL}, {"truncated", NULL},
		{"nan", NULL}, {"negative", NULL}, {"zero-latency", NULL}, {"tiny-latency", NULL},
		{"deep-unknown", NULL}, {"stdout-flood", NULL}, {"exit-nojson", NULL},
		{"exit3-nojson", NULL}, {"ok-false-exit0", NULL}, {"ok-exit1", NULL}, {"wrong-sum", NULL},
		{"wrong-sum-exit1", NULL}, {"fail-init", NULL}, {"fail-capture", NULL},
		{"ok", "NCCL_PROTO=Bogus"},
	};
	char dir[] = "/tmp/nccltune-rfault-XXXXXX", err[256];
	char *missing[] = {"/nonexistent/nccltune-no-such-probe", NULL};
	struct runner_request req;
	struct runner_result res;
	struct outcome o;

	if (argc != 2) {
		fprintf(stderr, "usage: %s FAULTPROBE\n", argv[0]);
		return 2;
	}
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		run_case(argv[1], dir, &cases[i], (int)i);
	reaper_case(argv[1], dir);

	/* a probe that does not exist is an outcome (spawn), not a tuner failure */
	memset(&req, 0, sizeof req);
	memset(&res, 0, sizeof res);
	req.argv = missing;
	req.envp = environ;
	req.timeout_s = 1.0;
	CHECK_INT(runner_run(&req, &res, err, sizeof err), 0);
	CHECK(!res.spawned);
	runner_classify(&res, &o);
	CHECK_STR(outcome_class_name(o.cls), "spawn");
	CHECK_CONTAINS(o.error, "nccltune-no-such-probe");
	runner_result_free(&res);

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char log[PATH_MAX];

		snprintf(log, sizeof log, "%s/log-%zu.jsonl", dir, i);
		unlink(log);
	}
	rmdir(dir);
	return check_status();
}
