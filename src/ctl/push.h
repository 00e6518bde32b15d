/*
 * No remote install (issue 14): when the remote host has no lanecp on its
 * PATH, the controller brings its own agent over the SSH connection.
 *
 * The remote command is one /bin/sh script (lc_push_command()), run on the
 * agent's exec channel, so the common cases cost no more execs and no
 * more round trips than "lanecp --agent" did:
 *
 *   1. lanecp on the remote PATH: print "LANECP-BOOT path", exec it.
 *   2. Else the per-user cache ${XDG_CACHE_HOME:-$HOME/.cache}/lanecp/
 *      <version>-<sha256 prefix>/lanecp, if no other user can swap it:
 *      the base's real path and every parent owned by the user or root
 *      and not writable by group or others unless sticky; both cache
 *      directories (made 0700 if missing) the user's, not writable by
 *      group or others.  If the file, opened once, is the user's and its
 *      SHA-256 is the agent's: "LANECP-BOOT cached PATH", exec that
 *      descriptor (/proc/self/fd/3).  A cache that is not safe is not
 *      used: the script makes a private directory (mktemp -d, checked
 *      alike) for step 3, or says "LANECP-BOOT unsafe DIR" and exits.
 *   3. Else read and drop the controller's HELLO, and what it sent
 *      with it (a push's SINK_TARGET and LISTEN, endpoint.h "prime"):
 *      their length is on the command line; the controller sends them
 *      at once, for case 1 and 2 and for a forced command, which runs
 *      instead of the script,
 *      print "LANECP-BOOT push missing|changed SYSTEM MACHINE" (uname -s,
 *      uname -m), or "LANECP-BOOT push private SYSTEM MACHINE DIR" (DIR:
 *      what was not safe), and read a line.  The controller answers "go"
 *      and the agent's bytes when the system matches its build (it closes
 *      the channel otherwise); the script writes them to a temporary
 *      name, opens and checks that file as in 2, renames it (or, when
 *      private, removes the directory), says "LANECP-BOOT pushed PATH"
 *      and execs the descriptor (anything else: "LANECP-BOOT bad PATH").
 *
 * Only then does the agent's own output (HELLO) follow on the channel;
 * the controller sends nothing but its HELLO (and what went with it)
 * before the last BOOT line, and the same bytes again after a push.  Output that does not start with
 * "LANECP-BOOT " is the agent's own: sshd ran a forced command.
 */
#ifndef LANECP_PUSH_H
#define LANECP_PUSH_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* The script's rule for the cache, in messages */
#define LC_PUSH_SAFE "it and every parent must be the user's or root's " \
	"and not writable by group or others, unless sticky like /tmp"

#define LC_PUSH_AGENT_MAX (256u << 20)	/* bytes of an agent file */
#define LC_PUSH_LINE_MAX 1024		/* a BOOT line, with its path */
#define LC_PUSH_CMD_MAX 4096		/* the remote command */

struct lc_push_agent {
	char path[4096];	/* the local file pushed */
	uint8_t *data;
	size_t len;
	char sha256[65];	/* lowercase hex */
	char dir[96];		/* "<version>-<16 hex of sha256>" */
};

/*
 * The agent to push, loaded and hashed once per process: lanecp-agent
 * next to this executable, else in LC_LIBEXECDIR, else this executable
 * (/proc/self/exe) itself.  Returns 0 with *out, or -LC_ERR_IO.
 */
int lc_push_agent_get(const struct lc_push_agent **out, struct lc_err *e);

/*
 * The remote command for a push-capable start (see above), with
 * "--transfer ID" for the agent when transfer is a valid id, and
 * hello_len, the length of what the controller sends first (its HELLO
 * frame and the frames that go with it).
 * Returns 0 or -LC_ERR_TOOBIG.
 */
int lc_push_command(const struct lc_push_agent *a, const char *transfer,
    size_t hello_len, char *out, size_t outsz);

/*
 * "SYSTEM MACHINE" of this build in *out, as uname -s and uname -m print
 * them; the hidden setting LANECP_ARCH (settings.h) may pretend another,
 * so a test sees a push refused for a foreign system.  0, or
 * -LC_ERR_USAGE (e says why) when LANECP_ARCH is not of that form.
 */
int lc_push_local_arch(const char **out, struct lc_err *e);

#endif
