/* test_model_probe.c - nccltune-model-probe speaks protocol v1: its reports parse strictly
 * (proto_report_parse) and round-trip, bad arguments exit 2 with stage "args", NCCL's
 * failures come back with the right stage and exit 1, --noise 0 and --seed repeat exactly,
 * the variables are read from the probe's own environment, --fingerprint is valid and
 * stable, and bad model files fail with clear messages. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"
#include "fsutil.h"
#include "model.h"
#include "proto.h"

#define OUTMAX 65536

static char probe[1024], src[1024], tmpdir[256];

/* Run the probe with argv `args` (NULL-ended, without argv[0]) and exactly the variables
 * `env` (NULL-ended); stdout goes to out. Returns the exit status, or -1. */
static int run(const char *const *args, const char *const *env, char *out, size_t outlen)
{
	char *argv[32];
	int fd[2], status = 0;
	size_t used = 0, n = 0;
	pid_t pid;

	argv[n++] = probe;
	for (; args[n - 1] && n < 31; n++)
		argv[n] = (char *)(uintptr_t)args[n - 1];
	argv[n] = NULL;
	if (pipe(fd) != 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(fd[1], 1);
		if (devnull >= 0)
			dup2(devnull, 2);
		close(fd[0]);
		execve(probe, argv, (char *const *)(uintptr_t)env);
		_exit(127);
	}
	close(fd[1]);
	for (;;) {
		ssize_t r = read(fd[0], out + used, outlen - 1 - used);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		used += (size_t)r;
		if (used == outlen - 1)
			break;
	}
	out[used] = '\0';
	close(fd[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static const char *const no_env[] = { NULL };

/* Run, expect exit status `want_rc`, parse strictly into r. */
static void run_parse(const char *const *args, const char *const *env, int want_rc,
                      struct proto_report *r, char *out)
{
	char err[512];
	int rc = run(args, env, out, OUTMAX);

	CHECK_INT(rc, want_rc);
	memset(r, 0, sizeof *r);
	if (proto_report_parse(out, strlen(out), r, err, sizeof err) != 0) {
		CHECK(!"report parses");
		fprintf(stderr, "  %s\n  in: %s\n", err, out);
	}
}

static void test_ok_and_round_trip(void)
{
	struct proto_report r, again;
	static char out[OUTMAX], out2[OUTMAX];
	char *text, err[256];

	run_parse((const char *[]){ "--model", "pcie-gen5-8gpu", "--noise", "0",
	                            "--bytes", "4096,43008", NULL }, no_env, 0, &r, out);
	CHECK(r.ok);
	CHECK_STR(r.source, "model");
	CHECK_STR(r.model, "pcie-gen5-8gpu");
	CHECK_INT(r.nranks, 8);
	CHECK_INT(r.nresults, 2);
	CHECK_INT(r.results[1].bytes, 43008);
	CHECK_INT(r.results[1].ops, 122);
	CHECK_INT(r.results[1].samples, 200);
	CHECK(r.results[1].us.median > 150 && r.results[1].us.median < 250);
	CHECK(r.results[1].us.min == r.results[1].us.max);   /* noise 0: exact */
	/* round trip through the writer */
	text = proto_report_format(&r);
	CHECK(text != NULL);
	CHECK(text && proto_report_parse(text, strlen(text), &again, err, sizeof err) == 0);
	CHECK(text && memcmp(&again.results, &r.results, sizeof r.results) == 0);
	free(text);
	/* deterministic */
	run((const char *[]){ "--model", "pcie-gen5-8gpu", "--noise", "0", "--bytes", "4096,43008",
	                      NULL }, no_env, out2, OUTMAX);
	CHECK_STR(out2, out);
	/* --model FILE is the same machine as the built-in name */
	{
		char path[1200];
		const char *args[] = { "--model", path, "--noise", "0", "--bytes", "4096,43008", NULL };

		snprintf(path, sizeof path, "%s/models/pcie-gen5-8gpu.json", src);
		CHECK_INT(run(args, no_env, out2, OUTMAX), 0);
		CHECK_STR(out2, out);
	}
	/* the protocol's workload options, both spellings */
	run_parse((const char *[]){ "--model=nvlink-h200-8gpu", "--bytes=64K", "--ops=16",
	                            "--dtype", "f32", "--iters", "7", "--warmup", "1",
	                            "--out-of-place", NULL }, no_env, 0, &r, out);
	CHECK(r.ok);
	CHECK_INT(r.results[0].bytes, 65536);
	CHECK_INT(r.results[0].ops, 16);
	CHECK_INT(r.results[0].samples, 7);
}

static void test_seed(void)
{
	static char a[OUTMAX], b[OUTMAX], c[OUTMAX];
	const char *args7[] = { "--model", "pcie-gen5-8gpu", "--seed", "7", NULL };
	const char *args8[] = { "--model", "pcie-gen5-8gpu", "--seed", "8", NULL };

	CHECK_INT(run(args7, no_env, a, OUTMAX), 0);
	CHECK_INT(run(args7, no_env, b, OUTMAX), 0);
	CHECK_INT(run(args8, no_env, c, OUTMAX), 0);
	CHECK_STR(a, b);
	CHECK(strcmp(a, c) != 0);
	/* the same seed with another configuration: another noise stream */
	CHECK_INT(run(args7, (const char *[]){ "NCCL_BUFFSIZE=65536", NULL }, c, OUTMAX), 0);
	CHECK(strcmp(a, c) != 0);
}

static void expect_stage(const char *const *args, const char *const *env, int rc,
                         const char *stage, const char *msg)
{
	struct proto_report r;
	static char out[OUTMAX];

	run_parse(args, env, rc, &r, out);
	CHECK(!r.ok);
	CHECK_STR(proto_stage_name(r.stage), stage);
	if (msg)
		CHECK_CONTAINS(r.error, msg);
}

static void test_failures(void)
{
	static const char *const seed[] = { "--model", "pcie-gen5-8gpu", NULL };
	static const char *const h200[] = { "--model", "nvlink-h200-8gpu", NULL };

	expect_stage((const char *[]){ "--model", "pcie-gen5-8gpu", "--frobnicate", NULL }, no_env,
	             2, "args", "--frobnicate");
	expect_stage((const char *[]){ "--noise", "0", NULL }, no_env, 2, "args", "--model");
	expect_stage((const char *[]){ "--model", "pcie-gen5-8gpu", "--bytes", "12x", NULL }, no_env,
	             2, "args", "'12x'");
	expect_stage((const char *[]){ "--model", "pcie-gen5-8gpu", "--noise", "-1", NULL }, no_env,
	             2, "args", "--noise");
	expect_stage((const char *[]){ "--model", "pcie-gen5-8gpu", "--seed", "x", NULL }, no_env,
	             2, "args", "--seed");
	expect_stage((const char *[]){ "--model", "pcie-gen5-8gpu", "--ops", NULL }, no_env, 2,
	             "args", "needs a value");
	expect_stage((const char *[]){ "--model", "pcie-gen5-8gpu", "--help=yes", NULL }, no_env, 2,
	             "args", "takes no value");
	expect_stage((const char *[]){ "--model", "no-such-machine", NULL }, no_env, 2, "args",
	             "no-such-machine");
	expect_stage((const char *[]){ "--model", "pcie-gen5-8gpu", "--bytes", "43007", NULL },
	             no_env, 2, "args", "43007");
	expect_stage((const char *[]){ "--model", "pcie-gen5-8gpu", "stray", NULL }, no_env, 2,
	             "args", "stray");

	expect_stage(seed, (const char *[]){ "NCCL_ALGO=Foo", NULL }, 1, "init", "invalid usage");
	expect_stage(seed, (const char *[]){ "NCCL_ALGO=Tree", NULL }, 1, "capture", NULL);
	expect_stage(seed, (const char *[]){ "NCCL_ALGO=NVLS", NULL }, 1, "capture",
	             "no algorithm/protocol available for function AllReduce");
	expect_stage(h200, (const char *[]){ "NCCL_PROTO=LL128", "NCCL_LL128_BUFFSIZE=131072", NULL },
	             1, "verify", "wrong sums");
}

static void test_env(void)
{
	static char a[OUTMAX], b[OUTMAX];
	const char *args[] = { "--model", "pcie-gen5-8gpu", "--noise", "0", NULL };

	/* a bad NCCL_NTHREADS is silently the maximum */
	CHECK_INT(run(args, (const char *[]){ "NCCL_NTHREADS=100", NULL }, a, OUTMAX), 0);
	CHECK_INT(run(args, (const char *[]){ "NCCL_NTHREADS=512", NULL }, b, OUTMAX), 0);
	CHECK_STR(a, b);
	CHECK_INT(run(args, no_env, b, OUTMAX), 0);
	CHECK_STR(a, b);
	/* the variables are read: P2P over PCIe changes the answer */
	CHECK_INT(run(args, (const char *[]){ "NCCL_P2P_LEVEL=SYS", "PATH=/usr/bin", NULL }, a,
	              OUTMAX), 0);
	CHECK(strcmp(a, b) != 0);
	/* the seed's hand config runs */
	CHECK_INT(run(args, (const char *[]){ "NCCL_PROTO=LL", "NCCL_ALGO=Ring", "NCCL_P2P_LEVEL=SYS",
	                                      "NCCL_MIN_NCHANNELS=1", "NCCL_MAX_NCHANNELS=2",
	                                      "NCCL_BUFFSIZE=131072", "NCCL_NTHREADS=64", NULL },
	              a, OUTMAX), 0);
}

static void test_fingerprint(void)
{
	static char a[OUTMAX], b[OUTMAX];
	const char *args[] = { "--model", "pcie-2x4-islands", "--fingerprint", NULL };
	cJSON *fp;

	CHECK_INT(run(args, no_env, a, OUTMAX), 0);
	CHECK_INT(run(args, no_env, b, OUTMAX), 0);
	CHECK_STR(a, b);
	fp = cJSON_Parse(a);
	CHECK(fp != NULL);
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(fp, "schema")), PROTO_FINGERPRINT_SCHEMA);
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(fp, "source")), "model");
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(fp, "model")), "pcie-2x4-islands");
	CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(fp, "topology")), 8);
	cJSON_Delete(fp);
}

static void test_info(void)
{
	static char out[OUTMAX];

	CHECK_INT(run((const char *[]){ "--help", NULL }, no_env, out, OUTMAX), 0);
	CHECK_CONTAINS(out, "--model NAME|FILE");
	CHECK_CONTAINS(out, "--seed");
	CHECK_CONTAINS(out, "pcie-gen5-8gpu");
	CHECK_INT(run((const char *[]){ "--version", NULL }, no_env, out, OUTMAX), 0);
	CHECK_CONTAINS(out, "nccltune-model-probe ");
	CHECK_INT(run((const char *[]){ "--list-models", NULL }, no_env, out, OUTMAX), 0);
	CHECK_CONTAINS(out, "nvlink-h200-8gpu\n");
}

/* Write `text` to a temporary model file and run the probe on it: exit 2, stage args, a
 * message naming the file and `want`. */
static void bad_model(const char *name, const char *text, const char *want)
{
	char path[512], err[256];

	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	CHECK_INT(fs_write_atomic(path, text, strlen(text), 0644, err, sizeof err), 0);
	expect_stage((const char *[]){ "--model", path, NULL }, no_env, 2, "args", want);
	expect_stage((const char *[]){ "--model", path, NULL }, no_env, 2, "args", name);
	unlink(path);
}

static void test_model_files(void)
{
	char path[1200], err[256];
	size_t len;
	char *text, *pos;

	bad_model("broken.json", "{\"schema\": \"nccltune-model/1\",\n  \"name\": ", "not valid JSON");
	snprintf(path, sizeof path, "%s/models/pcie-4gpu-switch.json", src);
	text = fs_read_file(path, 1 << 20, &len, err, sizeof err);
	CHECK(text != NULL);
	if (!text)
		return;
	pos = strstr(text, "\"summary\"");
	CHECK(pos != NULL);
	if (pos) {
		memcpy(pos, "\"sumary\" ", 9);   /* same length: a typo'd key */
		bad_model("typo.json", text, "typo.json: sumary: unknown key");
	}
	free(text);
}

int main(void)
{
	const char *build = getenv("NCCLTUNE_BUILD_ROOT"), *source = getenv("NCCLTUNE_SOURCE_ROOT");
	char templ[] = "/tmp/nccltune-model-probe-XXXXXX";

	snprintf(probe, sizeof probe, "%s/models/nccltune-model-probe", build ? build : "../..");
	snprintf(src, sizeof src, "%s", source ? source : "../..");
	if (access(probe, X_OK) != 0) {
		fprintf(stderr, "no probe at %s (set NCCLTUNE_BUILD_ROOT)\n", probe);
		return 1;
	}
	if (!mkdtemp(templ)) {
		fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(tmpdir, sizeof tmpdir, "%s", templ);
	test_ok_and_round_trip();
	test_seed();
	test_failures();
	test_env();
	test_fingerprint();
	test_info();
	test_model_files();
	rmdir(tmpdir);
	return check_status();
}
