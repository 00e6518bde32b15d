#include "harness.h"

#include "err.h"
#include "location.h"

static void
parse(const char *arg, const char *user, const char *host, const char *path)
{
	struct lc_location l;
	struct lc_err e;

	if (lc_location_parse(arg, &l, &e) != 0) {
		fprintf(stderr, "%s: %s\n", arg, e.msg);
		LC_CHECK(0);
	}
	LC_CHECK_STR(l.user, user);
	LC_CHECK_STR(l.host, host);
	LC_CHECK_STR(l.path, path);
}

LC_TEST(remote_forms)
{
	parse("host:/data/", "", "host", "/data/");
	parse("user@host:/p", "user", "host", "/p");
	parse("a@b@host:x", "a@b", "host", "x");
	parse("host:", "", "host", ".");
	parse("[::1]:/tmp/x", "", "::1", "/tmp/x");
	parse("me@[fe80::1]:f", "me", "fe80::1", "f");
	parse("host:path:with:colons", "", "host", "path:with:colons");
}

LC_TEST(local_forms)
{
	parse("/abs/path", "", "", "/abs/path");
	parse("relative", "", "", "relative");
	parse("./a:b", "", "", "./a:b");
	parse("dir/a:b", "", "", "dir/a:b");
	parse(":weird", "", "", ":weird");
	parse("[notv6", "", "", "[notv6");
}

LC_TEST(bad_forms)
{
	struct lc_location l;
	struct lc_err e;

	LC_CHECK(lc_location_parse("", &l, &e) == -LC_ERR_USAGE);
	LC_CHECK(lc_location_parse("@host:x", &l, &e) == -LC_ERR_USAGE);
	LC_CHECK(lc_location_parse("user@:x", &l, &e) == -LC_ERR_USAGE);
}

LC_TEST_MAIN()
