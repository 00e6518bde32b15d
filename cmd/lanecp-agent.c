/*
 * lanecp-agent: the agent alone, for pushing to a host without lanecp
 * (push.h).  It takes what the controller's remote command gives
 * "lanecp --agent" (plus --restrict and --max-memory, so that it can
 * serve as a forced command too), needs neither libssh2 nor the option
 * table, and is linked statically where the toolchain allows
 * (LC_STATIC_AGENT).
 */
#include "agent.h"
#include "lockholder.h"
#include "log.h"
#include "parse.h"
#include "secmem.h"
#include "version.h"
#include "wire.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static int
lc_agent_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "lanecp-agent: %s%s%s\nusage: lanecp-agent --agent "
	    "[--transfer ID] [--restrict DIR] [--max-memory SIZE]\n", msg,
	    arg != NULL ? ": " : "", arg != NULL ? arg : "");
	return 2;
}

int
main(int argc, char **argv)
{
	struct lc_agent_opts o = { .restrict_dir = NULL, .local = 0,
		.exit_deadline_s = 1, .max_memory = 0, .transfer = NULL };
	int agent = 0;

	/* no core dump, no ptrace by the same user (secmem.h) */
	(void)lc_secmem_nodump_process();
	signal(SIGPIPE, SIG_IGN);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--agent") == 0)
			agent = 1;
		else if (strncmp(a, "--transfer=", 11) == 0) {
			if (!lc_transfer_valid(a + 11))
				return lc_agent_usage("--transfer: ID must be "
				    "lowercase hex digits", a + 11);
			o.transfer = a + 11;
		} else if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
			printf("lanecp-agent %s (protocol %u)\n",
			    LC_VERSION_STRING, LC_PROTO_VERSION);
			return 0;
		} else if (v == NULL && (strcmp(a, "--transfer") == 0 ||
		    strcmp(a, "--restrict") == 0 ||
		    strcmp(a, "--max-memory") == 0))
			return lc_agent_usage("missing value", a);
		else if (strcmp(a, "--transfer") == 0) {
			if (!lc_transfer_valid(v))
				return lc_agent_usage("--transfer: ID must be "
				    "lowercase hex digits", v);
			o.transfer = v;
			i++;
		} else if (strcmp(a, "--restrict") == 0) {
			if (v[0] == '\0')
				return lc_agent_usage("--restrict: empty DIR",
				    NULL);
			o.restrict_dir = v;
			i++;
		} else if (strcmp(a, "--max-memory") == 0) {
			if (lc_parse_size(v, LC_AGENT_MIN_MEMORY,
			    LC_AGENT_MAX_MEMORY, &o.max_memory) != 0)
				return lc_agent_usage("--max-memory: must be a "
				    "size from 32m to 64g", v);
			i++;
		} else
			return lc_agent_usage("unknown option", a);
	}
	if (!agent)
		return lc_agent_usage("only runs as an agent (--agent)", NULL);
	lc_log_init("agent", LC_LOG_WARN, 2);
	return lc_agent_run(0, 1, &o) == 0 ? 0 : 1;
}
