/* runs.c - the vocabulary of a session's runs (runs.h): phase names, describing a run,
 * session time, and what the runs so far say (the best point, the last outcome of a
 * point or a try, wrong sums, the baseline). At the bottom of session/: it calls no other
 * file of it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "session/session_priv.h"

const char *session_phase_name(enum session_phase ph)
{
	return record_phase_name((int)ph);
}

double session_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

bool session_replaying(const nccltune_session *s)
{
	return s->run.qpos < s->run.nqueue;
}

double session_elapsed(const nccltune_session *s)
{
	return s->run.t_offset + (s->run.t_start > 0 ? session_clock() - s->run.t_start : 0);
}

double session_deadline(const nccltune_session *s, double own, bool *capped)
{
	double left = s->cfg.time_limit_s - session_elapsed(s);

	*capped = s->cfg.time_limit_s > 0 && left < own;
	return *capped ? left : own;
}

bool session_time_up(const nccltune_session *s)
{
	return s->cfg.time_limit_s > 0 && session_elapsed(s) >= s->cfg.time_limit_s;
}

bool session_is_model(const nccltune_session *s)
{
	return strcmp(s->run.source, "model") == 0;
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

struct runlog session_runlog(const nccltune_session *s)
{
	struct runlog l = {s->run.sp, s->run.tl, s->run.pr, s->run.runs, s->run.nruns,
	                   s->run.inner, s->run.ninner, s->run.final_from};

	return l;
}

size_t session_search_limit(const nccltune_session *s)
{
	return decide_search_limit(s->cfg.budget, s->cfg.ntries);
}

bool session_budget_step(nccltune_session *s)
{
	bool applied = false;

	while (s->run.ext_pos < s->run.nexts && s->run.ext[s->run.ext_pos].at <= s->run.nruns) {
		s->cfg.budget = s->run.ext[s->run.ext_pos++].budget;
		applied = true;
	}
	if (applied)
		s->run.search_limit = session_search_limit(s);
	return applied;
}

double session_plain_wall(const nccltune_session *s)
{
	struct runlog l = session_runlog(s);

	return runlog_plain_wall(&l);
}

int session_final_time_runs(const nccltune_session *s)
{
	return decide_final_time_runs(s->cfg.budget, s->cfg.ntries);
}

const struct outcome *session_known_outcome(const nccltune_session *s, const struct point *p)
{
	struct runlog l = session_runlog(s);

	return runlog_known_outcome(&l, p);
}

bool session_ever_wrong(const nccltune_session *s, const struct point *p)
{
	struct runlog l = session_runlog(s);

	return runlog_ever_wrong(&l, p);
}

const struct outcome *session_try_outcome(const nccltune_session *s, size_t try_no)
{
	struct runlog l = session_runlog(s);

	return runlog_try_outcome(&l, try_no);
}

bool session_config_ever_wrong(const nccltune_session *s, const struct point *p, size_t try_no)
{
	struct runlog l = session_runlog(s);

	return runlog_config_ever_wrong(&l, p, try_no);
}

bool session_baseline_point(const nccltune_session *s, struct point *p)
{
	return runlog_baseline_point(s->run.sp, p);
}

const struct session_run *session_baseline_ok_run(const nccltune_session *s)
{
	struct runlog l = session_runlog(s);

	return runlog_baseline_ok_run(&l);
}

const struct outcome *session_baseline_outcome(const nccltune_session *s)
{
	struct runlog l = session_runlog(s);

	return runlog_baseline_outcome(&l);
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
