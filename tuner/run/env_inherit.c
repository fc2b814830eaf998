/* env_inherit.c - what of the user's environment reaches NCCL in a probe run besides the
 * space: every inherited NCCL_* variable is pinned (recorded and exported), reported (a
 * logging variable, a container label NCCL does not read) or refused before any run (see env.h, env_inherited_check). */
#include "run/env.h"

#include <stdio.h>
#include <string.h>

#include "fsutil.h"
#include "ncclvars.h"

/* What to do with an inherited variable that is neither mentioned by the space nor
 * recorded as pinned: the refusal (written to err) or, for one that may stay, *what. */
static int judge(const char *name, const char *value, bool resumed,
                 enum env_inherited *what, char *err, size_t errlen)
{
	char why[512];
	const char *never;

	if (strcmp(name, "NCCLTUNE_TUNER_TABLE") == 0 || strcmp(name, "NCCL_TUNER_PLUGIN") == 0)
		return fs_errf(err, errlen, "%s=%.200s is set in your environment (a sourced env.sh "
		               "of an earlier session?): every run, the baseline included, would "
		               "load that plugin and table; refused before any run: unset "
		               "NCCL_TUNER_PLUGIN NCCLTUNE_TUNER_TABLE and run again", name, value);
	if (strcmp(name, "CUDA_LAUNCH_BLOCKING") == 0)
		return fs_errf(err, errlen, "CUDA_LAUNCH_BLOCKING=%.200s is set in your environment: "
		               "NCCL reads it (misc/cudawrap.cc) and serialises its launches, as no "
		               "server runs; refused before any run: unset CUDA_LAUNCH_BLOCKING",
		               value);
	if (strncmp(name, "NCCL_", 5) != 0)
		return 1;   /* not NCCL's */
	if (ncclvars_name_check(name, why, sizeof why) != 0)
		return 1;   /* NCCL reads only NCCL_[A-Z0-9_]+ names */
	if (ncclvars_label(name)) {
		*what = ENV_INHERITED_LABEL;
		return 0;
	}
	never = ncclvars_loader_refusal(name);
	if (never && (ncclvars_find(name)->role == NCCLVARS_DEBUG ||
	              strcmp(name, "NCCL_DEBUG_FILE") == 0)) {
		*what = ENV_INHERITED_LOGGING;
		return 0;
	}
	if (never)
		return fs_errf(err, errlen, "%s=%.200s is set in your environment: %s; the session "
		               "could not record it so that its exports run as it measured; refused "
		               "before any run: unset %s for the session", name, value, never, name);
	if (ncclvars_check(name, value, why, sizeof why) != 0)
		return fs_errf(err, errlen, "%s=%.200s is set in your environment: %s; refused "
		               "before any run: unset %s or correct its value", name, value, why,
		               name);
	if (!ncclvars_find(name))
		return fs_errf(err, errlen, "%s=%.200s is set in your environment: not a variable "
		               "nccltune knows (common/ncclvars.c), so no export could set it as the "
		               "session measured; refused before any run: unset %s for the session",
		               name, value, name);
	if (resumed)
		return fs_errf(err, errlen, "%s=%.200s is set in your environment, but the session "
		               "ran without it (its journal's header does not pin it); refused "
		               "before any run: unset %s to resume, or start a new session", name,
		               value, name);
	*what = ncclvars_decides(name) & (NCCLVARS_DECIDES_ALGO | NCCLVARS_DECIDES_PROTO)
	        ? ENV_INHERITED_DECIDES : ENV_INHERITED_PINNED;
	return 0;
}

int env_inherited_check(char *const *user_env, const space *sp, bool resumed,
                        struct env_pins *pins, env_inherited_fn *report, void *ctx,
                        char *err, size_t errlen)
{
	for (size_t i = 0; user_env && user_env[i]; i++) {
		const char *e = user_env[i], *eq = strchr(e, '=');
		char name[NCCLVARS_NAME_MAX];
		enum env_inherited what = ENV_INHERITED_PINNED;
		size_t len;
		int rc;

		if (!eq || eq == e || (size_t)(eq - e) >= sizeof name)
			continue;   /* no NCCL name is this long (ncclvars_name_check) */
		len = (size_t)(eq - e);
		memcpy(name, e, len);
		name[len] = '\0';
		if (space_mentions(sp, name) || env_pins_get(pins, name))
			continue;   /* the space or the journal decides it */
		rc = judge(name, eq + 1, resumed, &what, err, errlen);
		if (rc < 0)
			return -1;
		if (rc > 0)
			continue;
		if ((what == ENV_INHERITED_PINNED || what == ENV_INHERITED_DECIDES) &&
		    env_pins_add(pins, name, eq + 1) != 0)
			return fs_errf(err, errlen, "out of memory pinning %s", name);
		if (report)
			report(ctx, what, name, eq + 1);
	}
	return 0;
}
