#include "harness.h"

#include "buf.h"
#include "err.h"

LC_TEST(put_get_roundtrip)
{
	struct lc_buf b;
	struct lc_rd rd;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;
	char s[16];

	lc_buf_init(&b, 1024);
	LC_CHECK(lc_buf_put_u8(&b, 0xab) == 0);
	LC_CHECK(lc_buf_put_u16(&b, 0x1234) == 0);
	LC_CHECK(lc_buf_put_u32(&b, 0xdeadbeef) == 0);
	LC_CHECK(lc_buf_put_u64(&b, 0x0102030405060708ULL) == 0);
	LC_CHECK(lc_buf_put_cstring(&b, "hello") == 0);
	LC_CHECK_EQ_U(lc_buf_len(&b), 1 + 2 + 4 + 8 + 4 + 5);
	LC_CHECK(lc_buf_ptr(&b)[1] == 0x12);	/* big-endian */
	lc_rd_init(&rd, lc_buf_ptr(&b), lc_buf_len(&b));
	LC_CHECK(lc_rd_get_u8(&rd, &u8) == 0 && u8 == 0xab);
	LC_CHECK(lc_rd_get_u16(&rd, &u16) == 0 && u16 == 0x1234);
	LC_CHECK(lc_rd_get_u32(&rd, &u32) == 0 && u32 == 0xdeadbeef);
	LC_CHECK(lc_rd_get_u64(&rd, &u64) == 0 &&
	    u64 == 0x0102030405060708ULL);
	LC_CHECK(lc_rd_get_cstring(&rd, s, sizeof(s)) == 0);
	LC_CHECK_STR(s, "hello");
	LC_CHECK(lc_rd_end(&rd) == 0);
	lc_buf_free(&b);
}

LC_TEST(max_is_enforced)
{
	struct lc_buf b;
	uint8_t *p;

	lc_buf_init(&b, 10);
	LC_CHECK(lc_buf_put_u64(&b, 1) == 0);
	LC_CHECK(lc_buf_put_u32(&b, 1) == -LC_ERR_TOOBIG);
	LC_CHECK_EQ_U(lc_buf_len(&b), 8);
	LC_CHECK(lc_buf_reserve(&b, SIZE_MAX, &p) == -LC_ERR_TOOBIG);
	lc_buf_consume(&b, 4);
	LC_CHECK(lc_buf_put_u32(&b, 7) == 0);	/* compaction makes room */
	LC_CHECK(lc_buf_put_u16(&b, 1) == 0);
	LC_CHECK(lc_buf_put_u8(&b, 1) == -LC_ERR_TOOBIG);
	lc_buf_free(&b);
}

LC_TEST(reader_rejects_short_and_trailing)
{
	const uint8_t in[] = { 0, 0, 0, 9, 'a', 'b' };	/* claims 9 bytes */
	struct lc_rd rd;
	const uint8_t *p;
	size_t n;
	uint32_t v;
	char s[4];

	lc_rd_init(&rd, in, sizeof(in));
	LC_CHECK(lc_rd_get_string_direct(&rd, &p, &n) == -LC_ERR_PROTO);
	LC_CHECK_EQ_U(rd.len, sizeof(in));	/* view unchanged */
	LC_CHECK(lc_rd_get_u32(&rd, &v) == 0 && v == 9);
	LC_CHECK(lc_rd_end(&rd) == -LC_ERR_PROTO);
	/* string too long for the output, or with a NUL, is refused */
	{
		const uint8_t big[] = { 0, 0, 0, 4, 'a', 'b', 'c', 'd' };
		const uint8_t nul[] = { 0, 0, 0, 2, 'a', 0 };
		lc_rd_init(&rd, big, sizeof(big));
		LC_CHECK(lc_rd_get_cstring(&rd, s, sizeof(s)) != 0);
		LC_CHECK_EQ_U(rd.len, sizeof(big));
		lc_rd_init(&rd, nul, sizeof(nul));
		LC_CHECK(lc_rd_get_cstring(&rd, s, sizeof(s)) != 0);
	}
}

/*
 * An empty buffer that never grew has no memory (d == NULL): its data
 * pointer, a reserve of 0 bytes and a 0-byte read from an empty view must
 * not compute NULL + 0, which is undefined (clang's UBSan stops there:
 * every copy did, at lc_buf_ptr), nor pass NULL to memcpy.
 */
LC_TEST(empty_buffer_and_view_have_no_null_arithmetic)
{
	struct lc_buf b;
	struct lc_rd rd;
	uint8_t out[4], *p = out;
	uint32_t v;

	lc_buf_init(&b, 64);
	LC_CHECK(lc_buf_ptr(&b) != NULL);
	LC_CHECK_EQ_U(lc_buf_len(&b), 0);
	memcpy(out, lc_buf_ptr(&b), lc_buf_len(&b));
	LC_CHECK_EQ_I(lc_buf_reserve(&b, 0, &p), 0);
	LC_CHECK_EQ_U(lc_buf_len(&b), 0);
	LC_CHECK_EQ_I(lc_buf_put(&b, NULL, 0), 0);
	LC_CHECK_EQ_I(lc_buf_put_string(&b, NULL, 0), 0);
	LC_CHECK_EQ_U(lc_buf_len(&b), 4);
	lc_buf_consume(&b, 4);
	LC_CHECK(lc_buf_ptr(&b) != NULL);
	lc_buf_free(&b);
	LC_CHECK(lc_buf_ptr(&b) != NULL);

	lc_rd_init(&rd, NULL, 0);
	LC_CHECK_EQ_I(lc_rd_get_bytes(&rd, out, 0), 0);
	LC_CHECK_EQ_I(lc_rd_get_bytes(&rd, NULL, 0), 0);
	LC_CHECK(lc_rd_get_u32(&rd, &v) != 0);
	LC_CHECK_EQ_I(lc_rd_end(&rd), 0);
}

LC_TEST_MAIN()
