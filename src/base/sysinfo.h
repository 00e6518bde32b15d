/* Small values read from /proc (kernel limits such as rmem_max). */
#ifndef LANECP_SYSINFO_H
#define LANECP_SYSINFO_H

#include <stdint.h>

/* Read a small integer from a /proc file; 0 if unreadable. */
uint64_t lc_proc_u64(const char *path);

#endif
