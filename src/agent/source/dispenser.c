#include "dispenser.h"
#include "clock.h"
#include "thread.h"
#include "err.h"
#include "wire.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct lc_dfile {
	STAILQ_ENTRY(lc_dfile) link;	/* queue link, while queued */
	LIST_ENTRY(lc_dfile) all_link;	/* every live file */
	uint32_t id;
	int fd;
	uint64_t pos;		/* next offset to hand out */
	uint64_t end;		/* of the current span, or of the file */
	struct lc_span *spans;	/* resume: ranges sent before the tail */
	uint32_t nspans;
	uint32_t cur;		/* the span being handed out (nspans: tail) */
	uint64_t tail;		/* [tail, last) comes after the spans */
	uint64_t last;		/* the end of the file's range */
	uint64_t seg_end;	/* [pos, seg_end) is known data or hole */
	int seg_hole;
	int dense;		/* no more probing: all data up to end */
	int follow;		/* a followed file: blocks up to avail */
	uint64_t avail;		/* follow: [0, avail) is final */
	uint32_t outstanding;	/* blocks handed out, not released */
	int queued;		/* still in the queue (more to hand out) */
	struct lc_csum *csum;	/* NULL: no checksum */
	uint64_t hashed;	/* checksum covers [0, hashed) */
	int stream;		/* no fd: blocks come from ready; end is
				   LC_PIPE_MAX until eof */
	int eof;		/* stream: end is its length */
	uint64_t filled;	/* stream: bytes pushed */
	struct lc_pbuf *ready;	/* stream: pushed, not handed out, in order */
	struct lc_pbuf *ready_tail;
};

/* Zeros to hash for holes. */
static const uint8_t lc_zeros[64 << 10];

struct lc_dispenser {
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* queue changes; only senders wait on it */
	pthread_cond_t buf_cv;	/* a stream buffer came free */
	pthread_cond_t hash_cv;	/* a file's hashed offset moved */
	STAILQ_HEAD(, lc_dfile) queue;	/* files with blocks to hand out */
	LIST_HEAD(, lc_dfile) all;
	uint32_t block;
	uint64_t dispensed;
	uint64_t outstanding;	/* all files */
	int finished;
	int aborted;
	uint32_t waiting;	/* senders asleep in lc_dispenser_next */
	struct lc_pbuf *pfree;	/* stream buffers not in use */
	uint32_t pcount;	/* stream buffers allocated */
	uint32_t pmax;
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
	if (lc_cond_init_monotonic(&d->buf_cv) != 0) {
		pthread_cond_destroy(&d->hash_cv);
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
lc_pbuf_free(struct lc_pbuf *b)
{
	if (b != NULL) {
		free(b->data);
		free(b);
	}
}

static void
lc_dfile_free(struct lc_dfile *f)
{
	struct lc_pbuf *b;

	if (f->fd >= 0)
		close(f->fd);
	while ((b = f->ready) != NULL) {
		f->ready = b->next;
		lc_pbuf_free(b);
	}
	lc_csum_free(f->csum);
	free(f->spans);
	free(f);
}

int
lc_dispenser_add(struct lc_dispenser *d, uint32_t id, int fd,
    uint64_t start, uint64_t end, struct lc_csum *csum,
    char sum[LC_CSUM_TEXT_MAX])
{
	return lc_dispenser_add_spans(d, id, fd, NULL, 0, start, end, csum,
	    sum);
}

int
lc_dispenser_add_spans(struct lc_dispenser *d, uint32_t id, int fd,
    const struct lc_span *spans, uint32_t n, uint64_t start, uint64_t end,
    struct lc_csum *csum, char sum[LC_CSUM_TEXT_MAX])
{
	return lc_dispenser_add_follow(d, id, fd, spans, n, start, end,
	    UINT64_MAX, csum, sum);
}

/* avail UINT64_MAX: not followed */
int
lc_dispenser_add_follow(struct lc_dispenser *d, uint32_t id, int fd,
    const struct lc_span *spans, uint32_t n, uint64_t start, uint64_t end,
    uint64_t avail, struct lc_csum *csum, char sum[LC_CSUM_TEXT_MAX])
{
	struct lc_dfile *f;

	if (sum != NULL)
		sum[0] = '\0';
	if (start >= end && csum != NULL && sum != NULL)
		lc_csum_text(csum, sum);	/* the spans are fed already */
	if (start >= end && n == 0) {	/* nothing to send */
		lc_csum_free(csum);
		close(fd);
		return 0;
	}
	if (start >= end) {
		lc_csum_free(csum);
		csum = NULL;
	}
	if ((f = calloc(1, sizeof(*f))) == NULL ||
	    (n > 0 && (f->spans = malloc(n * sizeof(*spans))) == NULL)) {
		free(f);
		lc_csum_free(csum);
		close(fd);
		return -LC_ERR_NOMEM;
	}
	if (n > 0)
		memcpy(f->spans, spans, n * sizeof(*spans));
	f->nspans = n;
	f->id = id;
	f->fd = fd;
	f->tail = start;
	f->last = end > start ? end : start;
	f->pos = n > 0 ? spans[0].off : start;
	f->end = n > 0 ? spans[0].off + spans[0].len : end;
	f->seg_end = f->pos;
	/* a hole in a short range is not worth a frame of its own */
	f->dense = f->last - start < LC_HOLE_MIN;
	if (avail != UINT64_MAX) {
		/* its unwritten tail would be a hole to SEEK_DATA */
		f->follow = 1;
		f->dense = 1;
		f->avail = avail < f->last ? avail : f->last;
	}
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
	/*
	 * One sender is enough to start on it: a small file is one block,
	 * and the sender that cuts a block wakes the next while blocks are
	 * left (lc_dispenser_next).  Waking all of them for every file cost
	 * a tree about 20 futex calls and as many context switches a file.
	 */
	if (d->waiting > 0)
		pthread_cond_signal(&d->cv);
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
	pthread_cond_broadcast(&d->buf_cv);
	pthread_mutex_unlock(&d->mu);
}

void
lc_dispenser_kick(struct lc_dispenser *d)
{
	pthread_mutex_lock(&d->mu);
	pthread_cond_broadcast(&d->cv);
	pthread_cond_broadcast(&d->buf_cv);
	pthread_mutex_unlock(&d->mu);
}

/* Did the file shrink below what we promised to send? */
static int
lc_dfile_shrank(const struct lc_dfile *f)
{
	struct stat st;

	return fstat(f->fd, &st) != 0 || (uint64_t)st.st_size < f->end;
}

static void
lc_dfile_seg(struct lc_dfile *f, uint64_t seg_end, int hole)
{
	f->seg_end = seg_end < f->end ? seg_end : f->end;
	f->seg_hole = hole;
}

/*
 * Find what starts at f->pos: data (stretched over holes shorter than
 * LC_HOLE_MIN while it is shorter than a block) or a hole.  Without
 * SEEK_DATA support, or when the file shrank (so that the read fails as
 * it should), everything left is data.
 */
static void
lc_dfile_probe(struct lc_dfile *f, uint32_t block)
{
	uint64_t pos = f->pos, at, h;
	off_t o;

	if (f->dense || f->cur < f->nspans) {	/* spans: always data */
		lc_dfile_seg(f, f->end, 0);
		return;
	}
	if ((o = lseek(f->fd, (off_t)pos, SEEK_DATA)) < 0) {
		if (errno == ENXIO && !lc_dfile_shrank(f)) {
			lc_dfile_seg(f, f->end, 1);	/* a hole to the end */
			return;
		}
		f->dense = 1;
		lc_dfile_seg(f, f->end, 0);
		return;
	}
	at = (uint64_t)o;
	if (at < pos) {		/* nonsense: give up on holes */
		f->dense = 1;
		lc_dfile_seg(f, f->end, 0);
		return;
	}
	if (at > pos && (at >= f->end || at - pos >= LC_HOLE_MIN)) {
		lc_dfile_seg(f, at, 1);
		return;
	}
	/* data from pos (a short hole first is sent as data) */
	for (;;) {
		if ((o = lseek(f->fd, (off_t)at, SEEK_HOLE)) < 0 ||
		    (uint64_t)o <= at || (uint64_t)o >= f->end) {
			lc_dfile_seg(f, f->end, 0);
			return;
		}
		h = (uint64_t)o;
		if (h - pos >= block) {
			lc_dfile_seg(f, h, 0);
			return;
		}
		o = lseek(f->fd, (off_t)h, SEEK_DATA);
		if (o < 0 || (uint64_t)o <= h || (uint64_t)o >= f->end ||
		    (uint64_t)o - h >= LC_HOLE_MIN) {
			lc_dfile_seg(f, h, 0);
			return;
		}
		at = (uint64_t)o;	/* swallow the short hole */
	}
}

/* Cut the next block of f (under d->mu).  *b is filled; f may be dequeued. */
static void
lc_dispenser_cut(struct lc_dispenser *d, struct lc_dfile *f,
    struct lc_block *b)
{
	uint64_t left;

	b->data = NULL;
	b->pbuf = NULL;
	if (f->stream) {	/* the caller saw f->ready non-empty */
		struct lc_pbuf *pb = f->ready;
		if ((f->ready = pb->next) == NULL)
			f->ready_tail = NULL;
		pb->next = NULL;
		b->file = f;
		b->file_id = f->id;
		b->fd = -1;
		b->offset = pb->off;
		b->len = pb->len;
		b->hole = 0;
		b->zfill = 0;
		b->data = pb->data;
		b->pbuf = pb;
		f->pos += pb->len;
		f->outstanding++;
		d->outstanding++;
		d->dispensed += pb->len;
		if (f->eof && f->pos == f->end) {
			STAILQ_REMOVE_HEAD(&d->queue, link);
			f->queued = 0;
		}
		return;
	}
	if (f->pos >= f->seg_end)
		lc_dfile_probe(f, d->block);
	left = f->seg_end - f->pos;
	b->file = f;
	b->file_id = f->id;
	b->fd = f->fd;
	b->offset = f->pos;
	b->hole = (uint8_t)f->seg_hole;
	b->zfill = (uint8_t)f->follow;
	if (f->seg_hole)
		b->len = left < LC_MAX_HOLE ? (uint32_t)left : LC_MAX_HOLE;
	else
		b->len = left < d->block ? (uint32_t)left : d->block;
	f->pos += b->len;
	f->outstanding++;
	d->outstanding++;
	d->dispensed += b->len;
	if (f->pos == f->end && f->cur < f->nspans) {	/* the next span */
		f->cur++;
		f->pos = f->cur < f->nspans ? f->spans[f->cur].off : f->tail;
		f->end = f->cur < f->nspans ? f->spans[f->cur].off +
		    f->spans[f->cur].len : f->last;
		f->seg_end = f->pos;
	}
	if (f->pos == f->end) {	/* last block: dequeue */
		STAILQ_REMOVE_HEAD(&d->queue, link);
		f->queued = 0;
	}
}

/*
 * A followed file's next block (whole: a block, or what is left of the
 * span) is final (under d->mu).  Followed files are dense: the block is
 * min(block, end - pos) bytes.
 */
static int
lc_dfile_final(const struct lc_dfile *f, uint32_t block)
{
	uint64_t left = f->end - f->pos;

	return !f->follow || f->avail >= f->pos + (left < block ? left : block);
}

/*
 * The file a block can be cut from now (under d->mu): the head of the
 * queue, unless it is a stream with nothing read yet or a followed file
 * whose next block is not final yet.
 */
static struct lc_dfile *
lc_dispenser_head(struct lc_dispenser *d)
{
	struct lc_dfile *f = STAILQ_FIRST(&d->queue);

	if (f == NULL || (f->stream && f->ready == NULL) ||
	    !lc_dfile_final(f, d->block))
		return NULL;
	return f;
}

int
lc_dispenser_set_avail(struct lc_dispenser *d, uint32_t id, uint64_t avail,
    uint64_t *cur, uint64_t *end)
{
	struct lc_dfile *f;
	int r = 0;

	pthread_mutex_lock(&d->mu);
	LIST_FOREACH(f, &d->all, all_link) {
		if (f->id != id || !f->follow)
			continue;
		*cur = f->avail;
		*end = f->last;
		if (avail < f->avail || avail > f->last) {
			r = -LC_ERR_PROTO;
		} else {
			r = 1;
			if (avail > f->avail) {
				f->avail = avail;
				pthread_cond_broadcast(&d->cv);
			}
		}
		break;
	}
	pthread_mutex_unlock(&d->mu);
	return r;
}

int
lc_dispenser_next(struct lc_dispenser *d, struct lc_block *b,
    const atomic_bool *stop, int timeout_ms)
{
	struct lc_dfile *f;
	struct timespec until;
	int r;

	if (timeout_ms >= 0)
		lc_deadline(CLOCK_MONOTONIC, timeout_ms, &until);
	pthread_mutex_lock(&d->mu);
	while (!d->aborted && !(stop != NULL && atomic_load(stop)) &&
	    lc_dispenser_head(d) == NULL &&
	    !(d->finished && d->outstanding == 0 &&
	    STAILQ_EMPTY(&d->queue))) {
		d->waiting++;
		if (timeout_ms < 0) {
			pthread_cond_wait(&d->cv, &d->mu);
		} else if (pthread_cond_timedwait(&d->cv, &d->mu,
		    &until) != 0) {
			d->waiting--;
			r = -LC_ERR_TIMEOUT;
			goto out;
		}
		d->waiting--;
	}
	if (d->aborted || (stop != NULL && atomic_load(stop))) {
		r = -LC_ERR_CANCELED;
		goto out;
	}
	if ((f = lc_dispenser_head(d)) == NULL) {
		r = 0;	/* finished, drained and all released */
		goto out;
	}
	lc_dispenser_cut(d, f, b);
	/* more to hand out: pass the wake-up on (lc_dispenser_add wakes
	 * one sender only) */
	if (d->waiting > 0 && lc_dispenser_head(d) != NULL)
		pthread_cond_signal(&d->cv);
	r = 1;
 out:
	pthread_mutex_unlock(&d->mu);
	return r;
}

int
lc_dispenser_try_small(struct lc_dispenser *d, struct lc_block *b,
    const atomic_bool *stop, uint32_t max_len)
{
	struct lc_dfile *f;
	uint64_t left;
	int r = 0;

	pthread_mutex_lock(&d->mu);
	if (d->aborted || (stop != NULL && atomic_load(stop))) {
		r = -LC_ERR_CANCELED;
		goto out;
	}
	if ((f = lc_dispenser_head(d)) == NULL)
		goto out;
	if (f->stream) {
		if (f->ready->len > max_len)
			goto out;
		lc_dispenser_cut(d, f, b);
		r = 1;
		goto out;
	}
	if (f->pos >= f->seg_end)
		lc_dfile_probe(f, d->block);
	left = f->seg_end - f->pos;
	if (!f->seg_hole && (left < d->block ? left : d->block) > max_len)
		goto out;
	lc_dispenser_cut(d, f, b);
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
	if (b->hole) {
		for (uint32_t n, left = b->len; left > 0; left -= n) {
			n = left < sizeof(lc_zeros) ? left :
			    (uint32_t)sizeof(lc_zeros);
			lc_csum_update(f->csum, lc_zeros, n);
		}
	} else {
		lc_csum_update(f->csum, data, b->len);
	}
	pthread_mutex_lock(&d->mu);
	f->hashed += b->len;
	if (f->hashed == f->last) {
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
	if (b->pbuf != NULL) {	/* a stream's buffer: free for the reader */
		b->pbuf->next = d->pfree;
		d->pfree = b->pbuf;
		b->pbuf = NULL;
		b->data = NULL;
		pthread_cond_broadcast(&d->buf_cv);
	}
	f->outstanding--;
	d->outstanding--;
	done = !f->queued && f->outstanding == 0;
	if (done)
		LIST_REMOVE(f, all_link);
	/* the senders' end (finished, drained, all released); before the
	 * finish nobody waits for this */
	if (d->outstanding == 0 && d->finished)
		pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
	b->file = NULL;
	if (done)
		lc_dfile_free(f);
}

int
lc_dispenser_add_pipe(struct lc_dispenser *d, uint32_t id, uint32_t count,
    struct lc_dfile **out)
{
	struct lc_dfile *f;

	*out = NULL;
	if (count == 0 || (f = calloc(1, sizeof(*f))) == NULL)
		return -LC_ERR_NOMEM;
	f->id = id;
	f->fd = -1;
	f->end = LC_PIPE_MAX;
	f->stream = 1;
	f->queued = 1;
	pthread_mutex_lock(&d->mu);
	if (d->finished) {
		pthread_mutex_unlock(&d->mu);
		free(f);
		return -LC_ERR_INTERNAL;
	}
	d->pmax = count;
	STAILQ_INSERT_TAIL(&d->queue, f, link);
	LIST_INSERT_HEAD(&d->all, f, all_link);
	pthread_mutex_unlock(&d->mu);
	*out = f;
	return 0;
}

struct lc_pbuf *
lc_dispenser_pipe_buf(struct lc_dispenser *d, const atomic_bool *stop,
    int *nomem)
{
	struct lc_pbuf *b = NULL;
	struct timespec until;

	*nomem = 0;
	pthread_mutex_lock(&d->mu);
	for (;;) {
		if (d->aborted || (stop != NULL && atomic_load(stop)))
			break;
		if ((b = d->pfree) != NULL) {
			d->pfree = b->next;
			break;
		}
		if (d->pcount < d->pmax) {
			if ((b = calloc(1, sizeof(*b))) == NULL ||
			    (b->data = malloc(d->block)) == NULL) {
				free(b);
				b = NULL;
				*nomem = 1;
				break;
			}
			d->pcount++;
			break;
		}
		/* the stop flag has no condvar of its own: look again soon */
		lc_deadline(CLOCK_MONOTONIC, 250, &until);
		(void)pthread_cond_timedwait(&d->buf_cv, &d->mu, &until);
	}
	pthread_mutex_unlock(&d->mu);
	if (b != NULL) {
		b->next = NULL;
		b->len = 0;
	}
	return b;
}

void
lc_dispenser_pipe_push(struct lc_dispenser *d, struct lc_dfile *f,
    struct lc_pbuf *b)
{
	pthread_mutex_lock(&d->mu);
	b->off = f->filled;
	b->next = NULL;
	f->filled += b->len;
	if (f->ready_tail != NULL)
		f->ready_tail->next = b;
	else
		f->ready = b;
	f->ready_tail = b;
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
}

void
lc_dispenser_pipe_unused(struct lc_dispenser *d, struct lc_pbuf *b)
{
	pthread_mutex_lock(&d->mu);
	b->next = d->pfree;
	d->pfree = b;
	pthread_cond_broadcast(&d->buf_cv);
	pthread_mutex_unlock(&d->mu);
}

void
lc_dispenser_pipe_end(struct lc_dispenser *d, struct lc_dfile *f)
{
	int done = 0;

	pthread_mutex_lock(&d->mu);
	f->end = f->filled;
	f->eof = 1;
	if (f->queued && f->pos == f->end) {	/* everything handed out */
		STAILQ_REMOVE(&d->queue, f, lc_dfile, link);
		f->queued = 0;
		if (f->outstanding == 0) {
			LIST_REMOVE(f, all_link);
			done = 1;
		}
	}
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
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
	while (d->pfree != NULL) {
		struct lc_pbuf *b = d->pfree;
		d->pfree = b->next;
		lc_pbuf_free(b);
	}
	pthread_cond_destroy(&d->buf_cv);
	pthread_cond_destroy(&d->hash_cv);
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
	free(d);
}
