/* test_result.c - the intervals of the final phase and the results.json document. */
#include <math.h>
#include <string.h>

#include "../check.h"
#include "result/result.h"

int main(void)
{
	double x[] = {1, 2, 3}, m, lo, hi, r;
	double base[] = {200, 210, 190, 205}, cand[] = {100, 105, 95, 102.5};
	struct result_input in;
	struct result_config best, top[1];
	struct result_size sizes[1] = {{43008, 23.4}};
	cJSON *env, *doc, *it;

	/* t(0.975, 2) = 4.302653; sd 1; half-width 4.302653 / sqrt(3). */
	result_mean_ci(x, 3, &m, &lo, &hi);
	CHECK_NEAR(m, 2, 1e-12);
	CHECK_NEAR(hi - m, 4.302653 / sqrt(3.0), 1e-5);
	CHECK_NEAR(m - lo, 4.302653 / sqrt(3.0), 1e-5);
	result_mean_ci(x, 1, &m, &lo, &hi);
	CHECK(isnan(lo) && isnan(hi));

	/* Every round exactly 2x: ratio 2, a zero-width interval. */
	result_paired_gain(base, cand, 4, &r, &lo, &hi);
	CHECK_NEAR(r, 2.0, 1e-12);
	CHECK_NEAR(lo, 2.0, 1e-9);
	CHECK_NEAR(hi, 2.0, 1e-9);
	cand[0] = 120;
	result_paired_gain(base, cand, 4, &r, &lo, &hi);
	CHECK(r < 2.0 && lo < r && hi > r);

	memset(&in, 0, sizeof in);
	env = cJSON_CreateObject();
	cJSON_AddStringToObject(env, "NCCL_PROTO", "LL");
	best.env = env;
	best.objective_us = 2850.123456;
	best.ci_lo = 2820;
	best.ci_hi = 2890;
	best.repeats = 3;
	top[0] = best;
	in.created = "2026-11-29T12:00:00Z";
	in.source = "model";
	in.model = "pcie-gen5-8gpu";
	in.strategy = "bo";
	in.seed = 7;
	in.budget = 60;
	in.has_best = true;
	in.best = best;
	in.nsizes = 1;
	in.sizes = sizes;
	in.has_gain = true;
	in.gain = 8.56;
	in.gain_lo = NAN;
	in.gain_hi = NAN;
	in.ntop = 1;
	in.top = top;
	in.evaluations = 57;
	doc = result_build(&in);
	CHECK(doc != NULL);
	CHECK_STR(cJSON_GetObjectItem(doc, "schema")->valuestring, "nccltune-result/1");
	CHECK_STR(cJSON_GetObjectItem(doc, "model")->valuestring, "pcie-gen5-8gpu");
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(doc, "fingerprint")));
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(doc, "baseline")));
	it = cJSON_GetObjectItem(doc, "best");
	CHECK_NEAR(cJSON_GetObjectItem(it, "objective_us")->valuedouble, 2850.1235, 1e-9);
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(it, "env"), "NCCL_PROTO")->valuestring, "LL");
	CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(it, "per_size")), 1);
	it = cJSON_GetObjectItem(doc, "gain");
	CHECK_NEAR(cJSON_GetObjectItem(it, "ratio")->valuedouble, 8.56, 1e-12);
	CHECK(cJSON_GetObjectItem(it, "ci95") == NULL);
	CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "failures")), 0);
	CHECK_INT(cJSON_GetObjectItem(doc, "evaluations")->valueint, 57);
	cJSON_Delete(doc);
	cJSON_Delete(env);
	return check_status();
}
