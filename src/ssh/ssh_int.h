/*
 * SSH internals shared by ssh.c (session, login, connect, free),
 * ssh_tcp.c (TCP connect), ssh_hostkey.c (host key check), ssh_jump.c
 * (ProxyJump and ProxyCommand), ssh_channel.c (exec and forward
 * channels), auth.c (authentication), keyfile.c (identity files),
 * askpass.c (passphrase prompt) and pump.c (the channel pump).  Not part
 * of the library's interface: see ssh.h for that.
 */
#ifndef LANECP_SSH_INT_H
#define LANECP_SSH_INT_H

#include <limits.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <libssh2.h>

#include "err.h"
#include "knownhosts.h"
#include "sshconf.h"
#include "clock.h"
#include "wake.h"

struct lc_ssh {
	LIBSSH2_SESSION *sess;
	LIBSSH2_CHANNEL *chan;
	int sock;
	int handshaken;
	char host[256];		/* as given, for log lines */
	char name[600];		/* user@host */
	char peer[NI_MAXHOST];
	char local[NI_MAXHOST];
	char target[256];	/* HostName as configured */
	int step_timeout_ms;	/* per waiting step after the handshake */
	unsigned keepalive_s;	/* 0: off */

	/*
	 * Proxied connections (ProxyJump, ProxyCommand): sock is one end of
	 * a socketpair whose other end is the pump_fd of the jump host's
	 * forward (via, owned: freed after this session) or the ProxyCommand
	 * child's stdin/stdout (proxy_pid, reaped by lc_ssh_free()).
	 */
	struct lc_ssh *via;
	pid_t proxy_pid;	/* 0: none */
	int proxied;
	int fwd;		/* the pump bridges a direct-tcpip channel
				 * (lc_ssh_forward), not an exec channel */
	int exec_pending;	/* the exec request is sent, its answer
				 * not in: the pump takes it (ssh_channel.c) */

	/* the pump */
	int pump_fd;		/* its end of the socketpair */
	struct lc_wake wake;
	pthread_t pump;
	int pump_started;
	atomic_bool stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int sync_ready;		/* mu and cv initialized */
	/* under mu: */
	int done;
	int sent;		/* the caller's input and EOF went out */
	int status;
	char signame[32];
	/*
	 * Remote stderr lines of an exec channel from before its first
	 * stdout byte, '\n'-terminated (cut at the end): a command that ends
	 * without answering ("bash: lanecp: command not found") is reported
	 * in one line by lc_ssh_early_stderr(); otherwise they are logged
	 * when its first stdout arrives, or at lc_ssh_free().
	 */
	char early[4096];

	/* the OpenSSH transport (sshprog.c): ssh runs the command or the
	   forward, the pump thread above reads its stderr and reaps it;
	   NULL with libssh2 */
	struct lc__sshprog *prog;

	/* why libssh2 could not serve this host where ssh could
	   (lc_ssh_opts.limit), NULL: no such reason; prompted: a
	   passphrase was asked for */
	const char *limit;
	int prompted;

	/* a host key algorithm libssh2 lacks whose key type known_hosts
	   holds for the host, when it holds none libssh2 has; else NULL */
	const char *kh_only;
};

/* One identity file and what we know about it before trying it. */
struct lc_ssh_id {
	char path[PATH_MAX];
	char pub[PATH_MAX + 8];
	int exists;
	int has_pub;
	int encrypted;
	int offered;		/* its key was already offered by the agent */
	unsigned char *blob;	/* public key, if known */
	size_t bloblen;
};

/* The local user and home directory, shared by every hop. */
struct lc_ssh_env {
	char luser[256];
	char home[PATH_MAX];
	char *limit;		/* lc_ssh_opts.limit */
	size_t limit_sz;
};

/* One machine to log in to: a jump host or the target. */
struct lc_ssh_hop {
	const char *host;	/* name as given (an alias, say) */
	const char *user;	/* user@ or NULL */
	unsigned port;		/* :port, 0: from the config */
	const char *identity_file;	/* -i (the target only) */
	int jump;		/* a jump host (its proxy config is ignored) */
};

/* The known_hosts files to read, and the user file new keys go to. */
struct lc_ssh_khfiles {
	const char *user[LC_SSHCONF_MAX_FILES];
	size_t nuser;
	const char *all[2 * LC_SSHCONF_MAX_FILES];
	size_t nall;
	char defaults[2][PATH_MAX];
};

struct lc_ssh_opts;

/* ssh.c */

/* The session's last libssh2 error message ("no session" without one). */
const char *lc__ssh_liberr(struct lc_ssh *s);

/* Is rc a session-level libssh2 error (connection unusable)?  1/0. */
int lc__ssh_fatal(int rc);

/* Deadline for one waiting step from now, in lc_now_ms() time; 0: none. */
uint64_t lc__ssh_deadline(const struct lc_ssh *s);

/*
 * Wait until libssh2 can make progress on the socket, or the deadline
 * (0: none) passes.  Returns 0, -LC_ERR_TIMEOUT (the session's last error
 * then says so) or -LC_ERR_CONNECT (poll failed).
 */
int lc__ssh_waitsock(struct lc_ssh *s, uint64_t deadline);

/*
 * Resolve hop through ssh_config into conf, with the hop's user and port
 * filled in (conf->user: the user to log in as; conf->port: never 0).  A
 * jump host's own ProxyJump and ProxyCommand are dropped.  Returns 0 or
 * an error from lc_sshconf_resolve() (e says it).
 */
int lc__ssh_resolve(const struct lc_ssh_opts *o, const struct lc_ssh_env *env,
    const struct lc_ssh_hop *hop, struct lc_sshconf *conf, struct lc_err *e);

/*
 * Log in to one machine: a new lc_ssh on fd (a socketpair end from a
 * forward or a ProxyCommand) or, with fd < 0, over TCP to conf's HostName;
 * host key check and authentication as for any host.  fd, via and pid
 * pass to the new connection in every case (freed with it on error).
 * Returns 0 with *out set, or -LC_ERR_* (e says why).
 */
int lc__ssh_login(const struct lc_ssh_opts *o, const struct lc_ssh_env *env,
    const struct lc_ssh_hop *hop, const struct lc_sshconf *conf, int fd,
    struct lc_ssh *via, pid_t pid, struct lc_ssh **out, struct lc_err *e);

/* ssh_tcp.c */

/* ServerAliveInterval * ServerAliveCountMax in ms, at most INT_MAX. */
int lc__ssh_alive_ms(unsigned interval_s, unsigned count);

/*
 * Connect to host port (af: 4, 6 or 0 for either) by the deadline (0:
 * none), trying each address in turn; s->sock, s->peer and s->local are
 * set and the socket options applied (keepalive from s->keepalive_s and
 * alive_count, SO_SNDBUF sndbuf if > 0).  Returns 0 or -LC_ERR_CONNECT.
 */
int lc__ssh_tcp(struct lc_ssh *s, const char *host, unsigned port, int af,
    uint64_t deadline, unsigned alive_count, int sndbuf, struct lc_err *e);

/* ssh_algs.c */

/*
 * Of want (NULL-terminated, in order), those in sup[0..nsup) as a comma
 * list in out: returns how many (0: none), or -LC_ERR_TOOBIG when out is
 * too small.
 */
int lc__ssh_algs_list(const char *const *sup, int nsup,
    const char *const *want, char *out, size_t outsz);

/*
 * Before the handshake: offer ssh's default key exchange, cipher and MAC
 * algorithms that libssh2 implements, in ssh's order.  0 or
 * -LC_ERR_INTERNAL (libssh2 has none of one kind).
 */
int lc__ssh_algo_prefs(struct lc_ssh *s, struct lc_err *e);

/* ssh_hostkey.c */

/*
 * Before the handshake: prefer the host key algorithms whose key type kh
 * has for names.  Returns 0 or -LC_ERR_INTERNAL.
 */
int lc__ssh_hostkey_prefs(struct lc_ssh *s, struct lc_knownhosts *kh,
    const char *const *names, size_t nnames, struct lc_err *e);

/* The known_hosts files c names (or ssh's defaults under home) into f. */
void lc__ssh_khfiles(const struct lc_sshconf *c, const char *home,
    struct lc_ssh_khfiles *f);

/*
 * After the handshake: check the server's host key against
 * RevokedHostKeys and kh (loaded from f) under StrictHostKeyChecking,
 * recording a new key in f's first user file when that allows it.
 * Returns 0 (accepted), -LC_ERR_HOSTKEY (refused: e says why),
 * -LC_ERR_CONNECT (no host key), -LC_ERR_NOMEM or -LC_ERR_INTERNAL.
 */
int lc__ssh_verify_host(struct lc_ssh *s, struct lc_knownhosts *kh,
    const struct lc_sshconf *c, const struct lc_ssh_khfiles *f,
    const char *home, const char *const *names, size_t nnames,
    struct lc_err *e);

/* ssh_jump.c */

/* Reap a ProxyCommand child (pid <= 0: none), killing it first if it
 * still runs. */
void lc__ssh_reap(pid_t pid);

/*
 * Log in to each host of the comma-separated ProxyJump list in turn, the
 * first over TCP, each later one through a forward on the one before,
 * and open a forward from the last to thost:tport.  *via receives the
 * last jump host (owning the ones before), *fd the socketpair end for the
 * target's session; names gets "JUMP1, JUMP2" for the -v line.  Returns
 * 0 or -LC_ERR_* (e names the jump host).
 */
int lc__ssh_chain(const struct lc_ssh_opts *o, const struct lc_ssh_env *env,
    const char *list, const char *thost, unsigned tport,
    struct lc_ssh **via, int *fd, char *names, size_t namesz,
    struct lc_err *e);

/*
 * Start the ProxyCommand tmpl (tokens expanded from c) as "/bin/sh -c
 * CMD" on one end of a socketpair; *fd receives the other end, *pid the
 * child.  Returns 0, -LC_ERR_CONFIG (bad token, too long),
 * -LC_ERR_CONNECT (cannot run it), -LC_ERR_NOMEM or -LC_ERR_INTERNAL.
 */
int lc__ssh_proxy_command(const char *tmpl, const struct lc_sshconf *c,
    pid_t *pid, int *fd, struct lc_err *e);

/* keyfile.c */

/*
 * Fill in what can be known about the identity file id->path before
 * trying it: exists, has_pub, encrypted, blob.  Never fails: what cannot
 * be read stays unknown (and is logged at verbose level).
 */
void lc__ssh_id_probe(struct lc_ssh_id *id);

/* askpass.c */

/*
 * Read a line from /dev/tty with echo off into buf (NUL terminated, cut
 * at bufsz - 1).  Signals that would stop or kill us restore the terminal
 * first and are then re-raised.  Returns 0, -LC_ERR_IO (no terminal, read
 * error) or -LC_ERR_CANCELED (a signal came; buf is wiped).
 */
int lc__ssh_askpass(const char *prompt, char *buf, size_t bufsz);

/* auth.c */

/*
 * Authenticate s as user with public keys: the agent's first, then
 * identity_file, the config's IdentityFile entries or the defaults under
 * home.  Returns 0, -LC_ERR_CONNECT (connection broke before a method
 * list came), -LC_ERR_AUTH (e says what was tried) or -LC_ERR_NOMEM.
 */
int lc__ssh_authenticate(struct lc_ssh *s, const struct lc_sshconf *c,
    const char *user, const char *identity_file, int batch,
    const char *home, struct lc_err *e);

/* pump.c */

/*
 * Receive window of a forwarding channel (lc_ssh_forward): libssh2 1.10
 * opens direct-tcpip channels with LIBSSH2_CHANNEL_WINDOW_DEFAULT (2 MiB,
 * 40 MiB/s on a 50 ms path); ssh_channel.c raises it to this right after
 * the open and the pump tops it up whenever it falls below half.
 */
#define LC_SSH_FWD_WINDOW (16u * 1024 * 1024)

/*
 * The pump thread's main (see pump.c): owns s->sess, s->chan and
 * s->pump_fd until it returns; publishes the exit status under s->mu.
 * With s->fwd set it bridges a direct-tcpip channel: no stderr, no exit
 * status, big reads and a receive window of LC_SSH_FWD_WINDOW.
 */
void *lc__ssh_pump_main(void *arg);

/* Log and forget the held early stderr lines (takes s->mu). */
void lc__ssh_log_early(struct lc_ssh *s);

/*
 * Internal (src/ssh/keyfile.c), for the identity probe, its tests and
 * fuzz_keyfile: find the public key and whether the private key is
 * encrypted in the text of an "openssh-key-v1" file (NUL terminated).  The
 * base64 between the BEGIN and END markers is decoded into scratch
 * (scratchsz >= its length, e.g. strlen(text)); for an unencrypted key
 * that is the private key itself, so scratch is cleansed (zeroed) on
 * every return.  Returns 0 with *encrypted set and *blob (malloc'd,
 * caller frees) and *bloblen, -LC_ERR_PROTO (not such a key, malformed),
 * -LC_ERR_TOOBIG (scratch too small) or -LC_ERR_NOMEM.
 */
int lc__ssh_openssh_key(const char *text, uint8_t *scratch,
    size_t scratchsz, int *encrypted, unsigned char **blob, size_t *bloblen);

/* sshprog.c: the OpenSSH transport (see the top of sshprog.c) */

/*
 * "Connect" s (new, empty) through the ssh program o->program: copy the
 * options, ask "ssh -G" for the user, HostName, port and proxies (name,
 * target, proxied, peer and local addresses).  0, -LC_ERR_USAGE (the
 * program cannot run, a host starting with '-'), -LC_ERR_CONFIG (ssh -G
 * failed: its first stderr line) or -LC_ERR_NOMEM; s->prog is set (freed
 * with s) in every case but allocation failure.
 */
int lc__sshprog_connect(const struct lc_ssh_opts *o, struct lc_ssh *s,
    struct lc_err *e);

/* lc_ssh_exec() and lc_ssh_forward() of a connection with s->prog. */
int lc__sshprog_exec(struct lc_ssh *s, const char *cmd, int *fd,
    struct lc_err *e);
int lc__sshprog_forward(struct lc_ssh *s, const char *host, uint16_t port,
    int *fd, struct lc_err *e);

/* lc_ssh_answered() of a connection with s->prog. */
void lc__sshprog_answered(struct lc_ssh *s);

/* lc_ssh_transport_err() of a connection with s->prog. */
int lc__sshprog_err(struct lc_ssh *s, int answered, struct lc_err *e);

/* 1 when the ssh -W of s (s->prog, s->fwd) has ended because the server
 * did not open its channel (then lc__sshprog_err() says so), else 0. */
int lc__sshprog_fwd_failed(struct lc_ssh *s);

/*
 * The LC_ERR_* code what ssh wrote in one stderr line says (HOSTKEY for
 * "Host key verification failed", AUTH for "Permission denied", CONFIG,
 * CONNECT), 0 for anything else.  For its unit test too.
 */
int lc__sshprog_classify(const char *line);

/* Free p after the pump thread was joined (its fds, a child never
 * watched).  NULL is fine. */
void lc__sshprog_free(struct lc__sshprog *p);

#endif
