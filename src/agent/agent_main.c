/*
 * The agent program's command line, one parser for both entry points:
 * `lanecp --agent` (cmd/lanecp.c hands its argv over before its own option
 * table sees it) and `lanecp-agent` (cmd/lanecp-agent.c), so that what
 * one accepts the other does, a forced command included.
 */
#include "agent.h"
#include "aead.h"
#include "lockholder.h"
#include "log.h"
#include "parse.h"
#include "secmem.h"
#include "sink.h"
#include "source.h"
#include "tls.h"
#include "version.h"
#include "wire.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LC_AGENT_MAX_ARGS 64

static int
lc_agent_usage(const char *prog, const char *msg, const char *arg)
{
	fprintf(stderr, "%s: %s%s%s\nusage: %s --agent [--transfer ID] "
	    "[--restrict DIR] [--max-memory SIZE]\n", prog, msg,
	    arg != NULL ? ": " : "", arg != NULL ? arg : "", prog);
	return 2;
}

int
lc_agent_wanted(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--agent") == 0)
			return 1;
	return 0;
}

/*
 * Under a forced command (command="lanecp --agent --restrict DIR" in
 * authorized_keys) sshd runs that instead of the controller's command, so
 * our command line lacks its --transfer ID; the controller's command is
 * in SSH_ORIGINAL_COMMAND.  Run again with the id added, where a later
 * attempt's sink looks for it (lockholder.h).  Returns only if that is
 * not needed or fails (then the agent runs without an id).
 */
static void
lc_agent_adopt_transfer(int argc, char **argv)
{
	char id[LC_TRANSFER_HEX + 1], flag[] = "--transfer";
	char *av[LC_AGENT_MAX_ARGS + 3];
	const char *orig = getenv("SSH_ORIGINAL_COMMAND");

	if (orig == NULL || argc > LC_AGENT_MAX_ARGS ||
	    !lc_transfer_from_command(orig, id))
		return;
	memcpy(av, argv, (size_t)argc * sizeof(*av));
	av[argc] = flag;
	av[argc + 1] = id;
	av[argc + 2] = NULL;
	execv("/proc/self/exe", av);
}

/* The value of option NAME at argv[*i] ("--NAME VALUE" or "--NAME=VALUE"),
 * moving *i past it; NULL if argv[*i] is not that option.  *missing is
 * set when the option is there without a value. */
static const char *
lc_agent_optval(int argc, char **argv, int *i, const char *name,
    int *missing)
{
	const char *a = argv[*i];
	size_t n = strlen(name);

	if (strncmp(a, name, n) != 0)
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		*missing = 1;
		return NULL;
	}
	return argv[++*i];
}

int
lc_agent_settings(struct lc_err *e)
{
	uint64_t epoch;
	uint32_t runs, frame;
	int r;

	if ((r = lc_aead_epoch(&epoch, e)) != 0 ||
	    (r = lc_source_max_runs(&runs, e)) != 0 ||
	    (r = lc_sink_hash_frame(&frame, e)) != 0)
		return r;
	return 0;
}

int
lc_agent_main(int argc, char **argv, const char *prog)
{
	struct lc_agent_opts o = { .restrict_dir = NULL, .local = 0,
		.exit_deadline_ms = LC_AGENT_EXIT_DEADLINE_MS, .max_memory = 0,
		.transfer = NULL };
	struct lc_err e;
	int agent = 0;

	/* OpenSSL without its configuration file (tls.h): first, before
	   anything else can initialise it with one */
	if (lc_tls_init_agent() != 0) {
		fprintf(stderr, "%s: cannot initialise OpenSSL\n", prog);
		return 1;
	}
	/* no core dump, no ptrace by the same user: the transfer key (and
	   what is copied) stays in this process (secmem.h) */
	(void)lc_secmem_nodump_process();
	signal(SIGPIPE, SIG_IGN);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		int missing = 0;

		if (strcmp(a, "--agent") == 0) {
			agent = 1;
		} else if (strcmp(a, "--version") == 0 ||
		    strcmp(a, "-V") == 0) {
			printf("%s %s (protocol %u)\n", prog,
			    LC_VERSION_STRING, LC_PROTO_VERSION);
			return 0;
		} else if ((v = lc_agent_optval(argc, argv, &i, "--transfer",
		    &missing)) != NULL) {
			if (!lc_transfer_valid(v))
				return lc_agent_usage(prog, "--transfer: ID "
				    "must be lowercase hex digits", v);
			o.transfer = v;
		} else if ((v = lc_agent_optval(argc, argv, &i, "--restrict",
		    &missing)) != NULL) {
			if (v[0] == '\0')
				return lc_agent_usage(prog,
				    "--restrict: empty DIR", NULL);
			o.restrict_dir = v;
		} else if ((v = lc_agent_optval(argc, argv, &i,
		    "--max-memory", &missing)) != NULL) {
			if (lc_parse_size(v, LC_AGENT_MIN_MEMORY,
			    LC_AGENT_MAX_MEMORY, &o.max_memory) != 0)
				return lc_agent_usage(prog, "--max-memory: "
				    "must be a size from 32m to 64g", v);
		} else if (missing) {
			return lc_agent_usage(prog, "missing value", a);
		} else {
			return lc_agent_usage(prog, "unknown option", a);
		}
	}
	if (!agent)
		return lc_agent_usage(prog, "only runs as an agent (--agent)",
		    NULL);
	if (o.transfer == NULL)
		lc_agent_adopt_transfer(argc, argv);
	lc_log_init("agent", LC_LOG_WARN, 2);
	/* a value its controller may honour is never ignored (settings.h) */
	if (lc_agent_settings(&e) != 0) {
		lc_log_error("%s", e.msg);
		return 2;
	}
	return lc_agent_run(0, 1, &o) == 0 ? 0 : 1;
}
