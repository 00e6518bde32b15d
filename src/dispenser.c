#include "lanecp/dispenser.h"
#include "lanecp/clock.h"
#include "lanecp/thread.h"
#include "lanecp/err.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct lc_dfile {
	struct lc_dfile *next;	/* queue link */
	struct lc_dfile *all_next;	/* every live file */
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
	struct lc_dfile *head, *tail;
	struct lc_dfile *all;
	struct lc_block *requeued;	/* sorted, lowest first */
	size_t nrequeued;
	size_t requeued_cap;
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

/* Unlink f from the list of live files (locked). */
static void
lc_dispenser_unlink(struct lc_dispenser *d, struct lc_dfile *f)
{
	struct lc_dfile **pp;

	for (pp = &d->all; *pp != NULL && *pp != f; pp = &(*pp)->all_next)
		;
	if (*pp == f)
		*pp = f->all_next;
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
	if (d->tail != NULL)
		d->tail->next = f;
	else
		d->head = f;
	d->tail = f;
	f->all_next = d->all;
	d->all = f;
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
	    d->nrequeued == 0 && d->head == NULL &&
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
	if (d->nrequeued > 0) {	/* lowest requeued block first */
		*b = d->requeued[0];
		memmove(d->requeued, d->requeued + 1,
		    (d->nrequeued - 1) * sizeof(*d->requeued));
		d->nrequeued--;
		d->dispensed += b->len;
		r = 1;	/* still outstanding: it never was released */
		goto out;
	}
	if ((f = d->head) == NULL) {
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
		d->head = f->next;
		if (d->head == NULL)
			d->tail = NULL;
		f->next = NULL;
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
		lc_dispenser_unlink(d, f);
	if (d->outstanding == 0)
		pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
	b->file = NULL;
	if (done)
		lc_dfile_free(f);
}

void
lc_dispenser_requeue(struct lc_dispenser *d, struct lc_block *b, size_t n)
{
	pthread_mutex_lock(&d->mu);
	for (size_t i = 0; i < n; i++) {
		size_t at;
		if (d->nrequeued == d->requeued_cap) {
			size_t ncap = d->requeued_cap ? d->requeued_cap * 2 : 16;
			struct lc_block *nb = realloc(d->requeued,
			    ncap * sizeof(*nb));
			if (nb == NULL) {	/* cannot keep it: fail loudly */
				d->aborted = 1;
				break;
			}
			d->requeued = nb;
			d->requeued_cap = ncap;
		}
		for (at = d->nrequeued; at > 0 && lc_block_cmp(b[i].file_id,
		    b[i].offset, d->requeued[at - 1].file_id,
		    d->requeued[at - 1].offset) < 0; at--)
			;
		memmove(d->requeued + at + 1, d->requeued + at,
		    (d->nrequeued - at) * sizeof(*d->requeued));
		d->requeued[at] = b[i];
		d->nrequeued++;
	}
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
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
	struct lc_dfile *f, *n;

	if (d == NULL)
		return;
	/*
	 * Callers free after joining the senders and dropping the blocks
	 * they kept; whatever file is left is closed here.
	 */
	for (f = d->all; f != NULL; f = n) {
		n = f->all_next;
		lc_dfile_free(f);
	}
	free(d->requeued);
	pthread_cond_destroy(&d->hash_cv);
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
	free(d);
}
