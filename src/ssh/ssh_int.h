/*
 * SSH internals shared by ssh.c (session, connect, exec), auth.c
 * (authentication), keyfile.c (identity files), askpass.c (passphrase
 * prompt) and pump.c (the exec channel pump).  Not part of the library's
 * interface: see lanecp/ssh.h for that.
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
	int status;
	char signame[32];
	/*
	 * Remote stderr lines of an exec channel from before its first
	 * stdout byte, '\n'-terminated (cut at the end): a command that ends
	 * without answering ("bash: lanecp: command not found") is reported
	 * in one line by lc_ssh_early_stderr(); otherwise they are logged
	 * when its first stdout arrives, or at lc_ssh_free().
	 */
	char early[600];
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

/* ssh.c */

/* The session's last libssh2 error message ("no session" without one). */
const char *lc__ssh_liberr(struct lc_ssh *s);

/* Is rc a session-level libssh2 error (connection unusable)?  1/0. */
int lc__ssh_fatal(int rc);
/* Log and forget the held early stderr lines (pump.c). */
void lc__ssh_log_early(struct lc_ssh *s);

/* Deadline for one waiting step from now, in lc_now_ms() time; 0: none. */
uint64_t lc__ssh_deadline(const struct lc_ssh *s);

/*
 * Wait until libssh2 can make progress on the socket, or the deadline
 * (0: none) passes.  Returns 0, -LC_ERR_TIMEOUT (the session's last error
 * then says so) or -LC_ERR_CONNECT (poll failed).
 */
int lc__ssh_waitsock(struct lc_ssh *s, uint64_t deadline);

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
 * 40 MiB/s on a 50 ms path); ssh.c raises it to this right after the open
 * and the pump tops it up whenever it falls below half.
 */
#define LC_SSH_FWD_WINDOW (16u * 1024 * 1024)

/*
 * The pump thread's main (see pump.c): owns s->sess, s->chan and
 * s->pump_fd until it returns; publishes the exit status under s->mu.
 * With s->fwd set it bridges a direct-tcpip channel: no stderr, no exit
 * status, big reads and a receive window of LC_SSH_FWD_WINDOW.
 */
void *lc__ssh_pump_main(void *arg);

#endif
