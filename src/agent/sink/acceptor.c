/*
 * The sink's acceptor: who may become a data stream.
 *
 * Threads:
 *   acceptor   one (lc_acceptor_main, started by LISTEN): polls the N
 *              listening sockets and a wake pipe; each new connection gets
 *              a short-lived auth thread, at most LC_MAX_PENDING_AUTH at
 *              once, so that a stranger who connects and says nothing
 *              cannot hold up the real streams.  A new connection always
 *              gets a slot: when its address already has its share
 *              (nstreams + LC_AUTH_PER_HOST_SPARE) or every slot is busy,
 *              the handshake that has waited longest is shut down and
 *              joined first (lc_acceptor_make_room).  On cancel it shuts
 *              down the handshakes in progress and joins them.
 *   auth       runs the TLS and key handshake under one deadline for the
 *              whole of it (LC_HANDSHAKE_TIMEOUT_MS from its start, not
 *              per read: lc_conn_set_deadline), then hands the
 *              connection to receiver[idx] under the sink's
 *              mutex and broadcasts its condvar.  A connection that fails
 *              the handshake (or names another stream's port, or a stream
 *              already connected) is logged with its address and closed;
 *              it never reaches a receiver.
 *
 * Reverse (-z: the sink is behind NAT or a firewall that lets nothing in):
 * there are no listening sockets.  Once DIAL has given the source's
 * address and ports, the acceptor starts an auth thread for each stream
 * that has no connection and none in its handshake; that thread dials the
 * stream's port first (a failed dial is retried after a back-off of 0.2 s
 * doubling to 2 s, so a stream the source lost comes back as soon as the
 * path does) and then runs the same server side of the handshake: the
 * sink still proves and checks the key, whichever side dialled.
 * Main thread: starts the acceptor (LISTEN, or DIAL in reverse) and joins
 * it in free.  State: struct lc_sink_accept (sink_int.h).
 * Descriptors: the listening sockets belong to the sink (acceptor reads
 * only); an accepted or dialled socket belongs to its auth thread until
 * the hand-over ("transferred"), then to the receiver.
 */
#include "sink_int.h"

#include "log.h"
#include "thread.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define LC_RECV_TICK_MS 1000	/* socket receive timeout: re-check */
#define LC_DIAL_TIMEOUT_MS 5000	/* reverse: one connect attempt */
#define LC_DIAL_BACKOFF_MIN_MS 200
#define LC_DIAL_BACKOFF_MAX_MS 2000
#define LC_FIRST_DIAL_MS 7000	/* reverse: no first connection this long:
				   the path is blocked (LC_ERR_NOPATH) */

static void *
lc_auth_main(void *arg)
{
	struct lc_auth *au = arg;
	struct lc_sink *s = au->sink;
	struct lc_receiver *rv;
	struct lc_err e;
	int r;

	lc_log_set_tag("accept");
	lc_err_clear(&e);
	if (au->dial) {
		int fd;
		r = lc_sock_connect(s->acc.dial_addr,
		    s->acc.dial_ports[au->listener], s->acc.window,
		    LC_DIAL_TIMEOUT_MS, s->port.cancel, &fd, &e);
		if (r != 0) {
			if (!lc_role_canceled(&s->port))
				lc_log_debug("stream %u: %s", au->listener,
				    e.msg);
			au->dial_failed = 1;
			au->dial_err = e;
			atomic_store(&au->finished, true);
			lc_wake_signal(&s->acc.wake);
			return NULL;
		}
		pthread_mutex_lock(&s->mu);
		lc_conn_init(&au->conn, fd);
		pthread_mutex_unlock(&s->mu);
	}
	/* one deadline for the whole handshake, however the peer paces it */
	r = lc_conn_set_deadline(&au->conn, LC_HANDSHAKE_TIMEOUT_MS);
	if (r != 0)
		r = lc_err_set(&e, LC_ERR_STREAM, "cannot set the handshake "
		    "deadline");
	if (r == 0 && s->acc.tls != NULL)
		r = lc_tls_accept(s->acc.tls, &au->conn, &e);
	if (r == 0)
		r = lc_stream_accept_auth(&au->conn, s->acc.key, s->nstreams,
		    &e);
	if (r == 0 && au->conn.idx != au->listener)
		r = lc_err_set(&e, LC_ERR_STREAM, "stream %u on the port of "
		    "stream %u", au->conn.idx, au->listener);
	if (r == 0) {
		rv = &s->recv.rv[au->conn.idx];
		pthread_mutex_lock(&s->mu);
		if (rv->has_conn) {
			r = lc_err_set(&e, LC_ERR_STREAM,
			    "stream %u is already connected", au->conn.idx);
		} else if (lc_conn_clear_deadline(&au->conn) != 0) {
			r = lc_err_set(&e, LC_ERR_STREAM, "cannot make the "
			    "socket blocking");
		} else {
			/* wake up once a second to see if we are stalled */
			(void)lc_sock_set_timeout(au->conn.fd,
			    LC_RECV_TICK_MS);
			au->handed = 1;
			rv->conn = au->conn;
			rv->conn.patient = 1;
			rv->conn.last_rx_ms = &rv->last_rx_ms;
			atomic_store(&rv->last_rx_ms, lc_now_ms());
			rv->has_conn = 1;
			au->conn.fd = -1;	/* transferred */
			au->conn.ssl = NULL;
			au->conn.tx = au->conn.rx = NULL;
			pthread_cond_broadcast(&s->cv);
		}
		pthread_mutex_unlock(&s->mu);
	}
	/* (an evicted handshake: the acceptor has said why) */
	if (r != 0 && !lc_role_canceled(&s->port) &&
	    !atomic_load(&au->evicted))
		lc_log_warn("dropped data connection from %s: %s",
		    au->conn.peer, e.msg);
	pthread_mutex_lock(&s->mu);
	lc_conn_close(&au->conn);
	pthread_mutex_unlock(&s->mu);
	atomic_store(&au->finished, true);
	lc_wake_signal(&s->acc.wake);	/* a slot is free */
	return NULL;
}

/*
 * Join finished handshakes (all: shut down and join every one).  In
 * reverse, backoff[] (ms per stream, or NULL) grows after a failed dial
 * and is reset after a handshake that got through.
 */
/* Reverse: what the dialler remembers per stream (lc_acceptor_dial_main). */
struct lc_dialstate {
	uint64_t next_dial[LC_MAX_STREAMS];	/* not before (ms) */
	uint32_t backoff[LC_MAX_STREAMS];	/* ms */
	uint64_t first_fail[LC_MAX_STREAMS];	/* never up: first failure */
	int up[LC_MAX_STREAMS];			/* has connected once */
	int reported;				/* NOPATH posted */
};

/*
 * A stream that has never connected and whose dials have failed for
 * LC_FIRST_DIAL_MS: the data path is blocked; say so once (LC_ERR_NOPATH,
 * as the source does for a first connect), so that the controller can try
 * another path.
 */
static void
lc_acceptor_dial_failed(struct lc_sink *s, struct lc_dialstate *ds,
    const struct lc_auth *au)
{
	uint32_t k = au->listener;
	uint64_t now = lc_now_ms();
	struct lc_err e;

	if (ds->up[k] || ds->reported)
		return;
	if (ds->first_fail[k] == 0)
		ds->first_fail[k] = now;
	if (now - ds->first_fail[k] < LC_FIRST_DIAL_MS)
		return;
	ds->reported = 1;
	lc_err_set(&e, LC_ERR_NOPATH, "reverse: %s", au->dial_err.msg);
	lc_role_post(&s->port, LC_EV_ERROR, k, 0, &e);
}

static void
lc_acceptor_reap(struct lc_sink *s, int all, struct lc_dialstate *ds)
{
	for (int i = 0; i < LC_MAX_PENDING_AUTH; i++) {
		struct lc_auth *au = &s->acc.auth[i];
		if (!au->used)
			continue;
		if (all) {
			pthread_mutex_lock(&s->mu);
			lc_conn_shutdown(&au->conn);
			pthread_mutex_unlock(&s->mu);
		} else if (!atomic_load(&au->finished)) {
			continue;
		}
		pthread_join(au->thread, NULL);
		au->used = 0;
		if (au->dial && ds != NULL) {
			uint32_t k = au->listener;
			int has;
			pthread_mutex_lock(&s->mu);
			has = s->recv.rv[k].has_conn;
			pthread_mutex_unlock(&s->mu);
			if (au->dial_failed)
				lc_acceptor_dial_failed(s, ds, au);
			if (au->dial_failed || !has) {
				ds->next_dial[k] = lc_now_ms() + ds->backoff[k];
				ds->backoff[k] = ds->backoff[k] * 2 >
				    LC_DIAL_BACKOFF_MAX_MS ?
				    LC_DIAL_BACKOFF_MAX_MS : ds->backoff[k] * 2;
			} else {
				ds->backoff[k] = LC_DIAL_BACKOFF_MIN_MS;
				ds->up[k] = 1;
			}
		}
	}
}

/* A free handshake slot, or NULL when all are busy (reap first). */
static struct lc_auth *
lc_acceptor_slot(struct lc_sink *s)
{
	for (int i = 0; i < LC_MAX_PENDING_AUTH; i++)
		if (!s->acc.auth[i].used)
			return &s->acc.auth[i];
	return NULL;
}

static void
lc_acceptor_take(struct lc_sink *s, struct lc_auth *au, uint32_t listener,
    int fd)
{
	memset(au, 0, sizeof(*au));
	au->sink = s;
	au->listener = listener;
	au->dial = fd < 0;
	au->t0 = lc_now_ms();
	atomic_init(&au->finished, false);
	atomic_init(&au->evicted, false);
	lc_conn_init(&au->conn, fd);
	lc_conn_host(&au->conn, au->host, sizeof(au->host));
	if (lc_thread_start(&au->thread, "lc-auth", lc_auth_main, au) != 0) {
		lc_log_warn("dropped data connection from %s: no thread",
		    au->conn.peer);
		if (fd >= 0)
			close(fd);
		return;
	}
	au->used = 1;
}

/*
 * A new connection from host: make room for its handshake (lc_hs_admit).
 * At most nstreams + LC_AUTH_PER_HOST_SPARE handshakes from one address
 * (the source dials every stream at once, and may be reconnecting some),
 * so one address never holds every slot; when it has that many, or when
 * every slot is busy, the handshake that has waited longest is shut down
 * and joined (its thread ends at once), and that is logged here.
 */
static void
lc_acceptor_make_room(struct lc_sink *s, const char *host)
{
	struct lc_hs_slot v[LC_MAX_PENDING_AUTH];
	uint32_t per_host = s->nstreams + LC_AUTH_PER_HOST_SPARE;
	struct lc_auth *au;
	int k, why;

	for (int i = 0; i < LC_MAX_PENDING_AUTH; i++) {
		v[i].host = s->acc.auth[i].used ? s->acc.auth[i].host : NULL;
		v[i].t0 = s->acc.auth[i].t0;
	}
	if ((k = lc_hs_admit(v, LC_MAX_PENDING_AUTH, host, per_host,
	    &why)) < 0)
		return;
	au = &s->acc.auth[k];
	atomic_store(&au->evicted, true);
	pthread_mutex_lock(&s->mu);
	lc_conn_shutdown(&au->conn);
	pthread_mutex_unlock(&s->mu);
	pthread_join(au->thread, NULL);
	au->used = 0;
	if (au->handed)
		return;	/* it got through just before: not dropped */
	if (why == LC_HS_PER_HOST)
		lc_log_warn("dropped data connection from %s: more than %u "
		    "handshakes at once from %s (the oldest goes)",
		    au->conn.peer, per_host, host);
	else
		lc_log_warn("dropped data connection from %s: all %d "
		    "handshake slots busy (the oldest goes)", au->conn.peer,
		    LC_MAX_PENDING_AUTH);
}

/* 1 if stream i has an auth thread (dialling or in its handshake). */
static int
lc_acceptor_busy(const struct lc_sink *s, uint32_t i)
{
	for (int k = 0; k < LC_MAX_PENDING_AUTH; k++)
		if (s->acc.auth[k].used && s->acc.auth[k].listener == i)
			return 1;
	return 0;
}

/* Reverse: dial every stream that has no connection (see the top). */
static void *
lc_acceptor_dial_main(struct lc_sink *s)
{
	struct lc_dialstate ds;
	struct pollfd pfd;

	memset(&ds, 0, sizeof(ds));
	for (uint32_t i = 0; i < LC_MAX_STREAMS; i++)
		ds.backoff[i] = LC_DIAL_BACKOFF_MIN_MS;
	while (!lc_role_canceled(&s->port)) {
		uint64_t now;

		lc_acceptor_reap(s, 0, &ds);
		now = lc_now_ms();
		for (uint32_t i = 0; i < s->nstreams; i++) {
			struct lc_auth *au;
			int has;
			if (now < ds.next_dial[i] || lc_acceptor_busy(s, i))
				continue;
			pthread_mutex_lock(&s->mu);
			has = s->recv.rv[i].has_conn;
			pthread_mutex_unlock(&s->mu);
			if (has || (au = lc_acceptor_slot(s)) == NULL)
				continue;
			lc_acceptor_take(s, au, i, -1);
		}
		/* woken by a finished handshake, a lost stream, or a cancel */
		pfd.fd = s->acc.wake.rfd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, LC_DIAL_BACKOFF_MIN_MS) > 0)
			lc_wake_drain(&s->acc.wake);
	}
	lc_acceptor_reap(s, 1, NULL);
	return NULL;
}

static void *
lc_acceptor_main(void *arg)
{
	struct lc_sink *s = arg;
	struct pollfd pfd[LC_MAX_STREAMS + 1];
	uint32_t n = s->nstreams;

	lc_log_set_tag("accept");
	if (s->acc.dial_mode)
		return lc_acceptor_dial_main(s);
	while (!lc_role_canceled(&s->port)) {
		lc_acceptor_reap(s, 0, NULL);
		for (uint32_t i = 0; i < n; i++) {
			pfd[i].fd = s->recv.rv[i].listen_fd;
			pfd[i].events = POLLIN;
		}
		pfd[n].fd = s->acc.wake.rfd;
		pfd[n].events = POLLIN;
		if (poll(pfd, n + 1, 1000) < 0 && errno != EINTR)
			break;
		if (pfd[n].revents != 0)
			lc_wake_drain(&s->acc.wake);
		for (uint32_t i = 0; i < n; i++) {
			char host[LC_PEER_MAX];
			struct lc_conn peer;
			struct lc_auth *au;
			int fd;
			if (!(pfd[i].revents & POLLIN))
				continue;
			fd = accept4(pfd[i].fd, NULL, NULL, SOCK_CLOEXEC);
			if (fd < 0)
				continue;
			lc_acceptor_reap(s, 0, NULL);
			lc_conn_init(&peer, fd);
			lc_conn_host(&peer, host, sizeof(host));
			lc_acceptor_make_room(s, host);
			if ((au = lc_acceptor_slot(s)) == NULL) {
				close(fd);	/* (make_room freed one) */
				continue;
			}
			lc_acceptor_take(s, au, i, fd);
		}
	}
	lc_acceptor_reap(s, 1, NULL);
	return NULL;
}

/* See sink_int.h. */
int
lc__sink_accept_start(struct lc_sink *s, struct lc_err *e)
{
	if (lc_thread_start(&s->acc.thread, "lc-accept", lc_acceptor_main,
	    s) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "thread");
	s->acc.started = 1;
	return 0;
}

/* See sink_int.h. */
int
lc__sink_dial(struct lc_sink *s, const struct lc_msg_dial *m,
    struct lc_err *e)
{
	int r;

	if (!s->listening || !s->acc.dial_mode || s->acc.started ||
	    m->streams != s->nstreams)
		return lc_err_set(e, LC_ERR_PROTO, "unexpected DIAL");
	memcpy(s->acc.dial_addr, m->addr, sizeof(s->acc.dial_addr));
	if ((r = lc_role_dial_check(&s->port, s->acc.dial_addr,
	    sizeof(s->acc.dial_addr), e)) != 0)
		return r;
	memcpy(s->acc.dial_ports, m->ports, sizeof(s->acc.dial_ports));
	lc_log_debug("reverse: dialling %u streams to %s", s->nstreams,
	    s->acc.dial_addr);
	return lc__sink_accept_start(s, e);
}

/* See sink_int.h. */
void
lc__sink_accept_join(struct lc_sink *s)
{
	if (s->acc.started)
		pthread_join(s->acc.thread, NULL);
}
