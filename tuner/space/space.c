/* space.c - the search space (nccltune-space/1): parsing and validation, constraints,
 * encoding of levels for the surrogate, enumeration and rounding.
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

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fsutil.h"
#include "ncclvars.h"

#define SPACE_SCHEMA "nccltune-space/1"
#define NAME_MAX_LEN NCCLVARS_NAME_MAX
/* Integers beyond 2^53 do not survive a JSON double. */
#define INT_LIMIT 9007199254740992.0
/* Spaces up to this many points are checked for "no point satisfies the constraints". */
#define EMPTY_CHECK_MAX (1u << 22)
/* Ordinal levels spanning at least this factor get a log scale (see param_coords). */
#define LOG_SCALE_RATIO 4.0

/* ---- the space ---- */

enum param_kind { KIND_VALUES, KIND_INT, KIND_POW2 };

struct param {
	char name[NAME_MAX_LEN];
	const struct ncclvar *var;
	enum param_kind kind;
	long long lo, hi;          /* KIND_INT / KIND_POW2 as written */
	bool categorical;
	size_t n;
	char **text;               /* per level; NULL = unset */
	double *num;               /* numeric value of ordinal levels; NAN for null */
	double *coord;             /* space_coord */
};

enum cons_op { OP_LT, OP_LE, OP_EQ, OP_NE, OP_GE, OP_GT };
static const char *const op_text[] = {"<", "<=", "==", "!=", ">=", ">"};

struct operand {
	bool is_param;
	size_t dim;
	double num;
};

struct constraint {
	struct operand a, b;
	enum cons_op op;
	char text[160];
};

struct space {
	size_t dims;
	struct param p[SPACE_MAX_DIMS];
	size_t nfixed;
	char **fixed_name, **fixed_value;
	size_t ncons;
	struct constraint *cons;
};

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

static bool json_integer(const cJSON *j, long long *out)
{
	double v;

	if (!cJSON_IsNumber(j))
		return false;
	v = j->valuedouble;
	if (!isfinite(v) || v != floor(v) || fabs(v) > INT_LIMIT)
		return false;
	*out = (long long)v;
	return true;
}

/* Duplicate keys in an object: cJSON keeps both; a strict parser refuses them. */
static const char *duplicate_key(const cJSON *obj)
{
	for (const cJSON *a = obj->child; a; a = a->next) {
		for (const cJSON *b = a->next; b; b = b->next) {
			if (a->string && b->string && strcmp(a->string, b->string) == 0)
				return a->string;
		}
	}
	return NULL;
}

static int parse_values(struct param *p, const cJSON *list, const char *at, char *err,
                        size_t errlen)
{
	size_t n = (size_t)cJSON_GetArraySize(list), l = 0, nstr = 0, nnum = 0, idx = 0;
	char why[512], buf[32];
	const cJSON *it;

	if (!cJSON_IsArray(list))
		return fs_errf(err, errlen, "%s: values must be a list", at);
	if (n == 0)
		return fs_errf(err, errlen, "%s: empty values list", at);
	if (n > SPACE_MAX_LEVELS)
		return fs_errf(err, errlen, "%s: %zu levels, at most %d", at, n, SPACE_MAX_LEVELS);
	cJSON_ArrayForEach(it, list) {
		if (cJSON_IsString(it))
			nstr++;
		else if (cJSON_IsNumber(it))
			nnum++;
		else if (!cJSON_IsNull(it))
			return fs_errf(err, errlen, "%s: values[%zu] is not a string, number or null",
			            at, idx);
		idx++;
	}
	if (nstr && nnum)
		return fs_errf(err, errlen, "%s: values mix strings and numbers (strings are "
		            "categories, numbers ordered levels)", at);
	if (nstr + nnum == 0)
		return fs_errf(err, errlen, "%s: values hold only null (nothing to search)", at);
	if (param_alloc(p, n) < 0)
		return fs_errf(err, errlen, "%s: out of memory", at);
	p->kind = KIND_VALUES;
	p->categorical = nstr > 0;
	cJSON_ArrayForEach(it, list) {
		const char *text = NULL;
		long long v;

		p->num[l] = NAN;
		if (cJSON_IsString(it)) {
			text = it->valuestring;
		} else if (cJSON_IsNumber(it)) {
			if (!json_integer(it, &v))
				return fs_errf(err, errlen, "%s: values[%zu]: %g is not an integer", at, l,
				            it->valuedouble);
			if (l > 0) {
				double prev = NAN;

				for (size_t k = l; k-- > 0 && isnan(prev);)
					prev = p->num[k];
				if (!isnan(prev) && (double)v <= prev)
					return fs_errf(err, errlen, "%s: values[%zu]: numbers must be in "
					            "increasing order (%lld after %.0f)", at, l, v, prev);
			}
			p->num[l] = (double)v;
			snprintf(buf, sizeof buf, "%lld", v);
			text = buf;
		}
		if (text) {
			if (ncclvars_value_check(p->var, text, why, sizeof why) < 0)
				return fs_errf(err, errlen, "%s: %s", at, why);
			p->text[l] = strdup(text);
			if (!p->text[l])
				return fs_errf(err, errlen, "%s: out of memory", at);
		}
		for (size_t k = 0; k < l; k++) {
			if (ncclvars_same_value(p->var, p->text[k], p->text[l]))
				return fs_errf(err, errlen, "%s: values[%zu] repeats values[%zu]", at, l, k);
		}
		l++;
	}
	return 0;
}

static int parse_range(struct param *p, const cJSON *range, bool pow2, const char *at,
                       char *err, size_t errlen)
{
	const char *key = pow2 ? "pow2" : "int";
	long long lo, hi;
	size_t n = 0, l = 0;
	char why[512], buf[32];

	if (!cJSON_IsArray(range) || cJSON_GetArraySize(range) != 2 ||
	    !json_integer(cJSON_GetArrayItem(range, 0), &lo) ||
	    !json_integer(cJSON_GetArrayItem(range, 1), &hi))
		return fs_errf(err, errlen, "%s: %s must be [lo, hi] with two integers", at, key);
	if (lo > hi)
		return fs_errf(err, errlen, "%s: inverted range [%lld, %lld]", at, lo, hi);
	if (pow2) {
		for (long long v = 1; v <= hi && v > 0; v *= 2)
			n += v >= lo;
		if (n == 0)
			return fs_errf(err, errlen, "%s: no power of two in [%lld, %lld]", at, lo, hi);
	} else {
		if ((double)hi - (double)lo + 1 > SPACE_MAX_LEVELS)
			return fs_errf(err, errlen, "%s: %.0f levels, at most %d", at,
			            (double)hi - (double)lo + 1, SPACE_MAX_LEVELS);
		n = (size_t)(hi - lo + 1);
	}
	if (param_alloc(p, n) < 0)
		return fs_errf(err, errlen, "%s: out of memory", at);
	p->kind = pow2 ? KIND_POW2 : KIND_INT;
	p->lo = lo;
	p->hi = hi;
	for (long long v = pow2 ? 1 : lo; v <= hi; v = pow2 ? v * 2 : v + 1) {
		if (pow2 && v < lo)
			continue;
		snprintf(buf, sizeof buf, "%lld", v);
		if (ncclvars_value_check(p->var, buf, why, sizeof why) < 0)
			return fs_errf(err, errlen, "%s: %s [%lld, %lld]: %s", at, key, lo, hi, why);
		p->num[l] = (double)v;
		p->text[l] = strdup(buf);
		if (!p->text[l])
			return fs_errf(err, errlen, "%s: out of memory", at);
		l++;
		if (pow2 && v > hi / 2)
			break;
	}
	return 0;
}

static int parse_param(struct param *p, const cJSON *spec, const char *origin, char *err,
                       size_t errlen)
{
	char at[NAME_MAX_LEN + 600], why[256];
	const cJSON *values = NULL, *range = NULL, *pow2 = NULL, *it;
	int kinds = 0;

	snprintf(at, sizeof at, "%s: params.%s", origin, spec->string);
	if (ncclvars_name_lookup(spec->string, &p->var, why, sizeof why) < 0)
		return fs_errf(err, errlen, "%s: %s", at, why);
	snprintf(p->name, sizeof p->name, "%s", spec->string);
	if (!cJSON_IsObject(spec))
		return fs_errf(err, errlen, "%s: must be an object such as {\"values\": [...]}", at);
	if (duplicate_key(spec))
		return fs_errf(err, errlen, "%s: duplicate key \"%s\"", at, duplicate_key(spec));
	cJSON_ArrayForEach(it, spec) {
		if (strcmp(it->string, "values") == 0)
			values = it;
		else if (strcmp(it->string, "int") == 0)
			range = it;
		else if (strcmp(it->string, "pow2") == 0)
			pow2 = it;
		else
			return fs_errf(err, errlen, "%s: unknown key \"%s\" (expected values, int or pow2)",
			            at, it->string);
		kinds++;
	}
	if (kinds != 1)
		return fs_errf(err, errlen, "%s: needs exactly one of values, int or pow2", at);
	if (values && parse_values(p, values, at, err, errlen) < 0)
		return -1;
	if (range && parse_range(p, range, false, at, err, errlen) < 0)
		return -1;
	if (pow2 && parse_range(p, pow2, true, at, err, errlen) < 0)
		return -1;
	param_coords(p);
	return 0;
}

static int find_dim(const space *sp, const char *name, size_t *dim)
{
	for (size_t d = 0; d < sp->dims; d++) {
		if (strcmp(sp->p[d].name, name) == 0) {
			*dim = d;
			return 0;
		}
	}
	return -1;
}

static int find_fixed(const space *sp, const char *name, size_t *i)
{
	for (size_t k = 0; k < sp->nfixed; k++) {
		if (strcmp(sp->fixed_name[k], name) == 0) {
			*i = k;
			return 0;
		}
	}
	return -1;
}

static int parse_fixed(space *sp, const cJSON *fixed, const char *origin, char *err,
                       size_t errlen)
{
	size_t n = (size_t)cJSON_GetArraySize(fixed), i = 0, d;
	char why[512], buf[32];
	const cJSON *it;

	if (!cJSON_IsObject(fixed))
		return fs_errf(err, errlen, "%s: fixed: must be an object of NCCL_X: value", origin);
	if (duplicate_key(fixed))
		return fs_errf(err, errlen, "%s: fixed: duplicate key \"%s\"", origin,
		            duplicate_key(fixed));
	sp->fixed_name = calloc(n ? n : 1, sizeof *sp->fixed_name);
	sp->fixed_value = calloc(n ? n : 1, sizeof *sp->fixed_value);
	if (!sp->fixed_name || !sp->fixed_value)
		return fs_errf(err, errlen, "%s: fixed: out of memory", origin);
	cJSON_ArrayForEach(it, fixed) {
		const struct ncclvar *v;
		const char *text;
		long long num;

		if (ncclvars_name_lookup(it->string, &v, why, sizeof why) < 0)
			return fs_errf(err, errlen, "%s: fixed.%s: %s", origin, it->string, why);
		if (find_dim(sp, it->string, &d) == 0)
			return fs_errf(err, errlen, "%s: fixed.%s: also searched in params", origin,
			            it->string);
		if (cJSON_IsString(it)) {
			text = it->valuestring;
		} else if (json_integer(it, &num)) {
			snprintf(buf, sizeof buf, "%lld", num);
			text = buf;
		} else {
			return fs_errf(err, errlen, "%s: fixed.%s: must be a string or an integer "
			            "(leave the variable out to keep NCCL's default)", origin, it->string);
		}
		if (ncclvars_value_check(v, text, why, sizeof why) < 0)
			return fs_errf(err, errlen, "%s: fixed.%s: %s", origin, it->string, why);
		sp->fixed_name[i] = strdup(it->string);
		sp->fixed_value[i] = strdup(text);
		sp->nfixed = ++i;
		if (!sp->fixed_name[i - 1] || !sp->fixed_value[i - 1])
			return fs_errf(err, errlen, "%s: fixed: out of memory", origin);
	}
	return 0;
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
		if (find_dim(sp, name, &o->dim) == 0) {
			if (sp->p[o->dim].categorical)
				return fs_errf(why, whylen, "%s is categorical; constraints compare numbers",
				            name);
			o->is_param = true;
			return 0;
		}
		if (find_fixed(sp, name, &i) == 0) {
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

static int parse_constraints(space *sp, const cJSON *list, const char *origin, char *err,
                             size_t errlen)
{
	size_t n = (size_t)cJSON_GetArraySize(list), i = 0;
	char why[512];
	const cJSON *it;

	if (!cJSON_IsArray(list))
		return fs_errf(err, errlen, "%s: constraints: must be a list of strings", origin);
	sp->cons = calloc(n ? n : 1, sizeof *sp->cons);
	if (!sp->cons)
		return fs_errf(err, errlen, "%s: constraints: out of memory", origin);
	cJSON_ArrayForEach(it, list) {
		if (!cJSON_IsString(it))
			return fs_errf(err, errlen, "%s: constraints[%zu]: must be a string such as "
			            "\"NCCL_MIN_NCHANNELS <= NCCL_MAX_NCHANNELS\"", origin, i);
		if (parse_constraint(sp, it->valuestring, &sp->cons[i], why, sizeof why) < 0)
			return fs_errf(err, errlen, "%s: constraints[%zu]: %s in \"%s\"", origin, i, why,
			            it->valuestring);
		sp->ncons = ++i;
	}
	return 0;
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

static size_t line_of(const char *text, size_t len, const char *at)
{
	size_t line = 1;

	for (const char *c = text; c < at && c < text + len; c++)
		line += *c == '\n';
	return line;
}

int space_parse(const char *text, size_t len, const char *origin, space **out, char *err,
                size_t errlen)
{
	const char *end = NULL;
	cJSON *root = NULL, *it;
	const cJSON *params = NULL, *fixed = NULL, *cons = NULL, *schema = NULL;
	space *sp = NULL;
	int rc = -1;

	*out = NULL;
	if (!origin)
		origin = "space";
	root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (!root) {
		fs_errf(err, errlen, "%s: line %zu: not valid JSON", origin,
		     line_of(text, len, end ? end : text));
		goto out;
	}
	for (const char *c = end; c && c < text + len; c++) {
		if (!isspace((unsigned char)*c) && *c != '\0') {
			fs_errf(err, errlen, "%s: line %zu: text after the JSON object", origin,
			     line_of(text, len, c));
			goto out;
		}
	}
	if (!cJSON_IsObject(root)) {
		fs_errf(err, errlen, "%s: not a JSON object", origin);
		goto out;
	}
	if (duplicate_key(root)) {
		fs_errf(err, errlen, "%s: duplicate key \"%s\"", origin, duplicate_key(root));
		goto out;
	}
	cJSON_ArrayForEach(it, root) {
		if (strcmp(it->string, "schema") == 0) {
			schema = it;
		} else if (strcmp(it->string, "params") == 0) {
			params = it;
		} else if (strcmp(it->string, "fixed") == 0) {
			fixed = it;
		} else if (strcmp(it->string, "constraints") == 0) {
			cons = it;
		} else {
			fs_errf(err, errlen, "%s: %s: unknown key (expected schema, params, fixed, "
			     "constraints)", origin, it->string);
			goto out;
		}
	}
	if (!schema) {
		fs_errf(err, errlen, "%s: schema: missing (expected \"%s\")", origin, SPACE_SCHEMA);
		goto out;
	}
	if (!cJSON_IsString(schema) || strcmp(schema->valuestring, SPACE_SCHEMA) != 0) {
		fs_errf(err, errlen, "%s: schema: not \"%s\"", origin, SPACE_SCHEMA);
		goto out;
	}
	if (!params || !cJSON_IsObject(params)) {
		fs_errf(err, errlen, "%s: params: %s", origin, params ? "must be an object" : "missing");
		goto out;
	}
	if (!params->child) {
		fs_errf(err, errlen, "%s: params: empty (nothing to search)", origin);
		goto out;
	}
	if (duplicate_key(params)) {
		fs_errf(err, errlen, "%s: params.%s: appears twice", origin, duplicate_key(params));
		goto out;
	}
	if (cJSON_GetArraySize(params) > SPACE_MAX_DIMS) {
		fs_errf(err, errlen, "%s: params: %d parameters, at most %d", origin,
		     cJSON_GetArraySize(params), SPACE_MAX_DIMS);
		goto out;
	}
	sp = calloc(1, sizeof *sp);
	if (!sp) {
		fs_errf(err, errlen, "%s: out of memory", origin);
		goto out;
	}
	cJSON_ArrayForEach(it, params) {
		if (parse_param(&sp->p[sp->dims], it, origin, err, errlen) < 0) {
			param_free(&sp->p[sp->dims]);
			goto out;
		}
		sp->dims++;
	}
	if (fixed && parse_fixed(sp, fixed, origin, err, errlen) < 0)
		goto out;
	if (cons && parse_constraints(sp, cons, origin, err, errlen) < 0)
		goto out;
	if (!space_nonempty(sp)) {
		fs_errf(err, errlen, "%s: constraints: no point of the space satisfies them all",
		     origin);
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

/* ---- serialisation ---- */

static cJSON *param_json(const struct param *p)
{
	cJSON *o = cJSON_CreateObject(), *list = NULL;

	if (!o)
		return NULL;
	if (p->kind == KIND_VALUES) {
		list = cJSON_AddArrayToObject(o, "values");
		for (size_t l = 0; list && l < p->n; l++) {
			cJSON *v;

			if (!p->text[l])
				v = cJSON_CreateNull();
			else if (p->categorical)
				v = cJSON_CreateString(p->text[l]);
			else
				v = cJSON_CreateNumber(p->num[l]);
			if (!v || !cJSON_AddItemToArray(list, v)) {
				cJSON_Delete(v);
				list = NULL;
			}
		}
	} else {
		double r[2] = {(double)p->lo, (double)p->hi};

		list = cJSON_CreateDoubleArray(r, 2);
		if (list && !cJSON_AddItemToObject(o, p->kind == KIND_POW2 ? "pow2" : "int", list)) {
			cJSON_Delete(list);
			list = NULL;
		}
	}
	if (!list) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

char *space_to_json(const space *sp)
{
	cJSON *root = cJSON_CreateObject(), *params, *fixed, *cons;
	char *text = NULL;
	bool ok;

	if (!root)
		return NULL;
	ok = cJSON_AddStringToObject(root, "schema", SPACE_SCHEMA) != NULL;
	params = cJSON_AddObjectToObject(root, "params");
	ok = ok && params;
	for (size_t d = 0; ok && d < sp->dims; d++) {
		cJSON *pj = param_json(&sp->p[d]);

		ok = pj && cJSON_AddItemToObject(params, sp->p[d].name, pj);
		if (!ok)
			cJSON_Delete(pj);
	}
	if (ok && sp->nfixed) {
		fixed = cJSON_AddObjectToObject(root, "fixed");
		ok = fixed != NULL;
		for (size_t i = 0; ok && i < sp->nfixed; i++)
			ok = cJSON_AddStringToObject(fixed, sp->fixed_name[i], sp->fixed_value[i]) != NULL;
	}
	if (ok && sp->ncons) {
		cons = cJSON_AddArrayToObject(root, "constraints");
		ok = cons != NULL;
		for (size_t i = 0; ok && i < sp->ncons; i++) {
			cJSON *s = cJSON_CreateString(sp->cons[i].text);

			ok = s && cJSON_AddItemToArray(cons, s);
			if (!ok)
				cJSON_Delete(s);
		}
	}
	if (ok)
		text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return text;
}

/* ---- accessors ---- */

size_t space_dims(const space *sp)
{
	return sp->dims;
}

const char *space_name(const space *sp, size_t d)
{
	return sp->p[d].name;
}

size_t space_levels(const space *sp, size_t d)
{
	return sp->p[d].n;
}

bool space_is_categorical(const space *sp, size_t d)
{
	return sp->p[d].categorical;
}

const char *space_level_text(const space *sp, size_t d, size_t l)
{
	return sp->p[d].text[l];
}

size_t space_fixed_count(const space *sp)
{
	return sp->nfixed;
}

const char *space_fixed_name(const space *sp, size_t i)
{
	return sp->fixed_name[i];
}

const char *space_fixed_value(const space *sp, size_t i)
{
	return sp->fixed_value[i];
}

bool space_mentions(const space *sp, const char *name)
{
	size_t i;

	return find_dim(sp, name, &i) == 0 || find_fixed(sp, name, &i) == 0;
}

size_t space_constraint_count(const space *sp)
{
	return sp->ncons;
}

const char *space_constraint_text(const space *sp, size_t i)
{
	return sp->cons[i].text;
}

double space_coord(const space *sp, size_t d, size_t l)
{
	return sp->p[d].coord[l];
}

/* ---- points ---- */

static double operand_value(const space *sp, const struct operand *o, const struct point *p)
{
	return o->is_param ? sp->p[o->dim].num[p->lv[o->dim]] : o->num;
}

bool space_allows(const space *sp, const struct point *p)
{
	for (size_t d = 0; d < sp->dims; d++) {
		if (p->lv[d] >= sp->p[d].n)
			return false;
	}
	for (size_t i = 0; i < sp->ncons; i++) {
		const struct constraint *c = &sp->cons[i];
		double a = operand_value(sp, &c->a, p), b = operand_value(sp, &c->b, p);
		bool ok = true;

		if (isnan(a) || isnan(b))
			continue;   /* an unset level satisfies every constraint */
		switch (c->op) {
		case OP_LT: ok = a < b; break;
		case OP_LE: ok = a <= b; break;
		case OP_EQ: ok = a == b; break;
		case OP_NE: ok = a != b; break;
		case OP_GE: ok = a >= b; break;
		case OP_GT: ok = a > b; break;
		}
		if (!ok)
			return false;
	}
	return true;
}

uint64_t space_cardinality(const space *sp)
{
	uint64_t card = 1;

	for (size_t d = 0; d < sp->dims; d++) {
		if (card > UINT64_MAX / sp->p[d].n)
			return UINT64_MAX;
		card *= sp->p[d].n;
	}
	return card;
}

void space_point_at(const space *sp, uint64_t index, struct point *p)
{
	memset(p, 0, sizeof *p);
	for (size_t d = sp->dims; d-- > 0;) {
		p->lv[d] = (uint32_t)(index % sp->p[d].n);
		index /= sp->p[d].n;
	}
}

void space_point_round(const space *sp, const double *x, const struct point *base,
                       struct point *out)
{
	struct point r = *base;

	for (size_t d = 0; d < sp->dims; d++) {
		const struct param *p = &sp->p[d];
		double best = INFINITY;

		if (p->categorical)
			continue;
		for (size_t l = 0; l < p->n; l++) {
			double dist;

			if (!p->text[l])
				continue;
			dist = fabs(p->coord[l] - x[d]);
			if (dist < best) {
				best = dist;
				r.lv[d] = (uint32_t)l;
			}
		}
	}
	*out = r;
}

bool point_equal(const struct point *a, const struct point *b, size_t dims)
{
	return memcmp(a->lv, b->lv, dims * sizeof a->lv[0]) == 0;
}

char *space_point_describe(const space *sp, const struct point *p, char *buf, size_t len)
{
	size_t used = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (size_t d = 0; d < sp->dims && used < len; d++) {
		const char *t = p->lv[d] < sp->p[d].n ? sp->p[d].text[p->lv[d]] : "?";
		int n;

		if (!t)
			continue;
		n = snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "", sp->p[d].name, t);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	return buf;
}
