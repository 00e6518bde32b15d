/*
 * lc_evil_sink: a hostile sink agent for tests (the counterpart of
 * lc_evil_agent, which plays a hostile source).  Run as the remote agent
 * of a push, "-T 'LC_EVIL_SINK=CASE LC_EVIL_REAL=/path/to/lanecp
 * lc_evil_sink'" (lanecp appends "--agent ..."; the variables reach it
 * through the remote shell): it runs "$LC_EVIL_REAL --agent", relays both
 * ways so that the copy is real, and breaks one rule of what a sink may
 * say to the controller (docs/PROTOCOL.md), as CASE says:
 *
 *   listening_twice    LISTENING a second time
 *   listening_streams  LISTENING grants one stream more than LISTEN asked
 *   ready_unknown      FILE_READY for an id never announced (after the
 *                      real first FILE_READY)
 *   ready_twice        the first FILE_READY twice
 *   ready_past         FILE_READY starting past the end of the file
 *   done_unknown       FILE_DONE for an id never announced
 *   done_early         FILE_DONE for a file just before its FILE_READY
 *   done_twice         the first FILE_DONE twice
 *   done_bytes         FILE_DONE with one byte more than the file has
 *   done_sum           FILE_DONE whose checksum is not hex (-e)
 *   done_noflags       FILE_DONE without its flags (the HELLO said it
 *                      sends them)
 *   done_badflag       FILE_DONE with a flag that has no meaning
 *   old_counts         not a lie: a sink from before FILE_DONE's flags
 *                      (no HELLO flag 8, no flags in any FILE_DONE)
 *   progress_unknown   PROGRESS whose mark is a file never announced
 *   progress_past      PROGRESS with more written of file 1 than it has
 *   progress_back      a PROGRESS whose byte count is below the last one
 *   progress_mark_back a PROGRESS whose mark is below the last one
 *   progress_total     PROGRESS counting more bytes than the copy has
 *   lost_stream        STREAM_LOST for a stream beyond those granted
 *   lost_off           STREAM_LOST with a last block past the file's end
 *   sink_done_early    SINK_DONE right after LISTENING (the real one is
 *                      dropped: a controller that took the first would
 *                      end the copy before the sink has)
 *   sink_done_twice    SINK_DONE twice
 *   sink_done_bytes    SINK_DONE counting more bytes than the copy has
 *   skip_unknown       FILE_SKIP for an id never announced
 *   prefix_unasked     FILE_PREFIX without -a (before FILE_READY)
 *   hashes_twice       -u's delta: its first FILE_HASHES slice twice
 *   hashes_gap         -u's delta: its first FILE_HASHES slice starting
 *                      one chunk later (a gap before it)
 *   hashes_total       -u's delta: its first FILE_HASHES slice claiming
 *                      one chunk more in all (and a chunk's more length)
 *   bye_early          BYE before the controller's
 *   target_twice       TARGET_OK a second time, saying the opposite
 *   grant_big          TARGET_OK granting more files in flight than
 *                      SINK_TARGET asked for
 *   grant_small        TARGET_OK granting fewer than the controller's
 *                      first credit (LC_FILES_INFLIGHT)
 *   stopped_bytes      SINK_STOPPED (the answer to STOP) counting more
 *                      bytes than the copy has
 *
 * and, for --delete (at the first DEL_SCAN, before the real answer, ROOT
 * being the root it names; or on the real sink's messages):
 *
 *   del_outside        DEL_CAND "lc-evil-outside": not under ROOT
 *   del_dotdot         DEL_CAND "ROOT/../lc-evil"
 *   del_abs            DEL_CAND "/ROOT/lc-evil"
 *   del_slash          DEL_CAND "ROOT/lc-evil/" (a trailing '/')
 *   del_listed         DEL_CAND naming the first file the source listed
 *   del_orphan         DEL_CAND "ROOT/lc-evil-nodir/x": in a directory
 *                      neither listed nor named
 *   del_twice          the first real DEL_CAND twice
 *   deleted_unasked    the first real DELETED naming "ROOT/lc-evil-never"
 *
 * Every message is otherwise passed on unchanged.  It remembers what the
 * controller announced (LISTEN's streams, each FILE's id and size) to make
 * its lies precise.  A case it never gets to apply leaves the copy alone.
 */
#include "buf.h"
#include "err.h"
#include "fdio.h"
#include "wire.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define EVIL_FILES 4096		/* ids remembered (sizes) */
#define EVIL_UNKNOWN 100000u	/* an id no test copy announces */

static const char *evil = "";
static uint32_t asked_streams;	/* LISTEN */
static uint64_t sizes[EVIL_FILES];	/* FILE: size by id */
static uint64_t total;		/* sum of the sizes announced */
static uint32_t first_id;	/* the first regular FILE */
static int done;		/* the case has been applied */
static uint64_t last_bytes;	/* the last PROGRESS passed on */
static char first_name[LC_PATH_MAX];	/* the first regular FILE's */
static char del_root[LC_PATH_MAX];	/* the last DEL_SCAN's */

static int
is(const char *name)
{
	return !done && strcmp(evil, name) == 0;
}

static uint64_t
size_of(uint32_t id)
{
	return id < EVIL_FILES ? sizes[id] : 0;
}

static int
flush(int fd, struct lc_buf *b)
{
	int r = lc_write_all(fd, lc_buf_ptr(b), lc_buf_len(b));

	lc_buf_reset(b);
	return r;
}

/* ---- messages from the controller to the real sink ---- */

static void
ctl_file(const struct lc_msg_file *f)
{
	if (f->id < EVIL_FILES)
		sizes[f->id] = f->size;
	total += f->size;
	if (f->kind == LC_KIND_REG && first_id == 0) {
		first_id = f->id;
		snprintf(first_name, sizeof(first_name), "%s", f->name);
	}
}

/* DEL_SCAN: a made-up candidate first, as the case says. */
static void
ctl_del_scan(const struct lc_msg_del_scan *m, struct lc_buf *out)
{
	static const struct {
		const char *c, *before;
		int root;
		const char *after;
	} lie[] = {
		{ "del_outside", "", 0, "lc-evil-outside" },
		{ "del_dotdot", "", 1, "/../lc-evil" },
		{ "del_abs", "/", 1, "/lc-evil" },
		{ "del_slash", "", 1, "/lc-evil/" },
		{ "del_orphan", "", 1, "/lc-evil-nodir/x" },
	};
	struct lc_msg_del_cand k;

	memset(&k, 0, sizeof(k));
	k.kind = LC_KIND_REG;
	for (size_t i = 0; i < sizeof(lie) / sizeof(lie[0]); i++)
		if (is(lie[i].c)) {
			snprintf(k.name, sizeof(k.name), "%s%.4000s%s",
			    lie[i].before, lie[i].root ? m->root : "",
			    lie[i].after);
			done = 1;
		}
	if (is("del_listed")) {
		snprintf(k.name, sizeof(k.name), "%s", first_name);
		done = 1;
	}
	if (k.name[0] != '\0')
		lc_msg_put_del_cand(out, &k);
}

static int
from_ctl(struct lc_buf *in, int to_child, struct lc_buf *out)
{
	const uint8_t *payload;
	size_t plen, flen;
	uint8_t type;
	union {
		struct lc_msg_listen l;
		struct lc_msg_file f;
		struct lc_msg_del_scan s;
	} m;

	while (lc_msg_peek(lc_buf_ptr(in), lc_buf_len(in), &type, &payload,
	    &plen, &flen) == 1) {
		if (type == LC_MSG_LISTEN &&
		    lc_msg_get_listen(payload, plen, &m.l) == 0)
			asked_streams = m.l.streams;
		else if (type == LC_MSG_DEL_SCAN &&
		    lc_msg_get_del_scan(payload, plen, &m.s) == 0) {
			ctl_del_scan(&m.s, out);
			snprintf(del_root, sizeof(del_root), "%s", m.s.root);
		}
		else if (type == LC_MSG_FILE &&
		    lc_msg_get_file(payload, plen, &m.f) == 0)
			ctl_file(&m.f);
		if (lc_write_all(to_child, lc_buf_ptr(in), flen) != 0)
			return -1;
		lc_buf_consume(in, flen);
	}
	return flush(1, out);
}

/* ---- messages from the real sink to the controller ---- */

static void
put_progress(struct lc_buf *out, uint64_t bytes, uint32_t file,
    uint64_t written)
{
	struct lc_msg_progress p;

	memset(&p, 0, sizeof(p));
	p.bytes = bytes;
	p.file = file;
	p.written = written;
	lc_msg_put_progress(out, &p);
}

static void
sink_listening(struct lc_msg_listening *l, struct lc_buf *out)
{
	struct lc_msg_stream_lost sl;
	struct lc_msg_xfer_done d;
	struct lc_msg_file_skip sk;

	if (is("listening_streams") && asked_streams < LC_MAX_STREAMS) {
		l->streams = asked_streams + 1;
		if (l->nports != 0) {
			l->ports[l->nports] = l->ports[0];
			l->nports = l->streams;
		}
		done = 1;
	}
	lc_msg_put_listening(out, l);
	if (is("listening_twice")) {
		lc_msg_put_listening(out, l);
		done = 1;
	} else if (is("lost_stream")) {
		memset(&sl, 0, sizeof(sl));
		sl.stream = l->streams;
		snprintf(sl.reason, sizeof(sl.reason), "evil");
		lc_msg_put_stream_lost(out, &sl);
		done = 1;
	} else if (is("sink_done_early")) {
		memset(&d, 0, sizeof(d));
		lc_msg_put_xfer_done(out, LC_MSG_SINK_DONE, &d);
		/* (done stays 0: the real SINK_DONE is dropped) */
	} else if (is("skip_unknown")) {
		memset(&sk, 0, sizeof(sk));
		sk.id = EVIL_UNKNOWN;
		sk.why = LC_SKIP_FAILED;
		snprintf(sk.msg, sizeof(sk.msg), "evil");
		lc_msg_put_file_skip(out, &sk);
		done = 1;
	} else if (is("bye_early")) {
		lc_msg_put_empty(out, LC_MSG_BYE);
		done = 1;
	}
}

static void
sink_ready(struct lc_msg_file_ready *r, struct lc_buf *out)
{
	struct lc_msg_file_ready x;
	struct lc_msg_file_done d;
	struct lc_msg_stream_lost sl;
	struct lc_msg_file_prefix fp;

	/* before the real FILE_READY (and after the sink's HELLO) */
	if (is("done_early") && r->id == first_id) {
		memset(&d, 0, sizeof(d));
		d.id = r->id;
		d.bytes = size_of(r->id);
		lc_msg_put_file_done(out, &d);
		done = 1;
	} else if (is("prefix_unasked") && r->id == first_id) {
		memset(&fp, 0, sizeof(fp));
		fp.id = r->id;
		fp.chunk = 1u << 20;
		lc_msg_put_file_prefix(out, &fp);
		done = 1;
	}
	if (is("ready_past")) {
		r->start = size_of(r->id) + 1;
		done = 1;
	}
	lc_msg_put_file_ready(out, r);
	if (is("ready_twice")) {
		lc_msg_put_file_ready(out, r);
		done = 1;
	} else if (is("ready_unknown")) {
		x = *r;
		x.id = EVIL_UNKNOWN;
		lc_msg_put_file_ready(out, &x);
		done = 1;
	} else if (is("done_unknown")) {
		memset(&d, 0, sizeof(d));
		d.id = EVIL_UNKNOWN;
		lc_msg_put_file_done(out, &d);
		done = 1;
	} else if (is("lost_off")) {
		memset(&sl, 0, sizeof(sl));
		sl.has_last = 1;
		sl.last_file = r->id;
		sl.last_off = size_of(r->id);
		snprintf(sl.reason, sizeof(sl.reason), "evil");
		lc_msg_put_stream_lost(out, &sl);
		done = 1;
	} else if (is("progress_past")) {
		put_progress(out, last_bytes, r->id, size_of(r->id) + 1);
		done = 1;
	}
}

/* old_counts: the sink's HELLO without LC_HELLO_COUNTS */
static void
sink_hello(struct lc_msg_hello *h, struct lc_buf *out)
{
	if (strcmp(evil, "old_counts") == 0)
		h->flags &= ~LC_HELLO_COUNTS;
	lc_msg_put_hello(out, h);
}

static void
sink_done(struct lc_msg_file_done *d, struct lc_buf *out)
{
	if (strcmp(evil, "old_counts") == 0) {
		d->has_flags = 0;
		d->flags = 0;
	}
	if (is("done_bytes")) {
		d->bytes++;
		done = 1;
	} else if (is("done_sum") && d->checksum[0] != '\0') {
		char *colon = strchr(d->checksum, ':');
		if (colon != NULL && colon[1] != '\0')
			colon[1] = 'z';
		done = 1;
	} else if (is("done_noflags") && d->has_flags) {
		d->has_flags = 0;
		d->flags = 0;
		done = 1;
	} else if (is("done_badflag") && d->has_flags) {
		/* raw: the encoder is the checks' too */
		uint8_t p[64];
		size_t n = 0;
		int i;

		p[n++] = (uint8_t)(d->id >> 24);
		p[n++] = (uint8_t)(d->id >> 16);
		p[n++] = (uint8_t)(d->id >> 8);
		p[n++] = (uint8_t)d->id;
		for (i = 56; i >= 0; i -= 8)
			p[n++] = (uint8_t)(d->bytes >> i);
		memset(p + n, 0, 4);	/* no checksum */
		n += 4;
		p[n++] = 0x80;
		lc_buf_put_u32(out, (uint32_t)n + 1);
		lc_buf_put_u8(out, LC_MSG_FILE_DONE);
		lc_buf_put(out, p, n);
		done = 1;
		return;
	}
	lc_msg_put_file_done(out, d);
	if (is("done_twice")) {
		lc_msg_put_file_done(out, d);
		done = 1;
	}
}

static void
sink_progress(struct lc_msg_progress *p, struct lc_buf *out)
{
	if (is("progress_unknown")) {
		p->file = EVIL_UNKNOWN;
		p->written = 0;
		done = 1;
	} else if (is("progress_total") && total > 0) {
		p->bytes = total + 1;
		done = 1;
	}
	lc_msg_put_progress(out, p);
	if (is("progress_back") && p->bytes > 0) {
		put_progress(out, p->bytes - 1, p->file, p->written);
		done = 1;
	} else if (is("progress_mark_back") && p->written > 0) {
		put_progress(out, p->bytes, p->file, p->written - 1);
		done = 1;
	}
	last_bytes = p->bytes;
}

static void
sink_xfer_done(struct lc_msg_xfer_done *d, struct lc_buf *out)
{
	if (strcmp(evil, "sink_done_early") == 0)
		return;	/* the real one: dropped */
	if (is("sink_done_bytes")) {
		d->bytes = total + 1;
		done = 1;
	}
	lc_msg_put_xfer_done(out, LC_MSG_SINK_DONE, d);
	if (is("sink_done_twice")) {
		lc_msg_put_xfer_done(out, LC_MSG_SINK_DONE, d);
		done = 1;
	}
}

static void
sink_stopped(struct lc_msg_xfer_done *d, struct lc_buf *out)
{
	if (is("stopped_bytes")) {
		d->bytes = total + 1;
		done = 1;
	}
	lc_msg_put_xfer_done(out, LC_MSG_SINK_STOPPED, d);
}

/* -u's delta: a slice of its hash list */
static void
sink_hashes(struct lc_msg_file_hashes *h, struct lc_buf *out)
{
	if (is("hashes_gap") && h->first == 0 && h->n > 1) {
		h->first = 1;
		h->n--;
		done = 1;
	} else if (is("hashes_total") && h->first == 0) {
		h->length += h->chunk;
		h->total++;
		done = 1;
	}
	lc_msg_put_file_hashes(out, h);
	if (is("hashes_twice")) {
		lc_msg_put_file_hashes(out, h);
		done = 1;
	}
}

static void
sink_target_ok(struct lc_msg_target_ok *t, struct lc_buf *out)
{
	if (is("grant_big") || is("grant_small")) {
		t->inflight = is("grant_big") ? LC_FILES_INFLIGHT_MAX + 1 :
		    LC_FILES_INFLIGHT - 1;
		done = 1;
	}
	lc_msg_put_target_ok(out, t);
	if (is("target_twice")) {
		t->is_dir = !t->is_dir;
		lc_msg_put_target_ok(out, t);
		done = 1;
	}
}

static void
sink_del_cand(const struct lc_msg_del_cand *k, struct lc_buf *out)
{
	lc_msg_put_del_cand(out, k);
	if (is("del_twice")) {
		lc_msg_put_del_cand(out, k);
		done = 1;
	}
}

static void
sink_deleted(struct lc_msg_deleted *k, struct lc_buf *out)
{
	if (is("deleted_unasked")) {
		snprintf(k->name, sizeof(k->name), "%.4000s%slc-evil-never",
		    del_root, del_root[0] != '\0' ? "/" : "");
		done = 1;
	}
	lc_msg_put_deleted(out, k);
}

static int
from_child(struct lc_buf *in, struct lc_buf *out)
{
	const uint8_t *payload;
	size_t plen, flen;
	uint8_t type;
	union {
		struct lc_msg_listening l;
		struct lc_msg_file_ready r;
		struct lc_msg_file_done d;
		struct lc_msg_progress p;
		struct lc_msg_xfer_done x;
		struct lc_msg_target_ok t;
		struct lc_msg_del_cand k;
		struct lc_msg_deleted dd;
		struct lc_msg_hello h;
		struct lc_msg_file_hashes fh;
	} m;

	while (lc_msg_peek(lc_buf_ptr(in), lc_buf_len(in), &type, &payload,
	    &plen, &flen) == 1) {
		if (type == LC_MSG_LISTENING &&
		    lc_msg_get_listening(payload, plen, &m.l) == 0)
			sink_listening(&m.l, out);
		else if (type == LC_MSG_FILE_READY &&
		    lc_msg_get_file_ready(payload, plen, &m.r) == 0)
			sink_ready(&m.r, out);
		else if (type == LC_MSG_FILE_DONE &&
		    lc_msg_get_file_done(payload, plen, &m.d) == 0)
			sink_done(&m.d, out);
		else if (type == LC_MSG_PROGRESS &&
		    lc_msg_get_progress(payload, plen, &m.p) == 0)
			sink_progress(&m.p, out);
		else if (type == LC_MSG_SINK_DONE &&
		    lc_msg_get_xfer_done(payload, plen, &m.x) == 0)
			sink_xfer_done(&m.x, out);
		else if (type == LC_MSG_SINK_STOPPED &&
		    lc_msg_get_xfer_done(payload, plen, &m.x) == 0)
			sink_stopped(&m.x, out);
		else if (type == LC_MSG_FILE_HASHES &&
		    lc_msg_get_file_hashes(payload, plen, &m.fh) == 0)
			sink_hashes(&m.fh, out);
		else if (type == LC_MSG_TARGET_OK &&
		    lc_msg_get_target_ok(payload, plen, &m.t) == 0)
			sink_target_ok(&m.t, out);
		else if (type == LC_MSG_DEL_CAND &&
		    lc_msg_get_del_cand(payload, plen, &m.k) == 0)
			sink_del_cand(&m.k, out);
		else if (type == LC_MSG_DELETED &&
		    lc_msg_get_deleted(payload, plen, &m.dd) == 0)
			sink_deleted(&m.dd, out);
		else if (type == LC_MSG_HELLO &&
		    lc_msg_get_hello(payload, plen, &m.h) == 0)
			sink_hello(&m.h, out);
		else
			lc_buf_put(out, lc_buf_ptr(in), flen);
		lc_buf_consume(in, flen);
	}
	return flush(1, out);
}

static int
fill(int fd, struct lc_buf *b)
{
	uint8_t *p;
	ssize_t n;

	if (lc_buf_reserve(b, 65536, &p) != 0)
		return -1;
	n = read(fd, p, 65536);
	lc_buf_unappend(b, n > 0 ? 65536 - (size_t)n : 65536);
	return n > 0 ? 0 : -1;
}

static int
proxy(const char *real, char **argv)
{
	int up[2], down[2], st = 0;
	struct lc_buf cin, kin, out;
	struct pollfd pfd[2];
	pid_t pid;

	if (pipe(up) != 0 || pipe(down) != 0)
		return 1;
	if ((pid = fork()) < 0)
		return 1;
	if (pid == 0) {
		dup2(down[0], 0);
		dup2(up[1], 1);
		close(down[0]);
		close(down[1]);
		close(up[0]);
		close(up[1]);
		argv[0] = (char *)(uintptr_t)real;
		execv(real, argv);
		_exit(127);
	}
	close(down[0]);
	close(up[1]);
	lc_buf_init(&cin, 1 << 21);
	lc_buf_init(&kin, 1 << 21);
	lc_buf_init(&out, 1 << 21);
	pfd[0].fd = 0;
	pfd[1].fd = up[0];
	while (pfd[1].fd >= 0) {
		pfd[0].events = pfd[1].events = POLLIN;
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents != 0) {
			if (fill(0, &cin) != 0) {
				pfd[0].fd = -1;	/* controller gone */
				close(down[1]);
			} else if (from_ctl(&cin, down[1], &out) != 0) {
				break;
			}
		}
		if (pfd[1].revents != 0) {
			if (fill(up[0], &kin) != 0 ||
			    from_child(&kin, &out) != 0)
				break;
		}
	}
	if (pfd[0].fd >= 0)
		close(down[1]);
	close(up[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	lc_buf_free(&cin);
	lc_buf_free(&kin);
	lc_buf_free(&out);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int
main(int argc, char **argv)
{
	const char *real = getenv("LC_EVIL_REAL");
	const char *c = getenv("LC_EVIL_SINK");

	(void)argc;
	signal(SIGPIPE, SIG_IGN);
	if (real == NULL) {
		fprintf(stderr, "lc_evil_sink: LC_EVIL_REAL is not set\n");
		return 2;
	}
	if (c != NULL)
		evil = c;
	return proxy(real, argv);
}
