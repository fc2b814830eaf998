/* test_examples.c - the files in examples/ stay valid: each space parses with
 * space_parse, the workload with workload_parse, and they say what their names promise
 * (the NVLink space fixes NCCL_NVLS_ENABLE=0; the seed workload is 122 x 43008 B bf16). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "fsutil.h"
#include "space/space.h"
#include "run/workload.h"

static char *slurp(const char *root, const char *name, size_t *len)
{
	char path[PATH_MAX], err[512];
	char *text;

	snprintf(path, sizeof(path), "%s/examples/%s", root, name);
	text = fs_read_file(path, 1 << 20, len, err, sizeof(err));
	if (!text)
		fprintf(stderr, "%s\n", err);
	return text;
}

static space *parse_space(const char *root, const char *name)
{
	char err[1024] = "";
	size_t len = 0;
	char *text = slurp(root, name, &len);
	space *sp = NULL;

	CHECK(text != NULL);
	if (text && space_parse(text, len, name, &sp, err, sizeof(err)) != 0)
		fprintf(stderr, "%s\n", err);
	CHECK(sp != NULL);
	free(text);
	return sp;
}

int main(void)
{
	const char *root = getenv("NCCLTUNE_SOURCE_ROOT");
	struct workload w;
	char err[1024] = "";
	size_t len = 0;
	char *text;
	space *sp;

	if (!root) {
		fprintf(stderr, "NCCLTUNE_SOURCE_ROOT is not set (run through meson test)\n");
		return 1;
	}
	sp = parse_space(root, "space-pcie.json");
	if (sp) {
		CHECK(space_mentions(sp, "NCCL_P2P_LEVEL"));
		CHECK(space_mentions(sp, "NCCL_P2P_DISABLE"));
		CHECK(!space_mentions(sp, "NCCL_NVLS_ENABLE"));
		CHECK(space_cardinality(sp) > 1000);
	}
	space_destroy(sp);
	sp = parse_space(root, "space-nvlink.json");
	if (sp) {
		CHECK_INT(space_fixed_count(sp), 1);
		CHECK_STR(space_fixed_name(sp, 0), "NCCL_NVLS_ENABLE");
		CHECK_STR(space_fixed_value(sp, 0), "0");
	}
	space_destroy(sp);
	/* the per-size variants: a per_size block, never NCCL_ALGO/NCCL_PROTO */
	for (int i = 0; i < 2; i++) {
		sp = parse_space(root, i ? "space-nvlink-per-size.json" : "space-pcie-per-size.json");
		CHECK(sp != NULL);
		if (sp) {
			CHECK(space_has_per_size(sp));
			CHECK(!space_mentions(sp, "NCCL_ALGO"));
			CHECK(!space_mentions(sp, "NCCL_PROTO"));
		}
		space_destroy(sp);
	}
	text = slurp(root, "kimi-k25-eagle3-verify-8xpcie.json", &len);
	CHECK(text != NULL);
	if (text) {
		int rc = workload_parse(text, len, "kimi-k25-eagle3-verify-8xpcie.json", &w, err,
		                        sizeof(err));

		if (rc != 0)
			fprintf(stderr, "%s\n", err);
		CHECK_INT(rc, 0);
		CHECK_INT(w.n, 1);
		CHECK_INT(w.e[0].bytes, 43008);
		CHECK_INT(w.e[0].count, 122);
		CHECK_INT(w.dtype, PROTO_DTYPE_BF16);
	}
	free(text);
	return check_status();
}
