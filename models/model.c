/* model.c - the models a probe can load: a model file, the built-in models (embedded
 * at build time), the accessors of a loaded model and the synthetic fingerprint of the
 * machine it models. Reading and validating a model's text is model_read.c. */
#include "model.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsutil.h"
#include "modeldef.h"

#define MODEL_FILE_MAX (1u << 20)

struct model *model_load_file(const char *path, char *err, size_t errlen)
{
	size_t len;
	char *text = fs_read_file(path, MODEL_FILE_MAX, &len, err, errlen);
	struct model *m;

	if (!text)
		return NULL;
	m = model_parse(text, len, path, err, errlen);
	free(text);
	return m;
}

size_t model_builtin_count(void)
{
	return models_builtin_count;
}

const char *model_builtin_name(size_t i)
{
	return i < models_builtin_count ? models_builtin[i].name : NULL;
}

const char *model_builtin_text(size_t i, size_t *len)
{
	if (i >= models_builtin_count)
		return NULL;
	*len = models_builtin[i].len;
	return models_builtin[i].json;
}

static void builtin_list(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < models_builtin_count && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", models_builtin[i].name);

		if (n < 0)
			break;
		used += (size_t)n;
	}
}

struct model *model_load_builtin(const char *name, char *err, size_t errlen)
{
	char where[128], names[512];

	for (size_t i = 0; i < models_builtin_count; i++) {
		if (strcmp(name, models_builtin[i].name) == 0) {
			snprintf(where, sizeof where, "built-in model %s", name);
			return model_parse(models_builtin[i].json, models_builtin[i].len, where, err,
			                   errlen);
		}
	}
	builtin_list(names, sizeof names);
	fs_errf(err, errlen, "no built-in model '%s' (built-in: %s)", name, names);
	return NULL;
}

struct model *model_load(const char *spec, char *err, size_t errlen)
{
	struct stat st;
	char names[512];

	for (size_t i = 0; i < models_builtin_count; i++)
		if (strcmp(spec, models_builtin[i].name) == 0)
			return model_load_builtin(spec, err, errlen);
	if (strchr(spec, '/') || stat(spec, &st) == 0)
		return model_load_file(spec, err, errlen);
	builtin_list(names, sizeof names);
	fs_errf(err, errlen, "--model %s: neither a built-in model (%s) nor a file", spec, names);
	return NULL;
}

void model_destroy(struct model *m)
{
	free(m);
}

const char *model_name(const struct model *m)
{
	return m->name;
}

const char *model_nccl_version(const struct model *m)
{
	return m->nccl_version;
}

int model_nranks(const struct model *m)
{
	return m->ngpus;
}

/* FNV-1a, for the synthetic but stable GPU UUIDs. */
static uint64_t fnv1a(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

static void fake_uuid(const struct model *m, int index, char *buf, size_t len)
{
	char idx[16];
	uint64_t a, b;

	snprintf(idx, sizeof idx, "#%d", index);
	a = fnv1a(fnv1a(14695981039346656037ull, m->name), idx);
	b = fnv1a(a, m->gpu[index].bus_id);
	snprintf(buf, len, "GPU-%08x-%04x-%04x-%04x-%012llx", (unsigned)(a >> 32),
	         (unsigned)(a >> 16) & 0xffff, (unsigned)a & 0xffff, (unsigned)(b >> 48),
	         (unsigned long long)(b & 0xffffffffffffull));
}

char *model_fingerprint_json(const struct model *m)
{
	return model_fingerprint_json_nccl(m, NULL);
}

char *model_fingerprint_json_nccl(const struct model *m, const char *nccl_path)
{
	cJSON *root = cJSON_CreateObject(), *gpus, *topo;
	char host[96], *text = NULL;

	if (!root)
		return NULL;
	snprintf(host, sizeof host, "model-%s", m->name);
	if (!cJSON_AddStringToObject(root, "schema", PROTO_FINGERPRINT_SCHEMA) ||
	    !cJSON_AddStringToObject(root, "source", "model") ||
	    !cJSON_AddStringToObject(root, "model", m->name) ||
	    !cJSON_AddStringToObject(root, "host", host) ||
	    !cJSON_AddStringToObject(root, "kernel", "model") ||
	    !cJSON_AddStringToObject(root, "driver", m->driver) ||
	    !cJSON_AddStringToObject(root, "cuda_runtime", m->cuda_runtime) ||
	    !cJSON_AddStringToObject(root, "cuda_driver", m->cuda_driver) ||
	    !cJSON_AddStringToObject(root, "nccl_version", m->nccl_version) ||
	    (nccl_path && !cJSON_AddStringToObject(root, "nccl_path", nccl_path)) ||
	    !cJSON_AddNumberToObject(root, "gpu_count", m->ngpus))
		goto out;
	gpus = cJSON_AddArrayToObject(root, "gpus");
	if (!gpus)
		goto out;
	for (int i = 0; i < m->ngpus; i++) {
		cJSON *g = cJSON_CreateObject();
		char uuid[64];

		if (!g || !cJSON_AddItemToArray(gpus, g)) {
			cJSON_Delete(g);
			goto out;
		}
		fake_uuid(m, i, uuid, sizeof uuid);
		if (!cJSON_AddNumberToObject(g, "index", i) ||
		    !cJSON_AddStringToObject(g, "name", m->gpu_name) ||
		    !cJSON_AddStringToObject(g, "bus_id", m->gpu[i].bus_id) ||
		    !cJSON_AddStringToObject(g, "uuid", uuid))
			goto out;
	}
	topo = cJSON_AddArrayToObject(root, "topology");
	if (!topo)
		goto out;
	for (int i = 0; i < m->ngpus; i++) {
		cJSON *row = cJSON_CreateArray();

		if (!row || !cJSON_AddItemToArray(topo, row)) {
			cJSON_Delete(row);
			goto out;
		}
		for (int j = 0; j < m->ngpus; j++) {
			char word[16];
			cJSON *s;

			if (i == j)
				snprintf(word, sizeof word, "X");
			else if (m->link[i][j] == MODEL_LINK_NV)
				snprintf(word, sizeof word, "NV%d", m->nvlinks);
			else
				snprintf(word, sizeof word, "%s", model_link_name(m->link[i][j]));
			s = cJSON_CreateString(word);
			if (!s || !cJSON_AddItemToArray(row, s)) {
				cJSON_Delete(s);
				goto out;
			}
		}
	}
	text = cJSON_PrintUnformatted(root);
out:
	cJSON_Delete(root);
	return text;
}
