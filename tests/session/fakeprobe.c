/* fakeprobe.c - a deterministic test double speaking probe protocol v1, for the session
 * tests: its latency is an analytic function of the NCCL_* variables it is given, so a
 * test knows the landscape exactly without waiting for a real GPU or a model.
 *
 * Landscape (per all-reduce, microseconds):
 *   NCCL_ALGO=Tree                       -> fails at stage "capture"
 *   NCCL_PROTO=LL128, log2(BUFFSIZE) odd -> fails at stage "verify" (a wrong sum)
 *   otherwise proto {LL 10, LL128 14, Simple 20, unset 18} + algo {Ring 0, unset 3}
 *     + 0.7 |MAX_NCHANNELS - 2| + 0.2 |MIN_NCHANNELS - 1| + 0.3 |log2(BUFFSIZE) - 17|
 *     + threads {64: 0, 128: 0.5, 256: 1, 512: 2, unset 1.5} + bytes / 8000
 *   (an unset channel or buffer variable counts as 16 channels / 4 MiB).
 *
 * Test knobs, read from its environment:
 *   FAKEPROBE_LOG=FILE        append one line per run: the arguments, then every NCCL_*
 *                             variable (sorted), so tests can check what a probe saw
 *   FAKEPROBE_MODE=M          hang | crash | garbage | nan | bigout | init | okexit1 |
 *                             hungexit1 (an ok report that says teardown_hung, exit 1:
 *                             what mpirun makes of a rank the watchdog ended)
 *   FAKEPROBE_HANG_WHEN=V=X   hang when variable V has value X (e.g. NCCL_NTHREADS=512)
 *   FAKEPROBE_CRASH_ONCE=FILE crash the first time each configuration runs (kept in FILE)
 *   FAKEPROBE_SLEEP_MS=N      sleep before answering
 *   FAKEPROBE_SOURCE=model    say "source": "model" ("model": "fake")
 *   FAKEPROBE_GPU=NAME        GPU name in the fingerprint (default "Fake GPU")
 *   FAKEPROBE_FP_FAIL=1       --fingerprint fails
 *   FAKEPROBE_NCCL_PATH=P     the fingerprint's nccl_path (default: --nccl's value, if any)
 *   FAKEPROBE_EITHER=A,B:US   add US microseconds when neither variable A nor B is set
 *                             (two variables that stand in for each other: removing one
 *                             of them changes nothing, removing both costs US)
 * `--model NAME` is accepted (and makes it say "source": "model"), so it can stand in
 * for nccltune-model-probe. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto.h"

extern char **environ;

static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v ? v : dflt;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The configuration as one line: sorted NCCL_* variables. */
static void config_key(char *buf, size_t len)
{
	const char *vars[256];
	size_t n = 0, used = 0;

	for (size_t i = 0; environ[i] && n < 256; i++)
		if (strncmp(environ[i], "NCCL_", 5) == 0)
			vars[n++] = environ[i];
	qsort(vars, n, sizeof vars[0], cmp_str);
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		int k = snprintf(buf + used, len - used, "%s%s", i ? " " : "", vars[i]);

		if (k < 0 || (size_t)k >= len - used)
			break;
		used += (size_t)k;
	}
}

static void log_run(int argc, char **argv)
{
	const char *path = getenv("FAKEPROBE_LOG");
	char key[4096];
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "a");
	if (!f)
		return;
	for (int i = 1; i < argc; i++)
		fprintf(f, "%s%s", i > 1 ? " " : "", argv[i]);
	config_key(key, sizeof key);
	fprintf(f, " | %s\n", key);
	fclose(f);
}

/* Has this configuration run before? Records it if not. */
static int seen_before(const char *path)
{
	char key[4096], line[4200];
	FILE *f = fopen(path, "r");
	int seen = 0;

	config_key(key, sizeof key);
	if (f) {
		while (!seen && fgets(line, sizeof line, f)) {
			line[strcspn(line, "\n")] = '\0';
			seen = strcmp(line, key) == 0;
		}
		fclose(f);
	}
	if (!seen) {
		f = fopen(path, "a");
		if (f) {
			fprintf(f, "%s\n", key);
			fclose(f);
		}
	}
	return seen;
}

static double num_env(const char *name, double dflt)
{
	const char *v = getenv(name);

	return v ? atof(v) : dflt;
}

/* FAKEPROBE_EITHER's cost for this environment: "A,B:US" -> US when neither A nor B
 * is set, else 0; 0 when the knob is absent or malformed. */
static double either_cost(void)
{
	const char *k = getenv("FAKEPROBE_EITHER"), *comma, *colon;
	char a[128], b[128];

	if (!k || !(comma = strchr(k, ',')) || !(colon = strchr(comma, ':')) ||
	    (size_t)(comma - k) >= sizeof a || (size_t)(colon - comma - 1) >= sizeof b)
		return 0;
	memcpy(a, k, (size_t)(comma - k));
	a[comma - k] = '\0';
	memcpy(b, comma + 1, (size_t)(colon - comma - 1));
	b[colon - comma - 1] = '\0';
	return getenv(a) || getenv(b) ? 0 : atof(colon + 1);
}

static int fingerprint(const char *nccl, const char *ranks_per_gpu)
{
	const char *path = env_or("FAKEPROBE_NCCL_PATH", nccl ? nccl : "");
	const char *gpu = env_or("FAKEPROBE_GPU", "Fake GPU");
	const char *src = env_or("FAKEPROBE_SOURCE", "measured");

	if (getenv("FAKEPROBE_FP_FAIL")) {
		fprintf(stderr, "fakeprobe: no fingerprint today\n");
		return 1;
	}
	if (*path)
		printf("{\"nccl_path\": \"%s\", ", path);
	if (ranks_per_gpu)
		printf("%s\"ranks_per_gpu\": %d, ", *path ? "" : "{", atoi(ranks_per_gpu));
	if (ranks_per_gpu && !*path)
		path = " ";   /* the object is open */
	printf("%s\"schema\": \"%s\", \"source\": \"%s\",%s \"host\": \"fakehost\", "
	       "\"driver\": \"1.0\", \"cuda_runtime\": \"13.0\", \"nccl_version\": \"2.28.3\", "
	       "\"gpu_count\": 2, \"gpus\": [{\"index\": 0, \"name\": \"%s\", \"bus_id\": \"0:1\"}, "
	       "{\"index\": 1, \"name\": \"%s\", \"bus_id\": \"0:2\"}], "
	       "\"topology\": [[\"X\", \"PIX\"], [\"PIX\", \"X\"]]}\n",
	       *path ? "" : "{", PROTO_FINGERPRINT_SCHEMA, src,
	       strcmp(src, "model") == 0 ? " \"model\": \"fake\"," : "", gpu, gpu);
	return 0;
}

static void hang(void)
{
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	struct proto_workload w;
	struct proto_report r;
	const char *mode = env_or("FAKEPROBE_MODE", ""), *hw = getenv("FAKEPROBE_HANG_WHEN");
	const char *proto = getenv("NCCL_PROTO"), *algo = getenv("NCCL_ALGO");
	double maxch = num_env("NCCL_MAX_NCHANNELS", 16), minch = num_env("NCCL_MIN_NCHANNELS", 16);
	double bufl2 = log2(num_env("NCCL_BUFFSIZE", 4194304)), thr = num_env("NCCL_NTHREADS", 0);
	double base, per;
	char err[256];
	const char *nccl = NULL, *rpg = NULL;

	proto_workload_defaults(&w);
	memset(&r, 0, sizeof r);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int rc;

		if (strcmp(a, "--fingerprint") == 0)
			return fingerprint(nccl, rpg);
		if (strcmp(a, "--nccl") == 0 && i + 1 < argc) {
			nccl = argv[++i];
			continue;
		}
		if (strcmp(a, "--version") == 0) {
			puts("fakeprobe 1");
			return 0;
		}
		if (strcmp(a, "--model") == 0 && i + 1 < argc) {
			/* stands in for nccltune-model-probe in tests of the default probe */
			setenv("FAKEPROBE_SOURCE", "model", 1);
			i++;
			continue;
		}
		if (strcmp(a, "--seed") == 0 && i + 1 < argc) {
			/* the model probe's noise seed: nothing to seed here */
			i++;
			continue;
		}
		if (strcmp(a, "--ranks-per-gpu") == 0 && i + 1 < argc) {
			/* nccltune-probe's rig option: logged (log_run), said in the fingerprint */
			rpg = argv[++i];
			continue;
		}
		if (strncmp(a, "--", 2) != 0 || i + 1 >= argc) {
			proto_report_fail(&r, PROTO_STAGE_ARGS, "bad argument '%s'", a);
			proto_report_write(&r, stdout);
			return PROTO_EXIT_USAGE;
		}
		rc = proto_workload_option(&w, a + 2, argv[i + 1], err, sizeof err);
		if (rc != 0) {
			proto_report_fail(&r, PROTO_STAGE_ARGS, "%s", rc > 0 ? "unknown option" : err);
			proto_report_write(&r, stdout);
			return PROTO_EXIT_USAGE;
		}
		i++;
	}
	log_run(argc, argv);
	if (getenv("FAKEPROBE_SLEEP_MS")) {
		struct timespec ts;
		long ms = atol(getenv("FAKEPROBE_SLEEP_MS"));

		ts.tv_sec = ms / 1000;
		ts.tv_nsec = (ms % 1000) * 1000000L;
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "fakeprobe: measuring\n");
	if (hw) {
		const char *eq = strchr(hw, '=');
		char name[128];

		if (eq && (size_t)(eq - hw) < sizeof name) {
			memcpy(name, hw, (size_t)(eq - hw));
			name[eq - hw] = '\0';
			if (getenv(name) && strcmp(getenv(name), eq + 1) == 0)
				hang();
		}
	}
	if (getenv("FAKEPROBE_CRASH_ONCE") && !seen_before(getenv("FAKEPROBE_CRASH_ONCE")))
		raise(SIGSEGV);
	if (strcmp(mode, "hang") == 0)
		hang();
	if (strcmp(mode, "crash") == 0)
		raise(SIGSEGV);
	if (strcmp(mode, "garbage") == 0) {
		puts("this is not JSON");
		return 0;
	}
	if (strcmp(mode, "bigout") == 0) {
		for (int i = 0; i < 4 * 1024; i++)
			fputs("................................................................"
			      "................................................................"
			      "................................................................"
			      "................................................................"
			      "................................................................"
			      "................................................................"
			      "................................................................"
			      "................................................................"
			      "................................................................"
			      "................................................................"
			      "................................................................"
			      "................................................................"
			      "................................................................"
			      "................................................................"
			      "................................................................"
			      "...............................................................\n",
			      stdout);
		return 0;
	}
	if (strcmp(mode, "init") == 0) {
		proto_report_fail(&r, PROTO_STAGE_INIT, "ncclCommInitRank: unhandled system error");
		proto_report_write(&r, stdout);
		return PROTO_EXIT_FAILED;
	}
	if (algo && strcmp(algo, "Tree") == 0) {
		proto_report_fail(&r, PROTO_STAGE_CAPTURE,
		                  "ncclAllReduce: invalid usage (NCCL_ALGO=Tree): no algorithm/protocol available");
		proto_report_write(&r, stdout);
		return PROTO_EXIT_FAILED;
	}
	if (proto && strcmp(proto, "LL128") == 0 && ((long)lround(bufl2)) % 2 == 1) {
		proto_report_fail(&r, PROTO_STAGE_VERIFY, "wrong sum at element 17: got 3.5, want 4");
		proto_report_write(&r, stdout);
		return PROTO_EXIT_FAILED;
	}
	base = !proto ? 18 : strcmp(proto, "LL") == 0 ? 10 : strcmp(proto, "LL128") == 0 ? 14 : 20;
	base += algo ? 0 : 3;
	base += 0.7 * fabs(maxch - 2) + 0.2 * fabs(minch - 1) + 0.3 * fabs(bufl2 - 17);
	base += thr == 64 ? 0 : thr == 128 ? 0.5 : thr == 256 ? 1 : thr == 512 ? 2 : 1.5;
	base += either_cost();
	if (strcmp(mode, "nan") == 0) {
		printf("{\"schema\": \"%s\", \"ok\": true, \"nranks\": 2, \"nccl_version\": \"2.28.3\", "
		       "\"source\": \"measured\", \"results\": [{\"bytes\": %zu, \"ops\": %d, "
		       "\"samples\": 10, \"us\": {\"median\": NaN, \"p10\": 1, \"p90\": 1, \"min\": 1, "
		       "\"max\": 1}, \"correct\": true}]}\n", PROTO_SCHEMA, w.bytes[0], w.ops);
		return 0;
	}
	r.ok = true;
	r.nranks = 2 * (rpg ? atoi(rpg) : 1);   /* the rig: ranks share each of the 2 GPUs */
	r.ranks_per_gpu = rpg ? atoi(rpg) : 0;
	snprintf(r.nccl_version, sizeof r.nccl_version, "2.28.3");
	snprintf(r.source, sizeof r.source, "%s", env_or("FAKEPROBE_SOURCE", "measured"));
	if (strcmp(r.source, "model") == 0)
		snprintf(r.model, sizeof r.model, "fake");
	r.nresults = w.nsizes;
	for (size_t i = 0; i < w.nsizes; i++) {
		per = base + (double)w.bytes[i] / 8000.0;
		r.results[i].bytes = w.bytes[i];
		r.results[i].ops = w.ops;
		r.results[i].samples = w.iters;
		r.results[i].us.min = per * 0.98;
		r.results[i].us.p10 = per * 0.99;
		r.results[i].us.median = per;
		r.results[i].us.p90 = per * 1.02;
		r.results[i].us.max = per * 1.05;
		r.results[i].correct = true;
	}
	if (strcmp(mode, "hungexit1") == 0) {   /* a watchdog ended a hung teardown */
		r.teardown_hung = true;
		proto_report_warn(&r, "rank 0: teardown hung for 5 s (fake)");
	}
	if (proto_report_write(&r, stdout) != 0)
		return 1;
	return strcmp(mode, "okexit1") == 0 || strcmp(mode, "hungexit1") == 0 ? 1 : 0;
}
