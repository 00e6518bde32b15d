/*
 * The sink's receivers: one thread per data stream.
 *
 * A receiver waits (on the sink's condvar) until an auth thread hands it
 * an authenticated connection, then loops: frame header -> a buffer from
 * its own quota (or its spare, for the block the writer can take at once)
 * -> payload -> the file's ordered writer (writer.h); a HOLE frame goes to
 * the writer without a buffer.  It holds a reference to the writer from
 * the header to the end of the frame, so a file finished or dropped
 * meanwhile (FILE_ABORT, or completed by another stream) costs it only
 * a refused frame (a protocol error), never freed memory.  It remembers the
 * last whole block it got.  A compressed DATA frame (-c) is read into the
 * receiver's own input buffer (one block, lc_zinf) and inflated into the
 * pool buffer, capped at raw_len; a frame that is not exactly raw_len
 * bytes of one complete zlib stream is a protocol error and nothing of
 * it is written.  It owns its socket; main only shuts it down
 * (stall, abort) under the mutex, and closes it after joining the thread.
 * When the stream breaks (or main marks it stalled) it posts
 * LC_EV_STREAM_LOST and exits; the sink tells the source where it stopped,
 * and a new receiver thread takes the source's new connection for that
 * stream, on which the source resends the rest.  END ends it with
 * LC_EV_RECEIVER_DONE; anything else is LC_EV_ERROR.
 *
 * Main thread: starts the receivers (LISTEN), joins a lost one and
 * starts its successor (lc__sink_stream_lost), watches for stalled and
 * silent streams once a second (lc__sink_recv_tick), and joins them and
 * frees their connections and pools at the end.  State: struct
 * lc_sink_recv (sink_int.h).
 */
#include "sink_int.h"

#include "clock.h"
#include "log.h"
#include "thread.h"
#include "zframe.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LC_MAX_STREAM_LOSSES 8	/* per stream: then the copy fails */

/*
 * A buffer for the block at off of f: from the stream's quota, or, when
 * the quota is used up, its spare if the writer can take the block at
 * once (so the block everything waits for is never stuck behind full
 * quotas).  NULL when canceled.
 */
static struct lc_wbuf *
lc_receiver_buffer(struct lc_receiver *rv, struct lc_wfile *wf, uint64_t off)
{
	struct lc_wbuf *b;

	if ((b = lc_pool_get_timed(rv->pool, 0)) != NULL)
		return b;
	atomic_store(&rv->state, LC_RV_QUOTA);
	lc__sink_quota_wait(rv->sink, 1);
	for (int ms = 10; b == NULL && !lc_pool_aborted(rv->pool); ms = 50) {
		if (lc_wfile_written(wf) == off)
			b = lc_pool_spare(rv->pool);
		if (b == NULL)
			b = lc_pool_get_timed(rv->pool, ms);
		/*
		 * Still none after 10 ms, and the writer idle for want of a
		 * block a slower stream carries: this stream would stop
		 * while the link has room.  Grow its quota, within the
		 * memory bound, if the path is one where that pays (a long
		 * round trip or losses; not a busy CPU on a short path: see
		 * sink_mem.c).  A slow disk keeps the writer busy, and grows
		 * nothing.
		 */
		if (b == NULL && lc_wfile_starved(wf) &&
		    lc__sink_quota_grow(rv->sink, rv))
			b = lc_pool_get_timed(rv->pool, 0);
	}
	lc__sink_quota_wait(rv->sink, 0);
	atomic_store(&rv->state, LC_RV_RECV);
	return b;
}

/*
 * A HOLE frame to the writer.  Holes take no buffer, but one that has to
 * wait in the writer takes memory: when the sink's budget (or the file's
 * share) is used up the writer does not take it, and the stream waits for
 * the writer to move, as for a quota (a source that sends endless holes
 * ahead of a block it never sends only stalls itself).  0 or an error.
 */
static int
lc_receiver_hole(struct lc_receiver *rv, struct lc_wfile *wf,
    const struct lc_frame *fr, int *complete, struct lc_err *e)
{
	struct lc_sink *s = rv->sink;
	int r;

	if ((r = lc_wfile_submit_hole(wf, fr->offset, fr->raw_len, complete,
	    e)) != 1)
		return r;
	atomic_store(&rv->state, LC_RV_QUOTA);
	if (!atomic_exchange(&s->mem.hole_wait_said, true))
		lc_log_verbose("data stream %u: holes waiting in the writers "
		    "reached the memory bound; the stream waits for the writer "
		    "to move", rv->idx);
	while ((r = lc_wfile_submit_hole(wf, fr->offset, fr->raw_len,
	    complete, e)) == 1) {
		if (lc_pool_aborted(rv->pool))
			return lc_err_set(e, LC_ERR_CANCELED, "canceled");
		(void)poll(NULL, 0, 20);
	}
	atomic_store(&rv->state, LC_RV_RECV);
	return r;
}

/*
 * Read a DATA frame's payload into b->data: as it is, or (LC_FRAME_F_ZLIB)
 * into the input buffer and inflated.  0 or an error for the stream.
 */
static int
lc_receiver_payload(struct lc_receiver *rv, const uint8_t *hdr,
    const struct lc_frame *fr, struct lc_wbuf *b, struct lc_err *e)
{
	int r;

	if (!(fr->flags & LC_FRAME_F_ZLIB))
		return lc_conn_read_rest(&rv->conn, hdr, LC_FRAME_HDR_LEN,
		    b->data, fr->len, e);
	if (rv->zinf == NULL &&
	    lc_zinf_new(rv->sink->block, &rv->zinf) != 0)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory (inflate)");
	/* len < raw_len <= block (lc_frame_get): fits the input buffer;
	 * the tag is checked before anything is inflated */
	if ((r = lc_conn_read_rest(&rv->conn, hdr, LC_FRAME_HDR_LEN,
	    lc_zinf_inbuf(rv->zinf), fr->len, e)) != 0)
		return r;
	if ((r = lc_zinf_block(rv->zinf, lc_zinf_inbuf(rv->zinf), fr->len,
	    b->data, fr->raw_len, e)) != 0) {
		char why[LC_ERR_MSG_MAX];
		snprintf(why, sizeof(why), "%s", e->msg);
		return lc_err_set(e, -r, "data stream %u: file %u at offset "
		    "%llu: %.*s", rv->idx, fr->file_id,
		    (unsigned long long)fr->offset, 300, why);
	}
	return 0;
}

/*
 * A frame the sink refuses (a header out of bounds, an unknown file,
 * compression not negotiated).  With --no-encrypt that is the peer's
 * protocol error.  On an encrypted stream the header is not authenticated
 * yet, so the frame is first read and its tag checked (into memory of its
 * own: this path ends the copy or the connection): a frame that passes is
 * the authenticated peer's protocol error, one that fails was changed in
 * transit (an integrity failure: the stream is dropped and its blocks
 * resent).  A header out of bounds (fr NULL) has no length to read by, so
 * on an encrypted stream it is an integrity failure.  Either way nothing
 * of the frame is written.
 */
static int
lc_receiver_refuse(struct lc_receiver *rv, const uint8_t *hdr,
    const struct lc_frame *fr, const char *why, struct lc_err *e)
{
	uint8_t *tmp;
	int r;

	if (!lc_conn_sealed(&rv->conn))
		return lc_err_set(e, LC_ERR_PROTO, "data stream %u: %s",
		    rv->idx, why);
	if (fr == NULL)
		return lc_err_set(e, LC_ERR_INTEGRITY, "data stream %u from %s "
		    "failed its integrity check (%s): data was changed in "
		    "transit", rv->idx, rv->conn.peer, why);
	if ((tmp = malloc(fr->len > 0 ? fr->len : 1)) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	r = lc_conn_read_rest(&rv->conn, hdr, LC_FRAME_HDR_LEN, tmp, fr->len,
	    e);
	free(tmp);
	if (r != 0)
		return r;
	return lc_err_set(e, LC_ERR_PROTO, "data stream %u: %s", rv->idx, why);
}

/* The writer refused a frame (-LC_ERR_PROTO): say which stream and file. */
static int
lc_receiver_refused(struct lc_receiver *rv, const struct lc_frame *fr, int r,
    struct lc_err *e)
{
	char why[LC_ERR_MSG_MAX];

	if (r != -LC_ERR_PROTO)
		return r;
	snprintf(why, sizeof(why), "%s", e->msg);
	return lc_err_set(e, LC_ERR_PROTO, "data stream %u: file %u: %.400s",
	    rv->idx, fr->file_id, why);
}

/*
 * A HOLE or DATA frame whose header hdr was read, for the file whose
 * writer is wf (a reference the caller holds until this returns: the
 * file may be finished or dropped meanwhile, and the writer then refuses
 * the frame).  0 or an error for the stream.
 */
static int
lc_receiver_frame(struct lc_receiver *rv, const uint8_t *hdr,
    const struct lc_frame *fr, struct lc_wfile *wf, struct lc_err *e)
{
	struct lc_sink *s = rv->sink;
	struct lc_wbuf *b;
	int r, complete;

	if (fr->type == LC_FRAME_HOLE) {
		rv->has_last = 1;
		rv->last_file = fr->file_id;
		rv->last_off = fr->offset;
		if ((r = lc_receiver_hole(rv, wf, fr, &complete, e)) != 0)
			return lc_receiver_refused(rv, fr, r, e);
		/* file bytes, for progress: a hole counts whole */
		atomic_fetch_add(&s->recv.bytes, fr->raw_len);
		if (complete)
			lc_role_post(&s->port, LC_EV_FILE_WRITTEN, fr->file_id,
			    0, NULL);
		return 0;
	}
	if ((b = lc_receiver_buffer(rv, wf, fr->offset)) == NULL)
		return lc_err_set(e, LC_ERR_CANCELED, "canceled");
	b->off = fr->offset;
	b->len = fr->raw_len;
	if ((r = lc_receiver_payload(rv, hdr, fr, b, e)) != 0) {
		/* a bad tag: the buffer goes back unwritten */
		lc_pool_put(b);
		if (r == -LC_ERR_EOF)
			r = lc_err_set(e, LC_ERR_STREAM, "data stream %u "
			    "closed in mid-frame", rv->idx);
		return r;
	}
	rv->has_last = 1;
	rv->last_file = fr->file_id;
	rv->last_off = fr->offset;
	if ((r = lc_wfile_submit(wf, b, &complete, e)) != 0)
		return lc_receiver_refused(rv, fr, r, e);
	atomic_fetch_add(&s->recv.bytes, fr->raw_len);
	if (complete)
		lc_role_post(&s->port, LC_EV_FILE_WRITTEN, fr->file_id, 0,
		    NULL);
	else if (fr->offset / LC_MARK_STEP != (fr->offset + fr->raw_len) /
	    LC_MARK_STEP)
		/* the mark moves on (LC_MARK_STEP) */
		lc_role_post(&s->port, LC_EV_STREAM_ACK, fr->file_id, 0,
		    NULL);
	return 0;
}

static int
lc_receiver_loop(struct lc_receiver *rv, struct lc_err *e)
{
	struct lc_sink *s = rv->sink;
	uint8_t hdr[LC_FRAME_HDR_LEN];
	struct lc_frame fr;
	struct lc_wfile *wf;
	int r;

	for (;;) {
		r = lc_conn_read_full(&rv->conn, hdr, sizeof(hdr), e);
		if (r == -LC_ERR_EOF)
			return lc_err_set(e, LC_ERR_STREAM, "data stream %u "
			    "from %s closed before the end of the transfer",
			    rv->idx, rv->conn.peer);
		if (r != 0)
			return r;
		if (lc_frame_get(hdr, s->block, &fr) != 0)
			return lc_receiver_refuse(rv, hdr, NULL,
			    "malformed frame header", e);
		/*
		 * Frames without payload are authenticated (their tag read
		 * and checked) before they mean anything: an END that fails
		 * is no end, and EOF before END is an error.
		 */
		if (fr.type != LC_FRAME_DATA && (r = lc_conn_read_rest(
		    &rv->conn, hdr, sizeof(hdr), NULL, 0, e)) != 0)
			return r;
		if (fr.type == LC_FRAME_END)
			return 0;
		if (fr.type == LC_FRAME_IDLE)
			continue;	/* the source has nothing right now */
		if ((fr.flags & LC_FRAME_F_ZLIB) &&
		    !(s->flags & LC_XFER_COMPRESS))
			return lc_receiver_refuse(rv, hdr, &fr, "compressed "
			    "frame, but compression was not negotiated", e);
		if ((wf = lc_sink_writer(s, fr.file_id)) == NULL) {
			char why[64];
			snprintf(why, sizeof(why), "data for unknown file %u",
			    fr.file_id);
			/* a HOLE's header is authenticated by now */
			if (fr.type == LC_FRAME_HOLE)
				return lc_err_set(e, LC_ERR_PROTO,
				    "data stream %u: %s", rv->idx, why);
			return lc_receiver_refuse(rv, hdr, &fr, why, e);
		}
		r = lc_receiver_frame(rv, hdr, &fr, wf, e);
		lc_wfile_unref(wf);
		if (r != 0)
			return r;
	}
}

static void *
lc_receiver_main(void *arg)
{
	struct lc_receiver *rv = arg;
	struct lc_sink *s = rv->sink;
	struct lc_err e;
	char tag[32];
	int r;

	snprintf(tag, sizeof(tag), "stream %u", rv->idx);
	lc_log_set_tag(tag);
	lc_err_clear(&e);
	pthread_mutex_lock(&s->mu);
	while (!rv->has_conn && !lc_sink_halted(s))
		pthread_cond_wait(&s->cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
	if (lc_sink_halted(s))
		return NULL;
	lc_log_debug("connected from %s", rv->conn.peer);
	atomic_store(&rv->state, LC_RV_RECV);
	r = lc_receiver_loop(rv, &e);
	lc_zinf_free(rv->zinf);
	rv->zinf = NULL;
	if (r == 0) {
		atomic_store(&rv->state, LC_RV_END);
		lc_role_post(&s->port, LC_EV_RECEIVER_DONE, rv->idx, 0, NULL);
		return NULL;
	}
	atomic_store(&rv->state, LC_RV_DEAD);
	if (lc_sink_halted(s))
		return NULL;
	/* a broken stream is not the end: the source reconnects it and
	 * resends its blocks on the new connection */
	if (atomic_load(&rv->stalled) || r == -LC_ERR_STREAM ||
	    r == -LC_ERR_EOF || r == -LC_ERR_TIMEOUT ||
	    r == -LC_ERR_INTEGRITY) {
		if (atomic_load(&rv->stalled))
			lc_err_set(&e, LC_ERR_STREAM, "no data for %u s",
			    s->recv.stall_s);
		lc_role_post(&s->port, LC_EV_STREAM_LOST, rv->idx, 0, &e);
	} else if (r == -LC_ERR_NOSPACE && rv->has_last) {
		/* main names (and without -a removes) the file's part file */
		lc_role_post(&s->port, LC_EV_FILE_NOSPACE, rv->last_file, 0,
		    &e);
	} else {
		lc__sink_pipe_why(s, &e);
		lc_role_post(&s->port, LC_EV_ERROR, rv->idx, 0, &e);
	}
	return NULL;
}

/* See sink_int.h. */
int
lc__sink_recv_start(struct lc_sink *s, struct lc_err *e)
{
	char name[32];

	for (uint32_t i = 0; i < s->nstreams; i++) {
		snprintf(name, sizeof(name), "lc-recv-%u", i);
		if (lc_thread_start(&s->recv.rv[i].thread, name,
		    lc_receiver_main, &s->recv.rv[i]) != 0)
			return lc_err_set(e, LC_ERR_INTERNAL, "thread");
		s->recv.rv[i].started = 1;
	}
	return 0;
}

/* See sink_int.h. */
int
lc__sink_stream_lost(struct lc_sink *s, uint32_t i, const struct lc_err *why,
    struct lc_err *e)
{
	struct lc_receiver *rv = &s->recv.rv[i];
	struct lc_msg_stream_lost m;
	char name[32];

	pthread_join(rv->thread, NULL);	/* it has just posted and exits */
	rv->started = 0;
	if (++rv->losses > LC_MAX_STREAM_LOSSES)
		return lc_err_set(e, why->code != 0 ? why->code :
		    LC_ERR_STREAM, "data stream %u broke %u times, giving up; "
		    "the last time: %s", i, rv->losses, why->msg);
	memset(&m, 0, sizeof(m));
	m.stream = i;
	m.has_last = (uint8_t)rv->has_last;
	m.last_file = rv->last_file;
	m.last_off = rv->last_off;
	snprintf(m.reason, sizeof(m.reason), "%.200s", why->msg);
	lc_log_debug("data stream %u lost: %s", i, why->msg);
	/* a fresh receiver for the source's new connection */
	pthread_mutex_lock(&s->mu);
	lc_conn_close(&rv->conn);
	rv->has_conn = 0;
	pthread_mutex_unlock(&s->mu);
	if (s->acc.started)
		lc_wake_signal(&s->acc.wake);	/* reverse: redial */
	atomic_store(&rv->stalled, false);
	atomic_store(&rv->state, LC_RV_WAIT);
	snprintf(name, sizeof(name), "lc-recv-%u", i);
	if (lc_thread_start(&rv->thread, name, lc_receiver_main, rv) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "thread");
	rv->started = 1;
	return lc_msg_put_stream_lost(s->port.out, &m);
}

/* Give up on a stream's connection: the source reconnects and resends. */
static void
lc_sink_drop_stream(struct lc_sink *s, struct lc_receiver *rv)
{
	atomic_store(&rv->stalled, true);
	pthread_mutex_lock(&s->mu);
	lc_conn_shutdown(&rv->conn);
	pthread_mutex_unlock(&s->mu);
}

/*
 * The path went away: every connected stream has been silent for quiet_s
 * (a healthy one brings an IDLE frame every second).  Drop them all now,
 * so that the source dials fresh connections, which get through as soon
 * as the path is back, instead of TCP's retransmissions on the old ones,
 * backed off to tens of seconds by then.
 */
static void
lc_sink_quiet(struct lc_sink *s, uint64_t now_ms)
{
	uint64_t quiet_ms = (uint64_t)s->recv.quiet_s * 1000;
	uint32_t n = 0;

	if (quiet_ms == 0)
		return;
	for (uint32_t i = 0; i < s->nstreams; i++) {
		struct lc_receiver *rv = &s->recv.rv[i];
		if (atomic_load(&rv->state) != LC_RV_RECV)
			continue;
		if (atomic_load(&rv->stalled) ||
		    lc_ms_since(now_ms, atomic_load(&rv->last_rx_ms)) <
		    quiet_ms)
			return;	/* one is alive (or already dropped) */
		n++;
	}
	if (n == 0)
		return;
	lc_log_verbose("no data on any of %u streams for %u s: the path is "
	    "gone; reconnecting them", n, s->recv.quiet_s);
	for (uint32_t i = 0; i < s->nstreams; i++)
		if (atomic_load(&s->recv.rv[i].state) == LC_RV_RECV)
			lc_sink_drop_stream(s, &s->recv.rv[i]);
}

/*
 * See sink_int.h.  An idle source sends an IDLE frame every second on
 * each stream, so a stream that has brought no bytes for stall_s seconds
 * while another one is busy (receiving, or blocked on its quota, which is
 * waiting for the silent one) is stalled: shut it down, and the source
 * reconnects it and resends.  When all are silent the whole transfer is
 * stalled, which is for the controller's --timeout to judge.
 */
void
lc__sink_recv_tick(struct lc_sink *s, uint64_t now_ms)
{
	uint64_t stall_ms = (uint64_t)s->recv.stall_s * 1000;
	int busy = 0;

	for (uint32_t i = 0; stall_ms > 0 && i < s->nstreams; i++) {
		struct lc_receiver *rv = &s->recv.rv[i];
		int st = atomic_load(&rv->state);
		if (st == LC_RV_QUOTA || (st == LC_RV_RECV &&
		    lc_ms_since(now_ms, atomic_load(&rv->last_rx_ms)) <
		    stall_ms))
			busy++;
	}
	for (uint32_t i = 0; busy > 0 && i < s->nstreams; i++) {
		struct lc_receiver *rv = &s->recv.rv[i];
		if (atomic_load(&rv->state) != LC_RV_RECV ||
		    atomic_load(&rv->stalled) ||
		    lc_ms_since(now_ms, atomic_load(&rv->last_rx_ms)) <
		    stall_ms)
			continue;
		lc_sink_drop_stream(s, rv);
	}
	if (busy == 0)
		lc_sink_quiet(s, now_ms);
}

/* See sink_int.h. */
void
lc__sink_recv_abort_locked(struct lc_sink *s)
{
	for (uint32_t i = 0; i < s->nstreams; i++) {
		lc_conn_shutdown(&s->recv.rv[i].conn);
		if (s->recv.rv[i].pool != NULL)
			lc_pool_abort(s->recv.rv[i].pool);
	}
}

/* See sink_int.h. */
void
lc__sink_recv_join(struct lc_sink *s)
{
	for (uint32_t i = 0; i < s->nstreams; i++) {
		if (!s->recv.rv[i].started)
			continue;
		pthread_join(s->recv.rv[i].thread, NULL);
		s->recv.rv[i].started = 0;
	}
}

/* See sink_int.h. */
void
lc__sink_recv_free(struct lc_sink *s)
{
	for (uint32_t i = 0; i < s->nstreams; i++) {
		struct lc_receiver *rv = &s->recv.rv[i];
		lc_conn_close(&rv->conn);
		if (rv->listen_fd >= 0)
			close(rv->listen_fd);
		lc_pool_free(rv->pool);
	}
}
