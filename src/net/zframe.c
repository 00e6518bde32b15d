/*
 * zlib per DATA block: see zframe.h.  zlib format (not raw
 * deflate): its adler32 trailer makes a stream that inflates to the right
 * length but the wrong bytes an error, and its end is unambiguous.
 */
#include "zframe.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct lc_zdef {
	z_stream zs;
	uint32_t block;
	uint8_t *scratch;	/* block bytes */
};

struct lc_zinf {
	z_stream zs;
	uint32_t block;
	uint8_t *in;		/* block bytes */
};

int
lc_zdef_new(int level, uint32_t block, struct lc_zdef **out)
{
	struct lc_zdef *z;

	*out = NULL;
	if (level < 1 || level > 9 || block == 0)
		return -LC_ERR_INTERNAL;
	if ((z = calloc(1, sizeof(*z))) == NULL)
		return -LC_ERR_NOMEM;
	z->block = block;
	if ((z->scratch = malloc(block)) == NULL ||
	    deflateInit2(&z->zs, level, Z_DEFLATED, 15, 8,
	    Z_DEFAULT_STRATEGY) != Z_OK) {
		free(z->scratch);
		free(z);
		return -LC_ERR_NOMEM;
	}
	*out = z;
	return 0;
}

int
lc_zdef_block(struct lc_zdef *z, const uint8_t *in, uint32_t len,
    const uint8_t **out, uint32_t *outlen)
{
	uint32_t limit, probe;
	int r;

	*out = NULL;
	*outlen = 0;
	if (len > z->block)
		return -LC_ERR_INTERNAL;
	if (len < 64)		/* nothing to gain after the 6-byte frame */
		return 0;
	limit = LC_ZFRAME_LIMIT(len);
	if (deflateReset(&z->zs) != Z_OK)
		return -LC_ERR_INTERNAL;
	z->zs.next_in = (Bytef *)(uintptr_t)in;
	z->zs.next_out = z->scratch;
	z->zs.avail_out = limit;
	if (len > 2 * LC_ZFRAME_PROBE) {
		probe = LC_ZFRAME_PROBE;
		z->zs.avail_in = probe;
		r = deflate(&z->zs, Z_SYNC_FLUSH);
		if (r != Z_OK && r != Z_BUF_ERROR)
			return -LC_ERR_INTERNAL;
		if (z->zs.avail_in != 0 ||
		    z->zs.total_out > LC_ZFRAME_LIMIT(probe))
			return 0;	/* the start does not shrink */
		z->zs.avail_in = len - probe;
	} else {
		z->zs.avail_in = len;
	}
	r = deflate(&z->zs, Z_FINISH);
	if (r == Z_OK || r == Z_BUF_ERROR)
		return 0;	/* ran out of room under the limit */
	if (r != Z_STREAM_END)
		return -LC_ERR_INTERNAL;
	*out = z->scratch;
	*outlen = (uint32_t)z->zs.total_out;
	return 1;
}

void
lc_zdef_free(struct lc_zdef *z)
{
	if (z == NULL)
		return;
	deflateEnd(&z->zs);
	free(z->scratch);
	free(z);
}

int
lc_zinf_new(uint32_t block, struct lc_zinf **out)
{
	struct lc_zinf *z;

	*out = NULL;
	if ((z = calloc(1, sizeof(*z))) == NULL)
		return -LC_ERR_NOMEM;
	z->block = block;
	if ((z->in = malloc(block ? block : 1)) == NULL ||
	    inflateInit2(&z->zs, 15) != Z_OK) {
		free(z->in);
		free(z);
		return -LC_ERR_NOMEM;
	}
	*out = z;
	return 0;
}

uint8_t *
lc_zinf_inbuf(struct lc_zinf *z)
{
	return z->in;
}

int
lc_zinf_block(struct lc_zinf *z, const uint8_t *in, uint32_t len,
    uint8_t *out, uint32_t raw_len, struct lc_err *e)
{
	int r;

	if (len == 0 || raw_len == 0 || raw_len > z->block)
		return lc_err_set(e, LC_ERR_PROTO, "compressed frame of %u "
		    "bytes for %u: out of bounds", len, raw_len);
	if (inflateReset(&z->zs) != Z_OK)
		return lc_err_set(e, LC_ERR_INTERNAL, "inflateReset");
	z->zs.next_in = (Bytef *)(uintptr_t)in;
	z->zs.avail_in = len;
	z->zs.next_out = out;
	z->zs.avail_out = raw_len;	/* the hard cap: never more */
	r = inflate(&z->zs, Z_FINISH);
	if (r == Z_MEM_ERROR)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory (inflate)");
	if (r == Z_STREAM_END) {
		if (z->zs.avail_out != 0)
			return lc_err_set(e, LC_ERR_PROTO, "compressed frame "
			    "inflates to %lu bytes, not %u", z->zs.total_out,
			    raw_len);
		if (z->zs.avail_in != 0)
			return lc_err_set(e, LC_ERR_PROTO, "compressed frame: "
			    "%u bytes after the end of its stream",
			    z->zs.avail_in);
		return 0;
	}
	if (r == Z_DATA_ERROR || r == Z_NEED_DICT)
		return lc_err_set(e, LC_ERR_PROTO, "compressed frame is "
		    "corrupt (%s)", z->zs.msg ? z->zs.msg : "bad stream");
	/* out full with input left: it wants to write more; input used up
	 * (out full or not): the stream stops before its end */
	if (z->zs.avail_out == 0 && z->zs.avail_in != 0)
		return lc_err_set(e, LC_ERR_PROTO, "compressed frame inflates "
		    "past its raw length %u", raw_len);
	return lc_err_set(e, LC_ERR_PROTO, "compressed frame is truncated "
	    "(%u bytes, stream not complete)", len);
}

void
lc_zinf_free(struct lc_zinf *z)
{
	if (z == NULL)
		return;
	inflateEnd(&z->zs);
	free(z->in);
	free(z);
}
