/* runner.h - start a probe, enforce its deadline, capture what it says, classify it.
 * The only module that forks. Knows nothing of strategies or spaces. */
#ifndef NCCLTUNE_RUNNER_H
#define NCCLTUNE_RUNNER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "run/outcome.h"
#include "run/reaper.h"

struct runner_request {
	char *const *argv;      /* NULL-terminated; argv[0] is looked up in PATH if it has no '/' */
	char *const *envp;      /* the complete environment of the child, NULL-terminated */
	double timeout_s;       /* > 0: SIGTERM to the process group, then SIGKILL after a grace */
	size_t stdout_cap;      /* bytes kept of stdout (0: 1 MiB); the rest is drained */
	size_t stderr_cap;      /* bytes kept of the END of stderr (0: 64 KiB) */
	/* Optional: polled while the child runs; once it reads non-zero (e.g. set by a
	 * SIGINT handler) the group is killed at once and res->cancelled is set. */
	const volatile sig_atomic_t *cancel;
	/* Optional: after the probe is reaped, reaper_sweep (run/reaper.h) ends every
	 * descendant that escaped its process group. */
	struct reaper *reaper;
};

struct runner_result {
	bool spawned;           /* false: exec failed (spawn_error says why) */
	bool timed_out;
	int exit_status;        /* -1 when killed by a signal or not spawned */
	int signal;             /* the signal that killed it, else 0 */
	double wall_s;
	char *out;              /* stdout, NUL-terminated, malloc'd */
	size_t out_len;
	bool out_truncated;
	char *err;              /* the last stderr_cap bytes of stderr, NUL-terminated */
	size_t err_len;
	char spawn_error[256];
	bool cancelled;         /* killed because *req->cancel was set: not an outcome */
};

/* Run one command to completion (or its deadline) in its own process group, reading
 * stdout and stderr concurrently; the group is always killed and the child reaped
 * before returning. Returns 0 with *res filled (even for a crash or a timeout), or -1
 * only for a failure of the tuner itself (pipe, fork, out of memory), message in err.
 * A command that cannot be executed is res->spawned == false, not -1. */
int runner_run(const struct runner_request *req, struct runner_result *res,
               char *err, size_t errlen);

/* Could runner_run start argv[0] now (found as runner_run finds it, in envp's PATH when
 * it has no '/', and an executable regular file)? Returns 0, or -1 with the reason
 * ("PATH: No such file or directory", "NAME: command not found in PATH", "PATH: not
 * an executable file") in err. Nothing is run. */
int runner_check_command(char *const *argv, char *const *envp, char *err, size_t errlen);

/* Free the buffers of a result; accepts a zeroed or already-freed result. */
void runner_result_free(struct runner_result *res);

/* Turn a finished run into an outcome: parse the report strictly (proto_report_parse),
 * map ok/stage/signal/timeout/garbage to a class, keep the stderr tail. The error and the
 * stderr tail are valid UTF-8 (invalid bytes become U+FFFD, cuts fall on a character
 * boundary). The objective is left NAN; the caller computes it from the report and the
 * workload. Can't fail. */
void runner_classify(const struct runner_result *res, struct outcome *out);

/* Split a command line like a POSIX shell would (single and double quotes, backslash
 * escapes; no expansion, no shell involved) into a malloc'd NULL-terminated argv.
 * Returns 0, or -1 with a message for an empty command or an unterminated quote. */
int runner_split_command(const char *cmd, char ***argv_out, char *err, size_t errlen);
void runner_free_argv(char **argv);   /* accepts NULL */

/* Find one of nccltune's own programs ("nccltune-probe", "nccltune-model-probe"):
 * $NCCLTUNE_<NAME> override (e.g. NCCLTUNE_MODEL_PROBE), then next to the running
 * executable, then in the build tree's sibling folders (../probe, ../models), then
 * PATH. Returns 0 with the path in buf, or -1 with a message listing where it looked. */
int runner_find_tool(const char *name, char *buf, size_t len, char *err, size_t errlen);

#endif
