/*
 * partfile.c against a temporary directory: how part files are created,
 * reused and refused, and that finalize renames only the file we wrote.
 */
#include "harness.h"

#include "confine.h"
#include "err.h"
#include "partfile.h"
#include "wire.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define T_PART ".out.lanecp-part"

struct t_env {
	char dir[64];
	char path[128];		/* dir/out */
	struct lc_confine conf;
	struct lc_target t;
	struct lc_part p;
	struct lc_err e;
	int dfd;
};

static void
t_done(struct t_env *v)
{
	lc_part_release(&v->p);
	lc_target_close(&v->t);
	close(v->dfd);
	lc_test_rm_tree(v->dir);
}

/* A fresh directory; the target is dir/out (not there yet). */
static void
t_env(struct t_env *v)
{
	memset(v, 0, sizeof(*v));
	v->p.fd = -1;
	v->t.dir_fd = -1;
	umask(0);	/* modes below are exactly what the code asked for */
	snprintf(v->dir, sizeof(v->dir), "/tmp/lc-partfile-XXXXXX");
	LC_CHECK(mkdtemp(v->dir) != NULL);
	snprintf(v->path, sizeof(v->path), "%s/out", v->dir);
	LC_CHECK((v->dfd = open(v->dir, O_RDONLY | O_DIRECTORY)) >= 0);
	LC_CHECK(lc_confine_init(&v->conf, NULL, &v->e) == 0);
}

/* Resolve dir/out with flags and open it for a size-byte file. */
static int
t_open(struct t_env *v, uint32_t flags, uint64_t size, uint64_t *kept)
{
	lc_target_close(&v->t);
	lc_part_release(&v->p);
	LC_CHECK_EQ_I(lc_target_resolve(&v->t, &v->conf, v->path, flags, 027,
	    &v->e), 0);
	LC_CHECK_EQ_I(lc_target_name_ok(v->t.name), 1);
	LC_CHECK_EQ_I(lc_part_init(&v->t, "unused", size, 0644, &v->p, &v->e),
	    0);
	lc_err_clear(&v->e);
	return lc_part_open(&v->t, &v->p, kept, &v->e);
}

/* A part file of ours (0600, one link) holding text; its inode. */
static ino_t
t_make_part(struct t_env *v, const char *text, mode_t mode)
{
	struct stat st;
	int fd;

	fd = openat(v->dfd, T_PART, O_RDWR | O_CREAT | O_EXCL, mode);
	LC_CHECK(fd >= 0);
	LC_CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	LC_CHECK(fstat(fd, &st) == 0);
	close(fd);
	return st.st_ino;
}

static off_t
t_size(struct t_env *v, const char *name)
{
	struct stat st;

	if (fstatat(v->dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return -1;
	return st.st_size;
}

LC_TEST(fresh_part_is_created_0600_locked_and_target_untouched)
{
	struct t_env v;
	struct stat st, fst;
	uint64_t kept = 99;
	int fd2;

	t_env(&v);
	LC_CHECK_EQ_I(t_open(&v, 0, 10, &kept), 0);
	LC_CHECK_EQ_U(kept, 0);
	LC_CHECK_EQ_I(v.p.direct, 0);
	LC_CHECK_STR(v.p.tmp, T_PART);
	LC_CHECK_STR(v.p.final, v.path);
	LC_CHECK(fstatat(v.dfd, T_PART, &st, AT_SYMLINK_NOFOLLOW) == 0);
	LC_CHECK(S_ISREG(st.st_mode));
	LC_CHECK_EQ_U(st.st_mode & 07777, 0600);	/* not 0644, umask 0 */
	LC_CHECK_EQ_U(st.st_uid, geteuid());
	LC_CHECK_EQ_U(st.st_nlink, 1);
	LC_CHECK(fstat(v.p.fd, &fst) == 0);
	LC_CHECK_EQ_U(fst.st_ino, st.st_ino);
	LC_CHECK_EQ_I(t_size(&v, "out"), -1);
	/* locked against a second lanecp */
	LC_CHECK((fd2 = openat(v.dfd, T_PART, O_RDWR)) >= 0);
	LC_CHECK(flock(fd2, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK);
	close(fd2);
	t_done(&v);
}

LC_TEST(our_part_is_replaced_without_resume)
{
	struct t_env v;
	struct stat st;
	uint64_t kept = 99;
	ino_t old;
	char buf[8] = "";
	int keep;

	t_env(&v);
	old = t_make_part(&v, "hello", 0600);
	/* an old descriptor must not see the new data: a new inode */
	LC_CHECK((keep = openat(v.dfd, T_PART, O_RDONLY)) >= 0);
	LC_CHECK_EQ_I(t_open(&v, 0, 10, &kept), 0);
	LC_CHECK_EQ_U(kept, 0);
	LC_CHECK(fstat(v.p.fd, &st) == 0);
	LC_CHECK(st.st_ino != old);
	LC_CHECK_EQ_I(st.st_size, 0);
	LC_CHECK_EQ_U(st.st_mode & 07777, 0600);
	LC_CHECK(pread(keep, buf, 5, 0) == 5);
	LC_CHECK(memcmp(buf, "hello", 5) == 0);
	close(keep);
	t_done(&v);
}

LC_TEST(our_part_is_resumed_with_resume)
{
	struct t_env v;
	struct stat st;
	uint64_t kept = 0;
	char buf[8];
	ino_t old;
	int keep;

	t_env(&v);
	old = t_make_part(&v, "hello", 0600);
	LC_CHECK_EQ_I(t_open(&v, LC_TGT_RESUME, 10, &kept), 0);
	LC_CHECK_EQ_U(kept, 5);
	LC_CHECK(fstat(v.p.fd, &st) == 0);
	LC_CHECK_EQ_U(st.st_ino, old);
	LC_CHECK_EQ_I(st.st_size, 5);
	/* longer than the source: cut to its size, the rest is compared
	 * chunk by chunk like any partial file */
	LC_CHECK((keep = openat(v.dfd, T_PART, O_RDONLY)) >= 0);
	LC_CHECK_EQ_I(t_open(&v, LC_TGT_RESUME, 3, &kept), 0);
	LC_CHECK_EQ_U(kept, 3);
	LC_CHECK(fstat(v.p.fd, &st) == 0);
	LC_CHECK_EQ_U(st.st_ino, old);
	LC_CHECK_EQ_I(st.st_size, 3);
	LC_CHECK(pread(v.p.fd, buf, 3, 0) == 3);
	LC_CHECK(memcmp(buf, "hel", 3) == 0);
	close(keep);
	t_done(&v);
}

/* Refused with -LC_ERR_DENIED and why, with or without -a. */
static void
t_refused(struct t_env *v, const char *why)
{
	uint64_t kept = 99;

	LC_CHECK_EQ_I(t_open(v, 0, 10, &kept), -LC_ERR_DENIED);
	LC_CHECK(strstr(v->e.msg, why) != NULL);
	LC_CHECK_EQ_I(t_open(v, LC_TGT_RESUME, 10, &kept), -LC_ERR_DENIED);
	LC_CHECK(strstr(v->e.msg, why) != NULL);
	LC_CHECK_EQ_U(kept, 0);
}

LC_TEST(hardlinked_part_is_refused)
{
	struct t_env v;

	t_env(&v);
	t_make_part(&v, "hello", 0600);
	LC_CHECK(linkat(v.dfd, T_PART, v.dfd, "other", 0) == 0);
	t_refused(&v, "hard-linked");
	LC_CHECK_EQ_I(t_size(&v, "other"), 5);	/* not truncated/replaced */
	LC_CHECK_EQ_I(t_size(&v, T_PART), 5);
	t_done(&v);
}

LC_TEST(symlinked_part_is_refused)
{
	struct t_env v;

	t_env(&v);
	/* dangling: nothing may be created through it */
	LC_CHECK(symlinkat("victim", v.dfd, T_PART) == 0);
	t_refused(&v, "not a regular file");
	LC_CHECK_EQ_I(t_size(&v, "victim"), -1);
	/* to a file of ours: not written into */
	LC_CHECK(unlinkat(v.dfd, T_PART, 0) == 0);
	LC_CHECK(symlinkat("mine", v.dfd, T_PART) == 0);
	close(openat(v.dfd, "mine", O_WRONLY | O_CREAT, 0600));
	t_refused(&v, "not a regular file");
	LC_CHECK_EQ_I(t_size(&v, "mine"), 0);
	t_done(&v);
}

LC_TEST(world_writable_part_is_refused)
{
	struct t_env v;

	t_env(&v);
	t_make_part(&v, "hello", 0666);
	t_refused(&v, "writable by others");
	LC_CHECK_EQ_I(t_size(&v, T_PART), 5);
	t_done(&v);
}

LC_TEST(part_of_another_user_is_refused)
{
	struct t_env v;

	if (geteuid() != 0) {
		printf("skipped: needs root to chown\n");
		return;
	}
	t_env(&v);
	t_make_part(&v, "hello", 0600);
	LC_CHECK(fchownat(v.dfd, T_PART, 65534, 65534, 0) == 0);
	t_refused(&v, "owned by another user");
	LC_CHECK_EQ_I(t_size(&v, T_PART), 5);
	t_done(&v);
}

LC_TEST(finalize_renames_the_file_we_wrote)
{
	struct t_env v;
	struct stat st;
	uint64_t kept;

	t_env(&v);
	LC_CHECK_EQ_I(t_open(&v, 0, 10, &kept), 0);
	LC_CHECK(write(v.p.fd, "0123456789", 10) == 10);
	LC_CHECK_EQ_I(lc_part_finalize(&v.t, &v.p, &v.e), 0);
	LC_CHECK_EQ_I(v.p.fd, -1);
	LC_CHECK_STR(v.p.tmp, "");
	LC_CHECK_EQ_I(t_size(&v, T_PART), -1);
	LC_CHECK(fstatat(v.dfd, "out", &st, 0) == 0);
	LC_CHECK_EQ_I(st.st_size, 10);
	LC_CHECK_EQ_U(st.st_mode & 07777, 0640);	/* 0644 & ~027 */
	t_done(&v);
}

LC_TEST(finalize_refuses_a_replaced_part)
{
	struct t_env v;
	uint64_t kept;
	int fd;

	t_env(&v);
	LC_CHECK_EQ_I(t_open(&v, 0, 10, &kept), 0);
	LC_CHECK(write(v.p.fd, "0123456789", 10) == 10);
	/* someone renames their own file over our part file */
	fd = openat(v.dfd, "evil", O_WRONLY | O_CREAT | O_EXCL, 0600);
	LC_CHECK(fd >= 0 && write(fd, "EVIL!EVIL!", 10) == 10);
	close(fd);
	LC_CHECK(renameat(v.dfd, "evil", v.dfd, T_PART) == 0);
	LC_CHECK_EQ_I(lc_part_finalize(&v.t, &v.p, &v.e), -LC_ERR_DENIED);
	LC_CHECK(strstr(v.e.msg, "replaced by someone else") != NULL);
	LC_CHECK_EQ_I(t_size(&v, "out"), -1);
	LC_CHECK_EQ_I(t_size(&v, T_PART), 10);
	t_done(&v);
}

LC_TEST(finalize_refuses_a_short_file)
{
	struct t_env v;
	uint64_t kept;

	t_env(&v);
	LC_CHECK_EQ_I(t_open(&v, LC_TGT_NO_FSYNC, 10, &kept), 0);
	LC_CHECK(write(v.p.fd, "012345678", 9) == 9);
	LC_CHECK_EQ_I(lc_part_finalize(&v.t, &v.p, &v.e), -LC_ERR_IO);
	LC_CHECK(strstr(v.e.msg, "size is 9") != NULL);
	LC_CHECK_EQ_I(t_size(&v, "out"), -1);
	t_done(&v);
}

LC_TEST(existing_file_target_needs_force)
{
	struct t_env v;
	uint64_t kept;

	t_env(&v);
	close(openat(v.dfd, "out", O_WRONLY | O_CREAT, 0600));
	LC_CHECK_EQ_I(t_open(&v, 0, 10, &kept), -LC_ERR_EXISTS);
	LC_CHECK_EQ_I(t_size(&v, T_PART), -1);
	LC_CHECK_EQ_I(t_open(&v, LC_TGT_FORCE, 10, &kept), 0);
	LC_CHECK_EQ_I(v.p.direct, 0);
	LC_CHECK_EQ_I(t_size(&v, T_PART), 0);
	t_done(&v);
}

LC_TEST(fifo_target_needs_force)
{
	struct t_env v;
	uint64_t kept;
	int rd;

	t_env(&v);
	LC_CHECK(mkfifoat(v.dfd, "out", 0600) == 0);
	LC_CHECK_EQ_I(t_open(&v, 0, 10, &kept), -LC_ERR_EXISTS);
	LC_CHECK(strstr(v.e.msg, "FIFO") != NULL);
	LC_CHECK_EQ_I(v.p.fd, -1);
	LC_CHECK_EQ_I(t_open(&v, LC_TGT_FORCE, 10, &kept), -LC_ERR_IO);
	LC_CHECK(strstr(v.e.msg, "FIFO has no reader") != NULL);
	LC_CHECK((rd = openat(v.dfd, "out", O_RDONLY | O_NONBLOCK)) >= 0);
	LC_CHECK_EQ_I(t_open(&v, LC_TGT_FORCE, 10, &kept), 0);
	LC_CHECK_EQ_I(v.p.direct, 1);
	LC_CHECK_EQ_I(t_size(&v, T_PART), -1);
	close(rd);
	t_done(&v);
}

LC_TEST(device_target_needs_force_but_dev_null)
{
	struct lc_confine conf;
	struct lc_target t;
	struct lc_part p;
	struct lc_err e;
	uint64_t kept;

	lc_err_clear(&e);
	LC_CHECK(lc_confine_init(&conf, NULL, &e) == 0);
	LC_CHECK_EQ_I(lc_target_resolve(&t, &conf, "/dev/zero", 0, 022, &e),
	    0);
	LC_CHECK_EQ_I(lc_part_init(&t, "x", 1, 0644, &p, &e), 0);
	LC_CHECK_EQ_I(lc_part_open(&t, &p, &kept, &e), -LC_ERR_EXISTS);
	LC_CHECK(strstr(e.msg, "character device") != NULL);
	LC_CHECK_EQ_I(p.fd, -1);
	lc_part_release(&p);
	lc_target_close(&t);
	LC_CHECK_EQ_I(lc_target_resolve(&t, &conf, "/dev/null", 0, 022, &e),
	    0);
	LC_CHECK_EQ_I(lc_part_init(&t, "x", 1, 0644, &p, &e), 0);
	LC_CHECK_EQ_I(lc_part_open(&t, &p, &kept, &e), 0);
	LC_CHECK_EQ_I(p.direct, 1);
	LC_CHECK_EQ_I(lc_part_finalize(&t, &p, &e), 0);
	lc_part_release(&p);
	lc_target_close(&t);
}

LC_TEST(unsafe_peer_names_and_long_part_names)
{
	struct t_env v;
	char name[300], tmp[LC_PATH_MAX];

	t_env(&v);
	LC_CHECK_EQ_I(lc_target_resolve(&v.t, &v.conf, v.dir, 0, 022, &v.e),
	    0);
	LC_CHECK_EQ_I(v.t.is_dir, 1);
	LC_CHECK_EQ_I(lc_part_init(&v.t, "..", 1, 0644, &v.p, &v.e),
	    -LC_ERR_DENIED);
	LC_CHECK_EQ_I(lc_part_init(&v.t, "a/b", 1, 0644, &v.p, &v.e),
	    -LC_ERR_DENIED);
	LC_CHECK_EQ_I(lc_part_init(&v.t, "ok", 1, 0644, &v.p, &v.e), 0);
	LC_CHECK_STR(v.p.name, "ok");
	/* the target's name for messages is on the heap, sized to fit */
	LC_CHECK(strlen(v.p.final) == strlen(v.dir) + 3);
	LC_CHECK(strncmp(v.p.final, v.dir, strlen(v.dir)) == 0);
	LC_CHECK_STR(v.p.final + strlen(v.dir), "/ok");
	/* a file in flight costs no LC_PATH_MAX buffers (issue 23) */
	LC_CHECK(sizeof(struct lc_part) <= 1024);
	LC_CHECK_EQ_I(lc_part_set_final(&v.p, "/a/", "b"), 0);
	LC_CHECK_STR(v.p.final, "/a/b");
	LC_CHECK_EQ_I(lc_part_set_final(&v.p, "/a", NULL), 0);
	LC_CHECK_STR(v.p.final, "/a");
	memset(tmp, 'd', LC_PATH_MAX - 3);
	tmp[LC_PATH_MAX - 3] = '\0';
	LC_CHECK_EQ_I(lc_part_set_final(&v.p, tmp, "b"), 0);
	LC_CHECK_EQ_I((int)strlen(v.p.final), LC_PATH_MAX - 1);
	LC_CHECK_EQ_I(lc_part_set_final(&v.p, tmp, "bc"), -LC_ERR_TOOBIG);
	LC_CHECK_EQ_I((int)strlen(v.p.final), LC_PATH_MAX - 1);
	memset(name, 'n', 250);
	name[250] = '\0';
	LC_CHECK_EQ_I(lc_part_name(name, tmp, sizeof(tmp)), 0);
	LC_CHECK(strlen(tmp) <= 255);
	LC_CHECK(strncmp(tmp, ".lanecp-", 8) == 0);
	LC_CHECK_EQ_I(lc_part_name("ok", tmp, 8), -LC_ERR_TOOBIG);
	t_done(&v);
}

LC_TEST(space_check_can_refuse_and_be_skipped)
{
	struct t_env v;
	uint64_t kept;

	t_env(&v);
	LC_CHECK_EQ_I(t_open(&v, 0, 10, &kept), 0);
	LC_CHECK_EQ_I(lc_part_space(&v.t, &v.p, UINT64_MAX / 2, &v.e),
	    -LC_ERR_NOSPACE);
	LC_CHECK_EQ_I(lc_part_space(&v.t, &v.p, 1, &v.e), 0);
	LC_CHECK_EQ_I(t_open(&v, LC_TGT_NO_SPACE_CHECK, 10, &kept), 0);
	LC_CHECK_EQ_I(lc_part_space(&v.t, &v.p, UINT64_MAX / 2, &v.e), 0);
	t_done(&v);
}

/* A part file locked by this same process: its own error, not taken over. */
LC_TEST(locked_part_file_is_its_own_error)
{
	struct t_env v;
	uint64_t kept;
	int fd;

	t_env(&v);
	(void)t_make_part(&v, "abc", 0600);
	LC_CHECK((fd = openat(v.dfd, T_PART, O_RDWR)) >= 0);
	LC_CHECK(flock(fd, LOCK_EX | LOCK_NB) == 0);
	LC_CHECK_EQ_I(t_open(&v, LC_TGT_RESUME, 10, &kept), -LC_ERR_LOCKED);
	/* held by this very process: never taken over */
	LC_CHECK(strstr(v.e.msg, "this lanecp is already writing") != NULL);
	close(fd);
	LC_CHECK_EQ_I(t_open(&v, LC_TGT_RESUME, 10, &kept), 0);
	LC_CHECK_EQ_U(kept, 3);
	t_done(&v);
}

/* A tree target: the directory itself, with flags. */
static void
t_tree(struct t_env *v, uint32_t flags)
{
	lc_target_close(&v->t);
	LC_CHECK_EQ_I(lc_target_resolve(&v->t, &v->conf, v->dir,
	    flags | LC_TGT_TREE | LC_TGT_WANT_DIR, 022, &v->e), 0);
	LC_CHECK_EQ_I(v->t.is_dir, 1);
}

LC_TEST(tree_mkdir_keeps_dirs_and_replaces_files_only_with_force)
{
	struct t_env v;
	struct stat st;
	char p[256];
	int made = -1;

	t_env(&v);
	t_tree(&v, 0);
	LC_CHECK_EQ_I(lc_tree_mkdir(&v.t, v.t.dir_fd, "d", "d", &made, &v.e),
	    0);
	LC_CHECK_EQ_I(made, 1);
	snprintf(p, sizeof(p), "%s/d", v.dir);
	LC_CHECK(stat(p, &st) == 0 && S_ISDIR(st.st_mode));
	LC_CHECK_EQ_U(st.st_mode & 0777, 0700);	/* its own mode comes last */
	LC_CHECK_EQ_I(lc_tree_mkdir(&v.t, v.t.dir_fd, "d", "d", &made, &v.e),
	    0);
	LC_CHECK_EQ_I(made, 0);
	/* a file in the way: refused without -f, replaced with it */
	snprintf(p, sizeof(p), "%s/f", v.dir);
	LC_CHECK(close(open(p, O_CREAT | O_WRONLY, 0644)) == 0);
	LC_CHECK_EQ_I(lc_tree_mkdir(&v.t, v.t.dir_fd, "f", "f", &made, &v.e),
	    -LC_ERR_EXISTS);
	t_tree(&v, LC_TGT_FORCE);
	LC_CHECK_EQ_I(lc_tree_mkdir(&v.t, v.t.dir_fd, "f", "f", &made, &v.e),
	    0);
	LC_CHECK(stat(p, &st) == 0 && S_ISDIR(st.st_mode));
	/* a symlink to a directory is not a directory: replaced, not used */
	snprintf(p, sizeof(p), "%s/l", v.dir);
	LC_CHECK(symlink("/tmp", p) == 0);
	LC_CHECK_EQ_I(lc_tree_mkdir(&v.t, v.t.dir_fd, "l", "l", &made, &v.e),
	    0);
	LC_CHECK(lstat(p, &st) == 0 && S_ISDIR(st.st_mode));
	/* modes after contents: 0555 less nothing with -p */
	t_tree(&v, LC_TGT_PRESERVE);
	LC_CHECK_EQ_I(lc_tree_dir_attrs(&v.t, "d", &(struct lc_attrs){
	    .set_mode = 1, .mode = 0555, .mtime_sec = 1000000000,
	    .mtime_nsec = 5 }, 1,
	    &v.e), 0);
	snprintf(p, sizeof(p), "%s/d", v.dir);
	LC_CHECK(stat(p, &st) == 0);
	LC_CHECK_EQ_U(st.st_mode & 0777, 0555);
	LC_CHECK_EQ_I((long long)st.st_mtim.tv_sec, 1000000000LL);
	LC_CHECK_EQ_I((long long)st.st_mtim.tv_nsec, 5LL);
	t_done(&v);
}

LC_TEST(tree_symlink_made_as_a_link_never_followed)
{
	struct t_env v;
	char p[256], buf[256];
	struct stat st;
	ssize_t n;

	t_env(&v);
	t_tree(&v, 0);
	/* the target is data: absolute, outside, dangling, all fine */
	LC_CHECK_EQ_I(lc_tree_symlink(&v.t, v.t.dir_fd, "l", "l", "../../etc",
	    &(struct lc_attrs){ .mtime_sec = 0, .mtime_nsec = 0 }, &v.e), 0);
	snprintf(p, sizeof(p), "%s/l", v.dir);
	LC_CHECK((n = readlink(p, buf, sizeof(buf) - 1)) == 9);
	buf[n] = '\0';
	LC_CHECK_STR(buf, "../../etc");
	/* the same link again: left alone; another one: needs -f */
	LC_CHECK_EQ_I(lc_tree_symlink(&v.t, v.t.dir_fd, "l", "l", "../../etc",
	    &(struct lc_attrs){ .mtime_sec = 0, .mtime_nsec = 0 }, &v.e), 0);
	LC_CHECK_EQ_I(lc_tree_symlink(&v.t, v.t.dir_fd, "l", "l", "x",
	    &(struct lc_attrs){ .mtime_sec = 0, .mtime_nsec = 0 }, &v.e), -LC_ERR_EXISTS);
	t_tree(&v, LC_TGT_UPDATE | LC_TGT_PRESERVE);
	LC_CHECK_EQ_I(lc_tree_symlink(&v.t, v.t.dir_fd, "l", "l", "x",
	    &(struct lc_attrs){ .mtime_sec = 1234567890, .mtime_nsec = 0 }, &v.e), 0);
	LC_CHECK(lstat(p, &st) == 0 && S_ISLNK(st.st_mode));
	LC_CHECK_EQ_I((long long)st.st_mtim.tv_sec, 1234567890LL);
	/* never over a directory */
	snprintf(p, sizeof(p), "%s/dir", v.dir);
	LC_CHECK(mkdir(p, 0700) == 0);
	LC_CHECK_EQ_I(lc_tree_symlink(&v.t, v.t.dir_fd, "dir", "dir", "x",
	    &(struct lc_attrs){ .mtime_sec = 0, .mtime_nsec = 0 }, &v.e), -LC_ERR_EXISTS);
	LC_CHECK(lstat(p, &st) == 0 && S_ISDIR(st.st_mode));
	t_done(&v);
}

/*
 * Shards make every symlink of a tree at once (--shard, issue 25): two
 * processes making the same 3,000 links, with -p as the shards in the
 * test were, both succeed and every link is right.  Before the retry one
 * of them, its temporary link removed as stale by the other, failed
 * "cannot make symlink ...: No such file or directory" (a CI run).
 */
LC_TEST(tree_symlink_two_makers_at_once)
{
	struct t_env v;
	char leaf[32], p[256], buf[64];
	pid_t pid[2];
	int st, nl = 3000;
	ssize_t n;

	t_env(&v);
	t_tree(&v, LC_TGT_PRESERVE);
	for (int k = 0; k < 2; k++) {
		LC_CHECK((pid[k] = fork()) >= 0);
		if (pid[k] != 0)
			continue;
		for (int i = 0; i < nl; i++) {
			snprintf(leaf, sizeof(leaf), "l%d", i);
			snprintf(buf, sizeof(buf), "target-%d", i);
			if (lc_tree_symlink(&v.t, v.t.dir_fd, leaf, leaf, buf,
			    &(struct lc_attrs){ .mtime_sec = 1234567890 },
			    &v.e) != 0) {
				fprintf(stderr, "maker %d: %s\n", k, v.e.msg);
				_exit(1);
			}
		}
		_exit(0);
	}
	for (int k = 0; k < 2; k++) {
		LC_CHECK(waitpid(pid[k], &st, 0) == pid[k]);
		LC_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	for (int i = 0; i < nl; i++) {
		char want[32];

		snprintf(p, sizeof(p), "%s/l%d", v.dir, i);
		snprintf(want, sizeof(want), "target-%d", i);
		LC_CHECK((n = readlink(p, buf, sizeof(buf) - 1)) > 0);
		buf[n] = '\0';
		LC_CHECK_STR(buf, want);
	}
	t_done(&v);
}

LC_TEST(tree_skip_quick_check_and_ignore_existing)
{
	struct t_env v;
	struct timespec ts[2] = { { 0, UTIME_OMIT }, { 1700000000, 0 } };
	char p[256];
	int fd;

	t_env(&v);
	snprintf(p, sizeof(p), "%s/f", v.dir);
	LC_CHECK((fd = open(p, O_CREAT | O_WRONLY, 0644)) >= 0);
	LC_CHECK(write(fd, "hello", 5) == 5);
	LC_CHECK(futimens(fd, ts) == 0);
	close(fd);
	t_tree(&v, 0);	/* neither -u nor -O: never skipped */
	LC_CHECK_EQ_I(lc_tree_skip(&v.t, v.t.dir_fd, "f", 5, 1700000000), 0);
	t_tree(&v, LC_TGT_UPDATE);
	LC_CHECK_EQ_I(lc_tree_skip(&v.t, v.t.dir_fd, "f", 5, 1700000000),
	    LC_SKIP_UPTODATE);
	LC_CHECK_EQ_I(lc_tree_skip(&v.t, v.t.dir_fd, "f", 6, 1700000000), 0);
	LC_CHECK_EQ_I(lc_tree_skip(&v.t, v.t.dir_fd, "f", 5, 1700000001), 0);
	LC_CHECK_EQ_I(lc_tree_skip(&v.t, v.t.dir_fd, "nothere", 5, 0), 0);
	t_tree(&v, LC_TGT_SKIP_EXISTING);
	LC_CHECK_EQ_I(lc_tree_skip(&v.t, v.t.dir_fd, "f", 99, 0),
	    LC_SKIP_EXISTS);
	LC_CHECK_EQ_I(lc_tree_skip(&v.t, v.t.dir_fd, "nothere", 5, 0), 0);
	t_done(&v);
}

LC_TEST(tree_dirs_never_through_a_symlink)
{
	struct t_env v;
	char p[256];
	int fd = -1;

	t_env(&v);
	snprintf(p, sizeof(p), "%s/real", v.dir);
	LC_CHECK(mkdir(p, 0700) == 0);
	snprintf(p, sizeof(p), "%s/real/sub", v.dir);
	LC_CHECK(mkdir(p, 0700) == 0);
	snprintf(p, sizeof(p), "%s/link", v.dir);
	LC_CHECK(symlink("real", p) == 0);	/* stays beneath, still refused */
	t_tree(&v, 0);
	LC_CHECK_EQ_I(lc_tree_open_dir(&v.t, "real/sub", &fd, &v.e), 0);
	close(fd);
	LC_CHECK(lc_tree_open_dir(&v.t, "link/sub", &fd, &v.e) != 0);
	LC_CHECK_EQ_I(fd, -1);
	LC_CHECK(lc_tree_open_dir(&v.t, "link", &fd, &v.e) != 0);
	LC_CHECK(lc_tree_open_dir(&v.t, "real/../..", &fd, &v.e) != 0);
	t_done(&v);
}

LC_TEST_MAIN()

/*
 * -u -p: a skipped file gets the source's mode and nanosecond mtime, only
 * what differs, and says what; a symlink in its place is never followed
 * (nothing is changed through it); without -p nothing is touched.
 */
LC_TEST(tree_skip_attrs_updates_mode_and_times_not_through_links)
{
	struct t_env v;
	struct timespec ts[2] = { { 0, UTIME_OMIT }, { 1700000000, 0 } };
	struct lc_attrs a;
	struct stat st;
	char p[256], q[256];
	unsigned set = 99;
	int fd;

	t_env(&v);
	snprintf(p, sizeof(p), "%s/f", v.dir);
	LC_CHECK((fd = open(p, O_CREAT | O_WRONLY, 0644)) >= 0);
	LC_CHECK(futimens(fd, ts) == 0);
	close(fd);
	memset(&a, 0, sizeof(a));
	a.mode = 0600;
	a.mtime_sec = 1700000000;
	a.mtime_nsec = 5;
	t_tree(&v, LC_TGT_UPDATE);	/* no -p: left alone */
	LC_CHECK_EQ_I(lc_tree_skip_attrs(&v.t, v.t.dir_fd, "f", "f", &a, &set,
	    &v.e), 0);
	LC_CHECK_EQ_U(set, 0);
	LC_CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0644);
	t_tree(&v, LC_TGT_UPDATE | LC_TGT_PRESERVE);
	LC_CHECK_EQ_I(lc_tree_skip_attrs(&v.t, v.t.dir_fd, "f", "f", &a, &set,
	    &v.e), 0);
	LC_CHECK_EQ_U(set, LC_SKIP_SET_MODE | LC_SKIP_SET_TIMES);
	LC_CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0600);
	LC_CHECK_EQ_I((int)st.st_mtim.tv_nsec, 5);
	LC_CHECK_EQ_I(lc_tree_skip_attrs(&v.t, v.t.dir_fd, "f", "f", &a, &set,
	    &v.e), 0);
	LC_CHECK_EQ_U(set, 0);	/* nothing differs now */
	a.mode = 0;		/* a file of mode 0 (O_PATH unless root) */
	LC_CHECK_EQ_I(lc_tree_skip_attrs(&v.t, v.t.dir_fd, "f", "f", &a, &set,
	    &v.e), 0);
	LC_CHECK_EQ_U(set, LC_SKIP_SET_MODE);
	a.mode = 0640;
	LC_CHECK_EQ_I(lc_tree_skip_attrs(&v.t, v.t.dir_fd, "f", "f", &a, &set,
	    &v.e), 0);
	LC_CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0640);
	/* a symlink planted at the name: not followed, nothing changed */
	snprintf(q, sizeof(q), "%s/l", v.dir);
	LC_CHECK(symlink(p, q) == 0);
	a.mode = 0604;
	LC_CHECK_EQ_I(lc_tree_skip_attrs(&v.t, v.t.dir_fd, "l", "l", &a, &set,
	    &v.e), 0);
	LC_CHECK_EQ_U(set, 0);
	LC_CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0640);
	t_done(&v);
}
