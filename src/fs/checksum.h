/*
 * Whole-file checksums for end-to-end verification (-e, -E ALG[=VALUE]):
 * sha256 (OpenSSL, SHA-NI where the CPU has it), crc32 and adler32 (zlib).
 * Text form: "ALG:hex", e.g. "crc32:0a1b2c3d"; hex is lowercase, crc32 and
 * adler32 as 8 digits, big-endian as zlib returns them.
 */
#ifndef LANECP_CHECKSUM_H
#define LANECP_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

enum lc_csum_alg {
	LC_CSUM_NONE = 0,
	LC_CSUM_SHA256 = 1,
	LC_CSUM_CRC32 = 2,
	LC_CSUM_ADLER32 = 3,
	LC_CSUM_ALGS
};

#define LC_CSUM_TEXT_MAX 80	/* "sha256:" + 64 hex + NUL, with room */

struct lc_csum;

/* Name <-> algorithm; lc_csum_alg_parse returns LC_CSUM_NONE if unknown. */
const char *lc_csum_alg_name(int alg);
int lc_csum_alg_parse(const char *name);

/* New running checksum; NULL on allocation failure or alg NONE. */
struct lc_csum *lc_csum_new(int alg);
void lc_csum_update(struct lc_csum *c, const void *p, size_t n);
/* Copy of the state (for resuming a hash), NULL on failure. */
struct lc_csum *lc_csum_dup(const struct lc_csum *c);
/* "ALG:hex" of everything so far (the state stays usable). */
void lc_csum_text(const struct lc_csum *c, char out[LC_CSUM_TEXT_MAX]);
void lc_csum_free(struct lc_csum *c);

/*
 * Hash bytes [0, len) of fd into c with pread (no effect on the offset).
 * 0 or -LC_ERR_IO (e names what).
 */
int lc_csum_fd(struct lc_csum *c, int fd, uint64_t len, const char *name,
    struct lc_err *e);

/*
 * Parse "-E" arguments: "ALG" or "ALG=HEX".  *alg gets the algorithm,
 * expect (if non-NULL and a value was given) the normalised "ALG:hex".
 * -LC_ERR_USAGE for an unknown algorithm or a malformed value.
 */
int lc_csum_parse_arg(const char *arg, int *alg,
    char expect[LC_CSUM_TEXT_MAX]);

/*
 * Resume prefixes are compared chunk by chunk (SHA-256 of each).  Chunk
 * size for a prefix of len bytes: a multiple of block giving at most
 * max_chunks chunks; 0 if len is too large to compare that way.
 */
uint32_t lc_prefix_chunk(uint64_t len, uint32_t block, uint32_t max_chunks);

/*
 * SHA-256 of bytes [off, off + len) of fd into out; the bytes are also fed
 * to feed (if not NULL).  0 or -LC_ERR_IO.
 */
int lc_prefix_hash(int fd, uint64_t off, uint64_t len, uint8_t out[32],
    struct lc_csum *feed, const char *name, struct lc_err *e);

#endif
