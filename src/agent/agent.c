/*
 * The agent: the host of one role (source or sink, see role.h) on a
 * control channel.
 *
 * Threads.  The agent's main thread owns the control channel: it alone
 * reads and writes control messages, and it alone calls into the role.
 * The role's worker threads (senders, receivers, the acceptor, jobs)
 * report through the role port's post(), which queues the event under a
 * mutex and pokes a wake pipe; the main thread hands queued events to the
 * role.
 *
 * The loop polls the control input, the control output (while messages
 * are queued), and the wake pipe of the event queue.  EOF on the control
 * input means the controller is gone: the agent cancels everything, joins
 * its threads and returns at once (no orphans, no waiting for data).  The
 * first role message decides the role; a message of the other role is a
 * protocol error.
 */
#include "agent.h"

#include "buf.h"
#include "confine.h"
#include "log.h"
#include "stream.h"
#include "clock.h"
#include "fdio.h"
#include "sysinfo.h"
#include "wake.h"
#include "version.h"
#include "wire.h"
#include "role.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <unistd.h>

#define LC_AGENT_TICK_MS 1000
/*
 * Output queued while a read's messages are handled is written once it
 * reaches this (about 60 FILE_READYs), rather than after the whole read.
 */
#define LC_AGENT_FLUSH_AT 1024

/* A queued event (the role's worker threads -> the main thread). */
struct lc_agent_ev {
	STAILQ_ENTRY(lc_agent_ev) link;
	struct lc_event ev;
};
STAILQ_HEAD(lc_agent_evq, lc_agent_ev);

struct lc_agent {
	int in_fd;
	int out_fd;
	struct lc_buf in;
	struct lc_buf out;
	struct lc_wake wake;
	pthread_mutex_t ev_mu;
	struct lc_agent_evq evq;
	atomic_bool cancel;	/* stop everything */
	const struct lc_agent_opts *opts;
	struct lc_confine conf;	/* --restrict DIR */
	int hello_done;
	uint32_t ctl_flags;	/* the controller's HELLO flags */
	uint64_t grace_ms;	/* PING: stop after this much silence, 0 off */
	uint64_t last_rx_ms;	/* the controller's last bytes */
	int failed;		/* an ERROR was sent */
	int bye;
	uint32_t max_streams;	/* advertised in our HELLO */
	mode_t umask;
	const struct lc_role_ops *ops;	/* NULL until the first role message */
	void *role;
};

static const struct lc_role_ops *const lc_agent_roles[] = {
	&lc_source_ops, &lc_sink_ops,
};

/* The role port's post(): any thread.  Out of memory cancels the
 * transfer, so that the fact of failure is not lost. */
static void
lc_agent_post(void *host, const struct lc_event *ev)
{
	struct lc_agent *a = host;
	struct lc_agent_ev *q = malloc(sizeof(*q));
	int first;

	if (q == NULL) {
		atomic_store(&a->cancel, true);
		lc_wake_signal(&a->wake);
		return;
	}
	q->ev = *ev;
	pthread_mutex_lock(&a->ev_mu);
	first = STAILQ_EMPTY(&a->evq);
	STAILQ_INSERT_TAIL(&a->evq, q, link);
	pthread_mutex_unlock(&a->ev_mu);
	/*
	 * Only the event that finds the queue empty wakes the main thread:
	 * the ones behind it are taken with it (the main thread drains the
	 * pipe before it takes the queue).  Small files post two events
	 * each, and a write and a wakeup per event were a good part of the
	 * sink's time per file.
	 */
	if (first)
		lc_wake_signal(&a->wake);
}

static int
lc_agent_send_error(struct lc_agent *a, const struct lc_err *e)
{
	int code = e->code != 0 ? e->code : LC_ERR_INTERNAL;

	a->failed = 1;
	return lc_msg_put_error(&a->out, (uint32_t)code,
	    e->msg[0] != '\0' ? e->msg : lc_strerror(code));
}

static uint32_t
lc_agent_max_streams(void)
{
	struct rlimit rl;
	uint64_t n;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return LC_MAX_STREAMS;
	/*
	 * A tree keeps up to LC_FILES_INFLIGHT_MAX files open at each end
	 * (a sink grants no more than half its limit): take what the hard
	 * limit allows (Debian's soft limit is 1024).
	 */
	if (rl.rlim_cur < 65536 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max < 65536 ? rl.rlim_max : 65536;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			(void)getrlimit(RLIMIT_NOFILE, &rl);
	}
	/* two descriptors per stream (listener + connection) plus slack */
	n = rl.rlim_cur > 64 ? (rl.rlim_cur - 64) / 2 : 1;
	return n < LC_MAX_STREAMS ? (uint32_t)(n == 0 ? 1 : n) : LC_MAX_STREAMS;
}

/* Files in flight the descriptor limit covers: half of it, at most 65536. */
static uint32_t
lc_agent_max_files(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 0;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur / 2 > 65536)
		return 65536;
	return (uint32_t)(rl.rlim_cur / 2);
}

static int
lc_agent_hello(struct lc_agent *a, const uint8_t *p, size_t n,
    struct lc_err *e)
{
	struct lc_msg_hello in, me;
	int r;

	r = lc_msg_get_hello(p, n, &in);
	memset(&me, 0, sizeof(me));
	me.magic = LC_PROTO_MAGIC;
	me.proto = LC_PROTO_VERSION;
	snprintf(me.software, sizeof(me.software), "%s", LC_VERSION_STRING);
	me.flags = (a->conf.root_fd >= 0 ? LC_HELLO_RESTRICTED : 0) |
	    LC_HELLO_PIPES | LC_HELLO_MIRROR | LC_HELLO_COUNTS | LC_HELLO_HASHES |
	    LC_HELLO_SHARD | LC_HELLO_NOMORE | LC_HELLO_COUNT_INFLIGHT |
	    LC_HELLO_FED | LC_HELLO_FOLLOW;
	me.max_streams = lc_agent_max_streams();	/* raises the limit */
	me.max_files = lc_agent_max_files();
	a->max_streams = me.max_streams;	/* the sink holds us to it */
	me.rmem_max = lc_proc_u64("/proc/sys/net/core/rmem_max");
	me.wmem_max = lc_proc_u64("/proc/sys/net/core/wmem_max");
	if (gethostname(me.hostname, sizeof(me.hostname) - 1) != 0)
		snprintf(me.hostname, sizeof(me.hostname), "?");
	if (r == -LC_ERR_VERSION) {
		/* answer anyway so the controller can name both versions */
		(void)lc_msg_put_hello(&a->out, &me);
		return lc_err_set(e, LC_ERR_VERSION,
		    "protocol version mismatch: controller lanecp %s "
		    "(protocol %u), agent lanecp %s (protocol %u)",
		    in.software, in.proto, LC_VERSION_STRING,
		    LC_PROTO_VERSION);
	}
	if (r != 0)
		return lc_err_set(e, LC_ERR_PROTO, "malformed HELLO");
	if (!a->opts->local)
		lc_log_set_level((int)(in.log_level > LC_LOG_DEBUG ?
		    LC_LOG_DEBUG : in.log_level));
	a->hello_done = 1;
	a->ctl_flags = in.flags;
	return lc_msg_put_hello(&a->out, &me);
}

/*
 * The SSH client's address, the first field of SSH_CONNECTION ("CLIENT
 * PORT SERVER PORT", set by sshd), into out; "" when there is none or it
 * is not a numeric address.
 */
static void
lc_agent_ssh_client(char *out, size_t outsz)
{
	const char *s = getenv("SSH_CONNECTION");
	uint8_t bin[16];
	size_t n;

	out[0] = '\0';
	if (s == NULL)
		return;
	n = strcspn(s, " ");
	if (n == 0 || n >= outsz)
		return;
	memcpy(out, s, n);
	out[n] = '\0';
	if (lc_addr_parse(out, bin) != 0)
		out[0] = '\0';
}

/* Take on a role: the first message that belongs to one decides. */
static int
lc_agent_become(struct lc_agent *a, const struct lc_role_ops *ops)
{
	struct lc_role_port port;
	int r;

	memset(&port, 0, sizeof(port));
	port.out = &a->out;
	port.cancel = &a->cancel;
	port.conf = &a->conf;
	port.set.umask = a->umask;
	port.set.tilde = !a->opts->local;
	port.set.max_memory = a->opts->max_memory == 0 ?
	    LC_AGENT_DEFAULT_MEMORY : a->opts->max_memory;
	if (port.set.max_memory < LC_AGENT_MIN_MEMORY)
		port.set.max_memory = LC_AGENT_MIN_MEMORY;
	port.set.max_streams = a->max_streams;
	port.set.local = a->opts->local;
	/* an older controller takes FILE_DONE without its flags */
	port.set.done_flags = (a->ctl_flags & LC_HELLO_COUNTS) != 0;
	/* a restricted key forbids forwarding: no dialling elsewhere */
	if (a->conf.root_fd >= 0) {
		port.set.dial_restricted = 1;
		lc_agent_ssh_client(port.set.dial_only,
		    sizeof(port.set.dial_only));
	}
	if (a->opts->transfer != NULL)
		snprintf(port.set.transfer, sizeof(port.set.transfer), "%s",
		    a->opts->transfer);
	port.post = lc_agent_post;
	port.host = a;
	if ((r = ops->create(&port, &a->role)) != 0)
		return r;
	a->ops = ops;
	return 0;
}

static int
lc_agent_dispatch(struct lc_agent *a, uint8_t type, const uint8_t *p,
    size_t n, struct lc_err *e)
{
	int r;

	lc_log_debug("control: received %s (%zu bytes)", lc_msg_name(type),
	    n);
	if (!a->hello_done) {
		if (type != LC_MSG_HELLO)
			return lc_err_set(e, LC_ERR_PROTO,
			    "expected HELLO, got message type %u", type);
		return lc_agent_hello(a, p, n, e);
	}
	if (type == LC_MSG_PING) {
		struct lc_msg_ping pg;
		if (lc_msg_get_ping(p, n, &pg) != 0)
			return lc_err_set(e, LC_ERR_PROTO, "malformed PING");
		a->grace_ms = (uint64_t)pg.grace_s * 1000;
		return 0;
	}
	if (type == LC_MSG_BYE) {
		if ((r = lc_msg_get_empty(p, n)) != 0)
			return lc_err_set(e, LC_ERR_PROTO, "malformed BYE");
		a->bye = 1;
		return lc_msg_put_empty(&a->out, LC_MSG_BYE);
	}
	for (size_t i = 0; i < sizeof(lc_agent_roles) /
	    sizeof(lc_agent_roles[0]); i++) {
		const struct lc_role_ops *ops = lc_agent_roles[i];

		if (!ops->owns(type))
			continue;
		if (a->ops != NULL && a->ops != ops)
			break;	/* a message of the other role */
		if (a->ops == NULL && (r = lc_agent_become(a, ops)) != 0)
			return lc_err_ensure(e, r, ops->name);
		return ops->handle(a->role, type, p, n, e);
	}
	return lc_err_set(e, LC_ERR_PROTO, "unexpected control message %s "
	    "(type %u)", lc_msg_name(type), type);
}

static void
lc_agent_abort(struct lc_agent *a)
{
	atomic_store(&a->cancel, true);
	if (a->ops != NULL)
		a->ops->abort(a->role);
}

static void
lc_agent_fail(struct lc_agent *a, struct lc_err *e)
{
	if (a->failed)
		return;
	lc_log_debug("failing: %s", e->msg);
	lc_agent_abort(a);
	(void)lc_agent_send_error(a, e);
}

static void
lc_agent_events(struct lc_agent *a)
{
	struct lc_agent_evq q = STAILQ_HEAD_INITIALIZER(q);
	struct lc_agent_ev *ev;
	struct lc_err e;
	int r = 0;

	pthread_mutex_lock(&a->ev_mu);
	STAILQ_CONCAT(&q, &a->evq);
	pthread_mutex_unlock(&a->ev_mu);
	while ((ev = STAILQ_FIRST(&q)) != NULL) {
		STAILQ_REMOVE_HEAD(&q, link);
		lc_err_clear(&e);
		if (a->failed)
			r = 0;
		else if (ev->ev.type == LC_EV_ERROR)
			r = lc_err_set(&e, ev->ev.err.code, "%s",
			    ev->ev.err.msg);
		else if (a->ops != NULL)
			r = a->ops->event(a->role, &ev->ev, &e);
		if (r != 0)
			lc_agent_fail(a, &e);
		free(ev);
	}
}

static int lc_agent_flush(struct lc_agent *a);

/* Read what is there and run every whole frame.  1 on EOF. */
static int
lc_agent_read(struct lc_agent *a)
{
	uint8_t *p, type;
	const uint8_t *payload;
	size_t plen, flen;
	struct lc_err e;
	ssize_t n;
	int r;

	if ((r = lc_buf_reserve(&a->in, 65536, &p)) != 0) {
		lc_err_set(&e, LC_ERR_PROTO, "control input over limit");
		lc_agent_fail(a, &e);
		return 1;
	}
	n = read(a->in_fd, p, 65536);
	lc_buf_unappend(&a->in, n > 0 ? 65536 - (size_t)n : 65536);
	if (n > 0)
		a->last_rx_ms = lc_now_ms();
	if (n == 0)
		return 1;
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : 1;
	while ((r = lc_msg_peek(lc_buf_ptr(&a->in), lc_buf_len(&a->in), &type,
	    &payload, &plen, &flen)) == 1) {
		lc_err_clear(&e);
		if (!a->failed && !a->bye &&
		    lc_agent_dispatch(a, type, payload, plen, &e) != 0)
			lc_agent_fail(a, &e);
		lc_buf_consume(&a->in, flen);
		/*
		 * One read can hold hundreds of FILEs, each a part file for
		 * the sink to open: their FILE_READYs go out as they are
		 * made, not after the last of them, so that the data of the
		 * first files is on its way while the rest are opened.
		 */
		if (lc_buf_len(&a->out) >= LC_AGENT_FLUSH_AT &&
		    lc_agent_flush(a) != 0)
			return 1;
	}
	if (r < 0) {
		lc_err_set(&e, LC_ERR_PROTO, "bad control frame length");
		lc_agent_fail(a, &e);
		return 1;
	}
	return 0;
}

/* Write queued control output; 0, or -LC_ERR_EOF once the controller is
 * gone. */
static int
lc_agent_flush(struct lc_agent *a)
{
	while (lc_buf_len(&a->out) > 0) {
		ssize_t n = write(a->out_fd, lc_buf_ptr(&a->out),
		    lc_buf_len(&a->out));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			return -LC_ERR_EOF;
		}
		lc_buf_consume(&a->out, (size_t)n);
	}
	return 0;
}

int
lc_agent_run(int in_fd, int out_fd, const struct lc_agent_opts *o)
{
	struct lc_agent a;
	struct pollfd pfd[3];
	uint64_t next_tick;
	int rc = -LC_ERR_EOF, eof = 0;

	memset(&a, 0, sizeof(a));
	a.conf.root_fd = -1;
	a.in_fd = in_fd;
	a.out_fd = out_fd;
	a.opts = o;
	lc_buf_init(&a.in, LC_CTL_MAX + 65536 + 4);
	lc_buf_init(&a.out, 64u << 20);
	pthread_mutex_init(&a.ev_mu, NULL);
	STAILQ_INIT(&a.evq);
	atomic_init(&a.cancel, false);
	a.umask = umask(022);
	umask(a.umask);
	if (lc_wake_open(&a.wake) != 0) {
		rc = -LC_ERR_INTERNAL;
		goto out;
	}
	{
		struct lc_err e;
		lc_err_clear(&e);
		if ((rc = lc_confine_init(&a.conf, o->restrict_dir, &e)) != 0) {
			lc_log_error("%s", e.msg);
			goto out;
		}
		rc = -LC_ERR_EOF;
	}
	(void)lc_set_nonblock(in_fd, 1);
	(void)lc_set_nonblock(out_fd, 1);
	a.last_rx_ms = lc_now_ms();
	next_tick = lc_now_ms() + LC_AGENT_TICK_MS;
	while (!eof) {
		uint64_t now = lc_now_ms();
		int timeout = now >= next_tick ? 0 : (int)(next_tick - now);

		pfd[0].fd = in_fd;
		pfd[0].events = POLLIN;
		pfd[1].fd = out_fd;
		pfd[1].events = lc_buf_len(&a.out) > 0 ? POLLOUT : 0;
		pfd[2].fd = a.wake.rfd;
		pfd[2].events = POLLIN;
		if (poll(pfd, 3, timeout) < 0 && errno != EINTR)
			break;
		if (pfd[2].revents != 0) {
			lc_wake_drain(&a.wake);
			lc_agent_events(&a);
		}
		if (pfd[0].revents != 0 && lc_agent_read(&a) != 0)
			eof = 1;
		if ((now = lc_now_ms()) >= next_tick) {
			next_tick = now + LC_AGENT_TICK_MS;
			if (a.ops != NULL && !a.failed)
				(void)a.ops->tick(a.role, now);
		}
		/*
		 * A controller that has gone silent (its host or the path to
		 * it is gone) is not waited for forever: stop, which releases
		 * the part files' locks for the next attempt.
		 */
		if (a.grace_ms > 0 && now - a.last_rx_ms > a.grace_ms) {
			lc_log_warn("no word from the controller for %llu s; "
			    "stopping (partial files are kept for -a)",
			    (unsigned long long)(a.grace_ms / 1000));
			rc = -LC_ERR_TIMEOUT;
			break;
		}
		if (atomic_load(&a.cancel) && !a.failed) {
			struct lc_err e;
			lc_err_set(&e, LC_ERR_NOMEM, "agent out of memory");
			lc_agent_fail(&a, &e);
		}
		if (lc_agent_flush(&a) != 0) {
			if (!a.bye)
				eof = 1;	/* controller gone */
			else	/* it need not stay for our answer to BYE
				   (a remote one is not waited for) */
				lc_buf_reset(&a.out);
		}
		if (a.bye && lc_buf_len(&a.out) == 0) {
			rc = 0;
			break;
		}
	}
	if (rc != 0) {
		lc_log_debug("control channel closed; stopping");
		if (o->exit_deadline_ms > 0) {
			struct itimerval t = { .it_value = {
				.tv_sec = o->exit_deadline_ms / 1000,
				.tv_usec = (suseconds_t)(o->exit_deadline_ms %
				    1000) * 1000 } };
			(void)setitimer(ITIMER_REAL, &t, NULL);
		}
	}
 out:
	lc_agent_abort(&a);
	if (a.ops != NULL)
		a.ops->free(a.role);
	a.ops = NULL;
	a.role = NULL;
	a.failed = 1;
	lc_agent_events(&a);	/* free leftovers */
	lc_wake_close(&a.wake);
	lc_confine_free(&a.conf);
	pthread_mutex_destroy(&a.ev_mu);
	lc_buf_free(&a.in);
	lc_buf_free(&a.out);
	return rc;
}
