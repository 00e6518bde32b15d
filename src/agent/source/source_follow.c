/*
 * Source: following a part file (issue 25, the chain's next hop follows
 * the part file; docs/PROTOCOL.md, "Following a part file").  SRC_PART
 * names a fed entry to read from the part file the target before is still
 * writing (the walk opens it: walk_fed.c), announced with the size the
 * controller gives; SRC_AVAIL then says how much of it is final there.
 *
 * Per file: a listed file keeps its avail (lc_listed.avail) until its
 * FILE_READY hands it to the dispenser, which keeps it from then on
 * (lc_dispenser_set_avail) until the file is sent and released; after
 * that nothing is kept but one bit (lc_source_list.parts: this id was
 * announced from a SRC_PART), so that a late SRC_AVAIL is told from one
 * for a file never followed.  All on the main thread.
 */
#include "source_int.h"

#include "walk.h"

#include <stdlib.h>
#include <string.h>

int
lc__source_mark_part(struct lc_source *s, uint32_t id)
{
	size_t need = (size_t)id / 8 + 1, n;
	uint8_t *p;

	if (need > s->list.parts_len) {
		n = s->list.parts_len ? s->list.parts_len : 64;
		while (n < need)
			n *= 2;
		if ((p = realloc(s->list.parts, n)) == NULL)
			return -LC_ERR_NOMEM;
		memset(p + s->list.parts_len, 0, n - s->list.parts_len);
		s->list.parts = p;
		s->list.parts_len = n;
	}
	s->list.parts[id / 8] |= (uint8_t)(1u << (id % 8));
	return 0;
}

/* 1 if file id was announced from a SRC_PART. */
static int
lc_source_is_part(const struct lc_source *s, uint32_t id)
{
	return (size_t)id / 8 < s->list.parts_len &&
	    (s->list.parts[id / 8] & (1u << (id % 8))) != 0;
}

int
lc__source_part(struct lc_source *s, const struct lc_msg_src_part *m,
    struct lc_err *e)
{
	return lc__source_feed(s, "SRC_PART", m->name, 0, 1, m->size, e);
}

int
lc__source_avail(struct lc_source *s, const struct lc_msg_src_avail *m,
    struct lc_err *e)
{
	struct lc_listed *l;
	uint64_t cur, end;
	int r;

	if (m->id >= s->list.next_id || !lc_source_is_part(s, m->id))
		return lc_err_set(e, LC_ERR_PROTO,
		    "SRC_AVAIL for file %u, not followed", m->id);
	if ((l = lc__source_listed(s, m->id, NULL)) != NULL) {
		if (!l->part) /* its part file was gone: read whole */
			return 0;
		cur = l->avail;
		end = l->size;
		r = m->avail < cur || m->avail > end ? -LC_ERR_PROTO : 0;
		if (r == 0)
			l->avail = m->avail; /* applied at its FILE_READY */
	} else if (s->disp == NULL) {
		return 0; /* skipped or given up before CONNECT */
	} else {
		/* 0: read whole, or sent and released: nothing to do */
		r = lc_dispenser_set_avail(s->disp, m->id, m->avail, &cur,
		    &end);
	}
	if (r >= 0)
		return 0;
	return lc_err_set(e, LC_ERR_PROTO,
	    "SRC_AVAIL for file %u: %llu %s %llu", m->id,
	    (unsigned long long)m->avail,
	    m->avail < cur ? "after" : "past its size",
	    (unsigned long long)(m->avail < cur ? cur : end));
}
