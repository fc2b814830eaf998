/* profile.c - server profiles (profile.h). */
#include "run/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "jsonread.h"
#include "ncclvars.h"

#define PROFILE_FILE_MAX (64 * 1024)

static const char *const schemas[] = {PROFILE_SCHEMA, NULL};
static const char *const unless_words[] = {"symmetric", NULL};
static const char *const links_words[] = {"nvlink", "any", NULL};

struct var_read { const char *name, *value, *unless, *source; };

#define V(f) offsetof(struct var_read, f)
static const struct jr_field var_fields[] = {
	{"name", JR_STRING, JR_REQUIRED, 0, 63, NULL, JR_STR, V(name), 0, NULL},
	{"value", JR_STRING, JR_REQUIRED, 0, 63, NULL, JR_STR, V(value), 0, NULL},
	{"unless", JR_STRING | JR_NULL, 0, 0, 32, unless_words, JR_STR, V(unless), 0, NULL},
	{"source", JR_STRING, JR_REQUIRED, 0, PROFILE_TEXT_MAX - 1, NULL, JR_STR, V(source), 0,
	 NULL},
	JR_END,
};

bool profile_symmetric_var(const char *name)
{
	return strcmp(name, PROFILE_SYMM_CUMEM) == 0 || strcmp(name, PROFILE_SYMM_NVLS) == 0;
}

int profile_var_check(const char *name, const char *value, char *why, size_t whylen)
{
	const struct ncclvar *var;
	char *end;
	long n;

	if (strcmp(name, "CUDA_DEVICE_MAX_CONNECTIONS") == 0) {
		/* CUDA reads 1..32 (its programming guide, "CUDA Environment Variables") */
		n = strtol(value, &end, 10);
		if (end == value || *end || n < 1 || n > 32)
			return fs_errf(why, whylen, "'%s' is not an integer in [1, 32]", value);
		return 0;
	}
	if (ncclvars_check(name, value, why, whylen) != 0)
		return -1;
	var = ncclvars_find(name);
	if (!var)
		return fs_errf(why, whylen, "not a variable nccltune knows (common/ncclvars.c): a "
		               "server profile sets only those");
	if (var->role != NCCLVARS_TUNE && var->role != NCCLVARS_SETTING)
		return fs_errf(why, whylen, "a %s variable, which a server profile may not set (it "
		               "reaches every probe run)",
		               var->role == NCCLVARS_LOADER ? "loader" : "logging");
	return 0;
}

static int take_var(struct jr *r, const cJSON *elem, size_t i, void *ctx)
{
	struct profile *p = ctx;
	struct profile_var *v = &p->env[i];
	struct var_read in;
	char why[256];

	memset(&in, 0, sizeof in);
	if (jr_dispatch(r, elem, var_fields, false, &in, NULL) != 0)
		return -1;
	if (profile_var_check(in.name, in.value, why, sizeof why) != 0)
		return jr_fail(r, "%s: %s", in.name, why);
	if (profile_get(p, in.name))
		return jr_fail(r, "name: %s is set twice", in.name);
	snprintf(v->name, sizeof v->name, "%s", in.name);
	snprintf(v->value, sizeof v->value, "%s", in.value);
	snprintf(v->source, sizeof v->source, "%s", in.source);
	/* the session leaves exactly these out of a symmetric run (session/server.c), so a
	 * profile says so where it sets them, and says it of no other */
	if (in.unless && !profile_symmetric_var(in.name))
		return jr_fail(r, "unless: only %s and %s may be left unset when symmetric memory "
		               "is on, not %s", PROFILE_SYMM_CUMEM, PROFILE_SYMM_NVLS, in.name);
	if (!in.unless && profile_symmetric_var(in.name))
		return jr_fail(r, "%s: needs \"unless\": \"symmetric\" (a symmetric run always "
		               "leaves it unset)", in.name);
	v->unless_symmetric = in.unless != NULL;
	p->n = i + 1;
	return 0;
}

static int take_env(struct jr *r, const cJSON *v, void *dst)
{
	return jr_each(r, v, PROFILE_ENV_MAX, take_var, dst);
}

struct symm_read { const char *sw, *needs, *source; };
static const struct jr_field symm_fields[] = {
	{"switch", JR_STRING, JR_REQUIRED, 0, PROFILE_TEXT_MAX - 1, NULL, JR_STR,
	 offsetof(struct symm_read, sw), 0, NULL},
	{"needs", JR_STRING, JR_REQUIRED, 0, PROFILE_TEXT_MAX - 1, NULL, JR_STR,
	 offsetof(struct symm_read, needs), 0, NULL},
	{"source", JR_STRING, JR_REQUIRED, 0, PROFILE_TEXT_MAX - 1, NULL, JR_KEEP, 0, 0, NULL},
	JR_END,
};

static int take_symmetric(struct jr *r, const cJSON *v, void *dst)
{
	struct profile *p = dst;
	struct symm_read in;

	memset(&in, 0, sizeof in);
	if (jr_dispatch(r, v, symm_fields, false, &in, NULL) != 0)
		return -1;
	snprintf(p->symm_switch, sizeof p->symm_switch, "%s", in.sw);
	snprintf(p->symm_needs, sizeof p->symm_needs, "%s", in.needs);
	p->has_symmetric = true;
	return 0;
}

#define W(f) offsetof(struct profile, f)
static const struct jr_field window_fields[] = {
	{"min_bytes", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 0, 1e15, NULL, JR_U64, W(window_min), 0,
	 NULL},
	{"max_bytes", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, 1e15, NULL, JR_U64, W(window_max), 0,
	 NULL},
	{"links", JR_STRING, JR_REQUIRED, 0, 15, links_words, JR_STRBUF, W(window_links),
	 sizeof ((struct profile *)0)->window_links, NULL},
	{"source", JR_STRING, JR_REQUIRED, 0, PROFILE_TEXT_MAX - 1, NULL, JR_STRBUF,
	 W(window_source), PROFILE_TEXT_MAX, NULL},
	JR_END,
};

static int take_window(struct jr *r, const cJSON *v, void *dst)
{
	struct profile *p = dst;

	if (jr_dispatch(r, v, window_fields, false, p, NULL) != 0)
		return -1;
	if (p->window_min > p->window_max)
		return jr_fail(r, "min_bytes is above max_bytes");
	p->has_window = true;
	return 0;
}

static const struct jr_field fields[] = {
	{"schema", JR_STRING, JR_REQUIRED, 0, 64, schemas, JR_KEEP, 0, 0, NULL},
	{"name", JR_STRING, JR_REQUIRED, 0, 31, NULL, JR_STRBUF, W(name), 32, NULL},
	{"description", JR_STRING, 0, 0, 1024, NULL, JR_KEEP, 0, 0, NULL},
	/* which release of the framework, and which file, its settings were read from: a
	 * profile without it cannot say whether it still matches the server */
	{"checked_against", JR_STRING, JR_REQUIRED, 0, PROFILE_TEXT_MAX - 1, NULL, JR_STRBUF,
	 W(checked_against), PROFILE_TEXT_MAX, NULL},
	{"env", JR_ARRAY, JR_REQUIRED, 0, PROFILE_ENV_MAX, NULL, JR_KEEP, 0, 0, take_env},
	{"symmetric", JR_OBJECT | JR_NULL, 0, 0, 0, NULL, JR_KEEP, 0, 0, take_symmetric},
	{"custom_allreduce", JR_OBJECT | JR_NULL, 0, 0, 0, NULL, JR_KEEP, 0, 0, take_window},
	JR_END,
};

int profile_parse(const char *text, size_t len, const char *origin, struct profile *p,
                  char *err, size_t errlen)
{
	struct jr r;
	cJSON *doc;
	int rc;

	memset(p, 0, sizeof *p);
	jr_init(&r, origin, err, errlen);
	r.max_bytes = PROFILE_FILE_MAX;
	doc = jr_parse(&r, text, len);
	if (!doc)
		return -1;
	rc = cJSON_IsObject(doc) ? jr_dispatch(&r, doc, fields, false, p, NULL)
	                         : jr_fail(&r, "not a JSON object");
	cJSON_Delete(doc);
	return rc;
}

int profile_load(const char *like, struct profile *p, char *err, size_t errlen)
{
	char names[256] = "", e[1024];
	size_t len = 0, nl = 0;
	char *text;
	int rc;

	if (strchr(like, '/') || (strlen(like) > 5 && !strcmp(like + strlen(like) - 5, ".json"))) {
		/* a regular file only: a FIFO would block the session before its first run */
		text = fs_read_regular(like, PROFILE_FILE_MAX, &len, e, sizeof e);
		if (!text) {
			snprintf(err, errlen, "--like: %s", e);   /* e names the file */
			return -1;
		}
		rc = profile_parse(text, len, like, p, err, errlen);
		free(text);
		return rc;
	}
	for (const struct profile_builtin *b = profiles_builtin; b->name; b++) {
		if (strcmp(b->name, like) == 0)
			return profile_parse(b->text, b->len, b->name, p, err, errlen);
		nl += (size_t)snprintf(names + nl, nl < sizeof names ? sizeof names - nl : 0, "%s%s",
		                       nl ? ", " : "", b->name);
	}
	snprintf(err, errlen, "--like %s: no such profile (built in: %s; or a FILE.json)", like,
	         names);
	return -1;
}

const char *profile_get(const struct profile *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->env[i].name, name) == 0)
			return p->env[i].value;
	return NULL;
}
