/* test_options.c - the probe's command line: defaults, every option, and the errors a
 * tuner or a user can provoke (each must name the option and the value); --ops lists
 * against --bytes, --sweep files read at parse time, --capabilities, the help text. */
#include <stdlib.h>
#include <unistd.h>

#include "../check.h"
#include "options.h"

static enum options_action parse(struct probe_config *cfg, char *err, size_t errlen, int argc,
                                 char **argv)
{
	options_defaults(cfg);
	err[0] = '\0';
	return options_parse(argc, argv, cfg, err, errlen);
}

#define ARGV(...) ((char *[]){"nccltune-probe", __VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((char *[]){"nccltune-probe", __VA_ARGS__}) / sizeof(char *)))
#define PARSE(...) parse(&cfg, err, sizeof err, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

static void test_defaults(void)
{
	struct probe_config cfg;
	char err[256];
	char *argv[] = {"nccltune-probe", NULL};

	CHECK_INT(parse(&cfg, err, sizeof err, 1, argv), OPTIONS_RUN);
	CHECK_INT(cfg.w.nsizes, 1);
	CHECK_INT(cfg.w.bytes[0], 43008);
	CHECK_INT(cfg.w.ops, 122);
	CHECK_INT(cfg.w.dtype, PROTO_DTYPE_BF16);
	CHECK_INT(cfg.w.iters, 200);
	CHECK_INT(cfg.w.warmup, 20);
	CHECK(!cfg.w.out_of_place);
	CHECK_INT(cfg.launch, PROBE_LAUNCH_AUTO);
	CHECK_INT(cfg.teardown, PROBE_TEARDOWN_AUTO);
	CHECK_INT(cfg.gpus, 0);
	CHECK_NEAR(cfg.step_timeout_s, 60, 0);
}

static void test_all_options(void)
{
	struct probe_config cfg;
	char err[256];

	CHECK_INT(PARSE("--bytes", "1024,4K", "--ops", "16", "--dtype", "f32", "--iters", "10",
	                "--warmup=3", "--out-of-place", "--launch", "all", "--gpus", "2",
	                "--step-timeout", "2.5", "--verbose"), OPTIONS_RUN);
	CHECK_STR(err, "");
	CHECK_INT(cfg.w.nsizes, 2);
	CHECK_INT(cfg.w.bytes[0], 1024);
	CHECK_INT(cfg.w.bytes[1], 4096);
	CHECK_INT(cfg.w.ops, 16);
	CHECK_INT(cfg.w.dtype, PROTO_DTYPE_F32);
	CHECK_INT(cfg.w.iters, 10);
	CHECK_INT(cfg.w.warmup, 3);
	CHECK(cfg.w.out_of_place);
	CHECK_INT(cfg.launch, PROBE_LAUNCH_ALL);
	CHECK_INT(cfg.gpus, 2);
	CHECK_NEAR(cfg.step_timeout_s, 2.5, 0);
	CHECK(cfg.verbose);
	CHECK_INT(cfg.corrupt_rank, -1);
	CHECK_INT(PARSE("--test-corrupt-rank", "1"), OPTIONS_RUN);
	CHECK_INT(cfg.corrupt_rank, 1);
	CHECK_INT(PARSE("--test-corrupt-rank", "-1"), OPTIONS_ERROR);
	CHECK_STR(err, "--test-corrupt-rank: '-1' is not a rank in 0..1023");
	CHECK_INT(PARSE("--launch", "process"), OPTIONS_RUN);
	CHECK_INT(cfg.launch, PROBE_LAUNCH_PROCESS);
	CHECK_INT(PARSE("--launch", "mpi"), OPTIONS_RUN);
	CHECK_INT(cfg.launch, PROBE_LAUNCH_MPI);
	CHECK_INT(PARSE("--teardown", "clean"), OPTIONS_RUN);
	CHECK_INT(cfg.teardown, PROBE_TEARDOWN_CLEAN);
	CHECK_INT(PARSE("--teardown=fast"), OPTIONS_RUN);
	CHECK_INT(cfg.teardown, PROBE_TEARDOWN_FAST);
	CHECK_INT(PARSE("--fingerprint"), OPTIONS_FINGERPRINT);
	CHECK_INT(PARSE("--help"), OPTIONS_HELP);
	CHECK_INT(PARSE("--version"), OPTIONS_VERSION);
	/* --fingerprint ignores workload checks that only matter for a measurement. */
	CHECK_INT(PARSE("--dtype", "f32", "--bytes", "6", "--fingerprint"), OPTIONS_FINGERPRINT);
}

static void test_errors(void)
{
	struct probe_config cfg;
	char err[256];

	CHECK_INT(PARSE("--bogus"), OPTIONS_ERROR);
	CHECK_STR(err, "unknown option '--bogus' (see --help)");
	CHECK_INT(PARSE("-x"), OPTIONS_ERROR);
	CHECK_STR(err, "unknown option '-x' (see --help)");
	CHECK_INT(PARSE("--bytes"), OPTIONS_ERROR);
	CHECK_STR(err, "option '--bytes' needs a value");
	CHECK_INT(PARSE("--by", "1024"), OPTIONS_ERROR);
	CHECK_STR(err, "option '--by' is not spelled out: write --bytes");
	CHECK_INT(PARSE("--out", "x"), OPTIONS_ERROR);
	CHECK_STR(err, "option '--out' is not spelled out: write --out-of-place");
	CHECK_INT(PARSE("extra"), OPTIONS_ERROR);
	CHECK_STR(err, "unexpected argument 'extra' (see --help)");
	CHECK_INT(PARSE("--launch", "pigeon"), OPTIONS_ERROR);
	CHECK_STR(err, "--launch: 'pigeon' is not one of process, all, mpi, auto");
	CHECK_INT(PARSE("--teardown", "quick"), OPTIONS_ERROR);
	CHECK_STR(err, "--teardown: 'quick' is not one of clean, fast");
	CHECK_INT(PARSE("--teardown", "auto"), OPTIONS_ERROR);   /* the default has no name */
	CHECK_INT(PARSE("--teardown"), OPTIONS_ERROR);
	CHECK_STR(err, "option '--teardown' needs a value");
	CHECK_INT(PARSE("--tear", "fast"), OPTIONS_ERROR);
	CHECK_STR(err, "option '--tear' is not spelled out: write --teardown");
	CHECK_INT(PARSE("--gpus", "0"), OPTIONS_ERROR);
	CHECK_STR(err, "--gpus: '0' is not an integer in 1..1024");
	CHECK_INT(PARSE("--step-timeout", "0"), OPTIONS_ERROR);
	CHECK_CONTAINS(err, "--step-timeout: '0'");
	CHECK_INT(PARSE("--step-timeout", "nan"), OPTIONS_ERROR);
	CHECK_INT(PARSE("--dtype", "fp8"), OPTIONS_ERROR);
	CHECK_CONTAINS(err, "--dtype: 'fp8'");
	CHECK_INT(PARSE("--ops", "0"), OPTIONS_ERROR);
	CHECK_CONTAINS(err, "--ops: '0'");
	CHECK_INT(PARSE("--bytes", "12x"), OPTIONS_ERROR);
	CHECK_CONTAINS(err, "'12x'");
	CHECK_INT(PARSE("--dtype", "f32", "--bytes", "43010"), OPTIONS_ERROR);
	CHECK_STR(err, "--bytes: 43010 is not a whole number of f32 elements (4 bytes each)");
	/* the order of --bytes and --dtype does not matter */
	CHECK_INT(PARSE("--bytes", "43010", "--dtype", "f32"), OPTIONS_ERROR);
	CHECK_INT(PARSE("--bytes", "43010"), OPTIONS_RUN);   /* fine in bf16 */
	CHECK_INT(PARSE("--bytes", "1024M", "--ops", "100"), OPTIONS_ERROR);
	CHECK_CONTAINS(err, "the limit is");
}

static void test_ops_lists(void)
{
	struct probe_config cfg;
	char err[512];

	CHECK_INT(PARSE("--bytes", "1024,4K,43008", "--ops", "122,8,1"), OPTIONS_RUN);
	CHECK_INT(cfg.w.nops, 3);
	CHECK_INT(proto_workload_ops(&cfg.w, 0), 122);
	CHECK_INT(proto_workload_ops(&cfg.w, 2), 1);
	/* the order of the options does not matter */
	CHECK_INT(PARSE("--ops", "2,3", "--bytes", "1024,4K"), OPTIONS_RUN);
	CHECK_INT(PARSE("--ops", "2,3", "--bytes", "1024,4K,8K"), OPTIONS_ERROR);
	CHECK_STR(err, "--ops: 2 values for 3 --bytes sizes (give one value for all sizes, or one "
	          "per --bytes entry)");
	CHECK_INT(PARSE("--ops", "2,3"), OPTIONS_ERROR);   /* the default: one size */
	CHECK_CONTAINS(err, "--ops: 2 values for 1 --bytes size");
	CHECK_INT(PARSE("--ops", "2,0"), OPTIONS_ERROR);
	CHECK_STR(err, "--ops: '0' in '2,0' is not an integer in 1..100000");
	/* the buffer is sized per size: 1 op of 1 GiB is fine, 100 of it are not */
	CHECK_INT(PARSE("--bytes", "1024M,1K", "--ops", "1,100000"), OPTIONS_RUN);
	CHECK_INT(PARSE("--bytes", "1K,1024M", "--ops", "100000,100"), OPTIONS_ERROR);
	CHECK_CONTAINS(err, "--ops 100 x --bytes 1073741824: each rank would need 107374182400 "
	               "bytes");
	/* --fingerprint and --capabilities ignore workload checks */
	CHECK_INT(PARSE("--ops", "2,3", "--capabilities"), OPTIONS_CAPABILITIES);
}

static void test_sweep_options(void)
{
	struct probe_config cfg;
	char err[512], path[] = "/tmp/test-options-sweep-XXXXXX";
	int fd = mkstemp(path);
	static const char text[] = "{\"schema\":\"nccltune-sweep/1\",\"rounds\":2,\"choices\":["
		"{\"bytes\":1024,\"algo\":\"Ring\",\"proto\":\"LL\",\"ctas\":2},{\"bytes\":4096}]}";

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_INT(write(fd, text, sizeof text - 1), (long)(sizeof text - 1));
	close(fd);
	CHECK_INT(PARSE("--bytes", "1024,4K", "--iters", "10", "--sweep", path), OPTIONS_RUN);
	CHECK_STR(err, "");
	CHECK_INT(cfg.sweep.nchoices, 2);
	CHECK_INT(cfg.sweep.rounds, 2);
	CHECK_INT(cfg.sweep.choices[1].size, 1);
	CHECK_STR(cfg.sweep_file, path);
	CHECK_INT(probe_case_count(&cfg), 4);
	/* the file is read against the final --bytes and --iters, whatever the order */
	CHECK_INT(PARSE("--sweep", path, "--bytes", "1024,4K"), OPTIONS_RUN);
	CHECK_INT(PARSE("--sweep", path, "--bytes", "1024"), OPTIONS_ERROR);
	CHECK_CONTAINS(err, ": choices[1].bytes: 4096 is not one of --bytes");
	CHECK(strncmp(err, path, strlen(path)) == 0);      /* the message names the file */
	CHECK_INT(PARSE("--sweep", path, "--bytes", "1024,4K", "--iters", "1"), OPTIONS_ERROR);
	CHECK_CONTAINS(err, ": rounds: 2 is more than --iters 1");
	CHECK_INT(PARSE("--sweep", "/nonexistent/s.json"), OPTIONS_ERROR);
	CHECK_STR(err, "--sweep: /nonexistent/s.json: No such file or directory");
	CHECK_INT(PARSE("--sweep", ""), OPTIONS_ERROR);
	CHECK_CONTAINS(err, "--sweep: '' is not a file name");
	CHECK_INT(PARSE("--sweep"), OPTIONS_ERROR);
	CHECK_STR(err, "option '--sweep' needs a value");
	/* the testing aids name a choice of the sweep */
	CHECK_INT(PARSE("--sweep", path, "--bytes", "1024,4K", "--test-corrupt-choice", "1",
	                "--test-stall-choice", "0"), OPTIONS_RUN);
	CHECK_INT(cfg.corrupt_choice, 1);
	CHECK_INT(cfg.stall_choice, 0);
	CHECK_INT(cfg.corrupt_rank, -1);
	CHECK_INT(PARSE("--sweep", path, "--bytes", "1024,4K", "--test-corrupt-choice", "2"),
	          OPTIONS_ERROR);
	CHECK_STR(err, "--test-corrupt-choice 2: there is no such choice in the sweep file");
	CHECK_INT(PARSE("--test-corrupt-choice", "0"), OPTIONS_ERROR);
	CHECK_STR(err, "--test-corrupt-choice 0: needs --sweep");
	CHECK_INT(PARSE("--test-stall-choice", "0"), OPTIONS_ERROR);
	CHECK_STR(err, "--test-stall-choice 0: needs --sweep");
	CHECK_INT(PARSE("--test-stall-choice", "-1"), OPTIONS_ERROR);
	CHECK_STR(err, "--test-stall-choice: '-1' is not a choice in 0..1023");
	unlink(path);
	/* a plain run has no sweep */
	CHECK_INT(PARSE("--bytes", "1024"), OPTIONS_RUN);
	CHECK_INT(cfg.sweep.nchoices, 0);
	CHECK_INT(cfg.corrupt_choice, -1);
	CHECK_INT(cfg.stall_choice, -1);
}

static void test_capabilities_help(void)
{
	struct probe_config cfg;
	char err[256], buf[16384];
	FILE *f = tmpfile();
	size_t n;

	CHECK_INT(PARSE("--capabilities"), OPTIONS_CAPABILITIES);
	CHECK_INT(PARSE("--capabilities", "--bytes", "43010", "--dtype", "f32"),
	          OPTIONS_CAPABILITIES);
	CHECK_INT(PARSE("--cap"), OPTIONS_ERROR);
	CHECK_STR(err, "option '--cap' is not spelled out: write --capabilities");
	CHECK_INT(OPTIONS_CAPABILITIES_MASK, PROTO_CAP_OPS_LIST | PROTO_CAP_DECISIONS |
	          PROTO_CAP_SWEEP);
	if (!f)
		return;
	options_help(f);
	rewind(f);
	n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	CHECK_CONTAINS(buf, "--ops N[,N2...]");
	CHECK_CONTAINS(buf, "--sweep FILE");
	CHECK_CONTAINS(buf, "--capabilities");
	CHECK_CONTAINS(buf, "--test-corrupt-choice I");
	CHECK_CONTAINS(buf, "--test-stall-choice I");
}

/* The default follows the launch mode; fast is refused only under MPI. */
static void test_teardown(void)
{
	static const struct {
		enum probe_teardown asked;
		enum probe_launch mode;
		int rc;
		enum probe_teardown want;
	} cases[] = {
		{PROBE_TEARDOWN_AUTO, PROBE_LAUNCH_PROCESS, 0, PROBE_TEARDOWN_FAST},
		{PROBE_TEARDOWN_AUTO, PROBE_LAUNCH_ALL, 0, PROBE_TEARDOWN_FAST},
		{PROBE_TEARDOWN_AUTO, PROBE_LAUNCH_MPI, 0, PROBE_TEARDOWN_CLEAN},
		{PROBE_TEARDOWN_CLEAN, PROBE_LAUNCH_PROCESS, 0, PROBE_TEARDOWN_CLEAN},
		{PROBE_TEARDOWN_CLEAN, PROBE_LAUNCH_ALL, 0, PROBE_TEARDOWN_CLEAN},
		{PROBE_TEARDOWN_CLEAN, PROBE_LAUNCH_MPI, 0, PROBE_TEARDOWN_CLEAN},
		{PROBE_TEARDOWN_FAST, PROBE_LAUNCH_PROCESS, 0, PROBE_TEARDOWN_FAST},
		{PROBE_TEARDOWN_FAST, PROBE_LAUNCH_ALL, 0, PROBE_TEARDOWN_FAST},
		{PROBE_TEARDOWN_FAST, PROBE_LAUNCH_MPI, -1, PROBE_TEARDOWN_AUTO},
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		enum probe_teardown got = PROBE_TEARDOWN_AUTO;
		char err[256] = "";

		CHECK_INT(options_teardown(cases[i].asked, cases[i].mode, &got, err, sizeof err),
		          cases[i].rc);
		CHECK_INT(got, cases[i].want);
		if (cases[i].rc != 0)
			CHECK_CONTAINS(err, "--teardown fast: not available with the MPI launch mode");
		else
			CHECK_STR(err, "");
	}
}

int main(void)
{
	test_teardown();
	test_defaults();
	test_all_options();
	test_errors();
	test_ops_lists();
	test_sweep_options();
	test_capabilities_help();
	return check_status();
}
