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
};

/* live: rewrite one line in place on fd (a terminal); else plain lines. */
void lc_progress_init(struct lc_progress *p, int fd, int live,
    uint64_t total);
/* Print the current state (rate over the whole run so far). */
void lc_progress_update(struct lc_progress *p, uint64_t bytes);
/* End: plain lines get a last one ("done"); a live line is erased. */
void lc_progress_finish(struct lc_progress *p, uint64_t bytes);

/* "12.3 MB/s"-style rate text from bytes over ns. */
void lc_fmt_rate(char *buf, unsigned long sz, uint64_t bytes, uint64_t ns);

#endif
