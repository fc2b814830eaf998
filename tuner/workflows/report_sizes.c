/* report_sizes.c - the per-size parts of report.html: the per_size table (tuned and
 * guard sizes, baseline against best with intervals), the ablation of the best's
 * variables, and each run's latency next to what NCCL ran. Every string from the session
 * files goes through report_esc; numbers are printed from doubles only. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ncclvars.h"
#include "workflows/report_html.h"

void report_esc(FILE *o, const char *s)
{
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		switch (ch) {
		case '&': fputs("&amp;", o); break;
		case '<': fputs("&lt;", o); break;
		case '>': fputs("&gt;", o); break;
		case '"': fputs("&quot;", o); break;
		case '\'': fputs("&#39;", o); break;
		/* no "scheme://" survives as text: a URL from a hostile file stays inert even
		 * for a reader that linkifies */
		case ':': fputs("&#58;", o); break;
		default:
			fputc(ch < 0x20 || ch == 0x7f ? '?' : ch, o);
		}
	}
}

void report_esc_us(FILE *o, double us)
{
	char b[32];

	report_esc(o, summary_format_us(us, b, sizeof(b)));
}

/* One row of the per_size table. results.json holds best / baseline; the page states
 * every ratio as the headline does, "x faster" (baseline / best), so the interval's ends
 * swap: 1/hi .. 1/lo. */
static void size_row(FILE *o, const struct summary_size_cmp *c)
{
	fprintf(o, "<tr><td class=\"num\">%.0f</td><td>%s</td><td class=\"num\">",
	        (double)c->bytes, c->guard ? "guard" : "tuned");
	report_esc_us(o, c->baseline_us);
	fputs("</td><td class=\"num\">", o);
	report_esc_us(o, c->best_us);
	fputs("</td><td class=\"num\">", o);
	if (!isnan(c->ratio) && c->ratio > 0)
		fprintf(o, "%.2f&#215;", 1.0 / c->ratio);
	fputs("</td><td class=\"num\">", o);
	if (c->has_ci && c->ci_lo > 0)
		fprintf(o, "%.2f&#215; &#8211; %.2f&#215;", 1.0 / c->ci_hi, 1.0 / c->ci_lo);
	fputs("</td></tr>", o);
}

/* A rule's word, or a dash for NCCL's own choice. */
static void word(FILE *o, const char *w)
{
	if (w)
		report_esc(o, w);
	else
		fputs("&#8211;", o);
}

void report_rules(FILE *o, const struct summary *s)
{
	if (!s->has_rules)
		return;
	fputs("<h3>Per-size rules</h3><p class=\"dim\">Applied by nccltune's tuner plugin, "
	      "the thing deployed; &#8211; is NCCL's own choice.</p>", o);
	if (s->nrules == 0) {
		fputs("<p>None: every size is left to NCCL.</p>", o);
		return;
	}
	fputs("<table style=\"width:auto\"><tr><th class=\"num\">bytes</th><th>algorithm</th>"
	      "<th>protocol</th><th class=\"num\">CTAs</th><th>NCCL ran (measured)</th></tr>", o);
	for (size_t i = 0; i < s->nrules; i++) {
		const struct summary_rule *r = &s->rules[i];
		const char *a = r->algo >= 0 ? ncclvars_word_name(NCCLVARS_ALGOS, (size_t)r->algo)
		                             : NULL;
		const char *p = r->proto >= 0 ? ncclvars_word_name(NCCLVARS_PROTOS, (size_t)r->proto)
		                              : NULL;

		fprintf(o, "<tr class=\"rule\"><td class=\"num\">%llu</td><td>",
		        (unsigned long long)r->bytes);
		word(o, a);
		fputs("</td><td>", o);
		word(o, p);
		if (r->ctas > 0)
			fprintf(o, "</td><td class=\"num\">%d</td><td>", r->ctas);
		else
			fputs("</td><td class=\"num\">&#8211;</td><td>", o);
		if (r->has_ran) {
			/* the loader took NCCL's words only: nothing here needs escaping */
			fprintf(o, "%s/%s on %d CTA(s)", r->ran_algo_word, r->ran_proto_word,
			        r->ran_ctas);
			if ((r->algo >= 0 && r->ran_algo != r->algo) ||
			    (r->proto >= 0 && r->ran_proto != r->proto))
				fputs(" &#8211; not the rule's choice", o);
			else if (r->ctas > 0 && r->ran_ctas != r->ctas)
				fputs(" (NCCL's channel limit)", o);
		} else {
			fputs("&#8211;", o);
		}
		fputs("</td></tr>", o);
	}
	fputs("</table>", o);
}

/* The ablation: each variable of the best, kept or dropped, and why. */
static void ablation(FILE *o, const struct summary *s)
{
	fputs("<h3>Each variable of the best</h3><table><tr><th>variable</th><th>kind</th>"
	      "<th>kept</th><th>why</th></tr>", o);
	for (size_t i = 0; i < s->nablation; i++) {
		const struct summary_ablation *a = &s->ablation[i];

		fputs("<tr><td><code>", o);
		report_esc(o, a->var);
		fputc('=', o);
		report_esc(o, a->value);
		fputs("</code></td><td>", o);
		report_esc(o, a->kind);
		fputs(a->dropped ? "</td><td>dropped</td><td>" : "</td><td>kept</td><td>", o);
		report_esc(o, a->why);
		fputs("</td></tr>", o);
	}
	fputs("</table>", o);
}

void report_section_sizes(FILE *o, const struct summary *s)
{
	if (s->nper_size == 0 && s->nablation == 0)
		return;
	fputs("<section><h2>Per size</h2>", o);
	if (s->nper_size) {
		fputs("<p class=\"dim\">Final rounds, interleaved: guard sizes are measured, never "
		      "tuned; the speed-up is baseline / best, paired by round, as in the headline "
		      "(below 1.00&#215;: slower).</p><table><tr><th "
		      "class=\"num\">bytes</th><th>role</th><th class=\"num\">baseline</th><th "
		      "class=\"num\">best</th><th class=\"num\">speed-up</th><th class=\"num\">95% "
		      "interval</th></tr>", o);
		for (size_t i = 0; i < s->nper_size; i++)
			size_row(o, &s->per_size[i]);
		fputs("</table>", o);
		if (s->guards_verdict) {
			fputs("<p>guards: <b>", o);
			report_esc(o, summary_guards_text(s->guards_verdict));
			fputs("</b></p>", o);
		}
	}
	if (s->nablation)
		ablation(o, s);
	fputs("</section>\n", o);
}

void report_section_runs(FILE *o, const struct summary *s)
{
	if (s->nruns == 0)
		return;
	fputs("<section><h2>Runs and what NCCL ran</h2><details><summary>", o);
	fprintf(o, "%zu run(s): latency per step and, per size, the algorithm, protocol and "
	        "CTAs NCCL chose</summary><table><tr><th class=\"num\">run</th><th>phase</th>"
	        "<th>outcome</th><th class=\"num\">time per step</th><th>what NCCL ran</th></tr>",
	        s->nruns);
	for (size_t i = 0; i < s->nruns; i++) {
		const struct summary_run *r = &s->runs[i];

		fprintf(o, "<tr><td class=\"num\">%ld</td><td>", r->run);
		report_esc(o, r->phase);
		fputs("</td><td>", o);
		report_esc(o, r->outcome);
		fputs("</td><td class=\"num\">", o);
		if (!isnan(r->objective_us))
			report_esc_us(o, r->objective_us);
		fputs("</td><td>", o);
		if (r->nccl[0])
			report_esc(o, r->nccl);
		else
			fputs("<span class=\"dim\">not reported</span>", o);
		fputs("</td></tr>", o);
	}
	fputs("</table></details></section>\n", o);
}
