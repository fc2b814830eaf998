/* runlog.c - what the runs so far say (runlog.h): the last outcome of a point or a try,
 * wrong sums, the baseline. Reads only. */
#include <string.h>

#include "decide/runlog.h"

/* A point is a point whoever asked for it (search or try); without a point, try_no
 * tells an off-space try from the baseline. */
bool runlog_same_config(const struct session_run *r, const struct point *p, size_t try_no,
                        size_t dims)
{
	if (!p)
		return !r->has_point && r->try_no == try_no;
	return r->has_point && r->unset == 0 && point_equal(&r->p, p, dims);
}

const struct outcome *runlog_known_outcome(const struct runlog *l, const struct point *p)
{
	for (size_t i = l->nruns; i-- > 0;) {
		const struct session_run *r = &l->runs[i];

		if (r->has_point && r->phase != PHASE_FINAL && r->phase != PHASE_ABLATE &&
		    point_equal(&r->p, p, space_dims(l->sp)))
			return &r->o;
	}
	return NULL;
}

bool runlog_ever_wrong(const struct runlog *l, const struct point *p)
{
	for (size_t i = 0; i < l->nruns; i++)
		if (l->runs[i].has_point && l->runs[i].unset == 0 &&
		    l->runs[i].o.cls == OUTCOME_VERIFY &&
		    point_equal(&l->runs[i].p, p, space_dims(l->sp)))
			return true;
	return false;
}

const struct outcome *runlog_try_outcome(const struct runlog *l, size_t try_no)
{
	for (size_t i = l->nruns; i-- > 0;) {
		const struct session_run *r = &l->runs[i];

		if (r->try_no == try_no && (r->phase == PHASE_TRY || r->phase == PHASE_RETRY))
			return &r->o;
	}
	return NULL;
}

bool runlog_config_ever_wrong(const struct runlog *l, const struct point *p, size_t try_no)
{
	for (size_t i = 0; i < l->nruns; i++)
		if (l->runs[i].o.cls == OUTCOME_VERIFY &&
		    runlog_same_config(&l->runs[i], p, try_no, space_dims(l->sp)))
			return true;
	return false;
}

/* Two-level: the strategy ranks outer points; the candidate is the best combination
 * swept there. */
bool runlog_rank_match(const struct runlog *l, const struct point *full,
                       const struct point *ranked)
{
	struct point q;

	if (!l->tl || !twolevel_outer_space(l->tl))
		return point_equal(full, ranked, space_dims(l->sp));
	twolevel_outer_of(l->tl, full, &q);
	return point_equal(&q, ranked, space_dims(twolevel_outer_space(l->tl)));
}

bool runlog_baseline_point(const space *sp, struct point *p)
{
	memset(p, 0, sizeof *p);
	for (size_t d = 0; d < space_dims(sp); d++) {
		long l = space_null_level(sp, d);

		if (l < 0)
			return false;
		p->lv[d] = (uint32_t)l;
	}
	return true;
}

const struct session_run *runlog_baseline_ok_run(const struct runlog *l)
{
	for (size_t i = 0; i < l->nruns; i++) {
		const struct session_run *r = &l->runs[i];

		if (r->phase == PHASE_BASELINE && !r->has_point && !r->try_no &&
		    r->o.cls == OUTCOME_OK)
			return r;
	}
	return NULL;
}

const struct outcome *runlog_baseline_outcome(const struct runlog *l)
{
	const struct outcome *o = NULL;

	for (size_t i = 0; i < l->nruns; i++)
		if (!l->runs[i].has_point && l->runs[i].try_no == 0 &&
		    (l->runs[i].phase == PHASE_BASELINE || l->runs[i].phase == PHASE_RETRY))
			o = &l->runs[i].o;
	return o;
}

double runlog_plain_wall(const struct runlog *l)
{
	double sum = 0;
	size_t n = 0;

	for (size_t i = 0; i < l->nruns; i++) {
		if (l->runs[i].o.cls == OUTCOME_OK && l->runs[i].phase != PHASE_SWEEP) {
			sum += l->runs[i].o.wall_s;
			n++;
		}
	}
	return n ? sum / (double)n : 0;
}

bool runlog_defaults_at(const space *sp, const struct point *p, uint32_t unset, size_t bytes)
{
	for (size_t d = 0; d < space_dims(sp); d++) {
		uint64_t at = 0;
		enum space_rule_kind k = space_rule_of(sp, d, &at);

		if (!space_level_text(sp, d, p->lv[d]) || (unset >> d & 1u))
			continue;
		if (k == SPACE_RULE_NONE || at == bytes)
			return false;
	}
	return true;
}
