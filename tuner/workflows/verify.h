/* verify.h - inside tuner/workflows/: what `nccltune verify` (verify.c) learns of the
 * server's environment (verify_env.c): the variables NCCL will see and where each comes
 * from, the environment handed to its children, and what the server's interpreter said
 * (its NCCL, whether it could start NCCL, the lines NCCL logged while it did). */
#ifndef NCCLTUNE_WORKFLOWS_VERIFY_H
#define NCCLTUNE_WORKFLOWS_VERIFY_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "nccltune.h"

#define VERIFY_VARS_MAX 256     /* NCCL_*, NCCLTUNE_* and CUDA_* variables kept */
#define VERIFY_VALUE_MAX 1024

struct verify_var {
	char name[128];
	char value[VERIFY_VALUE_MAX];
	char origin[PATH_MAX + 64];   /* "the environment", "env file F", "F (NCCL's
	                               * configuration file)", "the interpreter's start-up" */
};

struct verify_env {
	size_t n;
	struct verify_var v[VERIFY_VARS_MAX];
	char **envp;                  /* the children's environment (NULL-terminated, owned) */
	size_t nenvp;
	/* the interpreter's answers (python given) */
	bool python_ran;
	char python[PATH_MAX];        /* sys.executable */
	char nccl_lib[PATH_MAX];      /* the libnccl.so.2 it loads ("" unknown) */
	char nccl_version[32];        /* "2.28.9" ("" unknown) */
	char torch[64];               /* torch's version ("" not importable) */
	bool gpu;                     /* torch sees a GPU */
	bool started;                 /* NCCL started and the all-reduces ran */
	char start_error[512];        /* why it did not ("" none, or not tried) */
	char *log;                    /* everything the interpreter printed (malloc'd) */
};

/* Collect the server's environment as `o` says: this process's environment, then the
 * env file's lines (docker --env-file: NAME=VALUE literally to the end of the line, NAME
 * alone takes this environment's value, '#' lines and blank lines skipped), then, with
 * o->python, what its start-up (site: .pth files, sitecustomize) sets - the interpreter
 * run as the server runs it, from the folder "/" - and, with a GPU and o->start, NCCL
 * started in it; last NCCL's configuration files ($NCCL_CONF_FILE or ~/.nccl.conf, then
 * /etc/nccl.conf) for what the environment leaves unset (NCCL sets those at its first
 * call). `sizes` (n of them) are the all-reduces started. Returns NCCLTUNE_OK;
 * NCCLTUNE_USAGE for an unreadable or malformed env file; NCCLTUNE_ERROR when the
 * interpreter cannot be run or does not answer (the message names it). Free with
 * verify_env_free either way. */
int verify_env_collect(const struct nccltune_verify_options *o, const unsigned long long *sizes,
                       size_t nsizes, struct verify_env *e, char *err, size_t errlen);

/* The variable `name` of e, or NULL. */
const struct verify_var *verify_env_get(const struct verify_env *e, const char *name);

void verify_env_free(struct verify_env *e);   /* accepts a zeroed one */

#endif
