/*
 * Which options of struct lc_copy_opts go together.  These rules need
 * nothing but the options and the arguments as written (no file, no
 * host), so lc_copy() checks them once, before the first attempt, and
 * each has one message here.  What depends on the world (a local target
 * that is not a directory, sources on different hosts, no remote side)
 * is checked where the arguments are parsed, at each attempt
 * (controller_opts.c).
 */
#include "copy.h"

#include <string.h>

int
lc_copy_opts_stdout(const struct lc_copy_opts *o)
{
	return !o->prog_dst && o->dest != NULL && strcmp(o->dest, "-") == 0;
}

int
lc_copy_opts_pipes(const struct lc_copy_opts *o)
{
	if (o->prog_src || o->prog_dst || strcmp(o->dest, "-") == 0)
		return 1;
	for (size_t i = 0; i < o->nsources; i++)
		if (strcmp(o->sources[i], "-") == 0)
			return 1;
	return 0;
}

/*
 * "-" and -N: what goes with a pipe.  A pipe is read once, in order, so
 * nothing can resume or retry it; it is one stream of bytes, so it is one
 * source and one target file.
 */
static int
lc_copy_check_pipes(const struct lc_copy_opts *o, struct lc_err *e)
{
	const char *what = o->prog_src || o->prog_dst ? "-N" : "'-'";

	if (!lc_copy_opts_pipes(o))
		return 0;
	if (o->resume)
		return lc_err_set(e, LC_ERR_USAGE,
		    "-a: resuming needs a file source and a file target; a "
		    "pipe (%s) cannot be read again",
		    what);
	if (o->retries != 0)
		return lc_err_set(e, LC_ERR_USAGE,
		    "--retries: a pipe (%s) cannot be read again; copy it "
		    "without retries",
		    what);
	if (o->recursive)
		return lc_err_set(e, LC_ERR_USAGE,
		    "-r: a pipe (%s) is one stream of bytes, not a tree", what);
	if (o->dry_run)
		return lc_err_set(e, LC_ERR_USAGE,
		    "-n: a pipe (%s) cannot be copied without reading it",
		    what);
	if (o->nsources != 1)
		return lc_err_set(e, LC_ERR_USAGE,
		    "%s: a pipe takes exactly one source (%zu given)", what,
		    o->nsources);
	if (o->prog_src && strcmp(o->sources[0], "-") == 0)
		return lc_err_set(e, LC_ERR_USAGE,
		    "-N i: the source names a program, not '-'");
	if (o->prog_dst && strcmp(o->dest, "-") == 0)
		return lc_err_set(e, LC_ERR_USAGE,
		    "-N o: the target names a program, not '-'");
	return 0;
}

int
lc_copy_opts_check(const struct lc_copy_opts *o, struct lc_err *e)
{
	int r;

	if (o->nsources == 0 || o->sources == NULL || o->dest == NULL)
		return lc_err_set(e, LC_ERR_USAGE,
		    "need a source and a destination");
	if ((o->json || o->json_progress) && lc_copy_opts_stdout(o))
		return lc_err_set(e, LC_ERR_USAGE,
		    "--json: stdout is the target '-'");
	if ((r = lc_copy_check_pipes(o, e)) != 0)
		return r;
	if (o->nsources > 1 && o->expect[0] != '\0')
		return lc_err_set(e, LC_ERR_USAGE,
		    "-E ALG=HEX checks one file; %zu sources were given",
		    o->nsources);
	if (o->recursive && o->expect[0] != '\0')
		return lc_err_set(e, LC_ERR_USAGE,
		    "-E ALG=HEX checks one file; it does not go with -r");
	if (o->also_direct && o->nalso == 0)
		return lc_err_set(e, LC_ERR_USAGE,
		    "--also-direct goes with --also");
	if (o->numeric_ids && !o->owner)
		return lc_err_set(e, LC_ERR_USAGE,
		    "--numeric-ids goes with --owner");
	if (o->update && o->skip_existing)
		return lc_err_set(e, LC_ERR_USAGE,
		    "-u and -O do not go together (-O skips every existing "
		    "file)");
	if (o->delete_extra && !o->recursive)
		return lc_err_set(e, LC_ERR_USAGE,
		    "%s goes with -r (it mirrors directories)",
		    o->delete_excluded ? "--delete-excluded" : "--delete");
	if (o->shard.n != 0 && o->delete_extra)
		return lc_err_set(e, LC_ERR_USAGE,
		    "--shard and %s do not go together (a shard sees only "
		    "its part of the tree: run --delete once, without "
		    "--shard, after every shard is done)",
		    o->delete_excluded ? "--delete-excluded" : "--delete");
	if (o->shard.n != 0 && !o->recursive)
		return lc_err_set(e, LC_ERR_USAGE,
		    "--shard %u/%u goes with -r (it splits a tree)",
		    o->shard.i + 1, o->shard.n);
	if (o->shard.n != 0 && lc_copy_opts_pipes(o))
		return lc_err_set(e, LC_ERR_USAGE,
		    "--shard does not go with a pipe ('-' or -N)");
	if (o->max_delete_set && !o->delete_extra)
		return lc_err_set(e, LC_ERR_USAGE,
		    "--max-delete goes with --delete");
	if (o->dry_run && o->resume)
		return lc_err_set(e, LC_ERR_USAGE,
		    "-n and -a do not go together (-n moves no data)");
	return 0;
}
