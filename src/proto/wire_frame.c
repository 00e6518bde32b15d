/*
 * The data stream frame header (wire.h): 24 bytes, checked against the
 * negotiated block size.
 */
#include "wire.h"
#include "err.h"

#include <string.h>

void
lc_frame_put(uint8_t out[LC_FRAME_HDR_LEN], const struct lc_frame *f)
{
	out[0] = f->type;
	out[1] = f->flags;
	out[2] = 0;
	out[3] = 0;
	lc_poke_u32(out + 4, f->file_id);
	lc_poke_u64(out + 8, f->offset);
	lc_poke_u32(out + 16, f->len);
	lc_poke_u32(out + 20, f->raw_len);
}

int
lc_frame_get(const uint8_t in[LC_FRAME_HDR_LEN], uint32_t max_block,
    struct lc_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->type = in[0];
	f->flags = in[1];
	f->file_id = lc_peek_u32(in + 4);
	f->offset = lc_peek_u64(in + 8);
	f->len = lc_peek_u32(in + 16);
	f->raw_len = lc_peek_u32(in + 20);
	if (in[2] != 0 || in[3] != 0 || (f->flags != 0 &&
	    (f->type != LC_FRAME_DATA || f->flags != LC_FRAME_F_ZLIB)))
		return -LC_ERR_PROTO;
	switch (f->type) {
	case LC_FRAME_DATA:
		if (f->file_id == 0 || f->raw_len == 0 ||
		    f->raw_len > max_block ||
		    f->offset > (uint64_t)INT64_MAX - f->raw_len)
			return -LC_ERR_PROTO;
		if (f->flags & LC_FRAME_F_ZLIB)
			return f->len >= 1 && f->len < f->raw_len ? 0 :
			    -LC_ERR_PROTO;
		return f->len == f->raw_len ? 0 : -LC_ERR_PROTO;
	case LC_FRAME_HOLE:
		if (f->file_id == 0 || f->len != 0 || f->raw_len == 0 ||
		    f->raw_len > LC_MAX_HOLE ||
		    f->offset > (uint64_t)INT64_MAX - f->raw_len)
			return -LC_ERR_PROTO;
		return 0;
	case LC_FRAME_END:
	case LC_FRAME_IDLE:
		if (f->file_id != 0 || f->offset != 0 || f->len != 0 ||
		    f->raw_len != 0)
			return -LC_ERR_PROTO;
		return 0;
	default:
		return -LC_ERR_PROTO;
	}
}
