/* loop.c - the loop of a session: the baseline, the user's tries, the warm start, the
 * strategy's suggestions until a stop rule says enough (budget, time limit, space
 * exhausted, a stuck strategy), then the final phase (decide/: asked for each run, told
 * its outcome), results.json from its result, the exports and the summary. A run that may be a flake is run once more; only the last outcome is learned
 * from. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/locate.h"
#include "session/progress.h"
#include "session/session_priv.h"

/* Run once, and once more if the outcome may be a flake (not after the --time-limit);
 * *o is the last outcome. */
static int measure(nccltune_session *s, enum session_phase phase, const struct point *p,
                   size_t try_no, struct outcome *o)
{
	size_t limit = phase == PHASE_BASELINE || phase == PHASE_TRY ? (size_t)s->cfg.budget
	                                                             : session_search_limit(s);
	int rc = session_execute(s, phase, p, try_no, o);

	if (rc)
		return rc;
	if (outcome_class_flaky(o->cls) && s->run.nruns < limit &&
	    (session_replaying(s) || !session_time_up(s))) {
		struct outcome *again = malloc(sizeof *again);

		if (!again)
			return session_fail(s, NCCLTUNE_ERROR, "out of memory");
		rc = session_execute(s, PHASE_RETRY, p, try_no, again);
		if (rc == 0)
			*o = *again;
		free(again);
	}
	return rc;
}

/* What failed deterministically in the warm-start session on the same GPUs is known
 * before a run is spent on it: the pruner and the strategy learn it first. */
static int observe_warm_failures(nccltune_session *s)
{
	const cJSON *warm = s->run.warm;
	const cJSON *fails = warm ? cJSON_GetObjectItemCaseSensitive(warm, "failures") : NULL;
	const cJSON *f;
	struct outcome *o;

	if (!cJSON_IsArray(fails))
		return NCCLTUNE_OK;
	o = calloc(1, sizeof *o);
	if (!o)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	cJSON_ArrayForEach(f, fails) {
		const cJSON *pt = cJSON_GetObjectItemCaseSensitive(f, "point");
		const cJSON *cls = cJSON_GetObjectItemCaseSensitive(f, "outcome");
		struct point p;

		if (env_point_levels_from_json(s->run.sp, pt, &p) != 0 || !cJSON_IsString(cls) ||
		    outcome_class_parse(cls->valuestring, &o->cls) != 0 || o->cls == OUTCOME_OK)
			continue;
		o->objective_us = NAN;
		snprintf(o->error, sizeof o->error, "failed in the warm-start session");
		session_observe(s, &p, o);
	}
	free(o);
	return NCCLTUNE_OK;
}

/* The warm start's best old configurations, re-measured first (those of the space
 * that are allowed, not pruned and not measured yet). */
static int run_warm(nccltune_session *s, struct outcome *o)
{
	const cJSON *cfg = s->run.warm ? cJSON_GetObjectItemCaseSensitive(s->run.warm, "configs")
	                               : NULL;
	const cJSON *c;

	if (!cJSON_IsArray(cfg))
		return 0;
	cJSON_ArrayForEach(c, cfg) {
		struct point p;
		int rc;

		if (session_search_done(s))
			break;
		if (env_point_levels_from_json(s->run.sp, c, &p) != 0 ||
		    !space_allows(s->run.sp, &p) || prune_rejects(s->run.pr, &p) ||
		    session_known_outcome(s, &p))
			continue;
		rc = measure(s, PHASE_WARM, &p, 0, o);
		if (rc)
			return rc;
		session_observe(s, &p, o);
	}
	return 0;
}

/* The user's own configurations, right after the baseline: each counts against the
 * budget, is retried once on a flake like any run, and teaches the strategy when it is
 * a point of the space. */
static int run_tries(nccltune_session *s, struct outcome *o)
{
	for (size_t i = 0; i < s->cfg.ntries; i++) {
		const struct tryconf *t = &s->cfg.tries[i];
		int rc;

		session_budget_step(s);
		if (s->run.nruns >= (size_t)s->cfg.budget) {
			session_warn(&s->out, "the budget is spent: %zu configuration(s) of --try "
			             "not run", s->cfg.ntries - i);
			break;
		}
		rc = measure(s, PHASE_TRY, t->in_space ? &t->p : NULL, i + 1, o);
		if (rc)
			return rc;
		if (t->in_space)
			session_observe(s, &t->p, o);
	}
	return 0;
}

/* The strategy's suggestions until a stop rule says enough; a suggestion already
 * measured is told again, not run, and too many of them in a row stop the search. */
static int run_search(nccltune_session *s, struct outcome *o)
{
	char e[1024];

	if (s->run.tl)
		return session_twolevel_search(s, o);

	while (!session_search_done(s)) {
		struct point p;
		const struct outcome *k;
		int rc = strategy_suggest(s->run.st, &p, e, sizeof e);

		if (rc == 1) {
			s->run.stop = STOP_EXHAUSTED;
			break;
		}
		if (rc != 0)
			return session_fail(s, NCCLTUNE_ERROR, "strategy %s: %s",
			                    s->cfg.strategy_name, e);
		k = session_known_outcome(s, &p);
		if (k) {
			/* Nothing is measured twice in the search: tell the strategy again. */
			struct outcome copy = *k;

			session_observe(s, &p, &copy);
			if (++s->run.duplicates >= SESSION_MAX_DUPLICATES) {
				s->run.stop = STOP_STUCK;
				break;
			}
			continue;
		}
		s->run.duplicates = 0;
		rc = measure(s, PHASE_SEARCH, &p, 0, o);
		if (rc)
			return rc;
		session_observe(s, &p, o);
	}
	return 0;
}

/* A budget too small for two final rounds of the best against the baseline (and the
 * tries) runs for minutes and can only end "not measured enough to recommend": said as
 * soon as the baseline has run (what it needs depends on the baseline and the tries),
 * not at the end. */
static void warn_small_budget(nccltune_session *s, const struct outcome *o)
{
	struct decide_view v;
	int need;

	if (o->cls != OUTCOME_OK)
		return;
	session_decide_view(s, &v);
	need = decide_budget_needed(&v);
	if (need > s->cfg.budget)
		session_warn(&s->out, "--budget %d is too small to measure the best against NCCL's "
		             "defaults twice: this session will end 'not measured enough to "
		             "recommend' and export nothing; --budget %d or more gives a "
		             "recommendation", s->cfg.budget, need);
}

/* The baseline, and from it the deadline of every later run: --timeout, else a
 * multiple of the baseline's wall time (at least SESSION_MIN_TIMEOUT_S). A baseline that
 * fails at stage args, or at init because the machine has no usable GPU, stops the
 * session: NCCLTUNE_USAGE or NCCLTUNE_ERROR with the probe's message. */
static int run_baseline(nccltune_session *s, struct outcome *o)
{
	struct point base;
	int rc = measure(s, PHASE_BASELINE, NULL, 0, o);

	if (rc)
		return rc;
	/* NCCL's defaults cannot even start: no configuration will, so stop before the
	 * budget is spent on the same failure */
	if (o->cls == OUTCOME_ARGS)
		return session_fail(s, NCCLTUNE_USAGE, "the probe refused its command line: %s "
		                    "(the baseline failed at stage args, so every run would; "
		                    "stopped after 1 run, recorded in %s/journal.jsonl)", o->error,
		                    s->run.dir);
	if (outcome_machine_unusable(o->cls, o->error))
		return session_fail(s, NCCLTUNE_ERROR, "the probe cannot run on this machine: %s "
		                    "(the baseline failed at stage init for a reason no NCCL "
		                    "variable changes; stopped after 1 run, recorded in "
		                    "%s/journal.jsonl)", o->error, s->run.dir);
	if (session_baseline_point(s, &base))
		session_observe(s, &base, o);
	if (s->cfg.timeout_opt_s > 0)
		s->run.timeout_s = s->cfg.timeout_opt_s;
	else if (o->cls == OUTCOME_OK)
		s->run.timeout_s = fmax(SESSION_MIN_TIMEOUT_S, SESSION_TIMEOUT_FACTOR * o->wall_s);
	else
		s->run.timeout_s = SESSION_BASELINE_TIMEOUT_S;
	warn_small_budget(s, o);
	return 0;
}

/* A run of the baseline, the tries, the warm start or the search was ended by the
 * --time-limit (not recorded): the search stops there and the final phase finds no
 * time left. Without a single run recorded there is nothing to conclude: NCCLTUNE_ERROR.
 * Returns 0 otherwise. */
static int out_of_time(nccltune_session *s)
{
	s->run.stop = STOP_TIME;
	if (s->run.nruns > 0)
		return 0;
	return session_fail(s, NCCLTUNE_ERROR, "the time limit (--time-limit %.0f s) ran out "
	                    "before NCCL's defaults finished their first run: nothing was "
	                    "measured (a larger --time-limit, or a --timeout for a probe that "
	                    "hangs)", s->cfg.time_limit_s);
}

/* The final phase (decide/decide.h): ask it for the next run, run it, tell it the
 * outcome, until it is done; *f is then its result (a run the time limit ended is not
 * told: the phase, asked again, is out of time). A wrong sum in a final round also
 * teaches the pruner, as every run of a point does. Returns 0, NCCLTUNE_INTERRUPTED,
 * SESSION_EXTENDED when the session reached the run its budget was extended at (the
 * runs so far are then history: final_from), or NCCLTUNE_ERROR with a message in
 * s->err. */
static int run_final(nccltune_session *s, struct final_state *f, struct outcome *o)
{
	struct decide_view v;
	struct decide_request req;
	int rc = 0;

	for (;;) {
		int next;

		if (session_budget_step(s)) {
			s->run.final_from = s->run.nruns;
			return SESSION_EXTENDED;
		}
		session_decide_view(s, &v);
		next = decide_next(f, &v, &req);
		if (f->out_of_time && s->run.stop == STOP_NONE)
			s->run.stop = STOP_TIME;
		if (next < 0)
			return session_fail(s, NCCLTUNE_ERROR, "%s", f->err);
		if (next == 0)
			return 0;
		rc = req.phase == PHASE_ABLATE
		     ? session_execute_unset(s, PHASE_ABLATE, &req.p, req.unset, o)
		     : session_execute(s, req.phase, req.has_point ? &req.p : NULL, req.try_no, o);
		if (rc == SESSION_OUT_OF_TIME)
			continue;   /* not told: asked again, the final phase finds no time left */
		if (rc)
			return rc;
		if (req.phase == PHASE_FINAL && req.has_point && o->cls == OUTCOME_VERIFY)
			prune_observe(s->run.pr, &req.p, o);
		session_decide_view(s, &v);
		decide_tell(f, &v, o);
	}
}

/* The end-of-session summary on the progress stream. */
static void show_summary(nccltune_session *s, const struct summary *res)
{
	struct session_ending end;
	char self[PATH_MAX + 8];

	memset(&end, 0, sizeof end);
	end.dir = s->run.dir;
	end.self = locate_self_command(self, sizeof self);
	end.wl = &s->cfg.wl;
	end.model = session_is_model(s) ? s->run.model_name : NULL;
	end.auto_model = s->run.auto_model;
	end.pr = s->run.pr;
	end.runs = s->run.runs;
	end.nruns = s->run.nruns;
	end.budget = s->cfg.budget;
	end.stop = s->run.stop;
	session_print_summary(&s->out, &end, res);
}

/* After the final rounds: results.json, the exports when a configuration worked, and
 * the summary, which the session keeps (s->run.result). Returns NCCLTUNE_OK,
 * NCCLTUNE_NO_CONFIG or NCCLTUNE_ERROR, with a message in s->err. */
static int conclude(nccltune_session *s, struct final_state *f)
{
	struct summary *res = NULL;
	int rc;

	session_line_end(&s->out);
	rc = session_results_write(s, f, &res);
	if (rc != NCCLTUNE_OK && rc != NCCLTUNE_NO_CONFIG)
		return rc;
	if (rc == NCCLTUNE_OK)
		session_exports_write(s);
	show_summary(s, res);
	/* the session keeps the result, for nccltune_session_summary_json */
	summary_destroy(s->run.result);
	s->run.result = res;
	if (rc == NCCLTUNE_NO_CONFIG)
		session_fail(s, NCCLTUNE_NO_CONFIG, "no configuration worked, not even NCCL's "
		             "defaults: see %s/journal.jsonl for each run's error", s->run.dir);
	return rc;
}

int session_loop(nccltune_session *s)
{
	struct outcome *o = malloc(sizeof *o);
	struct final_state f;
	int rc;

	memset(&f, 0, sizeof f);
	if (!o)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	s->run.search_limit = session_search_limit(s);
	rc = observe_warm_failures(s);
	if (rc == 0)
		rc = run_baseline(s, o);
	if (rc == 0)
		rc = run_tries(s, o);
	if (rc == 0)
		rc = run_warm(s, o);
	for (;;) {
		if (rc == 0)
			rc = run_search(s, o);
		if (rc == SESSION_OUT_OF_TIME)
			rc = out_of_time(s);
		if (rc == 0)
			rc = run_final(s, &f, o);
		if (rc != SESSION_EXTENDED)
			break;
		/* an extended budget: the search goes on, the final phase plans anew */
		decide_free(&f);
		s->run.stop = STOP_NONE;
		s->run.duplicates = 0;
		rc = 0;
	}
	if (rc == 0 && session_replaying(s) && session_diverge(s) != NCCLTUNE_OK)
		rc = NCCLTUNE_ERROR;
	if (rc == 0)
		rc = conclude(s, &f);
	if (rc == NCCLTUNE_INTERRUPTED) {
		session_line_end(&s->out);
		char self[PATH_MAX + 8];

		session_fail(s, NCCLTUNE_INTERRUPTED, "interrupted; resume with: %s run --resume %s",
		             locate_self_command(self, sizeof self), s->run.dir);
	}
	decide_free(&f);
	free(o);
	return rc;
}
