/*
 * The source role's shared state, for its feature files: source.c (the
 * role: messages and events dispatched, FILE_READY, the tick, abort and
 * free), source_list.c (listing), source_follow.c (following a part
 * file: SRC_PART, SRC_AVAIL), source_pipe.c (pipes: stdin and -N i
 * programs), source_resume.c (resume checks), source_send.c (sending:
 * CONNECT, ACK, STREAM_LOST) and sender.c (the sender threads).  Each
 * feature's state is a sub-struct of struct lc_source.  Not for anyone
 * else.
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
#include "filter.h"
#include "shard.h"
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

struct lc_dfile;	/* dispenser.h */
struct lc_zdef;		/* zframe.h */
struct lc_walk;		/* walk.h */

/*
 * A listed regular file (or the one pipe), waiting for its FILE_READY in
 * the listing's queue (main; a resume job borrows one while checking).
 */
struct lc_listed {
	struct lc_listed *next;
	uint32_t id;
	int fd;			/* -1 until it is needed (lc__source_open) */
	dev_t dev;		/* what was listed: opened later, it must be */
	ino_t ino;		/* the same file */
	int follow;		/* the path may end in a symlink (-L, root) */
	int part;		/* SRC_PART: fd is the part file the target
				   before is writing (size: as announced) */
	uint64_t avail;		/* part: [0, avail) is final (SRC_AVAIL) */
	char *failed;		/* why it could not be opened, or NULL */
	uint64_t size;
	struct lc_csum *csum;	/* seeded by a resume check, else NULL */
	uint64_t csum_upto;	/* csum covers [0, csum_upto) */
	uint8_t *prefix;	/* resume check input: hashes, owned */
	uint64_t prefix_len;
	uint32_t chunk;
	uint32_t nchunks;
	uint32_t hlen;		/* bytes a hash: 32 (FILE_PREFIX) or 16 */
	uint32_t got;		/* FILE_HASHES: hashes in so far */
	size_t hash_mem;	/* FILE_HASHES: what prefix counts in
				   lc_source_resume's hash_mem */
	struct lc_verdict *verdict;	/* its result, owned */
	int checking;		/* a resume check job has it (main thread) */
	int pipe;		/* stdin or a program: path is the command
				   ("-" for stdin) */
	struct lc_source *src;
	char path[];
};

/* A SRC_ADD waiting to be listed. */
struct lc_add {
	uint32_t flags;		/* LC_ADD_* */
	char *path;
};

/* --owner: the last id looked up, and its name (main). */
struct lc_idname {
	int valid;
	uint32_t id;
	char name[LC_OWNER_MAX];
};

/* Listing (source_list.c), all main's. */
struct lc_source_list {
	uint32_t next_id;	/* the next FILE's id */
	uint32_t credit;	/* ids below it may be announced */
	struct lc_add *adds;	/* requests, listed in order */
	size_t nadds;
	size_t adds_cap;
	size_t add_next;	/* the request being listed */
	struct lc_walk *walk;	/* its walk, or NULL */
	int pending;		/* an entry waiting for credit */
	struct lc_walk_entry_buf {
		int kind;
		int fd;
		struct stat st;
		char name[LC_PATH_MAX];
		char link[LC_PATH_MAX];
		int part;	/* LC_WALK_PART_* */
		uint64_t part_size;
	} pend;
	struct lc_idname last_user, last_group;
	int unnamed_warned;	/* --owner: an id without a name seen */
	uint32_t add_files;	/* entries announced for the request */
	uint64_t add_bytes;
	struct lc_listed *listed;	/* waiting for FILE_READY, in id
					   order (a resume job borrows one) */
	struct lc_listed *listed_tail;
	struct lc_filters filters;	/* SRC_FILTER: what is left out */
	struct lc_shard shard;	/* SRC_FILTER kind 3: n 0, none */
	struct lc_shard_plan plan;	/* the current request's large
					   files (source_shard.c) */
	uint8_t *parts;		/* SRC_PART: bit id set when file id was
				   announced from one (source_follow.c) */
	size_t parts_len;	/* bytes of parts */
};

/*
 * The pipe (stdin, or a -N i program's stdout; source_pipe.c): read in
 * order by one reader thread into the dispenser's pipe buffers.  main sets
 * it up and starts the thread once FILE_READY has come and every stream is
 * up (so a data path that cannot connect fails before anything is read);
 * pid is under src->mu (abort kills the program), the rest the reader's.
 */
struct lc_source_pipe {
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

/*
 * A resume check's result: PREFIX_MATCH's fields, its runs on the heap
 * as many as there are (up to 8192 of them; the message struct's 64 KiB
 * of room is only lc_source_resume's, one per source).
 */
struct lc_verdict {
	uint64_t match;
	uint32_t n;
	uint32_t cap;
	struct lc_chunk_run *runs;
};

/* Resume checks (source_resume.c). */
struct lc_source_resume {
	struct lc_jobq *jobs;	/* main; its thread hashes partial files */
	struct lc_msg_prefix_match *msg;	/* main: PREFIX_MATCH to send,
						   allocated when first used */
	size_t hash_mem;	/* main: FILE_HASHES lists held, from their
				   first frame to their PREFIX_MATCH; at
				   most LC_DELTA_MEM_MAX */
};

/* A listed file's FILE_HASHES list leaves hash_mem (freed). */
void lc__source_hashes_release(struct lc_listed *l);

/* Free a verdict (NULL is fine). */
void lc__verdict_free(struct lc_verdict *v);

/*
 * Sending (source_send.c for main's side, sender.c for the threads): the
 * data path's settings from CONNECT ("setup") and the senders.
 */
struct lc_source_send {
	uint32_t window;	/* setup */
	uint32_t zlevel;	/* setup: deflate level, 0: none (-c) */
	char addr[LC_ADDR_MAX];	/* setup */
	uint16_t ports[LC_MAX_STREAMS];	/* setup (reverse: our own) */
	uint32_t nlisten;	/* setup: senders[0 .. nlisten) have their
				   listen_fd open */
	uint8_t *key;		/* setup: LC_KEY_LEN bytes, secmem.h */
	struct lc_tls *tls;	/* setup; NULL: --no-encrypt */
	struct lc_rate rate;	/* setup; thread-safe itself */
	int rate_init;		/* main */
	uint32_t up;		/* main: senders connected */
	uint32_t finished;	/* main: senders that sent END */
	struct lc_sender senders[LC_MAX_STREAMS];
	atomic_uint_fast64_t bytes_sent;	/* senders add */
	atomic_uint_fast64_t wire_sent;	/* DATA payload bytes on the wire
					   (compressed or not); senders add,
					   after bytes_sent */
};

struct lc_source {
	struct lc_role_port port;	/* read-only */
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* a STREAM_LOST arrived, or abort; on
				   CLOCK_MONOTONIC for timed waits */
	struct lc_dispenser *disp;	/* setup; thread-safe itself */
	/* CONNECT's settings, which every feature reads (setup): */
	uint32_t nstreams;
	uint32_t block;
	uint32_t flags;		/* LC_XFER_* */
	uint32_t csum;		/* LC_CSUM_* */
	uint32_t files;		/* files handed to the dispenser (main) */
	int connect_seen;	/* main */
	int nomore;		/* main */
	int done_sent;		/* main */
	struct lc_source_list list;
	struct lc_source_resume resume;
	struct lc_source_pipe pipe;	/* a pipe request, at most one */
	struct lc_source_send send;
};

/* Listing (source_list.c). */

/* SRC_FILTER: one more rule, before the first SRC_ADD. */
int lc__source_filter(struct lc_source *s, const struct lc_msg_src_filter *m,
    struct lc_err *e);

/*
 * 1 if the SRC_FILTER rules leave a walked entry out (an excluded
 * directory is pruned from w too: what is below it is not read); 0 if it
 * is listed.  The listing and --shard's pre-walk both ask this.
 */
struct lc_walk_entry;
int lc__source_excluded(const struct lc_source *s, struct lc_walk *w,
    const struct lc_walk_entry *ent);

/*
 * --shard (source_shard.c): list the root path (walk flags as the
 * request's) to deal its large files among the shards, before the
 * request's first entry is announced.  Fatal errors only.
 */
int lc__source_shard_plan(struct lc_source *s, const char *path,
    unsigned flags, struct lc_err *e);
/* 1 if a walk entry is another shard's (and must not be announced). */
int lc__source_shard_skip(const struct lc_source *s,
    const struct lc_walk_entry *ent);

/* SRC_ADD: queue a request and list as far as the credit reaches. */
int lc__source_add(struct lc_source *s, const struct lc_msg_src_add *m,
    struct lc_err *e);
/*
 * SRC_ENTRY: queue one name of the fed request (or its end) and list on.
 * Without a fed request, after its end, or with LC_FED_QUEUE_MAX names
 * already held: LC_ERR_PROTO.
 */
int lc__source_entry(struct lc_source *s, const struct lc_msg_src_entry *m,
    struct lc_err *e);
/*
 * SRC_ENTRY's and SRC_PART's common part (what: the message's name for
 * errors): queue name (part: to be read from its part file, announced
 * with size), or the end, and list on.
 */
int lc__source_feed(struct lc_source *s, const char *what, const char *name,
    int end, int part, uint64_t size, struct lc_err *e);
/* SRC_CREDIT: raise the credit (never lower) and list on. */
int lc__source_credit(struct lc_source *s, const struct lc_msg_src_credit *m,
    struct lc_err *e);
/* FILE_SKIP: drop a listed file the sink leaves as it is. */
int lc__source_skip(struct lc_source *s, const struct lc_msg_file_skip *m,
    struct lc_err *e);
/* l joins the listed entries, which wait for their FILE_READY. */
void lc__source_listed_append(struct lc_source *s, struct lc_listed *l);
/* The listed entry with this id, or NULL; *pp (if pp) is its link. */
struct lc_listed *lc__source_listed(struct lc_source *s, uint32_t id,
    struct lc_listed ***pp);
/* Take l (at *pp) out of the listed queue; the caller frees it. */
void lc__source_unlink(struct lc_source *s, struct lc_listed **pp,
    struct lc_listed *l);
/*
 * Open l by its path if it is not open yet; it must still be the file that
 * was listed.  0, or -LC_ERR_* with e filled (l->failed is not set).
 */
int lc__source_open(struct lc_source *s, struct lc_listed *l,
    struct lc_err *e);
/* Close and free one listed entry. */
void lc__listed_free(struct lc_listed *l);
/* Free what the listing holds (the role is being freed). */
void lc__source_list_free(struct lc_source *s);

/* Following a part file (source_follow.c; issue 25). */

/*
 * SRC_PART: queue one name of the fed request to be read from its part
 * file, as SRC_ENTRY queues one (the same checks, errors naming
 * SRC_PART).
 */
int lc__source_part(struct lc_source *s, const struct lc_msg_src_part *m,
    struct lc_err *e);
/*
 * SRC_AVAIL: raise a followed file's avail, listed (kept for its
 * FILE_READY) or in the dispenser.  LC_ERR_PROTO for an id not announced
 * from a SRC_PART, an avail going back or past the size announced;
 * ignored for one announced from SRC_PART but read whole (its part file
 * was gone) or already done with.
 */
int lc__source_avail(struct lc_source *s, const struct lc_msg_src_avail *m,
    struct lc_err *e);
/* Remember that file id was announced from a SRC_PART.  0 or -LC_ERR_NOMEM. */
int lc__source_mark_part(struct lc_source *s, uint32_t id);

/* Pipes (source_pipe.c). */

/*
 * Announce a pipe request a: its FILE (kind LC_KIND_PIPE, named "-"),
 * then SRC_LISTED.  Nothing is read or started before FILE_READY.
 */
int lc__source_pipe_announce(struct lc_source *s, const struct lc_add *a,
    struct lc_err *e);
/*
 * FILE_READY for the pipe l (unlinked; the caller frees it): open it (stdin
 * or start the program), give it to the dispenser, start the reader if
 * every stream is up.
 */
int lc__source_pipe_ready(struct lc_source *s, struct lc_listed *l,
    struct lc_err *e);
/* Start the reader once FILE_READY came and every stream is up; else 0. */
int lc__source_pipe_start(struct lc_source *s, struct lc_err *e);
/* The reader's end (LC_EV_PIPE_EOF): FILE_LEN, then FILE_SUM under -e. */
int lc__source_pipe_eof(struct lc_source *s, const struct lc_event *ev);
/*
 * Stop the program for good, join the reader and free the pipe (the role
 * is being freed; the senders are joined).
 */
void lc__source_pipe_free(struct lc_source *s);

/* Resume checks (source_resume.c). */

/* FILE_PREFIX: start the resume check of a listed file (a job). */
int lc__source_prefix(struct lc_source *s, const struct lc_msg_file_prefix *m,
    struct lc_err *e);
/* LC_EV_PREFIX_DONE: the job let the file go; PREFIX_MATCH out. */
int lc__source_prefix_done(struct lc_source *s, const struct lc_event *ev);
/* FILE_HASHES: a slice of a delta's list; the check starts with the last. */
int lc__source_hashes(struct lc_source *s, const struct lc_msg_file_hashes *m,
    struct lc_err *e);

/* Sending (source_send.c; the threads are sender.c's). */

/* CONNECT: the data path's settings; start the senders. */
int lc__source_connect(struct lc_source *s, const struct lc_msg_connect *m,
    struct lc_err *e);
/* ACK: release every kept block before the sink's watermark. */
void lc__source_ack(struct lc_source *s, const struct lc_msg_ack *m);
/* STREAM_LOST: break off that sender's connection; it reconnects. */
int lc__source_lost(struct lc_source *s, const struct lc_msg_stream_lost *m,
    struct lc_err *e);
/* LC_EV_STREAM_UP: one more stream; CONNECTED when all are up. */
int lc__source_stream_up(struct lc_source *s, struct lc_err *e);
/* SRC_DONE once SRC_NOMORE came and every sender has sent END; else 0. */
int lc__source_maybe_done(struct lc_source *s);
/* Wake every sender to stop (abort; under s->mu). */
void lc__source_senders_stop(struct lc_source *s);
/* Join the senders and release the blocks they kept. */
void lc__source_senders_join(struct lc_source *s);
/* Free the sending side's settings (after the join). */
void lc__source_send_free(struct lc_source *s);

/*
 * A sender thread (arg: struct lc_sender *): dials its stream, sends until
 * the dispenser is empty and everything is confirmed, reconnecting and
 * resending after a break.  Posts LC_EV_STREAM_UP once connected,
 * LC_EV_SENDER_FAILED per break, LC_EV_ERROR when it gives up (unless
 * canceled), and LC_EV_SENDER_DONE last.  Returns NULL; main joins it.
 */
void *lc_sender_main(void *arg);

#endif
