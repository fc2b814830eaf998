/* sweep_run.c - one sweep run of a two-level session (issue 17): an outer point's inner
 * choices in one probe process (`--sweep FILE`, nccltune's tuner plugin loaded, no table:
 * the sizes' own cases are NCCL's), its inner results journalled with the run record and
 * learned by the pruner as full points; or, while a resumed session replays its journal,
 * the recorded run and its recorded inner results instead. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "run/ruletable.h"
#include "run/runner.h"
#include "run/sweepfile.h"
#include "session/session_priv.h"

/* The probe's deadline for a sweep of n choices: --timeout when given; else the plain
 * runs' deadline, at least past the probe's own watchdog (so that a hang is reported
 * with the choice in flight), plus five times the expected time of the choices. */
static double sweep_timeout(const nccltune_session *s, size_t n)
{
	double plain_s, per = session_sweep_choice_s(s, &plain_s);

	if (s->cfg.timeout_opt_s > 0)
		return s->cfg.timeout_opt_s;
	return fmax(s->run.timeout_s, SESSION_SWEEP_MIN_TIMEOUT_S) + 5 * per * (double)n;
}

/* The sweep file of the n choices, written into the session folder (path). Returns an
 * nccltune_status. */
static int write_file(nccltune_session *s, const struct twolevel_choice *c, size_t n,
                      char *path, size_t pathlen)
{
	struct sweepfile_choice *f = calloc(n, sizeof *f);
	char *text = NULL, e[PATH_MAX + 256];
	int rounds = s->cfg.wl.iters < SESSION_SWEEP_ROUNDS ? s->cfg.wl.iters : SESSION_SWEEP_ROUNDS;
	/* a seed per run: the replay order differs from run to run, a resume gets the same */
	uint64_t seed = ((uint64_t)s->cfg.seed * 1000003u + s->run.nruns) & ((1ull << 53) - 1);
	int status = NCCLTUNE_OK;

	if (!f)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	for (size_t i = 0; i < n; i++) {
		f[i].bytes = c[i].bytes;
		f[i].algo = c[i].algo;
		f[i].proto = c[i].proto;
		f[i].ctas = c[i].ctas;
	}
	if (sweepfile_text(f, n, rounds < 1 ? 1 : rounds, seed, &text, e, sizeof e) != 0 ||
	    ruletable_write_in(s->run.dir, "sweeps", ".json", text, path, pathlen, e,
	                       sizeof e) != 0)
		status = session_fail(s, NCCLTUNE_ERROR, "%s", e);
	free(text);
	free(f);
	return status;
}

/* Start the probe on the sweep file `file` for the outer point of `outer_full`. Returns
 * 0 with *res, SESSION_OUT_OF_TIME (the --time-limit left no time or ended the run: not
 * to be recorded), or NCCLTUNE_ERROR with a message in s->err. */
static int run_probe(nccltune_session *s, const struct point *outer_full, const char *file,
                     size_t n, struct runner_result *res)
{
	struct runner_request req;
	bool symm = space_point_symmetric(s->run.sp, outer_full, 0);
	char **base = session_sweep_argv(s, symm), **argv = NULL, **env, e[1024];
	bool capped;
	size_t k = 0;
	int status = 0;

	env = env_build(s->run.user_env, s->run.sp, &s->run.pins, outer_full, e, sizeof e);
	while (base && base[k])
		k++;
	argv = base ? calloc(k + 3, sizeof *argv) : NULL;
	if (argv) {
		memcpy(argv, base, k * sizeof *argv);
		argv[k] = strdup("--sweep");
		argv[k + 1] = argv[k] ? strdup(file) : NULL;
	}
	if (!argv || !argv[k + 1] || !env || env_add_run(&env, s->run.nruns) != 0 ||
	    session_server_env(s, &env, symm) != 0 ||
	    env_set(&env, "NCCL_TUNER_PLUGIN", s->run.plugin) != 0) {
		status = session_fail(s, NCCLTUNE_ERROR, "out of memory building a sweep run");
		goto out;
	}
	memset(&req, 0, sizeof req);
	req.argv = argv;
	req.envp = env;
	req.timeout_s = session_deadline(s, sweep_timeout(s, n), &capped);
	req.cancel = s->run.cancel;
	req.reaper = &s->run.reaper;
	if (capped && req.timeout_s <= 0)
		status = SESSION_OUT_OF_TIME;
	else if (runner_run(&req, res, e, sizeof e) != 0)
		status = session_fail(s, NCCLTUNE_ERROR, "%s", e);
	else if (capped && res->timed_out)
		status = SESSION_OUT_OF_TIME;
out:
	if (argv) {
		runner_free_argv(argv);   /* base's strings are argv's */
		free(base);
	} else {
		runner_free_argv(base);
	}
	env_free(env);
	return status;
}

/* Is p a wrong sum's point (the pruner bans it)? For twolevel_best. */
static bool rejected(void *ctx, const struct point *p)
{
	return prune_rejects(ctx, p);
}

/* Does the report answer exactly the choices asked (issue 31 m1, m2)? Every entry's echo
 * (bytes, algo, proto, ctas) must be its choice's, and an ok report must answer every
 * choice (the parser already holds indices to positions); else a probe that answers
 * other choices, or fewer or more, would have its entries learned as the asked ones, or
 * the rest silently never measured. Returns 0, or -1 with the reason in why. */
static int sweep_answers(const struct proto_report *r, const struct twolevel_choice *c,
                         size_t n, char *why, size_t len)
{
	if (r->ok && r->nsweep != n)
		return fs_errf(why, len, "the sweep report answers %zu choice(s), %zu were asked",
		               r->nsweep, n);
	for (size_t j = 0; j < r->nsweep; j++) {
		const struct proto_sweep_entry *e = &r->sweep[j];
		const struct twolevel_choice *ch;
		int algo, proto;

		if (e->index >= n)
			return fs_errf(why, len, "the sweep report has an entry for choice %zu, and "
			               "%zu were asked", e->index, n);
		ch = &c[e->index];
		algo = ch->algo ? proto_nccl_algo_parse(ch->algo) : PROTO_NCCL_ANY;
		proto = ch->proto ? proto_nccl_proto_parse(ch->proto) : PROTO_NCCL_ANY;
		if (e->bytes != ch->bytes || e->algo != algo || e->proto != proto ||
		    e->ctas != ch->ctas)
			return fs_errf(why, len, "sweep entry %zu echoes %zu B %s/%s %d CTAs, but choice "
			               "%zu asked %llu B %s/%s %d CTAs", j, e->bytes,
			               proto_nccl_algo_name(e->algo) ? proto_nccl_algo_name(e->algo)
			                                             : "NCCL's",
			               proto_nccl_proto_name(e->proto) ? proto_nccl_proto_name(e->proto)
			                                               : "NCCL's", e->ctas, e->index,
			               (unsigned long long)ch->bytes, ch->algo ? ch->algo : "NCCL's",
			               ch->proto ? ch->proto : "NCCL's", ch->ctas);
	}
	return 0;
}

/* What the run came to: its inner results into s->run.inner, and into *run the point
 * (the best combination, the choice in flight, or the outer point itself) and the
 * outcome. Returns an nccltune_status. */
static int take_inner(nccltune_session *s, const struct point *outer_full,
                      const struct twolevel_choice *c, size_t n, struct session_run *run)
{
	struct twolevel_inner *in = calloc(n + WORKLOAD_MAX_ENTRIES, sizeof *in);
	struct proto_report *rep = &run->o.report;
	size_t k = 0, flight = TWOLEVEL_OWN, first = s->run.ninner;
	char why[PROTO_ERROR_MAX];
	double obj;

	if (!in)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	/* a report that does not answer the choices asked teaches nothing: garbage */
	if (sweep_answers(rep, c, n, why, sizeof why) != 0) {
		run->o.cls = OUTCOME_GARBAGE;
		run->o.objective_us = NAN;
		snprintf(run->o.error, sizeof run->o.error, "%s", why);
		proto_report_clear(rep);
		rep->ok = false;
	}
	/* an ok report the session refused (another number of ranks) teaches nothing */
	if (run->o.cls == OUTCOME_OK || !rep->ok)
		k = twolevel_learn(s->run.tl, &s->cfg.wl, c, n, rep, run->o.cls, in, &flight);
	for (size_t i = 0; i < k; i++) {
		in[i].run = s->run.nruns;
		if (session_inner_push(s, &in[i]) != NCCLTUNE_OK) {
			free(in);
			return NCCLTUNE_ERROR;
		}
	}
	free(in);
	run->p = *outer_full;
	if (run->o.cls == OUTCOME_OK &&
	    twolevel_best(s->run.tl, &s->cfg.wl, s->run.inner + first, s->run.ninner - first,
	                  rejected, s->run.pr, &run->p, &obj) == 0)
		run->o.objective_us = obj;
	else if (run->o.cls != OUTCOME_OK && flight != TWOLEVEL_OWN) {
		run->p = c[flight].p;
		run->in_flight = true;
	}
	proto_report_clear(rep);   /* the entries live on as inner results */
	return NCCLTUNE_OK;
}

int session_sweep_execute(nccltune_session *s, const struct point *outer_full,
                          const struct twolevel_choice *c, size_t n, struct outcome *o)
{
	struct runner_result res;
	struct session_run run;
	char file[PATH_MAX + 64];
	int status;

	/* a signal stops a long replay too (nothing is written while replaying) */
	if (s->run.cancel && *s->run.cancel) {
		s->run.interrupted = true;
		return NCCLTUNE_INTERRUPTED;
	}
	if (session_replaying(s)) {
		status = session_replay_sweep(s, outer_full, o);
		if (status > 0)
			session_sweep_observe(s, s->run.nruns - 1);
		if (status != 0)
			return status > 0 ? 0 : NCCLTUNE_ERROR;
	}
	status = session_check_probe(s);
	if (status == 0)
		status = write_file(s, c, n, file, sizeof file);
	if (status)
		return status;
	memset(&res, 0, sizeof res);
	memset(&run, 0, sizeof run);
	status = run_probe(s, outer_full, file, n, &res);
	if (status == 0 && res.cancelled) {
		s->run.interrupted = true;   /* never recorded: a resume sweeps it again */
		status = NCCLTUNE_INTERRUPTED;
	}
	if (status == 0) {
		session_take_outcome(s, &res, space_point_symmetric(s->run.sp, outer_full, 0),
		                     &run.o);
		run.phase = PHASE_SWEEP;
		run.has_point = true;
		run.nchoices = n;
		status = take_inner(s, outer_full, c, n, &run);
	}
	if (status == 0) {
		run.t_s = session_elapsed(s);
		*o = run.o;
		status = session_record_run(s, &run, &res);
	}
	if (status == 0)
		session_sweep_observe(s, s->run.nruns - 1);
	runner_result_free(&res);
	return status ? status : session_probe_watch(s);
}
