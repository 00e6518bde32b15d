/*
 * --shard I/N (shard.h): the name hash, the deal of the large files, and
 * where I and N come from.
 */
#include "shard.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

struct lc_shard_big {
	char *name;
	uint64_t size;
	uint32_t shard;
};

int
lc_shard_parse(const char *s, const char *what, struct lc_shard *sh,
    struct lc_err *e)
{
	char buf[32];
	const char *slash = strchr(s, '/');
	uint64_t i, n;

	sh->i = sh->n = 0;
	if (slash == NULL || (size_t)(slash - s) >= sizeof(buf))
		goto bad;
	memcpy(buf, s, (size_t)(slash - s));
	buf[slash - s] = '\0';
	if (lc_parse_uint(slash + 1, 1, LC_SHARD_MAX, &n) != 0 ||
	    lc_parse_uint(buf, 1, n, &i) != 0)
		goto bad;
	sh->i = (uint32_t)(i - 1);
	sh->n = (uint32_t)n;
	return 0;
bad:
	return lc_err_set(e, LC_ERR_USAGE,
	    "%s %.64s: I/N with 1 <= I <= N "
	    "<= %u, or auto, or auto/N",
	    what, s, LC_SHARD_MAX);
}

/* An environment variable as a number in [min, max]; name says which. */
static int
lc_shard_env(const char *v, const char *name, uint64_t min, uint64_t max,
    uint64_t *out, struct lc_err *e)
{
	if (v == NULL)
		return lc_err_set(e, LC_ERR_USAGE,
		    "--shard auto: %s is not "
		    "set",
		    name);
	if (lc_parse_uint(v, min, max, out) != 0)
		return lc_err_set(e, LC_ERR_USAGE,
		    "--shard auto: %s=%.32s is "
		    "not a number from %llu to %llu",
		    name, v, (unsigned long long)min, (unsigned long long)max);
	return 0;
}

static int
lc_shard_slurm(const struct lc_shard_env *env, uint64_t want_n,
    struct lc_shard *sh, struct lc_err *e)
{
	uint64_t id, count, min = 0;
	int r;

	if ((r = lc_shard_env(env->slurm_id, "SLURM_ARRAY_TASK_ID", 0,
		 UINT32_MAX, &id, e)) != 0 ||
	    (r = lc_shard_env(env->slurm_count, "SLURM_ARRAY_TASK_COUNT", 1,
		 LC_SHARD_MAX, &count, e)) != 0)
		return r;
	if (env->slurm_min != NULL &&
	    (r = lc_shard_env(env->slurm_min, "SLURM_ARRAY_TASK_MIN", 0,
		 UINT32_MAX, &min, e)) != 0)
		return r;
	if (id < min || id - min >= count)
		return lc_err_set(e, LC_ERR_USAGE,
		    "--shard auto: "
		    "SLURM_ARRAY_TASK_ID=%llu is not in SLURM_ARRAY_TASK_MIN"
		    "=%llu .. MIN + SLURM_ARRAY_TASK_COUNT-1=%llu (use an "
		    "array of consecutive ids, --array=0-%llu)",
		    (unsigned long long)id, (unsigned long long)min,
		    (unsigned long long)(min + count - 1),
		    (unsigned long long)(count - 1));
	if (want_n != 0 && want_n != count)
		return lc_err_set(e, LC_ERR_USAGE,
		    "--shard auto/%llu: "
		    "SLURM_ARRAY_TASK_COUNT is %llu",
		    (unsigned long long)want_n, (unsigned long long)count);
	sh->i = (uint32_t)(id - min);
	sh->n = (uint32_t)count;
	return 0;
}

int
lc_shard_auto(const char *arg, const struct lc_shard_env *env,
    struct lc_shard *sh, struct lc_err *e)
{
	uint64_t n = 0, idx;
	int r;

	sh->i = sh->n = 0;
	if (strncmp(arg, "auto/", 5) == 0 &&
	    lc_parse_uint(arg + 5, 1, LC_SHARD_MAX, &n) != 0)
		return lc_err_set(e, LC_ERR_USAGE,
		    "--shard %.64s: N in "
		    "auto/N is a number from 1 to %u",
		    arg, LC_SHARD_MAX);
	if (env->slurm_id != NULL)
		return lc_shard_slurm(env, n, sh, e);
	if (env->k8s_index == NULL)
		return lc_err_set(e, LC_ERR_USAGE,
		    "--shard %.64s: neither "
		    "SLURM_ARRAY_TASK_ID (a Slurm job array) nor "
		    "JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) is set",
		    arg);
	if (n == 0) {
		if (env->count == NULL)
			return lc_err_set(e, LC_ERR_USAGE,
			    "--shard auto: "
			    "JOB_COMPLETION_INDEX is set but not the count: "
			    "give --shard auto/N or LANECP_SHARD_COUNT "
			    "(the Job's completions)");
		if ((r = lc_shard_env(env->count, "LANECP_SHARD_COUNT", 1,
			 LC_SHARD_MAX, &n, e)) != 0)
			return r;
	}
	if ((r = lc_shard_env(env->k8s_index, "JOB_COMPLETION_INDEX", 0, n - 1,
		 &idx, e)) != 0)
		return r;
	sh->i = (uint32_t)idx;
	sh->n = (uint32_t)n;
	return 0;
}

uint32_t
lc_shard_of_name(const char *name, uint32_t n)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	uint64_t h = 0;

	if (n <= 1 ||
	    EVP_Digest(name, strlen(name), md, &len, EVP_sha256(), NULL) != 1 ||
	    len < 8)
		return 0;
	for (int k = 0; k < 8; k++)
		h = h << 8 | md[k];
	return (uint32_t)(h % n);
}

int
lc_shard_plan_add(struct lc_shard_plan *p, const char *name, uint64_t size,
    struct lc_err *e)
{
	struct lc_shard_big *nv;
	size_t ncap;

	if (p->n >= LC_SHARD_PLAN_MAX)
		return lc_err_set(e, LC_ERR_IO,
		    "--shard: more than %u files "
		    "of %llu bytes or more in one source",
		    LC_SHARD_PLAN_MAX, (unsigned long long)LC_SHARD_LARGE);
	if (p->n == p->cap) {
		ncap = p->cap != 0 ? 2 * p->cap : 64;
		if ((nv = realloc(p->v, ncap * sizeof(*nv))) == NULL)
			return -LC_ERR_NOMEM;
		p->v = nv;
		p->cap = ncap;
	}
	if ((p->v[p->n].name = strdup(name)) == NULL)
		return -LC_ERR_NOMEM;
	p->v[p->n].size = size;
	p->v[p->n].shard = 0;
	p->n++;
	return 0;
}

static int
lc_big_by_size(const void *a, const void *b)
{
	const struct lc_shard_big *x = a, *y = b;

	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int
lc_big_by_name(const void *a, const void *b)
{
	const struct lc_shard_big *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/* A min-heap of the shards by (load, index). */
struct lc_load {
	uint64_t bytes;
	uint32_t shard;
};

static int
lc_load_less(const struct lc_load *a, const struct lc_load *b)
{
	return a->bytes != b->bytes ? a->bytes < b->bytes : a->shard < b->shard;
}

static void
lc_load_down(struct lc_load *h, uint32_t n, uint32_t k)
{
	for (;;) {
		uint32_t l = 2 * k + 1, m = k;
		if (l < n && lc_load_less(&h[l], &h[m]))
			m = l;
		if (l + 1 < n && lc_load_less(&h[l + 1], &h[m]))
			m = l + 1;
		if (m == k)
			return;
		struct lc_load t = h[k];
		h[k] = h[m];
		h[m] = t;
		k = m;
	}
}

int
lc_shard_plan_finish(struct lc_shard_plan *p, uint32_t n)
{
	struct lc_load *h;

	if (n == 0)
		n = 1;
	if ((h = calloc(n, sizeof(*h))) == NULL)
		return -LC_ERR_NOMEM;
	/* loads all 0: ordered by index, already a heap */
	for (uint32_t k = 0; k < n; k++)
		h[k].shard = k;
	if (p->n > 0)
		qsort(p->v, p->n, sizeof(*p->v), lc_big_by_size);
	for (size_t k = 0; k < p->n; k++) {
		p->v[k].shard = h[0].shard;
		h[0].bytes += p->v[k].size;
		lc_load_down(h, n, 0);
	}
	free(h);
	if (p->n > 0)
		qsort(p->v, p->n, sizeof(*p->v), lc_big_by_name);
	p->done = 1;
	return 0;
}

int64_t
lc_shard_plan_find(const struct lc_shard_plan *p, const char *name)
{
	struct lc_shard_big key, *f;

	if (p == NULL || !p->done || p->n == 0)
		return -1;
	key.name = (char *)(uintptr_t)name;
	f = bsearch(&key, p->v, p->n, sizeof(*p->v), lc_big_by_name);
	return f != NULL ? (int64_t)f->shard : -1;
}

int
lc_shard_mine(const struct lc_shard *sh, const struct lc_shard_plan *p,
    const char *name, int is_reg, uint64_t size)
{
	int64_t k;

	if (sh->n <= 1 || !is_reg)
		return 1;
	if (size >= LC_SHARD_LARGE && (k = lc_shard_plan_find(p, name)) >= 0)
		return (uint32_t)k == sh->i;
	return lc_shard_of_name(name, sh->n) == sh->i;
}

void
lc_shard_plan_free(struct lc_shard_plan *p)
{
	for (size_t k = 0; k < p->n; k++)
		free(p->v[k].name);
	free(p->v);
	memset(p, 0, sizeof(*p));
}
