/*
 * Tree entries (partfile.h, "Trees"): the directories, symlinks and
 * skipped files of a tree copy (LC_TGT_TREE), and a tree file's part file
 * set up in its own directory.  Pure file system like partfile.c, whose
 * mode and time helpers it shares (partfile_int.h); the sink calls these
 * from its main thread (entries) and its job thread (lc_tree_dir_attrs).
 */
#include "partfile.h"
#include "partfile_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
lc_tree_open_dir(const struct lc_target *t, const char *rel, int *fd,
    struct lc_err *e)
{
	return lc_confine_open(t->conf, t->dir_fd, rel[0] != '\0' ? rel : ".",
	    O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0, fd, e);
}

/* "target/rel" for messages. */
static void
lc_tree_shown(const struct lc_target *t, const char *rel, char *out,
    size_t outsz)
{
	size_t n = strlen(t->path);

	snprintf(out, outsz, "%s%s%s", t->path,
	    n > 0 && t->path[n - 1] == '/' ? "" : "/", rel);
}

int
lc_tree_mkdir(const struct lc_target *t, int dfd, const char *leaf,
    const char *rel, int *made, struct lc_err *e)
{
	char shown[LC_PATH_MAX + 300];
	struct stat st;

	*made = 0;
	lc_tree_shown(t, rel, shown, sizeof(shown));
	if (mkdirat(dfd, leaf, 0700) == 0) {
		*made = 1;
		return 0;
	}
	if (errno != EEXIST)
		return lc_err_sys(e, errno == ENOSPC ? LC_ERR_NOSPACE :
		    LC_ERR_IO, errno, "cannot make directory %s", shown);
	if (fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return lc_err_sys(e, LC_ERR_IO, errno, "%s", shown);
	if (S_ISDIR(st.st_mode))
		return 0;
	/* a file or link in the way: replaced with -f / -u, like rsync */
	if (!(t->flags & LC_TGT_FORCE) || !(S_ISREG(st.st_mode) ||
	    S_ISLNK(st.st_mode)))
		return lc_err_set(e, LC_ERR_EXISTS, "%s: exists and is not a "
		    "directory%s", shown, (t->flags & LC_TGT_FORCE) ? "" :
		    " (use -f or -u to replace it)");
	if (unlinkat(dfd, leaf, 0) != 0 && errno != ENOENT)
		return lc_err_sys(e, LC_ERR_IO, errno, "remove %s", shown);
	if (mkdirat(dfd, leaf, 0700) != 0)
		return lc_err_sys(e, errno == ENOSPC ? LC_ERR_NOSPACE :
		    LC_ERR_IO, errno, "cannot make directory %s", shown);
	*made = 1;
	return 0;
}

/*
 * Shards (--shard) each make every symlink of the tree, at once: another
 * maker may remove our temporary link as stale between our symlinkat and
 * renameat (ENOENT), or make its own under the same name first (EEXIST).
 * Either way look again: the link may be in place already; else retry.
 */
#define LC_SYMLINK_TRIES 8

int
lc_tree_symlink(const struct lc_target *t, int dfd, const char *leaf,
    const char *rel, const char *link, const struct lc_attrs *a,
    struct lc_err *e)
{
	char shown[LC_PATH_MAX + 300], tmp[LC_PATH_MAX], cur[LC_PATH_MAX];
	struct stat st;
	ssize_t n;
	int tries = 0, err;

	lc_tree_shown(t, rel, shown, sizeof(shown));
 again:
	if (fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode) && (n = readlinkat(dfd, leaf, cur,
		    sizeof(cur) - 1)) >= 0 && (cur[n] = '\0',
		    strcmp(cur, link) == 0))
			goto times;	/* already right */
		if (S_ISDIR(st.st_mode))
			return lc_err_set(e, LC_ERR_EXISTS, "%s: exists and "
			    "is a directory", shown);
		if (!(t->flags & (LC_TGT_FORCE | LC_TGT_UPDATE)))
			return lc_err_set(e, LC_ERR_EXISTS, "%s: exists (use "
			    "-f or -u to replace it)", shown);
	} else if (errno != ENOENT) {
		return lc_err_sys(e, LC_ERR_IO, errno, "%s", shown);
	}
	if (lc_part_name(leaf, tmp, sizeof(tmp)) != 0)
		return lc_err_set(e, LC_ERR_IO, "%s: name too long", shown);
	/* a stale temporary link of ours (only a symlink is removed) */
	if (fstatat(dfd, tmp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode))
		(void)unlinkat(dfd, tmp, 0);
	if (symlinkat(link, dfd, tmp) != 0) {
		err = errno;
		if (err == EEXIST && ++tries < LC_SYMLINK_TRIES)
			goto again;
		return lc_err_sys(e, err == ENOSPC ? LC_ERR_NOSPACE :
		    LC_ERR_IO, err, "cannot make symlink %s", shown);
	}
	if (renameat(dfd, tmp, dfd, leaf) != 0) {
		err = errno;
		if (err == ENOENT && ++tries < LC_SYMLINK_TRIES)
			goto again;
		(void)unlinkat(dfd, tmp, 0);
		return lc_err_sys(e, LC_ERR_IO, err, "cannot make symlink %s",
		    shown);
	}
 times:
	if (a->chown && fchownat(dfd, leaf, (uid_t)a->uid, (gid_t)a->gid,
	    AT_SYMLINK_NOFOLLOW) != 0)
		return lc_err_sys(e, LC_ERR_IO, errno, "chown %s", shown);
	if (!(t->flags & (LC_TGT_PRESERVE | LC_TGT_UPDATE)))
		return 0;
	if (lc__part_set_mtime(dfd, leaf, a->mtime_sec, a->mtime_nsec) != 0)
		return lc_err_sys(e, LC_ERR_IO, errno, "set times of %s",
		    shown);
	return 0;
}

int
lc_tree_skip(const struct lc_target *t, int dfd, const char *leaf,
    uint64_t size, int64_t mtime_sec)
{
	struct stat st;

	if (!(t->flags & (LC_TGT_UPDATE | LC_TGT_SKIP_EXISTING)) ||
	    fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return 0;
	if (t->flags & LC_TGT_SKIP_EXISTING)
		return LC_SKIP_EXISTS;
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size == size &&
	    (int64_t)st.st_mtim.tv_sec == mtime_sec)
		return LC_SKIP_UPTODATE;
	return 0;
}

/*
 * An open descriptor on the regular file leaf in dfd that st describes
 * (never a symlink followed: O_NOFOLLOW, and the same device and inode),
 * for fchown, fchmod and futimens: opened for reading, else for writing
 * (a file its owner may not read), else O_PATH (as root, or a file of
 * mode 0), which *proc says how to reach.  -1 with errno on failure.
 */
static int
lc_tree_reg_fd(int dfd, const char *leaf, const struct stat *st,
    char *proc, size_t procsz)
{
	static const int how[] = { O_RDONLY | O_NONBLOCK, O_WRONLY |
		O_NONBLOCK, O_PATH };
	struct stat now;
	int fd = -1;

	proc[0] = '\0';
	for (size_t i = 0; i < sizeof(how) / sizeof(how[0]); i++) {
		fd = openat(dfd, leaf, how[i] | O_NOFOLLOW | O_NOCTTY |
		    O_CLOEXEC);
		if (fd >= 0 || (errno != EACCES && errno != ETXTBSY))
			break;
	}
	if (fd < 0)
		return -1;
	if (fstat(fd, &now) != 0 || !S_ISREG(now.st_mode) ||
	    now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
		close(fd);
		errno = ESTALE;	/* replaced meanwhile: the next run sees it */
		return -1;
	}
	if (fcntl(fd, F_GETFL) & O_PATH)
		snprintf(proc, procsz, "/proc/self/fd/%d", fd);
	return fd;
}

int
lc_tree_skip_attrs(const struct lc_target *t, int dfd, const char *leaf,
    const char *rel, const struct lc_attrs *a, unsigned *set,
    struct lc_err *e)
{
	int preserve = (t->flags & LC_TGT_PRESERVE) != 0;
	char shown[LC_PATH_MAX + 300], proc[64];
	mode_t want = (mode_t)a->mode & lc__part_modes(t);
	struct timespec ts[2];
	struct stat st;
	int fd, r = 0;

	*set = 0;
	if ((!preserve && !a->chown) ||
	    fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
	    !S_ISREG(st.st_mode))
		return 0;
	if (a->chown && (st.st_uid != (uid_t)a->uid ||
	    st.st_gid != (gid_t)a->gid))
		*set |= LC_SKIP_SET_OWNER;
	if (preserve && (st.st_mode & 07777) != want)
		*set |= LC_SKIP_SET_MODE;
	if (preserve && (st.st_mtim.tv_sec != (time_t)a->mtime_sec ||
	    st.st_mtim.tv_nsec != (long)a->mtime_nsec))
		*set |= LC_SKIP_SET_TIMES;
	if (*set == 0)
		return 0;
	if (t->flags & LC_TGT_DRYRUN) {
		/* what the chown below would make the mode need too */
		if ((*set & LC_SKIP_SET_OWNER) && preserve &&
		    (st.st_mode & 06000))
			*set |= LC_SKIP_SET_MODE;
		return 0;
	}
	lc_tree_shown(t, rel, shown, sizeof(shown));
	if ((fd = lc_tree_reg_fd(dfd, leaf, &st, proc, sizeof(proc))) < 0) {
		*set = 0;
		return lc_err_sys(e, LC_ERR_IO, errno, "%s: cannot update its "
		    "attributes", shown);
	}
	ts[0].tv_sec = 0;
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1].tv_sec = (time_t)a->mtime_sec;
	ts[1].tv_nsec = (long)a->mtime_nsec;
	/* the owner first: chown(2) may clear set-id bits, which the mode
	   then sets again (the mode is compared before, so always set) */
	if ((*set & LC_SKIP_SET_OWNER) && fchownat(fd, "", (uid_t)a->uid,
	    (gid_t)a->gid, AT_EMPTY_PATH) != 0)
		r = lc_err_sys(e, LC_ERR_IO, errno, "chown %s", shown);
	if (r == 0 && (*set & LC_SKIP_SET_OWNER) && preserve &&
	    (st.st_mode & 06000))
		*set |= LC_SKIP_SET_MODE;
	if (r == 0 && (*set & LC_SKIP_SET_MODE) && (proc[0] != '\0' ?
	    fchmodat(AT_FDCWD, proc, want, 0) : fchmod(fd, want)) != 0)
		r = lc_err_sys(e, LC_ERR_IO, errno, "chmod %s", shown);
	if (r == 0 && (*set & LC_SKIP_SET_TIMES) && (proc[0] != '\0' ?
	    utimensat(AT_FDCWD, proc, ts, 0) : futimens(fd, ts)) != 0)
		r = lc_err_sys(e, LC_ERR_IO, errno, "set times of %s", shown);
	close(fd);
	if (r != 0)
		*set = 0;
	return r;
}

int
lc_tree_dir_attrs(const struct lc_target *t, const char *rel,
    const struct lc_attrs *a, int do_fsync, struct lc_err *e)
{
	mode_t keep = (t->flags & LC_TGT_PRESERVE) ? 0 : t->umask;
	char shown[LC_PATH_MAX + 300];
	int fd, r;

	if ((r = lc_tree_open_dir(t, rel, &fd, e)) != 0)
		return r;
	lc_tree_shown(t, rel, shown, sizeof(shown));
	r = 0;
	if (a->chown && fchown(fd, (uid_t)a->uid, (gid_t)a->gid) != 0)
		r = lc_err_sys(e, LC_ERR_IO, errno, "chown %s", shown);
	if (r == 0 && a->set_mode &&
	    fchmod(fd, (mode_t)a->mode & ~keep & lc__part_modes(t)) != 0)
		r = lc_err_sys(e, LC_ERR_IO, errno, "chmod %s", shown);
	if (r == 0 && (t->flags & LC_TGT_PRESERVE) &&
	    lc__part_set_mtime(fd, NULL, a->mtime_sec, a->mtime_nsec) != 0)
		r = lc_err_sys(e, LC_ERR_IO, errno, "set times of %s", shown);
	if (r == 0 && do_fsync && fsync(fd) != 0 && errno != EINVAL)
		r = lc_err_sys(e, LC_ERR_IO, errno, "fsync %s", shown);
	close(fd);
	return r;
}

int
lc_part_init_at(const struct lc_target *t, int dfd, const char *rel,
    const char *leaf, uint64_t size, uint32_t mode, struct lc_part *p,
    struct lc_err *e)
{
	int n;

	memset(p, 0, sizeof(*p));
	p->fd = -1;
	if (!lc_target_name_ok(leaf))
		return lc_err_set(e, LC_ERR_DENIED,
		    "refusing unsafe file name from peer: %s", rel);
	if (strlen(leaf) >= sizeof(p->name))
		return lc_err_set(e, LC_ERR_IO, "%s: file name too long", rel);
	p->dfd = dfd;
	p->size = size;
	p->mode = mode;
	p->beneath = 1;
	memcpy(p->name, leaf, strlen(leaf) + 1);
	n = lc_part_set_final(p, t->path, rel);
	if (n == -LC_ERR_NOMEM)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	if (n != 0)
		return lc_err_set(e, LC_ERR_IO, "%s/%s: name too long", t->path,
		    rel);
	return 0;
}
