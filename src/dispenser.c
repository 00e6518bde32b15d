#include "lanecp/dispenser.h"
#include "lanecp/clock.h"
#include "lanecp/thread.h"
#include "lanecp/err.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>
#include <unistd.h>

struct lc_dfile {
	STAILQ_ENTRY(lc_dfile) link;	/* queue link, while queued */
	LIST_ENTRY(lc_dfile) all_link;	/* every live file */
	uint32_t id;
	int fd;
	uint64_t pos;		/* next offset to hand out */
	uint64_t end;
	uint32_t outstanding;	/* blocks handed out, not released */
	int queued;		/* still in the queue (more to hand out) */
	struct lc_csum *csum;	/* NULL: no checksum */
	uint64_t hashed;	/* checksum covers [0, hashed) */
};

struct lc_dispenser {
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* queue changes */
	pthread_cond_t hash_cv;	/* a file's hashed offset moved */
	STAILQ_HEAD(, lc_dfile) queue;	/* files with blocks to hand out */
	LIST_HEAD(, lc_dfile) all;
	uint32_t block;
	uint64_t dispensed;
	uint64_t outstanding;	/* all files */
	int finished;
	int aborted;
};

struct lc_dispenser *
lc_dispenser_new(uint32_t block)
{
	struct lc_dispenser *d;

	if (block == 0 || (d = calloc(1, sizeof(*d))) == NULL)
		return NULL;
	if (lc_cond_init_monotonic(&d->cv) != 0) {
		free(d);
		return NULL;
	}
	if (lc_cond_init_monotonic(&d->hash_cv) != 0) {
		pthread_cond_destroy(&d->cv);
		free(d);
		return NULL;
	}
	pthread_mutex_init(&d->mu, NULL);
	STAILQ_INIT(&d->queue);
	LIST_INIT(&d->all);
	d->block = block;
	return d;
}

static void
lc_dfile_free(struct lc_dfile *f)
{
	close(f->fd);
	lc_csum_free(f->csum);
	free(f);
}

int
lc_dispenser_add(struct lc_dispenser *d, uint32_t id, int fd,
    uint64_t start, uint64_t end, struct lc_csum *csum,
    char sum[LC_CSUM_TEXT_MAX])
{
	struct lc_dfile *f;

	if (sum != NULL)
		sum[0] = '\0';
	if (start >= end) {	/* nothing to send */
		if (csum != NULL && sum != NULL)
			lc_csum_text(csum, sum);
		lc_csum_free(csum);
		close(fd);
		return 0;
	}
	if ((f = calloc(1, sizeof(*f))) == NULL) {
		lc_csum_free(csum);
		close(fd);
		return -LC_ERR_NOMEM;
	}
	f->id = id;
	f->fd = fd;
	f->pos = start;
	f->end = end;
	f->queued = 1;
	f->csum = csum;
	f->hashed = start;
	pthread_mutex_lock(&d->mu);
	if (d->finished) {
		pthread_mutex_unlock(&d->mu);
		lc_dfile_free(f);
		return -LC_ERR_INTERNAL;
	}
	STAILQ_INSERT_TAIL(&d->queue, f, link);
	LIST_INSERT_HEAD(&d->all, f, all_link);
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
	return 0;
}

void
lc_dispenser_finish(struct lc_dispenser *d)
{
	pthread_mutex_lock(&d->mu);
	d->finished = 1;
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
}

void
lc_dispenser_abort(struct lc_dispenser *d)
{
	pthread_mutex_lock(&d->mu);
	d->aborted = 1;
	pthread_cond_broadcast(&d->cv);
	pthread_cond_broadcast(&d->hash_cv);
	pthread_mutex_unlock(&d->mu);
}

void
lc_dispenser_kick(struct lc_dispenser *d)
{
	pthread_mutex_lock(&d->mu);
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
}

int
lc_dispenser_next(struct lc_dispenser *d, struct lc_block *b,
    const atomic_bool *stop, int timeout_ms)
{
	struct lc_dfile *f;
	struct timespec until;
	uint64_t left;
	int r;

	if (timeout_ms >= 0)
		lc_deadline(CLOCK_MONOTONIC, timeout_ms, &until);
	pthread_mutex_lock(&d->mu);
	while (!d->aborted && !(stop != NULL && atomic_load(stop)) &&
	    STAILQ_EMPTY(&d->queue) &&
	    !(d->finished && d->outstanding == 0)) {
		if (timeout_ms < 0) {
			pthread_cond_wait(&d->cv, &d->mu);
		} else if (pthread_cond_timedwait(&d->cv, &d->mu,
		    &until) != 0) {
			r = -LC_ERR_TIMEOUT;
			goto out;
		}
	}
	if (d->aborted || (stop != NULL && atomic_load(stop))) {
		r = -LC_ERR_CANCELED;
		goto out;
	}
	if ((f = STAILQ_FIRST(&d->queue)) == NULL) {
		r = 0;	/* finished, drained and all released */
		goto out;
	}
	left = f->end - f->pos;
	b->file = f;
	b->file_id = f->id;
	b->fd = f->fd;
	b->offset = f->pos;
	b->len = left < d->block ? (uint32_t)left : d->block;
	f->pos += b->len;
	f->outstanding++;
	d->outstanding++;
	d->dispensed += b->len;
	if (f->pos == f->end) {	/* last block: dequeue */
		STAILQ_REMOVE_HEAD(&d->queue, link);
		f->queued = 0;
	}
	r = 1;
 out:
	pthread_mutex_unlock(&d->mu);
	return r;
}

int
lc_dispenser_hash(struct lc_dispenser *d, const struct lc_block *b,
    const void *data, int *done, char sum[LC_CSUM_TEXT_MAX])
{
	struct lc_dfile *f = b->file;

	*done = 0;
	if (f->csum == NULL)
		return 0;
	pthread_mutex_lock(&d->mu);
	while (!d->aborted && f->hashed < b->offset)
		pthread_cond_wait(&d->hash_cv, &d->mu);
	if (d->aborted) {
		pthread_mutex_unlock(&d->mu);
		return -LC_ERR_CANCELED;
	}
	if (f->hashed > b->offset) {	/* sent before, already fed */
		pthread_mutex_unlock(&d->mu);
		return 0;
	}
	pthread_mutex_unlock(&d->mu);
	/* our turn: nobody else touches f->csum until hashed moves */
	lc_csum_update(f->csum, data, b->len);
	pthread_mutex_lock(&d->mu);
	f->hashed += b->len;
	if (f->hashed == f->end) {
		lc_csum_text(f->csum, sum);
		*done = 1;
	}
	pthread_cond_broadcast(&d->hash_cv);
	pthread_mutex_unlock(&d->mu);
	return 0;
}

void
lc_dispenser_release(struct lc_dispenser *d, struct lc_block *b)
{
	struct lc_dfile *f = b->file;
	int done;

	if (f == NULL)
		return;
	pthread_mutex_lock(&d->mu);
	f->outstanding--;
	d->outstanding--;
	done = !f->queued && f->outstanding == 0;
	if (done)
		LIST_REMOVE(f, all_link);
	if (d->outstanding == 0)
		pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
	b->file = NULL;
	if (done)
		lc_dfile_free(f);
}

uint64_t
lc_dispenser_dispensed(struct lc_dispenser *d)
{
	uint64_t v;

	pthread_mutex_lock(&d->mu);
	v = d->dispensed;
	pthread_mutex_unlock(&d->mu);
	return v;
}

void
lc_dispenser_free(struct lc_dispenser *d)
{
	struct lc_dfile *f;

	if (d == NULL)
		return;
	/*
	 * Callers free after joining the senders and dropping the blocks
	 * they kept; whatever file is left is closed here.
	 */
	while ((f = LIST_FIRST(&d->all)) != NULL) {
		LIST_REMOVE(f, all_link);
		lc_dfile_free(f);
	}
	pthread_cond_destroy(&d->hash_cv);
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
	free(d);
}
