/* sizes.c - how one run varies (the final repeats' pooled spread) and the per-size part
 * of a session's results.json: best.rules (a rule equal to
 * what NCCL ran in the baseline is NCCL's own, null), the guard sizes' verdict (a finalist
 * that slows a guard beyond the measured noise is out) and the per_size table of tuned
 * and guard sizes, baseline against best. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncclvars.h"
#include "result/result.h"
#include "session/final.h"
#include "run/ruletable.h"
#include "session/session_priv.h"

/* Is q a final-phase run that worked, of the same configuration as r? */
static bool same_final_ok(const nccltune_session *s, const struct session_run *q,
                          const struct session_run *r)
{
	return q->phase == PHASE_FINAL && q->o.cls == OUTCOME_OK &&
	       session_same_config(q, r->has_point ? &r->p : NULL, r->try_no,
	                           space_dims(s->run.sp));
}

/* How much one run varies: the pooled standard deviation of log(objective) over the
 * configurations the final phase re-measured (baseline, finalists, tries), each about
 * its own mean. Returns false when the repeats give fewer than 2 degrees of freedom. */
bool session_final_noise(const nccltune_session *s, double *sd, int *configs, int *dof)
{
	size_t groups = 0, df = 0;
	double ss = 0;

	for (size_t i = 0; i < s->run.nruns; i++) {
		const struct session_run *r = &s->run.runs[i];
		double sum = 0, mean;
		size_t n = 0;
		bool seen = false;

		if (r->phase != PHASE_FINAL || r->o.cls != OUTCOME_OK)
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = same_final_ok(s, &s->run.runs[j], r);
		if (seen)
			continue;   /* counted with the first run of its configuration */
		for (size_t j = i; j < s->run.nruns; j++)
			if (same_final_ok(s, &s->run.runs[j], r)) {
				sum += log(s->run.runs[j].o.objective_us);
				n++;
			}
		mean = sum / (double)n;
		for (size_t j = i; j < s->run.nruns; j++)
			if (same_final_ok(s, &s->run.runs[j], r))
				ss += pow(log(s->run.runs[j].o.objective_us) - mean, 2);
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
static struct proto_decision baseline_decision(const nccltune_session *s, size_t bytes)
{
	const struct session_run *b = session_baseline_ok_run(s);
	const struct proto_size_result *x = b ? proto_report_size(&b->o.report, bytes) : NULL;
	struct proto_decision none;

	if (x)
		return x->nccl;
	memset(&none, 0, sizeof none);
	return none;
}

/* Does every choice rule r sets equal what NCCL ran in the baseline at its size (so
 * that forcing it changes nothing there)? */
static bool rule_is_baseline(const nccltune_session *s, const cJSON *r)
{
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(r, "bytes");
	struct proto_decision d = baseline_decision(s, cJSON_IsNumber(b) ? (size_t)b->valuedouble : 0);
	const char *keys[] = {"algo", "proto", "ctas"};

	if (!d.known || d.symmetric || d.mixed)
		return false;
	for (size_t k = 0; k < 3; k++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, keys[k]);
		int want = k == 0 ? d.algo : k == 1 ? d.proto : d.ctas, got = -2;

		if (cJSON_IsNull(v))
			continue;
		if (cJSON_IsString(v))
			got = ncclvars_word_find(k == 0 ? NCCLVARS_ALGOS : NCCLVARS_PROTOS,
			                         v->valuestring, strlen(v->valuestring));
		else if (cJSON_IsNumber(v))
			got = (int)v->valuedouble;
		if (got != want)
			return false;
	}
	return true;
}

/* A rule all of whose choices equal what NCCL ran in the baseline at that size forces
 * nothing NCCL would not do: dropped, with a note. A rule that differs in any choice is
 * kept whole, as measured: its choices act together (forcing Simple while leaving the
 * algorithm to NCCL can make NCCL's cost model pick another algorithm than the Ring the
 * rule measured with), so none of them is left to NCCL on its own. Can't fail. */
static void rules_drop_baseline(nccltune_session *s, cJSON *rules)
{
	cJSON *r = rules ? rules->child : NULL;

	while (r) {
		cJSON *next = r->next;
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(r, "bytes");

		if (rule_is_baseline(s, r)) {
			session_note(&s->out, "best.rules %.0f B: what NCCL already ran there in the "
			             "baseline: left to NCCL", cJSON_IsNumber(b) ? b->valuedouble : 0);
			cJSON_Delete(cJSON_DetachItemViaPointer(rules, r));
		}
		r = next;
	}
}

bool session_point_sets_nothing(const nccltune_session *s, const struct point *p,
                                uint32_t unset)
{
	cJSON *rules;
	bool nothing = true;

	for (size_t d = 0; nothing && d < space_dims(s->run.sp); d++)
		if (space_rule_of(s->run.sp, d, NULL) == SPACE_RULE_NONE &&
		    space_level_text(s->run.sp, d, p->lv[d]) && !(unset >> d & 1u))
			nothing = false;
	if (!nothing || !space_has_rules(s->run.sp))
		return nothing;
	rules = ruletable_rules_json(s->run.sp, p);
	nothing = rules != NULL;   /* out of memory: say it sets something, keep the winner */
	for (const cJSON *r = rules ? rules->child : NULL; nothing && r; r = r->next)
		nothing = rule_is_baseline(s, r);
	cJSON_Delete(rules);
	return nothing;
}

/* best.rules (docs/formats.md) of a session whose space has per-size choices: the rules
 * of p (the recommendation: the winner less what the ablation dropped), none (p NULL)
 * for NCCL's defaults or an off-space try. True unless out of
 * memory (or nothing to add to). */
bool session_rules_add(nccltune_session *s, cJSON *doc, const struct point *p)
{
	cJSON *best = cJSON_GetObjectItemCaseSensitive(doc, "best"), *rules;

	if (!space_has_rules(s->run.sp) || !cJSON_IsObject(best))
		return true;
	rules = p ? ruletable_rules_json(s->run.sp, p) : cJSON_CreateArray();
	rules_drop_baseline(s, rules);
	if (rules && cJSON_AddItemToObject(best, "rules", rules))
		return true;
	cJSON_Delete(rules);
	return false;
}

/* ---- guard sizes (docs/formats.md, results.json "per_size" and "guards") ---- */

/* Is session run r a final-round run of entry x (NULL: the baseline)? */
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
static size_t final_size_us(const nccltune_session *s, const struct finalist *x,
                            size_t bytes, double *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < s->run.nruns && n < max; i++) {
		const struct session_run *r = &s->run.runs[i];
		const struct proto_size_result *res;

		if (!final_run_of(r, x, space_dims(s->run.sp)))
			continue;
		res = r->o.cls == OUTCOME_OK ? proto_report_size(&r->o.report, bytes) : NULL;
		out[n++] = res ? res->us.median : NAN;
	}
	return n;
}

struct size_cmp { double base, best, ratio, lo, hi; size_t pairs; bool slower; };

/* x (NULL: the baseline) against the baseline at `bytes`, paired by final round. Slower:
 * the ratio's 95% interval entirely above 1, or with one round above 1 + 3 run_sd. */
static void size_compare(const nccltune_session *s, const struct finalist *x, size_t bytes,
                         struct size_cmp *c)
{
	double a[64], b[64], sd, l, h;
	size_t na = final_size_us(s, x, bytes, a, 64), nb = final_size_us(s, NULL, bytes, b, 64);
	size_t n = na < nb ? na : nb;
	int cfg, dof;

	memset(c, 0, sizeof *c);
	session_finite_stats(b, nb, &c->base, &l, &h);
	session_finite_stats(a, na, &c->best, &l, &h);
	c->pairs = session_paired_ratio(a, b, n, &c->ratio, &c->lo, &c->hi);
	if (c->pairs >= 2)
		c->slower = c->lo > 1.0;
	/* one round: only beyond a known noise (without an estimate nothing is concluded);
	 * the noise, a scan of every final run, is computed only then */
	else if (c->pairs == 1 && c->ratio > 1.0 && session_final_noise(s, &sd, &cfg, &dof))
		c->slower = c->ratio > 1.0 + 3.0 * sd;
}

/* What NCCL ran at `bytes` in the first ok final run of x (NULL: the baseline). */
static bool final_decision(const nccltune_session *s, const struct finalist *x, size_t bytes,
                           struct proto_decision *d)
{
	for (size_t i = 0; i < s->run.nruns; i++) {
		const struct session_run *r = &s->run.runs[i];

		const struct proto_size_result *res;

		if (!final_run_of(r, x, space_dims(s->run.sp)) || r->o.cls != OUTCOME_OK)
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
static const char *guard_why(const nccltune_session *s, const struct finalist *x,
                             size_t bytes, char *buf, size_t len)
{
	struct proto_decision a, b;
	size_t used = 0;
	bool same;

	buf[0] = '\0';
	if (!x->has_point || !final_decision(s, x, bytes, &a) || !final_decision(s, NULL, bytes, &b))
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
	size_t start = used < len ? used : len;

	for (size_t d = 0; d < space_dims(s->run.sp) && used < len; d++) {
		const char *v = space_level_text(s->run.sp, d, x->p.lv[d]);
		unsigned bits = ncclvars_decides(space_name(s->run.sp, d));
		bool asks = (bits & NCCLVARS_DECIDES_ALGO && a.algo != b.algo) ||
		            (bits & NCCLVARS_DECIDES_PROTO && a.proto != b.proto) ||
		            (bits & NCCLVARS_DECIDES_CTAS && a.ctas != b.ctas);

		if (!v || space_rule_of(s->run.sp, d, NULL) != SPACE_RULE_NONE ||
		    (same ? bits != 0 : !asks))
			continue;
		used += (size_t)snprintf(buf + used, len - used, " %s=%s", space_name(s->run.sp, d), v);
	}
	if (used == start)
		buf[0] = '\0';   /* no variable to name: the decisions prove nothing more */
	return buf;
}

/* A finalist that makes a guard size slower than the baseline is not recommended: it
 * loses its qualification, with a note naming the size and the ratio. Can't fail. */
void session_guards_disqualify(nccltune_session *s, struct final_state *f)
{
	const struct workload *w = &s->cfg.wl;
	char desc[512], why[768];

	for (size_t j = 0; j < f->k + f->nt && f->rounds; j++) {
		struct finalist *x = session_final_entry(f, j);
		struct size_cmp c;

		for (size_t g = 0; x->qualified && g < w->nguard; g++) {
			size_compare(s, x, w->guard[g], &c);
			if (!c.slower)
				continue;
			x->qualified = false;
			x->guard_bytes = w->guard[g];
			x->guard_ratio = c.ratio;
			session_note(&s->out, "not recommended: %s makes the guard size %zu B slower "
			             "than NCCL's defaults (%.2fx the baseline's latency)%s",
			             x->has_point ? space_point_describe(s->run.sp, &x->p, desc,
			                                                 sizeof desc) : "a try",
			             w->guard[g], c.ratio, guard_why(s, x, w->guard[g], why, sizeof why));
		}
	}
}

static bool add_num(cJSON *o, const char *key, double v)
{
	return isnan(v) ? cJSON_AddNullToObject(o, key) != NULL
	                : cJSON_AddNumberToObject(o, key, v) != NULL;
}

/* results.json "per_size" (each tuned and guard size: the baseline's and the best's
 * latency in the final rounds, the paired ratio and its interval) and "guards"
 * ({"verdict": "ok" | "slower" | "unmeasured", "sizes": [...]}). win NULL: the
 * baseline is the best. True unless out of memory. */
bool session_per_size_add(const nccltune_session *s, cJSON *doc, const struct finalist *win)
{
	const struct workload *w = &s->cfg.wl;
	cJSON *a = cJSON_AddArrayToObject(doc, "per_size"), *g, *gs;
	bool measured = true, slower = false, ok = a != NULL;

	for (size_t i = 0; ok && i < w->n + w->nguard; i++) {
		size_t bytes = i < w->n ? w->e[i].bytes : w->guard[i - w->n];
		cJSON *o = cJSON_CreateObject(), *ci;
		struct size_cmp c;

		if (win)
			size_compare(s, win, bytes, &c);
		else {
			size_compare(s, NULL, bytes, &c);
			c.best = c.base;
			c.slower = false;
		}
		ok = o && cJSON_AddItemToArray(a, o);
		if (!ok) {
			cJSON_Delete(o);
			break;
		}
		ok = cJSON_AddNumberToObject(o, "bytes", (double)bytes) &&
		     cJSON_AddStringToObject(o, "role", i < w->n ? "tuned" : "guard") &&
		     add_num(o, "baseline_us", c.base) && add_num(o, "best_us", c.best) &&
		     add_num(o, "ratio", win ? c.ratio : 1.0);
		ci = ok ? cJSON_AddArrayToObject(o, "ratio_ci95") : NULL;
		ok = ci && (win ? !isnan(c.lo) : false)
		     ? cJSON_AddItemToArray(ci, cJSON_CreateNumber(c.lo)) &&
		       cJSON_AddItemToArray(ci, cJSON_CreateNumber(c.hi))
		     : ci != NULL;
		if (i >= w->n) {
			measured &= isnan(c.base) ? false : true;
			slower |= c.slower;
		}
	}
	if (!ok || w->nguard == 0)
		return ok;
	g = cJSON_AddObjectToObject(doc, "guards");
	gs = g ? cJSON_AddArrayToObject(g, "sizes") : NULL;
	for (size_t i = 0; gs && i < w->nguard; i++)
		if (!cJSON_AddItemToArray(gs, cJSON_CreateNumber((double)w->guard[i])))
			gs = NULL;
	return gs && cJSON_AddStringToObject(g, "verdict", slower ? "slower" : measured ? "ok"
	                                                     : "unmeasured");
}
