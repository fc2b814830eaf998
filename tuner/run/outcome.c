/* outcome.c - names and properties of outcome classes, and which failures say the
 * machine cannot run any configuration. */
#include "run/outcome.h"

#include <ctype.h>
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

bool outcome_machine_unusable(enum outcome_class c, const char *error)
{
	/* What CUDA, the driver, MPI and nccltune-probe say when there is no GPU to run on
	 * or the driver cannot serve one; none of it depends on an NCCL variable. */
	static const char *const words[] = {
		"no cuda device visible", "no cuda-capable device", "no usable gpu",
		"cuda driver version is insufficient", "driver/library version mismatch",
		"cudaerrornodevice", "cudaerrorinsufficientdriver", "cudaerrorsystemdrivermismatch",
		"cuda_error_no_device", "cuda device(s) visible", "mpi_init failed", NULL,
	};
	char low[PROTO_ERROR_MAX];
	size_t n = 0;

	if (c != OUTCOME_INIT || !error)
		return false;
	for (; error[n] && n + 1 < sizeof low; n++)
		low[n] = (char)tolower((unsigned char)error[n]);
	low[n] = '\0';
	for (size_t i = 0; words[i]; i++)
		if (strstr(low, words[i]))
			return true;
	return false;
}

const char *outcome_class_phrase(enum outcome_class c)
{
	return (unsigned)c < OUTCOME_COUNT_ ? classes[c].phrase : "failed";
}

enum outcome_class outcome_class_of_stage(enum proto_stage stage)
{
	switch (stage) {
	case PROTO_STAGE_ARGS: return OUTCOME_ARGS;
	case PROTO_STAGE_ENV: return OUTCOME_ENV;
	case PROTO_STAGE_INIT: return OUTCOME_INIT;
	case PROTO_STAGE_CAPTURE: return OUTCOME_CAPTURE;
	case PROTO_STAGE_REPLAY: return OUTCOME_REPLAY;
	case PROTO_STAGE_VERIFY: return OUTCOME_VERIFY;
	}
	return OUTCOME_GARBAGE;
}
