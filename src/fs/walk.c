/*
 * The source side's directory walker (walk.h).
 *
 * State: a stack of levels, one per directory on the current path.  A
 * level holds that directory's names (read in one go, sorted, the DIR
 * stream closed), the index of the next one, its (st_dev, st_ino) and a
 * descriptor.  Levels below LC_WALK_MAX_FDS - 1 keep their descriptor;
 * deeper ones only while they are the top: a deeper level whose child is
 * pushed closes its descriptor, and when the walk comes back to it, it is
 * reopened component by component from the nearest open ancestor with
 * O_NOFOLLOW (except a component that was a symlink followed on the way
 * down), each step checked against the recorded (st_dev, st_ino).
 *
 * Only an entry that lstat showed to be a symlink is ever followed (with
 * FOLLOW); everything else is opened with O_NOFOLLOW.  When the agent is
 * confined (--restrict), a symlink is followed through lc_confine_open()
 * on the whole user path, so -L cannot lead outside the confinement.
 *
 * path holds the current entry's relative name; the names of the
 * directories on the stack are its prefixes (level i ends at lv[i].len).
 * A directory entry is returned before it is listed (w->pending): the next
 * call opens and lists it, so a failure to list is reported after the
 * entry, which the sink has already made.
 */
#include "walk_int.h"
#include "fdio.h"

#include "path.h"
#include "wire.h"	/* an entry's kind is FILE's (enum lc_file_kind) */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The current path as the user wrote it (a user path for confinement). */
static const char *
lc_walk_full(struct lc_walk *w)
{
	const char *rest = w->path + w->base_len;
	size_t n = strlen(w->root_disp);
	const char *sep = "";

	if (w->flags & LC_WALK_CONTENTS) {
		if (*rest != '\0' && (n == 0 || w->root_disp[n - 1] != '/'))
			sep = "/";
	}
	snprintf(w->full, sizeof(w->full), "%s%s%s", w->root_disp, sep, rest);
	return w->full;
}

/* The current path as the user wrote it, for messages. */
const char *
lc__walk_disp(struct lc_walk *w)
{
	size_t n;

	snprintf(w->disp, sizeof(w->disp), "%s", lc_walk_full(w));
	/* keep the end (and room for the reason) in a struct lc_err */
	if ((n = strlen(w->disp)) > LC_WALK_DISP_MAX)
		memmove(w->disp + 3, w->disp + n - (LC_WALK_DISP_MAX - 3),
		    LC_WALK_DISP_MAX - 3 + 1);
	if (n > LC_WALK_DISP_MAX)
		memcpy(w->disp, "...", 3);
	return w->disp;
}

/* Where a child's component starts in path after its parent's len bytes. */
static size_t
lc_walk_child_off(size_t len)
{
	return len > 0 ? len + 1 : 0;
}

static int
lc_walk_cmp(const void *a, const void *b, void *arg)
{
	const char *buf = arg;

	return strcmp(buf + *(const size_t *)a, buf + *(const size_t *)b);
}

static void
lc_walk_level_free(struct lc_walk_level *l)
{
	free(l->buf);
	free(l->off);
	l->buf = NULL;
	l->off = NULL;
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}

/*
 * Read the names in fd (left open, offset at the start) into l, sorted.
 * 0, -LC_ERR_NOMEM, or -LC_ERR_IO with *err set.
 */
static int
lc_walk_read(int fd, struct lc_walk_level *l, int *err)
{
	DIR *d = NULL;
	struct dirent *de;
	size_t bcap = 0, blen = 0, ocap = 0, n, i;
	void *p;
	int dfd, r = 0;

	*err = 0;
	if ((dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0 ||
	    (d = fdopendir(dfd)) == NULL) {
		*err = errno;
		if (dfd >= 0)
			close(dfd);
		return *err == ENOMEM ? -LC_ERR_NOMEM : -LC_ERR_IO;
	}
	for (;;) {
		errno = 0;
		if ((de = readdir(d)) == NULL) {
			if ((*err = errno) != 0)
				r = -LC_ERR_IO;
			break;
		}
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		n = strlen(de->d_name) + 1;
		if (bcap - blen < n) {
			bcap = bcap ? bcap * 2 : 4096;
			while (bcap - blen < n)
				bcap *= 2;
			if ((p = realloc(l->buf, bcap)) == NULL)
				goto nomem;
			l->buf = p;
		}
		if (l->n == ocap) {
			ocap = ocap ? ocap * 2 : 64;
			if ((p = reallocarray(l->off, ocap,
			    sizeof(*l->off))) == NULL)
				goto nomem;
			l->off = p;
		}
		memcpy(l->buf + blen, de->d_name, n);
		l->off[l->n++] = blen;
		blen += n;
	}
	closedir(d);
	if (r == 0 && l->n > 1)
		qsort_r(l->off, l->n, sizeof(*l->off), lc_walk_cmp, l->buf);
	/*
	 * A directory changed while it was read can list a name twice: keep
	 * one, the order must stay strictly increasing.
	 */
	for (i = 1, n = l->n > 0; r == 0 && i < l->n; i++)
		if (strcmp(l->buf + l->off[n - 1], l->buf + l->off[i]) != 0)
			l->off[n++] = l->off[i];
	if (r == 0)
		l->n = n;
	return r;
 nomem:
	closedir(d);
	*err = ENOMEM;
	return -LC_ERR_NOMEM;
}

/*
 * Push the directory open as fd (owned from here) whose name is the
 * current path.  0, -LC_ERR_NOMEM, or -LC_ERR_IO with *err set (fd
 * closed).
 */
static int
lc_walk_push(struct lc_walk *w, int fd, const struct stat *st, int *err)
{
	struct lc_walk_level *l;
	void *p;
	size_t cap;
	int r;

	*err = 0;
	if (w->depth == w->cap) {
		cap = w->cap ? w->cap * 2 : 16;
		if ((p = reallocarray(w->lv, cap, sizeof(*w->lv))) == NULL) {
			close(fd);
			*err = ENOMEM;
			return -LC_ERR_NOMEM;
		}
		w->lv = p;
		w->cap = cap;
	}
	l = &w->lv[w->depth];
	memset(l, 0, sizeof(*l));
	l->fd = fd;
	l->len = strlen(w->path);
	l->dev = st->st_dev;
	l->ino = st->st_ino;
	if ((r = lc_walk_read(fd, l, err)) != 0) {
		lc_walk_level_free(l);
		return r;
	}
	/* a deep parent gives up its descriptor while the child is listed */
	if (w->depth >= LC_WALK_MAX_FDS - 1 && w->lv[w->depth - 1].fd >= 0) {
		close(w->lv[w->depth - 1].fd);
		w->lv[w->depth - 1].fd = -1;
	}
	w->depth++;
	return 0;
}

static void
lc_walk_pop(struct lc_walk *w)
{
	lc_walk_level_free(&w->lv[--w->depth]);
	if (w->depth > 0)
		w->path[w->lv[w->depth - 1].len] = '\0';
}

static void
lc_walk_ent(struct lc_walk *w, struct lc_walk_entry *ent, int kind)
{
	memset(ent, 0, sizeof(*ent));
	ent->kind = kind;
	ent->name = w->path;
	ent->fd = -1;
}

/* An entry skipped with a warning: LC_WALK_SKIP. */
static int
lc_walk_skip(struct lc_walk *w, struct lc_walk_entry *ent, struct lc_err *e,
    const char *why)
{
	lc_walk_ent(w, ent, 0);
	if (w->flags & LC_WALK_FED) {
		/* the caller waits for an answer about every name it fed */
		lc_err_set(e, LC_ERR_IO, "%s: %s", lc__walk_disp(w), why);
		return LC_WALK_FAIL;
	}
	lc_err_set(e, LC_ERR_IO, "%s: %s, skipped", lc__walk_disp(w), why);
	return LC_WALK_SKIP;
}

/* An entry that could not be read: LC_WALK_FAIL. */
int
lc__walk_fail(struct lc_walk *w, struct lc_walk_entry *ent, struct lc_err *e,
    int err)
{
	lc_walk_ent(w, ent, 0);
	if (err == EXDEV && w->conf->root_fd >= 0)
		lc_err_set(e, LC_ERR_IO, "%s: refused, it leads outside %s",
		    lc__walk_disp(w), w->conf->root);
	else
		lc_err_sys(e, LC_ERR_IO, err, "%s", lc__walk_disp(w));
	return LC_WALK_FAIL;
}

/*
 * Open name in dirfd (w->path names it) with flags: with O_NOFOLLOW unless
 * link (an entry lstat showed to be a symlink, FOLLOW given); a link of a
 * confined walk through lc_confine_open() on the whole user path.  0 or
 * an errno (EXDEV: confinement refused).
 */
static int
lc_walk_openat(struct lc_walk *w, int dirfd, const char *name, int flags,
    int link, int *fd)
{
	struct lc_err e;
	int r;

	*fd = -1;
	if (!link || w->conf->root_fd < 0) {
		*fd = openat(dirfd, name, flags | O_CLOEXEC |
		    (link ? 0 : O_NOFOLLOW));
		return *fd < 0 ? errno : 0;
	}
	lc_err_clear(&e);
	r = lc_confine_open(w->conf, -1, lc_walk_full(w), flags, 0, fd, &e);
	if (r == 0)
		return 0;
	return r == -LC_ERR_DENIED ? EXDEV : e.sys_errno != 0 ?
	    e.sys_errno : EIO;
}

/*
 * stat(2) of the symlink name in dirfd (w->path names it), confined like
 * lc_walk_openat().  0 or an errno.
 */
static int
lc_walk_stat_link(struct lc_walk *w, int dirfd, const char *name,
    struct stat *st)
{
	struct lc_err e;
	int err;

	if (fstatat(dirfd, name, st, 0) != 0)
		return errno;	/* ELOOP, ENOENT: what the link is */
	if (w->conf->root_fd < 0)
		return 0;
	lc_err_clear(&e);
	lc_confine_stat(w->conf, -1, lc_walk_full(w), st, &err, &e);
	return err;
}

/*
 * Reopen the top level (its descriptor was given up) from the nearest
 * open ancestor, one component at a time.  0, or an errno (ESTALE: a
 * component is no longer the directory it was) with *bad the level that
 * failed.
 */
static int
lc_walk_reopen(struct lc_walk *w, size_t *bad)
{
	struct lc_walk_level *l;
	struct stat st;
	char comp[NAME_MAX + 1];
	size_t top = w->depth - 1, a = top, i, start;
	int cur, nfd, err;

	while (a > 0 && w->lv[a].fd < 0)
		a--;
	if (w->lv[a].fd < 0)
		return EBADF;	/* the root never closes: a bug */
	cur = w->lv[a].fd;
	for (i = a + 1; i <= top; i++) {
		l = &w->lv[i];
		start = lc_walk_child_off(w->lv[i - 1].len);
		if (l->len <= start || l->len - start > NAME_MAX)
			err = EINVAL;
		else {
			memcpy(comp, w->path + start, l->len - start);
			comp[l->len - start] = '\0';
			err = 0;
		}
		/*
		 * A symlink followed on the way down is followed again here
		 * without confinement, but it must lead to the very
		 * directory it led to then.
		 */
		nfd = err ? -1 : openat(cur, comp, LC_WALK_DIRFLAGS |
		    (l->link ? 0 : O_NOFOLLOW));
		if (nfd < 0 && err == 0)
			err = errno;
		if (nfd >= 0 && fstat(nfd, &st) != 0)
			err = errno;
		else if (nfd >= 0 && (st.st_dev != l->dev ||
		    st.st_ino != l->ino))
			err = ESTALE;
		if (cur != w->lv[a].fd)
			close(cur);
		if (err != 0) {
			if (nfd >= 0)
				close(nfd);
			*bad = i;
			return err;
		}
		cur = nfd;
	}
	w->lv[top].fd = cur;
	return 0;
}

/* List the directory returned last (w->path). */
static int
lc_walk_descend(struct lc_walk *w, struct lc_walk_entry *ent,
    struct lc_err *e)
{
	struct lc_walk_level *par = &w->lv[w->depth - 1];
	const char *name = w->path + lc_walk_child_off(par->len);
	struct stat st;
	int fd, err, r;

	w->pending = 0;
	if ((err = lc_walk_openat(w, par->fd, name, LC_WALK_DIRFLAGS,
	    w->pend_link, &fd)) != 0) {
		if (err == ENOENT)
			return 0;	/* vanished */
		return lc__walk_fail(w, ent, e, err);
	}
	if (fstat(fd, &st) != 0 || st.st_dev != w->pend_st.st_dev ||
	    st.st_ino != w->pend_st.st_ino) {
		close(fd);
		lc_walk_ent(w, ent, 0);
		lc_err_set(e, LC_ERR_IO, "%s: changed during the copy",
		    lc__walk_disp(w));
		return LC_WALK_FAIL;
	}
	if ((r = lc_walk_push(w, fd, &st, &err)) == -LC_ERR_NOMEM)
		return lc_err_set(e, LC_ERR_NOMEM, "%s: out of memory",
		    lc__walk_disp(w));
	if (r != 0)
		return lc__walk_fail(w, ent, e, err);
	w->lv[w->depth - 1].link = w->pend_link;
	return 0;
}

static const char *
lc_walk_special(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	return "not a regular file, directory or symlink";
}

/* Open a regular file name in dirfd and fill ent. */
static int
lc_walk_file(struct lc_walk *w, int dirfd, const char *name, int link,
    struct lc_walk_entry *ent, struct lc_err *e)
{
	struct stat st;
	int fd, fl;

	if ((fl = lc_walk_openat(w, dirfd, name, O_RDONLY | O_NOCTTY |
	    O_NONBLOCK, link, &fd)) != 0) {
		if (fl == ENOENT)
			return 0;	/* vanished */
		return lc__walk_fail(w, ent, e, fl);
	}
	if (fstat(fd, &st) != 0 || lc_set_nonblock(fd, 0) != 0) {
		fl = errno;
		close(fd);
		return lc__walk_fail(w, ent, e, fl);
	}
	if (!S_ISREG(st.st_mode)) {	/* replaced since the lstat */
		close(fd);
		return lc_walk_skip(w, ent, e, lc_walk_special(st.st_mode));
	}
	lc_walk_ent(w, ent, LC_KIND_REG);
	ent->st = st;
	ent->fd = fd;
	return LC_WALK_ENTRY;
}

/* Is (dev, ino) a directory on the current path (a loop under FOLLOW)? */
static int
lc_walk_on_path(const struct lc_walk *w, const struct stat *st)
{
	size_t i;

	for (i = 0; i < w->depth; i++)
		if (w->lv[i].dev == st->st_dev && w->lv[i].ino == st->st_ino)
			return 1;
	return 0;
}

int
lc__walk_child(struct lc_walk *w, int dirfd, const char *name,
    struct lc_walk_entry *ent, struct lc_err *e)
{
	struct stat st;
	ssize_t n;
	int err, link;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno == ENOENT)
			return 0;
		return lc__walk_fail(w, ent, e, errno);
	}
	if (S_ISLNK(st.st_mode) && !(w->flags & LC_WALK_FOLLOW)) {
		n = readlinkat(dirfd, name, w->link, sizeof(w->link));
		if (n < 0 && errno == ENOENT)
			return 0;
		if (n < 0)
			return lc__walk_fail(w, ent, e, errno);
		if (n == 0 || (size_t)n >= sizeof(w->link))
			return lc_walk_skip(w, ent, e, n == 0 ?
			    "empty symlink" : "symlink target too long");
		w->link[n] = '\0';
		lc_walk_ent(w, ent, LC_KIND_SYMLINK);
		ent->st = st;
		ent->st.st_size = 0;
		ent->link = w->link;
		return LC_WALK_ENTRY;
	}
	link = S_ISLNK(st.st_mode);
	if (link && (err = lc_walk_stat_link(w, dirfd, name, &st)) != 0) {
		if (err == ELOOP)
			return lc_walk_skip(w, ent, e, "symlink loop");
		if (err == ENOENT &&
		    fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 &&
		    errno == ENOENT)
			return 0;	/* the link itself vanished */
		return lc__walk_fail(w, ent, e, err);
	}
	if (S_ISREG(st.st_mode) && (w->flags & LC_WALK_NOOPEN)) {
		/* the caller opens it when it needs the data */
		lc_walk_ent(w, ent, LC_KIND_REG);
		ent->st = st;
		return LC_WALK_ENTRY;
	}
	if (S_ISREG(st.st_mode))
		return lc_walk_file(w, dirfd, name, link, ent, e);
	if (!S_ISDIR(st.st_mode))
		return lc_walk_skip(w, ent, e, lc_walk_special(st.st_mode));
	if ((w->flags & LC_WALK_FOLLOW) && lc_walk_on_path(w, &st))
		return lc_walk_skip(w, ent, e, "symlink loop");
	lc_walk_ent(w, ent, LC_KIND_DIR);
	ent->st = st;
	w->pend_st = st;
	w->pend_link = link;
	w->pending = 1;
	return LC_WALK_ENTRY;
}

/* The root entry (state LC_WS_ROOT). */
static int
lc_walk_root(struct lc_walk *w, struct lc_walk_entry *ent, struct lc_err *e)
{
	int fd = w->root_fd, err, r;

	w->root_fd = -1;
	w->state = LC_WS_TREE;
	if (S_ISREG(w->root_st.st_mode)) {
		/* fed names below a file fail, but they are still taken */
		if (!(w->flags & LC_WALK_FED))
			w->state = LC_WS_DONE;
		lc_walk_ent(w, ent, LC_KIND_REG);
		ent->st = w->root_st;
		ent->fd = fd;
		return LC_WALK_ENTRY;
	}
	if (!(w->flags & LC_WALK_CONTENTS)) {
		/* listed on the next call, like any directory */
		lc_walk_ent(w, ent, LC_KIND_DIR);
		ent->st = w->root_st;
		w->root_fd = fd;
		return LC_WALK_ENTRY;
	}
	if (w->flags & LC_WALK_FED) {	/* never listed: names come fed */
		w->root_fd = fd;
		return 0;
	}
	if ((r = lc_walk_push(w, fd, &w->root_st, &err)) == -LC_ERR_NOMEM)
		return lc_err_set(e, LC_ERR_NOMEM, "%s: out of memory",
		    w->root_disp);
	if (r != 0)
		return lc__walk_fail(w, ent, e, err);
	return 0;
}

/*
 * Reopening failed at level bad: the rest of it and of every level below
 * it is lost, reported once, naming it (0 when it vanished).
 */
static int
lc_walk_lost(struct lc_walk *w, size_t bad, int err,
    struct lc_walk_entry *ent, struct lc_err *e)
{
	size_t i;

	for (i = bad; i < w->depth; i++)
		w->lv[i].next = w->lv[i].n;
	if (err == ENOENT)
		return 0;	/* vanished */
	w->path[w->lv[bad].len] = '\0';
	if (err != ESTALE)
		return lc__walk_fail(w, ent, e, err);
	lc_walk_ent(w, ent, 0);
	lc_err_set(e, LC_ERR_IO, "%s: changed during the copy",
	    lc__walk_disp(w));
	return LC_WALK_FAIL;
}

void
lc_walk_prune(struct lc_walk *w)
{
	if (w->flags & LC_WALK_FED)
		return;	/* nothing is listed: no directory to leave out */
	if (w->state == LC_WS_TREE && w->depth == 0 && w->root_fd >= 0) {
		/* the root directory: nothing more */
		close(w->root_fd);
		w->root_fd = -1;
		w->state = LC_WS_DONE;
		return;
	}
	w->pending = 0;
}

int
lc_walk_next(struct lc_walk *w, struct lc_walk_entry *ent, struct lc_err *e)
{
	struct lc_walk_level *l;
	const char *name;
	size_t n, bad = 0;
	int r, err;

	lc_walk_ent(w, ent, 0);
	w->fed_cur = 0;
	if (w->state == LC_WS_ROOT && (r = lc_walk_root(w, ent, e)) != 0)
		goto out;
	if ((w->flags & LC_WALK_FED) && w->state == LC_WS_TREE) {
		r = lc__walk_fed_next(w, ent, e);
		goto out;
	}
	if (w->state == LC_WS_TREE && w->root_fd >= 0) {
		/* the root directory, returned on the last call */
		r = lc_walk_push(w, w->root_fd, &w->root_st, &err);
		w->root_fd = -1;
		if (r == -LC_ERR_NOMEM) {
			r = lc_err_set(e, LC_ERR_NOMEM, "%s: out of memory",
			    w->root_disp);
			goto out;
		}
		if (r != 0) {
			r = lc__walk_fail(w, ent, e, err);
			goto out;
		}
	}
	while (w->state == LC_WS_TREE) {
		if (w->depth == 0) {
			w->state = LC_WS_DONE;
			break;
		}
		if (w->pending && (r = lc_walk_descend(w, ent, e)) != 0)
			goto out;
		l = &w->lv[w->depth - 1];
		w->path[l->len] = '\0';
		if (l->next == l->n) {
			lc_walk_pop(w);
			continue;
		}
		if (l->fd < 0 && (err = lc_walk_reopen(w, &bad)) != 0) {
			r = lc_walk_lost(w, bad, err, ent, e);
			if (r == 0)
				continue;
			goto out;
		}
		name = l->buf + l->off[l->next++];
		n = l->len;
		snprintf(w->path + n, sizeof(w->path) - n, "%s%s",
		    n > 0 ? "/" : "", name);
		if (strlen(w->path) > LC_PATH_MAX - 1) {
			r = lc_walk_skip(w, ent, e, "name too long");
			goto out;
		}
		if ((r = lc__walk_child(w, l->fd, name, ent, e)) != 0)
			goto out;
	}
	return 0;
 out:
	if (r < 0) {
		while (w->depth > 0)
			lc_walk_pop(w);
		w->state = LC_WS_DONE;
	}
	return r;
}

static int
lc_walk_bad_base(const char *base)
{
	return base[0] == '\0' || strcmp(base, ".") == 0 ||
	    strcmp(base, "..") == 0 || strcmp(base, "/") == 0;
}

int
lc_walk_open(const struct lc_confine *conf, const char *path, uint32_t flags,
    struct lc_walk **out, struct lc_err *e)
{
	struct lc_walk *w = NULL;
	struct stat st;
	char base[NAME_MAX + 2];
	size_t n;
	int fd = -1, err, r;

	*out = NULL;
	if ((flags & ~LC_WALK_MASK) != 0 || ((flags & LC_WALK_FED) &&
	    (flags & (LC_WALK_RECURSIVE | LC_WALK_FOLLOW)) !=
	    LC_WALK_RECURSIVE))
		return lc_err_set(e, LC_ERR_INTERNAL, "walk: bad flags %#x",
		    flags);
	if (strlen(path) >= LC_PATH_MAX)
		return lc_err_set(e, LC_ERR_IO, "%.64s...: name too long",
		    path);
	lc_path_basename(path, base, sizeof(base));
	if (!(flags & LC_WALK_CONTENTS) && lc_walk_bad_base(base))
		return lc_err_set(e, LC_ERR_IO, "%s: cannot name the copy "
		    "(name a directory's contents as DIR/)", path);
	if (strlen(base) > NAME_MAX)
		return lc_err_set(e, LC_ERR_IO, "%s: name too long", path);
	/* the type first: opening a FIFO or a device could block or act */
	if ((r = lc_confine_stat(conf, -1, path, &st, &err, e)) != 0)
		return r;
	if (S_ISDIR(st.st_mode) && !(flags & LC_WALK_RECURSIVE))
		return lc_err_set(e, LC_ERR_IO, "%s: is a directory (use -r)",
		    path);
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return lc_err_set(e, LC_ERR_IO, "%s: not a regular file", path);
	if ((r = lc_confine_open(conf, -1, path, O_RDONLY | O_NOCTTY |
	    O_NONBLOCK | O_CLOEXEC, 0, &fd, e)) != 0)
		return r;
	if (fstat(fd, &st) != 0 || lc_set_nonblock(fd, 0) != 0) {
		r = lc_err_sys(e, LC_ERR_IO, errno, "%s", path);
		goto out;
	}
	if ((S_ISDIR(st.st_mode) && !(flags & LC_WALK_RECURSIVE)) ||
	    (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))) {
		r = lc_err_set(e, LC_ERR_IO, "%s: changed while opening it",
		    path);
		goto out;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		r = lc_err_set(e, LC_ERR_NOMEM, "%s: out of memory", path);
		goto out;
	}
	w->conf = conf;
	w->flags = flags;
	w->state = LC_WS_ROOT;
	w->root_st = st;
	w->root_fd = fd;
	fd = -1;	/* transferred */
	/* the user's path without trailing slashes ("/" stays) */
	snprintf(w->root_disp, sizeof(w->root_disp), "%s", path);
	n = strlen(w->root_disp);
	while (n > 1 && w->root_disp[n - 1] == '/')
		w->root_disp[--n] = '\0';
	if (!(flags & LC_WALK_CONTENTS) || S_ISREG(st.st_mode)) {
		snprintf(w->path, sizeof(w->path), "%s", base);
		w->base_len = strlen(base);
	}
	*out = w;
	w = NULL;	/* transferred */
	r = 0;
 out:
	if (fd >= 0)
		close(fd);
	free(w);
	return r;
}

void
lc_walk_free(struct lc_walk *w)
{
	if (w == NULL)
		return;
	while (w->depth > 0)
		lc_walk_level_free(&w->lv[--w->depth]);
	free(w->lv);
	lc__walk_fed_free(w);
	if (w->root_fd >= 0)
		close(w->root_fd);
	free(w);
}
