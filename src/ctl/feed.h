/*
 * The chain's feed (--also, fanout.c): what one target holds, entry by
 * entry, handed from the copy that writes it to the copy that forwards it
 * to the next target.  The writing copy's controller (lc_ctl, another
 * thread) pushes each entry its sink reported made or up to date, with
 * the metadata it was announced with; the forwarding copy's controller
 * takes them in the order pushed and names them to its source on that
 * target (SRC_ENTRY).  Entries are kept until the feed is freed, so a
 * retried copy takes them again from the first; a name pushed twice (a
 * retry of the writing copy) is kept once.
 */
#ifndef LANECP_FEED_H
#define LANECP_FEED_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

struct lc_feed_entry {
	struct lc_feed_entry *next; /* in the order pushed */
	uint8_t kind;		    /* LC_KIND_REG, _DIR, _SYMLINK */
	uint32_t mode, uid, gid, mtime_nsec;
	int64_t mtime_sec;
	uint64_t size;
	char *link, *user, *group; /* "" when none (in this block) */
	char name[];		   /* as the copy announced it */
};

struct lc_feed {
	pthread_mutex_t mu;
	int wake[2]; /* a byte in it: pushed or closed since the
				   reader drained it */
	struct lc_feed_entry *head, *tail;
	size_t n;
	struct lc_feed_entry **set; /* by name (open addressing) */
	size_t setcap;
	int closed; /* the writing copy has ended */
	int ok;	    /* ... and its target is complete */
};

int lc_feed_init(struct lc_feed *f);
void lc_feed_free(struct lc_feed *f);

/* A new entry for FILE m (its kind must be regular, directory or link). */
struct lc_feed_entry *lc_feed_entry_new(const struct lc_msg_file *m);

/* Push x (taken over; freed at once if its name is in); -LC_ERR_NOMEM. */
int lc_feed_push(struct lc_feed *f, struct lc_feed_entry *x);

/* Push an entry of kind with only its name (a record of names). */
int lc_feed_push_name(struct lc_feed *f, uint8_t kind, const char *name);

/* Whether an entry named name was pushed. */
int lc_feed_has(struct lc_feed *f, const char *name);

/* The writing copy has ended; ok: its target holds every entry. */
void lc_feed_close(struct lc_feed *f, int ok);

/*
 * The entry after cur (NULL: the first), or NULL when none is in yet;
 * *closed and *ok as the feed stands.  Entries stay valid until
 * lc_feed_free.
 */
const struct lc_feed_entry *lc_feed_next(struct lc_feed *f,
    const struct lc_feed_entry *cur, int *closed, int *ok);

/* The descriptor to poll for POLLIN, and emptying it once it fired. */
int lc_feed_fd(const struct lc_feed *f);
void lc_feed_drain(struct lc_feed *f);

#endif
