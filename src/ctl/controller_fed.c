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
	return lc_msg_put_src_add(&c->src.out, &a);
}

static int
lc_ctl_fed_entry(struct lc_ctl *c, const struct lc_feed_entry *x)
{
	const struct lc_ctl_req *rq = &c->chk.reqs[0];
	struct lc_msg_src_entry m;
	int r;

	if (!c->fed.added && (r = lc_ctl_fed_add(c)) != 0)
		return r;
	c->fed.nsent++;
	/* the request's root is announced with the request */
	if (!(rq->flags & LC_ADD_CONTENTS) && strcmp(x->name, rq->name) == 0)
		return 0;
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

int
lc__ctl_fed_pump(struct lc_ctl *c, struct lc_err *e)
{
	struct lc_ctl_fed *d = &c->fed;
	const struct lc_feed_entry *x;
	int closed = 0, ok = 0, r;

	if (!lc__ctl_fed_open(c) || c->phase < LC_CTL_LISTING)
		return 0;
	/* all named is done: waiting on the target before (one large file
	   there may take longer than --timeout) is not a stall here */
	if (c->files.done == c->files.total)
		c->prog.t_progress = lc_now_ms();
	for (;;) {
		if (d->fed && d->nsent - d->nann >= LC_FED_QUEUE_MAX / 2)
			return 0;
		if ((x = lc_feed_next(c->o->feed_in, d->sent, &closed, &ok)) ==
		    NULL)
			break;
		d->sent = x;
		/* the target before moving on is this copy's progress */
		c->prog.t_progress = lc_now_ms();
		if (d->fed && (r = lc_ctl_fed_entry(c, x)) != 0)
			return lc_err_set(e, -r, "control output");
	}
	if (!closed)
		return 0;
	if (!ok)
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

int
lc__ctl_fed_publish(struct lc_ctl *c, struct lc_ctl_file *f)
{
	struct lc_feed_entry *x = f->pub;

	if (x == NULL)
		return 0;
	f->pub = NULL;
	return lc_feed_push(c->o->feed_out, x);
}
