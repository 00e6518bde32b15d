/* Keeping secrets out of core dumps (secmem.h). */
#include "secmem.h"
#include "err.h"

#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <openssl/crypto.h>

int
lc_secmem_nodump_process(void)
{
	return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 ? 0 : -LC_ERR_INTERNAL;
}

/* n rounded up to whole pages; 0 if that overflows. */
static size_t
lc_secmem_span(size_t n)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t page = pg > 0 ? (size_t)pg : 4096;

	if (n == 0)
		n = 1;
	if (n > SIZE_MAX - (page - 1))
		return 0;
	return (n + page - 1) / page * page;
}

void *
lc_secmem_alloc(size_t n)
{
	size_t len = lc_secmem_span(n);
	void *p;

	if (len == 0)
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/*
	 * Best effort: a kernel without MADV_DONTDUMP (before 3.4) still
	 * gets the copy done, and the process is non-dumpable anyway.
	 */
	(void)madvise(p, len, MADV_DONTDUMP);
	return p;	/* anonymous pages come zeroed */
}

void
lc_secmem_free(void *p, size_t n)
{
	size_t len = lc_secmem_span(n);

	if (p == NULL || len == 0)
		return;
	OPENSSL_cleanse(p, len);
	(void)munmap(p, len);
}
