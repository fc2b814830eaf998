/* sweep_record.c - a sweep run's part of its journal record (docs/formats.md, "Journal",
 * nccltune-journal/2): "sweep" ({"choices", "in_flight"}) and "inner" (one object per
 * inner result, as learned), written with the run and read back strictly (common/
 * jsonread) when a session resumes. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "jsonread.h"
#include "session/session_priv.h"

/* Add item under key, deleting it if that fails. */
static bool add(cJSON *o, const char *key, cJSON *item)
{
	if (!item)
		return false;
	if (!cJSON_AddItemToObject(o, key, item)) {
		cJSON_Delete(item);
		return false;
	}
	return true;
}

int session_inner_push(nccltune_session *s, const struct twolevel_inner *in)
{
	struct twolevel_inner *inner = session_array_grow(s->run.inner, &s->run.inner_cap,
	                                                  s->run.ninner, sizeof *inner, 256);

	if (!inner)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	s->run.inner = inner;
	s->run.inner[s->run.ninner++] = *in;
	return NCCLTUNE_OK;
}

/* One inner result as the journal keeps it. */
static cJSON *inner_json(const nccltune_session *s, const struct twolevel_inner *in)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	if (!add(o, "choice", in->index == TWOLEVEL_OWN ? cJSON_CreateNull()
	                                                : cJSON_CreateNumber((double)in->index)) ||
	    !cJSON_AddNumberToObject(o, "bytes", (double)in->bytes) ||
	    !add(o, "point", env_point_levels_to_json(s->run.sp, &in->p)) ||
	    !cJSON_AddStringToObject(o, "outcome", outcome_class_name(in->cls)) ||
	    !add(o, "us", isfinite(in->us) ? cJSON_CreateNumber(in->us) : cJSON_CreateNull()) ||
	    !add(o, "objective_us", isfinite(in->objective_us)
	                            ? cJSON_CreateNumber(in->objective_us) : cJSON_CreateNull()) ||
	    !cJSON_AddStringToObject(o, "error", in->error)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* A sweep run's "sweep" ({"choices", "in_flight"}) and "inner" (its inner results, in
 * the order they were learned) into j. False when out of memory. */
bool session_sweep_json(const nccltune_session *s, const struct session_run *r, size_t index,
                        cJSON *j)
{
	cJSON *sw = cJSON_CreateObject(), *arr;

	if (!add(j, "sweep", sw) || !cJSON_AddNumberToObject(sw, "choices", (double)r->nchoices) ||
	    !cJSON_AddBoolToObject(sw, "in_flight", r->in_flight))
		return false;
	arr = cJSON_AddArrayToObject(j, "inner");
	if (!arr)
		return false;
	for (size_t i = 0; i < s->run.ninner; i++) {
		cJSON *o;

		if (s->run.inner[i].run != index)
			continue;
		o = inner_json(s, &s->run.inner[i]);
		if (!o || !cJSON_AddItemToArray(arr, o)) {
			cJSON_Delete(o);
			return false;
		}
	}
	return true;
}

struct inner_doc {
	const cJSON *choice, *point;
	double bytes, us, objective;
	char outcome[16], error[256];
};

#define ID(f) offsetof(struct inner_doc, f)

static const struct jr_field inner_fields[] = {
	{"choice", JR_NUMBER | JR_NULL, JR_REQUIRED | JR_INTEGER, 0, TWOLEVEL_MAX_CHOICES - 1,
	 NULL, JR_ITEM, ID(choice), 0, NULL},
	{"bytes", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, 9007199254740991.0, NULL, JR_DOUBLE,
	 ID(bytes), 0, NULL},
	{"point", JR_ARRAY, JR_REQUIRED, 0, SPACE_MAX_DIMS, NULL, JR_ITEM, ID(point), 0, NULL},
	{"outcome", JR_STRING, JR_REQUIRED, 0, 0, NULL, JR_STRBUF, ID(outcome), 16, NULL},
	{"us", JR_NUMBER | JR_NULL, JR_REQUIRED, 0, 1e12, NULL, JR_DOUBLE, ID(us), 0, NULL},
	{"objective_us", JR_NUMBER | JR_NULL, JR_REQUIRED, 0, 1e15, NULL, JR_DOUBLE,
	 ID(objective), 0, NULL},
	{"error", JR_STRING, JR_REQUIRED | JR_CONTROL, 0, 255, NULL, JR_STRBUF, ID(error), 256,
	 NULL},
	JR_END,
};

struct inner_ctx {
	nccltune_session *s;
	size_t run;
};

/* jr_fail with `key` on the path. */
static int keyed_fail(struct jr *r, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int keyed_fail(struct jr *r, const char *key, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (jr_push_key(r, key) < 0)
		return -1;
	jr_fail(r, "%s", msg);
	jr_pop(r);
	return -1;
}

/* One inner result of the record's "inner" array, into s->run.inner. */
static int take_inner(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct inner_ctx *c = ctx;
	struct inner_doc d;
	struct twolevel_inner in;

	(void)i;
	memset(&d, 0, sizeof d);
	d.us = d.objective = NAN;
	if (!cJSON_IsObject(v))
		return jr_fail(r, "expected an object, got %s", jr_type_name(v));
	if (jr_dispatch(r, v, inner_fields, false, &d, NULL) < 0)
		return -1;
	memset(&in, 0, sizeof in);
	in.run = c->run;
	in.index = cJSON_IsNumber(d.choice) ? (size_t)d.choice->valuedouble : TWOLEVEL_OWN;
	in.bytes = (uint64_t)d.bytes;
	if (outcome_class_parse(d.outcome, &in.cls) != 0)
		return keyed_fail(r, "outcome", "unknown class '%s'", d.outcome);
	if (env_point_levels_from_json(c->s->run.sp, d.point, &in.p) != 0)
		return keyed_fail(r, "point", "not a point of the session's space");
	if ((in.cls == OUTCOME_OK) != (isfinite(d.us) && isfinite(d.objective)))
		return keyed_fail(r, "us", "us and objective_us: numbers for an ok result, null "
		                  "otherwise");
	in.us = in.cls == OUTCOME_OK ? d.us : NAN;
	in.objective_us = in.cls == OUTCOME_OK ? d.objective : NAN;
	snprintf(in.error, sizeof in.error, "%s", d.error);
	return session_inner_push(c->s, &in) == NCCLTUNE_OK ? 0 : jr_fail(r, "out of memory");
}

struct sweep_doc {
	double choices;
	bool in_flight;
};

static const struct jr_field sweep_fields[] = {
	{"choices", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 0, TWOLEVEL_MAX_CHOICES, NULL, JR_DOUBLE,
	 offsetof(struct sweep_doc, choices), 0, NULL},
	{"in_flight", JR_BOOL, JR_REQUIRED, 0, 0, NULL, JR_BOOLEAN,
	 offsetof(struct sweep_doc, in_flight), 0, NULL},
	JR_END,
};

int session_sweep_read(nccltune_session *s, const cJSON *rec, struct session_run *r,
                       size_t run, const char *origin)
{
	char err[1024];
	struct sweep_doc d = {0, false};
	struct inner_ctx c = {s, run};
	const cJSON *sw = cJSON_GetObjectItemCaseSensitive(rec, "sweep");
	const cJSON *in = cJSON_GetObjectItemCaseSensitive(rec, "inner");
	struct jr jr;

	if (!cJSON_IsObject(sw) || !cJSON_IsArray(in)) {
		snprintf(s->err, sizeof s->err, "%s: %s: missing or not %s (a sweep run holds its "
		         "inner results)", origin, cJSON_IsObject(sw) ? "inner" : "sweep",
		         cJSON_IsObject(sw) ? "an array" : "an object");
		return -1;
	}
	err[0] = '\0';
	jr_init(&jr, origin, err, sizeof err);
	if (jr_push_key(&jr, "sweep") < 0 || jr_dispatch(&jr, sw, sweep_fields, false, &d, NULL) < 0)
		goto bad;
	jr_pop(&jr);
	if (jr_push_key(&jr, "inner") < 0 ||
	    jr_each(&jr, in, TWOLEVEL_MAX_CHOICES + WORKLOAD_MAX_ENTRIES, take_inner, &c) < 0)
		goto bad;
	r->nchoices = (size_t)d.choices;
	r->in_flight = d.in_flight;
	return 0;
bad:
	snprintf(s->err, sizeof s->err, "%s", err);
	return -1;
}

