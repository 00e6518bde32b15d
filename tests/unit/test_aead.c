/*
 * The encrypted data frames (aead.h, lc_conn_read_rest): every frame type
 * round trips over real connections (TLS 1.3 handshake, exporter keys,
 * the record layer left behind), and each attack is detected with
 * -LC_ERR_INTEGRITY: a flipped bit in header, ciphertext or tag; a
 * replayed or reordered frame; a frame moved to another stream, or to a
 * later connection of the same stream; a reused nonce; a frame cut short
 * (truncation).  After a failure the opener accepts nothing more.
 */
#define LC_TEST_TIMEOUT 60
#include "harness.h"

#include "aead.h"
#include "err.h"
#include "stream.h"
#include "tls.h"
#include "wire.h"

#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#define T_STREAMS 4u
#define T_MAXPAY 4096u

/* ---- a connected pair: the source's sealer, the sink's opener ---- */

struct t_pair {
	struct lc_conn src, snk;	/* src.tx, snk.rx */
};

struct t_acc {
	struct lc_tls *tls;
	struct lc_conn *c;
	const uint8_t *key;
	int rc;
	struct lc_err e;
};

static void *
t_acc_main(void *arg)
{
	struct t_acc *a = arg;

	a->rc = lc_tls_accept(a->tls, a->c, &a->e);
	if (a->rc == 0)
		a->rc = lc_stream_accept_auth(a->c, a->key, T_STREAMS,
		    &a->e);
	return NULL;
}

static void
t_key(uint8_t key[LC_KEY_LEN])
{
	for (size_t i = 0; i < LC_KEY_LEN; i++)
		key[i] = (uint8_t)(i * 29 + 3);
}

static void
t_pair_open(struct t_pair *p, uint32_t idx)
{
	struct lc_tls *ct = NULL, *st = NULL;
	uint8_t key[LC_KEY_LEN];
	struct t_acc a;
	struct lc_err e;
	pthread_t th;
	int sv[2];

	signal(SIGPIPE, SIG_IGN);
	t_key(key);
	lc_err_clear(&e);
	memset(&a, 0, sizeof(a));
	LC_CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	lc_conn_init(&p->src, sv[0]);
	lc_conn_init(&p->snk, sv[1]);
	LC_CHECK_EQ_I(lc_tls_new(0, key, &ct, &e), 0);
	LC_CHECK_EQ_I(lc_tls_new(1, key, &st, &e), 0);
	a.tls = st;
	a.c = &p->snk;
	a.key = key;
	LC_CHECK(pthread_create(&th, NULL, t_acc_main, &a) == 0);
	LC_CHECK_EQ_I(lc_tls_connect(ct, &p->src, &e), 0);
	LC_CHECK_EQ_I(lc_stream_connect_auth(&p->src, key, idx, &e), 0);
	pthread_join(th, NULL);
	if (a.rc != 0)
		fprintf(stderr, "accept: %s\n", a.e.msg);
	LC_CHECK_EQ_I(a.rc, 0);
	LC_CHECK_EQ_U(p->snk.idx, idx);
	/* the record layer is gone; one key each way it is used */
	LC_CHECK(p->src.ssl == NULL && p->snk.ssl == NULL);
	LC_CHECK(p->src.tx != NULL && p->src.rx == NULL);
	LC_CHECK(p->snk.rx != NULL && p->snk.tx == NULL);
	LC_CHECK(lc_conn_sealed(&p->src) && lc_conn_sealed(&p->snk));
	lc_tls_free(ct);
	lc_tls_free(st);
}

static void
t_pair_close(struct t_pair *p)
{
	lc_conn_close(&p->src);
	lc_conn_close(&p->snk);
}

/* ---- frames ---- */

struct t_frame {
	uint8_t b[LC_FRAME_HDR_LEN + T_MAXPAY + LC_AEAD_TAG_LEN];
	size_t n;		/* header + payload + tag */
	uint32_t len;		/* payload */
};

static void
t_frame_make(struct t_frame *f, struct lc_aead *tx, uint8_t type,
    uint8_t flags, uint64_t off, uint32_t len, uint32_t raw, uint8_t fill)
{
	struct lc_frame fr;

	LC_CHECK(len <= T_MAXPAY);
	memset(&fr, 0, sizeof(fr));
	fr.type = type;
	fr.flags = flags;
	if (type == LC_FRAME_DATA || type == LC_FRAME_HOLE) {
		fr.file_id = 7;
		fr.offset = off;
	}
	fr.len = len;
	fr.raw_len = raw;
	lc_frame_put(f->b, &fr);
	for (uint32_t i = 0; i < len; i++)
		f->b[LC_FRAME_HDR_LEN + i] = (uint8_t)(fill + i * 7);
	f->len = len;
	LC_CHECK_EQ_I(lc_aead_seal(tx, f->b, LC_FRAME_HDR_LEN,
	    f->b + LC_FRAME_HDR_LEN, len, f->b + LC_FRAME_HDR_LEN + len), 0);
	f->n = LC_FRAME_HDR_LEN + len + LC_AEAD_TAG_LEN;
}

static void
t_data(struct t_frame *f, struct lc_aead *tx, uint64_t off, uint8_t fill)
{
	t_frame_make(f, tx, LC_FRAME_DATA, 0, off, 1000, 1000, fill);
}

static void
t_send(struct t_pair *p, const struct t_frame *f)
{
	struct lc_err e;

	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_conn_write_all(&p->src, f->b, f->n, &e), 0);
}

/*
 * Receive one frame as the receiver does: header, checked, then the rest.
 * Returns lc_conn_read_rest's result; *out the payload on success.
 */
static int
t_recv(struct t_pair *p, uint8_t *out, struct lc_frame *fr)
{
	uint8_t hdr[LC_FRAME_HDR_LEN];
	struct lc_err e;
	int r;

	lc_err_clear(&e);
	if ((r = lc_conn_read_full(&p->snk, hdr, sizeof(hdr), &e)) != 0)
		return r;
	if (lc_frame_get(hdr, 1u << 20, fr) != 0)
		return -LC_ERR_PROTO;
	r = lc_conn_read_rest(&p->snk, hdr, sizeof(hdr), out, fr->len, &e);
	if (r == -LC_ERR_INTEGRITY)
		LC_CHECK(strstr(e.msg, "integrity") != NULL);
	return r;
}

/* The plaintext of a frame made by t_frame_make with fill. */
static int
t_payload_ok(const uint8_t *p, uint32_t len, uint8_t fill)
{
	for (uint32_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)(fill + i * 7))
			return 0;
	return 1;
}

LC_TEST(aead_every_frame_type_round_trips)
{
	struct t_pair p;
	struct t_frame f;
	struct lc_frame fr;
	uint8_t out[T_MAXPAY];

	t_pair_open(&p, 2);
	t_data(&f, p.src.tx, 0, 1);
	LC_CHECK(memcmp(f.b + LC_FRAME_HDR_LEN, "\x01\x08", 2) != 0);
	t_send(&p, &f);
	LC_CHECK_EQ_I(t_recv(&p, out, &fr), 0);
	LC_CHECK_EQ_U(fr.type, LC_FRAME_DATA);
	LC_CHECK(t_payload_ok(out, 1000, 1));
	/* compressed DATA: the ciphertext is the zlib stream */
	t_frame_make(&f, p.src.tx, LC_FRAME_DATA, LC_FRAME_F_ZLIB, 1000, 300,
	    900, 2);
	t_send(&p, &f);
	LC_CHECK_EQ_I(t_recv(&p, out, &fr), 0);
	LC_CHECK_EQ_U(fr.flags, LC_FRAME_F_ZLIB);
	LC_CHECK(t_payload_ok(out, 300, 2));
	t_frame_make(&f, p.src.tx, LC_FRAME_HOLE, 0, 1900, 0, 1u << 30, 0);
	t_send(&p, &f);
	LC_CHECK_EQ_I(t_recv(&p, out, &fr), 0);
	LC_CHECK_EQ_U(fr.type, LC_FRAME_HOLE);
	t_frame_make(&f, p.src.tx, LC_FRAME_IDLE, 0, 0, 0, 0, 0);
	t_send(&p, &f);
	LC_CHECK_EQ_I(t_recv(&p, out, &fr), 0);
	LC_CHECK_EQ_U(fr.type, LC_FRAME_IDLE);
	t_frame_make(&f, p.src.tx, LC_FRAME_END, 0, 0, 0, 0, 0);
	t_send(&p, &f);
	LC_CHECK_EQ_I(t_recv(&p, out, &fr), 0);
	LC_CHECK_EQ_U(fr.type, LC_FRAME_END);
	LC_CHECK_EQ_U(lc_aead_count(p.snk.rx), 5);
	t_pair_close(&p);
}

/* A bit flipped at byte `at` of the second frame: it and all after fail. */
static void
t_flip(size_t at_from_end, size_t at)
{
	struct t_pair p;
	struct t_frame f;
	struct lc_frame fr;
	uint8_t out[T_MAXPAY];

	t_pair_open(&p, 0);
	t_data(&f, p.src.tx, 0, 5);
	t_send(&p, &f);
	LC_CHECK_EQ_I(t_recv(&p, out, &fr), 0);
	t_data(&f, p.src.tx, 1000, 6);
	f.b[at_from_end ? f.n - at_from_end : at] ^= 0x10;
	t_send(&p, &f);
	memset(out, 0xee, sizeof(out));
	LC_CHECK_EQ_I(t_recv(&p, out, &fr), -LC_ERR_INTEGRITY);
	/* the honest next frame is not accepted either: the opener is dead */
	t_data(&f, p.src.tx, 2000, 7);
	t_send(&p, &f);
	LC_CHECK_EQ_I(t_recv(&p, out, &fr), -LC_ERR_INTEGRITY);
	t_pair_close(&p);
}

LC_TEST(aead_flipped_header_bit)
{
	t_flip(0, 9);	/* the offset: still a valid header */
}

LC_TEST(aead_flipped_ciphertext_bit)
{
	t_flip(0, LC_FRAME_HDR_LEN + 500);
}

LC_TEST(aead_flipped_tag_bit)
{
	t_flip(3, 0);
}

LC_TEST(aead_replayed_frame)
{
	struct t_pair p;
	struct t_frame f;
	struct lc_frame fr;
	uint8_t out[T_MAXPAY];

	t_pair_open(&p, 1);
	t_data(&f, p.src.tx, 0, 9);
	t_send(&p, &f);
	LC_CHECK_EQ_I(t_recv(&p, out, &fr), 0);
	t_send(&p, &f);		/* the same bytes again */
	LC_CHECK_EQ_I(t_recv(&p, out, &fr), -LC_ERR_INTEGRITY);
	t_pair_close(&p);
}

LC_TEST(aead_reordered_frames)
{
	struct t_pair p;
	struct t_frame f1, f2;
	struct lc_frame fr;
	uint8_t out[T_MAXPAY];

	t_pair_open(&p, 1);
	t_data(&f1, p.src.tx, 0, 1);
	t_data(&f2, p.src.tx, 1000, 2);
	t_send(&p, &f2);
	LC_CHECK_EQ_I(t_recv(&p, out, &fr), -LC_ERR_INTEGRITY);
	t_pair_close(&p);
}

LC_TEST(aead_dropped_frame)
{
	struct t_pair p;
	struct t_frame f;
	struct lc_frame fr;
	uint8_t out[T_MAXPAY];

	t_pair_open(&p, 1);
	t_data(&f, p.src.tx, 0, 1);	/* sealed, never delivered */
	t_data(&f, p.src.tx, 1000, 2);
	t_send(&p, &f);
	LC_CHECK_EQ_I(t_recv(&p, out, &fr), -LC_ERR_INTEGRITY);
	t_pair_close(&p);
}

/* Stream 0's frame on stream 1 (same transfer, same key): the tag fails. */
LC_TEST(aead_frame_moved_to_another_stream)
{
	struct t_pair p0, p1;
	struct t_frame f;
	struct lc_frame fr;
	uint8_t out[T_MAXPAY];

	t_pair_open(&p0, 0);
	t_pair_open(&p1, 1);
	t_data(&f, p0.src.tx, 0, 3);	/* counter 0 on both */
	t_send(&p1, &f);
	LC_CHECK_EQ_I(t_recv(&p1, out, &fr), -LC_ERR_INTEGRITY);
	t_pair_close(&p0);
	t_pair_close(&p1);
}

/* A reconnect of the same stream has new keys: old frames are refused. */
LC_TEST(aead_frame_from_an_earlier_connection)
{
	struct t_pair a, b;
	struct t_frame f;
	struct lc_frame fr;
	uint8_t out[T_MAXPAY];

	t_pair_open(&a, 3);
	t_pair_open(&b, 3);
	t_data(&f, a.src.tx, 0, 4);
	t_send(&b, &f);
	LC_CHECK_EQ_I(t_recv(&b, out, &fr), -LC_ERR_INTEGRITY);
	t_pair_close(&a);
	t_pair_close(&b);
}

/*
 * A sender whose counter did not advance (a nonce used twice): the second
 * frame under counter 0 is refused by the opener that expects 1.
 */
LC_TEST(aead_reused_nonce)
{
	uint8_t secret[LC_AEAD_SECRET_LEN], hdr[LC_FRAME_HDR_LEN] = { 1 };
	uint8_t m1[64], m2[64], tag[LC_AEAD_TAG_LEN];
	struct lc_aead *tx1 = NULL, *tx2 = NULL, *rx = NULL;

	memset(secret, 0x5a, sizeof(secret));
	memset(m1, 'a', sizeof(m1));
	memset(m2, 'b', sizeof(m2));
	LC_CHECK_EQ_I(lc_aead_new(secret, 1, &tx1), 0);
	LC_CHECK_EQ_I(lc_aead_new(secret, 1, &tx2), 0);
	LC_CHECK_EQ_I(lc_aead_new(secret, 0, &rx), 0);
	LC_CHECK_EQ_I(lc_aead_seal(tx1, hdr, sizeof(hdr), m1, sizeof(m1), tag),
	    0);
	LC_CHECK_EQ_I(lc_aead_open(rx, hdr, sizeof(hdr), m1, sizeof(m1), tag),
	    0);
	LC_CHECK_EQ_I(lc_aead_seal(tx2, hdr, sizeof(hdr), m2, sizeof(m2), tag),
	    0);	/* counter 0 again */
	LC_CHECK_EQ_I(lc_aead_open(rx, hdr, sizeof(hdr), m2, sizeof(m2), tag),
	    -LC_ERR_INTEGRITY);
	/* a sealer is not an opener and the other way round */
	LC_CHECK_EQ_I(lc_aead_open(tx1, hdr, sizeof(hdr), m2, sizeof(m2), tag),
	    -LC_ERR_INTERNAL);
	lc_aead_free(tx1);
	lc_aead_free(tx2);
	lc_aead_free(rx);
}

/*
 * Truncation: an END header whose tag never comes, and a DATA frame cut in
 * its ciphertext, are errors, never a clean end.
 */
LC_TEST(aead_truncated_end_is_no_end)
{
	struct t_pair p;
	struct t_frame f;
	struct lc_frame fr;
	uint8_t out[T_MAXPAY];
	struct lc_err e;

	lc_err_clear(&e);
	t_pair_open(&p, 0);
	t_frame_make(&f, p.src.tx, LC_FRAME_END, 0, 0, 0, 0, 0);
	LC_CHECK_EQ_I(lc_conn_write_all(&p.src, f.b, LC_FRAME_HDR_LEN + 8,
	    &e), 0);
	(void)shutdown(p.src.fd, SHUT_WR);
	LC_CHECK_EQ_I(t_recv(&p, out, &fr), -LC_ERR_STREAM);
	t_pair_close(&p);
}

LC_TEST(aead_truncated_data_frame)
{
	struct t_pair p;
	struct t_frame f;
	struct lc_frame fr;
	uint8_t out[T_MAXPAY];
	struct lc_err e;

	lc_err_clear(&e);
	t_pair_open(&p, 0);
	t_data(&f, p.src.tx, 0, 1);
	LC_CHECK_EQ_I(lc_conn_write_all(&p.src, f.b, f.n - 100, &e), 0);
	(void)shutdown(p.src.fd, SHUT_WR);
	LC_CHECK_EQ_I(t_recv(&p, out, &fr), -LC_ERR_STREAM);
	t_pair_close(&p);
}

/* --no-encrypt: no tag on the wire, frames as before. */
LC_TEST(aead_plain_stream_has_no_tag)
{
	struct lc_conn a, b;
	uint8_t hdr[LC_FRAME_HDR_LEN], out[8];
	struct lc_frame fr;
	struct lc_err e;
	int sv[2];

	lc_err_clear(&e);
	LC_CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	lc_conn_init(&a, sv[0]);
	lc_conn_init(&b, sv[1]);
	LC_CHECK(!lc_conn_sealed(&a));
	memset(&fr, 0, sizeof(fr));
	fr.type = LC_FRAME_END;
	lc_frame_put(hdr, &fr);
	LC_CHECK_EQ_I(lc_conn_write_all(&a, hdr, sizeof(hdr), &e), 0);
	LC_CHECK_EQ_I(lc_conn_write_all(&a, "12345678", 8, &e), 0);
	LC_CHECK_EQ_I(lc_conn_read_full(&b, hdr, sizeof(hdr), &e), 0);
	LC_CHECK_EQ_I(lc_conn_read_rest(&b, hdr, sizeof(hdr), NULL, 0, &e), 0);
	LC_CHECK_EQ_I(lc_conn_read_rest(&b, hdr, sizeof(hdr), out, 8, &e), 0);
	LC_CHECK(memcmp(out, "12345678", 8) == 0);
	lc_conn_close(&a);
	lc_conn_close(&b);
}

/*
 * Key material is left out of core dumps: the AEAD state (its secret)
 * and the TLS context (its PSK) each sit on pages marked MADV_DONTDUMP
 * (secmem.h), which /proc/self/smaps shows as "dd".
 */
LC_TEST(aead_and_tls_keys_are_left_out_of_core_dumps)
{
	uint8_t secret[LC_AEAD_SECRET_LEN], key[LC_KEY_LEN];
	struct lc_aead *a;
	struct lc_tls *t;
	struct lc_err e;

	memset(secret, 0x5a, sizeof(secret));
	memset(key, 0xa5, sizeof(key));
	LC_CHECK_EQ_I(lc_aead_new(secret, 1, &a), 0);
	LC_CHECK_EQ_I(lc_test_dontdump(a), 1);
	lc_aead_free(a);
	LC_CHECK_EQ_I(lc_aead_new(secret, 0, &a), 0);
	LC_CHECK_EQ_I(lc_test_dontdump(a), 1);
	lc_aead_free(a);
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_tls_new(0, key, &t, &e), 0);
	LC_CHECK_EQ_I(lc_test_dontdump(t), 1);
	lc_tls_free(t);
	LC_CHECK_EQ_I(lc_tls_new(1, key, &t, &e), 0);
	LC_CHECK_EQ_I(lc_test_dontdump(t), 1);
	lc_tls_free(t);
}

/*
 * The key changes every epoch (64 GiB; the hidden setting
 * LANECP_AEAD_EPOCH lowers it to 4 KiB here, in every build):
 * an opener that rekeys at the same points opens every frame; one that
 * does not fails exactly at the first frame of the second epoch, and the
 * frames before it open.  So a rekey happens, and both ends must do it.
 */
LC_TEST(aead_rekey_each_epoch)
{
	enum { N = 20, LEN = 1000 };
	static uint8_t ct[N][LEN], tags[N][LC_AEAD_TAG_LEN], same[N][LEN];
	uint8_t secret[LC_AEAD_SECRET_LEN], hdr[8] = "hdr-aad", buf[LEN];
	struct lc_aead *tx, *rx, *norekey, *tx0;
	int first_bad = -1;

	for (size_t i = 0; i < sizeof(secret); i++)
		secret[i] = (uint8_t)(i * 13 + 1);
	LC_CHECK(setenv("LANECP_AEAD_EPOCH", "4096", 1) == 0);
	LC_CHECK_EQ_I(lc_aead_new(secret, 1, &tx), 0);
	LC_CHECK_EQ_I(lc_aead_new(secret, 0, &rx), 0);
	LC_CHECK(unsetenv("LANECP_AEAD_EPOCH") == 0);
	LC_CHECK_EQ_I(lc_aead_new(secret, 0, &norekey), 0);
	LC_CHECK_EQ_I(lc_aead_new(secret, 1, &tx0), 0);
	for (int i = 0; i < N; i++) {
		uint8_t t0[LC_AEAD_TAG_LEN];
		for (int k = 0; k < LEN; k++)
			ct[i][k] = same[i][k] = (uint8_t)(i + k);
		LC_CHECK_EQ_I(lc_aead_seal(tx, hdr, sizeof(hdr), ct[i], LEN,
		    tags[i]), 0);
		LC_CHECK_EQ_I(lc_aead_seal(tx0, hdr, sizeof(hdr), same[i],
		    LEN, t0), 0);
		/* 4096 bytes of payload per epoch: frames 0-4 in epoch 0 */
		LC_CHECK_EQ_I(memcmp(ct[i], same[i], LEN) == 0, i < 5);
	}
	for (int i = 0; i < N; i++) {
		memcpy(buf, ct[i], LEN);
		LC_CHECK_EQ_I(lc_aead_open(rx, hdr, sizeof(hdr), buf, LEN,
		    tags[i]), 0);
		for (int k = 0; k < LEN; k++)
			LC_CHECK(buf[k] == (uint8_t)(i + k));
	}
	for (int i = 0; i < N && first_bad < 0; i++) {
		memcpy(buf, ct[i], LEN);
		if (lc_aead_open(norekey, hdr, sizeof(hdr), buf, LEN,
		    tags[i]) != 0)
			first_bad = i;
	}
	LC_CHECK_EQ_I(first_bad, 5);
	lc_aead_free(tx);
	lc_aead_free(rx);
	lc_aead_free(norekey);
	lc_aead_free(tx0);
}

/* The setting's bounds hold, and a bad value is refused, never ignored. */
LC_TEST(aead_epoch_setting_refused)
{
	static const struct { const char *v; int r; uint64_t want; } c[] = {
		{ "4096", 0, 4096 },
		{ "68719476736", 0, LC_AEAD_EPOCH_BYTES },
		{ "", 0, LC_AEAD_EPOCH_BYTES },
		{ "4095", -LC_ERR_USAGE, LC_AEAD_EPOCH_BYTES },
		{ "68719476737", -LC_ERR_USAGE, LC_AEAD_EPOCH_BYTES },
		{ "64k", -LC_ERR_USAGE, LC_AEAD_EPOCH_BYTES },
		{ "-1", -LC_ERR_USAGE, LC_AEAD_EPOCH_BYTES },
	};
	uint8_t secret[LC_AEAD_SECRET_LEN] = { 1 };
	struct lc_aead *a;
	struct lc_err e;
	uint64_t v;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		lc_err_clear(&e);
		LC_CHECK(setenv("LANECP_AEAD_EPOCH", c[i].v, 1) == 0);
		LC_CHECK_EQ_I(lc_aead_epoch(&v, &e), c[i].r);
		LC_CHECK(v == c[i].want);
		if (c[i].r != 0) {
			LC_CHECK(strstr(e.msg, "LANECP_AEAD_EPOCH=") != NULL);
			LC_CHECK_EQ_I(lc_aead_new(secret, 1, &a), c[i].r);
			LC_CHECK(a == NULL);
		}
	}
	LC_CHECK(unsetenv("LANECP_AEAD_EPOCH") == 0);
	LC_CHECK_EQ_I(lc_aead_epoch(&v, &e), 0);
	LC_CHECK(v == LC_AEAD_EPOCH_BYTES);
}

LC_TEST_MAIN()
