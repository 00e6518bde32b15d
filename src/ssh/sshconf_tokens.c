/*
 * ssh_config: %-tokens, ~ and ${NAME} in values (see sshconf_int.h):
 * checked when a line is read, expanded once user, host name and port
 * are settled (lc__sshconf_finish).
 */
#include "sshconf.h"
#include "err.h"
#include "log.h"
#include "parse.h"
#include "sshconf_int.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/*
 * Check the %-tokens (and ${NAME} references when dollar is set) of a
 * value now, so a bad one is reported with its line even if the value is
 * never used, as ssh would fail on it when used.
 */
int
lc__sshconf_check_tokens(struct sc *s, const struct sc_line *l, const char *v,
    const char *tokens, int dollar)
{
	const char *p, *end;

	for (p = v; *p != '\0'; p++) {
		if (dollar && p[0] == '$' && p[1] == '{') {
			end = strchr(p + 2, '}');
			if (end == NULL || end == p + 2)
				return lc__sshconf_err(s, l,
				    "bad value for %s: '%s' "
				    "(bad ${} reference)", l->kw, v);
			for (p += 2; p < end; p++) {
				if (!isalnum((unsigned char)*p) && *p != '_')
					return lc__sshconf_err(s, l,
					    "bad value for "
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
			return lc__sshconf_err(s, l, "bad value for %s: '%s' "
			    "(unknown token %%%c)", l->kw, v,
			    *p == '\0' ? ' ' : *p);
	}
	return 0;
}

const char *
lc__sshconf_ruser(const struct sc *s)
{
	if (s->cmdline_user != NULL)
		return s->cmdline_user;
	return s->user != NULL ? s->user : s->local_user;
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
int
lc__sshconf_finish(struct sc *s)
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
			{ 'r', lc__sshconf_ruser(s) }, { 'u', s->local_user },
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
