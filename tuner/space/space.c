/* space.c - the search space (nccltune-space/1): parsing and validation, constraints
 * and the encoding of levels for the surrogate. What a parsed space answers (its JSON
 * form, accessors, points: enumeration and rounding) is space_query.c.
 *
 * Variable names and values are checked against common/ncclvars (the one table of NCCL
 * variables): every name must look like NCCL_[A-Z0-9_]+; names in the table are
 * checked with their own value syntax; other names get a generic rule (1..255
 * characters from [A-Za-z0-9_.,:;^=+/@%-]) - except names within two edits of a known
 * one, which are rejected as typos ("did you mean NCCL_NTHREADS?"): a misspelt
 * variable is silently ignored by NCCL, which would make a whole session measure
 * nothing.
 *
 * A candidate sets only what the space names (params and fixed): NCCL_NVLS_ENABLE, for
 * one, is never set unless the user names it, and the default space does not. */
#include "space/space.h"
#include "space/space_impl.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fsutil.h"
#include "jsonread.h"
#include "ncclvars.h"

#define NAME_MAX_LEN NCCLVARS_NAME_MAX
/* Integers beyond 2^53 do not survive a JSON double. */
#define INT_LIMIT 9007199254740992.0
/* Spaces up to this many points are checked for "no point satisfies the constraints". */
#define EMPTY_CHECK_MAX (1u << 22)
/* Ordinal levels spanning at least this factor get a log scale (see param_coords). */
#define LOG_SCALE_RATIO 4.0

/* The comparison operators' text, indexed by enum cons_op. */
static const char *const op_text[] = {"<", "<=", "==", "!=", ">=", ">"};

/* The default space of docs/formats.md, parsed like any user file. */
static const char default_space_json[] =
	"{\"schema\": \"nccltune-space/1\", \"params\": {"
	"\"NCCL_PROTO\": {\"values\": [\"LL\", \"LL128\", \"Simple\", null]},"
	"\"NCCL_ALGO\": {\"values\": [\"Ring\", \"Tree\", null]},"
	"\"NCCL_MIN_NCHANNELS\": {\"int\": [1, 32]},"
	"\"NCCL_MAX_NCHANNELS\": {\"int\": [1, 32]},"
	"\"NCCL_BUFFSIZE\": {\"pow2\": [65536, 16777216]},"
	"\"NCCL_NTHREADS\": {\"values\": [64, 128, 256, 512, null]}},"
	"\"constraints\": [\"NCCL_MIN_NCHANNELS <= NCCL_MAX_NCHANNELS\"]}";

/* The default space of a session whose probe sweeps (docs/formats.md): algorithm,
 * protocol and CTAs per tuned size through nccltune's tuner plugin, never NCCL_ALGO or
 * NCCL_PROTO; buffer size and threads for the process. No channel pool: the rules'
 * CTAs choose channels per size, and a pool cut for the tuned size is process-wide (it
 * slowed the guard sizes on the PCIe model, so its default session recommended nothing).
 * Every variable has an unset level (null: NCCL's own default), so a recommendation need
 * not force a buffer size that buys nothing (issue 30); the buffer sizes are written out
 * as a value list for that. */
static const char default_per_size_json[] =
	"{\"schema\": \"nccltune-space/1\", \"per_size\": {"
	"\"algo\": {\"values\": [\"Ring\", \"Tree\", null]},"
	"\"proto\": {\"values\": [\"LL\", \"LL128\", \"Simple\", null]},"
	"\"ctas\": {\"values\": [1, 2, 4, 8, 16, null]}}, \"params\": {"
	"\"NCCL_BUFFSIZE\": {\"values\": [65536, 131072, 262144, 524288, 1048576,"
	" 2097152, 4194304, 8388608, 16777216, null]},"
	"\"NCCL_NTHREADS\": {\"values\": [64, 128, 256, 512, null]}}}";

/* ---- parsing ---- */

static void param_free(struct param *p)
{
	if (p->text) {
		for (size_t i = 0; i < p->n; i++)
			free(p->text[i]);
	}
	free(p->text);
	free(p->num);
	free(p->coord);
	memset(p, 0, sizeof *p);
}

void space_destroy(space *sp)
{
	if (!sp)
		return;
	for (size_t d = 0; d < sp->dims; d++)
		param_free(&sp->p[d]);
	for (size_t k = 0; k <= SPACE_RULE_CTAS; k++)
		param_free(&sp->tmpl[k]);
	for (size_t i = 0; i < sp->nfixed; i++) {
		free(sp->fixed_name[i]);
		free(sp->fixed_value[i]);
	}
	free(sp->fixed_name);
	free(sp->fixed_value);
	free(sp->cons);
	free(sp);
}

static int param_alloc(struct param *p, size_t n)
{
	p->n = n;
	p->text = calloc(n, sizeof *p->text);
	p->num = calloc(n, sizeof *p->num);
	p->coord = calloc(n, sizeof *p->coord);
	return p->text && p->num && p->coord ? 0 : -1;
}

/* Coordinates of ordinal levels in [0, 1], -1 for null; categorical levels are their
 * index. The scale is logarithmic when every set level is positive and the largest is
 * at least LOG_SCALE_RATIO times the smallest (buffer sizes, thread and channel
 * counts: going from 1 to 2 channels matters as much as from 16 to 32), linear
 * otherwise. */
static void param_coords(struct param *p)
{
	double lo = INFINITY, hi = -INFINITY;
	size_t nonnull = 0;
	bool logs;

	if (p->categorical) {
		for (size_t l = 0; l < p->n; l++)
			p->coord[l] = (double)l;
		return;
	}
	for (size_t l = 0; l < p->n; l++) {
		if (isnan(p->num[l]))
			continue;
		nonnull++;
		lo = p->num[l] < lo ? p->num[l] : lo;
		hi = p->num[l] > hi ? p->num[l] : hi;
	}
	logs = lo > 0 && hi >= LOG_SCALE_RATIO * lo;
	if (logs) {
		lo = log(lo);
		hi = log(hi);
	}
	for (size_t l = 0; l < p->n; l++) {
		if (isnan(p->num[l]))
			p->coord[l] = -1.0;
		else if (nonnull < 2 || hi <= lo)
			p->coord[l] = 0.0;
		else
			p->coord[l] = ((logs ? log(p->num[l]) : p->num[l]) - lo) / (hi - lo);
	}
}

/* One level's text: a per-size dimension's word or count (space_rule.c), else the value
 * syntax of the variable. *canon is what to store. Returns 0 or -1 with the reason. */
static int level_check(const struct param *p, const char *text, const char **canon,
                       char *why, size_t whylen)
{
	*canon = text;
	if (p->server)
		return strcmp(text, SPACE_SYMMETRIC_ON) == 0 ? 0
		       : fs_errf(why, whylen, "'%.32s': %s levels are null (off) and \"%s\"",
		                 text, SPACE_SYMMETRIC, SPACE_SYMMETRIC_ON);
	if (p->rule != SPACE_RULE_NONE)
		return space_rule_value_check(p->rule, text, canon, why, whylen);
	return ncclvars_value_check(p->var, text, why, whylen);
}

/* A level given as a JSON number: an integer a double holds exactly. */
static const struct jr_field level_field = {
	"", JR_STRING | JR_NUMBER | JR_NULL, JR_INTEGER, -INT_LIMIT, INT_LIMIT, NULL, JR_KEEP,
	0, 0, NULL,
};

struct level_count { size_t nstr, nnum; };

static int count_level(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct level_count *c = ctx;

	(void)i;
	if (jr_check(r, v, &level_field, NULL) < 0)
		return -1;
	c->nstr += cJSON_IsString(v);
	c->nnum += cJSON_IsNumber(v);
	return 0;
}

/* One level of a values list, after count_level checked every type. */
static int take_level(struct jr *r, const cJSON *v, size_t l, void *ctx)
{
	struct param *p = ctx;
	char why[512], buf[32];
	const char *text = NULL;

	p->num[l] = NAN;
	if (cJSON_IsString(v)) {
		text = v->valuestring;
	} else if (cJSON_IsNumber(v)) {
		long long n = (long long)v->valuedouble;
		double prev = NAN;

		for (size_t k = l; k-- > 0 && isnan(prev);)
			prev = p->num[k];
		if (!isnan(prev) && (double)n <= prev)
			return jr_fail(r, "numbers must be in increasing order (%lld after %.0f)", n,
			               prev);
		p->num[l] = (double)n;
		snprintf(buf, sizeof buf, "%lld", n);
		text = buf;
	}
	if (text) {
		if (level_check(p, text, &text, why, sizeof why) < 0)
			return jr_fail(r, "%s", why);
		p->text[l] = strdup(text);
		if (!p->text[l])
			return jr_fail(r, "out of memory");
	}
	for (size_t k = 0; k < l; k++)
		if (ncclvars_same_value(p->var, p->text[k], p->text[l]))
			return jr_fail(r, "repeats values[%zu]", k);
	return 0;
}

static int parse_values(struct jr *r, struct param *p, const cJSON *list)
{
	struct level_count c = {0, 0};
	size_t n = (size_t)cJSON_GetArraySize(list);

	if (n == 0)
		return jr_fail(r, "empty list");
	if (jr_each(r, list, SPACE_MAX_LEVELS, count_level, &c) < 0)
		return -1;
	if (c.nstr && c.nnum)
		return jr_fail(r, "mixes strings and numbers (strings are categories, numbers "
		               "ordered levels)");
	if (c.nstr + c.nnum == 0)
		return jr_fail(r, "only null (nothing to search)");
	if (param_alloc(p, n) < 0)
		return jr_fail(r, "out of memory");
	p->kind = KIND_VALUES;
	p->categorical = c.nstr > 0;
	return jr_each(r, list, SPACE_MAX_LEVELS, take_level, p);
}

static const struct jr_field bound_field = {
	"", JR_NUMBER, JR_INTEGER, -INT_LIMIT, INT_LIMIT, NULL, JR_KEEP, 0, 0, NULL,
};

static int check_bound(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	(void)i;
	(void)ctx;
	return jr_check(r, v, &bound_field, NULL) < 0 ? -1 : 0;
}

/* "int": [lo, hi] every integer; "pow2": [lo, hi] the powers of two. */
static int parse_range(struct jr *r, struct param *p, const cJSON *range, bool pow2)
{
	long long lo, hi;
	size_t n = 0, l = 0;
	char why[512], buf[32];

	if (jr_each(r, range, 2, check_bound, NULL) < 0)
		return -1;
	if (cJSON_GetArraySize(range) != 2)
		return jr_fail(r, "expected [lo, hi], two integers");
	lo = (long long)range->child->valuedouble;
	hi = (long long)range->child->next->valuedouble;
	if (lo > hi)
		return jr_fail(r, "inverted range [%lld, %lld]", lo, hi);
	if (pow2) {
		for (long long v = 1; v <= hi && v > 0; v *= 2)
			n += v >= lo;
		if (n == 0)
			return jr_fail(r, "no power of two in [%lld, %lld]", lo, hi);
	} else {
		if ((double)hi - (double)lo + 1 > SPACE_MAX_LEVELS)
			return jr_fail(r, "%.0f levels, at most %d", (double)hi - (double)lo + 1,
			               SPACE_MAX_LEVELS);
		n = (size_t)(hi - lo + 1);
	}
	if (param_alloc(p, n) < 0)
		return jr_fail(r, "out of memory");
	p->kind = pow2 ? KIND_POW2 : KIND_INT;
	p->lo = lo;
	p->hi = hi;
	for (long long v = pow2 ? 1 : lo; v <= hi; v = pow2 ? v * 2 : v + 1) {
		if (pow2 && v < lo)
			continue;
		const char *canon;

		snprintf(buf, sizeof buf, "%lld", v);
		if (level_check(p, buf, &canon, why, sizeof why) < 0)
			return jr_fail(r, "%s", why);
		p->num[l] = (double)v;
		p->text[l] = strdup(buf);
		if (!p->text[l])
			return jr_fail(r, "out of memory");
		l++;
		if (pow2 && v > hi / 2)
			break;
	}
	return 0;
}

struct spec { const cJSON *values, *range, *pow2; };

static const struct jr_field spec_fields[] = {
	{"values", JR_ARRAY, 0, 0, SPACE_MAX_LEVELS, NULL, JR_ITEM, offsetof(struct spec, values),
	 0, NULL},
	{"int", JR_ARRAY, 0, 0, 0, NULL, JR_ITEM, offsetof(struct spec, range), 0, NULL},
	{"pow2", JR_ARRAY, 0, 0, 0, NULL, JR_ITEM, offsetof(struct spec, pow2), 0, NULL},
	JR_END,
};

static int parse_param(struct jr *r, struct param *p, const char *name, const cJSON *v)
{
	struct spec sp = {NULL, NULL, NULL};
	char why[256];
	int rc;

	if (space_rule_named(name)) {
		if (space_rule_name_parse(name, &p->rule_bytes, &p->rule, why, sizeof why) < 0)
			return jr_fail(r, "%s", why);
	} else if (space_server_named(name)) {
		p->server = true;
	} else if (ncclvars_name_lookup(name, &p->var, why, sizeof why) < 0) {
		return jr_fail(r, "%s", why);
	} else if (ncclvars_loader_refusal(name)) {
		return jr_fail(r, "%s; refused before any run", ncclvars_loader_refusal(name));
	}
	snprintf(p->name, sizeof p->name, "%s", name);
	if (jr_dispatch(r, v, spec_fields, false, &sp, NULL) < 0)
		return -1;
	if ((sp.values != NULL) + (sp.range != NULL) + (sp.pow2 != NULL) != 1)
		return jr_fail(r, "needs exactly one of values, int or pow2");
	rc = jr_push_key(r, sp.values ? "values" : sp.range ? "int" : "pow2");
	if (rc == 0) {
		if (sp.values)
			rc = parse_values(r, p, sp.values);
		else
			rc = parse_range(r, p, sp.range ? sp.range : sp.pow2, sp.pow2 != NULL);
		jr_pop(r);
	}
	if (rc < 0)
		return -1;
	param_coords(p);
	return 0;
}

/* A fixed value: a string, or an integer a double holds exactly. */
static const struct jr_field fixed_field = {
	"", JR_STRING | JR_NUMBER, JR_INTEGER, -INT_LIMIT, INT_LIMIT, NULL, JR_KEEP, 0, 0, NULL,
};

static int take_fixed(struct jr *r, const char *name, const cJSON *v, void *ctx)
{
	space *sp = ctx;
	const struct ncclvar *var;
	char why[512], buf[32];
	const char *text;
	size_t d, i = sp->nfixed;

	if (ncclvars_name_lookup(name, &var, why, sizeof why) < 0)
		return jr_fail(r, "%s", why);
	if (ncclvars_loader_refusal(name))
		return jr_fail(r, "%s; refused before any run", ncclvars_loader_refusal(name));
	if (space_dim_index(sp, name, &d) == 0)
		return jr_fail(r, "also searched in params");
	if (cJSON_IsNull(v))
		return jr_fail(r, "null: leave the variable out to keep NCCL's default");
	if (jr_check(r, v, &fixed_field, NULL) < 0)
		return -1;
	if (cJSON_IsString(v)) {
		text = v->valuestring;
	} else {
		snprintf(buf, sizeof buf, "%lld", (long long)v->valuedouble);
		text = buf;
	}
	if (ncclvars_value_check(var, text, why, sizeof why) < 0)
		return jr_fail(r, "%s", why);
	sp->fixed_name[i] = strdup(name);
	sp->fixed_value[i] = strdup(text);
	sp->nfixed = i + 1;
	if (!sp->fixed_name[i] || !sp->fixed_value[i])
		return jr_fail(r, "out of memory");
	return 0;
}

static int parse_fixed(struct jr *r, space *sp, const cJSON *fixed)
{
	size_t n = (size_t)cJSON_GetArraySize(fixed);

	sp->fixed_name = calloc(n ? n : 1, sizeof *sp->fixed_name);
	sp->fixed_value = calloc(n ? n : 1, sizeof *sp->fixed_value);
	if (!sp->fixed_name || !sp->fixed_value)
		return jr_fail(r, "out of memory");
	return jr_map(r, fixed, 0, take_fixed, sp);
}

static const char *skip_space(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* One side of a constraint: a searched numeric parameter, a fixed integer
 * parameter (its value), or a number. */
static int parse_operand(const space *sp, const char **s, struct operand *o, char *why,
                         size_t whylen)
{
	const char *p = skip_space(*s);
	char name[NAME_MAX_LEN];
	size_t len = 0, i;
	long long num;

	if (isupper((unsigned char)*p)) {
		while (isupper((unsigned char)p[len]) || isdigit((unsigned char)p[len]) ||
		       p[len] == '_')
			len++;
		if (len >= sizeof name)
			return fs_errf(why, whylen, "name too long");
		memcpy(name, p, len);
		name[len] = '\0';
		*s = p + len;
		if (space_dim_index(sp, name, &o->dim) == 0) {
			if (sp->p[o->dim].categorical)
				return fs_errf(why, whylen, "%s is categorical; constraints compare numbers",
				            name);
			o->is_param = true;
			return 0;
		}
		if (space_fixed_index(sp, name, &i) == 0) {
			if (!ncclvars_parse_decimal(sp->fixed_value[i], &num))
				return fs_errf(why, whylen, "%s is fixed to '%s', not a number", name,
				            sp->fixed_value[i]);
			o->is_param = false;
			o->num = (double)num;
			return 0;
		}
		return fs_errf(why, whylen, "unknown parameter %s (not in params or fixed)", name);
	}
	if (isdigit((unsigned char)*p) || *p == '-' || *p == '.') {
		char *end;

		errno = 0;
		o->num = strtod(p, &end);
		if (end == p || errno || !isfinite(o->num))
			return fs_errf(why, whylen, "bad number");
		o->is_param = false;
		*s = end;
		return 0;
	}
	return fs_errf(why, whylen, "expected a parameter name or a number at '%s'", p);
}

static void operand_text(const space *sp, const struct operand *o, char *buf, size_t len)
{
	if (o->is_param)
		snprintf(buf, len, "%s", sp->p[o->dim].name);
	else if (o->num == floor(o->num) && fabs(o->num) < INT_LIMIT)
		snprintf(buf, len, "%lld", (long long)o->num);
	else
		snprintf(buf, len, "%.17g", o->num);
}

static int parse_constraint(const space *sp, const char *text, struct constraint *c,
                            char *why, size_t whylen)
{
	const char *s = text;
	char a[NAME_MAX_LEN + 8], b[NAME_MAX_LEN + 8];
	int op = -1;

	if (parse_operand(sp, &s, &c->a, why, whylen) < 0)
		return -1;
	s = skip_space(s);
	/* two-character operators first, so "<=" is not read as "<" */
	for (int k = 0; k < 6 && op < 0; k++) {
		size_t l = strlen(op_text[k]);

		if (l == 2 && strncmp(s, op_text[k], 2) == 0)
			op = k;
	}
	for (int k = 0; k < 6 && op < 0; k++) {
		if (strlen(op_text[k]) == 1 && *s == op_text[k][0])
			op = k;
	}
	if (op < 0)
		return fs_errf(why, whylen, "expected <, <=, ==, !=, >= or > at '%s'", s);
	s += strlen(op_text[op]);
	c->op = (enum cons_op)op;
	if (parse_operand(sp, &s, &c->b, why, whylen) < 0)
		return -1;
	s = skip_space(s);
	if (*s)
		return fs_errf(why, whylen, "unexpected '%s' after the comparison", s);
	if (!c->a.is_param && !c->b.is_param)
		return fs_errf(why, whylen, "compares two numbers; name a searched parameter");
	operand_text(sp, &c->a, a, sizeof a);
	operand_text(sp, &c->b, b, sizeof b);
	snprintf(c->text, sizeof c->text, "%s %s %s", a, op_text[op], b);
	return 0;
}

static const struct jr_field constraint_field = {
	"", JR_STRING, 0, 0, 0, NULL, JR_KEEP, 0, 0, NULL,
};

static int take_constraint(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	space *sp = ctx;
	char why[512], q[80];

	if (jr_check(r, v, &constraint_field, NULL) < 0)
		return -1;
	if (parse_constraint(sp, v->valuestring, &sp->cons[i], why, sizeof why) < 0)
		return jr_fail(r, "%s in %s", why, jr_quote(v->valuestring, q, sizeof q));
	sp->ncons = i + 1;
	return 0;
}

static int parse_constraints(struct jr *r, space *sp, const cJSON *list)
{
	size_t n = (size_t)cJSON_GetArraySize(list);

	sp->cons = calloc(n ? n : 1, sizeof *sp->cons);
	if (!sp->cons)
		return jr_fail(r, "out of memory");
	return jr_each(r, list, 0, take_constraint, sp);
}

/* Is there at least one allowed point? Checked exhaustively for spaces small enough. */
static bool space_nonempty(const space *sp)
{
	uint64_t card = space_cardinality(sp);
	struct point p;

	if (sp->ncons == 0 || card > EMPTY_CHECK_MAX)
		return true;
	for (uint64_t i = 0; i < card; i++) {
		space_point_at(sp, i, &p);
		if (space_allows(sp, &p))
			return true;
	}
	return false;
}

/* ---- server options ("server": {"symmetric": [false, true]}) ---- */

static const struct jr_field bool_field = {
	"", JR_BOOL, 0, 0, 0, NULL, JR_KEEP, 0, 0, NULL,
};

static int take_switch(struct jr *r, const cJSON *v, size_t l, void *ctx)
{
	struct param *p = ctx;

	if (jr_check(r, v, &bool_field, NULL) < 0)
		return -1;
	for (size_t k = 0; k < l; k++)
		if ((p->text[k] != NULL) == cJSON_IsTrue(v))
			return jr_fail(r, "repeats symmetric[%zu]", k);
	p->num[l] = NAN;
	p->text[l] = cJSON_IsTrue(v) ? strdup(SPACE_SYMMETRIC_ON) : NULL;
	if (cJSON_IsTrue(v) && !p->text[l])
		return jr_fail(r, "out of memory");
	return 0;
}

/* "symmetric": a list of booleans, the dimension SPACE_SYMMETRIC (null = false). */
static int take_server(struct jr *r, const char *key, const cJSON *v, void *ctx)
{
	space *sp = ctx;
	struct param *p = &sp->p[sp->dims];
	size_t n;

	if (strcmp(key, "symmetric") != 0)
		return jr_fail(r, "unknown server option (symmetric)");
	if (sp->dims >= SPACE_MAX_DIMS)
		return jr_fail(r, "too many dimensions (at most %d)", SPACE_MAX_DIMS);
	if (!cJSON_IsArray(v) || (n = (size_t)cJSON_GetArraySize(v)) == 0 || n > 2)
		return jr_fail(r, "expected a list of booleans: [false, true], [true] or [false]");
	if (param_alloc(p, n) < 0)
		return jr_fail(r, "out of memory");
	snprintf(p->name, sizeof p->name, "%s", SPACE_SYMMETRIC);
	p->server = p->categorical = true;
	p->kind = KIND_VALUES;
	if (jr_each(r, v, 2, take_switch, p) < 0 ||
	    (n == 1 && !p->text[0] && jr_fail(r, "only false (nothing to search: leave the "
	                                      "key out)") < 0)) {
		param_free(p);
		return -1;
	}
	param_coords(p);
	sp->dims++;
	return 0;
}

static int parse_server(struct jr *r, space *sp, const cJSON *block)
{
	size_t d;

	if (!block->child)
		return jr_fail(r, "empty (name symmetric)");
	if (space_dim_index(sp, SPACE_SYMMETRIC, &d) == 0)
		return jr_fail(r, "symmetric: also searched in params as %s", SPACE_SYMMETRIC);
	return jr_map(r, block, 8, take_server, sp);
}

struct space_doc { const cJSON *params, *fixed, *cons, *per_size, *server; };

static const char *const space_schema[] = {SPACE_SCHEMA, NULL};

static const struct jr_field space_fields[] = {
	{"schema", JR_STRING, JR_REQUIRED, 0, 0, space_schema, JR_KEEP, 0, 0, NULL},
	{"params", JR_OBJECT, JR_REQUIRED, 0, SPACE_MAX_DIMS, NULL, JR_ITEM,
	 offsetof(struct space_doc, params), 0, NULL},
	{"fixed", JR_OBJECT, 0, 0, 0, NULL, JR_ITEM, offsetof(struct space_doc, fixed), 0, NULL},
	{"constraints", JR_ARRAY, 0, 0, 0, NULL, JR_ITEM, offsetof(struct space_doc, cons), 0,
	 NULL},
	{"per_size", JR_OBJECT, 0, 0, 0, NULL, JR_ITEM, offsetof(struct space_doc, per_size), 0,
	 NULL},
	{"server", JR_OBJECT, 0, 0, 0, NULL, JR_ITEM, offsetof(struct space_doc, server), 0, NULL},
	JR_END,
};

static int take_param(struct jr *r, const char *name, const cJSON *v, void *ctx)
{
	space *sp = ctx;

	if (parse_param(r, &sp->p[sp->dims], name, v) < 0) {
		param_free(&sp->p[sp->dims]);
		return -1;
	}
	sp->dims++;
	return 0;
}

/* Run one part of the document (params, fixed, constraints) with its key on the path. */
static int part(struct jr *r, const char *key, space *sp, const cJSON *v,
                int (*fn)(struct jr *r, space *sp, const cJSON *v))
{
	int rc = jr_push_key(r, key);

	if (rc == 0) {
		rc = fn(r, sp, v);
		jr_pop(r);
	}
	return rc;
}

static int parse_params(struct jr *r, space *sp, const cJSON *params)
{
	if (!params->child && !sp->per_size && !sp->server)
		return jr_fail(r, "empty (nothing to search)");
	return jr_map(r, params, SPACE_MAX_DIMS, take_param, sp);
}

/* One choice of the per_size block ("algo", "proto", "ctas"): a template parsed as the
 * dimension "rule.1.<kind>" is, so its values are checked once here. */
static int take_per_size(struct jr *r, const char *key, const cJSON *v, void *ctx)
{
	space *sp = ctx;
	enum space_rule_kind k = space_rule_kind_find(key);
	char name[32];

	if (k == SPACE_RULE_NONE)
		return jr_fail(r, "unknown per-size choice (algo, proto or ctas)");
	snprintf(name, sizeof name, "rule.1.%s", key);
	if (parse_param(r, &sp->tmpl[k], name, v) < 0)
		return -1;
	sp->has_tmpl[k] = true;
	return 0;
}

static int parse_per_size(struct jr *r, space *sp, const cJSON *block)
{
	if (!block->child)
		return jr_fail(r, "empty (name algo, proto or ctas)");
	sp->per_size = true;
	return jr_map(r, block, 3, take_per_size, sp);
}

/* NCCL_ALGO or NCCL_PROTO set for the process would turn NCCL's other pairs into IGNORE
 * for every size, so the plugin's per-size choices could not be applied. */
static int refuse_global_choice(struct jr *r, const space *sp)
{
	if (!space_has_rules(sp) ||
	    (!space_mentions(sp, "NCCL_ALGO") && !space_mentions(sp, "NCCL_PROTO")))
		return 0;
	jr_push_key(r, "per_size");
	return jr_fail(r, "a space with per-size choices may not also search or fix NCCL_ALGO or "
	               "NCCL_PROTO (process-wide, they would override every size's rule); drop "
	               "them from params and fixed");
}

int space_parse(const char *text, size_t len, const char *origin, space **out, char *err,
                size_t errlen)
{
	struct space_doc doc = {NULL, NULL, NULL, NULL, NULL};
	struct jr r;
	cJSON *root = NULL;
	space *sp = NULL;
	int rc = -1;

	*out = NULL;
	jr_init(&r, origin ? origin : "space", err, errlen);
	root = jr_parse(&r, text, len);
	if (!root || jr_dispatch(&r, root, space_fields, false, &doc, NULL) < 0)
		goto out;
	sp = calloc(1, sizeof *sp);
	if (!sp) {
		jr_fail(&r, "out of memory");
		goto out;
	}
	if (doc.per_size && part(&r, "per_size", sp, doc.per_size, parse_per_size) < 0)
		goto out;
	sp->server = doc.server != NULL;
	if (part(&r, "params", sp, doc.params, parse_params) < 0)
		goto out;
	if (doc.server && part(&r, "server", sp, doc.server, parse_server) < 0)
		goto out;
	if (doc.fixed && part(&r, "fixed", sp, doc.fixed, parse_fixed) < 0)
		goto out;
	if (doc.cons && part(&r, "constraints", sp, doc.cons, parse_constraints) < 0)
		goto out;
	if (refuse_global_choice(&r, sp) < 0)
		goto out;
	if (!space_nonempty(sp)) {
		jr_push_key(&r, "constraints");
		jr_fail(&r, "no point of the space satisfies them all");
		goto out;
	}
	*out = sp;
	sp = NULL;
	rc = 0;
out:
	space_destroy(sp);
	cJSON_Delete(root);
	return rc;
}

space *space_default(void)
{
	space *sp = NULL;
	char err[256];

	if (space_parse(default_space_json, sizeof default_space_json - 1, "default space", &sp,
	                err, sizeof err) < 0)
		return NULL;
	return sp;
}


space *space_default_per_size(void)
{
	space *sp = NULL;
	char err[256];

	if (space_parse(default_per_size_json, sizeof default_per_size_json - 1,
	                "default per-size space", &sp, err, sizeof err) < 0)
		return NULL;
	return sp;
}
