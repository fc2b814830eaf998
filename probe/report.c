/* report.c - stdout ownership and the report with the probe's extensions (report.h). */
#include "report.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int reporter_init(struct reporter *rep)
{
	int fd;

	rep->out = stdout;
	rep->done = false;
	rep->ranks_per_gpu = 0;
	rep->has_mps = rep->mps = false;
	rep->nprobe_env = 0;
	rep->warning[0] = '\0';
	pthread_mutex_init(&rep->lock, NULL);
	fflush(stdout);
	fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -1;
	rep->out = fdopen(fd, "w");
	if (!rep->out) {
		close(fd);
		rep->out = stdout;
		return -1;
	}
	if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		fclose(rep->out);
		rep->out = stdout;
		return -1;
	}
	return 0;
}

void reporter_forget(struct reporter *rep)
{
	if (rep->out && rep->out != stdout)
		close(fileno(rep->out));
}

/* Seconds rounded to microseconds: more digits would only be noise. */
static double round_us(double s)
{
	return round(s * 1e6) / 1e6;
}

static bool any_time(const double *phase_s)
{
	for (int s = 0; s < PROBE_STEP_COUNT; s++)
		if (phase_s[s] > 0)
			return true;
	return false;
}

char *report_format(const struct proto_report *r, const double *phase_s)
{
	cJSON *root;
	char *out = NULL;

	/* A run that never reached a GPU (bad setup, a rank lost before reporting) has no
	 * phase times: say nothing rather than a row of zeros. */
	if (!phase_s || !any_time(phase_s))
		return proto_report_format(r);
	root = proto_report_json(r);
	if (!root)
		return NULL;
	{
		cJSON *ph = cJSON_AddObjectToObject(root, "phases_s");

		for (int s = 0; ph && s < PROBE_STEP_COUNT; s++)
			if (!cJSON_AddNumberToObject(ph, probe_step_name((enum probe_step)s),
			                             round_us(phase_s[s])))
				ph = NULL;
		if (ph)
			out = proto_json_line(root);
	}
	cJSON_Delete(root);
	return out;
}

int reporter_emit_text(struct reporter *rep, const char *text)
{
	int rc = 0;

	pthread_mutex_lock(&rep->lock);
	if (!rep->done) {
		rep->done = true;
		if (fputs(text, rep->out) < 0 || fflush(rep->out) != 0) {
			perror("nccltune-probe: writing the report");
			rc = -1;
		}
	}
	pthread_mutex_unlock(&rep->lock);
	return rc;
}

void reporter_note_env(struct reporter *rep, const char *name, const char *value)
{
	if (rep->nprobe_env >= PROTO_MAX_PROBE_ENV)
		return;
	snprintf(rep->probe_env[rep->nprobe_env], sizeof rep->probe_env[0], "%s=%s", name, value);
	rep->nprobe_env++;
}

int reporter_emit(struct reporter *rep, const struct proto_report *r, const double *phase_s)
{
	struct proto_report full = *r;   /* shares r's sweep entries: not cleared here */
	char *line;
	int rc;

	if (!full.ranks_per_gpu)
		full.ranks_per_gpu = rep->ranks_per_gpu;
	if (!full.has_mps) {
		full.has_mps = rep->has_mps;
		full.mps = rep->mps;
	}
	if (!full.nprobe_env) {
		full.nprobe_env = rep->nprobe_env;
		memcpy(full.probe_env, rep->probe_env, sizeof full.probe_env);
	}
	if (rep->warning[0])
		proto_report_warn(&full, "%s", rep->warning);
	line = report_format(&full, phase_s);

	if (!line) {
		/* Out of memory: say so with a fixed text rather than say nothing. */
		reporter_emit_text(rep, "{\"schema\":\"" PROTO_SCHEMA "\",\"ok\":false,"
		                   "\"stage\":\"init\",\"error\":\"out of memory writing "
		                   "the report\"}\n");
		return -1;
	}
	rc = reporter_emit_text(rep, line);
	free(line);
	return rc;
}
