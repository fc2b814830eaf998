/* header_read.c - resume's policy for the journal's session header: the header as the
 * one reader (result/record.c) validated it, rebuilt into a session: the settings, the
 * probe command, the space, the workload, the pins, the fingerprint, the warm start,
 * the tries and the server, each through its own reader; resume needs the space the
 * record may leave null. */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "jsonread.h"
#include "result/record.h"
#include "session/session_priv.h"

/* The most old failures a warm start records: one per configuration of the old journal. */
#define WARM_FAILURES_MAX (1u << 20)

/* A message of a reader below (space, workload, pins, tries) that names its own path. */
static int header_fail(struct jr *r, const char *msg)
{
	return fs_errf(r->err, r->errlen, "%s: %s", r->origin, msg);
}

static int header_probe(nccltune_session *s, struct jr *r, const cJSON *v)
{
	size_t i = 0;

	s->run.probe_argv = calloc((size_t)cJSON_GetArraySize(v) + 1, sizeof *s->run.probe_argv);
	if (!s->run.probe_argv)
		return jr_fail(r, "out of memory");
	for (const cJSON *a = v->child; a; a = a->next) {
		s->run.probe_argv[i] = strdup(a->valuestring);
		if (!s->run.probe_argv[i++])
			return jr_fail(r, "out of memory");
	}
	return 0;
}

/* The documents the header holds, each read by its own reader. */
static int header_documents(nccltune_session *s, struct jr *r, const struct record_header *h)
{
	char perr[1024], *text;
	size_t i = 0;
	int rc;

	if (!h->space) {
		if (jr_push_key(r, "space") == 0) {
			jr_fail(r, "expected an object, got null");
			jr_pop(r);
		}
		return -1;
	}
	text = cJSON_PrintUnformatted(h->space);
	if (!text)
		return jr_fail(r, "out of memory");
	rc = space_parse(text, strlen(text), "space", &s->run.sp, perr, sizeof perr);
	free(text);
	if (rc != 0)
		return header_fail(r, perr);
	if (workload_from_json(h->workload, "workload", &s->cfg.wl, perr, sizeof perr) != 0)
		return header_fail(r, perr);
	s->cfg.workload_set = true;
	if (env_pins_from_json(h->pinned, "pinned", &s->run.pins, perr, sizeof perr) != 0)
		return header_fail(r, perr);
	s->cfg.tries = calloc(h->ntries + 1, sizeof *s->cfg.tries);
	if (!s->cfg.tries)
		return jr_fail(r, "out of memory");
	for (const cJSON *t = h->tries ? h->tries->child : NULL; t; t = t->next, i++) {
		char origin[64];

		snprintf(origin, sizeof origin, "tries[%zu]", i);
		if (tryconf_from_json(t, origin, &s->cfg.tries[s->cfg.ntries], perr,
		                      sizeof perr) != 0)
			return header_fail(r, perr);
		s->cfg.ntries++;
	}
	if (h->server && session_server_from_json(s, h->server, perr, sizeof perr) != 0)
		return header_fail(r, perr);
	return 0;
}

/* ---- warm_start: what --warm-start took, as the writer (session_record.c) writes it ---- */

/* A point of the session's space that the space allows (by levels). */
static int warm_point(struct jr *r, const cJSON *v, void *dst)
{
	const nccltune_session *s = dst;
	struct point p;

	if (env_point_levels_from_json(s->run.sp, v, &p) != 0 || !space_allows(s->run.sp, &p))
		return jr_fail(r, "not a point of the session's space");
	return 0;
}

static int warm_config(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	(void)i;
	return warm_point(r, v, ctx);
}

static int warm_outcome(struct jr *r, const cJSON *v, void *dst)
{
	enum outcome_class c;

	(void)dst;
	if (outcome_class_parse(v->valuestring, &c) != 0 || c == OUTCOME_OK)
		return jr_fail(r, "not a failure class (args, env, init, capture, replay, verify, "
		               "crash, timeout, garbage, spawn)");
	return 0;
}

static const struct jr_field warm_failure_fields[] = {
	{"point", JR_ARRAY, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, warm_point},
	{"outcome", JR_STRING, JR_REQUIRED, 0, 32, NULL, JR_KEEP, 0, 0, warm_outcome},
	JR_END
};

static int warm_failure(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	(void)i;
	if (!cJSON_IsObject(v))
		return jr_fail(r, "expected an object, got %s", jr_type_name(v));
	return jr_dispatch(r, v, warm_failure_fields, false, ctx, NULL);
}

static int warm_configs(struct jr *r, const cJSON *v, void *dst)
{
	return jr_each(r, v, SESSION_WARM_MAX, warm_config, dst);
}

static int warm_failures(struct jr *r, const cJSON *v, void *dst)
{
	return jr_each(r, v, WARM_FAILURES_MAX, warm_failure, dst);
}

static const struct jr_field warm_fields[] = {
	{"from", JR_STRING, JR_REQUIRED, 0, PATH_MAX, NULL, JR_KEEP, 0, 0, NULL},
	{"comparable", JR_BOOL, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, NULL},
	{"configs", JR_ARRAY, JR_REQUIRED, 0, SESSION_WARM_MAX, NULL, JR_KEEP, 0, 0, warm_configs},
	{"failures", JR_ARRAY, JR_REQUIRED, 0, WARM_FAILURES_MAX, NULL, JR_KEEP, 0, 0,
	 warm_failures},
	JR_END
};

/* The header's warm_start, read strictly against the session's space (the docs' "at
 * most 5" configurations, every point one of the space's). Returns 0, or -1 after
 * jr_fail with the one reader's message format. */
static int header_warm(nccltune_session *s, struct jr *r, const cJSON *warm)
{
	int rc;

	if (jr_push_key(r, "warm_start") != 0)
		return -1;
	rc = jr_dispatch(r, warm, warm_fields, false, s, NULL);
	jr_pop(r);
	return rc;
}

int session_header_apply(nccltune_session *s, struct jr *r, const struct record_header *h)
{
	if (header_probe(s, r, h->probe) < 0 || header_documents(s, r, h) < 0)
		return -1;
	if (h->fingerprint) {
		s->run.fingerprint = cJSON_Duplicate(h->fingerprint, true);
		if (!s->run.fingerprint)
			return jr_fail(r, "out of memory");
	}
	if (h->warm_start && header_warm(s, r, h->warm_start) != 0)
		return -1;
	if (h->warm_start) {
		s->run.warm = cJSON_Duplicate(h->warm_start, true);
		if (!s->run.warm)
			return jr_fail(r, "out of memory");
	}
	s->run.caps = h->caps;
	s->cfg.seed = (unsigned long)h->seed;
	snprintf(s->cfg.strategy_name, sizeof s->cfg.strategy_name, "%s", h->strategy);
	s->cfg.budget = h->budget;
	s->cfg.time_limit_s = h->time_limit_s;
	s->cfg.timeout_opt_s = h->timeout_s;
	snprintf(s->run.created, sizeof s->run.created, "%s", h->created);
	/* the probe's timing options, after the workload whatever the keys' order */
	if (h->iters >= 0)
		s->cfg.wl.iters = h->iters;
	if (h->warmup >= 0)
		s->cfg.wl.warmup = h->warmup;
	s->run.auto_model = h->auto_model;
	s->run.two_level = h->two_level;
	return 0;
}
