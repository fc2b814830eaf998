/* runlog.h - the run log the final phase reads (decide.h): what one probe run is, its
 * phase, and what the runs so far say (the last outcome of a point or a try, wrong sums,
 * the baseline). The session appends the runs; everything here only reads them. Not
 * part of the public API. */
#ifndef NCCLTUNE_DECIDE_RUNLOG_H
#define NCCLTUNE_DECIDE_RUNLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "result/record.h"   /* enum session_phase */
#include "run/outcome.h"
#include "search/prune.h"
#include "search/twolevel.h"
#include "space/space.h"

/* One probe run. */
struct session_run {
	enum session_phase phase;
	bool has_point;          /* false for the baseline and off-space tries */
	struct point p;
	size_t try_no;           /* a run of the try try_no (1-based, any phase); 0: not a try */
	uint32_t unset;          /* PHASE_ABLATE: bit d set: dimension d of p left unset (a
	                          * variable without an unset level); 0 otherwise */
	struct outcome o;
	double t_s;              /* session time when it ended (summed over resumes) */
	size_t nchoices;         /* PHASE_SWEEP: the inner choices it swept */
	bool in_flight;          /* PHASE_SWEEP: it failed with a choice in flight, whose
	                          * full point is p (not its outer point's failure) */
};

/* A read-only view of a session's runs: the caller owns everything it points to. */
struct runlog {
	const space *sp;                    /* the space searched */
	const twolevel *tl;                 /* its split (two-level sessions), or NULL */
	const prune *pr;                    /* what the failures taught, or NULL */
	const struct session_run *runs;     /* in run order */
	size_t nruns;
	const struct twolevel_inner *inner; /* every inner result of the sweeps, in run order */
	size_t ninner;
	/* The final phase's own runs start here: a final or ablate run before it belongs to
	 * a final phase that an extension of the budget ended (`--resume DIR --budget N`);
	 * its points' search outcomes still count, its repeats are not this phase's. */
	size_t final_from;
};

/* Is r a run of the configuration (p, try_no)? p NULL: the baseline (try_no 0) or the
 * off-space try try_no. A run with dimensions left unset (r->unset) is never a point's.
 * Can't fail. */
bool runlog_same_config(const struct session_run *r, const struct point *p, size_t try_no,
                        size_t dims);
/* The last outcome learned for p (search, warm or retry), or NULL. */
const struct outcome *runlog_known_outcome(const struct runlog *l, const struct point *p);
/* Did p ever compute a wrong sum? Such a point is never recommended. */
bool runlog_ever_wrong(const struct runlog *l, const struct point *p);
/* The last outcome of try try_no's own runs (try, retry), or NULL when it never ran. */
const struct outcome *runlog_try_outcome(const struct runlog *l, size_t try_no);
/* Did the configuration (p, try_no) ever compute a wrong sum? */
bool runlog_config_ever_wrong(const struct runlog *l, const struct point *p, size_t try_no);
/* Is the strategy's ranked point `ranked` the candidate `full` (two-level: its outer
 * point)? Can't fail. */
bool runlog_rank_match(const struct runlog *l, const struct point *full,
                       const struct point *ranked);
/* The baseline as a point of sp, when every dimension can be left unset: true with *p,
 * else false. */
bool runlog_baseline_point(const space *sp, struct point *p);
/* The first baseline run (NCCL's defaults, not a retry) that ran ok, or NULL: what NCCL
 * ran and measured by default. */
const struct session_run *runlog_baseline_ok_run(const struct runlog *l);
/* The baseline's last outcome (its run or its retry), or NULL when it never ran. */
const struct outcome *runlog_baseline_outcome(const struct runlog *l);
/* Does the configuration (p less the dimensions in `unset`) set nothing that acts at
 * `bytes`: no process-level variable, and no per-size rule of that size? Then NCCL runs
 * its defaults there. Can't fail. */
bool runlog_defaults_at(const space *sp, const struct point *p, uint32_t unset, size_t bytes);
/* The mean wall time of the plain (not sweep) runs that worked, 0 when none: what one
 * final round's run takes. Can't fail. */
double runlog_plain_wall(const struct runlog *l);

#endif
