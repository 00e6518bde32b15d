/*
 * Data stream connections: sockets, the transport (TLS 1.3 by default,
 * tls.h; plain TCP with --no-encrypt) and the per-stream authentication.
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

#include "lanecp/err.h"
#include "lanecp/limits.h"

/* a data connection's whole handshake, from accept (or connect) to
   verified, however the peer paces its bytes */
#define LC_HANDSHAKE_TIMEOUT_MS 10000
#define LC_PEER_MAX (LC_ADDR_MAX + 8)

struct ssl_st;
struct lc_tls;
struct lc_aead;

struct lc_conn {
	int fd;
	struct ssl_st *ssl;	/* during the TLS handshake only */
	/*
	 * Encrypted streams after the handshake: the frames' AEAD (aead.h),
	 * the source's sealer (tx) or the sink's opener (rx); the TLS state
	 * is freed by then.  Both NULL: plain TCP (--no-encrypt).
	 */
	struct lc_aead *tx, *rx;
	uint32_t idx;		/* stream index, set by the handshake */
	char peer[LC_PEER_MAX];	/* "addr port" for logs */
	/*
	 * Receivers: with a socket receive timeout set, a read that times
	 * out just keeps waiting (patient) and *last_rx_ms records when
	 * bytes last arrived, so that a stalled stream can be told apart
	 * from a slow one by someone watching.
	 */
	int patient;
	atomic_uint_fast64_t *last_rx_ms;
	/*
	 * A handshake in progress (lc_conn_set_deadline): the socket is
	 * non-blocking and every read and write, OpenSSL's inside its
	 * handshake included, waits at most until deadline_ms (lc_now_ms),
	 * however the peer paces its bytes.  0: blocking I/O, no deadline.
	 */
	uint64_t deadline_ms;
	uint32_t budget_ms;	/* the deadline's length, for messages */
};

/*
 * Listen on an ephemeral port on the wildcard address (IPv6 dual-stack
 * when available), or with loopback on 127.0.0.1 only.  window > 0 sets
 * SO_RCVBUF and SO_SNDBUF before listen(2) (accepted sockets inherit
 * them; this turns off autotuning).
 */
int lc_sock_listen(uint32_t window, int loopback, int *fd, uint16_t *port,
    struct lc_err *e);

/*
 * Connect to addr:port within timeout_ms, window as above before connect.
 * Gives up early (-LC_ERR_CANCELED) when *cancel becomes true.
 */
int lc_sock_connect(const char *addr, uint16_t port, uint32_t window,
    int timeout_ms, const atomic_bool *cancel, int *fd, struct lc_err *e);

/*
 * A numeric IPv4 or IPv6 address (IPv4 also as ::ffff:a.b.c.d; no scope,
 * no name, no shorthand such as "127.1") into its 16-byte IPv6 form.
 * 0, or -LC_ERR_USAGE for anything else.
 */
int lc_addr_parse(const char *s, uint8_t out[16]);

/* 1 if a and b both parse (lc_addr_parse) to the same address, else 0. */
int lc_addr_same(const char *a, const char *b);

/* Effective buffer size the kernel gives (half of getsockopt, Linux). */
uint32_t lc_sock_rcvbuf(int fd);
uint32_t lc_sock_sndbuf(int fd);

/* Set SO_RCVTIMEO and SO_SNDTIMEO (0 clears). */
int lc_sock_set_timeout(int fd, int ms);

/* Format a sockaddr's numeric address and port: "127.0.0.1 port 4711". */
void lc_sock_peer_name(int fd, char *out, size_t outsz);

void lc_conn_init(struct lc_conn *c, int fd);

/*
 * One absolute deadline for a whole handshake, ms from now: the socket
 * becomes non-blocking, and the lc_conn I/O below and the TLS handshake
 * (tls.h) wait for it with poll(2) only until then; past it they fail
 * with -LC_ERR_TIMEOUT ("not finished within N s").  0, or
 * -LC_ERR_STREAM when the socket's flags cannot be set.  Clear it (the
 * socket blocks again) before the connection carries frames.
 */
int lc_conn_set_deadline(struct lc_conn *c, uint32_t ms);
int lc_conn_clear_deadline(struct lc_conn *c);
/*
 * Under a deadline: wait until c->fd is readable (writing 0) or writable
 * (writing 1), or has an error or hangup for the next call to see.  0, or
 * -LC_ERR_TIMEOUT once the deadline has passed.
 */
int lc_conn_wait(struct lc_conn *c, int writing, struct lc_err *e);
/* The peer's numeric address without its port ("127.0.0.1", "::1"). */
void lc_conn_host(const struct lc_conn *c, char *out, size_t outsz);

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
 * Transport I/O, through TLS when c->ssl is set.  lc_conn_read_full
 * returns 0, -LC_ERR_EOF when the peer closed before the first byte,
 * -LC_ERR_INTEGRITY when a TLS record fails its check, -LC_ERR_TIMEOUT when
 * a socket timeout expires, -LC_ERR_STREAM on a reset, a close in the
 * middle or another error (e gets the text).
 */
int lc_conn_write_all(struct lc_conn *c, const void *p, size_t n,
    struct lc_err *e);
int lc_conn_read_full(struct lc_conn *c, void *p, size_t n,
    struct lc_err *e);
/*
 * Encrypted frames (aead.h).  Predicate: 1 if frames on c carry a tag
 * (LC_AEAD_TAG_LEN bytes after the payload), 0 with --no-encrypt.
 */
int lc_conn_sealed(const struct lc_conn *c);
/*
 * The rest of the frame whose header hdr was just read: n payload bytes
 * into p, and on an encrypted stream the tag, read with one recvmsg(2)
 * and opened in place with hdr as associated data (n may be 0: END, IDLE
 * and HOLE are authenticated too).  0, the errors of lc_conn_read_full
 * (-LC_ERR_EOF becomes -LC_ERR_STREAM: a frame was begun), or
 * -LC_ERR_INTEGRITY when the tag fails: p must then not be used, and no
 * later frame on c is accepted.
 */
int lc_conn_read_rest(struct lc_conn *c, const uint8_t *hdr, size_t hdrlen,
    void *p, size_t n, struct lc_err *e);
/* Wake up a thread blocked on the connection (shutdown(2)). */
void lc_conn_shutdown(struct lc_conn *c);
void lc_conn_close(struct lc_conn *c);

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
