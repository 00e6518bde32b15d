/* A self-pipe that wakes a poll() loop. */
#include "wake.h"
#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int
lc_wake_open(struct lc_wake *w)
{
	int p[2];

	w->rfd = w->wfd = -1;
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
		return -LC_ERR_INTERNAL;
	w->rfd = p[0];
	w->wfd = p[1];
	return 0;
}

void
lc_wake_signal(struct lc_wake *w)
{
	const char c = 1;
	int saved = errno;

	if (w->wfd >= 0 && write(w->wfd, &c, 1) < 0) {
		/* full pipe: a wakeup is already pending */
	}
	errno = saved;
}

void
lc_wake_drain(struct lc_wake *w)
{
	char buf[64];

	while (w->rfd >= 0 && read(w->rfd, buf, sizeof(buf)) > 0)
		;
}

void
lc_wake_close(struct lc_wake *w)
{
	if (w->rfd >= 0)
		close(w->rfd);
	if (w->wfd >= 0)
		close(w->wfd);
	w->rfd = w->wfd = -1;
}
