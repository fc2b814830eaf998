/* run_sweep.c - a sweep run of nccltune-model-probe (run.h, model_run_sweep), step for
 * step what nccltune-probe does in one process (docs/probe-protocol.md "Sweep"), with the
 * model in place of the GPUs: cases (sizes, then the file's choices), each choice forced
 * through nccltune's plugin and judged by the plugin's record, evaluated by the model,
 * then the timed replays in the file's seeded interleaved rounds (common/sweep.c, the
 * real probe's schedule), one noise offset for the process and noise per sample. */
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEP_TIMEOUT_S 60   /* nccltune-probe's default --step-timeout */

enum case_status { CASE_KEPT, CASE_FAILED };

/* One case of the run: a size's own (c < nsizes) or choice c - nsizes. */
struct scase {
	enum case_status status;
	double us;                     /* exact latency, when kept */
	struct proto_decision nccl;    /* what ran, when known */
	bool hangs;                    /* kept, but its first timed replay never ends */
	char why[PROTO_ERROR_MAX];     /* failed: the entry's error; hangs: the cause */
	enum proto_stage stage;        /* failed */
};

struct sweep_state {
	const struct model_run *run;
	size_t nsizes, ncases;
	struct scase *cases;
	struct model_tuner *t;
	void *ctx;
	struct model_noise noise;
	bool in_flight;                /* the run failed with a choice in flight */
	size_t flight;                 /* its index in the file */
	struct model_eval_result fail; /* the run's failure, when !fail.ok */
};

static const struct sweep_choice *choice_of(const struct sweep_state *s, size_t c)
{
	return &s->run->sweep->choices[c - s->nsizes];
}

/* "sweep choice 3 (43008 bytes, Ring/LL, 4 CTAs)". */
static void case_text(const struct sweep_state *s, size_t c, char *buf, size_t len)
{
	char how[96];

	if (c < s->nsizes) {
		snprintf(buf, len, "%zu bytes", s->run->w->bytes[c]);
		return;
	}
	sweep_choice_text(choice_of(s, c), how, sizeof how);
	snprintf(buf, len, "sweep choice %zu (%zu bytes, %s)", c - s->nsizes, choice_of(s, c)->bytes,
	         how);
}

/* Fail the run with case c in flight (c >= nsizes) at `stage`: "WHAT of CASE: why". */
static void fail_case(struct sweep_state *s, size_t c, enum proto_stage stage, const char *what,
                      const char *why)
{
	char text[160];

	case_text(s, c, text, sizeof text);
	model_run_fail(&s->fail, stage, "%s of %s: %s", what, text, why);
	if (c >= s->nsizes) {
		s->in_flight = true;
		s->flight = c - s->nsizes;
	}
}

/* The workload of one size of w: its bytes and its ops. */
static void one_size(const struct proto_workload *w, size_t size, struct proto_workload *out)
{
	*out = *w;
	out->nsizes = 1;
	out->bytes[0] = w->bytes[size];
	out->ops = proto_workload_ops(w, size);
	out->nops = 0;
}

/* The sizes' own cases: no force; NCCL asks the plugin (its table, if any). */
static bool own_cases(struct sweep_state *s)
{
	const struct model_run *run = s->run;
	struct model_force force[PROTO_MAX_SIZES];
	struct model_eval_result res;

	if (!model_run_ask(run, s->t, s->ctx, run->w, 1, force, &s->fail))
		return false;
	model_eval_forced(run->m, run->env, run->w, s->t ? force : NULL, &res);
	model_server_eval(run->m, run->w, run->cumem_off, &res);
	if (!res.ok) {
		s->fail = res;
		return false;
	}
	if (run->corrupt_rank >= 0 && run->corrupt_choice < 0) {
		char why[200];

		snprintf(why, sizeof why, "wrong sum on rank %d: all-reduce 1 of %d, element 0 of %zu: "
		         "got nan (--test-corrupt-rank; modelled)", run->corrupt_rank,
		         proto_workload_ops(run->w, 0), run->w->bytes[0] / proto_dtype_size(run->w->dtype));
		fail_case(s, 0, PROTO_STAGE_VERIFY, "check of the graph", why);
		return false;
	}
	for (size_t c = 0; c < s->nsizes; c++) {
		s->cases[c].status = CASE_KEPT;
		s->cases[c].us = res.us[c];
		s->cases[c].nccl = model_choice_decision(&res.choice[c]);
		if (run->explain) {
			char what[48];

			snprintf(what, sizeof what, "%zu B", run->w->bytes[c]);
			model_run_explain_choice(what, &res.choice[c], res.us[c]);
		}
	}
	return true;
}

/* Judge case c "not available" when the plugin recorded its forced pair IGNORE. */
static bool judged_ignored(struct sweep_state *s, size_t c, const struct sweep_verdict *v)
{
	const struct sweep_choice *ch = choice_of(s, c);
	const char *a = proto_nccl_algo_name(ch->algo), *p = proto_nccl_proto_name(ch->proto);
	struct scase *k = &s->cases[c];

	if (v->ignored == 0)
		return false;
	k->status = CASE_FAILED;
	k->stage = PROTO_STAGE_ENV;
	snprintf(k->why, sizeof k->why, "not available: %s/%s is not usable here (NCCL's cost "
	         "table has it IGNORE)", a ? a : "*", p ? p : "*");
	return true;
}

/* One NCCL enqueue (or capture) of case c's size under its forced answer: force, ask,
 * clear. Returns false when the run fails (recorded). */
static bool forced_ask(struct sweep_state *s, size_t c, const struct proto_workload *w1,
                       int reg_buff, struct model_force *f)
{
	const struct sweep_plugin *ctl = s->run->control;
	struct model_eval_result res;

	if (sweep_plugin_force(ctl, choice_of(s, c)) != 0) {
		fail_case(s, c, PROTO_STAGE_INIT, "eager all-reduces",
		          "nccltune's tuner plugin refused the forced answer");
		return false;
	}
	memset(&res, 0, sizeof res);
	res.ok = true;
	if (!model_run_ask(s->run, s->t, s->ctx, w1, reg_buff, f, &res)) {
		sweep_plugin_force(ctl, NULL);
		fail_case(s, c, reg_buff ? PROTO_STAGE_CAPTURE : PROTO_STAGE_INIT,
		          reg_buff ? "capture" : "eager all-reduces", res.error);
		return false;
	}
	sweep_plugin_force(ctl, NULL);
	return true;
}

/* The model's verdict on choice case c once NCCL runs f for it. */
static bool evaluate_choice(struct sweep_state *s, size_t c, const struct proto_workload *w1,
                            const struct model_force *f)
{
	const struct model_run *run = s->run;
	struct scase *k = &s->cases[c];
	struct model_eval_result res;
	size_t i = c - s->nsizes;

	model_eval_forced(run->m, run->env, w1, f, &res);
	model_server_eval(run->m, w1, run->cumem_off, &res);
	k->nccl = model_choice_decision(&res.choice[0]);
	if (run->explain) {
		char what[160];

		case_text(s, c, what, sizeof what);
		model_run_explain_choice(what, &res.choice[0], res.us[0]);
	}
	if (!res.ok && res.stage != PROTO_STAGE_VERIFY && res.stage != PROTO_STAGE_REPLAY) {
		/* NCCL failed: its communicator is in an error state, the run cannot go on */
		k->nccl.known = false;
		fail_case(s, c, res.stage, "capture", res.error);
		return false;
	}
	k->status = CASE_KEPT;
	k->us = res.us[0];
	if (!res.ok && res.stage == PROTO_STAGE_REPLAY) {
		k->hangs = true;
		snprintf(k->why, sizeof k->why, "%s", res.error);
	} else if (!res.ok || (run->corrupt_choice >= 0 && (size_t)run->corrupt_choice == i)) {
		int rank = run->corrupt_rank >= 0 ? run->corrupt_rank : 0;

		k->status = CASE_FAILED;
		k->stage = PROTO_STAGE_VERIFY;
		if (!res.ok)
			snprintf(k->why, sizeof k->why, "rank 0: %.*s", (int)sizeof k->why - 10, res.error);
		else
			snprintf(k->why, sizeof k->why, "rank %d: wrong sum on rank %d: all-reduce 1 of %d, "
			         "element 0 of %zu: got nan (--test-corrupt-choice; modelled)", rank, rank,
			         w1->ops, w1->bytes[0] / proto_dtype_size(w1->dtype));
	} else if (run->stall_choice >= 0 && (size_t)run->stall_choice == i) {
		k->hangs = true;
		snprintf(k->why, sizeof k->why, "rank 0 stopped before its first timed replay "
		         "(--test-stall-choice)");
	}
	return true;
}

/* Prepare choice case c as nccltune-probe does: record, eager all-reduces under the
 * force, drain (NCCL must have asked; IGNORE: not available), the capture under the
 * force, drain again, then the model's verdict. Returns false when the run fails. */
static bool prepare_choice(struct sweep_state *s, size_t c)
{
	const struct sweep_plugin *ctl = s->run->control;
	const struct sweep_choice *ch = choice_of(s, c);
	struct sweep_verdict v = { 0, 0, 0 };
	struct model_force f;
	struct proto_workload w1;
	bool ok = false;

	one_size(s->run->w, ch->size, &w1);
	ctl->record(1);
	if (!forced_ask(s, c, &w1, 0, &f) || !forced_ask(s, c, &w1, 0, &f))
		goto out;
	sweep_plugin_drain(ctl, ch->bytes, &v);
	if (v.forced == 0) {
		char why[300];

		snprintf(why, sizeof why, "NCCL did not ask nccltune's tuner plugin about the "
		         "all-reduces of %zu bytes, so nothing can be forced (is NCCL_TUNER_PLUGIN "
		         "loaded by this NCCL? NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING shows it)",
		         ch->bytes);
		fail_case(s, c, PROTO_STAGE_ENV, "eager all-reduces", why);
		goto out;
	}
	if (judged_ignored(s, c, &v)) {
		ok = true;
		goto out;
	}
	if (!forced_ask(s, c, &w1, 1, &f))
		goto out;
	sweep_plugin_drain(ctl, ch->bytes, &v);
	ok = judged_ignored(s, c, &v) || evaluate_choice(s, c, &w1, &f);
out:
	sweep_plugin_force(ctl, NULL);
	ctl->record(0);
	return ok;
}

/* The timed replays: every kept case, in the file's rounds, each round in its seeded
 * order; samples[c * n + k] is case c's k-th timed replay. A hanging case fails the run
 * at its first timed replay. Returns false when the run fails. */
static bool replay(struct sweep_state *s, double *samples, size_t n)
{
	const struct sweep_plan *plan = s->run->sweep;
	struct sweep_schedule sched;
	struct sweep_replay it;
	bool *keep = calloc(s->ncases, sizeof *keep), ok = false;
	int round = -1, last = -1;

	memset(&sched, 0, sizeof sched);
	if (!keep || sweep_schedule_init(&sched, s->ncases, keep, (int)n, plan->rounds, plan->seed,
	                                 true) != 0) {
		model_run_fail(&s->fail, PROTO_STAGE_REPLAY, "out of host memory for the replay order");
		goto out;
	}
	for (size_t c = 0; c < s->ncases; c++)
		keep[c] = s->cases[c].status == CASE_KEPT;
	while (sweep_schedule_next(&sched, &it)) {
		const struct scase *k = &s->cases[it.case_idx];

		/* --explain: each round's order of kept cases, as they are replayed */
		if (s->run->explain && (sched.round != round || it.case_idx != last)) {
			if (sched.round != round)
				fprintf(stderr, "%s  round %d order:", round >= 0 ? "\n" : "", sched.round);
			fprintf(stderr, " %d", it.case_idx);
			round = sched.round;
			last = it.case_idx;
		}

		if (k->hangs) {
			char why[PROTO_ERROR_MAX + 160];

			snprintf(why, sizeof why, "timed out: no progress for %d s (--step-timeout); "
			         "communicators aborted (modelled: %s)", STEP_TIMEOUT_S, k->why);
			fail_case(s, (size_t)it.case_idx, PROTO_STAGE_REPLAY, "timed replays", why);
			goto out;
		}
		samples[(size_t)it.case_idx * n + (size_t)it.sample] =
			model_noise_sample(&s->noise, k->us);
	}
	ok = true;
out:
	if (s->run->explain && round >= 0)
		fprintf(stderr, "\n");
	sweep_schedule_free(&sched);
	free(keep);
	return ok;
}

/* Entry i of the report (case nsizes + i): the choice, then its verdict; with samples,
 * the statistics of its n timed replays (row: n doubles of scratch). */
static void fill_entry(const struct sweep_state *s, size_t i, const double *samples, size_t n,
                       double *row, struct proto_sweep_entry *e)
{
	const struct sweep_choice *ch = &s->run->sweep->choices[i];
	const struct scase *k = &s->cases[s->nsizes + i];

	memset(e, 0, sizeof *e);
	e->index = i;
	e->bytes = ch->bytes;
	e->algo = ch->algo;
	e->proto = ch->proto;
	e->ctas = ch->ctas;
	e->nccl = k->nccl;
	if (k->status != CASE_KEPT) {
		e->ok = false;
		e->stage = k->stage;
		snprintf(e->error, sizeof e->error, "%.*s", (int)sizeof e->error - 1, k->why);
		return;
	}
	e->ok = true;
	e->samples = (int)n;
	memcpy(row, samples + (s->nsizes + i) * n, n * sizeof *row);
	proto_stats_compute(row, n, &e->us);
}

/* The failure report: the run's failure, the choice in flight, the entries final so far
 * (choices judged not available or wrong, index ascending, never the one in flight;
 * choices not prepared yet are none of these). */
static void failure_report(const struct sweep_state *s, struct proto_report *out)
{
	size_t prepared = s->ncases - s->nsizes;
	size_t n = 0;

	memset(out, 0, sizeof *out);
	proto_report_fail(out, s->fail.stage, "%s", s->fail.error);
	out->has_in_flight = s->in_flight;
	out->sweep_in_flight = s->flight;
	for (size_t i = 0; i < prepared; i++)
		n += s->cases[s->nsizes + i].status == CASE_FAILED && !(s->in_flight && i == s->flight);
	if (n == 0)
		return;
	out->sweep = calloc(n, sizeof *out->sweep);   /* out of memory: the failure alone */
	for (size_t i = 0; out->sweep && i < prepared; i++)
		if (s->cases[s->nsizes + i].status == CASE_FAILED && !(s->in_flight && i == s->flight))
			fill_entry(s, i, NULL, 0, NULL, &out->sweep[out->nsweep++]);
}

/* The success report: results per size, one entry per choice. Returns 0, or -1 when out
 * of memory (then a failure report). */
static int success_report(const struct sweep_state *s, const double *samples, size_t n,
                          struct proto_report *out)
{
	const struct model_run *run = s->run;
	double *row = malloc(n * sizeof *row);
	size_t nch = run->sweep->nchoices;
	int rc = -1;

	memset(out, 0, sizeof *out);
	out->sweep = calloc(nch, sizeof *out->sweep);
	if (!row || !out->sweep) {
		proto_report_clear(out);
		proto_report_fail(out, PROTO_STAGE_INIT, "model probe: out of memory for the report");
		goto out;
	}
	out->ok = true;
	out->nranks = model_nranks(run->m);
	snprintf(out->nccl_version, sizeof out->nccl_version, "%s", model_nccl_version(run->m));
	snprintf(out->source, sizeof out->source, "model");
	snprintf(out->model, sizeof out->model, "%s", model_name(run->m));
	out->nresults = s->nsizes;
	for (size_t c = 0; c < s->nsizes; c++) {
		struct proto_size_result *r = &out->results[c];

		memcpy(row, samples + c * n, n * sizeof *row);
		r->bytes = run->w->bytes[c];
		r->ops = proto_workload_ops(run->w, c);
		r->samples = (int)n;
		r->correct = true;
		r->nccl = s->cases[c].nccl;
		proto_stats_compute(row, n, &r->us);
	}
	for (size_t i = 0; i < nch; i++)
		fill_entry(s, i, samples, n, row, &out->sweep[out->nsweep++]);
	model_server_report(run->m, run->w, out);
	rc = 0;
out:
	free(row);
	return rc;
}

void model_run_sweep(const struct model_run *run, struct proto_report *out)
{
	struct sweep_state s;
	struct model_eval_result res;
	size_t n = model_noise_samples(run->w);
	double *samples = NULL;
	bool ok = false;

	memset(&s, 0, sizeof s);
	memset(out, 0, sizeof *out);
	s.run = run;
	s.nsizes = run->w->nsizes;
	s.ncases = s.nsizes + run->sweep->nchoices;
	s.fail.ok = true;
	s.cases = calloc(s.ncases, sizeof *s.cases);
	samples = calloc(s.ncases * n, sizeof *samples);
	if (!s.cases || !samples) {
		model_run_fail(&s.fail, PROTO_STAGE_INIT, "model probe: out of memory for %zu cases x "
		               "%zu replays", s.ncases, n);
		goto out;
	}
	/* init: the configuration, the process's noise, the communicator and its tuner */
	model_eval(run->m, run->env, run->w, &res);
	if (!res.ok && res.stage <= PROTO_STAGE_INIT) {
		s.fail = res;
		goto out;
	}
	if (model_noise_begin(&s.noise, run->m, run->noise, run->rng) != 0) {
		model_run_fail(&s.fail, PROTO_STAGE_INIT, "ncclCommInitRank failed: remote process "
		               "exited or there was a network error (simulated transient failure)");
		goto out;
	}
	if (!model_run_tuner_start(run, &s.t, &s.ctx, &s.fail))
		goto out;
	if (run->explain)
		model_run_explain_head(run, s.t);
	if (!own_cases(&s))
		goto out;
	for (size_t c = s.nsizes; c < s.ncases; c++)
		if (!prepare_choice(&s, c))
			goto out;
	if (!replay(&s, samples, n))
		goto out;
	ok = true;
out:
	model_run_tuner_end(s.t, s.ctx);
	if (!ok) {
		if (run->explain)
			fprintf(stderr, "  fails at %s: %s\n", proto_stage_name(s.fail.stage), s.fail.error);
		failure_report(&s, out);
	} else {
		success_report(&s, samples, n, out);
	}
	free(samples);
	free(s.cases);
}
