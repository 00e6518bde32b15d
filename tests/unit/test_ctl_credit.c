/*
 * The controller's files in flight and the source's credit
 * (ctl/controller_ring.c), driven through its own functions and the
 * sink's FILE_DONE as the controller reads it (lc__ctl_from_dst): with a
 * sink that bounds its files by their count (LC_HELLO_COUNT_INFLIGHT) one
 * file held back does not hold back the rest, the ids in flight then span
 * more than LC_FILES_INFLIGHT_MAX, and the files in flight are never more
 * than the window, nor the ids the source may hold open above the sink's
 * mark more than its HELLO max_files; with an older sink the credit stops
 * a window above the held file, as before; a FILE_DONE for an id not in
 * flight is refused.
 */
#include "harness.h"

#include "buf.h"
#include "controller_int.h"
#include "wire.h"

#include <stdint.h>
#include <string.h>

struct t_ctl {
	struct lc_ctl c;
	struct lc_copy_opts o;
	struct lc_copy_result res;
	uint32_t last_credit; /* the last SRC_CREDIT sent */
};

/* The SRC_CREDITs sent since the last call: each above the one before. */
static void
t_credits(struct t_ctl *t)
{
	struct lc_buf *out = &t->c.src.out;
	const uint8_t *p;
	size_t n, flen;
	uint8_t type;

	while (lc_msg_peek(lc_buf_ptr(out), lc_buf_len(out), &type, &p, &n,
		   &flen) == 1) {
		struct lc_msg_src_credit cr;

		LC_CHECK_EQ_U(type, LC_MSG_SRC_CREDIT);
		LC_CHECK(lc_msg_get_src_credit(p, n, &cr) == 0);
		LC_CHECK(cr.upto > t->last_credit);
		t->last_credit = cr.upto;
		lc_buf_consume(out, flen);
	}
	LC_CHECK_EQ_U(t->last_credit, t->c.files.credit);
}

/* What negotiate.c and TARGET_OK set up, with this sink and window, and
 * a source whose descriptors cover max_files. */
static void
t_init_held(struct t_ctl *t, int by_count, uint32_t window, uint32_t max_files)
{
	memset(t, 0, sizeof(*t));
	t->c.o = &t->o;
	t->c.res = &t->res;
	lc_endpoint_init(&t->c.src);
	lc_endpoint_init(&t->c.dst_ep);
	snprintf(t->c.dst_ep.name, sizeof(t->c.dst_ep.name), "sink");
	LC_CHECK(lc__ctl_files_init(&t->c) == 0);
	t->c.phase = LC_CTL_LISTING;
	t->c.chk.adds_sent = 1; /* still listing: no SRC_NOMORE */
	t->c.dst_ep.hello_seen = 1;
	t->c.dst_ep.hello.flags = by_count ? LC_HELLO_COUNT_INFLIGHT : 0;
	t->c.src.hello.max_files = max_files;
	t->c.dp.state = LC_CTL_DP_CONNECTED; /* PROGRESS is ACKed */
	t->c.files.window = LC_FILES_INFLIGHT;
	t->c.files.credit = 1 + LC_FILES_INFLIGHT;
	t->last_credit = t->c.files.credit;
	t->c.files.asked = window;
	LC_CHECK(lc__ctl_files_window(&t->c, window) == 0);
	t_credits(t);
}

static void
t_init(struct t_ctl *t, int by_count, uint32_t window)
{
	t_init_held(t, by_count, window, 65536);
}

static void
t_free(struct t_ctl *t)
{
	lc__ctl_files_free(&t->c);
	lc_endpoint_free(&t->c.src);
	lc_endpoint_free(&t->c.dst_ep);
}

/* The source announces the next id, as far as its credit reaches: 1 if
 * it did, 0 if the credit stops it. */
static int
t_announce(struct t_ctl *t)
{
	struct lc_msg_file m;

	memset(&m, 0, sizeof(m));
	m.id = t->c.files.total + 1;
	if (m.id >= t->c.files.credit)
		return 0;
	m.kind = LC_KIND_DIR; /* done without FILE_READY or data */
	snprintf(m.name, sizeof(m.name), "d%u", m.id);
	LC_CHECK(lc__ctl_file_add(&t->c, &m) == 0);
	t->c.files.total++;
	return 1;
}

/* The sink's message in b (freed here) to the controller: 0 or its error. */
static int
t_feed(struct t_ctl *t, struct lc_buf *b, const char *what, uint32_t id)
{
	const uint8_t *p;
	struct lc_err e;
	size_t n, flen;
	uint8_t type;
	int r;

	LC_CHECK(lc_msg_peek(lc_buf_ptr(b), lc_buf_len(b), &type, &p, &n,
		     &flen) == 1);
	lc_err_clear(&e);
	r = lc__ctl_from_dst(&t->c, type, p, n, &e);
	if (r != 0)
		fprintf(stderr, "%s %u: %s\n", what, id, e.msg);
	lc_buf_free(b);
	return r;
}

/* The sink's FILE_DONE for id: 0 or the controller's error. */
static int
t_done(struct t_ctl *t, uint32_t id)
{
	struct lc_msg_file_done d;
	struct lc_buf b;

	memset(&d, 0, sizeof(d));
	d.id = id;
	lc_buf_init(&b, LC_CTL_MAX + 16);
	LC_CHECK(lc_msg_put_file_done(&b, &d) == 0);
	return t_feed(t, &b, "FILE_DONE", id);
}

/* The sink's PROGRESS: its mark at file id, nothing of it written. */
static int
t_progress(struct t_ctl *t, uint32_t id)
{
	struct lc_msg_progress m;
	struct lc_buf b;

	memset(&m, 0, sizeof(m));
	m.file = id;
	lc_buf_init(&b, LC_CTL_MAX + 16);
	LC_CHECK(lc_msg_put_progress(&b, &m) == 0);
	return t_feed(t, &b, "PROGRESS", id);
}

/* The SRC_CREDITs and ACKs sent: each credit above the one before, and
 * every credit after the ACK of the mark it counts from. */
static void
t_credits_acks(struct t_ctl *t, uint32_t *acked)
{
	struct lc_buf *out = &t->c.src.out;
	const uint8_t *p;
	size_t n, flen;
	uint8_t type;

	while (lc_msg_peek(lc_buf_ptr(out), lc_buf_len(out), &type, &p, &n,
		   &flen) == 1) {
		if (type == LC_MSG_ACK) {
			struct lc_msg_ack a;
			LC_CHECK(lc_msg_get_ack(p, n, &a) == 0);
			*acked = a.file;
		} else {
			struct lc_msg_src_credit cr;
			LC_CHECK_EQ_U(type, LC_MSG_SRC_CREDIT);
			LC_CHECK(lc_msg_get_src_credit(p, n, &cr) == 0);
			LC_CHECK(cr.upto > t->last_credit);
			/* what the source holds: from its last ACK on */
			LC_CHECK(cr.upto - (*acked > 1 ? *acked : 1) <= 32768u);
			t->last_credit = cr.upto;
		}
		lc_buf_consume(out, flen);
	}
}

/* What the source may have in flight (ids below the credit, less the
 * done) and what the controller holds: never more than the window. */
static void
t_check_window(struct t_ctl *t)
{
	uint32_t window = t->c.files.window;

	t_credits(t);
	LC_CHECK(t->c.files.credit - 1 - t->c.files.done <= window);
	LC_CHECK(lc_idmap_count(&t->c.files.map) <= window);
	LC_CHECK_EQ_U(lc_idmap_count(&t->c.files.map),
	    t->c.files.total - t->c.files.done);
}

/*
 * File 1 is held (its data is slow); every other file is done, in an
 * order that is not the ids' (each batch of the window's files from its
 * middle out), as the source announces them.  Returns the files
 * announced once the credit stops moving or `upto` ids are announced.
 */
static uint32_t
t_run_with_held_file(struct t_ctl *t, uint32_t upto)
{
	uint32_t next_done = 2;

	while (t->c.files.total < upto) {
		uint32_t first = t->c.files.total + 1, last;

		while (t->c.files.total < upto && t_announce(t))
			;
		last = t->c.files.total;
		t_check_window(t);
		if (last < first && next_done > last)
			break; /* nothing new and nothing left to finish */
		/* the batch's files, odd ids first, then even, backwards */
		for (uint32_t id = last; id >= next_done && id >= 2; id--)
			if (id % 2 == 1)
				LC_CHECK(t_done(t, id) == 0);
		for (uint32_t id = last; id >= next_done && id >= 2; id--)
			if (id % 2 == 0)
				LC_CHECK(t_done(t, id) == 0);
		next_done = last + 1;
		t_check_window(t);
		LC_CHECK(lc__ctl_file_find(&t->c, 1) != NULL);
		LC_CHECK_EQ_U(t->c.files.lo, 1);
	}
	return t->c.files.total;
}

/*
 * A sink that counts: with file 1 held, ids run on to three times
 * LC_FILES_INFLIGHT_MAX (the map spans them), and file 1 done at last
 * moves the credit at once.
 */
LC_TEST(ctl_credit_by_count_passes_held_file)
{
	const uint32_t window = LC_FILES_INFLIGHT_MAX;
	struct t_ctl t;

	t_init(&t, 1, window);
	LC_CHECK_EQ_U(t.c.files.credit, 1 + window);
	LC_CHECK_EQ_U(t_run_with_held_file(&t, 3 * LC_FILES_INFLIGHT_MAX),
	    3 * LC_FILES_INFLIGHT_MAX);
	LC_CHECK(lc__ctl_file_find(&t.c, 1) != NULL);
	LC_CHECK_EQ_U(lc_idmap_count(&t.c.files.map), 1);
	LC_CHECK(t.c.files.credit > 3 * LC_FILES_INFLIGHT_MAX);
	/* the held file done: nothing in flight, the credit moves at once */
	LC_CHECK(t_done(&t, 1) == 0);
	t_check_window(&t);
	LC_CHECK_EQ_U(t.c.files.lo, t.c.files.total + 1);
	LC_CHECK_EQ_U(t.c.files.credit, t.c.files.done + 1 + window);
	t_free(&t);
}

/*
 * The source holds each file it sent until the sink's mark passes it:
 * with file 1 held and a source whose descriptors cover 6000 files, the
 * credit stops at most 6000 above file 1 although the window has room; the mark
 * moving on (file 1 written, not yet done) moves the credit on, the ACK
 * first.
 */
LC_TEST(ctl_credit_within_source_held)
{
	const uint32_t window = LC_FILES_INFLIGHT_MAX;
	uint32_t acked = 0, total;
	struct t_ctl t;

	t_init_held(&t, 1, window, 6000);
	/* in steps of an eighth of the window: within one of the bound */
	total = t_run_with_held_file(&t, 3 * LC_FILES_INFLIGHT_MAX);
	LC_CHECK(total <= 6000 && total > 6000 - window / 8);
	LC_CHECK_EQ_U(t.c.files.credit, total + 1);
	LC_CHECK_EQ_U(lc_idmap_count(&t.c.files.map), 1);
	/* the mark at 1 changes nothing; past all: a window more */
	LC_CHECK(t_progress(&t, 1) == 0);
	LC_CHECK_EQ_U(t.c.files.credit, total + 1);
	LC_CHECK(t_progress(&t, total + 1) == 0);
	t_credits_acks(&t, &acked);
	LC_CHECK_EQ_U(acked, total + 1);
	LC_CHECK_EQ_U(t.c.files.credit, t.c.files.done + 1 + window);
	t_free(&t);

	/* a source that claims more than LC_FILES_HELD_MAX gets that */
	t_init_held(&t, 1, window, UINT32_MAX);
	LC_CHECK_EQ_U(t_run_with_held_file(&t, 40000), LC_FILES_HELD_MAX);
	t_free(&t);
	/* and one that covers less than the window: the window */
	t_init_held(&t, 1, 1000, 10);
	LC_CHECK_EQ_U(t_run_with_held_file(&t, 40000), 1000);
	t_free(&t);
}

/* An older sink (no flag): the credit stops a window above file 1. */
LC_TEST(ctl_credit_old_sink_stops_at_held_file)
{
	const uint32_t window = 600;
	struct t_ctl t;

	t_init(&t, 0, window);
	LC_CHECK_EQ_U(t_run_with_held_file(&t, 3 * LC_FILES_INFLIGHT_MAX),
	    window);
	LC_CHECK_EQ_U(t.c.files.credit, 1 + window);
	/* file 1 done: everything is, the credit moves a whole window */
	LC_CHECK(t_done(&t, 1) == 0);
	t_check_window(&t);
	LC_CHECK_EQ_U(t.c.files.credit, window + 1 + window);
	t_free(&t);
}

/* The credit moves in steps of an eighth of the window, not per file. */
LC_TEST(ctl_credit_steps)
{
	const uint32_t window = 800;
	struct t_ctl t;
	uint32_t before;

	t_init(&t, 1, window);
	while (t_announce(&t))
		;
	LC_CHECK_EQ_U(t.c.files.total, window);
	before = t.c.files.credit;
	for (uint32_t id = 2; id <= window / 8; id++) {
		LC_CHECK(t_done(&t, id) == 0);
		LC_CHECK_EQ_U(t.c.files.credit, before);
	}
	LC_CHECK(t_done(&t, window / 8 + 1) == 0); /* the 100th done */
	t_check_window(&t);
	LC_CHECK_EQ_U(t.c.files.credit, before + window / 8);
	t_free(&t);
}

/* FILE_DONE for an id not in flight: done already, never announced, 0. */
LC_TEST(ctl_credit_done_not_in_flight_refused)
{
	struct t_ctl t;
	uint32_t done;

	t_init(&t, 1, 1000);
	while (t_announce(&t))
		;
	LC_CHECK(t_done(&t, 5) == 0);
	done = t.c.files.done;
	LC_CHECK(t_done(&t, 5) == -LC_ERR_PROTO); /* twice */
	LC_CHECK(t_done(&t, t.c.files.total + 1) == -LC_ERR_PROTO);
	LC_CHECK(t_done(&t, 0) == -LC_ERR_PROTO);
	LC_CHECK(t_done(&t, UINT32_MAX) == -LC_ERR_PROTO);
	LC_CHECK_EQ_U(t.c.files.done, done);
	LC_CHECK(lc__ctl_file_find(&t.c, 5) == NULL);
	LC_CHECK(lc__ctl_file_find(&t.c, 4) != NULL);
	t_check_window(&t);
	t_free(&t);
}

/* The credit's rules. */
LC_TEST(ctl_credit_formula)
{
	/* no file held: both the same */
	LC_CHECK_EQ_U(lc__ctl_credit(101, 100, 512, 0, 4096), 613);
	LC_CHECK_EQ_U(lc__ctl_credit(101, 100, 512, 0, 0), 613);
	/* file 1 held, 99 of the next done */
	LC_CHECK_EQ_U(lc__ctl_credit(1, 99, 512, 0, 4096), 612);
	LC_CHECK_EQ_U(lc__ctl_credit(1, 99, 512, 0, 0), 513);
	/* file 1 held, 5000 done: what the source holds bounds it */
	LC_CHECK_EQ_U(lc__ctl_credit(1, 5000, 512, 0, 4096), 4097);
	LC_CHECK_EQ_U(lc__ctl_credit(1, 5000, 512, 3000, 4096), 5513);
	/* never below the old rule, never past 2^32 - 1 */
	LC_CHECK_EQ_U(lc__ctl_credit(10, 0, 512, 0, 100), 522);
	LC_CHECK_EQ_U(lc__ctl_credit(UINT32_MAX - 10, UINT32_MAX - 20, 512,
			  UINT32_MAX, 4096),
	    UINT32_MAX);
}

LC_TEST_MAIN()
