/*
 * A RevokedHostKeys file (key list or OpenSSH KRL), checked against a
 * host key as a connection does.  The file is untrusted input: whatever
 * it holds, the check must stay in bounds and give a verdict or a one-line
 * error naming the file.
 */
#include "err.h"
#include "log.h"
#include "revokedkeys.h"
#include "revokedkeys_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the ssh-ed25519 public key blob of fuzz_knownhosts */
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
	static int init;
	struct lc_revoked_result res;
	struct lc_err e;
	int r;

	if (!init) {
		lc_log_init("fuzz", LC_LOG_ERROR, 2);
		init = 1;
	}
	if (size > 1024 * 1024)
		return 0;
	lc_err_clear(&e);
	r = lc__revokedkeys_check_mem(data, size, "rk", lc_fuzz_blob,
	    sizeof(lc_fuzz_blob), &res, &e);
	if (r == 0) {
		/* a key list names the line; a KRL has none */
		if (res.revoked && !res.krl && res.line == 0)
			abort();
		if (res.krl && res.line != 0)
			abort();
	} else if (r != -LC_ERR_HOSTKEY && r != -LC_ERR_NOMEM) {
		abort();
	} else if (r == -LC_ERR_HOSTKEY &&
	    strncmp(e.msg, "RevokedHostKeys rk", 18) != 0) {
		abort();
	}
	return 0;
}
