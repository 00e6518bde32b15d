/*
 * The source role alone, driven through lc_source_ops by a test host
 * (role_host.h): SRC_ADD, CONNECT, FILE_READY, SRC_NOMORE, STREAM_LOST
 * and ACK on its control side.  On its data side the test plays the
 * sink: one thread per stream listens on 127.0.0.1, runs the sink's side
 * of the handshake (lc_tls_accept and lc_stream_accept_auth, as sink.c
 * does) and reassembles the frames, or breaks the connection, or answers
 * a reconnect as an impostor that does not know the key.
 */
#define LC_TEST_TIMEOUT 90
#include "role_host.h"

#include "checksum.h"
#include "stream.h"
#include "tls.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#define T_BLOCK 4096u
#define T_STREAMS_MAX 4

struct t_src;

/* The fake sink's side of one stream. */
struct t_lis {
	struct t_src *t;
	uint32_t idx;
	int fd;			/* listening */
	uint16_t port;
	pthread_t th;
	/* behaviour, set before CONNECT */
	uint32_t break_after;	/* first connection: close after n DATA */
	int impostors;		/* reconnects answered without the key;
				   -1: every one */
	/* under t->mu */
	uint32_t conns;		/* accepted connections */
	uint32_t good;		/* ... that passed the handshake */
	uint32_t forged;	/* reconnects answered as an impostor */
	uint64_t forged_bytes;	/* read on those after their handshake */
	int broken;		/* the first connection was broken off */
	int has_last;		/* last whole block on the broken one */
	uint64_t last_off;
	uint64_t first_after;	/* first DATA offset after the reconnect */
	int ended;
	uint32_t idles;		/* IDLE frames received */
	char fail[256];		/* a broken expectation, "" if none */
};

struct t_src {
	struct host h;
	char dir[64];
	char path[128];
	uint64_t size;
	uint32_t flags;
	uint32_t nstreams;
	uint8_t key[LC_KEY_LEN];
	struct lc_tls *tls;	/* server side, when encrypting */
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* stream 0 broke, or stopping */
	int gate;		/* other streams wait for stream 0's break */
	int stopping;
	uint8_t *got;		/* reassembled file */
	uint8_t *have;		/* per block: received */
	uint32_t nblocks;
	uint32_t nhave;
	struct t_lis lis[T_STREAMS_MAX];
};

static uint8_t
t_byte(uint64_t off)
{
	return (uint8_t)(off * 167 + (off >> 12) * 13 + 5);
}

static void
t_lis_fail(struct t_lis *l, const char *msg)
{
	pthread_mutex_lock(&l->t->mu);
	if (l->fail[0] == '\0')
		snprintf(l->fail, sizeof(l->fail), "stream %u: %s", l->idx,
		    msg);
	pthread_mutex_unlock(&l->t->mu);
	host_wake(&l->t->h);
}

/* Read until EOF or error: how many bytes the peer still sent. */
static uint64_t
t_drain(int fd)
{
	uint8_t buf[4096];
	uint64_t total = 0;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += (uint64_t)n;
	return total;
}

/*
 * A reconnect answered by someone who does not know the key: with TLS, a
 * PSK from the wrong key; without, the HMAC exchange with a proof made
 * from the wrong key.  The source must see through it and send nothing
 * more: every byte read after the handshake is counted.
 */
static void
t_impostor(struct t_lis *l, int fd)
{
	uint8_t bad[LC_KEY_LEN], hello[LC_HS_HELLO_LEN];
	uint8_t resp[LC_HS_RESP_LEN], fin[LC_HS_FIN_LEN];
	struct lc_tls *tls = NULL;
	struct lc_conn c;
	struct lc_err e;
	uint64_t n;

	memcpy(bad, l->t->key, sizeof(bad));
	bad[0] ^= 1;
	lc_conn_init(&c, fd);
	(void)lc_sock_set_timeout(fd, 10000);
	lc_err_clear(&e);
	if (l->t->flags & LC_XFER_ENCRYPT) {
		if (lc_tls_new(1, bad, &tls, &e) != 0 ||
		    lc_tls_accept(tls, &c, &e) == 0)
			t_lis_fail(l, "TLS with the wrong key succeeded");
		else
			fprintf(stderr, "impostor: %s\n", e.msg);
	} else {
		memcpy(hello, "LCDS\1\0\0\0", 8);
		memset(hello + 8, 0x5a, LC_HS_NONCE_LEN);
		if (lc_conn_write_all(&c, hello, sizeof(hello), &e) != 0 ||
		    lc_conn_read_full(&c, resp, sizeof(resp), &e) != 0 ||
		    lc_stream_hs_put_fin(bad, hello + 8, resp + 8,
		    lc_peek_u32(resp + 4), fin) != 0 ||
		    lc_conn_write_all(&c, fin, sizeof(fin), &e) != 0)
			t_lis_fail(l, "impostor handshake broke off early");
	}
	n = t_drain(fd);
	pthread_mutex_lock(&l->t->mu);
	l->forged++;
	l->forged_bytes += n;
	pthread_mutex_unlock(&l->t->mu);
	host_wake(&l->t->h);
	lc_conn_close(&c);
	lc_tls_free(tls);
}

/* Frames of one authenticated connection, until END, EOF or the break. */
static void
t_receive(struct t_lis *l, struct lc_conn *c, int first)
{
	struct t_src *t = l->t;
	uint8_t hdr[LC_FRAME_HDR_LEN];
	struct lc_frame fr;
	struct lc_err e;
	uint32_t ndata = 0;
	uint64_t prev = 0;
	int r, any = 0;

	for (;;) {
		lc_err_clear(&e);
		if ((r = lc_conn_read_full(c, hdr, sizeof(hdr), &e)) != 0) {
			fprintf(stderr, "stream %u: %s\n", l->idx, e.msg);
			return;
		}
		if (lc_frame_get(hdr, T_BLOCK, &fr) != 0) {
			t_lis_fail(l, "malformed frame");
			return;
		}
		/* sealed streams: payload-less frames carry a tag too */
		if (fr.type != LC_FRAME_DATA && (r = lc_conn_read_rest(c, hdr,
		    sizeof(hdr), NULL, 0, &e)) != 0) {
			fprintf(stderr, "stream %u: %s\n", l->idx, e.msg);
			return;
		}
		if (fr.type == LC_FRAME_IDLE) {
			pthread_mutex_lock(&t->mu);
			l->idles++;
			pthread_mutex_unlock(&t->mu);
			continue;
		}
		if (fr.type == LC_FRAME_END) {
			pthread_mutex_lock(&t->mu);
			l->ended = 1;
			pthread_mutex_unlock(&t->mu);
			host_wake(&t->h);
			return;
		}
		if (fr.file_id != 1 || fr.offset % T_BLOCK != 0 ||
		    fr.offset + fr.len > t->size ||
		    (fr.len != T_BLOCK && fr.offset + fr.len != t->size)) {
			t_lis_fail(l, "frame outside the file's blocks");
			return;
		}
		if (any && fr.offset <= prev) {
			t_lis_fail(l, "blocks not increasing on a stream");
			return;
		}
		if (first && ndata == l->break_after && l->break_after > 0) {
			/* break off before this block: the last whole one
			 * is prev */
			pthread_mutex_lock(&t->mu);
			l->broken = 1;
			l->has_last = any;
			l->last_off = prev;
			pthread_cond_broadcast(&t->cv);
			pthread_mutex_unlock(&t->mu);
			host_wake(&t->h);
			return;
		}
		pthread_mutex_lock(&t->mu);
		if (!first && !any)
			l->first_after = fr.offset;
		pthread_mutex_unlock(&t->mu);
		lc_err_clear(&e);
		if (lc_conn_read_rest(c, hdr, sizeof(hdr), t->got + fr.offset,
		    fr.len, &e) != 0) {
			fprintf(stderr, "stream %u: %s\n", l->idx, e.msg);
			return;
		}
		pthread_mutex_lock(&t->mu);
		if (!t->have[fr.offset / T_BLOCK]) {
			t->have[fr.offset / T_BLOCK] = 1;
			t->nhave++;
		}
		pthread_mutex_unlock(&t->mu);
		host_wake(&t->h);
		any = 1;
		prev = fr.offset;
		ndata++;
	}
}

static void *
t_lis_main(void *arg)
{
	struct t_lis *l = arg;
	struct t_src *t = l->t;
	struct lc_conn c;
	struct lc_err e;
	int fd, impostor;
	uint32_t n;

	while ((fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		pthread_mutex_lock(&t->mu);
		n = l->conns++;
		impostor = n > 0 && l->impostors != 0;
		if (impostor && l->impostors > 0)
			l->impostors--;
		/*
		 * Hold the other streams in their handshake until stream 0
		 * has broken, so that stream 0 gets the blocks to break on
		 * whatever the scheduling (the source waits for a handshake
		 * up to LC_HANDSHAKE_TIMEOUT_MS).
		 */
		while (t->gate && l->idx != 0 && !t->lis[0].broken &&
		    !t->stopping)
			pthread_cond_wait(&t->cv, &t->mu);
		pthread_mutex_unlock(&t->mu);
		if (impostor) {
			t_impostor(l, fd);
			continue;
		}
		/* the sink's side, as in sink.c's lc_auth_main */
		lc_conn_init(&c, fd);
		(void)lc_sock_set_timeout(fd, 10000);
		lc_err_clear(&e);
		if ((t->tls != NULL && lc_tls_accept(t->tls, &c, &e) != 0) ||
		    lc_stream_accept_auth(&c, t->key, t->nstreams, &e) != 0 ||
		    c.idx != l->idx) {
			fprintf(stderr, "stream %u: handshake: %s\n", l->idx,
			    e.msg);
			pthread_mutex_lock(&t->mu);
			impostor = t->stopping;
			pthread_mutex_unlock(&t->mu);
			if (!impostor)
				t_lis_fail(l, "the source's handshake failed");
			lc_conn_close(&c);
			continue;
		}
		pthread_mutex_lock(&t->mu);
		l->good++;
		pthread_mutex_unlock(&t->mu);
		t_receive(l, &c, n == 0);
		lc_conn_close(&c);
	}
	return NULL;
}

/* A source with one listed file of size bytes. */
static void
t_start(struct t_src *t, uint64_t size, uint32_t streams, uint32_t flags)
{
	struct lc_msg_src_listed sl;
	struct lc_msg_src_add add;
	struct lc_msg_src_credit credit = { .upto = 2 };
	struct lc_msg_file f;
	struct lc_err e;
	uint8_t buf[T_BLOCK];
	size_t n;
	int fd;

	memset(t, 0, sizeof(*t));
	LC_CHECK(streams <= T_STREAMS_MAX);
	host_tmpdir(t->dir, sizeof(t->dir), "role-src");
	snprintf(t->path, sizeof(t->path), "%s/src.bin", t->dir);
	LC_CHECK((fd = open(t->path, O_WRONLY | O_CREAT | O_EXCL, 0604)) >= 0);
	for (uint64_t off = 0; off < size; off += sizeof(buf)) {
		size_t k = size - off < sizeof(buf) ? (size_t)(size - off) :
		    sizeof(buf);
		for (size_t i = 0; i < k; i++)
			buf[i] = t_byte(off + i);
		LC_CHECK(write(fd, buf, k) == (ssize_t)k);
	}
	close(fd);
	t->size = size;
	t->flags = flags;
	t->nstreams = streams;
	t->nblocks = (uint32_t)((size + T_BLOCK - 1) / T_BLOCK);
	LC_CHECK((t->got = calloc(1, size + 1)) != NULL);
	LC_CHECK((t->have = calloc(1, t->nblocks + 1)) != NULL);
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	for (size_t i = 0; i < sizeof(t->key); i++)
		t->key[i] = (uint8_t)(i * 53 + 3);
	if (flags & LC_XFER_ENCRYPT) {
		lc_err_clear(&e);
		LC_CHECK(lc_tls_new(1, t->key, &t->tls, &e) == 0);
	}
	host_init(&t->h, &lc_source_ops);

	memset(&add, 0, sizeof(add));
	snprintf(add.path, sizeof(add.path), "%s", t->path);
	host_send(&t->h, lc_msg_put_src_add, &add);
	host_send(&t->h, lc_msg_put_src_credit, &credit);
	host_wait_msg(&t->h, LC_MSG_FILE, &n);
	LC_CHECK(lc_msg_get_file(host_payload, n, &f) == 0);
	LC_CHECK_EQ_U(f.id, 1);
	LC_CHECK_EQ_U(f.kind, LC_KIND_REG);
	LC_CHECK_EQ_U(f.size, size);
	LC_CHECK_EQ_U(f.mode, 0604);
	LC_CHECK_STR(f.name, "src.bin");
	host_wait_msg(&t->h, LC_MSG_SRC_LISTED, &n);
	LC_CHECK(lc_msg_get_src_listed(host_payload, n, &sl) == 0);
	LC_CHECK_EQ_U(sl.files, 1);
	LC_CHECK_EQ_U(sl.bytes, size);

	for (uint32_t i = 0; i < streams; i++) {
		struct t_lis *l = &t->lis[i];
		l->t = t;
		l->idx = i;
		lc_err_clear(&e);
		LC_CHECK(lc_sock_listen(0, 0, &l->fd, &l->port, &e) == 0);
	}
}

/* CONNECT to the listeners; CONNECTED; FILE_READY; SRC_NOMORE. */
static void
t_connect(struct t_src *t)
{
	struct lc_msg_file_ready rd;
	struct lc_msg_connected cd;
	struct lc_msg_connect c;
	size_t n;

	for (uint32_t i = 0; i < t->nstreams; i++)
		LC_CHECK(pthread_create(&t->lis[i].th, NULL, t_lis_main,
		    &t->lis[i]) == 0);
	memset(&c, 0, sizeof(c));
	snprintf(c.addr, sizeof(c.addr), "127.0.0.1");
	c.streams = t->nstreams;
	c.block = T_BLOCK;
	c.flags = t->flags;
	memcpy(c.key, t->key, sizeof(c.key));
	for (uint32_t i = 0; i < t->nstreams; i++)
		c.ports[i] = t->lis[i].port;
	host_send(&t->h, lc_msg_put_connect, &c);
	/* the source takes FILE_READY as soon as it has CONNECT: with the
	 * gate closed, CONNECTED only comes after stream 0's break */
	memset(&rd, 0, sizeof(rd));
	rd.id = 1;
	host_send(&t->h, lc_msg_put_file_ready, &rd);
	host_send(&t->h, lc_msg_put_empty, LC_MSG_SRC_NOMORE);
	if (!t->gate) {
		host_wait_msg(&t->h, LC_MSG_CONNECTED, &n);
		LC_CHECK(lc_msg_get_connected(host_payload, n, &cd) == 0);
		LC_CHECK_EQ_U(cd.streams, t->nstreams);
	}
}

/* Gated: CONNECTED once every stream is up, after the break. */
static void
t_connected(struct t_src *t)
{
	struct lc_msg_connected cd;
	size_t n;

	host_wait_msg(&t->h, LC_MSG_CONNECTED, &n);
	LC_CHECK(lc_msg_get_connected(host_payload, n, &cd) == 0);
	LC_CHECK_EQ_U(cd.streams, t->nstreams);
}

static void
t_stop(struct t_src *t)
{
	pthread_mutex_lock(&t->mu);
	t->stopping = 1;
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->mu);
	host_free_role(&t->h);	/* joins the senders, closes their streams */
	for (uint32_t i = 0; i < t->nstreams; i++) {
		(void)shutdown(t->lis[i].fd, SHUT_RDWR);	/* wakes accept */
		if (t->lis[i].th != 0)
			LC_CHECK(pthread_join(t->lis[i].th, NULL) == 0);
		close(t->lis[i].fd);
	}
	host_fini(&t->h);	/* the listeners used host_wake() */
	for (uint32_t i = 0; i < t->nstreams; i++) {
		if (t->lis[i].fail[0] != '\0')
			fprintf(stderr, "%s\n", t->lis[i].fail);
		LC_CHECK(t->lis[i].fail[0] == '\0');
	}
	lc_tls_free(t->tls);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	free(t->got);
	free(t->have);
	host_rmdir(t->dir);
}

static int
t_all_blocks(void *arg)
{
	struct t_src *t = arg;
	int r;

	pthread_mutex_lock(&t->mu);
	r = t->nhave == t->nblocks;
	for (uint32_t i = 0; i < t->nstreams; i++)
		if (t->lis[i].fail[0] != '\0')
			r = 1;	/* stop waiting: t_stop reports it */
	pthread_mutex_unlock(&t->mu);
	return r;
}

static int
t_all_ended(void *arg)
{
	struct t_src *t = arg;
	int r = 1;

	pthread_mutex_lock(&t->mu);
	for (uint32_t i = 0; i < t->nstreams; i++)
		if (!t->lis[i].ended)
			r = 0;
	pthread_mutex_unlock(&t->mu);
	return r;
}

static int
t_broken(void *arg)
{
	struct t_lis *l = arg;
	int r;

	pthread_mutex_lock(&l->t->mu);
	r = l->broken || l->fail[0] != '\0';
	pthread_mutex_unlock(&l->t->mu);
	return r;
}

/* Everything arrived: ACK it all, expect END everywhere and SRC_DONE. */
static void
t_finish(struct t_src *t, uint64_t min_bytes)
{
	struct lc_msg_xfer_done d;
	struct lc_msg_ack ack;
	size_t n;

	host_wait_for(&t->h, t_all_blocks, t, "all blocks");
	pthread_mutex_lock(&t->mu);
	for (uint32_t i = 0; i < t->nstreams; i++) {
		if (t->lis[i].fail[0] != '\0')
			fprintf(stderr, "%s\n", t->lis[i].fail);
		LC_CHECK(t->lis[i].fail[0] == '\0');
	}
	pthread_mutex_unlock(&t->mu);
	for (uint64_t off = 0; off < t->size; off++)
		if (t->got[off] != t_byte(off)) {
			fprintf(stderr, "byte %llu differs\n",
			    (unsigned long long)off);
			LC_CHECK(t->got[off] == t_byte(off));
		}
	/* the sink's low-water mark, as the controller forwards it */
	ack.file = 1;
	ack.written = t->size;
	host_send(&t->h, lc_msg_put_ack, &ack);
	host_wait_msg(&t->h, LC_MSG_SRC_DONE, &n);
	LC_CHECK(lc_msg_get_xfer_done(host_payload, n, &d) == 0);
	LC_CHECK_EQ_U(d.files, 1);
	LC_CHECK(d.bytes >= min_bytes);
	fprintf(stderr, "SRC_DONE: %llu bytes sent for %llu\n",
	    (unsigned long long)d.bytes, (unsigned long long)t->size);
	/* END was written before SRC_DONE; it may still be on its way */
	host_wait_for(&t->h, t_all_ended, t, "END on every stream");
	LC_CHECK(!t->h.failed);
}

static void
t_copy(uint32_t flags)
{
	struct t_src t;

	t_start(&t, 37 * T_BLOCK + 1000, 3, flags);
	t_connect(&t);
	t_finish(&t, t.size);
	for (uint32_t i = 0; i < t.nstreams; i++)
		LC_CHECK_EQ_U(t.lis[i].good, 1);
	t_stop(&t);
}

LC_TEST(source_copy_plain)
{
	t_copy(0);
}

LC_TEST(source_copy_tls)
{
	t_copy(LC_XFER_ENCRYPT);
}

/*
 * The sink's mark moves through the file in steps (an ACK per block
 * written, some twice, some passing nothing new): each releases the
 * prefix of each stream's kept blocks below it (source_send.c), and the
 * last one everything, so SRC_DONE comes.
 */
LC_TEST(source_copy_acks_in_steps)
{
	struct lc_msg_ack ack;
	struct t_src t;

	t_start(&t, 37 * T_BLOCK + 1000, 3, 0);
	t_connect(&t);
	host_wait_for(&t.h, t_all_blocks, &t, "all blocks");
	for (uint64_t k = 0; k <= 37; k++) {
		ack.file = 1;
		ack.written = k * T_BLOCK + (k % 3 == 0 ? 100 : 0);
		host_send(&t.h, lc_msg_put_ack, &ack);
		if (k % 5 == 0)	/* the same mark again: nothing to release */
			host_send(&t.h, lc_msg_put_ack, &ack);
	}
	t_finish(&t, t.size);
	t_stop(&t);
}

/* An empty file still ends with SRC_DONE (nothing to send). */
LC_TEST(source_copy_empty_file)
{
	struct t_src t;

	t_start(&t, 0, 2, 0);
	t_connect(&t);
	t_finish(&t, 0);
	t_stop(&t);
}

/*
 * Stream 0 is broken off by the sink after 3 blocks (the rest of what the
 * source wrote on it is never read).  The sink says STREAM_LOST with the
 * last whole block; the source reconnects on the same port, first
 * answered by `impostors` parties that cannot prove the key (each must
 * get no byte after its handshake), and resends what followed the last
 * block.
 */
static void
t_lost(uint32_t flags, int impostors)
{
	struct lc_msg_stream_lost m;
	struct t_lis *l;
	struct t_src t;

	t_start(&t, 200 * T_BLOCK + 77, 2, flags);
	l = &t.lis[0];
	l->break_after = 3;
	l->impostors = impostors;
	t.gate = 1;
	t_connect(&t);
	host_wait_for(&t.h, t_broken, l, "the break");
	pthread_mutex_lock(&t.mu);
	LC_CHECK(l->fail[0] == '\0');
	pthread_mutex_unlock(&t.mu);
	memset(&m, 0, sizeof(m));
	m.stream = 0;
	m.has_last = (uint8_t)l->has_last;
	m.last_file = 1;
	m.last_off = l->last_off;
	snprintf(m.reason, sizeof(m.reason), "test: broken off");
	host_send(&t.h, lc_msg_put_stream_lost, &m);
	t_connected(&t);
	t_finish(&t, t.size);
	pthread_mutex_lock(&t.mu);
	fprintf(stderr, "stream 0: %u connections, %u good, %u impostors, "
	    "last %llu, first after %llu\n", l->conns, l->good, l->forged,
	    (unsigned long long)l->last_off,
	    (unsigned long long)l->first_after);
	LC_CHECK_EQ_U(l->good, 2);
	LC_CHECK_EQ_U(l->forged, (uint32_t)impostors);
	LC_CHECK_EQ_U(l->forged_bytes, 0);
	/* gated, stream 0 had every block in turn: the resend starts with
	 * the very block after the sink's last */
	LC_CHECK_EQ_U(l->first_after, l->last_off + T_BLOCK);
	pthread_mutex_unlock(&t.mu);
	t_stop(&t);
}

LC_TEST(source_reconnect_plain)
{
	t_lost(0, 0);
}

LC_TEST(source_reconnect_tls)
{
	t_lost(LC_XFER_ENCRYPT, 0);
}

LC_TEST(source_reconnect_impostor_plain)
{
	t_lost(0, 2);
}

LC_TEST(source_reconnect_impostor_tls)
{
	t_lost(LC_XFER_ENCRYPT, 2);
}

/*
 * Every reconnect meets an impostor: the source gives up after its bound
 * (12 breaks and attempts per stream) with a STREAM error, and none of
 * the attempts carried a byte after its handshake.
 */
static void
t_give_up(uint32_t flags)
{
	struct lc_msg_stream_lost m;
	struct t_lis *l;
	struct t_src t;

	t_start(&t, 200 * T_BLOCK, 2, flags);
	l = &t.lis[0];
	l->break_after = 2;
	l->impostors = -1;
	t.gate = 1;
	t_connect(&t);
	host_wait_for(&t.h, t_broken, l, "the break");
	memset(&m, 0, sizeof(m));
	m.stream = 0;
	m.has_last = (uint8_t)l->has_last;
	m.last_file = 1;
	m.last_off = l->last_off;
	host_send(&t.h, lc_msg_put_stream_lost, &m);
	host_wait_failed(&t.h, LC_ERR_STREAM);
	LC_CHECK(strstr(t.h.err.msg, "reconnect failed") != NULL);
	pthread_mutex_lock(&t.mu);
	fprintf(stderr, "stream 0: %u impostors, %llu bytes after them\n",
	    l->forged, (unsigned long long)l->forged_bytes);
	LC_CHECK(l->forged >= 1 && l->forged <= 12);
	LC_CHECK_EQ_U(l->forged_bytes, 0);
	LC_CHECK_EQ_U(l->good, 1);
	pthread_mutex_unlock(&t.mu);
	t_stop(&t);
}

LC_TEST(source_reconnect_gives_up_plain)
{
	t_give_up(0);
}

LC_TEST(source_reconnect_gives_up_tls)
{
	t_give_up(LC_XFER_ENCRYPT);
}

/* ---- a fed request (LC_ADD_FED, SRC_ENTRY) ---- */

struct t_fed {
	struct host h;
	char dir[64];
	char root[128];
};

static void
t_fed_file(struct t_fed *t, const char *name, const char *text)
{
	char p[256];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", t->dir, name);
	LC_CHECK((fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644)) >= 0);
	LC_CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
}

static void
t_fed_mkdir(struct t_fed *t, const char *name)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", t->dir, name);
	LC_CHECK(mkdir(p, 0755) == 0);
}

/* dir/{a, b/{x}, c -> a, d/{e}, skip/{f}} in a new host's temp dir */
static void
t_fed_start(struct t_fed *t)
{
	char p[256];

	memset(t, 0, sizeof(*t));
	host_tmpdir(t->dir, sizeof(t->dir), "role-fed");
	snprintf(t->root, sizeof(t->root), "%s/dir", t->dir);
	t_fed_mkdir(t, "dir");
	t_fed_file(t, "dir/a", "abc");
	t_fed_mkdir(t, "dir/b");
	t_fed_file(t, "dir/b/x", "x");
	snprintf(p, sizeof(p), "%s/dir/c", t->dir);
	LC_CHECK(symlink("a", p) == 0);
	t_fed_mkdir(t, "dir/d");
	t_fed_file(t, "dir/d/e", "12345");
	t_fed_mkdir(t, "dir/skip");
	t_fed_file(t, "dir/skip/f", "");
	host_init(&t->h, &lc_source_ops);
}

static void
t_fed_stop(struct t_fed *t)
{
	host_free_role(&t->h);
	host_fini(&t->h);
	host_rmdir(t->dir);
}

static void
t_fed_add(struct t_fed *t, uint32_t flags, const char *path, int *r)
{
	struct lc_msg_src_add add;

	memset(&add, 0, sizeof(add));
	add.flags = flags;
	snprintf(add.path, sizeof(add.path), "%s", path);
	host_send_r(&t->h, r, lc_msg_put_src_add, &add);
}

static void
t_fed_credit(struct t_fed *t, uint32_t upto)
{
	struct lc_msg_src_credit c = { .upto = upto };

	host_send(&t->h, lc_msg_put_src_credit, &c);
}

/* SRC_ENTRY name ("" with END); the handler's result. */
static int
t_fed_entry(struct t_fed *t, const char *name)
{
	struct lc_msg_src_entry m;
	int r;

	memset(&m, 0, sizeof(m));
	m.flags = name[0] == '\0' ? LC_ENTRY_END : 0;
	snprintf(m.name, sizeof(m.name), "%s", name);
	host_send_r(&t->h, &r, lc_msg_put_src_entry, &m);
	return r;
}

/*
 * The messages the source wrote so far, one line each: "FILE id kind
 * name size [-> link]", "FAIL name | msg", "LISTED files bytes".
 */
static void
t_fed_out(struct t_fed *t, const char *want)
{
	char got[4096] = "";
	size_t len = 0, n;
	uint8_t type;
	union lc_msg_any m;

	while (host_next_msg(&t->h, &type, host_payload, sizeof(host_payload),
	    &n)) {
		if (type == LC_MSG_PROGRESS)
			continue;
		LC_CHECK(lc_msg_get(type, host_payload, n, &m) == 0);
		if (type == LC_MSG_FILE)
			len += (size_t)snprintf(got + len, sizeof(got) - len,
			    "FILE %u %u %s %llu%s%s\n", m.file.id,
			    m.file.kind, m.file.name,
			    (unsigned long long)m.file.size,
			    m.file.link[0] != '\0' ? " -> " : "", m.file.link);
		else if (type == LC_MSG_FILE_FAIL)
			len += (size_t)snprintf(got + len, sizeof(got) - len,
			    "FAIL %s | %s\n", m.file_fail.name,
			    strstr(m.file_fail.msg, "dir/"));
		else if (type == LC_MSG_SRC_LISTED)
			len += (size_t)snprintf(got + len, sizeof(got) - len,
			    "LISTED %u %llu\n", m.src_listed.files,
			    (unsigned long long)m.src_listed.bytes);
		else
			len += (size_t)snprintf(got + len, sizeof(got) - len,
			    "%s\n", lc_msg_name(type));
		LC_CHECK(len < sizeof(got));
	}
	LC_CHECK_STR(got, want);
}

/*
 * The root, then exactly the entries named, in the order named, as far
 * as the credit reaches; nothing below a directory named; a missing one
 * fails; an excluded one (or one below an excluded directory) is left
 * out; SRC_LISTED after the end, counting what was announced.
 */
LC_TEST(source_fed_request)
{
	struct lc_msg_src_filter flt;
	struct t_fed t;
	int r;

	t_fed_start(&t);
	memset(&flt, 0, sizeof(flt));
	flt.kind = LC_FILTER_EXCLUDE;
	snprintf(flt.pattern, sizeof(flt.pattern), "skip");
	host_send(&t.h, lc_msg_put_src_filter, &flt);
	t_fed_credit(&t, 3);	/* ids 1 and 2 */
	t_fed_add(&t, LC_ADD_FED | LC_ADD_RECURSIVE, t.root, &r);
	LC_CHECK_EQ_I(r, 0);
	t_fed_out(&t, "FILE 1 2 dir 0\n");
	LC_CHECK_EQ_I(t_fed_entry(&t, "dir/d/e"), 0);
	t_fed_out(&t, "FILE 2 1 dir/d/e 5\n");
	LC_CHECK_EQ_I(t_fed_entry(&t, "dir/b"), 0);
	LC_CHECK_EQ_I(t_fed_entry(&t, "dir/skip/f"), 0);
	LC_CHECK_EQ_I(t_fed_entry(&t, "dir/missing"), 0);
	LC_CHECK_EQ_I(t_fed_entry(&t, "dir/c"), 0);
	t_fed_out(&t, "");	/* no credit */
	t_fed_credit(&t, 100);
	t_fed_out(&t,
	    "FILE 3 2 dir/b 0\n"
	    "FAIL dir/missing | dir/missing: No such file or directory\n"
	    "FILE 4 3 dir/c 0 -> a\n");
	LC_CHECK_EQ_I(t_fed_entry(&t, "dir/a"), 0);
	LC_CHECK_EQ_I(t_fed_entry(&t, "dir/skip"), 0);
	t_fed_out(&t, "FILE 5 1 dir/a 3\n");
	LC_CHECK_EQ_I(t_fed_entry(&t, ""), 0);
	t_fed_out(&t, "LISTED 5 8\n");
	/* the request is over: no name, no second end */
	LC_CHECK(t_fed_entry(&t, "dir/a") != 0);
	LC_CHECK_EQ_U(t.h.err.code, LC_ERR_PROTO);
	LC_CHECK(strstr(t.h.err.msg, "SRC_ENTRY after the end") != NULL);
	t_fed_stop(&t);

	/* a contents request: no root entry, names below it; the end
	   before the credit: SRC_LISTED only once all is announced */
	t_fed_start(&t);
	t_fed_add(&t, LC_ADD_FED | LC_ADD_RECURSIVE | LC_ADD_CONTENTS,
	    t.root, &r);
	LC_CHECK_EQ_I(r, 0);
	LC_CHECK_EQ_I(t_fed_entry(&t, "b/x"), 0);
	LC_CHECK_EQ_I(t_fed_entry(&t, ""), 0);
	LC_CHECK(t_fed_entry(&t, "a") != 0);	/* a name after the end */
	LC_CHECK_EQ_U(t.h.err.code, LC_ERR_PROTO);
	t.h.failed = 0;
	t_fed_out(&t, "");
	t_fed_credit(&t, 2);
	t_fed_out(&t, "FILE 1 1 b/x 1\nLISTED 1 1\n");
	t_fed_stop(&t);
}

/* SRC_ENTRY without a fed request, or one that names no entry below it. */
LC_TEST(source_fed_entry_refused)
{
	struct t_fed t;
	int r;

	t_fed_start(&t);
	LC_CHECK(t_fed_entry(&t, "dir/a") != 0);
	LC_CHECK_EQ_U(t.h.err.code, LC_ERR_PROTO);
	LC_CHECK(strstr(t.h.err.msg, "without a fed request") != NULL);
	t_fed_stop(&t);

	t_fed_start(&t);	/* a request, not fed */
	t_fed_add(&t, LC_ADD_RECURSIVE, t.root, &r);
	LC_CHECK_EQ_I(r, 0);
	LC_CHECK(t_fed_entry(&t, "") != 0);
	LC_CHECK_EQ_U(t.h.err.code, LC_ERR_PROTO);
	t_fed_stop(&t);

	t_fed_start(&t);	/* not below the root */
	t_fed_add(&t, LC_ADD_FED | LC_ADD_RECURSIVE, t.root, &r);
	LC_CHECK_EQ_I(r, 0);
	LC_CHECK(t_fed_entry(&t, "other/a") != 0);
	LC_CHECK_EQ_U(t.h.err.code, LC_ERR_PROTO);
	LC_CHECK(strstr(t.h.err.msg, "not a name below") != NULL);
	t_fed_stop(&t);
}

/* A fed request is the only one, recursive, without -L or --shard. */
LC_TEST(source_fed_only_request)
{
	static const uint32_t bad[] = { LC_ADD_FED,
		LC_ADD_FED | LC_ADD_RECURSIVE | LC_ADD_FOLLOW,
		LC_ADD_FED | LC_ADD_STDIN, LC_ADD_FED | LC_ADD_RECURSIVE |
		LC_ADD_PROGRAM };
	struct lc_msg_src_filter flt;
	struct t_fed t;
	int r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		t_fed_start(&t);
		t_fed_add(&t, bad[i], t.root, &r);
		LC_CHECK(r != 0);
		LC_CHECK_EQ_U(t.h.err.code, LC_ERR_PROTO);
		t_fed_stop(&t);
	}
	t_fed_start(&t);	/* after another request */
	t_fed_add(&t, LC_ADD_RECURSIVE, t.root, &r);
	LC_CHECK_EQ_I(r, 0);
	t_fed_add(&t, LC_ADD_FED | LC_ADD_RECURSIVE, t.root, &r);
	LC_CHECK(r != 0);
	LC_CHECK_EQ_U(t.h.err.code, LC_ERR_PROTO);
	t_fed_stop(&t);

	t_fed_start(&t);	/* another after it */
	t_fed_add(&t, LC_ADD_FED | LC_ADD_RECURSIVE, t.root, &r);
	LC_CHECK_EQ_I(r, 0);
	t_fed_add(&t, LC_ADD_RECURSIVE, t.root, &r);
	LC_CHECK(r != 0);
	LC_CHECK_EQ_U(t.h.err.code, LC_ERR_PROTO);
	LC_CHECK(strstr(t.h.err.msg, "only request") != NULL);
	t_fed_stop(&t);

	t_fed_start(&t);	/* sharded */
	memset(&flt, 0, sizeof(flt));
	flt.kind = LC_FILTER_SHARD;
	snprintf(flt.pattern, sizeof(flt.pattern), "1/2");
	host_send(&t.h, lc_msg_put_src_filter, &flt);
	t_fed_add(&t, LC_ADD_FED | LC_ADD_RECURSIVE, t.root, &r);
	LC_CHECK(r != 0);
	LC_CHECK_EQ_U(t.h.err.code, LC_ERR_PROTO);
	t_fed_stop(&t);
}

/*
 * Names held not yet announced are bounded: LC_FED_QUEUE_MAX of them (the
 * one resolved and waiting for credit among them), not one more.
 */
LC_TEST(source_fed_queue_bound)
{
	struct t_fed t;
	int r;

	t_fed_start(&t);
	t_fed_credit(&t, 2);	/* the root only */
	t_fed_add(&t, LC_ADD_FED | LC_ADD_RECURSIVE, t.root, &r);
	LC_CHECK_EQ_I(r, 0);
	t_fed_out(&t, "FILE 1 2 dir 0\n");
	for (uint32_t i = 0; i < LC_FED_QUEUE_MAX; i++)
		LC_CHECK_EQ_I(t_fed_entry(&t, "dir/a"), 0);
	LC_CHECK(t_fed_entry(&t, "dir/a") != 0);
	LC_CHECK_EQ_U(t.h.err.code, LC_ERR_PROTO);
	LC_CHECK(strstr(t.h.err.msg, "8192") != NULL);
	t.h.failed = 0;
	/* one announced makes room for one more */
	t_fed_credit(&t, 3);
	t_fed_out(&t, "FILE 2 1 dir/a 3\n");
	LC_CHECK_EQ_I(t_fed_entry(&t, "dir/a"), 0);
	LC_CHECK(t_fed_entry(&t, "dir/a") != 0);
	t_fed_stop(&t);
}

/* ---- following a part file (SRC_PART, SRC_AVAIL; issue 25) ---- */

/* SRC_PART name size; the handler's result. */
static int
t_fed_part(struct t_fed *t, const char *name, uint64_t size)
{
	struct lc_msg_src_part m;
	int r;

	memset(&m, 0, sizeof(m));
	m.size = size;
	snprintf(m.name, sizeof(m.name), "%s", name);
	host_send_r(&t->h, &r, lc_msg_put_src_part, &m);
	return r;
}

/* SRC_AVAIL id avail; the handler's result. */
static int
t_avail(struct host *h, uint32_t id, uint64_t avail)
{
	struct lc_msg_src_avail m;
	int r;

	memset(&m, 0, sizeof(m));
	m.id = id;
	m.avail = avail;
	host_send_r(h, &r, lc_msg_put_src_avail, &m);
	return r;
}

/*
 * SRC_PART reads the part file while there is one (announced with the
 * size given, not its length); without one the final name as SRC_ENTRY
 * would (complete: its own size, SRC_AVAIL for it ignored); a symlink or
 * a directory as the part file fails the entry.  SRC_AVAIL: only for an
 * id announced from SRC_PART, never back, never past the size.
 */
LC_TEST(source_fed_part_entries)
{
	char p[256];
	struct lc_msg_file_skip sk;
	struct t_fed t;
	int r;

	t_fed_start(&t);
	t_fed_file(&t, "dir/.a.lanecp-part", "ab");	/* a is being written */
	snprintf(p, sizeof(p), "%s/dir/b/.x.lanecp-part", t.dir);
	LC_CHECK(symlink("../a", p) == 0);
	t_fed_mkdir(&t, "dir/d/.e.lanecp-part");
	t_fed_credit(&t, 100);
	t_fed_add(&t, LC_ADD_FED | LC_ADD_RECURSIVE, t.root, &r);
	LC_CHECK_EQ_I(r, 0);
	t_fed_out(&t, "FILE 1 2 dir 0\n");
	LC_CHECK_EQ_I(t_fed_part(&t, "dir/a", 5000), 0);
	t_fed_out(&t, "FILE 2 1 dir/a 5000\n");
	LC_CHECK_EQ_I(t_fed_part(&t, "dir/b/x", 10), 0);
	t_fed_out(&t, "FAIL dir/b/x | dir/b/x: its part file .x.lanecp-part "
	    "is a symlink\n");
	LC_CHECK_EQ_I(t_fed_part(&t, "dir/d/e", 10), 0);
	t_fed_out(&t, "FAIL dir/d/e | dir/d/e: .e.lanecp-part is not a "
	    "regular file\n");
	/* no part file: the final name, complete, its own size */
	LC_CHECK_EQ_I(t_fed_part(&t, "dir/skip/f", 99), 0);
	t_fed_out(&t, "FILE 3 1 dir/skip/f 0\n");
	LC_CHECK_EQ_I(t_fed_part(&t, "dir/missing", 99), 0);
	t_fed_out(&t, "FAIL dir/missing | dir/missing: No such file or "
	    "directory\n");
	LC_CHECK_EQ_I(t_fed_entry(&t, "dir/d/e"), 0);
	t_fed_out(&t, "FILE 4 1 dir/d/e 5\n");
	LC_CHECK_EQ_I(t_fed_entry(&t, "dir/b/x"), 0);
	t_fed_out(&t, "FILE 5 1 dir/b/x 1\n");

	/* the followed file: up, the same again, to its size */
	LC_CHECK_EQ_I(t_avail(&t.h, 2, 0), 0);
	LC_CHECK_EQ_I(t_avail(&t.h, 2, 2), 0);
	LC_CHECK_EQ_I(t_avail(&t.h, 2, 2), 0);
	LC_CHECK_EQ_I(t_avail(&t.h, 2, 4096), 0);
	/* read whole (no part file): ignored, whatever the value */
	LC_CHECK_EQ_I(t_avail(&t.h, 3, 12345), 0);
	LC_CHECK_EQ_I(t_avail(&t.h, 3, 0), 0);
	LC_CHECK(!t.h.failed);
	LC_CHECK(t_avail(&t.h, 2, 100) != 0);	/* back */
	LC_CHECK_EQ_U(t.h.err.code, LC_ERR_PROTO);
	LC_CHECK(strstr(t.h.err.msg, "100 after 4096") != NULL);
	t.h.failed = 0;
	LC_CHECK(t_avail(&t.h, 2, 5001) != 0);	/* past the size */
	LC_CHECK_EQ_U(t.h.err.code, LC_ERR_PROTO);
	LC_CHECK(strstr(t.h.err.msg, "past its size 5000") != NULL);
	t.h.failed = 0;
	LC_CHECK(t_avail(&t.h, 4, 1) != 0);	/* from SRC_ENTRY */
	LC_CHECK_EQ_U(t.h.err.code, LC_ERR_PROTO);
	LC_CHECK(strstr(t.h.err.msg, "SRC_AVAIL for file 4, not followed") !=
	    NULL);
	t.h.failed = 0;
	LC_CHECK(t_avail(&t.h, 1, 0) != 0);	/* the root directory */
	LC_CHECK_EQ_U(t.h.err.code, LC_ERR_PROTO);
	t.h.failed = 0;
	LC_CHECK(t_avail(&t.h, 6, 1) != 0);	/* never announced */
	LC_CHECK(strstr(t.h.err.msg, "file 6, not followed") != NULL);
	t.h.failed = 0;
	LC_CHECK(t_avail(&t.h, 70000, 1) != 0);
	LC_CHECK(strstr(t.h.err.msg, "not followed") != NULL);
	t.h.failed = 0;
	/* done with (the sink leaves it): a late one is ignored */
	memset(&sk, 0, sizeof(sk));
	sk.id = 2;
	sk.why = LC_SKIP_EXISTS;
	host_send(&t.h, lc_msg_put_file_skip, &sk);
	LC_CHECK_EQ_I(t_avail(&t.h, 2, 5000), 0);
	LC_CHECK_EQ_I(t_avail(&t.h, 2, 1), 0);
	/* the end; after it, no SRC_PART */
	LC_CHECK_EQ_I(t_fed_entry(&t, ""), 0);
	t_fed_out(&t, "LISTED 5 5006\n");
	LC_CHECK(t_fed_part(&t, "dir/a", 3) != 0);
	LC_CHECK_EQ_U(t.h.err.code, LC_ERR_PROTO);
	LC_CHECK(strstr(t.h.err.msg, "SRC_PART after the end") != NULL);
	t_fed_stop(&t);

	/* without a fed request; a name not below the root */
	t_fed_start(&t);
	LC_CHECK(t_fed_part(&t, "dir/a", 3) != 0);
	LC_CHECK_EQ_U(t.h.err.code, LC_ERR_PROTO);
	LC_CHECK(strstr(t.h.err.msg, "SRC_PART without a fed request") !=
	    NULL);
	t.h.failed = 0;
	LC_CHECK(t_avail(&t.h, 1, 0) != 0);
	LC_CHECK(strstr(t.h.err.msg, "not followed") != NULL);
	t_fed_stop(&t);
	t_fed_start(&t);
	t_fed_add(&t, LC_ADD_RECURSIVE, t.root, &r);
	LC_CHECK_EQ_I(r, 0);
	LC_CHECK(t_fed_part(&t, "dir/a", 3) != 0);
	LC_CHECK(strstr(t.h.err.msg, "SRC_PART without a fed request") !=
	    NULL);
	t_fed_stop(&t);
	t_fed_start(&t);
	t_fed_add(&t, LC_ADD_FED | LC_ADD_RECURSIVE, t.root, &r);
	LC_CHECK_EQ_I(r, 0);
	LC_CHECK(t_fed_part(&t, "other/a", 3) != 0);
	LC_CHECK(strstr(t.h.err.msg, "SRC_PART: ") != NULL);
	LC_CHECK(strstr(t.h.err.msg, "not a name below") != NULL);
	t_fed_stop(&t);
}

/* SRC_PART counts in the bound on names held, as SRC_ENTRY does. */
LC_TEST(source_fed_part_queue_bound)
{
	struct t_fed t;
	int r;

	t_fed_start(&t);
	t_fed_credit(&t, 2);	/* the root only */
	t_fed_add(&t, LC_ADD_FED | LC_ADD_RECURSIVE, t.root, &r);
	LC_CHECK_EQ_I(r, 0);
	t_fed_out(&t, "FILE 1 2 dir 0\n");
	for (uint32_t i = 0; i < LC_FED_QUEUE_MAX; i++)
		LC_CHECK_EQ_I(i % 2 ? t_fed_entry(&t, "dir/a") :
		    t_fed_part(&t, "dir/a", 7), 0);
	LC_CHECK(t_fed_part(&t, "dir/a", 7) != 0);
	LC_CHECK_EQ_U(t.h.err.code, LC_ERR_PROTO);
	LC_CHECK(strstr(t.h.err.msg, "SRC_PART: more than 8192") != NULL);
	t_fed_stop(&t);
}

/* The fake sink's file, as t_start's: the part file being written. */
static void
t_part_write(struct t_src *t, uint64_t from, uint64_t to)
{
	uint8_t buf[T_BLOCK];
	int fd;

	LC_CHECK((fd = open(t->path, O_WRONLY)) >= 0);
	for (uint64_t off = from; off < to; off += sizeof(buf)) {
		size_t k = to - off < sizeof(buf) ? (size_t)(to - off) :
		    sizeof(buf);
		for (size_t i = 0; i < k; i++)
			buf[i] = t_byte(off + i);
		LC_CHECK(pwrite(fd, buf, k, (off_t)off) == (ssize_t)k);
	}
	close(fd);
}

struct t_have {
	struct t_src *t;
	uint32_t n;
};

static int
t_have_n(void *arg)
{
	struct t_have *w = arg;
	int r;

	pthread_mutex_lock(&w->t->mu);
	r = w->t->nhave >= w->n || w->t->lis[0].fail[0] != '\0';
	pthread_mutex_unlock(&w->t->mu);
	return r;
}

/* Blocks received: exactly n, after a while for more to come. */
static void
t_have_exactly(struct t_src *t, uint32_t n)
{
	struct t_have w = { t, n };
	uint64_t until;

	host_wait_for(&t->h, t_have_n, &w, "blocks");
	until = lc_now_ms() + 1500;	/* a little over an IDLE's second */
	while (lc_now_ms() < until)
		(void)host_pump_until(&t->h, until);
	pthread_mutex_lock(&t->mu);
	LC_CHECK(t->lis[0].fail[0] == '\0');
	LC_CHECK_EQ_U(t->nhave, n);
	for (uint32_t i = 0; i < t->nblocks; i++)
		LC_CHECK_EQ_I(t->have[i], i < n);
	pthread_mutex_unlock(&t->mu);
}

/*
 * A part file followed as it grows (-e on): the blocks stop at avail
 * (a block that would end past it waits), go on after each SRC_AVAIL
 * (given before FILE_READY too), and the part the writer has not reached
 * at the end (a hole it skipped, the file shorter than avail) is sent as
 * zeros; the checksum is over the bytes sent.
 */
LC_TEST(source_follow_part_file)
{
	struct lc_msg_connect c;
	struct lc_msg_file_ready rd;
	struct lc_msg_file_sum fs;
	struct lc_msg_xfer_done d;
	struct lc_msg_ack ack;
	struct lc_msg_src_part sp;
	struct lc_msg_src_add add;
	struct lc_msg_src_entry end;
	struct lc_msg_src_credit credit = { .upto = 100 };
	struct lc_msg_file f;
	struct lc_csum *cs;
	char want[LC_CSUM_TEXT_MAX];
	struct t_src t;
	struct lc_err e;
	const uint64_t written = 10 * T_BLOCK;	/* the writer's last byte */
	size_t n;
	int fd;

	memset(&t, 0, sizeof(t));
	host_tmpdir(t.dir, sizeof(t.dir), "role-follow");
	snprintf(t.path, sizeof(t.path), "%s/.f.lanecp-part", t.dir);
	LC_CHECK((fd = open(t.path, O_WRONLY | O_CREAT | O_EXCL, 0640)) >= 0);
	close(fd);
	t_part_write(&t, 0, 3 * T_BLOCK);
	t.size = written + 100;
	t.nstreams = 1;
	t.nblocks = (uint32_t)((t.size + T_BLOCK - 1) / T_BLOCK);
	LC_CHECK((t.got = calloc(1, t.size + 1)) != NULL);
	LC_CHECK((t.have = calloc(1, t.nblocks + 1)) != NULL);
	pthread_mutex_init(&t.mu, NULL);
	pthread_cond_init(&t.cv, NULL);
	for (size_t i = 0; i < sizeof(t.key); i++)
		t.key[i] = (uint8_t)(i * 53 + 3);
	host_init(&t.h, &lc_source_ops);

	memset(&add, 0, sizeof(add));
	add.flags = LC_ADD_FED | LC_ADD_RECURSIVE | LC_ADD_CONTENTS;
	snprintf(add.path, sizeof(add.path), "%s", t.dir);
	host_send(&t.h, lc_msg_put_src_add, &add);
	host_send(&t.h, lc_msg_put_src_credit, &credit);
	memset(&sp, 0, sizeof(sp));
	sp.size = t.size;
	snprintf(sp.name, sizeof(sp.name), "f");
	host_send(&t.h, lc_msg_put_src_part, &sp);
	host_wait_msg(&t.h, LC_MSG_FILE, &n);
	LC_CHECK(lc_msg_get_file(host_payload, n, &f) == 0);
	LC_CHECK_EQ_U(f.id, 1);
	LC_CHECK_EQ_U(f.kind, LC_KIND_REG);
	LC_CHECK_EQ_U(f.size, t.size);	/* announced, not its length */
	LC_CHECK_EQ_U(f.mode, 0640);
	LC_CHECK_STR(f.name, "f");
	memset(&end, 0, sizeof(end));
	end.flags = LC_ENTRY_END;
	host_send(&t.h, lc_msg_put_src_entry, &end);
	host_wait_msg(&t.h, LC_MSG_SRC_LISTED, &n);
	/* before FILE_READY: kept for it */
	LC_CHECK_EQ_I(t_avail(&t.h, 1, 2 * T_BLOCK + 10), 0);

	t.lis[0].t = &t;
	lc_err_clear(&e);
	LC_CHECK(lc_sock_listen(0, 0, &t.lis[0].fd, &t.lis[0].port, &e) == 0);
	LC_CHECK(pthread_create(&t.lis[0].th, NULL, t_lis_main,
	    &t.lis[0]) == 0);
	memset(&c, 0, sizeof(c));
	snprintf(c.addr, sizeof(c.addr), "127.0.0.1");
	c.streams = 1;
	c.block = T_BLOCK;
	c.csum = LC_CSUM_SHA256;
	memcpy(c.key, t.key, sizeof(c.key));
	c.ports[0] = t.lis[0].port;
	host_send(&t.h, lc_msg_put_connect, &c);
	memset(&rd, 0, sizeof(rd));
	rd.id = 1;
	host_send(&t.h, lc_msg_put_file_ready, &rd);
	host_send(&t.h, lc_msg_put_empty, LC_MSG_SRC_NOMORE);
	host_wait_msg(&t.h, LC_MSG_CONNECTED, &n);
	t_have_exactly(&t, 2);
	/* waiting for avail, the stream says it is alive (LC_IDLE_MS) */
	pthread_mutex_lock(&t.mu);
	LC_CHECK(t.lis[0].idles >= 1);
	pthread_mutex_unlock(&t.mu);

	/* the writer goes on; avail follows it, one byte short of block 6 */
	t_part_write(&t, 3 * T_BLOCK, 7 * T_BLOCK);
	LC_CHECK_EQ_I(t_avail(&t.h, 1, 7 * T_BLOCK - 1), 0);
	t_have_exactly(&t, 6);
	LC_CHECK_EQ_I(t_avail(&t.h, 1, 7 * T_BLOCK), 0);
	t_have_exactly(&t, 7);
	/* the rest but the last 100 bytes, never written: the file ends
	   there, whole (the writer's final ftruncate not done yet) */
	t_part_write(&t, 7 * T_BLOCK, written);
	LC_CHECK_EQ_I(t_avail(&t.h, 1, written + 99), 0);
	t_have_exactly(&t, 10);	/* the last block only with all of it */
	LC_CHECK_EQ_I(t_avail(&t.h, 1, t.size), 0);
	host_wait_for(&t.h, t_all_blocks, &t, "all blocks");
	for (uint64_t off = 0; off < t.size; off++) {
		uint8_t b = off < written ? t_byte(off) : 0;
		if (t.got[off] != b) {
			fprintf(stderr, "byte %llu differs\n",
			    (unsigned long long)off);
			LC_CHECK_EQ_U(t.got[off], b);
		}
	}
	host_wait_msg(&t.h, LC_MSG_FILE_SUM, &n);
	LC_CHECK(lc_msg_get_file_sum(host_payload, n, &fs) == 0);
	LC_CHECK((cs = lc_csum_new(LC_CSUM_SHA256)) != NULL);
	lc_csum_update(cs, t.got, t.size);
	lc_csum_text(cs, want);
	lc_csum_free(cs);
	LC_CHECK_EQ_U(fs.id, 1);
	LC_CHECK_STR(fs.checksum, want);
	/* a late SRC_AVAIL (sent and released, or not): ignored */
	LC_CHECK_EQ_I(t_avail(&t.h, 1, t.size), 0);
	ack.file = 1;
	ack.written = t.size;
	host_send(&t.h, lc_msg_put_ack, &ack);
	host_wait_msg(&t.h, LC_MSG_SRC_DONE, &n);
	LC_CHECK(lc_msg_get_xfer_done(host_payload, n, &d) == 0);
	LC_CHECK_EQ_U(d.files, 1);
	LC_CHECK_EQ_U(d.bytes, t.size);
	LC_CHECK_EQ_I(t_avail(&t.h, 1, t.size), 0);
	LC_CHECK_EQ_I(t_avail(&t.h, 1, 5), 0);
	host_wait_for(&t.h, t_all_ended, &t, "END on the stream");
	LC_CHECK(!t.h.failed);
	t_stop(&t);
}

LC_TEST_MAIN()
