/*
 * A sender's kept blocks (src/agent/source/sent.h) when a small file's
 * block went ahead of a bigger file's (dispenser.h): after a broken
 * stream, what arrived is told by its place in the sending order, not by
 * (file id, offset) order, and blocks the watermark released after a
 * kept one stay as markers.
 */
#include "harness.h"

#include "dispenser.h"
#include "sent.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static int
devnull(void)
{
	return open("/dev/null", O_RDONLY);
}

static void
take(struct lc_dispenser *d, struct lc_block *b, uint32_t file, uint64_t off)
{
	LC_CHECK(lc_dispenser_next(d, b, NULL, 0) == 1);
	LC_CHECK_EQ_U(b->file_id, file);
	LC_CHECK_EQ_U(b->offset, off);
}

/* Files 1 (ten blocks of 100), then 2 and 3 (one block each). */
static struct lc_dispenser *
three_files(void)
{
	struct lc_dispenser *d = lc_dispenser_new(100);

	LC_CHECK(d != NULL);
	LC_CHECK(lc_dispenser_add(d, 1, devnull(), 0, 1000, NULL, NULL) == 0);
	LC_CHECK(lc_dispenser_add(d, 2, devnull(), 0, 50, NULL, NULL) == 0);
	LC_CHECK(lc_dispenser_add(d, 3, devnull(), 0, 100, NULL, NULL) == 0);
	lc_dispenser_finish(d);
	return d;
}

/* Everything handed out and released exactly once. */
static void
drain(struct lc_dispenser *d)
{
	struct lc_block b;
	int r;

	while ((r = lc_dispenser_next(d, &b, NULL, 0)) == 1)
		lc_dispenser_release(d, &b);
	LC_CHECK_EQ_I(r, 0);
	lc_dispenser_free(d);
}

LC_TEST(small_files_go_ahead_of_a_big_one)
{
	struct lc_dispenser *d = lc_dispenser_new(100);
	struct lc_block b[5];

	LC_CHECK(lc_dispenser_add(d, 1, devnull(), 0, 1000, NULL, NULL) == 0);
	take(d, &b[0], 1, 0);
	LC_CHECK(lc_dispenser_add(d, 2, devnull(), 0, 50, NULL, NULL) == 0);
	LC_CHECK(lc_dispenser_add(d, 3, devnull(), 0, 250, NULL, NULL) == 0);
	LC_CHECK(lc_dispenser_add(d, 4, devnull(), 0, 100, NULL, NULL) == 0);
	lc_dispenser_finish(d);
	take(d, &b[1], 2, 0); /* one block: ahead of 1 */
	take(d, &b[2], 4, 0); /* so is 4, but not 3 (three blocks) */
	take(d, &b[3], 1, 100);
	for (int i = 0; i < 4; i++)
		lc_dispenser_release(d, &b[i]);
	drain(d);
}

/*
 * A stream sent 1@0, 2@0, 1@100; the sink got 2@0 last.  1@100 was sent
 * after it, so it is resent although (1, 100) is before (2, 0).
 */
LC_TEST(after_the_last_block_in_sending_order)
{
	struct lc_dispenser *d = three_files();
	struct lc_sent l = { 0 };
	struct lc_block b2, b3, b;

	take(d, &b2, 2, 0);
	take(d, &b3, 3, 0);
	lc_dispenser_release(d, &b3);
	take(d, &b, 1, 0);
	LC_CHECK(lc_sent_keep(&l, &b) == 0);
	LC_CHECK(lc_sent_keep(&l, &b2) == 0);
	take(d, &b, 1, 100);
	LC_CHECK(lc_sent_keep(&l, &b) == 0);
	LC_CHECK_EQ_U(lc_sent_arrived(&l, 1, 2, 0), 2);
	LC_CHECK_EQ_U(lc_sent_arrived(&l, 1, 1, 0), 1);
	lc_sent_release_all(&l, d);
	LC_CHECK_EQ_U(l.n, 0);
	drain(d);
}

LC_TEST(markers_tell_what_arrived)
{
	struct lc_dispenser *d = three_files();
	struct lc_sent l = { 0 };
	struct lc_block b;

	take(d, &b, 2, 0);
	LC_CHECK(lc_sent_keep(&l, &b) == 0);
	take(d, &b, 3, 0);
	LC_CHECK(lc_sent_keep(&l, &b) == 0);
	take(d, &b, 1, 0);
	LC_CHECK(lc_sent_keep(&l, &b) == 0);
	take(d, &b, 1, 100);
	LC_CHECK(lc_sent_keep(&l, &b) == 0);
	take(d, &b, 1, 200);
	LC_CHECK(lc_sent_keep(&l, &b) == 0);
	/* the sink got the stream up to 1@100 */
	LC_CHECK_EQ_U(lc_sent_arrived(&l, 1, 1, 100), 4);
	LC_CHECK_EQ_U(lc_sent_arrived(&l, 0, 1, 100), 0);
	/* file 1 on disk up to 200: 1@0 and 1@100 go, as markers */
	lc_sent_ack(&l, d, 1, 200);
	LC_CHECK_EQ_U(l.n, 5);
	LC_CHECK(!l.v[0].gone && !l.v[1].gone && l.v[2].gone && l.v[3].gone &&
	    !l.v[4].gone);
	/* the old (file id, offset) rule would resend 2@0 and 3@0 here */
	LC_CHECK_EQ_U(lc_sent_arrived(&l, 1, 1, 100), 4);
	/* all of files 1 and 2 on disk: 2@0 goes (nothing kept was sent
	 * before it), 1@200 becomes a marker behind the kept 3@0 */
	lc_sent_ack(&l, d, 2, 50);
	LC_CHECK_EQ_U(l.n, 4);
	LC_CHECK_EQ_U(l.v[0].file_id, 3);
	LC_CHECK(!l.v[0].gone && l.v[1].gone && l.v[2].gone && l.v[3].gone);
	LC_CHECK_EQ_U(lc_sent_arrived(&l, 1, 1, 200), 4);
	/* a block no longer listed was sent before all of them */
	LC_CHECK_EQ_U(lc_sent_arrived(&l, 1, 2, 0), 0);
	lc_sent_ack(&l, d, 3, 100);
	LC_CHECK_EQ_U(l.n, 0);
	lc_sent_release_all(&l, d);
	drain(d);
}

LC_TEST_MAIN()
