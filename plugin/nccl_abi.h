/* nccl_abi.h - the parts of NCCL's tuner-plugin ABI that libnccl-tuner-nccltune.so
 * implements, declared by nccltune from the documented interface (NVIDIA/nccl
 * src/include/plugin/tuner/tuner_v4.h at v2.27.7, tuner_v5.h at v2.28.9, tuner_v6.h at
 * v2.30.7; nccl_common.h for the log levels and flags). NCCL's own headers are not used.
 *
 * NCCL's enums (ncclResult_t, ncclFunc_t, ncclDebugLogLevel) cross the ABI as C enums,
 * which the SysV x86-64 and AArch64 ABIs pass as int: they are declared as int here. The
 * NVL-domain and cost-model structs of v5/v6 are opaque to nccltune (it never edits the
 * cost model) and stay incomplete types. */
#ifndef NCCLTUNE_PLUGIN_NCCL_ABI_H
#define NCCLTUNE_PLUGIN_NCCL_ABI_H

#include <stddef.h>
#include <stdint.h>

#define NT_NCCL_SUCCESS 0          /* ncclSuccess: the only result nccltune returns */

/* ncclDebugLogLevel and ncclDebugLogSubSys values nccltune logs with. */
#define NT_NCCL_LOG_WARN 2
#define NT_NCCL_LOG_INFO 3
#define NT_NCCL_INIT 0x1ul
#define NT_NCCL_TUNING 0x40ul

/* NCCL_ALGO_PROTO_IGNORE: a cost-table entry NCCL has ruled out. NCCL skips every entry
 * that is not >= 0, so nccltune treats any such entry (and NaN) as ruled out. */
#define NT_NCCL_IGNORE (-1.0f)

/* NCCL's cost table is a flat float[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS] passed as
 * float**: rows of NT_NCCL_NPROTOS floats. */
#define NT_NCCL_NALGOS 7
#define NT_NCCL_NPROTOS 3

/* ncclDebugLogger_t; may be NULL when a harness passes none. */
typedef void (*nt_nccl_logger)(int level, unsigned long flags, const char *file, int line,
                               const char *fmt, ...);

struct nt_nccl_nvl_domain_info;     /* ncclNvlDomainInfo_v5_t, unused */
struct nt_nccl_tuner_constants;     /* ncclTunerConstants_v5_t, unused */

/* ncclTuner_v4_t (NCCL 2.24 - 2.27; also accepted by 2.28 - 2.30). */
struct nt_nccl_tuner_v4 {
	const char *name;
	int (*init)(size_t nRanks, size_t nNodes, nt_nccl_logger logFunction, void **context);
	int (*getCollInfo)(void *context, int collType, size_t nBytes, int numPipeOps,
	                   float **collCostTable, int numAlgo, int numProto, int regBuff,
	                   int *nChannels);
	int (*destroy)(void *context);
};

/* ncclTuner_v5_t (NCCL 2.28 - 2.29; also accepted by 2.30). */
struct nt_nccl_tuner_v5 {
	const char *name;
	int (*init)(void **context, uint64_t commId, size_t nRanks, size_t nNodes,
	            nt_nccl_logger logFunction, struct nt_nccl_nvl_domain_info *nvlDomainInfo,
	            struct nt_nccl_tuner_constants *constants);
	int (*getCollInfo)(void *context, int collType, size_t nBytes, int numPipeOps,
	                   float **collCostTable, int numAlgo, int numProto, int regBuff,
	                   int *nChannels);
	int (*finalize)(void *context);
};

/* ncclTuner_v6_t (NCCL 2.30): v5 plus the optional getChunkSize, whose *chunkSize comes
 * in as NCCL's computed chunk and is used as it goes out. */
struct nt_nccl_tuner_v6 {
	const char *name;
	int (*init)(void **context, uint64_t commId, size_t nRanks, size_t nNodes,
	            nt_nccl_logger logFunction, struct nt_nccl_nvl_domain_info *nvlDomainInfo,
	            struct nt_nccl_tuner_constants *constants);
	int (*getCollInfo)(void *context, int collType, size_t nBytes, int numPipeOps,
	                   float **collCostTable, int numAlgo, int numProto, int regBuff,
	                   int *nChannels);
	int (*finalize)(void *context);
	int (*getChunkSize)(void *context, int collType, size_t nBytes, int algo, int proto,
	                    int nChannels, size_t *chunkSize);
};

#endif
