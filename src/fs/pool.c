/*
 * The receive buffers (writer.h, "pool"): each stream's quota of block
 * buffers and its one spare.  A receiver takes a buffer and the file's
 * writer gives it back once the block is written, from whichever thread
 * drains it; the pool's mutex and condvar are all they share.
 */
#include "writer.h"
#include "clock.h"
#include "thread.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct lc_pool {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct lc_wbuf_q free_list;
	struct lc_wbuf *spare;	/* outside the quota, idle */
	int spare_out;		/* the spare is in use */
	uint32_t count;		/* quota */
	uint32_t allocated;
	uint32_t size;
	int aborted;
};

int
lc_pool_new(uint32_t count, uint32_t size, struct lc_pool **out)
{
	struct lc_pool *p;

	*out = NULL;
	if (count == 0 || size == 0 || (p = calloc(1, sizeof(*p))) == NULL)
		return -LC_ERR_NOMEM;
	if (lc_cond_init_monotonic(&p->cv) != 0) {
		free(p);
		return -LC_ERR_INTERNAL;
	}
	pthread_mutex_init(&p->mu, NULL);
	TAILQ_INIT(&p->free_list);
	p->count = count;
	p->size = size;
	*out = p;
	return 0;
}

static struct lc_wbuf *
lc_pool_alloc_locked(struct lc_pool *p)
{
	struct lc_wbuf *b;
	void *mem = NULL;

	if ((b = calloc(1, sizeof(*b))) == NULL)
		return NULL;
	/* page aligned: ready for O_DIRECT and friendly to the page cache */
	if (posix_memalign(&mem, 4096, p->size) != 0) {
		free(b);
		return NULL;
	}
	b->data = mem;
	b->pool = p;
	p->allocated++;
	return b;
}

/* ms < 0: wait for ever */
static struct lc_wbuf *
lc_pool_take(struct lc_pool *p, int ms)
{
	struct lc_wbuf *b = NULL;
	struct timespec until;

	if (ms > 0)
		lc_deadline(CLOCK_MONOTONIC, ms, &until);
	pthread_mutex_lock(&p->mu);
	for (;;) {
		if (p->aborted)
			break;
		if ((b = TAILQ_FIRST(&p->free_list)) != NULL) {
			TAILQ_REMOVE(&p->free_list, b, link);
			break;
		}
		if (p->allocated < p->count) {
			b = lc_pool_alloc_locked(p);
			break;
		}
		if (ms == 0)
			break;
		if (ms < 0)
			pthread_cond_wait(&p->cv, &p->mu);
		else if (pthread_cond_timedwait(&p->cv, &p->mu, &until) != 0)
			break;
	}
	pthread_mutex_unlock(&p->mu);
	if (b != NULL) {
		b->off = 0;
		b->len = 0;
	}
	return b;
}

struct lc_wbuf *
lc_pool_get(struct lc_pool *p)
{
	return lc_pool_take(p, -1);
}

struct lc_wbuf *
lc_pool_get_timed(struct lc_pool *p, int ms)
{
	return lc_pool_take(p, ms);
}

int
lc_pool_aborted(struct lc_pool *p)
{
	int a;

	pthread_mutex_lock(&p->mu);
	a = p->aborted;
	pthread_mutex_unlock(&p->mu);
	return a;
}

struct lc_wbuf *
lc_pool_spare(struct lc_pool *p)
{
	struct lc_wbuf *b = NULL;

	pthread_mutex_lock(&p->mu);
	if (!p->spare_out) {
		if (p->spare == NULL && (p->spare = lc_pool_alloc_locked(p)) !=
		    NULL)
			p->allocated--;	/* not part of the quota */
		if ((b = p->spare) != NULL)
			p->spare_out = 1;
	}
	pthread_mutex_unlock(&p->mu);
	if (b != NULL) {
		b->off = 0;
		b->len = 0;
	}
	return b;
}

void
lc_pool_put(struct lc_wbuf *b)
{
	struct lc_pool *p = b->pool;

	if (p == NULL) {	/* a hole: no buffer behind it */
		free(b);
		return;
	}
	pthread_mutex_lock(&p->mu);
	if (b == p->spare) {
		p->spare_out = 0;
	} else {
		TAILQ_INSERT_HEAD(&p->free_list, b, link);
		pthread_cond_signal(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
}

void
lc_pool_abort(struct lc_pool *p)
{
	pthread_mutex_lock(&p->mu);
	p->aborted = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

uint32_t
lc_pool_allocated(struct lc_pool *p)
{
	uint32_t n;

	pthread_mutex_lock(&p->mu);
	n = p->allocated;
	pthread_mutex_unlock(&p->mu);
	return n;
}

int
lc_pool_grow(struct lc_pool *p, uint32_t max)
{
	int grown = 0;

	pthread_mutex_lock(&p->mu);
	if (p->count < max) {
		p->count++;
		grown = 1;
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return grown;
}

uint32_t
lc_pool_quota(struct lc_pool *p)
{
	uint32_t n;

	pthread_mutex_lock(&p->mu);
	n = p->count;
	pthread_mutex_unlock(&p->mu);
	return n;
}

void
lc_pool_free(struct lc_pool *p)
{
	struct lc_wbuf *b;

	if (p == NULL)
		return;
	while ((b = TAILQ_FIRST(&p->free_list)) != NULL) {
		TAILQ_REMOVE(&p->free_list, b, link);
		free(b->data);
		free(b);
	}
	if (p->spare != NULL) {
		free(p->spare->data);
		free(p->spare);
	}
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
}
