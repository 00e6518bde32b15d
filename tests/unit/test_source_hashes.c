/*
 * The source role's side of FILE_HASHES (-u's delta with small chunks),
 * driven through lc_source_ops by a test host (role_host.h): a list in
 * slices is put together and checked as one (PREFIX_MATCH names the
 * chunk that differs), a slice out of order is refused, and the lists a
 * sink may have the source hold at once stop at LC_DELTA_MEM_MAX.
 */
#define LC_TEST_TIMEOUT 90
#include "role_host.h"

#include "checksum.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T_CHUNK 8192u
#define T_NFILES 17 /* one list more than LC_DELTA_MEM_MAX holds */

struct t_hs {
	struct host h;
	char dir[64];
	uint32_t nfiles;
};

/* nfiles files of size bytes each (sparse past the first 64 KiB), listed. */
static void
t_hs_start(struct t_hs *t, uint32_t nfiles, uint64_t size)
{
	struct lc_msg_src_credit credit = { .upto = nfiles + 1 };
	struct lc_msg_src_add add;
	struct lc_msg_file f;
	uint8_t buf[T_CHUNK];
	char path[128];
	size_t n;
	int fd;

	memset(t, 0, sizeof(*t));
	t->nfiles = nfiles;
	host_tmpdir(t->dir, sizeof(t->dir), "src-hashes");
	host_init(&t->h, &lc_source_ops);
	for (uint32_t i = 0; i < nfiles; i++) {
		snprintf(path, sizeof(path), "%s/f%02u", t->dir, i);
		LC_CHECK(
		    (fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600)) >= 0);
		for (uint32_t c = 0; c < 8; c++) {
			memset(buf, (int)(c * 31 + i), sizeof(buf));
			LC_CHECK(write(fd, buf, sizeof(buf)) == sizeof(buf));
		}
		LC_CHECK(ftruncate(fd, (off_t)size) == 0);
		close(fd);
		memset(&add, 0, sizeof(add));
		snprintf(add.path, sizeof(add.path), "%s", path);
		host_send(&t->h, lc_msg_put_src_add, &add);
	}
	host_send(&t->h, lc_msg_put_src_credit, &credit);
	for (uint32_t i = 0; i < nfiles; i++) {
		host_wait_msg(&t->h, LC_MSG_FILE, &n);
		LC_CHECK(lc_msg_get_file(host_payload, n, &f) == 0);
		LC_CHECK_EQ_U(f.id, i + 1);
		host_wait_msg(&t->h, LC_MSG_SRC_LISTED, &n);
	}
}

static void
t_hs_stop(struct t_hs *t)
{
	host_free_role(&t->h);
	host_fini(&t->h);
	host_rmdir(t->dir);
}

/* The first 16 bytes of each chunk's SHA-256, as the sink sends them. */
static void
t_hs_hash(const struct t_hs *t, uint32_t file, uint32_t nchunks, uint8_t *out)
{
	uint8_t h[LC_PREFIX_HASH_LEN];
	struct lc_err e;
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/f%02u", t->dir, file);
	LC_CHECK((fd = open(path, O_RDONLY)) >= 0);
	for (uint32_t c = 0; c < nchunks; c++) {
		lc_err_clear(&e);
		LC_CHECK(lc_prefix_hash(fd, (uint64_t)c * T_CHUNK, T_CHUNK, h,
			     NULL, path, &e) == 0);
		memcpy(out + (size_t)c * LC_HASHES_HASH_LEN, h,
		    LC_HASHES_HASH_LEN);
	}
	close(fd);
}

static void
t_hs_slice(struct t_hs *t, uint32_t id, uint64_t length, uint32_t first,
    uint32_t n, const uint8_t *hashes, int *r)
{
	struct lc_msg_file_hashes m;

	memset(&m, 0, sizeof(m));
	m.id = id;
	m.length = length;
	m.chunk = T_CHUNK;
	m.total = (uint32_t)((length + T_CHUNK - 1) / T_CHUNK);
	m.first = first;
	m.n = n;
	m.hashes = hashes + (size_t)first * LC_HASHES_HASH_LEN;
	host_send_r(&t->h, r, lc_msg_put_file_hashes, &m);
}

LC_TEST(slices_make_one_list_and_one_answer)
{
	uint8_t hashes[8 * LC_HASHES_HASH_LEN];
	struct lc_msg_prefix_match pm;
	struct t_hs t;
	size_t n;
	int r;

	t_hs_start(&t, 1, 8 * T_CHUNK);
	t_hs_hash(&t, 0, 8, hashes);
	hashes[3 * LC_HASHES_HASH_LEN + 15] ^= 1; /* chunk 3 differs */
	t_hs_slice(&t, 1, 8 * T_CHUNK, 0, 3, hashes, &r);
	LC_CHECK_EQ_I(r, 0);
	t_hs_slice(&t, 1, 8 * T_CHUNK, 3, 3, hashes, &r);
	LC_CHECK_EQ_I(r, 0);
	t_hs_slice(&t, 1, 8 * T_CHUNK, 6, 2, hashes, &r);
	LC_CHECK_EQ_I(r, 0);
	host_wait_msg(&t.h, LC_MSG_PREFIX_MATCH, &n);
	LC_CHECK(lc_msg_get_prefix_match(host_payload, n, &pm) == 0);
	LC_CHECK_EQ_U(pm.id, 1);
	LC_CHECK_EQ_U(pm.match, 8 * T_CHUNK);
	LC_CHECK_EQ_U(pm.n, 1);
	LC_CHECK_EQ_U(pm.runs[0].first, 3);
	LC_CHECK_EQ_U(pm.runs[0].count, 1);
	/* answered: another slice for it is refused */
	t_hs_slice(&t, 1, 8 * T_CHUNK, 0, 1, hashes, &r);
	LC_CHECK_EQ_I(r, -LC_ERR_PROTO);
	t_hs_stop(&t);
}

LC_TEST(a_slice_out_of_order_is_refused)
{
	uint8_t hashes[8 * LC_HASHES_HASH_LEN];
	struct t_hs t;
	int r;

	t_hs_start(&t, 1, 8 * T_CHUNK);
	memset(hashes, 0, sizeof(hashes));
	/* a list must start at 0 */
	t_hs_slice(&t, 1, 8 * T_CHUNK, 2, 2, hashes, &r);
	LC_CHECK_EQ_I(r, -LC_ERR_PROTO);
	t_hs_stop(&t);

	t_hs_start(&t, 1, 8 * T_CHUNK);
	t_hs_slice(&t, 1, 8 * T_CHUNK, 0, 2, hashes, &r);
	LC_CHECK_EQ_I(r, 0);
	/* a gap, then (a fresh role) another length than the first slice */
	t_hs_slice(&t, 1, 8 * T_CHUNK, 3, 2, hashes, &r);
	LC_CHECK_EQ_I(r, -LC_ERR_PROTO);
	t_hs_stop(&t);

	t_hs_start(&t, 1, 8 * T_CHUNK);
	t_hs_slice(&t, 1, 8 * T_CHUNK, 0, 2, hashes, &r);
	LC_CHECK_EQ_I(r, 0);
	t_hs_slice(&t, 1, 7 * T_CHUNK, 2, 2, hashes, &r);
	LC_CHECK_EQ_I(r, -LC_ERR_PROTO);
	t_hs_stop(&t);
}

/*
 * 16 lists of 131072 hashes (2 MiB each) begun and not finished fill
 * LC_DELTA_MEM_MAX; the 17th is refused before anything is allocated.
 */
LC_TEST(lists_in_flight_are_bounded)
{
	static uint8_t hashes[LC_HASHES_HASH_LEN];
	const uint64_t big = (uint64_t)LC_HASHES_MAX_CHUNKS * T_CHUNK;
	struct t_hs t;
	int r;

	_Static_assert((uint64_t)(T_NFILES - 1) * LC_HASHES_MAX_CHUNKS *
		    LC_HASHES_HASH_LEN ==
		LC_DELTA_MEM_MAX,
	    "16 full lists are the bound");
	t_hs_start(&t, T_NFILES, big);
	for (uint32_t i = 1; i < T_NFILES; i++) {
		t_hs_slice(&t, i, big, 0, 1, hashes, &r);
		LC_CHECK_EQ_I(r, 0);
	}
	t_hs_slice(&t, T_NFILES, big, 0, 1, hashes, &r);
	LC_CHECK_EQ_I(r, -LC_ERR_PROTO);
	t_hs_stop(&t);
}

LC_TEST_MAIN()
