/*
 * lanecp's command line: the option table (one row per option; --help,
 * getopt's tables, the defaults and the range checks all come from it)
 * and its parser.  --help is usage.c, main() is cmd/lanecp.c.
 */
#include "options.h"
#include "err.h"
#include "parse.h"
#include "shard.h"
#include "wire.h"

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options_int.h"

static int
lc_opt_verbose(struct lc_cli *c, const char *a, struct lc_err *e)
{
	(void)a;
	(void)e;
	c->verbose++;
	return 0;
}

static int
lc_opt_config(struct lc_cli *c, const char *a, struct lc_err *e)
{
	(void)e;
	c->copy.config_file = a;
	return 0;
}

static int
lc_opt_identity(struct lc_cli *c, const char *a, struct lc_err *e)
{
	(void)e;
	c->copy.identity_file = a;
	return 0;
}

static int
lc_opt_jump(struct lc_cli *c, const char *a, struct lc_err *e)
{
	if (a[0] == '\0' || strlen(a) > 4096)
		return lc_err_set(e, LC_ERR_USAGE, "-J: bad jump host list");
	c->copy.jump = a;
	return 0;
}

/*
 * -o Keyword=value (or "Keyword value"), as ssh -o; checked against the
 * ssh_config keywords lanecp knows once the whole command line is read
 * (lc_ssh_opts_check: with --ssh, the ssh program judges them).
 */
static int
lc_opt_ssh_option(struct lc_cli *c, const char *a, struct lc_err *e)
{
	if (a[0] == '\0' || strlen(a) > 4096 || strchr(a, '\n') != NULL)
		return lc_err_set(e, LC_ERR_USAGE, "-o: bad ssh option");
	if (c->copy.n_ssh_options >= LC_SSHCONF_OPTS_MAX)
		return lc_err_set(e, LC_ERR_USAGE, "more than %d -o options",
		    LC_SSHCONF_OPTS_MAX);
	c->ssh_options[c->copy.n_ssh_options++] = a;
	c->copy.ssh_options = c->ssh_options;
	return 0;
}

/*
 * Each -o against lanecp's ssh_config reader, unless the OpenSSH client
 * carries every connection (--ssh, LANECP_SSH): then ssh takes what it
 * knows and refuses the rest itself.
 */
static int
lc_ssh_opts_check(const struct lc_cli *c, struct lc_err *e)
{
	int r;

	if (c->copy.ssh_program != NULL)
		return 0;
	for (size_t i = 0; i < c->copy.n_ssh_options; i++)
		if ((r = lc_sshconf_check_option(c->ssh_options[i], e)) != 0)
			return r;
	return 0;
}

static int
lc_opt_agent_cmd(struct lc_cli *c, const char *a, struct lc_err *e)
{
	if (a[0] == '\0' || strlen(a) > 1024)
		return lc_err_set(e, LC_ERR_USAGE, "-T: bad program name");
	c->copy.agent_cmd = a;
	return 0;
}

static int
lc_opt_ssh(struct lc_cli *c, const char *a, struct lc_err *e)
{
	if (a != NULL && (a[0] == '\0' || a[0] == '-' || strlen(a) > 4096))
		return lc_err_set(e, LC_ERR_USAGE,
		    "--ssh: bad program name '%.64s'", a);
	c->copy.ssh_program = a != NULL ? a : "ssh";
	return 0;
}

/* LANECP_SSH=PROGRAM (for cron): --ssh=PROGRAM unless the command line
 * chose; empty: not set. */
static int
lc_env_ssh(struct lc_cli *c, struct lc_err *e)
{
	const char *v = getenv("LANECP_SSH");

	if (v == NULL || v[0] == '\0' || c->copy.ssh_program != NULL)
		return 0;
	if (v[0] == '-' || strlen(v) > 4096)
		return lc_err_set(e, LC_ERR_USAGE,
		    "LANECP_SSH=%.64s: want the ssh program, e.g. ssh", v);
	c->copy.ssh_program = v;
	return 0;
}

static int
lc_opt_no_push(struct lc_cli *c, const char *a, struct lc_err *e)
{
	(void)a;
	(void)e;
	c->copy.no_push = 1;
	return 0;
}

/* LANECP_NO_PUSH=1 (or yes, true): as --no-push; 0, no, false or empty:
 * off. */
static int
lc_env_no_push(struct lc_cli *c, struct lc_err *e)
{
	const char *v = getenv("LANECP_NO_PUSH");

	if (v == NULL || v[0] == '\0' || strcmp(v, "0") == 0 ||
	    strcmp(v, "no") == 0 || strcmp(v, "false") == 0)
		return 0;
	if (strcmp(v, "1") != 0 && strcmp(v, "yes") != 0 &&
	    strcmp(v, "true") != 0)
		return lc_err_set(e, LC_ERR_USAGE,
		    "LANECP_NO_PUSH=%.32s: want "
		    "1 (do not push the agent) or 0",
		    v);
	if (c->copy.no_push == 0)
		c->copy.no_push = 2;
	return 0;
}

static int
lc_opt_no_encrypt(struct lc_cli *c, const char *a, struct lc_err *e)
{
	(void)a;
	(void)e;
	c->copy.encrypt = 0;
	return 0;
}

static int
lc_opt_check(struct lc_cli *c, const char *a, struct lc_err *e)
{
	(void)a;
	(void)e;
	if (c->copy.csum_alg == LC_CSUM_NONE)
		c->copy.csum_alg = LC_CSUM_SHA256;
	return 0;
}

static int
lc_opt_checksum(struct lc_cli *c, const char *a, struct lc_err *e)
{
	if (lc_csum_parse_arg(a, &c->copy.csum_alg, c->copy.expect) != 0)
		return lc_err_set(e, LC_ERR_USAGE,
		    "-E %s: want sha256, crc32 "
		    "or adler32, optionally =HEX (64 or 8 hex digits)",
		    a);
	c->copy.print_sums = 1;
	return 0;
}

/* -c alone: level 1, the fast one; -cN / --compress=N: N in 1..9. */
static int
lc_opt_compress(struct lc_cli *c, const char *a, struct lc_err *e)
{
	uint64_t v = 1;

	if (a != NULL && lc_parse_uint(a, 1, LC_ZLEVEL_MAX, &v) != 0)
		return lc_err_set(e, LC_ERR_USAGE,
		    "-c %.*s: compression level "
		    "must be a number from 1 to %u (as -c%u or --compress=%u)",
		    64, a, LC_ZLEVEL_MAX, LC_ZLEVEL_MAX, LC_ZLEVEL_MAX);
	c->copy.zlevel = (uint32_t)v;
	return 0;
}

/* --exclude, --include and their -from files: in the user's order. */
static int
lc_opt_filter(struct lc_cli *c, int kind, int from, const char *a,
    struct lc_err *e)
{
	int r = from ? lc_filters_read(&c->filters, kind, a, e)
		     : lc_filters_add(&c->filters, kind, a, e);

	if (r == 0)
		c->copy.filters = &c->filters;
	return r;
}

static int
lc_opt_exclude(struct lc_cli *c, const char *a, struct lc_err *e)
{
	return lc_opt_filter(c, LC_FILTER_EXCLUDE, 0, a, e);
}

static int
lc_opt_include(struct lc_cli *c, const char *a, struct lc_err *e)
{
	return lc_opt_filter(c, LC_FILTER_INCLUDE, 0, a, e);
}

static int
lc_opt_exclude_from(struct lc_cli *c, const char *a, struct lc_err *e)
{
	return lc_opt_filter(c, LC_FILTER_EXCLUDE, 1, a, e);
}

static int
lc_opt_include_from(struct lc_cli *c, const char *a, struct lc_err *e)
{
	return lc_opt_filter(c, LC_FILTER_INCLUDE, 1, a, e);
}

/* --shard I/N, auto, auto/N (shard.h) */
static int
lc_opt_shard(struct lc_cli *c, const char *a, struct lc_err *e)
{
	struct lc_shard_env env = {
		.slurm_id = getenv("SLURM_ARRAY_TASK_ID"),
		.slurm_count = getenv("SLURM_ARRAY_TASK_COUNT"),
		.slurm_min = getenv("SLURM_ARRAY_TASK_MIN"),
		.k8s_index = getenv("JOB_COMPLETION_INDEX"),
		.count = getenv("LANECP_SHARD_COUNT"),
	};

	if (strcmp(a, "auto") == 0 || strncmp(a, "auto/", 5) == 0)
		return lc_shard_auto(a, &env, &c->copy.shard, e);
	return lc_shard_parse(a, "--shard", &c->copy.shard, e);
}

/* rsync's meaning: it implies --delete */
static int
lc_opt_delete_excluded(struct lc_cli *c, const char *a, struct lc_err *e)
{
	(void)a, (void)e;
	c->copy.delete_extra = 1;
	c->copy.delete_excluded = 1;
	return 0;
}

static int
lc_opt_max_delete(struct lc_cli *c, const char *a, struct lc_err *e)
{
	uint64_t v;

	if (lc_parse_uint(a, 0, UINT32_MAX, &v) != 0)
		return lc_err_set(e, LC_ERR_USAGE,
		    "--max-delete %.32s: want "
		    "a number of entries, 0 to %u",
		    a, UINT32_MAX);
	c->copy.max_delete = v;
	c->copy.max_delete_set = 1;
	return 0;
}

/* --also TARGET: one more target (parsed with the rest: fanout.c). */
static int
lc_opt_also(struct lc_cli *c, const char *a, struct lc_err *e)
{
	if (a[0] == '\0')
		return lc_err_set(e, LC_ERR_USAGE, "--also: an empty target");
	if (strlen(a) > 4096)
		return lc_err_set(e, LC_ERR_USAGE, "--also %.40s...: too long",
		    a);
	if (c->copy.nalso >= LC_ALSO_MAX)
		return lc_err_set(e, LC_ERR_USAGE,
		    "more than %d --also targets", LC_ALSO_MAX);
	c->also[c->copy.nalso++] = a;
	c->copy.also = c->also;
	return 0;
}

/* -z, --relay, --via-ssh, --direct: one data path, not two. */
static int
lc_opt_path(struct lc_cli *c, int path, struct lc_err *e)
{
	static const char *const flag[] = { "", "--direct", "-z", "--relay",
		"--via-ssh" };

	if (c->copy.path != LC_PATH_AUTO && c->copy.path != path)
		return lc_err_set(e, LC_ERR_USAGE,
		    "%s and %s choose different "
		    "data paths: give one of them",
		    flag[c->copy.path], flag[path]);
	c->copy.path = path;
	return 0;
}

static int
lc_opt_reverse(struct lc_cli *c, const char *a, struct lc_err *e)
{
	(void)a;
	return lc_opt_path(c, LC_PATH_REVERSE, e);
}

static int
lc_opt_relay(struct lc_cli *c, const char *a, struct lc_err *e)
{
	(void)a;
	return lc_opt_path(c, LC_PATH_RELAY, e);
}

static int
lc_opt_via_ssh(struct lc_cli *c, const char *a, struct lc_err *e)
{
	(void)a;
	return lc_opt_path(c, LC_PATH_SSH, e);
}

static int
lc_opt_direct(struct lc_cli *c, const char *a, struct lc_err *e)
{
	(void)a;
	return lc_opt_path(c, LC_PATH_DIRECT, e);
}

static int
lc_opt_log(struct lc_cli *c, const char *a, struct lc_err *e)
{
	int r;

	if (a[0] == '\0')
		return lc_err_set(e, LC_ERR_USAGE, "-l: empty file name");
	if ((r = lc_scp_log_habit(a, e)) != 0)
		return r;
	c->copy.log_path = a;
	return 0;
}

/* -N i, o or io: which side names a program (bbcp's -N). */
static int
lc_opt_programs(struct lc_cli *c, const char *a, struct lc_err *e)
{
	if (strcmp(a, "i") != 0 && strcmp(a, "o") != 0 &&
	    strcmp(a, "io") != 0 && strcmp(a, "oi") != 0)
		return lc_err_set(e, LC_ERR_USAGE,
		    "-N %.16s: want i (the "
		    "source is a program), o (the target is) or io",
		    a);
	c->copy.prog_src = strchr(a, 'i') != NULL;
	c->copy.prog_dst = strchr(a, 'o') != NULL;
	return 0;
}

/* A size bound as a user writes it: 4096 -> "4k", 1 << 30 -> "1g". */
static void
lc_opt_fmt_size(uint64_t v, char *out, size_t outsz)
{
	static const char sfx[] = "kmgt";
	int i = -1;

	while (i < 3 && v >= 1024 && v % 1024 == 0) {
		v /= 1024;
		i++;
	}
	snprintf(out, outsz, "%llu%.*s", (unsigned long long)v, i >= 0,
	    i >= 0 ? &sfx[i] : "");
}

/* A row's bound or default, as --help and the errors show it. */
void
lc__opt_fmt(const struct lc_opt *o, uint64_t v, char *out, size_t outsz)
{
	if (o->kind == LC_OPT_SIZE)
		lc_opt_fmt_size(v, out, outsz);
	else if (o->kind == LC_OPT_MS && v % 1000 != 0)
		snprintf(out, outsz, "%llu.%03llu",
		    (unsigned long long)(v / 1000),
		    (unsigned long long)(v % 1000));
	else
		snprintf(out, outsz, "%llu",
		    (unsigned long long)(o->kind == LC_OPT_MS ? v / 1000 : v));
	if (o->kind == LC_OPT_MS && strchr(out, '.') != NULL) {
		size_t n = strlen(out);
		while (out[n - 1] == '0')
			out[--n] = '\0';
	}
}

/* Store v in the row's field (uint32_t or uint64_t). */
static void
lc_opt_store(struct lc_cli *c, const struct lc_opt *o, uint64_t v)
{
	char *p = (char *)c + o->off;

	if (o->size == sizeof(uint32_t)) {
		uint32_t v32 = (uint32_t)v;
		memcpy(p, &v32, sizeof(v32));
	} else {
		memcpy(p, &v, sizeof(v));
	}
}

/* Parse a number option's argument against its row. */
static int
lc_opt_number(struct lc_cli *c, const struct lc_opt *o, const char *a,
    struct lc_err *e)
{
	static const char *const noun[] = { [LC_OPT_UINT] = "a number",
		[LC_OPT_SIZE] = "a size",
		[LC_OPT_MS] = "seconds" };
	char name[40], lo[24], hi[24];
	uint64_t v;
	int r;

	if (o->kind == LC_OPT_SIZE)
		r = lc_parse_size(a, o->min, o->max, &v);
	else if (o->kind == LC_OPT_MS)
		r = lc_parse_seconds(a, 0, o->max / 1000, &v) != 0 || v < o->min
		    ? -1
		    : 0;
	else
		r = lc_parse_uint(a, o->min, o->max, &v);
	if (r == 0) {
		lc_opt_store(c, o, v);
		return 0;
	}
	if (o->sname != 0)
		snprintf(name, sizeof(name), "-%c", o->sname);
	else
		snprintf(name, sizeof(name), "--%s", o->lname);
	lc__opt_fmt(o, o->min, lo, sizeof(lo));
	lc__opt_fmt(o, o->max, hi, sizeof(hi));
	return lc_err_set(e, LC_ERR_USAGE,
	    "%s %.64s: %s must be %s from %s "
	    "to %s%s",
	    name, a, o->what, noun[o->kind], lo, hi,
	    o->kind == LC_OPT_SIZE ? " (k, m, g suffixes)" : "");
}

const struct lc_opt lc_opts[] = {
	{ "streams", 's', "N", "parallel TCP data streams",
	    LC_NUM(LC_OPT_UINT, copy.streams, 1, LC_MAX_STREAMS,
		LC_DEFAULT_STREAMS, "streams") },
	{ "window", 'w', "SIZE",
	    "TCP window per stream, e.g. 256k (default: "
	    "autotuned, or fixed by the receiver)",
	    LC_NUM(LC_OPT_SIZE, copy.window, 1024, LC_MAX_WINDOW, 0,
		"window") },
	{ "block", 'B', "SIZE", "block size",
	    LC_NUM(LC_OPT_SIZE, copy.block, LC_MIN_BLOCK, LC_MAX_BLOCK,
		LC_DEFAULT_BLOCK, "block size") },
	{ "progress", 'P', "SEC",
	    "plain progress lines every SEC seconds "
	    "(for logs), instead of the live line on a terminal",
	    LC_NUM(LC_OPT_MS, copy.progress_ms, 100, 86400000, 0,
		"progress interval") },
	{ "recursive", 'r', NULL,
	    "copy directories: files, directories and "
	    "symlinks (as links)",
	    LC_FLAG(copy.recursive) },
	{ "dereference", 'L', NULL, "with -r, follow symlinks at the source",
	    LC_FLAG(copy.follow) },
	{ "preserve", 'p', NULL,
	    "keep modification times and permission "
	    "bits",
	    LC_FLAG(copy.preserve) },
	{ "update", 'u', NULL,
	    "skip files whose size and mtime match the "
	    "target (-p, --owner still update their mode, times, owner); "
	    "replace the rest (keeps mtimes), a changed file of 64 KiB or "
	    "more as a delta: only the 8 KiB+ chunks that differ",
	    LC_FLAG(copy.update) },
	{ "whole-file", 'W', NULL,
	    "with -u, send a changed file whole (default: "
	    "only the chunks that differ from the target's old copy)",
	    LC_FLAG(copy.whole_file) },
	{ "ignore-existing", 'O', NULL,
	    "skip every file that already exists "
	    "at the target",
	    LC_FLAG(copy.skip_existing) },
	{ "owner", 0, NULL,
	    "keep owner and group (when the receiving side "
	    "runs as root)",
	    LC_FLAG(copy.owner) },
	{ "numeric-ids", 0, NULL,
	    "with --owner, keep ids by number, not by "
	    "user and group name",
	    LC_FLAG(copy.numeric_ids) },
	{ "exclude", 0, "PATTERN",
	    "with -r, leave out what matches PATTERN (rsync's "
	    "rules: see lanecp(1) Mirrors); may be repeated",
	    LC_FUNC(lc_opt_exclude) },
	{ "include", 0, "PATTERN",
	    "keep what matches PATTERN whatever a later "
	    "--exclude says (the first match wins)",
	    LC_FUNC(lc_opt_include) },
	{ "exclude-from", 0, "FILE",
	    "--exclude each line of FILE (# and ; "
	    "comments, \"+ \" and \"- \" prefixes)",
	    LC_FUNC(lc_opt_exclude_from) },
	{ "include-from", 0, "FILE", "--include each line of FILE",
	    LC_FUNC(lc_opt_include_from) },
	{ "dry-run", 'n', NULL,
	    "list what would be sent, updated and deleted (per "
	    "--also target); move no data, change nothing",
	    LC_FLAG(copy.dry_run) },
	{ "delete", 0, NULL,
	    "with -r, after a complete copy remove from the "
	    "target what the source does not have (not excluded names)",
	    LC_FLAG(copy.delete_extra) },
	{ "delete-excluded", 0, NULL,
	    "--delete, and delete the excluded names at the "
	    "target too (rsync's meaning)",
	    LC_FUNC(lc_opt_delete_excluded) },
	{ "max-delete", 0, "N",
	    "with --delete, delete nothing and fail if more "
	    "than N entries would go",
	    LC_FUNC(lc_opt_max_delete) },
	{ "shard", 0, "I/N",
	    "with -r, copy only shard I of N (1-based) of the "
	    "tree; N runs make one copy (auto: from Slurm or k8s)",
	    LC_FUNC(lc_opt_shard) },
	{ "also", 0, "TARGET",
	    "one more target beside DST, copied as DST is, from the target "
	    "before it (a chain); repeatable, up to 16",
	    LC_FUNC(lc_opt_also) },
	{ "also-direct", 0, NULL, "with --also, every target from this host",
	    LC_FLAG(copy.also_direct) },
	{ "force", 'f', NULL, "overwrite an existing target file",
	    LC_FLAG(copy.force) },
	{ "append", 'a', NULL,
	    "resume: keep each chunk of a partial "
	    "copy whose SHA-256 matches the source's, send only the chunks "
	    "that differ and the missing rest (chunk: the block size, "
	    "doubled until at most 16384 chunks)",
	    LC_FLAG(copy.resume) },
	{ "check", 'e', NULL, "verify end to end with a whole-file sha256",
	    LC_FUNC(lc_opt_check) },
	{ "checksum", 'E', "ALG[=HEX]",
	    "verify with ALG (sha256, crc32, "
	    "adler32), print it; =HEX: must match",
	    LC_FUNC(lc_opt_checksum) },
	{ "rate", 'x', "RATE",
	    "cap the total rate, bytes/s (k/m/g "
	    "suffixes)",
	    LC_NUM(LC_OPT_SIZE, copy.rate, 1024, 1ull << 40, 0,
		"rate (bytes per second)") },
	{ "compress", 'c', "N",
	    "compress blocks with zlib at level N, 1-9 "
	    "(-c alone: 1); for compressible data on slow links",
	    LC_FUNC(lc_opt_compress), .optional = 1 },
	{ "programs", 'N', "i|o|io",
	    "the source (i) and/or target (o) is a "
	    "command run with /bin/sh -c on its host, read from its stdout "
	    "or written to its stdin",
	    LC_FUNC(lc_opt_programs) },
	{ "retries", 0, "N",
	    "retry transient failures N times, resuming "
	    "(backoff 1 s to 60 s)",
	    LC_NUM(LC_OPT_UINT, copy.retries, 0, 1000, 0, "retries") },
	{ "timeout", 0, "SEC",
	    "fail when nothing moves for SEC seconds, "
	    "0: never",
	    LC_NUM(LC_OPT_UINT, copy.timeout_s, 0, 7 * 86400,
		LC_TIMEOUT_DEFAULT_S, "timeout (seconds)") },
	{ "reverse", 'z', NULL,
	    "reverse: the receiving host connects out "
	    "to the sending one (a receiver behind NAT or a firewall)",
	    LC_FUNC(lc_opt_reverse) },
	{ "relay", 0, NULL,
	    "host to host: the data flows through this "
	    "machine (the two hosts cannot reach each other)",
	    LC_FUNC(lc_opt_relay) },
	{ "via-ssh", 0, NULL,
	    "carry the data streams over SSH, one SSH "
	    "connection per stream (only port 22 is open)",
	    LC_FUNC(lc_opt_via_ssh) },
	{ "direct", 0, NULL,
	    "only the direct path: no fallback; with a jump "
	    "host, try the target's data ports directly",
	    LC_FUNC(lc_opt_direct) },
	{ "stream-timeout", 0, "SEC",
	    "give up on one stalled stream after "
	    "SEC s, resend on others; 0: never",
	    LC_NUM(LC_OPT_UINT, copy.stall_s, 0, 86400, LC_STALL_DEFAULT_S,
		"stream timeout (seconds)") },
	{ "no-space-check", 0, NULL,
	    "do not check free space at the target "
	    "first",
	    LC_FLAG(copy.no_space_check) },
	{ "json", 0, NULL, "print a JSON summary on stdout at the end",
	    LC_FLAG(copy.json) },
	{ "json-progress", 0, NULL,
	    "a JSON progress line (naming its --also target) "
	    "every second on stdout, then the --json summary",
	    LC_FLAG(copy.json_progress) },
	{ "log", 'l', "FILE",
	    "append a timestamped record of the run to "
	    "FILE: start, warnings, errors, counts, result (per file with -v)",
	    LC_FUNC(lc_opt_log) },
	{ "ssh-config", 'F', "FILE",
	    "read this ssh_config instead of "
	    "~/.ssh/config then /etc/ssh/ssh_config (none: no file)",
	    LC_FUNC(lc_opt_config) },
	{ "identity", 'i', "FILE", "private key file for SSH",
	    LC_FUNC(lc_opt_identity) },
	{ "jump", 'J', "LIST",
	    "reach the remote host through these SSH jump "
	    "hosts, [user@]host[:port],...; none: direct (as ssh -J)",
	    LC_FUNC(lc_opt_jump) },
	{ "option", 'o', "OPT",
	    "an ssh_config option, Keyword=value or \"Keyword value\" (as "
	    "ssh -o), before the files so it wins; repeatable; e.g. -o "
	    "Port=2501 (also given to ssh with --ssh)",
	    LC_FUNC(lc_opt_ssh_option) },
	{ "ssh", 0, "PROGRAM",
	    "carry the connections with the OpenSSH client PROGRAM (default "
	    "ssh) instead of libssh2: the user's whole ssh setup applies "
	    "and ssh checks host keys (also LANECP_SSH=PROGRAM); without "
	    "it, lanecp goes over ssh by itself where libssh2 cannot serve "
	    "a host (-v says why)",
	    LC_FUNC(lc_opt_ssh), .optional = 1 },
	{ "ssh-program", 'S', "PROGRAM",
	    "the same as --ssh=PROGRAM (as bbcp -S)", LC_FUNC(lc_opt_ssh) },
	{ "agent-path", 'T', "PATH",
	    "remote lanecp program (default: "
	    "lanecp on the remote PATH)",
	    LC_FUNC(lc_opt_agent_cmd) },
	{ "no-push", 0, NULL,
	    "never copy lanecp's agent to a remote host "
	    "that lacks lanecp (also LANECP_NO_PUSH=1)",
	    LC_FUNC(lc_opt_no_push) },
	{ "no-encrypt", 0, NULL,
	    "send data in the clear (streams are still "
	    "authenticated); for trusted networks",
	    LC_FUNC(lc_opt_no_encrypt) },
	{ "no-fsync", 0, NULL,
	    "do not fsync files before renaming them "
	    "into place",
	    LC_FLAG(copy.no_fsync) },
	{ "verbose", 'v', NULL,
	    "say more (negotiated settings, per-file "
	    "results); twice for debug",
	    LC_FUNC(lc_opt_verbose) },
	{ "quiet", 'q', NULL, "print errors only (no progress, no summary)",

	    LC_FLAG(quiet) },
	{ "help", 'h', NULL, "show this help", LC_FLAG(help) },
	{ "version", 'V', NULL, "show the version", LC_FLAG(version) },
	{ "agent", 0, NULL,
	    "(internal) run as the remote agent on "
	    "stdin/stdout",
	    .kind = LC_OPT_AGENT },
	{ "restrict", 0, "DIR",
	    "(with --agent) serve only paths inside DIR, "
	    "e.g. as a forced command",
	    .kind = LC_OPT_AGENT },
	{ "max-memory", 0, "SIZE",
	    "(with --agent) keep a receiving agent's "
	    "memory under SIZE (default 128m)",
	    .kind = LC_OPT_AGENT },
	{ "transfer", 0, "ID",
	    "(internal, with --agent) the controller's "
	    "transfer id",
	    .kind = LC_OPT_AGENT },
};
const size_t lc_nopts = sizeof(lc_opts) / sizeof(lc_opts[0]);
#define LC_NOPTS (sizeof(lc_opts) / sizeof(lc_opts[0]))

/*
 * getopt's tables from lc_opts: lopts has LC_NOPTS + 1 entries, sopts
 * LC_NOPTS * 3 + 2 bytes (':' first, at most "x::" per option, NUL).
 */
static void
lc_opt_tables(struct option *lopts, char *sopts)
{
	size_t sl = 0;

	sopts[sl++] = ':'; /* report a missing value as ':' */
	for (size_t i = 0; i < LC_NOPTS; i++) {
		lopts[i].name = lc_opts[i].lname;
		lopts[i].has_arg = lc_opts[i].optional ? optional_argument
		    : lc_opts[i].arg		       ? required_argument
						       : no_argument;
		lopts[i].flag = NULL;
		lopts[i].val = lc_opts[i].sname ? lc_opts[i].sname
						: 256 + (int)i;
		if (lc_opts[i].sname != 0) {
			sopts[sl++] = (char)lc_opts[i].sname;
			if (lc_opts[i].arg)
				sopts[sl++] = ':';
			if (lc_opts[i].optional)
				sopts[sl++] = ':'; /* "c::" */
		}
	}
	memset(&lopts[LC_NOPTS], 0, sizeof(lopts[0]));
	sopts[sl] = '\0';
}

const char *
lc_find_log(int argc, char **argv)
{
	struct option lopts[LC_NOPTS + 1];
	char sopts[LC_NOPTS * 3 + 2];
	const char *log = NULL;
	int ch, idx;

	lc_opt_tables(lopts, sopts);
	opterr = 0;
	optind = 0; /* GNU getopt: start over */
	while ((ch = getopt_long(argc, argv, sopts, lopts, &idx)) != -1)
		if (ch == 'l' && optarg != NULL && optarg[0] != '\0' &&
		    !lc_scp_log_habit(optarg, NULL))
			log = optarg;
	return log;
}

int
lc_parse_cli(int argc, char **argv, struct lc_cli *c, int *first_arg,
    struct lc_err *e)
{
	struct option lopts[LC_NOPTS + 1];
	char sopts[LC_NOPTS * 3 + 2];
	int ch, idx, r;

	lc_opt_tables(lopts, sopts);
	opterr = 0;
	idx = -1;
	while ((ch = getopt_long(argc, argv, sopts, lopts, &idx)) != -1) {
		const struct lc_opt *o = NULL;
		int is_short = idx < 0; /* getopt sets idx for long ones */
		idx = -1;
		r = 0;
		if (ch == '?' || ch == ':') {
			if (optopt != 0 && optopt < 256)
				return lc_err_set(e, LC_ERR_USAGE,
				    "unknown option or missing value: -%c",
				    optopt);
			return lc_err_set(e, LC_ERR_USAGE,
			    "unknown option or "
			    "missing value: %s",
			    argv[optind - 1]);
		}
		for (size_t i = 0; i < LC_NOPTS && o == NULL; i++)
			if (ch ==
			    (lc_opts[i].sname ? lc_opts[i].sname
					      : 256 + (int)i))
				o = &lc_opts[i];
		if (o == NULL)
			return lc_err_set(e, LC_ERR_INTERNAL, "option table");
		if (ch == 'P' && is_short &&
		    (r = lc_scp_port_habit(optarg, e)) != 0)
			return r;
		/* scp's -c CIPHER: getopt leaves the name as an operand */
		if (ch == 'c' && optarg == NULL && optind < argc &&
		    (r = lc_scp_cipher_habit(argv[optind], e)) != 0)
			return r;
		if (o->kind == LC_OPT_FLAG)
			*(int *)(void *)((char *)c + o->off) = 1;
		else if (o->kind == LC_OPT_AGENT)
			c->agent_only = c->agent_only != NULL ? c->agent_only
							      : o->lname;
		else if (o->kind == LC_OPT_FUNC)
			r = o->set(c, optarg, e);
		else
			r = lc_opt_number(c, o, optarg, e);
		if (r != 0)
			return r;
	}
	*first_arg = optind;
	if ((r = lc_env_no_push(c, e)) != 0 || (r = lc_env_ssh(c, e)) != 0)
		return r;
	return lc_ssh_opts_check(c, e);
}

void
lc_cli_init(struct lc_cli *c)
{
	memset(c, 0, sizeof(*c));
	/* the defaults are the option table's */
	for (size_t i = 0; i < LC_NOPTS; i++)
		if (lc_opts[i].dflt != 0)
			lc_opt_store(c, &lc_opts[i], lc_opts[i].dflt);
	c->copy.encrypt = 1;
}
