/*
 * walk.c against trees built in a temporary directory: the exact sequence
 * of entries (kind, name, size, link target), skips and failures with
 * their messages, symlinks with and without -L, depth without running out
 * of descriptors, and the root's own errors.
 */
#include "harness.h"

#include "confine.h"
#include "err.h"
#include "partfile.h"
#include "walk.h"
#include "wire.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

struct t_env {
	char dir[64];
	struct lc_confine conf;
	struct lc_err e;
	int max_fds;		/* most directory fds seen open in t_walk */
	pid_t owner;		/* the process that cleans up */
};

static struct t_env env;

static void
t_cleanup(void)
{
	if (getpid() != env.owner)
		return;
	if (chdir("/") == 0)
		lc_test_rm_tree(env.dir);
	lc_confine_free(&env.conf);
}

/* A fresh world-readable directory, made the current one. */
static void
t_env(void)
{
	memset(&env, 0, sizeof(env));
	env.owner = getpid();
	umask(022);
	snprintf(env.dir, sizeof(env.dir), "/tmp/lc-walk-XXXXXX");
	LC_CHECK(mkdtemp(env.dir) != NULL);
	LC_CHECK(chmod(env.dir, 0755) == 0);
	LC_CHECK(chdir(env.dir) == 0);
	LC_CHECK(lc_confine_init(&env.conf, NULL, &env.e) == 0);
	atexit(t_cleanup);
}

static void
t_file(const char *path, const char *text)
{
	int fd;

	LC_CHECK((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) >= 0);
	LC_CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	LC_CHECK(close(fd) == 0);
}

static void
t_dir(const char *path)
{
	LC_CHECK(mkdir(path, 0755) == 0);
}

static void
t_link(const char *target, const char *path)
{
	LC_CHECK(symlink(target, path) == 0);
}

/* Component-wise order: '/' below every byte. */
static int
t_cmp(const char *a, const char *b)
{
	const unsigned char *x = (const unsigned char *)a;
	const unsigned char *y = (const unsigned char *)b;
	int cx, cy;

	for (;; x++, y++) {
		cx = *x == '\0' ? 0 : *x == '/' ? 1 : *x + 1;
		cy = *y == '\0' ? 0 : *y == '/' ? 1 : *y + 1;
		if (cx != cy || cx == 0)
			return cx - cy;
	}
}

static void
t_put(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			fprintf(f, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
}

/*
 * Walk path and return the transcript, one line per result:
 *   "d NAME", "f NAME SIZE", "l NAME -> TARGET", "S NAME | MSG" (skip),
 *   "F NAME | MSG" (failure); bytes outside ASCII printed as \xHH.
 * Checks on the way: entry names strictly increase component-wise, a
 * regular file's descriptor is open, blocking and matches its stat, other
 * entries have fd -1, symlinks have size 0.
 */
static char *
t_walk(const char *path, uint32_t flags)
{
	struct lc_walk *w;
	struct lc_walk_entry ent;
	struct stat st;
	char *out = NULL, prev[LC_PATH_MAX] = "";
	size_t outlen = 0;
	FILE *f;
	int r, n = 0, base;

	LC_CHECK((f = open_memstream(&out, &outlen)) != NULL);
	base = lc_test_nfds();
	env.max_fds = 0;
	lc_err_clear(&env.e);
	LC_CHECK_EQ_I(lc_walk_open(&env.conf, path, flags, &w, &env.e), 0);
	while ((r = lc_walk_next(w, &ent, &env.e)) != 0) {
		LC_CHECK(n++ < 100000);
		if (lc_test_nfds() - base > env.max_fds)
			env.max_fds = lc_test_nfds() - base;
		LC_CHECK(r > 0);
		LC_CHECK(ent.name != NULL);
		if (r == LC_WALK_SKIP || r == LC_WALK_FAIL) {
			LC_CHECK_EQ_I(ent.fd, -1);
			LC_CHECK_EQ_I(env.e.code, LC_ERR_IO);
			fputs(r == LC_WALK_SKIP ? "S " : "F ", f);
			t_put(f, ent.name);
			fputs(" | ", f);
			t_put(f, env.e.msg);
			fputc('\n', f);
			lc_err_clear(&env.e);
			continue;
		}
		LC_CHECK_EQ_I(r, LC_WALK_ENTRY);
		LC_CHECK(t_cmp(prev, ent.name) < 0 || n == 1);
		LC_CHECK(strlen(ent.name) < sizeof(prev));
		snprintf(prev, sizeof(prev), "%s", ent.name);
		switch (ent.kind) {
		case LC_KIND_REG:
			LC_CHECK(ent.fd >= 0);
			LC_CHECK(ent.link == NULL);
			LC_CHECK(S_ISREG(ent.st.st_mode));
			LC_CHECK(fstat(ent.fd, &st) == 0);
			LC_CHECK(st.st_ino == ent.st.st_ino);
			LC_CHECK_EQ_I(fcntl(ent.fd, F_GETFL) & O_NONBLOCK, 0);
			LC_CHECK(fcntl(ent.fd, F_GETFD) & FD_CLOEXEC);
			close(ent.fd);
			fputs("f ", f);
			t_put(f, ent.name);
			fprintf(f, " %lld\n", (long long)ent.st.st_size);
			break;
		case LC_KIND_DIR:
			LC_CHECK_EQ_I(ent.fd, -1);
			LC_CHECK(ent.link == NULL);
			LC_CHECK(S_ISDIR(ent.st.st_mode));
			fputs("d ", f);
			t_put(f, ent.name);
			fputc('\n', f);
			break;
		case LC_KIND_SYMLINK:
			LC_CHECK_EQ_I(ent.fd, -1);
			LC_CHECK(ent.link != NULL);
			LC_CHECK(S_ISLNK(ent.st.st_mode));
			LC_CHECK_EQ_I(ent.st.st_size, 0);
			fputs("l ", f);
			t_put(f, ent.name);
			fputs(" -> ", f);
			t_put(f, ent.link);
			fputc('\n', f);
			break;
		default:
			LC_CHECK(0 && "unknown kind");
		}
	}
	/* the end stays the end */
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), 0);
	lc_walk_free(w);
	LC_CHECK_EQ_I(lc_test_nfds(), base);
	LC_CHECK(fclose(f) == 0);
	return out;
}

static void
t_expect(const char *path, uint32_t flags, const char *want)
{
	char *got = t_walk(path, flags);

	LC_CHECK_STR(got, want);
	free(got);
}

/* root/{a, b/, c/{d, e/{f}}} */
static void
t_basic_tree(void)
{
	t_dir("root");
	t_file("root/a", "abc");
	t_dir("root/b");
	t_dir("root/c");
	t_file("root/c/d", "");
	t_dir("root/c/e");
	t_file("root/c/e/f", "x");
}

LC_TEST(files_dirs_empty_dirs)
{
	char abs[128];

	t_env();
	t_basic_tree();
	t_expect("root", LC_WALK_RECURSIVE,
	    "d root\n"
	    "f root/a 3\n"
	    "d root/b\n"
	    "d root/c\n"
	    "f root/c/d 0\n"
	    "d root/c/e\n"
	    "f root/c/e/f 1\n");
	/* the names do not depend on how the root was spelled */
	snprintf(abs, sizeof(abs), "%s/./root//", env.dir);
	t_expect(abs, LC_WALK_RECURSIVE,
	    "d root\n"
	    "f root/a 3\n"
	    "d root/b\n"
	    "d root/c\n"
	    "f root/c/d 0\n"
	    "d root/c/e\n"
	    "f root/c/e/f 1\n");
	t_expect("root/c/e", LC_WALK_RECURSIVE, "d e\nf e/f 1\n");
	t_expect("root/b", LC_WALK_RECURSIVE, "d b\n");
}

LC_TEST(contents)
{
	t_env();
	t_basic_tree();
	t_expect("root/", LC_WALK_RECURSIVE | LC_WALK_CONTENTS,
	    "f a 3\n"
	    "d b\n"
	    "d c\n"
	    "f c/d 0\n"
	    "d c/e\n"
	    "f c/e/f 1\n");
	t_expect("root/b/", LC_WALK_RECURSIVE | LC_WALK_CONTENTS, "");
	/* "." names nothing itself, its contents are fine */
	LC_CHECK(chdir("root/c") == 0);
	t_expect(".", LC_WALK_RECURSIVE | LC_WALK_CONTENTS,
	    "f d 0\n"
	    "d e\n"
	    "f e/f 1\n");
}

LC_TEST(sorted_bytes)
{
	t_env();
	t_dir("root");
	t_file("root/b", "");
	t_file("root/a b", "");
	t_file("root/a\nb", "");
	t_file("root/\xff", "");
	t_file("root/A", "");
	t_file("root/a-b", "");
	t_dir("root/a");
	t_file("root/a/x", "");
	t_file("root/a/\xfe\xff", "");
	t_file("root/a/ ", "");
	/* "root/a/x" > "root/a b" bytewise, < component-wise */
	t_expect("root", LC_WALK_RECURSIVE,
	    "d root\n"
	    "f root/A 0\n"
	    "d root/a\n"
	    "f root/a/  0\n"
	    "f root/a/x 0\n"
	    "f root/a/\\xfe\\xff 0\n"
	    "f root/a\\x0ab 0\n"
	    "f root/a b 0\n"
	    "f root/a-b 0\n"
	    "f root/b 0\n"
	    "f root/\\xff 0\n");
}

/* root/{file, dir/{x, up -> ..}, rel, abs, dangling, out, dlink, self} */
static void
t_link_tree(char *abs, size_t abssz)
{
	t_dir("root");
	t_file("root/file", "hello");
	t_dir("root/dir");
	t_file("root/dir/x", "1");
	t_link("..", "root/dir/up");
	t_link("file", "root/rel");
	snprintf(abs, abssz, "%s/root/file", env.dir);
	t_link(abs, "root/abs");
	t_link("nowhere", "root/dangling");
	t_file("outside", "outside");
	t_link("../outside", "root/out");
	t_link("dir", "root/dlink");
	t_link("self", "root/self");
}

LC_TEST(symlinks_not_followed)
{
	char abs[128], want[1024];

	t_env();
	t_link_tree(abs, sizeof(abs));
	snprintf(want, sizeof(want),
	    "d root\n"
	    "l root/abs -> %s\n"
	    "l root/dangling -> nowhere\n"
	    "d root/dir\n"
	    "l root/dir/up -> ..\n"
	    "f root/dir/x 1\n"
	    "l root/dlink -> dir\n"
	    "f root/file 5\n"
	    "l root/out -> ../outside\n"
	    "l root/rel -> file\n"
	    "l root/self -> self\n", abs);
	t_expect("root", LC_WALK_RECURSIVE, want);
}

LC_TEST(symlinks_followed)
{
	char abs[128];

	t_env();
	t_link_tree(abs, sizeof(abs));
	t_expect("root", LC_WALK_RECURSIVE | LC_WALK_FOLLOW,
	    "d root\n"
	    "f root/abs 5\n"
	    "F root/dangling | root/dangling: No such file or directory\n"
	    "d root/dir\n"
	    "S root/dir/up | root/dir/up: symlink loop, skipped\n"
	    "f root/dir/x 1\n"
	    "d root/dlink\n"
	    "S root/dlink/up | root/dlink/up: symlink loop, skipped\n"
	    "f root/dlink/x 1\n"
	    "f root/file 5\n"
	    "f root/out 7\n"
	    "f root/rel 5\n"
	    "S root/self | root/self: symlink loop, skipped\n");
}

/* -L in a confined (--restrict) agent does not lead outside it. */
LC_TEST(symlinks_followed_confined)
{
	char abs[128], want[2048];
	struct lc_walk *w;

	t_env();
	t_link_tree(abs, sizeof(abs));
	t_link("../..", "root/esc");
	lc_confine_free(&env.conf);
	if (lc_confine_init(&env.conf, env.dir, &env.e) != 0)
		LC_SKIP("no openat2 here: --restrict cannot work");
	snprintf(want, sizeof(want),
	    "d root\n"
	    "F root/abs | root/abs: refused, it leads outside %s\n"
	    "F root/dangling | root/dangling: No such file or directory\n"
	    "d root/dir\n"
	    "S root/dir/up | root/dir/up: symlink loop, skipped\n"
	    "f root/dir/x 1\n"
	    "d root/dlink\n"
	    "S root/dlink/up | root/dlink/up: symlink loop, skipped\n"
	    "f root/dlink/x 1\n"
	    "F root/esc | root/esc: refused, it leads outside %s\n"
	    "f root/file 5\n"
	    "f root/out 7\n"
	    "f root/rel 5\n"
	    "S root/self | root/self: symlink loop, skipped\n",
	    env.dir, env.dir);
	t_expect("root", LC_WALK_RECURSIVE | LC_WALK_FOLLOW, want);
	/* the root itself is confined by lc_confine_open() */
	LC_CHECK_EQ_I(lc_walk_open(&env.conf, "root/esc",
	    LC_WALK_RECURSIVE, &w, &env.e), -LC_ERR_DENIED);
	LC_CHECK(w == NULL);
}

LC_TEST(root_symlink_followed)
{
	char abs[128];

	t_env();
	t_link_tree(abs, sizeof(abs));
	/* a root symlink is followed, without -L too; named by the link */
	t_expect("root/rel", 0, "f rel 5\n");
	t_expect("root/dlink", LC_WALK_RECURSIVE,
	    "d dlink\n"
	    "l dlink/up -> ..\n"
	    "f dlink/x 1\n");
	lc_err_clear(&env.e);
	{
		struct lc_walk *w = (struct lc_walk *)1;

		LC_CHECK_EQ_I(lc_walk_open(&env.conf, "root/dangling", 0, &w,
		    &env.e), -LC_ERR_IO);
		LC_CHECK(w == NULL);
		LC_CHECK_STR(env.e.msg,
		    "root/dangling: No such file or directory");
	}
}

LC_TEST(special_files_skipped)
{
	struct sockaddr_un sun;
	int s;

	t_env();
	t_dir("root");
	t_file("root/a", "");
	LC_CHECK(mkfifo("root/p", 0644) == 0);
	t_file("root/z", "");
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "root/s");
	LC_CHECK((s = socket(AF_UNIX, SOCK_STREAM, 0)) >= 0);
	LC_CHECK(bind(s, (struct sockaddr *)&sun, sizeof(sun)) == 0);
	close(s);
	t_link("p", "root/plink");
	t_expect("root", LC_WALK_RECURSIVE,
	    "d root\n"
	    "f root/a 0\n"
	    "S root/p | root/p: a FIFO, skipped\n"
	    "l root/plink -> p\n"
	    "S root/s | root/s: a socket, skipped\n"
	    "f root/z 0\n");
	t_expect("root/", LC_WALK_RECURSIVE | LC_WALK_CONTENTS |
	    LC_WALK_FOLLOW,
	    "f a 0\n"
	    "S p | root/p: a FIFO, skipped\n"
	    "S plink | root/plink: a FIFO, skipped\n"
	    "S s | root/s: a socket, skipped\n"
	    "f z 0\n");
}

/* The unreadable tree, walked as whoever runs this. */
static void
t_unreadable_walk(void)
{
	t_expect("root", LC_WALK_RECURSIVE,
	    "d root\n"
	    "f root/a 1\n"
	    "F root/bad | root/bad: Permission denied\n"
	    "d root/baddir\n"
	    "F root/baddir | root/baddir: Permission denied\n"
	    "d root/sub\n"
	    "f root/sub/x 1\n"
	    "f root/z 1\n");
	t_expect("root/", LC_WALK_RECURSIVE | LC_WALK_CONTENTS,
	    "f a 1\n"
	    "F bad | root/bad: Permission denied\n"
	    "d baddir\n"
	    "F baddir | root/baddir: Permission denied\n"
	    "d sub\n"
	    "f sub/x 1\n"
	    "f z 1\n");
}

LC_TEST(unreadable_file_and_dir)
{
	pid_t pid;
	int st;

	t_env();
	t_dir("root");
	t_file("root/a", "1");
	t_file("root/bad", "1");
	LC_CHECK(chmod("root/bad", 0) == 0);
	t_dir("root/baddir");
	t_file("root/baddir/hidden", "1");
	LC_CHECK(chmod("root/baddir", 0) == 0);
	t_dir("root/sub");
	t_file("root/sub/x", "1");
	t_file("root/z", "1");
	if (geteuid() != 0) {
		t_unreadable_walk();
		return;
	}
	/* root reads everything: walk as nobody in a child */
	fflush(NULL);
	LC_CHECK((pid = fork()) >= 0);
	if (pid == 0) {
		if (setgroups(0, NULL) != 0 ||
		    setresgid(65534, 65534, 65534) != 0 ||
		    setresuid(65534, 65534, 65534) != 0)
			_exit(LC_TEST_SKIP_CODE);
		/* keep /proc/self readable for LeakSanitizer */
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
		t_unreadable_walk();
		exit(0);
	}
	LC_CHECK(waitpid(pid, &st, 0) == pid);
	LC_CHECK(WIFEXITED(st));
	if (WEXITSTATUS(st) == LC_TEST_SKIP_CODE)
		LC_SKIP("running as root and cannot become uid 65534");
	LC_CHECK_EQ_I(WEXITSTATUS(st), 0);
}

#define T_DEEP 300

/*
 * deep/d/d/.../d (T_DEEP levels), a file f in each directory: f comes
 * after d, so every level is listed again after its subtree, the case
 * that reopens directories whose descriptor was given up.
 */
LC_TEST(deep_tree_few_descriptors)
{
	char *got, *p, name[T_DEEP * 2 + 16];
	FILE *f;
	char *want = NULL;
	size_t wantlen = 0, n;
	int fd, nfd, i;

	t_env();
	t_dir("deep");
	LC_CHECK((fd = open("deep", O_RDONLY | O_DIRECTORY)) >= 0);
	for (i = 0; i <= T_DEEP; i++) {
		nfd = openat(fd, "f", O_WRONLY | O_CREAT, 0644);
		LC_CHECK(nfd >= 0);
		close(nfd);
		if (i == T_DEEP)
			break;
		LC_CHECK(mkdirat(fd, "d", 0755) == 0);
		LC_CHECK((nfd = openat(fd, "d", O_RDONLY | O_DIRECTORY)) >= 0);
		close(fd);
		fd = nfd;
	}
	close(fd);
	/* expected: every d down, then the f's from the bottom up */
	LC_CHECK((f = open_memstream(&want, &wantlen)) != NULL);
	snprintf(name, sizeof(name), "deep");
	fprintf(f, "d %s\n", name);
	for (i = 0; i < T_DEEP; i++) {
		n = strlen(name);
		snprintf(name + n, sizeof(name) - n, "/d");
		fprintf(f, "d %s\n", name);
	}
	for (i = T_DEEP; i >= 0; i--) {
		fprintf(f, "f %s/f 0\n", name);
		if ((p = strrchr(name, '/')) != NULL)
			*p = '\0';
	}
	LC_CHECK(fclose(f) == 0);
	got = t_walk("deep", LC_WALK_RECURSIVE);
	LC_CHECK_STR(got, want);
	/* the kept levels, the top, a dup while listing, one file: ~32 */
	LC_CHECK(env.max_fds <= 32);
	LC_CHECK(env.max_fds >= 2);
	free(got);
	free(want);
	got = t_walk("deep", LC_WALK_RECURSIVE | LC_WALK_FOLLOW);
	LC_CHECK(env.max_fds <= 32);
	n = 0;
	for (p = got; (p = strchr(p, '\n')) != NULL; p++)
		n++;
	LC_CHECK_EQ_U(n, 1 + T_DEEP + T_DEEP + 1);
	free(got);
}

/*
 * Names over LC_PATH_MAX - 1 bytes are skipped, not descended into; the
 * message keeps the reason, cutting the front of the path.
 */
LC_TEST(name_too_long)
{
	char comp[201], name[LC_PATH_MAX + 256], *got, *p, *q;
	const char *tail = ": name too long, skipped\n";
	size_t n;
	int fd, nfd, i, dirs = 0;

	t_env();
	memset(comp, 'n', sizeof(comp) - 1);
	comp[sizeof(comp) - 1] = '\0';
	t_dir("r");
	LC_CHECK((fd = open("r", O_RDONLY | O_DIRECTORY)) >= 0);
	for (i = 0; i < 22; i++) {
		LC_CHECK(mkdirat(fd, comp, 0755) == 0);
		LC_CHECK((nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY)) >= 0);
		close(fd);
		fd = nfd;
	}
	close(fd);
	/* r/n...n/n...n: 1 + 201 k bytes, the 21st level is over */
	snprintf(name, sizeof(name), "r");
	for (i = 0; i < 21; i++) {
		n = strlen(name);
		snprintf(name + n, sizeof(name) - n, "/%s", comp);
	}
	LC_CHECK(strlen(name) > LC_PATH_MAX - 1);
	LC_CHECK(strlen(name) - 201 <= LC_PATH_MAX - 1);
	got = t_walk("r", LC_WALK_RECURSIVE);
	for (p = got; strncmp(p, "d ", 2) == 0; p = strchr(p, '\n') + 1)
		dirs++;
	LC_CHECK_EQ_I(dirs, 21);
	LC_CHECK(strncmp(p, "S ", 2) == 0);
	LC_CHECK(strncmp(p + 2, name, strlen(name)) == 0);
	q = p + 2 + strlen(name);
	LC_CHECK(strncmp(q, " | ...", 6) == 0);
	LC_CHECK(strlen(q) < LC_ERR_MSG_MAX);
	LC_CHECK(strlen(q) > strlen(tail));
	LC_CHECK_STR(q + strlen(q) - strlen(tail), tail);
	free(got);
	/* nftw cannot remove what is longer than PATH_MAX: go down, up */
	LC_CHECK(chdir("r") == 0);
	for (i = 0; i < 22; i++)
		LC_CHECK(chdir(comp) == 0);
	for (i = 0; i < 22; i++)
		LC_CHECK(chdir("..") == 0 && rmdir(comp) == 0);
	LC_CHECK(chdir(env.dir) == 0);
}

LC_TEST(root_file)
{
	struct lc_walk *w;
	struct lc_walk_entry ent;
	char buf[16];
	int fd;

	t_env();
	t_basic_tree();
	t_expect("root/a", 0, "f a 3\n");
	t_expect("root/c/e/f", LC_WALK_RECURSIVE, "f f 1\n");
	t_expect("./root/a", LC_WALK_CONTENTS, "f a 3\n");
	/* the descriptor reads the file, and is the caller's */
	LC_CHECK_EQ_I(lc_walk_open(&env.conf, "root/a", 0, &w, &env.e), 0);
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), LC_WALK_ENTRY);
	LC_CHECK_EQ_I(ent.kind, LC_KIND_REG);
	LC_CHECK_STR(ent.name, "a");
	LC_CHECK_EQ_I(ent.st.st_size, 3);
	fd = ent.fd;
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), 0);
	LC_CHECK_EQ_I(ent.fd, -1);
	lc_walk_free(w);
	LC_CHECK_EQ_I(read(fd, buf, sizeof(buf)), 3);
	LC_CHECK(memcmp(buf, "abc", 3) == 0);
	close(fd);
	/* an unread walk closes what it holds */
	LC_CHECK_EQ_I(lc_walk_open(&env.conf, "root", LC_WALK_RECURSIVE, &w,
	    &env.e), 0);
	lc_walk_free(w);
}

static void
t_open_fails(const char *path, uint32_t flags, int code, const char *msg)
{
	struct lc_walk *w = (struct lc_walk *)1;

	lc_err_clear(&env.e);
	LC_CHECK_EQ_I(lc_walk_open(&env.conf, path, flags, &w, &env.e), code);
	LC_CHECK(w == NULL);
	if (msg != NULL)
		LC_CHECK_STR(env.e.msg, msg);
	else
		LC_CHECK(env.e.msg[0] != '\0');
}

LC_TEST(root_errors)
{
	t_env();
	t_basic_tree();
	LC_CHECK(mkfifo("fifo", 0644) == 0);
	t_open_fails("root", 0, -LC_ERR_IO, "root: is a directory (use -r)");
	t_open_fails("root/", LC_WALK_CONTENTS, -LC_ERR_IO,
	    "root/: is a directory (use -r)");
	t_open_fails("nope", LC_WALK_RECURSIVE, -LC_ERR_IO,
	    "nope: No such file or directory");
	t_open_fails("fifo", LC_WALK_RECURSIVE, -LC_ERR_IO,
	    "fifo: not a regular file");
	t_open_fails("root/a/", LC_WALK_RECURSIVE | LC_WALK_CONTENTS,
	    -LC_ERR_IO, "root/a/: Not a directory");
	/* no name for the copy */
	t_open_fails(".", LC_WALK_RECURSIVE, -LC_ERR_IO, NULL);
	t_open_fails("root/..", LC_WALK_RECURSIVE, -LC_ERR_IO, NULL);
	t_open_fails("/", LC_WALK_RECURSIVE, -LC_ERR_IO, NULL);
	t_open_fails("", LC_WALK_RECURSIVE, -LC_ERR_IO, NULL);
	t_open_fails("root", 0x80, -LC_ERR_INTERNAL, NULL);
}

/* Entries removed between two calls are left out without a word. */
LC_TEST(vanished_entries)
{
	struct lc_walk *w;
	struct lc_walk_entry ent;

	t_env();
	t_dir("root");
	t_file("root/a", "");
	t_file("root/b", "");
	t_dir("root/c");
	t_file("root/c/x", "");
	t_file("root/d", "");
	LC_CHECK_EQ_I(lc_walk_open(&env.conf, "root", LC_WALK_RECURSIVE, &w,
	    &env.e), 0);
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), LC_WALK_ENTRY);
	LC_CHECK_STR(ent.name, "root");
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), LC_WALK_ENTRY);
	LC_CHECK_STR(ent.name, "root/a");
	close(ent.fd);
	LC_CHECK(unlink("root/b") == 0);
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), LC_WALK_ENTRY);
	LC_CHECK_STR(ent.name, "root/c");
	LC_CHECK(unlink("root/c/x") == 0 && rmdir("root/c") == 0);
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), LC_WALK_ENTRY);
	LC_CHECK_STR(ent.name, "root/d");
	close(ent.fd);
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), 0);
	LC_CHECK_EQ_I(env.e.code, 0);
	lc_walk_free(w);
}

/* A directory swapped for another between its entry and its listing. */
LC_TEST(dir_replaced)
{
	struct lc_walk *w;
	struct lc_walk_entry ent;

	t_env();
	t_dir("root");
	t_dir("root/c");
	t_dir("other");
	t_file("other/secret", "");
	t_file("root/d", "");
	LC_CHECK_EQ_I(lc_walk_open(&env.conf, "root", LC_WALK_RECURSIVE, &w,
	    &env.e), 0);
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), LC_WALK_ENTRY);
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), LC_WALK_ENTRY);
	LC_CHECK_STR(ent.name, "root/c");
	LC_CHECK(rmdir("root/c") == 0 && rename("other", "root/c") == 0);
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), LC_WALK_FAIL);
	LC_CHECK_STR(ent.name, "root/c");
	LC_CHECK_STR(env.e.msg, "root/c: changed during the copy");
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), LC_WALK_ENTRY);
	LC_CHECK_STR(ent.name, "root/d");
	close(ent.fd);
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), 0);
	lc_walk_free(w);
}

/*
 * A deep directory (its descriptor given up) swapped for another while its
 * subtree is walked: reopening it notices, one failure names it, the rest
 * of the walk goes on, nothing of the other directory is listed.
 */
LC_TEST(deep_dir_replaced)
{
	struct lc_walk *w;
	struct lc_walk_entry ent;
	char name[256], want[sizeof(name) + 64];
	int fd, nfd, i, r;

	t_env();
	t_dir("deep");
	LC_CHECK((fd = open("deep", O_RDONLY | O_DIRECTORY)) >= 0);
	for (i = 0; i <= 40; i++) {
		nfd = openat(fd, "f", O_WRONLY | O_CREAT, 0644);
		LC_CHECK(nfd >= 0);
		close(nfd);
		if (i == 40)
			break;
		LC_CHECK(mkdirat(fd, "d", 0755) == 0);
		LC_CHECK((nfd = openat(fd, "d", O_RDONLY | O_DIRECTORY)) >= 0);
		close(fd);
		fd = nfd;
	}
	close(fd);
	LC_CHECK_EQ_I(lc_walk_open(&env.conf, "deep", LC_WALK_RECURSIVE, &w,
	    &env.e), 0);
	while ((r = lc_walk_next(w, &ent, &env.e)) == LC_WALK_ENTRY &&
	    ent.kind != LC_KIND_REG)
		;
	LC_CHECK_EQ_I(r, LC_WALK_ENTRY);
	close(ent.fd);
	/* deep/d x 30: away, and a new one in its place */
	snprintf(name, sizeof(name), "deep");
	for (i = 0; i < 30; i++)
		strcat(name, "/d");
	snprintf(want, sizeof(want), "%s.old", name);
	LC_CHECK(rename(name, want) == 0);
	t_dir(name);
	snprintf(want, sizeof(want), "%s/secret", name);
	t_file(want, "");
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), LC_WALK_FAIL);
	LC_CHECK_STR(ent.name, name);
	snprintf(want, sizeof(want), "%s: changed during the copy", name);
	LC_CHECK_STR(env.e.msg, want);
	for (i = 29; i >= 0; i--) {
		LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), LC_WALK_ENTRY);
		*strrchr(name, '/') = '\0';
		snprintf(want, sizeof(want), "%s/f", name);
		LC_CHECK_STR(ent.name, want);
		close(ent.fd);
	}
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), 0);
	lc_walk_free(w);
}

/* A symlink put in a directory's place is not followed (without -L). */
LC_TEST(dir_replaced_by_symlink)
{
	struct lc_walk *w;
	struct lc_walk_entry ent;

	t_env();
	t_dir("root");
	t_dir("root/c");
	t_dir("other");
	t_file("other/secret", "");
	LC_CHECK_EQ_I(lc_walk_open(&env.conf, "root", LC_WALK_RECURSIVE, &w,
	    &env.e), 0);
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), LC_WALK_ENTRY);
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), LC_WALK_ENTRY);
	LC_CHECK_STR(ent.name, "root/c");
	LC_CHECK(rmdir("root/c") == 0);
	t_link("../other", "root/c");
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), LC_WALK_FAIL);
	LC_CHECK_STR(ent.name, "root/c");
	LC_CHECK(strncmp(env.e.msg, "root/c: ", 8) == 0);
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), 0);
	lc_walk_free(w);
}

/* ---- a fed walk (LC_WALK_FED) ---- */

/* One result of a fed walk as t_walk writes it ("W" for LC_WALK_WAIT). */
static void
t_fed_line(FILE *f, int r, const struct lc_walk_entry *ent)
{
	if (r == LC_WALK_WAIT) {
		fputs("W\n", f);
		return;
	}
	if (r == LC_WALK_FAIL || r == LC_WALK_SKIP) {
		LC_CHECK_EQ_I(ent->fd, -1);
		fprintf(f, "%c %s | %s\n", r == LC_WALK_FAIL ? 'F' : 'S',
		    ent->name, env.e.msg);
		lc_err_clear(&env.e);
		return;
	}
	LC_CHECK_EQ_I(r, LC_WALK_ENTRY);
	if (ent->kind == LC_KIND_REG) {
		LC_CHECK(S_ISREG(ent->st.st_mode));
		fprintf(f, "f %s %lld%s", ent->name,
		    (long long)ent->st.st_size, ent->fd >= 0 ? " open" : "");
		if (ent->part == LC_WALK_PART_FOLLOW)
			fprintf(f, " part %llu",
			    (unsigned long long)ent->part_size);
		else if (ent->part == LC_WALK_PART_WHOLE)
			fputs(" whole", f);
		else
			LC_CHECK_EQ_I(ent->part, LC_WALK_PART_NONE);
		fputc('\n', f);
		if (ent->fd >= 0)
			close(ent->fd);
	} else if (ent->kind == LC_KIND_DIR) {
		LC_CHECK(S_ISDIR(ent->st.st_mode));
		LC_CHECK_EQ_I(ent->fd, -1);
		fprintf(f, "d %s\n", ent->name);
	} else {
		LC_CHECK_EQ_I(ent->kind, LC_KIND_SYMLINK);
		LC_CHECK(S_ISLNK(ent->st.st_mode));
		LC_CHECK_EQ_I(ent->st.st_size, 0);
		fprintf(f, "l %s -> %s\n", ent->name, ent->link);
	}
}

/* Results until the walk waits or ends, onto f. */
static void
t_fed_drain(struct lc_walk *w, FILE *f)
{
	struct lc_walk_entry ent;
	int r, n = 0;

	do {
		LC_CHECK(n++ < 1000);
		r = lc_walk_next(w, &ent, &env.e);
		LC_CHECK(r >= 0);
		if (r > 0)
			t_fed_line(f, r, &ent);
	} while (r != 0 && r != LC_WALK_WAIT);
	if (r == 0)
		fputs("E\n", f);
}

/*
 * Open path fed (flags besides FED and RECURSIVE), feed names (NULL-ended)
 * and drain, then the end and drain: the transcript.  No descriptor left.
 */
static char *
t_fed(const char *path, uint32_t flags, const char *const *names)
{
	struct lc_walk *w;
	char *out = NULL;
	size_t outlen = 0;
	FILE *f;
	int base = lc_test_nfds();

	LC_CHECK((f = open_memstream(&out, &outlen)) != NULL);
	lc_err_clear(&env.e);
	LC_CHECK_EQ_I(lc_walk_open(&env.conf, path, flags | LC_WALK_FED |
	    LC_WALK_RECURSIVE, &w, &env.e), 0);
	/* "P:name": fed as a part file (lc_walk_feed_part), size 1000 */
	for (; *names != NULL; names++)
		LC_CHECK_EQ_I(strncmp(*names, "P:", 2) == 0 ?
		    lc_walk_feed_part(w, *names + 2, 1000, &env.e) :
		    lc_walk_feed(w, *names, &env.e), 0);
	t_fed_drain(w, f);
	lc_walk_feed_end(w);
	t_fed_drain(w, f);
	lc_walk_free(w);
	LC_CHECK_EQ_I(lc_test_nfds(), base);
	LC_CHECK(fclose(f) == 0);
	return out;
}

static void
t_fed_expect(const char *path, uint32_t flags, const char *const *names,
    const char *want)
{
	char *got = t_fed(path, flags, names);

	LC_CHECK_STR(got, want);
	free(got);
}

/* The names come back in the order fed, nothing else, no directory read. */
LC_TEST(fed_order_and_kinds)
{
	static const char *const names[] = { "root/c/e/f", "root/b",
		"root/l", "root/c", "root/a", "root/a", NULL };

	t_env();
	t_basic_tree();
	t_file("root/b/inside", "");
	t_link("a", "root/l");
	t_fed_expect("root", LC_WALK_NOOPEN, names,
	    "d root\n"
	    "f root/c/e/f 1\n"
	    "d root/b\n"
	    "l root/l -> a\n"
	    "d root/c\n"
	    "f root/a 3\n"
	    "f root/a 3\n"
	    "W\n"
	    "E\n");
	/* without NOOPEN a regular file comes open, as in the tree walk */
	static const char *const one[] = { "root/a", NULL };
	t_fed_expect("root", 0, one, "d root\nf root/a 3 open\nW\nE\n");
	/* a contents request: no root entry, names without the base */
	static const char *const rel[] = { "c/d", "b", NULL };
	t_fed_expect("root/", LC_WALK_CONTENTS | LC_WALK_NOOPEN, rel,
	    "f c/d 0\nd b\nW\nE\n");
}

/*
 * A symlink on the way is not followed, whether it leads inside the root
 * or out of it; the link itself, named, is a symlink entry.
 */
LC_TEST(fed_symlinked_parent_fails)
{
	static const char *const names[] = { "root/in/a", "root/out/secret",
		"root/out", "root/real/a", NULL };

	t_env();
	t_dir("root");
	t_dir("root/real");
	t_file("root/real/a", "x");
	t_dir("other");
	t_file("other/secret", "s");
	t_link("real", "root/in");
	t_link("../other", "root/out");
	t_fed_expect("root", LC_WALK_NOOPEN, names,
	    "d root\n"
	    "F root/in/a | root/in/a: in on the way is a symlink, not "
	    "followed\n"
	    "F root/out/secret | root/out/secret: out on the way is a "
	    "symlink, not followed\n"
	    "l root/out -> ../other\n"
	    "f root/real/a 1\n"
	    "W\nE\n");
}

/* Missing names and those of another kind fail: every name is answered. */
LC_TEST(fed_missing_and_special_fail)
{
	static const char *const names[] = { "root/nope", "root/a/x",
		"root/none/x", "root/p", "root/c/d", NULL };

	t_env();
	t_basic_tree();
	LC_CHECK(mkfifo("root/p", 0644) == 0);
	t_fed_expect("root", LC_WALK_NOOPEN, names,
	    "d root\n"
	    "F root/nope | root/nope: No such file or directory\n"
	    "F root/a/x | root/a/x: Not a directory\n"
	    "F root/none/x | root/none/x: No such file or directory\n"
	    "F root/p | root/p: a FIFO\n"
	    "f root/c/d 0\n"
	    "W\nE\n");
	/* below a root that is a regular file nothing can be */
	static const char *const below[] = { "a/x", NULL };
	t_fed_expect("root/a", LC_WALK_NOOPEN, below,
	    "f a 3 open\nF a/x | root/a/x: Not a directory\nW\nE\n");
}

/*
 * Names fed as part files (issue 25): the part file beside the name while
 * there is one (open, even with NOOPEN; its own length, the size fed
 * kept), else the name as fed (whole); a part file that is a symlink or
 * not a regular file fails the name, and so does a symlink on the way.
 */
LC_TEST(fed_part_files)
{
	static char longname[251], longpart[256], p1[300], p2[300];
	static const char *names[] = { "P:root/a", "P:root/c/d", "P:root/e",
		"P:root/f", "P:root/g", "P:root/in/d", "P:root/p", "root/a",
		p1, NULL };
	char want[2048];

	t_env();
	t_dir("root");
	t_file("root/a", "abc");
	t_file("root/.a.lanecp-part", "ab");
	t_dir("root/c");
	t_file("root/c/d", "d");
	t_link("../a", "root/c/.d.lanecp-part");
	t_file("root/e", "e");
	t_dir("root/.e.lanecp-part");
	t_file("root/f", "f");
	t_link("c", "root/in");
	t_file("root/p", "");
	LC_CHECK(mkfifo("root/.p.lanecp-part", 0644) == 0);
	/* a long name: its part file's name is hashed */
	memset(longname, 'n', sizeof(longname) - 1);
	LC_CHECK_EQ_I(lc_part_name(longname, longpart, sizeof(longpart)), 0);
	LC_CHECK(strncmp(longpart, ".lanecp-", 8) == 0);
	snprintf(p1, sizeof(p1), "P:root/%s", longname);
	snprintf(p2, sizeof(p2), "root/%s", longpart);
	t_file(p2, "0123");
	snprintf(want, sizeof(want),
	    "d root\n"
	    "f root/a 2 open part 1000\n"
	    "F root/c/d | root/c/d: its part file .d.lanecp-part is a "
	    "symlink\n"
	    "F root/e | root/e: .e.lanecp-part is not a regular file\n"
	    "f root/f 1 whole\n"
	    "F root/g | root/g: No such file or directory\n"
	    "F root/in/d | root/in/d: in on the way is a symlink, not "
	    "followed\n"
	    "F root/p | root/p: .p.lanecp-part is not a regular file\n"
	    "f root/a 3\n"
	    "f root/%s 4 open part 1000\n"
	    "W\nE\n", longname);
	t_fed_expect("root", LC_WALK_NOOPEN, names, want);
	/* the part file renamed: the name, whole */
	LC_CHECK(rename("root/.a.lanecp-part", "root/a") == 0);
	static const char *const again[] = { "P:root/a", NULL };
	t_fed_expect("root", LC_WALK_NOOPEN, again,
	    "d root\nf root/a 2 whole\nW\nE\n");
	/* a contents root, without NOOPEN */
	static const char *const rel[] = { "P:c/d", "P:f", NULL };
	t_fed_expect("root/", LC_WALK_CONTENTS, rel,
	    "F c/d | root/c/d: its part file .d.lanecp-part is a symlink\n"
	    "f f 1 open whole\nW\nE\n");
}

/* Names not below the root are refused when fed, the walk unchanged. */
LC_TEST(fed_refused_names)
{
	static const char *const bad[] = { "root", "root/", "rootx/a",
		"other/a", "/root/a", "root/../a", "root/./a", "root//a", "",
		"a", NULL };
	struct lc_walk *w;
	struct lc_walk_entry ent;
	size_t i;

	t_env();
	t_basic_tree();
	LC_CHECK_EQ_I(lc_walk_open(&env.conf, "root", LC_WALK_FED |
	    LC_WALK_RECURSIVE | LC_WALK_NOOPEN, &w, &env.e), 0);
	for (i = 0; bad[i] != NULL; i++) {
		lc_err_clear(&env.e);
		LC_CHECK_EQ_I(lc_walk_feed(w, bad[i], &env.e), -LC_ERR_DENIED);
		LC_CHECK(strstr(env.e.msg, "not a name below root") != NULL);
	}
	LC_CHECK_EQ_U(lc_walk_fed_held(w), 0);
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), LC_WALK_ENTRY);
	LC_CHECK_STR(ent.name, "root");
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), LC_WALK_WAIT);
	lc_walk_free(w);
	/* contents: no base, the names are relative ones */
	LC_CHECK_EQ_I(lc_walk_open(&env.conf, "root/", LC_WALK_FED |
	    LC_WALK_RECURSIVE | LC_WALK_CONTENTS, &w, &env.e), 0);
	LC_CHECK_EQ_I(lc_walk_feed(w, "/a", &env.e), -LC_ERR_DENIED);
	LC_CHECK_EQ_I(lc_walk_feed(w, "../a", &env.e), -LC_ERR_DENIED);
	LC_CHECK_EQ_I(lc_walk_feed(w, "a", &env.e), 0);
	lc_walk_free(w);	/* a name still queued is freed */
	/* FED only recursive, never with FOLLOW */
	LC_CHECK_EQ_I(lc_walk_open(&env.conf, "root", LC_WALK_FED, &w,
	    &env.e), -LC_ERR_INTERNAL);
	LC_CHECK_EQ_I(lc_walk_open(&env.conf, "root", LC_WALK_FED |
	    LC_WALK_RECURSIVE | LC_WALK_FOLLOW, &w, &env.e),
	    -LC_ERR_INTERNAL);
}

/*
 * WAIT while nothing is queued, names held counted up to the one the
 * caller was given last, the end after feed_end, no name after it.
 */
LC_TEST(fed_wait_held_end)
{
	struct lc_walk *w;
	struct lc_walk_entry ent;

	t_env();
	t_basic_tree();
	LC_CHECK_EQ_I(lc_walk_open(&env.conf, "root", LC_WALK_FED |
	    LC_WALK_RECURSIVE | LC_WALK_NOOPEN, &w, &env.e), 0);
	LC_CHECK_EQ_I(lc_walk_feed(w, "root/a", &env.e), 0);
	LC_CHECK_EQ_I(lc_walk_feed(w, "root/b", &env.e), 0);
	LC_CHECK_EQ_U(lc_walk_fed_held(w), 2);
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), LC_WALK_ENTRY);
	LC_CHECK_STR(ent.name, "root");	/* the root is not a fed name */
	LC_CHECK_EQ_U(lc_walk_fed_held(w), 2);
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), LC_WALK_ENTRY);
	LC_CHECK_STR(ent.name, "root/a");
	LC_CHECK_EQ_U(lc_walk_fed_held(w), 2);	/* 1 queued + root/a */
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), LC_WALK_ENTRY);
	LC_CHECK_STR(ent.name, "root/b");
	LC_CHECK_EQ_U(lc_walk_fed_held(w), 1);
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), LC_WALK_WAIT);
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), LC_WALK_WAIT);
	LC_CHECK_EQ_U(lc_walk_fed_held(w), 0);
	LC_CHECK(!lc_walk_fed_ended(w));
	LC_CHECK_EQ_I(lc_walk_feed(w, "root/c/d", &env.e), 0);
	lc_walk_feed_end(w);
	LC_CHECK(lc_walk_fed_ended(w));
	LC_CHECK_EQ_I(lc_walk_feed(w, "root/a", &env.e), -LC_ERR_INTERNAL);
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), LC_WALK_ENTRY);
	LC_CHECK_STR(ent.name, "root/c/d");
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), 0);
	LC_CHECK_EQ_I(lc_walk_next(w, &ent, &env.e), 0);
	lc_walk_free(w);
	/* a tree walk is not fed */
	LC_CHECK_EQ_I(lc_walk_open(&env.conf, "root", LC_WALK_RECURSIVE, &w,
	    &env.e), 0);
	LC_CHECK_EQ_I(lc_walk_feed(w, "root/a", &env.e), -LC_ERR_INTERNAL);
	lc_walk_free(w);
}

LC_TEST_MAIN()
