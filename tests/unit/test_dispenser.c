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
	LC_CHECK(lc_dispenser_add(d, 7, devnull(), 0, 1050, NULL, NULL) == 0);
	lc_dispenser_finish(d);
	while (lc_dispenser_next(d, &b, NULL, -1) == 1) {
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

	LC_CHECK(lc_dispenser_add(d, 1, devnull(), 10, 10, NULL, NULL) == 0);	/* empty */
	LC_CHECK(lc_dispenser_add(d, 2, devnull(), 100, 130, NULL, NULL) == 0);
	lc_dispenser_finish(d);
	LC_CHECK(lc_dispenser_next(d, &b, NULL, -1) == 1);
	LC_CHECK_EQ_U(b.file_id, 2);
	LC_CHECK_EQ_U(b.offset, 100);
	LC_CHECK_EQ_U(b.len, 30);
	lc_dispenser_release(d, &b);
	LC_CHECK(lc_dispenser_next(d, &b, NULL, -1) == 0);
	LC_CHECK(lc_dispenser_add(d, 3, devnull(), 0, 5, NULL, NULL) ==
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
	while ((r = lc_dispenser_next(t->d, &b, NULL, -1)) == 1) {
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
		    (uint64_t)f * 100000, NULL, NULL) == 0);
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

LC_TEST(next_returns_0_only_after_every_release)
{
	struct lc_dispenser *d = lc_dispenser_new(10);
	struct lc_block a, b, c, x;

	LC_CHECK(lc_dispenser_add(d, 1, devnull(), 0, 30, NULL, NULL) == 0);
	lc_dispenser_finish(d);
	LC_CHECK(lc_dispenser_next(d, &a, NULL, -1) == 1);
	LC_CHECK(lc_dispenser_next(d, &b, NULL, -1) == 1);
	LC_CHECK(lc_dispenser_next(d, &c, NULL, -1) == 1);
	/* all handed out, but a block is still outstanding: keep waiting */
	LC_CHECK(lc_dispenser_next(d, &x, NULL, 50) == -LC_ERR_TIMEOUT);
	lc_dispenser_release(d, &a);
	lc_dispenser_release(d, &b);
	LC_CHECK(lc_dispenser_next(d, &x, NULL, 50) == -LC_ERR_TIMEOUT);
	lc_dispenser_release(d, &c);
	/* all handed out and released: done */
	LC_CHECK(lc_dispenser_next(d, &x, NULL, -1) == 0);
	LC_CHECK_EQ_U(lc_dispenser_dispensed(d), 30);
	lc_dispenser_free(d);
}

struct hasher {
	struct lc_dispenser *d;
	int done;
	char sum[LC_CSUM_TEXT_MAX];
};

static void *
hash_all(void *arg)
{
	struct hasher *h = arg;
	struct lc_block b;
	uint8_t buf[4096];
	int done;

	while (lc_dispenser_next(h->d, &b, NULL, -1) == 1) {
		for (uint32_t i = 0; i < b.len; i++)
			buf[i] = (uint8_t)(b.offset + i);
		if (rand() % 3 == 0)
			usleep(200);
		if (lc_dispenser_hash(h->d, &b, buf, &done, h->sum) != 0)
			exit(4);
		h->done += done;
		lc_dispenser_release(h->d, &b);
	}
	return NULL;
}

LC_TEST(checksum_is_fed_in_order_across_threads)
{
	struct lc_dispenser *d = lc_dispenser_new(1000);
	struct lc_csum *seed = lc_csum_new(LC_CSUM_SHA256), *ref;
	struct hasher h[4];
	pthread_t th[4];
	char want[LC_CSUM_TEXT_MAX], got[LC_CSUM_TEXT_MAX] = "";
	uint8_t byte;
	int done = 0;

	/* the first 500 bytes were "resumed": the seed covers them */
	ref = lc_csum_new(LC_CSUM_SHA256);
	for (uint32_t i = 0; i < 20500; i++) {
		byte = (uint8_t)i;
		lc_csum_update(ref, &byte, 1);
		if (i < 500)
			lc_csum_update(seed, &byte, 1);
	}
	lc_csum_text(ref, want);
	memset(h, 0, sizeof(h));
	LC_CHECK(lc_dispenser_add(d, 1, devnull(), 500, 20500, seed,
	    NULL) == 0);
	lc_dispenser_finish(d);
	for (int i = 0; i < 4; i++) {
		h[i].d = d;
		pthread_create(&th[i], NULL, hash_all, &h[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		if (h[i].done) {
			done += h[i].done;
			memcpy(got, h[i].sum, sizeof(got));
		}
	}
	LC_CHECK_EQ_I(done, 1);
	LC_CHECK_STR(got, want);
	lc_csum_free(ref);
	lc_dispenser_free(d);
}

LC_TEST(empty_range_gives_checksum_at_once)
{
	struct lc_dispenser *d = lc_dispenser_new(1000);
	char sum[LC_CSUM_TEXT_MAX];

	LC_CHECK(lc_dispenser_add(d, 1, devnull(), 0, 0,
	    lc_csum_new(LC_CSUM_CRC32), sum) == 0);
	LC_CHECK_STR(sum, "crc32:00000000");
	lc_dispenser_free(d);
}

LC_TEST_MAIN()
