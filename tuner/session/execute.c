/* execute.c - one probe run of a session: its command line and environment, the
 * runner, the objective from the report, the journal record, the progress line and what
 * the pruner and the strategy learn; or, while a resumed session replays its journal,
 * the recorded run instead, until the journal and the loop part ways. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "run/locate.h"
#include "run/ruletable.h"
#include "run/runner.h"
#include "session/progress.h"
#include "session/session_priv.h"
#include "workflows/trust.h"

/* session_probe_argv, with the guard sizes appended when `guards` (the baseline's and
 * the final rounds' runs: guards are never tuned, only checked) and --window symmetric
 * when `symmetric` (a candidate that turns the server option on). */
static char **probe_argv(const nccltune_session *s, const char *extra, bool guards,
                         bool symmetric)
{
	struct workload wl = s->cfg.wl;
	size_t n = 0;
	char **argv;
	int k;

	while (s->run.probe_argv[n])
		n++;
	argv = calloc(n + WORKLOAD_PROBE_ARGS + 2, sizeof *argv);
	if (!argv)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		argv[i] = strdup(s->run.probe_argv[i]);
		if (!argv[i])
			goto fail;
	}
	if (extra) {
		argv[n] = strdup(extra);
		if (!argv[n])
			goto fail;
		return argv;
	}
	wl.window_symmetric = wl.window_symmetric || symmetric;
	k = workload_probe_args(&wl, guards, argv + n, WORKLOAD_PROBE_ARGS + 1);
	if (k < 0)
		goto fail;
	return argv;
fail:
	runner_free_argv(argv);
	return NULL;
}

char **session_probe_argv(const nccltune_session *s, const char *extra)
{
	return probe_argv(s, extra, false, false);
}

char **session_sweep_argv(const nccltune_session *s, bool symmetric)
{
	return probe_argv(s, NULL, true, symmetric);
}

bool session_is_guard(const nccltune_session *s, uint64_t bytes)
{
	for (size_t g = 0; g < s->cfg.wl.nguard; g++)
		if (s->cfg.wl.guard[g] == bytes)
			return true;
	return false;
}

/* Append r to the session's runs. Returns an nccltune_status. */
static int push_run(nccltune_session *s, const struct session_run *r)
{
	struct session_run *runs = session_array_grow(s->run.runs, &s->run.runs_cap, s->run.nruns,
	                                              sizeof *runs, 64);

	if (!runs)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	s->run.runs = runs;
	s->run.runs[s->run.nruns++] = *r;
	return NCCLTUNE_OK;
}

void session_observe(nccltune_session *s, const struct point *p, const struct outcome *o)
{
	prune_observe(s->run.pr, p, o);
	/* two-level: the strategy searches the outer space and learns from sweeps only */
	if (!s->run.tl)
		strategy_observe(s->run.st, p, o);
}

void session_outer_tell(nccltune_session *s, const struct point *full, const struct outcome *o,
                        bool say)
{
	struct point q;
	struct outcome *told = NULL;
	struct decide_view v;
	double ratio, pen = 1.0;
	size_t bytes;
	char desc[512];

	twolevel_outer_of(s->run.tl, full, &q);
	if (o->cls == OUTCOME_OK && s->cfg.wl.nguard) {
		session_decide_view(s, &v);
		pen = decide_outer_guard_penalty(&v, full, &ratio, &bytes);
	}
	if (pen > 1.0 && (told = malloc(sizeof *told)) != NULL) {
		/* the guards in the objective the strategy models (issue 30); out of memory,
		 * it learns the plain objective */
		*told = *o;
		told->objective_us *= pen;
		if (say && !session_replaying(s))
			session_note(&s->out, "sweep: %s measured the guard size %zu B at %.3fx the "
			             "baseline: the search is told %.1f us for its %.1f us",
			             space_point_describe(twolevel_outer_space(s->run.tl), &q, desc,
			                                  sizeof desc),
			             bytes, ratio, told->objective_us, o->objective_us);
	}
	strategy_observe(s->run.st, &q, told ? told : o);
	free(told);
}

void session_outer_observe(nccltune_session *s, const struct point *full,
                           const struct outcome *o)
{
	struct point q;

	if (!twolevel_outer_space(s->run.tl)) {
		strategy_observe(s->run.st, full, o);
		return;
	}
	twolevel_outer_of(s->run.tl, full, &q);
	prune_observe(s->run.pr_outer, &q, o);
	session_outer_tell(s, full, o, true);
}

void session_sweep_observe(nccltune_session *s, size_t run)
{
	struct outcome *o = calloc(1, sizeof *o);

	if (!o)
		return;   /* the pruner learns less; nothing else depends on it */
	for (size_t i = 0; i < s->run.ninner; i++) {
		const struct twolevel_inner *in = &s->run.inner[i];

		/* a guard's own case is the outer point's own case again (at another size) */
		if (in->run != run || session_is_guard(s, in->bytes))
			continue;
		o->cls = in->cls;
		o->objective_us = in->objective_us;
		snprintf(o->error, sizeof o->error, "%s", in->error);
		prune_observe(s->run.pr, &in->p, o);
	}
	free(o);
}

/* The recorded runs no longer match what the loop asks for (a changed strategy, or a
 * journal edited by hand): take the rest as they are, learning from each final
 * outcome (a run followed by its retry teaches nothing), and run live from here on. */
int session_diverge(nccltune_session *s)
{
	size_t left = s->run.nqueue - s->run.qpos;

	session_warn(&s->out, "the journal's run %zu is not what this session would run next; "
	             "the %zu remaining recorded run(s) are taken as they are", s->run.nruns + 1,
	             left);
	for (size_t i = s->run.qpos; i < s->run.nqueue; i++) {
		const struct session_run *r = &s->run.queue[i], *next = r + 1;
		bool superseded = i + 1 < s->run.nqueue && next->phase == PHASE_RETRY &&
		                  next->has_point == r->has_point &&
		                  (!r->has_point || point_equal(&next->p, &r->p,
		                                                space_dims(s->run.sp)));

		if (push_run(s, r) != NCCLTUNE_OK)
			return NCCLTUNE_ERROR;
		if (r->phase == PHASE_SWEEP) {
			session_sweep_observe(s, s->run.nruns - 1);
			if (r->o.cls == OUTCOME_OK || !r->in_flight)
				session_outer_observe(s, &r->p, &r->o);
			continue;
		}
		if (r->has_point && !superseded &&
		    (r->phase == PHASE_SEARCH || r->phase == PHASE_WARM ||
		     r->phase == PHASE_RETRY || r->phase == PHASE_TRY))
			session_observe(s, &r->p, &r->o);
	}
	s->run.qpos = s->run.nqueue;
	return NCCLTUNE_OK;
}

/* While replaying: the checks of NCCL's defaults the journal holds here (a baseline run
 * after the first, session_probe_watch), taken as recorded whatever the loop asks next:
 * the check came between two of the loop's runs. Returns 0, or -1 out of memory. */
static int replay_checks(nccltune_session *s)
{
	while (session_replaying(s) && s->run.nruns > 0) {
		const struct session_run *r = &s->run.queue[s->run.qpos];

		if (r->phase != PHASE_BASELINE || r->has_point || r->try_no)
			return 0;
		s->run.qpos++;
		if (push_run(s, r) != NCCLTUNE_OK)
			return -1;
	}
	return 0;
}

int session_replay_sweep(nccltune_session *s, const struct point *outer_full,
                         struct outcome *o)
{
	const struct session_run *r;

	if (replay_checks(s) != 0)
		return -1;
	if (!session_replaying(s))
		return 0;
	r = &s->run.queue[s->run.qpos];
	if (r->phase == PHASE_SWEEP && r->has_point &&
	    twolevel_same_outer(s->run.tl, &r->p, outer_full)) {
		*o = r->o;
		s->run.qpos++;
		return push_run(s, r) == NCCLTUNE_OK ? 1 : -1;
	}
	return session_diverge(s) == NCCLTUNE_OK ? 0 : -1;
}

/* While replaying, the journal's next run: taken when it is the run asked for (1, with
 * *o), else the journal and the loop part ways (0; also when the journal ends in a
 * check). Returns -1 on an error of the tuner, message in s->err. */
static int replay_next(nccltune_session *s, enum session_phase phase, const struct point *p,
                       size_t try_no, uint32_t unset, struct outcome *o)
{
	const struct session_run *r;

	if (replay_checks(s) != 0)
		return -1;
	if (!session_replaying(s))
		return 0;
	r = &s->run.queue[s->run.qpos];

	if (r->phase == phase && r->try_no == try_no && r->unset == unset &&
	    (unset ? r->has_point && p && point_equal(&r->p, p, space_dims(s->run.sp))
	           : runlog_same_config(r, p, try_no, space_dims(s->run.sp)))) {
		*o = r->o;
		s->run.qpos++;
		return push_run(s, r) == NCCLTUNE_OK ? 1 : -1;
	}
	return session_diverge(s) == NCCLTUNE_OK ? 0 : -1;
}

/* A candidate with per-size rules runs them through nccltune's tuner plugin, exactly as
 * they will be deployed: its table is written content-addressed under OUT/tables/ and
 * the run gets NCCL_TUNER_PLUGIN and NCCLTUNE_TUNER_TABLE (never NCCL_ALGO or NCCL_PROTO:
 * the space refuses them next to rules). Returns an nccltune_status. */
static int add_rules(nccltune_session *s, const struct point *p, char ***env)
{
	char *text = NULL, path[PATH_MAX + 64], e[PATH_MAX + 256];
	int status = NCCLTUNE_OK;

	if (!p || !space_has_rules(s->run.sp))
		return NCCLTUNE_OK;
	if (ruletable_text(s->run.sp, p, &text, e, sizeof e) != 0)
		return session_fail(s, NCCLTUNE_ERROR, "%s", e);
	if (!text)
		return NCCLTUNE_OK;   /* every size left to NCCL: the plain process */
	if (!s->run.plugin[0])
		status = session_fail(s, NCCLTUNE_ERROR, "per-size rules need nccltune's tuner "
		                      "plugin, which was not found");
	else if (ruletable_write(s->run.dir, text, path, sizeof path, e, sizeof e) != 0)
		status = session_fail(s, NCCLTUNE_ERROR, "%s", e);
	else if (env_set(env, "NCCL_TUNER_PLUGIN", s->run.plugin) != 0 ||
	         env_set(env, "NCCLTUNE_TUNER_TABLE", path) != 0)
		status = session_fail(s, NCCLTUNE_ERROR, "out of memory building a probe run");
	free(text);
	return status;
}

/* Start the probe on p (or the baseline, or try try_no) in the run's environment and
 * wait for it: 0 with *res (res->cancelled: stopped by a signal), SESSION_OUT_OF_TIME
 * (the --time-limit left no time, or ended the run: *res not to be recorded), or
 * NCCLTUNE_ERROR with a message in s->err. */
static int run_probe(nccltune_session *s, const struct point *p, size_t try_no, bool guards,
                     uint32_t unset, struct runner_result *res)
{
	struct runner_request req;
	bool symm = !try_no && space_point_symmetric(s->run.sp, p, unset);
	char **argv = probe_argv(s, NULL, guards, symm), **env, e[1024];
	bool capped;
	int status = 0;

	env = try_no ? tryconf_env_build(&s->cfg.tries[try_no - 1], s->run.user_env, s->run.sp,
	                                 &s->run.pins, e, sizeof e)
	             : env_build(s->run.user_env, s->run.sp, &s->run.pins, p, e, sizeof e);
	if (!argv || !env || env_add_run(&env, s->run.nruns) != 0 ||
	    session_server_env(s, &env, symm) != 0) {
		status = session_fail(s, NCCLTUNE_ERROR, "out of memory building a probe run");
		goto out;
	}
	status = try_no ? 0 : add_rules(s, p, &env);
	if (status)
		goto out;
	for (size_t d = 0; d < space_dims(s->run.sp); d++)
		if (unset >> d & 1u)
			env_unset(env, space_name(s->run.sp, d));
	memset(&req, 0, sizeof req);
	req.argv = argv;
	req.envp = env;
	req.timeout_s = session_deadline(s, s->run.timeout_s > 0 ? s->run.timeout_s
	                                    : s->cfg.timeout_opt_s > 0 ? s->cfg.timeout_opt_s
	                                    : SESSION_BASELINE_TIMEOUT_S, &capped);
	req.cancel = s->run.cancel;
	req.reaper = &s->run.reaper;
	if (capped && req.timeout_s <= 0)
		status = SESSION_OUT_OF_TIME;
	else if (runner_run(&req, res, e, sizeof e) != 0)
		status = session_fail(s, NCCLTUNE_ERROR, "%s", e);
	else if (capped && res->timed_out)
		status = SESSION_OUT_OF_TIME;
out:
	runner_free_argv(argv);
	env_free(env);
	return status;
}

/* Does the probe choose how many GPUs it runs on (--gpus N, a --launch mode, an MPI or
 * Slurm launcher), so that the fingerprint's GPU count says nothing of its reports? */
static bool probe_picks_ranks(const nccltune_session *s)
{
	static const char *const launchers[] = {"mpirun", "mpiexec", "srun", "orterun",
	                                        "prterun", "jsrun", "aprun", "flux", NULL};
	const char *base = strrchr(s->run.probe_argv[0], '/');

	base = base ? base + 1 : s->run.probe_argv[0];
	for (size_t i = 0; launchers[i]; i++)
		if (strcmp(base, launchers[i]) == 0)
			return true;
	for (size_t i = 1; s->run.probe_argv[i]; i++)
		if (strncmp(s->run.probe_argv[i], "--gpus", 6) == 0 ||
		    strncmp(s->run.probe_argv[i], "--launch", 8) == 0)
			return true;
	return false;
}

/* How many ranks a report must have to be compared with the others: the first ok
 * baseline's, else (with none yet) the fingerprint's GPU count (times its ranks_per_gpu
 * on the rig) when it has one and the probe does not choose its GPUs; 0: no reference.
 * `what` names the reference. */
static int expected_ranks(const nccltune_session *s, const char **what)
{
	const cJSON *n, *k;

	for (size_t i = 0; i < s->run.nruns; i++) {
		const struct session_run *r = &s->run.runs[i];

		if (!r->has_point && !r->try_no && r->o.cls == OUTCOME_OK) {
			*what = "the baseline's";
			return r->o.report.nranks;
		}
	}
	n = s->run.fingerprint ? cJSON_GetObjectItemCaseSensitive(s->run.fingerprint, "gpu_count")
	                       : NULL;
	if (!cJSON_IsNumber(n) || n->valuedouble < 1 || n->valuedouble > 1 << 20 ||
	    probe_picks_ranks(s))
		return 0;
	k = cJSON_GetObjectItemCaseSensitive(s->run.fingerprint, "ranks_per_gpu");
	if (cJSON_IsNumber(k) && k->valuedouble >= 2 && k->valuedouble <= 64) {
		/* the rig: several ranks share each GPU */
		*what = "the fingerprint's gpu_count times its ranks_per_gpu";
		return (int)n->valuedouble * (int)k->valuedouble;
	}
	*what = "the fingerprint's gpu_count";
	return (int)n->valuedouble;
}

/* What a finished probe run came to: its class, and for a good report the objective
 * of the session's workload (a report that does not give it, or that ran on another
 * number of ranks than the baseline, is garbage); a report also says whether its
 * figures are measured or modelled. */
void session_take_outcome(nccltune_session *s, const struct runner_result *res,
                          bool symmetric, struct outcome *o)
{
	char e[1024];
	double obj;

	const char *what = "";
	int want;

	runner_classify(res, o);
	if (o->cls != OUTCOME_OK)
		return;
	/* a run on another number of GPUs measures another thing: it may not compete */
	want = expected_ranks(s, &what);
	if (want > 0 && o->report.nranks != want) {
		o->cls = OUTCOME_GARBAGE;
		fs_errf(o->error, sizeof o->error, "report: nranks %d differs from %s %d: not "
		        "comparable with the other runs", o->report.nranks, what, want);
		return;
	}
	/* a candidate that asked for symmetric windows must have had them (as --window) */
	if (symmetric && !o->report.window_symmetric) {
		o->cls = OUTCOME_GARBAGE;
		fs_errf(o->error, sizeof o->error, "report: no \"window\": \"symmetric\" for a "
		        "candidate with %s on: the probe did not register symmetric windows (does "
		        "it speak --window?)", SPACE_SYMMETRIC);
		return;
	}
	if (workload_objective(&s->cfg.wl, &o->report, &obj, e, sizeof e) != 0) {
		o->cls = OUTCOME_GARBAGE;
		fs_errf(o->error, sizeof o->error, "report: %s", e);
		return;
	}
	o->objective_us = obj;
	snprintf(s->run.source, sizeof s->run.source, "%s", o->report.source);
	if (o->report.model[0])
		snprintf(s->run.model_name, sizeof s->run.model_name, "%s", o->report.model);
}

/* Seconds one inner choice is expected to take: from the sweeps so far (their wall
 * time beyond a plain run's, per choice), else a twentieth of the baseline's wall time
 * (a guess: capture, check and replays of one size, without the process start). */
double session_sweep_choice_s(const nccltune_session *s, double *plain_s)
{
	double sweep = 0, plain = 0, choices = 0;
	size_t nsweep = 0, nplain = 0;

	for (size_t i = 0; i < s->run.nruns; i++) {
		const struct session_run *r = &s->run.runs[i];

		if (r->o.cls != OUTCOME_OK)
			continue;
		if (r->phase == PHASE_SWEEP) {
			sweep += r->o.wall_s;
			choices += (double)r->nchoices;
			nsweep++;
		} else {
			plain += r->o.wall_s;
			nplain++;
		}
	}
	*plain_s = nplain ? plain / (double)nplain : 0;
	if (nsweep && choices > 0)
		return fmax(1e-4, (sweep - (double)nsweep * *plain_s) / choices);
	return fmax(1e-4, *plain_s / 20);
}

/* A two-level session's ETA from the measured rate of inner choices: the sweeps the
 * search has left, each its mean number of choices at the sweeps' rate after a process
 * start, then the plain runs of the final rounds and the ablation at a plain run's mean
 * wall time. Left as it is before a sweep ran ok. Can't fail. */
static void sweep_eta(const nccltune_session *s, struct session_figures *fig)
{
	double plain_s, per = session_sweep_choice_s(s, &plain_s), choices = 0;
	size_t nsweep = 0, n = s->run.nruns, limit = s->run.search_limit;
	size_t budget = (size_t)s->cfg.budget, left = n < budget ? budget - n : 0;

	for (size_t i = 0; i < n; i++)
		if (s->run.runs[i].phase == PHASE_SWEEP && s->run.runs[i].o.cls == OUTCOME_OK) {
			choices += (double)s->run.runs[i].nchoices;
			nsweep++;
		}
	if (nsweep == 0 || choices <= 0)
		return;
	fig->sweeps_left = n < limit ? limit - n : 0;
	if (fig->sweeps_left > left)
		fig->sweeps_left = left;
	fig->inner_rate = 1 / per;
	fig->eta_s = (double)fig->sweeps_left * (plain_s + choices / (double)nsweep * per) +
	             (double)(left - fig->sweeps_left) * plain_s;
}

/* The progress line of run r, the last of the session's runs, with the figures of the
 * runs so far. */
static void show_run(nccltune_session *s, const struct session_run *r)
{
	struct session_figures fig;
	char env[512];
	double wall = 0;
	size_t n = s->run.nruns, budget = (size_t)s->cfg.budget, left = n < budget ? budget - n : 0;

	memset(&fig, 0, sizeof fig);
	fig.runs = n;
	fig.budget = s->cfg.budget;
	fig.model = session_is_model(s) ? s->run.model_name : NULL;
	fig.best_us = fig.base_us = NAN;
	for (size_t i = 0; i < n; i++) {
		const struct session_run *q = &s->run.runs[i];

		wall += q->o.wall_s;
		if (q->o.cls != OUTCOME_OK)
			fig.failures++;
		else if (!q->has_point && q->phase == PHASE_BASELINE)
			fig.base_us = q->o.objective_us;
	}
	session_point_best(s, &fig.best_us, NULL);
	fig.eta_s = n ? wall / (double)n * (double)left : 0;
	if (s->run.tl)
		sweep_eta(s, &fig);
	/* the search stops in time for the final rounds: no ETA beyond the time limit */
	if (s->cfg.time_limit_s > 0)
		fig.eta_s = fmin(fig.eta_s, fmax(0, s->cfg.time_limit_s - session_elapsed(s)));
	fig.env = r->has_point || r->try_no ? session_run_describe(s, r, env, sizeof env) : NULL;
	if (r->phase == PHASE_SWEEP) {
		fig.choices = r->nchoices;
		fig.choices_per_s = r->o.wall_s > 0 ? (double)r->nchoices / r->o.wall_s : 0;
	}
	session_progress_run(&s->out, r, &fig);
}

/* Journal run r with the probe's output, add it to the session's runs and show it.
 * Returns 0, or NCCLTUNE_ERROR with a message in s->err. */
int session_record_run(nccltune_session *s, const struct session_run *r,
                       const struct runner_result *res)
{
	char e[1024];
	cJSON *rec = session_run_json(s, r, s->run.nruns, res->out, res->out_len);
	int status = 0;

	if (!rec)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory recording a run");
	if (journal_append(s->run.jr, rec, e, sizeof e) != 0)
		status = session_fail(s, NCCLTUNE_ERROR, "%s", e);
	else if (push_run(s, r) != NCCLTUNE_OK)
		status = NCCLTUNE_ERROR;
	else
		show_run(s, &s->run.runs[s->run.nruns - 1]);
	cJSON_Delete(rec);
	return status;
}

/* Before the first live run of a resumed session: can its recorded probe still start?
 * A fresh session knows from its fingerprint; a resume would otherwise spend the rest
 * of the budget on "spawn" runs (a relative --probe resumed from another folder, a
 * moved binary). As root, the program must also be changeable by nobody but root and
 * the caller (workflows/trust.h), as retune's is. Returns 0, NCCLTUNE_ERROR with a
 * message naming the command, or NCCLTUNE_USAGE naming the program at fault. */
int session_check_probe(nccltune_session *s)
{
	char e[PATH_MAX + 256], prog[PATH_MAX];

	if (!s->resumed || s->run.probe_checked)
		return 0;
	if (runner_check_command(s->run.probe_argv, s->run.user_env, e, sizeof e) != 0)
		return session_fail(s, NCCLTUNE_ERROR, "cannot start the probe recorded in "
		                    "%s/journal.jsonl: %s; nothing was run (the command is run as "
		                    "recorded: a relative path is relative to the folder nccltune "
		                    "runs in; resume from the folder the session started in, or "
		                    "put the probe back)", s->run.dir, e);
	if (geteuid() == 0 &&
	    (trust_which(s->run.probe_argv[0], prog, sizeof prog, e, sizeof e) != 0 ||
	     trust_check_path(prog, e, sizeof e) != 0))
		return session_fail(s, NCCLTUNE_USAGE, "%s: refused: the recorded probe: %s; "
		                    "--resume runs it as root, so it must be changeable by nobody "
		                    "but root and you; nothing was run", s->run.dir, e);
	s->run.probe_checked = true;
	return 0;
}

static int execute(nccltune_session *s, enum session_phase phase, const struct point *p,
                   size_t try_no, uint32_t unset, struct outcome *o);

/* The probe's command line as one string for a message (cut when long). */
static void probe_command(const nccltune_session *s, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (size_t i = 0; s->run.probe_argv[i] && at + 1 < len; i++) {
		int n = snprintf(buf + at, len - at, "%s%s", i ? " " : "", s->run.probe_argv[i]);

		if (n < 0)
			break;
		at += (size_t)n < len - at ? (size_t)n : len - at - 1;
	}
}

int session_probe_watch(nccltune_session *s)
{
	const struct session_run *last;
	struct outcome *check;
	char cmd[512], self[PATH_MAX + 8];
	size_t configs, runs;
	enum session_lost v = session_probe_lost(s, &configs, &runs);
	int rc;

	if (v == SESSION_LOST_CHECK) {
		last = &s->run.runs[s->run.nruns - 1];
		/* the final rounds run NCCL's defaults themselves; the budget has the last say */
		if (last->phase == PHASE_FINAL || last->phase == PHASE_ABLATE ||
		    s->run.nruns >= (size_t)s->cfg.budget)
			return 0;
		session_note(&s->out, "%zu configurations in a row %s alike; running NCCL's "
		             "defaults to tell the probe from the configurations", configs,
		             outcome_class_phrase(last->o.cls));
		check = malloc(sizeof *check);
		if (!check)
			return session_fail(s, NCCLTUNE_ERROR, "out of memory");
		rc = execute(s, PHASE_BASELINE, NULL, 0, 0, check);
		free(check);
		return rc;
	}
	if (v != SESSION_LOST_YES)
		return 0;
	last = &s->run.runs[s->run.nruns - 1];
	probe_command(s, cmd, sizeof cmd);
	return session_fail(s, NCCLTUNE_ERROR, "the probe no longer starts: NCCL's defaults and "
	                    "%zu other configuration(s), %zu runs in a row, all %s: %s: %s; "
	                    "stopped after %zu runs, recorded in %s/journal.jsonl (a "
	                    "failure no NCCL variable changes: the probe's file, its "
	                    "interpreter or the driver). Probe: %s. Put it right, then "
	                    "resume with: %s run --resume %s", configs - 1, runs,
	                    outcome_class_phrase(last->o.cls), outcome_class_name(last->o.cls),
	                    last->o.error, s->run.nruns, s->run.dir, cmd,
	                    locate_self_command(self, sizeof self), s->run.dir);
}

/* session_execute, and session_execute_unset with `unset` dimensions of p left unset. */
static int execute(nccltune_session *s, enum session_phase phase, const struct point *p,
                   size_t try_no, uint32_t unset, struct outcome *o)
{
	struct runner_result res;
	struct session_run run;
	int status;

	/* the flag of nccltune_session_run's signal handler, also while a long journal is
	 * replayed (nothing is written then: the journal stays as it was) */
	if (s->run.cancel && *s->run.cancel) {
		s->run.interrupted = true;
		return NCCLTUNE_INTERRUPTED;
	}
	if (session_replaying(s)) {
		status = replay_next(s, phase, p, try_no, unset, o);
		if (status != 0)
			return status > 0 ? 0 : NCCLTUNE_ERROR;
	}
	status = session_check_probe(s);
	if (status)
		return status;
	memset(&res, 0, sizeof res);
	status = run_probe(s, p, try_no, phase == PHASE_BASELINE || phase == PHASE_FINAL ||
	                   phase == PHASE_ABLATE, unset, &res);
	if (status == 0 && res.cancelled) {
		/* Killed by us, not a property of the configuration: never recorded, so a
		 * resumed session simply runs it again. */
		s->run.interrupted = true;
		status = NCCLTUNE_INTERRUPTED;
	}
	if (status == 0) {
		session_take_outcome(s, &res, !try_no && space_point_symmetric(s->run.sp, p, unset),
		                     o);
		memset(&run, 0, sizeof run);
		run.phase = phase;
		run.try_no = try_no;
		run.unset = p ? unset : 0;
		run.has_point = p != NULL;
		if (p)
			run.p = *p;
		run.o = *o;
		run.t_s = session_elapsed(s);
		status = session_record_run(s, &run, &res);
	}
	runner_result_free(&res);
	return status ? status : session_probe_watch(s);
}

int session_execute(nccltune_session *s, enum session_phase phase, const struct point *p,
                    size_t try_no, struct outcome *o)
{
	return execute(s, phase, p, try_no, 0, o);
}

int session_execute_unset(nccltune_session *s, enum session_phase phase, const struct point *p,
                          uint32_t unset, struct outcome *o)
{
	return execute(s, phase, p, 0, unset, o);
}
