/*
 * ssh_config internals shared by sshconf.c (the reader: files, lines,
 * Include, entry points), sshconf_match.c (patterns, Host and Match),
 * sshconf_keywords.c (the keyword table and values) and sshconf_tokens.c
 * (%-tokens and expansion).  Not part of the interface: see
 * lanecp/sshconf.h for that.
 */
#ifndef LANECP_SSHCONF_INT_H
#define LANECP_SSHCONF_INT_H

#include <pwd.h>
#include <stddef.h>

#include "err.h"
#include "sshconf.h"

#define SC_LINE_MAX	4096	/* longest line accepted, without newline */
#define SC_ARGS_MAX	256	/* arguments on one line */
#define SC_DEPTH_MAX	16	/* Include nesting, ssh's READCONF_MAX_DEPTH */
#define SC_PATH_MAX	4096	/* a file name, before or after expansion */
#define SC_SUBPAT_MAX	1023	/* longest sub-pattern, as ssh's match.c */
#define SC_PWBUF_SIZE	16384	/* getpw*_r scratch */
#define SC_SYSTEM_CONFIG "/etc/ssh/ssh_config"
#define SC_SYSTEM_DIR	"/etc/ssh"
#define SC_DEFAULT_PORT	22

/* Tokens ssh knows in paths; the ones we cannot produce are refused. */
#define SC_PATH_TOKENS	"CLdhijklnpru"
#define SC_HOST_TOKENS	"h"

/* How a file is read. */
#define SC_F_USER	0x01	/* user file: relative Include under ~/.ssh */
#define SC_F_CHECKPERM	0x02	/* refuse a file writable by others */
#define SC_F_NEVERMATCH	0x04	/* included from a block that doesn't apply */
#define SC_F_REQUIRED	0x08	/* a missing file is an error (-F) */
#define SC_F_MAYBE	0x10	/* included from a block lanecp cannot
				 * evaluate (Match exec, ...) */
#define SC_F_CMDLINE	0x20	/* a -o option: errors name it, not a
				 * file and line */

struct sc_file {
	const char *path;
	int flags;
	int depth;
};

/* Scratch for one open file; on the heap to keep Include recursion lean. */
struct sc_buf {
	char line[SC_LINE_MAX + 1];
	char args[2 * SC_LINE_MAX + 2];
	char *argv[SC_ARGS_MAX];
};

struct sc_line {
	const struct sc_file *f;
	unsigned long num;
	const char *kw;		/* keyword as spelled in the table */
	size_t argc;
	char **argv;
	int *activep;		/* does the current block apply */
};

struct sc {
	const struct lc_sshconf_ctx *ctx;
	struct lc_sshconf *out;
	struct lc_err *e;
	const char *home;
	const char *local_user;
	const char *cmdline_user;	/* NULL when not given */
	char *hostname_raw;		/* HostName before expansion */
	char *user;			/* User from the files */
	char *host_key_alias;		/* HostKeyAlias, only for %k */
	int port;			/* -1 unset */
	int af;				/* AddressFamily: -1 unset, 0, 4, 6 */
	struct passwd pw;
	char *pwbuf;
	unsigned decided;		/* sc_route[].bit: first value seen */
	int revoked_decided;		/* RevokedHostKeys: first value seen */
	int no_include;			/* text from memory: Include is only
					 * checked, never read */
	/*
	 * The current block is a Match that lanecp cannot evaluate (exec,
	 * canonical, final, ...) and that ssh may apply: its line, its
	 * file and the criterion, for the error.  maybe_line 0: none.
	 */
	unsigned long maybe_line;
	const char *maybe_file;
	char maybe_attr[32];
};

struct sc_keyword {
	const char *name;
	int (*fn)(struct sc *, const struct sc_line *, size_t);
	size_t arg;		/* field offset or selector for shared handlers */
	int where;		/* SC_W_*: what it changes about where or how ssh
				 * connects (0: nothing of that) */
};

/* Keywords that change which machine is reached, or how. */
enum {
	SC_W_NONE = 0,
	SC_W_HOSTNAME,
	SC_W_PORT,
	SC_W_USER,
	SC_W_AF,
	SC_W_ROUTE,	/* arg indexes sc_route[]: ProxyJump, ProxyCommand and
			 * the refused routing keywords; the value is the
			 * raw rest of the line */
	SC_W_REVOKED,	/* RevokedHostKeys: which host keys are refused */
};

/* sshconf.c */

/* "FILE line N: MSG" as -LC_ERR_CONFIG in s->e. */
int lc__sshconf_err(struct sc *s, const struct sc_line *l, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));

/* "bad value for KEYWORD: 'ARG'" as lc__sshconf_err(). */
int lc__sshconf_bad(struct sc *s, const struct sc_line *l, const char *arg);

/* Include: read each file its globs name (table handler). */
int lc__sshconf_kw_include(struct sc *s, const struct sc_line *l,
    size_t unused);

/* sshconf_match.c: the block keywords (table handlers) */

int lc__sshconf_kw_host(struct sc *s, const struct sc_line *l,
    size_t unused);
int lc__sshconf_kw_match(struct sc *s, const struct sc_line *l,
    size_t unused);

/* sshconf_keywords.c */

/* The table entry for keyword kw (len bytes, any case), or NULL. */
const struct sc_keyword *lc__sshconf_keyword(const char *kw, size_t len);

/*
 * Inside a block lanecp cannot evaluate (a Match exec, ...): refuse a
 * keyword k that changes where or how ssh connects and would still take
 * effect.  Returns 0 or -LC_ERR_CONFIG.
 */
int lc__sshconf_check_maybe(struct sc *s, const struct sc_line *l,
    const struct sc_keyword *k);

/* sshconf_tokens.c */

/*
 * Check the %-tokens of v against tokens (and ${NAME} when dollar is
 * set) now.  Returns 0 or -LC_ERR_CONFIG naming the line.
 */
int lc__sshconf_check_tokens(struct sc *s, const struct sc_line *l,
    const char *v, const char *tokens, int dollar);

/* The remote user so far (%r, Match user): -l, User, the local user. */
const char *lc__sshconf_ruser(const struct sc *s);

/*
 * Settle user, host name and port in s->out, then expand its paths.
 * Returns 0 or -LC_ERR_CONFIG (s->e says why).
 */
int lc__sshconf_finish(struct sc *s);

/*
 * Internal, for tests and fuzz_sshconf: as lc_sshconf_resolve() with the
 * len bytes of text as the only config file (ctx->config_file is not
 * used; the file is called "(config)" in messages).  Include lines are
 * checked but no file is read.
 */
int lc__sshconf_resolve_mem(const struct lc_sshconf_ctx *ctx,
    const char *host, const char *text, size_t len, struct lc_sshconf *out,
    struct lc_err *e);

#endif
