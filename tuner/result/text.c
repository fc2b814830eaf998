/* text.c - a loaded summary in words, for exports, report and show: times, the
 * machine, the workload, the gain and whether it is shown, environments, and the runs
 * grouped by protocol / algorithm. Nothing here reads a file. */
#include "result/summary.h"
#include "run/profile.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *summary_env_get(const struct summary_env *env, const char *name)
{
	for (size_t i = 0; env && i < env->n; i++)
		if (strcmp(env->v[i].name, name) == 0)
			return env->v[i].value;
	return NULL;
}

/* ---- human forms ---- */

char *summary_sanitize(const char *in, char *buf, size_t len)
{
	size_t o = 0;

	if (len == 0)
		return buf;
	for (; in && *in && o + 1 < len; in++) {
		unsigned char ch = (unsigned char)*in;

		buf[o++] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
	}
	buf[o] = '\0';
	return buf;
}

const char *summary_guards_text(const char *verdict)
{
	static const char *const words[][2] = {
		{"ok", "ok (each shown within 2% of NCCL's defaults)"},
		{"slower", "slower (shown more than 2% slower than NCCL's defaults)"},
		{"not_shown_safe", "not shown safe (the rounds could not show them within 2% "
		 "of NCCL's defaults)"},
		{"measured_once", "not judged (measured once)"},
		{"unmeasured", "unmeasured"},
	};

	for (size_t i = 0; verdict && i < sizeof words / sizeof words[0]; i++)
		if (strcmp(verdict, words[i][0]) == 0)
			return words[i][1];
	return verdict;
}

char *summary_format_us(double us, char *buf, size_t len)
{
	if (!isfinite(us))
		snprintf(buf, len, "-");
	else if (us >= 1000.0)
		snprintf(buf, len, "%.2f ms", us / 1000.0);
	else
		snprintf(buf, len, "%.1f us", us);
	return buf;
}

/* Append printf output at *off, never past len. */
static void bprintf(char *buf, size_t len, size_t *off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void bprintf(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	*off = (size_t)n >= len - *off ? len : *off + (size_t)n;
}

char *summary_describe_machine(const struct summary_fingerprint *fp, char *buf, size_t len)
{
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	if (!fp->present) {
		bprintf(buf, len, &off, "unknown machine (no fingerprint)");
		return buf;
	}
	if (fp->ngpus > 0) {
		/* Group equal names: "8 x NVIDIA RTX PRO 6000" or "6 x A, 2 x B". */
		bool first = true;

		for (size_t i = 0; i < fp->ngpus; i++) {
			const char *name = fp->gpus[i].name ? fp->gpus[i].name : "GPU";
			bool seen = false;
			size_t count = 0;

			for (size_t j = 0; j < i; j++)
				if (strcmp(fp->gpus[j].name ? fp->gpus[j].name : "GPU", name) == 0)
					seen = true;
			if (seen)
				continue;
			for (size_t j = i; j < fp->ngpus; j++)
				if (strcmp(fp->gpus[j].name ? fp->gpus[j].name : "GPU", name) == 0)
					count++;
			bprintf(buf, len, &off, "%s%zu x %s", first ? "" : " + ", count, name);
			first = false;
		}
	} else if (fp->gpu_count >= 0) {
		bprintf(buf, len, &off, "%d GPUs", fp->gpu_count);
	} else {
		bprintf(buf, len, &off, "GPUs unknown");
	}
	if (fp->driver)
		bprintf(buf, len, &off, ", driver %s", fp->driver);
	if (fp->cuda_runtime)
		bprintf(buf, len, &off, ", CUDA %s", fp->cuda_runtime);
	if (fp->nccl_version)
		bprintf(buf, len, &off, ", NCCL %s", fp->nccl_version);
	if (fp->nccl_path)
		bprintf(buf, len, &off, " (%s)", fp->nccl_path);
	if (fp->host)
		bprintf(buf, len, &off, ", host %s", fp->host);
	if (fp->source && strcmp(fp->source, "model") == 0)
		bprintf(buf, len, &off, " [model %s]", fp->model ? fp->model : "?");
	return buf;
}

char *summary_describe_workload(const struct summary_workload *w, char *buf, size_t len)
{
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	if (!w->present) {
		bprintf(buf, len, &off, "unknown workload");
		return buf;
	}
	for (size_t i = 0; i < w->n; i++)
		bprintf(buf, len, &off, "%s%ld x %llu B", i ? " + " : "", w->c[i].count,
		        (unsigned long long)w->c[i].bytes);
	bprintf(buf, len, &off, " all-reduce %s per step", w->dtype);
	return buf;
}

char *summary_describe_gain(const struct summary *s, char *buf, size_t len)
{
	char b[32], t[32];
	size_t off = 0;
	double ratio;

	if (len)
		buf[0] = '\0';
	if (!s->best.present) {
		bprintf(buf, len, &off, "no configuration worked");
		if (s->baseline.present)
			bprintf(buf, len, &off, " (baseline %s/step)",
			        summary_format_us(s->baseline.objective_us, b, sizeof(b)));
		return buf;
	}
	summary_format_us(s->best.objective_us, t, sizeof(t));
	if (!s->baseline.present) {
		bprintf(buf, len, &off, "tuned %s/step (no baseline measured)", t);
		if (summary_unmeasured(s)) {
			bprintf(buf, len, &off, ": ");
			summary_describe_unmeasured(s, buf + off, len > off ? len - off : 0);
		}
		return buf;
	}
	summary_format_us(s->baseline.objective_us, b, sizeof(b));
	if (summary_unmeasured(s)) {
		bprintf(buf, len, &off, "baseline %s/step, tuned %s/step (measured once): ", b, t);
		summary_describe_unmeasured(s, buf + off, len > off ? len - off : 0);
		return buf;
	}
	ratio = s->has_gain ? s->gain
	        : (s->best.objective_us > 0 ? s->baseline.objective_us / s->best.objective_us : NAN);
	bprintf(buf, len, &off, "baseline %s/step, tuned %s/step", b, t);
	if (isfinite(ratio)) {
		if (ratio >= 1.005)
			bprintf(buf, len, &off, ": %.2fx faster", ratio);
		else if (ratio > 0.995)
			bprintf(buf, len, &off, ": %.2fx (no gain)", ratio);
		else
			bprintf(buf, len, &off, ": %.2fx (slower)", ratio);
		if (s->has_gain && isfinite(s->gain_lo))
			bprintf(buf, len, &off, " (95%% CI %.2f-%.2fx)", s->gain_lo, s->gain_hi);
		if (summary_gain_unproven(s))
			bprintf(buf, len, &off, "; not shown to be faster than NCCL's defaults");
	}
	return buf;
}

bool summary_gain_is_unproven(double gain, double gain_lo)
{
	return isfinite(gain) && gain >= 1.005 && isfinite(gain_lo) && gain_lo <= 1.0;
}

bool summary_unmeasured(const struct summary *s)
{
	return s->best.present && s->verdict && strcmp(s->verdict, SUMMARY_UNMEASURED) == 0;
}

char *summary_unmeasured_text(long budget_needed, char *buf, size_t len)
{
	if (budget_needed > 0)
		snprintf(buf, len, SUMMARY_UNMEASURED "; run with --budget %ld or more",
		         budget_needed);
	else
		snprintf(buf, len, SUMMARY_UNMEASURED "; the final rounds did not run twice (a time "
		         "limit, or failed repeats), or could not show a guard size within 2%% of "
		         "NCCL's defaults: run it again, with a larger --budget");
	return buf;
}

char *summary_describe_unmeasured(const struct summary *s, char *buf, size_t len)
{
	return summary_unmeasured_text(s->budget_needed, buf, len);
}

bool summary_shown_faster(const struct summary *s)
{
	return s->best.present && (s->best.env.n > 0 || s->nrules > 0) && s->baseline.present &&
	       s->has_gain && isfinite(s->gain_lo) && s->gain_lo > 1.0 && !summary_unmeasured(s);
}

bool summary_gain_unproven(const struct summary *s)
{
	/* a rules-only best is a recommendation too (the plugin's table) */
	return s->best.present && (s->best.env.n > 0 || s->nrules > 0) && s->baseline.present &&
	       s->has_gain &&
	       summary_gain_is_unproven(s->gain, s->gain_lo);
}

char *summary_describe_env(const struct summary_env *env, char *buf, size_t len)
{
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	if (env->n == 0)
		bprintf(buf, len, &off, "(NCCL defaults)");
	for (size_t i = 0; i < env->n; i++) {
		if (env->v[i].value)
			bprintf(buf, len, &off, "%s%s=%s", i ? " " : "", env->v[i].name, env->v[i].value);
		else
			bprintf(buf, len, &off, "%s%s unset", i ? " " : "", env->v[i].name);
	}
	return buf;
}

/* ---- families ---- */

char *summary_family_label(const struct summary_env *env, char *buf, size_t len)
{
	const char *proto = summary_env_get(env, "NCCL_PROTO");
	const char *algo = summary_env_get(env, "NCCL_ALGO");
	char tmp[80];

	snprintf(tmp, sizeof(tmp), "%.36s / %.36s", proto ? proto : "default",
	         algo ? algo : "default");
	return summary_sanitize(tmp, buf, len);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int cmp_family(const void *a, const void *b)
{
	const struct summary_family *x = a, *y = b;

	if (isnan(x->best) != isnan(y->best))
		return isnan(x->best) ? 1 : -1;
	if (!isnan(x->best) && x->best != y->best)
		return x->best < y->best ? -1 : 1;
	return strcmp(x->label, y->label);
}

int summary_families(const struct summary *s, struct summary_family **out, size_t *n)
{
	struct summary_family *f = NULL;
	double *vals = NULL;
	size_t nf = 0;
	int rc = -1;

	*out = NULL;
	*n = 0;
	if (s->nruns == 0)
		return 0;
	f = calloc(s->nruns, sizeof(f[0]));
	vals = calloc(s->nruns, sizeof(vals[0]));
	if (!f || !vals)
		goto out;
	for (size_t i = 0; i < s->nruns; i++) {
		const struct summary_run *r = &s->runs[i];
		char label[80];
		size_t k;

		if (strcmp(r->phase, "baseline") == 0)
			continue;
		summary_family_label(&r->env, label, sizeof(label));
		for (k = 0; k < nf; k++)
			if (strcmp(f[k].label, label) == 0)
				break;
		if (k == nf) {
			snprintf(f[nf].label, sizeof(f[nf].label), "%s", label);
			nf++;
		}
		f[k].runs++;
		if (!isnan(r->objective_us))
			f[k].ok++;
	}
	for (size_t k = 0; k < nf; k++) {
		size_t m = 0;

		for (size_t i = 0; i < s->nruns; i++) {
			char label[80];

			if (strcmp(s->runs[i].phase, "baseline") == 0 || isnan(s->runs[i].objective_us))
				continue;
			if (strcmp(summary_family_label(&s->runs[i].env, label, sizeof(label)),
			           f[k].label) == 0)
				vals[m++] = s->runs[i].objective_us;
		}
		f[k].best = f[k].median = NAN;
		if (m > 0) {
			qsort(vals, m, sizeof(vals[0]), cmp_double);
			f[k].best = vals[0];
			f[k].median = m % 2 ? vals[m / 2] : 0.5 * (vals[m / 2 - 1] + vals[m / 2]);
		}
	}
	qsort(f, nf, sizeof(f[0]), cmp_family);
	*out = nf ? f : NULL;
	*n = nf;
	if (!nf)
		free(f);
	f = NULL;
	rc = 0;
out:
	free(f);
	free(vals);
	return rc;
}

size_t summary_symmetric_lines(const char *like, const char **lines, size_t max)
{
	static char text[SUMMARY_SYMMETRIC_LINES_MAX][2 * PROFILE_TEXT_MAX + 16];
	static struct profile p;
	size_t n = 0;
	bool named = false;
	char e[256];

	for (size_t i = 0; like && i < profiles_builtin_count; i++)
		named = named || strcmp(like, profiles_builtin[i].name) == 0;
	for (size_t i = 0; i < profiles_builtin_count && n < max && n < SUMMARY_SYMMETRIC_LINES_MAX;
	     i++) {
		const struct profile_builtin *b = &profiles_builtin[i];

		if ((named && strcmp(like, b->name) != 0) ||
		    profile_parse(b->text, b->len, b->name, &p, e, sizeof e) != 0 || !p.has_symmetric)
			continue;
		snprintf(text[n], sizeof text[n], "%s; needs %s", p.symm_switch, p.symm_needs);
		lines[n] = text[n];
		n++;
	}
	return n;
}

const char *summary_kernel_words(const char *kernel)
{
	if (kernel && strcmp(kernel, "symmetric") == 0)
		return "NCCL ran a symmetric kernel (its TUNING line said AllReduce [Symmetric])";
	if (kernel && strcmp(kernel, "not symmetric") == 0)
		return "NCCL ran no symmetric kernel (its TUNING lines named other kernels): the "
		       "gain is not from one";
	return "whether NCCL ran a symmetric kernel is unknown (no TUNING line: one rank, or a "
	       "probe that reports no decisions)";
}

char *summary_describe_step(const struct summary *s, const struct summary_measure *m,
                            char *buf, size_t len)
{
	double ops = 0, kernel, ar;
	char a[32], b[32], t[32];

	if (!s->workload.has_compute || !(s->workload.compute_kernel_us > 0) || !m->present ||
	    !(m->objective_us > 0))
		return NULL;
	for (size_t i = 0; i < s->workload.n; i++)
		ops += (double)s->workload.c[i].count;
	kernel = m->has_step ? m->step_kernel_us : s->workload.compute_kernel_us;
	ar = m->has_step ? m->step_allreduce_us : m->objective_us - ops * kernel;
	snprintf(buf, len, "step %s, all-reduces %s (the step less %.0f x %s, the kernel as %s)",
	         summary_format_us(m->objective_us, a, sizeof a),
	         summary_format_us(ar > 0 ? ar : 0, b, sizeof b), ops,
	         summary_format_us(kernel, t, sizeof t),
	         m->has_step ? "measured alone" : "asked: this probe reported no measured kernel");
	return buf;
}
