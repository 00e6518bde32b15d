#include "log.h"
#include "json.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
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

/*
 * The code point of the well-formed UTF-8 sequence of n bytes (2 to 4,
 * as lc_utf8_seq_len measured it) at s.
 */
static uint32_t
lc_utf8_cp(const unsigned char *s, size_t n)
{
	uint32_t cp = s[0] & (0x7fu >> n);

	for (size_t i = 1; i < n; i++)
		cp = cp << 6 | (s[i] & 0x3fu);
	return cp;
}

/*
 * Code points that are valid but would act on the terminal or reorder
 * the line: C1 controls, the line and paragraph separators and the
 * bidirectional overrides and isolates.
 */
static int
lc_utf8_hidden(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x61c || cp == 0x200e ||
	    cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
	    (cp >= 0x2066 && cp <= 0x2069);
}

char *
lc_log_escape(char *dst, size_t dstsz, const char *src)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)src;
	size_t o = 0, n, i;

	if (dstsz == 0)
		return dst;
	while (*s != '\0') {
		int esc;

		if (*s < 0x80) {
			n = 1;
			esc = *s < 0x20 || *s == 0x7f;
		} else if ((n = lc_utf8_seq_len(s,
				strnlen((const char *)s, 4))) != 0) {
			/* valid UTF-8 (json.c's check): as it is, unless it
			   would act on the terminal (each of its bytes) */
			esc = lc_utf8_hidden(lc_utf8_cp(s, n));
		} else {
			n = 1;	/* invalid: this byte, then resynchronise */
			esc = 1;
		}
		if (o + (esc ? 4 * n : n) >= dstsz)
			break;	/* never half a sequence or an escape */
		for (i = 0; i < n; i++) {
			if (!esc) {
				dst[o++] = (char)s[i];
				continue;
			}
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[s[i] >> 4];
			dst[o++] = hex[s[i] & 15];
		}
		s += n;
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

/*
 * Format one line and write it: to the terminal when level passes the
 * threshold and term is set, and to the -l file when level is at most
 * the threshold or LC_LOG_INFO, whichever shows more (the file keeps the
 * warnings and the summary even with -q, and per-file lines only with
 * -v, so that a nightly run's log stays a handful of lines).
 */
static void
lc_log_v(int level, int term, const char *file, int line, const char *fmt,
    va_list ap)
{
	char raw[1024], esc[2048], out[2304];
	int n, ffd, thr;

	ffd = atomic_load(&lc_log_file_fd);
	thr = atomic_load(&lc_log_threshold);
	term = term && level <= thr;
	if (ffd >= 0 && ((level > thr && level > LC_LOG_INFO) ||
	    level > LC_LOG_VERBOSE))
		ffd = -1;
	if (!term && ffd < 0)
		return;
	vsnprintf(raw, sizeof(raw), fmt, ap);
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
	if (term) {
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

void
lc__log(int level, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lc_log_v(level, 1, file, line, fmt, ap);
	va_end(ap);
}

void
lc_log_record(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lc_log_v(LC_LOG_ERROR, 0, __FILE__, __LINE__, fmt, ap);
	va_end(ap);
}
