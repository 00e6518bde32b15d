#include "endpoint.h"
#include "fdio.h"
#include "log.h"
#include "path.h"
#include "push.h"
#include "thread.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/crypto.h>

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

/* The copy of what went first: it may hold SINK_TARGET's and LISTEN's
 * keys (prime). */
static void
lc_endpoint_forget_boot(struct lc_endpoint *ep)
{
	if (ep->boot_hello != NULL)
		OPENSSL_cleanse(ep->boot_hello, ep->boot_hello_len);
	free(ep->boot_hello);
	ep->boot_hello = NULL;
	ep->boot_hello_len = 0;
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

/*
 * The agent to push, read and hashed (lc_push_agent_get: 6 MB, some 45
 * ms) while the SSH connection is being made, not before it.
 */
struct lc_push_prefetch {
	const struct lc_push_agent *pa;
	struct lc_err e;
	int r;
};

static void *
lc_push_prefetch_main(void *arg)
{
	struct lc_push_prefetch *pf = arg;

	pf->r = lc_push_agent_get(&pf->pa, &pf->e);
	return NULL;
}

int
lc_endpoint_open_remote(struct lc_endpoint *ep, const struct lc_ssh_opts *so,
    const char *agent_cmd, struct lc_err *e)
{
	const struct lc_push_agent *pa = NULL;
	char cmd[LC_PUSH_CMD_MAX + LC_PATH_MAX];
	struct lc_push_prefetch pf;
	pthread_t t;
	int r, n, fetching = 0;

	ep->remote = 1;
	snprintf(ep->name, sizeof(ep->name), "%s", so->host);
	memset(&pf, 0, sizeof(pf));
	if (ep->push)
		fetching = lc_thread_start(&t, "lc-push-agent",
		    lc_push_prefetch_main, &pf) == 0;
	lc_log_verbose("%s: SSH transport: %s%s%s", so->host,
	    so->program != NULL ? "openssh (" : "libssh2",
	    so->program != NULL ? so->program : "",
	    so->program != NULL ? ")" : "");
	r = lc_ssh_connect(so, &ep->ssh, e);
	if (fetching)
		pthread_join(t, NULL);
	else if (ep->push) /* no thread: here, after all */
		pf.r = lc_push_agent_get(&pf.pa, &pf.e);
	if (r != 0)
		return r;
	snprintf(ep->name, sizeof(ep->name), "%s", lc_ssh_name(ep->ssh));
	if (ep->prime != NULL && (r = ep->prime(ep->prime_arg, e)) != 0)
		return r;
	pa = pf.pa;
	if (ep->push && pf.r != 0) {
		/* cannot bring one: start lanecp as without the push */
		lc_log_warn("cannot push the agent if %s lacks lanecp: %s",
		    so->host, pf.e.msg);
		ep->push = 0;
	}
	/* the id on the command line lets a later attempt's sink recognize
	   this agent in /proc/PID/cmdline (lockholder.c) */
	if (ep->push) {
		lc_endpoint_forget_boot(ep);
		ep->boot_hello_len = lc_buf_len(&ep->out);
		if ((ep->boot_hello = malloc(ep->boot_hello_len + 1)) == NULL)
			return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
		memcpy(ep->boot_hello, lc_buf_ptr(&ep->out),
		    ep->boot_hello_len);
		n = lc_push_command(pa, ep->transfer, ep->boot_hello_len, cmd,
		    sizeof(cmd)) == 0 ? 0 : -1;
	}
	else
		n = snprintf(cmd, sizeof(cmd), "%s --agent%s%s", agent_cmd,
		    lc_transfer_valid(ep->transfer) ? " --transfer " : "",
		    lc_transfer_valid(ep->transfer) ? ep->transfer : "");
	if (n < 0 || (size_t)n >= sizeof(cmd))
		return lc_err_set(e, LC_ERR_USAGE, "-T: command too long");
	if ((r = lc_ssh_exec(ep->ssh, cmd, &ep->fd, e)) != 0)
		return r;
	(void)lc_set_nonblock(ep->fd, 1);
	if (ep->push)
		lc_log_debug("%s: started the agent start script (%s)",
		    ep->name, pa->dir);
	else
		lc_log_verbose("%s: started '%s'", ep->name, cmd);
	return 0;
}

/* The remote command wrote its first byte (see lc_ssh_answered). */
static void
lc_endpoint_answered(struct lc_endpoint *ep)
{
	if (!ep->answered && ep->ssh != NULL)
		lc_ssh_answered(ep->ssh);
	ep->answered = 1;
}

/*
 * Wait until ep->fd is ready for ev (POLLIN or POLLOUT) or signal_fd is
 * readable.  Returns the ready revents of ep->fd, 0 on timeout, -1 for a
 * signal.
 */
static int
lc_boot_wait(struct lc_endpoint *ep, short ev, int signal_fd, int timeout_ms)
{
	struct pollfd pfd[2];
	int n;

	pfd[0].fd = ep->fd;
	pfd[0].events = ev;
	pfd[1].fd = signal_fd;
	pfd[1].events = POLLIN;
	for (;;) {
		pfd[0].revents = pfd[1].revents = 0;
		n = poll(pfd, 2, timeout_ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		if (signal_fd >= 0 && (pfd[1].revents & POLLIN))
			return -1;
		return pfd[0].revents;
	}
}

/*
 * One BOOT line into line (without the newline), read byte by byte so
 * that nothing of the agent's output after it is taken.  0, 1 (signal),
 * 2 when first is set and the output is not a BOOT line (sshd ran a
 * forced command, the agent itself: what was read is in ep->in), or an
 * error (EOF: what happened to the remote command).
 */
static int
lc_boot_line(struct lc_endpoint *ep, const char *agent_cmd, int signal_fd,
    int timeout_ms, int first, char *line, size_t linesz, struct lc_err *e)
{
	static const char pfx[] = "LANECP-BOOT ";
	size_t got = 0;
	char shown[160];
	ssize_t n;
	int w;

	for (;;) {
		if ((w = lc_boot_wait(ep, POLLIN, signal_fd, timeout_ms)) < 0)
			return 1;
		if (w == 0)
			return lc_err_set(e, LC_ERR_TIMEOUT, "%s: no answer "
			    "from the remote shell that starts the agent",
			    ep->name);
		n = read(ep->fd, line + got, 1);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return lc_endpoint_lost(ep, agent_cmd, e);
		lc_endpoint_answered(ep);
		got++;
		if (got <= sizeof(pfx) - 1 && line[got - 1] != pfx[got - 1])
			break;
		if (line[got - 1] == '\n' || got >= linesz - 1)
			break;
	}
	if (got <= sizeof(pfx) - 1 && first) {
		/* not our script's output: the agent speaks (a forced
		   command), or the protocol check will say what it is */
		if (lc_buf_put(&ep->in, line, got) != 0)
			return lc_err_set(e, LC_ERR_NOMEM, "control input");
		return 2;
	}
	if (got <= sizeof(pfx) - 1 || line[got - 1] != '\n') {
		line[got] = '\0';
		lc_printable(line, shown, sizeof(shown));
		return lc_err_set(e, LC_ERR_AGENT, "%s: unexpected output from "
		    "the remote shell before the agent: '%s'", ep->name, shown);
	}
	line[got - 1] = '\0';
	memmove(line, line + sizeof(pfx) - 1, got - (sizeof(pfx) - 1));
	return 0;
}

/* Send "go" and the agent's bytes; stop early if the script says
 * something (an error).  0, 1 (signal) or an error. */
static int
lc_boot_send(struct lc_endpoint *ep, const struct lc_push_agent *pa,
    int signal_fd, int timeout_ms, struct lc_err *e)
{
	static const char go[] = "go\n";
	size_t off = 0, total = sizeof(go) - 1 + pa->len;
	ssize_t n;
	int w;

	while (off < total) {
		const uint8_t *p = off < sizeof(go) - 1 ?
		    (const uint8_t *)go + off : pa->data + off - (sizeof(go) - 1);
		size_t len = off < sizeof(go) - 1 ? sizeof(go) - 1 - off :
		    total - off;
		if ((w = lc_boot_wait(ep, POLLOUT | POLLIN, signal_fd,
		    timeout_ms)) < 0)
			return 1;
		if (w == 0)
			return lc_err_set(e, LC_ERR_TIMEOUT, "%s: pushing the "
			    "agent made no progress", ep->name);
		if ((w & POLLIN) || !(w & POLLOUT))
			return 0;	/* it answered early, or is gone */
		n = send(ep->fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return 0;	/* the line or EOF tells why */
		off += (size_t)n;
	}
	return 0;
}

int
lc_endpoint_boot(struct lc_endpoint *ep, const char *agent_cmd,
    int signal_fd, int timeout_ms, struct lc_err *e)
{
	const struct lc_push_agent *pa = NULL;
	char line[LC_PUSH_LINE_MAX], shown[LC_PUSH_LINE_MAX];
	char what[16], sys[64], mach[64];
	const char *arch;
	int r, end = 0, priv = 0;

	if (!ep->push || ep->booted)
		return 0;
	if ((r = lc_push_agent_get(&pa, e)) != 0)
		return r;
	/* the HELLO first: for the agent (PATH, cache, forced command), or
	   for the script to drop before a push */
	while (lc_buf_len(&ep->out) > 0) {
		if ((r = lc_boot_wait(ep, POLLOUT, signal_fd, timeout_ms)) < 0)
			return 1;
		if (r == 0)
			return lc_endpoint_lost(ep, agent_cmd, e);
		/* the script may refuse (and exit) before it reads anything:
		   then its line, already sent, says why */
		if (lc_endpoint_flush(ep) != 0)
			break;
	}
	r = lc_boot_line(ep, agent_cmd, signal_fd, timeout_ms, 1, line,
	    sizeof(line), e);
	if (r == 2) {
		ep->booted = 1;
		lc_log_verbose("%s: the agent started without the push script "
		    "(a forced command?)", ep->name);
		return 0;
	}
	if (r != 0)
		return r;
	if (strcmp(line, "path") == 0) {
		ep->boot_said = LC_BOOT_PATH;
		ep->booted = 1;
		lc_log_verbose("%s: started 'lanecp --agent' from the remote "
		    "PATH", ep->name);
		return 0;
	}
	lc_printable(line, shown, sizeof(shown));
	if (strncmp(line, "cached /", 8) == 0) {
		ep->boot_said = LC_BOOT_CACHED;
		ep->booted = 1;
		snprintf(ep->boot_path, sizeof(ep->boot_path), "%s", shown + 7);
		lc_log_verbose("using cached agent %s:%s", ep->name,
		    ep->boot_path);
		return 0;
	}
	if (strncmp(line, "unsafe ", 7) == 0)
		return lc_err_set(e, LC_ERR_AGENT, "%s: cannot cache the agent: "
		    "%s is not safe (" LC_PUSH_SAFE "), and mktemp -d made no "
		    "safe private directory either: install lanecp there, or "
		    "use -T PATH or --no-push", ep->name, shown + 7);
	if (strcmp(line, "nosum") == 0)
		return lc_err_set(e, LC_ERR_AGENT, "%s: no lanecp on the "
		    "remote PATH, and no sha256sum there to verify a pushed "
		    "agent: install lanecp there or name it with -T PATH",
		    ep->name);
	/* "push private SYS MACH DIR": DIR, the rest of the line, is what
	   was not safe */
	if (sscanf(line, "push %15s %63s %63s%n", what, sys, mach, &end) != 3)
		end = -1;
	else if ((priv = strcmp(what, "private") == 0) ? line[end] != ' ' ||
	    line[end + 1] == '\0' : line[end] != '\0')
		end = -1;
	if (end < 0)
		return lc_err_set(e, LC_ERR_AGENT, "%s: unexpected answer from "
		    "the remote shell that starts the agent: '%s'", ep->name,
		    shown);
	if (priv)
		lc_printable(line + end + 1, shown, sizeof(shown));
	snprintf(line, sizeof(line), "%s %s", sys, mach);
	if ((r = lc_push_local_arch(&arch, e)) != 0)
		return r;
	if (strcmp(line, arch) != 0) {
		lc_printable(line, shown, sizeof(shown));
		return lc_err_set(e, LC_ERR_AGENT, "%s: no lanecp on the remote "
		    "PATH, and its system (%s) is not this lanecp's (%s), so "
		    "its agent cannot be pushed there: install lanecp there or "
		    "name it with -T PATH", ep->name, shown, arch);
	}
	if (strcmp(what, "changed") == 0)
		lc_log_warn("%s: the cached agent does not match its SHA-256 "
		    "(changed or damaged): replacing it", ep->name);
	if (priv)
		lc_log_warn("%s: cannot cache the agent: %s is not safe ("
		    LC_PUSH_SAFE "): pushing it to a private temporary "
		    "directory, removed once it runs", ep->name, shown);
	if ((r = lc_boot_send(ep, pa, signal_fd, timeout_ms, e)) != 0)
		return r;
	if ((r = lc_boot_line(ep, agent_cmd, signal_fd, timeout_ms, 0, line,
	    sizeof(line), e)) != 0)
		return r;
	lc_printable(line, shown, sizeof(shown));
	if (strncmp(line, "pushed /", 8) == 0) {
		ep->boot_said = priv ? LC_BOOT_PRIVATE : LC_BOOT_PUSHED;
		ep->booted = 1;
		snprintf(ep->boot_path, sizeof(ep->boot_path), "%s", shown + 7);
		lc_log_verbose("pushed agent to %s:%s (%zu bytes%s)", ep->name,
		    ep->boot_path, pa->len, priv ? ", private, removed" : "");
		/* the script took the first HELLO */
		if (lc_buf_put(&ep->out, ep->boot_hello,
		    ep->boot_hello_len) != 0)
			return lc_err_set(e, LC_ERR_NOMEM, "control output");
		return 0;
	}
	if (strncmp(line, "bad ", 4) == 0)
		return lc_err_set(e, LC_ERR_AGENT, "%s: the agent pushed to %s "
		    "did not verify (SHA-256 mismatch after writing it: is "
		    "that disk full?)", ep->name, shown + 4);
	return lc_err_set(e, LC_ERR_AGENT, "%s: unexpected answer from the "
	    "remote shell that starts the agent: '%s'", ep->name, shown);
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
	if (n > 0 && !ep->answered)
		lc_endpoint_answered(ep);
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
lc_endpoint_close(struct lc_endpoint *ep, int timeout_ms, int sent_only,
    int *status)
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
	if (ep->ssh != NULL && sent_only)
		(void)lc_ssh_wait_sent(ep->ssh, timeout_ms);
	else if (ep->ssh != NULL)
		(void)lc_ssh_wait(ep->ssh, timeout_ms, &st, sig, sizeof(sig));
	if (status != NULL)
		*status = st;
}

int
lc_endpoint_lost(struct lc_endpoint *ep, const char *agent_cmd,
    struct lc_err *e)
{
	char sig[32] = "", said[300];
	int st = -1, r;

	if (ep->ssh == NULL)
		return lc_err_set(e, LC_ERR_INTERNAL,
		    "local agent stopped unexpectedly");
	if (ep->fd >= 0) {
		close(ep->fd);
		ep->fd = -1;
	}
	(void)lc_ssh_wait(ep->ssh, 2000, &st, sig, sizeof(sig));
	/* the OpenSSH transport: ssh itself failed (host key, auth) */
	if ((r = lc_ssh_transport_err(ep->ssh, ep->hello_seen || ep->answered,
	    e)) != 0)
		return r;
	/* what it said before answering (the shell's "not found"), folded
	   into the one line below */
	lc_ssh_early_stderr(ep->ssh, said + 2, sizeof(said) - 2);
	if (said[2] != '\0')
		memcpy(said, ": ", 2);
	else
		said[0] = '\0';
	if (!ep->hello_seen && (st == 127 || st == 126) &&
	    (ep->boot_said == LC_BOOT_CACHED ||
	    ep->boot_said == LC_BOOT_PUSHED ||
	    ep->boot_said == LC_BOOT_PRIVATE))
		return lc_err_set(e, LC_ERR_NOAGENT, "%s: cannot run the agent "
		    "%s there (exit %d%s): is its file system mounted noexec? "
		    "Set %s there, install lanecp, or name it with -T PATH",
		    ep->name, ep->boot_path, st, said,
		    ep->boot_said == LC_BOOT_PRIVATE ? "a safe XDG_CACHE_HOME "
		    "(or TMPDIR)" : "XDG_CACHE_HOME");
	if (!ep->hello_seen && (st == 127 || st == 126) && ep->no_push)
		return lc_err_set(e, LC_ERR_NOAGENT, "%s: cannot run the remote "
		    "agent '%s' (exit %d%s): install lanecp there or name it "
		    "with -T PATH (%s keeps lanecp from copying its agent "
		    "there)", ep->name, agent_cmd, st, said, ep->no_push == 2 ?
		    "LANECP_NO_PUSH" : "--no-push");
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
	lc_endpoint_close(ep, 0, 0, NULL);
	lc_ssh_free(ep->ssh);
	ep->ssh = NULL;
	lc_buf_free(&ep->in);
	lc_buf_free(&ep->out);
	lc_endpoint_forget_boot(ep);
}
