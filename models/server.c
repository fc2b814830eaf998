/* server.c - what a server's step adds, as the model sees it (MODEL, never a
 * measurement): the compute kernel of --compute-us competing with NCCL's CTAs for SMs,
 * and the symmetric kernels of --window symmetric on NVLink machines (model.h has the
 * model in words; docs/probe-protocol.md and models/README.md too). */
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "modeldef.h"

int model_sms(const struct model *m)
{
	static const struct { int cc, sms; } table[] = {
		{70, 80}, {80, 108}, {90, 132}, {100, 148}, {120, 188},
	};

	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (table[i].cc == m->compute_capability)
			return table[i].sms;
	return 100;
}

int model_compute_ctas(const struct model *m, const struct proto_workload *w)
{
	return w->compute_ctas > 0 ? w->compute_ctas : model_sms(m);
}

/* The kernel's duration next to an all-reduce on `nccl_ctas` CTAs. */
static double kernel_next_to(const struct model *m, const struct proto_workload *w,
                             int nccl_ctas)
{
	int c = model_compute_ctas(m, w), excess = nccl_ctas + c - model_sms(m);

	return excess > 0 ? w->compute_us * (1.0 + (double)excess / c) : w->compute_us;
}

void model_server_eval(const struct model *m, const struct proto_workload *w, bool cumem_off,
                       struct model_eval_result *res)
{
	bool symmetric_kernels = m->nvlinks > 0 && m->ngpus > 1;

	if (!res->ok)
		return;
	if (w->window_symmetric && cumem_off) {
		res->ok = false;
		res->stage = PROTO_STAGE_ENV;
		snprintf(res->error, sizeof res->error, "--window symmetric needs cuMem (symmetric "
		         "windows are cuMem mappings), and NCCL_CUMEM_ENABLE=0 turns it off (modelled)");
		return;
	}
	for (size_t i = 0; i < res->nsizes; i++) {
		struct model_choice *ch = &res->choice[i];

		if (w->window_symmetric && symmetric_kernels && w->bytes[i] <= MODEL_SYMMETRIC_MAX_BYTES) {
			ch->symmetric = true;
			res->us[i] /= MODEL_SYMMETRIC_GAIN;
		}
		if (w->compute_us > 0)
			res->us[i] += kernel_next_to(m, w, ch->channels);
	}
}

void model_server_report(const struct model *m, const struct proto_workload *w,
                         struct proto_report *out)
{
	if (!out->ok)
		return;
	out->window_symmetric = w->window_symmetric;
	if (w->compute_us <= 0)
		return;
	out->compute.known = true;
	out->compute.kernel_us = w->compute_us;
	out->compute.ctas = model_compute_ctas(m, w);
	out->compute.us = (struct proto_stats){w->compute_us, w->compute_us, w->compute_us,
	                                       w->compute_us, w->compute_us};
	for (size_t i = 0; i < out->nresults; i++) {
		struct proto_size_result *r = &out->results[i];
		double share = r->us.median - w->compute_us;

		r->has_step = true;
		r->step_us = r->us.median * r->ops;
		r->allreduce_us = share > 0 ? share : 0;
	}
}
