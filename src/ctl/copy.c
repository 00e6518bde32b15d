/*
 * One copy as the user asked for it: attempts with retries and backoff
 * around lc_copy_run (controller.c), after the options are checked
 * (copy_opts.c).  The -l run log is runlog.c, the --json summary report.c.
 */
#include "copy.h"
#include "clock.h"
#include "log.h"
#include "progress.h"
#include "agent.h"
#include "controller_int.h"
#include "push.h"
#include "settings.h"

#include <errno.h>
#include <stdio.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#define LC_BACKOFF_MAX_S 60

static int
lc_copy_retryable(int code)
{
	switch (code) {
	case LC_ERR_CONNECT:
	case LC_ERR_AGENT:
	case LC_ERR_EOF:
	case LC_ERR_STREAM:
	case LC_ERR_NOPATH:
	case LC_ERR_TIMEOUT:
	case LC_ERR_INTEGRITY:
	case LC_ERR_CHECKSUM:
		return 1;
	/*
	 * Not LC_ERR_LOCKED: a stale agent of an earlier attempt of this
	 * copy is recognized by its transfer id and stopped by the sink
	 * (lockholder.c), so a lock that stays held belongs to a different
	 * lanecp (or someone else): contention, not an outage.
	 */
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
	uint64_t sent = all->sent + one->sent, bytes = all->bytes + one->bytes;
	uint64_t wire = all->wire + one->wire;
	/*
	 * Bytes kept from partial files are those earlier runs left: a
	 * retry resumes what the attempts before it wrote (counted there).
	 */
	uint64_t resumed = all->bytes != 0 || all->resumed != 0 ?
	    all->resumed : one->resumed;
	uint64_t stalled = all->stalled_ms + one->stalled_ms;
	uint64_t last = one->t_last_ms != 0 ? one->t_last_ms : all->t_last_ms;
	uint32_t attempts = all->attempts + 1;

	/*
	 * An outage that ended an attempt: from the last data of an earlier
	 * attempt to the first of this one (the lost connection, the back-off
	 * and the new start) is time lost too.
	 */
	if (all->t_last_ms != 0 && one->t_first_ms > all->t_last_ms) {
		uint64_t gap = one->t_first_ms - all->t_last_ms;
		stalled += gap;
		lc_log_warn("data is moving again after %.1f s without progress "
		    "(across attempts)", (double)gap / 1000);
	}
	/* the failures are the last attempt's, as the rest of the counts */
	lc_copy_result_free(all);
	*all = *one;
	all->t_last_ms = last;
	all->sent = sent;
	all->wire = wire;
	all->bytes = bytes;
	all->resumed = resumed;
	all->stalled_ms = stalled;
	all->attempts = attempts;
}

/*
 * The hidden setting LANECP_TRANSFER (settings.h): this transfer id for
 * every attempt instead of a random one, so a test can leave a stale
 * agent of "the same transfer" behind and run the next attempt as a new
 * process.  A transfer id is public (takeover.h): naming one lets a
 * controller do nothing a peer could not.  out is left as it is when the
 * setting is unset.
 */
static int
lc_copy_transfer(char out[LC_TRANSFER_HEX + 1], struct lc_err *e)
{
	const char *t;
	int r;

	if ((r = lc_setting_str("TRANSFER", lc_transfer_valid,
	    "a transfer id: 32 lowercase hex digits", NULL, &t, e)) != 0)
		return r;
	if (t != NULL)
		snprintf(out, LC_TRANSFER_HEX + 1, "%s", t);
	return 0;
}

int
lc_copy_settings(struct lc_err *e)
{
	char transfer[LC_TRANSFER_HEX + 1];
	const char *arch;
	uint64_t grace;
	uint32_t del_max;
	int r;

	if ((r = lc_agent_settings(e)) != 0 ||
	    (r = lc__ctl_grace(&grace, e)) != 0 ||
	    (r = lc__ctl_del_max(&del_max, e)) != 0 ||
	    (r = lc_copy_transfer(transfer, e)) != 0 ||
	    (r = lc_push_local_arch(&arch, e)) != 0)
		return r;
	return 0;
}

int
lc_copy(const struct lc_copy_opts *o, int signal_fd,
    struct lc_copy_result *res, struct lc_err *e)
{
	struct lc_copy_opts oo = *o;
	struct lc_copy_result one;
	unsigned backoff = 1;
	char why[LC_ERR_MSG_MAX];
	/* the ends an attempt reached over ssh by itself (copy.h) */
	char ssh_why[2][sizeof(res->ssh_why_src)] = { "", "" };
	int r;

	memset(res, 0, sizeof(*res));
	/* "seconds" is the wall time of it all: connecting, every attempt,
	   the back-offs between them and stopping */
	oo.t_run = lc_now_ns();
	/* which options go together: once, before the first attempt */
	if ((r = lc_copy_opts_check(o, e)) != 0)
		return r;
	/* one id for all attempts: a retry's sink knows the agents of the
	   attempts before it */
	if ((r = lc_copy_transfer(oo.transfer, e)) != 0)
		return r;
	if (oo.transfer[0] == '\0' && lc_transfer_new(oo.transfer) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "cannot make a transfer "
		    "id (RAND_bytes)");
	lc_log_debug("transfer id %s", oo.transfer);
	/* and the secret that lets those agents stop each other (takeover.h) */
	if (RAND_bytes(oo.takeover, sizeof(oo.takeover)) != 1)
		return lc_err_set(e, LC_ERR_INTERNAL, "cannot make a takeover "
		    "key (RAND_bytes)");
	for (;;) {
		lc_err_clear(e);
		r = lc_copy_run(&oo, signal_fd, &one, e);
		lc_copy_merge(res, &one);
		if (one.ssh_why_src[0] != '\0') {
			memcpy(ssh_why[0], one.ssh_why_src, sizeof(ssh_why[0]));
			oo.ssh_why_src = ssh_why[0];
		}
		if (one.ssh_why_dst[0] != '\0') {
			memcpy(ssh_why[1], one.ssh_why_dst, sizeof(ssh_why[1]));
			oo.ssh_why_dst = ssh_why[1];
		}
		/*
		 * The data streams could not connect: unless the user chose
		 * the path, try the next one at once (reverse, the relay
		 * between two remote hosts, then over SSH: datapath.c); this
		 * is not a retry.  A chain hop (fanout.c) stops after reverse:
		 * its target is then copied from this host, once, rather than
		 * relayed through it.
		 */
		if (r == -LC_ERR_NOPATH && o->path == LC_PATH_AUTO &&
		    one.path != LC_PATH_SSH &&
		    !(o->hop && one.path == LC_PATH_REVERSE)) {
			snprintf(why, sizeof(why), "%.*s", (int)sizeof(why) - 40,
			    e->msg);
			/* the stage it took: it may have skipped some */
			oo.path_stage = (one.path_stage > oo.path_stage ?
			    one.path_stage : oo.path_stage) + 1;
			oo.path_why = why;
			lc_log_warn("%s; trying another data path", e->msg);
			res->attempts--;
			continue;
		}
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
	OPENSSL_cleanse(oo.takeover, sizeof(oo.takeover));
	res->ns = lc_now_ns() - oo.t_run;
	/* the counts, also after some files failed (exit 23): a cron log
	   says what the night did in one line */
	if (r == 0 || r == -LC_ERR_PARTIAL) {
		char rate[32], sum[256];

		lc_fmt_rate(rate, sizeof(rate), res->bytes, res->ns);
		lc_copy_summary(o, res, sum, sizeof(sum));
		lc__log(r == 0 ? LC_LOG_INFO : LC_LOG_WARN, __FILE__, __LINE__,
		    "%s in %.3f s (%s) to %s", sum, (double)res->ns / 1e9,
		    rate, o->dest);
	}
	return r;
}
