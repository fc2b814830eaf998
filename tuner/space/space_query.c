/* space_query.c - what a parsed space answers: its JSON form (the journal header,
 * results.json), its dimensions, levels and fixed variables, and its points
 * (constraints, enumeration in mixed-radix order, rounding, descriptions). */
#include "space/space.h"
#include "space/space_impl.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int space_dim_index(const space *sp, const char *name, size_t *dim)
{
	for (size_t d = 0; d < sp->dims; d++) {
		if (strcmp(sp->p[d].name, name) == 0) {
			*dim = d;
			return 0;
		}
	}
	return -1;
}

int space_fixed_index(const space *sp, const char *name, size_t *i)
{
	for (size_t k = 0; k < sp->nfixed; k++) {
		if (strcmp(sp->fixed_name[k], name) == 0) {
			*i = k;
			return 0;
		}
	}
	return -1;
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
	if (ok && sp->per_size) {
		cJSON *ps = cJSON_AddObjectToObject(root, "per_size");

		ok = ps != NULL;
		for (int k = SPACE_RULE_ALGO; ok && k <= SPACE_RULE_CTAS; k++) {
			cJSON *pj = sp->has_tmpl[k] ? param_json(&sp->tmpl[k]) : NULL;

			ok = !sp->has_tmpl[k] ||
			     (pj && cJSON_AddItemToObject(ps, space_rule_kind_word(k), pj));
			if (!ok)
				cJSON_Delete(pj);
		}
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

long space_null_level(const space *sp, size_t d)
{
	for (size_t l = 0; l < space_levels(sp, d); l++)
		if (!space_level_text(sp, d, l))
			return (long)l;
	return -1;
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

enum space_rule_kind space_rule_of(const space *sp, size_t d, uint64_t *bytes)
{
	if (bytes)
		*bytes = sp->p[d].rule_bytes;
	return sp->p[d].rule;
}

bool space_server_named(const char *name)
{
	return strcmp(name, SPACE_SYMMETRIC) == 0;
}

bool space_is_server(const space *sp, size_t d)
{
	return sp->p[d].server;
}

bool space_point_symmetric(const space *sp, const struct point *p, uint32_t unset)
{
	for (size_t d = 0; p && d < sp->dims; d++) {
		const char *t;

		if (!sp->p[d].server || (d < 32 && (unset >> d & 1u)) || p->lv[d] >= sp->p[d].n)
			continue;
		t = sp->p[d].text[p->lv[d]];
		if (t && strcmp(t, SPACE_SYMMETRIC_ON) == 0)
			return true;
	}
	return false;
}

bool space_has_per_size(const space *sp)
{
	return sp->per_size;
}

bool space_has_rules(const space *sp)
{
	for (size_t d = 0; d < sp->dims; d++)
		if (sp->p[d].rule != SPACE_RULE_NONE)
			return true;
	return sp->per_size;
}

bool space_mentions(const space *sp, const char *name)
{
	size_t i;

	return space_dim_index(sp, name, &i) == 0 || space_fixed_index(sp, name, &i) == 0;
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
