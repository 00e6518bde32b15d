#include "harness.h"

#include "checksum.h"
#include "err.h"
#include "wire.h"
#include "writer.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>

static char tmpl[] = "/tmp/lc-writer-XXXXXX";

/*
 * A counting hook on the block buffers, independent of the pool's own
 * bookkeeping: this executable is linked with -Wl,--wrap=posix_memalign
 * and --wrap=free (tests/CMakeLists.txt), so every page-aligned buffer
 * the writer allocates is seen here, with the peak number alive at once.
 */
int __real_posix_memalign(void **mem, size_t align, size_t size);
void __real_free(void *p);
int __wrap_posix_memalign(void **mem, size_t align, size_t size);
void __wrap_free(void *p);

enum { HOOK_MAX = 4096 };
static pthread_mutex_t hook_mu = PTHREAD_MUTEX_INITIALIZER;
static void *hook_live[HOOK_MAX];
static size_t hook_nlive, hook_peak;

int
__wrap_posix_memalign(void **mem, size_t align, size_t size)
{
	int r = __real_posix_memalign(mem, align, size);

	if (r != 0)
		return r;
	pthread_mutex_lock(&hook_mu);
	if (hook_nlive == HOOK_MAX) {
		fprintf(stderr, "allocation hook: more than %d buffers\n",
		    HOOK_MAX);
		abort();
	}
	hook_live[hook_nlive++] = *mem;
	if (hook_nlive > hook_peak)
		hook_peak = hook_nlive;
	pthread_mutex_unlock(&hook_mu);
	return 0;
}

void
__wrap_free(void *p)
{
	if (p != NULL) {
		pthread_mutex_lock(&hook_mu);
		for (size_t i = 0; i < hook_nlive; i++) {
			if (hook_live[i] == p) {
				hook_live[i] = hook_live[--hook_nlive];
				break;
			}
		}
		pthread_mutex_unlock(&hook_mu);
	}
	__real_free(p);
}

/* Restart the peak count from the buffers alive now. */
static void
hook_reset(void)
{
	pthread_mutex_lock(&hook_mu);
	hook_peak = hook_nlive;
	pthread_mutex_unlock(&hook_mu);
}

static size_t
hook_peak_now(void)
{
	size_t n;

	pthread_mutex_lock(&hook_mu);
	n = hook_peak;
	pthread_mutex_unlock(&hook_mu);
	return n;
}

static int
tmpfile_fd(void)
{
	char p[sizeof(tmpl)];
	int fd;

	memcpy(p, tmpl, sizeof(tmpl));
	fd = mkstemp(p);
	unlink(p);
	return fd;
}

static uint8_t
pattern(uint64_t off)
{
	return (uint8_t)((off * 2654435761u) >> 13);
}

static struct lc_wbuf *
fill(struct lc_pool *p, uint64_t off, uint32_t len)
{
	struct lc_wbuf *b = lc_pool_get(p);

	b->off = off;
	b->len = len;
	for (uint32_t i = 0; i < len; i++)
		b->data[i] = pattern(off + i);
	return b;
}

static void
check_file(int fd, uint64_t size)
{
	struct stat st;
	uint8_t buf[4096];

	LC_CHECK(fstat(fd, &st) == 0);
	LC_CHECK_EQ_U(st.st_size, size);
	for (uint64_t off = 0; off < size; off += sizeof(buf)) {
		size_t n = size - off < sizeof(buf) ? size - off : sizeof(buf);
		LC_CHECK(pread(fd, buf, n, (off_t)off) == (ssize_t)n);
		for (size_t i = 0; i < n; i++)
			LC_CHECK(buf[i] == pattern(off + i));
	}
}

LC_TEST(shuffled_blocks_are_written_in_order_as_a_prefix)
{
	enum { NB = 64, BS = 1000 };
	struct lc_pool *pool;
	struct lc_wfile *w;
	int order[NB], fd = tmpfile_fd(), complete, ncomplete = 0;
	struct stat st;

	LC_CHECK(lc_pool_new(NB, BS, &pool) == 0);
	LC_CHECK(lc_wfile_new(fd, 1, 0, NB * BS - 500, "t", &w) == 0);
	for (int i = 0; i < NB; i++)
		order[i] = i;
	srand(42);
	for (int i = NB - 1; i > 0; i--) {
		int j = rand() % (i + 1), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (int i = 0; i < NB; i++) {
		uint64_t off = (uint64_t)order[i] * BS;
		uint32_t len = order[i] == NB - 1 ? BS - 500 : BS;
		LC_CHECK(lc_wfile_submit(w, fill(pool, off, len), &complete,
		    NULL) == 0);
		ncomplete += complete;
		/* what is on disk is always exactly the written prefix */
		LC_CHECK(fstat(fd, &st) == 0);
		LC_CHECK_EQ_U((uint64_t)st.st_size, lc_wfile_written(w));
	}
	LC_CHECK_EQ_I(ncomplete, 1);
	check_file(fd, NB * BS - 500);
	lc_wfile_free(w);
	LC_CHECK(lc_pool_allocated(pool) <= NB);	/* reused as written */
	lc_pool_free(pool);
	close(fd);
}

/* The sink's bytes written: counted once on disk, never before. */
LC_TEST(the_counter_has_what_reached_the_file)
{
	enum { BS = 1000 };
	struct lc_pool *pool;
	struct lc_wfile *w;
	atomic_uint_fast64_t count;
	int fd = tmpfile_fd(), complete;
	struct stat st;
	static const int order[] = { 2, 0, 3, 1, 4 };

	atomic_init(&count, 0);
	LC_CHECK(lc_pool_new(8, BS, &pool) == 0);
	LC_CHECK(lc_wfile_new(fd, 1, 0, 5 * BS, "t", &w) == 0);
	lc_wfile_set_counter(w, &count);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		LC_CHECK(lc_wfile_submit(w, fill(pool, (uint64_t)order[i] * BS,
		    BS), &complete, NULL) == 0);
		LC_CHECK(fstat(fd, &st) == 0);
		LC_CHECK_EQ_U((uint64_t)st.st_size, atomic_load(&count));
	}
	LC_CHECK_EQ_U(atomic_load(&count), 5 * BS);
	lc_wfile_free(w);
	lc_pool_free(pool);
	close(fd);
}

LC_TEST(bad_blocks_are_rejected)
{
	struct lc_pool *pool;
	struct lc_wfile *w;
	int fd = tmpfile_fd(), complete;

	LC_CHECK(lc_pool_new(8, 100, &pool) == 0);
	LC_CHECK(lc_wfile_new(fd, 1, 0, 250, "t", &w) == 0);
	LC_CHECK(lc_wfile_submit(w, fill(pool, 100, 100), &complete,
	    NULL) == 0);
	/* overlaps the waiting block */
	LC_CHECK(lc_wfile_submit(w, fill(pool, 150, 100), &complete,
	    NULL) == -LC_ERR_PROTO);
	/* beyond the end */
	LC_CHECK(lc_wfile_submit(w, fill(pool, 200, 100), &complete,
	    NULL) == -LC_ERR_PROTO);
	LC_CHECK(lc_wfile_submit(w, fill(pool, 0, 100), &complete,
	    NULL) == 0);
	/* already written */
	LC_CHECK(lc_wfile_submit(w, fill(pool, 50, 10), &complete,
	    NULL) == -LC_ERR_PROTO);
	LC_CHECK(lc_wfile_submit(w, fill(pool, 200, 50), &complete,
	    NULL) == 0);
	LC_CHECK_EQ_I(complete, 1);
	check_file(fd, 250);
	lc_wfile_free(w);
	lc_pool_free(pool);
	close(fd);
}

LC_TEST(write_error_is_reported_and_sticks)
{
	struct lc_pool *pool;
	struct lc_wfile *w;
	int fd = open("/dev/full", O_WRONLY), complete;
	struct lc_err e;

	LC_CHECK(fd >= 0);
	lc_err_clear(&e);
	LC_CHECK(lc_pool_new(4, 100, &pool) == 0);
	LC_CHECK(lc_wfile_new(fd, 0, 0, 300, "/dev/full", &w) == 0);
	LC_CHECK(lc_wfile_submit(w, fill(pool, 0, 100), &complete, &e) ==
	    -LC_ERR_NOSPACE);
	LC_CHECK(strstr(e.msg, "/dev/full") != NULL);
	lc_err_clear(&e);
	LC_CHECK(lc_wfile_submit(w, fill(pool, 100, 100), &complete, &e) ==
	    -LC_ERR_NOSPACE);
	LC_CHECK(strstr(e.msg, "/dev/full") != NULL);
	lc_wfile_free(w);
	lc_pool_free(pool);
	close(fd);
}

/*
 * Streams with a quota of 2 buffers each, blocks dealt round-robin-ish
 * from one global order, receivers running concurrently: no deadlock, the
 * file comes out right, and the buffers ever alive at once (measured by
 * the allocation hook, not the pool's count) stay within streams x quota.
 */
struct stream_arg {
	struct lc_pool *pool;
	struct lc_wfile *w;
	uint64_t *offs;
	int n;
	int completes;
};

static void *
stream_main(void *arg)
{
	struct stream_arg *s = arg;
	int complete;

	for (int i = 0; i < s->n; i++) {
		struct lc_wbuf *b = fill(s->pool, s->offs[i], 512);
		if (lc_wfile_submit(s->w, b, &complete, NULL) != 0)
			exit(3);
		s->completes += complete;
		if (rand() % 4 == 0)
			usleep(100);
	}
	return NULL;
}

LC_TEST(quota_streams_do_not_deadlock)
{
	enum { NS = 8, NB = 4000 };
	static uint64_t offs[NS][NB];
	struct stream_arg a[NS];
	pthread_t th[NS];
	struct lc_wfile *w;
	int fd = tmpfile_fd(), total = 0, completes = 0;

	memset(a, 0, sizeof(a));
	LC_CHECK(lc_wfile_new(fd, 1, 0, (uint64_t)NB * 512, "t", &w) == 0);
	hook_reset();
	srand(7);
	for (int b = 0; b < NB; b++) {	/* global order, random stream */
		int s = rand() % NS;
		offs[s][a[s].n++] = (uint64_t)b * 512;
	}
	for (int s = 0; s < NS; s++) {
		LC_CHECK(lc_pool_new(2, 512, &a[s].pool) == 0);
		a[s].w = w;
		a[s].offs = offs[s];
		pthread_create(&th[s], NULL, stream_main, &a[s]);
	}
	for (int s = 0; s < NS; s++) {
		pthread_join(th[s], NULL);
		total += a[s].n;
		completes += a[s].completes;
	}
	fprintf(stderr, "peak: %zu block buffers alive\n", hook_peak_now());
	LC_CHECK(hook_peak_now() <= NS * 2);	/* streams x quota */
	LC_CHECK(hook_peak_now() >= NS);	/* the hook sees them at all */
	LC_CHECK_EQ_I(total, NB);
	LC_CHECK_EQ_I(completes, 1);
	check_file(fd, (uint64_t)NB * 512);
	lc_wfile_free(w);
	for (int s = 0; s < NS; s++)
		lc_pool_free(a[s].pool);
	close(fd);
}

/* Holes: expected content is zeros except the data block(s). */
static uint8_t
want_byte(uint64_t off, uint64_t dstart, uint64_t dend)
{
	return off >= dstart && off < dend ? pattern(off) : 0;
}

static void
check_sparse(int fd, uint64_t size, uint64_t dstart, uint64_t dend)
{
	struct stat st;
	static uint8_t buf[65536];

	LC_CHECK(fstat(fd, &st) == 0);
	LC_CHECK_EQ_U(st.st_size, size);
	for (uint64_t off = 0; off < size; off += sizeof(buf)) {
		size_t n = size - off < sizeof(buf) ? size - off : sizeof(buf);
		LC_CHECK(pread(fd, buf, n, (off_t)off) == (ssize_t)n);
		for (size_t i = 0; i < n; i++)
			LC_CHECK(buf[i] == want_byte(off + i, dstart, dend));
	}
}

static void
sum_of(uint64_t size, uint64_t dstart, uint64_t dend,
    char out[LC_CSUM_TEXT_MAX])
{
	struct lc_csum *c = lc_csum_new(LC_CSUM_SHA256);

	for (uint64_t off = 0; off < size; off++) {
		uint8_t v = want_byte(off, dstart, dend);
		lc_csum_update(c, &v, 1);
	}
	lc_csum_text(c, out);
	lc_csum_free(c);
}

LC_TEST(holes_are_skipped_and_a_trailing_hole_sets_the_size)
{
	enum { D0 = 100000, D1 = 150000, END = 300000 };
	struct lc_pool *pool;
	struct lc_wfile *w;
	struct lc_csum *c = lc_csum_new(LC_CSUM_SHA256);
	char want[LC_CSUM_TEXT_MAX], got[LC_CSUM_TEXT_MAX];
	int fd = tmpfile_fd(), complete, ncomplete = 0;
	struct stat st;

	LC_CHECK(lc_pool_new(4, 65536, &pool) == 0);
	LC_CHECK(lc_wfile_new(fd, 1, 0, END, "t", &w) == 0);
	lc_wfile_set_csum(w, c);
	/* data first (waits), then the leading hole, then the trailing one */
	LC_CHECK(lc_wfile_submit(w, fill(pool, D0, 50000), &complete,
	    NULL) == 0);
	ncomplete += complete;
	LC_CHECK_EQ_U(lc_wfile_written(w), 0);
	LC_CHECK(lc_wfile_submit_hole(w, 0, D0, &complete, NULL) == 0);
	ncomplete += complete;
	LC_CHECK_EQ_U(lc_wfile_written(w), D1);
	LC_CHECK(fstat(fd, &st) == 0);
	LC_CHECK_EQ_U(st.st_size, D1);
	LC_CHECK(lc_wfile_submit_hole(w, D1, END - D1, &complete, NULL) == 0);
	ncomplete += complete;
	LC_CHECK_EQ_I(ncomplete, 1);
	LC_CHECK_EQ_U(lc_wfile_written(w), END);
	check_sparse(fd, END, D0, D1);
	/* nothing was written for the holes (where the fs can tell) */
	if (lseek(fd, 0, SEEK_DATA) > 0)
		LC_CHECK(lseek(fd, D1 + 4096, SEEK_DATA) < 0);
	/* holes took no block buffer */
	LC_CHECK(lc_pool_allocated(pool) == 1);
	lc_csum_text(c, got);
	sum_of(END, D0, D1, want);
	LC_CHECK_STR(got, want);
	/* a hole overlapping data or out of range is refused */
	lc_wfile_free(w);
	LC_CHECK(lc_wfile_new(fd, 1, 0, 1000, "t", &w) == 0);
	LC_CHECK(lc_wfile_submit(w, fill(pool, 500, 100), &complete,
	    NULL) == 0);
	LC_CHECK(lc_wfile_submit_hole(w, 400, 101, &complete, NULL) ==
	    -LC_ERR_PROTO);
	LC_CHECK(lc_wfile_submit_hole(w, 600, 401, &complete, NULL) ==
	    -LC_ERR_PROTO);
	LC_CHECK(lc_wfile_submit_hole(w, 600, 0, &complete, NULL) ==
	    -LC_ERR_PROTO);
	lc_wfile_free(w);
	lc_pool_free(pool);
	lc_csum_free(c);
	close(fd);
}

struct drain_arg {
	int fd;
	uint64_t got;
	int ok;
	uint64_t dstart, dend;
};

static void *
drain_main(void *arg)
{
	struct drain_arg *a = arg;
	uint8_t buf[8192];
	ssize_t n;

	a->ok = 1;
	while ((n = read(a->fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] != want_byte(a->got + (uint64_t)i,
			    a->dstart, a->dend))
				a->ok = 0;
		a->got += (uint64_t)n;
	}
	return NULL;
}

LC_TEST(holes_become_zeros_on_a_pipe)
{
	enum { D0 = 200000, D1 = 200100, END = 500000 };
	struct lc_pool *pool;
	struct lc_wfile *w;
	struct drain_arg a;
	struct lc_csum *c = lc_csum_new(LC_CSUM_CRC32);
	char want[LC_CSUM_TEXT_MAX], got[LC_CSUM_TEXT_MAX];
	struct lc_csum *ref = lc_csum_new(LC_CSUM_CRC32);
	pthread_t th;
	int fds[2], complete, ncomplete = 0;

	LC_CHECK(pipe(fds) == 0);
	memset(&a, 0, sizeof(a));
	a.fd = fds[0];
	a.dstart = D0;
	a.dend = D1;
	pthread_create(&th, NULL, drain_main, &a);
	LC_CHECK(lc_pool_new(2, 4096, &pool) == 0);
	LC_CHECK(lc_wfile_new(fds[1], 0, 0, END, "pipe", &w) == 0);
	lc_wfile_set_csum(w, c);
	LC_CHECK(lc_wfile_submit_hole(w, D1, END - D1, &complete, NULL) == 0);
	ncomplete += complete;
	LC_CHECK(lc_wfile_submit(w, fill(pool, D0, D1 - D0), &complete,
	    NULL) == 0);
	ncomplete += complete;
	LC_CHECK(lc_wfile_submit_hole(w, 0, D0, &complete, NULL) == 0);
	ncomplete += complete;
	LC_CHECK_EQ_I(ncomplete, 1);
	close(fds[1]);
	pthread_join(th, NULL);
	LC_CHECK_EQ_U(a.got, END);
	LC_CHECK(a.ok);
	for (uint64_t off = 0; off < END; off++) {
		uint8_t v = want_byte(off, D0, D1);
		lc_csum_update(ref, &v, 1);
	}
	lc_csum_text(ref, want);
	lc_csum_text(c, got);
	LC_CHECK_STR(got, want);
	lc_wfile_free(w);
	lc_pool_free(pool);
	lc_csum_free(c);
	lc_csum_free(ref);
	close(fds[0]);
}

LC_TEST(waiting_holes_are_freed_with_the_writer)
{
	struct lc_wfile *w;
	int fd = tmpfile_fd(), complete;

	LC_CHECK(lc_wfile_new(fd, 1, 0, 1 << 20, "t", &w) == 0);
	/* these wait for [0, 4096), which never comes */
	LC_CHECK(lc_wfile_submit_hole(w, 4096, 65536, &complete, NULL) == 0);
	LC_CHECK(lc_wfile_submit_hole(w, 1 << 19, 1 << 19, &complete,
	    NULL) == 0);
	LC_CHECK_EQ_I(complete, 0);
	LC_CHECK_EQ_U(lc_wfile_written(w), 0);
	lc_wfile_free(w);
	close(fd);
}

LC_TEST(waiting_holes_are_bounded)
{
	struct lc_wfile *w;
	uint64_t end = (uint64_t)(LC_WFILE_MAX_HOLES + 1) * 10 + 100;
	int fd = tmpfile_fd(), complete, ncomplete = 0;

	LC_CHECK(lc_wfile_new(fd, 1, 0, end, "t", &w) == 0);
	/* every hole waits for [0, 100), a gap after each: none merges */
	for (uint64_t i = 0; i < LC_WFILE_MAX_HOLES; i++)
		LC_CHECK(lc_wfile_submit_hole(w, 100 + i * 10, 5, &complete,
		    NULL) == 0);
	/* one more is not taken (nothing done): its stream waits */
	LC_CHECK(lc_wfile_submit_hole(w, 100 + LC_WFILE_MAX_HOLES * 10, 5,
	    &complete, NULL) == 1);
	/* one that touches waiting holes merges, and so makes room */
	LC_CHECK(lc_wfile_submit_hole(w, 105, 5, &complete, NULL) == 0);
	LC_CHECK(lc_wfile_submit_hole(w, 100 + LC_WFILE_MAX_HOLES * 10, 5,
	    &complete, NULL) == 0);
	LC_CHECK(lc_wfile_submit_hole(w, 100 + (LC_WFILE_MAX_HOLES + 1) * 10,
	    5, &complete, NULL) == -LC_ERR_PROTO);	/* past the end */
	/* the one the writer can take is always let in */
	LC_CHECK(lc_wfile_submit_hole(w, 0, 100, &complete, NULL) == 0);
	LC_CHECK_EQ_U(lc_wfile_written(w), 115);
	for (uint64_t i = 1; i <= LC_WFILE_MAX_HOLES; i++) {
		LC_CHECK(lc_wfile_submit_hole(w, 105 + i * 10, 5, &complete,
		    NULL) == 0);
		ncomplete += complete;
	}
	LC_CHECK_EQ_I(ncomplete, 1);
	LC_CHECK_EQ_U(lc_wfile_written(w), end);
	check_sparse(fd, end, 0, 0);
	lc_wfile_free(w);
	close(fd);
}

/*
 * Waiting holes are charged to the budget they are given (the sink's
 * memory bound) and the charge comes back as they are written, merged or
 * freed; a spent budget makes a hole wait, except the one the writer
 * takes at once.  Holes that touch merge whatever order they come in.
 */
LC_TEST(waiting_holes_are_charged_and_merged)
{
	atomic_int_fast64_t budget;
	struct lc_wfile *w;
	int fd = tmpfile_fd(), complete;

	atomic_init(&budget, 2 * LC_WFILE_HOLE_COST + LC_WFILE_HOLE_COST / 2);
	LC_CHECK(lc_wfile_new(fd, 1, 0, 1000, "t", &w) == 0);
	lc_wfile_set_budget(w, &budget);
	LC_CHECK(lc_wfile_submit_hole(w, 100, 100, &complete, NULL) == 0);
	LC_CHECK(lc_wfile_submit_hole(w, 300, 100, &complete, NULL) == 0);
	LC_CHECK_EQ_I(atomic_load(&budget), LC_WFILE_HOLE_COST / 2);
	/* spent: a third one apart from the others waits */
	LC_CHECK(lc_wfile_submit_hole(w, 500, 100, &complete, NULL) == 1);
	/* one touching a waiting hole costs nothing: after, before, between */
	LC_CHECK(lc_wfile_submit_hole(w, 400, 50, &complete, NULL) == 0);
	LC_CHECK(lc_wfile_submit_hole(w, 80, 20, &complete, NULL) == 0);
	LC_CHECK_EQ_I(atomic_load(&budget), LC_WFILE_HOLE_COST / 2);
	LC_CHECK(lc_wfile_submit_hole(w, 200, 100, &complete, NULL) == 0);
	/* [80, 450) is one hole now: one charge given back */
	LC_CHECK_EQ_I(atomic_load(&budget), LC_WFILE_HOLE_COST +
	    LC_WFILE_HOLE_COST / 2);
	LC_CHECK(lc_wfile_submit_hole(w, 500, 100, &complete, NULL) == 0);
	LC_CHECK(lc_wfile_submit_hole(w, 700, 100, &complete, NULL) == 1);
	/* a hole overlapping a waiting one is refused, never merged */
	LC_CHECK(lc_wfile_submit_hole(w, 440, 20, &complete, NULL) ==
	    -LC_ERR_PROTO);
	/* at the writer's offset: taken at once, the waiting ones follow */
	LC_CHECK(lc_wfile_submit_hole(w, 0, 80, &complete, NULL) == 0);
	LC_CHECK_EQ_U(lc_wfile_written(w), 450);
	/* [80, 450) written: its charge is back; [500, 600) still waits */
	LC_CHECK_EQ_I(atomic_load(&budget), LC_WFILE_HOLE_COST +
	    LC_WFILE_HOLE_COST / 2);
	LC_CHECK(lc_wfile_submit_hole(w, 700, 100, &complete, NULL) == 0);
	LC_CHECK_EQ_I(atomic_load(&budget), LC_WFILE_HOLE_COST / 2);
	/* freed with the writer: every charge back */
	lc_wfile_free(w);
	LC_CHECK_EQ_I(atomic_load(&budget), 2 * LC_WFILE_HOLE_COST +
	    LC_WFILE_HOLE_COST / 2);
	close(fd);
}

/*
 * A closed writer writes nothing more: a block that comes later (through
 * a receiver's reference, after the file was finished or dropped) is a
 * protocol error, and its buffer goes back to the pool; so do the blocks
 * that were waiting.  The last reference frees it.
 */
LC_TEST(a_closed_writer_refuses_every_block)
{
	struct lc_pool *pool;
	struct lc_wfile *w, *held;
	struct lc_wbuf *b;
	struct lc_err e;
	struct stat st;
	int fd = tmpfile_fd(), complete;

	LC_CHECK(lc_pool_new(1, 100, &pool) == 0);
	LC_CHECK(lc_wfile_new(fd, 1, 0, 300, "t", &w) == 0);
	held = lc_wfile_ref(w);		/* a receiver's */
	LC_CHECK(lc_wfile_submit(w, fill(pool, 100, 100), &complete,
	    NULL) == 0);	/* waits for [0, 100) */
	LC_CHECK(lc_pool_get_timed(pool, 0) == NULL);	/* the quota is used */
	/* nothing written: FILE_ABORT may drop it (not if it were at 100) */
	LC_CHECK_EQ_I(lc_wfile_close_unwritten(w, 100), 0);
	LC_CHECK_EQ_I(lc_wfile_close_unwritten(w, 0), 1);
	lc_wfile_free(w);	/* the owner: the file is dropped */
	/* the waiting block's buffer is back */
	LC_CHECK_EQ_U(lc_pool_allocated(pool), 1);
	lc_err_clear(&e);
	LC_CHECK(lc_wfile_submit(held, fill(pool, 0, 100), &complete,
	    &e) == -LC_ERR_PROTO);
	LC_CHECK(strstr(e.msg, "no longer received (finished or dropped)") !=
	    NULL);
	LC_CHECK(lc_wfile_submit_hole(held, 200, 100, &complete, &e) ==
	    -LC_ERR_PROTO);
	LC_CHECK_EQ_I(complete, 0);
	LC_CHECK_EQ_U(lc_wfile_close(held), 0);	/* again: the same */
	LC_CHECK(fstat(fd, &st) == 0);
	LC_CHECK_EQ_U(st.st_size, 0);
	lc_wfile_unref(held);	/* the last: freed (ASan would see a leak) */
	LC_CHECK((b = lc_pool_get_timed(pool, 0)) != NULL);
	lc_pool_put(b);
	lc_pool_free(pool);
	close(fd);
}

struct t_drain {
	struct lc_wfile *w;
	struct lc_pool *pool;
	int r;
	uint64_t closed_at;
};

static void *
t_drain_submit(void *arg)
{
	struct t_drain *t = arg;
	int complete;

	t->r = lc_wfile_submit(t->w, fill(t->pool, 0, 100), &complete, NULL);
	return NULL;
}

static void *
t_drain_close(void *arg)
{
	struct t_drain *t = arg;

	t->closed_at = lc_wfile_close(t->w);
	return NULL;
}

/*
 * lc_wfile_close waits for a write in progress (the descriptor may be
 * closed right after it), and while a block is being written a second
 * block at its offset is refused, not queued behind it for ever.
 */
LC_TEST(close_waits_for_the_write_in_progress)
{
	struct t_drain t;
	pthread_t a, b;
	char junk[4096];
	int p[2], fl, complete;
	size_t total = 0;
	ssize_t n;

	memset(&t, 0, sizeof(t));
	LC_CHECK(pipe(p) == 0);
	/* a full pipe: the drainer's write blocks until we read */
	fl = fcntl(p[1], F_GETFL);
	LC_CHECK(fcntl(p[1], F_SETFL, fl | O_NONBLOCK) == 0);
	memset(junk, 0x5a, sizeof(junk));
	while ((n = write(p[1], junk, sizeof(junk))) > 0)
		total += (size_t)n;
	LC_CHECK(fcntl(p[1], F_SETFL, fl) == 0);
	LC_CHECK(lc_pool_new(4, 100, &t.pool) == 0);
	LC_CHECK(lc_wfile_new(p[1], 0, 0, 300, "t", &t.w) == 0);
	LC_CHECK_EQ_I(lc_wfile_starved(t.w), 1);
	LC_CHECK(pthread_create(&a, NULL, t_drain_submit, &t) == 0);
	/* the drainer is at work once the writer is no longer starved */
	while (lc_wfile_starved(t.w))
		(void)poll(NULL, 0, 1);
	LC_CHECK(lc_wfile_submit(t.w, fill(t.pool, 0, 100), &complete,
	    NULL) == -LC_ERR_PROTO);
	/* FILE_ABORT's close does not wait: a block is being written */
	LC_CHECK_EQ_I(lc_wfile_close_unwritten(t.w, 0), 0);
	LC_CHECK(pthread_create(&b, NULL, t_drain_close, &t) == 0);
	/* drain the pipe: the write ends, then the close returns */
	while (total > 0) {
		n = read(p[0], junk, sizeof(junk) < total ? sizeof(junk) :
		    total);
		LC_CHECK(n > 0);
		total -= (size_t)n;
	}
	LC_CHECK(read(p[0], junk, 100) == 100);
	LC_CHECK(pthread_join(a, NULL) == 0);
	LC_CHECK(pthread_join(b, NULL) == 0);
	LC_CHECK_EQ_I(t.r, 0);
	LC_CHECK_EQ_U(t.closed_at, 100);
	LC_CHECK(lc_wfile_submit(t.w, fill(t.pool, 100, 100), &complete,
	    NULL) == -LC_ERR_PROTO);
	lc_wfile_free(t.w);
	lc_pool_free(t.pool);
	close(p[0]);
	close(p[1]);
}

/*
 * A quota grows by a block at a time up to its max, lazily (nothing is
 * allocated until taken), and a waiter gets the new buffer; the writer is
 * "starved" exactly while the block at the written offset is missing.
 */
LC_TEST(quota_grows_and_the_writer_reports_starvation)
{
	struct lc_pool *pool;
	struct lc_wfile *w;
	struct lc_wbuf *a, *b;
	int fd = tmpfile_fd(), complete;

	LC_CHECK(lc_pool_new(1, 100, &pool) == 0);
	LC_CHECK(lc_wfile_new(fd, 1, 0, 300, "t", &w) == 0);
	LC_CHECK_EQ_I(lc_wfile_starved(w), 1);	/* nothing came yet */
	a = fill(pool, 100, 100);
	LC_CHECK(lc_pool_get_timed(pool, 0) == NULL);	/* quota of 1 used */
	LC_CHECK_EQ_U(lc_pool_allocated(pool), 1);
	LC_CHECK(lc_wfile_submit(w, a, &complete, NULL) == 0);
	LC_CHECK_EQ_I(lc_wfile_starved(w), 1);	/* 100 waits for 0 */
	LC_CHECK_EQ_I(lc_pool_grow(pool, 2), 1);
	LC_CHECK_EQ_U(lc_pool_quota(pool), 2);
	LC_CHECK_EQ_U(lc_pool_allocated(pool), 1);	/* lazily */
	LC_CHECK_EQ_I(lc_pool_grow(pool, 2), 0);	/* at its max */
	LC_CHECK((b = lc_pool_get_timed(pool, 0)) != NULL);
	LC_CHECK_EQ_U(lc_pool_allocated(pool), 2);
	b->off = 0;
	b->len = 100;
	memset(b->data, 0, 100);
	LC_CHECK(lc_wfile_submit(w, b, &complete, NULL) == 0);
	LC_CHECK_EQ_U(lc_wfile_written(w), 200);
	LC_CHECK_EQ_I(lc_wfile_starved(w), 1);	/* 200 not here */
	b = fill(pool, 200, 100);
	LC_CHECK(lc_wfile_submit(w, b, &complete, NULL) == 0);
	LC_CHECK_EQ_I(complete, 1);
	LC_CHECK_EQ_I(lc_wfile_starved(w), 0);	/* complete: nothing owed */
	lc_wfile_free(w);
	lc_pool_free(pool);
	close(fd);
}

LC_TEST_MAIN()

/*
 * Streams (issue 14): with an open end no submit completes the file;
 * the end is refused below what was written or is waiting, and accepted
 * once; the file completes either at lc_wfile_set_end (everything was
 * written) or at the submit that writes the last byte.
 */
LC_TEST(stream_end_comes_last)
{
	struct lc_pool *pool;
	struct lc_wfile *w;
	int fd = tmpfile_fd(), complete;

	LC_CHECK(lc_pool_new(8, 100, &pool) == 0);
	LC_CHECK(lc_wfile_new(fd, 1, 0, 1000, "t", &w) == 0);
	lc_wfile_open_end(w);
	LC_CHECK(lc_wfile_is_open(w) == 1);
	LC_CHECK(lc_wfile_submit(w, fill(pool, 0, 100), &complete,
	    NULL) == 0);
	LC_CHECK_EQ_I(complete, 0);
	/* one waiting at 200..300: no end before 300 */
	LC_CHECK(lc_wfile_submit(w, fill(pool, 200, 100), &complete,
	    NULL) == 0);
	LC_CHECK(lc_wfile_set_end(w, 99, &complete) == -LC_ERR_PROTO);
	LC_CHECK(lc_wfile_set_end(w, 250, &complete) == -LC_ERR_PROTO);
	LC_CHECK(lc_wfile_set_end(w, 1001, &complete) == -LC_ERR_PROTO);
	LC_CHECK(lc_wfile_set_end(w, 300, &complete) == 0);
	LC_CHECK_EQ_I(complete, 0);
	LC_CHECK(lc_wfile_is_open(w) == 0);
	LC_CHECK(lc_wfile_set_end(w, 300, &complete) == -LC_ERR_PROTO);
	/* the gap filled: this submit completes it */
	LC_CHECK(lc_wfile_submit(w, fill(pool, 100, 100), &complete,
	    NULL) == 0);
	LC_CHECK_EQ_I(complete, 1);
	check_file(fd, 300);
	lc_wfile_free(w);
	close(fd);

	/* everything written first: the end completes it */
	fd = tmpfile_fd();
	LC_CHECK(lc_wfile_new(fd, 1, 0, 1000, "t", &w) == 0);
	lc_wfile_open_end(w);
	LC_CHECK(lc_wfile_submit(w, fill(pool, 0, 100), &complete,
	    NULL) == 0);
	LC_CHECK_EQ_I(complete, 0);
	LC_CHECK(lc_wfile_set_end(w, 100, &complete) == 0);
	LC_CHECK_EQ_I(complete, 1);
	check_file(fd, 100);
	lc_wfile_free(w);
	close(fd);

	/* an empty stream */
	fd = tmpfile_fd();
	LC_CHECK(lc_wfile_new(fd, 1, 0, 1000, "t", &w) == 0);
	lc_wfile_open_end(w);
	LC_CHECK(lc_wfile_set_end(w, 0, &complete) == 0);
	LC_CHECK_EQ_I(complete, 1);
	lc_wfile_free(w);
	lc_pool_free(pool);
	close(fd);
}

LC_TEST(spans_are_rewritten_in_place_then_the_tail)
{
	enum { BS = 100 };
	struct lc_span sp[2] = { { 100, 200 }, { 500, 100 } };
	struct lc_span bad[2] = { { 100, 200 }, { 250, 100 } };
	uint8_t old[1000], buf[1000];
	struct lc_pool *pool;
	struct lc_wfile *w;
	int fd = tmpfile_fd(), complete, ncomplete = 0;

	/* a partial file of 700 bytes, all of it wrong, cut at 600 */
	memset(old, 0xee, sizeof(old));
	LC_CHECK(pwrite(fd, old, 600, 0) == 600);
	LC_CHECK(lc_pool_new(16, BS, &pool) == 0);
	LC_CHECK(lc_wfile_new(fd, 1, 600, 1000, "t", &w) == 0);
	LC_CHECK(lc_wfile_set_spans(w, bad, 2) == -LC_ERR_PROTO);
	bad[1].off = 600;	/* not below the tail */
	LC_CHECK(lc_wfile_set_spans(w, bad, 2) == -LC_ERR_PROTO);
	LC_CHECK(lc_wfile_set_spans(w, sp, 2) == 0);
	LC_CHECK_EQ_U(lc_wfile_written(w), 100);
	/* the tail and the second span wait for the first span */
	LC_CHECK(lc_wfile_submit(w, fill(pool, 600, BS), &complete,
	    NULL) == 0);
	LC_CHECK(lc_wfile_submit(w, fill(pool, 500, BS), &complete,
	    NULL) == 0);
	/* a kept chunk is not taken, nor a block across a span's end */
	LC_CHECK(lc_wfile_submit(w, fill(pool, 300, BS), &complete,
	    NULL) == -LC_ERR_PROTO);
	LC_CHECK(lc_wfile_submit(w, fill(pool, 250, BS), &complete,
	    NULL) == -LC_ERR_PROTO);
	LC_CHECK(lc_wfile_submit(w, fill(pool, 0, BS), &complete,
	    NULL) == -LC_ERR_PROTO);
	LC_CHECK_EQ_U(lc_wfile_written(w), 100);
	LC_CHECK(lc_wfile_submit(w, fill(pool, 100, BS), &complete,
	    NULL) == 0);
	LC_CHECK_EQ_U(lc_wfile_written(w), 200);
	/* a hole in a span is written as zeros: the old bytes are wrong */
	LC_CHECK(lc_wfile_submit_hole(w, 200, BS, &complete, NULL) == 0);
	LC_CHECK_EQ_U(lc_wfile_written(w), 700);
	for (uint64_t off = 700; off < 1000; off += BS) {
		LC_CHECK(lc_wfile_submit(w, fill(pool, off, BS), &complete,
		    NULL) == 0);
		ncomplete += complete;
	}
	LC_CHECK_EQ_I(ncomplete, 1);
	LC_CHECK(pread(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf));
	for (uint64_t i = 0; i < 1000; i++) {
		uint8_t want = i < 100 || (i >= 300 && i < 500) ? 0xee :
		    i >= 200 && i < 300 ? 0 : pattern(i);
		LC_CHECK(buf[i] == want);
	}
	lc_wfile_free(w);
	lc_pool_free(pool);
	close(fd);
}

/* A pipe whose reader went away: LC_ERR_PIPE, not a plain I/O error. */
LC_TEST(broken_pipe_is_its_own_error)
{
	struct lc_pool *pool;
	struct lc_wfile *w;
	struct lc_err e;
	int p[2], complete;

	signal(SIGPIPE, SIG_IGN);
	LC_CHECK(pipe(p) == 0);
	close(p[0]);
	LC_CHECK(lc_pool_new(2, 100, &pool) == 0);
	LC_CHECK(lc_wfile_new(p[1], 0, 0, 100, "stdout", &w) == 0);
	lc_err_clear(&e);
	LC_CHECK(lc_wfile_submit(w, fill(pool, 0, 100), &complete,
	    &e) == -LC_ERR_PIPE);
	LC_CHECK(strstr(e.msg, "stdout") != NULL);
	lc_wfile_free(w);
	lc_pool_free(pool);
	close(p[1]);
}
