/*
 * Control message decoders: the first byte picks a message type, the rest
 * is the frame payload.  Whatever decodes must re-encode to the same bytes
 * (so the decoder accepts nothing the encoder cannot produce).
 * Selectors 0..20 are the protocol 1 messages (unchanged, so the corpus
 * keeps its meaning), 21..23 SRC_CREDIT, FILE_SKIP and FILE_FAIL, 24 the
 * relative-name helpers against a reference (two names split at the first
 * NUL), 25 FILE_ABORT, 26 PING, 27 DIAL, 28 the reverse port lists,
 * 29 FILE_LEN, 30 the takeover exchange (a local socket, wire.h), the
 * rest the frame splitter, and every message of the table through
 * lc_msg_get and lc_msg_put.
 */
#include "buf.h"
#include "wire.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* lc_relname_ok's contract, written out the slow way */
static int
lc_ref_relname_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || s[0] == '/' || s[n - 1] == '/' || strstr(s, "//") ||
	    strcmp(s, ".") == 0 || strcmp(s, "..") == 0 ||
	    strncmp(s, "./", 2) == 0 || strncmp(s, "../", 3) == 0 ||
	    strstr(s, "/./") || strstr(s, "/../") ||
	    (n >= 2 && strcmp(s + n - 2, "/.") == 0) ||
	    (n >= 3 && strcmp(s + n - 3, "/..") == 0))
		return 0;
	return 1;
}

static int
lc_sgn(int v)
{
	return (v > 0) - (v < 0);
}

static void
lc_check_relname(const uint8_t *p, size_t n)
{
	char a[LC_PATH_MAX], b[LC_PATH_MAX];
	const uint8_t *z = memchr(p, 0, n);
	size_t al = z != NULL ? (size_t)(z - p) : n, bl;
	int ab, ba;

	if (al >= sizeof(a))
		return;
	memcpy(a, p, al);
	a[al] = '\0';
	bl = z != NULL ? n - al - 1 : 0;
	if (bl >= sizeof(b))
		return;
	if (z != NULL) {
		memcpy(b, z + 1, bl);
		if (memchr(b, 0, bl) != NULL)
			bl = strlen(b);
	}
	b[bl] = '\0';
	if (lc_relname_ok(a) != lc_ref_relname_ok(a) ||
	    lc_relname_ok(b) != lc_ref_relname_ok(b))
		abort();
	ab = lc_sgn(lc_relname_cmp(a, b));
	ba = lc_sgn(lc_relname_cmp(b, a));
	/* a total order consistent with equality */
	if (ab != -ba || (ab == 0) != (strcmp(a, b) == 0) ||
	    lc_relname_cmp(a, a) != 0)
		abort();
	/* a directory sorts before everything beneath it */
	if (al < bl && strncmp(a, b, al) == 0 && b[al] == '/' && ab >= 0)
		abort();
}

static void
lc_check_same(struct lc_buf *b, const uint8_t *p, size_t n)
{
	/* frame = u32 len, u8 type, payload */
	if (lc_buf_len(b) != n + 5 || memcmp(lc_buf_ptr(b) + 5, p, n) != 0)
		abort();
}

/*
 * A decoded PREFIX_MATCH against FILE_PREFIXes it could answer: whenever
 * lc_prefix_match_check accepts it, its runs map to whole spans in order,
 * inside the partial file and below the cut.
 */
static void
lc_check_runs(const struct lc_msg_prefix_match *m)
{
	static struct lc_span sp[LC_PREFIX_MAX_RUNS];
	static const uint32_t chunks[] = { 1, 4096, 1u << 20, 1u << 31 };
	uint64_t total, sum, after;

	for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++)
		for (uint64_t extra = 0; extra < 3; extra++) {
			uint64_t len = m->match + extra * (chunks[c] / 2 + 1);
			if (lc_prefix_match_check(m, len, chunks[c]) != 0)
				continue;
			total = lc_prefix_match_spans(m, len, chunks[c], sp);
			sum = after = 0;
			for (uint32_t i = 0; i < m->n; i++) {
				if (sp[i].len == 0 || sp[i].off < after ||
				    sp[i].off % chunks[c] != 0 ||
				    sp[i].off + sp[i].len > m->match)
					abort();
				after = sp[i].off + sp[i].len + 1;
				sum += sp[i].len;
			}
			if (sum != total || total > m->match)
				abort();
		}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
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
		struct lc_msg_file_done done;
		struct lc_msg_xfer_done xfer;
		struct lc_msg_progress prog;
		struct lc_msg_file_sum sum;
		struct lc_msg_file_prefix prefix;
		struct lc_msg_prefix_match match;
		struct lc_msg_stream_lost lost;
		struct lc_msg_ack ack;
		struct lc_msg_src_credit credit;
		struct lc_msg_file_skip skip;
		struct lc_msg_file_fail fail;
		struct lc_msg_file_abort abort_;
		struct lc_msg_ping ping;
		struct lc_msg_dial dial;
		struct lc_msg_file_len len;
		struct lc_takeover_req treq;
	} m;
	static union lc_msg_any any;
	uint8_t nonce[LC_TAKEOVER_NONCE_LEN], verdict;
	struct lc_buf b;
	const uint8_t *p;
	uint8_t type;
	size_t n, flen;

	if (size < 1)
		return 0;
	p = data + 1;
	n = size - 1;
	lc_buf_init(&b, LC_CTL_MAX + 8);
	switch (data[0] % 32) {
	case 0:
		if (lc_msg_get_hello(p, n, &m.hello) == 0 &&
		    lc_msg_put_hello(&b, &m.hello) == 0)
			lc_check_same(&b, p, n);
		break;
	case 1:
		if (lc_msg_get_error(p, n, &m.error) == 0 &&
		    lc_msg_put_error(&b, m.error.code, m.error.msg) == 0)
			lc_check_same(&b, p, n);
		break;
	case 2:
		if (lc_msg_get_src_add(p, n, &m.add) == 0 &&
		    lc_msg_put_src_add(&b, &m.add) == 0)
			lc_check_same(&b, p, n);
		break;
	case 3:
		/* kinds: a link target exactly for symlinks, no size but files */
		if (lc_msg_get_file(p, n, &m.file) == 0 &&
		    (m.file.id == 0 || m.file.kind < LC_KIND_REG ||
		    m.file.kind > LC_KIND_PIPE ||
		    (m.file.kind == LC_KIND_SYMLINK) !=
		    (m.file.link[0] != '\0') ||
		    (m.file.kind != LC_KIND_REG && m.file.size != 0)))
			abort();
		if (lc_msg_get_file(p, n, &m.file) == 0 &&
		    lc_msg_put_file(&b, &m.file) == 0)
			lc_check_same(&b, p, n);
		break;
	case 4:
		if (lc_msg_get_src_listed(p, n, &m.listed) == 0 &&
		    lc_msg_put_src_listed(&b, &m.listed) == 0)
			lc_check_same(&b, p, n);
		break;
	case 5:
		if (lc_msg_get_sink_target(p, n, &m.tgt) == 0 &&
		    lc_msg_put_sink_target(&b, &m.tgt) == 0)
			lc_check_same(&b, p, n);
		break;
	case 6:
		if (lc_msg_get_target_ok(p, n, &m.ok) == 0 &&
		    lc_msg_put_target_ok(&b, &m.ok) == 0)
			lc_check_same(&b, p, n);
		break;
	case 7:
		if (lc_msg_get_file_ready(p, n, &m.ready) == 0 &&
		    lc_msg_put_file_ready(&b, &m.ready) == 0)
			lc_check_same(&b, p, n);
		break;
	case 8:
		if (lc_msg_get_listen(p, n, &m.listen) == 0 &&
		    lc_msg_put_listen(&b, &m.listen) == 0)
			lc_check_same(&b, p, n);
		break;
	case 9:
		if (lc_msg_get_listening(p, n, &m.listening) == 0 &&
		    lc_msg_put_listening(&b, &m.listening) == 0)
			lc_check_same(&b, p, n);
		break;
	case 10:
		if (lc_msg_get_connect(p, n, &m.conn) == 0 &&
		    lc_msg_put_connect(&b, &m.conn) == 0)
			lc_check_same(&b, p, n);
		break;
	case 11:
		if (lc_msg_get_connected(p, n, &m.connected) == 0 &&
		    lc_msg_put_connected(&b, &m.connected) == 0)
			lc_check_same(&b, p, n);
		break;
	case 12:
		if (lc_msg_get_file_done(p, n, &m.done) == 0 &&
		    lc_msg_put_file_done(&b, &m.done) == 0)
			lc_check_same(&b, p, n);
		break;
	case 13:
		if (lc_msg_get_xfer_done(p, n, &m.xfer) == 0 &&
		    lc_msg_put_xfer_done(&b, LC_MSG_SRC_DONE, &m.xfer) == 0)
			lc_check_same(&b, p, n);
		break;
	case 14:
		if (lc_msg_get_progress(p, n, &m.prog) == 0 &&
		    lc_msg_put_progress(&b, &m.prog) == 0)
			lc_check_same(&b, p, n);
		break;
	case 15:
		(void)lc_msg_get_empty(p, n);
		break;
	case 16:
		if (lc_msg_get_file_sum(p, n, &m.sum) == 0 &&
		    lc_msg_put_file_sum(&b, &m.sum) == 0)
			lc_check_same(&b, p, n);
		break;
	case 17:
		if (lc_msg_get_file_prefix(p, n, &m.prefix) == 0 &&
		    lc_msg_put_file_prefix(&b, &m.prefix) == 0)
			lc_check_same(&b, p, n);
		break;
	case 18:
		if (lc_msg_get_prefix_match(p, n, &m.match) == 0 &&
		    lc_msg_put_prefix_match(&b, &m.match) == 0) {
			lc_check_same(&b, p, n);
			lc_check_runs(&m.match);
		}
		break;
	case 19:
		if (lc_msg_get_stream_lost(p, n, &m.lost) == 0 &&
		    lc_msg_put_stream_lost(&b, &m.lost) == 0)
			lc_check_same(&b, p, n);
		break;
	case 20:
		if (lc_msg_get_ack(p, n, &m.ack) == 0 &&
		    lc_msg_put_ack(&b, &m.ack) == 0)
			lc_check_same(&b, p, n);
		break;
	case 21:
		if (lc_msg_get_src_credit(p, n, &m.credit) == 0 &&
		    lc_msg_put_src_credit(&b, &m.credit) == 0)
			lc_check_same(&b, p, n);
		break;
	case 22:
		if (lc_msg_get_file_skip(p, n, &m.skip) == 0 &&
		    (m.skip.id == 0 || m.skip.why < LC_SKIP_UPTODATE ||
		    m.skip.why > LC_SKIP_DRY_SAME))
			abort();
		/* why 1 says what it updated in words the controller knows */
		if (lc_msg_get_file_skip(p, n, &m.skip) == 0 &&
		    m.skip.why == LC_SKIP_UPTODATE) {
			unsigned set;
			char again[32];

			if (lc_skip_set_get(m.skip.msg, &set) != 0 || set > 7)
				abort();
			lc_skip_set_put(set, again, sizeof(again));
			if (strcmp(again, m.skip.msg) != 0)
				abort();
		}
		if (lc_msg_get_file_skip(p, n, &m.skip) == 0 &&
		    lc_msg_put_file_skip(&b, &m.skip) == 0)
			lc_check_same(&b, p, n);
		break;
	case 23:
		if (lc_msg_get_file_fail(p, n, &m.fail) == 0 &&
		    !lc_relname_ok(m.fail.name))
			abort();
		if (lc_msg_get_file_fail(p, n, &m.fail) == 0 &&
		    lc_msg_put_file_fail(&b, &m.fail) == 0)
			lc_check_same(&b, p, n);
		break;
	case 24:
		lc_check_relname(p, n);
		break;
	case 26:
		if (lc_msg_get_ping(p, n, &m.ping) == 0 &&
		    (m.ping.grace_s == 0 || m.ping.grace_s > LC_PING_GRACE_MAX))
			abort();
		if (lc_msg_get_ping(p, n, &m.ping) == 0 &&
		    lc_msg_put_ping(&b, &m.ping) == 0)
			lc_check_same(&b, p, n);
		break;
	case 25:
		if (lc_msg_get_file_abort(p, n, &m.abort_) == 0 &&
		    m.abort_.id == 0)
			abort();
		if (lc_msg_get_file_abort(p, n, &m.abort_) == 0 &&
		    lc_msg_put_file_abort(&b, &m.abort_) == 0)
			lc_check_same(&b, p, n);
		break;
	case 27:
		if (lc_msg_get_dial(p, n, &m.dial) == 0) {
			if (m.dial.streams == 0 ||
			    m.dial.streams > LC_MAX_STREAMS ||
			    m.dial.addr[0] == '\0')
				abort();
			for (uint32_t i = 0; i < m.dial.streams; i++)
				if (m.dial.ports[i] == 0)
					abort();
			if (lc_msg_put_dial(&b, &m.dial) == 0)
				lc_check_same(&b, p, n);
		}
		break;
	case 28:
		/* reverse CONNECT: no address, no ports; else both */
		if (lc_msg_get_connect(p, n, &m.conn) == 0 &&
		    (m.conn.addr[0] == '\0') !=
		    !!(m.conn.flags & LC_XFER_REVERSE))
			abort();
		if (lc_msg_get_connected(p, n, &m.connected) == 0 &&
		    m.connected.nports != 0 &&
		    m.connected.nports != m.connected.streams)
			abort();
		if (lc_msg_get_listening(p, n, &m.listening) == 0 &&
		    m.listening.nports != 0 &&
		    m.listening.nports != m.listening.streams)
			abort();
		break;
	case 29:
		if (lc_msg_get_file_len(p, n, &m.len) == 0 &&
		    (m.len.id == 0 || m.len.length > LC_PIPE_MAX))
			abort();
		if (lc_msg_get_file_len(p, n, &m.len) == 0 &&
		    lc_msg_put_file_len(&b, &m.len) == 0)
			lc_check_same(&b, p, n);
		break;
	case 30:
		/* not control frames: compare the bytes themselves */
		if (lc_takeover_get_challenge(p, n, nonce) == 0 &&
		    (lc_takeover_put_challenge(&b, nonce) != 0 ||
		    lc_buf_len(&b) != n || memcmp(lc_buf_ptr(&b), p, n) != 0))
			abort();
		lc_buf_reset(&b);
		if (lc_takeover_get_request(p, n, &m.treq) == 0 &&
		    (lc_takeover_put_request(&b, &m.treq) != 0 ||
		    lc_buf_len(&b) != n || memcmp(lc_buf_ptr(&b), p, n) != 0))
			abort();
		lc_buf_reset(&b);
		if (lc_takeover_get_answer(p, n, &verdict) == 0 &&
		    (verdict < LC_TAKEOVER_YES || verdict > LC_TAKEOVER_NO_ROOT ||
		    lc_takeover_put_answer(&b, verdict) != 0 ||
		    lc_buf_len(&b) != n || memcmp(lc_buf_ptr(&b), p, n) != 0))
			abort();
		break;
	default:
		/*
		 * The frame splitter on raw bytes; a whole frame of any type
		 * in the table (wire_msgs.def) goes through the table's one
		 * decoder and encoder and must come back the same.
		 */
		if (lc_msg_peek(p, n, &type, &data, &n, &flen) == 1 &&
		    lc_msg_get(type, data, n, &any) == 0 &&
		    lc_msg_put(&b, type, &any) == 0)
			lc_check_same(&b, data, n);
		break;
	}
	lc_buf_free(&b);
	return 0;
}
