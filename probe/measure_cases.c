/* measure_cases.c - the cases of a measurement (see measure.c for the whole flow): a
 * sweep choice forced through nccltune's tuner plugin, its eager warm-up, the ranks'
 * vote on it, its capture, the preparation of every case (capture, instantiate,
 * check), and the replays: queued MEASURE_WINDOW ahead, in case order for a plain run
 * and in the sweep file's interleaved rounds for a sweep. */
#include "measure.h"
#include "measure_impl.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "callcheck.h"

/* Capture case c's ops, each on its own slice, into case c's graph on every local rank. */
int measure_capture(struct measure *m, size_t c)
{
	size_t size = probe_case_size(m->cfg, c);
	int ops = proto_workload_ops(m->w, size), rc = -1;

	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		/* Thread-local: NCCL's own threads may make CUDA calls while we capture. */
		CUDACHECK(&m->chk, cudaStreamBeginCapture(r->stream, cudaStreamCaptureModeThreadLocal));
		r->capturing = true;
	}
	/* with --compute-us, each all-reduce follows its kernel, as a layer's follows its GEMM */
	for (int op = 0; op < ops; op++)
		if (measure_compute_launch(m) != 0 ||
		    measure_enqueue_allreduce(m, m->w->bytes[size], op) != 0)
			goto out;
	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		r->capturing = false;
		CUDACHECK(&m->chk, cudaStreamEndCapture(r->stream, &r->graph[c]));
	}
	rc = 0;
out:
	return rc;
}

/* Queue one replay of case c on every local rank: barrier all-reduce, start event,
 * graph, stop event. The barrier lines the ranks up on the GPU, so the start events of
 * all ranks fire together and launch skew stays out of the measured interval. */
static int enqueue_replay(struct measure *m, int slot, int c)
{
	int rc = -1;

	if (measure_enqueue_allreduce(m, 0, SLICE_BARRIER) != 0)
		goto out;
	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		CUDACHECK(&m->chk, cudaEventRecord(r->start[slot], r->stream));
		CUDACHECK(&m->chk, cudaGraphLaunch(r->exec[c], r->stream));
		CUDACHECK(&m->chk, cudaEventRecord(r->stop[slot], r->stream));
	}
	rc = 0;
out:
	return rc;
}

/* Wait for the replay queued as number j (ring slot j % MEASURE_RING) and, when timed,
 * read its time into each rank's ms. */
static int finish_replay(struct measure *m, int j)
{
	int slot = j % MEASURE_RING, rc = -1;
	const struct sweep_replay *it = &m->slot_item[slot];

	measure_note_case(m, it->case_idx);
	if (measure_wait_ranks(m, slot) != 0)
		goto out;
	for (int k = 0; it->sample >= 0 && k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];
		float ms = 0;

		CUDACHECK(&m->chk, cudaEventElapsedTime(&ms, r->start[slot], r->stop[slot]));
		m->out[k].ms[(size_t)it->case_idx * (size_t)m->w->iters + (size_t)it->sample] = ms;
	}
	measure_kick(m);
	rc = 0;
out:
	return rc;
}

/* Where replays come from: a schedule (the timed ones), or `count` untimed replays of
 * each kept case in case order (warm-up), or of the one case `only` (a check). */
struct replay_source {
	struct sweep_schedule *sched;
	int count;
	int only;         /* -1: every kept case */
	size_t c;
	int k;
};

static bool source_next(struct measure *m, struct replay_source *src, struct sweep_replay *out)
{
	if (src->sched)
		return sweep_schedule_next(src->sched, out);
	while (src->c < m->ncases) {
		bool mine = src->only < 0 ? m->keep[src->c] : (int)src->c == src->only;

		if (mine && src->k < src->count) {
			out->case_idx = (int)src->c;
			out->sample = -1;
			src->k++;
			return true;
		}
		src->c++;
		src->k = 0;
	}
	return false;
}

/* --test-stall-choice: rank 0 stops for good before the first timed replay of that
 * choice, as a choice whose graph hung would; the watchdog or the other ranks' step
 * timeout ends the run. */
static void maybe_stall(struct measure *m, const struct sweep_replay *it)
{
	if (m->cfg->stall_choice < 0 || m->rank0 < 0 || it->sample != 0 ||
	    it->case_idx != (int)m->w->nsizes + m->cfg->stall_choice)
		return;
	measure_note_case(m, it->case_idx);
	fprintf(stderr, "nccltune-probe: rank 0: --test-stall-choice %d: stopping before its "
	        "first timed replay\n", m->cfg->stall_choice);
	for (;;)
		sleep(1);
}

/* Every replay of src, the host at most MEASURE_WINDOW replays ahead of the GPU. */
static int run_replays(struct measure *m, struct replay_source *src)
{
	struct sweep_replay it;
	int queued = 0, rc = -1;

	while (source_next(m, src, &it)) {
		if (queued >= MEASURE_WINDOW && finish_replay(m, queued - MEASURE_WINDOW) != 0)
			goto out;
		maybe_stall(m, &it);
		m->slot_item[queued % MEASURE_RING] = it;
		if (enqueue_replay(m, queued % MEASURE_RING, it.case_idx) != 0)
			goto out;
		queued++;
	}
	for (int j = queued > MEASURE_WINDOW ? queued - MEASURE_WINDOW : 0; j < queued; j++)
		if (finish_replay(m, j) != 0)
			goto out;
	if (measure_wait_ranks(m, -1) != 0)
		goto out;
	rc = 0;
out:
	return rc;
}

/* The ranks agree on case c: each local rank says whether it found the case bad
 * (m->bad), one all-reduce sums the verdicts, and *any tells whether some rank of the
 * communicator did. Sweep choices are dropped on every rank alike this way, so the
 * replays that follow stay collectives every rank takes part in. */
static int vote(struct measure *m, bool *any)
{
	int rc = -1;

	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		m->votes[k] = m->bad[k] ? 1.0f : 0.0f;
		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		CUDACHECK(&m->chk, cudaMemcpyAsync(r->vote, &m->votes[k], sizeof *r->vote,
		                                   cudaMemcpyHostToDevice, r->stream));
	}
	if (measure_enqueue_allreduce(m, 0, SLICE_VOTE) != 0 || measure_wait_ranks(m, -1) != 0)
		goto out;
	*any = false;
	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		CUDACHECK(&m->chk, cudaMemcpy(&m->votes[k], r->vote, sizeof *r->vote,
		                              cudaMemcpyDeviceToHost));
		*any = *any || m->votes[k] > 0.5f;
	}
	rc = 0;
out:
	return rc;
}

/* After a vote that went against case c: FAILED (with the reason already in
 * cases[c].error, at `stage`) on the local ranks that found it bad, DROPPED on the
 * others; the graph goes. */
static void reject_case(struct measure *m, size_t c, enum proto_stage stage)
{
	for (int k = 0; k < m->s->nlocal; k++) {
		struct probe_case_result *cr = &m->out[k].cases[c];

		cr->status = m->bad[k] ? PROBE_CASE_FAILED : PROBE_CASE_DROPPED;
		cr->stage = (int32_t)stage;
		if (!m->bad[k])
			cr->error[0] = '\0';
	}
	measure_drop_case(m, c);
	m->keep[c] = false;
}

/* Force sweep choice ch through the plugin's control interface. 0, or -1 recorded. */
static int measure_force(struct measure *m, const struct sweep_choice *ch)
{
	if (sweep_plugin_force(m->s->plugin, ch) != 0) {
		check_failf(&m->chk, "nccltune's tuner plugin refused the forced answer");
		return -1;
	}
	return 0;
}

/* Set every local rank's verdict to "not available" when the plugin says the forced pair
 * is IGNORE; returns whether it did. */
static bool judge_ignored(struct measure *m, size_t c, const struct sweep_verdict *v)
{
	const struct sweep_choice *ch = probe_case_choice(m->cfg, c);
	const char *a = proto_nccl_algo_name(ch->algo), *p = proto_nccl_proto_name(ch->proto);

	for (int k = 0; k < m->s->nlocal; k++) {
		m->bad[k] = v->ignored > 0;
		if (m->bad[k])
			snprintf(m->out[k].cases[c].error, sizeof m->out[k].cases[c].error,
			         "not available: %s/%s is not usable here (NCCL's cost table has it "
			         "IGNORE)", a ? a : "*", p ? p : "*");
	}
	return v->ignored > 0;
}

/* Eager all-reduces of case c's size, under c's forced answer when it is a choice: NCCL
 * builds connections lazily, at the first collective that needs them, and a forced
 * algorithm may need ones the others did not. Returns 0 with *usable telling whether a
 * choice survived the plugin's verdict (always true for a plain size), or -1 (run
 * failure, recorded). */
static int eager(struct measure *m, size_t c, bool *usable)
{
	const struct sweep_choice *ch = probe_case_choice(m->cfg, c);
	size_t size = probe_case_size(m->cfg, c), bytes = m->w->bytes[size];
	struct sweep_verdict v = {0, 0, 0};
	bool any = false;
	char text[128];
	int rc = -1;

	*usable = true;
	measure_case_text(m, c, text, sizeof text);
	measure_step_begin(m, PROBE_STEP_EAGER, "eager all-reduces of %s (before capture)", text);
	if (measure_load_inputs(m, size) != 0)
		goto out;
	if (ch) {
		m->s->plugin->record(1);
		if (measure_force(m, ch) != 0)
			goto out;
	}
	if (measure_enqueue_allreduce(m, bytes, 0) != 0 || measure_enqueue_allreduce(m, bytes, 0) != 0)
		goto out;
	if (ch && measure_force(m, NULL) != 0)
		goto out;
	if (measure_enqueue_allreduce(m, 0, SLICE_BARRIER) != 0 || measure_wait_ranks(m, -1) != 0)
		goto out;
	if (ch) {
		sweep_plugin_drain(m->s->plugin, bytes, &v);
		/* one rank: NCCL copies (or does nothing) and never asks a tuner */
		if (m->s->nranks > 1 && v.forced == 0) {
			measure_fail(m, PROTO_STAGE_ENV, "NCCL did not ask nccltune's tuner plugin about the "
			        "all-reduces of %zu bytes, so nothing can be forced (is NCCL_TUNER_PLUGIN "
			        "loaded by this NCCL? NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING shows "
			        "it)", bytes);
			goto out;
		}
		judge_ignored(m, c, &v);
		if (vote(m, &any) != 0)
			goto out;
		if (any) {
			reject_case(m, c, PROTO_STAGE_ENV);
			*usable = false;
		}
	}
	measure_step_end(m);
	rc = 0;
out:
	return rc;
}

/* Prepare case c: eager, capture (its TUNING lines give the decision), instantiate,
 * check. A plain size that fails its check fails the run; a sweep choice the plugin
 * calls IGNORE or that gives a wrong sum on any rank is dropped on all ranks and the
 * run goes on. Returns 0, or -1 on a run failure (recorded). */
int measure_prepare_case(struct measure *m, size_t c)
{
	const struct sweep_choice *ch = probe_case_choice(m->cfg, c);
	size_t size = probe_case_size(m->cfg, c), bytes = m->w->bytes[size];
	int ops = proto_workload_ops(m->w, size), rc = -1;
	struct replay_source one = {NULL, 1, (int)c, 0, 0};
	struct sweep_verdict v = {0, 0, 0};
	struct nccllog_reader *log = m->rank0 >= 0 ? m->s->log : NULL;
	bool usable, any = false;
	char text[128];

	m->cur_case = (int)c;
	measure_case_text(m, c, text, sizeof text);
	if (eager(m, c, &usable) != 0)
		goto out;
	if (!usable) {
		rc = 0;
		goto out;
	}

	measure_step_begin(m, PROBE_STEP_CAPTURE, "capture of %d all-reduces of %s", ops, text);
	if (log)
		nccllog_window_begin(log, bytes);
	if ((ch && measure_force(m, ch) != 0) || measure_capture(m, c) != 0 ||
	    (ch && measure_force(m, NULL) != 0))
		goto out;
	if (log)
		nccllog_window_end(log, ops, &m->out[m->rank0].cases[c].nccl);
	measure_step_end(m);

	measure_step_begin(m, PROBE_STEP_INSTANTIATE, "instantiation of the graph of %s", text);
	if (measure_instantiate(m, c) != 0)
		goto out;
	measure_step_end(m);
	if (ch) {
		sweep_plugin_drain(m->s->plugin, bytes, &v);
		m->s->plugin->record(0);
	}

	/* In place the slices hold the eager ops' sums: reset the inputs, replay the graph
	 * once and check every element of every op. The timed replays reuse this graph. */
	measure_step_begin(m, PROBE_STEP_VERIFY, "check of the graph of %s", text);
	m->step_label = NULL;
	if (measure_load_inputs(m, size) != 0 || run_replays(m, &one) != 0 ||
	    measure_check_outputs(m, c) != 0)
		goto out;
	if (!ch) {
		for (int k = 0; k < m->s->nlocal; k++) {
			if (m->bad[k]) {
				check_failf(&m->chk, "%s", m->out[k].cases[c].error);
				goto out;
			}
		}
	} else {
		bool ignored = false;

		/* the capture asked the plugin again; an IGNORE there outranks the check */
		for (int k = 0; k < m->s->nlocal && v.ignored > 0; k++)
			m->bad[k] = false;
		if (v.ignored > 0)
			ignored = judge_ignored(m, c, &v);
		if (vote(m, &any) != 0)
			goto out;
		if (any) {
			reject_case(m, c, ignored ? PROTO_STAGE_ENV : PROTO_STAGE_VERIFY);
			measure_step_end(m);
			rc = 0;
			goto out;
		}
	}
	measure_step_end(m);
	for (int k = 0; k < m->s->nlocal; k++)
		m->out[k].cases[c].status = PROBE_CASE_KEPT;
	m->keep[c] = true;
	rc = 0;
out:
	if (ch && m->s->plugin) {
		m->s->plugin->force(NULL);
		m->s->plugin->record(0);
	}
	return rc;
}

/* Warm-up of every kept graph, then the timed replays: a plain run in case order, one
 * round; a sweep in the file's rounds, each in its seeded order. */
int measure_replay_all(struct measure *m)
{
	struct replay_source warm = {NULL, m->w->warmup, -1, 0, 0};
	struct replay_source timed = {NULL, 0, -1, 0, 0};
	struct sweep_schedule sched;
	bool sweep = m->cfg->sweep.nchoices > 0;
	int rc = -1;

	memset(&sched, 0, sizeof sched);
	measure_step_begin(m, PROBE_STEP_WARMUP, "%d warm-up replays of each graph", m->w->warmup);
	m->step_label = "warm-up replays";
	if (run_replays(m, &warm) != 0)
		goto out;
	measure_step_end(m);

	if (sweep_schedule_init(&sched, m->ncases, m->keep, m->w->iters,
	                        sweep ? m->cfg->sweep.rounds : 1, m->cfg->sweep.seed, sweep) != 0) {
		check_failf(&m->chk, "out of host memory for the replay order");
		goto out;
	}
	timed.sched = &sched;
	if (sweep)
		measure_step_begin(m, PROBE_STEP_TIMING, "%d timed replays of each graph in %d interleaved "
		           "rounds (seed %llu)", m->w->iters, m->cfg->sweep.rounds,
		           (unsigned long long)m->cfg->sweep.seed);
	else
		measure_step_begin(m, PROBE_STEP_TIMING, "%d timed replays of each graph", m->w->iters);
	m->step_label = "timed replays";
	if (run_replays(m, &timed) != 0)
		goto out;
	measure_step_end(m);
	rc = 0;
out:
	m->step_label = NULL;
	sweep_schedule_free(&sched);
	return rc;
}

