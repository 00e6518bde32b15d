/*
 * The agent's control loop.  See agent_int.h for the threading model.
 *
 * The loop polls the control input, the control output (while messages
 * are queued), and the wake pipe of the event queue.  EOF on the control
 * input means the controller is gone: the agent cancels everything, joins
 * its threads and returns at once (no orphans, no waiting for data).
 */
#include "agent_int.h"

#include "lanecp/log.h"
#include "lanecp/version.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define LC_AGENT_TICK_MS 1000

static void
lc_agent_post_ev(struct lc_agent *a, int type, uint32_t x, uint64_t y,
    const struct lc_err *err, const char *text)
{
	struct lc_event *ev = calloc(1, sizeof(*ev));

	if (ev == NULL) {
		atomic_store(&a->cancel, true);
		lc_wake_signal(&a->wake);
		return;
	}
	ev->type = type;
	ev->a = x;
	ev->b = y;
	if (err != NULL)
		ev->err = *err;
	if (text != NULL)
		snprintf(ev->text, sizeof(ev->text), "%s", text);
	pthread_mutex_lock(&a->ev_mu);
	if (a->ev_tail != NULL)
		a->ev_tail->next = ev;
	else
		a->ev_head = ev;
	a->ev_tail = ev;
	pthread_mutex_unlock(&a->ev_mu);
	lc_wake_signal(&a->wake);
}

void
lc_agent_post(struct lc_agent *a, int type, uint32_t x, uint64_t y,
    const struct lc_err *err)
{
	lc_agent_post_ev(a, type, x, y, err, NULL);
}

void
lc_agent_post_text(struct lc_agent *a, int type, uint32_t x, uint64_t y,
    const char *text)
{
	lc_agent_post_ev(a, type, x, y, NULL, text);
}

int
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
	/* two descriptors per stream (listener + connection) plus slack */
	n = rl.rlim_cur > 64 ? (rl.rlim_cur - 64) / 2 : 1;
	return n < LC_MAX_STREAMS ? (uint32_t)(n == 0 ? 1 : n) : LC_MAX_STREAMS;
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
	me.flags = a->conf.root_fd >= 0 ? LC_HELLO_RESTRICTED : 0;
	me.max_streams = lc_agent_max_streams();
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
	return lc_msg_put_hello(&a->out, &me);
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
	switch (type) {
	case LC_MSG_BYE:
		if ((r = lc_msg_get_empty(p, n)) != 0)
			return lc_err_set(e, LC_ERR_PROTO, "malformed BYE");
		a->bye = 1;
		return lc_msg_put_empty(&a->out, LC_MSG_BYE);
	case LC_MSG_SRC_ADD:
	case LC_MSG_FILE_READY:
	case LC_MSG_CONNECT:
	case LC_MSG_SRC_NOMORE:
	case LC_MSG_FILE_PREFIX:
	case LC_MSG_STREAM_LOST:
	case LC_MSG_ACK:
		if (a->sink != NULL)
			break;
		if (a->src == NULL && (r = lc_source_new(a, &a->src)) != 0)
			return lc_err_ensure(e, r, "source");
		return lc_source_handle(a->src, type, p, n, e);
	case LC_MSG_SINK_TARGET:
	case LC_MSG_LISTEN:
	case LC_MSG_FILE:
	case LC_MSG_FILE_SUM:
	case LC_MSG_PREFIX_MATCH:
		if (a->src != NULL)
			break;
		if (a->sink == NULL && (r = lc_sink_new(a, &a->sink)) != 0)
			return lc_err_ensure(e, r, "sink");
		return lc_sink_handle(a->sink, type, p, n, e);
	default:
		break;
	}
	return lc_err_set(e, LC_ERR_PROTO, "unexpected control message %s "
	    "(type %u)", lc_msg_name(type), type);
}

static void
lc_agent_abort(struct lc_agent *a)
{
	atomic_store(&a->cancel, true);
	if (a->src != NULL)
		lc_source_abort(a->src);
	if (a->sink != NULL)
		lc_sink_abort(a->sink);
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
	struct lc_event *ev, *next;
	struct lc_err e;
	int r = 0;

	pthread_mutex_lock(&a->ev_mu);
	ev = a->ev_head;
	a->ev_head = a->ev_tail = NULL;
	pthread_mutex_unlock(&a->ev_mu);
	for (; ev != NULL; ev = next) {
		next = ev->next;
		lc_err_clear(&e);
		if (a->failed)
			r = 0;
		else if (ev->type == LC_EV_ERROR)
			r = lc_err_set(&e, ev->err.code, "%s", ev->err.msg);
		else if (a->src != NULL)
			r = lc_source_event(a->src, ev, &e);
		else if (a->sink != NULL)
			r = lc_sink_event(a->sink, ev, &e);
		if (r != 0)
			lc_agent_fail(a, &e);
		free(ev);
	}
}

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
	}
	if (r < 0) {
		lc_err_set(&e, LC_ERR_PROTO, "bad control frame length");
		lc_agent_fail(a, &e);
		return 1;
	}
	return 0;
}

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
			return -1;
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
			if (a.sink != NULL && !a.failed)
				(void)lc_sink_tick(a.sink, now);
			if (a.src != NULL && !a.failed)
				(void)lc_source_tick(a.src, now);
		}
		if (atomic_load(&a.cancel) && !a.failed) {
			struct lc_err e;
			lc_err_set(&e, LC_ERR_NOMEM, "agent out of memory");
			lc_agent_fail(&a, &e);
		}
		if (lc_agent_flush(&a) != 0)
			eof = 1;	/* controller gone */
		if (a.bye && lc_buf_len(&a.out) == 0) {
			rc = 0;
			break;
		}
	}
	if (rc != 0) {
		lc_log_debug("control channel closed; stopping");
		if (o->exit_deadline_s > 0)
			alarm(o->exit_deadline_s);
	}
 out:
	lc_agent_abort(&a);
	lc_source_free(a.src);
	lc_sink_free(a.sink);
	a.src = NULL;
	a.sink = NULL;
	a.failed = 1;
	lc_agent_events(&a);	/* free leftovers */
	lc_wake_close(&a.wake);
	lc_confine_free(&a.conf);
	pthread_mutex_destroy(&a.ev_mu);
	lc_buf_free(&a.in);
	lc_buf_free(&a.out);
	return rc;
}
