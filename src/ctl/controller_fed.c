/*
 * --also's overlapped chain, the controller's part (controller_int.h:
 * struct lc_ctl_fed).  Target k+1 is copied from target k while target
 * k's own copy runs: that copy publishes each entry its sink made (or
 * found up to date) to a feed (feed.h), and this one names them, in that
 * order, to its source agent on target k.  The entries' mode, times and
 * owner are the first source's, as announced to target k, not what
 * target k's files carry, so that -p and --owner mean the same at every
 * target whatever target k was told.
 */
#include "controller_int.h"
#include "clock.h"
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *
lc_ctl_kind(uint8_t kind)
{
	return kind == LC_KIND_REG    ? "file"
	    : kind == LC_KIND_DIR     ? "directory"
	    : kind == LC_KIND_SYMLINK ? "symlink"
				      : "other";
}

int
lc__ctl_fed_open(const struct lc_ctl *c)
{
	return c->fed.on && !c->fed.ended;
}

int
lc__ctl_fed_watch(const struct lc_ctl *c)
{
	return lc__ctl_fed_open(c) ||
	    (c->fed.on && (c->fed.nfol > 0 || c->fed.npart > 0));
}

/* Whether x is the request's root (announced with the request). */
static int
lc_ctl_fed_is_root(const struct lc_ctl *c, const struct lc_feed_entry *x)
{
	const struct lc_ctl_req *rq = &c->chk.reqs[0];

	return !(rq->flags & LC_ADD_CONTENTS) && strcmp(x->name, rq->name) == 0;
}

/* The fed request, out before its first entry (the root, if it has one). */
static int
lc_ctl_fed_add(struct lc_ctl *c)
{
	struct lc_ctl_req *rq = &c->chk.reqs[0];
	struct lc_msg_src_add a;

	memset(&a, 0, sizeof(a));
	snprintf(a.path, sizeof(a.path), "%s", c->args.srcs[0].path);
	/* target k holds what -L followed as it is: nothing to follow */
	rq->flags = (rq->flags | LC_ADD_FED | LC_ADD_RECURSIVE) &
	    ~LC_ADD_FOLLOW;
	a.flags = rq->flags;
	c->chk.adds_sent = 1;
	c->fed.added = 1;
	if (c->fed.follow)
		lc_log_verbose("%s: its source reads each file as the target "
			       "before writes it (from its part file)",
		    c->src.name);
	return lc_msg_put_src_add(&c->src.out, &a);
}

/* Name x to the source: part, from its part file as it is written. */
static int
lc_ctl_fed_entry(struct lc_ctl *c, struct lc_feed_entry *x, int part)
{
	struct lc_msg_src_entry m;
	int r;

	if (!c->fed.added && (r = lc_ctl_fed_add(c)) != 0)
		return r;
	c->fed.nsent++;
	/* the request's root is announced with the request */
	if (lc_ctl_fed_is_root(c, x))
		return 0;
	if (part) {
		struct lc_msg_src_part p;

		memset(&p, 0, sizeof(p));
		p.size = x->size;
		snprintf(p.name, sizeof(p.name), "%s", x->name);
		c->fed.npart++;
		return lc_msg_put_src_part(&c->src.out, &p);
	}
	memset(&m, 0, sizeof(m));
	snprintf(m.name, sizeof(m.name), "%s", x->name);
	return lc_msg_put_src_entry(&c->src.out, &m);
}

/* The feed has ended: the request too (or, unfed, it goes out now). */
static int
lc_ctl_fed_end(struct lc_ctl *c)
{
	struct lc_msg_src_entry m;
	int r;

	c->fed.ended = 1;
	if (!c->fed.fed) {
		lc_log_verbose("%s: the target before is complete; copying "
			       "from it now (its agent cannot be fed entry by "
			       "entry)",
		    c->src.name);
		return lc__ctl_send_adds(c);
	}
	if (!c->fed.added && (r = lc_ctl_fed_add(c)) != 0)
		return r;
	memset(&m, 0, sizeof(m));
	m.flags = LC_ENTRY_END;
	return lc_msg_put_src_entry(&c->src.out, &m);
}

static int
lc_ctl_fed_unfinished(struct lc_ctl *c, const struct lc_feed_entry *x,
    struct lc_err *e)
{
	return lc_err_set(e, LC_ERR_PARTIAL,
	    "%.200s was not finished at the target this one is copied from "
	    "(%s): the chain stops here",
	    x->name, c->src.name);
}

/*
 * The files the source reads from part files: each SRC_AVAIL the target
 * before's progress allows, until the whole file is.
 */
static int
lc_ctl_fed_follow(struct lc_ctl *c, struct lc_err *e)
{
	struct lc_ctl_fed *d = &c->fed;
	uint64_t avail;
	int done, bad, r;

	for (size_t i = 0; i < d->nfol;) {
		struct lc_ctl_fol *fo = &d->fol[i];

		lc_feed_state(c->o->feed_in, fo->x, &avail, &done, &bad);
		if (bad)
			return lc_ctl_fed_unfinished(c, fo->x, e);
		if (avail > fo->sent) {
			struct lc_msg_src_avail a = { .id = fo->id,
				.avail = avail };

			if ((r = lc_msg_put_src_avail(&c->src.out, &a)) != 0)
				return lc_err_set(e, -r, "control output");
			fo->sent = avail;
			c->prog.t_progress = lc_now_ms();
		}
		if (fo->sent >= fo->x->size) {
			d->fol[i] = d->fol[--d->nfol];
			continue;
		}
		i++;
	}
	return 0;
}

int
lc__ctl_fed_pump(struct lc_ctl *c, struct lc_err *e)
{
	struct lc_ctl_fed *d = &c->fed;
	struct lc_feed_entry *x;
	int closed = 0, ok = 0, take, part, r;

	if (!c->fed.on || c->phase < LC_CTL_LISTING)
		return 0;
	if (d->nfol > 0 && (r = lc_ctl_fed_follow(c, e)) != 0)
		return r;
	if (!lc__ctl_fed_open(c))
		return 0;
	/* all named is done: waiting on the target before (one large file
	   there may take longer than --timeout) is not a stall here */
	if (c->files.done == c->files.total)
		c->prog.t_progress = lc_now_ms();
	for (;;) {
		if (d->fed && d->nsent - d->nann >= LC_FED_QUEUE_MAX / 2)
			return 0;
		/* the feed's entries are the reader's to mark (parted) */
		if ((x = (struct lc_feed_entry *)lc_feed_next(c->o->feed_in,
			 d->sent, &closed, &ok)) == NULL)
			break;
		/* one still written there: named now only to a source that
		   can follow it (never the root: it comes with the request) */
		take = lc_feed_take(c->o->feed_in, x,
		    d->fed && d->follow && !lc_ctl_fed_is_root(c, x), &part);
		if (take == LC_FEED_BAD)
			return lc_ctl_fed_unfinished(c, x, e);
		if (take == LC_FEED_WAIT && !closed)
			return 0;
		if (take == LC_FEED_WAIT)
			break; /* it never will be: incomplete */
		d->sent = x;
		/* the target before moving on is this copy's progress */
		c->prog.t_progress = lc_now_ms();
		if (d->fed && (r = lc_ctl_fed_entry(c, x, part)) != 0)
			return lc_err_set(e, -r, "control output");
	}
	if (!closed)
		return 0;
	if (!ok || x != NULL)
		return lc_err_set(e, LC_ERR_PARTIAL,
		    "the target this one is "
		    "copied from (%s) is incomplete: the chain stops here",
		    c->src.name);
	if ((r = lc_ctl_fed_end(c)) != 0)
		return lc_err_set(e, -r, "control output");
	return 0;
}

/* The entry the source must answer next: named, not yet answered. */
static const struct lc_feed_entry *
lc_ctl_fed_expected(struct lc_ctl *c)
{
	int closed, ok;

	if (c->fed.nann >= c->fed.nsent)
		return NULL;
	return lc_feed_next(c->o->feed_in, c->fed.ann, &closed, &ok);
}

int
lc__ctl_fed_check(struct lc_ctl *c, struct lc_msg_file *m, struct lc_err *e)
{
	struct lc_ctl_fed *d = &c->fed;
	const struct lc_feed_entry *x = lc_ctl_fed_expected(c);

	if (x == NULL || strcmp(x->name, m->name) != 0 || x->kind != m->kind ||
	    (x->kind == LC_KIND_REG && x->size != m->size) ||
	    (x->kind == LC_KIND_SYMLINK && strcmp(x->link, m->link) != 0))
		return lc_err_set(e, LC_ERR_PROTO,
		    "%s: source announced "
		    "\"%.200s\" (%s, %llu bytes) where the chain named "
		    "\"%.200s\" (%s, %llu bytes)",
		    c->src.name, m->name, lc_ctl_kind(m->kind),
		    (unsigned long long)m->size,
		    x != NULL ? x->name : "nothing",
		    x != NULL ? lc_ctl_kind(x->kind) : "-",
		    (unsigned long long)(x != NULL ? x->size : 0));
	d->ann = x;
	d->nann++;
	if (x->parted) {
		d->npart--;
		c->res->followed++;
		if (d->nfol == d->capfol) {
			size_t cap = d->capfol ? d->capfol * 2 : 16;
			struct lc_ctl_fol *v = realloc(d->fol,
			    cap * sizeof(*v));

			if (v == NULL)
				return lc_err_set(e, LC_ERR_NOMEM,
				    "out of memory");
			d->fol = v;
			d->capfol = cap;
		}
		d->fol[d->nfol].x = x;
		d->fol[d->nfol].id = m->id;
		d->fol[d->nfol].sent = 0;
		d->nfol++;
	}
	m->mode = x->mode;
	m->mtime_sec = x->mtime_sec;
	m->mtime_nsec = x->mtime_nsec;
	m->uid = x->uid;
	m->gid = x->gid;
	snprintf(m->user, sizeof(m->user), "%s", x->user);
	snprintf(m->group, sizeof(m->group), "%s", x->group);
	return 0;
}

int
lc__ctl_fed_fail(struct lc_ctl *c, const char *name, struct lc_err *e)
{
	struct lc_ctl_fed *d = &c->fed;
	const struct lc_feed_entry *x = lc_ctl_fed_expected(c);

	if (x == NULL || strcmp(x->name, name) != 0)
		return lc_err_set(e, LC_ERR_PROTO,
		    "%s: source reported "
		    "\"%.200s\", which the chain did not name next",
		    c->src.name, name);
	d->ann = x;
	d->nann++;
	if (x->parted)
		d->npart--;
	return 0;
}

int
lc__ctl_fed_pub_new(struct lc_ctl *c, struct lc_ctl_file *f,
    const struct lc_msg_file *m)
{
	if (c->o->feed_out == NULL ||
	    (m->kind != LC_KIND_REG && m->kind != LC_KIND_DIR &&
		m->kind != LC_KIND_SYMLINK))
		return 0;
	if ((f->pub = lc_feed_entry_new(m)) == NULL)
		return -LC_ERR_NOMEM;
	return 0;
}

/*
 * As the writing copy: FILE_READY for f.  A regular file the sink writes
 * from byte 0 into a part file (no resume, no -u delta: it writes it in
 * order, and its mark says how much is final) is fed now, to be followed.
 */
int
lc__ctl_fed_ready(struct lc_ctl *c, struct lc_ctl_file *f,
    const struct lc_msg_file_ready *m)
{
	struct lc_feed_entry *x = f->pub;
	int r;

	if (x == NULL || x->kind != LC_KIND_REG || m->start != 0 ||
	    f->prefixed || f->stream || f->size == 0)
		return 0;
	f->pub = NULL;
	if ((r = lc_feed_push_follow(c->o->feed_out, x, &f->fent)) != 0)
		return r;
	if (f->fent != NULL)
		c->fed.out_follow++;
	return 0;
}

/*
 * As the writing copy: the sink's mark (PROGRESS) is at byte written of
 * file: every file fed at FILE_READY below it is final there, and that
 * file up to written.
 */
void
lc__ctl_fed_marks(struct lc_ctl *c, uint32_t file, uint64_t written)
{
	struct lc_ctl_fed *d = &c->fed;
	struct lc_ctl_file *f;
	uint32_t id = d->out_mark > c->files.lo ? d->out_mark : c->files.lo;

	if (d->out_follow > 0) {
		for (; id < file; id++)
			if ((f = lc__ctl_file_find(c, id)) != NULL &&
			    f->fent != NULL)
				lc_feed_avail(c->o->feed_out, f->fent, f->size,
				    0);
		if ((f = lc__ctl_file_find(c, file)) != NULL && f->fent != NULL)
			lc_feed_avail(c->o->feed_out, f->fent, written, 0);
	}
	d->out_mark = file;
}

/*
 * As the writing copy: f goes without FILE_DONE.  The next copy stops if
 * it reads it already, else waits for it to be written again (a copy from
 * this host after this one failed) or for the end of the feed.
 */
void
lc__ctl_fed_unfinished(struct lc_ctl *c, struct lc_ctl_file *f)
{
	if (f->fent == NULL)
		return;
	(void)lc_feed_unfinished(c->o->feed_out, f->fent);
	f->fent = NULL;
	c->fed.out_follow--;
}

int
lc__ctl_fed_publish(struct lc_ctl *c, struct lc_ctl_file *f)
{
	struct lc_feed_entry *x = f->pub;

	if (f->fent != NULL) { /* fed at FILE_READY: whole now */
		lc_feed_avail(c->o->feed_out, f->fent, f->size, 1);
		f->fent = NULL;
		c->fed.out_follow--;
		return 0;
	}
	if (x == NULL)
		return 0;
	f->pub = NULL;
	return lc_feed_push(c->o->feed_out, x);
}
