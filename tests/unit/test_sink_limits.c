/*
 * The sink agent against a hostile controller: lc_agent_run() in a thread
 * on a socketpair, fed message sequences a real controller would never
 * send.  Every case checks that the agent answers (an ERROR, or clamped
 * values) and returns once the control channel closes: a file id that
 * wraps the table's growth used to spin forever under the sink's mutex,
 * and ids from 2^27 allocated gigabytes.
 */
#define LC_TEST_TIMEOUT 30
#include "harness.h"

#include "agent.h"
#include "buf.h"
#include "wire.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#define T_SINK_RESERVE (16u << 20)	/* the sink's fixed allowance */
#define T_SINK_DEFAULT (128u << 20)	/* LC_AGENT_DEFAULT_MEMORY */

struct t_agent {
	int fd;			/* our end */
	int afd;		/* the agent's end */
	pthread_t th;
	struct lc_agent_opts opts;
	int rc;
	struct lc_buf in;
	char dir[64];
	uint32_t hello_flags;	/* the agent's HELLO */
};

static void *
t_agent_main(void *arg)
{
	struct t_agent *t = arg;

	t->rc = lc_agent_run(t->afd, t->afd, &t->opts);
	return NULL;
}

static void
t_start(struct t_agent *t, uint64_t max_memory)
{
	int sv[2];
	struct timeval tv = { 10, 0 };

	memset(t, 0, sizeof(*t));
	LC_CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	t->fd = sv[0];
	t->afd = sv[1];
	LC_CHECK(setsockopt(t->fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
	    sizeof(tv)) == 0);
	t->opts.local = 1;
	t->opts.max_memory = max_memory;
	lc_buf_init(&t->in, LC_CTL_MAX + 16);
	snprintf(t->dir, sizeof(t->dir), "/tmp/lc-sink-limits-XXXXXX");
	LC_CHECK(mkdtemp(t->dir) != NULL);
	LC_CHECK(pthread_create(&t->th, NULL, t_agent_main, t) == 0);
}

/* Close the control channel: the agent must return (else: timeout). */
static void
t_stop(struct t_agent *t)
{
	char cmd[128];

	close(t->fd);
	LC_CHECK(pthread_join(t->th, NULL) == 0);
	close(t->afd);
	lc_buf_free(&t->in);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	LC_CHECK(system(cmd) == 0);
}

static void
t_send(struct t_agent *t, struct lc_buf *b)
{
	size_t off = 0;

	while (off < lc_buf_len(b)) {
		ssize_t n = write(t->fd, lc_buf_ptr(b) + off,
		    lc_buf_len(b) - off);
		LC_CHECK(n > 0);
		off += (size_t)n;
	}
	lc_buf_free(b);
}

/* The next message from the agent, skipping PROGRESS heartbeats. */
static uint8_t
t_recv(struct t_agent *t, uint8_t *payload, size_t cap, size_t *plen)
{
	for (;;) {
		const uint8_t *p;
		uint8_t type, *w;
		size_t n, flen;
		ssize_t got;
		int r = lc_msg_peek(lc_buf_ptr(&t->in), lc_buf_len(&t->in),
		    &type, &p, &n, &flen);

		LC_CHECK(r >= 0);
		if (r == 1) {
			LC_CHECK(n <= cap);
			memcpy(payload, p, n);
			*plen = n;
			lc_buf_consume(&t->in, flen);
			if (type == LC_MSG_PROGRESS)
				continue;
			return type;
		}
		LC_CHECK(lc_buf_reserve(&t->in, 65536, &w) == 0);
		got = read(t->fd, w, 65536);
		if (got <= 0)
			fprintf(stderr, "read from the agent: %s\n",
			    got == 0 ? "EOF" : strerror(errno));
		LC_CHECK(got > 0);
		lc_buf_unappend(&t->in, 65536 - (size_t)got);
	}
}

static uint8_t t_payload[LC_CTL_MAX];

/* Expect an ERROR with this code (LC_ERR_*). */
static void
t_expect_error(struct t_agent *t, int code)
{
	struct lc_msg_error m;
	size_t n;
	uint8_t type = t_recv(t, t_payload, sizeof(t_payload), &n);

	if (type != LC_MSG_ERROR)
		fprintf(stderr, "expected ERROR, got %s\n", lc_msg_name(type));
	LC_CHECK_EQ_U(type, LC_MSG_ERROR);
	LC_CHECK(lc_msg_get_error(t_payload, n, &m) == 0);
	fprintf(stderr, "agent: ERROR %u: %s\n", m.code, m.msg);
	LC_CHECK_EQ_U(m.code, code);
}

static void
t_expect(struct t_agent *t, uint8_t want)
{
	size_t n;
	uint8_t type = t_recv(t, t_payload, sizeof(t_payload), &n);

	if (type != want)
		fprintf(stderr, "expected %s, got %s\n", lc_msg_name(want),
		    lc_msg_name(type));
	LC_CHECK_EQ_U(type, want);
}

static uint32_t
t_hello(struct t_agent *t)
{
	struct lc_msg_hello h;
	struct lc_buf b;
	size_t n;

	memset(&h, 0, sizeof(h));
	h.magic = LC_PROTO_MAGIC;
	h.proto = LC_PROTO_VERSION;
	snprintf(h.software, sizeof(h.software), "test");
	lc_buf_init(&b, LC_CTL_MAX + 16);
	LC_CHECK(lc_msg_put_hello(&b, &h) == 0);
	t_send(t, &b);
	LC_CHECK_EQ_U(t_recv(t, t_payload, sizeof(t_payload), &n),
	    LC_MSG_HELLO);
	LC_CHECK(lc_msg_get_hello(t_payload, n, &h) == 0);
	t->hello_flags = h.flags;
	return h.max_streams;
}

static void
t_target_f(struct t_agent *t, uint32_t nsources, uint32_t flags)
{
	struct lc_msg_sink_target m;
	struct lc_buf b;

	memset(&m, 0, sizeof(m));
	m.flags = flags;
	m.inflight = nsources;
	snprintf(m.target, sizeof(m.target), "%s/", t->dir);
	lc_buf_init(&b, LC_CTL_MAX + 16);
	LC_CHECK(lc_msg_put_sink_target(&b, &m) == 0);
	t_send(t, &b);
}

static void
t_target(struct t_agent *t, uint32_t nsources)
{
	t_target_f(t, nsources, 0);
}

static void
t_listen_f(struct t_agent *t, uint32_t streams, uint32_t block,
    uint32_t flags)
{
	struct lc_msg_listen m;
	struct lc_buf b;

	memset(&m, 0, sizeof(m));
	m.streams = streams;
	m.block = block;
	m.flags = flags;
	m.stall_s = 30;
	lc_buf_init(&b, LC_CTL_MAX + 16);
	LC_CHECK(lc_msg_put_listen(&b, &m) == 0);
	t_send(t, &b);
}

static void
t_listen(struct t_agent *t, uint32_t streams, uint32_t block)
{
	t_listen_f(t, streams, block, 0);
}

static void
t_listening(struct t_agent *t, struct lc_msg_listening *l)
{
	size_t n;
	uint8_t type = t_recv(t, t_payload, sizeof(t_payload), &n);

	if (type == LC_MSG_ERROR) {
		struct lc_msg_error m;
		if (lc_msg_get_error(t_payload, n, &m) == 0)
			fprintf(stderr, "agent: ERROR %u: %s\n", m.code, m.msg);
	}
	LC_CHECK_EQ_U(type, LC_MSG_LISTENING);
	LC_CHECK(lc_msg_get_listening(t_payload, n, l) == 0);
	fprintf(stderr, "LISTENING streams %u block %u quota %u\n",
	    l->streams, l->block, l->quota);
}

static void
t_file_size(struct t_agent *t, uint32_t id, const char *name, uint64_t size)
{
	struct lc_msg_file m;
	struct lc_buf b;

	memset(&m, 0, sizeof(m));
	m.id = id;
	m.kind = LC_KIND_REG;
	m.mode = 0644;
	m.size = size;
	snprintf(m.name, sizeof(m.name), "%s", name);
	lc_buf_init(&b, LC_CTL_MAX + 16);
	LC_CHECK(lc_msg_put_file(&b, &m) == 0);
	t_send(t, &b);
}

static void
t_file(struct t_agent *t, uint32_t id, const char *name)
{
	t_file_size(t, id, name, 10);
}

/* HELLO, SINK_TARGET (one source), LISTEN (1 stream, 64 KiB blocks). */
static void
t_ready_sink(struct t_agent *t)
{
	struct lc_msg_listening l;

	(void)t_hello(t);
	t_target(t, 1);
	t_expect(t, LC_MSG_TARGET_OK);
	t_listen(t, 1, 64u << 10);
	t_listening(t, &l);
}

static void
t_bad_id(uint32_t id)
{
	struct t_agent t;

	t_start(&t, 0);
	t_ready_sink(&t);
	t_file(&t, id, "f");
	t_expect_error(&t, LC_ERR_PROTO);
	t_stop(&t);
}

/* 2^31 wrapped the doubling capacity to 0: an endless loop. */
LC_TEST(sink_file_id_2g)
{
	t_bad_id(1u << 31);
}

LC_TEST(sink_file_id_max)
{
	t_bad_id(UINT32_MAX);
}

/* 2^27: a 2 GiB table. */
LC_TEST(sink_file_id_128m)
{
	t_bad_id(1u << 27);
}

/* One source announced: id 2 does not exist, id 1 is fine once. */
LC_TEST(sink_file_id_beyond_announced)
{
	struct t_agent t;

	t_start(&t, 0);
	t_ready_sink(&t);
	t_file(&t, 2, "f");
	t_expect_error(&t, LC_ERR_PROTO);
	t_stop(&t);

	t_start(&t, 0);
	t_ready_sink(&t);
	t_file(&t, 1, "f");
	t_expect(&t, LC_MSG_FILE_READY);
	t_file(&t, 1, "g");
	t_expect_error(&t, LC_ERR_PROTO);
	t_stop(&t);
}

/* The announced count itself is bounded. */
LC_TEST(sink_target_nsources_bounded)
{
	static const uint32_t bad[] = { 0, 1u << 20, UINT32_MAX };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct t_agent t;
		t_start(&t, 0);
		(void)t_hello(&t);
		t_target(&t, bad[i]);
		t_expect_error(&t, LC_ERR_PROTO);
		t_stop(&t);
	}
}

static uint32_t
t_target_ok(struct t_agent *t)
{
	struct lc_msg_target_ok ok;
	size_t n;

	LC_CHECK_EQ_U(t_recv(t, t_payload, sizeof(t_payload), &n),
	    LC_MSG_TARGET_OK);
	LC_CHECK(lc_msg_get_target_ok(t_payload, n, &ok) == 0);
	return ok.inflight;
}

/*
 * The files in flight granted (TARGET_OK): the ask, at most half the
 * descriptor limit (HELLO raised it), never below 512; and the grant is
 * what the sink enforces.
 */
LC_TEST(sink_target_grants_inflight)
{
	struct lc_msg_listening l;
	struct rlimit rl;
	struct t_agent t;
	uint32_t want = LC_FILES_INFLIGHT_MAX;
	char name[16];

	t_start(&t, 0);
	(void)t_hello(&t);
	LC_CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 2 < want)
		want = rl.rlim_cur / 2 < LC_FILES_INFLIGHT ?
		    LC_FILES_INFLIGHT : (uint32_t)(rl.rlim_cur / 2);
	t_target(&t, LC_FILES_INFLIGHT_MAX);
	LC_CHECK_EQ_U(t_target_ok(&t), want);
	t_stop(&t);

	t_start(&t, 0);
	(void)t_hello(&t);
	t_target(&t, 100);
	LC_CHECK_EQ_U(t_target_ok(&t), 100);
	t_listen(&t, 1, 64u << 10);
	t_listening(&t, &l);
	for (uint32_t id = 1; id <= 100; id++) {
		snprintf(name, sizeof(name), "f%03u", id);
		t_file(&t, id, name);
		t_expect(&t, LC_MSG_FILE_READY);
	}
	t_file(&t, 101, "g");	/* 100 in flight already */
	t_expect_error(&t, LC_ERR_PROTO);
	t_stop(&t);
}

/*
 * The grant bounds the files the sink holds, not how far apart their
 * ids are (LC_HELLO_COUNT_INFLIGHT, issue 23): with file 1 still waiting
 * for its data, 199 empty files (each done at once) take ids to 200,
 * twice the grant of 100; then 99 more files waiting for data fill it,
 * and one more is refused, however many ids have passed.
 */
LC_TEST(sink_inflight_by_count)
{
	struct lc_msg_listening l;
	struct t_agent t;
	char name[16];
	uint32_t id;

	t_start(&t, 0);
	(void)t_hello(&t);
	LC_CHECK(t.hello_flags & LC_HELLO_COUNT_INFLIGHT);
	/* and, as a source, follows part files (issue 25) */
	LC_CHECK(t.hello_flags & LC_HELLO_FED);
	LC_CHECK(t.hello_flags & LC_HELLO_FOLLOW);
	t_target_f(&t, 100, LC_TGT_NO_FSYNC);
	LC_CHECK_EQ_U(t_target_ok(&t), 100);
	t_listen(&t, 1, 64u << 10);
	t_listening(&t, &l);
	t_file(&t, 1, "held");
	t_expect(&t, LC_MSG_FILE_READY);
	for (id = 2; id <= 200; id++) {
		snprintf(name, sizeof(name), "e%03u", id);
		t_file_size(&t, id, name, 0);
		t_expect(&t, LC_MSG_FILE_READY);
		t_expect(&t, LC_MSG_FILE_DONE);	/* freed: one in flight */
	}
	for (; id <= 299; id++) {	/* 1 and these 99: the grant's 100 */
		snprintf(name, sizeof(name), "w%03u", id);
		t_file(&t, id, name);
		t_expect(&t, LC_MSG_FILE_READY);
	}
	t_file(&t, 300, "over");
	t_expect_error(&t, LC_ERR_PROTO);
	t_stop(&t);
}

/*
 * streams x (quota + extra) x block stays within the budget: extra is the
 * spare, and with -c the inflate input buffer too.
 */
static void
t_check_bound_x(const struct lc_msg_listening *l, uint64_t budget,
    uint32_t want_streams, uint32_t want_block, uint32_t extra)
{
	uint64_t mem = (uint64_t)l->streams * (l->quota + extra) * l->block;

	fprintf(stderr, "buffers %llu, budget %llu\n",
	    (unsigned long long)mem, (unsigned long long)budget);
	LC_CHECK(mem <= budget - T_SINK_RESERVE);
	LC_CHECK(l->streams >= 1 && l->streams <= want_streams);
	LC_CHECK(l->block >= LC_MIN_BLOCK && l->block <= want_block);
	LC_CHECK(l->block % 4096 == 0);
	LC_CHECK(l->quota >= 2);
}

static void
t_check_bound(const struct lc_msg_listening *l, uint64_t budget,
    uint32_t want_streams, uint32_t want_block)
{
	t_check_bound_x(l, budget, want_streams, want_block, 1);
}

/* -c: one more block per stream (the inflate input) is counted too. */
LC_TEST(sink_listen_memory_compress)
{
	static const uint32_t cases[][3] = {
		{ 64, 64u << 20, 64u << 20 }, { 1, 64u << 20, 64u << 20 },
		{ 64, 1u << 20, 64u << 20 }, { 16, 1u << 20, 32u << 20 },
		{ 4, 1u << 20, 64u << 20 }, { 8, 32u << 20, 1024u << 20 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lc_msg_listening l;
		struct t_agent t;
		t_start(&t, cases[i][2]);
		(void)t_hello(&t);
		t_target(&t, 1);
		t_expect(&t, LC_MSG_TARGET_OK);
		t_listen_f(&t, cases[i][0], cases[i][1], LC_XFER_COMPRESS);
		t_listening(&t, &l);
		t_check_bound_x(&l, cases[i][2], cases[i][0], cases[i][1], 2);
		t_stop(&t);
	}
}

LC_TEST(sink_listen_memory_default)
{
	static const uint32_t cases[][2] = {
		{ 64, 64u << 20 }, { 1, 64u << 20 }, { 64, 1u << 20 },
		{ 16, 1u << 20 }, { 4, 1u << 20 }, { 64, 4096 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lc_msg_listening l;
		struct t_agent t;
		t_start(&t, 0);
		(void)t_hello(&t);
		t_target(&t, 1);
		t_expect(&t, LC_MSG_TARGET_OK);
		t_listen(&t, cases[i][0], cases[i][1]);
		t_listening(&t, &l);
		t_check_bound(&l, T_SINK_DEFAULT, cases[i][0], cases[i][1]);
		t_stop(&t);
	}
}

/* What the defaults ask for is granted unchanged. */
LC_TEST(sink_listen_defaults_unclamped)
{
	struct lc_msg_listening l;
	struct t_agent t;

	t_start(&t, 0);
	(void)t_hello(&t);
	t_target(&t, 1);
	t_expect(&t, LC_MSG_TARGET_OK);
	t_listen(&t, LC_DEFAULT_STREAMS, LC_DEFAULT_BLOCK);
	t_listening(&t, &l);
	LC_CHECK_EQ_U(l.streams, LC_DEFAULT_STREAMS);
	LC_CHECK_EQ_U(l.block, LC_DEFAULT_BLOCK);
	t_stop(&t);
}

/* --max-memory: a smaller budget, and a larger one that grants more. */
LC_TEST(sink_listen_max_memory)
{
	struct lc_msg_listening l;
	struct t_agent t;

	t_start(&t, 32u << 20);
	(void)t_hello(&t);
	t_target(&t, 1);
	t_expect(&t, LC_MSG_TARGET_OK);
	t_listen(&t, 64, 64u << 20);
	t_listening(&t, &l);
	t_check_bound(&l, 32u << 20, 64, 64u << 20);
	t_stop(&t);

	t_start(&t, 1024u << 20);
	(void)t_hello(&t);
	t_target(&t, 1);
	t_expect(&t, LC_MSG_TARGET_OK);
	t_listen(&t, 8, 32u << 20);
	t_listening(&t, &l);
	t_check_bound(&l, 1024u << 20, 8, 32u << 20);
	LC_CHECK_EQ_U(l.streams, 8);
	LC_CHECK_EQ_U(l.block, 32u << 20);
	t_stop(&t);
}

/* No more streams than the HELLO advertised. */
LC_TEST(sink_listen_streams_advertised)
{
	struct lc_msg_listening l;
	struct t_agent t;
	struct rlimit rl;
	uint32_t max;

	/*
	 * the agent advertises (RLIMIT_NOFILE - 64) / 2 streams; it raises
	 * its soft limit to the hard one first, so lower both (each test
	 * runs in its own process)
	 */
	LC_CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
	rl.rlim_cur = rl.rlim_max = 64 + 2 * 6;
	LC_CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	t_start(&t, 0);
	max = t_hello(&t);
	LC_CHECK_EQ_U(max, 6);
	t_target(&t, 1);
	t_expect(&t, LC_MSG_TARGET_OK);
	t_listen(&t, 64, 64u << 10);
	t_listening(&t, &l);
	LC_CHECK(l.streams <= max);
	t_stop(&t);
}

/* Messages of the other role, and resume messages out of turn. */
LC_TEST(sink_out_of_role)
{
	struct lc_buf b;
	struct t_agent t;
	uint8_t hashes[64];

	t_start(&t, 0);
	t_ready_sink(&t);
	{
		struct lc_msg_file_prefix fp;
		memset(&fp, 0, sizeof(fp));
		memset(hashes, 0xa5, sizeof(hashes));
		fp.id = 1;
		fp.length = UINT64_MAX / 2;
		fp.chunk = 4096;
		fp.n = 2;
		fp.hashes = hashes;
		lc_buf_init(&b, LC_CTL_MAX + 16);
		LC_CHECK(lc_msg_put_file_prefix(&b, &fp) == 0);
		t_send(&t, &b);
	}
	t_expect_error(&t, LC_ERR_PROTO);
	t_stop(&t);

	t_start(&t, 0);
	t_ready_sink(&t);
	{
		struct lc_msg_prefix_match pm = { .id = 1, .match = 1 };
		lc_buf_init(&b, LC_CTL_MAX + 16);
		LC_CHECK(lc_msg_put_prefix_match(&b, &pm) == 0);
		t_send(&t, &b);
	}
	t_expect_error(&t, LC_ERR_PROTO);
	t_stop(&t);
}

/*
 * A controller that goes silent after a PING: the agent stops by itself
 * once the grace has passed (and so releases its part files), instead of
 * waiting for a control channel that may never close.
 */
LC_TEST(agent_stops_when_the_controller_is_silent)
{
	struct lc_msg_ping pg = { .grace_s = 1 };
	struct t_agent t;
	struct lc_buf b;

	t_start(&t, 0);
	(void)t_hello(&t);
	t_target(&t, 1);
	t_expect(&t, LC_MSG_TARGET_OK);
	lc_buf_init(&b, LC_CTL_MAX + 16);
	LC_CHECK(lc_msg_put_ping(&b, &pg) == 0);
	t_send(&t, &b);
	/* the channel stays open: only the silence can end the agent */
	LC_CHECK(pthread_join(t.th, NULL) == 0);
	LC_CHECK_EQ_I(t.rc, -LC_ERR_TIMEOUT);
	/* t_stop's cleanup, the agent having returned already */
	close(t.fd);
	close(t.afd);
	lc_buf_free(&t.in);
	lc_test_rm_tree(t.dir);
}

/* A malformed PING (no grace, or too long) is a protocol error. */
LC_TEST(agent_refuses_a_bad_ping)
{
	struct t_agent t;
	struct lc_buf b;

	t_start(&t, 0);
	(void)t_hello(&t);
	lc_buf_init(&b, LC_CTL_MAX + 16);
	LC_CHECK(lc_msg_put_ping(&b, &(struct lc_msg_ping){
	    .grace_s = LC_PING_GRACE_MAX + 1 }) == 0);
	t_send(&t, &b);
	t_expect_error(&t, LC_ERR_PROTO);
	t_stop(&t);
}

LC_TEST_MAIN()
