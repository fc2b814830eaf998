/* modeldef.h - the inside of a loaded model, shared by the loader (model.c), the
 * evaluator (eval.c) and the noise sampler (noise.c). Not installed; users see model.h. */
#ifndef NCCLTUNE_MODELDEF_H
#define NCCLTUNE_MODELDEF_H

#include "model.h"

#define MODEL_MAX_GPUS 16
#define MODEL_MAX_RULES 16
#define MODEL_MAX_RULE_ENV 4

/* NCCL's path types (topo.h order): what NCCL_P2P_LEVEL compares against. */
enum model_path {
	MODEL_PATH_LOC, MODEL_PATH_NVL, MODEL_PATH_NVB, MODEL_PATH_C2C, MODEL_PATH_PIX,
	MODEL_PATH_PXB, MODEL_PATH_P2C, MODEL_PATH_PXN, MODEL_PATH_PHB, MODEL_PATH_SYS,
	MODEL_NPATHS
};

/* How two GPUs are connected, in `nvidia-smi topo -m` words; each maps to an NCCL path. */
enum model_link { MODEL_LINK_NV, MODEL_LINK_PIX, MODEL_LINK_PXB, MODEL_LINK_NODE,
	MODEL_LINK_SYS, MODEL_NLINKS };

struct model_gpu {
	int socket;
	int pcie_switch;     /* -1: directly on a CPU root port */
	int pxb_group;       /* -1: none; GPUs sharing one behind different switches: PXB */
	char bus_id[32];
};

/* A failure the modelled machine shows beyond NCCL's own rules (e.g. the seed box's Tree
 * crash at capture). All given conditions must hold; -1 / 0 entries match anything. */
struct model_rule {
	int algo;                              /* enum model_algo NCCL ended up using, or -1 */
	int proto;                             /* enum model_proto, or -1 */
	int transport;                         /* some hop uses this enum model_transport, or -1 */
	size_t nenv;
	int env_var[MODEL_MAX_RULE_ENV];       /* index into model_env.raw */
	char env_value[MODEL_MAX_RULE_ENV][MODEL_ENV_VALUE_MAX];
	enum proto_stage stage;
	char error[512];
};

struct model {
	char name[64];
	char nccl_version[32];
	char driver[32], cuda_runtime[16], cuda_driver[16];

	/* machine */
	char gpu_name[96];
	int compute_capability;                /* e.g. 90, 120 */
	bool cpu_amd;
	int ngpus;
	struct model_gpu gpu[MODEL_MAX_GPUS];
	int nvlinks;                           /* NVLinks per GPU to the NVSwitch; 0: none */
	bool nvls_capable;                     /* NVSwitch with multicast (NVLS) */
	long long nvls_enable_default;         /* NCCL_NVLS_ENABLE as the machine leaves it */
	int p2p_max_path;                      /* farthest path the driver allows P2P over */
	enum model_link link[MODEL_MAX_GPUS][MODEL_MAX_GPUS];      /* as nvidia-smi shows it */
	enum model_link pcie_link[MODEL_MAX_GPUS][MODEL_MAX_GPUS]; /* the PCIe path only */

	/* what NCCL's topology search found (its cost model's inputs) */
	int graph_channels;
	double bw_intra;                       /* GB/s per channel */
	int comm_channels;                     /* after NCCL duplicated the search's channels */
	int type_intra;                        /* enum model_path of the graph's worst hop */
	double nvls_busbw;                     /* GB/s, NVLS graph (when nvls_capable) */

	/* the machine's real costs (see models/README.md) */
	double launch_us[MODEL_NPROTOS];
	double hop_us[MODEL_NTRANSPORTS][MODEL_NPROTOS];
	double cta_bw[MODEL_NTRANSPORTS][MODEL_NPROTOS];   /* GB/s of wire traffic per CTA */
	double link_bw[MODEL_NTRANSPORTS];                 /* GB/s per rank, all CTAs */
	double path_extra_us[MODEL_NLINKS];
	double threads_saturate[MODEL_NTRANSPORTS][MODEL_NPROTOS]; /* a CTA's bw grows to here */
	double cta_sync_us;
	double host_callback_us, proxy_per_channel_us, proxy_per_comm_channel_us;
	double tree_extra_us, tree_data_factor;
	double nvls_latency_us, nvls_bw;

	/* noise */
	double sigma, run_sigma, outlier_probability, outlier_lo, outlier_hi;
	double transient_failure_probability;

	size_t nrules;
	struct model_rule rule[MODEL_MAX_RULES];
};

/* The built-in model files, embedded at build time by scripts/embed_json.py. */
struct models_builtin_entry {
	const char *name;
	const char *json;
	size_t len;
};
extern const struct models_builtin_entry models_builtin[];   /* then a NULL row */
extern const size_t models_builtin_count;

/* NCCL path type of a link kind. Can't fail. */
enum model_path model_link_path(enum model_link l);
/* NCCL's topology word of link l ("NV", "PIX", "PXB", "NODE", "SYS"). Can't fail. */
const char *model_link_name(enum model_link l);

#endif
