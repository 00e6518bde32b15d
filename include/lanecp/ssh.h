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
 *
 * Details of the behaviour, as ssh(1) where nothing else is said:
 *
 * - "~" is the home directory from the password database (as ssh), $HOME
 *   only when there is no entry.  The user is user@ from the command line,
 *   else User, else the local user.
 * - Timeouts.  ConnectTimeout (unset: the OS's TCP connect timeout, no
 *   limit on the handshake) bounds TCP connect and SSH handshake together.
 *   Each later step that waits for the server (authentication, opening the
 *   channel) is bounded by ServerAliveInterval * ServerAliveCountMax
 *   (defaults 15 s and 3), or 120 s with ServerAliveInterval 0.  Once the
 *   pump runs, libssh2 keepalives go out every ServerAliveInterval and the
 *   socket's TCP_USER_TIMEOUT is interval * count, so a silent peer ends
 *   the session (libssh2 cannot count unanswered keepalives itself).
 * - Host keys are looked up as "host" (port 22) or "[host]:port", for the
 *   HostName and then for the name as given; plain, hashed and wildcard
 *   entries count.  The host key algorithms whose key type known_hosts
 *   has for the host are asked for first.  Unknown keys are refused unless
 *   StrictHostKeyChecking is accept-new or no, which append the key to the
 *   first UserKnownHostsFile (hashed with HashKnownHosts yes; creating
 *   ~/.ssh 0700 and the file 0600); a changed key is always refused.
 *   @cert-authority and @revoked lines are ignored.
 * - Authentication: public keys only.  The agent's keys first (with
 *   IdentitiesOnly yes only those whose public key matches an identity
 *   file's), then -i FILE and the IdentityFile entries, else
 *   ~/.ssh/id_ed25519, id_ecdsa, id_rsa.  Missing files are skipped
 *   silently.  An encrypted key asks for its passphrase on /dev/tty,
 *   unless batch is set (or BatchMode yes): then it is skipped.
 */
#ifndef LANECP_SSH_H
#define LANECP_SSH_H

#include <stddef.h>
#include <stdint.h>

#include "lanecp/err.h"
#include "lanecp/sshconf.h"

struct lc_ssh;

struct lc_ssh_opts {
	const char *host;	/* host or alias as given */
	const char *user;	/* user@ from the command line, or NULL */
	const char *config_file;	/* -F FILE, or NULL */
	const char *identity_file;	/* -i FILE, or NULL */
	int batch;		/* never prompt (no tty or BatchMode) */
	int sndbuf;		/* SO_SNDBUF of the SSH socket in bytes, 0:
				 * system default.  Tests set a small one so
				 * that packets are often sent in parts. */
};

/*
 * Connect and authenticate.  Errors: -LC_ERR_CONFIG, -LC_ERR_CONNECT
 * (resolve/TCP/timeout/handshake; e.g. "cannot connect to host.example
 * port 22: Connection refused"), -LC_ERR_HOSTKEY (unknown or changed key,
 * e names host, key type, SHA256 fingerprint and the known_hosts file and
 * line to fix), -LC_ERR_AUTH (no method worked; e lists what was tried:
 * "user@host: authentication failed (tried: agent (2 keys),
 * /home/u/.ssh/id_ed25519)").  On success *out must be released with
 * lc_ssh_free().
 */
int lc_ssh_connect(const struct lc_ssh_opts *o, struct lc_ssh **out,
    struct lc_err *e);

/*
 * Run cmd on the remote host (through the user's shell, as ssh does).
 * *fd receives the local end of a socketpair connected to the command's
 * stdin/stdout (blocking, close-on-exec; the caller closes it).  Once the
 * pump has ended, reads give EOF and writes fail with EPIPE, so ignore
 * SIGPIPE or use MSG_NOSIGNAL.  One exec per connection.  Errors:
 * -LC_ERR_CONNECT (no channel), -LC_ERR_AGENT (the server refused to run
 * the command), -LC_ERR_INTERNAL.
 */
int lc_ssh_exec(struct lc_ssh *s, const char *cmd, int *fd,
    struct lc_err *e);

/*
 * Wait (up to timeout_ms; < 0: without limit) for the remote command to
 * end after the caller closed its fd or saw EOF.  *status is its exit
 * status (-1 if unknown), signame its exit signal name ("TERM"; "" if
 * none).  Status -1 with no signal name means the connection was lost
 * (the reason was logged).  Returns 0, -LC_ERR_TIMEOUT, or
 * -LC_ERR_INTERNAL when no command was started.
 */
int lc_ssh_wait(struct lc_ssh *s, int timeout_ms, int *status,
    char *signame, size_t signamesz);

/* Numeric address of the sshd we reached, and ours on that connection. */
const char *lc_ssh_peer_addr(const struct lc_ssh *s);
const char *lc_ssh_local_addr(const struct lc_ssh *s);

/* "user@host" for messages. */
const char *lc_ssh_name(const struct lc_ssh *s);

/*
 * Disconnect, stop the pump, free.  Safe at any point (the pump may still
 * be running; the remote command is then cut off), but not concurrently
 * with other calls on s.  NULL is fine.
 */
void lc_ssh_free(struct lc_ssh *s);

/*
 * Internal (src/keyfile.c), for the identity probe, its tests and
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

#endif
