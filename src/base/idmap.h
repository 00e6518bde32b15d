/*
 * A map of ids to pointers, for the files in flight at the controller and
 * the sink: at most `max` entries (fixed at init), in a table of twice
 * that or more (a power of two), so that memory is bounded by the window
 * whatever ids are in it.  The ids may span any range: one old id held
 * while many newer ones come and go costs one entry.  Open addressing
 * with linear probing on a multiplicative hash; a removal shifts the
 * entries behind it back, so no tombstones build up however many ids
 * pass through.  Not thread-safe: the owner locks.
 */
#ifndef LANECP_IDMAP_H
#define LANECP_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct lc_idmap {
	uint32_t *keys; /* 0: an empty slot */
	void **vals;
	uint32_t mask;	/* slots - 1 */
	uint32_t shift; /* 32 - log2(slots) */
	uint32_t n;	/* entries */
	uint32_t max;	/* at most this many */
};

/* Room for max entries (1 .. 2^29).  0, -LC_ERR_NOMEM or -LC_ERR_INTERNAL
 * (max out of range).  On failure *m is empty (lc_idmap_free is fine). */
int lc_idmap_init(struct lc_idmap *m, uint32_t max);

/* Free the table (not the values); *m is empty after it. */
void lc_idmap_free(struct lc_idmap *m);

/* The value of id, or NULL (not in the map, or id 0). */
void *lc_idmap_get(const struct lc_idmap *m, uint32_t id);

/*
 * Add id -> v (id != 0, v != NULL).  0; -LC_ERR_TOOBIG when the map
 * holds max entries already; -LC_ERR_EXISTS when id is in it;
 * -LC_ERR_INTERNAL for id 0 or v NULL.  Nothing changes on failure.
 */
int lc_idmap_put(struct lc_idmap *m, uint32_t id, void *v);

/* Take id out: its value, or NULL if it was not in the map. */
void *lc_idmap_del(struct lc_idmap *m, uint32_t id);

/* Entries in the map. */
static inline uint32_t
lc_idmap_count(const struct lc_idmap *m)
{
	return m->n;
}

/* Slots, for a walk over every entry: lc_idmap_slot(m, i) for i below
 * it is a value or NULL (an empty slot).  Nothing may be put or taken
 * out during the walk. */
static inline uint32_t
lc_idmap_slots(const struct lc_idmap *m)
{
	return m->keys != NULL ? m->mask + 1 : 0;
}

static inline void *
lc_idmap_slot(const struct lc_idmap *m, uint32_t i)
{
	return m->keys[i] != 0 ? m->vals[i] : NULL;
}

#endif
