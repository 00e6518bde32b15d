/*
 * Compression of DATA frames (-c): one zlib stream (RFC 1950) per block.
 *
 * The source's senders each own an lc_zdef (deflate state and a scratch
 * buffer of one block), the sink's receivers each an lc_zinf (inflate
 * state and an input buffer of one block): nothing is shared between
 * threads.  A block goes compressed only when it shrinks by a margin
 * (LC_ZFRAME_LIMIT), so a compressed payload is always shorter than the
 * block it stands for, and the receiver's input buffer never needs more
 * than one block.  Inflate writes into the caller's buffer of exactly
 * raw_len bytes: however the stream is built, it cannot write more.
 */
#ifndef LANECP_ZFRAME_H
#define LANECP_ZFRAME_H

#include <stdint.h>

#include "err.h"

/*
 * Largest compressed size worth sending for a block of raw bytes: at least
 * raw/32 + 1 bytes (about 3 %) smaller, else the block goes raw.  Below
 * that the sink's inflate costs more than the link time saved, and a
 * bound below raw lets deflate stop as soon as its output passes it.
 */
#define LC_ZFRAME_LIMIT(raw) ((raw) - (raw) / 32u - 1u)
/*
 * A block longer than twice this is probed first: its first LC_ZFRAME_PROBE
 * bytes are deflated and flushed, and unless they shrink by the same
 * margin the block goes raw, having cost deflate on 64 KiB only
 * (incompressible data, e.g. already compressed files, stays cheap).
 */
#define LC_ZFRAME_PROBE (64u << 10)

struct lc_zdef;
struct lc_zinf;

/*
 * A deflater at level 1..9 for blocks up to block bytes.  0, or
 * -LC_ERR_NOMEM / -LC_ERR_INTERNAL (bad level); *out NULL on failure.
 * Memory: zlib's deflate state (about 268 KiB at memLevel 8) + block.
 */
int lc_zdef_new(int level, uint32_t block, struct lc_zdef **out);

/*
 * Deflate in[0 .. len) (len <= block).  Returns 1 with *out pointing at
 * the compressed stream (in the deflater's scratch, valid until the next
 * call) and *outlen in 1 .. LC_ZFRAME_LIMIT(len); 0 when the block does
 * not shrink enough and is to be sent raw (*out NULL); -LC_ERR_INTERNAL
 * when zlib fails (len over the block, or a broken state).
 */
int lc_zdef_block(struct lc_zdef *z, const uint8_t *in, uint32_t len,
    const uint8_t **out, uint32_t *outlen);

void lc_zdef_free(struct lc_zdef *z);

/*
 * An inflater for blocks up to block bytes, with an input buffer of block
 * bytes (lc_zinf_inbuf).  0 or -LC_ERR_NOMEM; *out NULL on failure.
 * Memory: block + zlib's inflate state and window (about 44 KiB).
 */
int lc_zinf_new(uint32_t block, struct lc_zinf **out);

/* The input buffer, block bytes: where a receiver reads a payload. */
uint8_t *lc_zinf_inbuf(struct lc_zinf *z);

/*
 * Inflate the zlib stream in[0 .. len) into out[0 .. raw_len).  0 only if
 * it is one complete stream (adler32 checked) that ends exactly at len
 * and yields exactly raw_len bytes.  -LC_ERR_PROTO with e saying which
 * (more or fewer bytes than raw_len, truncated, trailing bytes, corrupt)
 * otherwise, or for len == 0 or raw_len over the block; out may then
 * hold garbage, which the caller must not use.  -LC_ERR_NOMEM if zlib
 * cannot get its window.
 */
int lc_zinf_block(struct lc_zinf *z, const uint8_t *in, uint32_t len,
    uint8_t *out, uint32_t raw_len, struct lc_err *e);

void lc_zinf_free(struct lc_zinf *z);

#endif
