/* progress.h - what a session shows while it runs and at its end, printed from what the
 * caller hands over (where to print, the run, the figures), so the printer knows nothing
 * of the loop or the journal. Everything a model produced is labelled MODEL. All silent
 * when out->progress is NULL; none can fail. Not part of the public API. */
#ifndef NCCLTUNE_SESSION_PROGRESS_H
#define NCCLTUNE_SESSION_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

#include "result/summary.h"
#include "run/workload.h"
#include "search/prune.h"
#include "session/notes.h"
#include "session/runs.h"

/* What a progress line shows besides the run itself. */
struct session_figures {
	size_t runs;                 /* runs so far, this one included */
	int budget;
	const char *model;           /* the model's name ("": unknown) when the figures are
	                              * modelled; NULL: measured */
	double best_us;              /* the search's best so far; NAN: none */
	double base_us;              /* the baseline's; NAN: none */
	size_t failures;             /* runs so far that did not come back ok */
	double eta_s;                /* what the rest of the budget may take */
	const char *env;             /* what the run sets ("": all searched variables unset);
	                              * NULL: the baseline, NCCL's defaults */
	size_t choices;              /* a sweep run: the inner choices it swept (else 0) */
	double choices_per_s;        /* ... per second of its wall time */
	double inner_rate;           /* two-level: the sweeps' inner choices per second so far
	                              * (their wall time beyond a process start), which eta_s
	                              * is computed from; 0: none yet */
	size_t sweeps_left;          /* ... and the sweeps the search has left in eta_s */
};

/* What the end-of-session summary shows besides results.json. */
struct session_ending {
	const char *dir;             /* the session folder */
	const char *self;            /* how to run nccltune ("nccltune", or its path) */
	const struct workload *wl;
	const char *model;           /* as in session_figures */
	bool auto_model;             /* the model stood in: no GPU was visible */
	const prune *pr;             /* the failure rules learned */
	const struct session_run *runs;
	size_t nruns;
	int budget;
	enum session_stop stop;
};

/* One line per run, or the updating line on a terminal. */
void session_progress_run(struct session_output *out, const struct session_run *r,
                          const struct session_figures *fig);
/* The end-of-session summary from results.json as the loader read it (nothing when it
 * is NULL). */
void session_print_summary(struct session_output *out, const struct session_ending *end,
                           const struct summary *results);

#endif
