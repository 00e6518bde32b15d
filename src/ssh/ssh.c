/*
 * SSH connection (see lanecp/ssh.h), on libssh2: the session.
 *
 * The session runs in libssh2's non-blocking mode from the start; every
 * step that must wait polls the socket in the direction libssh2 reports
 * (libssh2_session_block_directions) with a deadline: ConnectTimeout for
 * TCP connect plus SSH handshake, and a per-step limit afterwards
 * (ServerAliveInterval * ServerAliveCountMax, or LC_SSH_STEP_TIMEOUT_MS).
 *
 * This file holds the session: the libssh2 setup, handshake, logging in
 * to one host (lc__ssh_login), lc_ssh_connect(), the accessors and
 * lc_ssh_free().  The other parts, each in its own file:
 *   ssh_tcp.c      TCP connect and socket options (keepalive)
 *   ssh_hostkey.c  host key algorithms, known_hosts and RevokedHostKeys
 *   ssh_jump.c     proxied connections: ProxyJump / -J (a chain of
 *                  sessions, each later one over a direct-tcpip channel
 *                  of the one before, bridged to a socketpair by that
 *                  session's pump thread: see lc_ssh_forward()) and
 *                  ProxyCommand (a child "/bin/sh -c CMD" on a socketpair)
 *   ssh_channel.c  the exec and forward channels, waiting for the exit
 *   auth.c         authentication (key files in keyfile.c, the
 *                  passphrase prompt in askpass.c)
 *   pump.c         the channel pump, with the libssh2 1.10 workarounds
 *
 * Threads and descriptors: lc_ssh_connect() runs on the caller's thread.
 * Once a jump host's forward pump runs, that pump thread alone touches
 * the jump host's session and owns its socket and its end of the
 * socketpair; the next session (on the caller's thread) owns the other
 * end as its socket.  lc_ssh_free() frees a session first and then the
 * jump host it went through (s->via), so each pump stops after the
 * session that used it said goodbye.
 */
#include "ssh.h"
#include "err.h"
#include "knownhosts.h"
#include "log.h"
#include "sshconf.h"
#include "clock.h"
#include "fdio.h"
#include "wake.h"
#include "version.h"
#include "ssh_int.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libssh2.h>

#define LC_SSH_ALIVE_INTERVAL 15	/* ServerAliveInterval default */
#define LC_SSH_ALIVE_COUNT 3		/* ServerAliveCountMax default */
#define LC_SSH_STEP_TIMEOUT_MS (120 * 1000)	/* without keepalives */

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
/* Handshake */

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
	if (rc == LIBSSH2_ERROR_KEX_FAILURE) {
		s->limit = "it has no key exchange, cipher or MAC algorithm "
		    "in common with libssh2";
		return lc_err_set(e, LC_ERR_CONNECT,
		    "cannot connect to %s port %u: the server and libssh2 %s "
		    "have no key exchange, cipher or MAC algorithm in common "
		    "(lanecp -vv lists what lanecp offers, ssh -vv what the "
		    "server does)", host, port, libssh2_version(0));
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

/*
 * Resolve hop through ssh_config into conf, with the hop's user and port
 * filled in (conf->user: the user to log in as; conf->port: never 0).
 */
int
lc__ssh_resolve(const struct lc_ssh_opts *o, const struct lc_ssh_env *env,
    const struct lc_ssh_hop *hop, struct lc_sshconf *conf, struct lc_err *e)
{
	struct lc_sshconf_ctx ctx;
	int r;

	memset(&ctx, 0, sizeof(ctx));
	ctx.config_file = o->config_file;
	ctx.home = env->home;
	ctx.local_user = env->luser;
	ctx.cmdline_user = hop->user;
	if (!hop->jump) {
		ctx.cmdline_port = o->port;
		ctx.cmdline_options = o->options;
		ctx.n_cmdline_options = o->noptions;
	}
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

/*
 * Log in to one machine: a new lc_ssh on fd (a socketpair end from a
 * forward or a ProxyCommand) or, with fd < 0, over TCP to conf's HostName;
 * host key check and authentication as for any host.  fd, via and pid
 * pass to the new connection in every case (freed with it on error).
 */
int
lc__ssh_login(const struct lc_ssh_opts *o, const struct lc_ssh_env *env,
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
		lc__ssh_reap(pid);
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
	    lc__ssh_alive_ms(s->keepalive_s, count) : LC_SSH_STEP_TIMEOUT_MS;
	if (conf->connect_timeout > 0)
		deadline = lc_now_ms() + (uint64_t)conf->connect_timeout * 1000;

	if (fd >= 0) {
		if (lc_set_nonblock(fd, 1) != 0) {
			r = lc_err_sys(e, LC_ERR_INTERNAL, errno, "nonblock");
			goto out;
		}
	} else if ((r = lc__ssh_tcp(s, conf->hostname, port,
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
	lc__ssh_khfiles(conf, env->home, &khf);
	if ((r = lc_knownhosts_load(s->sess, khf.all, khf.nall, namev, nnames,
	    &kh, e)) != 0 ||
	    (r = lc__ssh_algo_prefs(s, e)) != 0 ||
	    (r = lc__ssh_hostkey_prefs(s, kh, namev, nnames, e)) != 0 ||
	    (r = lc_ssh_handshake(s, conf->hostname, port, deadline, e)) != 0 ||
	    (r = lc__ssh_verify_host(s, kh, conf, &khf, env->home, namev,
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
	if (r != 0 && s != NULL && s->limit != NULL && !s->prompted &&
	    env->limit != NULL && env->limit[0] == '\0')
		snprintf(env->limit, env->limit_sz, "%s", s->limit);
	lc_knownhosts_free(kh);	/* before the session it belongs to */
	lc_ssh_free(s);
	return r;
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
	memset(&env, 0, sizeof(env));
	if (o != NULL && o->limit != NULL && o->limit_sz > 0) {
		o->limit[0] = '\0';
		env.limit = o->limit;
		env.limit_sz = o->limit_sz;
	}
	pthread_once(&lc_ssh_once, lc_ssh_init_once);
	if (lc_ssh_init_rc != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "libssh2_init failed");
	if (o == NULL || o->host == NULL || *o->host == '\0')
		return lc_err_set(e, LC_ERR_USAGE, "no host given");
	if (o->program != NULL) {
		if ((*out = lc_ssh_new()) == NULL)
			return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
		if ((r = lc__sshprog_connect(o, *out, e)) != 0) {
			lc_ssh_free(*out);
			*out = NULL;
		}
		return r;
	}
	if ((r = lc_ssh_local_user(env.luser, sizeof(env.luser), env.home,
	    sizeof(env.home), e)) != 0)
		return r;
	memset(&hop, 0, sizeof(hop));
	hop.host = o->host;
	hop.user = o->user != NULL && *o->user != '\0' ? o->user : NULL;
	hop.identity_file = o->identity_file;
	if ((r = lc__ssh_resolve(o, &env, &hop, &conf, e)) != 0)
		goto out;
	/* -J overrides ProxyJump and ProxyCommand, as in ssh */
	jump = o->jump != NULL ? o->jump : conf.proxy_jump;
	if (jump != NULL && strcasecmp(jump, "none") == 0)
		jump = NULL;
	names[0] = '\0';
	if (jump != NULL) {
		if ((r = lc__ssh_chain(o, &env, jump, conf.hostname, conf.port,
		    &via, &fd, names, sizeof(names), e)) != 0)
			goto out;
	} else if (o->jump == NULL && conf.proxy_command != NULL) {
		if ((r = lc__ssh_proxy_command(conf.proxy_command, &conf, &pid,
		    &fd, e)) != 0)
			goto out;
		snprintf(names, sizeof(names), "ProxyCommand");
	}
	if ((r = lc__ssh_login(o, &env, &hop, &conf, fd, via, pid, out,
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
/* Accessors, free */

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
	lc__ssh_reap(s->proxy_pid);
	lc_ssh_free(s->via);
	lc__sshprog_free(s->prog);
	lc_wake_close(&s->wake);
	if (s->sync_ready) {
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->mu);
	}
	free(s);
}
