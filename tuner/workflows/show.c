/* show.c - the report's content as plain text for a terminal: result, tuned environment,
 * top configurations, families, failures, pruned regions, per-size latency; of a session
 * that has not finished, the best so far from its journal. Aligned
 * columns; every string from the files has its control characters escaped
 * (fs_escape_text) so a hostile results.json cannot drive the terminal. */
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "ncclvars.h"
#include "nccltune.h"
#include "result/summary.h"

/* A sanitised copy of s (NULL reads as "") in the array b, for printing. */
#define CLEAN(s, b) clean_str((s), (b), sizeof(b))

static const char *clean_str(const char *s, char *buf, size_t len)
{
	return fs_escape_text(s, buf, len);
}

static void row(FILE *o, const char *key, const char *value)
{
	char b[1200];

	fprintf(o, "  %-10s %s\n", key, CLEAN(value, b));
}

static void overview(FILE *o, const struct summary *s)
{
	char buf[1024], line[1200];
	size_t ok = 0, best_run = 0;
	double best = INFINITY;
	bool have_best = false;

	fprintf(o, "nccltune result %s\n", CLEAN(s->origin, line));
	if (s->model) {
		snprintf(line, sizeof(line), "MODEL %s - not a measurement", s->model);
		row(o, "source", line);
	} else {
		row(o, "source", s->source);
	}
	row(o, "machine", summary_describe_machine(&s->fp, buf, sizeof(buf)));
	row(o, "workload", summary_describe_workload(&s->workload, buf, sizeof(buf)));
	row(o, "result", summary_describe_gain(s, buf, sizeof(buf)));
	/* with compute between the all-reduces: the step and the all-reduces' part of it */
	if (summary_describe_step(s, &s->baseline, buf, sizeof(buf))) {
		snprintf(line, sizeof(line), "baseline: %s", buf);
		row(o, "step", line);
	}
	if (summary_describe_step(s, &s->best, buf, sizeof(buf))) {
		snprintf(line, sizeof(line), "best: %s", buf);
		row(o, "step", line);
	}
	if (s->has_noise) {
		snprintf(line, sizeof(line), "one run varies by about %.1f%% (spread of the final "
		         "repeats of %ld configuration(s))", 100.0 * s->noise_sd, s->noise_configs);
		row(o, "noise", line);
	}
	for (size_t i = 0; i < s->nruns; i++) {
		const struct summary_run *r = &s->runs[i];

		if (isnan(r->objective_us))
			continue;
		ok++;
		if (strcmp(r->phase, "baseline") != 0 && r->objective_us < best) {
			best = r->objective_us;
			best_run = (size_t)r->run;
			have_best = true;
		}
	}
	snprintf(line, sizeof(line), "%s%s%s", s->strategy ? "strategy " : "",
	         s->strategy ? s->strategy : "", s->strategy ? ", " : "");
	if (s->has_seed)
		snprintf(line + strlen(line), sizeof(line) - strlen(line), "seed %.0f, ", s->seed);
	if (s->budget >= 0)
		snprintf(line + strlen(line), sizeof(line) - strlen(line), "budget %ld, ", s->budget);
	snprintf(line + strlen(line), sizeof(line) - strlen(line), "%ld evaluations", s->evaluations);
	if (s->has_journal) {
		snprintf(line + strlen(line), sizeof(line) - strlen(line),
		         "; journal: %zu runs, %zu ok, %zu failed", s->nruns, ok, s->nruns - ok);
		if (have_best)
			snprintf(line + strlen(line), sizeof(line) - strlen(line), ", best at run %zu",
			         best_run);
	}
	row(o, "search", line);
	if (s->journal_error[0]) {
		snprintf(line, sizeof(line), "unreadable, runs left out: %s", s->journal_error);
		row(o, "journal", line);
	}
	snprintf(line, sizeof(line), "%s by %s %s", s->created ? s->created : "(date unknown)",
	         s->tool_name ? s->tool_name : "nccltune", s->tool_version ? s->tool_version : "");
	row(o, "created", line);
}

static size_t name_width(const struct summary_env *env, size_t min)
{
	size_t w = min;

	for (size_t i = 0; i < env->n; i++)
		if (strlen(env->v[i].name) > w)
			w = strlen(env->v[i].name);
	return w;
}

/* A best with symmetric memory: what to turn on in the server (fixed text) and whether
 * NCCL ran a symmetric kernel; a server option, never exported. */
static void symmetric(FILE *o, const struct summary *s)
{
	const char *lines[SUMMARY_SYMMETRIC_LINES_MAX];
	size_t n;

	if (!s->best.present || !s->best.symmetric)
		return;
	n = summary_symmetric_lines(s->server_like, lines, SUMMARY_SYMMETRIC_LINES_MAX);
	fputs("  server option (not an NCCL variable, not exported): symmetric memory; turn it "
	      "on in the server:\n", o);
	for (size_t i = 0; i < n; i++)
		fprintf(o, "    %s\n", lines[i]);
	fprintf(o, "  %s\n", summary_kernel_words(s->best.kernel));
}

static void tuned_env(FILE *o, const struct summary *s)
{
	char a[NCCLVARS_NAME_MAX], b[NCCLVARS_VALUE_MAX + 1];
	int w = (int)name_width(&s->best.env, 8);

	fputs("\ntuned environment\n", o);
	if (!s->best.present) {
		fputs("  (no configuration worked: nothing to export)\n", o);
		return;
	}
	if (summary_unmeasured(s)) {
		char why[256];

		fprintf(o, "  (%s: nothing is exported; measured once:)\n",
		        summary_describe_unmeasured(s, why, sizeof(why)));
	}
	if (s->best.env.n == 0 && s->nrules > 0)
		fputs("  (no variables: the per-size rules below, through nccltune's tuner plugin)\n",
		      o);
	else if (s->best.env.n == 0 && s->best.symmetric)
		fputs("  (no variables: symmetric memory in the server, below)\n", o);
	else if (s->best.env.n == 0)
		fputs("  (NCCL's defaults were best: nothing to set)\n", o);
	for (size_t i = 0; i < s->best.env.n; i++)
		fprintf(o, "  %-*s  %s\n", w, CLEAN(s->best.env.v[i].name, a),
		        CLEAN(s->best.env.v[i].value, b));
	symmetric(o, s);
	if (s->pinned.n) {
		char d[2048], c[2048];

		fprintf(o, "  pinned (set when the session ran; the exports set them too, marked "
		        "pinned): %s\n", CLEAN(summary_describe_env(&s->pinned, d, sizeof(d)), c));
	}
}

static void top(FILE *o, const struct summary *s)
{
	if (s->ntop == 0)
		return;
	fprintf(o, "\ntop configurations (re-measured first, fastest first; then measured once)"
	        "\n  %3s  %10s  %-23s  %8s  %7s  %s\n", "#",
	        "time/step", "95% interval", "vs base", "repeats", "environment");
	for (size_t i = 0; i < s->ntop; i++) {
		const struct summary_measure *m = &s->top[i];
		char t[32], lo[32], hi[32], ci[80] = "", ratio[16] = "", rep[16] = "", env[2048],
		     clean[2048];

		summary_format_us(m->objective_us, t, sizeof(t));
		if (m->has_ci)
			snprintf(ci, sizeof(ci), "%s - %s", summary_format_us(m->ci_lo, lo, sizeof(lo)),
			         summary_format_us(m->ci_hi, hi, sizeof(hi)));
		/* no ratio is stated for a result that was not measured enough */
		if (s->baseline.present && m->objective_us > 0 && !summary_unmeasured(s))
			snprintf(ratio, sizeof(ratio), "%.2fx", s->baseline.objective_us / m->objective_us);
		if (m->repeats)
			snprintf(rep, sizeof(rep), "%d", m->repeats);
		fprintf(o, "  %3zu  %10s  %-23s  %8s  %7s  %s%s%s\n", i + 1, t, ci, ratio, rep,
		        CLEAN(summary_describe_env(&m->env, env, sizeof(env)), clean),
		        m->symmetric ? " +symmetric memory (server)" : "",
		        m->repeats > 1 ? "" : "  (measured once: listed after the re-measured)");
	}
}

/* The user's own configurations (--try), re-measured next to the baseline. */
static void tries(FILE *o, const struct summary *s)
{
	if (s->ntries == 0)
		return;
	fprintf(o, "\nyour configurations (--try)\n  %3s  %10s  %-23s  %8s  %-9s  %s\n", "#",
	        "time/step", "95% interval", "vs base", "outcome", "environment");
	for (size_t i = 0; i < s->ntries; i++) {
		const struct summary_try *t = &s->tries[i];
		char tm[32] = "-", lo[32], hi[32], ci[80] = "", ratio[16] = "", oc[32], env[2048],
		     clean[2048];

		if (t->m.present)
			summary_format_us(t->m.objective_us, tm, sizeof(tm));
		if (t->m.has_ci)
			snprintf(ci, sizeof(ci), "%s - %s", summary_format_us(t->m.ci_lo, lo, sizeof(lo)),
			         summary_format_us(t->m.ci_hi, hi, sizeof(hi)));
		if (t->has_ratio)
			snprintf(ratio, sizeof(ratio), "%.2fx", t->ratio);
		fprintf(o, "  %3zu  %10s  %-23s  %8s  %-9s  %s%s\n", i + 1, tm, ci, ratio,
		        CLEAN(t->outcome, oc),
		        CLEAN(summary_describe_env(&t->m.env, env, sizeof(env)), clean),
		        t->in_space ? "" : "  (outside the space)");
		if (t->has_tuned && t->tuned > 1.0) {
			snprintf(ci, sizeof(ci), " [95%% %.2fx .. %.2fx]", t->tuned_lo, t->tuned_hi);
			fprintf(o, "       the tuned best is %.2fx faster%s\n", t->tuned,
			        isnan(t->tuned_lo) ? "" : ci);
		} else if (t->has_tuned && t->tuned == 1.0) {
			fputs("       it is the tuned best\n", o);
		}
	}
}

static void families(FILE *o, const struct summary *s)
{
	struct summary_family *f = NULL;
	size_t nf = 0;

	/* one family (every per-size session: the rules choose, NCCL_PROTO and NCCL_ALGO
	 * stay unset) compares nothing */
	if (summary_families(s, &f, &nf) < 0 || nf < 2) {
		free(f);
		return;
	}
	fprintf(o, "\nby protocol / algorithm (journal runs, baseline excluded)\n"
	        "  %-28s  %5s  %5s  %10s  %10s\n", "NCCL_PROTO / NCCL_ALGO", "runs", "ok", "best",
	        "median");
	for (size_t k = 0; k < nf; k++) {
		char b[32], m[32];

		fprintf(o, "  %-28s  %5zu  %5zu  %10s  %10s\n", f[k].label, f[k].runs, f[k].ok,
		        summary_format_us(f[k].best, b, sizeof(b)),
		        summary_format_us(f[k].median, m, sizeof(m)));
	}
	free(f);
}

static void failures(FILE *o, const struct summary *s)
{
	char env[2048], clean[2048], st[32], reason[1100];

	if (s->nfailures) {
		fprintf(o, "\nfailures (alike runs grouped)\n  %5s  %-9s  %s\n", "runs", "stage",
		        "environment [per-size choice]");
		for (size_t i = 0; i < s->nfailures; i++) {
			const struct summary_failure *f = &s->failures[i];

			fprintf(o, "  %5ld  %-9s  %s", f->count, CLEAN(f->stage, st),
			        CLEAN(summary_describe_env(&f->env, env, sizeof(env)), clean));
			if (f->choice)
				fprintf(o, " [%s]", CLEAN(f->choice, reason));
			fputc('\n', o);
			if (f->error)
				fprintf(o, "  %5s  %-9s  error: %s\n", "", "", CLEAN(f->error, reason));
		}
	}
	if (s->npruned) {
		fputs("\npruned (never run again)\n", o);
		for (size_t i = 0; i < s->npruned; i++) {
			const struct summary_env *w = &s->pruned[i].when;

			summary_describe_env(w, env, sizeof(env));
			/* the tuner's reasons start with the region already ("NCCL_PROTO=Simple
			 * with NCCL_ALGO unset: ...") */
			if (w->n > 0 && strncmp(s->pruned[i].reason, w->v[0].name, strlen(w->v[0].name)) == 0)
				fprintf(o, "  %s\n", CLEAN(s->pruned[i].reason, reason));
			else
				fprintf(o, "  %s: %s\n", CLEAN(env, clean), CLEAN(s->pruned[i].reason, reason));
		}
	}
}

/* best.rules: the per-size choices the plugin applies (null: NCCL's). */
static void rules(FILE *o, const struct summary *s)
{
	if (!s->has_rules)
		return;
	fputs("\nper-size rules (applied by nccltune's tuner plugin; - is NCCL's choice)\n", o);
	if (s->nrules == 0) {
		fputs("  none: every size is left to NCCL\n", o);
		return;
	}
	fprintf(o, "  %12s  %-10s  %-8s  %-5s  %s\n", "bytes", "algorithm", "protocol", "CTAs",
	        "NCCL ran (measured)");
	for (size_t i = 0; i < s->nrules; i++) {
		const struct summary_rule *r = &s->rules[i];
		const char *a = r->algo >= 0 ? ncclvars_word_name(NCCLVARS_ALGOS, (size_t)r->algo) : NULL;
		const char *p = r->proto >= 0 ? ncclvars_word_name(NCCLVARS_PROTOS, (size_t)r->proto)
		                              : NULL;
		char c[16], ran[96] = "-";

		snprintf(c, sizeof c, "%d", r->ctas);
		if (r->has_ran) {
			/* NCCL clamps CTAs to its communicator's channels; another algorithm or
			 * protocol than asked means it did not take the rule */
			bool other = (r->algo >= 0 && r->ran_algo != r->algo) ||
			             (r->proto >= 0 && r->ran_proto != r->proto);

			snprintf(ran, sizeof ran, "%s/%s on %d CTA(s)%s", r->ran_algo_word,
			         r->ran_proto_word, r->ran_ctas,
			         other ? " - not the rule's choice"
			               : r->ctas > 0 && r->ran_ctas != r->ctas ? " (NCCL's channel limit)"
			                                                       : "");
		}
		fprintf(o, "  %12llu  %-10s  %-8s  %-5s  %s\n", (unsigned long long)r->bytes,
		        a ? a : "-", p ? p : "-", r->ctas > 0 ? c : "-", ran);
	}
}

/* results.json "per_size" and "guards": every tuned and guard size, the baseline against
 * the best in the final rounds. */
static void guards(FILE *o, const struct summary *s)
{
	char b1[32], b2[32], v[64];

	if (s->nper_size == 0)
		return;
	/* results.json holds best / baseline; shown as the headline's gain is, "x faster"
	 * (baseline / best: below 1.00x is slower), the interval's ends swapped */
	fprintf(o, "\nper size, final rounds (guards: measured, never tuned)\n  %12s  %-6s  %10s  "
	        "%10s  %s\n", "bytes", "role", "baseline", "best", "speed-up [95%]");
	for (size_t i = 0; i < s->nper_size; i++) {
		const struct summary_size_cmp *c = &s->per_size[i];
		char iv[64] = "";

		if (c->has_ci && c->ci_lo > 0)
			snprintf(iv, sizeof iv, " [%.2fx .. %.2fx]", 1.0 / c->ci_hi, 1.0 / c->ci_lo);
		fprintf(o, "  %12.0f  %-6s  %10s  %10s  %s%s\n", (double)c->bytes,
		        c->guard ? "guard" : "tuned",
		        summary_format_us(c->baseline_us, b1, sizeof(b1)),
		        summary_format_us(c->best_us, b2, sizeof(b2)),
		        isnan(c->ratio) || !(c->ratio > 0) ? "-"
		        : (snprintf(v, sizeof v, "%.2fx", 1.0 / c->ratio), v), iv);
	}
	if (s->guards_verdict) {
		char b[160];

		fprintf(o, "  guards: %s\n", CLEAN(summary_guards_text(s->guards_verdict), b));
	}
}

/* results.json "ablation": each variable of the best, kept or dropped, and why. */
static void ablation(FILE *o, const struct summary *s)
{
	char b[2048];

	if (s->nablation == 0)
		return;
	fputs("\nablation (each variable of the best: what NCCL ran without it, or its removal "
	      "measured)\n", o);
	for (size_t i = 0; i < s->nablation; i++)
		fprintf(o, "  %s\n", CLEAN(s->ablation[i].why, b));
}

static void per_size(FILE *o, const struct summary *s)
{
	rules(o, s);
	guards(o, s);
	if (s->nsizes == 0)
		return;
	fprintf(o, "\nper-size latency of the tuned configuration\n  %12s  %10s\n", "bytes",
	        "per op");
	for (size_t i = 0; i < s->nsizes; i++) {
		char b[32];

		fprintf(o, "  %12llu  %10s\n", (unsigned long long)s->sizes[i].bytes,
		        summary_format_us(s->sizes[i].us, b, sizeof(b)));
	}
}

/* What to do with the result: install a measured one; tune the real machine instead of
 * a model. */
static void next_steps(FILE *o, const struct summary *s)
{
	const char *where = s->dir[0] ? s->dir : s->origin;
	char cmd[3 * PATH_MAX];

	if (!s->best.present)
		return;
	if (s->model) {
		fprintf(o, "\nnext\n  a MODEL result, not a measurement: nothing to install. On the "
		        "real machine run\n  %s (no --model) with the same workload, then install "
		        "that session.\n", summary_command(cmd, sizeof cmd, "run", NULL));
		return;
	}
	if (summary_unmeasured(s))
		return;   /* the verdict line said what to do */
	if ((s->best.env.n > 0 || s->nrules > 0) && !summary_shown_faster(s)) {
		fprintf(o, "\nnext\n  not shown to be faster than NCCL's defaults: nothing to "
		        "install (NCCL's defaults\n  are as good as far as this session can tell); "
		        "a larger --budget measures it more\n  (export --install refuses it without "
		        "--allow-unproven)\n");
		return;
	}
	/* as the user can run them: nccltune's path when it is not in PATH, the folder
	 * quoted, the --python of the interpreter whose NCCL the session tuned */
	fprintf(o, "\nuse it\n  %s\n", summary_install_command(s, where, cmd, sizeof cmd));
	fprintf(o, "  %s\n", summary_command(cmd, sizeof cmd, "export --format shell", where));
}

/* The best run of phase `phase` ("" any phase but the baseline) that measured, or NULL. */
static const struct summary_run *best_run(const struct summary *s, const char *phase)
{
	const struct summary_run *b = NULL;

	for (size_t i = 0; i < s->nruns; i++) {
		const struct summary_run *r = &s->runs[i];

		if (isnan(r->objective_us) || (phase[0] ? strcmp(r->phase, phase) != 0
		                                         : strcmp(r->phase, "baseline") == 0))
			continue;
		if (!b || r->objective_us < b->objective_us)
			b = r;
	}
	return b;
}

/* A session without results.json (still running, or interrupted): what its journal holds
 * so far, the best run as measured once (never a recommendation), and how to resume. */
static void partial_view(FILE *o, const struct summary *s)
{
	const struct summary_run *base = best_run(s, "baseline"), *best = best_run(s, "");
	char line[1200], buf[1024], env[2048], t[32], cmd[3 * PATH_MAX];
	size_t ok = 0;

	for (size_t i = 0; i < s->nruns; i++)
		ok += !isnan(s->runs[i].objective_us);
	fprintf(o, "nccltune session %s\n", CLEAN(s->dir, line));
	row(o, "status", "not finished (no results.json): still running, or interrupted");
	row(o, "machine", summary_describe_machine(&s->fp, buf, sizeof(buf)));
	snprintf(line, sizeof line, "%zu runs so far, %zu ok, %zu failed", s->nruns, ok,
	         s->nruns - ok);
	row(o, "journal", line);
	fputs("\nbest so far (single runs from the journal, not yet compared with the baseline "
	      "in final\nrounds: not a result, nothing to export)\n", o);
	if (base) {
		snprintf(line, sizeof line, "%s per step (run %ld, NCCL's defaults)",
		         summary_format_us(base->objective_us, t, sizeof t), base->run);
		row(o, "baseline", line);
	}
	if (best) {
		snprintf(line, sizeof line, "%s per step (run %ld): %s",
		         summary_format_us(best->objective_us, t, sizeof t), best->run,
		         summary_describe_env(&best->env, env, sizeof env));
		row(o, "best", line);
		if (best->nccl[0])
			row(o, "NCCL ran", best->nccl);
	} else {
		row(o, "best", "no run besides the baseline has measured yet");
	}
	fprintf(o, "\nnext\n  when it was interrupted, resume it: %s\n",
	        summary_command(cmd, sizeof cmd, "run --resume", s->dir));
}

int nccltune_show(const char *session_dir, FILE *out, char *err, size_t errlen)
{
	struct summary *s = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *mem;
	bool bad;
	int rc = NCCLTUNE_USAGE;

	/* an unfinished session: the best so far from its journal (result/record.c) */
	if (summary_load(session_dir, SUMMARY_JOURNAL_SOFT | SUMMARY_PARTIAL, &s, err, errlen) < 0)
		goto out;
	rc = NCCLTUNE_ERROR;
	mem = open_memstream(&text, &len);
	if (!mem) {
		fs_errf(err, errlen, "out of memory");
		goto out;
	}
	if (s->partial) {
		partial_view(mem, s);
		goto close;
	}
	overview(mem, s);
	tuned_env(mem, s);
	ablation(mem, s);
	top(mem, s);
	tries(mem, s);
	families(mem, s);
	failures(mem, s);
	per_size(mem, s);
	next_steps(mem, s);
close:
	bad = ferror(mem) != 0;
	if (fclose(mem) != 0 || bad) {
		fs_errf(err, errlen, "out of memory");
		goto out;
	}
	if (fwrite(text, 1, len, out) != len || fflush(out) != 0) {
		fs_errf(err, errlen, "writing the summary failed");
		goto out;
	}
	rc = NCCLTUNE_OK;
out:
	free(text);
	summary_destroy(s);
	return rc;
}
