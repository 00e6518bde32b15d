#include "lanecp/dispenser.h"
#include "lanecp/err.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

struct lc_dfile {
	struct lc_dfile *next;	/* queue link */
	uint32_t id;
	int fd;
	uint64_t pos;		/* next offset to hand out */
	uint64_t end;
	uint32_t outstanding;	/* blocks handed out, not released */
	int queued;		/* still in the queue (more to hand out) */
};

struct lc_dispenser {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct lc_dfile *head, *tail;
	uint32_t block;
	uint64_t dispensed;
	int finished;
	int aborted;
};

struct lc_dispenser *
lc_dispenser_new(uint32_t block)
{
	struct lc_dispenser *d;

	if (block == 0 || (d = calloc(1, sizeof(*d))) == NULL)
		return NULL;
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->cv, NULL);
	d->block = block;
	return d;
}

int
lc_dispenser_add(struct lc_dispenser *d, uint32_t id, int fd,
    uint64_t start, uint64_t end)
{
	struct lc_dfile *f;

	if (start >= end) {	/* nothing to send */
		close(fd);
		return 0;
	}
	if ((f = calloc(1, sizeof(*f))) == NULL) {
		close(fd);
		return -LC_ERR_NOMEM;
	}
	f->id = id;
	f->fd = fd;
	f->pos = start;
	f->end = end;
	f->queued = 1;
	pthread_mutex_lock(&d->mu);
	if (d->finished) {
		pthread_mutex_unlock(&d->mu);
		close(fd);
		free(f);
		return -LC_ERR_INTERNAL;
	}
	if (d->tail != NULL)
		d->tail->next = f;
	else
		d->head = f;
	d->tail = f;
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
	pthread_mutex_unlock(&d->mu);
}

int
lc_dispenser_next(struct lc_dispenser *d, struct lc_block *b)
{
	struct lc_dfile *f;
	uint64_t left;
	int r;

	pthread_mutex_lock(&d->mu);
	while (!d->aborted && d->head == NULL && !d->finished)
		pthread_cond_wait(&d->cv, &d->mu);
	if (d->aborted) {
		r = -LC_ERR_CANCELED;
		goto out;
	}
	if ((f = d->head) == NULL) {
		r = 0;	/* finished and drained */
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

void
lc_dispenser_release(struct lc_dispenser *d, struct lc_block *b)
{
	struct lc_dfile *f = b->file;
	int done;

	if (f == NULL)
		return;
	pthread_mutex_lock(&d->mu);
	f->outstanding--;
	done = !f->queued && f->outstanding == 0;
	pthread_mutex_unlock(&d->mu);
	b->file = NULL;
	if (done) {
		close(f->fd);
		free(f);
	}
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
	 * Callers free after joining the senders, which release every block
	 * they took; what is left is the queue.
	 */
	for (f = d->head; f != NULL; f = n) {
		n = f->next;
		close(f->fd);
		free(f);
	}
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
	free(d);
}
