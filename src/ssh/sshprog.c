/*
 * The OpenSSH transport (see ssh.h, lc_ssh_opts.program): the system's
 * ssh client carries the agent's command or a forward, as rsync -e and
 * bbcp do, so that the user's whole ssh setup applies (certificates,
 * ControlMaster, security keys, every cipher) and ssh itself checks the
 * host key and asks for passphrases (on /dev/tty or through SSH_ASKPASS:
 * its stdin and stdout are ours, its terminal is not taken).
 *
 * "Connecting" only asks ssh what it would do (ssh -G: user, HostName,
 * port, ProxyJump, ProxyCommand) for names and the data streams'
 * addresses; the connection is made by the ssh process that
 * lc_ssh_exec() ("ssh -T ... host -- CMD") or lc_ssh_forward() ("ssh -W
 * host:port", its own TCP connection: never a ControlMaster's) starts, on
 * one end of a socketpair (or the caller's descriptor) as stdin/stdout.
 *
 * Threads: one per ssh process (the struct's pump thread, s->pump),
 * which alone reads ssh's stderr (a pipe) and reaps the process; it holds
 * the first lines (s->early, like the libssh2 pump's early stderr) and
 * logs the rest, keeps the last two and what they say about a failure
 * for lc_ssh_transport_err(), and publishes the exit status under s->mu
 * for lc_ssh_wait().  When lc_ssh_free() stops it while ssh still runs it
 * sends SIGTERM, then SIGKILL after LC_SSHPROG_TERM_MS, and reaps: no
 * zombie, no orphan.
 */
#include "ssh.h"
#include "err.h"
#include "log.h"
#include "clock.h"
#include "fdio.h"
#include "thread.h"
#include "wake.h"
#include "ssh_int.h"
#include "sshconf.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define LC_SSHPROG_LINE 300	/* one stderr line kept, cut there */
#define LC_SSHPROG_G_MAX 65536	/* ssh -G output read */
#define LC_SSHPROG_TERM_MS 1000 /* SIGTERM to SIGKILL when stopping */
#define LC_SSHPROG_TICK_MS 100	/* reap check without a pidfd */
/* argv entries of one ssh command, with -p and the -o's */
#define LC_SSHPROG_ARGS (42 + 2 * LC_SSHCONF_OPTS_MAX)

extern char **environ;

struct lc__sshprog {
	char *program;
	char *config;	/* -F, or NULL */
	char *identity; /* -i, or NULL */
	char *jump;	/* -J, or NULL */
	char *user;	/* -l (user@ as given), or NULL */
	char *host;	/* as given */
	pid_t pid;	/* 0: none (yet, or reaped) */
	int errfd;	/* read end of ssh's stderr */
	/* -p (ssh://host:PORT/) or "", and the -o options as given */
	char port[8];
	char *opts[LC_SSHCONF_OPTS_MAX];
	size_t nopts;
	/* the stderr thread's line, then (under s->mu) what it learnt */
	char line[LC_SSHPROG_LINE];
	size_t linelen;
	int cls; /* LC_ERR_* that ssh's words say, 0: none */
	char last[2][LC_SSHPROG_LINE]; /* the last two lines, [1] newest */
	int signo;   /* ssh died of this signal (not our stop) */
	int stopped; /* we stopped it (lc_ssh_free) */
	int live;    /* s->mu: answered, log stderr as it comes */
	/* s->mu: -W's channel was not opened, administratively prohibited */
	int open_failed, prohibited;
	char to[300]; /* -W's host:port */
};

/* ------------------------------------------------------------------ */
/* What ssh said */

/* lc__sshprog_classify: sshprog_words.c */

/* Host key and authentication words outrank the rest (ssh says why the
 * connection closed after them). */
static int
lc_sshprog_rank(int code)
{
	if (code == LC_ERR_HOSTKEY)
		return 3;
	if (code == LC_ERR_AUTH)
		return 2;
	return code != 0;
}

/* One complete stderr line (NUL terminated in p->line). */
static void
lc_sshprog_line(struct lc_ssh *s)
{
	struct lc__sshprog *p = s->prog;
	int cls = lc__sshprog_classify(p->line), logit = 0;
	size_t n;

	if (p->line[0] == '\0')
		return;
	pthread_mutex_lock(&s->mu);
	if (lc_sshprog_rank(cls) > lc_sshprog_rank(p->cls))
		p->cls = cls;
	if (s->fwd && strstr(p->line, "open failed: ") != NULL) {
		p->open_failed = 1;
		if (strstr(p->line, "administratively prohibited") != NULL)
			p->prohibited = 1;
	}
	memcpy(p->last[0], p->last[1], sizeof(p->last[0]));
	snprintf(p->last[1], sizeof(p->last[1]), "%s", p->line);
	n = strlen(s->early);
	if (p->live)
		logit = 1;
	else if (n + strlen(p->line) + 2 <= sizeof(s->early))
		snprintf(s->early + n, sizeof(s->early) - n, "%s\n", p->line);
	else
		logit = 1;
	pthread_mutex_unlock(&s->mu);
	if (logit)
		lc_log_warn("[%s] %s", s->host, p->line);
}

static void
lc_sshprog_errbytes(struct lc_ssh *s, const char *b, size_t n)
{
	struct lc__sshprog *p = s->prog;

	for (size_t i = 0; i < n; i++) {
		if (b[i] == '\n' || p->linelen == sizeof(p->line) - 1) {
			size_t len = p->linelen;

			while (len > 0 && p->line[len - 1] == '\r')
				len--;
			p->linelen = len;
			p->line[p->linelen] = '\0';
			p->linelen = 0;
			lc_sshprog_line(s);
			if (b[i] == '\n')
				continue;
		}
		p->line[p->linelen++] = b[i] == '\0' ? '?' : b[i];
	}
}

/* Read what stderr has; 1 at EOF or error (the descriptor is closed). */
static int
lc_sshprog_drain(struct lc_ssh *s)
{
	struct lc__sshprog *p = s->prog;
	char buf[4096];
	ssize_t n;

	for (;;) {
		n = read(p->errfd, buf, sizeof(buf));
		if (n > 0) {
			lc_sshprog_errbytes(s, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		close(p->errfd);
		p->errfd = -1;
		return 1;
	}
}

/* ------------------------------------------------------------------ */
/* The thread: stderr, reaping, stopping */

static int
lc_sshprog_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

/* waitpid without blocking: 1 and *st when it has ended. */
static int
lc_sshprog_reaped(pid_t pid, int *st)
{
	pid_t w;

	while ((w = waitpid(pid, st, WNOHANG)) < 0 && errno == EINTR)
		;
	return w == pid || (w < 0 && errno == ECHILD);
}

static void
lc_sshprog_publish(struct lc_ssh *s, int st)
{
	struct lc__sshprog *p = s->prog;
	const char *sig;

	if (p->linelen > 0) {
		p->line[p->linelen] = '\0';
		p->linelen = 0;
		lc_sshprog_line(s);
	}
	pthread_mutex_lock(&s->mu);
	s->done = 1;
	s->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	if (WIFSIGNALED(st) && !p->stopped) {
		p->signo = WTERMSIG(st);
		sig = sigabbrev_np(p->signo);
		snprintf(s->signame, sizeof(s->signame), "%s",
		    sig != NULL ? sig : "?");
	}
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static void *
lc_sshprog_main(void *arg)
{
	struct lc_ssh *s = arg;
	struct lc__sshprog *p = s->prog;
	uint64_t kill_at = 0;
	int pidfd = lc_sshprog_pidfd(p->pid), st = 0, ended = 0;

	while (!ended) {
		struct pollfd pfd[3];
		int tmo = pidfd < 0 ? LC_SSHPROG_TICK_MS : -1;

		pfd[0].fd = p->errfd;
		pfd[1].fd = pidfd;
		pfd[2].fd = s->wake.rfd;
		for (int i = 0; i < 3; i++) {
			pfd[i].events = POLLIN;
			pfd[i].revents = 0;
		}
		if (kill_at != 0) {
			uint64_t now = lc_now_ms();
			tmo = now >= kill_at ? 0 : (int)(kill_at - now);
		}
		if (poll(pfd, 3, tmo) < 0 && errno != EINTR)
			break;
		if (p->errfd >= 0 &&
		    (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
			(void)lc_sshprog_drain(s);
		if (pfd[2].revents & POLLIN)
			lc_wake_drain(&s->wake);
		if (lc_sshprog_reaped(p->pid, &st)) {
			ended = 1;
			break;
		}
		if (atomic_load(&s->stop) && kill_at == 0) {
			p->stopped = 1;
			kill(p->pid, SIGTERM);
			kill_at = lc_now_ms() + LC_SSHPROG_TERM_MS;
		} else if (kill_at != 0 && lc_now_ms() >= kill_at) {
			kill(p->pid, SIGKILL);
			while (waitpid(p->pid, &st, 0) < 0 && errno == EINTR)
				;
			ended = 1;
		}
	}
	if (!ended) { /* poll failed: do not leave it behind */
		kill(p->pid, SIGKILL);
		while (waitpid(p->pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	p->pid = 0;
	/* what it wrote just before it ended (a grandchild holding the
	   pipe open does not keep us) */
	if (p->errfd >= 0)
		(void)lc_sshprog_drain(s);
	if (pidfd >= 0)
		close(pidfd);
	lc_sshprog_publish(s, st);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Starting ssh */

enum lc_sshprog_mode { LC_SSHPROG_G, LC_SSHPROG_EXEC, LC_SSHPROG_FWD };

/*
 * argv for mode into av (pointers into p and the arguments; fwd is the
 * "host:port" of -W): the program, its fixed options, the user's -F, -i,
 * -J and user, the host, and for EXEC "--" and the command.
 */
static void
lc_sshprog_argv(const struct lc__sshprog *p, enum lc_sshprog_mode mode,
    const char *cmd, const char *fwd, char *av[LC_SSHPROG_ARGS])
{
	/* no tty, no escape character, nothing forwarded that was not asked
	   for, no RemoteCommand or LocalCommand of the config in the way */
	static const char *const fixed[] = { "-T", "-e", "none", "-x", "-a",
		"-o", "ClearAllForwardings=yes", "-o", "RemoteCommand=none",
		"-o", "PermitLocalCommand=no", "-o", "RequestTTY=no" };
	size_t n = 0;

	av[n++] = p->program;
	if (mode == LC_SSHPROG_G)
		av[n++] = (char *)"-G";
	else
		for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
			av[n++] = (char *)fixed[i];
	if (mode == LC_SSHPROG_FWD) {
		av[n++] = (char *)"-oControlPath=none";
		av[n++] = (char *)"-W";
		av[n++] = (char *)fwd;
	}
	if (p->config != NULL) {
		av[n++] = (char *)"-F";
		av[n++] = p->config;
	}
	if (p->identity != NULL) {
		av[n++] = (char *)"-i";
		av[n++] = p->identity;
	}
	if (p->jump != NULL) {
		av[n++] = (char *)"-J";
		av[n++] = p->jump;
	}
	if (p->user != NULL) {
		av[n++] = (char *)"-l";
		av[n++] = p->user;
	}
	if (p->port[0] != '\0') {
		av[n++] = (char *)"-p";
		av[n++] = (char *)p->port;
	}
	/* after the fixed -o's: the first value obtained wins in ssh */
	for (size_t i = 0; i < p->nopts; i++) {
		av[n++] = (char *)"-o";
		av[n++] = p->opts[i];
	}
	av[n++] = p->host;
	if (mode == LC_SSHPROG_EXEC) {
		av[n++] = (char *)"--";
		av[n++] = (char *)cmd;
	}
	av[n] = NULL;
}

/*
 * Start av with io as its stdin and stdout (-1: /dev/null), out (if not
 * -1) as its stdout instead, and a new pipe as its stderr (*errfd, our
 * end, close-on-exec, non-blocking).  Signals at their defaults, none
 * blocked, in our process group (so that it may read /dev/tty for a
 * passphrase); no descriptor of ours above 2.
 */
static int
lc_sshprog_spawn(char *const av[], int io, int out, pid_t *pid, int *errfd,
    struct lc_err *e)
{
	static const int defsigs[] = { SIGPIPE, SIGINT, SIGTERM, SIGHUP,
		SIGQUIT, SIGCHLD };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, def;
	int ep[2], rc;

	*pid = 0;
	*errfd = -1;
	if (pipe2(ep, O_CLOEXEC) != 0)
		return lc_err_sys(e, LC_ERR_INTERNAL, errno, "pipe");
	posix_spawn_file_actions_init(&fa);
	if (io >= 0) {
		posix_spawn_file_actions_adddup2(&fa, io, 0);
		posix_spawn_file_actions_adddup2(&fa, io, 1);
	} else {
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY,
		    0);
	}
	if (out >= 0)
		posix_spawn_file_actions_adddup2(&fa, out, 1);
	posix_spawn_file_actions_adddup2(&fa, ep[1], 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
#endif
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigemptyset(&def);
	for (size_t i = 0; i < sizeof(defsigs) / sizeof(defsigs[0]); i++)
		sigaddset(&def, defsigs[i]);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setflags(&at,
	    POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawnp(pid, av[0], &fa, &at, av, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(ep[1]);
	if (rc != 0) {
		*pid = 0;
		close(ep[0]);
		return lc_err_sys(e, LC_ERR_USAGE, rc,
		    "cannot run the ssh "
		    "program '%s' (--ssh): %s",
		    av[0], strerror(rc));
	}
	(void)lc_set_nonblock(ep[0], 1);
	*errfd = ep[0];
	return 0;
}

/* ------------------------------------------------------------------ */
/* Connect: ask ssh -G */

static char *
lc_sshprog_dup(const char *v, int *bad)
{
	char *d;

	if (v == NULL || v[0] == '\0')
		return NULL;
	if ((d = strdup(v)) == NULL)
		*bad = 1;
	return d;
}

/* The value of "key value" in ssh -G's output, or NULL. */
static const char *
lc_sshprog_key(char *out, const char *key, char *val, size_t valsz)
{
	size_t kl = strlen(key);

	for (char *l = out; l != NULL && *l != '\0';) {
		char *nl = strchr(l, '\n');
		size_t ll = nl != NULL ? (size_t)(nl - l) : strlen(l);

		if (ll > kl && strncmp(l, key, kl) == 0 && l[kl] == ' ') {
			snprintf(val, valsz, "%.*s", (int)(ll - kl - 1),
			    l + kl + 1);
			return val;
		}
		l = nl != NULL ? nl + 1 : NULL;
	}
	return NULL;
}

/* Run ssh -G; its stdout into out (NUL terminated), its stderr's first
 * line into err. */
static int
lc_sshprog_ask(struct lc_ssh *s, char *out, size_t outsz, struct lc_err *e)
{
	char *av[LC_SSHPROG_ARGS], err[LC_SSHPROG_LINE];
	size_t got = 0, elen = 0;
	int op[2], errfd = -1, st = 0, r, open_n = 2;
	pid_t pid = 0;

	lc_sshprog_argv(s->prog, LC_SSHPROG_G, NULL, NULL, av);
	if (pipe2(op, O_CLOEXEC) != 0)
		return lc_err_sys(e, LC_ERR_INTERNAL, errno, "pipe");
	r = lc_sshprog_spawn(av, -1, op[1], &pid, &errfd, e);
	close(op[1]);
	if (r != 0) {
		close(op[0]);
		return r;
	}
	err[0] = '\0';
	while (open_n > 0) {
		struct pollfd pfd[2] = { { .fd = op[0], .events = POLLIN },
			{ .fd = errfd, .events = POLLIN } };
		ssize_t n;

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (op[0] >= 0 && pfd[0].revents != 0) {
			n = got + 1 < outsz
			    ? read(op[0], out + got, outsz - got - 1)
			    : 0;
			if (n > 0)
				got += (size_t)n;
			else if (n == 0 || errno != EINTR) {
				close(op[0]);
				op[0] = -1;
				open_n--;
			}
		}
		if (errfd >= 0 && pfd[1].revents != 0) {
			char b[512];

			n = read(errfd, b, sizeof(b));
			if (n > 0 && elen + 1 < sizeof(err)) {
				size_t k = (size_t)n < sizeof(err) - 1 - elen
				    ? (size_t)n
				    : sizeof(err) - 1 - elen;
				memcpy(err + elen, b, k);
				elen += k;
			} else if (n == 0 ||
			    (n < 0 && errno != EINTR && errno != EAGAIN)) {
				close(errfd);
				errfd = -1;
				open_n--;
			}
		}
	}
	if (op[0] >= 0)
		close(op[0]);
	if (errfd >= 0)
		close(errfd);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	out[got] = '\0';
	err[elen] = '\0';
	err[strcspn(err, "\r\n")] = '\0';
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return lc_err_set(e, LC_ERR_CONFIG,
		    "%s: '%s -G' failed "
		    "(%s %d)%s%s",
		    s->host, s->prog->program,
		    WIFEXITED(st) ? "exit" : "signal",
		    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
		    err[0] ? ": " : "", err);
	return 0;
}

/* s->peer and s->local: where ssh will connect, as far as we can tell
 * here (the first address of HostName; our address towards it). */
static void
lc_sshprog_addrs(struct lc_ssh *s, const char *port, const char *family)
{
	struct addrinfo hints, *res = NULL;
	struct sockaddr_storage me;
	socklen_t melen = sizeof(me);
	int fd;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_DGRAM;
	hints.ai_family = strcmp(family, "inet") == 0 ? AF_INET
	    : strcmp(family, "inet6") == 0	      ? AF_INET6
						      : AF_UNSPEC;
	if (getaddrinfo(s->target, port, &hints, &res) != 0)
		return;
	if (getnameinfo(res->ai_addr, res->ai_addrlen, s->peer, sizeof(s->peer),
		NULL, 0, NI_NUMERICHOST) != 0)
		s->peer[0] = '\0';
	fd = socket(res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0 &&
	    getsockname(fd, (struct sockaddr *)&me, &melen) == 0 &&
	    getnameinfo((struct sockaddr *)&me, melen, s->local,
		sizeof(s->local), NULL, 0, NI_NUMERICHOST) != 0)
		s->local[0] = '\0';
	if (fd >= 0)
		close(fd);
	freeaddrinfo(res);
}

int
lc__sshprog_connect(const struct lc_ssh_opts *o, struct lc_ssh *s,
    struct lc_err *e)
{
	struct lc__sshprog *p;
	char *out = NULL, user[256], port[16], fam[16], pj[16], pc[16];
	int bad = 0, r;

	if (o->host[0] == '-')
		return lc_err_set(e, LC_ERR_USAGE, "bad host name '%.64s'",
		    o->host);
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	s->prog = p;
	p->errfd = -1;
	p->program = lc_sshprog_dup(o->program, &bad);
	p->config = lc_sshprog_dup(o->config_file, &bad);
	p->identity = lc_sshprog_dup(o->identity_file, &bad);
	p->jump = lc_sshprog_dup(o->jump, &bad);
	p->user = lc_sshprog_dup(o->user, &bad);
	p->host = lc_sshprog_dup(o->host, &bad);
	if (o->port > 0 && o->port <= 65535)
		snprintf(p->port, sizeof(p->port), "%u", o->port);
	if (o->noptions > LC_SSHCONF_OPTS_MAX)
		return lc_err_set(e, LC_ERR_USAGE, "more than %d -o options",
		    LC_SSHCONF_OPTS_MAX);
	for (size_t i = 0; i < o->noptions; i++) {
		char *d = lc_sshprog_dup(o->options[i], &bad);

		if (d != NULL)
			p->opts[p->nopts++] = d;
	}
	if (bad || (out = malloc(LC_SSHPROG_G_MAX)) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	if (p->program == NULL)
		return lc_err_set(e, LC_ERR_USAGE, "--ssh: no program");
	snprintf(s->host, sizeof(s->host), "%s", o->host);
	if ((r = lc_sshprog_ask(s, out, LC_SSHPROG_G_MAX, e)) != 0)
		goto out;
	if (lc_sshprog_key(out, "user", user, sizeof(user)) == NULL)
		snprintf(user, sizeof(user), "%s", o->user ? o->user : "?");
	if (lc_sshprog_key(out, "hostname", s->target, sizeof(s->target)) ==
	    NULL)
		snprintf(s->target, sizeof(s->target), "%s", o->host);
	if (lc_sshprog_key(out, "port", port, sizeof(port)) == NULL)
		snprintf(port, sizeof(port), "22");
	if (lc_sshprog_key(out, "addressfamily", fam, sizeof(fam)) == NULL)
		snprintf(fam, sizeof(fam), "any");
	s->proxied = (lc_sshprog_key(out, "proxyjump", pj, sizeof(pj)) &&
			 strcasecmp(pj, "none") != 0) ||
	    (lc_sshprog_key(out, "proxycommand", pc, sizeof(pc)) &&
		strcasecmp(pc, "none") != 0);
	snprintf(s->name, sizeof(s->name), "%s@%s", user, o->host);
	if (!s->proxied)
		lc_sshprog_addrs(s, port, fam);
	lc_log_debug("%s: through '%s' (HostName %s, port %s%s)", s->name,
	    p->program, s->target, port, s->proxied ? ", proxied" : "");
	r = 0;
out:
	free(out);
	return r;
}

/* ------------------------------------------------------------------ */
/* The command, a forward */

/* Start ssh (av) on a socketpair or given, and its thread. */
static int
lc_sshprog_start(struct lc_ssh *s, char *const av[], int given, int *fd,
    struct lc_err *e)
{
	struct lc__sshprog *p = s->prog;
	int sv[2] = { -1, -1 }, r;

	if (given >= 0)
		sv[1] = given;
	else if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return lc_err_sys(e, LC_ERR_INTERNAL, errno, "socketpair");
	if (lc_wake_open(&s->wake) != 0) {
		r = lc_err_set(e, LC_ERR_INTERNAL, "ssh: setup failed");
		goto out;
	}
	if ((r = lc_sshprog_spawn(av, sv[1], -1, &p->pid, &p->errfd, e)) != 0)
		goto out;
	if (lc_thread_start(&s->pump, "lc-ssh-prog", lc_sshprog_main, s) != 0) {
		/* cannot watch it: do not leave it running */
		kill(p->pid, SIGKILL);
		lc__ssh_reap(p->pid);
		p->pid = 0;
		r = lc_err_set(e, LC_ERR_INTERNAL, "cannot start a thread");
		goto out;
	}
	s->pump_started = 1;
	if (given < 0) {
		*fd = sv[0];
		sv[0] = -1; /* transferred */
	}
	r = 0;
out:
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]); /* ssh has its copy */
	return r;
}

int
lc__sshprog_exec(struct lc_ssh *s, const char *cmd, int *fd, struct lc_err *e)
{
	char *av[LC_SSHPROG_ARGS];

	*fd = -1;
	if (cmd == NULL || s->pump_started)
		return lc_err_set(e, LC_ERR_INTERNAL,
		    "lc_ssh_exec: one command per connection");
	lc_sshprog_argv(s->prog, LC_SSHPROG_EXEC, cmd, NULL, av);
	lc_log_debug("%s: running %s (the OpenSSH transport)", s->name,
	    s->prog->program);
	return lc_sshprog_start(s, av, -1, fd, e);
}

int
lc__sshprog_forward(struct lc_ssh *s, const char *host, uint16_t port, int *fd,
    struct lc_err *e)
{
	char *av[LC_SSHPROG_ARGS], *to = s->prog->to;
	int given = *fd;

	*fd = -1;
	if (host == NULL || port == 0 || s->pump_started) {
		if (given >= 0)
			close(given);
		return lc_err_set(e, LC_ERR_INTERNAL,
		    "lc_ssh_forward: one channel per connection");
	}
	snprintf(to, sizeof(s->prog->to),
	    strchr(host, ':') != NULL ? "[%s]:%u" : "%s:%u", host,
	    (unsigned)port);
	s->fwd = 1;
	lc_sshprog_argv(s->prog, LC_SSHPROG_FWD, NULL, to, av);
	lc_log_debug("%s: forwarding to %s with '%s -W'", s->name, to,
	    s->prog->program);
	return lc_sshprog_start(s, av, given, fd, e);
}

int
lc__sshprog_err(struct lc_ssh *s, int answered, struct lc_err *e)
{
	struct lc__sshprog *p = s->prog;
	char said[2 * LC_SSHPROG_LINE + 4], held[sizeof(s->early)];
	char sig[sizeof(s->signame)];
	int code, st, signo;
	size_t n;

	pthread_mutex_lock(&s->mu);
	if (!s->done) {
		pthread_mutex_unlock(&s->mu);
		return 0;
	}
	st = s->status;
	signo = p->signo;
	memcpy(sig, s->signame, sizeof(sig));
	code = p->cls;
	n = strlen(p->last[0]);
	snprintf(said, sizeof(said), "%s%s%s", p->last[0],
	    n == 0			   ? ""
		: p->last[0][n - 1] == '.' ? " "
					   : "; ",
	    p->last[1]);
	pthread_mutex_unlock(&s->mu);
	if (st != 255 && signo == 0)
		return 0; /* the remote command's own status */
	/* the whole of what it said, for -v; the one line below says it */
	lc_ssh_early_stderr(s, held, sizeof(held));
	if (held[0] != '\0')
		lc_log_verbose("%s: ssh said: %s", s->name, held);
	if (signo != 0)
		return lc_err_set(e, LC_ERR_AGENT,
		    "%s: the ssh program was "
		    "killed by signal %s: connection to the remote agent lost",
		    s->name, sig);
	if (p->open_failed) { /* s->fwd; no lock needed: s->done */
		lc_err_set(e, LC_ERR_CONNECT,
		    "%s: cannot forward to %s: %s (ssh -W, exit 255)", s->name,
		    p->to, said);
		e->sys_errno = p->prohibited ? EACCES : 0;
		return -LC_ERR_CONNECT;
	}
	if (code == 0 || (code == LC_ERR_CONNECT && answered))
		code = answered ? LC_ERR_AGENT : LC_ERR_CONNECT;
	return lc_err_set(e, code, "%s: %s%s%s(ssh exit 255)", s->name,
	    answered ? "connection to the remote agent lost: " : "",
	    said[0] ? said : "", said[0] ? " " : "");
}

int
lc__sshprog_fwd_failed(struct lc_ssh *s)
{
	int r;

	pthread_mutex_lock(&s->mu);
	r = s->done && s->prog->open_failed;
	pthread_mutex_unlock(&s->mu);
	return r;
}

void
lc__sshprog_answered(struct lc_ssh *s)
{
	pthread_mutex_lock(&s->mu);
	if (s->prog->live) {
		pthread_mutex_unlock(&s->mu);
		return;
	}
	s->prog->live = 1;
	pthread_mutex_unlock(&s->mu);
	lc__ssh_log_early(s);
}

void
lc__sshprog_free(struct lc__sshprog *p)
{
	if (p == NULL)
		return;
	if (p->errfd >= 0)
		close(p->errfd);
	lc__ssh_reap(p->pid); /* a thread never started */
	free(p->program);
	free(p->config);
	free(p->identity);
	free(p->jump);
	free(p->user);
	free(p->host);
	for (size_t i = 0; i < p->nopts; i++)
		free(p->opts[i]);
	free(p);
}
