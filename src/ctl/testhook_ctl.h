/*
 * The test hooks: what a test needs that must not be in an installed
 * lanecp, all compiled from one file, testhook_ctl.c, and only with
 * -DLC_TEST_HOOKS=ON (test builds); without it the functions below are
 * inline no-ops and testhook_ctl.c is not built.  What only tunes a value
 * is a hidden setting instead, in every build (settings.h).
 *
 * LANECP_TEST_PROXY=PROGRAM: after the sink reports its data ports, the
 * controller starts "PROGRAM ADDR PORT..." and has the source connect to
 * the ports PROGRAM prints on its first line instead, so a test can put a
 * proxy that corrupts, resets or stalls a stream between source and sink
 * (tests/tools/lc_proxy.c).  The program is stopped when the copy ends.
 * A hook, not a setting: it runs any program the environment names on
 * the data path, and lc_proxy exists to damage streams.
 *
 * LANECP_TEST_OLD_SOURCE=1: the controller takes the source's HELLO for
 * one without flag 16 (LC_HELLO_HASHES), as from a source built before
 * FILE_HASHES, so a test reaches -u's delta in one FILE_PREFIX (and the
 * controller's refusal of FILE_HASHES) with today's agents.  A hook: it
 * makes the controller believe what no peer said.  =noshard: without
 * LC_HELLO_SHARD; =nofollow: without LC_HELLO_FOLLOW (--also's next hop
 * waits for each file to be whole at the target before).
 *
 * LANECP_TEST_OLD_SINK=1: likewise the sink's HELLO without flags 0x20
 * (LC_HELLO_NOMORE) and 0x100 (LC_HELLO_COUNT_INFLIGHT), as from a sink
 * built before both: no SINK_NOMORE is sent and the sink ends at the
 * streams' END, and the source's credit is the lowest id in flight plus
 * the window, as before.
 *
 * lc_copy_opts.allow_local: both ends on this host, data over loopback
 * (tests/unit/test_copy.c).  The field is in every build (one layout);
 * only a hook build honours it.
 *
 * "lanecp --test-hooks" exits 0 in a hook build (an unknown option, exit
 * 2, otherwise): the integration tests that need a hook skip (exit 77)
 * without them.
 *
 * Every hook logs a line with "test hook" in it, a string scripts/test
 * checks the product build does not hold.
 */
#ifndef LANECP_TESTHOOK_CTL_H
#define LANECP_TESTHOOK_CTL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "copy.h"
#include "err.h"

#ifdef LC_TEST_HOOKS
/*
 * If the hook is on, start the proxy for addr:ports[0..n) and replace
 * ports with the proxy's; *pid gets its pid.  0 when off or done.
 */
int lc_testhook_proxy(const char *addr, uint16_t *ports, uint32_t n,
    pid_t *pid, struct lc_err *e);

/* Stop a proxy started above (pid <= 0: nothing). */
void lc_testhook_proxy_stop(pid_t pid);

/* 1 when the options allow a copy with both ends local. */
int lc_testhook_allow_local(const struct lc_copy_opts *o);

/* The source's HELLO flags as the controller takes them. */
uint32_t lc_testhook_src_flags(uint32_t flags);

/*
 * The shard the source is asked for: LANECP_TEST_SHARD_SENT ("I/N") in
 * place of the user's, so that the source lists what the controller must
 * refuse; else i and n.
 */
void lc_testhook_shard_sent(uint32_t i, uint32_t n, char *buf, size_t sz);

/* The sink's HELLO flags as the controller takes them. */
uint32_t lc_testhook_dst_flags(uint32_t flags);

/* 1 (after printing "test hooks: on") if argv is "PROG --test-hooks". */
int lc_testhook_cli(int argc, char **argv);
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

static inline int
lc_testhook_allow_local(const struct lc_copy_opts *o)
{
	(void)o;
	return 0;
}

static inline uint32_t
lc_testhook_src_flags(uint32_t flags)
{
	return flags;
}

static inline void
lc_testhook_shard_sent(uint32_t i, uint32_t n, char *buf, size_t sz)
{
	snprintf(buf, sz, "%u/%u", i + 1, n);
}

static inline uint32_t
lc_testhook_dst_flags(uint32_t flags)
{
	return flags;
}

static inline int
lc_testhook_cli(int argc, char **argv)
{
	(void)argc, (void)argv;
	return 0;
}
#endif

#endif
