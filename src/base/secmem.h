/*
 * Keeping secrets out of core dumps.
 *
 * lc_secmem_nodump_process() marks the process non-dumpable
 * (prctl(PR_SET_DUMPABLE, 0)) first thing in main(), in the controller and
 * in every agent: a crash writes no core file (with the kernel's default
 * fs.suid_dumpable=0), and another process of the same non-root user can
 * no longer attach to it (ptrace: gdb -p, strace -p, gcore) or read its
 * memory, environment, descriptors or maps under /proc/PID, which the
 * kernel gives to root.  /proc/PID/status, cmdline, stat and comm stay
 * readable by everyone (lockholder.c needs no more).  The flag goes back
 * to 1 at execve(), so programs lanecp starts are not affected.
 *
 * lc_secmem_alloc() gives the holders of key material (the transfer key,
 * the TLS PSK, each stream's AEAD secret) pages of their own that are
 * marked MADV_DONTDUMP, so that even a dump made anyway (root's gcore,
 * fs.suid_dumpable=2) leaves them out.  Copies inside OpenSSL's own
 * objects (the AES key schedule, TLS secrets) and libssh2's channel
 * buffers live in those libraries' heap and cannot be marked.
 */
#ifndef LANECP_SECMEM_H
#define LANECP_SECMEM_H

#include <stddef.h>

/*
 * Mark this process non-dumpable.  Returns 0, or -LC_ERR_INTERNAL when
 * prctl() failed (the caller goes on: the marks are a hardening, not a
 * condition of copying).
 */
int lc_secmem_nodump_process(void);

/*
 * n zeroed bytes, alone on page-aligned anonymous pages marked
 * MADV_DONTDUMP; NULL when out of memory.  Free with lc_secmem_free(p, n)
 * (the same n), which wipes them first.  lc_secmem_free(NULL, n) is a
 * no-op.
 */
void *lc_secmem_alloc(size_t n);
void lc_secmem_free(void *p, size_t n);

#endif
