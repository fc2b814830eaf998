/* reaper.h - the descendants a probe leaves behind. A probe's child that calls setsid()
 * or setpgid(0, 0) leaves the probe's process group, so killing the group misses it; the
 * reaper catches it: while it is on, the process is a child subreaper
 * (PR_SET_CHILD_SUBREAPER), so every orphaned descendant becomes its own child, and
 * reaper_sweep kills and reaps each child it did not have when the reaper started
 * (those are the embedding program's, left alone). The runner sweeps after each run it
 * is given a reaper for. Linux only. */
#ifndef NCCLTUNE_REAPER_H
#define NCCLTUNE_REAPER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct reaper {
	bool on;                /* started and not stopped */
	int was_subreaper;      /* the flag before start, restored by stop */
	pid_t *keep;            /* children the process had at start */
	size_t nkeep;
};

/* Start the reaper: note the children the process has now and become a child
 * subreaper. Returns 0, or -1 with a message (out of memory, prctl refused); the reaper
 * is then off and sweeps do nothing. */
int reaper_start(struct reaper *r, char *err, size_t errlen);

/* SIGKILL and reap every child of the process that is not one the reaper noted at
 * start, again until none is left (killing one re-parents its own children to us),
 * waiting up to 2 s in all for the members of process group `group` (> 0: a probe's
 * group, already sent SIGKILL; 0: none) to die so that their escaped children reach
 * us. Returns how many it ended. Does nothing when r is NULL or off. Can't fail. */
size_t reaper_sweep(struct reaper *r, pid_t group);

/* Sweep once more, restore the subreaper flag, free; accepts a reaper never started. */
void reaper_stop(struct reaper *r);

#endif
