/*
 * The sink's resume (-a, LC_TGT_RESUME): a partial file's chunks are
 * hashed by the prefix job (FILE_PREFIX), the source says which match
 * (PREFIX_MATCH), and the seed job feeds the kept prefix to the checksum
 * before new bytes arrive.  Main thread, except the two jobs (the job
 * thread), which have the file until they post.
 */
#include "sink_int.h"

#include "log.h"
#include "parse.h"
#include "settings.h"
#include "sink.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Resume: hash the partial file in chunks for the source to compare. */
static void
lc_sink_prefix_job(void *arg)
{
	struct lc_sfile *f = arg;
	struct lc_sink *s = f->sink;
	struct lc_err e;

	lc_err_clear(&e);
	if (f->seed_fd >= 0 && lc__sink_delta_seed(f, &e) != 0) {
		if (e.code != LC_ERR_CANCELED)
			lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
		return;
	}
	for (uint32_t i = 0; i < f->nchunks; i++) {
		uint64_t off = (uint64_t)i * f->chunk;
		uint64_t len = f->prefix_len - off < f->chunk ?
		    f->prefix_len - off : f->chunk;
		uint8_t h[LC_PREFIX_HASH_LEN];
		if (lc_role_canceled(&s->port))
			return;
		if (lc_prefix_hash(f->p.fd, off, len, h, NULL, f->p.final,
		    &e) != 0) {
			lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
			return;
		}
		/* a FILE_HASHES list keeps the first 16 bytes */
		memcpy(f->prefix + (size_t)i * f->hlen, h, f->hlen);
	}
	lc_role_post(&s->port, LC_EV_PREFIX_DONE, f->id, 0, NULL);
}

/*
 * Resume: the checksum of the kept prefix, before new bytes arrive.  With
 * chunks to rewrite below start the writer cannot feed it in order: the
 * finish job hashes the whole file instead.
 */
static void
lc_sink_seed_job(void *arg)
{
	struct lc_sfile *f = arg;
	struct lc_sink *s = f->sink;
	struct lc_err e;

	lc_err_clear(&e);
	if (f->csum != NULL && f->start > 0 && f->nspans == 0 &&
	    lc_csum_fd(f->csum, f->p.fd, f->start, f->p.final, &e) != 0) {
		lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
		return;
	}
	lc_role_post(&s->port, LC_EV_RESUME_READY, f->id, 0, NULL);
}

int
lc__sink_prefix_match(struct lc_sink *s, const struct lc_msg_prefix_match *m,
    struct lc_err *e)
{
	struct lc_sfile *f = lc__sink_table_get(s, m->id);
	uint64_t again = 0;
	char a[32], b[32];

	if (f == NULL || f->state != LC_SF_MATCH ||
	    lc_prefix_match_check(m, f->prefix_len, f->chunk) != 0)
		return lc_err_set(e, LC_ERR_PROTO, "unexpected PREFIX_MATCH for "
		    "file %u (%llu bytes, %u runs)", m->id,
		    (unsigned long long)m->match, m->n);
	if (m->n > 0) {
		if ((f->spans = calloc(m->n, sizeof(*f->spans))) == NULL)
			return -LC_ERR_NOMEM;
		f->nspans = m->n;
		again = lc_prefix_match_spans(m, f->prefix_len, f->chunk,
		    f->spans);
	}
	if (f->delta)
		lc__sink_delta_log(f, m->match, again);
	else if (m->match < f->prefix_len || m->n > 0)
		lc_log_warn("%s: %s of the partial file differ from the "
		    "source and are copied again; %s of it are kept",
		    f->p.final, lc_fmt_bytes(a, sizeof(a), again +
		    f->prefix_len - m->match), lc_fmt_bytes(b, sizeof(b),
		    m->match - again));
	else
		lc_log_verbose("%s: resuming after %s", f->p.final,
		    lc_fmt_bytes(a, sizeof(a), m->match));
	if (m->match < f->prefix_len && ftruncate(f->p.fd,
	    (off_t)m->match) != 0)
		return lc_err_sys(e, LC_ERR_IO, errno, "truncate %s",
		    f->p.final);
	f->start = m->match;
	f->state = LC_SF_SEED;
	return lc_jobq_push(s->jobs, lc_sink_seed_job, f);
}

/* See sink_int.h. */
int
lc__sink_resume_prepare(struct lc_sink *s, struct lc_sfile *f,
    uint64_t *kept, uint32_t base, uint32_t max_chunks, uint32_t hlen,
    struct lc_err *e)
{
	(void)s;
	f->hlen = hlen;
	f->chunk = lc_prefix_chunk(*kept, base, max_chunks);
	f->nchunks = f->chunk != 0 ?
	    (uint32_t)((*kept + f->chunk - 1) / f->chunk) : 0;
	if (f->chunk == 0 || (f->prefix = malloc((size_t)f->nchunks * hlen +
	    1)) == NULL) {
		*kept = 0;	/* cannot compare: start over */
		if (f->seed_fd >= 0) {	/* nothing copied yet */
			close(f->seed_fd);
			f->seed_fd = -1;
		} else if (ftruncate(f->p.fd, 0) != 0)
			return lc_err_sys(e, LC_ERR_IO, errno, "truncate %s",
			    f->p.tmp);
	}
	f->prefix_len = *kept;
	return 0;
}

/* See sink_int.h. */
int
lc__sink_resume_start(struct lc_sink *s, struct lc_sfile *f)
{
	if (!f->delta)
		lc_log_verbose("%s: checking the %llu bytes already there",
		    f->p.final, (unsigned long long)f->prefix_len);
	f->state = LC_SF_PREFIX;
	return lc_jobq_push(s->jobs, lc_sink_prefix_job, f);
}

int
lc_sink_hash_frame(uint32_t *out, struct lc_err *e)
{
	uint64_t v;
	int r = lc_setting_uint("HASH_FRAME", 1, LC_HASHES_PER_FRAME,
	    LC_HASHES_PER_FRAME, &v, e);

	*out = (uint32_t)v;
	return r;
}

/*
 * A delta's list as FILE_HASHES, in order, each frame a slice.  They go
 * to the output buffer at once: the list is already held (and bounded,
 * sink_delta.c), and the source needs all of it before it answers.
 */
static int
lc_sink_send_hashes(struct lc_sink *s, struct lc_sfile *f)
{
	struct lc_msg_file_hashes fh;
	uint32_t per, frames = 0;
	struct lc_err e;
	int r = 0;

	lc_err_clear(&e);
	if (lc_sink_hash_frame(&per, &e) != 0)
		per = LC_HASHES_PER_FRAME; /* read at startup: not reached */
	memset(&fh, 0, sizeof(fh));
	fh.id = f->id;
	fh.length = f->prefix_len;
	fh.chunk = f->chunk;
	fh.total = f->nchunks;
	for (uint32_t i = 0; r == 0 && i < f->nchunks; i += fh.n) {
		fh.first = i;
		fh.n = f->nchunks - i < per ? f->nchunks - i : per;
		fh.hashes = f->prefix + (size_t)i * LC_HASHES_HASH_LEN;
		r = lc_msg_put_file_hashes(s->port.out, &fh);
		frames++;
	}
	lc_log_debug("%s: %u hashes of %u-byte chunks in %u FILE_HASHES "
		     "frames",
	    f->p.final, f->nchunks, f->chunk, frames);
	return r;
}

/* See sink_int.h. */
int
lc__sink_send_prefix(struct lc_sink *s, struct lc_sfile *f)
{
	struct lc_msg_file_prefix fp;

	f->state = LC_SF_MATCH;
	if (f->hlen == LC_HASHES_HASH_LEN)
		return lc_sink_send_hashes(s, f);
	memset(&fp, 0, sizeof(fp));
	fp.id = f->id;
	fp.length = f->prefix_len;
	fp.chunk = f->chunk;
	fp.n = f->nchunks;
	fp.hashes = f->prefix;
	return lc_msg_put_file_prefix(s->port.out, &fp);
}
