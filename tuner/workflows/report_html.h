/* report_html.h - what report.c and report_sizes.c share: HTML escaping and the
 * per-size sections of report.html. Not part of the public API. */
#ifndef NCCLTUNE_REPORT_HTML_H
#define NCCLTUNE_REPORT_HTML_H

#include <stdio.h>

#include "result/summary.h"

/* s HTML-escaped into o (& < > " ' and ':' as entities, control bytes as '?'); NULL
 * writes nothing. Can't fail (stream errors are the caller's to check). */
void report_esc(FILE *o, const char *s);
/* A latency as text ("23.4 us", "1.20 ms"), escaped. */
void report_esc_us(FILE *o, double us);
/* The per-size table of results.json (each tuned and guard size: baseline and best with
 * the paired ratio and its interval, the guards' verdict) and the ablation of the best's
 * variables; nothing when the result has neither. */
void report_section_sizes(FILE *o, const struct summary *s);
/* The step and its all-reduce part (compute between the all-reduces), and what to turn
 * on in the server for a best with symmetric memory; nothing when neither applies. */
void report_server(FILE *o, const struct summary *s);
/* best.rules, the per-size rules nccltune's tuner plugin applies (what is deployed), as
 * show prints them; nothing when the result has no rules. */
void report_rules(FILE *o, const struct summary *s);
/* "How to apply": the install command as it can be run when the result is recommended,
 * else why there is nothing to install (report_apply.c). */
void report_section_apply(FILE *o, const struct summary *s);
/* The machine (fingerprint, GPUs, topology) and the workload with each collective's
 * tuned latency (report_machine.c). */
void report_section_machine(FILE *o, const struct summary_fingerprint *fp);
void report_section_workload(FILE *o, const struct summary *s);
/* Every journal run with its latency and what NCCL ran at each size. */
void report_section_runs(FILE *o, const struct summary *s);

#endif
