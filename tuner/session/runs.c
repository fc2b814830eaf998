/* runs.c - the vocabulary of a session's runs (runs.h): phase names, describing a run,
 * session time, and what the runs so far say (the best point, the last outcome of a
 * point or a try, wrong sums, the baseline). At the bottom of session/: it calls no other
 * file of it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "session/session_priv.h"

/* One vocabulary of phases, the journal reader's (result/record.h), in the same order. */
_Static_assert(PHASE_BASELINE == (int)RECORD_BASELINE && PHASE_SEARCH == (int)RECORD_SEARCH &&
               PHASE_RETRY == (int)RECORD_RETRY && PHASE_WARM == (int)RECORD_WARM &&
               PHASE_FINAL == (int)RECORD_FINAL && PHASE_TRY == (int)RECORD_TRY &&
               PHASE_SWEEP == (int)RECORD_SWEEP && PHASE_ABLATE == (int)RECORD_ABLATE,
               "enum session_phase follows enum record_phase");

const char *session_phase_name(enum session_phase ph)
{
	return record_phase_name((int)ph);
}

int session_phase_parse(const char *s, enum session_phase *out)
{
	int ph = record_phase_parse(s);

	if (ph < 0)
		return -1;
	*out = (enum session_phase)ph;
	return 0;
}

double session_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double session_elapsed(const nccltune_session *s)
{
	return s->run.t_offset + (s->run.t_start > 0 ? session_clock() - s->run.t_start : 0);
}

bool session_is_model(const nccltune_session *s)
{
	return strcmp(s->run.source, "model") == 0;
}

/* Is r a run of the configuration (p, try_no)? A point is a point whoever asked for it
 * (search or try); without a point, try_no tells an off-space try from the baseline. */
bool session_same_config(const struct session_run *r, const struct point *p, size_t try_no,
                         size_t dims)
{
	if (!p)
		return !r->has_point && r->try_no == try_no;
	return r->has_point && r->unset == 0 && point_equal(&r->p, p, dims);
}

char *session_run_describe(const nccltune_session *s, const struct session_run *r, char *buf,
                           size_t len)
{
	if (r->try_no && !r->has_point)
		return tryconf_describe(&s->cfg.tries[r->try_no - 1], s->run.sp, buf, len);
	if (r->has_point && r->unset) {
		/* the point less the dimensions it leaves unset */
		size_t used = 0;

		if (len)
			buf[0] = '\0';
		for (size_t d = 0; d < space_dims(s->run.sp) && used < len; d++) {
			const char *t = space_level_text(s->run.sp, d, r->p.lv[d]);
			int n;

			if (!t || (r->unset >> d & 1u))
				continue;
			n = snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "",
			             space_name(s->run.sp, d), t);
			if (n < 0)
				break;
			used += (size_t)n;
		}
		return buf;
	}
	if (r->has_point)
		return space_point_describe(s->run.sp, &r->p, buf, len);
	if (len)
		buf[0] = '\0';
	return buf;
}

int session_point_best(const nccltune_session *s, double *best_us, struct point *p)
{
	int found = 0;

	for (size_t i = 0; i < s->run.nruns; i++) {
		const struct session_run *r = &s->run.runs[i];

		if (!r->has_point || r->o.cls != OUTCOME_OK || r->phase == PHASE_FINAL ||
		    r->phase == PHASE_ABLATE)
			continue;
		if (!found || r->o.objective_us < *best_us) {
			*best_us = r->o.objective_us;
			if (p)
				*p = r->p;
			found = 1;
		}
	}
	return found;
}

/* The last outcome learned for p (search, warm or retry), or NULL. */
const struct outcome *session_known_outcome(const nccltune_session *s, const struct point *p)
{
	for (size_t i = s->run.nruns; i-- > 0;) {
		const struct session_run *r = &s->run.runs[i];

		if (r->has_point && r->phase != PHASE_FINAL && r->phase != PHASE_ABLATE &&
		    point_equal(&r->p, p, space_dims(s->run.sp)))
			return &r->o;
	}
	return NULL;
}

/* Did p ever compute a wrong sum? Such a point is never recommended. */
bool session_ever_wrong(const nccltune_session *s, const struct point *p)
{
	for (size_t i = 0; i < s->run.nruns; i++)
		if (s->run.runs[i].has_point && s->run.runs[i].unset == 0 &&
		    s->run.runs[i].o.cls == OUTCOME_VERIFY &&
		    point_equal(&s->run.runs[i].p, p, space_dims(s->run.sp)))
			return true;
	return false;
}

/* The last outcome of try try_no's own runs (try, retry), or NULL when it never ran. */
const struct outcome *session_try_outcome(const nccltune_session *s, size_t try_no)
{
	for (size_t i = s->run.nruns; i-- > 0;) {
		const struct session_run *r = &s->run.runs[i];

		if (r->try_no == try_no && (r->phase == PHASE_TRY || r->phase == PHASE_RETRY))
			return &r->o;
	}
	return NULL;
}

/* Did the configuration (p, try_no) ever compute a wrong sum? */
bool session_config_ever_wrong(const nccltune_session *s, const struct point *p, size_t try_no)
{
	for (size_t i = 0; i < s->run.nruns; i++)
		if (s->run.runs[i].o.cls == OUTCOME_VERIFY &&
		    session_same_config(&s->run.runs[i], p, try_no, space_dims(s->run.sp)))
			return true;
	return false;
}

/* Is the strategy's ranked point `ranked` the candidate `full`? Two-level: its outer
 * point (the strategy ranks outer points; the candidate is the best combination swept
 * there). */
bool session_rank_match(const nccltune_session *s, const struct point *full,
                        const struct point *ranked)
{
	struct point q;

	if (!s->run.tl || !twolevel_outer_space(s->run.tl))
		return point_equal(full, ranked, space_dims(s->run.sp));
	twolevel_outer_of(s->run.tl, full, &q);
	return point_equal(&q, ranked, space_dims(twolevel_outer_space(s->run.tl)));
}

/* The baseline as a point of the space, when every dimension can be left unset. */
bool session_baseline_point(const nccltune_session *s, struct point *p)
{
	memset(p, 0, sizeof *p);
	for (size_t d = 0; d < space_dims(s->run.sp); d++) {
		bool found = false;

		for (size_t l = 0; l < space_levels(s->run.sp, d) && !found; l++) {
			if (!space_level_text(s->run.sp, d, l)) {
				p->lv[d] = (uint32_t)l;
				found = true;
			}
		}
		if (!found)
			return false;
	}
	return true;
}

const struct session_run *session_baseline_ok_run(const nccltune_session *s)
{
	for (size_t i = 0; i < s->run.nruns; i++) {
		const struct session_run *r = &s->run.runs[i];

		if (r->phase == PHASE_BASELINE && !r->has_point && !r->try_no &&
		    r->o.cls == OUTCOME_OK)
			return r;
	}
	return NULL;
}

const struct outcome *session_baseline_outcome(const nccltune_session *s)
{
	const struct outcome *o = NULL;

	for (size_t i = 0; i < s->run.nruns; i++)
		if (!s->run.runs[i].has_point && s->run.runs[i].try_no == 0 &&
		    (s->run.runs[i].phase == PHASE_BASELINE || s->run.runs[i].phase == PHASE_RETRY))
			o = &s->run.runs[i].o;
	return o;
}

void *session_array_grow(void *arr, size_t *cap, size_t n, size_t size, size_t first)
{
	size_t ncap;
	void *moved;

	if (n < *cap)
		return arr;
	ncap = *cap ? *cap * 2 : first;
	moved = realloc(arr, ncap * size);
	if (moved)
		*cap = ncap;
	return moved;
}
