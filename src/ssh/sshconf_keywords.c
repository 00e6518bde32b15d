/*
 * ssh_config: the keyword table and each keyword's value (see
 * sshconf_int.h).  Values are checked whether or not the block applies
 * and stored when it does and the keyword is still unset (first value
 * wins).
 */
#include "sshconf.h"
#include "err.h"
#include "log.h"
#include "parse.h"
#include "sshconf_int.h"

#include <ctype.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Exactly one non-empty argument. */
static int
sc_one_arg(struct sc *s, const struct sc_line *l, const char **argp)
{
	*argp = "";	/* never NULL, even on error */
	if (l->argc == 0 || l->argv[0][0] == '\0')
		return lc__sshconf_err(s, l, "missing argument for %s", l->kw);
	if (l->argc > 1)
		return lc__sshconf_err(s, l,
		    "extra arguments for %s: '%s'", l->kw,
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

static int
sc_kw_hostname(struct sc *s, const struct sc_line *l, size_t unused)
{
	const char *arg;
	int r;

	(void)unused;
	if ((r = sc_one_arg(s, l, &arg)) != 0 ||
	    (r = lc__sshconf_check_tokens(s, l, arg, SC_HOST_TOKENS, 0)) != 0)
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
		return lc__sshconf_bad(s, l, arg);
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

/* Only whether one applies: lanecp cannot present certificates. */
static int
sc_kw_certfile(struct sc *s, const struct sc_line *l, size_t unused)
{
	const char *arg;
	int r;

	(void)unused;
	if ((r = sc_one_arg(s, l, &arg)) != 0)
		return r;
	if (*l->activep)
		s->out->certificate_file = 1;
	return 0;
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
		return lc__sshconf_bad(s, l, arg);
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
		return lc__sshconf_bad(s, l, arg);
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
	return lc__sshconf_bad(s, l, arg);
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
		return lc__sshconf_bad(s, l, arg);
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
		return lc__sshconf_bad(s, l, arg);
	sc_set_int(s, l, off, (int)v);
	return 0;
}

static int
sc_add_path(struct sc *s, const struct sc_line *l, char **list, size_t *n,
    const char *v)
{
	if (*n >= LC_SSHCONF_MAX_FILES)
		return lc__sshconf_err(s, l,
		    "too many %s entries (max %d)", l->kw,
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
	if ((r = lc__sshconf_check_tokens(s, l, arg, SC_PATH_TOKENS, 1)) != 0)
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
		return lc__sshconf_err(s, l, "missing argument for %s", l->kw);
	for (i = 0; i < l->argc; i++) {
		if (l->argv[i][0] == '\0')
			return lc__sshconf_err(s, l,
			    "empty argument for %s", l->kw);
		if (strcasecmp(l->argv[i], "none") == 0) {
			if (l->argc > 1)
				return lc__sshconf_err(s, l,
				    "%s: \"none\" must appear alone", l->kw);
			if (apply)
				*none = 1;
			return 0;
		}
		if ((r = lc__sshconf_check_tokens(s, l, l->argv[i],
		    SC_PATH_TOKENS, 1)) != 0)
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
		return lc__sshconf_bad(s, l, v);
	if (!sc_first_on(s, l, which))
		return 0;
	return lc__sshconf_err(s, l, "%s is not supported by lanecp (it %s); "
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
		return lc__sshconf_bad(s, l, v);
	if (!sc_first_on(s, l, which))
		return 0;
	/* only when it takes effect: configs use %C etc. for other hosts */
	if (which == SC_ROUTE_COMMAND &&
	    (r = lc__sshconf_check_tokens(s, l, v, SC_PROXY_TOKENS, 0)) != 0)
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
		return lc__sshconf_bad(s, l, arg);
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
int
lc__sshconf_check_maybe(struct sc *s, const struct sc_line *l,
    const struct sc_keyword *k)
{
	if (k->where == SC_W_NONE || !sc_where_unset(s, k, l))
		return 0;
	if (s->maybe_line != 0)
		return lc__sshconf_err(s, l,
		    "%s inside 'Match %s' (%s line %lu), "
		    "which lanecp cannot evaluate; ssh may apply it, so "
		    "refusing to connect to %s", l->kw, s->maybe_attr,
		    s->maybe_file, s->maybe_line, s->out->host);
	return lc__sshconf_err(s, l, "%s in a file included from a Match block "
	    "lanecp cannot evaluate; ssh may apply it, so refusing to "
	    "connect to %s", l->kw, s->out->host);
}

static const struct sc_keyword sc_keywords[] = {
	{ "Host", lc__sshconf_kw_host, 0, SC_W_NONE },
	{ "Match", lc__sshconf_kw_match, 0, SC_W_NONE },
	{ "Include", lc__sshconf_kw_include, 0, SC_W_NONE },
	{ "HostName", sc_kw_hostname, 0, SC_W_HOSTNAME },
	{ "User", sc_kw_user, 0, SC_W_USER },
	{ "Port", sc_kw_port, 0, SC_W_PORT },
	{ "HostKeyAlias", sc_kw_hostkeyalias, 0, SC_W_NONE },
	{ "IdentityFile", sc_kw_identityfile, 0, SC_W_NONE },
	{ "CertificateFile", sc_kw_certfile, 0, SC_W_NONE },
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

const struct sc_keyword *
lc__sshconf_keyword(const char *kw, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(sc_keywords) / sizeof(sc_keywords[0]); i++) {
		if (strlen(sc_keywords[i].name) == len &&
		    strncasecmp(sc_keywords[i].name, kw, len) == 0)
			return &sc_keywords[i];
	}
	return NULL;
}
