/*
 * lc_stream_dial in accept mode (reverse, -z, relays): the source waits
 * on its own listening socket and the sink dials in, then both run the
 * usual handshake with the usual roles (the sink is the TLS server and
 * runs lc_stream_accept_auth, as src/agent/sink/acceptor.c does).  The test plays
 * the sink (and strangers) in threads that dial the listening socket.
 */
#define LC_TEST_TIMEOUT 60
#include "harness.h"

#include "clock.h"
#include "err.h"
#include "stream.h"
#include "tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

#define T_STREAMS 4u
#define T_IDX 2u
#define T_PAYLOAD "file data after the handshake"

static void
t_key(uint8_t key[LC_KEY_LEN], uint8_t salt)
{
	for (size_t i = 0; i < LC_KEY_LEN; i++)
		key[i] = (uint8_t)(i * 37 + salt);
}

/* The sink's side of one stream: dial, handshake as server, read. */
struct t_sink {
	pthread_t th;
	uint16_t port;
	int encrypt;
	uint8_t key[LC_KEY_LEN];
	int rc;			/* handshake result */
	uint32_t idx;
	char got[sizeof(T_PAYLOAD)];
	int read_rc;
	struct lc_err e;
};

static void *
t_sink_main(void *arg)
{
	struct t_sink *s = arg;
	struct lc_tls *tls = NULL;
	struct lc_conn c;
	int fd = -1;

	lc_err_clear(&s->e);
	s->rc = lc_sock_connect("127.0.0.1", s->port, 0, 10000, NULL, &fd,
	    &s->e);
	if (s->rc != 0)
		return NULL;
	lc_conn_init(&c, fd);
	(void)lc_sock_set_timeout(fd, LC_HANDSHAKE_TIMEOUT_MS);
	if (s->encrypt) {
		s->rc = lc_tls_new(1, s->key, &tls, &s->e);
		if (s->rc == 0)
			s->rc = lc_tls_accept(tls, &c, &s->e);
	}
	if (s->rc == 0)
		s->rc = lc_stream_accept_auth(&c, s->key, T_STREAMS, &s->e);
	if (s->rc == 0) {
		s->idx = c.idx;
		s->read_rc = lc_conn_read_full(&c, s->got,
		    sizeof(T_PAYLOAD) - 1, &s->e);
	}
	lc_conn_close(&c);
	lc_tls_free(tls);
	return NULL;
}

static void
t_sink_start(struct t_sink *s, uint16_t port, int encrypt, uint8_t salt)
{
	memset(s, 0, sizeof(*s));
	s->port = port;
	s->encrypt = encrypt;
	s->rc = -1;
	s->read_rc = -1;
	t_key(s->key, salt);
	LC_CHECK(pthread_create(&s->th, NULL, t_sink_main, s) == 0);
}

/* The source's side: the dial parameters in accept mode. */
struct t_src {
	int lfd;
	uint16_t port;
	uint8_t key[LC_KEY_LEN];
	struct lc_tls *tls;
	atomic_bool cancel;
	struct lc_dial d;
};

static void
t_src_init(struct t_src *t, int encrypt, int timeout_ms)
{
	struct lc_err e;

	signal(SIGPIPE, SIG_IGN);	/* as cmd/lanecp.c: TLS writes */
	memset(t, 0, sizeof(*t));
	atomic_init(&t->cancel, false);
	t_key(t->key, 11);
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_sock_listen(0, 1, &t->lfd, &t->port, &e), 0);
	if (encrypt)
		LC_CHECK_EQ_I(lc_tls_new(0, t->key, &t->tls, &e), 0);
	t->d.idx = T_IDX;
	t->d.key = t->key;
	t->d.tls = t->tls;
	t->d.connect_timeout_ms = timeout_ms;
	t->d.cancel = &t->cancel;
	t->d.accept = 1;
	t->d.listen_fd = t->lfd;
}

static void
t_src_free(struct t_src *t)
{
	lc_tls_free(t->tls);
	close(t->lfd);
}

/* The stream is up: the payload reaches the sink, which saw our index. */
static void
t_up(struct t_src *t, struct lc_stream *st, struct t_sink *s)
{
	struct lc_err e;

	lc_err_clear(&e);
	LC_CHECK(st != NULL);
	LC_CHECK_EQ_I(lc_stream_write(st, T_PAYLOAD, sizeof(T_PAYLOAD) - 1,
	    &e), 0);
	pthread_join(s->th, NULL);
	if (s->rc != 0)
		fprintf(stderr, "sink: %s\n", s->e.msg);
	LC_CHECK_EQ_I(s->rc, 0);
	LC_CHECK_EQ_U(s->idx, T_IDX);
	LC_CHECK_EQ_I(s->read_rc, 0);
	LC_CHECK(memcmp(s->got, T_PAYLOAD, sizeof(T_PAYLOAD) - 1) == 0);
	(void)t;
}

static void
t_comes_up(int encrypt)
{
	struct lc_stream *st = NULL;
	struct t_sink s;
	struct t_src t;
	struct lc_err e;

	t_src_init(&t, encrypt, 20000);
	t_sink_start(&s, t.port, encrypt, 11);
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_stream_dial(&t.d, &st, &e), 0);
	t_up(&t, st, &s);
	lc_stream_free(st);
	t_src_free(&t);
}

LC_TEST(reverse_dial_comes_up_tls)
{
	t_comes_up(1);
}

LC_TEST(reverse_dial_comes_up_plain)
{
	t_comes_up(0);
}

/* A peer whose connection the source must drop. */
enum t_kind { T_GARBAGE, T_WRONG_KEY };

static int
t_stranger_connect(uint16_t port)
{
	struct lc_err e;
	int fd = -1;

	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_sock_connect("127.0.0.1", port, 0, 10000, NULL, &fd,
	    &e), 0);
	return fd;
}

/* The source dropped this connection: EOF or a reset. */
static void
t_expect_gone(int fd)
{
	uint8_t buf[4096];
	ssize_t r;

	for (;;) {
		r = read(fd, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r > 0)	/* a TLS alert or the source's hello */
			continue;
		break;
	}
	LC_CHECK(r == 0 || (r < 0 && errno == ECONNRESET));
}

/* lc_stream_dial on a thread, so that the test can play the peers. */
struct t_dialer {
	pthread_t th;
	struct t_src *t;
	struct lc_stream *st;
	struct lc_err e;
	int rc;
};

static void *
t_dialer_main(void *arg)
{
	struct t_dialer *d = arg;

	lc_err_clear(&d->e);
	d->rc = lc_stream_dial(&d->t->d, &d->st, &d->e);
	return NULL;
}

/*
 * Strangers come first: one connects and sends garbage, then a "sink"
 * with another key dials in.  The source drops both (each sees its
 * connection closed, the impostor's handshake fails) and keeps waiting;
 * the real sink then gets through, and no descriptor is left behind.
 */
static void
t_strangers(int encrypt)
{
	struct t_dialer dl;
	struct t_sink s, wrong;
	struct t_src t;
	uint8_t junk[96];
	int fd, before;

	t_src_init(&t, encrypt, 30000);
	before = lc_test_nfds();
	fd = t_stranger_connect(t.port);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 7 + 3);
	LC_CHECK(send(fd, junk, sizeof(junk), MSG_NOSIGNAL) ==
	    (ssize_t)sizeof(junk));
	memset(&dl, 0, sizeof(dl));
	dl.t = &t;
	dl.rc = 1;
	LC_CHECK(pthread_create(&dl.th, NULL, t_dialer_main, &dl) == 0);
	t_expect_gone(fd);
	close(fd);

	t_sink_start(&wrong, t.port, encrypt, 99);
	pthread_join(wrong.th, NULL);
	fprintf(stderr, "impostor: %s\n", wrong.e.msg);
	LC_CHECK(wrong.rc != 0);

	t_sink_start(&s, t.port, encrypt, 11);
	pthread_join(dl.th, NULL);
	if (dl.rc != 0)
		fprintf(stderr, "dial: %s\n", dl.e.msg);
	LC_CHECK_EQ_I(dl.rc, 0);
	t_up(&t, dl.st, &s);
	lc_stream_free(dl.st);
	LC_CHECK_EQ_I(lc_test_nfds(), before);
	t_src_free(&t);
}

LC_TEST(reverse_dial_drops_strangers_tls)
{
	t_strangers(1);
}

LC_TEST(reverse_dial_drops_strangers_plain)
{
	t_strangers(0);
}

/*
 * Nobody comes: -LC_ERR_STREAM once connect_timeout_ms has passed (not
 * before; no upper bound is asserted), nothing left open, the listening
 * socket still ours and open.
 */
LC_TEST(reverse_dial_times_out)
{
	struct lc_stream *st = (struct lc_stream *)&st;
	struct t_src t;
	struct lc_err e;
	uint64_t t0;
	int before;

	t_src_init(&t, 1, 300);
	before = lc_test_nfds();
	lc_err_clear(&e);
	t0 = lc_now_ms();
	LC_CHECK_EQ_I(lc_stream_dial(&t.d, &st, &e), -LC_ERR_STREAM);
	LC_CHECK(lc_now_ms() - t0 >= 300);
	LC_CHECK_EQ_I(e.code, LC_ERR_STREAM);
	LC_CHECK(st == NULL);
	fprintf(stderr, "timeout: %s\n", e.msg);
	LC_CHECK_EQ_I(lc_test_nfds(), before);
	LC_CHECK(fcntl(t.lfd, F_GETFD) >= 0);
	t_src_free(&t);
}

/* Cancel set before the call: -LC_ERR_CANCELED at once. */
LC_TEST(reverse_dial_canceled_before)
{
	struct lc_stream *st = NULL;
	struct t_src t;
	struct lc_err e;

	t_src_init(&t, 0, 600000);
	atomic_store(&t.cancel, true);
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_stream_dial(&t.d, &st, &e), -LC_ERR_CANCELED);
	LC_CHECK_EQ_I(e.code, LC_ERR_CANCELED);
	LC_CHECK(st == NULL);
	t_src_free(&t);
}

static void *
t_cancel_main(void *arg)
{
	atomic_store((atomic_bool *)arg, true);
	return NULL;
}

/*
 * Cancel set by another thread while the dial waits (or just before it:
 * either order must give the same answer).  The timeout is 10 minutes,
 * so only the cancel can end the wait.
 */
LC_TEST(reverse_dial_canceled_while_waiting)
{
	struct t_dialer dl;
	struct t_src t;
	pthread_t th;
	int before;

	t_src_init(&t, 1, 600000);
	before = lc_test_nfds();
	memset(&dl, 0, sizeof(dl));
	dl.t = &t;
	dl.rc = 1;
	LC_CHECK(pthread_create(&dl.th, NULL, t_dialer_main, &dl) == 0);
	LC_CHECK(pthread_create(&th, NULL, t_cancel_main, &t.cancel) == 0);
	pthread_join(th, NULL);
	pthread_join(dl.th, NULL);
	LC_CHECK_EQ_I(dl.rc, -LC_ERR_CANCELED);
	LC_CHECK_EQ_I(dl.e.code, LC_ERR_CANCELED);
	LC_CHECK(dl.st == NULL);
	LC_CHECK_EQ_I(lc_test_nfds(), before);
	t_src_free(&t);
}

/*
 * The pending hook in accept mode: called with the accepted socket
 * before its handshake and with -1 before it is closed.  A canceller
 * that shuts the socket down (as the source's senders do) and sets the
 * flag ends a handshake with a silent stranger, and the dial returns
 * (the code is whatever the broken handshake gave: see the report) with
 * nothing left open.
 */
struct t_pend {
	struct t_src *t;
	int fd;			/* what the hook was last given */
	int calls;
	int had_fd;
};

static void
t_pending(void *arg, int fd)
{
	struct t_pend *p = arg;

	p->calls++;
	p->fd = fd;
	if (fd >= 0) {
		p->had_fd = 1;
		atomic_store(&p->t->cancel, true);
		(void)shutdown(fd, SHUT_RDWR);
	}
}

LC_TEST(reverse_dial_pending_hook_cancels_handshake)
{
	struct lc_stream *st = NULL;
	struct t_pend pd;
	struct t_src t;
	struct lc_err e;
	int fd, r, before;

	t_src_init(&t, 1, 600000);
	before = lc_test_nfds();
	memset(&pd, 0, sizeof(pd));
	pd.t = &t;
	pd.fd = -2;
	t.d.pending = t_pending;
	t.d.arg = &pd;
	fd = t_stranger_connect(t.port);	/* says nothing */
	lc_err_clear(&e);
	r = lc_stream_dial(&t.d, &st, &e);
	fprintf(stderr, "canceled handshake: %d %s\n", r, e.msg);
	LC_CHECK(r == -LC_ERR_CANCELED || r == -LC_ERR_STREAM);
	LC_CHECK(st == NULL);
	LC_CHECK_EQ_I(pd.had_fd, 1);
	LC_CHECK_EQ_I(pd.calls, 2);
	LC_CHECK_EQ_I(pd.fd, -1);
	t_expect_gone(fd);
	close(fd);
	LC_CHECK_EQ_I(lc_test_nfds(), before);
	t_src_free(&t);
}

/*
 * Slow strangers (issue 20, item 6): a stranger that connects first and
 * then sends one byte every 50 ms, a TLS record header first, so that a
 * TLS client waits for the rest of the record: each read gets a byte,
 * and only a deadline for the whole handshake ends it.
 */
struct t_slow {
	pthread_t th;
	int fd;
	atomic_bool stop;
	atomic_bool gone;	/* the source closed the connection */
};

static void *
t_slow_main(void *arg)
{
	static const uint8_t hdr[5] = { 0x16, 0x03, 0x03, 0x40, 0x00 };
	struct t_slow *w = arg;
	uint8_t b = 0, buf[4096];

	if (send(w->fd, hdr, sizeof(hdr), MSG_NOSIGNAL) != (ssize_t)sizeof(hdr))
		atomic_store(&w->gone, true);
	while (!atomic_load(&w->gone) && !atomic_load(&w->stop)) {
		struct pollfd p = { .fd = w->fd, .events = POLLIN };
		if (poll(&p, 1, 50) > 0) {
			ssize_t k = recv(w->fd, buf, sizeof(buf), MSG_DONTWAIT);
			if (k == 0 || (k < 0 && errno != EAGAIN &&
			    errno != EINTR))
				atomic_store(&w->gone, true);
			continue;
		}
		if (send(w->fd, &b, 1, MSG_NOSIGNAL) != 1)
			atomic_store(&w->gone, true);
	}
	return NULL;
}

/* Connect a slow stranger from address from (NULL: any) to port. */
static void
t_slow_start(struct t_slow *w, const char *from, uint16_t port)
{
	struct sockaddr_in sa;

	memset(w, 0, sizeof(*w));
	atomic_init(&w->stop, false);
	atomic_init(&w->gone, false);
	w->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	LC_CHECK(w->fd >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	if (from != NULL) {
		LC_CHECK(inet_pton(AF_INET, from, &sa.sin_addr) == 1);
		LC_CHECK(bind(w->fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	}
	LC_CHECK(inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr) == 1);
	sa.sin_port = htons(port);
	LC_CHECK(connect(w->fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	LC_CHECK(pthread_create(&w->th, NULL, t_slow_main, w) == 0);
}

/* Wait until the source has closed w's connection (the harness's
   timeout is the cap), then clean up. */
static void
t_slow_wait_gone(struct t_slow *w)
{
	while (!atomic_load(&w->gone))
		(void)poll(NULL, 0, 20);
	pthread_join(w->th, NULL);
	close(w->fd);
}

/*
 * A slow stranger is there first; the real sink dials in while it is
 * still trickling, and gets the stream (on main's code the source ran
 * one handshake at a time, so the stranger held the stream for as long as
 * it kept sending).  Once the stream is up the stranger is dropped.
 */
LC_TEST(reverse_dial_slow_stranger_first)
{
	struct lc_stream *st = NULL;
	struct t_slow w;
	struct t_sink s;
	struct t_src t;
	struct lc_err e;

	t_src_init(&t, 1, 30000);
	t_slow_start(&w, NULL, t.port);
	t_sink_start(&s, t.port, 1, 11);
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_stream_dial(&t.d, &st, &e), 0);
	t_up(&t, st, &s);
	t_slow_wait_gone(&w);
	lc_stream_free(st);
	t_src_free(&t);
}

/*
 * Six slow strangers from the sink's own address (127.0.0.1) and six from
 * another (127.0.0.2) are there first: more than the source runs at once
 * from one address or in all.  The real sink still gets through; the
 * strangers are all dropped (for room, or when the stream is up).
 */
LC_TEST(reverse_dial_strangers_from_two_addresses)
{
	struct lc_stream *st = NULL;
	struct t_slow w[12];
	struct t_sink s;
	struct t_src t;
	struct lc_err e;

	t_src_init(&t, 1, 30000);
	for (int i = 0; i < 12; i++)
		t_slow_start(&w[i], i < 6 ? "127.0.0.1" : "127.0.0.2", t.port);
	t_sink_start(&s, t.port, 1, 11);
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_stream_dial(&t.d, &st, &e), 0);
	t_up(&t, st, &s);
	for (int i = 0; i < 12; i++)
		t_slow_wait_gone(&w[i]);
	lc_stream_free(st);
	t_src_free(&t);
}

/*
 * The deadline: with no sink yet, a slow stranger is dropped once its
 * whole handshake has taken handshake_ms (not before; no upper bound is
 * asserted), while the source goes on waiting; the sink then gets through.
 */
static void
t_deadline(int encrypt)
{
	struct t_dialer dl;
	struct t_slow w;
	struct t_sink s;
	struct t_src t;
	uint64_t t0;

	t_src_init(&t, encrypt, 60000);
	t.d.handshake_ms = 300;
	memset(&dl, 0, sizeof(dl));
	dl.t = &t;
	dl.rc = 1;
	LC_CHECK(pthread_create(&dl.th, NULL, t_dialer_main, &dl) == 0);
	t0 = lc_now_ms();
	t_slow_start(&w, "127.0.0.2", t.port);
	t_slow_wait_gone(&w);
	LC_CHECK(lc_now_ms() - t0 >= 300);
	t_sink_start(&s, t.port, encrypt, 11);
	pthread_join(dl.th, NULL);
	if (dl.rc != 0)
		fprintf(stderr, "dial: %s\n", dl.e.msg);
	LC_CHECK_EQ_I(dl.rc, 0);
	t_up(&t, dl.st, &s);
	lc_stream_free(dl.st);
	t_src_free(&t);
}

LC_TEST(reverse_dial_stranger_deadline_tls)
{
	t_deadline(1);
}

LC_TEST(reverse_dial_stranger_deadline_plain)
{
	t_deadline(0);
}

LC_TEST_MAIN()
