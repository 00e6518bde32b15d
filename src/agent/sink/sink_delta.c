/*
 * -u's delta (LC_TGT_DELTA): a file that exists at the target and
 * differs is built beside the old one.  Its part file starts as a copy
 * of the old file (seed.h: a reflink where the file system can), cut to
 * the new size when that is smaller; from there it is a resume
 * (sink_resume.c): the prefix job hashes the chunks, the source says
 * which differ and sends only those and the tail past the old size, and
 * the file is renamed into place as any file is, so a reader never sees
 * a mixed file under the final name.
 */
#include "sink_int.h"

#include "log.h"
#include "parse.h"
#include "seed.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The smallest chunk; doubled until the file has at most 131072 chunks
 * (LC_HASHES_MAX_CHUNKS, 2 MiB of 16-byte hashes in FILE_HASHES frames),
 * or, with a source that knows no FILE_HASHES, 16384 (FILE_PREFIX, 512
 * KiB of 32-byte hashes in one frame).  Smaller chunks send less around
 * each change but cost a hash each: see bench/RESULTS.md "Nightly
 * mirrors (issue 24)" for the counts behind 8 KiB and 16 bytes (1 GiB
 * with 1 % changed: 16384 chunks of 64 KiB sent 1.3 and 1.9 times
 * rsync's bytes, 131072 of 8 KiB fewer than rsync's).
 */
#define LC_DELTA_CHUNK_MIN 8192u

/*
 * Smaller files are sent whole: what a delta can save there is less than
 * what its round trip and hashing cost.
 */
#define LC_DELTA_MIN_SIZE (64u << 10)

/*
 * The hashes of all deltas in flight at once (LC_DELTA_MEM_MAX, wire.h),
 * at most 2 MiB each: a tree of many changed big files must not hold one
 * list per file in flight (up to 4096).  A file past the bound is sent
 * whole.  The source holds a subset of these (from the first FILE_HASHES
 * to its PREFIX_MATCH) and refuses a sink that goes past the bound.
 */
static size_t
lc_delta_mem(const struct lc_sfile *f)
{
	return (size_t)f->nchunks * f->hlen + 1;
}

int
lc__sink_delta_prepare(struct lc_sink *s, struct lc_sfile *f, uint64_t *kept,
    struct lc_err *e)
{
	int hashes = (s->tgt.flags & LC_TGT_HASHES) != 0;
	uint32_t max = hashes ? LC_HASHES_MAX_CHUNKS : LC_PREFIX_MAX_CHUNKS;
	uint32_t hlen = hashes ? LC_HASHES_HASH_LEN : LC_PREFIX_HASH_LEN;
	uint32_t chunk, n;
	struct stat st;
	uint64_t len;
	int fd;

	*kept = 0;
	if ((s->tgt.flags & (LC_TGT_DELTA | LC_TGT_UPDATE)) !=
		(LC_TGT_DELTA | LC_TGT_UPDATE) ||
	    f->p.direct || f->p.fd < 0 || f->p.size < LC_DELTA_MIN_SIZE)
		return 0;
	/* the old file, never followed: one component in the directory
	   the part file is in */
	fd = openat(f->p.dfd, f->p.name,
	    O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0; /* gone, a link, unreadable: sent whole */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size < LC_DELTA_MIN_SIZE) {
		close(fd);
		return 0;
	}
	len = (uint64_t)st.st_size < f->p.size ? (uint64_t)st.st_size
					       : f->p.size;
	chunk = lc_prefix_chunk(len, LC_DELTA_CHUNK_MIN, max);
	n = chunk != 0 ? (uint32_t)((len + chunk - 1) / chunk) : 0;
	if (chunk == 0 ||
	    s->delta_mem + (size_t)n * hlen + 1 > LC_DELTA_MEM_MAX) {
		lc_log_verbose("%s: sent whole (too many deltas at once)",
		    f->p.final);
		close(fd);
		return 0;
	}
	f->seed_fd = fd;
	*kept = len;
	if (lc__sink_resume_prepare(s, f, kept, LC_DELTA_CHUNK_MIN, max, hlen,
		e) != 0)
		return -e->code;
	if (*kept == 0)
		return 0; /* out of memory for the hashes: whole */
	f->delta = 1;
	s->delta_mem += lc_delta_mem(f);
	return 0;
}

static int
lc_delta_stop(void *arg)
{
	struct lc_sfile *f = arg;

	return lc_role_canceled(&f->sink->port);
}

int
lc__sink_delta_seed(struct lc_sfile *f, struct lc_err *e)
{
	const char *how = "";
	int r;

	r = lc_seed_copy(f->p.fd, f->seed_fd, f->prefix_len, f->p.final,
	    lc_delta_stop, f, &how, e);
	close(f->seed_fd);
	f->seed_fd = -1;
	if (r == 0)
		lc_log_debug("%s: %llu bytes of the old copy in the part file "
			     "(%s)",
		    f->p.final, (unsigned long long)f->prefix_len, how);
	return r;
}

void
lc__sink_delta_log(const struct lc_sfile *f, uint64_t match, uint64_t again)
{
	char a[32], b[32], c[32];

	lc_log_verbose("%s: delta: %s of %s kept from the old copy, %s sent",
	    f->p.final, lc_fmt_bytes(a, sizeof(a), match - again),
	    lc_fmt_bytes(b, sizeof(b), f->p.size),
	    lc_fmt_bytes(c, sizeof(c), f->p.size - (match - again)));
}

void
lc__sink_delta_free(struct lc_sfile *f)
{
	if (f->seed_fd >= 0) {
		close(f->seed_fd);
		f->seed_fd = -1;
	}
	if (f->delta) {
		f->sink->delta_mem -= lc_delta_mem(f);
		f->delta = 0;
	}
}
