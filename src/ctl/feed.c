/*
 * The chain's feed (feed.h): a list under a mutex, a set of the names in
 * it, and a pipe that wakes the reader's poll.
 */
#include "feed.h"

#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
lc_feed_init(struct lc_feed *f)
{
	memset(f, 0, sizeof(*f));
	f->wake[0] = f->wake[1] = -1;
	if (pipe2(f->wake, O_CLOEXEC | O_NONBLOCK) != 0)
		return -LC_ERR_NOMEM;
	if (pthread_mutex_init(&f->mu, NULL) != 0) {
		close(f->wake[0]);
		close(f->wake[1]);
		f->wake[0] = f->wake[1] = -1;
		return -LC_ERR_NOMEM;
	}
	return 0;
}

void
lc_feed_free(struct lc_feed *f)
{
	struct lc_feed_entry *x, *nx;

	if (f->wake[0] < 0)
		return;
	for (x = f->head; x != NULL; x = nx) {
		nx = x->next;
		free(x);
	}
	free(f->set);
	close(f->wake[0]);
	close(f->wake[1]);
	pthread_mutex_destroy(&f->mu);
	memset(f, 0, sizeof(*f));
	f->wake[0] = f->wake[1] = -1;
}

struct lc_feed_entry *
lc_feed_entry_new(const struct lc_msg_file *m)
{
	size_t nl = strlen(m->name) + 1, ll = strlen(m->link) + 1,
	       ul = strlen(m->user) + 1, gl = strlen(m->group) + 1;
	struct lc_feed_entry *x = malloc(sizeof(*x) + nl + ll + ul + gl);

	if (x == NULL)
		return NULL;
	x->next = NULL;
	x->kind = m->kind;
	x->mode = m->mode;
	x->uid = m->uid;
	x->gid = m->gid;
	x->mtime_sec = m->mtime_sec;
	x->mtime_nsec = m->mtime_nsec;
	x->size = m->size;
	x->follow = x->bad = x->parted = 0;
	x->done = 1;
	x->avail = m->size;
	memcpy(x->name, m->name, nl);
	x->link = x->name + nl;
	memcpy(x->link, m->link, ll);
	x->user = x->link + ll;
	memcpy(x->user, m->user, ul);
	x->group = x->user + ul;
	memcpy(x->group, m->group, gl);
	return x;
}

static uint64_t
lc_feed_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The slot of name in the set: its entry's, or the empty one it goes to. */
static size_t
lc_feed_slot(const struct lc_feed *f, const char *name)
{
	size_t i = (size_t)lc_feed_hash(name) & (f->setcap - 1);

	while (f->set[i] != NULL && strcmp(f->set[i]->name, name) != 0)
		i = (i + 1) & (f->setcap - 1);
	return i;
}

/* Room for one more name: the set at most half full. */
static int
lc_feed_set_room(struct lc_feed *f)
{
	struct lc_feed_entry **old = f->set;
	size_t oldcap = f->setcap, cap = oldcap == 0 ? 1024 : oldcap * 2;

	if ((f->n + 1) * 2 <= f->setcap)
		return 0;
	if ((f->set = calloc(cap, sizeof(*f->set))) == NULL) {
		f->set = old;
		return -LC_ERR_NOMEM;
	}
	f->setcap = cap;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i] != NULL)
			f->set[lc_feed_slot(f, old[i]->name)] = old[i];
	free(old);
	return 0;
}

int
lc_feed_push_name(struct lc_feed *f, uint8_t kind, const char *name)
{
	size_t nl = strlen(name) + 1;
	struct lc_feed_entry *x = calloc(1, sizeof(*x) + nl + 3);

	if (x == NULL)
		return -LC_ERR_NOMEM;
	x->kind = kind;
	x->done = 1;
	memcpy(x->name, name, nl);
	x->link = x->name + nl; /* "", "" and "" after the name */
	x->user = x->link + 1;
	x->group = x->user + 1;
	return lc_feed_push(f, x);
}

int
lc_feed_has(struct lc_feed *f, const char *name)
{
	int has;

	pthread_mutex_lock(&f->mu);
	has = f->setcap > 0 && f->set[lc_feed_slot(f, name)] != NULL;
	pthread_mutex_unlock(&f->mu);
	return has;
}

static void
lc_feed_wake(struct lc_feed *f)
{
	char b = 1;

	/* full (EAGAIN) is as good: the reader wakes and takes all */
	if (write(f->wake[1], &b, 1) < 0 && errno != EAGAIN)
		return;
}

/*
 * Push x, or, when its name is in (under mu): done, the entry there not
 * done and not taken as followed is whole now; follow, it is followed
 * again from 0 (*ref: it).  x is freed then.
 */
static int
lc_feed_push_ref(struct lc_feed *f, struct lc_feed_entry *x, int follow,
    struct lc_feed_entry **ref)
{
	struct lc_feed_entry *y;
	size_t i;
	int r = 0;

	x->next = NULL;
	*ref = NULL;
	pthread_mutex_lock(&f->mu);
	if ((r = lc_feed_set_room(f)) != 0)
		goto out;
	i = lc_feed_slot(f, x->name);
	if ((y = f->set[i]) != NULL) {
		/* pushed before: a copy from here after a failed hop */
		if (!y->done && !y->parted && !y->bad) {
			y->follow = (uint8_t)follow;
			y->done = (uint8_t)!follow;
			y->avail = follow ? 0 : y->size;
			*ref = follow ? y : NULL;
			lc_feed_wake(f);
		}
		goto out; /* x is freed */
	}
	f->set[i] = x;
	if (f->tail != NULL)
		f->tail->next = x;
	else
		f->head = x;
	f->tail = x;
	f->n++;
	*ref = x;
	x = NULL;
	lc_feed_wake(f);
out:
	pthread_mutex_unlock(&f->mu);
	free(x);
	return r;
}

int
lc_feed_push(struct lc_feed *f, struct lc_feed_entry *x)
{
	struct lc_feed_entry *ref;

	return lc_feed_push_ref(f, x, 0, &ref);
}

int
lc_feed_push_follow(struct lc_feed *f, struct lc_feed_entry *x,
    struct lc_feed_entry **ref)
{
	x->follow = 1;
	x->done = 0;
	x->avail = 0;
	return lc_feed_push_ref(f, x, 1, ref);
}

void
lc_feed_avail(struct lc_feed *f, struct lc_feed_entry *x, uint64_t avail,
    int done)
{
	pthread_mutex_lock(&f->mu);
	if (x->follow && !x->bad && !x->done) {
		if (done || avail > x->size)
			avail = x->size;
		if (avail > x->avail || done) {
			x->avail = avail;
			x->done = (uint8_t)(done != 0);
			lc_feed_wake(f);
		}
	}
	pthread_mutex_unlock(&f->mu);
}

/* One entry (under mu): 1 when it became bad. */
static int
lc_feed_unfinish(struct lc_feed_entry *x)
{
	if (!x->follow || x->done || x->bad)
		return 0;
	if (x->parted) {
		x->bad = 1;
		return 1;
	}
	x->follow = 0; /* waits, not whole, for a push again */
	x->avail = 0;
	return 0;
}

size_t
lc_feed_unfinished(struct lc_feed *f, struct lc_feed_entry *x)
{
	size_t n = 0;

	pthread_mutex_lock(&f->mu);
	if (x != NULL)
		n = (size_t)lc_feed_unfinish(x);
	else
		for (x = f->head; x != NULL; x = x->next)
			n += (size_t)lc_feed_unfinish(x);
	if (n > 0)
		f->broken = 1;
	lc_feed_wake(f);
	pthread_mutex_unlock(&f->mu);
	return n;
}

int
lc_feed_broken(struct lc_feed *f)
{
	int b;

	pthread_mutex_lock(&f->mu);
	b = f->broken;
	pthread_mutex_unlock(&f->mu);
	return b;
}

int
lc_feed_take(struct lc_feed *f, struct lc_feed_entry *x, int follow, int *part)
{
	int r = LC_FEED_TAKE;

	*part = 0;
	pthread_mutex_lock(&f->mu);
	if (x->bad)
		r = LC_FEED_BAD;
	else if (x->done)
		*part = 0;
	else if (x->follow && follow && x->avail > 0)
		*part = x->parted = 1;
	else
		r = LC_FEED_WAIT;
	pthread_mutex_unlock(&f->mu);
	return r;
}

void
lc_feed_state(struct lc_feed *f, const struct lc_feed_entry *x, uint64_t *avail,
    int *done, int *bad)
{
	pthread_mutex_lock(&f->mu);
	*avail = x->avail;
	*done = x->done;
	*bad = x->bad;
	pthread_mutex_unlock(&f->mu);
}

void
lc_feed_close(struct lc_feed *f, int ok)
{
	pthread_mutex_lock(&f->mu);
	f->closed = 1;
	f->ok = ok;
	lc_feed_wake(f);
	pthread_mutex_unlock(&f->mu);
}

const struct lc_feed_entry *
lc_feed_next(struct lc_feed *f, const struct lc_feed_entry *cur, int *closed,
    int *ok)
{
	const struct lc_feed_entry *x;

	pthread_mutex_lock(&f->mu);
	x = cur == NULL ? f->head : cur->next;
	*closed = f->closed;
	*ok = f->ok;
	pthread_mutex_unlock(&f->mu);
	return x;
}

int
lc_feed_fd(const struct lc_feed *f)
{
	return f->wake[0];
}

void
lc_feed_drain(struct lc_feed *f)
{
	char b[64];

	while (read(f->wake[0], b, sizeof(b)) > 0)
		;
}
