/*
 * Progress display: the live line on a terminal (rewritten in place,
 * as wide as the terminal, erased by any log line: lc_log_status), or
 * plain lines for logs (-P).
 */
#ifndef LANECP_PROGRESS_H
#define LANECP_PROGRESS_H

#include <stdint.h>

struct lc_progress {
	int fd;
	int live;		/* the live line (else plain lines) */
	uint64_t total;
	uint64_t start_ns;
	uint64_t last_ns;
	uint64_t last_bytes;
	int drawn;		/* a live line has been drawn */
	/* trees: files done of files listed so far; total_final = 0 while
	 * the listing goes on (no percentage or ETA yet) */
	uint32_t files;
	uint32_t files_total;
	int total_final;
	int flushing;		/* every byte is in: the sink syncs */
};

/* How a copy ended, for its last plain progress line. */
enum lc_progress_end {
	LC_PROGRESS_DONE = 0,
	LC_PROGRESS_FAILED,
	LC_PROGRESS_INTERRUPTED,
	LC_PROGRESS_PARTIAL,	/* done, but some files failed */
};

/* live: rewrite one line in place on fd (a terminal); else plain lines. */
void lc_progress_init(struct lc_progress *p, int fd, int live,
    uint64_t total);
/* Print the current state (rate over the whole run so far). */
void lc_progress_update(struct lc_progress *p, uint64_t bytes);
/*
 * End: plain lines get a last one that says how (enum lc_progress_end:
 * "done" only for a copy that succeeded) without a rate (the summary line
 * has the run's one rate); a live line is erased (the summary or the
 * error line follows).
 */
void lc_progress_finish(struct lc_progress *p, uint64_t bytes, int how);

/* "12.3 MB/s"-style rate text from bytes over ns ("512 B/s" below 1 kB/s). */
void lc_fmt_rate(char *buf, unsigned long sz, uint64_t bytes, uint64_t ns);

#endif
