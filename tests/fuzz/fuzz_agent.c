/*
 * Stateful harness for the agent's control loop (src/agent/agent.c and the
 * source and sink roles behind it): lc_agent_run() runs in-process on a
 * socketpair, restricted (--restrict) to a fresh temp dir holding a small
 * source file, and gets a sequence of control messages built from the
 * input; then the harness closes its end and lc_agent_run must return.
 * It must never crash, hang or leak.
 *
 * Input: records of u8 selector, u8 length, length bytes.  A selector
 * below LC_FZ_RAW builds a well-formed message of one type from the bytes
 * with the wire.h encoders (so sequences get past the decoders into deep
 * states); from LC_FZ_RAW on the record is a raw frame: its first byte is
 * the type, the rest the payload.  A HELLO always goes first.
 *
 * Network: the sink listens on ephemeral ports (wildcard address, as in
 * real use); the source connects only to 127.0.0.1, to listening sockets
 * this harness owns and never accepts on: every CONNECT, built or raw, is
 * rewritten to them before it is sent.  Nothing leaves the machine.
 */
#include "agent.h"
#include "buf.h"
#include "log.h"
#include "fdio.h"
#include "wire.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LC_FZ_RAW 200
#define LC_FZ_MAX_OUT (64u << 10)	/* fits the socket buffer */
#define LC_FZ_PORTS 4

static int lc_fz_listen[LC_FZ_PORTS] = { -1, -1, -1, -1 };
static uint16_t lc_fz_port[LC_FZ_PORTS];

/* a little reader over one record's bytes: zeros when it runs out */
struct lc_fz {
	const uint8_t *p;
	size_t n;
};

static uint64_t
lc_fz_take(struct lc_fz *f, size_t bytes)
{
	uint64_t v = 0;

	for (size_t i = 0; i < bytes; i++) {
		v = v << 8 | (f->n > 0 ? *f->p : 0);
		if (f->n > 0) {
			f->p++;
			f->n--;
		}
	}
	return v;
}

/* the rest as a string without NULs (the decoders reject them) */
static void
lc_fz_str(struct lc_fz *f, char *out, size_t outsz)
{
	size_t k = f->n < outsz - 1 ? f->n : outsz - 1;

	for (size_t i = 0; i < k; i++)
		out[i] = f->p[i] != 0 ? (char)f->p[i] : '_';
	out[k] = '\0';
	f->p += f->n;
	f->n = 0;
}

static void
lc_fz_fix_connect(struct lc_msg_connect *m)
{
	snprintf(m->addr, sizeof(m->addr), "127.0.0.1");
	for (uint32_t i = 0; i < LC_MAX_STREAMS; i++)
		m->ports[i] = lc_fz_port[i % LC_FZ_PORTS];
}

/*
 * A fed request's pieces (LC_ADD_FED, SRC_ENTRY), by the first byte: a
 * SRC_ADD with FED and any other flags, one SRC_ENTRY (a name below
 * "sub" or ".", one that is not, any text) or its end, or a whole
 * sequence: SRC_CREDIT, SRC_ADD(FED) and up to 15 names, and the end.
 */
static int
lc_fz_fed(struct lc_buf *b, struct lc_fz *f)
{
	static const char *roots[] = { "sub", ".", "src.bin", "sub/" };
	static const char *names[] = { "sub/x", "src.bin", "sub",
		"sub/../src.bin", "src.bin/x", "x/y", "sub/x/y", "sub/z" };
	struct lc_msg_src_credit c;
	struct lc_msg_src_add a;
	struct lc_msg_src_entry e;
	uint8_t op = (uint8_t)lc_fz_take(f, 1), n, pick;
	int r = 0;

	memset(&a, 0, sizeof(a));
	a.flags = LC_ADD_FED | LC_ADD_RECURSIVE;
	if (op & 0x80)	/* other flags too, the refused ones as well */
		a.flags |= (uint32_t)lc_fz_take(f, 1) & LC_ADD_MASK;
	pick = (uint8_t)lc_fz_take(f, 1) % 4;
	if (pick == 1)
		a.flags |= LC_ADD_CONTENTS;
	snprintf(a.path, sizeof(a.path), "%s", roots[pick]);
	if ((op & 3) == 0)
		return lc_msg_put_src_add(b, &a);
	memset(&e, 0, sizeof(e));
	if ((op & 3) == 2) {
		e.flags = LC_ENTRY_END;
		return lc_msg_put_src_entry(b, &e);
	}
	if ((op & 3) == 3) {
		c.upto = (uint32_t)lc_fz_take(f, 1);
		if ((r = lc_msg_put_src_credit(b, &c)) != 0 ||
		    (r = lc_msg_put_src_add(b, &a)) != 0)
			return r;
	}
	n = (op & 3) == 3 ? (uint8_t)((op >> 2) & 15) : 1;
	for (uint8_t i = 0; i < n && r == 0; i++) {
		pick = (uint8_t)lc_fz_take(f, 1);
		if (pick < 8)
			snprintf(e.name, sizeof(e.name), "%s", names[pick]);
		else
			lc_fz_str(f, e.name, sizeof(e.name));
		if (e.name[0] == '\0')
			snprintf(e.name, sizeof(e.name), "sub/z");
		r = lc_msg_put_src_entry(b, &e);
	}
	if (r == 0 && (op & 3) == 3) {
		memset(&e, 0, sizeof(e));
		e.flags = LC_ENTRY_END;
		r = lc_msg_put_src_entry(b, &e);
	}
	return r;
}

/*
 * Following a part file (SRC_PART, SRC_AVAIL; issue 25), by the first
 * byte: one SRC_PART (a name whose part file is there, is a symlink, is
 * missing, or any text; any size), one SRC_AVAIL (any id, any avail), a
 * whole fed request (SRC_CREDIT, SRC_ADD(FED) of "." or "sub", up to 7
 * SRC_PARTs and SRC_ENTRYs, the end) or a run of SRC_AVAILs for one id,
 * rising, with a step back now and then.  The temp dir holds
 * sub/.x.lanecp-part (a part file) and sub/.y.lanecp-part (a symlink).
 */
static int
lc_fz_follow(struct lc_buf *b, struct lc_fz *f)
{
	static const char *names[] = { "sub/x", "src.bin", "sub/y", "sub/z",
		"x", "y", "sub", "sub/x/y" };
	struct lc_msg_src_credit c;
	struct lc_msg_src_add a;
	struct lc_msg_src_entry e;
	struct lc_msg_src_part p;
	struct lc_msg_src_avail v;
	uint8_t op = (uint8_t)lc_fz_take(f, 1), n, pick;
	int r = 0;

	memset(&p, 0, sizeof(p));
	memset(&v, 0, sizeof(v));
	switch (op & 3) {
	case 0:
		p.size = lc_fz_take(f, 3);
		pick = (uint8_t)lc_fz_take(f, 1);
		if (pick < 8)
			snprintf(p.name, sizeof(p.name), "%s", names[pick]);
		else
			lc_fz_str(f, p.name, sizeof(p.name));
		if (p.name[0] == '\0')
			snprintf(p.name, sizeof(p.name), "sub/x");
		return lc_msg_put_src_part(b, &p);
	case 1:
		v.id = (uint32_t)lc_fz_take(f, 1) + 1;
		v.avail = lc_fz_take(f, 3);
		return lc_msg_put_src_avail(b, &v);
	case 2:
		memset(&a, 0, sizeof(a));
		a.flags = LC_ADD_FED | LC_ADD_RECURSIVE;
		if (op & 0x80) {
			a.flags |= LC_ADD_CONTENTS;
			snprintf(a.path, sizeof(a.path), ".");
		} else {
			snprintf(a.path, sizeof(a.path), "sub");
		}
		c.upto = (uint32_t)lc_fz_take(f, 1);
		if ((r = lc_msg_put_src_credit(b, &c)) != 0 ||
		    (r = lc_msg_put_src_add(b, &a)) != 0)
			return r;
		n = (uint8_t)((op >> 2) & 7);
		for (uint8_t i = 0; i < n && r == 0; i++) {
			pick = (uint8_t)lc_fz_take(f, 1);
			if (pick & 0x80) {
				memset(&e, 0, sizeof(e));
				snprintf(e.name, sizeof(e.name), "%s",
				    names[pick & 7]);
				r = lc_msg_put_src_entry(b, &e);
			} else {
				p.size = lc_fz_take(f, 2) << 4;
				snprintf(p.name, sizeof(p.name), "%s",
				    names[pick & 7]);
				r = lc_msg_put_src_part(b, &p);
			}
		}
		if (r == 0 && (op & 0x40)) {
			memset(&e, 0, sizeof(e));
			e.flags = LC_ENTRY_END;
			r = lc_msg_put_src_entry(b, &e);
		}
		return r;
	default:
		v.id = (uint32_t)lc_fz_take(f, 1) % 8 + 1;
		n = (uint8_t)((op >> 2) & 15) + 1;
		for (uint8_t i = 0; i < n && r == 0; i++) {
			uint64_t step = lc_fz_take(f, 2);
			if (step == 0xffff && v.avail > 0)
				v.avail--;	/* back: refused */
			else
				v.avail += step;
			r = lc_msg_put_src_avail(b, &v);
		}
		return r;
	}
}

static int
lc_fz_build(struct lc_buf *b, uint8_t sel, struct lc_fz *f)
{
	static union {
		struct lc_msg_hello hello;
		struct lc_msg_src_add add;
		struct lc_msg_file file;
		struct lc_msg_sink_target tgt;
		struct lc_msg_file_ready ready;
		struct lc_msg_listen listen;
		struct lc_msg_connect conn;
		struct lc_msg_file_sum sum;
		struct lc_msg_file_prefix prefix;
		struct lc_msg_file_hashes hashes;
		struct lc_msg_prefix_match match;
		struct lc_msg_stream_lost lost;
		struct lc_msg_ack ack;
		struct lc_msg_src_filter filter;
		struct lc_msg_del_scan scan;
		struct lc_msg_delete del;
		struct lc_msg_src_entry entry;
		struct lc_msg_src_credit credit;
	} m;
	static const char *paths[] = { "src.bin", "out", "out/", "dst.bin",
		"sub", "sub/x", "/", ".", "..", "src.bin/x" };
	static uint8_t hashes[64 * LC_PREFIX_HASH_LEN];
	uint8_t pick;

	memset(&m, 0, sizeof(m));
	switch (sel % 23) {
	case 0:
		m.hello.magic = LC_PROTO_MAGIC;
		m.hello.proto = LC_PROTO_VERSION;
		snprintf(m.hello.software, sizeof(m.hello.software), "fuzz");
		m.hello.max_streams = (uint32_t)lc_fz_take(f, 1);
		snprintf(m.hello.hostname, sizeof(m.hello.hostname), "fuzz");
		return lc_msg_put_hello(b, &m.hello);
	case 1:
		return lc_msg_put_empty(b, LC_MSG_BYE);
	case 2:
		m.add.flags = (uint32_t)lc_fz_take(f, 1);
		pick = (uint8_t)lc_fz_take(f, 1);
		if (pick < 10)
			snprintf(m.add.path, sizeof(m.add.path), "%s",
			    paths[pick]);
		else
			lc_fz_str(f, m.add.path, sizeof(m.add.path));
		return lc_msg_put_src_add(b, &m.add);
	case 3:
		m.ready.id = (uint32_t)lc_fz_take(f, 1);
		m.ready.start = lc_fz_take(f, 3);
		return lc_msg_put_file_ready(b, &m.ready);
	case 4:
		m.conn.streams = (uint32_t)lc_fz_take(f, 1) % 4 + 1;
		m.conn.window = (uint32_t)lc_fz_take(f, 2) << 4;
		m.conn.block = LC_MIN_BLOCK << (lc_fz_take(f, 1) % 9);
		m.conn.flags = (uint32_t)lc_fz_take(f, 1) & LC_XFER_MASK;
		m.conn.csum = (uint32_t)lc_fz_take(f, 1) % (LC_CSUM_ALG_MAX + 1);
		m.conn.rate = lc_fz_take(f, 3);
		lc_fz_fix_connect(&m.conn);
		return lc_msg_put_connect(b, &m.conn);
	case 5:
		return lc_msg_put_empty(b, LC_MSG_SRC_NOMORE);
	case 6:
		m.prefix.id = (uint32_t)lc_fz_take(f, 1);
		m.prefix.length = lc_fz_take(f, 3);
		m.prefix.chunk = LC_MIN_BLOCK << (lc_fz_take(f, 1) % 9);
		m.prefix.n = (uint32_t)((m.prefix.length + m.prefix.chunk - 1) /
		    m.prefix.chunk);
		if (m.prefix.n > 64)
			m.prefix.n = 64;
		m.prefix.hashes = hashes;
		return lc_msg_put_file_prefix(b, &m.prefix);
	case 7:
		m.lost.stream = (uint32_t)lc_fz_take(f, 1) % 8;
		m.lost.has_last = (uint8_t)(lc_fz_take(f, 1) & 1);
		m.lost.last_file = (uint32_t)lc_fz_take(f, 1);
		m.lost.last_off = lc_fz_take(f, 3);
		snprintf(m.lost.reason, sizeof(m.lost.reason), "fuzz");
		return lc_msg_put_stream_lost(b, &m.lost);
	case 8:
		m.ack.file = (uint32_t)lc_fz_take(f, 1);
		m.ack.written = lc_fz_take(f, 3);
		return lc_msg_put_ack(b, &m.ack);
	case 9:
		m.tgt.flags = (uint32_t)lc_fz_take(f, 1) & LC_TGT_MASK;
		m.tgt.inflight = (uint32_t)lc_fz_take(f, 1) % 4 + 1;
		pick = (uint8_t)lc_fz_take(f, 1);
		if (pick < 10)
			snprintf(m.tgt.target, sizeof(m.tgt.target), "%s",
			    paths[pick]);
		else
			lc_fz_str(f, m.tgt.target, sizeof(m.tgt.target));
		return lc_msg_put_sink_target(b, &m.tgt);
	case 10:
		m.listen.streams = (uint32_t)lc_fz_take(f, 1) % 4 + 1;
		m.listen.window = (uint32_t)lc_fz_take(f, 2) << 4;
		m.listen.block = LC_MIN_BLOCK << (lc_fz_take(f, 1) % 9);
		m.listen.flags = (uint32_t)lc_fz_take(f, 1) & LC_XFER_MASK;
		m.listen.csum = (uint32_t)lc_fz_take(f, 1) %
		    (LC_CSUM_ALG_MAX + 1);
		m.listen.stall_s = (uint32_t)lc_fz_take(f, 1);
		return lc_msg_put_listen(b, &m.listen);
	case 11:
		m.file.id = (uint32_t)lc_fz_take(f, 1);
		m.file.kind = LC_KIND_REG;
		m.file.mode = (uint32_t)lc_fz_take(f, 2) & 07777u;
		m.file.size = lc_fz_take(f, 3);
		m.file.mtime_sec = (int64_t)lc_fz_take(f, 4);
		m.file.mtime_nsec = (uint32_t)lc_fz_take(f, 2);
		pick = (uint8_t)lc_fz_take(f, 1);
		if (pick < 10)
			snprintf(m.file.name, sizeof(m.file.name), "%s",
			    paths[pick]);
		else
			lc_fz_str(f, m.file.name, sizeof(m.file.name));
		return lc_msg_put_file(b, &m.file);
	case 12:
		m.sum.id = (uint32_t)lc_fz_take(f, 1);
		snprintf(m.sum.checksum, sizeof(m.sum.checksum), "sha256:%064x",
		    (unsigned)lc_fz_take(f, 1));
		return lc_msg_put_file_sum(b, &m.sum);
	case 13:
		m.match.id = (uint32_t)lc_fz_take(f, 1);
		m.match.match = lc_fz_take(f, 3);
		m.match.n = (uint32_t)lc_fz_take(f, 1) % 4;
		for (uint32_t i = 0; i < m.match.n; i++) {
			m.match.runs[i].first = (uint32_t)lc_fz_take(f, 2);
			m.match.runs[i].count = (uint32_t)lc_fz_take(f, 1);
		}
		return lc_msg_put_prefix_match(b, &m.match);
	case 15:	/* --exclude: any pattern, before or after SRC_ADD */
		m.filter.kind = (uint8_t)(lc_fz_take(f, 1) % 3);
		lc_fz_str(f, m.filter.pattern, sizeof(m.filter.pattern));
		if (m.filter.pattern[0] == '\0')
			snprintf(m.filter.pattern, sizeof(m.filter.pattern),
			    "**/x*");
		return lc_msg_put_src_filter(b, &m.filter);
	case 16:	/* --delete: a scan of any root, early or late */
		pick = (uint8_t)lc_fz_take(f, 1);
		snprintf(m.scan.root, sizeof(m.scan.root), "%s",
		    pick < 10 ? paths[pick] : "");
		return lc_msg_put_del_scan(b, &m.scan);
	case 17:
		pick = (uint8_t)lc_fz_take(f, 1);
		m.del.kind = (uint8_t)(lc_fz_take(f, 1) % 4);
		snprintf(m.del.name, sizeof(m.del.name), "%s",
		    pick < 10 ? paths[pick] : "sub");
		return lc_msg_put_delete(b, &m.del);
	case 18:	/* -u's delta: a slice of a hash list, any slice */
		m.hashes.id = (uint32_t)lc_fz_take(f, 1);
		m.hashes.length = lc_fz_take(f, 3);
		m.hashes.chunk = LC_MIN_BLOCK << (lc_fz_take(f, 1) % 9);
		m.hashes.total = (uint32_t)((m.hashes.length +
		    m.hashes.chunk - 1) / m.hashes.chunk);
		m.hashes.first = (uint32_t)lc_fz_take(f, 1);
		m.hashes.n = (uint32_t)(lc_fz_take(f, 1) % 64) + 1;
		if (m.hashes.first < m.hashes.total &&
		    m.hashes.n > m.hashes.total - m.hashes.first)
			m.hashes.n = m.hashes.total - m.hashes.first;
		m.hashes.hashes = hashes;	/* 64 * 32 bytes: room */
		return lc_msg_put_file_hashes(b, &m.hashes);
	case 19:	/* --shard: "I/N" from two numbers, or any text */
		m.filter.kind = LC_FILTER_SHARD;
		pick = (uint8_t)lc_fz_take(f, 1);
		if (pick & 1) {
			unsigned i = (unsigned)lc_fz_take(f, 3);
			unsigned n = (unsigned)lc_fz_take(f, 3);
			snprintf(m.filter.pattern, sizeof(m.filter.pattern),
			    "%u/%u", i, n);
		} else {
			lc_fz_str(f, m.filter.pattern,
			    sizeof(m.filter.pattern));
			if (m.filter.pattern[0] == '\0')
				snprintf(m.filter.pattern,
				    sizeof(m.filter.pattern), "1/2");
		}
		return lc_msg_put_src_filter(b, &m.filter);
	case 20:	/* the sink's end of the list, early, late or twice */
		return lc_msg_put_empty(b, LC_MSG_SINK_NOMORE);
	case 21:	/* a fed request: SRC_ADD(FED), SRC_ENTRY, or both */
		return lc_fz_fed(b, f);
	case 22:	/* following a part file: SRC_PART, SRC_AVAIL */
		return lc_fz_follow(b, f);
	default:	/* a frame the agent never expects */
		return lc_msg_put_empty(b, (uint8_t)lc_fz_take(f, 1));
	}
}

/* A raw frame; a CONNECT is kept pointed at our own listeners. */
static int
lc_fz_raw(struct lc_buf *b, struct lc_fz *f)
{
	static struct lc_msg_connect c;
	uint8_t type = (uint8_t)lc_fz_take(f, 1);

	if (type == LC_MSG_CONNECT) {
		if (lc_msg_get_connect(f->p, f->n, &c) != 0)
			return 0;	/* would only be refused: skip */
		lc_fz_fix_connect(&c);
		return lc_msg_put_connect(b, &c);
	}
	if (lc_buf_put_u32(b, (uint32_t)f->n + 1) != 0 ||
	    lc_buf_put_u8(b, type) != 0)
		return -1;
	return lc_buf_put(b, f->p, f->n);
}

static void
lc_fz_init(void)
{
	struct sockaddr_in sin;
	socklen_t len;

	signal(SIGPIPE, SIG_IGN);
	lc_log_init("fuzz_agent", getenv("LC_FUZZ_VERBOSE") != NULL ?
	    LC_LOG_DEBUG : -1, 2);
	for (int i = 0; i < LC_FZ_PORTS; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC |
		    SOCK_NONBLOCK, 0);	/* nonblocking: for the drain */
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(sin);
		if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) ||
		    listen(fd, 64) != 0 ||
		    getsockname(fd, (struct sockaddr *)&sin, &len) != 0)
			abort();
		lc_fz_listen[i] = fd;
		lc_fz_port[i] = ntohs(sin.sin_port);
	}
}

/* Drop what piled up in the backlogs (connections from the last run). */
static void
lc_fz_drain_listeners(void)
{
	for (int i = 0; i < LC_FZ_PORTS; i++) {
		int c;
		while ((c = accept4(lc_fz_listen[i], NULL, NULL,
		    SOCK_CLOEXEC)) >= 0)
			close(c);
	}
}

static int
lc_fz_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	(void)remove(path);
	return 0;
}

static int
lc_fz_setup(char *dir, size_t dirsz)
{
	char path[4096 + 32];
	uint8_t block[4096];
	int fd;

	snprintf(dir, dirsz, "%s/lc-fuzz-agent.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/src.bin", dir);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0644)) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(block); i++)
		block[i] = (uint8_t)(i * 7);
	for (int i = 0; i < 4; i++)	/* 16 KiB */
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
			break;
	close(fd);
	snprintf(path, sizeof(path), "%s/sub", dir);
	(void)mkdir(path, 0755);
	/* a part file being written (SRC_PART sub/x), one a symlink */
	snprintf(path, sizeof(path), "%s/sub/.x.lanecp-part", dir);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0644)) < 0)
		return -1;
	if (write(fd, block, 3000) != 3000) {
		close(fd);
		return -1;
	}
	close(fd);
	snprintf(path, sizeof(path), "%s/sub/.y.lanecp-part", dir);
	if (symlink("../src.bin", path) != 0)
		return -1;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	struct lc_agent_opts o;
	struct lc_buf b;
	char dir[4096];
	int sv[2] = { -1, -1 };
	size_t off = 0;

	if (!init) {
		lc_fz_init();
		init = 1;
	}
	lc_buf_init(&b, LC_FZ_MAX_OUT);
	{
		struct lc_fz f = { (const uint8_t *)"\0", 1 };
		if (lc_fz_build(&b, 0, &f) != 0)	/* HELLO first */
			abort();
	}
	while (off + 2 <= size) {
		uint8_t sel = data[off], len = data[off + 1];
		struct lc_fz f;
		size_t before = lc_buf_len(&b);
		int r;

		off += 2;
		f.p = data + off;
		f.n = size - off < len ? size - off : len;
		off += f.n;
		r = sel < LC_FZ_RAW ? lc_fz_build(&b, sel, &f) :
		    lc_fz_raw(&b, &f);
		if (r != 0) {	/* over our limit: stop here */
			lc_buf_unappend(&b, lc_buf_len(&b) - before);
			break;
		}
	}
	if (lc_fz_setup(dir, sizeof(dir)) != 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	{
		int sz = (int)LC_FZ_MAX_OUT * 2;
		(void)setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		(void)setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
	if (lc_write_all(sv[1], lc_buf_ptr(&b), lc_buf_len(&b)) != 0)
		abort();
	(void)shutdown(sv[1], SHUT_WR);	/* EOF after the messages */
	memset(&o, 0, sizeof(o));
	o.restrict_dir = dir;
	o.local = 1;
	(void)lc_agent_run(sv[0], sv[0], &o);
	close(sv[0]);
	close(sv[1]);
	lc_buf_free(&b);
	lc_fz_drain_listeners();
	(void)nftw(dir, lc_fz_rm, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}
