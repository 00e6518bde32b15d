#include "buf.h"
#include "err.h"

#include <stdlib.h>
#include <string.h>

void
lc_buf_init(struct lc_buf *b, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
}

void
lc_buf_free(struct lc_buf *b)
{
	free(b->d);
	memset(b, 0, sizeof(*b));
}

const uint8_t *
lc_buf_ptr(const struct lc_buf *b)
{
	/* NULL + 0 is undefined (clang's UBSan stops there), and memcpy()
	   must not get NULL even for 0 bytes.  Not inline: gcc's
	   -Warray-bounds would then see callers index "" */
	if (b->d == NULL)
		return (const uint8_t *)"";
	return b->d + b->off;
}

void
lc_buf_reset(struct lc_buf *b)
{
	b->off = b->len = 0;
}

int
lc_buf_reserve(struct lc_buf *b, size_t n, uint8_t **p)
{
	size_t have = b->len - b->off;
	size_t need, nalloc;
	uint8_t *nd;

	*p = NULL;
	if (n > b->max || b->max - n < have)
		return -LC_ERR_TOOBIG;
	if (b->alloc - b->len < n && b->off > 0) {
		/* compact before growing */
		memmove(b->d, b->d + b->off, have);
		b->len = have;
		b->off = 0;
	}
	if (b->alloc - b->len < n) {
		need = b->len + n;
		nalloc = b->alloc < 256 ? 256 : b->alloc;
		while (nalloc < need)
			nalloc = nalloc > SIZE_MAX / 2 ? need : nalloc * 2;
		if (nalloc > b->max && need <= b->max)
			nalloc = b->max;
		if ((nd = realloc(b->d, nalloc)) == NULL)
			return -LC_ERR_NOMEM;
		b->d = nd;
		b->alloc = nalloc;
	}
	if (b->d == NULL)
		return 0;	/* n == 0 and nothing allocated yet: *p stays NULL */
	*p = b->d + b->len;
	b->len += n;
	return 0;
}

void
lc_buf_unappend(struct lc_buf *b, size_t n)
{
	if (n > b->len - b->off)
		n = b->len - b->off;
	b->len -= n;
}

void
lc_buf_consume(struct lc_buf *b, size_t n)
{
	if (n >= b->len - b->off) {
		b->off = b->len = 0;
		return;
	}
	b->off += n;
}

int
lc_buf_put(struct lc_buf *b, const void *v, size_t n)
{
	uint8_t *p;
	int r;

	if ((r = lc_buf_reserve(b, n, &p)) != 0)
		return r;
	if (n > 0)
		memcpy(p, v, n);
	return 0;
}

int
lc_buf_put_u8(struct lc_buf *b, uint8_t v)
{
	return lc_buf_put(b, &v, 1);
}

int
lc_buf_put_u16(struct lc_buf *b, uint16_t v)
{
	uint8_t t[2];

	lc_poke_u16(t, v);
	return lc_buf_put(b, t, sizeof(t));
}

int
lc_buf_put_u32(struct lc_buf *b, uint32_t v)
{
	uint8_t t[4];

	lc_poke_u32(t, v);
	return lc_buf_put(b, t, sizeof(t));
}

int
lc_buf_put_u64(struct lc_buf *b, uint64_t v)
{
	uint8_t t[8];

	lc_poke_u64(t, v);
	return lc_buf_put(b, t, sizeof(t));
}

int
lc_buf_put_string(struct lc_buf *b, const void *v, size_t n)
{
	int r;

	if (n > UINT32_MAX)
		return -LC_ERR_TOOBIG;
	if ((r = lc_buf_put_u32(b, (uint32_t)n)) != 0)
		return r;
	return lc_buf_put(b, v, n);
}

int
lc_buf_put_cstring(struct lc_buf *b, const char *s)
{
	return lc_buf_put_string(b, s, s == NULL ? 0 : strlen(s));
}

void
lc_buf_poke_u32(struct lc_buf *b, size_t pos, uint32_t v)
{
	if (pos <= b->len - b->off && b->len - b->off - pos >= 4)
		lc_poke_u32(b->d + b->off + pos, v);
}

int
lc_rd_get_bytes(struct lc_rd *r, void *v, size_t n)
{
	if (r->len < n)
		return -LC_ERR_PROTO;
	if (n == 0)
		return 0;	/* the view may be (NULL, 0): no NULL + 0 */
	if (v != NULL)
		memcpy(v, r->p, n);
	r->p += n;
	r->len -= n;
	return 0;
}

int
lc_rd_get_u8(struct lc_rd *r, uint8_t *v)
{
	return lc_rd_get_bytes(r, v, 1);
}

int
lc_rd_get_u16(struct lc_rd *r, uint16_t *v)
{
	if (r->len < 2)
		return -LC_ERR_PROTO;
	*v = (uint16_t)((unsigned)r->p[0] << 8 | r->p[1]);
	r->p += 2;
	r->len -= 2;
	return 0;
}

int
lc_rd_get_u32(struct lc_rd *r, uint32_t *v)
{
	if (r->len < 4)
		return -LC_ERR_PROTO;
	*v = lc_peek_u32(r->p);
	r->p += 4;
	r->len -= 4;
	return 0;
}

int
lc_rd_get_u64(struct lc_rd *r, uint64_t *v)
{
	if (r->len < 8)
		return -LC_ERR_PROTO;
	*v = lc_peek_u64(r->p);
	r->p += 8;
	r->len -= 8;
	return 0;
}

int
lc_rd_get_string_direct(struct lc_rd *r, const uint8_t **p, size_t *n)
{
	uint32_t len;

	*p = NULL;
	*n = 0;
	if (r->len < 4)
		return -LC_ERR_PROTO;
	len = lc_peek_u32(r->p);
	if (r->len - 4 < len)
		return -LC_ERR_PROTO;
	*p = r->p + 4;
	*n = len;
	r->p += 4 + (size_t)len;
	r->len -= 4 + (size_t)len;
	return 0;
}

int
lc_rd_get_cstring(struct lc_rd *r, char *out, size_t outsz)
{
	struct lc_rd save = *r;
	const uint8_t *p;
	size_t n;

	if (outsz > 0)
		out[0] = '\0';
	if (lc_rd_get_string_direct(r, &p, &n) != 0)
		return -LC_ERR_PROTO;
	if (n >= outsz || (n > 0 && memchr(p, '\0', n) != NULL)) {
		*r = save;
		return -LC_ERR_PROTO;
	}
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

int
lc_rd_end(const struct lc_rd *r)
{
	return r->len == 0 ? 0 : -LC_ERR_PROTO;
}
