#include "harness.h"

#include "err.h"
#include "ratelimit.h"
#include "clock.h"

#include <pthread.h>
#include <stdatomic.h>

/*
 * The functional cases assert behaviour only: the limiter never lets more
 * through than the rate (a lower bound on elapsed time, which a slow or
 * sanitized build cannot break), threads share it, and the unlimited and
 * cancelled paths return.  The bounds on how fast that happens are the
 * LC_TIMING_TEST cases at the end (ctest label timing, run serially).
 */
static struct lc_rate rate;

enum { CHUNK = 65536, CHUNKS = 200, THREADS = 4 };
static atomic_int left;

struct taker {
	pthread_t th;
	int took;
};

/* Takes chunks until the shared budget is gone, counting its own. */
static void *
taker(void *arg)
{
	struct taker *t = arg;

	while (atomic_fetch_sub(&left, 1) > 0) {
		lc_rate_take(&rate, CHUNK, NULL);
		t->took++;
	}
	return NULL;
}

/* 200 x 64 KiB = 12.5 MiB at 10 MiB/s by four threads; returns seconds. */
static double
share(struct taker *t)
{
	uint64_t t0;
	double secs;

	atomic_init(&left, CHUNKS);
	lc_rate_init(&rate, 10u << 20);
	t0 = lc_now_ns();
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i].th, NULL, taker, &t[i]);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i].th, NULL);
	secs = (double)(lc_now_ns() - t0) / 1e9;
	lc_rate_destroy(&rate);
	fprintf(stderr, "took %.3f s, shares %d %d %d %d\n", secs, t[0].took,
	    t[1].took, t[2].took, t[3].took);
	return secs;
}

LC_TEST(four_threads_share_the_rate)
{
	struct taker t[THREADS];
	double secs;
	int sum = 0;

	memset(t, 0, sizeof(t));
	secs = share(t);
	/* never faster than the rate: 12.5 MiB less the 1 MiB burst at
	 * 10 MiB/s is 1.15 s (the measured rate stays <= 1.1 x the limit) */
	LC_CHECK(secs > 1.05);
	/* and every thread got a real share: at least a fifth of a fair
	 * quarter each (a limiter that starves a thread fails this) */
	for (int i = 0; i < THREADS; i++) {
		LC_CHECK(t[i].took * THREADS * 5 >= CHUNKS);
		sum += t[i].took;
	}
	LC_CHECK_EQ_I(sum, CHUNKS);
}

/* A wait here would be 1000 GiB at any rate: the harness timeout (60 s)
 * catches it. */
LC_TEST(unlimited_does_not_wait)
{
	lc_rate_init(&rate, 0);
	for (int i = 0; i < 1000; i++)
		LC_CHECK_EQ_I(lc_rate_take(&rate, 1u << 30, NULL), 0);
	lc_rate_destroy(&rate);
}

/* Without the cancel this take waits 1048 s: the harness timeout catches
 * a cancel that is not seen. */
LC_TEST(cancel_stops_the_wait)
{
	atomic_bool cancel;

	atomic_init(&cancel, true);
	lc_rate_init(&rate, 1000);
	LC_CHECK(lc_rate_take(&rate, 1u << 20, &cancel) == -LC_ERR_CANCELED);
	lc_rate_destroy(&rate);
}

LC_TIMING_TEST(timing_four_threads_within_2s)
{
	struct taker t[THREADS];

	memset(t, 0, sizeof(t));
	LC_CHECK(share(t) < 2.0);
}

LC_TIMING_TEST(timing_unlimited_within_100ms)
{
	uint64_t t0 = lc_now_ns();

	lc_rate_init(&rate, 0);
	for (int i = 0; i < 1000; i++)
		lc_rate_take(&rate, 1u << 30, NULL);
	LC_CHECK(lc_now_ns() - t0 < 100000000ULL);
	lc_rate_destroy(&rate);
}

LC_TIMING_TEST(timing_cancel_within_500ms)
{
	atomic_bool cancel;
	uint64_t t0 = lc_now_ns();

	atomic_init(&cancel, true);
	lc_rate_init(&rate, 1000);
	LC_CHECK(lc_rate_take(&rate, 1u << 20, &cancel) == -LC_ERR_CANCELED);
	LC_CHECK(lc_now_ns() - t0 < 500000000ULL);
	lc_rate_destroy(&rate);
}

LC_TEST_MAIN()
