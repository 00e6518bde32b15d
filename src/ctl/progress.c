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
	else if (r >= 1e3)
		snprintf(buf, sz, "%.1f kB/s", r / 1e3);
	else
		snprintf(buf, sz, "%.0f B/s", r);
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

static const char *const lc_progress_how[] = { "done", "failed",
	"interrupted", "incomplete" };

/*
 * One state of the copy: "4.0 MiB of 8.0 MiB (50%), 2.1 MB/s, 3/9 files,
 * ETA 0:00:02".  While the sink syncs after the last byte, "flushing"
 * stands in for the rate and the ETA (the rate would only fall); the last
 * plain line says how the copy ended, without a rate.  how: -1 while it
 * runs, else enum lc_progress_end.
 */
static void
lc_progress_line(struct lc_progress *p, uint64_t bytes, int how)
{
	char done[32], tot[32], rate[64], eta[32] = "", files[48] = "";
	char fr[32] = "", text[200], line[240];
	uint64_t now = lc_now_ns(), el = now - p->start_ns;
	size_t len, cols;
	int n, final = how >= 0;

	if (p->total_final && bytes > p->total)
		bytes = p->total;	/* blocks written twice (a lost stream) */
	lc_fmt_bytes(done, sizeof(done), bytes);
	lc_fmt_bytes(tot, sizeof(tot), p->total);
	if (p->files_total > 1)
		snprintf(files, sizeof(files), ", %u/%u%s files", p->files,
		    p->files_total, p->total_final ? "" : "+");
	/* small files: the files a second say more than the bytes */
	if (p->files_total > 1 && el > 0)
		snprintf(fr, sizeof(fr), ", %.0f files/s",
		    (double)p->files * 1e9 / (double)el);
	if (final)
		snprintf(rate, sizeof(rate), "%s",
		    lc_progress_how[how <= LC_PROGRESS_PARTIAL ? how : 1]);
	else if (p->flushing)
		snprintf(rate, sizeof(rate), "flushing");
	else {
		lc_fmt_rate(rate, sizeof(rate), bytes, el);
		snprintf(rate + strlen(rate), sizeof(rate) - strlen(rate),
		    "%s", fr);
	}
	if (!final && !p->flushing && bytes > 0 && p->total > bytes &&
	    p->total_final) {
		double secs = (double)el / 1e9 * (double)(p->total - bytes) /
		    (double)bytes;
		unsigned long s = (unsigned long)(secs + 0.5);
		snprintf(eta, sizeof(eta), ", ETA %lu:%02lu:%02lu", s / 3600,
		    s / 60 % 60, s % 60);
	}
	if (p->total_final)
		n = snprintf(text, sizeof(text), "%s of %s (%.0f%%), %s%s%s",
		    done, tot, p->total > 0 ? 100.0 * (double)bytes /
		    (double)p->total : 100.0, rate, files, eta);
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
	lc_progress_line(p, bytes, -1);
}

void
lc_progress_finish(struct lc_progress *p, uint64_t bytes, int how)
{
	if (p->live) {
		lc_log_status_clear();
		p->drawn = 0;
		return;
	}
	lc_progress_line(p, bytes, how < 0 ? LC_PROGRESS_FAILED : how);
}
