#include "lanecp/endpoint.h"
#include "lanecp/log.h"
#include "lanecp/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define LC_READ_CHUNK 65536

void
lc_endpoint_init(struct lc_endpoint *ep)
{
	memset(ep, 0, sizeof(*ep));
	ep->fd = -1;
	ep->agent_fd = -1;
	lc_buf_init(&ep->in, LC_CTL_MAX + LC_READ_CHUNK + 4);
	lc_buf_init(&ep->out, 64u << 20);
}

static void *
lc_endpoint_agent_thread(void *arg)
{
	struct lc_endpoint *ep = arg;
	struct lc_agent_opts opts = { .restrict_dir = NULL, .local = 1,
		.transfer = ep->transfer[0] != '\0' ? ep->transfer : NULL };

	(void)lc_agent_run(ep->agent_fd, ep->agent_fd, &opts);
	return NULL;
}

int
lc_endpoint_open_local(struct lc_endpoint *ep, struct lc_err *e)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return lc_err_sys(e, LC_ERR_INTERNAL, errno, "socketpair");
	ep->remote = 0;
	snprintf(ep->name, sizeof(ep->name), "local");
	ep->fd = sv[0];
	ep->agent_fd = sv[1];
	if (lc_thread_start(&ep->thread, "lc-agent", lc_endpoint_agent_thread,
	    ep) != 0) {
		close(sv[0]);
		close(sv[1]);
		ep->fd = ep->agent_fd = -1;
		return lc_err_set(e, LC_ERR_INTERNAL, "cannot start agent");
	}
	ep->thread_started = 1;
	(void)lc_set_nonblock(ep->fd, 1);
	return 0;
}

int
lc_endpoint_open_remote(struct lc_endpoint *ep, const struct lc_ssh_opts *so,
    const char *agent_cmd, struct lc_err *e)
{
	char cmd[LC_PATH_MAX + 16 + 12 + LC_TRANSFER_HEX];
	int r, n;

	ep->remote = 1;
	snprintf(ep->name, sizeof(ep->name), "%s", so->host);
	/* the id on the command line lets a later attempt's sink recognize
	   this agent in /proc/PID/cmdline (lockholder.c) */
	n = snprintf(cmd, sizeof(cmd), "%s --agent%s%s", agent_cmd,
	    lc_transfer_valid(ep->transfer) ? " --transfer " : "",
	    lc_transfer_valid(ep->transfer) ? ep->transfer : "");
	if (n < 0 || (size_t)n >= sizeof(cmd))
		return lc_err_set(e, LC_ERR_USAGE, "-T: command too long");
	if ((r = lc_ssh_connect(so, &ep->ssh, e)) != 0)
		return r;
	snprintf(ep->name, sizeof(ep->name), "%s", lc_ssh_name(ep->ssh));
	if ((r = lc_ssh_exec(ep->ssh, cmd, &ep->fd, e)) != 0)
		return r;
	(void)lc_set_nonblock(ep->fd, 1);
	lc_log_verbose("%s: started '%s'", ep->name, cmd);
	return 0;
}

int
lc_endpoint_read(struct lc_endpoint *ep)
{
	uint8_t *p;
	ssize_t n;

	if (lc_buf_reserve(&ep->in, LC_READ_CHUNK, &p) != 0)
		return -LC_ERR_AGENT;
	n = read(ep->fd, p, LC_READ_CHUNK);
	lc_buf_unappend(&ep->in, n > 0 ? LC_READ_CHUNK - (size_t)n :
	    LC_READ_CHUNK);
	if (n == 0) {
		ep->eof = 1;
		return 0;
	}
	if (n < 0) {
		if (errno == EINTR || errno == EAGAIN)
			return 0;
		ep->eof = 1;
		return 0;	/* ECONNRESET and friends: the agent is gone */
	}
	return 0;
}

int
lc_endpoint_flush(struct lc_endpoint *ep)
{
	while (lc_buf_len(&ep->out) > 0) {
		ssize_t n = write(ep->fd, lc_buf_ptr(&ep->out),
		    lc_buf_len(&ep->out));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			return -LC_ERR_AGENT;
		}
		lc_buf_consume(&ep->out, (size_t)n);
	}
	return 0;
}

void
lc_endpoint_close(struct lc_endpoint *ep, int timeout_ms, int *status)
{
	char sig[32];
	int st = -1;

	if (ep->fd >= 0) {
		close(ep->fd);
		ep->fd = -1;
	}
	if (ep->thread_started) {
		pthread_join(ep->thread, NULL);
		ep->thread_started = 0;
		close(ep->agent_fd);
		ep->agent_fd = -1;
		st = 0;
	}
	if (ep->ssh != NULL)
		(void)lc_ssh_wait(ep->ssh, timeout_ms, &st, sig, sizeof(sig));
	if (status != NULL)
		*status = st;
}

int
lc_endpoint_lost(struct lc_endpoint *ep, const char *agent_cmd,
    struct lc_err *e)
{
	char sig[32] = "", said[300];
	int st = -1;

	if (ep->ssh == NULL)
		return lc_err_set(e, LC_ERR_INTERNAL,
		    "local agent stopped unexpectedly");
	if (ep->fd >= 0) {
		close(ep->fd);
		ep->fd = -1;
	}
	(void)lc_ssh_wait(ep->ssh, 2000, &st, sig, sizeof(sig));
	/* what it said before answering (the shell's "not found"), folded
	   into the one line below */
	lc_ssh_early_stderr(ep->ssh, said + 2, sizeof(said) - 2);
	if (said[2] != '\0')
		memcpy(said, ": ", 2);
	else
		said[0] = '\0';
	if (!ep->hello_seen && (st == 127 || st == 126))
		return lc_err_set(e, LC_ERR_NOAGENT, "%s: cannot run the remote "
		    "agent '%s' (exit %d%s); install lanecp there or name it "
		    "with -T PATH", ep->name, agent_cmd, st, said);
	if (sig[0] != '\0')
		return lc_err_set(e, LC_ERR_AGENT,
		    "%s: remote agent killed by signal %s%s", ep->name, sig,
		    said);
	/* a lanecp from before transfer ids rejects --transfer (usage) */
	if (!ep->hello_seen && st == 2 && lc_transfer_valid(ep->transfer))
		return lc_err_set(e, LC_ERR_AGENT, "%s: remote agent exited "
		    "with status 2 before answering (a lanecp there older "
		    "than this one does not know --transfer: upgrade it)%s",
		    ep->name, said);
	if (st >= 0)
		return lc_err_set(e, LC_ERR_AGENT,
		    "%s: remote agent exited with status %d%s%s", ep->name, st,
		    ep->hello_seen ? "" : " before answering", said);
	return lc_err_set(e, LC_ERR_AGENT, "%s: connection to the remote "
	    "agent lost%s", ep->name, said);
}

void
lc_endpoint_free(struct lc_endpoint *ep)
{
	lc_endpoint_close(ep, 0, NULL);
	lc_ssh_free(ep->ssh);
	ep->ssh = NULL;
	lc_buf_free(&ep->in);
	lc_buf_free(&ep->out);
}
