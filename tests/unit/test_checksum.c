#include "harness.h"

#include "checksum.h"
#include "err.h"

static void
text_of(int alg, const char *data, char out[LC_CSUM_TEXT_MAX])
{
	struct lc_csum *c = lc_csum_new(alg);

	LC_CHECK(c != NULL);
	lc_csum_update(c, data, strlen(data));
	lc_csum_text(c, out);
	lc_csum_free(c);
}

LC_TEST(known_values)
{
	char t[LC_CSUM_TEXT_MAX];

	text_of(LC_CSUM_SHA256, "abc", t);
	LC_CHECK_STR(t, "sha256:ba7816bf8f01cfea414140de5dae2223"
	    "b00361a396177a9cb410ff61f20015ad");
	text_of(LC_CSUM_CRC32, "123456789", t);
	LC_CHECK_STR(t, "crc32:cbf43926");
	text_of(LC_CSUM_ADLER32, "Wikipedia", t);
	LC_CHECK_STR(t, "adler32:11e60398");
	text_of(LC_CSUM_CRC32, "", t);
	LC_CHECK_STR(t, "crc32:00000000");
}

LC_TEST(incremental_and_dup_match_one_shot)
{
	char a[LC_CSUM_TEXT_MAX], b[LC_CSUM_TEXT_MAX];
	struct lc_csum *c = lc_csum_new(LC_CSUM_SHA256), *d;

	lc_csum_update(c, "hello ", 6);
	d = lc_csum_dup(c);
	lc_csum_update(c, "world", 5);
	lc_csum_update(d, "world", 5);
	lc_csum_text(c, a);
	lc_csum_text(d, b);
	LC_CHECK_STR(a, b);
	text_of(LC_CSUM_SHA256, "hello world", b);
	LC_CHECK_STR(a, b);
	lc_csum_free(c);
	lc_csum_free(d);
}

LC_TEST(parse_arguments)
{
	char exp[LC_CSUM_TEXT_MAX];
	int alg;

	LC_CHECK(lc_csum_parse_arg("sha256", &alg, exp) == 0);
	LC_CHECK_EQ_I(alg, LC_CSUM_SHA256);
	LC_CHECK_STR(exp, "");
	LC_CHECK(lc_csum_parse_arg("CRC32=CBF43926", &alg, exp) == 0);
	LC_CHECK_EQ_I(alg, LC_CSUM_CRC32);
	LC_CHECK_STR(exp, "crc32:cbf43926");
	LC_CHECK(lc_csum_parse_arg("md5", &alg, exp) == -LC_ERR_USAGE);
	LC_CHECK(lc_csum_parse_arg("crc32=123", &alg, exp) == -LC_ERR_USAGE);
	LC_CHECK(lc_csum_parse_arg("crc32=zzzzzzzz", &alg, exp) ==
	    -LC_ERR_USAGE);
	LC_CHECK(lc_csum_parse_arg("=abc", &alg, exp) == -LC_ERR_USAGE);
	LC_CHECK(lc_csum_parse_arg("", &alg, exp) == -LC_ERR_USAGE);
}

LC_TEST_MAIN()
