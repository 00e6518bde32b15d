/*
 * The walk's state, shared by walk.c (the tree walk) and walk_fed.c (a
 * walk fed name by name, LC_WALK_FED).  Not for anyone else: the rest of
 * the program sees walk.h.
 */
#ifndef LANECP_WALK_INT_H
#define LANECP_WALK_INT_H

#include "walk.h"

#include <limits.h>
#include <stddef.h>

#define LC_WALK_NAMEBUF (LC_PATH_MAX + NAME_MAX + 2)
#define LC_WALK_DISP_MAX 400 /* longer paths in messages lose the front */
#define LC_WALK_DIRFLAGS (O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY)

struct lc_walk_level {
	char *buf;   /* the names, NUL-terminated, back to back */
	size_t *off; /* sorted offsets into buf */
	size_t n, next;
	size_t len; /* this directory's name length in path */
	dev_t dev;
	ino_t ino;
	int fd;	  /* -1: closed, reopen on return */
	int link; /* reached through a symlink (FOLLOW) */
};

/* A name fed (lc_walk_feed), waiting for its turn. */
struct lc_walk_fed {
	struct lc_walk_fed *next;
	int part;      /* lc_walk_feed_part() */
	uint64_t size; /* its size */
	char name[];
};

struct lc_walk {
	const struct lc_confine *conf;
	uint32_t flags;
	int state;   /* LC_WS_* */
	int root_fd; /* until handed out or pushed */
	struct stat root_st;
	struct lc_walk_level *lv;
	size_t depth, cap;
	int pending;		     /* path names a directory to list next */
	struct stat pend_st;	     /* what it was when returned */
	int pend_link;		     /* reached through a symlink (FOLLOW) */
	char root_disp[LC_PATH_MAX]; /* the user's path, for messages */
	size_t base_len;	     /* bytes of path that stand for the root */
	/* LC_WALK_FED: the names not yet returned, in order */
	struct lc_walk_fed *fed_head, *fed_tail;
	size_t fed_n;
	int fed_end; /* lc_walk_feed_end() called */
	int fed_cur; /* the entry returned last was a fed name */
	char path[LC_WALK_NAMEBUF];
	char full[LC_PATH_MAX + LC_WALK_NAMEBUF];
	char disp[LC_PATH_MAX + LC_WALK_NAMEBUF];
	char link[LC_PATH_MAX];
};

enum {
	LC_WS_ROOT, /* root entry not returned yet */
	LC_WS_TREE, /* walking the stack (FED: taking names) */
	LC_WS_DONE
};

/* walk.c: the current path (w->path) for messages */
const char *lc__walk_disp(struct lc_walk *w);

/* walk.c: an entry that could not be read (errno err): LC_WALK_FAIL */
int lc__walk_fail(struct lc_walk *w, struct lc_walk_entry *ent,
    struct lc_err *e, int err);

/*
 * walk.c: the entry name in directory dirfd, w->path already naming it,
 * made as the tree walk makes every child (lstat, symlink target, stat or
 * open of a regular file; a directory becomes w->pending).  0 when it
 * vanished, else lc_walk_next()'s results.
 */
int lc__walk_child(struct lc_walk *w, int dirfd, const char *name,
    struct lc_walk_entry *ent, struct lc_err *e);

/* walk_fed.c: lc_walk_next() of a LC_WALK_FED walk past its root */
int lc__walk_fed_next(struct lc_walk *w, struct lc_walk_entry *ent,
    struct lc_err *e);

/* walk_fed.c: free the names still queued */
void lc__walk_fed_free(struct lc_walk *w);

#endif
