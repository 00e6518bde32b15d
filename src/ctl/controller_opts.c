/*
 * The controller's options: the command line's sources and target
 * parsed, each source's request (SRC_ADD flags, the name its copy gets),
 * and the rules about the arguments that depend on the world (a local
 * target, the hosts) or on the parsed locations.  The rules about which
 * options go together are lc_copy_opts_check (copy_opts.c), run once by
 * lc_copy before the first attempt.  The state is struct lc_ctl_args
 * (controller_int.h).
 */
#include "controller_int.h"
#include "path.h"
#include "testhook_ctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Several sources: the target must be a directory (as cp and scp say;
 * a local one is checked here, a remote one by its sink), and the
 * sources must be on one host.  A stray last argument usually shows as
 * one of the two.
 */
static int
lc_ctl_check_several(struct lc_ctl *c, struct lc_err *e)
{
	const struct lc_copy_opts *o = c->o;
	struct stat st;

	if (o->nsources < 2)
		return 0;
	if (!lc_location_is_remote(&c->args.dst) &&
	    stat(c->args.dst.path, &st) == 0 && !S_ISDIR(st.st_mode))
		return lc_err_set(e, LC_ERR_USAGE, "with several sources the "
		    "target must be a directory: %s", o->dest);
	for (size_t i = 1; i < o->nsources; i++)
		if (!lc_location_same_host(&c->args.srcs[0], &c->args.srcs[i]))
			return lc_err_set(e, LC_ERR_USAGE, "%s and %s are on "
			    "different hosts: several sources must be on one "
			    "host (the last argument, %s, is the target)",
			    o->sources[0], o->sources[i], o->dest);
	return 0;
}

int
lc__ctl_parse_args(struct lc_ctl *c, struct lc_err *e)
{
	const struct lc_copy_opts *o = c->o;
	int r;

	if (o->nsources == 0 || o->dest == NULL)
		return lc_err_set(e, LC_ERR_INTERNAL, "no source or no target "
		    "(lc_copy_opts_check)");
	if ((c->args.srcs = calloc(o->nsources,
	    sizeof(*c->args.srcs))) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < o->nsources; i++)
		if ((r = lc_location_parse(o->sources[i], &c->args.srcs[i],
		    e)) != 0)
			return r;
	if ((r = lc_location_parse(o->dest, &c->args.dst, e)) != 0)
		return r;
	if ((r = lc_ctl_check_several(c, e)) != 0)
		return r;
	c->args.stdout_target = lc_copy_opts_stdout(o) != 0;
	if (c->args.stdout_target || o->prog_dst)
		c->args.pipes = true;
	if (!lc_location_is_remote(&c->args.srcs[0]) &&
	    !lc_location_is_remote(&c->args.dst) && !lc_testhook_allow_local(o))
		return lc_err_set(e, LC_ERR_USAGE, "neither source nor "
		    "destination is remote (use host:path on one side; for a "
		    "local copy use cp)");
	if ((c->chk.reqs = calloc(o->nsources, sizeof(*c->chk.reqs))) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < o->nsources; i++) {
		const char *sp = c->args.srcs[i].path;
		struct lc_ctl_req *rq = &c->chk.reqs[i];

		rq->flags = (o->recursive ? LC_ADD_RECURSIVE : 0) |
		    (o->follow ? LC_ADD_FOLLOW : 0) |
		    (o->owner && !o->numeric_ids ? LC_ADD_NAMES : 0);
		/* a pipe: one FILE named "-" (lc_copy_opts_check said
		 * this is the only source, without -r) */
		if (o->prog_src || (strcmp(o->sources[i], "-") == 0 &&
		    !lc_location_is_remote(&c->args.srcs[i]))) {
			rq->flags = o->prog_src ? LC_ADD_PROGRAM :
			    LC_ADD_STDIN;
			snprintf(rq->name, sizeof(rq->name), "-");
			c->args.pipes = true;
			continue;
		}
		/*
		 * rsync's "dir/": the contents of dir, not dir itself; so are
		 * "." and a remote "~" or "~user" (host: and host:~), which
		 * have no name of their own to copy to
		 */
		if (o->recursive && ((sp[0] != '\0' &&
		    sp[strlen(sp) - 1] == '/') || strcmp(sp, ".") == 0 ||
		    (lc_location_is_remote(&c->args.srcs[i]) && sp[0] == '~' &&
		    strchr(sp, '/') == NULL))) {
			rq->flags |= LC_ADD_CONTENTS;
			continue;
		}
		lc_path_basename(sp, rq->name, sizeof(rq->name));
		/* two sources would be written to one name (scp overwrites) */
		for (size_t j = 0; j < i; j++)
			if (!(c->chk.reqs[j].flags & LC_ADD_CONTENTS) &&
			    strcmp(c->chk.reqs[i].name,
			    c->chk.reqs[j].name) == 0)
				return lc_err_set(e, LC_ERR_USAGE, "%s and %s "
				    "would both be copied to \"%s\"",
				    o->sources[j], o->sources[i],
				    c->chk.reqs[i].name);
	}
	snprintf(c->args.target_shown, sizeof(c->args.target_shown), "%s",
	    o->dest);
	/*
	 * Set-id and sticky bits travel only when root asked for -p and read
	 * them itself (a local source): a remote source's are never trusted.
	 */
	c->args.keep_setid = o->preserve &&
	    !lc_location_is_remote(&c->args.srcs[0]) && geteuid() == 0;
	return 0;
}
