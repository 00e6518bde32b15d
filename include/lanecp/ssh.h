/*
 * SSH connection to a remote host (libssh2), and the remote agent's control
 * channel.
 *
 * lc_ssh_connect() resolves the host through ssh_config (sshconf.h),
 * connects TCP with ConnectTimeout, runs the SSH handshake, verifies the
 * host key against the known_hosts files (UserKnownHostsFile, default
 * ~/.ssh/known_hosts and ~/.ssh/known_hosts2, plus GlobalKnownHostsFile,
 * default /etc/ssh/ssh_known_hosts and /etc/ssh/ssh_known_hosts2) with
 * StrictHostKeyChecking semantics, and authenticates with ssh-agent
 * (SSH_AUTH_SOCK) and identity files (-i, IdentityFile, defaults).
 *
 * lc_ssh_exec() opens an exec channel and starts a pump thread that moves
 * bytes between the channel and one end of a socketpair; the caller gets
 * the other end and speaks the control protocol on it like on any fd.  The
 * libssh2 session is touched only by the pump thread from then on (libssh2
 * sessions are not thread safe).  The remote's stderr is relayed to the
 * local log line by line, prefixed with the host.  When the caller closes
 * its fd the pump sends EOF on the channel; when the channel reaches EOF the
 * pump shuts down its end of the socketpair, so the caller reads EOF.
 */
#ifndef LANECP_SSH_H
#define LANECP_SSH_H

#include <stddef.h>

#include "lanecp/err.h"
#include "lanecp/sshconf.h"

struct lc_ssh;

struct lc_ssh_opts {
	const char *host;	/* host or alias as given */
	const char *user;	/* user@ from the command line, or NULL */
	const char *config_file;	/* -F FILE, or NULL */
	const char *identity_file;	/* -i FILE, or NULL */
	int batch;		/* never prompt (no tty or BatchMode) */
};

/*
 * Connect and authenticate.  Errors: -LC_ERR_CONFIG, -LC_ERR_CONNECT
 * (resolve/TCP/timeout/handshake), -LC_ERR_HOSTKEY (unknown or changed key,
 * e names host, key type, SHA256 fingerprint and the known_hosts file and
 * line to fix), -LC_ERR_AUTH (no method worked; e lists what was tried).
 * On success *out must be released with lc_ssh_free().
 */
int lc_ssh_connect(const struct lc_ssh_opts *o, struct lc_ssh **out,
    struct lc_err *e);

/*
 * Run cmd on the remote host.  *fd receives the local end of a socketpair
 * connected to the command's stdin/stdout.  One exec per connection.
 */
int lc_ssh_exec(struct lc_ssh *s, const char *cmd, int *fd,
    struct lc_err *e);

/*
 * Wait (up to timeout_ms) for the remote command to end after the caller
 * closed its fd or saw EOF.  *status is its exit status (-1 if unknown),
 * signame its exit signal name ("" if none).  Returns 0 or -LC_ERR_TIMEOUT.
 */
int lc_ssh_wait(struct lc_ssh *s, int timeout_ms, int *status,
    char *signame, size_t signamesz);

/* Numeric address of the sshd we reached, and ours on that connection. */
const char *lc_ssh_peer_addr(const struct lc_ssh *s);
const char *lc_ssh_local_addr(const struct lc_ssh *s);

/* "user@host" for messages. */
const char *lc_ssh_name(const struct lc_ssh *s);

/* Disconnect, stop the pump, free.  NULL is fine. */
void lc_ssh_free(struct lc_ssh *s);

#endif
