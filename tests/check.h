/* check.h - the tiny assertion macros every C unit test uses: on failure they print
 * file:line, the expression and the values, count the failure and carry on, so one
 * run shows every broken expectation. main() returns check_status(). */
#ifndef NCCLTUNE_TEST_CHECK_H
#define NCCLTUNE_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(cond) do { if (!(cond)) { check_failures++; \
	fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_INT(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); if (a_ != b_) { \
	check_failures++; fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", \
	__FILE__, __LINE__, #a, #b, a_, b_); } } while (0)
#define CHECK_STR(a, b) do { const char *a_ = (a), *b_ = (b); \
	if (!a_ || !b_ || strcmp(a_, b_) != 0) { check_failures++; \
	fprintf(stderr, "%s:%d: %s == %s failed:\n  got:  %s\n  want: %s\n", __FILE__, __LINE__, \
	#a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); } } while (0)
#define CHECK_CONTAINS(hay, needle) do { const char *h_ = (hay), *n_ = (needle); \
	if (!h_ || !strstr(h_, n_)) { check_failures++; \
	fprintf(stderr, "%s:%d: '%s' does not contain '%s'\n", __FILE__, __LINE__, \
	h_ ? h_ : "(null)", n_); } } while (0)
#define CHECK_NEAR(a, b, tol) do { double a_ = (a), b_ = (b); \
	if (!(fabs(a_ - b_) <= (tol))) { check_failures++; \
	fprintf(stderr, "%s:%d: %s ~ %s failed: %.10g vs %.10g (tol %g)\n", __FILE__, __LINE__, \
	#a, #b, a_, b_, (double)(tol)); } } while (0)

static inline int check_status(void)
{
	if (check_failures)
		fprintf(stderr, "%d check(s) failed\n", check_failures);
	return check_failures ? 1 : 0;
}

#endif
