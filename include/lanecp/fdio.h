/* Descriptor I/O: loops that survive EINTR and short transfers; fd flags. */
#ifndef LANECP_FDIO_H
#define LANECP_FDIO_H

#include <stddef.h>

/* write(2)/read(2) loops that retry on EINTR.  0, or -errno. */
int lc_write_all(int fd, const void *p, size_t n);
/* Reads exactly n bytes; -ENODATA on EOF before n bytes. */
int lc_read_full(int fd, void *p, size_t n);

/* Set or clear O_NONBLOCK / set FD_CLOEXEC.  0, or -errno. */
int lc_set_nonblock(int fd, int on);
int lc_set_cloexec(int fd);

#endif
