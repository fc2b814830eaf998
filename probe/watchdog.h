/* watchdog.h - the probe's last line of defence against a hang. The measurement polls
 * and times out by itself (measure.c); the watchdog covers what polling cannot: a CUDA
 * or NCCL call that blocks inside the library. When the current step has made no
 * progress for its timeout plus a grace period, a thread calls `fire`, which reports
 * the stuck step and ends the process (it must not return). */
#ifndef NCCLTUNE_PROBE_WATCHDOG_H
#define NCCLTUNE_PROBE_WATCHDOG_H

#include "probe.h"

struct watchdog;

/* Runs on the watchdog thread with the step that overran and how long it had been
 * silent. Must end the process (_exit) after reporting. */
typedef void (*watchdog_fire_fn)(void *arg, enum probe_step step, double silent_s);

/* Start the thread. timeout_s + grace_s of silence in one step fires. Returns NULL when
 * the thread cannot be created (the probe then runs without the backstop). */
struct watchdog *watchdog_start(double timeout_s, double grace_s, watchdog_fire_fn fire,
                                void *arg);

/* Note progress in `step` (a new step, or life inside a long one). Accepts NULL. */
void watchdog_kick(struct watchdog *wd, enum probe_step step);

/* Stop and join the thread, free it. Accepts NULL. */
void watchdog_stop(struct watchdog *wd);

#endif
