/*
 * Bulk protection of encrypted data streams: one AEAD message per frame.
 *
 * The TLS 1.3 handshake (PSK + ephemeral DH, tls.h) authenticates both
 * ends and agrees on fresh secrets; its record layer is then left behind.
 * Each side exports a 32-byte secret per stream and direction (RFC 8446
 * 7.5: label "lanecp bulk v1", context "LCBK" u32 stream u8 direction) and
 * protects every frame as one AES-128-GCM message:
 *
 *   header (24 bytes, clear, the associated data) | ciphertext | tag[16]
 *
 * The 96-bit nonce is u32 0 | u64 n, n the frame counter of that key's
 * direction, 0, 1, 2, ... never sent: the receiver uses the n it expects,
 * so a replayed, dropped or reordered frame fails its tag.  The key is
 * HKDF-Expand(secret, "lanecp bulk key v1" | u32 epoch), and the epoch
 * moves on after every LC_AEAD_EPOCH_BYTES of plaintext (at a frame
 * boundary, the same on both sides), so no key protects more than that.
 * One struct lc_aead serves one direction of one connection; it is owned
 * by one thread.  See docs/PROTOCOL.md and SECURITY.md.
 */
#ifndef LANECP_AEAD_H
#define LANECP_AEAD_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define LC_AEAD_TAG_LEN 16
#define LC_AEAD_SECRET_LEN 32
#define LC_AEAD_KEY_LEN 16	/* AES-128-GCM */
#define LC_AEAD_NONCE_LEN 12
/* plaintext bytes under one key before the next epoch's key (64 GiB) */
#define LC_AEAD_EPOCH_BYTES (1ull << 36)
/* the least the hidden setting LANECP_AEAD_EPOCH may ask for */
#define LC_AEAD_EPOCH_MIN 4096
/* direction byte of the exporter context */
#define LC_AEAD_DIR_TO_SINK 1	/* the frames: source -> sink */
#define LC_AEAD_DIR_TO_SOURCE 2	/* reserved: nothing flows that way yet */

struct lc_aead;

/*
 * The payload bytes under one key in *out: LC_AEAD_EPOCH_BYTES, or the
 * hidden setting LANECP_AEAD_EPOCH (LC_AEAD_EPOCH_MIN ..
 * LC_AEAD_EPOCH_BYTES, settings.h), so a test crosses rekeys in a small
 * copy.  Both ends must use the same (a mismatch is an integrity
 * failure).  0, or -LC_ERR_USAGE (e says why) for a bad setting.
 */
int lc_aead_epoch(uint64_t *out, struct lc_err *e);

/*
 * A sealer (seal != 0) or an opener for the secret (copied; the caller
 * cleanses its own), rekeying every lc_aead_epoch() bytes.  0, or
 * -LC_ERR_NOMEM / -LC_ERR_INTERNAL, or -LC_ERR_USAGE for a bad
 * LANECP_AEAD_EPOCH; *out NULL on failure.
 */
int lc_aead_new(const uint8_t secret[LC_AEAD_SECRET_LEN], int seal,
    struct lc_aead **out);
/* Cleanse the secret and key state and free (NULL is fine). */
void lc_aead_free(struct lc_aead *a);

/*
 * Seal p[0..n) in place with aad[0..aadlen) as associated data under the
 * next counter, and write the tag.  0, or -LC_ERR_INTERNAL (counter
 * exhausted, or the cipher failed; the sealer must not be used again).
 */
int lc_aead_seal(struct lc_aead *a, const uint8_t *aad, size_t aadlen,
    uint8_t *p, size_t n, uint8_t tag[LC_AEAD_TAG_LEN]);
/*
 * Open p[0..n) in place under the counter expected next.  0 when the tag
 * matches (p is the plaintext, the counter moves on); -LC_ERR_INTEGRITY
 * when it does not: p then holds garbage that must not be used, and the
 * opener is dead (every later call fails too), so nothing after a bad
 * frame is ever accepted on that connection.  -LC_ERR_INTERNAL when the
 * cipher itself fails.
 */
int lc_aead_open(struct lc_aead *a, const uint8_t *aad, size_t aadlen,
    uint8_t *p, size_t n, const uint8_t tag[LC_AEAD_TAG_LEN]);
/* Frames sealed or opened so far (the next counter), for tests. */
uint64_t lc_aead_count(const struct lc_aead *a);

#endif
