/*
 * The copy: what cmd/lanecp.c asks for (struct lc_copy_opts), lc_copy()
 * and what it reports (struct lc_copy_result).  Behind it, the
 * controller, the lanecp the user ran.  It opens the two endpoints
 * (local agent thread and/or remote agents over SSH), negotiates streams,
 * window and block size, hands each endpoint its part, relays file
 * announcements between them and reports the outcome.  It never touches
 * file data.
 */
#ifndef LANECP_COPY_H
#define LANECP_COPY_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "checksum.h"
#include "err.h"
#include "filter.h"
#include "shard.h"
#include "lockholder.h"

/* How the data streams travel (-v and --json "path" name it). */
enum lc_path {
	LC_PATH_AUTO = 0,	/* direct, else the fallbacks (copy.c) */
	LC_PATH_DIRECT,		/* --direct: the source dials the sink */
	LC_PATH_REVERSE,	/* -z: the sink dials the source */
	LC_PATH_RELAY,		/* --relay: both dialled by the controller */
	LC_PATH_SSH,		/* --via-ssh: one SSH connection per stream */
};

/* "direct", "reverse", "relay", "ssh" (the --json names). */
const char *lc_path_name(int path);

/* The defaults of --timeout and --stream-timeout, in seconds. */
#define LC_TIMEOUT_DEFAULT_S 300u
#define LC_STALL_DEFAULT_S 30u

/* --also: at most this many targets beside the last argument. */
#define LC_ALSO_MAX 16

struct lc_feed;

struct lc_copy_opts {
	const char *const *sources;
	size_t nsources;
	const char *dest;
	/*
	 * --also TARGET: more targets, each copied as dest is (fanout.c,
	 * lc_copy_fanout); lc_copy and lc_copy_run never read these.
	 */
	const char *const *also;
	size_t nalso;		/* at most LC_ALSO_MAX */
	int also_direct;	/* --also-direct: every target from this
				   host (stage 1), not a chain of hops */
	/*
	 * internal (fanout.c), the overlapped chain: feed_in, this copy's
	 * sources are fed entry by entry as the target before makes them
	 * (controller_fed.c); feed_out, each entry made here is published
	 * for the next target's copy; login_mu (or NULL), held while this
	 * copy opens its endpoints when a login may ask on the terminal
	 * (the copies run at once).
	 */
	struct lc_feed *feed_in, *feed_out;
	pthread_mutex_t *login_mu;
	/*
	 * internal (fanout.c): made_log, a chain hop records there each name
	 * its sink took as new (a regular file at its FILE_READY: without
	 * -f or -u the sink takes only a name that is free) or made (any
	 * entry at its FILE_DONE); made, the target's copy from this host
	 * after that hop failed, run with skip_existing set for it, reads
	 * it: a file skipped as existing that is not in it is the target's
	 * own, refused as a copy without -f refuses it.
	 */
	struct lc_feed *made_log, *made;
	int hop;		/* internal (fanout.c): a chain hop between
				   two targets; the automatic data path
				   stops after reverse (the relay and via
				   SSH would carry it through this host) */
	/*
	 * internal (fanout.c): with --also, the target this copy is, target
	 * target_i of target_n (1-based): -n's lines start "target I of N
	 * NAME: " and --json-progress objects carry "target",
	 * "target_index" and "targets".  NULL without --also.
	 */
	const char *target_name;
	size_t target_i, target_n;
	uint32_t streams;	/* requested (-s) */
	uint32_t window;	/* -w, 0 = leave autotuning on */
	uint32_t block;		/* -B */
	uint32_t progress_ms;	/* -P: plain lines, 0 = off */
	int live_progress;	/* the live line on stderr (a terminal) */
	int json_progress;	/* --json-progress: a line on stdout a second */
	int json;		/* --json: the caller prints lc_copy_json's
				   summary on stdout at the end */
	uint64_t t_run;		/* internal (copy.c): when the run began, ns */
	int force;		/* -f */
	int encrypt;		/* data stream encryption */
	int no_fsync;
	const char *config_file;	/* -F */
	const char *identity_file;	/* -i */
	const char *jump;	/* -J LIST, "none", or NULL: ssh_config */
	const char *const *ssh_options;	/* -o "Keyword=value", in order */
	size_t n_ssh_options;
	const char *ssh_program;	/* -S, --ssh, LANECP_SSH: the OpenSSH
				   transport's program; NULL: libssh2 */
	const char *agent_cmd;	/* -T, default "lanecp" */
	int no_push;		/* never push the agent (push.h): 1
				   --no-push, 2 LANECP_NO_PUSH */
	int batch;		/* never prompt */
	int allow_local;	/* both ends local (loopback): honoured only
				   in test builds (testhook_ctl.h); the
				   layout is the same in every build */
	int resume;		/* -a: continue from a verified partial file */
	int csum_alg;		/* -e / -E: enum lc_csum_alg, 0: none */
	int print_sums;		/* -E: print "ALG value host:path" lines */
	char expect[LC_CSUM_TEXT_MAX];	/* -E ALG=VALUE, "" if none */
	uint64_t rate;		/* -x: bytes per second, 0: unlimited */
	uint32_t zlevel;	/* -c: deflate level 1..9, 0: no compression */
	uint32_t timeout_s;	/* --timeout: no progress this long fails
				   (LC_TIMEOUT_DEFAULT_S; 0: never) */
	uint32_t stall_s;	/* --stream-timeout: give up on one stream
				   (LC_STALL_DEFAULT_S; 0: never) */
	uint32_t retries;	/* --retries: extra attempts, resuming */
	int no_space_check;	/* --no-space-check */
	int recursive;		/* -r */
	int follow;		/* -L */
	int preserve;		/* -p */
	int update;		/* -u */
	int whole_file;		/* -W: -u sends a changed file whole, not
				   only the chunks that differ */
	int skip_existing;	/* -O */
	int owner;		/* --owner: owner and group, if root there */
	int numeric_ids;	/* --numeric-ids: by number, not by name */
	const struct lc_filters *filters;	/* --exclude, --include
				   (filter.h): NULL or none: everything */
	struct lc_shard shard;	/* --shard: n 0 (or 1), the whole tree */
	int dry_run;		/* -n: list what would change, change
				   nothing */
	int delete_extra;	/* --delete */
	int delete_excluded;	/* --delete-excluded: with --delete, the
				   excluded names at the target go too */
	int max_delete_set;	/* --max-delete given */
	uint64_t max_delete;	/* --max-delete N */
	int path;		/* enum lc_path: -z, --relay, --via-ssh, --direct */
	int prog_src;		/* -N i: the source names a program (its
				   stdout is the data) */
	int prog_dst;		/* -N o: the target names a program (its
				   stdin gets the data) */
	int path_stage;		/* internal (copy.c): LC_PATH_AUTO's fallbacks
				   tried so far */
	const char *path_why;	/* internal: why the last one failed */
	/*
	 * Internal (copy.c): an earlier attempt went over the OpenSSH client
	 * to this end by itself, and why (NULL: it did not).  A retry goes
	 * over ssh at once: libssh2 is not tried again, so no passphrase is
	 * asked for twice and no failed login is repeated.
	 */
	const char *ssh_why_src;
	const char *ssh_why_dst;
	const char *log_path;	/* -l FILE */
	const char *cmdline;	/* for the -l log */
	/*
	 * The transfer id given to every agent (lockholder.h): lc_copy makes
	 * one when this is "", the same for all attempts; lc_copy_run uses
	 * it as it is ("": the agents get none).
	 */
	char transfer[LC_TRANSFER_HEX + 1];
	/*
	 * The run's takeover key (takeover.h), sent to the sink in
	 * SINK_TARGET: lc_copy makes it with the id, secret, the same for all
	 * attempts; all zero: none (nothing can be taken over).
	 */
	uint8_t takeover[32];
};

/*
 * 1 if the copy reads or writes a pipe ("-" on either side, or -N): no
 * resume, one source, no retries (what was read cannot be read again).
 * o->dest must not be NULL.
 */
int lc_copy_opts_pipes(const struct lc_copy_opts *o);

/*
 * 1 if the target is this process's stdout ("-" without -N o): stdout
 * carries the data, and nothing else may be written there.
 */
int lc_copy_opts_stdout(const struct lc_copy_opts *o);

/*
 * Which options go together (copy_opts.c): the rules that need nothing
 * but o itself, no file and no host (a source and a target given; --json
 * not with stdout as the target; what goes with a pipe; -E ALG=HEX with
 * one file; --numeric-ids with --owner; not -u with -O).  lc_copy() runs
 * it once, before the first attempt.  0, or -LC_ERR_USAGE with e naming
 * the options.
 */
int lc_copy_opts_check(const struct lc_copy_opts *o, struct lc_err *e);

#define LC_RESULT_SUMS 16
#define LC_RESULT_FAILED 64	/* deleted names kept for --json */
/*
 * The failures named in --json: every one, each with its error, until
 * their text (names and errors, as they are, not yet escaped) would pass
 * this; the rest are counted only ("failed_names_truncated").  A name is
 * at most about 4.7 KiB and an error 1 KiB, so this holds at least 5,000
 * of the longest and some 300,000 of a tree's usual names.
 */
#define LC_RESULT_FAILED_BYTES (32u << 20)
#define LC_RESULT_FAILED_SHOWN 5	/* failures of one kind named on
					   stderr and in the log */
#define LC_RESULT_LIKE 8	/* kinds of failure counted apart */

struct lc_copy_result {
	uint64_t bytes;		/* bytes the sink wrote to the files, all
				   attempts (holes whole; see lanecp(1)) */
	uint64_t sent;		/* payload bytes sent, all attempts */
	uint64_t wire;		/* of those, DATA payload bytes on the wire
				   (less than sent when -c compressed some) */
	uint32_t zlevel;	/* -c level used, 0: none */
	uint64_t resumed;	/* bytes kept from partial files (the first
				   attempt's: what earlier runs left) */
	uint32_t files;		/* regular files written */
	uint32_t updated;	/* of those, replacing a file at the target
				   (-f, -u: "updated", the rest "copied";
				   0 with a sink from before issue 24's
				   counts, which does not say) */
	uint64_t updated_bytes;	/* the updated files' sizes */
	uint32_t entries;	/* files, directories and links done */
	uint32_t skipped;	/* -u / -O: left as they were */
	uint32_t nfailed;	/* files that could not be copied */
	uint32_t failed_kind[5];	/* of those, by enum lc_kind (0: a
					   name the listing could not read) */
	uint32_t nrefused;	/* of those, refused by the target's sink
				   (a file in the way, no permission, no
				   space; a deletion): the target's own */
	int ran;		/* the copy ran to its end, every entry
				   settled: its failures are per entry */
	uint32_t followed;	/* --also's chain: files its source read
				   from the target before's part files,
				   as that target wrote them */
	/*
	 * The failures by their text (the name taken off): the first
	 * LC_RESULT_FAILED_SHOWN of each are named, the rest only counted
	 * ("and N more like it"), so that 20,000 "file exists" make a few
	 * lines.  A text past the first LC_RESULT_LIKE is always named.
	 */
	uint32_t nlike;
	struct {
		char what[160];
		uint32_t n;
	} like[LC_RESULT_LIKE];
	uint32_t deleted;	/* --delete: entries deleted (-n: that
				   would be) */
	uint32_t dry_new;	/* -n: entries that would be made */
	uint32_t dry_update;	/* -n: entries that would be replaced */
	uint32_t dry_attrs;	/* -n -p/--owner: files -u would leave but
				   give their mode, times or owner */
	char deleted_list[LC_RESULT_FAILED][512];	/* the first
				   deleted (up to 64), a '/' after a
				   directory */
	uint64_t ns;		/* wall time of the run (lc_copy: from its
				   start to its end, all attempts) */
	uint64_t stalled_ms;	/* time data did not move (>= 3 s at a time,
				   all attempts, and between attempts) */
	uint64_t t_first_ms;	/* this attempt: when data first and last */
	uint64_t t_last_ms;	/* moved (lc_now_ms), 0 if it never did */
	uint32_t streams;
	uint32_t window;	/* effective, 0 = autotuned */
	uint32_t block;
	int encrypted;
	int path;		/* enum lc_path the data took (last attempt) */
	char path_why[200];	/* why that path, "" when asked for */
	int openssh;		/* an end went over the OpenSSH client */
	int path_stage;		/* internal (copy.c): the LC_PATH_AUTO stage
				   the last attempt took */
	char ssh_why_src[200];	/* why lanecp chose ssh for each end ("" */
	char ssh_why_dst[200];	/* when it did not, or --ssh asked for it) */
	uint32_t attempts;
	uint32_t nsums;		/* checksums of the files written (-e/-E) */
	struct {
		char path[512];
		char sum[LC_CSUM_TEXT_MAX];
	} sums[LC_RESULT_SUMS];
	/*
	 * The failures for --json: "host:path\0error\0" for each of the
	 * first failed_named of nfailed, on the heap (lc_copy_result_free),
	 * at most LC_RESULT_FAILED_BYTES; failed_truncated when some were
	 * left out for that bound (or for want of memory).
	 */
	char *failed_text;
	size_t failed_len;
	size_t failed_cap;
	uint32_t failed_named;
	int failed_truncated;
};

/*
 * Name one more failure for --json (report.c): where ("host:path") and
 * its error, kept while they fit in LC_RESULT_FAILED_BYTES.  nfailed is
 * the caller's to count.
 */
void lc_copy_result_failed(struct lc_copy_result *res, const char *where,
    const char *err);
/* The same within max bytes (at most LC_RESULT_FAILED_BYTES): a test's
   smaller bound. */
void lc_copy_result_failed_max(struct lc_copy_result *res, const char *where,
    const char *err, size_t max);

/* Free what res holds on the heap (its failures); res is then empty of
   them.  Safe on a result lc_copy never filled (zeroed). */
void lc_copy_result_free(struct lc_copy_result *res);

/*
 * Run one copy: one attempt, with o as lc_copy_opts_check accepts it
 * (lc_copy checks; no source or no target is an internal error here).
 * signal_fd (or -1) is polled; a byte on it is a signal
 * number and cancels the copy (-LC_ERR_CANCELED, e->signo set).  Returns 0
 * or -LC_ERR_*; e says what and e->remote where.
 */
int lc_copy_run(const struct lc_copy_opts *o, int signal_fd,
    struct lc_copy_result *res, struct lc_err *e);

/*
 * Read every hidden setting the controller holds (settings.h), its
 * in-process agents' too (lc_agent_settings): LANECP_AEAD_EPOCH,
 * LANECP_MAX_RUNS, LANECP_GRACE_S, LANECP_TRANSFER, LANECP_ARCH, so that
 * a bad one is refused before anything starts.  0, or -LC_ERR_USAGE (e
 * names the variable).
 */
int lc_copy_settings(struct lc_err *e);

/*
 * lc_copy_run with --retries: after a transient failure (connection,
 * agent or stream lost, stall, integrity or checksum failure) it waits
 * (1, 2, 4 ... 60 s) and tries again with resume on, up to o->retries
 * more times.  Checks the options first (lc_copy_opts_check), once.
 * Same contract as lc_copy_run.
 */
int lc_copy(const struct lc_copy_opts *o, int signal_fd,
    struct lc_copy_result *res, struct lc_err *e);

/*
 * Write the --json summary (report.c): one object and a newline.
 * exit_status is what the process will exit with; e is NULL or clear on
 * success.
 */
void lc_copy_json(int fd, const struct lc_copy_opts *o,
    const struct lc_copy_result *res, const struct lc_err *e,
    int exit_status);

/*
 * The summary's counts (report.c), one text for the summary line and the
 * -l log's result line: "copied 12 files, updated 3, 3145728 bytes (3.0
 * MiB), skipped 21,102 up to date, failed 0" (updated with -u or -f or
 * when some were, skipped with -u or -O or when some were).
 */
void lc_copy_summary(const struct lc_copy_opts *o,
    const struct lc_copy_result *res, char *out, size_t outsz);

struct lc_fanout_target;
/*
 * The same object with "target", "from" and "from_why" first (fanout.c's
 * array: t's dest, where its data came from: "this host" or the target
 * before it, and why from this host); t NULL: exactly lc_copy_json's.
 * sep is written before it ("" or ","), end after it ("\n" for
 * lc_copy_json).
 */
void lc_copy_json_one(int fd, const struct lc_copy_opts *o,
    const struct lc_copy_result *res, const struct lc_err *e,
    int exit_status, const struct lc_fanout_target *t, const char *sep,
    const char *end);

/*
 * Fan-out (--also, fanout.c): one source to several targets, each an
 * ordinary copy (lc_copy with that target as dest: its own SSH
 * connection, agents, stream keys and checks), one after the other, in
 * the order dest, also[0], also[1]...  A target that fails does not stop
 * the next; a signal does (the targets after it are not started).
 */
struct lc_fanout_target {
	const char *dest;	/* the target as written */
	int started;		/* its copy was tried */
	int r;			/* lc_copy's return (0, -LC_ERR_*);
				   -LC_ERR_CANCELED when not started */
	int status;		/* the exit status of r: the caller's to set
				   (cmd/lanecp.c), for the report */
	const char *from;	/* its data came from this target (a chain
				   hop), NULL: from this host */
	char from_why[240];	/* why from this host where the chain would
				   have taken a target's copy; "" */
	struct lc_err e;
	struct lc_copy_result res;
};

/*
 * What --also allows (before any target is tried): the rules of
 * lc_copy_opts_check for each target, every target parsed and remote,
 * no target given twice, sources local files (no pipe, no -N, no
 * remote source, no --relay), at most LC_ALSO_MAX --also.  0, or
 * -LC_ERR_USAGE with e naming the target or the option.
 */
int lc_copy_fanout_check(const struct lc_copy_opts *o, struct lc_err *e);

/*
 * Run the fan-out: t has 1 + o->nalso entries, filled here (each
 * target's result is the caller's to free: lc_copy_fanout_free).
 * Returns 0 when every target is complete, -LC_ERR_PARTIAL when some are
 * not (each t[i] says why), -LC_ERR_USAGE from lc_copy_fanout_check (no
 * target tried), -LC_ERR_CANCELED after a signal (e->signo set).  e is
 * the run's error: set when the return is not 0.
 */
int lc_copy_fanout(const struct lc_copy_opts *o, int signal_fd,
    struct lc_fanout_target *t, struct lc_err *e);

/*
 * A chain hop's sources (fanout.c): what target (as written) holds of
 * o's sources after its copy, as remote operands of target's host, the
 * same relative names: "host:DIR/NAME" for a source NAME (-r, several
 * sources, or a DIR/ target), "host:DIR/" for a source "NAME/" (-r: its
 * contents; then "host:DIR/" alone: it holds the others' copies too),
 * each once.  0, or -1 with why ("one file to a name that may
 * be a file or a directory there"...): the caller copies from this host.
 * h is the caller's to free (lc_copy_fanout_hop_free) after 0.
 */
struct lc_fanout_hop {
	char **src;
	size_t n;
};
int lc_copy_fanout_hop_sources(const struct lc_copy_opts *o,
    const char *target, struct lc_fanout_hop *h, char *why, size_t whysz);
void lc_copy_fanout_hop_free(struct lc_fanout_hop *h);

/*
 * The exit status of a fan-out whose targets' statuses are set: 0 when
 * all are 0; the one status when every target ended with it; else 23
 * (LC_EXIT_PARTIAL: some target is incomplete).  canceled_status, when
 * not 0, wins (a signal).
 */
int lc_copy_fanout_status(const struct lc_fanout_target *t, size_t n,
    int canceled_status);

/*
 * The report of a fan-out: one line per target on stderr ("target 2 of
 * 3 host:/d/: ok, copied ..." at info, a failure at error level) and in
 * the -l log, and with o->json the --json array on fd (one object per
 * target in order, each lc_copy_json's with "target" first).
 */
void lc_copy_fanout_report(int fd, const struct lc_copy_opts *o,
    const struct lc_fanout_target *t, size_t n);

/* Free what each of the n targets' results holds. */
void lc_copy_fanout_free(struct lc_fanout_target *t, size_t n);

/* One --json-progress line (report.c). */
struct lc_json_progress {
	uint64_t elapsed_ns;	/* since the run began */
	uint64_t bytes;		/* of the files, in place (resumed too) */
	uint64_t total;		/* of the files listed so far */
	int total_final;	/* every source listed */
	uint64_t rate;		/* bytes/s since the line before */
	uint32_t files;		/* entries done, of files_total listed */
	uint32_t files_total;
	uint32_t streams;	/* data streams (0 until they connect) */
	const char *target;	/* --also: the target (as written), else
				   NULL (no target members) */
	size_t target_i, target_n;	/* it is target i of n (1-based) */
};
void lc_json_progress(int fd, const struct lc_json_progress *p);

#endif
