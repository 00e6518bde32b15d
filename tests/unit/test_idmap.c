/*
 * The map of ids in flight (base/idmap.c): ids spanning far more than
 * the map holds, taken out in any order, a full map and an id twice
 * refused, and a long random run checked against a plain array.
 */
#include "harness.h"

#include "err.h"
#include "idmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A value for id: any non-NULL pointer that says which id it was. */
static void *
t_val(uint32_t id)
{
	return (void *)((uintptr_t)id * 8u + 8u);
}

/* Every entry the slots hold is the value of its id, and n of them. */
static void
t_walk_count(const struct lc_idmap *m, uint32_t want)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < lc_idmap_slots(m); i++)
		if (lc_idmap_slot(m, i) != NULL)
			n++;
	LC_CHECK_EQ_U(n, want);
	LC_CHECK_EQ_U(lc_idmap_count(m), want);
}

LC_TEST(idmap_put_get_del)
{
	struct lc_idmap m;

	LC_CHECK(lc_idmap_init(&m, 4) == 0);
	LC_CHECK(lc_idmap_get(&m, 1) == NULL);
	LC_CHECK(lc_idmap_put(&m, 1, t_val(1)) == 0);
	LC_CHECK(lc_idmap_put(&m, 2, t_val(2)) == 0);
	LC_CHECK(lc_idmap_get(&m, 1) == t_val(1));
	LC_CHECK(lc_idmap_get(&m, 2) == t_val(2));
	LC_CHECK(lc_idmap_get(&m, 3) == NULL);
	LC_CHECK(lc_idmap_get(&m, 0) == NULL);
	/* an id twice, id 0 and a NULL value are refused, nothing changes */
	LC_CHECK(lc_idmap_put(&m, 2, t_val(9)) == -LC_ERR_EXISTS);
	LC_CHECK(lc_idmap_get(&m, 2) == t_val(2));
	LC_CHECK(lc_idmap_put(&m, 0, t_val(0)) == -LC_ERR_INTERNAL);
	LC_CHECK(lc_idmap_put(&m, 5, NULL) == -LC_ERR_INTERNAL);
	t_walk_count(&m, 2);
	LC_CHECK(lc_idmap_del(&m, 1) == t_val(1));
	LC_CHECK(lc_idmap_del(&m, 1) == NULL); /* not in it any more */
	LC_CHECK(lc_idmap_del(&m, 7) == NULL); /* never in it */
	LC_CHECK(lc_idmap_get(&m, 1) == NULL);
	LC_CHECK(lc_idmap_get(&m, 2) == t_val(2));
	t_walk_count(&m, 1);
	lc_idmap_free(&m);
	LC_CHECK(lc_idmap_get(&m, 2) == NULL); /* freed: empty */
	LC_CHECK_EQ_U(lc_idmap_slots(&m), 0);
	LC_CHECK(lc_idmap_init(&m, 0) == -LC_ERR_INTERNAL);
	LC_CHECK(lc_idmap_init(&m, (1u << 29) + 1) == -LC_ERR_INTERNAL);
}

/* At most max entries: one more is refused until one is taken out. */
LC_TEST(idmap_full)
{
	struct lc_idmap m;

	LC_CHECK(lc_idmap_init(&m, 100) == 0);
	for (uint32_t id = 1; id <= 100; id++)
		LC_CHECK(lc_idmap_put(&m, id, t_val(id)) == 0);
	LC_CHECK(lc_idmap_put(&m, 101, t_val(101)) == -LC_ERR_TOOBIG);
	LC_CHECK(lc_idmap_get(&m, 101) == NULL);
	LC_CHECK(lc_idmap_del(&m, 50) == t_val(50));
	LC_CHECK(lc_idmap_put(&m, 101, t_val(101)) == 0);
	t_walk_count(&m, 100);
	for (uint32_t id = 1; id <= 101; id++)
		LC_CHECK(lc_idmap_get(&m, id) == (id == 50 ? NULL : t_val(id)));
	lc_idmap_free(&m);
}

/*
 * The files in flight of a copy where a few files stay while the rest
 * pass: ids 1, 2 and 3 are held, the others put and taken out (in an
 * order that is not the ids') until the ids span 1000 times the map.
 */
LC_TEST(idmap_span_beyond_max)
{
	const uint32_t max = 64, span = 64000;
	struct lc_idmap m;

	LC_CHECK(lc_idmap_init(&m, max) == 0);
	for (uint32_t id = 1; id <= 3; id++)
		LC_CHECK(lc_idmap_put(&m, id, t_val(id)) == 0);
	for (uint32_t id = 4; id <= span; id++) {
		LC_CHECK(lc_idmap_put(&m, id, t_val(id)) == 0);
		/* keep 60 more in flight; take one out of the middle */
		if (lc_idmap_count(&m) == max - 1) {
			uint32_t out = id - 30 - (id % 7);
			while (lc_idmap_get(&m, out) == NULL || out <= 3)
				out = out <= 4 ? id : out - 1;
			LC_CHECK(lc_idmap_del(&m, out) == t_val(out));
		}
	}
	LC_CHECK(lc_idmap_get(&m, 1) == t_val(1));
	LC_CHECK(lc_idmap_get(&m, 2) == t_val(2));
	LC_CHECK(lc_idmap_get(&m, 3) == t_val(3));
	LC_CHECK(lc_idmap_get(&m, span) == t_val(span));
	t_walk_count(&m, max - 2);
	lc_idmap_free(&m);
}

/* Random puts and takes against a plain array of what should be in. */
LC_TEST(idmap_random_model)
{
	enum { T_IDS = 20000 };
	const uint32_t max = 500;
	static uint8_t in[T_IDS + 1];
	struct lc_idmap m;
	uint32_t next = 1, n = 0, x = 12345;

	memset(in, 0, sizeof(in));
	LC_CHECK(lc_idmap_init(&m, max) == 0);
	for (int step = 0; step < 200000; step++) {
		uint32_t id;

		x = x * 1103515245u + 12345u;
		if ((x >> 16) % 3 != 0 && next <= T_IDS) {
			int r = lc_idmap_put(&m, next, t_val(next));
			LC_CHECK(r == (n < max ? 0 : -LC_ERR_TOOBIG));
			if (r == 0) {
				in[next++] = 1;
				n++;
			}
			continue;
		}
		/* take out a random id below next, in or not */
		id = next > 1 ? 1 + (x >> 8) % (next - 1) : 1;
		LC_CHECK(lc_idmap_del(&m, id) == (in[id] ? t_val(id) : NULL));
		if (in[id]) {
			in[id] = 0;
			n--;
		}
		if (step % 997 == 0)
			for (uint32_t k = 1; k < next; k++)
				LC_CHECK(lc_idmap_get(&m, k) ==
				    (in[k] ? t_val(k) : NULL));
	}
	t_walk_count(&m, n);
	fprintf(stderr, "ids put %u, in the map %u\n", next - 1, n);
	lc_idmap_free(&m);
}

LC_TEST_MAIN()
