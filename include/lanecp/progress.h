/* Progress display for -P: a live line on a tty, plain lines otherwise. */
#ifndef LANECP_PROGRESS_H
#define LANECP_PROGRESS_H

#include <stdint.h>

struct lc_progress {
	int fd;
	int tty;
	uint64_t total;
	uint64_t start_ns;
	uint64_t last_ns;
	uint64_t last_bytes;
	int drawn;		/* a live line is on screen */
	/* trees: files done of files listed so far; total_final = 0 while
	 * the listing goes on (no percentage or ETA yet) */
	uint32_t files;
	uint32_t files_total;
	int total_final;
};

void lc_progress_init(struct lc_progress *p, int fd, uint64_t total);
/* Print the current state (rate over the whole run so far). */
void lc_progress_update(struct lc_progress *p, uint64_t bytes);
/* Print the final state and end a live line. */
void lc_progress_finish(struct lc_progress *p, uint64_t bytes);

/* "12.3 MB/s"-style rate text from bytes over ns. */
void lc_fmt_rate(char *buf, unsigned long sz, uint64_t bytes, uint64_t ns);

#endif
