#include "harness.h"

#include "lanecp/buf.h"
#include "lanecp/err.h"
#include "lanecp/wire.h"

/* Split one frame off b, check its type, return payload view. */
static void
one_frame(struct lc_buf *b, uint8_t want, const uint8_t **p, size_t *n)
{
	uint8_t type;
	size_t flen;

	LC_CHECK(lc_msg_peek(lc_buf_ptr(b), lc_buf_len(b), &type, p, n,
	    &flen) == 1);
	LC_CHECK_EQ_U(type, want);
	LC_CHECK_EQ_U(flen, lc_buf_len(b));
}

LC_TEST(hello_roundtrip_and_version_mismatch)
{
	struct lc_buf b;
	struct lc_msg_hello h, g;
	const uint8_t *p;
	size_t n;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	memset(&h, 0, sizeof(h));
	h.magic = LC_PROTO_MAGIC;
	h.proto = LC_PROTO_VERSION;
	snprintf(h.software, sizeof(h.software), "9.9.9");
	h.max_streams = 64;
	h.rmem_max = 212992;
	snprintf(h.hostname, sizeof(h.hostname), "box");
	LC_CHECK(lc_msg_put_hello(&b, &h) == 0);
	one_frame(&b, LC_MSG_HELLO, &p, &n);
	LC_CHECK(lc_msg_get_hello(p, n, &g) == 0);
	LC_CHECK_STR(g.software, "9.9.9");
	LC_CHECK_STR(g.hostname, "box");
	LC_CHECK_EQ_U(g.rmem_max, 212992);
	/* a future version: the fixed prefix still decodes */
	lc_buf_reset(&b);
	h.proto = LC_PROTO_VERSION + 1;
	LC_CHECK(lc_msg_put_hello(&b, &h) == 0);
	one_frame(&b, LC_MSG_HELLO, &p, &n);
	LC_CHECK(lc_msg_get_hello(p, n, &g) == -LC_ERR_VERSION);
	LC_CHECK_EQ_U(g.proto, LC_PROTO_VERSION + 1);
	LC_CHECK_STR(g.software, "9.9.9");
	/* bad magic */
	lc_buf_reset(&b);
	h.magic = 0x12345678;
	LC_CHECK(lc_msg_put_hello(&b, &h) == 0);
	one_frame(&b, LC_MSG_HELLO, &p, &n);
	LC_CHECK(lc_msg_get_hello(p, n, &g) == -LC_ERR_PROTO);
	lc_buf_free(&b);
}

LC_TEST(file_and_connect_roundtrip)
{
	struct lc_buf b;
	struct lc_msg_file f, g;
	struct lc_msg_connect c, d;
	const uint8_t *p;
	size_t n;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	memset(&f, 0, sizeof(f));
	f.id = 3;
	f.kind = LC_KIND_REG;
	f.mode = 0644;
	f.size = 1ULL << 40;
	f.mtime_sec = -5;
	f.mtime_nsec = 999999999;
	snprintf(f.name, sizeof(f.name), "db.xb");
	LC_CHECK(lc_msg_put_file(&b, &f) == 0);
	one_frame(&b, LC_MSG_FILE, &p, &n);
	LC_CHECK(lc_msg_get_file(p, n, &g) == 0);
	LC_CHECK(memcmp(&f, &g, sizeof(f)) == 0);
	/* every truncation is rejected */
	for (size_t cut = 0; cut < n; cut++)
		LC_CHECK(lc_msg_get_file(p, cut, &g) == -LC_ERR_PROTO);
	lc_buf_reset(&b);
	memset(&c, 0, sizeof(c));
	snprintf(c.addr, sizeof(c.addr), "10.1.2.3");
	c.streams = 3;
	c.block = 1 << 20;
	for (int i = 0; i < 3; i++)
		c.ports[i] = (uint16_t)(40000 + i);
	memset(c.key, 0xa5, sizeof(c.key));
	LC_CHECK(lc_msg_put_connect(&b, &c) == 0);
	one_frame(&b, LC_MSG_CONNECT, &p, &n);
	LC_CHECK(lc_msg_get_connect(p, n, &d) == 0);
	LC_CHECK(memcmp(&c, &d, sizeof(c)) == 0);
	lc_buf_free(&b);
}

LC_TEST(peer_values_are_checked)
{
	struct lc_buf b;
	struct lc_msg_listen l, m;
	struct lc_msg_file f, g;
	const uint8_t *p;
	size_t n;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	memset(&l, 0, sizeof(l));
	l.streams = LC_MAX_STREAMS + 1;	/* too many */
	l.block = 1 << 20;
	LC_CHECK(lc_msg_put_listen(&b, &l) == 0);
	one_frame(&b, LC_MSG_LISTEN, &p, &n);
	LC_CHECK(lc_msg_get_listen(p, n, &m) == -LC_ERR_PROTO);
	lc_buf_reset(&b);
	l.streams = 4;
	l.block = 100;		/* below LC_MIN_BLOCK */
	LC_CHECK(lc_msg_put_listen(&b, &l) == 0);
	one_frame(&b, LC_MSG_LISTEN, &p, &n);
	LC_CHECK(lc_msg_get_listen(p, n, &m) == -LC_ERR_PROTO);
	lc_buf_reset(&b);
	memset(&f, 0, sizeof(f));
	f.id = 1;
	f.kind = LC_KIND_REG;
	f.mode = 0100644;	/* type bits are not allowed */
	snprintf(f.name, sizeof(f.name), "x");
	LC_CHECK(lc_msg_put_file(&b, &f) == 0);
	one_frame(&b, LC_MSG_FILE, &p, &n);
	LC_CHECK(lc_msg_get_file(p, n, &g) == -LC_ERR_PROTO);
	lc_buf_free(&b);
}

LC_TEST(frame_split_and_limits)
{
	uint8_t hdr[5] = { 0, 0, 0, 0, 1 };
	const uint8_t *p;
	uint8_t type;
	size_t n, flen;

	LC_CHECK(lc_msg_peek(hdr, 3, &type, &p, &n, &flen) == 0);
	LC_CHECK(lc_msg_peek(hdr, 5, &type, &p, &n, &flen) == -LC_ERR_PROTO);
	hdr[1] = 0x20;	/* 2 MiB > LC_CTL_MAX */
	LC_CHECK(lc_msg_peek(hdr, 5, &type, &p, &n, &flen) == -LC_ERR_PROTO);
	hdr[1] = 0;
	hdr[3] = 2;	/* needs one more byte */
	LC_CHECK(lc_msg_peek(hdr, 5, &type, &p, &n, &flen) == 0);
}

LC_TEST(data_frames)
{
	uint8_t h[LC_FRAME_HDR_LEN];
	struct lc_frame f, g;

	memset(&f, 0, sizeof(f));
	f.type = LC_FRAME_DATA;
	f.file_id = 9;
	f.offset = 1ULL << 33;
	f.len = f.raw_len = 4096;
	lc_frame_put(h, &f);
	LC_CHECK(lc_frame_get(h, 1 << 20, &g) == 0);
	LC_CHECK(memcmp(&f, &g, sizeof(f)) == 0);
	LC_CHECK(lc_frame_get(h, 1024, &g) == -LC_ERR_PROTO);	/* > block */
	h[2] = 1;	/* reserved */
	LC_CHECK(lc_frame_get(h, 1 << 20, &g) == -LC_ERR_PROTO);
	memset(&f, 0, sizeof(f));
	f.type = LC_FRAME_END;
	lc_frame_put(h, &f);
	LC_CHECK(lc_frame_get(h, 1 << 20, &g) == 0);
	h[7] = 1;	/* END with a file id */
	LC_CHECK(lc_frame_get(h, 1 << 20, &g) == -LC_ERR_PROTO);
	memset(&f, 0, sizeof(f));
	f.type = LC_FRAME_DATA;
	f.file_id = 1;
	f.offset = UINT64_MAX - 10;	/* overflows with len */
	f.len = f.raw_len = 4096;
	lc_frame_put(h, &f);
	LC_CHECK(lc_frame_get(h, 1 << 20, &g) == -LC_ERR_PROTO);
	h[0] = 77;
	LC_CHECK(lc_frame_get(h, 1 << 20, &g) == -LC_ERR_PROTO);
}

LC_TEST(hole_frames)
{
	uint8_t h[LC_FRAME_HDR_LEN];
	struct lc_frame f, g;

	memset(&f, 0, sizeof(f));
	f.type = LC_FRAME_HOLE;
	f.file_id = 3;
	f.offset = 1ULL << 40;
	f.raw_len = LC_MAX_HOLE;
	lc_frame_put(h, &f);
	/* a hole is not limited by the block size */
	LC_CHECK(lc_frame_get(h, LC_MIN_BLOCK, &g) == 0);
	LC_CHECK(memcmp(&f, &g, sizeof(f)) == 0);
	f.raw_len = 1;
	lc_frame_put(h, &f);
	LC_CHECK(lc_frame_get(h, LC_MIN_BLOCK, &g) == 0);
	LC_CHECK_EQ_U(g.raw_len, 1);
	LC_CHECK_EQ_U(g.len, 0);
	f.raw_len = LC_MAX_HOLE + 1;	/* too long */
	lc_frame_put(h, &f);
	LC_CHECK(lc_frame_get(h, 1 << 20, &g) == -LC_ERR_PROTO);
	f.raw_len = 0;			/* empty */
	lc_frame_put(h, &f);
	LC_CHECK(lc_frame_get(h, 1 << 20, &g) == -LC_ERR_PROTO);
	f.raw_len = 4096;
	f.len = 4096;			/* a payload */
	lc_frame_put(h, &f);
	LC_CHECK(lc_frame_get(h, 1 << 20, &g) == -LC_ERR_PROTO);
	f.len = 0;
	f.file_id = 0;			/* no file */
	lc_frame_put(h, &f);
	LC_CHECK(lc_frame_get(h, 1 << 20, &g) == -LC_ERR_PROTO);
	f.file_id = 3;
	f.offset = (uint64_t)INT64_MAX - 100;	/* overflows with raw_len */
	lc_frame_put(h, &f);
	LC_CHECK(lc_frame_get(h, 1 << 20, &g) == -LC_ERR_PROTO);
	f.offset = 0;
	f.flags = 1;			/* unknown flag */
	lc_frame_put(h, &f);
	LC_CHECK(lc_frame_get(h, 1 << 20, &g) == -LC_ERR_PROTO);
	f.flags = 0;
	lc_frame_put(h, &f);
	h[3] = 1;			/* reserved */
	LC_CHECK(lc_frame_get(h, 1 << 20, &g) == -LC_ERR_PROTO);
}

LC_TEST(resume_and_recovery_messages)
{
	struct lc_buf b;
	uint8_t hashes[3 * LC_PREFIX_HASH_LEN];
	struct lc_msg_file_prefix fp, gp;
	struct lc_msg_stream_lost sl, gl;
	struct lc_msg_progress pr, gr;
	struct lc_msg_file_sum fs, gs;
	const uint8_t *p;
	size_t n;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	for (size_t i = 0; i < sizeof(hashes); i++)
		hashes[i] = (uint8_t)i;
	memset(&fp, 0, sizeof(fp));
	fp.id = 4;
	fp.length = 2500;
	fp.chunk = 1000;
	fp.n = 3;
	fp.hashes = hashes;
	LC_CHECK(lc_msg_put_file_prefix(&b, &fp) == 0);
	one_frame(&b, LC_MSG_FILE_PREFIX, &p, &n);
	LC_CHECK(lc_msg_get_file_prefix(p, n, &gp) == 0);
	LC_CHECK_EQ_U(gp.n, 3);
	LC_CHECK(memcmp(gp.hashes, hashes, sizeof(hashes)) == 0);
	/* a chunk count that does not fit the length is refused */
	lc_buf_reset(&b);
	fp.length = 3500;
	LC_CHECK(lc_msg_put_file_prefix(&b, &fp) == 0);
	one_frame(&b, LC_MSG_FILE_PREFIX, &p, &n);
	LC_CHECK(lc_msg_get_file_prefix(p, n, &gp) == -LC_ERR_PROTO);
	lc_buf_reset(&b);
	memset(&sl, 0, sizeof(sl));
	sl.stream = 7;
	sl.has_last = 1;
	sl.last_file = 2;
	sl.last_off = 1ULL << 40;
	snprintf(sl.reason, sizeof(sl.reason), "no data for 30 s");
	LC_CHECK(lc_msg_put_stream_lost(&b, &sl) == 0);
	one_frame(&b, LC_MSG_STREAM_LOST, &p, &n);
	LC_CHECK(lc_msg_get_stream_lost(p, n, &gl) == 0);
	LC_CHECK(memcmp(&sl, &gl, sizeof(sl)) == 0);
	lc_buf_reset(&b);
	memset(&pr, 0, sizeof(pr));
	pr.bytes = 99;
	pr.file = 3;
	pr.written = 12345;
	LC_CHECK(lc_msg_put_progress(&b, &pr) == 0);
	one_frame(&b, LC_MSG_PROGRESS, &p, &n);
	LC_CHECK(lc_msg_get_progress(p, n, &gr) == 0);
	LC_CHECK(memcmp(&pr, &gr, sizeof(pr)) == 0);
	lc_buf_reset(&b);
	memset(&fs, 0, sizeof(fs));
	fs.id = 1;
	snprintf(fs.checksum, sizeof(fs.checksum), "crc32:cbf43926");
	LC_CHECK(lc_msg_put_file_sum(&b, &fs) == 0);
	one_frame(&b, LC_MSG_FILE_SUM, &p, &n);
	LC_CHECK(lc_msg_get_file_sum(p, n, &gs) == 0);
	LC_CHECK_STR(gs.checksum, "crc32:cbf43926");
	lc_buf_free(&b);
}

LC_TEST_MAIN()
