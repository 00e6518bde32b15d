/*
 * The push script (push.h): its command's quoting, and the script itself
 * run by /bin/sh here (no sshd): a verified cached agent is exec'd with
 * the transfer id, a changed one is not, an unsafe cache is refused.
 */
#include "harness.h"

#include "lanecp/lockholder.h"
#include "lanecp/push.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ID "0123456789abcdef0123456789abcdef"

static const char lc_fake_agent[] = "#!/bin/sh\necho AGENT \"$@\"\n";

static void
lc_fake(struct lc_push_agent *a)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	memset(a, 0, sizeof(*a));
	a->data = (uint8_t *)(uintptr_t)lc_fake_agent;
	a->len = sizeof(lc_fake_agent) - 1;
	EVP_Digest(a->data, a->len, md, &n, EVP_sha256(), NULL);
	for (unsigned i = 0; i < 32; i++)
		snprintf(a->sha256 + 2 * i, 3, "%02x", md[i]);
	snprintf(a->dir, sizeof(a->dir), "9.9-%.16s", a->sha256);
}

/* Run the command as a login shell would, stdin empty; output in out. */
static int
lc_run(const char *cache, const char *cmd, char *out, size_t outsz)
{
	char line[LC_PUSH_CMD_MAX + 512];
	size_t got;
	FILE *p;

	snprintf(line, sizeof(line), "env -i PATH=/usr/bin:/bin HOME=/nonexistent "
	    "XDG_CACHE_HOME=%s /bin/sh -c \"$LC_CMD\" </dev/null 2>&1", cache);
	setenv("LC_CMD", cmd, 1);
	if ((p = popen(line, "r")) == NULL)
		return -1;
	got = fread(out, 1, outsz - 1, p);
	out[got] = '\0';
	return pclose(p);
}

LC_TEST(push_command_quoting)
{
	struct lc_push_agent a;
	char cmd[LC_PUSH_CMD_MAX], tail[256], got[LC_TRANSFER_HEX + 1];
	const char *q1, *q2;

	lc_fake(&a);
	LC_CHECK(lc_push_command(&a, ID, 77, cmd, sizeof(cmd)) == 0);
	/* the script is one single-quoted word: no quote, "!", backslash or
	   newline inside, for sh, csh and fish login shells */
	q1 = strchr(cmd, '\'');
	LC_CHECK(q1 != NULL);
	q2 = strchr(q1 + 1, '\'');
	LC_CHECK(q2 != NULL && strchr(q2 + 1, '\'') == NULL);
	LC_CHECK(strpbrk(cmd, "!\\\n") == NULL);
	/* a forced command's agent finds the id in SSH_ORIGINAL_COMMAND */
	LC_CHECK(lc_transfer_from_command(cmd, got) == 1);
	LC_CHECK_STR(got, ID);
	snprintf(tail, sizeof(tail), "' lanecp %s %s %zu --transfer=%s 77",
	    a.sha256,
	    a.dir, a.len, ID);
	LC_CHECK_STR(q2, tail);
	LC_CHECK(lc_push_command(&a, NULL, 77, cmd, sizeof(cmd)) == 0);
	LC_CHECK(strstr(cmd, " - 77") != NULL);
	LC_CHECK(lc_push_command(&a, ID, 77, cmd, 100) == -LC_ERR_TOOBIG);
}

LC_TEST(push_script_cache)
{
	struct lc_push_agent a;
	char tmpl[] = "/tmp/lc_push_XXXXXX", path[512], want[1024];
	char cmd[LC_PUSH_CMD_MAX], out[2048];
	FILE *f;

	if (access("/bin/sh", X_OK) != 0 || access("/usr/bin/sha256sum",
	    X_OK) != 0)
		LC_SKIP("no /bin/sh or sha256sum");
	lc_fake(&a);
	LC_CHECK(mkdtemp(tmpl) != NULL);
	LC_CHECK(lc_push_command(&a, ID, 0, cmd, sizeof(cmd)) == 0);

	/* nothing cached: it asks for a push (stdin is empty: it stops) */
	lc_run(tmpl, cmd, out, sizeof(out));
	LC_CHECK(strncmp(out, "LANECP-BOOT push missing ", 25) == 0);
	snprintf(path, sizeof(path), "%s/lanecp/%s", tmpl, a.dir);
	struct stat st;
	LC_CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0700);

	/* a verified cached agent runs with the agent's arguments */
	snprintf(path, sizeof(path), "%s/lanecp/%s/lanecp", tmpl, a.dir);
	LC_CHECK((f = fopen(path, "w")) != NULL);
	fputs(lc_fake_agent, f);
	fclose(f);
	LC_CHECK(chmod(path, 0700) == 0);
	lc_run(tmpl, cmd, out, sizeof(out));
	snprintf(want, sizeof(want), "LANECP-BOOT cached %s\nAGENT --agent "
	    "--transfer=%s\n", path, ID);
	LC_CHECK_STR(out, want);

	/* a changed one is not run */
	LC_CHECK((f = fopen(path, "a")) != NULL);
	fputs("echo EVIL\n", f);
	fclose(f);
	lc_run(tmpl, cmd, out, sizeof(out));
	LC_CHECK(strncmp(out, "LANECP-BOOT push changed ", 25) == 0);
	LC_CHECK(strstr(out, "EVIL") == NULL && strstr(out, "AGENT") == NULL);

	/* a cache writable by others is refused, nothing runs */
	snprintf(path, sizeof(path), "%s/lanecp", tmpl);
	LC_CHECK(chmod(path, 0707) == 0);
	lc_run(tmpl, cmd, out, sizeof(out));
	snprintf(want, sizeof(want), "LANECP-BOOT unsafe %s\n", path);
	LC_CHECK_STR(out, want);
	LC_CHECK(chmod(path, 0700) == 0);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl);
	LC_CHECK(system(cmd) == 0);
}

LC_TEST_MAIN()
