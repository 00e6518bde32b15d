/*
 * --delete and -n at the controller.  After a complete copy (every file
 * done, SRC_DONE and SINK_DONE in, no file failed), DEL_SCAN asks the
 * sink, for each copied root, what under it the source did not list;
 * each DEL_CAND is checked (under the root asked, in order) and kept.
 * Then, with every scan complete: entries an --exclude protects, and the
 * directories holding one, stay (not with --delete-excluded, which
 * protects nothing); the rest is counted against
 * --max-delete and either listed (-n) or deleted, deepest first, one
 * DELETE each, every DELETED checked against the one asked.  Nothing is
 * deleted after a failure, a partial copy or an incomplete scan.
 * The candidates are held here: memory grows with what is deleted, not
 * with the tree.
 */
#include "controller_int.h"
#include "clock.h"
#include "log.h"
#include "path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Candidates held at most, and their names' bytes (a sink's list is
   untrusted: it must not size the controller's memory past these). */
#define LC_DEL_MAX (1u << 24)
#define LC_DEL_BYTES_MAX (256ull << 20)

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

/* Every scan is in: choose, count, list or delete. */
static int
lc_del_decide(struct lc_ctl *c, struct lc_err *e)
{
	struct lc_ctl_del *d = &c->del;
	const char *kept = NULL;
	struct lc_msg_delete m;
	uint32_t n = 0;
	size_t i;
	int r;

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
	d->state = c->o->dry_run ? LC_DEL_DONE : LC_DEL_DELETING;
	for (i = d->n; i-- > 0;) {
		struct lc_del_cand *k = &d->cand[i];
		if (k->keep)
			continue;
		if (c->o->dry_run) {
			lc__ctl_dry_line(c, "delete", k->name, k->kind);
			c->res->deleted++;
			continue;
		}
		memset(&m, 0, sizeof(m));
		m.kind = k->kind;
		snprintf(m.name, sizeof(m.name), "%s", k->name);
		if ((r = lc_msg_put_delete(&c->dst_ep.out, &m)) != 0)
			return lc_err_set(e, -r, "control output");
		d->asked++;
	}
	d->next = d->n;
	if (d->asked == 0)
		d->state = LC_DEL_DONE;
	return 0;
}

static int
lc_del_cand(struct lc_ctl *c, const struct lc_msg_del_cand *m, struct lc_err *e)
{
	struct lc_ctl_del *d = &c->del;
	struct lc_del_cand *nc;

	if (d->state != LC_DEL_SCAN || d->scanned >= d->nroots ||
	    !lc_del_under(m->name, d->roots[d->scanned]))
		return lc_err_set(e, LC_ERR_PROTO,
		    "%s: DEL_CAND %s was not "
		    "asked for",
		    c->dst_ep.name, m->name);
	if (d->n >= LC_DEL_MAX || d->bytes + strlen(m->name) > LC_DEL_BYTES_MAX)
		return lc_err_set(e, LC_ERR_TOOBIG,
		    "--delete: more than %u "
		    "entries to delete",
		    LC_DEL_MAX);
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
	if (d->state != LC_DEL_DELETING || k == NULL || k->kind != m->kind ||
	    strcmp(k->name, m->name) != 0)
		return lc_err_set(e, LC_ERR_PROTO,
		    "%s: DELETED %s was not "
		    "asked for",
		    c->dst_ep.name, m->name);
	d->next--;
	snprintf(where, sizeof(where), "%s%s", k->name, lc_del_slash(k->kind));
	if (m->msg[0] != '\0') {
		lc__ctl_failed(c, where, (int)k->kind, m->msg);
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
	if (++d->answered == d->asked)
		d->state = LC_DEL_DONE;
	return 0;
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
	char shown[LC_PATH_MAX + 8];

	if (c->o->json)
		return;
	lc_printable(name, shown, sizeof(shown));
	printf("%s %s%s\n", what, shown, lc_del_slash(kind));
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
	memset(d, 0, sizeof(*d));
}
