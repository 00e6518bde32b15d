/*
 * Source: listing.  SRC_ADD requests are walked in order and each entry
 * announced (FILE) as far as the controller's credit reaches; the
 * regular files wait, listed, for their FILE_READY (or FILE_SKIP).  All
 * on the host's main thread; the state is struct lc_source_list.
 */
#include "source_int.h"

#include "checksum.h"
#include "log.h"
#include "path.h"
#include "idname.h"
#include "walk.h"
#include "filter.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- listing ---- */

/*
 * Listing is streamed: SRC_ADD only queues a request; the requests are
 * walked in order (walk.h) and each entry is announced as a FILE as far
 * as the controller's credit reaches (SRC_CREDIT: ids below it), so the
 * files in flight, each holding an open descriptor here until its
 * FILE_READY, stay few whatever the tree.  A request ends with
 * SRC_LISTED.  An entry that cannot be read is reported (FILE_FAIL) and
 * left out; special files are left out with a warning.
 *
 * A fed request (LC_ADD_FED, the copy's only one) is not walked: after
 * its root, the walk gives only the entries SRC_ENTRY names, in that
 * order, and waits (LC_WALK_WAIT) while none is queued; SRC_ENTRY's end
 * lets it end.  Every name fed is answered, FILE or FILE_FAIL (a special
 * file fails too), unless a filter leaves it out.
 */
/*
 * --owner: the name of a user or group id ("" when it has none), from the
 * last one looked up when it is the same (a tree's files mostly share
 * them; each lookup may read /etc/passwd).  An id without a name goes as
 * its number, with one warning per run (a host whose names come from
 * sssd or LDAP, which the pushed agent does not ask: idname.h).
 */
static const char *
lc_source_idname(struct lc_source *s, struct lc_idname *c, uint32_t id,
    int group)
{
	struct lc_idpw pw;
	int r = 0;

	if (c->valid && c->id == id)
		return c->name;
	c->name[0] = '\0';
	if (!group && (r = lc_id_user_byuid(id, &pw)) == 1 &&
	    strlen(pw.name) < sizeof(c->name))
		snprintf(c->name, sizeof(c->name), "%s", pw.name);
	else if (group)
		r = lc_id_group_bygid(id, c->name, sizeof(c->name));
	if (c->name[0] == '\0' && !s->list.unnamed_warned) {
		s->list.unnamed_warned = 1;
		lc_log_warn("--owner: %s %u has no name here (%s%s): sent as "
		    "a number (further ids without a name are not reported)",
		    group ? "group" : "user", (unsigned)id,
		    lc_id_source(), r < 0 ? ", which cannot be read" : "");
	}
	c->id = id;
	c->valid = 1;
	return c->name;
}

/* l joins the listed entries, which wait for their FILE_READY. */
void
lc__source_listed_append(struct lc_source *s, struct lc_listed *l)
{
	if (s->list.listed_tail != NULL)
		s->list.listed_tail->next = l;
	else
		s->list.listed = l;
	s->list.listed_tail = l;
}

static int
lc_source_announce(struct lc_source *s, const struct lc_walk_entry *ent,
    struct lc_err *e)
{
	struct lc_msg_file f;
	struct lc_listed *l = NULL;
	size_t plen;
	int r;

	memset(&f, 0, offsetof(struct lc_msg_file, name));
	f.link[0] = f.user[0] = f.group[0] = '\0';
	f.id = s->list.next_id;
	f.kind = (uint8_t)ent->kind;
	f.mode = (uint32_t)ent->st.st_mode & 07777u;
	f.size = ent->kind == LC_KIND_REG ? (uint64_t)ent->st.st_size : 0;
	if (ent->part == LC_WALK_PART_FOLLOW)	/* what it will be */
		f.size = ent->part_size;
	f.mtime_sec = (int64_t)ent->st.st_mtim.tv_sec;
	f.mtime_nsec = (uint32_t)ent->st.st_mtim.tv_nsec;
	snprintf(f.name, sizeof(f.name), "%s", ent->name);
	if (ent->link != NULL)
		snprintf(f.link, sizeof(f.link), "%s", ent->link);
	f.uid = (uint32_t)ent->st.st_uid;
	f.gid = (uint32_t)ent->st.st_gid;
	if (s->list.adds[s->list.add_next].flags & LC_ADD_NAMES) {
		snprintf(f.user, sizeof(f.user), "%s",
		    lc_source_idname(s, &s->list.last_user, f.uid, 0));
		snprintf(f.group, sizeof(f.group), "%s",
		    lc_source_idname(s, &s->list.last_group, f.gid, 1));
	}
	if (ent->kind == LC_KIND_REG) {
		/* its path as the user would write it: the request's, then
		 * the name below the root (or below "dir/") */
		const struct lc_add *a = &s->list.adds[s->list.add_next];
		const char *rest = ent->name;
		if (!(a->flags & LC_ADD_CONTENTS))
			rest = strchr(ent->name, '/') != NULL ?
			    strchr(ent->name, '/') : "";
		plen = strlen(a->path) + strlen(rest);
		if ((l = calloc(1, sizeof(*l) + plen + 1)) == NULL) {
			if (ent->fd >= 0)
				close(ent->fd);
			return -LC_ERR_NOMEM;
		}
		l->id = f.id;
		l->fd = ent->fd;
		l->dev = ent->st.st_dev;
		l->ino = ent->st.st_ino;
		l->follow = (a->flags & LC_ADD_FOLLOW) || rest[0] == '\0';
		l->size = f.size;
		l->part = ent->part == LC_WALK_PART_FOLLOW;
		l->src = s;
		snprintf(l->path, plen + 1, "%s%s", a->path, rest);
	}
	/* SRC_AVAIL may name it from now on (or be ignored for it) */
	if (ent->part != LC_WALK_PART_NONE &&
	    (r = lc__source_mark_part(s, f.id)) != 0) {
		if (l != NULL)
			lc__listed_free(l);
		else if (ent->fd >= 0)
			close(ent->fd);
		return lc_err_set(e, -r, "out of memory");
	}
	if ((r = lc_msg_put_file(s->port.out, &f)) != 0) {
		if (l != NULL)
			lc__listed_free(l);
		return lc_err_set(e, -r, "control output");
	}
	if (l != NULL)
		lc__source_listed_append(s, l);
	s->list.next_id++;
	s->list.add_files++;
	s->list.add_bytes += f.size;
	return 0;
}

int
lc__source_excluded(const struct lc_source *s, struct lc_walk *w,
    const struct lc_walk_entry *ent)
{
	int dir = ent->kind == LC_KIND_DIR;

	if (s->list.filters.n == 0)
		return 0;
	/* a fed name was not reached through its directories: they are
	   asked too, as the walk would have (an excluded one is not read) */
	if (s->list.add_next < s->list.nadds &&
	    (s->list.adds[s->list.add_next].flags & LC_ADD_FED) ?
	    !lc_filters_excluded_path(&s->list.filters, ent->name, dir) :
	    !lc_filters_excluded(&s->list.filters, ent->name, dir))
		return 0;
	/* left out, and an excluded directory is not read */
	if (ent->kind == LC_KIND_DIR)
		lc_walk_prune(w);
	return 1;
}

/*
 * List as far as the credit reaches.  The walk runs one entry ahead of
 * the credit, so that the end of a request is seen (and SRC_LISTED sent)
 * as soon as its last entry is announced.
 */
static int
lc_source_list(struct lc_source *s, struct lc_err *e)
{
	struct lc_msg_src_listed done;
	struct lc_msg_file_fail fail;
	struct lc_walk_entry ent;
	const struct lc_add *a;
	unsigned wflags;
	int r;

	for (;;) {
		if (s->list.pending) {
			if (s->list.next_id >= s->list.credit)
				return 0;
			memset(&ent, 0, sizeof(ent));
			ent.kind = s->list.pend.kind;
			ent.fd = s->list.pend.fd;
			ent.st = s->list.pend.st;
			ent.name = s->list.pend.name;
			ent.link = s->list.pend.link[0] != '\0' ?
			    s->list.pend.link : NULL;
			ent.part = s->list.pend.part;
			ent.part_size = s->list.pend.part_size;
			s->list.pending = 0;
			if ((r = lc_source_announce(s, &ent, e)) != 0)
				return r;
		}
		if (s->list.walk == NULL) {
			if (s->list.add_next >= s->list.nadds)
				return 0;
			a = &s->list.adds[s->list.add_next];
			if (a->flags & (LC_ADD_STDIN | LC_ADD_PROGRAM)) {
				if (s->list.next_id >= s->list.credit)
					return 0;
				if ((r = lc__source_pipe_announce(s, a,
				    e)) != 0)
					return r;
				continue;
			}
			wflags = LC_WALK_NOOPEN |
			    ((a->flags & LC_ADD_RECURSIVE) ? LC_WALK_RECURSIVE :
			    0) | ((a->flags & LC_ADD_FOLLOW) ? LC_WALK_FOLLOW :
			    0) | ((a->flags & LC_ADD_CONTENTS) ?
			    LC_WALK_CONTENTS : 0) | ((a->flags & LC_ADD_FED) ?
			    LC_WALK_FED : 0);
			if ((s->list.shard.n > 1 &&
			    (r = lc__source_shard_plan(s, a->path, wflags,
			    e)) != 0) || (r = lc_walk_open(s->port.conf,
			    a->path, wflags, &s->list.walk, e)) != 0)
				return r;
			s->list.add_files = 0;
			s->list.add_bytes = 0;
		}
		r = lc_walk_next(s->list.walk, &ent, e);
		if (r < 0)
			return r;
		if (r == LC_WALK_WAIT)	/* for the next SRC_ENTRY */
			return 0;
		if (r == LC_WALK_ENTRY &&
		    lc__source_excluded(s, s->list.walk, &ent)) {
			lc_log_debug("excluded: %s", ent.name);
			if (ent.fd >= 0)
				close(ent.fd);
			continue;
		}
		if (r == LC_WALK_ENTRY && lc__source_shard_skip(s, &ent)) {
			lc_log_debug("another shard's: %s", ent.name);
			if (ent.fd >= 0)
				close(ent.fd);
			continue;
		}
		if (r == LC_WALK_ENTRY) {
			s->list.pend.kind = ent.kind;
			s->list.pend.fd = ent.fd;
			s->list.pend.st = ent.st;
			snprintf(s->list.pend.name,
			    sizeof(s->list.pend.name), "%s", ent.name);
			snprintf(s->list.pend.link,
			    sizeof(s->list.pend.link), "%s",
			    ent.link != NULL ? ent.link : "");
			s->list.pend.part = ent.part;
			s->list.pend.part_size = ent.part_size;
			s->list.pending = 1;
		} else if (r == LC_WALK_SKIP) {
			lc_log_warn("skipping %s", e->msg);
			lc_err_clear(e);
		} else if (r == LC_WALK_FAIL) {
			memset(&fail, 0, sizeof(fail));
			snprintf(fail.name, sizeof(fail.name), "%s", ent.name);
			snprintf(fail.msg, sizeof(fail.msg), "%s", e->msg);
			lc_err_clear(e);
			if ((r = lc_msg_put_file_fail(s->port.out,
			    &fail)) != 0)
				return lc_err_set(e, -r, "control output");
		} else {	/* this request is listed */
			lc_walk_free(s->list.walk);
			s->list.walk = NULL;
			memset(&done, 0, sizeof(done));
			done.files = s->list.add_files;
			done.bytes = s->list.add_bytes;
			lc_log_verbose("source %s: %u entr%s, %llu bytes",
			    s->list.adds[s->list.add_next].path, done.files,
			    done.files == 1 ? "y" : "ies",
			    (unsigned long long)done.bytes);
			s->list.add_next++;
			if ((r = lc_msg_put_src_listed(s->port.out,
			    &done)) != 0)
				return lc_err_set(e, -r, "control output");
		}
	}
}

int
lc__source_filter(struct lc_source *s, const struct lc_msg_src_filter *m,
    struct lc_err *e)
{
	if (s->list.nadds != 0)
		return lc_err_set(e, LC_ERR_PROTO, "SRC_FILTER after SRC_ADD");
	if (m->kind == LC_FILTER_SHARD) {
		if (s->list.shard.n != 0)
			return lc_err_set(e, LC_ERR_PROTO, "SRC_FILTER: a "
			    "second shard");
		struct lc_err pe;
		lc_err_clear(&pe);
		if (lc_shard_parse(m->pattern, "SRC_FILTER shard",
		    &s->list.shard, &pe) != 0)
			return lc_err_set(e, LC_ERR_PROTO, "%s", pe.msg);
		return 0;
	}
	if (s->list.filters.n >= LC_FILTER_MAX)
		return lc_err_set(e, LC_ERR_PROTO, "more than %u SRC_FILTERs",
		    LC_FILTER_MAX);
	return lc_filters_add_wire(&s->list.filters, m->kind, m->pattern, e);
}

/*
 * A fed request is the copy's only one (its entries come one by one, the
 * end of the listing is its SRC_ENTRY end), recursive, without -L (no
 * symlink is followed below its root) or --shard (whose plan lists the
 * whole tree first).  0 or LC_ERR_PROTO.
 */
static int
lc_source_add_fed_check(const struct lc_source *s, uint32_t flags,
    struct lc_err *e)
{
	const uint32_t ok = LC_ADD_FED | LC_ADD_RECURSIVE | LC_ADD_CONTENTS |
	    LC_ADD_NAMES;

	if (s->list.nadds != 0 && (s->list.adds[0].flags & LC_ADD_FED))
		return lc_err_set(e, LC_ERR_PROTO, "SRC_ADD after a fed "
		    "request, which must be the only request");
	if (!(flags & LC_ADD_FED))
		return 0;
	if ((flags & ~ok) != 0 || !(flags & LC_ADD_RECURSIVE))
		return lc_err_set(e, LC_ERR_PROTO, "SRC_ADD: a fed request "
		    "is recursive, without -L or a stream (flags %#x)",
		    (unsigned)flags);
	if (s->list.nadds != 0)
		return lc_err_set(e, LC_ERR_PROTO, "SRC_ADD: a fed request "
		    "must be the only request");
	if (s->list.shard.n > 1)
		return lc_err_set(e, LC_ERR_PROTO, "SRC_ADD: a fed request "
		    "cannot be sharded");
	return 0;
}

int
lc__source_add(struct lc_source *s, const struct lc_msg_src_add *m,
    struct lc_err *e)
{
	char path[LC_PATH_MAX];
	struct lc_add *a;
	size_t n;
	int r;

	if ((r = lc_source_add_fed_check(s, m->flags, e)) != 0)
		return r;

	if (m->flags & (LC_ADD_STDIN | LC_ADD_PROGRAM)) {
		if ((m->flags & ~(LC_ADD_STDIN | LC_ADD_PROGRAM)) != 0 ||
		    (m->flags & LC_ADD_STDIN && m->flags & LC_ADD_PROGRAM) ||
		    s->list.nadds != 0 || (m->flags & LC_ADD_STDIN &&
		    strcmp(m->path, "-") != 0))
			return lc_err_set(e, LC_ERR_PROTO, "SRC_ADD: a stream "
			    "must be the only request, without other flags");
		if ((m->flags & LC_ADD_STDIN) && !s->port.set.local)
			return lc_err_set(e, LC_ERR_DENIED, "'-' (stdin) is a "
			    "local source only: a remote agent's stdin is its "
			    "control channel");
		if ((m->flags & LC_ADD_PROGRAM) && s->port.conf->root_fd >= 0)
			return lc_err_set(e, LC_ERR_DENIED, "this agent is "
			    "restricted (--restrict %s): it runs no -N "
			    "programs", s->port.conf->root);
	} else if (s->list.nadds != 0 && (s->list.adds[0].flags &
	    (LC_ADD_STDIN | LC_ADD_PROGRAM))) {
		return lc_err_set(e, LC_ERR_PROTO, "SRC_ADD: a stream must be "
		    "the only request");
	}
	if (s->list.nadds == s->list.adds_cap) {
		size_t ncap = s->list.adds_cap ? 2 * s->list.adds_cap : 8;
		if (ncap > 65536 || (a = realloc(s->list.adds,
		    ncap * sizeof(*a))) == NULL)
			return lc_err_set(e, LC_ERR_NOMEM, "too many sources");
		s->list.adds = a;
		s->list.adds_cap = ncap;
	}
	a = &s->list.adds[s->list.nadds];
	a->flags = m->flags;
	if ((r = lc_confine_user_path(s->port.conf, m->path,
	    s->port.set.tilde, path, sizeof(path), e)) != 0)
		return r;
	/* a directory's contents ("." or "~" as well as "dir/"): the names
	   below it are appended to "path/" */
	n = strlen(path);
	if ((m->flags & LC_ADD_CONTENTS) && n > 0 && path[n - 1] != '/') {
		if (n + 1 >= sizeof(path))
			return lc_err_set(e, LC_ERR_IO, "%.64s...: name too "
			    "long", path);
		path[n] = '/';
		path[n + 1] = '\0';
	}
	if ((a->path = strdup(path)) == NULL)
		return -LC_ERR_NOMEM;
	s->list.nadds++;
	return lc_source_list(s, e);
}

int
lc__source_feed(struct lc_source *s, const char *what, const char *name,
    int end, int part, uint64_t size, struct lc_err *e)
{
	struct lc_walk *w = s->list.walk;
	struct lc_err fe;
	int r;

	if (s->list.nadds == 0 || !(s->list.adds[0].flags & LC_ADD_FED))
		return lc_err_set(e, LC_ERR_PROTO, "%s without a fed "
		    "request (SRC_ADD with flag 0x40)", what);
	if (s->list.add_next != 0 || w == NULL || lc_walk_fed_ended(w))
		return lc_err_set(e, LC_ERR_PROTO, "%s after the end "
		    "of the fed request", what);
	if (end) {
		lc_walk_feed_end(w);
		return lc_source_list(s, e);
	}
	/* bounded before the name is copied: the controller's count of
	   names not yet answered is never below ours */
	if (lc_walk_fed_held(w) >= LC_FED_QUEUE_MAX)
		return lc_err_set(e, LC_ERR_PROTO, "%s: more than %u "
		    "names waiting to be announced", what, LC_FED_QUEUE_MAX);
	lc_err_clear(&fe);
	if ((r = part ? lc_walk_feed_part(w, name, size, &fe) :
	    lc_walk_feed(w, name, &fe)) != 0)
		return lc_err_set(e, r == -LC_ERR_NOMEM ? LC_ERR_NOMEM :
		    LC_ERR_PROTO, "%s: %s", what, fe.msg);
	return lc_source_list(s, e);
}

int
lc__source_entry(struct lc_source *s, const struct lc_msg_src_entry *m,
    struct lc_err *e)
{
	return lc__source_feed(s, "SRC_ENTRY", m->name,
	    (m->flags & LC_ENTRY_END) != 0, 0, 0, e);
}

/* SRC_CREDIT: the controller lets us announce ids below upto. */
int
lc__source_credit(struct lc_source *s, const struct lc_msg_src_credit *m,
    struct lc_err *e)
{
	if (m->upto < s->list.credit)
		return lc_err_set(e, LC_ERR_PROTO, "SRC_CREDIT went back "
		    "(%u after %u)", m->upto, s->list.credit);
	s->list.credit = m->upto;
	return lc_source_list(s, e);
}

struct lc_listed *
lc__source_listed(struct lc_source *s, uint32_t id, struct lc_listed ***pp)
{
	struct lc_listed **p;

	for (p = &s->list.listed; *p != NULL && (*p)->id != id; p = &(*p)->next)
		;
	if (pp != NULL)
		*pp = p;
	return *p;
}

/*
 * Open a listed file when its data is wanted (the listing only stat'ed
 * it, so a tree costs no descriptor per file in flight and an up-to-date
 * file is never opened).  It must still be the file that was listed.
 */
int
lc__source_open(struct lc_source *s, struct lc_listed *l, struct lc_err *e)
{
	struct stat st;
	int fd, r;

	if (l->fd >= 0)
		return 0;
	if (l->failed != NULL)
		return lc_err_set(e, LC_ERR_IO, "%s", l->failed);
	if ((r = lc_confine_open(s->port.conf, -1, l->path, O_RDONLY |
	    O_NOCTTY | O_NONBLOCK | (l->follow ? 0 : O_NOFOLLOW), 0, &fd,
	    e)) != 0)
		return r;
	/*
	 * O_NONBLOCK (so that a FIFO put in its place cannot hang the open)
	 * stays set: only a regular file gets past the check below, and
	 * reading one never blocks on it.  Clearing it was two fcntl calls
	 * for every file of a tree.
	 */
	if (fstat(fd, &st) != 0) {
		r = lc_err_sys(e, LC_ERR_IO, errno, "%s", l->path);
		close(fd);
		return r;
	}
	if (!S_ISREG(st.st_mode) || st.st_dev != l->dev ||
	    st.st_ino != l->ino) {
		close(fd);
		return lc_err_set(e, LC_ERR_IO, "%s: replaced during the "
		    "copy", l->path);
	}
	l->fd = fd;
	return 0;
}

/* Take l (at *pp) out of the listed queue. */
void
lc__source_unlink(struct lc_source *s, struct lc_listed **pp,
    struct lc_listed *l)
{
	struct lc_listed *prev = NULL;

	*pp = l->next;
	if (s->list.listed_tail == l) {
		/* the new tail is the one before l, if any */
		for (prev = s->list.listed; prev != NULL && prev->next != NULL;
		    prev = prev->next)
			;
		s->list.listed_tail = prev;
	}
}

/* FILE_SKIP: the sink leaves this file as it is; nothing to send. */
int
lc__source_skip(struct lc_source *s, const struct lc_msg_file_skip *m,
    struct lc_err *e)
{
	struct lc_listed **pp, *l;

	if ((l = lc__source_listed(s, m->id, &pp)) == NULL || l->checking)
		return lc_err_set(e, LC_ERR_PROTO, "FILE_SKIP for unknown "
		    "file %u", m->id);
	lc__source_unlink(s, pp, l);
	lc__listed_free(l);
	return 0;
}

void
lc__listed_free(struct lc_listed *l)
{
	if (l->fd >= 0)
		close(l->fd);
	lc_csum_free(l->csum);
	lc__source_hashes_release(l);
	free(l->prefix);
	lc__verdict_free(l->verdict);
	free(l->failed);
	free(l);
}

void
lc__source_list_free(struct lc_source *s)
{
	struct lc_listed *l, *n;

	for (l = s->list.listed; l != NULL; l = n) {
		n = l->next;
		lc__listed_free(l);
	}
	lc_walk_free(s->list.walk);
	if (s->list.pending && s->list.pend.fd >= 0)
		close(s->list.pend.fd);
	for (size_t i = 0; i < s->list.nadds; i++)
		free(s->list.adds[i].path);
	free(s->list.adds);
	lc_filters_free(&s->list.filters);
	lc_shard_plan_free(&s->list.plan);
	free(s->list.parts);
}
