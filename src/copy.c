/*
 * One copy as the user asked for it: attempts with retries and backoff
 * around lc_copy_run (controller.c), the -l run log, and the --json
 * summary.
 */
#include "lanecp/controller.h"
#include "lanecp/log.h"
#include "lanecp/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LC_BACKOFF_MAX_S 60

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

/* Append s as a JSON string. */
static size_t
lc_json_str(char *out, size_t o, size_t cap, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	if (o < cap)
		out[o++] = '"';
	for (; *s != '\0' && o + 7 < cap; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\') {
			out[o++] = '\\';
			out[o++] = (char)ch;
		} else if (ch < 0x20) {
			o += (size_t)snprintf(out + o, cap - o, "\\u00%c%c",
			    hex[ch >> 4], hex[ch & 15]);
		} else {
			out[o++] = (char)ch;
		}
	}
	if (o < cap)
		out[o++] = '"';
	return o;
}

void
lc_copy_json(int fd, const struct lc_copy_opts *o,
    const struct lc_copy_result *res, const struct lc_err *e,
    int exit_status)
{
	char out[16384];
	size_t o_ = 0, cap = sizeof(out) - 4;
	int ok = e == NULL || e->code == 0;

	(void)o;
	o_ += (size_t)snprintf(out + o_, cap - o_, "{\"ok\":%s,\"files\":%u,"
	    "\"bytes\":%llu,\"bytes_written\":%llu,\"resumed_bytes\":%llu,"
	    "\"seconds\":%.3f,\"streams\":%u,\"window\":%u,\"block\":%u,"
	    "\"encrypted\":%s,\"attempts\":%u,\"checksums\":[",
	    ok ? "true" : "false", res->files, (unsigned long long)res->sent,
	    (unsigned long long)res->bytes, (unsigned long long)res->resumed,
	    (double)res->ns / 1e9, res->streams, res->window, res->block,
	    res->encrypted ? "true" : "false", res->attempts);
	for (uint32_t i = 0; i < res->nsums && o_ < cap; i++) {
		o_ += (size_t)snprintf(out + o_, cap - o_, "%s{\"path\":",
		    i ? "," : "");
		o_ = lc_json_str(out, o_, cap, res->sums[i].path);
		o_ += (size_t)snprintf(out + o_, cap - o_, ",\"checksum\":");
		o_ = lc_json_str(out, o_, cap, res->sums[i].sum);
		if (o_ < cap)
			out[o_++] = '}';
	}
	o_ += (size_t)snprintf(out + o_, cap - o_, "],\"exit_status\":%d",
	    exit_status);
	if (!ok && o_ < cap) {
		o_ += (size_t)snprintf(out + o_, cap - o_, ",\"error\":");
		o_ = lc_json_str(out, o_, cap, e->msg);
	}
	if (o_ > cap)
		o_ = cap;
	out[o_++] = '}';
	out[o_++] = '\n';
	(void)lc_write_all(fd, out, o_);
}
