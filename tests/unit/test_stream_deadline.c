/*
 * The handshake's deadline and the admission of handshakes by address
 * (stream.h; issue 20, item 6): a peer that sends one byte at a time
 * cannot keep a handshake going past its deadline, TLS or not, server or
 * client side; lc_hs_admit drops the oldest handshake of an address that
 * has its share, or of all when every slot is busy.
 */
#define LC_TEST_TIMEOUT 60
#include "harness.h"

#include "clock.h"
#include "err.h"
#include "stream.h"
#include "tls.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

#define T_DEADLINE_MS 300

static void
t_key(uint8_t key[LC_KEY_LEN])
{
	for (size_t i = 0; i < LC_KEY_LEN; i++)
		key[i] = (uint8_t)(i * 29 + 5);
}

/* ---- lc_hs_admit ---- */

LC_TEST(admit_room)
{
	struct lc_hs_slot p[4] = { { "10.0.0.1", 5 }, { NULL, 0 },
		{ "10.0.0.2", 3 }, { NULL, 0 } };
	int why = -1;

	LC_CHECK_EQ_I(lc_hs_admit(p, 4, "10.0.0.1", 2, &why), -1);
	LC_CHECK_EQ_I(why, 0);
	LC_CHECK_EQ_I(lc_hs_admit(p, 4, "10.0.0.9", 1, &why), -1);
}

/* An address at its share loses its own oldest, not anyone else's. */
LC_TEST(admit_per_host_drops_its_oldest)
{
	struct lc_hs_slot p[5] = { { "10.0.0.2", 1 }, { "10.0.0.1", 9 },
		{ "10.0.0.1", 4 }, { NULL, 0 }, { "10.0.0.1", 7 } };
	int why = 0;

	LC_CHECK_EQ_I(lc_hs_admit(p, 5, "10.0.0.1", 3, &why), 2);
	LC_CHECK_EQ_I(why, LC_HS_PER_HOST);
	LC_CHECK_EQ_I(lc_hs_admit(p, 5, "10.0.0.1", 4, &why), -1);
	LC_CHECK_EQ_I(lc_hs_admit(p, 5, "10.0.0.2", 1, &why), 0);
	LC_CHECK_EQ_I(why, LC_HS_PER_HOST);
}

/* Every slot busy: the oldest of all goes, whoever holds it. */
LC_TEST(admit_all_busy_drops_the_oldest)
{
	struct lc_hs_slot p[3] = { { "10.0.0.1", 8 }, { "::1", 2 },
		{ "10.0.0.1", 6 } };
	int why = 0;

	LC_CHECK_EQ_I(lc_hs_admit(p, 3, "10.0.0.3", 3, &why), 1);
	LC_CHECK_EQ_I(why, LC_HS_ALL_BUSY);
	/* its own share first, even when all are busy */
	LC_CHECK_EQ_I(lc_hs_admit(p, 3, "10.0.0.1", 2, &why), 2);
	LC_CHECK_EQ_I(why, LC_HS_PER_HOST);
}

LC_TEST(conn_host)
{
	struct lc_conn c;
	char h[LC_PEER_MAX];

	memset(&c, 0, sizeof(c));
	snprintf(c.peer, sizeof(c.peer), "192.0.2.7 port 4711");
	lc_conn_host(&c, h, sizeof(h));
	LC_CHECK_STR(h, "192.0.2.7");
	snprintf(c.peer, sizeof(c.peer), "2001:db8::1 port 22");
	lc_conn_host(&c, h, sizeof(h));
	LC_CHECK_STR(h, "2001:db8::1");
}

/* ---- the deadline ---- */

/*
 * The slow peer: one byte every 20 ms on fd (a TLS record header first
 * when tls, so that TLS waits for a whole record), reading whatever comes,
 * until the other side closes or stop is set.
 */
struct t_slow {
	pthread_t th;
	int fd;
	int tls;
	atomic_bool stop;
};

static void *
t_slow_main(void *arg)
{
	static const uint8_t hdr[5] = { 0x16, 0x03, 0x03, 0x40, 0x00 };
	struct t_slow *w = arg;
	uint8_t b = 0, buf[4096];

	if (w->tls && send(w->fd, hdr, sizeof(hdr), MSG_NOSIGNAL) !=
	    (ssize_t)sizeof(hdr))
		return NULL;
	while (!atomic_load(&w->stop)) {
		struct pollfd p = { .fd = w->fd, .events = POLLIN };
		if (poll(&p, 1, 20) > 0) {
			ssize_t k = recv(w->fd, buf, sizeof(buf), MSG_DONTWAIT);
			if (k == 0 || (k < 0 && errno != EAGAIN &&
			    errno != EINTR))
				break;
			continue;
		}
		if (send(w->fd, &b, 1, MSG_NOSIGNAL) != 1)
			break;
	}
	return NULL;
}

static void
t_slow_stop(struct t_slow *w)
{
	atomic_store(&w->stop, true);
	pthread_join(w->th, NULL);
	close(w->fd);
}

/*
 * Server side (the sink's acceptor): TLS accept, or the HMAC exchange,
 * against a peer that trickles, under a deadline: -LC_ERR_TIMEOUT once
 * the deadline has passed (not before), saying so.
 */
static void
t_server(int encrypt)
{
	struct lc_tls *tls = NULL;
	struct t_slow w;
	struct lc_conn c;
	struct lc_err e;
	uint8_t key[LC_KEY_LEN];
	uint64_t t0;
	int sv[2], r;

	signal(SIGPIPE, SIG_IGN);
	t_key(key);
	lc_err_clear(&e);
	LC_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	memset(&w, 0, sizeof(w));
	atomic_init(&w.stop, false);
	w.fd = sv[1];
	w.tls = encrypt;
	LC_CHECK(pthread_create(&w.th, NULL, t_slow_main, &w) == 0);
	lc_conn_init(&c, sv[0]);
	t0 = lc_now_ms();
	LC_CHECK_EQ_I(lc_conn_set_deadline(&c, T_DEADLINE_MS), 0);
	if (encrypt) {
		LC_CHECK_EQ_I(lc_tls_new(1, key, &tls, &e), 0);
		r = lc_tls_accept(tls, &c, &e);
	} else {
		r = lc_stream_accept_auth(&c, key, 4, &e);
	}
	fprintf(stderr, "server: %d %s after %llu ms\n", r, e.msg,
	    (unsigned long long)(lc_now_ms() - t0));
	LC_CHECK(r != 0);
	LC_CHECK(lc_now_ms() - t0 >= T_DEADLINE_MS);
	LC_CHECK(strstr(e.msg, "not finished within 1 s") != NULL);
	lc_conn_close(&c);
	t_slow_stop(&w);
	lc_tls_free(tls);
}

LC_TEST(deadline_server_tls)
{
	t_server(1);
}

LC_TEST(deadline_server_plain)
{
	t_server(0);
}

/*
 * Client side (the source dialling a sink that trickles): lc_stream_dial
 * fails once d.handshake_ms has passed, with nothing left open.
 */
struct t_listener {
	pthread_t th;
	int lfd;
	int tls;
	struct t_slow w;
};

static void *
t_listener_main(void *arg)
{
	struct t_listener *l = arg;

	l->w.fd = accept(l->lfd, NULL, NULL);
	if (l->w.fd >= 0)
		(void)t_slow_main(&l->w);
	return NULL;
}

static void
t_client(int encrypt)
{
	struct lc_stream *st = NULL;
	struct lc_tls *tls = NULL;
	struct t_listener l;
	struct lc_dial d;
	struct lc_err e;
	uint8_t key[LC_KEY_LEN];
	uint16_t port;
	uint64_t t0;
	int r, before;

	signal(SIGPIPE, SIG_IGN);
	t_key(key);
	lc_err_clear(&e);
	memset(&l, 0, sizeof(l));
	atomic_init(&l.w.stop, false);
	l.w.tls = encrypt;
	LC_CHECK_EQ_I(lc_sock_listen(0, 1, &l.lfd, &port, &e), 0);
	if (encrypt)
		LC_CHECK_EQ_I(lc_tls_new(0, key, &tls, &e), 0);
	before = lc_test_nfds();
	LC_CHECK(pthread_create(&l.th, NULL, t_listener_main, &l) == 0);
	memset(&d, 0, sizeof(d));
	d.addr = "127.0.0.1";
	d.port = port;
	d.idx = 1;
	d.key = key;
	d.tls = tls;
	d.connect_timeout_ms = 10000;
	d.handshake_ms = T_DEADLINE_MS;
	t0 = lc_now_ms();
	r = lc_stream_dial(&d, &st, &e);
	fprintf(stderr, "client: %d %s after %llu ms\n", r, e.msg,
	    (unsigned long long)(lc_now_ms() - t0));
	LC_CHECK(r != 0);
	LC_CHECK(st == NULL);
	LC_CHECK(lc_now_ms() - t0 >= T_DEADLINE_MS);
	LC_CHECK(strstr(e.msg, "not finished within 1 s") != NULL);
	pthread_join(l.th, NULL);	/* it saw our close */
	close(l.w.fd);
	LC_CHECK_EQ_I(lc_test_nfds(), before);
	close(l.lfd);
	lc_tls_free(tls);
}

LC_TEST(deadline_client_tls)
{
	t_client(1);
}

LC_TEST(deadline_client_plain)
{
	t_client(0);
}

LC_TEST_MAIN()
