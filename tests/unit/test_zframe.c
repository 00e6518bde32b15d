/*
 * zlib per block (zframe.h): round trips at every level, blocks that do
 * not shrink go raw, and the inflate side against hostile streams: more
 * or fewer bytes than raw_len, truncated, trailing bytes, garbage, a
 * stream that would inflate far past the block (a zip bomb).
 */
#include "harness.h"

#include "zframe.h"

#include <stdint.h>
#include <zlib.h>

#define T_BLOCK (1u << 20)

/* Log-like text: compressible, not trivially. */
static void
t_text(uint8_t *p, size_t n, uint32_t seed)
{
	static const char *const w[] = { "GET", "POST", "/api/v1/items",
	    "200", "404", "user=alice", "user=bob", "latency_ms=", "INFO",
	    "WARN", "session", "cache miss", "\n" };
	uint32_t x = seed * 2654435761u + 1;
	size_t o = 0;

	while (o < n) {
		const char *s;
		char num[16];
		x = x * 1103515245u + 12345u;
		s = w[(x >> 16) % (sizeof(w) / sizeof(w[0]))];
		if ((x >> 8) % 5 == 0) {
			snprintf(num, sizeof(num), "%u ", (x >> 3) % 100000);
			s = num;
		}
		for (; *s != '\0' && o < n; s++)
			p[o++] = (uint8_t)*s;
		if (o < n)
			p[o++] = ' ';
	}
}

static void
t_random(uint8_t *p, size_t n, uint32_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)(x >> 32);
	}
}

/* Deflate in, check the bounds, inflate back, compare. */
static int
t_roundtrip(struct lc_zdef *zd, struct lc_zinf *zi, const uint8_t *in,
    uint32_t len, uint8_t *back)
{
	const uint8_t *z;
	uint32_t zlen;
	struct lc_err e;
	int r;

	r = lc_zdef_block(zd, in, len, &z, &zlen);
	LC_CHECK(r == 0 || r == 1);
	if (r == 0) {
		LC_CHECK(z == NULL);
		return 0;
	}
	LC_CHECK(zlen >= 1 && zlen <= LC_ZFRAME_LIMIT(len));
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_zinf_block(zi, z, zlen, back, len, &e), 0);
	LC_CHECK(memcmp(in, back, len) == 0);
	return 1;
}

LC_TEST(zframe_roundtrip_every_level)
{
	uint8_t *in = malloc(T_BLOCK), *back = malloc(T_BLOCK);
	struct lc_zinf *zi;
	static const uint32_t lens[] = { 64, 100, 4096, 65536, 131072,
	    131073, 300000, T_BLOCK };
	int r;

	LC_CHECK(in != NULL && back != NULL);
	LC_CHECK_EQ_I(lc_zinf_new(T_BLOCK, &zi), 0);
	for (int level = 1; level <= 9; level++) {
		struct lc_zdef *zd;
		LC_CHECK_EQ_I(lc_zdef_new(level, T_BLOCK, &zd), 0);
		for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
			t_text(in, lens[k], (uint32_t)level * 100 + (uint32_t)k);
			r = t_roundtrip(zd, zi, in, lens[k], back);
			/* short text may not save 3 %: either is right */
			LC_CHECK(r == 1 || lens[k] < 4096);
		}
		/* zeros: the best case, still bounded */
		memset(in, 0, T_BLOCK);
		LC_CHECK_EQ_I(t_roundtrip(zd, zi, in, T_BLOCK, back), 1);
		lc_zdef_free(zd);
	}
	lc_zinf_free(zi);
	free(in);
	free(back);
}

LC_TEST(zframe_bad_level)
{
	struct lc_zdef *zd = (struct lc_zdef *)1;

	LC_CHECK(lc_zdef_new(0, T_BLOCK, &zd) < 0 && zd == NULL);
	LC_CHECK(lc_zdef_new(10, T_BLOCK, &zd) < 0 && zd == NULL);
}

/* Random data does not shrink: sent raw, at every level and size. */
LC_TEST(zframe_incompressible_raw)
{
	uint8_t *in = malloc(T_BLOCK), *back = malloc(T_BLOCK);
	struct lc_zinf *zi;
	static const uint32_t lens[] = { 1, 63, 64, 4096, 131072, 131073,
	    T_BLOCK };

	LC_CHECK(in != NULL && back != NULL);
	LC_CHECK_EQ_I(lc_zinf_new(T_BLOCK, &zi), 0);
	for (int level = 1; level <= 9; level += 4) {
		struct lc_zdef *zd;
		LC_CHECK_EQ_I(lc_zdef_new(level, T_BLOCK, &zd), 0);
		for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
			t_random(in, lens[k], (uint32_t)k + 1);
			LC_CHECK_EQ_I(t_roundtrip(zd, zi, in, lens[k], back),
			    0);
		}
		/* over the block: refused, not overrun */
		{
			const uint8_t *z;
			uint32_t zlen;
			LC_CHECK(lc_zdef_block(zd, in, T_BLOCK + 1, &z,
			    &zlen) < 0);
		}
		lc_zdef_free(zd);
	}
	lc_zinf_free(zi);
	free(in);
	free(back);
}

/*
 * Mixed: a file of text and random blocks; the text blocks go compressed,
 * the random ones raw, and a block that starts random and ends as text
 * goes raw (the probe), one that is text with a little noise compressed.
 */
LC_TEST(zframe_mixed_blocks)
{
	uint8_t *in = malloc(T_BLOCK), *back = malloc(T_BLOCK);
	struct lc_zdef *zd;
	struct lc_zinf *zi;
	int got[6];

	LC_CHECK(in != NULL && back != NULL);
	LC_CHECK_EQ_I(lc_zdef_new(1, T_BLOCK, &zd), 0);
	LC_CHECK_EQ_I(lc_zinf_new(T_BLOCK, &zi), 0);
	for (int k = 0; k < 6; k++) {
		switch (k) {
		case 0: case 3: t_text(in, T_BLOCK, (uint32_t)k); break;
		case 1: case 4: t_random(in, T_BLOCK, (uint32_t)k); break;
		case 2:		/* random start, text after the probe */
			t_random(in, LC_ZFRAME_PROBE, 9);
			t_text(in + LC_ZFRAME_PROBE, T_BLOCK - LC_ZFRAME_PROBE,
			    9);
			break;
		default:	/* text with 1 % noise */
			t_text(in, T_BLOCK, 5);
			for (uint32_t i = 0; i < T_BLOCK; i += 100)
				in[i] = (uint8_t)(i * 7);
		}
		got[k] = t_roundtrip(zd, zi, in, T_BLOCK, back);
	}
	LC_CHECK_EQ_I(got[0], 1);
	LC_CHECK_EQ_I(got[1], 0);
	LC_CHECK_EQ_I(got[2], 0);
	LC_CHECK_EQ_I(got[3], 1);
	LC_CHECK_EQ_I(got[4], 0);
	LC_CHECK_EQ_I(got[5], 1);
	lc_zdef_free(zd);
	lc_zinf_free(zi);
	free(in);
	free(back);
}

/* A zlib stream of n bytes of text into *z (caller frees); its length. */
static uint32_t
t_stream(size_t n, uint8_t **z)
{
	uint8_t *in = malloc(n ? n : 1);
	uLongf zl = compressBound((uLong)n);

	LC_CHECK(in != NULL && (*z = malloc(zl + 16)) != NULL);
	t_text(in, n, 3);
	LC_CHECK(compress2(*z, &zl, in, (uLong)n, 6) == Z_OK);
	free(in);
	return (uint32_t)zl;
}

/* Inflate into a buffer of exactly raw_len with guard bytes behind it. */
static int
t_inflate(const uint8_t *z, uint32_t zlen, uint32_t raw_len, uint32_t block,
    const char *want)
{
	struct lc_zinf *zi;
	struct lc_err e;
	uint8_t *out = malloc((size_t)raw_len + 64);
	int r;

	LC_CHECK(out != NULL);
	memset(out + raw_len, 0xa5, 64);
	LC_CHECK_EQ_I(lc_zinf_new(block, &zi), 0);
	lc_err_clear(&e);
	r = lc_zinf_block(zi, z, zlen, out, raw_len, &e);
	for (int i = 0; i < 64; i++)
		LC_CHECK(out[raw_len + (uint32_t)i] == 0xa5);	/* the cap */
	if (r != 0 && want != NULL && strstr(e.msg, want) == NULL) {
		fprintf(stderr, "error '%s', want '%s'\n", e.msg, want);
		LC_CHECK(0);
	}
	lc_zinf_free(zi);
	free(out);
	return r;
}

LC_TEST(zframe_hostile_inflate)
{
	uint8_t *z, garbage[256];
	uint32_t zl;

	/* the honest case */
	zl = t_stream(50000, &z);
	LC_CHECK_EQ_I(t_inflate(z, zl, 50000, T_BLOCK, NULL), 0);
	/* more bytes than raw_len: stopped at the cap */
	LC_CHECK_EQ_I(t_inflate(z, zl, 49999, T_BLOCK, "past its raw"),
	    -LC_ERR_PROTO);
	LC_CHECK_EQ_I(t_inflate(z, zl, 1, T_BLOCK, "past its raw"),
	    -LC_ERR_PROTO);
	/* fewer */
	LC_CHECK_EQ_I(t_inflate(z, zl, 50001, T_BLOCK, "inflates to 50000"),
	    -LC_ERR_PROTO);
	/* truncated: every cut short of the end */
	for (uint32_t cut = 1; cut < zl; cut += zl / 37 + 1)
		LC_CHECK_EQ_I(t_inflate(z, cut, 50000, T_BLOCK, NULL),
		    -LC_ERR_PROTO);
	LC_CHECK_EQ_I(t_inflate(z, zl - 1, 50000, T_BLOCK, NULL),
	    -LC_ERR_PROTO);
	/* trailing bytes after a complete stream */
	z[zl] = 0;
	LC_CHECK_EQ_I(t_inflate(z, zl + 1, 50000, T_BLOCK, "after the end"),
	    -LC_ERR_PROTO);
	/* a flipped byte in the middle: corrupt or adler32 mismatch */
	z[zl / 2] ^= 0x10;
	LC_CHECK_EQ_I(t_inflate(z, zl, 50000, T_BLOCK, NULL), -LC_ERR_PROTO);
	free(z);
	/* raw_len over the block, and empty input */
	zl = t_stream(8192, &z);
	LC_CHECK_EQ_I(t_inflate(z, zl, 8192, 4096, "out of bounds"),
	    -LC_ERR_PROTO);
	LC_CHECK_EQ_I(t_inflate(z, 0, 8192, T_BLOCK, "out of bounds"),
	    -LC_ERR_PROTO);
	free(z);
	/* garbage */
	t_random(garbage, sizeof(garbage), 77);
	LC_CHECK_EQ_I(t_inflate(garbage, sizeof(garbage), 4096, T_BLOCK,
	    NULL), -LC_ERR_PROTO);
	/* a zip bomb: 64 MiB of zeros in ~64 KiB, claimed as one block */
	{
		size_t n = 64u << 20;
		uint8_t *zero = calloc(1, n);
		uLongf bl = compressBound((uLong)n);
		uint8_t *bomb = malloc(bl);
		LC_CHECK(zero != NULL && bomb != NULL);
		LC_CHECK(compress2(bomb, &bl, zero, (uLong)n, 9) == Z_OK);
		free(zero);
		LC_CHECK(bl < T_BLOCK);
		LC_CHECK_EQ_I(t_inflate(bomb, (uint32_t)bl, T_BLOCK, T_BLOCK,
		    "past its raw"), -LC_ERR_PROTO);
		free(bomb);
	}
}

LC_TEST_MAIN()
