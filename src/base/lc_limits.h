/*
 * Sizes and defaults that are not the protocol's: buffers for paths, host
 * names, numeric addresses and the per-transfer key, the default stream
 * count and block size, and a byte range.  The protocol carries some of
 * them (wire.h includes this header and bounds its fields with them), but
 * code that only needs a buffer size or a range includes this, not the
 * wire formats.
 */
#ifndef LANECP_LC_LIMITS_H
#define LANECP_LC_LIMITS_H

#include <stdint.h>

#define LC_PATH_MAX 4096
#define LC_HOST_MAX 256
#define LC_ADDR_MAX 64			/* numeric IPv4/IPv6 address */
#define LC_KEY_LEN 32			/* per-transfer secret */
#define LC_DEFAULT_STREAMS 4
#define LC_DEFAULT_BLOCK (1u << 20)

/* A byte range [off, off + len). */
struct lc_span {
	uint64_t off;
	uint64_t len;
};

#endif
