/* progress.c - what a session shows the user (progress.h): a line per run (or one
 * updating line on a terminal) and the summary at the end, from the figures the caller
 * hands over. Everything a model produced is labelled MODEL, so a modelled figure is
 * never read as a measurement; text from a probe or a file is printed escaped
 * (fs_escape_text), so it cannot drive the terminal. Calls nothing of session/ but the vocabulary (runs.h)
 * and the output's line (notes.h). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "result/summary.h"
#include "session/progress.h"

static char *fmt_duration(double s, char *buf, size_t len)
{
	if (s < 60)
		snprintf(buf, len, "%.0fs", s);
	else if (s < 3600)
		snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
	else
		snprintf(buf, len, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
	return buf;
}

/* Longest progress line when the progress is not a terminal (a log, a pipe): the
 * failure reason and the variables are cut at a word boundary to fit. */
#define SESSION_LINE_MAX 160

/* "[MODEL name] " when the figures are modelled, else "". */
static const char *label(const char *model, char *buf, size_t len)
{
	if (model)
		snprintf(buf, len, "[MODEL %s] ", model[0] ? model : "?");
	else
		buf[0] = '\0';
	return buf;
}

/* Cut s (in place) to at most room bytes at a word boundary, ending it with "...";
 * never inside a word: a first word longer than room leaves "..." alone. */
static void cut_words(char *s, size_t room)
{
	size_t n = strlen(s), at = 0;

	if (n <= room)
		return;
	if (room < 3)
		room = 3;
	for (size_t i = 0; i + 3 <= room && i < n; i++)
		if (s[i] == ' ')
			at = i;
	while (at > 0 && (s[at - 1] == ' ' || s[at - 1] == ',' || s[at - 1] == ';' ||
	                  s[at - 1] == ':'))
		at--;
	memcpy(s + at, "...", 4);
}

/* Shorten a progress line of `fixed` bytes plus env and " (why)" to
 * SESSION_LINE_MAX: the failure reason first (keeping at least 48 bytes of it), then
 * the variables, each cut at a word boundary with "...". */
static void fit_line(size_t fixed, char *env, char *why)
{
	size_t avail = fixed < SESSION_LINE_MAX ? SESSION_LINE_MAX - fixed : 0;
	size_t el = strlen(env), wl = why[0] ? strlen(why) + 3 : 0;

	if (el + wl <= avail)
		return;
	if (wl) {
		size_t room = avail > el + 3 ? avail - el - 3 : 0;

		if (room < 48)
			room = 48;
		cut_words(why, room);
		wl = strlen(why) + 3;
	}
	cut_words(env, avail > wl ? avail - wl : 3);
}

/* Cut line (in place) to at most cols columns (a UTF-8 character is one; the text is
 * escaped, so none is a control), ending it with "..." when cut; never inside a
 * character. The terminal's status line never wraps (so "\r\033[K" clears all of it),
 * and a plain line stays within SESSION_LINE_MAX. */
static void fit_columns(char *line, size_t cols)
{
	size_t n = 0, keep = 0;

	if (cols < 4)
		cols = 4;
	for (size_t i = 0; line[i]; i++) {
		if (((unsigned char)line[i] & 0xC0) == 0x80)
			continue;   /* a continuation byte: same column */
		if (n == cols - 3)
			keep = i;   /* where "..." goes if the line is too long */
		if (++n > cols) {
			memcpy(line + keep, "...", 4);
			return;
		}
	}
}

void session_progress_run(struct session_output *out, const struct session_run *r,
                          const struct session_figures *fig)
{
	char lab[96], a[32], b[32], eta[32], rate[80], env[2048], why[2048], head[256], tail[256];
	char line[4600];
	double best = fig->best_us, base = fig->base_us;
	FILE *f = out->progress;
	int k;

	if (!f)
		return;
	fmt_duration(fig->eta_s, eta, sizeof eta);
	/* two-level: what the ETA is computed from, the sweeps' measured inner rate (while
	 * sweeps are left: the final rounds are plain runs) */
	if (fig->inner_rate > 0 && fig->sweeps_left > 0)
		snprintf(rate, sizeof rate, " (%zu sweeps at %.*f choices/s)", fig->sweeps_left,
		         fig->inner_rate < 100 ? 1 : 0, fig->inner_rate);
	else
		rate[0] = '\0';
	label(fig->model, lab, sizeof lab);
	if (out->tty) {
		char ratio[32] = "", sweep[80] = "";

		if (isfinite(best) && isfinite(base) && best > 0)
			snprintf(ratio, sizeof ratio, " (%.2fx)", base / best);
		if (fig->choices)
			snprintf(sweep, sizeof sweep, "  sweep %zu choices, %.*f/s", fig->choices,
			         fig->choices_per_s < 100 ? 1 : 0, fig->choices_per_s);
		snprintf(line, sizeof line, "%srun %zu/%d  best %s%s  failures %zu  ETA %s%s%s", lab,
		         fig->runs, fig->budget, summary_format_us(best, a, sizeof a), ratio,
		         fig->failures, eta, rate, sweep);
		/* one column short of the width: a line that fills the last column wraps on
		 * some terminals */
		fit_columns(line, out->width > 1 ? (size_t)out->width - 1 : 79);
		session_line_clear(out);
		fputs(line, f);
		fflush(f);
		out->line_active = true;
		return;
	}
	snprintf(head, sizeof head, "%s[%zu/%d] %-8s %-7s %-10s ", lab, fig->runs, fig->budget,
	         session_phase_name(r->phase), outcome_class_name(r->o.cls),
	         r->o.cls == OUTCOME_OK ? summary_format_us(r->o.objective_us, a, sizeof a) : "");
	k = snprintf(tail, sizeof tail, " | best %s", summary_format_us(best, b, sizeof b));
	if (isfinite(best) && isfinite(base) && best > 0 && k > 0 && (size_t)k < sizeof tail)
		k += snprintf(tail + k, sizeof tail - (size_t)k, " (%.2fx)", base / best);
	if (k > 0 && (size_t)k < sizeof tail)
		k += snprintf(tail + k, sizeof tail - (size_t)k, " | %zu failed", fig->failures);
	if (fig->choices && k > 0 && (size_t)k < sizeof tail)
		k += snprintf(tail + k, sizeof tail - (size_t)k, " | sweep %zu choices",
		              fig->choices);
	if (k > 0 && (size_t)k < sizeof tail)
		snprintf(tail + k, sizeof tail - (size_t)k, " | ETA %s%s", eta, rate);
	fs_escape_text(!fig->env ? "(NCCL defaults)" : fig->env[0] ? fig->env
	               : "(all searched variables unset)", env, sizeof env);
	/* what the probe said, escaped: it must not drive the terminal */
	fs_escape_text(r->o.cls != OUTCOME_OK ? r->o.error : "", why, sizeof why);
	fit_line(strlen(head) + strlen(tail), env, why);
	snprintf(line, sizeof line, "%s%s%s%s%s%s", head, env, why[0] ? " (" : "", why,
	         why[0] ? ")" : "", tail);
	fit_columns(line, SESSION_LINE_MAX);
	fprintf(f, "%s\n", line);
	fflush(f);
}

/* "NCCL_A=1 NCCL_B=2" from an environment, or "(NCCL defaults)". */
static char *env_raw(const struct summary_env *env, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < env->n; i++) {
		int k = snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "", env->v[i].name,
		                 env->v[i].value ? env->v[i].value : "null");

		if (k < 0 || (size_t)k >= len - used)
			break;
		used += (size_t)k;
	}
	if (!buf[0])
		snprintf(buf, len, "(NCCL defaults: nothing to set)");
	return buf;
}

/* env_raw with its control characters escaped, for the terminal. */
static char *env_text(const struct summary_env *env, char *buf, size_t len)
{
	char raw[1024];

	return fs_escape_text(env_raw(env, raw, sizeof raw), buf, len);
}

/* " [95% lo .. hi]" (times when us, else ratios), or "" without an interval. */
static char *ci_text(bool has, double lo, double hi, bool us, char *buf, size_t len)
{
	char a[32], b[32];

	if (!has) {
		buf[0] = '\0';
		return buf;
	}
	if (us)
		snprintf(buf, len, " [95%% %s .. %s]", summary_format_us(lo, a, sizeof a),
		         summary_format_us(hi, b, sizeof b));
	else
		snprintf(buf, len, " [95%% %.2fx .. %.2fx]", lo, hi);
	return buf;
}

/* A measure's ci95_us as ci_text. */
static char *measure_ci(const struct summary_measure *m, char *buf, size_t len)
{
	return ci_text(m->has_ci, m->ci_lo, m->ci_hi, true, buf, len);
}

/* The result's verdict is "not measured enough to recommend": write the line saying
 * so (with the budget that would do) into buf and return true. */
static bool unmeasured(const struct summary *res, char *buf, size_t len)
{
	if (!summary_unmeasured(res))
		return false;
	summary_unmeasured_text(res->budget_needed, buf, len);
	return true;
}

/* The phrase of an outcome class named in results.json. */
static const char *phrase_of(const char *name)
{
	enum outcome_class c;

	return outcome_class_parse(name, &c) == 0 ? outcome_class_phrase(c) : name;
}

/* The second line of a measured --try: its ratio to the baseline and the tuned best's
 * to it (a ratio is stated only with its interval). */
static void print_try_ratios(FILE *f, const struct summary_try *t)
{
	bool vb_ci = !isnan(t->ratio_lo) && !isnan(t->ratio_hi);
	char ci[96];

	if (t->has_ratio && vb_ci)
		fprintf(f, "              %.2fx vs baseline%s", t->ratio,
		        ci_text(true, t->ratio_lo, t->ratio_hi, false, ci, sizeof ci));
	else if (t->has_ratio)
		fprintf(f, "              not measured enough to compare with the baseline");
	else
		fprintf(f, "              no baseline to compare with");
	if (!t->has_tuned)
		fputc('\n', f);
	else if (t->tuned == 1.0)
		fprintf(f, "; it is the tuned best\n");
	else if (isnan(t->tuned_lo) || isnan(t->tuned_hi))
		fprintf(f, "; not measured enough to compare with the tuned best\n");
	else if (t->tuned > 1.0)
		fprintf(f, "; tuned best is %.2fx faster than your config%s\n", t->tuned,
		        ci_text(true, t->tuned_lo, t->tuned_hi, false, ci, sizeof ci));
	else
		fprintf(f, "; your config is %.2fx faster than the tuned best\n", 1.0 / t->tuned);
}

/* One line per --try: its time, its ratio to the baseline and the tuned best's to it,
 * all from the same session. */
static void print_tries(FILE *f, const struct summary *res)
{
	char a[32], ci[96], env[1024];

	for (size_t i = 0; i < res->ntries; i++) {
		const struct summary_try *t = &res->tries[i];
		bool ok = strcmp(t->outcome, "ok") == 0;

		env_text(&t->m.env, env, sizeof env);
		if (!t->m.present) {
			fprintf(f, "your config %zu: %s: %s\n", i + 1, env,
			        strcmp(t->outcome, "not_run") == 0 ? "not run (budget spent)"
			                                           : phrase_of(t->outcome));
			continue;
		}
		fprintf(f, "your config %zu: %s per step%s (%d run(s)%s%s)  %s\n", i + 1,
		        summary_format_us(t->m.objective_us, a, sizeof a),
		        measure_ci(&t->m, ci, sizeof ci), t->m.repeats, ok ? "" : "; failed: ",
		        ok ? "" : t->outcome, env);
		print_try_ratios(f, t);
	}
}

/* How much one run varies (results.json "noise", from the final repeats), and, when
 * the next finalist's time lies inside the best's 95% interval, that this session does
 * not tell the two apart. Nothing when the result has no noise figure. */
static void print_noise(FILE *f, const struct summary *res)
{
	const struct summary_measure *t0 = res->ntop > 0 ? &res->top[0] : NULL;
	const struct summary_measure *t1 = res->ntop > 1 ? &res->top[1] : NULL;

	if (!res->has_noise)
		return;
	fprintf(f, "noise:    one run varies by about %.1f%% (spread of the final repeats of %ld "
	        "configuration(s))\n", 100.0 * res->noise_sd, res->noise_configs);
	if (t0 && t0->has_ci && t1 && t1->repeats > 1 && t1->objective_us >= t0->ci_lo &&
	    t1->objective_us <= t0->ci_hi)
		fprintf(f, "          the next finalist's time is inside the best's 95%% interval: this "
		        "session does not\n          tell the two apart (they may be as fast; --resume "
		        "of this session\n          with a larger --budget re-measures them more)\n");
}

/* The rules learned, how many runs of the budget, why the search ended, and the
 * failures by class. */
static void print_runs(FILE *f, const struct session_ending *end)
{
	int counts[OUTCOME_COUNT_] = {0}, nfail = 0;
	static const char *const stop_words[] = {
		[STOP_NONE] = "", [STOP_BUDGET] = "budget spent",
		[STOP_TIME] = "time limit reached", [STOP_EXHAUSTED] = "every allowed configuration tried",
		[STOP_STUCK] = "the strategy kept proposing measured configurations",
	};

	for (size_t i = 0; i < prune_rule_count(end->pr); i++) {
		char text[1024];

		fprintf(f, "%s %s\n", i ? "         " : "pruned:  ",
		        fs_escape_text(prune_rule_at(end->pr, i)->text, text, sizeof text));
	}
	for (size_t i = 0; i < end->nruns; i++) {
		if (end->runs[i].o.cls != OUTCOME_OK) {
			counts[end->runs[i].o.cls]++;
			nfail++;
		}
	}
	fprintf(f, "runs:     %zu of a budget of %d", end->nruns, end->budget);
	if (end->stop != STOP_NONE)
		fprintf(f, " (search ended: %s)", stop_words[end->stop]);
	if (end->stop == STOP_BUDGET && end->nruns < (size_t)end->budget)
		fprintf(f, "; %zu run(s) of it left unused (no round that fits would change the decision)",
		        (size_t)end->budget - end->nruns);
	fputc('\n', f);
	if (nfail) {
		bool first = true;

		fprintf(f, "failures: %d:", nfail);
		for (int c = 0; c < OUTCOME_COUNT_; c++) {
			if (!counts[c])
				continue;
			fprintf(f, "%s %d %s", first ? "" : ",", counts[c],
			        outcome_class_phrase((enum outcome_class)c));
			first = false;
		}
		fputc('\n', f);
	}
}

/* Print text on f, wrapping each line longer than width between words (a run of
 * spaces), never inside one, the rest indented by 10: an 80-column terminal would
 * otherwise split NCCL_MAX_NCHANNELS=9 in two. */
static void print_wrapped(FILE *f, const char *text, size_t width)
{
	const size_t indent = 10;

	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text);
		bool first = true;

		while (len > 0) {
			size_t room = width - (first ? 0 : indent), cut = len;

			if (len > room) {
				/* the last space at or before room, else the first after it */
				cut = 0;
				for (size_t i = 1; i <= room && i < len; i++)
					if (text[i] == ' ' && text[i - 1] != ' ')
						cut = i;
				for (size_t i = room; !cut && i < len; i++)
					if (text[i] == ' ')
						cut = i;
				if (!cut)
					cut = len;
			}
			fprintf(f, "%*s%.*s\n", (int)(first ? 0 : indent), "", (int)cut, text);
			text += cut;
			len -= cut;
			while (len > 0 && *text == ' ') {
				text++;
				len--;
			}
			first = false;
		}
		if (first)
			fputc('\n', f);   /* an empty line */
		text = nl ? nl + 1 : text;
		if (!nl)
			break;
	}
}

static void print_summary(FILE *f, const struct session_ending *end,
                          const struct summary *res);
static void print_use(FILE *f, const struct session_ending *end, const struct summary *res);

/* With progress off (--quiet): what must still be said, on the warnings stream: that the
 * figures are a model's, and where the session is. */
static void quiet_notice(FILE *f, const struct session_ending *end)
{
	char dir[4 * PATH_MAX];

	if (!f)
		return;
	if (end->model)
		fprintf(f, "nccltune: MODEL %s: the results are a machine model's, not a "
		        "measurement%s\n", end->model,
		        end->auto_model ? " (no GPU was visible)" : "");
	fprintf(f, "nccltune: session: %s\n", fs_escape_text(end->dir, dir, sizeof dir));
	fflush(f);
}

void session_print_summary(struct session_output *out, const struct session_ending *end,
                           const struct summary *res)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem;

	if (!res)
		return;
	if (!out->progress) {
		quiet_notice(out->warnings, end);
		return;
	}
	session_line_clear(out);
	mem = open_memstream(&text, &len);
	if (!mem)
		return;   /* out of memory: no summary; results.json has it all */
	print_summary(mem, end, res);
	if (fclose(mem) == 0 && text)
		print_wrapped(out->progress, text, out->width >= 40 ? (size_t)out->width : 100);
	free(text);
	print_use(out->progress, end, res);
	fflush(out->progress);
}

/* Which NCCL the result holds for (the fingerprint's nccl_path: --nccl / --python) and what
 * the server sets itself (--like), from results.json. */
static void print_server(FILE *f, const struct summary *res)
{
	char a[PATH_MAX], b[128];

	if (res->fp.nccl_path)
		fprintf(f, "nccl:     %s (%s): the result holds for this library\n",
		        fs_escape_text(res->fp.nccl_version ? res->fp.nccl_version : "?", b, sizeof b),
		        fs_escape_text(res->fp.nccl_path, a, sizeof a));
	if (!res->server_like)
		return;
	fprintf(f, "server:   %s sets", fs_escape_text(res->server_like, b, sizeof b));
	for (size_t i = 0; i < res->server_env.n; i++)
		if (res->server_env.v[i].value)
			fprintf(f, " %s=%s", fs_escape_text(res->server_env.v[i].name, a, sizeof a),
			        fs_escape_text(res->server_env.v[i].value, b, sizeof b));
	fprintf(f, " before NCCL starts (measured with them; not exported)\n");
}

/* The baseline's or the best's step and its all-reduces' part (print_step). */
static void print_step_of(FILE *f, const char *which, const struct summary_measure *m,
                          double ops, double kernel)
{
	double step = m->objective_us;
	char a[32], b[32], k[32];

	if (!m->present || !(step > 0))
		return;
	if (m->has_step)   /* the probe's own figures: each op less the kernel */
		fprintf(f, "          %s: step %s, all-reduces %s (the step less %.0f x %s, "
		        "the kernel as measured alone)\n", which, summary_format_us(step, a, sizeof a),
		        summary_format_us(m->step_allreduce_us, b, sizeof b), ops,
		        summary_format_us(m->step_kernel_us, k, sizeof k));
	else
		fprintf(f, "          %s: step %s, all-reduces %s (the step less %.0f x %s, "
		        "the kernel as asked)\n", which, summary_format_us(step, a, sizeof a),
		        summary_format_us(step > kernel * ops ? step - kernel * ops : 0, b, sizeof b),
		        ops, summary_format_us(kernel, k, sizeof k));
}

/* The server's step (--compute-us, --window, from results.json's workload): what every
 * time is made of, the all-reduces' part of the baseline and the best, and what the server
 * must turn on to run as measured. Symmetric memory is a server option, never an NCCL
 * variable: nothing is exported for it. */
static void print_step(FILE *f, const struct summary *res)
{
	const struct summary_workload *wl = &res->workload;
	double kernel = wl->compute_kernel_us, ops = 0;
	char b[32], k[32];

	for (size_t i = 0; i < wl->n; i++)
		ops += (double)wl->c[i].count;
	if (wl->has_compute && kernel > 0) {
		if (wl->compute_ctas > 0)
			snprintf(b, sizeof b, "%ld", wl->compute_ctas);
		else
			snprintf(b, sizeof b, "one per SM's");
		fprintf(f, "step:     a %s kernel on %s CTAs before each of the %.0f all-reduces "
		        "(--compute-us): every time here is the whole step, kernels included\n",
		        summary_format_us(kernel, k, sizeof k), b, ops);
		print_step_of(f, "baseline", &res->baseline, ops, kernel);
		print_step_of(f, "best", &res->best, ops, kernel);
	}
	if (wl->window_symmetric)
		fprintf(f, "window:   measured with symmetric windows (--window symmetric): the server "
		        "must run so too: SGLang --enable-symm-mem (needs NCCL_CUMEM_ENABLE=1), vLLM "
		        "VLLM_USE_NCCL_SYMM_MEM=1; a server option, not an NCCL variable: not "
		        "exported\n");
}

/* A best measured with symmetric memory (the space's server.symmetric): what to turn on in
 * the server (fixed text) and whether NCCL ran a symmetric kernel; never exported. */
static void print_symmetric(FILE *f, const struct summary *res)
{
	const char *lines[SUMMARY_SYMMETRIC_LINES_MAX];
	size_t n;

	if (!res->best.symmetric)
		return;
	n = summary_symmetric_lines(res->server_like, lines, SUMMARY_SYMMETRIC_LINES_MAX);
	fprintf(f, "server:   turn on symmetric memory in the server (a server option, not an "
	        "NCCL variable: not exported):\n");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "          %s\n", lines[i]);
	fprintf(f, "          %s\n", summary_kernel_words(res->best.kernel));
}

/* " server.symmetric=on" when measure m has symmetric memory on, else "". */
static const char *symmetric_tag(const struct summary_measure *m)
{
	return m->symmetric ? "  +symmetric memory (server)" : "";
}

/* The best, its gain and the verdict (print_summary). */
static void print_best(FILE *f, const struct summary *res)
{
	const struct summary_measure *best = &res->best;
	char a[32], ci[96], env[1024], verdict[256];

	/* a rules-only best is not NCCL's defaults: the plugin carries it */
	if (best->env.n == 0 && res->nrules > 0)
		snprintf(env, sizeof env, "(no variables: %zu per-size rule(s) through "
		         "nccltune's tuner plugin)", res->nrules);
	else
		env_text(&best->env, env, sizeof env);
	/* symmetric memory alone is not NCCL's defaults either: the server turns it on */
	if (best->env.n == 0 && res->nrules == 0 && best->symmetric)
		snprintf(env, sizeof env, "(no variables)");
	fprintf(f, "best:     %s per step%s  %s%s\n", summary_format_us(best->objective_us, a, sizeof a),
	        best->repeats > 1 ? measure_ci(best, ci, sizeof ci) : " (measured once)", env,
	        symmetric_tag(best));
	print_symmetric(f, res);
	if (unmeasured(res, verdict, sizeof verdict))
		fprintf(f, "verdict:  %s\n", verdict);
	else if (res->has_gain)
		fprintf(f, "gain:     %.2fx vs the baseline%s%s\n", res->gain,
		        ci_text(!isnan(res->gain_lo) && !isnan(res->gain_hi), res->gain_lo,
		                res->gain_hi, false, ci, sizeof ci),
		        res->gain <= 1.0 ? " (nothing beat NCCL's defaults)" : "");
	if ((best->env.n > 0 || res->nrules > 0) && res->baseline.present && res->has_gain &&
	    summary_gain_is_unproven(res->gain, res->gain_lo))
		fprintf(f, "          not shown to be faster than NCCL's defaults: the interval "
		        "includes 1.00x; a larger\n          --budget re-measures the finalists "
		        "more (until then the defaults are as good)\n");
}

/* The summary, unwrapped, on f. */
static void print_summary(FILE *f, const struct session_ending *end,
                          const struct summary *res)
{
	const struct summary_measure *base = &res->baseline;
	char a[32], ci[96], env[1024], desc[256], wl[1024], dir[4 * PATH_MAX];

	fputc('\n', f);
	if (end->model)
		fprintf(f, "MODEL %s: every figure below comes from a machine model, not a "
		        "measurement%s\n", end->model,
		        end->auto_model ? " (no GPU was visible)" : "");
	/* the folder and the workload's description came from the user's files */
	fs_escape_text(end->dir, dir, sizeof dir);
	fprintf(f, "session:  %s\n", dir);
	fprintf(f, "workload: %s per step\n",
	        fs_escape_text(workload_describe(end->wl, desc, sizeof desc), wl, sizeof wl));
	print_server(f, res);
	print_step(f, res);
	if (base->present)
		fprintf(f, "baseline: %s per step%s (NCCL defaults, %d run(s))\n",
		        summary_format_us(base->objective_us, a, sizeof a), measure_ci(base, ci, sizeof ci),
		        base->repeats);
	else
		fprintf(f, "baseline: failed (NCCL's defaults did not run; see the journal)\n");
	if (res->best.present)
		print_best(f, res);
	else
		fprintf(f, "best:     none: no configuration worked\n");
	print_tries(f, res);
	if (res->ntop > 0)
		fprintf(f, "top %zu (re-measured first, fastest first; then measured once):\n",
		        res->ntop);
	for (size_t i = 0; i < res->ntop; i++) {
		const struct summary_measure *t = &res->top[i];

		/* a row lists its variables only: one without any may still carry per-size
		 * rules (results.json's top has no rules), so it is not "NCCL's defaults" */
		fprintf(f, "  %zu. %-10s%-27s  %s%s%s\n", i + 1,
		        summary_format_us(t->objective_us, a, sizeof a), measure_ci(t, ci, sizeof ci),
		        t->env.n ? env_text(&t->env, env, sizeof env) : "(no variables)",
		        symmetric_tag(t),
		        t->repeats > 1 ? "" : "  (measured once)");
	}
	print_noise(f, res);
	print_runs(f, end);
	if (res->best.present && res->pinned.n > 0)
		fprintf(f, "pinned:   %s (set when the session ran; the exports set them too, "
		        "marked pinned)\n", env_text(&res->pinned, env, sizeof env));
}


/* The commands that use the result, as the user can run them (after scripts/tune.sh
 * nccltune is not in PATH), each on one line however long: they are copied and pasted.
 * Nothing when there is nothing to use; for a model, how to get real figures instead. */
static void print_use(FILE *f, const struct session_ending *end, const struct summary *res)
{
	const char *me = end->self ? end->self : "nccltune";
	char dir[4 * PATH_MAX], verdict[256], cmd[4 * PATH_MAX], py[PATH_MAX];

	if (!res->best.present || unmeasured(res, verdict, sizeof verdict))
		return;
	fs_escape_text(end->dir, dir, sizeof dir);
	if (end->model) {
		/* a model's numbers are never installed: say how to get real ones */
		fprintf(f, "next:     these are MODEL figures, not measurements: nothing to install.\n"
		        "          On the real machine run %s run (no --model) with the same\n"
		        "          workload, then install that session (exports: %s/exports/)\n",
		        me, dir);
		return;
	}
	if (!res->verdict || strcmp(res->verdict, SUMMARY_VERDICT_OK) != 0) {
		fprintf(f, "next:     not shown to be faster than NCCL's defaults: nothing to install;"
		        "\n          a larger --budget measures it more (export --install refuses "
		        "it\n          without --allow-unproven)\n");
		return;
	}
	fprintf(f, "use it:   %s\n", summary_command(cmd, sizeof cmd, "export --format shell",
	                                              end->dir));
	summary_install_command(res, end->dir, cmd, sizeof cmd);
	fprintf(f, "          %s   (a .pth for %s)\n", cmd,
	        summary_install_python(res, py, sizeof py)
	        ? "the interpreter whose NCCL the session tuned"
	        : "python3 in PATH; --python PY for the server's own");
	fprintf(f, "          %s   (NCCL's own file)\n",
	        summary_command(cmd, sizeof cmd, "export --format nccl-conf --install", end->dir));
	fprintf(f, "          (also in %s/exports/; report: %s/report.html)\n", dir, dir);
}
