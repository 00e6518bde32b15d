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
 * sessions are not thread safe).  The remote's stderr is copied to the
 * local log line by line, prefixed with the host.  When the caller closes
 * its fd the pump sends EOF on the channel; when the channel reaches EOF the
 * pump shuts down its end of the socketpair, so the caller reads EOF.
 * lc_ssh_forward() does the same for a direct-tcpip channel (the server
 * connects to a host and port) instead of a command, for bulk data.
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
 * - ProxyJump (or lc_ssh_opts.jump, -J, which overrides ProxyJump and
 *   ProxyCommand; "none": direct) "[user@]host[:port][,...]": each jump
 *   host is resolved through ssh_config under its own name (HostName,
 *   Port, User, IdentityFile, known hosts, StrictHostKeyChecking,
 *   timeouts; user@ and :port override User and Port) and gets the full
 *   host key check and authentication; -i (identity_file) is for the
 *   target only, as with ssh -J.  The first jump host is reached over
 *   TCP, each later one and the target through a direct-tcpip channel of
 *   the one before (lc_ssh_forward(), one pump thread per jump host).  A
 *   jump host's own ProxyJump / ProxyCommand is ignored (one level, not
 *   ssh's recursion).  Errors on a jump host keep their code and start
 *   with "jump host NAME: ".
 * - ProxyCommand: "/bin/sh -c CMD" (%h HostName, %p port, %r remote user,
 *   %n host as given, %%) with one end of a socketpair as its stdin and
 *   stdout (stderr inherited); the session runs on the other end.
 *   lc_ssh_free() reaps it, with SIGKILL if it still runs once the
 *   session is closed.  The first of ProxyJump / ProxyCommand wins.
 * - Every connection made this way is new: calling lc_ssh_connect() again
 *   with the same opts builds a fresh chain (or command).
 * - The OpenSSH transport (lc_ssh_opts.program set; sshprog.c): none of
 *   the above is lanecp's.  lc_ssh_connect() only runs "PROGRAM -G" with
 *   the options below (no network), lc_ssh_exec() runs "PROGRAM -T -e
 *   none -x -a -o ClearAllForwardings=yes -o RemoteCommand=none -o
 *   PermitLocalCommand=no -o RequestTTY=no [-F f] [-i f] [-J l] [-l user]
 *   host -- CMD" and lc_ssh_forward() "PROGRAM ... -W host:port ... host"
 *   on a socketpair (or the given descriptor), so ssh reads the user's
 *   config, checks the host key and authenticates (prompting on /dev/tty
 *   or through SSH_ASKPASS as it does; BatchMode is the config's).  Its
 *   stderr (its own words and the remote command's) is held and logged
 *   like the remote stderr above; lc_ssh_wait() gives its exit status
 *   (the remote command's, or 255), lc_ssh_transport_err() what a 255
 *   means.  lc_ssh_free() ends a running ssh with SIGTERM, then SIGKILL
 *   a second later, and reaps it.  The peer address is HostName as
 *   resolved here, the local one ours towards it (proxied: none).
 * - A proxied session has no TCP socket of its own: keepalives still go
 *   out, but a silent path is noticed through the first jump host's
 *   TCP_USER_TIMEOUT (or by the ProxyCommand), not the target's.
 */
#ifndef LANECP_SSH_H
#define LANECP_SSH_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "sshconf.h"

struct lc_ssh;

struct lc_ssh_opts {
	const char *host;	/* host or alias as given */
	const char *user;	/* user@ from the command line, or NULL */
	const char *config_file;	/* -F FILE, or NULL */
	const char *identity_file;	/* -i FILE, or NULL */
	const char *jump;	/* -J "host[,host...]" (overrides ProxyJump
				 * and ProxyCommand; "none": direct), or NULL:
				 * from ssh_config */
	int batch;		/* never prompt (no tty or BatchMode) */
	unsigned port;		/* ssh://host:PORT/ (as ssh -p: wins over
				 * ssh_config and -o Port), 0: none */
	/*
	 * -o options ("Keyword=value"), read before the ssh_config files
	 * (so they win) for the host itself, not for jump hosts (as ssh);
	 * the OpenSSH transport passes them on as -o.  NULL/0: none.
	 */
	const char *const *options;
	size_t noptions;
	const char *program;	/* the OpenSSH transport: run this ssh
				 * program (PATH searched) for the command
				 * and forwards instead of libssh2 (see
				 * below), or NULL */
	int sndbuf;		/* SO_SNDBUF of the SSH socket in bytes, 0:
				 * system default.  Tests set a small one so
				 * that packets are often sent in parts. */
	/*
	 * Out, may be NULL: when lc_ssh_connect() fails over libssh2 where
	 * the OpenSSH client would not (the server and libssh2 have no
	 * algorithm in common; known_hosts vouches for the host only
	 * through @cert-authority; authentication failed and the keys to
	 * try include one libssh2 cannot use with this server: RSA with a
	 * server that refuses SHA-1 signatures, a certificate, a security
	 * key), why, in a few words (at most limit_sz bytes); "" otherwise,
	 * and also when libssh2 asked for a passphrase (going over ssh
	 * would ask again).
	 */
	char *limit;
	size_t limit_sz;
};

/*
 * Connect and authenticate.  Errors: -LC_ERR_CONFIG, -LC_ERR_CONNECT
 * (resolve/TCP/timeout/handshake; e.g. "cannot connect to host.example
 * port 22: Connection refused"), -LC_ERR_HOSTKEY (unknown, changed or
 * revoked key, a host only a @cert-authority line covers, an unusable
 * RevokedHostKeys file; e names host, key type, SHA256 fingerprint and the
 * file and line), -LC_ERR_AUTH (no method worked; e lists what was tried:
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

/*
 * As lc_ssh_wait, but only until what the caller wrote before it closed
 * its fd, and EOF after it, have gone out on the connection, not for the
 * remote command's end (a round trip later): for a caller that needs
 * nothing more from the command.  The OpenSSH transport cannot tell, so
 * there it waits for ssh to end.  0, -LC_ERR_TIMEOUT or -LC_ERR_INTERNAL.
 */
int lc_ssh_wait_sent(struct lc_ssh *s, int timeout_ms);

/*
 * What the remote command wrote on stderr before its first stdout byte,
 * the lines joined by "; " (cut to outsz), or "" -- and it is then not
 * logged: for one-line messages about a command that ended without
 * answering (after lc_ssh_wait).  Lines held so far and not taken are
 * logged when stdout starts or by lc_ssh_free().
 */
void lc_ssh_early_stderr(struct lc_ssh *s, char *out, size_t outsz);

/*
 * The caller read the command's first stdout bytes: from now on its
 * stderr lines are logged as they come, and those held so far now.  The
 * libssh2 pump sees that itself (a no-op there); the OpenSSH transport
 * cannot (ssh writes to the caller's socket), so callers say it.
 */
void lc_ssh_answered(struct lc_ssh *s);

/*
 * After lc_ssh_wait() returned 0 for the command of the OpenSSH
 * transport: when ssh itself failed (exit 255, or killed by a signal)
 * rather than the remote command ending, set e to one line of what ssh
 * said last and return -LC_ERR_HOSTKEY ("Host key verification
 * failed"), -LC_ERR_AUTH ("Permission denied"), -LC_ERR_CONFIG,
 * -LC_ERR_CONNECT (anything else before the command answered: answered
 * 0) or -LC_ERR_AGENT (the connection lost after it answered, ssh
 * killed); the held stderr is taken (logged with -v).  0 otherwise, and
 * always for libssh2 (its failures come from lc_ssh_connect()).
 */
int lc_ssh_transport_err(struct lc_ssh *s, int answered, struct lc_err *e);

/*
 * Open a direct-tcpip channel from the server to host:port (the server
 * resolves and connects) on an authenticated connection that has no exec
 * and no forward yet (one channel per connection), and start its pump
 * thread, which from then on alone uses the session.
 *
 * If *fd >= 0 on entry, that descriptor (a connected TCP socket, say) is
 * what gets bridged; it passes to the call in every case (the pump
 * closes it when it ends, stopped by lc_ssh_free() at the latest; an
 * error closes it at once) and *fd is set to -1.  If *fd < 0 a socketpair is made and *fd
 * receives the caller's end (blocking, close-on-exec; the caller closes
 * it; use MSG_NOSIGNAL or ignore SIGPIPE).
 *
 * Bidirectional: EOF read from the descriptor becomes the channel's EOF,
 * the channel's EOF becomes shutdown(SHUT_WR) of the descriptor once its
 * data is delivered.  The pump ends when the server closes the channel
 * (sshd does once both directions are done) and its data is delivered,
 * or when the connection breaks (logged; the descriptor is then shut
 * down both ways); lc_ssh_free() stops it at any time.
 *
 * Throughput: 1 MiB buffers each way, 256 KiB reads, no per-byte work,
 * and a receive window of 16 MiB (libssh2 1.10 opens direct-tcpip with
 * 2 MiB; it is raised with libssh2_channel_receive_window_adjust2 and
 * kept above 8 MiB), enough for ~320 MiB/s on a 50 ms path.  The send
 * direction is bounded by the server's window (OpenSSH: 2 MiB).
 *
 * Errors: -LC_ERR_CONNECT naming host:port and the server's reason
 * ("user@bastion: cannot forward to db port 5432: Channel open failure
 * (administratively prohibited)" with AllowTcpForwarding no; "connect
 * failed" when the server could not connect), -LC_ERR_INTERNAL (misuse,
 * no socketpair or thread).  When the server refused the forward as
 * administratively prohibited (forwarding off for the server or the key;
 * asking again will not help), e->sys_errno is EACCES.
 */
int lc_ssh_forward(struct lc_ssh *s, const char *host, uint16_t port,
    int *fd, struct lc_err *e);

/*
 * The OpenSSH transport's lc_ssh_forward() starts "ssh -W" and returns
 * before the server has opened the channel.  Once that ssh has ended
 * because the server did not open it ("channel 0: open failed: ..."),
 * this sets e as lc_ssh_forward() would have (-LC_ERR_CONNECT naming
 * host:port and ssh's words; e->sys_errno EACCES when administratively
 * prohibited) and returns -LC_ERR_CONNECT.  0 while it runs, when it
 * ended otherwise, and always for libssh2 (lc_ssh_forward() reports such
 * failures itself).  Poll it while the forward is young.
 */
int lc_ssh_forward_err(struct lc_ssh *s, struct lc_err *e);

/*
 * Numeric address of the sshd we reached, and ours on that connection.
 * For a proxied connection lc_ssh_peer_addr() is NULL (we do not know
 * it) and lc_ssh_local_addr() is ours on the first jump host's TCP
 * connection (NULL through a ProxyCommand).
 */
const char *lc_ssh_peer_addr(const struct lc_ssh *s);
const char *lc_ssh_local_addr(const struct lc_ssh *s);

/* 1 when the connection went through ProxyJump / -J / ProxyCommand. */
int lc_ssh_proxied(const struct lc_ssh *s);

/*
 * The target's HostName as configured (not an address; "db.internal"),
 * for messages and for reaching the host directly.
 */
const char *lc_ssh_target_host(const struct lc_ssh *s);

/* "user@host" for messages. */
const char *lc_ssh_name(const struct lc_ssh *s);

/*
 * Disconnect, stop the pump, free; then the jump hosts it went through
 * (their forwards end) or the ProxyCommand (reaped, killed if needed).
 * Safe at any point (the pump may still be running; the remote command
 * or forward is then cut off), but not concurrently with other calls on
 * s.  NULL is fine.
 */
void lc_ssh_free(struct lc_ssh *s);

#endif
