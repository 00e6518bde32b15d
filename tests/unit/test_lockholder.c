/*
 * Part-file lock holders (lockholder.c): the /proc/locks, status and
 * cmdline parsers on good and hostile text, and the whole lookup against
 * a real child process that holds a flock under a known command line
 * (same transfer, another transfer, not lanecp), plus the takeover.
 */
#include "harness.h"

#include "err.h"
#include "lockholder.h"
#include "takeover.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#define ID_A "0123456789abcdef0123456789abcdef"
#define ID_B "fedcba9876543210fedcba9876543210"
#define KEY_A "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
#define KEY_B "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"

/* 32 key bytes from 64 hex digits */
static void
t_key(const char *hex, uint8_t key[LC_KEY_LEN])
{
	unsigned v;

	for (size_t i = 0; i < LC_KEY_LEN; i++) {
		LC_CHECK(sscanf(hex + 2 * i, "%2x", &v) == 1);
		key[i] = (uint8_t)v;
	}
}

LC_TEST(transfer_ids)
{
	char a[LC_TRANSFER_HEX + 1], b[LC_TRANSFER_HEX + 1];

	LC_CHECK_EQ_I(lc_transfer_new(a), 0);
	LC_CHECK_EQ_I(lc_transfer_new(b), 0);
	LC_CHECK(lc_transfer_valid(a) && lc_transfer_valid(b));
	LC_CHECK(strcmp(a, b) != 0);
	LC_CHECK(lc_transfer_valid(ID_A));
	LC_CHECK(!lc_transfer_valid(""));
	LC_CHECK(!lc_transfer_valid(ID_A "0"));
	LC_CHECK(!lc_transfer_valid("0123456789ABCDEF0123456789abcdef"));
	LC_CHECK(!lc_transfer_valid("0123456789abcdef0123456789abcde"));
	LC_CHECK(!lc_transfer_valid("0123456789abcdef0123456789abcde "));
}

LC_TEST(transfer_from_a_forced_command)
{
	char id[LC_TRANSFER_HEX + 1];

	LC_CHECK_EQ_I(lc_transfer_from_command("lanecp --agent --transfer "
	    ID_A, id), 1);
	LC_CHECK_STR(id, ID_A);
	LC_CHECK_EQ_I(lc_transfer_from_command("/x/lanecp  --agent\t"
	    "--transfer=" ID_A " ", id), 1);
	LC_CHECK_STR(id, ID_A);
	LC_CHECK_EQ_I(lc_transfer_from_command("lanecp --agent", id), 0);
	LC_CHECK_STR(id, "");
	LC_CHECK_EQ_I(lc_transfer_from_command("", id), 0);
	LC_CHECK_EQ_I(lc_transfer_from_command("lanecp --agent --transfer",
	    id), 0);
	LC_CHECK_EQ_I(lc_transfer_from_command("lanecp --transfer " ID_A "0",
	    id), 0);
	LC_CHECK_EQ_I(lc_transfer_from_command("lanecp --transfer "
	    "0123456789ABCDEF0123456789abcdef", id), 0);
	LC_CHECK_STR(id, "");
	LC_CHECK_EQ_I(lc_transfer_from_command("lanecp --transfer=" ID_A "0",
	    id), 0);
	LC_CHECK_EQ_I(lc_transfer_from_command("lanecp --transfers " ID_A,
	    id), 0);
	LC_CHECK_EQ_I(lc_transfer_from_command("lanecp x--transfer " ID_A,
	    id), 0);
}

LC_TEST(locks_line_parsing)
{
	pid_t pid;

	LC_CHECK_EQ_I(lc_locks_line("1: FLOCK  ADVISORY  WRITE 4711 "
	    "08:01:1234 0 EOF\n", 8, 1, 1234, &pid), 1);
	LC_CHECK_EQ_I(pid, 4711);
	LC_CHECK_EQ_I(lc_locks_line("12: FLOCK  ADVISORY  READ  99 "
	    "fd:1a:18446744073709551615 0 EOF", 0xfd, 0x1a, UINT64_MAX, &pid),
	    1);
	LC_CHECK_EQ_I(pid, 99);
	/* a minor above 255 is printed wider */
	LC_CHECK_EQ_I(lc_locks_line("3: FLOCK ADVISORY WRITE 5 00:1a3:7 0 "
	    "EOF\n", 0, 0x1a3, 7, &pid), 1);
	/* the holder is in another pid namespace: ours, pid unknown */
	LC_CHECK_EQ_I(lc_locks_line("1: FLOCK  ADVISORY  WRITE -1 "
	    "08:01:1234 0 EOF\n", 8, 1, 1234, &pid), 1);
	LC_CHECK_EQ_I(pid, 0);
	/* a waiter is not the holder */
	LC_CHECK_EQ_I(lc_locks_line("1: -> FLOCK  ADVISORY  WRITE 4712 "
	    "08:01:1234 0 EOF\n", 8, 1, 1234, &pid), 0);
	/* other kinds of lock, other files */
	LC_CHECK_EQ_I(lc_locks_line("1: POSIX  ADVISORY  WRITE 4711 "
	    "08:01:1234 0 EOF\n", 8, 1, 1234, &pid), 0);
	LC_CHECK_EQ_I(lc_locks_line("1: OFDLCK ADVISORY  WRITE -1 "
	    "08:01:1234 0 EOF\n", 8, 1, 1234, &pid), 0);
	LC_CHECK_EQ_I(lc_locks_line("1: FLOCK  ADVISORY  WRITE 4711 "
	    "08:01:12345 0 EOF\n", 8, 1, 1234, &pid), 0);
	LC_CHECK_EQ_I(lc_locks_line("1: FLOCK  ADVISORY  WRITE 4711 "
	    "08:02:1234 0 EOF\n", 8, 1, 1234, &pid), 0);
	LC_CHECK_EQ_I(lc_locks_line("1: FLOCK  ADVISORY  WRITE 4711 "
	    "09:01:1234 0 EOF\n", 8, 1, 1234, &pid), 0);
	/* malformed: every one of these is "not ours" */
	LC_CHECK_EQ_I(lc_locks_line("", 8, 1, 1234, &pid), 0);
	LC_CHECK_EQ_I(lc_locks_line("\n", 8, 1, 1234, &pid), 0);
	LC_CHECK_EQ_I(lc_locks_line("1: FLOCK", 8, 1, 1234, &pid), 0);
	LC_CHECK_EQ_I(lc_locks_line("1 FLOCK  ADVISORY  WRITE 4711 "
	    "08:01:1234 0 EOF\n", 8, 1, 1234, &pid), 0);
	LC_CHECK_EQ_I(lc_locks_line("1: FLOCK  ADVISORY  WRITE 4711 "
	    "08:01 0 EOF\n", 8, 1, 1234, &pid), 0);
	LC_CHECK_EQ_I(lc_locks_line("1: FLOCK  ADVISORY  WRITE 4711 "
	    "08::1234 0 EOF\n", 8, 1, 1234, &pid), 0);
	LC_CHECK_EQ_I(lc_locks_line("1: FLOCK  ADVISORY  WRITE 4711 "
	    "08:01:1234x 0 EOF\n", 8, 1, 1234, &pid), 0);
	LC_CHECK_EQ_I(lc_locks_line("1: FLOCK  ADVISORY  WRITE 4711 "
	    "08:01:18446744073709551616 0 EOF\n", 8, 1, 0, &pid), 0);
	LC_CHECK_EQ_I(lc_locks_line("1: FLOCK  ADVISORY  WRITE 4711 "
	    "108:01:1234 0 EOF\n", 0x108, 1, 1234, &pid), 1);
	LC_CHECK_EQ_I(lc_locks_line("1: FLOCK  ADVISORY  WRITE 4711 "
	    "100000000:01:1234 0 EOF\n", 0, 1, 1234, &pid), 0);
	LC_CHECK_EQ_I(lc_locks_line("1: FLOCK  ADVISORY  WRITE 99999999999 "
	    "08:01:1234 0 EOF\n", 8, 1, 1234, &pid), 0);
	LC_CHECK_EQ_I(pid, 0);
	LC_CHECK_EQ_I(lc_locks_line("1: FLOCK  ADVISORY  WRITE 47x1 "
	    "08:01:1234 0 EOF\n", 8, 1, 1234, &pid), 0);
	LC_CHECK_EQ_I(lc_locks_line("1: FLOCK  ADVISORY  WRITE +4711 "
	    "08:01:1234 0 EOF\n", 8, 1, 1234, &pid), 0);
}

/* lc_locks_find on a file written here. */
static int
t_find(const char *text, dev_t dev, ino_t ino, pid_t *pid)
{
	char path[] = "/tmp/lc-locks-XXXXXX";
	int fd = mkstemp(path), r;

	LC_CHECK(fd >= 0);
	LC_CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	r = lc_locks_find(path, dev, ino, pid);
	unlink(path);
	return r;
}

LC_TEST(locks_file_scanning)
{
	char text[4096], tail[] = "1: FLOCK  ADVISORY  WRITE 66 08:01:77 0 EOF";
	dev_t dev = makedev(8, 1);
	pid_t pid = 5;

	LC_CHECK_EQ_I(lc_locks_find("/nonexistent/locks", dev, 77, &pid),
	    -LC_ERR_IO);
	LC_CHECK_EQ_I(pid, 0);
	LC_CHECK_EQ_I(t_find("", dev, 77, &pid), -LC_ERR_IO);
	LC_CHECK_EQ_I(t_find("1: POSIX  ADVISORY  WRITE 65 08:01:77 0 EOF\n"
	    "2: -> FLOCK  ADVISORY  WRITE 64 08:01:77 0 EOF\n"
	    "3: FLOCK  ADVISORY  WRITE 66 08:01:77 0 EOF\n", dev, 77, &pid), 0);
	LC_CHECK_EQ_I(pid, 66);
	/* only a pid-less entry: not found */
	LC_CHECK_EQ_I(t_find("3: FLOCK  ADVISORY  WRITE -1 08:01:77 0 EOF\n",
	    dev, 77, &pid), -LC_ERR_IO);
	/* the last line needs its newline: a truncated read is not trusted */
	LC_CHECK_EQ_I(t_find(tail, dev, 77, &pid), -LC_ERR_IO);
	/* an overlong line whose end looks like ours is skipped whole */
	memset(text, 'x', 600);
	snprintf(text + 600, sizeof(text) - 600, " %s\n", tail);
	LC_CHECK_EQ_I(t_find(text, dev, 77, &pid), -LC_ERR_IO);
	snprintf(text + 600, sizeof(text) - 600, "\n%s\n", tail);
	LC_CHECK_EQ_I(t_find(text, dev, 77, &pid), 0);
	LC_CHECK_EQ_I(pid, 66);
}

#define CL(s) s, sizeof(s) - 1

LC_TEST(cmdline_classification)
{
	int l = -1;

	LC_CHECK_EQ_I(lc_cmdline_classify(CL("lanecp\0--agent\0--transfer\0"
	    ID_A "\0"), ID_A, &l), LC_HOLDER_SAME);
	LC_CHECK_EQ_I(l, 1);
	/* no trailing NUL (a bounded read may cut there), a path, = form */
	LC_CHECK_EQ_I(lc_cmdline_classify(CL("/opt/bin/lanecp\0--agent\0"
	    "--transfer=" ID_A), ID_A, &l), LC_HOLDER_SAME);
	LC_CHECK_EQ_I(lc_cmdline_classify(CL("/x/agent\0--restrict\0/d\0"
	    "--transfer\0" ID_A "\0--agent\0"), ID_A, &l), LC_HOLDER_SAME);
	LC_CHECK_EQ_I(l, 1);
	/* another transfer, none, no --agent, cut short, longer ids */
	LC_CHECK_EQ_I(lc_cmdline_classify(CL("lanecp\0--agent\0--transfer\0"
	    ID_B "\0"), ID_A, &l), LC_HOLDER_OTHER);
	LC_CHECK_EQ_I(l, 1);
	LC_CHECK_EQ_I(lc_cmdline_classify(CL("lanecp\0--agent\0"), ID_A, &l),
	    LC_HOLDER_OTHER);
	LC_CHECK_EQ_I(lc_cmdline_classify(CL("lanecp\0--transfer\0" ID_A
	    "\0src\0dst\0"), ID_A, &l), LC_HOLDER_OTHER);
	LC_CHECK_EQ_I(l, 1);
	LC_CHECK_EQ_I(lc_cmdline_classify(CL("lanecp\0--agent\0--transfer\0"
	    "0123456789abcdef"), ID_A, &l), LC_HOLDER_OTHER);
	LC_CHECK_EQ_I(lc_cmdline_classify(CL("lanecp\0--agent\0--transfer\0"
	    ID_A "0\0"), ID_A, &l), LC_HOLDER_OTHER);
	LC_CHECK_EQ_I(lc_cmdline_classify(CL("lanecp\0--agent\0--transfer="
	    ID_A "0"), ID_A, &l), LC_HOLDER_OTHER);
	LC_CHECK_EQ_I(lc_cmdline_classify(CL("lanecp\0--agent\0--transfer"),
	    ID_A, &l), LC_HOLDER_OTHER);
	/* the id as an operand after "--" does not count */
	LC_CHECK_EQ_I(lc_cmdline_classify(CL("lanecp\0--agent\0--\0"
	    "--transfer\0" ID_A "\0"), ID_A, &l), LC_HOLDER_OTHER);
	/* --transfer consumes its value: "--agent" as the value is no flag */
	LC_CHECK_EQ_I(lc_cmdline_classify(CL("lanecp\0--transfer\0--agent\0"
	    "--transfer\0" ID_A "\0"), ID_A, &l), LC_HOLDER_OTHER);
	/* we have no valid id: nothing is ours */
	LC_CHECK_EQ_I(lc_cmdline_classify(CL("lanecp\0--agent\0--transfer\0"
	    "\0"), "", &l), LC_HOLDER_OTHER);
	LC_CHECK_EQ_I(lc_cmdline_classify(CL("lanecp\0--agent\0--transfer\0"
	    ID_A "\0"), NULL, &l), LC_HOLDER_OTHER);
	/* not lanecp */
	LC_CHECK_EQ_I(lc_cmdline_classify(CL("vim\0file\0"), ID_A, &l),
	    LC_HOLDER_OTHER);
	LC_CHECK_EQ_I(l, 0);
	LC_CHECK_EQ_I(lc_cmdline_classify(CL("notlanecp\0"), ID_A, &l),
	    LC_HOLDER_OTHER);
	LC_CHECK_EQ_I(l, 0);
	LC_CHECK_EQ_I(lc_cmdline_classify("", 0, ID_A, &l), LC_HOLDER_OTHER);
	LC_CHECK_EQ_I(lc_cmdline_classify(CL("\0\0\0"), ID_A, &l),
	    LC_HOLDER_OTHER);
}

LC_TEST(status_uid_parsing)
{
	LC_CHECK_EQ_I(lc_status_uid_is(CL("Name:\tx\nUid:\t1000\t1000\t1000"
	    "\t1000\nGid:\t5\t5\t5\t5\n"), 1000), 1);
	LC_CHECK_EQ_I(lc_status_uid_is(CL("Uid:\t1000\t1000\t1000\t1000"),
	    1000), 1);
	LC_CHECK_EQ_I(lc_status_uid_is(CL("Uid:\t1000\t1000\t0\t1000\n"),
	    1000), 0);
	LC_CHECK_EQ_I(lc_status_uid_is(CL("Uid:\t0\t1000\t1000\t1000\n"),
	    1000), 0);
	LC_CHECK_EQ_I(lc_status_uid_is(CL("Uid:\t1000\t1000\t1000\n"), 1000),
	    0);
	LC_CHECK_EQ_I(lc_status_uid_is(CL("Uid:\t1000\t1000\t1000\t1000\t1\n"),
	    1000), 0);
	LC_CHECK_EQ_I(lc_status_uid_is(CL("Uid:\t1000x\t1000\t1000\t1000\n"),
	    1000), 0);
	LC_CHECK_EQ_I(lc_status_uid_is(CL("Uid:\t4294968296\t1000\t1000\t1000"
	    "\n"), 1000), 0);
	LC_CHECK_EQ_I(lc_status_uid_is(CL("Name:\tx\nGid:\t1000\t1000\t1000"
	    "\t1000\n"), 1000), 0);
	LC_CHECK_EQ_I(lc_status_uid_is("", 0, 0), 0);
}

/*
 * A child that takes the flock on path, then execs /bin/sh under argv
 * (pid and lock unchanged; it waits on its stdin).  Returns once the
 * exec has happened (a close-on-exec pipe reaches EOF), so its
 * /proc/PID/cmdline is argv; *in is the child's stdin (close to end it).
 */
static pid_t
t_holder(const char *path, const char *const argv[], int *in)
{
	char args[8][64], *av[9];
	int ready[2], ctl[2], fd, n;
	char c;
	pid_t pid;

	/*
	 * The script (argv[2], after "-c") first tells us on fd 3 that the
	 * shell runs: an EOF on a close-on-exec pipe can come before exec has
	 * set the new command line, which /proc/PID/cmdline then shows empty.
	 */
	for (n = 0; argv[n] != NULL && n < 8; n++) {
		snprintf(args[n], sizeof(args[n]), "%s%s",
		    n == 2 ? "echo >&3; exec 3>&-; " : "", argv[n]);
		av[n] = args[n];
	}
	av[n] = NULL;

	LC_CHECK(pipe2(ready, O_CLOEXEC) == 0 && pipe(ctl) == 0);
	LC_CHECK((pid = fork()) >= 0);
	if (pid == 0) {
		close(ready[0]);
		close(ctl[1]);
		if ((fd = open(path, O_RDWR)) < 0 ||
		    flock(fd, LOCK_EX | LOCK_NB) != 0 ||
		    dup2(ctl[0], 0) != 0 || dup2(ready[1], 3) != 3 ||
		    fcntl(3, F_SETFD, 0) != 0)
			_exit(99);
		execv("/bin/sh", av);
		_exit(98);
	}
	close(ready[1]);
	close(ctl[0]);
	LC_CHECK(read(ready[0], &c, 1) == 1);
	close(ready[0]);
	*in = ctl[1];
	return pid;
}

static char t_dir[64], t_file[128];

static int
t_open(void)
{
	int fd;

	snprintf(t_dir, sizeof(t_dir), "/tmp/lc-lockholder-XXXXXX");
	LC_CHECK(mkdtemp(t_dir) != NULL);
	snprintf(t_file, sizeof(t_file), "%s/part", t_dir);
	LC_CHECK((fd = open(t_file, O_RDWR | O_CREAT, 0600)) >= 0);
	return fd;
}

static void
t_close(int fd, pid_t child, int in)
{
	int st;

	close(in);
	LC_CHECK(waitpid(child, &st, 0) == child);
	close(fd);
	unlink(t_file);
	rmdir(t_dir);
}

LC_TEST(holder_of_the_same_transfer)
{
	const char *argv[] = { "lanecp", "-c", "read x", "--agent", "--transfer",
		ID_A, NULL };
	struct lc_holder h;
	int fd = t_open(), in;
	pid_t child = t_holder(t_file, argv, &in);

	LC_CHECK(flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK);
	lc_lock_holder(fd, ID_A, &h);
	LC_CHECK_EQ_I(h.kind, LC_HOLDER_SAME);
	LC_CHECK_EQ_I(h.pid, child);
	LC_CHECK_EQ_I(h.lanecp, 1);
	/* the same process seen by another transfer */
	lc_lock_holder(fd, ID_B, &h);
	LC_CHECK_EQ_I(h.kind, LC_HOLDER_OTHER);
	LC_CHECK_EQ_I(h.pid, child);
	/* by a controller without an id */
	lc_lock_holder(fd, "", &h);
	LC_CHECK_EQ_I(h.kind, LC_HOLDER_OTHER);
	t_close(fd, child, in);
}

LC_TEST(holder_of_another_transfer_is_named)
{
	const char *argv[] = { "lanecp", "-c", "read x", "--agent", "--transfer",
		ID_B, NULL };
	uint8_t key[LC_KEY_LEN];
	struct lc_lock_self me = { .transfer = ID_A, .key = key, .root = "" };
	struct lc_holder h;
	struct lc_err e;
	char want[64];
	int fd = t_open(), in;
	pid_t child = t_holder(t_file, argv, &in);

	lc_lock_holder(fd, ID_A, &h);
	LC_CHECK_EQ_I(h.kind, LC_HOLDER_OTHER);
	LC_CHECK_EQ_I(h.pid, child);
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_lock_held_error("dst/f", &h, &e), -LC_ERR_LOCKED);
	snprintf(want, sizeof(want), "(pid %d, a different transfer)",
	    (int)child);
	LC_CHECK(strstr(e.msg, want) != NULL);
	LC_CHECK(strstr(e.msg, "dst/f: another lanecp") == e.msg);
	/* takeover refuses anything but our own transfer */
	lc_err_clear(&e);
	t_key(KEY_A, key);
	LC_CHECK_EQ_I(lc_lock_takeover(fd, &h, &me, 1000, "dst/f", &e),
	    -LC_ERR_LOCKED);
	LC_CHECK(kill(child, 0) == 0);
	t_close(fd, child, in);
}

LC_TEST(holder_not_lanecp)
{
	const char *argv[] = { "sh", "-c", "read x", NULL };
	struct lc_holder h;
	struct lc_err e;
	int fd = t_open(), in;
	pid_t child = t_holder(t_file, argv, &in);

	lc_lock_holder(fd, ID_A, &h);
	LC_CHECK_EQ_I(h.kind, LC_HOLDER_OTHER);
	LC_CHECK_EQ_I(h.lanecp, 0);
	lc_err_clear(&e);
	(void)lc_lock_held_error("f", &h, &e);
	LC_CHECK(strstr(e.msg, "not lanecp") != NULL);
	t_close(fd, child, in);
}

LC_TEST(holder_is_this_process)
{
	struct lc_holder h;
	int fd = t_open(), fd2;

	LC_CHECK(flock(fd, LOCK_EX | LOCK_NB) == 0);
	LC_CHECK((fd2 = open(t_file, O_RDWR)) >= 0);
	lc_lock_holder(fd2, ID_A, &h);
	LC_CHECK_EQ_I(h.kind, LC_HOLDER_SELF);
	LC_CHECK_EQ_I(h.pid, getpid());
	close(fd2);
	unlink(t_file);
	rmdir(t_dir);
	close(fd);
}

LC_TEST(unlocked_file_has_no_holder)
{
	struct lc_holder h;
	int fd = t_open();

	lc_lock_holder(fd, ID_A, &h);
	LC_CHECK_EQ_I(h.kind, LC_HOLDER_UNKNOWN);
	LC_CHECK_EQ_I(h.pid, 0);
	unlink(t_file);
	rmdir(t_dir);
	close(fd);
}

/*
 * Run as "test_lockholder helper_serving_holder --agent --transfer ID"
 * (t_serving): hold the flock on $LC_T_HOLD and answer takeovers with key
 * $LC_T_KEY and root $LC_T_ROOT, as a sink agent does, until stdin ends.
 * In the normal run it does nothing.
 */
LC_TEST(helper_serving_holder)
{
	const char *path = getenv("LC_T_HOLD");
	struct lc_takeover *t = NULL;
	uint8_t key[LC_KEY_LEN];
	struct lc_err e;
	char c;
	int fd;

	if (path == NULL)
		return;
	t_key(getenv("LC_T_KEY"), key);
	lc_err_clear(&e);
	if ((fd = open(path, O_RDWR)) < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0 ||
	    lc_takeover_serve(key, getenv("LC_T_ROOT"), &t, &e) != 0)
		_exit(99);
	if (write(1, "r", 1) != 1)
		_exit(98);
	while (read(0, &c, 1) > 0)
		;
	lc_takeover_stop(t);
	_exit(0);
}

/*
 * A child that holds the flock on path under the command line of an
 * agent of transfer id and answers takeovers with key and root (as a
 * sink agent of that run); returns once it answers.  *in is its stdin.
 */
static pid_t
t_serving(const char *path, const char *id, const char *key,
    const char *root, int *in)
{
	char a0[] = "test_lockholder", a1[] = "helper_serving_holder",
	    a2[] = "--agent", a3[] = "--transfer", a4[LC_TRANSFER_HEX + 1];
	char *av[] = { a0, a1, a2, a3, a4, NULL };
	int ready[2], ctl[2];
	char c;
	pid_t pid;

	snprintf(a4, sizeof(a4), "%s", id);
	LC_CHECK(pipe2(ready, O_CLOEXEC) == 0 && pipe2(ctl, O_CLOEXEC) == 0);
	LC_CHECK((pid = fork()) >= 0);
	if (pid == 0) {
		if (dup2(ctl[0], 0) != 0 || dup2(ready[1], 1) != 1 ||
		    setenv("LC_T_HOLD", path, 1) != 0 ||
		    setenv("LC_T_KEY", key, 1) != 0 ||
		    setenv("LC_T_ROOT", root, 1) != 0)
			_exit(97);
		execv("/proc/self/exe", av);
		_exit(96);
	}
	close(ready[1]);
	close(ctl[0]);
	LC_CHECK(read(ready[0], &c, 1) == 1 && c == 'r');
	close(ready[0]);
	*in = ctl[1];
	return pid;
}

LC_TEST(stale_agent_of_this_run_is_taken_over)
{
	uint8_t key[LC_KEY_LEN];
	struct lc_lock_self me = { .transfer = ID_A, .key = key, .root = "" };
	struct lc_holder h;
	struct lc_err e;
	int fd = t_open(), in, st;
	pid_t child = t_serving(t_file, ID_A, KEY_A, "", &in);

	t_key(KEY_A, key);
	lc_lock_holder(fd, ID_A, &h);
	LC_CHECK_EQ_I(h.kind, LC_HOLDER_SAME);
	LC_CHECK_EQ_I(h.pid, child);
	lc_err_clear(&e);
	/* the bound is generous; SIGTERM ends the holder at once */
	LC_CHECK_EQ_I(lc_lock_takeover(fd, &h, &me, LC_TAKEOVER_WAIT_MS,
	    t_file, &e), 0);
	/* we hold it now: the child is gone, killed by SIGTERM */
	LC_CHECK(waitpid(child, &st, 0) == child);
	LC_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	close(in);
	LC_CHECK(flock(fd, LOCK_EX | LOCK_NB) == 0);
	close(fd);
	unlink(t_file);
	rmdir(t_dir);
}

/* Asks h's holder (ours: same id) as me; it must refuse and live on. */
static void
t_refused(int fd, pid_t child, const struct lc_lock_self *me)
{
	struct lc_holder h;
	struct lc_err e;
	char want[128];

	lc_lock_holder(fd, me->transfer, &h);
	LC_CHECK_EQ_I(h.kind, LC_HOLDER_SAME);
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_lock_takeover(fd, &h, me, 1000, "dst/f", &e),
	    -LC_ERR_LOCKED);
	snprintf(want, sizeof(want), "dst/f: an agent with this transfer id "
	    "(pid %d) holds this file, and it is not of this run", (int)child);
	LC_CHECK(strstr(e.msg, want) == e.msg);
	LC_CHECK(kill(child, 0) == 0);
}

/* The transfer id is public (ps): without the run's key, nothing. */
LC_TEST(same_transfer_id_of_another_run_is_not_stopped)
{
	uint8_t key[LC_KEY_LEN], none[LC_KEY_LEN];
	struct lc_lock_self me = { .transfer = ID_A, .key = key, .root = "" };
	int fd = t_open(), in;
	pid_t child = t_serving(t_file, ID_A, KEY_A, "", &in);

	t_key(KEY_B, key);
	t_refused(fd, child, &me);
	memset(none, 0, sizeof(none));
	me.key = none;
	t_refused(fd, child, &me);
	me.key = NULL;
	t_refused(fd, child, &me);
	t_close(fd, child, in);
}

/*
 * With the right key too, a restricted agent stops only an agent
 * restricted to the same directory: never an unrestricted one, nor one of
 * another directory, nor is it stopped by an unrestricted one.
 */
LC_TEST(agent_of_another_directory_is_not_stopped)
{
	uint8_t key[LC_KEY_LEN];
	struct lc_lock_self me = { .transfer = ID_A, .key = key,
		.root = "/srv/b" };
	int fd = t_open(), in, st;
	pid_t child = t_serving(t_file, ID_A, KEY_A, "/srv/a", &in);
	struct lc_holder h;
	struct lc_err e;

	t_key(KEY_A, key);
	t_refused(fd, child, &me);
	me.root = "";
	t_refused(fd, child, &me);
	me.root = "/srv/a/sub";
	t_refused(fd, child, &me);
	me.root = "/srv/a";	/* the same directory: yes */
	lc_lock_holder(fd, ID_A, &h);
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_lock_takeover(fd, &h, &me, LC_TAKEOVER_WAIT_MS,
	    t_file, &e), 0);
	LC_CHECK(waitpid(child, &st, 0) == child);
	LC_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	close(in);
	close(fd);
	unlink(t_file);
	rmdir(t_dir);

	/* an unrestricted holder: a restricted asker is refused */
	fd = t_open();
	child = t_serving(t_file, ID_A, KEY_A, "", &in);
	me.root = "/srv/a";
	t_refused(fd, child, &me);
	t_close(fd, child, in);
}

/* An agent of our id that does not answer (an older lanecp): kept. */
LC_TEST(holder_that_does_not_answer_is_not_stopped)
{
	const char *argv[] = { "lanecp", "-c", "read x", "--agent", "--transfer",
		ID_A, NULL };
	uint8_t key[LC_KEY_LEN];
	struct lc_lock_self me = { .transfer = ID_A, .key = key, .root = "" };
	int fd = t_open(), in;
	pid_t child = t_holder(t_file, argv, &in);

	t_key(KEY_A, key);
	t_refused(fd, child, &me);
	t_close(fd, child, in);
}

LC_TEST_MAIN()
