/* test_nccllog.c - NCCL's debug log as the probe reads it: the TUNING lines of NCCL 2.28.9
 * and 2.30.7 (the same text: src/enqueue.cc:741 and :822, scheduler/symmetric_sched.cc
 * :229 and :356), WARN lines, lines that must not count; the incremental reader over a
 * file written the way NCCL writes it (partial lines, lines NCCL never writes, the file
 * appearing late); decisions attributed to the ops of the capture window only; and the
 * private folder: variables set only when NCCL_DEBUG is unset, removed on cleanup. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"
#include "nccllog.h"

/* Lines as NCCL prints them (src/debug.cc: "host:pid:tid [dev] NCCL INFO " + message). */
#define INFO "gpu7:4242:4250 [0] NCCL INFO "
#define RING_LL_1 INFO "AllReduce: 43008 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}"

static void test_parse(void)
{
	static const struct {
		const char *line;
		enum nccllog_kind kind;
		unsigned long long bytes;
		int algo, proto, ctas;
		bool symmetric;
		const char *kernel;
	} cases[] = {
		/* NCCL 2.28.9 / 2.30.7, enqueue.cc: every algorithm and protocol word */
		{RING_LL_1, NCCLLOG_ALLREDUCE, 43008, 1, 0, 1, false, ""},
		{INFO "AllReduce: 1048576 Bytes -> Algo TREE proto SIMPLE channel{Lo..Hi}={2..5}",
		 NCCLLOG_ALLREDUCE, 1048576, 0, 2, 4, false, ""},
		{INFO "AllReduce: 65536 Bytes -> Algo COLLNET_DIRECT proto LL128 channel{Lo..Hi}={0..15}",
		 NCCLLOG_ALLREDUCE, 65536, 2, 1, 16, false, ""},
		{INFO "AllReduce: 65536 Bytes -> Algo COLLNET_CHAIN proto LL channel{Lo..Hi}={0..1}",
		 NCCLLOG_ALLREDUCE, 65536, 3, 0, 2, false, ""},
		{INFO "AllReduce: 8388608 Bytes -> Algo NVLS proto SIMPLE channel{Lo..Hi}={0..31}",
		 NCCLLOG_ALLREDUCE, 8388608, 4, 2, 32, false, ""},
		{INFO "AllReduce: 8388608 Bytes -> Algo NVLS_TREE proto SIMPLE channel{Lo..Hi}={0..63}",
		 NCCLLOG_ALLREDUCE, 8388608, 5, 2, 64, false, ""},
		{INFO "AllReduce: 4096 Bytes -> Algo PAT proto SIMPLE channel{Lo..Hi}={3..3}",
		 NCCLLOG_ALLREDUCE, 4096, 6, 2, 1, false, ""},
		/* with NCCL_DEBUG_TIMESTAMP_LEVELS=INFO a timestamp comes first */
		{"[2026-12-01 10:00:00] gpu7:4242:4250 [3] NCCL INFO AllReduce: 4 Bytes -> Algo RING "
		 "proto LL channel{Lo..Hi}={0..0}", NCCLLOG_ALLREDUCE, 4, 1, 0, 1, false, ""},
		/* symmetric kernels (registered windows) */
		{INFO "AllReduce [Symmetric]: 4096 Bytes -> Kernel AllReduce_AGxLL_R nchannels 2 "
		 "nthreads 512 nWorks 1", NCCLLOG_ALLREDUCE, 4096, -1, -1, 2, true, "AllReduce_AGxLL_R"},
		{INFO "AllReduce [Symmetric]: 1048576 Bytes -> Kernel AllReduce_RSxLD_AGxST nchannels 16 "
		 "nthreads 1024 nWorks 16", NCCLLOG_ALLREDUCE, 1048576, -1, -1, 16, true,
		 "AllReduce_RSxLD_AGxST"},
		/* a warning (NCCL prints a blank line before it) */
		{"gpu7:4242:4250 [0] enqueue.cc:1859 NCCL WARN Error : no algorithm/protocol available",
		 NCCLLOG_WARN, 0, 0, 0, 0, false, ""},
		/* what must not count */
		{"", NCCLLOG_OTHER, 0, 0, 0, 0, false, ""},
		{INFO "AllGather: 4096 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}",
		 NCCLLOG_OTHER, 0, 0, 0, 0, false, ""},
		{INFO "AllReduce [Copy Engine]: 4096 Bytes -> cudaMemcpyAsync", NCCLLOG_OTHER, 0, 0, 0, 0,
		 false, ""},
		{INFO "AllReduce: 4096 Bytes -> Algo Unknown proto LL channel{Lo..Hi}={0..0}",
		 NCCLLOG_OTHER, 0, 0, 0, 0, false, ""},
		{INFO "AllReduce: 4096 Bytes -> Algo RING proto LL64 channel{Lo..Hi}={0..0}",
		 NCCLLOG_OTHER, 0, 0, 0, 0, false, ""},
		{INFO "AllReduce: 4096 Bytes -> Algo RING proto LL channel{Lo..Hi}={3..2}",
		 NCCLLOG_OTHER, 0, 0, 0, 0, false, ""},
		{INFO "AllReduce: 4096 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..x}",
		 NCCLLOG_OTHER, 0, 0, 0, 0, false, ""},
		{INFO "AllReduce: 4096 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1",
		 NCCLLOG_OTHER, 0, 0, 0, 0, false, ""},
		{INFO "AllReduce: 99999999999999999999999 Bytes -> Algo RING proto LL "
		 "channel{Lo..Hi}={0..0}", NCCLLOG_OTHER, 0, 0, 0, 0, false, ""},
		{INFO "AllReduce: -4 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}",
		 NCCLLOG_OTHER, 0, 0, 0, 0, false, ""},
		{INFO "AllReduce [Symmetric]: 4096 Bytes -> Kernel AllReduce_AGxLL_R nchannels 0 "
		 "nthreads 512 nWorks 1", NCCLLOG_OTHER, 0, 0, 0, 0, false, ""},
		{"gpu7:4242:4250 [0] 12.5 enqueue.cc:2068 NCCL TRACE 43008 Bytes -> Algo 1 proto 0 "
		 "time 5.000000", NCCLLOG_OTHER, 0, 0, 0, 0, false, ""},
		{INFO "Channel 00/02 : 0 1", NCCLLOG_OTHER, 0, 0, 0, 0, false, ""},
		{"AllReduce: 43008 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}", NCCLLOG_OTHER,
		 0, 0, 0, 0, false, ""},
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct nccllog_line l;
		enum nccllog_kind k = nccllog_parse_line(cases[i].line, &l);

		if (k != cases[i].kind)
			fprintf(stderr, "line %zu: %s\n", i, cases[i].line);
		CHECK_INT(k, cases[i].kind);
		CHECK_INT(l.kind, cases[i].kind);
		if (cases[i].kind != NCCLLOG_ALLREDUCE) {
			CHECK(!l.d.known);
			continue;
		}
		CHECK(l.d.known);
		CHECK_INT(l.bytes, cases[i].bytes);
		CHECK_INT(l.d.algo, cases[i].algo);
		CHECK_INT(l.d.proto, cases[i].proto);
		CHECK_INT(l.d.ctas, cases[i].ctas);
		CHECK_INT(l.d.symmetric, cases[i].symmetric);
		CHECK_STR(l.d.kernel, cases[i].kernel);
		CHECK(!l.d.mixed);
	}
}

static char tmpdir[256];

/* NCCL's debug FILE: opened once ("w", line buffered, src/debug.cc) and kept open. */
static FILE *nccl;

/* Write text as NCCL would, flushed (also mid-line: the reader must cope). */
static void append(const char *path, const char *text)
{
	(void)path;
	CHECK(nccl != NULL);
	if (!nccl)
		return;
	fputs(text, nccl);
	fflush(nccl);
}

static void coll_line(const char *path, unsigned bytes, const char *algo, const char *proto,
                      int lo, int hi)
{
	char line[256];

	snprintf(line, sizeof line, INFO "AllReduce: %u Bytes -> Algo %s proto %s "
	         "channel{Lo..Hi}={%d..%d}\n", bytes, algo, proto, lo, hi);
	append(path, line);
}

/* A run as rank 0 sees it: eager ops and barriers around each capture window. */
static void test_windows(void)
{
	char path[512], warned[4096] = "", longline[5000];
	struct nccllog_reader r;
	struct proto_decision d;
	FILE *warn = tmpfile();
	size_t n;

	snprintf(path, sizeof path, "%s/nccl.4242.log", tmpdir);
	nccllog_reader_init(&r, path, warn);
	/* NCCL creates its file at its first log call: nothing there yet is no error */
	CHECK_INT(nccllog_reader_poll(&r), 0);
	CHECK(!r.dead);
	nccl = fopen(path, "w");
	if (nccl)
		setlinebuf(nccl);
	append(path, INFO "NCCL version 2.28.9+cuda13.0\n");
	CHECK_INT(nccllog_reader_poll(&r), 1);
	CHECK(access(path, F_OK) != 0 && errno == ENOENT);   /* unlinked once open */
	/* eager: two ops of the size and the barrier, outside any window */
	coll_line(path, 43008, "RING", "LL", 0, 0);
	coll_line(path, 43008, "RING", "LL", 0, 0);
	coll_line(path, 4, "RING", "LL", 0, 0);
	nccllog_window_begin(&r, 43008);
	coll_line(path, 43008, "TREE", "SIMPLE", 0, 1);
	append(path, "\ngpu7:4242:4250 [0] proxy.cc:10 NCCL WARN something odd\n");
	coll_line(path, 43008, "TREE", "SIMPLE", 0, 1);
	/* half a line, then the rest: counted once */
	append(path, INFO "AllReduce: 43008 Bytes -> Algo TR");
	CHECK_INT(nccllog_reader_poll(&r), 4);
	append(path, "EE proto SIMPLE channel{Lo..Hi}={0..1}\n");
	CHECK(nccllog_window_end(&r, 3, &d));
	CHECK(d.known && !d.mixed && !d.symmetric);
	CHECK_INT(d.algo, 0);
	CHECK_INT(d.proto, 2);
	CHECK_INT(d.ctas, 2);
	/* replays' barriers and the next size's eager ops fall outside */
	for (int i = 0; i < 5; i++)
		coll_line(path, 4, "RING", "LL", 0, 0);
	coll_line(path, 43008, "RING", "LL", 0, 0);
	nccllog_reader_poll(&r);
	/* a window whose ops did not all run alike: the most frequent, mixed */
	nccllog_window_begin(&r, 43008);
	coll_line(path, 43008, "RING", "LL", 0, 1);
	coll_line(path, 43008, "RING", "LL", 0, 0);
	coll_line(path, 4096, "RING", "SIMPLE", 0, 0);   /* another size: not these ops */
	coll_line(path, 43008, "RING", "LL", 0, 0);
	CHECK(nccllog_window_end(&r, 3, &d));
	CHECK(d.mixed);
	CHECK_INT(d.ctas, 1);
	CHECK_INT(d.algo, 1);
	/* ties go to the first seen */
	nccllog_window_begin(&r, 43008);
	coll_line(path, 43008, "RING", "LL128", 0, 3);
	coll_line(path, 43008, "RING", "LL", 0, 0);
	CHECK(nccllog_window_end(&r, 2, &d));
	CHECK(d.mixed);
	CHECK_INT(d.proto, 1);
	CHECK_INT(d.ctas, 4);
	/* a count that does not match the ops: unknown rather than a guess */
	nccllog_window_begin(&r, 43008);
	coll_line(path, 43008, "RING", "LL", 0, 0);
	coll_line(path, 43008, "RING", "LL", 0, 0);
	CHECK(!nccllog_window_end(&r, 3, &d));
	CHECK(!d.known);
	/* no line at all (one rank, or not rank 0's process) */
	nccllog_window_begin(&r, 43008);
	CHECK(!nccllog_window_end(&r, 3, &d));
	CHECK(!d.known);
	/* more distinct decisions than the tally keeps: still counted, still mixed */
	nccllog_window_begin(&r, 43008);
	for (int i = 0; i < NCCLLOG_KINDS + 2; i++)
		coll_line(path, 43008, "RING", "LL", 0, i);
	coll_line(path, 43008, "RING", "LL", 0, 0);
	CHECK(nccllog_window_end(&r, NCCLLOG_KINDS + 3, &d));
	CHECK(d.mixed);
	CHECK_INT(d.ctas, 1);
	/* symmetric lines */
	nccllog_window_begin(&r, 4096);
	append(path, INFO "AllReduce [Symmetric]: 4096 Bytes -> Kernel AllReduce_AGxLL_R "
	       "nchannels 2 nthreads 512 nWorks 1\n");
	CHECK(nccllog_window_end(&r, 1, &d));
	CHECK(d.symmetric);
	CHECK_STR(d.kernel, "AllReduce_AGxLL_R");
	/* a line longer than NCCL ever writes is dropped whole; the next one counts */
	memset(longline, 'x', sizeof longline - 2);
	longline[sizeof longline - 2] = '\n';
	longline[sizeof longline - 1] = '\0';
	nccllog_window_begin(&r, 43008);
	append(path, longline);
	coll_line(path, 43008, "RING", "LL", 0, 0);
	CHECK(nccllog_window_end(&r, 1, &d));
	nccllog_reader_close(&r);
	nccllog_reader_close(&r);   /* twice is fine */
	if (nccl)
		fclose(nccl);
	nccl = NULL;
	/* the warning went to the warn stream, verbatim, without the blank line */
	rewind(warn);
	n = fread(warned, 1, sizeof warned - 1, warn);
	warned[n] = '\0';
	CHECK_STR(warned, "gpu7:4242:4250 [0] proxy.cc:10 NCCL WARN something odd\n");
	fclose(warn);
	/* a reader without a path is inert */
	nccllog_reader_init(&r, NULL, NULL);
	CHECK_INT(nccllog_reader_poll(&r), 0);
	nccllog_window_begin(&r, 1);
	CHECK(!nccllog_window_end(&r, 1, &d));
}

static void test_setup(void)
{
	struct nccllog log, copy;
	char err[512], path[PATH_MAX], want[PATH_MAX], stray[PATH_MAX];
	struct stat st;

	unsetenv("NCCL_DEBUG");
	unsetenv("NCCL_DEBUG_FILE");
	unsetenv("NCCL_DEBUG_SUBSYS");
	setenv("TMPDIR", tmpdir, 1);
	CHECK_INT(nccllog_setup(&log, err, sizeof err), 0);
	CHECK(log.active && log.owner);
	CHECK(strncmp(log.dir, tmpdir, strlen(tmpdir)) == 0);
	CHECK(stat(log.dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 077) == 0);
	CHECK_STR(getenv("NCCL_DEBUG"), "INFO");
	CHECK_STR(getenv("NCCL_DEBUG_SUBSYS"), "TUNING");
	snprintf(want, sizeof want, "%s/nccl.%%p.log", log.dir);
	CHECK_STR(getenv("NCCL_DEBUG_FILE"), want);
	CHECK_INT(nccllog_path(&log, 77, path, sizeof path), 0);
	snprintf(want, sizeof want, "%s/nccl.77.log", log.dir);
	CHECK_STR(path, want);
	CHECK_INT(nccllog_path(&log, 77, path, 8), -1);
	/* files NCCL left (a rank that never read its own) go with the folder */
	snprintf(stray, sizeof stray, "%s/nccl.78.log", log.dir);
	for (int i = 0; i < 2; i++) {
		FILE *f = fopen(i ? stray : path, "w");

		CHECK(f != NULL);
		if (f)
			fclose(f);
	}
	copy = log;
	copy.owner = false;
	nccllog_cleanup(&copy);             /* not the owner: nothing happens */
	CHECK(stat(log.dir, &st) == 0);
	nccllog_cleanup(&log);
	CHECK(stat(log.dir, &st) != 0 && errno == ENOENT);
	CHECK(!log.active);
	nccllog_cleanup(&log);              /* again: nothing */
	nccllog_cleanup(NULL);
	CHECK_INT(nccllog_path(&log, 77, path, sizeof path), -1);

	/* the user's NCCL_DEBUG: theirs, untouched, no decisions */
	setenv("NCCL_DEBUG", "WARN", 1);
	unsetenv("NCCL_DEBUG_FILE");
	CHECK_INT(nccllog_setup(&log, err, sizeof err), 0);
	CHECK(!log.active && !log.owner);
	CHECK_STR(getenv("NCCL_DEBUG"), "WARN");
	CHECK(getenv("NCCL_DEBUG_FILE") == NULL);
	CHECK_INT(nccllog_path(&log, 1, path, sizeof path), -1);
	nccllog_cleanup(&log);

	/* a folder that cannot be made: a message, nothing set */
	unsetenv("NCCL_DEBUG");
	setenv("TMPDIR", "/nonexistent/nccltune-test", 1);
	CHECK_INT(nccllog_setup(&log, err, sizeof err), -1);
	CHECK_CONTAINS(err, "decisions: mkdtemp /nonexistent/nccltune-test/nccltune-probe-");
	CHECK(!log.active && !log.owner);
	CHECK(getenv("NCCL_DEBUG") == NULL);
	CHECK(getenv("NCCL_DEBUG_FILE") == NULL);
	setenv("TMPDIR", tmpdir, 1);
}

int main(void)
{
	const char *base = getenv("TMPDIR");

	snprintf(tmpdir, sizeof tmpdir, "%s/test-nccllog-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_parse();
	test_windows();
	test_setup();
	if (rmdir(tmpdir) != 0)
		CHECK(!"the test folder is not empty: something was left behind");
	return check_status();
}
