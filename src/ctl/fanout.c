/*
 * Fan-out (--also): one source to several targets.  Each target is an
 * ordinary copy, lc_copy() with that target as the destination, so each
 * gets its own SSH connection, its own agents and stream keys, and every
 * check a single copy has (names, credit, confinement and the memory
 * bound at its sink; -p/-u/-a/-e/--delete).
 *
 * A chain (issue 25, stage 1.5): the first target from this host, then
 * target k+1 from target k, a copy between two remote hosts whose sources
 * are what target k holds under the same relative names
 * (lc_copy_fanout_hop_sources), so this host's link carries the data
 * once.  A target is copied from this host instead (stage 1's way) when
 * target k is incomplete, when the hop fails (with -a the copy from here
 * resumes what it left; without, its partial files were removed; not a
 * hop that ran to its end whose only failures its target refused), when
 * the names target k holds cannot be known here, and for every target
 * with --also-direct, --via-ssh (each hop would run through this host),
 * --shard (it deals the files by the whole tree) or -n (no target
 * changes, so each is compared with the source).  A hop never takes
 * the relay or via-SSH path (copy.c, datapath.c: o->hop).
 *
 * A chain of one source copied with -r runs its hops at once, each
 * target's copy in a thread of its own, target k+1's fed with what target
 * k's copy makes, entry by entry (fanout_chain.c; feed.h,
 * controller_fed.c).  Otherwise the targets run one after the other.  A
 * failed target does not stop the next one; a signal stops them all.
 */
#include "fanout_int.h"
#include "location.h"
#include "log.h"
#include "path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Target i: the last argument first, then each --also in order. */
static const char *
lc_fanout_dest(const struct lc_copy_opts *o, size_t i)
{
	return i == 0 ? o->dest : o->also[i - 1];
}

/* The sources: this host's files, no pipe (read once), no program. */
static int
lc_fanout_check_sources(const struct lc_copy_opts *o, struct lc_err *e)
{
	struct lc_location l;
	int r;

	if (o->prog_src || o->prog_dst)
		return lc_err_set(e, LC_ERR_USAGE,
		    "--also does not go with -N (a program's output is read "
		    "once)");
	if (o->path == LC_PATH_RELAY)
		return lc_err_set(e, LC_ERR_USAGE,
		    "--also does not go with --relay (--also copies this "
		    "host's files: nothing to relay)");
	for (size_t i = 0; i < o->nsources; i++)
		if (strcmp(o->sources[i], "-") == 0)
			return lc_err_set(e, LC_ERR_USAGE,
			    "--also does not go with the source '-' (stdin is "
			    "read once)");
	for (size_t i = 0; i < o->nsources; i++) {
		if ((r = lc_location_parse(o->sources[i], &l, e)) != 0)
			return r;
		if (lc_location_is_remote(&l))
			return lc_err_set(e, LC_ERR_USAGE,
			    "--also: the source %.200s is remote; --also "
			    "copies this host's files to several targets (not "
			    "yet from a remote source)",
			    o->sources[i]);
	}
	return 0;
}

/* Target i parsed: remote, not '-', and no other target the same. */
static int
lc_fanout_check_target(const struct lc_copy_opts *o, size_t i,
    struct lc_location *ls, struct lc_err *e)
{
	const char *d = lc_fanout_dest(o, i);
	int r;

	if (d == NULL || d[0] == '\0')
		return lc_err_set(e, LC_ERR_USAGE, "--also: an empty target");
	if (strcmp(d, "-") == 0)
		return lc_err_set(e, LC_ERR_USAGE,
		    "--also does not go with the target '-' (stdout is one "
		    "target)");
	if ((r = lc_location_parse(d, &ls[i], e)) != 0)
		return r;
	if (!lc_location_is_remote(&ls[i]))
		return lc_err_set(e, LC_ERR_USAGE,
		    "--also: the target %.200s is local; with --also every "
		    "target is remote ([user@]host:path)",
		    d);
	for (size_t j = 0; j < i; j++)
		if (lc_location_same_host(&ls[j], &ls[i]) &&
		    strcmp(ls[j].path, ls[i].path) == 0)
			return lc_err_set(e, LC_ERR_USAGE,
			    "--also %.200s: the same target as %.200s", d,
			    lc_fanout_dest(o, j));
	return 0;
}

int
lc_copy_fanout_check(const struct lc_copy_opts *o, struct lc_err *e)
{
	struct lc_copy_opts oo = *o;
	struct lc_location *ls = NULL;
	int r;

	if (o->nalso > LC_ALSO_MAX)
		return lc_err_set(e, LC_ERR_USAGE,
		    "more than %d --also targets", LC_ALSO_MAX);
	if (o->nsources == 0 || o->sources == NULL || o->dest == NULL)
		return lc_err_set(e, LC_ERR_USAGE,
		    "need a source and a destination");
	if ((r = lc_fanout_check_sources(o, e)) != 0)
		return r;
	if ((ls = calloc(o->nalso + 1, sizeof(*ls))) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i <= o->nalso; i++) {
		oo.dest = lc_fanout_dest(o, i);
		if ((r = lc_fanout_check_target(o, i, ls, e)) != 0 ||
		    (r = lc_copy_opts_check(&oo, e)) != 0)
			goto out;
	}
out:
	free(ls);
	return r;
}

/* h.src[h.n++] = a copy of prefix + path + sep + tail, unless it is in. */
static int
lc_fanout_hop_add(struct lc_fanout_hop *h, const char *prefix, size_t plen,
    const char *path, const char *sep, const char *tail)
{
	char *x = NULL;
	size_t len = plen + strlen(path) + strlen(sep) + strlen(tail) + 1;

	if ((x = malloc(len)) == NULL)
		return -1;
	snprintf(x, len, "%.*s%s%s%s", (int)plen, prefix, path, sep, tail);
	for (size_t k = 0; k < h->n; k++)
		if (strcmp(h->src[k], x) == 0) {
			free(x);
			return 0;
		}
	h->src[h->n++] = x;
	return 0;
}

int
lc_copy_fanout_hop_sources(const struct lc_copy_opts *o, const char *target,
    struct lc_fanout_hop *h, char *why, size_t whysz)
{
	struct lc_location l;
	struct lc_err e;
	size_t tlen = strlen(target), plen;
	int dirlike;

	memset(h, 0, sizeof(*h));
	lc_err_clear(&e);
	if (lc_location_parse(target, &l, &e) != 0 ||
	    (plen = strlen(l.path)) > tlen ||
	    strcmp(target + tlen - plen, l.path) != 0) {
		snprintf(why, whysz, "cannot name what %.150s holds", target);
		return -1;
	}
	/* -r, several sources or a directory: target/NAME; else a name */
	dirlike = o->recursive || o->nsources > 1 || plen == 0 ||
	    l.path[plen - 1] == '/';
	if (!dirlike) {
		snprintf(why, whysz,
		    "one file to %.150s, a name that may be "
		    "a file or a directory there",
		    target);
		return -1;
	}
	if ((h->src = calloc(o->nsources, sizeof(*h->src))) == NULL)
		goto nomem;
	for (size_t i = 0; i < o->nsources; i++) {
		const char *s = o->sources[i];
		size_t slen = strlen(s);
		int contents = slen > 0 && s[slen - 1] == '/';
		char base[4096];

		/* the copy's name (unused for a contents source, NAME/) */
		lc_path_basename(s, base, sizeof(base));
		if (contents && !o->recursive) {
			snprintf(why, whysz,
			    "the source %.150s ends in '/' "
			    "without -r",
			    s);
			goto fail;
		}
		if (!contents &&
		    (base[0] == '\0' || strcmp(base, ".") == 0 ||
			strcmp(base, "..") == 0)) {
			snprintf(why, whysz, "cannot name the copy of %.150s",
			    s);
			goto fail;
		}
		if (lc_fanout_hop_add(h, target, tlen - plen,
			plen == 0 && contents ? "." : l.path,
			plen > 0 && l.path[plen - 1] == '/' ? "" : "/",
			contents ? "" : base) != 0)
			goto nomem;
	}
	/* a source's contents: DIR/ holds the other sources' copies too */
	for (size_t k = 0; k < h->n; k++) {
		size_t len = strlen(h->src[k]);
		if (len == 0 || h->src[k][len - 1] != '/')
			continue;
		for (size_t m = 0; m < h->n; m++)
			if (m != k)
				free(h->src[m]);
		h->src[0] = h->src[k];
		h->n = 1;
		break;
	}
	return 0;
nomem:
	snprintf(why, whysz, "out of memory");
fail:
	lc_copy_fanout_hop_free(h);
	return -1;
}

void
lc_copy_fanout_hop_free(struct lc_fanout_hop *h)
{
	for (size_t k = 0; k < h->n; k++)
		free(h->src[k]);
	free(h->src);
	memset(h, 0, sizeof(*h));
}

/* Stop at a signal: the targets after i are "not started". */
static int
lc_fanout_canceled(struct lc_fanout_target *t, size_t i, size_t n,
    struct lc_err *e)
{
	*e = t[i].e;
	for (size_t j = i + 1; j < n; j++) {
		lc_err_set(&t[j].e, LC_ERR_CANCELED,
		    "not started: interrupted by signal %d", e->signo);
		t[j].e.signo = e->signo;
		t[j].r = -LC_ERR_CANCELED;
	}
	return -LC_ERR_CANCELED;
}

/* One copy of oo into t (of the n at t0: lc_copy), t->e set on error. */
void
lc__fanout_run_one(struct lc_copy_opts *oo, int signal_fd,
    struct lc_fanout_target *t0, size_t n, struct lc_fanout_target *t)
{
	/* each copy its own transfer id and takeover key (lc_copy) */
	oo->transfer[0] = '\0';
	/* -n's lines and --json-progress's objects name the target */
	oo->target_name = t->dest;
	oo->target_i = (size_t)(t - t0) + 1;
	oo->target_n = n;
	t->started = 1;
	lc_err_clear(&t->e);
	t->r = lc_copy(oo, signal_fd, &t->res, &t->e);
	if (t->r != 0 && t->e.code == 0)
		lc_err_set(&t->e, -t->r, "%s", lc_strerror(t->r));
}

/* Target i is copied from this host: the one before it is incomplete. */
void
lc__fanout_upstream_bad(struct lc_fanout_target *t, size_t i)
{
	snprintf(t[i].from_why, sizeof(t[i].from_why),
	    "target %zu %.150s incomplete", i, t[i - 1].dest);
}

/* The line that starts target i's copy from this host instead of a hop. */
void
lc__fanout_say_from_here(const struct lc_fanout_target *t, size_t i, size_t n)
{
	lc_log_info("target %zu of %zu: %s, from this host: %s", i + 1, n,
	    t[i].dest, t[i].from_why);
}

/* Target i's hop failed: why, and that it is copied from this host. */
void
lc__fanout_hop_failed(const struct lc_copy_opts *o, struct lc_fanout_target *t,
    size_t i, size_t n)
{
	snprintf(t[i].from_why, sizeof(t[i].from_why),
	    "the hop from %.80s failed: %.120s", t[i - 1].dest, t[i].e.msg);
	lc_log_warn("target %zu of %zu %s: %s; copying it from this host%s",
	    i + 1, n, t[i].dest, t[i].from_why, o->resume ? " (resuming)" : "");
}

/* The run's result once every target has one: 0 or "K of N ...". */
int
lc__fanout_incomplete(const struct lc_fanout_target *t, size_t n,
    struct lc_err *e)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++)
		if (t[i].r != 0)
			bad++;
	if (bad == 0)
		return 0;
	return lc_err_set(e, LC_ERR_PARTIAL, "%zu of %zu targets incomplete",
	    bad, n);
}

/*
 * Target t's hop ran to its end and failed only for entries target t
 * itself refused (a file of its own in the way without -f, no permission,
 * no space): a copy from this host would be refused the same, or with -f
 * overwrite what is the target's own, so the hop's result is the target's,
 * as a copy to it without --also would end.
 */
int
lc__fanout_target_refused(const struct lc_fanout_target *t)
{
	return t->r == -LC_ERR_PARTIAL && t->res.ran && t->res.nfailed > 0 &&
	    t->res.nrefused == t->res.nfailed;
}

/*
 * Target i from target i-1 (a chain hop): 1 when it ran (t[i] holds its
 * result: ok, a signal, or entries the target refused), 0 when it could
 * not run or failed, t[i].from_why saying why (the caller copies from
 * this host).
 */
static int
lc_fanout_hop(const struct lc_copy_opts *o, struct lc_copy_opts *oo, size_t i,
    size_t n, int signal_fd, struct lc_fanout_target *t)
{
	struct lc_fanout_hop h;
	const char *prev = t[i - 1].dest;

	if (t[i - 1].r != 0) {
		lc__fanout_upstream_bad(t, i);
		return 0;
	}
	if (lc_copy_fanout_hop_sources(o, prev, &h, t[i].from_why,
		sizeof(t[i].from_why)) != 0)
		return 0;
	oo->sources = (const char *const *)h.src;
	oo->nsources = h.n;
	oo->hop = 1;
	lc_log_info("target %zu of %zu: %s, from %s (chain)", i + 1, n,
	    t[i].dest, prev);
	lc__fanout_run_one(oo, signal_fd, t, n, &t[i]);
	oo->sources = o->sources;
	oo->nsources = o->nsources;
	oo->hop = 0;
	lc_copy_fanout_hop_free(&h);
	if (t[i].r == 0 || t[i].r == -LC_ERR_CANCELED ||
	    lc__fanout_target_refused(&t[i])) {
		t[i].from = prev;
		return 1;
	}
	lc__fanout_hop_failed(o, t, i, n);
	lc_copy_result_free(&t[i].res);
	memset(&t[i].res, 0, sizeof(t[i].res));
	return 0;
}

/*
 * Target i's copy from this host after its hop failed (or could not run):
 * what the hop made is this run's, so the copy keeps it (-O's way) and
 * refuses only a file of the target's own in the way, as a copy without
 * -f does; -f and -u need nothing (-u keeps what is up to date).  made is
 * the hop's made_log: each name its sink took as free (FILE_READY) or
 * made, so a file the hop completed just before it failed, its FILE_DONE
 * still on the way, is the hop's too.
 */
void
lc__fanout_keep_made(struct lc_copy_opts *oo, struct lc_feed *made, size_t i,
    size_t n, const char *dest)
{
	if (made == NULL || oo->force || oo->update || oo->skip_existing)
		return;
	lc_log_verbose("target %zu of %zu %s: keeping what its hop made", i + 1,
	    n, dest);
	oo->skip_existing = 1;
	oo->made = made;
}

/*
 * Target i of the chain hop after hop: from target i-1, or, when that
 * hop cannot run or fails, from this host (lc__fanout_keep_made).
 */
static void
lc_fanout_seq_hop(const struct lc_copy_opts *o, struct lc_copy_opts *oo,
    size_t i, size_t n, int signal_fd, struct lc_fanout_target *t)
{
	struct lc_feed made;
	int have = lc_feed_init(&made) == 0;

	oo->made_log = have ? &made : NULL;
	if (!lc_fanout_hop(o, oo, i, n, signal_fd, t)) {
		lc__fanout_say_from_here(t, i, n);
		oo->made_log = NULL;
		lc__fanout_keep_made(oo, have ? &made : NULL, i, n, t[i].dest);
		lc__fanout_run_one(oo, signal_fd, t, n, &t[i]);
		oo->skip_existing = o->skip_existing;
		oo->made = NULL;
	}
	oo->made_log = NULL;
	if (have)
		lc_feed_free(&made);
}

/* Why no target copies from another (--also-direct, --via-ssh...): "". */
static const char *
lc_fanout_why_direct(const struct lc_copy_opts *o)
{
	if (o->also_direct)
		return "--also-direct";
	if (o->path == LC_PATH_SSH)
		return "--via-ssh carries each hop through this host";
	if (o->shard.n > 1)
		return "--shard deals the files by the whole tree";
	if (o->dry_run)
		return "-n changes no target, so each is listed against the "
		       "source";
	return "";
}

int
lc_copy_fanout(const struct lc_copy_opts *o, int signal_fd,
    struct lc_fanout_target *t, struct lc_err *e)
{
	struct lc_copy_opts oo = *o;
	size_t n = o->nalso + 1;
	const char *direct = lc_fanout_why_direct(o);
	int r;

	memset(t, 0, n * sizeof(*t));
	for (size_t i = 0; i < n; i++) {
		t[i].dest = lc_fanout_dest(o, i);
		lc_err_clear(&t[i].e);
	}
	if ((r = lc_copy_fanout_check(o, e)) != 0)
		return r;
	if (direct[0] == '\0' && lc__fanout_can_overlap(o) &&
	    lc__fanout_overlap(o, signal_fd, t, n) == 0)
		return lc__fanout_after_overlap(t, n, e);
	if (direct[0] != '\0')
		lc_log_verbose("--also: %zu targets, each from this host, one "
			       "after the other (%s; each its own SSH "
			       "connection, agents and stream keys)",
		    n, direct);
	else
		lc_log_verbose("--also: %zu targets, a chain: this host to "
			       "the first, then each target from the one "
			       "before, one after the other (each hop its own "
			       "SSH connections, agents and stream keys)",
		    n);
	oo.also = NULL;
	oo.nalso = 0;
	oo.also_direct = 0;
	for (size_t i = 0; i < n; i++) {
		oo.dest = t[i].dest;
		if (i > 0 && direct[0] != '\0')
			snprintf(t[i].from_why, sizeof(t[i].from_why), "%s",
			    direct);
		if (i == 0 || direct[0] != '\0') {
			lc_log_info("target %zu of %zu: %s", i + 1, n,
			    t[i].dest);
			lc__fanout_run_one(&oo, signal_fd, t, n, &t[i]);
		} else
			lc_fanout_seq_hop(o, &oo, i, n, signal_fd, t);
		if (t[i].r == 0)
			continue;
		if (t[i].r == -LC_ERR_CANCELED)
			return lc_fanout_canceled(t, i, n, e);
		if (i + 1 < n)
			lc_log_warn("target %zu of %zu %s: %s; going on with "
				    "the next",
			    i + 1, n, t[i].dest, t[i].e.msg);
	}
	return lc__fanout_incomplete(t, n, e);
}

int
lc_copy_fanout_status(const struct lc_fanout_target *t, size_t n,
    int canceled_status)
{
	int all_same = 1;

	if (canceled_status != 0)
		return canceled_status;
	for (size_t i = 1; i < n; i++)
		all_same = all_same && t[i].status == t[0].status;
	if (n > 0 && all_same)
		return t[0].status;
	return 23; /* partial: some target is incomplete */
}

void
lc_copy_fanout_report(int fd, const struct lc_copy_opts *o,
    const struct lc_fanout_target *t, size_t n)
{
	char sum[256], from[320];

	for (size_t i = 0; i < n; i++) {
		lc_copy_summary(o, &t[i].res, sum, sizeof(sum));
		if (t[i].from != NULL)
			snprintf(from, sizeof(from), "from %.200s (chain)",
			    t[i].from);
		else if (t[i].from_why[0] != '\0')
			snprintf(from, sizeof(from), "from this host: %s",
			    t[i].from_why);
		else
			snprintf(from, sizeof(from), "from this host");
		if (t[i].r == 0)
			lc_log_info("target %zu of %zu %s: ok, %s, %s", i + 1,
			    n, t[i].dest, from, sum);
		else if (!t[i].started)
			lc_log_error("target %zu of %zu %s: not started, exit "
				     "%d: %s",
			    i + 1, n, t[i].dest, t[i].status, t[i].e.msg);
		else
			lc_log_error("target %zu of %zu %s: incomplete, exit "
				     "%d, %s, %s: %s",
			    i + 1, n, t[i].dest, t[i].status, from, sum,
			    t[i].e.msg);
	}
	if (!o->json)
		return;
	for (size_t i = 0; i < n; i++)
		lc_copy_json_one(fd, o, &t[i].res, &t[i].e, t[i].status, &t[i],
		    i == 0 ? "[" : ",", i + 1 == n ? "]\n" : "");
}

void
lc_copy_fanout_free(struct lc_fanout_target *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		lc_copy_result_free(&t[i].res);
}
