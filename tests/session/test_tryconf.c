/* test_tryconf.c - the user's own configurations (--try, --try-file): parsing and its
 * messages, placing a try in the space (in-space, off-space, pinned, NVLS refused, the
 * baseline refused), the journal form and the environment a try runs with. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "run/tryconf.h"

static space *parse_space(const char *text)
{
	char err[512];
	space *sp = NULL;

	CHECK_INT(space_parse(text, strlen(text), "t.json", &sp, err, sizeof err), 0);
	return sp;
}

static void test_parse(void)
{
	struct tryconf t;
	char err[1024];

	CHECK_INT(tryconf_parse("  NCCL_PROTO=LL\tNCCL_ALGO=Ring NCCL_P2P_LEVEL=SYS "
	                        "NCCL_MAX_NCHANNELS=2 NCCL_BUFFSIZE=131072 NCCL_NTHREADS=64 ",
	                        "--try", &t, err, sizeof err), 0);
	CHECK_INT(t.n, 6);
	CHECK_STR(t.name[2], "NCCL_P2P_LEVEL");
	CHECK_STR(t.value[5], "64");
	tryconf_clear(&t);
	tryconf_clear(&t);   /* twice: a cleared struct is zeroed */

	CHECK_INT(tryconf_parse("NCCL_PROTO=Fast NCCL_ALGO=Ring", "--try", &t, err, sizeof err), -1);
	CHECK_CONTAINS(err, "--try: 'NCCL_PROTO=Fast':");
	CHECK_CONTAINS(err, "unknown protocol 'Fast'");
	CHECK_INT(tryconf_parse("NCCL_NTHREADS=100", "--try", &t, err, sizeof err), -1);
	CHECK_CONTAINS(err, "'NCCL_NTHREADS=100': '100' is not a multiple of 32");
	CHECK_INT(tryconf_parse("PROTO=LL", "--try", &t, err, sizeof err), -1);
	CHECK_CONTAINS(err, "'PROTO=LL': PROTO: not an NCCL variable (names start with NCCL_)");
	CHECK_INT(tryconf_parse("NCCL_PROTO", "--try", &t, err, sizeof err), -1);
	CHECK_CONTAINS(err, "'NCCL_PROTO' is not NAME=VALUE");
	CHECK_INT(tryconf_parse("NCCL_PROTO=", "--try", &t, err, sizeof err), -1);
	CHECK_CONTAINS(err, "'NCCL_PROTO=': empty value");
	CHECK_INT(tryconf_parse("NCCL_PROTO=LL NCCL_PROTO=Simple", "--try", &t, err, sizeof err), -1);
	CHECK_CONTAINS(err, "NCCL_PROTO is set twice");
	CHECK_INT(tryconf_parse("NCCL_NTHREDS=64", "--try", &t, err, sizeof err), -1);
	CHECK_CONTAINS(err, "NCCL_NTHREADS");   /* the typo check of the space's table */
	CHECK_INT(tryconf_parse("   ", "--try", &t, err, sizeof err), -1);
	CHECK_CONTAINS(err, "empty configuration");
	CHECK_INT(tryconf_parse(NULL, "--try", &t, err, sizeof err), -1);
}

static void test_file(void)
{
	static const char text[] = "# the seed's hand configuration\n"
		"NCCL_PROTO=LL NCCL_ALGO=Ring   # blind\n\n   \n"
		"NCCL_PROTO=Simple\n";
	struct tryconf *v = NULL;
	size_t n = 0;
	char err[1024];

	CHECK_INT(tryconf_parse_file(text, strlen(text), "tries.txt", &v, &n, TRYCONF_MAX, err,
	                             sizeof err), 0);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_INT(v[0].n, 2);
		CHECK_STR(v[0].origin, "tries.txt:2");
		CHECK_STR(v[1].value[0], "Simple");
	}
	CHECK_INT(tryconf_parse_file("NCCL_PROTO=LL\nNCCL_ALGO=Bad\n", 27, "f", &v, &n,
	                             TRYCONF_MAX, err, sizeof err), -1);
	CHECK_CONTAINS(err, "f:2: 'NCCL_ALGO=Bad'");
	CHECK_INT(tryconf_parse_file("# nothing\n", 10, "g", &v, &n, TRYCONF_MAX, err, sizeof err),
	          -1);
	CHECK_CONTAINS(err, "g: no configuration");
	CHECK_INT(tryconf_parse_file("NCCL_PROTO=LL\n", 14, "h", &v, &n, n, err, sizeof err), -1);
	CHECK_CONTAINS(err, "more than");
	for (size_t i = 0; i < n; i++)
		tryconf_clear(&v[i]);
	free(v);
}

static void test_resolve(void)
{
	space *sp = parse_space("{\"schema\": \"nccltune-space/1\", \"params\": {"
		"\"NCCL_PROTO\": {\"values\": [\"LL\", \"Simple\", null]},"
		"\"NCCL_MAX_NCHANNELS\": {\"int\": [1, 8]}},"
		"\"fixed\": {\"NCCL_BUFFSIZE\": \"131072\"},"
		"\"constraints\": [\"NCCL_MAX_NCHANNELS <= 6\"]}");
	struct env_pins pins, none;
	struct tryconf t;
	char err[1024], desc[256], *user[] = {"HOME=/x", "NCCL_P2P_LEVEL=PHB", NULL}, **env;
	cJSON *j;

	memset(&none, 0, sizeof none);
	/* searched variables at their levels (case as NCCL reads it) and a fixed one: a point */
	CHECK_INT(tryconf_parse("NCCL_PROTO=ll NCCL_MAX_NCHANNELS=2 NCCL_BUFFSIZE=131072", "a", &t,
	                        err, sizeof err), 0);
	CHECK_INT(tryconf_resolve(&t, sp, &none, "a", err, sizeof err), 0);
	CHECK(t.in_space);
	CHECK_INT(t.p.lv[0], 0);
	CHECK_INT(t.p.lv[1], 1);
	CHECK_STR(tryconf_describe(&t, sp, desc, sizeof desc), "NCCL_PROTO=LL NCCL_MAX_NCHANNELS=2");
	tryconf_clear(&t);
	/* not a level, an unsearched variable, a constraint, a fixed value changed */
	{
		static const char *const off[][2] = {
			{"NCCL_MAX_NCHANNELS=9", "NCCL_MAX_NCHANNELS=9 is not one of the space's levels"},
			{"NCCL_MAX_NCHANNELS=2 NCCL_P2P_LEVEL=SYS", "does not search NCCL_P2P_LEVEL"},
			{"NCCL_MAX_NCHANNELS=7", "constraints"},
			{"NCCL_MAX_NCHANNELS=2 NCCL_BUFFSIZE=65536", "fixes to 131072"},
		};

		for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
			CHECK_INT(tryconf_parse(off[i][0], "b", &t, err, sizeof err), 0);
			CHECK_INT(tryconf_resolve(&t, sp, &none, "b", err, sizeof err), 0);
			CHECK(!t.in_space);
			CHECK_CONTAINS(t.why, off[i][1]);
			tryconf_clear(&t);
		}
	}
	/* NVLS: refused unless the space names it */
	CHECK_INT(tryconf_parse("NCCL_NVLS_ENABLE=1 NCCL_PROTO=LL", "--try 'x'", &t, err, sizeof err),
	          0);
	CHECK_INT(tryconf_resolve(&t, sp, &none, "--try 'x'", err, sizeof err), -1);
	CHECK_CONTAINS(err, "--try 'x': NCCL_NVLS_ENABLE=1 refused");
	tryconf_clear(&t);
	/* the baseline itself (only the fixed value) is refused */
	CHECK_INT(tryconf_parse("NCCL_BUFFSIZE=131072 NCCL_MAX_NCHANNELS=8", "c", &t, err, sizeof err),
	          0);
	CHECK_INT(tryconf_resolve(&t, sp, &none, "c", err, sizeof err), 0);   /* 8 > 6: off */
	tryconf_clear(&t);
	/* pinned: the user's value wins, the try's variable is dropped */
	CHECK_INT(env_pins_collect(user, sp, &pins, err, sizeof err), 0);
	CHECK_INT(env_pins_add(&pins, "NCCL_P2P_LEVEL", "PHB"), 0);
	CHECK_INT(env_pins_add(&pins, "NCCL_P2P_LEVEL", "SYS"), 0);   /* pinned once */
	CHECK_STR(env_pins_get(&pins, "NCCL_P2P_LEVEL"), "PHB");
	CHECK_INT(tryconf_parse("NCCL_P2P_LEVEL=SYS NCCL_PROTO=Simple", "d", &t, err, sizeof err), 0);
	CHECK_INT(tryconf_resolve(&t, sp, &pins, "d", err, sizeof err), 0);
	CHECK(t.pinned[0] && !t.pinned[1]);
	CHECK(!t.in_space);   /* it leaves NCCL_MAX_NCHANNELS unset */
	env = tryconf_env_build(&t, user, sp, &pins, err, sizeof err);
	CHECK(env != NULL);
	{
		char all[1024] = "";
		size_t used = 0;

		for (size_t i = 0; env && env[i] && used < sizeof all; i++) {
			int k = snprintf(all + used, sizeof all - used, "%s ", env[i]);

			if (k > 0)
				used += (size_t)k;
		}
		CHECK_CONTAINS(all, "NCCL_P2P_LEVEL=PHB ");
		CHECK(!strstr(all, "NCCL_P2P_LEVEL=SYS"));
		CHECK_CONTAINS(all, "NCCL_PROTO=Simple ");
		CHECK_CONTAINS(all, "NCCL_BUFFSIZE=131072 ");
		CHECK_CONTAINS(all, "HOME=/x ");
	}
	env_free(env);
	j = tryconf_env_json(&t, sp);
	CHECK(cJSON_GetObjectItem(j, "NCCL_P2P_LEVEL") == NULL);
	CHECK_STR(cJSON_GetObjectItem(j, "NCCL_PROTO")->valuestring, "Simple");
	cJSON_Delete(j);
	/* the journal form round-trips, keeping what was given */
	j = tryconf_to_json(&t);
	{
		struct tryconf u;

		CHECK_INT(tryconf_from_json(j, "tries[0]", &u, err, sizeof err), 0);
		CHECK_INT(u.n, 2);
		CHECK_STR(u.value[0], "SYS");
		CHECK_INT(tryconf_resolve(&u, sp, &pins, "u", err, sizeof err), 0);
		CHECK(tryconf_same(&t, &u, space_dims(sp)));
		tryconf_clear(&u);
		cJSON_ReplaceItemInObject(j, "NCCL_PROTO", cJSON_CreateString("Fast"));
		CHECK_INT(tryconf_from_json(j, "tries[0]", &u, err, sizeof err), -1);
		CHECK_CONTAINS(err, "tries[0]: 'NCCL_PROTO'");
	}
	cJSON_Delete(j);
	tryconf_clear(&t);
	/* everything pinned: nothing left to try */
	CHECK_INT(tryconf_parse("NCCL_P2P_LEVEL=SYS", "e", &t, err, sizeof err), 0);
	CHECK_INT(tryconf_resolve(&t, sp, &pins, "e", err, sizeof err), -1);
	CHECK_CONTAINS(err, "pinned");
	tryconf_clear(&t);
	/* the baseline point itself */
	{
		space *sp2 = parse_space("{\"schema\": \"nccltune-space/1\", \"params\": {"
			"\"NCCL_PROTO\": {\"values\": [\"LL\", null]}}, \"fixed\": {\"NCCL_P2P_LEVEL\": \"SYS\"}}");

		CHECK_INT(tryconf_parse("NCCL_P2P_LEVEL=SYS", "f", &t, err, sizeof err), 0);
		CHECK_INT(tryconf_resolve(&t, sp2, &none, "f", err, sizeof err), -1);
		CHECK_CONTAINS(err, "baseline");
		tryconf_clear(&t);
		space_destroy(sp2);
	}
	env_pins_free(&pins);
	space_destroy(sp);
}

int main(void)
{
	test_parse();
	test_file();
	test_resolve();
	return check_status();
}
