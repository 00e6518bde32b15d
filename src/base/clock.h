/* Monotonic time, and deadlines for timed condition-variable waits. */
#ifndef LANECP_CLOCK_H
#define LANECP_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Monotonic clock in milliseconds / nanoseconds (never steps). */
uint64_t lc_now_ms(void);
uint64_t lc_now_ns(void);

/*
 * ms from then to now, 0 when then is later: a time another thread
 * stamped after this one read now (a stream's last read, say) is no age,
 * not 2^64 ms of one.
 */
static inline uint64_t
lc_ms_since(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

/*
 * *ts = now on clock + ms (ms >= 0): a deadline for pthread_cond_timedwait.
 * Timed waits use CLOCK_MONOTONIC on a condition variable made by
 * lc_cond_init_monotonic() (thread.h).
 */
void lc_deadline(clockid_t clock, int ms, struct timespec *ts);

#endif
