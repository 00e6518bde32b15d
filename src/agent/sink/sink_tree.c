/*
 * The sink's tree entries (LC_TGT_TREE): the directories files are made
 * in (opened once, shared by reference count), directories and symlinks
 * made at once, --owner's names mapped to this host's ids, the free
 * space the announced files need, and the directories' modes and times
 * applied last by the dirs job.  The file system side is tree.c.  Main
 * thread, except lc__sink_dirs_job (the job thread, once every entry is
 * done).  State: struct lc_sink_tree (sink_int.h).
 */
#include "sink_int.h"

#include "idname.h"
#include "log.h"
#include "path.h"
#include "parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

void
lc__sink_tdir_put(struct lc_tdir *d)
{
	if (d == NULL || --d->refs > 0)
		return;
	close(d->fd);
	free(d);
}

/*
 * The directory rel of the tree (a new reference in *out).  Files come
 * in listing order, so the last one used is usually the one asked for.
 */
int
lc__sink_dir(struct lc_sink *s, const char *rel, struct lc_tdir **out,
    struct lc_err *e)
{
	struct lc_tdir *d;
	size_t n = strlen(rel);
	int fd, r;

	*out = NULL;
	if (s->tree.cur_dir != NULL && strcmp(s->tree.cur_dir->rel, rel) == 0) {
		s->tree.cur_dir->refs++;
		*out = s->tree.cur_dir;
		return 0;
	}
	if ((r = lc_tree_open_dir(&s->tgt, rel, &fd, e)) != 0)
		return r;
	if ((d = malloc(sizeof(*d) + n + 1)) == NULL) {
		close(fd);
		return -LC_ERR_NOMEM;
	}
	d->fd = fd;
	d->refs = 2;	/* the cache's and the caller's */
	memcpy(d->rel, rel, n + 1);
	lc__sink_tdir_put(s->tree.cur_dir);
	s->tree.cur_dir = d;
	*out = d;
	return 0;
}

/*
 * --owner: the id to give a file here, from the source's name for it
 * (unless --numeric-ids, or it has none here), else its number, with one
 * warning per run (a name only sssd or LDAP knows is not found by the
 * pushed agent: idname.h).  The last name looked up is kept: a tree's
 * files mostly share one.
 */
static uint32_t
lc_sink_id(struct lc_sink *s, const char *name, uint32_t id, int group)
{
	struct lc_sink_idmap *c = group ? &s->tree.map_group :
	    &s->tree.map_user;
	struct lc_idpw pw;
	uint32_t gid;
	int r = 0;

	if ((s->tgt.flags & LC_TGT_NUMERIC_IDS) || name[0] == '\0')
		return id;
	if (c->valid && strcmp(c->name, name) == 0)
		return c->id;
	c->id = id;
	if (!group && (r = lc_id_user_byname(name, &pw)) == 1)
		c->id = pw.uid;
	else if (group && (r = lc_id_group_byname(name, &gid)) == 1)
		c->id = gid;
	if (r != 1 && !s->tree.unknown_warned) {
		char safe[LC_OWNER_MAX];

		s->tree.unknown_warned = 1;
		lc_printable(name, safe, sizeof(safe));
		lc_log_warn("--owner: %s \"%s\" is not known here (%s%s): "
		    "its number %u kept (further names not found are not "
		    "reported)", group ? "group" : "user", safe,
		    lc_id_source(), r < 0 ? ", which cannot be read" : "",
		    (unsigned)id);
	}
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->valid = 1;
	return c->id;
}

/* What entry m keeps here: mode, times, and (as root) its owner. */
void
lc__sink_attrs(struct lc_sink *s, const struct lc_msg_file *m,
    struct lc_attrs *a)
{
	memset(a, 0, sizeof(*a));
	a->mode = m->mode;
	a->mtime_sec = m->mtime_sec;
	a->mtime_nsec = m->mtime_nsec;
	if (!(s->tgt.flags & LC_TGT_OWNER) || geteuid() != 0)
		return;
	a->chown = 1;
	a->uid = lc_sink_id(s, m->user, m->uid, 0);
	a->gid = lc_sink_id(s, m->group, m->gid, 1);
}

/* Remember a directory of the tree for its mode and times at the end. */
int
lc__sink_note_dir(struct lc_sink *s, const struct lc_msg_file *m, int made)
{
	struct lc_sdir *d;

	if (!made && !(s->tgt.flags & (LC_TGT_PRESERVE | LC_TGT_OWNER)))
		return 0;
	if (s->tree.ndirs == s->tree.dirs_cap) {
		size_t ncap = s->tree.dirs_cap ? 2 * s->tree.dirs_cap : 64;
		if ((d = realloc(s->tree.dirs, ncap * sizeof(*d))) == NULL)
			return -LC_ERR_NOMEM;
		s->tree.dirs = d;
		s->tree.dirs_cap = ncap;
	}
	if (s->tree.nopen == s->tree.open_cap) {
		size_t ncap = s->tree.open_cap ? 2 * s->tree.open_cap : 16;
		size_t *o = realloc(s->tree.open, ncap * sizeof(*o));
		if (o == NULL)
			return -LC_ERR_NOMEM;
		s->tree.open = o;
		s->tree.open_cap = ncap;
	}
	d = &s->tree.dirs[s->tree.ndirs];
	if ((d->rel = strdup(m->name)) == NULL)
		return -LC_ERR_NOMEM;
	lc__sink_attrs(s, m, &d->a);
	/* a directory that was there keeps its mode, unless -p */
	d->a.set_mode = made || (s->tgt.flags & LC_TGT_PRESERVE);
	d->id = m->id;
	d->end = 0;
	s->tree.open[s->tree.nopen++] = s->tree.ndirs;
	s->tree.ndirs++;
	return 0;
}

/* See sink_int.h.  Entries come in pre-order: a directory's are next. */
void
lc__sink_dirs_close(struct lc_sink *s, const struct lc_msg_file *m)
{
	while (s->tree.nopen > 0) {
		struct lc_sdir *d = &s->tree.dirs[s->tree.open[s->tree.nopen -
		    1]];
		size_t n = strlen(d->rel);

		if (strncmp(m->name, d->rel, n) == 0 && m->name[n] == '/')
			return;	/* inside it */
		d->end = m->id;
		s->tree.nopen--;
	}
}

/* See sink_int.h. */
void
lc__sink_dirs_partial(struct lc_sink *s)
{
	struct lc_err e;
	size_t done = 0;

	if (!(s->tgt.flags & LC_TGT_TREE) || s->tree.dirs_state != 0)
		return;
	for (size_t i = s->tree.ndirs; i-- > 0;) {
		const struct lc_sdir *d = &s->tree.dirs[i];

		/* every id below lo is done: its contents, if end <= lo */
		if (d->end == 0 || d->end > s->lo)
			continue;
		lc_err_clear(&e);
		if (lc_tree_dir_attrs(&s->tgt, d->rel, &d->a, 0, &e) != 0)
			lc_log_debug("%s", e.msg);
		else
			done++;
	}
	if (done > 0)
		lc_log_debug("%zu complete directories of the unfinished "
		    "tree got their modes", done);
}

/*
 * Free space for a tree or several files: what every file announced so
 * far needs, against what was free at the first one (files replaced keep
 * their old copy until the rename, so nothing is counted back).
 */
int
lc__sink_space(struct lc_sink *s, struct lc_sfile *f, uint64_t need,
    struct lc_err *e)
{
	struct statvfs sv;
	char a[32], b[32];

	if ((s->tgt.flags & LC_TGT_NO_SPACE_CHECK) || f->p.direct)
		return 0;
	if (!s->tgt.is_dir)
		return lc_part_space(&s->tgt, &f->p, need, e);
	if (!s->tree.space_known) {
		if (fstatvfs(s->tgt.dir_fd, &sv) != 0)
			return 0;
		s->tree.space_avail = (uint64_t)sv.f_bavail * sv.f_frsize;
		s->tree.space_known = 1;
	}
	s->tree.space_need += need;
	if (s->tree.space_need <= s->tree.space_avail)
		return 0;
	if (s->tree.space_need == need)	/* the first file */
		return lc_err_set(e, LC_ERR_NOSPACE, "%s: needs %s but only "
		    "%s is free there (--no-space-check to try anyway)",
		    f->p.final, lc_fmt_bytes(a, sizeof(a), need),
		    lc_fmt_bytes(b, sizeof(b), s->tree.space_avail));
	return lc_err_set(e, LC_ERR_NOSPACE, "%s: the files so far need %s "
	    "but only %s is free there (--no-space-check to try anyway)",
	    f->p.final, lc_fmt_bytes(a, sizeof(a), s->tree.space_need),
	    lc_fmt_bytes(b, sizeof(b), s->tree.space_avail));
}

/*
 * Directories last (the job thread), deepest first: each gets its mode
 * and times once its contents are written, and is made durable (its
 * entries, new subdirectories included): an fsync each, or for many one
 * syncfs(2); then the target itself.
 */
void
lc__sink_dirs_job(void *arg)
{
	struct lc_sink *s = arg;
	int fsync_on = !(s->tgt.flags & LC_TGT_NO_FSYNC);
	struct lc_err e;

	lc_err_clear(&e);
	for (size_t i = s->tree.ndirs; i-- > 0;) {
		const struct lc_sdir *d = &s->tree.dirs[i];
		if (lc_role_canceled(&s->port))
			return;
		if (lc_tree_dir_attrs(&s->tgt, d->rel, &d->a,
		    fsync_on && s->tree.ndirs < LC_SINK_SYNCFS_MIN, &e) != 0) {
			lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
			return;
		}
	}
	/* many directories: one syncfs(2) for all of them */
	if (fsync_on && s->tgt.dir_fd >= 0 &&
	    (s->tree.ndirs >= LC_SINK_SYNCFS_MIN ? syncfs(s->tgt.dir_fd) :
	    fsync(s->tgt.dir_fd)) != 0 && errno != EINVAL) {
		lc_err_sys(&e, LC_ERR_IO, errno, "sync %s", s->tgt.path);
		lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
		return;
	}
	lc_role_post(&s->port, LC_EV_DIRS_DONE, 0, 0, NULL);
}

/* See sink_int.h. */
void
lc__sink_tree_free(struct lc_sink *s)
{
	for (size_t i = 0; i < s->tree.ndirs; i++)
		free(s->tree.dirs[i].rel);
	free(s->tree.dirs);
	free(s->tree.open);
	lc__sink_tdir_put(s->tree.cur_dir);
}
