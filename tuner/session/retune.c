/* retune.c - nccltune_retune (include/nccltune.h): the unattended re-tune of
 * tuner/workflows/retune.c, given the one thing it cannot do from its stage, running a
 * session: here, through the public session API with the recorded settings. */
#include <stdio.h>
#include <string.h>

#include "nccltune.h"
#include "workflows/retune.h"

/* Run one re-tuning session as the job says; its status, its message in err. */
static int tune_session(const struct retune_job *j, char *err, size_t errlen)
{
	nccltune_session *s = nccltune_session_create();
	int rc;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NCCLTUNE_ERROR;
	}
	nccltune_session_set_progress(s, j->progress);
	rc = nccltune_session_set_probe(s, j->probe);
	if (rc == NCCLTUNE_OK)
		rc = nccltune_session_set_space_file(s, j->space_file);
	if (rc == NCCLTUNE_OK)
		rc = nccltune_session_set_workload_file(s, j->workload_file);
	if (rc == NCCLTUNE_OK)
		rc = nccltune_session_set_warm_start(s, j->warm_from);
	if (rc == NCCLTUNE_OK)
		rc = nccltune_session_set_out_dir(s, j->out_dir);
	if (rc == NCCLTUNE_OK && j->strategy)
		rc = nccltune_session_set_strategy(s, j->strategy);
	if (rc == NCCLTUNE_OK && j->budget > 0)
		rc = nccltune_session_set_budget(s, (int)j->budget);
	if (rc == NCCLTUNE_OK && j->has_seed)
		rc = nccltune_session_set_seed(s, j->seed);
	if (rc == NCCLTUNE_OK && j->time_limit_s > 0)
		rc = nccltune_session_set_time_limit(s, j->time_limit_s);
	if (rc == NCCLTUNE_OK && j->timeout_s > 0)
		rc = nccltune_session_set_timeout(s, j->timeout_s);
	if (rc == NCCLTUNE_OK)
		rc = nccltune_session_run(s);
	if (rc != NCCLTUNE_OK)
		snprintf(err, errlen, "the re-tuning session %s: %s", j->out_dir,
		         nccltune_session_error(s));
	nccltune_session_destroy(s);
	return rc;
}

int nccltune_retune(const char *state_dir, const struct nccltune_retune_options *o, FILE *out,
                    char *err, size_t errlen)
{
	return retune_run(state_dir, o, tune_session, out, err, errlen);
}
