/* header_read.c - the journal's session header (docs/formats.md, "Journal") read back
 * into a session, through common/jsonread's field tables like every other reader: the
 * settings, the probe command, the space, the workload, the pins, the fingerprint (only
 * when results.json's readers would accept it), the warm start and the tries. */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "jsonread.h"
#include "result/summary.h"
#include "session/session_priv.h"

struct header {
	nccltune_session *s;
	char created[sizeof ((nccltune_session *)0)->run.created];
	char strategy[sizeof ((nccltune_session *)0)->cfg.strategy_name];
	double seed, time_limit_s, timeout_s;
	int budget, iters, warmup;
	bool auto_model, two_level;
};

/* A message of a reader below (space, workload, pins, tries) that names its own path. */
static int header_fail(struct jr *r, const char *msg)
{
	return fs_errf(r->err, r->errlen, "%s: %s", r->origin, msg);
}

static int take_arg(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	char **argv = ctx;

	if (!cJSON_IsString(v))
		return jr_fail(r, "must be a string");
	argv[i] = strdup(v->valuestring);
	return argv[i] ? 0 : jr_fail(r, "out of memory");
}

static int take_probe(struct jr *r, const cJSON *v, void *dst)
{
	nccltune_session *s = ((struct header *)dst)->s;

	if (cJSON_GetArraySize(v) == 0)
		return jr_fail(r, "empty command");
	s->run.probe_argv = calloc((size_t)cJSON_GetArraySize(v) + 1, sizeof *s->run.probe_argv);
	if (!s->run.probe_argv)
		return jr_fail(r, "out of memory");
	return jr_each(r, v, 256, take_arg, s->run.probe_argv);
}

static int take_space(struct jr *r, const cJSON *v, void *dst)
{
	nccltune_session *s = ((struct header *)dst)->s;
	char perr[1024], *text = cJSON_PrintUnformatted(v);
	int rc;

	if (!text)
		return jr_fail(r, "out of memory");
	rc = space_parse(text, strlen(text), "space", &s->run.sp, perr, sizeof perr);
	free(text);
	return rc != 0 ? header_fail(r, perr) : 0;
}

static int take_workload(struct jr *r, const cJSON *v, void *dst)
{
	nccltune_session *s = ((struct header *)dst)->s;
	char perr[1024];

	if (workload_from_json(v, "workload", &s->cfg.wl, perr, sizeof perr) != 0)
		return header_fail(r, perr);
	s->cfg.workload_set = true;
	return 0;
}

static int take_pinned(struct jr *r, const cJSON *v, void *dst)
{
	nccltune_session *s = ((struct header *)dst)->s;
	char perr[1024];

	if (env_pins_from_json(v, "pinned", &s->run.pins, perr, sizeof perr) != 0)
		return header_fail(r, perr);
	return 0;
}

/* The header's fingerprint, kept only when results.json's readers would accept it (what
 * they refuse is not taken from a header either). */
static int take_fingerprint(struct jr *r, const cJSON *v, void *dst)
{
	nccltune_session *s = ((struct header *)dst)->s;
	char perr[1024];

	if (summary_fingerprint_check(v, "fingerprint", perr, sizeof perr) != 0)
		return header_fail(r, perr);
	s->run.fingerprint = cJSON_Duplicate(v, true);
	return s->run.fingerprint ? 0 : jr_fail(r, "out of memory");
}

static int take_warm(struct jr *r, const cJSON *v, void *dst)
{
	nccltune_session *s = ((struct header *)dst)->s;

	s->run.warm = cJSON_Duplicate(v, true);
	return s->run.warm ? 0 : jr_fail(r, "out of memory");
}

static int take_try(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	nccltune_session *s = ctx;
	char origin[64], perr[1024];

	snprintf(origin, sizeof origin, "tries[%zu]", i);
	if (tryconf_from_json(v, origin, &s->cfg.tries[s->cfg.ntries], perr, sizeof perr) != 0)
		return header_fail(r, perr);
	s->cfg.ntries++;
	return 0;
}

static int take_tries(struct jr *r, const cJSON *v, void *dst)
{
	nccltune_session *s = ((struct header *)dst)->s;

	s->cfg.tries = calloc((size_t)cJSON_GetArraySize(v) + 1, sizeof *s->cfg.tries);
	if (!s->cfg.tries)
		return jr_fail(r, "out of memory");
	return jr_each(r, v, TRYCONF_MAX, take_try, s);
}

static const char *const journal_schema[] = {SESSION_JOURNAL_SCHEMA, SESSION_JOURNAL_SCHEMA_2,
                                             NULL};

/* One capability word of the probe; words this version does not know are skipped, as
 * proto_capabilities_parse does. */
static int take_cap(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	unsigned *caps = ctx;

	(void)i;
	if (!cJSON_IsString(v))
		return jr_fail(r, "must be a string");
	for (unsigned bit = 1; bit && proto_capability_name(bit); bit <<= 1)
		if (strcmp(proto_capability_name(bit), v->valuestring) == 0)
			*caps |= bit;
	return 0;
}

static int take_caps(struct jr *r, const cJSON *v, void *dst)
{
	nccltune_session *s = ((struct header *)dst)->s;

	s->run.caps = 0;
	return jr_each(r, v, 32, take_cap, &s->run.caps);
}

#define H(f) offsetof(struct header, f)

/* The server profile the session ran like (--like), when it had one. */
static int take_server(struct jr *r, const cJSON *v, void *dst)
{
	nccltune_session *s = ((struct header *)dst)->s;
	char perr[1024];

	if (session_server_from_json(s, v, perr, sizeof perr) != 0)
		return header_fail(r, perr);
	return 0;
}

/* The rows of iters and warmup in header_fields (designated there: a wrong index would
 * override another row, which -Woverride-init refuses). */
enum { HEADER_ITERS = 12, HEADER_WARMUP = 13 };

/* Open: a later version may add keys; those read are type-checked. */
static const struct jr_field header_fields[] = {
	{"schema", JR_STRING, JR_REQUIRED, 0, 64, journal_schema, JR_KEEP, 0, 0, NULL},
	{"type", JR_STRING, JR_REQUIRED, 0, 32, NULL, JR_KEEP, 0, 0, NULL},
	{"version", JR_STRING | JR_NULL, 0, 0, 64, NULL, JR_KEEP, 0, 0, NULL},
	{"created", JR_STRING, JR_REQUIRED, 0, 0, NULL, JR_STRBUF, H(created),
	 sizeof ((struct header *)0)->created, NULL},
	{"seed", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 0, 18446744073709551615.0, NULL, JR_DOUBLE,
	 H(seed), 0, NULL},
	{"strategy", JR_STRING, JR_REQUIRED, 0, 0, NULL, JR_STRBUF, H(strategy),
	 sizeof ((struct header *)0)->strategy, NULL},
	{"budget", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, 1e6, NULL, JR_INT, H(budget), 0, NULL},
	{"time_limit_s", JR_NUMBER, JR_REQUIRED, 0, 1e9, NULL, JR_DOUBLE, H(time_limit_s), 0, NULL},
	{"timeout_s", JR_NUMBER, JR_REQUIRED, 0, 1e9, NULL, JR_DOUBLE, H(timeout_s), 0, NULL},
	{"probe", JR_ARRAY, JR_REQUIRED, 0, 256, NULL, JR_KEEP, 0, 0, take_probe},
	{"space", JR_OBJECT, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, take_space},
	{"workload", JR_OBJECT, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, take_workload},
	[HEADER_ITERS] = {"iters", JR_NUMBER, JR_INTEGER, 1, 1e9, NULL, JR_INT, H(iters), 0, NULL},
	[HEADER_WARMUP] = {"warmup", JR_NUMBER, JR_INTEGER, 0, 1e9, NULL, JR_INT, H(warmup), 0,
	                   NULL},
	{"pinned", JR_OBJECT, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, take_pinned},
	{"fingerprint", JR_OBJECT | JR_NULL, 0, 0, 0, NULL, JR_KEEP, 0, 0, take_fingerprint},
	{"warm_start", JR_OBJECT | JR_NULL, 0, 0, 0, NULL, JR_KEEP, 0, 0, take_warm},
	{"auto_model", JR_BOOL, 0, 0, 0, NULL, JR_BOOLEAN, H(auto_model), 0, NULL},
	{"tries", JR_ARRAY, 0, 0, TRYCONF_MAX, NULL, JR_KEEP, 0, 0, take_tries},
	{"server", JR_OBJECT, 0, 0, 0, NULL, JR_KEEP, 0, 0, take_server},
	{"capabilities", JR_ARRAY, 0, 0, 32, NULL, JR_KEEP, 0, 0, take_caps},
	{"two_level", JR_BOOL, 0, 0, 0, NULL, JR_BOOLEAN, H(two_level), 0, NULL},
	JR_END,
};

int session_header_read(nccltune_session *s, const cJSON *h, const char *origin)
{
	struct header hd;
	struct jr r;
	uint64_t seen = 0;
	char err[sizeof s->err];

	memset(&hd, 0, sizeof hd);
	hd.s = s;
	jr_init(&r, origin, err, sizeof err);
	r.max_entries = 4096;
	if (jr_dispatch(&r, h, header_fields, true, &hd, &seen) < 0) {
		snprintf(s->err, sizeof s->err, "%s", err);
		return -1;
	}
	s->cfg.seed = (unsigned long)hd.seed;
	snprintf(s->cfg.strategy_name, sizeof s->cfg.strategy_name, "%s", hd.strategy);
	s->cfg.budget = hd.budget;
	s->cfg.time_limit_s = hd.time_limit_s;
	s->cfg.timeout_opt_s = hd.timeout_s;
	snprintf(s->run.created, sizeof s->run.created, "%s", hd.created);
	/* the probe's timing options, after the workload whatever the keys' order */
	if (seen & (UINT64_C(1) << HEADER_ITERS))
		s->cfg.wl.iters = hd.iters;
	if (seen & (UINT64_C(1) << HEADER_WARMUP))
		s->cfg.wl.warmup = hd.warmup;
	s->run.auto_model = hd.auto_model;
	/* /2 says the journal may hold sweep runs: the two go together */
	if (hd.two_level != (strcmp(cJSON_GetObjectItemCaseSensitive(h, "schema")->valuestring,
	                            SESSION_JOURNAL_SCHEMA_2) == 0)) {
		snprintf(s->err, sizeof s->err, "%s: two_level: %s with schema %s (a two-level "
		         "session writes %s, any other %s)", origin, hd.two_level ? "true" : "false",
		         cJSON_GetObjectItemCaseSensitive(h, "schema")->valuestring,
		         SESSION_JOURNAL_SCHEMA_2, SESSION_JOURNAL_SCHEMA);
		return -1;
	}
	s->run.two_level = hd.two_level;
	return 0;
}
