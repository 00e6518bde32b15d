/* Monotonic time in ms and ns, and deadlines for timed waits. */
#include "clock.h"

#include <stdint.h>
#include <time.h>

uint64_t
lc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void
lc_deadline(clockid_t clock, int ms, struct timespec *ts)
{
	clock_gettime(clock, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

uint64_t
lc_now_ms(void)
{
	return lc_now_ns() / 1000000ULL;
}
