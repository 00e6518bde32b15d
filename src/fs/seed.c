/*
 * Seeding a part file from the file it replaces (seed.h).
 */
#include "seed.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/fs.h>

/* Pieces between two looks at stop(): short enough to stop promptly. */
#define LC_SEED_PIECE (64u << 20)
#define LC_SEED_BUF (1u << 20)

static int
lc_seed_fail(const char *name, int err, struct lc_err *e)
{
	return lc_err_sys(e,
	    err == ENOSPC || err == EDQUOT ? LC_ERR_NOSPACE : LC_ERR_IO, err,
	    "seed %s from the file it replaces", name);
}

/*
 * copy_file_range from offset done on: 0 when it copied everything, 1
 * when the kernel or file system cannot (fall back to read and write,
 * which start over at *done: what was copied is right), or an error.
 */
static int
lc_seed_cfr(int dst, int src, uint64_t len, uint64_t *done, const char *name,
    int (*stop)(void *), void *arg, struct lc_err *e)
{
	while (*done < len) {
		loff_t in = (loff_t)*done, out = (loff_t)*done;
		uint64_t want = len - *done < LC_SEED_PIECE ? len - *done
							    : LC_SEED_PIECE;
		ssize_t n;

		if (stop != NULL && stop(arg))
			return lc_err_set(e, LC_ERR_CANCELED, "canceled");
		n = copy_file_range(src, &in, dst, &out, (size_t)want, 0);
		if (n < 0 &&
		    (errno == ENOSYS || errno == EXDEV || errno == EINVAL ||
			errno == EOPNOTSUPP || errno == EBADF))
			return 1;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return lc_seed_fail(name, errno, e);
		if (n == 0) /* the old file shrank under us */
			return lc_err_set(e, LC_ERR_IO,
			    "seed %s: the file it "
			    "replaces changed while it was read",
			    name);
		*done += (uint64_t)n;
	}
	return 0;
}

static int
lc_seed_pwrite(int fd, const uint8_t *p, size_t n, off_t off)
{
	while (n > 0) {
		ssize_t w = pwrite(fd, p, n, off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
		off += w;
	}
	return 0;
}

static int
lc_seed_rw(int dst, int src, uint64_t len, uint64_t done, const char *name,
    int (*stop)(void *), void *arg, struct lc_err *e)
{
	uint8_t *buf = malloc(LC_SEED_BUF);
	int r = 0;

	if (buf == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	while (r == 0 && done < len) {
		size_t want = len - done < LC_SEED_BUF ? (size_t)(len - done)
						       : LC_SEED_BUF;
		ssize_t n;

		if (stop != NULL && (done % LC_SEED_PIECE) < want &&
		    stop(arg)) {
			r = lc_err_set(e, LC_ERR_CANCELED, "canceled");
			break;
		}
		n = pread(src, buf, want, (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? lc_seed_fail(name, errno, e)
				  : lc_err_set(e, LC_ERR_IO,
					"seed %s: the file it "
					"replaces changed while it was read",
					name);
			break;
		}
		if (lc_seed_pwrite(dst, buf, (size_t)n, (off_t)done) != 0)
			r = lc_seed_fail(name, errno, e);
		done += (uint64_t)n;
	}
	free(buf);
	return r;
}

int
lc_seed_copy(int dst, int src, uint64_t len, const char *name,
    int (*stop)(void *), void *arg, const char **how, struct lc_err *e)
{
	uint64_t done = 0;
	int r;

	*how = "reflink";
	/* shared extents: no data moves, and the old file's blocks are
	   shared until the changed chunks are written over */
	if (ioctl(dst, FICLONE, src) == 0) {
		if (ftruncate(dst, (off_t)len) != 0)
			return lc_seed_fail(name, errno, e);
		return 0;
	}
	*how = "copy_file_range";
	if ((r = lc_seed_cfr(dst, src, len, &done, name, stop, arg, e)) <= 0)
		return r;
	*how = "read";
	return lc_seed_rw(dst, src, len, done, name, stop, arg, e);
}
