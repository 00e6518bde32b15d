/*
 * The option table's row (options.c) as the files of cmd/ that read the
 * table see it: the parser (options.c) and --help (usage.c).
 */
#ifndef LANECP_CMD_OPTIONS_INT_H
#define LANECP_CMD_OPTIONS_INT_H

#include "options.h"

#include <stddef.h>
#include <stdint.h>

typedef int (*lc_opt_set)(struct lc_cli *, const char *, struct lc_err *);

/*
 * What an option's argument is.  A number in a range is a row of the
 * table, not a function: its field, its range and its default are
 * columns, and one parser (lc_opt_number) checks it and words the error.
 */
enum lc_opt_kind {
	LC_OPT_FLAG, /* no argument: the int at off becomes 1 */
	LC_OPT_FUNC, /* set() does the work */
	LC_OPT_UINT, /* a number in [min, max] */
	LC_OPT_SIZE, /* a size with k/m/g/t suffixes in [min, max] */
	LC_OPT_MS,   /* seconds (fractions allowed), kept in ms */
	/*
	 * The agent's: `lanecp --agent ...` is handed to the agent's own
	 * parser (src/agent/agent_main.c) before this table is read, so
	 * here the row is only for --help, and a use without --agent is
	 * refused naming it (struct lc_cli.agent_only); the value is the
	 * agent's to check, not ours.
	 */
	LC_OPT_AGENT
};

struct lc_opt {
	const char *lname;
	int sname;
	const char *arg;  /* NULL: no argument */
	const char *help; /* for numbers "(default X)" is added */
	enum lc_opt_kind kind;
	lc_opt_set set;	   /* LC_OPT_FUNC */
	size_t off;	   /* LC_OPT_FLAG: an int in struct lc_cli;
				   numbers: the field (uint32_t or uint64_t) */
	size_t size;	   /* numbers: the field's size */
	uint64_t min, max; /* numbers: the range (LC_OPT_MS: in ms) */
	uint64_t dflt;	   /* numbers: the default (0: none) */
	const char *what;  /* numbers: what the value is, for errors */
	int optional;	   /* the argument may be left out (-c, -c9,
				   --compress=9): set gets NULL then */
};

#define LC_FLAG(field) \
	.kind = LC_OPT_FLAG, .off = offsetof(struct lc_cli, field)
#define LC_FUNC(fn) .kind = LC_OPT_FUNC, .set = (fn)
#define LC_NUM(k, field, lo, hi, def, name) \
	.kind = (k), .off = offsetof(struct lc_cli, field), \
	.size = sizeof(((struct lc_cli *)0)->field), .min = (lo), .max = (hi), \
	.dflt = (def), .what = (name)

/* The table, one row per option, in --help's order. */
extern const struct lc_opt lc_opts[];
extern const size_t lc_nopts;

/* A row's bound or default, as --help and the errors show it. */
void lc__opt_fmt(const struct lc_opt *o, uint64_t v, char *out, size_t outsz);

#endif
