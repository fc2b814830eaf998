/* launch.c - the per-process launch mode (fork + pipes; see launch.h) and what every
 * mode shares (the mode's resolution, the grace period, the NCCL log). The
 * single-process mode is launch_all.c. The parent of the per-process mode never touches CUDA or NCCL: CUDA
 * state does not survive fork, so every child starts clean. */
#include "launch.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "measure.h"
#include "nccllog.h"
#include "rig.h"
#include "watchdog.h"

/* ---- the pipe protocol between parent and children ----
 * Every message is a header followed by `len` payload bytes. Both ends are the same
 * binary on the same machine, so structs travel as they are. */
enum msg_type { MSG_HELLO = 1, MSG_ID, MSG_STEP, MSG_OUTCOME };

struct msg_header { uint32_t type, len; };

struct msg_hello { int32_t nranks; ncclUniqueId id; };   /* rank 0 -> parent */
struct msg_id { int32_t nranks; ncclUniqueId id; };      /* parent -> rank k */
struct msg_step { int32_t step, case_idx; };              /* child -> parent */

/* child -> parent, followed by ncases * iters doubles when ok, then by ncases case
 * verdicts (struct probe_case_result) when has_cases. */
struct msg_outcome {
	int32_t ok, stage, ncases, iters, nccl_version;
	int32_t has_cases, in_flight_known, in_flight_case;
	double phase_s[PROBE_STEP_COUNT];
	struct probe_compute_samples compute;
	char error[PROTO_ERROR_MAX];
	char warning[PROTO_WARNING_MAX];
};

enum probe_launch launch_resolve(const struct probe_config *cfg, char *why, size_t whylen)
{
	static const char *const vars[] = {
		"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "SLURM_STEP_NUM_TASKS",
	};

	if (why && whylen)
		why[0] = '\0';
	if (cfg->launch != PROBE_LAUNCH_AUTO)
		return cfg->launch;
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		if (getenv(vars[i])) {
			if (why && whylen)
				snprintf(why, whylen, "%s=%s", vars[i], getenv(vars[i]));
			return PROBE_LAUNCH_MPI;
		}
	}
	return PROBE_LAUNCH_PROCESS;
}

double launch_grace_s(const struct probe_config *cfg)
{
	double g = cfg->step_timeout_s * 0.25;

	return g < 5 ? 5 : g;
}

/* write() all of buf, retrying on EINTR. Returns 0 or -1. */
static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* read() exactly len bytes. Returns 0, or -1 on EOF or error. */
static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len > 0) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Send one message whose header and payload go out in a single write when small, so
 * the watchdog thread and the measuring thread never interleave inside a message; up to
 * two tails (timings, case verdicts) follow. */
static int send_msg2(int fd, enum msg_type type, const void *payload, size_t len,
                     const void *tail, size_t tail_len, const void *tail2, size_t tail2_len)
{
	struct msg_header h = {(uint32_t)type, (uint32_t)(len + tail_len + tail2_len)};
	char buf[sizeof h + sizeof(struct msg_outcome)];

	if (len > sizeof buf - sizeof h || len + tail_len + tail2_len > UINT32_MAX)
		return -1;
	memcpy(buf, &h, sizeof h);
	memcpy(buf + sizeof h, payload, len);
	if (write_all(fd, buf, sizeof h + len) != 0)
		return -1;
	if (tail_len && write_all(fd, tail, tail_len) != 0)
		return -1;
	return tail2_len ? write_all(fd, tail2, tail2_len) : 0;
}

static int send_msg(int fd, enum msg_type type, const void *payload, size_t len)
{
	return send_msg2(fd, type, payload, len, NULL, 0, NULL, 0);
}

/* An outcome with whatever it carries: timings when ok, case verdicts when it has them. */
static int send_outcome(int fd, const struct probe_outcome *o, const struct msg_outcome *m)
{
	size_t nms = o->ok && o->ms ? (size_t)o->ncases * (size_t)o->iters : 0;
	size_t ncases = o->cases ? (size_t)o->ncases : 0;

	return send_msg2(fd, MSG_OUTCOME, m, sizeof *m, o->ms, nms * sizeof(double), o->cases,
	                 ncases * sizeof(struct probe_case_result));
}

static void outcome_to_msg(const struct probe_outcome *o, struct msg_outcome *m)
{
	memset(m, 0, sizeof *m);
	m->ok = o->ok && o->ms;
	m->stage = (int32_t)o->stage;
	m->ncases = o->ncases;
	m->iters = o->iters;
	m->nccl_version = o->nccl_version;
	m->has_cases = o->cases != NULL;
	m->in_flight_known = o->in_flight_known;
	m->in_flight_case = o->in_flight_case;
	memcpy(m->phase_s, o->phase_s, sizeof m->phase_s);
	m->compute = o->compute;
	snprintf(m->error, sizeof m->error, "%s", o->error);
	snprintf(m->warning, sizeof m->warning, "%s", o->warning);
}

/* ---- the child side ---- */

struct child_ctx {
	const struct probe_config *cfg;
	int up;                   /* write end towards the parent */
	int down;                 /* read end from the parent */
	int rank;
	struct watchdog *wd;
	const struct probe_outcome *out;   /* this rank's outcome while measuring */
	const struct sweep_plugin *plugin;
	const struct nccllog *log;         /* the parent's folder; inactive: no decisions */
	atomic_int in_flight;              /* the case being worked on, -1 none */
};

static void child_on_step(void *arg, enum probe_step step, int case_idx)
{
	struct child_ctx *c = arg;
	struct msg_step m = {(int32_t)step, (int32_t)case_idx};

	atomic_store(&c->in_flight, case_idx);
	watchdog_kick(c->wd, step);
	send_msg(c->up, MSG_STEP, &m, sizeof m);
}

static void child_fire(void *arg, enum probe_step step, double silent_s)
{
	struct child_ctx *c = arg;
	struct probe_outcome o;
	struct msg_outcome m;
	char msg[PROTO_ERROR_MAX];
	enum proto_stage stage = probe_watchdog_failure(c->cfg, c->out, -1, step, silent_s, msg,
	                                                 sizeof msg);

	if (c->out && probe_watchdog_keeps(c->out, step, silent_s, o.warning, sizeof o.warning)) {
		char warning[PROTO_WARNING_MAX];

		memcpy(warning, o.warning, sizeof warning);
		o = *c->out;   /* shallow: the stuck thread keeps ownership; we _exit */
		o.ok = true;
		memcpy(o.warning, warning, sizeof o.warning);
		outcome_to_msg(&o, &m);
		send_outcome(c->up, &o, &m);
		_exit(0);
	}
	memset(&o, 0, sizeof o);
	probe_outcome_fail(&o, stage, "%s", msg);
	o.in_flight_case = atomic_load(&c->in_flight);
	o.in_flight_known = o.in_flight_case >= 0;
	/* the verdicts so far, read while the measuring thread is stuck in a call */
	if (c->out && c->out->cases) {
		o.ncases = c->out->ncases;
		o.cases = c->out->cases;
	}
	outcome_to_msg(&o, &m);
	send_outcome(c->up, &o, &m);
	_exit(1);
}

/* Measure as `rank` on its device (rig_device: `rank`, or rank / K with --ranks-per-gpu K)
 * and send the outcome up. Returns the exit status. */
/* --teardown fast leaves the communicator alive at exit. A rank must not leave while a
 * peer may still be receiving from it, so it waits until the parent has every rank's
 * outcome (each rank has checked its last all-reduce, so every transfer has landed) and
 * closes the pipe. A dead parent ends the wait too (EOF), and PR_SET_PDEATHSIG the rank. */
static void await_release(int down)
{
	char b;
	ssize_t n;

	do
		n = read(down, &b, 1);
	while (n > 0 || (n < 0 && errno == EINTR));
}

static int child_measure(struct child_ctx *c, int nranks, const ncclUniqueId *id,
                         struct probe_outcome *o, double pre_s)
{
	int device = rig_device(c->rank, c->cfg->ranks_per_gpu);
	struct measure_setup s;
	struct msg_outcome m;
	struct nccllog_reader log;
	char path[PATH_MAX];
	int rc;

	memset(&s, 0, sizeof s);
	s.cfg = c->cfg;
	s.nranks = nranks;
	s.nlocal = 1;
	s.ranks = &c->rank;
	s.devices = &device;
	s.id = *id;
	s.on_step = child_on_step;
	s.arg = c;
	s.plugin = c->plugin;
	/* NCCL names this process's file by its pid (NCCL_DEBUG_FILE's %p) */
	if (nccllog_path(c->log, getpid(), path, sizeof path) == 0) {
		nccllog_reader_init(&log, path, stderr);
		s.log = &log;
	}
	c->out = o;
	c->wd = watchdog_start(c->cfg->step_timeout_s, launch_grace_s(c->cfg), child_fire, c);
	/* Finding the GPUs and making the id (rank 0 only) is CUDA setup too. */
	o->phase_s[PROBE_STEP_CUDA_INIT] = pre_s;
	rc = measure_run(&s, o);
	watchdog_stop(c->wd);
	c->wd = NULL;
	if (s.log)
		nccllog_reader_close(s.log);
	outcome_to_msg(o, &m);
	if (send_outcome(c->up, o, &m) != 0)
		return 1;
	if (rc == 0 && c->cfg->teardown == PROBE_TEARDOWN_FAST)
		await_release(c->down);
	return rc == 0 ? 0 : 1;
}

/* Rank 0: find the GPUs, make the id, tell the parent, then measure. */
static int child_rank0(struct child_ctx *c)
{
	struct probe_outcome o;
	struct msg_hello h;
	struct msg_outcome m;
	int count = 0, rc = 1;
	double t0 = probe_now();

	memset(&o, 0, sizeof o);
	memset(&h, 0, sizeof h);
	if (measure_device_count(&count, &o) != 0)
		goto fail;
	if (c->cfg->gpus > count) {
		probe_outcome_fail(&o, PROTO_STAGE_INIT, "--gpus %d: only %d CUDA device(s) visible",
		                   c->cfg->gpus, count);
		goto fail;
	}
	h.nranks = (c->cfg->gpus > 0 ? c->cfg->gpus : count) * c->cfg->ranks_per_gpu;
	if (measure_unique_id(&h.id, &o) != 0)
		goto fail;
	if (send_msg(c->up, MSG_HELLO, &h, sizeof h) != 0)
		return 1;
	rc = child_measure(c, h.nranks, &h.id, &o, probe_now() - t0);
	probe_outcome_clear(&o);
	return rc;
fail:
	outcome_to_msg(&o, &m);
	send_outcome(c->up, &o, &m);
	return rc;
}

static int child_rank(struct child_ctx *c, int down)
{
	struct probe_outcome o;
	struct msg_header hdr;
	struct msg_id id;
	int rc;

	memset(&o, 0, sizeof o);
	if (read_all(down, &hdr, sizeof hdr) != 0 || hdr.type != MSG_ID || hdr.len != sizeof id ||
	    read_all(down, &id, sizeof id) != 0)
		return 1;   /* the parent is gone or confused: nothing sensible to report */
	rc = child_measure(c, id.nranks, &id.id, &o, 0);
	probe_outcome_clear(&o);
	return rc;
}

/* ---- the parent side ---- */

struct child {
	pid_t pid;
	int up, down;             /* parent's ends; -1 when closed */
	char *buf;                /* bytes received, not yet parsed */
	size_t len, cap;
	bool eof, reaped, has_outcome;
	int status;               /* from waitpid */
	enum probe_step step;     /* last step reported */
	int case_idx;             /* ... and the case it was about, -1 none */
	double last_heard;
	struct probe_outcome o;
};

struct parent {
	const struct probe_config *cfg;
	const struct sweep_plugin *plugin;
	const struct nccllog *log;
	struct reporter *rep;
	struct child *kids;
	struct pollfd *fds;       /* scratch for serve(), one per possible child */
	int *map;                 /* fds[i] belongs to kids[map[i]] */
	int nkids;                /* forked so far */
	int nranks;
	struct probe_outcome first_failure;
	bool failed;
	ncclUniqueId id;
	bool have_id;
	bool released;            /* every rank reported: their down pipes are closed */
};

/* Record the first failure (later ones are usually its consequences), with the case
 * that was in flight (-1: none or unknown). */
static void vparent_fail(struct parent *p, enum proto_stage stage, int in_flight,
                         const char *fmt, va_list ap)
{
	char msg[PROTO_ERROR_MAX];

	if (p->failed)
		return;
	vsnprintf(msg, sizeof msg, fmt, ap);
	p->failed = true;
	probe_outcome_fail(&p->first_failure, stage, "%s", msg);
	p->first_failure.in_flight_known = in_flight >= 0;
	p->first_failure.in_flight_case = in_flight;
}

static void parent_fail(struct parent *p, enum proto_stage stage, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void parent_fail(struct parent *p, enum proto_stage stage, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vparent_fail(p, stage, -1, fmt, ap);
	va_end(ap);
}

static void parent_fail_in(struct parent *p, enum proto_stage stage, int in_flight,
                           const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void parent_fail_in(struct parent *p, enum proto_stage stage, int in_flight,
                           const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vparent_fail(p, stage, in_flight, fmt, ap);
	va_end(ap);
}

static void kill_all(struct parent *p)
{
	for (int k = 0; k < p->nkids; k++)
		if (p->kids[k].pid > 0 && !p->kids[k].reaped)
			kill(p->kids[k].pid, SIGKILL);
}

/* Fork child `rank`. Returns 0, or -1 with the failure recorded. */
static int spawn(struct parent *p, int rank)
{
	int up[2], down[2];
	struct child *k = &p->kids[rank];
	pid_t parent_pid = getpid();

	if (pipe(up) != 0) {
		parent_fail(p, PROTO_STAGE_INIT, "pipe for rank %d: %s", rank, strerror(errno));
		return -1;
	}
	if (pipe(down) != 0) {
		close(up[0]);
		close(up[1]);
		parent_fail(p, PROTO_STAGE_INIT, "pipe for rank %d: %s", rank, strerror(errno));
		return -1;
	}
	fflush(NULL);
	k->pid = fork();
	if (k->pid < 0) {
		close(up[0]);
		close(up[1]);
		close(down[0]);
		close(down[1]);
		parent_fail(p, PROTO_STAGE_INIT, "fork for rank %d: %s", rank, strerror(errno));
		return -1;
	}
	if (k->pid == 0) {
		struct child_ctx c = {p->cfg, up[1], down[0], rank, NULL, NULL, p->plugin, p->log, -1};
		int rc;

		/* A child must not outlive the parent: the tuner kills the parent's group on
		 * a deadline, but a parent killed alone must not leave GPUs busy either. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent_pid)
			_exit(1);
		signal(SIGPIPE, SIG_DFL);
		reporter_forget(p->rep);
		for (int j = 0; j < rank; j++) {
			close(p->kids[j].up);
			close(p->kids[j].down);
		}
		close(up[0]);
		close(down[1]);
		rc = rank == 0 ? child_rank0(&c) : child_rank(&c, down[0]);
		/* _exit, never exit(): with --teardown fast the communicator is still alive
		 * (measure.h), and a child must not flush stdio buffers it shares with the
		 * parent. The driver releases the context and all GPU memory as it exits. */
		_exit(rc);
	}
	close(up[1]);
	close(down[0]);
	k->up = up[0];
	k->down = down[1];
	k->last_heard = probe_now();
	k->step = PROBE_STEP_CUDA_INIT;
	k->case_idx = -1;
	p->nkids = rank + 1;
	return 0;
}

/* Parse complete messages in k->buf. Returns 0, or -1 on a malformed message. */
static int parse_msgs(struct parent *p, int rank)
{
	struct child *k = &p->kids[rank];
	size_t off = 0;
	int rc = 0;

	while (k->len - off >= sizeof(struct msg_header)) {
		struct msg_header h;
		const char *payload;

		memcpy(&h, k->buf + off, sizeof h);
		if (h.len > k->len - off - sizeof h)
			break;   /* incomplete */
		payload = k->buf + off + sizeof h;
		if (h.type == MSG_STEP && h.len == sizeof(struct msg_step)) {
			struct msg_step m;

			memcpy(&m, payload, sizeof m);
			if (m.step >= 0 && m.step < PROBE_STEP_COUNT)
				k->step = (enum probe_step)m.step;
			k->case_idx = m.case_idx;
		} else if (h.type == MSG_HELLO && rank == 0 && h.len == sizeof(struct msg_hello)) {
			struct msg_hello m;

			memcpy(&m, payload, sizeof m);
			p->nranks = m.nranks;
			p->id = m.id;
			p->have_id = true;
		} else if (h.type == MSG_OUTCOME && h.len >= sizeof(struct msg_outcome)) {
			struct msg_outcome m;
			size_t ncases, nms, ncr;

			memcpy(&m, payload, sizeof m);
			ncases = (size_t)(m.ncases > 0 ? m.ncases : 0);
			nms = m.ok ? ncases * (size_t)(m.iters > 0 ? m.iters : 0) : 0;
			ncr = m.has_cases ? ncases : 0;
			if (h.len != sizeof m + nms * sizeof(double) + ncr * sizeof(struct probe_case_result)) {
				rc = -1;
				break;
			}
			probe_outcome_clear(&k->o);
			k->o.ok = m.ok;
			k->o.stage = (enum proto_stage)m.stage;
			k->o.ncases = m.ncases;
			k->o.iters = m.iters;
			k->o.nccl_version = m.nccl_version;
			k->o.in_flight_known = m.in_flight_known;
			k->o.in_flight_case = m.in_flight_case;
			memcpy(k->o.phase_s, m.phase_s, sizeof m.phase_s);
			k->o.compute = m.compute;
			snprintf(k->o.warning, sizeof k->o.warning, "%.*s", (int)sizeof m.warning - 1,
			         m.warning);
			if (k->o.compute.n < 0 || k->o.compute.n > PROBE_COMPUTE_SAMPLES)
				k->o.compute.n = 0;   /* never index past the samples a child sent */
			snprintf(k->o.error, sizeof k->o.error, "%.*s", (int)sizeof m.error - 1, m.error);
			if (m.ok) {
				k->o.ms = malloc(nms * sizeof(double) + 1);
				if (!k->o.ms) {
					rc = -1;
					break;
				}
				memcpy(k->o.ms, payload + sizeof m, nms * sizeof(double));
			}
			if (ncr) {
				k->o.cases = malloc(ncr * sizeof(struct probe_case_result));
				if (!k->o.cases) {
					rc = -1;
					break;
				}
				memcpy(k->o.cases, payload + sizeof m + nms * sizeof(double),
				       ncr * sizeof(struct probe_case_result));
			}
			k->has_outcome = true;
			if (!m.ok) {
				int fl = m.in_flight_known ? m.in_flight_case : -1;

				if (p->nranks > 1 && strncmp(k->o.error, "rank ", 5) != 0)
					parent_fail_in(p, k->o.stage, fl, "rank %d: %s", rank, k->o.error);
				else
					parent_fail_in(p, k->o.stage, fl, "%s", k->o.error);
			}
		} else {
			rc = -1;
			break;
		}
		off += sizeof h + h.len;
	}
	memmove(k->buf, k->buf + off, k->len - off);
	k->len -= off;
	if (rc != 0)
		parent_fail(p, PROTO_STAGE_INIT, "rank %d sent a malformed message", rank);
	return rc;
}

/* Read what child `rank` has sent. Returns 0, or -1 (failure recorded). */
static int drain(struct parent *p, int rank)
{
	struct child *k = &p->kids[rank];

	for (;;) {
		ssize_t n;

		if (k->cap - k->len < 65536) {
			size_t cap = k->cap ? k->cap * 2 : 131072;
			char *nb = realloc(k->buf, cap);

			if (!nb) {
				parent_fail(p, PROTO_STAGE_INIT, "out of memory reading rank %d", rank);
				return -1;
			}
			k->buf = nb;
			k->cap = cap;
		}
		n = read(k->up, k->buf + k->len, k->cap - k->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0) {
			k->eof = true;
			return parse_msgs(p, rank);
		}
		k->len += (size_t)n;
		k->last_heard = probe_now();
		if (parse_msgs(p, rank) != 0)
			return -1;
		return 0;   /* poll again: one read per wake keeps all children served */
	}
}

static const char *signal_text(int sig)
{
	const char *s = strsignal(sig);

	return s ? s : "unknown signal";
}

/* Reap child `rank` if it has exited; on an exit without an outcome, record why. */
static void reap(struct parent *p, int rank, bool block)
{
	struct child *k = &p->kids[rank];
	pid_t r;

	if (k->reaped || k->pid <= 0)
		return;
	do
		r = waitpid(k->pid, &k->status, block ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r != k->pid)
		return;
	k->reaped = true;
	if (k->has_outcome)
		return;
	if (WIFSIGNALED(k->status))
		parent_fail_in(p, probe_step_stage(k->step), k->case_idx, "rank %d (pid %d, GPU %d) killed by signal "
		            "%d (%s) during step %s", rank, (int)k->pid, rank, WTERMSIG(k->status),
		            signal_text(WTERMSIG(k->status)), probe_step_name(k->step));
	else
		parent_fail_in(p, probe_step_stage(k->step), k->case_idx, "rank %d (pid %d, GPU %d) exited with status "
		            "%d without a report during step %s", rank, (int)k->pid, rank,
		            WEXITSTATUS(k->status), probe_step_name(k->step));
}

/* Once every rank has sent its outcome, close the pipes the ranks wait on
 * (await_release): with --teardown fast they exit only then. */
static void release_when_all_reported(struct parent *p)
{
	if (p->released || p->nranks < 1 || p->nkids != p->nranks)
		return;
	for (int k = 0; k < p->nkids; k++)
		if (!p->kids[k].has_outcome)
			return;
	for (int k = 0; k < p->nkids; k++) {
		if (p->kids[k].down >= 0) {
			close(p->kids[k].down);
			p->kids[k].down = -1;
		}
	}
	p->released = true;
}

/* Serve the children until every one has closed its pipe (or `until_hello` and rank 0
 * said hello). Kills every child on the first failure and when one stays silent past
 * the step timeout plus twice the grace (its own watchdog should have spoken by then). */
static void serve(struct parent *p, bool until_hello)
{
	double silence = p->cfg->step_timeout_s + 2 * launch_grace_s(p->cfg);

	for (;;) {
		struct pollfd *fds = p->fds;
		int *map = p->map, n = 0;
		double now = probe_now();

		if (until_hello && (p->have_id || p->failed))
			return;
		for (int k = 0; k < p->nkids; k++) {
			if (p->kids[k].eof)
				continue;
			if (now - p->kids[k].last_heard > silence) {
				parent_fail_in(p, probe_step_stage(p->kids[k].step), p->kids[k].case_idx,
				               "rank %d: no progress "
				            "in step %s for %.0f s; all ranks killed", k,
				            probe_step_name(p->kids[k].step), now - p->kids[k].last_heard);
				kill_all(p);
			}
			fds[n].fd = p->kids[k].up;
			fds[n].events = POLLIN;
			map[n++] = k;
		}
		if (n == 0)
			return;
		if (poll(fds, (nfds_t)n, 250) < 0 && errno != EINTR) {
			parent_fail(p, PROTO_STAGE_INIT, "poll: %s", strerror(errno));
			kill_all(p);
			return;
		}
		for (int i = 0; i < n; i++) {
			int k = map[i];

			if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
				if (drain(p, k) != 0)
					kill_all(p);
				if (p->kids[k].eof) {
					reap(p, k, true);
					if (p->failed)
						kill_all(p);
				}
			}
		}
		if (p->failed)
			kill_all(p);
		release_when_all_reported(p);
	}
}

void launch_log_start(struct nccllog *log)
{
	char err[PROTO_ERROR_MAX];

	if (nccllog_setup(log, err, sizeof err) != 0)
		fprintf(stderr, "nccltune-probe: %s; the report will not say what NCCL ran\n", err);
}

int launch_process(const struct probe_config *cfg, const struct sweep_plugin *plugin,
                   struct reporter *rep)
{
	struct parent p;
	struct proto_report r;
	struct nccllog log;
	double phase_s[PROBE_STEP_COUNT] = {0};
	struct probe_outcome *outs = NULL;
	int status = PROTO_EXIT_FAILED;
	int maxkids = 0;

	memset(&p, 0, sizeof p);
	memset(&r, 0, sizeof r);
	p.cfg = cfg;
	p.rep = rep;
	p.plugin = plugin;
	p.log = &log;
	/* before the first fork: every child inherits NCCL_DEBUG* and writes its own file */
	launch_log_start(&log);
	/* The parent cannot ask CUDA how many GPUs there are without breaking its
	 * children, so it learns the count from rank 0; size for the most any box has. */
	maxkids = (cfg->gpus > 0 ? cfg->gpus : 1024) * cfg->ranks_per_gpu;
	p.kids = calloc((size_t)maxkids, sizeof *p.kids);
	p.fds = calloc((size_t)maxkids, sizeof *p.fds);
	p.map = calloc((size_t)maxkids, sizeof *p.map);
	if (!p.kids || !p.fds || !p.map) {
		proto_report_fail(&r, PROTO_STAGE_INIT, "out of memory for %d ranks", maxkids);
		goto report;
	}
	signal(SIGPIPE, SIG_IGN);   /* a dead child's pipe must not kill the reporter */
	if (spawn(&p, 0) != 0)
		goto finish;
	serve(&p, true);
	if (p.have_id && !p.failed) {
		if (p.nranks < 1 || p.nranks > maxkids) {
			parent_fail(&p, PROTO_STAGE_INIT, "rank 0 reported %d ranks", p.nranks);
			kill_all(&p);
		}
		for (int k = 1; !p.failed && k < p.nranks; k++) {
			struct msg_id m;

			memset(&m, 0, sizeof m);
			m.nranks = p.nranks;
			m.id = p.id;
			if (spawn(&p, k) != 0 ||
			    send_msg(p.kids[k].down, MSG_ID, &m, sizeof m) != 0) {
				parent_fail(&p, PROTO_STAGE_INIT, "could not start rank %d", k);
				kill_all(&p);
			}
		}
	}
	serve(&p, false);
finish:
	for (int k = 0; k < p.nkids; k++)
		reap(&p, k, true);
	outs = calloc((size_t)(p.nkids > 0 ? p.nkids : 1), sizeof *outs);
	if (!outs) {
		proto_report_fail(&r, PROTO_STAGE_INIT, "out of memory merging %d ranks", p.nkids);
		goto report;
	}
	for (int k = 0; k < p.nkids; k++)
		outs[k] = p.kids[k].o;   /* shallow: the kids keep ownership */
	if (p.failed) {
		memcpy(phase_s, p.kids[0].o.phase_s, sizeof phase_s);
		probe_report_failure(cfg, &p.first_failure, outs, p.nkids, &r);
		goto report;
	}
	probe_merge(cfg, outs, p.nkids, &r, phase_s);
	if (r.ok)
		status = PROTO_EXIT_OK;
report:
	reporter_emit(rep, &r, phase_s);
	proto_report_clear(&r);
	nccllog_cleanup(&log);
	free(outs);
	for (int k = 0; p.kids && k < p.nkids; k++) {
		if (p.kids[k].up >= 0)
			close(p.kids[k].up);
		if (p.kids[k].down >= 0)
			close(p.kids[k].down);
		free(p.kids[k].buf);
		probe_outcome_clear(&p.kids[k].o);
	}
	free(p.kids);
	free(p.fds);
	free(p.map);
	return status;
}
