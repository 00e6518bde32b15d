/*
 * The controller's data relay: data streams that flow through the
 * controller instead of straight from source to sink.
 *
 * Both agents listen (the source in reverse, the sink as usual) and the
 * relay joins stream i of one to stream i of the other: one "leg" per
 * stream, each connecting to both ends and moving bytes both ways until
 * the stream ends or breaks.  An end is reached either by TCP (a local
 * agent on 127.0.0.1, or --relay to a remote host's address) or through
 * its own SSH connection with a direct-tcpip channel to the agent's
 * loopback port (--via-ssh: one SSH connection, so one TCP connection and
 * one congestion window, per stream).
 *
 * The relay never sees file data in the clear when the streams are
 * encrypted: the TLS handshake and records run end to end between source
 * and sink, the relay only copies bytes (splice(2) for TCP to TCP, the SSH
 * pump threads for SSH ends).  Its pipe holds at most LC_RELAY_CHUNK bytes
 * per stream and direction (TCP to TCP), whatever the transfer size, and
 * it takes the next only when the outgoing socket has room (relay.c); the
 * incoming socket's receive buffer holds the rest.
 *
 * A stream that breaks is reconnected when the controller says so
 * (lc_relay_redial, on the sink's STREAM_LOST): the leg drops both ends and
 * connects both again; the source accepts the new connection on the same
 * port and both ends run the full key handshake again.
 */
#ifndef LANECP_RELAY_H
#define LANECP_RELAY_H

#include <stdint.h>

#include "err.h"
#include "ssh.h"
#include "wire.h"

/*
 * Bytes a leg takes from a socket at a time, and holds at most: small, so
 * a stream slowed on the far leg backs up to its source at once (relay.c).
 */
#define LC_RELAY_CHUNK (128u << 10)
#define LC_RELAY_PIPE (2 * LC_RELAY_CHUNK)	/* pipe capacity asked for */
#define LC_RELAY_SSH_PARALLEL 4	/* SSH connections opened at once */

/* One end of the relayed streams (the source, 0, or the sink, 1). */
struct lc_relay_end {
	char addr[LC_ADDR_MAX];	/* TCP: numeric address to connect to */
	uint16_t ports[LC_MAX_STREAMS];
	/*
	 * SSH: the options to open more connections with (NULL: TCP), and
	 * the connections opened beforehand (lc_relay_open_ssh), one per
	 * stream; the relay takes them over (frees them) and opens a fresh
	 * one when a stream is reconnected.
	 */
	const struct lc_ssh_opts *ssh;
	struct lc_ssh *conn[LC_MAX_STREAMS];
};

struct lc_relay;

/*
 * Open up to want (1 .. LC_MAX_STREAMS) more SSH connections to the host
 * of o, at most LC_RELAY_SSH_PARALLEL in their handshake at once (a server
 * with MaxStartups 10 refuses more unauthenticated connections than that;
 * a refused one is tried again once after the others).  Returns the
 * number opened (>= 1), its connections in conns[0 ..), or -LC_ERR_* with
 * e from the first failure when none could be opened.
 */
int lc_relay_open_ssh(const struct lc_ssh_opts *o, uint32_t want,
    struct lc_ssh **conns, struct lc_err *e);

/*
 * Start n (1 .. LC_MAX_STREAMS) legs joining end[0] (source) to end[1]
 * (sink); window > 0 sets the relay's TCP socket buffers.  The ends are
 * copied (their conn[] taken over, also on failure).  0 and *out, or
 * -LC_ERR_*.
 */
int lc_relay_start(const struct lc_relay_end end[2], uint32_t n,
    uint32_t window, struct lc_relay **out, struct lc_err *e);

/*
 * 1 (with e saying why, LC_ERR_NOPATH) once a leg has failed to connect
 * LC_RELAY_GIVE_UP times in a row without any leg ever connecting: the
 * relay cannot reach an agent, so this path does not work.  Else 0.
 */
#define LC_RELAY_GIVE_UP 3
int lc_relay_failed(struct lc_relay *r, struct lc_err *e);

/* Stream i broke: drop both of its ends and connect them again. */
void lc_relay_redial(struct lc_relay *r, uint32_t i);

/* Stop every leg, close everything, free (NULL is fine). */
void lc_relay_free(struct lc_relay *r);

#endif
