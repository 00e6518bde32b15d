#include "harness.h"

#include "err.h"
#include "location.h"

#include <string.h>

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

static void
url(const char *arg, const char *user, const char *host, unsigned port,
    const char *path)
{
	struct lc_location l;

	parse(arg, user, host, path);
	LC_CHECK(lc_location_parse(arg, &l, NULL) == 0);
	LC_CHECK_EQ_U(l.port, port);
}

/* ssh://[user@]host[:port][/path] as scp's URI form (issue 24 item 4) */
LC_TEST(url_forms)
{
	url("ssh://host/data", "", "host", 0, "data");
	url("ssh://host//srv/data/", "", "host", 0, "/srv/data/");
	url("ssh://me@host:2501/x", "me", "host", 2501, "x");
	url("scp://me@host:2501//abs", "me", "host", 2501, "/abs");
	url("ssh://host:22", "", "host", 22, ".");
	url("ssh://host/", "", "host", 0, ".");
	url("ssh://host:/f", "", "host", 0, "f");
	url("ssh://[::1]:2501/tmp/x", "", "::1", 2501, "tmp/x");
	url("ssh://u@[fe80::1]/y", "u", "fe80::1", 0, "y");
	url("ssh://host:65535/a%20b%2Fc%25", "", "host", 65535, "a b/c%");
	url("ssh://a%40b@host/p:q", "a@b", "host", 0, "p:q");
	/* a colon in the path is a path */
	url("ssh://host/2501:x", "", "host", 0, "2501:x");
}

LC_TEST(url_bad_forms)
{
	static const char *const bad[] = { "ssh://host:0/x",
		"ssh://host:65536/x", "ssh://host:99999999999999999999/x",
		"ssh://host:25a/x", "ssh://host:-1/x", "ssh://@host/x",
		"ssh:///x", "ssh://", "ssh://:22/x", "ssh://[::1/x",
		"ssh://[::1]x/y", "ssh://host/%", "ssh://host/%4",
		"ssh://host/%zz", "ssh://host/a%00b",
		"ssh://-oProxyCommand=x/y",
		/* scp reads the path "2501:x"; a port was surely meant */
		"host:2501:x", "u@host:22:/srv", "[::1]:2501:x" };
	struct lc_location l;
	struct lc_err e;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		lc_err_clear(&e);
		if (lc_location_parse(bad[i], &l, &e) != -LC_ERR_USAGE) {
			fprintf(stderr, "accepted: %s\n", bad[i]);
			LC_CHECK(0);
		}
	}
	LC_CHECK(lc_location_parse("host:2501:x", &l, &e) == -LC_ERR_USAGE);
	LC_CHECK(strstr(e.msg, "ssh://[user@]host:2501/path") != NULL);
	LC_CHECK(strstr(e.msg, "host:./2501:x") != NULL);
	/* not a port: kept as scp reads them */
	parse("host:2501", "", "host", "2501");
	parse("host:./2501:x", "", "host", "./2501:x");
	parse("host:123456:x", "", "host", "123456:x");
	parse("host:a1:x", "", "host", "a1:x");
}

LC_TEST(same_host_port)
{
	struct lc_location a, b;

	LC_CHECK(lc_location_parse("ssh://h:2501/x", &a, NULL) == 0);
	LC_CHECK(lc_location_parse("ssh://h:2502/y", &b, NULL) == 0);
	LC_CHECK(!lc_location_same_host(&a, &b));
	LC_CHECK(lc_location_parse("ssh://h:2501/y", &b, NULL) == 0);
	LC_CHECK(lc_location_same_host(&a, &b));
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
