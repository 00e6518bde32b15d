/*
 * Controller state machine (single thread, poll loop):
 *
 *   HELLO both -> negotiate -> sink: SINK_TARGET, LISTEN; source: SRC_ADD*
 *   sink LISTENING   -> source CONNECT (address the controller itself used)
 *                       (those two steps: negotiate.c, dataaddr.c)
 *   source FILE      -> sink FILE
 *   sink FILE_READY  -> source FILE_READY
 *   all listed and ready -> source SRC_NOMORE
 *   SRC_DONE + SINK_DONE + every FILE_DONE -> BYE both -> done
 *
 * Any ERROR, or an endpoint vanishing, ends the run: both control channels
 * are closed at once so the agents stop (the sink keeps its partial file
 * under the temporary name; the target name is never touched).
 */
#include "controller_int.h"
#include "lanecp/checksum.h"
#include "lanecp/clock.h"
#include "lanecp/fdio.h"
#include "lanecp/log.h"
#include "lanecp/parse.h"
#include "lanecp/path.h"
#include "lanecp/testhook.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#define LC_CLOSE_WAIT_MS 3000
#define LC_CAUSE_WAIT_MS 2000

/* ---- helpers ---- */

const char *
lc__ctl_agent_cmd(const struct lc_ctl *c)
{
	return c->o->agent_cmd != NULL ? c->o->agent_cmd : "lanecp";
}

static int
lc_ctl_remote_error(struct lc_endpoint *ep, const uint8_t *p, size_t n,
    struct lc_err *e)
{
	struct lc_msg_error m;
	int code;

	if (lc_msg_get_error(p, n, &m) != 0)
		return lc_err_set(e, LC_ERR_PROTO, "%s: malformed ERROR",
		    ep->name);
	code = (int)m.code;
	if (code <= 0 || code >= LC_ERR_MAX)
		code = LC_ERR_PROTO;
	if (ep->remote)
		lc_err_set(e, code, "%s: %s", ep->name, m.msg);
	else
		lc_err_set(e, code, "%s", m.msg);
	e->remote = ep->remote;
	return -code;
}

static struct lc_ctl_file *
lc_ctl_file_find(struct lc_ctl *c, uint32_t id)
{
	/* ids are 1..n in order (lc_ctl_check_file) */
	if (id == 0 || id > c->nfiles)
		return NULL;
	return &c->files[id - 1];
}

static int
lc_ctl_file_add(struct lc_ctl *c, const struct lc_msg_file *m)
{
	struct lc_ctl_file *f;

	if (c->nfiles == c->files_cap) {
		size_t ncap = c->files_cap ? c->files_cap * 2 : 8;
		struct lc_ctl_file *n = realloc(c->files, ncap * sizeof(*n));
		if (n == NULL)
			return -LC_ERR_NOMEM;
		c->files = n;
		c->files_cap = ncap;
	}
	f = &c->files[c->nfiles++];
	memset(f, 0, sizeof(*f));
	f->id = m->id;
	f->size = m->size;
	snprintf(f->name, sizeof(f->name), "%.*s", 255, m->name);
	return 0;
}

/* ---- setup ---- */

static int
lc_ctl_open(struct lc_ctl *c, struct lc_endpoint *ep,
    const struct lc_location *loc, struct lc_err *e)
{
	struct lc_ssh_opts so;

	if (!lc_location_is_remote(loc))
		return lc_endpoint_open_local(ep, e);
	memset(&so, 0, sizeof(so));
	so.host = loc->host;
	so.user = loc->user[0] != '\0' ? loc->user : NULL;
	so.config_file = c->o->config_file;
	so.identity_file = c->o->identity_file;
	so.batch = c->o->batch;
	return lc_endpoint_open_remote(ep, &so, lc__ctl_agent_cmd(c), e);
}

static int
lc_ctl_maybe_nomore(struct lc_ctl *c)
{
	if (c->nomore_sent || c->listed < c->adds_sent ||
	    c->files_ready < c->files_total)
		return 0;
	c->nomore_sent = 1;
	return lc_msg_put_empty(&c->src.out, LC_MSG_SRC_NOMORE);
}

/* ---- message handlers ---- */

/*
 * Peer checks.  The controller is the one party that knows what the user
 * asked for, so it checks every message it relays or uses against that:
 * request k (SRC_ADD k) asked for a path whose copy is called name; the
 * source must answer it with exactly one FILE (kind regular, that name,
 * the next file id, a size that keeps the total within 2^63 - 1) and one
 * SRC_LISTED that counts it.  Later messages may only name announced ids,
 * each step once and in protocol order, with offsets and lengths within
 * the file, and stream indexes below the negotiated count.  Anything else
 * ends the copy with LC_ERR_PROTO before the message is relayed.
 * (Directories will give a request several FILEs named beneath it.)
 * LISTENING is checked where it is used, in negotiate.c.
 */

/* Checksum text from a peer: "ALG:hex" for the algorithm asked for. */
static int
lc_ctl_csum_ok(const struct lc_ctl *c, const char *sum)
{
	const char *alg = lc_csum_alg_name(c->o->csum_alg);
	size_t al = strlen(alg), n;

	if (c->o->csum_alg == 0 || strncmp(sum, alg, al) != 0 ||
	    sum[al] != ':')
		return 0;
	n = strlen(sum + al + 1);
	return n > 0 && n <= 64 && strspn(sum + al + 1,
	    "0123456789abcdefABCDEF") == n;
}

/*
 * FILE from the source: it must be the one file request `listed` asked
 * for.  Set-id and sticky bits are dropped here (only 0777 is relayed:
 * there is no option to keep more yet).
 */
static int
lc_ctl_check_file(struct lc_ctl *c, struct lc_msg_file *m, struct lc_err *e)
{
	const char *h = c->src.name;
	const struct lc_ctl_req *rq;
	uint32_t want = c->files_total + 1;

	if (c->listed >= c->adds_sent)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" which was not asked for (every request was "
		    "already answered)", h, m->name);
	rq = &c->reqs[c->listed];
	if (strcmp(rq->name, ".") == 0 || strcmp(rq->name, "..") == 0 ||
	    strcmp(rq->name, "/") == 0 || rq->name[0] == '\0')
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" for \"%.200s\", which cannot name a copy", h,
		    m->name, c->srcs[c->listed].path);
	if (strcmp(m->name, rq->name) != 0)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" which was not asked for (asked for \"%.200s\")",
		    h, m->name, rq->name);
	if (rq->files != 0)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" twice (file %u, after file %u)", h, m->name,
		    m->id, c->files_total);
	if (m->kind != LC_KIND_REG)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" as a directory; a file was asked for", h,
		    m->name);
	if (m->id != want)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" as file %u, expected file %u", h, m->name,
		    m->id, want);
	if (m->size > (uint64_t)INT64_MAX - c->bytes_total)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" with %llu bytes, more than a copy can hold", h,
		    m->name, (unsigned long long)m->size);
	if ((m->mode & ~0777u) != 0) {
		lc_log_verbose("%s: mode %04o of %s from the source: "
		    "set-id and sticky bits dropped", h, (unsigned)m->mode,
		    rq->name);
		m->mode &= 0777u;
	}
	return 0;
}

static int
lc_ctl_src_file(struct lc_ctl *c, struct lc_msg_file *m, struct lc_err *e)
{
	struct lc_ctl_req *rq;
	int r;

	if ((r = lc_ctl_check_file(c, m, e)) != 0)
		return r;
	rq = &c->reqs[c->listed];
	if ((r = lc_ctl_file_add(c, m)) != 0)
		return lc_err_set(e, -r, "out of memory");
	rq->files++;
	rq->bytes += m->size;
	c->files_total++;
	c->bytes_total += m->size;
	return lc_msg_put_file(&c->dst_ep.out, m);
}

static int
lc_ctl_src_listed(struct lc_ctl *c, const struct lc_msg_src_listed *m,
    struct lc_err *e)
{
	const struct lc_ctl_req *rq;

	if (c->listed >= c->adds_sent)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source listed more "
		    "requests than were made (%u)", c->src.name,
		    c->adds_sent);
	rq = &c->reqs[c->listed];
	if (rq->files != 1 || m->files != rq->files || m->bytes != rq->bytes)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source listed %u "
		    "file%s (%llu bytes) for \"%.200s\" but announced %u "
		    "(%llu bytes)", c->src.name, m->files,
		    m->files == 1 ? "" : "s", (unsigned long long)m->bytes,
		    rq->name, rq->files, (unsigned long long)rq->bytes);
	c->listed++;
	return lc_ctl_maybe_nomore(c);
}

static int
lc_ctl_src_sum(struct lc_ctl *c, const struct lc_msg_file_sum *m,
    struct lc_err *e)
{
	struct lc_ctl_file *f = lc_ctl_file_find(c, m->id);

	if (f == NULL || !f->ready || f->summed || !lc_ctl_csum_ok(c,
	    m->checksum))
		return lc_err_set(e, LC_ERR_PROTO, "%s: source sent an "
		    "unexpected FILE_SUM for file %u%s", c->src.name, m->id,
		    f == NULL ? ", which it never announced" : "");
	f->summed = 1;
	if (c->o->expect[0] != '\0' &&
	    strcmp(m->checksum, c->o->expect) != 0)
		return lc_err_set(e, LC_ERR_CHECKSUM, "%s: the source "
		    "file has %s, not the expected %s",
		    c->srcs[0].path, m->checksum, c->o->expect);
	c->t_progress = lc_now_ms();
	return lc_msg_put_file_sum(&c->dst_ep.out, m);
}

static int
lc_ctl_src_match(struct lc_ctl *c, const struct lc_msg_prefix_match *m,
    struct lc_err *e)
{
	struct lc_ctl_file *f = lc_ctl_file_find(c, m->id);

	if (f == NULL || !f->prefixed || f->matched ||
	    m->match > f->prefix_len)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source sent an "
		    "unexpected PREFIX_MATCH for file %u (%llu bytes)",
		    c->src.name, m->id, (unsigned long long)m->match);
	f->matched = 1;
	f->match = m->match;
	c->res->resumed += m->match;
	c->t_progress = lc_now_ms();
	return lc_msg_put_prefix_match(&c->dst_ep.out, m);
}

static int
lc_ctl_from_src(struct lc_ctl *c, uint8_t type, const uint8_t *p, size_t n,
    struct lc_err *e)
{
	union {
		struct lc_msg_file file;
		struct lc_msg_src_listed listed;
		struct lc_msg_connected conn;
		struct lc_msg_xfer_done done;
		struct lc_msg_file_sum sum;
		struct lc_msg_prefix_match match;
		struct lc_msg_progress prog;
	} m;

	switch (type) {
	case LC_MSG_FILE_SUM:
		if (lc_msg_get_file_sum(p, n, &m.sum) != 0)
			break;
		return lc_ctl_src_sum(c, &m.sum, e);
	case LC_MSG_PREFIX_MATCH:
		if (lc_msg_get_prefix_match(p, n, &m.match) != 0)
			break;
		return lc_ctl_src_match(c, &m.match, e);
	case LC_MSG_PROGRESS:
		/* bytes sent, resends included: it only grows */
		if (lc_msg_get_progress(p, n, &m.prog) != 0 ||
		    m.prog.bytes < c->src_sent || m.prog.file != 0 ||
		    m.prog.written != 0)
			break;
		c->src_sent = m.prog.bytes;
		return 0;
	case LC_MSG_FILE:
		if (lc_msg_get_file(p, n, &m.file) != 0)
			break;
		return lc_ctl_src_file(c, &m.file, e);
	case LC_MSG_SRC_LISTED:
		if (lc_msg_get_src_listed(p, n, &m.listed) != 0)
			break;
		return lc_ctl_src_listed(c, &m.listed, e);
	case LC_MSG_CONNECTED:
		if (lc_msg_get_connected(p, n, &m.conn) != 0 ||
		    !c->listening || c->connected ||
		    m.conn.streams != c->streams)
			break;
		c->connected = 1;
		lc_log_verbose("%u data streams connected", m.conn.streams);
		return 0;
	case LC_MSG_SRC_DONE:
		if (lc_msg_get_xfer_done(p, n, &m.done) != 0 ||
		    !c->nomore_sent || c->src_done ||
		    m.done.files != c->files_total ||
		    m.done.bytes < c->src_sent)
			break;
		c->src_done = 1;
		c->src_sent = m.done.bytes;
		return 0;
	case LC_MSG_BYE:
		if (lc_msg_get_empty(p, n) != 0 || !c->bye_sent)
			break;
		c->src_bye = 1;
		return 0;
	default:
		break;
	}
	return lc_err_set(e, LC_ERR_PROTO, "%s: unexpected or malformed %s "
	    "from the source agent", c->src.name, lc_msg_name(type));
}

/* Where a file landed, "host:path" style, for -E lines and --json. */
static void
lc_ctl_file_where(struct lc_ctl *c, const struct lc_ctl_file *f, char *out,
    size_t outsz)
{
	const char *host = c->dst.host;
	const char *p = c->dst.path;
	size_t pl = strlen(p);
	int dir = c->target_is_dir || p[pl - 1] == '/';

	snprintf(out, outsz, "%s%s%s%s%s", host, host[0] ? ":" : "", p,
	    dir && p[pl - 1] != '/' ? "/" : "", dir ? f->name : "");
}

static void
lc_ctl_record_sum(struct lc_ctl *c, const struct lc_ctl_file *f,
    const char *sum)
{
	struct lc_copy_result *res = c->res;
	char where[LC_PATH_MAX + 600];
	const char *colon = strchr(sum, ':');

	lc_ctl_file_where(c, f, where, sizeof(where));
	if (c->o->print_sums && colon != NULL) {
		printf("%.*s %s %s\n", (int)(colon - sum), sum, colon + 1,
		    where);
		fflush(stdout);
	}
	if (res->nsums < LC_RESULT_SUMS) {
		snprintf(res->sums[res->nsums].path,
		    sizeof(res->sums[res->nsums].path), "%.500s", where);
		snprintf(res->sums[res->nsums].sum,
		    sizeof(res->sums[res->nsums].sum), "%.79s", sum);
		res->nsums++;
	}
}

static int
lc_ctl_file_done(struct lc_ctl *c, const struct lc_msg_file_done *m,
    struct lc_err *e)
{
	struct lc_ctl_file *f = lc_ctl_file_find(c, m->id);

	if (f == NULL || !f->ready || f->done || m->bytes != f->size ||
	    (m->checksum[0] != '\0' && !lc_ctl_csum_ok(c, m->checksum)))
		return lc_err_set(e, LC_ERR_PROTO, "%s: bad FILE_DONE for "
		    "file %u", c->dst_ep.name, m->id);
	f->done = 1;
	c->files_done++;
	c->t_progress = lc_now_ms();
	lc_log_verbose("%s: %llu bytes written%s%s", f->name,
	    (unsigned long long)m->bytes, m->checksum[0] ? ", " : "",
	    m->checksum);
	if (m->checksum[0] != '\0')
		lc_ctl_record_sum(c, f, m->checksum);
	return 0;
}

/* Sink messages relayed to the source: only announced ids, in order. */
static int
lc_ctl_dst_ready(struct lc_ctl *c, const struct lc_msg_file_ready *m,
    struct lc_err *e)
{
	struct lc_ctl_file *f = lc_ctl_file_find(c, m->id);
	int r;

	if (f == NULL || f->ready || m->start > f->size ||
	    (f->prefixed && (!f->matched || m->start > f->match)))
		return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent an "
		    "unexpected FILE_READY for file %u (from byte %llu)",
		    c->dst_ep.name, m->id, (unsigned long long)m->start);
	f->ready = 1;
	c->files_ready++;
	if ((r = lc_msg_put_file_ready(&c->src.out, m)) != 0)
		return lc_err_set(e, -r, "control output");
	return lc_ctl_maybe_nomore(c);
}

static int
lc_ctl_dst_prefix(struct lc_ctl *c, const struct lc_msg_file_prefix *m,
    struct lc_err *e)
{
	struct lc_ctl_file *f = lc_ctl_file_find(c, m->id);

	if (f == NULL || !c->o->resume || f->prefixed || f->ready ||
	    m->length > f->size)
		return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent an "
		    "unexpected FILE_PREFIX for file %u (%llu bytes)",
		    c->dst_ep.name, m->id, (unsigned long long)m->length);
	f->prefixed = 1;
	f->prefix_len = m->length;
	c->t_progress = lc_now_ms();
	return lc_msg_put_file_prefix(&c->src.out, m);
}

static int
lc_ctl_dst_lost(struct lc_ctl *c, const struct lc_msg_stream_lost *m,
    struct lc_err *e)
{
	const struct lc_ctl_file *f = lc_ctl_file_find(c, m->last_file);

	if (!c->listening || m->stream >= c->streams || m->has_last > 1 ||
	    (m->has_last && (f == NULL || !f->ready ||
	    m->last_off >= f->size)))
		return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent an "
		    "unexpected STREAM_LOST for stream %u of %u",
		    c->dst_ep.name, m->stream, c->streams);
	lc_log_warn("data stream %u lost (%s); resending its blocks "
	    "on the others", m->stream, m->reason);
	return lc_msg_put_stream_lost(&c->src.out, m);
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
	const struct lc_ctl_file *f = lc_ctl_file_find(c, m->file);
	struct lc_msg_ack ack;

	if (m->file > c->files_total + 1 || (f == NULL ? m->written != 0 :
	    m->written > f->size))
		return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent a bad "
		    "PROGRESS (file %u, %llu bytes written)", c->dst_ep.name,
		    m->file, (unsigned long long)m->written);
	c->bytes_done = m->bytes;
	if (!c->listening || c->src_done)
		return 0;
	ack.file = m->file;
	ack.written = m->written;
	return lc_msg_put_ack(&c->src.out, &ack);
}

static int
lc_ctl_from_dst(struct lc_ctl *c, uint8_t type, const uint8_t *p, size_t n,
    struct lc_err *e)
{
	union {
		struct lc_msg_target_ok ok;
		struct lc_msg_file_ready ready;
		struct lc_msg_file_done done;
		struct lc_msg_progress prog;
		struct lc_msg_xfer_done xfer;
		struct lc_msg_file_prefix prefix;
		struct lc_msg_stream_lost lost;
	} m;

	switch (type) {
	case LC_MSG_TARGET_OK:
		if (lc_msg_get_target_ok(p, n, &m.ok) != 0)
			break;
		c->target_is_dir = m.ok.is_dir;
		return 0;
	case LC_MSG_FILE_PREFIX:
		if (lc_msg_get_file_prefix(p, n, &m.prefix) != 0)
			break;
		return lc_ctl_dst_prefix(c, &m.prefix, e);
	case LC_MSG_STREAM_LOST:
		if (lc_msg_get_stream_lost(p, n, &m.lost) != 0)
			break;
		return lc_ctl_dst_lost(c, &m.lost, e);
	case LC_MSG_LISTENING:
		return lc__ctl_listening(c, p, n, e);
	case LC_MSG_FILE_READY:
		if (lc_msg_get_file_ready(p, n, &m.ready) != 0)
			break;
		return lc_ctl_dst_ready(c, &m.ready, e);
	case LC_MSG_FILE_DONE:
		if (lc_msg_get_file_done(p, n, &m.done) != 0)
			break;
		return lc_ctl_file_done(c, &m.done, e);
	case LC_MSG_PROGRESS:
		if (lc_msg_get_progress(p, n, &m.prog) != 0)
			break;
		return lc_ctl_dst_progress(c, &m.prog, e);
	case LC_MSG_SINK_DONE:
		if (lc_msg_get_xfer_done(p, n, &m.xfer) != 0 ||
		    c->sink_done || m.xfer.files != c->files_done)
			break;
		c->sink_done = 1;
		c->bytes_done = m.xfer.bytes;
		return 0;
	case LC_MSG_BYE:
		if (lc_msg_get_empty(p, n) != 0 || !c->bye_sent)
			break;
		c->dst_bye = 1;
		return 0;
	default:
		break;
	}
	return lc_err_set(e, LC_ERR_PROTO, "%s: unexpected or malformed %s "
	    "from the sink agent", c->dst_ep.name, lc_msg_name(type));
}

/* Run every whole frame in ep->in. */
static int
lc_ctl_drain(struct lc_ctl *c, struct lc_endpoint *ep, struct lc_err *e)
{
	const uint8_t *payload;
	size_t plen, flen;
	uint8_t type;
	int r;

	while ((r = lc_msg_peek(lc_buf_ptr(&ep->in), lc_buf_len(&ep->in),
	    &type, &payload, &plen, &flen)) == 1) {
		if (type == LC_MSG_ERROR) {
			r = lc_ctl_remote_error(ep, payload, plen, e);
			c->err_ep = ep;
		} else if (!ep->hello_seen)
			r = type == LC_MSG_HELLO ?
			    lc__ctl_got_hello(c, ep, payload, plen, e) :
			    lc_err_set(e, LC_ERR_PROTO, "%s: expected HELLO "
			    "from the agent, got type %u", ep->name, type);
		else if (ep == &c->src)
			r = lc_ctl_from_src(c, type, payload, plen, e);
		else
			r = lc_ctl_from_dst(c, type, payload, plen, e);
		lc_buf_consume(&ep->in, flen);
		if (ep == &c->src)
			c->t_src_msg = lc_now_ms();
		else
			c->t_dst_msg = lc_now_ms();
		if (r != 0)
			return r;
	}
	if (r < 0)
		return lc_err_set(e, LC_ERR_PROTO, "%s: bad control frame "
		    "(is '%s' really lanecp?)", ep->name, lc__ctl_agent_cmd(c));
	return 0;
}

static int
lc_ctl_step(struct lc_ctl *c, struct lc_err *e)
{
	int r;

	if (!c->negotiated && c->src.hello_seen && c->dst_ep.hello_seen &&
	    (r = lc__ctl_negotiate(c, e)) != 0)
		return r;
	if (c->src_done && c->sink_done && c->files_done == c->files_total &&
	    !c->bye_sent) {
		c->bye_sent = 1;
		c->res->ns = lc_now_ns() - c->t_start;
		if ((r = lc_msg_put_empty(&c->src.out, LC_MSG_BYE)) != 0 ||
		    (r = lc_msg_put_empty(&c->dst_ep.out, LC_MSG_BYE)) != 0)
			return lc_err_set(e, -r, "control output");
	}
	return 0;
}

static int
lc_ctl_signal(int fd, struct lc_err *e)
{
	unsigned char signo = 0;

	if (read(fd, &signo, 1) != 1)
		return 0;
	lc_err_set(e, LC_ERR_CANCELED, "interrupted by signal %d", signo);
	e->signo = signo;
	return -LC_ERR_CANCELED;
}

static void
lc_ctl_tick(struct lc_ctl *c)
{
	uint64_t now;

	/* the total is known once every source has been listed */
	if (c->o->progress_ms == 0 || !c->negotiated ||
	    c->listed < c->adds_sent)
		return;
	now = lc_now_ms();
	if (now < c->next_progress)
		return;
	c->next_progress = now + c->o->progress_ms;
	if (c->progress.start_ns == 0)
		lc_progress_init(&c->progress, 2, c->bytes_total);
	c->progress.total = c->bytes_total;
	lc_progress_update(&c->progress, c->bytes_done);
}

/*
 * --timeout: fail a copy that makes no progress, naming the side that
 * stalled.  Both agents send a heartbeat every second, so silence means
 * the agent or its SSH connection is stuck; heartbeats without bytes mean
 * the data path is.
 */
static int
lc_ctl_watchdog(struct lc_ctl *c, struct lc_err *e)
{
	uint64_t now = lc_now_ms(), t = (uint64_t)c->o->timeout_s * 1000;

	if (t == 0 || c->bye_sent)
		return 0;
	if (c->bytes_done != c->last_bytes) {
		c->last_bytes = c->bytes_done;
		c->t_progress = now;
	}
	if (now - c->t_dst_msg > t)
		return lc_err_set(e, LC_ERR_TIMEOUT, "no word from the agent "
		    "on %s for %u s (the receiving side or its SSH connection "
		    "is stuck)", c->dst_ep.name, c->o->timeout_s);
	if (now - c->t_src_msg > t)
		return lc_err_set(e, LC_ERR_TIMEOUT, "no word from the agent "
		    "on %s for %u s (the sending side or its SSH connection "
		    "is stuck)", c->src.name, c->o->timeout_s);
	if (now - c->t_progress <= t)
		return 0;
	/* bytes handed to the network but not received: the path is stuck */
	if (c->src_sent <= c->bytes_done)
		return lc_err_set(e, LC_ERR_TIMEOUT, "no progress for %u s: "
		    "the source on %s has sent nothing", c->o->timeout_s,
		    c->src.name);
	return lc_err_set(e, LC_ERR_TIMEOUT, "no progress for %u s: data sent "
	    "by %s is not arriving at %s (network or data streams stalled)",
	    c->o->timeout_s, c->src.name, c->dst_ep.name);
}

static int
lc_ctl_loop(struct lc_ctl *c, int signal_fd, struct lc_err *e)
{
	struct lc_endpoint *eps[2] = { &c->src, &c->dst_ep };
	struct pollfd pfd[3];
	int r;

	c->t_src_msg = c->t_dst_msg = c->t_progress = lc_now_ms();
	while (!(c->src_bye && c->dst_bye)) {
		int timeout = c->o->progress_ms != 0 || c->o->timeout_s != 0 ?
		    200 : -1;

		for (int i = 0; i < 2; i++) {
			pfd[i].fd = eps[i]->eof ? -1 : eps[i]->fd;
			pfd[i].events = POLLIN |
			    (lc_buf_len(&eps[i]->out) > 0 ? POLLOUT : 0);
		}
		pfd[2].fd = signal_fd;
		pfd[2].events = POLLIN;
		if (poll(pfd, 3, timeout) < 0 && errno != EINTR)
			return lc_err_sys(e, LC_ERR_INTERNAL, errno, "poll");
		if (signal_fd >= 0 && (pfd[2].revents & POLLIN) &&
		    (r = lc_ctl_signal(signal_fd, e)) != 0)
			return r;
		for (int i = 0; i < 2; i++) {
			struct lc_endpoint *ep = eps[i];
			if (pfd[i].revents == 0)
				continue;
			if ((pfd[i].revents & ~POLLOUT) != 0)
				(void)lc_endpoint_read(ep);
			if ((r = lc_ctl_drain(c, ep, e)) != 0)
				return r;
			if (ep->eof && !(ep == &c->src ? c->src_bye :
			    c->dst_bye))
				return lc_endpoint_lost(ep,
				    lc__ctl_agent_cmd(c), e);
		}
		if ((r = lc_ctl_step(c, e)) != 0)
			return r;
		for (int i = 0; i < 2; i++) {
			if (lc_endpoint_flush(eps[i]) != 0)
				return lc_endpoint_lost(eps[i],
				    lc__ctl_agent_cmd(c), e);
		}
		lc_ctl_tick(c);
		if ((r = lc_ctl_watchdog(c, e)) != 0)
			return r;
	}
	return 0;
}

static int
lc_ctl_parse_args(struct lc_ctl *c, struct lc_err *e)
{
	const struct lc_copy_opts *o = c->o;
	int r;

	if (o->nsources == 0 || o->dest == NULL)
		return lc_err_set(e, LC_ERR_USAGE, "need a source and a "
		    "destination");
	if ((c->srcs = calloc(o->nsources, sizeof(*c->srcs))) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < o->nsources; i++) {
		if ((r = lc_location_parse(o->sources[i], &c->srcs[i], e)) != 0)
			return r;
		if (i > 0 && !lc_location_same_host(&c->srcs[0], &c->srcs[i]))
			return lc_err_set(e, LC_ERR_USAGE, "all sources must "
			    "be on the same host (%s)", o->sources[i]);
	}
	if ((r = lc_location_parse(o->dest, &c->dst, e)) != 0)
		return r;
	if (!lc_location_is_remote(&c->srcs[0]) &&
	    !lc_location_is_remote(&c->dst) && !lc_testhook_allow_local(o))
		return lc_err_set(e, LC_ERR_USAGE, "neither source nor "
		    "destination is remote (use host:path on one side; for a "
		    "local copy use cp)");
	if ((c->reqs = calloc(o->nsources, sizeof(*c->reqs))) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < o->nsources; i++) {
		lc_path_basename(c->srcs[i].path, c->reqs[i].name,
		    sizeof(c->reqs[i].name));
		/* two sources would be written to one name (scp overwrites) */
		for (size_t j = 0; j < i; j++)
			if (strcmp(c->reqs[i].name, c->reqs[j].name) == 0)
				return lc_err_set(e, LC_ERR_USAGE, "%s and %s "
				    "would both be copied to \"%s\"",
				    o->sources[j], o->sources[i],
				    c->reqs[i].name);
	}
	if (o->nsources > 1 && o->expect[0] != '\0')
		return lc_err_set(e, LC_ERR_USAGE, "-E ALG=HEX checks one "
		    "file; %zu sources were given", o->nsources);
	snprintf(c->target_shown, sizeof(c->target_shown), "%s", o->dest);
	return 0;
}

/*
 * A data stream that breaks is often the echo of the other end's failure:
 * a sink that hits a full disk stops its streams, and the source may
 * report the broken stream first.  When an agent's ERROR says only that a
 * stream failed, give the other agent up to LC_CAUSE_WAIT_MS to say why,
 * and report its reason (and exit status) instead.
 */
static int
lc_ctl_root_cause(struct lc_ctl *c, int r, struct lc_err *e)
{
	struct lc_endpoint *other;
	const uint8_t *payload;
	size_t plen, flen;
	uint8_t type;
	uint64_t end;

	if (r != -LC_ERR_STREAM || c->err_ep == NULL)
		return r;
	other = c->err_ep == &c->src ? &c->dst_ep : &c->src;
	end = lc_now_ms() + LC_CAUSE_WAIT_MS;
	for (;;) {
		struct pollfd pfd;
		uint64_t now;

		while (lc_msg_peek(lc_buf_ptr(&other->in),
		    lc_buf_len(&other->in), &type, &payload, &plen,
		    &flen) == 1) {
			struct lc_err oe;
			int code;

			lc_err_clear(&oe);
			code = type == LC_MSG_ERROR ?
			    -lc_ctl_remote_error(other, payload, plen, &oe) : 0;
			lc_buf_consume(&other->in, flen);
			if (code == 0 || code == LC_ERR_STREAM ||
			    code == LC_ERR_EOF || code == LC_ERR_CANCELED)
				continue;
			lc_log_verbose("%s", e->msg);	/* the echo */
			*e = oe;
			return -code;
		}
		if (other->eof || other->fd < 0 || (now = lc_now_ms()) >= end)
			return r;
		pfd.fd = other->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, (int)(end - now)) <= 0 ||
		    lc_endpoint_read(other) < 0)
			return r;
	}
}

int
lc_copy_run(const struct lc_copy_opts *o, int signal_fd,
    struct lc_copy_result *res, struct lc_err *e)
{
	struct lc_ctl c;
	char rate[32];
	int r;

	memset(&c, 0, sizeof(c));
	memset(res, 0, sizeof(*res));
	c.test_proxy = -1;
	c.o = o;
	c.res = res;
	lc_endpoint_init(&c.src);
	lc_endpoint_init(&c.dst_ep);
	if ((r = lc_ctl_parse_args(&c, e)) != 0)
		goto out;
	/* the sink first: a bad target is usually the cheaper mistake */
	if ((r = lc_ctl_open(&c, &c.dst_ep, &c.dst, e)) != 0 ||
	    (r = lc_ctl_open(&c, &c.src, &c.srcs[0], e)) != 0)
		goto out;
	c.t_start = lc_now_ns();
	if ((r = lc__ctl_send_hello(&c.src)) != 0 ||
	    (r = lc__ctl_send_hello(&c.dst_ep)) != 0) {
		lc_err_set(e, -r, "control output");
		goto out;
	}
	if ((r = lc_ctl_loop(&c, signal_fd, e)) != 0) {
		r = lc_ctl_root_cause(&c, r, e);
		goto out;
	}
	res->bytes = c.bytes_done;
	res->files = c.files_done;
	if (o->progress_ms != 0) {
		if (c.progress.start_ns == 0)
			lc_progress_init(&c.progress, 2, c.bytes_total);
		c.progress.total = c.bytes_total;
		lc_progress_finish(&c.progress, c.bytes_done);
	}
	lc_fmt_rate(rate, sizeof(rate), res->bytes, res->ns);
	lc_log_verbose("copied %u file%s, %llu bytes in %.3f s (%s) to %s",
	    res->files, res->files == 1 ? "" : "s",
	    (unsigned long long)res->bytes, (double)res->ns / 1e9, rate,
	    c.target_shown);
 out:
	res->sent = c.src_sent;
	if (res->ns == 0 && c.t_start != 0)
		res->ns = lc_now_ns() - c.t_start;
	if (r != 0 && c.progress.drawn)
		(void)lc_write_all(2, "\n", 1);
	/* close both channels first so that both agents stop at once */
	if (c.src.fd >= 0) {
		close(c.src.fd);
		c.src.fd = -1;
	}
	if (c.dst_ep.fd >= 0) {
		close(c.dst_ep.fd);
		c.dst_ep.fd = -1;
	}
	lc_endpoint_close(&c.src, LC_CLOSE_WAIT_MS, NULL);
	lc_endpoint_close(&c.dst_ep, LC_CLOSE_WAIT_MS, NULL);
	lc_endpoint_free(&c.src);
	lc_endpoint_free(&c.dst_ep);
	lc_testhook_proxy_stop(c.test_proxy);
	OPENSSL_cleanse(c.key, sizeof(c.key));
	free(c.srcs);
	free(c.reqs);
	free(c.files);
	return r;
}
