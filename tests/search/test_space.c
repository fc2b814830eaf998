/* test_space.c - the search space: parsing, every error message (golden strings:
 * file, key, reason), the default space, encoding, enumeration, rounding, the JSON
 * round trip and the value syntax of the NCCL variables nccltune knows. */
#include <stdlib.h>

#include "../check.h"
#include "space/space.h"
#include "space_text.h"

static void test_errors(void)
{
	/* JSON and top level */
	CHECK_STR(parse_error("{\"schema\": \"nccltune-space/1\",\n \"params\": {,}}"),
	          "t.json: line 2: not valid JSON (truncated or corrupt near byte 44)");
	CHECK_STR(parse_error("[1]"), "t.json: expected an object, got an array");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_ALGO\": {\"values\": [\"Ring\"]}}} x"),
	          "t.json: line 1: text after the JSON value (byte 78)");
	CHECK_STR(parse_error("{\"params\": {\"NCCL_ALGO\": {\"values\": [\"Ring\"]}}}"),
	          "t.json: schema: missing");
	CHECK_STR(parse_error("{\"schema\": \"nccltune-space/2\", \"params\": {}}"),
	          "t.json: schema: expected \"nccltune-space/1\"");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_ALGO\": {\"values\": [\"Ring\"]}}, "
	                      "\"budget\": 3}"),
	          "t.json: budget: unknown key (expected schema, params, fixed, constraints, per_size, server)");
	CHECK_STR(parse_error(HEAD "\"fixed\": {}}"), "t.json: params: missing");
	CHECK_STR(parse_error(HEAD "\"params\": {}}"), "t.json: params: empty (nothing to search)");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_ALGO\": {\"values\": [\"Ring\"]}, "
	                      "\"NCCL_ALGO\": {\"values\": [\"Tree\"]}}}"),
	          "t.json: params.NCCL_ALGO: duplicate key");

	/* variable names */
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_NTHREAD\": {\"values\": [64]}}}"),
	          "t.json: params.NCCL_NTHREAD: unknown NCCL variable (did you mean NCCL_NTHREADS?)");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_PORTO\": {\"values\": [\"LL\"]}}}"),
	          "t.json: params.NCCL_PORTO: unknown NCCL variable (did you mean NCCL_PROTO?)");
	CHECK_STR(parse_error(HEAD "\"params\": {\"CUDA_VISIBLE_DEVICES\": {\"values\": [\"0\"]}}}"),
	          "t.json: params.CUDA_VISIBLE_DEVICES: not an NCCL variable (names start with NCCL_)");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_algo\": {\"values\": [\"Ring\"]}}}"),
	          "t.json: params.NCCL_algo: not an NCCL variable name (A-Z, 0-9 and _ only)");
	/* an unknown but plausible variable gets the generic rule */
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_SOME_NEW_KNOB\": {\"values\": [\"a\", \"b\"]}}}"),
	          "(parsed)");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_SOME_NEW_KNOB\": {\"values\": [\"a b\"]}}}"),
	          "t.json: params.NCCL_SOME_NEW_KNOB.values[0]: 'a b': character ' ' is not allowed "
	          "(letters, digits and _.,:;^=+/@%- only)");

	/* parameter objects */
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_PROTO\": {\"choices\": [\"LL\"]}}}"),
	          "t.json: params.NCCL_PROTO.choices: unknown key (expected values, int, pow2)");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_PROTO\": {\"values\": [\"LL\"], "
	                      "\"int\": [1, 2]}}}"),
	          "t.json: params.NCCL_PROTO: needs exactly one of values, int or pow2");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_PROTO\": [\"LL\"]}}"),
	          "t.json: params.NCCL_PROTO: expected an object, got an array");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_PROTO\": {\"values\": []}}}"),
	          "t.json: params.NCCL_PROTO.values: empty list");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_PROTO\": {\"values\": [null]}}}"),
	          "t.json: params.NCCL_PROTO.values: only null (nothing to search)");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_PROTO\": {\"values\": [\"LL\", true]}}}"),
	          "t.json: params.NCCL_PROTO.values[1]: expected a string, a number or null, got a "
	          "boolean");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_NTHREADS\": {\"values\": [\"64\", 128]}}}"),
	          "t.json: params.NCCL_NTHREADS.values: mixes strings and numbers (strings are "
	          "categories, numbers ordered levels)");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_PROTO\": {\"values\": [\"LL\", \"ll\"]}}}"),
	          "t.json: params.NCCL_PROTO.values[1]: repeats values[0]");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_NTHREADS\": {\"values\": [null, 64, null]}}}"),
	          "t.json: params.NCCL_NTHREADS.values[2]: repeats values[0]");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_NTHREADS\": {\"values\": [128, 64]}}}"),
	          "t.json: params.NCCL_NTHREADS.values[1]: numbers must be in increasing order "
	          "(64 after 128)");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_NTHREADS\": {\"values\": [64.5]}}}"),
	          "t.json: params.NCCL_NTHREADS.values[0]: expected an integer, got 64.5");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_MIN_NCHANNELS\": {\"int\": [32, 1]}}}"),
	          "t.json: params.NCCL_MIN_NCHANNELS.int: inverted range [32, 1]");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_MIN_NCHANNELS\": {\"int\": [1]}}}"),
	          "t.json: params.NCCL_MIN_NCHANNELS.int: expected [lo, hi], two integers");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_BUFFSIZE\": {\"pow2\": [65537, 131071]}}}"),
	          "t.json: params.NCCL_BUFFSIZE.pow2: no power of two in [65537, 131071]");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_BUFFSIZE\": {\"int\": [1, 5000]}}}"),
	          "t.json: params.NCCL_BUFFSIZE.int: 5000 levels, at most 4096");

	/* values NCCL cannot accept */
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_NTHREADS\": {\"values\": [64, 100]}}}"),
	          "t.json: params.NCCL_NTHREADS.values[1]: '100' is not a multiple of 32 in [64, 512]");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_NTHREADS\": {\"int\": [64, 96]}}}"),
	          "t.json: params.NCCL_NTHREADS.int: '65' is not a multiple of 32 in [64, 512]");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_MAX_NCHANNELS\": {\"int\": [1, 65]}}}"),
	          "t.json: params.NCCL_MAX_NCHANNELS.int: '65' is not an integer in [1, 64]");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_PROTO\": {\"values\": [\"LL\", \"LL256\"]}}}"),
	          "t.json: params.NCCL_PROTO.values[1]: 'LL256': unknown protocol 'LL256' (LL, LL128, "
	          "Simple)");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_ALGO\": {\"values\": [\"Ring,Tree\", "
	                      "\"^NVLS\", \"ring;allreduce:tree\", \"Ring,\"]}}}"),
	          "t.json: params.NCCL_ALGO.values[3]: 'Ring,': empty item in list");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_ALGO\": {\"values\": [\"allgather:Ring\", "
	                      "\"scatter:Ring\"]}}}"),
	          "t.json: params.NCCL_ALGO.values[1]: 'scatter:Ring': unknown collective 'scatter' "
	          "(Broadcast, Reduce, "
	          "AllGather, ReduceScatter, AllReduce)");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_P2P_LEVEL\": {\"values\": [\"SYS\", \"sys\"]}}}"),
	          "t.json: params.NCCL_P2P_LEVEL.values[1]: 'sys' is not a path level (LOC, NVL, NVB, C2C, "
	          "PIX, PXB, P2C, PXN, PHB, SYS, or legacy 0..5; case-sensitive)");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_P2P_LEVEL\": {\"values\": [0, 5]}}}"), "(parsed)");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_P2P_LEVEL\": {\"values\": [6]}}}"),
	          "t.json: params.NCCL_P2P_LEVEL.values[0]: '6' is not a path level (LOC, NVL, NVB, C2C, "
	          "PIX, PXB, P2C, PXN, PHB, SYS, or legacy 0..5; case-sensitive)");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_NVLS_ENABLE\": {\"values\": [0, 3]}}}"),
	          "t.json: params.NCCL_NVLS_ENABLE.values[1]: '3' is not an integer in [0, 2]");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_P2P_DISABLE\": {\"int\": [0, 2]}}}"),
	          "t.json: params.NCCL_P2P_DISABLE.int: '2' is not an integer in [0, 1]");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_BUFFSIZE\": {\"values\": [0, 4096]}}}"),
	          "t.json: params.NCCL_BUFFSIZE.values[0]: '0' is not an integer in [1, 1099511627776]");

	/* fixed */
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_ALGO\": {\"values\": [\"Ring\"]}}, "
	                      "\"fixed\": {\"NCCL_P2P_LEVEL\": \"sys\"}}"),
	          "t.json: fixed.NCCL_P2P_LEVEL: 'sys' is not a path level (LOC, NVL, NVB, C2C, "
	          "PIX, PXB, P2C, PXN, PHB, SYS, or legacy 0..5; case-sensitive)");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_ALGO\": {\"values\": [\"Ring\"]}}, "
	                      "\"fixed\": {\"NCCL_ALGO\": \"Tree\"}}"),
	          "t.json: fixed.NCCL_ALGO: also searched in params");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_ALGO\": {\"values\": [\"Ring\"]}}, "
	                      "\"fixed\": {\"NCCL_NTHREADS\": null}}"),
	          "t.json: fixed.NCCL_NTHREADS: null: leave the variable out to keep NCCL's default");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_ALGO\": {\"values\": [\"Ring\"]}}, "
	                      "\"fixed\": {\"NCCL_BUFSIZE\": 4096}}"),
	          "t.json: fixed.NCCL_BUFSIZE: unknown NCCL variable (did you mean NCCL_BUFFSIZE?)");
	CHECK_STR(parse_error(HEAD "\"params\": {\"NCCL_ALGO\": {\"values\": [\"Ring\"]}}, "
	                      "\"fixed\": {\"NCCL_NTHREADS\": \"064\"}}"),
	          "t.json: fixed.NCCL_NTHREADS: '064' is not a multiple of 32 in [64, 512]");

	/* constraints */
#define TWO HEAD "\"params\": {\"NCCL_MIN_NCHANNELS\": {\"int\": [1, 4]}, " \
	"\"NCCL_MAX_NCHANNELS\": {\"int\": [1, 4]}, \"NCCL_PROTO\": {\"values\": [\"LL\"]}}, "
	CHECK_STR(parse_error(TWO "\"constraints\": [\"NCCL_MIN_NCHANNEL <= NCCL_MAX_NCHANNELS\"]}"),
	          "t.json: constraints[0]: unknown parameter NCCL_MIN_NCHANNEL (not in params or "
	          "fixed) in 'NCCL_MIN_NCHANNEL <= NCCL_MAX_NCHANNELS'");
	CHECK_STR(parse_error(TWO "\"constraints\": [\"NCCL_MIN_NCHANNELS =< NCCL_MAX_NCHANNELS\"]}"),
	          "t.json: constraints[0]: expected <, <=, ==, !=, >= or > at '=< "
	          "NCCL_MAX_NCHANNELS' in 'NCCL_MIN_NCHANNELS =< NCCL_MAX_NCHANNELS'");
	CHECK_STR(parse_error(TWO "\"constraints\": [\"NCCL_PROTO == 1\"]}"),
	          "t.json: constraints[0]: NCCL_PROTO is categorical; constraints compare numbers "
	          "in 'NCCL_PROTO == 1'");
	CHECK_STR(parse_error(TWO "\"constraints\": [\"NCCL_MIN_NCHANNELS < 3 x\"]}"),
	          "t.json: constraints[0]: unexpected 'x' after the comparison in "
	          "'NCCL_MIN_NCHANNELS < 3 x'");
	CHECK_STR(parse_error(TWO "\"constraints\": [\"1 < 3\"]}"),
	          "t.json: constraints[0]: compares two numbers; name a searched parameter in "
	          "'1 < 3'");
	CHECK_STR(parse_error(TWO "\"constraints\": [\"NCCL_MIN_NCHANNELS > 4\"]}"),
	          "t.json: constraints: no point of the space satisfies them all");
	CHECK_STR(parse_error(TWO "\"constraints\": [7]}"),
	          "t.json: constraints[0]: expected a string, got a number");
	CHECK_STR(parse_error(TWO "\"constraints\": \"x\"}"),
	          "t.json: constraints: expected an array, got a string");
}

static void test_default(void)
{
	space *sp = space_default();
	uint64_t allowed = 0;
	struct point p;

	CHECK(sp != NULL);
	if (!sp)
		return;
	CHECK_INT(space_dims(sp), 6);
	CHECK_STR(space_name(sp, 0), "NCCL_PROTO");
	CHECK_STR(space_name(sp, 5), "NCCL_NTHREADS");
	CHECK_INT(space_levels(sp, 0), 4);
	CHECK_INT(space_levels(sp, 1), 3);
	CHECK_INT(space_levels(sp, 2), 32);
	CHECK_INT(space_levels(sp, 4), 9);
	CHECK_INT(space_levels(sp, 5), 5);
	CHECK(space_is_categorical(sp, 0));
	CHECK(!space_is_categorical(sp, 5));
	CHECK_INT(space_cardinality(sp), 4 * 3 * 32 * 32 * 9 * 5);
	CHECK_INT(space_constraint_count(sp), 1);
	CHECK_STR(space_constraint_text(sp, 0), "NCCL_MIN_NCHANNELS <= NCCL_MAX_NCHANNELS");
	CHECK_INT(space_fixed_count(sp), 0);
	CHECK(!space_mentions(sp, "NCCL_NVLS_ENABLE"));
	CHECK(space_mentions(sp, "NCCL_BUFFSIZE"));
	for (uint64_t i = 0; i < space_cardinality(sp); i++) {
		space_point_at(sp, i, &p);
		allowed += space_allows(sp, &p);
	}
	/* 4 x 3 x (32 * 33 / 2) x 9 x 5 */
	CHECK_INT(allowed, 285120);
	space_destroy(sp);
}

static void test_encoding(void)
{
	space *sp = space_default();
	struct point p, q, r;
	double x[SPACE_MAX_DIMS];
	char buf[256];

	if (!sp)
		return;
	/* levels and their text */
	CHECK_STR(space_level_text(sp, 0, 1), "LL128");
	CHECK(space_level_text(sp, 0, 3) == NULL);
	CHECK_STR(space_level_text(sp, 4, 0), "65536");
	CHECK_STR(space_level_text(sp, 4, 8), "16777216");
	CHECK(space_level_text(sp, 5, 4) == NULL);
	/* coordinates: categorical = index; ordinal levels spanning a factor >= 4 on a log
	 * scale (1..32 channels, 64 KiB..16 MiB, 64..512 threads) */
	CHECK_NEAR(space_coord(sp, 0, 2), 2, 0);
	CHECK_NEAR(space_coord(sp, 2, 0), 0, 1e-15);
	CHECK_NEAR(space_coord(sp, 2, 31), 1, 1e-15);
	CHECK_NEAR(space_coord(sp, 2, 1), 0.2, 1e-15);       /* log 2 / log 32 */
	CHECK_NEAR(space_coord(sp, 2, 5), log(6) / log(32), 1e-15);
	CHECK_NEAR(space_coord(sp, 4, 2), 2.0 / 8, 1e-15);
	CHECK_NEAR(space_coord(sp, 5, 1), 1.0 / 3, 1e-15);   /* 128 of 64..512, log2 */
	CHECK_NEAR(space_coord(sp, 5, 4), -1, 0);             /* unset */
	/* mixed radix, dimension 0 slowest */
	space_point_at(sp, 0, &p);
	for (size_t d = 0; d < 6; d++)
		CHECK_INT(p.lv[d], 0);
	space_point_at(sp, 1, &p);
	CHECK_INT(p.lv[5], 1);
	space_point_at(sp, 5, &p);
	CHECK_INT(p.lv[5], 0);
	CHECK_INT(p.lv[4], 1);
	space_point_at(sp, space_cardinality(sp) - 1, &p);
	CHECK_INT(p.lv[0], 3);
	CHECK_INT(p.lv[2], 31);
	CHECK_INT(p.lv[5], 4);
	/* describe: unset levels omitted */
	CHECK_STR(space_point_describe(sp, &p, buf, sizeof buf),
	          "NCCL_MIN_NCHANNELS=32 NCCL_MAX_NCHANNELS=32 NCCL_BUFFSIZE=16777216");
	memset(&q, 0, sizeof q);
	q.lv[1] = 2;
	CHECK_STR(space_point_describe(sp, &q, buf, sizeof buf),
	          "NCCL_PROTO=LL NCCL_MIN_NCHANNELS=1 NCCL_MAX_NCHANNELS=1 NCCL_BUFFSIZE=65536 "
	          "NCCL_NTHREADS=64");
	CHECK_STR(space_point_describe(sp, &q, buf, 12), "NCCL_PROTO=");
	/* constraints and range checks */
	q.lv[2] = 5;
	q.lv[3] = 4;
	CHECK(!space_allows(sp, &q));
	q.lv[3] = 5;
	CHECK(space_allows(sp, &q));
	q.lv[5] = 5;
	CHECK(!space_allows(sp, &q));
	q.lv[5] = 0;
	CHECK(point_equal(&q, &q, 6));
	r = q;
	r.lv[4] = 3;
	CHECK(!point_equal(&q, &r, 6));
	CHECK(point_equal(&q, &r, 4));
	/* rounding: categorical from base, ordinal to the nearest set level */
	x[0] = 3.0;
	x[1] = 0;
	x[2] = 0.52;                 /* 32^0.52 = 6.06 -> 6 channels, level 5 */
	x[3] = 1.0;
	x[4] = 0.30;                 /* nearest of k/8: 0.25 -> level 2 */
	x[5] = 0.9;                  /* 512 (coord 1), never the unset level */
	p = q;
	p.lv[0] = 1;
	p.lv[5] = 4;
	space_point_round(sp, x, &p, &r);
	CHECK_INT(r.lv[0], 1);
	CHECK_INT(r.lv[1], 2);
	CHECK_INT(r.lv[2], 5);
	CHECK_INT(r.lv[3], 31);
	CHECK_INT(r.lv[4], 2);
	CHECK_INT(r.lv[5], 3);
	x[5] = -1;
	space_point_round(sp, x, &p, &r);
	CHECK_INT(r.lv[5], 0);
	space_destroy(sp);
}

static void test_round_trip(void)
{
	const char *json = HEAD "\"params\": {"
		"\"NCCL_PROTO\": {\"values\": [\"LL\", \"Simple\", null]},"
		"\"NCCL_NTHREADS\": {\"values\": [null, 64, 256]},"
		"\"NCCL_MAX_NCHANNELS\": {\"int\": [1, 8]},"
		"\"NCCL_LL_BUFFSIZE\": {\"pow2\": [4000, 70000]},"
		"\"NCCL_P2P_LEVEL\": {\"values\": [\"PIX\", \"SYS\"]}},"
		"\"fixed\": {\"NCCL_NVLS_ENABLE\": 0, \"NCCL_MIN_NCHANNELS\": \"2\"},"
		"\"constraints\": [\"NCCL_MAX_NCHANNELS>=NCCL_MIN_NCHANNELS\", \"NCCL_NTHREADS != 64\"]}";
	char err[512], *text, *again;
	space *sp = parse(json, err, sizeof err), *back = NULL;
	struct point p;

	CHECK_STR(err, "");
	if (!sp)
		return;
	CHECK_INT(space_levels(sp, 3), 5);   /* 4096 .. 65536 */
	CHECK_NEAR(space_coord(sp, 2, 3), log(4) / log(8), 1e-15);   /* 1..8: log */
	CHECK_NEAR(space_coord(sp, 1, 1), 0, 0);     /* [null, 64, 256] */
	CHECK_NEAR(space_coord(sp, 1, 2), 1, 0);
	CHECK_STR(space_level_text(sp, 3, 0), "4096");
	CHECK_INT(space_fixed_count(sp), 2);
	CHECK_STR(space_fixed_name(sp, 0), "NCCL_NVLS_ENABLE");
	CHECK_STR(space_fixed_value(sp, 0), "0");
	CHECK(space_mentions(sp, "NCCL_NVLS_ENABLE"));
	/* a fixed integer stands for its value in a constraint */
	CHECK_STR(space_constraint_text(sp, 0), "NCCL_MAX_NCHANNELS >= 2");
	memset(&p, 0, sizeof p);
	CHECK(!space_allows(sp, &p));        /* MAX = 1 < 2 */
	p.lv[2] = 1;
	CHECK(space_allows(sp, &p));         /* NTHREADS unset: the != holds */
	p.lv[1] = 1;
	CHECK(!space_allows(sp, &p));        /* NTHREADS = 64 */
	text = space_to_json(sp);
	CHECK(text != NULL);
	if (text && space_parse(text, strlen(text), "rt", &back, err, sizeof err) == 0) {
		again = space_to_json(back);
		CHECK_STR(again, text);
		CHECK_INT(space_cardinality(back), space_cardinality(sp));
		for (size_t d = 0; d < space_dims(sp); d++) {
			CHECK_STR(space_name(back, d), space_name(sp, d));
			for (size_t l = 0; l < space_levels(sp, d); l++) {
				CHECK_NEAR(space_coord(back, d, l), space_coord(sp, d, l), 0);
				CHECK((space_level_text(back, d, l) == NULL) == (space_level_text(sp, d, l) == NULL));
			}
		}
		free(again);
	} else {
		CHECK_STR(err, "(round trip parses)");
	}
	CHECK_CONTAINS(text, "\"NCCL_LL_BUFFSIZE\":{\"pow2\":[4000,70000]}");
	CHECK_CONTAINS(text, "\"NCCL_NTHREADS\":{\"values\":[null,64,256]}");
	free(text);
	space_destroy(back);
	space_destroy(sp);

	/* the default space round-trips too */
	sp = space_default();
	text = sp ? space_to_json(sp) : NULL;
	CHECK_STR(text, "{\"schema\":\"nccltune-space/1\",\"params\":{"
	          "\"NCCL_PROTO\":{\"values\":[\"LL\",\"LL128\",\"Simple\",null]},"
	          "\"NCCL_ALGO\":{\"values\":[\"Ring\",\"Tree\",null]},"
	          "\"NCCL_MIN_NCHANNELS\":{\"int\":[1,32]},"
	          "\"NCCL_MAX_NCHANNELS\":{\"int\":[1,32]},"
	          "\"NCCL_BUFFSIZE\":{\"pow2\":[65536,16777216]},"
	          "\"NCCL_NTHREADS\":{\"values\":[64,128,256,512,null]}},"
	          "\"constraints\":[\"NCCL_MIN_NCHANNELS <= NCCL_MAX_NCHANNELS\"]}");
	free(text);
	space_destroy(sp);
}

static void test_misc(void)
{
	char err[512];
	space *sp;

	/* a JSON that is not NUL-terminated: only len bytes are read */
	const char *json = HEAD "\"params\": {\"NCCL_ALGO\": {\"values\": [\"Ring\"]}}}garbage";
	size_t len = strlen(json) - strlen("garbage");

	sp = NULL;
	CHECK_INT(space_parse(json, len, "t.json", &sp, err, sizeof err), 0);
	CHECK(sp != NULL);
	if (sp) {
		CHECK_INT(space_dims(sp), 1);
		CHECK_INT(space_levels(sp, 0), 1);
		CHECK_INT(space_cardinality(sp), 1);
	}
	space_destroy(sp);
	space_destroy(NULL);
	/* narrow or zero-based ranges stay linear */
	sp = parse(HEAD "\"params\": {\"NCCL_MIN_CTAS\": {\"int\": [2, 5]}, "
	           "\"NCCL_KNOB\": {\"int\": [0, 40]}, \"NCCL_NTHREADS\": {\"values\": [64, 96, 128]}}}",
	           err, sizeof err);
	CHECK(sp != NULL);
	if (sp) {
		CHECK_NEAR(space_coord(sp, 0, 1), 1.0 / 3, 1e-15);
		CHECK_NEAR(space_coord(sp, 1, 10), 0.25, 1e-15);
		CHECK_NEAR(space_coord(sp, 2, 1), 0.5, 1e-15);
	}
	space_destroy(sp);
	/* too many parameters */
	{
		char big[4096];
		size_t used = (size_t)snprintf(big, sizeof big, HEAD "\"params\": {");

		for (int i = 0; i < 33; i++)
			used += (size_t)snprintf(big + used, sizeof big - used,
			                         "%s\"NCCL_KNOB_%c%c\": {\"values\": [\"a\"]}",
			                         i ? "," : "", 'A' + i / 26, 'A' + i % 26);
		snprintf(big + used, sizeof big - used, "}}");
		CHECK_STR(parse_error(big), "t.json: params: more than 32 keys");
	}
	/* cardinality saturates */
	{
		char big[8192];
		size_t used = (size_t)snprintf(big, sizeof big, HEAD "\"params\": {");

		for (int i = 0; i < 16; i++)
			used += (size_t)snprintf(big + used, sizeof big - used,
			                         "%s\"NCCL_KNOB_%c\": {\"int\": [1, 4000]}", i ? "," : "", 'A' + i);
		snprintf(big + used, sizeof big - used, "}}");
		sp = parse(big, err, sizeof err);
		CHECK(sp != NULL);
		if (sp)
			CHECK(space_cardinality(sp) == UINT64_MAX);
		space_destroy(sp);
	}
}

int main(void)
{
	test_errors();
	test_default();
	test_encoding();
	test_round_trip();
	test_misc();
	return check_status();
}
