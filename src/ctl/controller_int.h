/*
 * Internal to the controller: its state, one sub-struct per feature,
 * shared by controller.c (the run: the poll loop, the phases' steps, the
 * end), controller_ring.c (the file ring and credit), controller_src.c and
 * controller_dst.c (the checks of each agent's messages),
 * controller_opts.c (the options), controller_progress.c (progress and
 * reporting), negotiate.c (HELLO, stream/window/block settlement,
 * LISTENING -> CONNECT) and datapath.c (the data path).
 */
#ifndef LANECP_CONTROLLER_INT_H
#define LANECP_CONTROLLER_INT_H

#include "copy.h"
#include "endpoint.h"
#include "feed.h"
#include "idmap.h"
#include "location.h"
#include "progress.h"
#include "relay.h"
#include "wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* What each request asked for (the peer checks: controller.c). */
struct lc_ctl_req {
	char name[LC_PATH_MAX];	/* the root name its FILEs carry; "" with
				   LC_ADD_CONTENTS (names are its entries) */
	uint32_t flags;		/* LC_ADD_* sent with it */
	uint32_t files;		/* FILEs forwarded for it */
	uint64_t bytes;
	int root_dir;		/* its root entry was a directory */
	char *last;		/* last name announced for it (the order) */
	char *lastdir;		/* last directory announced for it */
};

/*
 * A file in flight: announced and not yet done.  The controller keeps
 * them in a map by id of at most LC_FILES_INFLIGHT_MAX entries (the
 * source may only announce ids below the credit it was given, which
 * keeps the files in flight within the window the sink granted, at most
 * LC_FILES_INFLIGHT_MAX), so its memory does not grow with the tree.
 */
struct lc_ctl_file {
	uint32_t id;
	uint8_t kind;		/* LC_KIND_* */
	uint32_t req;		/* the request (SRC_ADD) it answers */
	uint64_t size;
	uint64_t prefix_len;	/* resume: the sink's partial file */
	uint32_t chunk;		/* resume: its chunk size */
	uint32_t hashes_total;	/* FILE_HASHES: the list's length */
	uint32_t hashes_got;	/* FILE_HASHES: forwarded so far */
	uint64_t kept;		/* resume: bytes of it kept (resumed) */
	uint64_t match;		/* resume: the source's PREFIX_MATCH */
	uint8_t prefixed;	/* FILE_PREFIX forwarded */
	uint8_t matched;	/* PREFIX_MATCH forwarded */
	uint8_t ready;		/* FILE_READY forwarded */
	uint8_t summed;		/* FILE_SUM forwarded */
	uint8_t done;		/* FILE_DONE or FILE_SKIP seen */
	uint8_t aborted;	/* FILE_ABORT forwarded: the sink skips it */
	uint8_t stream;		/* LC_KIND_PIPE: size is LC_PIPE_MAX (a
				   bound) until FILE_LEN */
	uint8_t len_known;	/* FILE_LEN forwarded: size is the length */
	char *name;		/* as announced (owned) */
	struct lc_feed_entry *pub;	/* --also's chain: what the next
					   target's copy is fed once this
					   one is made here (owned) */
	struct lc_feed_entry *fent;	/* ... or was fed at FILE_READY and
					   follows the sink's mark until
					   FILE_DONE (the feed's) */
};

/*
 * The copy's phase.  Each comes after the one before and none is left for
 * an earlier one; the agents' messages are checked against it.
 */
enum lc_ctl_phase {
	LC_CTL_HELLO = 0,	/* until the source's HELLO: nothing asked */
	LC_CTL_LISTING,		/* negotiated: SINK_TARGET, LISTEN and the
				   SRC_ADDs are out; files are listed and
				   settled */
	LC_CTL_NOMORE,		/* SRC_NOMORE sent: SRC_DONE and SINK_DONE
				   may come (in either order) */
	LC_CTL_BYE,		/* BYE sent to both: their BYEs may come */
};

/*
 * The data streams' setup.  It runs beside the phase, not in it: when
 * every file is up to date, SRC_NOMORE goes out before the source's
 * CONNECTED.
 */
enum lc_ctl_dp_state {
	LC_CTL_DP_NONE = 0,	/* LISTEN not answered yet */
	LC_CTL_DP_LISTENING,	/* the sink's LISTENING came: CONNECT sent */
	LC_CTL_DP_CONNECTED,	/* the source's CONNECTED came */
};

/* The files in flight and credit (controller_ring.c). */
struct lc_ctl_files {
	struct lc_idmap map;	/* id -> struct lc_ctl_file (owned), at
				   most LC_FILES_INFLIGHT_MAX */
	uint32_t window;	/* files in flight: LC_FILES_INFLIGHT, then
				   TARGET_OK's grant */
	uint32_t asked;		/* SINK_TARGET's inflight */
	uint32_t lo;		/* lowest id not done (total + 1: none) */
	uint32_t credit;	/* SRC_CREDIT sent: ids below it */
	uint32_t total;		/* ids announced: 1 .. total */
	uint32_t settled;	/* ready, or done without data */
	uint32_t sent;		/* FILE_READY forwarded (the source's count) */
	uint32_t done;		/* FILE_DONE or FILE_SKIP */
	uint32_t written;	/* regular files FILE_DONE */
	uint32_t updated;	/* of those, replacing one at the target
				   (LC_DONE_REPLACED) */
	uint64_t updated_bytes;	/* and their sizes */
	uint64_t bytes;		/* the files' sizes announced so far */
	uint64_t bytes_left;	/* of those, in files the sink skipped or
				   could not take before a byte was sent
				   (not in the progress total) */
	uint32_t pipes_open;	/* pipes announced, no FILE_LEN yet */
};

/* What was asked, and the counts the checks hold the agents to. */
struct lc_ctl_check {
	struct lc_ctl_req *reqs;	/* one per source, what was asked */
	uint32_t adds_sent;	/* SRC_ADD sent */
	uint32_t listed;	/* SRC_LISTED seen: the request being listed */
	uint32_t mark_file;	/* the sink's last mark (PROGRESS) */
	uint64_t mark_written;
	uint64_t src_sent;	/* from the source's heartbeat */
	uint64_t src_wire;	/* of those, payload bytes on the wire */
};

/* The command line's arguments (controller_opts.c). */
struct lc_ctl_args {
	struct lc_location *srcs;
	struct lc_location dst;
	bool stdout_target;	/* the target is "-": stdout is the data's */
	bool pipes;		/* "-" or -N on either side (HELLO check) */
	bool keep_setid;	/* -p as root from a local source */
	char target_shown[LC_PATH_MAX + 300];
};

/* Progress and reporting (controller_progress.c); times in ms but t_start. */
struct lc_ctl_prog {
	uint64_t t_start;	/* ns */
	struct lc_progress bar;	/* the progress line */
	uint64_t next;		/* its next redraw */
	uint64_t next_json;	/* --json-progress: the next line */
	uint64_t json_bytes;	/* and the bytes at the last one */
	uint64_t json_ns;
	uint64_t t_src_msg;	/* last message from each agent */
	uint64_t t_dst_msg;
	uint64_t t_progress;	/* last time data or files moved */
	uint64_t last_bytes;
	uint64_t t_moved;	/* when the sink last reported new bytes */
};

/* The data path (datapath.c). */
struct lc_ctl_path {
	enum lc_ctl_dp_state state;
	int path;		/* enum lc_path settled for this attempt */
	bool tls;		/* the data streams run TLS (not over SSH) */
	char path_why[200];	/* why, for -v and --json */
	struct lc_ssh_opts so_src;	/* how each remote end was reached */
	struct lc_ssh_opts so_dst;
	/* why lanecp went over the OpenSSH client to that end, "" when it
	   did not (written by the end's opener thread, read after both) */
	char ssh_why_src[200];
	char ssh_why_dst[200];
	struct lc_ssh *pre[2][LC_MAX_STREAMS];	/* --via-ssh: one per stream
						   (source, sink), opened
						   before LISTEN */
	uint16_t dst_ports[LC_MAX_STREAMS];	/* LISTENING, for a relay */
	struct lc_relay *relay;
	pid_t test_proxy;	/* hook builds: the direct path's proxy */
};

/* --delete (controller_del.c). */
enum lc_ctl_del_state {
	LC_DEL_NONE = 0,	/* the copy is not over yet */
	LC_DEL_SCAN,		/* DEL_SCANs out, candidates coming */
	LC_DEL_DELETING,	/* DELETEs out, DELETEDs coming */
	LC_DEL_DONE,		/* nothing more (or nothing at all) */
};

struct lc_del_cand {
	uint8_t kind;
	uint8_t keep;		/* protected (--exclude), or holds one */
	char *name;
};

struct lc_ctl_del {
	enum lc_ctl_del_state state;
	char **roots;		/* the roots scanned, in order */
	size_t nroots;
	size_t scanned;		/* DEL_SCANNED seen */
	uint32_t this_scan;	/* DEL_CANDs of the scan under way */
	struct lc_del_cand *cand;	/* every scan's, in order */
	size_t n, cap;
	uint64_t bytes;		/* their names' bytes */
	size_t next;		/* DELETEDs expected below this index */
	size_t send;		/* DELETEs still to send below this index */
	uint32_t total;		/* DELETEs to send in all */
	uint32_t asked, answered;
	uint32_t max;		/* candidates taken at most (LANECP_DEL_MAX) */
	/* every name listed and every candidate taken, as a keyed 64-bit
	   hash (kind: directory or not): what a scan may not name again,
	   and the directories a candidate may be in */
	uint64_t *seen;
	size_t seen_n, seen_cap;
	uint64_t seed;
};

/* A file the source reads from the part file of the target before. */
struct lc_ctl_fol {
	const struct lc_feed_entry *x;
	uint32_t id;
	uint64_t sent;		/* the last SRC_AVAIL's */
};

/*
 * --also's overlapped chain (controller_fed.c): this copy's source is the
 * target before it, fed entry by entry from o->feed_in as that target's
 * copy makes them: one fed request (SRC_ADD with LC_ADD_FED) then a
 * SRC_ENTRY per entry.  sent and ann walk the feed: the last entry named
 * to the source, and the last it announced (or reported it could not
 * read); every FILE must be the entry after ann.
 */
struct lc_ctl_fed {
	int on;			/* o->feed_in */
	int fed;		/* the source takes LC_ADD_FED; else the
				   ordinary request once the feed ends */
	int added;		/* the request is out */
	int ended;		/* its end is out (SRC_ENTRY END, or the
				   ordinary request) */
	const struct lc_feed_entry *sent, *ann;
	uint32_t nsent, nann;
	int follow;		/* the source takes SRC_PART (HELLO 0x200) */
	struct lc_ctl_fol *fol;	/* files announced from a SRC_PART, not yet
				   whole at the target before */
	size_t nfol, capfol;
	uint32_t npart;		/* SRC_PARTs not yet announced */
	/* as the writing copy (o->feed_out): files fed at FILE_READY */
	uint32_t out_follow;	/* in flight */
	uint32_t out_mark;	/* the sink's mark's file, as last applied */
};


struct lc_ctl {
	const struct lc_copy_opts *o;
	struct lc_copy_result *res;
	struct lc_endpoint src;
	struct lc_endpoint dst_ep;
	struct lc_endpoint *err_ep;	/* the agent whose ERROR ended the
					   copy */
	uint8_t *key;		/* LC_KEY_LEN bytes, secmem.h */
	uint32_t streams;	/* settled by negotiate.c */
	uint32_t window;
	uint32_t block;
	enum lc_ctl_phase phase;
	/* what each agent said, in whichever order it came: */
	bool src_done;		/* SRC_DONE seen */
	bool sink_done;		/* SINK_DONE seen */
	bool sink_nomore;	/* SINK_NOMORE sent */
	bool src_bye;		/* BYE from the source */
	bool dst_bye;		/* BYE from the sink */
	bool target_ok;		/* TARGET_OK seen */
	bool target_is_dir;	/* and what it said */
	uint64_t bytes_done;	/* the sink's count of bytes written */
	uint64_t next_ping;	/* the agents' heartbeat (ms) */
	struct lc_ctl_args args;
	struct lc_ctl_files files;
	struct lc_ctl_check chk;
	struct lc_ctl_prog prog;
	struct lc_ctl_path dp;
	struct lc_ctl_del del;
	struct lc_ctl_fed fed;
};

/*
 * --delete and -n (controller_del.c).  lc__ctl_del_step, once the copy
 * is over: starts the scans; 1 while deletions keep the run going.
 * lc__ctl_del_msg: the sink's DEL_CAND, DEL_SCANNED, DELETED.
 * lc__ctl_dry_line: one -n line on stdout ("new NAME", "update NAME",
 * "delete NAME", a '/' after a directory's name).
 */
int lc__ctl_del_step(struct lc_ctl *c, struct lc_err *e);
/* A name the source listed (with --delete): no scan may name it. */
int lc__ctl_del_listed(struct lc_ctl *c, const char *name, uint8_t kind);
/* LANECP_DEL_MAX, read at startup (lc_copy_settings). */
int lc__ctl_del_max(uint32_t *out, struct lc_err *e);
int lc__ctl_del_msg(struct lc_ctl *c, uint8_t type, const union lc_msg_any *m,
    struct lc_err *e);
void lc__ctl_dry_line(struct lc_ctl *c, const char *what, const char *name,
    uint8_t kind);
void lc__ctl_del_free(struct lc_ctl *c);

/* The run (controller.c). */

/* The agent program to run remotely (-T), "lanecp" by default. */
const char *lc__ctl_agent_cmd(const struct lc_ctl *c);

/* Negotiation (negotiate.c). */

/* Queue HELLO on ep's control output.  0 or -LC_ERR_*. */
int lc__ctl_send_hello(struct lc_endpoint *ep);

/*
 * The grace the PINGs give the agents in *out: LC_AGENT_GRACE_S, or the
 * hidden setting LANECP_GRACE_S (1 .. LC_PING_GRACE_MAX, settings.h), so
 * a test's stale agent does not stop before the test is done with it.
 * 0, or -LC_ERR_USAGE (e says why) for a bad setting.
 */
int lc__ctl_grace(uint64_t *out, struct lc_err *e);

/*
 * ep's HELLO (payload p, n bytes): record it.  0, or -LC_ERR_VERSION /
 * -LC_ERR_PROTO with e set.
 */
int lc__ctl_got_hello(struct lc_ctl *c, struct lc_endpoint *ep,
    const uint8_t *p, size_t n, struct lc_err *e);

/*
 * Both endpoints answered HELLO: settle streams, window and block from the
 * options and both HELLOs, make the stream key, and queue SINK_TARGET and
 * LISTEN to the sink and one SRC_ADD per source.  0 or -LC_ERR_* with e set.
 */
int lc__ctl_negotiate(struct lc_ctl *c, struct lc_err *e);
/* The SRC_ADDs of the user's sources, in order (negotiate.c). */
int lc__ctl_send_adds(struct lc_ctl *c);

/*
 * --also's overlapped chain (controller_fed.c).  pump: name what the feed
 * has to the source, within LC_FED_QUEUE_MAX / 2 not yet announced, and
 * end the request once the feed ends (an error when the target before is
 * incomplete); check: FILE m of the fed request must be the next entry
 * named, and takes that entry's mode, times and owner; fail: the source
 * could not read it; open: 1 while the request may still grow.
 * pub_new and publish: the entry this copy made, for the next target's.
 */
int lc__ctl_fed_pump(struct lc_ctl *c, struct lc_err *e);
int lc__ctl_fed_check(struct lc_ctl *c, struct lc_msg_file *m,
    struct lc_err *e);
int lc__ctl_fed_fail(struct lc_ctl *c, const char *name, struct lc_err *e);
int lc__ctl_fed_open(const struct lc_ctl *c);
int lc__ctl_fed_watch(const struct lc_ctl *c);
int lc__ctl_fed_ready(struct lc_ctl *c, struct lc_ctl_file *f,
    const struct lc_msg_file_ready *m);
void lc__ctl_fed_marks(struct lc_ctl *c, uint32_t file, uint64_t written);
void lc__ctl_fed_unfinished(struct lc_ctl *c, struct lc_ctl_file *f);
int lc__ctl_fed_pub_new(struct lc_ctl *c, struct lc_ctl_file *f,
    const struct lc_msg_file *m);
int lc__ctl_fed_publish(struct lc_ctl *c, struct lc_ctl_file *f);

/*
 * The sink's decoded LISTENING: take the streams and block it
 * grants (never more than asked), and queue CONNECT with its ports to the
 * source (through the test proxy in hook builds).  Fills the settled
 * values into c->res.  0 or -LC_ERR_* with e set.
 */
int lc__ctl_listening(struct lc_ctl *c, const struct lc_msg_listening *l,
    struct lc_err *e);

/* The data path (datapath.c). */

/*
 * The address the source's data streams connect to, into out (outsz
 * bytes): the one the controller itself used to reach the sink's host.
 * 0 or -LC_ERR_INTERNAL with e set.
 */
int lc__ctl_data_addr(struct lc_ctl *c, char *out, size_t outsz,
    struct lc_err *e);

/*
 * Settle the data path for this attempt (c->path, c->path_why) from the
 * options and the endpoints, and for --via-ssh open the SSH connections
 * for the streams (which may lower c->streams).  Called by negotiate
 * once streams are settled.  0 or -LC_ERR_* with e set.
 */
int lc__ctl_path_setup(struct lc_ctl *c, struct lc_err *e);

/* LISTEN and CONNECT flags for the path (LC_XFER_REVERSE, ..._LOOPBACK). */
uint32_t lc__ctl_listen_flags(const struct lc_ctl *c);
uint32_t lc__ctl_connect_flags(const struct lc_ctl *c);

/*
 * The source's CONNECTED: in reverse, DIAL its ports to the sink; through
 * the controller (relay, via SSH), start the relay.  0 or -LC_ERR_*.
 */
int lc__ctl_connected(struct lc_ctl *c, const struct lc_msg_connected *m,
    struct lc_err *e);

/*
 * What -v says about the path: "data streams to ADDR, direct", "reverse:
 * HOST dials ADDR", "relayed through this host", "via SSH x N", and why.
 */
void lc__ctl_path_text(const struct lc_ctl *c, const char *daddr, char *out,
    size_t outsz);

/* The sink lost stream i: a relayed stream is connected again. */
void lc__ctl_path_lost(struct lc_ctl *c, uint32_t i);

/* Stop the relay and close what the path opened. */
void lc__ctl_path_free(struct lc_ctl *c);

/* The files in flight and credit (controller_ring.c). */

/* The empty map of files in flight, lo 1.  0 or -LC_ERR_NOMEM. */
int lc__ctl_files_init(struct lc_ctl *c);
/* The file in flight with this id, or NULL (not announced, or done). */
struct lc_ctl_file *lc__ctl_file_find(struct lc_ctl *c, uint32_t id);
/*
 * Take m (checked: its id is below the credit) into the map.  0,
 * -LC_ERR_NOMEM, or -LC_ERR_TOOBIG / -LC_ERR_EXISTS (a broken credit
 * check: more files in flight than LC_FILES_INFLIGHT_MAX, or an id twice).
 */
int lc__ctl_file_add(struct lc_ctl *c, const struct lc_msg_file *m);
/*
 * f is done: free it (f is invalid after the call) and move the source's
 * credit on (SRC_CREDIT).  0 or -LC_ERR_* (control output).
 */
int lc__ctl_file_finish(struct lc_ctl *c, struct lc_ctl_file *f);
/*
 * The credit (ids below it may be announced) for lo (the lowest id in
 * flight, or the next one), done (files done) and the window.  held_max
 * 0 (a sink without LC_HELLO_COUNT_INFLIGHT): lo + window, which keeps
 * every id in flight less than the window above lo (what such a sink
 * checks).  Else done + 1 + window, which keeps the files in flight at
 * most the window wherever their ids are, but no more than held_max above
 * held_from or lo, whichever is higher (the sink's mark: the source holds
 * what it sent from there on), and never less than lo + window.
 */
uint32_t lc__ctl_credit(uint32_t lo, uint32_t done, uint32_t window,
    uint32_t held_from, uint32_t held_max);
/* SRC_CREDIT if the credit moved by an eighth of the window, or at all
 * when nothing is in flight.  0 or -LC_ERR_* (control output). */
int lc__ctl_credit_move(struct lc_ctl *c);
/*
 * TARGET_OK's grant (checked: LC_FILES_INFLIGHT .. SINK_TARGET's ask)
 * becomes the window; SRC_CREDIT at once if it moved the credit on.
 * 0 or -LC_ERR_* (control output).
 */
int lc__ctl_files_window(struct lc_ctl *c, uint32_t granted);
/* Free the files in flight and the names the requests hold. */
void lc__ctl_files_free(struct lc_ctl *c);
/* SRC_NOMORE once every request is listed and every file settled; else 0. */
int lc__ctl_maybe_nomore(struct lc_ctl *c);

/*
 * SINK_NOMORE to a sink whose HELLO had LC_HELLO_NOMORE, once SRC_NOMORE
 * is out (called then, and when the sink's HELLO comes after it); else
 * nothing.  0, or an error from the control output.
 */
int lc__ctl_sink_nomore(struct lc_ctl *c);

/* The checks of the agents' messages (controller_src.c, controller_dst.c). */

/*
 * A message (type, payload p of n bytes) from the source, or the sink:
 * checked, then relayed or used.  0, or -LC_ERR_PROTO (or another) with e
 * set.
 */
int lc__ctl_from_src(struct lc_ctl *c, uint8_t type, const uint8_t *p,
    size_t n, struct lc_err *e);
int lc__ctl_from_dst(struct lc_ctl *c, uint8_t type, const uint8_t *p,
    size_t n, struct lc_err *e);
/* 1 if sum is "ALG:hex" for the algorithm asked for, else 0. */
int lc__ctl_csum_ok(const struct lc_ctl *c, const char *sum);
/*
 * The sink's count of bytes written (in message what): 0 if it can be
 * true, else -LC_ERR_PROTO with e set.
 */
int lc__ctl_sink_bytes(const struct lc_ctl *c, const char *what,
    uint64_t bytes, struct lc_err *e);

/* The options (controller_opts.c). */

/*
 * Parse the sources and the target, make each source's request, and check
 * what of the arguments depends on the world or on the parsed locations
 * (the option pairings were checked once by lc_copy_opts_check).  0 or
 * -LC_ERR_USAGE (...) with e set.
 */
int lc__ctl_parse_args(struct lc_ctl *c, struct lc_err *e);

/* Progress and reporting (controller_progress.c). */

/*
 * A file the copy could not take (kind: enum lc_kind, 0 if not known):
 * said now, unless LC_RESULT_FAILED_SHOWN like it were said already, and
 * counted in the result.
 */
void lc__ctl_failed(struct lc_ctl *c, const char *where, int kind,
    const char *what);

/* "3 files", "2 symlinks", "3 entries (1 file, 2 symlinks)". */
void lc__ctl_failed_count(const struct lc_copy_result *res, char *out,
    size_t outsz);

/* The failures not named: "and N more like it: WHAT", once a kind. */
void lc__ctl_failed_more(struct lc_ctl *c);
/* Where file f landed, "host:path" style, into out. */
void lc__ctl_file_where(struct lc_ctl *c, const struct lc_ctl_file *f,
    char *out, size_t outsz);
/* f's checksum: printed (-E with --print-sums) and kept in the result. */
void lc__ctl_record_sum(struct lc_ctl *c, const struct lc_ctl_file *f,
    const char *sum);
/* The sink's new count of bytes: note a stall that ended. */
void lc__ctl_moved(struct lc_ctl *c, uint64_t bytes);
/* Bytes of the files in place: kept by resume, and written since. */
uint64_t lc__ctl_done(const struct lc_ctl *c);
/* Bring the progress line's totals up to date. */
void lc__ctl_progress_set(struct lc_ctl *c);
/* The progress line and --json-progress, when due. */
void lc__ctl_tick(struct lc_ctl *c);
/* --timeout (and a relay that failed): 0, or -LC_ERR_* with e set. */
int lc__ctl_watchdog(struct lc_ctl *c, struct lc_err *e);

#endif
