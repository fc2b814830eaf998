/* fingerprint.c - the machine description behind --fingerprint (see fingerprint.h). */
#include "fingerprint.h"

#include <cjson/cJSON.h>
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "ncclpath.h"
#include "probe.h"
#include "topo.h"

#define FP_MAX_GPUS 256

/* One GPU as CUDA sees it, in CUDA device order (the order the probe's ranks use). */
struct fp_gpu {
	char name[256];
	char bus_id[32];   /* nvidia-smi style: 8-digit domain */
	char uuid[48];
};

static void version_string(int v, char *buf, size_t len)
{
	/* CUDA encodes 13.0 as 13000. */
	if (v > 0)
		snprintf(buf, len, "%d.%d", v / 1000, v % 1000 / 10);
	else
		snprintf(buf, len, "unknown");
}

static void format_uuid(const unsigned char *b, char *out, size_t len)
{
	snprintf(out, len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	         "%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8],
	         b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

static void warn(cJSON *warnings, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void warn(cJSON *warnings, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	cJSON_AddItemToArray(warnings, cJSON_CreateString(msg));
}

/* Fill gpus[0..*n) from CUDA; on failure *n = 0 and a warning says why. */
static void read_gpus(struct fp_gpu *gpus, int *n, cJSON *warnings)
{
	cudaError_t e = cudaGetDeviceCount(n);

	if (e != cudaSuccess) {
		warn(warnings, "no CUDA device visible: cudaGetDeviceCount: %s (%s)",
		     cudaGetErrorString(e), cudaGetErrorName(e));
		*n = 0;
		return;
	}
	if (*n > FP_MAX_GPUS)
		*n = FP_MAX_GPUS;
	for (int i = 0; i < *n; i++) {
		struct cudaDeviceProp p;

		e = cudaGetDeviceProperties(&p, i);
		if (e != cudaSuccess) {
			warn(warnings, "cudaGetDeviceProperties(%d): %s", i, cudaGetErrorString(e));
			*n = i;
			return;
		}
		snprintf(gpus[i].name, sizeof gpus[i].name, "%s", p.name);
		snprintf(gpus[i].bus_id, sizeof gpus[i].bus_id, "%08X:%02X:%02X.0",
		         (unsigned)p.pciDomainID, (unsigned)p.pciBusID, (unsigned)p.pciDeviceID);
		format_uuid((const unsigned char *)p.uuid.bytes, gpus[i].uuid, sizeof gpus[i].uuid);
	}
}

/* driver string and topology matrix from NVML, or "unknown" with warnings. */
static int add_nvml(cJSON *root, const struct fp_gpu *gpus, int n, cJSON *warnings,
                    char *driver, size_t driverlen)
{
	const char *ids[FP_MAX_GPUS];
	char err[512] = "";
	struct topo *t;
	cJSON *matrix = cJSON_AddArrayToObject(root, "topology");
	int rc = -1;

	snprintf(driver, driverlen, "unknown");
	if (!matrix)
		return -1;
	for (int i = 0; i < n; i++)
		ids[i] = gpus[i].bus_id;
	t = topo_open(ids, n, err, sizeof err);
	if (!t) {
		warn(warnings, "%s", err);
	} else if (topo_driver_version(t, driver, driverlen, err, sizeof err) != 0) {
		snprintf(driver, driverlen, "unknown");
		warn(warnings, "%s", err);
	}
	for (int i = 0; i < n; i++) {
		cJSON *row = cJSON_CreateArray();

		if (!row || !cJSON_AddItemToArray(matrix, row))
			goto out;
		for (int j = 0; j < n; j++) {
			char word[TOPO_WORD_MAX] = "X";

			if (i != j && (!t || topo_cell(t, i, j, word, err, sizeof err) != 0)) {
				if (t)
					warn(warnings, "%s", err);
				snprintf(word, sizeof word, "?");
			}
			if (!cJSON_AddItemToArray(row, cJSON_CreateString(word)))
				goto out;
		}
	}
	rc = 0;
out:
	topo_close(t);
	return rc;
}

char *fingerprint_format(int ranks_per_gpu)
{
	struct fp_gpu *gpus = calloc(FP_MAX_GPUS, sizeof *gpus);
	cJSON *root = cJSON_CreateObject(), *warnings = cJSON_CreateArray(), *list;
	struct utsname u;
	char rt[16], drv[16], nccl[32], driver[96], *text = NULL, *line = NULL;
	char nccl_path[4096], perr[256];
	int n = 0, v = 0;

	if (!gpus || !root || !warnings)
		goto out;
	if (uname(&u) != 0) {
		warn(warnings, "uname failed");
		snprintf(u.nodename, sizeof u.nodename, "unknown");
		snprintf(u.release, sizeof u.release, "unknown");
	}
	read_gpus(gpus, &n, warnings);
	version_string(cudaRuntimeGetVersion(&v) == cudaSuccess ? v : 0, rt, sizeof rt);
	v = 0;
	version_string(cudaDriverGetVersion(&v) == cudaSuccess ? v : 0, drv, sizeof drv);
	v = 0;
	probe_nccl_version_string(ncclGetVersion(&v) == ncclSuccess ? v : 0, nccl, sizeof nccl);
	if (!cJSON_AddStringToObject(root, "schema", PROTO_FINGERPRINT_SCHEMA) ||
	    !cJSON_AddStringToObject(root, "source", "measured") ||
	    !cJSON_AddStringToObject(root, "host", u.nodename) ||
	    !cJSON_AddStringToObject(root, "kernel", u.release))
		goto out;
	/* The driver string comes from NVML; fill the key now, fix its value below, so the
	 * key order stays the documented one. */
	if (!cJSON_AddStringToObject(root, "driver", "unknown") ||
	    !cJSON_AddStringToObject(root, "cuda_runtime", rt) ||
	    !cJSON_AddStringToObject(root, "cuda_driver", drv) ||
	    !cJSON_AddStringToObject(root, "nccl_version", nccl))
		goto out;
	/* Which copy of NCCL this is (a server loads its PyTorch wheel's): see --nccl. */
	if (ncclpath_loaded("ncclGetVersion", nccl_path, sizeof nccl_path, perr, sizeof perr) != 0)
		warn(warnings, "nccl_path unknown: %s", perr);
	else if (!cJSON_AddStringToObject(root, "nccl_path", nccl_path))
		goto out;
	if (!cJSON_AddNumberToObject(root, "gpu_count", n))
		goto out;
	if (ranks_per_gpu > 1 && !cJSON_AddNumberToObject(root, "ranks_per_gpu", ranks_per_gpu))
		goto out;
	list = cJSON_AddArrayToObject(root, "gpus");
	if (!list)
		goto out;
	for (int i = 0; i < n; i++) {
		cJSON *g = cJSON_CreateObject();

		if (!g || !cJSON_AddItemToArray(list, g) ||
		    !cJSON_AddNumberToObject(g, "index", i) ||
		    !cJSON_AddStringToObject(g, "name", gpus[i].name) ||
		    !cJSON_AddStringToObject(g, "bus_id", gpus[i].bus_id) ||
		    !cJSON_AddStringToObject(g, "uuid", gpus[i].uuid))
			goto out;
	}
	if (add_nvml(root, gpus, n, warnings, driver, sizeof driver) != 0)
		goto out;
	if (!cJSON_ReplaceItemInObjectCaseSensitive(root, "driver", cJSON_CreateString(driver)))
		goto out;
	if (cJSON_GetArraySize(warnings) > 0) {
		cJSON_AddItemToObject(root, "warnings", warnings);
		warnings = NULL;
	}
	text = cJSON_PrintUnformatted(root);
	if (text) {
		size_t len = strlen(text);

		line = malloc(len + 2);
		if (line) {
			memcpy(line, text, len);
			line[len] = '\n';
			line[len + 1] = '\0';
		}
	}
out:
	free(text);
	cJSON_Delete(warnings);
	cJSON_Delete(root);
	free(gpus);
	return line;
}
