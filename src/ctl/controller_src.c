/*
 * The controller's checks of the source agent's messages (FILE,
 * FILE_FAIL, SRC_LISTED, FILE_SUM, FILE_LEN, PREFIX_MATCH, FILE_ABORT,
 * CONNECTED, SRC_DONE, ...), each against what was asked for before it
 * is forwarded to the sink or used.  The requests' state is struct
 * lc_ctl_check (controller_int.h).
 */
#include "controller_int.h"
#include "checksum.h"
#include "clock.h"
#include "log.h"
#include "path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Peer checks.  The controller is the one party that knows what the user
 * asked for, so it checks every message it forwards or uses against that:
 * request k (SRC_ADD k) asked for a path whose copy is called name; the
 * source must answer it with exactly one FILE (kind regular, that name,
 * the next file id, a size that keeps the total within 2^63 - 1) and one
 * SRC_LISTED that counts it.  Later messages may only name announced ids,
 * each step once and in protocol order, with offsets and lengths within
 * the file, and stream indexes below the negotiated count.  Anything else
 * ends the copy with LC_ERR_PROTO before the message is forwarded.
 * (Directories will give a request several FILEs named beneath it.)
 * LISTENING is checked where it is used, in negotiate.c.
 */

/* Checksum text from a peer: "ALG:hex" for the algorithm asked for. */
int
lc__ctl_csum_ok(const struct lc_ctl *c, const char *sum)
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
 * forwarded) unless root asked for -p from a local source.
 */
static int
lc_ctl_check_file(struct lc_ctl *c, struct lc_msg_file *m, struct lc_err *e)
{
	const char *h = c->src.name;
	const struct lc_ctl_req *rq;
	uint32_t want = c->files.total + 1;
	char parent[LC_PATH_MAX];
	const char *slash;
	int contents, is_root;

	if (c->chk.listed >= c->chk.adds_sent)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" which was not asked for (every request was "
		    "already answered)", h, m->name);
	rq = &c->chk.reqs[c->chk.listed];
	contents = (rq->flags & LC_ADD_CONTENTS) != 0;
	if (!contents && (strcmp(rq->name, ".") == 0 ||
	    strcmp(rq->name, "..") == 0 || strchr(rq->name, '/') != NULL ||
	    rq->name[0] == '\0'))
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" for \"%.200s\", which cannot name a copy", h,
		    m->name, c->args.srcs[c->chk.listed].path);
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
		    m->id, c->files.total);
	if (contents && rq->files == 0 && !c->o->recursive)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" which was not asked for", h, m->name);
	if (c->o->shard.n > 1 && m->kind == LC_KIND_REG &&
	    m->size < LC_SHARD_LARGE &&
	    lc_shard_of_name(m->name, c->o->shard.n) != c->o->shard.i)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" which is not in shard %u/%u", h, m->name,
		    c->o->shard.i + 1, c->o->shard.n);
	if ((m->kind == LC_KIND_PIPE) !=
	    !!(rq->flags & (LC_ADD_STDIN | LC_ADD_PROGRAM)))
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" as a %s; a %s was asked for", h, m->name,
		    m->kind == LC_KIND_PIPE ? "stream" : "file",
		    m->kind == LC_KIND_PIPE ? "file" : "stream");
	if (is_root && m->kind != LC_KIND_REG && m->kind != LC_KIND_PIPE &&
	    !(m->kind == LC_KIND_DIR && c->o->recursive))
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" as a %s; a file was asked for", h, m->name,
		    m->kind == LC_KIND_DIR ? "directory" : "symlink");
	if (m->id != want)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" as file %u, expected file %u", h, m->name,
		    m->id, want);
	if (m->id >= c->files.credit)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "file %u beyond its window (ids below %u)", h, m->id,
		    c->files.credit);
	if (rq->flags & LC_ADD_FED) {
		/* the chain's order, not the walk's: each the entry named */
		int r = lc__ctl_fed_check(c, m, e);
		if (r != 0)
			return r;
	} else if (!is_root) {
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
	if (m->size > (uint64_t)INT64_MAX - c->files.bytes)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source announced "
		    "\"%.200s\" with %llu bytes, more than a copy can hold", h,
		    m->name, (unsigned long long)m->size);
	if ((m->mode & ~0777u) != 0 && !c->args.keep_setid) {
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
	rq = &c->chk.reqs[c->chk.listed];
	if ((r = lc__ctl_file_add(c, m)) != 0 && r != -LC_ERR_NOMEM)
		return lc_err_set(e, LC_ERR_INTERNAL, "file %u: %s in the "
		    "files in flight", m->id, lc_strerror(r));
	if (r != 0 ||
	    (r = lc__ctl_del_listed(c, m->name, m->kind)) != 0 ||
	    (r = lc_ctl_keep_name(&rq->last, m->name)) != 0 ||
	    (m->kind == LC_KIND_DIR &&
	    (r = lc_ctl_keep_name(&rq->lastdir, m->name)) != 0))
		return lc_err_set(e, -r, "out of memory");
	if (rq->files == 0 && m->kind == LC_KIND_DIR &&
	    !(rq->flags & LC_ADD_CONTENTS))
		rq->root_dir = 1;
	rq->files++;
	rq->bytes += m->size;
	if (m->kind == LC_KIND_PIPE)
		c->files.pipes_open++;	/* until its FILE_LEN */
	c->files.total++;
	c->files.bytes += m->size;
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
	const struct lc_location *l = &c->args.srcs[k];
	char dir[LC_PATH_MAX];
	size_t dl;

	if (c->chk.reqs[k].flags & LC_ADD_CONTENTS)
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

	if (c->chk.listed >= c->chk.adds_sent || !c->o->recursive)
		return lc_err_set(e, LC_ERR_PROTO, "%s: unexpected FILE_FAIL "
		    "from the source", c->src.name);
	rq = &c->chk.reqs[c->chk.listed];
	if (!(rq->flags & LC_ADD_CONTENTS) && !lc_ctl_below_root(rq, m->name))
		return lc_err_set(e, LC_ERR_PROTO, "%s: source reported "
		    "\"%.200s\", which was not asked for", c->src.name,
		    m->name);
	if ((rq->flags & LC_ADD_FED) &&
	    lc__ctl_fed_fail(c, m->name, e) != 0)
		return -LC_ERR_PROTO;
	lc_ctl_src_where(c, c->chk.listed, m->name, where, sizeof(where));
	lc__ctl_failed(c, where, 0, m->msg);
	return 0;
}

static int
lc_ctl_src_listed(struct lc_ctl *c, const struct lc_msg_src_listed *m,
    struct lc_err *e)
{
	const struct lc_ctl_req *rq;

	if (c->chk.listed >= c->chk.adds_sent)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source listed more "
		    "requests than were made (%u)", c->src.name,
		    c->chk.adds_sent);
	rq = &c->chk.reqs[c->chk.listed];
	if ((!c->o->recursive && rq->files != 1) || m->files != rq->files ||
	    m->bytes != rq->bytes)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source listed %u "
		    "file%s (%llu bytes) for \"%.200s\" but announced %u "
		    "(%llu bytes)", c->src.name, m->files,
		    m->files == 1 ? "" : "s", (unsigned long long)m->bytes,
		    rq->name, rq->files, (unsigned long long)rq->bytes);
	c->chk.listed++;
	return lc__ctl_maybe_nomore(c);
}

static int
lc_ctl_src_sum(struct lc_ctl *c, const struct lc_msg_file_sum *m,
    struct lc_err *e)
{
	struct lc_ctl_file *f = lc__ctl_file_find(c, m->id);

	if (f == NULL || !f->ready || f->summed || !lc__ctl_csum_ok(c,
	    m->checksum))
		return lc_err_set(e, LC_ERR_PROTO, "%s: source sent an "
		    "unexpected FILE_SUM for file %u%s", c->src.name, m->id,
		    f == NULL ? ", which it never announced" : "");
	f->summed = 1;
	if (c->o->expect[0] != '\0' &&
	    strcmp(m->checksum, c->o->expect) != 0)
		return lc_err_set(e, LC_ERR_CHECKSUM, "%s: the source "
		    "file has %s, not the expected %s",
		    c->args.srcs[0].path, m->checksum, c->o->expect);
	c->prog.t_progress = lc_now_ms();
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
	struct lc_ctl_file *f = lc__ctl_file_find(c, m->id);

	if (f == NULL || !f->stream || !f->ready || f->len_known || f->done ||
	    m->length > (uint64_t)INT64_MAX - c->files.bytes)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source sent an "
		    "unexpected FILE_LEN for file %u (%llu bytes)", c->src.name,
		    m->id, (unsigned long long)m->length);
	f->len_known = 1;
	f->size = m->length;
	c->files.pipes_open--;
	c->files.bytes += m->length;
	c->prog.t_progress = lc_now_ms();
	return lc_msg_put_file_len(&c->dst_ep.out, m);
}

static int
lc_ctl_src_match(struct lc_ctl *c, const struct lc_msg_prefix_match *m,
    struct lc_err *e)
{
	struct lc_ctl_file *f = lc__ctl_file_find(c, m->id);

	if (f == NULL || !f->prefixed || f->matched ||
	    f->hashes_got < f->hashes_total ||
	    lc_prefix_match_check(m, f->prefix_len, f->chunk) != 0)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source sent an "
		    "unexpected PREFIX_MATCH for file %u (%llu bytes, %u runs)",
		    c->src.name, m->id, (unsigned long long)m->match, m->n);
	f->matched = 1;
	f->match = m->match;
	/* kept: the partial file below the cut, less the runs sent again */
	f->kept = m->match - lc_prefix_match_spans(m, f->prefix_len, f->chunk,
	    NULL);
	c->res->resumed += f->kept;
	c->prog.t_progress = lc_now_ms();
	return lc_msg_put_prefix_match(&c->dst_ep.out, m);
}

/*
 * FILE_ABORT: a file the source listed (and the sink is ready for) cannot
 * be read after all: reported, forwarded so that the sink drops it (it
 * answers FILE_SKIP), and not counted as sent.
 */
static int
lc_ctl_src_abort(struct lc_ctl *c, const struct lc_msg_file_abort *m,
    struct lc_err *e)
{
	struct lc_ctl_file *f = lc__ctl_file_find(c, m->id);
	char where[LC_PATH_MAX + 600];
	int r;

	if (f == NULL || !f->ready || f->done || f->aborted ||
	    f->kind != LC_KIND_REG)
		return lc_err_set(e, LC_ERR_PROTO, "%s: source sent an "
		    "unexpected FILE_ABORT for file %u", c->src.name, m->id);
	f->aborted = 1;
	c->files.sent--;
	c->res->resumed -= f->kept;	/* not copied after all */
	lc_ctl_src_where(c, f->req, f->name, where, sizeof(where));
	lc__ctl_failed(c, where, (int)f->kind, m->msg);
	if ((r = lc_msg_put_file_abort(&c->dst_ep.out, m)) != 0)
		return lc_err_set(e, -r, "control output");
	return 0;
}

int
lc__ctl_from_src(struct lc_ctl *c, uint8_t type, const uint8_t *p, size_t n,
    struct lc_err *e)
{
	union lc_msg_any m;

	if (lc_msg_get(type, p, n, &m) != 0)
		goto bad;
	switch (type) {
	case LC_MSG_FILE_LEN:
		return lc_ctl_src_len(c, &m.file_len, e);
	case LC_MSG_FILE_SUM:
		return lc_ctl_src_sum(c, &m.file_sum, e);
	case LC_MSG_PREFIX_MATCH:
		return lc_ctl_src_match(c, &m.prefix_match, e);
	case LC_MSG_PROGRESS:
		/* bytes sent, resends included: it only grows */
		if (m.progress.bytes < c->chk.src_sent || m.progress.file != 0 ||
		    m.progress.written != 0 || m.progress.wire < c->chk.src_wire)
			break;
		c->chk.src_sent = m.progress.bytes;
		c->chk.src_wire = m.progress.wire;
		return 0;
	case LC_MSG_FILE:
		return lc_ctl_src_file(c, &m.file, e);
	case LC_MSG_FILE_FAIL:
		return lc_ctl_src_fail(c, &m.file_fail, e);
	case LC_MSG_FILE_ABORT:
		return lc_ctl_src_abort(c, &m.file_abort, e);
	case LC_MSG_SRC_LISTED:
		return lc_ctl_src_listed(c, &m.src_listed, e);
	case LC_MSG_CONNECTED:
		/* the source names its ports when it listens (reverse) */
		if (c->dp.state != LC_CTL_DP_LISTENING ||
		    m.connected.streams != c->streams ||
		    (m.connected.nports != 0) !=
		    !!(lc__ctl_connect_flags(c) & LC_XFER_REVERSE))
			break;
		c->dp.state = LC_CTL_DP_CONNECTED;
		if (m.connected.nports == 0)
			lc_log_verbose("%u data streams connected",
			    m.connected.streams);
		return lc__ctl_connected(c, &m.connected, e);
	case LC_MSG_SRC_DONE:
		if (c->phase < LC_CTL_NOMORE || c->src_done ||
		    m.xfer_done.files != c->files.sent ||
		    m.xfer_done.bytes < c->chk.src_sent ||
		    m.xfer_done.wire < c->chk.src_wire)
			break;
		c->src_done = true;
		c->chk.src_sent = m.xfer_done.bytes;
		c->chk.src_wire = m.xfer_done.wire;
		return 0;
	case LC_MSG_BYE:
		if (c->phase < LC_CTL_BYE)
			break;
		c->src_bye = true;
		return 0;
	default:
		break;
	}
 bad:
	return lc_err_set(e, LC_ERR_PROTO, "%s: unexpected or malformed %s "
	    "from the source agent", c->src.name, lc_msg_name(type));
}
