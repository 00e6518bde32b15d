/*
 * Path confinement for the agent.
 *
 * Two kinds of paths reach an agent:
 *   user paths   the source and the target, chosen by whoever runs the
 *                controller.  Unconfined unless the agent runs with
 *                --restrict DIR (a forced command for a cron key): then a
 *                relative path is taken relative to DIR, an absolute one
 *                must lie under DIR, and resolution may not leave DIR
 *                through "..", symlinks or magic links.
 *   peer names   file names inside the target directory.  Always resolved
 *                beneath that directory: absolute names, ".." and symlinks
 *                that would escape are refused, whatever the controller
 *                asked for (the scp CVE-2019-6111 / CVE-2020-12062 class).
 *
 * A peer path of several components (a tree's "dir/sub/file") is also
 * resolved with RESOLVE_NO_SYMLINKS: no symlink on the way is followed,
 * even one that stays beneath.
 *
 * Both use openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS, so the
 * check and the open are one atomic step (no check-then-use race).  A
 * kernel without openat2 (before Linux 5.6) makes --restrict refuse to run
 * and peer names fall back to a lexical single-component check plus
 * O_NOFOLLOW.
 */
#ifndef LANECP_CONFINE_H
#define LANECP_CONFINE_H

#include <sys/stat.h>
#include <sys/types.h>

#include "err.h"

struct lc_confine {
	int root_fd;		/* -1: unconfined */
	char root[4096];	/* realpath of DIR, for messages */
};

/* The one message (after "PATH: ") for every user path a restricted
   agent refuses. */
#define LC_CONFINE_REFUSED "refused by the restricted agent"

/* Unconfined (dir == NULL) or confined to dir. */
int lc_confine_init(struct lc_confine *c, const char *dir, struct lc_err *e);
void lc_confine_free(struct lc_confine *c);

/*
 * A user path as the controller wrote it (SRC_ADD's path, SINK_TARGET's
 * target) into out[outsz], with a leading "~" or "~user" expanded when
 * tilde is set (a remote agent, as scp: lc_path_expand_tilde).  Confined:
 * "~" and "~NAME" with NAME this account's login name are its home; any
 * other "~NAME" is refused without looking the account up, and so is a
 * result outside the root.  A confined agent's refusals here and in
 * lc_confine_open() are all -LC_ERR_DENIED with the one message
 * "PATH: " LC_CONFINE_REFUSED, PATH as the caller wrote it, whatever the
 * reason: no answer tells whether an account exists or what lies outside
 * the root.  Unconfined, the errors are lc_path_expand_tilde()'s.
 */
int lc_confine_user_path(const struct lc_confine *c, const char *in,
    int tilde, char *out, size_t outsz, struct lc_err *e);

/*
 * Open a user path (dirfd < 0) or a peer name beneath dirfd (dirfd >= 0).
 * flags/mode as for open(2).  Errors: -LC_ERR_DENIED (escape, absolute
 * peer name), -LC_ERR_IO with errno text naming path.  *fd = -1 on error.
 */
int lc_confine_open(const struct lc_confine *c, int dirfd, const char *path,
    int flags, mode_t mode, int *fd, struct lc_err *e);

/* stat(2) through lc_confine_open(O_PATH); *err gets the errno (0 ok). */
int lc_confine_stat(const struct lc_confine *c, int dirfd, const char *path,
    struct stat *st, int *err, struct lc_err *e);

#endif
