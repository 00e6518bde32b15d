/*
 * Data stream handshake messages (src/net/stream.c): the pure decoders of the
 * sink hello, the source's response, the sink's proof and the stream
 * announcement inside TLS, and the handshakes themselves run on a
 * socketpair whose peer end holds the fuzz bytes.
 *
 * Input: u8 selector, u8 streams (1..64 after the modulo), then for the
 * checks with a MAC: nonce_s[32] (and for the proof nonce_c[32], u8
 * stream), then the message.  Properties: what a decoder accepts is
 * exactly what the encoder makes of the decoded fields; an encoded
 * message verifies; one flipped bit makes it fail.
 */
#include "stream.h"
#include "fdio.h"
#include "wire.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t lc_fz_key[LC_KEY_LEN] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
	0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
};

static void
lc_fz_hello(const uint8_t *p, size_t n)
{
	uint8_t nonce[LC_HS_NONCE_LEN], again[LC_HS_HELLO_LEN];
	struct lc_err e;

	if (lc_stream_hs_get_hello(p, n, nonce, &e) != 0)
		return;
	memcpy(again, "LCDS\1\0\0\0", 8);
	memcpy(again + 8, nonce, sizeof(nonce));
	if (n != sizeof(again) || memcmp(again, p, n) != 0)
		abort();
}

static void
lc_fz_resp(uint32_t nstreams, const uint8_t *p, size_t n)
{
	uint8_t nonce_c[LC_HS_NONCE_LEN], again[LC_HS_RESP_LEN];
	const uint8_t *nonce_s = p;
	struct lc_err e;
	uint32_t idx;

	if (n < LC_HS_NONCE_LEN)
		return;
	p += LC_HS_NONCE_LEN;
	n -= LC_HS_NONCE_LEN;
	if (lc_stream_hs_check_resp(lc_fz_key, nonce_s, p, n, nstreams, &idx,
	    nonce_c, &e) == 0) {
		/* only a genuine response passes */
		if (idx >= nstreams || lc_stream_hs_put_resp(lc_fz_key,
		    nonce_s, nonce_c, idx, again) != 0 || n != sizeof(again) ||
		    memcmp(again, p, n) != 0)
			abort();
		return;
	}
	/* a response made from the fuzzed fields passes, a changed one not */
	if (n < LC_HS_NONCE_LEN + 1)
		return;
	idx = p[LC_HS_NONCE_LEN] % nstreams;
	if (lc_stream_hs_put_resp(lc_fz_key, nonce_s, p, idx, again) != 0 ||
	    lc_stream_hs_check_resp(lc_fz_key, nonce_s, again, sizeof(again),
	    nstreams, &idx, nonce_c, &e) != 0 ||
	    memcmp(nonce_c, p, LC_HS_NONCE_LEN) != 0)
		abort();
	again[n % sizeof(again)] ^= (uint8_t)(1u << (n % 8));
	if (lc_stream_hs_check_resp(lc_fz_key, nonce_s, again, sizeof(again),
	    nstreams, &idx, nonce_c, &e) == 0)
		abort();
}

static void
lc_fz_fin(const uint8_t *p, size_t n)
{
	uint8_t again[LC_HS_FIN_LEN];
	const uint8_t *nonce_s = p, *nonce_c = p + LC_HS_NONCE_LEN;
	struct lc_err e;
	uint32_t idx;

	if (n < 2 * LC_HS_NONCE_LEN + 1)
		return;
	idx = p[2 * LC_HS_NONCE_LEN];
	p += 2 * LC_HS_NONCE_LEN + 1;
	n -= 2 * LC_HS_NONCE_LEN + 1;
	if (lc_stream_hs_put_fin(lc_fz_key, nonce_s, nonce_c, idx, again) != 0)
		abort();
	if (lc_stream_hs_check_fin(lc_fz_key, nonce_s, nonce_c, idx, p, n,
	    &e) == 0) {
		if (n != sizeof(again) || memcmp(again, p, n) != 0)
			abort();
		return;
	}
	if (lc_stream_hs_check_fin(lc_fz_key, nonce_s, nonce_c, idx, again,
	    sizeof(again), &e) != 0)
		abort();
	again[n % sizeof(again)] ^= (uint8_t)(1u << (n % 8));
	if (lc_stream_hs_check_fin(lc_fz_key, nonce_s, nonce_c, idx, again,
	    sizeof(again), &e) == 0)
		abort();
}

static void
lc_fz_ident(uint32_t nstreams, const uint8_t *p, size_t n)
{
	struct lc_err e;
	uint32_t idx;

	if (lc_stream_hs_get_ident(p, n, nstreams, &idx, &e) == 0 &&
	    (n != LC_HS_IDENT_LEN || idx >= nstreams ||
	    memcmp(p, "LCDI", 4) != 0))
		abort();
}

/*
 * The handshake over a socketpair: the peer's bytes are the fuzz input,
 * followed by EOF, so every read ends.  A source (connect) must never
 * succeed: a correct sink proof would need the random nonce.
 */
static void
lc_fz_wire(int server, uint32_t nstreams, const uint8_t *p, size_t n)
{
	struct lc_conn c;
	struct lc_err e;
	int sv[2], r;

	if (n > 4096 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	    sv) != 0)
		return;
	if (lc_write_all(sv[1], p, n) != 0) {
		close(sv[0]);
		close(sv[1]);
		return;
	}
	(void)shutdown(sv[1], SHUT_WR);
	lc_conn_init(&c, sv[0]);
	(void)lc_sock_set_timeout(sv[0], 1000);
	lc_err_clear(&e);
	if (server)
		r = lc_stream_accept_auth(&c, lc_fz_key, nstreams, &e);
	else
		r = lc_stream_connect_auth(&c, lc_fz_key, nstreams - 1, &e);
	if (r == 0)
		abort();
	lc_conn_close(&c);
	close(sv[1]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t nstreams;

	if (size < 2)
		return 0;
	nstreams = (uint32_t)data[1] % LC_MAX_STREAMS + 1;
	switch (data[0] % 6) {
	case 0:
		lc_fz_hello(data + 2, size - 2);
		break;
	case 1:
		lc_fz_resp(nstreams, data + 2, size - 2);
		break;
	case 2:
		lc_fz_fin(data + 2, size - 2);
		break;
	case 3:
		lc_fz_ident(nstreams, data + 2, size - 2);
		break;
	case 4:
		lc_fz_wire(1, nstreams, data + 2, size - 2);
		break;
	default:
		lc_fz_wire(0, nstreams, data + 2, size - 2);
		break;
	}
	return 0;
}
