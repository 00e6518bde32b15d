/*
 * The bytes on the wire, pinned: every control message (and each variant
 * an encoder treats apart: reverse CONNECT, LISTENING with and without
 * ports, a too-long ERROR), the data frame header and the takeover
 * exchange, encoded from known values, against vectors made by the
 * hand-written encoders that wire.c had before its messages came from
 * one table (wire_golden.inc).  Each vector must also decode and encode
 * back to itself.  Beside them, FILE_DONE's optional flags byte (the one
 * field a message may have or not), with and without it.
 *
 * LC_WIRE_GOLDEN_PRINT=1 test_wire_golden golden_vectors prints the
 * vectors of the encoders under test instead (to extend the list: add a
 * case, print, check the new line by hand against docs/PROTOCOL.md).
 */
#include "harness.h"

#include "buf.h"
#include "err.h"
#include "wire.h"
#include "wire_frame.h"

struct t_golden {
	const char *name;
	const char *hex;
};

static const struct t_golden t_golden[] = {
#include "wire_golden.inc"
};

#define T_NGOLDEN (sizeof(t_golden) / sizeof(t_golden[0]))

static void
t_fill(void *p, size_t n, uint8_t seed)
{
	uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed + i * 7);
}

static void
t_ports(uint16_t *ports, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		ports[i] = (uint16_t)(40000 + i * 3);
}

static uint8_t t_hashes[5 * LC_PREFIX_HASH_LEN];

/*
 * Encode case i into b (b is reset first).  Returns its name, NULL past
 * the last case.
 */
static const char *
t_build(size_t i, struct lc_buf *b)
{
	static union {
		struct lc_msg_hello hello;
		struct lc_msg_src_add add;
		struct lc_msg_file file;
		struct lc_msg_src_listed listed;
		struct lc_msg_sink_target tgt;
		struct lc_msg_target_ok ok;
		struct lc_msg_file_ready ready;
		struct lc_msg_listen listen;
		struct lc_msg_listening listening;
		struct lc_msg_connect conn;
		struct lc_msg_connected connected;
		struct lc_msg_dial dial;
		struct lc_msg_file_done done;
		struct lc_msg_xfer_done xfer;
		struct lc_msg_progress prog;
		struct lc_msg_file_sum sum;
		struct lc_msg_file_len len;
		struct lc_msg_file_prefix prefix;
		struct lc_msg_file_hashes hashes;
		struct lc_msg_prefix_match match;
		struct lc_msg_stream_lost lost;
		struct lc_msg_ack ack;
		struct lc_msg_ping ping;
		struct lc_msg_src_credit credit;
		struct lc_msg_file_skip skip;
		struct lc_msg_file_fail fail;
		struct lc_msg_file_abort abort_;
		struct lc_takeover_req treq;
		struct lc_msg_src_filter filter;
		struct lc_msg_del_scan scan;
		struct lc_msg_del_cand cand;
		struct lc_msg_del_scanned scanned;
		struct lc_msg_delete del;
		struct lc_msg_deleted deleted;
		struct lc_msg_src_entry entry;
		struct lc_msg_src_part part;
		struct lc_msg_src_avail avail;
	} m;
	static char longmsg[3000];
	uint8_t nonce[LC_TAKEOVER_NONCE_LEN];
	uint8_t hdr[LC_FRAME_HDR_LEN];
	struct lc_frame f;
	int r = 0;

	lc_buf_reset(b);
	memset(&m, 0, sizeof(m));
	switch (i) {
	case 0:
		m.hello.magic = LC_PROTO_MAGIC;
		m.hello.proto = LC_PROTO_VERSION;
		snprintf(m.hello.software, sizeof(m.hello.software), "1.2.3");
		m.hello.flags = LC_HELLO_RESTRICTED | LC_HELLO_PIPES;
		m.hello.max_streams = 64;
		m.hello.rmem_max = 0x0102030405060708ull;
		m.hello.wmem_max = 212992;
		m.hello.log_level = 3;
		snprintf(m.hello.hostname, sizeof(m.hello.hostname), "box.lan");
		m.hello.max_files = 32768;
		r = lc_msg_put_hello(b, &m.hello);
		return r == 0 ? "HELLO" : "HELLO!";
	case 1:
		r = lc_msg_put_error(b, 0x11223344u, "no such file");
		return r == 0 ? "ERROR" : "ERROR!";
	case 2:
		memset(longmsg, 'x', sizeof(longmsg) - 1);
		r = lc_msg_put_error(b, 7, longmsg);
		return r == 0 ? "ERROR truncated" : "ERROR truncated!";
	case 3:
		r = lc_msg_put_empty(b, LC_MSG_BYE);
		return r == 0 ? "BYE" : "BYE!";
	case 4:
		m.ping.grace_s = 30;
		r = lc_msg_put_ping(b, &m.ping);
		return r == 0 ? "PING" : "PING!";
	case 5:
		m.add.flags = LC_ADD_RECURSIVE | LC_ADD_NAMES;
		snprintf(m.add.path, sizeof(m.add.path), "/home/u/dir/");
		r = lc_msg_put_src_add(b, &m.add);
		return r == 0 ? "SRC_ADD" : "SRC_ADD!";
	case 6:
		m.file.id = 0x01020304u;
		m.file.kind = LC_KIND_REG;
		m.file.mode = 0644;
		m.file.size = 0x0000123456789abcull;
		m.file.mtime_sec = -5;
		m.file.mtime_nsec = 999999999u;
		snprintf(m.file.name, sizeof(m.file.name), "a/b/c.txt");
		m.file.uid = 1000;
		m.file.gid = 100;
		snprintf(m.file.user, sizeof(m.file.user), "alice");
		snprintf(m.file.group, sizeof(m.file.group), "users");
		r = lc_msg_put_file(b, &m.file);
		return r == 0 ? "FILE" : "FILE!";
	case 7:
		m.file.id = 9;
		m.file.kind = LC_KIND_SYMLINK;
		m.file.mode = 0777;
		m.file.mtime_sec = 1700000000;
		snprintf(m.file.name, sizeof(m.file.name), "link");
		snprintf(m.file.link, sizeof(m.file.link), "../target");
		r = lc_msg_put_file(b, &m.file);
		return r == 0 ? "FILE symlink" : "FILE symlink!";
	case 8:
		m.listed.files = 12345;
		m.listed.bytes = 0xfedcba9876543210ull;
		r = lc_msg_put_src_listed(b, &m.listed);
		return r == 0 ? "SRC_LISTED" : "SRC_LISTED!";
	case 9:
		m.tgt.flags = LC_TGT_FORCE | LC_TGT_TREE | LC_TGT_STDOUT;
		m.tgt.inflight = LC_FILES_INFLIGHT;
		snprintf(m.tgt.target, sizeof(m.tgt.target), "/srv/out");
		t_fill(m.tgt.takeover, LC_KEY_LEN, 0x40);
		r = lc_msg_put_sink_target(b, &m.tgt);
		return r == 0 ? "SINK_TARGET" : "SINK_TARGET!";
	case 10:
		m.ok.is_dir = 1;
		snprintf(m.ok.resolved, sizeof(m.ok.resolved), "/srv/out/");
		m.ok.inflight = LC_FILES_INFLIGHT_MAX;
		r = lc_msg_put_target_ok(b, &m.ok);
		return r == 0 ? "TARGET_OK" : "TARGET_OK!";
	case 11:
		m.ready.id = 77;
		m.ready.start = 1u << 20;
		r = lc_msg_put_file_ready(b, &m.ready);
		return r == 0 ? "FILE_READY" : "FILE_READY!";
	case 12:
		r = lc_msg_put_empty(b, LC_MSG_SRC_NOMORE);
		return r == 0 ? "SRC_NOMORE" : "SRC_NOMORE!";
	case 13:
		m.credit.upto = 513;
		r = lc_msg_put_src_credit(b, &m.credit);
		return r == 0 ? "SRC_CREDIT" : "SRC_CREDIT!";
	case 14:
		m.listen.streams = 8;
		m.listen.window = 4u << 20;
		m.listen.block = LC_DEFAULT_BLOCK;
		m.listen.flags = LC_XFER_ENCRYPT | LC_XFER_COMPRESS;
		m.listen.csum = 2;
		m.listen.stall_s = 60;
		m.listen.quiet_s = 120;
		t_fill(m.listen.key, LC_KEY_LEN, 0x90);
		r = lc_msg_put_listen(b, &m.listen);
		return r == 0 ? "LISTEN" : "LISTEN!";
	case 15:
		m.listening.streams = 3;
		m.listening.window = 65536;
		m.listening.block = LC_DEFAULT_BLOCK;
		m.listening.quota = 4;
		m.listening.nports = 3;
		t_ports(m.listening.ports, 3);
		r = lc_msg_put_listening(b, &m.listening);
		return r == 0 ? "LISTENING" : "LISTENING!";
	case 16:
		m.listening.streams = 2;
		m.listening.block = LC_MIN_BLOCK;
		m.listening.quota = 1;
		r = lc_msg_put_listening(b, &m.listening);
		return r == 0 ? "LISTENING reverse" : "LISTENING reverse!";
	case 17:
		snprintf(m.conn.addr, sizeof(m.conn.addr), "192.0.2.7");
		m.conn.streams = 4;
		m.conn.window = 1u << 22;
		m.conn.block = LC_DEFAULT_BLOCK;
		m.conn.flags = LC_XFER_ENCRYPT | LC_XFER_COMPRESS;
		m.conn.csum = 1;
		m.conn.rate = 125000000;
		m.conn.zlevel = 6;
		t_fill(m.conn.key, LC_KEY_LEN, 0x11);
		t_ports(m.conn.ports, 4);
		r = lc_msg_put_connect(b, &m.conn);
		return r == 0 ? "CONNECT" : "CONNECT!";
	case 18:
		/* reverse: the address and the ports are not sent */
		snprintf(m.conn.addr, sizeof(m.conn.addr), "192.0.2.7");
		m.conn.streams = 2;
		m.conn.block = LC_MAX_BLOCK;
		m.conn.flags = LC_XFER_REVERSE;
		t_fill(m.conn.key, LC_KEY_LEN, 0x22);
		t_ports(m.conn.ports, 2);
		r = lc_msg_put_connect(b, &m.conn);
		return r == 0 ? "CONNECT reverse" : "CONNECT reverse!";
	case 19:
		m.connected.streams = 4;
		m.connected.window = 2626560;
		r = lc_msg_put_connected(b, &m.connected);
		return r == 0 ? "CONNECTED" : "CONNECTED!";
	case 20:
		m.connected.streams = 2;
		m.connected.nports = 2;
		t_ports(m.connected.ports, 2);
		r = lc_msg_put_connected(b, &m.connected);
		return r == 0 ? "CONNECTED reverse" : "CONNECTED reverse!";
	case 21:
		snprintf(m.dial.addr, sizeof(m.dial.addr), "2001:db8::1");
		m.dial.streams = 3;
		t_ports(m.dial.ports, 3);
		r = lc_msg_put_dial(b, &m.dial);
		return r == 0 ? "DIAL" : "DIAL!";
	case 22:
		m.done.id = 5;
		m.done.bytes = 4096;
		snprintf(m.done.checksum, sizeof(m.done.checksum),
		    "sha256=00ff");
		r = lc_msg_put_file_done(b, &m.done);
		return r == 0 ? "FILE_DONE" : "FILE_DONE!";
	case 23:
		m.xfer.bytes = 1000;
		m.xfer.files = 3;
		m.xfer.wire = 600;
		r = lc_msg_put_xfer_done(b, LC_MSG_SRC_DONE, &m.xfer);
		return r == 0 ? "SRC_DONE" : "SRC_DONE!";
	case 24:
		m.xfer.bytes = 1000;
		m.xfer.files = 3;
		r = lc_msg_put_xfer_done(b, LC_MSG_SINK_DONE, &m.xfer);
		return r == 0 ? "SINK_DONE" : "SINK_DONE!";
	case 25:
		m.prog.bytes = 1ull << 40;
		m.prog.file = 17;
		m.prog.written = 8192;
		m.prog.wire = 1ull << 39;
		r = lc_msg_put_progress(b, &m.prog);
		return r == 0 ? "PROGRESS" : "PROGRESS!";
	case 26:
		m.sum.id = 6;
		snprintf(m.sum.checksum, sizeof(m.sum.checksum), "xxh64=1234");
		r = lc_msg_put_file_sum(b, &m.sum);
		return r == 0 ? "FILE_SUM" : "FILE_SUM!";
	case 27:
		t_fill(t_hashes, sizeof(t_hashes), 0x33);
		m.prefix.id = 8;
		m.prefix.length = 4u * 65536 + 10;
		m.prefix.chunk = 65536;
		m.prefix.n = 5;
		m.prefix.hashes = t_hashes;
		r = lc_msg_put_file_prefix(b, &m.prefix);
		return r == 0 ? "FILE_PREFIX" : "FILE_PREFIX!";
	case 28:
		m.match.id = 8;
		m.match.match = 4u * 65536;
		m.match.n = 2;
		m.match.runs[0].first = 0;
		m.match.runs[0].count = 1;
		m.match.runs[1].first = 2;
		m.match.runs[1].count = 2;
		r = lc_msg_put_prefix_match(b, &m.match);
		return r == 0 ? "PREFIX_MATCH" : "PREFIX_MATCH!";
	case 29:
		m.lost.stream = 3;
		m.lost.has_last = 1;
		m.lost.last_file = 44;
		m.lost.last_off = 1u << 21;
		snprintf(m.lost.reason, sizeof(m.lost.reason), "timed out");
		r = lc_msg_put_stream_lost(b, &m.lost);
		return r == 0 ? "STREAM_LOST" : "STREAM_LOST!";
	case 30:
		m.ack.file = 12;
		m.ack.written = 3u << 20;
		r = lc_msg_put_ack(b, &m.ack);
		return r == 0 ? "ACK" : "ACK!";
	case 31:
		m.skip.id = 13;
		m.skip.why = LC_SKIP_FAILED;
		snprintf(m.skip.msg, sizeof(m.skip.msg), "disk full");
		r = lc_msg_put_file_skip(b, &m.skip);
		return r == 0 ? "FILE_SKIP" : "FILE_SKIP!";
	case 32:
		snprintf(m.fail.name, sizeof(m.fail.name), "d/e");
		snprintf(m.fail.msg, sizeof(m.fail.msg), "permission denied");
		r = lc_msg_put_file_fail(b, &m.fail);
		return r == 0 ? "FILE_FAIL" : "FILE_FAIL!";
	case 33:
		m.abort_.id = 14;
		snprintf(m.abort_.msg, sizeof(m.abort_.msg), "vanished");
		r = lc_msg_put_file_abort(b, &m.abort_);
		return r == 0 ? "FILE_ABORT" : "FILE_ABORT!";
	case 34:
		r = lc_msg_put_empty(b, LC_MSG_STOP);
		return r == 0 ? "STOP" : "STOP!";
	case 35:
		m.len.id = 15;
		m.len.length = LC_PIPE_MAX;
		r = lc_msg_put_file_len(b, &m.len);
		return r == 0 ? "FILE_LEN" : "FILE_LEN!";
	case 36:
		/* SINK_STOPPED: the sink's final bytes, a SINK_DONE body */
		m.xfer.bytes = 77;
		m.xfer.files = 2;
		r = lc_msg_put_xfer_done(b, LC_MSG_SINK_STOPPED, &m.xfer);
		return r == 0 ? "SINK_STOPPED" : "SINK_STOPPED!";
	case 37:
		memset(&f, 0, sizeof(f));
		f.type = LC_FRAME_DATA;
		f.flags = LC_FRAME_F_ZLIB;
		f.file_id = 3;
		f.offset = 0x0102030405060708ull;
		f.len = 100;
		f.raw_len = 4096;
		lc_frame_put(hdr, &f);
		r = lc_buf_put(b, hdr, sizeof(hdr));
		return r == 0 ? "frame DATA" : "frame DATA!";
	case 38:
		t_fill(nonce, sizeof(nonce), 0x77);
		r = lc_takeover_put_challenge(b, nonce);
		return r == 0 ? "takeover challenge" : "takeover challenge!";
	case 39:
		t_fill(m.treq.mac, LC_TAKEOVER_MAC_LEN, 0x55);
		snprintf(m.treq.root, sizeof(m.treq.root), "/srv");
		r = lc_takeover_put_request(b, &m.treq);
		return r == 0 ? "takeover request" : "takeover request!";
	case 40:
		r = lc_takeover_put_answer(b, LC_TAKEOVER_NO_ROOT);
		return r == 0 ? "takeover answer" : "takeover answer!";
	/* issue 24: --exclude, --delete (checked by hand against
	   docs/PROTOCOL.md "Mirrors") */
	case 41:
		m.filter.kind = LC_FILTER_EXCLUDE;
		snprintf(m.filter.pattern, sizeof(m.filter.pattern), "*.tmp");
		r = lc_msg_put_src_filter(b, &m.filter);
		return r == 0 ? "SRC_FILTER" : "SRC_FILTER!";
	case 42:
		snprintf(m.scan.root, sizeof(m.scan.root), "dir");
		r = lc_msg_put_del_scan(b, &m.scan);
		return r == 0 ? "DEL_SCAN" : "DEL_SCAN!";
	case 43:
		m.cand.kind = LC_KIND_DIR;
		snprintf(m.cand.name, sizeof(m.cand.name), "dir/old");
		r = lc_msg_put_del_cand(b, &m.cand);
		return r == 0 ? "DEL_CAND" : "DEL_CAND!";
	case 44:
		m.scanned.count = 3;
		r = lc_msg_put_del_scanned(b, &m.scanned);
		return r == 0 ? "DEL_SCANNED" : "DEL_SCANNED!";
	case 45:
		m.del.kind = LC_KIND_REG;
		snprintf(m.del.name, sizeof(m.del.name), "dir/x");
		r = lc_msg_put_delete(b, &m.del);
		return r == 0 ? "DELETE" : "DELETE!";
	case 46:
		m.deleted.kind = LC_KIND_REG;
		snprintf(m.deleted.name, sizeof(m.deleted.name), "dir/x");
		snprintf(m.deleted.msg, sizeof(m.deleted.msg), "busy");
		r = lc_msg_put_deleted(b, &m.deleted);
		return r == 0 ? "DELETED" : "DELETED!";
	/* issue 24: FILE_DONE's flags (LC_HELLO_COUNTS), checked by hand
	   against docs/PROTOCOL.md: FILE_DONE's bytes and one more */
	case 47:
		m.done.id = 5;
		m.done.bytes = 4096;
		snprintf(m.done.checksum, sizeof(m.done.checksum),
		    "sha256=00ff");
		m.done.has_flags = 1;
		m.done.flags = LC_DONE_REPLACED;
		r = lc_msg_put_file_done(b, &m.done);
		return r == 0 ? "FILE_DONE replaced" : "FILE_DONE!";
	case 48:
		t_fill(t_hashes, sizeof(t_hashes), 0x44);
		m.hashes.id = 8;
		m.hashes.length = 6u * 8192 + 10;
		m.hashes.chunk = 8192;
		m.hashes.total = 7;
		m.hashes.first = 2;
		m.hashes.n = 5;
		m.hashes.hashes = t_hashes;
		r = lc_msg_put_file_hashes(b, &m.hashes);
		return r == 0 ? "FILE_HASHES" : "FILE_HASHES!";
	/* issue 25 (--shard): SRC_FILTER kind 3, LC_HELLO_SHARD */
	case 49:
		m.filter.kind = LC_FILTER_SHARD;
		snprintf(m.filter.pattern, sizeof(m.filter.pattern), "3/4");
		r = lc_msg_put_src_filter(b, &m.filter);
		return r == 0 ? "SRC_FILTER shard" : "SRC_FILTER!";
	/* issue 23 (nomore23): the sink's end-of-list mark, empty */
	case 50:
		r = lc_msg_put_empty(b, LC_MSG_SINK_NOMORE);
		return r == 0 ? "SINK_NOMORE" : "SINK_NOMORE!";
	/* issue 25 (fed25): SRC_ENTRY, one name of a fed request, and its
	   end (flag 1, the name empty) */
	case 51:
		snprintf(m.entry.name, sizeof(m.entry.name), "dir/sub/f");
		r = lc_msg_put_src_entry(b, &m.entry);
		return r == 0 ? "SRC_ENTRY" : "SRC_ENTRY!";
	case 52:
		m.entry.flags = LC_ENTRY_END;
		r = lc_msg_put_src_entry(b, &m.entry);
		return r == 0 ? "SRC_ENTRY end" : "SRC_ENTRY!";
	/* issue 25 (the chain's next hop follows the part file): SRC_PART
	   (u64 size, a string) and SRC_AVAIL (u32 id, u64 avail) */
	case 53:
		m.part.size = 0x123456789aULL;
		snprintf(m.part.name, sizeof(m.part.name), "dir/sub/f");
		r = lc_msg_put_src_part(b, &m.part);
		return r == 0 ? "SRC_PART" : "SRC_PART!";
	case 54:
		m.avail.id = 7;
		m.avail.avail = 0x100000001ULL;
		r = lc_msg_put_src_avail(b, &m.avail);
		return r == 0 ? "SRC_AVAIL" : "SRC_AVAIL!";
	default:
		return NULL;
	}
}

static void
t_hex(const struct lc_buf *b, char *out)
{
	static const char digits[] = "0123456789abcdef";
	const uint8_t *p = lc_buf_ptr(b);
	size_t n = lc_buf_len(b);

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

static char t_text[2 * 8192 + 1];

LC_TEST(golden_vectors)
{
	const char *print = getenv("LC_WIRE_GOLDEN_PRINT");
	struct lc_buf b;
	const char *name;
	size_t i;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	for (i = 0; (name = t_build(i, &b)) != NULL; i++) {
		LC_CHECK(lc_buf_len(&b) * 2 < sizeof(t_text));
		t_hex(&b, t_text);
		if (print != NULL && strcmp(print, "1") == 0) {
			printf("{ \"%s\",\n  \"%s\" },\n", name, t_text);
			continue;
		}
		LC_CHECK(i < T_NGOLDEN);
		LC_CHECK_STR(name, t_golden[i].name);
		LC_CHECK_STR(t_text, t_golden[i].hex);
	}
	if (print == NULL)
		LC_CHECK_EQ_U(i, T_NGOLDEN);
	lc_buf_free(&b);
}

static size_t
t_unhex(const char *hex, uint8_t *out, size_t outsz)
{
	size_t n = strlen(hex) / 2;

	LC_CHECK(n <= outsz);
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		LC_CHECK(sscanf(hex + 2 * i, "%2x", &v) == 1);
		out[i] = (uint8_t)v;
	}
	return n;
}

/* A golden control frame decodes and encodes back to the same bytes. */
static int
t_redo(uint8_t type, const uint8_t *p, size_t n, struct lc_buf *b)
{
	static union {
		struct lc_msg_hello hello;
		struct lc_msg_error error;
		struct lc_msg_src_add add;
		struct lc_msg_file file;
		struct lc_msg_src_listed listed;
		struct lc_msg_sink_target tgt;
		struct lc_msg_target_ok ok;
		struct lc_msg_file_ready ready;
		struct lc_msg_listen listen;
		struct lc_msg_listening listening;
		struct lc_msg_connect conn;
		struct lc_msg_connected connected;
		struct lc_msg_dial dial;
		struct lc_msg_file_done done;
		struct lc_msg_xfer_done xfer;
		struct lc_msg_progress prog;
		struct lc_msg_file_sum sum;
		struct lc_msg_file_len len;
		struct lc_msg_file_prefix prefix;
		struct lc_msg_file_hashes hashes;
		struct lc_msg_prefix_match match;
		struct lc_msg_stream_lost lost;
		struct lc_msg_ack ack;
		struct lc_msg_ping ping;
		struct lc_msg_src_credit credit;
		struct lc_msg_file_skip skip;
		struct lc_msg_file_fail fail;
		struct lc_msg_file_abort abort_;
		struct lc_msg_src_filter filter;
		struct lc_msg_del_scan scan;
		struct lc_msg_del_cand cand;
		struct lc_msg_del_scanned scanned;
		struct lc_msg_delete del;
		struct lc_msg_deleted deleted;
		struct lc_msg_src_entry entry;
		struct lc_msg_src_part part;
		struct lc_msg_src_avail avail;
	} m;

	switch (type) {
	case LC_MSG_HELLO:
		return lc_msg_get_hello(p, n, &m.hello) ||
		    lc_msg_put_hello(b, &m.hello);
	case LC_MSG_ERROR:
		return lc_msg_get_error(p, n, &m.error) ||
		    lc_msg_put_error(b, m.error.code, m.error.msg);
	case LC_MSG_BYE:
	case LC_MSG_SRC_NOMORE:
	case LC_MSG_STOP:
	case LC_MSG_SINK_NOMORE:
		return lc_msg_get_empty(p, n) || lc_msg_put_empty(b, type);
	case LC_MSG_PING:
		return lc_msg_get_ping(p, n, &m.ping) ||
		    lc_msg_put_ping(b, &m.ping);
	case LC_MSG_SRC_ADD:
		return lc_msg_get_src_add(p, n, &m.add) ||
		    lc_msg_put_src_add(b, &m.add);
	case LC_MSG_FILE:
		return lc_msg_get_file(p, n, &m.file) ||
		    lc_msg_put_file(b, &m.file);
	case LC_MSG_SRC_LISTED:
		return lc_msg_get_src_listed(p, n, &m.listed) ||
		    lc_msg_put_src_listed(b, &m.listed);
	case LC_MSG_SINK_TARGET:
		return lc_msg_get_sink_target(p, n, &m.tgt) ||
		    lc_msg_put_sink_target(b, &m.tgt);
	case LC_MSG_TARGET_OK:
		return lc_msg_get_target_ok(p, n, &m.ok) ||
		    lc_msg_put_target_ok(b, &m.ok);
	case LC_MSG_FILE_READY:
		return lc_msg_get_file_ready(p, n, &m.ready) ||
		    lc_msg_put_file_ready(b, &m.ready);
	case LC_MSG_SRC_CREDIT:
		return lc_msg_get_src_credit(p, n, &m.credit) ||
		    lc_msg_put_src_credit(b, &m.credit);
	case LC_MSG_LISTEN:
		return lc_msg_get_listen(p, n, &m.listen) ||
		    lc_msg_put_listen(b, &m.listen);
	case LC_MSG_LISTENING:
		return lc_msg_get_listening(p, n, &m.listening) ||
		    lc_msg_put_listening(b, &m.listening);
	case LC_MSG_CONNECT:
		return lc_msg_get_connect(p, n, &m.conn) ||
		    lc_msg_put_connect(b, &m.conn);
	case LC_MSG_CONNECTED:
		return lc_msg_get_connected(p, n, &m.connected) ||
		    lc_msg_put_connected(b, &m.connected);
	case LC_MSG_DIAL:
		return lc_msg_get_dial(p, n, &m.dial) ||
		    lc_msg_put_dial(b, &m.dial);
	case LC_MSG_FILE_DONE:
		return lc_msg_get_file_done(p, n, &m.done) ||
		    lc_msg_put_file_done(b, &m.done);
	case LC_MSG_SRC_DONE:
	case LC_MSG_SINK_DONE:
	case LC_MSG_SINK_STOPPED:
		return lc_msg_get_xfer_done(p, n, &m.xfer) ||
		    lc_msg_put_xfer_done(b, type, &m.xfer);
	case LC_MSG_PROGRESS:
		return lc_msg_get_progress(p, n, &m.prog) ||
		    lc_msg_put_progress(b, &m.prog);
	case LC_MSG_FILE_SUM:
		return lc_msg_get_file_sum(p, n, &m.sum) ||
		    lc_msg_put_file_sum(b, &m.sum);
	case LC_MSG_FILE_LEN:
		return lc_msg_get_file_len(p, n, &m.len) ||
		    lc_msg_put_file_len(b, &m.len);
	case LC_MSG_FILE_PREFIX:
		return lc_msg_get_file_prefix(p, n, &m.prefix) ||
		    lc_msg_put_file_prefix(b, &m.prefix);
	case LC_MSG_FILE_HASHES:
		return lc_msg_get_file_hashes(p, n, &m.hashes) ||
		    lc_msg_put_file_hashes(b, &m.hashes);
	case LC_MSG_PREFIX_MATCH:
		return lc_msg_get_prefix_match(p, n, &m.match) ||
		    lc_msg_put_prefix_match(b, &m.match);
	case LC_MSG_STREAM_LOST:
		return lc_msg_get_stream_lost(p, n, &m.lost) ||
		    lc_msg_put_stream_lost(b, &m.lost);
	case LC_MSG_ACK:
		return lc_msg_get_ack(p, n, &m.ack) ||
		    lc_msg_put_ack(b, &m.ack);
	case LC_MSG_FILE_SKIP:
		return lc_msg_get_file_skip(p, n, &m.skip) ||
		    lc_msg_put_file_skip(b, &m.skip);
	case LC_MSG_FILE_FAIL:
		return lc_msg_get_file_fail(p, n, &m.fail) ||
		    lc_msg_put_file_fail(b, &m.fail);
	case LC_MSG_FILE_ABORT:
		return lc_msg_get_file_abort(p, n, &m.abort_) ||
		    lc_msg_put_file_abort(b, &m.abort_);
	case LC_MSG_SRC_FILTER:
		return lc_msg_get_src_filter(p, n, &m.filter) ||
		    lc_msg_put_src_filter(b, &m.filter);
	case LC_MSG_SRC_ENTRY:
		return lc_msg_get_src_entry(p, n, &m.entry) ||
		    lc_msg_put_src_entry(b, &m.entry);
	case LC_MSG_SRC_PART:
		return lc_msg_get_src_part(p, n, &m.part) ||
		    lc_msg_put_src_part(b, &m.part);
	case LC_MSG_SRC_AVAIL:
		return lc_msg_get_src_avail(p, n, &m.avail) ||
		    lc_msg_put_src_avail(b, &m.avail);
	case LC_MSG_DEL_SCAN:
		return lc_msg_get_del_scan(p, n, &m.scan) ||
		    lc_msg_put_del_scan(b, &m.scan);
	case LC_MSG_DEL_CAND:
		return lc_msg_get_del_cand(p, n, &m.cand) ||
		    lc_msg_put_del_cand(b, &m.cand);
	case LC_MSG_DEL_SCANNED:
		return lc_msg_get_del_scanned(p, n, &m.scanned) ||
		    lc_msg_put_del_scanned(b, &m.scanned);
	case LC_MSG_DELETE:
		return lc_msg_get_delete(p, n, &m.del) ||
		    lc_msg_put_delete(b, &m.del);
	case LC_MSG_DELETED:
		return lc_msg_get_deleted(p, n, &m.deleted) ||
		    lc_msg_put_deleted(b, &m.deleted);
	default:
		return -1;
	}
}

LC_TEST(golden_vectors_decode)
{
	static uint8_t bytes[8192];
	struct lc_buf b;
	const uint8_t *p;
	uint8_t type;
	size_t len, n, flen;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	for (size_t i = 0; i < T_NGOLDEN; i++) {
		/* frames and the takeover exchange have their own framing */
		if (strncmp(t_golden[i].name, "frame ", 6) == 0 ||
		    strncmp(t_golden[i].name, "takeover ", 9) == 0)
			continue;
		len = t_unhex(t_golden[i].hex, bytes, sizeof(bytes));
		LC_CHECK(lc_msg_peek(bytes, len, &type, &p, &n, &flen) == 1);
		LC_CHECK_EQ_U(flen, len);
		/* the name up to the first blank is the message's */
		snprintf(t_text, sizeof(t_text), "%s", t_golden[i].name);
		t_text[strcspn(t_text, " ")] = '\0';
		LC_CHECK_STR(lc_msg_name(type), t_text);
		lc_buf_reset(&b);
		LC_CHECK(t_redo(type, p, n, &b) == 0);
		LC_CHECK_EQ_U(lc_buf_len(&b), len);
		LC_CHECK(memcmp(lc_buf_ptr(&b), bytes, len) == 0);
	}
	lc_buf_free(&b);
}

/*
 * The table's owners are the lists the roles had by hand before it, and
 * every type has a name exactly when it has an owner.
 */
LC_TEST(owners_from_the_table)
{
	static const uint8_t source[] = { LC_MSG_SRC_ADD, LC_MSG_SRC_CREDIT,
		LC_MSG_FILE_SKIP, LC_MSG_FILE_READY, LC_MSG_CONNECT,
		LC_MSG_SRC_NOMORE, LC_MSG_FILE_PREFIX, LC_MSG_STREAM_LOST,
		LC_MSG_ACK, LC_MSG_SRC_FILTER, LC_MSG_FILE_HASHES,
		LC_MSG_SRC_ENTRY, LC_MSG_SRC_PART, LC_MSG_SRC_AVAIL };
	static const uint8_t sink[] = { LC_MSG_SINK_TARGET, LC_MSG_LISTEN,
		LC_MSG_DIAL, LC_MSG_FILE, LC_MSG_FILE_SUM, LC_MSG_PREFIX_MATCH,
		LC_MSG_FILE_ABORT, LC_MSG_STOP, LC_MSG_FILE_LEN,
		LC_MSG_DEL_SCAN, LC_MSG_DELETE, LC_MSG_SINK_NOMORE };
	size_t nsrc = 0, nsink = 0, named = 0;

	for (size_t i = 0; i < sizeof(source); i++)
		LC_CHECK_EQ_I(lc_msg_owner(source[i]), LC_OWNER_SOURCE);
	for (size_t i = 0; i < sizeof(sink); i++)
		LC_CHECK_EQ_I(lc_msg_owner(sink[i]), LC_OWNER_SINK);
	for (unsigned t = 0; t < 256; t++) {
		int o = lc_msg_owner((uint8_t)t);
		nsrc += o == LC_OWNER_SOURCE;
		nsink += o == LC_OWNER_SINK;
		named += strcmp(lc_msg_name((uint8_t)t), "?") != 0;
		LC_CHECK((o != 0) == (strcmp(lc_msg_name((uint8_t)t), "?") != 0));
	}
	LC_CHECK_EQ_U(nsrc, sizeof(source));
	LC_CHECK_EQ_U(nsink, sizeof(sink));
	LC_CHECK_EQ_U(named, 43);
	LC_CHECK_EQ_I(lc_msg_owner(LC_MSG_HELLO), LC_OWNER_AGENT);
	LC_CHECK_EQ_I(lc_msg_owner(LC_MSG_PING), LC_OWNER_AGENT);
	LC_CHECK_EQ_I(lc_msg_owner(LC_MSG_BYE), LC_OWNER_AGENT);
	LC_CHECK_STR(lc_msg_name(LC_MSG_FILE_READY), "FILE_READY");
}

/* The generic lc_msg_put and lc_msg_get are the named ones. */
LC_TEST(generic_is_named)
{
	static uint8_t bytes[8192];
	static union lc_msg_any m;
	struct lc_buf b;
	const uint8_t *p;
	uint8_t type;
	size_t len, n, flen;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	for (size_t i = 0; i < T_NGOLDEN; i++) {
		if (strncmp(t_golden[i].name, "frame ", 6) == 0 ||
		    strncmp(t_golden[i].name, "takeover ", 9) == 0)
			continue;
		len = t_unhex(t_golden[i].hex, bytes, sizeof(bytes));
		LC_CHECK(lc_msg_peek(bytes, len, &type, &p, &n, &flen) == 1);
		LC_CHECK(lc_msg_get(type, p, n, &m) == 0);
		lc_buf_reset(&b);
		LC_CHECK(lc_msg_put(&b, type, &m) == 0);
		LC_CHECK_EQ_U(lc_buf_len(&b), len);
		LC_CHECK(memcmp(lc_buf_ptr(&b), bytes, len) == 0);
	}
	/* not in the table */
	LC_CHECK_EQ_I(lc_msg_get(99, bytes, 0, &m), -LC_ERR_PROTO);
	lc_buf_reset(&b);
	LC_CHECK(lc_msg_put(&b, 99, NULL) != 0);
	LC_CHECK_EQ_U(lc_buf_len(&b), 0);
	lc_buf_free(&b);
}

/*
 * FILE_DONE's flags (issue 24, LC_HELLO_COUNTS): with and without the
 * byte, no flag beyond LC_DONE_MASK, never two bytes.
 */
LC_TEST(file_done_flags)
{
	struct lc_buf b;
	struct lc_msg_file_done m, m2;
	const uint8_t *p;
	size_t n;

	lc_buf_init(&b, LC_CTL_MAX + 8);
	memset(&m, 0, sizeof(m));
	m.id = 3;
	m.bytes = 10;
	/* from a sink before it: no byte, no flags */
	LC_CHECK(lc_msg_put_file_done(&b, &m) == 0);
	one_frame(&b, LC_MSG_FILE_DONE, &p, &n);
	LC_CHECK(lc_msg_get_file_done(p, n, &m2) == 0);
	LC_CHECK(m2.has_flags == 0 && m2.flags == 0);
	/* with it: one byte more, decoded as sent */
	m.has_flags = 1;
	m.flags = LC_DONE_REPLACED;
	lc_buf_reset(&b);
	LC_CHECK(lc_msg_put_file_done(&b, &m) == 0);
	one_frame(&b, LC_MSG_FILE_DONE, &p, &n);
	LC_CHECK(lc_msg_get_file_done(p, n, &m2) == 0);
	LC_CHECK(m2.has_flags == 1 && m2.flags == LC_DONE_REPLACED);
	/* an unknown flag, and a byte past the flags */
	for (unsigned f = 2; f < 256; f++) {
		m.flags = (uint8_t)f;
		lc_buf_reset(&b);
		LC_CHECK(lc_msg_put_file_done(&b, &m) == 0);
		one_frame(&b, LC_MSG_FILE_DONE, &p, &n);
		LC_CHECK(lc_msg_get_file_done(p, n, &m2) == -LC_ERR_PROTO);
	}
	m.flags = 0;
	lc_buf_reset(&b);
	LC_CHECK(lc_msg_put_file_done(&b, &m) == 0);
	LC_CHECK(lc_buf_put_u8(&b, 0) == 0);
	lc_buf_poke_u32(&b, 0, (uint32_t)lc_buf_len(&b) - 4);
	one_frame(&b, LC_MSG_FILE_DONE, &p, &n);
	LC_CHECK(lc_msg_get_file_done(p, n, &m2) == -LC_ERR_PROTO);
	lc_buf_free(&b);
}

LC_TEST_MAIN()
