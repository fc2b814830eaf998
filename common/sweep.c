/* sweep.c - the sweep file's strict reader (on common/jsonread's tables), the plugin's
 * control interface through dlopen, and the seeded interleaving of replays (see sweep.h),
 * for both probes. */
#include "sweep.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsutil.h"
#include "jsonread.h"

#define EXACT_MAX 9007199254740991.0   /* 2^53 - 1: the largest integer a double holds exactly */

/* ---- the file ---- */

/* What reading the choices needs: the workload (--bytes) and the plan they go into. */
struct sweep_read {
	const struct proto_workload *w;
	struct sweep_plan *plan;
};

/* An algorithm or protocol name (any case) into *dst; null leaves PROTO_NCCL_ANY. */
static int take_name(struct jr *r, const cJSON *v, int *dst, bool is_algo)
{
	char q[80];

	if (cJSON_IsNull(v))
		return 0;
	*dst = is_algo ? proto_nccl_algo_parse(v->valuestring)
	               : proto_nccl_proto_parse(v->valuestring);
	if (*dst < 0)
		return jr_fail(r, "%s is not one of %s", jr_quote(v->valuestring, q, sizeof q),
		               is_algo ? "Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT"
		                       : "LL, LL128, Simple");
	return 0;
}

static int take_algo(struct jr *r, const cJSON *v, void *dst)
{
	return take_name(r, v, &((struct sweep_choice *)dst)->algo, true);
}

static int take_proto(struct jr *r, const cJSON *v, void *dst)
{
	return take_name(r, v, &((struct sweep_choice *)dst)->proto, false);
}

#define C(f) offsetof(struct sweep_choice, f)

static const struct jr_field choice_fields[] = {
	{"bytes", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, EXACT_MAX, NULL, JR_SIZE, C(bytes),
	 0, NULL},
	{"algo", JR_STRING | JR_NULL, 0, 0, 0, NULL, JR_KEEP, 0, 0, take_algo},
	{"proto", JR_STRING | JR_NULL, 0, 0, 0, NULL, JR_KEEP, 0, 0, take_proto},
	{"ctas", JR_NUMBER | JR_NULL, JR_INTEGER, 0, SWEEP_MAX_CTAS, NULL, JR_INT, C(ctas), 0,
	 NULL},
	JR_END,
};

#undef C

/* choices[i]: its fields, then its size among --bytes (the first equal entry). */
static int take_choice(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct sweep_read *sr = ctx;
	struct sweep_choice *c = &sr->plan->choices[i];
	const struct proto_workload *w = sr->w;
	int rc;

	c->algo = PROTO_NCCL_ANY;
	c->proto = PROTO_NCCL_ANY;
	c->ctas = 0;
	if (jr_dispatch(r, v, choice_fields, false, c, NULL) < 0)
		return -1;
	c->size = w->nsizes;
	for (size_t s = w->nsizes; s-- > 0;)
		if (w->bytes[s] == c->bytes)
			c->size = s;
	if (c->size == w->nsizes) {
		if (jr_push_key(r, "bytes") < 0)
			return -1;
		rc = jr_fail(r, "%zu is not one of --bytes", c->bytes);
		jr_pop(r);
		return rc;
	}
	return 0;
}

static const char *const schema_words[] = {SWEEP_SCHEMA, NULL};

#define P(f) offsetof(struct sweep_plan, f)

static const struct jr_field plan_fields[] = {
	{"schema", JR_STRING, JR_REQUIRED, 0, 0, schema_words, JR_KEEP, 0, 0, NULL},
	{"rounds", JR_NUMBER, JR_INTEGER, 1, SWEEP_MAX_ROUNDS, NULL, JR_INT, P(rounds), 0, NULL},
	{"seed", JR_NUMBER, JR_INTEGER, 0, EXACT_MAX, NULL, JR_U64, P(seed), 0, NULL},
	{"choices", JR_ARRAY, JR_REQUIRED, 0, PROTO_MAX_CHOICES, NULL, JR_KEEP, 0, 0, NULL},
	JR_END,
};

#undef P

/* The checks across keys, after the table: rounds against --iters (the default too), then
 * each choice (it needs the workload, which the table's handlers do not see). */
static int plan_read(struct jr *r, const cJSON *root, struct sweep_read *sr)
{
	const cJSON *choices = cJSON_GetObjectItemCaseSensitive(root, "choices");
	int rc;

	if (jr_push_key(r, "rounds") < 0)
		return -1;
	rc = sr->plan->rounds > sr->w->iters
	     ? jr_fail(r, "%d is more than --iters %d (every round needs a timed replay of each "
	               "choice)", sr->plan->rounds, sr->w->iters) : 0;
	jr_pop(r);
	if (rc < 0 || jr_push_key(r, "choices") < 0)
		return -1;
	rc = jr_each(r, choices, PROTO_MAX_CHOICES, take_choice, sr);
	if (rc == 0 && !choices->child)
		rc = jr_fail(r, "empty");
	jr_pop(r);
	if (rc < 0)
		return -1;
	sr->plan->nchoices = (size_t)cJSON_GetArraySize(choices);
	return 0;
}

int sweep_parse(const char *text, size_t len, const char *file, const struct proto_workload *w,
                struct sweep_plan *out, char *err, size_t errlen)
{
	struct sweep_read sr = {w, out};
	cJSON *root = NULL;
	struct jr r;
	int rc = -1;

	memset(out, 0, sizeof *out);
	snprintf(out->file, sizeof out->file, "%s", file);
	out->rounds = SWEEP_DEFAULT_ROUNDS;
	out->seed = SWEEP_DEFAULT_SEED;
	jr_init(&r, out->file, err, errlen);
	/* the reader has always taken any C whitespace after the object (\v, \f too) */
	while (len > 0 && isspace((unsigned char)text[len - 1]))
		len--;
	root = jr_parse(&r, text, len);
	if (!root)
		goto out;
	if (jr_dispatch(&r, root, plan_fields, false, out, NULL) < 0 ||
	    plan_read(&r, root, &sr) < 0)
		goto out;
	rc = 0;   /* nchoices is set last: a refused file leaves it 0 */
out:
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
