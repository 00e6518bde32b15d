/*
 * filter.c: rsync's pattern rules (the examples of rsync(1)'s "PATTERN
 * MATCHING RULES" and "INCLUDE/EXCLUDE PATTERN RULES"), first match
 * wins, directories only, the ancestors of a name, --exclude-from.
 */
#include "harness.h"

#include "err.h"
#include "filter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 1 if the one exclude rule pat excludes name. */
static int
ex1(const char *pat, const char *name, int is_dir)
{
	struct lc_filters f = { 0 };
	struct lc_err e;
	int r;

	lc_err_clear(&e);
	if (lc_filters_add(&f, LC_FILTER_EXCLUDE, pat, &e) != 0) {
		fprintf(stderr, "%s: %s\n", pat, e.msg);
		return -1;
	}
	r = lc_filters_excluded(&f, name, is_dir);
	lc_filters_free(&f);
	return r;
}

LC_TEST(leaf_patterns)
{
	/* no '/': the last component, at any depth */
	LC_CHECK(ex1("*.tmp", "a.tmp", 0) == 1);
	LC_CHECK(ex1("*.tmp", "src/x/a.tmp", 0) == 1);
	LC_CHECK(ex1("*.tmp", "src/a.tmpx", 0) == 0);
	LC_CHECK(ex1("*.tmp", "d.tmp/f", 0) == 0); /* leaf is f */
	LC_CHECK(ex1("foo", "x/foo", 1) == 1);
	LC_CHECK(ex1("foo", "x/foobar", 0) == 0);
	LC_CHECK(ex1("?.o", "a/b.o", 0) == 1);
	LC_CHECK(ex1("?.o", "a/bb.o", 0) == 0);
	LC_CHECK(ex1("[ab].c", "z/b.c", 0) == 1);
	LC_CHECK(ex1("[ab].c", "z/c.c", 0) == 0);
	LC_CHECK(ex1("[!ab].c", "z/c.c", 0) == 1);
	LC_CHECK(ex1("\\*", "*", 0) == 1); /* escaped */
	LC_CHECK(ex1("\\*", "a", 0) == 0);
	LC_CHECK(ex1("*", ".hidden", 0) == 1); /* no FNM_PERIOD */
}

LC_TEST(dir_only)
{
	LC_CHECK(ex1("cache/", "a/cache", 1) == 1);
	LC_CHECK(ex1("cache/", "a/cache", 0) == 0);
	LC_CHECK(ex1("/a/b/", "a/b", 1) == 1);
	LC_CHECK(ex1("/a/b/", "a/b", 0) == 0);
}

LC_TEST(slash_patterns)
{
	/* a '/' inside: the whole name, or a tail starting a component */
	LC_CHECK(ex1("foo/bar", "foo/bar", 0) == 1);
	LC_CHECK(ex1("foo/bar", "x/foo/bar", 0) == 1);
	LC_CHECK(ex1("foo/bar", "xfoo/bar", 0) == 0);
	LC_CHECK(ex1("foo/bar", "foo/bar/baz", 0) == 0);
	/* '*' does not cross '/' */
	LC_CHECK(ex1("foo/*/bar", "foo/x/bar", 0) == 1);
	LC_CHECK(ex1("foo/*/bar", "foo/x/y/bar", 0) == 0);
	LC_CHECK(ex1("sub/*", "sub/a", 0) == 1);
	LC_CHECK(ex1("sub/*", "sub/a/b", 0) == 0);
	/* anchored: from the root only */
	LC_CHECK(ex1("/foo", "foo", 0) == 1);
	LC_CHECK(ex1("/foo", "x/foo", 0) == 0);
	LC_CHECK(ex1("/src/*.c", "src/a.c", 0) == 1);
	LC_CHECK(ex1("/src/*.c", "x/src/a.c", 0) == 0);
}

LC_TEST(double_star)
{
	LC_CHECK(ex1("foo/**/bar", "foo/x/bar", 0) == 1);
	LC_CHECK(ex1("foo/**/bar", "foo/x/y/z/bar", 0) == 1);
	/*
	 * Not git's rule: rsync(1)'s own example, "- /foo/" "**" "/bar",
	 * excludes a bar "two or more levels below" foo, "/foo/bar is not
	 * excluded", and rsync 3.5 does so unanchored too ("**" between two
	 * '/'s is not zero directories).
	 */
	LC_CHECK(ex1("foo/**/bar", "foo/bar", 0) == 0);
	LC_CHECK(ex1("/foo/**/bar", "foo/bar", 0) == 0);
	LC_CHECK(ex1("foo/**/bar", "x/foo/bar", 0) == 0);
	LC_CHECK(ex1("/foo/**", "foo/a/b", 0) == 1);
	LC_CHECK(ex1("/foo/**", "x/foo/a", 0) == 0);
	LC_CHECK(ex1("**.log", "a/b/c.log", 0) == 1);
	LC_CHECK(ex1("**/*.log", "a/b/c.log", 0) == 1);
	LC_CHECK(ex1("**/*.log", "a/b/c.txt", 0) == 0);
	LC_CHECK(ex1("a**b**c", "a/x/b/y/c", 0) == 1);
	LC_CHECK(ex1("a**b**c", "a/x/c/y/b", 0) == 0);
	LC_CHECK(ex1("/a/**/*.o", "a/x/y/m.o", 0) == 1);
	LC_CHECK(ex1("/a/**/*.o", "a/x/y/m.c", 0) == 0);
}

LC_TEST(leading_double_star)
{
	/* rsync matches an unanchored "**..." against "/NAME": a top-level
	   name needs no directory before it */
	LC_CHECK(ex1("**/f", "f", 0) == 1);
	LC_CHECK(ex1("**/f", "a/b/f", 0) == 1);
	LC_CHECK(ex1("**/f", "a/bf", 0) == 0);
	LC_CHECK(ex1("**/a", "a", 1) == 1);
	/* anchored, it does need one */
	LC_CHECK(ex1("/**/f", "f", 0) == 0);
	LC_CHECK(ex1("/**/f", "a/f", 0) == 1);
}

LC_TEST(triple_star)
{
	/* DIR, '/', "***": DIR itself (as "DIR/") and everything below it */
	LC_CHECK(ex1("a/***", "a", 1) == 1);
	LC_CHECK(ex1("a/***", "a/b/f", 0) == 1);
	LC_CHECK(ex1("a/***", "z/a", 1) == 1); /* unanchored */
	LC_CHECK(ex1("a/***", "a", 0) == 0);   /* a file a: not a DIR */
	LC_CHECK(ex1("a/***", "ab", 1) == 0);
	LC_CHECK(ex1("/a/***", "z/a", 1) == 0);
	LC_CHECK(ex1("/a/***", "a/x", 0) == 1);
	LC_CHECK(ex1("**/a/***", "z/a", 1) == 1);
	LC_CHECK(ex1("**/a/***", "a/q", 0) == 1);
	LC_CHECK(ex1("q/***/", "q", 1) == 1);
	LC_CHECK(ex1("q/***/", "q/f", 0) == 0); /* '/': directories only */
	LC_CHECK(ex1("q/***/", "q/d", 1) == 1);
}

LC_TEST(first_match_wins)
{
	struct lc_filters f = { 0 };
	struct lc_err e;

	lc_err_clear(&e);
	/* rsync's example: keep *.c and the directories, drop the rest */
	LC_CHECK(lc_filters_add(&f, LC_FILTER_INCLUDE, "*.c", &e) == 0);
	LC_CHECK(lc_filters_add(&f, LC_FILTER_INCLUDE, "*/", &e) == 0);
	LC_CHECK(lc_filters_add(&f, LC_FILTER_EXCLUDE, "*", &e) == 0);
	LC_CHECK(lc_filters_excluded(&f, "d/x.c", 0) == 0);
	LC_CHECK(lc_filters_excluded(&f, "d/e", 1) == 0);
	LC_CHECK(lc_filters_excluded(&f, "d/x.h", 0) == 1);
	lc_filters_free(&f);
	/* "- " and "+ " choose the kind; an include before an exclude wins */
	LC_CHECK(lc_filters_add(&f, LC_FILTER_EXCLUDE, "+ keep.tmp", &e) == 0);
	LC_CHECK(lc_filters_add(&f, LC_FILTER_INCLUDE, "- *.tmp", &e) == 0);
	LC_CHECK(lc_filters_excluded(&f, "a/keep.tmp", 0) == 0);
	LC_CHECK(lc_filters_excluded(&f, "a/other.tmp", 0) == 1);
	LC_CHECK(lc_filters_excluded(&f, "a/other", 0) == 0);
	lc_filters_free(&f);
}

LC_TEST(ancestors)
{
	struct lc_filters f = { 0 };
	struct lc_err e;

	lc_err_clear(&e);
	LC_CHECK(lc_filters_add(&f, LC_FILTER_EXCLUDE, "cache/", &e) == 0);
	LC_CHECK(lc_filters_excluded_path(&f, "a/cache/x/y", 0) == 1);
	LC_CHECK(lc_filters_excluded_path(&f, "a/cache", 1) == 1);
	LC_CHECK(lc_filters_excluded_path(&f, "a/cache", 0) == 0);
	LC_CHECK(lc_filters_excluded_path(&f, "a/cachex/y", 0) == 0);
	lc_filters_free(&f);
}

LC_TEST(bounds)
{
	struct lc_filters f = { 0 };
	char big[LC_FILTER_PAT_MAX + 1];
	struct lc_err e;
	int i;

	lc_err_clear(&e);
	LC_CHECK(
	    lc_filters_add(&f, LC_FILTER_EXCLUDE, "", &e) == -LC_ERR_USAGE);
	LC_CHECK(
	    lc_filters_add(&f, LC_FILTER_EXCLUDE, "- ", &e) == -LC_ERR_USAGE);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	LC_CHECK(
	    lc_filters_add(&f, LC_FILTER_EXCLUDE, big, &e) == -LC_ERR_USAGE);
	for (i = 0; i < LC_FILTER_MAX; i++)
		LC_CHECK(lc_filters_add(&f, LC_FILTER_EXCLUDE, "x", &e) == 0);
	LC_CHECK(
	    lc_filters_add(&f, LC_FILTER_EXCLUDE, "x", &e) == -LC_ERR_USAGE);
	lc_filters_free(&f);
}

LC_TEST(exclude_from)
{
	char path[] = "/tmp/lc-filter-XXXXXX";
	struct lc_filters f = { 0 };
	const char *pat;
	struct lc_err e;
	FILE *fp;
	int fd;

	lc_err_clear(&e);
	LC_CHECK((fd = mkstemp(path)) >= 0);
	LC_CHECK((fp = fdopen(fd, "w")) != NULL);
	fputs("# comment\n\n; also\n*.tmp\r\n+ keep/\n/build\n", fp);
	fclose(fp);
	LC_CHECK(lc_filters_read(&f, LC_FILTER_EXCLUDE, path, &e) == 0);
	unlink(path);
	LC_CHECK_EQ_U(f.n, 3);
	LC_CHECK(lc_filters_rule(&f, 0, &pat) == LC_FILTER_EXCLUDE);
	LC_CHECK_STR(pat, "*.tmp");
	LC_CHECK(lc_filters_rule(&f, 1, &pat) == LC_FILTER_INCLUDE);
	LC_CHECK_STR(pat, "keep/");
	LC_CHECK(lc_filters_excluded(&f, "build", 1) == 1);
	LC_CHECK(lc_filters_excluded(&f, "x/build", 1) == 0);
	lc_filters_free(&f);
	LC_CHECK(lc_filters_read(&f, LC_FILTER_EXCLUDE, "/nonexistent/x", &e) ==
	    -LC_ERR_USAGE);
}

LC_TEST_MAIN()
