/*
 * The -l run log: every log line of a copy is appended to a file, framed
 * by a "start:" line with the command line and a "result:" line.  main()
 * opens it as soon as the command line is parsed (a usage error is
 * recorded too) and closes it with the exit status.
 */
#ifndef LANECP_RUNLOG_H
#define LANECP_RUNLOG_H

#include "copy.h"
#include "err.h"

/*
 * Open o->log_path (if any) for appending, route the log into it and write
 * the start line.  *logfd is the descriptor, or -1 without -l.  Returns 0
 * or -LC_ERR_USAGE (file cannot be opened; e says why).
 */
int lc_runlog_open(const struct lc_copy_opts *o, int *logfd,
    struct lc_err *e);

/*
 * Write the result line for outcome r (the counts of lc_copy_summary) (0 or -LC_ERR_*, e says what, and
 * status is the exit status it gives), stop routing the log and close
 * logfd.  Does nothing when logfd is -1.  res->attempts == 0: the copy
 * never started (a usage error).
 */
void lc_runlog_close(int logfd, const struct lc_copy_opts *o, int r,
    const struct lc_copy_result *res, const struct lc_err *e, int status);

#endif
