/*
 * lanecp: main(), the exit codes and the signals.  The option table and
 * its parser are options.c; all the work is in the core library.
 */
#include "options.h"
#include "agent.h"
#include "copy.h"
#include "err.h"
#include "log.h"
#include "runlog.h"
#include "testhook_ctl.h"
#include "secmem.h"
#include "wake.h"
#include "version.h"
#include "wire.h"

#include <libssh2.h>
#include <openssl/crypto.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* Exit status: documented in --help, man/lanecp.1 and README.md. */
enum lc_exit {
	LC_EXIT_OK = 0,
	LC_EXIT_INTERNAL = 1,
	LC_EXIT_USAGE = 2,
	LC_EXIT_SSH = 3,
	LC_EXIT_HOSTKEY = 4,
	LC_EXIT_LOCAL_IO = 5,
	LC_EXIT_REMOTE = 6,
	LC_EXIT_PROTO = 7,
	LC_EXIT_STREAM = 8,
	LC_EXIT_INTEGRITY = 9,
	LC_EXIT_NOSPACE = 10,
	LC_EXIT_TIMEOUT = 11,
	LC_EXIT_CHECKSUM = 12,
	LC_EXIT_NOAGENT = 13,	/* the remote lanecp cannot be run */
	LC_EXIT_PROGRAM = 14,	/* a -N program failed */
	LC_EXIT_PIPE = 15,	/* the reader of the output went away */
	LC_EXIT_PARTIAL = 23,	/* rsync's: some files failed */
};

static int
lc_exit_code(const struct lc_err *e)
{
	switch (e->code) {
	case LC_OK:
		return LC_EXIT_OK;
	case LC_ERR_USAGE:
	case LC_ERR_CONFIG:
		return LC_EXIT_USAGE;
	case LC_ERR_CONNECT:
	case LC_ERR_AUTH:
		return LC_EXIT_SSH;
	case LC_ERR_HOSTKEY:
		return LC_EXIT_HOSTKEY;
	case LC_ERR_IO:
	case LC_ERR_EXISTS:
	case LC_ERR_DENIED:
	case LC_ERR_LOCKED:
		return e->remote ? LC_EXIT_REMOTE : LC_EXIT_LOCAL_IO;
	case LC_ERR_AGENT:
	case LC_ERR_EOF:
		return LC_EXIT_REMOTE;
	case LC_ERR_PROTO:
	case LC_ERR_VERSION:
		return LC_EXIT_PROTO;
	case LC_ERR_STREAM:
	case LC_ERR_NOPATH:
		return LC_EXIT_STREAM;
	case LC_ERR_INTEGRITY:
		return LC_EXIT_INTEGRITY;
	case LC_ERR_NOSPACE:
		return LC_EXIT_NOSPACE;
	case LC_ERR_TIMEOUT:
		return LC_EXIT_TIMEOUT;
	case LC_ERR_CHECKSUM:
		return LC_EXIT_CHECKSUM;
	case LC_ERR_PARTIAL:
		return LC_EXIT_PARTIAL;
	case LC_ERR_NOAGENT:
		return LC_EXIT_NOAGENT;
	case LC_ERR_PROGRAM:
		return LC_EXIT_PROGRAM;
	case LC_ERR_PIPE:
		return LC_EXIT_PIPE;
	case LC_ERR_CANCELED:
		return 128 + (e->signo > 0 ? e->signo : SIGINT);
	default:
		return LC_EXIT_INTERNAL;
	}
}

static struct lc_wake lc_sigwake = { -1, -1 };

/*
 * A usage error: one line on stderr, the --json object, and with -l the
 * run log's start, error and result lines (cron sees why nothing ran).
 */
static int
lc_usage_fail(const struct lc_cli *c, struct lc_err *e)
{
	struct lc_copy_result res;
	struct lc_err le;
	int logfd = -1;

	memset(&res, 0, sizeof(res));
	lc_err_clear(&le);
	if (c->copy.log_path != NULL &&
	    lc_runlog_open(&c->copy, &logfd, &le) != 0)
		lc_log_error("%s", le.msg);
	lc_log_error("%s (see lanecp --help)", e->msg);
	if (c->copy.json)
		lc_copy_json(1, &c->copy, &res, e, LC_EXIT_USAGE);
	lc_runlog_close(logfd, &c->copy, -LC_ERR_USAGE, &res, e, LC_EXIT_USAGE);
	return LC_EXIT_USAGE;
}

/* The counts of all targets, for the -l log's result line. */
static void
lc_fanout_total(const struct lc_fanout_target *t, size_t n,
    struct lc_copy_result *all)
{
	memset(all, 0, sizeof(*all));
	for (size_t i = 0; i < n; i++) {
		all->files += t[i].res.files;
		all->updated += t[i].res.updated;
		all->bytes += t[i].res.bytes;
		all->sent += t[i].res.sent;
		all->resumed += t[i].res.resumed;
		all->skipped += t[i].res.skipped;
		all->nfailed += t[i].res.nfailed;
		all->attempts += t[i].res.attempts;
		all->ns += t[i].res.ns;
	}
}

/*
 * --also: each target in turn (fanout.c), a line for each on stderr and
 * in the -l log, the --json array; the exit status of them all.
 */
static int
lc_main_fanout(struct lc_cli *c)
{
	size_t n = c->copy.nalso + 1;
	struct lc_fanout_target *t = NULL;
	struct lc_copy_result all;
	struct lc_err e;
	int logfd = -1, r, status, canceled = 0;

	lc_err_clear(&e);
	memset(&all, 0, sizeof(all));
	/* a bad target fails before any is tried, as a usage error */
	if (lc_copy_fanout_check(&c->copy, &e) != 0)
		return lc_usage_fail(c, &e);
	if ((t = calloc(n, sizeof(*t))) == NULL) {
		lc_log_error("out of memory");
		return LC_EXIT_INTERNAL;
	}
	if ((r = lc_runlog_open(&c->copy, &logfd, &e)) == 0)
		r = lc_copy_fanout(&c->copy, lc_sigwake.rfd, t, &e);
	if (r == -LC_ERR_USAGE) {
		lc_runlog_close(logfd, &c->copy, r, &all, &e, LC_EXIT_USAGE);
		free(t);
		return lc_usage_fail(c, &e);
	}
	for (size_t i = 0; i < n; i++)
		t[i].status = lc_exit_code(&t[i].e);
	if (r == -LC_ERR_CANCELED)
		canceled = lc_exit_code(&e);
	status = lc_copy_fanout_status(t, n, canceled);
	lc_copy_fanout_report(1, &c->copy, t, n);
	lc_fanout_total(t, n, &all);
	lc_runlog_close(logfd, &c->copy, r, &all, &e, status);
	lc_copy_fanout_free(t, n);
	free(t);
	return status;
}

/* The command line, for the -l log. */
static void
lc_cmdline(int argc, char **argv, char *out, size_t outsz)
{
	size_t o = 0;

	out[0] = '\0';
	for (int i = 0; i < argc && o + 2 < outsz; i++)
		o += (size_t)snprintf(out + o, outsz - o, "%s%s", i ? " " : "",
		    argv[i]);
}

static void
lc_on_signal(int signo)
{
	unsigned char b = (unsigned char)signo;

	if (lc_sigwake.wfd >= 0 && write(lc_sigwake.wfd, &b, 1) < 0) {
		/* nothing to do in a handler */
	}
}

int
main(int argc, char **argv)
{
	struct lc_cli c;
	struct lc_copy_result res;
	struct lc_err e;
	char cmdline[2048];
	struct sigaction sa;
	int first = 0, logfd = -1, r, level;

	/* the agent has its own small command line, shared with
	   lanecp-agent (src/agent/agent_main.c) */
	if (lc_agent_wanted(argc, argv))
		return lc_agent_main(argc, argv, "lanecp");
	/* no core dump, no ptrace by the same user: the transfer key (and
	   what is copied) stays in this process (secmem.h) */
	(void)lc_secmem_nodump_process();
	lc_cli_init(&c);
	memset(&res, 0, sizeof(res));
	lc_err_clear(&e);
	signal(SIGPIPE, SIG_IGN);
	lc_log_init("lanecp", LC_LOG_INFO, 2);
	/* hidden: lets the tests ask whether the hooks are compiled in */
	if (lc_testhook_cli(argc, argv))
		return LC_EXIT_OK;
	/* before getopt permutes argv */
	lc_cmdline(argc, argv, cmdline, sizeof(cmdline));
	c.copy.cmdline = cmdline;
	if (lc_parse_cli(argc, argv, &c, &first, &e) != 0 ||
	    lc_copy_settings(&e) != 0) {
		c.copy.json = c.copy.json || c.copy.json_progress;
		if (c.copy.log_path == NULL)
			c.copy.log_path = lc_find_log(argc, argv);
		r = lc_usage_fail(&c, &e);
		lc_filters_free(&c.filters);
		return r;
	}
	/* the progress lines end with the summary */
	c.copy.json = c.copy.json || c.copy.json_progress;
	if (c.help || c.version || c.agent_only != NULL) {
		/* nothing is copied: the patterns are not needed */
		lc_filters_free(&c.filters);
		c.copy.filters = NULL;
	}
	if (c.help) {
		lc_usage(stdout);
		return LC_EXIT_OK;
	}
	if (c.version) {
		printf("lanecp %s (protocol %u)\nlibssh2 %s\n%s\nzlib %s\n",
		    LC_VERSION_STRING, LC_PROTO_VERSION, libssh2_version(0),
		    OpenSSL_version(OPENSSL_VERSION), zlibVersion());
		return LC_EXIT_OK;
	}
	if (c.agent_only != NULL) {
		lc_err_set(&e, LC_ERR_USAGE, "--%s only applies to --agent",
		    c.agent_only);
		return lc_usage_fail(&c, &e);
	}
	level = c.quiet ? LC_LOG_ERROR : LC_LOG_INFO + c.verbose;
	lc_log_set_level(level > LC_LOG_DEBUG ? LC_LOG_DEBUG : level);
	/* SRC... DST; lc_copy checks that both are there */
	if (argc - first >= 2) {
		c.copy.sources = (const char *const *)&argv[first];
		c.copy.nsources = (size_t)(argc - first - 1);
		c.copy.dest = argv[argc - 1];
	}
	c.copy.batch = !isatty(0);
	/* -q: errors only; -P: plain lines; else the live line on a tty */
	if (c.quiet)
		c.copy.progress_ms = 0;
	c.copy.live_progress = !c.quiet && c.copy.progress_ms == 0 &&
	    isatty(2);
	if (libssh2_init(0) != 0 || lc_wake_open(&lc_sigwake) != 0) {
		lc_log_error("initialization failed");
		return LC_EXIT_INTERNAL;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = lc_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	c.copy.print_sums = c.copy.print_sums && !c.copy.json;
	if (c.copy.nalso > 0) {
		r = lc_main_fanout(&c);
		libssh2_exit();
		lc_filters_free(&c.filters);
		return r;
	}
	if ((r = lc_runlog_open(&c.copy, &logfd, &e)) == 0)
		r = lc_copy(&c.copy, lc_sigwake.rfd, &res, &e);
	if (r != 0) {
		if (e.code == 0)
			lc_err_set(&e, -r, "%s", lc_strerror(r));
		lc_log_error("%s", e.msg);
	}
	/* never onto the data (lc_copy refused --json with target '-') */
	if (c.copy.json && !lc_copy_opts_stdout(&c.copy))
		lc_copy_json(1, &c.copy, &res, &e, lc_exit_code(&e));
	lc_runlog_close(logfd, &c.copy, r, &res, &e, lc_exit_code(&e));
	lc_copy_result_free(&res);
	libssh2_exit();
	lc_filters_free(&c.filters);
	return lc_exit_code(&e);
}
