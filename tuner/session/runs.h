/* runs.h - the vocabulary of a session's runs, at the bottom of session/: the phases,
 * what one run is, why a search ends, and what the runs so far say (the best point, the
 * last outcome of a point, whether a configuration ever computed a wrong sum, session
 * time). The printer includes this; nothing declared here calls the loop, the journal
 * or the printer. Not part of the public API. */
#ifndef NCCLTUNE_SESSION_RUNS_H
#define NCCLTUNE_SESSION_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nccltune.h"
#include "run/outcome.h"
#include "space/space.h"
#include "decide/decide.h"
#include "decide/runlog.h"

/* Why the search ended. */
enum session_stop { STOP_NONE, STOP_BUDGET, STOP_TIME, STOP_EXHAUSTED, STOP_STUCK };

/* Room for one more element in arr (n used of *cap, each `size` bytes): arr itself, or
 * arr moved by realloc to twice its capacity (`first` when empty, *cap updated). NULL
 * when out of memory; arr and *cap are then unchanged. */
void *session_array_grow(void *arr, size_t *cap, size_t n, size_t size, size_t first);
/* "baseline", "search", "retry", "warm", "final", "try"; can't fail. */
const char *session_phase_name(enum session_phase ph);

/* Runs the baseline, warm start and search may use (decide_search_limit). */
size_t session_search_limit(const nccltune_session *s);
/* Apply the extensions of the budget (s->run.ext) whose run the session has reached:
 * a resumed session replays its journal under the budget each run was made with, and
 * goes on with the larger one from the run the extension was made at. True when one was
 * applied now. Can't fail. */
bool session_budget_step(nccltune_session *s);
/* The mean wall time of the plain runs that worked (runlog_plain_wall); 0: none. */
double session_plain_wall(const nccltune_session *s);
/* The runs a time limit keeps time for after the search (decide_final_time_runs). */
int session_final_time_runs(const nccltune_session *s);

/* The monotonic clock in seconds; can't fail. */
double session_clock(void);
/* Session time in seconds, summed over resumes; can't fail. */
double session_elapsed(const nccltune_session *s);
/* The deadline of a probe run whose own is `own` seconds: capped by the time the
 * session's --time-limit leaves (*capped true; <= 0: none left). Can't fail. */
double session_deadline(const nccltune_session *s, double own, bool *capped);
/* Has the session's --time-limit passed (false without one)? Can't fail. */
bool session_time_up(const nccltune_session *s);
/* Did the probe say its figures come from a model? */
bool session_is_model(const nccltune_session *s);
/* What run r sets, as "NCCL_A=1 NCCL_B=2" ("" for the baseline); returns buf. */
char *session_run_describe(const nccltune_session *s, const struct session_run *r, char *buf,
                           size_t len);

/* The best objective measured so far in the search (not the final phase), with its
 * point when p is non-NULL. Returns 1 when there is one, else 0 (*best_us untouched). */
int session_point_best(const nccltune_session *s, double *best_us, struct point *p);
/* The run log of s for the final phase (decide/runlog.h): a view of its runs. */
struct runlog session_runlog(const nccltune_session *s);
/* The last outcome learned for p (search, warm or retry), or NULL. */
const struct outcome *session_known_outcome(const nccltune_session *s, const struct point *p);
/* Did p ever compute a wrong sum? Such a point is never recommended. */
bool session_ever_wrong(const nccltune_session *s, const struct point *p);
/* The last outcome of try try_no's own runs (try, retry), or NULL when it never ran. */
const struct outcome *session_try_outcome(const nccltune_session *s, size_t try_no);
/* Did the configuration (p, try_no) ever compute a wrong sum? */
bool session_config_ever_wrong(const nccltune_session *s, const struct point *p,
                               size_t try_no);
/* The baseline as a point of the space, when every dimension can be left unset: true
 * with *p, else false. */
bool session_baseline_point(const nccltune_session *s, struct point *p);
/* The first baseline run (NCCL's defaults, not a retry) that ran ok, or NULL: what NCCL
 * ran and measured by default. */
const struct session_run *session_baseline_ok_run(const nccltune_session *s);
/* The baseline's last outcome (its run or its retry), or NULL when it never ran. */
const struct outcome *session_baseline_outcome(const nccltune_session *s);

#endif
