/* Path strings, taken apart without touching the filesystem. */
#ifndef LANECP_PATH_H
#define LANECP_PATH_H

#include <stddef.h>

/* Last path component of p, without trailing slashes, into out. */
void lc_path_basename(const char *p, char *out, size_t outsz);
/* Directory part of p ("." if none), into out. */
void lc_path_dirname(const char *p, char *out, size_t outsz);

/*
 * Peer text made safe for one line: lc_log_escape (log.h), the one escape
 * style of everything lanecp prints, so that text escaped here and
 * printed by the log reads the same as text the log escaped itself.
 */
void lc_printable(const char *in, char *out, size_t outsz);

/*
 * A remote user path as scp takes it, for the agent to open: "~" and
 * "~/x" start at home (HOME, else the password entry's directory),
 * "~user" and "~user/x" at user's home directory (getpwnam); any other
 * path is copied unchanged (a relative one stays relative: to the login
 * directory, or under --restrict to DIR).  No shell is involved, so no
 * other character is special.  Confinement applies to the result.
 * 0, or -LC_ERR_IO with e naming the path (unknown user, no home, result
 * longer than outsz - 1).
 */
struct lc_err;
int lc_path_expand_tilde(const char *in, char *out, size_t outsz,
    struct lc_err *e);

#endif
