/*
 * Sink role: resolves the target, listens for the data streams, has their
 * blocks received and written in order, and finishes files (checksum,
 * fsync, rename into place).  This file is the role itself: its state
 * machine (control messages, worker events, the tick) and its jobs.
 *
 * Threads (each in its own file):
 *   acceptor   acceptor.c: takes connections on the N listening sockets
 *              and hands each, after a handshake in its own short-lived
 *              auth thread, to the receiver of its stream.
 *   receiver   receiver.c: one per stream, frames -> quota buffers -> the
 *              file's ordered writer (writer.h).  A broken or stalled
 *              stream is joined here and a fresh receiver started for the
 *              source's new connection (lc_sink_stream_lost).
 *   jobs       one thread (jobq.h): hashes partial files for a resume and
 *              finishes complete files (checksum compare, then
 *              lc_part_finalize: fsync, rename).
 * The host's main thread runs everything else here; ops->tick watches for
 * stalled streams once a second and sends the heartbeat with the
 * low-water mark that lets the source forget blocks that are on disk.
 * Workers report through lc_role_post() only.  Which thread owns which
 * field, and which lock guards it, is in sink_int.h.
 *
 * Descriptors: the target directory (tgt.dir_fd) and the listening
 * sockets are the sink's, closed in free; a file's descriptor is its
 * lc_sfile's until finalize closes it; a data connection is its
 * receiver's.
 */
#include "sink_int.h"

#include "lanecp/clock.h"
#include "lanecp/log.h"
#include "lanecp/path.h"
#include "lanecp/parse.h"
#include "lanecp/program.h"
#include "lanecp/secmem.h"
#include "lanecp/takeover.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/crypto.h>

/*
 * Memory.  The receive buffers are the sink's only large allocation:
 * streams x (quota + 1 spare) x block, and with -c (LC_XFER_COMPRESS) one
 * more block per stream, each receiver's input buffer for compressed
 * payloads (the inflate state itself, about 44 KiB a stream, fits in the
 * allowance below).  They get what --max-memory
 * (default 128 MiB) leaves after a fixed allowance for the process itself
 * (code and libraries, control buffers, TLS state, threads, hashing), and
 * the quota aims at LC_SINK_QUOTA_TARGET as it always has, so the default
 * copy uses what it did before.  What the buffers leave of the bound
 * (mem_left) is one budget for two things: quotas that grow (a block at a
 * time) and holes that wait in the writers (LC_WFILE_HOLE_COST each,
 * given back as they are written); growth leaves LC_SINK_HOLE_RESERVE of
 * it to the holes.  A hole finding the budget spent waits for its writer
 * to move (receiver.c), like a block finding its quota full.
 */
#define LC_SINK_MEM_RESERVE (16u << 20)
#define LC_SINK_HOLE_RESERVE (1u << 20)	/* 16384 waiting holes */
#define LC_SINK_QUOTA_TARGET (32u << 20)
#define LC_MIN_QUOTA 2
#define LC_MAX_QUOTA 16
/*
 * Files in flight: ids come in order, at most SINK_TARGET's inflight
 * beyond the lowest one not yet done, which is at most this (the ring of
 * files is 8 bytes a slot).
 */
#define LC_SINK_MAX_FILES 65536u
#define LC_MAX_STREAM_LOSSES 8	/* per stream: then the copy fails */
/* finish batches this big are made durable with syncfs(2), not fsyncs */
#define LC_SINK_SYNCFS_MIN 16

static int
lc_sink_new(const struct lc_role_port *port, void **out)
{
	struct lc_sink *s;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -LC_ERR_NOMEM;
	s->port = *port;
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->hol_mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	atomic_init(&s->bytes, 0);
	atomic_init(&s->written, 0);
	atomic_init(&s->stopping, false);
	atomic_init(&s->mem_left, 0);
	atomic_init(&s->hole_wait_said, false);
	s->accept_wake.rfd = s->accept_wake.wfd = -1;
	s->tgt.dir_fd = -1;
	s->pipe_fd = -1;
	s->prog_pid = -1;
	s->lw_file = 1;
	s->lo = 1;
	for (uint32_t i = 0; i < LC_MAX_STREAMS; i++) {
		s->recv[i].listen_fd = -1;
		s->recv[i].conn.fd = -1;
		atomic_init(&s->recv[i].state, LC_RV_WAIT);
		atomic_init(&s->recv[i].last_rx_ms, 0);
		atomic_init(&s->recv[i].stalled, false);
	}
	if ((s->jobs = lc_jobq_new("lc-sink-jobs")) == NULL) {
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->mu);
		free(s);
		return -LC_ERR_NOMEM;
	}
	*out = s;
	return 0;
}


/* ---- target and files (the file system side is in partfile.c) ---- */

/*
 * A standalone agent writing part files under a transfer id answers a
 * later attempt of the same run that needs one of them (takeover.h).  Not
 * a pipe target (no part files) nor the in-process agent (its part files
 * are the controller's, which is never stale without the agent).  Without
 * the socket the copy goes on: a later attempt then cannot take over.
 */
static void
lc_sink_serve_takeover(struct lc_sink *s, const struct lc_msg_sink_target *m)
{
	const struct lc_confine *c = s->port.conf;
	struct lc_err e;

	if (s->port.set.local || s->port.set.transfer[0] == '\0' ||
	    (m->flags & (LC_TGT_STDOUT | LC_TGT_PROGRAM)) ||
	    !lc_takeover_key_set(m->takeover))
		return;
	lc_err_clear(&e);
	if (lc_takeover_serve(m->takeover, c->root_fd >= 0 ? c->root : "",
	    &s->takeover, &e) != 0)
		lc_log_warn("%s; a later attempt cannot take over this one's "
		    "partial files", e.msg);
}

/*
 * A pipe target: our stdout (a local agent only: a remote agent's stdout
 * is its control channel) or a -N o program's stdin (never for a
 * restricted agent: --restrict confines paths, and a program can do
 * anything).  No file system, no part file: one file, written in order.
 */
static int
lc_sink_pipe_target(struct lc_sink *s, const struct lc_msg_sink_target *m,
    struct lc_err *e)
{
	int prog = (m->flags & LC_TGT_PROGRAM) != 0;
	int r;

	if ((m->flags & (LC_TGT_STDOUT | LC_TGT_PROGRAM)) ==
	    (LC_TGT_STDOUT | LC_TGT_PROGRAM) || (m->flags & (LC_TGT_RESUME |
	    LC_TGT_TREE | LC_TGT_WANT_DIR)) != 0)
		return lc_err_set(e, LC_ERR_PROTO, "SINK_TARGET: a pipe target "
		    "takes one file, no resume");
	s->tgt.conf = s->port.conf;
	s->tgt.flags = m->flags;
	s->tgt.umask = s->port.set.umask;
	if (!prog) {
		if (!s->port.set.local || strcmp(m->target, "-") != 0)
			return lc_err_set(e, LC_ERR_DENIED, "'-' (stdout) is a "
			    "local target only: a remote agent's stdout is its "
			    "control channel");
		if ((s->pipe_fd = fcntl(1, F_DUPFD_CLOEXEC, 3)) < 0)
			return lc_err_sys(e, LC_ERR_IO, errno, "stdout");
		snprintf(s->tgt.path, sizeof(s->tgt.path), "stdout");
		return 0;
	}
	if (s->port.conf->root_fd >= 0)
		return lc_err_set(e, LC_ERR_DENIED, "this agent is restricted "
		    "(--restrict %s): it runs no -N programs",
		    s->port.conf->root);
	snprintf(s->prog_cmd, sizeof(s->prog_cmd), "%s", m->target);
	/* a remote agent's stdout is the control channel: stderr instead */
	if ((r = lc_prog_start(s->prog_cmd, 0, s->port.set.local ? 1 : 2,
	    &s->prog_pid, &s->pipe_fd, e)) != 0)
		return r;
	lc_log_verbose("target program '%s' started (pid %ld)", s->prog_cmd,
	    (long)s->prog_pid);
	snprintf(s->tgt.path, sizeof(s->tgt.path), "target program '%.200s'",
	    s->prog_cmd);
	return 0;
}

static int
lc_sink_target(struct lc_sink *s, const struct lc_msg_sink_target *m,
    struct lc_err *e)
{
	struct lc_msg_target_ok ok;
	char target[LC_PATH_MAX];
	int r;

	if (s->target_set)
		return lc_err_set(e, LC_ERR_PROTO, "second SINK_TARGET");
	if (m->inflight == 0 || m->inflight > LC_SINK_MAX_FILES)
		return lc_err_set(e, LC_ERR_PROTO, "SINK_TARGET: %u files in "
		    "flight asked for (1 to %u)", m->inflight,
		    LC_SINK_MAX_FILES);
	/*
	 * A restricted agent's client may be anyone with the key: no more
	 * file records (and open part files) than an honest controller
	 * asks for.
	 */
	if (s->port.conf->root_fd >= 0 && m->inflight > LC_FILES_INFLIGHT)
		return lc_err_set(e, LC_ERR_PROTO, "SINK_TARGET: %u files in "
		    "flight asked for; a restricted agent takes at most %u",
		    m->inflight, LC_FILES_INFLIGHT);
	s->files_max = m->inflight;
	if ((s->files = calloc(s->files_max, sizeof(*s->files))) == NULL)
		return -LC_ERR_NOMEM;
	if (m->flags & (LC_TGT_STDOUT | LC_TGT_PROGRAM)) {
		/* a command line or "-", not a path: no ~ to expand */
		r = lc_sink_pipe_target(s, m, e);
	} else {
		r = lc_confine_user_path(s->port.conf, m->target,
		    s->port.set.tilde, target, sizeof(target), e);
		if (r == 0)
			r = lc_target_resolve(&s->tgt, s->port.conf, target,
			    m->flags, s->port.set.umask, e);
	}
	if (r != 0)
		return r;
	memcpy(s->tgt.transfer, s->port.set.transfer, sizeof(s->tgt.transfer));
	memcpy(s->tgt.takeover, m->takeover, sizeof(s->tgt.takeover));
	lc_sink_serve_takeover(s, m);
	s->target_set = 1;
	if ((m->flags & LC_TGT_OWNER) && geteuid() != 0)
		lc_log_warn("--owner: not running as root here, so owner and "
		    "group are not kept");
	memset(&ok, 0, sizeof(ok));
	ok.is_dir = (uint8_t)s->tgt.is_dir;
	snprintf(ok.resolved, sizeof(ok.resolved), "%s", s->tgt.path);
	return lc_msg_put_target_ok(s->port.out, &ok);
}

/* Put f (the next id, within the window) in the table. */
static int
lc_sink_table_put(struct lc_sink *s, struct lc_sfile *f)
{
	struct lc_sfile **slot;
	int r = 0;

	if (f->id != s->files_total + 1 || f->id - s->lo >= s->files_max)
		return -LC_ERR_PROTO;
	pthread_mutex_lock(&s->mu);
	slot = &s->files[f->id % s->files_max];
	if (*slot != NULL)
		r = -LC_ERR_PROTO;
	else
		*slot = f;
	pthread_mutex_unlock(&s->mu);
	if (r == 0)
		s->files_total++;
	return r;
}

/* Under mu. */
static struct lc_sfile *
lc_sink_table_get_locked(struct lc_sink *s, uint32_t id)
{
	struct lc_sfile *f;

	if (s->files == NULL || id == 0)
		return NULL;
	f = s->files[id % s->files_max];
	return f != NULL && f->id == id ? f : NULL;
}

static struct lc_sfile *
lc_sink_table_get(struct lc_sink *s, uint32_t id)
{
	struct lc_sfile *f;

	pthread_mutex_lock(&s->mu);
	f = lc_sink_table_get_locked(s, id);
	pthread_mutex_unlock(&s->mu);
	return f;
}

/* A receiver's lookup (sink_int.h): a reference of its own. */
struct lc_wfile *
lc_sink_writer(struct lc_sink *s, uint32_t id)
{
	struct lc_wfile *wf = NULL;
	struct lc_sfile *f;

	pthread_mutex_lock(&s->mu);
	if ((f = lc_sink_table_get_locked(s, id)) != NULL && f->wf != NULL)
		wf = lc_wfile_ref(f->wf);
	pthread_mutex_unlock(&s->mu);
	return wf;
}

static void
lc_tdir_put(struct lc_tdir *d)
{
	if (d == NULL || --d->refs > 0)
		return;
	close(d->fd);
	free(d);
}

static void
lc_sfile_free(struct lc_sfile *f)
{
	if (f == NULL)
		return;
	/* closed before the descriptor is: a receiver may hold a reference */
	lc_wfile_free(f->wf);
	lc_csum_free(f->csum);
	free(f->prefix);
	free(f->spans);
	lc_part_close(&f->p);
	lc_tdir_put(f->dir);
	free(f);
}

/*
 * Free the done files at the low end of the window (main thread), which
 * lets the controller announce more.
 */
static void
lc_sink_retire(struct lc_sink *s)
{
	struct lc_sfile *f;

	for (;;) {
		pthread_mutex_lock(&s->mu);
		f = lc_sink_table_get_locked(s, s->lo);
		if (f == NULL || f->state != LC_SF_DONE) {
			pthread_mutex_unlock(&s->mu);
			return;
		}
		s->files[s->lo % s->files_max] = NULL;
		s->lo++;
		pthread_mutex_unlock(&s->mu);
		lc_sfile_free(f);
	}
}

/*
 * The directory rel of the tree (a new reference in *out).  Files come
 * in listing order, so the last one used is usually the one asked for.
 */
static int
lc_sink_dir(struct lc_sink *s, const char *rel, struct lc_tdir **out,
    struct lc_err *e)
{
	struct lc_tdir *d;
	size_t n = strlen(rel);
	int fd, r;

	*out = NULL;
	if (s->cur_dir != NULL && strcmp(s->cur_dir->rel, rel) == 0) {
		s->cur_dir->refs++;
		*out = s->cur_dir;
		return 0;
	}
	if ((r = lc_tree_open_dir(&s->tgt, rel, &fd, e)) != 0)
		return r;
	if ((d = malloc(sizeof(*d) + n + 1)) == NULL) {
		close(fd);
		return -LC_ERR_NOMEM;
	}
	d->fd = fd;
	d->refs = 2;	/* the cache's and the caller's */
	memcpy(d->rel, rel, n + 1);
	lc_tdir_put(s->cur_dir);
	s->cur_dir = d;
	*out = d;
	return 0;
}

/* ---- jobs (the sink's job thread) ---- */

/* Resume: hash the partial file in chunks for the source to compare. */
static void
lc_sink_prefix_job(void *arg)
{
	struct lc_sfile *f = arg;
	struct lc_sink *s = f->sink;
	struct lc_err e;

	lc_err_clear(&e);
	for (uint32_t i = 0; i < f->nchunks; i++) {
		uint64_t off = (uint64_t)i * f->chunk;
		uint64_t len = f->prefix_len - off < f->chunk ?
		    f->prefix_len - off : f->chunk;
		if (lc_role_canceled(&s->port))
			return;
		if (lc_prefix_hash(f->p.fd, off, len, f->prefix + (size_t)i *
		    LC_PREFIX_HASH_LEN, NULL, f->p.final, &e) != 0) {
			lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
			return;
		}
	}
	lc_role_post(&s->port, LC_EV_PREFIX_DONE, f->id, 0, NULL);
}

/*
 * Resume: the checksum of the kept prefix, before new bytes arrive.  With
 * chunks to rewrite below start the writer cannot feed it in order: the
 * finish job hashes the whole file instead.
 */
static void
lc_sink_seed_job(void *arg)
{
	struct lc_sfile *f = arg;
	struct lc_sink *s = f->sink;
	struct lc_err e;

	lc_err_clear(&e);
	if (f->csum != NULL && f->start > 0 && f->nspans == 0 &&
	    lc_csum_fd(f->csum, f->p.fd, f->start, f->p.final, &e) != 0) {
		lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
		return;
	}
	lc_role_post(&s->port, LC_EV_RESUME_READY, f->id, 0, NULL);
}

/* Complete files finished together (the finish job's argument). */
struct lc_fin_batch {
	struct lc_sink *sink;
	size_t n;
	struct lc_sfile *v[];
};

/*
 * Everything written (and the source's checksum known): finish a batch of
 * files, whatever completed while the last batch was finishing.  Durable
 * by default, in the order that keeps a crash from leaving a half file
 * under a final name, but with one pass of each step over the batch:
 * checksums, modes and times and writeback started for all; then an fsync
 * each (the writes are on their way, and the journal commits once for
 * many); renames; then each directory fsynced once, not once a file.
 */
static void
lc_sink_finish_job(void *arg)
{
	struct lc_fin_batch *b = arg;
	struct lc_sink *s = b->sink;
	int fsync_on = !(s->tgt.flags & LC_TGT_NO_FSYNC);
	char sum[LC_CSUM_TEXT_MAX];
	struct lc_sfile *f;
	struct lc_err e;
	int syncfs_fd;
	size_t i, j;

	lc_err_clear(&e);
	for (i = 0; i < b->n; i++) {
		f = b->v[i];
		if (f->csum != NULL && f->nspans > 0 && lc_csum_fd(f->csum,
		    f->p.fd, f->p.size, f->p.final, &e) != 0)
			goto fail;
		if (f->csum != NULL) {
			lc_csum_text(f->csum, sum);
			if (strcmp(sum, f->expect) != 0) {
				lc_err_set(&e, LC_ERR_CHECKSUM, "%s: checksum "
				    "mismatch: the source has %s, what was "
				    "written has %s; not renamed into place",
				    f->p.final, f->expect, sum);
				goto fail;
			}
		}
		if (lc_part_prepare(&s->tgt, &f->p, 0, &e) != 0)
			goto fail;
		if (fsync_on && b->n > 1 && !f->p.direct)
			(void)sync_file_range(f->p.fd, 0, 0,
			    SYNC_FILE_RANGE_WRITE);
	}
	/*
	 * Many files: one syncfs(2) makes all of them durable at the cost of
	 * one journal commit and one device flush, where an fsync each
	 * pays a flush each (on this kind of disk most of a small file's
	 * cost).  A few: fsync each, which touches nothing else.
	 */
	syncfs_fd = -1;
	for (i = 0; fsync_on && b->n >= LC_SINK_SYNCFS_MIN && i < b->n; i++)
		if (!b->v[i]->p.direct) {
			syncfs_fd = b->v[i]->p.fd;
			break;
		}
	if (syncfs_fd >= 0 && syncfs(syncfs_fd) != 0) {
		lc_err_sys(&e, LC_ERR_IO, errno, "sync the file system of %s",
		    s->tgt.path);
		goto fail;
	}
	for (i = 0; fsync_on && syncfs_fd < 0 && i < b->n; i++) {
		f = b->v[i];
		if (!f->p.direct && fsync(f->p.fd) != 0) {
			lc_err_sys(&e, LC_ERR_IO, errno, "fsync %s",
			    f->p.final);
			goto fail;
		}
	}
	for (i = 0; i < b->n; i++)
		if (lc_part_commit(&s->tgt, &b->v[i]->p, &e) != 0)
			goto fail;
	if (s->tgt.flags & LC_TGT_PROGRAM) {	/* its stdin is closed now */
		pid_t pid;
		siginfo_t si;
		/* exited, not reaped: abort must not signal a reused pid */
		while (waitid(P_PID, (id_t)s->prog_pid, &si, WEXITED |
		    WNOWAIT) != 0 && errno == EINTR)
			;
		pthread_mutex_lock(&s->mu);
		pid = s->prog_pid;
		s->prog_pid = -1;
		pthread_mutex_unlock(&s->mu);
		if (pid > 0 && lc_prog_wait(pid, "target program",
		    s->prog_cmd, &e) != 0)
			goto fail;
	}
	if (syncfs_fd >= 0) {	/* the renames: one more */
		if (syncfs(b->v[0]->p.dfd) != 0) {
			lc_err_sys(&e, LC_ERR_IO, errno, "sync the file system "
			    "of %s", s->tgt.path);
			goto fail;
		}
		fsync_on = 0;	/* the directories are done too */
	}
	for (i = 0; fsync_on && i < b->n; i++) {
		f = b->v[i];
		for (j = 0; j < i && b->v[j]->p.dfd != f->p.dfd; j++)
			;
		if (f->p.direct || j < i)
			continue;	/* that directory is done */
		if (fsync(f->p.dfd) != 0 && errno != EINVAL) {
			lc_err_sys(&e, LC_ERR_IO, errno, "fsync directory of "
			    "%s", f->p.final);
			goto fail;
		}
	}
	for (i = 0; i < b->n; i++) {
		f = b->v[i];
		lc_log_debug("%s complete", f->p.final);
		lc_role_post_text(&s->port, LC_EV_FILE_DONE, f->id, f->p.size,
		    f->csum != NULL ? f->expect : "");
	}
	lc_role_post(&s->port, LC_EV_BATCH_DONE, 0, 0, NULL);
	return;
 fail:
	lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
}

/* Main thread: hand the waiting complete files to the finish job. */
static int
lc_sink_fin_kick(struct lc_sink *s)
{
	struct lc_fin_batch *b;

	if (s->fin_busy || s->nfin == 0)
		return 0;
	if ((b = malloc(sizeof(*b) + s->nfin * sizeof(b->v[0]))) == NULL)
		return -LC_ERR_NOMEM;
	b->sink = s;
	b->n = s->nfin;
	memcpy(b->v, s->fin, s->nfin * sizeof(b->v[0]));
	s->nfin = 0;
	s->fin_busy = 1;
	s->fin_batch = b;	/* main frees it: a dropped job would leak it */
	return lc_jobq_push(s->jobs, lc_sink_finish_job, b);
}

/* Main thread: queue the finish once both conditions hold. */
static int
lc_sink_maybe_finish(struct lc_sink *s, struct lc_sfile *f)
{
	if (f->state != LC_SF_RECV || !f->written ||
	    (f->csum != NULL && f->expect[0] == '\0'))
		return 0;
	f->state = LC_SF_FINISH;
	if (s->nfin == s->fin_cap) {
		size_t ncap = s->fin_cap ? 2 * s->fin_cap : 64;
		struct lc_sfile **n = realloc(s->fin, ncap * sizeof(*n));
		if (n == NULL)
			return -LC_ERR_NOMEM;
		s->fin = n;
		s->fin_cap = ncap;
	}
	s->fin[s->nfin++] = f;
	return lc_sink_fin_kick(s);
}

/* Ready to receive from f->start on. */
static int
lc_sink_start_file(struct lc_sink *s, struct lc_sfile *f, struct lc_err *e)
{
	struct lc_msg_file_ready ready;
	int r;

	struct lc_wfile *wf;

	if ((r = lc_wfile_new(f->p.fd, !f->p.direct, f->start,
	    f->kind == LC_KIND_STREAM ? LC_STREAM_MAX : f->p.size, f->p.final,
	    &wf)) != 0)
		return lc_err_set(e, -r, "out of memory");
	if (f->kind == LC_KIND_STREAM)
		lc_wfile_open_end(wf);	/* FILE_LEN gives the end */
	if ((r = lc_wfile_set_spans(wf, f->spans, f->nspans)) != 0) {
		lc_wfile_free(wf);
		return lc_err_set(e, -r, "%s: chunks to rewrite", f->p.final);
	}
	if (f->csum != NULL && f->nspans == 0)
		lc_wfile_set_csum(wf, f->csum);
	lc_wfile_set_counter(wf, &s->written);
	lc_wfile_set_budget(wf, &s->mem_left);
	/* receivers look the writer up under the mutex */
	pthread_mutex_lock(&s->mu);
	f->wf = wf;
	pthread_mutex_unlock(&s->mu);
	f->state = LC_SF_RECV;
	memset(&ready, 0, sizeof(ready));
	ready.id = f->id;
	ready.start = f->start;
	if ((r = lc_msg_put_file_ready(s->port.out, &ready)) != 0)
		return r;
	if (f->kind != LC_KIND_STREAM && f->start == f->p.size &&
	    f->nspans == 0) {	/* nothing will arrive for it */
		f->written = 1;
		return lc_sink_maybe_finish(s, f);
	}
	return 0;
}

/*
 * An entry that is done without data (a directory, a link, a file skipped
 * or failed): answer for it (FILE_DONE, or FILE_SKIP why) and keep its
 * place in the window until the ones before it are done too.
 */
static int
lc_sink_answer(struct lc_sink *s, struct lc_sfile *f, int why,
    const char *msg)
{
	struct lc_msg_file_done d;
	struct lc_msg_file_skip k;
	int r;

	f->state = LC_SF_DONE;
	f->written = 1;
	s->files_done++;
	if (why != 0) {
		memset(&k, 0, sizeof(k));
		k.id = f->id;
		k.why = (uint8_t)why;
		snprintf(k.msg, sizeof(k.msg), "%s", msg != NULL ? msg : "");
		r = lc_msg_put_file_skip(s->port.out, &k);
	} else {
		memset(&d, 0, sizeof(d));
		d.id = f->id;
		r = lc_msg_put_file_done(s->port.out, &d);
	}
	lc_sink_retire(s);
	return r;
}

/* The same for a new entry, not yet in the table. */
static int
lc_sink_done_now(struct lc_sink *s, struct lc_sfile *f, int why,
    const char *msg)
{
	int r;

	if ((r = lc_sink_table_put(s, f)) != 0) {
		lc_sfile_free(f);
		return r;
	}
	return lc_sink_answer(s, f, why, msg);
}

/* 1 if an error about one file lets a tree copy go on without it. */
static int
lc_sink_file_error_ok(const struct lc_sink *s, int r)
{
	return (s->tgt.flags & LC_TGT_TREE) && (r == -LC_ERR_IO ||
	    r == -LC_ERR_EXISTS);
}

/*
 * --owner: the id to give a file here, from the source's name for it
 * (unless --numeric-ids, or it has none here), else its number.  The
 * last name looked up is kept: a tree's files mostly share one.
 */
static uint32_t
lc_sink_id(struct lc_sink *s, const char *name, uint32_t id, int group)
{
	struct lc_sink_idmap *c = group ? &s->map_group : &s->map_user;
	char buf[4096];
	struct passwd pw, *pwp = NULL;
	struct group gr, *grp = NULL;

	if ((s->tgt.flags & LC_TGT_NUMERIC_IDS) || name[0] == '\0')
		return id;
	if (c->valid && strcmp(c->name, name) == 0)
		return c->id;
	c->id = id;
	if (!group && getpwnam_r(name, &pw, buf, sizeof(buf), &pwp) == 0 &&
	    pwp != NULL)
		c->id = (uint32_t)pwp->pw_uid;
	else if (group && getgrnam_r(name, &gr, buf, sizeof(buf),
	    &grp) == 0 && grp != NULL)
		c->id = (uint32_t)grp->gr_gid;
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->valid = 1;
	return c->id;
}

/* What entry m keeps here: mode, times, and (as root) its owner. */
static void
lc_sink_attrs(struct lc_sink *s, const struct lc_msg_file *m,
    struct lc_attrs *a)
{
	memset(a, 0, sizeof(*a));
	a->mode = m->mode;
	a->mtime_sec = m->mtime_sec;
	a->mtime_nsec = m->mtime_nsec;
	if (!(s->tgt.flags & LC_TGT_OWNER) || geteuid() != 0)
		return;
	a->chown = 1;
	a->uid = lc_sink_id(s, m->user, m->uid, 0);
	a->gid = lc_sink_id(s, m->group, m->gid, 1);
}

/* Remember a directory of the tree for its mode and times at the end. */
static int
lc_sink_note_dir(struct lc_sink *s, const struct lc_msg_file *m, int made)
{
	struct lc_sdir *d;

	if (!made && !(s->tgt.flags & (LC_TGT_PRESERVE | LC_TGT_OWNER)))
		return 0;
	if (s->ndirs == s->dirs_cap) {
		size_t ncap = s->dirs_cap ? 2 * s->dirs_cap : 64;
		if ((d = realloc(s->dirs, ncap * sizeof(*d))) == NULL)
			return -LC_ERR_NOMEM;
		s->dirs = d;
		s->dirs_cap = ncap;
	}
	d = &s->dirs[s->ndirs];
	if ((d->rel = strdup(m->name)) == NULL)
		return -LC_ERR_NOMEM;
	lc_sink_attrs(s, m, &d->a);
	/* a directory that was there keeps its mode, unless -p */
	d->a.set_mode = made || (s->tgt.flags & LC_TGT_PRESERVE);
	s->ndirs++;
	return 0;
}

/*
 * Free space for a tree or several files: what every file announced so
 * far needs, against what was free at the first one (files replaced keep
 * their old copy until the rename, so nothing is counted back).
 */
static int
lc_sink_space(struct lc_sink *s, struct lc_sfile *f, uint64_t need,
    struct lc_err *e)
{
	struct statvfs sv;
	char a[32], b[32];

	if ((s->tgt.flags & LC_TGT_NO_SPACE_CHECK) || f->p.direct)
		return 0;
	if (!s->tgt.is_dir)
		return lc_part_space(&s->tgt, &f->p, need, e);
	if (!s->space_known) {
		if (fstatvfs(s->tgt.dir_fd, &sv) != 0)
			return 0;
		s->space_avail = (uint64_t)sv.f_bavail * sv.f_frsize;
		s->space_known = 1;
	}
	s->space_need += need;
	if (s->space_need <= s->space_avail)
		return 0;
	if (s->space_need == need)	/* the first file */
		return lc_err_set(e, LC_ERR_NOSPACE, "%s: needs %s but only "
		    "%s is free there (--no-space-check to try anyway)",
		    f->p.final, lc_fmt_bytes(a, sizeof(a), need),
		    lc_fmt_bytes(b, sizeof(b), s->space_avail));
	return lc_err_set(e, LC_ERR_NOSPACE, "%s: the files so far need %s "
	    "but only %s is free there (--no-space-check to try anyway)",
	    f->p.final, lc_fmt_bytes(a, sizeof(a), s->space_need),
	    lc_fmt_bytes(b, sizeof(b), s->space_avail));
}

/* The one file of a pipe target: straight into the pipe, in order. */
static int
lc_sink_pipe_file(struct lc_sink *s, const struct lc_msg_file *m,
    struct lc_err *e)
{
	struct lc_sfile *f;
	int r;

	if (m->id != 1 || s->pipe_fd < 0)
		return lc_err_set(e, LC_ERR_PROTO, "FILE: a pipe target takes "
		    "one file");
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return -LC_ERR_NOMEM;
	f->id = m->id;
	f->kind = m->kind;
	f->sink = s;
	f->p.fd = s->pipe_fd;
	s->pipe_fd = -1;	/* the part's now */
	f->p.dfd = -1;
	f->p.direct = 1;
	f->p.size = m->size;
	snprintf(f->p.final, sizeof(f->p.final), "%s", s->tgt.path);
	if (s->csum != LC_CSUM_NONE &&
	    (f->csum = lc_csum_new((int)s->csum)) == NULL) {
		lc_sfile_free(f);
		return -LC_ERR_NOMEM;
	}
	if ((r = lc_sink_table_put(s, f)) != 0) {
		lc_sfile_free(f);
		return lc_err_set(e, -r, "FILE: id %u is a duplicate or out of "
		    "order", m->id);
	}
	return lc_sink_start_file(s, f, e);
}

/*
 * FILE_LEN: the stream ended.  Bounded by LC_STREAM_MAX (the decoder)
 * and by what was received: nothing written or waiting beyond it.
 */
static int
lc_sink_file_len(struct lc_sink *s, const struct lc_msg_file_len *m,
    struct lc_err *e)
{
	struct lc_sfile *f = lc_sink_table_get(s, m->id);
	int complete;

	if (f == NULL || f->kind != LC_KIND_STREAM || f->state != LC_SF_RECV ||
	    f->wf == NULL || lc_wfile_set_end(f->wf, m->length,
	    &complete) != 0)
		return lc_err_set(e, LC_ERR_PROTO, "unexpected FILE_LEN for "
		    "file %u (%llu bytes)", m->id,
		    (unsigned long long)m->length);
	f->p.size = m->length;
	if (!complete)
		return 0;
	f->written = 1;
	return lc_sink_maybe_finish(s, f);
}

static int
lc_sink_file(struct lc_sink *s, const struct lc_msg_file *m, struct lc_err *e)
{
	int tree = (s->tgt.flags & LC_TGT_TREE) != 0;
	char parent[LC_PATH_MAX];
	const char *leaf, *slash;
	struct lc_sfile *f = NULL;
	struct lc_attrs a;
	int dfd, made, why;
	uint64_t kept;
	int r;

	if (!s->target_set || !s->listening)
		return lc_err_set(e, LC_ERR_PROTO, "FILE before target/LISTEN");
	if (m->id != s->files_total + 1 || m->id - s->lo >= s->files_max)
		return lc_err_set(e, LC_ERR_PROTO, "FILE: id %u is out of "
		    "order or beyond the %u files in flight", m->id,
		    s->files_max);
	if (!lc_relname_ok(m->name))
		return lc_err_set(e, LC_ERR_DENIED, "refusing unsafe file "
		    "name from peer: %s", m->name);
	if (!tree && ((m->kind != LC_KIND_REG && m->kind != LC_KIND_STREAM) ||
	    strchr(m->name, '/') != NULL))
		return lc_err_set(e, LC_ERR_PROTO, "FILE: a %s was not asked "
		    "for", m->kind != LC_KIND_REG ? "directory or link" :
		    "path");
	if (m->kind == LC_KIND_STREAM && (tree || s->tgt.is_dir ||
	    (s->tgt.flags & LC_TGT_RESUME)))
		return lc_err_set(e, LC_ERR_USAGE, "a pipe (- or -N i) is "
		    "copied to a file, not into the directory %s (name the "
		    "file)", s->tgt.path);
	if (s->tgt.flags & (LC_TGT_STDOUT | LC_TGT_PROGRAM))
		return lc_sink_pipe_file(s, m, e);
	if (tree && !s->tgt.is_dir)
		return lc_err_set(e, LC_ERR_PROTO, "FILE: a tree needs a "
		    "target directory");
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return -LC_ERR_NOMEM;
	lc_sink_attrs(s, m, &a);
	f->id = m->id;
	f->kind = m->kind;
	f->sink = s;
	f->p.fd = -1;
	dfd = s->tgt.dir_fd;
	leaf = s->tgt.is_dir ? m->name : s->tgt.name;
	if (tree) {
		slash = strrchr(m->name, '/');
		snprintf(parent, sizeof(parent), "%.*s", slash != NULL ?
		    (int)(slash - m->name) : 0, m->name);
		leaf = slash != NULL ? slash + 1 : m->name;
		if ((r = lc_sink_dir(s, parent, &f->dir, e)) != 0)
			goto out;
		dfd = f->dir->fd;
	}
	switch (m->kind) {
	case LC_KIND_DIR:
		if ((r = lc_tree_mkdir(&s->tgt, dfd, leaf, m->name, &made,
		    e)) != 0)
			goto out;
		if ((r = lc_sink_note_dir(s, m, made)) != 0)
			goto out;
		return lc_sink_done_now(s, f, 0, NULL);
	case LC_KIND_SYMLINK:
		if ((r = lc_tree_symlink(&s->tgt, dfd, leaf, m->name, m->link,
		    &a, e)) != 0)
			goto out;
		return lc_sink_done_now(s, f, 0, NULL);
	default:
		break;
	}
	if (s->tgt.is_dir && (why = lc_tree_skip(&s->tgt, dfd, leaf, m->size,
	    m->mtime_sec)) != 0)
		return lc_sink_done_now(s, f, why, NULL);
	r = tree ? lc_part_init_at(&s->tgt, dfd, m->name, leaf, m->size,
	    m->mode, &f->p, e) : lc_part_init(&s->tgt, m->name, m->size,
	    m->mode, &f->p, e);
	if (r != 0)
		goto out;
	f->p.mtime_sec = m->mtime_sec;
	f->p.mtime_nsec = m->mtime_nsec;
	f->p.chown = a.chown;
	f->p.uid = a.uid;
	f->p.gid = a.gid;
	if ((r = lc_part_open(&s->tgt, &f->p, &kept, e)) != 0 ||
	    (r = lc_sink_space(s, f, f->p.size - kept, e)) != 0)
		goto out;
	if (s->csum != LC_CSUM_NONE &&
	    (f->csum = lc_csum_new((int)s->csum)) == NULL) {
		r = -LC_ERR_NOMEM;
		goto out;
	}
	if (kept > 0) {
		f->chunk = lc_prefix_chunk(kept, s->block,
		    LC_PREFIX_MAX_CHUNKS);
		f->nchunks = f->chunk != 0 ?
		    (uint32_t)((kept + f->chunk - 1) / f->chunk) : 0;
		if (f->chunk == 0 || (f->prefix = malloc((size_t)f->nchunks *
		    LC_PREFIX_HASH_LEN + 1)) == NULL) {
			kept = 0;	/* cannot compare: start over */
			if (ftruncate(f->p.fd, 0) != 0) {
				r = lc_err_sys(e, LC_ERR_IO, errno,
				    "truncate %s", f->p.tmp);
				goto out;
			}
		}
		f->prefix_len = kept;
	}
	if ((r = lc_sink_table_put(s, f)) != 0) {
		r = lc_err_set(e, -r, "FILE: id %u is a duplicate or out of "
		    "order", f->id);
		f->p.tmp[0] = '\0';
		goto out;
	}
	if (kept > 0) {
		lc_log_verbose("%s: checking the %llu bytes already there",
		    f->p.final, (unsigned long long)kept);
		f->state = LC_SF_PREFIX;
		return lc_jobq_push(s->jobs, lc_sink_prefix_job, f);
	}
	return lc_sink_start_file(s, f, e);	/* f is in the table now */
 out:
	if (lc_sink_file_error_ok(s, r)) {
		/* this one is reported and left out; the tree goes on */
		lc_part_close(&f->p);
		lc_wfile_free(f->wf);
		f->wf = NULL;
		lc_csum_free(f->csum);
		f->csum = NULL;
		r = lc_sink_done_now(s, f, LC_SKIP_FAILED, e->msg);
		lc_err_clear(e);
		return r;
	}
	lc_sfile_free(f);
	return r;
}

static int lc_sink_maybe_done(struct lc_sink *);

/*
 * FILE_ABORT: the source cannot send a file it listed (it could not open
 * it after all).  Nothing of it was sent: drop it (its part file is
 * removed unless it holds a prefix to resume from) and answer FILE_SKIP.  A file with nothing
 * to receive may be finished already: it just completes.
 */
static int
lc_sink_file_abort(struct lc_sink *s, const struct lc_msg_file_abort *m,
    struct lc_err *e)
{
	struct lc_sfile *f = lc_sink_table_get(s, m->id);
	int r;

	if (f == NULL || f->kind != LC_KIND_REG)
		return lc_err_set(e, LC_ERR_PROTO, "unexpected FILE_ABORT for "
		    "file %u", m->id);
	if (f->state != LC_SF_RECV || f->written)
		return 0;
	/*
	 * Nothing is written from here on, whatever a source sends for it:
	 * the descriptor is closed below.  A block written or being written
	 * already is the source's protocol error (main never waits for a
	 * write, which on a pipe target could take for ever).
	 */
	if (f->wf != NULL && !lc_wfile_close_unwritten(f->wf,
	    f->nspans > 0 ? f->spans[0].off : f->start))
		return lc_err_set(e, LC_ERR_PROTO, "FILE_ABORT for file %u "
		    "after its data", m->id);
	/* a part file with nothing to resume from is not worth keeping */
	if ((!(s->tgt.flags & LC_TGT_RESUME) || f->start == 0) &&
	    f->p.tmp[0] != '\0' && !f->p.direct && f->p.fd >= 0)
		(void)unlinkat(f->p.dfd, f->p.tmp, 0);
	lc_part_close(&f->p);
	if ((r = lc_sink_answer(s, f, LC_SKIP_FAILED, NULL)) != 0)
		return r;
	return lc_sink_maybe_done(s);
}

static int
lc_sink_file_sum(struct lc_sink *s, const struct lc_msg_file_sum *m,
    struct lc_err *e)
{
	struct lc_sfile *f = lc_sink_table_get(s, m->id);

	if (f == NULL || f->csum == NULL || f->expect[0] != '\0')
		return lc_err_set(e, LC_ERR_PROTO, "unexpected FILE_SUM for "
		    "file %u", m->id);
	snprintf(f->expect, sizeof(f->expect), "%s", m->checksum);
	return lc_sink_maybe_finish(s, f);
}

static int
lc_sink_prefix_match(struct lc_sink *s, const struct lc_msg_prefix_match *m,
    struct lc_err *e)
{
	struct lc_sfile *f = lc_sink_table_get(s, m->id);
	uint64_t again = 0;
	char a[32], b[32];

	if (f == NULL || f->state != LC_SF_MATCH ||
	    lc_prefix_match_check(m, f->prefix_len, f->chunk) != 0)
		return lc_err_set(e, LC_ERR_PROTO, "unexpected PREFIX_MATCH for "
		    "file %u (%llu bytes, %u runs)", m->id,
		    (unsigned long long)m->match, m->n);
	if (m->n > 0) {
		if ((f->spans = calloc(m->n, sizeof(*f->spans))) == NULL)
			return -LC_ERR_NOMEM;
		f->nspans = m->n;
		again = lc_prefix_match_spans(m, f->prefix_len, f->chunk,
		    f->spans);
	}
	if (m->match < f->prefix_len || m->n > 0)
		lc_log_warn("%s: %s of the partial file differ from the "
		    "source and are copied again; %s of it are kept",
		    f->p.final, lc_fmt_bytes(a, sizeof(a), again +
		    f->prefix_len - m->match), lc_fmt_bytes(b, sizeof(b),
		    m->match - again));
	else
		lc_log_verbose("%s: resuming after %s", f->p.final,
		    lc_fmt_bytes(a, sizeof(a), m->match));
	if (m->match < f->prefix_len && ftruncate(f->p.fd,
	    (off_t)m->match) != 0)
		return lc_err_sys(e, LC_ERR_IO, errno, "truncate %s",
		    f->p.final);
	f->start = m->match;
	f->state = LC_SF_SEED;
	return lc_jobq_push(s->jobs, lc_sink_seed_job, f);
}

/* See sink_int.h. */
void
lc__sink_quota_wait(struct lc_sink *s, int waiting)
{
	uint64_t now = lc_now_ns();

	pthread_mutex_lock(&s->hol_mu);
	if (waiting) {
		s->hol_waiting++;
		s->quota_wait_ns -= now;
	} else {
		s->hol_waiting--;
		s->quota_wait_ns += now;
	}
	pthread_mutex_unlock(&s->hol_mu);
}

/* See sink_int.h. */
int
lc__sink_quota_grow(struct lc_sink *s, struct lc_receiver *rv)
{
	int_fast64_t left = atomic_load(&s->mem_left);

	/* waiting holes keep LC_SINK_HOLE_RESERVE of it for themselves */
	do {
		if (left < (int_fast64_t)s->block + LC_SINK_HOLE_RESERVE)
			return 0;
	} while (!atomic_compare_exchange_weak(&s->mem_left, &left,
	    left - s->block));
	if (lc_pool_grow(rv->pool, s->quota_max))
		return 1;
	atomic_fetch_add(&s->mem_left, s->block);
	return 0;
}

/*
 * -v: head-of-line blocking, measured: how long the receivers waited for
 * a buffer of their quota (summed over the streams: time in which a
 * stream could not take more from its connection because the ordered
 * writer was waiting for a block on another one, or for the disk), and
 * the quotas they ended with.
 */
static void
lc_sink_hol_report(struct lc_sink *s)
{
	uint64_t wait;
	uint32_t qmax = 0, qsum = 0;

	pthread_mutex_lock(&s->hol_mu);
	wait = s->hol_waiting == 0 ? s->quota_wait_ns : 0;
	pthread_mutex_unlock(&s->hol_mu);
	if (s->nstreams < 2)
		return;
	for (uint32_t i = 0; i < s->nstreams; i++) {
		uint32_t q = lc_pool_quota(s->recv[i].pool);
		qsum += q;
		if (q > qmax)
			qmax = q;
	}
	lc_log_verbose("head-of-line: streams waited %.2f s in all for a "
	    "buffer (%u streams); quotas grew from %u to %u blocks of %u KiB "
	    "in all (at most %u on one stream)", (double)wait / 1e9,
	    s->nstreams, s->quota * s->nstreams, qsum, s->block >> 10, qmax);
}

/*
 * Streams, block size and quota within the memory budget, whatever the
 * controller asked: buffers = streams x (quota + extra) x block must fit
 * in budget - LC_SINK_MEM_RESERVE, extra being the blocks a stream holds
 * outside its quota (1 spare; 2 with -c: the inflate input buffer too).
 * Clamped in order: the quota (down to LC_MIN_QUOTA), then the block size
 * (to a multiple of 4 KiB, down to LC_MIN_BLOCK), then the streams.
 * Never more streams than max_streams (what our HELLO advertised) nor
 * more than asked for.  *left: the bytes of the bound that the buffers
 * leave, for quotas to grow into and for waiting holes.
 */
static void
lc_sink_limits(uint64_t budget, uint32_t max_streams, uint32_t extra,
    uint32_t *streams, uint32_t *block, uint32_t *quota, uint64_t *left)
{
	uint64_t bufs, st, b = *block, q;

	/* the host resolves the operator's bound; never underflow here */
	if (budget < 2 * LC_SINK_MEM_RESERVE)
		budget = 2 * LC_SINK_MEM_RESERVE;
	bufs = budget - LC_SINK_MEM_RESERVE;
	st = *streams < max_streams ? *streams : max_streams;
	if (st == 0)
		st = 1;
	/* the quota the sink has always aimed at ... */
	q = (bufs < LC_SINK_QUOTA_TARGET ? bufs : LC_SINK_QUOTA_TARGET) /
	    (st * b);
	if (q > LC_MAX_QUOTA)
		q = LC_MAX_QUOTA;
	/* ... no more than the budget allows (with the extras) ... */
	if (q + extra > bufs / (st * b))
		q = bufs / (st * b) >= LC_MIN_QUOTA + extra ?
		    bufs / (st * b) - extra : 0;
	if (q < LC_MIN_QUOTA) {
		q = LC_MIN_QUOTA;
		/* ... then smaller blocks ... */
		b = bufs / (st * (LC_MIN_QUOTA + extra)) & ~(uint64_t)4095;
		if (b > *block)
			b = *block;
		if (b < LC_MIN_BLOCK) {
			/* ... then fewer streams */
			b = LC_MIN_BLOCK;
			st = bufs / (b * (LC_MIN_QUOTA + extra));
		}
	}
	*streams = (uint32_t)st;
	*block = (uint32_t)b;
	*quota = (uint32_t)q;
	/* what the bound leaves: quota growth and waiting holes share it */
	*left = bufs > st * (q + extra) * b ? bufs - st * (q + extra) * b : 0;
}

static int
lc_sink_start_acceptor(struct lc_sink *s, struct lc_err *e)
{
	if (lc_thread_start(&s->acceptor, "lc-accept", lc_acceptor_main,
	    s) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "thread");
	s->acceptor_started = 1;
	return 0;
}

/* DIAL (reverse): the source's address and ports; start dialling. */
static int
lc_sink_dial(struct lc_sink *s, const struct lc_msg_dial *m,
    struct lc_err *e)
{
	int r;

	if (!s->listening || !s->dial_mode || s->acceptor_started ||
	    m->streams != s->nstreams)
		return lc_err_set(e, LC_ERR_PROTO, "unexpected DIAL");
	memcpy(s->dial_addr, m->addr, sizeof(s->dial_addr));
	if ((r = lc_role_dial_check(&s->port, s->dial_addr,
	    sizeof(s->dial_addr), e)) != 0)
		return r;
	memcpy(s->dial_ports, m->ports, sizeof(s->dial_ports));
	lc_log_debug("reverse: dialling %u streams to %s", s->nstreams,
	    s->dial_addr);
	return lc_sink_start_acceptor(s, e);
}

static int
lc_sink_listen(struct lc_sink *s, const struct lc_msg_listen *m,
    struct lc_err *e)
{
	struct lc_msg_listening l;
	char name[32];
	uint64_t left;
	int r;

	if (s->listening)
		return lc_err_set(e, LC_ERR_PROTO, "second LISTEN");
	s->listening = 1;
	s->nstreams = m->streams;
	s->block = m->block;
	lc_sink_limits(s->port.set.max_memory, s->port.set.max_streams,
	    (m->flags & LC_XFER_COMPRESS) ? 2 : 1, &s->nstreams, &s->block,
	    &s->quota, &left);
	atomic_store(&s->mem_left, (int_fast64_t)left);
	s->quota_max = s->quota > LC_MAX_QUOTA ? s->quota : LC_MAX_QUOTA;
	if (s->nstreams != m->streams || s->block != m->block)
		lc_log_verbose("sink: %u streams of %u KiB blocks asked for, "
		    "%u of %u KiB granted (memory bound %llu MiB)", m->streams,
		    m->block >> 10, s->nstreams, s->block >> 10,
		    (unsigned long long)(s->port.set.max_memory >> 20));
	s->window = m->window;
	s->flags = m->flags;
	s->csum = m->csum;
	s->stall_s = m->stall_s;
	s->quiet_s = m->quiet_s;
	if (s->key == NULL && (s->key = lc_secmem_alloc(LC_KEY_LEN)) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	memcpy(s->key, m->key, LC_KEY_LEN);
	if ((s->flags & LC_XFER_ENCRYPT) &&
	    (r = lc_tls_new(1, s->key, &s->tls, e)) != 0)
		return r;
	memset(&l, 0, sizeof(l));
	for (uint32_t i = 0; i < s->nstreams; i++) {
		struct lc_receiver *rv = &s->recv[i];
		rv->sink = s;
		rv->idx = i;
		if ((r = lc_pool_new(s->quota, s->block, &rv->pool)) != 0)
			return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
		if (s->flags & LC_XFER_REVERSE)
			continue;	/* we dial: see DIAL */
		if ((r = lc_sock_listen(s->window,
		    !!(s->flags & LC_XFER_LOOPBACK), &rv->listen_fd, &rv->port,
		    e)) != 0)
			return r;
		l.ports[i] = rv->port;
	}
	l.nports = (s->flags & LC_XFER_REVERSE) ? 0 : s->nstreams;
	s->dial_mode = !!(s->flags & LC_XFER_REVERSE);
	if (lc_wake_open(&s->accept_wake) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "pipe");
	for (uint32_t i = 0; i < s->nstreams; i++) {
		snprintf(name, sizeof(name), "lc-recv-%u", i);
		if (lc_thread_start(&s->recv[i].thread, name,
		    lc_receiver_main, &s->recv[i]) != 0)
			return lc_err_set(e, LC_ERR_INTERNAL, "thread");
		s->recv[i].started = 1;
	}
	/* reverse: the acceptor starts dialling at DIAL */
	if (!s->dial_mode && (r = lc_sink_start_acceptor(s, e)) != 0)
		return r;
	l.streams = s->nstreams;
	l.window = s->window != 0 && !s->dial_mode ?
	    lc_sock_rcvbuf(s->recv[0].listen_fd) : s->window;
	l.block = s->block;
	l.quota = s->quota;
	lc_log_debug("listening on %u ports, quota %u x %u bytes",
	    s->nstreams, s->quota, s->block);
	return lc_msg_put_listening(s->port.out, &l);
}

static void lc_sink_abort(void *role);

/*
 * STOP: the copy has failed or was interrupted at the controller.  End
 * the data streams and wait for their threads, so that nothing more is
 * written, then say exactly how many bytes reached the files (STOPPED).
 * Part files with data stay as they are, for -a.
 */
static int
lc_sink_stop(struct lc_sink *s)
{
	struct lc_msg_xfer_done d;

	if (s->stopped)
		return 0;
	atomic_store(&s->stopping, true);
	lc_sink_abort(s);
	for (uint32_t i = 0; i < s->nstreams; i++) {
		if (!s->recv[i].started)
			continue;
		pthread_join(s->recv[i].thread, NULL);
		s->recv[i].started = 0;
	}
	s->stopped = 1;
	/* as after FILE_ABORT: an empty new part file is not worth keeping */
	for (uint32_t i = 0; s->files != NULL && i < s->files_max; i++) {
		struct lc_sfile *f = s->files[i];
		struct stat st;

		if (f == NULL || f->state != LC_SF_RECV || f->start != 0 ||
		    f->p.tmp[0] == '\0' || f->p.direct || f->p.fd < 0 ||
		    (f->wf != NULL && lc_wfile_written(f->wf) != 0) ||
		    fstat(f->p.fd, &st) != 0 || st.st_size != 0)
			continue;
		(void)unlinkat(f->p.dfd, f->p.tmp, 0);
		lc_part_close(&f->p);
	}
	memset(&d, 0, sizeof(d));
	d.bytes = atomic_load(&s->written);
	d.files = s->files_done;
	return lc_msg_put_xfer_done(s->port.out, LC_MSG_SINK_STOPPED, &d);
}

static int
lc_sink_handle(void *role, uint8_t type, const uint8_t *p, size_t n,
    struct lc_err *e)
{
	struct lc_sink *s = role;
	union {
		struct lc_msg_sink_target tgt;
		struct lc_msg_listen listen;
		struct lc_msg_file file;
		struct lc_msg_file_sum sum;
		struct lc_msg_prefix_match match;
		struct lc_msg_file_abort abort;
		struct lc_msg_file_len len;
		struct lc_msg_dial dial;
	} m;
	int r;

	switch (type) {
	case LC_MSG_DIAL:
		if (lc_msg_get_dial(p, n, &m.dial) != 0)
			break;
		return lc_sink_dial(s, &m.dial, e);
	case LC_MSG_SINK_TARGET:
		if (lc_msg_get_sink_target(p, n, &m.tgt) != 0)
			break;
		r = lc_sink_target(s, &m.tgt, e);
		OPENSSL_cleanse(m.tgt.takeover, sizeof(m.tgt.takeover));
		return r;
	case LC_MSG_LISTEN:
		if (lc_msg_get_listen(p, n, &m.listen) != 0)
			break;
		r = lc_sink_listen(s, &m.listen, e);
		OPENSSL_cleanse(&m.listen, sizeof(m.listen));
		return r;
	case LC_MSG_FILE:
		if (lc_msg_get_file(p, n, &m.file) != 0)
			break;
		return lc_sink_file(s, &m.file, e);
	case LC_MSG_FILE_SUM:
		if (lc_msg_get_file_sum(p, n, &m.sum) != 0)
			break;
		return lc_sink_file_sum(s, &m.sum, e);
	case LC_MSG_FILE_ABORT:
		if (lc_msg_get_file_abort(p, n, &m.abort) != 0)
			break;
		return lc_sink_file_abort(s, &m.abort, e);
	case LC_MSG_FILE_LEN:
		if (lc_msg_get_file_len(p, n, &m.len) != 0)
			break;
		return lc_sink_file_len(s, &m.len, e);
	case LC_MSG_PREFIX_MATCH:
		if (lc_msg_get_prefix_match(p, n, &m.match) != 0)
			break;
		return lc_sink_prefix_match(s, &m.match, e);
	case LC_MSG_STOP:
		if (lc_msg_get_empty(p, n) != 0)
			break;
		return lc_sink_stop(s);
	default:
		break;
	}
	return lc_err_set(e, LC_ERR_PROTO, "unexpected or malformed %s at the "
	    "sink", lc_msg_name(type));
}

/*
 * Heartbeat with the low-water mark: every block before (file, written)
 * in the global order is on disk, so the source may forget it.
 */
static int
lc_sink_progress(struct lc_sink *s)
{
	struct lc_msg_progress p;
	struct lc_sfile *f;

	memset(&p, 0, sizeof(p));
	p.bytes = atomic_load(&s->written);
	for (;;) {
		if (s->lw_file < s->lo) {	/* done and freed */
			s->lw_file++;
			continue;
		}
		f = lc_sink_table_get(s, s->lw_file);
		if (f == NULL || (f->state != LC_SF_DONE && (f->wf == NULL ||
		    !f->written)))
			break;
		s->lw_file++;
	}
	p.file = s->lw_file;
	p.written = f != NULL && f->wf != NULL ? lc_wfile_written(f->wf) : 0;
	return lc_msg_put_progress(s->port.out, &p);
}

/*
 * Directories last (the job thread), deepest first: each gets its mode
 * and times once its contents are written, and is made durable (its
 * entries, new subdirectories included): an fsync each, or for many one
 * syncfs(2); then the target itself.
 */
static void
lc_sink_dirs_job(void *arg)
{
	struct lc_sink *s = arg;
	int fsync_on = !(s->tgt.flags & LC_TGT_NO_FSYNC);
	struct lc_err e;

	lc_err_clear(&e);
	for (size_t i = s->ndirs; i-- > 0;) {
		const struct lc_sdir *d = &s->dirs[i];
		if (lc_role_canceled(&s->port))
			return;
		if (lc_tree_dir_attrs(&s->tgt, d->rel, &d->a,
		    fsync_on && s->ndirs < LC_SINK_SYNCFS_MIN, &e) != 0) {
			lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
			return;
		}
	}
	/* many directories: one syncfs(2) for all of them */
	if (fsync_on && s->tgt.dir_fd >= 0 &&
	    (s->ndirs >= LC_SINK_SYNCFS_MIN ? syncfs(s->tgt.dir_fd) :
	    fsync(s->tgt.dir_fd)) != 0 && errno != EINVAL) {
		lc_err_sys(&e, LC_ERR_IO, errno, "sync %s", s->tgt.path);
		lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
		return;
	}
	lc_role_post(&s->port, LC_EV_DIRS_DONE, 0, 0, NULL);
}

static int
lc_sink_maybe_done(struct lc_sink *s)
{
	struct lc_msg_xfer_done d;

	if (s->done_sent || s->ended < s->nstreams ||
	    s->files_done < s->files_total || s->fin_busy)
		return 0;
	if ((s->tgt.flags & LC_TGT_TREE) && s->dirs_state == 0) {
		s->dirs_state = 1;
		return lc_jobq_push(s->jobs, lc_sink_dirs_job, s);
	}
	if ((s->tgt.flags & LC_TGT_TREE) && s->dirs_state != 2)
		return 0;
	s->done_sent = 1;
	lc_sink_hol_report(s);
	memset(&d, 0, sizeof(d));
	d.bytes = atomic_load(&s->written);
	d.files = s->files_done;
	(void)lc_sink_progress(s);
	return lc_msg_put_xfer_done(s->port.out, LC_MSG_SINK_DONE, &d);
}

static int
lc_sink_stream_lost(struct lc_sink *s, uint32_t i, const struct lc_err *why,
    struct lc_err *e)
{
	struct lc_receiver *rv = &s->recv[i];
	struct lc_msg_stream_lost m;
	char name[32];

	pthread_join(rv->thread, NULL);	/* it has just posted and exits */
	rv->started = 0;
	if (++rv->losses > LC_MAX_STREAM_LOSSES)
		return lc_err_set(e, why->code != 0 ? why->code :
		    LC_ERR_STREAM, "data stream %u broke %u times, giving up; "
		    "the last time: %s", i, rv->losses, why->msg);
	memset(&m, 0, sizeof(m));
	m.stream = i;
	m.has_last = (uint8_t)rv->has_last;
	m.last_file = rv->last_file;
	m.last_off = rv->last_off;
	snprintf(m.reason, sizeof(m.reason), "%.200s", why->msg);
	lc_log_debug("data stream %u lost: %s", i, why->msg);
	/* a fresh receiver for the source's new connection */
	pthread_mutex_lock(&s->mu);
	lc_conn_close(&rv->conn);
	rv->has_conn = 0;
	pthread_mutex_unlock(&s->mu);
	if (s->acceptor_started)
		lc_wake_signal(&s->accept_wake);	/* reverse: redial */
	atomic_store(&rv->stalled, false);
	atomic_store(&rv->state, LC_RV_WAIT);
	snprintf(name, sizeof(name), "lc-recv-%u", i);
	if (lc_thread_start(&rv->thread, name, lc_receiver_main, rv) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "thread");
	rv->started = 1;
	return lc_msg_put_stream_lost(s->port.out, &m);
}

static int
lc_sink_event(void *role, const struct lc_event *ev, struct lc_err *e)
{
	struct lc_sink *s = role;
	struct lc_msg_file_done fd;
	struct lc_sfile *f;
	struct lc_msg_file_prefix fp;
	int r;

	if (s->stopped)		/* STOPPED said it all */
		return 0;
	switch (ev->type) {
	case LC_EV_FILE_WRITTEN:
		if ((f = lc_sink_table_get(s, ev->a)) == NULL)
			break;
		f->written = 1;
		if ((r = lc_sink_progress(s)) != 0)
			return r;
		return lc_sink_maybe_finish(s, f);
	case LC_EV_FILE_DONE:
		if ((f = lc_sink_table_get(s, ev->a)) == NULL)
			break;
		f->state = LC_SF_DONE;
		s->files_done++;
		memset(&fd, 0, sizeof(fd));
		fd.id = ev->a;
		fd.bytes = ev->b;
		snprintf(fd.checksum, sizeof(fd.checksum), "%s", ev->text);
		if ((r = lc_msg_put_file_done(s->port.out, &fd)) != 0)
			return r;
		lc_sink_retire(s);
		return 0;
	case LC_EV_BATCH_DONE:
		s->fin_busy = 0;
		free(s->fin_batch);
		s->fin_batch = NULL;
		if ((r = lc_sink_fin_kick(s)) != 0)
			return r;
		return lc_sink_maybe_done(s);
	case LC_EV_DIRS_DONE:
		s->dirs_state = 2;
		return lc_sink_maybe_done(s);
	case LC_EV_PREFIX_DONE:
		if ((f = lc_sink_table_get(s, ev->a)) == NULL ||
		    f->state != LC_SF_PREFIX)
			break;
		f->state = LC_SF_MATCH;
		memset(&fp, 0, sizeof(fp));
		fp.id = f->id;
		fp.length = f->prefix_len;
		fp.chunk = f->chunk;
		fp.n = f->nchunks;
		fp.hashes = f->prefix;
		return lc_msg_put_file_prefix(s->port.out, &fp);
	case LC_EV_RESUME_READY:
		if ((f = lc_sink_table_get(s, ev->a)) == NULL ||
		    f->state != LC_SF_SEED)
			break;
		return lc_sink_start_file(s, f, e);
	case LC_EV_RECEIVER_DONE:
		s->ended++;
		return lc_sink_maybe_done(s);
	case LC_EV_STREAM_ACK:
		return lc_sink_progress(s);
	case LC_EV_STREAM_LOST:
		if (ev->a >= s->nstreams)
			break;
		return lc_sink_stream_lost(s, ev->a, &ev->err, e);
	default:
		break;
	}
	return lc_err_set(e, LC_ERR_INTERNAL, "sink: event %d", ev->type);
}

/* Give up on a stream's connection: the source reconnects and resends. */
static void
lc_sink_drop_stream(struct lc_sink *s, struct lc_receiver *rv)
{
	atomic_store(&rv->stalled, true);
	pthread_mutex_lock(&s->mu);
	lc_conn_shutdown(&rv->conn);
	pthread_mutex_unlock(&s->mu);
}

/*
 * The path went away: every connected stream has been silent for quiet_s
 * (a healthy one brings an IDLE frame every second).  Drop them all now,
 * so that the source dials fresh connections, which get through as soon
 * as the path is back, instead of TCP's retransmissions on the old ones,
 * backed off to tens of seconds by then.
 */
static void
lc_sink_quiet(struct lc_sink *s, uint64_t now_ms)
{
	uint64_t quiet_ms = (uint64_t)s->quiet_s * 1000;
	uint32_t n = 0;

	if (quiet_ms == 0)
		return;
	for (uint32_t i = 0; i < s->nstreams; i++) {
		struct lc_receiver *rv = &s->recv[i];
		if (atomic_load(&rv->state) != LC_RV_RECV)
			continue;
		if (atomic_load(&rv->stalled) ||
		    now_ms - atomic_load(&rv->last_rx_ms) < quiet_ms)
			return;	/* one is alive (or already dropped) */
		n++;
	}
	if (n == 0)
		return;
	lc_log_verbose("no data on any of %u streams for %u s: the path is "
	    "gone; reconnecting them", n, s->quiet_s);
	for (uint32_t i = 0; i < s->nstreams; i++)
		if (atomic_load(&s->recv[i].state) == LC_RV_RECV)
			lc_sink_drop_stream(s, &s->recv[i]);
}

/*
 * Once a second: the heartbeat, and the stall check.  An idle source sends
 * an IDLE frame every second on each stream, so a stream that has brought
 * no bytes for stall_s seconds while another one is busy (receiving, or
 * blocked on its quota, which is waiting for the silent one) is stalled:
 * shut it down, and the source reconnects it and resends.  When all are
 * silent the whole transfer is stalled, which is for the controller's
 * --timeout to judge.
 */
static int
lc_sink_tick(void *role, uint64_t now_ms)
{
	struct lc_sink *s = role;
	uint64_t stall_ms = (uint64_t)s->stall_s * 1000;
	int busy = 0;

	if (!s->listening || s->done_sent || s->stopped)
		return 0;
	for (uint32_t i = 0; stall_ms > 0 && i < s->nstreams; i++) {
		struct lc_receiver *rv = &s->recv[i];
		int st = atomic_load(&rv->state);
		if (st == LC_RV_QUOTA || (st == LC_RV_RECV &&
		    now_ms - atomic_load(&rv->last_rx_ms) < stall_ms))
			busy++;
	}
	for (uint32_t i = 0; busy > 0 && i < s->nstreams; i++) {
		struct lc_receiver *rv = &s->recv[i];
		if (atomic_load(&rv->state) != LC_RV_RECV ||
		    atomic_load(&rv->stalled) ||
		    now_ms - atomic_load(&rv->last_rx_ms) < stall_ms)
			continue;
		lc_sink_drop_stream(s, rv);
	}
	if (busy == 0)
		lc_sink_quiet(s, now_ms);
	return lc_sink_progress(s);
}

static void
lc_sink_abort(void *role)
{
	struct lc_sink *s = role;

	if (s == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	for (uint32_t i = 0; i < s->nstreams; i++) {
		lc_conn_shutdown(&s->recv[i].conn);
		if (s->recv[i].pool != NULL)
			lc_pool_abort(s->recv[i].pool);
	}
	pthread_cond_broadcast(&s->cv);
	if (s->prog_pid > 0)	/* a target program: the copy is over */
		(void)kill(s->prog_pid, SIGTERM);
	pthread_mutex_unlock(&s->mu);
	lc_wake_signal(&s->accept_wake);
}

static void
lc_sink_free(void *role)
{
	struct lc_sink *s = role;

	if (s == NULL)
		return;
	lc_takeover_stop(s->takeover);
	s->takeover = NULL;
	lc_sink_abort(s);
	/* a target program that outlives SIGTERM must not hold up the
	   finish job, which may be waiting for it */
	pthread_mutex_lock(&s->mu);
	if (s->prog_pid > 0)
		(void)kill(s->prog_pid, SIGKILL);
	pthread_mutex_unlock(&s->mu);
	lc_jobq_free(s->jobs, NULL);
	free(s->fin_batch);
	if (s->acceptor_started)
		pthread_join(s->acceptor, NULL);
	for (uint32_t i = 0; i < s->nstreams; i++) {
		if (s->recv[i].started)
			pthread_join(s->recv[i].thread, NULL);
	}
	/* files first: their waiting blocks go back to the pools */
	for (uint32_t i = 0; s->files != NULL && i < s->files_max; i++)
		lc_sfile_free(s->files[i]);
	free(s->files);
	free(s->fin);
	for (size_t i = 0; i < s->ndirs; i++)
		free(s->dirs[i].rel);
	free(s->dirs);
	lc_tdir_put(s->cur_dir);
	for (uint32_t i = 0; i < s->nstreams; i++) {
		struct lc_receiver *rv = &s->recv[i];
		lc_conn_close(&rv->conn);
		if (rv->listen_fd >= 0)
			close(rv->listen_fd);
		lc_pool_free(rv->pool);
	}
	lc_wake_close(&s->accept_wake);
	lc_tls_free(s->tls);
	lc_target_close(&s->tgt);
	if (s->pipe_fd >= 0)
		close(s->pipe_fd);
	if (s->prog_pid > 0) {	/* did not finish: killed above */
		while (waitpid(s->prog_pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	lc_secmem_free(s->key, LC_KEY_LEN);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->hol_mu);
	free(s);
}

/* The messages the table (wire_msgs.def) gives the sink. */
static int
lc_sink_owns(uint8_t type)
{
	return lc_msg_owner(type) == LC_OWNER_SINK;
}

const struct lc_role_ops lc_sink_ops = {
	.name = "sink",
	.owns = lc_sink_owns,
	.create = lc_sink_new,
	.handle = lc_sink_handle,
	.event = lc_sink_event,
	.tick = lc_sink_tick,
	.abort = lc_sink_abort,
	.free = lc_sink_free,
};
