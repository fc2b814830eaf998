/* topo.c - link matrix and driver version from NVML, loaded at run time (topo.h).
 * The few NVML types used are declared here from NVML's documented ABI; the functions
 * are looked up by their versioned names. */
#include "topo.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NVML_SUCCESS 0
#define NVML_NVLINK_MAX_LINKS 18
#define NVML_FEATURE_ENABLED 1
#define NVML_NVLINK_DEVICE_TYPE_SWITCH 2

typedef int nvml_return;
typedef struct nvml_device_st *nvml_device;

/* nvmlPciInfo_t as of NVML 11+ (the _v2 calls). */
struct nvml_pci_info {
	char bus_id_legacy[16];
	unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
	char bus_id[32];
};

struct topo {
	void *lib;
	int n;
	nvml_device *dev;
	int *switch_links;        /* per GPU: active links to an NVSwitch */
	nvml_return (*shutdown)(void);
	const char *(*error_string)(nvml_return);
	nvml_return (*driver_version)(char *, unsigned);
	nvml_return (*common_ancestor)(nvml_device, nvml_device, int *);
	nvml_return (*link_state)(nvml_device, unsigned, int *);
	nvml_return (*remote_pci)(nvml_device, unsigned, struct nvml_pci_info *);
	nvml_return (*remote_type)(nvml_device, unsigned, int *);
	char (*bus_ids)[32];
};

void topo_cell_word(int same, int nvlinks, int level, char word[TOPO_WORD_MAX])
{
	const char *w;

	if (same) {
		snprintf(word, TOPO_WORD_MAX, "X");
		return;
	}
	if (nvlinks > 0) {
		snprintf(word, TOPO_WORD_MAX, "NV%d", nvlinks);
		return;
	}
	switch (level) {
	case TOPO_LEVEL_INTERNAL: w = "X"; break;   /* two GPUs of one board: nvidia-smi says so too */
	case TOPO_LEVEL_SINGLE: w = "PIX"; break;
	case TOPO_LEVEL_MULTIPLE: w = "PXB"; break;
	case TOPO_LEVEL_HOSTBRIDGE: w = "PHB"; break;
	case TOPO_LEVEL_NODE: w = "NODE"; break;
	case TOPO_LEVEL_SYSTEM: w = "SYS"; break;
	default: w = "?"; break;
	}
	snprintf(word, TOPO_WORD_MAX, "%s", w);
}

int topo_nvlink_count(int direct_ab, int switch_a, int switch_b)
{
	if (direct_ab > 0)
		return direct_ab;
	if (switch_a > 0 && switch_b > 0)
		return switch_a;
	return 0;
}

/* Bus ids compare equal whatever the case and the width of the domain. */
static int same_bus(const char *a, const char *b)
{
	const char *ca = strchr(a, ':'), *cb = strchr(b, ':');

	if (!ca || !cb)
		return strcasecmp(a, b) == 0;
	return strtoul(a, NULL, 16) == strtoul(b, NULL, 16) && strcasecmp(ca, cb) == 0;
}

static void *sym(struct topo *t, const char *name, char *err, size_t errlen)
{
	void *p = dlsym(t->lib, name);

	if (!p)
		snprintf(err, errlen, "libnvidia-ml.so.1: no symbol %s", name);
	return p;
}

/* Count, for GPU i, active links to a switch (into switch_links) and to GPU j. */
static int count_links(struct topo *t, int i, int j, int *direct, char *err, size_t errlen)
{
	*direct = 0;
	t->switch_links[i] = 0;
	if (!t->link_state || !t->remote_pci)
		return 0;   /* an NVML without NVLink queries: no NVLink to report */
	for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
		int active = 0, type = -1;
		struct nvml_pci_info pci;

		/* Links that do not exist answer with an error: that is the end of the list
		 * on this GPU, not a failure. */
		if (t->link_state(t->dev[i], l, &active) != NVML_SUCCESS || active != NVML_FEATURE_ENABLED)
			continue;
		if (t->remote_type && t->remote_type(t->dev[i], l, &type) == NVML_SUCCESS &&
		    type == NVML_NVLINK_DEVICE_TYPE_SWITCH) {
			t->switch_links[i]++;
			continue;
		}
		memset(&pci, 0, sizeof pci);
		if (t->remote_pci(t->dev[i], l, &pci) != NVML_SUCCESS) {
			snprintf(err, errlen, "nvmlDeviceGetNvLinkRemotePciInfo_v2 failed for GPU %d "
			         "link %u", i, l);
			return -1;
		}
		if (j >= 0 && same_bus(pci.bus_id, t->bus_ids[j]))
			(*direct)++;
	}
	return 0;
}

struct topo *topo_open(const char *const *bus_ids, int n, char *err, size_t errlen)
{
	struct topo *t = calloc(1, sizeof *t);
	nvml_return (*init)(void);
	nvml_return (*shutdown)(void);
	nvml_return (*by_bus)(const char *, nvml_device *);

	if (!t) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	t->n = n;
	t->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!t->lib) {
		snprintf(err, errlen, "cannot load NVML: %s", dlerror());
		goto fail;
	}
	*(void **)&init = sym(t, "nvmlInit_v2", err, errlen);
	*(void **)&shutdown = sym(t, "nvmlShutdown", err, errlen);
	*(void **)&t->error_string = sym(t, "nvmlErrorString", err, errlen);
	*(void **)&t->driver_version = sym(t, "nvmlSystemGetDriverVersion", err, errlen);
	*(void **)&by_bus = sym(t, "nvmlDeviceGetHandleByPciBusId_v2", err, errlen);
	*(void **)&t->common_ancestor = sym(t, "nvmlDeviceGetTopologyCommonAncestor", err, errlen);
	if (!init || !shutdown || !t->error_string || !t->driver_version || !by_bus ||
	    !t->common_ancestor)
		goto fail;
	/* Optional: NVLink queries (absent on NVML builds without NVLink support). */
	*(void **)&t->link_state = dlsym(t->lib, "nvmlDeviceGetNvLinkState");
	*(void **)&t->remote_pci = dlsym(t->lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
	*(void **)&t->remote_type = dlsym(t->lib, "nvmlDeviceGetNvLinkRemoteDeviceType");
	if (init() != NVML_SUCCESS) {
		snprintf(err, errlen, "nvmlInit_v2 failed (is the NVIDIA driver loaded?)");
		goto fail;
	}
	t->shutdown = shutdown;   /* from here on, closing must shut NVML down */
	t->dev = calloc((size_t)(n > 0 ? n : 1), sizeof *t->dev);
	t->switch_links = calloc((size_t)(n > 0 ? n : 1), sizeof *t->switch_links);
	t->bus_ids = calloc((size_t)(n > 0 ? n : 1), sizeof *t->bus_ids);
	if (!t->dev || !t->switch_links || !t->bus_ids) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (int i = 0; i < n; i++) {
		nvml_return r;

		snprintf(t->bus_ids[i], sizeof t->bus_ids[i], "%s", bus_ids[i]);
		r = by_bus(bus_ids[i], &t->dev[i]);
		if (r != NVML_SUCCESS) {
			snprintf(err, errlen, "nvmlDeviceGetHandleByPciBusId_v2(%s): %s", bus_ids[i],
			         t->error_string(r));
			goto fail;
		}
	}
	return t;
fail:
	topo_close(t);
	return NULL;
}

int topo_driver_version(struct topo *t, char *buf, size_t len, char *err, size_t errlen)
{
	nvml_return r = t->driver_version(buf, (unsigned)len);

	if (r != NVML_SUCCESS) {
		snprintf(err, errlen, "nvmlSystemGetDriverVersion: %s", t->error_string(r));
		return -1;
	}
	return 0;
}

int topo_cell(struct topo *t, int i, int j, char word[TOPO_WORD_MAX], char *err, size_t errlen)
{
	int level = -1, direct = 0, ignored = 0;
	nvml_return r;

	if (i == j) {
		topo_cell_word(1, 0, 0, word);
		return 0;
	}
	if (count_links(t, j, -1, &ignored, err, errlen) != 0 ||
	    count_links(t, i, j, &direct, err, errlen) != 0)
		return -1;
	r = t->common_ancestor(t->dev[i], t->dev[j], &level);
	if (r != NVML_SUCCESS) {
		snprintf(err, errlen, "nvmlDeviceGetTopologyCommonAncestor(GPU %d, GPU %d): %s", i, j,
		         t->error_string(r));
		return -1;
	}
	topo_cell_word(0, topo_nvlink_count(direct, t->switch_links[i], t->switch_links[j]), level,
	               word);
	return 0;
}

void topo_close(struct topo *t)
{
	if (!t)
		return;
	if (t->shutdown)
		t->shutdown();
	if (t->lib)
		dlclose(t->lib);
	free(t->dev);
	free(t->switch_links);
	free(t->bus_ids);
	free(t);
}
