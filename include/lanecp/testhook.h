/*
 * Test hooks, compiled in only with -DLC_TEST_HOOKS=ON (test builds; never
 * an installed lanecp), and even then off unless a test turns them on.
 * Without the option the functions below are inline no-ops and testhook.c
 * is not built.
 *
 * LANECP_TEST_PROXY=PROGRAM: after the sink reports its data ports, the
 * controller starts "PROGRAM ADDR PORT..." and has the source connect to
 * the ports PROGRAM prints on its first line instead, so a test can put a
 * proxy that corrupts, resets or stalls a stream between source and sink
 * (tests/tools/lc_proxy.c).  The program is stopped when the copy ends.
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
 * lc_copy_opts.allow_local: both ends on this host, data over loopback
 * (tests/unit/test_copy.c).
 *
 * "lanecp --test-hooks" exits 0 in a hook build (an unknown option, exit
 * 2, otherwise): the integration tests that need a hook skip (exit 77)
 * without them.
 */
#ifndef LANECP_TESTHOOK_H
#define LANECP_TESTHOOK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lanecp/controller.h"
#include "lanecp/err.h"

#ifdef LC_TEST_HOOKS
/*
 * If the hook is on, start the proxy for addr:ports[0..n) and replace
 * ports with the proxy's; *pid gets its pid.  0 when off or done.
 */
int lc_testhook_proxy(const char *addr, uint16_t *ports, uint32_t n,
    pid_t *pid, struct lc_err *e);

/* Stop a proxy started above (pid <= 0: nothing). */
void lc_testhook_proxy_stop(pid_t pid);

/* If LANECP_TEST_TRANSFER is a valid id, copy it to out (outsz bytes,
 * at least LC_TRANSFER_HEX + 1); otherwise leave out as it is. */
void lc_testhook_transfer(char *out, size_t outsz);

/* LANECP_TEST_GRACE_S if set and valid, else dflt. */
uint32_t lc_testhook_grace_s(uint32_t dflt);

/* LANECP_TEST_AEAD_EPOCH if set and valid, else dflt. */
uint64_t lc_testhook_aead_epoch(uint64_t dflt);
/* LANECP_TEST_ARCH if set and not empty, else dflt. */
const char *lc_testhook_arch(const char *dflt);
/* LANECP_TEST_MAX_RUNS if set and valid, else dflt. */
uint32_t lc_testhook_max_runs(uint32_t dflt);

/* 1 when the options allow a copy with both ends local. */
static inline int
lc_testhook_allow_local(const struct lc_copy_opts *o)
{
	return o->allow_local;
}
#else
static inline int
lc_testhook_proxy(const char *addr, uint16_t *ports, uint32_t n,
    pid_t *pid, struct lc_err *e)
{
	(void)addr, (void)ports, (void)n, (void)e;
	*pid = -1;
	return 0;
}

static inline void
lc_testhook_proxy_stop(pid_t pid)
{
	(void)pid;
}

static inline void
lc_testhook_transfer(char *out, size_t outsz)
{
	(void)out, (void)outsz;
}

static inline uint32_t
lc_testhook_grace_s(uint32_t dflt)
{
	return dflt;
}

static inline uint64_t
lc_testhook_aead_epoch(uint64_t dflt)
{
	return dflt;
}

static inline const char *
lc_testhook_arch(const char *dflt)
{
	return dflt;
}

static inline uint32_t
lc_testhook_max_runs(uint32_t dflt)
{
	return dflt;
}

static inline int
lc_testhook_allow_local(const struct lc_copy_opts *o)
{
	(void)o;
	return 0;
}
#endif

#endif
