#include "harness.h"

#include "err.h"
#include "parse.h"
#include "sysinfo.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

LC_TEST(sizes)
{
	uint64_t v;

	LC_CHECK(lc_parse_size("256k", 1, UINT64_MAX, &v) == 0);
	LC_CHECK_EQ_U(v, 262144);
	LC_CHECK(lc_parse_size("256KB", 1, UINT64_MAX, &v) == 0);
	LC_CHECK_EQ_U(v, 262144);
	LC_CHECK(lc_parse_size("1m", 1, UINT64_MAX, &v) == 0);
	LC_CHECK_EQ_U(v, 1048576);
	LC_CHECK(lc_parse_size("2G", 1, UINT64_MAX, &v) == 0);
	LC_CHECK_EQ_U(v, 2147483648ULL);
	LC_CHECK(lc_parse_size("1t", 1, UINT64_MAX, &v) == 0);
	LC_CHECK_EQ_U(v, 1ULL << 40);
	LC_CHECK(lc_parse_size("4096", 1, UINT64_MAX, &v) == 0);
	LC_CHECK_EQ_U(v, 4096);
}

LC_TEST(bad_sizes)
{
	uint64_t v = 99;

	LC_CHECK(lc_parse_size("1x", 1, UINT64_MAX, &v) == -LC_ERR_USAGE);
	LC_CHECK_EQ_U(v, 0);
	LC_CHECK(lc_parse_size("", 1, UINT64_MAX, &v) == -LC_ERR_USAGE);
	LC_CHECK(lc_parse_size("k", 1, UINT64_MAX, &v) == -LC_ERR_USAGE);
	LC_CHECK(lc_parse_size("-1", 0, UINT64_MAX, &v) == -LC_ERR_USAGE);
	LC_CHECK(lc_parse_size(" 1", 0, UINT64_MAX, &v) == -LC_ERR_USAGE);
	LC_CHECK(lc_parse_size("1 ", 0, UINT64_MAX, &v) == -LC_ERR_USAGE);
	LC_CHECK(lc_parse_size("1kk", 0, UINT64_MAX, &v) == -LC_ERR_USAGE);
	LC_CHECK(lc_parse_size("1b", 0, UINT64_MAX, &v) == -LC_ERR_USAGE);
	LC_CHECK(lc_parse_size("0", 1, UINT64_MAX, &v) == -LC_ERR_TOOBIG);
	LC_CHECK(lc_parse_size("2g", 1, 1ULL << 30, &v) == -LC_ERR_TOOBIG);
	LC_CHECK(lc_parse_size("99999999999999999999", 0, UINT64_MAX, &v) ==
	    -LC_ERR_TOOBIG);
	LC_CHECK(lc_parse_size("17179869184g", 0, UINT64_MAX, &v) ==
	    -LC_ERR_TOOBIG);	/* 2^34 * 2^30 overflows */
	LC_CHECK(lc_parse_size(NULL, 0, UINT64_MAX, &v) == -LC_ERR_USAGE);
}

LC_TEST(uints)
{
	uint64_t v;

	LC_CHECK(lc_parse_uint("16", 1, 64, &v) == 0);
	LC_CHECK_EQ_U(v, 16);
	LC_CHECK(lc_parse_uint("0", 1, 64, &v) == -LC_ERR_TOOBIG);
	LC_CHECK(lc_parse_uint("100000", 1, 64, &v) == -LC_ERR_TOOBIG);
	LC_CHECK(lc_parse_uint("4k", 1, 64, &v) == -LC_ERR_USAGE);
	LC_CHECK(lc_parse_uint("+4", 1, 64, &v) == -LC_ERR_USAGE);
	LC_CHECK(lc_parse_uint("0x10", 0, 64, &v) == -LC_ERR_USAGE);
}

LC_TEST(seconds)
{
	uint64_t ms;

	LC_CHECK(lc_parse_seconds("2", 0, 100, &ms) == 0);
	LC_CHECK_EQ_U(ms, 2000);
	LC_CHECK(lc_parse_seconds("0.5", 0, 100, &ms) == 0);
	LC_CHECK_EQ_U(ms, 500);
	LC_CHECK(lc_parse_seconds("1.2345", 0, 100, &ms) == 0);
	LC_CHECK_EQ_U(ms, 1234);
	LC_CHECK(lc_parse_seconds("100", 0, 100, &ms) == 0);
	LC_CHECK(lc_parse_seconds("100.5", 0, 100, &ms) == -LC_ERR_TOOBIG);
	LC_CHECK(lc_parse_seconds("1.", 0, 100, &ms) == -LC_ERR_USAGE);
	LC_CHECK(lc_parse_seconds(".5", 0, 100, &ms) == -LC_ERR_USAGE);
	LC_CHECK(lc_parse_seconds("1s", 0, 100, &ms) == -LC_ERR_USAGE);
}

/* Counts in the summary line (issue 24): a comma every three digits. */
LC_TEST(counts)
{
	char b[32];

	LC_CHECK_STR(lc_fmt_count(b, sizeof(b), 0), "0");
	LC_CHECK_STR(lc_fmt_count(b, sizeof(b), 999), "999");
	LC_CHECK_STR(lc_fmt_count(b, sizeof(b), 1000), "1,000");
	LC_CHECK_STR(lc_fmt_count(b, sizeof(b), 21102), "21,102");
	LC_CHECK_STR(lc_fmt_count(b, sizeof(b), 4294967295u),
	    "4,294,967,295");
	LC_CHECK_STR(lc_fmt_count(b, 4, 21102), "21");	/* cut, terminated */
}

/* /proc files of one line of integers (tcp_rmem: "min default max") */
LC_TEST(proc_fields)
{
	char path[] = "/tmp/lanecp-sysinfo.XXXXXX";
	int fd = mkstemp(path);
	FILE *f;

	LC_CHECK(fd >= 0);
	LC_CHECK((f = fdopen(fd, "w")) != NULL);
	fputs("4096\t131072\t33554432\n", f);
	fclose(f);
	LC_CHECK_EQ_U(lc_proc_u64(path), 4096);
	LC_CHECK_EQ_U(lc_proc_u64_field(path, 0), 4096);
	LC_CHECK_EQ_U(lc_proc_u64_field(path, 1), 131072);
	LC_CHECK_EQ_U(lc_proc_u64_field(path, 2), 33554432);
	LC_CHECK_EQ_U(lc_proc_u64_field(path, 3), 0);	/* no fourth */
	unlink(path);
	LC_CHECK_EQ_U(lc_proc_u64_field(path, 2), 0);	/* gone */
}

LC_TEST_MAIN()
