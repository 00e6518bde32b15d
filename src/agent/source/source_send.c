/*
 * Source: sending, the main thread's side (the sender threads are
 * sender.c's).  CONNECT sets up the data path (struct lc_source_send) and
 * starts one sender per stream; ACK releases the blocks the sink has
 * written; STREAM_LOST breaks a sender's connection off so that it
 * reconnects and resends; SRC_DONE once everything is sent.
 */
#include "source_int.h"

#include "log.h"
#include "secmem.h"
#include "thread.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>


/*
 * Reverse: a listening socket per stream for the sink (or the controller's
 * relay) to dial in, and CONNECTED with their ports at once (the streams
 * come up only after the controller has passed them on).
 */
static int
lc_source_listen(struct lc_source *s, struct lc_err *e)
{
	struct lc_msg_connected c;
	int r;

	memset(&c, 0, sizeof(c));
	for (uint32_t i = 0; i < s->nstreams; i++) {
		struct lc_sender *sn = &s->send.senders[i];
		if ((r = lc_sock_listen(s->send.window,
		    !!(s->flags & LC_XFER_LOOPBACK), &sn->listen_fd,
		    &s->send.ports[i], e)) != 0)
			return r;
		s->send.nlisten = i + 1;
		c.ports[i] = s->send.ports[i];
	}
	c.streams = s->nstreams;
	c.nports = s->nstreams;
	c.window = s->send.window != 0 ?
	    lc_sock_sndbuf(s->send.senders[0].listen_fd) : 0;
	lc_log_debug("reverse: listening on %u ports", s->nstreams);
	return lc_msg_put_connected(s->port.out, &c);
}

int
lc__source_connect(struct lc_source *s, const struct lc_msg_connect *m,
    struct lc_err *e)
{
	char name[32];
	int r;

	if (s->connect_seen)
		return lc_err_set(e, LC_ERR_PROTO, "second CONNECT");
	s->connect_seen = 1;
	memcpy(s->send.addr, m->addr, sizeof(s->send.addr));
	if (!(m->flags & LC_XFER_REVERSE) && (r = lc_role_dial_check(&s->port,
	    s->send.addr, sizeof(s->send.addr), e)) != 0)
		return r;
	s->nstreams = m->streams;
	s->send.window = m->window;
	s->block = m->block;
	s->flags = m->flags;
	s->csum = m->csum;
	s->send.zlevel = m->zlevel;
	memcpy(s->send.ports, m->ports, sizeof(s->send.ports));
	if (s->send.key == NULL &&
	    (s->send.key = lc_secmem_alloc(LC_KEY_LEN)) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	memcpy(s->send.key, m->key, LC_KEY_LEN);
	lc_rate_init(&s->send.rate, m->rate);
	s->send.rate_init = 1;
	if ((s->flags & LC_XFER_ENCRYPT) &&
	    (r = lc_tls_new(0, s->send.key, &s->send.tls, e)) != 0)
		return r;
	if ((s->disp = lc_dispenser_new(s->block)) == NULL)
		return -LC_ERR_NOMEM;
	if ((s->flags & LC_XFER_REVERSE) && (r = lc_source_listen(s, e)) != 0)
		return r;
	for (uint32_t i = 0; i < s->nstreams; i++) {
		struct lc_sender *sn = &s->send.senders[i];
		sn->src = s;
		sn->idx = i;
		snprintf(name, sizeof(name), "lc-send-%u", i);
		if ((r = lc_thread_start(&sn->thread, name, lc_sender_main,
		    sn)) != 0)
			return lc_err_set(e, LC_ERR_INTERNAL,
			    "cannot start sender thread");
		sn->started = 1;
	}
	return 0;
}

/*
 * Release every kept block before the sink's watermark.  A stream's kept
 * blocks are in the order it sent them, which is increasing (file,
 * offset) order (a resend keeps it), so those below the mark are a
 * prefix: an ACK that passes nothing costs a comparison a stream, not a
 * walk over every block kept (thousands while one early file's data is
 * slow, and the sink sends a PROGRESS per file written).
 */
void
lc__source_ack(struct lc_source *s, const struct lc_msg_ack *m)
{
	pthread_mutex_lock(&s->mu);
	for (uint32_t i = 0; i < s->nstreams; i++) {
		struct lc_sent *l = &s->send.senders[i].sent;
		size_t j = 0;

		while (j < l->n && lc_block_cmp(l->v[j].file_id,
		    l->v[j].offset + l->v[j].len, m->file, m->written) <= 0)
			lc_dispenser_release(s->disp, &l->v[j++]);
		if (j == 0)
			continue;
		memmove(l->v, l->v + j, (l->n - j) * sizeof(l->v[0]));
		l->n -= j;
	}
	pthread_mutex_unlock(&s->mu);
}

/*
 * SRC_DONE once the controller has listed everything (SRC_NOMORE) and
 * every sender has sent END.
 */
int
lc__source_maybe_done(struct lc_source *s)
{
	struct lc_msg_xfer_done d;

	if (s->done_sent || !s->nomore || s->send.finished < s->nstreams)
		return 0;
	s->done_sent = 1;
	memset(&d, 0, sizeof(d));
	/* wire first: the senders add to bytes_sent first, so wire <= bytes */
	d.wire = atomic_load(&s->send.wire_sent);
	d.bytes = atomic_load(&s->send.bytes_sent);
	d.files = s->files;
	lc_log_debug("all streams done: %llu bytes",
	    (unsigned long long)d.bytes);
	return lc_msg_put_xfer_done(s->port.out, LC_MSG_SRC_DONE, &d);
}

/*
 * The sink gave up on a stream (it broke or stalled) and says what it got
 * last: break off the connection; the sender reconnects and resends.
 */
int
lc__source_lost(struct lc_source *s, const struct lc_msg_stream_lost *m,
    struct lc_err *e)
{
	struct lc_sender *sn;

	if (m->stream >= s->nstreams)
		return lc_err_set(e, LC_ERR_PROTO, "STREAM_LOST for stream "
		    "%u of %u", m->stream, s->nstreams);
	sn = &s->send.senders[m->stream];
	lc_log_debug("data stream %u lost (%s)", m->stream, m->reason);
	pthread_mutex_lock(&s->mu);
	sn->lost = 1;
	sn->has_last = m->has_last;
	sn->last_file = m->last_file;
	sn->last_off = m->last_off;
	atomic_store(&sn->stop, true);
	lc_stream_shutdown(sn->st);
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	lc_dispenser_kick(s->disp);
	return 0;
}

int
lc__source_stream_up(struct lc_source *s, struct lc_err *e)
{
	struct lc_msg_connected c;
	int r;

	/* reverse: CONNECTED went out with the ports already */
	if (++s->send.up == s->nstreams && !(s->flags & LC_XFER_REVERSE)) {
		memset(&c, 0, sizeof(c));
		c.streams = s->nstreams;
		c.window = s->send.window != 0 ? s->send.senders[0].sndbuf : 0;
		if ((r = lc_msg_put_connected(s->port.out, &c)) != 0)
			return r;
	}
	return lc__source_pipe_start(s, e);
}

void
lc__source_senders_stop(struct lc_source *s)
{
	for (uint32_t i = 0; i < s->nstreams; i++) {
		atomic_store(&s->send.senders[i].stop, true);	/* rate waits */
		lc_stream_shutdown(s->send.senders[i].st);
		if (s->send.senders[i].hs_fd >= 0)	/* in its handshake */
			(void)shutdown(s->send.senders[i].hs_fd, SHUT_RDWR);
	}
	pthread_cond_broadcast(&s->cv);	/* senders waiting to reconnect */
}

void
lc__source_senders_join(struct lc_source *s)
{
	for (uint32_t i = 0; i < s->nstreams; i++) {
		struct lc_sent *kept = &s->send.senders[i].sent;
		if (s->send.senders[i].started)
			pthread_join(s->send.senders[i].thread, NULL);
		lc_stream_free(s->send.senders[i].st);
		s->send.senders[i].st = NULL;
		/* a stream's blocks hold the dispenser's buffers */
		for (size_t j = 0; j < kept->n; j++)
			lc_dispenser_release(s->disp, &kept->v[j]);
		free(kept->v);	/* the dispenser closes files */
	}
}

void
lc__source_send_free(struct lc_source *s)
{
	for (uint32_t i = 0; i < s->send.nlisten; i++)
		close(s->send.senders[i].listen_fd);
	lc_tls_free(s->send.tls);
	if (s->send.rate_init)
		lc_rate_destroy(&s->send.rate);
	lc_secmem_free(s->send.key, LC_KEY_LEN);
}
