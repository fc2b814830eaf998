/* outcome.c - names and properties of outcome classes. */
#include "outcome.h"

#include <string.h>

static const struct {
	const char *name;
	const char *phrase;
	bool flaky;
} classes[OUTCOME_COUNT_] = {
	[OUTCOME_OK] = {"ok", "ran", false},
	[OUTCOME_ARGS] = {"args", "rejected its arguments", false},
	[OUTCOME_ENV] = {"env", "rejected the environment", false},
	[OUTCOME_INIT] = {"init", "failed at communicator init", false},
	[OUTCOME_CAPTURE] = {"capture", "failed at graph capture", false},
	[OUTCOME_REPLAY] = {"replay", "failed at graph replay", false},
	[OUTCOME_VERIFY] = {"verify", "computed wrong sums", false},
	[OUTCOME_CRASH] = {"crash", "crashed", true},
	[OUTCOME_TIMEOUT] = {"timeout", "hung", true},
	[OUTCOME_GARBAGE] = {"garbage", "printed garbage", true},
	[OUTCOME_SPAWN] = {"spawn", "could not be started", false},
};

const char *outcome_class_name(enum outcome_class c)
{
	return (unsigned)c < OUTCOME_COUNT_ ? classes[c].name : "?";
}

int outcome_class_parse(const char *s, enum outcome_class *out)
{
	for (int i = 0; s && i < OUTCOME_COUNT_; i++) {
		if (strcmp(s, classes[i].name) == 0) {
			*out = (enum outcome_class)i;
			return 0;
		}
	}
	return -1;
}

bool outcome_class_flaky(enum outcome_class c)
{
	return (unsigned)c < OUTCOME_COUNT_ && classes[c].flaky;
}

const char *outcome_class_phrase(enum outcome_class c)
{
	return (unsigned)c < OUTCOME_COUNT_ ? classes[c].phrase : "failed";
}
