/*
 * The sink's ordered writer (writer.h) against any order of blocks: a
 * file of up to 64 KiB, maybe a resume (a partial file kept below a cut,
 * with runs of chunks below it to rewrite) or a stream of unknown length,
 * then DATA, HOLE, FILE_LEN (the stream's end) and a close (the file
 * dropped while a receiver holds the writer) in whatever order the input
 * says, with a small budget for waiting holes.  A model of the file
 * checks, after every step and at the end, that:
 *   - the kept chunks of a partial file are never touched;
 *   - nothing is written past the end (the file's length, or the
 *     stream's end once known), and a block outside the ranges to write,
 *     or overlapping one taken before, is refused;
 *   - everything below the written offset is what was sent (data, or
 *     zeros for holes), and that offset only grows;
 *   - the file completes once, only at its end and only when every byte
 *     to write has come; and it does complete when they all have;
 *   - after the close nothing is taken and nothing changes; FILE_ABORT's
 *     close happens only while nothing is written;
 *   - waiting holes' charges all come back to the budget.
 * Input: 8 bytes of setup, then 6 bytes a step (see below).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* memfd_create (the libFuzzer build sets no flags) */
#endif
#include "err.h"
#include "wire.h"
#include "writer.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FW_MAX 65536u		/* file bound */
#define FW_BLOCK 4096u		/* pool buffer size: DATA length bound */
#define FW_CHUNK 1024u		/* resume chunks */
#define FW_MAX_SPANS 4

enum { FW_NONE, FW_DATA, FW_HOLE };

struct fw {
	int fd;
	uint64_t end;		/* the file's end (a stream's bound) */
	uint64_t tail;		/* the resume cut */
	int open;		/* a stream whose end is not known */
	struct lc_span spans[FW_MAX_SPANS];
	uint32_t nspans;
	uint8_t got[FW_MAX];	/* FW_DATA / FW_HOLE: taken by the writer */
	uint64_t written;	/* what lc_wfile_written said last */
	int complete;
	int closed;
	int stream;		/* it was a stream (m->open at the start) */
};

static uint8_t
fw_data(uint64_t off)
{
	return (uint8_t)(off * 7 + (off >> 8) * 13 + 1);
}

/* The partial file's bytes: never equal to the data at that offset. */
static uint8_t
fw_kept(uint64_t off)
{
	return (uint8_t)~fw_data(off);
}

/* Is off in a range the writer is to write (a span, or the tail)? */
static int
fw_wanted(const struct fw *m, uint64_t off)
{
	if (off >= m->tail)
		return off < m->end;
	for (uint32_t i = 0; i < m->nspans; i++)
		if (off >= m->spans[i].off &&
		    off - m->spans[i].off < m->spans[i].len)
			return 1;
	return 0;
}

/* May [off, off + len) go in: wanted, in one range, not taken before. */
static int
fw_fits(const struct fw *m, uint64_t off, uint32_t len)
{
	if (len == 0 || off >= FW_MAX || FW_MAX - off < len)
		return 0;
	for (uint64_t i = off; i < off + len; i++)
		if (!fw_wanted(m, i) || m->got[i] != FW_NONE)
			return 0;
	/* inside one span, or inside the tail */
	return (off >= m->tail) == (off + len - 1 >= m->tail) &&
	    (off >= m->tail || fw_wanted(m, off + len - 1));
}

static void
fw_take(struct fw *m, uint64_t off, uint32_t len, int what)
{
	for (uint64_t i = off; i < off + len; i++) {
		if (!fw_wanted(m, i) || m->got[i] != FW_NONE)
			abort();	/* the writer took what it must refuse */
		m->got[i] = (uint8_t)what;
	}
}

/* Every byte to write has come (a stream: once its end is known). */
static int
fw_all_taken(const struct fw *m)
{
	if (m->open)
		return 0;
	for (uint64_t i = 0; i < m->end; i++)
		if (fw_wanted(m, i) && m->got[i] == FW_NONE)
			return 0;
	return 1;
}

/*
 * The file's bytes [a, b) are what the model says they must be: kept
 * bytes of the partial file as they were; bytes to write below the
 * written offset what was sent (data, or zeros for a hole); nothing to
 * check where the writer has not been yet.
 */
static void
fw_check_range(const struct fw *m, uint64_t a, uint64_t b)
{
	uint8_t buf[4096];
	struct stat st;

	if (fstat(m->fd, &st) != 0)
		abort();
	for (uint64_t off = a; off < b; off += sizeof(buf)) {
		size_t n = b - off < sizeof(buf) ? (size_t)(b - off) :
		    sizeof(buf);

		memset(buf, 0, sizeof(buf));
		if (off < (uint64_t)st.st_size && pread(m->fd, buf, n,
		    (off_t)off) < 0)
			abort();
		for (size_t i = 0; i < n; i++) {
			uint64_t o = off + i;
			uint8_t want;
			if (!fw_wanted(m, o)) {
				if (o >= m->tail)
					continue;	/* past the end */
				want = fw_kept(o);
			} else if (o >= m->written) {
				continue;	/* not written yet */
			} else {
				want = m->got[o] == FW_DATA ? fw_data(o) : 0;
			}
			if (buf[i] != want)
				abort();
		}
	}
}

/* After each step. */
static void
fw_step_check(struct fw *m, struct lc_wfile *w, int complete)
{
	uint64_t now = lc_wfile_written(w), was = m->written;
	struct stat st;

	if (fstat(m->fd, &st) != 0)
		abort();
	/* nothing past the end (a stream: its bound until FILE_LEN) */
	if ((uint64_t)st.st_size > (m->end > m->tail ? m->end : m->tail))
		abort();
	/* the written offset stays within the file and only grows */
	if (now > m->end || now < was)
		abort();
	if (now > was) {
		/* everything it passed came, and is on disk as sent */
		for (uint64_t i = was; i < now; i++)
			if (fw_wanted(m, i) && m->got[i] == FW_NONE)
				abort();
		m->written = now;
		fw_check_range(m, was, now);
	}
	if (complete) {
		if (m->complete || m->closed || now != m->end ||
		    !fw_all_taken(m))
			abort();
		m->complete = 1;
	}
}

static void
fw_setup(struct fw *m, int fd, const uint8_t *p)
{
	uint64_t kept;
	uint8_t buf[FW_CHUNK];
	uint32_t nchunks, c;

	memset(m, 0, sizeof(*m));
	m->fd = fd;
	m->end = ((uint64_t)p[0] << 8 | p[1]) + 1;	/* 1 .. 65536 */
	kept = ((uint64_t)p[2] << 8 | p[3]) % (m->end + 1);
	m->open = (p[4] & 1) && kept == 0;
	m->stream = m->open;
	if (m->open)
		m->end = FW_MAX;	/* the bound until FILE_LEN */
	m->tail = kept;
	/* runs of chunks to rewrite below the cut, from p[5]'s bits */
	nchunks = (uint32_t)((kept + FW_CHUNK - 1) / FW_CHUNK);
	for (c = 0; c < nchunks && c < 8 && m->nspans < FW_MAX_SPANS; c++) {
		uint64_t off = (uint64_t)c * FW_CHUNK;
		uint64_t len = kept - off < FW_CHUNK ? kept - off : FW_CHUNK;
		if (!(p[5] & (1u << c)))
			continue;
		/* consecutive chunks are one run */
		if (m->nspans > 0 && m->spans[m->nspans - 1].off +
		    m->spans[m->nspans - 1].len == off)
			m->spans[m->nspans - 1].len += len;
		else
			m->spans[m->nspans++] = (struct lc_span){ off, len };
	}
	/* the partial file */
	for (uint64_t off = 0; off < kept; off += FW_CHUNK) {
		size_t n = kept - off < FW_CHUNK ? (size_t)(kept - off) :
		    FW_CHUNK;
		for (size_t i = 0; i < n; i++)
			buf[i] = fw_kept(off + i);
		if (pwrite(m->fd, buf, n, (off_t)off) != (ssize_t)n)
			abort();
	}
	m->written = m->nspans > 0 ? m->spans[0].off : m->tail;
}

/* The offset a step names: anywhere in the file, or near its end. */
static uint64_t
fw_off(const struct fw *m, const uint8_t *p)
{
	uint64_t v = (uint64_t)p[1] << 8 | p[2];

	if (p[0] & 0x80)	/* aligned: the usual case */
		v = v / 512 * 512;
	return m->end > 0 ? v % (m->end + 8) : v;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fw m;
	atomic_int_fast64_t budget;
	int_fast64_t given;
	struct lc_pool *pool = NULL;
	struct lc_wfile *w = NULL, *held;
	struct lc_wbuf *b;
	struct lc_err e;
	uint64_t first;
	int complete, fd, r;

	if (size < 8)
		return 0;
	if ((fd = memfd_create("fuzz_writer", 0)) < 0)
		abort();
	fw_setup(&m, fd, data);
	if (lc_pool_new(64, FW_BLOCK, &pool) != 0 ||
	    lc_wfile_new(m.fd, 1, m.tail, m.end, "f", &w) != 0)
		abort();
	if (m.open)
		lc_wfile_open_end(w);
	if (lc_wfile_set_spans(w, m.spans, m.nspans) != 0)
		abort();
	given = (int_fast64_t)(data[6] % 16) * LC_WFILE_HOLE_COST;
	atomic_init(&budget, given);
	lc_wfile_set_budget(w, &budget);
	held = lc_wfile_ref(w);		/* a receiver's */
	if ((first = lc_wfile_written(w)) != m.written)
		abort();
	for (size_t at = 8; at + 6 <= size; at += 6) {
		const uint8_t *p = data + at;
		uint64_t off = fw_off(&m, p + 1);
		uint32_t len = (uint32_t)p[4] << 8 | p[5];
		int fits;

		complete = 0;
		lc_err_clear(&e);
		switch (p[0] % 4) {
		case 0:		/* DATA */
			len = len % FW_BLOCK + 1;
			if ((b = lc_pool_get_timed(pool, 0)) == NULL)
				break;	/* buffers all wait in the writer */
			b->off = off;
			b->len = len;
			for (uint32_t i = 0; i < len; i++)
				b->data[i] = fw_data(off + i);
			fits = !m.closed && fw_fits(&m, off, len);
			r = lc_wfile_submit(held, b, &complete, &e);
			if (r != (fits ? 0 : -LC_ERR_PROTO))
				abort();
			if (r == 0)
				fw_take(&m, off, len, FW_DATA);
			break;
		case 1:		/* HOLE */
			len = p[0] & 0x40 ? len + 1 : len % 64 + 1;
			fits = !m.closed && fw_fits(&m, off, len);
			r = lc_wfile_submit_hole(held, off, len, &complete, &e);
			/* 1: it must wait; never for one the writer can take */
			if (r == 1 && (!fits || off == m.written))
				abort();
			if (r != 1 && r != (fits ? 0 : -LC_ERR_PROTO))
				abort();
			if (r == 0)
				fw_take(&m, off, len, FW_HOLE);
			break;
		case 2: {	/* FILE_LEN */
			uint64_t end = off, top = 0;
			for (uint64_t i = 0; i < FW_MAX; i++)
				if (m.got[i] != FW_NONE)
					top = i + 1;
			fits = m.open && end >= top && end <= FW_MAX;
			r = lc_wfile_set_end(held, end, &complete);
			if (r != (fits && !m.closed ? 0 : -LC_ERR_PROTO))
				abort();
			if (r == 0) {
				m.open = 0;
				m.end = end;
			}
			break;
		}
		default:	/* the file is dropped: the owner closes it */
			if (m.closed)
				break;
			if (p[0] & 0x40) {	/* FILE_ABORT: if nothing came */
				r = lc_wfile_close_unwritten(w, first);
				if (r != (m.written == first))
					abort();
				m.closed = r;
			} else {
				if (lc_wfile_close(w) != m.written)
					abort();
				m.closed = 1;
			}
			break;
		}
		fw_step_check(&m, held, complete);
	}
	/*
	 * All of it came, and not closed first: it completed (a regular
	 * file with nothing to write never completes in the writer: the
	 * sink finishes it at once).
	 */
	if (!m.closed && !(m.tail >= m.end && m.nspans == 0 && !m.stream) &&
	    fw_all_taken(&m) != m.complete)
		abort();
	fw_check_range(&m, 0, m.end > m.tail ? m.end : m.tail);
	{
		struct stat st;
		if (fstat(m.fd, &st) != 0)
			abort();
		/* complete: exactly its length (a trailing hole sets it) */
		if (m.complete && !m.stream && (uint64_t)st.st_size != m.end)
			abort();
	}
	lc_wfile_free(w);	/* the owner */
	lc_wfile_unref(held);	/* the receiver: the last */
	if (atomic_load(&budget) != given)
		abort();	/* a waiting hole's charge was lost */
	lc_pool_free(pool);
	close(m.fd);
	return 0;
}
