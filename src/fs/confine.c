#include "confine.h"
#include "path.h"
#include "idname.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int
lc_openat2(int dirfd, const char *path, int flags, mode_t mode,
    uint64_t resolve)
{
	struct open_how how;

	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(unsigned)(flags | O_CLOEXEC);
	how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | resolve;
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

int
lc_confine_init(struct lc_confine *c, const char *dir, struct lc_err *e)
{
	int fd;

	c->root_fd = -1;
	c->root[0] = '\0';
	if (dir == NULL)
		return 0;
	if (realpath(dir, c->root) == NULL)
		return lc_err_sys(e, LC_ERR_USAGE, errno, "--restrict %s", dir);
	fd = open(c->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return lc_err_sys(e, LC_ERR_USAGE, errno, "--restrict %s",
		    c->root);
	/* fail closed: without openat2 there is no race-free confinement */
	if (lc_openat2(fd, ".", O_PATH, 0, 0) < 0 && errno == ENOSYS) {
		close(fd);
		return lc_err_set(e, LC_ERR_USAGE, "--restrict needs openat2 "
		    "(Linux 5.6 or later)");
	}
	c->root_fd = fd;
	return 0;
}

void
lc_confine_free(struct lc_confine *c)
{
	if (c->root_fd >= 0)
		close(c->root_fd);
	c->root_fd = -1;
}

/*
 * A user path relative to the root: "" -> ".", "/root/x" -> "x".  0, or
 * -LC_ERR_DENIED when it is outside the root.
 */
static int
lc_confine_rel(const struct lc_confine *c, const char *path, const char **rel)
{
	size_t n = strlen(c->root);

	if (path[0] != '/') {
		*rel = path[0] != '\0' ? path : ".";
		return 0;
	}
	if (strncmp(path, c->root, n) != 0 ||
	    (path[n] != '\0' && path[n] != '/' && strcmp(c->root, "/") != 0))
		return -LC_ERR_DENIED;
	path += n;
	while (*path == '/')
		path++;
	*rel = *path != '\0' ? path : ".";
	return 0;
}

/*
 * A user path refused by a restricted agent: one message for every reason
 * (outside the root, through "..", a symlink or ~user, an account that
 * exists or not), so that the answer tells nothing about what lies outside.
 */
static int
lc_confine_refuse(const char *path, struct lc_err *e)
{
	return lc_err_set(e, LC_ERR_DENIED, "%s: %s", path,
	    LC_CONFINE_REFUSED);
}

/*
 * "~NAME..." with NAME this account's own login name, as "~...", into
 * out; 0, or -1 for any other name (which is then not looked up).
 */
static int
lc_confine_own_tilde(const char *in, char *out, size_t outsz)
{
	struct lc_idpw pw;
	const char *rest = strchr(in, '/');
	size_t ulen;

	if (rest == NULL)
		rest = in + strlen(in);
	ulen = (size_t)(rest - in - 1);
	if (ulen > 0 && (lc_id_user_byuid((uint32_t)getuid(), &pw) != 1 ||
	    strlen(pw.name) != ulen || memcmp(pw.name, in + 1, ulen) != 0))
		return -1;
	if (1 + strlen(rest) >= outsz)
		return -1;
	snprintf(out, outsz, "~%s", rest);
	return 0;
}

int
lc_confine_user_path(const struct lc_confine *c, const char *in, int tilde,
    char *out, size_t outsz, struct lc_err *e)
{
	char own[4096];		/* LC_PATH_MAX */
	const char *rel, *src = in;

	if (c->root_fd < 0) {
		if (tilde)
			return lc_path_expand_tilde(in, out, outsz, e);
		if (strlen(in) >= outsz)
			return lc_err_set(e, LC_ERR_IO, "%.64s...: name too "
			    "long", in);
		snprintf(out, outsz, "%s", in);
		return 0;
	}
	/* another account's home is never looked up: nothing to time */
	if (tilde && in[0] == '~') {
		if (lc_confine_own_tilde(in, own, sizeof(own)) != 0)
			return lc_confine_refuse(in, e);
		src = own;
	}
	if (tilde && src[0] == '~') {
		if (lc_path_expand_tilde(src, out, outsz, NULL) != 0)
			return lc_confine_refuse(in, e);
	} else if (strlen(src) >= outsz) {
		return lc_confine_refuse(in, e);
	} else {
		snprintf(out, outsz, "%s", src);
	}
	if (lc_confine_rel(c, out, &rel) != 0)
		return lc_confine_refuse(in, e);
	return 0;
}

int
lc_confine_open(const struct lc_confine *c, int dirfd, const char *path,
    int flags, mode_t mode, int *fd, struct lc_err *e)
{
	const char *rel = path;
	int base, err;

	*fd = -1;
	if (dirfd >= 0) {	/* a peer name beneath dirfd */
		if (path[0] == '/' || path[0] == '\0')
			return lc_err_set(e, LC_ERR_DENIED, "refusing file "
			    "name from peer: %s", path);
		base = dirfd;
	} else if (c->root_fd >= 0) {
		if (lc_confine_rel(c, path, &rel) != 0)
			return lc_confine_refuse(path, e);
		base = c->root_fd;
	} else {
		*fd = open(path, flags | O_CLOEXEC, mode);
		if (*fd < 0)
			return lc_err_sys(e, LC_ERR_IO, errno, "%s", path);
		return 0;
	}
	/* a peer's path inside a tree never passes through a symlink */
	*fd = lc_openat2(base, rel, flags, mode, dirfd >= 0 &&
	    strchr(path, '/') != NULL ? RESOLVE_NO_SYMLINKS : 0);
	if (*fd >= 0)
		return 0;
	err = errno;
	if (err == ENOSYS && dirfd >= 0) {
		/* old kernel: peer names are single components here */
		if (strchr(path, '/') != NULL || strcmp(path, "..") == 0)
			return lc_err_set(e, LC_ERR_DENIED, "refusing file "
			    "name from peer: %s", path);
		*fd = openat(dirfd, path, flags | O_CLOEXEC | O_NOFOLLOW,
		    mode);
		if (*fd >= 0)
			return 0;
		err = errno;
	}
	if ((err == EXDEV || err == ELOOP) && dirfd < 0)
		return lc_confine_refuse(path, e);
	if (err == EXDEV || err == ELOOP)
		return lc_err_set(e, LC_ERR_DENIED, "%s: refused, it leads "
		    "outside the target directory", path);
	return lc_err_sys(e, LC_ERR_IO, err, "%s", path);
}

int
lc_confine_stat(const struct lc_confine *c, int dirfd, const char *path,
    struct stat *st, int *err, struct lc_err *e)
{
	int fd, r;

	*err = 0;
	if (dirfd < 0 && c->root_fd < 0) {	/* plain stat */
		if (stat(path, st) == 0)
			return 0;
		*err = errno;
		return lc_err_sys(e, LC_ERR_IO, errno, "%s", path);
	}
	errno = 0;
	r = lc_confine_open(c, dirfd, path, O_PATH, 0, &fd, e);
	if (r != 0) {
		*err = r == -LC_ERR_DENIED ? EXDEV : (e != NULL &&
		    e->sys_errno != 0 ? e->sys_errno : EIO);
		return r;
	}
	r = fstat(fd, st);
	*err = r != 0 ? errno : 0;
	close(fd);
	return r == 0 ? 0 : lc_err_sys(e, LC_ERR_IO, *err, "%s", path);
}
