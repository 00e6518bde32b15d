#include "harness.h"

#include "err.h"
#include "log.h"
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

/* s made printable by lc_printable, as a NUL-terminated string. */
static const char *
shown(const char *s, size_t outsz)
{
	static char out[256];

	lc_printable(s, out, outsz < sizeof(out) ? outsz : sizeof(out));
	return out;
}

/* Issue 24: valid UTF-8 as it is, everything else \xNN, one style. */
LC_TEST(printable)
{
	char twice[256];

	LC_CHECK_STR(shown("plain name.txt", 256), "plain name.txt");
	/* U+00FC, U+20AC, U+1F600: kept */
	LC_CHECK_STR(shown("\xc3\xbc \xe2\x82\xac \xf0\x9f\x98\x80", 256),
	    "\xc3\xbc \xe2\x82\xac \xf0\x9f\x98\x80");
	/* controls, DEL, stray and invalid bytes: a byte each */
	LC_CHECK_STR(shown("a\nb\x1b[2J\x7f", 256), "a\\x0ab\\x1b[2J\\x7f");
	LC_CHECK_STR(shown("x\xffy\x80z", 256), "x\\xffy\\x80z");
	/* overlong, surrogate, past U+10FFFF, cut short: invalid */
	LC_CHECK_STR(shown("\xc0\xaf", 256), "\\xc0\\xaf");
	LC_CHECK_STR(shown("\xed\xa0\x80", 256), "\\xed\\xa0\\x80");
	LC_CHECK_STR(shown("\xf4\x90\x80\x80", 256),
	    "\\xf4\\x90\\x80\\x80");
	LC_CHECK_STR(shown("\xe2\x82", 256), "\\xe2\\x82");
	/* valid, but acts on the terminal or the line: C1, RLO, U+2028 */
	LC_CHECK_STR(shown("\xc2\x9b" "1m", 256), "\\xc2\\x9b" "1m");
	LC_CHECK_STR(shown("a\xe2\x80\xae" "b", 256),
	    "a\\xe2\\x80\\xae" "b");
	LC_CHECK_STR(shown("\xe2\x80\xa8", 256), "\\xe2\\x80\\xa8");
	/* a backslash is kept, so escaping twice changes nothing */
	snprintf(twice, sizeof(twice), "%s", shown("a\\b\n\xff", 256));
	LC_CHECK_STR(twice, "a\\b\\x0a\\xff");
	LC_CHECK_STR(shown(twice, 256), twice);
	/* cut short: never half a character or half an escape */
	LC_CHECK_STR(shown("ab\xc3\xbc", 4), "ab");
	LC_CHECK_STR(shown("ab\n", 6), "ab");
	LC_CHECK_STR(shown("ab\n", 7), "ab\\x0a");
}

LC_TEST_MAIN()
