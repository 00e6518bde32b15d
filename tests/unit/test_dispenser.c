#include "harness.h"

#include "lanecp/dispenser.h"
#include "lanecp/err.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>

static int
devnull(void)
{
	return open("/dev/null", O_RDONLY);
}

LC_TEST(blocks_cover_file_in_order)
{
	struct lc_dispenser *d = lc_dispenser_new(100);
	struct lc_block b;
	uint64_t expect = 0;
	int n = 0;

	LC_CHECK(d != NULL);
	LC_CHECK(lc_dispenser_add(d, 7, devnull(), 0, 1050) == 0);
	lc_dispenser_finish(d);
	while (lc_dispenser_next(d, &b) == 1) {
		LC_CHECK_EQ_U(b.file_id, 7);
		LC_CHECK_EQ_U(b.offset, expect);
		LC_CHECK_EQ_U(b.len, expect + 100 <= 1050 ? 100 : 50);
		expect += b.len;
		n++;
		lc_dispenser_release(d, &b);
	}
	LC_CHECK_EQ_U(expect, 1050);
	LC_CHECK_EQ_I(n, 11);
	LC_CHECK_EQ_U(lc_dispenser_dispensed(d), 1050);
	lc_dispenser_free(d);
}

LC_TEST(resume_start_and_empty_files)
{
	struct lc_dispenser *d = lc_dispenser_new(64);
	struct lc_block b;

	LC_CHECK(lc_dispenser_add(d, 1, devnull(), 10, 10) == 0);	/* empty */
	LC_CHECK(lc_dispenser_add(d, 2, devnull(), 100, 130) == 0);
	lc_dispenser_finish(d);
	LC_CHECK(lc_dispenser_next(d, &b) == 1);
	LC_CHECK_EQ_U(b.file_id, 2);
	LC_CHECK_EQ_U(b.offset, 100);
	LC_CHECK_EQ_U(b.len, 30);
	lc_dispenser_release(d, &b);
	LC_CHECK(lc_dispenser_next(d, &b) == 0);
	LC_CHECK(lc_dispenser_add(d, 3, devnull(), 0, 5) ==
	    -LC_ERR_INTERNAL);	/* after finish */
	lc_dispenser_free(d);
}

struct taker {
	struct lc_dispenser *d;
	uint64_t bytes;
	int monotonic;
	int result;
};

static void *
take_all(void *arg)
{
	struct taker *t = arg;
	struct lc_block b;
	uint32_t last_file = 0;
	uint64_t last_off = 0;
	int r;

	t->monotonic = 1;
	while ((r = lc_dispenser_next(t->d, &b)) == 1) {
		if (b.file_id < last_file ||
		    (b.file_id == last_file && b.offset < last_off))
			t->monotonic = 0;
		last_file = b.file_id;
		last_off = b.offset;
		t->bytes += b.len;
		lc_dispenser_release(t->d, &b);
	}
	t->result = r;
	return NULL;
}

LC_TEST(threads_share_blocks_each_in_increasing_order)
{
	struct lc_dispenser *d = lc_dispenser_new(4096);
	struct taker t[8];
	pthread_t th[8];
	uint64_t total = 0;

	memset(t, 0, sizeof(t));
	for (int i = 0; i < 8; i++) {
		t[i].d = d;
		pthread_create(&th[i], NULL, take_all, &t[i]);
	}
	/* files arrive while the threads wait */
	for (uint32_t f = 1; f <= 20; f++)
		LC_CHECK(lc_dispenser_add(d, f, devnull(), 0,
		    (uint64_t)f * 100000) == 0);
	lc_dispenser_finish(d);
	for (int i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		LC_CHECK(t[i].monotonic);
		LC_CHECK_EQ_I(t[i].result, 0);
		total += t[i].bytes;
	}
	LC_CHECK_EQ_U(total, 100000ULL * 210);
	lc_dispenser_free(d);
}

LC_TEST(abort_wakes_waiters)
{
	struct lc_dispenser *d = lc_dispenser_new(4096);
	struct taker t;
	pthread_t th;

	memset(&t, 0, sizeof(t));
	t.d = d;
	pthread_create(&th, NULL, take_all, &t);
	usleep(50000);
	lc_dispenser_abort(d);
	pthread_join(th, NULL);
	LC_CHECK_EQ_I(t.result, -LC_ERR_CANCELED);
	lc_dispenser_free(d);
}

LC_TEST_MAIN()
