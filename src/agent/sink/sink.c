/*
 * Sink role: resolves the target, listens for the data streams, has their
 * blocks received and written in order, and finishes files (checksum,
 * fsync, rename into place).  This file is the role itself: its state
 * machine (control messages, worker events, the tick), the target, and
 * its life (create, abort, free).  Each feature has a file of its own
 * and its state in a sub-struct of struct lc_sink (sink_int.h):
 *   sink_file.c    files in flight: FILE, FILE_SUM, FILE_ABORT, the table
 *   sink_tree.c    tree entries: directories, symlinks, owners, space,
 *                  the directories' modes and times last (dirs job)
 *   sink_pipe.c    pipe targets (stdout, -N o) and pipes (FILE_LEN)
 *   sink_resume.c  resume: the prefix and seed jobs, PREFIX_MATCH
 *   sink_finish.c  finishing batches (the finish job, FILE_DONE)
 *   sink_mem.c     memory and quotas, the head-of-line measure
 *   acceptor.c     accepting (and DIAL, reverse)
 *   receiver.c     receiving, lost and stalled streams
 *
 * Threads (each in its own file):
 *   acceptor   acceptor.c: takes connections on the N listening sockets
 *              and hands each, after a handshake in its own short-lived
 *              auth thread, to the receiver of its stream.
 *   receiver   receiver.c: one per stream, frames -> quota buffers -> the
 *              file's ordered writer (writer.h).  A broken or stalled
 *              stream is joined on main and a fresh receiver started for
 *              the source's new connection (lc__sink_stream_lost).
 *   jobs       one thread (jobq.h): hashes partial files for a resume
 *              (sink_resume.c), finishes complete files in batches
 *              (sink_finish.c: checksum compare, fsync, rename) and
 *              gives a tree's directories their modes and times last
 *              (sink_tree.c).
 * The host's main thread runs everything else; ops->tick watches for
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

#include "clock.h"
#include "log.h"
#include "path.h"
#include "parse.h"
#include "program.h"
#include "secmem.h"
#include "sysinfo.h"
#include "takeover.h"
#include "thread.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <signal.h>
#include <unistd.h>

#include <openssl/crypto.h>

/*
 * Files in flight: ids come in order, at most SINK_TARGET's inflight of
 * them not yet done, which is at most this (the table of files is 24
 * bytes an entry: twice as many slots of an id and a pointer).
 */
#define LC_SINK_MAX_FILES 65536u

static int
lc_sink_new(const struct lc_role_port *port, void **out)
{
	struct lc_sink *s;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -LC_ERR_NOMEM;
	s->port = *port;
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->mem.hol_mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	atomic_init(&s->recv.bytes, 0);
	atomic_init(&s->written, 0);
	atomic_init(&s->stopping, false);
	atomic_init(&s->mem.left, 0);
	atomic_init(&s->mem.hole_wait_said, false);
	s->acc.wake.rfd = s->acc.wake.wfd = -1;
	s->tgt.dir_fd = -1;
	s->pipe.fd = -1;
	s->pipe.prog_pid = -1;
	s->lw_file = 1;
	s->lo = 1;
	for (uint32_t i = 0; i < LC_MAX_STREAMS; i++) {
		s->recv.rv[i].listen_fd = -1;
		s->recv.rv[i].conn.fd = -1;
		atomic_init(&s->recv.rv[i].state, LC_RV_WAIT);
		atomic_init(&s->recv.rv[i].last_rx_ms, 0);
		atomic_init(&s->recv.rv[i].stalled, false);
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

/* ---- target ---- */

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
 * Files in flight granted for an ask of n (1 .. LC_SINK_MAX_FILES): never
 * less than n or LC_FILES_INFLIGHT, whichever is smaller (the controller
 * credits that many before TARGET_OK); no more for a restricted agent (its
 * client may be anyone with the key: no more file records and open part
 * files than an honest controller needs to start); beyond it only as far
 * as half the descriptor limit covers (each may hold a part file open).
 */
static uint32_t
lc_sink_grant(const struct lc_sink *s, uint32_t n)
{
	uint32_t floor = n < LC_FILES_INFLIGHT ? n : LC_FILES_INFLIGHT;
	struct rlimit rl;
	uint64_t cap = n;

	if (n <= floor || s->port.conf->root_fd >= 0)
		return floor;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur / 2 < cap)
		cap = rl.rlim_cur / 2;
	return cap > floor ? (uint32_t)cap : floor;
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
	s->files_max = lc_sink_grant(s, m->inflight);
	if ((r = lc_idmap_init(&s->files, s->files_max)) != 0)
		return r;
	if (m->flags & (LC_TGT_STDOUT | LC_TGT_PROGRAM)) {
		/* a command line or "-", not a path: no ~ to expand */
		r = lc__sink_pipe_target(s, m, e);
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
	ok.inflight = s->files_max;
	snprintf(ok.resolved, sizeof(ok.resolved), "%s", s->tgt.path);
	return lc_msg_put_target_ok(s->port.out, &ok);
}

static int
lc_sink_listen(struct lc_sink *s, const struct lc_msg_listen *m,
    struct lc_err *e)
{
	struct lc_msg_listening l;
	int r;

	if (s->listening)
		return lc_err_set(e, LC_ERR_PROTO, "second LISTEN");
	s->listening = 1;
	lc__sink_mem_setup(s, m);	/* streams, block, quota */
	s->acc.window = m->window;
	s->flags = m->flags;
	if (m->window == 0) {
		s->acc.window = lc__sink_rcvbuf(s->nstreams,
		    lc_proc_u64("/proc/sys/net/core/rmem_max"),
		    lc_proc_u64_field("/proc/sys/net/ipv4/tcp_rmem", 2),
		    !!(s->flags & LC_XFER_LOOPBACK));
		if (s->acc.window != 0)
			lc_log_debug("receive buffer %u KiB per stream "
			    "(fixed: the window opens with the sender)",
			    s->acc.window >> 10);
	}
	s->csum = m->csum;
	s->recv.stall_s = m->stall_s;
	s->recv.quiet_s = m->quiet_s;
	if (s->acc.key == NULL &&
	    (s->acc.key = lc_secmem_alloc(LC_KEY_LEN)) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	memcpy(s->acc.key, m->key, LC_KEY_LEN);
	if ((s->flags & LC_XFER_ENCRYPT) &&
	    (r = lc_tls_new(1, s->acc.key, &s->acc.tls, e)) != 0)
		return r;
	memset(&l, 0, sizeof(l));
	for (uint32_t i = 0; i < s->nstreams; i++) {
		struct lc_receiver *rv = &s->recv.rv[i];
		rv->sink = s;
		rv->idx = i;
		if ((r = lc_pool_new(s->quota, s->block, &rv->pool)) != 0)
			return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
		if (s->flags & LC_XFER_REVERSE)
			continue;	/* we dial: see DIAL */
		if ((r = lc_sock_listen(s->acc.window,
		    !!(s->flags & LC_XFER_LOOPBACK), &rv->listen_fd, &rv->port,
		    e)) != 0)
			return r;
		l.ports[i] = rv->port;
	}
	l.nports = (s->flags & LC_XFER_REVERSE) ? 0 : s->nstreams;
	s->acc.dial_mode = !!(s->flags & LC_XFER_REVERSE);
	if (lc_wake_open(&s->acc.wake) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "pipe");
	if ((r = lc__sink_recv_start(s, e)) != 0)
		return r;
	/* reverse: the acceptor starts dialling at DIAL */
	if (!s->acc.dial_mode && (r = lc__sink_accept_start(s, e)) != 0)
		return r;
	l.streams = s->nstreams;
	l.window = s->acc.window != 0 && !s->acc.dial_mode ?
	    lc_sock_rcvbuf(s->recv.rv[0].listen_fd) : s->acc.window;
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
	lc__sink_recv_join(s);
	s->stopped = 1;
	lc__sink_drop_parts(s, 0);
	memset(&d, 0, sizeof(d));
	d.bytes = atomic_load(&s->written);
	d.files = s->files_done;
	return lc_msg_put_xfer_done(s->port.out, LC_MSG_SINK_STOPPED, &d);
}

/*
 * SINK_NOMORE (after SRC_NOMORE, to a sink whose HELLO had
 * LC_HELLO_NOMORE): every FILE has come.  Once every file is done, every
 * byte the source will send has been written, so SINK_DONE need not wait
 * for the streams' END (a round trip: the source ends its streams only
 * after the acknowledgement that goes out with the last FILE_DONE).
 */
static int
lc_sink_nomore(struct lc_sink *s, struct lc_err *e)
{
	if (s->nomore || !s->target_set)
		return lc_err_set(e, LC_ERR_PROTO, "%s SINK_NOMORE",
		    s->nomore ? "second" : "early");
	s->nomore = 1;
	return lc__sink_maybe_done(s);
}

static int
lc_sink_handle(void *role, uint8_t type, const uint8_t *p, size_t n,
    struct lc_err *e)
{
	struct lc_sink *s = role;
	union lc_msg_any m;
	int r;

	if (lc_msg_get(type, p, n, &m) != 0)
		goto bad;
	switch (type) {
	case LC_MSG_DIAL:
		return lc__sink_dial(s, &m.dial, e);
	case LC_MSG_SINK_TARGET:
		r = lc_sink_target(s, &m.sink_target, e);
		OPENSSL_cleanse(m.sink_target.takeover,
		    sizeof(m.sink_target.takeover));
		return r;
	case LC_MSG_LISTEN:
		r = lc_sink_listen(s, &m.listen, e);
		OPENSSL_cleanse(&m.listen, sizeof(m.listen));
		return r;
	case LC_MSG_FILE:
		if (s->nomore)
			return lc_err_set(e, LC_ERR_PROTO, "FILE %u after "
			    "SINK_NOMORE", m.file.id);
		return lc__sink_file(s, &m.file, e);
	case LC_MSG_SINK_NOMORE:
		return lc_sink_nomore(s, e);
	case LC_MSG_FILE_SUM:
		return lc__sink_file_sum(s, &m.file_sum, e);
	case LC_MSG_FILE_ABORT:
		return lc__sink_file_abort(s, &m.file_abort, e);
	case LC_MSG_FILE_LEN:
		return lc__sink_file_len(s, &m.file_len, e);
	case LC_MSG_PREFIX_MATCH:
		return lc__sink_prefix_match(s, &m.prefix_match, e);
	case LC_MSG_STOP:
		return lc_sink_stop(s);
	case LC_MSG_DEL_SCAN:
		return lc__sink_del_scan(s, &m.del_scan, e);
	case LC_MSG_DELETE:
		return lc__sink_delete(s, &m.delete, e);
	default:
		break;
	}
 bad:
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
		f = lc__sink_table_get(s, s->lw_file);
		if (f == NULL && s->lw_file <= s->files_total) {
			s->lw_file++;	/* announced, not in it: done, freed */
			continue;
		}
		if (f == NULL || (f->state != LC_SF_DONE && (f->wf == NULL ||
		    !f->written)))
			break;
		s->lw_file++;
	}
	p.file = s->lw_file;
	p.written = f != NULL && f->wf != NULL ? lc_wfile_written(f->wf) : 0;
	return lc_msg_put_progress(s->port.out, &p);
}

/* See sink_int.h. */
int
lc__sink_maybe_done(struct lc_sink *s)
{
	struct lc_msg_xfer_done d;

	if (s->done_sent || s->stopped || (!s->nomore && s->recv.ended < s->nstreams) ||
	    s->files_done < s->files_total || s->fin.busy)
		return 0;
	if ((s->tgt.flags & LC_TGT_TREE) && s->tree.dirs_state == 0) {
		s->tree.dirs_state = 1;
		return lc_jobq_push(s->jobs, lc__sink_dirs_job, s);
	}
	if ((s->tgt.flags & LC_TGT_TREE) && s->tree.dirs_state != 2)
		return 0;
	s->done_sent = 1;
	lc__sink_hol_report(s);
	memset(&d, 0, sizeof(d));
	d.bytes = atomic_load(&s->written);
	d.files = s->files_done;
	(void)lc_sink_progress(s);
	return lc_msg_put_xfer_done(s->port.out, LC_MSG_SINK_DONE, &d);
}

static int
lc_sink_event(void *role, const struct lc_event *ev, struct lc_err *e)
{
	struct lc_sink *s = role;
	struct lc_sfile *f;
	int r;

	if (s->stopped)		/* STOPPED said it all */
		return 0;
	switch (ev->type) {
	case LC_EV_FILE_WRITTEN:
		if ((f = lc__sink_table_get(s, ev->a)) == NULL)
			break;
		f->written = 1;
		if ((r = lc_sink_progress(s)) != 0)
			return r;
		return lc__sink_maybe_finish(s, f);
	case LC_EV_FILE_DONE:
		if ((f = lc__sink_table_get(s, ev->a)) == NULL)
			break;
		return lc__sink_file_finished(s, f, ev);
	case LC_EV_BATCH_DONE:
		if ((r = lc__sink_batch_done(s)) != 0)
			return r;
		return lc__sink_maybe_done(s);
	case LC_EV_DIRS_DONE:
		s->tree.dirs_state = 2;
		return lc__sink_maybe_done(s);
	case LC_EV_PREFIX_DONE:
		if ((f = lc__sink_table_get(s, ev->a)) == NULL ||
		    f->state != LC_SF_PREFIX)
			break;
		return lc__sink_send_prefix(s, f);
	case LC_EV_RESUME_READY:
		if ((f = lc__sink_table_get(s, ev->a)) == NULL ||
		    f->state != LC_SF_SEED)
			break;
		return lc__sink_start_file(s, f, e);
	case LC_EV_RECEIVER_DONE:
		s->recv.ended++;
		return lc__sink_maybe_done(s);
	case LC_EV_STREAM_ACK:
		return lc_sink_progress(s);
	case LC_EV_STREAM_LOST:
		if (ev->a >= s->nstreams)
			break;
		return lc__sink_stream_lost(s, ev->a, &ev->err, e);
	case LC_EV_FILE_NOSPACE:
		return lc__sink_nospace(s, ev->a, &ev->err, e);
	default:
		break;
	}
	return lc_err_set(e, LC_ERR_INTERNAL, "sink: event %d", ev->type);
}

/* Once a second: the stall checks (receiver.c) and the heartbeat. */
static int
lc_sink_tick(void *role, uint64_t now_ms)
{
	struct lc_sink *s = role;

	if (!s->listening || s->done_sent || s->stopped)
		return 0;
	lc__sink_recv_tick(s, now_ms);
	return lc_sink_progress(s);
}

static void
lc_sink_abort(void *role)
{
	struct lc_sink *s = role;

	if (s == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	lc__sink_recv_abort_locked(s);
	pthread_cond_broadcast(&s->cv);
	/* a target program: the copy is over */
	lc__sink_pipe_kill_locked(s, SIGTERM);
	pthread_mutex_unlock(&s->mu);
	lc_wake_signal(&s->acc.wake);
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
	lc__sink_pipe_kill_locked(s, SIGKILL);
	pthread_mutex_unlock(&s->mu);
	lc_jobq_free(s->jobs, NULL);
	free(s->fin.batch);
	s->fin.batch = NULL;
	lc__sink_accept_join(s);
	lc__sink_recv_join(s);
	/* a copy that failed here (no STOP): its new empty part files go */
	lc__sink_drop_parts(s, 0);
	/* and an unfinished tree's complete directories get their modes */
	lc__sink_dirs_partial(s);
	/* files first: their waiting blocks go back to the pools */
	for (uint32_t i = 0; i < lc_idmap_slots(&s->files); i++)
		lc__sink_sfile_free(lc_idmap_slot(&s->files, i));
	lc_idmap_free(&s->files);
	free(s->fin.wait);
	lc__sink_tree_free(s);
	lc__sink_del_free(s);
	lc__sink_recv_free(s);
	lc_wake_close(&s->acc.wake);
	lc_tls_free(s->acc.tls);
	lc_target_close(&s->tgt);
	lc__sink_pipe_free(s);
	lc_secmem_free(s->acc.key, LC_KEY_LEN);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->mem.hol_mu);
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
