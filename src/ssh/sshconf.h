/*
 * ssh_config(5) subset.
 *
 * Resolves the settings for one host the way ssh(1) does: the command
 * line's -o lines first, then the files in order (-F FILE alone, or
 * ~/.ssh/config then /etc/ssh/ssh_config), the
 * first value obtained for a keyword wins, Host/Match blocks select which
 * lines apply, Include pulls in files (globs, relative to ~/.ssh or
 * /etc/ssh).  Understood keywords: Host, Match (all, host, originalhost,
 * user, localuser; canonical and final are false as in ssh's first pass;
 * other criteria such as exec make the block not match, with a verbose
 * log line), Include, HostName, User, Port, IdentityFile,
 * IdentitiesOnly, UserKnownHostsFile, GlobalKnownHostsFile,
 * StrictHostKeyChecking, RevokedHostKeys (kept as written),
 * ConnectTimeout, ServerAliveInterval, ServerAliveCountMax,
 * HashKnownHosts, BatchMode, AddressFamily (and HostKeyAlias, only for
 * %k; CertificateFile, only whether one applies), ProxyJump and
 * ProxyCommand (the first of the pair wins; "none" is a direct
 * connection; ssh_jump.c acts on them).
 * Keywords that change where or how ssh connects but that lanecp does
 * not implement (BindAddress, BindInterface, CanonicalizeHostname
 * yes/always; the list
 * and the reasons are in sshconf.c) make the resolve fail when in effect
 * for the host ("none"/"no" values are fine), with -LC_ERR_CONFIG naming
 * keyword, file, line and host; so does such a keyword, or HostName,
 * Port, User, AddressFamily, ProxyJump, ProxyCommand, RevokedHostKeys
 * (not "none"), inside a Match block lanecp cannot evaluate
 * (exec, canonical, final, ...) whose other criteria hold, when it would
 * still take effect.  Other keywords are ignored (real configs are full
 * of them); a known keyword with a bad value is an error naming the file
 * and line, even inside a block that does not apply (as ssh).
 *
 * ConnectTimeout and ServerAliveInterval take ssh's time syntax ("30",
 * "1m30s", "none" = unset); ServerAliveCountMax a plain integer; Port
 * 1..65535 (numeric only, no service names).
 *
 * As in ssh, "Host" takes whitespace-separated patterns matched against
 * the host exactly as typed (case-sensitive, a comma is an ordinary
 * character); "Match host" and lc_sshconf_match_list() take
 * comma-separated pattern lists and ignore case.
 *
 * Token expansion as ssh does for HostName (%h, %%), IdentityFile,
 * UserKnownHostsFile and GlobalKnownHostsFile (leading ~ and ~user,
 * ${ENV}, %d %h %i %k %L %l %n %p %r %u %%; %C and %j are refused).
 */
#ifndef LANECP_SSHCONF_H
#define LANECP_SSHCONF_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define LC_SSHCONF_MAX_FILES 16	/* IdentityFile / known hosts entries */

enum lc_strict {
	LC_STRICT_UNSET = 0,
	LC_STRICT_YES,		/* refuse unknown and changed keys */
	LC_STRICT_ACCEPT_NEW,	/* record unknown keys, refuse changed */
	LC_STRICT_NO,		/* record unknown keys, refuse changed (as ssh) */
	LC_STRICT_ASK,		/* "ask": lanecp never prompts: treated as yes */
};

struct lc_sshconf {
	char host[256];		/* the name as given on the command line */
	char hostname[256];	/* HostName, expanded; defaults to host;
				 * lowercased unless an IP address (as ssh) */
	char user[256];		/* User; "" if not set */
	uint16_t port;		/* 0 if not set */
	char *identity_files[LC_SSHCONF_MAX_FILES];	/* expanded paths */
	size_t n_identity_files;
	int identities_only;	/* -1 unset, 0 no, 1 yes */
	char *user_known_hosts[LC_SSHCONF_MAX_FILES];	/* expanded paths */
	size_t n_user_known_hosts;	/* 0: not set (use defaults) */
	char *global_known_hosts[LC_SSHCONF_MAX_FILES];
	size_t n_global_known_hosts;
	enum lc_strict strict;
	int connect_timeout;	/* seconds, -1 unset */
	int server_alive_interval;	/* seconds, -1 unset */
	int server_alive_count_max;	/* -1 unset */
	int hash_known_hosts;	/* -1 unset, 0 no, 1 yes */
	int batch_mode;		/* -1 unset, 0 no, 1 yes */
	int address_family;	/* AddressFamily: 0 any, 4 inet, 6 inet6 */
	int certificate_file;	/* 1: a CertificateFile applies (libssh2
				 * cannot present certificates; ssh can) */
	/*
	 * "none" given (then the matching list above is empty): for identity
	 * files, do not try the default keys; for known hosts, use no file
	 * of that kind (rather than the defaults).
	 */
	int identity_files_none;
	int user_known_hosts_none;
	int global_known_hosts_none;
	/*
	 * ProxyJump "[user@]host[:port][,...]" as written (not parsed here),
	 * or ProxyCommand shell text with its %h %n %p %r %% tokens not yet
	 * expanded; malloc'd, NULL when not set or "none".  At most one of
	 * the two is set (the first value of the pair wins).
	 */
	char *proxy_jump;
	char *proxy_command;
	/*
	 * RevokedHostKeys as written (not expanded, as ssh 9.2); malloc'd,
	 * NULL when not set or "none".
	 */
	char *revoked_host_keys;
};

struct lc_sshconf_ctx {
	const char *config_file;	/* -F FILE, or NULL for the defaults;
					 * "none": read no file at all */
	const char *home;		/* home directory for ~ and %d;
					 * NULL: from the password database */
	const char *local_user;		/* for %u and Match localuser;
					 * NULL: from the password database */
	const char *cmdline_user;	/* user@ from the command line, or NULL */
	const char *system_config;	/* NULL: /etc/ssh/ssh_config */
	/*
	 * The port of ssh://host:PORT/ (as ssh -p: it wins over every Port
	 * line and is what %p expands to), 0: none.
	 */
	unsigned cmdline_port;
	/*
	 * -o "Keyword value" (or Keyword=value) lines, read before any file,
	 * so that they win as in ssh; NULL/0: none.  Host, Match and Include
	 * are refused there (lc_sshconf_check_option).
	 */
	const char *const *cmdline_options;
	size_t n_cmdline_options;
};

#define LC_SSHCONF_OPTS_MAX 32	/* -o options on one command line */

/*
 * Resolve the settings for host.  A missing default file is fine; a
 * missing -F file, an unreadable file, a malformed known keyword, a bad
 * token or ~/.ssh/config (or an included file) writable by others is
 * -LC_ERR_CONFIG with e naming file and line.  On success the caller owns
 * out and frees it with lc_sshconf_free(); on failure out holds only the
 * defaults (freeing it is harmless).  User from the command line
 * (ctx->cmdline_user) takes precedence over User in the file, as in ssh.
 * No global state: safe to call from several threads.
 */
int lc_sshconf_resolve(const struct lc_sshconf_ctx *ctx, const char *host,
    struct lc_sshconf *out, struct lc_err *e);

/*
 * Check one -o option as the command line gives it: its keyword must be
 * one the resolver knows (not Host, Match or Include) and its value
 * valid; a keyword lanecp refuses (BindAddress, ...) is refused here.
 * 0, or -LC_ERR_USAGE with e naming the keyword.
 */
int lc_sshconf_check_option(const char *opt, struct lc_err *e);

/* Free the path lists and reset c to zeros.  NULL and repeats are fine. */
void lc_sshconf_free(struct lc_sshconf *c);

/*
 * Match a host name against an ssh pattern list ("*.example.com,!bad.*"),
 * as ssh's match_hostname: 1 match, 0 no match, -1 negated match.
 */
int lc_sshconf_match_list(const char *name, const char *patterns);

#endif
