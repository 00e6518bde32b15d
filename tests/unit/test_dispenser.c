#include "harness.h"

#include "dispenser.h"
#include "err.h"

#include "wire.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Sparse files. */

static uint8_t
pat(uint64_t off)
{
	return (uint8_t)((off * 2654435761u) >> 13) | 1;	/* never 0 */
}

/* A temp file of size bytes with data at the given runs, holes between. */
static int
sparse_file(uint64_t size, const uint64_t (*runs)[2], int nruns)
{
	char path[] = "/tmp/lc-disp-XXXXXX";
	uint8_t buf[4096];
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	unlink(path);
	if (ftruncate(fd, (off_t)size) != 0) {
		close(fd);
		return -1;
	}
	for (int i = 0; i < nruns; i++) {
		for (uint64_t o = runs[i][0]; o < runs[i][1]; ) {
			size_t n = runs[i][1] - o < sizeof(buf) ?
			    (size_t)(runs[i][1] - o) : sizeof(buf);
			for (size_t j = 0; j < n; j++)
				buf[j] = pat(o + j);
			if (pwrite(fd, buf, n, (off_t)o) != (ssize_t)n) {
				close(fd);
				return -1;
			}
			o += n;
		}
	}
	return fd;
}

/* Does this file system report holes?  (A leading hole of 1 MiB.) */
static int
fs_has_holes(void)
{
	static const uint64_t runs[][2] = { { 1 << 20, (1 << 20) + 4096 } };
	int fd = sparse_file(2 << 20, runs, 1), yes;

	if (fd < 0)
		return 0;
	yes = lseek(fd, 0, SEEK_DATA) == 1 << 20;
	close(fd);
	return yes;
}

struct walk {
	uint64_t covered;	/* bytes, in order from start */
	uint64_t holes;		/* bytes in hole blocks */
	uint32_t nblocks, nholes, ndata;
	int order_ok;		/* contiguous, ascending */
	int content_ok;		/* holes read as zeros */
	int short_hole;		/* a hole < LC_HOLE_MIN not at the end */
	uint32_t max_data;
};

/* Take every block of file id (fd dup'ed), check coverage. */
static void
walk_file(int fd, uint32_t block, uint64_t start, uint64_t end,
    struct walk *w)
{
	struct lc_dispenser *d = lc_dispenser_new(block);
	struct lc_block b;
	static uint8_t buf[1 << 16];
	uint64_t next = start;

	memset(w, 0, sizeof(*w));
	w->order_ok = w->content_ok = 1;
	LC_CHECK(d != NULL);
	LC_CHECK(lc_dispenser_add(d, 5, dup(fd), start, end, NULL, NULL) ==
	    0);
	lc_dispenser_finish(d);
	while (lc_dispenser_next(d, &b, NULL, -1) == 1) {
		if (b.file_id != 5 || b.offset != next || b.len == 0)
			w->order_ok = 0;
		next = b.offset + b.len;
		w->nblocks++;
		if (b.hole) {
			w->nholes++;
			w->holes += b.len;
			if (b.len > LC_MAX_HOLE)
				w->order_ok = 0;
			if (b.len < LC_HOLE_MIN && next != end)
				w->short_hole = 1;
			/* spot-check: the hole reads as zeros */
			size_t n = b.len < sizeof(buf) ? b.len : sizeof(buf);
			if (pread(fd, buf, n, (off_t)b.offset) != (ssize_t)n)
				w->content_ok = 0;
			for (size_t i = 0; i < n; i++)
				if (buf[i] != 0)
					w->content_ok = 0;
		} else {
			w->ndata++;
			if (b.len > block)
				w->order_ok = 0;
			if (b.len > w->max_data)
				w->max_data = b.len;
		}
		lc_dispenser_release(d, &b);
	}
	w->covered = next - start;
	LC_CHECK_EQ_U(lc_dispenser_dispensed(d), end - start);
	lc_dispenser_free(d);
}

LC_TEST(sparse_file_blocks_cover_it_with_holes)
{
	enum { MiB = 1 << 20 };
	static const uint64_t runs[][2] = {
		{ 0, 4096 },
		{ 3 * MiB, 3 * MiB + 200 * 1024 },
		/* a 32 KiB hole between these two: sent as data */
		{ 5 * MiB, 5 * MiB + 8192 },
		{ 5 * MiB + 40960, 5 * MiB + 49152 },
		{ 8 * MiB - 4096, 8 * MiB },
	};
	struct walk w;
	uint64_t data = 0;
	int fd;

	if (!fs_has_holes())
		LC_SKIP("the file system does not report holes");
	fd = sparse_file(10 * MiB, runs, 5);	/* ends in a 2 MiB hole */
	LC_CHECK(fd >= 0);
	for (int i = 0; i < 5; i++)
		data += runs[i][1] - runs[i][0];
	walk_file(fd, 100 * 1024, 0, 10 * MiB, &w);
	LC_CHECK(w.order_ok);
	LC_CHECK(w.content_ok);
	LC_CHECK(!w.short_hole);
	LC_CHECK_EQ_U(w.covered, 10 * MiB);
	/* holes: before 3M, before 5M, before 8M-4K, after 8M */
	LC_CHECK_EQ_U(w.nholes, 4);
	/* the data runs, the short hole and file system rounding */
	LC_CHECK(10 * MiB - w.holes >= data);
	LC_CHECK(10 * MiB - w.holes <= data + 1 * MiB);
	LC_CHECK_EQ_U(w.max_data, 100 * 1024);

	/* resuming inside a hole, up to the middle of another */
	walk_file(fd, 100 * 1024, 1 * MiB, 9 * MiB - 10, &w);
	LC_CHECK(w.order_ok);
	LC_CHECK(w.content_ok);
	LC_CHECK_EQ_U(w.covered, 8 * MiB - 10);
	LC_CHECK(w.nholes >= 3);
	close(fd);
}

LC_TEST(long_holes_are_split_at_the_maximum)
{
	static const uint64_t runs[][2] = {
		{ 2ULL << 30, (2ULL << 30) + 4096 },
	};
	struct walk w;
	int fd;

	if (!fs_has_holes())
		LC_SKIP("the file system does not report holes");
	fd = sparse_file(3ULL << 30, runs, 1);
	if (fd < 0)
		LC_SKIP("cannot make a 3 GiB sparse file here");
	walk_file(fd, 1 << 20, 0, 3ULL << 30, &w);
	LC_CHECK(w.order_ok);
	LC_CHECK_EQ_U(w.covered, 3ULL << 30);
	LC_CHECK_EQ_U(w.ndata, 1);
	/* 1 GiB + 1 GiB before the data, 1 GiB - 4 KiB after it */
	LC_CHECK_EQ_U(w.nholes, 3);
	LC_CHECK_EQ_U(w.holes, (3ULL << 30) - 4096);
	close(fd);
}

LC_TEST(dense_file_gives_the_same_blocks)
{
	static const uint64_t runs[][2] = { { 0, 300 * 1024 + 7 } };
	struct lc_dispenser *d = lc_dispenser_new(100 * 1024);
	struct lc_block b;
	uint64_t expect = 0;
	int fd = sparse_file(300 * 1024 + 7, runs, 1);

	LC_CHECK(fd >= 0);
	LC_CHECK(lc_dispenser_add(d, 1, fd, 0, 300 * 1024 + 7, NULL, NULL) ==
	    0);
	lc_dispenser_finish(d);
	while (lc_dispenser_next(d, &b, NULL, -1) == 1) {
		LC_CHECK(!b.hole);
		LC_CHECK_EQ_U(b.offset, expect);
		LC_CHECK_EQ_U(b.len, expect + 100 * 1024 <= 300 * 1024 + 7 ?
		    100 * 1024 : 7);
		expect += b.len;
		lc_dispenser_release(d, &b);
	}
	LC_CHECK_EQ_U(expect, 300 * 1024 + 7);
	lc_dispenser_free(d);
}

LC_TEST(no_seek_data_means_all_data)
{
	struct walk w;
	int fds[2];

	/* a pipe: lseek fails with ESPIPE, so everything is data */
	LC_CHECK(pipe(fds) == 0);
	walk_file(fds[0], 64 * 1024, 0, 1 << 20, &w);
	LC_CHECK(w.order_ok);
	LC_CHECK_EQ_U(w.nholes, 0);
	LC_CHECK_EQ_U(w.ndata, 16);
	close(fds[0]);
	close(fds[1]);
}

LC_TEST(a_file_that_shrank_is_read_not_holed)
{
	static const uint64_t runs[][2] = { { 0, 4096 } };
	struct walk w;
	int fd = sparse_file(1 << 20, runs, 1);

	LC_CHECK(fd >= 0);
	LC_CHECK(ftruncate(fd, 4096) == 0);
	/* promised 1 MiB: what is missing must be data (the read fails) */
	walk_file(fd, 64 * 1024, 0, 1 << 20, &w);
	LC_CHECK(w.order_ok);
	LC_CHECK_EQ_U(w.nholes, 0);
	close(fd);
}

LC_TEST(hash_over_holes_is_the_hash_of_the_whole_file)
{
	enum { MiB = 1 << 20 };
	static const uint64_t runs[][2] = {
		{ 1 * MiB, 1 * MiB + 70000 },
		{ 4 * MiB - 5000, 4 * MiB + 5000 },
	};
	struct lc_dispenser *d = lc_dispenser_new(128 * 1024);
	struct lc_csum *ref = lc_csum_new(LC_CSUM_SHA256);
	char want[LC_CSUM_TEXT_MAX], got[LC_CSUM_TEXT_MAX] = "";
	static uint8_t buf[128 * 1024];
	struct lc_block b;
	int fd = sparse_file(6 * MiB + 3, runs, 2), done, ndone = 0, holes = 0;

	LC_CHECK(fd >= 0);
	for (uint64_t o = 0; o < 6 * MiB + 3; o += sizeof(buf)) {
		ssize_t n = pread(fd, buf, sizeof(buf), (off_t)o);
		LC_CHECK(n > 0);
		lc_csum_update(ref, buf, (size_t)n);
	}
	lc_csum_text(ref, want);
	LC_CHECK(lc_dispenser_add(d, 1, dup(fd), 0, 6 * MiB + 3,
	    lc_csum_new(LC_CSUM_SHA256), NULL) == 0);
	lc_dispenser_finish(d);
	while (lc_dispenser_next(d, &b, NULL, -1) == 1) {
		if (b.hole)
			holes++;
		else
			LC_CHECK(pread(fd, buf, b.len, (off_t)b.offset) ==
			    (ssize_t)b.len);
		LC_CHECK(lc_dispenser_hash(d, &b, b.hole ? NULL : buf, &done,
		    got) == 0);
		ndone += done;
		lc_dispenser_release(d, &b);
	}
	LC_CHECK_EQ_I(ndone, 1);
	LC_CHECK_STR(got, want);
	if (fs_has_holes())
		LC_CHECK(holes >= 2);
	lc_csum_free(ref);
	lc_dispenser_free(d);
	close(fd);
}

LC_TEST(try_small_takes_only_small_blocks)
{
	struct lc_dispenser *d = lc_dispenser_new(100);
	struct lc_block b;

	LC_CHECK(lc_dispenser_try_small(d, &b, NULL, 1000) == 0);  /* none */
	LC_CHECK(lc_dispenser_add(d, 1, devnull(), 0, 30, NULL, NULL) == 0);
	LC_CHECK(lc_dispenser_add(d, 2, devnull(), 0, 250, NULL, NULL) == 0);
	LC_CHECK(lc_dispenser_try_small(d, &b, NULL, 29) == 0);	/* 30 > 29 */
	LC_CHECK(lc_dispenser_try_small(d, &b, NULL, 30) == 1);
	LC_CHECK_EQ_U(b.file_id, 1);
	LC_CHECK_EQ_U(b.len, 30);
	lc_dispenser_release(d, &b);
	LC_CHECK(lc_dispenser_try_small(d, &b, NULL, 99) == 0);	/* 100 */
	LC_CHECK(lc_dispenser_next(d, &b, NULL, 0) == 1);
	LC_CHECK_EQ_U(b.file_id, 2);
	LC_CHECK_EQ_U(b.offset, 0);
	lc_dispenser_release(d, &b);
	LC_CHECK(lc_dispenser_try_small(d, &b, NULL, 100) == 1);
	LC_CHECK_EQ_U(b.offset, 100);
	lc_dispenser_release(d, &b);
	LC_CHECK(lc_dispenser_try_small(d, &b, NULL, 50) == 1);	/* last 50 */
	LC_CHECK_EQ_U(b.offset, 200);
	LC_CHECK_EQ_U(b.len, 50);
	lc_dispenser_release(d, &b);
	lc_dispenser_abort(d);
	LC_CHECK(lc_dispenser_try_small(d, &b, NULL, 50) == -LC_ERR_CANCELED);
	lc_dispenser_free(d);
}

LC_TEST_MAIN()

/*
 * Streams (issue 14): blocks come out as the reader pushes them, in
 * order, with their bytes; the reader gets no more than count buffers
 * until blocks are released; next waits for a stream that has nothing
 * ready (even after finish), and returns 0 only after its end.
 */
LC_TEST(stream_blocks_buffers_bounded_and_end)
{
	struct lc_dispenser *d = lc_dispenser_new(100);
	struct lc_dfile *f;
	struct lc_pbuf *p1, *p2, *p3;
	struct lc_block b1, b2, b3;
	int nomem;
	atomic_bool stop;

	atomic_init(&stop, false);
	LC_CHECK(lc_dispenser_add_pipe(d, 3, 2, &f) == 0);
	lc_dispenser_finish(d);
	/* nothing read yet: no block, even though finish was called */
	LC_CHECK_EQ_I(lc_dispenser_next(d, &b1, NULL, 0), -LC_ERR_TIMEOUT);
	LC_CHECK((p1 = lc_dispenser_pipe_buf(d, &stop, &nomem)) != NULL);
	LC_CHECK((p2 = lc_dispenser_pipe_buf(d, &stop, &nomem)) != NULL);
	memset(p1->data, 'a', 100);
	p1->len = 100;
	lc_dispenser_pipe_push(d, f, p1);
	memset(p2->data, 'b', 30);
	p2->len = 30;
	lc_dispenser_pipe_push(d, f, p2);
	/* both buffers are out: a third waits until stop says go away */
	atomic_store(&stop, true);
	LC_CHECK(lc_dispenser_pipe_buf(d, &stop, &nomem) == NULL);
	LC_CHECK_EQ_I(nomem, 0);
	atomic_store(&stop, false);
	LC_CHECK_EQ_I(lc_dispenser_next(d, &b1, NULL, -1), 1);
	LC_CHECK(b1.file_id == 3 && b1.offset == 0 && b1.len == 100 &&
	    b1.data != NULL && b1.data[99] == 'a' && b1.fd == -1);
	/* a small block: try_small takes it */
	LC_CHECK_EQ_I(lc_dispenser_try_small(d, &b2, NULL, 29), 0);
	LC_CHECK_EQ_I(lc_dispenser_try_small(d, &b2, NULL, 30), 1);
	LC_CHECK(b2.offset == 100 && b2.len == 30 && b2.data[0] == 'b');
	/* released: the buffer is the reader's again */
	lc_dispenser_release(d, &b1);
	LC_CHECK((p3 = lc_dispenser_pipe_buf(d, &stop, &nomem)) != NULL);
	p3->len = 7;
	memset(p3->data, 'c', 7);
	lc_dispenser_pipe_push(d, f, p3);
	lc_dispenser_pipe_end(d, f);
	LC_CHECK_EQ_I(lc_dispenser_next(d, &b3, NULL, -1), 1);
	LC_CHECK(b3.offset == 130 && b3.len == 7 && b3.data[6] == 'c');
	LC_CHECK_EQ_U(lc_dispenser_dispensed(d), 137);
	/* outstanding blocks: next waits for their release */
	LC_CHECK_EQ_I(lc_dispenser_next(d, &b1, NULL, 0), -LC_ERR_TIMEOUT);
	lc_dispenser_release(d, &b2);
	lc_dispenser_release(d, &b3);
	LC_CHECK_EQ_I(lc_dispenser_next(d, &b1, NULL, 0), 0);
	lc_dispenser_free(d);
}

/* An empty stream: ended before any block, next says done at once. */
LC_TEST(stream_empty)
{
	struct lc_dispenser *d = lc_dispenser_new(100);
	struct lc_dfile *f;
	struct lc_block b;

	LC_CHECK(lc_dispenser_add_pipe(d, 1, 4, &f) == 0);
	lc_dispenser_pipe_end(d, f);
	lc_dispenser_finish(d);
	LC_CHECK_EQ_I(lc_dispenser_next(d, &b, NULL, -1), 0);
	lc_dispenser_free(d);
}

LC_TEST(resume_spans_come_first_as_data_then_the_tail)
{
	struct lc_dispenser *d = lc_dispenser_new(100);
	struct lc_span sp[2] = { { 0, 150 }, { 300, 100 } };
	struct lc_csum *c = lc_csum_new(LC_CSUM_SHA256), *want;
	char sum[LC_CSUM_TEXT_MAX], ref[LC_CSUM_TEXT_MAX];
	uint64_t offs[] = { 0, 100, 300, 500 }, lens[] = { 100, 50, 100, 100 };
	char path[] = "/tmp/lc-disp-XXXXXX";
	uint8_t z[600];
	struct lc_block b;
	int fd, done, i = 0;

	/* a file that is all hole: the spans still go out as data */
	LC_CHECK((fd = mkstemp(path)) >= 0);
	unlink(path);
	LC_CHECK(ftruncate(fd, 600) == 0);
	memset(z, 0, sizeof(z));
	lc_csum_update(c, z, 500);	/* seeded with [0, start) */
	want = lc_csum_new(LC_CSUM_SHA256);
	lc_csum_update(want, z, 600);
	lc_csum_text(want, ref);
	LC_CHECK(lc_dispenser_add_spans(d, 4, fd, sp, 2, 500, 600, c,
	    sum) == 0);
	LC_CHECK_STR(sum, "");
	lc_dispenser_finish(d);
	while (lc_dispenser_next(d, &b, NULL, -1) == 1) {
		LC_CHECK(i < 4);
		LC_CHECK_EQ_U(b.offset, offs[i]);
		LC_CHECK_EQ_U(b.len, lens[i]);
		LC_CHECK_EQ_I(b.hole, 0);
		/* spans are below start: not fed again */
		LC_CHECK(lc_dispenser_hash(d, &b, z, &done, sum) == 0);
		LC_CHECK_EQ_I(done, i == 3);
		lc_dispenser_release(d, &b);
		i++;
	}
	LC_CHECK_EQ_I(i, 4);
	LC_CHECK_STR(sum, ref);
	LC_CHECK_EQ_U(lc_dispenser_dispensed(d), 350);
	lc_csum_free(want);
	lc_dispenser_free(d);
}

LC_TEST(resume_spans_without_a_tail)
{
	struct lc_dispenser *d = lc_dispenser_new(100);
	struct lc_span sp[1] = { { 200, 50 } };
	struct lc_csum *c = lc_csum_new(LC_CSUM_CRC32);
	char sum[LC_CSUM_TEXT_MAX];
	struct lc_block b;

	/* the whole file was there: the checksum is known at once */
	LC_CHECK(lc_dispenser_add_spans(d, 5, devnull(), sp, 1, 300, 300, c,
	    sum) == 0);
	LC_CHECK(sum[0] != '\0');
	lc_dispenser_finish(d);
	LC_CHECK(lc_dispenser_next(d, &b, NULL, -1) == 1);
	LC_CHECK_EQ_U(b.offset, 200);
	LC_CHECK_EQ_U(b.len, 50);
	lc_dispenser_release(d, &b);
	LC_CHECK(lc_dispenser_next(d, &b, NULL, -1) == 0);
	lc_dispenser_free(d);
}

/*
 * Following a part file (issue 25): a followed file hands out no block
 * that ends past its avail, unless it is the last one and avail is the
 * end; the files after it wait too (one order); set_avail only raises.
 */
LC_TEST(follow_hands_out_nothing_past_avail)
{
	struct lc_dispenser *d = lc_dispenser_new(100);
	struct lc_block b;
	uint64_t cur = 1, end = 1;

	LC_CHECK(lc_dispenser_add_follow(d, 1, devnull(), NULL, 0, 0, 250, 0,
	    NULL, NULL) == 0);
	LC_CHECK(lc_dispenser_add(d, 2, devnull(), 0, 10, NULL, NULL) == 0);
	LC_CHECK(lc_dispenser_next(d, &b, NULL, 0) == -LC_ERR_TIMEOUT);
	LC_CHECK(lc_dispenser_try_small(d, &b, NULL, 1000) == 0);
	LC_CHECK(lc_dispenser_set_avail(d, 1, 99, &cur, &end) == 1);
	LC_CHECK(lc_dispenser_next(d, &b, NULL, 0) == -LC_ERR_TIMEOUT);
	LC_CHECK(lc_dispenser_try_small(d, &b, NULL, 1000) == 0);
	LC_CHECK(lc_dispenser_set_avail(d, 1, 100, &cur, &end) == 1);
	LC_CHECK(lc_dispenser_next(d, &b, NULL, 0) == 1);
	LC_CHECK_EQ_U(b.file_id, 1);
	LC_CHECK_EQ_U(b.offset, 0);
	LC_CHECK_EQ_U(b.len, 100);
	LC_CHECK_EQ_U(b.zfill, 1);
	LC_CHECK_EQ_U(b.hole, 0);
	lc_dispenser_release(d, &b);
	LC_CHECK(lc_dispenser_next(d, &b, NULL, 0) == -LC_ERR_TIMEOUT);
	/* backwards, past the end: refused, nothing changes */
	LC_CHECK(lc_dispenser_set_avail(d, 1, 50, &cur, &end) ==
	    -LC_ERR_PROTO);
	LC_CHECK_EQ_U(cur, 100);
	LC_CHECK_EQ_U(end, 250);
	LC_CHECK(lc_dispenser_set_avail(d, 1, 251, &cur, &end) ==
	    -LC_ERR_PROTO);
	/* not followed, or unknown: nothing held */
	LC_CHECK(lc_dispenser_set_avail(d, 2, 5, &cur, &end) == 0);
	LC_CHECK(lc_dispenser_set_avail(d, 9, 5, &cur, &end) == 0);
	/* 240: the block [100, 200), not the short last one [200, 250) */
	LC_CHECK(lc_dispenser_set_avail(d, 1, 240, &cur, &end) == 1);
	LC_CHECK(lc_dispenser_try_small(d, &b, NULL, 100) == 1);
	LC_CHECK_EQ_U(b.offset, 100);
	LC_CHECK_EQ_U(b.len, 100);
	lc_dispenser_release(d, &b);
	LC_CHECK(lc_dispenser_next(d, &b, NULL, 0) == -LC_ERR_TIMEOUT);
	LC_CHECK(lc_dispenser_try_small(d, &b, NULL, 1000) == 0);
	LC_CHECK(lc_dispenser_set_avail(d, 1, 240, &cur, &end) == 1);
	LC_CHECK(lc_dispenser_set_avail(d, 1, 250, &cur, &end) == 1);
	LC_CHECK(lc_dispenser_next(d, &b, NULL, 0) == 1);
	LC_CHECK_EQ_U(b.file_id, 1);
	LC_CHECK_EQ_U(b.offset, 200);
	LC_CHECK_EQ_U(b.len, 50);
	lc_dispenser_release(d, &b);
	/* released entirely: a late avail finds nothing (no error) */
	LC_CHECK(lc_dispenser_set_avail(d, 1, 250, &cur, &end) == 0);
	lc_dispenser_finish(d);
	LC_CHECK(lc_dispenser_next(d, &b, NULL, 0) == 1);
	LC_CHECK_EQ_U(b.file_id, 2);
	LC_CHECK_EQ_U(b.zfill, 0);
	lc_dispenser_release(d, &b);
	LC_CHECK(lc_dispenser_next(d, &b, NULL, 0) == 0);
	lc_dispenser_free(d);
}

/* A followed file's avail given at the add; avail past the end is the end */
LC_TEST(follow_starts_at_the_avail_given)
{
	struct lc_dispenser *d = lc_dispenser_new(100);
	struct lc_block b;
	uint64_t cur, end;

	LC_CHECK(lc_dispenser_add_follow(d, 3, devnull(), NULL, 0, 0, 150,
	    150, NULL, NULL) == 0);
	LC_CHECK(lc_dispenser_add_follow(d, 4, devnull(), NULL, 0, 0, 150,
	    120, NULL, NULL) == 0);
	lc_dispenser_finish(d);
	LC_CHECK(lc_dispenser_next(d, &b, NULL, 0) == 1);
	LC_CHECK_EQ_U(b.len, 100);
	lc_dispenser_release(d, &b);
	LC_CHECK(lc_dispenser_next(d, &b, NULL, 0) == 1);
	LC_CHECK_EQ_U(b.len, 50);
	lc_dispenser_release(d, &b);
	LC_CHECK(lc_dispenser_next(d, &b, NULL, 0) == 1);
	LC_CHECK_EQ_U(b.file_id, 4);
	lc_dispenser_release(d, &b);
	/* finished, but file 4's last block waits for its avail */
	LC_CHECK(lc_dispenser_next(d, &b, NULL, 0) == -LC_ERR_TIMEOUT);
	LC_CHECK(lc_dispenser_set_avail(d, 4, 150, &cur, &end) == 1);
	LC_CHECK(lc_dispenser_next(d, &b, NULL, 0) == 1);
	LC_CHECK_EQ_U(b.offset, 100);
	lc_dispenser_release(d, &b);
	LC_CHECK(lc_dispenser_next(d, &b, NULL, 0) == 0);
	lc_dispenser_free(d);
}

struct follow_waiter {
	struct lc_dispenser *d;
	struct lc_block b;
	atomic_int done;
	int r;
};

static void *
follow_wait(void *arg)
{
	struct follow_waiter *w = arg;

	w->r = lc_dispenser_next(w->d, &w->b, NULL, -1);
	atomic_store(&w->done, 1);
	return NULL;
}

/* A sender asleep on a followed file wakes when its avail moves. */
LC_TEST(follow_waiter_wakes_on_set_avail)
{
	struct follow_waiter w;
	pthread_t t;
	uint64_t cur, end;

	memset(&w, 0, sizeof(w));
	w.d = lc_dispenser_new(100);
	atomic_init(&w.done, 0);
	LC_CHECK(lc_dispenser_add_follow(w.d, 1, devnull(), NULL, 0, 0, 300,
	    0, NULL, NULL) == 0);
	LC_CHECK(pthread_create(&t, NULL, follow_wait, &w) == 0);
	usleep(100 * 1000);
	LC_CHECK_EQ_I(atomic_load(&w.done), 0);
	LC_CHECK(lc_dispenser_set_avail(w.d, 1, 150, &cur, &end) == 1);
	pthread_join(t, NULL);
	LC_CHECK_EQ_I(w.r, 1);
	LC_CHECK_EQ_U(w.b.offset, 0);
	LC_CHECK_EQ_U(w.b.len, 100);
	lc_dispenser_release(w.d, &w.b);
	lc_dispenser_abort(w.d);
	lc_dispenser_free(w.d);
}

/*
 * A followed file is not probed for holes: its unwritten tail reads as
 * one, so a sparse file followed goes out as data, every block whole.
 */
LC_TEST(follow_is_not_probed_for_holes)
{
	enum { MiB = 1 << 20 };
	static const uint64_t runs[][2] = { { 0, 4096 },
		{ 3 * MiB, 3 * MiB + 4096 } };
	struct lc_dispenser *d;
	struct lc_block b;
	uint64_t next = 0;
	int fd, holes = 0;

	if (!fs_has_holes()) {
		printf("skip: no SEEK_DATA holes in /tmp\n");
		return;
	}
	fd = sparse_file(4 * MiB, runs, 2);
	LC_CHECK(fd >= 0);
	d = lc_dispenser_new(MiB);
	LC_CHECK(lc_dispenser_add_follow(d, 1, fd, NULL, 0, 0, 4 * MiB,
	    4 * MiB, NULL, NULL) == 0);
	lc_dispenser_finish(d);
	while (lc_dispenser_next(d, &b, NULL, 0) == 1) {
		LC_CHECK_EQ_U(b.offset, next);
		LC_CHECK_EQ_U(b.len, MiB);
		LC_CHECK_EQ_U(b.zfill, 1);
		holes += b.hole;
		next += b.len;
		lc_dispenser_release(d, &b);
	}
	LC_CHECK_EQ_U(next, 4 * MiB);
	LC_CHECK_EQ_I(holes, 0);
	lc_dispenser_free(d);
}
