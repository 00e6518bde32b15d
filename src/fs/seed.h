/*
 * Seeding a part file from the file it replaces (-u's delta): the new
 * version is built beside the old one, starting as a copy of it, so that
 * only the chunks that differ need to come over the network.
 */
#ifndef LC_SEED_H
#define LC_SEED_H

#include "err.h"

#include <stdint.h>

/*
 * Make dst (empty, open for writing) hold the first len bytes of src
 * (open for reading, at least len bytes long): a reflink of the whole
 * file where the file system shares extents (FICLONE, then cut to len),
 * else copy_file_range(2), else read and write.  stop(arg), when not
 * NULL, is asked between pieces: non-zero stops with -LC_ERR_CANCELED.
 * *how says which way it went ("reflink", "copy_file_range", "read").
 * 0, or -LC_ERR_IO / -LC_ERR_NOSPACE with e filled (name: dst's, for
 * messages).
 */
int lc_seed_copy(int dst, int src, uint64_t len, const char *name,
    int (*stop)(void *), void *arg, const char **how, struct lc_err *e);

#endif
