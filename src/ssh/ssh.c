/*
 * SSH connection and exec channel (see lanecp/ssh.h), on libssh2.
 *
 * The session runs in libssh2's non-blocking mode from the start; every
 * step that must wait polls the socket in the direction libssh2 reports
 * (libssh2_session_block_directions) with a deadline: ConnectTimeout for
 * TCP connect plus SSH handshake, and a per-step limit afterwards
 * (ServerAliveInterval * ServerAliveCountMax, or LC_SSH_STEP_TIMEOUT_MS).
 *
 * This file holds the session: TCP connect, handshake, host key check,
 * keepalive setup, the public lc_ssh_* entry points, and the proxied
 * connections: ProxyJump / -J (a chain of sessions, each later one over a
 * direct-tcpip channel of the one before, bridged to a socketpair by that
 * session's pump thread: see lc_ssh_forward()) and ProxyCommand (a child
 * "/bin/sh -c CMD" on a socketpair).
 *
 * Threads and descriptors: lc_ssh_connect() runs on the caller's thread.
 * Once a jump host's forward pump runs, that pump thread alone touches
 * the jump host's session and owns its socket and its end of the
 * socketpair; the next session (on the caller's thread) owns the other
 * end as its socket.  lc_ssh_free() frees a session first and then the
 * jump host it went through (s->via), so each pump stops after the
 * session that used it said goodbye.  Authentication
 * is in auth.c (key files in keyfile.c, the passphrase prompt in
 * askpass.c) and the exec channel pump, with the libssh2 1.10 workarounds,
 * in pump.c.
 */
#include "ssh.h"
#include "err.h"
#include "knownhosts.h"
#include "revokedkeys.h"
#include "log.h"
#include "parse.h"
#include "sshconf.h"
#include "clock.h"
#include "fdio.h"
#include "thread.h"
#include "wake.h"
#include "version.h"
#include "ssh_int.h"

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libssh2.h>

#define LC_SSH_ALIVE_INTERVAL 15	/* ServerAliveInterval default */
#define LC_SSH_ALIVE_COUNT 3		/* ServerAliveCountMax default */
#define LC_SSH_STEP_TIMEOUT_MS (120 * 1000)	/* without keepalives */
#define LC_SSH_JUMP_MAX 16		/* hosts in one ProxyJump / -J list */
#define LC_SSH_PROXYCMD_MAX 4096	/* expanded ProxyCommand */

extern char **environ;

static pthread_once_t lc_ssh_once = PTHREAD_ONCE_INIT;
static int lc_ssh_init_rc;

static void
lc_ssh_init_once(void)
{
	lc_ssh_init_rc = libssh2_init(0);
}

const char *
lc__ssh_liberr(struct lc_ssh *s)
{
	char *msg = NULL;

	if (s->sess == NULL)
		return "no session";
	libssh2_session_last_error(s->sess, &msg, NULL, 0);
	return msg != NULL && *msg != '\0' ? msg : "unknown libssh2 error";
}

/* Session-level libssh2 errors: the connection is unusable after them. */
int
lc__ssh_fatal(int rc)
{
	switch (rc) {
	case LIBSSH2_ERROR_SOCKET_NONE:
	case LIBSSH2_ERROR_BANNER_RECV:
	case LIBSSH2_ERROR_BANNER_SEND:
	case LIBSSH2_ERROR_INVALID_MAC:
	case LIBSSH2_ERROR_KEX_FAILURE:
	case LIBSSH2_ERROR_ALLOC:
	case LIBSSH2_ERROR_SOCKET_SEND:
	case LIBSSH2_ERROR_KEY_EXCHANGE_FAILURE:
	case LIBSSH2_ERROR_TIMEOUT:
	case LIBSSH2_ERROR_DECRYPT:
	case LIBSSH2_ERROR_SOCKET_DISCONNECT:
	case LIBSSH2_ERROR_PROTO:
	case LIBSSH2_ERROR_SOCKET_TIMEOUT:
	case LIBSSH2_ERROR_SOCKET_RECV:
	case LIBSSH2_ERROR_ENCRYPT:
	case LIBSSH2_ERROR_BAD_SOCKET:
		return 1;
	default:
		return 0;
	}
}

uint64_t
lc__ssh_deadline(const struct lc_ssh *s)
{
	if (s->step_timeout_ms <= 0)
		return 0;
	return lc_now_ms() + (uint64_t)s->step_timeout_ms;
}

/* See ssh_int.h. */
int
lc__ssh_waitsock(struct lc_ssh *s, uint64_t deadline)
{
	struct pollfd p;
	uint64_t now;
	int dir, ms = -1;

	dir = libssh2_session_block_directions(s->sess);
	p.fd = s->sock;
	p.events = 0;
	p.revents = 0;
	if (dir & LIBSSH2_SESSION_BLOCK_INBOUND)
		p.events |= POLLIN;
	if (dir & LIBSSH2_SESSION_BLOCK_OUTBOUND)
		p.events |= POLLOUT;
	if (p.events == 0) {
		/* EAGAIN without a direction (agent round trip): retry soon */
		p.events = POLLIN;
		ms = 50;
	}
	if (deadline != 0) {
		now = lc_now_ms();
		if (now >= deadline) {
			libssh2_session_set_last_error(s->sess,
			    LIBSSH2_ERROR_TIMEOUT, "timed out");
			return -LC_ERR_TIMEOUT;
		}
		if (ms < 0 || deadline - now < (uint64_t)ms)
			ms = deadline - now > INT_MAX ? INT_MAX :
			    (int)(deadline - now);
	}
	if (poll(&p, 1, ms) < 0 && errno != EINTR)
		return -LC_ERR_CONNECT;
	return 0;
}

/* ------------------------------------------------------------------ */
/* TCP */

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
static int
lc_ssh_alive_ms(unsigned interval_s, unsigned count)
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
		unsigned ms = (unsigned)lc_ssh_alive_ms(s->keepalive_s,
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

static int
lc_ssh_tcp(struct lc_ssh *s, const char *host, unsigned port, int af,
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

/* ------------------------------------------------------------------ */
/* SSH handshake and host key */

/* ssh's default host key algorithms that libssh2 1.10 implements. */
static const char *const lc_ssh_hostkey_algs[] = {
	"ssh-ed25519",
	"ecdsa-sha2-nistp256",
	"ecdsa-sha2-nistp384",
	"ecdsa-sha2-nistp521",
	"rsa-sha2-512",
	"rsa-sha2-256",
};

/* Ask for a host key type known_hosts has for this host first. */
static int
lc_ssh_hostkey_prefs(struct lc_ssh *s, struct lc_knownhosts *kh,
    const char *const *names, size_t nnames, struct lc_err *e)
{
	const char *algs[sizeof(lc_ssh_hostkey_algs) /
	    sizeof(lc_ssh_hostkey_algs[0])];
	const char **sup = NULL;
	char pref[512];
	size_t i, nalgs = 0;
	int nsup, j, nknown;

	nsup = libssh2_session_supported_algs(s->sess,
	    LIBSSH2_METHOD_HOSTKEY, &sup);
	for (i = 0; i < sizeof(algs) / sizeof(algs[0]); i++) {
		for (j = 0; j < nsup; j++) {
			if (strcmp(sup[j], lc_ssh_hostkey_algs[i]) == 0) {
				algs[nalgs++] = lc_ssh_hostkey_algs[i];
				break;
			}
		}
	}
	if (nsup > 0)
		libssh2_free(s->sess, sup);
	if (nalgs == 0)
		return lc_err_set(e, LC_ERR_INTERNAL,
		    "libssh2 supports none of the host key algorithms");
	nknown = lc_knownhosts_order_algs(kh, names, nnames, algs, nalgs,
	    pref, sizeof(pref));
	if (nknown < 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "host key algorithms");
	lc_log_debug("host key algorithms (%d known): %s", nknown, pref);
	if (libssh2_session_method_pref(s->sess, LIBSSH2_METHOD_HOSTKEY,
	    pref) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL,
		    "setting host key algorithms: %s", lc__ssh_liberr(s));
	return 0;
}

static int
lc_ssh_handshake(struct lc_ssh *s, const char *host, unsigned port,
    uint64_t deadline, struct lc_err *e)
{
	int rc;

	while ((rc = libssh2_session_handshake(s->sess,
	    (libssh2_socket_t)s->sock)) == LIBSSH2_ERROR_EAGAIN) {
		if (lc__ssh_waitsock(s, deadline) != 0)
			return lc_err_set(e, LC_ERR_CONNECT,
			    "cannot connect to %s port %u: timed out during "
			    "the SSH handshake", host, port);
	}
	if (rc != 0)
		return lc_err_set(e, LC_ERR_CONNECT,
		    "cannot connect to %s port %u: SSH handshake failed: %s",
		    host, port, lc__ssh_liberr(s));
	s->handshaken = 1;
	lc_log_debug("server %s, host key %s, cipher %s",
	    libssh2_session_banner_get(s->sess),
	    libssh2_session_methods(s->sess, LIBSSH2_METHOD_HOSTKEY),
	    libssh2_session_methods(s->sess, LIBSSH2_METHOD_CRYPT_CS));
	return 0;
}

struct lc_ssh_khfiles {
	const char *user[LC_SSHCONF_MAX_FILES];
	size_t nuser;
	const char *all[2 * LC_SSHCONF_MAX_FILES];
	size_t nall;
	char defaults[2][PATH_MAX];
};

static void
lc_ssh_khfiles(const struct lc_sshconf *c, const char *home,
    struct lc_ssh_khfiles *f)
{
	static const char *const global_def[] = {
		"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2",
	};
	size_t i;

	memset(f, 0, sizeof(*f));
	if (c->n_user_known_hosts > 0) {
		for (i = 0; i < c->n_user_known_hosts &&
		    i < LC_SSHCONF_MAX_FILES; i++)
			f->user[f->nuser++] = c->user_known_hosts[i];
	} else if (!c->user_known_hosts_none) {
		/* a name cut short would be another file: leave it out */
		if ((size_t)snprintf(f->defaults[0], sizeof(f->defaults[0]),
		    "%s/.ssh/known_hosts", home) < sizeof(f->defaults[0]))
			f->user[f->nuser++] = f->defaults[0];
		if ((size_t)snprintf(f->defaults[1], sizeof(f->defaults[1]),
		    "%s/.ssh/known_hosts2", home) < sizeof(f->defaults[1]))
			f->user[f->nuser++] = f->defaults[1];
	}
	for (i = 0; i < f->nuser; i++)
		f->all[f->nall++] = f->user[i];
	if (c->n_global_known_hosts > 0) {
		for (i = 0; i < c->n_global_known_hosts &&
		    i < LC_SSHCONF_MAX_FILES; i++)
			f->all[f->nall++] = c->global_known_hosts[i];
	} else if (!c->global_known_hosts_none) {
		f->all[f->nall++] = global_def[0];
		f->all[f->nall++] = global_def[1];
	}
}

/*
 * RevokedHostKeys, checked before known_hosts and whatever
 * StrictHostKeyChecking says, as ssh does; a file that cannot be used
 * refuses the host (ssh refuses every host key then).
 */
static int
lc_ssh_revoked_file(const struct lc_sshconf *c, const char *name,
    const char *label, const char *fp, const unsigned char *key, size_t len,
    struct lc_err *e)
{
	struct lc_revoked_result rr;
	struct lc_err e2;
	int r;

	lc_err_clear(&e2);
	if ((r = lc_revokedkeys_check(c->revoked_host_keys, key, len, &rr,
	    &e2)) != 0)
		return lc_err_set(e, r == -LC_ERR_NOMEM ? LC_ERR_NOMEM :
		    LC_ERR_HOSTKEY, "cannot check the host key of %s against "
		    "%.*s; refusing it, as ssh does", name,
		    (int)(LC_ERR_MSG_MAX - 128), e2.msg);
	if (!rr.revoked)
		return 0;
	if (rr.krl)
		return lc_err_set(e, LC_ERR_HOSTKEY, "REVOKED HOST KEY for %s: "
		    "server offers %s key %s, which the RevokedHostKeys KRL %s "
		    "revokes; refusing to connect", name, label, fp,
		    c->revoked_host_keys);
	return lc_err_set(e, LC_ERR_HOSTKEY, "REVOKED HOST KEY for %s: server "
	    "offers %s key %s, which RevokedHostKeys %s line %lu lists; "
	    "refusing to connect", name, label, fp, c->revoked_host_keys,
	    rr.line);
}

/*
 * known_hosts: a revoked key is refused in every mode; a known key is
 * accepted; a changed one refused.  An unknown key is refused unless
 * StrictHostKeyChecking is accept-new or no, which record it, also when a
 * @cert-authority line covers the host (as ssh does when the host offers
 * a plain key: lanecp cannot ask for its certificate), with a warning.
 */
static int
lc_ssh_verify_host(struct lc_ssh *s, struct lc_knownhosts *kh,
    const struct lc_sshconf *c, const struct lc_ssh_khfiles *f,
    const char *home, const char *const *names, size_t nnames,
    struct lc_err *e)
{
	const unsigned char *key;
	struct lc_kh_result res;
	struct lc_err e2;
	char fp[64];
	const char *label;
	size_t len = 0;
	int type = 0, r;

	key = (const unsigned char *)libssh2_session_hostkey(s->sess, &len,
	    &type);
	if (key == NULL || len == 0)
		return lc_err_set(e, LC_ERR_CONNECT, "%s: no host key: %s",
		    names[0], lc__ssh_liberr(s));
	lc_knownhosts_fingerprint(key, len, fp, sizeof(fp));
	label = lc_knownhosts_type_label(type);
	if (c->revoked_host_keys != NULL && (r = lc_ssh_revoked_file(c,
	    names[0], label, fp, key, len, e)) != 0)
		return r;
	if ((r = lc_knownhosts_check(kh, names, nnames, key, len, type, &res,
	    e)) != 0)
		return r;
	switch (res.status) {
	case LC_KH_REVOKED:
		return lc_err_set(e, LC_ERR_HOSTKEY, "REVOKED HOST KEY for %s: "
		    "server offers %s key %s, which %s line %lu marks as "
		    "revoked (@revoked); refusing to connect", res.name, label,
		    fp, res.file != NULL ? res.file : "known_hosts", res.line);
	case LC_KH_MATCH:
		lc_log_debug("host key %s %s known as %s", label, fp, res.name);
		return 0;
	case LC_KH_CHANGED:
		if (res.file != NULL && res.line > 0)
			return lc_err_set(e, LC_ERR_HOSTKEY,
			    "REMOTE HOST IDENTIFICATION HAS CHANGED for %s: "
			    "server offers %s key %s, %s line %lu has a "
			    "different key; remove it with ssh-keygen -R '%s' "
			    "-f %s if the change is expected", res.name, label,
			    fp, res.file, res.line, res.name, res.file);
		return lc_err_set(e, LC_ERR_HOSTKEY,
		    "REMOTE HOST IDENTIFICATION HAS CHANGED for %s: server "
		    "offers %s key %s, known_hosts has a different key; remove "
		    "it with ssh-keygen -R '%s' if the change is expected",
		    res.name, label, fp, res.name);
	case LC_KH_CA:
		if (c->strict != LC_STRICT_ACCEPT_NEW &&
		    c->strict != LC_STRICT_NO)
			return lc_err_set(e, LC_ERR_HOSTKEY, "host key for %s "
			    "is vouched for by a certificate authority "
			    "(@cert-authority in %s line %lu), and lanecp cannot "
			    "check host certificates yet; the host offers %s key "
			    "%s: add it to %s once you have checked it",
			    res.name, res.file, res.line, label, fp,
			    f->nuser > 0 ? f->user[0] : "a known_hosts file");
		lc_log_warn("%s is vouched for by a certificate authority "
		    "(@cert-authority in %s line %lu), and lanecp cannot check "
		    "host certificates; accepting its %s key %s on first use "
		    "(StrictHostKeyChecking %s)", res.name, res.file, res.line,
		    label, fp, c->strict == LC_STRICT_NO ? "no" : "accept-new");
		break;
	case LC_KH_UNKNOWN:
		break;
	}
	if (c->strict != LC_STRICT_ACCEPT_NEW && c->strict != LC_STRICT_NO)
		return lc_err_set(e, LC_ERR_HOSTKEY,
		    "host key for %s is not known (%s key %s); add it to %s "
		    "(e.g. with ssh-keyscan) or set StrictHostKeyChecking "
		    "accept-new", names[0], label, fp,
		    f->nuser > 0 ? f->user[0] : "a known_hosts file");
	if (f->nuser == 0) {
		lc_log_warn("accepted new %s host key %s for %s without "
		    "recording it (UserKnownHostsFile none)", label, fp,
		    names[0]);
		return 0;
	}
	lc_err_clear(&e2);
	if (lc_knownhosts_add(f->user[0], home, names[0], key, len,
	    c->hash_known_hosts == 1, &e2) != 0)
		lc_log_warn("accepted new %s host key %s for %s but could not "
		    "record it: %s", label, fp, names[0], e2.msg);
	else
		lc_log_info("permanently added '%s' (%s key %s) to %s",
		    names[0], label, fp, f->user[0]);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Key files */

/* ------------------------------------------------------------------ */
/* Connect */

static int
lc_ssh_local_user(char *user, size_t usz, char *home, size_t hsz,
    struct lc_err *e)
{
	struct passwd pw, *res = NULL;
	const char *u = NULL, *h = NULL;
	char buf[4096];

	if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) == 0 &&
	    res != NULL) {
		u = res->pw_name;
		h = res->pw_dir;	/* ssh uses this, not $HOME */
	}
	if (u == NULL && (u = getenv("USER")) == NULL)
		u = getenv("LOGNAME");
	if (h == NULL)
		h = getenv("HOME");
	if (u == NULL || *u == '\0' || h == NULL || *h == '\0')
		return lc_err_set(e, LC_ERR_CONFIG,
		    "cannot find the local user name and home directory");
	if ((size_t)snprintf(user, usz, "%s", u) >= usz ||
	    (size_t)snprintf(home, hsz, "%s", h) >= hsz)
		return lc_err_set(e, LC_ERR_CONFIG,
		    "local user name or home directory too long");
	return 0;
}

static struct lc_ssh *
lc_ssh_new(void)
{
	struct lc_ssh *s;
	pthread_condattr_t ca;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->sock = -1;
	s->pump_fd = -1;
	s->wake.rfd = s->wake.wfd = -1;
	s->status = -1;
	atomic_init(&s->stop, false);
	if (pthread_condattr_init(&ca) != 0) {
		free(s);
		return NULL;
	}
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (pthread_mutex_init(&s->mu, NULL) != 0) {
		pthread_condattr_destroy(&ca);
		free(s);
		return NULL;
	}
	if (pthread_cond_init(&s->cv, &ca) != 0) {
		pthread_mutex_destroy(&s->mu);
		pthread_condattr_destroy(&ca);
		free(s);
		return NULL;
	}
	pthread_condattr_destroy(&ca);
	s->sync_ready = 1;
	return s;
}

static int
lc_ssh_session(struct lc_ssh *s, struct lc_err *e)
{
	if ((s->sess = libssh2_session_init_ex(NULL, NULL, NULL, s)) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "libssh2_session_init");
	libssh2_session_set_blocking(s->sess, 0);
	libssh2_session_banner_set(s->sess, "SSH-2.0-lanecp_" LC_VERSION_STRING);
	return 0;
}

/* The local user and home directory, shared by every hop. */
struct lc_ssh_env {
	char luser[256];
	char home[PATH_MAX];
};

/* One machine to log in to: a jump host or the target. */
struct lc_ssh_hop {
	const char *host;	/* name as given (an alias, say) */
	const char *user;	/* user@ or NULL */
	unsigned port;		/* :port, 0: from the config */
	const char *identity_file;	/* -i (the target only) */
	int jump;		/* a jump host (its proxy config is ignored) */
};

/*
 * Resolve hop through ssh_config into conf, with the hop's user and port
 * filled in (conf->user: the user to log in as; conf->port: never 0).
 */
static int
lc_ssh_resolve(const struct lc_ssh_opts *o, const struct lc_ssh_env *env,
    const struct lc_ssh_hop *hop, struct lc_sshconf *conf, struct lc_err *e)
{
	struct lc_sshconf_ctx ctx;
	int r;

	memset(&ctx, 0, sizeof(ctx));
	ctx.config_file = o->config_file;
	ctx.home = env->home;
	ctx.local_user = env->luser;
	ctx.cmdline_user = hop->user;
	if ((r = lc_sshconf_resolve(&ctx, hop->host, conf, e)) != 0)
		return lc_err_ensure(e, r, "ssh configuration");
	if (conf->user[0] == '\0')
		snprintf(conf->user, sizeof(conf->user), "%s", env->luser);
	if (hop->port != 0)
		conf->port = (uint16_t)hop->port;
	if (conf->port == 0)
		conf->port = 22;
	if (hop->jump && (conf->proxy_jump != NULL ||
	    conf->proxy_command != NULL)) {
		/* as documented in ssh.h: one level of proxying */
		lc_log_debug("jump host %s: ignoring its own %s", hop->host,
		    conf->proxy_jump != NULL ? "ProxyJump" : "ProxyCommand");
		free(conf->proxy_jump);
		free(conf->proxy_command);
		conf->proxy_jump = conf->proxy_command = NULL;
	}
	return 0;
}

/* Reap a ProxyCommand child, killing it first if it still runs. */
static void
lc_ssh_reap(pid_t pid)
{
	pid_t w;
	int st;

	if (pid <= 0)
		return;
	while ((w = waitpid(pid, &st, WNOHANG)) < 0 && errno == EINTR)
		;
	if (w != 0)
		return;
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

/*
 * Log in to one machine: a new lc_ssh on fd (a socketpair end from a
 * forward or a ProxyCommand) or, with fd < 0, over TCP to conf's HostName;
 * host key check and authentication as for any host.  fd, via and pid
 * pass to the new connection in every case (freed with it on error).
 */
static int
lc_ssh_login(const struct lc_ssh_opts *o, const struct lc_ssh_env *env,
    const struct lc_ssh_hop *hop, const struct lc_sshconf *conf, int fd,
    struct lc_ssh *via, pid_t pid, struct lc_ssh **out, struct lc_err *e)
{
	struct lc_knownhosts *kh = NULL;
	struct lc_ssh_khfiles khf;
	struct lc_ssh *s;
	char names[2][LC_KH_NAME_MAX];
	const char *namev[2];
	unsigned port = conf->port, count;
	size_t nnames = 0;
	uint64_t deadline = 0;
	int r, batch;

	*out = NULL;
	if ((s = lc_ssh_new()) == NULL) {
		if (fd >= 0)
			close(fd);
		lc_ssh_free(via);
		lc_ssh_reap(pid);
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	}
	s->sock = fd;
	s->via = via;
	s->proxy_pid = pid;
	s->proxied = fd >= 0;
	batch = o->batch || conf->batch_mode == 1;
	snprintf(s->host, sizeof(s->host), "%s", hop->host);
	snprintf(s->name, sizeof(s->name), "%s@%s", conf->user, hop->host);
	snprintf(s->target, sizeof(s->target), "%s", conf->hostname);
	s->keepalive_s = conf->server_alive_interval < 0 ?
	    LC_SSH_ALIVE_INTERVAL : (unsigned)conf->server_alive_interval;
	count = conf->server_alive_count_max < 1 ? LC_SSH_ALIVE_COUNT :
	    (unsigned)conf->server_alive_count_max;
	s->step_timeout_ms = s->keepalive_s > 0 ?
	    lc_ssh_alive_ms(s->keepalive_s, count) : LC_SSH_STEP_TIMEOUT_MS;
	if (conf->connect_timeout > 0)
		deadline = lc_now_ms() + (uint64_t)conf->connect_timeout * 1000;

	if (fd >= 0) {
		if (lc_set_nonblock(fd, 1) != 0) {
			r = lc_err_sys(e, LC_ERR_INTERNAL, errno, "nonblock");
			goto out;
		}
	} else if ((r = lc_ssh_tcp(s, conf->hostname, port,
	    conf->address_family, deadline, count, o->sndbuf, e)) != 0)
		goto out;
	if ((r = lc_ssh_session(s, e)) != 0)
		goto out;

	/* known_hosts: HostName as ssh does, then the name as given */
	if (lc_knownhosts_name(conf->hostname, port, names[0],
	    sizeof(names[0])) != 0 ||
	    lc_knownhosts_name(hop->host, port, names[1],
	    sizeof(names[1])) != 0) {
		r = lc_err_set(e, LC_ERR_CONFIG, "host name too long");
		goto out;
	}
	namev[nnames++] = names[0];
	if (strcmp(names[0], names[1]) != 0)
		namev[nnames++] = names[1];
	lc_ssh_khfiles(conf, env->home, &khf);
	if ((r = lc_knownhosts_load(s->sess, khf.all, khf.nall, namev, nnames,
	    &kh, e)) != 0 ||
	    (r = lc_ssh_hostkey_prefs(s, kh, namev, nnames, e)) != 0 ||
	    (r = lc_ssh_handshake(s, conf->hostname, port, deadline, e)) != 0 ||
	    (r = lc_ssh_verify_host(s, kh, conf, &khf, env->home, namev,
	    nnames, e)) != 0)
		goto out;
	lc_knownhosts_free(kh);
	kh = NULL;
	if ((r = lc__ssh_authenticate(s, conf, conf->user, hop->identity_file,
	    batch, env->home, e)) != 0)
		goto out;
	lc_log_verbose("authenticated to %s as %s", conf->hostname,
	    conf->user);
	*out = s;
	s = NULL;	/* transferred */
	r = 0;
 out:
	lc_knownhosts_free(kh);	/* before the session it belongs to */
	lc_ssh_free(s);
	return r;
}

/* Put "jump host NAME: " in front of e's message, keeping its code. */
static int
lc_ssh_hop_err(struct lc_err *e, int r, const char *name)
{
	char msg[LC_ERR_MSG_MAX];

	if (e == NULL)
		return r;
	snprintf(msg, sizeof(msg), "%s", e->msg);
	lc_err_set(e, -r, "jump host %s: %.*s", name,
	    (int)(sizeof(msg) - 40), msg);
	return r;
}

/*
 * Split one ProxyJump / -J entry "[user@]host[:port]" ("[v6addr]:port"
 * too) in place.  Returns 0 or -LC_ERR_USAGE.
 */
static int
lc_ssh_jump_parse(char *spec, struct lc_ssh_hop *hop, struct lc_err *e)
{
	char *at, *h, *colon, *end, orig[256];
	uint64_t v;

	snprintf(orig, sizeof(orig), "%s", spec);
	memset(hop, 0, sizeof(*hop));
	hop->jump = 1;
	if ((at = strrchr(spec, '@')) != NULL) {
		*at = '\0';
		hop->user = spec;
		h = at + 1;
		if (*hop->user == '\0')
			goto bad;
	} else {
		h = spec;
	}
	if (*h == '[') {
		if ((end = strchr(h, ']')) == NULL)
			goto bad;
		*end = '\0';
		colon = end[1] == ':' ? end + 1 : NULL;
		if (end[1] != '\0' && colon == NULL)
			goto bad;
		h++;
	} else {
		colon = strchr(h, ':');
		if (colon != NULL && strchr(colon + 1, ':') != NULL)
			colon = NULL;	/* a bare IPv6 address */
	}
	if (colon != NULL) {
		*colon = '\0';
		if (lc_parse_uint(colon + 1, 1, 65535, &v) != 0)
			goto bad;
		hop->port = (unsigned)v;
	}
	if (*h == '\0')
		goto bad;
	hop->host = h;
	return 0;
 bad:
	return lc_err_set(e, LC_ERR_USAGE, "bad jump host '%.200s' (want "
	    "[user@]host[:port])", orig);
}

/*
 * Open a forward on via (a jump host, which it then owns: freed on error)
 * to host:port; *fd receives the socketpair end for the next session.
 */
static int
lc_ssh_hop_forward(struct lc_ssh *via, const char *host, unsigned port,
    int *fd, struct lc_err *e)
{
	int r;

	*fd = -1;
	if ((r = lc_ssh_forward(via, host, (uint16_t)port, fd, e)) != 0) {
		lc_ssh_hop_err(e, r, via->host);
		lc_ssh_free(via);
	}
	return r;
}

/*
 * Log in to each host of the comma-separated list in turn, the first
 * over TCP, each later one through a forward on the one before, and open
 * a forward from the last to thost:tport.  *via receives the last jump
 * host (owning the ones before), *fd the socketpair end for the target's
 * session; names gets "JUMP1, JUMP2" for the -v line.
 */
static int
lc_ssh_chain(const struct lc_ssh_opts *o, const struct lc_ssh_env *env,
    const char *list, const char *thost, unsigned tport,
    struct lc_ssh **via, int *fd, char *names, size_t namesz,
    struct lc_err *e)
{
	struct lc_sshconf conf;
	struct lc_ssh_hop hop;
	struct lc_ssh *prev = NULL, *cur;
	char *buf, *spec, *save = NULL;
	size_t n = 0, len;
	int r = 0, hfd = -1;

	*via = NULL;
	*fd = -1;
	names[0] = '\0';
	memset(&conf, 0, sizeof(conf));
	if ((buf = strdup(list)) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	for (spec = strtok_r(buf, ",", &save); spec != NULL;
	    spec = strtok_r(NULL, ",", &save)) {
		if (++n > LC_SSH_JUMP_MAX) {
			r = lc_err_set(e, LC_ERR_USAGE, "more than %d jump "
			    "hosts", LC_SSH_JUMP_MAX);
			goto out;
		}
		len = strlen(names);
		snprintf(names + len, namesz - len, "%s%s", len > 0 ? ", " :
		    "", spec);
		if ((r = lc_ssh_jump_parse(spec, &hop, e)) != 0)
			goto out;
		lc_sshconf_free(&conf);
		if ((r = lc_ssh_resolve(o, env, &hop, &conf, e)) != 0) {
			lc_ssh_hop_err(e, r, hop.host);
			goto out;
		}
		if (prev != NULL && (r = lc_ssh_hop_forward(prev,
		    conf.hostname, conf.port, &hfd, e)) != 0) {
			prev = NULL;	/* freed */
			goto out;
		}
		r = lc_ssh_login(o, env, &hop, &conf, hfd, prev, 0, &cur, e);
		hfd = -1;	/* transferred */
		prev = NULL;	/* transferred */
		if (r != 0) {
			lc_ssh_hop_err(e, r, hop.host);
			goto out;
		}
		prev = cur;
	}
	if (prev == NULL) {
		r = lc_err_set(e, LC_ERR_USAGE, "empty jump host list");
		goto out;
	}
	if ((r = lc_ssh_hop_forward(prev, thost, tport, fd, e)) != 0) {
		prev = NULL;	/* freed */
		goto out;
	}
	*via = prev;
	prev = NULL;	/* transferred */
 out:
	lc_ssh_free(prev);
	lc_sshconf_free(&conf);
	free(buf);
	return r;
}
/*
 * ProxyCommand's tokens as ssh expands them: %h HostName, %p port, %r
 * remote user, %n the host as given, %%.  Returns 0 or -LC_ERR_CONFIG.
 */
static int
lc_ssh_proxy_expand(const char *tmpl, const struct lc_sshconf *c,
    char *out, size_t outsz, struct lc_err *e)
{
	char port[8];
	const char *p, *v;
	size_t n = 0, vl;

	snprintf(port, sizeof(port), "%u", (unsigned)c->port);
	for (p = tmpl; *p != '\0'; p++) {
		if (*p != '%') {
			v = p;
			vl = 1;
		} else {
			switch (*++p) {
			case '%': v = "%"; break;
			case 'h': v = c->hostname; break;
			case 'p': v = port; break;
			case 'r': v = c->user; break;
			case 'n': v = c->host; break;
			default:
				return lc_err_set(e, LC_ERR_CONFIG, "ProxyCommand"
				    ": unknown token %%%c", *p ? *p : ' ');
			}
			vl = strlen(v);
		}
		if (vl >= outsz - n)
			return lc_err_set(e, LC_ERR_CONFIG,
			    "ProxyCommand too long");
		memcpy(out + n, v, vl);
		n += vl;
	}
	out[n] = '\0';
	return 0;
}

/*
 * Start "/bin/sh -c CMD" with one end of a socketpair as its stdin and
 * stdout (stderr inherited, signals at their defaults, none blocked);
 * *fd receives the other end, *pid the child.
 */
static int
lc_ssh_proxy_command(const char *tmpl, const struct lc_sshconf *c,
    pid_t *pid, int *fd, struct lc_err *e)
{
	static const int defsigs[] = { SIGPIPE, SIGINT, SIGTERM, SIGHUP,
	    SIGQUIT, SIGCHLD };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, def;
	char *cmd, *argv[4];
	size_t i;
	int sv[2] = { -1, -1 }, r, rc;

	*pid = 0;
	*fd = -1;
	if ((cmd = malloc(LC_SSH_PROXYCMD_MAX)) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	if ((r = lc_ssh_proxy_expand(tmpl, c, cmd, LC_SSH_PROXYCMD_MAX,
	    e)) != 0) {
		free(cmd);
		return r;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		free(cmd);
		return lc_err_sys(e, LC_ERR_INTERNAL, errno, "socketpair");
	}
	lc_log_debug("ProxyCommand: %s", cmd);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
	posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigemptyset(&def);
	for (i = 0; i < sizeof(defsigs) / sizeof(defsigs[0]); i++)
		sigaddset(&def, defsigs[i]);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
	    POSIX_SPAWN_SETSIGDEF);
	argv[0] = (char *)"sh";
	argv[1] = (char *)"-c";
	argv[2] = cmd;
	argv[3] = NULL;
	rc = posix_spawn(pid, "/bin/sh", &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(sv[1]);
	free(cmd);
	if (rc != 0) {
		*pid = 0;
		close(sv[0]);
		return lc_err_sys(e, LC_ERR_CONNECT, rc,
		    "cannot run the ProxyCommand for %s", c->host);
	}
	*fd = sv[0];
	return 0;
}

int
lc_ssh_connect(const struct lc_ssh_opts *o, struct lc_ssh **out,
    struct lc_err *e)
{
	struct lc_ssh_env env;
	struct lc_ssh_hop hop;
	struct lc_sshconf conf;
	struct lc_ssh *via = NULL;
	char names[1024];
	const char *jump;
	pid_t pid = 0;
	int r, fd = -1;

	*out = NULL;
	memset(&conf, 0, sizeof(conf));
	pthread_once(&lc_ssh_once, lc_ssh_init_once);
	if (lc_ssh_init_rc != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "libssh2_init failed");
	if (o == NULL || o->host == NULL || *o->host == '\0')
		return lc_err_set(e, LC_ERR_USAGE, "no host given");
	if ((r = lc_ssh_local_user(env.luser, sizeof(env.luser), env.home,
	    sizeof(env.home), e)) != 0)
		return r;
	memset(&hop, 0, sizeof(hop));
	hop.host = o->host;
	hop.user = o->user != NULL && *o->user != '\0' ? o->user : NULL;
	hop.identity_file = o->identity_file;
	if ((r = lc_ssh_resolve(o, &env, &hop, &conf, e)) != 0)
		goto out;
	/* -J overrides ProxyJump and ProxyCommand, as in ssh */
	jump = o->jump != NULL ? o->jump : conf.proxy_jump;
	if (jump != NULL && strcasecmp(jump, "none") == 0)
		jump = NULL;
	names[0] = '\0';
	if (jump != NULL) {
		if ((r = lc_ssh_chain(o, &env, jump, conf.hostname, conf.port,
		    &via, &fd, names, sizeof(names), e)) != 0)
			goto out;
	} else if (o->jump == NULL && conf.proxy_command != NULL) {
		if ((r = lc_ssh_proxy_command(conf.proxy_command, &conf, &pid,
		    &fd, e)) != 0)
			goto out;
		snprintf(names, sizeof(names), "ProxyCommand");
	}
	if ((r = lc_ssh_login(o, &env, &hop, &conf, fd, via, pid, out,
	    e)) != 0) {
		if (pid != 0 && r == -LC_ERR_CONNECT && e != NULL) {
			char msg[LC_ERR_MSG_MAX];

			snprintf(msg, sizeof(msg), "%s", e->msg);
			lc_err_set(e, LC_ERR_CONNECT, "%.*s (through "
			    "ProxyCommand)", (int)(sizeof(msg) - 40), msg);
		}
		goto out;
	}
	if (names[0] != '\0')
		lc_log_verbose("connected to %s through %s", o->host, names);
 out:
	lc_sshconf_free(&conf);
	return r;
}

/* ------------------------------------------------------------------ */
/* The pump: exec and forward */

/*
 * Start the pump on s's channel: with given >= 0 it bridges that
 * descriptor (owned by s from here on, also on error); else a socketpair
 * whose other end goes to *fd.
 */
static int
lc_ssh_pump_start(struct lc_ssh *s, int given, int *fd, struct lc_err *e)
{
	int sv[2] = { -1, -1 }, r;

	if (given >= 0) {
		sv[1] = given;
	} else if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	    sv) != 0) {
		return lc_err_sys(e, LC_ERR_INTERNAL, errno, "socketpair");
	}
	if ((r = lc_set_nonblock(sv[1], 1)) != 0 ||
	    (r = lc_wake_open(&s->wake)) != 0) {
		r = lc_err_set(e, LC_ERR_INTERNAL, "pump setup failed");
		goto out;
	}
	if (s->keepalive_s > 0)
		libssh2_keepalive_config(s->sess, 1, s->keepalive_s);
	s->pump_fd = sv[1];
	sv[1] = -1;	/* transferred */
	if ((r = lc_thread_start(&s->pump, s->fwd ? "lc-ssh-fwd" :
	    "lc-ssh-pump", lc__ssh_pump_main, s)) != 0) {
		r = lc_err_set(e, LC_ERR_INTERNAL, "cannot start the ssh pump");
		goto out;
	}
	s->pump_started = 1;
	if (given < 0) {
		*fd = sv[0];
		sv[0] = -1;	/* transferred */
	}
	r = 0;
 out:
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	return r;
}

int
lc_ssh_forward(struct lc_ssh *s, const char *host, uint16_t port, int *fd,
    struct lc_err *e)
{
	uint64_t deadline;
	unsigned int win = 0;
	int rc, given;

	if (s == NULL || host == NULL || fd == NULL || port == 0 ||
	    s->chan != NULL || s->pump_started)
		return lc_err_set(e, LC_ERR_INTERNAL,
		    "lc_ssh_forward: one channel per connection");
	given = *fd;
	*fd = -1;
	deadline = lc__ssh_deadline(s);
	while ((s->chan = libssh2_channel_direct_tcpip_ex(s->sess, host, port,
	    "127.0.0.1", 0)) == NULL) {
		if (libssh2_session_last_errno(s->sess) !=
		    LIBSSH2_ERROR_EAGAIN || lc__ssh_waitsock(s, deadline) != 0) {
			const char *why = lc__ssh_liberr(s);
			int banned = strstr(why, "administratively "
			    "prohibited") != NULL;

			rc = lc_err_set(e, LC_ERR_CONNECT, "%s: cannot "
			    "forward to %s port %u: %s%s", s->name, host,
			    (unsigned)port, why, banned ? " (port forwarding "
			    "is off: AllowTcpForwarding no, or restrict or "
			    "no-port-forwarding on the key)" : "");
			/* asking again will not help (libssh2 gives only
			   the text of SSH_OPEN_ADMINISTRATIVELY_PROHIBITED) */
			if (banned && e != NULL)
				e->sys_errno = EACCES;
			goto fail;
		}
	}
	/*
	 * The 2 MiB default window would cap a 50 ms path at 40 MiB/s:
	 * raise it now; the pump keeps it up (see pump.c).  A half-sent
	 * adjustment is retried with the same amount.
	 */
	deadline = lc__ssh_deadline(s);
	while ((rc = libssh2_channel_receive_window_adjust2(s->chan,
	    LC_SSH_FWD_WINDOW - LIBSSH2_CHANNEL_WINDOW_DEFAULT, 1, &win)) ==
	    LIBSSH2_ERROR_EAGAIN) {
		if (lc__ssh_waitsock(s, deadline) != 0)
			break;
	}
	if (rc != 0) {
		rc = lc_err_set(e, LC_ERR_CONNECT, "%s: forward to %s port "
		    "%u: window adjust failed: %s", s->name, host,
		    (unsigned)port, lc__ssh_liberr(s));
		goto fail;
	}
	lc_log_debug("%s: forwarding to %s port %u, window %u", s->name, host,
	    (unsigned)port, win);
	s->fwd = 1;
	/* given passes to the pump, also on error */
	return lc_ssh_pump_start(s, given, fd, e);
 fail:
	if (given >= 0)
		close(given);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Exec, wait, free */

int
lc_ssh_exec(struct lc_ssh *s, const char *cmd, int *fd, struct lc_err *e)
{
	uint64_t deadline;
	int rc;

	*fd = -1;
	if (s == NULL || cmd == NULL || s->chan != NULL || s->pump_started)
		return lc_err_set(e, LC_ERR_INTERNAL,
		    "lc_ssh_exec: one command per connection");
	deadline = lc__ssh_deadline(s);
	while ((s->chan = libssh2_channel_open_session(s->sess)) == NULL) {
		if (libssh2_session_last_errno(s->sess) !=
		    LIBSSH2_ERROR_EAGAIN || lc__ssh_waitsock(s, deadline) != 0)
			return lc_err_set(e, LC_ERR_CONNECT,
			    "%s: cannot open a session channel: %s", s->name,
			    lc__ssh_liberr(s));
	}
	deadline = lc__ssh_deadline(s);
	while ((rc = libssh2_channel_exec(s->chan, cmd)) ==
	    LIBSSH2_ERROR_EAGAIN) {
		if (lc__ssh_waitsock(s, deadline) != 0)
			break;
	}
	if (rc != 0)
		return lc_err_set(e, lc__ssh_fatal(rc) ? LC_ERR_CONNECT :
		    LC_ERR_AGENT, "%s: cannot run the command: %s", s->name,
		    lc__ssh_liberr(s));
	return lc_ssh_pump_start(s, -1, fd, e);
}

int
lc_ssh_wait(struct lc_ssh *s, int timeout_ms, int *status, char *signame,
    size_t signamesz)
{
	struct timespec ts;
	int r = 0;

	*status = -1;
	if (signame != NULL && signamesz > 0)
		signame[0] = '\0';
	if (s == NULL || !s->pump_started)
		return -LC_ERR_INTERNAL;
	lc_deadline(CLOCK_MONOTONIC, timeout_ms > 0 ? timeout_ms : 0, &ts);
	pthread_mutex_lock(&s->mu);
	while (!s->done && r == 0) {
		if (timeout_ms < 0)
			pthread_cond_wait(&s->cv, &s->mu);
		else if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) ==
		    ETIMEDOUT)
			r = -LC_ERR_TIMEOUT;
	}
	if (s->done) {
		r = 0;
		*status = s->status;
		if (signame != NULL && signamesz > 0)
			snprintf(signame, signamesz, "%s", s->signame);
	}
	pthread_mutex_unlock(&s->mu);
	return r;
}

void
lc_ssh_early_stderr(struct lc_ssh *s, char *out, size_t outsz)
{
	size_t o = 0, n;

	if (outsz == 0)
		return;
	out[0] = '\0';
	if (s == NULL || !s->sync_ready)
		return;
	pthread_mutex_lock(&s->mu);
	n = strlen(s->early);
	while (n > 0 && s->early[n - 1] == '\n')
		n--;
	for (size_t i = 0; i < n && o + 3 < outsz; i++) {
		if (s->early[i] == '\n') {
			out[o++] = ';';
			out[o++] = ' ';
		} else
			out[o++] = s->early[i];
	}
	out[o] = '\0';
	s->early[0] = '\0';
	pthread_mutex_unlock(&s->mu);
}

const char *
lc_ssh_peer_addr(const struct lc_ssh *s)
{
	return s->proxied ? NULL : s->peer;
}

const char *
lc_ssh_local_addr(const struct lc_ssh *s)
{
	while (s->via != NULL)
		s = s->via;
	return s->proxied || s->local[0] == '\0' ? NULL : s->local;
}

int
lc_ssh_proxied(const struct lc_ssh *s)
{
	return s->proxied;
}

const char *
lc_ssh_target_host(const struct lc_ssh *s)
{
	return s->target;
}

const char *
lc_ssh_name(const struct lc_ssh *s)
{
	return s->name;
}

void
lc_ssh_free(struct lc_ssh *s)
{
	if (s == NULL)
		return;
	if (s->pump_started) {
		atomic_store(&s->stop, true);
		lc_wake_signal(&s->wake);
		pthread_join(s->pump, NULL);
	}
	if (s->sync_ready)
		lc__ssh_log_early(s);
	if (s->sess != NULL) {
		/*
		 * One non-blocking attempt to say goodbye; then the socket is
		 * shut down so that freeing the channel (which wants to
		 * exchange CLOSE messages) fails fast instead of waiting.
		 */
		libssh2_session_set_blocking(s->sess, 0);
		if (s->handshaken)
			libssh2_session_disconnect(s->sess, "lanecp done");
		if (s->sock >= 0)
			shutdown(s->sock, SHUT_RDWR);
		if (s->chan != NULL)
			libssh2_channel_free(s->chan);
		if (libssh2_session_free(s->sess) != 0)
			lc_log_debug("libssh2_session_free failed");
	}
	if (s->sock >= 0)
		close(s->sock);
	if (s->pump_fd >= 0)
		close(s->pump_fd);
	/* the session above is gone: now the command or hop it went through */
	lc_ssh_reap(s->proxy_pid);
	lc_ssh_free(s->via);
	lc_wake_close(&s->wake);
	if (s->sync_ready) {
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->mu);
	}
	free(s);
}
