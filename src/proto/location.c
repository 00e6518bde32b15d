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

int
lc_location_parse(const char *arg, struct lc_location *out,
    struct lc_err *e)
{
	const char *colon, *hs, *he, *at;
	size_t ulen, hlen;

	memset(out, 0, sizeof(*out));
	if (arg == NULL || arg[0] == '\0')
		return lc_err_set(e, LC_ERR_USAGE, "empty path argument");
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
	return strcmp(a->host, b->host) == 0 && strcmp(a->user, b->user) == 0;
}
