/*
 * -N programs: a command run with /bin/sh -c on the host of its side,
 * whose stdout is the copy's source or whose stdin gets the copy.
 */
#ifndef LANECP_PROGRAM_H
#define LANECP_PROGRAM_H

#include <sys/types.h>

#include "err.h"

/*
 * Start cmd under /bin/sh -c.  out: 1 to read its stdout (a source
 * program; its stdin is other_fd), 0 to write its stdin (a target
 * program; its stdout is other_fd).  other_fd -1: /dev/null.  The child
 * gets no other descriptor of ours, default signal dispositions and an
 * empty signal mask.  *fd is our end of the pipe (close-on-exec), *pid
 * the child.  0, or -LC_ERR_IO with e filled.
 */
int lc_prog_start(const char *cmd, int out, int other_fd, pid_t *pid,
    int *fd, struct lc_err *e);

/*
 * Wait for the child and check its status: 0 if it exited 0, else
 * -LC_ERR_PROGRAM with e naming what ("source program", "target
 * program"), the command and the status or signal.
 */
int lc_prog_wait(pid_t pid, const char *what, const char *cmd,
    struct lc_err *e);

/*
 * Whether name (no '/') is an executable file in a directory of $PATH
 * (or of the default path when PATH is unset), as execvp would find it.
 */
int lc_prog_on_path(const char *name);

#endif
