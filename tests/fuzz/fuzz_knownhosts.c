/*
 * known_hosts text (a user's file) loaded as lanecp loads a file, then
 * looked up as a connection does (plain, hashed and wildcard lines, and
 * the @revoked and @cert-authority markers).  Under ASan/LSan this also
 * catches libssh2 leaking on lines it should never be given (issue #9
 * item 12).
 */
#include "err.h"
#include "knownhosts.h"
#include "knownhosts_int.h"
#include "log.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libssh2.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* an ssh-ed25519 public key blob */
static const unsigned char lc_fuzz_blob[] = {
	0x00, 0x00, 0x00, 0x0b, 's', 's', 'h', '-', 'e', 'd', '2', '5', '5',
	'1', '9', 0x00, 0x00, 0x00, 0x20,
	0xf7, 0xe4, 0x42, 0x52, 0x71, 0xda, 0x9c, 0x2d, 0xbb, 0x38, 0x76,
	0xdc, 0x59, 0x96, 0x4c, 0xa5, 0x4a, 0xbb, 0x0f, 0x97, 0xb5, 0xac,
	0x99, 0x14, 0x06, 0xe7, 0x7c, 0x9e, 0xcb, 0x8c, 0x03, 0x2b,
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static LIBSSH2_SESSION *sess;
	static const char *const names[] = { "host", "[host]:2222" };
	static const char *const algs[] = {
		"ssh-ed25519", "ecdsa-sha2-nistp256", "rsa-sha2-512",
	};
	struct lc_knownhosts *kh = NULL;
	struct lc_kh_result res;
	struct lc_err e;
	char order[256];

	if (sess == NULL) {
		lc_log_init("fuzz", LC_LOG_ERROR, 2);
		if (libssh2_init(0) != 0 ||
		    (sess = libssh2_session_init()) == NULL)
			abort();
	}
	if (size > 256 * 1024)
		return 0;
	lc_err_clear(&e);
	if (lc__knownhosts_load_mem(sess, (const char *)data, size,
	    "known_hosts", names, 2, &kh, &e) != 0)
		return 0;
	if (lc_knownhosts_check(kh, names, 2, lc_fuzz_blob,
	    sizeof(lc_fuzz_blob), LIBSSH2_HOSTKEY_TYPE_ED25519, &res,
	    &e) == 0 && res.status != LC_KH_UNKNOWN && res.name == NULL)
		abort();
	/* a marker line is always named by file and line */
	if ((res.status == LC_KH_REVOKED || res.status == LC_KH_CA) &&
	    (res.file == NULL || strcmp(res.file, "known_hosts") != 0 ||
	    res.line == 0))
		abort();
	if (lc_knownhosts_order_algs(kh, names, 2, algs, 3, order,
	    sizeof(order)) < 0)
		abort();
	lc_knownhosts_free(kh);
	return 0;
}
