/*
 * shard.c: "I/N" and --shard auto from Slurm's and Kubernetes' variables;
 * the assignment is stable, disjoint and covering, and the large files are
 * dealt so that the shards' bytes come out even.
 */
#include "harness.h"

#include "err.h"
#include "shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A stand-in environment: "NAME=value" pairs, NULL-terminated. */
static const char *
env_of(const char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (const char *const *p = env; *p != NULL; p++)
		if (strncmp(*p, name, n) == 0 && (*p)[n] == '=')
			return *p + n + 1;
	return NULL;
}

static int
sh_auto(const char *arg, const char *const *env, struct lc_shard *sh,
    struct lc_err *e)
{
	struct lc_shard_env v = {
		.slurm_id = env_of(env, "SLURM_ARRAY_TASK_ID"),
		.slurm_count = env_of(env, "SLURM_ARRAY_TASK_COUNT"),
		.slurm_min = env_of(env, "SLURM_ARRAY_TASK_MIN"),
		.k8s_index = env_of(env, "JOB_COMPLETION_INDEX"),
		.count = env_of(env, "LANECP_SHARD_COUNT"),
	};

	lc_err_clear(e);
	return lc_shard_auto(arg, &v, sh, e);
}

LC_TEST(parse)
{
	struct lc_shard sh;
	struct lc_err e;
	static const char *const bad[] = { "", "1", "0/4", "5/4", "1/0",
		"1/65537", "a/4", "1/4x", "-1/4", "1//4", "/4", "1/", " 1/4",
		"99999999999999999999/4", NULL };

	lc_err_clear(&e);
	LC_CHECK(lc_shard_parse("1/1", "--shard", &sh, &e) == 0);
	LC_CHECK_EQ_U(sh.i, 0);
	LC_CHECK_EQ_U(sh.n, 1);
	LC_CHECK(lc_shard_parse("4/4", "--shard", &sh, &e) == 0);
	LC_CHECK_EQ_U(sh.i, 3);
	LC_CHECK(lc_shard_parse("65536/65536", "--shard", &sh, &e) == 0);
	LC_CHECK_EQ_U(sh.n, 65536);
	for (const char *const *p = bad; *p != NULL; p++) {
		lc_err_clear(&e);
		LC_CHECK(
		    lc_shard_parse(*p, "--shard", &sh, &e) == -LC_ERR_USAGE);
		LC_CHECK(strstr(e.msg, "--shard") != NULL);
		LC_CHECK_EQ_U(sh.n, 0);
	}
}

LC_TEST(auto_slurm)
{
	struct lc_shard sh;
	struct lc_err e;
	const char *const one[] = { "SLURM_ARRAY_TASK_ID=0",
		"SLURM_ARRAY_TASK_COUNT=4", "SLURM_ARRAY_TASK_MIN=0", NULL };
	const char *const from1[] = { "SLURM_ARRAY_TASK_ID=4",
		"SLURM_ARRAY_TASK_COUNT=4", "SLURM_ARRAY_TASK_MIN=1", NULL };
	const char *const from10[] = { "SLURM_ARRAY_TASK_ID=12",
		"SLURM_ARRAY_TASK_COUNT=3", "SLURM_ARRAY_TASK_MIN=10", NULL };
	const char *const past[] = { "SLURM_ARRAY_TASK_ID=13",
		"SLURM_ARRAY_TASK_COUNT=3", "SLURM_ARRAY_TASK_MIN=10", NULL };
	const char *const below[] = { "SLURM_ARRAY_TASK_ID=9",
		"SLURM_ARRAY_TASK_COUNT=3", "SLURM_ARRAY_TASK_MIN=10", NULL };
	const char *const nocount[] = { "SLURM_ARRAY_TASK_ID=1", NULL };
	const char *const junk[] = { "SLURM_ARRAY_TASK_ID=x",
		"SLURM_ARRAY_TASK_COUNT=3", NULL };

	LC_CHECK(sh_auto("auto", one, &sh, &e) == 0);
	LC_CHECK(sh.i == 0 && sh.n == 4);
	LC_CHECK(sh_auto("auto", from1, &sh, &e) == 0);
	LC_CHECK(sh.i == 3 && sh.n == 4);
	LC_CHECK(sh_auto("auto", from10, &sh, &e) == 0);
	LC_CHECK(sh.i == 2 && sh.n == 3);
	LC_CHECK(sh_auto("auto/3", from10, &sh, &e) == 0);
	LC_CHECK(sh_auto("auto/4", from10, &sh, &e) == -LC_ERR_USAGE);
	LC_CHECK(strstr(e.msg, "SLURM_ARRAY_TASK_COUNT") != NULL);
	LC_CHECK(sh_auto("auto", past, &sh, &e) == -LC_ERR_USAGE);
	LC_CHECK(strstr(e.msg, "SLURM_ARRAY_TASK_ID=13") != NULL);
	LC_CHECK(sh_auto("auto", below, &sh, &e) == -LC_ERR_USAGE);
	LC_CHECK(sh_auto("auto", nocount, &sh, &e) == -LC_ERR_USAGE);
	LC_CHECK(strstr(e.msg, "SLURM_ARRAY_TASK_COUNT is not set") != NULL);
	LC_CHECK(sh_auto("auto", junk, &sh, &e) == -LC_ERR_USAGE);
	LC_CHECK(strstr(e.msg, "SLURM_ARRAY_TASK_ID=x") != NULL);
	LC_CHECK_EQ_U(sh.n, 0);
}

LC_TEST(auto_k8s)
{
	struct lc_shard sh;
	struct lc_err e;
	const char *const idx2[] = { "JOB_COMPLETION_INDEX=2", NULL };
	const char *const idx2n[] = { "JOB_COMPLETION_INDEX=2",
		"LANECP_SHARD_COUNT=3", NULL };
	const char *const idx3n[] = { "JOB_COMPLETION_INDEX=3",
		"LANECP_SHARD_COUNT=3", NULL };
	const char *const none[] = { "HOME=/", NULL };

	LC_CHECK(sh_auto("auto/4", idx2, &sh, &e) == 0);
	LC_CHECK(sh.i == 2 && sh.n == 4);
	LC_CHECK(sh_auto("auto", idx2, &sh, &e) == -LC_ERR_USAGE);
	LC_CHECK(strstr(e.msg, "auto/N") != NULL);
	LC_CHECK(sh_auto("auto", idx2n, &sh, &e) == 0);
	LC_CHECK(sh.i == 2 && sh.n == 3);
	LC_CHECK(sh_auto("auto", idx3n, &sh, &e) == -LC_ERR_USAGE);
	LC_CHECK(strstr(e.msg, "JOB_COMPLETION_INDEX=3") != NULL);
	LC_CHECK(sh_auto("auto/2", idx2, &sh, &e) == -LC_ERR_USAGE);
	LC_CHECK(sh_auto("auto/0", idx2, &sh, &e) == -LC_ERR_USAGE);
	LC_CHECK(sh_auto("auto", none, &sh, &e) == -LC_ERR_USAGE);
	LC_CHECK(strstr(e.msg, "SLURM_ARRAY_TASK_ID") != NULL);
}

/* Small files: each in exactly one shard, the same every time, even. */
LC_TEST(names_disjoint_covering)
{
	static const uint32_t ns[] = { 1, 2, 3, 4, 7, 16 };
	uint32_t count[16];
	char name[64];

	for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
		uint32_t n = ns[k];
		struct lc_shard sh = { 0, n };
		memset(count, 0, sizeof(count));
		for (int f = 0; f < 8000; f++) {
			uint32_t mine = 0, owner = 0;
			snprintf(name, sizeof(name), "d%d/f%05d", f % 13, f);
			for (sh.i = 0; sh.i < n; sh.i++)
				if (lc_shard_mine(&sh, NULL, name, 1, 10)) {
					mine++;
					owner = sh.i;
				}
			LC_CHECK_EQ_U(mine, 1);
			LC_CHECK_EQ_U(owner, lc_shard_of_name(name, n));
			LC_CHECK_EQ_U(lc_shard_of_name(name, n),
			    lc_shard_of_name(name, n));
			count[owner]++;
		}
		/* within 15% of the even share */
		for (uint32_t i = 0; i < n; i++)
			LC_CHECK(count[i] * 100 >= 8000 / n * 85 &&
			    count[i] * 100 <= 8000 / n * 115);
	}
	/* a directory or link is every shard's */
	struct lc_shard sh = { 2, 4 };
	LC_CHECK(lc_shard_mine(&sh, NULL, "d", 0, 0) == 1);
	/* the hash is fixed: the same in every build and on every host */
	LC_CHECK_EQ_U(lc_shard_of_name("", 1000003),
	    lc_shard_of_name("", 1000003));
	LC_CHECK_EQ_U(lc_shard_of_name("a/b", 1), 0);
}

/* The known value: SHA-256("abc") starts ba7816bf8f01cfea. */
LC_TEST(name_hash_fixed)
{
	uint64_t h = 0xba7816bf8f01cfeaull;

	LC_CHECK_EQ_U(lc_shard_of_name("abc", 7), (uint32_t)(h % 7));
	LC_CHECK_EQ_U(lc_shard_of_name("abc", 65536), (uint32_t)(h % 65536));
}

static void
plan_make(struct lc_shard_plan *p, const uint64_t *sizes, size_t n, int reverse,
    uint32_t shards)
{
	struct lc_err e;
	char name[32];

	memset(p, 0, sizeof(*p));
	lc_err_clear(&e);
	for (size_t k = 0; k < n; k++) {
		size_t j = reverse ? n - 1 - k : k;
		snprintf(name, sizeof(name), "big/%03zu", j);
		(void)lc_shard_plan_add(p, name, sizes[j], &e);
	}
	(void)lc_shard_plan_finish(p, shards);
}

/* Large files: dealt the same whatever the listing order, each to one
   shard, and the shards' bytes within one file of each other. */
LC_TEST(large_balanced)
{
	uint64_t sizes[40], load[4] = { 0 }, max = 0, min = UINT64_MAX,
			    biggest = 0;
	struct lc_shard_plan a, b;
	char name[32];

	for (size_t k = 0; k < 40; k++) {
		sizes[k] = LC_SHARD_LARGE +
		    (uint64_t)((k * 7919) % 97) * (1u << 20) *
			(k % 5 == 0 ? 40 : 1);
		if (sizes[k] > biggest)
			biggest = sizes[k];
	}
	plan_make(&a, sizes, 40, 0, 4);
	plan_make(&b, sizes, 40, 1, 4);
	LC_CHECK_EQ_U(a.n, 40);
	for (size_t k = 0; k < 40; k++) {
		struct lc_shard sh = { 0, 4 };
		uint32_t mine = 0;
		snprintf(name, sizeof(name), "big/%03zu", k);
		LC_CHECK(lc_shard_plan_find(&a, name) ==
		    lc_shard_plan_find(&b, name));
		LC_CHECK(lc_shard_plan_find(&a, name) >= 0);
		for (sh.i = 0; sh.i < 4; sh.i++)
			if (lc_shard_mine(&sh, &a, name, 1, sizes[k])) {
				mine++;
				load[sh.i] += sizes[k];
			}
		LC_CHECK_EQ_U(mine, 1);
	}
	for (int i = 0; i < 4; i++) {
		max = load[i] > max ? load[i] : max;
		min = load[i] < min ? load[i] : min;
	}
	/* greedy, largest first: no shard ends more than one file ahead */
	LC_CHECK(max - min <= biggest);
	LC_CHECK(min > 0);
	/* a large file the plan does not have (it grew): by its name */
	struct lc_shard sh = { lc_shard_of_name("new", 4), 4 };
	LC_CHECK(lc_shard_plan_find(&a, "new") == -1);
	LC_CHECK(lc_shard_mine(&sh, &a, "new", 1, LC_SHARD_LARGE) == 1);
	lc_shard_plan_free(&a);
	lc_shard_plan_free(&b);
}

/* Equal sizes: by name, so the deal does not depend on the walk's order;
   four equal files and four shards: one each. */
LC_TEST(large_equal_sizes)
{
	uint64_t sizes[4] = { LC_SHARD_LARGE, LC_SHARD_LARGE, LC_SHARD_LARGE,
		LC_SHARD_LARGE };
	struct lc_shard_plan a;
	int seen[4] = { 0 };

	plan_make(&a, sizes, 4, 1, 4);
	LC_CHECK(lc_shard_plan_find(&a, "big/000") == 0);
	for (int k = 0; k < 4; k++) {
		char name[32];
		snprintf(name, sizeof(name), "big/%03d", k);
		int64_t s = lc_shard_plan_find(&a, name);
		LC_CHECK(s >= 0 && s < 4);
		if (s >= 0 && s < 4)
			seen[s]++;
	}
	for (int k = 0; k < 4; k++)
		LC_CHECK_EQ_U(seen[k], 1);
	lc_shard_plan_free(&a);
}

LC_TEST_MAIN()
