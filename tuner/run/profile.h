/* profile.h - server profiles (--like sglang|vllm|FILE): what a serving framework does to
 * the environment before NCCL starts, and what it routes away from NCCL. Data files
 * (profiles/NAME.json, nccltune-profile/1, each entry citing the source line it follows)
 * embedded at build time, or a file of your own; read strictly with common/jsonread. */
#ifndef NCCLTUNE_PROFILE_H
#define NCCLTUNE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROFILE_SCHEMA "nccltune-profile/1"
#define PROFILE_ENV_MAX 8
#define PROFILE_TEXT_MAX 256

struct profile_var {
	char name[64];               /* [A-Z][A-Z0-9_]*: NCCL_* or CUDA_DEVICE_MAX_CONNECTIONS */
	char value[64];
	bool unless_symmetric;       /* "unless": "symmetric": left unset in a symmetric run */
	char source[PROFILE_TEXT_MAX];
};

struct profile {
	char name[32];
	char checked_against[PROFILE_TEXT_MAX];  /* the framework version and file whose
	                                          * settings it copies (required) */
	size_t n;
	struct profile_var env[PROFILE_ENV_MAX];
	bool has_symmetric;          /* how the server turns NCCL's symmetric kernels on */
	char symm_switch[PROFILE_TEXT_MAX], symm_needs[PROFILE_TEXT_MAX];
	bool has_window;             /* sizes the server sends to its own all-reduce */
	uint64_t window_min, window_max;   /* bytes per rank, both inclusive */
	char window_links[16];       /* "nvlink" or "any" */
	char window_source[PROFILE_TEXT_MAX];
};

/* An embedded profile file (scripts/embed_json.py). Ends with a NULL name. */
struct profile_builtin { const char *name; const char *text; size_t len; };
extern const struct profile_builtin profiles_builtin[];   /* ends with a NULL name */
extern const size_t profiles_builtin_count;

/* Parse the text of a profile; `origin` starts every message. Returns 0 with *p filled,
 * or -1 with "ORIGIN: key: why" in err (unknown keys, a variable name outside
 * NCCL_* / CUDA_DEVICE_MAX_CONNECTIONS, min above max are refused). */
int profile_parse(const char *text, size_t len, const char *origin, struct profile *p,
                  char *err, size_t errlen);

/* `like` is a built-in name (sglang, vllm) or a file (it holds a '/' or ends in .json).
 * Returns 0, or -1 with a message listing the built-in names. */
int profile_load(const char *like, struct profile *p, char *err, size_t errlen);

/* May a server profile (or a journal's or results file's record of one) set
 * name=value? CUDA_DEVICE_MAX_CONNECTIONS (an integer 1..32), or an NCCL variable
 * common/ncclvars knows, of role tune or setting, with a value it accepts: never a
 * loader (a library or file NCCL opens) or logging variable, never an unknown name.
 * Returns 0, or -1 with the reason in why. */
int profile_var_check(const char *name, const char *value, char *why, size_t whylen);

/* The variables a symmetric run (--window symmetric, or a candidate with the space's
 * server.symmetric on) leaves unset whatever the profile sets: cuMem, because symmetric
 * windows are cuMem mappings (the session sets it to 1), and NVLS, which the servers turn
 * on with symmetric memory (SGLang forces 1; unset, NCCL's default 2 turns it on where
 * the hardware has NVLink SHARP). A profile that sets one must mark it "unless":
 * "symmetric", and may mark no other. */
#define PROFILE_SYMM_CUMEM "NCCL_CUMEM_ENABLE"
#define PROFILE_SYMM_NVLS "NCCL_NVLS_ENABLE"

/* Is `name` one of the two above? */
bool profile_symmetric_var(const char *name);

/* The value p sets for `name`, or NULL. */
const char *profile_get(const struct profile *p, const char *name);

#endif
