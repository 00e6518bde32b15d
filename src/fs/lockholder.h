/*
 * Transfer ids and part-file lock holders (lockholder.c).
 *
 * A transfer id is made once per lanecp invocation by the controller and
 * handed to every agent of every attempt (`lanecp --agent --transfer ID`,
 * or the in-process agent's options).  When a sink finds a part file's
 * flock held, it looks up the holder (its pid from /proc/locks, then
 * /proc/PID/status and /proc/PID/cmdline): an agent of the same transfer
 * may be an abandoned earlier attempt; anything else keeps the file
 * locked.  The id is public (ps shows it), so it only finds the holder:
 * the holder is stopped only after it has confirmed that the asker holds
 * the run's secret takeover key and is restricted to the same directory
 * (takeover.h).  Linux only; every /proc read is bounded and parsed
 * defensively, and anything that cannot be parsed counts as unknown.
 */
#ifndef LANECP_LOCKHOLDER_H
#define LANECP_LOCKHOLDER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"

#define LC_TRANSFER_BYTES 16
#define LC_TRANSFER_HEX (2 * LC_TRANSFER_BYTES)	/* 32 lowercase hex */

/*
 * How long the sink waits for the lock after stopping a stale agent of
 * its own transfer (SIGTERM; an agent dies of it at once, this only
 * covers a loaded host).  The bound, in milliseconds.
 */
#define LC_TAKEOVER_WAIT_MS 10000

/* Who holds a part file's lock (lc_lock_holder). */
enum lc_holder_kind {
	LC_HOLDER_UNKNOWN = 0,	/* no pid, gone, another user, unreadable */
	LC_HOLDER_SELF,		/* this process (another file of this copy) */
	LC_HOLDER_OTHER,	/* a readable process, not of this transfer */
	LC_HOLDER_SAME,		/* a lanecp agent of this transfer */
};

struct lc_holder {
	int kind;		/* enum lc_holder_kind */
	pid_t pid;		/* 0 when unknown */
	int lanecp;		/* its command line looks like lanecp */
};

/*
 * Make a fresh transfer id (RAND_bytes) as LC_TRANSFER_HEX lowercase hex
 * digits and a NUL in out[LC_TRANSFER_HEX + 1].  0 or -LC_ERR_INTERNAL.
 */
int lc_transfer_new(char *out);

/* 1 if s is exactly LC_TRANSFER_HEX lowercase hex digits, else 0. */
int lc_transfer_valid(const char *s);

/*
 * Find "--transfer ID" or "--transfer=ID" (ID valid) among the
 * blank-separated words of a shell command line such as
 * SSH_ORIGINAL_COMMAND (at most its first 4096 bytes are looked at).
 * Returns 1 with the id in out[LC_TRANSFER_HEX + 1], else 0 (out "").
 */
int lc_transfer_from_command(const char *cmd, char *out);

/*
 * Parse one line of /proc/locks (NUL-terminated, newline optional).
 * Returns 1 if it is a granted (not waiting, "->") FLOCK on the file
 * maj:min:ino, with *pid its holder as the kernel reports it (may be 0 or
 * negative: unknown); 0 for any other or malformed line.
 */
int lc_locks_line(const char *line, unsigned maj, unsigned min, uint64_t ino,
    pid_t *pid);

/*
 * Scan locks_path (normally "/proc/locks"; at most LC_LOCKS_MAX_LINES
 * lines, overlong lines skipped) for the granted FLOCK on dev:ino.
 * Returns 0 with *pid > 0, or -LC_ERR_IO (none found, unreadable); *pid
 * is 0 then.
 */
#define LC_LOCKS_MAX_LINES 200000
int lc_locks_find(const char *locks_path, dev_t dev, ino_t ino, pid_t *pid);

/*
 * Classify a command line as read from /proc/PID/cmdline (n bytes of
 * NUL-separated arguments, need not end in NUL).  Sets *lanecp when it
 * looks like lanecp (argv[0] named lanecp, or an --agent argument).
 * Returns LC_HOLDER_SAME when it has --agent and --transfer ID (or
 * --transfer=ID) with ID equal to transfer (a valid id), else
 * LC_HOLDER_OTHER.
 */
int lc_cmdline_classify(const char *buf, size_t n, const char *transfer,
    int *lanecp);

/*
 * Parse the "Uid:" line of /proc/PID/status text (n bytes): 1 if the
 * real, effective and saved uids all equal uid, 0 otherwise (missing or
 * malformed).
 */
int lc_status_uid_is(const char *buf, size_t n, uid_t uid);

/*
 * Who holds the flock on the open file fd?  transfer is ours (NULL or ""
 * when we have none: nothing is then SAME).  Fills *h; never fails
 * (unknown is an answer).
 */
void lc_lock_holder(int fd, const char *transfer, struct lc_holder *h);

/* Who takes a lock over (lc_lock_takeover); all borrowed. */
struct lc_lock_self {
	const char *transfer;	/* our transfer id, "" for none */
	const uint8_t *key;	/* the run's takeover key (LC_KEY_LEN bytes,
				   SINK_TARGET), NULL or all zero for none */
	const char *root;	/* our --restrict directory, "" for none */
};

/*
 * Take over the flock on fd from h, which lc_lock_holder() found to be
 * an agent of our own transfer id: confirm its identity again on a pidfd
 * (so a reused pid is never signalled), ask it whether it is of our run
 * and directory (lc_takeover_ask: our key, our root), and only on its
 * yes send it SIGTERM and poll the lock with a short back-off for at
 * most wait_ms.  Returns 0 with the lock held on fd, or -LC_ERR_LOCKED
 * with a message about path in e (an agent that does not say yes is
 * "not of this run").
 */
int lc_lock_takeover(int fd, const struct lc_holder *h,
    const struct lc_lock_self *me, unsigned wait_ms, const char *path,
    struct lc_err *e);

/*
 * LC_ERR_LOCKED in e for path held by h, saying who holds it.  Returns
 * -LC_ERR_LOCKED.
 */
int lc_lock_held_error(const char *path, const struct lc_holder *h,
    struct lc_err *e);

#endif
