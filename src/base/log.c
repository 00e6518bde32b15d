#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *lc_log_prog = "lanecp";
static atomic_int lc_log_threshold = LC_LOG_INFO;
static atomic_int lc_log_fd = 2;
static atomic_int lc_log_file_fd = -1;
static _Thread_local char lc_log_tag[48];
/* the live status line (lc_log_status): on the terminal, under the mutex */
static pthread_mutex_t lc_log_mu = PTHREAD_MUTEX_INITIALIZER;
static int lc_log_live;

void
lc_log_init(const char *prog, int level, int fd)
{
	if (prog != NULL)
		lc_log_prog = prog;
	atomic_store(&lc_log_threshold, level);
	atomic_store(&lc_log_fd, fd);
}

void
lc_log_set_level(int level)
{
	atomic_store(&lc_log_threshold, level);
}

int
lc_log_level(void)
{
	return atomic_load(&lc_log_threshold);
}

void
lc_log_set_file(int fd)
{
	atomic_store(&lc_log_file_fd, fd);
}

void
lc_log_set_tag(const char *tag)
{
	if (tag == NULL)
		lc_log_tag[0] = '\0';
	else
		snprintf(lc_log_tag, sizeof(lc_log_tag), "%s", tag);
}

char *
lc_log_escape(char *dst, size_t dstsz, const char *src)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	if (dstsz == 0)
		return dst;
	for (; *src != '\0'; src++) {
		unsigned char c = (unsigned char)*src;
		if (c >= 0x20 && c < 0x7f && c != '\\') {
			if (o + 1 >= dstsz)
				break;
			dst[o++] = (char)c;
		} else {
			if (o + 4 >= dstsz)
				break;
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[c >> 4];
			dst[o++] = hex[c & 15];
		}
	}
	dst[o] = '\0';
	return dst;
}

static void
lc_log_write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* With lc_log_mu held: take a live status line off the terminal. */
static void
lc_log_unstatus(int fd)
{
	static const char erase[] = "\r\033[K";

	if (lc_log_live)
		lc_log_write_all(fd, erase, sizeof(erase) - 1);
	lc_log_live = 0;
}

void
lc_log_status(const char *line, size_t n)
{
	int fd = atomic_load(&lc_log_fd);

	pthread_mutex_lock(&lc_log_mu);
	lc_log_unstatus(fd);
	lc_log_write_all(fd, line, n);
	lc_log_live = n > 0;
	pthread_mutex_unlock(&lc_log_mu);
}

void
lc_log_status_clear(void)
{
	pthread_mutex_lock(&lc_log_mu);
	lc_log_unstatus(atomic_load(&lc_log_fd));
	pthread_mutex_unlock(&lc_log_mu);
}

void
lc__log(int level, const char *file, int line, const char *fmt, ...)
{
	char raw[1024], esc[2048], out[2304];
	va_list ap;
	int n, ffd;

	ffd = atomic_load(&lc_log_file_fd);
	if (level > atomic_load(&lc_log_threshold) &&
	    (ffd < 0 || level > LC_LOG_VERBOSE))
		return;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	lc_log_escape(esc, sizeof(esc), raw);
	if (level >= LC_LOG_DEBUG)
		n = snprintf(out, sizeof(out), "%s: %s%s(%s:%d) %s\n",
		    lc_log_prog, lc_log_tag, lc_log_tag[0] ? ": " : "",
		    file, line, esc);
	else
		n = snprintf(out, sizeof(out), "%s: %s%s%s\n", lc_log_prog,
		    lc_log_tag, lc_log_tag[0] ? ": " : "", esc);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(out)) {
		n = (int)sizeof(out) - 1;
		out[n - 1] = '\n';
	}
	if (level <= atomic_load(&lc_log_threshold)) {
		int fd = atomic_load(&lc_log_fd);

		pthread_mutex_lock(&lc_log_mu);
		lc_log_unstatus(fd);
		lc_log_write_all(fd, out, (size_t)n);
		pthread_mutex_unlock(&lc_log_mu);
	}
	if (ffd >= 0) {
		char stamped[2400];
		char ts[32];
		struct tm tm;
		time_t now = time(NULL);
		int m;

		localtime_r(&now, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S%z", &tm);
		m = snprintf(stamped, sizeof(stamped), "%s %.*s", ts, n, out);
		if (m > 0)
			lc_log_write_all(ffd, stamped,
			    (size_t)m < sizeof(stamped) ? (size_t)m :
			    sizeof(stamped) - 1);
	}
}
