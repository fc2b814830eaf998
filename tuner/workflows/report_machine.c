/* report_machine.c - report.html's closing sections: the machine as the probe described
 * it (GPUs, the topology matrix coloured by link) and the workload with the tuned
 * latency of each collective. Every string from the session files goes through
 * report_esc. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "workflows/report_html.h"

static const char *link_class(const char *w)
{
	if (strcmp(w, "X") == 0) return "l-x";
	if (strncmp(w, "NV", 2) == 0) return "l-nv";
	if (strcmp(w, "PIX") == 0 || strcmp(w, "PXB") == 0) return "l-pix";
	if (strcmp(w, "PHB") == 0 || strcmp(w, "NODE") == 0) return "l-phb";
	return "l-sys";
}

static void kv(FILE *o, const char *k, const char *v)
{
	if (!v)
		return;
	fprintf(o, "<tr><th>%s</th><td>", k);
	report_esc(o, v);
	fputs("</td></tr>", o);
}

void report_section_machine(FILE *o, const struct summary_fingerprint *fp)
{
	fputs("<section><h2>Machine</h2>", o);
	if (!fp->present) {
		fputs("<p class=\"dim\">No fingerprint was saved with this session.</p></section>", o);
		return;
	}
	fputs("<table style=\"width:auto\">", o);
	kv(o, "source", fp->source);
	kv(o, "model", fp->model);
	kv(o, "host", fp->host);
	kv(o, "kernel", fp->kernel);
	kv(o, "driver", fp->driver);
	kv(o, "CUDA runtime", fp->cuda_runtime);
	kv(o, "CUDA driver", fp->cuda_driver);
	kv(o, "NCCL", fp->nccl_version);
	if (fp->gpu_count >= 0)
		fprintf(o, "<tr><th>GPUs</th><td>%d</td></tr>", fp->gpu_count);
	fputs("</table>", o);
	if (fp->ngpus) {
		fputs("<h2 style=\"margin-top:16px\">GPUs</h2><table><tr><th class=\"num\">#</th>"
		      "<th>name</th><th>bus id</th><th>uuid</th></tr>", o);
		for (size_t i = 0; i < fp->ngpus; i++) {
			fprintf(o, "<tr><td class=\"num\">%d</td><td>", fp->gpus[i].index);
			report_esc(o, fp->gpus[i].name);
			fputs("</td><td><code>", o);
			report_esc(o, fp->gpus[i].bus_id);
			fputs("</code></td><td class=\"dim\">", o);
			report_esc(o, fp->gpus[i].uuid);
			fputs("</td></tr>", o);
		}
		fputs("</table>", o);
	}
	if (fp->topo_n) {
		fputs("<h2 style=\"margin-top:16px\">Topology</h2><table class=\"topo\" "
		      "style=\"width:auto\"><tr><td></td>", o);
		for (size_t j = 0; j < fp->topo_n; j++)
			fprintf(o, "<td><b>GPU%zu</b></td>", j);
		fputs("</tr>", o);
		for (size_t i = 0; i < fp->topo_n; i++) {
			fprintf(o, "<tr><td><b>GPU%zu</b></td>", i);
			for (size_t j = 0; j < fp->topo_n; j++) {
				const char *w = fp->topology[i * fp->topo_n + j];

				fprintf(o, "<td class=\"%s\">", link_class(w));
				report_esc(o, w);
				fputs("</td>", o);
			}
			fputs("</tr>", o);
		}
		fputs("</table>", o);
	}
	fputs("</section>", o);
}

void report_section_workload(FILE *o, const struct summary *s)
{
	fputs("<section><h2>Workload</h2>", o);
	if (!s->workload.present) {
		fputs("<p class=\"dim\">Unknown.</p></section>", o);
		return;
	}
	fputs("<table><tr><th>collective</th><th class=\"num\">bytes per rank</th>"
	      "<th class=\"num\">count per step</th><th>dtype</th>"
	      "<th class=\"num\">tuned latency per op</th></tr>", o);
	for (size_t i = 0; i < s->workload.n; i++) {
		double us = NAN;

		for (size_t k = 0; k < s->nsizes; k++)
			if (s->sizes[k].bytes == s->workload.c[i].bytes)
				us = s->sizes[k].us;
		fputs("<tr><td>", o);
		report_esc(o, s->workload.c[i].op);
		fprintf(o, "</td><td class=\"num\">%llu</td><td class=\"num\">%ld</td><td>",
		        (unsigned long long)s->workload.c[i].bytes, s->workload.c[i].count);
		report_esc(o, s->workload.dtype);
		fputs("</td><td class=\"num\">", o);
		report_esc_us(o, us);
		fputs("</td></tr>", o);
	}
	fputs("</table></section>", o);
}
