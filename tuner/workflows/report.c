/* report.c - session_dir/report.html: one self-contained page (inline CSS and SVG, no
 * script, no font or image from anywhere) with the result, how the search converged,
 * latency by protocol/algorithm family (when there are two families to compare), the
 * top configurations, the per-size rules that are deployed and how to apply them
 * (report_apply.c), the per-size table and the ablation, failures and pruned regions, every run with what NCCL ran
 * (report_sizes.c), the machine and the workload (report_machine.c). A result that came from a machine model says
 * MODEL in a banner across the top, so a screenshot cannot pass for a measurement.
 *
 * Every string from the session files is HTML-escaped; a Content-Security-Policy meta
 * tag forbids the page from loading anything at all. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "nccltune.h"
#include "result/summary.h"
#include "workflows/report_html.h"

#define FAMILY_ROWS_MAX 24

static void esc_env(FILE *o, const struct summary_env *env)
{
	if (env->n == 0) {
		fputs("<span class=\"dim\">NCCL defaults</span>", o);
		return;
	}
	for (size_t i = 0; i < env->n; i++) {
		fputs(i ? " <code>" : "<code>", o);
		report_esc(o, env->v[i].name);
		if (env->v[i].value) {
			fputc('=', o);
			report_esc(o, env->v[i].value);
		} else {
			fputs(" unset", o);
		}
		fputs("</code>", o);
	}
}

static const char css[] =
	"*{box-sizing:border-box}"
	"body{margin:0;background:#f6f7f9;color:#1c1e21;font:15px/1.45 system-ui,-apple-system,"
	"'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif}"
	"main{max-width:1000px;margin:0 auto;padding:24px 28px 48px}"
	"h1{font-size:26px;margin:0 0 4px}h2{font-size:18px;margin:0 0 12px}"
	"section{background:#fff;border:1px solid #e1e4e8;border-radius:8px;padding:18px 20px;"
	"margin:16px 0}"
	".sub{color:#57606a;margin:0}.dim{color:#6e7781}"
	".banner{background:#b42318;color:#fff;text-align:center;padding:14px 20px}"
	".banner b{display:block;font-size:64px;letter-spacing:.12em;line-height:1.05}"
	".banner span{font-size:16px}"
	".cards{display:flex;gap:14px;flex-wrap:wrap}"
	".card{flex:1 1 200px;border:1px solid #e1e4e8;border-radius:8px;padding:12px 16px}"
	".card .k{color:#57606a;font-size:13px;text-transform:uppercase;letter-spacing:.04em}"
	".card .v{font-size:28px;font-weight:600}"
	".card.base .v{color:#b42318}.card.tuned .v{color:#1a7f37}.card.gain .v{color:#0b5cad}"
	"table{border-collapse:collapse;width:100%;font-size:14px}"
	"th,td{text-align:left;padding:5px 10px 5px 0;border-bottom:1px solid #eaeef2;"
	"vertical-align:top}"
	"th{color:#57606a;font-weight:600}td.num,th.num{text-align:right;padding-right:16px;"
	"font-variant-numeric:tabular-nums;white-space:nowrap}"
	"code{font:13px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f0f2f5;"
	"border-radius:4px;padding:1px 5px;white-space:nowrap}"
	"code.cmd{display:inline-block;white-space:pre-wrap;word-break:break-all;padding:4px 8px}"
	".apply{border-color:#1a7f37}"
	"svg{display:block;width:100%;height:auto}"
	"svg text{font:12px system-ui,-apple-system,'Segoe UI',Roboto,Arial,sans-serif;fill:#424a53}"
	".legend{font-size:13px;color:#57606a;margin:0 0 6px}"
	".legend i{display:inline-block;width:10px;height:10px;border-radius:50%;margin:0 4px 0 12px}"
	".topo td{text-align:center;padding:3px 4px;font:12px ui-monospace,Menlo,monospace;"
	"border:1px solid #fff}"
	".l-x{background:#eaeef2}.l-nv{background:#aceebb}.l-pix{background:#c8e1ff}"
	".l-phb{background:#fff1b3}.l-sys{background:#ffd8b5}"
	"footer{color:#6e7781;font-size:13px;margin-top:20px}";

/* ---- numbers to pixels ---- */

static double nice_step(double range, int ticks)
{
	double raw = range / ticks, mag, f;

	if (!(raw > 0) || !isfinite(raw))
		return 1.0;
	mag = pow(10.0, floor(log10(raw)));
	f = raw / mag;
	return (f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0) * mag;
}

/* The top of the time axis: the largest value, but at most 3x the baseline (or the
 * median) so that one pathological run does not flatten everything else; runs above
 * it are drawn clipped at the top. */
static double axis_max(const struct summary *s)
{
	double vmax = 0, cap;
	double *v = NULL;
	size_t n = 0;

	if (s->nruns)
		v = calloc(s->nruns, sizeof(v[0]));
	for (size_t i = 0; i < s->nruns; i++) {
		if (isnan(s->runs[i].objective_us))
			continue;
		if (s->runs[i].objective_us > vmax)
			vmax = s->runs[i].objective_us;
		if (v)
			v[n++] = s->runs[i].objective_us;
	}
	if (s->baseline.present && s->baseline.objective_us > vmax)
		vmax = s->baseline.objective_us;
	if (s->best.present && s->best.objective_us > vmax)
		vmax = s->best.objective_us;
	cap = vmax;
	if (s->baseline.present && s->baseline.objective_us > 0) {
		cap = 3.0 * s->baseline.objective_us;
	} else if (n > 0) {
		double med;

		for (size_t i = 1; i < n; i++)   /* insertion sort: n is a session's runs */
			for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
				double t = v[j];

				v[j] = v[j - 1];
				v[j - 1] = t;
			}
		med = v[n / 2];
		if (med > 0)
			cap = 3.0 * med;
	}
	free(v);
	if (vmax > cap)
		vmax = cap;
	return vmax > 0 ? vmax * 1.08 : 1.0;
}

/* Is journal run `run` one of the ablation's (the winner less one variable)? */
static bool ablation_run(const struct summary *s, long run)
{
	for (size_t i = 0; i < s->nablation; i++)
		if (s->ablation[i].run > 0 && s->ablation[i].run == run)
			return true;
	return false;
}

#define ABLATION_COLOR "#cf222e"

static const char *phase_color(const char *phase)
{
	if (strcmp(phase, "baseline") == 0) return "#b42318";
	if (strcmp(phase, "warm") == 0) return "#8250df";
	if (strcmp(phase, "retry") == 0) return "#bc4c00";
	if (strcmp(phase, "final") == 0) return "#1a7f37";
	if (strcmp(phase, "try") == 0) return "#d4a72c";
	return "#0969da";
}

static void tick(FILE *o, double us)
{
	if (us == 0)
		fputc('0', o);
	else
		report_esc_us(o, us);
}

static void svg_hline(FILE *o, double x0, double x1, double y, const char *color,
                      const char *label, double value, bool label_below)
{
	char b[32];

	fprintf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
	        "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>", x0, x1, y, y, color);
	/* the baseline's label at the right, above its line; the tuned one at the left,
	 * below it: the final re-measurements cluster at the right end near both lines */
	fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" style=\"fill:%s\">%s ",
	        label_below ? x0 + 6 : x1 - 4, label_below ? y + 14 : y - 5,
	        label_below ? "start" : "end", color, label);
	report_esc(o, summary_format_us(value, b, sizeof(b)));
	fputs("</text>", o);
}

static void svg_time_ticks_y(FILE *o, double ml, double x1, double mt, double ph, double ymax)
{
	double step = nice_step(ymax, 5);

	for (double t = 0; t <= ymax + 1e-9; t += step) {
		double y = mt + ph - t / ymax * ph;

		fprintf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eaeef2\"/>",
		        ml, x1, y, y);
		fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", ml - 6, y + 4);
		tick(o, t);
		fputs("</text>", o);
	}
}

/* Best so far by run, every run as a dot (failed runs as red crosses on the axis), the
 * baseline and the final tuned time as dashed lines. */
static void svg_convergence(FILE *o, const struct summary *s)
{
	const double W = 940, H = 330, ml = 78, mr = 16, mt = 14, mb = 44;
	const double pw = W - ml - mr, ph = H - mt - mb;
	double ymax = axis_max(s), best = INFINITY, xmin, xmax, xstep;
	long rmin = s->runs[0].run, rmax = s->runs[0].run;
	bool started = false;
	static const char *const phases[][2] = {
		{ "baseline", "baseline run" }, { "search", "search" }, { "warm", "warm start" },
		{ "retry", "retry" }, { "final", "final re-measurement" }, { "try", "your --try" },
	};

	for (size_t i = 0; i < s->nruns; i++) {
		if (s->runs[i].run < rmin) rmin = s->runs[i].run;
		if (s->runs[i].run > rmax) rmax = s->runs[i].run;
	}
	xmin = (double)rmin;
	xmax = rmax > rmin ? (double)rmax : (double)rmin + 1;
	fputs("<p class=\"legend\">", o);
	for (size_t k = 0; k < sizeof(phases) / sizeof(phases[0]); k++) {
		bool seen = false;

		for (size_t i = 0; i < s->nruns && !seen; i++)
			seen = strcmp(s->runs[i].phase, phases[k][0]) == 0;
		if (seen)
			fprintf(o, "<i style=\"background:%s\"></i>%s", phase_color(phases[k][0]),
			        phases[k][1]);
	}
	for (size_t i = 0; i < s->nruns; i++)
		if (ablation_run(s, s->runs[i].run)) {
			fputs("<span style=\"margin-left:12px;color:" ABLATION_COLOR "\">&#9670;</span> "
			      "ablation (the best less one variable)", o);
			break;
		}
	fputs("<span style=\"margin-left:12px;color:#b42318\">&#215;</span> failed"
	      "<span style=\"margin-left:12px;color:#0b2e5c\">&#9472;</span> best so far</p>", o);
	fprintf(o, "<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"convergence\">", W, H);
	svg_time_ticks_y(o, ml, W - mr, mt, ph, ymax);
	xstep = nice_step(xmax - xmin, 8);
	if (xstep < 1)
		xstep = 1;
	for (double t = ceil(xmin / xstep) * xstep; t <= xmax + 1e-9; t += xstep) {
		double x = ml + (t - xmin) / (xmax - xmin) * pw;

		fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.0f</text>", x,
		        mt + ph + 16, t);
	}
	fprintf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#8c959f\"/>",
	        ml, W - mr, mt + ph, mt + ph);
	fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">run</text>", ml + pw / 2,
	        H - 6);
	fprintf(o, "<text x=\"14\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 14 %.1f)\">"
	        "time per step</text>", mt + ph / 2, mt + ph / 2);
	if (s->baseline.present)
		svg_hline(o, ml, W - mr, mt + ph - fmin(s->baseline.objective_us, ymax) / ymax * ph,
		          "#b42318", "baseline", s->baseline.objective_us, false);
	if (s->best.present)
		svg_hline(o, ml, W - mr, mt + ph - fmin(s->best.objective_us, ymax) / ymax * ph,
		          "#1a7f37", "tuned", s->best.objective_us, true);
	/* best so far, as steps */
	fputs("<polyline fill=\"none\" stroke=\"#0b2e5c\" stroke-width=\"2\" points=\"", o);
	for (size_t i = 0; i < s->nruns; i++) {
		const struct summary_run *r = &s->runs[i];
		double x = ml + ((double)r->run - xmin) / (xmax - xmin) * pw;

		if (strcmp(r->phase, "baseline") == 0 || isnan(r->objective_us))
			continue;
		if (r->objective_us < best) {
			if (started)
				fprintf(o, "%.1f,%.1f ", x, mt + ph - fmin(best, ymax) / ymax * ph);
			best = r->objective_us;
			started = true;
		}
		fprintf(o, "%.1f,%.1f ", x, mt + ph - fmin(best, ymax) / ymax * ph);
	}
	fputs("\"/>", o);
	for (size_t i = 0; i < s->nruns; i++) {
		const struct summary_run *r = &s->runs[i];
		double x = ml + ((double)r->run - xmin) / (xmax - xmin) * pw;
		char env[512];

		summary_describe_env(&r->env, env, sizeof(env));
		if (isnan(r->objective_us)) {
			fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
			        "style=\"fill:#b42318;font-size:13px\">&#215;<title>run %ld: ", x,
			        mt + ph - 3, r->run);
			report_esc(o, r->outcome);
		} else if (ablation_run(s, r->run) && r->objective_us <= ymax) {
			double y = mt + ph - r->objective_us / ymax * ph;

			fprintf(o, "<path class=\"ablation\" d=\"M%.1f %.1f l5 5 l-5 5 l-5 -5 z\" "
			        "fill=\"" ABLATION_COLOR "\"><title>run %ld (ablation): ", x, y - 5,
			        r->run);
			report_esc_us(o, r->objective_us);
		} else if (r->objective_us > ymax) {
			fprintf(o, "<path d=\"M%.1f %.1f l-4 7 h8 z\" fill=\"%s\"><title>run %ld: ", x,
			        mt + 1, phase_color(r->phase), r->run);
			report_esc_us(o, r->objective_us);
			fputs(" (off the chart)", o);
		} else {
			fprintf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.2\" fill=\"%s\" "
			        "fill-opacity=\"0.75\"><title>run %ld: ", x,
			        mt + ph - r->objective_us / ymax * ph, phase_color(r->phase), r->run);
			report_esc_us(o, r->objective_us);
		}
		fputs(" - ", o);
		report_esc(o, env);
		fputs(isnan(r->objective_us) ? "</title></text>" :
		      r->objective_us > ymax || ablation_run(s, r->run) ? "</title></path>"
		                                                        : "</title></circle>", o);
	}
	fputs("</svg>", o);
}

/* One row per protocol/algorithm family: each measured run as a dot, the median as a
 * tick, the baseline as a dashed line; failures counted on the right. */
static void svg_families(FILE *o, const struct summary *s, const struct summary_family *f,
                         size_t nf)
{
	const double W = 940, ml = 150, mr = 120, mt = 10, mb = 40, rowh = 28;
	size_t rows = nf < FAMILY_ROWS_MAX ? nf : FAMILY_ROWS_MAX;
	double H = mt + rowh * (double)rows + mb, pw = W - ml - mr, xmax = axis_max(s);
	double step = nice_step(xmax, 6);

	fprintf(o, "<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"latency by family\">",
	        W, H);
	for (double t = 0; t <= xmax + 1e-9; t += step) {
		double x = ml + t / xmax * pw;

		fprintf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eaeef2\"/>",
		        x, x, mt, mt + rowh * (double)rows);
		fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x,
		        mt + rowh * (double)rows + 16);
		tick(o, t);
		fputs("</text>", o);
	}
	fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time per step "
	        "(NCCL_PROTO / NCCL_ALGO)</text>", ml + pw / 2, H - 4);
	for (size_t k = 0; k < rows; k++) {
		double yc = mt + rowh * ((double)k + 0.5);
		size_t j = 0;

		if (k % 2 == 0)
			fprintf(o, "<rect x=\"0\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\" "
			        "fill=\"#f6f8fa\"/>", yc - rowh / 2, W, rowh);
		fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", ml - 10, yc + 4);
		report_esc(o, f[k].label);
		fputs("</text>", o);
		for (size_t i = 0; i < s->nruns; i++) {
			const struct summary_run *r = &s->runs[i];
			char label[80];
			double x, jit;

			if (strcmp(r->phase, "baseline") == 0 || isnan(r->objective_us))
				continue;
			if (strcmp(summary_family_label(&r->env, label, sizeof(label)), f[k].label) != 0)
				continue;
			/* deterministic jitter so equal times stay visible as a cluster */
			jit = (double)((j++ * 7) % 11) - 5.0;
			x = ml + fmin(r->objective_us, xmax) / xmax * pw;
			fprintf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"#0969da\" "
			        "fill-opacity=\"0.55\"><title>run %ld: ", x, yc + jit, r->run);
			report_esc_us(o, r->objective_us);
			fputs("</title></circle>", o);
		}
		if (!isnan(f[k].median)) {
			double x = ml + fmin(f[k].median, xmax) / xmax * pw;

			fprintf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#0b2e5c\" "
			        "stroke-width=\"2.5\"><title>median ", x, x, yc - 10, yc + 10);
			report_esc_us(o, f[k].median);
			fputs("</title></line>", o);
		}
		fprintf(o, "<text x=\"%.1f\" y=\"%.1f\">%zu ok", W - mr + 10, yc + 4, f[k].ok);
		if (f[k].runs > f[k].ok)
			fprintf(o, " <tspan style=\"fill:#b42318\">%zu failed</tspan>", f[k].runs - f[k].ok);
		fputs("</text>", o);
	}
	if (s->baseline.present) {
		double x = ml + fmin(s->baseline.objective_us, xmax) / xmax * pw;

		fprintf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#b42318\" "
		        "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"><title>baseline</title></line>",
		        x, x, mt, mt + rowh * (double)rows);
	}
	fputs("</svg>", o);
	if (nf > rows)
		fprintf(o, "<p class=\"dim\">%zu more families not drawn.</p>", nf - rows);
}

static void section_top(FILE *o, const struct summary *s)
{
	fputs("<section><h2>Top configurations</h2>", o);
	if (s->ntop == 0) {
		fputs("<p class=\"dim\">None recorded.</p></section>", o);
		return;
	}
	fputs("<p class=\"dim\">Those re-measured in the final rounds first, fastest first; "
	      "then those measured once in the search, which may look faster on one run.</p>", o);
	fputs("<table><tr><th class=\"num\">#</th><th class=\"num\">time per step</th>"
	      "<th class=\"num\">95% interval</th><th class=\"num\">vs baseline</th>"
	      "<th class=\"num\">repeats</th><th>environment</th></tr>", o);
	for (size_t i = 0; i < s->ntop; i++) {
		const struct summary_measure *m = &s->top[i];

		fprintf(o, "<tr><td class=\"num\">%zu</td><td class=\"num\">", i + 1);
		report_esc_us(o, m->objective_us);
		fputs("</td><td class=\"num\">", o);
		if (m->has_ci) {
			report_esc_us(o, m->ci_lo);
			fputs(" &#8211; ", o);
			report_esc_us(o, m->ci_hi);
		}
		fputs("</td><td class=\"num\">", o);
		if (s->baseline.present && m->objective_us > 0)
			fprintf(o, "%.2f&#215;", s->baseline.objective_us / m->objective_us);
		fputs("</td><td class=\"num\">", o);
		if (m->repeats)
			fprintf(o, "%d", m->repeats);
		fputs("</td><td>", o);
		esc_env(o, &m->env);
		fputs(m->symmetric ? " +symmetric memory (server)" : "", o);
		fputs(m->repeats > 1 ? "</td></tr>" : " <span class=\"dim\">(measured once: "
		      "listed after the re-measured)</span></td></tr>", o);
	}
	fputs("</table></section>", o);
}

/* The user's own configurations (--try), when the session had any. */
static void section_tries(FILE *o, const struct summary *s)
{
	if (s->ntries == 0)
		return;
	fputs("<section><h2>Your configurations (--try)</h2>"
	      "<table><tr><th class=\"num\">#</th><th class=\"num\">time per step</th>"
	      "<th class=\"num\">95% interval</th><th class=\"num\">vs baseline</th>"
	      "<th class=\"num\">tuned best vs it</th><th>outcome</th><th>environment</th></tr>",
	      o);
	for (size_t i = 0; i < s->ntries; i++) {
		const struct summary_try *t = &s->tries[i];

		fprintf(o, "<tr><td class=\"num\">%zu</td><td class=\"num\">", i + 1);
		if (t->m.present)
			report_esc_us(o, t->m.objective_us);
		fputs("</td><td class=\"num\">", o);
		if (t->m.has_ci) {
			report_esc_us(o, t->m.ci_lo);
			fputs(" &#8211; ", o);
			report_esc_us(o, t->m.ci_hi);
		}
		fputs("</td><td class=\"num\">", o);
		if (t->has_ratio)
			fprintf(o, "%.2f&#215;", t->ratio);
		fputs("</td><td class=\"num\">", o);
		if (t->has_tuned)
			fprintf(o, "%.2f&#215;", t->tuned);
		fputs("</td><td>", o);
		report_esc(o, t->outcome);
		fputs(t->in_space ? "" : " (outside the space)", o);
		fputs("</td><td>", o);
		esc_env(o, &t->m.env);
		fputs("</td></tr>", o);
	}
	fputs("</table></section>", o);
}

static void section_failures(FILE *o, const struct summary *s)
{
	fputs("<section><h2>Failures and pruned regions</h2>", o);
	if (s->nfailures == 0 && s->npruned == 0) {
		fputs("<p class=\"dim\">No configuration failed.</p></section>", o);
		return;
	}
	if (s->nfailures) {
		fputs("<table><tr><th class=\"num\">runs</th><th>where it failed</th>"
		      "<th>environment</th><th>per-size choice</th><th>error (first line)</th></tr>",
		      o);
		for (size_t i = 0; i < s->nfailures; i++) {
			const struct summary_failure *f = &s->failures[i];

			fprintf(o, "<tr class=\"failure\"><td class=\"num\">%ld</td><td>", f->count);
			report_esc(o, f->stage);
			fputs("</td><td>", o);
			esc_env(o, &f->env);
			fputs("</td><td>", o);
			if (f->choice) {
				fputs("<code>", o);
				report_esc(o, f->choice);
				fputs("</code>", o);
			}
			fputs("</td><td>", o);
			report_esc(o, f->error);
			fputs("</td></tr>", o);
		}
		fputs("</table>", o);
	}
	if (s->npruned) {
		fputs("<h2 style=\"margin-top:16px\">Pruned: never run again</h2><table>"
		      "<tr><th>region</th><th>why</th></tr>", o);
		for (size_t i = 0; i < s->npruned; i++) {
			fputs("<tr><td>", o);
			esc_env(o, &s->pruned[i].when);
			fputs("</td><td>", o);
			report_esc(o, s->pruned[i].reason);
			fputs("</td></tr>", o);
		}
		fputs("</table>", o);
	}
	fputs("</section>", o);
}

static void section_headline(FILE *o, const struct summary *s)
{
	const char *tag = s->model ? " &#183; model" : "";
	double ratio = NAN;

	fputs("<section><div class=\"cards\">", o);
	fputs("<div class=\"card base\"><div class=\"k\">NCCL defaults (baseline)", o);
	fputs(tag, o);
	fputs("</div><div class=\"v\">", o);
	if (s->baseline.present)
		report_esc_us(o, s->baseline.objective_us);
	else
		fputs("&#8211;", o);
	fputs("</div><div class=\"dim\">per step</div></div>", o);
	fprintf(o, "<div class=\"card tuned\"><div class=\"k\">tuned%s</div><div class=\"v\">", tag);
	if (s->best.present)
		report_esc_us(o, s->best.objective_us);
	else
		fputs("none worked", o);
	fputs("</div><div class=\"dim\">", o);
	if (s->best.present && s->best.has_ci) {
		fputs("95% ", o);
		report_esc_us(o, s->best.ci_lo);
		fputs(" &#8211; ", o);
		report_esc_us(o, s->best.ci_hi);
	} else {
		fputs("per step", o);
	}
	fputs("</div></div>", o);
	if (s->has_gain)
		ratio = s->gain;
	else if (!summary_unmeasured(s) && s->baseline.present && s->best.present &&
	         s->best.objective_us > 0)
		ratio = s->baseline.objective_us / s->best.objective_us;
	fprintf(o, "<div class=\"card gain\"><div class=\"k\">speed-up%s</div><div class=\"v\">", tag);
	if (isfinite(ratio))
		fprintf(o, "%.2f&#215;", ratio);
	else
		fputs("&#8211;", o);
	fputs("</div><div class=\"dim\">", o);
	if (s->has_gain && isfinite(s->gain_lo))
		fprintf(o, "95%% %.2f &#8211; %.2f&#215;", s->gain_lo, s->gain_hi);
	else
		fputs("baseline / tuned", o);
	fputs("</div></div></div>", o);
	if (summary_unmeasured(s)) {
		char why[256];

		fputs("<p><b>Caution:</b> ", o);
		report_esc(o, summary_describe_unmeasured(s, why, sizeof(why)));
		fputs(". The best was measured once, not re-measured against NCCL's defaults in "
		      "two interleaved rounds: no speed-up is stated and the exports set nothing."
		      "</p>", o);
	}
	if (summary_gain_unproven(s))
		fprintf(o, "<p><b>Caution:</b> not shown to be faster than NCCL's defaults: the "
		        "speed-up's 95%% interval (%.2f &#8211; %.2f&#215;) includes 1.00&#215;. A "
		        "longer session (a larger --budget) re-measures the finalists more; until "
		        "then, NCCL's defaults are as good as far as this session can tell.</p>",
		        s->gain_lo, s->gain_hi);
	if (s->has_noise)
		fprintf(o, "<p class=\"dim\">One run varies by about %.1f%% (spread of the final "
		        "repeats of %ld configuration(s)).</p>", 100.0 * s->noise_sd, s->noise_configs);
	fputs("<h2 style=\"margin-top:18px\">Tuned environment</h2>", o);
	if (!s->best.present)
		fputs("<p>No configuration worked: nothing to export.</p>", o);
	else if (s->best.env.n == 0 && s->nrules > 0)
		fputs("<p>No variables: the per-size rules, through nccltune's tuner plugin.</p>", o);
	else if (s->best.env.n == 0)
		fputs(s->best.symmetric ? "<p>No variables: symmetric memory in the server.</p>"
		      : "<p>NCCL's defaults were the best configuration found: nothing to set.</p>", o);
	else {
		fputs("<table style=\"width:auto\">", o);
		for (size_t i = 0; i < s->best.env.n; i++) {
			fputs("<tr><td><code>", o);
			report_esc(o, s->best.env.v[i].name);
			fputs("</code></td><td><code>", o);
			report_esc(o, s->best.env.v[i].value);
			fputs("</code></td></tr>", o);
		}
		fputs("</table>", o);
	}
	report_rules(o, s);
	report_server(o, s);
	if (s->pinned.n) {
		fputs("<p class=\"dim\">Pinned by the environment of the run (not searched; the "
		      "exports set them too, marked pinned): ", o);
		esc_env(o, &s->pinned);
		fputs("</p>", o);
	}
	fputs("</section>", o);
}

static void render(FILE *o, const struct summary *s, const struct summary_family *fam, size_t nf)
{
	char buf[1024];

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>", o);
	if (s->model)
		fputs("[MODEL] ", o);
	fputs("nccltune report: ", o);
	report_esc(o, summary_describe_workload(&s->workload, buf, sizeof(buf)));
	fprintf(o, "</title>\n<style>%s</style></head><body>\n", css);
	if (s->model) {
		fputs("<div class=\"banner\"><b>MODEL</b><span>Every figure on this page comes from "
		      "the machine model <code style=\"background:#fff;color:#b42318\">", o);
		report_esc(o, s->model);
		fputs("</code>, not from a measurement on a GPU.</span></div>\n", o);
	}
	fputs("<main><h1>nccltune report</h1><p class=\"sub\">", o);
	report_esc(o, summary_describe_machine(&s->fp, buf, sizeof(buf)));
	fputs("<br>", o);
	report_esc(o, summary_describe_workload(&s->workload, buf, sizeof(buf)));
	fputs("</p>\n", o);
	section_headline(o, s);
	report_section_apply(o, s);
	fputs("<section><h2>Convergence</h2>", o);
	if (s->nruns) {
		svg_convergence(o, s);
	} else if (s->journal_error[0]) {
		fputs("<p class=\"dim\">The journal could not be read, so the runs are missing: ", o);
		report_esc(o, s->journal_error);
		fputs("</p>", o);
	} else {
		fputs("<p class=\"dim\">No journal in this folder: runs not available.</p>", o);
	}
	fputs("</section>\n", o);
	/* one family (every per-size session: NCCL_PROTO and NCCL_ALGO are never set there,
	 * the rules choose) compares nothing: no strip */
	if (nf >= 2) {
		fputs("<section><h2>Latency by protocol and algorithm</h2>", o);
		svg_families(o, s, fam, nf);
		fputs("</section>\n", o);
	}
	section_top(o, s);
	report_section_sizes(o, s);
	section_tries(o, s);
	section_failures(o, s);
	report_section_runs(o, s);
	report_section_machine(o, &s->fp);
	report_section_workload(o, s);
	fputs("<footer>", o);
	report_esc(o, s->tool_name ? s->tool_name : "nccltune");
	fputc(' ', o);
	report_esc(o, s->tool_version ? s->tool_version : "");
	fputs(" &#183; ", o);
	report_esc(o, s->created ? s->created : "date unknown");
	fputs(" &#183; source ", o);
	report_esc(o, s->source);
	if (s->strategy) {
		fputs(" &#183; strategy ", o);
		report_esc(o, s->strategy);
	}
	if (s->has_seed)
		fprintf(o, " &#183; seed %.0f", s->seed);
	if (s->budget >= 0)
		fprintf(o, " &#183; budget %ld", s->budget);
	fprintf(o, " &#183; %ld evaluations", s->evaluations);
	if (s->has_journal)
		fprintf(o, " &#183; %zu journal runs", s->nruns);
	fputs("</footer></main></body></html>\n", o);
}

int nccltune_report_write(const char *session_dir, char *err, size_t errlen)
{
	struct summary *s = NULL;
	struct summary_family *fam = NULL;
	size_t nf = 0, len = 0;
	char *html = NULL, path[4200];
	FILE *mem = NULL;
	int rc = NCCLTUNE_USAGE;

	if (summary_load(session_dir, SUMMARY_JOURNAL_SOFT, &s, err, errlen) < 0)
		goto out;
	rc = NCCLTUNE_ERROR;
	if (!s->dir[0]) {
		fs_errf(err, errlen, "%s: a report is written into a session folder; give the folder",
		        session_dir);
		rc = NCCLTUNE_USAGE;
		goto out;
	}
	if (summary_families(s, &fam, &nf) < 0) {
		fs_errf(err, errlen, "out of memory");
		goto out;
	}
	mem = open_memstream(&html, &len);
	if (!mem) {
		fs_errf(err, errlen, "out of memory");
		goto out;
	}
	render(mem, s, fam, nf);
	{
		bool bad = ferror(mem) != 0;

		if (fclose(mem) != 0)
			bad = true;
		mem = NULL;
		if (bad) {
			fs_errf(err, errlen, "out of memory rendering the report");
			goto out;
		}
	}
	snprintf(path, sizeof(path), "%s/report.html", session_dir);
	if (fs_write_atomic(path, html, len, 0644, err, errlen) < 0)
		goto out;
	rc = NCCLTUNE_OK;
out:
	if (mem)
		fclose(mem);
	free(html);
	free(fam);
	summary_destroy(s);
	return rc;
}
