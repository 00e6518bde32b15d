/*
 * Data streams (stream.h): dialling one (lc_stream_dial), and in reverse
 * accepting the sink's connection for it, then its handshake, and the
 * stream's I/O once it is up.  The sockets are in sock.c, the connection
 * and its I/O in conn.c, the handshake messages in stream_hs.c.
 *
 * Threads: lc_stream_dial runs on its caller's thread (a sender).  In
 * reverse it starts one thread per accepted connection for its handshake
 * (struct lc_acc below) and joins every one of them before it returns;
 * each owns its socket until then, the waiting thread owns the rest.
 */
#include "stream.h"
#include "stream_int.h"
#include "aead.h"
#include "buf.h"
#include "tls.h"
#include "clock.h"
#include "fdio.h"
#include "log.h"
#include "thread.h"
#include "wake.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <limits.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

/* ---- authenticated outgoing streams ---- */

struct lc_stream {
	struct lc_conn conn;	/* handshake done: fd open, ssl if TLS */
	uint32_t sndbuf;
};

static void
lc_dial_pending(const struct lc_dial *d, int fd)
{
	if (d->pending != NULL)
		d->pending(d->arg, fd);
}

static int lc_stream_accept_dial(const struct lc_dial *d,
    struct lc_stream **out, struct lc_err *e);
static int lc_stream_handshake(const struct lc_dial *d, int fd,
    struct lc_stream **out, struct lc_err *e);

int
lc_stream_dial(const struct lc_dial *d, struct lc_stream **out,
    struct lc_err *e)
{
	int fd = -1, r;

	*out = NULL;
	if (d->accept)
		return lc_stream_accept_dial(d, out, e);
	if ((r = lc_sock_connect(d->addr, d->port, d->window,
	    d->connect_timeout_ms, d->cancel, &fd, e)) != 0)
		return r;
	return lc_stream_handshake(d, fd, out, e);
}

/* Handshake on a connected socket (ours: closed on failure). */
static int
lc_stream_handshake(const struct lc_dial *d, int fd, struct lc_stream **out,
    struct lc_err *e)
{
	struct lc_stream *st = NULL;
	struct lc_conn c;
	struct lc_err sub;
	int r;

	lc_err_clear(&sub);
	lc_conn_init(&c, fd);
	lc_dial_pending(d, fd);
	/* one deadline for all of it, however the peer paces its bytes */
	if ((r = lc_conn_set_deadline(&c, d->handshake_ms != 0 ?
	    d->handshake_ms : LC_HANDSHAKE_TIMEOUT_MS)) != 0) {
		r = lc_err_set(e, LC_ERR_STREAM, "data stream %u to %s: "
		    "cannot set the handshake deadline", d->idx, c.peer);
		goto out;
	}
	if (d->tls != NULL && (r = lc_tls_connect(d->tls, &c, &sub)) != 0) {
		r = lc_err_set(e, -r, "data stream %u to %s: %s", d->idx,
		    c.peer, sub.msg);
		goto out;
	}
	if ((r = lc_stream_connect_auth(&c, d->key, d->idx, e)) != 0)
		goto out;
	if ((r = lc_conn_clear_deadline(&c)) != 0) {
		r = lc_err_set(e, LC_ERR_STREAM, "data stream %u to %s: "
		    "cannot make the socket blocking", d->idx, c.peer);
		goto out;
	}
	if ((st = calloc(1, sizeof(*st))) == NULL) {
		r = lc_err_set(e, LC_ERR_NOMEM, "out of memory");
		goto out;
	}
	st->conn = c;
	st->sndbuf = lc_sock_sndbuf(fd);
	c.fd = -1;	/* transferred */
	c.ssl = NULL;
	c.tx = c.rx = NULL;
	*out = st;
	r = 0;
 out:
	lc_dial_pending(d, -1);	/* before the close: the number is reused */
	lc_conn_close(&c);
	return r;
}

/*
 * Reverse (d->accept): wait on d->listen_fd for the sink to dial in, then
 * run the same handshake as after a connect (the source is the TLS client
 * and proves the key; a stranger cannot pass).  Handshakes run in threads
 * of their own, up to LC_ACC_MAX at once and LC_ACC_PER_HOST from one
 * address (lc_hs_admit: the sink dials each stream once at a time, so a
 * few from its address are plenty), so a stranger cannot keep the sink
 * waiting behind it: a new connection always starts its handshake, and
 * the oldest of its address, or of all, is dropped to make room.  Each
 * handshake has its own deadline (d->handshake_ms); the first that
 * succeeds is the stream, the others are then dropped.  Connections that
 * fail are logged; the wait goes on until connect_timeout_ms has passed
 * (and the handshakes begun by then have ended).  The pending hook is
 * called with each accepted socket and with -1 at once: the handshakes
 * are canceled here, through d->cancel.
 */
#define LC_ACC_MAX 8
#define LC_ACC_PER_HOST 4

struct lc_acc;

/* One accepted connection in its handshake. */
struct lc_acc_hs {
	struct lc_acc *acc;
	pthread_t thread;
	int used;		/* the waiting thread's */
	atomic_bool done;	/* set by the handshake thread as it ends */
	int fd;			/* acc->mu: the socket in its handshake or -1 */
	char host[LC_PEER_MAX];	/* the waiting thread's */
	char peer[LC_PEER_MAX];
	uint64_t t0;
	struct lc_stream *st;	/* the handshake thread's result: read */
	int rc;			/* after the join */
	struct lc_err e;
};

struct lc_acc {
	const struct lc_dial *d;
	pthread_mutex_t mu;
	struct lc_wake wake;	/* a handshake ended */
	struct lc_acc_hs hs[LC_ACC_MAX];
};

static void
lc_acc_pending(void *arg, int fd)
{
	struct lc_acc_hs *h = arg;

	pthread_mutex_lock(&h->acc->mu);
	h->fd = fd;
	pthread_mutex_unlock(&h->acc->mu);
}

static void *
lc_acc_main(void *arg)
{
	struct lc_acc_hs *h = arg;
	struct lc_dial d = *h->acc->d;

	d.pending = lc_acc_pending;
	d.arg = h;
	lc_err_clear(&h->e);
	h->rc = lc_stream_handshake(&d, h->fd, &h->st, &h->e);
	atomic_store(&h->done, true);
	lc_wake_signal(&h->acc->wake);
	return NULL;
}

/*
 * Join handshake h; drop: shut it down first (its thread then ends soon).
 * The first handshake that succeeded becomes *out; another success is
 * closed (one stream, one connection).  A failure is logged: why is
 * LC_HS_PER_HOST or LC_HS_ALL_BUSY when it was dropped for room, -1 when
 * dropped because the wait is over (not logged), 0 when it failed by
 * itself.
 */
static void
lc_acc_join(struct lc_acc *a, struct lc_acc_hs *h, int drop, int why,
    struct lc_stream **out)
{
	const struct lc_dial *d = a->d;

	if (drop) {
		pthread_mutex_lock(&a->mu);
		if (h->fd >= 0)
			(void)shutdown(h->fd, SHUT_RDWR);
		pthread_mutex_unlock(&a->mu);
	}
	pthread_join(h->thread, NULL);
	h->used = 0;
	if (h->rc == 0 && *out == NULL) {
		*out = h->st;	/* (it got through before the shutdown) */
	} else if (h->rc == 0) {
		lc_log_debug("dropped data connection from %s: stream %u is "
		    "connected", h->peer, d->idx);
		lc_stream_free(h->st);
	} else if (why == LC_HS_PER_HOST) {
		lc_log_warn("dropped data connection from %s: more than %d "
		    "handshakes at once from %s (the oldest goes)", h->peer,
		    LC_ACC_PER_HOST, h->host);
	} else if (why == LC_HS_ALL_BUSY) {
		lc_log_warn("dropped data connection from %s: all %d handshake "
		    "slots busy (the oldest goes)", h->peer, LC_ACC_MAX);
	} else if (why == 0 && (d->cancel == NULL ||
	    !atomic_load(d->cancel))) {
		lc_log_warn("dropped data connection from %s: %s", h->peer,
		    h->e.msg);
	}
	h->st = NULL;
}

/* Join the handshakes that have ended (all: shut every one down first). */
static void
lc_acc_reap(struct lc_acc *a, int all, struct lc_stream **out)
{
	for (int i = 0; i < LC_ACC_MAX; i++) {
		struct lc_acc_hs *h = &a->hs[i];
		if (h->used && (all || atomic_load(&h->done)))
			lc_acc_join(a, h, all, all ? -1 : 0, out);
	}
}

/* Make room for a handshake from host (lc_hs_admit). */
static void
lc_acc_make_room(struct lc_acc *a, const char *host, struct lc_stream **out)
{
	struct lc_hs_slot v[LC_ACC_MAX];
	int k, why;

	for (int i = 0; i < LC_ACC_MAX; i++) {
		v[i].host = a->hs[i].used ? a->hs[i].host : NULL;
		v[i].t0 = a->hs[i].t0;
	}
	if ((k = lc_hs_admit(v, LC_ACC_MAX, host, LC_ACC_PER_HOST, &why)) >= 0)
		lc_acc_join(a, &a->hs[k], 1, why, out);
}

/* Accept one connection and start its handshake. */
static void
lc_acc_take(struct lc_acc *a, struct lc_stream **out)
{
	const struct lc_dial *d = a->d;
	struct lc_acc_hs *h = NULL;
	struct lc_conn peer;
	char host[LC_PEER_MAX];
	int fd;

	fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	lc__sock_tune(fd);
	lc_dial_pending(d, fd);	/* TCP reached us */
	lc_dial_pending(d, -1);	/* (canceled here: d->cancel) */
	lc_conn_init(&peer, fd);
	lc_conn_host(&peer, host, sizeof(host));
	lc_acc_make_room(a, host, out);
	for (int i = 0; i < LC_ACC_MAX && h == NULL; i++)
		if (!a->hs[i].used)
			h = &a->hs[i];
	if (h == NULL || *out != NULL) {	/* (the one dropped for room
						   had just got through) */
		close(fd);
		return;
	}
	memset(h, 0, sizeof(*h));
	h->acc = a;
	h->fd = fd;	/* before the thread starts: a shutdown reaches it */
	h->t0 = lc_now_ms();
	atomic_init(&h->done, false);
	snprintf(h->host, sizeof(h->host), "%s", host);
	snprintf(h->peer, sizeof(h->peer), "%s", peer.peer);
	if (lc_thread_start(&h->thread, "lc-hs", lc_acc_main, h) != 0) {
		lc_log_warn("dropped data connection from %s: no thread",
		    peer.peer);
		close(fd);
		return;
	}
	h->used = 1;
}

static int
lc_acc_busy(const struct lc_acc *a)
{
	for (int i = 0; i < LC_ACC_MAX; i++)
		if (a->hs[i].used)
			return 1;
	return 0;
}

static int
lc_stream_accept_dial(const struct lc_dial *d, struct lc_stream **out,
    struct lc_err *e)
{
	struct lc_acc *a;
	struct pollfd pfd[2];
	uint64_t deadline = lc_now_ms() + (uint64_t)d->connect_timeout_ms;
	int r;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	a->d = d;
	if (pthread_mutex_init(&a->mu, NULL) != 0) {
		free(a);
		return lc_err_set(e, LC_ERR_INTERNAL, "mutex");
	}
	if (lc_wake_open(&a->wake) != 0) {
		pthread_mutex_destroy(&a->mu);
		free(a);
		return lc_err_set(e, LC_ERR_INTERNAL, "cannot open a pipe");
	}
	for (;;) {
		uint64_t now;
		int n = 0;

		lc_acc_reap(a, 0, out);
		if (*out != NULL) {
			r = 0;
			break;
		}
		if (d->cancel != NULL && atomic_load(d->cancel)) {
			r = lc_err_set(e, LC_ERR_CANCELED, "canceled");
			break;
		}
		now = lc_now_ms();
		if (now >= deadline && !lc_acc_busy(a)) {
			r = lc_err_set(e, LC_ERR_STREAM, "data stream %u: "
			    "no connection from the sink within %.1f s "
			    "(reverse)", d->idx,
			    (double)d->connect_timeout_ms / 1000);
			break;
		}
		pfd[n].fd = a->wake.rfd;
		pfd[n++].events = POLLIN;
		if (now < deadline) {	/* then no new ones */
			pfd[n].fd = d->listen_fd;
			pfd[n++].events = POLLIN;
		}
		pfd[0].revents = pfd[1].revents = 0;
		if (poll(pfd, (nfds_t)n, 100) <= 0)	/* see a cancel */
			continue;
		if (pfd[0].revents != 0)
			lc_wake_drain(&a->wake);
		if (n > 1 && (pfd[1].revents & POLLIN))
			lc_acc_take(a, out);
	}
	lc_acc_reap(a, 1, out);
	if (r != 0 && *out != NULL) {	/* (won while we gave up) */
		lc_stream_free(*out);
		*out = NULL;
	}
	lc_wake_close(&a->wake);
	pthread_mutex_destroy(&a->mu);
	free(a);
	return r;
}

int
lc_stream_write(struct lc_stream *st, const void *p, size_t n,
    struct lc_err *e)
{
	return lc_conn_write_all(&st->conn, p, n, e);
}

int
lc_stream_seal(struct lc_stream *st, uint8_t *frame, size_t hdrlen,
    size_t len, size_t *outlen, struct lc_err *e)
{
	*outlen = len;
	if (st->conn.tx == NULL)
		return 0;
	if (lc_aead_seal(st->conn.tx, frame, hdrlen, frame + hdrlen,
	    len - hdrlen, frame + len) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "data stream to %s: "
		    "AEAD failed", st->conn.peer);
	*outlen = len + LC_AEAD_TAG_LEN;
	return 0;
}

void
lc_stream_shutdown(struct lc_stream *st)
{
	if (st != NULL)
		lc_conn_shutdown(&st->conn);
}

void
lc_stream_free(struct lc_stream *st)
{
	if (st == NULL)
		return;
	lc_conn_close(&st->conn);
	free(st);
}

const char *
lc_stream_peer(const struct lc_stream *st)
{
	return st->conn.peer;
}

uint32_t
lc_stream_sndbuf(const struct lc_stream *st)
{
	return st->sndbuf;
}
