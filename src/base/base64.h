/*
 * Base64 (RFC 4648, standard alphabet, padded) for key material, on
 * OpenSSL's EVP encoder.  No state; safe from any thread.
 */
#ifndef LANECP_BASE64_H
#define LANECP_BASE64_H

#include <stddef.h>

/*
 * Encode len bytes of in into out as a NUL-terminated string; out must
 * hold 4 * ((len + 2) / 3) + 1 bytes.  Returns the string's length, or
 * -LC_ERR_TOOBIG if out is too small.
 */
int lc_base64_encode(const unsigned char *in, size_t len, char *out,
    size_t outsz);

/*
 * Decode padded base64 (as OpenSSH writes it) of len characters (need not
 * be NUL terminated), skipping space, tab, CR and LF anywhere; out must
 * hold 3 * (len / 4) bytes.  Returns the decoded length, -LC_ERR_PROTO (a
 * character outside the alphabet, missing or misplaced padding),
 * -LC_ERR_TOOBIG (out too small) or -LC_ERR_NOMEM.
 */
int lc_base64_decode(const char *in, size_t len, unsigned char *out,
    size_t outsz);

/*
 * Decode padded base64 of exactly len characters, with nothing to skip:
 * no whitespace, no '=' but the padding at the end, len a multiple of 4;
 * out must hold 3 * (len / 4) bytes.  Returns the decoded length (without
 * the padding's bytes) or -LC_ERR_PROTO (anything else, out too small
 * included).
 */
int lc_base64_decode_strict(const char *in, size_t len, unsigned char *out,
    size_t outsz);

#endif
