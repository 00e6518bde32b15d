/*
 * The sink's inflate path (zframe.h): a compressed DATA frame's payload
 * with its raw length.  Input: u32 raw_len | payload.  Whatever the bytes,
 * inflate writes at most raw_len bytes (guard bytes behind the buffer stay
 * untouched), and success means exactly raw_len bytes that deflate back.
 */
#include "zframe.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define F_BLOCK (256u << 10)
#define F_GUARD 64

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct lc_zinf *zi;
	static uint8_t out[F_BLOCK + F_GUARD];
	struct lc_err e;
	uint32_t raw_len;
	int r;

	if (size < 5 || size - 4 > F_BLOCK)
		return 0;
	if (zi == NULL && lc_zinf_new(F_BLOCK, &zi) != 0)
		abort();
	raw_len = ((uint32_t)data[0] << 24 | (uint32_t)data[1] << 16 |
	    (uint32_t)data[2] << 8 | data[3]) % (F_BLOCK + 2);
	memset(out, 0xa5, sizeof(out));
	lc_err_clear(&e);
	r = lc_zinf_block(zi, data + 4, (uint32_t)(size - 4),
	    raw_len <= F_BLOCK ? out : NULL, raw_len, &e);
	if (raw_len > F_BLOCK || raw_len == 0) {
		if (r != -LC_ERR_PROTO)
			abort();	/* refused before touching out */
		return 0;
	}
	for (size_t i = raw_len; i < sizeof(out); i++)
		if (out[i] != 0xa5)
			abort();	/* wrote past the cap */
	if (r != 0 && r != -LC_ERR_PROTO)
		abort();
	return 0;
}
