/*
 * Strict number parsing with bounds.  No atoi, no unchecked strtol: every
 * parser rejects empty input, signs, spaces, trailing junk and overflow.
 */
#ifndef LANECP_PARSE_H
#define LANECP_PARSE_H

#include <stdint.h>

/*
 * Decimal integer in [min, max].  Returns 0, -LC_ERR_USAGE (not a number)
 * or -LC_ERR_TOOBIG (out of range).
 */
int lc_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * Size with an optional binary suffix: k, m, g, t (either case, optional
 * trailing "b"/"B" as in "256kb"), e.g. "256k" = 262144.  Result must be in
 * [min, max].  Returns 0, -LC_ERR_USAGE or -LC_ERR_TOOBIG.
 */
int lc_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * Seconds, integer or with a fraction ("0.5"), in [min, max] seconds;
 * result in milliseconds.  Returns 0, -LC_ERR_USAGE or -LC_ERR_TOOBIG.
 */
int lc_parse_seconds(const char *s, uint64_t min_s, uint64_t max_s,
    uint64_t *out_ms);

/* Format a byte count as "1.5 GiB" into buf; returns buf. */
char *lc_fmt_bytes(char *buf, unsigned long sz, uint64_t n);

/* n with a comma every three digits, "21,102" (counts in the summary). */
char *lc_fmt_count(char *buf, unsigned long sz, uint64_t n);

#endif
