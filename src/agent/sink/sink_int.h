/*
 * The sink role's shared state, for sink.c (the role: state, dispatch)
 * and its features, each in a file of its own with its state in a
 * sub-struct of struct lc_sink: sink_file.c, sink_tree.c, sink_pipe.c,
 * sink_resume.c, sink_finish.c, sink_mem.c, acceptor.c (the acceptor and
 * its handshake threads) and receiver.c (the per-stream receivers).  Not
 * for anyone else (a unit test reads the head-of-line counters).
 *
 * Who writes what.  "main" is the host's main thread (ops->handle, event,
 * tick, abort, free).  "setup" fields are written by main in LISTEN (or
 * SINK_TARGET) before any worker thread starts and only read afterwards.
 * "mu" fields are read and written under lc_sink.mu; lc_sink.cv is
 * broadcast when a receiver gets its connection and on abort.
 */
#ifndef LANECP_SINK_INT_H
#define LANECP_SINK_INT_H

#include "role.h"

#include "checksum.h"
#include "idmap.h"
#include "jobq.h"
#include "partfile.h"
#include "stream.h"
#include "tls.h"
#include "clock.h"
#include "wake.h"
#include "writer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

/*
 * Handshakes in progress at once: room for every stream of the transfer
 * (on a long path all of them are in their handshake together) plus some
 * strangers.  One peer address may hold at most nstreams +
 * LC_AUTH_PER_HOST_SPARE of them (every stream and a few reconnects), so
 * never all.  A new connection always gets a slot: when its address
 * has its share, or every slot is busy, the handshake that has waited
 * longest is dropped (acceptor.c, lc_hs_admit in stream.h).  Each
 * handshake has LC_HANDSHAKE_TIMEOUT_MS in all.
 */
#define LC_MAX_PENDING_AUTH (LC_MAX_STREAMS + 16)
#define LC_AUTH_PER_HOST_SPARE 8

/*
 * The sink sends its low-water mark (PROGRESS) whenever a file's writing
 * crosses a multiple of this, not only once a second: a stream's source
 * keeps its bytes in memory until they are acked (it cannot read them
 * again), every source keeps its blocks' descriptors, and --also's next
 * hop reads a file as far as this target's mark says it is written.
 */
#define LC_MARK_STEP (2u << 20)

enum lc_sfile_state {
	LC_SF_PREFIX,		/* hashing the partial file (resume) */
	LC_SF_MATCH,		/* waiting for the source's verdict */
	LC_SF_SEED,		/* seeding the checksum after a resume */
	LC_SF_RECV,		/* receiving blocks */
	LC_SF_FINISH,		/* queued for (or in) the finish job */
	LC_SF_DONE,
};

/*
 * A directory of the target tree that files are made in: opened once for
 * all the files in it (beneath the target, no symlink followed), shared
 * by reference count (main thread only; the finish job only reads fd).
 */
struct lc_tdir {
	int fd;
	uint32_t refs;
	char rel[];		/* "" for the target directory itself */
};

/* A directory made or kept in a tree: its mode and times come last. */
struct lc_sdir {
	char *rel;
	struct lc_attrs a;
	uint32_t id;		/* its FILE id */
	uint32_t end;		/* the first id after its contents, 0 while
				   they are still being announced */
};

/*
 * One file.  Made by main (FILE) and owned by lc_sink.files; main hands it
 * to the job thread by pushing a job (prefix, seed, finish) and reads it
 * again after the job's event.  Receivers only reach its writer, wf.
 */
struct lc_sfile {
	uint32_t id;
	uint8_t kind;		/* LC_KIND_*: directories and links are done
				   at once and only hold their id's place */
	struct lc_tdir *dir;	/* tree: the directory it is in (a ref) */
	struct lc_part p;	/* fd, names (partfile.h): main, then the
				   job it is pushed to */
	int state;		/* enum lc_sfile_state (main thread) */
	int written;		/* every byte is written (main) */
	uint64_t start;		/* first byte received (resume; main) */
	struct lc_wfile *wf;	/* set by main under mu; receivers look it
				   up and take a reference under mu
				   (lc_sink_writer); closed before the part
				   file's descriptor is */
	struct lc_csum *csum;	/* -e: over what was written (the writer
				   feeds it, the finish job reads it) */
	char expect[LC_CSUM_MAX];	/* the source's checksum, "" = not yet
					   (main) */
	uint64_t prefix_len;	/* resume: bytes in the partial file */
	uint32_t chunk;
	uint32_t nchunks;
	uint8_t *prefix;	/* nchunks hashes of hlen bytes each (the
				   prefix job) */
	uint32_t hlen;		/* LC_PREFIX_HASH_LEN: a resume's or a delta's
				   FILE_PREFIX; LC_HASHES_HASH_LEN: a delta's
				   FILE_HASHES (LC_TGT_HASHES) */
	struct lc_span *spans;	/* resume: chunks below start to rewrite
				   (main; -e: the finish job hashes the
				   whole file from disk when there are any) */
	uint32_t nspans;
	int seed_fd;		/* -u delta: the file it replaces, read by
				   the prefix job to seed the part file; -1 */
	int delta;		/* its chunks are the old copy's, not a
				   partial file's (messages) */
	struct lc_sink *sink;
};

struct lc_zinf;		/* zframe.h */

enum lc_recv_state {
	LC_RV_WAIT,		/* no connection yet */
	LC_RV_RECV,		/* waiting for bytes */
	LC_RV_QUOTA,		/* waiting for a buffer */
	LC_RV_END,		/* got END */
	LC_RV_DEAD,		/* lost */
};

/* One data stream's receiving end (receiver.c). */
struct lc_receiver {
	struct lc_sink *sink;	/* setup */
	uint32_t idx;		/* setup */
	pthread_t thread;	/* main */
	int started;		/* main */
	int listen_fd;		/* setup; owned by the sink, polled by the
				   acceptor, closed by main in free */
	uint16_t port;		/* setup */
	struct lc_pool *pool;	/* setup: this stream's quota */
	struct lc_zinf *zinf;	/* -c: the receiver thread's inflater and
				   input buffer (made at the first compressed
				   frame, freed as the thread ends) */
	/*
	 * mu: handed over by an auth thread (has_conn 0 -> 1), shut down by
	 * main (stall, abort) and closed by main after the receiver thread
	 * has been joined.  The receiver thread reads and writes through it
	 * without the lock once has_conn is 1: it owns the socket.
	 */
	struct lc_conn conn;
	int has_conn;		/* mu */
	atomic_int state;	/* enum lc_recv_state (receiver; main reads) */
	atomic_uint_fast64_t last_rx_ms;	/* the connection's reads */
	atomic_bool stalled;	/* the main thread gave up on it */
	int has_last;		/* last whole block received (the receiver
				   thread; main reads it after the join) */
	uint32_t last_file;
	uint64_t last_off;
	uint32_t losses;	/* times this stream broke (main thread) */
};

/* One connection in its handshake (acceptor.c). */
struct lc_auth {
	struct lc_sink *sink;
	pthread_t thread;	/* acceptor thread */
	int used;		/* acceptor thread */
	atomic_bool finished;	/* set by the auth thread as it exits */
	uint32_t listener;	/* the port it came in on, or (reverse) the
				   stream it dials (acceptor) */
	int dial;		/* reverse: the thread dials first */
	int dial_failed;	/* reverse: the dial failed (auth thread) */
	struct lc_err dial_err;	/* reverse: why (auth thread) */
	struct lc_conn conn;	/* the auth thread's; closed under mu, shut
				   down by the acceptor under mu */
	char host[LC_PEER_MAX];	/* the peer's address (acceptor) */
	uint64_t t0;		/* accepted at (lc_now_ms; acceptor) */
	atomic_bool evicted;	/* dropped for room (acceptor sets) */
	int handed;		/* got through (auth thread; the acceptor
				   reads it after the join) */
};

/*
 * Tree entries (sink_tree.c): directories made or kept, --owner's names,
 * the free space a tree's files need.  Main thread; the dirs job reads
 * dirs once every entry is done.
 */
struct lc_sink_tree {
	struct lc_tdir *cur_dir;	/* the last directory used */
	struct lc_sdir *dirs;	/* directories to finish last */
	size_t ndirs;
	size_t dirs_cap;
	int dirs_state;		/* 0, 1 job queued, 2 done */
	size_t *open;		/* dirs still being announced, outermost
				   first (indexes of dirs; a path's depth) */
	size_t nopen;
	size_t open_cap;
	struct lc_sink_idmap {	/* --owner, the last name mapped */
		int valid;
		uint32_t id;
		char name[LC_OWNER_MAX];
	} map_user, map_group;
	int unknown_warned;	/* --owner: a name not known here seen */
	uint64_t space_avail;	/* free at the first file (trees) */
	uint64_t space_need;	/* what the files announced need */
	int space_known;
};

/*
 * A pipe target (sink_pipe.c; SINK_TARGET LC_TGT_STDOUT or
 * LC_TGT_PROGRAM): one file, written in order to fd (main; the file's
 * part owns it once it is announced).  prog_pid is the -N o program
 * (under mu: abort kills it; the finish job waits for it), or -1.
 */
struct lc_sink_pipe {
	int fd;
	pid_t prog_pid;
	char prog_cmd[LC_PATH_MAX];
};

/* Finishing batches (sink_finish.c).  Main thread. */
struct lc_sink_fin {
	struct lc_sfile **wait;	/* complete files waiting to finish */
	size_t n;
	size_t cap;
	int busy;		/* a finish batch job is queued */
	struct lc_fin_batch *batch;	/* that batch, freed here */
};

/* Memory and quotas (sink_mem.c). */
struct lc_sink_mem {
	/*
	 * What the memory bound leaves beyond every stream's starting quota
	 * (lc_sink_limits), in bytes: one budget for quota growth and for
	 * holes waiting in the writers (sink_mem.c, "Memory").  A receiver
	 * that waits for a buffer while its file's writer is starved (the
	 * next block is on a slower stream, not a slow disk) takes a block
	 * of it and grows its quota by one, up to quota_max, if its path
	 * is one where more buffers shorten the waits (a long round trip or
	 * losses, lc_sink_path_pays); a hole that has to wait takes
	 * LC_WFILE_HOLE_COST (writer.c) until it is written.  Taken and
	 * given back with atomic operations.
	 */
	atomic_int_fast64_t left;
	uint32_t quota_max;	/* setup */
	atomic_bool hole_wait_said;	/* -v: said once that holes wait */
	atomic_uint grow_held;	/* growths refused on a short clean path */
	atomic_uint path_rtt_us;	/* -v: the last round trip seen there */
	atomic_uint grow_why[3];	/* -v: growths let, by LC_GROW_* */
	atomic_uint grow_rtt_us;	/* -v: the path of the last one let */
	atomic_uint grow_ooo;
	/*
	 * Head-of-line blocking, measured (receiver.c): receivers waiting
	 * for a buffer of their quota.  Under hol_mu; reported with -v at
	 * the end.
	 */
	pthread_mutex_t hol_mu;
	uint32_t hol_waiting;
	uint64_t quota_wait_ns;	/* summed over the receivers */
};

/* Accepting (acceptor.c): who may become a data stream. */
struct lc_sink_accept {
	pthread_t thread;	/* main */
	int started;		/* main */
	struct lc_wake wake;	/* setup; signalled by any thread */
	struct lc_auth auth[LC_MAX_PENDING_AUTH];	/* the acceptor's */
	uint32_t window;	/* setup */
	uint8_t *key;		/* setup: LC_KEY_LEN bytes, secmem.h */
	struct lc_tls *tls;	/* setup; NULL: --no-encrypt */
	/*
	 * Reverse (LISTEN flag LC_XFER_REVERSE): no listening sockets; DIAL
	 * gives the source's address and ports (setup, before the acceptor
	 * starts) and the acceptor dials each stream that has no connection.
	 */
	int dial_mode;		/* setup */
	char dial_addr[LC_ADDR_MAX];	/* setup */
	uint16_t dial_ports[LC_MAX_STREAMS];	/* setup */
};

/* Receiving (receiver.c): the streams' receiving ends. */
struct lc_sink_recv {
	struct lc_receiver rv[LC_MAX_STREAMS];
	uint32_t ended;		/* main: receivers that got END */
	uint32_t stall_s;	/* setup */
	uint32_t quiet_s;	/* setup: all streams silent -> reconnect */
	atomic_uint_fast64_t bytes;	/* receivers add: received */
};

struct lc_sink {
	struct lc_role_port port;	/* read-only */
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* has_conn set (receivers wait); abort */
	struct lc_jobq *jobs;	/* main */
	int target_set;		/* main */
	struct lc_target tgt;	/* where files go (partfile.h): main, in
				   SINK_TARGET; jobs use dir_fd */
	struct lc_takeover *takeover;	/* main: answers a later attempt of
					   this run (takeover.h), or NULL */
	/*
	 * Files in flight (sink_file.c), by id: at most files_max
	 * (SINK_TARGET's inflight, granted) records, each freed when it is
	 * done, whatever their ids (one below lo + files_max or far
	 * above it).  Every id up to files_total not in it is done.  Under
	 * mu (receivers look writers up).
	 */
	struct lc_idmap files;
	uint32_t files_max;
	uint32_t lo;		/* lowest id not yet freed (files_total + 1:
				   none); main writes it under mu */
	uint32_t files_total;	/* main */
	uint32_t files_done;	/* main */
	size_t delta_mem;	/* main: chunk hashes held for -u deltas in
				   flight (bounded, sink_delta.c) */
	uint32_t lw_file;	/* low-water mark: lowest incomplete file */
	int listening;		/* main */
	uint32_t nstreams;	/* setup (LISTEN), as granted */
	uint32_t block;		/* setup */
	uint32_t quota;		/* setup */
	uint32_t flags;		/* setup */
	uint32_t csum;		/* setup */
	int done_sent;		/* main */
	int nomore;		/* main: SINK_NOMORE came: no more FILE, and
				   SINK_DONE does not wait for END */
	atomic_uint_fast64_t written;	/* writers add: on disk (holes
					   whole), what PROGRESS reports */
	atomic_bool stopping;	/* STOP: receivers end */
	int stopped;		/* main: STOPPED sent, events ignored */
	/* each feature's own state, in its own file */
	struct lc_sink_tree tree;
	struct lc_sink_pipe pipe;
	struct lc_sink_fin fin;
	struct lc_sink_mem mem;
	struct lc_sink_accept acc;
	struct lc_sink_recv recv;
	struct lc_sink_del {	/* --delete (sink_delete.c), main */
		struct lc_nameset *listed;	/* the names FILE carried */
		int scanned;	/* a DEL_SCAN answered */
	} del;
};

/* 1 once receivers should end (the agent stops, or the controller's STOP). */
static inline int
lc_sink_halted(struct lc_sink *s)
{
	return lc_role_canceled(&s->port) || atomic_load(&s->stopping);
}

struct lc_event;		/* role.h */
struct lc_msg_dial;
struct lc_msg_file;
struct lc_msg_file_abort;
struct lc_msg_file_len;
struct lc_msg_file_sum;
struct lc_msg_listen;
struct lc_msg_prefix_match;
struct lc_msg_sink_target;

/* Finish batches (and dirs) this big are made durable with syncfs(2). */
#define LC_SINK_SYNCFS_MIN 16
/* The least a finish batch may take when more wait (sink_finish.c). */
#define LC_SINK_FIN_BATCH_MIN 64

/*
 * sink.c, the role.  Main thread: SINK_DONE once every stream has ended
 * (or, after SINK_NOMORE, without waiting for that), every file is done,
 * no batch is finishing and (a tree) the directories have their modes
 * and times; until then 0 and nothing sent.  0 or an error from the
 * control channel or the job queue.
 */
int lc__sink_maybe_done(struct lc_sink *s);

/*
 * sink_file.c, files in flight (main thread unless said).
 *
 * lc__sink_table_put: f (the next id, within the grant's count of records
 * in flight) into the table;
 * -LC_ERR_PROTO for an id out of order or a slot still taken.
 * lc__sink_table_get: file id's record, or NULL (takes mu).
 * lc__sink_sfile_free: a record and all it holds (NULL is fine); its
 * writer is closed before its descriptor.
 * lc__sink_retire: f is done: take it out of the table and free it (f is
 * invalid after the call), moving lo on.
 * lc__sink_start_file: make f's writer and answer FILE_READY; a file with
 * nothing to receive goes on to finish.  0, or an error in e.
 * lc__sink_file, lc__sink_file_sum, lc__sink_file_abort: the messages
 * FILE, FILE_SUM, FILE_ABORT.  0, or an error in e (LC_ERR_PROTO for what
 * an honest controller never sends).
 */
int lc__sink_table_put(struct lc_sink *s, struct lc_sfile *f);
struct lc_sfile *lc__sink_table_get(struct lc_sink *s, uint32_t id);
void lc__sink_sfile_free(struct lc_sfile *f);
void lc__sink_retire(struct lc_sink *s, struct lc_sfile *f);
int lc__sink_start_file(struct lc_sink *s, struct lc_sfile *f,
    struct lc_err *e);
int lc__sink_file(struct lc_sink *s, const struct lc_msg_file *m,
    struct lc_err *e);
int lc__sink_file_sum(struct lc_sink *s, const struct lc_msg_file_sum *m,
    struct lc_err *e);
int lc__sink_file_abort(struct lc_sink *s, const struct lc_msg_file_abort *m,
    struct lc_err *e);

/*
 * Tree: entry m is announced; the directories of tree.open it is not in
 * are complete as far as the listing goes (their end is m's id).
 */
void lc__sink_dirs_close(struct lc_sink *s, const struct lc_msg_file *m);

/*
 * A tree that did not finish (main, its receivers and jobs stopped): the
 * directories whose every entry is done get their modes and times now,
 * deepest first, as the dirs job would have; the others keep 0700 (what
 * is still to be written into them) until a run completes.
 */
void lc__sink_dirs_partial(struct lc_sink *s);

/*
 * Part files of files still receiving that a failed copy does not keep:
 * new empty ones (nothing to resume from), or with all set every one
 * (no -a and the disk is full).  Each is unlinked, its name forgotten
 * and its descriptor left to lc__sink_sfile_free (a receiver may still
 * write through it: into a removed file).  Their number.
 */
unsigned lc__sink_drop_parts(struct lc_sink *s, int all);

/*
 * A write of file id found the file system full (why): the error names
 * its part file, relative to the target, and its size; without -a it and
 * the other part files of this copy are removed (the space is given
 * back, as rsync does without --partial), with -a kept for a resume.
 * Always an error (LC_ERR_NOSPACE) in e.
 */
int lc__sink_nospace(struct lc_sink *s, uint32_t id, const struct lc_err *why,
    struct lc_err *e);

/*
 * The writer of file id (any thread, takes mu) with a reference for the
 * caller, who drops it with lc_wfile_unref; NULL while the file is
 * unknown or not yet receiving.  The file may be finished or dropped
 * (and its record freed) while the caller holds it: the writer is then
 * closed and refuses every block (writer.h, Lifetime).
 */
struct lc_wfile *lc_sink_writer(struct lc_sink *s, uint32_t id);

/*
 * sink_tree.c, tree entries (main thread unless said).
 *
 * lc__sink_dir: the tree's directory rel with a new reference in *out
 * (drop it with lc__sink_tdir_put, which takes NULL too).
 * lc__sink_attrs: what entry m keeps here (mode, times, as root its
 * owner, --owner's names mapped to this host's ids).
 * lc__sink_note_dir: remember directory m (made: 1 if made here) for its
 * mode and times at the end.
 * lc__sink_space: is there room for need more bytes of f (the target
 * file alone, or what every file so far needs)?  0, or LC_ERR_NOSPACE.
 * lc__sink_dirs_job: the job (arg: the sink) that gives the directories
 * their modes and times, deepest first, and posts LC_EV_DIRS_DONE.
 * lc__sink_tree_free: free what the tree state holds (free).
 */
int lc__sink_dir(struct lc_sink *s, const char *rel, struct lc_tdir **out,
    struct lc_err *e);
void lc__sink_tdir_put(struct lc_tdir *d);
void lc__sink_attrs(struct lc_sink *s, const struct lc_msg_file *m,
    struct lc_attrs *a);
int lc__sink_note_dir(struct lc_sink *s, const struct lc_msg_file *m,
    int made);
int lc__sink_space(struct lc_sink *s, struct lc_sfile *f, uint64_t need,
    struct lc_err *e);
void lc__sink_dirs_job(void *arg);
void lc__sink_tree_free(struct lc_sink *s);

/*
 * sink_delete.c, --delete (main thread).
 *
 * lc__sink_note_name: keep a listed name (LC_TGT_DELETE only).
 * lc__sink_del_scan: DEL_SCAN; lc__sink_delete: DELETE; 0 or an error
 * in e (a protocol error: the answer says what failed on disk).
 * lc__sink_del_free: free the names (free).
 */
struct lc_nameset;
struct lc_msg_del_scan;
struct lc_msg_delete;
int lc__sink_note_name(struct lc_sink *s, const char *name);
int lc__sink_del_scan(struct lc_sink *s, const struct lc_msg_del_scan *m,
    struct lc_err *e);
int lc__sink_delete(struct lc_sink *s, const struct lc_msg_delete *m,
    struct lc_err *e);
void lc__sink_del_free(struct lc_sink *s);

/*
 * sink_pipe.c, pipe targets and pipes.
 *
 * lc__sink_pipe_target: SINK_TARGET for stdout or a -N o program.
 * lc__sink_pipe_file: FILE, the one file of such a target.
 * lc__sink_file_len: FILE_LEN, a pipe input's length once it ended.
 * All three: 0, or an error in e.
 * lc__sink_pipe_wait (the finish job): wait for the target program to
 * exit; 0, or an error in e if it failed.
 * lc__sink_pipe_why: a broken pipe (e, LC_ERR_PIPE) to a target program
 * that failed becomes its failure, with its exit status (LC_ERR_PROGRAM).
 * lc__sink_pipe_kill_locked (under mu): signal the program, if any.
 * lc__sink_pipe_free: close the pipe and reap a program (free).
 */
int lc__sink_pipe_target(struct lc_sink *s,
    const struct lc_msg_sink_target *m, struct lc_err *e);
int lc__sink_pipe_file(struct lc_sink *s, const struct lc_msg_file *m,
    struct lc_err *e);
int lc__sink_file_len(struct lc_sink *s, const struct lc_msg_file_len *m,
    struct lc_err *e);
int lc__sink_pipe_wait(struct lc_sink *s, struct lc_err *e);
void lc__sink_pipe_why(struct lc_sink *s, struct lc_err *e);
void lc__sink_pipe_kill_locked(struct lc_sink *s, int sig);
void lc__sink_pipe_free(struct lc_sink *s);

/*
 * sink_resume.c, resume (main thread).
 *
 * lc__sink_resume_prepare: f keeps *kept bytes of a partial file: its
 * chunks for the prefix job, at least base bytes, doubled until there are
 * at most max_chunks, hashes of hlen bytes (or, when they cannot be
 * hashed, *kept = 0 and the file starts over).  0, or an error in e.
 * lc__sink_delta_prepare: -u: f replaces an existing regular file (of
 * sink_delta.c): when it is worth it, f->seed_fd is set, *kept is what
 * the part file will hold of it and the chunks are set up as for a
 * resume; else *kept stays 0 and the file is sent whole.  0, or an error.
 * lc__sink_resume_start: queue the prefix job for f.
 * lc__sink_send_prefix: the job is done: FILE_PREFIX (or, with 16-byte
 * hashes, FILE_HASHES frames) to the source.
 * lc__sink_prefix_match: PREFIX_MATCH, then the seed job.
 */
int lc__sink_resume_prepare(struct lc_sink *s, struct lc_sfile *f,
    uint64_t *kept, uint32_t base, uint32_t max_chunks, uint32_t hlen,
    struct lc_err *e);
int lc__sink_delta_prepare(struct lc_sink *s, struct lc_sfile *f,
    uint64_t *kept, struct lc_err *e);
int lc__sink_resume_start(struct lc_sink *s, struct lc_sfile *f);
/*
 * sink_delta.c.  lc__sink_delta_seed (the prefix job): copy the file f
 * replaces into its part file (f->seed_fd is closed).  lc__sink_delta_log
 * (main): -v line for a delta at PREFIX_MATCH.  lc__sink_delta_free
 * (main, f freed): its hashes leave the bound.
 */
int lc__sink_delta_seed(struct lc_sfile *f, struct lc_err *e);
void lc__sink_delta_log(const struct lc_sfile *f, uint64_t match,
    uint64_t again);
void lc__sink_delta_free(struct lc_sfile *f);
int lc__sink_send_prefix(struct lc_sink *s, struct lc_sfile *f);
int lc__sink_prefix_match(struct lc_sink *s,
    const struct lc_msg_prefix_match *m, struct lc_err *e);

/*
 * sink_finish.c, finishing batches (main thread).
 *
 * lc__sink_maybe_finish: f to the next batch once it is written and its
 * checksum known (else nothing).  lc__sink_file_finished: the finish job
 * finished f (LC_EV_FILE_DONE ev): FILE_DONE.  lc__sink_batch_done: the
 * batch is done (LC_EV_BATCH_DONE): the next one starts.  0 or an error.
 */
int lc__sink_maybe_finish(struct lc_sink *s, struct lc_sfile *f);
int lc__sink_file_finished(struct lc_sink *s, struct lc_sfile *f,
    const struct lc_event *ev);
int lc__sink_batch_done(struct lc_sink *s);

/*
 * sink_mem.c, memory and quotas.
 *
 * lc__sink_mem_setup (main, LISTEN): streams, block size and quota within
 * the memory bound, and what it leaves for quotas to grow into.
 * lc__sink_quota_wait (a receiver): it starts (1) or stops (0) waiting
 * for a quota buffer.  lc__sink_quota_grow (a receiver): one more block
 * for rv's quota, from mem.left: 1, or 0 if none is left.
 * lc__sink_hol_report (main, at the end): -v, the head-of-line measure.
 */
void lc__sink_mem_setup(struct lc_sink *s, const struct lc_msg_listen *m);
void lc__sink_quota_wait(struct lc_sink *s, int waiting);
int lc__sink_quota_grow(struct lc_sink *s, struct lc_receiver *rv);

/*
 * Whether more buffers pay on a stream's path: LC_GROW_LONG (a round trip
 * of 2 ms or more) or LC_GROW_LOSSY (8 segments or more out of order,
 * and one in 100 received or more where the kernel counts them), else
 * LC_GROW_HELD (a short clean path: the CPU, not the path, is late).
 */
enum { LC_GROW_LONG, LC_GROW_LOSSY, LC_GROW_NOT_TCP, LC_GROW_HELD };
int lc__sink_grow_pays(const struct lc_sock_path *p);
void lc__sink_hol_report(struct lc_sink *s);

/*
 * The receive buffer of each data stream when LISTEN leaves it to the
 * sink (window 0): a fixed min(rmem_max, tcp_rmem's max, 16 MiB) where
 * that adds up to at least 32 MiB over the streams, else 0 (the kernel
 * autotunes).  Autotuning opens a new connection's window at about 64-84
 * KiB and widens it only as reads show the application keeping up, so a
 * fresh stream over a long path spends its first round trips there; a
 * fixed buffer lets the window follow the sender's slow start, but caps
 * it, so it is taken only where the cap is no lower than what
 * autotuning could reach for these streams at the path rates lanecp is
 * built for (the sum: 2.5 Gbit/s at 100 ms), and never above autotuning's
 * own ceiling (tcp_rmem), so a stalled sink can queue no more in the
 * kernel than it could before.  The data path over SSH (LC_XFER_LOOPBACK:
 * listeners on loopback): 0.
 */
#define LC_RCVBUF_FIXED_MAX (16u << 20)
#define LC_RCVBUF_FIXED_SUM (32u << 20)
uint32_t lc__sink_rcvbuf(uint32_t streams, uint64_t rmem_max,
    uint64_t tcp_rmem_max, int loopback);

/*
 * acceptor.c, accepting (main thread).
 *
 * lc__sink_accept_start: start the acceptor thread, which polls the
 * listening sockets (or, reverse, dials) until *port.cancel and joins
 * its handshakes before it ends.  lc__sink_dial: DIAL (reverse), then
 * start it.  0, or an error in e.  lc__sink_accept_join: join it (free).
 */
int lc__sink_accept_start(struct lc_sink *s, struct lc_err *e);
int lc__sink_dial(struct lc_sink *s, const struct lc_msg_dial *m,
    struct lc_err *e);
void lc__sink_accept_join(struct lc_sink *s);

/*
 * receiver.c, receiving (main thread).
 *
 * lc__sink_recv_start: a receiver thread per stream; each waits for its
 * connection, receives until END, and posts LC_EV_RECEIVER_DONE,
 * LC_EV_STREAM_LOST or LC_EV_ERROR (none when canceled).
 * lc__sink_stream_lost: stream i broke (why): join its receiver, start a
 * fresh one, and tell the source (STREAM_LOST); an error once it broke
 * too often.  lc__sink_recv_tick: drop stalled streams, or every stream
 * when the path is silent.  lc__sink_recv_abort_locked (under mu): shut
 * the connections down and wake quota waiters.  lc__sink_recv_join: join
 * the receivers.  lc__sink_recv_free: close connections and listening
 * sockets, free the pools (after the join).
 */
int lc__sink_recv_start(struct lc_sink *s, struct lc_err *e);
int lc__sink_stream_lost(struct lc_sink *s, uint32_t i,
    const struct lc_err *why, struct lc_err *e);
void lc__sink_recv_tick(struct lc_sink *s, uint64_t now_ms);
void lc__sink_recv_abort_locked(struct lc_sink *s);
void lc__sink_recv_join(struct lc_sink *s);
void lc__sink_recv_free(struct lc_sink *s);

#endif
