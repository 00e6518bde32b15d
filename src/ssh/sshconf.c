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
 *
 * This file is the reader: files, lines, Include and the entry points.
 * The rest, each in its own file (internals in sshconf_int.h):
 *   sshconf_match.c     patterns, Host and Match blocks
 *   sshconf_keywords.c  the keyword table and each keyword's value
 *   sshconf_tokens.c    %-tokens, ~ and ${NAME}: checks and expansion
 */
#include "sshconf.h"
#include "err.h"
#include "log.h"
#include "parse.h"
#include "sshconf_int.h"

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

static int sc_read_file(struct sc *, const char *, int, int *, int);

int
lc__sshconf_err(struct sc *s, const struct sc_line *l, const char *fmt, ...)
{
	char msg[LC_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (l->f->flags & SC_F_CMDLINE)
		return lc_err_set(s->e, LC_ERR_CONFIG, "-o %s: %s",
		    l->kw != NULL ? l->kw : "", msg);
	return lc_err_set(s->e, LC_ERR_CONFIG, "%s line %lu: %s",
	    l->f->path, l->num, msg);
}

int
lc__sshconf_bad(struct sc *s, const struct sc_line *l, const char *arg)
{
	return lc__sshconf_err(s, l, "bad value for %s: '%s'", l->kw, arg);
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
		return lc__sshconf_err(s, l,
		    "bad Include path '%s' (~ is only for "
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
		return lc__sshconf_err(s, l,
		    "Include path too long: '%s'", arg);
	memcpy(pat + n, arg, strlen(arg) + 1);
	return 0;
}

int
lc__sshconf_kw_include(struct sc *s, const struct sc_line *l, size_t unused)
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
			return lc__sshconf_err(s, l,
			    "empty argument for Include");
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
			return lc__sshconf_err(s, l,
			    "Include: glob failed for '%s'",
			    pat);
		}
		for (j = 0; j < gl.gl_pathc; j++) {
			if (l->f->depth >= SC_DEPTH_MAX) {
				globfree(&gl);
				return lc__sshconf_err(s, l,
				    "Include nested too deeply "
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
	if ((k = lc__sshconf_keyword(kw, kwlen)) == NULL) {
		lc_log_debug("%s line %lu: ignoring keyword %.*s", f->path,
		    num, (int)(kwlen > 64 ? 64 : kwlen), kw);
		return 0;
	}
	l.kw = k->name;
	if (*p == '\0')
		return lc__sshconf_err(s, &l,
		    "missing argument for %s", k->name);
	if (k->where == SC_W_ROUTE) {
		/*
		 * as ssh, a routing keyword takes the raw rest of the line
		 * (ProxyCommand is shell)
		 */
		b->argv[0] = p;
		l.argc = 1;
	} else {
		r = sc_split(p, b->args, sizeof(b->args), b->argv, &l.argc);
		if (r == -LC_ERR_CONFIG)
			return lc__sshconf_err(s, &l, "unterminated quote");
		if (r != 0)
			return lc__sshconf_err(s, &l, "too many arguments");
	}
	if ((s->maybe_line != 0 || (f->flags & SC_F_MAYBE)) &&
	    (r = lc__sshconf_check_maybe(s, &l, k)) != 0)
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

/*
 * The -o options, as the first lines of all, each on its own (a Host
 * line cannot get in: lc_sshconf_check_option refuses it, and so does
 * this).
 */
static int
sc_read_opts(struct sc *s)
{
	const struct sc_file f = { "-o", SC_F_USER | SC_F_CMDLINE, 0 };
	const struct lc_sshconf_ctx *ctx = s->ctx;
	struct sc_buf *b;
	int active = 1, r = 0;

	if (ctx->n_cmdline_options == 0)
		return 0;
	if (ctx->n_cmdline_options > LC_SSHCONF_OPTS_MAX)
		return lc_err_set(s->e, LC_ERR_USAGE, "more than %d -o options",
		    LC_SSHCONF_OPTS_MAX);
	if ((b = malloc(sizeof(*b))) == NULL)
		return lc_err_set(s->e, LC_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < ctx->n_cmdline_options && r == 0; i++) {
		const char *o = ctx->cmdline_options[i];
		size_t kwlen = strcspn(o, " \t=");

		if (strlen(o) > SC_LINE_MAX || strchr(o, '\n') != NULL) {
			r = lc_err_set(s->e, LC_ERR_USAGE, "-o: option too "
			    "long or with a newline");
			break;
		}
		if ((kwlen == 4 && strncasecmp(o, "Host", 4) == 0) ||
		    (kwlen == 5 && strncasecmp(o, "Match", 5) == 0) ||
		    (kwlen == 7 && strncasecmp(o, "Include", 7) == 0)) {
			r = lc_err_set(s->e, LC_ERR_USAGE, "-o %.*s: not "
			    "taken on the command line (it is for files)",
			    (int)kwlen, o);
			break;
		}
		snprintf(b->line, sizeof(b->line), "%s", o);
		active = 1;
		r = sc_line(s, &f, (unsigned long)i + 1, b, &active);
	}
	free(b);
	return r;
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
	if (ctx->cmdline_port > 0 && ctx->cmdline_port <= 65535)
		s.port = (int)ctx->cmdline_port;

	s.no_include = mem != NULL;
	if ((r = sc_identity(&s)) != 0 ||
	    (r = sc_read_opts(&s)) != 0 ||
	    (r = (mem != NULL ? sc_read_mem(&s, mem) : sc_read_all(&s))) != 0 ||
	    (r = lc__sshconf_finish(&s)) != 0) {
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

int
lc_sshconf_check_option(const char *opt, struct lc_err *e)
{
	const char *const opts[1] = { opt };
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf out;
	const struct sc_mem m = { "", 0 };
	size_t kwlen;
	int r;

	if (opt == NULL)
		return lc_err_set(e, LC_ERR_USAGE, "-o: missing option");
	opt += strspn(opt, " \t");
	kwlen = strcspn(opt, " \t=");
	if (kwlen == 0 || opt[kwlen] == '\0')
		return lc_err_set(e, LC_ERR_USAGE, "-o %.64s: want "
		    "Keyword=value or \"Keyword value\" (as ssh -o)", opt);
	if (lc__sshconf_keyword(opt, kwlen) == NULL)
		return lc_err_set(e, LC_ERR_USAGE, "-o %.*s: not an ssh_config "
		    "keyword lanecp knows (lanecp(1), SSH CONFIGURATION, lists "
		    "them; with --ssh the ssh program takes any)",
		    (int)(kwlen > 64 ? 64 : kwlen), opt);
	/* the value, checked as a file's would be, for no host in
	   particular: nothing is read or looked up */
	memset(&ctx, 0, sizeof(ctx));
	ctx.home = "/";
	ctx.local_user = "user";
	ctx.cmdline_options = opts;
	ctx.n_cmdline_options = 1;
	r = sc_resolve(&ctx, "the host", &m, &out, e);
	lc_sshconf_free(&out);
	if (r != 0 && e != NULL)
		e->code = LC_ERR_USAGE;
	return r != 0 ? -LC_ERR_USAGE : 0;
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
