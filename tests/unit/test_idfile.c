/*
 * idfile: /etc/passwd and /etc/group as the pushed agent reads them,
 * with the lines a hostile or broken file holds.
 */
#include "harness.h"

#include "idfile.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* lc_idfile_find over the text t: 1, 0 or -1 */
static int
find(const char *t, enum lc_idfile_kind k, const char *name, uint32_t id,
    struct lc_idfile_ent *ent)
{
	FILE *f = fmemopen((void *)(uintptr_t)t, strlen(t), "r");
	int r;

	LC_CHECK(f != NULL);
	r = lc_idfile_find(f, k, name, id, ent);
	fclose(f);
	return r;
}

static int
parses(enum lc_idfile_kind k, const char *line)
{
	struct lc_idfile_ent ent;

	return lc_idfile_parse(k, line, strlen(line), &ent);
}

LC_TEST(passwd_entries)
{
	const char *t =
	    "root:x:0:0:root:/root:/bin/bash\n"
	    "alice:x:1000:1001:Alice A,,,:/home/alice:/bin/sh\n"
	    "nohome:x:7:7:::\n"
	    "last:x:4294967294:3::/l:/bin/false"; /* no final newline */
	struct lc_idfile_ent e;

	LC_CHECK_EQ_I(find(t, LC_IDFILE_PASSWD, "alice", 0, &e), 1);
	LC_CHECK_EQ_U(e.id, 1000);
	LC_CHECK_EQ_U(e.gid, 1001);
	LC_CHECK_STR(e.name, "alice");
	LC_CHECK_STR(e.home, "/home/alice");
	LC_CHECK_EQ_I(find(t, LC_IDFILE_PASSWD, NULL, 0, &e), 1);
	LC_CHECK_STR(e.name, "root");
	LC_CHECK_STR(e.home, "/root");
	LC_CHECK_EQ_I(find(t, LC_IDFILE_PASSWD, "nohome", 0, &e), 1);
	LC_CHECK_STR(e.home, "");
	LC_CHECK_EQ_I(find(t, LC_IDFILE_PASSWD, NULL, 4294967294u, &e), 1);
	LC_CHECK_STR(e.name, "last");
	LC_CHECK_EQ_I(find(t, LC_IDFILE_PASSWD, "bob", 0, &e), 0);
	LC_CHECK_EQ_I(find(t, LC_IDFILE_PASSWD, NULL, 1, &e), 0);
	LC_CHECK_EQ_I(find(t, LC_IDFILE_PASSWD, "ali", 0, &e), 0);
	LC_CHECK_EQ_I(find("", LC_IDFILE_PASSWD, "root", 0, &e), 0);
}

LC_TEST(group_entries)
{
	const char *t = "root:x:0:\n"
			"staff:x:50:alice,bob\n"
			"empty:!:60:\n";
	struct lc_idfile_ent e;

	LC_CHECK_EQ_I(find(t, LC_IDFILE_GROUP, "staff", 0, &e), 1);
	LC_CHECK_EQ_U(e.id, 50);
	LC_CHECK_EQ_I(find(t, LC_IDFILE_GROUP, NULL, 60, &e), 1);
	LC_CHECK_STR(e.name, "empty");
	LC_CHECK_EQ_I(find(t, LC_IDFILE_GROUP, "alice", 0, &e), 0);
	/* a passwd line is not a group line, nor the other way round */
	LC_CHECK_EQ_I(parses(LC_IDFILE_GROUP, "root:x:0:0:root:/root:/bin/sh"),
	    0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, "root:x:0:"), 0);
}

LC_TEST(missing_and_extra_fields)
{
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, ""), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, "a"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, "a:x:1:1::/h"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, "a:x:1:1::/h:/sh:more"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, ":x:1:1::/h:/sh"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, "a:x::1::/h:/sh"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, "a:x:1:::/h:/sh"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_GROUP, "g:x:1"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_GROUP, "g:x::"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_GROUP, "g:x:1:a:b"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, "a:x:1:1::/h:/sh"), 1);
}

LC_TEST(hostile_ids)
{
	/* (uid_t)-1 is chown's "unchanged": never an id */
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, "a:x:4294967295:1::/:"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, "a:x:1:4294967295::/:"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, "a:x:4294967296:1::/:"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD,
			  "a:x:99999999999999999999:1::/:"),
	    0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD,
			  "a:x:18446744073709551617:1::/:"),
	    0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, "a:x:-1:1::/:"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, "a:x:+1:1::/:"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, "a:x: 1:1::/:"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, "a:x:1 :1::/:"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, "a:x:0x10:1::/:"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_GROUP, "g:x:00000000000:"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_GROUP, "g:x:0000000007:"), 1);
	LC_CHECK_EQ_I(parses(LC_IDFILE_GROUP, "g:x:4294967294:"), 1);
}

LC_TEST(hostile_names)
{
	char big[LC_IDFILE_NAME_MAX + 32];

	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, "+::::::"), 0); /* NIS */
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, "+bob:x:1:1::/:"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, "-bob:x:1:1::/:"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, "#a:x:1:1::/:"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, " a:x:1:1::/:"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, "a b:x:1:1::/:"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, "a\tb:x:1:1::/:"), 0);
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, "a\033[2J:x:1:1::/:"), 0);
	LC_CHECK_EQ_I(lc_idfile_parse(LC_IDFILE_PASSWD, "a\0b:x:1:1::/:", 12,
			  &(struct lc_idfile_ent){ 0 }),
	    0);
	LC_CHECK_EQ_I(lc_idfile_parse(LC_IDFILE_PASSWD, "ab:x:1:1::/\0:", 13,
			  &(struct lc_idfile_ent){ 0 }),
	    0);
	/* the longest name that fits, and one byte more */
	memset(big, 'n', sizeof(big));
	snprintf(big + LC_IDFILE_NAME_MAX - 1, 32, ":x:1:1::/:");
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, big), 1);
	memset(big, 'n', sizeof(big));
	snprintf(big + LC_IDFILE_NAME_MAX, 32, ":x:1:1::/:");
	LC_CHECK_EQ_I(parses(LC_IDFILE_PASSWD, big), 0);
}

LC_TEST(skipped_lines_do_not_stop_the_search)
{
	const char *t = "\n# a comment\n+::::::\n"
			"root:x:4294967295:0::/:\n" /* skipped, not a stop */
			"broken\n"
			"root:x:0:0:root:/root:/bin/sh\n";
	struct lc_idfile_ent e;

	LC_CHECK_EQ_I(find(t, LC_IDFILE_PASSWD, "root", 0, &e), 1);
	LC_CHECK_EQ_U(e.id, 0);
	LC_CHECK_STR(e.home, "/root");
}

LC_TEST(duplicates_first_wins)
{
	const char *t = "dup:x:5:5::/a:\n"
			"dup:x:6:6::/b:\n"
			"other:x:5:9::/c:\n";
	struct lc_idfile_ent e;

	LC_CHECK_EQ_I(find(t, LC_IDFILE_PASSWD, "dup", 0, &e), 1);
	LC_CHECK_EQ_U(e.id, 5);
	LC_CHECK_STR(e.home, "/a");
	LC_CHECK_EQ_I(find(t, LC_IDFILE_PASSWD, NULL, 5, &e), 1);
	LC_CHECK_STR(e.name, "dup");
	LC_CHECK_EQ_I(find(t, LC_IDFILE_PASSWD, NULL, 6, &e), 1);
	LC_CHECK_STR(e.home, "/b");
}

LC_TEST(long_lines)
{
	size_t members = 4 * LC_IDFILE_LINE_MAX, n = 0;
	char *t = malloc(members + 3 * LC_IDFILE_LINE_MAX);
	struct lc_idfile_ent e;

	LC_CHECK(t != NULL);
	/* a group with a member list far longer than what is read: its
	 * used fields come first, so it is found, and so is the next line */
	n += (size_t)sprintf(t + n, "big:x:77:");
	for (size_t i = 0; i < members; i++)
		t[n++] = i % 8 == 7 ? ',' : 'm';
	n += (size_t)sprintf(t + n, "\nafter:x:78:\n");
	/* a name longer than the part read: skipped, not taken cut */
	memset(t + n, 'p', LC_IDFILE_LINE_MAX + 10);
	n += LC_IDFILE_LINE_MAX + 10;
	n += (size_t)sprintf(t + n, ":x:79:\nlast:x:80:\n");
	t[n] = '\0';
	LC_CHECK_EQ_I(find(t, LC_IDFILE_GROUP, "big", 0, &e), 1);
	LC_CHECK_EQ_U(e.id, 77);
	LC_CHECK_EQ_I(find(t, LC_IDFILE_GROUP, NULL, 78, &e), 1);
	LC_CHECK_STR(e.name, "after");
	LC_CHECK_EQ_I(find(t, LC_IDFILE_GROUP, NULL, 79, &e), 0);
	LC_CHECK_EQ_I(find(t, LC_IDFILE_GROUP, "last", 0, &e), 1);
	/* a passwd line whose home is beyond what is read: skipped */
	n = (size_t)sprintf(t, "far:x:1:1:");
	memset(t + n, 'g', LC_IDFILE_LINE_MAX);
	n += LC_IDFILE_LINE_MAX;
	sprintf(t + n, ":/home/far:/bin/sh\nnear:x:2:2::/n:\n");
	LC_CHECK_EQ_I(find(t, LC_IDFILE_PASSWD, "far", 0, &e), 0);
	LC_CHECK_EQ_I(find(t, LC_IDFILE_PASSWD, "near", 0, &e), 1);
	free(t);
}

LC_TEST(read_error)
{
	struct lc_idfile_ent e;
	FILE *f = fopen("/", "r"); /* a directory: reading fails */

	if (f == NULL)
		LC_SKIP("cannot fopen / for reading");
	LC_CHECK_EQ_I(lc_idfile_find(f, LC_IDFILE_PASSWD, "root", 0, &e), -1);
	fclose(f);
}

LC_TEST_MAIN()
