/* The -l run log: a start line, every log line, and the outcome. */
#include "runlog.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int
lc_runlog_open(const struct lc_copy_opts *o, int *logfd, struct lc_err *e)
{
	*logfd = -1;
	if (o->log_path == NULL)
		return 0;
	*logfd = open(o->log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	    0644);
	if (*logfd < 0)
		return lc_err_sys(e, LC_ERR_USAGE, errno, "-l %s",
		    o->log_path);
	lc_log_set_file(*logfd);
	lc_log_record("start: %s", o->cmdline != NULL ? o->cmdline :
	    "lanecp");
	return 0;
}

void
lc_runlog_close(int logfd, const struct lc_copy_opts *o, int r,
    const struct lc_copy_result *res, const struct lc_err *e, int status)
{
	char sum[256];

	if (logfd < 0)
		return;
	/* the figures are --json's (lanecp(1), JSON OUTPUT) */
	lc_copy_summary(o, res, sum, sizeof(sum));
	if (r == 0)
		lc_log_record("result: ok, %s, %llu sent, %llu resumed, "
		    "%.3f s", sum, (unsigned long long)res->sent,
		    (unsigned long long)res->resumed, (double)res->ns / 1e9);
	else if (res->attempts == 0)
		lc_log_record("result: failed, exit %d: %s", status, e->msg);
	else
		lc_log_record("result: failed after %u attempt%s, exit %d, "
		    "%s, %llu sent, %llu resumed, %.3f s: %s", res->attempts,
		    res->attempts == 1 ? "" : "s", status, sum,
		    (unsigned long long)res->sent,
		    (unsigned long long)res->resumed,
		    (double)res->ns / 1e9, e->msg);
	lc_log_set_file(-1);
	close(logfd);
}
