/* Worker threads: signals blocked, name set. */
#include "thread.h"
#include "err.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

int
lc_thread_start(pthread_t *t, const char *name, void *(*fn)(void *),
    void *arg)
{
	sigset_t all, old;
	int r;

	/* the new thread inherits the blocked mask */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0)
		return -LC_ERR_INTERNAL;
	if (name != NULL) {
		char n[16];
		snprintf(n, sizeof(n), "%s", name);
		pthread_setname_np(*t, n);
	}
	return 0;
}

int
lc_cond_init_monotonic(pthread_cond_t *cv)
{
	pthread_condattr_t ca;
	int r;

	if (pthread_condattr_init(&ca) != 0)
		return -LC_ERR_INTERNAL;
	r = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (r == 0)
		r = pthread_cond_init(cv, &ca);
	pthread_condattr_destroy(&ca);
	return r == 0 ? 0 : -LC_ERR_INTERNAL;
}
