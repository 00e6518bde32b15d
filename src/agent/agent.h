/*
 * The agent: one endpoint of a transfer (source or sink), speaking the
 * control protocol on a pair of file descriptors.  `lanecp --agent` runs
 * it on stdin/stdout under sshd; the controller runs the same code in a
 * thread on a socketpair for the local side.  One protocol, one
 * implementation.
 */
#ifndef LANECP_AGENT_H
#define LANECP_AGENT_H

#include "err.h"

#include <stdint.h>

#define LC_AGENT_DEFAULT_MEMORY (128ull << 20)
#define LC_AGENT_MIN_MEMORY (32ull << 20)
#define LC_AGENT_MAX_MEMORY (64ull << 30)
/* How long a standalone agent's threads get to stop once the controller
 * is gone (struct lc_agent_opts.exit_deadline_ms). */
#define LC_AGENT_EXIT_DEADLINE_MS 200u

struct lc_agent_opts {
	const char *restrict_dir;	/* --restrict DIR, or NULL */
	int local;			/* in-process (log lines unprefixed) */
	/*
	 * Standalone agent process: once the controller is gone, give the
	 * threads this many ms to stop, then let SIGALRM end the process (a
	 * thread can be stuck in a write to a FIFO or a hung filesystem;
	 * nobody is left to report to, and part files are kept for -a
	 * whatever state their last write left).  0: wait for the threads.
	 */
	unsigned exit_deadline_ms;
	/*
	 * --max-memory: the sink keeps its peak memory under this many bytes
	 * (0: LC_AGENT_DEFAULT_MEMORY) by clamping quota, block size and
	 * streams; see lc_sink_limits() in sink_mem.c.
	 */
	uint64_t max_memory;
	/*
	 * --transfer ID: the controller's transfer id (lockholder.h), valid
	 * or NULL.  A sink stops a stale agent of the same id that still
	 * holds a part file it needs.
	 */
	const char *transfer;
};

/*
 * Serve one controller until BYE or EOF on in_fd.  Returns 0 after a BYE,
 * or a negative LC_ERR code (the controller went away, a fatal error was
 * reported to it).  Never exits the process.
 */
int lc_agent_run(int in_fd, int out_fd, const struct lc_agent_opts *o);

/*
 * 1 if argv (up to a "--") asks for the agent: "--agent" is there.
 */
int lc_agent_wanted(int argc, char **argv);

/*
 * Read every hidden setting the agent code holds (settings.h:
 * LANECP_AEAD_EPOCH, LANECP_MAX_RUNS), so that a bad one stops a program
 * at its start rather than in the middle of a copy.  0, or -LC_ERR_USAGE
 * (e names the variable).
 */
int lc_agent_settings(struct lc_err *e);

/*
 * The agent program: the one argument parser of `lanecp --agent` and
 * `lanecp-agent` (prog names the program in messages).  Options:
 * --agent, --transfer ID, --restrict DIR, --max-memory SIZE (each also
 * as --opt=VALUE), --version.  Under a forced command without --transfer
 * the id is taken from SSH_ORIGINAL_COMMAND (the process execs itself
 * with it added).  Makes the process non-dumpable, runs lc_agent_run on
 * stdin/stdout and returns the exit status: 0 after a BYE, 1 when the
 * controller went away or a fatal error was reported, 2 for a usage
 * error or a bad hidden setting (one line on stderr).
 */
int lc_agent_main(int argc, char **argv, const char *prog);

#endif
