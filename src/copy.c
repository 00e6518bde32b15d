/*
 * One copy as the user asked for it: attempts with retries and backoff
 * around lc_copy_run (controller.c), the -l run log, and the --json
 * summary.
 */
#include "lanecp/controller.h"
#include "lanecp/buf.h"
#include "lanecp/json.h"
#include "lanecp/log.h"
#include "lanecp/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LC_BACKOFF_MAX_S 60
/* the --json object: every string field escaped at 6 bytes a byte */
#define LC_JSON_MAX (1u << 20)

static int
lc_copy_retryable(int code)
{
	switch (code) {
	case LC_ERR_CONNECT:
	case LC_ERR_AGENT:
	case LC_ERR_EOF:
	case LC_ERR_STREAM:
	case LC_ERR_TIMEOUT:
	case LC_ERR_INTEGRITY:
	case LC_ERR_CHECKSUM:
		return 1;
	default:
		return 0;
	}
}

/* Sleep s seconds unless a signal arrives (then its error). */
static int
lc_copy_backoff(unsigned s, int signal_fd, struct lc_err *e)
{
	struct pollfd p = { .fd = signal_fd, .events = POLLIN };
	unsigned char signo;
	int r;

	do {
		r = poll(&p, signal_fd >= 0 ? 1 : 0, (int)s * 1000);
	} while (r < 0 && errno == EINTR);
	if (r > 0 && read(signal_fd, &signo, 1) == 1) {
		lc_err_set(e, LC_ERR_CANCELED, "interrupted by signal %d",
		    signo);
		e->signo = signo;
		return -LC_ERR_CANCELED;
	}
	return 0;
}

static void
lc_copy_merge(struct lc_copy_result *all, const struct lc_copy_result *one)
{
	uint64_t sent = all->sent + one->sent, ns = all->ns + one->ns;
	uint32_t attempts = all->attempts + 1;

	*all = *one;
	all->sent = sent;
	all->ns = ns;
	all->attempts = attempts;
}

int
lc_copy(const struct lc_copy_opts *o, int signal_fd,
    struct lc_copy_result *res, struct lc_err *e)
{
	struct lc_copy_opts oo = *o;
	struct lc_copy_result one;
	unsigned backoff = 1;
	int logfd = -1, r;

	memset(res, 0, sizeof(*res));
	if (o->log_path != NULL) {
		logfd = open(o->log_path, O_WRONLY | O_APPEND | O_CREAT |
		    O_CLOEXEC, 0644);
		if (logfd < 0)
			return lc_err_sys(e, LC_ERR_USAGE, errno, "-l %s",
			    o->log_path);
		lc_log_set_file(logfd);
		lc_log_verbose("start: %s", o->cmdline != NULL ? o->cmdline :
		    "lanecp");
	}
	for (;;) {
		lc_err_clear(e);
		r = lc_copy_run(&oo, signal_fd, &one, e);
		lc_copy_merge(res, &one);
		if (r == 0 || res->attempts > o->retries ||
		    !lc_copy_retryable(e->code))
			break;
		lc_log_warn("attempt %u of %u failed: %s; retrying in %u s, "
		    "resuming", res->attempts, o->retries + 1, e->msg, backoff);
		if ((r = lc_copy_backoff(backoff, signal_fd, e)) != 0)
			break;
		backoff = backoff * 2 > LC_BACKOFF_MAX_S ? LC_BACKOFF_MAX_S :
		    backoff * 2;
		oo.resume = 1;
	}
	if (logfd >= 0) {
		if (r == 0)
			lc_log_verbose("result: ok, %u file%s, %llu bytes "
			    "written, %llu sent, %llu resumed, %.3f s",
			    res->files, res->files == 1 ? "" : "s",
			    (unsigned long long)res->bytes,
			    (unsigned long long)res->sent,
			    (unsigned long long)res->resumed,
			    (double)res->ns / 1e9);
		else
			lc_log_verbose("result: failed after %u attempt%s: %s",
			    res->attempts, res->attempts == 1 ? "" : "s",
			    e->msg);
		lc_log_set_file(-1);
		close(logfd);
	}
	return r;
}

/* Append printf output (short: numbers and keys) to b. */
static int __attribute__((format(printf, 2, 3)))
lc_json_raw(struct lc_buf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -LC_ERR_INTERNAL;
	return lc_buf_put(b, tmp, (size_t)n);
}

/*
 * Every string goes through lc_json_put_str (peer names and error text
 * may hold any bytes), and the object is built whole in a bounded buffer
 * big enough for every field escaped at its worst (6 bytes a byte), so it
 * is never cut short.
 */
void
lc_copy_json(int fd, const struct lc_copy_opts *o,
    const struct lc_copy_result *res, const struct lc_err *e,
    int exit_status)
{
	struct lc_buf b;
	int ok = e == NULL || e->code == 0, r;

	(void)o;
	lc_buf_init(&b, LC_JSON_MAX);
	r = lc_json_raw(&b, "{\"ok\":%s,\"files\":%u,"
	    "\"bytes\":%llu,\"bytes_written\":%llu,\"resumed_bytes\":%llu,"
	    "\"seconds\":%.3f,\"streams\":%u,\"window\":%u,\"block\":%u,"
	    "\"encrypted\":%s,\"attempts\":%u,\"checksums\":[",
	    ok ? "true" : "false", res->files, (unsigned long long)res->sent,
	    (unsigned long long)res->bytes, (unsigned long long)res->resumed,
	    (double)res->ns / 1e9, res->streams, res->window, res->block,
	    res->encrypted ? "true" : "false", res->attempts);
	for (uint32_t i = 0; r == 0 && i < res->nsums && i < LC_RESULT_SUMS;
	    i++) {
		(void)((r = lc_json_raw(&b, "%s{\"path\":", i ? "," : "")) != 0 ||
		    (r = lc_json_put_str(&b, res->sums[i].path)) != 0 ||
		    (r = lc_json_raw(&b, ",\"checksum\":")) != 0 ||
		    (r = lc_json_put_str(&b, res->sums[i].sum)) != 0 ||
		    (r = lc_json_raw(&b, "}")) != 0);
	}
	if (r == 0)
		r = lc_json_raw(&b, "],\"exit_status\":%d", exit_status);
	if (r == 0 && !ok)
		(void)((r = lc_json_raw(&b, ",\"error\":")) != 0 ||
		    (r = lc_json_put_str(&b, e->msg)) != 0);
	if (r == 0)
		r = lc_json_raw(&b, "}\n");
	if (r == 0)
		(void)lc_write_all(fd, lc_buf_ptr(&b), lc_buf_len(&b));
	else
		lc_log_error("--json: cannot format the summary: %s",
		    lc_strerror(r));
	lc_buf_free(&b);
}
