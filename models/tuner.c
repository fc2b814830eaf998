/* tuner.c - a tuner plugin as the modelled NCCL loads and asks it (see tuner.h): the
 * search of plugin_open.cc, the symbol order of tuner.cc, the ABI of plugin/nccl_abi.h and
 * an NCCL-style logger. */
#include "tuner.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "fsutil.h"
#include "nccl_abi.h"

#define NCCL_FUNC_ALLREDUCE 4     /* ncclFuncAllReduce */

enum abi { ABI_V4 = 4, ABI_V5 = 5, ABI_V6 = 6 };

struct model_tuner {
	void *handle;
	enum abi abi;
	const struct nt_nccl_tuner_v4 *v4;
	const struct nt_nccl_tuner_v5 *v5;   /* v6 starts like v5 */
	char symbol[32];
	char file[MODEL_TUNER_PATH_MAX];
};

/* ---- the logger NCCL hands a plugin ---- */

/* Whether NCCL_DEBUG asks for INFO lines (NCCL's own output; the probe's copy of NCCL's
 * warnings shows WARN lines in any case). */
static bool info_wanted(void)
{
	const char *d = getenv("NCCL_DEBUG");

	return d && (strcasecmp(d, "INFO") == 0 || strcasecmp(d, "TRACE") == 0);
}

/* ncclDebugLogger_t: one line on stderr, as NCCL writes it. */
static void nccl_logger(int level, unsigned long flags, const char *file, int line,
                        const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void nccl_logger(int level, unsigned long flags, const char *file, int line,
                        const char *fmt, ...)
{
	char msg[1024], host[64] = "model";
	va_list ap;
	int pid = (int)getpid();

	(void)flags;
	if (level != NT_NCCL_LOG_WARN && !(level == NT_NCCL_LOG_INFO && info_wanted()))
		return;
	if (gethostname(host, sizeof host) != 0)
		snprintf(host, sizeof host, "model");
	host[sizeof host - 1] = '\0';
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (level == NT_NCCL_LOG_WARN)
		fprintf(stderr, "%s:%d:%d [0] %s:%d NCCL WARN %s\n", host, pid, pid,
		        file ? file : "?", line, msg);
	else
		fprintf(stderr, "%s:%d:%d [0] NCCL INFO %s\n", host, pid, pid, msg);
}

/* ---- loading ---- */

/* The NCCL version's minor number ("2.28.3" -> 28); 28 when it cannot be read. */
static int nccl_minor(const char *version)
{
	int major = 0, minor = 0;

	if (!version || sscanf(version, "%d.%d", &major, &minor) != 2 || major != 2)
		return 28;
	return minor;
}

/* dlopen as tryOpenLib does: a (case-insensitive) prefix of STATIC_PLUGIN means the
 * program itself. */
static void *try_open(const char *name, char *err, size_t errlen)
{
	const char *e;
	void *h;

	if (strncasecmp(name, "STATIC_PLUGIN", strlen(name)) == 0)
		name = NULL;
	dlerror();
	h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		e = dlerror();
		snprintf(err, errlen, "%s", e ? e : "dlopen failed");
	}
	return h;
}

/* The library as openPluginLib finds it. */
static void *find_library(const char *value, char *file, size_t filelen, char *why,
                          size_t whylen)
{
	char first[512] = "", second[512] = "", name[MODEL_TUNER_PATH_MAX];
	size_t len;
	void *h;

	snprintf(name, sizeof name, "%s", value && *value ? value : "libnccl-tuner.so");
	h = try_open(name, first, sizeof first);
	if (h) {
		snprintf(file, filelen, "%s", name);
		return h;
	}
	len = value ? strlen(value) : 0;
	if (len > 0 && !strchr(value, '/') &&
	    !(strncmp(value, "lib", 3) == 0 && len >= 3 && strcmp(value + len - 3, ".so") == 0)) {
		snprintf(name, sizeof name, "libnccl-tuner-%s.so", value);
		h = try_open(name, second, sizeof second);
		if (h) {
			snprintf(file, filelen, "%s", name);
			return h;
		}
	}
	if (second[0])
		fs_errf(why, whylen, "cannot load '%s' (%s) nor libnccl-tuner-%s.so (%s)", value,
		        first, value, second);
	else
		fs_errf(why, whylen, "cannot load '%s': %s", name, first);
	return NULL;
}

struct model_tuner *model_tuner_open(const char *value, const char *nccl_version, char *why,
                                     size_t whylen)
{
	static const char *const names[] = {
		"ncclTunerPlugin_v6", "ncclTunerPlugin_v5", "ncclTunerPlugin_v4" };
	struct model_tuner *t = NULL;
	int minor = nccl_minor(nccl_version), first = minor >= 30 ? 0 : minor >= 28 ? 1 : 2;
	void *sym = NULL;

	if (whylen)
		why[0] = '\0';
	if (value && strcasecmp(value, "none") == 0)
		goto out;
	t = calloc(1, sizeof *t);
	if (!t) {
		fs_errf(why, whylen, "out of memory loading a tuner plugin");
		goto out;
	}
	t->handle = find_library(value, t->file, sizeof t->file, why, whylen);
	if (!t->handle) {
		if ((!value || !*value) && whylen)
			why[0] = '\0';   /* unset and no libnccl-tuner.so: no plugin, no word */
		goto fail;
	}
	for (int i = first; i < 3 && !sym; i++) {
		sym = dlsym(t->handle, names[i]);
		if (sym) {
			t->abi = (enum abi)(6 - i);
			snprintf(t->symbol, sizeof t->symbol, "%s", names[i]);
		}
	}
	if (!sym) {
		fs_errf(why, whylen, "'%s' has none of the tuner symbols NCCL %s takes (%s%s%s%s%s): "
		        "\"External tuner plugin is unsupported\"", t->file,
		        nccl_version ? nccl_version : "?", names[first],
		        first == 0 ? ", " : "", first == 0 ? names[1] : "",
		        first < 2 ? ", then " : "", first < 2 ? names[2] : "");
		goto fail;
	}
	if (t->abi == ABI_V4)
		t->v4 = sym;
	else
		t->v5 = sym;
	nccl_logger(NT_NCCL_LOG_INFO, NT_NCCL_INIT | NT_NCCL_TUNING, __FILE__, __LINE__,
	            "Successfully loaded external tuner plugin %s (%s)", t->file, t->symbol);
	goto out;
fail:
	model_tuner_close(t);
	t = NULL;
out:
	return t;
}

void model_tuner_close(struct model_tuner *t)
{
	if (!t)
		return;
	if (t->handle)
		dlclose(t->handle);
	free(t);
}

const char *model_tuner_symbol(const struct model_tuner *t)
{
	return t->symbol;
}

const char *model_tuner_file(const struct model_tuner *t)
{
	return t->file;
}

/* ---- asking ---- */

int model_tuner_init(struct model_tuner *t, int nranks, int nnodes, uint64_t comm_id,
                     void **ctx)
{
	*ctx = NULL;
	if (t->abi == ABI_V4)
		return t->v4->init ? t->v4->init((size_t)nranks, (size_t)nnodes, nccl_logger, ctx) : 0;
	return t->v5->init ? t->v5->init(ctx, comm_id, (size_t)nranks, (size_t)nnodes, nccl_logger,
	                                 NULL, NULL) : 0;
}

int model_tuner_ask(struct model_tuner *t, void *ctx, size_t bytes, int reg_buff,
                    struct model_costs *table, int *nchannels)
{
	int (*get)(void *, int, size_t, int, float **, int, int, int, int *) =
		t->abi == ABI_V4 ? t->v4->getCollInfo : t->v5->getCollInfo;

	*nchannels = 0;
	if (!get)
		return 0;
	return get(ctx, NCCL_FUNC_ALLREDUCE, bytes, 1, (float **)(void *)table->t, MODEL_NALGOS,
	           MODEL_NPROTOS, reg_buff, nchannels);
}

int model_tuner_finalize(struct model_tuner *t, void *ctx)
{
	int (*fin)(void *) = t->abi == ABI_V4 ? t->v4->destroy : t->v5->finalize;

	return fin ? fin(ctx) : 0;
}

/* ---- the cache ---- */

struct model_tuner *model_tuner_cache_get(struct model_tuner_cache *c, const char *value,
                                          const char *nccl_version, char *why, size_t whylen)
{
	struct model_tuner_cache_entry *e;

	for (size_t i = 0; i < c->n; i++) {
		e = &c->entry[i];
		if (e->unset ? !value : (value && strcmp(e->value, value) == 0)) {
			snprintf(why, whylen, "%s", e->why);
			return e->tuner;
		}
	}
	if (c->n == MODEL_TUNER_CACHE_MAX) {
		fs_errf(why, whylen, "too many tuner plugins in one process (%d)",
		        MODEL_TUNER_CACHE_MAX);
		return NULL;
	}
	if (value && strlen(value) >= sizeof c->entry[0].value) {
		fs_errf(why, whylen, "NCCL_TUNER_PLUGIN is longer than %zu bytes",
		        sizeof c->entry[0].value - 1);
		return NULL;
	}
	e = &c->entry[c->n++];
	memset(e, 0, sizeof *e);
	e->unset = !value;
	snprintf(e->value, sizeof e->value, "%s", value ? value : "");
	e->tuner = model_tuner_open(value, nccl_version, e->why, sizeof e->why);
	snprintf(why, whylen, "%s", e->why);
	return e->tuner;
}

void model_tuner_cache_clear(struct model_tuner_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		model_tuner_close(c->entry[i].tuner);
	c->n = 0;
}
