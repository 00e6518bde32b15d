#include "harness.h"

#include "ssh.h"
#include "ssh_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * The OpenSSH transport (sshprog.c) without a network: a stand-in "ssh"
 * script answers -G like ssh and otherwise runs a shell command of the
 * test's, so that start, exit status, stderr, ssh's 255 and stopping a
 * program that does not end are seen on their own.
 */

/* What a line of ssh's stderr means. */
LC_TEST(classify)
{
	LC_CHECK_EQ_I(lc__sshprog_classify("Host key verification failed."),
	    LC_ERR_HOSTKEY);
	LC_CHECK_EQ_I(lc__sshprog_classify("No ED25519 host key is known for "
					   "[127.0.0.1]:2222 and you have "
					   "requested strict checking."),
	    LC_ERR_HOSTKEY);
	LC_CHECK_EQ_I(lc__sshprog_classify("u@h: Permission denied "
					   "(publickey)."),
	    LC_ERR_AUTH);
	LC_CHECK_EQ_I(lc__sshprog_classify("ssh: connect to host h port 22: "
					   "Connection refused"),
	    LC_ERR_CONNECT);
	LC_CHECK_EQ_I(lc__sshprog_classify("Unable to negotiate with 1.2.3.4 "
					   "port 22: no matching cipher found"),
	    LC_ERR_CONNECT);
	LC_CHECK_EQ_I(lc__sshprog_classify("/x/config: line 2: Bad "
					   "configuration option: foo"),
	    LC_ERR_CONFIG);
	LC_CHECK_EQ_I(lc__sshprog_classify(
			  "Warning: Permanently added "
			  "'h' (ED25519) to the list of known hosts."),
	    0);
	LC_CHECK_EQ_I(lc__sshprog_classify(""), 0);
}

static char t_dir[64];
static char t_prog[128];

/* A stand-in ssh: -G prints a config, else runs $T_SSH_DO with sh. */
static void
t_fake_ssh(void)
{
	FILE *f;

	snprintf(t_dir, sizeof(t_dir), "/tmp/lc-sshprog.XXXXXX");
	if (mkdtemp(t_dir) == NULL)
		LC_SKIP("mkdtemp");
	snprintf(t_prog, sizeof(t_prog), "%s/fakessh", t_dir);
	f = fopen(t_prog, "w");
	LC_CHECK(f != NULL);
	fprintf(f,
	    "#!/bin/sh\n"
	    "case \"$1\" in -G) printf 'user tu\\nhostname 127.0.0.1\\n"
	    "port 22\\n'; exit 0;; esac\n"
	    "[ -z \"$T_SSH_ARGS\" ] || printf '%%s\\n' \"$@\" "
	    ">\"$T_SSH_ARGS\"\n"
	    "exec /bin/sh -c \"$T_SSH_DO\"\n");
	fclose(f);
	chmod(t_prog, 0700);
}

static void
t_cleanup(void)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/fakessh", t_dir);
	unlink(p);
	rmdir(t_dir);
}

static struct lc_ssh *
t_connect(void)
{
	struct lc_ssh_opts o = { .host = "box", .program = t_prog };
	struct lc_ssh *s = NULL;
	struct lc_err e;

	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_ssh_connect(&o, &s, &e), 0);
	LC_CHECK(s != NULL);
	LC_CHECK_STR(lc_ssh_name(s), "tu@box");
	LC_CHECK_STR(lc_ssh_target_host(s), "127.0.0.1");
	LC_CHECK_STR(lc_ssh_peer_addr(s), "127.0.0.1");
	LC_CHECK(!lc_ssh_proxied(s));
	return s;
}

/* The command's stdio is the socketpair; its status comes back. */
LC_TEST(exec_status)
{
	struct lc_ssh *s;
	struct lc_err e;
	char buf[16], sig[32];
	int fd = -1, st = -1;

	t_fake_ssh();
	setenv("T_SSH_DO", "read x; echo \"got $x\"; echo oops >&2; exit 7", 1);
	s = t_connect();
	LC_CHECK_EQ_I(lc_ssh_exec(s, "cmd", &fd, &e), 0);
	LC_CHECK_EQ_I((int)write(fd, "hi\n", 3), 3);
	LC_CHECK_EQ_I((int)read(fd, buf, 7), 7);
	LC_CHECK(memcmp(buf, "got hi\n", 7) == 0);
	LC_CHECK_EQ_I(lc_ssh_wait(s, -1, &st, sig, sizeof(sig)), 0);
	LC_CHECK_EQ_I(st, 7);
	LC_CHECK_EQ_I(lc_ssh_transport_err(s, 1, &e), 0);
	lc_ssh_early_stderr(s, buf, sizeof(buf));
	LC_CHECK_STR(buf, "oops");
	close(fd);
	lc_ssh_free(s);
	LC_CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
	t_cleanup();
}

/* ssh's own failure: 255 and its words make the error, one line. */
LC_TEST(exit_255_hostkey)
{
	struct lc_ssh *s;
	struct lc_err e;
	char sig[32];
	int fd = -1, st = -1;

	t_fake_ssh();
	setenv("T_SSH_DO",
	    "echo 'Host key for [h]:22 has changed and you "
	    "have requested strict checking.' >&2; echo 'Host key "
	    "verification failed.' >&2; exit 255",
	    1);
	s = t_connect();
	LC_CHECK_EQ_I(lc_ssh_exec(s, "cmd", &fd, &e), 0);
	LC_CHECK_EQ_I(lc_ssh_wait(s, -1, &st, sig, sizeof(sig)), 0);
	LC_CHECK_EQ_I(st, 255);
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_ssh_transport_err(s, 0, &e), -LC_ERR_HOSTKEY);
	LC_CHECK(strstr(e.msg, "Host key verification failed.") != NULL);
	LC_CHECK(strchr(e.msg, '\n') == NULL);
	close(fd);
	lc_ssh_free(s);
	t_cleanup();
}

/* A program that does not end is stopped and reaped by lc_ssh_free. */
LC_TEST(free_stops_it)
{
	struct lc_ssh *s;
	struct lc_err e;
	char sig[32], buf[8];
	int fd = -1, st = -1;

	t_fake_ssh();
	setenv("T_SSH_DO",
	    "trap '' TERM; echo ready; while :; do sleep 1; "
	    "done",
	    1);
	s = t_connect();
	LC_CHECK_EQ_I(lc_ssh_exec(s, "cmd", &fd, &e), 0);
	/* once it ignores SIGTERM */
	LC_CHECK_EQ_I((int)read(fd, buf, 6), 6);
	LC_CHECK_EQ_I(lc_ssh_wait(s, 0, &st, sig, sizeof(sig)),
	    -LC_ERR_TIMEOUT);
	close(fd);
	lc_ssh_free(s); /* SIGTERM ignored: SIGKILL after a second */
	LC_CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
	t_cleanup();
}

/* A program that cannot run is a usage error naming it. */
LC_TEST(missing_program)
{
	struct lc_ssh_opts o = { .host = "box",
		.program = "/nonexistent/lc-ssh" };
	struct lc_ssh *s = NULL;
	struct lc_err e;

	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_ssh_connect(&o, &s, &e), -LC_ERR_USAGE);
	LC_CHECK(s == NULL);
	LC_CHECK(strstr(e.msg, "/nonexistent/lc-ssh") != NULL);
	o.program = "ssh";
	o.host = "-oProxyCommand=x";
	LC_CHECK_EQ_I(lc_ssh_connect(&o, &s, &e), -LC_ERR_USAGE);
}

/* ssh://host:PORT/ and -o reach ssh as -p and -o, after lanecp's own
 * -o's (ssh keeps the first value), before the host. */
LC_TEST(port_and_options)
{
	const char *const opts[] = { "Port=9", "Ciphers aes128-ctr" };
	struct lc_ssh_opts o = { .host = "box",
		.program = t_prog,
		.port = 2501,
		.options = opts,
		.noptions = 2 };
	struct lc_ssh *s = NULL;
	struct lc_err e;
	char args[128], buf[2048], sig[8];
	int fd = -1, st = -1;
	FILE *f;
	size_t n;

	t_fake_ssh();
	snprintf(args, sizeof(args), "%s/args", t_dir);
	setenv("T_SSH_ARGS", args, 1);
	setenv("T_SSH_DO", "exit 0", 1);
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_ssh_connect(&o, &s, &e), 0);
	LC_CHECK_EQ_I(lc_ssh_exec(s, "cmd", &fd, &e), 0);
	LC_CHECK_EQ_I(lc_ssh_wait(s, -1, &st, sig, sizeof(sig)), 0);
	LC_CHECK_EQ_I(st, 0);
	close(fd);
	lc_ssh_free(s);
	f = fopen(args, "r");
	LC_CHECK(f != NULL);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	LC_CHECK(strstr(buf, "RequestTTY=no\n") != NULL);
	LC_CHECK(strstr(buf,
		     "\n-p\n2501\n-o\nPort=9\n-o\nCiphers "
		     "aes128-ctr\nbox\n--\ncmd\n") != NULL);
	LC_CHECK(
	    strstr(buf, "RequestTTY=no\n") < strstr(buf, "\n-o\nPort=9\n"));
	unsetenv("T_SSH_ARGS");
	unlink(args);
	t_cleanup();
}

LC_TEST_MAIN()
