#include "harness.h"

#include "ssh_int.h"

#include <string.h>

#include <libssh2.h>

/*
 * The algorithms offered (ssh_algs.c): ssh's order, only what libssh2
 * implements, none of what ssh no longer offers.
 */
static const char *const t_want[] = { "c", "a", "b", NULL };

LC_TEST(algs_list_keeps_wanted_order)
{
	const char *const sup[] = { "a", "b", "c", "d" };
	char out[64];

	LC_CHECK_EQ_I(lc__ssh_algs_list(sup, 4, t_want, out, sizeof(out)), 3);
	LC_CHECK_STR(out, "c,a,b");
}

LC_TEST(algs_list_drops_what_is_not_implemented)
{
	const char *const sup[] = { "b", "x" };
	char out[64];

	LC_CHECK_EQ_I(lc__ssh_algs_list(sup, 2, t_want, out, sizeof(out)), 1);
	LC_CHECK_STR(out, "b");
	LC_CHECK_EQ_I(lc__ssh_algs_list(sup, 0, t_want, out, sizeof(out)), 0);
	LC_CHECK_STR(out, "");
}

LC_TEST(algs_list_too_small)
{
	const char *const sup[] = { "a", "b", "c" };
	char out[4];

	LC_CHECK_EQ_I(lc__ssh_algs_list(sup, 3, t_want, out, sizeof(out)),
	    -LC_ERR_TOOBIG);
}

/*
 * With the libssh2 this is linked with, every kind has at least one
 * algorithm ssh offers (what the server then picks is the integration
 * test's: tests/integration/test_ssh_algs.sh).
 */
LC_TEST(algo_prefs_with_linked_libssh2)
{
	struct lc_ssh s;
	struct lc_err e;

	memset(&s, 0, sizeof(s));
	LC_CHECK_EQ_I(libssh2_init(0), 0);
	s.sess = libssh2_session_init();
	LC_CHECK(s.sess != NULL);
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc__ssh_algo_prefs(&s, &e), 0);
	libssh2_session_free(s.sess);
	libssh2_exit();
}

LC_TEST_MAIN()
