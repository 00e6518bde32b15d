/*
 * Data stream sockets (stream.h): buffer sizes, the options every data
 * stream socket gets, listening on an ephemeral port, dialling with a
 * deadline, numeric addresses.
 */
#include "stream.h"
#include "stream_int.h"
#include "aead.h"
#include "buf.h"
#include "tls.h"
#include "clock.h"
#include "fdio.h"
#include "log.h"
#include "path.h"
#include "thread.h"
#include "wake.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
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

/* bytes a data stream may hold unsent in its socket (TCP_NOTSENT_LOWAT) */
#define LC_NOTSENT_LOWAT (64 << 10)


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

/* "ADDR port N" of sa, numeric (no resolver: see lc_sock_numeric) */
static void
lc_sockaddr_name(const struct sockaddr *sa, socklen_t len, char *out,
    size_t outsz)
{
	const struct sockaddr_in *in4 = (const void *)sa;
	const struct sockaddr_in6 *in6 = (const void *)sa;
	char host[INET6_ADDRSTRLEN], ifname[IF_NAMESIZE];
	unsigned port;

	if (sa->sa_family == AF_INET && len >= sizeof(*in4) &&
	    inet_ntop(AF_INET, &in4->sin_addr, host, sizeof(host)) != NULL) {
		port = ntohs(in4->sin_port);
	} else if (sa->sa_family == AF_INET6 && len >= sizeof(*in6) &&
	    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host)) != NULL) {
		port = ntohs(in6->sin6_port);
		if (strncmp(host, "::ffff:", 7) == 0 &&	/* v4-mapped */
		    strchr(host + 7, '.') != NULL)
			memmove(host, host + 7, strlen(host + 7) + 1);
		else if (in6->sin6_scope_id != 0 &&
		    if_indextoname(in6->sin6_scope_id, ifname) != NULL) {
			snprintf(out, outsz, "%s%%%s port %u", host, ifname,
			    port);
			return;
		}
	} else {
		snprintf(out, outsz, "?");
		return;
	}
	snprintf(out, outsz, "%s port %u", host, port);
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
void
lc__sock_tune(int fd)
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
	 * loopback it is no slower.  64 KiB rather than 256: 10,000 small
	 * files over that path finish about 6 % sooner (a stream that loses
	 * a segment near the end holds less of the tail), one big file
	 * takes as long (bench/RESULTS.md, issue 23).
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

/*
 * The interface of an IPv6 scope ("%eth0" as getnameinfo writes a
 * link-local address, or "%2"): its index, or 0 when there is none.
 */
static uint32_t
lc_sock_scope(const char *s)
{
	uint64_t v = 0;
	size_t n = strspn(s, "0123456789");

	if (n == 0 || s[n] != '\0')
		return if_nametoindex(s);	/* an ioctl: no lookup */
	if (n > 10)
		return 0;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (uint64_t)(s[i] - '0');
	return v <= UINT32_MAX ? (uint32_t)v : 0;
}

/*
 * addr, a numeric IPv4 address or an IPv6 one with an optional %scope,
 * and port into *ss and *len: never a name, so never the resolver (the
 * controller sends numbers, and the static agent must not load the
 * host's NSS modules: idname.h).  0, or -1 for anything else.
 */
static int
lc_sock_numeric(const char *addr, uint16_t port,
    struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)(void *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)(void *)ss;
	char host[LC_ADDR_MAX];
	char *pct;

	memset(ss, 0, sizeof(*ss));
	if (strlen(addr) >= sizeof(host))
		return -1;
	if (inet_pton(AF_INET, addr, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		*len = (socklen_t)sizeof(*in4);
		return 0;
	}
	snprintf(host, sizeof(host), "%s", addr);
	if ((pct = strchr(host, '%')) != NULL) {
		*pct = '\0';
		if ((in6->sin6_scope_id = lc_sock_scope(pct + 1)) == 0)
			return -1;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1)
		return -1;
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(port);
	*len = (socklen_t)sizeof(*in6);
	return 0;
}

int
lc_sock_connect(const char *addr, uint16_t port, uint32_t window,
    int timeout_ms, const atomic_bool *cancel, int *fdp, struct lc_err *e)
{
	struct sockaddr_storage ss;
	socklen_t sslen = 0;
	struct pollfd pfd;
	char safe[LC_ADDR_MAX];
	int fd = -1, r, err = 0;
	socklen_t el = sizeof(err);

	*fdp = -1;
	if (lc_sock_numeric(addr, port, &ss, &sslen) != 0) {
		lc_printable(addr, safe, sizeof(safe));
		return lc_err_set(e, LC_ERR_STREAM, "bad data stream address "
		    "%s: not a numeric address", safe);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0);
	if (fd < 0) {
		r = lc_err_sys(e, LC_ERR_STREAM, errno, "socket");
		goto out;
	}
	lc_sock_set_window(fd, window);
	lc__sock_tune(fd);
	if (connect(fd, (struct sockaddr *)&ss, sslen) != 0) {
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
	return r;
}

