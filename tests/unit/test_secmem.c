/*
 * Keeping secrets out of core dumps (secmem.h): pages of their own,
 * zeroed, marked MADV_DONTDUMP and gone after lc_secmem_free(); and the
 * process marked non-dumpable.
 */
#include "harness.h"

#include "secmem.h"

#include <stdint.h>
#include <sys/prctl.h>

LC_TEST(secmem_pages_are_left_out_of_core_dumps)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t sizes[] = { 1, 32, (size_t)page, (size_t)page + 1 };

	LC_CHECK(page > 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint8_t *p = lc_secmem_alloc(sizes[i]);

		LC_CHECK(p != NULL);
		LC_CHECK((uintptr_t)p % (uintptr_t)page == 0);
		for (size_t k = 0; k < sizes[i]; k++)
			LC_CHECK(p[k] == 0);
		memset(p, 0x77, sizes[i]);
		LC_CHECK_EQ_I(lc_test_dontdump(p), 1);
		LC_CHECK_EQ_I(lc_test_dontdump(p + sizes[i] - 1), 1);
		lc_secmem_free(p, sizes[i]);
		LC_CHECK_EQ_I(lc_test_dontdump(p), -1);	/* unmapped */
	}
	lc_secmem_free(NULL, 32);
	/* ordinary heap memory is dumped: the check is not blind */
	{
		char *h = malloc(64);

		LC_CHECK(h != NULL);
		LC_CHECK_EQ_I(lc_test_dontdump(h), 0);
		free(h);
	}
}

LC_TEST(secmem_process_is_not_dumpable)
{
	struct stat st;

	LC_CHECK_EQ_I(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1);
	LC_CHECK_EQ_I(lc_secmem_nodump_process(), 0);
	LC_CHECK_EQ_I(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
	/* what others see: the kernel gives /proc/PID to root */
	LC_CHECK(stat("/proc/self/status", &st) == 0);
	LC_CHECK_EQ_U(st.st_uid, 0);
}

LC_TEST_MAIN()
