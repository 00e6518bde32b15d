/*
 * ssh_config(5) subset, resolved for one host the way ssh(1) does.
 *
 * One pass over the files in ssh's order with a small parser state
 * (struct sc, one per lc_sshconf_resolve() call: no global state).  Each
 * line is split like OpenSSH's argv_split() (quotes, backslash escapes, a
 * '#' starting an argument ends the line) and dispatched through a keyword
 * table.  As in ssh's readconf.c, values are validated whether or not the
 * enclosing Host/Match block applies, so a typo fails the same way for
 * every host, and stored only when the block applies and the keyword is
 * still unset (first value wins).  Paths are kept raw and expanded at the
 * end, once port and user are final, as ssh.c does.
 */
#include "lanecp/sshconf.h"
#include "lanecp/err.h"
#include "lanecp/log.h"
#include "lanecp/parse.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

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
	unsigned decided;		/* sc_route[].bit: first value was seen */
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
			 * the refused routing keywords */
	SC_W_REVOKED,	/* RevokedHostKeys: which host keys are refused */
};

static int sc_read_file(struct sc *, const char *, int, int *, int);

static int
sc_err(struct sc *s, const struct sc_line *l, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
sc_err(struct sc *s, const struct sc_line *l, const char *fmt, ...)
{
	char msg[LC_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return lc_err_set(s->e, LC_ERR_CONFIG, "%s line %lu: %s",
	    l->f->path, l->num, msg);
}

static int
sc_bad(struct sc *s, const struct sc_line *l, const char *arg)
{
	return sc_err(s, l, "bad value for %s: '%s'", l->kw, arg);
}

/* --- patterns (OpenSSH match.c semantics) --- */

static int
sc_lc(int c, int fold)
{
	return fold ? tolower((unsigned char)c) : (unsigned char)c;
}

/*
 * '*' and '?' match of s against the first plen bytes of p, as ssh's
 * match_pattern() but linear: backtrack only to the last '*'.  1/0.
 */
static int
sc_match_one(const char *s, const char *p, size_t plen, int fold)
{
	size_t si = 0, pi = 0, star = SIZE_MAX, star_s = 0;

	while (s[si] != '\0') {
		if (pi < plen && p[pi] == '*') {
			star = pi++;
			star_s = si;
		} else if (pi < plen && (p[pi] == '?' ||
		    sc_lc(p[pi], fold) == sc_lc(s[si], fold))) {
			pi++;
			si++;
		} else if (star != SIZE_MAX) {
			pi = star + 1;
			si = ++star_s;
		} else
			return 0;
	}
	while (pi < plen && p[pi] == '*')
		pi++;
	return pi == plen;
}

/* ssh's match_pattern_list(): 1 match, 0 none, -1 negated match. */
static int
sc_match_list(const char *s, const char *pat, int fold)
{
	size_t i = 0, start, len = strlen(pat);
	int negated, got_positive = 0;

	while (i < len) {
		negated = pat[i] == '!';
		if (negated)
			i++;
		start = i;
		while (i < len && pat[i] != ',')
			i++;
		if (i - start >= SC_SUBPAT_MAX)
			return 0;	/* as ssh: too long, no match */
		if (sc_match_one(s, pat + start, i - start, fold)) {
			if (negated)
				return -1;
			got_positive = 1;
		}
		if (i < len)
			i++;	/* the comma */
	}
	return got_positive;
}

int
lc_sshconf_match_list(const char *name, const char *patterns)
{
	if (name == NULL || patterns == NULL)
		return 0;
	return sc_match_list(name, patterns, 1);
}

/* --- lines --- */

/*
 * Split s into arguments as OpenSSH's argv_split(s, ..., 1): blanks
 * separate, "..." and '...' quote, \\ \" \' and (unquoted) "\ " escape, a
 * '#' at the start of an argument ends the line.  Arguments go into buf.
 */
static int
sc_split(const char *s, char *buf, size_t bufsz, char **argv, size_t *argcp)
{
	size_t i = 0, j = 0, argc = 0;
	char quote;

	*argcp = 0;
	for (;;) {
		while (s[i] == ' ' || s[i] == '\t')
			i++;
		if (s[i] == '\0' || s[i] == '#')
			break;
		if (argc >= SC_ARGS_MAX)
			return -LC_ERR_TOOBIG;
		argv[argc++] = buf + j;
		for (quote = 0; s[i] != '\0'; i++) {
			if (j + 2 > bufsz)
				return -LC_ERR_TOOBIG;
			if (s[i] == '\\' && (s[i + 1] == '\'' ||
			    s[i + 1] == '"' || s[i + 1] == '\\' ||
			    (quote == 0 && s[i + 1] == ' ')))
				buf[j++] = s[++i];
			else if (quote == 0 && (s[i] == ' ' || s[i] == '\t'))
				break;
			else if (quote == 0 && (s[i] == '"' || s[i] == '\''))
				quote = s[i];
			else if (quote != 0 && s[i] == quote)
				quote = 0;
			else
				buf[j++] = s[i];
		}
		if (quote != 0)
			return -LC_ERR_CONFIG;
		buf[j++] = '\0';
	}
	*argcp = argc;
	return 0;
}

/* Exactly one non-empty argument. */
static int
sc_one_arg(struct sc *s, const struct sc_line *l, const char **argp)
{
	*argp = "";	/* never NULL, even on error */
	if (l->argc == 0 || l->argv[0][0] == '\0')
		return sc_err(s, l, "missing argument for %s", l->kw);
	if (l->argc > 1)
		return sc_err(s, l, "extra arguments for %s: '%s'", l->kw,
		    l->argv[1]);
	*argp = l->argv[0];
	return 0;
}

static int *
sc_int_field(struct sc *s, size_t off)
{
	return (int *)(void *)((char *)s->out + off);
}

static void
sc_set_int(struct sc *s, const struct sc_line *l, size_t off, int v)
{
	int *p = sc_int_field(s, off);

	if (*l->activep && *p == -1)
		*p = v;
}

static int
sc_set_str(struct sc *s, const struct sc_line *l, char **dst,
    const char *v)
{
	if (!*l->activep || *dst != NULL)
		return 0;
	if ((*dst = strdup(v)) == NULL)
		return lc_err_set(s->e, LC_ERR_NOMEM, "out of memory");
	return 0;
}

/*
 * Check the %-tokens (and ${NAME} references when dollar is set) of a
 * value now, so a bad one is reported with its line even if the value is
 * never used, as ssh would fail on it when used.
 */
static int
sc_check_tokens(struct sc *s, const struct sc_line *l, const char *v,
    const char *tokens, int dollar)
{
	const char *p, *end;

	for (p = v; *p != '\0'; p++) {
		if (dollar && p[0] == '$' && p[1] == '{') {
			end = strchr(p + 2, '}');
			if (end == NULL || end == p + 2)
				return sc_err(s, l, "bad value for %s: '%s' "
				    "(bad ${} reference)", l->kw, v);
			for (p += 2; p < end; p++) {
				if (!isalnum((unsigned char)*p) && *p != '_')
					return sc_err(s, l, "bad value for "
					    "%s: '%s' (bad ${} reference)",
					    l->kw, v);
			}
			continue;
		}
		if (*p != '%')
			continue;
		p++;
		if (*p == '%')
			continue;
		if (*p == '\0' || strchr(tokens, *p) == NULL)
			return sc_err(s, l, "bad value for %s: '%s' "
			    "(unknown token %%%c)", l->kw, v,
			    *p == '\0' ? ' ' : *p);
	}
	return 0;
}

/* --- keyword handlers --- */

static int
sc_kw_host(struct sc *s, const struct sc_line *l, size_t unused)
{
	const char *arg;
	size_t i;
	int negated;

	(void)unused;
	*l->activep = 0;
	if (!(l->f->flags & SC_F_MAYBE))
		s->maybe_line = 0;
	for (i = 0; i < l->argc; i++) {
		arg = l->argv[i];
		if (*arg == '\0')
			return sc_err(s, l, "empty argument for Host");
		if (l->f->flags & SC_F_NEVERMATCH)
			break;
		negated = *arg == '!';
		if (negated)
			arg++;
		if (sc_match_one(s->out->host, arg, strlen(arg), 0)) {
			if (negated) {
				*l->activep = 0;
				break;
			}
			*l->activep = 1;
		}
	}
	return 0;
}

/* The host "Match host" sees: HostName so far with %h expanded. */
static int
sc_match_host(struct sc *s, const struct sc_line *l, char *buf,
    size_t bufsz)
{
	const char *p;
	size_t n = 0, vl;

	if (s->hostname_raw == NULL) {
		snprintf(buf, bufsz, "%s", s->out->host);
		return 0;
	}
	for (p = s->hostname_raw; *p != '\0'; p++) {
		const char *v = p;

		vl = 1;
		if (*p == '%') {
			p++;	/* tokens were checked when HostName was read */
			if (*p == 'h') {
				v = s->out->host;
				vl = strlen(v);
			} else
				v = p;
		}
		if (vl >= bufsz - n)
			return sc_err(s, l, "HostName too long");
		memcpy(buf + n, v, vl);
		n += vl;
	}
	buf[n] = '\0';
	return 0;
}

static const char *
sc_ruser(const struct sc *s)
{
	if (s->cmdline_user != NULL)
		return s->cmdline_user;
	return s->user != NULL ? s->user : s->local_user;
}

/* Match criteria ssh has that lanecp does not evaluate. */
static int
sc_match_criterion(struct sc *s, const struct sc_line *l, const char *attr,
    const char *arg, int *r)
{
	char host[256];
	int rv;

	if (strcasecmp(attr, "host") == 0) {
		if ((rv = sc_match_host(s, l, host, sizeof(host))) != 0)
			return rv;
		*r = sc_match_list(host, arg, 1) == 1;
	} else if (strcasecmp(attr, "originalhost") == 0)
		*r = sc_match_list(s->out->host, arg, 1) == 1;
	else if (strcasecmp(attr, "user") == 0)
		*r = sc_match_list(sc_ruser(s), arg, 0) == 1;
	else if (strcasecmp(attr, "localuser") == 0)
		*r = sc_match_list(s->local_user, arg, 0) == 1;
	else
		*r = -1;	/* exec, localnetwork, tagged, ...: unsupported */
	return 0;
}

/*
 * As ssh's match_cfg_line() in its first pass: all criteria must hold;
 * "all" stands alone; canonical and final are false (!final is true).
 * A criterion lanecp cannot evaluate (exec, ...) makes the block not
 * apply, negated or not, with one verbose line.
 */
static int
sc_kw_match(struct sc *s, const struct sc_line *l, size_t unused)
{
	const char *attr, *unsupported = NULL;
	size_t i, attributes = 0;
	int result = 1, negate, r, rv;

	(void)unused;
	for (i = 0; i < l->argc; i++) {
		attr = l->argv[i];
		if ((negate = attr[0] == '!'))
			attr++;
		if (strcasecmp(attr, "all") == 0) {
			if (attributes > 1 || i + 1 < l->argc)
				return sc_err(s, l, "'all' cannot be combined "
				    "with other Match attributes");
			if (result)
				result = !negate;
			attributes++;
			break;
		}
		attributes++;
		if (strcasecmp(attr, "canonical") == 0 ||
		    strcasecmp(attr, "final") == 0) {
			if (!negate && unsupported == NULL)
				unsupported = attr;	/* no final pass */
			continue;
		}
		if (attr[0] == '\0' || i + 1 >= l->argc ||
		    l->argv[i + 1][0] == '\0')
			return sc_err(s, l, "missing Match criteria for '%s'",
			    attr);
		i++;
		if ((rv = sc_match_criterion(s, l, attr, l->argv[i],
		    &r)) != 0)
			return rv;
		if (r == -1) {
			if (unsupported == NULL)
				unsupported = attr;
		} else if (r == negate)
			result = 0;
	}
	if (attributes == 0)
		return sc_err(s, l, "Match needs one or more criteria");
	/* say so only when the rest of the line would have matched */
	if (!(l->f->flags & SC_F_MAYBE))
		s->maybe_line = 0;
	if (result && unsupported != NULL &&
	    !(l->f->flags & (SC_F_NEVERMATCH | SC_F_MAYBE))) {
		lc_log_verbose("%s line %lu: Match %s is not supported by "
		    "lanecp, block ignored", l->f->path, l->num, unsupported);
		s->maybe_line = l->num;
		s->maybe_file = l->f->path;
		snprintf(s->maybe_attr, sizeof(s->maybe_attr), "%s",
		    unsupported);
	}
	*l->activep = (l->f->flags & SC_F_NEVERMATCH) || unsupported != NULL ?
	    0 : result;
	return 0;
}

/* Copy src escaping glob(3) metacharacters. */
static int
sc_glob_escape(char *dst, size_t dstsz, size_t *n, const char *src)
{
	for (; *src != '\0'; src++) {
		if (*n + 3 > dstsz)
			return -LC_ERR_TOOBIG;
		if (strchr("*?[]\\", *src) != NULL)
			dst[(*n)++] = '\\';
		dst[(*n)++] = *src;
	}
	dst[*n] = '\0';
	return 0;
}

/* The glob pattern for one Include argument, as ssh anchors it. */
static int
sc_include_pattern(struct sc *s, const struct sc_line *l, const char *arg,
    char *pat, size_t patsz)
{
	size_t n = 0;
	int r = 0;

	if (arg[0] == '~' && !(l->f->flags & SC_F_USER))
		return sc_err(s, l, "bad Include path '%s' (~ is only for "
		    "user files)", arg);
	pat[0] = '\0';
	if (arg[0] == '~' && (arg[1] == '/' || arg[1] == '\0')) {
		r = sc_glob_escape(pat, patsz, &n, s->home);
		arg++;
	} else if (arg[0] != '/' && arg[0] != '~') {
		if (l->f->flags & SC_F_USER) {
			if ((r = sc_glob_escape(pat, patsz, &n,
			    s->home)) == 0)
				r = sc_glob_escape(pat, patsz, &n, "/.ssh/");
		} else
			r = sc_glob_escape(pat, patsz, &n, SC_SYSTEM_DIR "/");
	}
	if (r == 0 && strlen(arg) >= patsz - n)
		r = -LC_ERR_TOOBIG;
	if (r != 0)
		return sc_err(s, l, "Include path too long: '%s'", arg);
	memcpy(pat + n, arg, strlen(arg) + 1);
	return 0;
}

static int
sc_kw_include(struct sc *s, const struct sc_line *l, size_t unused)
{
	char pat[SC_PATH_MAX];
	glob_t gl;
	size_t i, j;
	int r, g, oactive = *l->activep, maybe;
	unsigned long omaybe_line = s->maybe_line;
	const char *omaybe_file = s->maybe_file;
	char omaybe_attr[sizeof(s->maybe_attr)];

	(void)unused;
	memcpy(omaybe_attr, s->maybe_attr, sizeof(omaybe_attr));
	maybe = s->maybe_line != 0 || (l->f->flags & SC_F_MAYBE);
	for (i = 0; i < l->argc; i++) {
		if (l->argv[i][0] == '\0')
			return sc_err(s, l, "empty argument for Include");
		if ((r = sc_include_pattern(s, l, l->argv[i], pat,
		    sizeof(pat))) != 0)
			return r;
		if (s->no_include)
			continue;
		memset(&gl, 0, sizeof(gl));
		if ((g = glob(pat, GLOB_TILDE, NULL, &gl)) == GLOB_NOMATCH) {
			globfree(&gl);
			continue;
		} else if (g != 0) {
			globfree(&gl);
			return sc_err(s, l, "Include: glob failed for '%s'",
			    pat);
		}
		for (j = 0; j < gl.gl_pathc; j++) {
			if (l->f->depth >= SC_DEPTH_MAX) {
				globfree(&gl);
				return sc_err(s, l, "Include nested too deeply "
				    "(max %d)", SC_DEPTH_MAX);
			}
			r = sc_read_file(s, gl.gl_pathv[j],
			    (l->f->flags & SC_F_USER) | SC_F_CHECKPERM |
			    (oactive ? 0 : SC_F_NEVERMATCH) |
			    (maybe ? SC_F_MAYBE : 0), l->activep,
			    l->f->depth + 1);
			/* a Host or Match in the file ends with the file */
			*l->activep = oactive;
			s->maybe_line = omaybe_line;
			s->maybe_file = omaybe_file;
			memcpy(s->maybe_attr, omaybe_attr,
			    sizeof(omaybe_attr));
			if (r != 0) {
				globfree(&gl);
				return r;
			}
		}
		globfree(&gl);
	}
	return 0;
}

static int
sc_kw_hostname(struct sc *s, const struct sc_line *l, size_t unused)
{
	const char *arg;
	int r;

	(void)unused;
	if ((r = sc_one_arg(s, l, &arg)) != 0 ||
	    (r = sc_check_tokens(s, l, arg, SC_HOST_TOKENS, 0)) != 0)
		return r;
	return sc_set_str(s, l, &s->hostname_raw, arg);
}

static int
sc_kw_user(struct sc *s, const struct sc_line *l, size_t unused)
{
	const char *arg;
	int r;

	(void)unused;
	if ((r = sc_one_arg(s, l, &arg)) != 0)
		return r;
	if (strlen(arg) >= sizeof(s->out->user))
		return sc_bad(s, l, arg);
	return sc_set_str(s, l, &s->user, arg);
}

static int
sc_kw_hostkeyalias(struct sc *s, const struct sc_line *l, size_t unused)
{
	const char *arg;
	int r;

	(void)unused;
	if ((r = sc_one_arg(s, l, &arg)) != 0)
		return r;
	return sc_set_str(s, l, &s->host_key_alias, arg);
}

static int
sc_kw_port(struct sc *s, const struct sc_line *l, size_t unused)
{
	const char *arg;
	uint64_t v;
	int r;

	(void)unused;
	if ((r = sc_one_arg(s, l, &arg)) != 0)
		return r;
	if (lc_parse_uint(arg, 1, 65535, &v) != 0)
		return sc_bad(s, l, arg);
	if (*l->activep && s->port == -1)
		s->port = (int)v;
	return 0;
}

/* yes/true, no/false, as ssh's multistate_flag. */
static int
sc_kw_flag(struct sc *s, const struct sc_line *l, size_t off)
{
	const char *arg;
	int r, v;

	if ((r = sc_one_arg(s, l, &arg)) != 0)
		return r;
	if (strcasecmp(arg, "yes") == 0 || strcasecmp(arg, "true") == 0)
		v = 1;
	else if (strcasecmp(arg, "no") == 0 || strcasecmp(arg, "false") == 0)
		v = 0;
	else
		return sc_bad(s, l, arg);
	sc_set_int(s, l, off, v);
	return 0;
}

static int
sc_kw_strict(struct sc *s, const struct sc_line *l, size_t unused)
{
	static const struct {
		const char *name;
		enum lc_strict v;
	} map[] = {
		{ "yes", LC_STRICT_YES }, { "true", LC_STRICT_YES },
		{ "no", LC_STRICT_NO }, { "false", LC_STRICT_NO },
		{ "off", LC_STRICT_NO }, { "ask", LC_STRICT_ASK },
		{ "accept-new", LC_STRICT_ACCEPT_NEW },
	};
	const char *arg;
	size_t i;
	int r;

	(void)unused;
	if ((r = sc_one_arg(s, l, &arg)) != 0)
		return r;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (strcasecmp(arg, map[i].name) == 0) {
			if (*l->activep && s->out->strict == LC_STRICT_UNSET)
				s->out->strict = map[i].v;
			return 0;
		}
	}
	return sc_bad(s, l, arg);
}

/*
 * A time as ssh's convtime(): digits with an optional s/m/h/d/w unit,
 * repeated ("1h30m"); plain digits are seconds.  Result <= INT_MAX.
 * Returns 0 or -LC_ERR_CONFIG (bad syntax, too big).
 */
static int
sc_parse_time(const char *arg, int *out)
{
	char num[16];
	uint64_t total = 0, v, mult;
	size_t n;

	*out = 0;
	if (*arg == '\0')
		return -LC_ERR_CONFIG;
	while (*arg != '\0') {
		n = strspn(arg, "0123456789");
		if (n == 0 || n >= sizeof(num))
			return -LC_ERR_CONFIG;
		memcpy(num, arg, n);
		num[n] = '\0';
		if (lc_parse_uint(num, 0, INT_MAX, &v) != 0)
			return -LC_ERR_CONFIG;
		arg += n;
		switch (*arg) {
		case '\0': mult = 1; break;
		case 's': case 'S': mult = 1; arg++; break;
		case 'm': case 'M': mult = 60; arg++; break;
		case 'h': case 'H': mult = 3600; arg++; break;
		case 'd': case 'D': mult = 86400; arg++; break;
		case 'w': case 'W': mult = 604800; arg++; break;
		default: return -LC_ERR_CONFIG;
		}
		if (v > (INT_MAX - total) / mult)
			return -LC_ERR_CONFIG;
		total += v * mult;
	}
	*out = (int)total;
	return 0;
}

static int
sc_kw_time(struct sc *s, const struct sc_line *l, size_t off)
{
	const char *arg;
	int r, v;

	if ((r = sc_one_arg(s, l, &arg)) != 0)
		return r;
	if (strcmp(arg, "none") == 0)
		return 0;	/* as ssh: stays unset */
	if (sc_parse_time(arg, &v) != 0)
		return sc_bad(s, l, arg);
	sc_set_int(s, l, off, v);
	return 0;
}

static int
sc_kw_int(struct sc *s, const struct sc_line *l, size_t off)
{
	const char *arg;
	uint64_t v;
	int r;

	if ((r = sc_one_arg(s, l, &arg)) != 0)
		return r;
	if (lc_parse_uint(arg, 0, INT_MAX, &v) != 0)
		return sc_bad(s, l, arg);
	sc_set_int(s, l, off, (int)v);
	return 0;
}

static int
sc_add_path(struct sc *s, const struct sc_line *l, char **list, size_t *n,
    const char *v)
{
	if (*n >= LC_SSHCONF_MAX_FILES)
		return sc_err(s, l, "too many %s entries (max %d)", l->kw,
		    LC_SSHCONF_MAX_FILES);
	if ((list[*n] = strdup(v)) == NULL)
		return lc_err_set(s->e, LC_ERR_NOMEM, "out of memory");
	(*n)++;
	return 0;
}

/* Entries accumulate across blocks; duplicates are dropped, as ssh. */
static int
sc_kw_identityfile(struct sc *s, const struct sc_line *l, size_t unused)
{
	struct lc_sshconf *o = s->out;
	const char *arg;
	size_t i;
	int r;

	(void)unused;
	if ((r = sc_one_arg(s, l, &arg)) != 0)
		return r;
	if (strcasecmp(arg, "none") == 0) {
		if (*l->activep)
			o->identity_files_none = 1;
		return 0;
	}
	if ((r = sc_check_tokens(s, l, arg, SC_PATH_TOKENS, 1)) != 0)
		return r;
	if (!*l->activep)
		return 0;
	for (i = 0; i < o->n_identity_files; i++) {
		if (strcmp(o->identity_files[i], arg) == 0)
			return 0;
	}
	return sc_add_path(s, l, o->identity_files, &o->n_identity_files,
	    arg);
}

/* The first line wins as a whole; "none" must stand alone. */
static int
sc_kw_knownhosts(struct sc *s, const struct sc_line *l, size_t global)
{
	struct lc_sshconf *o = s->out;
	char **list = global ? o->global_known_hosts : o->user_known_hosts;
	size_t *n = global ? &o->n_global_known_hosts :
	    &o->n_user_known_hosts;
	int *none = global ? &o->global_known_hosts_none :
	    &o->user_known_hosts_none;
	int apply = *l->activep && *n == 0 && !*none;
	size_t i;
	int r;

	if (l->argc == 0)
		return sc_err(s, l, "missing argument for %s", l->kw);
	for (i = 0; i < l->argc; i++) {
		if (l->argv[i][0] == '\0')
			return sc_err(s, l, "empty argument for %s", l->kw);
		if (strcasecmp(l->argv[i], "none") == 0) {
			if (l->argc > 1)
				return sc_err(s, l, "%s: \"none\" must "
				    "appear alone", l->kw);
			if (apply)
				*none = 1;
			return 0;
		}
		if ((r = sc_check_tokens(s, l, l->argv[i], SC_PATH_TOKENS,
		    1)) != 0)
			return r;
		if (apply && (r = sc_add_path(s, l, list, n,
		    l->argv[i])) != 0)
			return r;
	}
	return 0;
}

/*
 * RevokedHostKeys FILE: the first value wins; "none" (any case) means no
 * file.  ssh 9.2 takes the name as written (no ~, %-tokens or ${}
 * expansion: a relative name is relative to the working directory), and
 * so does lanecp.  The file is read when the host key is checked
 * (ssh_hostkey.c).
 */
static int
sc_kw_revoked(struct sc *s, const struct sc_line *l, size_t unused)
{
	const char *arg;
	int r;

	(void)unused;
	if ((r = sc_one_arg(s, l, &arg)) != 0)
		return r;
	if (!*l->activep || s->revoked_decided)
		return 0;
	s->revoked_decided = 1;
	if (strcasecmp(arg, "none") == 0)
		return 0;
	if ((s->out->revoked_host_keys = strdup(arg)) == NULL)
		return lc_err_set(s->e, LC_ERR_NOMEM, "out of memory");
	return 0;
}

/*
 * The routing keywords: they change where or how ssh connects.  ProxyJump and
 * ProxyCommand are implemented (ssh_jump.c; the first value of the pair wins,
 * as in ssh; "none" means a direct connection) and kept in this table for
 * their shared first-value bit and for the Match checks below.  The others
 * lanecp does not implement: ignoring them would make lanecp reach another
 * machine, or reach it another way, than ssh with the same configuration,
 * so a host for which one is in effect is refused (first value wins, as
 * in ssh; the "off" values mean not in use).
 *
 *   BindAddress, BindInterface  the source address or interface, which
 *                             can select the route, VRF or firewall rule
 *                             and so the machine reached
 *   CanonicalizeHostname yes/always  rewrites the host name (and then
 *                             re-reads the config for the new name)
 *
 * Implemented rather than refused: HostName, Port, User, AddressFamily,
 * ProxyJump, ProxyCommand.
 * Left ignored on purpose, since lanecp still reaches the same machine
 * the same way (or fails closed): ProxyUseFdpass (a ProxyCommand that
 * passes a descriptor back does not work with lanecp, it fails closed),
 * LocalCommand/PermitLocalCommand (a local command after
 * connecting), RemoteCommand and RequestTTY (lanecp runs its own agent),
 * Tunnel/TunnelDevice and the *Forward keywords (extra channels), Control*
 * (a master connection to the same host), Ciphers/KexAlgorithms/MACs/
 * HostKeyAlgorithms (negotiation; libssh2's defaults, host key still
 * verified), KnownHostsCommand/VerifyHostKeyDNS (without them an unknown
 * key is refused), the authentication keywords (auth fails closed),
 * ConnectionAttempts, TCPKeepAlive, IPQoS and everything else.
 */
enum {
	SC_ROUTE_JUMP,
	SC_ROUTE_COMMAND,
	SC_ROUTE_BINDADDR,
	SC_ROUTE_BINDIF,
	SC_ROUTE_CANON,
};

static const struct {
	const char *name;
	unsigned bit;		/* first value: shared by the proxy pair */
	const char *off[2];	/* values meaning "not in use" */
	int fold;		/* compare off values without case */
	const char *what;	/* what it changes */
} sc_route[] = {
	[SC_ROUTE_JUMP] = { "ProxyJump", 0x1, { "none", NULL }, 1,
	    "reaches the host through another host" },
	[SC_ROUTE_COMMAND] = { "ProxyCommand", 0x1, { "none", NULL }, 0,
	    "reaches the host through a command" },
	[SC_ROUTE_BINDADDR] = { "BindAddress", 0x2, { NULL, NULL }, 0,
	    "sets the source address" },
	[SC_ROUTE_BINDIF] = { "BindInterface", 0x4, { NULL, NULL }, 0,
	    "sets the source interface" },
	[SC_ROUTE_CANON] = { "CanonicalizeHostname", 0x8, { "no", "false" },
	    1, "rewrites the host name" },
};

/* Is v a value that turns routing keyword which off?  1/0. */
static int
sc_route_off(size_t which, const char *v)
{
	size_t i;

	for (i = 0; i < 2 && sc_route[which].off[i] != NULL; i++) {
		if (sc_route[which].fold ?
		    strcasecmp(v, sc_route[which].off[i]) == 0 :
		    strcmp(v, sc_route[which].off[i]) == 0)
			return 1;
	}
	return 0;
}

/*
 * The first value of a keyword in effect wins: 1 if this line (in effect,
 * the first, and not its "off" value) turns it on; it is decided either
 * way.
 */
static int
sc_first_on(struct sc *s, const struct sc_line *l, size_t which)
{
	if (!*l->activep || (s->decided & sc_route[which].bit))
		return 0;
	s->decided |= sc_route[which].bit;
	return !sc_route_off(which, l->argv[0]);
}

static int
sc_kw_refuse(struct sc *s, const struct sc_line *l, size_t which)
{
	const char *v = l->argv[0];

	if (which == SC_ROUTE_CANON && strcasecmp(v, "yes") != 0 &&
	    strcasecmp(v, "true") != 0 && strcasecmp(v, "always") != 0 &&
	    !sc_route_off(which, v))
		return sc_bad(s, l, v);
	if (!sc_first_on(s, l, which))
		return 0;
	return sc_err(s, l, "%s is not supported by lanecp (it %s); "
	    "refusing to connect to %s", l->kw, sc_route[which].what,
	    s->out->host);
}

/* Tokens ProxyCommand may use (expanded by ssh_jump.c when connecting). */
#define SC_PROXY_TOKENS	"hnpr"

/*
 * ProxyJump and ProxyCommand: the first value of the pair wins; "none"
 * (ProxyJump: any case; ProxyCommand: exactly) means a direct connection.
 * ProxyJump is "[user@]host[:port][,...]" (checked when connecting);
 * ProxyCommand is shell text, kept raw; its %-tokens are checked when
 * it takes effect (unknown ones are an error naming file and line).
 */
static int
sc_kw_proxy(struct sc *s, const struct sc_line *l, size_t which)
{
	const char *v = l->argv[0];
	int r;

	if (which == SC_ROUTE_JUMP && v[strcspn(v, " \t")] != '\0')
		return sc_bad(s, l, v);
	if (!sc_first_on(s, l, which))
		return 0;
	/* only when it takes effect: configs use %C etc. for other hosts */
	if (which == SC_ROUTE_COMMAND &&
	    (r = sc_check_tokens(s, l, v, SC_PROXY_TOKENS, 0)) != 0)
		return r;
	if (which == SC_ROUTE_JUMP)
		s->out->proxy_jump = strdup(v);
	else
		s->out->proxy_command = strdup(v);
	if (s->out->proxy_jump == NULL && s->out->proxy_command == NULL)
		return lc_err_set(s->e, LC_ERR_NOMEM, "out of memory");
	return 0;
}

static int
sc_kw_af(struct sc *s, const struct sc_line *l, size_t unused)
{
	const char *arg;
	int r, v;

	(void)unused;
	if ((r = sc_one_arg(s, l, &arg)) != 0)
		return r;
	if (strcasecmp(arg, "any") == 0)
		v = 0;
	else if (strcasecmp(arg, "inet") == 0)
		v = 4;
	else if (strcasecmp(arg, "inet6") == 0)
		v = 6;
	else
		return sc_bad(s, l, arg);
	if (*l->activep && s->af == -1)
		s->af = v;
	return 0;
}

/* Would a value for this keyword still take effect (first one wins)?  1/0. */
static int
sc_where_unset(const struct sc *s, const struct sc_keyword *k,
    const struct sc_line *l)
{
	switch (k->where) {
	case SC_W_HOSTNAME:
		return s->hostname_raw == NULL;
	case SC_W_PORT:
		return s->port == -1;
	case SC_W_USER:
		return s->user == NULL && s->cmdline_user == NULL;
	case SC_W_AF:
		return s->af == -1;
	case SC_W_ROUTE:
		return !(s->decided & sc_route[k->arg].bit) &&
		    (l->argc == 0 || !sc_route_off(k->arg, l->argv[0]));
	case SC_W_REVOKED:
		/* ignoring it could let in a key ssh would refuse */
		return !s->revoked_decided &&
		    (l->argc == 0 || strcasecmp(l->argv[0], "none") != 0);
	default:
		return 0;
	}
}

/*
 * A keyword of that kind inside a Match block lanecp cannot evaluate:
 * ssh may apply it and then connect elsewhere or otherwise, so refuse
 * rather than guess (a block with only other keywords stays ignored).
 */
static int
sc_check_maybe(struct sc *s, const struct sc_line *l,
    const struct sc_keyword *k)
{
	if (k->where == SC_W_NONE || !sc_where_unset(s, k, l))
		return 0;
	if (s->maybe_line != 0)
		return sc_err(s, l, "%s inside 'Match %s' (%s line %lu), "
		    "which lanecp cannot evaluate; ssh may apply it, so "
		    "refusing to connect to %s", l->kw, s->maybe_attr,
		    s->maybe_file, s->maybe_line, s->out->host);
	return sc_err(s, l, "%s in a file included from a Match block "
	    "lanecp cannot evaluate; ssh may apply it, so refusing to "
	    "connect to %s", l->kw, s->out->host);
}

static const struct sc_keyword sc_keywords[] = {
	{ "Host", sc_kw_host, 0, SC_W_NONE },
	{ "Match", sc_kw_match, 0, SC_W_NONE },
	{ "Include", sc_kw_include, 0, SC_W_NONE },
	{ "HostName", sc_kw_hostname, 0, SC_W_HOSTNAME },
	{ "User", sc_kw_user, 0, SC_W_USER },
	{ "Port", sc_kw_port, 0, SC_W_PORT },
	{ "HostKeyAlias", sc_kw_hostkeyalias, 0, SC_W_NONE },
	{ "IdentityFile", sc_kw_identityfile, 0, SC_W_NONE },
	{ "IdentitiesOnly", sc_kw_flag,
	    offsetof(struct lc_sshconf, identities_only), SC_W_NONE },
	{ "UserKnownHostsFile", sc_kw_knownhosts, 0, SC_W_NONE },
	{ "GlobalKnownHostsFile", sc_kw_knownhosts, 1, SC_W_NONE },
	{ "StrictHostKeyChecking", sc_kw_strict, 0, SC_W_NONE },
	{ "RevokedHostKeys", sc_kw_revoked, 0, SC_W_REVOKED },
	{ "ConnectTimeout", sc_kw_time,
	    offsetof(struct lc_sshconf, connect_timeout), SC_W_NONE },
	{ "ServerAliveInterval", sc_kw_time,
	    offsetof(struct lc_sshconf, server_alive_interval), SC_W_NONE },
	{ "ServerAliveCountMax", sc_kw_int,
	    offsetof(struct lc_sshconf, server_alive_count_max), SC_W_NONE },
	{ "HashKnownHosts", sc_kw_flag,
	    offsetof(struct lc_sshconf, hash_known_hosts), SC_W_NONE },
	{ "BatchMode", sc_kw_flag,
	    offsetof(struct lc_sshconf, batch_mode), SC_W_NONE },
	{ "AddressFamily", sc_kw_af, 0, SC_W_AF },
	{ "ProxyJump", sc_kw_proxy, SC_ROUTE_JUMP, SC_W_ROUTE },
	{ "ProxyCommand", sc_kw_proxy, SC_ROUTE_COMMAND, SC_W_ROUTE },
	{ "BindAddress", sc_kw_refuse, SC_ROUTE_BINDADDR, SC_W_ROUTE },
	{ "BindInterface", sc_kw_refuse, SC_ROUTE_BINDIF, SC_W_ROUTE },
	{ "CanonicalizeHostname", sc_kw_refuse, SC_ROUTE_CANON, SC_W_ROUTE },
};

static const struct sc_keyword *
sc_keyword(const char *kw, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(sc_keywords) / sizeof(sc_keywords[0]); i++) {
		if (strlen(sc_keywords[i].name) == len &&
		    strncasecmp(sc_keywords[i].name, kw, len) == 0)
			return &sc_keywords[i];
	}
	return NULL;
}

/* One line: "Keyword args", "Keyword=args", comments, blank lines. */
static int
sc_line(struct sc *s, const struct sc_file *f, unsigned long num,
    struct sc_buf *b, int *activep)
{
	const struct sc_keyword *k;
	struct sc_line l = { f, num, NULL, 0, b->argv, activep };
	char *p = b->line, *kw;
	size_t len = strlen(p), kwlen;
	int r;

	while (len > 0 && strchr(" \t\r\n\f", p[len - 1]) != NULL)
		p[--len] = '\0';
	p += strspn(p, " \t\r\f");
	if (*p == '\0' || *p == '#')
		return 0;
	kw = p;
	kwlen = strcspn(p, " \t\r\f=");
	p += kwlen;
	p += strspn(p, " \t\r\f");
	if (*p == '=')
		p++;
	p += strspn(p, " \t\r\f");
	if ((k = sc_keyword(kw, kwlen)) == NULL) {
		lc_log_debug("%s line %lu: ignoring keyword %.*s", f->path,
		    num, (int)(kwlen > 64 ? 64 : kwlen), kw);
		return 0;
	}
	l.kw = k->name;
	if (*p == '\0')
		return sc_err(s, &l, "missing argument for %s", k->name);
	if (k->fn == sc_kw_refuse || k->fn == sc_kw_proxy) {
		/* as ssh: the raw rest of the line (ProxyCommand is shell) */
		b->argv[0] = p;
		l.argc = 1;
	} else {
		r = sc_split(p, b->args, sizeof(b->args), b->argv, &l.argc);
		if (r == -LC_ERR_CONFIG)
			return sc_err(s, &l, "unterminated quote");
		if (r != 0)
			return sc_err(s, &l, "too many arguments");
	}
	if ((s->maybe_line != 0 || (f->flags & SC_F_MAYBE)) &&
	    (r = sc_check_maybe(s, &l, k)) != 0)
		return r;
	return k->fn(s, &l, k->arg);
}

/*
 * Read one line (without the newline) into buf.  Returns 1 for a line,
 * 0 at end of file, -LC_ERR_TOOBIG for a line over SC_LINE_MAX,
 * -LC_ERR_PROTO for a NUL byte, -LC_ERR_IO for a read error (errno set).
 */
static int
sc_getline(FILE *fp, char *buf, size_t bufsz)
{
	size_t n = 0;
	int c;

	while ((c = getc(fp)) != EOF && c != '\n') {
		if (c == '\0')
			return -LC_ERR_PROTO;
		if (n + 1 >= bufsz)
			return -LC_ERR_TOOBIG;
		buf[n++] = (char)c;
	}
	buf[n] = '\0';
	if (c == EOF && ferror(fp))
		return -LC_ERR_IO;
	return (c == EOF && n == 0) ? 0 : 1;
}

static int
sc_check_file(struct sc *s, FILE *fp, const struct sc_file *f, int *skip)
{
	struct stat st;

	*skip = 0;
	if (fstat(fileno(fp), &st) != 0)
		return lc_err_sys(s->e, LC_ERR_CONFIG, errno, "stat %s",
		    f->path);
	if (S_ISDIR(st.st_mode)) {
		if (f->flags & SC_F_REQUIRED)
			return lc_err_set(s->e, LC_ERR_CONFIG,
			    "ssh config %s is a directory", f->path);
		*skip = 1;	/* ssh reads it as empty */
		return 0;
	}
	if ((f->flags & SC_F_CHECKPERM) &&
	    ((st.st_uid != 0 && st.st_uid != getuid()) ||
	    (st.st_mode & 022) != 0))
		return lc_err_set(s->e, LC_ERR_CONFIG,
		    "bad owner or permissions on %s", f->path);
	return 0;
}

/* Every line of fp, read as the file f. */
static int
sc_read_fp(struct sc *s, const struct sc_file *fl, FILE *fp, int *activep)
{
	const struct sc_file f = *fl;
	const char *path = f.path;
	struct sc_buf *b = NULL;
	unsigned long num = 0;
	int r = 0, g;

	if ((b = malloc(sizeof(*b))) == NULL) {
		r = lc_err_set(s->e, LC_ERR_NOMEM, "out of memory");
		goto out;
	}
	while ((g = sc_getline(fp, b->line, sizeof(b->line))) == 1) {
		num++;
		if ((r = sc_line(s, &f, num, b, activep)) != 0)
			goto out;
	}
	if (g == -LC_ERR_TOOBIG)
		r = lc_err_set(s->e, LC_ERR_CONFIG, "%s line %lu: line longer "
		    "than %d bytes", path, num + 1, SC_LINE_MAX);
	else if (g == -LC_ERR_PROTO)
		r = lc_err_set(s->e, LC_ERR_CONFIG, "%s line %lu: NUL byte",
		    path, num + 1);
	else if (g == -LC_ERR_IO)
		r = lc_err_sys(s->e, LC_ERR_CONFIG, errno, "read %s", path);
 out:
	free(b);
	return r;
}

static int
sc_read_file(struct sc *s, const char *path, int flags, int *activep,
    int depth)
{
	struct sc_file f = { path, flags, depth };
	FILE *fp = NULL;
	int r, skip;

	if ((fp = fopen(path, "re")) == NULL) {
		if ((errno == ENOENT || errno == ENOTDIR) &&
		    !(flags & SC_F_REQUIRED))
			return 0;
		return lc_err_sys(s->e, LC_ERR_CONFIG, errno,
		    "cannot open ssh config %s", path);
	}
	if ((r = sc_check_file(s, fp, &f, &skip)) == 0 && !skip)
		r = sc_read_fp(s, &f, fp, activep);
	fclose(fp);
	return r;
}

/* --- expansion --- */

struct sc_tok {
	char key;
	const char *val;	/* NULL: known to ssh, not supported here */
};

static int
sc_put(char *out, size_t outsz, size_t *n, const char *v, size_t vl)
{
	if (vl >= outsz - *n)
		return -LC_ERR_TOOBIG;
	memcpy(out + *n, v, vl);
	*n += vl;
	out[*n] = '\0';
	return 0;
}

/* The directory a leading ~ or ~user stands for, and what follows it. */
static int
sc_tilde(struct sc *s, const char *what, const char *in, char *out,
    size_t outsz, size_t *n, const char **rest)
{
	struct passwd pw, *res = NULL;
	char user[256], *buf = NULL;
	const char *slash, *dir;
	size_t ul;
	int r = 0;

	*rest = in;
	if (in[0] != '~')
		return 0;
	slash = strchr(in + 1, '/');
	dir = s->home;
	if (slash != NULL && slash > in + 1) {	/* ~user/... */
		ul = (size_t)(slash - (in + 1));
		if (ul >= sizeof(user))
			return lc_err_set(s->e, LC_ERR_CONFIG,
			    "%s '%s': user name too long", what, in);
		memcpy(user, in + 1, ul);
		user[ul] = '\0';
		if ((buf = malloc(SC_PWBUF_SIZE)) == NULL)
			return lc_err_set(s->e, LC_ERR_NOMEM, "out of memory");
		if (getpwnam_r(user, &pw, buf, SC_PWBUF_SIZE, &res) != 0 ||
		    res == NULL) {
			r = lc_err_set(s->e, LC_ERR_CONFIG,
			    "%s '%s': no such user '%s'", what, in, user);
			goto out;
		}
		dir = pw.pw_dir;
	}
	/* As ssh's tilde_expand(): "~" is "~/", "~x" (no slash) is "~/x". */
	*rest = slash != NULL ? slash + 1 : in + 1;
	if (sc_put(out, outsz, n, dir, strlen(dir)) != 0 ||
	    ((*n == 0 || out[*n - 1] != '/') && sc_put(out, outsz, n, "/",
	    1) != 0))
		r = lc_err_set(s->e, LC_ERR_CONFIG, "%s '%s': too long",
		    what, in);
 out:
	free(buf);
	return r;
}

/* ${NAME} from the environment, as ssh's dollar_expand(). */
static int
sc_dollar(struct sc *s, const char *what, const char *in, const char **pp,
    char *out, size_t outsz, size_t *n)
{
	char name[256];
	const char *p = *pp + 2, *end = strchr(p, '}'), *v;
	size_t nl;

	if (end == NULL || (nl = (size_t)(end - p)) == 0 ||
	    nl >= sizeof(name))
		return lc_err_set(s->e, LC_ERR_CONFIG,
		    "%s '%s': bad ${} reference", what, in);
	memcpy(name, p, nl);
	name[nl] = '\0';
	if ((v = getenv(name)) == NULL)
		return lc_err_set(s->e, LC_ERR_CONFIG,
		    "%s '%s': environment variable %s is not set", what, in,
		    name);
	if (sc_put(out, outsz, n, v, strlen(v)) != 0)
		return lc_err_set(s->e, LC_ERR_CONFIG, "%s '%s': too long",
		    what, in);
	*pp = end;
	return 0;
}

/*
 * Expand in into out: optional leading ~, ${NAME} (when dollar), and
 * %-tokens from toks.  Errors name what (the keyword).
 */
static int
sc_expand(struct sc *s, const char *what, const char *in, int tilde,
    int dollar, const struct sc_tok *toks, size_t ntoks, char *out,
    size_t outsz)
{
	const char *p = in, *v;
	size_t n = 0, i;
	int r;

	out[0] = '\0';
	if (tilde && (r = sc_tilde(s, what, in, out, outsz, &n, &p)) != 0)
		return r;
	for (; *p != '\0'; p++) {
		if (dollar && p[0] == '$' && p[1] == '{') {
			if ((r = sc_dollar(s, what, in, &p, out, outsz,
			    &n)) != 0)
				return r;
			continue;
		}
		if (*p != '%') {
			v = p;
		} else if (*++p == '%') {
			v = p;
		} else {
			for (i = 0, v = NULL; i < ntoks; i++) {
				if (toks[i].key == *p)
					break;
			}
			if (i == ntoks || *p == '\0' ||
			    (v = toks[i].val) == NULL)
				return lc_err_set(s->e, LC_ERR_CONFIG,
				    "%s '%s': token %%%c is not supported",
				    what, in, *p == '\0' ? ' ' : *p);
			if (sc_put(out, outsz, &n, v, strlen(v)) != 0)
				goto toolong;
			continue;
		}
		if (sc_put(out, outsz, &n, v, 1) != 0)
			goto toolong;
	}
	return 0;
 toolong:
	return lc_err_set(s->e, LC_ERR_CONFIG, "%s '%s': expands to more "
	    "than %zu bytes", what, in, outsz - 1);
}

static int
sc_expand_list(struct sc *s, const char *what, char **list, size_t n,
    const struct sc_tok *toks, size_t ntoks)
{
	char buf[SC_PATH_MAX], *p;
	size_t i;
	int r;

	for (i = 0; i < n; i++) {
		if ((r = sc_expand(s, what, list[i], 1, 1, toks, ntoks, buf,
		    sizeof(buf))) != 0)
			return r;
		if ((p = strdup(buf)) == NULL)
			return lc_err_set(s->e, LC_ERR_NOMEM, "out of memory");
		free(list[i]);
		list[i] = p;
	}
	return 0;
}

/* Is h a numeric IPv4 or IPv6 address?  1/0. */
static int
sc_is_addr(const char *h)
{
	unsigned char a[16];

	return inet_pton(AF_INET, h, a) == 1 || inet_pton(AF_INET6, h, a) == 1;
}

/* Settle user, hostname and port, then expand the paths. */
static int
sc_finish(struct sc *s)
{
	struct lc_sshconf *o = s->out;
	struct sc_tok hosttok[] = { { 'h', o->host } };
	char thishost[256], shorthost[256], port[16], uid[24];
	const char *user = s->cmdline_user != NULL ? s->cmdline_user : s->user;
	size_t i;
	int r;

	if (user != NULL && strlen(user) >= sizeof(o->user))
		return lc_err_set(s->e, LC_ERR_CONFIG, "user name too long");
	snprintf(o->user, sizeof(o->user), "%s", user != NULL ? user : "");
	if (s->hostname_raw == NULL)
		snprintf(o->hostname, sizeof(o->hostname), "%s", o->host);
	else if ((r = sc_expand(s, "HostName", s->hostname_raw, 0, 0,
	    hosttok, 1, o->hostname, sizeof(o->hostname))) != 0)
		return r;
	if (!sc_is_addr(o->hostname)) {
		for (i = 0; o->hostname[i] != '\0'; i++)
			o->hostname[i] = (char)tolower(
			    (unsigned char)o->hostname[i]);
	}
	o->port = s->port > 0 ? (uint16_t)s->port : 0;
	o->address_family = s->af > 0 ? s->af : 0;

	if (gethostname(thishost, sizeof(thishost)) != 0)
		return lc_err_sys(s->e, LC_ERR_CONFIG, errno, "gethostname");
	thishost[sizeof(thishost) - 1] = '\0';
	snprintf(shorthost, sizeof(shorthost), "%.*s",
	    (int)strcspn(thishost, "."), thishost);
	snprintf(port, sizeof(port), "%d", s->port > 0 ? s->port :
	    SC_DEFAULT_PORT);
	snprintf(uid, sizeof(uid), "%llu", (unsigned long long)getuid());
	{
		const struct sc_tok toks[] = {
			{ 'C', NULL }, { 'L', shorthost }, { 'd', s->home },
			{ 'h', o->hostname }, { 'i', uid },
			{ 'j', NULL },
			{ 'k', s->host_key_alias != NULL ?
			    s->host_key_alias : o->host },
			{ 'l', thishost }, { 'n', o->host }, { 'p', port },
			{ 'r', sc_ruser(s) }, { 'u', s->local_user },
		};
		const size_t nt = sizeof(toks) / sizeof(toks[0]);

		if ((r = sc_expand_list(s, "IdentityFile", o->identity_files,
		    o->n_identity_files, toks, nt)) != 0 ||
		    (r = sc_expand_list(s, "UserKnownHostsFile",
		    o->user_known_hosts, o->n_user_known_hosts, toks,
		    nt)) != 0 ||
		    (r = sc_expand_list(s, "GlobalKnownHostsFile",
		    o->global_known_hosts, o->n_global_known_hosts, toks,
		    nt)) != 0)
			return r;
	}
	return 0;
}

/* --- entry points --- */

static void
sc_defaults(struct lc_sshconf *c)
{
	memset(c, 0, sizeof(*c));
	c->identities_only = -1;
	c->strict = LC_STRICT_UNSET;
	c->connect_timeout = -1;
	c->server_alive_interval = -1;
	c->server_alive_count_max = -1;
	c->hash_known_hosts = -1;
	c->batch_mode = -1;
}

/* Fill in home and local user from the password database if not given. */
static int
sc_identity(struct sc *s)
{
	struct passwd *res = NULL;

	s->home = s->ctx->home;
	s->local_user = s->ctx->local_user;
	if (s->home != NULL && s->local_user != NULL)
		return 0;
	if ((s->pwbuf = malloc(SC_PWBUF_SIZE)) == NULL)
		return lc_err_set(s->e, LC_ERR_NOMEM, "out of memory");
	if (getpwuid_r(getuid(), &s->pw, s->pwbuf, SC_PWBUF_SIZE,
	    &res) != 0 || res == NULL)
		return lc_err_set(s->e, LC_ERR_CONFIG,
		    "cannot look up the local user (uid %llu)",
		    (unsigned long long)getuid());
	if (s->home == NULL)
		s->home = s->pw.pw_dir;
	if (s->local_user == NULL)
		s->local_user = s->pw.pw_name;
	return 0;
}

static int
sc_read_all(struct sc *s)
{
	const struct lc_sshconf_ctx *ctx = s->ctx;
	char path[SC_PATH_MAX];
	int active = 1, r;

	if (ctx->config_file != NULL) {
		if (strcasecmp(ctx->config_file, "none") == 0)
			return 0;
		return sc_read_file(s, ctx->config_file,
		    SC_F_USER | SC_F_REQUIRED, &active, 0);
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/.ssh/config",
	    s->home) >= sizeof(path))
		return lc_err_set(s->e, LC_ERR_CONFIG, "home directory "
		    "name too long");
	if ((r = sc_read_file(s, path, SC_F_USER | SC_F_CHECKPERM, &active,
	    0)) != 0)
		return r;
	active = 1;
	return sc_read_file(s, ctx->system_config != NULL ?
	    ctx->system_config : SC_SYSTEM_CONFIG, 0, &active, 0);
}

/* The text given instead of the files, for lc__sshconf_resolve_mem(). */
struct sc_mem {
	const char *text;
	size_t len;
};

static int
sc_read_mem(struct sc *s, const struct sc_mem *m)
{
	const struct sc_file f = { "(config)", SC_F_USER | SC_F_REQUIRED, 0 };
	FILE *fp;
	int active = 1, r;

	if (m->len == 0)
		return 0;
	if ((fp = fmemopen((void *)(uintptr_t)m->text, m->len, "r")) == NULL)
		return lc_err_sys(s->e, LC_ERR_NOMEM, errno, "fmemopen");
	r = sc_read_fp(s, &f, fp, &active);
	fclose(fp);
	return r;
}

static int
sc_resolve(const struct lc_sshconf_ctx *ctx, const char *host,
    const struct sc_mem *mem, struct lc_sshconf *out, struct lc_err *e)
{
	struct sc s;
	int r;

	sc_defaults(out);
	memset(&s, 0, sizeof(s));
	s.ctx = ctx;
	s.out = out;
	s.e = e;
	s.port = -1;
	s.af = -1;
	if (ctx == NULL || host == NULL || host[0] == '\0' ||
	    strlen(host) >= sizeof(out->host))
		return lc_err_set(e, LC_ERR_USAGE, "bad host name for ssh "
		    "config lookup");
	snprintf(out->host, sizeof(out->host), "%s", host);
	if (ctx->cmdline_user != NULL && ctx->cmdline_user[0] != '\0')
		s.cmdline_user = ctx->cmdline_user;

	s.no_include = mem != NULL;
	if ((r = sc_identity(&s)) != 0 ||
	    (r = (mem != NULL ? sc_read_mem(&s, mem) : sc_read_all(&s))) != 0 ||
	    (r = sc_finish(&s)) != 0) {
		lc_sshconf_free(out);
		sc_defaults(out);
	}
	free(s.hostname_raw);
	free(s.user);
	free(s.host_key_alias);
	free(s.pwbuf);
	return r;
}

int
lc_sshconf_resolve(const struct lc_sshconf_ctx *ctx, const char *host,
    struct lc_sshconf *out, struct lc_err *e)
{
	return sc_resolve(ctx, host, NULL, out, e);
}

int
lc__sshconf_resolve_mem(const struct lc_sshconf_ctx *ctx, const char *host,
    const char *text, size_t len, struct lc_sshconf *out, struct lc_err *e)
{
	const struct sc_mem m = { text, len };

	return sc_resolve(ctx, host, &m, out, e);
}

void
lc_sshconf_free(struct lc_sshconf *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->n_identity_files; i++)
		free(c->identity_files[i]);
	for (i = 0; i < c->n_user_known_hosts; i++)
		free(c->user_known_hosts[i]);
	for (i = 0; i < c->n_global_known_hosts; i++)
		free(c->global_known_hosts[i]);
	free(c->proxy_jump);
	free(c->proxy_command);
	free(c->revoked_host_keys);
	memset(c, 0, sizeof(*c));
}
