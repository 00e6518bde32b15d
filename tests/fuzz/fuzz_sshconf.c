/*
 * ssh_config text (a user's file) through the same parser the files go
 * through, resolved for two hosts.  Include lines are checked, not read.
 * A result must be sane; a failure must say what failed.
 */
#include "err.h"
#include "log.h"
#include "sshconf.h"
#include "sshconf_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
lc_fuzz_resolve(const char *host, const uint8_t *data, size_t size)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;
	int r;

	memset(&ctx, 0, sizeof(ctx));
	ctx.home = "/nonexistent-lanecp-fuzz";
	ctx.local_user = "fuzz";
	lc_err_clear(&e);
	r = lc__sshconf_resolve_mem(&ctx, host, (const char *)data, size, &c,
	    &e);
	if (r == 0) {
		if (c.hostname[0] == '\0' ||
		    c.n_identity_files > LC_SSHCONF_MAX_FILES ||
		    c.n_user_known_hosts > LC_SSHCONF_MAX_FILES ||
		    c.n_global_known_hosts > LC_SSHCONF_MAX_FILES ||
		    (c.address_family != 0 && c.address_family != 4 &&
		    c.address_family != 6) ||
		    (c.proxy_jump != NULL && c.proxy_command != NULL))
			abort();
	} else if (r != -LC_ERR_CONFIG && r != -LC_ERR_NOMEM) {
		abort();
	} else if (e.msg[0] == '\0' || c.n_identity_files != 0 ||
	    c.proxy_jump != NULL || c.proxy_command != NULL) {
		abort();
	}
	lc_sshconf_free(&c);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;

	if (!init) {
		lc_log_init("fuzz", LC_LOG_ERROR, 2);
		init = 1;
	}
	if (size > 64 * 1024)
		return 0;
	lc_fuzz_resolve("web", data, size);
	lc_fuzz_resolve("db.example.org", data, size);
	return 0;
}
