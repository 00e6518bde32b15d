/* A pipe used to wake a poll() loop from another thread or a signal. */
#ifndef LANECP_WAKE_H
#define LANECP_WAKE_H

struct lc_wake {
	int rfd;
	int wfd;
};

/* Open both ends (non-blocking, close-on-exec).  0 or -LC_ERR_INTERNAL. */
int lc_wake_open(struct lc_wake *w);
/* Make rfd readable.  Async-signal-safe; keeps errno. */
void lc_wake_signal(struct lc_wake *w);
/* Read every pending wakeup. */
void lc_wake_drain(struct lc_wake *w);
/* Close both ends; safe on a closed or never-opened (-1) pipe. */
void lc_wake_close(struct lc_wake *w);

#endif
