/* Worker threads and their condition variables. */
#ifndef LANECP_THREAD_H
#define LANECP_THREAD_H

#include <pthread.h>

/*
 * Start a worker thread: all signals blocked in it (signals are the main
 * thread's business) and its name set (visible in top -H, gdb).  Returns 0
 * or -LC_ERR_INTERNAL.
 */
int lc_thread_start(pthread_t *t, const char *name, void *(*fn)(void *),
    void *arg);

/*
 * Initialise a condition variable whose timed waits run on CLOCK_MONOTONIC
 * (deadlines from lc_deadline(CLOCK_MONOTONIC, ...)), so that a step of the
 * wall clock neither stalls nor hurries a wait.  0 or -LC_ERR_INTERNAL.
 */
int lc_cond_init_monotonic(pthread_cond_t *cv);

#endif
