/*
 * Agent internals shared by agent.c (control loop), source.c and sink.c.
 *
 * Threads.  The agent's main thread owns the control channel: it alone
 * reads and writes control messages.  Worker threads (senders, receivers,
 * the acceptor) report to it by posting events to a mutex-protected queue
 * and poking a wake pipe; the main thread turns events into messages.
 */
#ifndef LANECP_AGENT_INT_H
#define LANECP_AGENT_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lanecp/agent.h"
#include "lanecp/buf.h"
#include "lanecp/confine.h"
#include "lanecp/err.h"
#include "lanecp/util.h"
#include "lanecp/wire.h"

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
};

struct lc_event {
	struct lc_event *next;
	int type;
	uint32_t a;
	uint64_t b;
	struct lc_err err;
	char text[LC_CSUM_MAX];
};

struct lc_source;
struct lc_sink;

struct lc_agent {
	int in_fd;
	int out_fd;
	struct lc_buf in;
	struct lc_buf out;
	struct lc_wake wake;
	pthread_mutex_t ev_mu;
	struct lc_event *ev_head, *ev_tail;
	atomic_bool cancel;	/* stop everything */
	const struct lc_agent_opts *opts;
	struct lc_confine conf;	/* --restrict DIR */
	int hello_done;
	int failed;		/* an ERROR was sent */
	int bye;
	struct lc_source *src;
	struct lc_sink *sink;
	mode_t umask;
	uint32_t max_streams;	/* advertised in our HELLO */
};

/* Post an event from any thread (copies ev).  Out of memory is fatal for
 * the agent but must not lose the fact of failure: it sets cancel. */
void lc_agent_post(struct lc_agent *a, int type, uint32_t x, uint64_t y,
    const struct lc_err *err);
/* The same with a text (a checksum). */
void lc_agent_post_text(struct lc_agent *a, int type, uint32_t x,
    uint64_t y, const char *text);

/* Queue a control message (main thread only); returns 0 or -LC_ERR_*. */
int lc_agent_send_error(struct lc_agent *a, const struct lc_err *e);

/* Source role (source.c) */
int lc_source_new(struct lc_agent *a, struct lc_source **out);
int lc_source_handle(struct lc_source *s, uint8_t type, const uint8_t *p,
    size_t n, struct lc_err *e);
int lc_source_event(struct lc_source *s, const struct lc_event *ev,
    struct lc_err *e);
void lc_source_abort(struct lc_source *s);
void lc_source_free(struct lc_source *s);

/* Sink role (sink.c) */
int lc_sink_new(struct lc_agent *a, struct lc_sink **out);
int lc_sink_handle(struct lc_sink *s, uint8_t type, const uint8_t *p,
    size_t n, struct lc_err *e);
int lc_sink_event(struct lc_sink *s, const struct lc_event *ev,
    struct lc_err *e);
/* Periodic tick from the main loop (heartbeat, stall checks). */
int lc_sink_tick(struct lc_sink *s, uint64_t now_ms);
int lc_source_tick(struct lc_source *s, uint64_t now_ms);
void lc_sink_abort(struct lc_sink *s);
void lc_sink_free(struct lc_sink *s);


#endif
