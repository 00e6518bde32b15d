#include "harness.h"

#include "base64.h"
#include "knownhosts.h"
#include "ssh.h"
#include "ssh_int.h"

#include <stdint.h>

/*
 * The openssh-key-v1 probe (lc__ssh_openssh_key): what it finds, that it
 * leaves no decoded key material behind, and the BEGIN/END overlap found
 * by fuzzing.  The keys are throwaway test keys made for this file.
 */
static const char t_plain_key[] =
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACD35EJScdqcLbs4dtxZlkylSrsPl7WsmRQG53yey4wDKwAAAIgbI69OGyOv\n"
    "TgAAAAtzc2gtZWQyNTUxOQAAACD35EJScdqcLbs4dtxZlkylSrsPl7WsmRQG53yey4wDKw\n"
    "AAAECLQFt/3V4Oi6SqDqp/Lluy2e3+quIE4cmTHYNS5uxCY/fkQlJx2pwtuzh23FmWTKVK\n"
    "uw+XtayZFAbnfJ7LjAMrAAAABHRlc3QB\n"
    "-----END OPENSSH PRIVATE KEY-----\n";
static const char t_plain_pub[] =
    "AAAAC3NzaC1lZDI1NTE5AAAAIPfkQlJx2pwtuzh23FmWTKVKuw+XtayZFAbnfJ7LjAMr";

static const char t_enc_key[] =
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAACmFlczI1Ni1jdHIAAAAGYmNyeXB0AAAAGAAAABD7dMS758\n"
    "gyXBHu7NXeqGg2AAAAEAAAAAEAAAAzAAAAC3NzaC1lZDI1NTE5AAAAIGmpX0bxgnmgcytt\n"
    "a20uv9nbGge1R+w9xegQPMvPOFkKAAAAkFLr6Hc2Wd34vLRmNTL3CxxvBmw+FsDFLZF78u\n"
    "rQwc14mVTzNC9fbWvrU/l1MjzF5NX+P9q1/C/o6eHCfez/HYzjHvARalhFt6gXgE/53vk2\n"
    "qu6Hm8UVRG6Fhu4Pyvi4JgyPjpgGRBFUbW5KdBbk71l+aqa+KB9QH4lYg4jqETojuGlT6t\n"
    "ps/k4d9zJOJN829w==\n"
    "-----END OPENSSH PRIVATE KEY-----\n";

static int
t_all(const uint8_t *p, size_t n, uint8_t v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

LC_TEST(openssh_key_plain)
{
	uint8_t scratch[sizeof(t_plain_key)], want[128];
	unsigned char *blob = NULL;
	size_t len = 0;
	int enc = -1, n;

	memset(scratch, 0xa5, sizeof(scratch));
	LC_CHECK_EQ_I(lc__ssh_openssh_key(t_plain_key, scratch,
	    sizeof(scratch), &enc, &blob, &len), 0);
	LC_CHECK_EQ_I(enc, 0);
	n = lc_base64_decode(t_plain_pub, strlen(t_plain_pub), want,
	    sizeof(want));
	LC_CHECK(n > 0);
	LC_CHECK_EQ_U(len, (size_t)n);
	LC_CHECK(memcmp(blob, want, len) == 0);
	free(blob);
	/*
	 * The private key was decoded into scratch (the 0xa5 fill is gone
	 * from it) and must have been wiped: all zeros up to the length of
	 * the base64, the fill untouched after that.
	 */
	LC_CHECK(t_all(scratch, sizeof(scratch) - 80, 0));
	LC_CHECK(t_all(scratch + sizeof(scratch) - 30, 30, 0xa5));
}

LC_TEST(openssh_key_encrypted)
{
	uint8_t scratch[sizeof(t_enc_key)];
	unsigned char *blob = NULL;
	size_t len = 0;
	int enc = -1;

	memset(scratch, 0xa5, sizeof(scratch));
	LC_CHECK_EQ_I(lc__ssh_openssh_key(t_enc_key, scratch,
	    sizeof(scratch), &enc, &blob, &len), 0);
	LC_CHECK_EQ_I(enc, 1);
	LC_CHECK(blob != NULL && len == 51);
	free(blob);
	LC_CHECK(t_all(scratch, sizeof(scratch) - 80, 0));
}

/* A failed parse wipes what it decoded, too. */
LC_TEST(openssh_key_error_path_wipes)
{
	char text[sizeof(t_plain_key)];
	uint8_t scratch[sizeof(t_plain_key)];
	unsigned char *blob = NULL;
	size_t len = 0;
	char *p;
	int enc = -1;

	memcpy(text, t_plain_key, sizeof(text));
	p = strstr(text, "b3Bl");
	LC_CHECK(p != NULL);
	p[0] = 'c';		/* the magic no longer matches */
	memset(scratch, 0xa5, sizeof(scratch));
	LC_CHECK_EQ_I(lc__ssh_openssh_key(text, scratch, sizeof(scratch),
	    &enc, &blob, &len), -LC_ERR_PROTO);
	LC_CHECK(blob == NULL);
	LC_CHECK(t_all(scratch, sizeof(scratch) - 80, 0));
}

/*
 * Issue #9 item 11: END found inside BEGIN's own dashes made the length
 * wrap (and malloc ask for 2^64 bytes).  Under ASan the old code aborts
 * here; now it is simply not a key.
 */
LC_TEST(openssh_key_overlapping_markers)
{
	static const char *const texts[] = {
		"-----BEGIN OPENSSH PRIVATE KEY-----END OPENSSH PRIVATE KEY-----",
		"-----BEGIN OPENSSH PRIVATE KEY-----",
		"-----END OPENSSH PRIVATE KEY----------BEGIN OPENSSH "
		    "PRIVATE KEY-----",
		"-----BEGIN OPENSSH PRIVATE KEY----------END OPENSSH "
		    "PRIVATE KEY-----",
	};
	uint8_t scratch[256];
	unsigned char *blob = NULL;
	size_t i, len = 0;
	int enc = -1;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		LC_CHECK_EQ_I(lc__ssh_openssh_key(texts[i], scratch,
		    sizeof(scratch), &enc, &blob, &len), -LC_ERR_PROTO);
		LC_CHECK(blob == NULL);
	}
}

/* More base64 than scratch holds: refused, nothing written past it. */
LC_TEST(openssh_key_scratch_too_small)
{
	uint8_t scratch[64 + 16];
	unsigned char *blob = NULL;
	size_t len = 0;
	int enc = -1;

	memset(scratch, 0xa5, sizeof(scratch));
	LC_CHECK_EQ_I(lc__ssh_openssh_key(t_plain_key, scratch, 64, &enc,
	    &blob, &len), -LC_ERR_TOOBIG);
	LC_CHECK(blob == NULL);
	LC_CHECK(t_all(scratch + 64, 16, 0xa5));
}

LC_TEST_MAIN()
