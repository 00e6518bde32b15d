/*
 * Controller state machine (single thread, poll loop):
 *
 *   HELLO both; the source's HELLO in -> negotiate -> sink: SINK_TARGET,
 *                       LISTEN (behind its HELLO); source: SRC_ADD*
 *   sink LISTENING   -> source CONNECT (address the controller itself used)
 *                       (those two steps: negotiate.c, datapath.c)
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
#include "checksum.h"
#include "clock.h"
#include "fdio.h"
#include "log.h"
#include "parse.h"
#include "path.h"
#include "secmem.h"
#include "testhook.h"
#include "testhook_ctl.h"
#include "thread.h"

#include <errno.h>
#include <poll.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LC_CLOSE_WAIT_MS 3000
#define LC_PING_MS 1000		/* the agents' heartbeat */
#define LC_AGENT_GRACE_S 60	/* an agent that hears nothing this long
				   stops (PING) */
#define LC_CAUSE_WAIT_MS 2000
#define LC_STALL_MS 3000	/* data still this long: report the gap */
#define LC_LIVE_MS 250		/* the live progress line: redraws */
#define LC_STOP_WAIT_MS 2000	/* STOP: how long the sink may take */

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
	struct lc_ctl_file *f;

	/* in flight: announced (ids 1..n in order) and not yet done */
	if (id < c->lo || id == 0 || id > c->files_total)
		return NULL;
	f = &c->ring[id % LC_FILES_INFLIGHT];
	return f->id == id ? f : NULL;
}

static int
lc_ctl_file_add(struct lc_ctl *c, const struct lc_msg_file *m)
{
	/* m->id < credit <= lo + LC_FILES_INFLIGHT: its slot is free */
	struct lc_ctl_file *f = &c->ring[m->id % LC_FILES_INFLIGHT];
	char *name;

	if (f->id != 0 || (name = strdup(m->name)) == NULL)
		return -LC_ERR_NOMEM;
	memset(f, 0, sizeof(*f));
	f->id = m->id;
	f->kind = m->kind;
	f->req = c->listed;
	f->size = m->size;
	if (m->kind == LC_KIND_STREAM) {	/* FILE_LEN says how long */
		f->kind = LC_KIND_REG;
		f->stream = 1;
		f->size = LC_STREAM_MAX;
	}
	f->name = name;
	return 0;
}

/*
 * f is done (written, made, skipped or failed): free the slots of the
 * done files at the low end, and move the source's credit on (in steps,
 * not per file; at once when nothing is left in flight, since the source
 * may be waiting for it).
 */
static int
lc_ctl_file_finish(struct lc_ctl *c, struct lc_ctl_file *f)
{
	struct lc_msg_src_credit cr;
	struct lc_ctl_file *g;

	f->done = 1;
	c->files_done++;
	while (c->lo <= c->files_total) {
		g = &c->ring[c->lo % LC_FILES_INFLIGHT];
		if (g->id != c->lo || !g->done)
			break;
		free(g->name);
		memset(g, 0, sizeof(*g));
		c->lo++;
	}
	cr.upto = c->lo + LC_FILES_INFLIGHT;
	if (cr.upto <= c->credit || (cr.upto - c->credit <
	    LC_FILES_INFLIGHT / 8 && c->lo <= c->files_total))
		return 0;
	c->credit = cr.upto;
	return lc_msg_put_src_credit(&c->src.out, &cr);
}

static void
lc_ctl_files_free(struct lc_ctl *c)
{
	for (size_t i = 0; i < LC_FILES_INFLIGHT; i++)
		free(c->ring[i].name);
	for (size_t i = 0; c->reqs != NULL && i < c->o->nsources; i++) {
		free(c->reqs[i].last);
		free(c->reqs[i].lastdir);
	}
}

/*
 * A file the copy could not take (the source could not read it, or the
 * sink could not write it): said now, on one line, and counted; the copy
 * goes on and ends with LC_ERR_PARTIAL.  what is the peer's text: printed
 * with control characters replaced.
 */
static void
lc_ctl_failed(struct lc_ctl *c, const char *where, const char *what)
{
	struct lc_copy_result *res = c->res;
	char clean[LC_ERR_MSG_MAX], shown[LC_PATH_MAX + 600];

	lc_printable(what, clean, sizeof(clean));
	lc_printable(where, shown, sizeof(shown));
	/* the path is the one the controller checked, not the peer's text */
	lc_log_error("%s: %s", shown, clean);
	if (res->nfailed < LC_RESULT_FAILED) {
		snprintf(res->failed[res->nfailed].path,
		    sizeof(res->failed[res->nfailed].path), "%.500s", where);
		snprintf(res->failed[res->nfailed].err,
		    sizeof(res->failed[res->nfailed].err), "%.250s", what);
	}
	res->nfailed++;
}

/* ---- setup ---- */

static int
lc_ctl_open(struct lc_ctl *c, struct lc_endpoint *ep,
    const struct lc_location *loc, struct lc_err *e)
{
	/* kept: --via-ssh opens more connections the same way */
	struct lc_ssh_opts *so = ep == &c->src ? &c->so_src : &c->so_dst;

	memcpy(ep->transfer, c->o->transfer, sizeof(ep->transfer));
	if (!lc_location_is_remote(loc))
		return lc_endpoint_open_local(ep, e);
	/* no lanecp there: bring ours, unless -T names one or pushing is
	   off (push.h) */
	ep->push = c->o->agent_cmd == NULL && !c->o->no_push;
	ep->no_push = c->o->agent_cmd == NULL ? c->o->no_push : 0;
	memset(so, 0, sizeof(*so));
	so->host = loc->host;
	so->user = loc->user[0] != '\0' ? loc->user : NULL;
	so->config_file = c->o->config_file;
	so->identity_file = c->o->identity_file;
	so->jump = c->o->jump;
	so->batch = c->o->batch;
	return lc_endpoint_open_remote(ep, so, lc__ctl_agent_cmd(c), e);
}

/* The source's connection, opened in a thread of its own (lc_ctl_open_both). */
struct lc_ctl_opener {
	struct lc_ctl *c;
	struct lc_err e;
	int r;
};

static void *
lc_ctl_open_src_thread(void *arg)
{
	struct lc_ctl_opener *op = arg;

	op->r = lc_ctl_open(op->c, &op->c->src, &op->c->srcs[0], &op->e);
	return NULL;
}

/*
 * Both ends.  Two remote hosts are reached in parallel: each SSH setup
 * (TCP, key exchange, authentication, exec) is several round trips, and
 * neither needs the other.  When both fail, the sink's error is the one
 * reported (a bad target is usually the cheaper mistake); with one
 * remote end there is nothing to overlap.
 */
static int
lc_ctl_open_both(struct lc_ctl *c, struct lc_err *e)
{
	struct lc_ctl_opener op;
	pthread_t t;
	int r;

	if (!lc_location_is_remote(&c->dst) ||
	    !lc_location_is_remote(&c->srcs[0])) {
		if ((r = lc_ctl_open(c, &c->dst_ep, &c->dst, e)) != 0)
			return r;
		return lc_ctl_open(c, &c->src, &c->srcs[0], e);
	}
	memset(&op, 0, sizeof(op));
	op.c = c;
	if (lc_thread_start(&t, "lc-open", lc_ctl_open_src_thread, &op) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "thread");
	r = lc_ctl_open(c, &c->dst_ep, &c->dst, e);
	pthread_join(t, NULL);
	if (r != 0)
		return r;
	if (op.r != 0)
		*e = op.e;
	return op.r;
}

static int
lc_ctl_maybe_nomore(struct lc_ctl *c)
{
	if (c->nomore_sent || c->listed < c->adds_sent ||
	    c->files_settled < c->files_total)
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

/* 1 if name lies beneath request rq's root directory (not the root). */
static int
lc_ctl_below_root(const struct lc_ctl_req *rq, const char *name)
{
	size_t rl = strlen(rq->name);

	return rq->root_dir && strncmp(name, rq->name, rl) == 0 &&
	    name[rl] == '/';
}

/* 1 if dir is anc or lies beneath it ("" is the root of everything). */
static int
lc_ctl_within(const char *dir, const char *anc)
{
	size_t n = strlen(anc);

	return n == 0 || (strncmp(dir, anc, n) == 0 &&
	    (dir[n] == '\0' || dir[n] == '/'));
}

/*
 * FILE from the source: it must lie within what request `listed` asked
 * for.  Without -r that is one regular file named like the request; with
 * -r, the request's root (a file or a directory) and, beneath a directory,
 * names under it.  Names come in listing order (lc_relname_cmp: strictly
 * increasing, so none twice) and each one's parent is the root or a
 * directory announced before (the sink makes directories before their
 * contents).  Set-id and sticky bits are dropped here (only 0777 is
 * relayed) unless root asked for -p from a local source.
 */
static int
lc_ctl_check_file(struct lc_ctl *c, struct lc_msg_file *m, struct lc_err *e)
{
	const char *h = c->src.name;
	const struct lc_ctl_req *rq;
	uint32_t want = c->files_total + 1;
	char parent[LC_PATH_MAX];
	const char *slash;
	int contents, is_root;

	if (c->listed >= c->adds_sent)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" which was not asked for (every request was "
		    "already answered)", h, m->name);
	rq = &c->reqs[c->listed];
	contents = (rq->flags & LC_ADD_CONTENTS) != 0;
	if (!contents && (strcmp(rq->name, ".") == 0 ||
	    strcmp(rq->name, "..") == 0 || strchr(rq->name, '/') != NULL ||
	    rq->name[0] == '\0'))
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" for \"%.200s\", which cannot name a copy", h,
		    m->name, c->srcs[c->listed].path);
	is_root = !contents && strcmp(m->name, rq->name) == 0;
	if (!lc_relname_ok(m->name) || (!contents && !is_root &&
	    !lc_ctl_below_root(rq, m->name)))
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" which was not asked for (asked for \"%.200s\")",
		    h, m->name, contents ? "the contents of a directory" :
		    rq->name);
	if (is_root && rq->files != 0)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" twice (file %u, after file %u)", h, m->name,
		    m->id, c->files_total);
	if (contents && rq->files == 0 && !c->o->recursive)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" which was not asked for", h, m->name);
	if ((m->kind == LC_KIND_STREAM) !=
	    !!(rq->flags & (LC_ADD_STDIN | LC_ADD_PROGRAM)))
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" as a %s; a %s was asked for", h, m->name,
		    m->kind == LC_KIND_STREAM ? "stream" : "file",
		    m->kind == LC_KIND_STREAM ? "file" : "stream");
	if (is_root && m->kind != LC_KIND_REG && m->kind != LC_KIND_STREAM &&
	    !(m->kind == LC_KIND_DIR && c->o->recursive))
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" as a %s; a file was asked for", h, m->name,
		    m->kind == LC_KIND_DIR ? "directory" : "symlink");
	if (m->id != want)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" as file %u, expected file %u", h, m->name,
		    m->id, want);
	if (m->id >= c->credit)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "file %u beyond its window (ids below %u)", h, m->id,
		    c->credit);
	if (!is_root) {
		if (rq->last != NULL && lc_relname_cmp(rq->last, m->name) >= 0)
			return lc_err_set(e, LC_ERR_PROTO, "%s: source "
			    "announced \"%.200s\" out of order (after "
			    "\"%.200s\")", h, m->name, rq->last);
		slash = strrchr(m->name, '/');
		snprintf(parent, sizeof(parent), "%.*s", slash != NULL ?
		    (int)(slash - m->name) : 0, m->name);
		if (strcmp(parent, contents ? "" : rq->name) != 0 &&
		    (rq->lastdir == NULL ||
		    !lc_ctl_within(rq->lastdir, parent)))
			return lc_err_set(e, LC_ERR_PROTO, "%s: source "
			    "announced \"%.200s\" in a directory it did not "
			    "announce", h, m->name);
	}
	if (m->size > (uint64_t)INT64_MAX - c->bytes_total)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" with %llu bytes, more than a copy can hold", h,
		    m->name, (unsigned long long)m->size);
	if ((m->mode & ~0777u) != 0 && !c->keep_setid) {
		lc_log_debug("%s: mode %04o of %s from the source: "
		    "set-id and sticky bits dropped", h, (unsigned)m->mode,
		    m->name);
		m->mode &= 0777u;
	}
	return 0;
}

/* Keep *slot = a copy of name. */
static int
lc_ctl_keep_name(char **slot, const char *name)
{
	char *n = strdup(name);

	if (n == NULL)
		return -LC_ERR_NOMEM;
	free(*slot);
	*slot = n;
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
	if ((r = lc_ctl_file_add(c, m)) != 0 ||
	    (r = lc_ctl_keep_name(&rq->last, m->name)) != 0 ||
	    (m->kind == LC_KIND_DIR &&
	    (r = lc_ctl_keep_name(&rq->lastdir, m->name)) != 0))
		return lc_err_set(e, -r, "out of memory");
	if (rq->files == 0 && m->kind == LC_KIND_DIR &&
	    !(rq->flags & LC_ADD_CONTENTS))
		rq->root_dir = 1;
	rq->files++;
	rq->bytes += m->size;
	if (m->kind == LC_KIND_STREAM)
		c->streams_open++;	/* until its FILE_LEN */
	c->files_total++;
	c->bytes_total += m->size;
	return lc_msg_put_file(&c->dst_ep.out, m);
}

/*
 * Where entry name of request k is at the source, "host:path" style: the
 * request's directory (or "dir/" itself), then the name.
 */
static void
lc_ctl_src_where(struct lc_ctl *c, uint32_t k, const char *name, char *out,
    size_t outsz)
{
	const struct lc_location *l = &c->srcs[k];
	char dir[LC_PATH_MAX];
	size_t dl;

	if (c->reqs[k].flags & LC_ADD_CONTENTS)
		snprintf(dir, sizeof(dir), "%s", l->path);
	else
		lc_path_dirname(l->path, dir, sizeof(dir));
	dl = strlen(dir);
	snprintf(out, outsz, "%.255s%s%.1000s%s%.1000s", l->host,
	    l->host[0] != '\0' ? ":" : "", dir,
	    dl > 0 && dir[dl - 1] == '/' ? "" : "/", name);
}

/* FILE_FAIL: an entry of the current request the source could not read. */
static int
lc_ctl_src_fail(struct lc_ctl *c, const struct lc_msg_file_fail *m,
    struct lc_err *e)
{
	const struct lc_ctl_req *rq;
	char where[LC_PATH_MAX + 600];

	if (c->listed >= c->adds_sent || !c->o->recursive)
		return lc_err_set(e, LC_ERR_PROTO, "%s: unexpected FILE_FAIL "
		    "from the source", c->src.name);
	rq = &c->reqs[c->listed];
	if (!(rq->flags & LC_ADD_CONTENTS) && !lc_ctl_below_root(rq, m->name))
		return lc_err_set(e, LC_ERR_PROTO, "%s: source reported "
		    "\"%.200s\", which was not asked for", c->src.name,
		    m->name);
	lc_ctl_src_where(c, c->listed, m->name, where, sizeof(where));
	lc_ctl_failed(c, where, m->msg);
	return 0;
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
	if ((!c->o->recursive && rq->files != 1) || m->files != rq->files ||
	    m->bytes != rq->bytes)
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

/*
 * FILE_LEN: a stream (stdin, -N i) ended.  Once, for a stream the sink is
 * ready for; its size becomes the length (the sink checks it against
 * what it received), within the copy's 2^63 - 1.
 */
static int
lc_ctl_src_len(struct lc_ctl *c, const struct lc_msg_file_len *m,
    struct lc_err *e)
{
	struct lc_ctl_file *f = lc_ctl_file_find(c, m->id);

	if (f == NULL || !f->stream || !f->ready || f->len_known || f->done ||
	    m->length > (uint64_t)INT64_MAX - c->bytes_total)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source sent an "
		    "unexpected FILE_LEN for file %u (%llu bytes)", c->src.name,
		    m->id, (unsigned long long)m->length);
	f->len_known = 1;
	f->size = m->length;
	c->streams_open--;
	c->bytes_total += m->length;
	c->t_progress = lc_now_ms();
	return lc_msg_put_file_len(&c->dst_ep.out, m);
}

static int
lc_ctl_src_match(struct lc_ctl *c, const struct lc_msg_prefix_match *m,
    struct lc_err *e)
{
	struct lc_ctl_file *f = lc_ctl_file_find(c, m->id);
	struct lc_span spans[LC_PREFIX_MAX_RUNS];

	if (f == NULL || !f->prefixed || f->matched ||
	    lc_prefix_match_check(m, f->prefix_len, f->chunk) != 0)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source sent an "
		    "unexpected PREFIX_MATCH for file %u (%llu bytes, %u runs)",
		    c->src.name, m->id, (unsigned long long)m->match, m->n);
	f->matched = 1;
	f->match = m->match;
	/* kept: the partial file below the cut, less the runs sent again */
	f->kept = m->match - lc_prefix_match_spans(m, f->prefix_len, f->chunk,
	    spans);
	c->res->resumed += f->kept;
	c->t_progress = lc_now_ms();
	return lc_msg_put_prefix_match(&c->dst_ep.out, m);
}

/*
 * FILE_ABORT: a file the source listed (and the sink is ready for) cannot
 * be read after all: reported, relayed so that the sink drops it (it
 * answers FILE_SKIP), and not counted as sent.
 */
static int
lc_ctl_src_abort(struct lc_ctl *c, const struct lc_msg_file_abort *m,
    struct lc_err *e)
{
	struct lc_ctl_file *f = lc_ctl_file_find(c, m->id);
	char where[LC_PATH_MAX + 600];
	int r;

	if (f == NULL || !f->ready || f->done || f->aborted ||
	    f->kind != LC_KIND_REG)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source sent an "
		    "unexpected FILE_ABORT for file %u", c->src.name, m->id);
	f->aborted = 1;
	c->files_sent--;
	c->res->resumed -= f->kept;	/* not copied after all */
	lc_ctl_src_where(c, f->req, f->name, where, sizeof(where));
	lc_ctl_failed(c, where, m->msg);
	if ((r = lc_msg_put_file_abort(&c->dst_ep.out, m)) != 0)
		return lc_err_set(e, -r, "control output");
	return 0;
}

static int
lc_ctl_from_src(struct lc_ctl *c, uint8_t type, const uint8_t *p, size_t n,
    struct lc_err *e)
{
	union {
		struct lc_msg_file file;
		struct lc_msg_file_fail fail;
		struct lc_msg_file_abort abort;
		struct lc_msg_src_listed listed;
		struct lc_msg_connected conn;
		struct lc_msg_xfer_done done;
		struct lc_msg_file_sum sum;
		struct lc_msg_file_len len;
		struct lc_msg_prefix_match match;
		struct lc_msg_progress prog;
	} m;

	switch (type) {
	case LC_MSG_FILE_LEN:
		if (lc_msg_get_file_len(p, n, &m.len) != 0)
			break;
		return lc_ctl_src_len(c, &m.len, e);
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
		    m.prog.written != 0 || m.prog.wire < c->src_wire)
			break;
		c->src_sent = m.prog.bytes;
		c->src_wire = m.prog.wire;
		return 0;
	case LC_MSG_FILE:
		if (lc_msg_get_file(p, n, &m.file) != 0)
			break;
		return lc_ctl_src_file(c, &m.file, e);
	case LC_MSG_FILE_FAIL:
		if (lc_msg_get_file_fail(p, n, &m.fail) != 0)
			break;
		return lc_ctl_src_fail(c, &m.fail, e);
	case LC_MSG_FILE_ABORT:
		if (lc_msg_get_file_abort(p, n, &m.abort) != 0)
			break;
		return lc_ctl_src_abort(c, &m.abort, e);
	case LC_MSG_SRC_LISTED:
		if (lc_msg_get_src_listed(p, n, &m.listed) != 0)
			break;
		return lc_ctl_src_listed(c, &m.listed, e);
	case LC_MSG_CONNECTED:
		/* the source names its ports when it listens (reverse) */
		if (lc_msg_get_connected(p, n, &m.conn) != 0 ||
		    !c->listening || c->connected ||
		    m.conn.streams != c->streams ||
		    (m.conn.nports != 0) !=
		    !!(lc__ctl_connect_flags(c) & LC_XFER_REVERSE))
			break;
		c->connected = 1;
		if (m.conn.nports == 0)
			lc_log_verbose("%u data streams connected",
			    m.conn.streams);
		return lc__ctl_connected(c, &m.conn, e);
	case LC_MSG_SRC_DONE:
		if (lc_msg_get_xfer_done(p, n, &m.done) != 0 ||
		    !c->nomore_sent || c->src_done ||
		    m.done.files != c->files_sent ||
		    m.done.bytes < c->src_sent || m.done.wire < c->src_wire)
			break;
		c->src_done = 1;
		c->src_sent = m.done.bytes;
		c->src_wire = m.done.wire;
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
		/* with "-" as the target, stdout carries the data */
		FILE *out = c->stdout_target ? stderr : stdout;
		lc_log_status_clear();	/* stdout may be that terminal too */
		fprintf(out, "%.*s %s %s\n", (int)(colon - sum), sum,
		    colon + 1, where);
		fflush(out);
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
	int reg = f != NULL && f->kind == LC_KIND_REG;
	int r;

	/* a directory or link is made at once: no FILE_READY, no bytes */
	if (f == NULL || f->done || (reg && !f->ready) ||
	    (f->stream && !f->len_known) ||
	    (!reg && (f->ready || m->bytes != 0 || m->checksum[0] != '\0')) ||
	    m->bytes != f->size ||
	    (m->checksum[0] != '\0' && !lc_ctl_csum_ok(c, m->checksum)))
		return lc_err_set(e, LC_ERR_PROTO, "%s: bad FILE_DONE for "
		    "file %u", c->dst_ep.name, m->id);
	c->t_progress = lc_now_ms();
	if (reg) {
		c->files_written++;
		lc_log_verbose("%s: done, %llu bytes%s%s", f->name,
		    (unsigned long long)m->bytes, m->checksum[0] ? ", " : "",
		    m->checksum);
	} else {
		c->files_settled++;
	}
	if (m->checksum[0] != '\0')
		lc_ctl_record_sum(c, f, m->checksum);
	if ((r = lc_ctl_file_finish(c, f)) != 0)
		return lc_err_set(e, -r, "control output");
	return lc_ctl_maybe_nomore(c);
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
	struct lc_ctl_file *f = lc_ctl_file_find(c, m->id);
	int r;

	if (f != NULL && f->aborted && !f->done && m->why == LC_SKIP_FAILED) {
		/* the sink dropped what the source aborted: said already */
		c->t_progress = lc_now_ms();
		if ((r = lc_ctl_file_finish(c, f)) != 0)
			return lc_err_set(e, -r, "control output");
		return lc_ctl_maybe_nomore(c);
	}
	if (f == NULL || f->done || f->ready ||
	    (m->why != LC_SKIP_FAILED && f->kind == LC_KIND_DIR) ||
	    (f->prefixed && !f->matched))
		return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent an "
		    "unexpected FILE_SKIP for file %u", c->dst_ep.name, m->id);
	if (m->why == LC_SKIP_FAILED) {
		char where[LC_PATH_MAX + 600];
		lc_ctl_file_where(c, f, where, sizeof(where));
		lc_ctl_failed(c, where, m->msg);
	}
	else
		lc_log_verbose("%s: %s, skipped", f->name,
		    m->why == LC_SKIP_UPTODATE ? "up to date" : "exists");
	if (m->why != LC_SKIP_FAILED)
		c->res->skipped++;
	c->files_settled++;
	c->t_progress = lc_now_ms();
	if (f->kind == LC_KIND_REG &&
	    (r = lc_msg_put_file_skip(&c->src.out, m)) != 0)
		return lc_err_set(e, -r, "control output");
	if ((r = lc_ctl_file_finish(c, f)) != 0)
		return lc_err_set(e, -r, "control output");
	return lc_ctl_maybe_nomore(c);
}

/* Sink messages relayed to the source: only announced ids, in order. */
static int
lc_ctl_dst_ready(struct lc_ctl *c, const struct lc_msg_file_ready *m,
    struct lc_err *e)
{
	struct lc_ctl_file *f = lc_ctl_file_find(c, m->id);
	int r;

	if (f == NULL || f->ready || f->done || f->kind != LC_KIND_REG ||
	    m->start > f->size || (f->stream && m->start != 0) ||
	    (f->prefixed && (!f->matched || m->start > f->match)))
		return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent an "
		    "unexpected FILE_READY for file %u (from byte %llu)",
		    c->dst_ep.name, m->id, (unsigned long long)m->start);
	f->ready = 1;
	c->files_settled++;
	c->files_sent++;
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
	    f->done || f->kind != LC_KIND_REG || f->stream ||
	    m->length > f->size)
		return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent an "
		    "unexpected FILE_PREFIX for file %u (%llu bytes)",
		    c->dst_ep.name, m->id, (unsigned long long)m->length);
	f->prefixed = 1;
	f->prefix_len = m->length;
	f->chunk = m->chunk;
	c->t_progress = lc_now_ms();
	return lc_msg_put_file_prefix(&c->src.out, m);
}

static int
lc_ctl_dst_lost(struct lc_ctl *c, const struct lc_msg_stream_lost *m,
    struct lc_err *e)
{
	const struct lc_ctl_file *f = lc_ctl_file_find(c, m->last_file);

	/* its last block may belong to a file that is done by now */
	if (!c->listening || m->stream >= c->streams || m->has_last > 1 ||
	    (m->has_last && (m->last_file == 0 ||
	    m->last_file > c->files_total || (f != NULL && (!f->ready ||
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
 * The sink's low-water mark, forwarded to the source as ACK: an announced
 * file and an offset within it, or the id after the last with nothing
 * written.  (bytes counts resent blocks too, so it has no upper bound.)
 */
/*
 * The time lost to a stall or an outage: when data moves again after at
 * least LC_STALL_MS without any (the sink's heartbeat says so once a
 * second), say how long and add it to the result (--json
 * "stalled_seconds").
 */
static void
lc_ctl_moved(struct lc_ctl *c, uint64_t bytes)
{
	uint64_t now = lc_now_ms();

	if (bytes == c->bytes_done)
		return;
	if (c->res->t_first_ms == 0)
		c->res->t_first_ms = now;
	c->res->t_last_ms = now;
	if (c->t_moved != 0 && now - c->t_moved >= LC_STALL_MS) {
		c->res->stalled_ms += now - c->t_moved;
		lc_log_warn("data is moving again after %.1f s without "
		    "progress", (double)(now - c->t_moved) / 1000);
	}
	c->t_moved = now;
}

/*
 * The sink's count of bytes written (PROGRESS, SINK_DONE): each byte is
 * counted once, when the ordered writer writes it (sink.c), so the count
 * never goes backwards and never exceeds what the files announced so far
 * hold (while a stream's length is unknown, that has no bound).
 */
static int
lc_ctl_sink_bytes(const struct lc_ctl *c, const char *what, uint64_t bytes,
    struct lc_err *e)
{
	if (bytes < c->bytes_done)
		return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent a bad %s: "
		    "its byte count went backwards (%llu after %llu)",
		    c->dst_ep.name, what, (unsigned long long)bytes,
		    (unsigned long long)c->bytes_done);
	if (c->streams_open == 0 && bytes > c->bytes_total)
		return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent a bad %s: "
		    "%llu bytes written of %llu", c->dst_ep.name, what,
		    (unsigned long long)bytes,
		    (unsigned long long)c->bytes_total);
	return 0;
}

static int
lc_ctl_dst_progress(struct lc_ctl *c, const struct lc_msg_progress *m,
    struct lc_err *e)
{
	const struct lc_ctl_file *f = lc_ctl_file_find(c, m->file);
	struct lc_msg_ack ack;
	int r;

	/* the sink's mark never trails what it has said is done */
	if (m->file > c->files_total + 1 || m->file < c->lo ||
	    (f == NULL ? m->written != 0 : m->written > f->size))
		return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent a bad "
		    "PROGRESS (file %u, %llu bytes written)", c->dst_ep.name,
		    m->file, (unsigned long long)m->written);
	/* and, like its byte count, it only moves forward */
	if (m->file < c->mark_file ||
	    (m->file == c->mark_file && m->written < c->mark_written))
		return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent a bad "
		    "PROGRESS: its mark went backwards (file %u byte %llu, "
		    "after file %u byte %llu)", c->dst_ep.name, m->file,
		    (unsigned long long)m->written, c->mark_file,
		    (unsigned long long)c->mark_written);
	if ((r = lc_ctl_sink_bytes(c, "PROGRESS", m->bytes, e)) != 0)
		return r;
	c->mark_file = m->file;
	c->mark_written = m->written;
	lc_ctl_moved(c, m->bytes);
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
		struct lc_msg_file_skip skip;
	} m;
	int r;

	switch (type) {
	case LC_MSG_FILE_SKIP:
		if (lc_msg_get_file_skip(p, n, &m.skip) != 0)
			break;
		return lc_ctl_dst_skip(c, &m.skip, e);
	case LC_MSG_TARGET_OK:
		if (lc_msg_get_target_ok(p, n, &m.ok) != 0)
			break;
		/* one answer to the one SINK_TARGET */
		if (c->target_ok)
			return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent "
			    "TARGET_OK twice", c->dst_ep.name);
		c->target_ok = 1;
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
		/*
		 * The sink is done once every stream has ended (after the
		 * source was told there is no more) and every file is: not
		 * before, or the copy would end while it still works.
		 */
		if (!c->nomore_sent || c->files_done != c->files_total)
			return lc_err_set(e, LC_ERR_PROTO, "%s: sink sent "
			    "SINK_DONE before the copy was done (%u of %u "
			    "files%s)", c->dst_ep.name, c->files_done,
			    c->files_total, c->nomore_sent ? "" :
			    ", more to come");
		if ((r = lc_ctl_sink_bytes(c, "SINK_DONE", m.xfer.bytes,
		    e)) != 0)
			return r;
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

	/* the sink's HELLO need not be in (negotiate.c) */
	if (!c->negotiated && c->src.hello_seen &&
	    (r = lc__ctl_negotiate(c, e)) != 0)
		return r;
	if (c->negotiated && !c->bye_sent && lc_now_ms() >= c->next_ping) {
		struct lc_msg_ping pg = {
			.grace_s = (uint32_t)lc_testhook_uint(
			    "LANECP_TEST_GRACE_S", 1, LC_PING_GRACE_MAX,
			    LC_AGENT_GRACE_S) };
		c->next_ping = lc_now_ms() + LC_PING_MS;
		if ((r = lc_msg_put_ping(&c->src.out, &pg)) != 0 ||
		    (r = lc_msg_put_ping(&c->dst_ep.out, &pg)) != 0)
			return lc_err_set(e, -r, "control output");
	}
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

/* Bytes of the files in place: kept by resume, and written since. */
static uint64_t
lc_ctl_done(const struct lc_ctl *c)
{
	return c->res->resumed + c->bytes_done;
}

/* The remote push script's part (push.h), before any HELLO is sent. */
static int
lc_ctl_boot(struct lc_ctl *c, struct lc_endpoint *ep, int signal_fd,
    struct lc_err *e)
{
	int r;

	r = lc_endpoint_boot(ep, lc__ctl_agent_cmd(c), signal_fd,
	    c->o->timeout_s != 0 ? (int)c->o->timeout_s * 1000 : -1, e);
	if (r == 1 && (r = lc_ctl_signal(signal_fd, e)) == 0)
		r = lc_err_set(e, LC_ERR_CANCELED, "interrupted");
	return r;
}

static void
lc_ctl_progress_set(struct lc_ctl *c)
{
	if (c->progress.start_ns == 0)
		lc_progress_init(&c->progress, 2, c->o->live_progress,
		    c->bytes_total);
	c->progress.total = c->bytes_total;
	c->progress.files = c->files_done;
	c->progress.files_total = c->files_total;
	/* a tree's total is known once every source has been listed, a
	   stream's at its FILE_LEN: until then it is what came so far */
	c->progress.total_final = c->listed >= c->adds_sent &&
	    c->streams_open == 0;
	if (c->streams_open != 0 && c->bytes_done > c->progress.total)
		c->progress.total = c->bytes_done;
}

/* --json-progress: one line a second on stdout (report.c). */
static void
lc_ctl_json_tick(struct lc_ctl *c, uint64_t now_ms)
{
	uint64_t ns = lc_now_ns(), done = lc_ctl_done(c);
	uint64_t dt = c->json_ns != 0 ? ns - c->json_ns : 0;
	uint64_t db = done > c->json_bytes ? done - c->json_bytes : 0;
	struct lc_json_progress jp;

	if (now_ms < c->next_json)
		return;
	c->next_json = now_ms + 1000;
	memset(&jp, 0, sizeof(jp));
	jp.elapsed_ns = ns - (c->o->t_run != 0 ? c->o->t_run : c->t_start);
	jp.bytes = done;
	jp.total = c->bytes_total;
	jp.total_final = c->listed >= c->adds_sent;
	jp.rate = dt > 0 ? (uint64_t)((double)db * 1e9 / (double)dt) : 0;
	jp.files = c->files_done;
	jp.files_total = c->files_total;
	jp.streams = c->listening ? c->streams : 0;
	c->json_ns = ns;
	c->json_bytes = done;
	lc_log_status_clear();	/* stdout may be that terminal too */
	lc_json_progress(1, &jp);
}

static void
lc_ctl_tick(struct lc_ctl *c)
{
	uint64_t now = lc_now_ms();

	if (c->o->json_progress && c->negotiated)
		lc_ctl_json_tick(c, now);
	if ((c->o->progress_ms == 0 && !c->o->live_progress) ||
	    !c->negotiated ||
	    (c->listed < c->adds_sent && c->files_total == 0))
		return;
	if (now < c->next_progress)
		return;
	c->next_progress = now + (c->o->progress_ms != 0 ?
	    c->o->progress_ms : LC_LIVE_MS);
	lc_ctl_progress_set(c);
	lc_progress_update(&c->progress, lc_ctl_done(c));
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

	/* a relay that cannot reach an agent at all: try another path */
	if (c->relay != NULL && lc_relay_failed(c->relay, e))
		return -LC_ERR_NOPATH;

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
		int timeout = c->o->progress_ms != 0 || c->o->timeout_s != 0 ||
		    c->o->live_progress || c->o->json_progress ? 200 :
		    c->negotiated ? LC_PING_MS : -1;

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

/*
 * Several sources: the target must be a directory (as cp and scp say;
 * a local one is checked here, a remote one by its sink), and the
 * sources must be on one host.  A stray last argument usually shows as
 * one of the two.
 */
static int
lc_ctl_check_several(struct lc_ctl *c, struct lc_err *e)
{
	const struct lc_copy_opts *o = c->o;
	struct stat st;

	if (o->nsources < 2)
		return 0;
	if (!lc_location_is_remote(&c->dst) && stat(c->dst.path, &st) == 0 &&
	    !S_ISDIR(st.st_mode))
		return lc_err_set(e, LC_ERR_USAGE, "with several sources the "
		    "target must be a directory: %s", o->dest);
	for (size_t i = 1; i < o->nsources; i++)
		if (!lc_location_same_host(&c->srcs[0], &c->srcs[i]))
			return lc_err_set(e, LC_ERR_USAGE, "%s and %s are on "
			    "different hosts: several sources must be on one "
			    "host (the last argument, %s, is the target)",
			    o->sources[0], o->sources[i], o->dest);
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
	for (size_t i = 0; i < o->nsources; i++)
		if ((r = lc_location_parse(o->sources[i], &c->srcs[i], e)) != 0)
			return r;
	if ((r = lc_location_parse(o->dest, &c->dst, e)) != 0)
		return r;
	if ((r = lc_ctl_check_several(c, e)) != 0)
		return r;
	c->stdout_target = !o->prog_dst && strcmp(o->dest, "-") == 0;
	if (c->stdout_target || o->prog_dst)
		c->pipes = 1;
	if (!lc_location_is_remote(&c->srcs[0]) &&
	    !lc_location_is_remote(&c->dst) && !lc_testhook_allow_local(o))
		return lc_err_set(e, LC_ERR_USAGE, "neither source nor "
		    "destination is remote (use host:path on one side; for a "
		    "local copy use cp)");
	if ((c->reqs = calloc(o->nsources, sizeof(*c->reqs))) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < o->nsources; i++) {
		const char *sp = c->srcs[i].path;
		struct lc_ctl_req *rq = &c->reqs[i];

		rq->flags = (o->recursive ? LC_ADD_RECURSIVE : 0) |
		    (o->follow ? LC_ADD_FOLLOW : 0) |
		    (o->owner && !o->numeric_ids ? LC_ADD_NAMES : 0);
		/* a stream: one FILE named "-" (lc_copy_check_pipes said
		 * this is the only source, without -r) */
		if (o->prog_src || (strcmp(o->sources[i], "-") == 0 &&
		    !lc_location_is_remote(&c->srcs[i]))) {
			rq->flags = o->prog_src ? LC_ADD_PROGRAM :
			    LC_ADD_STDIN;
			snprintf(rq->name, sizeof(rq->name), "-");
			c->pipes = 1;
			continue;
		}
		/*
		 * rsync's "dir/": the contents of dir, not dir itself; so are
		 * "." and a remote "~" or "~user" (host: and host:~), which
		 * have no name of their own to copy to
		 */
		if (o->recursive && ((sp[0] != '\0' &&
		    sp[strlen(sp) - 1] == '/') || strcmp(sp, ".") == 0 ||
		    (lc_location_is_remote(&c->srcs[i]) && sp[0] == '~' &&
		    strchr(sp, '/') == NULL))) {
			rq->flags |= LC_ADD_CONTENTS;
			continue;
		}
		lc_path_basename(sp, rq->name, sizeof(rq->name));
		/* two sources would be written to one name (scp overwrites) */
		for (size_t j = 0; j < i; j++)
			if (!(c->reqs[j].flags & LC_ADD_CONTENTS) &&
			    strcmp(c->reqs[i].name, c->reqs[j].name) == 0)
				return lc_err_set(e, LC_ERR_USAGE, "%s and %s "
				    "would both be copied to \"%s\"",
				    o->sources[j], o->sources[i],
				    c->reqs[i].name);
	}
	if (o->nsources > 1 && o->expect[0] != '\0')
		return lc_err_set(e, LC_ERR_USAGE, "-E ALG=HEX checks one "
		    "file; %zu sources were given", o->nsources);
	if (o->recursive && o->expect[0] != '\0')
		return lc_err_set(e, LC_ERR_USAGE, "-E ALG=HEX checks one "
		    "file; it does not go with -r");
	if (o->numeric_ids && !o->owner)
		return lc_err_set(e, LC_ERR_USAGE, "--numeric-ids goes with "
		    "--owner");
	if (o->update && o->skip_existing)
		return lc_err_set(e, LC_ERR_USAGE, "-u and -O do not go "
		    "together (-O skips every existing file)");
	snprintf(c->target_shown, sizeof(c->target_shown), "%s", o->dest);
	/*
	 * Set-id and sticky bits travel only when root asked for -p and read
	 * them itself (a local source): a remote source's are never trusted.
	 */
	c->keep_setid = o->preserve && !lc_location_is_remote(&c->srcs[0]) &&
	    geteuid() == 0;
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

/*
 * The copy failed or was interrupted: unless the sink itself failed, ask
 * it to stop (STOP) and wait a little for its final count of the bytes
 * that reached the files (SINK_STOPPED), so that --json and -l report
 * what is on disk, not its last heartbeat.
 */
static void
lc_ctl_stop_sink(struct lc_ctl *c)
{
	struct lc_endpoint *ep = &c->dst_ep;
	struct lc_msg_xfer_done d;
	struct lc_msg_progress pr;
	struct lc_err se;
	const uint8_t *payload;
	size_t plen, flen;
	uint8_t type;
	uint64_t end;

	/* a sink that failed, or has been silent (stuck), will not answer */
	if (!c->negotiated || c->sink_done || c->err_ep == ep ||
	    ep->fd < 0 || ep->eof ||
	    lc_now_ms() - c->t_dst_msg > LC_STOP_WAIT_MS ||
	    lc_msg_put_empty(&ep->out, LC_MSG_STOP) != 0)
		return;
	end = lc_now_ms() + LC_STOP_WAIT_MS;
	for (;;) {
		struct pollfd pfd;
		uint64_t now;

		if (lc_endpoint_flush(ep) != 0)
			return;
		while (lc_msg_peek(lc_buf_ptr(&ep->in), lc_buf_len(&ep->in),
		    &type, &payload, &plen, &flen) == 1) {
			int got = 0;

			/* a count that cannot be true is not taken */
			if (type == LC_MSG_SINK_STOPPED &&
			    lc_msg_get_xfer_done(payload, plen, &d) == 0) {
				if (lc_ctl_sink_bytes(c, "SINK_STOPPED",
				    d.bytes, &se) == 0)
					c->bytes_done = d.bytes;
				else
					lc_log_warn("%s (not taken)", se.msg);
				got = 1;
			} else if (type == LC_MSG_PROGRESS &&
			    lc_msg_get_progress(payload, plen, &pr) == 0 &&
			    pr.bytes > c->bytes_done &&
			    lc_ctl_sink_bytes(c, "PROGRESS", pr.bytes,
			    &se) == 0)
				c->bytes_done = pr.bytes;
			lc_buf_consume(&ep->in, flen);
			if (got || type == LC_MSG_ERROR)
				return;
		}
		if (ep->eof || (now = lc_now_ms()) >= end)
			return;
		pfd.fd = ep->fd;
		pfd.events = POLLIN | (lc_buf_len(&ep->out) > 0 ? POLLOUT : 0);
		if (poll(&pfd, 1, (int)(end - now)) < 0 && errno != EINTR)
			return;
		if ((pfd.revents & ~POLLOUT) != 0 && lc_endpoint_read(ep) < 0)
			return;
	}
}

int
lc_copy_run(const struct lc_copy_opts *o, int signal_fd,
    struct lc_copy_result *res, struct lc_err *e)
{
	struct lc_ctl c;
	int r;

	memset(&c, 0, sizeof(c));
	memset(res, 0, sizeof(*res));
	c.test_proxy = -1;
	c.lo = 1;
	c.o = o;
	c.res = res;
	lc_endpoint_init(&c.src);
	lc_endpoint_init(&c.dst_ep);
	if ((r = lc_ctl_parse_args(&c, e)) != 0)
		goto out;
	/* the HELLOs first: the push script's command counts its bytes */
	if ((r = lc__ctl_send_hello(&c.src)) != 0 ||
	    (r = lc__ctl_send_hello(&c.dst_ep)) != 0) {
		lc_err_set(e, -r, "control output");
		goto out;
	}
	/* the sink's errors first: a bad target is usually the cheaper
	   mistake */
	if ((r = lc_ctl_open_both(&c, e)) != 0 ||
	    (r = lc_ctl_boot(&c, &c.dst_ep, signal_fd, e)) != 0 ||
	    (r = lc_ctl_boot(&c, &c.src, signal_fd, e)) != 0)
		goto out;
	c.t_start = lc_now_ns();
	if ((r = lc_ctl_loop(&c, signal_fd, e)) != 0) {
		r = lc_ctl_root_cause(&c, r, e);
		goto out;
	}
	res->files = c.files_written;
	res->entries = c.files_done;
	if (res->nfailed > 0)
		r = lc_err_set(e, LC_ERR_PARTIAL, "%u file%s could not be "
		    "copied (partial transfer); the rest was", res->nfailed,
		    res->nfailed == 1 ? "" : "s");
 out:
	if (r != 0)
		lc_ctl_stop_sink(&c);
	if (o->progress_ms != 0 || o->live_progress) {
		lc_ctl_progress_set(&c);
		lc_progress_finish(&c.progress, lc_ctl_done(&c));
	}
	res->bytes = c.bytes_done;
	/* the source's count is a second old after a failure: what reached
	   the files was sent (holes aside, which are not) */
	res->sent = c.src_sent > c.bytes_done || r == 0 ? c.src_sent :
	    c.bytes_done;
	res->wire = c.src_wire;
	if (res->ns == 0 && c.t_start != 0)
		res->ns = lc_now_ns() - c.t_start;
	lc__ctl_path_free(&c);
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
	lc_secmem_free(c.key, LC_KEY_LEN);
	lc_ctl_files_free(&c);
	free(c.srcs);
	free(c.reqs);
	return r;
}
