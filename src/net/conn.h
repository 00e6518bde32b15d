/*
 * A data stream's connection (struct lc_conn) and its socket: listen,
 * dial, buffer sizes (sock.c), and the connection's deadline and I/O, in
 * TLS during the handshake (tls.h), through the bulk AEAD once sealed
 * (aead.h), or plain (conn.c).  Below tls.h and stream.h, which both use
 * it; it knows neither.
 */
#ifndef LANECP_CONN_H
#define LANECP_CONN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "lc_limits.h"

#define LC_PEER_MAX (LC_ADDR_MAX + 8)

struct ssl_st;
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
 * addr is numeric: IPv4, or IPv6 with an optional %scope (an interface
 * name or number); a name is refused (-LC_ERR_STREAM), never resolved,
 * so the agent never loads the host's resolver or NSS modules.
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

/*
 * The path under a TCP socket, as the kernel sees it: rtt_us, the least
 * round trip measured (the smoothed one on old kernels), ooo_packets,
 * segments that arrived out of order (a loss or reordering on the path;
 * 0 where the kernel does not count them), and segs_in, the segments
 * received (0 where not counted).  0, or -1 when fd is not a TCP socket
 * or no round trip was measured yet (tcpinfo.c).
 */
struct lc_sock_path {
	uint32_t rtt_us;
	uint32_t ooo_packets;
	uint32_t segs_in;
};
int lc_sock_path(int fd, struct lc_sock_path *out);

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

#endif
