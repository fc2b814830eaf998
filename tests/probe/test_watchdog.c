/* test_watchdog.c - the watchdog stays quiet while kicked, fires with the silent step
 * once kicks stop, and stops cleanly. (The real fire callback ends the process; this
 * one records and returns, which the thread tolerates.) */
#include <pthread.h>
#include <time.h>

#include "../check.h"
#include "watchdog.h"

struct seen {
	pthread_mutex_t lock;
	int fired;
	enum probe_step step;
	double silent;
};

static void fire(void *arg, enum probe_step step, double silent_s)
{
	struct seen *s = arg;

	pthread_mutex_lock(&s->lock);
	s->fired++;
	s->step = step;
	s->silent = silent_s;
	pthread_mutex_unlock(&s->lock);
}

static void nap(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};

	nanosleep(&ts, NULL);
}

static int fired(struct seen *s)
{
	int n;

	pthread_mutex_lock(&s->lock);
	n = s->fired;
	pthread_mutex_unlock(&s->lock);
	return n;
}

int main(void)
{
	struct seen s = {PTHREAD_MUTEX_INITIALIZER, 0, PROBE_STEP_CUDA_INIT, 0};
	struct watchdog *wd = watchdog_start(0.15, 0.05, fire, &s);

	CHECK(wd != NULL);
	for (int i = 0; i < 10; i++) {
		watchdog_kick(wd, PROBE_STEP_TIMING);
		nap(0.05);
	}
	CHECK_INT(fired(&s), 0);
	watchdog_kick(wd, PROBE_STEP_CAPTURE);
	for (int i = 0; i < 100 && !fired(&s); i++)
		nap(0.01);
	CHECK_INT(fired(&s), 1);
	CHECK_INT(s.step, PROBE_STEP_CAPTURE);
	CHECK(s.silent >= 0.2 && s.silent < 1.5);
	watchdog_stop(wd);

	/* stopping a quiet watchdog returns at once */
	wd = watchdog_start(60, 5, fire, &s);
	CHECK(wd != NULL);
	watchdog_stop(wd);
	CHECK_INT(fired(&s), 1);
	watchdog_stop(NULL);
	watchdog_kick(NULL, PROBE_STEP_TIMING);
	return check_status();
}
