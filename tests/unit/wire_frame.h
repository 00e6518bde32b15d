/*
 * For the wire tests (test_wire.c, test_wire_golden.c): the one frame an
 * encoder appended to an empty buffer, checked and split.
 */
#ifndef LC_TEST_WIRE_FRAME_H
#define LC_TEST_WIRE_FRAME_H

#include "harness.h"

#include "buf.h"
#include "wire.h"

#include <stddef.h>
#include <stdint.h>

/*
 * b must hold exactly one whole frame, of type want: its payload is
 * *p (a view into b) and *n bytes.
 */
static inline void
one_frame(struct lc_buf *b, uint8_t want, const uint8_t **p, size_t *n)
{
	uint8_t type;
	size_t flen;

	LC_CHECK(
	    lc_msg_peek(lc_buf_ptr(b), lc_buf_len(b), &type, p, n, &flen) == 1);
	LC_CHECK_EQ_U(type, want);
	LC_CHECK_EQ_U(flen, lc_buf_len(b));
}

#endif
