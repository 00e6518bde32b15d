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

#include "lanecp/log.h"
#include "lanecp/parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

/*
 * Memory.  The receive buffers are the sink's only large allocation:
 * streams x (quota + 1 spare) x block.  They get what --max-memory
 * (default 64 MiB) leaves after a fixed allowance for the process itself
 * (code and libraries, control buffers, TLS state, threads, hashing), and
 * the quota aims at LC_SINK_QUOTA_TARGET as it always has, so the default
 * copy uses what it did before.
 */
#define LC_SINK_MEM_RESERVE (16u << 20)
#define LC_SINK_QUOTA_TARGET (32u << 20)
#define LC_MIN_QUOTA 2
#define LC_MAX_QUOTA 16
/*
 * Files per transfer: ids are 1 .. the count the controller announced in
 * SINK_TARGET, which is at most this (the id table is 8 bytes a file).
 */
#define LC_SINK_MAX_FILES 65536u
#define LC_MAX_STREAM_LOSSES 8	/* per stream: then the copy fails */

static int
lc_sink_new(const struct lc_role_port *port, void **out)
{
	struct lc_sink *s;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -LC_ERR_NOMEM;
	s->port = *port;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	atomic_init(&s->bytes, 0);
	s->accept_wake.rfd = s->accept_wake.wfd = -1;
	s->tgt.dir_fd = -1;
	s->lw_file = 1;
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

static int
lc_sink_target(struct lc_sink *s, const struct lc_msg_sink_target *m,
    struct lc_err *e)
{
	struct lc_msg_target_ok ok;
	int r;

	if (s->target_set)
		return lc_err_set(e, LC_ERR_PROTO, "second SINK_TARGET");
	if (m->nsources == 0 || m->nsources > LC_SINK_MAX_FILES)
		return lc_err_set(e, LC_ERR_PROTO, "SINK_TARGET: %u files "
		    "announced (1 to %u)", m->nsources, LC_SINK_MAX_FILES);
	s->files_max = m->nsources;
	if ((r = lc_target_resolve(&s->tgt, s->port.conf, m->target, m->flags,
	    s->port.set.umask, e)) != 0)
		return r;
	s->target_set = 1;
	memset(&ok, 0, sizeof(ok));
	ok.is_dir = (uint8_t)s->tgt.is_dir;
	snprintf(ok.resolved, sizeof(ok.resolved), "%s", s->tgt.path);
	return lc_msg_put_target_ok(s->port.out, &ok);
}

static int
lc_sink_table_put(struct lc_sink *s, struct lc_sfile *f)
{
	int r = 0;

	/* ids are bounded by what was announced, so is the table */
	if (f->id == 0 || f->id > s->files_max)
		return -LC_ERR_PROTO;
	pthread_mutex_lock(&s->mu);
	if (f->id >= s->files_cap) {
		uint32_t ncap = s->files_cap < 16 ? 16 : s->files_cap;
		struct lc_sfile **n;
		/* no overflow: ncap stays <= 2 * (LC_SINK_MAX_FILES + 1) */
		while (ncap <= f->id)
			ncap *= 2;
		if (ncap > s->files_max + 1)
			ncap = s->files_max + 1;
		n = realloc(s->files, (size_t)ncap * sizeof(*n));
		if (n == NULL) {
			r = -LC_ERR_NOMEM;
			goto out;
		}
		memset(n + s->files_cap, 0,
		    (size_t)(ncap - s->files_cap) * sizeof(*n));
		s->files = n;
		s->files_cap = ncap;
	}
	if (s->files[f->id] != NULL) {
		r = -LC_ERR_PROTO;
		goto out;
	}
	s->files[f->id] = f;
 out:
	pthread_mutex_unlock(&s->mu);
	return r;
}

static struct lc_sfile *
lc_sink_table_get(struct lc_sink *s, uint32_t id)
{
	struct lc_sfile *f = NULL;

	pthread_mutex_lock(&s->mu);
	if (id < s->files_cap)
		f = s->files[id];
	pthread_mutex_unlock(&s->mu);
	return f;
}

/* A receiver's lookup (sink_int.h). */
struct lc_wfile *
lc_sink_writer(struct lc_sink *s, uint32_t id)
{
	struct lc_wfile *wf = NULL;

	pthread_mutex_lock(&s->mu);
	if (id < s->files_cap && s->files[id] != NULL)
		wf = s->files[id]->wf;
	pthread_mutex_unlock(&s->mu);
	return wf;
}

static void
lc_sfile_free(struct lc_sfile *f)
{
	if (f == NULL)
		return;
	lc_wfile_free(f->wf);
	lc_csum_free(f->csum);
	free(f->prefix);
	lc_part_close(&f->p);
	free(f);
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

/* Resume: the checksum of the kept prefix, before new bytes arrive. */
static void
lc_sink_seed_job(void *arg)
{
	struct lc_sfile *f = arg;
	struct lc_sink *s = f->sink;
	struct lc_err e;

	lc_err_clear(&e);
	if (f->csum != NULL && f->start > 0 &&
	    lc_csum_fd(f->csum, f->p.fd, f->start, f->p.final, &e) != 0) {
		lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
		return;
	}
	lc_role_post(&s->port, LC_EV_RESUME_READY, f->id, 0, NULL);
}

/* Everything written (and the source's checksum known): finish. */
static void
lc_sink_finish_job(void *arg)
{
	struct lc_sfile *f = arg;
	struct lc_sink *s = f->sink;
	char sum[LC_CSUM_TEXT_MAX] = "";
	struct lc_err e;

	lc_err_clear(&e);
	if (f->csum != NULL) {
		lc_csum_text(f->csum, sum);
		if (strcmp(sum, f->expect) != 0) {
			lc_err_set(&e, LC_ERR_CHECKSUM, "%s: checksum mismatch: "
			    "the source has %s, what was written has %s; not "
			    "renamed into place", f->p.final, f->expect, sum);
			lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
			return;
		}
	}
	if (lc_part_finalize(&s->tgt, &f->p, &e) != 0) {
		lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
		return;
	}
	lc_log_debug("%s complete", f->p.final);
	lc_role_post_text(&s->port, LC_EV_FILE_DONE, f->id, f->p.size, sum);
}

/* Main thread: queue the finish once both conditions hold. */
static int
lc_sink_maybe_finish(struct lc_sink *s, struct lc_sfile *f)
{
	if (f->state != LC_SF_RECV || !f->written ||
	    (f->csum != NULL && f->expect[0] == '\0'))
		return 0;
	f->state = LC_SF_FINISH;
	return lc_jobq_push(s->jobs, lc_sink_finish_job, f);
}

/* Ready to receive from f->start on. */
static int
lc_sink_start_file(struct lc_sink *s, struct lc_sfile *f, struct lc_err *e)
{
	struct lc_msg_file_ready ready;
	int r;

	struct lc_wfile *wf;

	if ((r = lc_wfile_new(f->p.fd, !f->p.direct, f->start, f->p.size,
	    f->p.final, &wf)) != 0)
		return lc_err_set(e, -r, "out of memory");
	if (f->csum != NULL)
		lc_wfile_set_csum(wf, f->csum);
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
	if (f->start == f->p.size) {	/* nothing will arrive for it */
		f->written = 1;
		return lc_sink_maybe_finish(s, f);
	}
	return 0;
}

static int
lc_sink_file(struct lc_sink *s, const struct lc_msg_file *m, struct lc_err *e)
{
	struct lc_sfile *f = NULL;
	uint64_t kept;
	int r;

	if (!s->target_set || !s->listening)
		return lc_err_set(e, LC_ERR_PROTO, "FILE before target/LISTEN");
	if (m->kind != LC_KIND_REG)
		return lc_err_set(e, LC_ERR_PROTO, "FILE: unsupported kind");
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return -LC_ERR_NOMEM;
	f->id = m->id;
	f->sink = s;
	if ((r = lc_part_init(&s->tgt, m->name, m->size, m->mode, &f->p,
	    e)) != 0)
		goto out;
	if ((r = lc_part_open(&s->tgt, &f->p, &kept, e)) != 0 ||
	    (!f->p.direct && (r = lc_part_space(&s->tgt, &f->p,
	    f->p.size - kept, e)) != 0))
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
		r = lc_err_set(e, -r, "FILE: id %u is a duplicate or not "
		    "in 1..%u", f->id, s->files_max);
		goto out;
	}
	s->files_total++;
	if (kept > 0) {
		lc_log_verbose("%s: checking the %llu bytes already there",
		    f->p.final, (unsigned long long)kept);
		f->state = LC_SF_PREFIX;
		return lc_jobq_push(s->jobs, lc_sink_prefix_job, f);
	}
	return lc_sink_start_file(s, f, e);	/* f is in the table now */
 out:
	lc_sfile_free(f);
	return r;
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
	char a[32];

	if (f == NULL || f->state != LC_SF_MATCH || m->match > f->prefix_len)
		return lc_err_set(e, LC_ERR_PROTO, "unexpected PREFIX_MATCH for "
		    "file %u", m->id);
	if (m->match < f->prefix_len)
		lc_log_warn("%s: the partial file matches the source only up "
		    "to %s; the rest is copied again", f->p.final,
		    lc_fmt_bytes(a, sizeof(a), m->match));
	else
		lc_log_verbose("%s: resuming after %s", f->p.final,
		    lc_fmt_bytes(a, sizeof(a), m->match));
	if (ftruncate(f->p.fd, (off_t)m->match) != 0)
		return lc_err_sys(e, LC_ERR_IO, errno, "truncate %s",
		    f->p.final);
	f->start = m->match;
	f->state = LC_SF_SEED;
	return lc_jobq_push(s->jobs, lc_sink_seed_job, f);
}

/*
 * Streams, block size and quota within the memory budget, whatever the
 * controller asked: buffers = streams x (quota + 1 spare) x block must fit
 * in budget - LC_SINK_MEM_RESERVE.  Clamped in order: the quota (down to
 * LC_MIN_QUOTA), then the block size (to a multiple of 4 KiB, down to
 * LC_MIN_BLOCK), then the streams.  Never more streams than max_streams
 * (what our HELLO advertised) nor more than asked for.
 */
static void
lc_sink_limits(uint64_t budget, uint32_t max_streams, uint32_t *streams,
    uint32_t *block, uint32_t *quota)
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
	/* ... no more than the budget allows (with the spare) ... */
	if (q + 1 > bufs / (st * b))
		q = bufs / (st * b) > LC_MIN_QUOTA ? bufs / (st * b) - 1 : 0;
	if (q < LC_MIN_QUOTA) {
		q = LC_MIN_QUOTA;
		/* ... then smaller blocks ... */
		b = bufs / (st * (LC_MIN_QUOTA + 1)) & ~(uint64_t)4095;
		if (b > *block)
			b = *block;
		if (b < LC_MIN_BLOCK) {
			/* ... then fewer streams */
			b = LC_MIN_BLOCK;
			st = bufs / (b * (LC_MIN_QUOTA + 1));
		}
	}
	*streams = (uint32_t)st;
	*block = (uint32_t)b;
	*quota = (uint32_t)q;
}

static int
lc_sink_listen(struct lc_sink *s, const struct lc_msg_listen *m,
    struct lc_err *e)
{
	struct lc_msg_listening l;
	char name[32];
	int r;

	if (s->listening)
		return lc_err_set(e, LC_ERR_PROTO, "second LISTEN");
	s->listening = 1;
	s->nstreams = m->streams;
	s->block = m->block;
	lc_sink_limits(s->port.set.max_memory, s->port.set.max_streams,
	    &s->nstreams, &s->block, &s->quota);
	if (s->nstreams != m->streams || s->block != m->block)
		lc_log_verbose("sink: %u streams of %u KiB blocks asked for, "
		    "%u of %u KiB granted (memory bound %llu MiB)", m->streams,
		    m->block >> 10, s->nstreams, s->block >> 10,
		    (unsigned long long)(s->port.set.max_memory >> 20));
	s->window = m->window;
	s->flags = m->flags;
	s->csum = m->csum;
	s->stall_s = m->stall_s;
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
		if ((r = lc_sock_listen(s->window, &rv->listen_fd, &rv->port,
		    e)) != 0)
			return r;
		l.ports[i] = rv->port;
	}
	if (lc_wake_open(&s->accept_wake) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "pipe");
	for (uint32_t i = 0; i < s->nstreams; i++) {
		snprintf(name, sizeof(name), "lc-recv-%u", i);
		if (lc_thread_start(&s->recv[i].thread, name,
		    lc_receiver_main, &s->recv[i]) != 0)
			return lc_err_set(e, LC_ERR_INTERNAL, "thread");
		s->recv[i].started = 1;
	}
	if (lc_thread_start(&s->acceptor, "lc-accept", lc_acceptor_main,
	    s) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "thread");
	s->acceptor_started = 1;
	l.streams = s->nstreams;
	l.window = s->window != 0 ? lc_sock_rcvbuf(s->recv[0].listen_fd) : 0;
	l.block = s->block;
	l.quota = s->quota;
	lc_log_debug("listening on %u ports, quota %u x %u bytes",
	    s->nstreams, s->quota, s->block);
	return lc_msg_put_listening(s->port.out, &l);
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
	} m;
	int r;

	switch (type) {
	case LC_MSG_SINK_TARGET:
		if (lc_msg_get_sink_target(p, n, &m.tgt) != 0)
			break;
		return lc_sink_target(s, &m.tgt, e);
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
	case LC_MSG_PREFIX_MATCH:
		if (lc_msg_get_prefix_match(p, n, &m.match) != 0)
			break;
		return lc_sink_prefix_match(s, &m.match, e);
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
	p.bytes = atomic_load(&s->bytes);
	for (;;) {
		f = lc_sink_table_get(s, s->lw_file);
		if (f == NULL || f->wf == NULL || !f->written)
			break;
		s->lw_file++;
	}
	p.file = s->lw_file;
	p.written = f != NULL && f->wf != NULL ? lc_wfile_written(f->wf) : 0;
	return lc_msg_put_progress(s->port.out, &p);
}

static int
lc_sink_maybe_done(struct lc_sink *s)
{
	struct lc_msg_xfer_done d;

	if (s->done_sent || s->ended < s->nstreams ||
	    s->files_done < s->files_total)
		return 0;
	s->done_sent = 1;
	d.bytes = atomic_load(&s->bytes);
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
	case LC_EV_STREAM_LOST:
		if (ev->a >= s->nstreams)
			break;
		return lc_sink_stream_lost(s, ev->a, &ev->err, e);
	default:
		break;
	}
	return lc_err_set(e, LC_ERR_INTERNAL, "sink: event %d", ev->type);
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

	if (!s->listening || s->done_sent)
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
		atomic_store(&rv->stalled, true);
		pthread_mutex_lock(&s->mu);
		lc_conn_shutdown(&rv->conn);
		pthread_mutex_unlock(&s->mu);
	}
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
	pthread_mutex_unlock(&s->mu);
	lc_wake_signal(&s->accept_wake);
}

static void
lc_sink_free(void *role)
{
	struct lc_sink *s = role;

	if (s == NULL)
		return;
	lc_sink_abort(s);
	lc_jobq_free(s->jobs, NULL);
	if (s->acceptor_started)
		pthread_join(s->acceptor, NULL);
	for (uint32_t i = 0; i < s->nstreams; i++) {
		if (s->recv[i].started)
			pthread_join(s->recv[i].thread, NULL);
	}
	/* files first: their waiting blocks go back to the pools */
	for (uint32_t i = 0; i < s->files_cap; i++)
		lc_sfile_free(s->files[i]);
	free(s->files);
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
	OPENSSL_cleanse(s->key, sizeof(s->key));
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

static int
lc_sink_owns(uint8_t type)
{
	switch (type) {
	case LC_MSG_SINK_TARGET:
	case LC_MSG_LISTEN:
	case LC_MSG_FILE:
	case LC_MSG_FILE_SUM:
	case LC_MSG_PREFIX_MATCH:
		return 1;
	default:
		return 0;
	}
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
