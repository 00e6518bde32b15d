/*
 * The sink's offset-ordered writer and the per-stream buffer quotas.
 *
 * Design.  Each receiver thread owns a pool of `quota` block buffers.  It
 * takes a buffer from its own pool, reads a block into it and submits it to
 * the file's writer.  The writer writes blocks strictly in offset order, so
 * the file on disk is always a valid prefix (resume continues from its
 * length; a resume that rewrites differing chunks in place takes those
 * first, lc_wfile_set_spans), writes are sequential, and non-seekable targets (/dev/null, a
 * FIFO) work unchanged.  A block that arrives early waits, sorted, in the
 * writer; its buffer stays charged to its stream's quota.
 *
 * Memory is bounded by streams x quota x block size, whatever the file
 * size.  Deadlock freedom: senders take blocks from one global order, so
 * each stream carries its blocks in increasing order.  The lowest block not
 * yet written is therefore the next block on some stream s, and every
 * earlier block of s is already written, so s holds no buffer and can
 * receive it.
 *
 * There is no writer thread: whichever receiver submits the block that
 * fills the gap becomes the drainer and writes every block that is now in
 * order (others keep receiving meanwhile); only one drainer per file runs
 * at a time.
 *
 * Holes (sparse files): a hole is a block that is already zero.  It takes
 * no pool buffer.  One the writer can take at once goes straight in; one
 * that must wait merges into a waiting hole it touches, or else takes a
 * small descriptor, LC_WFILE_HOLE_COST bytes charged to the sink's memory
 * budget (lc_wfile_set_budget, shared with its quota growth), up to
 * LC_WFILE_MAX_HOLES per file; past either the hole is not taken and its
 * stream waits for the writer to move (lc_wfile_submit_hole returns 1),
 * as for a quota.  This stays deadlock free for the reason above: the
 * lowest block not yet written is always taken.  Written in order like
 * any block: on a seekable target nothing is written (and the file is
 * extended with ftruncate(2) if it ends in a hole), on a non-seekable one
 * zeros are.  The checksum is fed zeros, and lc_wfile_written covers it.
 *
 * Lifetime: a writer is reference counted.  Its file's record owns the
 * reference lc_wfile_new gives; a receiver takes one of its own for each
 * frame (lc_wfile_ref, under the lock the writer was looked up under) and
 * drops it when done, so the record can be freed (the file finished or
 * dropped) while a receiver still waits for a frame's payload.  Before
 * the file's descriptor is closed the owner closes the writer
 * (lc_wfile_close: nothing is written after it); a block that comes
 * later, through a reference still held, is a protocol error.
 */
#ifndef LANECP_WRITER_H
#define LANECP_WRITER_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/queue.h>

#include "checksum.h"
#include "err.h"

struct lc_pool;

struct lc_wbuf {
	/* in the pool's free list or a file's pending list (writer.c) */
	TAILQ_ENTRY(lc_wbuf) link;
	struct lc_pool *pool;
	uint64_t off;
	uint32_t len;
	uint8_t *data;		/* capacity: the pool's buffer size; NULL for
				   a hole */
	uint8_t hole;		/* zeros, no data (pool NULL) */
	uint8_t charged;	/* a hole charged to its writer's budget */
};

/* A list of blocks: a pool's free list, a writer's waiting blocks. */
TAILQ_HEAD(lc_wbuf_q, lc_wbuf);

/*
 * A pool of count buffers of size bytes (allocated on first use, so an
 * idle stream costs no memory).  0, -LC_ERR_NOMEM or -LC_ERR_INTERNAL.
 */
int lc_pool_new(uint32_t count, uint32_t size, struct lc_pool **out);
/* Take a buffer, waiting until one is free; NULL after lc_pool_abort or
 * when memory runs out. */
struct lc_wbuf *lc_pool_get(struct lc_pool *p);
/*
 * The same, but wait at most ms milliseconds (0: do not wait); NULL on
 * timeout too (lc_pool_aborted tells the cases apart).
 */
struct lc_wbuf *lc_pool_get_timed(struct lc_pool *p, int ms);
int lc_pool_aborted(struct lc_pool *p);
/*
 * A buffer outside any quota, for a block that can be written at once (it
 * comes back to the spare slot of its owner when put back).  Each
 * receiver has one, so the block the writer waits for is never stuck
 * behind full quotas, e.g. when blocks lost on a dead stream come back on
 * another one.  NULL when memory runs out.
 */
struct lc_wbuf *lc_pool_spare(struct lc_pool *p);
/* Give a buffer back (a hole's descriptor is freed). */
void lc_pool_put(struct lc_wbuf *b);
/* Wake and fail every waiter, now and later. */
void lc_pool_abort(struct lc_pool *p);
/* Buffers currently allocated (for memory accounting in tests). */
uint32_t lc_pool_allocated(struct lc_pool *p);
/*
 * One more buffer in the quota (taken lazily, as the others), and wake a
 * waiter.  1 if grown; 0 when the quota is already `max` (the caller
 * holds the sink-wide allowance, see sink_mem.c).
 */
int lc_pool_grow(struct lc_pool *p, uint32_t max);
/* The quota now. */
uint32_t lc_pool_quota(struct lc_pool *p);
/* Free the pool; every buffer must have been put back. */
void lc_pool_free(struct lc_pool *p);

struct lc_wfile;

/*
 * Writer for bytes [start, end) of fd.  seekable: pwrite(2) at offsets,
 * else write(2) in order.  name is used in error messages.
 */
int lc_wfile_new(int fd, int seekable, uint64_t start, uint64_t end,
    const char *name, struct lc_wfile **out);

/*
 * Hand a filled buffer (b->off, b->len) to the writer; the buffer always
 * goes back to its pool eventually, whatever the result.  Returns 0 or the
 * file's first error: -LC_ERR_IO / -LC_ERR_NOSPACE from a write, or
 * -LC_ERR_PROTO for a block outside [start, end), below what is written
 * (or being written), overlapping another, or for a closed writer.
 * *complete is set to 1 by exactly one call: the one that wrote the last
 * byte.
 */
int lc_wfile_submit(struct lc_wfile *f, struct lc_wbuf *b, int *complete,
    struct lc_err *e);

/*
 * The same for a hole of len zero bytes at off (no buffer needed), and 1
 * when it cannot be taken now (nothing done): it would wait and the
 * budget or the file's LC_WFILE_MAX_HOLES waiting holes are used up; try
 * again once the writer has moved.  A hole at the written offset, or one
 * that merges into a waiting hole, is always taken.  Also -LC_ERR_NOMEM
 * when its descriptor cannot be allocated.
 */
#define LC_WFILE_MAX_HOLES 4096
/* What a waiting hole's descriptor costs: the struct and malloc's share. */
#define LC_WFILE_HOLE_COST 64
int lc_wfile_submit_hole(struct lc_wfile *f, uint64_t off, uint32_t len,
    int *complete, struct lc_err *e);

/*
 * Charge waiting holes to *budget (bytes left, shared with other writers
 * and the sink's quota growth; decremented and given back atomically).
 * Before any block is submitted; without it holes are bounded per file
 * only.
 */
void lc_wfile_set_budget(struct lc_wfile *f, atomic_int_fast64_t *budget);

/* Another reference to f (returned), for a receiver; see Lifetime. */
struct lc_wfile *lc_wfile_ref(struct lc_wfile *f);
/* Drop a reference; the last one frees f (NULL is fine). */
void lc_wfile_unref(struct lc_wfile *f);
/*
 * Stop writing: waits for a write in progress to end; afterwards nothing
 * is written and every submit is refused (-LC_ERR_PROTO), the waiting
 * blocks go back to their pools (holes to the budget).  Returns the
 * offset written up to (lc_wfile_written) at that point.  Idempotent.
 */
uint64_t lc_wfile_close(struct lc_wfile *f);
/*
 * The same, never waiting, and only if nothing of f has been written and
 * nothing is being written: the written offset is still first (FILE_ABORT:
 * the source says it sent nothing).  1 if closed; 0 if not, f left as it
 * is.
 */
int lc_wfile_close_unwritten(struct lc_wfile *f, uint64_t first);

/*
 * Streams (data of unknown length): end given to lc_wfile_new is only a
 * bound until lc_wfile_set_end says where the stream ended; no submit
 * completes the file before.
 */
void lc_wfile_open_end(struct lc_wfile *f);
/*
 * The stream ended at end.  0 with *complete = 1 if every byte is written
 * already (else the submit that writes the last byte completes it), or
 * -LC_ERR_PROTO: not an open stream, end beyond the bound, blocks
 * written or waiting beyond end, or a closed writer.
 */
int lc_wfile_set_end(struct lc_wfile *f, uint64_t end, int *complete);
/* 1 while f is a stream whose end is not known yet. */
int lc_wfile_is_open(struct lc_wfile *f);

/*
 * Resume with chunks to rewrite (before any block is submitted): the
 * writer takes spans[0..n) (in order, not overlapping, all below start)
 * and then [start, end), in that order, and nothing in between.  A hole
 * inside a span is written as zeros (the old bytes there are wrong).
 * 0, or -LC_ERR_NOMEM / -LC_ERR_PROTO for spans out of order or range.
 */
struct lc_span;
int lc_wfile_set_spans(struct lc_wfile *f, const struct lc_span *spans,
    uint32_t n);

/*
 * Offset up to which the file has been written (holes included): within
 * the spans while they are written, so the blocks before it are all done.
 */
uint64_t lc_wfile_written(struct lc_wfile *f);
/*
 * 1 when the file's writer is starved: nobody is writing it and the block
 * at the written offset has not come in (a slower stream still carries
 * it), so a stream waiting for a buffer is held up by another stream, not
 * by the disk.
 */
int lc_wfile_starved(struct lc_wfile *f);

/*
 * Feed everything written from now on, in order, to csum (owned by the
 * caller, which reads it once the file is complete).
 */
void lc_wfile_set_csum(struct lc_wfile *f, struct lc_csum *csum);

/*
 * Add every byte that reaches the file (in order: data, and holes, which
 * count whole) to *count, once it is written (the sink's bytes written).
 */
void lc_wfile_set_counter(struct lc_wfile *f, atomic_uint_fast64_t *count);

/*
 * The owner is done with f: lc_wfile_close, then its reference dropped
 * (NULL is fine).  Does not close fd.
 */
void lc_wfile_free(struct lc_wfile *f);

#endif
