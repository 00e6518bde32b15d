/*
 * Fan-out (--also, src/ctl/fanout.c): what it refuses before any target
 * is tried, each with a message naming the target or option; the exit
 * status of a run from its targets'; a target that fails does not stop
 * the next; the --json array (one object per target, "target" first)
 * and the single copy's object unchanged.
 */
#include "harness.h"

#include "copy.h"
#include "err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *one_file[] = { "a" };
static const char *remote_src[] = { "h0:/a" };
static const char *stdin_src[] = { "-" };
static const char *two_also[] = { "h2:/y/", "h3:/z/" };

/* a good fan-out of one local file to three remote targets */
static void
opts(struct lc_copy_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sources = one_file;
	o->nsources = 1;
	o->dest = "h1:/x/";
	o->also = two_also;
	o->nalso = 2;
	o->streams = 4;
	o->block = 1 << 20;
}

/* o is refused before any target is tried, and the message has want */
static int
refused(const struct lc_copy_opts *o, const char *want)
{
	struct lc_err e;

	lc_err_clear(&e);
	if (lc_copy_fanout_check(o, &e) != -LC_ERR_USAGE ||
	    e.code != LC_ERR_USAGE || strstr(e.msg, want) == NULL) {
		fprintf(stderr, "want \"%s\", got \"%s\"\n", want, e.msg);
		return 0;
	}
	return 1;
}

LC_TEST(good_sets_pass)
{
	struct lc_copy_opts o;
	struct lc_err e;

	opts(&o);
	LC_CHECK_EQ_I(lc_copy_fanout_check(&o, &e), 0);
	o.recursive = 1;
	o.preserve = 1;
	o.update = 1;
	o.resume = 1;
	o.delete_extra = 1;
	o.json = 1;
	o.zlevel = 1;
	o.retries = 2;
	LC_CHECK_EQ_I(lc_copy_fanout_check(&o, &e), 0);
}

LC_TEST(each_refusal_names_it)
{
	static const char *same[] = { "h2:/y/", "h1:/x/" };
	static const char *local[] = { "/tmp/x" };
	static const char *dash[] = { "-" };
	static const char *empty[] = { "" };
	static const char *badhost[] = { "a@@:x" };
	static const char *many[LC_ALSO_MAX + 1];
	struct lc_copy_opts o;

	opts(&o);
	o.also = same;
	LC_CHECK(refused(&o, "--also h1:/x/: the same target as h1:/x/"));
	opts(&o);
	o.also = local;
	o.nalso = 1;
	LC_CHECK(refused(&o, "the target /tmp/x is local"));
	opts(&o);
	o.dest = "/tmp/x";
	LC_CHECK(refused(&o, "the target /tmp/x is local"));
	opts(&o);
	o.also = dash;
	o.nalso = 1;
	LC_CHECK(refused(&o, "the target '-'"));
	opts(&o);
	o.also = empty;
	o.nalso = 1;
	LC_CHECK(refused(&o, "an empty target"));
	opts(&o);
	o.also = badhost;
	o.nalso = 1;
	LC_CHECK(refused(&o, "a@@:x: empty host name"));
	opts(&o);
	o.sources = remote_src;
	LC_CHECK(refused(&o, "the source h0:/a is remote"));
	opts(&o);
	o.sources = stdin_src;
	LC_CHECK(refused(&o, "the source '-'"));
	opts(&o);
	o.prog_dst = 1;
	LC_CHECK(refused(&o, "-N"));
	opts(&o);
	o.path = LC_PATH_RELAY;
	LC_CHECK(refused(&o, "--relay"));
	/* each target's pairing rules, as lc_copy's */
	opts(&o);
	o.update = 1;
	o.skip_existing = 1;
	LC_CHECK(refused(&o, "-u and -O do not go together"));
	opts(&o);
	for (size_t i = 0; i < LC_ALSO_MAX + 1; i++)
		many[i] = "h9:/m/";
	o.also = many;
	o.nalso = LC_ALSO_MAX + 1;
	LC_CHECK(refused(&o, "more than 16 --also targets"));
}

LC_TEST(status_of_the_run)
{
	struct lc_fanout_target t[3];

	memset(t, 0, sizeof(t));
	LC_CHECK_EQ_I(lc_copy_fanout_status(t, 3, 0), 0);
	t[1].status = 10;
	LC_CHECK_EQ_I(lc_copy_fanout_status(t, 3, 0), 23);
	t[0].status = t[2].status = 10;
	LC_CHECK_EQ_I(lc_copy_fanout_status(t, 3, 0), 10);
	t[2].status = 3;
	LC_CHECK_EQ_I(lc_copy_fanout_status(t, 3, 0), 23);
	LC_CHECK_EQ_I(lc_copy_fanout_status(t, 3, 130), 130);
}

/*
 * Two targets that cannot be reached (the ssh_config does not exist):
 * both are tried, in order, the second after the first failed, and the
 * run is -LC_ERR_PARTIAL naming the count.
 */
LC_TEST(a_failed_target_does_not_stop_the_next)
{
	static const char *also[] = { "nohost2.invalid:/y/" };
	struct lc_fanout_target t[2];
	struct lc_copy_opts o;
	struct lc_err e;

	opts(&o);
	o.dest = "nohost1.invalid:/x/";
	o.also = also;
	o.nalso = 1;
	o.config_file = "/nonexistent/ssh_config";
	o.batch = 1;
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_copy_fanout(&o, -1, t, &e), -LC_ERR_PARTIAL);
	LC_CHECK(strstr(e.msg, "2 of 2 targets incomplete") != NULL);
	LC_CHECK(t[0].started && t[1].started);
	LC_CHECK(t[0].r != 0 && t[1].r != 0);
	LC_CHECK_STR(t[0].dest, "nohost1.invalid:/x/");
	LC_CHECK_STR(t[1].dest, "nohost2.invalid:/y/");
	LC_CHECK(t[0].e.code != 0 && t[1].e.code != 0);
	/* the chain (its copies at once: one file to DIR/ targets): target
	   2 from this host, target 1 being incomplete, or its own hop
	   having failed first */
	LC_CHECK(t[0].from == NULL && t[1].from == NULL);
	LC_CHECK_STR(t[0].from_why, "");
	LC_CHECK(strstr(t[1].from_why,
		     "target 1 nohost1.invalid:/x/ "
		     "incomplete") != NULL ||
	    strstr(t[1].from_why,
		"the hop from nohost1.invalid:/x/ failed: cannot open "
		"ssh config") != NULL);
	lc_copy_fanout_free(t, 2);
}

/* What lc_copy_fanout_report wrote, NUL-terminated, in a heap buffer. */
static char *
capture_report(const struct lc_copy_opts *o, struct lc_fanout_target *t,
    size_t n)
{
	char path[] = "/tmp/test_fanout.XXXXXX";
	char *out = NULL;
	long len;
	FILE *f;
	int fd = mkstemp(path);

	if (fd < 0)
		return NULL;
	unlink(path);
	lc_copy_fanout_report(fd, o, t, n);
	len = lseek(fd, 0, SEEK_END);
	if (len >= 0 && (out = calloc(1, (size_t)len + 1)) != NULL &&
	    (f = fdopen(fd, "r")) != NULL) {
		rewind(f);
		if (fread(out, 1, (size_t)len, f) != (size_t)len)
			out[0] = '\0';
		fclose(f);
		return out;
	}
	close(fd);
	return out;
}

LC_TEST(json_is_an_array_of_targets)
{
	static const char head[] =
	    "[{\"target\":\"h1:/x/\",\"from\":"
	    "\"this host\",\"from_why\":\"\",\"followed\":0,\"type\":"
	    "\"result\",\"ok\":true,\"files\":4,";
	struct lc_fanout_target t[3];
	struct lc_copy_opts o;
	char *s;

	opts(&o);
	o.json = 1;
	memset(t, 0, sizeof(t));
	t[0].dest = "h1:/x/";
	t[1].dest = "h2:/y/";
	t[2].dest = "h3:/\"z/";
	t[0].started = t[1].started = t[2].started = 1;
	t[1].from = "h1:/x/";
	snprintf(t[2].from_why, sizeof(t[2].from_why),
	    "target 2 h2:/y/ "
	    "incomplete");
	t[1].r = -LC_ERR_NOSPACE;
	lc_err_set(&t[1].e, LC_ERR_NOSPACE, "no space left");
	t[1].status = 10;
	t[0].res.files = 4;
	s = capture_report(&o, t, 3);
	LC_CHECK(s != NULL);
	LC_CHECK(strncmp(s, head, strlen(head)) == 0);
	LC_CHECK(strstr(s,
		     "},{\"target\":\"h2:/y/\",\"from\":\"h1:/x/\","
		     "\"from_why\":\"\",\"followed\":0,\"type\":\"result\","
		     "\"ok\":false,") != NULL);
	LC_CHECK(strstr(s, "\"exit_status\":10,\"error\":\"no space left\"}") !=
	    NULL);
	LC_CHECK(strstr(s,
		     "{\"target\":\"h3:/\\\"z/\",\"from\":\"this "
		     "host\",\"from_why\":\"target 2 h2:/y/ "
		     "incomplete\",\"followed\":0,") != NULL);
	LC_CHECK(strlen(s) > 3 && strcmp(s + strlen(s) - 3, "}]\n") == 0);
	LC_CHECK(strchr(s, '\n') == s + strlen(s) - 1);
	free(s);
}

/* What one lc_json_progress line of p was, in out (NUL-terminated). */
static int
capture_progress(const struct lc_json_progress *p, char *out, size_t outsz)
{
	char path[] = "/tmp/test_fanout.XXXXXX";
	int fd = mkstemp(path);
	ssize_t len;

	if (fd < 0)
		return -1;
	unlink(path);
	lc_json_progress(fd, p);
	len = pread(fd, out, outsz - 1, 0);
	close(fd);
	if (len < 0)
		return -1;
	out[len] = '\0';
	return 0;
}

LC_TEST(json_progress_names_the_target)
{
	static const char plain[] =
	    "{\"type\":\"progress\",\"elapsed\":1.500,"
	    "\"bytes\":10,\"total\":20,\"total_final\":"
	    "true,\"rate\":5,\"files\":1,\"files_total\":"
	    "2,\"streams\":4}\n";
	struct lc_json_progress p;
	char s[1024];

	memset(&p, 0, sizeof(p));
	p.elapsed_ns = 1500000000;
	p.bytes = 10;
	p.total = 20;
	p.total_final = 1;
	p.rate = 5;
	p.files = 1;
	p.files_total = 2;
	p.streams = 4;
	/* without --also: as before, no target members */
	LC_CHECK_EQ_I(capture_progress(&p, s, sizeof(s)), 0);
	LC_CHECK_STR(s, plain);
	/* --also: the target right after the type, escaped */
	p.target = "h3:/\"z/";
	p.target_i = 3;
	p.target_n = 3;
	LC_CHECK_EQ_I(capture_progress(&p, s, sizeof(s)), 0);
	LC_CHECK(
	    strncmp(s,
		"{\"type\":\"progress\",\"target\":\"h3:/\\\"z/\","
		"\"target_index\":3,\"targets\":3,\"elapsed\":1.500,",
		strlen(
		    "{\"type\":\"progress\",\"target\":\"h3:/\\\"z/\","
		    "\"target_index\":3,\"targets\":3,\"elapsed\":1.500,")) ==
	    0);
	LC_CHECK(strcmp(s + strlen(s) - strlen("\"streams\":4}\n"),
		     "\"streams\":4}\n") == 0);
}

/* hop h's sources are want[0..n), each once */
static int
hop_is(const struct lc_copy_opts *o, const char *target,
    const char *const *want, size_t n)
{
	struct lc_fanout_hop h;
	char why[240];
	int ok;

	if (lc_copy_fanout_hop_sources(o, target, &h, why, sizeof(why)) != 0) {
		fprintf(stderr, "hop from %s: %s\n", target, why);
		return 0;
	}
	ok = h.n == n;
	for (size_t i = 0; ok && i < n; i++)
		ok = strcmp(h.src[i], want[i]) == 0;
	for (size_t i = 0; !ok && i < h.n; i++)
		fprintf(stderr, "hop source %zu: %s\n", i, h.src[i]);
	lc_copy_fanout_hop_free(&h);
	return ok;
}

/* hop from target refused, why has want */
static int
hop_refused(const struct lc_copy_opts *o, const char *target, const char *want)
{
	struct lc_fanout_hop h;
	char why[240] = "";

	if (lc_copy_fanout_hop_sources(o, target, &h, why, sizeof(why)) == 0) {
		lc_copy_fanout_hop_free(&h);
		return 0;
	}
	return strstr(why, want) != NULL;
}

LC_TEST(hop_sources_are_the_targets_copies)
{
	static const char *tree[] = { "/data/set", "rel/dir/", "./b", "c//" };
	static const char *dup[] = { "x/", "y/" };
	static const char *names[] = { "/data/set", "./b", "c//x" };
	static const char *w1[] = { "u@h1:/t/set", "u@h1:/t/b", "u@h1:/t/x" };
	static const char *w2[] = { "h1:/t/x" };
	static const char *w4[] = { "ssh://h1:2222/t/x" };
	struct lc_copy_opts o;

	opts(&o);
	/* one file to a directory: DIR/NAME */
	LC_CHECK(hop_is(&o, "h1:/t/", (const char *[]){ "h1:/t/a" }, 1));
	LC_CHECK(hop_is(&o, "h1:/t/x", (const char *[]){ "h1:/t/x" }, 0) == 0);
	LC_CHECK(hop_refused(&o, "h1:/t/x", "may be a file or a directory"));
	/* -r: NAME into the target, NAME/ its contents; each once */
	o.recursive = 1;
	o.sources = tree;
	o.nsources = 4;
	/* a source's contents (dir/): the target directory holds them all */
	LC_CHECK(hop_is(&o, "u@h1:/t", (const char *[]){ "u@h1:/t/" }, 1));
	o.sources = names;
	o.nsources = 3;
	LC_CHECK(hop_is(&o, "u@h1:/t", w1, 3));
	o.sources = dup;
	o.nsources = 2;
	LC_CHECK(hop_is(&o, "[::1]:/t/", (const char *[]){ "[::1]:/t/" }, 1));
	/* the home directory: its path is not in the operand, so no hop */
	LC_CHECK(hop_refused(&o, "h1:", "cannot name what h1: holds"));
	o.sources = (const char *[]){ "x" };
	o.nsources = 1;
	LC_CHECK(hop_is(&o, "h1:/t", w2, 1));
	LC_CHECK(hop_is(&o, "ssh://h1:2222/t", w4, 1));
	/* names it cannot know */
	o.sources = (const char *[]){ "." };
	LC_CHECK(hop_refused(&o, "h1:/t/", "cannot name the copy of ."));
	o.sources = (const char *[]){ "/" };
	LC_CHECK(hop_is(&o, "h1:/t/", (const char *[]){ "h1:/t/" }, 1));
	o.recursive = 0;
	o.sources = (const char *[]){ "d/" };
	LC_CHECK(hop_refused(&o, "h1:/t/", "ends in '/' without -r"));
}

LC_TEST(single_json_unchanged)
{
	struct lc_copy_result res;
	struct lc_copy_opts o;
	char path[] = "/tmp/test_fanout.XXXXXX", buf[64];
	int fd = mkstemp(path);

	LC_CHECK(fd >= 0);
	unlink(path);
	opts(&o);
	memset(&res, 0, sizeof(res));
	lc_copy_json(fd, &o, &res, NULL, 0);
	LC_CHECK(pread(fd, buf, 17, 0) == 17);
	buf[17] = '\0';
	LC_CHECK_STR(buf, "{\"type\":\"result\",");
	close(fd);
}

LC_TEST_MAIN()
