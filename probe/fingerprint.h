/* fingerprint.h - `nccltune-probe --fingerprint`: one JSON object describing the machine
 * (docs/formats.md, schema nccltune-fingerprint/1). Stable across runs: no times, no
 * process ids. A machine without a usable GPU still gets a fingerprint (gpu_count 0,
 * the reason under "warnings"), so `nccltune check` can say what changed. */
#ifndef NCCLTUNE_PROBE_FINGERPRINT_H
#define NCCLTUNE_PROBE_FINGERPRINT_H

/* Build the fingerprint as one line of JSON plus a newline, malloc'd (the caller frees).
 * Returns NULL only when out of memory; everything the probe cannot find out is written
 * as "unknown" and explained under "warnings". ranks_per_gpu (--ranks-per-gpu) above 1
 * adds "ranks_per_gpu": the runs share each GPU among that many ranks (absent at 1, so
 * an ordinary machine's fingerprint is what it always was). */
char *fingerprint_format(int ranks_per_gpu);

#endif
