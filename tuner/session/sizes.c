/* sizes.c - the per-size part of a session's results.json, rendered from the final
 * phase's decisions (decide/decide.h): best.rules (a rule equal to what NCCL ran in the
 * baseline is NCCL's own, dropped with a note) and the per_size table of tuned and guard
 * sizes, baseline against best, with the guards' verdict. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide/decide.h"
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
	struct runlog l = session_runlog(s);
	cJSON *a = cJSON_AddArrayToObject(doc, "per_size"), *g, *gs;
	bool measured = true, slower = false, ok = a != NULL;

	for (size_t i = 0; ok && i < w->n + w->nguard; i++) {
		size_t bytes = i < w->n ? w->e[i].bytes : w->guard[i - w->n];
		cJSON *o = cJSON_CreateObject(), *ci;
		struct decide_size c;

		if (win)
			decide_size_compare(&l, win, bytes, &c);
		else {
			decide_size_compare(&l, NULL, bytes, &c);
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
