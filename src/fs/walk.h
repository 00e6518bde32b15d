/*
 * The source side's directory walker: a stream of entries (directories,
 * symlinks, opened regular files) in pre-order, each directory's entries
 * sorted by strcmp(3), so the names come out strictly increasing in
 * component-wise order.
 *
 * Bounded: one directory's names are read, sorted and held at a time per
 * level of the current path (never the whole tree), and at most
 * LC_WALK_MAX_FDS directory descriptors are open whatever the depth;
 * deeper levels are reopened one component at a time from the nearest
 * open ancestor (O_NOFOLLOW, the (st_dev, st_ino) checked at each step), so
 * nothing is resolved through a symlink that appeared meanwhile.
 *
 * A fed walk (LC_WALK_FED, walk_fed.c) lists nothing: after the root it
 * returns only the entries the caller names (lc_walk_feed), in that order,
 * each resolved below the root without following a symlink.
 *
 * Not thread-safe: one walk belongs to one thread.
 */
#ifndef LANECP_WALK_H
#define LANECP_WALK_H

#include <stdint.h>
#include <sys/stat.h>

#include "confine.h"
#include "err.h"
#include "lc_limits.h"

#define LC_WALK_RECURSIVE 0x1u	/* -r */
#define LC_WALK_FOLLOW 0x2u	/* -L: follow symlinks (to files and dirs) */
#define LC_WALK_CONTENTS 0x4u	/* "dir/": the root's entries, unprefixed */
#define LC_WALK_NOOPEN 0x8u	/* regular files below the root: stat only,
				   fd -1 (the caller opens them by path and
				   checks st_dev and st_ino) */
#define LC_WALK_FED 0x10u	/* with RECURSIVE, not FOLLOW: after the root,
				   only the names lc_walk_feed() gives */
#define LC_WALK_MASK 0x1fu

/* lc_walk_next() results besides 0 (end) and -LC_ERR_* */
#define LC_WALK_ENTRY 1		/* *ent filled */
#define LC_WALK_SKIP 2		/* ent->name skipped; e says why (a warning) */
#define LC_WALK_FAIL 3		/* ent->name could not be read; e says why */
#define LC_WALK_WAIT 4		/* FED: no name queued yet; feed one (or the
				   end) and call again */

/* Directory descriptors a walk keeps open at most (plus one briefly). */
#define LC_WALK_MAX_FDS 24

struct lc_walk;

struct lc_walk_entry {
	int kind;		/* LC_KIND_REG, _DIR, _SYMLINK; 0: SKIP/FAIL */
	const char *name;	/* relative name, '/'-joined; valid until the
				 * next lc_walk_next() or lc_walk_free() */
	struct stat st;		/* REG: fstat of fd; DIR: lstat (stat with
				 * FOLLOW); SYMLINK: lstat with st_size 0 */
	int fd;			/* REG: O_RDONLY, blocking, owned by the
				 * caller; else -1 */
	const char *link;	/* SYMLINK: its target; else NULL */
	int part;		/* LC_WALK_PART_*: how a name fed with
				 * lc_walk_feed_part() was read */
	uint64_t part_size;	/* LC_WALK_PART_FOLLOW: the size announced
				 * with it */
};

/* lc_walk_entry.part */
#define LC_WALK_PART_NONE 0	/* not fed with lc_walk_feed_part() */
#define LC_WALK_PART_FOLLOW 1	/* read from the part file (REG, fd open,
				   st its fstat): still being written */
#define LC_WALK_PART_WHOLE 2	/* no part file: the final name, as
				   lc_walk_feed() gives it (complete) */

/*
 * Open a walk of the user path path (through lc_confine_open(conf, -1,
 * ...); a root symlink is followed).  flags: LC_WALK_*.  Fatal, with e
 * naming path: a missing or unreadable root (-LC_ERR_IO, or -LC_ERR_DENIED
 * from confinement), a root directory without LC_WALK_RECURSIVE ("PATH: is
 * a directory (use -r)"), a root that is not a regular file or directory
 * ("PATH: not a regular file"), a root whose basename is "", ".", ".." or
 * "/" without LC_WALK_CONTENTS (-LC_ERR_IO).  LC_WALK_FED without
 * LC_WALK_RECURSIVE or with LC_WALK_FOLLOW: -LC_ERR_INTERNAL.  On success
 * *out owns an open descriptor of the root; free it with lc_walk_free().
 * *out is NULL on error.
 */
int lc_walk_open(const struct lc_confine *conf, const char *path,
    uint32_t flags, struct lc_walk **out, struct lc_err *e);

/*
 * The next entry.  Returns LC_WALK_ENTRY with *ent filled; 0 at the end
 * (and every call after); LC_WALK_SKIP for an entry left out with a warning
 * (a device, FIFO or socket, a symlink loop under FOLLOW, a name longer
 * than LC_PATH_MAX - 1 bytes); LC_WALK_FAIL for an entry that could not be
 * read (a file or directory that cannot be opened or listed, a dangling
 * symlink under FOLLOW).  On SKIP and FAIL ent->name names the entry, e
 * holds one line naming it as the user wrote it ("root/sub/f: Permission
 * denied") and the walk goes on with the next entry.  Entries that vanish
 * during the walk are left out silently.  A directory is returned before
 * it is listed: if listing it fails, the next call returns LC_WALK_FAIL
 * naming it.  -LC_ERR_NOMEM (fatal; the walk is then finished).
 * LC_WALK_FED: after the root, LC_WALK_WAIT while no name is queued and
 * the end was not fed, 0 once it was and the queue is empty.
 */
int lc_walk_next(struct lc_walk *w, struct lc_walk_entry *ent,
    struct lc_err *e);

/*
 * Do not list the directory the last lc_walk_next() returned (one a
 * filter excludes: nothing below it is read).  No effect after any other
 * entry.
 */
void lc_walk_prune(struct lc_walk *w);

/*
 * LC_WALK_FED: queue name, the entry's name as the tree walk would give
 * it ("ROOTBASE/a/b", or "a/b" below a CONTENTS root): lc_walk_next()
 * resolves it below the root, each directory on the way opened with
 * O_NOFOLLOW (a symlink there fails the entry), the last component
 * lstat'ed and returned as a child in the tree walk is (a directory is not
 * listed).  A name that is missing, unreadable or of another kind comes
 * back as LC_WALK_FAIL, never left out silently: the caller answers for
 * every name.  Refused (the walk unchanged): a name that lc_relname_ok()
 * refuses or that is not below the root (-LC_ERR_DENIED); a walk not fed
 * or already ended (-LC_ERR_INTERNAL); -LC_ERR_NOMEM.  The caller bounds
 * the queue (lc_walk_fed_held()).
 */
int lc_walk_feed(struct lc_walk *w, const char *name, struct lc_err *e);

/*
 * LC_WALK_FED: queue name as lc_walk_feed() does (the same checks, the
 * same queue), but to be read from its part file as the target before
 * writes it: lc_walk_next() resolves the directories on the way as for
 * a fed name, then opens lc_part_name() of the last component in the last
 * one (O_NOFOLLOW, a regular file: a symlink or anything else there fails
 * the entry) and returns it under name, part LC_WALK_PART_FOLLOW,
 * part_size size, fd open (even with LC_WALK_NOOPEN: the part file is
 * renamed when complete, its descriptor stays good) and st its fstat.
 * When there is no part file, name itself is returned as lc_walk_feed()
 * would give it, part LC_WALK_PART_WHOLE (a regular file) or NONE.
 */
int lc_walk_feed_part(struct lc_walk *w, const char *name, uint64_t size,
    struct lc_err *e);

/* LC_WALK_FED: no more names; lc_walk_next() ends once the queue is. */
void lc_walk_feed_end(struct lc_walk *w);

/* LC_WALK_FED: lc_walk_feed_end() was called. */
int lc_walk_fed_ended(const struct lc_walk *w);

/*
 * LC_WALK_FED: names fed and not passed yet: those queued, plus the one
 * lc_walk_next() returned last (the caller holds it until it asks for
 * the next).
 */
size_t lc_walk_fed_held(const struct lc_walk *w);

/* Close every descriptor the walk holds (not those handed out) and free. */
void lc_walk_free(struct lc_walk *w);

#endif
