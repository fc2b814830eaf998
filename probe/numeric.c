/* numeric.c - exact test data for the all-reduce check (see numeric.h). */
#include "numeric.h"

#include <math.h>
#include <string.h>

int numeric_max_value(int nranks)
{
	int maxv;

	if (nranks < 1 || nranks > NUMERIC_EXACT_LIMIT)
		return 0;
	maxv = NUMERIC_EXACT_LIMIT / nranks;
	/* Four levels are plenty to tell contributions apart; more only makes sums big. */
	return maxv > 3 ? 3 : maxv;
}

int numeric_input(int rank, size_t slice, size_t i, int maxv)
{
	/* A hash, not a stride pattern: with strides the sum over ranks can come out the
	 * same for every element (e.g. 3r mod 4 over 8 ranks), and a misplaced or
	 * swapped block would then go unnoticed. */
	uint64_t h = (uint64_t)i * 0x9e3779b97f4a7c15u;

	h ^= ((uint64_t)rank + 1) * 0xbf58476d1ce4e5b9u;
	h ^= ((uint64_t)slice + 1) * 0x94d049bb133111ebu;
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9u;
	h ^= h >> 29;
	return (int)(h % (uint64_t)(maxv + 1));
}

uint16_t numeric_bf16_from_int(int v)
{
	float f = (float)v;
	uint32_t bits;

	/* Small integers have at most 8 significant bits: the low half is zero, so
	 * truncation is exact. */
	memcpy(&bits, &f, sizeof bits);
	return (uint16_t)(bits >> 16);
}

uint16_t numeric_f16_from_int(int v)
{
	uint16_t sign = 0;
	unsigned mag, m, e = 0;

	if (v == 0)
		return 0;
	if (v < 0) {
		sign = 0x8000;
		v = -v;
	}
	mag = (unsigned)v;
	while ((mag >> e) > 1)
		e++;
	/* value = 2^e * (1 + m / 1024); exact while e <= 10 or the low bits are zero. */
	m = e >= 10 ? (mag >> (e - 10)) & 0x3ffu : (mag << (10 - e)) & 0x3ffu;
	return (uint16_t)(sign | ((e + 15u) << 10) | m);
}

double numeric_bf16_to_double(uint16_t bits)
{
	uint32_t u = (uint32_t)bits << 16;
	float f;

	memcpy(&f, &u, sizeof f);
	return (double)f;
}

double numeric_f16_to_double(uint16_t bits)
{
	int sign = bits & 0x8000 ? -1 : 1;
	int e = (bits >> 10) & 0x1f;
	int m = bits & 0x3ff;

	if (e == 0)
		return sign * ldexp((double)m, -24);
	if (e == 31)
		return m ? NAN : sign * INFINITY;
	return sign * ldexp((double)(m + 1024), e - 25);
}

void numeric_fill(void *dst, enum proto_dtype d, int rank, size_t slice, size_t count, int maxv)
{
	for (size_t i = 0; i < count; i++) {
		int v = numeric_input(rank, slice, i, maxv);

		if (d == PROTO_DTYPE_F32) {
			float f = (float)v;

			memcpy((char *)dst + i * 4, &f, 4);
		} else {
			uint16_t b = d == PROTO_DTYPE_BF16 ? numeric_bf16_from_int(v)
			                                   : numeric_f16_from_int(v);

			memcpy((char *)dst + i * 2, &b, 2);
		}
	}
}

size_t numeric_check(const void *got, enum proto_dtype d, int nranks, size_t slice,
                     size_t count, int maxv, double *expected, double *seen)
{
	for (size_t i = 0; i < count; i++) {
		int want = 0;
		double have;

		for (int r = 0; r < nranks; r++)
			want += numeric_input(r, slice, i, maxv);
		if (d == PROTO_DTYPE_F32) {
			float f;

			memcpy(&f, (const char *)got + i * 4, 4);
			have = (double)f;
		} else {
			uint16_t b;

			memcpy(&b, (const char *)got + i * 2, 2);
			have = d == PROTO_DTYPE_BF16 ? numeric_bf16_to_double(b)
			                             : numeric_f16_to_double(b);
		}
		/* Exact comparison on purpose: every partial sum is a representable integer,
		 * so any difference is a wrong answer, not rounding. NaN fails too. */
		if (!(have == (double)want)) {
			*expected = want;
			*seen = have;
			return i;
		}
	}
	return (size_t)-1;
}
