/*
 * The controller: the lanecp the user ran.  It opens the two endpoints
 * (local agent thread and/or remote agents over SSH), negotiates streams,
 * window and block size, hands each endpoint its part, relays file
 * announcements between them and reports the outcome.  It never touches
 * file data.
 */
#ifndef LANECP_CONTROLLER_H
#define LANECP_CONTROLLER_H

#include <stddef.h>
#include <stdint.h>

#include "lanecp/err.h"

struct lc_copy_opts {
	const char *const *sources;
	size_t nsources;
	const char *dest;
	uint32_t streams;	/* requested (-s) */
	uint32_t window;	/* -w, 0 = leave autotuning on */
	uint32_t block;		/* -B */
	uint32_t progress_ms;	/* -P, 0 = off */
	int force;		/* -f */
	int encrypt;		/* data stream encryption */
	int no_fsync;
	const char *config_file;	/* -F */
	const char *identity_file;	/* -i */
	const char *agent_cmd;	/* -T, default "lanecp" */
	int batch;		/* never prompt */
	int allow_local;	/* tests only: both ends local (loopback) */
};

struct lc_copy_result {
	uint64_t bytes;		/* payload bytes received by the sink */
	uint32_t files;
	uint64_t ns;		/* wall time of the data phase */
	uint32_t streams;
	uint32_t window;	/* effective, 0 = autotuned */
	uint32_t block;
};

/*
 * Run one copy.  signal_fd (or -1) is polled; a byte on it is a signal
 * number and cancels the copy (-LC_ERR_CANCELED, e->signo set).  Returns 0
 * or -LC_ERR_*; e says what and e->remote where.
 */
int lc_copy_run(const struct lc_copy_opts *o, int signal_fd,
    struct lc_copy_result *res, struct lc_err *e);

#endif
