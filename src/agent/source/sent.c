#include "sent.h"
#include "err.h"

#include <stdlib.h>

int
lc_sent_keep(struct lc_sent *l, const struct lc_block *b)
{
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 64;
		struct lc_block *v = realloc(l->v, ncap * sizeof(*v));
		if (v == NULL)
			return -LC_ERR_NOMEM;
		l->v = v;
		l->cap = ncap;
	}
	l->v[l->n] = *b;
	l->v[l->n++].gone = 0;
	return 0;
}

void
lc_sent_ack(struct lc_sent *l, struct lc_dispenser *d, uint32_t file,
    uint64_t written)
{
	size_t keep = 0, live = 0;

	for (size_t j = 0; j < l->n; j++) {
		struct lc_block *b = &l->v[j];
		if (!b->gone &&
		    lc_block_cmp(b->file_id, b->offset + b->len, file,
			written) <= 0) {
			lc_dispenser_release(d, b);
			b->gone = 1;
		}
		/* a marker ahead of every kept block tells nothing */
		if (b->gone && live == 0)
			continue;
		live += !b->gone;
		l->v[keep++] = *b;
	}
	l->n = live > 0 ? keep : 0;
}

size_t
lc_sent_arrived(const struct lc_sent *l, int has_last, uint32_t file,
    uint64_t off)
{
	/* a block is listed once: a resent one was taken off first */
	for (size_t j = l->n; has_last && j-- > 0;)
		if (l->v[j].file_id == file && l->v[j].offset == off)
			return j + 1;
	return 0;
}

void
lc_sent_release_all(struct lc_sent *l, struct lc_dispenser *d)
{
	for (size_t j = 0; j < l->n; j++)
		if (!l->v[j].gone)
			lc_dispenser_release(d, &l->v[j]);
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}
