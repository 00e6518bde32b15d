/*
 * The push script (push.h): its command's quoting, and the script itself
 * run by /bin/sh here (no sshd): a verified cached agent is exec'd with
 * the transfer id, a changed one is not; a cache that another user could
 * swap is not used (the agent goes to a private temporary directory), and
 * the file hashed is the one exec'd, even when its name is replaced in
 * between.  Two users: tests/integration/test_push.sh.
 */
#include "harness.h"

#include "lockholder.h"
#include "push.h"

#include <limits.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ID "0123456789abcdef0123456789abcdef"

static const char lc_fake_agent[] = "#!/bin/sh\necho AGENT \"$@\"\n";

static void
lc_fake(struct lc_push_agent *a)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	memset(a, 0, sizeof(*a));
	a->data = (uint8_t *)(uintptr_t)lc_fake_agent;
	a->len = sizeof(lc_fake_agent) - 1;
	EVP_Digest(a->data, a->len, md, &n, EVP_sha256(), NULL);
	for (unsigned i = 0; i < 32; i++)
		snprintf(a->sha256 + 2 * i, 3, "%02x", md[i]);
	snprintf(a->dir, sizeof(a->dir), "9.9-%.16s", a->sha256);
}

/*
 * Run the command as a login shell would; output in out.  bin (if not
 * NULL) goes in front of PATH, tmp (if not NULL) is TMPDIR, stdin is the
 * file in (NULL: empty).
 */
static int
lc_run_in(const char *cache, const char *bin, const char *tmp,
    const char *in, const char *cmd, char *out, size_t outsz)
{
	char line[LC_PUSH_CMD_MAX + 2048];
	size_t got;
	FILE *p;

	snprintf(line, sizeof(line), "env -i PATH=%s%s/usr/bin:/bin "
	    "HOME=/nonexistent XDG_CACHE_HOME=%s %s%s /bin/sh -c \"$LC_CMD\" "
	    "<%s 2>&1", bin != NULL ? bin : "", bin != NULL ? ":" : "", cache,
	    tmp != NULL ? "TMPDIR=" : "", tmp != NULL ? tmp : "",
	    in != NULL ? in : "/dev/null");
	setenv("LC_CMD", cmd, 1);
	if ((p = popen(line, "r")) == NULL)
		return -1;
	got = fread(out, 1, outsz - 1, p);
	out[got] = '\0';
	return pclose(p);
}

static int
lc_run(const char *cache, const char *cmd, char *out, size_t outsz)
{
	return lc_run_in(cache, NULL, NULL, NULL, cmd, out, outsz);
}

/* Write text to path with mode. */
static void
lc_put(const char *path, const char *text, mode_t mode)
{
	FILE *f;

	LC_CHECK((f = fopen(path, "w")) != NULL);
	LC_CHECK(fputs(text, f) >= 0);
	LC_CHECK(fclose(f) == 0);
	LC_CHECK(chmod(path, mode) == 0);
}

/* A verified agent cached under base (made 0700 as the script would);
 * its path in path. */
static void
lc_cache(const struct lc_push_agent *a, const char *base, char *path,
    size_t pathsz)
{
	snprintf(path, pathsz, "%s/lanecp", base);
	LC_CHECK(mkdir(path, 0700) == 0);
	snprintf(path, pathsz, "%s/lanecp/%s", base, a->dir);
	LC_CHECK(mkdir(path, 0700) == 0);
	snprintf(path, pathsz, "%s/lanecp/%s/lanecp", base, a->dir);
	lc_put(path, lc_fake_agent, 0700);
}

/* Entries in dir (not . and ..), -1 if it cannot be read. */
static int
lc_entries(const char *dir)
{
	struct dirent *de;
	DIR *d;
	int n = 0;

	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	closedir(d);
	return n;
}

/* A new directory in /tmp, by its real path (no symlink in it). */
static void
lc_tmpdir(char *dir, size_t dirsz)
{
	char tmpl[] = "/tmp/lc_push_XXXXXX", real[PATH_MAX];

	LC_CHECK(mkdtemp(tmpl) != NULL && realpath(tmpl, real) != NULL);
	LC_CHECK(strlen(real) < dirsz);
	memcpy(dir, real, strlen(real) + 1);
}

static int
lc_ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && strcmp(s + n - m, tail) == 0;
}

LC_TEST(push_command_quoting)
{
	struct lc_push_agent a;
	char cmd[LC_PUSH_CMD_MAX], tail[256], got[LC_TRANSFER_HEX + 1];
	const char *q1, *q2;

	lc_fake(&a);
	LC_CHECK(lc_push_command(&a, ID, 77, cmd, sizeof(cmd)) == 0);
	/* the script is one single-quoted word: no quote, "!", backslash or
	   newline inside, for sh, csh and fish login shells */
	q1 = strchr(cmd, '\'');
	LC_CHECK(q1 != NULL);
	q2 = strchr(q1 + 1, '\'');
	LC_CHECK(q2 != NULL && strchr(q2 + 1, '\'') == NULL);
	LC_CHECK(strpbrk(cmd, "!\\\n") == NULL);
	/* a forced command's agent finds the id in SSH_ORIGINAL_COMMAND */
	LC_CHECK(lc_transfer_from_command(cmd, got) == 1);
	LC_CHECK_STR(got, ID);
	snprintf(tail, sizeof(tail), "' lanecp %s %s %zu --transfer=%s 77",
	    a.sha256,
	    a.dir, a.len, ID);
	LC_CHECK_STR(q2, tail);
	LC_CHECK(lc_push_command(&a, NULL, 77, cmd, sizeof(cmd)) == 0);
	LC_CHECK(strstr(cmd, " - 77") != NULL);
	LC_CHECK(lc_push_command(&a, ID, 77, cmd, 100) == -LC_ERR_TOOBIG);
}

LC_TEST(push_script_cache)
{
	struct lc_push_agent a;
	char tmpl[128], path[512], want[1024], tmp[512];
	char cmd[LC_PUSH_CMD_MAX], out[2048];
	FILE *f;

	if (access("/bin/sh", X_OK) != 0 || access("/usr/bin/sha256sum",
	    X_OK) != 0)
		LC_SKIP("no /bin/sh or sha256sum");
	lc_fake(&a);
	lc_tmpdir(tmpl, sizeof(tmpl));
	LC_CHECK(lc_push_command(&a, ID, 0, cmd, sizeof(cmd)) == 0);

	/* nothing cached: it asks for a push (stdin is empty: it stops) */
	lc_run(tmpl, cmd, out, sizeof(out));
	LC_CHECK(strncmp(out, "LANECP-BOOT push missing ", 25) == 0);
	snprintf(path, sizeof(path), "%s/lanecp/%s", tmpl, a.dir);
	struct stat st;
	LC_CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0700);

	/* a verified cached agent runs with the agent's arguments */
	snprintf(path, sizeof(path), "%s/lanecp/%s/lanecp", tmpl, a.dir);
	LC_CHECK((f = fopen(path, "w")) != NULL);
	fputs(lc_fake_agent, f);
	fclose(f);
	LC_CHECK(chmod(path, 0700) == 0);
	lc_run(tmpl, cmd, out, sizeof(out));
	snprintf(want, sizeof(want), "LANECP-BOOT cached %s\nAGENT --agent "
	    "--transfer=%s\n", path, ID);
	LC_CHECK_STR(out, want);

	/* a changed one is not run */
	LC_CHECK((f = fopen(path, "a")) != NULL);
	fputs("echo EVIL\n", f);
	fclose(f);
	lc_run(tmpl, cmd, out, sizeof(out));
	LC_CHECK(strncmp(out, "LANECP-BOOT push changed ", 25) == 0);
	LC_CHECK(strstr(out, "EVIL") == NULL && strstr(out, "AGENT") == NULL);

	/* a cache writable by others is not used: the agent would go to a
	   private temporary directory (stdin is empty: it stops, and that
	   directory is gone) */
	snprintf(tmp, sizeof(tmp), "%s/tmp", tmpl);
	LC_CHECK(mkdir(tmp, 0700) == 0);
	snprintf(path, sizeof(path), "%s/lanecp", tmpl);
	LC_CHECK(chmod(path, 0707) == 0);
	lc_run_in(tmpl, NULL, tmp, NULL, cmd, out, sizeof(out));
	snprintf(want, sizeof(want), " %s\n", path);
	LC_CHECK(strncmp(out, "LANECP-BOOT push private ", 25) == 0);
	LC_CHECK(lc_ends_with(out, want));
	LC_CHECK(strstr(out, "AGENT") == NULL && strstr(out, "EVIL") == NULL);
	LC_CHECK(lc_entries(tmp) == 0);
	LC_CHECK(chmod(path, 0700) == 0);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl);
	LC_CHECK(system(cmd) == 0);
}

/*
 * A sha256sum first on PATH that replaces, by name, the files named in
 * dir/arm (shell words, globbed) with a program printing EVIL, then runs
 * the real one: the moment between the hash and the exec, made exact.
 */
static void
lc_swapper(const char *dir)
{
	char path[256], text[2048];

	snprintf(path, sizeof(path), "%s/bin", dir);
	LC_CHECK(mkdir(path, 0700) == 0);
	snprintf(path, sizeof(path), "%s/bin/sha256sum", dir);
	snprintf(text, sizeof(text), "#!/bin/sh\n"
	    "if [ -f %s/arm ]; then for t in $(cat %s/arm); do "
	    "[ -f \"$t\" ] || continue; printf '#!/bin/sh\\necho EVIL\\n' >%s/evil; chmod 700 %s/evil; "
	    "mv -f %s/evil \"$t\"; done; rm -f %s/arm; fi\n"
	    "exec /usr/bin/sha256sum \"$@\"\n", dir, dir, dir, dir, dir, dir);
	lc_put(path, text, 0700);
}

/* The stdin of a push: the (empty) HELLO, "go" and the agent. */
static void
lc_go(const char *path)
{
	char text[256];

	snprintf(text, sizeof(text), "go\n%s", lc_fake_agent);
	lc_put(path, text, 0600);
}

LC_TEST(push_script_execs_what_it_hashed)
{
	struct lc_push_agent a;
	char dir[128], path[512], bin[256], in[256], want[1024];
	char cmd[LC_PUSH_CMD_MAX], out[4096];

	if (access("/bin/sh", X_OK) != 0 || access("/usr/bin/sha256sum",
	    X_OK) != 0)
		LC_SKIP("no /bin/sh or sha256sum");
	lc_fake(&a);
	lc_tmpdir(dir, sizeof(dir));
	LC_CHECK(lc_push_command(&a, ID, 0, cmd, sizeof(cmd)) == 0);
	lc_swapper(dir);
	snprintf(bin, sizeof(bin), "%s/bin", dir);
	snprintf(in, sizeof(in), "%s/in", dir);
	lc_go(in);

	/* cached: the name is replaced after the file was opened and while
	   it is hashed; what runs is what was hashed */
	lc_cache(&a, dir, path, sizeof(path));
	snprintf(want, sizeof(want), "%s/arm", dir);
	lc_put(want, path, 0600);
	lc_run_in(dir, bin, NULL, NULL, cmd, out, sizeof(out));
	LC_CHECK(access(want, F_OK) != 0);	/* the swap happened */
	snprintf(want, sizeof(want), "LANECP-BOOT cached %s\nAGENT --agent "
	    "--transfer=%s\n", path, ID);
	LC_CHECK_STR(out, want);

	/* pushed: the temporary file is replaced while it is hashed (the
	   replaced cached one is removed first: the only hash is the new
	   file's) */
	LC_CHECK(unlink(path) == 0);
	snprintf(want, sizeof(want), "%s/arm", dir);
	snprintf(path, sizeof(path), "%s/lanecp/%s/.lanecp.*", dir, a.dir);
	lc_put(want, path, 0600);
	lc_run_in(dir, bin, NULL, in, cmd, out, sizeof(out));
	LC_CHECK(access(want, F_OK) != 0);
	snprintf(want, sizeof(want), "\nLANECP-BOOT pushed %s/lanecp/%s/lanecp\n"
	    "AGENT --agent --transfer=%s\n", dir, a.dir, ID);
	LC_CHECK(strncmp(out, "LANECP-BOOT push missing ", 25) == 0);
	LC_CHECK(lc_ends_with(out, want));
	LC_CHECK(strstr(out, "EVIL") == NULL);
	/* the swapped name landed in the cache: the next start finds it
	   changed and never runs it */
	lc_run_in(dir, NULL, NULL, NULL, cmd, out, sizeof(out));
	LC_CHECK(strncmp(out, "LANECP-BOOT push changed ", 25) == 0);
	LC_CHECK(strstr(out, "EVIL") == NULL && strstr(out, "AGENT") == NULL);
	lc_test_rm_tree(dir);
}

LC_TEST(push_script_unsafe_parent)
{
	struct lc_push_agent a;
	char dir[128], path[512], shared[160], base[200], tmp[160], in[160];
	char want[1024], link[256], cmd[LC_PUSH_CMD_MAX], out[4096], *p;
	struct stat st0, st1;

	if (access("/bin/sh", X_OK) != 0 || access("/usr/bin/sha256sum",
	    X_OK) != 0)
		LC_SKIP("no /bin/sh or sha256sum");
	lc_fake(&a);
	lc_tmpdir(dir, sizeof(dir));
	LC_CHECK(lc_push_command(&a, ID, 0, cmd, sizeof(cmd)) == 0);
	snprintf(in, sizeof(in), "%s/in", dir);
	lc_go(in);
	snprintf(tmp, sizeof(tmp), "%s/tmp", dir);
	LC_CHECK(mkdir(tmp, 0700) == 0);
	/* the cache's parent can be written by others (not sticky): they
	   could rename the cache away and put theirs in its place */
	snprintf(shared, sizeof(shared), "%s/shared", dir);
	LC_CHECK(mkdir(shared, 0700) == 0 && chmod(shared, 0777) == 0);
	snprintf(base, sizeof(base), "%s/cache", shared);
	LC_CHECK(mkdir(base, 0700) == 0);
	lc_cache(&a, base, path, sizeof(path));
	LC_CHECK(stat(path, &st0) == 0);

	/* not used; the agent would go to a private temporary directory,
	   gone when the script stops */
	lc_run_in(base, NULL, tmp, NULL, cmd, out, sizeof(out));
	snprintf(want, sizeof(want), " %s\n", shared);
	LC_CHECK(strncmp(out, "LANECP-BOOT push private ", 25) == 0);
	LC_CHECK(lc_ends_with(out, want));
	LC_CHECK(strstr(out, "AGENT") == NULL);
	LC_CHECK(lc_entries(tmp) == 0);

	/* pushed there and run; the directory is removed before the exec;
	   the cache is left alone */
	lc_run_in(base, NULL, tmp, in, cmd, out, sizeof(out));
	snprintf(want, sizeof(want), " %s\nLANECP-BOOT pushed %s/", shared, tmp);
	LC_CHECK((p = strstr(out, want)) != NULL);
	LC_CHECK(strncmp(out, "LANECP-BOOT push private ", 25) == 0);
	snprintf(want, sizeof(want), "/lanecp\nAGENT --agent --transfer=%s\n",
	    ID);
	LC_CHECK(lc_ends_with(p, want));
	LC_CHECK(lc_entries(tmp) == 0);
	LC_CHECK(stat(path, &st1) == 0 && st1.st_ino == st0.st_ino &&
	    st1.st_mtime == st0.st_mtime);

	/* group-writable is writable by others too */
	LC_CHECK(chmod(shared, 0770) == 0);
	lc_run_in(base, NULL, tmp, NULL, cmd, out, sizeof(out));
	LC_CHECK(strncmp(out, "LANECP-BOOT push private ", 25) == 0);
	LC_CHECK(strstr(out, "AGENT") == NULL);

	/* sticky (like /tmp): others cannot rename what is ours in it */
	LC_CHECK(chmod(shared, 01777) == 0);
	lc_run_in(base, NULL, tmp, NULL, cmd, out, sizeof(out));
	snprintf(want, sizeof(want), "LANECP-BOOT cached %s\nAGENT --agent "
	    "--transfer=%s\n", path, ID);
	LC_CHECK_STR(out, want);

	/* a symlink is followed to the real directory, which is what is
	   checked (and named) */
	snprintf(link, sizeof(link), "%s/link", dir);
	LC_CHECK(symlink(base, link) == 0);
	lc_run_in(link, NULL, tmp, NULL, cmd, out, sizeof(out));
	LC_CHECK_STR(out, want);
	LC_CHECK(chmod(shared, 0777) == 0);
	lc_run_in(link, NULL, tmp, NULL, cmd, out, sizeof(out));
	snprintf(want, sizeof(want), " %s\n", shared);
	LC_CHECK(strncmp(out, "LANECP-BOOT push private ", 25) == 0);
	LC_CHECK(lc_ends_with(out, want));

	/* no safe temporary directory either: one line, nothing left */
	lc_run_in(base, NULL, shared, in, cmd, out, sizeof(out));
	snprintf(want, sizeof(want), "LANECP-BOOT unsafe %s\n", shared);
	LC_CHECK_STR(out, want);
	LC_CHECK(lc_entries(shared) == 1);
	lc_test_rm_tree(dir);
}

LC_TEST_MAIN()
