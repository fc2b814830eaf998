/* watchdog.c - a thread that fires when a step stays silent too long (see watchdog.h). */
#include "watchdog.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct watchdog {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;      /* signalled on stop */
	double limit_s;           /* timeout + grace */
	double last_kick;         /* probe_now() of the last progress */
	enum probe_step step;
	bool stopping;
	watchdog_fire_fn fire;
	void *arg;
};

static void *watchdog_main(void *p)
{
	struct watchdog *wd = p;

	pthread_mutex_lock(&wd->lock);
	while (!wd->stopping) {
		double due = wd->last_kick + wd->limit_s, now = probe_now(), left, secs;
		struct timespec until;

		if (now >= due) {
			enum probe_step step = wd->step;
			double silent = now - wd->last_kick;

			pthread_mutex_unlock(&wd->lock);
			wd->fire(wd->arg, step, silent);
			return NULL;   /* not reached: fire ends the process */
		}
		/* The condition variable waits on CLOCK_REALTIME; only the length of the wait
		 * matters, so convert the monotonic due time into a realtime deadline. */
		clock_gettime(CLOCK_REALTIME, &until);
		left = due - now;
		secs = floor(left);
		until.tv_sec += (time_t)secs;
		until.tv_nsec += (long)((left - secs) * 1e9);
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&wd->cond, &wd->lock, &until);
	}
	pthread_mutex_unlock(&wd->lock);
	return NULL;
}

struct watchdog *watchdog_start(double timeout_s, double grace_s, watchdog_fire_fn fire,
                                void *arg)
{
	struct watchdog *wd = calloc(1, sizeof *wd);

	if (!wd)
		return NULL;
	wd->limit_s = timeout_s + grace_s;
	wd->last_kick = probe_now();
	wd->step = PROBE_STEP_CUDA_INIT;
	wd->fire = fire;
	wd->arg = arg;
	if (pthread_mutex_init(&wd->lock, NULL) != 0)
		goto oom_mutex;
	if (pthread_cond_init(&wd->cond, NULL) != 0)
		goto oom_cond;
	if (pthread_create(&wd->thread, NULL, watchdog_main, wd) != 0)
		goto oom_thread;
	return wd;
oom_thread:
	pthread_cond_destroy(&wd->cond);
oom_cond:
	pthread_mutex_destroy(&wd->lock);
oom_mutex:
	free(wd);
	return NULL;
}

void watchdog_kick(struct watchdog *wd, enum probe_step step)
{
	if (!wd)
		return;
	pthread_mutex_lock(&wd->lock);
	wd->step = step;
	wd->last_kick = probe_now();
	pthread_mutex_unlock(&wd->lock);
}

void watchdog_stop(struct watchdog *wd)
{
	if (!wd)
		return;
	pthread_mutex_lock(&wd->lock);
	wd->stopping = true;
	pthread_cond_signal(&wd->cond);
	pthread_mutex_unlock(&wd->lock);
	pthread_join(wd->thread, NULL);
	pthread_cond_destroy(&wd->cond);
	pthread_mutex_destroy(&wd->lock);
	free(wd);
}
