#include "harness.h"

#include "buf.h"
#include "err.h"
#include "wire.h"
#include "wire_frame.h"

/*
 * Two decoded FILEs are the same: the decoder fills the fixed fields and
 * the strings, not the bytes after each string's end.
 */
static int
t_file_same(const struct lc_msg_file *a, const struct lc_msg_file *b)
{
	return a->id == b->id && a->kind == b->kind && a->mode == b->mode &&
	    a->size == b->size && a->mtime_sec == b->mtime_sec &&
	    a->mtime_nsec == b->mtime_nsec && a->uid == b->uid &&
	    a->gid == b->gid && strcmp(a->name, b->name) == 0 &&
	    strcmp(a->link, b->link) == 0 && strcmp(a->user, b->user) == 0 &&
	    strcmp(a->group, b->group) == 0;
}

static int
t_mem_same(const void *a, const void *b, size_t n)
{
	return memcmp(a, b, n) == 0;
}

#define T_SAME(a, b) _Generic((a), \
	struct lc_msg_file *: t_file_same((const void *)(a), (const void *)(b)), \
	default: t_mem_same((a), (b), sizeof(*(a))))

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
	LC_CHECK(T_SAME(&f, &g));
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
	/* -c: the level travels with the flag, 1..9, never one alone */
	for (uint32_t lv = 0; lv <= 11; lv++) {
		for (int fl = 0; fl < 2; fl++) {
			int ok = fl == (lv != 0) && lv <= LC_ZLEVEL_MAX;
			lc_buf_reset(&b);
			c.zlevel = lv;
			c.flags = fl ? LC_XFER_COMPRESS : 0;
			LC_CHECK(lc_msg_put_connect(&b, &c) == 0);
			one_frame(&b, LC_MSG_CONNECT, &p, &n);
			LC_CHECK_EQ_I(lc_msg_get_connect(p, n, &d),
			    ok ? 0 : -LC_ERR_PROTO);
			if (ok)
				LC_CHECK(memcmp(&c, &d, sizeof(c)) == 0);
		}
	}
	lc_buf_free(&b);
}

/* SRC_DONE and PROGRESS: wire bytes never more than bytes. */
LC_TEST(wire_bytes_bounded)
{
	struct lc_buf b;
	struct lc_msg_xfer_done x, y;
	struct lc_msg_progress pr, q;
	const uint8_t *p;
	size_t n;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	memset(&x, 0, sizeof(x));
	x.bytes = 1000;
	x.files = 2;
	x.wire = 400;
	LC_CHECK(lc_msg_put_xfer_done(&b, LC_MSG_SRC_DONE, &x) == 0);
	one_frame(&b, LC_MSG_SRC_DONE, &p, &n);
	LC_CHECK(lc_msg_get_xfer_done(p, n, &y) == 0);
	LC_CHECK(memcmp(&x, &y, sizeof(x)) == 0);
	lc_buf_reset(&b);
	x.wire = 1001;
	LC_CHECK(lc_msg_put_xfer_done(&b, LC_MSG_SRC_DONE, &x) == 0);
	one_frame(&b, LC_MSG_SRC_DONE, &p, &n);
	LC_CHECK(lc_msg_get_xfer_done(p, n, &y) == -LC_ERR_PROTO);
	lc_buf_reset(&b);
	memset(&pr, 0, sizeof(pr));
	pr.bytes = 10;
	pr.wire = 11;
	LC_CHECK(lc_msg_put_progress(&b, &pr) == 0);
	one_frame(&b, LC_MSG_PROGRESS, &p, &n);
	LC_CHECK(lc_msg_get_progress(p, n, &q) == -LC_ERR_PROTO);
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
	LC_CHECK(T_SAME(&f, &g));
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

/* Compressed DATA (LC_FRAME_F_ZLIB): 1 <= len < raw_len <= block. */
LC_TEST(data_frames_zlib)
{
	uint8_t h[LC_FRAME_HDR_LEN];
	struct lc_frame f, g;

	memset(&f, 0, sizeof(f));
	f.type = LC_FRAME_DATA;
	f.flags = LC_FRAME_F_ZLIB;
	f.file_id = 2;
	f.offset = 1 << 20;
	f.len = 100;
	f.raw_len = 1 << 20;
	lc_frame_put(h, &f);
	LC_CHECK(lc_frame_get(h, 1 << 20, &g) == 0);
	LC_CHECK(T_SAME(&f, &g));
	/* raw_len past the block: refused, however small the payload */
	LC_CHECK(lc_frame_get(h, (1 << 20) - 1, &g) == -LC_ERR_PROTO);
	f.len = f.raw_len;		/* does not shrink: must go raw */
	lc_frame_put(h, &f);
	LC_CHECK(lc_frame_get(h, 1 << 20, &g) == -LC_ERR_PROTO);
	f.len = f.raw_len + 1;		/* grows */
	lc_frame_put(h, &f);
	LC_CHECK(lc_frame_get(h, 1 << 20, &g) == -LC_ERR_PROTO);
	f.len = 0;			/* empty */
	lc_frame_put(h, &f);
	LC_CHECK(lc_frame_get(h, 1 << 20, &g) == -LC_ERR_PROTO);
	f.len = 10;
	f.raw_len = 0;
	lc_frame_put(h, &f);
	LC_CHECK(lc_frame_get(h, 1 << 20, &g) == -LC_ERR_PROTO);
	f.raw_len = 4096;
	f.offset = (uint64_t)INT64_MAX - 100;	/* overflows with raw_len */
	lc_frame_put(h, &f);
	LC_CHECK(lc_frame_get(h, 1 << 20, &g) == -LC_ERR_PROTO);
	f.offset = 0;
	f.flags = LC_FRAME_F_ZLIB | 2;	/* unknown flag next to it */
	lc_frame_put(h, &f);
	LC_CHECK(lc_frame_get(h, 1 << 20, &g) == -LC_ERR_PROTO);
	/* the flag on anything but DATA */
	memset(&f, 0, sizeof(f));
	f.type = LC_FRAME_HOLE;
	f.flags = LC_FRAME_F_ZLIB;
	f.file_id = 2;
	f.raw_len = 4096;
	lc_frame_put(h, &f);
	LC_CHECK(lc_frame_get(h, 1 << 20, &g) == -LC_ERR_PROTO);
	memset(&f, 0, sizeof(f));
	f.type = LC_FRAME_END;
	f.flags = LC_FRAME_F_ZLIB;
	lc_frame_put(h, &f);
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
	LC_CHECK(T_SAME(&f, &g));
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

/* ---- protocol 2: trees ---- */

LC_TEST(relname_ok)
{
	static const char *good[] = {
		"a", "a/b", "a/b/c", "...", "a/...", ".a", "a.", "..a", "a..",
		"a/.b/c", "with space", "a b/c d", "new\nline", "tab\there",
		"\xff", "a/\xff\xfe/b", "-", "~", "a\\b", "\x01\x7f",
	};
	static const char *bad[] = {
		"", "/", "/a", "a/", "a//b", "//", ".", "..", "./a", "../a",
		"a/.", "a/..", "a/./b", "a/../b", "a/b/", "/a/b", "a///b",
		"./", "../", "/..", "a/b/..", "a/b/.", "src/../../evil",
		"src//x",
	};
	char longname[LC_PATH_MAX];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (!lc_relname_ok(good[i]))
			fprintf(stderr, "good name refused: \"%s\"\n", good[i]);
		LC_CHECK(lc_relname_ok(good[i]) == 1);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (lc_relname_ok(bad[i]))
			fprintf(stderr, "bad name taken: \"%s\"\n", bad[i]);
		LC_CHECK(lc_relname_ok(bad[i]) == 0);
	}
	/* long names: the check is about components, not length */
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	LC_CHECK(lc_relname_ok(longname) == 1);
	for (size_t i = 1; i + 1 < sizeof(longname) - 1; i += 2)
		longname[i] = '/';
	LC_CHECK(lc_relname_ok(longname) == 1);	/* x/x/x/.../x */
	longname[sizeof(longname) - 2] = '/';
	LC_CHECK(lc_relname_ok(longname) == 0);	/* trailing '/' */
}

static int
sgn(int v)
{
	return (v > 0) - (v < 0);
}

LC_TEST(relname_cmp_is_preorder)
{
	/* pre-order with each directory's entries sorted by bytes */
	static const char *order[] = {
		"a", "a/b", "a/b/c", "a/b/d", "a/b0", "a/z", "a.b", "a0",
		"b", "b/\x01", "b/a", "b/a/a", "b/ab", "b/\xff", "b\x01",
		"b\xff", "\xff", "\xff/a",
	};
	size_t n = sizeof(order) / sizeof(order[0]);

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			int want = i < j ? -1 : i > j ? 1 : 0;
			int got = sgn(lc_relname_cmp(order[i], order[j]));
			if (got != want)
				fprintf(stderr, "cmp(\"%s\", \"%s\") = %d, "
				    "want %d\n", order[i], order[j], got,
				    want);
			LC_CHECK_EQ_I(got, want);
		}
	LC_CHECK(lc_relname_cmp("a/z", "a.b") < 0);
	LC_CHECK(lc_relname_cmp("a.b", "a/z") > 0);
	LC_CHECK(lc_relname_cmp("a/b", "a/b") == 0);
	LC_CHECK(lc_relname_cmp("", "") == 0);
	LC_CHECK(lc_relname_cmp("", "a") < 0);
	/* bytes compare unsigned: 0xff after every ASCII byte */
	LC_CHECK(lc_relname_cmp("\xff", "z") > 0);
	LC_CHECK(lc_relname_cmp("a/\xff", "a/z") > 0);
}

/* A FILE payload built by hand (no frame header). */
static void
raw_file(struct lc_buf *b, uint32_t id, uint8_t kind, uint32_t mode,
    uint64_t size, const void *name, size_t nl, const void *link, size_t ll)
{
	lc_buf_reset(b);
	LC_CHECK(lc_buf_put_u32(b, id) == 0);
	LC_CHECK(lc_buf_put_u8(b, kind) == 0);
	LC_CHECK(lc_buf_put_u32(b, mode) == 0);
	LC_CHECK(lc_buf_put_u64(b, size) == 0);
	LC_CHECK(lc_buf_put_u64(b, 1700000000) == 0);
	LC_CHECK(lc_buf_put_u32(b, 5) == 0);
	LC_CHECK(lc_buf_put_string(b, name, nl) == 0);
	LC_CHECK(lc_buf_put_string(b, link, ll) == 0);
	LC_CHECK(lc_buf_put_u32(b, 1000) == 0);	/* uid, gid, names */
	LC_CHECK(lc_buf_put_u32(b, 1000) == 0);
	LC_CHECK(lc_buf_put_string(b, "u", 1) == 0);
	LC_CHECK(lc_buf_put_string(b, "g", 1) == 0);
}

/* Encode m, decode it, return the decoder's result (g filled). */
static int
file_rt(const struct lc_msg_file *m, struct lc_msg_file *g)
{
	struct lc_buf b;
	const uint8_t *p;
	size_t n;
	int r;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	LC_CHECK(lc_msg_put_file(&b, m) == 0);
	one_frame(&b, LC_MSG_FILE, &p, &n);
	r = lc_msg_get_file(p, n, g);
	lc_buf_free(&b);
	return r;
}

LC_TEST(file_kinds_and_links)
{
	struct lc_msg_file f, g;
	struct lc_buf b;
	const uint8_t *p;
	size_t n;
	char big[LC_PATH_MAX + 1];

	memset(&f, 0, sizeof(f));
	f.id = 7;
	f.kind = LC_KIND_SYMLINK;
	f.mode = 0777;
	f.mtime_sec = 1700000000;
	f.mtime_nsec = 123;
	snprintf(f.name, sizeof(f.name), "src/d/link");
	snprintf(f.link, sizeof(f.link), "../../..");
	LC_CHECK(file_rt(&f, &g) == 0);
	LC_CHECK(T_SAME(&f, &g));
	/* a link target is data: absolute and ".." are carried as they are */
	snprintf(f.link, sizeof(f.link), "/etc/passwd");
	LC_CHECK(file_rt(&f, &g) == 0);
	LC_CHECK_STR(g.link, "/etc/passwd");
	snprintf(f.link, sizeof(f.link), "a b\n\xff");
	LC_CHECK(file_rt(&f, &g) == 0);
	LC_CHECK_STR(g.link, "a b\n\xff");
	/* the longest target, 4095 bytes */
	memset(f.link, 'l', LC_PATH_MAX - 1);
	f.link[LC_PATH_MAX - 1] = '\0';
	LC_CHECK(file_rt(&f, &g) == 0);
	LC_CHECK(T_SAME(&f, &g));
	/* a symlink without a target */
	memset(f.link, 0, sizeof(f.link));
	LC_CHECK(file_rt(&f, &g) == -LC_ERR_PROTO);
	/* a symlink with a size */
	snprintf(f.link, sizeof(f.link), "x");
	f.size = 1;
	LC_CHECK(file_rt(&f, &g) == -LC_ERR_PROTO);
	f.size = 0;
	/* a regular file or a directory with a link target */
	f.kind = LC_KIND_REG;
	LC_CHECK(file_rt(&f, &g) == -LC_ERR_PROTO);
	f.kind = LC_KIND_DIR;
	LC_CHECK(file_rt(&f, &g) == -LC_ERR_PROTO);
	/* a directory: size 0 only */
	f.link[0] = '\0';
	f.mode = 0755;
	LC_CHECK(file_rt(&f, &g) == 0);
	LC_CHECK(T_SAME(&f, &g));
	f.size = 1;
	LC_CHECK(file_rt(&f, &g) == -LC_ERR_PROTO);
	f.size = 1ULL << 40;
	LC_CHECK(file_rt(&f, &g) == -LC_ERR_PROTO);
	f.size = 0;
	/* unknown kinds */
	f.kind = 0;
	LC_CHECK(file_rt(&f, &g) == -LC_ERR_PROTO);
	f.kind = 5;
	LC_CHECK(file_rt(&f, &g) == -LC_ERR_PROTO);
	/* a stream (issue 14): no size, no link; FILE_LEN says how long */
	f.kind = LC_KIND_PIPE;
	LC_CHECK(file_rt(&f, &g) == 0);
	LC_CHECK(T_SAME(&f, &g));
	f.size = 1;
	LC_CHECK(file_rt(&f, &g) == -LC_ERR_PROTO);
	f.size = 0;
	f.kind = 255;
	LC_CHECK(file_rt(&f, &g) == -LC_ERR_PROTO);
	f.kind = LC_KIND_REG;
	/* id 0, empty name, nanoseconds out of range */
	f.id = 0;
	LC_CHECK(file_rt(&f, &g) == -LC_ERR_PROTO);
	f.id = UINT32_MAX;
	LC_CHECK(file_rt(&f, &g) == 0);
	f.id = 1;
	f.name[0] = '\0';
	LC_CHECK(file_rt(&f, &g) == -LC_ERR_PROTO);
	snprintf(f.name, sizeof(f.name), "a");
	f.mtime_nsec = 1000000000u;
	LC_CHECK(file_rt(&f, &g) == -LC_ERR_PROTO);
	f.mtime_nsec = 0;
	/* a tree name round-trips; whether it is safe is lc_relname_ok's job */
	snprintf(f.name, sizeof(f.name), "src/d/e f\nx\xff");
	LC_CHECK(file_rt(&f, &g) == 0);
	LC_CHECK_STR(g.name, "src/d/e f\nx\xff");

	/* by hand: NUL inside a name or link, over-long strings, trailing */
	lc_buf_init(&b, LC_CTL_MAX + 8);
	raw_file(&b, 1, LC_KIND_REG, 0644, 0, "a", 1, "", 0);
	LC_CHECK(lc_msg_get_file(lc_buf_ptr(&b), lc_buf_len(&b), &g) == 0);
	LC_CHECK(lc_buf_put_u8(&b, 0) == 0);
	LC_CHECK(lc_msg_get_file(lc_buf_ptr(&b), lc_buf_len(&b), &g) ==
	    -LC_ERR_PROTO);
	raw_file(&b, 1, LC_KIND_REG, 0644, 0, "a\0b", 3, "", 0);
	LC_CHECK(lc_msg_get_file(lc_buf_ptr(&b), lc_buf_len(&b), &g) ==
	    -LC_ERR_PROTO);
	raw_file(&b, 1, LC_KIND_SYMLINK, 0777, 0, "a", 1, "x\0y", 3);
	LC_CHECK(lc_msg_get_file(lc_buf_ptr(&b), lc_buf_len(&b), &g) ==
	    -LC_ERR_PROTO);
	memset(big, 'n', sizeof(big));
	raw_file(&b, 1, LC_KIND_REG, 0644, 0, big, LC_PATH_MAX - 1, "", 0);
	LC_CHECK(lc_msg_get_file(lc_buf_ptr(&b), lc_buf_len(&b), &g) == 0);
	raw_file(&b, 1, LC_KIND_REG, 0644, 0, big, LC_PATH_MAX, "", 0);
	LC_CHECK(lc_msg_get_file(lc_buf_ptr(&b), lc_buf_len(&b), &g) ==
	    -LC_ERR_PROTO);
	raw_file(&b, 1, LC_KIND_SYMLINK, 0777, 0, "a", 1, big,
	    LC_PATH_MAX - 1);
	LC_CHECK(lc_msg_get_file(lc_buf_ptr(&b), lc_buf_len(&b), &g) == 0);
	raw_file(&b, 1, LC_KIND_SYMLINK, 0777, 0, "a", 1, big, LC_PATH_MAX);
	LC_CHECK(lc_msg_get_file(lc_buf_ptr(&b), lc_buf_len(&b), &g) ==
	    -LC_ERR_PROTO);
	/* a string length beyond the payload */
	raw_file(&b, 1, LC_KIND_REG, 0644, 0, "a", 1, "", 0);
	n = lc_buf_len(&b);
	p = lc_buf_ptr(&b);
	((uint8_t *)p)[n - 2] = 2;	/* group length 2, one byte */
	LC_CHECK(lc_msg_get_file(p, n, &g) == -LC_ERR_PROTO);
	/* every truncation of a symlink FILE */
	raw_file(&b, 9, LC_KIND_SYMLINK, 0777, 0, "s/l", 3, "/t", 2);
	for (size_t cut = 0; cut < lc_buf_len(&b); cut++)
		LC_CHECK(lc_msg_get_file(lc_buf_ptr(&b), cut, &g) ==
		    -LC_ERR_PROTO);
	LC_CHECK(lc_msg_get_file(lc_buf_ptr(&b), lc_buf_len(&b), &g) == 0);
	lc_buf_free(&b);
}

LC_TEST(src_credit)
{
	struct lc_buf b;
	struct lc_msg_src_credit c, d;
	const uint8_t *p;
	size_t n;
	uint8_t raw[5] = { 0, 0, 2, 1, 0 };

	lc_buf_init(&b, LC_CTL_MAX + 8);
	for (uint32_t v = 0; v < 4; v++) {
		c.upto = v == 0 ? 0 : v == 1 ? 1 + LC_FILES_INFLIGHT :
		    v == 2 ? 0x80000000u : UINT32_MAX;
		lc_buf_reset(&b);
		LC_CHECK(lc_msg_put_src_credit(&b, &c) == 0);
		one_frame(&b, LC_MSG_SRC_CREDIT, &p, &n);
		LC_CHECK_EQ_U(n, 4);
		LC_CHECK(lc_msg_get_src_credit(p, n, &d) == 0);
		LC_CHECK_EQ_U(d.upto, c.upto);
		for (size_t cut = 0; cut < n; cut++)
			LC_CHECK(lc_msg_get_src_credit(p, cut, &d) ==
			    -LC_ERR_PROTO);
	}
	LC_CHECK(lc_msg_get_src_credit(raw, 4, &d) == 0);
	LC_CHECK_EQ_U(d.upto, 0x201);
	LC_CHECK(lc_msg_get_src_credit(raw, 5, &d) == -LC_ERR_PROTO);
	LC_CHECK_STR(lc_msg_name(LC_MSG_SRC_CREDIT), "SRC_CREDIT");
	lc_buf_free(&b);
}

LC_TEST(file_skip)
{
	struct lc_buf b;
	struct lc_msg_file_skip k, g;
	const uint8_t *p;
	size_t n;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	for (uint8_t why = LC_SKIP_UPTODATE; why <= LC_SKIP_FAILED; why++) {
		memset(&k, 0, sizeof(k));
		k.id = why == 1 ? 1 : why == 2 ? 513 : UINT32_MAX;
		k.why = why;
		if (why == LC_SKIP_FAILED)
			snprintf(k.msg, sizeof(k.msg), "t/a: Permission "
			    "denied \xff\n");
		lc_buf_reset(&b);
		LC_CHECK(lc_msg_put_file_skip(&b, &k) == 0);
		one_frame(&b, LC_MSG_FILE_SKIP, &p, &n);
		LC_CHECK(lc_msg_get_file_skip(p, n, &g) == 0);
		LC_CHECK(memcmp(&k, &g, sizeof(k)) == 0);
		for (size_t cut = 0; cut < n; cut++)
			LC_CHECK(lc_msg_get_file_skip(p, cut, &g) ==
			    -LC_ERR_PROTO);
	}
	/* bad reasons, id 0 */
	memset(&k, 0, sizeof(k));
	k.id = 1;
	for (unsigned why = 0; why < 256; why++) {
		if (why >= LC_SKIP_UPTODATE && why <= LC_SKIP_DRY_SAME)
			continue;
		k.why = (uint8_t)why;
		lc_buf_reset(&b);
		LC_CHECK(lc_msg_put_file_skip(&b, &k) == 0);
		one_frame(&b, LC_MSG_FILE_SKIP, &p, &n);
		LC_CHECK(lc_msg_get_file_skip(p, n, &g) == -LC_ERR_PROTO);
	}
	k.why = LC_SKIP_EXISTS;
	k.id = 0;
	lc_buf_reset(&b);
	LC_CHECK(lc_msg_put_file_skip(&b, &k) == 0);
	one_frame(&b, LC_MSG_FILE_SKIP, &p, &n);
	LC_CHECK(lc_msg_get_file_skip(p, n, &g) == -LC_ERR_PROTO);
	/*
	 * why 1 names what the sink updated: known words, each once, in
	 * order; why 2 says nothing.  Everything else is refused.
	 */
	{
		static const struct {
			uint8_t why;
			const char *msg;
			int ok;
			unsigned set;
		} v[] = {
			{ 1, "mode", 1, LC_SKIP_SET_MODE },
			{ 1, "times", 1, LC_SKIP_SET_TIMES },
			{ 1, "mode,owner,times", 1, 7 },
			{ 1, "owner,times", 1, 6 },
			{ 1, "times,mode", 0, 0 },
			{ 1, "mode,mode", 0, 0 },
			{ 1, "mode,", 0, 0 },
			{ 1, ",mode", 0, 0 },
			{ 1, "modes", 0, 0 },
			{ 1, "mod", 0, 0 },
			{ 1, "Permission denied", 0, 0 },
			{ 2, "mode", 0, 0 },
		};
		char said[32];
		unsigned set;

		for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
			memset(&k, 0, sizeof(k));
			k.id = 7;
			k.why = v[i].why;
			snprintf(k.msg, sizeof(k.msg), "%s", v[i].msg);
			lc_buf_reset(&b);
			LC_CHECK(lc_msg_put_file_skip(&b, &k) == 0);
			one_frame(&b, LC_MSG_FILE_SKIP, &p, &n);
			LC_CHECK_EQ_I(lc_msg_get_file_skip(p, n, &g),
			    v[i].ok ? 0 : -LC_ERR_PROTO);
			if (!v[i].ok)
				continue;
			LC_CHECK(lc_skip_set_get(g.msg, &set) == 0);
			LC_CHECK_EQ_U(set, v[i].set);
			lc_skip_set_put(set, said, sizeof(said));
			LC_CHECK_STR(said, v[i].msg);
		}
		lc_skip_set_put(0, said, sizeof(said));
		LC_CHECK_STR(said, "");
	}
	/* trailing byte */
	memset(&k, 0, sizeof(k));
	k.why = LC_SKIP_EXISTS;
	k.id = 2;
	lc_buf_reset(&b);
	LC_CHECK(lc_msg_put_file_skip(&b, &k) == 0);
	LC_CHECK(lc_buf_put_u8(&b, 0) == 0);
	LC_CHECK(lc_msg_get_file_skip(lc_buf_ptr(&b) + 5, lc_buf_len(&b) - 5,
	    &g) == -LC_ERR_PROTO);
	LC_CHECK(lc_msg_get_file_skip(lc_buf_ptr(&b) + 5, lc_buf_len(&b) - 6,
	    &g) == 0);
	/* a message with a NUL, one too long for the struct */
	lc_buf_reset(&b);
	LC_CHECK(lc_buf_put_u32(&b, 1) == 0);
	LC_CHECK(lc_buf_put_u8(&b, LC_SKIP_FAILED) == 0);
	LC_CHECK(lc_buf_put_string(&b, "a\0b", 3) == 0);
	LC_CHECK(lc_msg_get_file_skip(lc_buf_ptr(&b), lc_buf_len(&b), &g) ==
	    -LC_ERR_PROTO);
	{
		char big[sizeof(k.msg)];
		memset(big, 'm', sizeof(big));
		lc_buf_reset(&b);
		LC_CHECK(lc_buf_put_u32(&b, 1) == 0);
		LC_CHECK(lc_buf_put_u8(&b, LC_SKIP_FAILED) == 0);
		LC_CHECK(lc_buf_put_string(&b, big, sizeof(big)) == 0);
		LC_CHECK(lc_msg_get_file_skip(lc_buf_ptr(&b), lc_buf_len(&b),
		    &g) == -LC_ERR_PROTO);
	}
	LC_CHECK_STR(lc_msg_name(LC_MSG_FILE_SKIP), "FILE_SKIP");
	lc_buf_free(&b);
}

LC_TEST(file_abort)
{
	struct lc_buf b;
	struct lc_msg_file_abort f, g;
	const uint8_t *p;
	size_t n;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	memset(&f, 0, sizeof(f));
	f.id = 7;
	snprintf(f.msg, sizeof(f.msg), "/data/x: Permission denied");
	LC_CHECK(lc_msg_put_file_abort(&b, &f) == 0);
	one_frame(&b, LC_MSG_FILE_ABORT, &p, &n);
	LC_CHECK(lc_msg_get_file_abort(p, n, &g) == 0);
	LC_CHECK_EQ_U(g.id, 7);
	LC_CHECK_STR(g.msg, f.msg);
	for (size_t cut = 0; cut < n; cut++)
		LC_CHECK(lc_msg_get_file_abort(p, cut, &g) == -LC_ERR_PROTO);
	LC_CHECK(lc_buf_put_u8(&b, 0) == 0);	/* trailing bytes */
	LC_CHECK(lc_msg_get_file_abort(p, n + 1, &g) == -LC_ERR_PROTO);
	lc_buf_reset(&b);
	f.id = 0;	/* no file 0 */
	LC_CHECK(lc_msg_put_file_abort(&b, &f) == 0);
	one_frame(&b, LC_MSG_FILE_ABORT, &p, &n);
	LC_CHECK(lc_msg_get_file_abort(p, n, &g) == -LC_ERR_PROTO);
	lc_buf_free(&b);
}

LC_TEST(file_fail)
{
	static const char *bad[] = {
		"", "/etc/passwd", "a/", "a//b", ".", "..", "a/./b", "a/../b",
		"src/../../evil",
	};
	struct lc_buf b;
	struct lc_msg_file_fail f, g;
	const uint8_t *p;
	size_t n;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	memset(&f, 0, sizeof(f));
	snprintf(f.name, sizeof(f.name), "src/d/e f\n\xff");
	snprintf(f.msg, sizeof(f.msg), "open: Permission denied");
	LC_CHECK(lc_msg_put_file_fail(&b, &f) == 0);
	one_frame(&b, LC_MSG_FILE_FAIL, &p, &n);
	LC_CHECK(lc_msg_get_file_fail(p, n, &g) == 0);
	LC_CHECK(T_SAME(&f, &g));
	for (size_t cut = 0; cut < n; cut++)
		LC_CHECK(lc_msg_get_file_fail(p, cut, &g) == -LC_ERR_PROTO);
	/* an empty message is fine */
	lc_buf_reset(&b);
	f.msg[0] = '\0';
	LC_CHECK(lc_msg_put_file_fail(&b, &f) == 0);
	one_frame(&b, LC_MSG_FILE_FAIL, &p, &n);
	LC_CHECK(lc_msg_get_file_fail(p, n, &g) == 0);
	/* trailing bytes */
	LC_CHECK(lc_buf_put_u8(&b, 0) == 0);
	LC_CHECK(lc_msg_get_file_fail(p, n + 1, &g) == -LC_ERR_PROTO);
	/* names that are not relative names */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		lc_buf_reset(&b);
		snprintf(f.name, sizeof(f.name), "%s", bad[i]);
		LC_CHECK(lc_msg_put_file_fail(&b, &f) == 0);
		one_frame(&b, LC_MSG_FILE_FAIL, &p, &n);
		if (lc_msg_get_file_fail(p, n, &g) != -LC_ERR_PROTO)
			fprintf(stderr, "FILE_FAIL \"%s\" taken\n", bad[i]);
		LC_CHECK(lc_msg_get_file_fail(p, n, &g) == -LC_ERR_PROTO);
	}
	LC_CHECK_STR(lc_msg_name(LC_MSG_FILE_FAIL), "FILE_FAIL");
	lc_buf_free(&b);
}

/*
 * SRC_ENTRY: a name without flags, or flag END with the name empty; END
 * with a name, no END with none, or a flag outside the mask: rejected.
 */
LC_TEST(src_entry_checks)
{
	struct lc_buf b;
	struct lc_msg_src_entry m, m2;
	const uint8_t *p;
	size_t n;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	memset(&m, 0, sizeof(m));
	snprintf(m.name, sizeof(m.name), "dir/a b/c");
	LC_CHECK(lc_msg_put_src_entry(&b, &m) == 0);
	one_frame(&b, LC_MSG_SRC_ENTRY, &p, &n);
	LC_CHECK(lc_msg_get_src_entry(p, n, &m2) == 0);
	LC_CHECK(memcmp(&m, &m2, sizeof(m)) == 0);
	memset(&m, 0, sizeof(m));
	m.flags = LC_ENTRY_END;
	lc_buf_reset(&b);
	LC_CHECK(lc_msg_put_src_entry(&b, &m) == 0);
	one_frame(&b, LC_MSG_SRC_ENTRY, &p, &n);
	LC_CHECK(lc_msg_get_src_entry(p, n, &m2) == 0);
	LC_CHECK_EQ_U(m2.flags, LC_ENTRY_END);
	LC_CHECK_STR(m2.name, "");
	/* END with a name */
	snprintf(m.name, sizeof(m.name), "dir/a");
	lc_buf_reset(&b);
	LC_CHECK(lc_msg_put_src_entry(&b, &m) == 0);
	one_frame(&b, LC_MSG_SRC_ENTRY, &p, &n);
	LC_CHECK(lc_msg_get_src_entry(p, n, &m2) == -LC_ERR_PROTO);
	/* neither END nor a name */
	memset(&m, 0, sizeof(m));
	lc_buf_reset(&b);
	LC_CHECK(lc_msg_put_src_entry(&b, &m) == 0);
	one_frame(&b, LC_MSG_SRC_ENTRY, &p, &n);
	LC_CHECK(lc_msg_get_src_entry(p, n, &m2) == -LC_ERR_PROTO);
	/* every flag outside the mask, with a name and with the end */
	LC_CHECK_EQ_U(LC_ENTRY_END, LC_ENTRY_MASK);
	for (int bit = 1; bit < 32; bit++) {
		for (int end = 0; end < 2; end++) {
			m.flags = (1u << bit) | (end ? LC_ENTRY_END : 0);
			snprintf(m.name, sizeof(m.name), "%s", end ? "" : "a");
			lc_buf_reset(&b);
			LC_CHECK(lc_msg_put_src_entry(&b, &m) == 0);
			one_frame(&b, LC_MSG_SRC_ENTRY, &p, &n);
			LC_CHECK(lc_msg_get_src_entry(p, n, &m2) ==
			    -LC_ERR_PROTO);
		}
	}
	LC_CHECK_STR(lc_msg_name(LC_MSG_SRC_ENTRY), "SRC_ENTRY");
	LC_CHECK_EQ_I(lc_msg_owner(LC_MSG_SRC_ENTRY), LC_OWNER_SOURCE);
	lc_buf_free(&b);
}

/* SRC_PART and SRC_AVAIL (issue 25): their bodies' checks. */
LC_TEST(src_part_and_avail_checks)
{
	struct lc_buf b;
	struct lc_msg_src_part m, m2;
	struct lc_msg_src_avail a, a2;
	const uint8_t *p;
	size_t n;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	memset(&m, 0, sizeof(m));
	snprintf(m.name, sizeof(m.name), "dir/a b/c");
	m.size = (uint64_t)INT64_MAX;
	LC_CHECK(lc_msg_put_src_part(&b, &m) == 0);
	one_frame(&b, LC_MSG_SRC_PART, &p, &n);
	LC_CHECK(lc_msg_get_src_part(p, n, &m2) == 0);
	LC_CHECK(memcmp(&m, &m2, sizeof(m)) == 0);
	m.size = 0;	/* an empty file is a size */
	lc_buf_reset(&b);
	LC_CHECK(lc_msg_put_src_part(&b, &m) == 0);
	one_frame(&b, LC_MSG_SRC_PART, &p, &n);
	LC_CHECK(lc_msg_get_src_part(p, n, &m2) == 0);
	LC_CHECK_EQ_U(m2.size, 0);
	/* a size past INT64_MAX */
	m.size = (uint64_t)INT64_MAX + 1;
	lc_buf_reset(&b);
	LC_CHECK(lc_msg_put_src_part(&b, &m) == 0);
	one_frame(&b, LC_MSG_SRC_PART, &p, &n);
	LC_CHECK(lc_msg_get_src_part(p, n, &m2) == -LC_ERR_PROTO);
	/* no name */
	m.size = 10;
	m.name[0] = '\0';
	lc_buf_reset(&b);
	LC_CHECK(lc_msg_put_src_part(&b, &m) == 0);
	one_frame(&b, LC_MSG_SRC_PART, &p, &n);
	LC_CHECK(lc_msg_get_src_part(p, n, &m2) == -LC_ERR_PROTO);
	LC_CHECK_STR(lc_msg_name(LC_MSG_SRC_PART), "SRC_PART");
	LC_CHECK_EQ_I(lc_msg_owner(LC_MSG_SRC_PART), LC_OWNER_SOURCE);

	memset(&a, 0, sizeof(a));
	a.id = 1;
	a.avail = (uint64_t)INT64_MAX;
	lc_buf_reset(&b);
	LC_CHECK(lc_msg_put_src_avail(&b, &a) == 0);
	one_frame(&b, LC_MSG_SRC_AVAIL, &p, &n);
	LC_CHECK(lc_msg_get_src_avail(p, n, &a2) == 0);
	LC_CHECK(memcmp(&a, &a2, sizeof(a)) == 0);
	a.avail = 0;	/* nothing final yet */
	lc_buf_reset(&b);
	LC_CHECK(lc_msg_put_src_avail(&b, &a) == 0);
	one_frame(&b, LC_MSG_SRC_AVAIL, &p, &n);
	LC_CHECK(lc_msg_get_src_avail(p, n, &a2) == 0);
	/* an avail past INT64_MAX */
	a.avail = (uint64_t)INT64_MAX + 1;
	lc_buf_reset(&b);
	LC_CHECK(lc_msg_put_src_avail(&b, &a) == 0);
	one_frame(&b, LC_MSG_SRC_AVAIL, &p, &n);
	LC_CHECK(lc_msg_get_src_avail(p, n, &a2) == -LC_ERR_PROTO);
	/* id 0 */
	a.avail = 5;
	a.id = 0;
	lc_buf_reset(&b);
	LC_CHECK(lc_msg_put_src_avail(&b, &a) == 0);
	one_frame(&b, LC_MSG_SRC_AVAIL, &p, &n);
	LC_CHECK(lc_msg_get_src_avail(p, n, &a2) == -LC_ERR_PROTO);
	LC_CHECK_STR(lc_msg_name(LC_MSG_SRC_AVAIL), "SRC_AVAIL");
	LC_CHECK_EQ_I(lc_msg_owner(LC_MSG_SRC_AVAIL), LC_OWNER_SOURCE);
	LC_CHECK_EQ_U(LC_HELLO_FOLLOW, 0x200u);
	lc_buf_free(&b);
}

LC_TEST(src_add_and_sink_target_flags)
{
	struct lc_buf b;
	struct lc_msg_src_add a, a2;
	struct lc_msg_sink_target t, t2;
	const uint8_t *p;
	size_t n;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	memset(&a, 0, sizeof(a));
	snprintf(a.path, sizeof(a.path), "/data/src/");
	for (uint32_t fl = 0; fl <= LC_ADD_MASK; fl++) {
		a.flags = fl;
		lc_buf_reset(&b);
		LC_CHECK(lc_msg_put_src_add(&b, &a) == 0);
		one_frame(&b, LC_MSG_SRC_ADD, &p, &n);
		LC_CHECK(lc_msg_get_src_add(p, n, &a2) == 0);
		LC_CHECK(memcmp(&a, &a2, sizeof(a)) == 0);
	}
	LC_CHECK_EQ_U(LC_ADD_RECURSIVE | LC_ADD_FOLLOW | LC_ADD_CONTENTS |
	    LC_ADD_NAMES | LC_ADD_STDIN | LC_ADD_PROGRAM | LC_ADD_FED,
	    LC_ADD_MASK);
	for (int bit = 7; bit < 32; bit++) {
		a.flags = LC_ADD_RECURSIVE | (1u << bit);
		lc_buf_reset(&b);
		LC_CHECK(lc_msg_put_src_add(&b, &a) == 0);
		one_frame(&b, LC_MSG_SRC_ADD, &p, &n);
		LC_CHECK(lc_msg_get_src_add(p, n, &a2) == -LC_ERR_PROTO);
	}
	a.flags = LC_ADD_RECURSIVE;
	a.path[0] = '\0';
	lc_buf_reset(&b);
	LC_CHECK(lc_msg_put_src_add(&b, &a) == 0);
	one_frame(&b, LC_MSG_SRC_ADD, &p, &n);
	LC_CHECK(lc_msg_get_src_add(p, n, &a2) == -LC_ERR_PROTO);

	memset(&t, 0, sizeof(t));
	snprintf(t.target, sizeof(t.target), "/t/");
	t.flags = LC_TGT_MASK;
	t.inflight = LC_FILES_INFLIGHT;
	for (size_t i = 0; i < sizeof(t.takeover); i++)
		t.takeover[i] = (uint8_t)(0xc0 + i);	/* after the target */
	LC_CHECK_EQ_U(LC_TGT_FORCE | LC_TGT_WANT_DIR | LC_TGT_RESUME |
	    LC_TGT_NO_FSYNC | LC_TGT_NO_SPACE_CHECK | LC_TGT_PRESERVE |
	    LC_TGT_UPDATE | LC_TGT_SKIP_EXISTING | LC_TGT_TREE | LC_TGT_OWNER |
	    LC_TGT_NUMERIC_IDS | LC_TGT_SETID | LC_TGT_STDOUT | LC_TGT_PROGRAM |
	    LC_TGT_DELTA | LC_TGT_DELETE | LC_TGT_DRYRUN | LC_TGT_HASHES,
	    LC_TGT_MASK);
	LC_CHECK(lc_msg_put_sink_target(&b, &t) == 0);
	lc_buf_reset(&b);
	LC_CHECK(lc_msg_put_sink_target(&b, &t) == 0);
	one_frame(&b, LC_MSG_SINK_TARGET, &p, &n);
	LC_CHECK(lc_msg_get_sink_target(p, n, &t2) == 0);
	LC_CHECK(memcmp(&t, &t2, sizeof(t)) == 0);
	for (size_t cut = 0; cut < n; cut++)
		LC_CHECK(lc_msg_get_sink_target(p, cut, &t2) == -LC_ERR_PROTO);
	LC_CHECK(lc_buf_put_u8(&b, 0) == 0);
	LC_CHECK(lc_msg_get_sink_target(p, n + 1, &t2) == -LC_ERR_PROTO);
	for (int bit = 18; bit < 32; bit++) {
		t.flags = LC_TGT_TREE | (1u << bit);
		lc_buf_reset(&b);
		LC_CHECK(lc_msg_put_sink_target(&b, &t) == 0);
		one_frame(&b, LC_MSG_SINK_TARGET, &p, &n);
		LC_CHECK(lc_msg_get_sink_target(p, n, &t2) == -LC_ERR_PROTO);
	}
	lc_buf_free(&b);
}

/* The takeover exchange (a local socket): round trips and rejections. */
LC_TEST(takeover_exchange)
{
	uint8_t nonce[LC_TAKEOVER_NONCE_LEN], n2[LC_TAKEOVER_NONCE_LEN], v;
	struct lc_takeover_req q, q2;
	struct lc_buf b;
	const uint8_t *p;
	size_t n;

	lc_buf_init(&b, LC_TAKEOVER_REQUEST_MAX + 8);
	memset(nonce, 0x5c, sizeof(nonce));
	LC_CHECK(lc_takeover_put_challenge(&b, nonce) == 0);
	p = lc_buf_ptr(&b);
	n = lc_buf_len(&b);
	LC_CHECK_EQ_U(n, LC_TAKEOVER_CHALLENGE_LEN);
	LC_CHECK(lc_takeover_get_challenge(p, n, n2) == 0);
	LC_CHECK(memcmp(nonce, n2, sizeof(n2)) == 0);
	for (size_t cut = 0; cut < n; cut++)
		LC_CHECK(lc_takeover_get_challenge(p, cut, n2) ==
		    -LC_ERR_PROTO);
	LC_CHECK(lc_buf_put_u8(&b, 0) == 0);
	LC_CHECK(lc_takeover_get_challenge(lc_buf_ptr(&b), n + 1, n2) ==
	    -LC_ERR_PROTO);
	lc_buf_reset(&b);
	LC_CHECK(lc_takeover_put_challenge(&b, nonce) == 0);
	((uint8_t *)(uintptr_t)lc_buf_ptr(&b))[4] = 2;	/* version 2 */
	LC_CHECK(lc_takeover_get_challenge(lc_buf_ptr(&b), n, n2) ==
	    -LC_ERR_PROTO);

	memset(&q, 0, sizeof(q));
	memset(q.mac, 0x3e, sizeof(q.mac));
	snprintf(q.root, sizeof(q.root), "/srv/backup");
	lc_buf_reset(&b);
	LC_CHECK(lc_takeover_put_request(&b, &q) == 0);
	p = lc_buf_ptr(&b);
	n = lc_buf_len(&b);
	LC_CHECK(lc_takeover_get_request(p, n, &q2) == 0);
	LC_CHECK(memcmp(&q, &q2, sizeof(q)) == 0);
	for (size_t cut = 0; cut < n; cut++)
		LC_CHECK(lc_takeover_get_request(p, cut, &q2) == -LC_ERR_PROTO);
	LC_CHECK(lc_buf_put_u8(&b, 0) == 0);
	LC_CHECK(lc_takeover_get_request(lc_buf_ptr(&b), n + 1, &q2) ==
	    -LC_ERR_PROTO);
	q.root[0] = '\0';	/* unrestricted: an empty root */
	lc_buf_reset(&b);
	LC_CHECK(lc_takeover_put_request(&b, &q) == 0);
	LC_CHECK(lc_takeover_get_request(lc_buf_ptr(&b), lc_buf_len(&b),
	    &q2) == 0);
	LC_CHECK_STR(q2.root, "");

	for (unsigned verdict = 0; verdict < 6; verdict++) {
		lc_buf_reset(&b);
		LC_CHECK(lc_takeover_put_answer(&b, (uint8_t)verdict) == 0);
		LC_CHECK_EQ_U(lc_buf_len(&b), LC_TAKEOVER_ANSWER_LEN);
		LC_CHECK_EQ_I(lc_takeover_get_answer(lc_buf_ptr(&b),
		    lc_buf_len(&b), &v), verdict >= LC_TAKEOVER_YES &&
		    verdict <= LC_TAKEOVER_NO_ROOT ? 0 : -LC_ERR_PROTO);
	}
	LC_CHECK(lc_takeover_get_answer((const uint8_t *)"LCTA", 4, &v) ==
	    -LC_ERR_PROTO);
	LC_CHECK(lc_takeover_get_answer((const uint8_t *)"LCTQ\1", 5, &v) ==
	    -LC_ERR_PROTO);
	lc_buf_free(&b);
}

/* FILE_LEN (issue 14): round trip, bounds, truncation, trailing bytes. */
LC_TEST(file_len)
{
	struct lc_buf b;
	struct lc_msg_file_len m, m2;
	const uint8_t *p;
	size_t n;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	m.id = 7;
	m.length = LC_PIPE_MAX;
	LC_CHECK(lc_msg_put_file_len(&b, &m) == 0);
	one_frame(&b, LC_MSG_FILE_LEN, &p, &n);
	LC_CHECK(lc_msg_get_file_len(p, n, &m2) == 0);
	LC_CHECK(m2.id == 7 && m2.length == LC_PIPE_MAX);
	for (size_t cut = 0; cut < n; cut++)
		LC_CHECK(lc_msg_get_file_len(p, cut, &m2) == -LC_ERR_PROTO);
	LC_CHECK(lc_buf_put_u8(&b, 0) == 0);
	LC_CHECK(lc_msg_get_file_len(p, n + 1, &m2) == -LC_ERR_PROTO);
	m.length = LC_PIPE_MAX + 1;	/* beyond what a sink takes */
	lc_buf_reset(&b);
	LC_CHECK(lc_msg_put_file_len(&b, &m) == 0);
	one_frame(&b, LC_MSG_FILE_LEN, &p, &n);
	LC_CHECK(lc_msg_get_file_len(p, n, &m2) == -LC_ERR_PROTO);
	m.length = 0;
	m.id = 0;
	lc_buf_reset(&b);
	LC_CHECK(lc_msg_put_file_len(&b, &m) == 0);
	one_frame(&b, LC_MSG_FILE_LEN, &p, &n);
	LC_CHECK(lc_msg_get_file_len(p, n, &m2) == -LC_ERR_PROTO);
	LC_CHECK(strcmp(lc_msg_name(LC_MSG_FILE_LEN), "FILE_LEN") == 0);
	lc_buf_free(&b);
}

/* ---- version 3: DIAL, counted port lists, reverse CONNECT, quiet_s ---- */

/* A DIAL payload by hand: address, streams, nports ports, extra bytes. */
static void
t_dial_raw(struct lc_buf *b, const char *addr, uint32_t streams,
    uint32_t nports, uint16_t bad_at, uint32_t extra)
{
	lc_buf_reset(b);
	LC_CHECK(lc_buf_put_cstring(b, addr) == 0);
	LC_CHECK(lc_buf_put_u32(b, streams) == 0);
	for (uint32_t i = 0; i < nports; i++)
		LC_CHECK(lc_buf_put_u16(b, i + 1 == bad_at ? 0 :
		    (uint16_t)(50000 + i)) == 0);
	for (uint32_t i = 0; i < extra; i++)
		LC_CHECK(lc_buf_put(b, "\0", 1) == 0);
}

LC_TEST(dial_roundtrip_and_rejections)
{
	static const char *addrs[] = { "192.0.2.7", "2001:db8::1" };
	struct lc_buf b;
	struct lc_msg_dial d, g;
	const uint8_t *p;
	size_t n;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	for (size_t a = 0; a < 2; a++) {
		for (uint32_t streams = 1; streams <= LC_MAX_STREAMS;
		    streams += LC_MAX_STREAMS - 1) {
			lc_buf_reset(&b);
			memset(&d, 0, sizeof(d));
			snprintf(d.addr, sizeof(d.addr), "%s", addrs[a]);
			d.streams = streams;
			for (uint32_t i = 0; i < streams; i++)
				d.ports[i] = (uint16_t)(1024 + 3 * i);
			LC_CHECK(lc_msg_put_dial(&b, &d) == 0);
			one_frame(&b, LC_MSG_DIAL, &p, &n);
			LC_CHECK(lc_msg_get_dial(p, n, &g) == 0);
			LC_CHECK(T_SAME(&d, &g));
			/* every truncation is rejected */
			for (size_t cut = 0; cut < n; cut++)
				LC_CHECK(lc_msg_get_dial(p, cut, &g) ==
				    -LC_ERR_PROTO);
		}
	}
	/* the encoder refuses stream counts outside 1 .. LC_MAX_STREAMS */
	lc_buf_reset(&b);
	d.streams = 0;
	LC_CHECK(lc_msg_put_dial(&b, &d) == -LC_ERR_TOOBIG);
	lc_buf_reset(&b);
	d.streams = LC_MAX_STREAMS + 1;
	LC_CHECK(lc_msg_put_dial(&b, &d) == -LC_ERR_TOOBIG);

	/* the decoder: a good one by hand first, then each fault alone */
	t_dial_raw(&b, "10.0.0.1", 3, 3, 0, 0);
	LC_CHECK(lc_msg_get_dial(lc_buf_ptr(&b), lc_buf_len(&b), &g) == 0);
	LC_CHECK_STR(g.addr, "10.0.0.1");
	LC_CHECK_EQ_U(g.streams, 3);
	LC_CHECK_EQ_U(g.ports[2], 50002);
	t_dial_raw(&b, "10.0.0.1", 0, 0, 0, 0);		/* no streams */
	LC_CHECK(lc_msg_get_dial(lc_buf_ptr(&b), lc_buf_len(&b), &g) ==
	    -LC_ERR_PROTO);
	t_dial_raw(&b, "10.0.0.1", LC_MAX_STREAMS + 1, LC_MAX_STREAMS + 1,
	    0, 0);					/* too many */
	LC_CHECK(lc_msg_get_dial(lc_buf_ptr(&b), lc_buf_len(&b), &g) ==
	    -LC_ERR_PROTO);
	t_dial_raw(&b, "10.0.0.1", UINT32_MAX, 0, 0, 0);
	LC_CHECK(lc_msg_get_dial(lc_buf_ptr(&b), lc_buf_len(&b), &g) ==
	    -LC_ERR_PROTO);
	for (uint16_t at = 1; at <= 3; at++) {		/* a port 0 */
		t_dial_raw(&b, "10.0.0.1", 3, 3, at, 0);
		LC_CHECK(lc_msg_get_dial(lc_buf_ptr(&b), lc_buf_len(&b),
		    &g) == -LC_ERR_PROTO);
	}
	t_dial_raw(&b, "", 3, 3, 0, 0);			/* no address */
	LC_CHECK(lc_msg_get_dial(lc_buf_ptr(&b), lc_buf_len(&b), &g) ==
	    -LC_ERR_PROTO);
	t_dial_raw(&b, "10.0.0.1", 3, 2, 0, 0);		/* a port short */
	LC_CHECK(lc_msg_get_dial(lc_buf_ptr(&b), lc_buf_len(&b), &g) ==
	    -LC_ERR_PROTO);
	t_dial_raw(&b, "10.0.0.1", 3, 4, 0, 0);		/* a port more */
	LC_CHECK(lc_msg_get_dial(lc_buf_ptr(&b), lc_buf_len(&b), &g) ==
	    -LC_ERR_PROTO);
	t_dial_raw(&b, "10.0.0.1", 3, 3, 0, 1);		/* trailing byte */
	LC_CHECK(lc_msg_get_dial(lc_buf_ptr(&b), lc_buf_len(&b), &g) ==
	    -LC_ERR_PROTO);
	/* an address longer than LC_ADDR_MAX - 1 does not fit */
	{
		char big[LC_ADDR_MAX + 1];
		memset(big, '1', LC_ADDR_MAX);
		big[LC_ADDR_MAX] = '\0';
		t_dial_raw(&b, big, 1, 1, 0, 0);
		LC_CHECK(lc_msg_get_dial(lc_buf_ptr(&b), lc_buf_len(&b),
		    &g) == -LC_ERR_PROTO);
	}
	lc_buf_free(&b);
}

/* LISTENING by hand: streams, window, block, quota, nports, ports. */
static void
t_listening_raw(struct lc_buf *b, uint32_t streams, uint32_t nports,
    uint32_t have, uint16_t bad_at, uint32_t extra)
{
	lc_buf_reset(b);
	LC_CHECK(lc_buf_put_u32(b, streams) == 0);
	LC_CHECK(lc_buf_put_u32(b, 0) == 0);
	LC_CHECK(lc_buf_put_u32(b, 1u << 20) == 0);
	LC_CHECK(lc_buf_put_u32(b, 8) == 0);
	LC_CHECK(lc_buf_put_u32(b, nports) == 0);
	for (uint32_t i = 0; i < have; i++)
		LC_CHECK(lc_buf_put_u16(b, i + 1 == bad_at ? 0 :
		    (uint16_t)(40000 + i)) == 0);
	for (uint32_t i = 0; i < extra; i++)
		LC_CHECK(lc_buf_put(b, "\0", 1) == 0);
}

/* CONNECTED by hand: streams, window, nports, ports. */
static void
t_connected_raw(struct lc_buf *b, uint32_t streams, uint32_t nports,
    uint32_t have, uint16_t bad_at, uint32_t extra)
{
	lc_buf_reset(b);
	LC_CHECK(lc_buf_put_u32(b, streams) == 0);
	LC_CHECK(lc_buf_put_u32(b, 65536) == 0);
	LC_CHECK(lc_buf_put_u32(b, nports) == 0);
	for (uint32_t i = 0; i < have; i++)
		LC_CHECK(lc_buf_put_u16(b, i + 1 == bad_at ? 0 :
		    (uint16_t)(40000 + i)) == 0);
	for (uint32_t i = 0; i < extra; i++)
		LC_CHECK(lc_buf_put(b, "\0", 1) == 0);
}

LC_TEST(listening_and_connected_port_counts)
{
	struct lc_buf b;
	struct lc_msg_listening l, lg;
	struct lc_msg_connected c, cg;
	const uint8_t *p;
	size_t n;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	/* round trips with nports 0 (reverse) and nports == streams */
	for (uint32_t np = 0; np <= 4; np += 4) {
		lc_buf_reset(&b);
		memset(&l, 0, sizeof(l));
		l.streams = 4;
		l.window = 1u << 22;
		l.block = 1u << 20;
		l.quota = 6;
		l.nports = np;
		for (uint32_t i = 0; i < np; i++)
			l.ports[i] = (uint16_t)(33000 + i);
		LC_CHECK(lc_msg_put_listening(&b, &l) == 0);
		one_frame(&b, LC_MSG_LISTENING, &p, &n);
		LC_CHECK(lc_msg_get_listening(p, n, &lg) == 0);
		LC_CHECK(T_SAME(&l, &lg));
		for (size_t cut = 0; cut < n; cut++)
			LC_CHECK(lc_msg_get_listening(p, cut, &lg) ==
			    -LC_ERR_PROTO);

		lc_buf_reset(&b);
		memset(&c, 0, sizeof(c));
		c.streams = 4;
		c.window = 1u << 21;
		c.nports = np;
		for (uint32_t i = 0; i < np; i++)
			c.ports[i] = (uint16_t)(34000 + i);
		LC_CHECK(lc_msg_put_connected(&b, &c) == 0);
		one_frame(&b, LC_MSG_CONNECTED, &p, &n);
		LC_CHECK(lc_msg_get_connected(p, n, &cg) == 0);
		LC_CHECK(T_SAME(&c, &cg));
		for (size_t cut = 0; cut < n; cut++)
			LC_CHECK(lc_msg_get_connected(p, cut, &cg) ==
			    -LC_ERR_PROTO);
	}
	/* the encoders refuse any other count */
	for (uint32_t np = 1; np <= 5; np++) {
		if (np == 4)
			continue;
		lc_buf_reset(&b);
		l.nports = np;
		LC_CHECK(lc_msg_put_listening(&b, &l) == -LC_ERR_TOOBIG);
		lc_buf_reset(&b);
		c.nports = np;
		LC_CHECK(lc_msg_put_connected(&b, &c) == -LC_ERR_TOOBIG);
	}
	/* the decoders: good by hand, then a count other than 0 or streams */
	t_listening_raw(&b, 4, 4, 4, 0, 0);
	LC_CHECK(lc_msg_get_listening(lc_buf_ptr(&b), lc_buf_len(&b),
	    &lg) == 0);
	LC_CHECK_EQ_U(lg.nports, 4);
	LC_CHECK_EQ_U(lg.ports[3], 40003);
	t_connected_raw(&b, 4, 0, 0, 0, 0);
	LC_CHECK(lc_msg_get_connected(lc_buf_ptr(&b), lc_buf_len(&b),
	    &cg) == 0);
	LC_CHECK_EQ_U(cg.nports, 0);
	for (uint32_t np = 1; np <= 5; np++) {
		if (np == 4)
			continue;
		t_listening_raw(&b, 4, np, np, 0, 0);
		LC_CHECK(lc_msg_get_listening(lc_buf_ptr(&b), lc_buf_len(&b),
		    &lg) == -LC_ERR_PROTO);
		t_connected_raw(&b, 4, np, np, 0, 0);
		LC_CHECK(lc_msg_get_connected(lc_buf_ptr(&b), lc_buf_len(&b),
		    &cg) == -LC_ERR_PROTO);
	}
	t_listening_raw(&b, 4, UINT32_MAX, 0, 0, 0);
	LC_CHECK(lc_msg_get_listening(lc_buf_ptr(&b), lc_buf_len(&b), &lg) ==
	    -LC_ERR_PROTO);
	t_connected_raw(&b, 4, UINT32_MAX, 0, 0, 0);
	LC_CHECK(lc_msg_get_connected(lc_buf_ptr(&b), lc_buf_len(&b), &cg) ==
	    -LC_ERR_PROTO);
	/* nports says streams but fewer ports follow, or one more */
	t_listening_raw(&b, 4, 4, 3, 0, 0);
	LC_CHECK(lc_msg_get_listening(lc_buf_ptr(&b), lc_buf_len(&b), &lg) ==
	    -LC_ERR_PROTO);
	t_connected_raw(&b, 4, 4, 5, 0, 0);
	LC_CHECK(lc_msg_get_connected(lc_buf_ptr(&b), lc_buf_len(&b), &cg) ==
	    -LC_ERR_PROTO);
	/* ports follow a count of 0 */
	t_listening_raw(&b, 4, 0, 4, 0, 0);
	LC_CHECK(lc_msg_get_listening(lc_buf_ptr(&b), lc_buf_len(&b), &lg) ==
	    -LC_ERR_PROTO);
	t_connected_raw(&b, 4, 0, 4, 0, 0);
	LC_CHECK(lc_msg_get_connected(lc_buf_ptr(&b), lc_buf_len(&b), &cg) ==
	    -LC_ERR_PROTO);
	/* a port 0, and trailing bytes */
	t_listening_raw(&b, 4, 4, 4, 2, 0);
	LC_CHECK(lc_msg_get_listening(lc_buf_ptr(&b), lc_buf_len(&b), &lg) ==
	    -LC_ERR_PROTO);
	t_connected_raw(&b, 4, 4, 4, 4, 0);
	LC_CHECK(lc_msg_get_connected(lc_buf_ptr(&b), lc_buf_len(&b), &cg) ==
	    -LC_ERR_PROTO);
	t_listening_raw(&b, 4, 0, 0, 0, 1);
	LC_CHECK(lc_msg_get_listening(lc_buf_ptr(&b), lc_buf_len(&b), &lg) ==
	    -LC_ERR_PROTO);
	t_connected_raw(&b, 4, 4, 4, 0, 2);
	LC_CHECK(lc_msg_get_connected(lc_buf_ptr(&b), lc_buf_len(&b), &cg) ==
	    -LC_ERR_PROTO);
	/* stream counts out of range */
	t_connected_raw(&b, 0, 0, 0, 0, 0);
	LC_CHECK(lc_msg_get_connected(lc_buf_ptr(&b), lc_buf_len(&b), &cg) ==
	    -LC_ERR_PROTO);
	t_connected_raw(&b, LC_MAX_STREAMS + 1, LC_MAX_STREAMS + 1,
	    LC_MAX_STREAMS + 1, 0, 0);
	LC_CHECK(lc_msg_get_connected(lc_buf_ptr(&b), lc_buf_len(&b), &cg) ==
	    -LC_ERR_PROTO);
	t_listening_raw(&b, LC_MAX_STREAMS + 1, 0, 0, 0, 0);
	LC_CHECK(lc_msg_get_listening(lc_buf_ptr(&b), lc_buf_len(&b), &lg) ==
	    -LC_ERR_PROTO);
	lc_buf_free(&b);
}

/* CONNECT by hand: address, the fixed fields, nports ports. */
static void
t_connect_raw(struct lc_buf *b, const char *addr, uint32_t streams,
    uint32_t flags, uint32_t nports, uint32_t extra)
{
	uint8_t key[LC_KEY_LEN];

	memset(key, 0x5a, sizeof(key));
	lc_buf_reset(b);
	LC_CHECK(lc_buf_put_cstring(b, addr) == 0);
	LC_CHECK(lc_buf_put_u32(b, streams) == 0);
	LC_CHECK(lc_buf_put_u32(b, 0) == 0);		/* window */
	LC_CHECK(lc_buf_put_u32(b, 1u << 20) == 0);	/* block */
	LC_CHECK(lc_buf_put_u32(b, flags) == 0);
	LC_CHECK(lc_buf_put_u32(b, 1) == 0);		/* csum */
	LC_CHECK(lc_buf_put_u64(b, 0) == 0);		/* rate */
	LC_CHECK(lc_buf_put_u32(b, 0) == 0);		/* zlevel */
	LC_CHECK(lc_buf_put(b, key, sizeof(key)) == 0);
	for (uint32_t i = 0; i < nports; i++)
		LC_CHECK(lc_buf_put_u16(b, (uint16_t)(41000 + i)) == 0);
	for (uint32_t i = 0; i < extra; i++)
		LC_CHECK(lc_buf_put(b, "\0", 1) == 0);
}

LC_TEST(connect_reverse_and_direct)
{
	struct lc_buf b;
	struct lc_msg_connect c, g;
	const uint8_t *p;
	size_t n;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	/* reverse: no address and no ports on the wire */
	memset(&c, 0, sizeof(c));
	c.streams = 5;
	c.block = 1u << 20;
	c.flags = LC_XFER_ENCRYPT | LC_XFER_REVERSE | LC_XFER_LOOPBACK;
	c.csum = 2;
	c.rate = 12345678;
	memset(c.key, 0x3c, sizeof(c.key));
	LC_CHECK(lc_msg_put_connect(&b, &c) == 0);
	one_frame(&b, LC_MSG_CONNECT, &p, &n);
	/* u32 length 0, 5 u32, u64, key, u32 zlevel: nothing else */
	LC_CHECK_EQ_U(n, 4 + 5 * 4 + 8 + LC_KEY_LEN + 4);
	LC_CHECK(lc_msg_get_connect(p, n, &g) == 0);
	LC_CHECK(T_SAME(&c, &g));
	for (size_t cut = 0; cut < n; cut++)
		LC_CHECK(lc_msg_get_connect(p, cut, &g) == -LC_ERR_PROTO);
	/* the encoder leaves out an address and ports given with reverse */
	lc_buf_reset(&b);
	snprintf(c.addr, sizeof(c.addr), "10.9.8.7");
	for (uint32_t i = 0; i < c.streams; i++)
		c.ports[i] = (uint16_t)(2000 + i);
	LC_CHECK(lc_msg_put_connect(&b, &c) == 0);
	one_frame(&b, LC_MSG_CONNECT, &p, &n);
	LC_CHECK_EQ_U(n, 4 + 5 * 4 + 8 + LC_KEY_LEN + 4);
	LC_CHECK(lc_msg_get_connect(p, n, &g) == 0);
	LC_CHECK_STR(g.addr, "");
	LC_CHECK_EQ_U(g.ports[0], 0);

	/* direct: address and one port per stream */
	lc_buf_reset(&b);
	c.flags = LC_XFER_LOOPBACK;
	LC_CHECK(lc_msg_put_connect(&b, &c) == 0);
	one_frame(&b, LC_MSG_CONNECT, &p, &n);
	LC_CHECK(lc_msg_get_connect(p, n, &g) == 0);
	LC_CHECK(T_SAME(&c, &g));
	/* direct without an address: encodes, is rejected */
	lc_buf_reset(&b);
	c.addr[0] = '\0';
	LC_CHECK(lc_msg_put_connect(&b, &c) == 0);
	one_frame(&b, LC_MSG_CONNECT, &p, &n);
	LC_CHECK(lc_msg_get_connect(p, n, &g) == -LC_ERR_PROTO);

	/* the decoder by hand */
	t_connect_raw(&b, "", 3, LC_XFER_REVERSE, 0, 0);
	LC_CHECK(lc_msg_get_connect(lc_buf_ptr(&b), lc_buf_len(&b), &g) == 0);
	t_connect_raw(&b, "10.0.0.2", 3, 0, 3, 0);
	LC_CHECK(lc_msg_get_connect(lc_buf_ptr(&b), lc_buf_len(&b), &g) == 0);
	LC_CHECK_EQ_U(g.ports[2], 41002);
	/* reverse with an address */
	t_connect_raw(&b, "10.0.0.2", 3, LC_XFER_REVERSE, 0, 0);
	LC_CHECK(lc_msg_get_connect(lc_buf_ptr(&b), lc_buf_len(&b), &g) ==
	    -LC_ERR_PROTO);
	/* reverse with ports (they are trailing bytes) */
	t_connect_raw(&b, "", 3, LC_XFER_REVERSE, 3, 0);
	LC_CHECK(lc_msg_get_connect(lc_buf_ptr(&b), lc_buf_len(&b), &g) ==
	    -LC_ERR_PROTO);
	t_connect_raw(&b, "", 3, LC_XFER_REVERSE, 0, 1);
	LC_CHECK(lc_msg_get_connect(lc_buf_ptr(&b), lc_buf_len(&b), &g) ==
	    -LC_ERR_PROTO);
	/* direct: no address, a port short, a port more */
	t_connect_raw(&b, "", 3, 0, 3, 0);
	LC_CHECK(lc_msg_get_connect(lc_buf_ptr(&b), lc_buf_len(&b), &g) ==
	    -LC_ERR_PROTO);
	t_connect_raw(&b, "10.0.0.2", 3, 0, 2, 0);
	LC_CHECK(lc_msg_get_connect(lc_buf_ptr(&b), lc_buf_len(&b), &g) ==
	    -LC_ERR_PROTO);
	t_connect_raw(&b, "10.0.0.2", 3, 0, 4, 0);
	LC_CHECK(lc_msg_get_connect(lc_buf_ptr(&b), lc_buf_len(&b), &g) ==
	    -LC_ERR_PROTO);
	/* a flag this version does not know */
	t_connect_raw(&b, "", 3, LC_XFER_REVERSE | 0x10u, 0, 0);
	LC_CHECK(lc_msg_get_connect(lc_buf_ptr(&b), lc_buf_len(&b), &g) ==
	    -LC_ERR_PROTO);
	lc_buf_free(&b);
}

LC_TEST(listen_quiet_bound_and_flags)
{
	static const uint32_t ok_quiet[] = { 0, 1, 5, 3600 };
	static const uint32_t bad_quiet[] = { 3601, 86400, UINT32_MAX };
	struct lc_buf b;
	struct lc_msg_listen l, g;
	const uint8_t *p;
	size_t n;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	memset(&l, 0, sizeof(l));
	l.streams = 8;
	l.window = 1u << 20;
	l.block = 1u << 20;
	l.flags = LC_XFER_ENCRYPT | LC_XFER_REVERSE | LC_XFER_LOOPBACK;
	l.csum = 3;
	l.stall_s = 60;
	memset(l.key, 0x77, sizeof(l.key));
	for (size_t i = 0; i < sizeof(ok_quiet) / sizeof(ok_quiet[0]); i++) {
		lc_buf_reset(&b);
		l.quiet_s = ok_quiet[i];
		LC_CHECK(lc_msg_put_listen(&b, &l) == 0);
		one_frame(&b, LC_MSG_LISTEN, &p, &n);
		LC_CHECK(lc_msg_get_listen(p, n, &g) == 0);
		LC_CHECK(T_SAME(&l, &g));
		for (size_t cut = 0; cut < n; cut++)
			LC_CHECK(lc_msg_get_listen(p, cut, &g) ==
			    -LC_ERR_PROTO);
	}
	for (size_t i = 0; i < sizeof(bad_quiet) / sizeof(bad_quiet[0]);
	    i++) {
		lc_buf_reset(&b);
		l.quiet_s = bad_quiet[i];
		LC_CHECK(lc_msg_put_listen(&b, &l) == 0);
		one_frame(&b, LC_MSG_LISTEN, &p, &n);
		LC_CHECK(lc_msg_get_listen(p, n, &g) == -LC_ERR_PROTO);
	}
	/* each known flag alone decodes; an unknown one does not */
	l.quiet_s = 5;
	for (uint32_t f = 0; f <= LC_XFER_MASK; f++) {
		lc_buf_reset(&b);
		l.flags = f;
		LC_CHECK(lc_msg_put_listen(&b, &l) == 0);
		one_frame(&b, LC_MSG_LISTEN, &p, &n);
		LC_CHECK(lc_msg_get_listen(p, n, &g) == 0);
		LC_CHECK_EQ_U(g.flags, f);
	}
	lc_buf_reset(&b);
	l.flags = LC_XFER_MASK + 1;
	LC_CHECK(lc_msg_put_listen(&b, &l) == 0);
	one_frame(&b, LC_MSG_LISTEN, &p, &n);
	LC_CHECK(lc_msg_get_listen(p, n, &g) == -LC_ERR_PROTO);
	/* one byte more */
	lc_buf_reset(&b);
	l.flags = 0;
	LC_CHECK(lc_msg_put_listen(&b, &l) == 0);
	one_frame(&b, LC_MSG_LISTEN, &p, &n);
	{
		uint8_t more[256];
		LC_CHECK(n + 1 <= sizeof(more));
		memcpy(more, p, n);
		more[n] = 0;
		LC_CHECK(lc_msg_get_listen(more, n + 1, &g) == -LC_ERR_PROTO);
	}
	lc_buf_free(&b);
}

LC_TEST_MAIN()

/*
 * Encode a PREFIX_MATCH by hand: n runs (pairs) with a count of n + extra
 * (extra may be -1: a run too many); decode it.
 */
static int
t_match_decode(uint64_t match, const uint32_t *runs, uint32_t n,
    int extra, struct lc_msg_prefix_match *m)
{
	struct lc_buf b;
	int r;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	LC_CHECK(lc_buf_put_u32(&b, 9) == 0);
	LC_CHECK(lc_buf_put_u64(&b, match) == 0);
	LC_CHECK(lc_buf_put_u32(&b, (uint32_t)((int)n + extra)) == 0);
	for (uint32_t i = 0; i < 2 * n; i++)
		LC_CHECK(lc_buf_put_u32(&b, runs[i]) == 0);
	r = lc_msg_get_prefix_match(lc_buf_ptr(&b), lc_buf_len(&b), m);
	lc_buf_free(&b);
	return r;
}

LC_TEST(prefix_match_runs_round_trip_and_map_to_chunks)
{
	static struct lc_msg_prefix_match pm, gm;
	struct lc_span sp[3];
	struct lc_buf b;
	const uint8_t *p;
	size_t n;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	memset(&pm, 0, sizeof(pm));
	pm.id = 4;
	pm.match = 2500;	/* the whole partial file of 2500 bytes */
	pm.n = 2;
	pm.runs[0] = (struct lc_chunk_run){ 0, 1 };
	pm.runs[1] = (struct lc_chunk_run){ 2, 1 };	/* the short last one */
	LC_CHECK(lc_msg_put_prefix_match(&b, &pm) == 0);
	one_frame(&b, LC_MSG_PREFIX_MATCH, &p, &n);
	LC_CHECK_EQ_U(n, 4 + 8 + 4 + 2 * 8);
	LC_CHECK(lc_msg_get_prefix_match(p, n, &gm) == 0);
	LC_CHECK_EQ_U(gm.n, 2);
	LC_CHECK_EQ_U(gm.runs[1].first, 2);
	LC_CHECK(lc_prefix_match_check(&gm, 2500, 1000) == 0);
	LC_CHECK_EQ_U(lc_prefix_match_spans(&gm, 2500, 1000, sp), 1500);
	LC_CHECK_EQ_U(sp[0].off, 0);
	LC_CHECK_EQ_U(sp[0].len, 1000);
	LC_CHECK_EQ_U(sp[1].off, 2000);
	LC_CHECK_EQ_U(sp[1].len, 500);
	/* against another FILE_PREFIX it is refused */
	LC_CHECK(lc_prefix_match_check(&gm, 2000, 1000) == -LC_ERR_PROTO);
	LC_CHECK(lc_prefix_match_check(&gm, 2500, 2000) == -LC_ERR_PROTO);
	/* a cut inside a chunk, or below a run */
	gm.match = 1500;
	LC_CHECK(lc_prefix_match_check(&gm, 2500, 1000) == -LC_ERR_PROTO);
	gm.match = 2000;
	LC_CHECK(lc_prefix_match_check(&gm, 2500, 1000) == -LC_ERR_PROTO);
	gm.n = 1;	/* cut at chunk 2, run 0 below it: fine */
	LC_CHECK(lc_prefix_match_check(&gm, 2500, 1000) == 0);
	gm.match = 2600;	/* beyond the partial file */
	LC_CHECK(lc_prefix_match_check(&gm, 2500, 1000) == -LC_ERR_PROTO);
	/* more runs than the bound cannot even be encoded */
	lc_buf_reset(&b);
	pm.n = LC_PREFIX_MAX_RUNS + 1;
	LC_CHECK(lc_msg_put_prefix_match(&b, &pm) == -LC_ERR_TOOBIG);
	lc_buf_free(&b);
}

LC_TEST(prefix_match_refuses_hostile_run_lists)
{
	static struct lc_msg_prefix_match m;
	static uint32_t many[2 * (LC_PREFIX_MAX_RUNS + 1)];
	uint32_t ok[] = { 1, 2, 5, 1 };
	uint32_t overlap[] = { 1, 3, 2, 1 };
	uint32_t touching[] = { 1, 2, 3, 1 };	/* one run written as two */
	uint32_t backwards[] = { 5, 1, 1, 1 };
	uint32_t same[] = { 4, 1, 4, 1 };
	uint32_t empty[] = { 4, 0 };
	/* a FILE_HASHES list has up to LC_HASHES_MAX_CHUNKS: runs up to
	   there decode, and the check holds them to the list they answer */
	uint32_t past[] = { LC_HASHES_MAX_CHUNKS - 1, 2 };
	uint32_t last[] = { LC_HASHES_MAX_CHUNKS - 1, 1 };
	uint32_t wrap[] = { 0xffffffffu, 2 };
	uint32_t beyond[] = { 7, 1 };

	LC_CHECK(t_match_decode(6000, ok, 2, 0, &m) == 0);
	LC_CHECK(lc_prefix_match_check(&m, 6000, 1000) == 0);
	LC_CHECK(t_match_decode(5000, ok, 2, 0, &m) == 0);
	/* run 5 is not below the cut */
	LC_CHECK(lc_prefix_match_check(&m, 6000, 1000) == -LC_ERR_PROTO);
	LC_CHECK(t_match_decode(5000, overlap, 2, 0, &m) == -LC_ERR_PROTO);
	LC_CHECK(t_match_decode(5000, touching, 2, 0, &m) == -LC_ERR_PROTO);
	LC_CHECK(t_match_decode(5000, backwards, 2, 0, &m) == -LC_ERR_PROTO);
	LC_CHECK(t_match_decode(5000, same, 2, 0, &m) == -LC_ERR_PROTO);
	LC_CHECK(t_match_decode(5000, empty, 1, 0, &m) == -LC_ERR_PROTO);
	LC_CHECK(t_match_decode(5000, past, 1, 0, &m) == -LC_ERR_PROTO);
	LC_CHECK(t_match_decode((uint64_t)LC_HASHES_MAX_CHUNKS * 8192, last,
	    1, 0, &m) == 0);
	LC_CHECK(lc_prefix_match_check(&m, (uint64_t)LC_HASHES_MAX_CHUNKS *
	    8192, 8192) == 0);
	/* the same run against a FILE_PREFIX-sized list: refused */
	LC_CHECK(lc_prefix_match_check(&m, (uint64_t)LC_PREFIX_MAX_CHUNKS *
	    8192, 8192) == -LC_ERR_PROTO);
	LC_CHECK(t_match_decode(5000, wrap, 1, 0, &m) == -LC_ERR_PROTO);
	/* a count with fewer runs than it says, or bytes left over */
	LC_CHECK(t_match_decode(5000, ok, 2, 1, &m) == -LC_ERR_PROTO);
	LC_CHECK(t_match_decode(5000, ok, 2, -1, &m) == -LC_ERR_PROTO);
	/* past the end of the partial file: decodes, refused by the check */
	LC_CHECK(t_match_decode(5000, beyond, 1, 0, &m) == 0);
	LC_CHECK(lc_prefix_match_check(&m, 5000, 1000) == -LC_ERR_PROTO);
	LC_CHECK(t_match_decode(6000, ok, 2, 0, &m) == 0);
	LC_CHECK(lc_prefix_match_check(&m, 5000, 1000) == -LC_ERR_PROTO);
	LC_CHECK(lc_prefix_match_check(&m, 6000, 0) == -LC_ERR_PROTO);
	/* too many runs */
	for (uint32_t i = 0; i <= LC_PREFIX_MAX_RUNS; i++) {
		many[2 * i] = 2 * i;
		many[2 * i + 1] = 1;
	}
	LC_CHECK(t_match_decode(1ULL << 40, many, LC_PREFIX_MAX_RUNS, 0,
	    &m) == 0);
	LC_CHECK_EQ_U(m.n, LC_PREFIX_MAX_RUNS);
	LC_CHECK(t_match_decode(1ULL << 40, many, LC_PREFIX_MAX_RUNS + 1, 0,
	    &m) == -LC_ERR_PROTO);
	/* a cut beyond any file */
	LC_CHECK(t_match_decode(1ULL << 63, ok, 2, 0, &m) == -LC_ERR_PROTO);
}

/* A FILE_HASHES payload by hand: id 9, then the fields, then bytes hashes. */
static int
t_hashes_decode(uint64_t length, uint32_t chunk, uint32_t total,
    uint32_t first, uint32_t n, size_t bytes, struct lc_msg_file_hashes *m)
{
	struct lc_buf b;
	int r = 0;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	LC_CHECK(lc_buf_put_u32(&b, 9) == 0);
	LC_CHECK(lc_buf_put_u64(&b, length) == 0);
	LC_CHECK(lc_buf_put_u32(&b, chunk) == 0);
	LC_CHECK(lc_buf_put_u32(&b, total) == 0);
	LC_CHECK(lc_buf_put_u32(&b, first) == 0);
	LC_CHECK(lc_buf_put_u32(&b, n) == 0);
	for (size_t i = 0; i < bytes; i++)
		r |= lc_buf_put_u8(&b, (uint8_t)i);
	LC_CHECK(r == 0);
	r = lc_msg_get_file_hashes(lc_buf_ptr(&b), lc_buf_len(&b), m);
	lc_buf_free(&b);
	return r;
}

LC_TEST(file_hashes_slices_are_bounded)
{
	static uint8_t hashes[LC_HASHES_PER_FRAME * LC_HASHES_HASH_LEN + 16];
	const uint64_t big = (uint64_t)LC_HASHES_MAX_CHUNKS * 8192;
	const size_t h = LC_HASHES_HASH_LEN;
	struct lc_msg_file_hashes m, g;
	struct lc_buf b;
	const uint8_t *p;
	size_t n;

	/* a slice in the middle of a list of 7 (the last chunk short) */
	LC_CHECK(t_hashes_decode(6 * 8192 + 10, 8192, 7, 2, 5, 5 * h,
	    &g) == 0);
	LC_CHECK_EQ_U(g.total, 7);
	LC_CHECK_EQ_U(g.first, 2);
	LC_CHECK_EQ_U(g.n, 5);
	/* the largest list, its last full frame */
	LC_CHECK(t_hashes_decode(big, 8192, LC_HASHES_MAX_CHUNKS,
	    LC_HASHES_MAX_CHUNKS - LC_HASHES_PER_FRAME, LC_HASHES_PER_FRAME,
	    LC_HASHES_PER_FRAME * h, &g) == 0);
	/* a total that does not fit the length */
	LC_CHECK(t_hashes_decode(6 * 8192 + 10, 8192, 8, 2, 5, 5 * h,
	    &g) == -LC_ERR_PROTO);
	LC_CHECK(t_hashes_decode(6 * 8192 + 10, 8192, 6, 0, 5, 5 * h,
	    &g) == -LC_ERR_PROTO);
	/* a slice past the total, or wrapping, or empty */
	LC_CHECK(t_hashes_decode(6 * 8192 + 10, 8192, 7, 3, 5, 5 * h,
	    &g) == -LC_ERR_PROTO);
	LC_CHECK(t_hashes_decode(6 * 8192 + 10, 8192, 7, 0xfffffffeu, 5,
	    5 * h, &g) == -LC_ERR_PROTO);
	LC_CHECK(t_hashes_decode(6 * 8192 + 10, 8192, 7, 0, 0, 0,
	    &g) == -LC_ERR_PROTO);
	/* more chunks than a list may have, more hashes than a frame */
	LC_CHECK(t_hashes_decode(big + 8192, 8192, LC_HASHES_MAX_CHUNKS + 1,
	    0, 1, h, &g) == -LC_ERR_PROTO);
	LC_CHECK(t_hashes_decode(big, 8192, LC_HASHES_MAX_CHUNKS, 0,
	    LC_HASHES_PER_FRAME + 1, (LC_HASHES_PER_FRAME + 1) * h,
	    &g) == -LC_ERR_PROTO);
	/* hash bytes that are not n of them; chunk 0; a length past int64 */
	LC_CHECK(t_hashes_decode(6 * 8192 + 10, 8192, 7, 2, 5, 5 * h - 1,
	    &g) == -LC_ERR_PROTO);
	LC_CHECK(t_hashes_decode(6 * 8192 + 10, 8192, 7, 2, 5, 5 * h + 1,
	    &g) == -LC_ERR_PROTO);
	LC_CHECK(t_hashes_decode(6 * 8192 + 10, 0, 7, 2, 5, 5 * h,
	    &g) == -LC_ERR_PROTO);
	LC_CHECK(t_hashes_decode(1ULL << 63, 1u << 31, 7, 2, 5, 5 * h,
	    &g) == -LC_ERR_PROTO);

	/* encoder: round trip, and what the decoder would refuse is not sent */
	lc_buf_init(&b, LC_CTL_MAX + 8);
	memset(&m, 0, sizeof(m));
	m.id = 3;
	m.length = big;
	m.chunk = 8192;
	m.total = LC_HASHES_MAX_CHUNKS;
	m.first = 0;
	m.n = LC_HASHES_PER_FRAME;
	m.hashes = hashes;
	LC_CHECK(lc_msg_put_file_hashes(&b, &m) == 0);
	one_frame(&b, LC_MSG_FILE_HASHES, &p, &n);
	LC_CHECK(n <= LC_CTL_MAX - 1);
	LC_CHECK(lc_msg_get_file_hashes(p, n, &g) == 0);
	LC_CHECK(memcmp(g.hashes, hashes, LC_HASHES_PER_FRAME * h) == 0);
	lc_buf_reset(&b);
	m.n = LC_HASHES_PER_FRAME + 1;
	LC_CHECK(lc_msg_put_file_hashes(&b, &m) != 0);
	m.n = 0;
	LC_CHECK(lc_msg_put_file_hashes(&b, &m) != 0);
	m.n = 2;
	m.first = LC_HASHES_MAX_CHUNKS - 1;
	LC_CHECK(lc_msg_put_file_hashes(&b, &m) != 0);
	lc_buf_free(&b);
}
