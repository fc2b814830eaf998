/* report_sizes.c - the per-size parts of report.html: the per_size table (tuned and
 * guard sizes, baseline against best with intervals), the ablation of the best's
 * variables, and each run's latency next to what NCCL ran. Every string from the session
 * files goes through report_esc; numbers are printed from doubles only. */
#include <math.h>
#include <stdio.h>
#include <string.h>

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

/* A number of object o, or NAN. */
static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* One row of the per_size table. */
static void size_row(FILE *o, const cJSON *e)
{
	const cJSON *role = cJSON_GetObjectItemCaseSensitive(e, "role");
	const cJSON *ci = cJSON_GetObjectItemCaseSensitive(e, "ratio_ci95");
	bool guard = cJSON_IsString(role) && strcmp(role->valuestring, "guard") == 0;
	double bytes = num(e, "bytes"), r = num(e, "ratio");

	fprintf(o, "<tr><td class=\"num\">%.0f</td><td>%s</td><td class=\"num\">",
	        isnan(bytes) || bytes < 0 ? 0 : bytes, guard ? "guard" : "tuned");
	report_esc_us(o, num(e, "baseline_us"));
	fputs("</td><td class=\"num\">", o);
	report_esc_us(o, num(e, "best_us"));
	fputs("</td><td class=\"num\">", o);
	if (!isnan(r))
		fprintf(o, "%.2f&#215;", r);
	fputs("</td><td class=\"num\">", o);
	if (cJSON_IsArray(ci) && cJSON_GetArraySize(ci) == 2 && cJSON_IsNumber(ci->child) &&
	    cJSON_IsNumber(ci->child->next))
		fprintf(o, "%.2f&#215; &#8211; %.2f&#215;", ci->child->valuedouble,
		        ci->child->next->valuedouble);
	fputs("</td></tr>", o);
}

/* The ablation: each variable of the best, kept or dropped, and why. */
static void ablation(FILE *o, const cJSON *a)
{
	const cJSON *e;

	fputs("<h3>Each variable of the best</h3><table><tr><th>variable</th><th>kind</th>"
	      "<th>kept</th><th>why</th></tr>", o);
	cJSON_ArrayForEach(e, a) {
		const cJSON *var = cJSON_GetObjectItemCaseSensitive(e, "var");
		const cJSON *val = cJSON_GetObjectItemCaseSensitive(e, "value");
		const cJSON *kind = cJSON_GetObjectItemCaseSensitive(e, "kind");
		const cJSON *dropped = cJSON_GetObjectItemCaseSensitive(e, "dropped");
		const cJSON *why = cJSON_GetObjectItemCaseSensitive(e, "why");

		fputs("<tr><td><code>", o);
		report_esc(o, cJSON_IsString(var) ? var->valuestring : "?");
		fputc('=', o);
		report_esc(o, cJSON_IsString(val) ? val->valuestring : "?");
		fputs("</code></td><td>", o);
		report_esc(o, cJSON_IsString(kind) ? kind->valuestring : "");
		fputs(cJSON_IsTrue(dropped) ? "</td><td>dropped</td><td>" : "</td><td>kept</td><td>",
		      o);
		report_esc(o, cJSON_IsString(why) ? why->valuestring : "");
		fputs("</td></tr>", o);
	}
	fputs("</table>", o);
}

void report_section_sizes(FILE *o, const struct summary *s)
{
	const cJSON *t = s->doc ? cJSON_GetObjectItemCaseSensitive(s->doc, "per_size") : NULL;
	const cJSON *g = s->doc ? cJSON_GetObjectItemCaseSensitive(s->doc, "guards") : NULL;
	const cJSON *a = s->doc ? cJSON_GetObjectItemCaseSensitive(s->doc, "ablation") : NULL;
	const cJSON *verdict = cJSON_IsObject(g) ? cJSON_GetObjectItemCaseSensitive(g, "verdict")
	                                         : NULL, *e;
	bool has_t = cJSON_IsArray(t) && t->child, has_a = cJSON_IsArray(a) && a->child;

	if (!has_t && !has_a)
		return;
	fputs("<section><h2>Per size</h2>", o);
	if (has_t) {
		fputs("<p class=\"dim\">Final rounds, interleaved: guard sizes are measured, never "
		      "tuned; the ratio is best / baseline, paired by round.</p><table><tr><th "
		      "class=\"num\">bytes</th><th>role</th><th class=\"num\">baseline</th><th "
		      "class=\"num\">best</th><th class=\"num\">ratio</th><th class=\"num\">95% "
		      "interval</th></tr>", o);
		cJSON_ArrayForEach(e, t)
			size_row(o, e);
		fputs("</table>", o);
		if (cJSON_IsString(verdict)) {
			fputs("<p>guards: <b>", o);
			report_esc(o, verdict->valuestring);
			fputs("</b></p>", o);
		}
	}
	if (has_a)
		ablation(o, a);
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
