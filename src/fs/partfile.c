/*
 * Target and part files (partfile.h): resolving the target, naming,
 * opening and checking part files, the free-space check, and finishing a
 * file (size check, fsync, rename, directory fsync).  Pure file system;
 * the sink calls these from its main thread (open) and its job thread
 * (finalize), never both for one file at once.
 */
#include "partfile.h"
#include "partfile_int.h"

#include "log.h"
#include "parse.h"
#include "fdio.h"
#include "path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#define LC_PART_SUFFIX ".lanecp-part"

int
lc_target_name_ok(const char *name)
{
	return name[0] != '\0' && strchr(name, '/') == NULL &&
	    strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

/* Open a directory the user named (confined like any target path). */
static int
lc_target_open_dir(struct lc_target *t, const char *path, int *fd,
    struct lc_err *e)
{
	return lc_confine_open(t->conf, -1, path, O_RDONLY | O_DIRECTORY,
	    0, fd, e);
}

/*
 * The target directory is missing: make it in its parent (which must
 * exist), mode 0777 less the umask, and open it.  Another process making
 * it first is fine.
 */
static int
lc_target_mkdir(struct lc_target *t, struct lc_err *e)
{
	char parent[LC_PATH_MAX], name[LC_PATH_MAX];
	int pfd = -1, r;

	lc_path_basename(t->path, name, sizeof(name));
	lc_path_dirname(t->path, parent, sizeof(parent));
	if (!lc_target_name_ok(name))
		return lc_err_set(e, LC_ERR_IO, "%s: no such directory",
		    t->path);
	if ((r = lc_target_open_dir(t, parent, &pfd, e)) != 0) {
		lc_err_clear(e);
		return lc_err_set(e, LC_ERR_IO, "%s: no such directory",
		    t->path);
	}
	if (mkdirat(pfd, name, 0777 & ~t->umask) != 0 && errno != EEXIST) {
		r = lc_err_sys(e, errno == ENOSPC ? LC_ERR_NOSPACE : LC_ERR_IO,
		    errno, "cannot make directory %s", t->path);
		goto out;
	}
	if ((r = lc_confine_open(t->conf, pfd, name, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW, 0, &t->dir_fd, e)) != 0)
		goto out;
	t->is_dir = 1;
 out:
	close(pfd);
	return r;
}

int
lc_target_resolve(struct lc_target *t, const struct lc_confine *conf,
    const char *path, uint32_t flags, mode_t umask, struct lc_err *e)
{
	char parent[LC_PATH_MAX];
	int want_dir, err, r;
	struct stat st;

	memset(t, 0, sizeof(*t));
	t->conf = conf;
	t->dir_fd = -1;
	t->umask = umask;
	snprintf(t->path, sizeof(t->path), "%s", path);
	t->flags = flags;
	want_dir = (flags & LC_TGT_WANT_DIR) ||
	    path[strlen(path) - 1] == '/';
	r = lc_confine_stat(t->conf, -1, t->path, &st, &err, e);
	if (r == -LC_ERR_DENIED)
		return r;
	if (r == 0 && S_ISDIR(st.st_mode)) {
		t->is_dir = 1;
		if ((r = lc_target_open_dir(t, t->path, &t->dir_fd, e)) != 0)
			return r;
	} else if (r == 0 && (flags & LC_TGT_WANT_DIR)) {
		return lc_err_set(e, LC_ERR_USAGE, "with several sources or "
		    "-r the target must be a directory: %s", t->path);
	} else if (r == 0 && want_dir) {
		return lc_err_set(e, LC_ERR_IO, "%s: not a directory",
		    t->path);
	} else if (r != 0 && err != ENOENT) {
		return r;
	} else if (r != 0 && want_dir && (flags & LC_TGT_DRYRUN)) {
		/* -n: it would be made; every entry is new (dir_fd -1) */
		lc_err_clear(e);
		t->is_dir = 1;
	} else if (r != 0 && want_dir) {
		/* like cp -r and rsync: the last component is made */
		lc_err_clear(e);
		if ((r = lc_target_mkdir(t, e)) != 0)
			return r;
	} else {
		/* a file: created or replaced in its parent directory */
		lc_path_basename(t->path, t->name, sizeof(t->name));
		lc_path_dirname(t->path, parent, sizeof(parent));
		if (!lc_target_name_ok(t->name))
			return lc_err_set(e, LC_ERR_IO, "%s: not a file name",
			    t->path);
		lc_err_clear(e);
		if ((r = lc_target_open_dir(t, parent, &t->dir_fd, e)) != 0)
			return r;
	}
	return 0;
}

void
lc_target_close(struct lc_target *t)
{
	if (t->dir_fd >= 0)
		close(t->dir_fd);
	t->dir_fd = -1;
	OPENSSL_cleanse(t->takeover, sizeof(t->takeover));
}

int
lc_part_name(const char *name, char *out, size_t outsz)
{
	int n;

	if (strlen(name) + sizeof(LC_PART_SUFFIX) + 1 <= 255) {
		n = snprintf(out, outsz, ".%s%s", name, LC_PART_SUFFIX);
	} else {
		unsigned char md[EVP_MAX_MD_SIZE];
		unsigned int mdlen = 0;
		char hex[33];

		if (EVP_Digest(name, strlen(name), md, &mdlen, EVP_sha256(),
		    NULL) != 1)
			return -LC_ERR_INTERNAL;
		for (unsigned i = 0; i < 16; i++)
			snprintf(hex + 2 * i, 3, "%02x", md[i]);
		n = snprintf(out, outsz, ".lanecp-%s%s", hex, LC_PART_SUFFIX);
	}
	return n < 0 || (size_t)n >= outsz ? -LC_ERR_TOOBIG : 0;
}

int
lc_part_init(const struct lc_target *t, const char *peer_name,
    uint64_t size, uint32_t mode, struct lc_part *p, struct lc_err *e)
{
	const char *name;
	int n;

	memset(p, 0, sizeof(*p));
	p->fd = -1;
	if (t->is_dir && !lc_target_name_ok(peer_name))
		return lc_err_set(e, LC_ERR_DENIED,
		    "refusing unsafe file name from peer: %s", peer_name);
	name = t->is_dir ? peer_name : t->name;
	if (strlen(name) >= sizeof(p->name))
		return lc_err_set(e, LC_ERR_IO, "%s: file name too long", name);
	p->dfd = t->dir_fd;
	p->size = size;
	p->mode = mode;
	/* names from the peer, and everything under --restrict, are
	 * resolved beneath the target directory */
	p->beneath = t->is_dir || t->conf->root_fd >= 0;
	memcpy(p->name, name, strlen(name) + 1);
	n = lc_part_set_final(p, t->path, t->is_dir ? peer_name : NULL);
	if (n == -LC_ERR_NOMEM)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	if (n != 0)
		return lc_err_set(e, LC_ERR_IO, "%s/%s: name too long", t->path,
		    peer_name);
	return 0;
}

int
lc_part_set_final(struct lc_part *p, const char *dir, const char *rel)
{
	size_t dl = strlen(dir), rl = rel != NULL ? strlen(rel) : 0;
	size_t slash = rel != NULL && (dl == 0 || dir[dl - 1] != '/') ? 1 : 0;
	char *s;

	if (dl + slash + rl >= LC_PATH_MAX)
		return -LC_ERR_TOOBIG;
	if ((s = malloc(dl + slash + rl + 1)) == NULL)
		return -LC_ERR_NOMEM;
	memcpy(s, dir, dl);
	if (slash)
		s[dl] = '/';
	if (rl > 0)
		memcpy(s + dl + slash, rel, rl);
	s[dl + slash + rl] = '\0';
	free(p->final);
	p->final = s;
	return 0;
}

static int
lc_part_open_direct(const struct lc_target *t, struct lc_part *f,
    struct lc_err *e)
{
	int r;

	/* O_NONBLOCK so a FIFO without a reader fails instead of hanging */
	r = lc_confine_open(t->conf, f->beneath ? f->dfd : -1,
	    f->beneath ? f->name : t->path, O_WRONLY | O_NOCTTY | O_NONBLOCK,
	    0, &f->fd, e);
	if (r == -LC_ERR_IO && e != NULL && e->sys_errno == ENXIO)
		return lc_err_set(e, LC_ERR_IO, "%s: FIFO has no reader",
		    f->final);
	if (r != 0)
		return r;
	(void)lc_set_nonblock(f->fd, 0);
	f->direct = 1;
	return 0;
}

/*
 * Is this (already open) partial file ours to write into?  Only a regular
 * file owned by the sink's user, with one link, that no one else may
 * write: in a shared directory (/tmp, a group share) another user could
 * have created it first to read the data as it arrives or to have their
 * file renamed into place.  1 or 0.
 */
static int
lc_part_ours(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == geteuid() &&
	    st->st_nlink == 1 && (st->st_mode & 022) == 0;
}

/*
 * The part file as messages name it: in its directory (the target's), so
 * that a user can find it; the name alone says nothing in a tree.  A
 * buffer of the calling thread's, good until its next call.
 */
static const char *
lc_part_shown(const struct lc_part *f)
{
	static _Thread_local char shown[LC_PATH_MAX + sizeof(f->tmp)];
	char dir[LC_PATH_MAX];

	if (f->final == NULL)
		return f->tmp;
	lc_path_dirname(f->final, dir, sizeof(dir));
	snprintf(shown, sizeof(shown), "%s%s%s", dir,
	    dir[0] != '\0' && dir[strlen(dir) - 1] != '/' ? "/" : "", f->tmp);
	return shown;
}

static int
lc_part_refuse(const struct lc_part *f, const struct stat *st,
    struct lc_err *e)
{
	char dir[LC_PATH_MAX];

	lc_path_dirname(f->final, dir, sizeof(dir));
	return lc_err_set(e, LC_ERR_DENIED, "%s%s%s: partial file is %s; "
	    "not writing into it (remove it, or copy elsewhere)", dir,
	    dir[0] != '\0' && dir[strlen(dir) - 1] != '/' ? "/" : "", f->tmp,
	    !S_ISREG(st->st_mode) ? "not a regular file" :
	    st->st_uid != geteuid() ? "owned by another user" :
	    st->st_nlink != 1 ? "hard-linked" : "writable by others");
}

/*
 * Lock the open partial file against a second lanecp writing it.  If an
 * agent of this same transfer (an earlier attempt whose controller is
 * gone) holds it and confirms that we are of its run and directory, stop
 * that agent and take the lock over; anyone else
 * keeps it and the file fails with LC_ERR_LOCKED saying who (see
 * lockholder.c for why and for the bound on the wait).
 */
static int
lc_part_lock(const struct lc_target *t, const struct lc_part *f,
    struct lc_err *e)
{
	struct lc_lock_self me = { .transfer = t->transfer,
		.key = t->takeover,
		.root = t->conf != NULL && t->conf->root_fd >= 0 ?
		    t->conf->root : "" };
	struct lc_holder h;

	if (flock(f->fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno != EWOULDBLOCK)
		return lc_err_sys(e, LC_ERR_IO, errno, "lock %s",
		    lc_part_shown(f));
	lc_lock_holder(f->fd, t->transfer, &h);
	if (h.kind != LC_HOLDER_SAME)
		return lc_lock_held_error(f->final, &h, e);
	return lc_lock_takeover(f->fd, &h, &me, LC_TAKEOVER_WAIT_MS, f->final,
	    e);
}

/*
 * After waiting for the lock: the name must still be the file we locked
 * (the holder may have renamed it into place or replaced it before it
 * let go), and *st is refreshed (it may have grown).  1 when it is, 0
 * when the name moved on (open again), or an error.
 */
static int
lc_part_still(const struct lc_part *f, struct stat *st, struct lc_err *e)
{
	struct stat now;

	if (fstat(f->fd, st) != 0)
		return lc_err_sys(e, LC_ERR_IO, errno, "stat %s",
		    lc_part_shown(f));
	if (fstatat(f->dfd, f->tmp, &now, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : lc_err_sys(e, LC_ERR_IO, errno,
		    "stat %s", lc_part_shown(f));
	return now.st_dev == st->st_dev && now.st_ino == st->st_ino &&
	    lc_part_ours(st);
}

/*
 * Open an existing partial file: checked before it is opened (a device or
 * FIFO is not even opened), opened without following a symlink, and
 * checked again on the descriptor.  *fd stays -1 when there is none.
 */
static int
lc_part_existing(const struct lc_target *t, const struct lc_part *f,
    int *fd, struct stat *st, struct lc_err *e)
{
	struct stat lst;

	(void)t;	/* f->dfd is where it lives */
	*fd = -1;
	if (fstatat(f->dfd, f->tmp, &lst, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : lc_err_sys(e, LC_ERR_IO, errno,
		    "stat %s", lc_part_shown(f));
	if (!lc_part_ours(&lst))
		return lc_part_refuse(f, &lst, e);
	*fd = openat(f->dfd, f->tmp, O_RDWR | O_NOFOLLOW | O_NOCTTY |
	    O_NONBLOCK | O_CLOEXEC);
	if (*fd < 0 && errno == ENOENT)
		return 0;	/* gone meanwhile: create it */
	if (*fd < 0)
		return lc_err_sys(e, LC_ERR_IO, errno, "open %s",
		    lc_part_shown(f));
	if (fstat(*fd, st) != 0)
		return lc_err_sys(e, LC_ERR_IO, errno, "stat %s",
		    lc_part_shown(f));
	if (!lc_part_ours(st))
		return lc_part_refuse(f, st, e);
	(void)lc_set_nonblock(*fd, 0);
	return 0;
}

/*
 * Open the partial file: with -a, reuse one of ours and set *kept to the
 * length already there; otherwise create a fresh one (O_EXCL, 0600) in
 * place of one of ours.  Someone else's is never written into.
 */
static int
lc_part_open_part(const struct lc_target *t, struct lc_part *f,
    uint64_t *kept, struct lc_err *e)
{
	struct stat st;
	int r, tries = 0;

	*kept = 0;
	if (lc_part_name(f->name, f->tmp, sizeof(f->tmp)) != 0)
		return lc_err_set(e, LC_ERR_IO, "%s: name too long", f->final);
 again:
	if ((r = lc_part_existing(t, f, &f->fd, &st, e)) != 0)
		return r;
	if (f->fd >= 0 && ((r = lc_part_lock(t, f, e)) != 0 ||
	    (r = lc_part_still(f, &st, e)) < 0))
		return r;
	if (f->fd >= 0 && r == 0) {
		/* renamed or replaced while we waited: look again */
		close(f->fd);
		f->fd = -1;
		if (++tries > 3)
			return lc_err_set(e, LC_ERR_LOCKED, "%s: the partial "
			    "file keeps changing; not writing into it",
			    f->final);
		goto again;
	}
	if (f->fd >= 0 && (t->flags & LC_TGT_RESUME)) {
		/* longer than the source: what lies beyond it cannot be
		   right, the rest is compared like any partial file */
		if ((uint64_t)st.st_size > f->size) {
			lc_log_warn("%s: partial file is longer than the "
			    "source; cut to its size", f->final);
			if (ftruncate(f->fd, (off_t)f->size) != 0)
				return lc_err_sys(e, LC_ERR_IO, errno,
				    "truncate %s", lc_part_shown(f));
			st.st_size = (off_t)f->size;
		}
		*kept = (uint64_t)st.st_size;
		return 0;
	}
	if (f->fd >= 0 && !(t->flags & LC_TGT_RESUME)) {
		char dir[LC_PATH_MAX];

		lc_path_dirname(f->final, dir, sizeof(dir));
		lc_log_verbose("%s: discarding the partial file of an earlier "
		    "copy, %s%s%s (%llu bytes; -a would resume from it)",
		    f->final, dir, dir[strlen(dir) - 1] != '/' ? "/" : "",
		    f->tmp, (unsigned long long)st.st_size);
	}
	if (f->fd >= 0) {
		/*
		 * Ours and locked by us: replace it rather than truncate it,
		 * so that no descriptor opened on it before sees the new
		 * data (and ext4's auto_da_alloc does not start writeback of
		 * the whole file on close, as after ftruncate() to 0).
		 */
		if (unlinkat(f->dfd, f->tmp, 0) != 0)
			return lc_err_sys(e, LC_ERR_IO, errno, "remove %s",
			    lc_part_shown(f));
		close(f->fd);
		f->fd = -1;
	}
	f->fd = openat(f->dfd, f->tmp, O_RDWR | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
	if (f->fd < 0 && errno == EEXIST)
		return lc_err_set(e, LC_ERR_EXISTS, "%s: partial file "
		    "appeared while it was being created; not writing into it",
		    lc_part_shown(f));
	if (f->fd < 0)
		return lc_err_sys(e, LC_ERR_IO, errno, "create %s",
		    lc_part_shown(f));
	return lc_part_lock(t, f, e);
}

int
lc_part_open(const struct lc_target *t, struct lc_part *f, uint64_t *kept,
    struct lc_err *e)
{
	struct stat st;
	int err, r;

	*kept = 0;
	f->replaces = 0;
	if (t->flags & LC_TGT_TREE) {
		/* in a tree nothing at the sink is followed: a link in the
		 * way is replaced (with -f / -u), never written through */
		if (fstatat(f->dfd, f->name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno != ENOENT)
				return lc_err_sys(e, LC_ERR_IO, errno, "%s",
				    f->final);
			return lc_part_open_part(t, f, kept, e);
		}
		if (S_ISLNK(st.st_mode)) {
			if (!(t->flags & LC_TGT_FORCE))
				return lc_err_set(e, LC_ERR_EXISTS, "%s: exists "
				    "as a symlink (use -f or -u to replace "
				    "it)", f->final);
			f->replaces = 1;
			return lc_part_open_part(t, f, kept, e);
		}
		r = 0;
		err = 0;
	} else
		r = lc_confine_stat(t->conf, f->beneath ? f->dfd : -1,
		    f->beneath ? f->name : t->path, &st, &err, e);
	if (r != 0 && err != ENOENT)
		return r;
	lc_err_clear(e);
	if (r != 0)
		return lc_part_open_part(t, f, kept, e);
	if (S_ISDIR(st.st_mode))
		return lc_err_set(e, LC_ERR_IO, "%s: is a directory", f->final);
	/* a device or FIFO is written in order, and needs -f like a file
	 * (but for /dev/null: `lanecp file host:/dev/null` measures) */
	if (!S_ISREG(st.st_mode) && !(t->flags & LC_TGT_FORCE) &&
	    !(S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)))
		return lc_err_set(e, LC_ERR_EXISTS, "%s: exists and is a %s "
		    "(use -f to write to it)", f->final,
		    S_ISFIFO(st.st_mode) ? "FIFO" : S_ISBLK(st.st_mode) ?
		    "block device" : S_ISCHR(st.st_mode) ? "character device" :
		    "special file");
	if (!S_ISREG(st.st_mode))
		return lc_part_open_direct(t, f, e);
	if (!(t->flags & LC_TGT_FORCE))
		return lc_err_set(e, LC_ERR_EXISTS,
		    "%s: file exists (use -f to overwrite)", f->final);
	f->replaces = 1;
	return lc_part_open_part(t, f, kept, e);
}

int
lc_part_space(const struct lc_target *t, const struct lc_part *f,
    uint64_t need, struct lc_err *e)
{
	char a[32], b[32];
	struct statvfs sv;
	uint64_t avail;

	if ((t->flags & LC_TGT_NO_SPACE_CHECK) || need == 0 ||
	    fstatvfs(t->dir_fd, &sv) != 0)
		return 0;
	avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (avail >= need)
		return 0;
	return lc_err_set(e, LC_ERR_NOSPACE, "%s: needs %s but only %s is "
	    "free there (--no-space-check to try anyway)", f->final,
	    lc_fmt_bytes(a, sizeof(a), need), lc_fmt_bytes(b, sizeof(b), avail));
}

/*
 * The name we are about to rename still names the file we wrote, not one
 * another user put there (possible only where they may rename our files,
 * a writable directory without the sticky bit, where they could replace
 * the target itself just as well; this closes all but that race).
 */
static int
lc_part_same(const struct lc_target *t, const struct lc_part *f,
    const struct stat *mine, struct lc_err *e)
{
	struct stat st;

	(void)t;
	if (fstatat(f->dfd, f->tmp, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return lc_err_sys(e, LC_ERR_IO, errno, "stat %s",
		    lc_part_shown(f));
	if (st.st_dev != mine->st_dev || st.st_ino != mine->st_ino)
		return lc_err_set(e, LC_ERR_DENIED, "%s: the partial file was "
		    "replaced by someone else; not renaming it into place",
		    lc_part_shown(f));
	return 0;
}

/* See partfile_int.h. */
int
lc__part_set_mtime(int fd, const char *name, int64_t sec, uint32_t nsec)
{
	struct timespec ts[2];

	ts[0].tv_sec = 0;
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1].tv_sec = (time_t)sec;
	ts[1].tv_nsec = (long)nsec;
	return name == NULL ? futimens(fd, ts) :
	    utimensat(fd, name, ts, AT_SYMLINK_NOFOLLOW);
}

/* See partfile_int.h. */
mode_t
lc__part_modes(const struct lc_target *t)
{
	return (t->flags & LC_TGT_SETID) && (t->flags & LC_TGT_PRESERVE) &&
	    t->conf->root_fd < 0 && geteuid() == 0 ? 07777 : 0777;
}

int
lc_part_prepare(const struct lc_target *t, struct lc_part *f, int do_fsync,
    struct lc_err *e)
{
	mode_t keep = (t->flags & LC_TGT_PRESERVE) ? 0 : t->umask;
	struct stat st;

	if (f->direct)
		return 0;
	if (fstat(f->fd, &st) != 0)
		return lc_err_sys(e, LC_ERR_IO, errno, "stat %s",
		    lc_part_shown(f));
	if ((uint64_t)st.st_size != f->size)
		return lc_err_set(e, LC_ERR_IO, "%s: size is %lld after "
		    "writing, expected %llu; not renaming it into place",
		    lc_part_shown(f), (long long)st.st_size,
		    (unsigned long long)f->size);
	/* the owner first: chown(2) may clear mode bits */
	if (f->chown && fchown(f->fd, (uid_t)f->uid, (gid_t)f->gid) != 0)
		return lc_err_sys(e, LC_ERR_IO, errno, "chown %s",
		    lc_part_shown(f));
	/* permission bits; set-id and sticky only as lc__part_modes says */
	if (fchmod(f->fd, (mode_t)f->mode & ~keep & lc__part_modes(t)) != 0)
		return lc_err_sys(e, LC_ERR_IO, errno, "chmod %s",
		    lc_part_shown(f));
	/* -u keeps times too: the next quick check compares them */
	if (t->flags & (LC_TGT_PRESERVE | LC_TGT_UPDATE)) {
		if (lc__part_set_mtime(f->fd, NULL, f->mtime_sec,
		    f->mtime_nsec) != 0)
			return lc_err_sys(e, LC_ERR_IO, errno, "set times of "
			    "%s", f->final);
	}
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	if (do_fsync && !(t->flags & LC_TGT_NO_FSYNC) && fsync(f->fd) != 0)
		return lc_err_sys(e, LC_ERR_IO, errno, "fsync %s", f->final);
	return 0;
}

int
lc_part_commit(const struct lc_target *t, struct lc_part *f,
    struct lc_err *e)
{
	struct stat mine;
	int fd = f->fd, r = 0;

	(void)t;
	f->fd = -1;
	if (f->direct) {
		if (close(fd) != 0)
			return lc_err_sys(e, LC_ERR_IO, errno, "close %s",
			    f->final);
		return 0;
	}
	memset(&mine, 0, sizeof(mine));
	mine.st_dev = f->dev;
	mine.st_ino = f->ino;
	if ((r = lc_part_same(t, f, &mine, e)) != 0)
		;
	/* rename before close: the lock keeps a second writer off */
	else if (renameat(f->dfd, f->tmp, f->dfd, f->name) != 0)
		r = lc_err_sys(e, LC_ERR_IO, errno, "rename %s into place",
		    f->final);
	if (r != 0) {
		close(fd);
		return r;
	}
	f->tmp[0] = '\0';
	if (close(fd) != 0)
		return lc_err_sys(e, LC_ERR_IO, errno, "close %s", f->final);
	return 0;
}

/*
 * The order (data fsync, rename, directory fsync) means a crash leaves
 * either the old target or the complete new one under the target name.
 */
int
lc_part_finalize(const struct lc_target *t, struct lc_part *f,
    struct lc_err *e)
{
	int r;

	if ((r = lc_part_prepare(t, f, 1, e)) != 0) {
		lc_part_close(f);
		return r;
	}
	if (f->direct)
		return lc_part_commit(t, f, e);
	if ((r = lc_part_commit(t, f, e)) != 0)
		return r;
	if (!(t->flags & LC_TGT_NO_FSYNC) && fsync(f->dfd) != 0 &&
	    errno != EINVAL)
		return lc_err_sys(e, LC_ERR_IO, errno, "fsync directory of %s",
		    f->final);
	return 0;
}

void
lc_part_close(struct lc_part *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
}

void
lc_part_release(struct lc_part *p)
{
	lc_part_close(p);
	free(p->final);
	p->final = NULL;
}
