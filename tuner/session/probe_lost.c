/* probe_lost.c - when a run of identical failures says the probe itself no longer starts
 * (its file deleted, a driver gone), not that the configurations fail: the failures that
 * are the probe's, how many distinct configurations must share one, and when NCCL's
 * defaults are run again to tell the two apart (issue 31 M10). Reads the runs only. */
#include <string.h>

#include "session/session_priv.h"

/* How far back a streak is looked at: enough for every threshold below. */
#define LOST_LOOKBACK 64

/* How a failure can be the probe's: not at all; in words the probe never said (it did
 * not start, printed no report, or said the machine has no usable GPU: no configuration
 * changes that); or in the probe's own words (its command line refused, the same init
 * error), which a bad region of the space could also give. */
enum lost_kind { LOST_NO, LOST_SILENT, LOST_SAID };

static enum lost_kind lost_kind(const struct outcome *o)
{
	switch (o->cls) {
	case OUTCOME_SPAWN:
		return LOST_SILENT;
	case OUTCOME_GARBAGE:
		/* no report parsed at all (an ok report refused later is the configuration's
		 * figures, not a silent probe) */
		return o->report.ok ? LOST_NO : LOST_SILENT;
	case OUTCOME_INIT:
		return outcome_machine_unusable(o->cls, o->error) ? LOST_SILENT : LOST_SAID;
	case OUTCOME_ARGS:
		return LOST_SAID;
	default:
		return LOST_NO;
	}
}

/* The same failure, word for word (the stderr is left out: it may carry process ids). */
static bool same_failure(const struct outcome *a, const struct outcome *b)
{
	return a->cls == b->cls && a->exit_status == b->exit_status &&
	       strcmp(a->error, b->error) == 0;
}

static bool is_defaults(const struct session_run *r)
{
	return !r->has_point && !r->try_no && !r->unset;
}

/* The same configuration: the same point (or none), try and unset dimensions. */
static bool same_config(const struct session_run *a, const struct session_run *b, size_t dims)
{
	return a->has_point == b->has_point && a->try_no == b->try_no && a->unset == b->unset &&
	       (!a->has_point || point_equal(&a->p, &b->p, dims));
}

/* The runs this process ran (a resume's replayed runs come first and are history). */
static size_t first_live(const nccltune_session *s)
{
	return s->run.nqueue < s->run.nruns ? s->run.nqueue : s->run.nruns;
}

/* How many checks of NCCL's defaults this process ran that passed: each doubles the
 * streak the next check needs, so a region of the space that fails alike costs a
 * vanishing share of the budget. */
static unsigned passed_checks(const nccltune_session *s)
{
	unsigned n = 0;

	for (size_t i = first_live(s); i < s->run.nruns; i++)
		n += i > 0 && s->run.runs[i].phase == PHASE_BASELINE &&
		     is_defaults(&s->run.runs[i]) && s->run.runs[i].o.cls == OUTCOME_OK;
	return n;
}

/* Did any of the first `end` runs (replayed ones too) run ok? */
static bool worked_before(const nccltune_session *s, size_t end)
{
	for (size_t i = 0; i < end; i++)
		if (s->run.runs[i].o.cls == OUTCOME_OK)
			return true;
	return false;
}

enum session_lost session_probe_lost(const nccltune_session *s, size_t *configs, size_t *runs)
{
	const struct session_run *last, *seen[LOST_LOOKBACK];
	size_t dims = space_dims(s->run.sp), lo = first_live(s), nseen = 0, n = 0, others;
	bool defaults = false;
	enum lost_kind kind;
	unsigned checks;

	*configs = *runs = 0;
	if (s->run.nruns == 0 || s->run.nruns <= lo)
		return SESSION_LOST_NO;
	last = &s->run.runs[s->run.nruns - 1];
	kind = lost_kind(&last->o);
	if (kind == LOST_NO)
		return SESSION_LOST_NO;
	for (size_t i = s->run.nruns; i-- > lo && n < LOST_LOOKBACK;) {
		const struct session_run *r = &s->run.runs[i];
		bool known = false;

		if (!same_failure(&r->o, &last->o))
			break;
		n++;
		defaults = defaults || is_defaults(r);
		for (size_t j = 0; j < nseen && !known; j++)
			known = same_config(seen[j], r, dims);
		if (!known)
			seen[nseen++] = r;
	}
	*configs = nseen;
	*runs = n;
	/* The probe's own words stop only a probe that worked before: a session whose every
	 * run failed so from the start ends as "no configuration worked" (results.json). */
	if (kind == LOST_SAID && !worked_before(s, s->run.nruns - n))
		return SESSION_LOST_NO;
	others = nseen - (size_t)defaults;
	/* NCCL's defaults fail as the others do: the probe's, not a configuration's. Words
	 * the probe said need more configurations than silence does. */
	if (defaults && others >= (kind == LOST_SILENT ? SESSION_LOST_SILENT : SESSION_LOST_SAID))
		return SESSION_LOST_YES;
	checks = passed_checks(s);
	if (!defaults && checks < 16 && others >= (size_t)SESSION_LOST_SAID << checks)
		return SESSION_LOST_CHECK;
	return SESSION_LOST_NO;
}
