/*
 * SSH connection: proxied connections (see ssh_int.h).
 *
 * ProxyJump / -J: a chain of sessions, the first over TCP, each later
 * one through a direct-tcpip forward on the one before (lc_ssh_forward(),
 * whose pump bridges the channel to a socketpair), and a last forward to
 * the target; each jump host owns the one before it (s->via).
 * ProxyCommand: a child "/bin/sh -c CMD" on one end of a socketpair; the
 * session takes the other end as its socket and reaps the child when it
 * is freed (lc__ssh_reap).
 */
#include "ssh.h"
#include "err.h"
#include "log.h"
#include "parse.h"
#include "sshconf.h"
#include "ssh_int.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define LC_SSH_JUMP_MAX 16		/* hosts in one ProxyJump / -J list */
#define LC_SSH_PROXYCMD_MAX 4096	/* expanded ProxyCommand */

extern char **environ;

/* Reap a ProxyCommand child, killing it first if it still runs. */
void
lc__ssh_reap(pid_t pid)
{
	pid_t w;
	int st;

	if (pid <= 0)
		return;
	while ((w = waitpid(pid, &st, WNOHANG)) < 0 && errno == EINTR)
		;
	if (w != 0)
		return;
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

/* Put "jump host NAME: " in front of e's message, keeping its code. */
static int
lc_ssh_hop_err(struct lc_err *e, int r, const char *name)
{
	char msg[LC_ERR_MSG_MAX];

	if (e == NULL)
		return r;
	snprintf(msg, sizeof(msg), "%s", e->msg);
	lc_err_set(e, -r, "jump host %s: %.*s", name,
	    (int)(sizeof(msg) - 40), msg);
	return r;
}

/*
 * Split one ProxyJump / -J entry "[user@]host[:port]" ("[v6addr]:port"
 * too) in place.  Returns 0 or -LC_ERR_USAGE.
 */
static int
lc_ssh_jump_parse(char *spec, struct lc_ssh_hop *hop, struct lc_err *e)
{
	char *at, *h, *colon, *end, orig[256];
	uint64_t v;

	snprintf(orig, sizeof(orig), "%s", spec);
	memset(hop, 0, sizeof(*hop));
	hop->jump = 1;
	if ((at = strrchr(spec, '@')) != NULL) {
		*at = '\0';
		hop->user = spec;
		h = at + 1;
		if (*hop->user == '\0')
			goto bad;
	} else {
		h = spec;
	}
	if (*h == '[') {
		if ((end = strchr(h, ']')) == NULL)
			goto bad;
		*end = '\0';
		colon = end[1] == ':' ? end + 1 : NULL;
		if (end[1] != '\0' && colon == NULL)
			goto bad;
		h++;
	} else {
		colon = strchr(h, ':');
		if (colon != NULL && strchr(colon + 1, ':') != NULL)
			colon = NULL;	/* a bare IPv6 address */
	}
	if (colon != NULL) {
		*colon = '\0';
		if (lc_parse_uint(colon + 1, 1, 65535, &v) != 0)
			goto bad;
		hop->port = (unsigned)v;
	}
	if (*h == '\0')
		goto bad;
	hop->host = h;
	return 0;
 bad:
	return lc_err_set(e, LC_ERR_USAGE, "bad jump host '%.200s' (want "
	    "[user@]host[:port])", orig);
}

/*
 * Open a forward on via (a jump host, which it then owns: freed on error)
 * to host:port; *fd receives the socketpair end for the next session.
 */
static int
lc_ssh_hop_forward(struct lc_ssh *via, const char *host, unsigned port,
    int *fd, struct lc_err *e)
{
	int r;

	*fd = -1;
	if ((r = lc_ssh_forward(via, host, (uint16_t)port, fd, e)) != 0) {
		lc_ssh_hop_err(e, r, via->host);
		lc_ssh_free(via);
	}
	return r;
}

/*
 * Log in to each host of the comma-separated list in turn, the first
 * over TCP, each later one through a forward on the one before, and open
 * a forward from the last to thost:tport.  *via receives the last jump
 * host (owning the ones before), *fd the socketpair end for the target's
 * session; names gets "JUMP1, JUMP2" for the -v line.
 */
int
lc__ssh_chain(const struct lc_ssh_opts *o, const struct lc_ssh_env *env,
    const char *list, const char *thost, unsigned tport,
    struct lc_ssh **via, int *fd, char *names, size_t namesz,
    struct lc_err *e)
{
	struct lc_sshconf conf;
	struct lc_ssh_hop hop;
	struct lc_ssh *prev = NULL, *cur;
	char *buf, *spec, *save = NULL;
	size_t n = 0, len;
	int r = 0, hfd = -1;

	*via = NULL;
	*fd = -1;
	names[0] = '\0';
	memset(&conf, 0, sizeof(conf));
	if ((buf = strdup(list)) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	for (spec = strtok_r(buf, ",", &save); spec != NULL;
	    spec = strtok_r(NULL, ",", &save)) {
		if (++n > LC_SSH_JUMP_MAX) {
			r = lc_err_set(e, LC_ERR_USAGE, "more than %d jump "
			    "hosts", LC_SSH_JUMP_MAX);
			goto out;
		}
		len = strlen(names);
		snprintf(names + len, namesz - len, "%s%s", len > 0 ? ", " :
		    "", spec);
		if ((r = lc_ssh_jump_parse(spec, &hop, e)) != 0)
			goto out;
		lc_sshconf_free(&conf);
		if ((r = lc__ssh_resolve(o, env, &hop, &conf, e)) != 0) {
			lc_ssh_hop_err(e, r, hop.host);
			goto out;
		}
		if (prev != NULL && (r = lc_ssh_hop_forward(prev,
		    conf.hostname, conf.port, &hfd, e)) != 0) {
			prev = NULL;	/* freed */
			goto out;
		}
		r = lc__ssh_login(o, env, &hop, &conf, hfd, prev, 0, &cur, e);
		hfd = -1;	/* transferred */
		prev = NULL;	/* transferred */
		if (r != 0) {
			lc_ssh_hop_err(e, r, hop.host);
			goto out;
		}
		prev = cur;
	}
	if (prev == NULL) {
		r = lc_err_set(e, LC_ERR_USAGE, "empty jump host list");
		goto out;
	}
	if ((r = lc_ssh_hop_forward(prev, thost, tport, fd, e)) != 0) {
		prev = NULL;	/* freed */
		goto out;
	}
	*via = prev;
	prev = NULL;	/* transferred */
 out:
	lc_ssh_free(prev);
	lc_sshconf_free(&conf);
	free(buf);
	return r;
}
/*
 * ProxyCommand's tokens as ssh expands them: %h HostName, %p port, %r
 * remote user, %n the host as given, %%.  Returns 0 or -LC_ERR_CONFIG.
 */
static int
lc_ssh_proxy_expand(const char *tmpl, const struct lc_sshconf *c,
    char *out, size_t outsz, struct lc_err *e)
{
	char port[8];
	const char *p, *v;
	size_t n = 0, vl;

	snprintf(port, sizeof(port), "%u", (unsigned)c->port);
	for (p = tmpl; *p != '\0'; p++) {
		if (*p != '%') {
			v = p;
			vl = 1;
		} else {
			switch (*++p) {
			case '%': v = "%"; break;
			case 'h': v = c->hostname; break;
			case 'p': v = port; break;
			case 'r': v = c->user; break;
			case 'n': v = c->host; break;
			default:
				return lc_err_set(e, LC_ERR_CONFIG, "ProxyCommand"
				    ": unknown token %%%c", *p ? *p : ' ');
			}
			vl = strlen(v);
		}
		if (vl >= outsz - n)
			return lc_err_set(e, LC_ERR_CONFIG,
			    "ProxyCommand too long");
		memcpy(out + n, v, vl);
		n += vl;
	}
	out[n] = '\0';
	return 0;
}

/*
 * Start "/bin/sh -c CMD" with one end of a socketpair as its stdin and
 * stdout (stderr inherited, signals at their defaults, none blocked);
 * *fd receives the other end, *pid the child.
 */
int
lc__ssh_proxy_command(const char *tmpl, const struct lc_sshconf *c,
    pid_t *pid, int *fd, struct lc_err *e)
{
	static const int defsigs[] = { SIGPIPE, SIGINT, SIGTERM, SIGHUP,
	    SIGQUIT, SIGCHLD };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, def;
	char *cmd, *argv[4];
	size_t i;
	int sv[2] = { -1, -1 }, r, rc;

	*pid = 0;
	*fd = -1;
	if ((cmd = malloc(LC_SSH_PROXYCMD_MAX)) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	/* "exec CMD", as ssh runs it: the shell becomes the command, so the
	   SIGKILL that ends the connection (lc__ssh_reap) ends the command,
	   not a shell (dash forks it) whose child would outlive lanecp */
	memcpy(cmd, "exec ", 5);
	if ((r = lc_ssh_proxy_expand(tmpl, c, cmd + 5, LC_SSH_PROXYCMD_MAX - 5,
	    e)) != 0) {
		free(cmd);
		return r;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		free(cmd);
		return lc_err_sys(e, LC_ERR_INTERNAL, errno, "socketpair");
	}
	lc_log_debug("ProxyCommand: %s", cmd);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
	posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigemptyset(&def);
	for (i = 0; i < sizeof(defsigs) / sizeof(defsigs[0]); i++)
		sigaddset(&def, defsigs[i]);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
	    POSIX_SPAWN_SETSIGDEF);
	argv[0] = (char *)"sh";
	argv[1] = (char *)"-c";
	argv[2] = cmd;
	argv[3] = NULL;
	rc = posix_spawn(pid, "/bin/sh", &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(sv[1]);
	free(cmd);
	if (rc != 0) {
		*pid = 0;
		close(sv[0]);
		return lc_err_sys(e, LC_ERR_CONNECT, rc,
		    "cannot run the ProxyCommand for %s", c->host);
	}
	*fd = sv[0];
	return 0;
}
