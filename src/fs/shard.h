/*
 * --shard I/N: which part of a tree one of N lanecp runs moves, so that N
 * runs (on N hosts, or N jobs of a Slurm array or a Kubernetes Indexed
 * Job) make exactly one copy between them.
 *
 * A regular file below LC_SHARD_LARGE bytes goes to the shard that the
 * first 8 bytes of the SHA-256 of its name (the FILE name: relative to
 * the copied root, as filter.h says), as a big-endian number modulo N,
 * name (0-based).  The large ones are dealt by size so that the shards
 * finish together: sorted by size, largest first (equal sizes by name,
 * byte order), each goes to the shard with the fewest large bytes so far
 * (equal loads: the lowest shard).  Every shard lists the whole tree
 * (stat only) to learn the large files before it announces its first
 * entry, and computes the same deal from the same tree.  Directories,
 * links and the like belong to every shard (each makes them, idempotent).
 *
 * A plan is built by one thread; once lc_shard_plan_finish has run it is
 * read-only.
 */
#ifndef LANECP_SHARD_H
#define LANECP_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define LC_SHARD_MAX 65536u /* N at most */
#define LC_SHARD_LARGE \
	(16ull << 20)		     /* a file this size or more is dealt
					   by size, not by its name */
#define LC_SHARD_PLAN_MAX (1u << 22) /* large files per request */

struct lc_shard {
	uint32_t i; /* 0-based */
	uint32_t n; /* 0: no sharding */
};

/*
 * Parse "I/N" (1 <= I <= N <= LC_SHARD_MAX) into *sh (i made 0-based).
 * what names the text in the error ("--shard", "SRC_FILTER").
 * -LC_ERR_USAGE with e naming the value.
 */
int lc_shard_parse(const char *s, const char *what, struct lc_shard *sh,
    struct lc_err *e);

/* The environment --shard auto reads (NULL: not set). */
struct lc_shard_env {
	const char *slurm_id;	 /* SLURM_ARRAY_TASK_ID */
	const char *slurm_count; /* SLURM_ARRAY_TASK_COUNT */
	const char *slurm_min;	 /* SLURM_ARRAY_TASK_MIN */
	const char *k8s_index;	 /* JOB_COMPLETION_INDEX */
	const char *count;	 /* LANECP_SHARD_COUNT */
};

/*
 * --shard auto or auto/N from the environment: SLURM_ARRAY_TASK_ID with
 * SLURM_ARRAY_TASK_COUNT (I = id - SLURM_ARRAY_TASK_MIN, or id when MIN is
 * unset; ids must be MIN..MIN+COUNT-1; auto/N must say the same count),
 * else JOB_COMPLETION_INDEX (Kubernetes, 0-based) with N from "auto/N" or
 * LANECP_SHARD_COUNT.  -LC_ERR_USAGE with e naming the variable that is
 * missing, malformed or inconsistent.
 */
int lc_shard_auto(const char *arg, const struct lc_shard_env *env,
    struct lc_shard *sh, struct lc_err *e);

/* The shard (0-based) of a name below LC_SHARD_LARGE bytes. */
uint32_t lc_shard_of_name(const char *name, uint32_t n);

struct lc_shard_big;

struct lc_shard_plan {
	struct lc_shard_big *v; /* by name once finished */
	size_t n, cap;
	int done;
};

/*
 * Add a large file (size >= LC_SHARD_LARGE) of a listing; the plan copies
 * name.  -LC_ERR_NOMEM; -LC_ERR_IO past LC_SHARD_PLAN_MAX files.
 */
int lc_shard_plan_add(struct lc_shard_plan *p, const char *name, uint64_t size,
    struct lc_err *e);

/* Deal the large files among n shards (see the top).  -LC_ERR_NOMEM. */
int lc_shard_plan_finish(struct lc_shard_plan *p, uint32_t n);

/* The shard p gave name, or -1 if p has no such name. */
int64_t lc_shard_plan_find(const struct lc_shard_plan *p, const char *name);

/*
 * 1 if an entry is sh's: any kind but a regular file; a regular file below
 * LC_SHARD_LARGE by its name; a large one by p (NULL: none), or by its name
 * if p does not have it (it grew since p was made).  1 without sharding.
 */
int lc_shard_mine(const struct lc_shard *sh, const struct lc_shard_plan *p,
    const char *name, int is_reg, uint64_t size);

void lc_shard_plan_free(struct lc_shard_plan *p);

#endif
