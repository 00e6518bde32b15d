/*
 * Data stream connections: sockets, the transport (plain TCP now, TLS 1.3
 * later) and the per-stream authentication handshake.
 *
 * Each data stream proves it belongs to this transfer with the per-transfer
 * key that only travelled over SSH, by a keyed challenge-response with
 * fresh nonces from both sides (a captured handshake cannot be replayed),
 * compared in constant time:
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
#include "lanecp/wire.h"

#define LC_HANDSHAKE_TIMEOUT_MS 10000
#define LC_PEER_MAX (LC_ADDR_MAX + 8)

struct ssl_st;

struct lc_conn {
	int fd;
	struct ssl_st *ssl;	/* NULL: plain TCP (--no-encrypt) */
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
};

/*
 * Listen on an ephemeral port on the wildcard address (IPv6 dual-stack
 * when available).  window > 0 sets SO_RCVBUF and SO_SNDBUF before
 * listen(2) (accepted sockets inherit them; this turns off autotuning).
 */
int lc_sock_listen(uint32_t window, int *fd, uint16_t *port,
    struct lc_err *e);

/*
 * Connect to addr:port within timeout_ms, window as above before connect.
 * Gives up early (-LC_ERR_CANCELED) when *cancel becomes true.
 */
int lc_sock_connect(const char *addr, uint16_t port, uint32_t window,
    int timeout_ms, const atomic_bool *cancel, int *fd, struct lc_err *e);

/* Effective buffer size the kernel gives (half of getsockopt, Linux). */
uint32_t lc_sock_rcvbuf(int fd);
uint32_t lc_sock_sndbuf(int fd);

/* Set SO_RCVTIMEO and SO_SNDTIMEO (0 clears). */
int lc_sock_set_timeout(int fd, int ms);

/* Format a sockaddr's numeric address and port: "127.0.0.1 port 4711". */
void lc_sock_peer_name(int fd, char *out, size_t outsz);

void lc_conn_init(struct lc_conn *c, int fd);

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
/* Wake up a thread blocked on the connection (shutdown(2)). */
void lc_conn_shutdown(struct lc_conn *c);
void lc_conn_close(struct lc_conn *c);

/*
 * Stream authentication (run with socket timeouts set by the caller).
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

#endif
