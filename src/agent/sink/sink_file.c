/*
 * The sink's files in flight: the table of file records (a map by id of
 * at most SINK_TARGET's inflight entries, under lc_sink.mu because the
 * receivers look writers up), FILE (a regular file, or a tree entry
 * handed to sink_tree.c, or the one file of a pipe target handed to
 * sink_pipe.c), FILE_SUM and FILE_ABORT, starting a file's writer, and
 * the answers for entries done without data.  Main thread, except
 * lc_sink_writer (any thread, takes mu).  A file's record is freed as soon
 * as it is done (lc__sink_retire), which lets the controller announce one
 * more: the grant bounds how many records the sink holds, not how far
 * apart their ids are.
 */
#include "sink_int.h"

#include "log.h"
#include "parse.h"
#include "path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Put f (the next id, within the grant) in the table. */
int
lc__sink_table_put(struct lc_sink *s, struct lc_sfile *f)
{
	int r;

	if (f->id != s->files_total + 1)
		return -LC_ERR_PROTO;
	pthread_mutex_lock(&s->mu);
	/* full (the grant's count in flight) or the id twice: refused */
	r = lc_idmap_put(&s->files, f->id, f) != 0 ? -LC_ERR_PROTO : 0;
	pthread_mutex_unlock(&s->mu);
	if (r == 0)
		s->files_total++;
	return r;
}

struct lc_sfile *
lc__sink_table_get(struct lc_sink *s, uint32_t id)
{
	struct lc_sfile *f;

	pthread_mutex_lock(&s->mu);
	f = lc_idmap_get(&s->files, id);
	pthread_mutex_unlock(&s->mu);
	return f;
}

/* A receiver's lookup (sink_int.h): a reference of its own. */
struct lc_wfile *
lc_sink_writer(struct lc_sink *s, uint32_t id)
{
	struct lc_wfile *wf = NULL;
	struct lc_sfile *f;

	pthread_mutex_lock(&s->mu);
	if ((f = lc_idmap_get(&s->files, id)) != NULL && f->wf != NULL)
		wf = lc_wfile_ref(f->wf);
	pthread_mutex_unlock(&s->mu);
	return wf;
}

void
lc__sink_sfile_free(struct lc_sfile *f)
{
	if (f == NULL)
		return;
	/* closed before the descriptor is: a receiver may hold a reference */
	lc_wfile_free(f->wf);
	lc_csum_free(f->csum);
	lc__sink_delta_free(f);
	free(f->prefix);
	free(f->spans);
	lc_part_release(&f->p);
	lc__sink_tdir_put(f->dir);
	free(f);
}

/*
 * f is done: free its record (main thread), which lets the controller
 * announce one more, and move lo past every id announced and freed.
 */
void
lc__sink_retire(struct lc_sink *s, struct lc_sfile *f)
{
	pthread_mutex_lock(&s->mu);
	(void)lc_idmap_del(&s->files, f->id);
	while (s->lo <= s->files_total &&
	    lc_idmap_get(&s->files, s->lo) == NULL)
		s->lo++;
	pthread_mutex_unlock(&s->mu);
	lc__sink_sfile_free(f);
}

/* Ready to receive from f->start on. */
int
lc__sink_start_file(struct lc_sink *s, struct lc_sfile *f, struct lc_err *e)
{
	struct lc_msg_file_ready ready;
	int r;

	struct lc_wfile *wf;

	if ((r = lc_wfile_new(f->p.fd, !f->p.direct, f->start,
	    f->kind == LC_KIND_PIPE ? LC_PIPE_MAX : f->p.size, f->p.final,
	    &wf)) != 0)
		return lc_err_set(e, -r, "out of memory");
	if (f->kind == LC_KIND_PIPE)
		lc_wfile_open_end(wf);	/* FILE_LEN gives the end */
	if ((r = lc_wfile_set_spans(wf, f->spans, f->nspans)) != 0) {
		lc_wfile_free(wf);
		return lc_err_set(e, -r, "%s: chunks to rewrite", f->p.final);
	}
	if (f->csum != NULL && f->nspans == 0)
		lc_wfile_set_csum(wf, f->csum);
	lc_wfile_set_counter(wf, &s->written);
	lc_wfile_set_budget(wf, &s->mem.left);
	/* receivers look the writer up under the mutex */
	pthread_mutex_lock(&s->mu);
	f->wf = wf;
	pthread_mutex_unlock(&s->mu);
	f->state = LC_SF_RECV;
	memset(&ready, 0, sizeof(ready));
	ready.id = f->id;
	ready.start = f->start;
	if ((r = lc_msg_put_file_ready(s->port.out, &ready)) != 0)
		return r;
	if (f->kind != LC_KIND_PIPE && f->start == f->p.size &&
	    f->nspans == 0) {	/* nothing will arrive for it */
		f->written = 1;
		return lc__sink_maybe_finish(s, f);
	}
	return 0;
}

/*
 * An entry that is done without data (a directory, a link, a file skipped
 * or failed): answer for it (FILE_DONE, or FILE_SKIP why) and free its
 * record (f is invalid after the call).
 */
static int
lc_sink_answer(struct lc_sink *s, struct lc_sfile *f, int why,
    const char *msg)
{
	struct lc_msg_file_done d;
	struct lc_msg_file_skip k;
	int r;

	f->state = LC_SF_DONE;
	f->written = 1;
	s->files_done++;
	if (why != 0) {
		memset(&k, 0, sizeof(k));
		k.id = f->id;
		k.why = (uint8_t)why;
		snprintf(k.msg, sizeof(k.msg), "%s", msg != NULL ? msg : "");
		r = lc_msg_put_file_skip(s->port.out, &k);
	} else {
		memset(&d, 0, sizeof(d));
		d.id = f->id;
		d.has_flags = s->port.set.done_flags != 0;
		r = lc_msg_put_file_done(s->port.out, &d);
	}
	lc__sink_retire(s, f);
	return r;
}

/* The same for a new entry, not yet in the table. */
static int
lc_sink_done_now(struct lc_sink *s, struct lc_sfile *f, int why,
    const char *msg)
{
	int r;

	if ((r = lc__sink_table_put(s, f)) != 0) {
		lc__sink_sfile_free(f);
		return r;
	}
	return lc_sink_answer(s, f, why, msg);
}

/* 1 if an error about one file lets a tree copy go on without it. */
static int
lc_sink_file_error_ok(const struct lc_sink *s, int r)
{
	return (s->tgt.flags & LC_TGT_TREE) && (r == -LC_ERR_IO ||
	    r == -LC_ERR_EXISTS);
}

/*
 * -n: what the entry would be (LC_SKIP_DRY_*, or what a real run would
 * skip it as) without changing anything.  A parent that is not there
 * (it would be made) makes every entry in it new.
 */
static int
lc_sink_dry_why(struct lc_sink *s, const struct lc_msg_file *m, int dfd,
    const char *leaf, const struct lc_attrs *a, char *said, size_t saidsz,
    const char **msg)
{
	char link[LC_PATH_MAX];
	struct lc_err ignored;
	struct stat st;
	unsigned set;
	ssize_t n;
	int why;

	*msg = NULL;
	if (dfd < 0 || fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return LC_SKIP_DRY_NEW;
	switch (m->kind) {
	case LC_KIND_DIR:
		return S_ISDIR(st.st_mode) ? LC_SKIP_DRY_SAME :
		    LC_SKIP_DRY_UPDATE;
	case LC_KIND_SYMLINK:
		if (!S_ISLNK(st.st_mode))
			return LC_SKIP_DRY_UPDATE;
		n = readlinkat(dfd, leaf, link, sizeof(link) - 1);
		if (n < 0)
			return LC_SKIP_DRY_UPDATE;
		link[n] = '\0';
		return strcmp(link, m->link) == 0 ? LC_SKIP_DRY_SAME :
		    LC_SKIP_DRY_UPDATE;
	default:
		break;
	}
	if ((why = lc_tree_skip(&s->tgt, dfd, leaf, m->size,
	    m->mtime_sec)) != 0) {
		/* -p, --owner: what a real run would refresh (a dry target
		   makes lc_tree_skip_attrs only compare) */
		if (why == LC_SKIP_UPTODATE && lc_tree_skip_attrs(&s->tgt,
		    dfd, leaf, m->name, a, &set, &ignored) == 0) {
			lc_skip_set_put(set, said, saidsz);
			*msg = said;
		}
		return why;
	}
	if (!(s->tgt.flags & LC_TGT_FORCE)) {
		*msg = "file exists (use -f to overwrite)";
		return LC_SKIP_FAILED;
	}
	return LC_SKIP_DRY_UPDATE;
}

static int
lc_sink_dry(struct lc_sink *s, struct lc_sfile *f, const struct lc_msg_file *m,
    const struct lc_attrs *a, struct lc_err *e)
{
	const char *slash, *leaf, *msg;
	char parent[LC_PATH_MAX], said[32] = "";
	int dfd = s->tgt.dir_fd, why;

	leaf = s->tgt.is_dir ? m->name : s->tgt.name;
	if ((s->tgt.flags & LC_TGT_TREE) && dfd >= 0) {
		slash = strrchr(m->name, '/');
		snprintf(parent, sizeof(parent), "%.*s", slash != NULL ?
		    (int)(slash - m->name) : 0, m->name);
		leaf = slash != NULL ? slash + 1 : m->name;
		if (lc__sink_dir(s, parent, &f->dir, e) != 0)
			lc_err_clear(e);	/* not there: new */
		dfd = f->dir != NULL ? f->dir->fd : -1;
	}
	why = lc_sink_dry_why(s, m, dfd, leaf, a, said, sizeof(said), &msg);
	return lc_sink_done_now(s, f, why, msg);
}

int
lc__sink_file(struct lc_sink *s, const struct lc_msg_file *m, struct lc_err *e)
{
	int tree = (s->tgt.flags & LC_TGT_TREE) != 0;
	char parent[LC_PATH_MAX];
	const char *leaf, *slash;
	struct lc_sfile *f = NULL;
	struct lc_attrs a;
	int dfd, made, why;
	uint64_t kept;
	int r;

	if (!s->target_set || !s->listening)
		return lc_err_set(e, LC_ERR_PROTO, "FILE before target/LISTEN");
	if (m->id != s->files_total + 1 ||
	    lc_idmap_count(&s->files) >= s->files_max)
		return lc_err_set(e, LC_ERR_PROTO, "FILE: id %u is out of "
		    "order or beyond the %u files in flight", m->id,
		    s->files_max);
	if (!lc_relname_ok(m->name))
		return lc_err_set(e, LC_ERR_DENIED, "refusing unsafe file "
		    "name from peer: %s", m->name);
	if (!tree && ((m->kind != LC_KIND_REG && m->kind != LC_KIND_PIPE) ||
	    strchr(m->name, '/') != NULL))
		return lc_err_set(e, LC_ERR_PROTO, "FILE: a %s was not asked "
		    "for", m->kind != LC_KIND_REG ? "directory or link" :
		    "path");
	if (m->kind == LC_KIND_PIPE && (tree || s->tgt.is_dir ||
	    (s->tgt.flags & LC_TGT_RESUME)))
		return lc_err_set(e, LC_ERR_USAGE, "a pipe (- or -N i) is "
		    "copied to a file, not into the directory %s (name the "
		    "file)", s->tgt.path);
	if (s->tgt.flags & (LC_TGT_STDOUT | LC_TGT_PROGRAM))
		return lc__sink_pipe_file(s, m, e);
	if (tree && !s->tgt.is_dir)
		return lc_err_set(e, LC_ERR_PROTO, "FILE: a tree needs a "
		    "target directory");
	if ((r = lc__sink_note_name(s, m->name)) != 0)
		return lc_err_set(e, -r, "out of memory");
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return -LC_ERR_NOMEM;
	lc__sink_attrs(s, m, &a);
	f->id = m->id;
	f->kind = m->kind;
	f->sink = s;
	f->p.fd = -1;
	f->seed_fd = -1;
	if (s->tgt.flags & LC_TGT_DRYRUN)
		return lc_sink_dry(s, f, m, &a, e);
	dfd = s->tgt.dir_fd;
	leaf = s->tgt.is_dir ? m->name : s->tgt.name;
	if (tree) {
		lc__sink_dirs_close(s, m);
		slash = strrchr(m->name, '/');
		snprintf(parent, sizeof(parent), "%.*s", slash != NULL ?
		    (int)(slash - m->name) : 0, m->name);
		leaf = slash != NULL ? slash + 1 : m->name;
		if ((r = lc__sink_dir(s, parent, &f->dir, e)) != 0)
			goto out;
		dfd = f->dir->fd;
	}
	switch (m->kind) {
	case LC_KIND_DIR:
		if ((r = lc_tree_mkdir(&s->tgt, dfd, leaf, m->name, &made,
		    e)) != 0)
			goto out;
		if ((r = lc__sink_note_dir(s, m, made)) != 0)
			goto out;
		return lc_sink_done_now(s, f, 0, NULL);
	case LC_KIND_SYMLINK:
		if ((r = lc_tree_symlink(&s->tgt, dfd, leaf, m->name, m->link,
		    &a, e)) != 0)
			goto out;
		return lc_sink_done_now(s, f, 0, NULL);
	default:
		break;
	}
	if (s->tgt.is_dir && (why = lc_tree_skip(&s->tgt, dfd, leaf, m->size,
	    m->mtime_sec)) != 0) {
		char said[32] = "";
		unsigned set;

		/* -p, --owner: skipped for its data, not for its attributes */
		if (why == LC_SKIP_UPTODATE) {
			if ((r = lc_tree_skip_attrs(&s->tgt, dfd, leaf, m->name,
			    &a, &set, e)) != 0)
				goto out;
			lc_skip_set_put(set, said, sizeof(said));
		}
		return lc_sink_done_now(s, f, why, said);
	}
	r = tree ? lc_part_init_at(&s->tgt, dfd, m->name, leaf, m->size,
	    m->mode, &f->p, e) : lc_part_init(&s->tgt, m->name, m->size,
	    m->mode, &f->p, e);
	if (r != 0)
		goto out;
	f->p.mtime_sec = m->mtime_sec;
	f->p.mtime_nsec = m->mtime_nsec;
	f->p.chown = a.chown;
	f->p.uid = a.uid;
	f->p.gid = a.gid;
	if ((r = lc_part_open(&s->tgt, &f->p, &kept, e)) != 0)
		goto out;
	if ((r = lc__sink_space(s, f, f->p.size - kept, e)) != 0) {
		/* refused before any data: the part file just made goes */
		if (kept == 0 && !f->p.direct && f->p.tmp[0] != '\0' &&
		    f->p.fd >= 0)
			(void)unlinkat(f->p.dfd, f->p.tmp, 0);
		goto out;
	}
	if (s->csum != LC_CSUM_NONE &&
	    (f->csum = lc_csum_new((int)s->csum)) == NULL) {
		r = -LC_ERR_NOMEM;
		goto out;
	}
	if (kept > 0 && (r = lc__sink_resume_prepare(s, f, &kept, s->block,
	    LC_PREFIX_MAX_CHUNKS, LC_PREFIX_HASH_LEN, e)) != 0)
		goto out;
	if (kept == 0 && (r = lc__sink_delta_prepare(s, f, &kept, e)) != 0)
		goto out;
	if ((r = lc__sink_table_put(s, f)) != 0) {
		r = lc_err_set(e, -r, "FILE: id %u is a duplicate or out of "
		    "order", f->id);
		f->p.tmp[0] = '\0';
		goto out;
	}
	if (kept > 0)
		return lc__sink_resume_start(s, f);
	return lc__sink_start_file(s, f, e);	/* f is in the table now */
 out:
	if (lc_sink_file_error_ok(s, r)) {
		/* this one is reported and left out; the tree goes on */
		lc_part_close(&f->p);
		lc_wfile_free(f->wf);
		f->wf = NULL;
		lc_csum_free(f->csum);
		f->csum = NULL;
		r = lc_sink_done_now(s, f, LC_SKIP_FAILED, e->msg);
		lc_err_clear(e);
		return r;
	}
	lc__sink_sfile_free(f);
	return r;
}

/*
 * FILE_ABORT: the source cannot send a file it listed (it could not open
 * it after all).  Nothing of it was sent: drop it (its part file is
 * removed unless it holds a prefix to resume from) and answer FILE_SKIP.
 * A file with nothing to receive may be finished already: it just
 * completes.
 */
int
lc__sink_file_abort(struct lc_sink *s, const struct lc_msg_file_abort *m,
    struct lc_err *e)
{
	struct lc_sfile *f = lc__sink_table_get(s, m->id);
	int r;

	if (f == NULL || f->kind != LC_KIND_REG)
		return lc_err_set(e, LC_ERR_PROTO, "unexpected FILE_ABORT for "
		    "file %u", m->id);
	if (f->state != LC_SF_RECV || f->written)
		return 0;
	/*
	 * Nothing is written from here on, whatever a source sends for it:
	 * the descriptor is closed below.  A block written or being written
	 * already is the source's protocol error (main never waits for a
	 * write, which on a pipe target could take for ever).
	 */
	if (f->wf != NULL && !lc_wfile_close_unwritten(f->wf,
	    f->nspans > 0 ? f->spans[0].off : f->start))
		return lc_err_set(e, LC_ERR_PROTO, "FILE_ABORT for file %u "
		    "after its data", m->id);
	/* a part file with nothing to resume from is not worth keeping */
	if ((!(s->tgt.flags & LC_TGT_RESUME) || f->start == 0) &&
	    f->p.tmp[0] != '\0' && !f->p.direct && f->p.fd >= 0)
		(void)unlinkat(f->p.dfd, f->p.tmp, 0);
	lc_part_close(&f->p);
	if ((r = lc_sink_answer(s, f, LC_SKIP_FAILED, NULL)) != 0)
		return r;
	return lc__sink_maybe_done(s);
}

int
lc__sink_file_sum(struct lc_sink *s, const struct lc_msg_file_sum *m,
    struct lc_err *e)
{
	struct lc_sfile *f = lc__sink_table_get(s, m->id);

	if (f == NULL || f->csum == NULL || f->expect[0] != '\0')
		return lc_err_set(e, LC_ERR_PROTO, "unexpected FILE_SUM for "
		    "file %u", m->id);
	snprintf(f->expect, sizeof(f->expect), "%s", m->checksum);
	return lc__sink_maybe_finish(s, f);
}

/* See sink_int.h. */
unsigned
lc__sink_drop_parts(struct lc_sink *s, int all)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < lc_idmap_slots(&s->files); i++) {
		struct lc_sfile *f = lc_idmap_slot(&s->files, i);
		struct stat st;

		/* as after FILE_ABORT: an empty new one is not worth keeping */
		if (f == NULL || f->state != LC_SF_RECV ||
		    f->p.tmp[0] == '\0' || f->p.direct || f->p.fd < 0 ||
		    (!all && (f->start != 0 || (f->wf != NULL &&
		    lc_wfile_written(f->wf) != 0) || fstat(f->p.fd, &st) != 0 ||
		    st.st_size != 0)))
			continue;
		/* unlinked, not closed: a receiver may still write through
		   it; tmp cleared so that nothing of ours touches the name
		   again (a later attempt may have made a new one there) */
		(void)unlinkat(f->p.dfd, f->p.tmp, 0);
		f->p.tmp[0] = '\0';
		n++;
	}
	return n;
}

/* See sink_int.h. */
int
lc__sink_nospace(struct lc_sink *s, uint32_t id, const struct lc_err *why,
    struct lc_err *e)
{
	struct lc_sfile *f = lc__sink_table_get(s, id);
	char rel[LC_PATH_MAX], where[LC_PATH_MAX], size[32];
	int keep = (s->tgt.flags & LC_TGT_RESUME) != 0;
	struct stat st;
	unsigned others;

	if (f == NULL || f->kind != LC_KIND_REG || f->p.direct ||
	    f->p.tmp[0] == '\0' || f->p.fd < 0 || fstat(f->p.fd, &st) != 0)
		return lc_err_set(e, LC_ERR_NOSPACE, "%s", why->msg);
	/* relative to the target directory (a file target: its directory) */
	snprintf(rel, sizeof(rel), "%s%s%s", f->dir != NULL ? f->dir->rel :
	    "", f->dir != NULL && f->dir->rel[0] != '\0' ? "/" : "",
	    f->p.tmp);
	if (s->tgt.is_dir)
		snprintf(where, sizeof(where), "%s", s->tgt.path);
	else
		lc_path_dirname(s->tgt.path, where, sizeof(where));
	lc_fmt_bytes(size, sizeof(size), (uint64_t)st.st_size);
	if (keep)
		return lc_err_set(e, LC_ERR_NOSPACE, "%.200s; its partial "
		    "file %.150s (%s) is kept in %.100s: make room and run the "
		    "copy again with -a to resume from it, or remove it",
		    why->msg, rel, size, where);
	(void)unlinkat(f->p.dfd, f->p.tmp, 0);
	f->p.tmp[0] = '\0';
	others = lc__sink_drop_parts(s, 1);
	return lc_err_set(e, LC_ERR_NOSPACE, "%.200s; its partial file "
	    "%.150s (%s) in %.100s was removed%s to give the space back "
	    "(with -a partial files are kept, to resume from)", why->msg, rel,
	    size, where, others > 0 ? ", and the other partial files of "
	    "this copy" : "");
}
