/* sweep_record.c - a sweep run's part of its journal record (docs/formats.md, "Journal",
 * nccltune-journal/2): "sweep" ({"choices", "in_flight"}) and "inner" (one object per
 * inner result, as learned), written with the run; read back by the one reader
 * (result/record.c), whose inner results resume maps into its space here. */
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

int session_sweep_apply(nccltune_session *s, struct jr *jr, const struct record_run *rec,
                        struct session_run *r, size_t run)
{
	for (size_t i = 0; i < rec->ninner; i++) {
		const struct record_inner *ri = &rec->inner[i];
		struct twolevel_inner in;

		memset(&in, 0, sizeof in);
		in.run = run;
		in.index = ri->choice;
		in.bytes = ri->bytes;
		in.cls = ri->cls;
		in.us = ri->us;
		in.objective_us = ri->objective_us;
		snprintf(in.error, sizeof in.error, "%s", ri->error);
		if (env_point_levels_from_json(s->run.sp, ri->point, &in.p) != 0)
			return fs_errf(jr->err, jr->errlen, "%s: inner[%zu].point: not a point of the "
			               "session's space", jr->origin, i);
		if (session_inner_push(s, &in) != NCCLTUNE_OK)
			return jr_fail(jr, "out of memory");
	}
	r->nchoices = rec->nchoices;
	r->in_flight = rec->in_flight;
	return 0;
}
