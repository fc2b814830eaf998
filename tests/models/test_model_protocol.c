/* test_model_protocol.c - nccltune-model-probe speaks the protocol's extensions as
 * nccltune-probe does (docs/probe-protocol.md): --capabilities, per-size --ops lists and
 * decisions ("nccl") in every result. Every report goes through proto_report_parse.
 *
 * usage: test_model_protocol PLUGIN (the built libnccl-tuner-nccltune.so) */
#include <cjson/cJSON.h>

#include "probe_run.h"

static const char *plugin;
static char env_plugin[1200];
static struct pr_result A, B;

static const char *const no_env[] = { NULL };

static void test_capabilities(void)
{
	unsigned caps = 0;
	char err[256];

	/* no --model needed, other options ignored */
	pr_run((const char *[]){ "--capabilities", NULL }, no_env, false, &A);
	CHECK_INT(A.rc, 0);
	CHECK_STR(A.out, "{\"schema\":\"nccltune-probe/1\",\"capabilities\":[\"ops-list\","
	          "\"decisions\"]}\n");
	CHECK_INT(proto_capabilities_parse(A.out, strlen(A.out), &caps, err, sizeof err), 0);
	CHECK_INT(caps, PROTO_CAP_OPS_LIST | PROTO_CAP_DECISIONS);
	pr_run((const char *[]){ "--model", "pcie-gen5-8gpu", "--bytes", "4096", "--capabilities",
	                         NULL }, no_env, false, &B);
	CHECK_STR(B.out, A.out);
	/* a bad option is still a bad option */
	pr_run((const char *[]){ "--capabilities", "--bogus", NULL }, no_env, true, &B);
	CHECK_INT(B.rc, 2);
}

static void test_ops_list(void)
{
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--noise", "0", "--bytes",
	                         "43008,1048576,117440512", "--ops", "122,4,1", NULL }, no_env,
	       true, &A);
	CHECK_INT(A.rc, 0);
	CHECK_INT(A.r.nresults, 3);
	CHECK_INT(A.r.results[0].ops, 122);
	CHECK_INT(A.r.results[1].ops, 4);
	CHECK_INT(A.r.results[2].ops, 1);
	/* the latency is per op: a count changes no exact value */
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--noise", "0", "--bytes",
	                         "43008,1048576,117440512", NULL }, no_env, true, &B);
	for (size_t i = 0; i < 3; i++)
		CHECK(A.r.results[i].us.median == B.r.results[i].us.median);
	CHECK_INT(B.r.results[2].ops, 122);
	/* one value for all sizes still works; a list of the wrong length is refused */
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--bytes", "4096,8192", "--ops", "7",
	                         NULL }, no_env, true, &A);
	CHECK(A.r.ok && A.r.results[0].ops == 7 && A.r.results[1].ops == 7);
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--bytes", "4096,8192", "--ops",
	                         "1,2,3", NULL }, no_env, true, &A);
	CHECK_INT(A.rc, 2);
	CHECK_STR(proto_stage_name(A.r.stage), "args");
	CHECK_CONTAINS(A.r.error, "--ops: 3 values for 2 --bytes sizes");
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--ops", "1,2", "--bytes", "4096",
	                         NULL }, no_env, true, &A);
	CHECK_INT(A.rc, 2);
	/* with noise, another list is another configuration's stream */
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--seed", "1", "--bytes",
	                         "4096,8192", "--ops", "1,2", NULL }, no_env, true, &A);
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--seed", "1", "--bytes",
	                         "4096,8192", "--ops", "2,1", NULL }, no_env, true, &B);
	CHECK(A.r.results[0].us.median != B.r.results[0].us.median);
}

static void test_decisions(void)
{
	cJSON *root, *res;

	/* what the model's NCCL ran, per size: small LL on few CTAs, large Simple on all */
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--noise", "0", "--bytes",
	                         "1024,43008,134217728", NULL }, no_env, true, &A);
	CHECK_INT(A.rc, 0);
	for (size_t i = 0; i < 3; i++) {
		CHECK(A.r.results[i].nccl.known);
		CHECK(!A.r.results[i].nccl.symmetric && !A.r.results[i].nccl.mixed);
		CHECK(A.r.results[i].nccl.ctas >= 1);
	}
	CHECK_INT(A.r.results[1].nccl.algo, 1);
	CHECK_INT(A.r.results[1].nccl.proto, 0);
	CHECK_INT(A.r.results[1].nccl.ctas, 1);
	CHECK_INT(A.r.results[2].nccl.proto, 2);
	CHECK_INT(A.r.results[2].nccl.ctas, 32);
	/* the key order and names as the real probe writes them */
	root = cJSON_Parse(A.out);
	res = root ? cJSON_GetArrayItem(cJSON_GetObjectItem(root, "results"), 1) : NULL;
	CHECK(res != NULL);
	if (res) {
		char *text = cJSON_PrintUnformatted(cJSON_GetObjectItem(res, "nccl"));

		CHECK_STR(text, "{\"algo\":\"Ring\",\"proto\":\"LL\",\"ctas\":1,\"symmetric\":false}");
		free(text);
	}
	cJSON_Delete(root);
	/* the variables show in the decisions: NCCL_PROTO=Simple, NCCL_MAX_NCHANNELS=2 */
	pr_run((const char *[]){ "--model", "nvlink-h200-8gpu", "--noise", "0", "--bytes",
	                         "134217728", NULL },
	       (const char *[]){ "NCCL_PROTO=LL", "NCCL_MAX_NCHANNELS=2", NULL }, true, &A);
	CHECK_INT(A.r.results[0].nccl.proto, 0);
	CHECK_INT(A.r.results[0].nccl.ctas, 2);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s PLUGIN\n", argv[0]);
		return 2;
	}
	plugin = argv[1];
	if (pr_setup() != 0)
		return 1;
	snprintf(env_plugin, sizeof env_plugin, "NCCL_TUNER_PLUGIN=%s", plugin);
	test_capabilities();
	test_ops_list();
	test_decisions();
	proto_report_clear(&A.r);
	proto_report_clear(&B.r);
	pr_cleanup();
	return check_status();
}
