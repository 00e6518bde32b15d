/*
 * A restricted agent dials only its SSH client's address
 * (lc_role_dial_check, role.c; lc_addr_same, stream.c).
 */
#include "harness.h"

#include "role.h"

#include "err.h"
#include "stream.h"

#include <string.h>

static const char lc_refusal[] = "data streams: refused by the restricted "
    "agent (it dials only the address its SSH client connects from)";

static int
check(const char *only, int restricted, const char *ask, char *out)
{
	struct lc_role_port p;
	struct lc_err e;
	int r;

	memset(&p, 0, sizeof(p));
	p.set.dial_restricted = restricted;
	snprintf(p.set.dial_only, sizeof(p.set.dial_only), "%s", only);
	snprintf(out, LC_ADDR_MAX, "%s", ask);
	lc_err_clear(&e);
	r = lc_role_dial_check(&p, out, LC_ADDR_MAX, &e);
	if (r != 0) {
		LC_CHECK_EQ_I(r, -LC_ERR_NOPATH);
		LC_CHECK_STR(e.msg, lc_refusal);	/* names no target */
	}
	return r;
}

LC_TEST(addr_same)
{
	LC_CHECK(lc_addr_same("127.0.0.1", "127.0.0.1"));
	LC_CHECK(lc_addr_same("127.0.0.1", "::ffff:127.0.0.1"));
	LC_CHECK(lc_addr_same("2001:db8::1", "2001:DB8:0::1"));
	LC_CHECK(!lc_addr_same("127.0.0.1", "127.0.0.2"));
	LC_CHECK(!lc_addr_same("127.0.0.1", "127.1"));	/* no shorthand */
	LC_CHECK(!lc_addr_same("127.0.0.1", "2130706433"));
	LC_CHECK(!lc_addr_same("fe80::1", "fe80::1%lo"));	/* no scope */
	LC_CHECK(!lc_addr_same("localhost", "localhost"));	/* no names */
	LC_CHECK(!lc_addr_same("", ""));
}

LC_TEST(unrestricted_dials_anything)
{
	char out[LC_ADDR_MAX];

	LC_CHECK_EQ_I(check("", 0, "192.0.2.7", out), 0);
	LC_CHECK_STR(out, "192.0.2.7");
}

LC_TEST(restricted_dials_only_its_client)
{
	char out[LC_ADDR_MAX];

	LC_CHECK_EQ_I(check("127.0.0.1", 1, "127.0.0.1", out), 0);
	/* the same address written otherwise: the checked one is dialled */
	LC_CHECK_EQ_I(check("127.0.0.1", 1, "::ffff:127.0.0.1", out), 0);
	LC_CHECK_STR(out, "127.0.0.1");
	LC_CHECK_EQ_I(check("127.0.0.1", 1, "127.0.0.2", out),
	    -LC_ERR_NOPATH);
	LC_CHECK_EQ_I(check("127.0.0.1", 1, "127.1", out), -LC_ERR_NOPATH);
	LC_CHECK_EQ_I(check("2001:db8::1", 1, "2001:db8::2", out),
	    -LC_ERR_NOPATH);
	/* no SSH_CONNECTION: nothing at all */
	LC_CHECK_EQ_I(check("", 1, "127.0.0.1", out), -LC_ERR_NOPATH);
	LC_CHECK_EQ_I(check("", 1, "", out), -LC_ERR_NOPATH);
}

LC_TEST_MAIN()
