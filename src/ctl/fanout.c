/*
 * Fan-out (--also): one source to several targets.  Stage 1 of issue 25:
 * each target is an ordinary copy, lc_copy() with that target as the
 * destination, so each gets its own SSH connection, its own agents and
 * stream keys, and every check a single copy has (names, credit,
 * confinement and the memory bound at its sink; -p/-u/-a/-e/--delete).
 *
 * The targets run one after the other, not at once: a copy's SSH login
 * may ask on the terminal (a passphrase, a host key), the live progress
 * line is one line, and the signal pipe has one reader; and a source
 * read N times at once competes with itself for the disk, while read in
 * turn, a tree that fits the page cache is read from memory for every
 * target after the first.  A failed target does not stop the next one;
 * a signal stops them all.  The chain (stage 2: the first target's
 * agent forwards each block to the next) plugs in here: the targets and
 * their results stay what lc_copy_fanout_report shows.
 */
#include "copy.h"
#include "location.h"
#include "log.h"

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

int
lc_copy_fanout(const struct lc_copy_opts *o, int signal_fd,
    struct lc_fanout_target *t, struct lc_err *e)
{
	struct lc_copy_opts oo = *o;
	size_t n = o->nalso + 1, bad = 0;
	int r;

	memset(t, 0, n * sizeof(*t));
	for (size_t i = 0; i < n; i++) {
		t[i].dest = lc_fanout_dest(o, i);
		lc_err_clear(&t[i].e);
	}
	if ((r = lc_copy_fanout_check(o, e)) != 0)
		return r;
	lc_log_verbose("--also: %zu targets, one after the other (each its own "
		       "SSH connection, agents and stream keys)",
	    n);
	oo.also = NULL;
	oo.nalso = 0;
	for (size_t i = 0; i < n; i++) {
		oo.dest = t[i].dest;
		/* each copy its own transfer id and takeover key (lc_copy) */
		oo.transfer[0] = '\0';
		lc_log_info("target %zu of %zu: %s", i + 1, n, t[i].dest);
		t[i].started = 1;
		t[i].r = lc_copy(&oo, signal_fd, &t[i].res, &t[i].e);
		if (t[i].r == 0)
			continue;
		if (t[i].e.code == 0)
			lc_err_set(&t[i].e, -t[i].r, "%s", lc_strerror(t[i].r));
		bad++;
		if (t[i].r != -LC_ERR_CANCELED && i + 1 < n)
			lc_log_warn("target %zu of %zu %s: %s; going on with "
				    "the next",
			    i + 1, n, t[i].dest, t[i].e.msg);
		if (t[i].r == -LC_ERR_CANCELED) {
			*e = t[i].e;
			for (size_t j = i + 1; j < n; j++) {
				lc_err_set(&t[j].e, LC_ERR_CANCELED,
				    "not started: interrupted by signal %d",
				    e->signo);
				t[j].e.signo = e->signo;
				t[j].r = -LC_ERR_CANCELED;
			}
			return -LC_ERR_CANCELED;
		}
	}
	if (bad == 0)
		return 0;
	return lc_err_set(e, LC_ERR_PARTIAL, "%zu of %zu targets incomplete",
	    bad, n);
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
	char sum[256];

	for (size_t i = 0; i < n; i++) {
		lc_copy_summary(o, &t[i].res, sum, sizeof(sum));
		if (t[i].r == 0)
			lc_log_info("target %zu of %zu %s: ok, %s", i + 1, n,
			    t[i].dest, sum);
		else if (!t[i].started)
			lc_log_error("target %zu of %zu %s: not started, exit "
				     "%d: %s",
			    i + 1, n, t[i].dest, t[i].status, t[i].e.msg);
		else
			lc_log_error("target %zu of %zu %s: incomplete, exit "
				     "%d, %s: %s",
			    i + 1, n, t[i].dest, t[i].status, sum, t[i].e.msg);
	}
	if (!o->json)
		return;
	for (size_t i = 0; i < n; i++)
		lc_copy_json_one(fd, o, &t[i].res, &t[i].e, t[i].status,
		    t[i].dest, i == 0 ? "[" : ",", i + 1 == n ? "]\n" : "");
}

void
lc_copy_fanout_free(struct lc_fanout_target *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		lc_copy_result_free(&t[i].res);
}
