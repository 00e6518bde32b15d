#include "writer.h"
#include "clock.h"
#include "thread.h"
#include "lc_limits.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>
#include <unistd.h>

/* Zeros for holes: written to non-seekable targets, fed to checksums. */
static const uint8_t lc_zeros[64 << 10];

struct lc_wfile {
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* the drainer is done (lc_wfile_close waits) */
	atomic_uint refs;	/* the owner's and the receivers' (Lifetime) */
	int fd;
	int seekable;
	uint64_t next;		/* written up to here */
	uint64_t busy_end;	/* a drainer writes [next, busy_end); idle:
				   next */
	uint64_t end;
	int open_end;		/* a stream: end is a bound, not the length,
				   until lc_wfile_set_end */
	uint64_t tail;		/* start: spans below, zeros from here on */
	struct lc_span *spans;	/* resume: ranges to rewrite first */
	uint32_t nspans;
	uint32_t cur;		/* the span being written (nspans: the tail) */
	struct lc_wbuf_q pending;	/* sorted by offset */
	int draining;
	int closing;		/* lc_wfile_close waits: drainer, stop */
	int closed;		/* nothing is written any more */
	uint32_t holes;		/* holes in pending */
	atomic_int_fast64_t *budget;	/* waiting holes' memory, NULL: none */
	int err;		/* first error, negative */
	struct lc_csum *csum;	/* fed in order, NULL: none */
	atomic_uint_fast64_t *count;	/* bytes written, NULL: none */
	/*
	 * On the heap, not in the struct: a sink has a writer per file in
	 * flight (up to 4096), and these came to 1 KiB each of them.
	 */
	struct lc_err *errinfo;	/* the first error's message, NULL: none
				   (or no memory for it) */
	char *name;		/* for messages */
};

int
lc_wfile_new(int fd, int seekable, uint64_t start, uint64_t end,
    const char *name, struct lc_wfile **out)
{
	struct lc_wfile *f;

	*out = NULL;
	if (start > end || (f = calloc(1, sizeof(*f))) == NULL)
		return -LC_ERR_NOMEM;
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	atomic_init(&f->refs, 1);
	TAILQ_INIT(&f->pending);
	f->fd = fd;
	f->seekable = seekable;
	f->next = start;
	f->busy_end = start;
	f->end = end;
	f->tail = start;
	if ((f->name = strdup(name)) == NULL) {
		pthread_cond_destroy(&f->cv);
		pthread_mutex_destroy(&f->mu);
		free(f);
		return -LC_ERR_NOMEM;
	}
	*out = f;
	return 0;
}

/*
 * Give a block back: a buffer to its pool, a hole's descriptor freed and
 * its charge to the budget (the budget is set before any block comes).
 */
static void
lc_wfile_drop(struct lc_wfile *f, struct lc_wbuf *b)
{
	if (b->hole && b->charged && f->budget != NULL)
		atomic_fetch_add(f->budget, LC_WFILE_HOLE_COST);
	lc_pool_put(b);
}

/* Write len bytes of p at off (seekable) or at the end (not). */
static int
lc_wfile_put(struct lc_wfile *f, const uint8_t *p, size_t len, uint64_t off,
    struct lc_err *e)
{
	while (len > 0) {
		ssize_t w = f->seekable ? pwrite(f->fd, p, len, (off_t)off) :
		    write(f->fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EPIPE)	/* nobody reads a pipe target */
				return lc_err_set(e, LC_ERR_PIPE, "write %s: "
				    "the reading end was closed (broken pipe)",
				    f->name);
			return lc_err_sys(e, LC_ERR_IO, errno, "write %s",
			    f->name);
		}
		if (w == 0)
			return lc_err_set(e, LC_ERR_IO, "write %s: no progress",
			    f->name);
		p += w;
		off += (uint64_t)w;
		len -= (size_t)w;
	}
	return 0;
}

/*
 * A block in order.  A hole: nothing to write on a seekable target, except
 * that a file ending in a hole gets its length; zeros on a non-seekable one.
 */
static int
lc_wfile_write(struct lc_wfile *f, const struct lc_wbuf *b, struct lc_err *e)
{
	uint64_t left = b->len, off = b->off;
	size_t n;
	int r;

	if (!b->hole)
		return lc_wfile_put(f, b->data, b->len, b->off, e);
	if (f->seekable && b->off >= f->tail) {
		if (b->off + b->len == f->end &&
		    ftruncate(f->fd, (off_t)f->end) != 0)
			return lc_err_sys(e, LC_ERR_IO, errno, "extend %s",
			    f->name);
		return 0;
	}
	for (; left > 0; left -= n, off += n) {
		n = left < sizeof(lc_zeros) ? (size_t)left : sizeof(lc_zeros);
		if ((r = lc_wfile_put(f, lc_zeros, n, off, e)) != 0)
			return r;
	}
	return 0;
}

/* Is [off, off + len) inside one span not yet done, or the tail? */
static int
lc_wfile_in_range(const struct lc_wfile *f, uint64_t off, uint32_t len)
{
	if (off >= f->tail)
		return off <= f->end && f->end - off >= len;
	for (uint32_t i = f->cur; i < f->nspans; i++)
		if (off >= f->spans[i].off && off - f->spans[i].off <
		    f->spans[i].len)
			return f->spans[i].len - (off - f->spans[i].off) >= len;
	return 0;
}

/*
 * Where a block [off, off + len) goes among the waiting ones: *prevp is
 * the one before it (NULL: the first).  -LC_ERR_PROTO if it is out of
 * range, below what is written or being written, or overlaps a waiting
 * block.
 */
static int
lc_wfile_place_locked(struct lc_wfile *f, uint64_t off, uint32_t len,
    struct lc_wbuf **prevp)
{
	struct lc_wbuf *prev, *next;

	*prevp = NULL;
	if (len == 0 || off < f->busy_end || !lc_wfile_in_range(f, off, len))
		return -LC_ERR_PROTO;
	/* the one before; blocks mostly come in order, so look from the end */
	TAILQ_FOREACH_REVERSE(prev, &f->pending, lc_wbuf_q, link)
		if (prev->off < off)
			break;
	next = prev != NULL ? TAILQ_NEXT(prev, link) :
	    TAILQ_FIRST(&f->pending);
	if (next != NULL && off + len > next->off)
		return -LC_ERR_PROTO;	/* overlaps the one after */
	if (prev != NULL && prev->off + prev->len > off)
		return -LC_ERR_PROTO;	/* overlaps the one before */
	*prevp = prev;
	return 0;
}

/*
 * May a block [off, off + len) go in?  0 with *prevp (as above), or the
 * error to return: the file's first error, or -LC_ERR_PROTO (e says why)
 * for a closed writer or a block that does not fit.
 */
static int
lc_wfile_check_locked(struct lc_wfile *f, uint64_t off, uint32_t len,
    struct lc_wbuf **prevp, struct lc_err *e)
{
	*prevp = NULL;
	if (f->closed)
		return lc_err_set(e, LC_ERR_PROTO, "%s: block at offset %llu "
		    "length %u, but the file is no longer received (finished "
		    "or dropped)", f->name, (unsigned long long)off, len);
	if (f->err != 0) {
		if (e != NULL && f->errinfo != NULL)
			*e = *f->errinfo;
		else
			(void)lc_err_set(e, -f->err, "%s: %s", f->name,
			    lc_strerror(f->err));
		return f->err;
	}
	if (lc_wfile_place_locked(f, off, len, prevp) != 0)
		return lc_err_set(e, LC_ERR_PROTO, "%s: bad block at offset "
		    "%llu length %u (written %llu of %llu)", f->name,
		    (unsigned long long)off, len, (unsigned long long)f->next,
		    (unsigned long long)f->end);
	return 0;
}

static void
lc_wfile_insert_locked(struct lc_wfile *f, struct lc_wbuf *prev,
    struct lc_wbuf *b)
{
	if (prev != NULL)
		TAILQ_INSERT_AFTER(&f->pending, prev, b, link);
	else
		TAILQ_INSERT_HEAD(&f->pending, b, link);
	if (b->hole)
		f->holes++;
}

static void
lc_wfile_hash(struct lc_csum *csum, const struct lc_wbuf *b)
{
	uint32_t left, n;

	if (!b->hole) {
		lc_csum_update(csum, b->data, b->len);
		return;
	}
	for (left = b->len; left > 0; left -= n) {
		n = left < sizeof(lc_zeros) ? left : (uint32_t)sizeof(lc_zeros);
		lc_csum_update(csum, lc_zeros, n);
	}
}

/*
 * With f->mu held, released on return: write every waiting block that is
 * in order now, unless another thread is at it (it writes them too).
 */
static int
lc_wfile_drain_locked(struct lc_wfile *f, int *complete, struct lc_err *e)
{
	struct lc_wbuf *w;
	uint32_t len;
	int r = 0;

	if (f->draining) {	/* the drainer will write it */
		pthread_mutex_unlock(&f->mu);
		return 0;
	}
	f->draining = 1;
	while (!f->closing && (w = TAILQ_FIRST(&f->pending)) != NULL &&
	    w->off == f->next) {
		TAILQ_REMOVE(&f->pending, w, link);
		if (w->hole)
			f->holes--;
		len = w->len;
		f->busy_end = w->off + len;
		pthread_mutex_unlock(&f->mu);
		r = lc_wfile_write(f, w, e);
		if (r == 0 && f->csum != NULL)
			lc_wfile_hash(f->csum, w);
		lc_wfile_drop(f, w);
		pthread_mutex_lock(&f->mu);
		if (r != 0) {
			f->err = r;
			if (e != NULL && f->errinfo == NULL &&
			    (f->errinfo = malloc(sizeof(*f->errinfo))) != NULL)
				*f->errinfo = *e;
			break;
		}
		f->next += len;
		if (f->count != NULL)
			atomic_fetch_add(f->count, len);
		/* the end of a span: on to the next one, or the tail */
		while (f->cur < f->nspans && f->next ==
		    f->spans[f->cur].off + f->spans[f->cur].len) {
			f->cur++;
			f->next = f->cur < f->nspans ? f->spans[f->cur].off :
			    f->tail;
		}
		f->busy_end = f->next;
		if (f->next == f->end && f->cur == f->nspans && !f->open_end)
			*complete = 1;
	}
	f->draining = 0;
	if (f->closing)
		pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
	return r;
}

int
lc_wfile_submit(struct lc_wfile *f, struct lc_wbuf *b, int *complete,
    struct lc_err *e)
{
	struct lc_wbuf *prev;
	int r;

	*complete = 0;
	pthread_mutex_lock(&f->mu);
	if ((r = lc_wfile_check_locked(f, b->off, b->len, &prev, e)) != 0) {
		pthread_mutex_unlock(&f->mu);
		lc_wfile_drop(f, b);
		return r;
	}
	lc_wfile_insert_locked(f, prev, b);
	return lc_wfile_drain_locked(f, complete, e);
}

/* Take a waiting hole's cost from the budget: 1, or 0 if it is spent. */
static int
lc_wfile_charge(struct lc_wfile *f)
{
	int_fast64_t left;

	if (f->budget == NULL)
		return 1;
	left = atomic_load(f->budget);
	do {
		if (left < LC_WFILE_HOLE_COST)
			return 0;
	} while (!atomic_compare_exchange_weak(f->budget, &left,
	    left - LC_WFILE_HOLE_COST));
	return 1;
}

/*
 * A waiting hole [off, off + len) that touches a waiting hole before or
 * after it (or both) is merged into it: 1, nothing allocated or charged.
 * In the tail only (a span's holes are written as zeros, and span ends
 * are where the writer jumps), and while the length fits.
 */
static int
lc_wfile_merge_locked(struct lc_wfile *f, struct lc_wbuf *prev,
    uint64_t off, uint32_t len)
{
	struct lc_wbuf *next = prev != NULL ? TAILQ_NEXT(prev, link) :
	    TAILQ_FIRST(&f->pending);
	int before, after;

	if (off < f->tail)
		return 0;
	before = prev != NULL && prev->hole && prev->off >= f->tail &&
	    prev->off + prev->len == off && UINT32_MAX - prev->len >= len;
	after = next != NULL && next->hole && off + len == next->off &&
	    UINT32_MAX - len >= next->len;
	if (before && after && UINT32_MAX - prev->len - len >= next->len) {
		prev->len += len + next->len;
		TAILQ_REMOVE(&f->pending, next, link);
		f->holes--;
		lc_wfile_drop(f, next);
		return 1;
	}
	if (before) {
		prev->len += len;
		return 1;
	}
	if (after) {
		next->off = off;
		next->len += len;
		return 1;
	}
	return 0;
}

int
lc_wfile_submit_hole(struct lc_wfile *f, uint64_t off, uint32_t len,
    int *complete, struct lc_err *e)
{
	struct lc_wbuf *b, *prev;
	int charged = 0, r;

	*complete = 0;
	pthread_mutex_lock(&f->mu);
	if ((r = lc_wfile_check_locked(f, off, len, &prev, e)) != 0) {
		pthread_mutex_unlock(&f->mu);
		return r;
	}
	/* the writer takes a hole at its offset at once: always let in */
	if (off != f->next) {
		if (lc_wfile_merge_locked(f, prev, off, len)) {
			pthread_mutex_unlock(&f->mu);
			return 0;
		}
		if (f->holes >= LC_WFILE_MAX_HOLES || !lc_wfile_charge(f)) {
			pthread_mutex_unlock(&f->mu);
			return 1;	/* wait for the writer to move */
		}
		charged = 1;
	}
	if ((b = calloc(1, sizeof(*b))) == NULL) {
		if (charged)
			atomic_fetch_add(f->budget, LC_WFILE_HOLE_COST);
		pthread_mutex_unlock(&f->mu);
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	}
	b->off = off;
	b->len = len;
	b->hole = 1;
	b->charged = (uint8_t)charged;
	lc_wfile_insert_locked(f, prev, b);
	return lc_wfile_drain_locked(f, complete, e);
}

void
lc_wfile_set_budget(struct lc_wfile *f, atomic_int_fast64_t *budget)
{
	pthread_mutex_lock(&f->mu);
	f->budget = budget;
	pthread_mutex_unlock(&f->mu);
}

void
lc_wfile_open_end(struct lc_wfile *f)
{
	pthread_mutex_lock(&f->mu);
	f->open_end = 1;
	pthread_mutex_unlock(&f->mu);
}

int
lc_wfile_set_end(struct lc_wfile *f, uint64_t end, int *complete)
{
	struct lc_wbuf *last;
	int r = 0;

	*complete = 0;
	pthread_mutex_lock(&f->mu);
	last = TAILQ_LAST(&f->pending, lc_wbuf_q);
	if (f->closed || !f->open_end || end > f->end || end < f->next ||
	    (last != NULL && last->off + last->len > end)) {
		r = -LC_ERR_PROTO;
	} else {
		f->end = end;
		f->open_end = 0;
		/* a drainer that wrote up to end saw the bound, not end */
		*complete = f->next == end && f->err == 0;
	}
	pthread_mutex_unlock(&f->mu);
	return r;
}

int
lc_wfile_is_open(struct lc_wfile *f)
{
	int v;

	pthread_mutex_lock(&f->mu);
	v = f->open_end;
	pthread_mutex_unlock(&f->mu);
	return v;
}

int
lc_wfile_set_spans(struct lc_wfile *f, const struct lc_span *spans,
    uint32_t n)
{
	struct lc_span *v;
	uint64_t after = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (spans[i].len == 0 || spans[i].off < after ||
		    spans[i].off > f->tail ||
		    f->tail - spans[i].off < spans[i].len)
			return -LC_ERR_PROTO;
		after = spans[i].off + spans[i].len;
	}
	if (n == 0)
		return 0;
	if ((v = malloc(n * sizeof(*v))) == NULL)
		return -LC_ERR_NOMEM;
	memcpy(v, spans, n * sizeof(*v));
	pthread_mutex_lock(&f->mu);
	free(f->spans);
	f->spans = v;
	f->nspans = n;
	f->cur = 0;
	f->next = v[0].off;
	f->busy_end = f->next;
	pthread_mutex_unlock(&f->mu);
	return 0;
}

uint64_t
lc_wfile_written(struct lc_wfile *f)
{
	uint64_t v;

	pthread_mutex_lock(&f->mu);
	v = f->next;
	pthread_mutex_unlock(&f->mu);
	return v;
}

int
lc_wfile_starved(struct lc_wfile *f)
{
	struct lc_wbuf *w;
	int starved;

	pthread_mutex_lock(&f->mu);
	w = TAILQ_FIRST(&f->pending);
	starved = !f->draining && !f->closed && f->err == 0 &&
	    f->next < f->end &&
	    (w == NULL || w->off != f->next);
	pthread_mutex_unlock(&f->mu);
	return starved;
}

void
lc_wfile_set_counter(struct lc_wfile *f, atomic_uint_fast64_t *count)
{
	pthread_mutex_lock(&f->mu);
	f->count = count;
	pthread_mutex_unlock(&f->mu);
}

void
lc_wfile_set_csum(struct lc_wfile *f, struct lc_csum *csum)
{
	pthread_mutex_lock(&f->mu);
	f->csum = csum;
	pthread_mutex_unlock(&f->mu);
}

struct lc_wfile *
lc_wfile_ref(struct lc_wfile *f)
{
	atomic_fetch_add(&f->refs, 1);
	return f;
}

void
lc_wfile_unref(struct lc_wfile *f)
{
	struct lc_wbuf *b;

	if (f == NULL || atomic_fetch_sub(&f->refs, 1) != 1)
		return;
	/* the last one: nobody can submit any more */
	while ((b = TAILQ_FIRST(&f->pending)) != NULL) {
		TAILQ_REMOVE(&f->pending, b, link);
		lc_wfile_drop(f, b);
	}
	pthread_cond_destroy(&f->cv);
	pthread_mutex_destroy(&f->mu);
	free(f->spans);
	free(f->errinfo);
	free(f->name);
	free(f);
}

/* Nothing is written from now on; the waiting blocks go back.  Under mu. */
static void
lc_wfile_shut_locked(struct lc_wfile *f)
{
	struct lc_wbuf *b;

	f->closed = 1;
	while ((b = TAILQ_FIRST(&f->pending)) != NULL) {
		TAILQ_REMOVE(&f->pending, b, link);
		if (b->hole)
			f->holes--;
		lc_wfile_drop(f, b);
	}
}

uint64_t
lc_wfile_close(struct lc_wfile *f)
{
	uint64_t written;

	pthread_mutex_lock(&f->mu);
	f->closing = 1;
	while (f->draining)
		pthread_cond_wait(&f->cv, &f->mu);
	lc_wfile_shut_locked(f);
	written = f->next;
	pthread_mutex_unlock(&f->mu);
	return written;
}

int
lc_wfile_close_unwritten(struct lc_wfile *f, uint64_t first)
{
	int ok;

	pthread_mutex_lock(&f->mu);
	ok = !f->draining && f->next == first;
	if (ok)
		lc_wfile_shut_locked(f);
	pthread_mutex_unlock(&f->mu);
	return ok;
}

void
lc_wfile_free(struct lc_wfile *f)
{
	if (f == NULL)
		return;
	(void)lc_wfile_close(f);
	lc_wfile_unref(f);
}
