/*
 * The controller's data relay (relay.h): one leg per data stream.
 *
 * Threads:
 *   leg       one per stream (lc_leg_main): connects both ends of its
 *             stream, then either moves the bytes itself (TCP to TCP:
 *             splice(2) through a pipe per direction, no copy into user
 *             space) or leaves that to the SSH pump threads of the ends
 *             reached over SSH (ssh.c), and waits.  When the controller
 *             asks for a redial (the sink lost the stream) or the stream
 *             has ended, it drops both ends; after a redial it connects
 *             them again.
 *   openers   lc_relay_open_ssh: up to LC_RELAY_SSH_PARALLEL short-lived
 *             threads opening SSH connections, joined before it returns.
 *   caller    the controller's thread: start, redial, free.
 * One thread moves both directions, its sockets non-blocking.  A direction
 * takes bytes from its incoming socket only when the previous ones have
 * all gone into the outgoing one and that socket is writable, which under
 * the data streams' TCP_NOTSENT_LOWAT (sock.c) means little is left unsent
 * there: its pipe holds no more than LC_RELAY_CHUNK of a stream, so the
 * source blocks soon after the far leg slows down, once the near leg's
 * receive buffer (autotuned, still 0.7 MiB a stream on a veth) is full,
 * closer to what it would do on a direct path.  (With a 1 MiB pipe drained
 * by a blocking write,
 * a stream slowed by a loss on the far leg went on taking blocks into the
 * relay's buffers, and the sink's ordered writer waited for them while
 * every other stream's window filled: 0.63-0.85x direct, bench/RESULTS.md.)
 * Descriptors: a leg's sockets and SSH connections belong to its thread;
 * the caller only shuts the sockets down (under the leg's mutex) and
 * signals the leg's wake pipe, which wakes its poll.  The leg closes them,
 * with a reset where the agent may still send (lc_leg_drop).
 */
#include "relay.h"

#include "clock.h"
#include "log.h"
#include "stream.h"
#include "thread.h"
#include "wake.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define LC_LEG_CONNECT_MS 10000	/* one connect to an end */

#define LC_LEG_RETRY_MIN_MS 250
/* how often a leg looks at its ssh -W ends (lc_ssh_forward_err) */
#define LC_LEG_FWD_CHECK_MS 200
#define LC_LEG_RETRY_MAX_MS 2000

struct lc_relay;

struct lc_leg {
	struct lc_relay *r;
	uint32_t idx;
	pthread_t thread;
	int started;
	pthread_mutex_t mu;	/* fd[] for shutdown from the caller */
	int fd[2];		/* TCP ends (leg thread), -1 when none */
	struct lc_ssh *ssh[2];	/* SSH ends (leg thread) */
	int pipe[2][2];		/* splice pipes, per direction */
	struct lc_wake wake;
	atomic_bool redial;
};

struct lc_relay {
	struct lc_relay_end end[2];
	uint32_t n;
	uint32_t window;
	atomic_bool stop;
	atomic_bool ever_up;	/* some leg has connected */
	atomic_bool refused;	/* a server refused to forward (EACCES) */
	pthread_mutex_t mu;	/* the fields below */
	uint32_t worst;		/* most failed connects in a row of a leg */
	struct lc_err why;	/* the last one's error */
	struct lc_leg leg[LC_MAX_STREAMS];
};

/* ---- SSH connections, opened ahead ---- */

struct lc_opener {
	const struct lc_ssh_opts *o;
	pthread_mutex_t mu;
	uint32_t next;		/* next slot to try (mu) */
	uint32_t want;
	struct lc_ssh **got;	/* want slots, NULL where it failed */
	int first_err;		/* mu */
	struct lc_err e;	/* mu: the first failure */
};

static void *
lc_opener_main(void *arg)
{
	struct lc_opener *op = arg;
	struct lc_err e;

	for (;;) {
		uint32_t k;
		int r;

		pthread_mutex_lock(&op->mu);
		k = op->next < op->want ? op->next++ : op->want;
		pthread_mutex_unlock(&op->mu);
		if (k >= op->want)
			return NULL;
		lc_err_clear(&e);
		r = lc_ssh_connect(op->o, &op->got[k], &e);
		if (r != 0) {
			op->got[k] = NULL;
			pthread_mutex_lock(&op->mu);
			if (op->first_err == 0) {
				op->first_err = r;
				op->e = e;
			}
			pthread_mutex_unlock(&op->mu);
		}
	}
}

int
lc_relay_open_ssh(const struct lc_ssh_opts *o, uint32_t want,
    struct lc_ssh **conns, struct lc_err *e)
{
	struct lc_opener op;
	struct lc_ssh_opts so;
	pthread_t th[LC_RELAY_SSH_PARALLEL];
	int started[LC_RELAY_SSH_PARALLEL] = { 0 };
	uint32_t got = 0, nth;

	if (want == 0 || want > LC_MAX_STREAMS)
		return lc_err_set(e, LC_ERR_INTERNAL, "bad connection count");
	memset(&op, 0, sizeof(op));
	/* the openers run at once: none of them writes the controller's
	   fallback reason (o->limit, its own connection's) */
	so = *o;
	so.limit = NULL;
	so.limit_sz = 0;
	op.o = &so;
	op.want = want;
	op.got = conns;
	lc_err_clear(&op.e);
	pthread_mutex_init(&op.mu, NULL);
	nth = want < LC_RELAY_SSH_PARALLEL ? want : LC_RELAY_SSH_PARALLEL;
	for (uint32_t i = 0; i < nth; i++)
		started[i] = lc_thread_start(&th[i], "lc-sshopen",
		    lc_opener_main, &op) == 0;
	for (uint32_t i = 0; i < nth; i++)
		if (started[i])
			pthread_join(th[i], NULL);
	if (!started[0])
		lc_opener_main(&op);	/* no thread at all: do it here */
	/* the server refused some (MaxStartups): once more, one at a time */
	for (uint32_t k = 0; k < want; k++) {
		struct lc_err e2;
		if (conns[k] == NULL && op.first_err != -LC_ERR_HOSTKEY &&
		    op.first_err != -LC_ERR_AUTH &&
		    op.first_err != -LC_ERR_CONFIG) {
			lc_err_clear(&e2);
			if (lc_ssh_connect(o, &conns[k], &e2) != 0)
				conns[k] = NULL;
		}
	}
	for (uint32_t k = 0; k < want; k++)	/* compact */
		if (conns[k] != NULL)
			conns[got++] = conns[k];
	for (uint32_t k = got; k < want; k++)
		conns[k] = NULL;
	pthread_mutex_destroy(&op.mu);
	if (got == 0) {
		*e = op.e;
		return op.first_err != 0 ? op.first_err : -LC_ERR_CONNECT;
	}
	if (got < want)
		lc_log_warn("%s: the server accepted %u of %u SSH connections "
		    "(MaxStartups or MaxSessions?); using %u data stream%s "
		    "(last refusal: %s)", o->host, got, want, got,
		    got == 1 ? "" : "s", op.e.msg);
	return (int)got;
}

/* ---- a leg ---- */

/* Wait up to ms (or until woken); 1 if the leg should stop. */
static int
lc_leg_wait(struct lc_leg *l, int ms)
{
	struct pollfd pfd = { .fd = l->wake.rfd, .events = POLLIN };

	if (!atomic_load(&l->r->stop) && !atomic_load(&l->redial))
		(void)poll(&pfd, 1, ms);
	lc_wake_drain(&l->wake);
	return atomic_load(&l->r->stop);
}

/* Connect end k of the leg by TCP.  0 with *fd, or -LC_ERR_*. */
static int
lc_leg_tcp(struct lc_leg *l, int k, int *fd, struct lc_err *e)
{
	const struct lc_relay_end *end = &l->r->end[k];

	return lc_sock_connect(end->addr, end->ports[l->idx], l->r->window,
	    LC_LEG_CONNECT_MS, &l->r->stop, fd, e);
}

/* End k's SSH connection: the one opened ahead, else a new one. */
static int
lc_leg_ssh(struct lc_leg *l, int k, struct lc_err *e)
{
	struct lc_relay_end *end = &l->r->end[k];

	if (end->conn[l->idx] != NULL) {
		l->ssh[k] = end->conn[l->idx];	/* taken over */
		end->conn[l->idx] = NULL;
		return 0;
	}
	return lc_ssh_connect(end->ssh, &l->ssh[k], e);
}

/* Bridge end k over its SSH connection to *fd (see lc_ssh_forward). */
static int
lc_leg_forward(struct lc_leg *l, int k, int *fd, struct lc_err *e)
{
	int r;

	if ((r = lc_leg_ssh(l, k, e)) != 0)
		return r;
	return lc_ssh_forward(l->ssh[k], "127.0.0.1",
	    l->r->end[k].ports[l->idx], fd, e);
}

/* Both TCP ends non-blocking, for lc_leg_splice.  0 or -1 with e. */
static int
lc_leg_nonblock(int f0, int f1, struct lc_err *e)
{
	int fl;

	for (int k = 0; k < 2; k++) {
		int fd = k == 0 ? f0 : f1;
		if ((fl = fcntl(fd, F_GETFL)) < 0 ||
		    fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) {
			lc_err_sys(e, LC_ERR_CONNECT, errno, "relay: fcntl");
			return -1;
		}
	}
	return 0;
}

/*
 * Connect both ends.  TCP to TCP: fd[0] and fd[1], for the splice.  With
 * an SSH end, its pump thread bridges the other end's socket (or a
 * socketpair to the other SSH end's pump) and the leg has nothing to
 * move itself.
 */
static int
lc_leg_connect(struct lc_leg *l, struct lc_err *e)
{
	const struct lc_relay *r = l->r;
	int ssh0 = r->end[0].ssh != NULL, ssh1 = r->end[1].ssh != NULL;
	int f0 = -1, f1 = -1, rc;

	if (!ssh0 && !ssh1) {
		if ((rc = lc_leg_tcp(l, 0, &f0, e)) != 0)
			return rc;
		if ((rc = lc_leg_tcp(l, 1, &f1, e)) != 0) {
			close(f0);
			return rc;
		}
		if (lc_leg_nonblock(f0, f1, e) != 0) {
			close(f0);
			close(f1);
			return -LC_ERR_CONNECT;
		}
		pthread_mutex_lock(&l->mu);
		l->fd[0] = f0;
		l->fd[1] = f1;
		pthread_mutex_unlock(&l->mu);
		return 0;
	}
	if (ssh0 && ssh1) {
		/* the sink's pump gets a socketpair, the source's the other end */
		if ((rc = lc_leg_forward(l, 1, &f1, e)) != 0)
			return rc;
		return lc_leg_forward(l, 0, &f1, e);
	}
	/* one end local or reached by TCP, the other over SSH */
	if ((rc = lc_leg_tcp(l, ssh0 ? 1 : 0, &f0, e)) != 0)
		return rc;
	return lc_leg_forward(l, ssh0 ? 0 : 1, &f0, e);
}

/*
 * 1 if the agent at TCP end fd may still send: it has not sent its FIN
 * (or what it is cannot be told).
 */
static int
lc_leg_peer_sending(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
	    len < 1)
		return 1;
	return ti.tcpi_state == TCP_ESTABLISHED ||
	    ti.tcpi_state == TCP_FIN_WAIT1 || ti.tcpi_state == TCP_FIN_WAIT2;
}

/*
 * Close and free both ends.  A TCP end whose agent may still send is
 * closed with a reset (SO_LINGER 0): nothing will read what it sends, and
 * it must see the stream break at once.  A plain close does not always
 * tell it.  lc_relay_free and lc_relay_redial shut the socket down first;
 * when the leg was just then taking the last bytes of a full receive
 * buffer (its window advertised as 0), the kernel sends no window update
 * after SHUT_RD, the close finds nothing unread (so no reset), and with
 * our FIN acknowledged the socket becomes a FIN-WAIT-2 timewait socket,
 * which answers the agent's zero-window probes with that closed window
 * until tcp_fin_timeout (60 s).  The agent's data never arrives to draw
 * the reset, and its send waited all that time: test_relay's
 * relay_free_while_blocked_mid_splice hit its 60 s timeout so under load.
 * An agent that sent its FIN sends nothing more: its end is closed
 * normally and still gets what is left in the socket.
 */
static void
lc_leg_drop(struct lc_leg *l)
{
	static const struct linger rst = { .l_onoff = 1, .l_linger = 0 };

	pthread_mutex_lock(&l->mu);
	for (int k = 0; k < 2; k++) {
		if (l->fd[k] >= 0 && lc_leg_peer_sending(l->fd[k]))
			(void)setsockopt(l->fd[k], SOL_SOCKET, SO_LINGER, &rst,
			    sizeof(rst));
		if (l->fd[k] >= 0)
			close(l->fd[k]);
		l->fd[k] = -1;
	}
	pthread_mutex_unlock(&l->mu);
	for (int k = 0; k < 2; k++) {
		lc_ssh_free(l->ssh[k]);
		l->ssh[k] = NULL;
	}
}

/*
 * Move the bytes between fd[0] and fd[1] (non-blocking) until both
 * directions have ended, one breaks, or a redial or stop comes.  Each
 * direction either waits to read (its pipe empty) or to write what its
 * pipe holds, never both: see the top of the file.  EOF is passed on as a
 * half close, so END and the TLS close reach the other side.
 */
static void
lc_leg_splice(struct lc_leg *l)
{
	size_t held[2] = { 0, 0 };	/* bytes in each direction's pipe */
	int eof[2] = { 0, 0 }, fd[2] = { l->fd[0], l->fd[1] };

	while (!(eof[0] && eof[1] && held[0] == 0 && held[1] == 0)) {
		struct pollfd pfd[3];

		if (atomic_load(&l->r->stop) || atomic_load(&l->redial))
			return;
		for (int d = 0; d < 2; d++) {
			if (held[d] > 0) {
				pfd[d].fd = fd[1 - d];
				pfd[d].events = POLLOUT;
			} else {
				pfd[d].fd = eof[d] ? -1 : fd[d];
				pfd[d].events = POLLIN;
			}
			pfd[d].revents = 0;
		}
		pfd[2].fd = l->wake.rfd;
		pfd[2].events = POLLIN;
		pfd[2].revents = 0;
		if (poll(pfd, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (pfd[2].revents != 0)
			lc_wake_drain(&l->wake);
		for (int d = 0; d < 2; d++) {
			ssize_t n;
			int out = fd[1 - d];

			if (pfd[d].revents == 0)
				continue;
			if (held[d] == 0) {
				n = splice(fd[d], NULL, l->pipe[d][1], NULL,
				    LC_RELAY_CHUNK,
				    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
				if (n == 0) {
					eof[d] = 1;
					(void)shutdown(out, SHUT_WR);
					continue;
				}
				if (n < 0) {
					if (errno == EAGAIN || errno == EINTR)
						continue;
					return;	/* reset: the stream broke */
				}
				held[d] = (size_t)n;
			}
			/* as much as the outgoing socket takes now */
			n = splice(l->pipe[d][0], NULL, out, NULL, held[d],
			    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (n <= 0)
				return;
			held[d] -= (size_t)n;
		}
	}
}

/* A leg failed to connect k times in a row (for lc_relay_failed). */
static void
lc_relay_note(struct lc_relay *r, uint32_t k, const struct lc_err *e)
{
	pthread_mutex_lock(&r->mu);
	if (k >= r->worst) {
		r->worst = k;
		r->why = *e;
	}
	pthread_mutex_unlock(&r->mu);
}

int
lc_relay_failed(struct lc_relay *r, struct lc_err *e)
{
	int failed;

	/* a refused forward is final, even after an ssh -W started */
	if (atomic_load(&r->ever_up) && !atomic_load(&r->refused))
		return 0;
	pthread_mutex_lock(&r->mu);
	failed = r->worst >= LC_RELAY_GIVE_UP;
	if (failed)
		lc_err_set(e, LC_ERR_NOPATH, "the relay cannot connect the "
		    "data streams: %s%s", r->why.msg, r->why.sys_errno ==
		    EACCES ? "; the data path over SSH needs it: use the "
		    "direct path or -z, or allow port forwarding" : "");
	pthread_mutex_unlock(&r->mu);
	return failed;
}

/*
 * A leg that could not connect (e): note it, and wait before the next
 * try.  1 when the leg should stop (a refused forward, the relay stopped).
 */
static int
lc_leg_failed(struct lc_leg *l, const struct lc_err *e, int *warned,
    int *wait_ms)
{
	lc_leg_drop(l);
	if (atomic_load(&l->r->stop))
		return 1;
	/* forwarding refused by the server: give up now */
	lc_relay_note(l->r,
	    e->sys_errno == EACCES ? LC_RELAY_GIVE_UP : (uint32_t)*warned + 1,
	    e);
	if (e->sys_errno == EACCES) {
		atomic_store(&l->r->refused, true);
		lc_log_debug("data stream %u: %s", l->idx, e->msg);
		return 1;
	}
	/* the agents wait for us; keep trying, quietly */
	if (!(*warned)++)
		lc_log_warn("data stream %u: %s; retrying", l->idx, e->msg);
	else
		lc_log_debug("data stream %u: %s", l->idx, e->msg);
	if (lc_leg_wait(l, *wait_ms))
		return 1;
	*wait_ms = *wait_ms * 2 > LC_LEG_RETRY_MAX_MS ? LC_LEG_RETRY_MAX_MS :
							  *wait_ms * 2;
	return 0;
}

/* An ssh -W end whose channel the server did not open (lc_ssh_forward_err). */
static int
lc_leg_fwd_err(struct lc_leg *l, struct lc_err *e)
{
	for (int k = 0; k < 2; k++)
		if (l->ssh[k] != NULL && lc_ssh_forward_err(l->ssh[k], e) != 0)
			return 1;
	return 0;
}

static void *
lc_leg_main(void *arg)
{
	struct lc_leg *l = arg;
	int tcp = l->r->end[0].ssh == NULL && l->r->end[1].ssh == NULL;
	int wait_ms = LC_LEG_RETRY_MIN_MS, warned = 0;
	char tag[32];

	snprintf(tag, sizeof(tag), "relay %u", l->idx);
	lc_log_set_tag(tag);
	while (!atomic_load(&l->r->stop)) {
		struct lc_err e;
		int failed = 0;

		atomic_store(&l->redial, false);
		lc_err_clear(&e);
		if (lc_leg_connect(l, &e) != 0) {
			if (lc_leg_failed(l, &e, &warned, &wait_ms))
				break;
			continue;
		}
		atomic_store(&l->r->ever_up, true);
		if (warned)
			lc_log_verbose("data stream %u: relay connected",
			    l->idx);
		if (tcp)
			lc_leg_splice(l);
		/*
		 * Ended, broke, or (SSH) the pumps carry it: wait.  An ssh -W
		 * returned before its channel opened: check on it meanwhile.
		 */
		while (!atomic_load(&l->r->stop) &&
		    !atomic_load(&l->redial) && !failed) {
			(void)lc_leg_wait(l, tcp ? -1 : LC_LEG_FWD_CHECK_MS);
			failed = !tcp && lc_leg_fwd_err(l, &e);
		}
		if (failed) {
			if (lc_leg_failed(l, &e, &warned, &wait_ms))
				break;
			continue;
		}
		warned = 0;
		wait_ms = LC_LEG_RETRY_MIN_MS;
		lc_leg_drop(l);
	}
	lc_leg_drop(l);
	return NULL;
}

int
lc_relay_start(const struct lc_relay_end end[2], uint32_t n,
    uint32_t window, struct lc_relay **out, struct lc_err *e)
{
	struct lc_relay *r;
	char name[32];

	*out = NULL;
	if (n == 0 || n > LC_MAX_STREAMS || (r = calloc(1, sizeof(*r))) ==
	    NULL) {
		for (int k = 0; k < 2; k++)
			for (uint32_t i = 0; i < LC_MAX_STREAMS; i++)
				lc_ssh_free(end[k].conn[i]);
		return n == 0 || n > LC_MAX_STREAMS ? lc_err_set(e,
		    LC_ERR_INTERNAL, "relay: %u streams", n) :
		    lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	}
	memcpy(r->end, end, sizeof(r->end));	/* conn[] taken over */
	r->n = n;
	r->window = window;
	atomic_init(&r->stop, false);
	atomic_init(&r->ever_up, false);
	pthread_mutex_init(&r->mu, NULL);
	lc_err_clear(&r->why);
	for (uint32_t i = 0; i < n; i++) {
		struct lc_leg *l = &r->leg[i];
		l->r = r;
		l->idx = i;
		l->fd[0] = l->fd[1] = -1;
		l->pipe[0][0] = l->pipe[0][1] = -1;
		l->pipe[1][0] = l->pipe[1][1] = -1;
		l->wake.rfd = l->wake.wfd = -1;
		atomic_init(&l->redial, false);
		pthread_mutex_init(&l->mu, NULL);
	}
	for (uint32_t i = 0; i < n; i++) {
		struct lc_leg *l = &r->leg[i];
		if (lc_wake_open(&l->wake) != 0 ||
		    pipe2(l->pipe[0], O_CLOEXEC) != 0 ||
		    pipe2(l->pipe[1], O_CLOEXEC) != 0) {
			lc_relay_free(r);
			return lc_err_sys(e, LC_ERR_INTERNAL, errno, "pipe");
		}
		/* room for a chunk however the socket's pages are cut */
		(void)fcntl(l->pipe[0][1], F_SETPIPE_SZ, (int)LC_RELAY_PIPE);
		(void)fcntl(l->pipe[1][1], F_SETPIPE_SZ, (int)LC_RELAY_PIPE);
		snprintf(name, sizeof(name), "lc-relay-%u", i);
		if (lc_thread_start(&l->thread, name, lc_leg_main, l) != 0) {
			lc_relay_free(r);
			return lc_err_set(e, LC_ERR_INTERNAL, "thread");
		}
		l->started = 1;
	}
	*out = r;
	return 0;
}

void
lc_relay_redial(struct lc_relay *r, uint32_t i)
{
	struct lc_leg *l;

	if (r == NULL || i >= r->n)
		return;
	l = &r->leg[i];
	atomic_store(&l->redial, true);
	pthread_mutex_lock(&l->mu);
	for (int k = 0; k < 2; k++)	/* the stream is over on both ends */
		if (l->fd[k] >= 0)
			(void)shutdown(l->fd[k], SHUT_RDWR);
	pthread_mutex_unlock(&l->mu);
	lc_wake_signal(&l->wake);
}

void
lc_relay_free(struct lc_relay *r)
{
	if (r == NULL)
		return;
	atomic_store(&r->stop, true);
	for (uint32_t i = 0; i < r->n; i++) {
		struct lc_leg *l = &r->leg[i];
		pthread_mutex_lock(&l->mu);
		for (int k = 0; k < 2; k++)
			if (l->fd[k] >= 0)
				(void)shutdown(l->fd[k], SHUT_RDWR);
		pthread_mutex_unlock(&l->mu);
		lc_wake_signal(&l->wake);
	}
	for (uint32_t i = 0; i < r->n; i++) {
		struct lc_leg *l = &r->leg[i];
		if (l->started)
			pthread_join(l->thread, NULL);
		lc_leg_drop(l);
		for (int d = 0; d < 2; d++)
			for (int k = 0; k < 2; k++)
				if (l->pipe[d][k] >= 0)
					close(l->pipe[d][k]);
		lc_wake_close(&l->wake);
		pthread_mutex_destroy(&l->mu);
	}
	for (int k = 0; k < 2; k++)
		for (uint32_t i = 0; i < LC_MAX_STREAMS; i++)
			lc_ssh_free(r->end[k].conn[i]);
	pthread_mutex_destroy(&r->mu);
	free(r);
}
