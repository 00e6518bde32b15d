/*
 * JSON output (--json).  Strings come partly from peers (file names, error
 * text from a remote agent), so the writer guarantees valid JSON for any
 * input bytes: '"' and '\\' are escaped, control characters below 0x20 are
 * written as \n, \t, ... or \u00XX, valid UTF-8 passes through unchanged,
 * and every byte that does not begin a well-formed UTF-8 sequence
 * (overlong forms, UTF-16 surrogates, code points above U+10FFFF, stray
 * continuation bytes, truncated sequences) is replaced by U+FFFD, one
 * replacement per bad byte.
 */
#ifndef LANECP_JSON_H
#define LANECP_JSON_H

#include <stddef.h>

#include "buf.h"

/*
 * Append s (NUL-terminated) to b as a JSON string literal, quotes
 * included.  Returns 0 or -LC_ERR_TOOBIG / -LC_ERR_NOMEM (b's length is
 * then unchanged).
 */
int lc_json_put_str(struct lc_buf *b, const char *s);

/*
 * Length of the well-formed UTF-8 sequence at s (at most n bytes
 * readable), 1..4, or 0 if s does not begin one.
 */
size_t lc_utf8_seq_len(const unsigned char *s, size_t n);

#endif
