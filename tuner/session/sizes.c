/* sizes.c - the per-size part of a session's results.json, rendered from the final
 * phase's decisions (decide/decide.h): best.rules (a rule equal to what NCCL ran in the
 * baseline is NCCL's own, dropped with a note) and the per_size table of tuned and guard
 * sizes, baseline against best, with the guards' verdict (result/result.h writes it). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide/decide.h"
#include "ncclvars.h"
#include "result/result.h"
#include "run/ruletable.h"
#include "session/session_priv.h"

/* A rule all of whose choices equal what NCCL ran in the baseline at that size forces
 * nothing NCCL would not do: dropped, with a note. A rule that differs in any choice is
 * kept whole, as measured: its choices act together (forcing Simple while leaving the
 * algorithm to NCCL can make NCCL's cost model pick another algorithm than the Ring the
 * rule measured with), so none of them is left to NCCL on its own. Can't fail. */
static void rules_drop_baseline(nccltune_session *s, cJSON *rules)
{
	cJSON *r = rules ? rules->child : NULL;
	struct runlog l = session_runlog(s);

	while (r) {
		cJSON *next = r->next;
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(r, "bytes");

		if (decide_rule_is_baseline(&l, r)) {
			session_note(&s->out, "best.rules %.0f B: what NCCL already ran there in the "
			             "baseline: left to NCCL", cJSON_IsNumber(b) ? b->valuedouble : 0);
			cJSON_Delete(cJSON_DetachItemViaPointer(rules, r));
		}
		r = next;
	}
}

/* One rule of the array rules (as ruletable_rules_json writes it) into o. */
static void rule_take(const cJSON *rule, struct summary_rule *o)
{
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(rule, "bytes");
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(rule, "algo");
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(rule, "proto");
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(rule, "ctas");

	o->bytes = cJSON_IsNumber(b) ? (uint64_t)b->valuedouble : 0;
	o->algo_word = cJSON_IsString(a) ? a->valuestring : NULL;
	o->proto_word = cJSON_IsString(p) ? p->valuestring : NULL;
	o->algo = o->algo_word ? ncclvars_word_find(NCCLVARS_ALGOS, o->algo_word,
	                                            strlen(o->algo_word)) : -1;
	o->proto = o->proto_word ? ncclvars_word_find(NCCLVARS_PROTOS, o->proto_word,
	                                              strlen(o->proto_word)) : -1;
	o->ctas = cJSON_IsNumber(c) ? (int)c->valuedouble : 0;
}

/* What NCCL ran at o->bytes in the first ok run of p that says (not a sweep, not mixed,
 * not a symmetric kernel), into o's ran fields; nothing when no run of p says. */
static void rule_ran(const nccltune_session *s, const struct point *p, struct summary_rule *o)
{
	struct runlog l = session_runlog(s);

	for (size_t i = 0; p && i < l.nruns; i++) {
		const struct session_run *x = &l.runs[i];
		const struct proto_size_result *res;

		/* a sweep's own report is of NCCL's choices (its own cases), not of its point */
		if (x->o.cls != OUTCOME_OK || x->phase == PHASE_SWEEP ||
		    !runlog_same_config(x, p, 0, space_dims(l.sp)))
			continue;
		res = proto_report_size(&x->o.report, o->bytes);
		if (!res || !res->nccl.known || res->nccl.mixed || res->nccl.symmetric ||
		    !proto_nccl_algo_name(res->nccl.algo) || !proto_nccl_proto_name(res->nccl.proto))
			continue;
		o->has_ran = true;
		o->ran_ctas = res->nccl.ctas;
		o->ran_algo_word = proto_nccl_algo_name(res->nccl.algo);
		o->ran_proto_word = proto_nccl_proto_name(res->nccl.proto);
		o->ran_algo = ncclvars_word_find(NCCLVARS_ALGOS, o->ran_algo_word,
		                                 strlen(o->ran_algo_word));
		o->ran_proto = ncclvars_word_find(NCCLVARS_PROTOS, o->ran_proto_word,
		                                  strlen(o->ran_proto_word));
		return;
	}
}

bool session_rules_fill(nccltune_session *s, struct summary *r, const struct point *p)
{
	cJSON *rules;
	const cJSON *it;

	if (!space_has_rules(s->run.sp) || !r->best.present)
		return true;
	rules = result_keep(r, p ? ruletable_rules_json(s->run.sp, p) : cJSON_CreateArray());
	if (!rules)
		return false;
	rules_drop_baseline(s, rules);
	r->has_rules = true;
	r->rules = calloc((size_t)cJSON_GetArraySize(rules) + 1, sizeof *r->rules);
	if (!r->rules)
		return false;
	cJSON_ArrayForEach(it, rules) {
		rule_take(it, &r->rules[r->nrules]);
		rule_ran(s, p, &r->rules[r->nrules++]);
	}
	return true;
}

const char *session_per_size_fill(const nccltune_session *s, const struct finalist *win,
                                  struct summary_size_cmp *out, size_t *n)
{
	const struct workload *w = &s->cfg.wl;
	struct runlog l = session_runlog(s);
	bool measured = true, slower = false, undecided = false, once = false;

	*n = 0;
	for (size_t i = 0; i < w->n + w->nguard; i++) {
		size_t bytes = i < w->n ? w->e[i].bytes : w->guard[i - w->n];
		struct summary_size_cmp *o = &out[(*n)++];
		struct decide_size c;

		if (win)
			decide_size_compare(&l, win, bytes, &c);
		else {
			decide_size_compare(&l, NULL, bytes, &c);
			c.best = c.base;
			c.slower = false;
		}
		o->bytes = bytes;
		o->guard = i >= w->n;
		o->baseline_us = c.base;
		o->best_us = c.best;
		o->ratio = win ? c.ratio : 1.0;
		o->has_ci = win && !isnan(c.lo);
		o->ci_lo = c.lo;
		o->ci_hi = c.hi;
		if (i >= w->n) {
			measured &= !isnan(c.base);
			slower |= c.slower;
			/* a guard is "ok" only when shown safe with the pooled noise model: one
			 * round (a time limit) judges nothing */
			undecided |= win && c.judged && c.call != GUARDSTAT_SAFE;
			once |= win && !c.judged && !isnan(c.base);
		}
	}
	return slower ? "slower" : undecided ? "not_shown_safe" : once ? "measured_once"
	     : measured ? "ok" : "unmeasured";
}
