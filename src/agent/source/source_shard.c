/*
 * Source: --shard (shard.h).  Before a request's first entry is
 * announced, its root is listed once more, stat only, with the same walk
 * flags and filters, to learn its large files; they are dealt among the
 * shards (every shard deals the same from the same tree), and the
 * listing that follows announces only this shard's entries.
 */
#include "source_int.h"

#include "log.h"
#include "walk.h"

#include <unistd.h>

int
lc__source_shard_plan(struct lc_source *s, const char *path, unsigned flags,
    struct lc_err *e)
{
	struct lc_walk *w = NULL;
	struct lc_walk_entry ent;
	int r;

	lc_shard_plan_free(&s->list.plan);
	if ((r = lc_walk_open(s->port.conf, path, flags, &w, e)) != 0)
		return r;
	while ((r = lc_walk_next(w, &ent, e)) > 0) {
		if (r != LC_WALK_ENTRY) {
			/* the listing that follows reports it */
			lc_err_clear(e);
			continue;
		}
		if (ent.fd >= 0)
			close(ent.fd);
		if (lc__source_excluded(s, w, &ent))
			continue;
		if (ent.kind == LC_KIND_REG &&
		    (uint64_t)ent.st.st_size >= LC_SHARD_LARGE &&
		    (r = lc_shard_plan_add(&s->list.plan, ent.name,
			 (uint64_t)ent.st.st_size, e)) != 0)
			break;
	}
	lc_walk_free(w);
	if (r == 0 &&
	    (r = lc_shard_plan_finish(&s->list.plan, s->list.shard.n)) != 0)
		lc_err_set(e, -r, "--shard");
	if (r == 0)
		lc_log_verbose("shard %u/%u: %zu large files in %s dealt",
		    s->list.shard.i + 1, s->list.shard.n, s->list.plan.n, path);
	return r;
}

int
lc__source_shard_skip(const struct lc_source *s,
    const struct lc_walk_entry *ent)
{
	if (s->list.shard.n <= 1)
		return 0;
	return !lc_shard_mine(&s->list.shard, &s->list.plan, ent->name,
	    ent->kind == LC_KIND_REG, (uint64_t)ent->st.st_size);
}
