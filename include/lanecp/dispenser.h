/*
 * The dispenser: hands out the next block of the next file to whichever
 * sender thread asks first (dynamic striping: a slow stream simply takes
 * fewer blocks).
 *
 * Blocks come out in one global order (files in the order they were
 * added, offsets ascending within a file), so every stream sees its own
 * blocks in increasing order; the sink's ordered writer relies on that for
 * deadlock freedom.  The dispenser owns each file's descriptor and closes
 * it when the last block of the file has been handed out and released.
 *
 * Thread safety: all functions may be called from any thread.
 */
#ifndef LANECP_DISPENSER_H
#define LANECP_DISPENSER_H

#include <stdint.h>

struct lc_dispenser;
struct lc_dfile;

struct lc_block {
	struct lc_dfile *file;	/* opaque, for lc_dispenser_release */
	uint32_t file_id;
	int fd;
	uint64_t offset;
	uint32_t len;
};

/* Returns NULL on allocation failure.  block > 0. */
struct lc_dispenser *lc_dispenser_new(uint32_t block);

/*
 * Queue file id for sending bytes [start, end) read from fd (ownership of
 * fd moves to the dispenser, even on failure).  0 or -LC_ERR_NOMEM /
 * -LC_ERR_INTERNAL (after lc_dispenser_finish).
 */
int lc_dispenser_add(struct lc_dispenser *d, uint32_t id, int fd,
    uint64_t start, uint64_t end);

/* No more files will be added. */
void lc_dispenser_finish(struct lc_dispenser *d);

/* Make every waiter and later call of lc_dispenser_next return canceled. */
void lc_dispenser_abort(struct lc_dispenser *d);

/*
 * Take the next block, waiting while the queue is empty and more files may
 * come.  Returns 1 with *b filled, 0 when everything has been handed out
 * after lc_dispenser_finish, -LC_ERR_CANCELED after lc_dispenser_abort.
 */
int lc_dispenser_next(struct lc_dispenser *d, struct lc_block *b);

/* The block has been sent (or abandoned); may close the file. */
void lc_dispenser_release(struct lc_dispenser *d, struct lc_block *b);

/* Bytes handed out so far. */
uint64_t lc_dispenser_dispensed(struct lc_dispenser *d);

/* Free everything, closing descriptors still held.  NULL is fine. */
void lc_dispenser_free(struct lc_dispenser *d);

#endif
