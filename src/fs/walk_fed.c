/*
 * A fed walk (LC_WALK_FED, walk.h): the root as the tree walk gives it,
 * then the names the caller feeds, one entry each, in the order fed.
 *
 * A name is resolved from the root's descriptor one directory at a time
 * with O_NOFOLLOW, so a symlink anywhere on the way fails the entry
 * instead of leading elsewhere (a confined agent stays confined: only the
 * root was resolved through confinement).  The last component is made by
 * lc__walk_child(), the tree walk's own code for a child, so an entry fed
 * is the entry the walk would have produced.
 */
#include "walk_int.h"

#include "partfile.h" /* lc_part_name */
#include "wire.h"     /* lc_relname_ok */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int
lc_walk_feed_one(struct lc_walk *w, const char *name, int part, uint64_t size,
    struct lc_err *e)
{
	struct lc_walk_fed *f;
	size_t n = strlen(name);

	if (!(w->flags & LC_WALK_FED) || w->fed_end)
		return lc_err_set(e, LC_ERR_INTERNAL, "walk: %s",
		    w->fed_end ? "a name fed after the end" : "not fed");
	/* w->path begins with the root's base name (CONTENTS: none) */
	if (!lc_relname_ok(name) || n >= LC_PATH_MAX ||
	    (w->base_len > 0 &&
		(strncmp(name, w->path, w->base_len) != 0 ||
		    name[w->base_len] != '/')))
		return lc_err_set(e, LC_ERR_DENIED,
		    "%.64s%s: not a name below %s", name, n > 64 ? "..." : "",
		    w->root_disp);
	if ((f = malloc(sizeof(*f) + n + 1)) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "walk: out of memory");
	f->next = NULL;
	f->part = part;
	f->size = size;
	memcpy(f->name, name, n + 1);
	if (w->fed_tail != NULL)
		w->fed_tail->next = f;
	else
		w->fed_head = f;
	w->fed_tail = f;
	w->fed_n++;
	return 0;
}

int
lc_walk_feed(struct lc_walk *w, const char *name, struct lc_err *e)
{
	return lc_walk_feed_one(w, name, 0, 0, e);
}

int
lc_walk_feed_part(struct lc_walk *w, const char *name, uint64_t size,
    struct lc_err *e)
{
	return lc_walk_feed_one(w, name, 1, size, e);
}

void
lc_walk_feed_end(struct lc_walk *w)
{
	w->fed_end = 1;
}

int
lc_walk_fed_ended(const struct lc_walk *w)
{
	return w->fed_end;
}

size_t
lc_walk_fed_held(const struct lc_walk *w)
{
	return w->fed_n + (w->fed_cur ? 1 : 0);
}

/*
 * Directory comp in dirfd failed to open with err: a symlink there is
 * named as such (it is not followed), anything else by its errno.
 */
static int
lc_walk_fed_way(struct lc_walk *w, int dirfd, const char *comp, int err,
    struct lc_walk_entry *ent, struct lc_err *e)
{
	struct stat st;

	if ((err == ELOOP || err == ENOTDIR) &&
	    fstatat(dirfd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode)) {
		(void)lc__walk_fail(w, ent, e, err); /* the entry, cleared */
		lc_err_set(e, LC_ERR_IO,
		    "%s: %s on the way is a symlink, not followed",
		    lc__walk_disp(w), comp);
		return LC_WALK_FAIL;
	}
	return lc__walk_fail(w, ent, e, err);
}

/*
 * Open the directory that holds w->path's last component: *dirfd, the
 * root's or a new one to close, and *last, that component in w->path.
 * 0, or LC_WALK_FAIL with ent and e set.
 */
static int
lc_walk_fed_parent(struct lc_walk *w, int *dirfd, const char **last,
    struct lc_walk_entry *ent, struct lc_err *e)
{
	char comp[NAME_MAX + 1];
	const char *p = w->path + (w->base_len > 0 ? w->base_len + 1 : 0);
	const char *slash;
	int fd = w->root_fd, nfd, r = 0;

	if (fd < 0 || !S_ISDIR(w->root_st.st_mode))
		return lc__walk_fail(w, ent, e, ENOTDIR);
	for (; r == 0 && (slash = strchr(p, '/')) != NULL; p = slash + 1) {
		nfd = -1;
		if ((size_t)(slash - p) > NAME_MAX)
			r = lc__walk_fail(w, ent, e, ENAMETOOLONG);
		else {
			memcpy(comp, p, (size_t)(slash - p));
			comp[slash - p] = '\0';
			nfd = openat(fd, comp, LC_WALK_DIRFLAGS | O_NOFOLLOW);
			if (nfd < 0)
				r = lc_walk_fed_way(w, fd, comp, errno, ent, e);
		}
		if (fd != w->root_fd)
			close(fd);
		fd = nfd;
	}
	if (r != 0)
		return r;
	*dirfd = fd;
	*last = p;
	return 0;
}

/* The entry w->path names. */
static int
lc_walk_fed_one(struct lc_walk *w, struct lc_walk_entry *ent, struct lc_err *e)
{
	const char *last;
	int dirfd, r;

	if ((r = lc_walk_fed_parent(w, &dirfd, &last, ent, e)) != 0)
		return r;
	r = lc__walk_child(w, dirfd, last, ent, e);
	w->pending = 0; /* a directory named is not listed */
	if (dirfd != w->root_fd)
		close(dirfd);
	if (r == 0) /* missing: still answered */
		r = lc__walk_fail(w, ent, e, ENOENT);
	return r;
}

/*
 * The entry w->path names, fed with lc_walk_feed_part(): its part file
 * in the same directory while there is one, else the name itself.
 */
static int
lc_walk_fed_part(struct lc_walk *w, uint64_t size, struct lc_walk_entry *ent,
    struct lc_err *e)
{
	char part[NAME_MAX + 1];
	const char *last;
	struct stat st;
	int dirfd, fd, r;

	if ((r = lc_walk_fed_parent(w, &dirfd, &last, ent, e)) != 0)
		return r;
	fd = -1;
	if (lc_part_name(last, part, sizeof(part)) != 0)
		r = lc__walk_fail(w, ent, e, ENAMETOOLONG);
	else if ((fd = openat(dirfd, part,
		      O_RDONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW |
			  O_CLOEXEC)) < 0 &&
	    errno == ENOENT) {
		/* renamed in between: complete, read as any fed name */
		r = lc__walk_child(w, dirfd, last, ent, e);
		w->pending = 0;
		if (r == 0)
			r = lc__walk_fail(w, ent, e, ENOENT);
		else if (r == LC_WALK_ENTRY && ent->kind == LC_KIND_REG)
			ent->part = LC_WALK_PART_WHOLE;
	} else if (fd < 0 && errno == ELOOP) {
		(void)lc__walk_fail(w, ent, e, ELOOP); /* the entry, cleared */
		lc_err_set(e, LC_ERR_IO, "%s: its part file %s is a symlink",
		    lc__walk_disp(w), part);
		r = LC_WALK_FAIL;
	} else if (fd < 0) {
		r = lc__walk_fail(w, ent, e, errno);
	} else if (fstat(fd, &st) != 0) {
		r = lc__walk_fail(w, ent, e, errno);
	} else if (!S_ISREG(st.st_mode)) {
		(void)lc__walk_fail(w, ent, e, EINVAL);
		lc_err_set(e, LC_ERR_IO, "%s: %s is not a regular file",
		    lc__walk_disp(w), part);
		r = LC_WALK_FAIL;
	} else {
		memset(ent, 0, sizeof(*ent));
		ent->name = w->path;
		ent->link = NULL;
		ent->kind = LC_KIND_REG;
		ent->st = st;
		ent->fd = fd;
		ent->part = LC_WALK_PART_FOLLOW;
		ent->part_size = size;
		fd = -1;
		r = LC_WALK_ENTRY;
	}
	if (fd >= 0)
		close(fd);
	if (dirfd != w->root_fd)
		close(dirfd);
	return r;
}

int
lc__walk_fed_next(struct lc_walk *w, struct lc_walk_entry *ent,
    struct lc_err *e)
{
	struct lc_walk_fed *f = w->fed_head;
	uint64_t size;
	int part;

	if (f == NULL && !w->fed_end)
		return LC_WALK_WAIT;
	if (f == NULL) {
		w->state = LC_WS_DONE;
		if (w->root_fd >= 0)
			close(w->root_fd);
		w->root_fd = -1;
		return 0;
	}
	if ((w->fed_head = f->next) == NULL)
		w->fed_tail = NULL;
	w->fed_n--;
	w->fed_cur = 1;
	/* names are below LC_PATH_MAX (lc_walk_feed): path holds them */
	memcpy(w->path, f->name, strlen(f->name) + 1);
	part = f->part;
	size = f->size;
	free(f);
	return part ? lc_walk_fed_part(w, size, ent, e)
		    : lc_walk_fed_one(w, ent, e);
}

void
lc__walk_fed_free(struct lc_walk *w)
{
	struct lc_walk_fed *f, *n;

	for (f = w->fed_head; f != NULL; f = n) {
		n = f->next;
		free(f);
	}
	w->fed_head = w->fed_tail = NULL;
	w->fed_n = 0;
}
