/*
 * The takeover exchange (wire.h, takeover.h): three messages between two
 * agents on a local socket, never on the control channel.
 */
#include "wire.h"
#include "err.h"

#include <string.h>

static int
lc_takeover_magic(struct lc_rd *rd, const char *magic)
{
	uint8_t m[4];

	return lc_rd_get_bytes(rd, m, 4) != 0 || memcmp(m, magic, 4) != 0 ?
	    -LC_ERR_PROTO : 0;
}

int
lc_takeover_put_challenge(struct lc_buf *out,
    const uint8_t nonce[LC_TAKEOVER_NONCE_LEN])
{
	int r;

	(void)((r = lc_buf_put(out, "LCTC", 4)) != 0 ||
	    (r = lc_buf_put_u8(out, LC_TAKEOVER_VERSION)) != 0 ||
	    (r = lc_buf_put(out, nonce, LC_TAKEOVER_NONCE_LEN)) != 0);
	return r;
}

int
lc_takeover_get_challenge(const uint8_t *p, size_t n,
    uint8_t nonce[LC_TAKEOVER_NONCE_LEN])
{
	struct lc_rd rd;
	uint8_t v;

	memset(nonce, 0, LC_TAKEOVER_NONCE_LEN);
	lc_rd_init(&rd, p, n);
	if (lc_takeover_magic(&rd, "LCTC") != 0 ||
	    lc_rd_get_u8(&rd, &v) != 0 || v != LC_TAKEOVER_VERSION ||
	    lc_rd_get_bytes(&rd, nonce, LC_TAKEOVER_NONCE_LEN) != 0 ||
	    lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

int
lc_takeover_put_request(struct lc_buf *out, const struct lc_takeover_req *m)
{
	int r;

	(void)((r = lc_buf_put(out, "LCTQ", 4)) != 0 ||
	    (r = lc_buf_put(out, m->mac, LC_TAKEOVER_MAC_LEN)) != 0 ||
	    (r = lc_buf_put_cstring(out, m->root)) != 0);
	return r;
}

int
lc_takeover_get_request(const uint8_t *p, size_t n, struct lc_takeover_req *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_takeover_magic(&rd, "LCTQ") != 0 ||
	    lc_rd_get_bytes(&rd, m->mac, LC_TAKEOVER_MAC_LEN) != 0 ||
	    lc_rd_get_cstring(&rd, m->root, sizeof(m->root)) != 0 ||
	    lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

int
lc_takeover_put_answer(struct lc_buf *out, uint8_t verdict)
{
	int r;

	(void)((r = lc_buf_put(out, "LCTA", 4)) != 0 ||
	    (r = lc_buf_put_u8(out, verdict)) != 0);
	return r;
}

int
lc_takeover_get_answer(const uint8_t *p, size_t n, uint8_t *verdict)
{
	struct lc_rd rd;

	*verdict = 0;
	lc_rd_init(&rd, p, n);
	if (lc_takeover_magic(&rd, "LCTA") != 0 ||
	    lc_rd_get_u8(&rd, verdict) != 0 ||
	    *verdict < LC_TAKEOVER_YES || *verdict > LC_TAKEOVER_NO_ROOT ||
	    lc_rd_end(&rd) != 0) {
		*verdict = 0;
		return -LC_ERR_PROTO;
	}
	return 0;
}
