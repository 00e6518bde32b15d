/*
 * --help: the usage text, one line per row of the option table
 * (options.c), the exit statuses and examples.
 */
#include "options_int.h"

#include <stdio.h>

void
lc_usage(FILE *f)
{
	fprintf(f,
	    "usage: lanecp [options] SRC... DST\n"
	    "  SRC and DST are local paths, [user@]host:path or "
	    "ssh://[user@]host[:port]/path\n"
	    "  (the path relative to the login directory, //path absolute, "
	    "as scp); one side\n"
	    "  must be remote, and several SRCs must all be on one host.\n"
	    "  A DST that is a directory or ends in / receives each file "
	    "under its own name;\n"
	    "  with several SRCs or -r DST must be a directory (made if only "
	    "its last part\n"
	    "  is missing).  With -r, SRC copies the directory itself "
	    "(DST/SRC/...) and\n"
	    "  SRC/ (trailing slash) copies its contents into DST, as rsync "
	    "does.\n"
	    "  SRC - reads stdin and DST - writes stdout (one side local); "
	    "with -N, SRC\n"
	    "  and/or DST are [host:]commands whose stdout or stdin carries "
	    "the data.\n\n"
	    "options:\n");
	for (size_t i = 0; i < lc_nopts; i++) {
		const struct lc_opt *o = &lc_opts[i];
		char left[48];
		if (o->optional && o->sname == 0)
			snprintf(left, sizeof(left), "    --%s[=%s]", o->lname,
			    o->arg);
		else if (o->optional)
			snprintf(left, sizeof(left), "-%c[%s], --%s[=%s]",
			    o->sname, o->arg, o->lname, o->arg);
		else if (o->sname != 0)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", o->sname,
			    o->lname, o->arg ? " " : "", o->arg ? o->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->lname,
			    o->arg ? " " : "", o->arg ? o->arg : "");
		if (o->dflt != 0) {
			char lo[24], hi[24], d[24];
			lc__opt_fmt(o, o->min, lo, sizeof(lo));
			lc__opt_fmt(o, o->max, hi, sizeof(hi));
			lc__opt_fmt(o, o->dflt, d, sizeof(d));
			fprintf(f, "  %-26s %s (%s-%s, default %s)\n", left,
			    o->help, lo, hi, d);
		} else {
			fprintf(f, "  %-26s %s\n", left, o->help);
		}
	}
	fprintf(f,
	    "\nexit status:\n"
	    "  0 success            1 internal error      2 usage error\n"
	    "  3 ssh connect/auth   4 host key refused    5 local file error\n"
	    "  6 remote file/agent  7 protocol error      8 data stream "
	    "failed\n"
	    "  9 data integrity check failed (data changed in transit)\n"
	    " 10 no space left at the target  11 timed out (no progress)\n"
	    " 12 end-to-end checksum mismatch  13 remote lanecp cannot be run "
	    "(-T)\n"
	    " 14 a -N program failed (named on stderr with its exit status)\n"
	    " 15 the reader of the output went away (broken pipe)\n"
	    " 23 partial transfer: some files could not be copied (each is "
	    "named on stderr);\n"
	    "     with --also: some target is incomplete (all failed alike: "
	    "their status)\n"
	    "  130/143 interrupted (SIGINT/SIGTERM)\n"
	    "\nexamples:\n"
	    "  lanecp -s 16 -w 256k bigfile user@host:/data/\n"
	    "  lanecp -P 2 host:/var/backup/db.xb /restore/\n"
	    "  lanecp -F ~/.ssh/config-lab bigfile lab:/tmp/x\n"
	    "  lanecp -r -p /var/backup/2026-11-30 replica:/srv/seed/\n"
	    "  lanecp -r -u /var/backup replica:/srv/seed/   "
	    "(next night: only what changed)\n"
	    "  lanecp -r -a -u --retries 5 /var/backup replica:/srv/seed/   "
	    "(resume a killed run)\n"
	    "  lanecp -r /var/backup r1:/srv/seed/ --also r2:/srv/seed/ "
	    "--also r3:/srv/seed/\n"
	    "     (a chain: r1 sends to r2, r2 to r3; --also-direct: all from "
	    "here)\n"
	    "  zfs send pool@snap | lanecp - host:/backup/snap.zfs\n"
	    "  lanecp host:/backup/db.xb - | xbstream -x\n"
	    "  lanecp -N io 'pg_basebackup -D - -Ft' 'host:tar -x -C "
	    "/srv/pg'\n");
}
