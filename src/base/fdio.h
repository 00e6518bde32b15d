/* Descriptor I/O: loops that survive EINTR and short transfers; fd flags. */
#ifndef LANECP_FDIO_H
#define LANECP_FDIO_H

#include <stddef.h>

/*
 * These return 0 or -LC_ERR_*; on failure errno is left as the failing
 * system call set it (nothing runs after it), for a caller that reports it
 * with lc_err_sys(e, code, errno, ...) right away.
 */

/* write(2) all n bytes, retrying on EINTR.  0 or -LC_ERR_IO. */
int lc_write_all(int fd, const void *p, size_t n);
/*
 * read(2) exactly n bytes, retrying on EINTR.  0, -LC_ERR_IO, or
 * -LC_ERR_EOF on end of file before n bytes (errno not meaningful then).
 */
int lc_read_full(int fd, void *p, size_t n);

/* Set or clear O_NONBLOCK / set FD_CLOEXEC.  0 or -LC_ERR_INTERNAL. */
int lc_set_nonblock(int fd, int on);
int lc_set_cloexec(int fd);

#endif
