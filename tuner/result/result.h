/* result.h - the statistics of the end-of-session re-measurement and the results.json
 * document (docs/formats.md, "nccltune-result/1").
 *
 * Intervals: the final phase measures the baseline and each finalist in rounds
 * (B c1 c2 c3, B c1 c2 c3, ...), so drift of the machine hits both sides of a round
 * alike. The gain of a finalist is exp(mean of log(baseline_r / candidate_r)) over the
 * rounds r, with a 95% Student-t interval on that mean of log ratios; an objective's
 * interval is the t-interval of the mean of its repeats. No interval with one repeat.
 *
 * The document: one type (struct summary, summary.h), one writer (result_doc, write.c),
 * one reader (summary_load, load.c). */
#ifndef NCCLTUNE_RESULT_H
#define NCCLTUNE_RESULT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "result/summary.h"

#define RESULT_SCHEMA "nccltune-result/1"

/* Mean of x[0..n-1] and, for n >= 2, its 95% t-interval (lo, hi are NAN for n < 2).
 * n must be >= 1. Can't fail. */
void result_mean_ci(const double *x, size_t n, double *mean, double *lo, double *hi);

/* Paired gain of a candidate over the baseline from n rounds (base[i], cand[i] > 0):
 * ratio = exp(mean log(base/cand)); lo, hi its 95% interval (NAN for n < 2).
 * n must be >= 1. Can't fail. */
void result_paired_gain(const double *base, const double *cand, size_t n, double *ratio,
                        double *lo, double *hi);

/* results.json of s (summary.h: the one type of the file), in the format's key order
 * (docs/formats.md); what the loader reads back from it is s again. NULL when out of
 * memory. (write.c) */
cJSON *result_doc(const struct summary *s);

/* The same document as text, pretty-printed, with a newline at the end: the bytes of
 * results.json. The caller frees it. NULL when out of memory. */
char *result_text(const struct summary *s);

/* A summary to fill and write (the session's result): empty, absent figures as the
 * loader leaves them (summary_create). summary_destroy frees it, and what result_keep*
 * kept. NULL when out of memory. */
struct summary *result_new(void);
/* Keep part (which may be NULL) alive as long as s (any summary, a loaded one too):
 * returns it, or NULL (part deleted) when it is NULL or out of memory. */
cJSON *result_keep(struct summary *s, cJSON *part);
/* A copy of str (NULL: NULL) that lives as long as s; NULL when out of memory. */
const char *result_keep_string(struct summary *s, const char *str);
/* env from object obj ({"NAME": "value" or null}), obj kept (result_keep) and borrowed;
 * false (obj deleted) when obj is NULL or out of memory. env->v is replaced. */
bool result_keep_env(struct summary *s, cJSON *obj, struct summary_env *env);

/* Write s to dir/results.json atomically (result_text). Returns 0, or -1 with a message
 * naming the file. */
int result_write(const char *dir, const struct summary *s, char *err, size_t errlen);

#endif
