/* locate.h - where nccltune's own probes and its tuner plugin are: whether a GPU is
 * visible, the probe for the GPUs or for a machine model, its command line quoted for a
 * shell-like split, and the plugin file (checked by loading it).
 * A session uses it to choose its probe, the CLI's check through nccltune_probe_command
 * (include/nccltune.h); which probe to choose when is the session's policy, not this. */
#ifndef NCCLTUNE_LOCATE_H
#define NCCLTUNE_LOCATE_H

#include <stdbool.h>
#include <stddef.h>

/* Is a GPU visible: a /dev/nvidiaN node (N < 16) exists, or `nvidia-smi -L` (20 s at
 * most) lists one? Can't fail: false when it cannot tell. */
bool locate_gpu_visible(void);

/* The path of nccltune-probe (model NULL) or of nccltune-model-probe (any model), found
 * as runner_find_tool finds nccltune's programs. Returns 0 with the path in buf, or -1
 * with a message in err saying where it looked. */
int locate_probe(const char *model, char *buf, size_t len, char *err, size_t errlen);

/* nccltune's own NCCL tuner plugin, as the tuner finds its probes: $NCCLTUNE_PLUGIN, then
 * next to the running program in the build tree (../plugin, ../../plugin), then the
 * install's libdir. A candidate counts only when it is a regular file that dlopen loads
 * and whose nccltune_tuner_control_version() answers 1: that is what makes it nccltune's
 * plugin, not just a file of that name. Returns 0 with its absolute path in buf and
 * *build_tree true when it came from the build tree (not installed), or -1 with a
 * message saying where it looked and why each candidate failed. */
int locate_plugin(char *buf, size_t len, bool *build_tree, char *err, size_t errlen);

/* Is `path` nccltune's plugin (the checks of locate_plugin)? Returns 0, or -1 with the
 * reason naming path. */
int locate_plugin_check(const char *path, char *err, size_t errlen);

/* How the user can run this nccltune again, for the commands nccltune suggests ("use
 * it: CMD export ..."): "nccltune" when that name in PATH is this very program (or the
 * running program is not called nccltune: an embedding program), else the running
 * program's absolute path (/proc/self/exe), quoted for a shell when it needs it (after
 * scripts/tune.sh, build/cli/nccltune is not in PATH). Into buf; returns buf. Can't
 * fail: "nccltune" when it cannot tell. */
char *locate_self_command(char *buf, size_t len);

/* Append `word` to buf (a space first unless *used is 0) single-quoted, as a POSIX shell
 * (and runner_split_command) reads it back; *used is the length so far. Returns 0, or -1
 * when buf is too small (buf then holds a cut word). */
int locate_quote_word(char *buf, size_t len, size_t *used, const char *word);

#endif
