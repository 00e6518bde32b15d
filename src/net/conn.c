/*
 * A data stream connection (struct lc_conn, stream.h): its deadline, and
 * its I/O, through TLS during the handshake or through the bulk AEAD once
 * sealed (lc_conn_sealed), or plain.
 */
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

