/*
 * SSH connection: its one channel (see lanecp/ssh.h), an exec channel
 * (lc_ssh_exec) or a direct-tcpip forward (lc_ssh_forward), bridged to a
 * socketpair by the pump thread (pump.c), and waiting for the command's
 * exit status (lc_ssh_wait) and early stderr.
 */
#include "ssh.h"
#include "err.h"
#include "log.h"
#include "clock.h"
#include "fdio.h"
#include "thread.h"
#include "wake.h"
#include "ssh_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libssh2.h>

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

	if (s != NULL && s->prog != NULL && fd != NULL)
		return lc__sshprog_forward(s, host, port, fd, e);
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

int
lc_ssh_exec(struct lc_ssh *s, const char *cmd, int *fd, struct lc_err *e)
{
	uint64_t deadline;
	int rc;

	*fd = -1;
	if (s != NULL && s->prog != NULL)
		return lc__sshprog_exec(s, cmd, fd, e);
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
	/*
	 * Only until the request is on its way, not for the server's
	 * answer: the pump takes that (exec_pending), so the command's
	 * first input follows the request without a round trip, as
	 * OpenSSH's client does.  sshd handles a channel's messages in
	 * order, and drops data for a channel whose command did not start.
	 * EAGAIN with nothing blocked outbound: the request has gone out
	 * whole and libssh2 waits for its answer (a different packet must
	 * not be sent before a half-sent one is done, see pump.c).
	 */
	deadline = lc__ssh_deadline(s);
	while ((rc = libssh2_channel_exec(s->chan, cmd)) ==
	    LIBSSH2_ERROR_EAGAIN && (libssh2_session_block_directions(
	    s->sess) & LIBSSH2_SESSION_BLOCK_OUTBOUND)) {
		if (lc__ssh_waitsock(s, deadline) != 0)
			break;
	}
	if (rc == LIBSSH2_ERROR_EAGAIN && !(libssh2_session_block_directions(
	    s->sess) & LIBSSH2_SESSION_BLOCK_OUTBOUND))
		s->exec_pending = 1;
	else if (rc != 0)
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

int
lc_ssh_wait_sent(struct lc_ssh *s, int timeout_ms)
{
	struct timespec ts;
	int r = 0, st;

	if (s == NULL || !s->pump_started)
		return -LC_ERR_INTERNAL;
	/* ssh reads the socket itself: its end is all we can know */
	if (s->prog != NULL)
		return lc_ssh_wait(s, timeout_ms, &st, NULL, 0);
	lc_deadline(CLOCK_MONOTONIC, timeout_ms > 0 ? timeout_ms : 0, &ts);
	pthread_mutex_lock(&s->mu);
	while (!s->sent && !s->done && r == 0)
		if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) == ETIMEDOUT)
			r = -LC_ERR_TIMEOUT;
	if (s->sent || s->done)
		r = 0;
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

int
lc_ssh_transport_err(struct lc_ssh *s, int answered, struct lc_err *e)
{
	if (s == NULL || s->prog == NULL)
		return 0;
	return lc__sshprog_err(s, answered, e);
}

int
lc_ssh_forward_err(struct lc_ssh *s, struct lc_err *e)
{
	if (s == NULL || s->prog == NULL || !s->fwd ||
	    !lc__sshprog_fwd_failed(s))
		return 0;
	return lc__sshprog_err(s, 0, e);
}

void
lc_ssh_answered(struct lc_ssh *s)
{
	if (s != NULL && s->prog != NULL)
		lc__sshprog_answered(s);
}
