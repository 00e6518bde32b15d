#include "harness.h"

#include "confine.h"
#include "err.h"

#include <fcntl.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char lc_root[256];
static struct lc_confine lc_conf;

static void
unjail(void)
{
	lc_confine_free(&lc_conf);
	lc_test_rm_tree(lc_root);
}

/* A confinement to a fresh directory (lc_root) with a file "f" in it. */
static void
jail(void)
{
	struct lc_err e;
	char f[300];
	int fd;

	snprintf(lc_root, sizeof(lc_root), "/tmp/lc_confine.XXXXXX");
	LC_CHECK(mkdtemp(lc_root) != NULL);
	atexit(unjail);
	snprintf(f, sizeof(f), "%s/f", lc_root);
	LC_CHECK((fd = open(f, O_CREAT | O_WRONLY, 0600)) >= 0);
	close(fd);
	lc_err_clear(&e);
	LC_CHECK(lc_confine_init(&lc_conf, lc_root, &e) == 0);
}

/* in refused with exactly "in: refused by the restricted agent" */
static void
refused(const char *in)
{
	char out[4096], want[600];
	struct lc_err e;

	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_confine_user_path(&lc_conf, in, 1, out, sizeof(out),
	    &e), -LC_ERR_DENIED);
	snprintf(want, sizeof(want), "%s: refused by the restricted agent",
	    in);
	LC_CHECK_STR(e.msg, want);
	LC_CHECK_EQ_I(e.code, LC_ERR_DENIED);
}

static void
allowed(const char *in, const char *want)
{
	char out[4096];
	struct lc_err e;

	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_confine_user_path(&lc_conf, in, 1, out, sizeof(out),
	    &e), 0);
	LC_CHECK_STR(out, want);
}

LC_TEST(confined_tilde_user_is_never_told_apart)
{
	jail();
	setenv("HOME", "/elsewhere", 1);
	/* an account that exists, one that does not: the same answer */
	refused("~root/x");
	refused("~lanecp-no-such-user/x");
	refused("~root");
	refused("~lanecp-no-such-user");
	refused("~daemon/.profile");
	/* our own home outside the root */
	refused("~/x");
	refused("~");
}

LC_TEST(confined_home_inside)
{
	struct passwd *pw = getpwuid(getuid());
	char in[300], want[600];

	LC_CHECK(pw != NULL);
	jail();
	setenv("HOME", lc_root, 1);
	snprintf(want, sizeof(want), "%s/x", lc_root);
	allowed("~/x", want);
	allowed("~", lc_root);
	/* ~NAME with our own name is "~" */
	snprintf(in, sizeof(in), "~%s/x", pw->pw_name);
	allowed(in, want);
	setenv("HOME", "/elsewhere", 1);
	refused(in);
}

LC_TEST(confined_paths)
{
	char in[600];
	int fd = -1;
	struct lc_err e;

	jail();
	refused("/etc/passwd");
	refused("/");
	allowed("f", "f");
	allowed("../x", "../x");	/* lexically relative: openat2 decides */
	snprintf(in, sizeof(in), "%s/f", lc_root);
	allowed(in, in);
	snprintf(in, sizeof(in), "%sx/f", lc_root);	/* a sibling */
	refused(in);
	/* and lc_confine_open says the same for an escape it finds */
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_confine_open(&lc_conf, -1, "../x", O_RDONLY, 0, &fd,
	    &e), -LC_ERR_DENIED);
	LC_CHECK_STR(e.msg, "../x: refused by the restricted agent");
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_confine_open(&lc_conf, -1, "/etc/passwd", O_RDONLY,
	    0, &fd, &e), -LC_ERR_DENIED);
	LC_CHECK_STR(e.msg, "/etc/passwd: refused by the restricted agent");
	LC_CHECK_EQ_I(fd, -1);
}

LC_TEST(unconfined_keeps_the_helpful_messages)
{
	struct lc_confine none;
	struct lc_err e;
	char out[4096];

	lc_err_clear(&e);
	LC_CHECK(lc_confine_init(&none, NULL, &e) == 0);
	LC_CHECK_EQ_I(lc_confine_user_path(&none, "~lanecp-no-such-user/x", 1,
	    out, sizeof(out), &e), -LC_ERR_IO);
	LC_CHECK(strstr(e.msg, "~lanecp-no-such-user: no such user") != NULL);
	setenv("HOME", "/h", 1);
	LC_CHECK_EQ_I(lc_confine_user_path(&none, "~/x", 1, out, sizeof(out),
	    &e), 0);
	LC_CHECK_STR(out, "/h/x");
	/* the in-process agent: no ~ expansion */
	LC_CHECK_EQ_I(lc_confine_user_path(&none, "~/x", 0, out, sizeof(out),
	    &e), 0);
	LC_CHECK_STR(out, "~/x");
}

LC_TEST_MAIN()
