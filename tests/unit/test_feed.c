/*
 * The chain's feed (src/ctl/feed.c): entries come back in the order
 * pushed, a name pushed twice is kept once, a reader's cursor survives
 * later pushes, the end and its result are seen once everything before
 * them is taken, the wake descriptor fires on a push and on the end, and
 * a reader in another thread sees every entry a writer pushes.
 */
#include "harness.h"

#include "feed.h"

#include <poll.h>
#include <pthread.h>

static struct lc_feed_entry *
entry(const char *name, uint8_t kind, uint64_t size)
{
	struct lc_msg_file m;

	memset(&m, 0, sizeof(m));
	snprintf(m.name, sizeof(m.name), "%s", name);
	m.kind = kind;
	m.size = size;
	m.mode = 0640;
	m.mtime_sec = 1700000000;
	if (kind == LC_KIND_SYMLINK)
		snprintf(m.link, sizeof(m.link), "%s", "../t");
	snprintf(m.user, sizeof(m.user), "%s", "u");
	return lc_feed_entry_new(&m);
}

static int
readable(struct lc_feed *f)
{
	struct pollfd p = { .fd = lc_feed_fd(f), .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

LC_TEST(order_kept_names_once)
{
	struct lc_feed f;
	const struct lc_feed_entry *x;
	int closed, ok;

	LC_CHECK_EQ_I(lc_feed_init(&f), 0);
	LC_CHECK(!readable(&f));
	LC_CHECK(lc_feed_next(&f, NULL, &closed, &ok) == NULL);
	LC_CHECK(!closed);
	LC_CHECK(!lc_feed_has(&f, "d"));
	LC_CHECK_EQ_I(lc_feed_push(&f, entry("d", LC_KIND_DIR, 0)), 0);
	LC_CHECK(lc_feed_has(&f, "d"));
	LC_CHECK(!lc_feed_has(&f, "d/b"));
	/* a record of names only (made_log) */
	struct lc_feed g;
	LC_CHECK_EQ_I(lc_feed_init(&g), 0);
	LC_CHECK_EQ_I(lc_feed_push_name(&g, LC_KIND_REG, "d/x y"), 0);
	LC_CHECK_EQ_I(lc_feed_push_name(&g, LC_KIND_REG, "d/x y"), 0);
	LC_CHECK(lc_feed_has(&g, "d/x y") && !lc_feed_has(&g, "d/x"));
	x = lc_feed_next(&g, NULL, &closed, &ok);
	LC_CHECK(x != NULL && strcmp(x->name, "d/x y") == 0);
	LC_CHECK(x->size == 0 && x->link[0] == '\0' && x->user[0] == '\0' &&
	    x->group[0] == '\0');
	LC_CHECK(lc_feed_next(&g, x, &closed, &ok) == NULL);
	lc_feed_free(&g);
	LC_CHECK(readable(&f));
	lc_feed_drain(&f);
	LC_CHECK(!readable(&f));
	LC_CHECK_EQ_I(lc_feed_push(&f, entry("d/b", LC_KIND_REG, 7)), 0);
	LC_CHECK_EQ_I(lc_feed_push(&f, entry("d/a", LC_KIND_SYMLINK, 0)), 0);
	/* a retried copy publishes again: kept once */
	LC_CHECK_EQ_I(lc_feed_push(&f, entry("d/b", LC_KIND_REG, 7)), 0);
	x = lc_feed_next(&f, NULL, &closed, &ok);
	LC_CHECK(x != NULL && strcmp(x->name, "d") == 0);
	LC_CHECK(x->kind == LC_KIND_DIR && x->mode == 0640);
	x = lc_feed_next(&f, x, &closed, &ok);
	LC_CHECK(x != NULL && strcmp(x->name, "d/b") == 0 && x->size == 7);
	LC_CHECK_STR(x->user, "u");
	LC_CHECK_STR(x->link, "");
	x = lc_feed_next(&f, x, &closed, &ok);
	LC_CHECK(x != NULL && strcmp(x->name, "d/a") == 0);
	LC_CHECK_STR(x->link, "../t");
	LC_CHECK(lc_feed_next(&f, x, &closed, &ok) == NULL);
	LC_CHECK(!closed);
	/* the cursor survives a later push */
	LC_CHECK_EQ_I(lc_feed_push(&f, entry("e", LC_KIND_REG, 1)), 0);
	x = lc_feed_next(&f, x, &closed, &ok);
	LC_CHECK(x != NULL && strcmp(x->name, "e") == 0);
	lc_feed_drain(&f);
	lc_feed_close(&f, 0);
	LC_CHECK(readable(&f));
	LC_CHECK(lc_feed_next(&f, x, &closed, &ok) == NULL);
	LC_CHECK(closed && !ok);
	lc_feed_free(&f);
}

LC_TEST(many_names_grow_the_set)
{
	struct lc_feed f;
	const struct lc_feed_entry *x = NULL;
	char name[32];
	int closed, ok;
	size_t n = 0;

	LC_CHECK_EQ_I(lc_feed_init(&f), 0);
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 5000; i++) {
			snprintf(name, sizeof(name), "f%d", i);
			LC_CHECK_EQ_I(lc_feed_push(&f,
					  entry(name, LC_KIND_REG, 1)),
			    0);
		}
	lc_feed_close(&f, 1);
	while ((x = lc_feed_next(&f, x, &closed, &ok)) != NULL) {
		snprintf(name, sizeof(name), "f%zu", n);
		LC_CHECK_STR(x->name, name);
		n++;
	}
	LC_CHECK_EQ_U(n, 5000);
	LC_CHECK(closed && ok);
	LC_CHECK(lc_feed_has(&f, "f0") && lc_feed_has(&f, "f4999"));
	LC_CHECK(!lc_feed_has(&f, "f5000") && !lc_feed_has(&f, "f"));
	lc_feed_free(&f);
}

static void *
writer(void *arg)
{
	struct lc_feed *f = arg;
	char name[32];

	for (int i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "w/%d", i);
		if (lc_feed_push(f, entry(name, LC_KIND_REG, (uint64_t)i)) != 0)
			break;
	}
	lc_feed_close(f, 1);
	return NULL;
}

LC_TEST(a_reader_in_another_thread_sees_all)
{
	struct lc_feed f;
	const struct lc_feed_entry *x = NULL, *nx;
	pthread_t th;
	uint64_t want = 0;
	int closed = 0, ok = 0;

	LC_CHECK_EQ_I(lc_feed_init(&f), 0);
	LC_CHECK_EQ_I(pthread_create(&th, NULL, writer, &f), 0);
	for (;;) {
		struct pollfd p = { .fd = lc_feed_fd(&f), .events = POLLIN };
		if ((nx = lc_feed_next(&f, x, &closed, &ok)) != NULL) {
			LC_CHECK_EQ_U(nx->size, want);
			want++;
			x = nx;
			continue;
		}
		if (closed)
			break;
		/* nothing yet: wait for the writer's wake, as the
		   controller's poll does */
		LC_CHECK(poll(&p, 1, 10000) == 1);
		lc_feed_drain(&f);
	}
	pthread_join(th, NULL);
	LC_CHECK_EQ_U(want, 20000);
	LC_CHECK(ok);
	lc_feed_free(&f);
}

/*
 * A file fed before it is whole (lc_feed_push_follow): its avail only
 * moves forward and stops at its size, done makes it whole, each change
 * wakes the reader; the reader takes it as followed only when it can
 * follow, else waits for it to be whole; left unfinished, an entry the
 * reader took is bad (and stays so), one it did not waits to be pushed
 * again, whole or followed again from 0.
 */
LC_TEST(followed_entries_avail_done_unfinished)
{
	struct lc_feed f;
	struct lc_feed_entry *a, *b, *c, *ref;
	uint64_t avail;
	int done, bad, part;

	LC_CHECK_EQ_I(lc_feed_init(&f), 0);
	LC_CHECK_EQ_I(lc_feed_push(&f, entry("d", LC_KIND_DIR, 0)), 0);
	a = (struct lc_feed_entry *)lc_feed_next(&f, NULL, &done, &bad);
	LC_CHECK_EQ_I(lc_feed_take(&f, a, 1, &part), LC_FEED_TAKE);
	LC_CHECK(!part && !a->follow); /* pushed whole */
	LC_CHECK_EQ_I(lc_feed_push_follow(&f, entry("d/a", LC_KIND_REG, 100),
			  &a),
	    0);
	LC_CHECK(a != NULL && a->follow);
	LC_CHECK_EQ_I(lc_feed_push_follow(&f, entry("d/b", LC_KIND_REG, 50),
			  &b),
	    0);
	LC_CHECK_EQ_I(lc_feed_push_follow(&f, entry("d/c", LC_KIND_REG, 9), &c),
	    0);
	/* a reader that cannot follow waits for it to be whole */
	LC_CHECK_EQ_I(lc_feed_take(&f, a, 0, &part), LC_FEED_WAIT);
	LC_CHECK(!a->parted);
	lc_feed_state(&f, a, &avail, &done, &bad);
	LC_CHECK(avail == 0 && !done && !bad);
	lc_feed_drain(&f);
	lc_feed_avail(&f, a, 40, 0);
	LC_CHECK(readable(&f));
	lc_feed_drain(&f);
	lc_feed_avail(&f, a, 30, 0); /* never back, no wake */
	LC_CHECK(!readable(&f));
	lc_feed_state(&f, a, &avail, &done, &bad);
	LC_CHECK_EQ_U(avail, 40);
	lc_feed_avail(&f, a, 1000, 0); /* at most its size */
	lc_feed_state(&f, a, &avail, &done, &bad);
	LC_CHECK(avail == 100 && !done);
	LC_CHECK_EQ_I(lc_feed_take(&f, a, 1, &part), LC_FEED_TAKE);
	LC_CHECK(part && a->parted);
	lc_feed_avail(&f, a, 100, 1);
	lc_feed_state(&f, a, &avail, &done, &bad);
	LC_CHECK(avail == 100 && done && !bad);
	LC_CHECK_EQ_U(lc_feed_unfinished(&f, a), 0); /* done stays done */
	lc_feed_state(&f, a, &avail, &done, &bad);
	LC_CHECK(done && !bad);
	/* b taken as followed once some is written, then left unfinished:
	   bad, for good */
	LC_CHECK_EQ_I(lc_feed_take(&f, b, 1, &part), LC_FEED_WAIT);
	lc_feed_avail(&f, b, 20, 0);
	LC_CHECK_EQ_I(lc_feed_take(&f, b, 1, &part), LC_FEED_TAKE);
	LC_CHECK(part);
	lc_feed_drain(&f);
	LC_CHECK(!lc_feed_broken(&f));
	LC_CHECK_EQ_U(lc_feed_unfinished(&f, NULL), 1);
	LC_CHECK(lc_feed_broken(&f));
	LC_CHECK(readable(&f));
	lc_feed_state(&f, b, &avail, &done, &bad);
	LC_CHECK(bad && !done);
	LC_CHECK_EQ_I(lc_feed_take(&f, b, 1, &part), LC_FEED_BAD);
	lc_feed_avail(&f, b, 50, 1);
	LC_CHECK_EQ_I(lc_feed_push(&f, entry("d/b", LC_KIND_REG, 50)), 0);
	lc_feed_state(&f, b, &avail, &done, &bad);
	LC_CHECK(bad && !done);
	/* c, not taken: no longer followed, it waits to be pushed again */
	lc_feed_state(&f, c, &avail, &done, &bad);
	LC_CHECK(!bad && !done && !c->follow);
	LC_CHECK_EQ_I(lc_feed_take(&f, c, 1, &part), LC_FEED_WAIT);
	LC_CHECK_EQ_I(lc_feed_push_follow(&f, entry("d/c", LC_KIND_REG, 9),
			  &ref),
	    0);
	LC_CHECK(ref == c && c->follow);
	lc_feed_avail(&f, c, 4, 0);
	LC_CHECK_EQ_U(lc_feed_unfinished(&f, c), 0);
	LC_CHECK_EQ_I(lc_feed_push(&f, entry("d/c", LC_KIND_REG, 9)), 0);
	lc_feed_state(&f, c, &avail, &done, &bad);
	LC_CHECK(done && !bad && avail == 9);
	LC_CHECK_EQ_I(lc_feed_take(&f, c, 1, &part), LC_FEED_TAKE);
	LC_CHECK(!part);
	/* a name pushed again when it is done: nothing changes */
	LC_CHECK_EQ_I(lc_feed_push_follow(&f, entry("d/a", LC_KIND_REG, 100),
			  &ref),
	    0);
	LC_CHECK(ref == NULL);
	lc_feed_free(&f);
}

LC_TEST_MAIN()
