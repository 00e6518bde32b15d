/*
 * The controller's files in flight and credit: the files announced and
 * not yet done, in a map by id (idmap.h) of at most
 * LC_FILES_INFLIGHT_MAX entries; the source's credit (it may announce
 * ids below it); and SRC_NOMORE once everything is listed and settled.
 * The state is struct lc_ctl_files (controller_int.h).
 *
 * The credit is the files done plus the window (plus one: ids start at
 * 1), so that the files in flight never outnumber the window, however far
 * apart their ids are: one slow file does not hold back the window behind
 * it.  It stays within what the source can hold open above the sink's
 * mark (a source keeps every file it sent until the mark passes it).  A
 * sink from before (no LC_HELLO_COUNT_INFLIGHT) bounds the ids it takes
 * by the lowest one not done instead, and gets that credit: the lowest id
 * in flight plus the window.
 */
#include "controller_int.h"

#include <stdlib.h>
#include <string.h>

int
lc__ctl_files_init(struct lc_ctl *c)
{
	c->files.lo = 1;
	return lc_idmap_init(&c->files.map, LC_FILES_INFLIGHT_MAX);
}

struct lc_ctl_file *
lc__ctl_file_find(struct lc_ctl *c, uint32_t id)
{
	/* in flight: announced (ids 1..n in order) and not yet done */
	if (id == 0 || id > c->files.total)
		return NULL;
	return lc_idmap_get(&c->files.map, id);
}

/* A file in flight and what it owns (f may be NULL). */
static void
lc_ctl_file_free(struct lc_ctl_file *f)
{
	if (f == NULL)
		return;
	free(f->pub);
	free(f->name);
	free(f);
}

int
lc__ctl_file_add(struct lc_ctl *c, const struct lc_msg_file *m)
{
	struct lc_ctl_file *f;
	int r;

	/* m->id < credit: the files in flight are at most the window */
	if ((f = calloc(1, sizeof(*f))) == NULL ||
	    (f->name = strdup(m->name)) == NULL ||
	    lc__ctl_fed_pub_new(c, f, m) != 0) {
		lc_ctl_file_free(f);
		return -LC_ERR_NOMEM;
	}
	f->id = m->id;
	f->kind = m->kind;
	f->req = c->chk.listed;
	f->size = m->size;
	if (m->kind == LC_KIND_PIPE) {	/* FILE_LEN says how long */
		f->kind = LC_KIND_REG;
		f->stream = 1;
		f->size = LC_PIPE_MAX;
	}
	if ((r = lc_idmap_put(&c->files.map, f->id, f)) != 0) {
		lc_ctl_file_free(f);
		return r;
	}
	return 0;
}

/* See controller_int.h. */
uint32_t
lc__ctl_credit(uint32_t lo, uint32_t done, uint32_t window,
    uint32_t held_from, uint32_t held_max)
{
	uint64_t old = (uint64_t)lo + window, upto, cap;

	if (held_max == 0)
		return old > UINT32_MAX ? UINT32_MAX : (uint32_t)old;
	upto = (uint64_t)done + 1 + window;
	cap = (uint64_t)(held_from > lo ? held_from : lo) + held_max;
	upto = upto < cap ? upto : cap;
	upto = upto > old ? upto : old;
	return upto > UINT32_MAX ? UINT32_MAX : (uint32_t)upto;
}

/*
 * The credit now: by the files done to a sink that counts them, within
 * what the source can hold (its descriptor limit's files, HELLO
 * max_files, never less than the window) above the sink's mark (the
 * source keeps each file it sent open until the mark passes it, for a
 * resend); else by the lowest id in flight.
 */
static uint32_t
lc_ctl_credit_now(const struct lc_ctl *c)
{
	uint32_t held_max = 0;

	if (c->dst_ep.hello_seen &&
	    (c->dst_ep.hello.flags & LC_HELLO_COUNT_INFLIGHT)) {
		held_max = c->src.hello.max_files;
		if (held_max > LC_FILES_HELD_MAX)
			held_max = LC_FILES_HELD_MAX;
		if (held_max < c->files.window)
			held_max = c->files.window;
	}
	return lc__ctl_credit(c->files.lo, c->files.done, c->files.window,
	    c->chk.mark_file, held_max);
}

/* See controller_int.h. */
int
lc__ctl_credit_move(struct lc_ctl *c)
{
	struct lc_msg_src_credit cr;

	if (c->files.window == 0)	/* before the first credit */
		return 0;
	cr.upto = lc_ctl_credit_now(c);
	if (cr.upto <= c->files.credit || (cr.upto - c->files.credit <
	    c->files.window / 8 && c->files.lo <= c->files.total))
		return 0;
	c->files.credit = cr.upto;
	return lc_msg_put_src_credit(&c->src.out, &cr);
}

/*
 * f is done (written, made, skipped or failed): free it, move lo past
 * the ids no longer in flight, and move the source's credit on (in steps,
 * not per file; at once when nothing is left in flight, since the source
 * may be waiting for it).
 */
int
lc__ctl_file_finish(struct lc_ctl *c, struct lc_ctl_file *f)
{
	f->done = 1;
	c->files.done++;
	lc__ctl_fed_unfinished(c, f);
	(void)lc_idmap_del(&c->files.map, f->id);
	lc_ctl_file_free(f);
	while (c->files.lo <= c->files.total &&
	    lc_idmap_get(&c->files.map, c->files.lo) == NULL)
		c->files.lo++;
	return lc__ctl_credit_move(c);
}

void
lc__ctl_files_free(struct lc_ctl *c)
{
	for (uint32_t i = 0; i < lc_idmap_slots(&c->files.map); i++) {
		struct lc_ctl_file *f = lc_idmap_slot(&c->files.map, i);

		/* --also's chain: a file fed at FILE_READY, never finished */
		if (f != NULL)
			lc__ctl_fed_unfinished(c, f);
		lc_ctl_file_free(f);
	}
	free(c->fed.fol);
	c->fed.fol = NULL;
	c->fed.nfol = c->fed.capfol = 0;
	lc_idmap_free(&c->files.map);
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
	cr.upto = lc_ctl_credit_now(c);
	if (cr.upto <= c->files.credit)
		return 0;
	c->files.credit = cr.upto;
	return lc_msg_put_src_credit(&c->src.out, &cr);
}

int
lc__ctl_maybe_nomore(struct lc_ctl *c)
{
	int r;

	/* not before CONNECT (a listing of nothing, such as an empty
	   directory's contents, can end first): the source takes SRC_NOMORE
	   once its streams are set up; lc__ctl_listening asks again */
	if (c->phase >= LC_CTL_NOMORE || c->chk.listed < c->chk.adds_sent ||
	    c->files.settled < c->files.total || lc__ctl_fed_open(c) ||
	    c->dp.state == LC_CTL_DP_NONE)
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
