/*
 * SSH connection and exec channel (see lanecp/ssh.h), on libssh2.
 *
 * The session runs in libssh2's non-blocking mode from the start; every
 * step that must wait polls the socket in the direction libssh2 reports
 * (libssh2_session_block_directions) with a deadline: ConnectTimeout for
 * TCP connect plus SSH handshake, and a per-step limit afterwards
 * (ServerAliveInterval * ServerAliveCountMax, or LC_SSH_STEP_TIMEOUT_MS).
 *
 * The pump thread.  After lc_ssh_exec() the session belongs to one thread,
 * the pump, which moves bytes between the channel and its end of a
 * socketpair through two bounded buffers (LC_SSH_PUMP_BUF each way; a side
 * is not read while its buffer is full), turns the remote stderr into log
 * lines, sends keepalives and finally records the exit status.  It stops
 * on its own when the channel is closed and the output is delivered, when
 * the connection breaks (the caller then reads EOF), or when lc_ssh_free()
 * sets the stop flag and writes to the wake pipe.
 *
 * libssh2 1.10 in non-blocking mode has two traps, both found by the
 * integration tests with a tiny socket send buffer (lc_ssh_opts.sndbuf):
 *
 * - An operation that leaves part of a packet queued must be the next one
 *   to send: any other sending call first completes the queued packet and
 *   then reports its own packet as sent (losing or duplicating data).  The
 *   pump remembers which kind of call left a packet half sent
 *   (lc_pump_note) and calls only that kind until it completes.  Writes,
 *   EOF and keepalives start only when the socket has room, so that the
 *   small answers libssh2 sends by itself while reading go out whole.
 * - Channel reads size the window adjustment from their buflen, and a
 *   half-sent adjustment is counted with the retrying call's value.  All
 *   reads (stdout and stderr, which share that state) therefore pass the
 *   same buflen; otherwise libssh2 under-counts the window and silently
 *   truncates what the server then sends.
 */
#include "lanecp/ssh.h"
#include "lanecp/buf.h"
#include "lanecp/err.h"
#include "lanecp/knownhosts.h"
#include "lanecp/log.h"
#include "lanecp/sshconf.h"
#include "lanecp/util.h"
#include "lanecp/version.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <libssh2.h>
#include <openssl/crypto.h>

#define LC_SSH_PUMP_BUF (256 * 1024)	/* per direction */
#define LC_SSH_READ 32768		/* buflen of every channel read */
#define LC_SSH_ERRLINE_MAX 900		/* longer stderr lines are split */
#define LC_SSH_READS 16			/* reads per stream per pump round */
#define LC_SSH_WRITES 8			/* channel writes per pump round */
#define LC_SSH_ALIVE_INTERVAL 15	/* ServerAliveInterval default */
#define LC_SSH_ALIVE_COUNT 3		/* ServerAliveCountMax default */
#define LC_SSH_STEP_TIMEOUT_MS (120 * 1000)	/* without keepalives */
#define LC_SSH_MAX_IDS (LC_SSHCONF_MAX_FILES + 4)
#define LC_SSH_KEYFILE_MAX (64 * 1024)
#define LC_SSH_BLOB_MAX (16 * 1024)
#define LC_SSH_PASS_MAX 1024
#define LC_SSH_PASS_TRIES 3
#define LC_SSH_TRIED_MAX 400

struct lc_ssh {
	LIBSSH2_SESSION *sess;
	LIBSSH2_CHANNEL *chan;
	int sock;
	int handshaken;
	char host[256];		/* as given, for log lines */
	char name[600];		/* user@host */
	char peer[NI_MAXHOST];
	char local[NI_MAXHOST];
	int step_timeout_ms;	/* per waiting step after the handshake */
	unsigned keepalive_s;	/* 0: off */

	/* the pump */
	int pump_fd;		/* its end of the socketpair */
	struct lc_wake wake;
	pthread_t pump;
	int pump_started;
	atomic_bool stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int sync_ready;		/* mu and cv initialized */
	/* under mu: */
	int done;
	int status;
	char signame[32];
};

/* One identity file and what we know about it before trying it. */
struct lc_ssh_id {
	char path[PATH_MAX];
	char pub[PATH_MAX + 8];
	int exists;
	int has_pub;
	int encrypted;
	int offered;		/* its key was already offered by the agent */
	unsigned char *blob;	/* public key, if known */
	size_t bloblen;
};

struct lc_ssh_auth {
	struct lc_ssh_id ids[LC_SSH_MAX_IDS];
	size_t nids;
	char tried[LC_SSH_TRIED_MAX];
	const char *user;
	int batch;
	int ids_only;
};

static pthread_once_t lc_ssh_once = PTHREAD_ONCE_INIT;
static int lc_ssh_init_rc;

static void
lc_ssh_init_once(void)
{
	lc_ssh_init_rc = libssh2_init(0);
}

static const char *
lc_ssh_liberr(struct lc_ssh *s)
{
	char *msg = NULL;

	if (s->sess == NULL)
		return "no session";
	libssh2_session_last_error(s->sess, &msg, NULL, 0);
	return msg != NULL && *msg != '\0' ? msg : "unknown libssh2 error";
}

/* Session-level libssh2 errors: the connection is unusable after them. */
static int
lc_ssh_fatal(int rc)
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

static uint64_t
lc_ssh_deadline(const struct lc_ssh *s)
{
	if (s->step_timeout_ms <= 0)
		return 0;
	return lc_now_ms() + (uint64_t)s->step_timeout_ms;
}

/*
 * Wait until libssh2 can make progress on the socket, or the deadline
 * (0: none) passes.  Returns 0, or -LC_ERR_TIMEOUT with the session's last
 * error set to say so.
 */
static int
lc_ssh_waitsock(struct lc_ssh *s, uint64_t deadline)
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

/* Returns 0 or an errno value. */
static int
lc_ssh_connect_addr(int fd, const struct addrinfo *ai, uint64_t deadline)
{
	struct pollfd p;
	socklen_t len;
	uint64_t now;
	int soerr = 0, n, ms;

	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return 0;
	if (errno != EINPROGRESS && errno != EINTR)
		return errno;
	for (;;) {
		ms = -1;
		if (deadline != 0) {
			now = lc_now_ms();
			if (now >= deadline)
				return ETIMEDOUT;
			ms = deadline - now > INT_MAX ? INT_MAX :
			    (int)(deadline - now);
		}
		p.fd = fd;
		p.events = POLLOUT;
		p.revents = 0;
		if ((n = poll(&p, 1, ms)) < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (n == 0)
			return ETIMEDOUT;
		break;
	}
	len = sizeof(soerr);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0)
		return errno;
	return soerr;
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
		if ((err = lc_ssh_connect_addr(fd, ai, deadline)) == 0)
			break;
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
		    "setting host key algorithms: %s", lc_ssh_liberr(s));
	return 0;
}

static int
lc_ssh_handshake(struct lc_ssh *s, const char *host, unsigned port,
    uint64_t deadline, struct lc_err *e)
{
	int rc;

	while ((rc = libssh2_session_handshake(s->sess,
	    (libssh2_socket_t)s->sock)) == LIBSSH2_ERROR_EAGAIN) {
		if (lc_ssh_waitsock(s, deadline) != 0)
			return lc_err_set(e, LC_ERR_CONNECT,
			    "cannot connect to %s port %u: timed out during "
			    "the SSH handshake", host, port);
	}
	if (rc != 0)
		return lc_err_set(e, LC_ERR_CONNECT,
		    "cannot connect to %s port %u: SSH handshake failed: %s",
		    host, port, lc_ssh_liberr(s));
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
		    names[0], lc_ssh_liberr(s));
	lc_knownhosts_fingerprint(key, len, fp, sizeof(fp));
	label = lc_knownhosts_type_label(type);
	if ((r = lc_knownhosts_check(kh, names, nnames, key, len, type, &res,
	    e)) != 0)
		return r;
	switch (res.status) {
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

/*
 * Read a small file whole, NUL terminated, into a buffer of
 * LC_SSH_KEYFILE_MAX + 1 bytes (free it with lc_ssh_slurp_free(): it may
 * hold a private key).  A file longer than LC_SSH_KEYFILE_MAX is refused
 * (EFBIG) rather than cut.  0, or -1 with errno.
 */
static int
lc_ssh_slurp(const char *path, char **out, size_t *outlen)
{
	char *buf = NULL, extra;
	size_t n = 0;
	ssize_t k;
	int fd, saved;

	*out = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if ((buf = malloc(LC_SSH_KEYFILE_MAX + 1)) == NULL) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	for (;;) {
		if (n < LC_SSH_KEYFILE_MAX)
			k = read(fd, buf + n, LC_SSH_KEYFILE_MAX - n);
		else
			k = read(fd, &extra, 1);	/* must be at EOF */
		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0)
			break;
		if (k > 0 && n < LC_SSH_KEYFILE_MAX) {
			n += (size_t)k;
			continue;
		}
		saved = k < 0 ? errno : EFBIG;
		OPENSSL_clear_free(buf, LC_SSH_KEYFILE_MAX + 1);
		close(fd);
		errno = saved;
		return -1;
	}
	close(fd);
	buf[n] = '\0';
	*out = buf;
	if (outlen != NULL)
		*outlen = n;
	return 0;
}

static void
lc_ssh_slurp_free(char *buf)
{
	if (buf != NULL)
		OPENSSL_clear_free(buf, LC_SSH_KEYFILE_MAX + 1);
}

/* "type base64 [comment]" -> blob. */
static int
lc_ssh_read_pub(const char *path, unsigned char **blob, size_t *len)
{
	char *text = NULL, *p, *type, *b64, t2[64];
	unsigned char *out = NULL;
	size_t tlen, blen;
	int n, r = -1;

	*blob = NULL;
	*len = 0;
	if (lc_ssh_slurp(path, &text, NULL) != 0)
		return -1;
	p = text + strspn(text, " \t\r\n");
	type = p;
	tlen = strcspn(type, " \t\r\n");
	b64 = type + tlen;
	b64 += strspn(b64, " \t");
	blen = strcspn(b64, " \t\r\n");
	if (tlen == 0 || blen == 0 || blen > 4 * LC_SSH_BLOB_MAX / 3 ||
	    (out = malloc(blen)) == NULL)
		goto out;
	if ((n = lc__b64_decode(b64, blen, out, blen)) <= 0 ||
	    lc_knownhosts_blob_type(out, (size_t)n, t2, sizeof(t2)) != 0 ||
	    strlen(t2) != tlen || strncmp(t2, type, tlen) != 0)
		goto out;
	*blob = out;
	*len = (size_t)n;
	out = NULL;
	r = 0;
 out:
	free(out);
	lc_ssh_slurp_free(text);
	return r;
}

/*
 * OpenSSH private key format ("openssh-key-v1"): the public key and the
 * cipher name are outside the encrypted part (see lanecp/ssh.h).
 */
int
lc__ssh_openssh_key(const char *text, uint8_t *scratch, size_t scratchsz,
    int *encrypted, unsigned char **blob, size_t *bloblen)
{
	static const char beg[] = "-----BEGIN OPENSSH PRIVATE KEY-----";
	static const char end[] = "-----END OPENSSH PRIVATE KEY-----";
	static const char magic[] = "openssh-key-v1";	/* and its NUL */
	const char *b, *en;
	const uint8_t *cipher, *kdf, *kdfopt, *pub;
	size_t clen, klen, kolen, plen, rawsz;
	uint8_t m[sizeof(magic)];
	uint32_t nkeys;
	struct lc_rd rd;
	size_t used = 0;
	int n, r = -1;

	*encrypted = 0;
	*blob = NULL;
	*bloblen = 0;
	/* END is looked for only after BEGIN, so the two cannot overlap */
	if ((b = strstr(text, beg)) == NULL)
		return -1;
	b += sizeof(beg) - 1;
	if ((en = strstr(b, end)) == NULL || en < b)
		return -1;
	rawsz = (size_t)(en - b);
	if (rawsz > scratchsz)
		return -1;
	used = rawsz;	/* the decoder writes at most this much */
	if ((n = lc__b64_decode(b, rawsz, scratch, scratchsz)) < 0)
		goto out;
	lc_rd_init(&rd, scratch, (size_t)n);
	if (lc_rd_get_bytes(&rd, m, sizeof(m)) != 0 ||
	    memcmp(m, magic, sizeof(m)) != 0 ||
	    lc_rd_get_string_direct(&rd, &cipher, &clen) != 0 ||
	    lc_rd_get_string_direct(&rd, &kdf, &klen) != 0 ||
	    lc_rd_get_string_direct(&rd, &kdfopt, &kolen) != 0 ||
	    lc_rd_get_u32(&rd, &nkeys) != 0 || nkeys < 1 ||
	    lc_rd_get_string_direct(&rd, &pub, &plen) != 0 ||
	    plen == 0 || plen > LC_SSH_BLOB_MAX)
		goto out;
	if ((*blob = malloc(plen)) == NULL)
		goto out;
	*encrypted = !(clen == 4 && memcmp(cipher, "none", 4) == 0);
	memcpy(*blob, pub, plen);
	*bloblen = plen;
	r = 0;
 out:
	/* an unencrypted key: the private half was decoded here too */
	OPENSSL_cleanse(scratch, used);
	return r;
}

static void
lc_ssh_id_probe(struct lc_ssh_id *id)
{
	unsigned char *b = NULL;
	uint8_t *scratch = NULL;
	char *text = NULL;
	struct stat st;
	size_t bl = 0, textlen = 0, pl;
	int enc = 0;

	id->exists = stat(id->path, &st) == 0 && !S_ISDIR(st.st_mode);
	if (!id->exists)
		return;
	pl = strlen(id->path);	/* < PATH_MAX: pub has room for ".pub" */
	memcpy(id->pub, id->path, pl);
	memcpy(id->pub + pl, ".pub", sizeof(".pub"));
	id->has_pub = access(id->pub, R_OK) == 0;
	if (id->has_pub &&
	    lc_ssh_read_pub(id->pub, &id->blob, &id->bloblen) != 0)
		lc_log_verbose("%s: cannot parse the public key", id->pub);
	if (lc_ssh_slurp(id->path, &text, &textlen) != 0) {
		lc_log_verbose("cannot read %s: %s", id->path,
		    strerror(errno));
		return;
	}
	if ((scratch = malloc(textlen + 1)) != NULL &&
	    lc__ssh_openssh_key(text, scratch, textlen + 1, &enc, &b,
	    &bl) == 0) {
		id->encrypted = enc;
		if (id->blob == NULL) {
			id->blob = b;
			id->bloblen = bl;
			b = NULL;	/* transferred */
		}
	}
	free(b);
	/* PEM (PKCS#1 with Proc-Type, or PKCS#8) */
	if (strstr(text, "Proc-Type: 4,ENCRYPTED") != NULL ||
	    strstr(text, "-----BEGIN ENCRYPTED PRIVATE KEY-----") != NULL)
		id->encrypted = 1;
	if (scratch != NULL)
		OPENSSL_clear_free(scratch, textlen + 1);
	lc_ssh_slurp_free(text);
}

static void
lc_ssh_id_add(struct lc_ssh_auth *a, const char *path)
{
	size_t i;

	if (path == NULL || *path == '\0' || a->nids >= LC_SSH_MAX_IDS)
		return;
	for (i = 0; i < a->nids; i++)
		if (strcmp(a->ids[i].path, path) == 0)
			return;
	if (strlen(path) >= sizeof(a->ids[0].path)) {
		lc_log_verbose("identity file name too long, ignored");
		return;
	}
	memcpy(a->ids[a->nids].path, path, strlen(path) + 1);
	lc_ssh_id_probe(&a->ids[a->nids]);
	a->nids++;
}

static void
lc_ssh_ids_free(struct lc_ssh_auth *a)
{
	size_t i;

	for (i = 0; i < a->nids; i++)
		free(a->ids[i].blob);
	a->nids = 0;
}

static void
lc_ssh_tried(struct lc_ssh_auth *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
lc_ssh_tried(struct lc_ssh_auth *a, const char *fmt, ...)
{
	size_t o = strlen(a->tried);
	va_list ap;

	if (o > 0 && o + 2 < sizeof(a->tried)) {
		memcpy(a->tried + o, ", ", 3);
		o += 2;
	}
	va_start(ap, fmt);
	vsnprintf(a->tried + o, sizeof(a->tried) - o, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------ */
/* Passphrase prompt */

static volatile sig_atomic_t lc_ssh_pp_signo;

static void
lc_ssh_pp_handler(int sig)
{
	lc_ssh_pp_signo = sig;
}

/*
 * Read a line from /dev/tty with echo off.  Signals that would stop or
 * kill us restore the terminal first and are then re-raised.  Returns 0,
 * or -1 (no terminal, interrupted).
 */
static int
lc_ssh_askpass(const char *prompt, char *buf, size_t bufsz)
{
	static const int sigs[] = {
		SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU,
	};
	struct sigaction sa, old[sizeof(sigs) / sizeof(sigs[0])];
	struct termios saved, t;
	size_t i, n = 0;
	ssize_t k;
	int fd, r = -1, echo_off = 0, sig;
	char c;

	buf[0] = '\0';
	if ((fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)) < 0)
		return -1;
	lc_ssh_pp_signo = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = lc_ssh_pp_handler;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, &old[i]);
	if (tcgetattr(fd, &saved) == 0) {
		t = saved;
		t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
		echo_off = tcsetattr(fd, TCSAFLUSH, &t) == 0;
	}
	if (write(fd, prompt, strlen(prompt)) < 0)
		goto restore;
	for (;;) {
		if (lc_ssh_pp_signo != 0)
			break;
		k = read(fd, &c, 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			break;
		if (k == 0 || c == '\n' || c == '\r') {
			r = 0;
			break;
		}
		if (n + 1 < bufsz)
			buf[n++] = c;
	}
	buf[n] = '\0';
 restore:
	if (echo_off)
		tcsetattr(fd, TCSAFLUSH, &saved);
	if (write(fd, "\n", 1) < 0) {
		/* nothing to do */
	}
	close(fd);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &old[i], NULL);
	if ((sig = lc_ssh_pp_signo) != 0) {
		OPENSSL_cleanse(buf, bufsz);
		raise(sig);
		return -1;
	}
	return r;
}

/* ------------------------------------------------------------------ */
/* Authentication */

static int
lc_ssh_list_has(const char *list, const char *word)
{
	size_t wl = strlen(word);
	const char *p = list;

	while (p != NULL && *p != '\0') {
		size_t l = strcspn(p, ",");

		if (l == wl && strncmp(p, word, wl) == 0)
			return 1;
		p += l;
		if (*p == ',')
			p++;
	}
	return 0;
}

static struct lc_ssh_id *
lc_ssh_id_by_blob(struct lc_ssh_auth *a, const unsigned char *blob,
    size_t len)
{
	size_t i;

	for (i = 0; i < a->nids; i++)
		if (a->ids[i].blob != NULL && a->ids[i].bloblen == len &&
		    memcmp(a->ids[i].blob, blob, len) == 0)
			return &a->ids[i];
	return NULL;
}

/*
 * Offer the agent's keys.  Returns 1 when authenticated, 0 to go on,
 * -LC_ERR_CONNECT when the connection broke.
 */
static int
lc_ssh_auth_agent(struct lc_ssh *s, struct lc_ssh_auth *a)
{
	struct libssh2_agent_publickey *id = NULL, *prev = NULL;
	LIBSSH2_AGENT *agent = NULL;
	const char *sock = getenv("SSH_AUTH_SOCK");
	struct lc_ssh_id *match;
	uint64_t deadline;
	int rc, r = 0, nkeys = 0;

	if (sock == NULL || *sock == '\0')
		return 0;
	if ((agent = libssh2_agent_init(s->sess)) == NULL)
		return 0;
	if (libssh2_agent_connect(agent) != 0 ||
	    libssh2_agent_list_identities(agent) != 0) {
		lc_log_verbose("ssh-agent at %s: %s", sock, lc_ssh_liberr(s));
		libssh2_agent_free(agent);
		return 0;
	}
	while (libssh2_agent_get_identity(agent, &id, prev) == 0) {
		prev = id;
		match = lc_ssh_id_by_blob(a, id->blob, id->blob_len);
		if (a->ids_only && match == NULL) {
			lc_log_debug("agent key %s: not a configured identity "
			    "(IdentitiesOnly)", id->comment);
			continue;
		}
		if (match != NULL)
			match->offered = 1;
		nkeys++;
		deadline = lc_ssh_deadline(s);
		while ((rc = libssh2_agent_userauth(agent, a->user, id)) ==
		    LIBSSH2_ERROR_EAGAIN) {
			if (lc_ssh_waitsock(s, deadline) != 0) {
				rc = LIBSSH2_ERROR_TIMEOUT;
				break;
			}
		}
		if (rc == 0) {
			lc_log_verbose("authenticated with agent key %s",
			    id->comment);
			r = 1;
			break;
		}
		lc_log_debug("agent key %s refused: %s", id->comment,
		    lc_ssh_liberr(s));
		if (lc_ssh_fatal(rc)) {
			r = -LC_ERR_CONNECT;
			break;
		}
	}
	lc_ssh_tried(a, "agent (%d key%s)", nkeys, nkeys == 1 ? "" : "s");
	libssh2_agent_disconnect(agent);
	libssh2_agent_free(agent);
	return r;
}

static int
lc_ssh_try_file(struct lc_ssh *s, struct lc_ssh_auth *a,
    const struct lc_ssh_id *id, const char *pass)
{
	uint64_t deadline = lc_ssh_deadline(s);
	const char *pub;
	int rc;

	/*
	 * For an encrypted key libssh2 derives the public key from the
	 * private one, so that a wrong passphrase shows as
	 * LIBSSH2_ERROR_FILE rather than as a refused key.
	 */
	pub = id->has_pub && !id->encrypted ? id->pub : NULL;
	while ((rc = libssh2_userauth_publickey_fromfile_ex(s->sess, a->user,
	    (unsigned)strlen(a->user), pub, id->path, pass)) ==
	    LIBSSH2_ERROR_EAGAIN) {
		if (lc_ssh_waitsock(s, deadline) != 0)
			return LIBSSH2_ERROR_TIMEOUT;
	}
	return rc;
}

/* As lc_ssh_auth_agent, for one identity file. */
static int
lc_ssh_auth_file(struct lc_ssh *s, struct lc_ssh_auth *a,
    const struct lc_ssh_id *id)
{
	char prompt[PATH_MAX + 64], pass[LC_SSH_PASS_MAX];
	int rc = LIBSSH2_ERROR_FILE, tries;

	if (!id->encrypted) {
		rc = lc_ssh_try_file(s, a, id, NULL);
	} else if (a->batch) {
		lc_log_verbose("%s: skipping encrypted key in batch mode",
		    id->path);
		lc_ssh_tried(a, "%s (encrypted, skipped in batch mode)",
		    id->path);
		return 0;
	} else {
		snprintf(prompt, sizeof(prompt),
		    "Enter passphrase for key '%s': ", id->path);
		for (tries = 0; tries < LC_SSH_PASS_TRIES; tries++) {
			if (lc_ssh_askpass(prompt, pass, sizeof(pass)) != 0 ||
			    pass[0] == '\0') {
				lc_ssh_tried(a, "%s (encrypted, no passphrase)",
				    id->path);
				OPENSSL_cleanse(pass, sizeof(pass));
				return 0;
			}
			rc = lc_ssh_try_file(s, a, id, pass);
			OPENSSL_cleanse(pass, sizeof(pass));
			if (rc != LIBSSH2_ERROR_FILE)
				break;
			lc_log_warn("%s: bad passphrase", id->path);
		}
	}
	lc_ssh_tried(a, "%s", id->path);
	if (rc == 0) {
		lc_log_verbose("authenticated with %s", id->path);
		return 1;
	}
	lc_log_debug("%s refused: %s", id->path, lc_ssh_liberr(s));
	return lc_ssh_fatal(rc) ? -LC_ERR_CONNECT : 0;
}

static char *
lc_ssh_auth_list(struct lc_ssh *s, const char *user, int *fatal)
{
	uint64_t deadline = lc_ssh_deadline(s);
	char *list;

	*fatal = 0;
	for (;;) {
		list = libssh2_userauth_list(s->sess, user,
		    (unsigned)strlen(user));
		if (list != NULL || libssh2_userauth_authenticated(s->sess))
			return list;
		if (libssh2_session_last_errno(s->sess) !=
		    LIBSSH2_ERROR_EAGAIN || lc_ssh_waitsock(s, deadline) != 0) {
			*fatal = 1;
			return NULL;
		}
	}
}

static int
lc_ssh_authenticate(struct lc_ssh *s, const struct lc_sshconf *c,
    const char *user, const char *identity_file, int batch,
    const char *home, struct lc_err *e)
{
	static const char *const defaults[] = {
		"id_ed25519", "id_ecdsa", "id_rsa",
	};
	struct lc_ssh_auth *a = NULL;
	char path[PATH_MAX];
	const char *list;
	size_t i;
	int r, fatal = 0;

	list = lc_ssh_auth_list(s, user, &fatal);
	if (list == NULL && !fatal)
		return 0;	/* "none" was accepted */
	if (list == NULL)
		return lc_err_set(e, LC_ERR_CONNECT, "%s: %s", s->name,
		    lc_ssh_liberr(s));
	if (!lc_ssh_list_has(list, "publickey"))
		return lc_err_set(e, LC_ERR_AUTH, "%s: authentication failed "
		    "(the server does not accept public keys; it offers %s)",
		    s->name, list);
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	a->user = user;
	a->batch = batch;
	a->ids_only = c->identities_only == 1;
	lc_ssh_id_add(a, identity_file);
	for (i = 0; i < c->n_identity_files; i++)
		lc_ssh_id_add(a, c->identity_files[i]);
	if (a->nids == 0 && !c->identity_files_none) {
		for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
			if ((size_t)snprintf(path, sizeof(path), "%s/.ssh/%s",
			    home, defaults[i]) < sizeof(path))
				lc_ssh_id_add(a, path);
		}
	}
	r = lc_ssh_auth_agent(s, a);
	for (i = 0; r == 0 && i < a->nids; i++) {
		if (!a->ids[i].exists)
			continue;
		if (a->ids[i].offered) {
			lc_log_debug("%s: already offered by the agent",
			    a->ids[i].path);
			continue;
		}
		r = lc_ssh_auth_file(s, a, &a->ids[i]);
	}
	if (r == 1)
		r = 0;
	else if (r == 0)
		r = lc_err_set(e, LC_ERR_AUTH,
		    "%s: authentication failed (tried: %s)", s->name,
		    a->tried[0] != '\0' ? a->tried :
		    "nothing; no agent and no identity file");
	else
		r = lc_err_set(e, LC_ERR_AUTH,
		    "%s: authentication failed (tried: %s): %s", s->name,
		    a->tried, lc_ssh_liberr(s));
	lc_ssh_ids_free(a);
	free(a);
	return r;
}

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

int
lc_ssh_connect(const struct lc_ssh_opts *o, struct lc_ssh **out,
    struct lc_err *e)
{
	struct lc_knownhosts *kh = NULL;
	struct lc_ssh_khfiles khf;
	struct lc_sshconf conf;
	struct lc_sshconf_ctx ctx;
	struct lc_ssh *s = NULL;
	char luser[256], home[PATH_MAX];
	char names[2][LC_KH_NAME_MAX];
	const char *namev[2], *user;
	unsigned port, count;
	size_t nnames = 0;
	uint64_t deadline = 0;
	int r, batch;

	*out = NULL;
	memset(&conf, 0, sizeof(conf));
	pthread_once(&lc_ssh_once, lc_ssh_init_once);
	if (lc_ssh_init_rc != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "libssh2_init failed");
	if (o == NULL || o->host == NULL || *o->host == '\0')
		return lc_err_set(e, LC_ERR_USAGE, "no host given");
	if ((r = lc_ssh_local_user(luser, sizeof(luser), home, sizeof(home),
	    e)) != 0)
		return r;
	memset(&ctx, 0, sizeof(ctx));
	ctx.config_file = o->config_file;
	ctx.home = home;
	ctx.local_user = luser;
	ctx.cmdline_user = o->user;
	if ((r = lc_sshconf_resolve(&ctx, o->host, &conf, e)) != 0) {
		lc_err_ensure(e, r, "ssh configuration");
		goto out;
	}
	user = o->user != NULL && *o->user != '\0' ? o->user :
	    conf.user[0] != '\0' ? conf.user : luser;
	port = conf.port != 0 ? conf.port : 22;
	batch = o->batch || conf.batch_mode == 1;
	if ((s = lc_ssh_new()) == NULL) {
		r = lc_err_set(e, LC_ERR_NOMEM, "out of memory");
		goto out;
	}
	snprintf(s->host, sizeof(s->host), "%s", o->host);
	snprintf(s->name, sizeof(s->name), "%s@%s", user, o->host);
	s->keepalive_s = conf.server_alive_interval < 0 ?
	    LC_SSH_ALIVE_INTERVAL : (unsigned)conf.server_alive_interval;
	count = conf.server_alive_count_max < 1 ? LC_SSH_ALIVE_COUNT :
	    (unsigned)conf.server_alive_count_max;
	s->step_timeout_ms = s->keepalive_s > 0 ?
	    lc_ssh_alive_ms(s->keepalive_s, count) : LC_SSH_STEP_TIMEOUT_MS;
	if (conf.connect_timeout > 0)
		deadline = lc_now_ms() + (uint64_t)conf.connect_timeout * 1000;

	if ((r = lc_ssh_tcp(s, conf.hostname, port, conf.address_family,
	    deadline, count, o->sndbuf, e)) != 0 ||
	    (r = lc_ssh_session(s, e)) != 0)
		goto out;

	/* known_hosts: HostName as ssh does, then the name as given */
	if (lc_knownhosts_name(conf.hostname, port, names[0],
	    sizeof(names[0])) != 0 ||
	    lc_knownhosts_name(o->host, port, names[1],
	    sizeof(names[1])) != 0) {
		r = lc_err_set(e, LC_ERR_CONFIG, "host name too long");
		goto out;
	}
	namev[nnames++] = names[0];
	if (strcmp(names[0], names[1]) != 0)
		namev[nnames++] = names[1];
	lc_ssh_khfiles(&conf, home, &khf);
	if ((r = lc_knownhosts_load(s->sess, khf.all, khf.nall, namev, nnames,
	    &kh, e)) != 0 ||
	    (r = lc_ssh_hostkey_prefs(s, kh, namev, nnames, e)) != 0 ||
	    (r = lc_ssh_handshake(s, conf.hostname, port, deadline, e)) != 0 ||
	    (r = lc_ssh_verify_host(s, kh, &conf, &khf, home, namev, nnames,
	    e)) != 0)
		goto out;
	lc_knownhosts_free(kh);
	kh = NULL;
	if ((r = lc_ssh_authenticate(s, &conf, user, o->identity_file, batch,
	    home, e)) != 0)
		goto out;
	lc_log_verbose("authenticated to %s as %s", conf.hostname, user);
	*out = s;
	s = NULL;	/* transferred */
	r = 0;
 out:
	lc_knownhosts_free(kh);	/* before the session it belongs to */
	lc_ssh_free(s);
	lc_sshconf_free(&conf);
	return r;
}

/* ------------------------------------------------------------------ */
/* The pump */

enum lc_pump_op {
	LC_OP_NONE = 0,
	LC_OP_READ,		/* channel reads, wait_closed */
	LC_OP_WRITE,
	LC_OP_EOF,
};

struct lc_pump {
	struct lc_ssh *s;
	struct lc_buf out;	/* channel stdout -> caller */
	struct lc_buf in;	/* caller -> channel stdin */
	char rbuf[LC_SSH_READ];	/* stderr, and stdout nobody reads */
	char line[LC_SSH_ERRLINE_MAX + 1];	/* remote stderr */
	size_t linelen;
	int pending;		/* LC_OP_* that left a packet half sent */
	int progress;
	int fd_rd_eof;		/* caller closed its writing side */
	int fd_wr_dead;		/* caller does not read any more */
	int fd_shut;		/* we sent the caller EOF */
	int stdin_dead;		/* channel refuses input: drop it */
	int eof_sent;
	int chan_eof;		/* remote EOF and all its data read */
	int chan_closed;
	int dead;		/* connection broken */
	int status;
	char signame[32];
	int published;		/* status handed to lc_ssh_wait() */
	uint64_t ka_due;
};

/*
 * After a libssh2 call of class op: when part of a packet is still queued
 * (a call can return data and still leave, say, its reply to a server
 * request half sent), only a call of the same class may send next.
 */
static void
lc_pump_note(struct lc_pump *p, int op)
{
	if (libssh2_session_block_directions(p->s->sess) &
	    LIBSSH2_SESSION_BLOCK_OUTBOUND)
		p->pending = op;
	else if (p->pending == op)
		p->pending = LC_OP_NONE;
}

/*
 * Is there room in the socket's send buffer right now?  channel_write and
 * send_eof first read what has arrived and may answer it (a server
 * keepalive, say); with room, that small answer goes out whole instead of
 * being left half sent for our own packet to finish "in its place".
 */
static int
lc_pump_writable(const struct lc_pump *p)
{
	struct pollfd pf;

	pf.fd = p->s->sock;
	pf.events = POLLOUT;
	pf.revents = 0;
	return poll(&pf, 1, 0) == 1 && (pf.revents & POLLOUT);
}

static int
lc_pump_may(const struct lc_pump *p, int op)
{
	return p->pending == LC_OP_NONE || p->pending == op;
}

/* The command's end is known (or never will be): wake lc_ssh_wait(). */
static void
lc_pump_publish(struct lc_pump *p)
{
	struct lc_ssh *s = p->s;

	if (p->published)
		return;
	p->published = 1;
	pthread_mutex_lock(&s->mu);
	s->done = 1;
	s->status = p->status;
	snprintf(s->signame, sizeof(s->signame), "%s", p->signame);
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static void
lc_pump_fail(struct lc_pump *p, const char *what)
{
	if (!p->dead)
		lc_log_warn("%s: connection lost (%s): %s", p->s->name, what,
		    lc_ssh_liberr(p->s));
	p->dead = 1;
	p->progress = 1;
	lc_pump_publish(p);
}

static void
lc_pump_errline(struct lc_pump *p)
{
	size_t i;

	while (p->linelen > 0 && p->line[p->linelen - 1] == '\r')
		p->linelen--;
	for (i = 0; i < p->linelen; i++)
		if (p->line[i] == '\0')
			p->line[i] = '?';
	p->line[p->linelen] = '\0';
	lc_log_warn("[%s] %s", p->s->host, p->line);
	p->linelen = 0;
}

static void
lc_pump_errbytes(struct lc_pump *p, const char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (b[i] == '\n') {
			lc_pump_errline(p);
			continue;
		}
		if (p->linelen == LC_SSH_ERRLINE_MAX)
			lc_pump_errline(p);
		p->line[p->linelen++] = b[i];
	}
}

static void
lc_pump_exit_status(struct lc_pump *p)
{
	LIBSSH2_CHANNEL *ch = p->s->chan;
	char *sig = NULL;
	size_t siglen = 0;

	if (libssh2_channel_get_exit_signal(ch, &sig, &siglen, NULL, NULL,
	    NULL, NULL) == 0 && sig != NULL) {
		snprintf(p->signame, sizeof(p->signame), "%.*s",
		    (int)(siglen < sizeof(p->signame) ? siglen :
		    sizeof(p->signame) - 1), sig);
		libssh2_free(p->s->sess, sig);
		p->status = -1;
	} else {
		p->status = libssh2_channel_get_exit_status(ch);
	}
	lc_log_debug("%s: remote command ended: status %d%s%s", p->s->name,
	    p->status, p->signame[0] ? ", signal " : "", p->signame);
}

static void
lc_pump_read_stderr(struct lc_pump *p)
{
	ssize_t rc;
	int i;

	for (i = 0; i < LC_SSH_READS && lc_pump_may(p, LC_OP_READ); i++) {
		rc = libssh2_channel_read_stderr(p->s->chan, p->rbuf,
		    LC_SSH_READ);
		lc_pump_note(p, LC_OP_READ);
		if (rc > 0) {
			lc_pump_errbytes(p, p->rbuf, (size_t)rc);
			p->progress = 1;
			continue;
		}
		if (rc < 0 && rc != LIBSSH2_ERROR_EAGAIN && lc_ssh_fatal((int)rc))
			lc_pump_fail(p, "reading stderr");
		return;
	}
}

/*
 * Every channel read passes the same buflen (LC_SSH_READ): libssh2 sizes
 * its window adjustment from buflen, and when the adjustment packet could
 * not be sent at once the retry resends that packet but counts the
 * adjustment computed by the retrying call.  A smaller buflen on the retry
 * would leave libssh2 believing in a smaller window than the server does,
 * and libssh2 silently truncates data beyond its idea of the window.
 */
static void
lc_pump_read_stdout(struct lc_pump *p)
{
	uint8_t *dst;
	ssize_t rc;
	int i;

	for (i = 0; i < LC_SSH_READS && lc_pump_may(p, LC_OP_READ); i++) {
		if (p->fd_wr_dead) {
			/* nobody reads: drop it, so the remote can finish */
			rc = libssh2_channel_read(p->s->chan, p->rbuf,
			    LC_SSH_READ);
		} else {
			if (LC_SSH_PUMP_BUF - lc_buf_len(&p->out) < LC_SSH_READ ||
			    lc_buf_reserve(&p->out, LC_SSH_READ, &dst) != 0)
				return;
			rc = libssh2_channel_read(p->s->chan, (char *)dst,
			    LC_SSH_READ);
			lc_buf_unappend(&p->out, rc > 0 ?
			    LC_SSH_READ - (size_t)rc : LC_SSH_READ);
		}
		lc_pump_note(p, LC_OP_READ);
		if (rc > 0) {
			p->progress = 1;
			continue;
		}
		if (rc < 0 && rc != LIBSSH2_ERROR_EAGAIN &&
		    lc_ssh_fatal((int)rc))
			lc_pump_fail(p, "reading");
		return;
	}
}

static void
lc_pump_write(struct lc_pump *p)
{
	ssize_t rc;
	int i;

	for (i = 0; i < LC_SSH_WRITES; i++) {
		if (lc_buf_len(&p->in) == 0 || p->stdin_dead ||
		    !lc_pump_may(p, LC_OP_WRITE))
			return;
		/* no window: wait for the adjust the reads will bring */
		if (p->pending != LC_OP_WRITE &&
		    (libssh2_channel_window_write(p->s->chan) == 0 ||
		    !lc_pump_writable(p)))
			return;
		rc = libssh2_channel_write(p->s->chan,
		    (const char *)lc_buf_ptr(&p->in), lc_buf_len(&p->in));
		lc_pump_note(p, LC_OP_WRITE);
		if (rc > 0) {
			lc_buf_consume(&p->in, (size_t)rc);
			p->progress = 1;
			continue;
		}
		if (rc == 0 || rc == LIBSSH2_ERROR_EAGAIN)
			return;
		if (lc_ssh_fatal((int)rc)) {
			lc_pump_fail(p, "writing");
			return;
		}
		lc_log_verbose("%s: remote input closed: %s", p->s->name,
		    lc_ssh_liberr(p->s));
		p->stdin_dead = 1;
		lc_buf_reset(&p->in);
		p->progress = 1;
		return;
	}
}

static void
lc_pump_send_eof(struct lc_pump *p)
{
	int rc;

	if (!p->fd_rd_eof || p->eof_sent ||
	    (lc_buf_len(&p->in) > 0 && !p->stdin_dead) ||
	    !lc_pump_may(p, LC_OP_EOF) ||
	    (p->pending != LC_OP_EOF && !lc_pump_writable(p)))
		return;
	rc = libssh2_channel_send_eof(p->s->chan);
	lc_pump_note(p, LC_OP_EOF);
	if (rc == LIBSSH2_ERROR_EAGAIN)
		return;
	if (rc != 0 && lc_ssh_fatal(rc)) {
		lc_pump_fail(p, "sending EOF");
		return;
	}
	p->eof_sent = 1;
	p->progress = 1;
}

static void
lc_pump_close(struct lc_pump *p)
{
	int rc;

	if (!p->chan_eof && libssh2_channel_eof(p->s->chan) == 1) {
		p->chan_eof = 1;
		p->progress = 1;
		if (p->linelen > 0)
			lc_pump_errline(p);
	}
	if (!p->chan_eof || p->chan_closed || p->pending != LC_OP_NONE)
		return;
	rc = libssh2_channel_wait_closed(p->s->chan);
	lc_pump_note(p, LC_OP_READ);
	if (rc == LIBSSH2_ERROR_EAGAIN)
		return;
	if (rc != 0) {
		lc_pump_fail(p, "closing");
		return;
	}
	p->chan_closed = 1;
	p->progress = 1;
	lc_pump_exit_status(p);
	lc_pump_publish(p);
}

static void
lc_pump_keepalive(struct lc_pump *p)
{
	uint64_t now;
	int next = 0, rc;

	if (p->s->keepalive_s == 0 || p->pending != LC_OP_NONE)
		return;
	now = lc_now_ms();
	if (now < p->ka_due)
		return;
	/* only when a small packet surely goes out whole (see the top) */
	if (!lc_pump_writable(p)) {
		p->ka_due = now + 200;
		return;
	}
	if ((rc = libssh2_keepalive_send(p->s->sess, &next)) != 0) {
		lc_pump_fail(p, "keepalive");
		return;
	}
	p->ka_due = now + (next > 0 ? (uint64_t)next * 1000 : 1000);
}

static void
lc_pump_channel(struct lc_pump *p)
{
	if (p->dead || p->chan_closed)
		return;
	lc_pump_read_stderr(p);
	if (!p->dead)
		lc_pump_read_stdout(p);
	if (!p->dead)
		lc_pump_write(p);
	if (!p->dead)
		lc_pump_send_eof(p);
	if (!p->dead)
		lc_pump_close(p);
	if (!p->dead && !p->chan_closed)
		lc_pump_keepalive(p);
}

static void
lc_pump_fd(struct lc_pump *p)
{
	int fd = p->s->pump_fd;
	size_t space;
	uint8_t *dst;
	ssize_t n;

	if (lc_buf_len(&p->out) > 0 && p->fd_wr_dead)
		lc_buf_reset(&p->out);
	if (lc_buf_len(&p->out) > 0) {
		n = send(fd, lc_buf_ptr(&p->out), lc_buf_len(&p->out),
		    MSG_NOSIGNAL);
		if (n > 0) {
			lc_buf_consume(&p->out, (size_t)n);
			p->progress = 1;
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			p->fd_wr_dead = 1;
			lc_buf_reset(&p->out);
			p->progress = 1;
		}
	}
	if ((p->chan_eof || p->dead) && lc_buf_len(&p->out) == 0 &&
	    !p->fd_shut) {
		shutdown(fd, SHUT_WR);
		p->fd_shut = 1;
		p->progress = 1;
	}
	if (p->fd_rd_eof || p->chan_closed || p->dead)
		return;
	space = LC_SSH_PUMP_BUF - lc_buf_len(&p->in);
	if (space == 0 || lc_buf_reserve(&p->in, space, &dst) != 0)
		return;
	n = recv(fd, dst, space, 0);
	lc_buf_unappend(&p->in, n > 0 ? space - (size_t)n : space);
	if (n > 0) {
		if (p->stdin_dead)
			lc_buf_reset(&p->in);
		p->progress = 1;
	} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		/* EOF, or the caller is gone (ECONNRESET) */
		p->fd_rd_eof = 1;
		if (n < 0)
			p->fd_wr_dead = 1;
		p->progress = 1;
	}
}

static int
lc_pump_finished(const struct lc_pump *p)
{
	return (p->dead || p->chan_closed) &&
	    (lc_buf_len(&p->out) == 0 || p->fd_wr_dead);
}

/* Would lc_pump_write() or lc_pump_send_eof() send, given room? */
static int
lc_pump_wants_send(const struct lc_pump *p)
{
	if (lc_buf_len(&p->in) > 0 && !p->stdin_dead)
		return libssh2_channel_window_write(p->s->chan) > 0;
	return p->fd_rd_eof && !p->eof_sent;
}

static void
lc_pump_poll(struct lc_pump *p)
{
	struct lc_ssh *s = p->s;
	struct pollfd pf[3];
	nfds_t n = 0;
	uint64_t now;
	int ms = -1, ev;

	pf[n].fd = s->wake.rfd;
	pf[n].events = POLLIN;
	pf[n++].revents = 0;
	if (!p->dead && !p->chan_closed) {
		/* a half-sent packet waits for room; else listen, and wait
		 * for room when a write or EOF is ready to go */
		ev = p->pending != LC_OP_NONE ? POLLOUT : POLLIN;
		if (p->pending == LC_OP_NONE && lc_pump_wants_send(p))
			ev |= POLLOUT;
		pf[n].fd = s->sock;
		pf[n].events = (short)ev;
		pf[n++].revents = 0;
		if (s->keepalive_s > 0) {
			now = lc_now_ms();
			ms = p->ka_due <= now ? 0 : p->ka_due - now > INT_MAX ?
			    INT_MAX : (int)(p->ka_due - now);
		}
	}
	ev = 0;
	if (!p->fd_rd_eof && !p->chan_closed && !p->dead &&
	    lc_buf_len(&p->in) < LC_SSH_PUMP_BUF)
		ev |= POLLIN;
	if (lc_buf_len(&p->out) > 0 && !p->fd_wr_dead)
		ev |= POLLOUT;
	if (ev != 0) {
		pf[n].fd = s->pump_fd;
		pf[n].events = (short)ev;
		pf[n++].revents = 0;
	}
	if (poll(pf, n, ms) > 0 && (pf[0].revents & POLLIN))
		lc_wake_drain(&s->wake);
}

/*
 * The pump's buffers carry the control protocol, and with it the
 * per-transfer key on its way to the remote agent: wipe them whole
 * (every byte ever allocated; lc_pump_fd() grows "in" to its maximum at
 * the first read, so no realloc left an older copy behind).
 */
static void
lc_pump_buf_wipe(struct lc_buf *b)
{
	if (b->d != NULL)
		OPENSSL_cleanse(b->d, b->alloc);
	lc_buf_free(b);
}

static void *
lc_ssh_pump_main(void *arg)
{
	struct lc_ssh *s = arg;
	struct lc_pump *p;

	if ((p = calloc(1, sizeof(*p))) == NULL) {
		lc_log_error("%s: out of memory in the ssh pump", s->name);
		shutdown(s->pump_fd, SHUT_RDWR);
		pthread_mutex_lock(&s->mu);
		s->done = 1;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		return NULL;
	}
	p->s = s;
	p->status = -1;
	lc_buf_init(&p->out, LC_SSH_PUMP_BUF);
	lc_buf_init(&p->in, LC_SSH_PUMP_BUF);
	lc_log_set_tag(NULL);
	while (!atomic_load(&s->stop)) {
		p->progress = 0;
		lc_pump_channel(p);
		lc_pump_fd(p);
		if (lc_pump_finished(p))
			break;
		if (!p->progress)
			lc_pump_poll(p);
	}
	if (p->linelen > 0)
		lc_pump_errline(p);
	/* the caller reads EOF; its writes fail with EPIPE */
	shutdown(s->pump_fd, SHUT_RDWR);
	lc_pump_publish(p);
	lc_pump_buf_wipe(&p->out);
	lc_pump_buf_wipe(&p->in);
	OPENSSL_cleanse(p, sizeof(*p));
	free(p);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Exec, wait, free */

int
lc_ssh_exec(struct lc_ssh *s, const char *cmd, int *fd, struct lc_err *e)
{
	uint64_t deadline;
	int sv[2] = { -1, -1 }, r, rc;

	*fd = -1;
	if (s == NULL || cmd == NULL || s->chan != NULL || s->pump_started)
		return lc_err_set(e, LC_ERR_INTERNAL,
		    "lc_ssh_exec: one command per connection");
	deadline = lc_ssh_deadline(s);
	while ((s->chan = libssh2_channel_open_session(s->sess)) == NULL) {
		if (libssh2_session_last_errno(s->sess) !=
		    LIBSSH2_ERROR_EAGAIN || lc_ssh_waitsock(s, deadline) != 0)
			return lc_err_set(e, LC_ERR_CONNECT,
			    "%s: cannot open a session channel: %s", s->name,
			    lc_ssh_liberr(s));
	}
	deadline = lc_ssh_deadline(s);
	while ((rc = libssh2_channel_exec(s->chan, cmd)) ==
	    LIBSSH2_ERROR_EAGAIN) {
		if (lc_ssh_waitsock(s, deadline) != 0)
			break;
	}
	if (rc != 0)
		return lc_err_set(e, lc_ssh_fatal(rc) ? LC_ERR_CONNECT :
		    LC_ERR_AGENT, "%s: cannot run the command: %s", s->name,
		    lc_ssh_liberr(s));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return lc_err_sys(e, LC_ERR_INTERNAL, errno, "socketpair");
	if ((r = lc_set_nonblock(sv[1], 1)) != 0 ||
	    (r = lc_wake_open(&s->wake)) != 0) {
		r = lc_err_set(e, LC_ERR_INTERNAL, "pump setup failed");
		goto out;
	}
	if (s->keepalive_s > 0)
		libssh2_keepalive_config(s->sess, 1, s->keepalive_s);
	s->pump_fd = sv[1];
	sv[1] = -1;	/* transferred */
	if ((r = lc_thread_start(&s->pump, "lc-ssh-pump", lc_ssh_pump_main,
	    s)) != 0) {
		r = lc_err_set(e, LC_ERR_INTERNAL, "cannot start the ssh pump");
		goto out;
	}
	s->pump_started = 1;
	*fd = sv[0];
	sv[0] = -1;	/* transferred */
	r = 0;
 out:
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	return r;
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

const char *
lc_ssh_peer_addr(const struct lc_ssh *s)
{
	return s->peer;
}

const char *
lc_ssh_local_addr(const struct lc_ssh *s)
{
	return s->local;
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
	lc_wake_close(&s->wake);
	if (s->sync_ready) {
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->mu);
	}
	free(s);
}
