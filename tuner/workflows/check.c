/* check.c - has the machine changed since it was tuned? Runs `PROBE --fingerprint` and
 * compares what it prints with the fingerprint saved in the session folder.
 *
 * Compared: source and model (a model's result is not a real machine's), driver,
 * cuda_runtime, nccl_version, nccl_path (when saved), gpu_count, the GPU list in order (names and bus ids) and
 * the topology matrix. Shown but not compared: host, kernel, cuda_driver, GPU uuids (a
 * replaced GPU of the same model in the same slot tunes the same).
 *
 * Output and status, for scripts (examples/retune.service):
 *   unchanged: 8 x NVIDIA RTX PRO 6000 Blackwell, driver 580.159.04, ...   -> 0
 *   changed: 1 difference from the fingerprint saved in SESSION            -> 3
 *   driver: 580.159.04 -> 590.10
 * NCCLTUNE_ERROR (1), "cannot measure: ...", when the probe cannot be run, prints no
 * valid fingerprint, or sees no GPU where the session had some (a driver or device
 * problem: re-tuning then would measure nothing, or a stand-in);
 * NCCLTUNE_USAGE (2) for a session folder without a readable saved fingerprint.
 * An unchanged machine whose installed environment (SESSION/installed.json) names a
 * plugin that no longer loads or a table that no longer parses is NCCLTUNE_ERROR too,
 * with what to reinstall. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "nccltune.h"
#include "run/journal.h"
#include "run/runner.h"
#include "result/summary.h"
#include "workflows/check.h"
#include "workflows/installed.h"
#include "workflows/trust.h"

extern char **environ;

#define PROBE_TIMEOUT_S 300.0    /* a real probe initialises CUDA on every GPU */
#define TOPO_LINES_MAX 16

static const char *show(const char *s, char *buf, size_t len)
{
	if (!s)
		return "(none)";
	return fs_escape_text(s, buf, len);
}

/* Print one difference when a and b differ; returns 1 if printed. */
static int diff_str(FILE *out, const char *what, const char *a, const char *b)
{
	char x[160], y[160];

	if ((!a && !b) || (a && b && strcmp(a, b) == 0))
		return 0;
	fprintf(out, "%s: %s -> %s\n", what, show(a, x, sizeof(x)), show(b, y, sizeof(y)));
	return 1;
}

static const char *cell(const struct summary_fingerprint *fp, size_t i, size_t j)
{
	return fp->topology[i * fp->topo_n + j];
}

static int diff_topology(FILE *out, const struct summary_fingerprint *a,
                         const struct summary_fingerprint *b)
{
	size_t n = a->topo_n, shown = 0, more = 0;

	if (a->topo_n != b->topo_n) {
		if (a->topo_n == 0 || b->topo_n == 0)
			fprintf(out, "topology: %s -> %s\n", a->topo_n ? "present" : "(none)",
			        b->topo_n ? "present" : "(none)");
		else
			fprintf(out, "topology: %zu x %zu -> %zu x %zu GPUs\n", a->topo_n, a->topo_n,
			        b->topo_n, b->topo_n);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		for (size_t j = i; j < n; j++) {
			char x[40], y[40];

			/* A link is listed once, as GPUi-GPUj with i <= j, even when only the mirror
			 * cell changed (nvidia-smi prints a symmetric matrix). */
			if (strcmp(cell(a, i, j), cell(b, i, j)) == 0 &&
			    strcmp(cell(a, j, i), cell(b, j, i)) == 0)
				continue;
			if (shown == TOPO_LINES_MAX) {
				more++;
				continue;
			}
			fprintf(out, "topology GPU%zu-GPU%zu: %s -> %s\n", i, j,
			        fs_escape_text(cell(a, i, j), x, sizeof(x)),
			        fs_escape_text(cell(b, i, j), y, sizeof(y)));
			shown++;
		}
	}
	if (more)
		fprintf(out, "topology: %zu more links differ\n", more);
	return (int)(shown + more);
}

/* Print the differences between the saved fingerprint a and the current b; returns
 * their number. */
static int fingerprint_diff(FILE *out, const struct summary_fingerprint *a,
                            const struct summary_fingerprint *b)
{
	int n = 0;
	size_t g = a->ngpus > b->ngpus ? a->ngpus : b->ngpus;

	n += diff_str(out, "source", a->source ? a->source : "measured",
	              b->source ? b->source : "measured");
	n += diff_str(out, "model", a->model, b->model);
	n += diff_str(out, "driver", a->driver, b->driver);
	n += diff_str(out, "cuda_runtime", a->cuda_runtime, b->cuda_runtime);
	n += diff_str(out, "nccl_version", a->nccl_version, b->nccl_version);
	/* Which copy (--nccl): compared when the session recorded one (older fingerprints
	 * have no nccl_path; the saved probe command carries its --nccl). */
	if (a->nccl_path)
		n += diff_str(out, "nccl_path", a->nccl_path, b->nccl_path);
	if (a->gpu_count != b->gpu_count) {
		char x[16] = "(none)", y[16] = "(none)";

		if (a->gpu_count >= 0)
			snprintf(x, sizeof(x), "%d", a->gpu_count);
		if (b->gpu_count >= 0)
			snprintf(y, sizeof(y), "%d", b->gpu_count);
		fprintf(out, "gpu_count: %s -> %s\n", x, y);
		n++;
	}
	for (size_t i = 0; i < g; i++) {
		const struct summary_gpu *x = i < a->ngpus ? &a->gpus[i] : NULL;
		const struct summary_gpu *y = i < b->ngpus ? &b->gpus[i] : NULL;
		char what[64], p[160], q[160];

		if (!x || !y) {
			const struct summary_gpu *h = x ? x : y;

			fprintf(out, "gpu %zu: %s -> %s\n", i,
			        x ? show(h->name, p, sizeof(p)) : "(none)",
			        y ? show(h->name, q, sizeof(q)) : "(none)");
			n++;
			continue;
		}
		snprintf(what, sizeof(what), "gpu %zu name", i);
		n += diff_str(out, what, x->name, y->name);
		snprintf(what, sizeof(what), "gpu %zu bus_id", i);
		n += diff_str(out, what, x->bus_id, y->bus_id);
	}
	n += diff_topology(out, a, b);
	return n;
}

/* Contract in workflows/check.h. */
char *check_relocate_tool(const char *argv0)
{
	static const char *const tools[] = { "nccltune-probe", "nccltune-model-probe" };
	const char *base = strrchr(argv0, '/');
	char path[4096], ferr[512];

	if (!base || access(argv0, X_OK) == 0)
		return NULL;
	base++;
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (strcmp(base, tools[i]) == 0 &&
		    runner_find_tool(tools[i], path, sizeof(path), ferr, sizeof(ferr)) == 0)
			return strdup(path);
	return NULL;
}

/* Run argv + "--fingerprint" and parse what it prints into *fp (borrowing from *doc). */
static int take_fingerprint(char **argv, cJSON **doc, struct summary_fingerprint *fp,
                            char *err, size_t errlen)
{
	struct runner_request req;
	struct runner_result res;
	char **full = NULL, rerr[512], tail[400], where[300];
	const char *end = NULL;
	size_t n = 0;
	int rc = NCCLTUNE_ERROR;

	memset(&req, 0, sizeof(req));
	memset(&res, 0, sizeof(res));
	while (argv[n])
		n++;
	full = calloc(n + 2, sizeof(full[0]));
	if (!full) {
		fs_errf(err, errlen, "out of memory");
		return NCCLTUNE_ERROR;
	}
	memcpy(full, argv, n * sizeof(full[0]));
	full[n] = "--fingerprint";
	req.argv = full;
	req.envp = environ;
	req.timeout_s = PROBE_TIMEOUT_S;
	snprintf(where, sizeof(where), "%s --fingerprint", argv[0]);
	if (runner_run(&req, &res, rerr, sizeof(rerr)) < 0) {
		fs_errf(err, errlen, "%s: %s", where, rerr);
		goto out;
	}
	/* ": <last stderr>" when the probe said anything, so the message ends cleanly */
	tail[0] = '\0';
	if (res.err && res.err[0]) {
		char clean[sizeof(tail) - 2];
		size_t elen = strlen(res.err);

		while (elen > 0 && (res.err[elen - 1] == '\n' || res.err[elen - 1] == '\r'))
			res.err[--elen] = '\0';
		for (char *c = res.err; *c; c++)
			if (*c == '\n' || *c == '\r' || *c == '\t')
				*c = ' ';
		/* the end of stderr says most: keep its last part */
		fs_escape_text(elen > sizeof(clean) - 1 ? res.err + elen - (sizeof(clean) - 1)
		                                        : res.err, clean, sizeof(clean));
		snprintf(tail, sizeof(tail), ": %s", clean);
	}
	if (!res.spawned) {
		fs_errf(err, errlen, "%s: cannot start the probe: %s", where, res.spawn_error);
		goto out;
	}
	if (res.timed_out) {
		fs_errf(err, errlen, "%s: no answer within %.0f s", where, PROBE_TIMEOUT_S);
		goto out;
	}
	if (res.signal) {
		fs_errf(err, errlen, "%s: killed by signal %d%s", where, res.signal, tail);
		goto out;
	}
	if (res.exit_status != 0) {
		fs_errf(err, errlen, "%s: exit status %d%s", where, res.exit_status, tail);
		goto out;
	}
	*doc = cJSON_ParseWithLengthOpts(res.out, res.out_len, &end, false);
	if (!*doc) {
		fs_errf(err, errlen, "%s: printed no JSON fingerprint", where);
		goto out;
	}
	for (; end && end < res.out + res.out_len; end++) {
		if (*end != ' ' && *end != '\n' && *end != '\r' && *end != '\t') {
			fs_errf(err, errlen, "%s: trailing output after the fingerprint", where);
			goto out;
		}
	}
	if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(*doc, "schema"))) {
		fs_errf(err, errlen, "%s: output has no \"schema\": not a fingerprint", where);
		goto out;
	}
	if (summary_fingerprint_parse(*doc, where, fp, err, errlen) < 0)
		goto out;
	rc = NCCLTUNE_OK;
out:
	runner_result_free(&res);
	free(full);
	return rc;
}

/* Does fp describe a machine without GPUs (gpu_count 0, or no count and no GPU list)? */
static bool sees_no_gpu(const struct summary_fingerprint *fp)
{
	return fp->gpu_count == 0 || (fp->gpu_count < 0 && fp->ngpus == 0);
}

/* Put "cannot measure: " before the message in err: the verdict of a check whose probe
 * could not describe the machine (exit 1), which is neither "unchanged" nor "changed". */
static void cannot_measure(char *err, size_t errlen)
{
	char copy[2048];

	snprintf(copy, sizeof(copy), "%s", err);
	fs_errf(err, errlen, "cannot measure: %s", copy);
}

/* check runs the probe command its journal records: a session folder is trusted like a
 * script, so it (and its journal) must be yours and writable by nobody else, and so must
 * every folder on the way to it (root's or yours; trust.h): else another user could
 * swap the folder for one of theirs between this check and the run. Returns
 * NCCLTUNE_OK, or NCCLTUNE_USAGE with the reason. */
static int trusted_folder(const char *dir, char *err, size_t errlen)
{
	char why[4096 + 128];
	struct stat st;
	int fd;

	/* a results.json given instead of a folder: nothing of it is run */
	if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
		return NCCLTUNE_OK;
	if (journal_check_trusted(dir, why, sizeof(why)) != 0) {
		fs_errf(err, errlen, "%s: refused: %s; check runs the probe command the session's "
		        "journal records, so a session folder is trusted like a script (chown it "
		        "or chmod go-w it, or copy the results.json alone)", dir, why);
		return NCCLTUNE_USAGE;
	}
	fd = trust_open_dir(dir, why, sizeof(why));
	if (fd < 0) {
		fs_errf(err, errlen, "%s: refused: %s; check runs the probe command the session's "
		        "journal records, so every folder on the way to the session must be "
		        "changeable by nobody but root and you", dir, why);
		return NCCLTUNE_USAGE;
	}
	close(fd);
	return NCCLTUNE_OK;
}

int nccltune_check(const char *session_dir, const char *probe_command, FILE *out,
                   char *err, size_t errlen)
{
	struct summary *s = NULL;
	struct summary_fingerprint now;
	cJSON *doc = NULL;
	char **argv = NULL, desc[1024];
	int rc = NCCLTUNE_USAGE, n;

	memset(&now, 0, sizeof(now));
	rc = trusted_folder(session_dir, err, errlen);
	if (rc != NCCLTUNE_OK)
		goto out;
	rc = NCCLTUNE_USAGE;
	if (summary_load(session_dir, SUMMARY_JOURNAL | SUMMARY_PARTIAL, &s, err,
	                      errlen) < 0)
		goto out;
	if (!s->fp.present) {
		fs_errf(err, errlen, "%s: no fingerprint saved in the session; nothing to compare "
		        "with", session_dir);
		goto out;
	}
	if (probe_command) {
		if (runner_split_command(probe_command, &argv, err, errlen) < 0)
			goto out;
	} else if (!s->probe_argv) {
		fs_errf(err, errlen, "%s: the session does not record its probe; pass --probe CMD "
		        "or --model NAME", session_dir);
		goto out;
	}
	if (!argv) {
		char *moved = check_relocate_tool(s->probe_argv[0]);

		/* the summary frees argv[0]; swap in the tool found here */
		if (moved) {
			free(s->probe_argv[0]);
			s->probe_argv[0] = moved;
		}
	}
	rc = take_fingerprint(argv ? argv : s->probe_argv, &doc, &now, err, errlen);
	if (rc != NCCLTUNE_OK) {
		cannot_measure(err, errlen);
		goto out;
	}
	if (sees_no_gpu(&now) && !sees_no_gpu(&s->fp)) {
		char e[512];

		fs_errf(e, sizeof(e), "the probe sees no GPU, and the session tuned %d: a driver or "
		        "device problem, not a new machine; nothing compared, nothing to re-tune",
		        s->fp.gpu_count > 0 ? s->fp.gpu_count : (int)s->fp.ngpus);
		fs_errf(err, errlen, "%s", e);
		cannot_measure(err, errlen);
		rc = NCCLTUNE_ERROR;
		goto out;
	}
	summary_describe_machine(&now, desc, sizeof(desc));
	{
		char *buf = NULL;
		size_t blen = 0;
		FILE *mem = open_memstream(&buf, &blen);

		if (!mem) {
			fs_errf(err, errlen, "out of memory");
			rc = NCCLTUNE_ERROR;
			goto out;
		}
		n = fingerprint_diff(mem, &s->fp, &now);
		if (fclose(mem) != 0) {
			free(buf);
			fs_errf(err, errlen, "out of memory");
			rc = NCCLTUNE_ERROR;
			goto out;
		}
		if (n == 0 && s->dir[0] &&
		    (rc = installed_verify(s->dir, err, errlen)) != NCCLTUNE_OK) {
			/* the machine is the same, but what was installed from it is broken */
		} else if (n == 0) {
			char clean[1024];

			fprintf(out, "unchanged: %s\n", fs_escape_text(desc, clean, sizeof(clean)));
			/* the fingerprint cannot see a server option: say it is still needed */
			if (s->best.present && s->best.symmetric)
				fprintf(out, "note: the result was measured with symmetric memory on in the "
				        "server (a server option, not exported): keep it on\n");
			rc = NCCLTUNE_OK;
		} else {
			fprintf(out, "changed: %d difference%s from the fingerprint saved in %s\n", n,
			        n == 1 ? "" : "s", session_dir);
			fputs(buf, out);
			rc = NCCLTUNE_CHANGED;
		}
		free(buf);
	}
	if (fflush(out) != 0) {
		fs_errf(err, errlen, "writing the verdict failed");
		rc = NCCLTUNE_ERROR;
	}
out:
	summary_fingerprint_clear(&now);
	cJSON_Delete(doc);
	runner_free_argv(argv);
	summary_destroy(s);
	return rc;
}
