#include "harness.h"

#include "lanecp/err.h"
#include "lanecp/ratelimit.h"
#include "lanecp/util.h"

#include <pthread.h>

static struct lc_rate rate;

static void *
taker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 50; i++)
		lc_rate_take(&rate, 65536, NULL);
	return NULL;
}

LC_TEST(four_threads_share_the_rate)
{
	pthread_t th[4];
	uint64_t t0, ns;
	double secs;

	/* 4 x 50 x 64 KiB = 12.5 MiB at 10 MiB/s: about 1.25 s minus the
	 * initial burst of 0.1 s */
	lc_rate_init(&rate, 10u << 20);
	t0 = lc_now_ns();
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, taker, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	ns = lc_now_ns() - t0;
	secs = (double)ns / 1e9;
	fprintf(stderr, "took %.3f s\n", secs);
	LC_CHECK(secs > 1.05 && secs < 2.0);
	lc_rate_destroy(&rate);
}

LC_TEST(unlimited_does_not_wait)
{
	uint64_t t0 = lc_now_ns();

	lc_rate_init(&rate, 0);
	for (int i = 0; i < 1000; i++)
		lc_rate_take(&rate, 1u << 30, NULL);
	LC_CHECK(lc_now_ns() - t0 < 100000000ULL);
	lc_rate_destroy(&rate);
}

LC_TEST(cancel_stops_the_wait)
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
