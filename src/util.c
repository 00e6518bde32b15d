#include "lanecp/util.h"
#include "lanecp/err.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

uint64_t
lc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void
lc_deadline(clockid_t clock, int ms, struct timespec *ts)
{
	clock_gettime(clock, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

uint64_t
lc_now_ms(void)
{
	return lc_now_ns() / 1000000ULL;
}

struct lc_thread_start_arg {
	void *(*fn)(void *);
	void *arg;
	char name[16];
};

int
lc_thread_start(pthread_t *t, const char *name, void *(*fn)(void *),
    void *arg)
{
	sigset_t all, old;
	int r;

	/* the new thread inherits the blocked mask */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0)
		return -LC_ERR_INTERNAL;
	if (name != NULL) {
		char n[16];
		snprintf(n, sizeof(n), "%s", name);
		pthread_setname_np(*t, n);
	}
	return 0;
}

int
lc_write_all(int fd, const void *p, size_t n)
{
	const uint8_t *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
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
			return -errno;
		}
		if (r == 0)
			return -ENODATA;
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
		return -errno;
	fl = on ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK);
	return fcntl(fd, F_SETFL, fl) < 0 ? -errno : 0;
}

int
lc_set_cloexec(int fd)
{
	int fl = fcntl(fd, F_GETFD);

	if (fl < 0)
		return -errno;
	return fcntl(fd, F_SETFD, fl | FD_CLOEXEC) < 0 ? -errno : 0;
}

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

uint64_t
lc_proc_u64(const char *path)
{
	char buf[64];
	uint64_t v = 0;
	FILE *f = fopen(path, "re");

	if (f == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), f) != NULL) {
		if (sscanf(buf, "%" SCNu64, &v) != 1)
			v = 0;
	}
	fclose(f);
	return v;
}

void
lc_path_basename(const char *p, char *out, size_t outsz)
{
	size_t end = strlen(p), start;

	while (end > 1 && p[end - 1] == '/')
		end--;
	start = end;
	while (start > 0 && p[start - 1] != '/')
		start--;
	if (end == 1 && p[0] == '/')
		start = 0;
	snprintf(out, outsz, "%.*s", (int)(end - start), p + start);
}

void
lc_path_dirname(const char *p, char *out, size_t outsz)
{
	size_t end = strlen(p);

	while (end > 1 && p[end - 1] == '/')
		end--;
	while (end > 0 && p[end - 1] != '/')
		end--;
	if (end == 0) {
		snprintf(out, outsz, ".");
		return;
	}
	while (end > 1 && p[end - 1] == '/')
		end--;
	snprintf(out, outsz, "%.*s", (int)end, p);
}
