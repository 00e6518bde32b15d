/*
 * The dispenser: hands out the next block of the next file to whichever
 * sender thread asks first (dynamic striping: a slow stream simply takes
 * fewer blocks).
 *
 * Blocks come out in one global order (files in the order they were
 * added, offsets ascending within a file), so every stream sees its own
 * blocks in increasing order; the sink's ordered writer relies on that for
 * deadlock freedom.
 *
 * A block stays "outstanding" from lc_dispenser_next until it is released:
 * the sender keeps it after sending until the sink confirms it is written
 * (an ACK watermark), so that if its stream dies the sender can send it
 * again after reconnecting (source.c).  The dispenser owns each file's
 * descriptor and closes it when the file has been handed out completely
 * and every block of it released.
 *
 * End-to-end checksums: a file may carry a running checksum; senders feed
 * it in offset order through lc_dispenser_hash (a turnstile: the holder of
 * the next offset hashes, the others wait their turn).
 *
 * Sparse files: a file's data is found with lseek(2) SEEK_DATA/SEEK_HOLE
 * as its blocks are handed out (lazily: memory does not grow with the
 * number of holes).  A block is either data (len <= block size) or a hole
 * (a whole run of zeros without storage, at most LC_MAX_HOLE; holes
 * shorter than LC_HOLE_MIN between data go out as data).  Every byte of
 * [start, end) is in exactly one block.  Where SEEK_DATA is not supported,
 * everything is data.
 *
 * Followed files (issue 25, lc_dispenser_add_follow): a file the target
 * before is still writing; only [0, avail) is final, and avail only grows
 * (lc_dispenser_set_avail, by id: a late call for a file done with finds
 * nothing).  While its next block is not final the queue stops at it, as
 * at a stream with nothing read yet.  Dense, and its blocks carry zfill.
 *
 * Thread safety: all functions may be called from any thread.
 */
#ifndef LANECP_DISPENSER_H
#define LANECP_DISPENSER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "checksum.h"

struct lc_dispenser;
struct lc_dfile;
struct lc_pbuf;

struct lc_block {
	struct lc_dfile *file;	/* opaque, for release/hash */
	uint32_t file_id;
	int fd;			/* -1 for a stream's block: see data */
	uint64_t offset;
	uint32_t len;		/* bytes of the file the block covers */
	uint8_t hole;		/* 1: all zero, no data to read or send */
	uint8_t zfill;		/* a followed file's: a read that ends short
				   (EOF) is zeros to len (a hole the writer
				   skipped), not a file that shrank */
	const uint8_t *data;	/* a stream's block: its bytes, valid until
				   the block is released; else NULL */
	struct lc_pbuf *pbuf;	/* opaque: the buffer data is in */
};

/*
 * Streams (a pipe, a program's output): data of unknown length, read once
 * and in order by one reader thread (the caller's) into the dispenser's
 * stream buffers, at most `count` of one block each, and handed out as
 * blocks like a file's.  A buffer comes back when its block is released
 * (confirmed written), so a slow sink holds the reader back and memory
 * stays at count x block.  No checksum through lc_dispenser_hash: the
 * reader sees the bytes in order and hashes them itself.
 */
struct lc_pbuf {
	struct lc_pbuf *next;	/* free list or a stream's ready queue */
	uint64_t off;
	uint32_t len;
	uint8_t *data;		/* one block */
};

/*
 * Queue stream id (no descriptor: the caller reads).  Buffers of block
 * bytes, at most count of them at a time (count >= 1).  *out: the handle
 * for the calls below, until lc_dispenser_pipe_end.  0 or -LC_ERR_*.
 */
int lc_dispenser_add_pipe(struct lc_dispenser *d, uint32_t id,
    uint32_t count, struct lc_dfile **out);

/*
 * A free buffer to read into (len 0, capacity one block): waits until one
 * is free.  NULL after lc_dispenser_abort, when *stop is set, or when
 * memory runs out (*nomem set).
 */
struct lc_pbuf *lc_dispenser_pipe_buf(struct lc_dispenser *d,
    const atomic_bool *stop, int *nomem);

/* Append the filled buffer (b->len bytes, 1 .. block) to stream f. */
void lc_dispenser_pipe_push(struct lc_dispenser *d, struct lc_dfile *f,
    struct lc_pbuf *b);

/* An unused buffer back to the free list. */
void lc_dispenser_pipe_unused(struct lc_dispenser *d, struct lc_pbuf *b);

/* Stream f ended: its length is what was pushed.  f is not ours after. */
void lc_dispenser_pipe_end(struct lc_dispenser *d, struct lc_dfile *f);

/* Holes shorter than this between data are sent as data. */
#define LC_HOLE_MIN (64u << 10)

/* Returns NULL on allocation failure.  block > 0. */
struct lc_dispenser *lc_dispenser_new(uint32_t block);

/*
 * Queue file id for sending bytes [start, end) read from fd.  Ownership of
 * fd and csum (NULL: no checksum; else seeded with bytes [0, start)) moves
 * to the dispenser, even on failure.  If the range is empty and csum is
 * set, *sum receives the final checksum text at once (else "").
 * 0 or -LC_ERR_NOMEM / -LC_ERR_INTERNAL (after lc_dispenser_finish).
 */
int lc_dispenser_add(struct lc_dispenser *d, uint32_t id, int fd,
    uint64_t start, uint64_t end, struct lc_csum *csum,
    char sum[LC_CSUM_TEXT_MAX]);

/*
 * The same for a resume with chunks to rewrite: bytes spans[0..n) (in
 * order, not overlapping, below start; always sent as data, never as
 * holes) and then [start, end).  csum is seeded with [0, start): the
 * spans are not fed to it again.  Copies spans.
 */
struct lc_span;
int lc_dispenser_add_spans(struct lc_dispenser *d, uint32_t id, int fd,
    const struct lc_span *spans, uint32_t n, uint64_t start, uint64_t end,
    struct lc_csum *csum, char sum[LC_CSUM_TEXT_MAX]);

/*
 * The same for a followed file (SRC_PART: read from a part file the
 * target before is still writing): only bytes [0, avail) are final.  No
 * block is handed out that would end past avail (unless it ends at the
 * file's end and avail is that end): the senders wait for
 * lc_dispenser_set_avail().  Never probed for holes (its unwritten tail
 * reads as one); its blocks carry zfill.
 */
int lc_dispenser_add_follow(struct lc_dispenser *d, uint32_t id, int fd,
    const struct lc_span *spans, uint32_t n, uint64_t start, uint64_t end,
    uint64_t avail, struct lc_csum *csum, char sum[LC_CSUM_TEXT_MAX]);

/*
 * Raise followed file id's avail (never lowers it) and wake the senders.
 * 1 when done (or avail is what it was); 0 when no followed file id is
 * held (never added, or handed out and released entirely); -LC_ERR_PROTO
 * when avail is below its current one or past its end (*cur and *end
 * say what they are).
 */
int lc_dispenser_set_avail(struct lc_dispenser *d, uint32_t id,
    uint64_t avail, uint64_t *cur, uint64_t *end);

/* No more files will be added. */
void lc_dispenser_finish(struct lc_dispenser *d);

/* Make every waiter and later call of lc_dispenser_next return canceled. */
void lc_dispenser_abort(struct lc_dispenser *d);

/*
 * Take the next block of the queue.  Waits while there is nothing to hand
 * out and more may come (before lc_dispenser_finish), and after it until
 * every outstanding block has been released.  Returns 1 with *b filled, 0
 * when everything has been handed out and released after
 * lc_dispenser_finish, -LC_ERR_CANCELED after lc_dispenser_abort or
 * when *stop (if given) is true, -LC_ERR_TIMEOUT when timeout_ms (if >= 0)
 * passed with nothing to hand out.
 */
int lc_dispenser_next(struct lc_dispenser *d, struct lc_block *b,
    const atomic_bool *stop, int timeout_ms);

/*
 * Take the next block without waiting, but only if it is small: a hole, or
 * data of at most max_len bytes.  Returns 1 with *b filled, 0 when the
 * next block is larger or there is none right now, -LC_ERR_CANCELED as
 * lc_dispenser_next.
 */
int lc_dispenser_try_small(struct lc_dispenser *d, struct lc_block *b,
    const atomic_bool *stop, uint32_t max_len);

/* Wake every waiter in lc_dispenser_next to look at its stop flag. */
void lc_dispenser_kick(struct lc_dispenser *d);

/*
 * Feed the block's data (zeros for a hole, data unused) to its file's
 * checksum in offset order: waits until every earlier byte has been fed.
 * A block fed before (sent again after a reconnect) is skipped.  When
 * this completes the file, *done is set and sum gets the checksum text.
 * No-op for files without a checksum.  Returns 0 or -LC_ERR_CANCELED.
 */
int lc_dispenser_hash(struct lc_dispenser *d, const struct lc_block *b,
    const void *data, int *done, char sum[LC_CSUM_TEXT_MAX]);

/* The block is done with (confirmed written, or abandoned). */
void lc_dispenser_release(struct lc_dispenser *d, struct lc_block *b);

/* Bytes handed out so far (holes included). */
uint64_t lc_dispenser_dispensed(struct lc_dispenser *d);

/*
 * Global order of blocks: negative, zero or positive as (fa, oa) is
 * before, at or after (fb, ob).
 */
static inline int
lc_block_cmp(uint32_t fa, uint64_t oa, uint32_t fb, uint64_t ob)
{
	if (fa != fb)
		return fa < fb ? -1 : 1;
	return oa < ob ? -1 : oa > ob ? 1 : 0;
}

/* Free everything, closing descriptors still held.  NULL is fine. */
void lc_dispenser_free(struct lc_dispenser *d);

#endif
