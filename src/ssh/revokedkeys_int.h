/*
 * Revoked-key internals of src/ssh (revokedkeys.c), for its tests and
 * fuzz_revokedkeys.  Not part of the interface: see revokedkeys.h.
 */
#ifndef LANECP_REVOKEDKEYS_INT_H
#define LANECP_REVOKEDKEYS_INT_H

#include <stddef.h>

#include "err.h"
#include "revokedkeys.h"

/*
 * Internal, for tests and fuzz_revokedkeys: as lc_revokedkeys_check()
 * for the size bytes of data, read from a file called name.
 */
int lc__revokedkeys_check_mem(const unsigned char *data, size_t size,
    const char *name, const unsigned char *blob, size_t len,
    struct lc_revoked_result *res, struct lc_err *e);

#endif
