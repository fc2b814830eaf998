/* eval.c - the latency evaluator: what NCCL 2.28 decides for a small all-reduce on the
 * modelled machine, and what that decision costs there.
 *
 * Layer 1 (NCCL's belief, re-derived from reading graph/tuning.cc, enqueue.cc and
 * graph/connect.cc): the cost model's latency and bandwidth per algorithm x protocol,
 * the user's NCCL_ALGO/NCCL_PROTO filters, the pick of the cheapest pair, the channel and
 * thread counts NCCL gives the kernel for the message size, and the transport of each ring
 * hop from NCCL_P2P_LEVEL / P2P_DISABLE / SHM_DISABLE.
 *
 * Layer 2 (the machine, constants from the model file): per-op launch cost, per-hop
 * latency by transport and PCIe path, per-CTA bandwidth that grows with threads up to a
 * saturation point and is capped per link, CTA synchronisation, and the host callback a
 * graph replay carries when some hop needs NCCL's proxy. NCCL never sees layer 2; on
 * PCIe boxes its choices are therefore not the best ones, which is what tuning finds. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "modeldef.h"

/* ---- NCCL 2.28 constants (graph/tuning.cc, device.h, topo.h) ---- */

#define NCCL_MAX_NTHREADS 640
#define NCCL_SIMPLE_MAX_NTHREADS 512
#define NCCL_LL_MAX_NTHREADS 512
#define NCCL_LL128_MAX_NTHREADS 640
#define WARP_SIZE 32
#define PCI_BW 12.0
#define NVLS_NCHANNELS 16
#define MIN_TRAFFIC_PER_CHANNEL 32768      /* enqueue.cc, scheduleCollTasksToPlan */
#define DEFAULT_LL_BUFFSIZE 524288LL
#define DEFAULT_LL128_BUFFSIZE 4915200LL
#define DEFAULT_BUFFSIZE 4194304LL
#define NCCL_STEPS 8

static const double base_lat[MODEL_NALGOS][MODEL_NPROTOS] = {
	{ 6.8, 14.0, 8.4 }, { 6.6, 14.0, 8.4 }, { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 },
	{ 0, 0, 0 }, { 0, 0, 0 },
};
/* [NVLink, PCI][algo][proto] */
static const double hw_lat[2][MODEL_NALGOS][MODEL_NPROTOS] = {
	{ { .6, 1.25, 4.0 }, { .6, 1.9, 3.4 }, { 0, 0, 3.7 }, { 0, 0, 2.8 }, { 0, 0, 25 },
	  { 0, 0, 25 }, { 0, 0, 0 } },
	{ { 1.0, 1.9, 4.0 }, { 1.0, 2.5, 5.7 }, { 0, 0, 3.7 }, { 0, 0, 2.8 }, { 0, 0, 0 },
	  { 0, 0, 0 }, { 0, 0, 0 } },
};
/* one node, by compute capability: Volta, Ampere, Hopper, Blackwell */
static const double ll_max_bw[4] = { 39.0, 87.7, 141.0, 282.0 };
static const double per_ch_ring_ll128_bw[4] = { 20.0, 20.0, 36.7, 73.4 };
static const double per_ch_tree_ll128_bw[4] = { 20.0, 20.0, 36.7, 73.4 };
static const double per_ch_tree_bw[4] = { 26.5, 24.0, 38.7, 77.4 };
static const double tree_correction[MODEL_NPROTOS][23] = {
	{ 1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0,
	  1.0, 1.0, 1.0 },
	{ 1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9,
	  .9, 1.0, 1.0 },
	{ .9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8,
	  .9, .9 },
};

static const double payload[MODEL_NPROTOS] = { 0.5, 120.0 / 128.0, 1.0 };

/* Everything about the communicator that does not depend on the message size. */
struct comm {
	int n;
	enum model_transport hop_tr[MODEL_MAX_GPUS];   /* ring hop i -> i+1 */
	double hop_extra[MODEL_MAX_GPUS];              /* path cost of that hop */
	bool host_path;
	int nchannels;
	int max_threads[MODEL_NALGOS][MODEL_NPROTOS];
	long long threshold[MODEL_NALGOS][MODEL_NPROTOS];
	double lat[MODEL_NALGOS][MODEL_NPROTOS];
	double bw[MODEL_NALGOS][MODEL_NPROTOS];        /* NCCL's belief; 0: not usable */
	long long buffsize[MODEL_NPROTOS];
};

/* getNthreads from graph/tuning.cc: a bad NCCL_NTHREADS is silently replaced. */
static int nthreads(long long env, int lo, int hi, int deflt)
{
	int nt = (int)env;

	if (nt <= 0)
		return deflt;
	if (nt % WARP_SIZE != 0 || nt > hi)
		return hi;
	return nt < lo ? lo : nt;
}

static int log2i(long long v)
{
	int l = -1;

	while (v > 0) {
		v >>= 1;
		l++;
	}
	return l;
}

static int cc_index(int cc)
{
	return cc >= 100 ? 3 : cc >= 90 ? 2 : cc >= 80 ? 1 : 0;
}

static bool nvls_usable(const struct model *m, const struct model_env *env)
{
	long long enable = env->nvls_enable != -2 ? env->nvls_enable : m->nvls_enable_default;

	if (enable == 0 || m->ngpus <= 2 || m->nvlinks == 0 || m->compute_capability < 90)
		return false;     /* no NVSwitch: NCCL's NVLS search finds no channel */
	return enable == 2 ? m->nvls_capable : true;
}

static enum model_transport hop_transport(const struct model *m, const struct model_env *env,
                                          int a, int b)
{
	enum model_link l = m->link[a][b];
	int path = model_link_path(l);
	int level = env->p2p_level >= 0 ? env->p2p_level
	          : (m->cpu_amd && m->ngpus <= 2) ? MODEL_PATH_SYS : MODEL_PATH_PXB;

	/* NCCL_P2P_LEVEL allows it, and NVML says the pair can (the driver's limit) */
	if (path <= level && path <= m->p2p_max_path)
		return l == MODEL_LINK_NV ? MODEL_TRANSPORT_NVLINK : MODEL_TRANSPORT_P2P;
	return env->shm_disable ? MODEL_TRANSPORT_NET : MODEL_TRANSPORT_SHM;
}

/* ncclTopoTuneModel for one node: NCCL's latency and bandwidth per algorithm x protocol
 * for AllReduce, after the user's and NCCL's own enable/disable decisions. */
static void tune_model(const struct model *m, const struct model_env *env, struct comm *c)
{
	int n = c->n, nsteps = 2 * (n - 1), cci = cc_index(m->compute_capability);
	int hw = m->type_intra == MODEL_PATH_NVL ? 0 : 1;
	bool nvls = nvls_usable(m, env);

	memset(c->lat, 0, sizeof c->lat);
	memset(c->bw, 0, sizeof c->bw);
	for (int a = 0; a < MODEL_NALGOS; a++) {
		for (int p = 0; p < MODEL_NPROTOS; p++) {
			double bus = m->graph_channels * m->bw_intra, ratio, intra = hw_lat[hw][a][p];
			int pen = env->proto_enable[p];

			if (a != MODEL_ALGO_TREE && a != MODEL_ALGO_RING && a != MODEL_ALGO_NVLS)
				continue;   /* CollNet off, NVLSTree off on one node, PAT not for AllReduce */
			if (a == MODEL_ALGO_NVLS && (p != MODEL_PROTO_SIMPLE || !nvls))
				continue;
			if (a == MODEL_ALGO_RING && p == MODEL_PROTO_LL)
				bus = fmin(ll_max_bw[cci], bus * .5);
			if (a == MODEL_ALGO_RING && p == MODEL_PROTO_LL128)
				bus = fmin(bus * .92, m->graph_channels * per_ch_ring_ll128_bw[cci]);
			if (a == MODEL_ALGO_TREE)
				bus = fmin(bus * .92, m->graph_channels * per_ch_tree_bw[cci]);
			if (a == MODEL_ALGO_TREE && p == MODEL_PROTO_LL)
				bus = fmin(bus / 3.8, ll_max_bw[cci]);
			if (a == MODEL_ALGO_TREE && p == MODEL_PROTO_LL128)
				bus = fmin(bus * 7.0 / 9.0, m->graph_channels * per_ch_tree_ll128_bw[cci]);
			if (a == MODEL_ALGO_NVLS)
				bus = m->nvls_busbw;
			ratio = a == MODEL_ALGO_RING ? (double)n / nsteps : a == MODEL_ALGO_NVLS ? 5.0 / 6.0 : .5;
			c->bw[a][p] = bus * ratio;
			if (a == MODEL_ALGO_RING)
				c->lat[a][p] = base_lat[a][p] + nsteps * intra;
			else if (a == MODEL_ALGO_TREE)
				c->lat[a][p] = base_lat[a][p] + 2 * ((n - 1) * intra);
			else
				c->lat[a][p] = hw_lat[0][a][p];

			/* LL128 "auto": only up to NVB paths, equal compute capabilities (one
			 * node: the inter-node type is PIX). Naming LL128 skips these checks. */
			if (pen == 2 && p == MODEL_PROTO_LL128)
				pen = m->type_intra <= MODEL_PATH_NVB;
			if (pen == 0 || env->algo_enable[a] == 0)
				c->bw[a][p] = 0;
		}
	}
}

static void comm_setup(const struct model *m, const struct model_env *env, struct comm *c)
{
	int simple_default;
	static const long long thr[MODEL_NPROTOS] = { 8, 8, 64 };
	static const long long defaults[MODEL_NPROTOS] = {
		DEFAULT_LL_BUFFSIZE, DEFAULT_LL128_BUFFSIZE, DEFAULT_BUFFSIZE };

	memset(c, 0, sizeof *c);
	c->n = m->ngpus;
	for (int i = 0; i < c->n; i++) {
		int j = (i + 1) % c->n;

		c->hop_tr[i] = hop_transport(m, env, i, j);
		c->hop_extra[i] = c->hop_tr[i] == MODEL_TRANSPORT_NVLINK
		                ? m->path_extra_us[MODEL_LINK_NV] : m->path_extra_us[m->pcie_link[i][j]];
		if (c->hop_tr[i] == MODEL_TRANSPORT_SHM || c->hop_tr[i] == MODEL_TRANSPORT_NET)
			c->host_path = true;
	}

	/* ncclTopoPostset: cap at MAX, then duplicate channels up to MIN */
	c->nchannels = m->comm_channels < env->max_channels ? m->comm_channels : env->max_channels;
	if (c->nchannels < env->min_channels)
		c->nchannels = env->min_channels;

	simple_default = m->bw_intra * m->graph_channels <= PCI_BW ? 256 : NCCL_SIMPLE_MAX_NTHREADS;
	for (int a = 0; a < MODEL_NALGOS; a++)
		for (int p = 0; p < MODEL_NPROTOS; p++)
			c->max_threads[a][p] = NCCL_MAX_NTHREADS;
	c->max_threads[MODEL_ALGO_RING][MODEL_PROTO_SIMPLE] =
		nthreads(env->nthreads, 2 * WARP_SIZE, NCCL_SIMPLE_MAX_NTHREADS, simple_default);
	c->max_threads[MODEL_ALGO_TREE][MODEL_PROTO_SIMPLE] =
		nthreads(env->nthreads, 2 * WARP_SIZE, NCCL_SIMPLE_MAX_NTHREADS, NCCL_SIMPLE_MAX_NTHREADS);
	c->max_threads[MODEL_ALGO_RING][MODEL_PROTO_LL] = c->max_threads[MODEL_ALGO_TREE][MODEL_PROTO_LL] =
		nthreads(env->nthreads, 2 * WARP_SIZE, NCCL_LL_MAX_NTHREADS, NCCL_LL_MAX_NTHREADS);
	c->max_threads[MODEL_ALGO_RING][MODEL_PROTO_LL128] =
		c->max_threads[MODEL_ALGO_TREE][MODEL_PROTO_LL128] =
		nthreads(env->ll128_nthreads, NCCL_LL128_MAX_NTHREADS / 4, NCCL_LL128_MAX_NTHREADS,
		         NCCL_LL128_MAX_NTHREADS);

	for (int a = 0; a < MODEL_NALGOS; a++)
		for (int p = 0; p < MODEL_NPROTOS; p++)
			c->threshold[a][p] = thr[p];
	c->threshold[MODEL_ALGO_RING][MODEL_PROTO_LL] *= c->n;
	for (int a = 0; a < 2; a++)
		for (int p = 0; p < MODEL_NPROTOS; p++)
			if (env->thread_thresholds[a][p] >= 0)   /* capped: channels x threads x it must fit */
				c->threshold[a][p] = env->thread_thresholds[a][p] < (1LL << 40)
				                   ? env->thread_thresholds[a][p] : (1LL << 40);

	for (int p = 0; p < MODEL_NPROTOS; p++)
		c->buffsize[p] = env->buffsize[p] == -2 ? defaults[p] : env->buffsize[p];
	tune_model(m, env, c);
}

/* ncclTopoGetAlgoTime for one pair: NCCL's predicted time in microseconds, or -1 when
 * the pair is not usable (NCCL's IGNORE). */
static double pair_time(const struct comm *c, size_t bytes, int a, int p)
{
	double bw = c->bw[a][p];
	int ls = log2i((long long)(bytes >> 6));

	if (bw <= 0)
		return -1;
	if (a == MODEL_ALGO_TREE && ls >= 0 && ls < 23)
		bw *= tree_correction[p][ls];
	return c->lat[a][p] + (double)bytes / (1000.0 * bw);
}

/* The pick of the cheapest usable pair (first minimum wins). Returns false when no pair
 * is usable. */
static bool pick(const struct comm *c, size_t bytes, struct model_choice *ch)
{
	double best = INFINITY;
	bool found = false;

	for (int a = 0; a < MODEL_NALGOS; a++) {
		for (int p = 0; p < MODEL_NPROTOS; p++) {
			double t = pair_time(c, bytes, a, p);

			if (t < 0)
				continue;
			if (t < best) {
				best = t;
				ch->algo = (enum model_algo)a;
				ch->proto = (enum model_proto)p;
				found = true;
			}
		}
	}
	ch->nccl_us = best;
	return found;
}

/* topoGetAlgoInfo's channel and thread counts, then the channels the work is spread on
 * (scheduleCollTasksToPlan: at least MIN_TRAFFIC_PER_CHANNEL of traffic per channel). */
static void channels_threads(const struct comm *c, size_t bytes, int tuner_ctas,
                             struct model_choice *ch)
{
	int a = ch->algo, p = ch->proto;
	long long nc = c->nchannels, nt = c->max_threads[a][p], thr = c->threshold[a][p];
	long long b = (long long)bytes, cell, cells;

	if (a == MODEL_ALGO_NVLS) {
		nc = NVLS_NCHANNELS;
	} else {
		while (b < nc * nt * thr && nc >= 2)
			nc--;
		while (b < nc * nt * thr && nt % 128 == 0)
			nt /= 2;
	}
	if (p == MODEL_PROTO_SIMPLE && a == MODEL_ALGO_RING)
		nt += WARP_SIZE;
	if (p == MODEL_PROTO_SIMPLE && a == MODEL_ALGO_TREE)
		nt += 4 * WARP_SIZE;
	if (nt / WARP_SIZE < 3)
		nt = 3 * WARP_SIZE;
	if (a == MODEL_ALGO_TREE || a == MODEL_ALGO_NVLS)
		nt = NCCL_MAX_NTHREADS;
	/* getAlgoInfo: a tuner's nonzero nChannels replaces NCCL's count (threads stay as
	 * computed above); the plan then clamps it to the channels of the kind (enqueue.cc,
	 * scheduleCollTasksToPlan: the communicator's, NVLS's for NVLS) */
	if (tuner_ctas > 0) {
		long long pool = a == MODEL_ALGO_NVLS ? NVLS_NCHANNELS : c->nchannels;

		nc = tuner_ctas < pool ? tuner_ctas : pool;
	}

	/* all-reduce traffic is 2 bytes per byte; LL's cells count 4x that */
	cell = MIN_TRAFFIC_PER_CHANNEL / (2 * (p == MODEL_PROTO_LL ? 4 : 1));
	cells = (b + cell - 1) / cell;
	ch->channels = (int)(cells < nc ? cells : nc);
	if (ch->channels < 1)
		ch->channels = 1;
	ch->threads = (int)nt;
	ch->comm_channels = c->nchannels;
	ch->host_path = c->host_path;
}

/* Bytes of data one channel moves per chunk before it must wait for the next buffer
 * slot (a ring all-reduce uses half of the NCCL_STEPS slots per chunk). */
static double chunk_bytes(const struct comm *c, enum model_proto p)
{
	double step = (double)c->buffsize[p] / NCCL_STEPS;

	return p == MODEL_PROTO_SIMPLE ? step * NCCL_STEPS / 2 : step * payload[p];
}

/* What the choice costs on the machine (layer 2), in microseconds. */
static double machine_us(const struct model *m, const struct comm *c, size_t bytes,
                         const struct model_choice *ch)
{
	int n = c->n, p = ch->proto, C = ch->channels, nhops, nsteps = 2 * (n - 1);
	double hop = 0, bw = INFINITY, data_threads, slice, loops, wire, t;

	if (ch->algo == MODEL_ALGO_NVLS)
		return m->launch_us[MODEL_PROTO_SIMPLE] + m->nvls_latency_us +
		       (double)bytes / (m->nvls_bw * 1000.0);

	/* a ring walks all n hops; the one-node tree is a chain that skips the wrap-around */
	nhops = ch->algo == MODEL_ALGO_TREE ? n - 1 : n;
	data_threads = ch->threads;
	if (p == MODEL_PROTO_SIMPLE)
		data_threads -= ch->algo == MODEL_ALGO_TREE ? 4 * WARP_SIZE : WARP_SIZE;
	for (int i = 0; i < nhops; i++) {
		enum model_transport tr = c->hop_tr[i];
		double cta = m->cta_bw[tr][p] * fmin(1.0, data_threads / m->threads_saturate[tr][p]);

		hop += m->hop_us[tr][p] + c->hop_extra[i];
		bw = fmin(bw, fmin(C * cta, m->link_bw[tr]));
	}
	hop /= nhops;

	if (ch->algo == MODEL_ALGO_TREE) {
		slice = (double)bytes / C;
		wire = (double)bytes * m->tree_data_factor / payload[p];
	} else {
		slice = (double)bytes / ((double)C * n);
		wire = (double)bytes * 2.0 * (n - 1) / n / payload[p];
	}
	loops = ceil(slice / chunk_bytes(c, (enum model_proto)p));
	if (loops < 1)
		loops = 1;

	t = m->launch_us[p] + nsteps * hop * loops + wire / (bw * 1000.0) + m->cta_sync_us * (C - 1);
	if (ch->algo == MODEL_ALGO_TREE)
		t += m->tree_extra_us;
	if (c->host_path)
		t += m->host_callback_us + m->proxy_per_channel_us * C +
		     m->proxy_per_comm_channel_us * c->nchannels;
	return t;
}

static bool is_120_pow2(long long v)
{
	if (v <= 0 || v % 120 != 0)
		return false;
	v /= 120;
	return (v & (v - 1)) == 0;
}

static const char *dtype_nccl_name(enum proto_dtype d)
{
	return d == PROTO_DTYPE_BF16 ? "ncclBfloat16" : d == PROTO_DTYPE_F16 ? "ncclFloat16"
	                                               : "ncclFloat32";
}

static bool rule_matches(const struct model_rule *r, const struct model_env *env,
                         const struct comm *c, const struct model_choice *ch)
{
	if (r->algo >= 0 && (int)ch->algo != r->algo)
		return false;
	if (r->proto >= 0 && (int)ch->proto != r->proto)
		return false;
	if (r->transport >= 0) {
		bool any = false;

		for (int i = 0; i < c->n; i++)
			any = any || (int)c->hop_tr[i] == r->transport;
		if (!any)
			return false;
	}
	for (size_t k = 0; k < r->nenv; k++)
		if (!env->is_set[r->env_var[k]] || strcmp(env->raw[r->env_var[k]], r->env_value[k]) != 0)
			return false;
	return true;
}

/* Keep the failure of the earliest stage: a run stops at its first failure. */
static void fail(struct model_eval_result *out, enum proto_stage stage, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(struct model_eval_result *out, enum proto_stage stage, const char *fmt, ...)
{
	va_list ap;

	if (!out->ok && out->stage <= stage)
		return;
	out->ok = false;
	out->stage = stage;
	va_start(ap, fmt);
	vsnprintf(out->error, sizeof out->error, fmt, ap);
	va_end(ap);
}

void model_cost_tables(const struct model *m, const struct model_env *env,
                       const struct proto_workload *w, struct model_costs *tables)
{
	struct comm c;

	comm_setup(m, env, &c);
	for (size_t i = 0; i < w->nsizes; i++)
		for (int a = 0; a < MODEL_NALGOS; a++)
			for (int p = 0; p < MODEL_NPROTOS; p++) {
				double t = pair_time(&c, w->bytes[i], a, p);

				tables[i].t[a][p] = t < 0 ? MODEL_COST_IGNORE : (float)t;
			}
}

/* NCCL's starting minimum in topoGetAlgoInfo: an entry must be below it to be picked. */
#define NCCL_MIN_TIME_START 3600000000.0f

int model_force_from_table(const struct model_costs *before, const struct model_costs *after,
                           int nchannels, struct model_force *out)
{
	float min = NCCL_MIN_TIME_START;

	out->algo = -1;
	out->proto = -1;
	out->ctas = nchannels > 0 ? nchannels : 0;
	if (memcmp(before->t, after->t, sizeof before->t) == 0)
		return 0;   /* untouched: NCCL's own pick, exactly as without a tuner */
	for (int a = 0; a < MODEL_NALGOS; a++)
		for (int p = 0; p < MODEL_NPROTOS; p++)
			if (after->t[a][p] >= 0.0f && after->t[a][p] < min) {
				min = after->t[a][p];
				out->algo = a;
				out->proto = p;
			}
	return out->algo >= 0 ? 0 : -1;
}

/* The cheapest usable entry with the given algo or proto (-1: any), first on ties. */
static void cheapest(const struct model_costs *c, int algo, int proto, int *a_out, int *p_out)
{
	*a_out = -1;
	*p_out = -1;
	for (int a = 0; a < MODEL_NALGOS; a++)
		for (int p = 0; p < MODEL_NPROTOS; p++) {
			if ((algo >= 0 && a != algo) || (proto >= 0 && p != proto) || !(c->t[a][p] >= 0.0f))
				continue;
			if (*a_out < 0 || c->t[a][p] < c->t[*a_out][*p_out]) {
				*a_out = a;
				*p_out = p;
			}
		}
}

int model_force_rule(const struct model_costs *table, int algo, int proto, int ctas,
                     struct model_force *out)
{
	int a = algo, p = proto;

	out->algo = -1;
	out->proto = -1;
	out->ctas = 0;
	if (algo >= MODEL_NALGOS || proto >= MODEL_NPROTOS || algo < -1 || proto < -1)
		return 1;
	if (algo >= 0 && proto >= 0) {
		if (!(table->t[algo][proto] >= 0.0f))
			return 1;
	} else if (algo >= 0 || proto >= 0) {
		cheapest(table, algo, proto, &a, &p);
		if (a < 0)
			return 1;
	}
	out->algo = a;
	out->proto = p;
	out->ctas = ctas > 0 ? ctas : 0;
	return 0;
}

void model_eval_rules(const struct model *m, const struct model_env *env,
                      const struct proto_workload *w, const struct model_force *rules,
                      bool *unavailable, struct model_eval_result *out)
{
	struct model_costs tables[PROTO_MAX_SIZES];
	struct model_force force[PROTO_MAX_SIZES];

	for (size_t i = 0; unavailable && i < w->nsizes; i++)
		unavailable[i] = false;
	if (!rules) {
		model_eval_forced(m, env, w, NULL, out);
		return;
	}
	model_cost_tables(m, env, w, tables);
	for (size_t i = 0; i < w->nsizes; i++) {
		int ignored = model_force_rule(&tables[i], rules[i].algo, rules[i].proto,
		                               rules[i].ctas, &force[i]);

		if (unavailable)
			unavailable[i] = ignored != 0;
	}
	model_eval_forced(m, env, w, force, out);
}

struct proto_decision model_choice_decision(const struct model_choice *c)
{
	struct proto_decision d;

	memset(&d, 0, sizeof d);
	d.known = true;
	d.algo = (int)c->algo;
	d.proto = (int)c->proto;
	d.ctas = c->channels;
	if (c->symmetric) {
		d.symmetric = true;
		d.algo = d.proto = PROTO_NCCL_ANY;
		snprintf(d.kernel, sizeof d.kernel, "AllReduce_AGxLL_R");
	}
	return d;
}

/* What NCCL runs for size i: its own pick, or what the tuner's answer makes it run.
 * Returns false (with the failure recorded) when nothing can run. */
static bool decide(const struct comm *c, const struct model_env *env,
                   const struct proto_workload *w, size_t i, const struct model_force *f,
                   struct model_eval_result *out)
{
	struct model_choice *ch = &out->choice[i], own;
	size_t bytes = w->bytes[i];
	bool have = pick(c, bytes, ch);

	own = *ch;
	if (f && f->algo >= 0 && f->algo < MODEL_NALGOS && f->proto >= 0 &&
	    f->proto < MODEL_NPROTOS) {
		double t = pair_time(c, bytes, f->algo, f->proto);

		ch->algo = (enum model_algo)f->algo;
		ch->proto = (enum model_proto)f->proto;
		ch->nccl_us = t;
		ch->revived = t < 0;
		have = true;
		if (ch->revived && f->algo != MODEL_ALGO_RING && f->algo != MODEL_ALGO_TREE) {
			fail(out, PROTO_STAGE_CAPTURE, "ncclAllReduce failed: internal error (the tuner "
			     "plugin made NCCL run %s/%s for %zu bytes, which its cost table had ruled "
			     "out (IGNORE): NCCL has no channels for it here; modelled)",
			     model_algo_name(ch->algo), model_proto_name(ch->proto), bytes);
			return false;
		}
	}
	if (!have) {
		fail(out, PROTO_STAGE_CAPTURE,
		     "ncclAllReduce failed: invalid usage (no algorithm/protocol available for "
		     "function AllReduce with datatype %s; NCCL_ALGO=%s NCCL_PROTO=%s)",
		     dtype_nccl_name(w->dtype), env->algo_set ? env->raw[0] : "(unset)",
		     env->proto_set ? env->raw[1] : "(unset)");
		return false;
	}
	channels_threads(c, bytes, f ? f->ctas : 0, ch);
	if (f)
		ch->tuned = ch->algo != own.algo || ch->proto != own.proto || f->ctas > 0;
	return true;
}

void model_eval(const struct model *m, const struct model_env *env,
                const struct proto_workload *w, struct model_eval_result *out)
{
	model_eval_forced(m, env, w, NULL, out);
}

void model_eval_forced(const struct model *m, const struct model_env *env,
                       const struct proto_workload *w, const struct model_force *force,
                       struct model_eval_result *out)
{
	struct comm c;
	size_t esize = proto_dtype_size(w->dtype);

	memset(out, 0, sizeof *out);
	out->ok = true;
	out->nsizes = w->nsizes;
	for (size_t i = 0; i < w->nsizes; i++) {
		if (esize == 0 || w->bytes[i] % esize != 0) {
			fail(out, PROTO_STAGE_ARGS, "--bytes %zu is not a whole number of %s elements",
			     w->bytes[i], proto_dtype_name(w->dtype));
			return;
		}
	}
	if (env->init_failed) {
		fail(out, PROTO_STAGE_INIT, "%s", env->init_error);
		return;
	}
	for (int p = 0; p < MODEL_NPROTOS; p++) {
		static const char *const var[MODEL_NPROTOS] = {
			"NCCL_LL_BUFFSIZE", "NCCL_LL128_BUFFSIZE", "NCCL_BUFFSIZE" };

		/* NCCL does not validate buffer sizes; a non-positive one cannot be allocated */
		if (env->buffsize[p] != -2 && env->buffsize[p] <= 0)
			fail(out, PROTO_STAGE_INIT,
			     "ncclCommInitRank failed: unhandled cuda error (%s=%lld: buffer allocation "
			     "failed; modelled, NCCL does not check this value)", var[p], env->buffsize[p]);
	}
	if (m->nvlinks > 0 && !m->nvls_capable && env->nvls_enable != -2 && env->nvls_enable != 0 &&
	    env->nvls_enable != 2 && m->ngpus > 2 && m->compute_capability >= 90)
		fail(out, PROTO_STAGE_INIT, "ncclCommInitRank failed: unhandled cuda error "
		     "(NCCL_NVLS_ENABLE=%lld forces NVLS; cuMulticastCreate: operation not supported)",
		     env->nvls_enable);
	if (!out->ok)
		return;

	comm_setup(m, env, &c);
	for (size_t i = 0; i < w->nsizes; i++) {
		struct model_choice *ch = &out->choice[i];
		size_t bytes = w->bytes[i];

		if (!decide(&c, env, w, i, force ? &force[i] : NULL, out))
			continue;
		out->us[i] = machine_us(m, &c, bytes, ch);

		for (size_t r = 0; r < m->nrules; r++)
			if (rule_matches(&m->rule[r], env, &c, ch))
				fail(out, m->rule[r].stage, "%s", m->rule[r].error);

		if (ch->proto == MODEL_PROTO_LL128 && env->buffsize[MODEL_PROTO_LL128] != -2 &&
		    !is_120_pow2(env->buffsize[MODEL_PROTO_LL128]))
			fail(out, PROTO_STAGE_VERIFY,
			     "wrong sums: all-reduce of %zu bytes differs from the exact sum (LL128 with "
			     "NCCL_LL128_BUFFSIZE=%lld, not 120 x 2^k: NVIDIA/nccl#1739; modelled)",
			     bytes, env->buffsize[MODEL_PROTO_LL128]);
		if (ch->proto == MODEL_PROTO_SIMPLE && ch->algo == MODEL_ALGO_RING &&
		    c.buffsize[MODEL_PROTO_SIMPLE] % c.max_threads[MODEL_ALGO_RING][MODEL_PROTO_SIMPLE] != 0 &&
		    (double)bytes / ((double)ch->channels * c.n) > chunk_bytes(&c, MODEL_PROTO_SIMPLE))
			fail(out, PROTO_STAGE_VERIFY,
			     "wrong sums: all-reduce of %zu bytes differs from the exact sum (Simple with "
			     "%d threads not dividing a %lld-byte buffer: NVIDIA/nccl#698; modelled)",
			     bytes, c.max_threads[MODEL_ALGO_RING][MODEL_PROTO_SIMPLE],
			     c.buffsize[MODEL_PROTO_SIMPLE]);
	}
}
