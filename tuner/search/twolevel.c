/* twolevel.c - the two-level search's view of a space (twolevel.h): the outer space
 * (the space's JSON less its rule dimensions, parsed like any space), the plan of an
 * outer point's inner choices, and a sweep report turned into inner results and the
 * outer observation. */
#include "search/twolevel.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"

#define NO_DIM ((size_t)-1)

struct tl_size {
	uint64_t bytes;
	size_t dim[SPACE_RULE_CTAS + 1];   /* per kind; NO_DIM: the space has none */
};

struct twolevel {
	const space *sp;
	space *outer;                      /* NULL: no process-level dimension */
	size_t nouter;
	size_t outer_dim[SPACE_MAX_DIMS];  /* outer dimension -> full dimension */
	bool is_rule[SPACE_MAX_DIMS];
	uint32_t nccl_level[SPACE_MAX_DIMS];   /* a rule dimension's null level (or 0) */
	size_t nsizes;
	struct tl_size size[SPACE_MAX_DIMS];
};

/* The space's JSON less its rule dimensions and the constraints that name one; NULL
 * params when none is left. Returns 0, or -1 when out of memory. */
static int outer_json(const space *sp, char **text, bool *empty)
{
	char *full = space_to_json(sp);
	cJSON *root = full ? cJSON_Parse(full) : NULL;
	cJSON *params = root ? cJSON_GetObjectItemCaseSensitive(root, "params") : NULL;
	cJSON *cons = root ? cJSON_GetObjectItemCaseSensitive(root, "constraints") : NULL;
	int rc = -1;

	free(full);
	*text = NULL;
	if (!params)
		goto out;
	for (cJSON *it = params->child, *next; it; it = next) {
		next = it->next;
		if (space_rule_named(it->string))
			cJSON_Delete(cJSON_DetachItemViaPointer(params, it));
	}
	for (cJSON *it = cons ? cons->child : NULL, *next; it; it = next) {
		next = it->next;
		if (cJSON_IsString(it) && strstr(it->valuestring, "rule."))
			cJSON_Delete(cJSON_DetachItemViaPointer(cons, it));
	}
	*empty = params->child == NULL;
	*text = cJSON_PrintUnformatted(root);
	rc = *text ? 0 : -1;
out:
	cJSON_Delete(root);
	return rc;
}

/* The size entry of `bytes`, added when new. */
static struct tl_size *size_of(twolevel *t, uint64_t bytes)
{
	for (size_t i = 0; i < t->nsizes; i++)
		if (t->size[i].bytes == bytes)
			return &t->size[i];
	t->size[t->nsizes].bytes = bytes;
	for (int k = 0; k <= SPACE_RULE_CTAS; k++)
		t->size[t->nsizes].dim[k] = NO_DIM;
	return &t->size[t->nsizes++];
}

twolevel *twolevel_create(const space *sp, char *err, size_t errlen)
{
	twolevel *t = calloc(1, sizeof *t);
	char *text = NULL, perr[1024];
	bool empty = true;

	if (!t) {
		fs_errf(err, errlen, "out of memory");
		return NULL;
	}
	t->sp = sp;
	for (size_t d = 0; d < space_dims(sp); d++) {
		uint64_t bytes = 0;
		enum space_rule_kind k = space_rule_of(sp, d, &bytes);
		long null;

		if (k == SPACE_RULE_NONE) {
			t->outer_dim[t->nouter++] = d;
			continue;
		}
		t->is_rule[d] = true;
		size_of(t, bytes)->dim[k] = d;
		null = space_null_level(sp, d);
		t->nccl_level[d] = null < 0 ? 0 : (uint32_t)null;
	}
	if (t->nsizes == 0) {
		fs_errf(err, errlen, "the space has no per-size rule dimensions");
		goto fail;
	}
	if (outer_json(sp, &text, &empty) != 0) {
		fs_errf(err, errlen, "out of memory");
		goto fail;
	}
	if (!empty && space_parse(text, strlen(text), "outer space", &t->outer, perr,
	                          sizeof perr) != 0) {
		fs_errf(err, errlen, "%s", perr);
		goto fail;
	}
	free(text);
	return t;
fail:
	free(text);
	twolevel_destroy(t);
	return NULL;
}

void twolevel_destroy(twolevel *t)
{
	if (!t)
		return;
	space_destroy(t->outer);
	free(t);
}

const space *twolevel_outer_space(const twolevel *t)
{
	return t->outer;
}

size_t twolevel_sizes(const twolevel *t)
{
	return t->nsizes;
}

void twolevel_outer_of(const twolevel *t, const struct point *full, struct point *outer)
{
	memset(outer, 0, sizeof *outer);
	for (size_t i = 0; i < t->nouter; i++)
		outer->lv[i] = full->lv[t->outer_dim[i]];
}

void twolevel_full_of(const twolevel *t, const struct point *outer, struct point *full)
{
	struct point q = *outer;   /* outer and full may be the same point */

	memset(full, 0, sizeof *full);
	for (size_t i = 0; i < t->nouter; i++)
		full->lv[t->outer_dim[i]] = q.lv[i];
	for (size_t d = 0; d < space_dims(t->sp); d++)
		if (t->is_rule[d])
			full->lv[d] = t->nccl_level[d];
}

bool twolevel_same_outer(const twolevel *t, const struct point *a, const struct point *b)
{
	for (size_t i = 0; i < t->nouter; i++)
		if (a->lv[t->outer_dim[i]] != b->lv[t->outer_dim[i]])
			return false;
	return true;
}

bool twolevel_same_pair(const twolevel *t, const struct point *a, const struct point *b,
                        uint64_t bytes)
{
	for (size_t i = 0; i < t->nsizes; i++) {
		const struct tl_size *z = &t->size[i];

		if (z->bytes != bytes)
			continue;
		for (int k = SPACE_RULE_ALGO; k <= SPACE_RULE_PROTO; k++)
			if (z->dim[k] != NO_DIM && a->lv[z->dim[k]] != b->lv[z->dim[k]])
				return false;
		return true;
	}
	return false;
}

bool twolevel_rules_null(const twolevel *t, const struct point *p)
{
	for (size_t d = 0; d < space_dims(t->sp); d++)
		if (t->is_rule[d] && space_level_text(t->sp, d, p->lv[d]))
			return false;
	return true;
}

/* Fill choice c of size z from the levels in c->p. */
static void describe(const twolevel *t, const struct tl_size *z, size_t zi,
                     struct twolevel_choice *c)
{
	size_t da = z->dim[SPACE_RULE_ALGO], dp = z->dim[SPACE_RULE_PROTO];
	size_t dc = z->dim[SPACE_RULE_CTAS];
	const char *ctas = dc == NO_DIM ? NULL : space_level_text(t->sp, dc, c->p.lv[dc]);

	c->bytes = z->bytes;
	c->size = zi;
	c->algo = da == NO_DIM ? NULL : space_level_text(t->sp, da, c->p.lv[da]);
	c->proto = dp == NO_DIM ? NULL : space_level_text(t->sp, dp, c->p.lv[dp]);
	c->ctas = ctas ? atoi(ctas) : 0;
}

size_t twolevel_plan(const twolevel *t, const prune *pr, const struct point *outer_full,
                     bool (*skip)(void *ctx, const struct twolevel_choice *c), void *ctx,
                     size_t max, struct twolevel_choice *out, size_t *dropped)
{
	struct point base;
	size_t n = 0;

	*dropped = 0;
	if (max > TWOLEVEL_MAX_CHOICES)
		max = TWOLEVEL_MAX_CHOICES;
	twolevel_outer_of(t, outer_full, &base);
	twolevel_full_of(t, &base, &base);
	for (size_t zi = 0; zi < t->nsizes; zi++) {
		const struct tl_size *z = &t->size[zi];
		size_t lv[SPACE_RULE_CTAS + 1], combos = 1;

		for (int k = SPACE_RULE_ALGO; k <= SPACE_RULE_CTAS; k++) {
			lv[k] = z->dim[k] == NO_DIM ? 1 : space_levels(t->sp, z->dim[k]);
			combos *= lv[k];
		}
		for (size_t i = 0; i < combos; i++) {
			struct twolevel_choice c;
			size_t rest = i;

			memset(&c, 0, sizeof c);
			c.p = base;
			for (int k = SPACE_RULE_CTAS; k >= SPACE_RULE_ALGO; k--) {
				if (z->dim[k] != NO_DIM)
					c.p.lv[z->dim[k]] = (uint32_t)(rest % lv[k]);
				rest /= lv[k];
			}
			describe(t, z, zi, &c);
			if ((!c.algo && !c.proto && !c.ctas) || !space_allows(t->sp, &c.p) ||
			    (pr && prune_rejects(pr, &c.p)) || (skip && skip(ctx, &c)))
				continue;
			if (n >= max) {
				(*dropped)++;
				continue;
			}
			out[n++] = c;
		}
	}
	return n;
}

/* The median of size `bytes` among r's results; NAN when absent. */
static double own_us(const struct proto_report *r, uint64_t bytes)
{
	const struct proto_size_result *x = proto_report_size(r, bytes);

	return x ? x->us.median : NAN;
}

/* The workload at a point whose size `bytes` took `us` and every other size its own
 * case of r. */
static double objective_with(const struct workload *wl, const struct proto_report *r,
                             uint64_t bytes, double us)
{
	double sum = 0;

	for (size_t i = 0; i < wl->n; i++)
		sum += (double)wl->e[i].count *
		       (wl->e[i].bytes == bytes ? us : own_us(r, wl->e[i].bytes));
	return sum;
}

/* Inner result of choice c (planned index i) into *o. */
static void from_entry(const struct twolevel_choice *c, size_t i, const struct workload *wl,
                       const struct proto_report *r, const struct proto_sweep_entry *e,
                       struct twolevel_inner *o)
{
	memset(o, 0, sizeof *o);
	o->index = i;
	o->p = c->p;
	o->bytes = c->bytes;
	o->us = o->objective_us = NAN;
	if (e->ok) {
		o->cls = OUTCOME_OK;
		o->us = e->us.median;
		o->objective_us = r->ok ? objective_with(wl, r, c->bytes, o->us) : NAN;
		if (!isfinite(o->objective_us)) {
			o->cls = OUTCOME_GARBAGE;
			o->us = o->objective_us = NAN;
			snprintf(o->error, sizeof o->error, "report: no finite objective");
		}
		return;
	}
	o->cls = outcome_class_of_stage(e->stage);
	snprintf(o->error, sizeof o->error, "%.255s", e->error);
}

size_t twolevel_learn(const twolevel *t, const struct workload *wl,
                      const struct twolevel_choice *c, size_t n, const struct proto_report *r,
                      enum outcome_class run_cls, struct twolevel_inner *out,
                      size_t *in_flight)
{
	size_t k = 0;

	*in_flight = TWOLEVEL_OWN;
	for (size_t j = 0; j < r->nsweep; j++)
		if (r->sweep[j].index < n)
			from_entry(&c[r->sweep[j].index], r->sweep[j].index, wl, r, &r->sweep[j],
			           &out[k++]);
	if (!r->ok) {
		if (r->has_in_flight && r->sweep_in_flight < n) {
			struct twolevel_inner *o = &out[k++];

			*in_flight = r->sweep_in_flight;
			memset(o, 0, sizeof *o);
			o->index = r->sweep_in_flight;
			o->p = c[r->sweep_in_flight].p;
			o->bytes = c[r->sweep_in_flight].bytes;
			o->cls = run_cls;
			o->us = o->objective_us = NAN;
			snprintf(o->error, sizeof o->error, "%.255s", r->error);
		}
		return k;
	}
	/* the tuned sizes' own cases, then the guard sizes' (NCCL's own choice there, as
	 * deployed: the plugin's table names tuned sizes only) */
	for (size_t i = 0; i < wl->n + wl->nguard; i++) {
		struct twolevel_inner *o = &out[k];
		struct point outer;

		memset(o, 0, sizeof *o);
		twolevel_outer_of(t, &c[0].p, &outer);
		twolevel_full_of(t, &outer, &o->p);
		o->index = TWOLEVEL_OWN;
		o->bytes = i < wl->n ? wl->e[i].bytes : wl->guard[i - wl->n];
		o->us = own_us(r, o->bytes);
		o->objective_us = i < wl->n ? objective_with(wl, r, o->bytes, o->us)
		                  : isfinite(o->us) ? objective_with(wl, r, 0, NAN) : NAN;
		o->cls = isfinite(o->objective_us) ? OUTCOME_OK : OUTCOME_GARBAGE;
		/* the own case's full point has every rule at NCCL's: one for all sizes */
		if (!space_allows(t->sp, &o->p) || o->cls != OUTCOME_OK)
			continue;
		k++;
	}
	return k;
}

/* The rule dimensions of size bytes, or NULL when it has none. */
static const struct tl_size *rule_size(const twolevel *t, uint64_t bytes)
{
	for (size_t i = 0; i < t->nsizes; i++)
		if (t->size[i].bytes == bytes)
			return &t->size[i];
	return NULL;
}

int twolevel_best(const twolevel *t, const struct workload *wl, const struct twolevel_inner *in,
                  size_t n, bool (*reject)(void *ctx, const struct point *p), void *ctx,
                  struct point *best, double *objective_us)
{
	const struct twolevel_inner *single = NULL;
	struct point combo;
	double sum = 0;

	if (n == 0)
		return -1;
	twolevel_outer_of(t, &in[0].p, &combo);
	twolevel_full_of(t, &combo, &combo);
	for (size_t i = 0; i < wl->n; i++) {
		const struct twolevel_inner *pick = NULL;
		const struct tl_size *z = rule_size(t, wl->e[i].bytes);

		for (size_t j = 0; j < n; j++) {
			const struct twolevel_inner *x = &in[j];

			if (x->cls != OUTCOME_OK || x->bytes != wl->e[i].bytes ||
			    (reject && reject(ctx, &x->p)))
				continue;
			if (!pick || x->us < pick->us)
				pick = x;
			if (!single || x->objective_us < single->objective_us)
				single = x;
		}
		if (!pick)
			return -1;
		sum += (double)wl->e[i].count * pick->us;
		for (int k = SPACE_RULE_ALGO; z && k <= SPACE_RULE_CTAS; k++)
			if (z->dim[k] != NO_DIM)
				combo.lv[z->dim[k]] = pick->p.lv[z->dim[k]];
	}
	if (space_allows(t->sp, &combo) && !(reject && reject(ctx, &combo))) {
		*best = combo;
		*objective_us = sum;
	} else {
		*best = single->p;
		*objective_us = single->objective_us;
	}
	return 0;
}
