/* numeric.h - the probe's test data: small integers per rank whose sum is exact in bf16,
 * f16 and f32 whatever order NCCL adds them in, written as host-side bit patterns (the
 * probe has no kernels of its own), and the exact check of a result. */
#ifndef NCCLTUNE_PROBE_NUMERIC_H
#define NCCLTUNE_PROBE_NUMERIC_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

/* Largest integer every partial sum must stay at or below to be exact in all three
 * types: bf16 has 8 significant bits, so 256 is the last integer above which gaps
 * appear. */
#define NUMERIC_EXACT_LIMIT 256

/* The value range per element for nranks ranks: inputs are integers in [0, max] with
 * max * nranks <= NUMERIC_EXACT_LIMIT. Returns max (>= 1), or 0 when nranks is too large
 * for any exact pattern (> 256). Can't fail otherwise. */
int numeric_max_value(int nranks);

/* Input element `i` of slice `slice` on `rank`: an integer in [0, maxv], a hash of all
 * three, so that a dropped, doubled or misplaced contribution changes the sum. */
int numeric_input(int rank, size_t slice, size_t i, int maxv);

/* Fill `count` elements of dtype d at `dst` (host memory) with rank's inputs for
 * `slice`. Can't fail. */
void numeric_fill(void *dst, enum proto_dtype d, int rank, size_t slice, size_t count, int maxv);

/* Compare `count` elements of dtype d at `got` (host copy of a result) with the exact
 * sum over nranks ranks for `slice`. Returns the index of the first mismatch, or
 * (size_t)-1 when all match; on a mismatch *expected and *seen hold the values. */
size_t numeric_check(const void *got, enum proto_dtype d, int nranks, size_t slice,
                     size_t count, int maxv, double *expected, double *seen);

/* Exact conversions for the integers used here (|v| <= 65504 for f16). */
uint16_t numeric_bf16_from_int(int v);
uint16_t numeric_f16_from_int(int v);
double numeric_bf16_to_double(uint16_t bits);
double numeric_f16_to_double(uint16_t bits);

#endif
