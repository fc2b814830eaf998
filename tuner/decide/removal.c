/* removal.c - the ablation's verdict on removing variables from the reference (the
 * winner less what was dropped so far), with the session's pooled noise model
 * (decide_impl.h). Pure reading of the run log; no state. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "decide/decide.h"
#include "decide/decide_impl.h"

/* The objective (bytes 0) or the median latency at `bytes` of the runs runs[0..n) into
 * out (NAN where a run is missing, failed or does not say). */
static void runs_us(const struct runlog *l, const size_t *runs, size_t n, size_t bytes,
                    double *out)
{
	for (size_t r = 0; r < n; r++) {
		const struct session_run *x = runs[r] == SIZE_MAX ? NULL : &l->runs[runs[r]];
		const struct proto_size_result *res = x && x->o.cls == OUTCOME_OK && bytes
		                                    ? proto_report_size(&x->o.report, bytes) : NULL;

		out[r] = !x || x->o.cls != OUTCOME_OK ? NAN
		       : !bytes ? x->o.objective_us : res ? res->us.median : NAN;
	}
}

bool decide_removal_harmless(const struct decide_view *v, const struct point *q, uint32_t qu,
                             const size_t *runs, const size_t *ref, size_t n,
                             struct decide_removal *out)
{
	double a[DECIDE_ABLATE_ROUNDS_MAX], b[DECIDE_ABLATE_ROUNDS_MAX], base[64];

	memset(out, 0, sizeof *out);
	if (n > DECIDE_ABLATE_ROUNDS_MAX)
		n = DECIDE_ABLATE_ROUNDS_MAX;
	runs_us(&v->log, runs, n, 0, a);
	runs_us(&v->log, ref, n, 0, b);
	out->judged = decide_pair_judge(&v->log, 0, b, a, n, DECIDE_ABLATE_ALLOWED,
	                                &out->obj) == 0;
	if (!out->judged || out->obj.call != GUARDSTAT_SAFE)
		return false;
	for (size_t g = 0; g < v->wl->nguard; g++) {
		size_t bytes = v->wl->guard[g];
		size_t nb = decide_final_size_us(&v->log, NULL, bytes, base, 64);

		if (runlog_defaults_at(v->log.sp, q, qu, bytes))
			continue;   /* NCCL's defaults there: safe by identity */
		runs_us(&v->log, runs, n, bytes, a);
		out->guard_judged = decide_pair_judge(&v->log, bytes, base, a, nb < n ? nb : n,
		                                      DECIDE_GUARD_ALLOWED, &out->guard) == 0;
		if (!out->guard_judged || out->guard.call != GUARDSTAT_SAFE) {
			out->guard_at = bytes;
			return false;
		}
	}
	return true;
}

const char *decide_removal_why(const struct decide_removal *m, char *buf, size_t len)
{
	if (m->guard_at && m->guard_judged)
		snprintf(buf, len, "without it the guard size %zu B is %s (%.3fx the baseline "
		         "[95%% %.3fx .. %.3fx], allowed %.2fx)", m->guard_at,
		         m->guard.call == GUARDSTAT_UNSAFE ? "slower" : "not shown safe",
		         m->guard.ratio, m->guard.lo, m->guard.hi, DECIDE_GUARD_ALLOWED);
	else if (m->guard_at)
		snprintf(buf, len, "without it the guard size %zu B was not measured in two "
		         "rounds", m->guard_at);
	else if (m->obj.call == GUARDSTAT_UNSAFE)
		snprintf(buf, len, "without it %.3fx slower [95%% %.3fx .. %.3fx] over %d rounds, "
		         "beyond the allowed %.2fx", m->obj.ratio, m->obj.lo, m->obj.hi,
		         m->obj.rounds, DECIDE_ABLATE_ALLOWED);
	else
		snprintf(buf, len, "removing it is not shown harmless: %.3fx [95%% %.3fx .. "
		         "%.3fx] over %d rounds, allowed %.2fx", m->obj.ratio, m->obj.lo,
		         m->obj.hi, m->obj.rounds, DECIDE_ABLATE_ALLOWED);
	return buf;
}
