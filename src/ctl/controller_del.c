/*
 * --delete and -n at the controller.  After a complete copy (every file
 * done, SRC_DONE and SINK_DONE in, no file failed), DEL_SCAN asks the
 * sink, for each copied root, what under it the source did not list;
 * each DEL_CAND is checked (under the root asked, in order) and kept.
 * Then, with every scan complete: entries an --exclude protects, and the
 * directories holding one, stay (not with --delete-excluded, which
 * protects nothing); the rest is counted against
 * --max-delete and either listed (-n) or deleted, deepest first, one
 * DELETE each, at most LC_DEL_WINDOW unanswered, every DELETED checked
 * against the one asked.  Nothing is deleted after a failure, a partial
 * copy or an incomplete scan, and nothing more is asked once the sink
 * has said something it may not.
 * The candidates are held here (memory grows with what is deleted), and
 * an 8-byte hash of every listed name (3.6 MB more at 100,000 names, the
 * table growing): a sink that names a listed name, a name twice, or an
 * entry in a directory nobody named is refused (exit 7) before anything
 * is deleted.
 */
#include "controller_int.h"
#include "clock.h"
#include "log.h"
#include "path.h"

#include "settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* Candidates held at most, and their names' bytes (a sink's list is
   untrusted: it must not size the controller's memory past these);
   LANECP_DEL_MAX may only lower the first. */
#define LC_DEL_MAX (1u << 24)
#define LC_DEL_BYTES_MAX (256ull << 20)
/* DELETEs unanswered at most: enough to keep a long link busy (a round
   trip per 256 deletions), few enough that a sink caught lying gets no
   more than this after its lie */
#define LC_DEL_WINDOW 256u

int
lc__ctl_del_max(uint32_t *out, struct lc_err *e)
{
	uint64_t v;
	int r;

	r = lc_setting_uint("DEL_MAX", 1, LC_DEL_MAX, LC_DEL_MAX, &v, e);
	*out = (uint32_t)v;
	return r;
}

/*
 * A keyed hash of a name and whether it is a directory: FNV-1a from a
 * random seed, then splitmix64's finaliser.  Not a MAC: a source that
 * could make two names collide only gets an honest sink's candidate
 * refused.  Never 0 (an empty slot).
 */
static uint64_t
lc_del_hash(const struct lc_ctl_del *d, const char *name, size_t len,
    int is_dir)
{
	uint64_t h = d->seed ^ 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)name[i];
		h *= 0x100000001b3ull;
	}
	h ^= is_dir ? 0x9e3779b97f4a7c15ull : 0;
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 31;
	return h != 0 ? h : 1;
}

static int
lc_del_seen(const struct lc_ctl_del *d, uint64_t h)
{
	size_t mask = d->seen_cap - 1;

	if (d->seen_cap == 0)
		return 0;
	for (size_t i = h & mask; d->seen[i] != 0; i = (i + 1) & mask)
		if (d->seen[i] == h)
			return 1;
	return 0;
}

static int
lc_del_remember(struct lc_ctl_del *d, uint64_t h)
{
	size_t mask, ncap, i;
	uint64_t *ns;

	if ((d->seen_n + 1) * 4 > d->seen_cap * 3) {
		ncap = d->seen_cap ? 2 * d->seen_cap : 1024;
		if ((ns = calloc(ncap, sizeof(*ns))) == NULL)
			return -LC_ERR_NOMEM;
		for (size_t k = 0; k < d->seen_cap; k++) {
			if (d->seen[k] == 0)
				continue;
			for (i = d->seen[k] & (ncap - 1); ns[i] != 0;
			     i = (i + 1) & (ncap - 1))
				;
			ns[i] = d->seen[k];
		}
		free(d->seen);
		d->seen = ns;
		d->seen_cap = ncap;
	}
	mask = d->seen_cap - 1;
	for (i = h & mask; d->seen[i] != 0; i = (i + 1) & mask)
		if (d->seen[i] == h)
			return 0;
	d->seen[i] = h;
	d->seen_n++;
	return 0;
}

/*
 * The directory a candidate is in: listed or named before it, of either
 * kind (with -O a name listed as a file may be a directory at the
 * target: skipped, not replaced, and the scan goes into it).
 */
static int
lc_del_parent_seen(const struct lc_ctl_del *d, const char *name, size_t len)
{
	return lc_del_seen(d, lc_del_hash(d, name, len, 1)) ||
	    lc_del_seen(d, lc_del_hash(d, name, len, 0));
}

int
lc__ctl_del_listed(struct lc_ctl *c, const char *name, uint8_t kind)
{
	struct lc_ctl_del *d = &c->del;

	if (!c->o->delete_extra)
		return 0;
	if (d->seed == 0 &&
	    getrandom(&d->seed, sizeof(d->seed), 0) != sizeof(d->seed))
		d->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	return lc_del_remember(d,
	    lc_del_hash(d, name, strlen(name), kind == LC_KIND_DIR));
}

static const char *
lc_del_slash(uint8_t kind)
{
	return kind == LC_KIND_DIR ? "/" : "";
}

/* The roots to scan: each recursive request's directory, once. */
static int
lc_del_roots(struct lc_ctl *c, struct lc_err *e)
{
	struct lc_ctl_del *d = &c->del;
	struct lc_msg_del_scan m;
	size_t i, j;
	int r;

	for (i = 0; i < c->o->nsources; i++) {
		const struct lc_ctl_req *q = &c->chk.reqs[i];
		const char *root = (q->flags & LC_ADD_CONTENTS) ? "" : q->name;
		int seen = 0;
		if (!(q->flags & LC_ADD_CONTENTS) && !q->root_dir)
			continue; /* a file: nothing below it */
		for (j = 0; j < d->nroots; j++)
			if (strcmp(d->roots[j], root) == 0 ||
			    d->roots[j][0] == '\0')
				seen = 1;
		if (seen)
			continue;
		if (root[0] == '\0') {
			/* the whole target covers the rest */
			for (j = 0; j < d->nroots; j++)
				free(d->roots[j]);
			d->nroots = 0;
		}
		if ((d->roots[d->nroots] = strdup(root)) == NULL)
			return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
		d->nroots++;
	}
	for (i = 0; i < d->nroots; i++) {
		memset(&m, 0, sizeof(m));
		snprintf(m.root, sizeof(m.root), "%s", d->roots[i]);
		if ((r = lc_msg_put_del_scan(&c->dst_ep.out, &m)) != 0)
			return lc_err_set(e, -r, "control output");
	}
	return 0;
}

/*
 * Called once the copy is over: 1 while deletions keep the run going,
 * 0 when there is nothing (more) to do.
 */
int
lc__ctl_del_step(struct lc_ctl *c, struct lc_err *e)
{
	struct lc_ctl_del *d = &c->del;
	int r;

	if (!c->o->delete_extra || d->state == LC_DEL_DONE)
		return 0;
	if (d->state == LC_DEL_NONE) {
		if (c->res->nfailed != 0) {
			lc_log_warn("--delete: nothing deleted: the copy was "
				    "not complete (%u failed)",
			    c->res->nfailed);
			d->state = LC_DEL_DONE;
			return 0;
		}
		if ((r = lc__ctl_del_max(&d->max, e)) != 0)
			return r;
		if ((d->roots = calloc(c->o->nsources + 1,
			 sizeof(*d->roots))) == NULL)
			return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
		d->state = LC_DEL_SCAN;
		if ((r = lc_del_roots(c, e)) != 0)
			return r;
		if (d->nroots == 0) {
			d->state = LC_DEL_DONE;
			return 0;
		}
	}
	return 1;
}

static int
lc_del_under(const char *name, const char *dir)
{
	size_t n = strlen(dir);

	return n == 0 || (strncmp(name, dir, n) == 0 && name[n] == '/');
}

/* DELETEs, deepest first, until LC_DEL_WINDOW are unanswered. */
static int
lc_del_send(struct lc_ctl *c, struct lc_err *e)
{
	struct lc_ctl_del *d = &c->del;
	struct lc_msg_delete m;
	int r;

	while (d->send > 0 && d->asked - d->answered < LC_DEL_WINDOW) {
		const struct lc_del_cand *k = &d->cand[--d->send];
		if (k->keep)
			continue;
		memset(&m, 0, sizeof(m));
		m.kind = k->kind;
		snprintf(m.name, sizeof(m.name), "%s", k->name);
		if ((r = lc_msg_put_delete(&c->dst_ep.out, &m)) != 0)
			return lc_err_set(e, -r, "control output");
		d->asked++;
	}
	return 0;
}

/* Every scan is in: choose, count, list or delete. */
static int
lc_del_decide(struct lc_ctl *c, struct lc_err *e)
{
	struct lc_ctl_del *d = &c->del;
	const char *kept = NULL;
	uint32_t n = 0;
	size_t i;

	/*
	 * Deepest first: the scans named parents before their entries, so
	 * backwards every directory comes after what it holds, and one that
	 * holds a protected entry is kept too.
	 */
	for (i = d->n; i-- > 0;) {
		struct lc_del_cand *k = &d->cand[i];
		if (c->o->filters != NULL && !c->o->delete_excluded &&
		    lc_filters_excluded_path(c->o->filters, k->name,
			k->kind == LC_KIND_DIR))
			k->keep = 1;
		else if (k->kind == LC_KIND_DIR && kept != NULL &&
		    lc_del_under(kept, k->name))
			k->keep = 1;
		if (k->keep)
			kept = k->name;
		else
			n++;
	}
	if (c->o->max_delete_set && n > c->o->max_delete) {
		d->state = LC_DEL_DONE;
		return lc_err_set(e, LC_ERR_PARTIAL,
		    "--max-delete %llu: %u "
		    "entries would be deleted; nothing was deleted",
		    (unsigned long long)c->o->max_delete, n);
	}
	if (c->o->dry_run) {
		d->state = LC_DEL_DONE;
		for (i = d->n; i-- > 0;) {
			if (d->cand[i].keep)
				continue;
			lc__ctl_dry_line(c, "delete", d->cand[i].name,
			    d->cand[i].kind);
			c->res->deleted++;
		}
		return 0;
	}
	d->state = n != 0 ? LC_DEL_DELETING : LC_DEL_DONE;
	d->total = n;
	d->next = d->send = d->n;
	return lc_del_send(c, e);
}

static int
lc_del_cand(struct lc_ctl *c, const struct lc_msg_del_cand *m, struct lc_err *e)
{
	struct lc_ctl_del *d = &c->del;
	const char *slash = strrchr(m->name, '/');
	size_t len = strlen(m->name);
	char shown[LC_PATH_MAX + 8];
	struct lc_del_cand *nc;
	const char *why = NULL;
	uint64_t h;

	lc_printable(m->name, shown, sizeof(shown));
	h = lc_del_hash(d, m->name, len, m->kind == LC_KIND_DIR);
	if (d->state != LC_DEL_SCAN || d->scanned >= d->nroots)
		why = "no scan was asked for";
	else if (!lc_del_under(m->name, d->roots[d->scanned]))
		why = "it is not under the directory scanned";
	else if (lc_del_seen(d, h) ||
	    lc_del_seen(d,
		lc_del_hash(d, m->name, len, m->kind != LC_KIND_DIR)))
		why = "the source listed it, or the scan named it before";
	else if (slash != NULL &&
	    (size_t)(slash - m->name) != strlen(d->roots[d->scanned]) &&
	    !lc_del_parent_seen(d, m->name, (size_t)(slash - m->name)))
		why = "its directory was neither listed nor named before it";
	if (why != NULL) {
		d->state = LC_DEL_DONE;
		return lc_err_set(e, LC_ERR_PROTO,
		    "%s: sink named %s for deletion: %s; nothing was deleted",
		    c->dst_ep.name, shown, why);
	}
	if (d->n >= d->max || d->bytes + len > LC_DEL_BYTES_MAX) {
		d->state = LC_DEL_DONE;
		return lc_err_set(e, LC_ERR_PARTIAL,
		    "--delete: more than %u entries (or %llu MiB of names) "
		    "to delete; nothing was deleted",
		    d->max, (unsigned long long)(LC_DEL_BYTES_MAX >> 20));
	}
	if (lc_del_remember(d, h) != 0)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	if (d->n == d->cap) {
		size_t ncap = d->cap ? 2 * d->cap : 256;
		if ((nc = realloc(d->cand, ncap * sizeof(*nc))) == NULL)
			return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
		d->cand = nc;
		d->cap = ncap;
	}
	nc = &d->cand[d->n];
	nc->kind = m->kind;
	nc->keep = 0;
	if ((nc->name = strdup(m->name)) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	d->n++;
	d->bytes += strlen(m->name) + 1;
	d->this_scan++;
	c->prog.t_progress = lc_now_ms(); /* a long scan is progress */
	return 0;
}

static int
lc_del_scanned(struct lc_ctl *c, const struct lc_msg_del_scanned *m,
    struct lc_err *e)
{
	struct lc_ctl_del *d = &c->del;
	char clean[LC_ERR_MSG_MAX];

	if (d->state != LC_DEL_SCAN || d->scanned >= d->nroots ||
	    m->count != d->this_scan)
		return lc_err_set(e, LC_ERR_PROTO,
		    "%s: unexpected "
		    "DEL_SCANNED",
		    c->dst_ep.name);
	d->scanned++;
	d->this_scan = 0;
	if (m->msg[0] != '\0') {
		lc_printable(m->msg, clean, sizeof(clean));
		d->state = LC_DEL_DONE;
		return lc_err_set(e, LC_ERR_PARTIAL,
		    "--delete: the target "
		    "could not be read, nothing was deleted: %s",
		    clean);
	}
	if (d->scanned < d->nroots)
		return 0;
	return lc_del_decide(c, e);
}

static int
lc_del_deleted(struct lc_ctl *c, const struct lc_msg_deleted *m,
    struct lc_err *e)
{
	struct lc_ctl_del *d = &c->del;
	struct lc_del_cand *k = NULL;
	char where[LC_PATH_MAX + 8];

	/* the next one asked: backwards, the kept ones left out */
	while (d->next > 0 && d->cand[d->next - 1].keep)
		d->next--;
	if (d->next > 0)
		k = &d->cand[d->next - 1];
	if (d->state != LC_DEL_DELETING || k == NULL ||
	    d->answered >= d->asked || k->kind != m->kind ||
	    strcmp(k->name, m->name) != 0) {
		char shown[LC_PATH_MAX + 8];
		lc_printable(m->name, shown, sizeof(shown));
		d->state = LC_DEL_DONE; /* and nothing more is asked */
		return lc_err_set(e, LC_ERR_PROTO,
		    "%s: sink sent DELETED for %s, which was not asked "
		    "(%u deletions of %u asked; no more)",
		    c->dst_ep.name, shown, d->answered, d->total);
	}
	d->next--;
	snprintf(where, sizeof(where), "%s%s", k->name, lc_del_slash(k->kind));
	if (m->msg[0] != '\0') {
		lc__ctl_failed(c, where, (int)k->kind, m->msg);
		c->res->nrefused++;
	} else {
		/* a deletion is named in the -l log even without -v: a
		   nightly log says what the mirror removed */
		lc_log_verbose("deleting %s", where);
		if (lc_log_level() < LC_LOG_VERBOSE)
			lc_log_record("deleting %s", where);
		if (c->res->deleted < LC_RESULT_FAILED)
			snprintf(c->res->deleted_list[c->res->deleted],
			    sizeof(c->res->deleted_list[0]), "%.500s", where);
		c->res->deleted++;
	}
	c->prog.t_progress = lc_now_ms();
	if (++d->answered == d->total) {
		d->state = LC_DEL_DONE;
		return 0;
	}
	return lc_del_send(c, e);
}

int
lc__ctl_del_msg(struct lc_ctl *c, uint8_t type, const union lc_msg_any *m,
    struct lc_err *e)
{
	if (!c->o->delete_extra)
		return lc_err_set(e, LC_ERR_PROTO, "%s: %s without --delete",
		    c->dst_ep.name, lc_msg_name(type));
	switch (type) {
	case LC_MSG_DEL_CAND:
		return lc_del_cand(c, &m->del_cand, e);
	case LC_MSG_DEL_SCANNED:
		return lc_del_scanned(c, &m->del_scanned, e);
	case LC_MSG_DELETED:
		return lc_del_deleted(c, &m->deleted, e);
	default:
		return lc_err_set(e, LC_ERR_PROTO, "%s: unexpected %s",
		    c->dst_ep.name, lc_msg_name(type));
	}
}

void
lc__ctl_dry_line(struct lc_ctl *c, const char *what, const char *name,
    uint8_t kind)
{
	char shown[LC_PATH_MAX + 8], tgt[LC_PATH_MAX + 8],
	    pre[LC_PATH_MAX + 64];

	if (c->o->json)
		return;
	lc_printable(name, shown, sizeof(shown));
	pre[0] = '\0';
	if (c->o->target_name != NULL) {
		/* --also: which target the line is about */
		lc_printable(c->o->target_name, tgt, sizeof(tgt));
		snprintf(pre, sizeof(pre),
		    "target %zu of %zu %s: ", c->o->target_i, c->o->target_n,
		    tgt);
	}
	printf("%s%s %s%s\n", pre, what, shown, lc_del_slash(kind));
	fflush(stdout);
}

void
lc__ctl_del_free(struct lc_ctl *c)
{
	struct lc_ctl_del *d = &c->del;

	for (size_t i = 0; i < d->n; i++)
		free(d->cand[i].name);
	free(d->cand);
	for (size_t i = 0; i < d->nroots; i++)
		free(d->roots[i]);
	free(d->roots);
	free(d->seen);
	memset(d, 0, sizeof(*d));
}
