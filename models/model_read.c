/* model_read.c - read and validate the text of a model (schema "nccltune-model/1"):
 * model_parse. The text is parsed by common/jsonread (exactly one JSON value, no NUL
 * byte, bounded depth), and every message has jsonread's format, "FILE: a.b[2].c: why"
 * ("FILE: why" at the top level). Validation is strict: an unknown key, a wrong type, a
 * control character or an impossible value is an error naming the file, the key (as a
 * path like machine.gpus[3].socket, each key printable and cut as jsonread cuts it) and
 * the reason. The fixed-shape objects (software, machine.nvswitch, the per-protocol
 * costs, costs.tree, costs.nvls, noise, fit) are read through jsonread's tables, their
 * model-specific checks in handlers; the rest (whose keys depend on the machine, and the
 * cross-key rules) is still validated here (issue 29). Loading files and built-ins, and
 * the modelled fingerprint, are model.c. */
#include "model.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "jsonread.h"
#include "modeldef.h"

#define PATHLEN 160
#define UNBOUNDED 1e15   /* entries of an array with no limit of its own (the file has one) */

/* Where we are while validating: the source's name, the error buffer, and jsonread's
 * reader (same origin and buffer) for the objects read through its tables. */
struct jctx {
	const char *where;
	char *err;
	size_t errlen;
	struct jr r;
};

static int jfail(struct jctx *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int jfail(struct jctx *c, const char *path, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (!*path)
		return fs_errf(c->err, c->errlen, "%s: %s", c->where, msg);
	return fs_errf(c->err, c->errlen, "%s: %s: %s", c->where, path, msg);
}

/* Key paths are for messages only: a (never expected) truncation is harmless. A key
 * from the file is shown as jsonread shows it: printable ASCII ('?' for anything else),
 * cut after 60 bytes ("..."). */
static void subpath(char *dst, const char *path, const char *key)
{
	char clean[64];
	size_t o = 0, n = strlen(key);

	for (size_t i = 0; i < n && o < 60; i++) {
		unsigned char ch = (unsigned char)key[i];

		clean[o++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
	}
	clean[o] = '\0';
	if (snprintf(dst, PATHLEN, "%s%s%s%s", path, *path ? "." : "", clean,
	             n > 60 ? "..." : "") >= PATHLEN)
		dst[PATHLEN - 2] = '~';
}

static void subindex(char *dst, const char *path, size_t i)
{
	if (snprintf(dst, PATHLEN, "%s[%zu]", path, i) >= PATHLEN)
		dst[PATHLEN - 2] = '~';
}

static bool in_list(const char *key, const char *const list[])
{
	for (size_t i = 0; list[i]; i++)
		if (strcmp(key, list[i]) == 0)
			return true;
	return false;
}

/* `o` must be an object whose keys are all in `allowed`, none twice, with every key of
 * `required` present. */
static int check_object(struct jctx *c, const cJSON *o, const char *path,
                        const char *const allowed[], const char *const required[])
{
	if (!cJSON_IsObject(o))
		return jfail(c, path, "expected an object");
	for (const cJSON *a = o->child; a; a = a->next) {
		char sub[PATHLEN];

		subpath(sub, path, a->string);
		if (!in_list(a->string, allowed))
			return jfail(c, sub, "unknown key");
		for (const cJSON *b = a->next; b; b = b->next)
			if (strcmp(a->string, b->string) == 0)
				return jfail(c, sub, "appears twice");
	}
	for (size_t i = 0; required && required[i]; i++) {
		if (!cJSON_GetObjectItemCaseSensitive(o, required[i])) {
			char sub[PATHLEN];

			subpath(sub, path, required[i]);
			return jfail(c, sub, "missing");
		}
	}
	return 0;
}

static const cJSON *item(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

static int get_number(struct jctx *c, const cJSON *o, const char *path, const char *key,
                      double lo, double hi, double *out)
{
	const cJSON *it = item(o, key);
	char sub[PATHLEN];

	subpath(sub, path, key);
	if (!it)
		return jfail(c, sub, "missing");
	if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
		return jfail(c, sub, "expected a number");
	if (it->valuedouble < lo || it->valuedouble > hi)
		return jfail(c, sub, "%g is out of range [%g, %g]", it->valuedouble, lo, hi);
	*out = it->valuedouble;
	return 0;
}

static int get_int(struct jctx *c, const cJSON *o, const char *path, const char *key,
                   int lo, int hi, int *out)
{
	const cJSON *it = item(o, key);
	char sub[PATHLEN];

	subpath(sub, path, key);
	if (!it)
		return jfail(c, sub, "missing");
	if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble))
		return jfail(c, sub, "expected an integer");
	if (it->valuedouble < lo || it->valuedouble > hi)
		return jfail(c, sub, "%g is out of range [%d, %d]", it->valuedouble, lo, hi);
	*out = (int)it->valuedouble;
	return 0;
}

static int get_string(struct jctx *c, const cJSON *o, const char *path, const char *key,
                      char *dst, size_t dstlen)
{
	const cJSON *it = item(o, key);
	char sub[PATHLEN];

	subpath(sub, path, key);
	if (!it)
		return jfail(c, sub, "missing");
	if (!cJSON_IsString(it))
		return jfail(c, sub, "expected a string");
	if (!it->valuestring[0])
		return jfail(c, sub, "is empty");
	for (const char *p = it->valuestring; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return jfail(c, sub, "holds a control character");
	if (strlen(it->valuestring) >= dstlen)
		return jfail(c, sub, "longer than %zu characters", dstlen - 1);
	if (dst)
		memcpy(dst, it->valuestring, strlen(it->valuestring) + 1);
	return 0;
}

static int get_bool(struct jctx *c, const cJSON *o, const char *path, const char *key,
                    bool *out)
{
	const cJSON *it = item(o, key);
	char sub[PATHLEN];

	subpath(sub, path, key);
	if (!it)
		return jfail(c, sub, "missing");
	if (!cJSON_IsBool(it))
		return jfail(c, sub, "expected true or false");
	*out = cJSON_IsTrue(it);
	return 0;
}

/* An array of non-empty strings (notes, sources, fit parameters). */
static int check_strings(struct jctx *c, const cJSON *o, const char *path, const char *key,
                         bool nonempty)
{
	const cJSON *arr = item(o, key);
	char sub[PATHLEN];
	size_t i = 0;

	subpath(sub, path, key);
	if (!cJSON_IsArray(arr))
		return jfail(c, sub, "expected an array of strings");
	if (nonempty && cJSON_GetArraySize(arr) == 0)
		return jfail(c, sub, "is empty");
	for (const cJSON *s = arr->child; s; s = s->next, i++) {
		char elem[PATHLEN];

		subindex(elem, sub, i);
		if (!cJSON_IsString(s) || !s->valuestring[0])
			return jfail(c, elem, "expected a non-empty string");
	}
	return 0;
}

/* ---- the objects read through jsonread's tables ---- */

/* Read object `o` at `path` (built by subpath/subindex) through `fields` into dst: the
 * table refuses unknown, repeated and missing keys and wrong values, in jsonread's words
 * under the path. */
static int table_at(struct jctx *c, const cJSON *o, const char *path,
                    const struct jr_field *fields, void *dst)
{
	snprintf(c->r.path, sizeof c->r.path, "%s", path);   /* jsonread pops back to it */
	c->r.depth = 0;
	return jr_dispatch(&c->r, o, fields, false, dst, NULL);
}

/* A model's strings are never empty (jsonread checks the type, length and characters). */
static int take_nonempty(struct jr *r, const cJSON *v, void *dst)
{
	(void)dst;
	return v->valuestring[0] ? 0 : jr_fail(r, "is empty");
}

#define M(f) offsetof(struct model, f), sizeof ((struct model *)0)->f
#define MD(f) offsetof(struct model, f), 0

static const struct jr_field software_fields[] = {
	{"driver", JR_STRING, JR_REQUIRED, 0, 0, NULL, JR_STRBUF, M(driver), take_nonempty},
	{"cuda_runtime", JR_STRING, JR_REQUIRED, 0, 0, NULL, JR_STRBUF, M(cuda_runtime),
	 take_nonempty},
	{"cuda_driver", JR_STRING, JR_REQUIRED, 0, 0, NULL, JR_STRBUF, M(cuda_driver),
	 take_nonempty},
	JR_END,
};

static const struct jr_field nvswitch_fields[] = {
	{"links", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, 18, NULL, JR_INT, MD(nvlinks), NULL},
	{"nvls", JR_BOOL, JR_REQUIRED, 0, 0, NULL, JR_BOOLEAN, MD(nvls_capable), NULL},
	JR_END,
};

static const struct jr_field tree_fields[] = {
	{"extra_us", JR_NUMBER, JR_REQUIRED, 0, 1000, NULL, JR_DOUBLE, MD(tree_extra_us), NULL},
	{"data_factor", JR_NUMBER, JR_REQUIRED, 0.1, 100, NULL, JR_DOUBLE, MD(tree_data_factor),
	 NULL},
	JR_END,
};

static const struct jr_field nvls_fields[] = {
	{"latency_us", JR_NUMBER, JR_REQUIRED, 0, 1000, NULL, JR_DOUBLE, MD(nvls_latency_us),
	 NULL},
	{"bw_GBps", JR_NUMBER, JR_REQUIRED, 0.001, 100000, NULL, JR_DOUBLE, MD(nvls_bw), NULL},
	JR_END,
};

/* noise.outlier_factor: [low, high], 1 <= low <= high <= 100. */
static int take_outlier_factor(struct jr *r, const cJSON *v, void *dst)
{
	struct model *m = dst;

	if (cJSON_GetArraySize(v) != 2 || !cJSON_IsNumber(v->child) ||
	    !cJSON_IsNumber(v->child->next))
		return jr_fail(r, "expected [low, high]");
	m->outlier_lo = v->child->valuedouble;
	m->outlier_hi = v->child->next->valuedouble;
	if (!(m->outlier_lo >= 1 && m->outlier_lo <= m->outlier_hi && m->outlier_hi <= 100))
		return jr_fail(r, "need 1 <= low <= high <= 100");
	return 0;
}

static const struct jr_field noise_fields[] = {
	{"sigma", JR_NUMBER, JR_REQUIRED, 0, 1, NULL, JR_DOUBLE, MD(sigma), NULL},
	{"run_sigma", JR_NUMBER, JR_REQUIRED, 0, 1, NULL, JR_DOUBLE, MD(run_sigma), NULL},
	{"outlier_probability", JR_NUMBER, JR_REQUIRED, 0, 1, NULL, JR_DOUBLE,
	 MD(outlier_probability), NULL},
	{"outlier_factor", JR_ARRAY, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, take_outlier_factor},
	{"transient_failure_probability", JR_NUMBER, JR_REQUIRED, 0, 1, NULL, JR_DOUBLE,
	 MD(transient_failure_probability), NULL},
	JR_END,
};

/* fit.parameters: an array of strings, each non-empty (it may be empty itself). */
static int take_parameter(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	(void)i;
	(void)ctx;
	if (!cJSON_IsString(v) || !v->valuestring[0])
		return jr_fail(r, "expected a non-empty string");
	return 0;
}

static int take_parameters(struct jr *r, const cJSON *v, void *dst)
{
	(void)dst;
	return jr_each(r, v, (size_t)UNBOUNDED, take_parameter, NULL);
}

static const struct jr_field fit_fields[] = {
	{"method", JR_STRING, JR_REQUIRED, 0, 2047, NULL, JR_KEEP, 0, 0, take_nonempty},
	{"tool", JR_STRING, JR_REQUIRED, 0, 255, NULL, JR_KEEP, 0, 0, take_nonempty},
	{"parameters", JR_ARRAY, JR_REQUIRED, 0, UNBOUNDED, NULL, JR_KEEP, 0, 0,
	 take_parameters},
	{"max_rel_error", JR_NUMBER, JR_REQUIRED, 0, 10, NULL, JR_KEEP, 0, 0, NULL},
	JR_END,
};

#undef MD
#undef M

static int lookup_name(const char *s, const char *(*name)(int), int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(s, name(i)) == 0)
			return i;
	return -1;
}

static const char *algo_at(int i) { return model_algo_name((enum model_algo)i); }
static const char *proto_at(int i) { return model_proto_name((enum model_proto)i); }
static const char *transport_at(int i) { return model_transport_name((enum model_transport)i); }

static const char *const path_words[MODEL_NPATHS] = {
	"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS",
};
static const char *path_at(int i) { return path_words[i]; }

static const char *const link_words[MODEL_NLINKS] = { "NV", "PIX", "PXB", "NODE", "SYS" };

const char *model_link_name(enum model_link l)
{
	return (unsigned)l < MODEL_NLINKS ? link_words[l] : "SYS";
}

enum model_path model_link_path(enum model_link l)
{
	static const enum model_path map[MODEL_NLINKS] = {
		MODEL_PATH_NVL, MODEL_PATH_PIX, MODEL_PATH_PXB, MODEL_PATH_PHB, MODEL_PATH_SYS,
	};
	return (unsigned)l < MODEL_NLINKS ? map[l] : MODEL_PATH_SYS;
}

/* {"LL": x, "LL128": y, "Simple": z} with each value in [lo, hi]. */
static int get_per_proto(struct jctx *c, const cJSON *o, const char *path, const char *key,
                         double lo, double hi, double out[MODEL_NPROTOS])
{
	struct jr_field fields[MODEL_NPROTOS + 1] = {[MODEL_NPROTOS] = JR_END};
	const cJSON *it = item(o, key);
	char sub[PATHLEN];

	for (int p = 0; p < MODEL_NPROTOS; p++)
		fields[p] = (struct jr_field){model_proto_name((enum model_proto)p), JR_NUMBER,
		                              JR_REQUIRED, lo, hi, NULL, JR_DOUBLE,
		                              (size_t)p * sizeof(double), 0, NULL};
	subpath(sub, path, key);
	if (!it)
		return jfail(c, sub, "missing");
	return table_at(c, it, sub, fields, out);
}

/* Per transport: nvlink only on NVSwitch machines (and required there); p2p, shm and net
 * always (P2P_DISABLE and SHM_DISABLE can reach them on any machine). */
static int transport_keys(const struct model *m, const char *allowed[MODEL_NTRANSPORTS + 1])
{
	int n = 0;

	for (int t = 0; t < MODEL_NTRANSPORTS; t++)
		if (t != MODEL_TRANSPORT_NVLINK || m->nvlinks > 0)
			allowed[n++] = model_transport_name((enum model_transport)t);
	allowed[n] = NULL;
	return n;
}

static int get_per_transport_proto(struct jctx *c, const struct model *m, const cJSON *o,
                                   const char *path, const char *key, double lo, double hi,
                                   double out[MODEL_NTRANSPORTS][MODEL_NPROTOS])
{
	const char *keys[MODEL_NTRANSPORTS + 1];
	const cJSON *it = item(o, key);
	char sub[PATHLEN];

	subpath(sub, path, key);
	transport_keys(m, keys);
	if (!it)
		return jfail(c, sub, "missing");
	if (check_object(c, it, sub, keys, keys))
		return -1;
	for (int i = 0; keys[i]; i++) {
		int t = lookup_name(keys[i], transport_at, MODEL_NTRANSPORTS);

		if (get_per_proto(c, it, sub, keys[i], lo, hi, out[t]))
			return -1;
	}
	return 0;
}

static int parse_software(struct jctx *c, const cJSON *root, struct model *m)
{
	return table_at(c, item(root, "software"), "software", software_fields, m);
}

static int parse_gpu(struct jctx *c, const cJSON *g, const char *path, int sockets,
                     struct model_gpu *out)
{
	static const char *const keys[] = { "socket", "switch", "pxb_group", "bus_id", NULL };
	static const char *const req[] = { "socket", "switch", "bus_id", NULL };
	const cJSON *sw, *pxb;
	char sub[PATHLEN];

	if (check_object(c, g, path, keys, req))
		return -1;
	if (get_int(c, g, path, "socket", 0, sockets - 1, &out->socket) ||
	    get_string(c, g, path, "bus_id", out->bus_id, sizeof out->bus_id))
		return -1;
	sw = item(g, "switch");
	out->pcie_switch = -1;
	if (!cJSON_IsNull(sw) && get_int(c, g, path, "switch", 0, 63, &out->pcie_switch))
		return -1;
	pxb = item(g, "pxb_group");
	out->pxb_group = -1;
	if (pxb && !cJSON_IsNull(pxb) && get_int(c, g, path, "pxb_group", 0, 63, &out->pxb_group))
		return -1;
	subpath(sub, path, "bus_id");
	if (strncmp(out->bus_id, "0000", 4) != 0 || strlen(out->bus_id) != 16)
		return jfail(c, sub, "'%s' is not a bus id like 00000000:18:00.0", out->bus_id);
	return 0;
}

static void derive_links(struct model *m)
{
	for (int i = 0; i < m->ngpus; i++) {
		for (int j = 0; j < m->ngpus; j++) {
			const struct model_gpu *a = &m->gpu[i], *b = &m->gpu[j];
			enum model_link l;

			if (a->pcie_switch >= 0 && a->pcie_switch == b->pcie_switch)
				l = MODEL_LINK_PIX;
			else if (a->pxb_group >= 0 && a->pxb_group == b->pxb_group)
				l = MODEL_LINK_PXB;
			else if (a->socket == b->socket)
				l = MODEL_LINK_NODE;
			else
				l = MODEL_LINK_SYS;
			m->pcie_link[i][j] = l;
			m->link[i][j] = m->nvlinks > 0 ? MODEL_LINK_NV : l;
		}
	}
}

static int parse_machine(struct jctx *c, const cJSON *root, struct model *m)
{
	static const char *const keys[] = {
		"gpu_name", "compute_capability", "cpu_vendor", "sockets", "pcie_gen", "gpus",
		"nvswitch", "p2p_max_path", "nvls_enable_default", NULL };
	const cJSON *o = item(root, "machine"), *gpus, *nvs;
	char vendor[16], p2p[8], sub[PATHLEN];
	int sockets, pcie_gen, nvls_default;
	size_t i = 0;

	if (check_object(c, o, "machine", keys, keys))
		return -1;
	if (get_string(c, o, "machine", "gpu_name", m->gpu_name, sizeof m->gpu_name) ||
	    get_int(c, o, "machine", "compute_capability", 30, 200, &m->compute_capability) ||
	    get_string(c, o, "machine", "cpu_vendor", vendor, sizeof vendor) ||
	    get_int(c, o, "machine", "sockets", 1, 8, &sockets) ||
	    get_int(c, o, "machine", "pcie_gen", 1, 7, &pcie_gen) ||
	    get_string(c, o, "machine", "p2p_max_path", p2p, sizeof p2p) ||
	    get_int(c, o, "machine", "nvls_enable_default", 0, 2, &nvls_default))
		return -1;
	if (strcmp(vendor, "AMD") != 0 && strcmp(vendor, "Intel") != 0 &&
	    strcmp(vendor, "ARM") != 0)
		return jfail(c, "machine.cpu_vendor", "'%s' is not AMD, Intel or ARM", vendor);
	m->cpu_amd = strcmp(vendor, "AMD") == 0;
	m->nvls_enable_default = nvls_default;
	m->p2p_max_path = lookup_name(p2p, path_at, MODEL_NPATHS);
	if (m->p2p_max_path < 0)
		return jfail(c, "machine.p2p_max_path", "'%s' is not one of LOC NVL PIX PXB PHB SYS",
		             p2p);

	gpus = item(o, "gpus");
	if (!cJSON_IsArray(gpus))
		return jfail(c, "machine.gpus", "expected an array");
	m->ngpus = cJSON_GetArraySize(gpus);
	if (m->ngpus < 2 || m->ngpus > MODEL_MAX_GPUS)
		return jfail(c, "machine.gpus", "%d GPUs; a model needs 2..%d", m->ngpus,
		             MODEL_MAX_GPUS);
	for (const cJSON *g = gpus->child; g; g = g->next, i++) {
		subindex(sub, "machine.gpus", i);
		if (parse_gpu(c, g, sub, sockets, &m->gpu[i]))
			return -1;
		for (size_t j = 0; j < i; j++)
			if (strcmp(m->gpu[j].bus_id, m->gpu[i].bus_id) == 0)
				return jfail(c, sub, "bus_id %s repeats machine.gpus[%zu]",
				             m->gpu[i].bus_id, j);
	}

	nvs = item(o, "nvswitch");
	if (!cJSON_IsNull(nvs)) {
		if (table_at(c, nvs, "machine.nvswitch", nvswitch_fields, m))
			return -1;
	}
	derive_links(m);
	return 0;
}

static int parse_nccl(struct jctx *c, const cJSON *root, struct model *m)
{
	static const char *const keys[] = {
		"graph_channels", "bw_intra_GBps", "comm_channels", "nvls_busbw_GBps", NULL };
	static const char *const req[] = {
		"graph_channels", "bw_intra_GBps", "comm_channels", NULL };
	const cJSON *o = item(root, "nccl");

	if (check_object(c, o, "nccl", keys, req))
		return -1;
	if (get_int(c, o, "nccl", "graph_channels", 1, 32, &m->graph_channels) ||
	    get_number(c, o, "nccl", "bw_intra_GBps", 0.01, 1000, &m->bw_intra) ||
	    get_int(c, o, "nccl", "comm_channels", 1, 64, &m->comm_channels))
		return -1;
	if (m->nvls_capable) {
		if (get_number(c, o, "nccl", "nvls_busbw_GBps", 0.01, 10000, &m->nvls_busbw))
			return -1;
	} else if (item(o, "nvls_busbw_GBps")) {
		return jfail(c, "nccl.nvls_busbw_GBps", "only for machines with NVLS (machine.nvswitch.nvls)");
	}
	/* NCCL's graph type is its worst ring hop; the ring visits GPUs in file order */
	m->type_intra = MODEL_PATH_LOC;
	for (int i = 0; i < m->ngpus; i++) {
		int p = model_link_path(m->link[i][(i + 1) % m->ngpus]);

		if (p > m->type_intra)
			m->type_intra = p;
	}
	return 0;
}

static int parse_costs(struct jctx *c, const cJSON *root, struct model *m)
{
	static const char *const keys[] = {
		"launch_us", "hop_us", "cta_bw_GBps", "link_bw_GBps", "path_extra_us",
		"threads_saturate", "cta_sync_us", "host_callback_us", "proxy_per_channel_us",
		"proxy_per_comm_channel_us", "tree", "nvls", NULL };
	static const char *const req[] = {
		"launch_us", "hop_us", "cta_bw_GBps", "link_bw_GBps", "path_extra_us",
		"threads_saturate", "cta_sync_us", "host_callback_us", "proxy_per_channel_us",
		"proxy_per_comm_channel_us", "tree", NULL };
	const char *tkeys[MODEL_NTRANSPORTS + 1];
	const char *lkeys[MODEL_NLINKS + 1];
	const cJSON *o = item(root, "costs"), *it;
	int nl = 0;

	if (check_object(c, o, "costs", keys, req))
		return -1;
	if (get_per_proto(c, o, "costs", "launch_us", 0, 1000, m->launch_us) ||
	    get_per_transport_proto(c, m, o, "costs", "hop_us", 0, 1000, m->hop_us) ||
	    get_per_transport_proto(c, m, o, "costs", "cta_bw_GBps", 0.001, 10000, m->cta_bw) ||
	    get_per_transport_proto(c, m, o, "costs", "threads_saturate", 32, 1024,
	                            m->threads_saturate) ||
	    get_number(c, o, "costs", "cta_sync_us", 0, 100, &m->cta_sync_us) ||
	    get_number(c, o, "costs", "host_callback_us", 0, 1000, &m->host_callback_us) ||
	    get_number(c, o, "costs", "proxy_per_channel_us", 0, 100, &m->proxy_per_channel_us) ||
	    get_number(c, o, "costs", "proxy_per_comm_channel_us", 0, 100,
	               &m->proxy_per_comm_channel_us))
		return -1;

	transport_keys(m, tkeys);
	it = item(o, "link_bw_GBps");
	if (check_object(c, it, "costs.link_bw_GBps", tkeys, tkeys))
		return -1;
	for (int i = 0; tkeys[i]; i++)
		if (get_number(c, it, "costs.link_bw_GBps", tkeys[i], 0.001, 100000,
		               &m->link_bw[lookup_name(tkeys[i], transport_at, MODEL_NTRANSPORTS)]))
			return -1;

	for (int l = 0; l < MODEL_NLINKS; l++)
		if (l != MODEL_LINK_NV || m->nvlinks > 0)
			lkeys[nl++] = link_words[l];
	lkeys[nl] = NULL;
	it = item(o, "path_extra_us");
	if (check_object(c, it, "costs.path_extra_us", lkeys, lkeys))
		return -1;
	for (int l = 0; l < MODEL_NLINKS; l++)
		if (l != MODEL_LINK_NV || m->nvlinks > 0)
			if (get_number(c, it, "costs.path_extra_us", link_words[l], 0, 1000,
			               &m->path_extra_us[l]))
				return -1;

	it = item(o, "tree");
	if (table_at(c, it, "costs.tree", tree_fields, m))
		return -1;

	it = item(o, "nvls");
	if (m->nvls_capable) {
		if (!it)
			return jfail(c, "costs.nvls", "missing (the machine has NVLS)");
		if (table_at(c, it, "costs.nvls", nvls_fields, m))
			return -1;
	} else if (it) {
		return jfail(c, "costs.nvls", "only for machines with NVLS (machine.nvswitch.nvls)");
	}
	return 0;
}

static int parse_noise(struct jctx *c, const cJSON *root, struct model *m)
{
	return table_at(c, item(root, "noise"), "noise", noise_fields, m);
}

static int parse_stage(struct jctx *c, const cJSON *o, const char *path, enum proto_stage *out)
{
	char stage[16], sub[PATHLEN];

	if (get_string(c, o, path, "stage", stage, sizeof stage))
		return -1;
	subpath(sub, path, "stage");
	if (proto_stage_parse(stage, out) != 0 || *out == PROTO_STAGE_ARGS)
		return jfail(c, sub, "'%s' is not one of env, init, capture, replay, verify", stage);
	return 0;
}

/* An {"NCCL_X": "value"} object of variables the evaluator reads. */
static int check_env_object(struct jctx *c, const cJSON *env, const char *path)
{
	if (!cJSON_IsObject(env))
		return jfail(c, path, "expected an object of NCCL variables");
	for (const cJSON *v = env->child; v; v = v->next) {
		char sub[PATHLEN];
		bool known = false;

		subpath(sub, path, v->string);
		for (size_t i = 0; model_env_var_name(i); i++)
			known = known || strcmp(v->string, model_env_var_name(i)) == 0;
		if (!known)
			return jfail(c, sub, "not a variable the model reads");
		if (!cJSON_IsString(v))
			return jfail(c, sub, "expected a string value");
		if (strlen(v->valuestring) >= MODEL_ENV_VALUE_MAX)
			return jfail(c, sub, "value longer than %d characters", MODEL_ENV_VALUE_MAX - 1);
		for (const cJSON *w = v->next; w; w = w->next)
			if (strcmp(v->string, w->string) == 0)
				return jfail(c, sub, "appears twice");
	}
	return 0;
}

static int parse_rule(struct jctx *c, const cJSON *r, const char *path, struct model_rule *out)
{
	static const char *const keys[] = { "when", "stage", "error", "source", NULL };
	static const char *const when_keys[] = { "algo", "proto", "transport", "env", NULL };
	const cJSON *when = item(r, "when"), *it;
	char sub[PATHLEN], name[32];
	size_t n = 0;

	if (check_object(c, r, path, keys, keys))
		return -1;
	subpath(sub, path, "when");
	if (check_object(c, when, sub, when_keys, NULL))
		return -1;
	if (!when->child)
		return jfail(c, sub, "needs at least one condition");
	out->algo = out->proto = out->transport = -1;
	if (item(when, "algo")) {
		if (get_string(c, when, sub, "algo", name, sizeof name))
			return -1;
		out->algo = lookup_name(name, algo_at, MODEL_NALGOS);
		if (out->algo < 0)
			return jfail(c, sub, "algo '%s' is not an NCCL algorithm name", name);
	}
	if (item(when, "proto")) {
		if (get_string(c, when, sub, "proto", name, sizeof name))
			return -1;
		out->proto = lookup_name(name, proto_at, MODEL_NPROTOS);
		if (out->proto < 0)
			return jfail(c, sub, "proto '%s' is not LL, LL128 or Simple", name);
	}
	if (item(when, "transport")) {
		if (get_string(c, when, sub, "transport", name, sizeof name))
			return -1;
		out->transport = lookup_name(name, transport_at, MODEL_NTRANSPORTS);
		if (out->transport < 0)
			return jfail(c, sub, "transport '%s' is not nvlink, p2p, shm or net", name);
	}
	it = item(when, "env");
	if (it) {
		char envpath[PATHLEN];

		subpath(envpath, sub, "env");
		if (check_env_object(c, it, envpath))
			return -1;
		for (const cJSON *v = it->child; v; v = v->next, n++) {
			if (n == MODEL_MAX_RULE_ENV)
				return jfail(c, envpath, "more than %d variables", MODEL_MAX_RULE_ENV);
			for (size_t i = 0; model_env_var_name(i); i++)
				if (strcmp(v->string, model_env_var_name(i)) == 0)
					out->env_var[n] = (int)i;
			snprintf(out->env_value[n], sizeof out->env_value[n], "%s", v->valuestring);
		}
	}
	out->nenv = n;
	if (parse_stage(c, r, path, &out->stage) ||
	    get_string(c, r, path, "error", out->error, sizeof out->error) ||
	    get_string(c, r, path, "source", NULL, 1024))
		return -1;
	return 0;
}

static int parse_failures(struct jctx *c, const cJSON *root, struct model *m)
{
	const cJSON *arr = item(root, "failures");
	size_t i = 0;

	if (!cJSON_IsArray(arr))
		return jfail(c, "failures", "expected an array");
	if (cJSON_GetArraySize(arr) > MODEL_MAX_RULES)
		return jfail(c, "failures", "more than %d rules", MODEL_MAX_RULES);
	for (const cJSON *r = arr->child; r; r = r->next, i++) {
		char sub[PATHLEN];

		subindex(sub, "failures", i);
		if (parse_rule(c, r, sub, &m->rule[i]))
			return -1;
	}
	m->nrules = i;
	return 0;
}

/* Calibration figures are checked by tests/models against the evaluator; here only their
 * shape is validated, so a typo cannot silently drop a figure from the tests. */
static int parse_calibration(struct jctx *c, const cJSON *root)
{
	static const char *const keys[] = {
		"figure", "env", "bytes", "dtype", "us", "stage", "runs", "tolerance", "model_us",
		"source", NULL };
	static const char *const req[] = { "figure", "env", "bytes", "source", NULL };
	const cJSON *arr = item(root, "calibration");
	size_t i = 0;

	if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0)
		return jfail(c, "calibration", "expected a non-empty array of figures");
	for (const cJSON *f = arr->child; f; f = f->next, i++) {
		char sub[PATHLEN], envpath[PATHLEN], dtype[8];
		enum proto_dtype dt;
		enum proto_stage st;
		int bytes;
		double v;

		subindex(sub, "calibration", i);
		subpath(envpath, sub, "env");
		if (check_object(c, f, sub, keys, req) ||
		    get_string(c, f, sub, "figure", NULL, 512) ||
		    get_string(c, f, sub, "source", NULL, 1024) ||
		    check_env_object(c, item(f, "env"), envpath) ||
		    get_int(c, f, sub, "bytes", 1, 1 << 30, &bytes))
			return -1;
		if (item(f, "dtype")) {
			if (get_string(c, f, sub, "dtype", dtype, sizeof dtype))
				return -1;
			if (proto_dtype_parse(dtype, &dt) != 0)
				return jfail(c, sub, "dtype '%s' is not bf16, f16 or f32", dtype);
		}
		if (!!item(f, "us") + !!item(f, "stage") + !!item(f, "runs") != 1)
			return jfail(c, sub, "needs exactly one of 'us' (a latency), 'stage' (a failure) "
			             "or 'runs' (true: it must run)");
		if (item(f, "runs")) {
			bool runs = false;

			if (get_bool(c, f, sub, "runs", &runs))
				return -1;
			if (!runs)
				return jfail(c, sub, "'runs' can only be true (use 'stage' for a failure)");
			if (item(f, "tolerance") || item(f, "model_us"))
				return jfail(c, sub, "a 'runs' figure has no tolerance or model_us");
		} else if (item(f, "us")) {
			if (get_number(c, f, sub, "us", 0.001, 1e9, &v) ||
			    get_number(c, f, sub, "tolerance", 0.0001, 1, &v))
				return -1;
			if (item(f, "model_us") && get_number(c, f, sub, "model_us", 0, 1e9, &v))
				return -1;
		} else {
			if (parse_stage(c, f, sub, &st))
				return -1;
			if (item(f, "tolerance") || item(f, "model_us"))
				return jfail(c, sub, "a failure figure has no tolerance or model_us");
		}
	}
	return 0;
}

static int parse_landscape(struct jctx *c, const cJSON *root)
{
	static const char *const keys[] = {
		"space", "bytes", "dtype", "default_us", "best_us", "best_env", "gain", "tolerance",
		"explanation", NULL };
	const cJSON *o = item(root, "landscape");
	char space[16];
	double v;
	int bytes;

	if (!o)
		return 0;
	if (check_object(c, o, "landscape", keys, keys) ||
	    get_string(c, o, "landscape", "space", space, sizeof space) ||
	    get_int(c, o, "landscape", "bytes", 1, 1 << 30, &bytes) ||
	    get_string(c, o, "landscape", "dtype", NULL, 8) ||
	    get_number(c, o, "landscape", "default_us", 0.001, 1e9, &v) ||
	    get_number(c, o, "landscape", "best_us", 0.001, 1e9, &v) ||
	    get_number(c, o, "landscape", "gain", 1, 1e6, &v) ||
	    get_number(c, o, "landscape", "tolerance", 0.0001, 1, &v) ||
	    check_env_object(c, item(o, "best_env"), "landscape.best_env") ||
	    get_string(c, o, "landscape", "explanation", NULL, 4096))
		return -1;
	if (strcmp(space, "default") != 0)
		return jfail(c, "landscape.space", "'%s': only \"default\" (docs/formats.md) is known",
		             space);
	return 0;
}

static int parse_fit(struct jctx *c, const cJSON *root)
{
	return table_at(c, item(root, "fit"), "fit", fit_fields, NULL);
}

struct model *model_parse(const char *json, size_t len, const char *where, char *err,
                          size_t errlen)
{
	static const char *const keys[] = {
		"schema", "name", "summary", "nccl_version", "software", "machine", "nccl", "costs",
		"noise", "failures", "calibration", "landscape", "fit", "notes", "sources", NULL };
	static const char *const req[] = {
		"schema", "name", "summary", "nccl_version", "software", "machine", "nccl", "costs",
		"noise", "failures", "calibration", "fit", "notes", "sources", NULL };
	struct jctx c = { where, err, errlen, {0} };
	struct model *m = NULL;
	cJSON *root = NULL;
	struct jr r;
	char schema[32];
	int ok = -1;

	jr_init(&r, where, err, errlen);
	jr_init(&c.r, where, err, errlen);
	root = jr_parse(&r, json, len);
	if (!root)
		goto out;
	m = calloc(1, sizeof *m);
	if (!m) {
		fs_errf(err, errlen, "%s: out of memory", where);
		goto out;
	}
	if (check_object(&c, root, "", keys, req) ||
	    get_string(&c, root, "", "schema", schema, sizeof schema))
		goto out;
	if (strcmp(schema, MODEL_SCHEMA) != 0) {
		jfail(&c, "schema", "'%s' is not \"%s\"", schema, MODEL_SCHEMA);
		goto out;
	}
	if (get_string(&c, root, "", "name", m->name, sizeof m->name) ||
	    get_string(&c, root, "", "summary", NULL, 1024) ||
	    get_string(&c, root, "", "nccl_version", m->nccl_version, sizeof m->nccl_version) ||
	    parse_software(&c, root, m) || parse_machine(&c, root, m) || parse_nccl(&c, root, m) ||
	    parse_costs(&c, root, m) || parse_noise(&c, root, m) || parse_failures(&c, root, m) ||
	    parse_calibration(&c, root) || parse_landscape(&c, root) || parse_fit(&c, root) ||
	    check_strings(&c, root, "", "notes", true) || check_strings(&c, root, "", "sources", true))
		goto out;
	for (const char *p = m->name; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_')) {
			jfail(&c, "name", "'%s': use lower-case letters, digits, '-' and '_'", m->name);
			goto out;
		}
	}
	ok = 0;
out:
	cJSON_Delete(root);
	if (ok != 0) {
		free(m);
		return NULL;
	}
	return m;
}
