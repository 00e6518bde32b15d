/*
 * Data stream sockets dial numeric addresses only (conn.h): a name is
 * refused, never resolved, so the agent never enters the resolver.
 */
#include "harness.h"

#include "conn.h"
#include "err.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* lc_sock_connect to addr:port; its result, the error text in e */
static int
dial(const char *addr, uint16_t port, struct lc_err *e)
{
	int fd = -1, r;

	lc_err_clear(e);
	r = lc_sock_connect(addr, port, 0, 5000, NULL, &fd, e);
	if (fd >= 0)
		close(fd);
	return r;
}

LC_TEST(numeric_addresses_connect)
{
	struct lc_err e;
	uint16_t port;
	int lfd = -1, fd = -1, a;
	char name[128];

	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_sock_listen(0, 1, &lfd, &port, &e), 0);
	LC_CHECK_EQ_I(lc_sock_connect("127.0.0.1", port, 0, 5000, NULL, &fd,
			  &e),
	    0);
	a = accept(lfd, NULL, NULL);
	LC_CHECK(a >= 0);
	/* the peer's name, numeric: v4 as v4 */
	lc_sock_peer_name(fd, name, sizeof(name));
	LC_CHECK(strncmp(name, "127.0.0.1 port ", 15) == 0);
	close(a);
	close(fd);
	/* the same address in its IPv6 (v4-mapped) form */
	if (dial("::ffff:127.0.0.1", port, &e) != 0)
		LC_SKIP("no IPv6 sockets here");
	close(lfd);
}

LC_TEST(names_are_refused)
{
	const char *bad[] = { "localhost", "127.1", "127.0.0.1.", " 127.0.0.1",
		"127.0.0.1 ", "::1%", "::1%lanecp-no-such-if",
		"::1%99999999999", "host.example", "",
		"00000000000000000000000000000000000000000000000000000000000000"
		"01" };
	struct lc_err e;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		LC_CHECK_EQ_I(dial(bad[i], 9, &e), -LC_ERR_STREAM);
		LC_CHECK(strstr(e.msg, "not a numeric address") != NULL);
	}
}

LC_TEST_MAIN()
