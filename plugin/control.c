/* control.c - the process-wide forced answer and decision ring behind nccltune_tuner.h,
 * the one piece of plugin state that is not per communicator. One mutex guards both; two
 * atomic flags let getCollInfo skip the mutex while forcing and recording are off. */
#include "control.h"

#include <pthread.h>
#include <stdatomic.h>

#include "table.h"

static pthread_mutex_t control_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int forcing;                 /* a forced answer is set */
static atomic_int recording;
static struct nccltune_tuner_force forced; /* under control_lock */
static struct nccltune_tuner_decision ring[NCCLTUNE_TUNER_RECORD_MAX];
static size_t ring_head, ring_count;       /* ring[ring_head] is the oldest */
static uint64_t ring_dropped;

/* NCCLTUNE_TUNER_CONTROL_VERSION: how a caller knows the file is this plugin. Can't fail. */
NT_EXPORT int nccltune_tuner_control_version(void)
{
	return NCCLTUNE_TUNER_CONTROL_VERSION;
}

/* Whether every field of `f` is in range. */
static int force_valid(const struct nccltune_tuner_force *f)
{
	if (f->coll != NCCLTUNE_TUNER_ANY && !tuner_coll_name(f->coll))
		return 0;
	if (f->algo != NCCLTUNE_TUNER_ANY && !tuner_algo_name(f->algo))
		return 0;
	if (f->proto != NCCLTUNE_TUNER_ANY && !tuner_proto_name(f->proto))
		return 0;
	if (f->nchannels < 0 || f->nchannels > TUNER_TABLE_MAX_CTAS)
		return 0;
	return f->chunk <= TUNER_TABLE_MAX_CHUNK;
}

/* Set (a copy of) `f` as the forced answer, or clear it with NULL. Returns 0, or -1 with
 * the previous state unchanged when a field is out of range. */
NT_EXPORT int nccltune_tuner_force(const struct nccltune_tuner_force *f)
{
	if (f && !force_valid(f))
		return -1;
	pthread_mutex_lock(&control_lock);
	if (f)
		forced = *f;
	atomic_store_explicit(&forcing, f != NULL, memory_order_relaxed);
	pthread_mutex_unlock(&control_lock);
	return 0;
}

/* Start recording (emptying the ring and the dropped count) or stop (keeping the ring).
 * Can't fail. */
NT_EXPORT void nccltune_tuner_record(int on)
{
	pthread_mutex_lock(&control_lock);
	if (on) {
		ring_head = 0;
		ring_count = 0;
		ring_dropped = 0;
	}
	atomic_store_explicit(&recording, on != 0, memory_order_relaxed);
	pthread_mutex_unlock(&control_lock);
}

/* Move up to `max` decisions, oldest first, into out; with out NULL, count them and move
 * none. Returns the number. Can't fail. */
NT_EXPORT size_t nccltune_tuner_decisions(struct nccltune_tuner_decision *out, size_t max)
{
	size_t n;

	pthread_mutex_lock(&control_lock);
	n = ring_count;
	if (out) {
		if (n > max)
			n = max;
		for (size_t i = 0; i < n; i++)
			out[i] = ring[(ring_head + i) % NCCLTUNE_TUNER_RECORD_MAX];
		ring_head = (ring_head + n) % NCCLTUNE_TUNER_RECORD_MAX;
		ring_count -= n;
	}
	pthread_mutex_unlock(&control_lock);
	return n;
}

/* Decisions the full ring dropped since recording last started. Can't fail. */
NT_EXPORT uint64_t nccltune_tuner_dropped(void)
{
	uint64_t n;

	pthread_mutex_lock(&control_lock);
	n = ring_dropped;
	pthread_mutex_unlock(&control_lock);
	return n;
}

int control_forced(int coll, struct nccltune_tuner_force *out)
{
	int hit = 0;

	if (!atomic_load_explicit(&forcing, memory_order_relaxed))
		return 0;
	if (!tuner_coll_name(coll))
		return 0;
	pthread_mutex_lock(&control_lock);
	if (atomic_load_explicit(&forcing, memory_order_relaxed) &&
	    (forced.coll == NCCLTUNE_TUNER_ANY || forced.coll == coll)) {
		*out = forced;
		hit = 1;
	}
	pthread_mutex_unlock(&control_lock);
	return hit;
}

int control_recording(void)
{
	return atomic_load_explicit(&recording, memory_order_relaxed);
}

void control_record(const struct nccltune_tuner_decision *d)
{
	pthread_mutex_lock(&control_lock);
	if (atomic_load_explicit(&recording, memory_order_relaxed)) {
		if (ring_count == NCCLTUNE_TUNER_RECORD_MAX) {
			ring_head = (ring_head + 1) % NCCLTUNE_TUNER_RECORD_MAX;
			ring_count--;
			ring_dropped++;
		}
		ring[(ring_head + ring_count) % NCCLTUNE_TUNER_RECORD_MAX] = *d;
		ring_count++;
	}
	pthread_mutex_unlock(&control_lock);
}
