/* sizes.c - how one run varies (the final repeats' pooled spread) and the per-size
 * decisions of the final phase: whether a rule forces only what NCCL ran in the baseline
 * (then it is NCCL's own), each size's latency paired against the baseline, and the
 * guard sizes' verdict (a finalist that slows a guard beyond the measured noise is
 * out). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncclvars.h"
#include "decide/decide.h"
#include "decide/decide_impl.h"
#include "run/ruletable.h"

/* Is q a final-phase run that worked, of the same configuration as r? */
static bool same_final_ok(const struct runlog *l, const struct session_run *q,
                          const struct session_run *r)
{
	return q->phase == PHASE_FINAL && q->o.cls == OUTCOME_OK &&
	       runlog_same_config(q, r->has_point ? &r->p : NULL, r->try_no, space_dims(l->sp));
}

/* Each configuration the final phase re-measured (baseline, finalists, tries) about its
 * own mean. */
bool decide_noise(const struct runlog *l, double *sd, int *configs, int *dof)
{
	size_t groups = 0, df = 0;
	double ss = 0;

	for (size_t i = 0; i < l->nruns; i++) {
		const struct session_run *r = &l->runs[i];
		double sum = 0, mean;
		size_t n = 0;
		bool seen = false;

		if (r->phase != PHASE_FINAL || r->o.cls != OUTCOME_OK)
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = same_final_ok(l, &l->runs[j], r);
		if (seen)
			continue;   /* counted with the first run of its configuration */
		for (size_t j = i; j < l->nruns; j++)
			if (same_final_ok(l, &l->runs[j], r)) {
				sum += log(l->runs[j].o.objective_us);
				n++;
			}
		mean = sum / (double)n;
		for (size_t j = i; j < l->nruns; j++)
			if (same_final_ok(l, &l->runs[j], r))
				ss += pow(log(l->runs[j].o.objective_us) - mean, 2);
		groups += n > 1;
		df += n - 1;
	}
	if (df < 2)
		return false;
	*sd = sqrt(ss / (double)df);
	*configs = (int)groups;
	*dof = (int)df;
	return true;
}

/* What NCCL ran at `bytes` in the first ok baseline run; known false when none says. */
static struct proto_decision baseline_decision(const struct runlog *l, size_t bytes)
{
	const struct session_run *b = runlog_baseline_ok_run(l);
	const struct proto_size_result *x = b ? proto_report_size(&b->o.report, bytes) : NULL;
	struct proto_decision none;

	if (x)
		return x->nccl;
	memset(&none, 0, sizeof none);
	return none;
}

bool decide_rule_is_baseline(const struct runlog *l, const cJSON *r)
{
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(r, "bytes");
	struct proto_decision d = baseline_decision(l, cJSON_IsNumber(b) ? (size_t)b->valuedouble : 0);
	const char *keys[] = {"algo", "proto", "ctas"};

	if (!d.known || d.symmetric || d.mixed)
		return false;
	for (size_t k = 0; k < 3; k++) {
		const cJSON *val = cJSON_GetObjectItemCaseSensitive(r, keys[k]);
		int want = k == 0 ? d.algo : k == 1 ? d.proto : d.ctas, got = -2;

		if (cJSON_IsNull(val))
			continue;
		if (cJSON_IsString(val))
			got = ncclvars_word_find(k == 0 ? NCCLVARS_ALGOS : NCCLVARS_PROTOS,
			                         val->valuestring, strlen(val->valuestring));
		else if (cJSON_IsNumber(val))
			got = (int)val->valuedouble;
		if (got != want)
			return false;
	}
	return true;
}

bool decide_point_sets_nothing(const struct runlog *l, const struct point *p, uint32_t unset)
{
	cJSON *rules;
	bool nothing = true;

	for (size_t d = 0; nothing && d < space_dims(l->sp); d++)
		if (space_rule_of(l->sp, d, NULL) == SPACE_RULE_NONE &&
		    space_level_text(l->sp, d, p->lv[d]) && !(unset >> d & 1u))
			nothing = false;
	if (!nothing || !space_has_rules(l->sp))
		return nothing;
	rules = ruletable_rules_json(l->sp, p);
	nothing = rules != NULL;   /* out of memory: say it sets something, keep the winner */
	for (const cJSON *r = rules ? rules->child : NULL; nothing && r; r = r->next)
		nothing = decide_rule_is_baseline(l, r);
	cJSON_Delete(rules);
	return nothing;
}

/* ---- guard sizes (docs/formats.md, results.json "per_size" and "guards") ---- */

/* Is run r a final-round run of entry x (NULL: the baseline)? */
static bool final_run_of(const struct session_run *r, const struct finalist *x, size_t dims)
{
	if (r->phase != PHASE_FINAL)
		return false;
	if (!x)
		return !r->has_point && !r->try_no;
	if (x->has_point)
		return r->has_point && !r->try_no && point_equal(&r->p, &x->p, dims);
	return r->try_no == x->try_no;
}

/* The medians at `bytes` of x's final runs (NULL: the baseline's), in round order, NAN
 * where a run failed. Returns how many runs (at most max). */
static size_t final_size_us(const struct runlog *l, const struct finalist *x,
                            size_t bytes, double *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < l->nruns && n < max; i++) {
		const struct session_run *r = &l->runs[i];
		const struct proto_size_result *res;

		if (!final_run_of(r, x, space_dims(l->sp)))
			continue;
		res = r->o.cls == OUTCOME_OK ? proto_report_size(&r->o.report, bytes) : NULL;
		out[n++] = res ? res->us.median : NAN;
	}
	return n;
}

void decide_size_compare(const struct runlog *l, const struct finalist *x, size_t bytes,
                         struct decide_size *c)
{
	double a[64], b[64], sd, lo, hi;
	size_t na = final_size_us(l, x, bytes, a, 64), nb = final_size_us(l, NULL, bytes, b, 64);
	size_t n = na < nb ? na : nb;
	int cfg, dof;

	memset(c, 0, sizeof *c);
	decide_finite_stats(b, nb, &c->base, &lo, &hi);
	decide_finite_stats(a, na, &c->best, &lo, &hi);
	c->pairs = decide_paired_ratio(a, b, n, &c->ratio, &c->lo, &c->hi);
	if (c->pairs >= 2)
		c->slower = c->lo > 1.0;
	/* one round: only beyond a known noise (without an estimate nothing is concluded);
	 * the noise, a scan of every final run, is computed only then */
	else if (c->pairs == 1 && c->ratio > 1.0 && decide_noise(l, &sd, &cfg, &dof))
		c->slower = c->ratio > 1.0 + 3.0 * sd;
}

/* What NCCL ran at `bytes` in the first ok final run of x (NULL: the baseline). */
static bool final_decision(const struct runlog *l, const struct finalist *x, size_t bytes,
                           struct proto_decision *d)
{
	for (size_t i = 0; i < l->nruns; i++) {
		const struct session_run *r = &l->runs[i];
		const struct proto_size_result *res;

		if (!final_run_of(r, x, space_dims(l->sp)) || r->o.cls != OUTCOME_OK)
			continue;
		res = proto_report_size(&r->o.report, bytes);
		if (!res)
			return false;
		*d = res->nccl;
		return d->known && !d->mixed && !d->symmetric;
	}
	return false;
}

/* What the decisions prove of a guard size's slowdown, into buf (returned): when NCCL ran
 * other choices there than in the baseline, the decision-only variables of x that ask
 * for them; when it ran the same, the cost is the process-level variables'. "" when the
 * reports do not say. */
static const char *guard_why(const struct runlog *l, const struct finalist *x,
                             size_t bytes, char *buf, size_t len)
{
	struct proto_decision a, b;
	size_t used = 0, start;
	bool same;

	buf[0] = '\0';
	if (!x->has_point || !final_decision(l, x, bytes, &a) || !final_decision(l, NULL, bytes, &b))
		return buf;
	same = a.algo == b.algo && a.proto == b.proto && a.ctas == b.ctas;
	used += (size_t)snprintf(buf, len, same ? "; NCCL ran there what it ran in the baseline "
	                         "(%s/%s on %d CTAs), so the cost is that of" : "; NCCL ran "
	                         "%s/%s on %d CTAs there instead of the baseline's", proto_nccl_algo_name(
	                         a.algo), proto_nccl_proto_name(a.proto), a.ctas);
	if (!same && used < len)
		used += (size_t)snprintf(buf + used, len - used, " %s/%s on %d CTAs, as one or more "
		                         "of these ask:",
		                         proto_nccl_algo_name(b.algo), proto_nccl_proto_name(b.proto),
		                         b.ctas);
	start = used < len ? used : len;
	for (size_t d = 0; d < space_dims(l->sp) && used < len; d++) {
		const char *val = space_level_text(l->sp, d, x->p.lv[d]);
		unsigned bits = ncclvars_decides(space_name(l->sp, d));
		bool asks = (bits & NCCLVARS_DECIDES_ALGO && a.algo != b.algo) ||
		            (bits & NCCLVARS_DECIDES_PROTO && a.proto != b.proto) ||
		            (bits & NCCLVARS_DECIDES_CTAS && a.ctas != b.ctas);

		if (!val || space_rule_of(l->sp, d, NULL) != SPACE_RULE_NONE ||
		    (same ? bits != 0 : !asks))
			continue;
		used += (size_t)snprintf(buf + used, len - used, " %s=%s", space_name(l->sp, d), val);
	}
	if (used == start)
		buf[0] = '\0';   /* no variable to name: the decisions prove nothing more */
	return buf;
}

/* A finalist that makes a guard size slower than the baseline is not recommended: it
 * loses its qualification, with a note naming the size and the ratio. */
void decide_guards_disqualify(const struct decide_view *v, struct final_state *f)
{
	const struct workload *w = v->wl;
	char desc[512], why[768];

	for (size_t j = 0; j < f->k + f->nt && f->rounds; j++) {
		struct finalist *x = decide_entry(f, j);
		struct decide_size c;

		for (size_t g = 0; x->qualified && g < w->nguard; g++) {
			decide_size_compare(&v->log, x, w->guard[g], &c);
			if (!c.slower)
				continue;
			x->qualified = false;
			x->guard_bytes = w->guard[g];
			x->guard_ratio = c.ratio;
			decide_note(v, "not recommended: %s makes the guard size %zu B slower "
			            "than NCCL's defaults (%.2fx the baseline's latency)%s",
			            x->has_point ? space_point_describe(v->log.sp, &x->p, desc,
			                                                sizeof desc) : "a try",
			            w->guard[g], c.ratio, guard_why(&v->log, x, w->guard[g], why,
			                                            sizeof why));
		}
	}
}
