/* topo.h - the GPU-to-GPU link matrix in `nvidia-smi topo -m` words (X, NV#, PIX, PXB,
 * PHB, NODE, SYS), read from NVML through dlopen("libnvidia-ml.so.1") so the probe
 * neither links against NVML nor needs its header, plus the driver version string.
 * The decision logic is separate from NVML so it can be tested without a GPU. */
#ifndef NCCLTUNE_PROBE_TOPO_H
#define NCCLTUNE_PROBE_TOPO_H

#include <stddef.h>

#define TOPO_WORD_MAX 16  /* "NV18", "NODE", ... (room for any int after "NV") */

/* NVML's common-ancestor levels (nvmlGpuTopologyLevel_t values). */
enum topo_level {
	TOPO_LEVEL_INTERNAL = 0, TOPO_LEVEL_SINGLE = 10, TOPO_LEVEL_MULTIPLE = 20,
	TOPO_LEVEL_HOSTBRIDGE = 30, TOPO_LEVEL_NODE = 40, TOPO_LEVEL_SYSTEM = 50,
};

/* One cell as nvidia-smi writes it: "X" on the diagonal; "NV<n>" when the pair shares n
 * active NVLinks (direct, or through NVSwitches); else the PCIe/CPU path word for
 * `level`. `same` is true on the diagonal. Unknown levels give "?". Can't fail. */
void topo_cell_word(int same, int nvlinks, int level, char word[TOPO_WORD_MAX]);

/* Links between GPUs a and b as nvidia-smi counts them: direct links from a to b, or,
 * when both reach NVSwitches and share no direct link, a's links to switches.
 * direct_ab: a's active links whose far end is b; switch_a/b: each GPU's active links
 * to a switch. Can't fail. */
int topo_nvlink_count(int direct_ab, int switch_a, int switch_b);

struct topo;

/* Open NVML and find the GPUs with these PCI bus ids (nvidia-smi style,
 * "00000000:18:00.0"), in this order. Returns a handle, or NULL with the reason in err
 * (library missing, init failed, a bus id unknown to NVML). */
struct topo *topo_open(const char *const *bus_ids, int n, char *err, size_t errlen);

/* The driver version string ("580.159.04"). Returns 0, or -1 with the reason in err. */
int topo_driver_version(struct topo *t, char *buf, size_t len, char *err, size_t errlen);

/* Cell (i, j) of the matrix, in the order of topo_open's bus ids. Returns 0, or -1
 * with the NVML call that failed in err. */
int topo_cell(struct topo *t, int i, int j, char word[TOPO_WORD_MAX], char *err, size_t errlen);

/* Shut NVML down and unload it. Accepts NULL. */
void topo_close(struct topo *t);

#endif
