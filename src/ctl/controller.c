/*
 * Controller state machine (single thread, poll loop).  The copy's phase
 * is c->phase (enum lc_ctl_phase, controller_int.h):
 *
 *   HELLO    both; the source's HELLO in -> negotiate -> sink:
 *            SINK_TARGET, LISTEN (behind its HELLO); source: SRC_ADD*
 *   LISTING  source FILE -> sink FILE; sink FILE_READY -> source
 *            FILE_READY; all listed and settled -> source SRC_NOMORE
 *   NOMORE   SRC_DONE + SINK_DONE + every FILE_DONE -> BYE both
 *   BYE      both BYEs -> done
 *
 * Beside it, the data streams' setup (c->dp.state): sink LISTENING ->
 * source CONNECT (the address the controller itself used), then the
 * source's CONNECTED (negotiate.c, datapath.c).
 *
 * Any ERROR, or an endpoint vanishing, ends the run: both control channels
 * are closed at once so the agents stop (the sink keeps its partial file
 * under the temporary name; the target name is never touched).
 *
 * This file is the run: opening both ends, the poll loop, the phases'
 * steps, and the end (root cause, STOP, closing).  Each feature has a
 * file and a sub-struct of struct lc_ctl (controller_int.h): the file
 * ring and credit (controller_ring.c), the checks of the source's and
 * the sink's messages (controller_src.c, controller_dst.c), the options
 * (controller_opts.c), progress and reporting (controller_progress.c),
 * negotiation (negotiate.c) and the data path (datapath.c).
 */
#include "controller_int.h"
#include "checksum.h"
#include "clock.h"
#include "fdio.h"
#include "log.h"
#include "parse.h"
#include "path.h"
#include "program.h"
#include "secmem.h"
#include "settings.h"
#include "testhook_ctl.h"
#include "thread.h"
#include <errno.h>
#include <poll.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LC_CLOSE_WAIT_MS 3000
#define LC_PING_MS 1000		/* the agents' heartbeat */
#define LC_AGENT_GRACE_S 60	/* an agent that hears nothing this long
				   stops (PING) */
#define LC_CAUSE_WAIT_MS 2000
#define LC_STOP_WAIT_MS 2000	/* STOP: how long the sink may take */

const char *
lc__ctl_agent_cmd(const struct lc_ctl *c)
{
	return c->o->agent_cmd != NULL ? c->o->agent_cmd : "lanecp";
}

static int
lc_ctl_remote_error(struct lc_endpoint *ep, const uint8_t *p, size_t n,
    struct lc_err *e)
{
	struct lc_msg_error m;
	int code;

	if (lc_msg_get_error(p, n, &m) != 0)
		return lc_err_set(e, LC_ERR_PROTO, "%s: malformed ERROR",
		    ep->name);
	code = (int)m.code;
	if (code <= 0 || code >= LC_ERR_MAX)
		code = LC_ERR_PROTO;
	if (ep->remote)
		lc_err_set(e, code, "%s: %s", ep->name, m.msg);
	else
		lc_err_set(e, code, "%s", m.msg);
	e->remote = ep->remote;
	return -code;
}

static int
lc_ctl_open(struct lc_ctl *c, struct lc_endpoint *ep,
    const struct lc_location *loc, struct lc_err *e)
{
	/* kept: --via-ssh opens more connections the same way */
	struct lc_ssh_opts *so = ep == &c->src ? &c->dp.so_src : &c->dp.so_dst;
	char *why = ep == &c->src ? c->dp.ssh_why_src : c->dp.ssh_why_dst;
	const char *remembered = ep == &c->src ? c->o->ssh_why_src :
	    c->o->ssh_why_dst;
	char limit[200];
	int r;

	memcpy(ep->transfer, c->o->transfer, sizeof(ep->transfer));
	if (!lc_location_is_remote(loc))
		return lc_endpoint_open_local(ep, e);
	/* no lanecp there: bring ours, unless -T names one or pushing is
	   off (push.h) */
	ep->push = c->o->agent_cmd == NULL && !c->o->no_push;
	ep->no_push = c->o->agent_cmd == NULL ? c->o->no_push : 0;
	memset(so, 0, sizeof(*so));
	so->host = loc->host;
	so->user = loc->user[0] != '\0' ? loc->user : NULL;
	so->config_file = c->o->config_file;
	so->identity_file = c->o->identity_file;
	so->jump = c->o->jump;
	so->port = loc->port;
	so->options = c->o->ssh_options;
	so->noptions = c->o->n_ssh_options;
	so->batch = c->o->batch;
	so->program = c->o->ssh_program;
	so->limit = limit;
	so->limit_sz = sizeof(limit);
	if (so->program == NULL && remembered != NULL) {
		/* an earlier attempt found that libssh2 cannot serve it */
		lc_log_verbose("%s: %s; going over the OpenSSH client (ssh) "
		    "as the earlier attempt did", loc->host, remembered);
		snprintf(why, sizeof(c->dp.ssh_why_src), "%s", remembered);
		so->program = "ssh";
	}
	r = lc_endpoint_open_remote(ep, so, lc__ctl_agent_cmd(c), e);
	so->limit = NULL;	/* so is kept, limit is not */
	so->limit_sz = 0;
	if (r == 0 || so->program != NULL || limit[0] == '\0' ||
	    ep->ssh != NULL)
		return r;
	/*
	 * libssh2 cannot serve this host where the OpenSSH client could:
	 * go over ssh instead, once.  ssh does its own host key checks
	 * (StrictHostKeyChecking, @revoked, @cert-authority) on that path;
	 * no passphrase was asked for (lc_ssh_opts.limit).
	 */
	if (!lc_prog_on_path("ssh")) {
		size_t n = strlen(e->msg), left = sizeof(e->msg) - n;

		/* the reason, when it fits; the advice always */
		if ((size_t)snprintf(e->msg + n, left, " (%s; no ssh program "
		    "is on the PATH to go over instead)", limit) >= left)
			snprintf(e->msg + n, left, " (no ssh program is on "
			    "the PATH to go over instead)");
		return r;
	}
	lc_log_verbose("%s: %s; going over the OpenSSH client (ssh) "
	    "instead", loc->host, limit);
	lc_log_debug("%s: libssh2 failed with: %s", loc->host, e->msg);
	snprintf(why, sizeof(c->dp.ssh_why_src), "%s", limit);
	lc_err_clear(e);	/* ep is as before: nothing was sent */
	so->program = "ssh";
	return lc_endpoint_open_remote(ep, so, lc__ctl_agent_cmd(c), e);
}

/* The source's connection, opened in a thread of its own (lc_ctl_open_both). */
struct lc_ctl_opener {
	struct lc_ctl *c;
	struct lc_err e;
	int r;
};

static void *
lc_ctl_open_src_thread(void *arg)
{
	struct lc_ctl_opener *op = arg;

	op->r = lc_ctl_open(op->c, &op->c->src, &op->c->args.srcs[0], &op->e);
	return NULL;
}

/*
 * A sanitizer build waits for a remote agent's exit after a good copy
 * too: its report comes on stderr as it exits (the tests look for it in
 * ours), and the pump logs stderr only while the channel is read.
 */
#ifndef LC_SANITIZED
#define LC_SANITIZED 0
#endif

static int lc_ctl_drain(struct lc_ctl *c, struct lc_endpoint *ep,
    struct lc_err *e);

/*
 * One endpoint after poll said revents: read what came, handle every
 * whole message, and fail if the agent went away before its BYE.  The
 * one step that both the push's early HELLO wait and the main loop take.
 */
static int
lc_ctl_serve(struct lc_ctl *c, struct lc_endpoint *ep, short revents,
    struct lc_err *e)
{
	int r;

	if ((revents & ~POLLOUT) != 0)
		(void)lc_endpoint_read(ep);
	if ((r = lc_ctl_drain(c, ep, e)) != 0)
		return r;
	if (ep->eof && !(ep == &c->src ? c->src_bye : c->dst_bye))
		return lc_endpoint_lost(ep, lc__ctl_agent_cmd(c), e);
	return 0;
}

/*
 * A push: the local source's HELLO, which comes at once (its agent is a
 * thread here), so that the sink's SINK_TARGET and LISTEN can go with
 * our HELLO when the remote agent starts (lc_ctl_prime).
 */
static int
lc_ctl_local_hello(struct lc_ctl *c, struct lc_err *e)
{
	struct lc_endpoint *ep = &c->src;
	struct pollfd pfd;
	int r;

	while (!ep->hello_seen) {
		if (lc_endpoint_flush(ep) != 0)
			return lc_endpoint_lost(ep, lc__ctl_agent_cmd(c), e);
		pfd.fd = ep->fd;
		pfd.events = POLLIN | (lc_buf_len(&ep->out) > 0 ? POLLOUT : 0);
		pfd.revents = 0;
		if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
			return lc_err_sys(e, LC_ERR_INTERNAL, errno, "poll");
		if ((r = lc_ctl_serve(c, ep, pfd.revents, e)) != 0)
			return r;
	}
	return 0;
}

/*
 * The sink's connection is made and its agent not yet started: settle
 * the copy now (the local source's HELLO is in), so that SINK_TARGET and
 * LISTEN travel with our HELLO and LISTENING comes back with the agent's,
 * one round trip sooner.  Nothing the sink's HELLO says is needed to ask
 * (negotiate.c).
 */
static int
lc_ctl_prime(void *arg, struct lc_err *e)
{
	struct lc_ctl *c = arg;

	if (c->phase != LC_CTL_HELLO || !c->src.hello_seen)
		return 0;
	return lc__ctl_negotiate(c, e);
}

/*
 * Both ends.  Two remote hosts are reached in parallel: each SSH setup
 * (TCP, key exchange, authentication, exec) is several round trips, and
 * neither needs the other.  When both fail, the sink's error is the one
 * reported (a bad target is usually the cheaper mistake); with one
 * remote end there is nothing to overlap.
 */
static int
lc_ctl_open_both(struct lc_ctl *c, struct lc_err *e)
{
	struct lc_ctl_opener op;
	pthread_t t;
	int r;

	/*
	 * A push on the direct path: the local source first (it cannot
	 * fail but for resources), its HELLO in, then the sink primed
	 * (lc_ctl_prime).  Not on the reverse path, where a restricted
	 * sink's HELLO may change the path (datapath.c).
	 */
	if (lc_location_is_remote(&c->args.dst) &&
	    !lc_location_is_remote(&c->args.srcs[0]) &&
	    (c->o->path == LC_PATH_DIRECT || (c->o->path == LC_PATH_AUTO &&
	    c->o->path_stage == 0))) {
		if ((r = lc_ctl_open(c, &c->src, &c->args.srcs[0], e)) != 0 ||
		    (r = lc_ctl_local_hello(c, e)) != 0)
			return r;
		c->dst_ep.prime = lc_ctl_prime;
		c->dst_ep.prime_arg = c;
		return lc_ctl_open(c, &c->dst_ep, &c->args.dst, e);
	}
	if (!lc_location_is_remote(&c->args.dst) ||
	    !lc_location_is_remote(&c->args.srcs[0])) {
		if ((r = lc_ctl_open(c, &c->dst_ep, &c->args.dst, e)) != 0)
			return r;
		return lc_ctl_open(c, &c->src, &c->args.srcs[0], e);
	}
	memset(&op, 0, sizeof(op));
	op.c = c;
	if (lc_thread_start(&t, "lc-open", lc_ctl_open_src_thread, &op) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "thread");
	r = lc_ctl_open(c, &c->dst_ep, &c->args.dst, e);
	pthread_join(t, NULL);
	if (r != 0)
		return r;
	if (op.r != 0)
		*e = op.e;
	return op.r;
}

_Static_assert(sizeof(((struct lc_copy_result *)0)->ssh_why_src) ==
    sizeof(((struct lc_ctl_path *)0)->ssh_why_src), "ssh_why sizes");

/* Into the result: which end went over the OpenSSH client, and why. */
static void
lc_ctl_ssh_why(struct lc_ctl *c)
{
	const char *src = c->dp.ssh_why_src, *dst = c->dp.ssh_why_dst;

	if (src[0] == '\0' && dst[0] == '\0')
		return;
	c->res->openssh = 1;
	memcpy(c->res->ssh_why_src, src, sizeof(c->res->ssh_why_src));
	memcpy(c->res->ssh_why_dst, dst, sizeof(c->res->ssh_why_dst));
}

/* Run every whole frame in ep->in. */
static int
lc_ctl_drain(struct lc_ctl *c, struct lc_endpoint *ep, struct lc_err *e)
{
	const uint8_t *payload;
	size_t plen, flen;
	uint8_t type;
	int r;

	while ((r = lc_msg_peek(lc_buf_ptr(&ep->in), lc_buf_len(&ep->in),
	    &type, &payload, &plen, &flen)) == 1) {
		if (type == LC_MSG_ERROR) {
			r = lc_ctl_remote_error(ep, payload, plen, e);
			c->err_ep = ep;
		} else if (!ep->hello_seen)
			r = type == LC_MSG_HELLO ?
			    lc__ctl_got_hello(c, ep, payload, plen, e) :
			    lc_err_set(e, LC_ERR_PROTO, "%s: expected HELLO "
			    "from the agent, got type %u", ep->name, type);
		else if (ep == &c->src)
			r = lc__ctl_from_src(c, type, payload, plen, e);
		else
			r = lc__ctl_from_dst(c, type, payload, plen, e);
		lc_buf_consume(&ep->in, flen);
		if (ep == &c->src)
			c->prog.t_src_msg = lc_now_ms();
		else
			c->prog.t_dst_msg = lc_now_ms();
		if (r != 0)
			return r;
	}
	if (r < 0)
		return lc_err_set(e, LC_ERR_PROTO, "%s: bad control frame "
		    "(is '%s' really lanecp?)", ep->name, lc__ctl_agent_cmd(c));
	return 0;
}

int
lc__ctl_grace(uint64_t *out, struct lc_err *e)
{
	return lc_setting_uint("GRACE_S", 1, LC_PING_GRACE_MAX,
	    LC_AGENT_GRACE_S, out, e);
}

static int
lc_ctl_step(struct lc_ctl *c, struct lc_err *e)
{
	uint64_t grace;
	int r;

	/* the sink's HELLO need not be in (negotiate.c) */
	if (c->phase == LC_CTL_HELLO && c->src.hello_seen &&
	    (r = lc__ctl_negotiate(c, e)) != 0)
		return r;
	if (c->phase >= LC_CTL_LISTING && c->phase < LC_CTL_BYE &&
	    lc_now_ms() >= c->next_ping) {
		struct lc_msg_ping pg;
		if ((r = lc__ctl_grace(&grace, e)) != 0)
			return r;
		pg.grace_s = (uint32_t)grace;
		c->next_ping = lc_now_ms() + LC_PING_MS;
		if ((r = lc_msg_put_ping(&c->src.out, &pg)) != 0 ||
		    (r = lc_msg_put_ping(&c->dst_ep.out, &pg)) != 0)
			return lc_err_set(e, -r, "control output");
	}
	if (c->src_done && c->sink_done && c->files.done == c->files.total &&
	    c->phase < LC_CTL_BYE && (r = lc__ctl_del_step(c, e)) != 0)
		return r < 0 ? r : 0;	/* deletions first */
	if (c->src_done && c->sink_done && c->files.done == c->files.total &&
	    c->phase < LC_CTL_BYE) {
		c->phase = LC_CTL_BYE;
		c->res->ns = lc_now_ns() - c->prog.t_start;
		if ((r = lc_msg_put_empty(&c->src.out, LC_MSG_BYE)) != 0 ||
		    (r = lc_msg_put_empty(&c->dst_ep.out, LC_MSG_BYE)) != 0)
			return lc_err_set(e, -r, "control output");
	}
	return 0;
}

static int
lc_ctl_signal(int fd, struct lc_err *e)
{
	unsigned char signo = 0;

	if (read(fd, &signo, 1) != 1)
		return 0;
	lc_err_set(e, LC_ERR_CANCELED, "interrupted by signal %d", signo);
	e->signo = signo;
	return -LC_ERR_CANCELED;
}

/* The remote push script's part (push.h), before any HELLO is sent. */
static int
lc_ctl_boot(struct lc_ctl *c, struct lc_endpoint *ep, int signal_fd,
    struct lc_err *e)
{
	int r;

	r = lc_endpoint_boot(ep, lc__ctl_agent_cmd(c), signal_fd,
	    c->o->timeout_s != 0 ? (int)c->o->timeout_s * 1000 : -1, e);
	if (r == 1 && (r = lc_ctl_signal(signal_fd, e)) == 0)
		r = lc_err_set(e, LC_ERR_CANCELED, "interrupted");
	return r;
}

/*
 * The copy is over once both BYEs are out: SINK_DONE, SRC_DONE and every
 * FILE_DONE are in, so every file is in place and checked.  A local
 * agent's answer costs nothing and ends its thread; a remote one's would
 * cost a round trip and tells nothing more (the agent exits on BYE, or on
 * the EOF behind it), so it is not waited for.  1/0.
 */
static int
lc_ctl_over(const struct lc_ctl *c)
{
	const struct lc_endpoint *eps[2] = { &c->src, &c->dst_ep };
	const bool byes[2] = { c->src_bye, c->dst_bye };

	if (c->phase != LC_CTL_BYE)
		return 0;
	for (int i = 0; i < 2; i++)
		if (!byes[i] && !(eps[i]->remote &&
		    lc_buf_len(&eps[i]->out) == 0))
			return 0;
	return 1;
}

static int
lc_ctl_loop(struct lc_ctl *c, int signal_fd, struct lc_err *e)
{
	struct lc_endpoint *eps[2] = { &c->src, &c->dst_ep };
	struct pollfd pfd[4];
	int r;

	c->prog.t_src_msg = c->prog.t_dst_msg = c->prog.t_progress =
	    lc_now_ms();
	while (!lc_ctl_over(c)) {
		int timeout = c->o->progress_ms != 0 || c->o->timeout_s != 0 ||
		    c->o->live_progress || c->o->json_progress ? 200 :
		    c->phase >= LC_CTL_LISTING ? LC_PING_MS : -1;

		for (int i = 0; i < 2; i++) {
			pfd[i].fd = eps[i]->eof ? -1 : eps[i]->fd;
			pfd[i].events = POLLIN |
			    (lc_buf_len(&eps[i]->out) > 0 ? POLLOUT : 0);
		}
		pfd[2].fd = signal_fd;
		pfd[2].events = POLLIN;
		/* --also's chain: the target before has made more */
		pfd[3].fd = lc__ctl_fed_watch(c) ? lc_feed_fd(c->o->feed_in) :
		    -1;
		pfd[3].events = POLLIN;
		if (poll(pfd, 4, timeout) < 0 && errno != EINTR)
			return lc_err_sys(e, LC_ERR_INTERNAL, errno, "poll");
		if (pfd[3].fd >= 0 && (pfd[3].revents & POLLIN))
			lc_feed_drain(c->o->feed_in);
		if (signal_fd >= 0 && (pfd[2].revents & POLLIN) &&
		    (r = lc_ctl_signal(signal_fd, e)) != 0)
			return r;
		for (int i = 0; i < 2; i++) {
			if (pfd[i].revents != 0 &&
			    (r = lc_ctl_serve(c, eps[i], pfd[i].revents, e)) != 0)
				return r;
		}
		if ((r = lc_ctl_step(c, e)) != 0 ||
		    (r = lc__ctl_fed_pump(c, e)) != 0)
			return r;
		for (int i = 0; i < 2; i++) {
			if (lc_endpoint_flush(eps[i]) != 0)
				return lc_endpoint_lost(eps[i],
				    lc__ctl_agent_cmd(c), e);
		}
		lc__ctl_tick(c);
		if ((r = lc__ctl_watchdog(c, e)) != 0)
			return r;
	}
	return 0;
}

/*
 * A data stream that breaks is often the echo of the other end's failure:
 * a sink that hits a full disk stops its streams, and the source may
 * report the broken stream first.  When an agent's ERROR says only that a
 * stream failed, give the other agent up to LC_CAUSE_WAIT_MS to say why,
 * and report its reason (and exit status) instead.
 */
static int
lc_ctl_root_cause(struct lc_ctl *c, int r, struct lc_err *e)
{
	struct lc_endpoint *other;
	const uint8_t *payload;
	size_t plen, flen;
	uint8_t type;
	uint64_t end;

	if (r != -LC_ERR_STREAM || c->err_ep == NULL)
		return r;
	other = c->err_ep == &c->src ? &c->dst_ep : &c->src;
	end = lc_now_ms() + LC_CAUSE_WAIT_MS;
	for (;;) {
		struct pollfd pfd;
		uint64_t now;

		while (lc_msg_peek(lc_buf_ptr(&other->in),
		    lc_buf_len(&other->in), &type, &payload, &plen,
		    &flen) == 1) {
			struct lc_err oe;
			int code;

			lc_err_clear(&oe);
			code = type == LC_MSG_ERROR ?
			    -lc_ctl_remote_error(other, payload, plen, &oe) : 0;
			lc_buf_consume(&other->in, flen);
			if (code == 0 || code == LC_ERR_STREAM ||
			    code == LC_ERR_EOF || code == LC_ERR_CANCELED)
				continue;
			lc_log_verbose("%s", e->msg);	/* the echo */
			*e = oe;
			return -code;
		}
		if (other->eof || other->fd < 0 || (now = lc_now_ms()) >= end)
			return r;
		pfd.fd = other->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, (int)(end - now)) <= 0 ||
		    lc_endpoint_read(other) < 0)
			return r;
	}
}

/*
 * The copy failed or was interrupted: unless the sink itself failed, ask
 * it to stop (STOP) and wait a little for its final count of the bytes
 * that reached the files (SINK_STOPPED), so that --json and -l report
 * what is on disk, not its last heartbeat.
 */
static void
lc_ctl_stop_sink(struct lc_ctl *c)
{
	struct lc_endpoint *ep = &c->dst_ep;
	struct lc_msg_xfer_done d;
	struct lc_msg_progress pr;
	struct lc_err se;
	const uint8_t *payload;
	size_t plen, flen;
	uint8_t type;
	uint64_t end;

	/* a sink that failed, or has been silent (stuck), will not answer */
	if (c->phase == LC_CTL_HELLO || c->sink_done || c->err_ep == ep ||
	    ep->fd < 0 || ep->eof ||
	    lc_now_ms() - c->prog.t_dst_msg > LC_STOP_WAIT_MS ||
	    lc_msg_put_empty(&ep->out, LC_MSG_STOP) != 0)
		return;
	end = lc_now_ms() + LC_STOP_WAIT_MS;
	for (;;) {
		struct pollfd pfd;
		uint64_t now;

		if (lc_endpoint_flush(ep) != 0)
			return;
		while (lc_msg_peek(lc_buf_ptr(&ep->in), lc_buf_len(&ep->in),
		    &type, &payload, &plen, &flen) == 1) {
			int got = 0;

			/* a count that cannot be true is not taken */
			if (type == LC_MSG_SINK_STOPPED &&
			    lc_msg_get_xfer_done(payload, plen, &d) == 0) {
				if (lc__ctl_sink_bytes(c, "SINK_STOPPED",
				    d.bytes, &se) == 0)
					c->bytes_done = d.bytes;
				else
					lc_log_warn("%s (not taken)", se.msg);
				got = 1;
			} else if (type == LC_MSG_PROGRESS &&
			    lc_msg_get_progress(payload, plen, &pr) == 0 &&
			    pr.bytes > c->bytes_done &&
			    lc__ctl_sink_bytes(c, "PROGRESS", pr.bytes,
			    &se) == 0)
				c->bytes_done = pr.bytes;
			lc_buf_consume(&ep->in, flen);
			if (got || type == LC_MSG_ERROR)
				return;
		}
		if (ep->eof || (now = lc_now_ms()) >= end)
			return;
		pfd.fd = ep->fd;
		pfd.events = POLLIN | (lc_buf_len(&ep->out) > 0 ? POLLOUT : 0);
		if (poll(&pfd, 1, (int)(end - now)) < 0 && errno != EINTR)
			return;
		if ((pfd.revents & ~POLLOUT) != 0 && lc_endpoint_read(ep) < 0)
			return;
	}
}

int
lc_copy_run(const struct lc_copy_opts *o, int signal_fd,
    struct lc_copy_result *res, struct lc_err *e)
{
	struct lc_ctl c;
	int r;

	memset(&c, 0, sizeof(c));
	memset(res, 0, sizeof(*res));
	c.dp.test_proxy = -1;
	c.o = o;
	c.res = res;
	lc_endpoint_init(&c.src);
	lc_endpoint_init(&c.dst_ep);
	if (lc__ctl_files_init(&c) != 0) {
		r = lc_err_set(e, LC_ERR_NOMEM, "out of memory");
		goto out;
	}
	if ((r = lc__ctl_parse_args(&c, e)) != 0)
		goto out;
	/* the HELLOs first: the push script's command counts its bytes */
	if ((r = lc__ctl_send_hello(&c.src)) != 0 ||
	    (r = lc__ctl_send_hello(&c.dst_ep)) != 0) {
		lc_err_set(e, -r, "control output");
		goto out;
	}
	/* the sink's errors first: a bad target is usually the cheaper
	   mistake */
	if (o->login_mu != NULL)
		pthread_mutex_lock(o->login_mu);
	r = lc_ctl_open_both(&c, e);
	lc_ctl_ssh_why(&c);
	if (r == 0 && (r = lc_ctl_boot(&c, &c.dst_ep, signal_fd, e)) == 0)
		r = lc_ctl_boot(&c, &c.src, signal_fd, e);
	if (o->login_mu != NULL)
		pthread_mutex_unlock(o->login_mu);
	if (r != 0)
		goto out;
	c.prog.t_start = lc_now_ns();
	if ((r = lc_ctl_loop(&c, signal_fd, e)) != 0) {
		r = lc_ctl_root_cause(&c, r, e);
		goto out;
	}
	res->ran = 1;
	if (res->nfailed > 0) {
		char what[200];

		lc__ctl_failed_count(res, what, sizeof(what));
		r = lc_err_set(e, LC_ERR_PARTIAL, "%s could not be copied "
		    "(partial transfer); the rest was", what);
	}
 out:
	/* what was done, on failure too (--json, the -l result line) */
	res->files = c.files.written;
	res->updated = c.files.updated;
	res->updated_bytes = c.files.updated_bytes;
	res->entries = c.files.done;
	lc__ctl_failed_more(&c);
	if (r != 0)
		lc_ctl_stop_sink(&c);
	if (o->progress_ms != 0 || o->live_progress) {
		lc__ctl_progress_set(&c);
		lc_progress_finish(&c.prog.bar, lc__ctl_done(&c),
		    r == 0 ? LC_PROGRESS_DONE : r == -LC_ERR_PARTIAL ?
		    LC_PROGRESS_PARTIAL : r == -LC_ERR_CANCELED ?
		    LC_PROGRESS_INTERRUPTED : LC_PROGRESS_FAILED);
	}
	res->bytes = c.bytes_done;
	/* the source's count is a second old after a failure: what reached
	   the files was sent (holes aside, which are not) */
	res->sent = c.chk.src_sent > c.bytes_done || r == 0 ? c.chk.src_sent :
	    c.bytes_done;
	res->wire = c.chk.src_wire;
	if (res->ns == 0 && c.prog.t_start != 0)
		res->ns = lc_now_ns() - c.prog.t_start;
	lc__ctl_path_free(&c);
	/* close both channels first so that both agents stop at once */
	if (c.src.fd >= 0) {
		close(c.src.fd);
		c.src.fd = -1;
	}
	if (c.dst_ep.fd >= 0) {
		close(c.dst_ep.fd);
		c.dst_ep.fd = -1;
	}
	/* after a copy that succeeded, a remote agent's exit status tells
	   nothing: only our BYE must have gone out */
	lc_endpoint_close(&c.src, LC_CLOSE_WAIT_MS, r == 0 && !LC_SANITIZED,
	    NULL);
	lc_endpoint_close(&c.dst_ep, LC_CLOSE_WAIT_MS,
	    r == 0 && !LC_SANITIZED, NULL);
	lc_endpoint_free(&c.src);
	lc_endpoint_free(&c.dst_ep);
	lc_testhook_proxy_stop(c.dp.test_proxy);
	lc_secmem_free(c.key, LC_KEY_LEN);
	lc__ctl_files_free(&c);
	lc__ctl_del_free(&c);
	free(c.args.srcs);
	free(c.chk.reqs);
	return r;
}

