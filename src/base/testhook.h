/*
 * Test hooks that tune a value, compiled in only with -DLC_TEST_HOOKS=ON
 * (test builds; never an installed lanecp), and even then off unless a
 * test sets the variable.  Without the option the macros below are the
 * default value itself: no variable name reaches the program.
 *
 * The variables (each module passes its own name and bounds):
 *
 * LANECP_TEST_TRANSFER=ID: lc_copy uses this transfer id (lockholder.h)
 * instead of a random one, so a test can leave a stale agent of "the same
 * transfer" behind and then run the next attempt as a new process.
 *
 * LANECP_TEST_GRACE_S=N: the controller's PINGs give the agents N s of
 * grace (1..LC_PING_GRACE_MAX) instead of LC_AGENT_GRACE_S, so a test's
 * stale agent cannot stop by itself before the test is done with it.
 *
 * LANECP_TEST_AEAD_EPOCH=BYTES: sealed data frames change key after BYTES
 * (4096 .. 2^36) of payload instead of every 64 GiB (aead.c), so a test
 * can cross several rekeys in a small copy.  Both ends must agree, as the
 * real bound is the same on both: a mismatch is an integrity failure.
 *
 * LANECP_TEST_ARCH="SYSTEM MACHINE": the controller pretends its build is
 * for that system (as uname -s and uname -m print it) when it decides
 * whether its agent may be pushed to a remote host (push.h).
 *
 * LANECP_TEST_MAX_RUNS=N: a resume check keeps at most N runs of
 * differing chunks (1..LC_PREFIX_MAX_RUNS) instead of LC_PREFIX_MAX_RUNS,
 * so a test reaches the fallback (cut at the next run) with a few.
 *
 * The hooks that do more than tune a value (the test proxy, copies with
 * both ends local) are the controller's: src/ctl/testhook_ctl.h.
 */
#ifndef LANECP_TESTHOOK_H
#define LANECP_TESTHOOK_H

#include <stdint.h>

#ifdef LC_TEST_HOOKS
/* The value of the environment variable NAME if it is a number in
 * [lo, hi], else dflt. */
uint64_t lc_testhook_uint(const char *name, uint64_t lo, uint64_t hi,
    uint64_t dflt);
/* The value of NAME if it is set and not empty, else dflt. */
const char *lc_testhook_str(const char *name, const char *dflt);
#else
#define lc_testhook_uint(name, lo, hi, dflt) (dflt)
#define lc_testhook_str(name, dflt) (dflt)
#endif

#endif
