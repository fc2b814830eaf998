/* env.c - building a probe's environment: pins, the unpinned space, candidate values. */
#include "run/env.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "ncclvars.h"

/* Length of the NAME part of a NAME=VALUE entry (the whole string if there is no '='). */
static size_t name_len(const char *entry)
{
	const char *eq = strchr(entry, '=');

	return eq ? (size_t)(eq - entry) : strlen(entry);
}

static bool searched_name(const space *sp, const char *name, size_t len)
{
	for (size_t d = 0; d < space_dims(sp); d++) {
		const char *n = space_name(sp, d);

		if (strlen(n) == len && strncmp(n, name, len) == 0)
			return true;
	}
	return false;
}

void env_pins_free(struct env_pins *pins)
{
	if (!pins)
		return;
	for (size_t i = 0; i < pins->n; i++) {
		free(pins->v[i].name);
		free(pins->v[i].value);
	}
	free(pins->v);
	pins->v = NULL;
	pins->n = 0;
}

static int pins_add(struct env_pins *pins, const char *name, size_t nlen, const char *value,
                    bool searched)
{
	struct env_pin *nv = realloc(pins->v, (pins->n + 1) * sizeof *nv);

	if (!nv)
		return -1;
	pins->v = nv;
	nv[pins->n].name = strndup(name, nlen);
	nv[pins->n].value = strdup(value);
	nv[pins->n].searched = searched;
	if (!nv[pins->n].name || !nv[pins->n].value) {
		free(nv[pins->n].name);
		free(nv[pins->n].value);
		return -1;
	}
	pins->n++;
	return 0;
}

int env_pins_collect(char *const *user_env, const space *sp, struct env_pins *out,
                     char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; user_env && user_env[i]; i++) {
		const char *e = user_env[i];
		size_t len = name_len(e);
		char name[256];

		if (e[len] != '=' || len == 0 || len >= sizeof name)
			continue;
		memcpy(name, e, len);
		name[len] = '\0';
		if (!space_mentions(sp, name) || env_pins_get(out, name))
			continue;
		if (pins_add(out, name, len, e + len + 1, searched_name(sp, name, len)) != 0) {
			env_pins_free(out);
			return fs_errf(err, errlen, "out of memory collecting pinned variables");
		}
	}
	return 0;
}

int env_pins_add(struct env_pins *pins, const char *name, const char *value)
{
	if (env_pins_get(pins, name))
		return 0;
	return pins_add(pins, name, strlen(name), value, false);
}

const char *env_pins_get(const struct env_pins *pins, const char *name)
{
	for (size_t i = 0; pins && i < pins->n; i++)
		if (strcmp(pins->v[i].name, name) == 0)
			return pins->v[i].value;
	return NULL;
}

cJSON *env_pins_to_json(const struct env_pins *pins)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	for (size_t i = 0; i < pins->n; i++) {
		if (!cJSON_AddStringToObject(o, pins->v[i].name, pins->v[i].value)) {
			cJSON_Delete(o);
			return NULL;
		}
	}
	return o;
}

int env_pins_from_json(const cJSON *obj, const char *origin, struct env_pins *out,
                       char *err, size_t errlen)
{
	const cJSON *it;

	memset(out, 0, sizeof *out);
	if (!cJSON_IsObject(obj))
		return fs_errf(err, errlen, "%s: must be an object", origin);
	cJSON_ArrayForEach(it, obj) {
		/* A pin reaches the environment of every probe run: only NCCL's own variables
		 * may be pinned (a journal that pins LD_PRELOAD is refused). */
		char why[128];

		if (ncclvars_name_check(it->string, why, sizeof why) != 0) {
			env_pins_free(out);
			return fs_errf(err, errlen, "%s.%.80s: %s; only NCCL variables can be pinned, "
			               "and a pin reaches every probe run", origin, it->string, why);
		}
		if (!cJSON_IsString(it)) {
			env_pins_free(out);
			return fs_errf(err, errlen, "%s.%s: must be a string", origin, it->string);
		}
		/* The recorded space no longer has the pinned searched dimensions, so whether a
		 * pin was searched is not recoverable here; it only matters for reporting. */
		if (pins_add(out, it->string, strlen(it->string), it->valuestring, false) != 0) {
			env_pins_free(out);
			return fs_errf(err, errlen, "out of memory");
		}
	}
	return 0;
}

/* Is s a plain decimal number (what a constraint may compare with)? */
static bool is_number(const char *s)
{
	char *end;

	if (!*s || isspace((unsigned char)*s))
		return false;
	errno = 0;
	(void)strtod(s, &end);
	return errno == 0 && *end == '\0';
}

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Rewrite constraint `c` with every whole-word occurrence of `name` replaced by
 * `value`. Returns a malloc'd string or NULL when out of memory. */
static char *substitute(const char *c, const char *name, const char *value)
{
	size_t nlen = strlen(name), vlen = strlen(value), cap = strlen(c) * (vlen + 1) + 1;
	char *out = malloc(cap), *o = out;
	const char *p = c;

	if (!out)
		return NULL;
	while (*p) {
		if (strncmp(p, name, nlen) == 0 && (p == c || !ident_char(p[-1])) &&
		    !ident_char(p[nlen])) {
			memcpy(o, value, vlen);
			o += vlen;
			p += nlen;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	return out;
}

static bool mentions_word(const char *c, const char *name)
{
	size_t nlen = strlen(name);

	for (const char *p = strstr(c, name); p; p = strstr(p + 1, name))
		if ((p == c || !ident_char(p[-1])) && !ident_char(p[nlen]))
			return true;
	return false;
}

/* Does the constraint still compare at least one parameter? */
static bool names_a_param(const char *c, const cJSON *params)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, params)
		if (mentions_word(c, it->string))
			return true;
	return false;
}

int env_space_unpin(const space *sp, const struct env_pins *pins, space **out,
                    char *err, size_t errlen)
{
	char *text = NULL, *newtext = NULL;
	cJSON *root = NULL, *params, *cons, *newcons = NULL;
	int rc = -1;
	char perr[512];

	*out = NULL;
	text = space_to_json(sp);
	if (!text) {
		fs_errf(err, errlen, "out of memory");
		goto out;
	}
	root = cJSON_Parse(text);
	params = root ? cJSON_GetObjectItemCaseSensitive(root, "params") : NULL;
	if (!params) {
		fs_errf(err, errlen, "internal error: the space's JSON has no params");
		goto out;
	}
	cons = cJSON_GetObjectItemCaseSensitive(root, "constraints");
	for (size_t i = 0; i < pins->n; i++)
		if (cJSON_GetObjectItemCaseSensitive(params, pins->v[i].name))
			cJSON_DeleteItemFromObjectCaseSensitive(params, pins->v[i].name);
	if (cJSON_GetArraySize(params) == 0) {
		fs_errf(err, errlen, "every searched variable is set in your environment (pinned): "
		        "nothing left to tune; unset some of them or pass a --space");
		goto out;
	}
	if (cJSON_IsArray(cons)) {
		const cJSON *c;

		newcons = cJSON_CreateArray();
		if (!newcons) {
			fs_errf(err, errlen, "out of memory");
			goto out;
		}
		cJSON_ArrayForEach(c, cons) {
			char *s;
			bool keep = true;

			if (!cJSON_IsString(c))
				continue;
			s = strdup(c->valuestring);
			for (size_t i = 0; s && i < pins->n; i++) {
				char *t;

				if (!mentions_word(s, pins->v[i].name))
					continue;
				if (!is_number(pins->v[i].value)) {
					keep = false;
					break;
				}
				t = substitute(s, pins->v[i].name, pins->v[i].value);
				free(s);
				s = t;
			}
			if (!s) {
				fs_errf(err, errlen, "out of memory");
				goto out;
			}
			if (keep && names_a_param(s, params)) {
				cJSON *str = cJSON_CreateString(s);

				if (!str || !cJSON_AddItemToArray(newcons, str)) {
					cJSON_Delete(str);
					free(s);
					fs_errf(err, errlen, "out of memory");
					goto out;
				}
			}
			free(s);
		}
		cJSON_ReplaceItemInObjectCaseSensitive(root, "constraints", newcons);
		newcons = NULL;
	}
	newtext = cJSON_PrintUnformatted(root);
	if (!newtext) {
		fs_errf(err, errlen, "out of memory");
		goto out;
	}
	if (space_parse(newtext, strlen(newtext), "space without pinned variables", out, perr,
	                sizeof perr) != 0) {
		fs_errf(err, errlen, "%s", perr);
		goto out;
	}
	rc = 0;
out:
	cJSON_Delete(newcons);
	cJSON_Delete(root);
	free(newtext);
	free(text);
	return rc;
}

void env_free(char **env)
{
	if (!env)
		return;
	for (size_t i = 0; env[i]; i++)
		free(env[i]);
	free(env);
}

/* Append "name=value" to env (which has room). Returns 0 or -1 (out of memory). */
static int env_push(char **env, size_t *n, const char *name, const char *value)
{
	size_t len = strlen(name) + strlen(value) + 2;
	char *e = malloc(len);

	if (!e)
		return -1;
	snprintf(e, len, "%s=%s", name, value);
	env[(*n)++] = e;
	env[*n] = NULL;
	return 0;
}

char **env_build(char *const *user_env, const space *sp, const struct env_pins *pins,
                 const struct point *p, char *err, size_t errlen)
{
	size_t nuser = 0, n = 0, cap;
	char **env;

	while (user_env && user_env[nuser])
		nuser++;
	cap = nuser + pins->n + space_fixed_count(sp) + space_dims(sp) + 1;
	env = calloc(cap, sizeof *env);
	if (!env) {
		fs_errf(err, errlen, "out of memory building the probe's environment");
		return NULL;
	}
	for (size_t i = 0; i < nuser; i++) {
		const char *e = user_env[i];
		size_t len = name_len(e);
		char name[256];

		if (len > 0 && len < sizeof name) {
			memcpy(name, e, len);
			name[len] = '\0';
			/* The space and the pins decide these; everything else is the user's. */
			if (space_mentions(sp, name) || env_pins_get(pins, name))
				continue;
		}
		env[n] = strdup(e);
		if (!env[n])
			goto oom;
		env[++n] = NULL;
	}
	for (size_t i = 0; i < pins->n; i++)
		if (env_push(env, &n, pins->v[i].name, pins->v[i].value) != 0)
			goto oom;
	for (size_t i = 0; i < space_fixed_count(sp); i++) {
		if (env_pins_get(pins, space_fixed_name(sp, i)))
			continue;
		if (env_push(env, &n, space_fixed_name(sp, i), space_fixed_value(sp, i)) != 0)
			goto oom;
	}
	for (size_t d = 0; p && d < space_dims(sp); d++) {
		const char *v = space_level_text(sp, d, p->lv[d]);

		/* per-size choices reach NCCL through the plugin's table, a server option
		 * through the probe's options (the session), never the environment */
		if (!v || space_rule_of(sp, d, NULL) != SPACE_RULE_NONE || space_is_server(sp, d) ||
		    env_pins_get(pins, space_name(sp, d)))
			continue;
		if (env_push(env, &n, space_name(sp, d), v) != 0)
			goto oom;
	}
	return env;
oom:
	env_free(env);
	fs_errf(err, errlen, "out of memory building the probe's environment");
	return NULL;
}

int env_set(char ***env, const char *name, const char *value)
{
	size_t nlen = strlen(name), n = 0, keep = 0, len = nlen + strlen(value) + 2;
	char *item = malloc(len), **e = *env, **grown;

	if (!item)
		return -1;
	snprintf(item, len, "%s=%s", name, value);
	while (e[n])
		n++;
	grown = realloc(e, (n + 2) * sizeof *grown);
	if (!grown) {
		free(item);
		return -1;
	}
	*env = grown;
	for (size_t i = 0; i < n; i++) {
		if (strncmp(grown[i], name, nlen) == 0 && grown[i][nlen] == '=')
			free(grown[i]);
		else
			grown[keep++] = grown[i];
	}
	grown[keep] = item;
	grown[keep + 1] = NULL;
	return 0;
}

void env_unset(char **env, const char *name)
{
	size_t nlen = strlen(name), keep = 0;

	for (size_t i = 0; env[i]; i++) {
		if (strncmp(env[i], name, nlen) == 0 && env[i][nlen] == '=')
			free(env[i]);
		else
			env[keep++] = env[i];
	}
	env[keep] = NULL;
}

int env_add_run(char ***env, size_t run)
{
	char num[32];

	snprintf(num, sizeof num, "%zu", run);
	return env_set(env, "NCCLTUNE_RUN", num);
}

cJSON *env_point_to_json(const space *sp, const struct point *p)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	for (size_t d = 0; p && d < space_dims(sp); d++) {
		const char *v = space_level_text(sp, d, p->lv[d]);

		if (space_rule_of(sp, d, NULL) != SPACE_RULE_NONE || space_is_server(sp, d))
			continue;   /* best.rules and best.server, not the environment */
		if (v && !cJSON_AddStringToObject(o, space_name(sp, d), v)) {
			cJSON_Delete(o);
			return NULL;
		}
	}
	return o;
}

int env_point_from_json(const space *sp, const cJSON *env, struct point *p)
{
	const cJSON *it;

	memset(p, 0, sizeof *p);
	if (!cJSON_IsObject(env))
		return -1;
	cJSON_ArrayForEach(it, env)
		if (!cJSON_IsString(it) || !searched_name(sp, it->string, strlen(it->string)))
			return -1;
	for (size_t d = 0; d < space_dims(sp); d++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(env, space_name(sp, d));
		bool found = false;

		/* an environment never names a per-size choice (NCCL's) nor a server option
		 * (off) */
		if (space_rule_of(sp, d, NULL) != SPACE_RULE_NONE || space_is_server(sp, d))
			v = NULL;

		for (size_t l = 0; l < space_levels(sp, d) && !found; l++) {
			const char *t = space_level_text(sp, d, l);

			if ((!v && !t) || (v && t && strcmp(v->valuestring, t) == 0)) {
				p->lv[d] = (uint32_t)l;
				found = true;
			}
		}
		if (!found)
			return -1;
	}
	return 0;
}

cJSON *env_point_levels_to_json(const space *sp, const struct point *p)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t d = 0; a && d < space_dims(sp); d++) {
		cJSON *n = cJSON_CreateNumber(p->lv[d]);

		if (!n || !cJSON_AddItemToArray(a, n)) {
			cJSON_Delete(n);
			cJSON_Delete(a);
			return NULL;
		}
	}
	return a;
}

int env_point_levels_from_json(const space *sp, const cJSON *arr, struct point *p)
{
	const cJSON *it;
	size_t d = 0;

	memset(p, 0, sizeof *p);
	if (!cJSON_IsArray(arr) || (size_t)cJSON_GetArraySize(arr) != space_dims(sp))
		return -1;
	cJSON_ArrayForEach(it, arr) {
		double v;

		if (!cJSON_IsNumber(it))
			return -1;
		v = it->valuedouble;
		if (v < 0 || v != (double)(uint32_t)v || (size_t)v >= space_levels(sp, d))
			return -1;
		p->lv[d++] = (uint32_t)v;
	}
	return 0;
}
