/*
 * The encrypted frame's receive path (aead.h), as a property: the input
 * is a frame header and payload, a position and a bit mask.  A frame the
 * header decoder accepts is sealed (counter 0), changed at the position
 * when the mask is not 0, then put through what the receiver does: the
 * (possibly changed) header decoded with its bounds, the payload and tag
 * taken by the length the header says, opened in place.  It must open
 * exactly when nothing was changed, and never read or write out of
 * bounds (the sanitizers watch).  A second open of the same bytes (a
 * replay) must always fail.
 */
#include "aead.h"
#include "wire.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define F_MAXPAY (64u << 10)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t wire[LC_FRAME_HDR_LEN + F_MAXPAY + LC_AEAD_TAG_LEN];
	uint8_t secret[LC_AEAD_SECRET_LEN];
	struct lc_aead *tx = NULL, *rx = NULL;
	struct lc_frame fr, fr2;
	size_t pos, n, have;
	uint8_t mask;
	int r;

	if (size < 3 + LC_FRAME_HDR_LEN)
		return 0;
	pos = (size_t)data[0] << 8 | data[1];
	mask = data[2];
	data += 3;
	size -= 3;
	if (lc_frame_get(data, F_MAXPAY, &fr) != 0)
		return 0;
	have = size - LC_FRAME_HDR_LEN;
	if (fr.len > have)
		return 0;
	memset(secret, 0x42, sizeof(secret));
	if (lc_aead_new(secret, 1, &tx) != 0 || lc_aead_new(secret, 0, &rx) != 0)
		abort();
	memcpy(wire, data, LC_FRAME_HDR_LEN + fr.len);
	if (lc_aead_seal(tx, wire, LC_FRAME_HDR_LEN, wire + LC_FRAME_HDR_LEN,
	    fr.len, wire + LC_FRAME_HDR_LEN + fr.len) != 0)
		abort();
	n = LC_FRAME_HDR_LEN + fr.len + LC_AEAD_TAG_LEN;
	if (mask != 0)
		wire[pos % n] ^= mask;
	/* the receiver: the header first, by its own (changed) bounds */
	if (lc_frame_get(wire, F_MAXPAY, &fr2) != 0) {
		if (mask == 0)
			abort();	/* an honest header must decode */
		goto out;
	}
	if (LC_FRAME_HDR_LEN + (size_t)fr2.len + LC_AEAD_TAG_LEN > n)
		goto out;	/* it waits for more bytes: the tag comes later */
	r = lc_aead_open(rx, wire, LC_FRAME_HDR_LEN, wire + LC_FRAME_HDR_LEN,
	    fr2.len, wire + LC_FRAME_HDR_LEN + fr2.len);
	if ((r == 0) != (mask == 0))
		abort();
	if (r == 0 && memcmp(wire + LC_FRAME_HDR_LEN, data + LC_FRAME_HDR_LEN,
	    fr.len) != 0)
		abort();
	/* the same frame again: the opener expects counter 1 now (or is
	 * dead after a failure) */
	if (lc_aead_open(rx, wire, LC_FRAME_HDR_LEN, wire + LC_FRAME_HDR_LEN,
	    fr2.len, wire + LC_FRAME_HDR_LEN + fr2.len) != -LC_ERR_INTEGRITY)
		abort();
 out:
	lc_aead_free(tx);
	lc_aead_free(rx);
	return 0;
}
