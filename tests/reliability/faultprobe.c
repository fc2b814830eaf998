/* faultprobe.c - a probe (protocol v1) that fails on purpose, for the reliability tests.
 *
 * Without faults it answers like a healthy probe: a smooth latency landscape computed
 * from the candidate's NCCL_* variables (an analytic function, source "model", model
 * "faultprobe"; no figure here is a measurement). Faults are chosen by options or by
 * environment variables (the option wins):
 *
 *   --mode M     FAULTPROBE_MODE   what to do for every run (default "ok"; see modes[])
 *   --rules R    FAULTPROBE_RULES  faults as a function of the candidate's environment:
 *                "NCCL_ALGO=Tree:segv;NCCL_MAX_NCHANNELS>16:hang" (=, !=, <, > on
 *                integers); "default" is the set in DEFAULT_RULES. Used when the mode is
 *                "ok"; the first matching rule wins.
 *   --seed S     FAULTPROBE_SEED   mode "random": the fault is drawn from (seed, candidate
 *                environment), so one configuration always behaves the same way
 *   --state D    FAULTPROBE_STATE  folder for "flaky-*" modes: fail the first run of a
 *                configuration, succeed afterwards; and for "second-*" modes: succeed on
 *                the first run of a configuration, fail its second, succeed after that
 *                (a finalist or a --try that fails once, in its first final round)
 *   --log F      FAULTPROBE_LOG    append one JSON line per invocation (O_APPEND, one
 *                write) *before* doing anything else: the tests' independent count of
 *                probe runs, with the mode chosen and the outcome class the tuner must
 *                record for it ("expect")
 *   --delay-ms N FAULTPROBE_DELAY_MS  sleep before answering (gives kill tests a window)
 *   --tag T      a marker the tests look for in /proc to find leftover processes
 *   --gpus N     reports say nranks N (default 2, the GPUs of its fingerprint)
 *
 * Extra behaviour: an NCCL_PROTO/NCCL_ALGO value NCCL would reject fails at stage env,
 * so a tuner that passes nonsense is caught. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <gsl/gsl_rng.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto.h"

#define DEFAULT_RULES "NCCL_ALGO=Tree:segv;NCCL_PROTO=LL128:wrong-sum;NCCL_MAX_NCHANNELS>16:hang"
#define MAX_ENV 64

extern char **environ;

/* Every mode, with the outcome class the tuner must give it and its weight when drawn
 * by mode "random" (0: never drawn). */
static const struct mode_info {
	const char *name;
	const char *expect;
	int weight;
} modes[] = {
	{"ok", "ok", 60},
	{"slow", "ok", 2},
	{"stderr-flood", "ok", 3},
	{"orphan", "ok", 2},              /* report, exit 0; a grandchild lingers in the group */
	{"segv", "crash", 5},
	{"abort", "crash", 3},
	{"hang", "timeout", 1},
	{"hang-noterm", "timeout", 0},    /* ignores SIGTERM: the runner must escalate */
	{"fork-grandchild-hang", "timeout", 1},
	{"garbage", "garbage", 4},
	{"truncated", "garbage", 3},
	{"nan", "garbage", 2},
	{"negative", "garbage", 2},
	{"zero-latency", "garbage", 0},   /* latencies 0: below any physical floor */
	{"tiny-latency", "garbage", 0},   /* latencies 5e-324, the smallest double */
	{"deep-unknown", "garbage", 0},   /* an ok report with an unknown key 999 deep */
	{"stdout-flood", "garbage", 1},
	{"exit-nojson", "garbage", 2},
	{"exit3-nojson", "garbage", 0},
	{"ok-false-exit0", "capture", 0}, /* a failure report with exit status 0 */
	{"ok-exit1", "garbage", 0},       /* a success report with exit status 1 */
	{"wrong-sum", "verify", 4},       /* ok: true but correct: false, fast */
	{"wrong-sum-exit1", "verify", 2}, /* the protocol's way: ok false, stage verify */
	{"fail-init", "init", 2},
	{"fail-capture", "capture", 3},
	{"fail-env", "env", 0},
	/* report, exit 0; a child left the process group (killing the group misses it) */
	{"escape-setsid", "ok", 0},       /* ... by setsid() */
	{"escape-setpgid", "ok", 0},      /* ... by setpgid(0, 0) */
	{"escape-daemon", "ok", 0},       /* ... by setsid() and a second fork, as a daemon */
	/* a failure whose error holds terminal escapes (OSC 0 title, OSC 52 clipboard, clear
	 * screen, a fake line, C1 CSI) and invalid UTF-8, with 3000 bytes of two-byte UTF-8
	 * on stderr that a 2 KiB tail cuts in the middle of a character; with
	 * --fingerprint it prints the escapes on stderr and exits 1 */
	{"fail-tty", "capture", 0},
	/* a success report of one rank, on a 2-GPU fingerprint: another measurement */
	{"nranks1", "garbage", 0},
	{"fail-nodevice", "init", 0},     /* what the real probe says without a GPU */
};

/* What fail-tty says. */
#define HOSTILE_TEXT "cudaGraphInstantiate: \x1b]0;owned title\x07\x1b]52;c;ZWNobyBvd25lZA==\x07" \
	"\x1b[2J\x1b[Hcleared\nnccltune: fake line \xc2\x9b" "31mred\x9b\xff\xfe bad utf-8, " \
	"fine: 5 \xc2\xb5s"

struct options {
	const char *mode;
	const char *rules;
	const char *state;
	const char *log;
	const char *tag;
	unsigned long seed;
	long delay_ms;
	int gpus;               /* --gpus N: the ranks of every report (default 2, the
	                         * fingerprint's gpu_count) */
	bool fingerprint;
	struct proto_workload w;
};

static const struct mode_info *mode_find(const char *name)
{
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
		if (strcmp(modes[i].name, name) == 0)
			return &modes[i];
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void hang_forever(void)
{
	for (;;)
		pause();
}

/* The NCCL_* part of the environment, sorted by name (environ order is not stable). */
static size_t nccl_env(const char **out, size_t max)
{
	size_t n = 0;

	for (char **e = environ; *e && n < max; e++)
		if (strncmp(*e, "NCCL_", 5) == 0)
			out[n++] = *e;
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcmp(out[j - 1], out[j]) > 0; j--) {
			const char *t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

/* FNV-1a over the sorted NCCL_* variables: the identity of a configuration. */
static uint64_t config_hash(void)
{
	const char *env[MAX_ENV];
	size_t n = nccl_env(env, MAX_ENV);
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		for (const char *c = env[i]; ; c++) {
			h ^= (unsigned char)*c;
			h *= 1099511628211ULL;
			if (!*c)
				break;
		}
	return h;
}

static long env_long(const char *name, long dflt)
{
	const char *v = getenv(name);
	char *end;
	long x;

	if (!v || !*v)
		return dflt;
	errno = 0;
	x = strtol(v, &end, 10);
	return (errno || *end) ? dflt : x;
}

/* Does rule "NAME<op>VALUE" hold in the environment? */
static bool rule_holds(const char *cond)
{
	char name[128];
	const char *op = strpbrk(cond, "=<>!");
	const char *val, *cur;
	size_t nlen;

	if (!op)
		return false;
	nlen = (size_t)(op - cond);
	if (nlen == 0 || nlen >= sizeof name)
		return false;
	memcpy(name, cond, nlen);
	name[nlen] = '\0';
	cur = getenv(name);
	if (op[0] == '!' && op[1] == '=') {
		val = op + 2;
		return !cur || strcmp(cur, val) != 0;
	}
	val = op + 1;
	if (op[0] == '=')
		return cur && strcmp(cur, val) == 0;
	if (!cur)
		return false;
	return op[0] == '<' ? atol(cur) < atol(val) : atol(cur) > atol(val);
}

/* The mode of the first rule whose condition holds, or NULL. Writes into buf. */
static const char *rules_match(const char *rules, char *buf, size_t len)
{
	const char *p;

	if (!rules || !*rules)
		return NULL;
	if (strcmp(rules, "default") == 0)
		rules = DEFAULT_RULES;
	p = rules;
	while (*p) {
		const char *semi = strchr(p, ';');
		size_t rlen = semi ? (size_t)(semi - p) : strlen(p);
		char rule[256];
		char *colon;

		if (rlen > 0 && rlen < sizeof rule) {
			memcpy(rule, p, rlen);
			rule[rlen] = '\0';
			colon = strrchr(rule, ':');
			if (colon) {
				*colon = '\0';
				if (rule_holds(rule)) {
					snprintf(buf, len, "%s", colon + 1);
					return buf;
				}
			}
		}
		p += rlen;
		if (*p == ';')
			p++;
	}
	return NULL;
}

/* Mode "random": a weighted draw from (seed, configuration). */
static const char *random_mode(unsigned long seed, uint64_t hash)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	int total = 0, pick;
	const char *name = "ok";

	if (!rng)
		return "ok";
	gsl_rng_set(rng, (unsigned long)(seed ^ hash ^ (hash >> 32)));
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
		total += modes[i].weight;
	pick = (int)gsl_rng_uniform_int(rng, (unsigned long)total);
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		if (pick < modes[i].weight) {
			name = modes[i].name;
			break;
		}
		pick -= modes[i].weight;
	}
	gsl_rng_free(rng);
	return name;
}

/* For "flaky-M": true the first time this configuration is seen (state file created). */
static bool flaky_first(const char *state, uint64_t hash)
{
	char path[PATH_MAX];
	int fd;

	if (!state)
		return true;
	snprintf(path, sizeof path, "%s/%016llx", state, (unsigned long long)hash);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* For "second-M": true when this is the second run of this configuration (state files
 * HASH and HASH.2 created one run after the other). Without a state folder: never. */
static bool second_run(const char *state, uint64_t hash)
{
	char path[PATH_MAX];
	int fd;

	if (!state || flaky_first(state, hash))
		return false;
	snprintf(path, sizeof path, "%s/%016llx.2", state, (unsigned long long)hash);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Append one line to the invocation log with a single write(). Failing to log is
 * fatal: a test that counts invocations must not silently miss one. */
static int log_invocation(const char *path, const char *kind, const char *mode,
                          const char *expect, const char *tag)
{
	cJSON *o = cJSON_CreateObject(), *env;
	const char *vars[MAX_ENV];
	size_t n = nccl_env(vars, MAX_ENV);
	char *text = NULL, *line = NULL;
	int fd = -1, rc = -1;
	size_t len;

	if (!o)
		goto out;
	if (!cJSON_AddStringToObject(o, "kind", kind) ||
	    !cJSON_AddNumberToObject(o, "pid", getpid()) ||
	    !cJSON_AddNumberToObject(o, "ppid", getppid()) ||
	    !cJSON_AddStringToObject(o, "mode", mode) ||
	    !cJSON_AddStringToObject(o, "expect", expect) ||
	    !cJSON_AddStringToObject(o, "tag", tag ? tag : "") ||
	    !cJSON_AddStringToObject(o, "nccltune_run", getenv("NCCLTUNE_RUN") ? getenv("NCCLTUNE_RUN")
	                                                                        : ""))
		goto out;
	env = cJSON_AddObjectToObject(o, "env");
	if (!env)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(vars[i], '=');
		char name[128];
		size_t nlen = eq ? (size_t)(eq - vars[i]) : 0;

		if (!eq || nlen >= sizeof name)
			continue;
		memcpy(name, vars[i], nlen);
		name[nlen] = '\0';
		if (!cJSON_AddStringToObject(env, name, eq + 1))
			goto out;
	}
	text = cJSON_PrintUnformatted(o);
	if (!text)
		goto out;
	len = strlen(text);
	line = malloc(len + 2);
	if (!line)
		goto out;
	memcpy(line, text, len);
	line[len] = '\n';
	line[len + 1] = '\0';
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "faultprobe: %s: cannot open: %s\n", path, strerror(errno));
		goto out;
	}
	if (write(fd, line, len + 1) != (ssize_t)(len + 1)) {
		fprintf(stderr, "faultprobe: %s: write failed: %s\n", path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0 && close(fd) != 0)
		rc = -1;
	free(line);
	free(text);
	cJSON_Delete(o);
	return rc;
}

static double level(const char *name, double dflt)
{
	const char *v = getenv(name);

	return (v && *v) ? atof(v) : dflt;
}

/* The landscape: latency of one all-reduce of `bytes`, in microseconds. LL is best for
 * small messages, a few channels beat many, a buffer smaller than the message costs.
 * The fault rules' favourites (Tree, LL128) are made look fastest on purpose, so a
 * tuner that lets a failing configuration through would pick it. */
static double landscape_us(size_t bytes)
{
	const char *proto = getenv("NCCL_PROTO"), *algo = getenv("NCCL_ALGO");
	double base = 20, bw = 8000, algo_f = 1.2;
	double nch = level("NCCL_MAX_NCHANNELS", 8), thr = level("NCCL_NTHREADS", 0);
	double buf = level("NCCL_BUFFSIZE", 4194304), us;

	if (proto && strcmp(proto, "LL") == 0) {
		base = 10;
		bw = 2000;
	} else if (proto && strcmp(proto, "LL128") == 0) {
		base = 4;
		bw = 6000;
	} else if (proto && strcmp(proto, "Simple") == 0) {
		base = 25;
		bw = 10000;
	}
	if (algo && strcmp(algo, "Ring") == 0)
		algo_f = 1.0;
	else if (algo && strcmp(algo, "Tree") == 0)
		algo_f = 0.5;
	if (nch < 1)
		nch = 1;
	us = base + 0.8 * nch + (double)bytes / (bw * nch);
	us += thr > 0 ? log2(thr / 64.0) * 0.5 + 0.2 : 1.0;
	if (buf > 0 && buf < (double)bytes)
		us += 2.0 * (double)bytes / buf;
	return us * algo_f;
}

/* A measurement-shaped report from the landscape; `wrong` marks the sums wrong. */
static void fill_report(struct proto_report *r, const struct proto_workload *w, bool wrong,
                        unsigned long seed, uint64_t hash)
{
	double jitter = 1.0 + 0.002 * (double)((hash ^ seed ^ (uint64_t)getpid()) % 5);

	memset(r, 0, sizeof *r);
	r->ok = true;
	r->nranks = 2;
	snprintf(r->nccl_version, sizeof r->nccl_version, "2.28.9");
	snprintf(r->source, sizeof r->source, "model");
	snprintf(r->model, sizeof r->model, "faultprobe");
	r->nresults = w->nsizes;
	for (size_t i = 0; i < w->nsizes; i++) {
		struct proto_size_result *s = &r->results[i];
		double us = landscape_us(w->bytes[i]) * jitter;

		if (wrong)
			us *= 0.25;
		s->bytes = w->bytes[i];
		s->ops = w->ops;
		s->samples = w->iters;
		s->us.min = us * 0.97;
		s->us.p10 = us * 0.99;
		s->us.median = us;
		s->us.p90 = us * 1.02;
		s->us.max = us * 1.10;
		s->correct = !wrong;
	}
}

static int print_report(const struct proto_report *r, int status)
{
	if (proto_report_write(r, stdout) != 0) {
		fprintf(stderr, "faultprobe: cannot write the report: %s\n", strerror(errno));
		return 1;
	}
	return status;
}

static int fail(enum proto_stage stage, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Print a failure report at `stage`; returns `status` (1 if the report cannot be written). */
static int fail(enum proto_stage stage, int status, const char *fmt, ...)
{
	struct proto_report r;
	char msg[PROTO_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	memset(&r, 0, sizeof r);
	proto_report_fail(&r, stage, "%s", msg);
	return print_report(&r, status);
}

/* A value NCCL would refuse before init. */
static const char *env_rejected(void)
{
	static const char *const protos[] = {"LL", "LL128", "Simple"};
	static const char *const algos[] = {"Ring", "Tree", "CollnetDirect", "CollnetChain",
	                                    "NVLS", "NVLSTree", "PAT"};
	const char *p = getenv("NCCL_PROTO"), *a = getenv("NCCL_ALGO");
	bool okp = !p, oka = !a;

	for (size_t i = 0; p && i < sizeof protos / sizeof protos[0]; i++)
		okp = okp || strcmp(p, protos[i]) == 0;
	for (size_t i = 0; a && i < sizeof algos / sizeof algos[0]; i++)
		oka = oka || strcmp(a, algos[i]) == 0;
	return !okp ? "NCCL_PROTO" : !oka ? "NCCL_ALGO" : NULL;
}

/* Leave a process behind that is out of our process group: a child that calls setsid()
 * (how: 's'), setpgid(0, 0) ('p'), or setsid() and forks again, its parent exiting, so
 * the grandchild is an orphan twice over ('d'). It closes our pipes and sleeps. */
static void escape(char how)
{
	pid_t pid = fork();

	if (pid != 0)
		return;
	close(STDOUT_FILENO);
	close(STDERR_FILENO);
	if (how == 'p')
		setpgid(0, 0);
	else
		setsid();
	if (how == 'd' && fork() != 0)
		_exit(0);
	hang_forever();
}

static int run_mode(const char *mode, const struct options *o, uint64_t hash)
{
	struct proto_report r;
	const char *bad;

	if (strncmp(mode, "escape-", 7) == 0)
		mode = "ok";   /* main has left its escaped process already */
	if (strcmp(mode, "ok") == 0 || strcmp(mode, "slow") == 0 ||
	    strcmp(mode, "stderr-flood") == 0 || strcmp(mode, "orphan") == 0) {
		if (strcmp(mode, "slow") == 0)
			sleep_ms(env_long("FAULTPROBE_SLOW_MS", 300));
		if (strcmp(mode, "stderr-flood") == 0) {
			/* far more than any pipe buffer: a runner that reads stdout and stderr
			 * one after the other deadlocks here */
			setvbuf(stderr, NULL, _IOFBF, 1 << 16);
			for (int i = 0; i < 5000; i++)
				fprintf(stderr, "faultprobe: diagnostic line %d of a flood of stderr\n", i);
		}
		if (strcmp(mode, "orphan") == 0) {
			pid_t pid = fork();

			if (pid == 0) {
				/* close our copies of the pipes so the runner sees EOF at once */
				close(STDOUT_FILENO);
				close(STDERR_FILENO);
				hang_forever();
			}
		}
		bad = env_rejected();
		if (bad)
			return fail(PROTO_STAGE_ENV, 1, "%s: value not accepted by NCCL", bad);
		fill_report(&r, &o->w, false, o->seed, hash);
		if (o->gpus > 0)
			r.nranks = o->gpus;
		return print_report(&r, 0);
	}
	if (strcmp(mode, "nranks1") == 0) {
		fill_report(&r, &o->w, false, o->seed, hash);
		r.nranks = 1;
		return print_report(&r, 0);
	}
	if (strcmp(mode, "segv") == 0) {
		/* the default action, not a sanitizer's handler: killed by SIGSEGV */
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
		return 1;
	}
	if (strcmp(mode, "abort") == 0)
		abort();
	if (strcmp(mode, "hang") == 0)
		hang_forever();
	if (strcmp(mode, "hang-noterm") == 0) {
		signal(SIGTERM, SIG_IGN);
		hang_forever();
	}
	if (strcmp(mode, "fork-grandchild-hang") == 0) {
		if (fork() < 0)
			fprintf(stderr, "faultprobe: fork: %s\n", strerror(errno));
		hang_forever();
	}
	if (strcmp(mode, "garbage") == 0) {
		fputs("Segmentation fault? no: \x01\x02 {not json at all\n", stdout);
		return 0;
	}
	if (strcmp(mode, "truncated") == 0) {
		char *line;

		fill_report(&r, &o->w, false, o->seed, hash);
		line = proto_report_format(&r);
		if (!line)
			return 1;
		fwrite(line, 1, strlen(line) / 2, stdout);
		free(line);
		return 0;
	}
	if (strcmp(mode, "deep-unknown") == 0) {
		char *line;
		size_t n;

		fill_report(&r, &o->w, false, o->seed, hash);
		line = proto_report_format(&r);
		n = line ? strlen(line) : 0;
		while (n > 0 && line[n - 1] == '\n')
			n--;
		if (n < 2 || line[n - 1] != '}') {
			free(line);
			return 1;
		}
		fwrite(line, 1, n - 1, stdout);
		fputs(", \"extension\": ", stdout);
		for (int i = 0; i < 999; i++)
			fputc('[', stdout);
		for (int i = 0; i < 999; i++)
			fputc(']', stdout);
		fputs("}\n", stdout);
		free(line);
		return 0;
	}
	if (strcmp(mode, "nan") == 0 || strcmp(mode, "negative") == 0 ||
	    strcmp(mode, "zero-latency") == 0 || strcmp(mode, "tiny-latency") == 0) {
		const char *v = strcmp(mode, "nan") == 0 ? "NaN" : strcmp(mode, "negative") == 0 ? "-1.5"
		              : strcmp(mode, "zero-latency") == 0 ? "0" : "5e-324";

		printf("{\"schema\": \"%s\", \"ok\": true, \"nranks\": 2, \"nccl_version\": \"2.28.9\","
		       " \"source\": \"model\", \"model\": \"faultprobe\", \"results\": [{\"bytes\": %zu,"
		       " \"ops\": %d, \"samples\": %d, \"us\": {\"median\": %s, \"p10\": %s, \"p90\": %s,"
		       " \"min\": %s, \"max\": %s}, \"correct\": true}]}\n", PROTO_SCHEMA,
		       o->w.bytes[0], o->w.ops, o->w.iters, v, v, v, v, v);
		return 0;
	}
	if (strcmp(mode, "stdout-flood") == 0) {
		for (int i = 0; i < 80000; i++)
			fputs("{\"flood\": \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}\n", stdout);
		return 0;
	}
	if (strcmp(mode, "exit-nojson") == 0)
		return 0;
	if (strcmp(mode, "exit3-nojson") == 0)
		return 3;
	if (strcmp(mode, "ok-false-exit0") == 0)
		return fail(PROTO_STAGE_CAPTURE, 0, "%s", "graph capture failed, but exit status 0");
	if (strcmp(mode, "ok-exit1") == 0) {
		fill_report(&r, &o->w, false, o->seed, hash);
		return print_report(&r, 1);
	}
	if (strcmp(mode, "wrong-sum") == 0) {
		fill_report(&r, &o->w, true, o->seed, hash);
		return print_report(&r, 0);
	}
	if (strcmp(mode, "wrong-sum-exit1") == 0)
		return fail(PROTO_STAGE_VERIFY, 1, "%s", "rank 3: sum differs from the expected value");
	if (strcmp(mode, "fail-init") == 0)
		return fail(PROTO_STAGE_INIT, 1, "%s", "ncclCommInitRank: unhandled system error");
	if (strcmp(mode, "fail-capture") == 0)
		return fail(PROTO_STAGE_CAPTURE, 1, "%s", "cudaStreamEndCapture: operation not permitted");
	if (strcmp(mode, "fail-nodevice") == 0)
		return fail(PROTO_STAGE_INIT, 1, "%s", "no CUDA device visible: cudaGetDeviceCount: "
		            "no CUDA-capable device is detected (cudaErrorNoDevice)");
	if (strcmp(mode, "fail-env") == 0)
		return fail(PROTO_STAGE_ENV, 1, "%s", "NCCL rejected the environment");
	if (strcmp(mode, "fail-tty") == 0) {
		for (int i = 0; i < 1500; i++)
			fputs("\xc3\xa9", stderr);
		fputc('\n', stderr);
		fflush(stderr);
		return fail(PROTO_STAGE_CAPTURE, 1, "%s", HOSTILE_TEXT);
	}
	return fail(PROTO_STAGE_ARGS, 2, "faultprobe: unknown mode '%s'", mode);
}

static int print_fingerprint(void)
{
	char host[256] = "faultprobe-host";
	cJSON *o = cJSON_CreateObject(), *gpus, *topo;
	char *text = NULL;
	int rc = 1;

	if (gethostname(host, sizeof host) != 0)
		snprintf(host, sizeof host, "faultprobe-host");
	host[sizeof host - 1] = '\0';
	if (!o || !cJSON_AddStringToObject(o, "schema", PROTO_FINGERPRINT_SCHEMA) ||
	    !cJSON_AddStringToObject(o, "source", "model") ||
	    !cJSON_AddStringToObject(o, "model", "faultprobe") ||
	    !cJSON_AddStringToObject(o, "host", host) ||
	    !cJSON_AddStringToObject(o, "kernel", "test") ||
	    !cJSON_AddStringToObject(o, "driver", "none") ||
	    !cJSON_AddStringToObject(o, "cuda_runtime", "none") ||
	    !cJSON_AddStringToObject(o, "cuda_driver", "none") ||
	    !cJSON_AddStringToObject(o, "nccl_version", "2.28.9") ||
	    !cJSON_AddNumberToObject(o, "gpu_count", 2))
		goto out;
	gpus = cJSON_AddArrayToObject(o, "gpus");
	topo = cJSON_AddArrayToObject(o, "topology");
	if (!gpus || !topo)
		goto out;
	for (int i = 0; i < 2; i++) {
		cJSON *g = cJSON_CreateObject(), *row = cJSON_CreateArray();
		char bus[32], uuid[48];

		if (!g || !cJSON_AddItemToArray(gpus, g) || !row || !cJSON_AddItemToArray(topo, row)) {
			cJSON_Delete(g);
			cJSON_Delete(row);
			goto out;
		}
		snprintf(bus, sizeof bus, "00000000:%02X:00.0", 0x18 + i);
		snprintf(uuid, sizeof uuid, "GPU-faultprobe-%d", i);
		if (!cJSON_AddNumberToObject(g, "index", i) ||
		    !cJSON_AddStringToObject(g, "name", "Fault Injection Device") ||
		    !cJSON_AddStringToObject(g, "bus_id", bus) ||
		    !cJSON_AddStringToObject(g, "uuid", uuid) ||
		    !cJSON_AddItemToArray(row, cJSON_CreateString(i == 0 ? "X" : "SYS")) ||
		    !cJSON_AddItemToArray(row, cJSON_CreateString(i == 1 ? "X" : "SYS")))
			goto out;
	}
	text = cJSON_PrintUnformatted(o);
	if (text && printf("%s\n", text) > 0 && fflush(stdout) == 0)
		rc = 0;
out:
	free(text);
	cJSON_Delete(o);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: faultprobe [--mode M] [--rules R] [--seed S] [--state DIR] [--log FILE]\n"
	        "                  [--delay-ms N] [--tag T] [--gpus N] [workload options] | --fingerprint\n"
	        "A probe (protocol v1) that fails on purpose, for nccltune's reliability tests.\n"
	        "Options fall back to FAULTPROBE_MODE, _RULES, _SEED, _STATE, _LOG, _DELAY_MS.\n"
	        "Modes:");
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
		fprintf(f, " %s", modes[i].name);
	fprintf(f, " random flaky-<mode> second-<mode>\n"
	        "Exit status: 0 report ok, 1 report with ok false, 2 bad option.\n");
}

/* Options: ours, then the protocol's workload options. Returns 0, 1 for --help or
 * --version (already answered), or -1 with a failure report printed (stage args). */
static int parse_options(int argc, char **argv, struct options *o)
{
	char err[256];

	memset(o, 0, sizeof *o);
	proto_workload_defaults(&o->w);
	o->mode = getenv("FAULTPROBE_MODE");
	o->rules = getenv("FAULTPROBE_RULES");
	o->state = getenv("FAULTPROBE_STATE");
	o->log = getenv("FAULTPROBE_LOG");
	o->seed = (unsigned long)env_long("FAULTPROBE_SEED", 1);
	o->delay_ms = env_long("FAULTPROBE_DELAY_MS", 0);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *name, *arg = NULL;
		int rc;

		if (strcmp(a, "--help") == 0) {
			usage(stdout);
			return 1;
		}
		if (strcmp(a, "--version") == 0) {
			printf("faultprobe (nccltune tests) protocol v1\n");
			return 1;
		}
		if (strcmp(a, "--fingerprint") == 0) {
			o->fingerprint = true;
			continue;
		}
		if (strncmp(a, "--", 2) != 0) {
			fail(PROTO_STAGE_ARGS, 2, "unexpected argument '%s'", a);
			return -1;
		}
		name = a + 2;
		if (strcmp(name, "out-of-place") != 0) {
			if (i + 1 >= argc) {
				fail(PROTO_STAGE_ARGS, 2, "%s needs a value", a);
				return -1;
			}
			arg = argv[++i];
		}
		if (strcmp(name, "mode") == 0) {
			o->mode = arg;
		} else if (strcmp(name, "rules") == 0) {
			o->rules = arg;
		} else if (strcmp(name, "state") == 0) {
			o->state = arg;
		} else if (strcmp(name, "log") == 0) {
			o->log = arg;
		} else if (strcmp(name, "tag") == 0) {
			o->tag = arg;
		} else if (strcmp(name, "seed") == 0) {
			o->seed = strtoul(arg, NULL, 10);
		} else if (strcmp(name, "delay-ms") == 0) {
			o->delay_ms = atol(arg);
		} else if (strcmp(name, "gpus") == 0) {
			o->gpus = atoi(arg);
		} else {
			rc = proto_workload_option(&o->w, name, arg, err, sizeof err);
			if (rc == 1) {
				fail(PROTO_STAGE_ARGS, 2, "unknown option '%s'", a);
				return -1;
			}
			if (rc != 0) {
				fail(PROTO_STAGE_ARGS, 2, "%s", err);
				return -1;
			}
		}
	}
	if (!o->mode || !*o->mode)
		o->mode = "ok";
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	const struct mode_info *mi;
	const char *mode;
	char rulebuf[64];
	uint64_t hash;
	bool flaky, second;
	int rc;

	rc = parse_options(argc, argv, &o);
	if (rc != 0)
		return rc < 0 ? PROTO_EXIT_USAGE : 0;
	if (o.fingerprint) {
		if (o.log && log_invocation(o.log, "fingerprint", "ok", "ok", o.tag) != 0)
			return 1;
		if (strcmp(o.mode, "fail-tty") == 0) {
			fprintf(stderr, "%s\n", HOSTILE_TEXT);
			return 1;
		}
		return print_fingerprint();
	}
	hash = config_hash();
	mode = o.mode;
	if (strcmp(mode, "random") == 0)
		mode = random_mode(o.seed, hash);
	else if (strcmp(mode, "ok") == 0)
		mode = rules_match(o.rules, rulebuf, sizeof rulebuf) ? rulebuf : "ok";
	flaky = strncmp(mode, "flaky-", 6) == 0;
	second = strncmp(mode, "second-", 7) == 0;
	mi = mode_find(flaky ? mode + 6 : second ? mode + 7 : mode);
	if (!mi)
		return fail(PROTO_STAGE_ARGS, 2, "faultprobe: unknown mode '%s'", mode);
	if ((flaky && !flaky_first(o.state, hash)) || (second && !second_run(o.state, hash)))
		mi = mode_find("ok");
	if (strcmp(mi->name, "ok") == 0 && env_rejected())
		mi = mode_find("fail-env");
	if (o.log && log_invocation(o.log, "run", mi->name, mi->expect, o.tag) != 0)
		return 1;
	if (strncmp(mi->name, "escape-", 7) == 0)
		escape(strcmp(mi->name, "escape-setpgid") == 0 ? 'p'
		       : strcmp(mi->name, "escape-daemon") == 0 ? 'd' : 's');
	if (o.delay_ms > 0)
		sleep_ms(o.delay_ms);
	return run_mode(mi->name, &o, hash);
}
