/* Descriptor I/O: full reads and writes across EINTR, fd flags. */
#include "fdio.h"
#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

int
lc_write_all(int fd, const void *p, size_t n)
{
	const uint8_t *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -LC_ERR_IO;	/* errno: why */
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int
lc_read_full(int fd, void *p, size_t n)
{
	uint8_t *c = p;

	while (n > 0) {
		ssize_t r = read(fd, c, n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -LC_ERR_IO;	/* errno: why */
		}
		if (r == 0)
			return -LC_ERR_EOF;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

int
lc_set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -LC_ERR_INTERNAL;
	fl = on ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK);
	return fcntl(fd, F_SETFL, fl) < 0 ? -LC_ERR_INTERNAL : 0;
}

int
lc_set_cloexec(int fd)
{
	int fl = fcntl(fd, F_GETFD);

	if (fl < 0)
		return -LC_ERR_INTERNAL;
	return fcntl(fd, F_SETFD, fl | FD_CLOEXEC) < 0 ? -LC_ERR_INTERNAL : 0;
}
