/*
 * The controller's relay (relay.h) with two TCP ends.  Both "agents" are
 * listening sockets made here on 127.0.0.1, one per stream and end; the
 * relay connects to both for each leg and the test plays both agents on
 * the sockets it accepts.  Every wait is on an event (accept, a read, a
 * thread's end); the few state changes the relay does not announce are
 * polled for without an upper bound (the harness timeout is the bound).
 */
#define LC_TEST_TIMEOUT 60
#include "harness.h"

#include "err.h"
#include "relay.h"
#include "stream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>

#define T_MAXLEG 4

/* A polled wait for a state the relay does not announce. */
#define T_WAIT_UNTIL(cond)                                                   \
	do {                                                                 \
		while (!(cond))                                              \
			usleep(10 * 1000);                                   \
	} while (0)

static void
t_listen(int *fd, uint16_t *port)
{
	struct lc_err e;

	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_sock_listen(0, 1, fd, port, &e), 0);
	LC_CHECK(*port != 0);
}

/* A port on 127.0.0.1 where nothing listens (was ours a moment ago). */
static uint16_t
t_closed_port(void)
{
	uint16_t port;
	int fd;

	t_listen(&fd, &port);
	close(fd);
	return port;
}

static int
t_accept(int lfd)
{
	int fd;

	while ((fd = accept(lfd, NULL, NULL)) < 0)
		LC_CHECK(errno == EINTR);
	return fd;
}

/* Both ends of a relay over TCP, n legs, every port listened on here. */
struct t_relay {
	uint32_t n;
	int lfd[2][T_MAXLEG];
	struct lc_relay_end end[2];
	struct lc_relay *r;
	int a[2][T_MAXLEG];	/* the accepted sockets, -1 when none */
};

static void
t_setup(struct t_relay *t, uint32_t n)
{
	memset(t, 0, sizeof(*t));
	t->n = n;
	for (int k = 0; k < 2; k++) {
		snprintf(t->end[k].addr, sizeof(t->end[k].addr), "127.0.0.1");
		for (uint32_t i = 0; i < T_MAXLEG; i++) {
			t->lfd[k][i] = -1;
			t->a[k][i] = -1;
		}
		for (uint32_t i = 0; i < n; i++)
			t_listen(&t->lfd[k][i], &t->end[k].ports[i]);
	}
}

static void
t_start(struct t_relay *t, uint32_t window)
{
	struct lc_err e;

	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_relay_start(t->end, t->n, window, &t->r, &e), 0);
	LC_CHECK(t->r != NULL);
}

static void
t_accept_leg(struct t_relay *t, uint32_t i)
{
	for (int k = 0; k < 2; k++)
		t->a[k][i] = t_accept(t->lfd[k][i]);
}

static void
t_close_all(struct t_relay *t)
{
	for (int k = 0; k < 2; k++)
		for (uint32_t i = 0; i < T_MAXLEG; i++) {
			if (t->a[k][i] >= 0)
				close(t->a[k][i]);
			if (t->lfd[k][i] >= 0)
				close(t->lfd[k][i]);
			t->a[k][i] = t->lfd[k][i] = -1;
		}
}

static void
t_write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n > 0) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		LC_CHECK(w > 0);
		b += w;
		n -= (size_t)w;
	}
}

static void
t_read_full(int fd, void *p, size_t n)
{
	uint8_t *b = p;

	while (n > 0) {
		ssize_t r = read(fd, b, n);
		if (r < 0 && errno == EINTR)
			continue;
		LC_CHECK(r > 0);
		b += r;
		n -= (size_t)r;
	}
}

/* msg written at from arrives whole at to. */
static void
t_pass(int from, int to, const char *msg)
{
	char got[64];
	size_t n = strlen(msg);

	LC_CHECK(n < sizeof(got));
	t_write_all(from, msg, n);
	t_read_full(to, got, n);
	LC_CHECK(memcmp(got, msg, n) == 0);
}

/* The peer dropped the connection: EOF or a reset, nothing else. */
static void
t_expect_gone(int fd)
{
	char c;
	ssize_t r;

	do
		r = read(fd, &c, 1);
	while (r < 0 && errno == EINTR);
	LC_CHECK(r == 0 || (r < 0 && (errno == ECONNRESET ||
	    errno == EPIPE)));
}

/* ---- bulk both ways ---- */

static uint64_t
t_fnv(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

#define T_FNV0 0xcbf29ce484222325ULL

/* Writes len pseudo-random bytes (seeded), then half-closes. */
struct t_writer {
	pthread_t th;
	int fd;
	uint64_t seed, len;
	uint64_t hash;
};

static void *
t_writer_main(void *arg)
{
	struct t_writer *w = arg;
	uint8_t buf[65536];
	uint64_t x = w->seed * 0x9e3779b97f4a7c15ULL + 1, left = w->len;

	w->hash = T_FNV0;
	while (left > 0) {
		size_t n = left < sizeof(buf) ? (size_t)left : sizeof(buf);
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = (uint8_t)(x >> 24);
		}
		w->hash = t_fnv(w->hash, buf, n);
		t_write_all(w->fd, buf, n);
		left -= n;
	}
	LC_CHECK(shutdown(w->fd, SHUT_WR) == 0);
	return NULL;
}

/* Reads until EOF: count and hash. */
struct t_reader {
	pthread_t th;
	int fd;
	uint64_t got;
	uint64_t hash;
	int eof;
};

static void *
t_reader_main(void *arg)
{
	struct t_reader *rd = arg;
	uint8_t buf[65536];

	rd->hash = T_FNV0;
	for (;;) {
		ssize_t r = read(rd->fd, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		LC_CHECK(r >= 0);
		if (r == 0) {
			rd->eof = 1;
			return NULL;
		}
		rd->hash = t_fnv(rd->hash, buf, (size_t)r);
		rd->got += (uint64_t)r;
	}
}

/*
 * Three legs, every one carrying a few MB each way at once; each
 * direction ends with a half close, which reaches the other agent as EOF
 * after the last byte.  A relay whose legs connected never reports
 * failure.
 */
LC_TEST(relay_tcp_both_ways_checksummed)
{
	struct t_writer w[2][T_MAXLEG];
	struct t_reader rd[2][T_MAXLEG];
	struct t_relay t;
	struct lc_err e;
	const uint32_t n = 3;

	t_setup(&t, n);
	t_start(&t, 0);
	for (uint32_t i = 0; i < n; i++)
		t_accept_leg(&t, i);
	for (uint32_t i = 0; i < n; i++)
		for (int k = 0; k < 2; k++) {
			w[k][i] = (struct t_writer){ .fd = t.a[k][i],
			    .seed = 2 * i + (uint64_t)k + 1,
			    .len = (3u << 20) + 4099u * i + 17u * (uint32_t)k };
			/* rd[k]: what arrives at end k (written at 1 - k) */
			rd[k][i] = (struct t_reader){ .fd = t.a[k][i] };
			LC_CHECK(pthread_create(&w[k][i].th, NULL,
			    t_writer_main, &w[k][i]) == 0);
			LC_CHECK(pthread_create(&rd[k][i].th, NULL,
			    t_reader_main, &rd[k][i]) == 0);
		}
	for (uint32_t i = 0; i < n; i++)
		for (int k = 0; k < 2; k++) {
			pthread_join(w[k][i].th, NULL);
			pthread_join(rd[k][i].th, NULL);
		}
	for (uint32_t i = 0; i < n; i++)
		for (int k = 0; k < 2; k++) {
			LC_CHECK_EQ_U(rd[k][i].eof, 1);
			LC_CHECK_EQ_U(rd[k][i].got, w[1 - k][i].len);
			LC_CHECK_EQ_U(rd[k][i].hash, w[1 - k][i].hash);
		}
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_relay_failed(t.r, &e), 0);
	LC_CHECK_EQ_I(e.code, 0);
	lc_relay_free(t.r);
	t_close_all(&t);
}

/*
 * A half close is a half close: after the source's side has ended (the
 * sink saw EOF), the sink's side still carries bytes to the source, and
 * its own EOF arrives after them.
 */
LC_TEST(relay_half_close_keeps_the_other_way)
{
	struct t_writer w;
	struct t_reader rd;
	struct t_relay t;

	t_setup(&t, 1);
	t_start(&t, 0);
	t_accept_leg(&t, 0);
	/* source -> sink, then the source is done writing */
	w = (struct t_writer){ .fd = t.a[0][0], .seed = 7, .len = 1u << 20 };
	rd = (struct t_reader){ .fd = t.a[1][0] };
	LC_CHECK(pthread_create(&w.th, NULL, t_writer_main, &w) == 0);
	t_reader_main(&rd);
	pthread_join(w.th, NULL);
	LC_CHECK_EQ_U(rd.eof, 1);
	LC_CHECK_EQ_U(rd.got, w.len);
	LC_CHECK_EQ_U(rd.hash, w.hash);
	/* sink -> source still open */
	w = (struct t_writer){ .fd = t.a[1][0], .seed = 8,
	    .len = (1u << 20) + 3 };
	rd = (struct t_reader){ .fd = t.a[0][0] };
	LC_CHECK(pthread_create(&w.th, NULL, t_writer_main, &w) == 0);
	t_reader_main(&rd);
	pthread_join(w.th, NULL);
	LC_CHECK_EQ_U(rd.eof, 1);
	LC_CHECK_EQ_U(rd.got, w.len);
	LC_CHECK_EQ_U(rd.hash, w.hash);
	lc_relay_free(t.r);
	t_close_all(&t);
}

/*
 * lc_relay_redial(1): leg 1's two connections are dropped (both agents
 * see EOF or a reset) and dialled again (accepted here again, and they
 * carry bytes both ways); leg 0 is left alone.  Out-of-range redials are
 * ignored.
 */
LC_TEST(relay_redial_drops_and_reconnects_one_leg)
{
	struct t_relay t;
	struct lc_err e;

	t_setup(&t, 2);
	t_start(&t, 0);
	for (uint32_t i = 0; i < 2; i++) {
		t_accept_leg(&t, i);
		t_pass(t.a[0][i], t.a[1][i], "hello sink");
		t_pass(t.a[1][i], t.a[0][i], "hello source");
	}
	lc_relay_redial(t.r, 1);
	lc_relay_redial(t.r, 2);	/* no such leg */
	lc_relay_redial(t.r, LC_MAX_STREAMS + 5);
	t_expect_gone(t.a[0][1]);
	t_expect_gone(t.a[1][1]);
	close(t.a[0][1]);
	close(t.a[1][1]);
	t_accept_leg(&t, 1);
	t_pass(t.a[0][1], t.a[1][1], "again to the sink");
	t_pass(t.a[1][1], t.a[0][1], "again to the source");
	/* leg 0 was not touched */
	t_pass(t.a[0][0], t.a[1][0], "leg 0 still");
	t_pass(t.a[1][0], t.a[0][0], "leg 0 back");
	/* and a second redial of the same leg works as well */
	lc_relay_redial(t.r, 1);
	t_expect_gone(t.a[0][1]);
	t_expect_gone(t.a[1][1]);
	close(t.a[0][1]);
	close(t.a[1][1]);
	t_accept_leg(&t, 1);
	t_pass(t.a[1][1], t.a[0][1], "third time");
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_relay_failed(t.r, &e), 0);
	lc_relay_free(t.r);
	t_close_all(&t);
}

/*
 * Nothing listens on the source's port: after LC_RELAY_GIVE_UP failed
 * connects in a row the relay says LC_ERR_NOPATH.  The sink's end is
 * never dialled (the source's end is dialled first).
 */
LC_TEST(relay_failed_nopath_when_an_end_is_closed)
{
	struct pollfd pfd;
	struct t_relay t;
	struct lc_err e;

	t_setup(&t, 1);
	close(t.lfd[0][0]);
	t.lfd[0][0] = -1;
	t.end[0].ports[0] = t_closed_port();
	t_start(&t, 0);
	lc_err_clear(&e);
	T_WAIT_UNTIL(lc_relay_failed(t.r, &e) == 1);
	LC_CHECK_EQ_I(e.code, LC_ERR_NOPATH);
	LC_CHECK(strstr(e.msg, "cannot connect") != NULL);
	fprintf(stderr, "failed: %s\n", e.msg);
	/* it stays failed */
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_relay_failed(t.r, &e), 1);
	LC_CHECK_EQ_I(e.code, LC_ERR_NOPATH);
	pfd = (struct pollfd){ .fd = t.lfd[1][0], .events = POLLIN };
	LC_CHECK_EQ_I(poll(&pfd, 1, 0), 0);
	lc_relay_free(t.r);
	t_close_all(&t);
}

/*
 * The sink's port is closed for a while (failed, LC_ERR_NOPATH), then
 * something listens there again: the leg connects, carries bytes, and
 * from then on the relay never reports failure.  The source's end is
 * connected and dropped again on every failed attempt; the test accepts
 * those and finds the live one by the byte that arrives on it.
 */
LC_TEST(relay_failed_clears_once_a_leg_connects)
{
	struct sockaddr_in sa;
	struct t_relay t;
	struct lc_err e;
	uint16_t port;
	int one = 1, fd, a0 = -1;
	char c;

	t_setup(&t, 1);
	close(t.lfd[1][0]);
	t.lfd[1][0] = -1;
	port = t_closed_port();
	t.end[1].ports[0] = port;
	t_start(&t, 0);
	lc_err_clear(&e);
	T_WAIT_UNTIL(lc_relay_failed(t.r, &e) == 1);
	LC_CHECK_EQ_I(e.code, LC_ERR_NOPATH);

	/* the sink comes up on that port */
	LC_CHECK((fd = socket(AF_INET, SOCK_STREAM, 0)) >= 0);
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(port);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		lc_relay_free(t.r);
		LC_SKIP("the closed port was taken by someone else");
	}
	LC_CHECK(listen(fd, 16) == 0);
	t.lfd[1][0] = fd;
	t.a[1][0] = t_accept(fd);
	t_write_all(t.a[1][0], "x", 1);
	while (a0 < 0) {
		int s = t_accept(t.lfd[0][0]);
		ssize_t r;
		do
			r = read(s, &c, 1);
		while (r < 0 && errno == EINTR);
		if (r == 1) {
			LC_CHECK_EQ_I(c, 'x');
			a0 = s;
		} else {
			close(s);	/* a failed attempt's connection */
		}
	}
	t.a[0][0] = a0;
	t_pass(t.a[0][0], t.a[1][0], "up");
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_relay_failed(t.r, &e), 0);
	LC_CHECK_EQ_I(e.code, 0);
	/* a redial after that does not bring the failure back */
	lc_relay_redial(t.r, 0);
	t_expect_gone(t.a[1][0]);
	LC_CHECK_EQ_I(lc_relay_failed(t.r, &e), 0);
	lc_relay_free(t.r);
	t_close_all(&t);
}

/* ---- free while the legs are stuck ---- */

/* Writes until the socket is full, says so, then until it breaks. */
struct t_flood {
	pthread_t th;
	int fd;
	pthread_mutex_t *mu;
	pthread_cond_t *cv;
	int stalled;		/* mu */
	int err;		/* the errno that ended it */
};

static void *
t_flood_main(void *arg)
{
	struct t_flood *f = arg;
	static const uint8_t buf[65536];

	for (;;) {
		struct pollfd pfd = { .fd = f->fd, .events = POLLOUT };
		ssize_t w = send(f->fd, buf, sizeof(buf),
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w >= 0)
			continue;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			f->err = errno;
			return NULL;
		}
		pthread_mutex_lock(f->mu);
		f->stalled = 1;
		pthread_cond_broadcast(f->cv);
		pthread_mutex_unlock(f->mu);
		(void)poll(&pfd, 1, -1);
	}
}

/*
 * Two legs, both directions flooded and nobody reading: the legs are
 * blocked in the middle of a splice.  lc_relay_free returns, the agents'
 * connections break, and every descriptor the relay opened is closed
 * (ASan's leak check covers the memory).
 */
LC_TEST(relay_free_while_blocked_mid_splice)
{
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
	struct t_flood f[2][2];
	struct t_relay t;
	int before, all;

	t_setup(&t, 2);
	before = lc_test_nfds();
	t_start(&t, 64 << 10);
	for (uint32_t i = 0; i < 2; i++) {
		t_accept_leg(&t, i);
		t_pass(t.a[0][i], t.a[1][i], "up");
	}
	for (uint32_t i = 0; i < 2; i++)
		for (int k = 0; k < 2; k++) {
			f[k][i] = (struct t_flood){ .fd = t.a[k][i],
			    .mu = &mu, .cv = &cv };
			LC_CHECK(pthread_create(&f[k][i].th, NULL,
			    t_flood_main, &f[k][i]) == 0);
		}
	pthread_mutex_lock(&mu);
	do {
		all = 1;
		for (uint32_t i = 0; i < 2; i++)
			for (int k = 0; k < 2; k++)
				all &= f[k][i].stalled;
		if (!all)
			pthread_cond_wait(&cv, &mu);
	} while (!all);
	pthread_mutex_unlock(&mu);

	lc_relay_free(t.r);
	/* the relay's ends are gone: every flood ends with an error */
	for (uint32_t i = 0; i < 2; i++)
		for (int k = 0; k < 2; k++) {
			pthread_join(f[k][i].th, NULL);
			LC_CHECK(f[k][i].err == EPIPE ||
			    f[k][i].err == ECONNRESET);
			close(t.a[k][i]);
			t.a[k][i] = -1;
		}
	LC_CHECK_EQ_I(lc_test_nfds(), before);
	t_close_all(&t);
}

/* Free right after start, before any leg got anywhere; and free(NULL). */
LC_TEST(relay_free_at_once)
{
	struct t_relay t;
	int before;

	lc_relay_free(NULL);
	t_setup(&t, 3);
	before = lc_test_nfds();
	t_start(&t, 0);
	lc_relay_free(t.r);
	LC_CHECK_EQ_I(lc_test_nfds(), before);
	t_close_all(&t);
}

LC_TEST_MAIN()
