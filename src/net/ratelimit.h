/*
 * A token bucket shared by the sender threads (-x RATE): the total rate
 * over all streams stays at RATE bytes per second, with bursts of at most
 * a tenth of a second's worth.  Each taker pays for its bytes up front and
 * sleeps off any debt, so the threads share the rate fairly.
 */
#ifndef LANECP_RATELIMIT_H
#define LANECP_RATELIMIT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct lc_rate {
	pthread_mutex_t mu;
	uint64_t rate;		/* bytes per second, 0: unlimited */
	double tokens;		/* may go negative: debt */
	uint64_t last_ns;
};

void lc_rate_init(struct lc_rate *r, uint64_t bytes_per_s);
void lc_rate_destroy(struct lc_rate *r);

/*
 * Pay for n bytes, sleeping as needed (in short slices, returning early
 * when *cancel becomes true).  Returns 0, or -LC_ERR_CANCELED.
 */
int lc_rate_take(struct lc_rate *r, uint64_t n, const atomic_bool *cancel);

#endif
