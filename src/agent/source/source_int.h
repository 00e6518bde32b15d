/*
 * The source role's shared state, for source.c (the role: listing,
 * resume checks, control messages and events) and sender.c (the sender
 * threads).  Not for anyone else.
 *
 * Who writes what.  "main" is the host's main thread (ops->handle, event,
 * tick, abort, free).  "setup" fields are written by main in CONNECT
 * before the senders start and only read afterwards.  "mu" fields are
 * read and written under lc_source.mu; lc_source.cv is broadcast when a
 * STREAM_LOST arrives and on abort (senders waiting for it, or backing
 * off before a reconnect, wake up).
 */
#ifndef LANECP_SOURCE_INT_H
#define LANECP_SOURCE_INT_H

#include "role.h"

#include "dispenser.h"
#include "jobq.h"
#include "ratelimit.h"
#include "stream.h"
#include "tls.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* Blocks a sender has sent and the sink has not confirmed (by ACK). */
struct lc_sent {
	struct lc_block *v;
	size_t n;
	size_t cap;
};

struct lc_sender {
	struct lc_source *src;	/* setup */
	uint32_t idx;		/* setup */
	pthread_t thread;	/* main */
	int started;		/* main */
	/* under src->mu (set and cleared by the sender itself; main only
	 * shuts them down, and frees st after the join): */
	struct lc_stream *st;	/* authenticated stream, or NULL */
	int hs_fd;		/* socket still in its handshake: for
				   shutdown(2) only, or -1 */
	uint32_t sndbuf;	/* the sender's; main reads it on STREAM_UP */
	int reached;		/* the sender's: that dial got a TCP connection
				   (set under src->mu by the pending hook) */
	int listen_fd;		/* reverse: where the sink dials in (setup;
				   the source's, closed by main in free) */
	atomic_bool stop;	/* break off the current connection */
	struct lc_zdef *zdef;	/* -c: the sender's own deflater, or NULL */
	/* under src->mu: */
	struct lc_sent sent;	/* sent, not yet confirmed (the sender adds,
				   ACK and resend release) */
	int lost;		/* STREAM_LOST came; last* say what it got
				   (main sets, the sender clears) */
	int has_last;
	uint32_t last_file;
	uint64_t last_off;
};

struct lc_listed;	/* source.c */
struct lc_dfile;	/* dispenser.h */

/*
 * A stream request (stdin, or a -N i program's stdout): read in order by
 * one reader thread into the dispenser's stream buffers.  main sets it up
 * and starts the thread once FILE_READY has come and every stream is up
 * (so a data path that cannot connect fails before anything is read);
 * pid is under src->mu (abort kills the program), the rest the reader's.
 */
struct lc_reader {
	pthread_t thread;	/* main */
	int started;		/* main */
	int ready;		/* main: FILE_READY came */
	uint32_t id;		/* main */
	int fd;			/* stdin's duplicate, or the program's stdout */
	pid_t pid;		/* the program, or -1 (mu) */
	char *cmd;		/* the program, or NULL: stdin */
	struct lc_dfile *f;	/* the dispenser's handle */
	struct lc_csum *csum;	/* -e: over the bytes in order, or NULL */
};
struct lc_zdef;		/* zframe.h */
struct lc_walk;		/* walk.h */

/* A SRC_ADD waiting to be listed. */
struct lc_add {
	uint32_t flags;		/* LC_ADD_* */
	char *path;
};

struct lc_source {
	struct lc_role_port port;	/* read-only */
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* a STREAM_LOST arrived, or abort; on
				   CLOCK_MONOTONIC for timed waits */
	struct lc_dispenser *disp;	/* setup; thread-safe itself */
	struct lc_jobq *jobs;	/* main */
	uint32_t next_id;	/* main */
	uint32_t credit;	/* main: ids below it may be announced */
	struct lc_add *adds;	/* main: requests, listed in order */
	size_t nadds;
	size_t adds_cap;
	size_t add_next;	/* main: the request being listed */
	struct lc_walk *walk;	/* main: its walk, or NULL */
	int pending;		/* main: an entry waiting for credit */
	struct lc_walk_entry_buf {
		int kind;
		int fd;
		struct stat st;
		char name[LC_PATH_MAX];
		char link[LC_PATH_MAX];
	} pend;
	struct lc_idname {	/* main: the last id looked up, and its name */
		int valid;
		uint32_t id;
		char name[LC_OWNER_MAX];
	} last_user, last_group;
	uint32_t add_files;	/* main: entries announced for it */
	uint64_t add_bytes;
	struct lc_listed *listed;	/* waiting for FILE_READY, in id
					   order (main; a resume job borrows
					   one) */
	struct lc_listed *listed_tail;
	uint32_t files;		/* files handed to the dispenser (main) */
	int connect_seen;	/* main */
	int nomore;		/* main */
	int done_sent;		/* main */
	uint32_t nstreams;	/* setup */
	uint32_t window;	/* setup */
	uint32_t block;		/* setup */
	uint32_t flags;		/* setup */
	uint32_t csum;		/* setup */
	uint32_t zlevel;	/* setup: deflate level, 0: none (-c) */
	char addr[LC_ADDR_MAX];	/* setup */
	uint16_t ports[LC_MAX_STREAMS];	/* setup (reverse: our own) */
	uint32_t nlisten;	/* setup: senders[0 .. nlisten) listen_fd open */
	uint8_t *key;		/* setup: LC_KEY_LEN bytes, secmem.h */
	struct lc_tls *tls;	/* setup; NULL: --no-encrypt */
	struct lc_rate rate;	/* setup; thread-safe itself */
	int rate_init;		/* main */
	uint32_t up;		/* main: senders connected */
	uint32_t finished;	/* main: senders that sent END */
	struct lc_sender senders[LC_MAX_STREAMS];
	struct lc_reader rd;	/* a stream request, at most one */
	atomic_uint_fast64_t bytes_sent;	/* senders add */
	atomic_uint_fast64_t wire_sent;	/* DATA payload bytes on the wire
					   (compressed or not); senders add,
					   after bytes_sent */
};

/*
 * A sender thread (arg: struct lc_sender *): dials its stream, sends until
 * the dispenser is empty and everything is confirmed, reconnecting and
 * resending after a break.  Posts LC_EV_STREAM_UP once connected,
 * LC_EV_SENDER_FAILED per break, LC_EV_ERROR when it gives up (unless
 * canceled), and LC_EV_SENDER_DONE last.  Returns NULL; main joins it.
 */
void *lc_sender_main(void *arg);

#endif
