#include "location.h"

#include <stdio.h>
#include <string.h>

static int
lc_location_local(const char *arg, struct lc_location *out,
    struct lc_err *e)
{
	if (strlen(arg) >= sizeof(out->path))
		return lc_err_set(e, LC_ERR_USAGE, "path too long: %.40s...",
		    arg);
	snprintf(out->path, sizeof(out->path), "%s", arg);
	return 0;
}

static int
lc_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* s (n bytes) with %XX decoded into out (outsz); -1: bad or too long. */
static int
lc_url_decode(const char *s, size_t n, char *out, size_t outsz)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i];

		if (c == '%') {
			int hi, lo;

			if (i + 2 >= n || (hi = lc_hexval(s[i + 1])) < 0 ||
			    (lo = lc_hexval(s[i + 2])) < 0)
				return -1;
			c = hi * 16 + lo;
			i += 2;
			if (c == 0)
				return -1;
		}
		if (o + 1 >= outsz)
			return -1;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

/*
 * "ssh://[user@]host[:port][/path]" (scheme already skipped: u is what
 * follows "//"), as scp's URI form.
 */
static int
lc_location_url(const char *arg, const char *u, struct lc_location *out,
    struct lc_err *e)
{
	const char *end = u + strcspn(u, "/"), *at = NULL, *hs, *he, *pe;
	unsigned long port = 0;

	for (const char *p = u; p < end; p++)
		if (*p == '@')
			at = p;
	hs = at != NULL ? at + 1 : u;
	if (at != NULL && (at == u ||
	    lc_url_decode(u, (size_t)(at - u), out->user,
	    sizeof(out->user)) != 0 || out->user[0] == '\0'))
		return lc_err_set(e, LC_ERR_USAGE, "%.200s: bad or empty user "
		    "name", arg);
	if (*hs == '[') {
		he = memchr(hs, ']', (size_t)(end - hs));
		if (he == NULL)
			return lc_err_set(e, LC_ERR_USAGE, "%.200s: no ']' after "
			    "the IPv6 address", arg);
		pe = he + 1;
		hs++;
	} else {
		he = memchr(hs, ':', (size_t)(end - hs));
		he = he != NULL ? he : end;
		pe = he;
	}
	if (he == hs)
		return lc_err_set(e, LC_ERR_USAGE, "%.200s: empty host name",
		    arg);
	if ((size_t)(he - hs) >= sizeof(out->host))
		return lc_err_set(e, LC_ERR_USAGE, "%.40s...: too long", arg);
	memcpy(out->host, hs, (size_t)(he - hs));
	if (strchr(out->host, '@') != NULL || out->host[0] == '-')
		return lc_err_set(e, LC_ERR_USAGE, "%.200s: bad host name",
		    arg);
	if (pe < end) {
		/* ":port", digits only, 1..65535 (an empty port: none) */
		if (*pe != ':')
			return lc_err_set(e, LC_ERR_USAGE, "%.200s: want "
			    "[v6addr]:port after the IPv6 address", arg);
		for (const char *p = pe + 1; p < end; p++) {
			if (*p < '0' || *p > '9' || port > 65535)
				return lc_err_set(e, LC_ERR_USAGE, "%.200s: bad "
				    "port (want a number from 1 to 65535)", arg);
			port = port * 10 + (unsigned long)(*p - '0');
		}
		if (end > pe + 1 && (port == 0 || port > 65535))
			return lc_err_set(e, LC_ERR_USAGE, "%.200s: bad port "
			    "(want a number from 1 to 65535)", arg);
	}
	out->port = (unsigned)port;
	/* scp: the path follows the host's '/', relative to the login
	   directory; none is the login directory */
	if (*end == '\0' || end[1] == '\0')
		snprintf(out->path, sizeof(out->path), ".");
	else if (lc_url_decode(end + 1, strlen(end + 1), out->path,
	    sizeof(out->path)) != 0)
		return lc_err_set(e, LC_ERR_USAGE, "%.200s: bad %%XX escape or "
		    "path too long", arg);
	return 0;
}

/* "host:2501:path": scp reads the path "2501:path"; a port was meant. */
static int
lc_location_port_like(const char *arg, const char *path, struct lc_err *e)
{
	size_t n = strspn(path, "0123456789");

	if (n == 0 || n > 5 || path[n] != ':')
		return 0;
	return lc_err_set(e, LC_ERR_USAGE, "%.200s: a port goes in "
	    "ssh://[user@]host:%.*s/path (or -o Port=%.*s), not host:%.*s:path; "
	    "for a file named '%.64s' write host:./%.64s", arg, (int)n, path,
	    (int)n, path, (int)n, path, path, path);
}

int
lc_location_parse(const char *arg, struct lc_location *out,
    struct lc_err *e)
{
	const char *colon, *hs, *he, *at;
	size_t ulen, hlen;
	int r;

	memset(out, 0, sizeof(*out));
	if (arg == NULL || arg[0] == '\0')
		return lc_err_set(e, LC_ERR_USAGE, "empty path argument");
	if (strncmp(arg, "ssh://", 6) == 0 || strncmp(arg, "scp://", 6) == 0)
		return lc_location_url(arg, arg + 6, out, e);
	if (arg[0] == ':' || arg[0] == '/')
		return lc_location_local(arg, out, e);
	/* user part: up to the last '@' before the host */
	hs = arg;
	at = NULL;
	for (const char *p = arg; *p != '\0' && *p != ':' && *p != '/' &&
	    *p != '['; p++)
		if (*p == '@')
			at = p;
	if (at != NULL)
		hs = at + 1;
	if (*hs == '[') {
		he = strchr(hs, ']');
		if (he == NULL || he[1] != ':')
			return lc_location_local(arg, out, e);
		colon = he + 1;
		hs++;
	} else {
		colon = strchr(hs, ':');
		if (colon == NULL)
			return lc_location_local(arg, out, e);
		if (memchr(hs, '/', (size_t)(colon - hs)) != NULL)
			return lc_location_local(arg, out, e);
		he = colon;
	}
	ulen = at != NULL ? (size_t)(at - arg) : 0;
	hlen = (size_t)(he - hs);
	if (hlen == 0)
		return lc_err_set(e, LC_ERR_USAGE, "%s: empty host name", arg);
	if (at != NULL && ulen == 0)
		return lc_err_set(e, LC_ERR_USAGE, "%s: empty user name", arg);
	if (ulen >= sizeof(out->user) || hlen >= sizeof(out->host) ||
	    strlen(colon + 1) >= sizeof(out->path))
		return lc_err_set(e, LC_ERR_USAGE, "%.40s...: too long", arg);
	if ((r = lc_location_port_like(arg, colon + 1, e)) != 0)
		return r;
	memcpy(out->user, arg, ulen);
	memcpy(out->host, hs, hlen);
	snprintf(out->path, sizeof(out->path), "%s",
	    colon[1] != '\0' ? colon + 1 : ".");
	return 0;
}

int
lc_location_same_host(const struct lc_location *a,
    const struct lc_location *b)
{
	return strcmp(a->host, b->host) == 0 &&
	    strcmp(a->user, b->user) == 0 && a->port == b->port;
}
