/*
 * The controller's progress and reporting: files that failed (said at
 * once, counted in the result), checksums (-E lines, --json), the time
 * lost to stalls, the progress line and --json-progress, and the
 * --timeout watchdog.  The state is struct lc_ctl_prog
 * (controller_int.h).
 */
#include "controller_int.h"
#include "clock.h"
#include "log.h"
#include "parse.h"
#include "path.h"

#include <stdio.h>
#include <string.h>

#define LC_STALL_MS 3000	/* data still this long: report the gap */
#define LC_LIVE_MS 250		/* the live progress line: redraws */

/*
 * The peer's text without the name the line already starts with: the
 * sink says "./evil: refused" of what the controller calls
 * "backup:./evil".  what itself when it does not start with the end of
 * where (at a component) and ": ".
 */
static const char *
lc_ctl_failed_text(const char *where, const char *what)
{
	const char *sep = strstr(what, ": ");
	size_t wl = strlen(where), n;

	if (sep == NULL || sep == what)
		return what;
	n = (size_t)(sep - what);
	if (n > wl || memcmp(where + wl - n, what, n) != 0)
		return what;
	if (n < wl && where[wl - n - 1] != '/' && where[wl - n - 1] != ':' &&
	    what[0] != '/')
		return what;
	return sep + 2;
}

/*
 * A file the copy could not take (the source could not read it, or the
 * sink could not write it): said now, on one line, and counted; the copy
 * goes on and ends with LC_ERR_PARTIAL.  what is the peer's text (the
 * log escapes it).  The same text over and over (a re-seeded tree: every
 * file exists) is named LC_RESULT_FAILED_SHOWN times, then counted;
 * --json names them all (lc_copy_result_failed).
 */
void
lc__ctl_failed(struct lc_ctl *c, const char *where, int kind,
    const char *what)
{
	struct lc_copy_result *res = c->res;
	const char *text = lc_ctl_failed_text(where, what);
	uint32_t i, shown = 0;

	for (i = 0; i < res->nlike; i++)
		if (strncmp(res->like[i].what, text,
		    sizeof(res->like[i].what) - 1) == 0)
			break;
	if (i == res->nlike && i < LC_RESULT_LIKE) {
		snprintf(res->like[i].what, sizeof(res->like[i].what), "%s",
		    text);
		res->nlike++;
	}
	if (i < res->nlike)
		shown = res->like[i].n++;
	/* the path is the one the controller checked, not the peer's text */
	if (shown < LC_RESULT_FAILED_SHOWN)
		lc_log_error("%s: %s", where, text);
	/* every one named in --json, as far as its bound goes */
	lc_copy_result_failed(res, where, text);
	res->failed_kind[kind >= 0 && kind <= LC_KIND_PIPE ? kind : 0]++;
	res->nfailed++;
}

void
lc__ctl_failed_more(struct lc_ctl *c)
{
	const struct lc_copy_result *res = c->res;

	char n[32];

	for (uint32_t i = 0; i < res->nlike; i++)
		if (res->like[i].n > LC_RESULT_FAILED_SHOWN)
			lc_log_error("and %s more like it: %s",
			    lc_fmt_count(n, sizeof(n), res->like[i].n -
			    LC_RESULT_FAILED_SHOWN), res->like[i].what);
}

/*
 * What failed, counted by kind: "3 files", "2 symlinks", or "3 entries
 * (1 file, 2 symlinks)" when they were of different kinds.
 */
void
lc__ctl_failed_count(const struct lc_copy_result *res, char *out,
    size_t outsz)
{
	static const char *const one[5] = { "entry", "file", "directory",
		"symlink", "pipe" };
	static const char *const many[5] = { "entries", "files", "directories",
		"symlinks", "pipes" };
	char parts[160] = "", count[32];
	size_t o = 0;
	int kinds = 0, last = 0;

	for (int k = 0; k < 5; k++) {
		uint32_t n = res->failed_kind[k];

		if (n == 0)
			continue;
		kinds++;
		last = k;
		o += (size_t)snprintf(parts + o, o < sizeof(parts) ?
		    sizeof(parts) - o : 0, "%s%u %s", o ? ", " : "", n,
		    n == 1 ? one[k] : many[k]);
		if (o >= sizeof(parts))
			o = sizeof(parts) - 1;
	}
	lc_fmt_count(count, sizeof(count), res->nfailed);
	if (kinds == 1)
		snprintf(out, outsz, "%s %s", count,
		    res->nfailed == 1 ? one[last] : many[last]);
	else
		snprintf(out, outsz, "%s %s (%s)", count,
		    res->nfailed == 1 ? "entry" : "entries", parts);
}

/* Where a file landed, "host:path" style, for -E lines and --json. */
void
lc__ctl_file_where(struct lc_ctl *c, const struct lc_ctl_file *f, char *out,
    size_t outsz)
{
	const char *host = c->args.dst.host;
	const char *p = c->args.dst.path;
	size_t pl = strlen(p);
	int dir = c->target_is_dir || p[pl - 1] == '/';

	snprintf(out, outsz, "%s%s%s%s%s", host, host[0] ? ":" : "", p,
	    dir && p[pl - 1] != '/' ? "/" : "", dir ? f->name : "");
}

void
lc__ctl_record_sum(struct lc_ctl *c, const struct lc_ctl_file *f,
    const char *sum)
{
	struct lc_copy_result *res = c->res;
	char where[LC_PATH_MAX + 600];
	const char *colon = strchr(sum, ':');

	lc__ctl_file_where(c, f, where, sizeof(where));
	if (c->o->print_sums && colon != NULL) {
		/* with "-" as the target, stdout carries the data */
		FILE *out = c->args.stdout_target ? stderr : stdout;
		lc_log_status_clear();	/* stdout may be that terminal too */
		fprintf(out, "%.*s %s %s\n", (int)(colon - sum), sum,
		    colon + 1, where);
		fflush(out);
	}
	if (res->nsums < LC_RESULT_SUMS) {
		snprintf(res->sums[res->nsums].path,
		    sizeof(res->sums[res->nsums].path), "%.500s", where);
		snprintf(res->sums[res->nsums].sum,
		    sizeof(res->sums[res->nsums].sum), "%.79s", sum);
		res->nsums++;
	}
}

/*
 * The time lost to a stall or an outage: when data moves again after at
 * least LC_STALL_MS without any (the sink's heartbeat says so once a
 * second), say how long and add it to the result (--json
 * "stalled_seconds").
 */
void
lc__ctl_moved(struct lc_ctl *c, uint64_t bytes)
{
	uint64_t now = lc_now_ms();

	if (bytes == c->bytes_done)
		return;
	if (c->res->t_first_ms == 0)
		c->res->t_first_ms = now;
	c->res->t_last_ms = now;
	if (c->prog.t_moved != 0 && now - c->prog.t_moved >= LC_STALL_MS) {
		c->res->stalled_ms += now - c->prog.t_moved;
		lc_log_warn("data is moving again after %.1f s without "
		    "progress", (double)(now - c->prog.t_moved) / 1000);
	}
	c->prog.t_moved = now;
}

/* Bytes of the files in place: kept by resume, and written since. */
uint64_t
lc__ctl_done(const struct lc_ctl *c)
{
	return c->res->resumed + c->bytes_done;
}

void
lc__ctl_progress_set(struct lc_ctl *c)
{
	if (c->prog.bar.start_ns == 0)
		lc_progress_init(&c->prog.bar, 2, c->o->live_progress,
		    c->files.bytes - c->files.bytes_left);
	c->prog.bar.total = c->files.bytes - c->files.bytes_left;
	c->prog.bar.files = c->files.done;
	c->prog.bar.files_total = c->files.total;
	/* a tree's total is known once every source has been listed, a
	   stream's at its FILE_LEN: until then it is what came so far */
	c->prog.bar.total_final = c->chk.listed >= c->chk.adds_sent &&
	    c->files.pipes_open == 0;
	if (c->files.pipes_open != 0 && c->bytes_done > c->prog.bar.total)
		c->prog.bar.total = c->bytes_done;
	/* every byte listed is in, the files are not all done: the sink
	   syncs and renames (or a file's last FILE_DONE is on its way) */
	c->prog.bar.flushing = c->prog.bar.total_final &&
	    c->prog.bar.total > 0 && lc__ctl_done(c) >= c->prog.bar.total &&
	    !c->sink_done;
}

/* --json-progress: one line a second on stdout (report.c). */
static void
lc_ctl_json_tick(struct lc_ctl *c, uint64_t now_ms)
{
	uint64_t ns = lc_now_ns(), done = lc__ctl_done(c);
	uint64_t dt = c->prog.json_ns != 0 ? ns - c->prog.json_ns : 0;
	uint64_t db = done > c->prog.json_bytes ? done - c->prog.json_bytes : 0;
	struct lc_json_progress jp;

	if (now_ms < c->prog.next_json)
		return;
	c->prog.next_json = now_ms + 1000;
	memset(&jp, 0, sizeof(jp));
	jp.elapsed_ns = ns - (c->o->t_run != 0 ? c->o->t_run : c->prog.t_start);
	jp.bytes = done;
	jp.total = c->files.bytes - c->files.bytes_left;
	jp.total_final = c->chk.listed >= c->chk.adds_sent;
	jp.rate = dt > 0 ? (uint64_t)((double)db * 1e9 / (double)dt) : 0;
	jp.files = c->files.done;
	jp.files_total = c->files.total;
	jp.streams = c->dp.state != LC_CTL_DP_NONE ? c->streams : 0;
	jp.target = c->o->target_name;
	jp.target_i = c->o->target_i;
	jp.target_n = c->o->target_n;
	c->prog.json_ns = ns;
	c->prog.json_bytes = done;
	lc_log_status_clear();	/* stdout may be that terminal too */
	lc_json_progress(1, &jp);
}

void
lc__ctl_tick(struct lc_ctl *c)
{
	uint64_t now = lc_now_ms();

	if (c->o->json_progress && c->phase >= LC_CTL_LISTING)
		lc_ctl_json_tick(c, now);
	if ((c->o->progress_ms == 0 && !c->o->live_progress) ||
	    c->phase == LC_CTL_HELLO ||
	    (c->chk.listed < c->chk.adds_sent && c->files.total == 0))
		return;
	if (now < c->prog.next)
		return;
	c->prog.next = now + (c->o->progress_ms != 0 ?
	    c->o->progress_ms : LC_LIVE_MS);
	lc__ctl_progress_set(c);
	lc_progress_update(&c->prog.bar, lc__ctl_done(c));
}

/*
 * --timeout: fail a copy that makes no progress, naming the side that
 * stalled.  Both agents send a heartbeat every second, so silence means
 * the agent or its SSH connection is stuck; heartbeats without bytes mean
 * the data path is.
 */
int
lc__ctl_watchdog(struct lc_ctl *c, struct lc_err *e)
{
	uint64_t now = lc_now_ms(), t = (uint64_t)c->o->timeout_s * 1000;

	/* a relay that cannot reach an agent at all: try another path */
	if (c->dp.relay != NULL && lc_relay_failed(c->dp.relay, e))
		return -LC_ERR_NOPATH;

	if (t == 0 || c->phase >= LC_CTL_BYE)
		return 0;
	if (c->bytes_done != c->prog.last_bytes) {
		c->prog.last_bytes = c->bytes_done;
		c->prog.t_progress = now;
	}
	if (now - c->prog.t_dst_msg > t)
		return lc_err_set(e, LC_ERR_TIMEOUT, "no word from the agent "
		    "on %s for %u s (the receiving side or its SSH connection "
		    "is stuck)", c->dst_ep.name, c->o->timeout_s);
	if (now - c->prog.t_src_msg > t)
		return lc_err_set(e, LC_ERR_TIMEOUT, "no word from the agent "
		    "on %s for %u s (the sending side or its SSH connection "
		    "is stuck)", c->src.name, c->o->timeout_s);
	if (now - c->prog.t_progress <= t)
		return 0;
	/* bytes handed to the network but not received: the path is stuck */
	if (c->chk.src_sent <= c->bytes_done)
		return lc_err_set(e, LC_ERR_TIMEOUT, "no progress for %u s: "
		    "the source on %s has sent nothing", c->o->timeout_s,
		    c->src.name);
	return lc_err_set(e, LC_ERR_TIMEOUT, "no progress for %u s: data sent "
	    "by %s is not arriving at %s (network or data streams stalled)",
	    c->o->timeout_s, c->src.name, c->dst_ep.name);
}
