/*
 * Which options go together (src/ctl/copy_opts.c): each rule refuses its
 * pairing with -LC_ERR_USAGE and a message naming the options, a good
 * set passes, and lc_copy() refuses a bad pairing before its first
 * attempt (no attempt counted, no connection tried), retries or not.
 */
#include "harness.h"

#include "copy.h"
#include "err.h"

#include <string.h>

static const char *one_file[] = { "a" };
static const char *two_files[] = { "a", "b" };
static const char *stdin_src[] = { "-" };

/* a good copy of one file to a remote target */
static void
opts(struct lc_copy_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sources = one_file;
	o->nsources = 1;
	o->dest = "host:/x";
	o->streams = 4;
	o->block = 1 << 20;
}

/* o is refused, and the message has want */
static int
refused(const struct lc_copy_opts *o, const char *want)
{
	struct lc_err e;

	lc_err_clear(&e);
	return lc_copy_opts_check(o, &e) == -LC_ERR_USAGE &&
	    e.code == LC_ERR_USAGE && strstr(e.msg, want) != NULL;
}

LC_TEST(good_sets_pass)
{
	struct lc_copy_opts o;
	struct lc_err e;

	opts(&o);
	LC_CHECK_EQ_I(lc_copy_opts_check(&o, &e), 0);
	o.update = 1;
	o.retries = 5;
	o.resume = 1;
	o.recursive = 1;
	o.owner = 1;
	o.numeric_ids = 1;
	o.json = 1;
	LC_CHECK_EQ_I(lc_copy_opts_check(&o, &e), 0);
	opts(&o);
	o.sources = stdin_src;
	o.json = 1; /* stdin to a remote file: stdout is free */
	LC_CHECK_EQ_I(lc_copy_opts_check(&o, &e), 0);
	opts(&o);
	o.prog_dst = 1;
	o.dest = "host:tar -x";
	o.json_progress = 1;
	LC_CHECK_EQ_I(lc_copy_opts_check(&o, &e), 0);
}

LC_TEST(each_pairing_refused)
{
	struct lc_copy_opts o;

	opts(&o);
	o.nsources = 0;
	LC_CHECK(refused(&o, "need a source and a destination"));
	opts(&o);
	o.dest = NULL;
	LC_CHECK(refused(&o, "need a source and a destination"));
	opts(&o);
	o.update = 1;
	o.skip_existing = 1;
	LC_CHECK(refused(&o, "-u and -O do not go together"));
	opts(&o);
	o.numeric_ids = 1;
	LC_CHECK(refused(&o, "--numeric-ids goes with --owner"));
	opts(&o);
	snprintf(o.expect, sizeof(o.expect), "crc32=01234567");
	o.recursive = 1;
	LC_CHECK(refused(&o, "does not go with -r"));
	o.recursive = 0;
	o.sources = two_files;
	o.nsources = 2;
	LC_CHECK(refused(&o, "2 sources were given"));
	opts(&o);
	o.dest = "-";
	o.sources = (const char *[]){ "host:/f" };
	o.json = 1;
	LC_CHECK(refused(&o, "--json: stdout is the target"));
	o.json = 0;
	o.json_progress = 1;
	LC_CHECK(refused(&o, "--json: stdout is the target"));
}

LC_TEST(pipe_pairings_refused)
{
	struct lc_copy_opts o;

	opts(&o);
	o.sources = stdin_src;
	o.retries = 2;
	LC_CHECK(refused(&o, "--retries: a pipe ('-')"));
	o.retries = 0;
	o.resume = 1;
	LC_CHECK(refused(&o, "-a: resuming needs a file source"));
	o.resume = 0;
	o.recursive = 1;
	LC_CHECK(refused(&o, "-r: a pipe ('-')"));
	o.recursive = 0;
	o.sources = (const char *[]){ "-", "b" };
	o.nsources = 2;
	LC_CHECK(refused(&o, "a pipe takes exactly one source (2 given)"));
	opts(&o);
	o.prog_src = 1;
	o.sources = stdin_src;
	LC_CHECK(refused(&o, "-N i: the source names a program"));
	opts(&o);
	o.prog_dst = 1;
	o.dest = "-";
	LC_CHECK(refused(&o, "-N o: the target names a program"));
}

/*
 * lc_copy: the pairing error, once, before any attempt: the target's
 * host is never looked up (its name is invalid and the ssh_config does
 * not exist, either of which would be a different error).
 */
LC_TEST(copy_refuses_before_the_first_attempt)
{
	struct lc_copy_opts o;
	struct lc_copy_result res;
	struct lc_err e;

	opts(&o);
	o.dest = "nohost.invalid:/x";
	o.config_file = "/nonexistent/ssh_config";
	o.retries = 3;
	o.update = 1;
	o.skip_existing = 1;
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_copy(&o, -1, &res, &e), -LC_ERR_USAGE);
	LC_CHECK(strstr(e.msg, "-u and -O do not go together") != NULL);
	LC_CHECK_EQ_U(res.attempts, 0);
}

LC_TEST_MAIN()
