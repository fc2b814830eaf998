/* fuzz.h - the one entry point every fuzz target defines (libFuzzer's), so the same
 * target links against libFuzzer (clang, -Dfuzz=true) or against replay.c, which runs a
 * committed corpus through it as an ordinary test in every build. */
#ifndef NCCLTUNE_FUZZ_H
#define NCCLTUNE_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Parse `size` bytes of outside data; must never crash, leak or hang, whatever they
 * are. Returns 0 (libFuzzer's convention; other values are reserved). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
