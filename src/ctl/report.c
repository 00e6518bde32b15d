/*
 * The --json summary of a copy: one object, built in a bounded buffer
 * and written in pieces of at most about LC_JSON_FLUSH bytes (the string
 * escaper is json.c); the failures it names, kept while the copy runs.
 */
#include "copy.h"
#include "buf.h"
#include "fdio.h"
#include "json.h"
#include "log.h"
#include "parse.h"

#include "lc_limits.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the --json object: every string field escaped at 6 bytes a byte */
#define LC_JSON_MAX (1u << 20)
/*
 * The failures are written out whenever this much is buffered: the
 * buffer then never holds more than this and one failure escaped at its
 * worst (about 35 KiB), and the fields after them (the deleted names, the
 * error: under 250 KiB escaped), so that the object fits LC_JSON_MAX
 * however many failures it names.
 */
#define LC_JSON_FLUSH (512u << 10)
/* a failure's parts as kept: a host:path and the error text */
#define LC_FAILED_WHERE_MAX (LC_PATH_MAX + 600)
#define LC_FAILED_ERR_MAX 1024

void
lc_copy_result_failed_max(struct lc_copy_result *res, const char *where,
    const char *err, size_t max)
{
	size_t wl = strnlen(where, LC_FAILED_WHERE_MAX - 1);
	size_t el = strnlen(err, LC_FAILED_ERR_MAX - 1);
	size_t need = wl + 1 + el + 1, cap;
	char *p;

	if (max > LC_RESULT_FAILED_BYTES)
		max = LC_RESULT_FAILED_BYTES;
	if (res->failed_truncated)
		return;
	if (res->failed_len > max || need > max - res->failed_len) {
		res->failed_truncated = 1;
		return;
	}
	if (res->failed_len + need > res->failed_cap) {
		cap = res->failed_cap != 0 ? res->failed_cap : 64u << 10;
		while (cap < res->failed_len + need)
			cap *= 2;
		if (cap > max)
			cap = max;
		if ((p = realloc(res->failed_text, cap)) == NULL) {
			res->failed_truncated = 1;
			return;
		}
		res->failed_text = p;
		res->failed_cap = cap;
	}
	p = res->failed_text + res->failed_len;
	memcpy(p, where, wl);
	p[wl] = '\0';
	memcpy(p + wl + 1, err, el);
	p[wl + 1 + el] = '\0';
	res->failed_len += need;
	res->failed_named++;
}

void
lc_copy_result_failed(struct lc_copy_result *res, const char *where,
    const char *err)
{
	lc_copy_result_failed_max(res, where, err, LC_RESULT_FAILED_BYTES);
}

void
lc_copy_result_free(struct lc_copy_result *res)
{
	free(res->failed_text);
	res->failed_text = NULL;
	res->failed_len = res->failed_cap = 0;
	res->failed_named = 0;
	res->failed_truncated = 0;
}

/* Append printf output (short: numbers and keys) to b. */
static int __attribute__((format(printf, 2, 3)))
lc_json_raw(struct lc_buf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -LC_ERR_INTERNAL;
	return lc_buf_put(b, tmp, (size_t)n);
}

/*
 * Every failure kept, as --json's "failed" objects: the buffer is written
 * to fd whenever it holds LC_JSON_FLUSH bytes.  0 or -LC_ERR_*.
 */
static int
lc_json_failed(int fd, struct lc_buf *b, const struct lc_copy_result *res)
{
	const char *p = res->failed_text, *err;
	int r = 0;

	for (uint32_t i = 0; r == 0 && i < res->failed_named; i++) {
		if (lc_buf_len(b) >= LC_JSON_FLUSH) {
			(void)lc_write_all(fd, lc_buf_ptr(b), lc_buf_len(b));
			lc_buf_reset(b);
		}
		err = p + strlen(p) + 1;
		(void)((r = lc_json_raw(b, "%s{\"path\":", i ? "," : "")) != 0 ||
		    (r = lc_json_put_str(b, p)) != 0 ||
		    (r = lc_json_raw(b, ",\"error\":")) != 0 ||
		    (r = lc_json_put_str(b, err)) != 0 ||
		    (r = lc_json_raw(b, "}")) != 0);
		p = err + strlen(err) + 1;
	}
	return r;
}

/* Why lanecp chose ssh: one end's reason, or both when they differ. */
static const char *
lc_report_ssh_why(const struct lc_copy_result *res, char *buf, size_t sz)
{
	const char *src = res->ssh_why_src, *dst = res->ssh_why_dst;

	if (src[0] != '\0' && dst[0] != '\0' && strcmp(src, dst) != 0)
		snprintf(buf, sz, "source: %.100s; target: %.100s", src, dst);
	else
		snprintf(buf, sz, "%s", src[0] != '\0' ? src : dst);
	return buf;
}

/*
 * Every string goes through lc_json_put_str (peer names and error text
 * may hold any bytes), and the object is built in a bounded buffer big
 * enough for every field escaped at its worst (6 bytes a byte); only the
 * failures, as many as the copy had, are written out as they fill it
 * (lc_json_failed), so the object is never cut short.
 */
void
lc_copy_json(int fd, const struct lc_copy_opts *o,
    const struct lc_copy_result *res, const struct lc_err *e,
    int exit_status)
{
	lc_copy_json_one(fd, o, res, e, exit_status, NULL, "", "\n");
}

void
lc_copy_json_one(int fd, const struct lc_copy_opts *o,
    const struct lc_copy_result *res, const struct lc_err *e,
    int exit_status, const struct lc_fanout_target *t, const char *sep,
    const char *end)
{
	struct lc_buf b;
	int ok = e == NULL || e->code == 0, r;
	char why[240];

	lc_buf_init(&b, LC_JSON_MAX);
	r = lc_json_raw(&b, "%s{", sep);
	if (r == 0 && t != NULL)
		(void)((r = lc_json_raw(&b, "\"target\":")) != 0 ||
		    (r = lc_json_put_str(&b, t->dest)) != 0 ||
		    (r = lc_json_raw(&b, ",\"from\":")) != 0 ||
		    (r = lc_json_put_str(&b, t->from != NULL ? t->from :
		    "this host")) != 0 ||
		    (r = lc_json_raw(&b, ",\"from_why\":")) != 0 ||
		    (r = lc_json_put_str(&b, t->from_why)) != 0 ||
		    (r = lc_json_raw(&b, ",\"followed\":%u,",
			 res->followed)) != 0);
	if (r == 0)
		r = lc_json_raw(&b, "\"type\":\"result\",\"ok\":%s,\"files\":%u,"
	    "\"copied\":%u,\"updated\":%u,\"updated_bytes\":%llu,"
	    "\"bytes\":%llu,\"compressed_bytes\":%llu,\"compression\":%u,"
	    "\"bytes_written\":%llu,\"resumed_bytes\":%llu,"
	    "\"seconds\":%.3f,\"streams\":%u,\"window\":%u,\"block\":%u,"
	    "\"encrypted\":%s,\"attempts\":%u,\"stalled_seconds\":%.1f,"
	    "\"ssh\":\"%s\",\"path\":\"%s\",\"path_why\":",
	    ok ? "true" : "false", res->files,
	    res->files - (res->updated < res->files ? res->updated :
	    res->files), res->updated,
	    (unsigned long long)res->updated_bytes,
	    (unsigned long long)res->sent,
	    (unsigned long long)res->wire, res->zlevel,
	    (unsigned long long)res->bytes, (unsigned long long)res->resumed,
	    (double)res->ns / 1e9, res->streams, res->window, res->block,
	    res->encrypted ? "true" : "false", res->attempts,
	    (double)res->stalled_ms / 1000,
	    res->openssh || (o != NULL && o->ssh_program != NULL) ?
	    "openssh" : "libssh2",
	    lc_path_name(res->path));
	if (r == 0)
		r = lc_json_put_str(&b, res->path_why);
	if (r == 0)
		r = lc_json_raw(&b, ",\"ssh_why\":");
	if (r == 0)
		r = lc_json_put_str(&b, lc_report_ssh_why(res, why,
		    sizeof(why)));
	if (r == 0)
		r = lc_json_raw(&b, ",\"checksums\":[");
	for (uint32_t i = 0; r == 0 && i < res->nsums && i < LC_RESULT_SUMS;
	    i++) {
		(void)((r = lc_json_raw(&b, "%s{\"path\":", i ? "," : "")) != 0 ||
		    (r = lc_json_put_str(&b, res->sums[i].path)) != 0 ||
		    (r = lc_json_raw(&b, ",\"checksum\":")) != 0 ||
		    (r = lc_json_put_str(&b, res->sums[i].sum)) != 0 ||
		    (r = lc_json_raw(&b, "}")) != 0);
	}
	if (r == 0)
		r = lc_json_raw(&b, "],\"entries\":%u,\"skipped\":%u,"
		    "\"failed_count\":%u,\"failed\":[", res->entries,
		    res->skipped, res->nfailed);
	/* every one named, unless there were more than a bound holds */
	if (r == 0)
		r = lc_json_failed(fd, &b, res);
	/* and every one counted by its text */
	if (r == 0)
		r = lc_json_raw(&b, "],\"failed_names_truncated\":%s,"
		    "\"failed_like\":[", res->failed_truncated ? "true" :
		    "false");
	for (uint32_t i = 0; r == 0 && i < res->nlike && i < LC_RESULT_LIKE;
	    i++) {
		(void)((r = lc_json_raw(&b, "%s{\"error\":", i ? "," : "")) !=
		    0 ||
		    (r = lc_json_put_str(&b, res->like[i].what)) != 0 ||
		    (r = lc_json_raw(&b, ",\"count\":%u}", res->like[i].n)) !=
		    0);
	}
	/* --delete: the count, the first names (-n: what would go) */
	if (r == 0)
		r = lc_json_raw(&b, "],\"dry_run\":%s,\"dry_new\":%u,"
		    "\"dry_updated\":%u,\"dry_attrs\":%u,\"deleted\":%u,"
		    "\"deleted_names\":[",
		    o->dry_run ? "true" : "false", res->dry_new,
		    res->dry_update, res->dry_attrs, res->deleted);
	for (uint32_t i = 0; r == 0 && !o->dry_run && i < res->deleted &&
	    i < LC_RESULT_FAILED; i++)
		(void)((r = lc_json_raw(&b, "%s", i ? "," : "")) != 0 ||
		    (r = lc_json_put_str(&b, res->deleted_list[i])) != 0);
	if (r == 0)
		r = lc_json_raw(&b, "],\"exit_status\":%d", exit_status);
	if (r == 0 && o->shard.n != 0)
		r = lc_json_raw(&b, ",\"shard\":{\"index\":%u,\"count\":%u}",
		    o->shard.i + 1, o->shard.n);
	if (r == 0 && !ok)
		(void)((r = lc_json_raw(&b, ",\"error\":")) != 0 ||
		    (r = lc_json_put_str(&b, e->msg)) != 0);
	if (r == 0)
		r = lc_json_raw(&b, "}%s", end);
	if (r == 0)
		(void)lc_write_all(fd, lc_buf_ptr(&b), lc_buf_len(&b));
	else
		lc_log_error("--json: cannot format the summary: %s",
		    lc_strerror(r));
	lc_buf_free(&b);
}

void
lc_copy_summary(const struct lc_copy_opts *o, const struct lc_copy_result *res,
    char *out, size_t outsz)
{
	char files[32], bytes[32], human[32], skipped[80] = "", failed[32];
	char updated[48] = "";
	uint32_t upd = res->updated < res->files ? res->updated : res->files;

	/* a file that replaced one at the target is updated, not copied */
	lc_fmt_count(files, sizeof(files), res->files - upd);
	if (o->update || o->force || upd > 0) {
		char n[32];

		lc_fmt_count(n, sizeof(n), upd);
		snprintf(updated, sizeof(updated), ", updated %s", n);
	}
	/* the exact bytes as scripts read them, and their size for people */
	snprintf(bytes, sizeof(bytes), "%llu", (unsigned long long)res->bytes);
	human[0] = '\0';
	if (res->bytes >= 10240) {
		human[0] = ' ';
		human[1] = '(';
		lc_fmt_bytes(human + 2, sizeof(human) - 3, res->bytes);
		strcat(human, ")");
	}
	lc_fmt_count(failed, sizeof(failed), res->nfailed);
	if (o->update || o->skip_existing || res->skipped > 0) {
		char n[32];

		lc_fmt_count(n, sizeof(n), res->skipped);
		snprintf(skipped, sizeof(skipped), ", skipped %s %s", n,
		    o->skip_existing ? "existing" : "up to date");
	}
	snprintf(out, outsz, "copied %s file%s%s, %s byte%s%s%s, failed %s",
	    files, res->files - upd == 1 ? "" : "s", updated, bytes,
	    res->bytes == 1 ? "" : "s", human, skipped, failed);
}

void
lc_json_progress(int fd, const struct lc_json_progress *p)
{
	struct lc_buf b;
	int r;

	/* a target's name is a path: up to LC_PATH_MAX, escaped 6 x */
	lc_buf_init(&b, LC_JSON_MAX);
	r = lc_json_raw(&b, "{\"type\":\"progress\",");
	if (r == 0 && p->target != NULL)
		(void)((r = lc_json_raw(&b, "\"target\":")) != 0 ||
		    (r = lc_json_put_str(&b, p->target)) != 0 ||
		    (r = lc_json_raw(&b, ",\"target_index\":%zu,"
		    "\"targets\":%zu,", p->target_i, p->target_n)) != 0);
	if (r == 0)
		r = lc_json_raw(&b, "\"elapsed\":%.3f,\"bytes\":%llu,"
		    "\"total\":%llu,\"total_final\":%s,\"rate\":%llu,"
		    "\"files\":%u,\"files_total\":%u,\"streams\":%u}\n",
		    (double)p->elapsed_ns / 1e9, (unsigned long long)p->bytes,
		    (unsigned long long)p->total,
		    p->total_final ? "true" : "false",
		    (unsigned long long)p->rate, p->files, p->files_total,
		    p->streams);
	if (r == 0)
		(void)lc_write_all(fd, lc_buf_ptr(&b), lc_buf_len(&b));
	lc_buf_free(&b);
}
