/*
 * Source role: lists files for the controller, then streams their blocks.
 *
 * Threads: one sender per data stream.  A sender connects its own socket,
 * proves the transfer key, then loops: take the next block from the
 * dispenser, pread(2) it straight into its frame buffer behind the header,
 * send header and payload with one call.  When the dispenser is drained it
 * sends an END frame.  Senders report to the agent's main thread through
 * events only; they never touch the control channel.
 */
#include "agent_int.h"

#include "lanecp/dispenser.h"
#include "lanecp/log.h"
#include "lanecp/stream.h"
#include "lanecp/tls.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#define LC_CONNECT_TIMEOUT_MS 15000

struct lc_listed {
	struct lc_listed *next;
	uint32_t id;
	int fd;
	uint64_t size;
	char path[];
};

struct lc_sender {
	struct lc_source *src;
	uint32_t idx;
	pthread_t thread;
	int started;
	struct lc_conn conn;	/* fd published under src->mu */
	uint32_t sndbuf;
};

struct lc_source {
	struct lc_agent *ag;
	pthread_mutex_t mu;
	struct lc_dispenser *disp;
	uint32_t next_id;
	struct lc_listed *listed;	/* waiting for FILE_READY */
	uint32_t files;		/* files handed to the dispenser */
	int connect_seen;
	int nomore;
	int done_sent;
	uint32_t nstreams;
	uint32_t window;
	uint32_t block;
	uint32_t flags;
	char addr[LC_ADDR_MAX];
	uint16_t ports[LC_MAX_STREAMS];
	uint8_t key[LC_KEY_LEN];
	struct lc_tls *tls;	/* NULL: --no-encrypt */
	uint32_t up;
	uint32_t finished;
	struct lc_sender senders[LC_MAX_STREAMS];
	atomic_uint_fast64_t bytes_sent;
};

int
lc_source_new(struct lc_agent *a, struct lc_source **out)
{
	struct lc_source *s;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -LC_ERR_NOMEM;
	s->ag = a;
	pthread_mutex_init(&s->mu, NULL);
	atomic_init(&s->bytes_sent, 0);
	s->next_id = 1;
	for (uint32_t i = 0; i < LC_MAX_STREAMS; i++)
		s->senders[i].conn.fd = -1;
	*out = s;
	return 0;
}

/* ---- listing ---- */

static int
lc_source_add(struct lc_source *s, const struct lc_msg_src_add *m,
    struct lc_err *e)
{
	struct lc_msg_file f;
	struct lc_msg_src_listed done;
	struct lc_listed *l = NULL;
	char path[LC_PATH_MAX];
	struct stat st;
	int fd = -1, r;

	snprintf(path, sizeof(path), "%s", m->path);
	if ((r = lc_confine_open(&s->ag->conf, -1, path, O_RDONLY | O_NOCTTY,
	    0, &fd, e)) != 0)
		return r;
	if (fstat(fd, &st) != 0) {
		r = lc_err_sys(e, LC_ERR_IO, errno, "%s", path);
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		r = lc_err_set(e, LC_ERR_IO, "%s: is a directory", path);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = lc_err_set(e, LC_ERR_IO, "%s: not a regular file", path);
		goto out;
	}
	memset(&f, 0, sizeof(f));
	f.id = s->next_id;
	f.kind = LC_KIND_REG;
	f.mode = (uint32_t)st.st_mode & 07777u;
	f.size = (uint64_t)st.st_size;
	f.mtime_sec = (int64_t)st.st_mtim.tv_sec;
	f.mtime_nsec = (uint32_t)st.st_mtim.tv_nsec;
	lc_path_basename(path, f.name, sizeof(f.name));
	if (f.name[0] == '\0' || strcmp(f.name, "/") == 0 ||
	    strcmp(f.name, ".") == 0 || strcmp(f.name, "..") == 0) {
		r = lc_err_set(e, LC_ERR_IO, "%s: cannot name the copy", path);
		goto out;
	}
	if ((l = calloc(1, sizeof(*l) + strlen(path) + 1)) == NULL) {
		r = -LC_ERR_NOMEM;
		goto out;
	}
	l->id = f.id;
	l->fd = fd;
	l->size = f.size;
	memcpy(l->path, path, strlen(path) + 1);
	memset(&done, 0, sizeof(done));
	done.files = 1;
	done.bytes = f.size;
	if ((r = lc_msg_put_file(&s->ag->out, &f)) != 0 ||
	    (r = lc_msg_put_src_listed(&s->ag->out, &done)) != 0)
		goto out;
	s->next_id++;
	l->next = s->listed;
	s->listed = l;
	l = NULL;	/* transferred */
	fd = -1;
	lc_log_verbose("source %s: %llu bytes", path,
	    (unsigned long long)f.size);
 out:
	free(l);
	if (fd >= 0)
		close(fd);
	return r;
}

static int
lc_source_ready(struct lc_source *s, const struct lc_msg_file_ready *m,
    struct lc_err *e)
{
	struct lc_listed **pp, *l;
	int r;

	for (pp = &s->listed; *pp != NULL && (*pp)->id != m->id;
	    pp = &(*pp)->next)
		;
	if ((l = *pp) == NULL)
		return lc_err_set(e, LC_ERR_PROTO,
		    "FILE_READY for unknown file %u", m->id);
	if (m->start > l->size)
		return lc_err_set(e, LC_ERR_PROTO,
		    "FILE_READY start %llu beyond size of %s",
		    (unsigned long long)m->start, l->path);
	if (s->disp == NULL)
		return lc_err_set(e, LC_ERR_PROTO, "FILE_READY before CONNECT");
	*pp = l->next;
	r = lc_dispenser_add(s->disp, l->id, l->fd, m->start, l->size);
	free(l);
	s->files++;
	return r;
}

/* ---- senders ---- */

static int
lc_sender_pread(int fd, uint8_t *p, uint32_t len, uint64_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, p + got, len - got,
		    (off_t)(off + got));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ENODATA;	/* file shrank */
		got += (size_t)n;
	}
	return 0;
}

static int
lc_sender_loop(struct lc_sender *sn, uint8_t *buf, struct lc_err *e)
{
	struct lc_source *s = sn->src;
	struct lc_frame fr;
	struct lc_block b;
	int r;

	for (;;) {
		r = lc_dispenser_next(s->disp, &b);
		if (r < 0)
			return lc_err_set(e, LC_ERR_CANCELED, "canceled");
		memset(&fr, 0, sizeof(fr));
		if (r == 0) {
			fr.type = LC_FRAME_END;
			lc_frame_put(buf, &fr);
			return lc_conn_write_all(&sn->conn, buf,
			    LC_FRAME_HDR_LEN, e);
		}
		r = lc_sender_pread(b.fd, buf + LC_FRAME_HDR_LEN, b.len,
		    b.offset);
		if (r != 0) {
			lc_dispenser_release(s->disp, &b);
			if (r == -ENODATA)
				return lc_err_set(e, LC_ERR_IO, "source file "
				    "%u shrank during the copy (at offset %llu)",
				    b.file_id, (unsigned long long)b.offset);
			return lc_err_sys(e, LC_ERR_IO, -r, "read source file "
			    "%u at offset %llu", b.file_id,
			    (unsigned long long)b.offset);
		}
		fr.type = LC_FRAME_DATA;
		fr.file_id = b.file_id;
		fr.offset = b.offset;
		fr.len = fr.raw_len = b.len;
		lc_frame_put(buf, &fr);
		r = lc_conn_write_all(&sn->conn, buf,
		    LC_FRAME_HDR_LEN + (size_t)b.len, e);
		lc_dispenser_release(s->disp, &b);
		if (r != 0)
			return r;
		atomic_fetch_add(&s->bytes_sent, b.len);
	}
}

static void *
lc_sender_main(void *arg)
{
	struct lc_sender *sn = arg;
	struct lc_source *s = sn->src;
	struct lc_agent *a = s->ag;
	struct lc_err e;
	uint8_t *buf = NULL;
	char tag[32];
	int fd = -1, r;

	snprintf(tag, sizeof(tag), "stream %u", sn->idx);
	lc_log_set_tag(tag);
	lc_err_clear(&e);
	if ((r = lc_sock_connect(s->addr, s->ports[sn->idx], s->window,
	    LC_CONNECT_TIMEOUT_MS, &a->cancel, &fd, &e)) != 0)
		goto out;
	pthread_mutex_lock(&s->mu);
	lc_conn_init(&sn->conn, fd);
	pthread_mutex_unlock(&s->mu);
	fd = -1;
	sn->sndbuf = lc_sock_sndbuf(sn->conn.fd);
	(void)lc_sock_set_timeout(sn->conn.fd, LC_HANDSHAKE_TIMEOUT_MS);
	if (s->tls != NULL) {
		struct lc_conn tmp = sn->conn;
		struct lc_err sub;
		lc_err_clear(&sub);
		if ((r = lc_tls_connect(s->tls, &tmp, &sub)) != 0) {
			r = lc_err_set(&e, -r, "data stream %u to %s: %s",
			    sn->idx, sn->conn.peer, sub.msg);
			goto out;
		}
		pthread_mutex_lock(&s->mu);
		sn->conn.ssl = tmp.ssl;
		pthread_mutex_unlock(&s->mu);
	}
	if ((r = lc_stream_connect_auth(&sn->conn, s->key, sn->idx, &e)) != 0)
		goto out;
	(void)lc_sock_set_timeout(sn->conn.fd, 0);
	lc_log_debug("connected to %s", sn->conn.peer);
	lc_agent_post(a, LC_EV_STREAM_UP, sn->idx, 0, NULL);
	if ((buf = malloc(LC_FRAME_HDR_LEN + (size_t)s->block)) == NULL) {
		r = lc_err_set(&e, LC_ERR_NOMEM, "out of memory");
		goto out;
	}
	r = lc_sender_loop(sn, buf, &e);
 out:
	if (r != 0 && !atomic_load(&a->cancel))
		lc_agent_post(a, LC_EV_ERROR, sn->idx, 0, &e);
	lc_agent_post(a, LC_EV_SENDER_DONE, sn->idx, r == 0, NULL);
	free(buf);
	if (fd >= 0)
		close(fd);
	return NULL;
}

static int
lc_source_connect(struct lc_source *s, const struct lc_msg_connect *m,
    struct lc_err *e)
{
	char name[32];
	int r;

	if (s->connect_seen)
		return lc_err_set(e, LC_ERR_PROTO, "second CONNECT");
	s->connect_seen = 1;
	s->nstreams = m->streams;
	s->window = m->window;
	s->block = m->block;
	s->flags = m->flags;
	memcpy(s->addr, m->addr, sizeof(s->addr));
	memcpy(s->ports, m->ports, sizeof(s->ports));
	memcpy(s->key, m->key, LC_KEY_LEN);
	if ((s->flags & LC_XFER_ENCRYPT) &&
	    (r = lc_tls_new(0, s->key, &s->tls, e)) != 0)
		return r;
	if ((s->disp = lc_dispenser_new(s->block)) == NULL)
		return -LC_ERR_NOMEM;
	for (uint32_t i = 0; i < s->nstreams; i++) {
		struct lc_sender *sn = &s->senders[i];
		sn->src = s;
		sn->idx = i;
		snprintf(name, sizeof(name), "lc-send-%u", i);
		if ((r = lc_thread_start(&sn->thread, name, lc_sender_main,
		    sn)) != 0)
			return lc_err_set(e, LC_ERR_INTERNAL,
			    "cannot start sender thread");
		sn->started = 1;
	}
	return 0;
}

int
lc_source_handle(struct lc_source *s, uint8_t type, const uint8_t *p,
    size_t n, struct lc_err *e)
{
	union {
		struct lc_msg_src_add add;
		struct lc_msg_file_ready ready;
		struct lc_msg_connect conn;
	} m;
	int r;

	switch (type) {
	case LC_MSG_SRC_ADD:
		if (lc_msg_get_src_add(p, n, &m.add) != 0)
			return lc_err_set(e, LC_ERR_PROTO, "malformed SRC_ADD");
		return lc_source_add(s, &m.add, e);
	case LC_MSG_FILE_READY:
		if (lc_msg_get_file_ready(p, n, &m.ready) != 0)
			return lc_err_set(e, LC_ERR_PROTO,
			    "malformed FILE_READY");
		return lc_source_ready(s, &m.ready, e);
	case LC_MSG_CONNECT:
		if (lc_msg_get_connect(p, n, &m.conn) != 0)
			return lc_err_set(e, LC_ERR_PROTO, "malformed CONNECT");
		r = lc_source_connect(s, &m.conn, e);
		OPENSSL_cleanse(&m.conn, sizeof(m.conn));
		return r;
	case LC_MSG_SRC_NOMORE:
		if (lc_msg_get_empty(p, n) != 0 || s->disp == NULL)
			return lc_err_set(e, LC_ERR_PROTO,
			    "unexpected SRC_NOMORE");
		s->nomore = 1;
		lc_dispenser_finish(s->disp);
		return 0;
	default:
		return lc_err_set(e, LC_ERR_PROTO, "unexpected %s at source",
		    lc_msg_name(type));
	}
}

int
lc_source_event(struct lc_source *s, const struct lc_event *ev,
    struct lc_err *e)
{
	struct lc_msg_connected c;
	struct lc_msg_xfer_done d;

	switch (ev->type) {
	case LC_EV_STREAM_UP:
		if (++s->up == s->nstreams) {
			c.streams = s->nstreams;
			c.window = s->window != 0 ? s->senders[0].sndbuf : 0;
			return lc_msg_put_connected(&s->ag->out, &c);
		}
		return 0;
	case LC_EV_SENDER_DONE:
		if (ev->b == 0)
			return 0;	/* its error event says why */
		if (++s->finished == s->nstreams && s->nomore &&
		    !s->done_sent) {
			s->done_sent = 1;
			d.bytes = atomic_load(&s->bytes_sent);
			d.files = s->files;
			lc_log_debug("all streams done: %llu bytes",
			    (unsigned long long)d.bytes);
			return lc_msg_put_xfer_done(&s->ag->out,
			    LC_MSG_SRC_DONE, &d);
		}
		return 0;
	default:
		return lc_err_set(e, LC_ERR_INTERNAL, "source: event %d",
		    ev->type);
	}
}

void
lc_source_abort(struct lc_source *s)
{
	if (s == NULL)
		return;
	if (s->disp != NULL)
		lc_dispenser_abort(s->disp);
	pthread_mutex_lock(&s->mu);
	for (uint32_t i = 0; i < s->nstreams; i++)
		lc_conn_shutdown(&s->senders[i].conn);
	pthread_mutex_unlock(&s->mu);
}

void
lc_source_free(struct lc_source *s)
{
	struct lc_listed *l, *n;

	if (s == NULL)
		return;
	lc_source_abort(s);
	for (uint32_t i = 0; i < s->nstreams; i++) {
		if (s->senders[i].started)
			pthread_join(s->senders[i].thread, NULL);
		lc_conn_close(&s->senders[i].conn);
	}
	lc_dispenser_free(s->disp);
	lc_tls_free(s->tls);
	for (l = s->listed; l != NULL; l = n) {
		n = l->next;
		close(l->fd);
		free(l);
	}
	OPENSSL_cleanse(s->key, sizeof(s->key));
	pthread_mutex_destroy(&s->mu);
	free(s);
}
