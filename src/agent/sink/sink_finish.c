/*
 * The sink's finishing batches: complete files (every byte written, the
 * source's checksum known) wait in struct lc_sink_fin until the finish
 * job is free; it takes them (at most an eighth of the window at once, in
 * the order they completed), makes them durable and renames
 * them into place, posts LC_EV_FILE_DONE for each and LC_EV_BATCH_DONE,
 * and main answers FILE_DONE and starts the next batch.  Main thread,
 * except lc_sink_finish_job (the job thread), which owns its batch's
 * files until it posts.
 */
#include "sink_int.h"

#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Complete files finished together (the finish job's argument). */
struct lc_fin_batch {
	struct lc_sink *sink;
	size_t n;
	struct lc_sfile *v[];
};

/*
 * Everything written (and the source's checksum known): finish a batch of
 * files, what completed while the last batch was finishing (up to the
 * cap).  Durable
 * by default, in the order that keeps a crash from leaving a half file
 * under a final name, but with one pass of each step over the batch:
 * checksums, modes and times and writeback started for all; then an fsync
 * each (the writes are on their way, and the journal commits once for
 * many); renames; then each directory fsynced once, not once a file.
 */
static void
lc_sink_finish_job(void *arg)
{
	struct lc_fin_batch *b = arg;
	struct lc_sink *s = b->sink;
	int fsync_on = !(s->tgt.flags & LC_TGT_NO_FSYNC);
	char sum[LC_CSUM_TEXT_MAX];
	struct lc_sfile *f;
	struct lc_err e;
	int syncfs_fd;
	size_t i, j;

	lc_err_clear(&e);
	for (i = 0; i < b->n; i++) {
		f = b->v[i];
		if (f->csum != NULL && f->nspans > 0 && lc_csum_fd(f->csum,
		    f->p.fd, f->p.size, f->p.final, &e) != 0)
			goto fail;
		if (f->csum != NULL) {
			lc_csum_text(f->csum, sum);
			if (strcmp(sum, f->expect) != 0) {
				lc_err_set(&e, LC_ERR_CHECKSUM, "%s: checksum "
				    "mismatch: the source has %s, what was "
				    "written has %s; not renamed into place",
				    f->p.final, f->expect, sum);
				goto fail;
			}
		}
		if (lc_part_prepare(&s->tgt, &f->p, 0, &e) != 0)
			goto fail;
		if (fsync_on && b->n > 1 && !f->p.direct)
			(void)sync_file_range(f->p.fd, 0, 0,
			    SYNC_FILE_RANGE_WRITE);
	}
	/*
	 * Many files: one syncfs(2) makes all of them durable at the cost of
	 * one journal commit and one device flush, where an fsync each
	 * pays a flush each (on this kind of disk most of a small file's
	 * cost).  A few: fsync each, which touches nothing else.
	 */
	syncfs_fd = -1;
	for (i = 0; fsync_on && b->n >= LC_SINK_SYNCFS_MIN && i < b->n; i++)
		if (!b->v[i]->p.direct) {
			syncfs_fd = b->v[i]->p.fd;
			break;
		}
	if (syncfs_fd >= 0 && syncfs(syncfs_fd) != 0) {
		lc_err_sys(&e, LC_ERR_IO, errno, "sync the file system of %s",
		    s->tgt.path);
		goto fail;
	}
	for (i = 0; fsync_on && syncfs_fd < 0 && i < b->n; i++) {
		f = b->v[i];
		if (!f->p.direct && fsync(f->p.fd) != 0) {
			lc_err_sys(&e, LC_ERR_IO, errno, "fsync %s",
			    f->p.final);
			goto fail;
		}
	}
	for (i = 0; i < b->n; i++)
		if (lc_part_commit(&s->tgt, &b->v[i]->p, &e) != 0)
			goto fail;
	/* a target program: its stdin is closed now */
	if ((s->tgt.flags & LC_TGT_PROGRAM) && lc__sink_pipe_wait(s, &e) != 0)
		goto fail;
	if (syncfs_fd >= 0) {	/* the renames: one more */
		if (syncfs(b->v[0]->p.dfd) != 0) {
			lc_err_sys(&e, LC_ERR_IO, errno, "sync the file system "
			    "of %s", s->tgt.path);
			goto fail;
		}
		fsync_on = 0;	/* the directories are done too */
	}
	for (i = 0; fsync_on && i < b->n; i++) {
		f = b->v[i];
		for (j = 0; j < i && b->v[j]->p.dfd != f->p.dfd; j++)
			;
		if (f->p.direct || j < i)
			continue;	/* that directory is done */
		if (fsync(f->p.dfd) != 0 && errno != EINVAL) {
			lc_err_sys(&e, LC_ERR_IO, errno, "fsync directory of "
			    "%s", f->p.final);
			goto fail;
		}
	}
	for (i = 0; i < b->n; i++) {
		f = b->v[i];
		lc_log_debug("%s complete", f->p.final);
		lc_role_post_text(&s->port, LC_EV_FILE_DONE, f->id, f->p.size,
		    f->csum != NULL ? f->expect : "");
	}
	lc_role_post(&s->port, LC_EV_BATCH_DONE, 0, 0, NULL);
	return;
 fail:
	lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
}

/*
 * The most files one batch takes: an eighth of the window, so that when a
 * window's worth completes at once (small files over a long path) its
 * FILE_DONEs, and with them the controller's credit, which moves in steps
 * of an eighth, flow while the rest is finished, rather than all at the
 * end of one long batch.  At least LC_SINK_FIN_BATCH_MIN, so that a small
 * window does not pay a syncfs(2) per few files.
 */
static size_t
lc_sink_fin_cap(const struct lc_sink *s)
{
	size_t cap = s->files_max / 8;

	return cap < LC_SINK_FIN_BATCH_MIN ? LC_SINK_FIN_BATCH_MIN : cap;
}

/* Main thread: hand the oldest waiting complete files to the finish job. */
static int
lc_sink_fin_kick(struct lc_sink *s)
{
	struct lc_fin_batch *b;
	size_t n = s->fin.n;

	if (s->fin.busy || n == 0)
		return 0;
	if (n > lc_sink_fin_cap(s))
		n = lc_sink_fin_cap(s);
	if ((b = malloc(sizeof(*b) + n * sizeof(b->v[0]))) == NULL)
		return -LC_ERR_NOMEM;
	b->sink = s;
	b->n = n;
	memcpy(b->v, s->fin.wait, n * sizeof(b->v[0]));
	memmove(s->fin.wait, s->fin.wait + n,
	    (s->fin.n - n) * sizeof(b->v[0]));
	s->fin.n -= n;
	s->fin.busy = 1;
	s->fin.batch = b;	/* main frees it: a dropped job would leak it */
	return lc_jobq_push(s->jobs, lc_sink_finish_job, b);
}

/* Main thread: queue the finish once both conditions hold. */
int
lc__sink_maybe_finish(struct lc_sink *s, struct lc_sfile *f)
{
	if (f->state != LC_SF_RECV || !f->written ||
	    (f->csum != NULL && f->expect[0] == '\0'))
		return 0;
	f->state = LC_SF_FINISH;
	if (s->fin.n == s->fin.cap) {
		size_t ncap = s->fin.cap ? 2 * s->fin.cap : 64;
		struct lc_sfile **n = realloc(s->fin.wait, ncap * sizeof(*n));
		if (n == NULL)
			return -LC_ERR_NOMEM;
		s->fin.wait = n;
		s->fin.cap = ncap;
	}
	s->fin.wait[s->fin.n++] = f;
	return lc_sink_fin_kick(s);
}

/* See sink_int.h. */
int
lc__sink_file_finished(struct lc_sink *s, struct lc_sfile *f,
    const struct lc_event *ev)
{
	struct lc_msg_file_done fd;
	int r;

	f->state = LC_SF_DONE;
	s->files_done++;
	memset(&fd, 0, sizeof(fd));
	fd.id = ev->a;
	fd.bytes = ev->b;
	snprintf(fd.checksum, sizeof(fd.checksum), "%s", ev->text);
	/* what it replaced, for the controller's "updated" count */
	fd.has_flags = s->port.set.done_flags != 0;
	if (fd.has_flags && f->p.replaces)
		fd.flags = LC_DONE_REPLACED;
	if ((r = lc_msg_put_file_done(s->port.out, &fd)) != 0)
		return r;
	lc__sink_retire(s, f);
	return 0;
}

/* See sink_int.h. */
int
lc__sink_batch_done(struct lc_sink *s)
{
	s->fin.busy = 0;
	free(s->fin.batch);
	s->fin.batch = NULL;
	return lc_sink_fin_kick(s);
}
