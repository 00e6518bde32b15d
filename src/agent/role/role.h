/*
 * Roles: the source and the sink, and the narrow port through which each
 * talks to whatever hosts it.
 *
 * A role is a state machine driven by control messages from the
 * controller and by events from its own worker threads (senders,
 * receivers, the acceptor, jobs).  It knows nothing of the agent: what it
 * may use of its host is in struct lc_role_port, and what the host may ask
 * of it is in struct lc_role_ops.  The agent (agent.c) is one host: it
 * reads control messages, dispatches each to the role that owns its type,
 * and turns posted events into calls of ops->event on its main thread.  A
 * unit test is another host: it builds a port over its own buffer and
 * event list and drives a role directly (tests/unit/test_role_*.c).
 *
 * Threads.  handle, event, tick, abort and free are called on the host's
 * main thread only, one at a time; so is every write to port->out.  Worker
 * threads may only call lc_role_post*() and read *port->cancel.
 */
#ifndef LANECP_ROLE_H
#define LANECP_ROLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "wire.h"
#include "confine.h"
#include "err.h"
#include "lockholder.h"

enum lc_event_type {
	LC_EV_ERROR = 1,	/* err: fatal for the transfer */
	LC_EV_STREAM_UP,	/* a = stream index (source) */
	LC_EV_SENDER_DONE,	/* a = stream index, b = 1 if it sent END */
	LC_EV_SENDER_FAILED,	/* a = stream index, err: why (not fatal) */
	LC_EV_SRC_SUM,		/* a = file id, text = checksum */
	LC_EV_PREFIX_DONE,	/* a = file id, b = matching bytes / hashed */
	LC_EV_RECEIVER_DONE,	/* a = stream index */
	LC_EV_STREAM_LOST,	/* a = stream index, err: why */
	LC_EV_FILE_WRITTEN,	/* a = file id */
	LC_EV_RESUME_READY,	/* a = file id: seeded, ready to receive */
	LC_EV_FILE_DONE,	/* a = file id, b = bytes, text = checksum */
	LC_EV_BATCH_DONE,	/* the sink's finish job is free again */
	LC_EV_DIRS_DONE,	/* the sink's directory modes are set */
	LC_EV_PIPE_EOF,	/* a = file id, b = a stream's length, text =
				   its checksum or "" (source) */
	LC_EV_STREAM_ACK,	/* the sink wrote more of a stream: send the
				   low-water mark now (sink) */
	LC_EV_FILE_NOSPACE,	/* a = file id, err: a write of it found the
				   file system full (sink; fatal) */
};

/* One event from a worker thread to the role, by value. */
struct lc_event {
	int type;
	uint32_t a;
	uint64_t b;
	struct lc_err err;
	char text[LC_CSUM_MAX];
};

/* What the host grants a role; fixed once the role exists. */
struct lc_role_settings {
	mode_t umask;		/* applied to modes the peer sends */
	uint64_t max_memory;	/* the sink's peak memory bound, bytes */
	uint32_t max_streams;	/* what the host advertised in its HELLO */
	int local;		/* in the controller's process: its stdin and
				   stdout are the user's (pipes, "-") */
	char transfer[LC_TRANSFER_HEX + 1];	/* the agent's id, or "" */
	int done_flags;		/* the controller's HELLO had
				   LC_HELLO_COUNTS: FILE_DONE carries its
				   flags */
	int tilde;		/* expand "~" and "~user" in user paths
				   (a remote agent, as scp) */
	/*
	 * A restricted agent dials data streams (CONNECT, DIAL) only to
	 * dial_only, its SSH client's numeric address from SSH_CONNECTION
	 * ("": to nothing).  See lc_role_dial_check().
	 */
	int dial_restricted;
	char dial_only[LC_ADDR_MAX];
};

struct lc_role_port {
	/* Control messages to the controller (main thread only). */
	struct lc_buf *out;
	/* Stop everything: set by the host, read by every thread. */
	atomic_bool *cancel;
	/* Where the role may open paths (the --restrict root, or none). */
	const struct lc_confine *conf;
	struct lc_role_settings set;
	/*
	 * Hand an event to the host (any thread).  The host copies ev and
	 * later calls ops->event with it on its main thread.  It never
	 * fails: a host that cannot queue an event sets *cancel, so a
	 * failure is not lost.
	 */
	void (*post)(void *host, const struct lc_event *ev);
	void *host;
};

/* Post an event (any thread); err and text may be NULL. */
void lc_role_post(const struct lc_role_port *p, int type, uint32_t a,
    uint64_t b, const struct lc_err *err);
void lc_role_post_text(const struct lc_role_port *p, int type, uint32_t a,
    uint64_t b, const char *text);

/*
 * Before a role dials addr (addrsz bytes, NUL-terminated): 0 if it may
 * (a restricted host's addr is then replaced by the address it checked),
 * or -LC_ERR_NOPATH with one message that names nothing of the target,
 * so that a refusal tells no open port from a closed one (nothing is
 * dialled).
 */
int lc_role_dial_check(const struct lc_role_port *p, char *addr,
    size_t addrsz, struct lc_err *e);

/* 1 once the host has asked everything to stop. */
static inline int
lc_role_canceled(const struct lc_role_port *p)
{
	return atomic_load(p->cancel);
}

struct lc_role_ops {
	const char *name;	/* "source", "sink" */
	/* 1 if control messages of this type belong to the role. */
	int (*owns)(uint8_t type);
	/*
	 * Make the role.  The port is copied; *port->out, *port->cancel and
	 * *port->conf must outlive the role.  0 or -LC_ERR_NOMEM.
	 */
	int (*create)(const struct lc_role_port *port, void **out);
	/* One control message; 0, or -LC_ERR_* with e filled (fatal). */
	int (*handle)(void *role, uint8_t type, const uint8_t *p, size_t n,
	    struct lc_err *e);
	/* One posted event; 0, or -LC_ERR_* with e filled (fatal). */
	int (*event)(void *role, const struct lc_event *ev, struct lc_err *e);
	/* About once a second: heartbeats, stall checks; 0 or -LC_ERR_*. */
	int (*tick)(void *role, uint64_t now_ms);
	/* Stop the worker threads soon (cancel is already set). */
	void (*abort)(void *role);
	/* Join the threads and free everything; NULL is fine. */
	void (*free)(void *role);
};

extern const struct lc_role_ops lc_source_ops;
extern const struct lc_role_ops lc_sink_ops;

#endif
