/*
 * --delete at the sink (LC_TGT_DELETE): the names the copy listed are
 * kept (a hash set: memory grows with the tree, one copy of each name);
 * once the copy is done (SINK_DONE sent), DEL_SCAN walks a root of the
 * target and names each entry that was not listed (DEL_CAND, parents
 * before their entries), and DELETE removes one entry the controller
 * chose from those.  Everything is opened beneath the target directory
 * without following a symlink (lc_tree_open_dir, O_NOFOLLOW), so no
 * scan or deletion leaves the target; unlinkat(2) removes a symlink,
 * never what it points to.  Main thread.
 */
#include "sink_int.h"

#include "log.h"
#include "path.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct lc_nameset {
	char **slot; /* open addressing, NULL: free */
	size_t cap;  /* a power of two */
	size_t n;
};

static uint64_t
lc_name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (; *s != '\0'; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

static int
lc_names_has(const struct lc_nameset *ns, const char *name)
{
	size_t i;

	if (ns == NULL || ns->cap == 0)
		return 0;
	for (i = lc_name_hash(name) & (ns->cap - 1); ns->slot[i] != NULL;
	     i = (i + 1) & (ns->cap - 1))
		if (strcmp(ns->slot[i], name) == 0)
			return 1;
	return 0;
}

static void
lc_names_put(struct lc_nameset *ns, char *name)
{
	size_t i;

	for (i = lc_name_hash(name) & (ns->cap - 1); ns->slot[i] != NULL;
	     i = (i + 1) & (ns->cap - 1))
		;
	ns->slot[i] = name;
	ns->n++;
}

int
lc__sink_note_name(struct lc_sink *s, const char *name)
{
	struct lc_nameset *ns = s->del.listed, old;
	char *dup;

	if (!(s->tgt.flags & LC_TGT_DELETE))
		return 0;
	if (ns == NULL && (ns = s->del.listed = calloc(1, sizeof(*ns))) == NULL)
		return -LC_ERR_NOMEM;
	if (lc_names_has(ns, name))
		return 0;
	if (2 * (ns->n + 1) > ns->cap) {
		old = *ns;
		ns->cap = old.cap ? 2 * old.cap : 1024;
		ns->n = 0;
		if ((ns->slot = calloc(ns->cap, sizeof(*ns->slot))) == NULL) {
			*ns = old;
			return -LC_ERR_NOMEM;
		}
		for (size_t i = 0; i < old.cap; i++)
			if (old.slot[i] != NULL)
				lc_names_put(ns, old.slot[i]);
		free(old.slot);
	}
	if ((dup = strdup(name)) == NULL)
		return -LC_ERR_NOMEM;
	lc_names_put(ns, dup);
	return 0;
}

void
lc__sink_del_free(struct lc_sink *s)
{
	struct lc_nameset *ns = s->del.listed;

	if (ns == NULL)
		return;
	for (size_t i = 0; i < ns->cap; i++)
		free(ns->slot[i]);
	free(ns->slot);
	free(ns);
	s->del.listed = NULL;
}

static int
lc_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory fd (borrowed), sorted; *out NULL-terminated. */
static int
lc_scan_names(int fd, char ***out, size_t *nout)
{
	char **v = NULL, **nv;
	size_t n = 0, cap = 0;
	struct dirent *d;
	DIR *dir;
	int dfd;

	*out = NULL;
	*nout = 0;
	if ((dfd = dup(fd)) < 0)
		return errno;
	if ((dir = fdopendir(dfd)) == NULL) {
		close(dfd);
		return errno;
	}
	rewinddir(dir);
	while ((errno = 0, d = readdir(dir)) != NULL) {
		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			if ((nv = realloc(v, cap * sizeof(*v))) == NULL)
				goto nomem;
			v = nv;
		}
		if ((v[n] = strdup(d->d_name)) == NULL)
			goto nomem;
		n++;
	}
	if (errno != 0) {
		int err = errno;
		closedir(dir);
		for (size_t i = 0; i < n; i++)
			free(v[i]);
		free(v);
		return err;
	}
	closedir(dir);
	if (n > 0)
		qsort(v, n, sizeof(*v), lc_cmp_str);
	*out = v;
	*nout = n;
	return 0;
nomem:
	closedir(dir);
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return ENOMEM;
}

static int
lc_kind_of(mode_t mode)
{
	return S_ISDIR(mode) ? LC_KIND_DIR
	    : S_ISLNK(mode)  ? LC_KIND_SYMLINK
			     : LC_KIND_REG;
}

/*
 * Name every entry below directory fd (path rel, in buf of LC_PATH_MAX)
 * that was not listed, in pre-order.  Errors in e (the scan is then not
 * complete and nothing is deleted).
 */
static int
lc_scan_dir(struct lc_sink *s, int fd, char *rel, uint32_t *count,
    struct lc_err *e)
{
	struct lc_msg_del_cand c;
	size_t len = strlen(rel), n = 0, i;
	char **names;
	struct stat st;
	int err, sub, r = 0;

	if ((err = lc_scan_names(fd, &names, &n)) != 0)
		return lc_err_sys(e, LC_ERR_IO, err, "%s/%s", s->tgt.path, rel);
	for (i = 0; i < n && r == 0; i++) {
		if (len + 1 + strlen(names[i]) >= LC_PATH_MAX) {
			r = lc_err_set(e, LC_ERR_IO,
			    "%s/%s/%.32s...: name too "
			    "long",
			    s->tgt.path, rel, names[i]);
			break;
		}
		snprintf(rel + len, LC_PATH_MAX - len, "%s%s",
		    len > 0 ? "/" : "", names[i]);
		if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno != ENOENT)
				r = lc_err_sys(e, LC_ERR_IO, errno, "%s/%s",
				    s->tgt.path, rel);
			continue;
		}
		if (!lc_names_has(s->del.listed, rel)) {
			memset(&c, 0, sizeof(c));
			c.kind = (uint8_t)lc_kind_of(st.st_mode);
			snprintf(c.name, sizeof(c.name), "%s", rel);
			if ((r = lc_msg_put_del_cand(s->port.out, &c)) != 0)
				break;
			(*count)++;
		}
		if (!S_ISDIR(st.st_mode))
			continue;
		sub = openat(fd, names[i],
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			r = lc_err_sys(e, LC_ERR_IO, errno, "%s/%s",
			    s->tgt.path, rel);
			break;
		}
		r = lc_scan_dir(s, sub, rel, count, e);
		close(sub);
	}
	rel[len] = '\0';
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r;
}

int
lc__sink_del_scan(struct lc_sink *s, const struct lc_msg_del_scan *m,
    struct lc_err *e)
{
	struct lc_msg_del_scanned d;
	char rel[LC_PATH_MAX];
	struct lc_err why;
	int fd = -1, r;

	if (!(s->tgt.flags & LC_TGT_DELETE) || !s->done_sent ||
	    (m->root[0] != '\0' && !lc_names_has(s->del.listed, m->root)))
		return lc_err_set(e, LC_ERR_PROTO,
		    "DEL_SCAN of %s: not a "
		    "listed directory of a finished --delete copy",
		    m->root[0] ? m->root : "the target");
	memset(&d, 0, sizeof(d));
	lc_err_clear(&why);
	snprintf(rel, sizeof(rel), "%s", m->root);
	if (s->tgt.dir_fd < 0) /* -n: the target is not there */
		r = 0;
	else if ((r = lc_tree_open_dir(&s->tgt, m->root, &fd, &why)) == 0)
		r = lc_scan_dir(s, fd, rel, &d.count, &why);
	else if ((s->tgt.flags & LC_TGT_DRYRUN) && why.sys_errno == ENOENT)
		r = 0; /* -n: a root it would make holds nothing yet */
	if (fd >= 0)
		close(fd);
	if (r == -LC_ERR_NOMEM)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	if (r != 0)
		snprintf(d.msg, sizeof(d.msg), "%s",
		    why.msg[0] ? why.msg : lc_strerror(r));
	s->del.scanned = 1;
	return lc_msg_put_del_scanned(s->port.out, &d);
}

int
lc__sink_delete(struct lc_sink *s, const struct lc_msg_delete *m,
    struct lc_err *e)
{
	struct lc_msg_deleted d;
	char parent[LC_PATH_MAX];
	const char *slash = strrchr(m->name, '/');
	const char *leaf = slash != NULL ? slash + 1 : m->name;
	struct timespec times[2];
	struct lc_err why;
	struct stat pst, st;
	int pfd = -1;

	if (!(s->tgt.flags & LC_TGT_DELETE) || (s->tgt.flags & LC_TGT_DRYRUN) ||
	    !s->del.scanned || lc_names_has(s->del.listed, m->name))
		return lc_err_set(e, LC_ERR_PROTO,
		    "DELETE %s: not an entry a "
		    "scan named",
		    m->name);
	memset(&d, 0, sizeof(d));
	d.kind = m->kind;
	snprintf(d.name, sizeof(d.name), "%s", m->name);
	snprintf(parent, sizeof(parent), "%.*s",
	    slash != NULL ? (int)(slash - m->name) : 0, m->name);
	lc_err_clear(&why);
	if (lc_tree_open_dir(&s->tgt, parent, &pfd, &why) != 0) {
		snprintf(d.msg, sizeof(d.msg), "%s", why.msg);
	} else if (fstat(pfd, &pst) != 0 ||
	    fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		snprintf(d.msg, sizeof(d.msg), "%s", strerror(errno));
	} else if (lc_kind_of(st.st_mode) != m->kind) {
		snprintf(d.msg, sizeof(d.msg), "changed since the scan");
	} else if (unlinkat(pfd, leaf,
		       m->kind == LC_KIND_DIR ? AT_REMOVEDIR : 0) != 0) {
		snprintf(d.msg, sizeof(d.msg), "%s", strerror(errno));
	} else if (s->tgt.flags & LC_TGT_PRESERVE) {
		/* -p gave the directory the source's times: keep them */
		times[0] = pst.st_atim;
		times[1] = pst.st_mtim;
		(void)futimens(pfd, times);
	}
	if (pfd >= 0)
		close(pfd);
	return lc_msg_put_deleted(s->port.out, &d);
}
