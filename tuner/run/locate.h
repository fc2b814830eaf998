/* locate.h - where nccltune's own probes are: whether a GPU is visible, the probe for
 * the GPUs or for a machine model, and its command line quoted for a shell-like split.
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

#endif
