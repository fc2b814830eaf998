/* test_model_load.c - loading model files (models/model.c): every built-in and every file
 * in models/ loads, the embedded text is the file's, bad files fail with a message naming
 * the file, the key and the reason, and the synthetic fingerprint is valid and stable. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "fsutil.h"
#include "model.h"

static char *source_path(const char *rel, char *buf, size_t len)
{
	const char *root = getenv("NCCLTUNE_SOURCE_ROOT");

	snprintf(buf, len, "%s/%s", root ? root : "../..", rel);
	return buf;
}

static char *read_model_file(const char *name, size_t *len)
{
	char rel[128], path[1024], err[256];

	snprintf(rel, sizeof rel, "models/%s.json", name);
	return fs_read_file(source_path(rel, path, sizeof path), 1 << 20, len, err, sizeof err);
}

static void test_builtins(void)
{
	char err[512];

	CHECK_INT(model_builtin_count(), 5);
	CHECK(model_builtin_name(model_builtin_count()) == NULL);
	for (size_t i = 0; i < model_builtin_count(); i++) {
		const char *name = model_builtin_name(i);
		struct model *m = model_load_builtin(name, err, sizeof err);
		size_t flen = 0, blen = 0;
		char *file = read_model_file(name, &flen);
		const char *text = model_builtin_text(i, &blen);

		CHECK(m != NULL);
		if (!m) {
			fprintf(stderr, "  %s\n", err);
			free(file);
			continue;
		}
		CHECK_STR(model_name(m), name);
		CHECK(model_nranks(m) >= 2);
		/* the fitted 2-GPU model says the NCCL it was measured with */
		CHECK_STR(model_nccl_version(m),
		          strcmp(name, "h200-nvlink-2gpu") == 0 ? "2.28.3" : "2.28.9");
		/* the embedded copy is the file in the tree (the build regenerates it) */
		CHECK(file != NULL);
		CHECK_INT(blen, flen);
		CHECK(file && text && blen == flen && memcmp(file, text, flen) == 0);
		model_destroy(m);
		free(file);
	}
	CHECK(model_load_builtin("no-such-model", err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "no built-in model 'no-such-model'");
	CHECK_CONTAINS(err, "pcie-gen5-8gpu");
	CHECK(model_load("no-such-model", err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "neither a built-in model");
	model_destroy(NULL);
}

static void test_files(void)
{
	char path[1024], err[512];
	struct model *m;

	m = model_load(source_path("models/pcie-4gpu-switch.json", path, sizeof path), err,
	               sizeof err);
	CHECK(m != NULL);
	if (m)
		CHECK_STR(model_name(m), "pcie-4gpu-switch");
	model_destroy(m);
	CHECK(model_load_file("/nonexistent/model.json", err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "/nonexistent/model.json");
}

/* Parse the seed model's text after replacing the first `from` by `to`; expect failure
 * with a message containing `want`. */
static void expect_error(const char *from, const char *to, const char *want)
{
	size_t len;
	char *text = read_model_file("pcie-gen5-8gpu", &len), *pos, *edited;
	char err[1024] = "";
	struct model *m;

	CHECK(text != NULL);
	if (!text)
		return;
	pos = strstr(text, from);
	CHECK(pos != NULL);
	if (!pos) {
		fprintf(stderr, "  '%s' not found in the seed model\n", from);
		free(text);
		return;
	}
	edited = malloc(len + strlen(to) + 1);
	CHECK(edited != NULL);
	if (edited) {
		size_t head = (size_t)(pos - text);

		memcpy(edited, text, head);
		memcpy(edited + head, to, strlen(to));
		memcpy(edited + head + strlen(to), pos + strlen(from), len - head - strlen(from) + 1);
		m = model_parse(edited, strlen(edited), "test.json", err, sizeof err);
		CHECK(m == NULL);
		CHECK_CONTAINS(err, "test.json");
		CHECK_CONTAINS(err, want);
		model_destroy(m);
	}
	free(edited);
	free(text);
}

static void test_errors(void)
{
	char err[512];

	CHECK(model_parse("{\"schema\": ", 11, "broken.json", err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "broken.json: line 1: not valid JSON");
	CHECK(model_parse("{}\n{}", 5, "two.json", err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "two.json: line 2: text after the JSON value");
	CHECK(model_parse("[]", 2, "arr.json", err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "arr.json: expected an object");
	/* jsonread's parser: a NUL byte in the text is refused */
	CHECK(model_parse("{}\0", 3, "nul.json", err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "nul.json: NUL byte in the text");

	expect_error("\"nccl_version\"", "\"bogus\": 1, \"nccl_version\"",
	             "test.json: bogus: unknown key");
	expect_error("\"cta_sync_us\"", "\"cta_synch_us\"", "test.json: costs.cta_synch_us: unknown key");
	expect_error("\"schema\": \"nccltune-model/1\"", "\"schema\": \"nccltune-model/2\"",
	             "test.json: schema: 'nccltune-model/2' is not");
	expect_error("\"compute_capability\": 120", "\"compute_capability\": \"120\"",
	             "test.json: machine.compute_capability: expected an integer");
	expect_error("\"sockets\": 2", "\"sockets\": 1",
	             "test.json: machine.gpus[4].socket: 1 is out of range [0, 0]");
	expect_error("\"00000000:21:00.0\"", "\"21:00.0\"", "machine.gpus[1].bus_id");
	expect_error("\"00000000:21:00.0\"", "\"00000000:01:00.0\"", "repeats machine.gpus[0]");
	expect_error("\"cta_sync_us\": 4.0,", "", "test.json: costs.cta_sync_us: missing");
	expect_error("\"cta_sync_us\": 4.0", "\"cta_sync_us\": -1",
	             "test.json: costs.cta_sync_us: -1 is out of range");
	expect_error("\"algo\": \"Tree\"", "\"algo\": \"Trie\"", "algo 'Trie' is not an NCCL");
	expect_error("\"stage\": \"capture\"", "\"stage\": \"explode\"",
	             "'explode' is not one of env");
	expect_error("\"env\": {}", "\"env\": {\"NCCL_FOO\": \"1\"}",
	             "test.json: calibration[0].env.NCCL_FOO: not a variable the model reads");
	expect_error("\"us\": 200.0", "\"us\": 200.0, \"stage\": \"init\"",
	             "needs exactly one of 'us'");
	expect_error("\"p2p_max_path\": \"SYS\"", "\"p2p_max_path\": \"FAR\"",
	             "'FAR' is not one of LOC");
	expect_error("\"hop_us\": {", "\"hop_us\": {\"nvlink\": {\"LL\": 1, \"LL128\": 1, \"Simple\": 1},",
	             "test.json: costs.hop_us.nvlink: unknown key");
	expect_error("\"name\": \"pcie-gen5-8gpu\"", "\"name\": \"Seed Box\"", "lower-case");
	/* a control character in a string, and a key shown as jsonread shows it */
	expect_error("\"gpu_name\": \"", "\"gpu_name\": \"\\u0007",
	             "test.json: machine.gpu_name: holds a control character");
	expect_error("\"nccl_version\"", "\"bo\\u001bgus\": 1, \"nccl_version\"",
	             "test.json: bo?gus: unknown key");
	expect_error("\"tolerance\": 0.1", "\"tolerance\": 0.1, \"tolerance\": 0.2",
	             "test.json: calibration[0].tolerance: appears twice");
	/* the objects read through jsonread's tables */
	expect_error("\"driver\": \"580.95.05\"", "\"driver\": \"\"",
	             "test.json: software.driver: is empty");
	expect_error("\"cuda_driver\": \"13.0\"", "\"cuda_driver\": \"13.0.0.0.0.0.0.0\"",
	             "test.json: software.cuda_driver: string longer than 15 bytes");
	expect_error("\"launch_us\": {\"LL\": 3.5,", "\"launch_us\": {\"LL\": 1001,",
	             "test.json: costs.launch_us.LL: 1001 is out of range [0, 1000]");
	expect_error("\"launch_us\": {\"LL\": 3.5, ", "\"launch_us\": {",
	             "test.json: costs.launch_us.LL: missing");
	expect_error("\"data_factor\": 2.9}", "\"data_factor\": 2.9, \"depth\": 1}",
	             "test.json: costs.tree.depth: unknown key (expected extra_us, data_factor)");
	expect_error("\"nvswitch\": null", "\"nvswitch\": {\"links\": 19, \"nvls\": false}",
	             "test.json: machine.nvswitch.links: 19 is out of range [1, 18]");
	expect_error("\"nvswitch\": null", "\"nvswitch\": {\"links\": 4, \"nvls\": 1}",
	             "test.json: machine.nvswitch.nvls: expected a boolean, got a number");
	expect_error("\"outlier_factor\": [1.5, 3.0]", "\"outlier_factor\": [3.0, 1.5]",
	             "test.json: noise.outlier_factor: need 1 <= low <= high <= 100");
	expect_error("\"outlier_factor\": [1.5, 3.0]", "\"outlier_factor\": [1.5]",
	             "test.json: noise.outlier_factor: expected [low, high]");
	expect_error("\"outlier_factor\": [1.5, 3.0]", "\"outlier_factor\": [1.5, 2.0, 3.0]",
	             "test.json: noise.outlier_factor: expected [low, high]");
	expect_error("\"parameters\": [\"", "\"parameters\": [\"\", \"",
	             "test.json: fit.parameters[0]: expected a non-empty string");
	expect_error("\"max_rel_error\": 0.0", "\"max_rel_error\": 11",
	             "test.json: fit.max_rel_error: 11 is out of range [0, 10]");
}

static void test_fingerprint(void)
{
	static const struct { const char *model, *word; } words[] = {
		{ "pcie-gen5-8gpu", "SYS" }, { "pcie-gen5-8gpu", "NODE" },
		{ "nvlink-h200-8gpu", "NV18" }, { "pcie-4gpu-switch", "PIX" },
		{ "pcie-2x4-islands", "PIX" }, { "pcie-2x4-islands", "SYS" },
		{ "h200-nvlink-2gpu", "NV18" },
	};
	char err[512];

	for (size_t i = 0; i < model_builtin_count(); i++) {
		struct model *m = model_load_builtin(model_builtin_name(i), err, sizeof err);
		char *a = m ? model_fingerprint_json(m) : NULL, *b = m ? model_fingerprint_json(m) : NULL;
		cJSON *fp = a ? cJSON_Parse(a) : NULL, *topo, *gpus;
		int n = m ? model_nranks(m) : 0;

		CHECK(fp != NULL);
		CHECK(a && b && strcmp(a, b) == 0);      /* stable */
		if (!fp)
			goto next;
		CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(fp, "schema")), PROTO_FINGERPRINT_SCHEMA);
		CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(fp, "source")), "model");
		CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(fp, "model")), model_name(m));
		CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(fp, "nccl_version")),
		          model_nccl_version(m));
		CHECK(cJSON_GetStringValue(cJSON_GetObjectItem(fp, "driver")) != NULL);
		CHECK(cJSON_GetStringValue(cJSON_GetObjectItem(fp, "cuda_runtime")) != NULL);
		CHECK_INT(cJSON_GetNumberValue(cJSON_GetObjectItem(fp, "gpu_count")), n);
		gpus = cJSON_GetObjectItem(fp, "gpus");
		CHECK_INT(cJSON_GetArraySize(gpus), n);
		for (int g = 0; g < cJSON_GetArraySize(gpus); g++) {
			cJSON *gpu = cJSON_GetArrayItem(gpus, g);
			const char *uuid = cJSON_GetStringValue(cJSON_GetObjectItem(gpu, "uuid"));

			CHECK_INT(cJSON_GetNumberValue(cJSON_GetObjectItem(gpu, "index")), g);
			CHECK(cJSON_GetStringValue(cJSON_GetObjectItem(gpu, "name")) != NULL);
			CHECK(strlen(cJSON_GetStringValue(cJSON_GetObjectItem(gpu, "bus_id"))) == 16);
			CHECK(uuid && strncmp(uuid, "GPU-", 4) == 0 && strlen(uuid) == 40);
		}
		topo = cJSON_GetObjectItem(fp, "topology");
		CHECK_INT(cJSON_GetArraySize(topo), n);
		for (int r = 0; r < cJSON_GetArraySize(topo); r++) {
			cJSON *row = cJSON_GetArrayItem(topo, r);

			CHECK_INT(cJSON_GetArraySize(row), n);
			CHECK_STR(cJSON_GetStringValue(cJSON_GetArrayItem(row, r)), "X");
			for (int c = 0; c < n; c++)   /* symmetric */
				CHECK_STR(cJSON_GetStringValue(cJSON_GetArrayItem(row, c)),
				          cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetArrayItem(topo, c), r)));
		}
		for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
			if (strcmp(words[w].model, model_name(m)) == 0)
				CHECK(strstr(a, words[w].word) != NULL);
		}
next:
		cJSON_Delete(fp);
		free(a);
		free(b);
		model_destroy(m);
	}
}

int main(void)
{
	test_builtins();
	test_files();
	test_errors();
	test_fingerprint();
	return check_status();
}
