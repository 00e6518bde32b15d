/*
 * lanecp's command line (options.c): what the options say, the option
 * table they come from, --help made from it, and the parser.  main() and
 * the exit codes are cmd/lanecp.c.
 */
#ifndef LANECP_CMD_OPTIONS_H
#define LANECP_CMD_OPTIONS_H

#include "copy.h"
#include "err.h"
#include "sshconf.h"

#include <stdint.h>
#include <stdio.h>

struct lc_cli {
	struct lc_copy_opts copy;
	int verbose;
	int quiet;
	/*
	 * The long name of the first option given that only the agent
	 * takes (--restrict, --max-memory, --transfer), or NULL: refused,
	 * since `lanecp --agent` never reaches this parser.
	 */
	const char *agent_only;
	/* -o "Keyword=value", in order (copy.ssh_options points here) */
	const char *ssh_options[LC_SSHCONF_OPTS_MAX];
	/* --also TARGET, in order (copy.also points here) */
	const char *also[LC_ALSO_MAX];
	/* --exclude, --include and their -from files, in order
	   (copy.filters points here once there is one) */
	struct lc_filters filters;
	int help;
	int version;
};

/*
 * c cleared, then the defaults: each number's from its table row, and
 * data stream encryption on.  Call before lc_parse_cli.
 */
void lc_cli_init(struct lc_cli *c);

/*
 * Parse argv's options into c (getopt_long on the table: argv is
 * permuted, operands last), then $LANECP_NO_PUSH.  *first_arg is the
 * index of the first operand.  Returns 0, or -LC_ERR_USAGE with e naming
 * the option and what is wrong with it (one line, no "see --help").
 */
int lc_parse_cli(int argc, char **argv, struct lc_cli *c, int *first_arg,
    struct lc_err *e);

/*
 * The -l FILE of a command line that failed to parse (it may come after
 * the bad option): the last one getopt finds, errors skipped; NULL if
 * none.  The result points into argv.
 */
const char *lc_find_log(int argc, char **argv);

/*
 * scp's habits (scp_habits.c), each 0 when the argument may mean what
 * lanecp does with it, else -LC_ERR_USAGE with e (when not NULL) naming
 * the scp meaning and lanecp's spelling of it: -l's all-digit name that
 * does not exist (scp's rate limit), the short -P's number from 1024 to
 * 65535 (scp's port), and the operand after a bare -c that names an SSH
 * cipher and no file (scp's -c CIPHER).
 */
int lc_scp_log_habit(const char *a, struct lc_err *e);
int lc_scp_port_habit(const char *a, struct lc_err *e);
int lc_scp_cipher_habit(const char *next, struct lc_err *e);

/* --help: usage, one line per table row, exit statuses, examples. */
void lc_usage(FILE *f);

#endif
