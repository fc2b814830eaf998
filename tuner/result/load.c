/* load.c - load a session folder into a struct summary: results.json read strictly
 * through common/jsonread (one table per object), the journal's runs when asked
 * (runs.c), and the summary's destruction. NCCL variable names and values are checked
 * with common/ncclvars (read.c).
 *
 * Everything an export emits comes through here, so this file is where a hostile or
 * corrupt results file is stopped: each field is type-checked, numbers must be finite
 * and in range, keys must be known and unique, and a tuned value must be one NCCL would
 * parse the same way we read it (e.g. "010" is refused: NCCL reads it as octal 8). */
#include "result/read.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsutil.h"
#include "jsonread.h"
#include "proto.h"

#define BYTES_MAX 1099511627776.0

/* snprintf that truncates silently: paths may be cut, never overflow. */
static void cut(char *dst, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void cut(char *dst, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dst, len, fmt, ap);
	va_end(ap);
}

/* A lower-case word (outcome, stage): [a-z_]+. */
static int lower_word(struct jr *r, const cJSON *v, void *dst)
{
	(void)dst;
	for (const char *q = v->valuestring; *q; q++)
		if (!(islower((unsigned char)*q) || *q == '_'))
			return jr_fail(r, "must be a lower-case word");
	return 0;
}

static void env_free(struct summary_env *env)
{
	free(env->v);
	env->v = NULL;
	env->n = 0;
}

/* ---- results.json: the parts ---- */

/* [low, high] within [0, max], when present (v may be NULL or null). */
static const struct jr_field ci_bound[] = {
	{"", JR_NUMBER, 0, 0, SUMMARY_OBJECTIVE_MAX, NULL, JR_KEEP, 0, 0, NULL},
	{"", JR_NUMBER, 0, 0, 1e6, NULL, JR_KEEP, 0, 0, NULL},
};

struct ci { const struct jr_field *bound; };

static int check_bound(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	const struct ci *c = ctx;

	(void)i;
	return jr_check(r, v, c->bound, NULL) < 0 ? -1 : 0;
}

static int parse_ci(struct jr *r, const char *key, const cJSON *v, bool ratio, bool *has,
                    double *lo, double *hi)
{
	struct ci c = {&ci_bound[ratio]};
	int rc;

	*has = false;
	*lo = *hi = NAN;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (jr_push_key(r, key) < 0)
		return -1;
	rc = jr_each(r, v, 2, check_bound, &c);
	if (rc == 0 && cJSON_GetArraySize(v) != 2)
		rc = jr_fail(r, "expected [low, high]");
	if (rc == 0 && v->child->valuedouble > v->child->next->valuedouble) {
		char a[32], b[32];

		rc = jr_fail(r, "low %s is above high %s", jr_number(v->child->valuedouble, a, 32),
		             jr_number(v->child->next->valuedouble, b, 32));
	}
	jr_pop(r);
	if (rc < 0)
		return -1;
	*has = true;
	*lo = v->child->valuedouble;
	*hi = v->child->next->valuedouble;
	return 0;
}

/* baseline, best, top[i], and (with more keys) tries[i]. */
struct mdoc {
	const cJSON *env, *ci, *per_size, *rules, *ratio, *tuned, *step, *server;
	double objective;
	int repeats;
	bool in_space;
	const char *outcome;
};

#define M(f) offsetof(struct mdoc, f)
#define MEASURE_FIELDS(objective_flags) \
	{"env", JR_OBJECT, JR_REQUIRED, 0, SUMMARY_ENV_MAX, NULL, JR_ITEM, M(env), 0, NULL}, \
	{"objective_us", JR_NUMBER | (objective_flags ? 0 : JR_NULL), objective_flags, 0, \
	 SUMMARY_OBJECTIVE_MAX, NULL, JR_DOUBLE, M(objective), 0, NULL}, \
	{"ci95_us", JR_ARRAY | JR_NULL, 0, 0, 0, NULL, JR_ITEM, M(ci), 0, NULL}, \
	{"repeats", JR_NUMBER | JR_NULL, JR_INTEGER, 0, 1000000, NULL, JR_INT, M(repeats), 0, NULL}

/* per_size and rules are read for best only; elsewhere they are allowed, not looked at. */
static const struct jr_field measure_fields[] = {
	MEASURE_FIELDS(JR_REQUIRED),
	{"per_size", JR_ANY, JR_CONTROL, 0, 1e9, NULL, JR_ITEM, M(per_size), 0, NULL},
	{"rules", JR_ANY, JR_CONTROL, 0, 1e9, NULL, JR_ITEM, M(rules), 0, NULL},
	{"step", JR_OBJECT, 0, 0, 0, NULL, JR_ITEM, M(step), 0, NULL},
	{"server", JR_OBJECT, 0, 0, 0, NULL, JR_ITEM, M(server), 0, NULL},
	JR_END,
};

static int parse_measure(struct jr *r, const cJSON *o, enum summary_env_check mode,
                         struct summary_measure *m, struct mdoc *d)
{
	memset(d, 0, sizeof(*d));
	if (jr_dispatch(r, o, measure_fields, false, d, NULL) < 0)
		return -1;
	m->objective_us = d->objective;
	m->repeats = d->repeats;
	if (parse_ci(r, "ci95_us", d->ci, false, &m->has_ci, &m->ci_lo, &m->ci_hi) < 0 ||
	    summary_read_under(r, "env", mode == SUMMARY_ENV_STRICT ? summary_read_env_strict : summary_read_env_lenient, d->env,
	          &m->env) < 0 ||
	    summary_read_extras(r, d->step, d->server, m) < 0)
		return -1;
	m->present = true;
	return 0;
}

static int take_baseline(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;
	struct mdoc d;

	return parse_measure(r, v, SUMMARY_ENV_LENIENT, &s->baseline, &d);
}

#define P(f) offsetof(struct summary_size, f)

static const struct jr_field size_fields[] = {
	{"bytes", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, BYTES_MAX, NULL, JR_U64, P(bytes), 0,
	 NULL},
	{"us", JR_NUMBER, JR_REQUIRED, 0, SUMMARY_OBJECTIVE_MAX, NULL, JR_DOUBLE, P(us), 0, NULL},
	JR_END,
};

static int take_size(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct summary *s = ctx;

	s->nsizes = i + 1;
	return jr_dispatch(r, v, size_fields, false, &s->sizes[i], NULL);
}

static const struct jr_field per_size_field = {
	"", JR_ARRAY | JR_NULL, 0, 0, PROTO_MAX_SIZES, NULL, JR_KEEP, 0, 0, NULL,
};

static int take_per_size(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;
	int rc = jr_check(r, v, &per_size_field, NULL);

	if (rc <= 0 || !v->child)
		return rc;
	s->sizes = calloc((size_t)cJSON_GetArraySize(v), sizeof(s->sizes[0]));
	if (!s->sizes)
		return jr_fail(r, "out of memory");
	return jr_each(r, v, PROTO_MAX_SIZES, take_size, s);
}

static int take_best(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;
	struct mdoc d;

	if (parse_measure(r, v, SUMMARY_ENV_STRICT, &s->best, &d) < 0)
		return -1;
	if (d.rules && summary_read_under(r, "rules", summary_read_rules, d.rules, s) < 0)
		return -1;
	return d.per_size ? summary_read_under(r, "per_size", take_per_size, d.per_size, s) : 0;
}

static int take_top1(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct summary *s = ctx;
	struct mdoc d;

	s->ntop = i + 1;   /* so that destroy frees the env parsed so far */
	return parse_measure(r, v, SUMMARY_ENV_LENIENT, &s->top[i], &d);
}

static int take_top(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;

	if (!v->child)
		return 0;
	s->top = calloc((size_t)cJSON_GetArraySize(v), sizeof(s->top[0]));
	if (!s->top)
		return jr_fail(r, "out of memory");
	return jr_each(r, v, 1000, take_top1, s);
}

/* {"ratio": r, "ci95": [lo, hi]} of a try, when present. */
struct ratio { double r; const cJSON *ci; };

static const struct jr_field ratio_fields[] = {
	{"ratio", JR_NUMBER, JR_REQUIRED, 0, 1e6, NULL, JR_DOUBLE, offsetof(struct ratio, r), 0,
	 NULL},
	{"ci95", JR_ARRAY | JR_NULL, 0, 0, 0, NULL, JR_ITEM, offsetof(struct ratio, ci), 0, NULL},
	JR_END,
};

static int parse_ratio(struct jr *r, const char *key, const cJSON *v, bool *has, double *x,
                       double *lo, double *hi)
{
	struct ratio q = {NAN, NULL};
	bool have;
	int rc;

	*has = false;
	*x = *lo = *hi = NAN;
	if (!v)
		return 0;
	if (jr_push_key(r, key) < 0)
		return -1;
	rc = jr_dispatch(r, v, ratio_fields, false, &q, NULL);
	if (rc == 0)
		rc = parse_ci(r, "ci95", q.ci, true, &have, lo, hi);
	jr_pop(r);
	if (rc < 0)
		return -1;
	*has = true;
	*x = q.r;
	return 0;
}

static const struct jr_field try_fields[] = {
	MEASURE_FIELDS(0),
	{"in_space", JR_BOOL, 0, 0, 0, NULL, JR_BOOLEAN, M(in_space), 0, NULL},
	{"outcome", JR_STRING, JR_REQUIRED, 0, 16, NULL, JR_STR, M(outcome), 0, lower_word},
	{"ratio_vs_baseline", JR_OBJECT | JR_NULL, 0, 0, 0, NULL, JR_ITEM, M(ratio), 0, NULL},
	{"tuned_vs_try", JR_OBJECT | JR_NULL, 0, 0, 0, NULL, JR_ITEM, M(tuned), 0, NULL},
	JR_END,
};

/* tries[i]: its env is checked as strictly as best's: an off-space try may be the best,
 * and its values came from the command line. */
static int take_try(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct summary *s = ctx;
	struct summary_try *t = &s->tries[i];
	struct mdoc d;
	uint64_t seen;

	memset(&d, 0, sizeof(d));
	s->ntries = i + 1;
	if (jr_dispatch(r, v, try_fields, false, &d, &seen) < 0)
		return -1;
	t->m.present = (seen >> 1) & 1;   /* objective_us */
	t->m.objective_us = d.objective;
	t->m.repeats = d.repeats;
	t->in_space = d.in_space;
	t->outcome = d.outcome;
	if (parse_ci(r, "ci95_us", d.ci, false, &t->m.has_ci, &t->m.ci_lo, &t->m.ci_hi) < 0 ||
	    parse_ratio(r, "ratio_vs_baseline", d.ratio, &t->has_ratio, &t->ratio, &t->ratio_lo,
	                &t->ratio_hi) < 0 ||
	    parse_ratio(r, "tuned_vs_try", d.tuned, &t->has_tuned, &t->tuned, &t->tuned_lo,
	                &t->tuned_hi) < 0)
		return -1;
	return summary_read_under(r, "env", summary_read_env_strict, d.env, &t->m.env);
}

static int take_tries(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;

	if (!v->child)
		return 0;
	s->tries = calloc((size_t)cJSON_GetArraySize(v), sizeof(s->tries[0]));
	if (!s->tries)
		return jr_fail(r, "out of memory");
	return jr_each(r, v, 64, take_try, s);
}

#define FL(f) offsetof(struct summary_failure, f)

static const struct jr_field failure_fields[] = {
	{"env", JR_OBJECT, JR_REQUIRED, 0, SUMMARY_ENV_MAX, NULL, JR_KEEP, 0, 0, NULL},
	{"stage", JR_STRING, JR_REQUIRED, 0, 16, NULL, JR_STR, FL(stage), 0, lower_word},
	{"count", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, 1e9, NULL, JR_LONG, FL(count), 0, NULL},
	{"choice", JR_STRING, 0, 1, 1024, NULL, JR_STR, FL(choice), 0, NULL},
	{"error", JR_STRING, 0, 1, 1024, NULL, JR_STR, FL(error), 0, NULL},
	JR_END,
};

static int take_failure(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct summary *s = ctx;
	struct summary_failure *f = &s->failures[i];

	s->nfailures = i + 1;
	if (jr_dispatch(r, v, failure_fields, false, f, NULL) < 0)
		return -1;
	return summary_read_under(r, "env", summary_read_env_lenient, cJSON_GetObjectItemCaseSensitive(v, "env"),
	             &f->env);
}

static int take_failures(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;

	if (!v->child)
		return 0;
	s->failures = calloc((size_t)cJSON_GetArraySize(v), sizeof(s->failures[0]));
	if (!s->failures)
		return jr_fail(r, "out of memory");
	return jr_each(r, v, 100000, take_failure, s);
}

static const struct jr_field pruned_fields[] = {
	{"when", JR_OBJECT, JR_REQUIRED, 0, SUMMARY_ENV_MAX, NULL, JR_KEEP, 0, 0, NULL},
	{"reason", JR_STRING, JR_REQUIRED, 0, 1024, NULL, JR_STR,
	 offsetof(struct summary_pruned, reason), 0, NULL},
	JR_END,
};

static int take_pruned1(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct summary *s = ctx;

	s->npruned = i + 1;
	if (jr_dispatch(r, v, pruned_fields, false, &s->pruned[i], NULL) < 0)
		return -1;
	return summary_read_under(r, "when", summary_read_env_when, cJSON_GetObjectItemCaseSensitive(v, "when"),
	             &s->pruned[i].when);
}

static int take_pruned(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;

	if (!v->child)
		return 0;
	s->pruned = calloc((size_t)cJSON_GetArraySize(v), sizeof(s->pruned[0]));
	if (!s->pruned)
		return jr_fail(r, "out of memory");
	return jr_each(r, v, 100000, take_pruned1, s);
}

/* ---- results.json: the top level ---- */

#define S(f) offsetof(struct summary, f)

/* tool.name, tool.version and created reach every export's header (and the first
 * comment lines of a Python file decide its source encoding, PEP 263): each is held to
 * the one shape nccltune writes. */
static const char *const tool_names[] = {"nccltune", NULL};

/* A version string: digits, up to three ".digits", then an optional suffix of
 * [0-9A-Za-z.+~-] that starts with '-', '+' or '~' ("0.1.0", "1.2.3-rc1+git.abc"). */
static int version_word(struct jr *r, const cJSON *v, void *dst)
{
	const char *p = v->valuestring;
	int parts = 0;

	(void)dst;
	for (;;) {
		if (!isdigit((unsigned char)*p))
			return jr_fail(r, "not a version string (digits and dots, e.g. 0.1.0)");
		while (isdigit((unsigned char)*p))
			p++;
		if (++parts == 4 || *p != '.')
			break;
		p++;
	}
	if (*p && !strchr("-+~", *p))
		return jr_fail(r, "not a version string (digits and dots, e.g. 0.1.0)");
	for (; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr(".+~-", *p))
			return jr_fail(r, "not a version string: character 0x%02x",
			               (unsigned char)*p);
	return 0;
}

/* n digits at *p into *out, advancing *p; false when any is not a digit. */
static bool digits(const char **p, int n, int *out)
{
	*out = 0;
	for (int i = 0; i < n; i++, (*p)++) {
		if (!isdigit((unsigned char)**p))
			return false;
		*out = *out * 10 + (**p - '0');
	}
	return true;
}

static bool take_char(const char **p, const char *set)
{
	if (!**p || !strchr(set, **p))
		return false;
	(*p)++;
	return true;
}

/* An RFC 3339 date-time (section 5.6): YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM), with
 * real calendar days and a leap second allowed. */
static int rfc3339_time(struct jr *r, const cJSON *v, void *dst)
{
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	const char *p = v->valuestring;
	int y, mo, d, h, mi, sec, oh = 0, om = 0;
	bool ok;

	(void)dst;
	ok = digits(&p, 4, &y) && take_char(&p, "-") && digits(&p, 2, &mo) &&
	     take_char(&p, "-") && digits(&p, 2, &d) && take_char(&p, "Tt") &&
	     digits(&p, 2, &h) && take_char(&p, ":") && digits(&p, 2, &mi) &&
	     take_char(&p, ":") && digits(&p, 2, &sec);
	if (ok && *p == '.') {
		int n = 0;

		for (p++; isdigit((unsigned char)*p) && n < 9; p++)
			n++;
		ok = n > 0;
	}
	if (ok && !take_char(&p, "Zz"))
		ok = take_char(&p, "+-") && digits(&p, 2, &oh) && take_char(&p, ":") &&
		     digits(&p, 2, &om);
	ok = ok && *p == '\0' && mo >= 1 && mo <= 12 && d >= 1 && d <= mdays[mo - 1] &&
	     !(mo == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))) &&
	     h <= 23 && mi <= 59 && sec <= 60 && oh <= 23 && om <= 59;
	if (!ok)
		return jr_fail(r, "not an RFC 3339 time (e.g. 2026-11-29T12:10:00Z)");
	return 0;
}

static const struct jr_field tool_fields[] = {
	{"name", JR_STRING | JR_NULL, 0, 0, 64, tool_names, JR_STR, S(tool_name), 0, NULL},
	{"version", JR_STRING | JR_NULL, 0, 0, 64, NULL, JR_STR, S(tool_version), 0,
	 version_word},
	JR_END,
};

static int take_tool(struct jr *r, const cJSON *v, void *dst)
{
	return jr_dispatch(r, v, tool_fields, false, dst, NULL);
}

static int take_fingerprint(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;

	return summary_read_fingerprint(r, v, &s->fp);
}

static const struct jr_field gain_fields[] = {
	{"ratio", JR_NUMBER, JR_REQUIRED, 0, 1e6, NULL, JR_DOUBLE, S(gain), 0, NULL},
	{"ci95", JR_ARRAY | JR_NULL, 0, 0, 0, NULL, JR_KEEP, 0, 0, NULL},
	JR_END,
};

static int take_gain(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;
	bool have;

	if (jr_dispatch(r, v, gain_fields, false, s, NULL) < 0 ||
	    parse_ci(r, "ci95", cJSON_GetObjectItemCaseSensitive(v, "ci95"), true, &have,
	             &s->gain_lo, &s->gain_hi) < 0)
		return -1;
	s->has_gain = true;
	return 0;
}

/* optional: results.json files written before nccltune recorded it have none */
static const struct jr_field noise_fields[] = {
	{"run_sd", JR_NUMBER, JR_REQUIRED, 0, 10, NULL, JR_DOUBLE, S(noise_sd), 0, NULL},
	{"configs", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, 1e6, NULL, JR_LONG, S(noise_configs), 0,
	 NULL},
	{"dof", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 2, 1e9, NULL, JR_LONG, S(noise_dof), 0, NULL},
	JR_END,
};

static int take_noise(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;

	if (jr_dispatch(r, v, noise_fields, false, s, NULL) < 0)
		return -1;
	s->has_noise = true;
	return 0;
}

static int take_pinned(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;

	return summary_read_env_lenient(r, v, &s->pinned);
}

static const char *const result_schema[] = {"nccltune-result/1", NULL};
static const char *const sources[] = {"measured", "model", NULL};
/* optional (older files have none): no gain is stated for an unmeasured best */
static const char *const verdicts[] = {SUMMARY_VERDICT_OK, SUMMARY_UNMEASURED, SUMMARY_VERDICT_UNPROVEN, SUMMARY_VERDICT_NONE,
                                       NULL};

enum { ROOT_SEED = 9 };   /* index of "seed" below */

static const struct jr_field root_fields[] = {
	{"schema", JR_STRING, JR_REQUIRED, 0, 64, result_schema, JR_KEEP, 0, 0, NULL},
	{"tool", JR_OBJECT | JR_NULL, 0, 0, 0, NULL, JR_KEEP, 0, 0, take_tool},
	{"created", JR_STRING | JR_NULL, 0, 0, 64, NULL, JR_STR, S(created), 0, rfc3339_time},
	{"fingerprint", JR_OBJECT | JR_NULL, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0,
	 take_fingerprint},
	{"source", JR_STRING, JR_REQUIRED, 0, 16, sources, JR_STR, S(source), 0, NULL},
	{"model", JR_STRING | JR_NULL, 0, 0, 64, NULL, JR_STR, S(model), 0, NULL},
	{"workload", JR_OBJECT, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, summary_read_workload},
	{"strategy", JR_STRING | JR_NULL, 0, 0, 32, NULL, JR_STR, S(strategy), 0, NULL},
	{"budget", JR_NUMBER | JR_NULL, JR_INTEGER, 0, 1e9, NULL, JR_LONG, S(budget), 0, NULL},
	[ROOT_SEED] = {"seed", JR_NUMBER | JR_NULL, JR_INTEGER, 0, 18446744073709551615.0, NULL,
	               JR_DOUBLE, S(seed), 0, NULL},
	{"pinned", JR_OBJECT | JR_NULL, 0, 0, SUMMARY_ENV_MAX, NULL, JR_KEEP, 0, 0, take_pinned},
	{"server", JR_OBJECT | JR_NULL, 0, 0, 0, NULL, JR_KEEP, 0, 0, summary_read_server},
	{"baseline", JR_OBJECT | JR_NULL, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, take_baseline},
	{"best", JR_OBJECT | JR_NULL, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, take_best},
	{"gain", JR_OBJECT | JR_NULL, 0, 0, 0, NULL, JR_KEEP, 0, 0, take_gain},
	{"noise", JR_OBJECT | JR_NULL, 0, 0, 0, NULL, JR_KEEP, 0, 0, take_noise},
	{"top", JR_ARRAY | JR_NULL, 0, 0, 1000, NULL, JR_KEEP, 0, 0, take_top},
	{"evaluations", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 0, 1e9, NULL, JR_LONG,
	 S(evaluations), 0, NULL},
	{"failures", JR_ARRAY | JR_NULL, 0, 0, 100000, NULL, JR_KEEP, 0, 0, take_failures},
	{"pruned", JR_ARRAY | JR_NULL, 0, 0, 100000, NULL, JR_KEEP, 0, 0, take_pruned},
	{"tries", JR_ARRAY, 0, 0, 64, NULL, JR_KEEP, 0, 0, take_tries},
	{"verdict", JR_STRING | JR_NULL, 0, 0, 64, verdicts, JR_STR, S(verdict), 0, NULL},
	{"per_size", JR_ARRAY | JR_NULL, 0, 0, 0, NULL, JR_KEEP, 0, 0, summary_read_per_size},
	{"guards", JR_OBJECT | JR_NULL, 0, 0, 0, NULL, JR_KEEP, 0, 0, summary_read_guards},
	{"ablation", JR_ARRAY | JR_NULL, 0, 0, 64, NULL, JR_KEEP, 0, 0, summary_read_ablation},
	{"budget_needed", JR_NUMBER | JR_NULL, JR_INTEGER, 2, 1e6, NULL, JR_LONG, S(budget_needed),
	 0, NULL},
	JR_END,
};

static int parse_root(struct jr *r, const cJSON *root, struct summary *s)
{
	uint64_t seen;

	if (jr_dispatch(r, root, root_fields, false, s, &seen) < 0)
		return -1;
	s->has_seed = (seen >> ROOT_SEED) & 1;
	if (strcmp(s->source, "model") == 0 && !s->model) {
		jr_push_key(r, "model");
		return jr_fail(r, "missing (source is \"model\": the model's name is required)");
	}
	if (strcmp(s->source, "measured") == 0)
		s->model = NULL;
	return 0;
}

struct summary *summary_create(void)
{
	struct summary *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->fp.gpu_count = -1;
	s->budget = -1;
	s->budget_needed = -1;
	s->gain_lo = s->gain_hi = NAN;
	return s;
}

int summary_parse(const char *text, size_t len, const char *origin, struct summary **out,
                  char *err, size_t errlen)
{
	struct summary *s;
	struct jr r;

	*out = NULL;
	s = summary_create();
	if (!s)
		return fs_errf(err, errlen, "%s: out of memory", origin);
	cut(s->origin, sizeof(s->origin), "%s", origin);
	jr_init(&r, s->origin, err, errlen);
	r.max_bytes = SUMMARY_RESULTS_MAX;
	s->doc = jr_parse(&r, text, len);
	if (!s->doc || parse_root(&r, s->doc, s) < 0) {
		summary_destroy(s);
		return -1;
	}
	*out = s;
	return 0;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Forget the runs of a journal that could not be read to the end. */
static void drop_runs(struct summary *s)
{
	for (size_t i = 0; i < s->nruns; i++)
		env_free(&s->runs[i].env);
	free(s->runs);
	s->runs = NULL;
	s->nruns = 0;
	s->has_journal = false;
}

int summary_load(const char *path, unsigned flags, struct summary **out, char *err,
                 size_t errlen)
{
	char results[4200], jpath[4200];
	char *text = NULL;
	size_t len = 0;
	int rc = -1;

	*out = NULL;
	if (!path || !*path)
		return fs_errf(err, errlen, "no session folder or results.json given");
	if (is_dir(path)) {
		cut(results, sizeof(results), "%s/results.json", path);
		cut(jpath, sizeof(jpath), "%s/journal.jsonl", path);
		if (!exists(results) && (flags & SUMMARY_PARTIAL) && exists(jpath)) {
			struct summary *s = summary_create();

			if (!s)
				return fs_errf(err, errlen, "%s: out of memory", path);
			cut(s->origin, sizeof(s->origin), "%s", jpath);
			cut(s->dir, sizeof(s->dir), "%s", path);
			s->source = "measured";
			s->partial = true;
			if (summary_read_journal(s, jpath, err, errlen) < 0) {
				summary_destroy(s);
				return -1;
			}
			*out = s;
			return 0;
		}
		if (!exists(results)) {
			char cmd[2 * PATH_MAX];

			return fs_errf(err, errlen, "%s: no results.json in this folder: the session has "
			               "not finished (resume it with %s)", path,
			               summary_command(cmd, sizeof cmd, "run --resume", path));
		}
	} else {
		cut(results, sizeof(results), "%s", path);
		jpath[0] = '\0';
	}
	text = fs_read_file(results, SUMMARY_RESULTS_MAX, &len, err, errlen);
	if (!text)
		goto out;
	if (summary_parse(text, len, results, out, err, errlen) < 0)
		goto out;
	if (jpath[0])
		cut((*out)->dir, sizeof((*out)->dir), "%s", path);
	if (jpath[0] && (flags & (SUMMARY_JOURNAL | SUMMARY_JOURNAL_SOFT | SUMMARY_PARTIAL)) &&
	    exists(jpath)) {
		char jerr[sizeof((*out)->journal_error)];

		if (summary_read_journal(*out, jpath, jerr, sizeof(jerr)) < 0) {
			if (!(flags & SUMMARY_JOURNAL_SOFT)) {
				fs_errf(err, errlen, "%s", jerr);
				summary_destroy(*out);
				*out = NULL;
				goto out;
			}
			drop_runs(*out);
			cut((*out)->journal_error, sizeof((*out)->journal_error), "%s", jerr);
		}
	}
	rc = 0;
out:
	free(text);
	return rc;
}

void summary_destroy(struct summary *s)
{
	if (!s)
		return;
	summary_fingerprint_clear(&s->fp);
	free(s->workload.c);
	free(s->workload.guard);
	env_free(&s->pinned);
	env_free(&s->server_env);
	env_free(&s->baseline.env);
	env_free(&s->best.env);
	free(s->sizes);
	free(s->rules);
	summary_final_free(s);
	for (size_t i = 0; i < s->ntop; i++)
		env_free(&s->top[i].env);
	free(s->top);
	for (size_t i = 0; i < s->ntries; i++)
		env_free(&s->tries[i].m.env);
	free(s->tries);
	for (size_t i = 0; i < s->nfailures; i++)
		env_free(&s->failures[i].env);
	free(s->failures);
	for (size_t i = 0; i < s->npruned; i++)
		env_free(&s->pruned[i].when);
	free(s->pruned);
	for (size_t i = 0; i < s->nruns; i++)
		env_free(&s->runs[i].env);
	free(s->runs);
	for (size_t i = 0; s->probe_argv && s->probe_argv[i]; i++)
		free(s->probe_argv[i]);
	free(s->probe_argv);
	cJSON_Delete(s->jdoc);
	cJSON_Delete(s->kept);
	cJSON_Delete(s->doc);
	free(s);
}
