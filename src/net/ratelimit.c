#include "ratelimit.h"
#include "clock.h"
#include "err.h"

#include <time.h>

void
lc_rate_init(struct lc_rate *r, uint64_t bytes_per_s)
{
	pthread_mutex_init(&r->mu, NULL);
	r->rate = bytes_per_s;
	r->tokens = 0;
	r->last_ns = lc_now_ns();
}

void
lc_rate_destroy(struct lc_rate *r)
{
	pthread_mutex_destroy(&r->mu);
}

int
lc_rate_take(struct lc_rate *r, uint64_t n, const atomic_bool *cancel)
{
	double burst, wait_s;
	uint64_t now;

	if (r->rate == 0)
		return 0;
	pthread_mutex_lock(&r->mu);
	now = lc_now_ns();
	burst = (double)r->rate / 10.0;
	r->tokens += (double)(now - r->last_ns) / 1e9 * (double)r->rate;
	if (r->tokens > burst)
		r->tokens = burst;
	r->last_ns = now;
	r->tokens -= (double)n;
	wait_s = r->tokens < 0 ? -r->tokens / (double)r->rate : 0;
	pthread_mutex_unlock(&r->mu);
	/* sleep off the debt in slices, watching for a cancel */
	while (wait_s > 0) {
		double slice = wait_s > 0.1 ? 0.1 : wait_s;
		struct timespec ts = { (time_t)slice,
			(long)((slice - (double)(time_t)slice) * 1e9) };
		if (cancel != NULL && atomic_load(cancel))
			return -LC_ERR_CANCELED;
		nanosleep(&ts, NULL);
		wait_s -= slice;
	}
	return 0;
}
