#include "harness.h"

#include "err.h"
#include "path.h"

#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
expand(const char *in, const char *want)
{
	char out[256];
	struct lc_err e;

	lc_err_clear(&e);
	if (lc_path_expand_tilde(in, out, sizeof(out), &e) != 0) {
		fprintf(stderr, "%s: %s\n", in, e.msg);
		LC_CHECK(0);
	}
	LC_CHECK_STR(out, want);
}

LC_TEST(tilde_home)
{
	setenv("HOME", "/srv/home dir", 1);
	expand("~", "/srv/home dir");
	expand("~/", "/srv/home dir/");
	expand("~/backups/x", "/srv/home dir/backups/x");
	setenv("HOME", "/srv/h/", 1);	/* a trailing slash: one, not two */
	expand("~/x", "/srv/h/x");
	setenv("HOME", "/", 1);
	expand("~/x", "/x");
	expand("~", "/");
}

LC_TEST(tilde_unchanged)
{
	setenv("HOME", "/h", 1);
	expand("/abs/~/x", "/abs/~/x");
	expand("rel/~x", "rel/~x");
	expand(".", ".");
	expand("a b $(x) `y`;*", "a b $(x) `y`;*");	/* no shell here */
	expand("", "");
}

LC_TEST(tilde_user)
{
	struct passwd *pw = getpwuid(getuid());
	char in[300], want[300];

	LC_CHECK(pw != NULL);
	setenv("HOME", "/not/the/password/file", 1);
	snprintf(in, sizeof(in), "~%s/x y", pw->pw_name);
	snprintf(want, sizeof(want), "%s%sx y", pw->pw_dir,
	    strcmp(pw->pw_dir, "/") == 0 ? "" : "/");
	expand(in, want);
	/* HOME not absolute (or unset): the password file's */
	setenv("HOME", "relative", 1);
	expand("~", pw->pw_dir);
	unsetenv("HOME");
	expand("~", pw->pw_dir);
}

LC_TEST(tilde_errors)
{
	char out[16];
	struct lc_err e;

	lc_err_clear(&e);
	LC_CHECK(lc_path_expand_tilde("~lanecp-no-such-user/x", out,
	    sizeof(out), &e) == -LC_ERR_IO);
	LC_CHECK(strstr(e.msg, "~lanecp-no-such-user: no such user") != NULL);
	setenv("HOME", "/a/rather/long/home", 1);
	lc_err_clear(&e);
	LC_CHECK(lc_path_expand_tilde("~/x", out, sizeof(out), &e) ==
	    -LC_ERR_IO);
	LC_CHECK(strstr(e.msg, "name too long") != NULL);
	lc_err_clear(&e);
	LC_CHECK(lc_path_expand_tilde("0123456789abcdef", out, sizeof(out),
	    &e) == -LC_ERR_IO);
}

LC_TEST_MAIN()
