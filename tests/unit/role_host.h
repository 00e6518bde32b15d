/*
 * A test host for one role (src/agent/role/role.h): what agent.c is to a role, minus
 * the control channel.  The host owns the role's out buffer, the cancel
 * flag, an unconfined lc_confine and the event queue; worker threads post
 * into the queue under a mutex and wake the test's main thread through a
 * condition variable.  The test's main thread is the role's main thread:
 * it feeds control messages (host_send), runs posted events and ticks
 * (host_pump) and reads what the role wrote (host_next_msg, host_wait_msg).
 *
 * Waits never sleep a fixed time: they block on the condition variable
 * until an event arrives, the next tick is due, or a deadline passes.  The
 * deadline is a hang guard only (HOST_WAIT_MS), below the harness timeout.
 *
 * An LC_EV_ERROR, or an error returned by handle/event/tick, is recorded
 * as the host's failure (the first one wins), as the agent would send it
 * as ERROR; the role keeps running so that a test can look at it.
 */
#ifndef LC_TEST_ROLE_HOST_H
#define LC_TEST_ROLE_HOST_H

#include "harness.h"

#include "role.h"

#include "buf.h"
#include "confine.h"
#include "err.h"
#include "clock.h"
#include "wire.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#define HOST_WAIT_MS 30000	/* hang guard for one wait */
#define HOST_TICK_MS 1000	/* as the agent */
#define HOST_OUT_MAX (64u << 20)

struct host_ev {
	struct host_ev *next;
	struct lc_event ev;
};

struct host {
	const struct lc_role_ops *ops;
	void *role;
	struct lc_buf out;
	atomic_bool cancel;
	struct lc_confine conf;
	struct lc_role_port port;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct host_ev *head;
	struct host_ev **tail;
	uint64_t next_tick;
	int failed;		/* an error reached the host */
	struct lc_err err;	/* the first one */
	int verbose;
	unsigned wakes;		/* host_wake() calls, under mu */
	unsigned seen_wakes;	/* wakes when the last pump woke */
};

static inline void
host_post(void *arg, const struct lc_event *ev)
{
	struct host *h = arg;
	struct host_ev *q = calloc(1, sizeof(*q));

	if (q == NULL) {	/* as the agent: a lost event cancels */
		atomic_store(&h->cancel, true);
		return;
	}
	q->ev = *ev;
	pthread_mutex_lock(&h->mu);
	*h->tail = q;
	h->tail = &q->next;
	pthread_cond_signal(&h->cv);
	pthread_mutex_unlock(&h->mu);
}

static inline void
host_fail(struct host *h, int r, const struct lc_err *e)
{
	if (h->verbose || !h->failed)
		fprintf(stderr, "host: %s error %d: %s\n", h->ops->name, r,
		    e != NULL ? e->msg : "");
	if (h->failed)
		return;
	h->failed = 1;
	if (e != NULL)
		h->err = *e;
	if (h->err.code == 0)
		h->err.code = r < 0 ? -r : r;
}

static inline void
host_init(struct host *h, const struct lc_role_ops *ops)
{
	struct lc_err e;

	memset(h, 0, sizeof(*h));
	signal(SIGPIPE, SIG_IGN);	/* as cmd/lanecp.c: TLS writes */
	h->ops = ops;
	lc_buf_init(&h->out, HOST_OUT_MAX);
	atomic_init(&h->cancel, false);
	lc_err_clear(&e);
	LC_CHECK(lc_confine_init(&h->conf, NULL, &e) == 0);
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->cv, NULL);
	h->tail = &h->head;
	h->port.out = &h->out;
	h->port.cancel = &h->cancel;
	h->port.conf = &h->conf;
	h->port.set.umask = 022;
	h->port.set.max_memory = 64u << 20;
	h->port.set.max_streams = LC_MAX_STREAMS;
	h->port.post = host_post;
	h->port.host = h;
	h->next_tick = lc_now_ms() + HOST_TICK_MS;
	LC_CHECK(ops->create(&h->port, &h->role) == 0);
	LC_CHECK(h->role != NULL);
}

/* Cancel, abort and free the role (joins its threads); once is fine. */
static inline void
host_free_role(struct host *h)
{
	if (h->role == NULL)
		return;
	atomic_store(&h->cancel, true);
	h->ops->abort(h->role);
	h->ops->free(h->role);
	h->role = NULL;
}

/*
 * The role (if still there), then the host: test threads that may call
 * host_wake() must have been joined.
 */
static inline void
host_fini(struct host *h)
{
	struct host_ev *q;

	host_free_role(h);
	while ((q = h->head) != NULL) {
		h->head = q->next;
		free(q);
	}
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->mu);
	lc_confine_free(&h->conf);
	lc_buf_free(&h->out);
}

/* Hand one encoded frame (as an encoder appended it) to ops->handle. */
static inline int
host_feed(struct host *h, struct lc_buf *b)
{
	const uint8_t *p;
	uint8_t type;
	size_t n, flen;
	struct lc_err e;
	int r;

	LC_CHECK(lc_msg_peek(lc_buf_ptr(b), lc_buf_len(b), &type, &p, &n,
	    &flen) == 1);
	LC_CHECK_EQ_U(flen, lc_buf_len(b));
	LC_CHECK(h->ops->owns(type));
	lc_err_clear(&e);
	if ((r = h->ops->handle(h->role, type, p, n, &e)) != 0)
		host_fail(h, r, &e);
	return r;
}

/*
 * host_send(h, lc_msg_put_x, &m): encode m and hand it to the role; the
 * handler must accept it.  host_send_r(h, &r, ...) stores its result.
 */
#define host_send_r(h, rp, put, ...)                                         \
	do {                                                                 \
		struct lc_buf hb_;                                           \
		lc_buf_init(&hb_, LC_CTL_MAX + 16);                          \
		LC_CHECK(put(&hb_, __VA_ARGS__) == 0);                       \
		*(rp) = host_feed((h), &hb_);                                \
		lc_buf_free(&hb_);                                           \
	} while (0)
#define host_send(h, put, ...)                                               \
	do {                                                                 \
		int hs_r_;                                                   \
		host_send_r(h, &hs_r_, put, __VA_ARGS__);                    \
		LC_CHECK_EQ_I(hs_r_, 0);                                     \
	} while (0)

static inline int
host_dispatch(struct host *h, const struct lc_event *ev)
{
	struct lc_err e;
	int r;

	if (ev->type == LC_EV_ERROR) {	/* what the agent does */
		host_fail(h, -(int)ev->err.code, &ev->err);
		return 0;
	}
	lc_err_clear(&e);
	if ((r = h->ops->event(h->role, ev, &e)) != 0)
		host_fail(h, r, &e);
	return r;
}

/*
 * Wait until events are queued, the next tick is due or deadline_ms (on
 * lc_now_ms) passes; then run every queued event and a due tick.  Returns
 * the number of events run.
 */
static inline int
host_pump_until(struct host *h, uint64_t deadline_ms)
{
	struct host_ev *q, *next;
	struct timespec ts;
	uint64_t now = lc_now_ms(), until;
	int ran = 0, r;

	until = deadline_ms < h->next_tick ? deadline_ms : h->next_tick;
	pthread_mutex_lock(&h->mu);
	/* a wake since the last pump counts, even one before this call */
	while (h->head == NULL && h->wakes == h->seen_wakes && now < until) {
		lc_deadline(CLOCK_REALTIME, (int)(until - now), &ts);
		(void)pthread_cond_timedwait(&h->cv, &h->mu, &ts);
		now = lc_now_ms();
	}
	h->seen_wakes = h->wakes;
	q = h->head;
	h->head = NULL;
	h->tail = &h->head;
	pthread_mutex_unlock(&h->mu);
	for (; q != NULL; q = next) {
		next = q->next;
		(void)host_dispatch(h, &q->ev);
		free(q);
		ran++;
	}
	if ((now = lc_now_ms()) >= h->next_tick) {
		h->next_tick = now + HOST_TICK_MS;
		if ((r = h->ops->tick(h->role, now)) != 0)
			host_fail(h, r, NULL);
	}
	return ran;
}

static inline int
host_pump_events(struct host *h, int timeout_ms)
{
	return host_pump_until(h, lc_now_ms() + (uint64_t)timeout_ms);
}

/*
 * The next message the role wrote: 1 with *type, a copy of the payload in
 * p (cap bytes) and *n; 0 when the out buffer holds no whole frame.
 */
static inline int
host_next_msg(struct host *h, uint8_t *type, uint8_t *p, size_t cap,
    size_t *n)
{
	const uint8_t *pl;
	size_t flen;
	int r = lc_msg_peek(lc_buf_ptr(&h->out), lc_buf_len(&h->out), type,
	    &pl, n, &flen);

	LC_CHECK(r >= 0);
	if (r == 0)
		return 0;
	LC_CHECK(*n <= cap);
	memcpy(p, pl, *n);
	lc_buf_consume(&h->out, flen);
	if (h->verbose)
		fprintf(stderr, "host: %s wrote %s\n", h->ops->name,
		    lc_msg_name(*type));
	return 1;
}

static uint8_t host_payload[LC_CTL_MAX];

/*
 * Pump events and ticks until the role writes a message of type want;
 * its payload is left in host_payload (*n bytes).  PROGRESS heartbeats
 * are skipped; any other message first, or a failure of the role, fails
 * the test, as does the hang guard.
 */
static inline void
host_wait_msg(struct host *h, uint8_t want, size_t *n)
{
	uint64_t deadline = lc_now_ms() + HOST_WAIT_MS;
	uint8_t type;

	for (;;) {
		while (host_next_msg(h, &type, host_payload,
		    sizeof(host_payload), n)) {
			if (type == want)
				return;
			if (type == LC_MSG_PROGRESS)
				continue;
			fprintf(stderr, "host: waiting for %s, got %s\n",
			    lc_msg_name(want), lc_msg_name(type));
			LC_CHECK_EQ_U(type, want);
		}
		if (h->failed)
			fprintf(stderr, "host: waiting for %s: failed: %s\n",
			    lc_msg_name(want), h->err.msg);
		LC_CHECK(!h->failed);
		if (lc_now_ms() >= deadline)
			fprintf(stderr, "host: no %s within %d ms\n",
			    lc_msg_name(want), HOST_WAIT_MS);
		LC_CHECK(lc_now_ms() < deadline);
		(void)host_pump_until(h, deadline);
	}
}

/* Pump until the role has failed; its error code must be want. */
static inline void
host_wait_failed(struct host *h, uint32_t want)
{
	uint64_t deadline = lc_now_ms() + HOST_WAIT_MS;

	while (!h->failed) {
		if (lc_now_ms() >= deadline)
			fprintf(stderr, "host: no failure within %d ms\n",
			    HOST_WAIT_MS);
		LC_CHECK(lc_now_ms() < deadline);
		(void)host_pump_until(h, deadline);
	}
	fprintf(stderr, "host: failed as expected: %s\n", h->err.msg);
	LC_CHECK_EQ_U(h->err.code, want);
}

/*
 * Pump until pred(arg) holds (checked after every wake-up; whoever makes
 * it true must post or signal host_wake()).  The role must not fail.
 */
static inline void
host_wait_for(struct host *h, int (*pred)(void *), void *arg,
    const char *what)
{
	uint64_t deadline = lc_now_ms() + HOST_WAIT_MS;

	while (!pred(arg)) {
		if (h->failed)
			fprintf(stderr, "host: waiting for %s: failed: %s\n",
			    what, h->err.msg);
		LC_CHECK(!h->failed);
		if (lc_now_ms() >= deadline)
			fprintf(stderr, "host: no %s within %d ms\n", what,
			    HOST_WAIT_MS);
		LC_CHECK(lc_now_ms() < deadline);
		(void)host_pump_until(h, deadline);
	}
}

/* Wake a host_wait_* from a test thread (a state it waits for changed). */
static inline void
host_wake(struct host *h)
{
	pthread_mutex_lock(&h->mu);
	h->wakes++;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
}

/* A temporary directory, removed by host_rmdir. */
static inline void
host_tmpdir(char *dir, size_t sz, const char *tag)
{
	snprintf(dir, sz, "/tmp/lc-%s-XXXXXX", tag);
	LC_CHECK(mkdtemp(dir) != NULL);
}

static inline void
host_rmdir(const char *dir)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	LC_CHECK(system(cmd) == 0);
}

#endif
