/* nccllog.c - NCCL's debug log: the private folder, the incremental reader, the line
 * parser and the tally of one capture window (see nccllog.h). */
#include "nccllog.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"

/* ---- parsing ---- */

/* If s starts with `lit`, return what follows; else NULL. */
static const char *skip_lit(const char *s, const char *lit)
{
	size_t n = strlen(lit);

	return strncmp(s, lit, n) == 0 ? s + n : NULL;
}

/* A non-negative decimal integer at *s (no sign), advancing *s. Returns 0 or -1. */
static int read_uint(const char **s, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;

	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*s = p;
	*out = v;
	return 0;
}

/* A word (up to a space, '}' or the end) into buf, advancing *s. Returns 0 or -1. */
static int read_word(const char **s, char *buf, size_t len)
{
	size_t n = strcspn(*s, " }");

	if (n == 0 || n >= len)
		return -1;
	memcpy(buf, *s, n);
	buf[n] = '\0';
	*s += n;
	return 0;
}

/* NCCL's log words ("RING", "NVLS_TREE", "COLLNET_DIRECT", "SIMPLE") as indices: the
 * underscores dropped, then the protocol's names compared without case. */
static int log_name(const char *word, bool is_algo)
{
	char flat[32];
	size_t n = 0;

	for (const char *p = word; *p && n + 1 < sizeof flat; p++)
		if (*p != '_')
			flat[n++] = *p;
	flat[n] = '\0';
	return is_algo ? proto_nccl_algo_parse(flat) : proto_nccl_proto_parse(flat);
}

/* "AllReduce: 43008 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}" (after "AllReduce") */
static int parse_coll(const char *p, struct nccllog_line *out)
{
	char algo[32], proto[32];
	uint64_t bytes, lo, hi;

	if (!(p = skip_lit(p, ": ")) || read_uint(&p, &bytes) != 0 ||
	    !(p = skip_lit(p, " Bytes -> Algo ")) || read_word(&p, algo, sizeof algo) != 0 ||
	    !(p = skip_lit(p, " proto ")) || read_word(&p, proto, sizeof proto) != 0 ||
	    !(p = skip_lit(p, " channel{Lo..Hi}={")) || read_uint(&p, &lo) != 0 ||
	    !(p = skip_lit(p, "..")) || read_uint(&p, &hi) != 0 || *p != '}')
		return -1;
	if (hi < lo || hi - lo + 1 > PROTO_MAX_CTAS)
		return -1;
	out->d.algo = log_name(algo, true);
	out->d.proto = log_name(proto, false);
	if (out->d.algo < 0 || out->d.proto < 0)
		return -1;
	out->bytes = bytes;
	out->d.ctas = (int)(hi - lo + 1);
	return 0;
}

/* "AllReduce [Symmetric]: 4096 Bytes -> Kernel AllReduce_AGxLL_R nchannels 2 ..." */
static int parse_symmetric(const char *p, struct nccllog_line *out)
{
	uint64_t bytes, nch;

	if (!(p = skip_lit(p, " [Symmetric]: ")) || read_uint(&p, &bytes) != 0 ||
	    !(p = skip_lit(p, " Bytes -> Kernel ")) ||
	    read_word(&p, out->d.kernel, sizeof out->d.kernel) != 0 ||
	    !(p = skip_lit(p, " nchannels ")) || read_uint(&p, &nch) != 0)
		return -1;
	if (nch < 1 || nch > PROTO_MAX_CTAS)
		return -1;
	out->bytes = bytes;
	out->d.algo = PROTO_NCCL_ANY;
	out->d.proto = PROTO_NCCL_ANY;
	out->d.ctas = (int)nch;
	out->d.symmetric = true;
	return 0;
}

enum nccllog_kind nccllog_parse_line(const char *line, struct nccllog_line *out)
{
	const char *p;
	int rc;

	memset(out, 0, sizeof *out);
	if (strstr(line, " NCCL WARN ")) {
		out->kind = NCCLLOG_WARN;
		return out->kind;
	}
	p = strstr(line, " NCCL INFO ");
	if (!p || !(p = skip_lit(p + strlen(" NCCL INFO "), "AllReduce")))
		return NCCLLOG_OTHER;
	rc = *p == ':' ? parse_coll(p, out) : parse_symmetric(p, out);
	if (rc != 0) {
		memset(out, 0, sizeof *out);
		return NCCLLOG_OTHER;
	}
	out->d.known = true;
	out->kind = NCCLLOG_ALLREDUCE;
	return out->kind;
}

/* ---- the folder ---- */

int nccllog_setup(struct nccllog *log, char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR");
	char file[PATH_MAX];
	int n;

	memset(log, 0, sizeof *log);
	if (getenv("NCCL_DEBUG"))
		return 0;
	if (!tmp || !*tmp)
		tmp = "/tmp";
	n = snprintf(log->dir, sizeof log->dir, "%s/nccltune-probe-XXXXXX", tmp);
	if (n < 0 || (size_t)n >= sizeof log->dir) {
		log->dir[0] = '\0';
		return fs_errf(err, errlen, "decisions: TMPDIR '%s' is too long", tmp);
	}
	if (!mkdtemp(log->dir)) {
		fs_errf(err, errlen, "decisions: mkdtemp %s: %s", log->dir, strerror(errno));
		log->dir[0] = '\0';
		return -1;
	}
	log->owner = true;
	snprintf(file, sizeof file, "%s/nccl.%%p.log", log->dir);
	if (setenv("NCCL_DEBUG_FILE", file, 1) != 0 ||
	    setenv("NCCL_DEBUG_SUBSYS", "TUNING", 1) != 0 ||
	    setenv("NCCL_DEBUG", "INFO", 1) != 0) {
		fs_errf(err, errlen, "decisions: setenv: %s", strerror(errno));
		unsetenv("NCCL_DEBUG");
		nccllog_cleanup(log);
		return -1;
	}
	log->active = true;
	return 0;
}

void nccllog_cleanup(struct nccllog *log)
{
	DIR *d;
	struct dirent *e;

	if (!log || !log->owner)
		return;
	log->owner = false;
	log->active = false;
	d = opendir(log->dir);
	if (d) {
		/* only the files NCCL made here: nccl.<pid>.log */
		while ((e = readdir(d)) != NULL) {
			char path[PATH_MAX];
			size_t len = strlen(e->d_name);

			if (strncmp(e->d_name, "nccl.", 5) != 0 || len < 9 ||
			    strcmp(e->d_name + len - 4, ".log") != 0)
				continue;
			if (snprintf(path, sizeof path, "%s/%s", log->dir, e->d_name) < (int)sizeof path)
				unlink(path);
		}
		closedir(d);
	}
	rmdir(log->dir);
}

int nccllog_path(const struct nccllog *log, pid_t pid, char *buf, size_t len)
{
	int n;

	if (!log || !log->active)
		return -1;
	n = snprintf(buf, len, "%s/nccl.%ld.log", log->dir, (long)pid);
	return n >= 0 && (size_t)n < len ? 0 : -1;
}

/* ---- reading ---- */

void nccllog_reader_init(struct nccllog_reader *r, const char *path, FILE *warn_out)
{
	memset(r, 0, sizeof *r);
	r->fd = -1;
	r->warn_out = warn_out;
	snprintf(r->path, sizeof r->path, "%s", path ? path : "");
	r->dead = !path || !*path;
}

static bool same_decision(const struct proto_decision *a, const struct proto_decision *b)
{
	return a->algo == b->algo && a->proto == b->proto && a->ctas == b->ctas &&
	       a->symmetric == b->symmetric && strcmp(a->kernel, b->kernel) == 0;
}

static void tally(struct nccllog_reader *r, const struct proto_decision *d)
{
	r->nlines++;
	for (size_t i = 0; i < r->nkinds; i++) {
		if (same_decision(&r->kinds[i].d, d)) {
			r->kinds[i].n++;
			return;
		}
	}
	if (r->nkinds == NCCLLOG_KINDS) {
		r->overflow = true;
		return;
	}
	r->kinds[r->nkinds].d = *d;
	r->kinds[r->nkinds].n = 1;
	r->nkinds++;
}

static void handle_line(struct nccllog_reader *r, const char *line)
{
	struct nccllog_line l;

	switch (nccllog_parse_line(line, &l)) {
	case NCCLLOG_WARN:
		if (r->warn_out) {
			fprintf(r->warn_out, "%s\n", line);
			fflush(r->warn_out);
		}
		break;
	case NCCLLOG_ALLREDUCE:
		if (r->window && l.bytes == r->bytes)
			tally(r, &l.d);
		break;
	case NCCLLOG_OTHER:
		break;
	}
}

size_t nccllog_reader_poll(struct nccllog_reader *r)
{
	size_t lines = 0;

	if (r->dead)
		return 0;
	if (r->fd < 0) {
		r->fd = open(r->path, O_RDONLY | O_CLOEXEC);
		if (r->fd < 0) {
			if (errno != ENOENT)
				r->dead = true;
			return 0;
		}
		/* open is enough to go on reading; the name would only outlive a killed probe */
		unlink(r->path);
	}
	for (;;) {
		char chunk[4096];
		ssize_t n = read(r->fd, chunk, sizeof chunk);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r->dead = true;
			break;
		}
		if (n == 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			char c = chunk[i];

			if (c == '\n') {
				if (!r->skipping) {
					r->buf[r->len] = '\0';
					handle_line(r, r->buf);
					lines++;
				}
				r->len = 0;
				r->skipping = false;
			} else if (!r->skipping) {
				if (r->len + 1 >= sizeof r->buf || c == '\0')
					r->skipping = true;   /* not a line NCCL writes: drop it whole */
				else
					r->buf[r->len++] = c;
			}
		}
	}
	return lines;
}

void nccllog_window_begin(struct nccllog_reader *r, uint64_t bytes)
{
	nccllog_reader_poll(r);
	r->window = true;
	r->bytes = bytes;
	r->nlines = 0;
	r->nkinds = 0;
	r->overflow = false;
}

bool nccllog_window_end(struct nccllog_reader *r, int ops, struct proto_decision *out)
{
	size_t best = 0;

	nccllog_reader_poll(r);
	r->window = false;
	memset(out, 0, sizeof *out);
	if (ops < 1 || r->nlines != (size_t)ops || r->nkinds == 0)
		return false;
	for (size_t i = 1; i < r->nkinds; i++)
		if (r->kinds[i].n > r->kinds[best].n)
			best = i;
	*out = r->kinds[best].d;
	out->known = true;
	out->mixed = r->nkinds > 1 || r->overflow;
	return true;
}

void nccllog_reader_close(struct nccllog_reader *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}
