/* test_options.c - the probe's command line: defaults, every option, and the errors a
 * tuner or a user can provoke (each must name the option and the value). */
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
	return check_status();
}
