#include "harness.h"

#include "base64.h"

#include <string.h>

/*
 * The base64 helpers (OpenSSL underneath): the decoder must take what
 * key files and known_hosts hold (padded base64, PEM-style bodies with
 * line breaks) and refuse the rest.
 */

static int
t_dec(const char *in, unsigned char *out, size_t outsz)
{
	return lc_base64_decode(in, strlen(in), out, outsz);
}

LC_TEST(b64_padding)
{
	unsigned char o[16];

	LC_CHECK_EQ_I(t_dec("", o, sizeof(o)), 0);
	LC_CHECK_EQ_I(t_dec("QUJD", o, sizeof(o)), 3);
	LC_CHECK(memcmp(o, "ABC", 3) == 0);
	LC_CHECK_EQ_I(t_dec("QUI=", o, sizeof(o)), 2);
	LC_CHECK(memcmp(o, "AB", 2) == 0);
	LC_CHECK_EQ_I(t_dec("QQ==", o, sizeof(o)), 1);
	LC_CHECK_EQ_I(o[0], 'A');
	LC_CHECK_EQ_I(t_dec("QUJDRA==", o, sizeof(o)), 4);
	LC_CHECK(memcmp(o, "ABCD", 4) == 0);
}

/* What OpenSSH writes is always padded: a missing '=' is refused. */
LC_TEST(b64_bad_padding)
{
	unsigned char o[16];

	LC_CHECK(t_dec("QUI", o, sizeof(o)) < 0);
	LC_CHECK(t_dec("QQ", o, sizeof(o)) < 0);
	LC_CHECK(t_dec("Q", o, sizeof(o)) < 0);
	LC_CHECK(t_dec("Q===", o, sizeof(o)) < 0);
	LC_CHECK(t_dec("QQ=", o, sizeof(o)) < 0);
	LC_CHECK(t_dec("QQ==QUJD", o, sizeof(o)) < 0);	/* data after '=' */
	LC_CHECK(t_dec("QQ== QUJD", o, sizeof(o)) < 0);
	LC_CHECK(t_dec("=QUJD", o, sizeof(o)) < 0);
}

/* Space, tab, CR and LF anywhere are skipped, as in a PEM body. */
LC_TEST(b64_whitespace)
{
	unsigned char o[64];

	LC_CHECK_EQ_I(t_dec(" QU\nJD\r\n\tRA=\n=\n", o, sizeof(o)), 4);
	LC_CHECK(memcmp(o, "ABCD", 4) == 0);
	LC_CHECK_EQ_I(t_dec("\n\n", o, sizeof(o)), 0);
	/* a line longer than OpenSSL's 64-character block */
	LC_CHECK_EQ_I(t_dec("QUJDQUJDQUJDQUJDQUJDQUJDQUJDQUJDQUJDQUJDQUJDQUJD"
	    "QUJDQUJDQUJDQUJDQUJDQUJD\nQUJD", o, sizeof(o)), 57);
}

/* Anything outside the alphabet, '-' (a PEM marker) included. */
LC_TEST(b64_invalid)
{
	unsigned char o[16];

	LC_CHECK(t_dec("QU*D", o, sizeof(o)) < 0);
	LC_CHECK(t_dec("QUJD-", o, sizeof(o)) < 0);
	LC_CHECK(t_dec("QUJD----", o, sizeof(o)) < 0);
	LC_CHECK(t_dec("QU\vJD", o, sizeof(o)) < 0);
	LC_CHECK(t_dec("QUJ\xc3\xa9", o, sizeof(o)) < 0);
	LC_CHECK(lc_base64_decode("QU\0D", 4, o, sizeof(o)) < 0);
	LC_CHECK(t_dec("QUJD_A==", o, sizeof(o)) < 0);	/* base64url */
}

/* out must hold three bytes per four characters of input. */
LC_TEST(b64_out_too_small)
{
	unsigned char o[8];

	memset(o, 0xa5, sizeof(o));
	LC_CHECK(t_dec("QUJDQUJD", o, 5) < 0);
	LC_CHECK_EQ_I(o[0], 0xa5);
	LC_CHECK_EQ_I(t_dec("QUJDQUJD", o, 6), 6);
}

LC_TEST(b64_encode)
{
	char o[16];

	LC_CHECK_EQ_I(lc_base64_encode((const unsigned char *)"AB", 2, o,
	    sizeof(o)), 4);
	LC_CHECK_STR(o, "QUI=");
	LC_CHECK(lc_base64_encode((const unsigned char *)"AB", 2, o, 4) < 0);
}

/* The strict decoder (hashed known_hosts names): nothing to skip. */
LC_TEST(b64_strict)
{
	unsigned char o[16];

	LC_CHECK_EQ_I(lc_base64_decode_strict("QUJD", 4, o, sizeof(o)), 3);
	LC_CHECK(memcmp(o, "ABC", 3) == 0);
	LC_CHECK_EQ_I(lc_base64_decode_strict("QUI=", 4, o, sizeof(o)), 2);
	LC_CHECK_EQ_I(lc_base64_decode_strict("QQ==", 4, o, sizeof(o)), 1);
	LC_CHECK(lc_base64_decode_strict("", 0, o, sizeof(o)) < 0);
	LC_CHECK(lc_base64_decode_strict("QUI", 3, o, sizeof(o)) < 0);
	LC_CHECK(lc_base64_decode_strict("QU J", 4, o, sizeof(o)) < 0);
	LC_CHECK(lc_base64_decode_strict("Q=JD", 4, o, sizeof(o)) < 0);
	LC_CHECK(lc_base64_decode_strict("QUJD", 4, o, 2) < 0);
}

LC_TEST_MAIN()
