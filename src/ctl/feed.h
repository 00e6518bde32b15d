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
 *
 * A regular file may be pushed before it is whole (lc_feed_push_follow):
 * when the writing copy's sink writes it from byte 0 into its part file,
 * it is pushed at FILE_READY, and its avail then follows the sink's
 * low-water mark (PROGRESS) up to its size, so that the next target's
 * source can read it while it is written (SRC_PART, SRC_AVAIL).  Such an
 * entry ends done (FILE_DONE: renamed into place) or bad (the writing copy
 * failed it, or ended without it: what its part file holds is not the
 * file, and the next target's copy must stop).
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
	/* under the feed's mu: */
	uint8_t follow; /* pushed at FILE_READY, written from byte 0
			   into its part file */
	uint8_t done;	/* whole and under its name at the target */
	uint8_t bad;	/* follow: taken, then left unfinished there */
	uint8_t parted; /* taken by the reader as followed */
	uint64_t avail; /* bytes [0, avail) final there (size when done) */
	char name[];	/* as the copy announced it */
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
	int broken; /* an entry went bad (lc_feed_unfinished) */
};

int lc_feed_init(struct lc_feed *f);
void lc_feed_free(struct lc_feed *f);

/* A new entry for FILE m (its kind must be regular, directory or link). */
struct lc_feed_entry *lc_feed_entry_new(const struct lc_msg_file *m);

/* Push x (taken over; freed at once if its name is in); -LC_ERR_NOMEM. */
int lc_feed_push(struct lc_feed *f, struct lc_feed_entry *x);

/*
 * Push x (taken over) as a regular file the writing copy's sink is still
 * writing into its part file (avail 0, not done).  *ref: the entry to
 * pass to the calls below: x, or the entry of that name already in when
 * it is neither done nor taken by the reader (a copy from this host after
 * a failed hop writes it again: followed again, from 0); else NULL.
 */
int lc_feed_push_follow(struct lc_feed *f, struct lc_feed_entry *x,
    struct lc_feed_entry **ref);

/* A followed entry's avail moved (never back); done: it is whole. */
void lc_feed_avail(struct lc_feed *f, struct lc_feed_entry *x, uint64_t avail,
    int done);

/*
 * The writing copy will not finish followed entry x (none: every followed
 * entry not done).  One the reader took as followed (its source may hold
 * that part file open) is bad: the reader must stop.  One it did not is
 * no longer followed: it waits to be pushed again (lc_feed_push, done, or
 * lc_feed_push_follow).  Returns how many became bad.
 */
size_t lc_feed_unfinished(struct lc_feed *f, struct lc_feed_entry *x);

/* Whether an entry the reader took as followed went bad. */
int lc_feed_broken(struct lc_feed *f);

/*
 * The reader takes x, the entry after its cursor: LC_FEED_TAKE (*part: to
 * be read from its part file as it is written, else whole), LC_FEED_WAIT
 * (not whole, and not followed or nothing of it written yet: again when
 * the feed wakes) or LC_FEED_BAD (taken as followed, then left
 * unfinished).  follow: whether the reader can follow a part file at all.
 * A followed file is taken once some of it is written, not at once: a
 * hop that fails before it writes a byte (its streams never connected)
 * leaves the next copy free to take the file as the copy from this host
 * writes it again.
 */
enum { LC_FEED_BAD = -1, LC_FEED_WAIT = 0, LC_FEED_TAKE = 1 };
int
lc_feed_take(struct lc_feed *f, struct lc_feed_entry *x, int follow, int *part);

/* x's state as it stands: *avail, *done, *bad. */
void lc_feed_state(struct lc_feed *f, const struct lc_feed_entry *x,
    uint64_t *avail, int *done, int *bad);

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
