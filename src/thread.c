/* Worker threads: signals blocked, name set. */
#include "lanecp/thread.h"
#include "lanecp/err.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>

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
