/*
 * SSH connection: the TCP connection to a host (see ssh_int.h), with a
 * deadline, and the socket options for the control connection: no Nagle
 * delay, TCP keepalive and, with ServerAliveInterval, TCP_USER_TIMEOUT.
 */
#include "err.h"
#include "log.h"
#include "clock.h"
#include "ssh_int.h"

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/*
 * Connect fd to ai by the deadline (0: none).  Returns 0 or
 * -LC_ERR_CONNECT with the reason's errno in e->sys_errno.
 */
static int
lc_ssh_connect_addr(int fd, const struct addrinfo *ai, uint64_t deadline,
    struct lc_err *e)
{
	struct pollfd p;
	socklen_t len;
	uint64_t now;
	int soerr = 0, n, ms;

	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return 0;
	if (errno != EINPROGRESS && errno != EINTR)
		return lc_err_sys(e, LC_ERR_CONNECT, errno, "connect");
	for (;;) {
		ms = -1;
		if (deadline != 0) {
			now = lc_now_ms();
			if (now >= deadline)
				return lc_err_sys(e, LC_ERR_CONNECT, ETIMEDOUT,
				    "connect");
			ms = deadline - now > INT_MAX ? INT_MAX :
			    (int)(deadline - now);
		}
		p.fd = fd;
		p.events = POLLOUT;
		p.revents = 0;
		if ((n = poll(&p, 1, ms)) < 0) {
			if (errno == EINTR)
				continue;
			return lc_err_sys(e, LC_ERR_CONNECT, errno, "poll");
		}
		if (n == 0)
			return lc_err_sys(e, LC_ERR_CONNECT, ETIMEDOUT,
			    "connect");
		break;
	}
	len = sizeof(soerr);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0)
		return lc_err_sys(e, LC_ERR_CONNECT, errno, "SO_ERROR");
	if (soerr != 0)
		return lc_err_sys(e, LC_ERR_CONNECT, soerr, "connect");
	return 0;
}

/* ServerAliveInterval * ServerAliveCountMax in ms, at most INT_MAX. */
int
lc__ssh_alive_ms(unsigned interval_s, unsigned count)
{
	uint64_t ms = (uint64_t)interval_s * count * 1000;

	return ms > INT_MAX ? INT_MAX : (int)ms;
}

static void
lc_ssh_sockopts(struct lc_ssh *s, unsigned alive_count, int sndbuf)
{
	int one = 1;

	if (sndbuf > 0 && setsockopt(s->sock, SOL_SOCKET, SO_SNDBUF, &sndbuf,
	    sizeof(sndbuf)) != 0)
		lc_log_debug("SO_SNDBUF: %s", strerror(errno));

	/* the control channel carries small messages: no Nagle delay */
	if (setsockopt(s->sock, IPPROTO_TCP, TCP_NODELAY, &one,
	    sizeof(one)) != 0)
		lc_log_debug("TCP_NODELAY: %s", strerror(errno));
	if (setsockopt(s->sock, SOL_SOCKET, SO_KEEPALIVE, &one,
	    sizeof(one)) != 0)
		lc_log_debug("SO_KEEPALIVE: %s", strerror(errno));
#ifdef TCP_USER_TIMEOUT
	/*
	 * libssh2 does not count unanswered keepalives; instead the kernel
	 * drops the connection when sent data (keepalives included) stays
	 * unacknowledged for ServerAliveInterval * ServerAliveCountMax.
	 */
	if (s->keepalive_s > 0) {
		unsigned ms = (unsigned)lc__ssh_alive_ms(s->keepalive_s,
		    alive_count);

		if (setsockopt(s->sock, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms,
		    sizeof(ms)) != 0)
			lc_log_debug("TCP_USER_TIMEOUT: %s", strerror(errno));
	}
#else
	(void)alive_count;
#endif
}

static void
lc_ssh_numeric(const struct sockaddr_storage *ss, socklen_t len, char *out,
    size_t outsz)
{
	if (getnameinfo((const struct sockaddr *)ss, len, out,
	    (socklen_t)outsz, NULL, 0, NI_NUMERICHOST) != 0)
		snprintf(out, outsz, "?");
}

int
lc__ssh_tcp(struct lc_ssh *s, const char *host, unsigned port, int af,
    uint64_t deadline, unsigned alive_count, int sndbuf, struct lc_err *e)
{
	struct addrinfo hints, *res = NULL, *ai;
	struct sockaddr_storage ss;
	struct lc_err ce;
	socklen_t sl;
	char portstr[16];
	int fd = -1, err = EHOSTUNREACH, gai;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = af == 4 ? AF_INET : af == 6 ? AF_INET6 : AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	snprintf(portstr, sizeof(portstr), "%u", port);
	if ((gai = getaddrinfo(host, portstr, &hints, &res)) != 0)
		return lc_err_set(e, LC_ERR_CONNECT, "cannot resolve %s: %s",
		    host, gai == EAI_SYSTEM ? strerror(errno) :
		    gai_strerror(gai));
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
		    SOCK_NONBLOCK, ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		lc_err_clear(&ce);
		if (lc_ssh_connect_addr(fd, ai, deadline, &ce) == 0)
			break;
		err = ce.sys_errno;
		lc_log_verbose("connect to %s port %u: %s", host, port,
		    strerror(err));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return lc_err_set(e, LC_ERR_CONNECT,
		    "cannot connect to %s port %u: %s", host, port,
		    strerror(err));
	s->sock = fd;
	lc_ssh_sockopts(s, alive_count, sndbuf);
	sl = sizeof(ss);
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
		lc_ssh_numeric(&ss, sl, s->peer, sizeof(s->peer));
	sl = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		lc_ssh_numeric(&ss, sl, s->local, sizeof(s->local));
	lc_log_verbose("connected to %s port %u (%s)", host, port, s->peer);
	return 0;
}
