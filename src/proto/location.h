/*
 * Command line locations: "[user@]host:path" or a local path, as scp reads
 * them.  An argument is remote when it has a ':' before any '/' and does
 * not start with ':'; "[v6addr]:path" brackets an IPv6 address.  "host:"
 * alone means the remote login directory.
 */
#ifndef LANECP_LOCATION_H
#define LANECP_LOCATION_H

#include "err.h"
#include "lc_limits.h"

struct lc_location {
	char user[256];		/* "" when not given */
	char host[LC_HOST_MAX];	/* "" for a local path */
	char path[LC_PATH_MAX];
};

/* 0 or -LC_ERR_USAGE with e naming the argument. */
int lc_location_parse(const char *arg, struct lc_location *out,
    struct lc_err *e);

static inline int
lc_location_is_remote(const struct lc_location *l)
{
	return l->host[0] != '\0';
}

/* Same host and user (so one endpoint can serve both). */
int lc_location_same_host(const struct lc_location *a,
    const struct lc_location *b);

#endif
