/*
 * Bounded byte buffers and bounded readers.
 *
 * struct lc_buf is a growable buffer with a hard maximum chosen per use
 * (LC_CTL_MAX for control messages, ...).  Writers append big-endian
 * integers and length-prefixed strings; overflow of the maximum is an
 * error, never a silent truncation.
 *
 * struct lc_rd is a read-only view for decoding hostile input: every
 * get-helper checks the remaining length before reading and leaves the view
 * unchanged on failure; lc_rd_end() rejects trailing bytes.
 */
#ifndef LANECP_BUF_H
#define LANECP_BUF_H

#include <stddef.h>
#include <stdint.h>

struct lc_buf {
	uint8_t *d;
	size_t off;	/* consumed prefix */
	size_t len;	/* end of valid data (off <= len <= alloc) */
	size_t alloc;
	size_t max;	/* hard limit on len - off */
};

void lc_buf_init(struct lc_buf *b, size_t max);
void lc_buf_free(struct lc_buf *b);
void lc_buf_reset(struct lc_buf *b);

/*
 * The data (lc_buf_len() bytes); never NULL: a buffer that never grew
 * gives a constant empty string, so the result may go to memcpy() and
 * friends with a length of 0.
 */
const uint8_t *lc_buf_ptr(const struct lc_buf *b);

static inline size_t
lc_buf_len(const struct lc_buf *b)
{
	return b->len - b->off;
}

/*
 * Make room for n more bytes and return a pointer to them in *p; the bytes
 * count as data at once (lc_buf_unappend() gives back what was not used);
 * n == 0 on a buffer that was never grown leaves *p NULL.
 * Returns 0 or -LC_ERR_TOOBIG / -LC_ERR_NOMEM.
 */
int lc_buf_reserve(struct lc_buf *b, size_t n, uint8_t **p);
void lc_buf_unappend(struct lc_buf *b, size_t n);
/* Drop n bytes from the front (n <= lc_buf_len). */
void lc_buf_consume(struct lc_buf *b, size_t n);

int lc_buf_put(struct lc_buf *b, const void *v, size_t n);
int lc_buf_put_u8(struct lc_buf *b, uint8_t v);
int lc_buf_put_u16(struct lc_buf *b, uint16_t v);
int lc_buf_put_u32(struct lc_buf *b, uint32_t v);
int lc_buf_put_u64(struct lc_buf *b, uint64_t v);
/* u32 length + bytes */
int lc_buf_put_string(struct lc_buf *b, const void *v, size_t n);
int lc_buf_put_cstring(struct lc_buf *b, const char *s);

/* Overwrite 4 bytes at absolute data position pos (for length prefixes). */
void lc_buf_poke_u32(struct lc_buf *b, size_t pos, uint32_t v);

struct lc_rd {
	const uint8_t *p;
	size_t len;
};

static inline void
lc_rd_init(struct lc_rd *r, const void *p, size_t len)
{
	r->p = p;
	r->len = len;
}

/* All return 0 or -LC_ERR_PROTO (short input, bad value). */
int lc_rd_get_u8(struct lc_rd *r, uint8_t *v);
int lc_rd_get_u16(struct lc_rd *r, uint16_t *v);
int lc_rd_get_u32(struct lc_rd *r, uint32_t *v);
int lc_rd_get_u64(struct lc_rd *r, uint64_t *v);
int lc_rd_get_bytes(struct lc_rd *r, void *v, size_t n);
/* Length-prefixed string, without copying: *p points into the view. */
int lc_rd_get_string_direct(struct lc_rd *r, const uint8_t **p, size_t *n);
/*
 * Length-prefixed string copied into out (NUL terminated).  Rejects
 * strings that do not fit (n >= outsz) or contain a NUL byte.
 */
int lc_rd_get_cstring(struct lc_rd *r, char *out, size_t outsz);
/* 0 if the view is empty, -LC_ERR_PROTO if bytes are left over. */
int lc_rd_end(const struct lc_rd *r);

static inline uint16_t
lc_peek_u16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
lc_peek_u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline uint64_t
lc_peek_u64(const uint8_t *p)
{
	return (uint64_t)lc_peek_u32(p) << 32 | lc_peek_u32(p + 4);
}

static inline void
lc_poke_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
lc_poke_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void
lc_poke_u64(uint8_t *p, uint64_t v)
{
	lc_poke_u32(p, (uint32_t)(v >> 32));
	lc_poke_u32(p + 4, (uint32_t)v);
}

#endif
