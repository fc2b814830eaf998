/* sweep.c - the sweep file's strict reader, the plugin's control interface through
 * dlopen, and the seeded interleaving of replays (see sweep.h), for both probes. */
#include "sweep.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsutil.h"

#define SWEEP_MAX_SEED 9007199254740991.0   /* 2^53 - 1: exact in a JSON number */

/* ---- the file ---- */

/* Only the keys in `allowed` (NULL-terminated), none twice. */
static int keys_known(const cJSON *o, const char *const *allowed, const char *file,
                      const char *where, char *err, size_t errlen)
{
	for (const cJSON *a = o->child; a; a = a->next) {
		bool ok = false;

		for (size_t i = 0; allowed[i]; i++)
			ok = ok || strcmp(a->string, allowed[i]) == 0;
		if (!ok)
			return fs_errf(err, errlen, "%s: %s%s%s: unknown key", file, where,
			               *where ? "." : "", a->string);
		for (const cJSON *b = a->next; b; b = b->next)
			if (strcmp(a->string, b->string) == 0)
				return fs_errf(err, errlen, "%s: %s%s%s: appears twice", file, where,
				               *where ? "." : "", a->string);
	}
	return 0;
}

/* An integral number in [lo, hi] under `key` (named `name` in messages). */
static int int_value(const cJSON *it, const char *file, const char *name, double lo, double hi,
                     double *out, char *err, size_t errlen)
{
	if (!cJSON_IsNumber(it))
		return fs_errf(err, errlen, "%s: %s: not a number", file, name);
	if (!isfinite(it->valuedouble) || it->valuedouble != floor(it->valuedouble))
		return fs_errf(err, errlen, "%s: %s: %g is not an integer", file, name,
		               it->valuedouble);
	if (it->valuedouble < lo || it->valuedouble > hi)
		return fs_errf(err, errlen, "%s: %s: %.0f is out of range %.0f..%.0f", file, name,
		               it->valuedouble, lo, hi);
	*out = it->valuedouble;
	return 0;
}

/* An optional algorithm or protocol name (any case) or null: PROTO_NCCL_ANY. */
static int name_value(const cJSON *it, const char *file, const char *name, bool is_algo,
                      int *out, char *err, size_t errlen)
{
	*out = PROTO_NCCL_ANY;
	if (!it || cJSON_IsNull(it))
		return 0;
	if (!cJSON_IsString(it))
		return fs_errf(err, errlen, "%s: %s: neither a name nor null", file, name);
	*out = is_algo ? proto_nccl_algo_parse(it->valuestring)
	               : proto_nccl_proto_parse(it->valuestring);
	if (*out < 0)
		return fs_errf(err, errlen, "%s: %s: '%.40s' is not one of %s", file, name,
		               it->valuestring, is_algo ? "Tree, Ring, CollNetDirect, CollNetChain, "
		               "NVLS, NVLSTree, PAT" : "LL, LL128, Simple");
	return 0;
}

static int parse_choice(const cJSON *o, size_t i, const char *file,
                        const struct proto_workload *w, struct sweep_choice *c, char *err,
                        size_t errlen)
{
	static const char *const keys[] = {"bytes", "algo", "proto", "ctas", NULL};
	char where[48], name[64];
	const cJSON *it;
	double v;

	snprintf(where, sizeof where, "choices[%zu]", i);
	if (!cJSON_IsObject(o))
		return fs_errf(err, errlen, "%s: %s: not an object", file, where);
	if (keys_known(o, keys, file, where, err, errlen) != 0)
		return -1;
	snprintf(name, sizeof name, "%s.bytes", where);
	it = cJSON_GetObjectItemCaseSensitive(o, "bytes");
	if (!it)
		return fs_errf(err, errlen, "%s: %s: missing", file, name);
	if (int_value(it, file, name, 1, 9007199254740991.0, &v, err, errlen) != 0)
		return -1;
	c->bytes = (size_t)v;
	c->size = w->nsizes;
	for (size_t s = w->nsizes; s-- > 0;)
		if (w->bytes[s] == c->bytes)
			c->size = s;
	if (c->size == w->nsizes)
		return fs_errf(err, errlen, "%s: %s: %zu is not one of --bytes", file, name, c->bytes);
	snprintf(name, sizeof name, "%s.algo", where);
	if (name_value(cJSON_GetObjectItemCaseSensitive(o, "algo"), file, name, true, &c->algo,
	               err, errlen) != 0)
		return -1;
	snprintf(name, sizeof name, "%s.proto", where);
	if (name_value(cJSON_GetObjectItemCaseSensitive(o, "proto"), file, name, false, &c->proto,
	               err, errlen) != 0)
		return -1;
	snprintf(name, sizeof name, "%s.ctas", where);
	it = cJSON_GetObjectItemCaseSensitive(o, "ctas");
	c->ctas = 0;
	if (it && !cJSON_IsNull(it)) {
		if (int_value(it, file, name, 0, SWEEP_MAX_CTAS, &v, err, errlen) != 0)
			return -1;
		c->ctas = (int)v;
	}
	return 0;
}

int sweep_parse(const char *text, size_t len, const char *file, const struct proto_workload *w,
                struct sweep_plan *out, char *err, size_t errlen)
{
	static const char *const keys[] = {"schema", "rounds", "seed", "choices", NULL};
	cJSON *root = NULL;
	const cJSON *it, *c;
	const char *end = NULL;
	double v;
	size_t n = 0;
	int rc = -1;

	memset(out, 0, sizeof *out);
	snprintf(out->file, sizeof out->file, "%s", file);
	out->rounds = SWEEP_DEFAULT_ROUNDS;
	out->seed = SWEEP_DEFAULT_SEED;
	if (memchr(text, '\0', len)) {
		fs_errf(err, errlen, "%s: contains a NUL byte", file);
		goto out;
	}
	root = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (!root) {
		const char *at = cJSON_GetErrorPtr();

		fs_errf(err, errlen, "%s: not JSON (parse error at byte %zu)", file,
		        at && at >= text && at <= text + len ? (size_t)(at - text) : (size_t)0);
		goto out;
	}
	for (; end && end < text + len; end++) {
		if (!isspace((unsigned char)*end)) {
			fs_errf(err, errlen, "%s: text after the JSON object (byte %zu)", file,
			        (size_t)(end - text));
			goto out;
		}
	}
	if (!cJSON_IsObject(root)) {
		fs_errf(err, errlen, "%s: not a JSON object", file);
		goto out;
	}
	if (keys_known(root, keys, file, "", err, errlen) != 0)
		goto out;
	it = cJSON_GetObjectItemCaseSensitive(root, "schema");
	if (!cJSON_IsString(it) || strcmp(it->valuestring, SWEEP_SCHEMA) != 0) {
		fs_errf(err, errlen, "%s: schema: %s, want \"%s\"", file,
		        !it ? "missing" : cJSON_IsString(it) ? "unknown" : "not a string", SWEEP_SCHEMA);
		goto out;
	}
	it = cJSON_GetObjectItemCaseSensitive(root, "rounds");
	if (it) {
		if (int_value(it, file, "rounds", 1, SWEEP_MAX_ROUNDS, &v, err, errlen) != 0)
			goto out;
		out->rounds = (int)v;
	}
	if (out->rounds > w->iters) {
		fs_errf(err, errlen, "%s: rounds: %d is more than --iters %d (every round needs a "
		        "timed replay of each choice)", file, out->rounds, w->iters);
		goto out;
	}
	it = cJSON_GetObjectItemCaseSensitive(root, "seed");
	if (it) {
		if (int_value(it, file, "seed", 0, SWEEP_MAX_SEED, &v, err, errlen) != 0)
			goto out;
		out->seed = (uint64_t)v;
	}
	it = cJSON_GetObjectItemCaseSensitive(root, "choices");
	if (!it) {
		fs_errf(err, errlen, "%s: choices: missing", file);
		goto out;
	}
	if (!cJSON_IsArray(it)) {
		fs_errf(err, errlen, "%s: choices: not an array", file);
		goto out;
	}
	cJSON_ArrayForEach(c, it) {
		if (n == PROTO_MAX_CHOICES) {
			fs_errf(err, errlen, "%s: choices: more than %d", file, PROTO_MAX_CHOICES);
			goto out;
		}
		if (parse_choice(c, n, file, w, &out->choices[n], err, errlen) != 0)
			goto out;
		n++;
	}
	if (n == 0) {
		fs_errf(err, errlen, "%s: choices: empty", file);
		goto out;
	}
	out->nchoices = n;
	rc = 0;
out:
	if (rc != 0)
		out->nchoices = 0;
	cJSON_Delete(root);
	return rc;
}

int sweep_load(const char *file, const struct proto_workload *w, struct sweep_plan *out,
               char *err, size_t errlen)
{
	struct stat st;
	char *text;
	size_t len = 0;
	int rc;

	memset(out, 0, sizeof *out);
	if (stat(file, &st) != 0)
		return fs_errf(err, errlen, "--sweep: %s: %s", file, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return fs_errf(err, errlen, "--sweep: %s: not a regular file", file);
	text = fs_read_file(file, SWEEP_FILE_MAX, &len, err, errlen);
	if (!text)
		return -1;
	rc = sweep_parse(text, len, file, w, out, err, errlen);
	free(text);
	return rc;
}

void sweep_choice_text(const struct sweep_choice *c, char *buf, size_t len)
{
	const char *a = proto_nccl_algo_name(c->algo), *p = proto_nccl_proto_name(c->proto);

	if (c->ctas > 0)
		snprintf(buf, len, "%s/%s, %d CTA%s", a ? a : "*", p ? p : "*", c->ctas,
		         c->ctas == 1 ? "" : "s");
	else
		snprintf(buf, len, "%s/%s, NCCL's CTAs", a ? a : "*", p ? p : "*");
}

/* ---- the plugin ---- */

#define NEEDS "--sweep needs nccltune's tuner plugin in NCCL_TUNER_PLUGIN"

int sweep_plugin_open(const char *path, struct sweep_plugin *p, char *err, size_t errlen)
{
	int (*version)(void);
	const char *why;

	memset(p, 0, sizeof *p);
	if (!path || !*path)
		return fs_errf(err, errlen, NEEDS ": NCCL_TUNER_PLUGIN is not set (set it to the "
		               "absolute path of libnccl-tuner-nccltune.so)");
	if (!strchr(path, '/'))
		return fs_errf(err, errlen, NEEDS ": '%s' is a name, not a path (set the absolute "
		               "path of libnccl-tuner-nccltune.so, so that the probe holds the file "
		               "NCCL loads)", path);
	dlerror();
	p->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!p->handle) {
		why = dlerror();
		return fs_errf(err, errlen, NEEDS ": cannot load '%s': %s", path, why ? why : "?");
	}
	*(void **)&version = dlsym(p->handle, "nccltune_tuner_control_version");
	if (!version) {
		sweep_plugin_close(p);
		return fs_errf(err, errlen, NEEDS ": '%s' has no nccltune_tuner_control_version "
		               "(not nccltune's plugin)", path);
	}
	if (version() != NCCLTUNE_TUNER_CONTROL_VERSION) {
		int v = version();

		sweep_plugin_close(p);
		return fs_errf(err, errlen, NEEDS ": '%s' answers control version %d, this probe "
		               "speaks %d", path, v, NCCLTUNE_TUNER_CONTROL_VERSION);
	}
	*(void **)&p->force = dlsym(p->handle, "nccltune_tuner_force");
	*(void **)&p->record = dlsym(p->handle, "nccltune_tuner_record");
	*(void **)&p->decisions = dlsym(p->handle, "nccltune_tuner_decisions");
	if (!p->force || !p->record || !p->decisions) {
		sweep_plugin_close(p);
		return fs_errf(err, errlen, NEEDS ": '%s' lacks part of the control interface "
		               "(force, record, decisions)", path);
	}
	return 0;
}

void sweep_plugin_close(struct sweep_plugin *p)
{
	if (!p)
		return;
	if (p->handle)
		dlclose(p->handle);
	memset(p, 0, sizeof *p);
}

int sweep_plugin_force(const struct sweep_plugin *p, const struct sweep_choice *c)
{
	struct nccltune_tuner_force f;

	if (!c)
		return p->force(NULL);
	memset(&f, 0, sizeof f);
	f.coll = NCCLTUNE_TUNER_COLL_ALLREDUCE;
	f.algo = c->algo;
	f.proto = c->proto;
	f.nchannels = c->ctas;
	f.chunk = 0;
	return p->force(&f);
}

void sweep_plugin_drain(const struct sweep_plugin *p, uint64_t bytes, struct sweep_verdict *v)
{
	struct nccltune_tuner_decision d[64];
	size_t n;

	while ((n = p->decisions(d, sizeof d / sizeof d[0])) > 0) {
		for (size_t i = 0; i < n; i++) {
			if (d[i].coll == NCCLTUNE_TUNER_COLL_ALLREDUCE && d[i].bytes == bytes &&
			    d[i].rule == -1) {
				v->forced++;
				if (d[i].status == NCCLTUNE_TUNER_IGNORED)
					v->ignored++;
			} else {
				v->other++;
			}
		}
	}
}

/* ---- the interleaving ---- */

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Uniform in 0..bound-1 (bound >= 1): reject the top sliver that would bias the modulo. */
static uint64_t below(uint64_t *state, uint64_t bound)
{
	uint64_t limit = UINT64_MAX - UINT64_MAX % bound, x;

	do
		x = splitmix64(state);
	while (x >= limit);
	return x % bound;
}

void sweep_round_order(uint64_t seed, int round, size_t n, size_t *order)
{
	uint64_t state = seed + (uint64_t)(round + 1) * 0x9E3779B97F4A7C15ull;

	for (size_t i = 0; i < n; i++)
		order[i] = i;
	for (size_t i = n; i-- > 1;) {
		size_t j = (size_t)below(&state, (uint64_t)i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
}

int sweep_round_replays(int iters, int rounds, int round)
{
	if (rounds < 1 || round < 0 || round >= rounds)
		return 0;
	return iters / rounds + (round < iters % rounds ? 1 : 0);
}

/* Set up round s->round's order. */
static void start_round(struct sweep_schedule *s)
{
	if (s->shuffle)
		sweep_round_order(s->seed, s->round, s->ncases, s->order);
	else
		for (size_t i = 0; i < s->ncases; i++)
			s->order[i] = i;
	s->pos = 0;
	s->k = 0;
}

int sweep_schedule_init(struct sweep_schedule *s, size_t ncases, const bool *keep, int iters,
                        int rounds, uint64_t seed, bool shuffle)
{
	memset(s, 0, sizeof *s);
	s->order = calloc(ncases ? ncases : 1, sizeof *s->order);
	if (!s->order)
		return -1;
	s->ncases = ncases;
	s->keep = keep;
	s->iters = iters;
	s->rounds = rounds < 1 ? 1 : rounds;
	s->seed = seed;
	s->shuffle = shuffle;
	start_round(s);
	return 0;
}

bool sweep_schedule_next(struct sweep_schedule *s, struct sweep_replay *out)
{
	while (s->round < s->rounds) {
		int share = sweep_round_replays(s->iters, s->rounds, s->round);

		if (s->pos < s->ncases && s->keep[s->order[s->pos]] && s->k < share) {
			out->case_idx = (int)s->order[s->pos];
			out->sample = s->base + s->k;
			s->k++;
			return true;
		}
		if (s->pos < s->ncases) {
			s->pos++;
			s->k = 0;
			continue;
		}
		s->base += share;
		s->round++;
		if (s->round < s->rounds)
			start_round(s);
	}
	return false;
}

void sweep_schedule_free(struct sweep_schedule *s)
{
	free(s->order);
	s->order = NULL;
}
