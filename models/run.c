/* run.c - one run of nccltune-model-probe (run.h): the communicator's init (and with it
 * the tuner plugin NCCL_TUNER_PLUGIN names, loaded as NCCL loads it), getCollInfo per
 * size with NCCL's cost table, NCCL's use of the answer, the model's evaluation of what
 * ran, and the report. */
#include "run.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The communicator id handed to a v5/v6 plugin: NCCL passes its commHash; any fixed
 * value serves one modelled communicator. */
#define MODEL_COMM_ID 0x6d6f64656c636f6dull

void model_run_fail(struct model_eval_result *r, enum proto_stage stage, const char *fmt, ...)
{
	va_list ap;

	r->ok = false;
	r->stage = stage;
	va_start(ap, fmt);
	vsnprintf(r->error, sizeof r->error, fmt, ap);
	va_end(ap);
}

bool model_run_tuner_start(const struct model_run *run, struct model_tuner **t, void **ctx,
                        struct model_eval_result *fail)
{
	char why[512];
	int rc;

	*ctx = NULL;
	*t = model_tuner_cache_get(run->tuners, run->tuner_plugin, model_nccl_version(run->m),
	                           why, sizeof why);
	if (!*t) {
		if (why[0])
			fprintf(stderr, "nccltune-model-probe: warning: NCCL_TUNER_PLUGIN=%s: %s; NCCL %s "
			        "runs without a tuner plugin (it says so only with NCCL_DEBUG=INFO)\n",
			        run->tuner_plugin ? run->tuner_plugin : "(unset)", why,
			        model_nccl_version(run->m));
		return true;
	}
	rc = model_tuner_init(*t, model_nranks(run->m), 1, MODEL_COMM_ID, ctx);
	if (rc != 0) {
		model_run_fail(fail, PROTO_STAGE_INIT, "ncclCommInitRank failed: the tuner plugin %s (%s) "
		        "returned %d from init (NCCL fails the communicator)", model_tuner_file(*t),
		        model_tuner_symbol(*t), rc);
		*t = NULL;
		return false;
	}
	return true;
}

bool model_run_ask(const struct model_run *run, struct model_tuner *t, void *ctx,
                   const struct proto_workload *w, int reg_buff, struct model_force *force,
                   struct model_eval_result *fail)
{
	struct model_costs tables[PROTO_MAX_SIZES];

	for (size_t i = 0; i < w->nsizes; i++)
		force[i] = (struct model_force){ -1, -1, 0 };
	if (!t)
		return true;
	model_cost_tables(run->m, run->env, w, tables);
	for (size_t i = 0; i < w->nsizes; i++) {
		struct model_costs after = tables[i];
		int nch = 0, rc;

		rc = model_tuner_ask(t, ctx, w->bytes[i], reg_buff, &after, &nch);
		if (rc != 0) {
			model_run_fail(fail, PROTO_STAGE_INIT, "ncclAllReduce failed: the tuner plugin %s "
			        "returned %d from getCollInfo for %zu bytes (NCCL fails the collective)",
			        model_tuner_file(t), rc, w->bytes[i]);
			return false;
		}
		if (model_force_from_table(&tables[i], &after, nch, &force[i]) != 0) {
			model_run_fail(fail, PROTO_STAGE_CAPTURE, "ncclAllReduce failed: invalid usage (no "
			        "algorithm/protocol available for function AllReduce of %zu bytes: the "
			        "tuner plugin left no usable entry in the cost table)", w->bytes[i]);
			return false;
		}
	}
	return true;
}

void model_run_explain_head(const struct model_run *run, const struct model_tuner *t)
{
	const struct model *m = run->m;

	fprintf(stderr, "model %s (%d ranks, NCCL %s), tuner plugin: %s%s%s%s\n", model_name(m),
	        model_nranks(m), model_nccl_version(m), t ? model_tuner_file(t) : "none",
	        t ? " (" : "", t ? model_tuner_symbol(t) : "", t ? ")" : "");
}

void model_run_explain_choice(const char *what, const struct model_choice *c, double us)
{
	fprintf(stderr, "  %s: %s/%s, %d of %d channels, %d threads, %s; NCCL predicted %.1f us, "
	        "model %.2f us%s%s\n", what, model_algo_name(c->algo), model_proto_name(c->proto),
	        c->channels, c->comm_channels, c->threads,
	        c->host_path ? "proxy (host memory path)" : "no proxy", c->nccl_us, us,
	        c->tuned ? " (the tuner's answer)" : "", c->revived ? " (revived IGNORE pair)" : "");
}

static void explain(const struct model_run *run, const struct model_eval_result *res,
                    const struct model_tuner *t)
{
	char what[48];

	model_run_explain_head(run, t);
	for (size_t i = 0; res->ok && i < res->nsizes; i++) {
		snprintf(what, sizeof what, "%zu B", run->w->bytes[i]);
		model_run_explain_choice(what, &res->choice[i], res->us[i]);
	}
	if (!res->ok)
		fprintf(stderr, "  fails at %s: %s\n", proto_stage_name(res->stage), res->error);
}

void model_run_plain(const struct model_run *run, struct proto_report *out)
{
	struct model_force force[PROTO_MAX_SIZES];
	struct model_eval_result res;
	struct model_tuner *t = NULL;
	void *ctx = NULL;
	char err[PROTO_ERROR_MAX];

	memset(out, 0, sizeof *out);
	/* the communicator's init comes first: what fails there never asks a tuner */
	model_eval(run->m, run->env, run->w, &res);
	if ((res.ok || res.stage > PROTO_STAGE_INIT) && model_run_tuner_start(run, &t, &ctx, &res) &&
	    model_run_ask(run, t, ctx, run->w, 1, force, &res))
		model_eval_forced(run->m, run->env, run->w, t ? force : NULL, &res);
	model_server_eval(run->m, run->w, run->cumem_off, &res);
	if (res.ok && run->corrupt_rank >= model_nranks(run->m))
		model_run_fail(&res, PROTO_STAGE_INIT, "--test-corrupt-rank %d: there are only %d rank(s)",
		        run->corrupt_rank, model_nranks(run->m));
	else if (res.ok && run->corrupt_rank >= 0)
		model_run_fail(&res, PROTO_STAGE_VERIFY, "check of the graph of %zu bytes: wrong sum on rank "
		        "%d: all-reduce 1 of %d, element 0 of %zu: got nan (--test-corrupt-rank; "
		        "modelled)", run->w->bytes[0], run->corrupt_rank, proto_workload_ops(run->w, 0),
		        run->w->bytes[0] / proto_dtype_size(run->w->dtype));
	if (run->explain)
		explain(run, &res, t);
	if (model_report(run->m, &res, run->w, run->noise, run->rng, out, err, sizeof err) != 0)
		fprintf(stderr, "nccltune-model-probe: %s\n", err);
	model_server_report(run->m, run->w, out);
	model_run_tuner_end(t, ctx);
}

void model_run_tuner_end(struct model_tuner *t, void *ctx)
{
	int rc;

	if (!t)
		return;
	rc = model_tuner_finalize(t, ctx);
	if (rc != 0)
		fprintf(stderr, "nccltune-model-probe: warning: the tuner plugin returned %d from "
		        "finalize\n", rc);
}
