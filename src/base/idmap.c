/*
 * The map of ids in flight (idmap.h): open addressing, linear probing,
 * removal by backward shift (Knuth, TAOCP vol. 3, 6.4, algorithm R).
 */
#include "idmap.h"

#include "err.h"

#include <stdlib.h>
#include <string.h>

/* Fibonacci hashing: consecutive ids land far apart. */
static uint32_t
lc_idmap_home(const struct lc_idmap *m, uint32_t id)
{
	return (uint32_t)((id * 2654435769u) >> m->shift) & m->mask;
}

int
lc_idmap_init(struct lc_idmap *m, uint32_t max)
{
	uint32_t slots = 8, bits = 3;

	memset(m, 0, sizeof(*m));
	if (max == 0 || max > (1u << 29))
		return -LC_ERR_INTERNAL;
	while (slots < 2 * max) {
		slots <<= 1;
		bits++;
	}
	m->keys = calloc(slots, sizeof(*m->keys));
	m->vals = calloc(slots, sizeof(*m->vals));
	if (m->keys == NULL || m->vals == NULL) {
		lc_idmap_free(m);
		return -LC_ERR_NOMEM;
	}
	m->mask = slots - 1;
	m->shift = 32 - bits;
	m->max = max;
	return 0;
}

void
lc_idmap_free(struct lc_idmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* The slot holding id, or the empty one where it would go. */
static uint32_t
lc_idmap_find(const struct lc_idmap *m, uint32_t id)
{
	uint32_t i = lc_idmap_home(m, id);

	/* at most half full: an empty slot always ends the probe */
	while (m->keys[i] != 0 && m->keys[i] != id)
		i = (i + 1) & m->mask;
	return i;
}

void *
lc_idmap_get(const struct lc_idmap *m, uint32_t id)
{
	uint32_t i;

	if (id == 0 || m->keys == NULL)
		return NULL;
	i = lc_idmap_find(m, id);
	return m->keys[i] == id ? m->vals[i] : NULL;
}

int
lc_idmap_put(struct lc_idmap *m, uint32_t id, void *v)
{
	uint32_t i;

	if (id == 0 || v == NULL || m->keys == NULL)
		return -LC_ERR_INTERNAL;
	i = lc_idmap_find(m, id);
	if (m->keys[i] == id)
		return -LC_ERR_EXISTS;
	if (m->n >= m->max)
		return -LC_ERR_TOOBIG;
	m->keys[i] = id;
	m->vals[i] = v;
	m->n++;
	return 0;
}

void *
lc_idmap_del(struct lc_idmap *m, uint32_t id)
{
	uint32_t i, j, home;
	void *v;

	if (id == 0 || m->keys == NULL)
		return NULL;
	i = lc_idmap_find(m, id);
	if (m->keys[i] != id)
		return NULL;
	v = m->vals[i];
	m->n--;
	/*
	 * Close the gap at i: an entry further along the run moves back
	 * into it unless its home lies cyclically in (i, j], where a probe
	 * from its home reaches it without passing i.
	 */
	for (j = i;;) {
		j = (j + 1) & m->mask;
		if (m->keys[j] == 0)
			break;
		home = lc_idmap_home(m, m->keys[j]);
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		m->keys[i] = m->keys[j];
		m->vals[i] = m->vals[j];
		i = j;
	}
	m->keys[i] = 0;
	m->vals[i] = NULL;
	return v;
}
