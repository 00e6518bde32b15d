/* Monotonic time, and deadlines for timed condition-variable waits. */
#ifndef LANECP_CLOCK_H
#define LANECP_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Monotonic clock in milliseconds / nanoseconds (never steps). */
uint64_t lc_now_ms(void);
uint64_t lc_now_ns(void);

/*
 * *ts = now on clock + ms (ms >= 0): a deadline for pthread_cond_timedwait.
 * Timed waits use CLOCK_MONOTONIC on a condition variable made by
 * lc_cond_init_monotonic() (thread.h).
 */
void lc_deadline(clockid_t clock, int ms, struct timespec *ts);

#endif
