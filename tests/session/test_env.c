/* test_env.c - pinned variables, the unpinned space, the probe's environment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "run/env.h"

static const char *space_text =
	"{\"schema\": \"nccltune-space/1\", \"params\": {"
	"\"NCCL_PROTO\": {\"values\": [\"LL\", \"Simple\", null]},"
	"\"NCCL_MIN_NCHANNELS\": {\"int\": [1, 4]},"
	"\"NCCL_MAX_NCHANNELS\": {\"int\": [1, 4]}},"
	"\"fixed\": {\"NCCL_P2P_LEVEL\": \"SYS\"},"
	"\"constraints\": [\"NCCL_MIN_NCHANNELS <= NCCL_MAX_NCHANNELS\"]}";

/* How many entries of env are NAME=..., and the value of the last. */
static int count_var(char **env, const char *name, const char **value)
{
	size_t len = strlen(name);
	int n = 0;

	*value = NULL;
	for (size_t i = 0; env[i]; i++) {
		if (strncmp(env[i], name, len) == 0 && env[i][len] == '=') {
			n++;
			*value = env[i] + len + 1;
		}
	}
	return n;
}

static void expect_var(char **env, const char *name, const char *want)
{
	const char *v;
	int n = count_var(env, name, &v);

	if (!want) {
		CHECK_INT(n, 0);
		return;
	}
	CHECK_INT(n, 1);
	CHECK_STR(v, want);
}

struct seen { int pinned, decides, logging, labels; };

static void count_report(void *ctx, enum env_inherited what, const char *name,
                         const char *value)
{
	struct seen *k = ctx;

	(void)name;
	(void)value;
	if (what == ENV_INHERITED_PINNED)
		k->pinned++;
	else if (what == ENV_INHERITED_DECIDES)
		k->decides++;
	else if (what == ENV_INHERITED_LABEL)
		k->labels++;
	else
		k->logging++;
}

/* One inherited variable against space sp: the check's return, err on refusal. */
static int inherit_one(const space *sp, const char *entry, bool resumed,
                       struct env_pins *pins, struct seen *k, char *err, size_t errlen)
{
	char one[256], home[] = "HOME=/h";
	char *user[] = {home, one, NULL};

	snprintf(one, sizeof one, "%s", entry);
	return env_inherited_check(user, sp, resumed, pins, count_report, k, err, errlen);
}

/* Every inherited NCCL_* is pinned, reported or refused (issue 27 item 5, 31 M6). */
static void test_inherited(const space *sp)
{
	static const struct { const char *entry, *says; } refused[] = {
		{"NCCL_TUNER_PLUGIN=/old/libnccltune-tuner.so", "unset NCCL_TUNER_PLUGIN NCCLTUNE_TUNER_TABLE"},
		{"NCCLTUNE_TUNER_TABLE=/old/nccl-rules.conf", "unset NCCL_TUNER_PLUGIN NCCLTUNE_TUNER_TABLE"},
		{"NCCL_NET_PLUGIN=aws-ofi", "a loader variable"},
		{"NCCL_TOPO_FILE=/x.xml", "unset NCCL_TOPO_FILE"},
		{"NCCL_PROTOCOL=LL", "did you mean"},
		{"NCCL_NTHREADS=100", "unset NCCL_NTHREADS or correct its value"},
		{"NCCL_SOMETHING_NEW=1", "not a variable nccltune knows"},
		{"CUDA_LAUNCH_BLOCKING=1", "unset CUDA_LAUNCH_BLOCKING"},
	};
	struct env_pins pins;
	struct seen k;
	char err[1024];

	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		memset(&pins, 0, sizeof pins);
		memset(&k, 0, sizeof k);
		err[0] = '\0';
		CHECK_INT(inherit_one(sp, refused[i].entry, false, &pins, &k, err, sizeof err), -1);
		CHECK_CONTAINS(err, refused[i].says);
		CHECK_CONTAINS(err, "refused before any run");
		CHECK_INT(pins.n, 0);
		env_pins_free(&pins);
	}
	/* a tuning variable the space does not mention: pinned, so recorded and exported */
	memset(&pins, 0, sizeof pins);
	memset(&k, 0, sizeof k);
	CHECK_INT(inherit_one(sp, "NCCL_BUFFSIZE=1048576", false, &pins, &k, err, sizeof err), 0);
	CHECK_STR(env_pins_get(&pins, "NCCL_BUFFSIZE"), "1048576");
	CHECK_INT(k.pinned, 1);
	/* a site setting too */
	CHECK_INT(inherit_one(sp, "NCCL_SOCKET_IFNAME=eth0", false, &pins, &k, err, sizeof err), 0);
	CHECK_STR(env_pins_get(&pins, "NCCL_SOCKET_IFNAME"), "eth0");
	/* NCCL_ALGO: pinned, and said to narrow NCCL's choice */
	CHECK_INT(inherit_one(sp, "NCCL_ALGO=Ring", false, &pins, &k, err, sizeof err), 0);
	CHECK_STR(env_pins_get(&pins, "NCCL_ALGO"), "Ring");
	CHECK_INT(k.decides, 1);
	/* logging: reported, never pinned */
	CHECK_INT(inherit_one(sp, "NCCL_DEBUG=INFO", false, &pins, &k, err, sizeof err), 0);
	CHECK_INT(inherit_one(sp, "NCCL_DEBUG_FILE=/tmp/x.%p", false, &pins, &k, err, sizeof err), 0);
	CHECK(env_pins_get(&pins, "NCCL_DEBUG") == NULL);
	CHECK(env_pins_get(&pins, "NCCL_DEBUG_FILE") == NULL);
	CHECK_INT(k.logging, 2);
	/* NCCL_VERSION, the label NVIDIA's CUDA and PyTorch images set: passed on and said,
	 * never pinned nor refused, in a resumed session too (the rig's image had it) */
	CHECK_INT(inherit_one(sp, "NCCL_VERSION=2.28.3-1", false, &pins, &k, err, sizeof err), 0);
	CHECK_INT(inherit_one(sp, "NCCL_VERSION=2.28.3-1", true, &pins, &k, err, sizeof err), 0);
	CHECK(env_pins_get(&pins, "NCCL_VERSION") == NULL);
	CHECK_INT(k.labels, 2);
	CHECK_INT(k.logging, 2);
	/* the space's own variables are the space's (env_pins_collect); other names pass */
	CHECK_INT(inherit_one(sp, "NCCL_PROTO=LL", false, &pins, &k, err, sizeof err), 0);
	CHECK(env_pins_get(&pins, "NCCL_PROTO") == NULL);
	CHECK_INT(inherit_one(sp, "CUDA_VISIBLE_DEVICES=0", false, &pins, &k, err, sizeof err), 0);
	CHECK_INT(pins.n, 3);
	/* resumed: a recorded pin stays; a new one is refused, the session ran without it */
	CHECK_INT(inherit_one(sp, "NCCL_BUFFSIZE=1048576", true, &pins, &k, err, sizeof err), 0);
	CHECK_INT(inherit_one(sp, "NCCL_NTHREADS=256", true, &pins, &k, err, sizeof err), -1);
	CHECK_CONTAINS(err, "ran without it");
	env_pins_free(&pins);
}

int main(void)
{
	char *user[] = {"HOME=/h", "NCCL_DEBUG=INFO", "NCCL_MAX_NCHANNELS=2", "NCCL_P2P_LEVEL=PHB",
	                "FOO=1", NULL};
	char *bare[] = {"HOME=/h", NULL};
	char *all_pinned[] = {"NCCL_PROTO=LL", "NCCL_MIN_NCHANNELS=1", "NCCL_MAX_NCHANNELS=1", NULL};
	char err[512];
	space *sp = NULL, *un = NULL, *un2 = NULL;
	struct env_pins pins, none, pins2;
	struct point p, q;
	char **env;
	cJSON *j;

	memset(&none, 0, sizeof none);
	CHECK_INT(space_parse(space_text, strlen(space_text), "s.json", &sp, err, sizeof err), 0);
	if (!sp) {
		fprintf(stderr, "space_parse: %s\n", err);
		return 1;
	}
	CHECK_INT(env_pins_collect(user, sp, &pins, err, sizeof err), 0);
	CHECK_INT(pins.n, 2);
	CHECK_STR(env_pins_get(&pins, "NCCL_MAX_NCHANNELS"), "2");
	CHECK_STR(env_pins_get(&pins, "NCCL_P2P_LEVEL"), "PHB");
	CHECK(env_pins_get(&pins, "NCCL_DEBUG") == NULL);
	CHECK(pins.v[0].searched);
	CHECK(!pins.v[1].searched);

	/* The pinned searched variable leaves the search; its value enters the constraint. */
	CHECK_INT(env_space_unpin(sp, &pins, &un, err, sizeof err), 0);
	CHECK(un != NULL);
	if (un) {
		CHECK_INT(space_dims(un), 2);
		CHECK_STR(space_name(un, 0), "NCCL_PROTO");
		CHECK_STR(space_name(un, 1), "NCCL_MIN_NCHANNELS");
		memset(&p, 0, sizeof p);
		p.lv[1] = 1;             /* MIN = 2 <= 2 */
		CHECK(space_allows(un, &p));
		p.lv[1] = 2;             /* MIN = 3 > 2 */
		CHECK(!space_allows(un, &p));

		/* The environment: the user's, pins kept, searched from the candidate. */
		p.lv[0] = 0;
		p.lv[1] = 0;
		env = env_build(user, un, &pins, &p, err, sizeof err);
		CHECK(env != NULL);
		if (env) {
			expect_var(env, "HOME", "/h");
			expect_var(env, "FOO", "1");
			expect_var(env, "NCCL_DEBUG", "INFO");
			expect_var(env, "NCCL_MAX_NCHANNELS", "2");
			expect_var(env, "NCCL_P2P_LEVEL", "PHB");   /* never overridden by fixed SYS */
			expect_var(env, "NCCL_PROTO", "LL");
			expect_var(env, "NCCL_MIN_NCHANNELS", "1");
			expect_var(env, "NCCL_NVLS_ENABLE", NULL);
			env_free(env);
		}
		/* The baseline sets none of the searched variables. */
		env = env_build(user, un, &pins, NULL, err, sizeof err);
		CHECK(env != NULL);
		if (env) {
			expect_var(env, "NCCL_PROTO", NULL);
			expect_var(env, "NCCL_MIN_NCHANNELS", NULL);
			expect_var(env, "NCCL_MAX_NCHANNELS", "2");
			env_free(env);
		}
	}

	/* Without pins: fixed variables are set, null levels leave a variable unset, and a
	 * searched variable in the user environment is removed. */
	memset(&p, 0, sizeof p);
	p.lv[0] = 2;                 /* NCCL_PROTO null */
	p.lv[1] = 1;
	p.lv[2] = 3;
	env = env_build(user, sp, &none, &p, err, sizeof err);
	CHECK(env != NULL);
	if (env) {
		expect_var(env, "NCCL_P2P_LEVEL", "SYS");
		expect_var(env, "NCCL_PROTO", NULL);
		expect_var(env, "NCCL_MIN_NCHANNELS", "2");
		expect_var(env, "NCCL_MAX_NCHANNELS", "4");
		env_free(env);
	}
	env = env_build(bare, sp, &none, NULL, err, sizeof err);
	CHECK(env != NULL);
	if (env) {
		expect_var(env, "HOME", "/h");
		expect_var(env, "NCCL_P2P_LEVEL", "SYS");
		env_free(env);
	}

	/* Points as env objects and level arrays, both ways. */
	j = env_point_to_json(sp, &p);
	CHECK(j && cJSON_GetArraySize(j) == 2);
	CHECK_INT(env_point_from_json(sp, j, &q), 0);
	CHECK(point_equal(&p, &q, space_dims(sp)));
	cJSON_AddStringToObject(j, "NCCL_OTHER", "1");
	CHECK_INT(env_point_from_json(sp, j, &q), -1);
	cJSON_Delete(j);
	j = cJSON_Parse("{\"NCCL_PROTO\": \"LL128\", \"NCCL_MIN_NCHANNELS\": \"1\", "
	                "\"NCCL_MAX_NCHANNELS\": \"1\"}");
	CHECK_INT(env_point_from_json(sp, j, &q), -1);   /* not a level of the space */
	cJSON_Delete(j);
	j = env_point_levels_to_json(sp, &p);
	CHECK_INT(env_point_levels_from_json(sp, j, &q), 0);
	CHECK(point_equal(&p, &q, space_dims(sp)));
	cJSON_Delete(j);
	j = cJSON_Parse("[0, 9, 0]");
	CHECK_INT(env_point_levels_from_json(sp, j, &q), -1);
	cJSON_Delete(j);

	/* Pins survive the journal. */
	j = env_pins_to_json(&pins);
	CHECK_INT(env_pins_from_json(j, "pinned", &pins2, err, sizeof err), 0);
	CHECK_INT(pins2.n, 2);
	CHECK_STR(env_pins_get(&pins2, "NCCL_P2P_LEVEL"), "PHB");
	cJSON_Delete(j);
	env_pins_free(&pins2);

	/* Everything pinned: nothing left to tune, said plainly. */
	env_pins_free(&pins);
	CHECK_INT(env_pins_collect(all_pinned, sp, &pins, err, sizeof err), 0);
	CHECK_INT(env_space_unpin(sp, &pins, &un2, err, sizeof err), -1);
	CHECK_CONTAINS(err, "nothing left to tune");
	env_pins_free(&pins);
	test_inherited(sp);
	space_destroy(un);
	space_destroy(sp);
	return check_status();
}
