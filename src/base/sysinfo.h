/* Small values read from /proc (kernel limits such as rmem_max). */
#ifndef LANECP_SYSINFO_H
#define LANECP_SYSINFO_H

#include <stdint.h>

/* Read a small integer from a /proc file; 0 if unreadable. */
uint64_t lc_proc_u64(const char *path);

/* The idx-th (from 0) of the integers on a /proc file's first line (such
 * as tcp_rmem's "min default max"); 0 if unreadable or missing. */
uint64_t lc_proc_u64_field(const char *path, unsigned idx);

#endif
