#include "progress.h"
#include "parse.h"
#include "clock.h"
#include "fdio.h"
#include "log.h"

#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

void
lc_fmt_rate(char *buf, unsigned long sz, uint64_t bytes, uint64_t ns)
{
	double s = (double)ns / 1e9;
	double r = s > 0 ? (double)bytes / s : 0.0;

	if (r >= 1e9)
		snprintf(buf, sz, "%.2f GB/s", r / 1e9);
	else if (r >= 1e6)
		snprintf(buf, sz, "%.1f MB/s", r / 1e6);
	else
		snprintf(buf, sz, "%.1f kB/s", r / 1e3);
}

void
lc_progress_init(struct lc_progress *p, int fd, int live, uint64_t total)
{
	memset(p, 0, sizeof(*p));
	p->fd = fd;
	p->live = live;
	p->total = total;
	p->start_ns = p->last_ns = lc_now_ns();
	p->total_final = 1;
}

/* The terminal's width, or 80 when it will not say. */
static size_t
lc_progress_cols(int fd)
{
	struct winsize ws;

	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

static void
lc_progress_line(struct lc_progress *p, uint64_t bytes, int final)
{
	char done[32], tot[32], rate[32], eta[32] = "", files[48] = "";
	char text[200], line[240];
	uint64_t now = lc_now_ns(), el = now - p->start_ns;
	size_t len, cols;
	int n;

	if (p->total_final && bytes > p->total)
		bytes = p->total;	/* blocks written twice (a lost stream) */
	lc_fmt_bytes(done, sizeof(done), bytes);
	lc_fmt_bytes(tot, sizeof(tot), p->total);
	lc_fmt_rate(rate, sizeof(rate), bytes, el);
	if (p->files_total > 1)
		snprintf(files, sizeof(files), ", %u/%u%s files", p->files,
		    p->files_total, p->total_final ? "" : "+");
	if (!final && bytes > 0 && p->total > bytes && p->total_final) {
		double secs = (double)el / 1e9 * (double)(p->total - bytes) /
		    (double)bytes;
		unsigned long s = (unsigned long)(secs + 0.5);
		snprintf(eta, sizeof(eta), ", ETA %lu:%02lu:%02lu", s / 3600,
		    s / 60 % 60, s % 60);
	}
	if (p->total_final)
		n = snprintf(text, sizeof(text), "%s of %s (%.0f%%), %s%s%s%s",
		    done, tot, p->total > 0 ? 100.0 * (double)bytes /
		    (double)p->total : 100.0, rate, files, eta,
		    final ? ", done" : "");
	else
		n = snprintf(text, sizeof(text), "%s of %s so far, %s%s", done,
		    tot, rate, files);
	if (n < 0)
		return;
	len = (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1;
	if (p->live) {
		/* never wrap: one column short of the width (the cursor) */
		cols = lc_progress_cols(p->fd);
		if (len > cols - 1)
			len = cols - 1;
		n = snprintf(line, sizeof(line), "\r%.*s\033[K", (int)len,
		    text);
		if (n > 0 && (size_t)n < sizeof(line))
			lc_log_status(line, (size_t)n);
		p->drawn = 1;
	} else {
		n = snprintf(line, sizeof(line), "%.*s\n", (int)len, text);
		if (n > 0 && (size_t)n < sizeof(line))
			(void)lc_write_all(p->fd, line, (size_t)n);
	}
	p->last_ns = now;
	p->last_bytes = bytes;
}

void
lc_progress_update(struct lc_progress *p, uint64_t bytes)
{
	lc_progress_line(p, bytes, 0);
}

void
lc_progress_finish(struct lc_progress *p, uint64_t bytes)
{
	if (p->live) {
		lc_log_status_clear();
		p->drawn = 0;
		return;
	}
	lc_progress_line(p, bytes, 1);
}
