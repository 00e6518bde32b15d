/*
 * lanecp-agent: the agent alone, for pushing to a host without lanecp
 * (push.h).  It takes what `lanecp --agent` takes, through the same
 * parser (src/agent/agent_main.c), so that it serves as a forced command
 * too; it needs neither libssh2 nor the option table, and is linked
 * statically where the toolchain allows (LC_STATIC_AGENT).
 */
#include "agent.h"

int
main(int argc, char **argv)
{
	return lc_agent_main(argc, argv, "lanecp-agent");
}
