/*
 * The takeover exchange (takeover.c): a holder answers yes only to this
 * run's key and its own directory, only to its own user, and an asker
 * trusts only the holder process itself.
 */
#include "harness.h"

#include "err.h"
#include "takeover.h"

#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static void
t_keys(uint8_t a[LC_KEY_LEN], uint8_t b[LC_KEY_LEN])
{
	memset(a, 0xa1, LC_KEY_LEN);
	memset(b, 0xa1, LC_KEY_LEN);
	b[LC_KEY_LEN - 1] ^= 1;	/* one bit away */
}

static int
t_ask(const uint8_t key[LC_KEY_LEN], const char *root, struct lc_err *e)
{
	lc_err_clear(e);
	return lc_takeover_ask(getpid(), key, root, 2000, e);
}

LC_TEST(yes_only_to_the_key_and_the_directory)
{
	uint8_t a[LC_KEY_LEN], b[LC_KEY_LEN], zero[LC_KEY_LEN];
	struct lc_takeover *t = NULL;
	struct lc_err e;

	t_keys(a, b);
	memset(zero, 0, sizeof(zero));
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_takeover_serve(a, "/srv/backup", &t, &e), 0);
	LC_CHECK_EQ_I(t_ask(a, "/srv/backup", &e), 0);
	LC_CHECK_EQ_I(t_ask(a, "/srv/backup", &e), 0);	/* again */
	LC_CHECK_EQ_I(t_ask(b, "/srv/backup", &e), -LC_ERR_LOCKED);
	LC_CHECK(strstr(e.msg, "does not answer") != NULL);	/* name */
	LC_CHECK_EQ_I(t_ask(zero, "/srv/backup", &e), -LC_ERR_LOCKED);
	LC_CHECK_EQ_I(t_ask(a, "", &e), -LC_ERR_LOCKED);
	LC_CHECK(strstr(e.msg, "another directory") != NULL);
	LC_CHECK_EQ_I(t_ask(a, "/srv/backup/", &e), -LC_ERR_LOCKED);
	LC_CHECK_EQ_I(t_ask(a, "/srv", &e), -LC_ERR_LOCKED);
	lc_takeover_stop(t);
	/* gone: nobody answers */
	LC_CHECK_EQ_I(t_ask(a, "/srv/backup", &e), -LC_ERR_LOCKED);
	/* no key, no server */
	LC_CHECK(lc_takeover_serve(zero, "", &t, &e) != 0);
	LC_CHECK(t == NULL);
}

/*
 * Someone else's listener under the right name (the name is public in
 * /proc/net/unix once the holder has bound it, but a process that knew
 * it before could have taken it): the asker checks that the listener is
 * the holder's pid, and sends it nothing that proves the key.
 */
LC_TEST(asker_trusts_only_the_holder_process)
{
	uint8_t a[LC_KEY_LEN], b[LC_KEY_LEN];
	struct sockaddr_un sa;
	socklen_t len;
	struct lc_err e;
	int ready[2], st, fd;
	pid_t me = getpid(), child;
	char c;

	t_keys(a, b);
	LC_CHECK(pipe(ready) == 0);
	LC_CHECK((child = fork()) >= 0);
	if (child == 0) {
		/* squat the name of our parent's holder, answer everything */
		lc_takeover_addr(a, me, &sa, &len);
		if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0 ||
		    bind(fd, (struct sockaddr *)&sa, len) != 0 ||
		    listen(fd, 4) != 0 || write(ready[1], "r", 1) != 1)
			_exit(99);
		for (;;) {
			int c2 = accept(fd, NULL, NULL);
			if (c2 >= 0)
				close(c2);
		}
	}
	close(ready[1]);
	LC_CHECK(read(ready[0], &c, 1) == 1);
	LC_CHECK_EQ_I(t_ask(a, "", &e), -LC_ERR_LOCKED);
	LC_CHECK(strstr(e.msg, "is not that process") != NULL);
	kill(child, SIGKILL);
	LC_CHECK(waitpid(child, &st, 0) == child);
}

/* A listener that never answers costs the asker its timeout, no more. */
LC_TEST(silent_listener_is_a_no)
{
	uint8_t a[LC_KEY_LEN], b[LC_KEY_LEN];
	struct sockaddr_un sa;
	socklen_t len;
	struct lc_err e;
	int fd;

	t_keys(a, b);
	lc_takeover_addr(a, getpid(), &sa, &len);
	LC_CHECK((fd = socket(AF_UNIX, SOCK_STREAM, 0)) >= 0);
	LC_CHECK(bind(fd, (struct sockaddr *)&sa, len) == 0);
	LC_CHECK(listen(fd, 4) == 0);	/* never accepted */
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_takeover_ask(getpid(), a, "", 200, &e),
	    -LC_ERR_LOCKED);
	LC_CHECK(strstr(e.msg, "no takeover challenge") != NULL);
	close(fd);
}

/* The name hides the key and differs per pid and per key. */
LC_TEST(names)
{
	uint8_t a[LC_KEY_LEN], b[LC_KEY_LEN];
	struct sockaddr_un s1, s2, s3;
	socklen_t l1, l2, l3;
	char hex[2 * LC_KEY_LEN + 1];

	t_keys(a, b);
	lc_takeover_addr(a, 4711, &s1, &l1);
	lc_takeover_addr(a, 4712, &s2, &l2);
	lc_takeover_addr(b, 4711, &s3, &l3);
	LC_CHECK_EQ_I(s1.sun_path[0], 0);	/* abstract */
	LC_CHECK(memcmp(s1.sun_path + 1, "lanecp-takeover-", 16) == 0);
	LC_CHECK_EQ_U(l1, l2);
	LC_CHECK(memcmp(&s1, &s2, l1) != 0 && memcmp(&s1, &s3, l1) != 0);
	for (size_t i = 0; i < LC_KEY_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", a[i]);
	LC_CHECK(memmem(s1.sun_path, sizeof(s1.sun_path), hex, 8) == NULL);
}

LC_TEST_MAIN()
