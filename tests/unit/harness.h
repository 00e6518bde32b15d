/*
 * A tiny unit-test harness.  Each test runs in its own child process with
 * a timeout, so a crash or hang fails that test and the rest still run.
 *
 *     LC_TEST(buf_roundtrip) { ... LC_CHECK(x == 1); LC_CHECK_EQ_U(a, b); }
 *     LC_TEST_MAIN()
 *
 * A case that cannot run here calls LC_SKIP("why"): it stops, the runner
 * prints "SKIP name (why)", and when no case failed the executable exits
 * LC_TEST_SKIP_CODE (77), which ctest reports as skipped
 * (SKIP_RETURN_CODE), never as passed.
 *
 * A case that asserts an upper bound on wall time is declared with
 * LC_TIMING_TEST(name) instead: the normal run leaves it out (a loaded or
 * sanitized build must not fail a functional test on speed), and
 * "test_x --timing" runs only those cases; ctest runs that as
 * timing/test_x, label timing, serially.
 *
 * Run with a test name as argument to run just that test in-process
 * (handy under gdb).
 */
#ifndef LC_TEST_HARNESS_H
#define LC_TEST_HARNESS_H

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef LC_TEST_TIMEOUT
#define LC_TEST_TIMEOUT 60
#endif
#define LC_TEST_SKIP_CODE 77

struct lc_test_case {
	const char *name;
	void (*fn)(void);
	int timing;
};
static struct lc_test_case *lc_tests;
static int lc_ntests, lc_tests_cap;

/* Registration grows the table; it never drops a test silently. */
static void
lc_test_register(const char *name, void (*fn)(void), int timing)
{
	if (lc_ntests == lc_tests_cap) {
		int cap = lc_tests_cap ? lc_tests_cap * 2 : 64;
		struct lc_test_case *t =
		    realloc(lc_tests, (size_t)cap * sizeof(*t));
		if (t == NULL) {
			fprintf(stderr, "harness: cannot register test %s\n",
			    name);
			abort();
		}
		lc_tests = t;
		lc_tests_cap = cap;
	}
	lc_tests[lc_ntests++] = (struct lc_test_case){ name, fn, timing };
}

#define LC_TEST(name)                                                        \
	static void lc_test_##name(void);                                    \
	__attribute__((constructor)) static void lc_test_reg_##name(void)    \
	{                                                                    \
		lc_test_register(#name, lc_test_##name, 0);                  \
	}                                                                    \
	static void lc_test_##name(void)

#define LC_TIMING_TEST(name)                                                 \
	static void lc_test_##name(void);                                    \
	__attribute__((constructor)) static void lc_test_reg_##name(void)    \
	{                                                                    \
		lc_test_register(#name, lc_test_##name, 1);                  \
	}                                                                    \
	static void lc_test_##name(void)

/* Stop this case as skipped (not passed), saying why. */
#define LC_SKIP(why)                                                         \
	do {                                                                 \
		printf("skip: %s\n", (why));                                 \
		fflush(NULL);                                                \
		exit(LC_TEST_SKIP_CODE);                                     \
	} while (0)

#define LC_CHECK(cond)                                                       \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: check failed: %s\n",         \
			    __FILE__, __LINE__, #cond);                      \
			exit(1);                                             \
		}                                                            \
	} while (0)

#define LC_CHECK_EQ_U(a, b)                                                  \
	do {                                                                 \
		unsigned long long lc_a_ = (unsigned long long)(a);          \
		unsigned long long lc_b_ = (unsigned long long)(b);          \
		if (lc_a_ != lc_b_) {                                        \
			fprintf(stderr, "%s:%d: %s == %s failed: %llu != %llu\n", \
			    __FILE__, __LINE__, #a, #b, lc_a_, lc_b_);       \
			exit(1);                                             \
		}                                                            \
	} while (0)

#define LC_CHECK_EQ_I(a, b)                                                  \
	do {                                                                 \
		long long lc_a_ = (long long)(a);                            \
		long long lc_b_ = (long long)(b);                            \
		if (lc_a_ != lc_b_) {                                        \
			fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", \
			    __FILE__, __LINE__, #a, #b, lc_a_, lc_b_);       \
			exit(1);                                             \
		}                                                            \
	} while (0)

#define LC_CHECK_STR(a, b)                                                   \
	do {                                                                 \
		const char *lc_a_ = (a), *lc_b_ = (b);                       \
		if (lc_a_ == NULL || lc_b_ == NULL || strcmp(lc_a_, lc_b_)) { \
			fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", \
			    __FILE__, __LINE__, #a, #b,                      \
			    lc_a_ ? lc_a_ : "(null)", lc_b_ ? lc_b_ : "(null)"); \
			exit(1);                                             \
		}                                                            \
	} while (0)

/* 0 passed, 1 failed, LC_TEST_SKIP_CODE skipped. */
static int
lc_test_run_one(const struct lc_test_case *t)
{
	pid_t pid;
	int st;

	fflush(NULL);
	if ((pid = fork()) < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		alarm(LC_TEST_TIMEOUT);
		t->fn();
		exit(0);	/* not _exit: LeakSanitizer checks at exit */
	}
	while (waitpid(pid, &st, 0) < 0)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		printf("ok   %s\n", t->name);
		return 0;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == LC_TEST_SKIP_CODE) {
		printf("SKIP %s\n", t->name);
		return LC_TEST_SKIP_CODE;
	}
	if (WIFSIGNALED(st))
		printf("FAIL %s (signal %d%s)\n", t->name, WTERMSIG(st),
		    WTERMSIG(st) == SIGALRM ? ", timeout" : "");
	else
		printf("FAIL %s (exit %d)\n", t->name, WEXITSTATUS(st));
	return 1;
}

#define LC_TEST_MAIN()                                                       \
	int main(int argc, char **argv)                                      \
	{                                                                    \
		int failed = 0, skipped = 0, ran = 0, r, timing = 0;         \
		if (argc > 1 && strcmp(argv[1], "--timing") == 0) {          \
			timing = 1;                                          \
			argc = 1;                                            \
		}                                                            \
		for (int i = 0; i < lc_ntests; i++) {                        \
			if (argc > 1) {                                      \
				if (strcmp(argv[1], lc_tests[i].name) != 0)  \
					continue;                            \
				lc_tests[i].fn();                            \
				printf("ok   %s\n", lc_tests[i].name);       \
				return 0;                                    \
			}                                                    \
			if (lc_tests[i].timing != timing)                    \
				continue;                                    \
			r = lc_test_run_one(&lc_tests[i]);                   \
			failed += r == 1;                                    \
			skipped += r == LC_TEST_SKIP_CODE;                   \
			ran++;                                               \
		}                                                            \
		if (argc > 1) {                                              \
			fprintf(stderr, "no test named %s\n", argv[1]);      \
			return 2;                                            \
		}                                                            \
		printf("%d of %d tests passed, %d failed, %d skipped\n",    \
		    ran - failed - skipped, ran, failed, skipped);           \
		if (failed != 0 || ran == 0)                                 \
			return 1;                                            \
		if (skipped != 0) {                                          \
			printf("SKIPPED: %d test(s) could not run here "    \
			    "(see SKIP lines)\n", skipped);                  \
			return LC_TEST_SKIP_CODE;                            \
		}                                                            \
		return 0;                                                    \
	}

/*
 * Open descriptors of this process (not counting the one that reads
 * them): compare before and after to find a leak.
 */
static inline int
lc_test_nfds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	LC_CHECK(d != NULL);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;
}

/*
 * Whether the mapping that holds p is left out of core dumps
 * (MADV_DONTDUMP: "dd" among the VmFlags of /proc/self/smaps): 1 if so,
 * 0 if not, -1 if no mapping holds p.
 */
static inline int
lc_test_dontdump(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	unsigned long long lo, hi, a = (unsigned long long)(uintptr_t)p;
	char line[512];
	int in = 0, r = -1;

	LC_CHECK(f != NULL);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%llx-%llx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && strncmp(line, "VmFlags:", 8) == 0) {
			r = strstr(line, " dd") != NULL;
			break;
		}
	}
	fclose(f);
	return r;
}

/* Remove the tree at dir (depth first, never following symlinks). */
static int
lc_test_rm_one(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) != 0 && errno != ENOENT ? -1 : 0;
}

static inline void
lc_test_rm_tree(const char *dir)
{
	(void)nftw(dir, lc_test_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
