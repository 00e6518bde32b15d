/*
 * Source role: lists files for the controller, then has their blocks
 * streamed.  This file is the role itself: the messages it owns
 * dispatched to its features, FILE_READY (listed files to the
 * dispenser), the events, the tick, abort and free.  The features each
 * have a file and a sub-struct of struct lc_source: listing
 * (source_list.c: SRC_ADD, SRC_ENTRY, SRC_CREDIT, FILE_SKIP), following a
 * part file (source_follow.c: SRC_PART, SRC_AVAIL), pipes (source_pipe.c:
 * stdin and -N i programs), resume checks (source_resume.c: FILE_PREFIX
 * and its job) and sending (source_send.c: CONNECT, ACK, STREAM_LOST;
 * sender.c: the sender threads).
 *
 * Threads: one sender per data stream (sender.c: dial, send, reconnect,
 * resend), one job thread that hashes partial files for resumes, and a
 * reader for a pipe.  Senders, jobs and the reader report to the host's
 * main thread through lc_role_post(); they never touch the control
 * channel.  Which thread owns which field, and which lock guards it, is
 * in source_int.h.
 *
 * Descriptors: a listed file's descriptor is its lc_listed's until
 * FILE_READY hands it to the dispenser; connections are the senders'.
 */
#include "source_int.h"

#include "checksum.h"
#include "log.h"
#include "secmem.h"

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

static int
lc_source_new(const struct lc_role_port *port, void **out)
{
	pthread_condattr_t ca;
	struct lc_source *s;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -LC_ERR_NOMEM;
	s->port = *port;
	pthread_mutex_init(&s->mu, NULL);
	/* the senders' back-off waits on it: immune to clock steps */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	atomic_init(&s->send.bytes_sent, 0);
	atomic_init(&s->send.wire_sent, 0);
	s->list.next_id = 1;
	s->pipe.fd = -1;
	s->pipe.pid = -1;
	for (uint32_t i = 0; i < LC_MAX_STREAMS; i++) {
		s->send.senders[i].hs_fd = -1;
		atomic_init(&s->send.senders[i].stop, false);
	}
	if ((s->resume.jobs = lc_jobq_new("lc-src-jobs")) == NULL) {
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->mu);
		free(s);
		return -LC_ERR_NOMEM;
	}
	*out = s;
	return 0;
}

static int
lc_source_ready(struct lc_source *s, const struct lc_msg_file_ready *m,
    struct lc_err *e)
{
	struct lc_msg_file_sum fs;
	struct lc_listed **pp, *l;
	struct lc_span *spans = NULL;	/* up to 8192: not on the stack */
	struct lc_csum *csum = NULL;
	char sum[LC_CSUM_TEXT_MAX];
	uint32_t nspans;
	int r;

	if ((l = lc__source_listed(s, m->id, &pp)) == NULL)
		return lc_err_set(e, LC_ERR_PROTO,
		    "FILE_READY for unknown file %u", m->id);
	if (l->checking)	/* the job still reads l: freeing it here
				   was a use after free (found by fuzz_agent) */
		return lc_err_set(e, LC_ERR_PROTO, "FILE_READY for file %u "
		    "during its resume check", m->id);
	if (m->start > l->size)
		return lc_err_set(e, LC_ERR_PROTO,
		    "FILE_READY start %llu beyond size of %s",
		    (unsigned long long)m->start, l->path);
	if (s->disp == NULL)
		return lc_err_set(e, LC_ERR_PROTO, "FILE_READY before CONNECT");
	if (l->pipe) {
		lc__source_unlink(s, pp, l);
		r = lc__source_pipe_ready(s, l, e);
		lc__listed_free(l);
		return r;
	}
	if (lc__source_open(s, l, e) != 0) {
		/* this one is reported and left out; the rest goes on */
		struct lc_msg_file_abort ab;
		memset(&ab, 0, sizeof(ab));
		ab.id = m->id;
		snprintf(ab.msg, sizeof(ab.msg), "%s", e->msg);
		lc_err_clear(e);
		lc__source_unlink(s, pp, l);
		lc__listed_free(l);
		return lc_msg_put_file_abort(s->port.out, &ab);
	}
	/* the runs of the resume check come first (the sink asks for them
	   with a start at the cut) */
	if (l->verdict != NULL && l->verdict->n > 0 &&
	    m->start != l->verdict->match)
		return lc_err_set(e, LC_ERR_PROTO, "FILE_READY for file %u "
		    "from byte %llu, not %llu after its resume check", m->id,
		    (unsigned long long)m->start,
		    (unsigned long long)l->verdict->match);
	nspans = l->verdict != NULL ? l->verdict->n : 0;
	if (nspans > 0) {
		if ((spans = calloc(nspans, sizeof(*spans))) == NULL)
			return -LC_ERR_NOMEM;
		for (uint32_t i = 0; i < nspans; i++) {
			const struct lc_chunk_run *c = &l->verdict->runs[i];
			uint64_t end = ((uint64_t)c->first + c->count) *
			    l->chunk;

			spans[i].off = (uint64_t)c->first * l->chunk;
			spans[i].len = (end < l->prefix_len ? end :
			    l->prefix_len) - spans[i].off;
		}
	}
	if (s->csum != LC_CSUM_NONE) {
		if (l->csum != NULL && l->csum_upto == m->start) {
			csum = l->csum;
			l->csum = NULL;
		} else if ((csum = lc_csum_new((int)s->csum)) == NULL) {
			free(spans);
			return -LC_ERR_NOMEM;
		} else if (m->start > 0 && (r = lc_csum_fd(csum, l->fd,
		    m->start, l->path, e)) != 0) {
			lc_csum_free(csum);
			free(spans);
			return r;
		}
	}
	lc__source_unlink(s, pp, l);
	/* a followed file goes as far as SRC_AVAIL said so far */
	r = lc_dispenser_add_follow(s->disp, l->id, l->fd, spans, nspans,
	    m->start, l->size, l->part ? l->avail : UINT64_MAX, csum, sum);
	free(spans);
	l->fd = -1;	/* the dispenser has it now */
	lc__listed_free(l);
	if (r != 0)
		return lc_err_set(e, -r, "dispenser");
	s->files++;
	if (sum[0] != '\0') {	/* nothing left to send: sum known now */
		memset(&fs, 0, sizeof(fs));
		fs.id = m->id;
		snprintf(fs.checksum, sizeof(fs.checksum), "%s", sum);
		return lc_msg_put_file_sum(s->port.out, &fs);
	}
	return 0;
}

static int
lc_source_handle(void *role, uint8_t type, const uint8_t *p,
    size_t n, struct lc_err *e)
{
	struct lc_source *s = role;
	union lc_msg_any m;
	int r;

	if (lc_msg_get(type, p, n, &m) != 0)
		goto bad;
	switch (type) {
	case LC_MSG_SRC_FILTER:
		return lc__source_filter(s, &m.src_filter, e);
	case LC_MSG_SRC_ADD:
		return lc__source_add(s, &m.src_add, e);
	case LC_MSG_SRC_ENTRY:
		return lc__source_entry(s, &m.src_entry, e);
	case LC_MSG_SRC_PART:
		return lc__source_part(s, &m.src_part, e);
	case LC_MSG_SRC_AVAIL:
		return lc__source_avail(s, &m.src_avail, e);
	case LC_MSG_FILE_READY:
		return lc_source_ready(s, &m.file_ready, e);
	case LC_MSG_SRC_CREDIT:
		return lc__source_credit(s, &m.src_credit, e);
	case LC_MSG_FILE_SKIP:
		return lc__source_skip(s, &m.file_skip, e);
	case LC_MSG_CONNECT:
		r = lc__source_connect(s, &m.connect, e);
		OPENSSL_cleanse(&m.connect, sizeof(m.connect));
		return r;
	case LC_MSG_SRC_NOMORE:
		if (s->disp == NULL)
			break;
		s->nomore = 1;
		lc_dispenser_finish(s->disp);
		return 0;
	case LC_MSG_FILE_PREFIX:
		return lc__source_prefix(s, &m.file_prefix, e);
	case LC_MSG_FILE_HASHES:
		return lc__source_hashes(s, &m.file_hashes, e);
	case LC_MSG_STREAM_LOST:
		if (s->disp == NULL)
			break;
		return lc__source_lost(s, &m.stream_lost, e);
	case LC_MSG_ACK:
		if (s->disp == NULL)
			break;
		lc__source_ack(s, &m.ack);
		return 0;
	default:
		break;
	}
 bad:
	return lc_err_set(e, LC_ERR_PROTO, "unexpected or malformed %s at the "
	    "source", lc_msg_name(type));
}

static int
lc_source_event(void *role, const struct lc_event *ev,
    struct lc_err *e)
{
	struct lc_source *s = role;
	struct lc_msg_file_sum fs;

	switch (ev->type) {
	case LC_EV_STREAM_UP:
		return lc__source_stream_up(s, e);
	case LC_EV_PIPE_EOF:
		return lc__source_pipe_eof(s, ev);
	case LC_EV_SENDER_DONE:
		if (ev->b == 0)
			return 0;	/* lost or failed: reported otherwise */
		s->send.finished++;
		return lc__source_maybe_done(s);
	case LC_EV_SENDER_FAILED:
		lc_log_verbose("%s; reconnecting", ev->err.msg);
		return 0;
	case LC_EV_SRC_SUM:
		memset(&fs, 0, sizeof(fs));
		fs.id = ev->a;
		snprintf(fs.checksum, sizeof(fs.checksum), "%s", ev->text);
		return lc_msg_put_file_sum(s->port.out, &fs);
	case LC_EV_PREFIX_DONE:
		return lc__source_prefix_done(s, ev);
	default:
		return lc_err_set(e, LC_ERR_INTERNAL, "source: event %d",
		    ev->type);
	}
}

static int
lc_source_tick(void *role, uint64_t now_ms)
{
	struct lc_source *s = role;
	struct lc_msg_progress p;

	(void)now_ms;
	if (!s->connect_seen || s->done_sent)
		return 0;
	memset(&p, 0, sizeof(p));
	/* wire first: see lc__source_maybe_done */
	p.wire = atomic_load(&s->send.wire_sent);
	p.bytes = atomic_load(&s->send.bytes_sent);
	return lc_msg_put_progress(s->port.out, &p);
}

static void
lc_source_abort(void *role)
{
	struct lc_source *s = role;

	if (s == NULL)
		return;
	if (s->disp != NULL)
		lc_dispenser_abort(s->disp);
	pthread_mutex_lock(&s->mu);
	lc__source_senders_stop(s);
	if (s->pipe.pid > 0)	/* a source program: the copy is over */
		(void)kill(s->pipe.pid, SIGTERM);
	pthread_mutex_unlock(&s->mu);
}

static void
lc_source_free(void *role)
{
	struct lc_source *s = role;

	if (s == NULL)
		return;
	lc_source_abort(s);
	lc_jobq_free(s->resume.jobs, NULL);
	free(s->resume.msg);
	lc__source_senders_join(s);
	lc__source_pipe_free(s);
	lc_dispenser_free(s->disp);
	lc__source_send_free(s);
	lc__source_list_free(s);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/* The messages the table (wire_msgs.def) gives the source. */
static int
lc_source_owns(uint8_t type)
{
	return lc_msg_owner(type) == LC_OWNER_SOURCE;
}

const struct lc_role_ops lc_source_ops = {
	.name = "source",
	.owns = lc_source_owns,
	.create = lc_source_new,
	.handle = lc_source_handle,
	.event = lc_source_event,
	.tick = lc_source_tick,
	.abort = lc_source_abort,
	.free = lc_source_free,
};
