/*
 * Source: resume checks.  FILE_PREFIX (or, for -u's delta, FILE_HASHES
 * in slices) brings the sink's chunk hashes of its partial file; a job thread (struct lc_source_resume's queue) hashes
 * ours and sends back which runs of chunks differ (PREFIX_MATCH).  The
 * job borrows the listed entry (l->checking) until LC_EV_PREFIX_DONE.
 */
#include "source_int.h"

#include "checksum.h"
#include "settings.h"
#include "source.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>


/*
 * One chunk of a resume check: it differs (1) or not (0).  Its bytes go
 * to the file checksum, except a chunk that would start a run past the
 * bound (*cut set): the checksum must cover exactly [0, match).
 */
static int
lc_source_check_chunk(struct lc_listed *l, uint32_t i, int may_cut,
    int *cut, struct lc_err *e)
{
	uint64_t off = (uint64_t)i * l->chunk;
	uint64_t len = l->prefix_len - off < l->chunk ?
	    l->prefix_len - off : l->chunk;
	uint8_t h[LC_PREFIX_HASH_LEN];
	struct lc_csum *save = NULL;
	int differ, r;

	*cut = 0;
	if (may_cut && l->csum != NULL && (save = lc_csum_dup(l->csum)) ==
	    NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	if ((r = lc_prefix_hash(l->fd, off, len, h, l->csum, l->path,
	    e)) != 0) {
		lc_csum_free(save);
		return r;
	}
	/* a FILE_HASHES list has the first 16 bytes of each SHA-256 */
	differ = CRYPTO_memcmp(h, l->prefix + (size_t)i * l->hlen,
	    l->hlen) != 0;
	if (differ && may_cut) {
		lc_csum_free(l->csum);
		l->csum = save;
		save = NULL;
		*cut = 1;
	}
	lc_csum_free(save);
	return differ;
}

int
lc_source_max_runs(uint32_t *out, struct lc_err *e)
{
	uint64_t v;
	int r = lc_setting_uint("MAX_RUNS", 1, LC_PREFIX_MAX_RUNS,
	    LC_PREFIX_MAX_RUNS, &v, e);

	*out = (uint32_t)v;
	return r;
}

void
lc__verdict_free(struct lc_verdict *v)
{
	if (v != NULL)
		free(v->runs);
	free(v);
}

/* Room for more runs (max bounds how many are ever asked for). */
static int
lc_verdict_grow(struct lc_verdict *v)
{
	uint32_t cap = v->cap != 0 ? 2 * v->cap : 64;
	struct lc_chunk_run *p;

	if (cap > LC_PREFIX_MAX_RUNS)
		cap = LC_PREFIX_MAX_RUNS;
	if (cap <= v->cap || (p = realloc(v->runs, (size_t)cap *
	    sizeof(*p))) == NULL)
		return -1;
	v->runs = p;
	v->cap = cap;
	return 0;
}

/* PREFIX_MATCH from a verdict, in the source's one message struct. */
static int
lc_source_put_match(struct lc_source *s, uint32_t id,
    const struct lc_verdict *v)
{
	struct lc_msg_prefix_match *m = s->resume.msg;

	if (m == NULL && (m = s->resume.msg = malloc(sizeof(*m))) == NULL)
		return -LC_ERR_NOMEM;
	m->id = id;
	m->match = v->match;
	m->n = v->n;
	if (v->n > 0)
		memcpy(m->runs, v->runs, (size_t)v->n * sizeof(*v->runs));
	return lc_msg_put_prefix_match(s->port.out, m);
}

/*
 * Resume check (job thread): compare the sink's chunk hashes of its
 * partial file with ours.  Runs of differing chunks are sent again; past
 * LC_PREFIX_MAX_RUNS of them the partial file is cut at the next one.
 * The file checksum (-e) is fed our bytes up to the cut.
 */
static void
lc_source_prefix_job(void *arg)
{
	struct lc_listed *l = arg;
	struct lc_source *s = l->src;
	struct lc_verdict *v = l->verdict;
	uint32_t max;
	int differ, prev = 0, cut;
	struct lc_err e;

	lc_err_clear(&e);
	if (lc_source_max_runs(&max, &e) != 0) {
		lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
		return;
	}
	if (s->csum != LC_CSUM_NONE && (l->csum = lc_csum_new((int)s->csum)) ==
	    NULL) {
		lc_err_set(&e, LC_ERR_NOMEM, "out of memory");
		lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
		return;
	}
	v->match = l->prefix_len;
	for (uint32_t i = 0; i < l->nchunks; i++) {
		if (lc_role_canceled(&s->port))
			return;
		differ = lc_source_check_chunk(l, i, !prev && v->n == max,
		    &cut, &e);
		if (differ < 0) {
			lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
			return;
		}
		if (cut) {
			v->match = (uint64_t)i * l->chunk;
			break;
		}
		if (differ && prev) {
			v->runs[v->n - 1].count++;
		} else if (differ) {
			if (v->n == v->cap && lc_verdict_grow(v) != 0) {
				lc_err_set(&e, LC_ERR_NOMEM, "out of memory");
				lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
				return;
			}
			v->runs[v->n++] = (struct lc_chunk_run){ i, 1 };
		}
		prev = differ;
	}
	l->csum_upto = l->csum != NULL ? v->match : 0;
	lc_role_post(&s->port, LC_EV_PREFIX_DONE, l->id, 0, NULL);
}

int
lc__source_prefix(struct lc_source *s, const struct lc_msg_file_prefix *m,
    struct lc_err *e)
{
	struct lc_listed *l = lc__source_listed(s, m->id, NULL);
	size_t n = (size_t)m->n * LC_PREFIX_HASH_LEN;
	int r;

	if (l == NULL || l->verdict != NULL || l->pipe)
		return lc_err_set(e, LC_ERR_PROTO, "FILE_PREFIX for unknown "
		    "file %u", m->id);
	if (m->length > l->size)
		return lc_err_set(e, LC_ERR_PROTO, "FILE_PREFIX of %llu bytes "
		    "for %s of %llu", (unsigned long long)m->length, l->path,
		    (unsigned long long)l->size);
	if ((l->verdict = calloc(1, sizeof(*l->verdict))) == NULL)
		return -LC_ERR_NOMEM;
	if (lc__source_open(s, l, e) != 0) {
		/* nothing matches; FILE_READY will abort it */
		if (l->failed == NULL && (l->failed = strdup(e->msg)) == NULL)
			return -LC_ERR_NOMEM;
		lc_err_clear(e);
		return lc_source_put_match(s, m->id, l->verdict);
	}
	if ((l->prefix = malloc(n > 0 ? n : 1)) == NULL)
		return -LC_ERR_NOMEM;
	memcpy(l->prefix, m->hashes, n);
	l->prefix_len = m->length;
	l->chunk = m->chunk;
	l->nchunks = m->n;
	l->hlen = LC_PREFIX_HASH_LEN;
	if ((r = lc_jobq_push(s->resume.jobs, lc_source_prefix_job, l)) != 0)
		return r;
	l->checking = 1;	/* until LC_EV_PREFIX_DONE: l is the job's */
	return 0;
}

void
lc__source_hashes_release(struct lc_listed *l)
{
	if (l->hash_mem == 0)
		return;
	l->src->resume.hash_mem -= l->hash_mem;
	l->hash_mem = 0;
	free(l->prefix);
	l->prefix = NULL;
}

/*
 * The first slice of a list: room for all of it, counted against the
 * bound the sink keeps too (so an honest sink never meets the refusal).
 */
static int
lc_source_hashes_open(struct lc_source *s, struct lc_listed *l,
    const struct lc_msg_file_hashes *m, struct lc_err *e)
{
	size_t bytes = (size_t)m->total * LC_HASHES_HASH_LEN;

	if (m->length > l->size)
		return lc_err_set(e, LC_ERR_PROTO, "FILE_HASHES of %llu bytes "
		    "for %s of %llu", (unsigned long long)m->length, l->path,
		    (unsigned long long)l->size);
	if (s->resume.hash_mem + bytes > LC_DELTA_MEM_MAX)
		return lc_err_set(e, LC_ERR_PROTO, "FILE_HASHES for %s: more "
		    "than %u MiB of hash lists at once", l->path,
		    LC_DELTA_MEM_MAX >> 20);
	if ((l->verdict = calloc(1, sizeof(*l->verdict))) == NULL ||
	    (l->prefix = malloc(bytes)) == NULL)
		return -LC_ERR_NOMEM;
	l->hash_mem = bytes;
	s->resume.hash_mem += bytes;
	l->prefix_len = m->length;
	l->chunk = m->chunk;
	l->nchunks = m->total;
	l->hlen = LC_HASHES_HASH_LEN;
	l->got = 0;
	return 0;
}

int
lc__source_hashes(struct lc_source *s, const struct lc_msg_file_hashes *m,
    struct lc_err *e)
{
	struct lc_listed *l = lc__source_listed(s, m->id, NULL);
	int r;

	if (l == NULL || l->pipe || l->checking || (m->first == 0 ?
	    l->verdict != NULL : (l->hash_mem == 0 || m->first != l->got ||
	    m->length != l->prefix_len || m->chunk != l->chunk ||
	    m->total != l->nchunks)))
		return lc_err_set(e, LC_ERR_PROTO, "unexpected FILE_HASHES "
		    "for file %u (%u hashes from %u)", m->id, m->n, m->first);
	if (m->first == 0 && (r = lc_source_hashes_open(s, l, m, e)) != 0)
		return r;
	/* the decoder checked first + n <= total: inside the list */
	memcpy(l->prefix + (size_t)m->first * LC_HASHES_HASH_LEN, m->hashes,
	    (size_t)m->n * LC_HASHES_HASH_LEN);
	l->got += m->n;
	if (l->got < l->nchunks)
		return 0;
	if (lc__source_open(s, l, e) != 0) {
		/* nothing matches; FILE_READY will abort it */
		lc__source_hashes_release(l);
		if (l->failed == NULL && (l->failed = strdup(e->msg)) == NULL)
			return -LC_ERR_NOMEM;
		lc_err_clear(e);
		return lc_source_put_match(s, m->id, l->verdict);
	}
	if ((r = lc_jobq_push(s->resume.jobs, lc_source_prefix_job, l)) != 0)
		return r;
	l->checking = 1;	/* until LC_EV_PREFIX_DONE: l is the job's */
	return 0;
}

int
lc__source_prefix_done(struct lc_source *s, const struct lc_event *ev)
{
	struct lc_listed *l;

	if ((l = lc__source_listed(s, ev->a, NULL)) == NULL ||
	    l->verdict == NULL)
		return 0;
	l->checking = 0;
	lc__source_hashes_release(l);	/* answered: out of the bound */
	return lc_source_put_match(s, l->id, l->verdict);
}
