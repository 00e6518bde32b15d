/*
 * ssh_config: patterns (OpenSSH match.c semantics) and the blocks that
 * select which lines apply, Host and Match (see sshconf_int.h).
 */
#include "sshconf.h"
#include "err.h"
#include "log.h"
#include "parse.h"
#include "sshconf_int.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

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

int
lc__sshconf_kw_host(struct sc *s, const struct sc_line *l, size_t unused)
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
			return lc__sshconf_err(s, l, "empty argument for Host");
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
			return lc__sshconf_err(s, l, "HostName too long");
		memcpy(buf + n, v, vl);
		n += vl;
	}
	buf[n] = '\0';
	return 0;
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
		*r = sc_match_list(lc__sshconf_ruser(s), arg, 0) == 1;
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
int
lc__sshconf_kw_match(struct sc *s, const struct sc_line *l, size_t unused)
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
				return lc__sshconf_err(s, l,
				    "'all' cannot be combined "
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
			return lc__sshconf_err(s, l,
			    "missing Match criteria for '%s'",
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
		return lc__sshconf_err(s, l,
		    "Match needs one or more criteria");
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
