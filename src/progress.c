#include "lanecp/progress.h"
#include "lanecp/parse.h"
#include "lanecp/clock.h"
#include "lanecp/fdio.h"

#include <stdio.h>
#include <string.h>
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
lc_progress_init(struct lc_progress *p, int fd, uint64_t total)
{
	memset(p, 0, sizeof(*p));
	p->fd = fd;
	p->tty = isatty(fd);
	p->total = total;
	p->start_ns = p->last_ns = lc_now_ns();
	p->total_final = 1;
}

static void
lc_progress_line(struct lc_progress *p, uint64_t bytes, int final)
{
	char done[32], tot[32], rate[32], eta[32] = "", files[48] = "";
	char line[200];
	uint64_t now = lc_now_ns(), el = now - p->start_ns;
	int n;

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
		n = snprintf(line, sizeof(line), "%s%s of %s (%.0f%%), %s%s%s"
		    "%s%s", p->tty ? "\r" : "", done, tot, p->total > 0 ?
		    100.0 * (double)bytes / (double)p->total : 100.0, rate,
		    files, eta, final ? ", done" : "", p->tty ? "\033[K" :
		    "\n");
	else
		n = snprintf(line, sizeof(line), "%s%s of %s so far, %s%s%s",
		    p->tty ? "\r" : "", done, tot, rate, files,
		    p->tty ? "\033[K" : "\n");
	if (n > 0)
		(void)lc_write_all(p->fd, line, (size_t)n < sizeof(line) ?
		    (size_t)n : sizeof(line) - 1);
	p->drawn = p->tty;
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
	lc_progress_line(p, bytes, 1);
	if (p->tty)
		(void)lc_write_all(p->fd, "\n", 1);
	p->drawn = 0;
}
