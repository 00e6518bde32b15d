/*
 * Test hooks, off unless the environment turns them on.
 *
 * LANECP_TEST_PROXY=PROGRAM: after the sink reports its data ports, the
 * controller starts "PROGRAM ADDR PORT..." and has the source connect to
 * the ports PROGRAM prints on its first line instead, so a test can put a
 * proxy that corrupts, resets or stalls a stream between source and sink
 * (tests/tools/lc_proxy.c).  The program is stopped when the copy ends.
 */
#ifndef LANECP_TESTHOOK_H
#define LANECP_TESTHOOK_H

#include <stdint.h>
#include <sys/types.h>

#include "lanecp/err.h"

/*
 * If the hook is on, start the proxy for addr:ports[0..n) and replace
 * ports with the proxy's; *pid gets its pid.  0 when off or done.
 */
int lc_testhook_proxy(const char *addr, uint16_t *ports, uint32_t n,
    pid_t *pid, struct lc_err *e);

/* Stop a proxy started above (pid <= 0: nothing). */
void lc_testhook_proxy_stop(pid_t pid);

#endif
