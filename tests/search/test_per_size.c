/* test_per_size.c - the space's per_size block (docs/formats.md): parsing and its errors,
 * the refusal of NCCL_ALGO/NCCL_PROTO next to it, the expansion into rule.<bytes>.* dims
 * per tuned size, the JSON round trip of an expanded space, the environment (no rule
 * dim ever reaches it), the plugin table of a point and best.rules; every dimension of
 * the per-size default space has an unset level (issue 30). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "run/env.h"
#include "run/ruletable.h"
#include "space/space.h"
#include "space_text.h"

#define PS "\"per_size\": {\"algo\": {\"values\": [\"Ring\", \"tree\", null]}, " \
           "\"proto\": {\"values\": [\"LL\", null]}, \"ctas\": {\"values\": [1, 4, null]}}"

static void test_errors(void)
{
	CHECK_STR(parse_error(HEAD PS ", \"params\": {\"NCCL_ALGO\": {\"values\": [\"Ring\"]}}}"),
	          "t.json: per_size: a space with per-size choices may not also search or fix "
	          "NCCL_ALGO or NCCL_PROTO (process-wide, they would override every size's rule); "
	          "drop them from params and fixed");
	CHECK_CONTAINS(parse_error(HEAD PS ", \"params\": {}, \"fixed\": {\"NCCL_PROTO\": \"LL\"}}"),
	               "may not also search or fix NCCL_ALGO or NCCL_PROTO");
	CHECK_CONTAINS(parse_error(HEAD "\"params\": {\"rule.43008.proto\": {\"values\": [\"LL\"]},"
	                           " \"NCCL_PROTO\": {\"values\": [\"LL\"]}}}"),
	               "may not also search or fix");
	CHECK_STR(parse_error(HEAD "\"per_size\": {\"chunk\": {\"values\": [1]}}, \"params\": {}}"),
	          "t.json: per_size.chunk: unknown per-size choice (algo, proto or ctas)");
	CHECK_STR(parse_error(HEAD "\"per_size\": {}, \"params\": {}}"),
	          "t.json: per_size: empty (name algo, proto or ctas)");
	CHECK_STR(parse_error(HEAD "\"per_size\": {\"algo\": {\"values\": [\"Rung\"]}}, "
	                      "\"params\": {}}"),
	          "t.json: per_size.algo.values[0]: unknown algorithm 'Rung' (Tree, Ring, "
	          "CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT, or null for NCCL's)");
	CHECK_CONTAINS(parse_error(HEAD "\"per_size\": {\"ctas\": {\"values\": [65]}}, "
	                           "\"params\": {}}"), "'65' is not a CTA count in 1..64");
	CHECK_CONTAINS(parse_error(HEAD "\"params\": {\"rule.0.algo\": {\"values\": [\"Ring\"]}}}"),
	               "expected rule.<bytes>.algo|proto|ctas");
	CHECK_CONTAINS(parse_error(HEAD "\"params\": {\"rule.5.chunk\": {\"values\": [1]}}}"),
	               "unknown per-size choice 'chunk'");
	/* a per_size block alone is a space (params may be empty then) */
	CHECK_STR(parse_error(HEAD PS ", \"params\": {}}"), "(parsed)");
}

static void test_expand(void)
{
	char err[1024];
	space *sp = parse(HEAD PS ", \"params\": {\"NCCL_NTHREADS\": {\"values\": [64, null]}}}",
	                  err, sizeof err), *x = NULL, *back = NULL;
	uint64_t sizes[] = {43008, 117440512}, b = 0;
	char *text;

	CHECK(sp != NULL);
	if (!sp)
		return;
	CHECK(space_has_per_size(sp));
	CHECK(space_has_rules(sp));
	CHECK_INT(space_dims(sp), 1);
	CHECK_INT(space_expand_per_size(sp, sizes, 2, &x, err, sizeof err), 0);
	CHECK_INT(space_dims(x), 7);
	CHECK(!space_has_per_size(x));
	CHECK_STR(space_name(x, 0), "NCCL_NTHREADS");
	CHECK_STR(space_name(x, 1), "rule.43008.algo");
	CHECK_STR(space_name(x, 3), "rule.43008.ctas");
	CHECK_STR(space_name(x, 6), "rule.117440512.ctas");
	CHECK_INT(space_rule_of(x, 4, &b), SPACE_RULE_ALGO);
	CHECK_INT(b, 117440512);
	CHECK_INT(space_rule_of(x, 0, NULL), SPACE_RULE_NONE);
	CHECK(space_is_categorical(x, 1));
	CHECK(!space_is_categorical(x, 3));
	CHECK_STR(space_level_text(x, 1, 1), "Tree");   /* NCCL's spelling */
	CHECK(space_level_text(x, 1, 2) == NULL);
	/* the expanded space round-trips (journal header, resume) */
	text = space_to_json(x);
	back = text ? parse(text, err, sizeof err) : NULL;
	CHECK(back != NULL);
	CHECK(back && space_dims(back) == 7 && space_rule_of(back, 6, NULL) == SPACE_RULE_CTAS);
	space_destroy(back);
	free(text);
	/* the unexpanded block round-trips too */
	text = space_to_json(sp);
	CHECK_CONTAINS(text ? text : "", "\"per_size\":{\"algo\":{\"values\":[\"Ring\",\"Tree\",null]}");
	free(text);
	space_destroy(x);
	/* too many dimensions */
	{
		uint64_t many[11] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};

		x = NULL;
		CHECK_INT(space_expand_per_size(sp, many, 11, &x, err, sizeof err), -1);
		CHECK_CONTAINS(err, "make 34 dimensions, at most 32");
		CHECK(x == NULL);
	}
	space_destroy(sp);
}

/* How many entries of env start with prefix. */
static int count_prefix(char **env, const char *prefix)
{
	int n = 0;

	for (size_t i = 0; env && env[i]; i++)
		n += strncmp(env[i], prefix, strlen(prefix)) == 0;
	return n;
}

static void test_env_and_table(void)
{
	char err[1024], *text = NULL;
	space *sp = parse(HEAD PS ", \"params\": {\"NCCL_NTHREADS\": {\"values\": [64, null]}}}",
	                  err, sizeof err), *x = NULL;
	uint64_t sizes[] = {43008, 117440512};
	struct env_pins pins = {0, NULL};
	char home[] = "HOME=/h", *user[] = {home, NULL};
	struct point p;
	char **env;
	cJSON *rules;

	CHECK(sp && space_expand_per_size(sp, sizes, 2, &x, err, sizeof err) == 0);
	if (!x) {
		space_destroy(sp);
		return;
	}
	/* NTHREADS=64; 43008: Ring/LL/4 CTAs; 117440512: all NCCL's */
	memset(&p, 0, sizeof p);
	p.lv[0] = 0;
	p.lv[1] = 0;
	p.lv[2] = 0;
	p.lv[3] = 1;
	p.lv[4] = 2;
	p.lv[5] = 1;
	p.lv[6] = 2;
	env = env_build(user, x, &pins, &p, err, sizeof err);
	CHECK(env != NULL);
	CHECK_INT(count_prefix(env, "rule."), 0);
	CHECK_INT(count_prefix(env, "NCCL_ALGO="), 0);
	CHECK_INT(count_prefix(env, "NCCL_PROTO="), 0);
	CHECK_INT(count_prefix(env, "NCCL_NTHREADS=64"), 1);
	CHECK_INT(env_set(&env, "NCCL_TUNER_PLUGIN", "/a"), 0);
	CHECK_INT(env_set(&env, "NCCL_TUNER_PLUGIN", "/b"), 0);
	CHECK_INT(count_prefix(env, "NCCL_TUNER_PLUGIN="), 1);
	CHECK_INT(count_prefix(env, "NCCL_TUNER_PLUGIN=/b"), 1);
	env_free(env);
	CHECK_INT(ruletable_text(x, &p, &text, err, sizeof err), 0);
	CHECK_CONTAINS(text ? text : "", "nccltune-tuner/1\n");
	CHECK_CONTAINS(text ? text : "",
	               "allreduce     *      *      43008      43008      ring           ll     4");
	CHECK(text && !strstr(text, "117440512"));   /* all NCCL's: no rule */
	free(text);
	rules = ruletable_rules_json(x, &p);
	text = rules ? cJSON_PrintUnformatted(rules) : NULL;
	CHECK_STR(text ? text : "", "[{\"bytes\":43008,\"algo\":\"Ring\",\"proto\":\"LL\",\"ctas\":4}]");
	free(text);
	cJSON_Delete(rules);
	/* the baseline and an all-null point: no table */
	text = (char *)"x";
	CHECK_INT(ruletable_text(x, NULL, &text, err, sizeof err), 0);
	CHECK(text == NULL);
	p.lv[1] = 2;
	p.lv[2] = 1;
	p.lv[3] = 2;
	CHECK_INT(ruletable_text(x, &p, &text, err, sizeof err), 0);
	CHECK(text == NULL);
	space_destroy(x);
	space_destroy(sp);
}

static void test_write(void)
{
	char dir[] = "/tmp/nccltune-per-size-XXXXXX", path[4200], path2[4200], err[512];
	const char *t = "nccltune-tuner/1\n";

	CHECK(mkdtemp(dir) != NULL);
	CHECK_INT(ruletable_write(dir, t, path, sizeof path, err, sizeof err), 0);
	CHECK_CONTAINS(path, "/tables/");
	CHECK(path[0] == '/' && strlen(strrchr(path, '/')) == strlen("/0123456789abcdef.table"));
	CHECK_INT(ruletable_write(dir, t, path2, sizeof path2, err, sizeof err), 0);
	CHECK_STR(path, path2);   /* the same content, the same file */
	CHECK_INT(ruletable_write(dir, "nccltune-tuner/1\n# x\n", path2, sizeof path2, err,
	                          sizeof err), 0);
	CHECK(strcmp(path, path2) != 0);
	unlink(path);
	unlink(path2);
	{
		char tables[4200];

		snprintf(tables, sizeof tables, "%s/tables", dir);
		rmdir(tables);
		rmdir(dir);
	}
}

/* The per-size default: every variable and every per-size choice can stay NCCL's own
 * (null), so no recommendation has to force a buffer size or thread count. */
static void test_default_unset(void)
{
	space *sp = space_default_per_size();

	CHECK(sp != NULL);
	for (size_t d = 0; sp && d < space_dims(sp); d++) {
		bool unset = false;

		for (size_t l = 0; l < space_levels(sp, d); l++)
			unset = unset || space_level_text(sp, d, l) == NULL;
		if (!unset)
			fprintf(stderr, "%s has no unset level\n", space_name(sp, d));
		CHECK(unset);
	}
	CHECK(sp && space_dims(sp) >= 2);
	CHECK_STR(sp ? space_name(sp, 0) : NULL, "NCCL_BUFFSIZE");
	CHECK_INT(sp ? space_levels(sp, 0) : 0, 10);
	CHECK_STR(sp ? space_level_text(sp, 0, 0) : NULL, "65536");
	CHECK_STR(sp ? space_level_text(sp, 0, 8) : NULL, "16777216");
	space_destroy(sp);
}

int main(void)
{
	test_default_unset();
	test_errors();
	test_expand();
	test_env_and_table();
	test_write();
	return check_status();
}
