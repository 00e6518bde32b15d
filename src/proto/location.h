/*
 * Command line locations: "[user@]host:path" or a local path, as scp reads
 * them.  An argument is remote when it has a ':' before any '/' and does
 * not start with ':'; "[v6addr]:path" brackets an IPv6 address.  "host:"
 * alone means the remote login directory.
 *
 * A port: "ssh://[user@]host[:port][/path]" (or scp://), as scp takes it:
 * the path after the host's '/' is relative to the login directory
 * ("ssh://h/dir" is ~/dir, "ssh://h//srv/dir" is /srv/dir), %XX is
 * decoded, no path is the login directory; "[v6addr]" brackets an IPv6
 * address; the port is 1 to 65535.  "host:2501:path" is refused
 * rather than read as the path "2501:path" of scp (a port was almost
 * surely meant); "host:./2501:path" names such a file.
 */
#ifndef LANECP_LOCATION_H
#define LANECP_LOCATION_H

#include "err.h"
#include "lc_limits.h"

struct lc_location {
	char user[256];		/* "" when not given */
	char host[LC_HOST_MAX];	/* "" for a local path */
	char path[LC_PATH_MAX];
	unsigned port;		/* ssh://host:PORT/, 0: not given */
};

/* 0 or -LC_ERR_USAGE with e naming the argument. */
int lc_location_parse(const char *arg, struct lc_location *out,
    struct lc_err *e);

static inline int
lc_location_is_remote(const struct lc_location *l)
{
	return l->host[0] != '\0';
}

/* Same host, user and port (so one endpoint can serve both). */
int lc_location_same_host(const struct lc_location *a,
    const struct lc_location *b);

#endif
