/*
 * The controller's file ring and credit: the files in flight (announced,
 * not yet done) in a ring of LC_FILES_INFLIGHT_MAX slots indexed by id,
 * the source's credit (it may announce ids below lo + the window), and
 * SRC_NOMORE once everything is listed and settled.  The state is struct
 * lc_ctl_files (controller_int.h).
 */
#include "controller_int.h"

#include <stdlib.h>
#include <string.h>

struct lc_ctl_file *
lc__ctl_file_find(struct lc_ctl *c, uint32_t id)
{
	struct lc_ctl_file *f;

	/* in flight: announced (ids 1..n in order) and not yet done */
	if (id < c->files.lo || id == 0 || id > c->files.total)
		return NULL;
	f = &c->files.ring[id % LC_FILES_INFLIGHT_MAX];
	return f->id == id ? f : NULL;
}

int
lc__ctl_file_add(struct lc_ctl *c, const struct lc_msg_file *m)
{
	/* m->id < credit <= lo + window <= lo + MAX: its slot is free */
	struct lc_ctl_file *f = &c->files.ring[m->id % LC_FILES_INFLIGHT_MAX];
	char *name;

	if (f->id != 0 || (name = strdup(m->name)) == NULL)
		return -LC_ERR_NOMEM;
	memset(f, 0, sizeof(*f));
	f->id = m->id;
	f->kind = m->kind;
	f->req = c->chk.listed;
	f->size = m->size;
	if (m->kind == LC_KIND_PIPE) {	/* FILE_LEN says how long */
		f->kind = LC_KIND_REG;
		f->stream = 1;
		f->size = LC_PIPE_MAX;
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
int
lc__ctl_file_finish(struct lc_ctl *c, struct lc_ctl_file *f)
{
	struct lc_msg_src_credit cr;
	struct lc_ctl_file *g;

	f->done = 1;
	c->files.done++;
	while (c->files.lo <= c->files.total) {
		g = &c->files.ring[c->files.lo % LC_FILES_INFLIGHT_MAX];
		if (g->id != c->files.lo || !g->done)
			break;
		free(g->name);
		memset(g, 0, sizeof(*g));
		c->files.lo++;
	}
	cr.upto = c->files.lo + c->files.window;
	if (cr.upto <= c->files.credit || (cr.upto - c->files.credit <
	    c->files.window / 8 && c->files.lo <= c->files.total))
		return 0;
	c->files.credit = cr.upto;
	return lc_msg_put_src_credit(&c->src.out, &cr);
}

void
lc__ctl_files_free(struct lc_ctl *c)
{
	for (size_t i = 0; c->files.ring != NULL &&
	    i < LC_FILES_INFLIGHT_MAX; i++)
		free(c->files.ring[i].name);
	free(c->files.ring);
	c->files.ring = NULL;
	for (size_t i = 0; c->chk.reqs != NULL && i < c->o->nsources; i++) {
		free(c->chk.reqs[i].last);
		free(c->chk.reqs[i].lastdir);
	}
}

int
lc__ctl_files_window(struct lc_ctl *c, uint32_t granted)
{
	struct lc_msg_src_credit cr;

	c->files.window = granted;
	cr.upto = c->files.lo + granted;
	if (cr.upto <= c->files.credit)
		return 0;
	c->files.credit = cr.upto;
	return lc_msg_put_src_credit(&c->src.out, &cr);
}

int
lc__ctl_maybe_nomore(struct lc_ctl *c)
{
	int r;

	if (c->phase >= LC_CTL_NOMORE || c->chk.listed < c->chk.adds_sent ||
	    c->files.settled < c->files.total)
		return 0;
	c->phase = LC_CTL_NOMORE;
	if ((r = lc_msg_put_empty(&c->src.out, LC_MSG_SRC_NOMORE)) != 0)
		return r;
	return lc__ctl_sink_nomore(c);
}

int
lc__ctl_sink_nomore(struct lc_ctl *c)
{
	/* an older sink (no flag) ends as before, at the streams' END */
	if (c->sink_nomore || c->phase != LC_CTL_NOMORE ||
	    !c->dst_ep.hello_seen ||
	    !(c->dst_ep.hello.flags & LC_HELLO_NOMORE))
		return 0;
	c->sink_nomore = true;
	return lc_msg_put_empty(&c->dst_ep.out, LC_MSG_SINK_NOMORE);
}
