/*
 * Data frame header decoder: whatever decodes re-encodes identically and
 * keeps the documented bounds (compressed DATA: 1 <= len < raw_len).
 */
#include "wire.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t again[LC_FRAME_HDR_LEN];
	struct lc_frame f;
	uint32_t max_block;

	if (size < LC_FRAME_HDR_LEN + 4)
		return 0;
	max_block = (uint32_t)data[0] << 24 | (uint32_t)data[1] << 16 |
	    (uint32_t)data[2] << 8 | data[3];
	if (lc_frame_get(data + 4, max_block, &f) == 0) {
		if (f.type == LC_FRAME_DATA &&
		    (f.len == 0 || f.len > max_block || f.raw_len == 0 ||
		    f.raw_len > max_block))
			abort();
		/* compressed: shorter than what it stands for, DATA only */
		if ((f.flags & LC_FRAME_F_ZLIB) && (f.type != LC_FRAME_DATA ||
		    f.len >= f.raw_len))
			abort();
		if (f.type == LC_FRAME_DATA && !(f.flags & LC_FRAME_F_ZLIB) &&
		    f.len != f.raw_len)
			abort();
		if (f.type == LC_FRAME_HOLE && (f.len != 0 ||
		    f.raw_len == 0 || f.raw_len > LC_MAX_HOLE ||
		    f.offset + f.raw_len < f.offset))
			abort();
		lc_frame_put(again, &f);
		if (memcmp(again, data + 4, LC_FRAME_HDR_LEN) != 0)
			abort();
	}
	return 0;
}
