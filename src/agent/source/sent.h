/*
 * A sender's kept blocks: sent on its stream and not yet confirmed by the
 * sink's ACK watermark, in sending order, so that after a broken stream
 * the blocks the sink did not get can be sent again (sender.c).
 *
 * The dispenser may hand a small file's block out ahead of a bigger
 * file's (dispenser.h), so sending order is not (file id, offset) order:
 * a block the watermark passes may have been sent after one it does not
 * pass.  Such a block is released at once but stays in the list as a
 * marker (gone) while a block sent before it is kept: if the stream
 * breaks, the sink names the last block it got (STREAM_LOST), and every
 * kept block is then either before it (arrived) or after it (to send
 * again), which only its place in the list tells.
 *
 * Not thread safe: the caller holds the source's mutex.
 */
#ifndef LANECP_SENT_H
#define LANECP_SENT_H

#include <stddef.h>
#include <stdint.h>

#include "dispenser.h"

struct lc_sent {
	struct lc_block *v; /* kept blocks and markers, in sending order */
	size_t n;
	size_t cap;
};

/* Keep a block just sent.  0 or -LC_ERR_NOMEM. */
int lc_sent_keep(struct lc_sent *l, const struct lc_block *b);

/*
 * The sink's watermark: every block before (file, written) in (file id,
 * offset) order is on disk.  Releases those blocks to d, keeps markers
 * where a block sent before them is still kept, drops the others.
 */
void lc_sent_ack(struct lc_sent *l, struct lc_dispenser *d, uint32_t file,
    uint64_t written);

/*
 * After a broken stream: how many entries at the front of the list were
 * sent no later than the sink's last whole block (file, off), i.e.
 * arrived.  0 when the sink got none (has_last 0) or when that block is
 * no longer listed (it was sent before every entry).
 */
size_t lc_sent_arrived(const struct lc_sent *l, int has_last, uint32_t file,
    uint64_t off);

/* Release every kept block (not the markers) to d and empty the list. */
void lc_sent_release_all(struct lc_sent *l, struct lc_dispenser *d);

#endif
