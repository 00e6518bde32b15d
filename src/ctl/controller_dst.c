/*
 * The controller's checks of the sink agent's messages (TARGET_OK,
 * FILE_READY, FILE_PREFIX, FILE_HASHES, FILE_SKIP, FILE_DONE, STREAM_LOST, PROGRESS,
 * SINK_DONE, ...): only announced ids, each step once and in protocol
 * order, counts that never go backwards; then forwarded to the source or
 * used.
 */
#include "controller_int.h"
#include "clock.h"
#include "log.h"

#include <stdio.h>
#include <string.h>

static int
lc_ctl_file_done(struct lc_ctl *c, const struct lc_msg_file_done *m,
    struct lc_err *e)
{
	struct lc_ctl_file *f = lc__ctl_file_find(c, m->id);
	int reg = f != NULL && f->kind == LC_KIND_REG;
	/* a sink that said LC_HELLO_COUNTS sends the flags, one from before
	   none (its files all count as copied) */
	int flags = (c->dst_ep.hello.flags & LC_HELLO_COUNTS) != 0;
	int replaced = (m->flags & LC_DONE_REPLACED) != 0;
	int r;

	/* a directory or link is made at once: no FILE_READY, no bytes; and
	   only a regular file is counted as replaced (as "updated") */
	if (f == NULL || f->done || (reg && !f->ready) ||
	    m->has_flags != flags || (replaced && !reg) ||
	    (f->stream && !f->len_known) ||
	    (!reg && (f->ready || m->bytes != 0 || m->checksum[0] != '\0')) ||
	    m->bytes != f->size ||
	    (m->checksum[0] != '\0' && !lc__ctl_csum_ok(c, m->checksum)))
		return lc_err_set(e, LC_ERR_PROTO, "%s: bad FILE_DONE for "
		    "file %u", c->dst_ep.name, m->id);
	c->prog.t_progress = lc_now_ms();
	if (reg) {
		c->files.written++;
		if (replaced) {
			c->files.updated++;
			c->files.updated_bytes += m->bytes;
		}
		lc_log_verbose("%s: %s, %llu bytes%s%s", f->name,
		    replaced ? "updated" : "done",
		    (unsigned long long)m->bytes, m->checksum[0] ? ", " : "",
		    m->checksum);
	} else {
		c->files.settled++;
	}
	if (m->checksum[0] != '\0')
		lc__ctl_record_sum(c, f, m->checksum);
	if (c->o->made_log != NULL &&
	    (r = lc_feed_push_name(c->o->made_log, f->kind, f->name)) != 0)
		return lc_err_set(e, -r, "out of memory");
	if ((r = lc__ctl_fed_publish(c, f)) != 0 ||
	    (r = lc__ctl_file_finish(c, f)) != 0)
		return lc_err_set(e, -r, "control output");
	return lc__ctl_maybe_nomore(c);
}

/*
 * -v for a file -u skipped whose attributes the sink updated (-p,
 * --owner): "NAME: up to date, mode and times updated".  The message was
 * checked when it was decoded (lc_skip_set_get).
 */
static void
lc_ctl_say_updated(const char *name, const char *msg)
{
	static const char *const word[] = { "mode", "owner", "times" };
	char said[64];
	unsigned set;
	size_t n = 0;
	int k = 0, left;

	if (lc_skip_set_get(msg, &set) != 0)
		return;
	left = __builtin_popcount(set);
	said[0] = '\0';
	for (unsigned i = 0; i < 3; i++) {
		if (!(set & (1u << i)))
			continue;
		left--;
		n += (size_t)snprintf(said + n, sizeof(said) - n, "%s%s",
		    k++ == 0 ? "" : left == 0 ? " and " : ", ", word[i]);
	}
	lc_log_verbose("%s: up to date, %s updated", name, said);
}

/*
 * FILE_SKIP: the sink leaves a file as it is (-u, -O) or could not write
 * it (reported, the copy goes on).  In place of FILE_READY: the source
 * drops a regular file it was keeping open for it.
 */
static int
lc_ctl_dst_skip(struct lc_ctl *c, const struct lc_msg_file_skip *m,
    struct lc_err *e)
{
	struct lc_ctl_file *f = lc__ctl_file_find(c, m->id);
	int r;

	if (f != NULL && f->aborted && !f->done && m->why == LC_SKIP_FAILED) {
		/* the sink dropped what the source aborted: said already */
		c->prog.t_progress = lc_now_ms();
		if ((r = lc__ctl_file_finish(c, f)) != 0)
			return lc_err_set(e, -r, "control output");
		return lc__ctl_maybe_nomore(c);
	}
	int dry = m->why >= LC_SKIP_DRY_NEW;

	if (f == NULL || f->done || f->ready ||
	    (dry && !c->o->dry_run) ||
	    (m->why != LC_SKIP_FAILED && !dry && f->kind == LC_KIND_DIR) ||
	    (f->prefixed && !f->matched))
		return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent an "
		    "unexpected FILE_SKIP for file %u", c->dst_ep.name, m->id);
	/* after a failed chain hop (fanout.c): a file in the way that the
	   hop did not make is the target's own, not replaced without -f */
	int own = m->why == LC_SKIP_EXISTS && c->o->made != NULL &&
	    !lc_feed_has(c->o->made, f->name);

	if (m->why == LC_SKIP_FAILED || own) {
		char where[LC_PATH_MAX + 600];
		lc__ctl_file_where(c, f, where, sizeof(where));
		lc__ctl_failed(c, where, (int)f->kind,
		    own ? "file exists (use -f to overwrite)" : m->msg);
		c->res->nrefused++;
	} else if (m->why == LC_SKIP_EXISTS && c->o->made != NULL)
		lc_log_verbose("%s: made by the chain's hop, kept", f->name);
	else if (dry && m->why != LC_SKIP_DRY_SAME)
		lc__ctl_dry_line(c, m->why == LC_SKIP_DRY_NEW ? "new" :
		    "update", f->name, f->kind);
	else if (m->why == LC_SKIP_UPTODATE && m->msg[0] != '\0' &&
	    c->o->dry_run) {
		/* -n: what the real run says "up to date, ... updated" of */
		lc__ctl_dry_line(c, "attrs", f->name, f->kind);
		c->res->dry_attrs++;
	} else if (m->why == LC_SKIP_UPTODATE && m->msg[0] != '\0')
		lc_ctl_say_updated(f->name, m->msg);
	else if (!dry)
		lc_log_verbose("%s: %s, skipped", f->name,
		    m->why == LC_SKIP_UPTODATE ? "up to date" : "exists");
	if (m->why == LC_SKIP_DRY_NEW)
		c->res->dry_new++;
	else if (m->why == LC_SKIP_DRY_UPDATE)
		c->res->dry_update++;
	else if (m->why != LC_SKIP_FAILED && !dry && !own)
		c->res->skipped++;
	if (f->kind == LC_KIND_REG)
		c->files.bytes_left += f->size;
	c->files.settled++;
	c->prog.t_progress = lc_now_ms();
	if (f->kind == LC_KIND_REG &&
	    (r = lc_msg_put_file_skip(&c->src.out, m)) != 0)
		return lc_err_set(e, -r, "control output");
	/* the target holds it as listed: the next target's copy takes it
	   (-O's own file there is not the source's: no overlapped chain) */
	if (m->why == LC_SKIP_UPTODATE &&
	    (r = lc__ctl_fed_publish(c, f)) != 0)
		return lc_err_set(e, -r, "out of memory");
	if ((r = lc__ctl_file_finish(c, f)) != 0)
		return lc_err_set(e, -r, "control output");
	return lc__ctl_maybe_nomore(c);
}

/* Sink messages forwarded to the source: only announced ids, in order. */
static int
lc_ctl_dst_ready(struct lc_ctl *c, const struct lc_msg_file_ready *m,
    struct lc_err *e)
{
	struct lc_ctl_file *f = lc__ctl_file_find(c, m->id);
	int r;

	if (f == NULL || f->ready || f->done || f->kind != LC_KIND_REG ||
	    m->start > f->size || (f->stream && m->start != 0) ||
	    (f->prefixed && (!f->matched || m->start > f->match)))
		return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent an "
		    "unexpected FILE_READY for file %u (from byte %llu)",
		    c->dst_ep.name, m->id, (unsigned long long)m->start);
	f->ready = 1;
	c->files.settled++;
	c->files.sent++;
	/* the sink took the name: a file there later is this run's */
	if (c->o->made_log != NULL &&
	    (r = lc_feed_push_name(c->o->made_log, f->kind, f->name)) != 0)
		return lc_err_set(e, -r, "out of memory");
	/* --also's chain: the next target may read it as it is written */
	if (c->o->feed_out != NULL && (r = lc__ctl_fed_ready(c, f, m)) != 0)
		return lc_err_set(e, -r, "out of memory");
	if ((r = lc_msg_put_file_ready(&c->src.out, m)) != 0)
		return lc_err_set(e, -r, "control output");
	return lc__ctl_maybe_nomore(c);
}

static int
lc_ctl_dst_prefix(struct lc_ctl *c, const struct lc_msg_file_prefix *m,
    struct lc_err *e)
{
	struct lc_ctl_file *f = lc__ctl_file_find(c, m->id);

	/* -a's partial files, and -u's delta from the file it replaces */
	if (f == NULL || !(c->o->resume || (c->o->update &&
	    !c->o->whole_file)) || f->prefixed || f->ready ||
	    f->done || f->kind != LC_KIND_REG || f->stream ||
	    m->length > f->size)
		return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent an "
		    "unexpected FILE_PREFIX for file %u (%llu bytes)",
		    c->dst_ep.name, m->id, (unsigned long long)m->length);
	f->prefixed = 1;
	f->prefix_len = m->length;
	f->chunk = m->chunk;
	c->prog.t_progress = lc_now_ms();
	return lc_msg_put_file_prefix(&c->src.out, m);
}

/*
 * -u's delta with small chunks: the hash list in slices, in order.  The
 * first opens it as FILE_PREFIX does; each later one must be the next
 * slice of the same list.  PREFIX_MATCH is accepted once all are in.
 */
static int
lc_ctl_dst_hashes(struct lc_ctl *c, const struct lc_msg_file_hashes *m,
    struct lc_err *e)
{
	struct lc_ctl_file *f = lc__ctl_file_find(c, m->id);
	int next = f != NULL && f->prefixed && f->hashes_total != 0 &&
	    f->hashes_got < f->hashes_total && m->first == f->hashes_got &&
	    m->length == f->prefix_len && m->chunk == f->chunk &&
	    m->total == f->hashes_total;

	if (f == NULL || !c->o->update || c->o->whole_file ||
	    !(c->src.hello.flags & LC_HELLO_HASHES) || f->ready ||
	    f->done || f->kind != LC_KIND_REG || f->stream ||
	    m->length > f->size || (f->prefixed ? !next : m->first != 0))
		return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent an "
		    "unexpected FILE_HASHES for file %u (%u of %u hashes "
		    "from %u)", c->dst_ep.name, m->id, m->n, m->total,
		    m->first);
	if (!f->prefixed) {
		f->prefixed = 1;
		f->prefix_len = m->length;
		f->chunk = m->chunk;
		f->hashes_total = m->total;
	}
	f->hashes_got += m->n;
	c->prog.t_progress = lc_now_ms();
	return lc_msg_put_file_hashes(&c->src.out, m);
}

static int
lc_ctl_dst_lost(struct lc_ctl *c, const struct lc_msg_stream_lost *m,
    struct lc_err *e)
{
	const struct lc_ctl_file *f = lc__ctl_file_find(c, m->last_file);

	/* its last block may belong to a file that is done by now */
	if (c->dp.state == LC_CTL_DP_NONE || m->stream >= c->streams ||
	    m->has_last > 1 || (m->has_last && (m->last_file == 0 ||
	    m->last_file > c->files.total || (f != NULL && (!f->ready ||
	    m->last_off >= f->size)))))
		return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent an "
		    "unexpected STREAM_LOST for stream %u of %u",
		    c->dst_ep.name, m->stream, c->streams);
	lc_log_warn("data stream %u lost (%s); resending its blocks "
	    "on the others", m->stream, m->reason);
	lc__ctl_path_lost(c, m->stream);
	return lc_msg_put_stream_lost(&c->src.out, m);
}

/*
 * The sink's count of bytes written (PROGRESS, SINK_DONE): each byte is
 * counted once, when the ordered writer writes it (sink.c), so the count
 * never goes backwards and never exceeds what the files announced so far
 * hold (while a stream's length is unknown, that has no bound).
 */
int
lc__ctl_sink_bytes(const struct lc_ctl *c, const char *what, uint64_t bytes,
    struct lc_err *e)
{
	if (bytes < c->bytes_done)
		return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent a bad %s: "
		    "its byte count went backwards (%llu after %llu)",
		    c->dst_ep.name, what, (unsigned long long)bytes,
		    (unsigned long long)c->bytes_done);
	if (c->files.pipes_open == 0 && bytes > c->files.bytes)
		return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent a bad %s: "
		    "%llu bytes written of %llu", c->dst_ep.name, what,
		    (unsigned long long)bytes,
		    (unsigned long long)c->files.bytes);
	return 0;
}

/*
 * The sink's low-water mark, forwarded to the source as ACK: an announced
 * file and an offset within it, or the id after the last with nothing
 * written.  (bytes counts resent blocks too, so it has no upper bound.)
 */
static int
lc_ctl_dst_progress(struct lc_ctl *c, const struct lc_msg_progress *m,
    struct lc_err *e)
{
	const struct lc_ctl_file *f = lc__ctl_file_find(c, m->file);
	struct lc_msg_ack ack;
	int r;

	/* the sink's mark never trails what it has said is done */
	if (m->file > c->files.total + 1 || m->file < c->files.lo ||
	    (f == NULL ? m->written != 0 : m->written > f->size))
		return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent a bad "
		    "PROGRESS (file %u, %llu bytes written)", c->dst_ep.name,
		    m->file, (unsigned long long)m->written);
	/* and, like its byte count, it only moves forward */
	if (m->file < c->chk.mark_file ||
	    (m->file == c->chk.mark_file && m->written < c->chk.mark_written))
		return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent a bad "
		    "PROGRESS: its mark went backwards (file %u byte %llu, "
		    "after file %u byte %llu)", c->dst_ep.name, m->file,
		    (unsigned long long)m->written, c->chk.mark_file,
		    (unsigned long long)c->chk.mark_written);
	if ((r = lc__ctl_sink_bytes(c, "PROGRESS", m->bytes, e)) != 0)
		return r;
	c->chk.mark_file = m->file;
	c->chk.mark_written = m->written;
	if (c->o->feed_out != NULL)
		lc__ctl_fed_marks(c, m->file, m->written);
	lc__ctl_moved(c, m->bytes);
	c->bytes_done = m->bytes;
	if (c->dp.state == LC_CTL_DP_NONE || c->src_done)
		return 0;
	ack.file = m->file;
	ack.written = m->written;
	/* the source lets go of what is below the mark, then the credit
	   may move (controller_ring.c) */
	if ((r = lc_msg_put_ack(&c->src.out, &ack)) != 0 ||
	    (r = lc__ctl_credit_move(c)) != 0)
		return lc_err_set(e, -r, "control output");
	return 0;
}

int
lc__ctl_from_dst(struct lc_ctl *c, uint8_t type, const uint8_t *p, size_t n,
    struct lc_err *e)
{
	union lc_msg_any m;
	int r;

	if (lc_msg_get(type, p, n, &m) != 0)
		goto bad;
	switch (type) {
	case LC_MSG_FILE_SKIP:
		return lc_ctl_dst_skip(c, &m.file_skip, e);
	case LC_MSG_TARGET_OK:
		/* one answer to the one SINK_TARGET */
		if (c->target_ok)
			return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent "
			    "TARGET_OK twice", c->dst_ep.name);
		/* at least what every sink grants, at most what was asked */
		if (m.target_ok.inflight < LC_FILES_INFLIGHT ||
		    m.target_ok.inflight > c->files.asked)
			return lc_err_set(e, LC_ERR_PROTO, "%s: sink granted "
			    "%u files in flight (%u to %u)", c->dst_ep.name,
			    m.target_ok.inflight, LC_FILES_INFLIGHT,
			    c->files.asked);
		c->target_ok = true;
		c->target_is_dir = m.target_ok.is_dir;
		if ((r = lc__ctl_files_window(c, m.target_ok.inflight)) != 0)
			return lc_err_set(e, -r, "control output");
		return 0;
	case LC_MSG_FILE_PREFIX:
		return lc_ctl_dst_prefix(c, &m.file_prefix, e);
	case LC_MSG_FILE_HASHES:
		return lc_ctl_dst_hashes(c, &m.file_hashes, e);
	case LC_MSG_STREAM_LOST:
		return lc_ctl_dst_lost(c, &m.stream_lost, e);
	case LC_MSG_LISTENING:
		return lc__ctl_listening(c, &m.listening, e);
	case LC_MSG_FILE_READY:
		return lc_ctl_dst_ready(c, &m.file_ready, e);
	case LC_MSG_FILE_DONE:
		return lc_ctl_file_done(c, &m.file_done, e);
	case LC_MSG_PROGRESS:
		return lc_ctl_dst_progress(c, &m.progress, e);
	case LC_MSG_SINK_DONE:
		if (c->sink_done || m.xfer_done.files != c->files.done)
			break;
		/*
		 * The sink is done once every stream has ended (after the
		 * source was told there is no more) and every file is: not
		 * before, or the copy would end while it still works.
		 */
		if (c->phase < LC_CTL_NOMORE || c->files.done != c->files.total)
			return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent "
			    "SINK_DONE before the copy was done (%u of %u "
			    "files%s)", c->dst_ep.name, c->files.done,
			    c->files.total, c->phase >= LC_CTL_NOMORE ? "" :
			    ", more to come");
		if ((r = lc__ctl_sink_bytes(c, "SINK_DONE", m.xfer_done.bytes,
		    e)) != 0)
			return r;
		c->sink_done = true;
		c->bytes_done = m.xfer_done.bytes;
		return 0;
	case LC_MSG_BYE:
		if (c->phase < LC_CTL_BYE)
			break;
		c->dst_bye = true;
		return 0;
	case LC_MSG_DEL_CAND:
	case LC_MSG_DEL_SCANNED:
	case LC_MSG_DELETED:
		if (!c->sink_done || c->phase >= LC_CTL_BYE)
			break;
		return lc__ctl_del_msg(c, type, &m, e);
	default:
		break;
	}
 bad:
	return lc_err_set(e, LC_ERR_PROTO, "%s: unexpected or malformed %s "
	    "from the sink agent%s", c->dst_ep.name, lc_msg_name(type),
	    type == LC_MSG_DEL_CAND || type == LC_MSG_DELETED ? " (a name "
	    "to delete is relative, with no empty, '.' or '..' component; "
	    "nothing more is asked to be deleted)" : "");
}
