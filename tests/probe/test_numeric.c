/* test_numeric.c - the probe's test data: exact conversions, value ranges that keep
 * every partial sum exact, and a check that catches dropped or doubled contributions. */
#include <stdint.h>
#include <stdlib.h>

#include "../check.h"
#include "numeric.h"

/* Round a double to the nearest bf16 / f16 the slow, obvious way: only for the exact
 * integers used here, where both directions are exact. */
static void test_conversions(void)
{
	for (int v = 0; v <= 2048; v++) {
		CHECK_NEAR(numeric_f16_to_double(numeric_f16_from_int(v)), v, 0);
		if (v <= 256)
			CHECK_NEAR(numeric_bf16_to_double(numeric_bf16_from_int(v)), v, 0);
	}
	CHECK_INT(numeric_bf16_from_int(1), 0x3f80);
	CHECK_INT(numeric_f16_from_int(1), 0x3c00);
	CHECK_INT(numeric_f16_from_int(3), 0x4200);
	CHECK_INT(numeric_f16_from_int(-2), 0xc000);
	CHECK_INT(numeric_f16_from_int(0), 0);
	/* 257 is not a bf16: the nearest representable values are 256 and 258. */
	CHECK(numeric_bf16_to_double(numeric_bf16_from_int(257)) != 257);
	CHECK(numeric_f16_to_double(0x7e00) != numeric_f16_to_double(0x7e00)); /* NaN */
	CHECK(numeric_bf16_to_double(0xffff) != numeric_bf16_to_double(0xffff)); /* NaN */
}

static void test_ranges(void)
{
	CHECK_INT(numeric_max_value(1), 3);
	CHECK_INT(numeric_max_value(8), 3);
	CHECK_INT(numeric_max_value(85), 3);
	CHECK_INT(numeric_max_value(86), 2);
	CHECK_INT(numeric_max_value(256), 1);
	CHECK_INT(numeric_max_value(257), 0);
	CHECK_INT(numeric_max_value(0), 0);
	for (int n = 1; n <= 256; n++)
		CHECK(numeric_max_value(n) * n <= NUMERIC_EXACT_LIMIT);
	for (size_t i = 0; i < 1000; i++) {
		int v = numeric_input(5, 7, i, 3);

		CHECK(v >= 0 && v <= 3);
	}
}

/* Simulate an all-reduce on the host: sum the ranks' inputs in float, write dtype. */
static void reduce(void *dst, enum proto_dtype d, int nranks, size_t slice, size_t count, int maxv)
{
	for (size_t i = 0; i < count; i++) {
		int s = 0;

		for (int r = 0; r < nranks; r++)
			s += numeric_input(r, slice, i, maxv);
		if (d == PROTO_DTYPE_F32) {
			float f = (float)s;

			memcpy((char *)dst + i * 4, &f, 4);
		} else {
			uint16_t b = d == PROTO_DTYPE_BF16 ? numeric_bf16_from_int(s) : numeric_f16_from_int(s);

			memcpy((char *)dst + i * 2, &b, 2);
		}
	}
}

/* The expected sums must vary from element to element, or misplaced data would pass. */
static void test_sums_vary(int nranks)
{
	int maxv = numeric_max_value(nranks), seen[NUMERIC_EXACT_LIMIT + 1] = {0}, distinct = 0;

	for (size_t i = 0; i < 4096; i++) {
		int s = 0;

		for (int r = 0; r < nranks; r++)
			s += numeric_input(r, 0, i, maxv);
		CHECK(s >= 0 && s <= NUMERIC_EXACT_LIMIT);
		if (s >= 0 && s <= NUMERIC_EXACT_LIMIT && !seen[s]++)
			distinct++;
	}
	CHECK(distinct >= 4);
}

static void test_check(enum proto_dtype d, int nranks)
{
	size_t count = 21504, esize = proto_dtype_size(d);
	int maxv = numeric_max_value(nranks);
	unsigned char *buf = malloc(count * esize), *one = malloc(count * esize);
	double want = 0, got = 0;

	if (!buf || !one) {
		CHECK(!"out of memory");
		goto out;
	}
	reduce(buf, d, nranks, 3, count, maxv);
	CHECK(numeric_check(buf, d, nranks, 3, count, maxv, &want, &got) == (size_t)-1);
	/* The same data checked as another slice must fail: slices differ. */
	CHECK(numeric_check(buf, d, nranks, 4, count, maxv, &want, &got) != (size_t)-1);
	/* One rank's contribution missing shows up (rank nranks-1 adds to some element). */
	if (nranks > 1) {
		reduce(one, d, nranks - 1, 3, count, maxv);
		CHECK(numeric_check(one, d, nranks, 3, count, maxv, &want, &got) != (size_t)-1);
	}
	/* Two neighbouring elements swapped (a misplaced copy) are caught too. */
	if (nranks > 1) {
		unsigned char tmp[4];
		size_t i = 100;

		while (i < count - 1 && memcmp(buf + i * esize, buf + (i + 1) * esize, esize) == 0)
			i++;
		memcpy(tmp, buf + i * esize, esize);
		memcpy(buf + i * esize, buf + (i + 1) * esize, esize);
		memcpy(buf + (i + 1) * esize, tmp, esize);
		CHECK_INT(numeric_check(buf, d, nranks, 3, count, maxv, &want, &got), i);
		reduce(buf, d, nranks, 3, count, maxv);
	}
	/* One corrupted element is found at its index, with both values. */
	memset(buf + 1000 * esize, 0xff, esize);   /* NaN */
	CHECK_INT(numeric_check(buf, d, nranks, 3, count, maxv, &want, &got), 1000);
	CHECK(got != got);
	/* The input itself is not the sum for more than one rank. */
	numeric_fill(buf, d, 0, 3, count, maxv);
	if (nranks > 1)
		CHECK(numeric_check(buf, d, nranks, 3, count, maxv, &want, &got) != (size_t)-1);
	else
		CHECK(numeric_check(buf, d, nranks, 3, count, maxv, &want, &got) == (size_t)-1);
out:
	free(buf);
	free(one);
}

int main(void)
{
	test_conversions();
	test_ranges();
	for (int n = 2; n <= 256; n *= 2)
		test_sums_vary(n);
	for (int d = PROTO_DTYPE_BF16; d <= PROTO_DTYPE_F32; d++) {
		test_check((enum proto_dtype)d, 1);
		test_check((enum proto_dtype)d, 2);
		test_check((enum proto_dtype)d, 8);
		test_check((enum proto_dtype)d, 256);
	}
	return check_status();
}
