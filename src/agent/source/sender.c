/*
 * The source's senders: one thread per data stream.
 *
 * A sender dials its stream (connect, TLS handshake, key proof:
 * lc_stream_dial), then loops: take the next block from the dispenser,
 * pread(2) it straight into its frame buffer behind the header (a hole is
 * a HOLE frame, header only), feed the file's checksum (in order, -e), pay
 * the rate limiter (-x), send header and payload with one call.  Small
 * blocks (small files) are coalesced: several whole frames, one write.  A
 * sent block is kept (as a descriptor, not data) until the sink's ACK
 * watermark passes it.  If the stream breaks
 * (reset, integrity failure, or the sink gives up on it as stalled), the
 * sink says which block it got last (STREAM_LOST), and the sender
 * reconnects and resends what came after, first, before taking new
 * blocks.  Resending on the same stream index rather than on the others
 * keeps every stream's blocks in increasing order, which the sink's
 * bounded ordered writer needs; the block the writer waits for arrives
 * first on the fresh connection.  When nothing is left and everything is
 * confirmed, the sender sends END.
 *
 * Invariant: file data goes out only through a struct lc_stream, which
 * only a successful handshake produces (see stream.h), so no byte of it is
 * ever sent on a connection that did not prove the transfer key, the
 * first one or a reconnect.  A reconnect is its own retry loop: dial
 * (every failure leaves no socket behind), and only then resend.
 *
 * Descriptors: the sender owns its connection (sn->st, or hs_fd during a
 * handshake); main only shuts it down, under the source's mutex.  The
 * source files are the dispenser's; senders pread(2) them.  A stream (a
 * pipe) is read by the source's reader thread into the dispenser's
 * buffers; its blocks come with their bytes, kept until released.  Senders report
 * to the main thread through lc_role_post() only.
 */
#include "source_int.h"

#include "aead.h"
#include "checksum.h"
#include "log.h"
#include "clock.h"
#include "zframe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/*
 * A first connect gives up soon: another path may work (SYNs at 0, 1 and
 * 3 s).  A reconnect too: while the path is gone each attempt's SYNs back
 * off (1 s, 3 s, 7 s ...), so a fresh attempt every few seconds gets
 * through soon after it is back.
 */
#define LC_FIRST_CONNECT_MS 7000
#define LC_RECONNECT_DIAL_MS 4000	/* one reconnect attempt */
#define LC_RECONNECT_FOR_MS 180000u	/* keep trying this long */
#define LC_ACCEPT_TIMEOUT_MS 60000	/* reverse: the sink dials us */
#define LC_MAX_RECONNECTS 12	/* per stream; the sink gives up first */
#define LC_RATE_SLICE (64u << 10)	/* -x: pay and send at most this */
#define LC_IDLE_MS 1000		/* heartbeat frame when idle this long */
#define LC_SMALL_BLOCK (64u << 10)	/* smaller blocks are coalesced */
#define LC_COALESCE_MAX (256u << 10)	/* frames in one write, at least */


/*
 * Read block b of its source file into p.  0, or -LC_ERR_IO with e filled
 * (the file shrank, or a read error with its errno).  A followed file's
 * block (zfill) that reads short is zeros past the end read.
 */
static int
lc_sender_pread(const struct lc_block *b, uint8_t *p, struct lc_err *e)
{
	size_t got = 0;

	if (b->data != NULL) {	/* a stream's block, read already */
		memcpy(p, b->data, b->len);
		return 0;
	}
	while (got < b->len) {
		ssize_t n = pread(b->fd, p + got, b->len - got,
		    (off_t)(b->offset + got));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return lc_err_sys(e, LC_ERR_IO, errno, "read source "
			    "file %u at offset %llu", b->file_id,
			    (unsigned long long)b->offset);
		}
		if (n == 0 && b->zfill) {
			/* a followed file: a hole its writer skipped and
			   has not extended over yet (dispenser.h) */
			memset(p + got, 0, b->len - got);
			break;
		}
		if (n == 0)
			return lc_err_set(e, LC_ERR_IO, "source file %u shrank "
			    "during the copy (at offset %llu)", b->file_id,
			    (unsigned long long)b->offset);
		got += (size_t)n;
	}
	return 0;
}

/* Keep a sent block until the sink confirms it (under s->mu). */
static int
lc_sender_keep(struct lc_sender *sn, const struct lc_block *b)
{
	struct lc_sent *l = &sn->sent;

	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 64;
		struct lc_block *v = realloc(l->v, ncap * sizeof(*v));
		if (v == NULL)
			return -LC_ERR_NOMEM;
		l->v = v;
		l->cap = ncap;
	}
	l->v[l->n++] = *b;
	return 0;
}

/*
 * Send a frame.  Under -x, in slices paid to the rate limiter one by one,
 * so that every stream trickles steadily instead of sleeping and then
 * bursting a whole block (which would look like a stall).
 */
static int
lc_sender_write(struct lc_sender *sn, struct lc_stream *st, const uint8_t *p,
    size_t n, struct lc_err *e)
{
	struct lc_source *s = sn->src;
	size_t slice;
	int r;

	size_t max;

	if (s->send.rate.rate == 0)
		return lc_stream_write(st, p, n, e);
	/* about four slices a second per stream, 1 KiB to 64 KiB */
	max = (size_t)(s->send.rate.rate / s->nstreams / 4);
	max = max < 1024 ? 1024 : max > LC_RATE_SLICE ? LC_RATE_SLICE : max;
	for (; n > 0; p += slice, n -= slice) {
		slice = n < max ? n : max;
		if (lc_rate_take(&s->send.rate, slice, &sn->stop) != 0)
			return lc_err_set(e, LC_ERR_CANCELED, "stopped");
		if ((r = lc_stream_write(st, p, slice, e)) != 0)
			return r;
	}
	return 0;
}

/*
 * Put block b's frame at p: the header, then the data read from the file
 * (a hole is a header alone); feed the file's checksum (over the raw
 * bytes) and keep the block.  With -c the data is deflated in place when
 * it shrinks enough (zframe.h), else it goes raw.  *n is the frame's size.
 * On failure the block is released.
 */
static int
lc_sender_frame(struct lc_sender *sn, uint8_t *p, struct lc_block *b,
    size_t *n, struct lc_err *e)
{
	struct lc_source *s = sn->src;
	char sum[LC_CSUM_TEXT_MAX];
	struct lc_frame fr;
	int r, done, kr;

	if (!b->hole &&
	    (r = lc_sender_pread(b, p + LC_FRAME_HDR_LEN, e)) != 0) {
		lc_dispenser_release(s->disp, b);
		return r;
	}
	if (lc_dispenser_hash(s->disp, b, p + LC_FRAME_HDR_LEN, &done,
	    sum) != 0) {	/* the transfer is being torn down */
		lc_dispenser_release(s->disp, b);
		return lc_err_set(e, LC_ERR_CANCELED, "canceled");
	}
	if (done)
		lc_role_post_text(&s->port, LC_EV_SRC_SUM, b->file_id, 0, sum);
	memset(&fr, 0, sizeof(fr));
	fr.type = b->hole ? LC_FRAME_HOLE : LC_FRAME_DATA;
	fr.file_id = b->file_id;
	fr.offset = b->offset;
	fr.len = b->hole ? 0 : b->len;
	fr.raw_len = b->len;
	if (!b->hole && sn->zdef != NULL) {
		const uint8_t *z;
		uint32_t zlen;
		if ((r = lc_zdef_block(sn->zdef, p + LC_FRAME_HDR_LEN, b->len,
		    &z, &zlen)) < 0) {
			lc_dispenser_release(s->disp, b);
			return lc_err_set(e, LC_ERR_INTERNAL, "deflate failed");
		}
		if (r == 1) {	/* zlen < b->len: it fits where the data was */
			memcpy(p + LC_FRAME_HDR_LEN, z, zlen);
			fr.flags = LC_FRAME_F_ZLIB;
			fr.len = zlen;
		}
	}
	lc_frame_put(p, &fr);
	/*
	 * Keep the block before it goes out: sent or not, the sink decides
	 * what it got, and an ACK that covers it can arrive before the write
	 * returns (kept after, the block would wait for the next ACK).
	 */
	pthread_mutex_lock(&s->mu);
	kr = lc_sender_keep(sn, b);
	pthread_mutex_unlock(&s->mu);
	if (kr != 0) {
		lc_dispenser_release(s->disp, b);
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	}
	*n = LC_FRAME_HDR_LEN + (size_t)fr.len;
	return 0;
}

static int
lc_sender_send(struct lc_sender *sn, struct lc_stream *st, uint8_t *buf,
    struct lc_block *b, struct lc_err *e)
{
	size_t n, out;
	int r;

	if ((r = lc_sender_frame(sn, buf, b, &n, e)) != 0)
		return r;
	if ((r = lc_stream_seal(st, buf, LC_FRAME_HDR_LEN, n, &out, e)) != 0)
		return r;
	r = lc_sender_write(sn, st, buf, out, e);
	if (r == 0 && !b->hole) {
		/* bytes first: a reader that loads wire first sees wire <=
		 * bytes */
		atomic_fetch_add(&sn->src->send.bytes_sent, b->len);
		atomic_fetch_add(&sn->src->send.wire_sent,
		    n - LC_FRAME_HDR_LEN);
	}
	return r;
}

/*
 * Block b is small (a hole, or data under LC_SMALL_BLOCK): put it and the
 * small blocks right after it that are there for the taking into buf, as
 * whole frames, up to cap bytes, and send them with one write.  A larger
 * block stays in the dispenser for the next turn.  Many small files then
 * cost one write (and one TLS record or so) per cap bytes, not per file.
 */
static int
lc_sender_batch(struct lc_sender *sn, struct lc_stream *st, uint8_t *buf,
    size_t cap, struct lc_block *b, struct lc_err *e)
{
	struct lc_source *s = sn->src;
	struct lc_block nb = *b;
	uint64_t payload = 0, wire = 0;
	size_t used = 0, n, out, room;
	uint32_t max;
	int r;

	for (;;) {
		/* a failure here ends the transfer: the kept blocks of the
		 * batch go with it.  Each frame is its own AEAD message,
		 * sealed in the order the batch is written. */
		if ((r = lc_sender_frame(sn, buf + used, &nb, &n, e)) != 0 ||
		    (r = lc_stream_seal(st, buf + used, LC_FRAME_HDR_LEN, n,
		    &out, e)) != 0)
			return r;
		used += out;
		if (!nb.hole) {
			payload += nb.len;
			wire += n - LC_FRAME_HDR_LEN;
		}
		if (cap - used < LC_FRAME_HDR_LEN + LC_AEAD_TAG_LEN)
			break;
		room = cap - used - LC_FRAME_HDR_LEN - LC_AEAD_TAG_LEN;
		max = room < LC_SMALL_BLOCK ? (uint32_t)room :
		    LC_SMALL_BLOCK - 1;
		if (lc_dispenser_try_small(s->disp, &nb, &sn->stop, max) != 1)
			break;
	}
	r = lc_sender_write(sn, st, buf, used, e);
	/*
	 * Counted even when the write fails: the sink may have got some of
	 * the batch, and what it got is not sent again (what it did not get
	 * is, and counts again, like every resend).
	 */
	atomic_fetch_add(&s->send.bytes_sent, payload);
	atomic_fetch_add(&s->send.wire_sent, wire);
	return r;
}

/*
 * After a reconnect: the blocks the sink did not get, in order, before
 * anything new.  Blocks up to the sink's last are on their way to disk:
 * released.  On a new failure the unsent rest is kept for the next round.
 */
static int
lc_sender_resend(struct lc_sender *sn, struct lc_stream *st, uint8_t *buf,
    struct lc_err *e)
{
	struct lc_source *s = sn->src;
	struct lc_block *v;
	size_t n = 0, i;
	int r = 0;

	pthread_mutex_lock(&s->mu);
	v = sn->sent.v;
	for (size_t j = 0; j < sn->sent.n; j++) {
		if (sn->has_last && lc_block_cmp(v[j].file_id, v[j].offset,
		    sn->last_file, sn->last_off) <= 0)
			lc_dispenser_release(s->disp, &v[j]);
		else
			v[n++] = v[j];
	}
	/* take the list: lc_sender_send puts each block back as it goes */
	sn->sent.v = NULL;
	sn->sent.n = sn->sent.cap = 0;
	sn->lost = 0;
	pthread_mutex_unlock(&s->mu);
	if (n > 0)
		lc_log_verbose("resending %zu block%s", n, n == 1 ? "" : "s");
	for (i = 0; i < n && r == 0; i++)
		r = lc_sender_send(sn, st, buf, &v[i], e);
	if (r != 0 && i < n) {	/* v[i - 1] was kept by lc_sender_send */
		pthread_mutex_lock(&s->mu);
		for (; i < n; i++)
			if (lc_sender_keep(sn, &v[i]) != 0)
				r = lc_err_set(e, LC_ERR_NOMEM, "out of memory");
		pthread_mutex_unlock(&s->mu);
	}
	free(v);
	return r;
}

/* An IDLE or END frame (header only, sealed when encrypted). */
static int
lc_sender_empty(struct lc_stream *st, uint8_t *buf, uint8_t type,
    struct lc_err *e)
{
	struct lc_frame fr;
	size_t out;
	int r;

	memset(&fr, 0, sizeof(fr));
	fr.type = type;
	lc_frame_put(buf, &fr);
	if ((r = lc_stream_seal(st, buf, LC_FRAME_HDR_LEN, LC_FRAME_HDR_LEN,
	    &out, e)) != 0)
		return r;
	return lc_stream_write(st, buf, out, e);
}

static int
lc_sender_loop(struct lc_sender *sn, struct lc_stream *st, uint8_t *buf,
    size_t cap, struct lc_err *e)
{
	struct lc_block b;
	int r;

	for (;;) {
		r = lc_dispenser_next(sn->src->disp, &b, &sn->stop,
		    LC_IDLE_MS);
		if (r == -LC_ERR_TIMEOUT) {
			/* nothing to send now: tell the sink we are alive */
			if ((r = lc_sender_empty(st, buf, LC_FRAME_IDLE,
			    e)) != 0)
				return r;
			continue;
		}
		if (r < 0)
			return lc_err_set(e, LC_ERR_CANCELED, "canceled");
		if (r == 0)
			return lc_sender_empty(st, buf, LC_FRAME_END, e);
		if (b.hole || b.len < LC_SMALL_BLOCK)
			r = lc_sender_batch(sn, st, buf, cap, &b, e);
		else
			r = lc_sender_send(sn, st, buf, &b, e);
		if (r != 0)
			return r;
	}
}

/* lc_dial.pending: publish the socket in its handshake for cancels. */
static void
lc_sender_pending(void *arg, int fd)
{
	struct lc_sender *sn = arg;

	pthread_mutex_lock(&sn->src->mu);
	sn->hs_fd = fd;
	if (fd >= 0)
		sn->reached = 1;	/* TCP connected: a handshake follows */
	/* an abort that ran before we got here did not see the socket */
	if (fd >= 0 && lc_role_canceled(&sn->src->port))
		(void)shutdown(fd, SHUT_RDWR);
	pthread_mutex_unlock(&sn->src->mu);
}

/*
 * Dial the stream (connect within timeout_ms), handshake, prove the key.
 * On success sn->st is set (the only place that sets it); on failure
 * nothing is left open, and sn->reached says whether TCP got through.
 */
static int
lc_sender_connect(struct lc_sender *sn, int timeout_ms, struct lc_err *e)
{
	struct lc_source *s = sn->src;
	struct lc_stream *st = NULL;
	struct lc_dial d;
	int r;

	memset(&d, 0, sizeof(d));
	d.addr = s->send.addr;
	d.port = s->send.ports[sn->idx];
	d.window = s->send.window;
	d.idx = sn->idx;
	d.key = s->send.key;
	d.tls = s->send.tls;
	d.connect_timeout_ms = timeout_ms;
	sn->reached = 0;
	d.cancel = s->port.cancel;
	d.pending = lc_sender_pending;
	d.arg = sn;
	if (s->flags & LC_XFER_REVERSE) {
		/* the sink dials in; over the controller's SSH connections
		 * that can take a while to set up */
		d.accept = 1;
		d.listen_fd = sn->listen_fd;
		d.connect_timeout_ms = LC_ACCEPT_TIMEOUT_MS;
	}
	if ((r = lc_stream_dial(&d, &st, e)) != 0)
		return r;
	pthread_mutex_lock(&s->mu);
	sn->st = st;
	pthread_mutex_unlock(&s->mu);
	sn->sndbuf = lc_stream_sndbuf(st);
	return 0;
}

/* 1 if r is a broken connection worth reconnecting, 0 if fatal. */
static int
lc_sender_recoverable(int r)
{
	return r == -LC_ERR_STREAM || r == -LC_ERR_INTEGRITY ||
	    r == -LC_ERR_TIMEOUT || r == -LC_ERR_EOF || r == -LC_ERR_CANCELED;
}

/*
 * The connection broke.  Wait for the sink's account of what it got
 * (STREAM_LOST), then drop the connection.  0, or -LC_ERR_CANCELED.
 */
static int
lc_sender_wait_lost(struct lc_sender *sn)
{
	struct lc_source *s = sn->src;

	pthread_mutex_lock(&s->mu);
	lc_stream_shutdown(sn->st);	/* so the sink notices too */
	while (!sn->lost && !lc_role_canceled(&s->port))
		pthread_cond_wait(&s->cv, &s->mu);
	lc_stream_free(sn->st);
	sn->st = NULL;
	pthread_mutex_unlock(&s->mu);
	atomic_store(&sn->stop, false);
	return lc_role_canceled(&s->port) ? -LC_ERR_CANCELED : 0;
}

/*
 * Back off before the k-th attempt (k >= 1): 0.1 s, 0.2 s, ... 1.6 s.
 * -LC_ERR_CANCELED when the transfer is torn down meanwhile.
 */
static int
lc_sender_backoff(struct lc_sender *sn, int k)
{
	struct lc_source *s = sn->src;
	struct timespec ts;
	int r = 0;

	/* s->cv waits on CLOCK_MONOTONIC (lc_source_new) */
	lc_deadline(CLOCK_MONOTONIC, 100 << (k - 1 < 4 ? k - 1 : 4), &ts);
	pthread_mutex_lock(&s->mu);
	while (!lc_role_canceled(&s->port) && r != ETIMEDOUT)
		r = pthread_cond_timedwait(&s->cv, &s->mu, &ts);
	pthread_mutex_unlock(&s->mu);
	return lc_role_canceled(&s->port) ? -LC_ERR_CANCELED : 0;
}

/*
 * Reconnect after a break: back off, dial, until a dial succeeds.  Every
 * attempt counts against the same bound as the breaks (*breaks); a failed
 * attempt has already closed its socket, and nothing is sent before a
 * dial has succeeded.  0 with sn->st set, or an error for the transfer.
 */
static int
lc_sender_reconnect(struct lc_sender *sn, int *breaks, struct lc_err *e)
{
	struct lc_source *s = sn->src;
	struct lc_err last;
	uint64_t t0 = lc_now_ms();
	int r, tries = 0;

	for (;;) {
		if ((r = lc_sender_backoff(sn, tries + 1)) != 0)
			return lc_err_set(e, LC_ERR_CANCELED, "canceled");
		lc_err_clear(&last);
		r = lc_sender_connect(sn, LC_RECONNECT_DIAL_MS, &last);
		if (r == 0)
			return 0;
		tries++;
		if (lc_role_canceled(&s->port) || !lc_sender_recoverable(r)) {
			*e = last;
			return r;
		}
		/*
		 * Someone answered and failed the handshake (an impostor, or
		 * a broken peer): that counts against the bound on breaks.
		 * Nobody answered: an outage; keep dialling, each attempt a
		 * fresh SYN, for up to LC_RECONNECT_FOR_MS.
		 */
		if (sn->reached && ++*breaks > LC_MAX_RECONNECTS)
			return lc_err_set(e, LC_ERR_STREAM, "data stream %u: "
			    "reconnect failed %d time%s, giving up (last: %s)",
			    sn->idx, tries, tries == 1 ? "" : "s", last.msg);
		if (lc_now_ms() - t0 > LC_RECONNECT_FOR_MS)
			return lc_err_set(e, LC_ERR_STREAM, "data stream %u: "
			    "reconnect failed %d time%s in %u s, giving up "
			    "(last: %s)", sn->idx, tries, tries == 1 ? "" : "s",
			    LC_RECONNECT_FOR_MS / 1000, last.msg);
		if (tries == 1)
			lc_log_warn("reconnect failed, retrying: %s",
			    last.msg);
		else
			lc_log_debug("reconnect failed, retrying: %s",
			    last.msg);
	}
}

void *
lc_sender_main(void *arg)
{
	struct lc_sender *sn = arg;
	struct lc_source *s = sn->src;
	const struct lc_role_port *port = &s->port;
	struct lc_err e;
	uint8_t *buf = NULL;
	size_t cap;
	char tag[32];
	int r, breaks = 0;

	snprintf(tag, sizeof(tag), "stream %u", sn->idx);
	lc_log_set_tag(tag);
	lc_err_clear(&e);
	/* one whole block and its tag, or several small frames
	 * (lc_sender_batch) */
	cap = LC_FRAME_HDR_LEN + (size_t)s->block + LC_AEAD_TAG_LEN;
	if (cap < LC_COALESCE_MAX)
		cap = LC_COALESCE_MAX;
	if ((buf = malloc(cap)) == NULL) {
		r = lc_err_set(&e, LC_ERR_NOMEM, "out of memory");
		goto out;
	}
	/* -c: deflate state and one block of scratch, this sender's own */
	if (s->send.zlevel != 0 && lc_zdef_new((int)s->send.zlevel, s->block,
	    &sn->zdef) != 0) {
		r = lc_err_set(&e, LC_ERR_NOMEM, "out of memory (deflate)");
		goto out;
	}
	/*
	 * The first connection must work.  One that cannot be made at all
	 * says the data path is blocked (a firewall, NAT): LC_ERR_NOPATH,
	 * so that the controller can try another path.
	 */
	r = lc_sender_connect(sn, LC_FIRST_CONNECT_MS, &e);
	if (r == -LC_ERR_STREAM) {
		e.code = LC_ERR_NOPATH;	/* the message stays */
		r = -LC_ERR_NOPATH;
	}
	if (r != 0)
		goto out;
	lc_log_debug("connected to %s", lc_stream_peer(sn->st));
	lc_role_post(port, LC_EV_STREAM_UP, sn->idx, 0, NULL);
	for (;;) {
		/* here, and only here, sn->st is an authenticated stream */
		r = lc_sender_resend(sn, sn->st, buf, &e);
		if (r == 0)
			r = lc_sender_loop(sn, sn->st, buf, cap, &e);
		if (r == 0 || lc_role_canceled(port) ||
		    !lc_sender_recoverable(r))
			break;
		if (++breaks > LC_MAX_RECONNECTS) {
			r = lc_err_set(&e, LC_ERR_STREAM, "data stream %u broke "
			    "%d times; giving up (last: %s)", sn->idx, breaks,
			    e.msg);
			break;
		}
		if (!atomic_load(&sn->stop))
			lc_role_post(port, LC_EV_SENDER_FAILED, sn->idx, 0, &e);
		if ((r = lc_sender_wait_lost(sn)) != 0)
			break;
		if ((r = lc_sender_reconnect(sn, &breaks, &e)) != 0)
			break;
		lc_log_verbose("reconnected to %s", lc_stream_peer(sn->st));
	}
 out:
	if (r != 0 && !lc_role_canceled(port))
		lc_role_post(port, LC_EV_ERROR, sn->idx, 0, &e);
	lc_role_post(port, LC_EV_SENDER_DONE, sn->idx, r == 0, NULL);
	lc_zdef_free(sn->zdef);
	sn->zdef = NULL;
	free(buf);
	return NULL;
}
