/* The test hooks (testhook_ctl.h); built only with -DLC_TEST_HOOKS=ON. */
#include "testhook_ctl.h"
#include "log.h"
#include "parse.h"
#include "wire.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int
lc_testhook_proxy(const char *addr, uint16_t *ports, uint32_t n, pid_t *pid,
    struct lc_err *e)
{
	const char *prog = getenv("LANECP_TEST_PROXY");
	char *argv[LC_MAX_STREAMS + 3], portstr[LC_MAX_STREAMS][8];
	char line[LC_MAX_STREAMS * 7 + 2], *tok, *save = NULL;
	posix_spawn_file_actions_t fa;
	struct pollfd pfd;
	size_t got = 0;
	int p[2], r;

	*pid = -1;
	if (prog == NULL || *prog == '\0')
		return 0;
	if (n > LC_MAX_STREAMS || pipe(p) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "test proxy: pipe");
	argv[0] = (char *)(uintptr_t)prog;
	argv[1] = (char *)(uintptr_t)addr;
	for (uint32_t i = 0; i < n; i++) {
		snprintf(portstr[i], sizeof(portstr[i]), "%u",
		    (unsigned)ports[i]);
		argv[i + 2] = portstr[i];
	}
	argv[n + 2] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addclose(&fa, p[0]);
	r = posix_spawn(pid, prog, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (r != 0) {
		close(p[0]);
		*pid = -1;
		return lc_err_sys(e, LC_ERR_INTERNAL, r, "test proxy %s", prog);
	}
	pfd.fd = p[0];
	pfd.events = POLLIN;
	/* (generous: a test's program may first connect strangers to the
	   ports, and a loaded sanitizer build accepts them slowly) */
	while (got < sizeof(line) - 1 && memchr(line, '\n', got) == NULL) {
		ssize_t k;
		if (poll(&pfd, 1, 60000) <= 0)
			break;
		if ((k = read(p[0], line + got, sizeof(line) - 1 - got)) <= 0)
			break;
		got += (size_t)k;
	}
	close(p[0]);
	line[got] = '\0';
	tok = strtok_r(line, " \n", &save);
	for (uint32_t i = 0; i < n; i++, tok = strtok_r(NULL, " \n", &save)) {
		uint64_t v;
		if (tok == NULL || lc_parse_uint(tok, 1, 65535, &v) != 0)
			return lc_err_set(e, LC_ERR_INTERNAL,
			    "test proxy %s: bad port list", prog);
		ports[i] = (uint16_t)v;
	}
	lc_log_verbose("test hook: data streams go through %s", prog);
	return 0;
}

void
lc_testhook_proxy_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int
lc_testhook_allow_local(const struct lc_copy_opts *o)
{
	if (o->allow_local)
		lc_log_debug("test hook: both ends local (allow_local)");
	return o->allow_local;
}

uint32_t
lc_testhook_src_flags(uint32_t flags)
{
	const char *v = getenv("LANECP_TEST_OLD_SOURCE");

	if (v != NULL && strcmp(v, "noshard") == 0) {
		lc_log_verbose("test hook: the source is taken for one without "
			       "--shard");
		return flags & ~LC_HELLO_SHARD;
	}
	if (v != NULL && strcmp(v, "nofollow") == 0) {
		lc_log_verbose("test hook: the source is taken for one without "
			       "SRC_PART");
		return flags & ~LC_HELLO_FOLLOW;
	}
	if (v == NULL || strcmp(v, "1") != 0)
		return flags;
	lc_log_verbose("test hook: the source is taken for one without "
		       "FILE_HASHES");
	return flags & ~LC_HELLO_HASHES;
}

void
lc_testhook_shard_sent(uint32_t i, uint32_t n, char *buf, size_t sz)
{
	const char *v = getenv("LANECP_TEST_SHARD_SENT");

	if (v != NULL && v[0] != '\0') {
		lc_log_verbose("test hook: the source is asked for shard %s",
		    v);
		snprintf(buf, sz, "%s", v);
		return;
	}
	snprintf(buf, sz, "%u/%u", i + 1, n);
}

uint32_t
lc_testhook_dst_flags(uint32_t flags)
{
	const char *v = getenv("LANECP_TEST_OLD_SINK");

	if (v == NULL || strcmp(v, "1") != 0)
		return flags;
	lc_log_verbose("test hook: the sink is taken for one without "
		       "SINK_NOMORE or a count of files in flight");
	return flags & ~(LC_HELLO_NOMORE | LC_HELLO_COUNT_INFLIGHT);
}

int
lc_testhook_cli(int argc, char **argv)
{
	if (argc != 2 || strcmp(argv[1], "--test-hooks") != 0)
		return 0;
	printf("test hooks: on\n");
	return 1;
}
