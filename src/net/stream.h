/*
 * Data streams: dialling (or in reverse accepting) one over its
 * connection (conn.h), the transport (TLS 1.3 by default, tls.h; plain
 * TCP with --no-encrypt) and the per-stream authentication.
 *
 * Over TLS the PSK handshake already proves that the peer holds the
 * per-transfer key, and the client then names its stream inside the
 * channel ("LCDI" u32 stream).  Over plain TCP each data stream proves it
 * belongs to this transfer with the per-transfer key that only travelled
 * over SSH, by a keyed challenge-response with fresh nonces from both
 * sides (a captured handshake cannot be replayed), compared in constant
 * time:
 *
 *   sink   -> source  "LCDS" u8 version u8 flags u16 0  nonce_s[32]
 *   source -> sink    "LCDC" u32 stream  nonce_c[32]  mac_c[32]
 *   sink   -> source  "LCDA" mac_s[32]
 *
 *   mac_c = HMAC-SHA256(key, "lanecp data client v1" | nonce_s | nonce_c |
 *                            stream)
 *   mac_s = HMAC-SHA256(key, "lanecp data server v1" | nonce_s | nonce_c |
 *                            stream)
 *
 * The source (client) learns that the sink knows the key too, so a process
 * that grabbed the port cannot collect file data.
 */
#ifndef LANECP_STREAM_H
#define LANECP_STREAM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "conn.h"
#include "lc_limits.h"

/* a data connection's whole handshake, from accept (or connect) to
   verified, however the peer paces its bytes */
#define LC_HANDSHAKE_TIMEOUT_MS 10000

struct lc_tls;

/*
 * Admission of handshakes by peer address.  A listener that runs several
 * handshakes at once keeps at most per_host of them from one address and
 * at most n in all; a new connection always gets in, at the cost of the
 * oldest handshake of its own address when that address has per_host
 * already, else, when all n are busy, of the oldest handshake of all.
 * An honest handshake takes a few round trips, so what is dropped is the
 * one that has waited longest: a stranger that trickles bytes, not the
 * peer that just connected.  p[0..n) are the slots: host NULL is a free
 * one, t0 when the handshake began.  Returns -1 when there is room
 * (*why 0), else the index of the handshake to drop first, with *why
 * LC_HS_PER_HOST or LC_HS_ALL_BUSY.
 */
struct lc_hs_slot {
	const char *host;	/* lc_conn_host; NULL: free */
	uint64_t t0;
};
#define LC_HS_PER_HOST 1
#define LC_HS_ALL_BUSY 2
int lc_hs_admit(const struct lc_hs_slot *p, size_t n, const char *host,
    uint32_t per_host, int *why);

/*
 * Stream authentication (run under a deadline the caller set:
 * lc_conn_set_deadline).
 * Plain TCP: the HMAC challenge-response above.  Over TLS the PSK
 * handshake has already proved the key both ways, so the client just
 * names its stream: "LCDI" u32 stream, inside TLS.  The server accepts
 * stream indexes below nstreams; -LC_ERR_STREAM with e saying why for a
 * peer that fails.
 */
int lc_stream_accept_auth(struct lc_conn *c, const uint8_t key[LC_KEY_LEN],
    uint32_t nstreams, struct lc_err *e);
int lc_stream_connect_auth(struct lc_conn *c,
    const uint8_t key[LC_KEY_LEN], uint32_t idx, struct lc_err *e);

/*
 * The handshake messages, decoded and checked as pure functions on a
 * buffer (what the functions above run on the bytes they read; fuzzed by
 * tests/fuzz/fuzz_handshake.c).  Each takes exactly one whole message
 * (n must be its length) and returns 0 or -LC_ERR_STREAM with e saying
 * why; outputs are cleared on entry.
 */
#define LC_HS_NONCE_LEN 32
#define LC_HS_MAC_LEN 32
#define LC_HS_HELLO_LEN (8 + LC_HS_NONCE_LEN)	/* "LCDS" ver flags u16 nonce_s */
#define LC_HS_RESP_LEN (8 + LC_HS_NONCE_LEN + LC_HS_MAC_LEN)	/* "LCDC" */
#define LC_HS_FIN_LEN (4 + LC_HS_MAC_LEN)	/* "LCDA" mac_s */
#define LC_HS_IDENT_LEN 8			/* "LCDI" u32 stream (TLS) */

/* Sink hello: magic, version 1, flags and reserved 0; the nonce. */
int lc_stream_hs_get_hello(const uint8_t *p, size_t n,
    uint8_t nonce_s[LC_HS_NONCE_LEN], struct lc_err *e);
/*
 * Source response, checked against the key and the sink's nonce: *idx
 * (below nstreams) and nonce_c (for the sink's proof) on success.
 */
int lc_stream_hs_check_resp(const uint8_t key[LC_KEY_LEN],
    const uint8_t nonce_s[LC_HS_NONCE_LEN], const uint8_t *p, size_t n,
    uint32_t nstreams, uint32_t *idx, uint8_t nonce_c[LC_HS_NONCE_LEN],
    struct lc_err *e);
/* Sink proof, checked against the key, both nonces and the index. */
int lc_stream_hs_check_fin(const uint8_t key[LC_KEY_LEN],
    const uint8_t nonce_s[LC_HS_NONCE_LEN],
    const uint8_t nonce_c[LC_HS_NONCE_LEN], uint32_t idx, const uint8_t *p,
    size_t n, struct lc_err *e);
/* Stream announcement inside TLS: *idx below nstreams. */
int lc_stream_hs_get_ident(const uint8_t *p, size_t n, uint32_t nstreams,
    uint32_t *idx, struct lc_err *e);
/* Encoders for the source's side (0, or -LC_ERR_INTERNAL). */
int lc_stream_hs_put_resp(const uint8_t key[LC_KEY_LEN],
    const uint8_t nonce_s[LC_HS_NONCE_LEN],
    const uint8_t nonce_c[LC_HS_NONCE_LEN], uint32_t idx,
    uint8_t out[LC_HS_RESP_LEN]);
int lc_stream_hs_put_fin(const uint8_t key[LC_KEY_LEN],
    const uint8_t nonce_s[LC_HS_NONCE_LEN],
    const uint8_t nonce_c[LC_HS_NONCE_LEN], uint32_t idx,
    uint8_t out[LC_HS_FIN_LEN]);

/*
 * An authenticated outgoing data stream (the source's side).
 *
 * Invariant: no byte of file data is sent on a connection whose handshake
 * has not succeeded.  It holds by construction: lc_stream_dial() is the
 * only way to get a struct lc_stream, it returns one only after the TLS
 * handshake (when tls is set) and the stream authentication both
 * succeeded, and on any failure it closes the socket itself and leaves
 * *out NULL.  The senders write frames only through lc_stream_write(), so
 * they have nothing to write to until a dial has succeeded.
 */
struct lc_stream;

struct lc_dial {
	const char *addr;	/* numeric */
	uint16_t port;
	uint32_t window;	/* as for lc_sock_connect */
	uint32_t idx;		/* stream index to announce */
	const uint8_t *key;	/* LC_KEY_LEN bytes */
	struct lc_tls *tls;	/* NULL: --no-encrypt (HMAC exchange) */
	int connect_timeout_ms;
	const atomic_bool *cancel;	/* gives up a connect early */
	/*
	 * Optional: called with the socket once TCP is connected, and with
	 * -1 before it is closed or wrapped in the stream, so another thread
	 * can shutdown(2) it (never read or write it) to cancel a handshake.
	 */
	void (*pending)(void *arg, int fd);
	void *arg;
	/*
	 * Reverse (-z, relays): accept != 0 waits on listen_fd (ours, not
	 * closed) for the connection instead of dialling addr, within
	 * connect_timeout_ms, dropping connections that fail the handshake.
	 * Several handshakes run at once there, a few per peer address (a
	 * slow stranger cannot keep the sink out); pending is then called
	 * with each accepted socket and -1 at once, and the handshakes are
	 * canceled through cancel (seen within 0.1 s).
	 */
	int accept;
	int listen_fd;
	/* the whole handshake's deadline, ms; 0: LC_HANDSHAKE_TIMEOUT_MS */
	uint32_t handshake_ms;
};

/*
 * Connect, handshake, authenticate.  0 and *out, or -LC_ERR_STREAM,
 * -LC_ERR_TIMEOUT or -LC_ERR_CANCELED (e says why), with no socket left
 * open.  Socket timeouts are cleared on success.
 */
int lc_stream_dial(const struct lc_dial *d, struct lc_stream **out,
    struct lc_err *e);
/* Send all of p (through TLS when on); errors as lc_conn_write_all. */
int lc_stream_write(struct lc_stream *st, const void *p, size_t n,
    struct lc_err *e);
/*
 * Seal one frame in place before it is written: frame[0..hdrlen) is the
 * header (associated data), the payload follows up to len; the tag goes
 * at frame + len, where the caller leaves LC_AEAD_TAG_LEN bytes of room.
 * *outlen is what to send (len, plus the tag when encrypted).  Frames
 * must be written in the order they were sealed.  0 or -LC_ERR_INTERNAL.
 */
int lc_stream_seal(struct lc_stream *st, uint8_t *frame, size_t hdrlen,
    size_t len, size_t *outlen, struct lc_err *e);
/* Wake up a thread blocked on the stream (shutdown(2)); NULL is fine. */
void lc_stream_shutdown(struct lc_stream *st);
/* Close and free (NULL is fine). */
void lc_stream_free(struct lc_stream *st);
const char *lc_stream_peer(const struct lc_stream *st);
uint32_t lc_stream_sndbuf(const struct lc_stream *st);

#endif
