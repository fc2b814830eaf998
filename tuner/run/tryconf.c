/* tryconf.c - the user's own configurations (--try, --try-file): parsing, validation,
 * placing them in the space, and the environment they run with. */
#include "run/tryconf.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fsutil.h"
#include "ncclvars.h"

#define NVLS_VAR "NCCL_NVLS_ENABLE"

void tryconf_clear(struct tryconf *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->name[i]);
		free(t->value[i]);
	}
	memset(t, 0, sizeof *t);
}

/* Validate and append NAME=VALUE. Returns 0 or -1 with a message naming the item. */
static int add_var(struct tryconf *t, const char *name, const char *value, const char *origin,
                   const char *item, char *err, size_t errlen)
{
	char why[512];

	if (ncclvars_name_check(name, why, sizeof why) != 0)
		return fs_errf(err, errlen, "%s: '%s': %s: %s", origin, item, name, why);
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->name[i], name) == 0)
			return fs_errf(err, errlen, "%s: '%s': %s is set twice", origin, item, name);
	if (ncclvars_check(name, value, why, sizeof why) != 0)
		return fs_errf(err, errlen, "%s: '%s': %s", origin, item, why);
	if (ncclvars_loader_refusal(name))
		return fs_errf(err, errlen, "%s: '%s': %s: %s; refused before any run", origin, item,
		               name, ncclvars_loader_refusal(name));
	if (t->n == TRYCONF_VARS)
		return fs_errf(err, errlen, "%s: more than %d variables", origin, TRYCONF_VARS);
	t->name[t->n] = strdup(name);
	t->value[t->n] = strdup(value);
	if (!t->name[t->n] || !t->value[t->n]) {
		free(t->name[t->n]);
		free(t->value[t->n]);
		return fs_errf(err, errlen, "out of memory");
	}
	t->n++;
	return 0;
}

int tryconf_parse(const char *text, const char *origin, struct tryconf *t, char *err,
                  size_t errlen)
{
	const char *p = text ? text : "";
	char item[512], whole[512];

	memset(t, 0, sizeof *t);
	snprintf(t->origin, sizeof t->origin, "%s", origin);
	for (;;) {
		size_t len;
		char *eq;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		len = 0;
		while (p[len] && !isspace((unsigned char)p[len]))
			len++;
		if (len >= sizeof item) {
			fs_errf(err, errlen, "%s: item '%.40s...' is too long", origin, p);
			goto fail;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		memcpy(whole, item, len + 1);
		p += len;
		eq = strchr(item, '=');
		if (!eq || eq == item) {
			fs_errf(err, errlen, "%s: '%s' is not NAME=VALUE (e.g. NCCL_PROTO=LL)", origin,
			        item);
			goto fail;
		}
		*eq = '\0';
		if (add_var(t, item, eq + 1, origin, whole, err, errlen) != 0)
			goto fail;
	}
	if (t->n == 0) {
		fs_errf(err, errlen, "%s: empty configuration (expected NCCL_NAME=VALUE items, e.g. "
		        "\"NCCL_PROTO=LL NCCL_ALGO=Ring\")", origin);
		goto fail;
	}
	return 0;
fail:
	tryconf_clear(t);
	return -1;
}

int tryconf_parse_file(const char *text, size_t len, const char *path, struct tryconf **v,
                       size_t *n, size_t max, char *err, size_t errlen)
{
	size_t pos = 0, lineno = 0, added = 0;
	char line[4096], origin[4200];

	while (pos < len) {
		size_t end = pos, l;
		struct tryconf t, *nv;
		char *hash;
		bool blank = true;

		while (end < len && text[end] != '\n')
			end++;
		lineno++;
		l = end - pos;
		snprintf(origin, sizeof origin, "%s:%zu", path, lineno);
		if (l >= sizeof line)
			return fs_errf(err, errlen, "%s: line too long", origin);
		memcpy(line, text + pos, l);
		line[l] = '\0';
		pos = end + 1;
		if (memchr(line, '\0', l))
			return fs_errf(err, errlen, "%s: a NUL byte", origin);
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		for (const char *c = line; *c && blank; c++)
			blank = isspace((unsigned char)*c);
		if (blank)
			continue;
		if (*n >= max)
			return fs_errf(err, errlen, "%s: more than %zu configurations to try", origin, max);
		if (tryconf_parse(line, origin, &t, err, errlen) != 0)
			return -1;
		nv = realloc(*v, (*n + 1) * sizeof *nv);
		if (!nv) {
			tryconf_clear(&t);
			return fs_errf(err, errlen, "out of memory");
		}
		*v = nv;
		nv[(*n)++] = t;
		added++;
	}
	if (added == 0)
		return fs_errf(err, errlen, "%s: no configuration in the file (one per line: "
		               "NCCL_NAME=VALUE items; '#' starts a comment)", path);
	return 0;
}

/* Does `text` name level l of dimension d? Categories compare as NCCL reads them
 * (case-insensitively); numbers by value. */
static bool level_matches(const space *sp, size_t d, size_t l, const char *text)
{
	const char *lv = space_level_text(sp, d, l);
	char *e1, *e2;
	long long a, b;

	if (!lv)
		return false;
	if (space_is_categorical(sp, d))
		return strcasecmp(lv, text) == 0;
	if (strcmp(lv, text) == 0)
		return true;
	errno = 0;
	a = strtoll(lv, &e1, 10);
	b = strtoll(text, &e2, 10);
	return errno == 0 && !*e1 && !*e2 && *text && a == b;
}

static const char *fixed_value(const space *sp, const char *name)
{
	for (size_t i = 0; i < space_fixed_count(sp); i++)
		if (strcmp(space_fixed_name(sp, i), name) == 0)
			return space_fixed_value(sp, i);
	return NULL;
}

/* The index of name in t, or -1. */
static int var_index(const struct tryconf *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->name[i], name) == 0)
			return (int)i;
	return -1;
}

int tryconf_resolve(struct tryconf *t, const space *sp, const struct env_pins *pins,
                    const char *origin, char *err, size_t errlen)
{
	size_t live = 0;
	bool maps = true, all_unset = true;

	memset(&t->p, 0, sizeof t->p);
	t->why[0] = '\0';
	for (size_t i = 0; i < t->n; i++) {
		t->pinned[i] = env_pins_get(pins, t->name[i]) != NULL;
		if (t->pinned[i])
			continue;
		live++;
		/* The space's guarantee (docs/formats.md): NVLS is only ever set when the
		 * space names it, and a --try is no back door. */
		if (strcmp(t->name[i], NVLS_VAR) == 0 && !space_mentions(sp, NVLS_VAR))
			return fs_errf(err, errlen, "%s: %s=%s refused: nccltune never sets %s unless "
			               "the space names it (NVLS needs NVLink SHARP hardware and reserves "
			               "memory); add it to a --space file to try it", origin, t->name[i],
			               t->value[i], NVLS_VAR);
	}
	if (live == 0)
		return fs_errf(err, errlen, "%s: every variable it sets is pinned by your environment "
		               "(your values win), so it would measure the baseline; unset them to "
		               "try it", origin);
	/* Searched variables: the try's level, or the unset level when it leaves them out. */
	for (size_t d = 0; d < space_dims(sp) && maps; d++) {
		int k = var_index(t, space_name(sp, d));
		bool found = false;

		for (size_t l = 0; l < space_levels(sp, d) && !found; l++) {
			if (k >= 0 ? level_matches(sp, d, l, t->value[k]) : !space_level_text(sp, d, l)) {
				t->p.lv[d] = (uint32_t)l;
				found = true;
				all_unset = all_unset && k < 0;
			}
		}
		maps = found;
		if (!maps)
			snprintf(t->why, sizeof t->why, k >= 0 ? "%s=%s is not one of the space's levels"
			         : "it leaves %s unset, which the space never does", space_name(sp, d),
			         k >= 0 ? t->value[k] : "");
	}
	/* Every other variable must be fixed by the space to the same value. */
	for (size_t i = 0; i < t->n && maps; i++) {
		const char *fv;
		bool searched = false;

		if (t->pinned[i])
			continue;
		for (size_t d = 0; d < space_dims(sp) && !searched; d++)
			searched = strcmp(space_name(sp, d), t->name[i]) == 0;
		if (searched)
			continue;
		fv = fixed_value(sp, t->name[i]);
		maps = fv && strcmp(fv, t->value[i]) == 0;
		if (!maps)
			snprintf(t->why, sizeof t->why, fv ? "it sets %s=%s, which the space fixes to %s"
			         : "the space does not search %s%s%s", t->name[i], fv ? t->value[i] : "",
			         fv ? fv : "");
	}
	t->in_space = maps && space_allows(sp, &t->p);
	if (maps && !t->in_space)
		snprintf(t->why, sizeof t->why, "it breaks one of the space's constraints");
	if (t->in_space && all_unset)
		return fs_errf(err, errlen, "%s: this is NCCL's default configuration of the space "
		               "(the baseline), which every session measures", origin);
	return 0;
}

bool tryconf_same(const struct tryconf *a, const struct tryconf *b, size_t dims)
{
	size_t na = 0, nb = 0;

	if (a->in_space != b->in_space)
		return false;
	if (a->in_space)
		return point_equal(&a->p, &b->p, dims);
	for (size_t i = 0; i < a->n; i++) {
		int k;

		if (a->pinned[i])
			continue;
		na++;
		k = var_index(b, a->name[i]);
		if (k < 0 || b->pinned[k] || strcmp(a->value[i], b->value[k]) != 0)
			return false;
	}
	for (size_t i = 0; i < b->n; i++)
		nb += !b->pinned[i];
	return na == nb;
}

cJSON *tryconf_to_json(const struct tryconf *t)
{
	cJSON *o = cJSON_CreateObject();

	for (size_t i = 0; o && i < t->n; i++) {
		if (!cJSON_AddStringToObject(o, t->name[i], t->value[i])) {
			cJSON_Delete(o);
			return NULL;
		}
	}
	return o;
}

int tryconf_from_json(const cJSON *o, const char *origin, struct tryconf *t, char *err,
                      size_t errlen)
{
	const cJSON *it;

	memset(t, 0, sizeof *t);
	snprintf(t->origin, sizeof t->origin, "%s", origin);
	if (!cJSON_IsObject(o))
		return fs_errf(err, errlen, "%s: must be an object of NCCL variables", origin);
	cJSON_ArrayForEach(it, o) {
		if (!cJSON_IsString(it)) {
			tryconf_clear(t);
			return fs_errf(err, errlen, "%s: %s: must be a string", origin,
			               it->string ? it->string : "?");
		}
		if (add_var(t, it->string, it->valuestring, origin, it->string, err, errlen) != 0) {
			tryconf_clear(t);
			return -1;
		}
	}
	if (t->n == 0)
		return fs_errf(err, errlen, "%s: empty configuration", origin);
	return 0;
}

cJSON *tryconf_env_json(const struct tryconf *t, const space *sp)
{
	cJSON *o;

	if (t->in_space)
		return env_point_to_json(sp, &t->p);
	o = cJSON_CreateObject();
	for (size_t i = 0; o && i < t->n; i++) {
		if (!t->pinned[i] && !cJSON_AddStringToObject(o, t->name[i], t->value[i])) {
			cJSON_Delete(o);
			return NULL;
		}
	}
	return o;
}

char *tryconf_describe(const struct tryconf *t, const space *sp, char *buf, size_t len)
{
	size_t used = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	if (t->in_space)
		return space_point_describe(sp, &t->p, buf, len);
	for (size_t i = 0; i < t->n; i++) {
		int k;

		if (t->pinned[i])
			continue;
		k = snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "", t->name[i],
		             t->value[i]);
		if (k < 0 || (size_t)k >= len - used)
			break;
		used += (size_t)k;
	}
	return buf;
}

char **tryconf_env_build(const struct tryconf *t, char *const *user_env, const space *sp,
                         const struct env_pins *pins, char *err, size_t errlen)
{
	char **env, **grown;
	size_t n = 0, keep = 0;

	if (t->in_space)
		return env_build(user_env, sp, pins, &t->p, err, errlen);
	env = env_build(user_env, sp, pins, NULL, err, errlen);
	if (!env)
		return NULL;
	while (env[n])
		n++;
	grown = realloc(env, (n + t->n + 1) * sizeof *grown);
	if (!grown) {
		env_free(env);
		fs_errf(err, errlen, "out of memory building the probe's environment");
		return NULL;
	}
	env = grown;
	/* Drop what the try replaces (a fixed value, the user's unpinned one). */
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(env[i], '=');
		size_t nl = eq ? (size_t)(eq - env[i]) : strlen(env[i]);
		bool replaced = false;

		for (size_t j = 0; j < t->n && !replaced; j++)
			replaced = !t->pinned[j] && strlen(t->name[j]) == nl &&
			           strncmp(t->name[j], env[i], nl) == 0;
		if (replaced)
			free(env[i]);
		else
			env[keep++] = env[i];
	}
	env[keep] = NULL;
	for (size_t j = 0; j < t->n; j++) {
		size_t l;
		char *e;

		if (t->pinned[j])
			continue;
		l = strlen(t->name[j]) + strlen(t->value[j]) + 2;
		e = malloc(l);
		if (!e) {
			env_free(env);
			fs_errf(err, errlen, "out of memory building the probe's environment");
			return NULL;
		}
		snprintf(e, l, "%s=%s", t->name[j], t->value[j]);
		env[keep++] = e;
		env[keep] = NULL;
	}
	return env;
}
