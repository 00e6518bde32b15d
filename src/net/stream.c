#include "stream.h"
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

/* bytes a data stream may hold unsent in its socket (TCP_NOTSENT_LOWAT) */
#define LC_NOTSENT_LOWAT (256 << 10)

#define LC_NONCE_LEN LC_HS_NONCE_LEN
#define LC_MAC_LEN LC_HS_MAC_LEN
#define LC_HS_VERSION 1

static void
lc_sock_set_window(int fd, uint32_t window)
{
	int v = (int)window;

	if (window == 0)
		return;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
}

static uint32_t
lc_sock_getbuf(int fd, int opt)
{
	int v = 0;
	socklen_t l = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, opt, &v, &l) != 0 || v < 0)
		return 0;
	return (uint32_t)v / 2;	/* Linux doubles the value for overhead */
}

uint32_t
lc_sock_rcvbuf(int fd)
{
	return lc_sock_getbuf(fd, SO_RCVBUF);
}

uint32_t
lc_sock_sndbuf(int fd)
{
	return lc_sock_getbuf(fd, SO_SNDBUF);
}

int
lc_sock_set_timeout(int fd, int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000,
		.tv_usec = (ms % 1000) * 1000 };

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0)
		return -LC_ERR_STREAM;
	return 0;
}

static void
lc_sockaddr_name(const struct sockaddr *sa, socklen_t len, char *out,
    size_t outsz)
{
	char host[NI_MAXHOST], serv[NI_MAXSERV];

	if (getnameinfo(sa, len, host, sizeof(host), serv, sizeof(serv),
	    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
		snprintf(out, outsz, "?");
		return;
	}
	if (strncmp(host, "::ffff:", 7) == 0)	/* v4-mapped */
		memmove(host, host + 7, strlen(host + 7) + 1);
	snprintf(out, outsz, "%s port %s", host, serv);
}

void
lc_sock_peer_name(int fd, char *out, size_t outsz)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getpeername(fd, (struct sockaddr *)&ss, &len) != 0) {
		snprintf(out, outsz, "?");
		return;
	}
	lc_sockaddr_name((struct sockaddr *)&ss, len, out, outsz);
}

/* Options of every data stream socket, whichever side dialled. */
static void
lc_sock_tune(int fd)
{
	int one = 1, lowat = LC_NOTSENT_LOWAT;

	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/*
	 * Keep little unsent data queued per stream: a sender is then free
	 * for the next block only when its stream is really moving, so a
	 * stream slowed by a loss takes fewer blocks instead of sitting on
	 * megabytes of them that the sink's ordered writer then waits for.
	 * On the emulated 1 Gbit/s, 50 ms, 0.1% loss path at -s 16 this
	 * took lanecp from ~640 to ~800 Mbit/s (iperf3 -P 16: ~800); on
	 * loopback it is no slower.
	 */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat,
	    sizeof(lowat));
}

/* 0, or -LC_ERR_STREAM with *err the errno. */
static int
lc_sock_listen_family(int family, uint32_t window, int loopback, int *fdp,
    uint16_t *port, int *err)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, off = 0;

	memset(&ss, 0, sizeof(ss));
	*err = 0;
	if ((fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
		*err = errno;
		return -LC_ERR_STREAM;
	}
	if (family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off,
		    sizeof(off));
		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_any;	/* (never loopback: see below) */
		len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htonl(loopback ? INADDR_LOOPBACK :
		    INADDR_ANY);
		len = sizeof(*s4);
	}
	lc_sock_set_window(fd, window);
	if (bind(fd, (struct sockaddr *)&ss, len) != 0 ||
	    listen(fd, 16) != 0) {
		*err = errno;
		close(fd);
		return -LC_ERR_STREAM;
	}
	len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
		*err = errno;
		close(fd);
		return -LC_ERR_STREAM;
	}
	*port = ntohs(family == AF_INET6 ?
	    ((struct sockaddr_in6 *)&ss)->sin6_port :
	    ((struct sockaddr_in *)&ss)->sin_port);
	*fdp = fd;
	return 0;
}

int
lc_sock_listen(uint32_t window, int loopback, int *fd, uint16_t *port,
    struct lc_err *e)
{
	int r = -LC_ERR_STREAM, err = EAFNOSUPPORT;

	*fd = -1;
	*port = 0;
	/* loopback: 127.0.0.1, where the controller's forwards arrive */
	if (!loopback)
		r = lc_sock_listen_family(AF_INET6, window, 0, fd, port, &err);
	if (r != 0 && (err == EAFNOSUPPORT || err == EADDRNOTAVAIL))
		r = lc_sock_listen_family(AF_INET, window, loopback, fd, port,
		    &err);
	if (r != 0)
		return lc_err_sys(e, LC_ERR_STREAM, err,
		    "cannot listen for data streams");
	return 0;
}

int
lc_addr_parse(const char *s, uint8_t out[16])
{
	struct in_addr a4;

	if (inet_pton(AF_INET6, s, out) == 1)
		return 0;
	if (inet_pton(AF_INET, s, &a4) != 1)
		return -LC_ERR_USAGE;
	memset(out, 0, 10);	/* ::ffff:a.b.c.d */
	out[10] = out[11] = 0xff;
	memcpy(out + 12, &a4, 4);
	return 0;
}

int
lc_addr_same(const char *a, const char *b)
{
	uint8_t x[16], y[16];

	return lc_addr_parse(a, x) == 0 && lc_addr_parse(b, y) == 0 &&
	    memcmp(x, y, sizeof(x)) == 0;
}

int
lc_sock_connect(const char *addr, uint16_t port, uint32_t window,
    int timeout_ms, const atomic_bool *cancel, int *fdp, struct lc_err *e)
{
	struct addrinfo hints, *res = NULL;
	struct pollfd pfd;
	char serv[8];
	int fd = -1, r, err = 0;
	socklen_t el = sizeof(err);

	*fdp = -1;
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	snprintf(serv, sizeof(serv), "%u", (unsigned)port);
	if ((r = getaddrinfo(addr, serv, &hints, &res)) != 0)
		return lc_err_set(e, LC_ERR_STREAM,
		    "bad data stream address %s: %s", addr, gai_strerror(r));
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0);
	if (fd < 0) {
		r = lc_err_sys(e, LC_ERR_STREAM, errno, "socket");
		goto out;
	}
	lc_sock_set_window(fd, window);
	lc_sock_tune(fd);
	if (connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
		if (errno != EINPROGRESS) {
			r = lc_err_sys(e, LC_ERR_STREAM, errno,
			    "data stream connect to %s port %u", addr,
			    (unsigned)port);
			goto out;
		}
		pfd.fd = fd;
		pfd.events = POLLOUT;
		/* short slices so that a cancel is seen promptly */
		for (int waited = 0;; waited += 100) {
			if (cancel != NULL && atomic_load(cancel)) {
				r = lc_err_set(e, LC_ERR_CANCELED, "canceled");
				goto out;
			}
			r = poll(&pfd, 1, 100);
			if (r != 0 && !(r < 0 && errno == EINTR))
				break;
			if (waited >= timeout_ms) {
				r = 0;
				break;
			}
		}
		if (r == 0) {
			r = lc_err_set(e, LC_ERR_STREAM,
			    "data stream connect to %s port %u: timed out",
			    addr, (unsigned)port);
			goto out;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
			err = errno;
		if (err != 0) {
			r = lc_err_sys(e, LC_ERR_STREAM, err,
			    "data stream connect to %s port %u", addr,
			    (unsigned)port);
			goto out;
		}
	}
	if ((r = lc_set_nonblock(fd, 0)) != 0) {
		r = lc_err_sys(e, LC_ERR_STREAM, errno, "fcntl");
		goto out;
	}
	*fdp = fd;
	fd = -1;	/* transferred */
	r = 0;
 out:
	if (fd >= 0)
		close(fd);
	freeaddrinfo(res);
	return r;
}

void
lc_conn_init(struct lc_conn *c, int fd)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	if (fd >= 0)
		lc_sock_peer_name(fd, c->peer, sizeof(c->peer));
}

int
lc_conn_set_deadline(struct lc_conn *c, uint32_t ms)
{
	if (lc_set_nonblock(c->fd, 1) != 0)
		return -LC_ERR_STREAM;
	c->budget_ms = ms;
	c->deadline_ms = lc_now_ms() + ms;
	return 0;
}

int
lc_conn_clear_deadline(struct lc_conn *c)
{
	c->deadline_ms = 0;
	return lc_set_nonblock(c->fd, 0) != 0 ? -LC_ERR_STREAM : 0;
}

int
lc_conn_wait(struct lc_conn *c, int writing, struct lc_err *e)
{
	struct pollfd pfd;

	for (;;) {
		uint64_t now = lc_now_ms(), left;
		int r;

		if (now >= c->deadline_ms)
			return lc_err_set(e, LC_ERR_TIMEOUT, "not finished "
			    "within %u s", (c->budget_ms + 999) / 1000);
		left = c->deadline_ms - now;
		pfd.fd = c->fd;
		pfd.events = writing ? POLLOUT : POLLIN;
		pfd.revents = 0;
		r = poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left);
		if (r > 0)
			return 0;	/* ready, or an error the call will see */
		if (r < 0 && errno != EINTR)
			return lc_err_sys(e, LC_ERR_STREAM, errno, "poll");
	}
}

void
lc_conn_host(const struct lc_conn *c, char *out, size_t outsz)
{
	const char *sp = strstr(c->peer, " port ");
	size_t n = sp != NULL ? (size_t)(sp - c->peer) : strlen(c->peer);

	if (outsz == 0)
		return;
	if (n >= outsz)
		n = outsz - 1;
	memcpy(out, c->peer, n);
	out[n] = '\0';
}

int
lc_hs_admit(const struct lc_hs_slot *p, size_t n, const char *host,
    uint32_t per_host, int *why)
{
	size_t used = 0, mine = 0;
	int old_mine = -1, old_all = -1;

	*why = 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i].host == NULL)
			continue;
		used++;
		if (old_all < 0 || p[i].t0 < p[old_all].t0)
			old_all = (int)i;
		if (strcmp(p[i].host, host) != 0)
			continue;
		mine++;
		if (old_mine < 0 || p[i].t0 < p[old_mine].t0)
			old_mine = (int)i;
	}
	if (mine >= per_host && old_mine >= 0) {
		*why = LC_HS_PER_HOST;
		return old_mine;
	}
	if (used >= n && old_all >= 0) {
		*why = LC_HS_ALL_BUSY;
		return old_all;
	}
	return -1;
}

/* Map a failed SSL_read/SSL_write to an error. */
static int
lc_conn_ssl_error(struct lc_conn *c, int ret, int reading, size_t got,
    struct lc_err *e)
{
	const char *dir = reading ? "from" : "to";
	int err = SSL_get_error(c->ssl, ret), saved = errno;
	unsigned long code = ERR_peek_last_error();
	const char *why = ERR_reason_error_string(code);

	ERR_clear_error();
	if (err == SSL_ERROR_ZERO_RETURN ||
	    (err == SSL_ERROR_SSL &&
	    ERR_GET_REASON(code) == SSL_R_UNEXPECTED_EOF_WHILE_READING) ||
	    (err == SSL_ERROR_SYSCALL && saved == 0)) {
		if (reading && got == 0)
			return lc_err_set(e, LC_ERR_EOF,
			    "data stream %s %s closed", dir, c->peer);
		return lc_err_set(e, LC_ERR_STREAM,
		    "data stream %s %s closed in mid-frame", dir, c->peer);
	}
	if (err == SSL_ERROR_WANT_READ && reading && c->patient)
		return 1;	/* receive timeout: keep waiting */
	if ((err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) &&
	    c->deadline_ms != 0) {
		int r = lc_conn_wait(c, err == SSL_ERROR_WANT_WRITE, e);
		return r == 0 ? 1 : r;	/* 1: ready, call again */
	}
	if (err == SSL_ERROR_SYSCALL) {
		if (saved == EAGAIN || saved == EWOULDBLOCK)
			return lc_err_set(e, LC_ERR_TIMEOUT, "data stream %s "
			    "%s: %s timed out", dir, c->peer,
			    reading ? "receive" : "send");
		return lc_err_sys(e, LC_ERR_STREAM, saved, "data stream %s %s",
		    dir, c->peer);
	}
	return lc_err_set(e, LC_ERR_INTEGRITY, "data stream %s %s failed its "
	    "integrity check (%s): data was changed in transit", dir, c->peer,
	    why != NULL ? why : "TLS error");
}

int
lc_conn_write_all(struct lc_conn *c, const void *p, size_t n,
    struct lc_err *e)
{
	const uint8_t *b = p;

	while (n > 0) {
		ssize_t w;
		if (c->ssl != NULL) {
			int k = SSL_write(c->ssl, b, n > INT_MAX ? INT_MAX :
			    (int)n);
			if (k <= 0) {
				int er = lc_conn_ssl_error(c, k, 0, 0, e);
				if (er == 1)
					continue;
				return er;
			}
			w = k;
		} else if ((w = send(c->fd, b, n, MSG_NOSIGNAL)) < 0) {
			int er;
			if (errno == EINTR)
				continue;
			if ((errno == EAGAIN || errno == EWOULDBLOCK) &&
			    c->deadline_ms != 0) {
				if ((er = lc_conn_wait(c, 1, e)) != 0)
					return er;
				continue;
			}
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return lc_err_set(e, LC_ERR_TIMEOUT,
				    "data stream to %s: send timed out",
				    c->peer);
			return lc_err_sys(e, LC_ERR_STREAM, errno,
			    "data stream to %s", c->peer);
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Plain TCP: fill iov (total bytes; got already read before it, for the
 * EOF message) with recvmsg(2) MSG_WAITALL.  Errors as lc_conn_read_full.
 */
static int
lc_conn_recv_iov(struct lc_conn *c, struct iovec *iov, int iovcnt,
    size_t total, size_t got, struct lc_err *e)
{
	struct msghdr mh;
	size_t left = total;

	while (left > 0) {
		ssize_t r;
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = iov;
		mh.msg_iovlen = (size_t)iovcnt;
		r = recvmsg(c->fd, &mh, MSG_WAITALL);
		if (r > 0 && c->last_rx_ms != NULL)
			atomic_store(c->last_rx_ms, lc_now_ms());
		if (r < 0) {
			int er;
			if (errno == EINTR)
				continue;
			if ((errno == EAGAIN || errno == EWOULDBLOCK) &&
			    c->deadline_ms != 0) {
				if ((er = lc_conn_wait(c, 0, e)) != 0)
					return er;
				continue;
			}
			if ((errno == EAGAIN || errno == EWOULDBLOCK) &&
			    c->patient)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return lc_err_set(e, LC_ERR_TIMEOUT,
				    "data stream from %s: receive timed out",
				    c->peer);
			return lc_err_sys(e, LC_ERR_STREAM, errno,
			    "data stream from %s", c->peer);
		}
		if (r == 0) {
			if (got == 0)
				return lc_err_set(e, LC_ERR_EOF,
				    "data stream from %s closed", c->peer);
			return lc_err_set(e, LC_ERR_STREAM,
			    "data stream from %s closed in mid-frame",
			    c->peer);
		}
		got += (size_t)r;
		left -= (size_t)r;
		/* skip what was filled */
		for (size_t k = (size_t)r; k > 0 && iovcnt > 0;) {
			if (k >= iov->iov_len) {
				k -= iov->iov_len;
				iov++;
				iovcnt--;
			} else {
				iov->iov_base = (uint8_t *)iov->iov_base + k;
				iov->iov_len -= k;
				k = 0;
			}
		}
	}
	return 0;
}

int
lc_conn_read_full(struct lc_conn *c, void *p, size_t n, struct lc_err *e)
{
	uint8_t *b = p;
	size_t got = 0;

	while (got < n) {
		if (c->ssl != NULL) {
			int k = SSL_read(c->ssl, b + got, n - got > INT_MAX ?
			    INT_MAX : (int)(n - got));
			if (k <= 0) {
				int er = lc_conn_ssl_error(c, k, 1, got, e);
				if (er == 1)
					continue;
				return er;
			}
			got += (size_t)k;
			if (c->last_rx_ms != NULL)
				atomic_store(c->last_rx_ms, lc_now_ms());
			continue;
		}
		{
			struct iovec iov = { b + got, n - got };
			return lc_conn_recv_iov(c, &iov, 1, n - got, got, e);
		}
	}
	return 0;
}

int
lc_conn_sealed(const struct lc_conn *c)
{
	return c->tx != NULL || c->rx != NULL;
}

int
lc_conn_read_rest(struct lc_conn *c, const uint8_t *hdr, size_t hdrlen,
    void *p, size_t n, struct lc_err *e)
{
	uint8_t tag[LC_AEAD_TAG_LEN];
	struct iovec iov[2];
	int r, k = 0;

	if (c->rx == NULL && n == 0)
		return 0;
	if (c->rx == NULL || c->ssl != NULL)	/* (TLS: handshakes only) */
		r = lc_conn_read_full(c, p, n, e);
	else {
		if (n > 0) {
			iov[k].iov_base = p;
			iov[k++].iov_len = n;
		}
		iov[k].iov_base = tag;
		iov[k++].iov_len = sizeof(tag);
		r = lc_conn_recv_iov(c, iov, k, n + sizeof(tag), 1, e);
	}
	if (r == -LC_ERR_EOF)
		r = lc_err_set(e, LC_ERR_STREAM, "data stream from %s closed "
		    "in mid-frame", c->peer);
	if (r != 0 || c->rx == NULL)
		return r;
	if ((r = lc_aead_open(c->rx, hdr, hdrlen, p, n, tag)) == 0)
		return 0;
	if (r == -LC_ERR_INTEGRITY)
		return lc_err_set(e, LC_ERR_INTEGRITY, "data stream from %s "
		    "failed its integrity check (frame %llu: bad tag): data "
		    "was changed in transit", c->peer,
		    (unsigned long long)lc_aead_count(c->rx));
	return lc_err_set(e, LC_ERR_INTERNAL, "data stream from %s: AEAD "
	    "failed", c->peer);
}

void
lc_conn_shutdown(struct lc_conn *c)
{
	if (c->fd >= 0)
		(void)shutdown(c->fd, SHUT_RDWR);
}

void
lc_conn_close(struct lc_conn *c)
{
	SSL_free(c->ssl);
	c->ssl = NULL;
	lc_aead_free(c->tx);	/* no key outlives its connection */
	lc_aead_free(c->rx);
	c->tx = c->rx = NULL;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* ---- handshake ---- */

static const char lc_hs_client_label[] = "lanecp data client v1";
static const char lc_hs_server_label[] = "lanecp data server v1";

static int
lc_hs_mac(const uint8_t key[LC_KEY_LEN], const char *label,
    const uint8_t nonce_s[LC_NONCE_LEN], const uint8_t nonce_c[LC_NONCE_LEN],
    uint32_t idx, uint8_t mac[LC_MAC_LEN])
{
	uint8_t msg[sizeof(lc_hs_client_label) + 2 * LC_NONCE_LEN + 4];
	size_t ll = strlen(label), off = 0;
	unsigned int maclen = 0;

	memcpy(msg, label, ll);
	off += ll;
	memcpy(msg + off, nonce_s, LC_NONCE_LEN);
	off += LC_NONCE_LEN;
	memcpy(msg + off, nonce_c, LC_NONCE_LEN);
	off += LC_NONCE_LEN;
	lc_poke_u32(msg + off, idx);
	off += 4;
	if (HMAC(EVP_sha256(), key, LC_KEY_LEN, msg, off, mac, &maclen) ==
	    NULL || maclen != LC_MAC_LEN)
		return -LC_ERR_INTERNAL;
	return 0;
}

/* ---- handshake messages: pure decoders ---- */

int
lc_stream_hs_get_hello(const uint8_t *p, size_t n,
    uint8_t nonce_s[LC_HS_NONCE_LEN], struct lc_err *e)
{
	memset(nonce_s, 0, LC_HS_NONCE_LEN);
	if (n != LC_HS_HELLO_LEN || memcmp(p, "LCDS", 4) != 0 ||
	    p[4] != LC_HS_VERSION)
		return lc_err_set(e, LC_ERR_STREAM, "not a lanecp sink (or "
		    "another version)");
	if (p[5] != 0 || p[6] != 0 || p[7] != 0)
		return lc_err_set(e, LC_ERR_STREAM, "bad sink hello flags");
	memcpy(nonce_s, p + 8, LC_HS_NONCE_LEN);
	return 0;
}

int
lc_stream_hs_put_resp(const uint8_t key[LC_KEY_LEN],
    const uint8_t nonce_s[LC_HS_NONCE_LEN],
    const uint8_t nonce_c[LC_HS_NONCE_LEN], uint32_t idx,
    uint8_t out[LC_HS_RESP_LEN])
{
	memcpy(out, "LCDC", 4);
	lc_poke_u32(out + 4, idx);
	memcpy(out + 8, nonce_c, LC_HS_NONCE_LEN);
	return lc_hs_mac(key, lc_hs_client_label, nonce_s, nonce_c, idx,
	    out + 8 + LC_HS_NONCE_LEN);
}

int
lc_stream_hs_put_fin(const uint8_t key[LC_KEY_LEN],
    const uint8_t nonce_s[LC_HS_NONCE_LEN],
    const uint8_t nonce_c[LC_HS_NONCE_LEN], uint32_t idx,
    uint8_t out[LC_HS_FIN_LEN])
{
	memcpy(out, "LCDA", 4);
	return lc_hs_mac(key, lc_hs_server_label, nonce_s, nonce_c, idx,
	    out + 4);
}

int
lc_stream_hs_check_resp(const uint8_t key[LC_KEY_LEN],
    const uint8_t nonce_s[LC_HS_NONCE_LEN], const uint8_t *p, size_t n,
    uint32_t nstreams, uint32_t *idx, uint8_t nonce_c[LC_HS_NONCE_LEN],
    struct lc_err *e)
{
	uint8_t want[LC_HS_MAC_LEN];
	uint32_t i;
	int ok;

	*idx = 0;
	memset(nonce_c, 0, LC_HS_NONCE_LEN);
	if (n != LC_HS_RESP_LEN || memcmp(p, "LCDC", 4) != 0)
		return lc_err_set(e, LC_ERR_STREAM, "not a lanecp data stream");
	i = lc_peek_u32(p + 4);
	if (i >= nstreams)
		return lc_err_set(e, LC_ERR_STREAM, "bad stream index %u", i);
	if (lc_hs_mac(key, lc_hs_client_label, nonce_s, p + 8, i, want) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "HMAC failed");
	ok = CRYPTO_memcmp(want, p + 8 + LC_HS_NONCE_LEN, LC_HS_MAC_LEN) == 0;
	OPENSSL_cleanse(want, sizeof(want));
	if (!ok)
		return lc_err_set(e, LC_ERR_STREAM,
		    "authentication failed (wrong transfer key)");
	*idx = i;
	memcpy(nonce_c, p + 8, LC_HS_NONCE_LEN);
	return 0;
}

int
lc_stream_hs_check_fin(const uint8_t key[LC_KEY_LEN],
    const uint8_t nonce_s[LC_HS_NONCE_LEN],
    const uint8_t nonce_c[LC_HS_NONCE_LEN], uint32_t idx, const uint8_t *p,
    size_t n, struct lc_err *e)
{
	uint8_t want[LC_HS_MAC_LEN];
	int ok;

	if (n != LC_HS_FIN_LEN || memcmp(p, "LCDA", 4) != 0)
		return lc_err_set(e, LC_ERR_STREAM, "bad sink proof");
	if (lc_hs_mac(key, lc_hs_server_label, nonce_s, nonce_c, idx,
	    want) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "HMAC failed");
	ok = CRYPTO_memcmp(want, p + 4, LC_HS_MAC_LEN) == 0;
	OPENSSL_cleanse(want, sizeof(want));
	if (!ok)
		return lc_err_set(e, LC_ERR_STREAM, "failed to prove the "
		    "transfer key");
	return 0;
}

int
lc_stream_hs_get_ident(const uint8_t *p, size_t n, uint32_t nstreams,
    uint32_t *idx, struct lc_err *e)
{
	*idx = 0;
	if (n != LC_HS_IDENT_LEN || memcmp(p, "LCDI", 4) != 0 ||
	    lc_peek_u32(p + 4) >= nstreams)
		return lc_err_set(e, LC_ERR_STREAM, "bad stream announcement");
	*idx = lc_peek_u32(p + 4);
	return 0;
}

/* ---- handshake on a connection ---- */

/*
 * After the TLS handshake and the stream's name: leave the record layer.
 * The source keeps a sealer, the sink an opener for frames toward the
 * sink, keyed from this handshake's exporter for this stream; the TLS
 * state is freed (nothing more goes through it), and every later byte on
 * the socket is an AEAD frame.  The sink reads the name with read-ahead
 * off, so no frame bytes can be left inside OpenSSL: checked anyway.
 */
static int
lc_conn_go_bulk(struct lc_conn *c, int server, struct lc_err *e)
{
	uint8_t secret[LC_AEAD_SECRET_LEN];
	struct lc_aead *a = NULL;
	int r;

	if (server && (SSL_pending(c->ssl) != 0 || SSL_has_pending(c->ssl)))
		return lc_err_set(e, LC_ERR_STREAM, "data stream from %s: "
		    "bytes after the stream name inside TLS", c->peer);
	if ((r = lc_tls_export_bulk(c->ssl, c->idx, LC_AEAD_DIR_TO_SINK,
	    secret)) == 0)
		r = lc_aead_new(secret, !server, &a);
	OPENSSL_cleanse(secret, sizeof(secret));
	if (r != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "cannot derive the bulk "
		    "keys of data stream %u", c->idx);
	if (server)
		c->rx = a;
	else
		c->tx = a;
	SSL_free(c->ssl);
	c->ssl = NULL;
	return 0;
}

/* Over TLS: the client names its stream inside the authenticated channel. */
static int
lc_stream_accept_tls(struct lc_conn *c, uint32_t nstreams, struct lc_err *e)
{
	uint8_t m[LC_HS_IDENT_LEN];
	struct lc_err sub;
	uint32_t idx;
	int r;

	lc_err_clear(&sub);
	if (lc_conn_read_full(c, m, sizeof(m), &sub) != 0)
		return lc_err_set(e, LC_ERR_STREAM, "handshake: %s", sub.msg);
	if ((r = lc_stream_hs_get_ident(m, sizeof(m), nstreams, &idx, e)) != 0)
		return r;
	c->idx = idx;
	return lc_conn_go_bulk(c, 1, e);
}

int
lc_stream_accept_auth(struct lc_conn *c, const uint8_t key[LC_KEY_LEN],
    uint32_t nstreams, struct lc_err *e)
{
	uint8_t hello[LC_HS_HELLO_LEN];
	uint8_t resp[LC_HS_RESP_LEN];
	uint8_t fin[LC_HS_FIN_LEN];
	uint8_t nonce_c[LC_HS_NONCE_LEN];
	struct lc_err sub;
	uint32_t idx;
	int r;

	if (c->ssl != NULL)
		return lc_stream_accept_tls(c, nstreams, e);
	lc_err_clear(&sub);
	memcpy(hello, "LCDS", 4);
	hello[4] = LC_HS_VERSION;
	hello[5] = 0;
	hello[6] = hello[7] = 0;
	if (RAND_bytes(hello + 8, LC_HS_NONCE_LEN) != 1)
		return lc_err_set(e, LC_ERR_INTERNAL, "RAND_bytes failed");
	if ((r = lc_conn_write_all(c, hello, sizeof(hello), &sub)) != 0 ||
	    (r = lc_conn_read_full(c, resp, sizeof(resp), &sub)) != 0)
		return lc_err_set(e, LC_ERR_STREAM, "handshake: %s", sub.msg);
	if ((r = lc_stream_hs_check_resp(key, hello + 8, resp, sizeof(resp),
	    nstreams, &idx, nonce_c, e)) != 0)
		return r;
	if (lc_stream_hs_put_fin(key, hello + 8, nonce_c, idx, fin) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "HMAC failed");
	if ((r = lc_conn_write_all(c, fin, sizeof(fin), &sub)) != 0)
		return lc_err_set(e, LC_ERR_STREAM, "handshake: %s", sub.msg);
	c->idx = idx;
	return 0;
}

int
lc_stream_connect_auth(struct lc_conn *c, const uint8_t key[LC_KEY_LEN],
    uint32_t idx, struct lc_err *e)
{
	uint8_t hello[LC_HS_HELLO_LEN];
	uint8_t resp[LC_HS_RESP_LEN];
	uint8_t fin[LC_HS_FIN_LEN];
	uint8_t nonce_s[LC_HS_NONCE_LEN], nonce_c[LC_HS_NONCE_LEN];
	struct lc_err sub;
	int r;

	lc_err_clear(&sub);
	if (c->ssl != NULL) {
		memcpy(hello, "LCDI", 4);
		lc_poke_u32(hello + 4, idx);
		if (lc_conn_write_all(c, hello, LC_HS_IDENT_LEN, &sub) != 0)
			return lc_err_set(e, LC_ERR_STREAM,
			    "data stream %u handshake: %s", idx, sub.msg);
		c->idx = idx;
		return lc_conn_go_bulk(c, 0, e);
	}
	if ((r = lc_conn_read_full(c, hello, sizeof(hello), &sub)) != 0)
		return lc_err_set(e, LC_ERR_STREAM,
		    "data stream %u handshake: %s", idx, sub.msg);
	if (lc_stream_hs_get_hello(hello, sizeof(hello), nonce_s, &sub) != 0)
		return lc_err_set(e, LC_ERR_STREAM, "data stream %u: %s: %s",
		    idx, c->peer, sub.msg);
	if (RAND_bytes(nonce_c, LC_HS_NONCE_LEN) != 1)
		return lc_err_set(e, LC_ERR_INTERNAL, "RAND_bytes failed");
	if (lc_stream_hs_put_resp(key, nonce_s, nonce_c, idx, resp) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "HMAC failed");
	if ((r = lc_conn_write_all(c, resp, sizeof(resp), &sub)) != 0 ||
	    (r = lc_conn_read_full(c, fin, sizeof(fin), &sub)) != 0)
		return lc_err_set(e, LC_ERR_STREAM,
		    "data stream %u handshake: %s", idx, sub.msg);
	if (lc_stream_hs_check_fin(key, nonce_s, nonce_c, idx, fin,
	    sizeof(fin), &sub) != 0)
		return lc_err_set(e, LC_ERR_STREAM, "data stream %u: %s %s",
		    idx, c->peer, sub.msg);
	c->idx = idx;
	return 0;
}

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
	lc_sock_tune(fd);
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
