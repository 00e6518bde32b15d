/*
 * The copy engine end to end without SSH: both agents in-process, data over
 * loopback TCP (lc_copy_opts.allow_local, a test-only switch).  The real
 * thing through sshd is in tests/integration.  Without -DLC_TEST_HOOKS=ON
 * allow_local is not honoured and the test reports itself skipped (77).
 */
#ifndef LC_TEST_HOOKS
#include <stdio.h>

int
main(void)
{
	printf("SKIP: needs a build with -DLC_TEST_HOOKS=ON (allow_local)\n");
	return 77;
}
#else
#include "harness.h"

#include "copy.h"
#include "err.h"
#include "log.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <sys/stat.h>

static char dir[64];

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* Each test runs in a child of its own: the directory goes as it exits. */
static void
rm_tmp(void)
{
	if (dir[0] != '\0')
		(void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void
mkdir_tmp(void)
{
	snprintf(dir, sizeof(dir), "/tmp/lc-copy-XXXXXX");
	LC_CHECK(mkdtemp(dir) != NULL);
	atexit(rm_tmp);
}

static void
write_random(const char *path, uint64_t size)
{
	uint8_t buf[65536];
	uint64_t x = 0x9e3779b97f4a7c15ULL ^ size;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640);

	LC_CHECK(fd >= 0);
	for (uint64_t off = 0; off < size; off += sizeof(buf)) {
		size_t n = size - off < sizeof(buf) ? size - off : sizeof(buf);
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = (uint8_t)x;
		}
		LC_CHECK(write(fd, buf, n) == (ssize_t)n);
	}
	close(fd);
}

static int
same_content(const char *a, const char *b)
{
	uint8_t x[65536], y[65536];
	int fa = open(a, O_RDONLY), fb = open(b, O_RDONLY), same = 1;
	ssize_t n, m;

	if (fa < 0 || fb < 0)
		return 0;
	do {
		n = read(fa, x, sizeof(x));
		m = read(fb, y, sizeof(y));
		if (n != m || (n > 0 && memcmp(x, y, (size_t)n) != 0))
			same = 0;
	} while (same && n > 0);
	close(fa);
	close(fb);
	return same;
}

/* the last copy's counts: files written, of them updated */
static uint32_t last_files, last_updated;

static int
copy(const char *src, const char *dst, uint32_t streams, uint32_t block,
    int force, struct lc_err *e)
{
	struct lc_copy_opts o;
	struct lc_copy_result res;
	const char *srcs[1] = { src };
	int r;

	memset(&o, 0, sizeof(o));
	o.sources = srcs;
	o.nsources = 1;
	o.dest = dst;
	o.streams = streams;
	o.block = block;
	o.force = force;
	o.allow_local = 1;
	o.no_fsync = 1;
	lc_err_clear(e);
	lc_log_init("test", LC_LOG_WARN, 2);
	r = lc_copy_run(&o, -1, &res, e);
	last_files = res.files;
	last_updated = res.updated;
	lc_copy_result_free(&res);
	return r;
}

LC_TEST(sizes_and_stream_counts)
{
	static const uint64_t sizes[] = { 0, 1, 4095, 4096, 4097,
		3 * 65536 + 17, 5u << 20 };
	static const uint32_t streams[] = { 1, 4, 16 };
	char src[128], dst[128];
	struct lc_err e;

	mkdir_tmp();
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		snprintf(src, sizeof(src), "%s/src%zu", dir, i);
		write_random(src, sizes[i]);
		for (size_t j = 0; j < 3; j++) {
			snprintf(dst, sizeof(dst), "%s/dst%zu-%zu", dir, i, j);
			if (copy(src, dst, streams[j], 4096, 0, &e) != 0) {
				fprintf(stderr, "copy %s: %s\n", src, e.msg);
				LC_CHECK(0);
			}
			LC_CHECK(same_content(src, dst));
		}
	}
}

LC_TEST(directory_target_and_existing_file)
{
	char src[128], dst[128], sub[128];
	struct lc_err e;
	struct stat st;

	mkdir_tmp();
	snprintf(src, sizeof(src), "%s/file.bin", dir);
	snprintf(sub, sizeof(sub), "%s/into/", dir);
	write_random(src, 100000);
	LC_CHECK(mkdir(sub, 0755) == 0);
	LC_CHECK(copy(src, sub, 4, 8192, 0, &e) == 0);
	/* a new file: copied, not updated */
	LC_CHECK(last_files == 1 && last_updated == 0);
	snprintf(dst, sizeof(dst), "%s/into/file.bin", dir);
	LC_CHECK(same_content(src, dst));
	LC_CHECK(stat(dst, &st) == 0);
	/* again without -f: refused, naming the file */
	LC_CHECK(copy(src, sub, 4, 8192, 0, &e) == -LC_ERR_EXISTS);
	LC_CHECK(strstr(e.msg, "file.bin") != NULL);
	LC_CHECK(strstr(e.msg, "-f") != NULL);
	/* with -f: replaced */
	write_random(src, 5000);
	LC_CHECK(copy(src, sub, 4, 8192, 1, &e) == 0);
	LC_CHECK(same_content(src, dst));
	/* it replaced one: the sink says so (FILE_DONE), counted updated */
	LC_CHECK(last_files == 1 && last_updated == 1);
	/* a target ending in / that does not exist: made in its parent */
	snprintf(dst, sizeof(dst), "%s/newdir/", dir);
	LC_CHECK(copy(src, dst, 2, 8192, 0, &e) == 0);
	snprintf(dst, sizeof(dst), "%s/newdir/file.bin", dir);
	LC_CHECK(same_content(src, dst));
	/* ... but not its parent too */
	snprintf(dst, sizeof(dst), "%s/nodir/deeper/", dir);
	LC_CHECK(copy(src, dst, 2, 8192, 0, &e) == -LC_ERR_IO);
	LC_CHECK(strstr(e.msg, "nodir/deeper") != NULL);
}

LC_TEST(missing_source_and_dev_null)
{
	char src[128];
	struct lc_err e;

	mkdir_tmp();
	snprintf(src, sizeof(src), "%s/missing", dir);
	LC_CHECK(copy(src, "/tmp/", 2, 8192, 0, &e) == -LC_ERR_IO);
	LC_CHECK(strstr(e.msg, "missing") != NULL);
	LC_CHECK(strstr(e.msg, "No such file") != NULL);
	snprintf(src, sizeof(src), "%s/big", dir);
	write_random(src, 3u << 20);
	LC_CHECK(copy(src, "/dev/null", 4, 65536, 0, &e) == 0);
}

LC_TEST_MAIN()
#endif
