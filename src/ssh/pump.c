/*
 * The channel pump (see lanecp/ssh.h, lc_ssh_exec() and lc_ssh_forward()).
 *
 * The pump thread.  After lc_ssh_exec() or lc_ssh_forward() the session
 * belongs to one thread, the pump, which moves bytes between the channel
 * and its descriptor (s->pump_fd: its end of a socketpair, or the socket
 * lc_ssh_forward() was given; shut down when the pump ends, and then
 * closed by a forward's pump, by lc_ssh_free() for an exec) through two bounded buffers (a side is not read while its buffer
 * is full), sends keepalives and, for an exec channel, turns the remote
 * stderr into log lines and finally records the exit status.
 *
 * An exec channel carries the control protocol: 256 KiB buffers, 32 KiB
 * reads.  A forwarding channel (s->fwd, direct-tcpip) carries bulk data:
 * 1 MiB buffers, 256 KiB reads, up to 64 channel writes (one packet of
 * at most 32 KiB each) per round, and a receive window kept between
 * LC_SSH_FWD_WINDOW / 2 and LC_SSH_FWD_WINDOW by explicit window
 * adjustments (LC_OP_ADJUST), so that libssh2's own adjustment in
 * channel_read (which only restores the 2 MiB default) never runs.  EOF
 * from the descriptor becomes channel EOF, channel EOF becomes
 * shutdown(SHUT_WR) of the descriptor; the pump ends when the server
 * closes the channel (sshd does once both directions saw EOF) and what it
 * sent is delivered, or when the connection breaks.  It stops
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
 *
 * Its test is the integration case "8 MiB both ways with a 4 KiB send
 * buffer" in tests/integration/test_ssh.sh (with the other test_ssh.sh
 * cases): the traps above show only against a real sshd, with packets
 * really sent in parts, so there is no unit test of the pump.
 */
#include "buf.h"
#include "log.h"
#include "clock.h"
#include "wake.h"
#include "ssh_int.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libssh2.h>
#include <openssl/crypto.h>

#define LC_SSH_PUMP_BUF (256 * 1024)	/* per direction, exec */
#define LC_SSH_READ 32768		/* buflen of every channel read, exec */
#define LC_SSH_FWD_BUF (1024 * 1024)	/* per direction, forward */
#define LC_SSH_FWD_READ (256 * 1024)	/* buflen of every read, forward */
#define LC_SSH_FWD_WRITES 64		/* channel writes per round, forward */
#define LC_SSH_ERRLINE_MAX 900		/* longer stderr lines are split */
#define LC_SSH_READS 16			/* stdout, stderr reads per round */
#define LC_SSH_WRITES 8			/* channel writes per pump round */

enum lc_pump_op {
	LC_OP_NONE = 0,
	LC_OP_READ,		/* channel reads, wait_closed */
	LC_OP_WRITE,
	LC_OP_EOF,
	LC_OP_ADJUST,		/* receive window adjustment (forward) */
};

struct lc_pump {
	struct lc_ssh *s;
	struct lc_buf out;	/* channel stdout -> caller */
	struct lc_buf in;	/* caller -> channel stdin */
	size_t bufmax;		/* of out and in */
	size_t rdsz;		/* buflen of every channel read */
	int writes;		/* channel writes per round */
	uint32_t adj;		/* LC_OP_ADJUST half sent: its amount */
	char *rbuf;		/* rdsz: stderr, and stdout nobody reads */
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
	int out_seen;		/* the command's stdout has started */
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

/* May a call of class op send now (nothing else half sent)?  1/0. */
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
		    lc__ssh_liberr(p->s));
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
	p->linelen = 0;
	if (!p->out_seen && !p->s->fwd) {
		struct lc_ssh *s = p->s;
		size_t n;

		pthread_mutex_lock(&s->mu);
		n = strlen(s->early);
		if (n + 2 < sizeof(s->early))
			snprintf(s->early + n, sizeof(s->early) - n, "%.*s\n",
			    (int)(sizeof(s->early) - n - 2), p->line);
		pthread_mutex_unlock(&s->mu);
		return;
	}
	lc_log_warn("[%s] %s", p->s->host, p->line);
}

/* Log the held stderr lines, "[host] line" each. */
void
lc__ssh_log_early(struct lc_ssh *s)
{
	char held[sizeof(s->early)], *line, *save = NULL;

	pthread_mutex_lock(&s->mu);
	memcpy(held, s->early, sizeof(held));
	s->early[0] = '\0';
	pthread_mutex_unlock(&s->mu);
	for (line = strtok_r(held, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		lc_log_warn("[%s] %s", s->host, line);
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

static void lc_pump_adjust(struct lc_pump *p);

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
		    p->rdsz);
		lc_pump_note(p, LC_OP_READ);
		if (rc > 0) {
			lc_pump_errbytes(p, p->rbuf, (size_t)rc);
			p->progress = 1;
			continue;
		}
		if (rc < 0 && rc != LIBSSH2_ERROR_EAGAIN &&
		    lc__ssh_fatal((int)rc))
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

	for (i = 0; i < LC_SSH_READS; i++) {
		lc_pump_adjust(p);
		if (p->dead || !lc_pump_may(p, LC_OP_READ))
			return;
		if (p->fd_wr_dead) {
			/* nobody reads: drop it, so the remote can finish */
			rc = libssh2_channel_read(p->s->chan, p->rbuf,
			    p->rdsz);
		} else {
			if (p->bufmax - lc_buf_len(&p->out) < p->rdsz ||
			    lc_buf_reserve(&p->out, p->rdsz, &dst) != 0)
				return;
			rc = libssh2_channel_read(p->s->chan, (char *)dst,
			    p->rdsz);
			lc_buf_unappend(&p->out, rc > 0 ?
			    p->rdsz - (size_t)rc : p->rdsz);
		}
		lc_pump_note(p, LC_OP_READ);
		if (rc > 0) {
			p->progress = 1;
			if (!p->out_seen) {
				p->out_seen = 1;
				lc__ssh_log_early(p->s);
			}
			continue;
		}
		if (rc < 0 && rc != LIBSSH2_ERROR_EAGAIN &&
		    lc__ssh_fatal((int)rc))
			lc_pump_fail(p, "reading");
		return;
	}
}

static void
lc_pump_write(struct lc_pump *p)
{
	ssize_t rc;
	int i;

	for (i = 0; i < p->writes; i++) {
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
		if (lc__ssh_fatal((int)rc)) {
			lc_pump_fail(p, "writing");
			return;
		}
		lc_log_verbose("%s: remote input closed: %s", p->s->name,
		    lc__ssh_liberr(p->s));
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
	if (rc != 0 && lc__ssh_fatal(rc)) {
		lc_pump_fail(p, "sending EOF");
		return;
	}
	p->eof_sent = 1;
	p->progress = 1;
	/* all the caller wrote is on its way (lc_ssh_wait_sent) */
	pthread_mutex_lock(&p->s->mu);
	p->s->sent = 1;
	pthread_cond_broadcast(&p->s->cv);
	pthread_mutex_unlock(&p->s->mu);
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
	if (!p->s->fwd)
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

/*
 * Forward: keep the receive window above LC_SSH_FWD_WINDOW / 2.  Called
 * before every read, which takes at most rdsz of it, so libssh2's own
 * adjustment (below 3/4 of 2 MiB plus buflen) never triggers.  libssh2
 * counts a half-sent adjustment with the retrying call's amount (as for
 * reads, see lc_pump_read_stdout), so a retry passes the same amount.
 */
static void
lc_pump_adjust(struct lc_pump *p)
{
	unsigned int win = 0;
	unsigned long have;
	int rc;

	if (!p->s->fwd || !lc_pump_may(p, LC_OP_ADJUST))
		return;
	if (p->pending != LC_OP_ADJUST) {
		have = libssh2_channel_window_read(p->s->chan);
		if (have >= LC_SSH_FWD_WINDOW / 2 || !lc_pump_writable(p))
			return;
		p->adj = (uint32_t)(LC_SSH_FWD_WINDOW - have);
	}
	rc = libssh2_channel_receive_window_adjust2(p->s->chan, p->adj, 1,
	    &win);
	lc_pump_note(p, LC_OP_ADJUST);
	if (rc == LIBSSH2_ERROR_EAGAIN) {
		/* not sent at all: retried with the same amount all the same */
		p->pending = LC_OP_ADJUST;
		return;
	}
	if (rc != 0) {
		lc_pump_fail(p, "window adjust");
		return;
	}
	p->progress = 1;
}

/*
 * The exec request's answer (lc_ssh_exec left it to us).  Only reads: the
 * request went out whole.  Refused: nothing ran, and what we sent was
 * dropped; the caller reads EOF and takes the reason as the command's
 * early stderr (lc_ssh_early_stderr).
 */
static void
lc_pump_exec(struct lc_pump *p)
{
	struct lc_ssh *s = p->s;
	int rc;

	if (!s->exec_pending || !lc_pump_may(p, LC_OP_READ))
		return;
	rc = libssh2_channel_exec(s->chan, "");
	lc_pump_note(p, LC_OP_READ);
	if (rc == LIBSSH2_ERROR_EAGAIN)
		return;
	s->exec_pending = 0;
	p->progress = 1;
	if (rc == 0)
		return;
	if (lc__ssh_fatal(rc)) {
		lc_pump_fail(p, "starting the command");
		return;
	}
	pthread_mutex_lock(&s->mu);
	snprintf(s->early, sizeof(s->early), "the server refused to run the "
	    "command: %s\n", lc__ssh_liberr(s));
	pthread_mutex_unlock(&s->mu);
	p->dead = 1;
	lc_pump_publish(p);
}

static void
lc_pump_channel(struct lc_pump *p)
{
	if (p->dead || p->chan_closed)
		return;
	lc_pump_exec(p);
	if (p->dead)
		return;
	lc_pump_adjust(p);
	if (p->dead)
		return;
	if (!p->s->fwd)
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
	space = p->bufmax - lc_buf_len(&p->in);
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

/* Is the pump done: channel over and output delivered (or unwanted)?  1/0. */
static int
lc_pump_finished(const struct lc_pump *p)
{
	return (p->dead || p->chan_closed) &&
	    (lc_buf_len(&p->out) == 0 || p->fd_wr_dead);
}

/* Would lc_pump_write() or lc_pump_send_eof() send, given room?  1/0. */
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
	    lc_buf_len(&p->in) < p->bufmax)
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

/* See ssh_int.h. */
void *
lc__ssh_pump_main(void *arg)
{
	struct lc_ssh *s = arg;
	struct lc_pump *p;

	if ((p = calloc(1, sizeof(*p))) == NULL ||
	    (p->rbuf = malloc(s->fwd ? LC_SSH_FWD_READ : LC_SSH_READ)) ==
	    NULL) {
		if (p != NULL)
			free(p);
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
	p->bufmax = s->fwd ? LC_SSH_FWD_BUF : LC_SSH_PUMP_BUF;
	p->rdsz = s->fwd ? LC_SSH_FWD_READ : LC_SSH_READ;
	p->writes = s->fwd ? LC_SSH_FWD_WRITES : LC_SSH_WRITES;
	lc_buf_init(&p->out, p->bufmax);
	lc_buf_init(&p->in, p->bufmax);
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
	if (s->fwd) {
		/* a forward's descriptor may be the caller's socket: done */
		close(s->pump_fd);
		s->pump_fd = -1;	/* lc_ssh_free() reads it after join */
	}
	lc_pump_publish(p);
	lc_pump_buf_wipe(&p->out);
	lc_pump_buf_wipe(&p->in);
	OPENSSL_cleanse(p->rbuf, p->rdsz);
	free(p->rbuf);
	OPENSSL_cleanse(p, sizeof(*p));
	free(p);
	return NULL;
}
