/*
 * Hidden settings: values for testing and tuning, read from environment
 * variables LANECP_<NAME>, present in every build (the shipped one is the
 * tested one).  They are documented in man/lanecp.1 (ENVIRONMENT), not in
 * --help.  Each module reads its own with its own name, bounds and
 * default:
 *
 *   LANECP_AEAD_EPOCH   net/aead.c        rekey after this much payload
 *   LANECP_MAX_RUNS     agent/source      resume check: runs kept
 *   LANECP_HASH_FRAME   agent/sink        -u's delta: hashes per frame
 *   LANECP_GRACE_S      ctl/controller.c  the agents' grace in PINGs
 *   LANECP_DEL_MAX      ctl/controller_del.c  --delete's candidates
 *   LANECP_TRANSFER     ctl/copy.c        a fixed transfer id
 *   LANECP_ARCH         ctl/push.c        the system the push compares
 *
 * None widens what a peer may do: each only narrows a bound the code
 * enforces anyway (a shorter epoch, fewer runs, smaller frames, a grace the agent clamps)
 * or names what a peer could name itself (a transfer id is public,
 * takeover.h).  A value that is set but malformed or out of range is
 * refused, never ignored: the programs read every setting they hold at
 * startup (lc_agent_settings, lc_copy_settings) and stop with exit 2.
 *
 * What must stay a test hook (the test proxy, copies with both ends
 * local) is compiled into test builds only: src/ctl/testhook_ctl.c.
 */
#ifndef LANECP_SETTINGS_H
#define LANECP_SETTINGS_H

#include <stdint.h>

#include "err.h"

/* "LANECP_" NAME is at most this long. */
#define LC_SETTING_NAME_MAX 64

/*
 * The setting LANECP_<name> as a number in [lo, hi] in *out, dflt when
 * the variable is unset or empty.  0, or -LC_ERR_USAGE (*out = dflt, e
 * names the variable and the range) when it is set to anything else.
 */
int lc_setting_uint(const char *name, uint64_t lo, uint64_t hi, uint64_t dflt,
    uint64_t *out, struct lc_err *e);

/*
 * The setting LANECP_<name> in *out (the environment's string), dflt
 * when unset or empty.  0, or -LC_ERR_USAGE (*out = dflt, e names the
 * variable and says it must be `what`) when valid(value) is 0.
 */
int lc_setting_str(const char *name, int (*valid)(const char *),
    const char *what, const char *dflt, const char **out, struct lc_err *e);

#endif
